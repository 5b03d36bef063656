//! KataGo self-play features that change the data, each observed in a
//! seeded 7x7 game with the g170 net and few visits: lead estimation
//! (`estimateLeadProb`: the row's lead target and weight), switching nets
//! in the middle of a game (`switchNetsMidGame`: the rows' net-change
//! channels), fair komi after the opening moves
//! (`compensateAfterPolicyInitProb`) and the seki fork hack
//! (`sekiForkHackProb`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use engine::config::Config;
use engine::data::TrainingRows;
use engine::game::GameState;
use engine::nn::FeatureEncoder;
use engine::search::{RunOptions, Search, SearchParams, SetupFor};
use engine::selfplay::{
    maybe_seki_fork, play_game, write_game_rows, ForkQueue, GameMode, PlaySettings, PlayedGame,
};
use engine::setup::Network;
use rand::rngs::StdRng;
use rand::SeedableRng;

const BASE: &str =
    "maxVisits = 16\ncheapSearchProb = 0.0\ncheapSearchVisits = 8\nreducedVisitsMin = 8\n\
    bSizes = \"7\"\nkomiMean = 7.0\ncompensateKomiVisits = 8\nmaxMovesPerGame = 50\n\
    numSearchThreads = 1\nnnRandomize = true\nrootNoiseEnabled = true\n";

struct Setup {
    settings: PlaySettings,
    params: SearchParams,
    cfg: Config,
}

fn setup(extra: &str) -> Setup {
    // A key given in `extra` replaces the base's.
    let given: Vec<&str> = extra
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
        .collect();
    let base: String = BASE
        .lines()
        .filter(|l| {
            l.split_once('=')
                .is_none_or(|(k, _)| !given.contains(&k.trim()))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let cfg = Config::from_toml_str(&format!("{base}{extra}"), "test.toml").unwrap();
    let (settings, _) = PlaySettings::from_config(&cfg).unwrap();
    let overrides = engine::setup::search_settings(&cfg);
    let params = SearchParams::from_overrides(
        SetupFor::Other,
        overrides.iter().map(|(k, v)| (k.as_str(), v)),
    )
    .unwrap();
    Setup {
        settings,
        params,
        cfg,
    }
}

fn net(cfg: &Config) -> Network {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    engine::setup::load_network(&model, cfg, 8).unwrap()
}

fn play(su: &Setup, net: &Network, seed: u64) -> PlayedGame {
    let mut rng = StdRng::seed_from_u64(seed);
    let stop = AtomicBool::new(false);
    play_game(
        &su.settings,
        &su.params,
        net.evaluator.clone(),
        "test",
        None,
        &mut rng,
        &stop,
        &mut || None,
    )
    .unwrap()
    .expect("not stopped")
}

fn rows_of(played: &PlayedGame, seed: u64) -> TrainingRows {
    let mut rows = TrainingRows::new(19);
    let mut encoder = FeatureEncoder::new();
    let mut rng = StdRng::seed_from_u64(seed);
    let n = write_game_rows(&played.game, &mut rows, &mut encoder, &mut rng).unwrap();
    assert!(n > 0, "the game wrote rows");
    rows
}

fn global(rows: &TrainingRows, r: usize) -> &[f32] {
    &rows.global_targets_nc[r * 80..(r + 1) * 80]
}

#[test]
fn estimate_lead_prob_one_sets_lead_target_and_weight() {
    let su = setup("estimateLeadProb = 1.0\nestimateLeadVisits = 4\n");
    let net = net(&su.cfg);
    let played = play(&su, &net, 11);
    let rows = rows_of(&played, 1);
    let with_lead = (0..rows.num_rows)
        .filter(|&r| global(&rows, r)[29] == 1.0)
        .count();
    // Only turns whose no-result value is 0.3 or more are skipped.
    assert!(
        with_lead * 10 >= rows.num_rows * 9,
        "{with_lead} of {} rows have a lead",
        rows.num_rows
    );
    // The estimated lead is close to the search's score for most turns
    // (both are White's view in the turn records).
    let mut gaps: Vec<f32> = played
        .game
        .turns
        .iter()
        .filter_map(|t| {
            let v = t.white_value_targets;
            v.lead.map(|l| (l - v.score).abs())
        })
        .collect();
    assert!(!gaps.is_empty());
    gaps.sort_by(f32::total_cmp);
    let median = gaps[gaps.len() / 2];
    assert!(median < 6.0, "median |lead - score| = {median}");
    for r in 0..rows.num_rows {
        let g = global(&rows, r);
        assert!(
            g[21].is_finite() && g[21].abs() <= 49.0 + 20.0,
            "row {r}: lead {}",
            g[21]
        );
    }

    // Without it, no row has a lead weight.
    let su = setup("estimateLeadProb = 0.0\n");
    let played = play(&su, &net, 11);
    let rows = rows_of(&played, 1);
    assert!((0..rows.num_rows).all(|r| global(&rows, r)[29] == 0.0 && global(&rows, r)[21] == 0.0));
}

#[test]
fn switch_nets_mid_game_marks_the_rows_as_katago() {
    let su = setup("switchNetsMidGame = true\nmaxMovesPerGame = 60\n");
    let first = net(&su.cfg);
    let second = net(&su.cfg);
    let mut rng = StdRng::seed_from_u64(5);
    let stop = AtomicBool::new(false);
    let mut offered = 0;
    let newer = second.evaluator.clone();
    let mut check = || {
        offered += 1;
        (offered == 1).then(|| Arc::clone(&newer))
    };
    let played = play_game(
        &su.settings,
        &su.params,
        first.evaluator.clone(),
        "first",
        None,
        &mut rng,
        &stop,
        &mut check,
    )
    .unwrap()
    .expect("not stopped");
    assert!(offered >= 1, "the game asked for a newer net");
    let changes = &played.game.changed_nets_turns;
    assert_eq!(changes.len(), 1, "one change: {changes:?}");
    assert!(
        second.evaluator.evaluator().stats().requests > 0,
        "the newer net searched"
    );
    let start = played.game.start_hist.moves().len();
    let num_turns = played.game.turns.len();
    let rows = rows_of(&played, 2);
    // globalTargetsNC C49: the game changed nets; C50: nets behind the
    // latest (1 before the change, 0 after), written in turn order.
    let mut behind: Vec<f32> = Vec::new();
    for r in 0..rows.num_rows {
        let g = global(&rows, r);
        assert_eq!(g[49], 1.0, "row {r}");
        behind.push(g[50]);
    }
    assert!(behind.iter().all(|&b| b == 0.0 || b == 1.0));
    assert!(
        behind.windows(2).all(|w| w[0] >= w[1]),
        "rows before the change come first: {behind:?}"
    );
    let change = changes[0];
    assert!(change > start && change <= start + num_turns);
    assert!(behind.contains(&1.0), "rows searched by the first net");

    // Switching off: the check is never made.
    let su = setup("switchNetsMidGame = false\n");
    let mut asked = false;
    let mut check = || {
        asked = true;
        None
    };
    let played = play_game(
        &su.settings,
        &su.params,
        first.evaluator.clone(),
        "first",
        None,
        &mut rng,
        &stop,
        &mut check,
    )
    .unwrap()
    .expect("not stopped");
    assert!(!asked);
    assert!(played.game.changed_nets_turns.is_empty());
}

#[test]
fn compensate_after_policy_init_makes_the_komi_fair() {
    // A komi far from fair (7x7 is about 9 for White) stays without it ...
    let extra = "komiMean = -10.0\nkomiStdev = 0.0\ninitGamesWithPolicy = true\n\
        policyInitAreaProp = 0.05\nmaxMovesPerGame = 2\n";
    let su = setup(&format!("{extra}compensateAfterPolicyInitProb = 0.0\n"));
    let net = net(&su.cfg);
    for seed in 0..3 {
        let played = play(&su, &net, seed);
        assert_eq!(played.game.end_hist.rules().komi, -10.0, "seed {seed}");
    }
    // ... and is made fair for the position after the opening moves with
    // it: an independent noiseless search of that position (more visits
    // than the 8 of compensateKomiVisits) sees White's lead at the chosen
    // komi within a point and a half of zero, where at -10 White was far
    // behind. (Komis two points either side are not reliably further from
    // even at 64 visits on 7x7 area scoring, so only the bound is checked.)
    let su = setup(&format!("{extra}compensateAfterPolicyInitProb = 1.0\n"));
    for seed in 0..3 {
        let played = play(&su, &net, seed);
        let komi = played.game.end_hist.rules().komi;
        let g = &played.game;
        assert_eq!(g.start_hist.rules().komi, komi);
        let lead = |k: f32| {
            let mut hist = g.start_hist.clone();
            hist.set_komi(k);
            let mut params = su.params.clone();
            params.max_visits = 64;
            params.root_noise_enabled = false;
            let state = GameState::new(g.start_board.clone(), hist, g.start_pla);
            let mut search = Search::new(params, net.evaluator.clone(), state, seed);
            search.run(&RunOptions::default()).unwrap();
            search.view().root_values().lead
        };
        let (at, unfair) = (lead(komi), lead(-10.0));
        assert!(
            at.abs() <= 1.5 && unfair < -5.0,
            "seed {seed}: komi {komi}: White's lead {at} (at komi -10: {unfair})"
        );
    }
}

#[test]
fn seki_fork_hack_queues_end_positions_with_redrawn_rules() {
    let su = setup(
        "scoringRules = \"AREA,TERRITORY\"\ntaxRules = \"NONE,SEKI,ALL\"\nmaxMovesPerGame = 120\n\
         maxVisits = 8\nsekiForkHackProb = 1.0\n",
    );
    let net = net(&su.cfg);
    let mut rng = StdRng::seed_from_u64(9);
    let queue = ForkQueue::new();
    let mut played = play(&su, &net, 0);
    let g = &played.game;
    assert!(g.end_hist.is_game_finished() && g.end_hist.is_scored());
    let unowned = |g: &engine::selfplay::FinishedGame| {
        g.start_board
            .locs()
            .any(|l| g.outcome.ownership.get(l) == engine::game::Color::Empty)
    };
    // This game's final ownership covers the board: nothing to fork.
    assert!(!unowned(g), "seed 0 owns every point");
    assert_eq!(maybe_seki_fork(&su.settings, g, &queue, &mut rng), 0);
    // The same game with its points unowned (as a seki leaves them) is
    // forked, twice at most (a replay that ends the game is dropped, as
    // KataGo does).
    played.game.outcome.ownership = engine::game::Area::empty();
    assert!(unowned(&played.game));
    let queued = maybe_seki_fork(&su.settings, &played.game, &queue, &mut rng);
    assert!((1..=2).contains(&queued), "{queued} queued");
    assert_eq!(queue.seki_len(), queued);
    let (start, used_seki) = queue.next_start(&su.settings, &mut rng);
    let start = start.expect("a seki fork");
    assert!(used_seki);
    assert!(queue.is_empty(), "plain forks are a separate queue");
    let n = start.hist.moves().len();
    let all = played.game.end_hist.moves();
    assert!(n < all.len());
    assert_eq!(
        start.hist.moves(),
        &all[..n],
        "a replay of the game's moves"
    );
    assert!(!start.hist.is_game_finished());
    // The fork starts a fork game (KataGo's game type 2).
    let mut rng = StdRng::seed_from_u64(3);
    let stop = AtomicBool::new(false);
    let forked = play_game(
        &su.settings,
        &su.params,
        net.evaluator.clone(),
        "test",
        Some(start),
        &mut rng,
        &stop,
        &mut || None,
    )
    .unwrap()
    .expect("not stopped");
    assert_eq!(forked.game.mode, GameMode::Fork);
    // The forks' scoring and tax rules are drawn afresh from the lists.
    let mut seen = std::collections::HashSet::new();
    for _ in 0..10 {
        maybe_seki_fork(&su.settings, &played.game, &queue, &mut rng);
        while let Some(st) = queue.pop_seki(&mut rng) {
            let r = st.hist.rules();
            seen.insert((format!("{:?}", r.scoring_rule), format!("{:?}", r.tax_rule)));
        }
    }
    assert!(seen.len() >= 4, "rules seen: {seen:?}");
    // With the hack off nothing is queued.
    let su = setup("scoringRules = \"TERRITORY\"\nsekiForkHackProb = 0.0\n");
    let queue = ForkQueue::new();
    assert_eq!(
        maybe_seki_fork(&su.settings, &played.game, &queue, &mut rng),
        0
    );
    assert_eq!(queue.seki_len(), 0);
}
