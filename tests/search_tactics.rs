//! Tactics with the real g170 net: positions where the raw policy's
//! favourite move is wrong and a search of a few hundred visits finds the
//! capturing move (an atari, a ladder, a ko capture, a capturing race), and
//! reproducibility of a seeded single-threaded search.
//!
//! Where the cases come from: we let the net play itself on 9x9 from its raw
//! policy and scanned every Black-to-move position for the tactical pattern
//! (a working ladder, by our own ladder reader; a legal ko capture; any
//! disagreement, for the capturing race) where a 300-visit search and the
//! raw policy disagree. `scripts/find_tactics.py` does both steps; its
//! header has the exact commands and seeds. Each case below was then read by
//! hand and re-run at 1000+ visits. Every test first checks that the
//! raw policy still prefers the wrong move, so that a case that stops
//! testing anything fails loudly instead of passing.

use std::sync::Arc;

use engine::config::Config;
use engine::game::GameState;
use engine::game::{Board, BoardHistory, Color, Loc, Move, Player, Rules};
use engine::search::{
    EvalOptions, MoveInfo, NnSearchEvaluator, PositionEvaluator, RunOptions, Search, SearchParams,
    SetupFor,
};

fn network_with(cfg_text: &str) -> Arc<NnSearchEvaluator> {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    // Identity symmetry everywhere, so that the raw policy checked below is
    // the one the search starts from.
    let cfg = Config::from_toml_str(cfg_text, "tactics").unwrap();
    engine::setup::load_network(&model, &cfg, 8)
        .unwrap_or_else(|e| panic!("{e}"))
        .evaluator
}

/// The net in fp32, the arithmetic the cases were found and read in (the
/// CPU's default, auto, may run it in bf16 or int8, whose searches differ
/// by a few visits).
fn network() -> Arc<NnSearchEvaluator> {
    network_with("nnRandomize = false\nnnPrecision = \"fp32\"")
}

/// The position after `moves` (GTP coordinates, alternating from black)
/// on an empty board, Tromp-Taylor rules, komi 7.5.
fn game(size: usize, moves: &str) -> GameState {
    let board = Board::new(size, size).unwrap();
    let mut rules = Rules::tromp_taylor();
    rules.komi = 7.5;
    let mut state = GameState::new(
        board.clone(),
        BoardHistory::new(&board, Player::Black, rules),
        Player::Black,
    );
    for m in moves.split_whitespace() {
        let m = Move::parse(m, size, size).unwrap();
        assert!(state.hist.is_legal(&state.board, m, state.next), "{m:?}");
        engine::search::SearchState::play(&mut state, m);
    }
    state
}

/// The position drawn in `rows` (top row first; `X` black, `O` white, `.`
/// empty), no history, Black to move, Tromp-Taylor rules, komi 7.5.
fn diagram(rows: &[&str]) -> GameState {
    let size = rows.len();
    let mut board = Board::new(size, size).unwrap();
    let mut stones = Vec::new();
    for (y, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells.len(), size, "row {y} of the diagram");
        for (x, cell) in cells.into_iter().enumerate() {
            let color = match cell {
                "X" => Color::Black,
                "O" => Color::White,
                "." => continue,
                other => panic!("bad diagram cell {other:?}"),
            };
            stones.push((Loc::from_xy(x, y, size), color));
        }
    }
    assert!(board.set_stones_fail_if_no_libs(&stones), "illegal diagram");
    let mut rules = Rules::tromp_taylor();
    rules.komi = 7.5;
    GameState::new(
        board.clone(),
        BoardHistory::new(&board, Player::Black, rules),
        Player::Black,
    )
}

/// The raw policy's moves, best first, as GTP strings with probabilities.
fn raw_top(net: &NnSearchEvaluator, state: &GameState, n: usize) -> Vec<(String, f32)> {
    let out = net.evaluate(state, &EvalOptions::default()).unwrap();
    let size = state.board.x_size();
    let mut idx: Vec<usize> = (0..out.policy.len()).collect();
    idx.sort_by(|&a, &b| out.policy[b].total_cmp(&out.policy[a]));
    idx.into_iter()
        .take(n)
        .map(|i| {
            let m = if i == size * size {
                Move::Pass
            } else {
                Move::Play(Loc::from_xy(i % size, i / size, size))
            };
            (m.to_gtp(size, size), out.policy[i])
        })
        .collect()
}

fn search(
    net: &Arc<NnSearchEvaluator>,
    state: &GameState,
    visits: i64,
    seed: u64,
) -> Vec<MoveInfo> {
    let mut p = SearchParams::defaults(SetupFor::Gtp);
    p.max_visits = visits;
    p.num_threads = 1;
    let mut s = Search::new(p, net.clone(), state.clone(), seed);
    s.run(&RunOptions::default()).unwrap();
    s.view().move_infos(10, false)
}

/// 9x9, black to move. White's F3-G3 pair has two liberties (F2, G2);
/// black F2 ataris it and also presses on E2, while the raw policy
/// slightly prefers H5. From the net's own raw-policy game (the benchmark
/// game on 9x9), selected by us where a 300-visit search disagrees with
/// the raw policy by more than 0.15 in winrate.
const ATARI_CASE: &str = "E5 G5 F7 F3 E3 E2 F4 D3 E4 G3 G4 H4 H3 H2";

#[test]
fn search_finds_the_atari_the_raw_policy_misses() {
    let net = network();
    let size = 9;
    let state = game(size, ATARI_CASE);
    assert_eq!(state.next, Player::Black);
    let raw = raw_top(&net, &state, 2);
    assert_eq!(
        raw[0].0, "H5",
        "raw policy now prefers {raw:?}: the case tests nothing"
    );
    let infos = search(&net, &state, 300, 1);
    let best = &infos[0];
    assert_eq!(best.mv.to_gtp(size, size), "F2", "{infos:?}");
    let h5 = infos.iter().find(|m| m.mv.to_gtp(size, size) == "H5");
    let h5_winrate = h5.map_or(0.0, |m| m.winrate);
    assert!(
        best.winrate > h5_winrate + 0.1,
        "F2 {} H5 {h5_winrate}",
        best.winrate
    );
    assert!(best.visits > 150, "{}", best.visits);
}

/// One thread, a fixed seed and the real net with random symmetries:
/// two searches give identical move infos (the cache emptied in between,
/// so the second search evaluates everything again).
#[test]
fn seeded_single_thread_search_repeats_exactly() {
    let net = network_with("");
    let state = game(9, ATARI_CASE);
    let first = search(&net, &state, 200, 42);
    net.evaluator().clear_cache();
    let second = search(&net, &state, 200, 42);
    assert!(!first.is_empty());
    assert_eq!(first, second);
    net.evaluator().clear_cache();
    let other = search(&net, &state, 200, 43);
    assert_ne!(first, other, "the seed should matter (random symmetries)");
}

/// A tactical case: the raw policy's favourite move, the move the search
/// must find, and how much better (in the mover's winrate) it must judge it.
struct Case {
    state: GameState,
    raw_favourite: &'static str,
    capture: &'static str,
    min_winrate_gain: f64,
}

fn check(case: Case) {
    let net = network();
    let size = case.state.board.x_size();
    assert_eq!(case.state.next, Player::Black);
    let raw = raw_top(&net, &case.state, 3);
    assert_eq!(
        raw[0].0, case.raw_favourite,
        "raw policy now prefers {raw:?}: the case tests nothing"
    );
    let infos = search(&net, &case.state, 400, 1);
    let name = |m: &MoveInfo| m.mv.to_gtp(size, size);
    let best = &infos[0];
    assert_eq!(name(best), case.capture, "{infos:#?}");
    let raw_winrate = infos
        .iter()
        .find(|m| name(m) == case.raw_favourite)
        .map_or(0.0, |m| m.winrate);
    assert!(
        best.winrate > raw_winrate + case.min_winrate_gain,
        "{} {} vs {} {raw_winrate}",
        case.capture,
        best.winrate,
        case.raw_favourite
    );
    assert!(best.visits > 200, "{}", best.visits);
}

/// Ladder. White's cutting stones G5-G6 have two liberties (G4, H5). Black
/// H5 ataris; White G4 joins H4 and has two liberties again (G3, J4); Black
/// J4 ataris once more, White G3 is left with the single liberty G2, and
/// Black captures five stones. The raw policy plays C1 in the lower left.
/// From the net's raw-policy game 1 of the second batch, after move 34,
/// set up here without history.
#[test]
fn search_finds_the_ladder_the_raw_policy_misses() {
    check(Case {
        state: diagram(&[
            ". . O . . . . . .",
            ". . O X X X O . .",
            ". . X O O X X O .",
            ". . O O X X O X .",
            ". . O . O X O . .",
            ". . . O O X . O .",
            ". . . O X X . X .",
            ". . O X X . . . .",
            ". . . . . . . . .",
        ]),
        raw_favourite: "C1",
        capture: "H5",
        min_winrate_gain: 0.04,
    });
}

/// Ko. White's G8 cuts Black's G9-H9-H8 from G7 and has one liberty, F8.
/// Black F8 captures it and is left in atari itself: a ko capture, which
/// reconnects Black's stones. The raw policy prefers J7, next to White's
/// last move J8. From the net's raw-policy game 29 of the second batch after
/// move 38, with its history (set up without history, the search prefers
/// yet another move, B3, so the history matters to this case).
#[test]
fn search_takes_the_ko_the_raw_policy_leaves() {
    check(Case {
        state: game(9, KO_CASE),
        raw_favourite: "J7",
        capture: "F8",
        min_winrate_gain: 0.04,
    });
}

const KO_CASE: &str = "D4 F6 D7 F4 E5 D3 F5 G5 G6 E4 D5 G4 H6 F7 G7 G8 H8 E8 G9 F9 \
                       H9 C3 B5 D8 C8 C7 B7 C6 B8 C5 C4 D6 E6 E7 B4 H5 J6 J8";

/// Capturing race (semeai). Black's F5-G5-H5 is cut off on the right with
/// three liberties (G6, H6, J5); White's F4-G4-H4 under it has four (F3, G3,
/// H3, J4). The search attacks White's stones from the outside with F3,
/// which also joins Black's E3 group, and rates it far above the raw
/// policy's J4 on the edge. From the net's raw-policy game 8 of the first
/// batch after move 26, set up here without history.
#[test]
fn search_wins_the_capturing_race_the_raw_policy_loses() {
    check(Case {
        state: diagram(&[
            ". . . . . . . . .",
            ". . . . . O O X .",
            ". . . X O . X . .",
            ". . O O O O . . .",
            ". . X X O X X X .",
            ". X . . X O O O .",
            ". . X X X . . . .",
            ". . . . . . . . .",
            ". . . . . . . . .",
        ]),
        raw_favourite: "J4",
        capture: "F3",
        min_winrate_gain: 0.1,
    });
}
