//! The example configs in `configs/` parse, use only keys KataGo knows
//! (commented-out examples included, so the docs carry no typos), and give
//! valid values for the keys the engine reads.

use std::path::PathBuf;

use engine::config::{is_known_key, Config};
use engine::timecontrol::TimeParams;

fn config_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("configs")
        .join(name)
}

/// Keys of `key = value` lines, commented out or not.
fn all_mentioned_keys(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.trim_start().trim_start_matches('#').trim_start())
        .filter_map(|l| {
            let (key, _) = l.split_once('=')?;
            let key = key.trim();
            let ok = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric());
            ok.then(|| key.to_string())
        })
        .collect()
}

fn check(name: &str) -> Config {
    let path = config_path(name);
    let cfg = Config::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(cfg.keys().count() > 5, "{name} has too few keys");
    assert_eq!(
        cfg.unknown_keys(),
        Vec::<String>::new(),
        "unknown keys in {name}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let mentioned = all_mentioned_keys(&text);
    assert!(mentioned.len() > cfg.keys().count());
    let unknown: Vec<_> = mentioned.iter().filter(|k| !is_known_key(k)).collect();
    assert!(
        unknown.is_empty(),
        "{name} mentions unknown keys {unknown:?}"
    );
    // Every commented-out example, switched on, must still be valid TOML.
    let uncommented: String = text
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if all_mentioned_keys(rest).len() == 1 && !rest.contains("->") => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if let Err(e) = Config::from_toml_str(&uncommented, name) {
        // Alternatives (rules vs koRule...) are fine; syntax errors are not.
        assert!(
            !matches!(e, engine::config::ConfigError::Syntax { .. }),
            "{name} with examples switched on: {e}"
        );
    }
    cfg
}

#[test]
fn gtp_example_config() {
    let cfg = check("gtp.toml");
    assert_eq!(cfg.get_string("rules").unwrap(), "tromp-taylor");
    assert!(cfg.get_i64("maxVisits", 1..=i64::MAX).unwrap() > 0);
    // Unset: one search thread per core (engine::setup::default_search_threads).
    assert!(!cfg.contains("numSearchThreads"));
    cfg.get_enum(
        "reportAnalysisWinratesAs",
        &["BLACK", "WHITE", "SIDETOMOVE"],
    )
    .unwrap();
    cfg.get_f64("resignThreshold", -1.0..=0.0).unwrap();
    cfg.get_i64("resignConsecTurns", 1..=100).unwrap();
    cfg.get_bool("allowResignation").unwrap();
    cfg.get_bool("ponderingEnabled").unwrap();
    let tp = TimeParams::from_config(&cfg).unwrap();
    assert_eq!(tp.lag_buffer, 1.0);
}

#[test]
fn analysis_example_config() {
    let cfg = check("analysis.toml");
    // Threads, batch and cache come from the machine unless set.
    for key in [
        "numAnalysisThreads",
        "nnMaxBatchSize",
        "nnCacheSizePowerOfTwo",
    ] {
        assert!(!cfg.contains(key), "{key}");
    }
    cfg.get_i64("numSearchThreadsPerAnalysisThread", 1..=16384)
        .unwrap();
    cfg.get_bool("nnRandomize").unwrap();
}

#[test]
fn serve_example_config_is_the_analysis_config_and_the_servers_keys() {
    let cfg = check("serve.toml");
    let settings = engine::analysis::serve::ServeSettings::from_config(&cfg).unwrap();
    // The example states the defaults.
    assert_eq!(settings, engine::analysis::serve::ServeSettings::default());
    // Every analysis key of configs/analysis.toml is there, with its value.
    let analysis = check("analysis.toml");
    for key in analysis.keys() {
        assert_eq!(
            cfg.to_json_value()[key],
            analysis.to_json_value()[key],
            "{key}"
        );
    }
}

#[test]
fn gtp_human5k_config() {
    let cfg = check("gtp_human5k.toml");
    assert_eq!(cfg.get_string("humanSLProfile").unwrap(), "preaz_5k");
    // Its search settings are valid as a whole.
    let settings = engine::setup::search_settings(&cfg);
    let p = engine::search::SearchParams::from_overrides(
        engine::search::SetupFor::Gtp,
        settings.iter().map(|(k, v)| (k.as_str(), v)),
    )
    .unwrap();
    assert_eq!(p.human_sl_chosen_move_prop, 1.0);
    assert!(p.human_sl_chosen_move_ignore_pass);
    assert!(p.human_sl_profile.meta.is_some());
    assert_eq!(p.max_visits, 40);
}

#[test]
fn gtp_human9d_search_config() {
    let cfg = check("gtp_human9d_search.toml");
    let settings = engine::setup::search_settings(&cfg);
    let p = engine::search::SearchParams::from_overrides(
        engine::search::SetupFor::Gtp,
        settings.iter().map(|(k, v)| (k.as_str(), v)),
    )
    .unwrap();
    // KataGo's gtp_human9d_search_example.cfg values.
    assert_eq!(cfg.get_string("humanSLProfile").unwrap(), "preaz_9d");
    assert_eq!(p.max_visits, 400);
    assert_eq!(p.human_sl_root_explore_prob_weightless, 0.8);
    assert_eq!(p.human_sl_root_explore_prob_weightful, 0.0);
    assert_eq!(p.human_sl_chosen_move_pikl_lambda, 0.08);
    assert_eq!(p.human_sl_cpuct_exploration, 0.5);
    assert_eq!(p.human_sl_cpuct_permanent, 2.0);
    assert_eq!(p.chosen_move_temperature, 0.25);
    assert_eq!(p.static_score_utility_factor, 0.5);
}

#[test]
fn katago_own_example_configs_load() {
    // Users point us at their KataGo configs: the .cfg format must load.
    let text = "logDir = gtp_logs\nrules = japanese  # comment\nmaxVisits = 500\nallowResignation = true\nresignThreshold = -0.90\n";
    let cfg = Config::from_cfg_str(text, "gtp_example.cfg").unwrap();
    assert_eq!(cfg.get_string("rules").unwrap(), "japanese");
    assert_eq!(cfg.get_f64("resignThreshold", -1.0..=0.0).unwrap(), -0.9);
    assert!(cfg.unknown_keys().is_empty());
}

#[test]
#[cfg(feature = "torch")]
fn learn_toml_is_the_learners_keys_with_files_that_exist() {
    use engine::learn::settings::{resolve, LearnSettings};
    let path = config_path("learn.toml");
    let cfg = Config::load(&path).expect("learn.toml parses");
    let s = LearnSettings::from_config(&cfg).expect("learn.toml: only the learner's keys, valid");
    // Every key is set in the file, so the file documents them all.
    let text = std::fs::read_to_string(&path).unwrap();
    let written: Vec<String> = all_mentioned_keys(&text);
    let defaults = serde_json::to_value(LearnSettings::default()).unwrap();
    for key in defaults.as_object().unwrap().keys() {
        assert!(written.contains(key), "learn.toml does not document {key}");
    }
    for file in [&s.selfplay_config, &s.gatekeeper_config] {
        let p = resolve(Some(&path), file);
        assert!(p.is_file(), "{} does not exist", p.display());
        Config::load(&p).expect("its config parses");
    }
}

/// The configs that grow the project's net (`models/grow-run/learn.toml`,
/// generations 1 to 258, and `models/grow-run/from258/learn.toml`, from
/// 259 on): the learner's keys, each one's checkpoint and configs there,
/// and self-play overrides (a quoted list of sizes among them) that
/// self-play takes.
#[test]
#[cfg(feature = "torch")]
fn the_grow_run_configs_name_files_that_exist() {
    use engine::learn::settings::{resolve, LearnSettings};
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for path in [
        root.join("models/grow-run/learn.toml"),
        root.join("models/grow-run/from258/learn.toml"),
    ] {
        let cfg = Config::load(&path).expect("a grow-run learn.toml parses");
        let s = LearnSettings::from_config(&cfg).expect("only the learner's keys, valid");
        let checkpoint = s
            .initial_checkpoint(Some(&path))
            .expect("an initial checkpoint");
        assert!(
            checkpoint.is_file(),
            "{}: {} does not exist",
            path.display(),
            checkpoint.display()
        );
        for file in [&s.selfplay_config, &s.gatekeeper_config] {
            assert!(
                resolve(Some(&path), file).is_file(),
                "{}: {file} does not exist",
                path.display()
            );
        }
        let mut selfplay = Config::load(resolve(Some(&path), &s.selfplay_config)).unwrap();
        selfplay
            .apply_overrides(&s.selfplay_overrides)
            .expect("the overrides parse");
        // dataBoardLen as the learner sets it (posLen).
        selfplay
            .apply_overrides(&format!("dataBoardLen={}", s.pos_len))
            .unwrap();
        let (play, _) = engine::selfplay::PlaySettings::from_config(&selfplay).expect("self-play");
        // Squares 3 to 1, and selfplay.toml's 10% of rectangles built from them.
        assert_eq!(play.board_sizes, vec![(9, 9), (9, 13), (13, 9), (13, 13)]);
        let p = &play.board_size_rel_probs;
        assert!((p[0] / p[3] - 0.73125 / 0.23125).abs() < 1e-9, "{p:?}");
        assert!((p[1] - p[2]).abs() < 1e-12 && p[1] / p[3] < 0.1, "{p:?}");
    }
}
