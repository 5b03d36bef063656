//! The pattern bonus table against KataGo 1.17.2's own
//! (`tests/data/pattern_bonus/katago_vectors.txt`, written by
//! `scripts/katago_pattern_bonus_vectors.sh` from KataGo's objects).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use super::*;
use crate::game::pattern_hash;
use crate::game::sgf::{parse_collection, GameRecord};

const VECTORS: &str = include_str!("../../tests/data/pattern_bonus/katago_vectors.txt");
const SHAPES_SGF: &str = include_str!("../../tests/data/pattern_bonus/shapes.sgf");

/// One `run` of the vector file: its settings, the per-move hashes of each
/// game and the tables.
#[derive(Default)]
struct Run {
    penalty: f64,
    lambda: f64,
    min_turn: usize,
    max_files: usize,
    names: Vec<String>,
    files: Vec<String>,
    /// Game file -> (move index, hash or None for KataGo's zero hash).
    moves: BTreeMap<String, Vec<Option<Hash128>>>,
    /// Table name -> entries.
    tables: BTreeMap<String, BTreeMap<Hash128, f64>>,
}

fn hash(s: &str) -> Hash128 {
    Hash128(u128::from_str_radix(s, 16).expect("hex hash"))
}

fn runs() -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    let (mut game, mut table) = (String::new(), String::new());
    for line in VECTORS.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split(' ').collect();
        match w[0] {
            "run" => {
                runs.push(Run {
                    penalty: w[1].parse().expect("penalty"),
                    lambda: w[2].parse().expect("lambda"),
                    min_turn: w[3].parse().expect("min turn"),
                    max_files: w[4].parse().expect("max files"),
                    names: if w[5] == "-" {
                        vec![]
                    } else {
                        w[5].split(',').map(String::from).collect()
                    },
                    files: w[6..].iter().map(|s| s.to_string()).collect(),
                    ..Run::default()
                });
            }
            "game" => game = w[1].to_string(),
            "move" => {
                let h = hash(w[4]);
                let run = runs.last_mut().expect("a run");
                run.moves
                    .entry(game.clone())
                    .or_default()
                    .push((h != Hash128::ZERO).then_some(h));
            }
            "table" => table = w[1..].join(" "),
            "entry" => {
                let run = runs.last_mut().expect("a run");
                let bonus: f64 = w[2].parse().expect("bonus");
                run.tables
                    .entry(table.clone())
                    .or_default()
                    .insert(hash(w[1]), bonus);
            }
            other => panic!("unknown vector line {other}"),
        }
    }
    runs
}

fn sgf_text(name: &str) -> String {
    if name == "shapes.sgf" {
        return SHAPES_SGF.to_string();
    }
    let dir = crate::shared_data_dir().expect("shared data");
    std::fs::read_to_string(dir.join("vectors/games").join(name)).expect("game file")
}

fn record(name: &str) -> GameRecord {
    let trees = parse_collection(&sgf_text(name)).expect("sgf");
    trees[0].record().expect("record")
}

/// The board after a record's setup, and its moves as `(Move, Player)`.
fn setup_and_moves(rec: &GameRecord) -> (Board, Vec<(Move, Player)>) {
    let xs = rec.x_size;
    let mut board = Board::new(xs, rec.y_size).expect("size");
    let placements: Vec<(Loc, Color)> = rec
        .setup
        .iter()
        .map(|&(c, (x, y))| (Loc::from_xy(x, y, xs), c))
        .collect();
    assert!(board.set_stones_fail_if_no_libs(&placements));
    let moves = rec
        .moves
        .iter()
        .map(|&(p, at)| {
            (
                at.map_or(Move::Pass, |(x, y)| Move::Play(Loc::from_xy(x, y, xs))),
                p,
            )
        })
        .collect();
    (board, moves)
}

/// A fresh folder of its own for one test.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> TestDir {
        let dir =
            std::env::temp_dir().join(format!("engine-pattern-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("test folder");
        TestDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn assert_same_table(ours: &PatternBonusTable, theirs: &BTreeMap<Hash128, f64>, what: &str) {
    let ours: BTreeMap<Hash128, f64> = ours.entries().collect();
    assert_eq!(ours.len(), theirs.len(), "{what}: number of shapes");
    for (h, b) in theirs {
        let o = ours
            .get(h)
            .unwrap_or_else(|| panic!("{what}: KataGo's shape {h} missing"));
        assert!(
            (o - b).abs() <= 1e-12 * b.abs().max(1.0),
            "{what}: {h} {o} vs KataGo {b}"
        );
    }
}

#[test]
fn move_hashes_are_katagos() {
    let runs = runs();
    assert_eq!(runs.len(), 2);
    let mut checked = 0;
    for (name, theirs) in &runs[0].moves {
        let (mut board, moves) = setup_and_moves(&record(name));
        assert_eq!(moves.len(), theirs.len(), "{name}: moves");
        for (i, (&(mv, pla), want)) in moves.iter().zip(theirs).enumerate() {
            assert_eq!(pattern_hash(&board, pla, mv), *want, "{name} move {i}");
            assert!(play_tolerant(&mut board, mv, pla));
            checked += 1;
        }
    }
    // 16 moves of shapes.sgf (two ko captures and a pass: no hash) and the
    // three shared games.
    assert!(checked > 400, "{checked}");
    let shapes = &runs[0].moves["shapes.sgf"];
    assert_eq!(shapes.iter().filter(|h| h.is_none()).count(), 3);
}

#[test]
fn sgf_tables_are_katagos() {
    let dir = TestDir::new("vectors");
    for run in runs() {
        // The first file named is the newest, as the vectors were made.
        let now = SystemTime::now();
        let mut paths = Vec::new();
        for (i, name) in run.files.iter().enumerate() {
            let path = dir.path().join(name);
            std::fs::write(&path, sgf_text(name)).expect("write");
            let f = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            f.set_modified(now - Duration::from_secs(3600 * (1 + i as u64)))
                .expect("set time");
            paths.push(path);
        }
        let avoid = AvoidSgfPatterns {
            utility: run.penalty,
            lambda: run.lambda,
            min_turn_number: run.min_turn,
            max_files: run.max_files,
            allowed_names: run.names.clone(),
            dirs: paths,
        };
        let mut table = PatternBonusTable::new();
        let report = table.add_sgf_files(&avoid).expect("files");
        assert_eq!(report.len(), run.files.len().min(run.max_files));
        assert!(report
            .iter()
            .all(|(_, o)| matches!(o, SgfFileOutcome::Added(_))));
        assert_same_table(
            &table,
            &run.tables["avoidRepeatedSgfMoves"],
            "avoidRepeatedSgfMoves",
        );

        // addBonusForGameMoves over the first game, for each player.
        let (board, moves) = setup_and_moves(&record(&run.files[0]));
        for pla in [Player::Black, Player::White] {
            let bonus = if pla == Player::White {
                -run.penalty
            } else {
                run.penalty
            };
            let mut t = PatternBonusTable::new();
            t.add_game_moves(&board, &moves, bonus, Some(pla));
            let name = format!(
                "addBonusForGameMoves {}",
                if pla == Player::Black {
                    "Black"
                } else {
                    "White"
                }
            );
            assert_same_table(&t, &run.tables[&name], &name);
        }
    }
}

#[test]
fn a_shape_is_found_in_every_symmetry_and_colouring_with_the_right_sign() {
    // Black's corner move in a file penalises Black playing it in any
    // corner, and White playing it with colours swapped gets the penalty in
    // White's favour reversed (a bonus to White's utility is negative).
    let dir = TestDir::new("symmetry");
    let path = dir.path().join("g.sgf");
    std::fs::write(&path, "(;SZ[9];B[cc])").expect("write");
    let avoid = AvoidSgfPatterns {
        utility: 0.5,
        lambda: 1.0,
        min_turn_number: 0,
        max_files: 10,
        allowed_names: vec![],
        dirs: vec![dir.path().to_path_buf()],
    };
    let mut table = PatternBonusTable::new();
    let report = table.add_sgf_files(&avoid).expect("files");
    assert_eq!(report, vec![(path, SgfFileOutcome::Added(16 / 2))]);
    let board = Board::new(9, 9).expect("size");
    for (x, y) in [(2, 2), (6, 2), (2, 6), (6, 6)] {
        let mv = Move::Play(Loc::from_xy(x, y, 9));
        let black = pattern_hash(&board, Player::Black, mv).expect("hash");
        let white = pattern_hash(&board, Player::White, mv).expect("hash");
        assert_eq!(table.get(black), 0.5);
        assert_eq!(table.get(white), -0.5);
    }
    let elsewhere = pattern_hash(&board, Player::Black, Move::Play(Loc::from_xy(4, 4, 9)));
    assert_eq!(table.get(elsewhere.expect("hash")), 0.0);
}

#[test]
fn bad_paths_are_errors_and_bad_files_are_skipped() {
    let dir = TestDir::new("bad");
    let avoid = |dirs: Vec<PathBuf>| AvoidSgfPatterns {
        utility: 0.1,
        lambda: 1.0,
        min_turn_number: 0,
        max_files: 10,
        allowed_names: vec![],
        dirs,
    };
    let missing = dir.path().join("missing");
    let e = PatternBonusTable::new()
        .add_sgf_files(&avoid(vec![missing]))
        .unwrap_err();
    assert!(e.contains("no such file"), "{e}");
    let txt = dir.path().join("notes.txt");
    std::fs::write(&txt, "x").expect("write");
    let e = PatternBonusTable::new()
        .add_sgf_files(&avoid(vec![txt]))
        .unwrap_err();
    assert!(e.contains(".sgf"), "{e}");
    // In a folder, other files are ignored and a broken SGF is skipped.
    let broken = dir.path().join("broken.sgf");
    std::fs::write(&broken, "(;SZ[9];B[zz").expect("write");
    let mut table = PatternBonusTable::new();
    let report = table
        .add_sgf_files(&avoid(vec![dir.path().to_path_buf()]))
        .expect("folder");
    assert_eq!(report.len(), 1);
    assert!(matches!(report[0].1, SgfFileOutcome::Invalid(_)));
    assert!(table.is_empty());
}

mod in_search {
    use std::sync::Arc;

    use crate::game::{Board, BoardHistory, GameState, Loc, Move, Player, Rules};
    use crate::nn::NnOutput;
    use crate::search::{
        EvalError, EvalOptions, EvalStats, MoveInfo, PatternBonusTable, PositionEvaluator,
        RunOptions, Search, SearchParams, SearchState, SetupFor,
    };

    /// Uniform policy over legal moves, an even game everywhere: every
    /// difference between moves' utilities comes from pattern bonuses.
    struct EvenEval;

    impl PositionEvaluator<GameState> for EvenEval {
        fn evaluate(&self, s: &GameState, opts: &EvalOptions) -> Result<Arc<NnOutput>, EvalError> {
            let (xs, ys) = (s.x_size(), s.y_size());
            let mut policy: Vec<f32> = (0..xs * ys)
                .map(|i| {
                    let legal =
                        SearchState::is_legal(s, Move::Play(Loc::from_xy(i % xs, i / xs, xs)));
                    if legal {
                        1.0
                    } else {
                        -1.0
                    }
                })
                .collect();
            policy.push(1.0);
            let legal = policy.iter().filter(|&&p| p > 0.0).count() as f32;
            policy
                .iter_mut()
                .filter(|p| **p > 0.0)
                .for_each(|p| *p /= legal);
            Ok(Arc::new(NnOutput {
                x_size: xs,
                y_size: ys,
                policy,
                white_win_prob: 0.5,
                white_loss_prob: 0.5,
                white_no_result_prob: 0.0,
                white_score_mean: 0.0,
                white_score_mean_sq: 1.0,
                white_lead: 0.0,
                var_time_left: -1.0,
                shortterm_winloss_error: -1.0,
                shortterm_score_error: -1.0,
                white_ownership: opts.include_ownership.then(|| vec![0.0; xs * ys]),
            }))
        }
        fn stats(&self) -> EvalStats {
            EvalStats::default()
        }
    }

    fn state(size: usize, moves: &[(usize, usize)]) -> GameState {
        let board = Board::new(size, size).expect("size");
        let hist = BoardHistory::new(&board, Player::Black, Rules::default());
        let mut st = GameState::new(board, hist, Player::Black);
        for &(x, y) in moves {
            SearchState::play(&mut st, Move::Play(Loc::from_xy(x, y, size)));
        }
        st
    }

    /// A search; with `only`, the root player may play only those points
    /// (with a flat evaluation PUCT keeps to a few moves otherwise).
    fn search(
        st: GameState,
        avoid_repeated: f64,
        table: Option<PatternBonusTable>,
        only: &[(usize, usize)],
    ) -> Vec<MoveInfo> {
        let (size, pla) = (st.x_size(), SearchState::next_player(&st));
        let mut p = SearchParams::defaults(SetupFor::Gtp);
        p.max_visits = 600;
        p.num_threads = 1;
        p.min_playouts_per_thread = 0.0;
        p.root_symmetry_pruning = false;
        p.avoid_repeated_pattern_utility = avoid_repeated;
        let mut s = Search::new(p, Arc::new(EvenEval), st, 7);
        s.set_pattern_bonus_table(table.map(Arc::new));
        if !only.is_empty() {
            let moves: Vec<Move> = only
                .iter()
                .map(|&(x, y)| Move::Play(Loc::from_xy(x, y, size)))
                .collect();
            s.set_allow_moves(pla, &moves, 1);
        }
        s.run(&RunOptions::default()).expect("search");
        s.view().move_infos(1, false)
    }

    fn info(infos: &[MoveInfo], x: usize, y: usize, size: usize) -> &MoveInfo {
        let mv = Move::Play(Loc::from_xy(x, y, size));
        infos.iter().find(|m| m.mv == mv).expect("move searched")
    }

    #[test]
    fn an_outside_shape_costs_the_player_it_was_given_for() {
        // Black's tengen is penalised by 0.4 (in White's favour).
        let mut table = PatternBonusTable::new();
        let board = Board::new(9, 9).expect("size");
        table.add_game_moves(
            &board,
            &[(Move::Play(Loc::from_xy(4, 4, 9)), Player::Black)],
            0.4,
            None,
        );
        let with = search(state(9, &[]), 0.0, Some(table.clone()), &[]);
        let without = search(state(9, &[]), 0.0, None, &[]);
        let tengen = info(&with, 4, 4, 9);
        // From Black's view: exactly the penalty below every other move.
        assert!((tengen.utility + 0.4).abs() < 1e-9, "{}", tengen.utility);
        let others: Vec<&MoveInfo> = with.iter().filter(|m| m.mv != tengen.mv).collect();
        assert!(others.iter().all(|m| m.utility.abs() < 1e-9));
        assert!(tengen.visits < info(&without, 4, 4, 9).visits);
        // With White to move, Black's shape has no say.
        let white = search(state(9, &[(0, 0)]), 0.0, Some(table), &[]);
        assert!(white.iter().all(|m| m.utility.abs() < 1e-9));
    }

    #[test]
    fn avoid_repeated_pattern_utility_penalises_the_searching_players_own_shapes() {
        // On 13x13 Black opened at D4; White answered far away at K10.
        // Black's D10 and K4 are the same shape as D4 on the empty board
        // (nothing within four lines), Black's other points are not.
        let size = 13;
        let st = || state(size, &[(3, 9), (9, 3)]);
        let candidates = [(3, 3), (9, 9), (2, 3), (6, 6)];
        let infos = search(st(), 0.3, None, &candidates);
        for (x, y) in [(3, 3), (9, 9)] {
            let m = info(&infos, x, y, size);
            assert!((m.utility + 0.3).abs() < 1e-9, "({x},{y}) {}", m.utility);
        }
        for (x, y) in [(2, 3), (6, 6)] {
            let m = info(&infos, x, y, size);
            assert!(m.utility.abs() < 1e-9, "({x},{y}) {}", m.utility);
        }
        // Off: no bonus anywhere.
        let plain = search(st(), 0.0, None, &candidates);
        assert!(plain.iter().all(|m| m.utility.abs() < 1e-9));
    }
}
