use super::*;
use serde::Deserialize;

const TOML_TEXT: &str = r#"
# Search
maxVisits = 500
numSearchThreads = 2
cpuctExploration = 1.1
maxTime = 1e6

[rules]
rules = "tromp-taylor"

[bot]
allowResignation = true
reportAnalysisWinratesAs = "SIDETOMOVE"
cleanupBeforePass = "auto"
bSizes = [9, 13, 19]
bSizeRelProbs = "1, 2,3"
logDir = "logs"
"#;

fn toml_cfg() -> Config {
    Config::from_toml_str(TOML_TEXT, "t.toml").unwrap()
}

#[test]
fn typed_getters_on_toml() {
    let cfg = toml_cfg();
    assert_eq!(cfg.get_i64("maxVisits", 1..=1_000_000).unwrap(), 500);
    assert_eq!(cfg.get_f64("cpuctExploration", 0.0..=10.0).unwrap(), 1.1);
    // Integers are numbers; integral floats are integers.
    assert_eq!(cfg.get_f64("maxVisits", 0.0..=1e9).unwrap(), 500.0);
    assert_eq!(cfg.get_i64("maxTime", 0..=i64::MAX).unwrap(), 1_000_000);
    assert!(cfg.get_bool("allowResignation").unwrap());
    assert_eq!(cfg.get_string("rules").unwrap(), "tromp-taylor");
    assert_eq!(
        cfg.get_enum(
            "reportAnalysisWinratesAs",
            &["BLACK", "WHITE", "SIDETOMOVE"]
        )
        .unwrap(),
        "SIDETOMOVE"
    );
    assert_eq!(cfg.get_enabled("cleanupBeforePass").unwrap(), Enabled::Auto);
    assert_eq!(cfg.get_i64s("bSizes", 2..=19).unwrap(), vec![9, 13, 19]);
    assert_eq!(
        cfg.get_f64s("bSizeRelProbs", 0.0..=10.0).unwrap(),
        vec![1.0, 2.0, 3.0]
    );
    assert_eq!(cfg.get_strings("logDir").unwrap(), vec!["logs".to_string()]);
}

#[test]
fn defaults_when_absent() {
    let cfg = toml_cfg();
    assert_eq!(cfg.get_i64_or("maxPlayouts", 7, 1..=10).unwrap(), 7);
    assert_eq!(cfg.get_f64_or("lagBuffer", 1.0, 0.0..=10.0).unwrap(), 1.0);
    assert!(!cfg.get_bool_or("ponderingEnabled", false).unwrap());
    assert_eq!(cfg.get_string_or("logFile", "x.log").unwrap(), "x.log");
    // A present key is still checked.
    assert!(cfg.get_i64_or("maxVisits", 7, 1..=10).is_err());
}

#[test]
fn errors_name_key_file_and_line() {
    let cfg = toml_cfg();
    let e = cfg.get_i64("maxVisits", 1..=100).unwrap_err();
    assert!(matches!(e, ConfigError::OutOfRange { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("maxVisits") && msg.contains("t.toml") && msg.contains("line 3"));
    assert!(msg.contains("1 to 100"), "{msg}");

    let e = cfg.get_bool("rules").unwrap_err();
    assert!(matches!(e, ConfigError::WrongType { .. }), "{e:?}");
    assert!(e.to_string().contains("'tromp-taylor'"), "{e}");

    let e = cfg.get_i64("cpuctExploration", 0..=10).unwrap_err();
    assert!(matches!(e, ConfigError::WrongType { .. }), "{e:?}");

    let e = cfg.get_string("maxVisits").unwrap_err();
    assert!(matches!(e, ConfigError::WrongType { .. }), "{e:?}");

    let e = cfg.get_f64("nope", 0.0..=1.0).unwrap_err();
    assert!(matches!(e, ConfigError::Missing { .. }), "{e:?}");
    assert!(e.to_string().contains("'nope'") && e.to_string().contains("t.toml"));

    let e = cfg.get_enum("rules", &["japanese", "chinese"]).unwrap_err();
    assert!(e.to_string().contains("japanese|chinese"), "{e}");
    let e = cfg.get_i64s("bSizes", 9..=13).unwrap_err();
    assert!(e.to_string().contains("9 to 13"), "{e}");
    let e = cfg.get_enabled("rules").unwrap_err();
    assert!(matches!(e, ConfigError::WrongType { .. }), "{e:?}");
}

#[test]
fn nan_is_out_of_range() {
    let cfg = Config::from_cfg_str("x = nan\n", "n.cfg").unwrap();
    assert!(matches!(
        cfg.get_f64("x", f64::NEG_INFINITY..=f64::INFINITY),
        Err(ConfigError::OutOfRange { .. })
    ));
}

#[test]
fn get_parsed_uses_from_str() {
    let cfg = toml_cfg();
    assert_eq!(
        cfg.get_parsed::<u32>("numSearchThreads", "a count")
            .unwrap(),
        2
    );
    let e = cfg.get_parsed::<u32>("rules", "a count").unwrap_err();
    assert!(matches!(e, ConfigError::Invalid { .. }), "{e:?}");
}

#[test]
fn kata_cfg_format_same_getters() {
    let text = "maxVisits = 500\nallowResignation = True\nrules = japanese # comment\nlogDir = 2024\nbSizes = 9,13,19\nfriendlyPass = AUTO\n";
    let cfg = Config::from_cfg_str(text, "k.cfg").unwrap();
    assert_eq!(cfg.get_i64("maxVisits", 1..=1000).unwrap(), 500);
    assert!(cfg.get_bool("allowResignation").unwrap());
    assert_eq!(cfg.get_string("rules").unwrap(), "japanese");
    // Looks like a number, read as a string: the text as written.
    assert_eq!(cfg.get_string("logDir").unwrap(), "2024");
    assert_eq!(cfg.get_i64s("bSizes", 1..=19).unwrap(), vec![9, 13, 19]);
    assert_eq!(cfg.get_enabled("friendlyPass").unwrap(), Enabled::Auto);
    let e = cfg.get_i64("maxVisits", 1..=10).unwrap_err();
    assert!(e.to_string().contains("line 1"), "{e}");
}

#[test]
fn load_picks_format_by_extension_and_reports_missing_file() {
    let dir = std::env::temp_dir().join(format!("engine-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = dir.join("a.toml");
    std::fs::write(&t, "rules = \"japanese\"\n").unwrap();
    let c = dir.join("a.cfg");
    std::fs::write(&c, "rules = japanese\n").unwrap();
    assert_eq!(
        Config::load(&t).unwrap().get_string("rules").unwrap(),
        "japanese"
    );
    assert_eq!(
        Config::load(&c).unwrap().get_string("rules").unwrap(),
        "japanese"
    );
    // The .cfg text is not TOML: a bare word is a TOML syntax error.
    std::fs::write(&t, "rules = japanese\n").unwrap();
    assert!(matches!(
        Config::load(&t),
        Err(ConfigError::Syntax { line: 1, .. })
    ));
    let e = Config::load(dir.join("missing.toml")).unwrap_err();
    assert!(matches!(e, ConfigError::Io { .. }), "{e:?}");
    assert!(e.to_string().contains("missing.toml"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn overrides_replace_delete_and_respect_rule_key_sets() {
    let mut cfg = Config::from_cfg_str(
        "maxVisits = 10\nkoRule = SIMPLE\nscoringRule = AREA\nlogFile = a.log\n",
        "o.cfg",
    )
    .unwrap();
    cfg.apply_overrides(
        "maxVisits=20, rules=japanese, logFile=, numSearchThreads = 4, logDir=2024",
    )
    .unwrap();
    assert_eq!(cfg.get_i64("maxVisits", 1..=100).unwrap(), 20);
    assert!(!cfg.contains("koRule") && !cfg.contains("scoringRule"));
    assert!(!cfg.contains("logFile"));
    assert_eq!(cfg.get_string("rules").unwrap(), "japanese");
    assert_eq!(cfg.get_string("logDir").unwrap(), "2024");
    let e = cfg.get_i64("numSearchThreads", 1..=2).unwrap_err();
    assert!(e.to_string().contains("-override-config"), "{e}");
    assert!(cfg.file_name().contains("o.cfg"));

    // And the reverse: a rule part drops `rules`.
    cfg.apply_overrides("koRule=POSITIONAL").unwrap();
    assert!(!cfg.contains("rules"));
    assert!(cfg.apply_overrides("novalue").is_err());
}

#[test]
fn unused_and_unknown_keys() {
    let cfg = Config::from_toml_str(
        "maxVisits = 1\nmaxVisitz = 2\ncpuctExploration0 = 1.0\n",
        "u.toml",
    )
    .unwrap();
    assert_eq!(cfg.unused_keys().len(), 3);
    cfg.get_i64("maxVisits", 0..=10).unwrap();
    cfg.mark_used_with_prefix("cpuct");
    assert_eq!(cfg.unused_keys(), vec!["maxVisitz".to_string()]);
    assert_eq!(cfg.unknown_keys(), vec!["maxVisitz".to_string()]);
    cfg.mark_used("maxVisitz");
    assert!(cfg.unused_keys().is_empty());
    // A clone keeps the record of used keys.
    let cfg2 = cfg.clone();
    assert!(cfg2.unused_keys().is_empty());
}

#[test]
fn keys_a_copy_read_count_as_used() {
    let cfg = Config::from_toml_str("maxVisits = 1\nrules = \"chinese\"\n", "c.toml").unwrap();
    let mut copy = cfg.clone();
    copy.set("nnPrecision", toml::Value::String("fp32".into()));
    copy.get_i64("maxVisits", 0..=10).unwrap();
    copy.get_string("nnPrecision").unwrap();
    cfg.mark_used_as_in(&copy);
    // What the copy read counts; what only the copy has does not appear.
    assert_eq!(cfg.unused_keys(), vec!["rules".to_string()]);
}

#[derive(Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
struct Params {
    max_visits: i64,
    cpuct_exploration: f64,
    max_time: f64,
    num_search_threads: usize,
}

#[test]
fn deserialize_fills_struct_and_marks_fields_used() {
    let cfg = toml_cfg();
    let p: Params = cfg.deserialize().unwrap();
    assert_eq!(
        p,
        Params {
            max_visits: 500,
            cpuct_exploration: 1.1,
            max_time: 1e6,
            num_search_threads: 2,
        }
    );
    let unused = cfg.unused_keys();
    assert!(!unused.contains(&"maxVisits".to_string()));
    assert!(unused.contains(&"rules".to_string()));

    let json = cfg.to_json_value();
    assert_eq!(json["maxTime"], serde_json::json!(1000000));
    assert_eq!(json["bSizes"], serde_json::json!([9, 13, 19]));
}

#[test]
fn deserialize_error_names_the_key() {
    let cfg = Config::from_cfg_str("maxVisits = lots\nrules = x\n", "d.cfg").unwrap();
    let e = cfg.deserialize::<Params>().unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("maxVisits") && msg.contains("line 1"), "{msg}");
}
