//! Search-dependent self-play targets: one real game with the g170 net on
//! a 7x7 board, then the invariants KataGo's rows hold: policy targets are
//! non-negative play selection values (scaled so the top one is at least
//! 10) on visited children only, per-move visit counts sum to the root's
//! visits less one, value targets are probabilities, weights are finite
//! and non-negative, and the written rows are well formed (score
//! distribution sums to 100, data version 3, td value targets sum to 1).

use std::sync::atomic::AtomicBool;

use engine::config::Config;
use engine::data::TrainingRows;
use engine::nn::FeatureEncoder;
use engine::search::{SearchParams, SetupFor};
use engine::selfplay::{play_game, write_game_rows, PlaySettings};
use rand::SeedableRng;

#[test]
fn one_game_has_consistent_search_targets_and_rows() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    let cfg = Config::from_toml_str(
        "maxVisits = 24\ncheapSearchProb = 0.5\ncheapSearchVisits = 8\nreduceVisits = true\n\
         reducedVisitsMin = 8\nbSizes = \"7\"\nkoRules = \"SIMPLE,POSITIONAL\"\n\
         scoringRules = \"AREA,TERRITORY\"\ntaxRules = \"NONE,SEKI,ALL\"\n\
         policySurpriseDataWeight = 0.5\nvalueSurpriseDataWeight = 0.1\n\
         initGamesWithPolicy = true\npolicyInitAreaProp = 0.04\nkomiStdev = 1.0\n\
         maxMovesPerGame = 150\nkomiAuto = true\ncompensateKomiVisits = 8\nrootNoiseEnabled = true\nchosenMoveTemperature = 0.15\n\
         numSearchThreads = 1\nnnRandomize = true\n",
        "test.toml",
    )
    .unwrap();
    let (settings, _) = PlaySettings::from_config(&cfg).unwrap();
    let net = engine::setup::load_network(&model, &cfg, 8).unwrap();
    let overrides = engine::setup::search_settings(&cfg);
    let params = SearchParams::from_overrides(
        SetupFor::Other,
        overrides.iter().map(|(k, v)| (k.as_str(), v)),
    )
    .unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(12);
    let stop = AtomicBool::new(false);
    let played = play_game(
        &settings,
        &params,
        net.evaluator.clone(),
        "test",
        None,
        &mut rng,
        &stop,
        &mut || None,
    )
    .unwrap()
    .expect("not stopped");
    let game = &played.game;
    assert!(!game.turns.is_empty());
    assert!(game.end_hist.is_game_finished() || game.hit_turn_limit);

    let mut full_searches = 0;
    for (i, t) in game.turns.iter().enumerate() {
        assert!(
            t.target_weight >= 0.0 && t.target_weight.is_finite(),
            "turn {i}: weight {}",
            t.target_weight
        );
        let pt = t.policy_target.as_ref().expect("policy target recorded");
        let child_visits: i64 = t.q_value_targets.iter().map(|q| q.visits).sum();
        assert_eq!(
            child_visits,
            t.unreduced_num_visits - 1,
            "turn {i}: children's visits are the root's less one"
        );
        if t.unreduced_num_visits > 1 {
            let max = pt.iter().map(|m| m.target).max().unwrap_or(0);
            assert!(
                max >= 10,
                "turn {i}: top target {max} scaled to at least 10"
            );
            assert!(
                pt.iter().all(|m| m.target >= 0),
                "turn {i}: negative target"
            );
            let sum: i64 = pt.iter().map(|m| i64::from(m.target)).sum();
            if t.unreduced_num_visits >= 20 {
                full_searches += 1;
                // Targets are play selection values (playout weights after
                // pruning, which can exceed visit counts under KataGo's
                // uncertainty weighting), so only visited children get any.
                for m in pt.iter().filter(|m| m.target > 0) {
                    assert!(
                        t.q_value_targets
                            .iter()
                            .any(|q| q.mv == m.mv && q.visits > 0),
                        "turn {i}: target on an unvisited move"
                    );
                }
                assert!(sum > 0);
            }
        }
        for q in &t.q_value_targets {
            assert!(
                (-1.0..=1.0).contains(&q.win_loss),
                "turn {i}: win-loss {}",
                q.win_loss
            );
        }
        let v = t.white_value_targets;
        assert!(
            (v.win + v.loss + v.no_result - 1.0).abs() < 1e-4,
            "turn {i}: {v:?}"
        );
    }
    assert!(full_searches > 0, "some full searches");

    let mut rows = TrainingRows::new(19);
    let mut encoder = FeatureEncoder::new();
    let n = write_game_rows(game, &mut rows, &mut encoder, &mut rng).unwrap();
    assert_eq!(n, rows.num_rows);
    for r in 0..n {
        let g = &rows.global_targets_nc[r * 80..(r + 1) * 80];
        assert_eq!(g[63], 3.0);
        assert_eq!(g[26], 1.0);
        for c in [0, 4, 8, 12, 16] {
            let p = g[c] + g[c + 1] + g[c + 2];
            assert!(
                (p - 1.0).abs() < 1e-4,
                "row {r}: value channels {c}.. sum to {p}"
            );
        }
        let sd: i32 = rows.score_distr_n[r * 842..(r + 1) * 842]
            .iter()
            .map(|&x| i32::from(x))
            .sum();
        assert_eq!(sd, 100, "row {r}: score distribution");
        let policy: i64 = rows.policy_targets_nc_move[r * 724..r * 724 + 362]
            .iter()
            .map(|&x| i64::from(x))
            .sum();
        assert!(policy > 0, "row {r}: empty policy target");
    }
    // The rows round-trip through the data module's npz writer and reader.
    let bytes = engine::data::encode_npz(&rows, &Default::default()).unwrap();
    assert_eq!(
        engine::data::read_npz_bytes(&bytes, "rows.npz").unwrap(),
        rows
    );
    // One SGF line naming the game hash.
    assert!(!played.sgf.contains('\n'));
    assert!(played
        .sgf
        .contains(&format!("gameHash={:032X}", game.game_hash.0)));
}
