//! Handicap and asymmetric-playout self-play games: one seeded 7x7 game of
//! each type with the g170 net and few visits. The game type channel
//! (`globalTargetsNC` C55), the extra-black count (C54), the handicap
//! stones on the start board and in the SGF, the playout-advantage inputs
//! (`globalInputNC` C15/C16, signed by the player to move) and the row
//! weights are checked, beside the rows' usual invariants.

use std::sync::atomic::AtomicBool;

use engine::config::Config;
use engine::data::TrainingRows;
use engine::game::{Color, GameState, Player};
use engine::nn::FeatureEncoder;
use engine::search::{SearchParams, SetupFor};
use engine::selfplay::{
    maybe_fork, play_game, write_game_rows, GameMode, PlaySettings, PlayedGame,
};
use rand::SeedableRng;

const BASE: &str =
    "maxVisits = 24\ncheapSearchProb = 0.3\ncheapSearchVisits = 12\nreducedVisitsMin = 12\n\
    bSizes = \"7\"\nkomiMean = 7.0\ncompensateKomiVisits = 8\nmaxMovesPerGame = 60\n\
    numSearchThreads = 1\nnnRandomize = true\nrootNoiseEnabled = true\n\
    policySurpriseDataWeight = 0.5\nvalueSurpriseDataWeight = 0.1\n";

fn play(extra: &str, seed: u64) -> (PlayedGame, TrainingRows) {
    play_from(extra, seed, None)
}

fn play_from(extra: &str, seed: u64, fork: Option<GameState>) -> (PlayedGame, TrainingRows) {
    play_config(&format!("{BASE}{extra}"), seed, fork)
}

fn play_config(config: &str, seed: u64, fork: Option<GameState>) -> (PlayedGame, TrainingRows) {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    let cfg = Config::from_toml_str(config, "test.toml").unwrap();
    let (settings, _) = PlaySettings::from_config(&cfg).unwrap();
    let net = engine::setup::load_network(&model, &cfg, 8).unwrap();
    let overrides = engine::setup::search_settings(&cfg);
    let params = SearchParams::from_overrides(
        SetupFor::Other,
        overrides.iter().map(|(k, v)| (k.as_str(), v)),
    )
    .unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let stop = AtomicBool::new(false);
    let played = play_game(
        &settings,
        &params,
        net.evaluator.clone(),
        "test",
        fork,
        &mut rng,
        &stop,
        &mut || None,
    )
    .unwrap()
    .expect("not stopped");
    let mut rows = TrainingRows::new(19);
    let mut encoder = FeatureEncoder::new();
    let n = write_game_rows(&played.game, &mut rows, &mut encoder, &mut rng).unwrap();
    assert_eq!(n, rows.num_rows);
    assert!(n > 0, "the game wrote rows");
    for r in 0..n {
        let g = &rows.global_targets_nc[r * 80..(r + 1) * 80];
        assert_eq!(g[63], 3.0, "row {r}: data version");
        assert!(g[25].is_finite() && g[25] > 0.0, "row {r}: game weight");
        for c in [0, 4, 8, 12, 16] {
            let p = g[c] + g[c + 1] + g[c + 2];
            assert!((p - 1.0).abs() < 1e-4, "row {r}: value channels {c}..");
        }
        let sd: i32 = rows.score_distr_n[r * 842..(r + 1) * 842]
            .iter()
            .map(|&x| i32::from(x))
            .sum();
        assert_eq!(sd, 100, "row {r}: score distribution");
    }
    for (i, t) in played.game.turns.iter().enumerate() {
        assert!(
            t.target_weight.is_finite() && t.target_weight >= 0.0,
            "turn {i}: weight {}",
            t.target_weight
        );
    }
    (played, rows)
}

#[test]
fn handicap_game_places_black_stones_and_marks_its_rows() {
    let (played, rows) = play(
        "handicapProb = 1.0\nnumExtraBlackFixed = 2\nhandicapCompensateKomiProb = 1.0\n",
        3,
    );
    let game = &played.game;
    assert_eq!(game.num_extra_black, 2);
    assert_eq!(game.mode, GameMode::Handicap);
    assert_eq!(game.playout_doubling_advantage_pla, None);
    let b = &game.start_board;
    assert_eq!(b.num_stones_of(Player::Black), 2);
    assert_eq!(b.num_stones_of(Player::White), 0);
    // Black moves first after its extra stones, as in KataGo's self-play.
    assert_eq!(game.start_pla, Player::Black);
    assert!(game.start_hist.moves().is_empty());
    // Komi made fair for the handicap position: a half-point multiple.
    let komi = game.end_hist.rules().komi;
    assert_eq!((komi * 2.0).fract(), 0.0, "komi {komi}");
    for r in 0..rows.num_rows {
        let g = &rows.global_targets_nc[r * 80..(r + 1) * 80];
        assert_eq!(g[54], 2.0, "row {r}: extra black");
        assert_eq!(g[55], 3.0, "row {r}: game type handicap");
        let gi = &rows.global_input_nc[r * 19..(r + 1) * 19];
        assert_eq!(gi[15], 0.0, "row {r}: no playout advantage");
    }
    assert!(played.sgf.contains("gtype=handicap"), "{}", played.sgf);
    assert!(played.sgf.contains("HA[2]"), "{}", played.sgf);
    assert!(played.sgf.contains("AB["), "{}", played.sgf);
    let stones: Vec<_> = b.locs().filter(|&l| b.get(l) == Color::Black).collect();
    assert_eq!(stones.len(), 2);
}

#[test]
fn asymmetric_game_gives_one_side_more_playouts() {
    let (played, rows) = play(
        "normalAsymmetricPlayoutProb = 1.0\nmaxAsymmetricRatio = 4.0\n\
         minAsymmetricCompensateKomiProb = 0.0\n",
        7,
    );
    let game = &played.game;
    assert_eq!(game.mode, GameMode::Asym);
    assert_eq!(game.num_extra_black, 0);
    let adv = game
        .playout_doubling_advantage_pla
        .expect("an advantaged player");
    let pda = game.playout_doubling_advantage;
    assert!(pda > 0.0 && pda <= 2.0, "advantage {pda} doublings");
    // The advantaged side's full searches get more visits than the other's.
    let f = 2f64.powf(pda);
    let expect = |pla: Player, visits: f64| -> i64 {
        let factor = if pla == adv {
            2.0 * f / (f + 1.0)
        } else {
            2.0 / (f + 1.0)
        };
        ((visits * factor).round() as i64).max(5)
    };
    let moves = game.game_moves();
    let mut seen = [0, 0];
    for (i, (t, &(_, pla))) in game.turns.iter().zip(moves).enumerate() {
        // Each search gets the player's share of a full (24) or cheap (12)
        // search; the tree is cleared before each, so nothing is reused.
        let v = t.unreduced_num_visits;
        let (full, cheap) = (expect(pla, 24.0), expect(pla, 12.0));
        assert!(
            v == full || v == cheap,
            "turn {i} {pla:?}: {v} visits, expected {full} or {cheap}"
        );
        if v == full && full != cheap {
            seen[usize::from(pla == adv)] += 1;
        }
    }
    assert!(
        seen[0] > 0 && seen[1] > 0,
        "full searches of both sides: {seen:?}"
    );
    for r in 0..rows.num_rows {
        let g = &rows.global_targets_nc[r * 80..(r + 1) * 80];
        assert_eq!(g[55], 7.0, "row {r}: game type asym");
        let gi = &rows.global_input_nc[r * 19..(r + 1) * 19];
        assert_eq!(gi[15], 1.0, "row {r}: playout advantage flag");
        assert!(
            (gi[16].abs() - (0.5 * pda) as f32).abs() < 1e-6,
            "row {r}: advantage input {}",
            gi[16]
        );
    }
    // The input is signed by the player to move: both signs appear when
    // both players have rows.
    let signs: Vec<f32> = (0..rows.num_rows)
        .map(|r| rows.global_input_nc[r * 19 + 16].signum())
        .collect();
    assert!(signs.iter().all(|s| *s != 0.0));
    assert!(played.sgf.contains("gtype=asym"), "{}", played.sgf);
}

#[test]
fn fancy_komi_and_random_draw_value_keep_rows_valid() {
    let (played, rows) = play(
        "handicapProb = 1.0\nnumExtraBlackFixed = 1\nhandicapCompensateKomiProb = 0.0\n\
         fancyKomiVarying = true\ndrawRandRadius = 0.5\nnoResultStdev = 0.1666\n",
        11,
    );
    let game = &played.game;
    assert_eq!(game.mode, GameMode::Handicap);
    let d = game.draw_equivalent_wins_for_white;
    assert!((0.0..=1.0).contains(&d) && d != 0.5, "draw value {d}");
    let komi = game.end_hist.rules().komi;
    assert_eq!((komi * 2.0).fract(), 0.0, "komi {komi}");
    for r in 0..rows.num_rows {
        let g = &rows.global_targets_nc[r * 80..(r + 1) * 80];
        assert_eq!(g[55], 3.0, "row {r}: game type handicap");
    }
}

#[test]
fn side_positions_are_searched_and_written() {
    let (played, rows) = play("sidePositionProb = 0.5\n", 13);
    let game = &played.game;
    assert!(!game.side_positions.is_empty(), "some side positions");
    for (i, sp) in game.side_positions.iter().enumerate() {
        assert!(!sp.hist.is_game_finished(), "side position {i} is live");
        assert_eq!(sp.turn.target_weight, 1.0);
        // A full search, without playout advantage.
        assert!(sp.turn.unreduced_num_visits >= 24, "side position {i}");
        let child: i64 = sp.turn.q_value_targets.iter().map(|q| q.visits).sum();
        assert_eq!(child, sp.turn.unreduced_num_visits - 1);
        // One move off the game's own line at that point.
        let line = game.end_hist.moves();
        let sp_moves = sp.hist.moves();
        assert!(sp_moves.len() <= line.len() + 3);
        assert!(
            sp_moves
                .iter()
                .zip(line)
                .take_while(|(a, b)| a == b)
                .count()
                < sp_moves.len()
        );
    }
    // Every side position adds one row without ownership targets (C27 is
    // 0 there: KataGo's side rows have no final targets); the game's own
    // rows have them unless it ended without result.
    let side_rows = (0..rows.num_rows)
        .filter(|&r| rows.global_targets_nc[r * 80 + 27] == 0.0)
        .count();
    if !game.end_hist.is_no_result() {
        assert_eq!(side_rows, game.side_positions.len());
    }
}

#[test]
fn side_positions_follow_cheap_searches_too() {
    // Every move a cheap search (no game rows): KataGo still forks side
    // positions off them, and those rows are the game's only rows.
    let config =
        BASE.replace("cheapSearchProb = 0.3", "cheapSearchProb = 1.0") + "sidePositionProb = 0.3\n";
    let (played, rows) = play_config(&config, 5, None);
    let game = &played.game;
    assert!(game.turns.iter().all(|t| t.target_weight == 0.0));
    assert!(
        !game.side_positions.is_empty(),
        "side positions after cheap searches"
    );
    assert_eq!(rows.num_rows, game.side_positions.len());
}

#[test]
fn early_fork_starts_a_fork_game() {
    let extra = "earlyForkGameProb = 0.5\nearlyForkGameExpectedMoveProp = 0.1\n\
                 forkGameMinChoices = 3\nearlyForkGameMaxChoices = 12\nforkCompensateKomiProb = 0.5\n";
    let (played, _) = play(extra, 17);
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    let cfg = Config::from_toml_str(&format!("{BASE}{extra}"), "test.toml").unwrap();
    let (settings, _) = PlaySettings::from_config(&cfg).unwrap();
    let net = engine::setup::load_network(&model, &cfg, 8).unwrap();
    let params = SearchParams::defaults(SetupFor::Other);
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    let fork = (0..40)
        .find_map(|_| {
            maybe_fork(&settings, &played.game, &params, &net.evaluator, &mut rng).unwrap()
        })
        .expect("a fork within 40 tries at probability 0.5");
    let fork_moves = fork.hist.moves().len();
    let line = played.game.end_hist.moves();
    // The fork follows the game, then leaves it with its last move.
    assert!(fork_moves >= 1 && fork_moves <= line.len() + 1);
    assert_eq!(
        &fork.hist.moves()[..fork_moves - 1],
        &line[..fork_moves - 1]
    );
    let (forked, rows) = play_from(extra, 19, Some(fork.clone()));
    let game = &forked.game;
    assert_eq!(game.mode, GameMode::Fork);
    assert_eq!(game.start_hist.moves(), fork.hist.moves());
    assert_eq!(game.start_board.pos_hash(), fork.board.pos_hash());
    for r in 0..rows.num_rows {
        let g = &rows.global_targets_nc[r * 80..(r + 1) * 80];
        assert_eq!(g[55], 2.0, "row {r}: game type fork");
        assert_eq!(g[53], fork_moves as f32, "row {r}: moves before the start");
    }
    assert!(forked.sgf.contains("gtype=fork"), "{}", forked.sgf);
    assert!(forked.sgf.contains(&format!("startTurnIdx={fork_moves}")));
}
