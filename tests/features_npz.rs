//! Input features against KataGo's own training rows.
//!
//! `shared/vectors/npz/1F20939B3476347D.npz` holds 295 rows that KataGo's
//! self-play wrote with `NNInputs::fillRowV7`, from the 12 games in
//! `npz/sgfs/`. Each row names its game (the 128-bit game hash in
//! `globalTargetsNC` C41-46, also in the SGF root comment) and its turn
//! (C51), so we replay that game to that turn, encode the position with the
//! parameters self-play used (full history, no pass hiding, the game's
//! draw value and playout doubling advantage) and require every one of the
//! 22 planes and 19 globals to match.
//!
//! The npz is read with the engine's own reader (`engine::data::read_npz`).

use std::collections::HashMap;
use std::path::Path;

use engine::data::read_npz;
use engine::game::sgf::parse_collection;
use engine::game::{Board, BoardHistory, Color, Loc, Move, Player, Rules};
use engine::nn::{FeatureEncoder, NnInputParams, NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7};

/// A game of the npz run: the record and its root-comment fields.
struct NpzGame {
    name: String,
    hash: u128,
    rules: Rules,
    x_size: usize,
    y_size: usize,
    setup: Vec<(Color, (usize, usize))>,
    moves: Vec<(Player, Option<(usize, usize)>)>,
    /// Playout doubling advantage of white (`pdaWhite`), 0 if none.
    pda_white: f64,
}

fn comment_field<'a>(comment: &'a str, key: &str) -> Option<&'a str> {
    comment
        .split(',')
        .find_map(|kv| kv.trim().strip_prefix(key)?.strip_prefix('='))
}

fn load_games(dir: &Path) -> Vec<NpzGame> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sgf"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let trees = parse_collection(&text).unwrap();
            let rec = trees[0].record().unwrap();
            let comment = rec.game_comment.clone().unwrap_or_default();
            let hash =
                u128::from_str_radix(comment_field(&comment, "gameHash").unwrap(), 16).unwrap();
            let komi = rec.komi.unwrap();
            let rules = Rules::parse_without_komi(rec.rules.as_deref().unwrap(), komi).unwrap();
            let pda_white = comment_field(&comment, "pdaWhite").map_or(0.0, |s| s.parse().unwrap());
            NpzGame {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                hash,
                rules,
                x_size: rec.x_size,
                y_size: rec.y_size,
                setup: rec.setup.clone(),
                moves: rec.moves.clone(),
                pda_white,
            }
        })
        .collect()
}

/// The game hash of a row, from its six 20/22-bit chunks, as the two
/// 64-bit halves KataGo's `Hash128` prints high half first.
fn row_game_hash(gt: &[f32], row: usize) -> u128 {
    let c = |i: usize| gt[row * 80 + i] as u64;
    let hash0 = c(41) | (c(42) << 22) | (c(43) << 44);
    let hash1 = c(44) | (c(45) << 22) | (c(46) << 44);
    (u128::from(hash1) << 64) | u128::from(hash0)
}

#[test]
fn features_match_katago_training_rows() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let npz_dir = shared.join("vectors/npz");
    let data = read_npz(&npz_dir.join("1F20939B3476347D.npz")).unwrap_or_else(|e| panic!("{e}"));
    let bin = &data.binary_input_nchw_packed;
    let glob = &data.global_input_nc;
    let gt = &data.global_targets_nc;
    let rows = data.num_rows;
    assert_eq!(data.pos_len, 19);
    assert_eq!(bin.len(), rows * NUM_SPATIAL_FEATURES_V7 * 46);
    assert_eq!(glob.len(), rows * NUM_GLOBAL_FEATURES_V7);
    assert_eq!(rows, 295);

    let games = load_games(&npz_dir.join("sgfs"));
    assert_eq!(games.len(), 12);
    let by_hash: HashMap<u128, usize> =
        games.iter().enumerate().map(|(i, g)| (g.hash, i)).collect();

    // Replay state per game: board, history, moves played so far and the
    // draw value (found from the game's first row, see below).
    struct Replay {
        board: Board,
        hist: BoardHistory,
        played: usize,
        draw_value: Option<f64>,
    }
    let mut replays: HashMap<usize, Replay> = HashMap::new();
    let mut encoder = FeatureEncoder::new();
    let mut failures = Vec::new();
    let mut rows_per_game = vec![0usize; games.len()];

    for row in 0..rows {
        let gi = *by_hash.get(&row_game_hash(gt, row)).unwrap_or_else(|| {
            panic!(
                "row {row}: no game with hash {:032X}",
                row_game_hash(gt, row)
            )
        });
        let game = &games[gi];
        rows_per_game[gi] += 1;
        let turn = gt[row * 80 + 51] as usize;
        let replay = replays.entry(gi).or_insert_with(|| {
            let mut board = Board::new(game.x_size, game.y_size).unwrap();
            for &(color, (x, y)) in &game.setup {
                assert!(board.set_stone(Loc::from_xy(x, y, game.x_size), color));
            }
            let first = game.moves.first().map_or(Player::Black, |m| m.0);
            let hist = BoardHistory::new(&board, first, game.rules);
            Replay {
                board,
                hist,
                played: 0,
                draw_value: None,
            }
        });
        assert!(
            turn >= replay.played,
            "row {row}: rows of {} not in turn order",
            game.name
        );
        while replay.played < turn {
            let (pla, pt) = game.moves[replay.played];
            let mv = pt.map_or(Move::Pass, |(x, y)| {
                Move::Play(Loc::from_xy(x, y, game.x_size))
            });
            assert!(
                replay.hist.is_legal(&replay.board, mv, pla),
                "{}: move {} illegal",
                game.name,
                replay.played
            );
            replay.hist.play(&mut replay.board, mv, pla);
            replay.played += 1;
        }
        let next = game.moves[turn].0;

        // Self-play draws each game's draw value at random; it shows only
        // as the komi shift under integer-result rules. Recover it from the
        // komi of the game's first row (C47) and keep it for later rows,
        // so later rows still test the bonus and komi bookkeeping.
        let row_komi = f64::from(gt[row * 80 + 47]);
        let draw_value = *replay.draw_value.get_or_insert_with(|| {
            if !game.rules.game_result_will_be_integer() {
                return 0.5;
            }
            let base = f64::from(replay.hist.current_self_komi(next, 0.5));
            let sign = if next == Player::White { 1.0 } else { -1.0 };
            0.5 + (row_komi - base) * sign
        });
        let pda = if next == Player::White {
            game.pda_white
        } else {
            -game.pda_white
        };
        let params = NnInputParams {
            draw_equivalent_wins_for_white: draw_value,
            playout_doubling_advantage: pda,
            ..NnInputParams::default()
        };

        let (xs, ys) = (game.x_size, game.y_size);
        let mut spatial = vec![0f32; NUM_SPATIAL_FEATURES_V7 * xs * ys];
        let mut global = vec![0f32; NUM_GLOBAL_FEATURES_V7];
        encoder.fill_row_v7(
            &replay.board,
            &replay.hist,
            next,
            &params,
            &mut spatial,
            &mut global,
        );

        for c in 0..NUM_SPATIAL_FEATURES_V7 {
            let packed = &bin[(row * NUM_SPATIAL_FEATURES_V7 + c) * 46..][..46];
            for y in 0..19 {
                for x in 0..19 {
                    let bit = y * 19 + x;
                    let want = (packed[bit / 8] >> (7 - bit % 8)) & 1;
                    let got = if x < xs && y < ys {
                        spatial[c * xs * ys + y * xs + x]
                    } else {
                        0.0
                    };
                    if f32::from(want) != got {
                        failures.push(format!(
                            "row {row} ({} turn {turn}, {next:?} to move): plane {c} at ({x},{y}): KataGo {want}, ours {got}",
                            game.name
                        ));
                    }
                }
            }
        }
        for (g, &got) in global.iter().enumerate() {
            let want = glob[row * NUM_GLOBAL_FEATURES_V7 + g];
            // The playout advantage comes from the SGF comment, printed to
            // 6 digits; everything else must be exact.
            let tol = if g == 16 { 1e-5 } else { 0.0 };
            if (want - got).abs() > tol {
                failures.push(format!(
                    "row {row} ({} turn {turn}, {next:?} to move): global {g}: KataGo {want}, ours {got}",
                    game.name
                ));
            }
        }
    }
    assert!(
        rows_per_game.iter().all(|&n| n > 0),
        "every game has rows: {rows_per_game:?}"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches, first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
