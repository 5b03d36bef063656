//! Config files: TOML and KataGo `.cfg` text, `-override-config` strings,
//! and the typed readers behind `engine gtp` (GTP settings, time and search
//! parameters) on whatever the file held.
#![no_main]

use engine::config::Config;
use engine::gtp::GtpSettings;
use engine::search::{SearchParams, SetupFor};
use engine::timecontrol::TimeParams;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let configs = [
        Config::from_toml_str(&text, "fuzz.toml"),
        Config::from_cfg_str(&text, "fuzz.cfg"),
    ];
    for cfg in configs.into_iter().flatten() {
        let _ = GtpSettings::from_config(&cfg);
        let _ = TimeParams::from_config(&cfg);
        let _ = engine::setup::cpu_threads(&cfg, 2);
        let settings = engine::setup::search_settings(&cfg);
        for setup in [SetupFor::Gtp, SetupFor::Analysis] {
            let _ =
                SearchParams::from_overrides(setup, settings.iter().map(|(k, v)| (k.as_str(), v)));
        }
        let _ = cfg.to_json_value();
        let _ = cfg.unused_key_warnings();
    }
    let mut cfg = Config::from_toml_str("", "empty.toml").expect("empty config");
    if cfg.apply_overrides(&text).is_ok() {
        let _ = GtpSettings::from_config(&cfg);
    }
});
