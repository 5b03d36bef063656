//! Training-row targets against KataGo's own rows.
//!
//! `shared/vectors/npz/1F20939B3476347D.npz` holds 295 rows KataGo's
//! self-play wrote from the 12 games in `npz/sgfs/`. We rebuild each game
//! from its SGF (initialisation moves, game hash, game type, playout
//! advantage from the root comment), score it as KataGo's self-play does,
//! write a row for every turn with `engine::selfplay::write_game_rows`, and
//! compare every target that does not depend on the search with KataGo's
//! row for the same game and turn: inputs, game result and final score,
//! final ownership, seki/area-not-owned plane, future boards, final scoring
//! map, score distribution, weights that are fixed, komi, game hash, turn
//! and game metadata, bonus points, data version. The policy targets are
//! the search's, so KataGo's are given to our writer as each turn's target
//! and our rows must lay them out as KataGo's do (this turn's and the next
//! turn's, pass included).
//!
//! Two per-game random draws of KataGo's are recorded nowhere but in the
//! rows: the draw value (`drawRandRadius`), recovered from the komi *input*
//! feature of the game's first row (so that one input value is not an
//! independent check; the komi target C47 and every other row are), and
//! the random rounding of the final scoring map C4, which may differ by one
//! only at points where the group tax makes the value fractional.

use std::collections::HashMap;
use std::path::Path;

use engine::data::{read_npz, TrainingRows};
use engine::game::sgf::parse_collection;
use engine::game::{Board, BoardHistory, Color, Hash128, Loc, Move, Player, Rules};
use engine::nn::FeatureEncoder;
use engine::selfplay::{
    write_game_rows, FinalOutcome, FinishedGame, GameMode, PolicyTargetMove, TurnRecord,
};
use rand::SeedableRng;

fn comment_field<'a>(comment: &'a str, key: &str) -> Option<&'a str> {
    comment
        .split(',')
        .find_map(|kv| kv.trim().strip_prefix(key)?.strip_prefix('='))
}

/// A game rebuilt from its SGF, with everything but the search targets.
struct Rebuilt {
    name: String,
    game: FinishedGame,
}

/// KataGo's row data a rebuilt game takes: the first row's turn and komi
/// input feature (for the draw value), and each turn's policy target.
struct KataGoRows<'a> {
    /// Game hash to (turn, global input 5 = self komi / 20) of its first row.
    first_rows: HashMap<u128, (usize, f32)>,
    /// (game hash, turn) to row.
    rows: HashMap<(u128, usize), usize>,
    /// `policyTargetsNCMove`.
    policy: &'a [i16],
}

impl KataGoRows<'_> {
    /// KataGo's policy target (channel 0) of `turn` as target moves.
    fn policy_target(&self, hash: u128, turn: usize, xs: usize) -> Option<Vec<PolicyTargetMove>> {
        let row = *self.rows.get(&(hash, turn))?;
        let p = &self.policy[row * 2 * 362..][..362];
        Some(
            p.iter()
                .enumerate()
                .filter(|(_, &v)| v != 0)
                .map(|(i, &v)| PolicyTargetMove {
                    mv: if i == 361 {
                        Move::Pass
                    } else {
                        Move::Play(Loc::from_xy(i % 19, i / 19, xs))
                    },
                    target: v,
                })
                .collect(),
        )
    }
}

/// The self komi whose input feature (`selfKomi / 20`, in f32 as KataGo's
/// `fillRowV7`) is `feature`: the f32 nearest `20 * feature` that divides
/// back to it.
fn self_komi_of_feature(feature: f32) -> f32 {
    let guess = feature * 20.0;
    let mut best: Option<f32> = None;
    let mut x = guess;
    for _ in 0..8 {
        x = f32::from_bits(x.to_bits().wrapping_sub(1));
    }
    for _ in 0..17 {
        if x / 20.0 == feature && best.is_none_or(|b| (x - guess).abs() < (b - guess).abs()) {
            best = Some(x);
        }
        x = f32::from_bits(x.to_bits().wrapping_add(1));
    }
    best.unwrap_or_else(|| panic!("no f32 self komi gives the feature {feature}"))
}

fn rebuild_game(path: &Path, katago: &KataGoRows) -> Rebuilt {
    let text = std::fs::read_to_string(path).unwrap();
    let trees = parse_collection(&text).unwrap();
    let rec = trees[0].record().unwrap();
    let comment = rec.game_comment.clone().unwrap_or_default();
    let hash = u128::from_str_radix(comment_field(&comment, "gameHash").unwrap(), 16).unwrap();
    let start_turn: usize = comment_field(&comment, "startTurnIdx")
        .unwrap()
        .parse()
        .unwrap();
    let init_turn: i64 = comment_field(&comment, "initTurnNum")
        .unwrap()
        .parse()
        .unwrap();
    let mode = match comment_field(&comment, "gtype").unwrap() {
        "normal" => GameMode::Normal,
        "handicap" => GameMode::Handicap,
        "asym" => GameMode::Asym,
        "fork" => GameMode::Fork,
        other => panic!("game type {other} not in this test's games"),
    };
    let pda_white: f64 = comment_field(&comment, "pdaWhite").map_or(0.0, |s| s.parse().unwrap());
    let komi = rec.komi.unwrap();
    let rules = Rules::parse_without_komi(rec.rules.as_deref().unwrap(), komi).unwrap();
    let (xs, ys) = (rec.x_size, rec.y_size);

    let mut board = Board::new(xs, ys).unwrap();
    for &(color, (x, y)) in &rec.setup {
        assert!(board.set_stone(Loc::from_xy(x, y, xs), color));
    }
    let num_extra_black = rec.setup.iter().filter(|(c, _)| *c == Color::Black).count() as u32;
    let first = rec.moves.first().map_or(Player::Black, |m| m.0);
    let mut hist = BoardHistory::new(&board, first, rules);
    hist.set_initial_turn_number(init_turn);
    let mut start = None;
    for (i, &(pla, pt)) in rec.moves.iter().enumerate() {
        if i == start_turn {
            start = Some((board.clone(), hist.clone(), pla));
        }
        let mv = pt.map_or(Move::Pass, |(x, y)| Move::Play(Loc::from_xy(x, y, xs)));
        assert!(
            hist.is_legal(&board, mv, pla),
            "{}: move {i} illegal",
            path.display()
        );
        hist.play(&mut board, mv, pla);
    }
    let (start_board, start_hist, start_pla) = start.expect("game has moves after the start");
    // Self-play ends a game as soon as everything is pass-alive.
    hist.end_game_if_all_pass_alive(&board);
    let hit_turn_limit = !hist.is_game_finished();

    // The draw value is drawn at random per game and recorded nowhere but
    // in the komi of integer-result games; recover it from the komi input
    // feature of KataGo's first row of this game.
    let draw_value = match katago.first_rows.get(&hash) {
        Some(&(turn, feature)) if rules.game_result_will_be_integer() => {
            let row_komi = self_komi_of_feature(feature);
            let mut b = start_board.clone();
            let mut h = start_hist.clone();
            for &(mv, pla) in &hist.moves()[start_turn..turn] {
                h.play(&mut b, mv, pla);
            }
            let next = hist.moves()[turn].1;
            let base = f64::from(h.current_self_komi(next, 0.5));
            let sign = if next == Player::White { 1.0 } else { -1.0 };
            0.5 + (f64::from(row_komi) - base) * sign
        }
        _ => 0.5,
    };

    let num_turns = hist.moves().len() - start_turn;
    let turns = (start_turn..start_turn + num_turns)
        .map(|turn| TurnRecord {
            target_weight: 1.0,
            policy_target: Some(katago.policy_target(hash, turn, xs).unwrap_or_default()),
            ..TurnRecord::default()
        })
        .collect();
    let outcome = FinalOutcome::compute(&board, &hist, draw_value);
    let game = FinishedGame {
        start_board,
        start_hist,
        start_pla,
        end_hist: hist,
        game_hash: Hash128(hash),
        hit_turn_limit,
        num_extra_black,
        mode,
        draw_equivalent_wins_for_white: draw_value,
        playout_doubling_advantage_pla: (pda_white != 0.0).then_some(Player::White),
        playout_doubling_advantage: pda_white,
        training_weight: 1.0,
        turns,
        outcome,
        side_positions: Vec::new(),
        changed_nets_turns: Vec::new(),
    };
    Rebuilt {
        name: path.file_name().unwrap().to_string_lossy().into_owned(),
        game,
    }
}

/// The game hash of a row from its six chunks (hash0 = C41-43 low half).
fn row_game_hash(gt: &[f32], row: usize) -> u128 {
    let c = |i: usize| gt[row * 80 + i] as u64;
    let hash0 = c(41) | (c(42) << 22) | (c(43) << 44);
    let hash1 = c(44) | (c(45) << 22) | (c(46) << 44);
    (u128::from(hash1) << 64) | u128::from(hash0)
}

/// `globalTargetsNC` channels that do not depend on the search: game
/// result (0-3), final score (20), fixed weights (24-28, 33-35), game hash
/// (41-46), komi and phase (47-48), net changes (49-50), turn and game
/// metadata (51-56), bonus points (61), finished (62), version (63),
/// reanalysis and the rest (64-79).
const GLOBAL_CHANNELS: &[usize] = &[
    0, 1, 2, 3, 20, 24, 25, 26, 27, 33, 34, 35, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,
    54, 55, 56, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79,
];

#[test]
fn search_independent_targets_match_katago_rows() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let npz_dir = shared.join("vectors/npz");
    let katago = read_npz(&npz_dir.join("1F20939B3476347D.npz")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(katago.pos_len, 19);
    let bin = &katago.binary_input_nchw_packed;
    let glob = &katago.global_input_nc;
    let gt = &katago.global_targets_nc;
    let sd = &katago.score_distr_n;
    let vt = &katago.value_targets_nchw;
    let pt = &katago.policy_targets_nc_move;
    let n = katago.num_rows;
    assert_eq!(n, 295);

    // First row (turn, komi input) per game hash, for the draw value, and
    // every row by game and turn, for the policy targets.
    let mut katago_rows = KataGoRows {
        first_rows: HashMap::new(),
        rows: HashMap::new(),
        policy: pt,
    };
    for row in 0..n {
        let (hash, turn) = (row_game_hash(gt, row), gt[row * 80 + 51] as usize);
        katago_rows
            .first_rows
            .entry(hash)
            .or_insert((turn, glob[row * 19 + 5]));
        katago_rows.rows.insert((hash, turn), row);
    }

    let mut paths: Vec<_> = std::fs::read_dir(npz_dir.join("sgfs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sgf"))
        .collect();
    paths.sort();
    assert_eq!(paths.len(), 12);

    // Our rows: one per turn of every game, keyed by (hash, turn).
    let mut ours = TrainingRows::new(19);
    let mut index: HashMap<(u128, usize), (usize, usize)> = HashMap::new();
    let mut games: Vec<Rebuilt> = Vec::new();
    let mut encoder = FeatureEncoder::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for path in &paths {
        let rebuilt = rebuild_game(path, &katago_rows);
        let first_row = ours.num_rows;
        let start = rebuilt.game.start_hist.moves().len();
        let added = write_game_rows(&rebuilt.game, &mut ours, &mut encoder, &mut rng).unwrap();
        assert_eq!(added, rebuilt.game.turns.len());
        for k in 0..added {
            index.insert(
                (rebuilt.game.game_hash.0, start + k),
                (first_row + k, games.len()),
            );
        }
        games.push(rebuilt);
    }

    let mut failures = Vec::new();
    let mut checked_games = std::collections::HashSet::new();
    let mut next_turn_checked = 0;
    for row in 0..n {
        let hash = row_game_hash(gt, row);
        let turn = gt[row * 80 + 51] as usize;
        let (our, game_idx) = *index
            .get(&(hash, turn))
            .unwrap_or_else(|| panic!("row {row}: no game/turn {hash:032X}/{turn}"));
        let rebuilt = &games[game_idx];
        let name = &rebuilt.name;
        let xs = rebuilt.game.start_board.x_size();
        let ys = rebuilt.game.start_board.y_size();
        checked_games.insert(hash);
        let mut fail =
            |what: String| failures.push(format!("row {row} ({name} turn {turn}): {what}"));

        for i in 0..22 * 46 {
            let (want, got) = (
                bin[row * 22 * 46 + i],
                ours.binary_input_nchw_packed[our * 22 * 46 + i],
            );
            if want != got {
                fail(format!(
                    "input plane {} byte {}: KataGo {want:08b}, ours {got:08b}",
                    i / 46,
                    i % 46
                ));
            }
        }
        for c in 0..19 {
            let (want, got) = (glob[row * 19 + c], ours.global_input_nc[our * 19 + c]);
            // The playout advantage is printed to 6 digits in the SGF.
            let tol = if c == 16 { 1e-5 } else { 0.0 };
            if (want - got).abs() > tol {
                fail(format!("global input {c}: KataGo {want}, ours {got}"));
            }
        }
        for &c in GLOBAL_CHANNELS {
            let (want, got) = (gt[row * 80 + c], ours.global_targets_nc[our * 80 + c]);
            if want != got {
                fail(format!("globalTargetsNC C{c}: KataGo {want}, ours {got}"));
            }
        }
        // The next-turn policy target exists except on the last turn.
        let next_weight = ours.global_targets_nc[our * 80 + 28];
        if gt[row * 80 + 28] != next_weight {
            fail(format!(
                "C28: KataGo {}, ours {next_weight}",
                gt[row * 80 + 28]
            ));
        }
        for i in 0..842 {
            let (want, got) = (sd[row * 842 + i], ours.score_distr_n[our * 842 + i]);
            if want != got {
                fail(format!("scoreDistrN[{i}]: KataGo {want}, ours {got}"));
            }
        }
        for c in 0..5 {
            for p in 0..361 {
                let i = c * 361 + p;
                let (want, got) = (
                    vt[row * 5 * 361 + i],
                    ours.value_targets_nchw[our * 5 * 361 + i],
                );
                // The final scoring plane is rounded at random where the
                // group tax makes it fractional: there either neighbour is
                // right.
                let (x, y) = (p % 19, p / 19);
                let fractional = c == 4 && x < xs && y < ys && {
                    let s = rebuilt.game.outcome.white_scoring[Loc::from_xy(x, y, xs).idx()];
                    (s * 120.0).fract() != 0.0
                };
                let ok =
                    want == got || (fractional && (i32::from(want) - i32::from(got)).abs() == 1);
                if !ok {
                    fail(format!(
                        "valueTargetsNCHW C{c} at ({},{}): KataGo {want}, ours {got}",
                        p % 19,
                        p / 19
                    ));
                }
            }
        }
        // The policy targets KataGo's search gave, as our writer lays them
        // out: this turn's (channel 0), and the next turn's (channel 1)
        // where KataGo kept a row for the next turn (a turn without a row,
        // e.g. a cheap search, has a target only KataGo's row before it
        // shows, which we do not take as input).
        let next_known = katago_rows.rows.contains_key(&(hash, turn + 1));
        next_turn_checked += usize::from(next_known);
        for ch in 0..if next_known { 2 } else { 1 } {
            for i in 0..362 {
                let k = ch * 362 + i;
                let (want, got) = (
                    pt[row * 2 * 362 + k],
                    ours.policy_targets_nc_move[our * 2 * 362 + k],
                );
                if want != got {
                    fail(format!(
                        "policyTargetsNCMove C{ch} [{i}]: KataGo {want}, ours {got}"
                    ));
                }
            }
        }
    }
    assert!(
        next_turn_checked >= 20,
        "only {next_turn_checked} rows have the next turn's row"
    );
    assert_eq!(checked_games.len(), 12, "every game has rows");
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
