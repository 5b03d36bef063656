//! GTP-level settings read from the config (KataGo's key names, defaults
//! and ranges) and the initial rules.

use crate::config::{read_fields, Field};
use crate::config::{Config, Enabled};
use crate::game::{GameOptions, Rules, MAX_LEN};
use crate::search::Perspective;

use crate::numfmt::parse_bool;

/// GTP-level settings read from the config (KataGo's key names).
#[derive(Debug, Clone)]
pub struct GtpSettings {
    /// `reportAnalysisWinratesAs`.
    pub perspective: Perspective,
    /// `allowResignation`.
    pub allow_resignation: bool,
    /// `resignThreshold` (win-loss value in [-1, 0]).
    pub resign_threshold: f64,
    /// `resignConsecTurns`.
    pub resign_consec_turns: usize,
    /// `resignMinScoreDifference`.
    pub resign_min_score_difference: f64,
    /// `resignMinMovesPerBoardArea`.
    pub resign_min_moves_per_board_area: f64,
    /// `ponderingEnabled`.
    pub pondering_enabled: bool,
    /// `ignoreGTPAndForceKomi`.
    pub forced_komi: Option<f32>,
    /// `searchFactorWhenWinning`.
    pub search_factor_when_winning: f64,
    /// `searchFactorWhenWinningThreshold`.
    pub search_factor_when_winning_threshold: f64,
    /// `delayMoveScale`.
    pub delay_move_scale: f64,
    /// `delayMoveMax`.
    pub delay_move_max: f64,
    /// `logAllGTPCommunication`: echo commands and answers to stderr.
    pub log_all: bool,
    /// Board size at start (`defaultBoardSize`, else 19).
    pub default_size: (usize, usize),
    /// Rules at start (`rules` or the single rule keys; komi 7.5).
    pub initial_rules: Rules,
    /// `preventCleanupPhase` and `assumeMultipleStartingBlackMovesAreHandicap`
    /// (KataGo's GTP defaults: both true); every new game gets them.
    pub game_options: GameOptions,
    /// `cleanupBeforePass` (auto: under area scoring without friendly
    /// passes, capture dead stones in our pass-alive area before passing).
    pub cleanup_before_pass: Enabled,
    /// `friendlyPass` (auto: with rules that allow friendly passes under
    /// area scoring, pass after the opponent passed once the game is settled).
    pub friendly_pass: Enabled,
}

impl Default for GtpSettings {
    fn default() -> GtpSettings {
        GtpSettings {
            perspective: Perspective::SideToMove,
            allow_resignation: false,
            resign_threshold: -1.0,
            resign_consec_turns: 3,
            resign_min_score_difference: -1e10,
            resign_min_moves_per_board_area: 0.0,
            pondering_enabled: false,
            forced_komi: None,
            search_factor_when_winning: 1.0,
            search_factor_when_winning_threshold: 1.0,
            delay_move_scale: 0.0,
            delay_move_max: 1_000_000.0,
            log_all: false,
            default_size: (19, 19),
            initial_rules: Rules {
                komi: 7.5,
                ..Rules::tromp_taylor()
            },
            game_options: GameOptions::default(),
            cleanup_before_pass: Enabled::Auto,
            friendly_pass: Enabled::Auto,
        }
    }
}

impl GtpSettings {
    /// Reads the GTP keys of a config with KataGo's defaults and ranges.
    pub fn from_config(cfg: &Config) -> Result<GtpSettings, String> {
        let d = GtpSettings::default();
        let e = |err: crate::config::ConfigError| err.to_string();
        let perspective = match cfg.get_string_or("reportAnalysisWinratesAs", "SIDETOMOVE") {
            Ok(s) => Perspective::parse(&s)
                .ok_or_else(|| format!("reportAnalysisWinratesAs: unknown value {s:?}"))?,
            Err(err) => return Err(e(err)),
        };
        let resign_threshold = if cfg.contains("allowResignation") {
            cfg.get_f64_or("resignThreshold", -1.0, -1.0..=0.0)
                .map_err(e)?
        } else {
            -1.0
        };
        let forced_komi = if cfg.contains("ignoreGTPAndForceKomi") {
            Some(
                cfg.get_f64("ignoreGTPAndForceKomi", -400.0..=400.0)
                    .map_err(e)? as f32,
            )
        } else {
            None
        };
        let size = if cfg.contains("defaultBoardSize") {
            let n = cfg
                .get_i64("defaultBoardSize", 2..=MAX_LEN as i64)
                .map_err(e)? as usize;
            (n, n)
        } else if cfg.contains("defaultBoardXSize") || cfg.contains("defaultBoardYSize") {
            (
                cfg.get_i64_or("defaultBoardXSize", 19, 2..=MAX_LEN as i64)
                    .map_err(e)? as usize,
                cfg.get_i64_or("defaultBoardYSize", 19, 2..=MAX_LEN as i64)
                    .map_err(e)? as usize,
            )
        } else {
            d.default_size
        };
        let enabled = |key: &str| -> Result<Enabled, String> {
            if cfg.contains(key) {
                cfg.get_enabled(key).map_err(e)
            } else {
                Ok(Enabled::Auto)
            }
        };
        let cleanup_before_pass = enabled("cleanupBeforePass")?;
        let friendly_pass = enabled("friendlyPass")?;
        if cleanup_before_pass == Enabled::True && friendly_pass == Enabled::True {
            return Err("Cannot specify both cleanupBeforePass = true and friendlyPass = true at the same time".into());
        }
        let mut s = GtpSettings {
            perspective,
            resign_threshold,
            forced_komi,
            default_size: size,
            initial_rules: rules_from_config(cfg)?,
            cleanup_before_pass,
            friendly_pass,
            ..d
        };
        read_fields(cfg, GTP_FIELDS, &mut s).map_err(|err| err.to_string())?;
        Ok(s)
    }
}

/// The configuration reference's rows of the GTP settings tables.
pub fn config_rows() -> Vec<crate::config::Row> {
    crate::config::field_rows(GTP_FIELDS)
}

/// The scalar GTP settings: KataGo's key, its `gtp_example.cfg` default,
/// the range, and the field it fills.
const GTP_FIELDS: &[Field<GtpSettings>] = &[
    Field::bool("allowResignation", false, |s, v| s.allow_resignation = v),
    Field::i64("resignConsecTurns", 3, 1..=100, |s, v| {
        s.resign_consec_turns = v as usize
    }),
    Field::f64("resignMinScoreDifference", -1e10, 0.0..=1000.0, |s, v| {
        s.resign_min_score_difference = v
    }),
    Field::f64("resignMinMovesPerBoardArea", 0.0, 0.0..=1.0, |s, v| {
        s.resign_min_moves_per_board_area = v
    }),
    Field::bool("ponderingEnabled", false, |s, v| s.pondering_enabled = v),
    Field::f64("searchFactorWhenWinning", 1.0, 0.01..=1.0, |s, v| {
        s.search_factor_when_winning = v
    }),
    Field::f64(
        "searchFactorWhenWinningThreshold",
        1.0,
        0.0..=1.0,
        |s, v| s.search_factor_when_winning_threshold = v,
    ),
    Field::f64("delayMoveScale", 0.0, 0.0..=10000.0, |s, v| {
        s.delay_move_scale = v
    }),
    Field::f64("delayMoveMax", 1_000_000.0, 0.0..=1_000_000.0, |s, v| {
        s.delay_move_max = v
    }),
    Field::bool("logAllGTPCommunication", false, |s, v| s.log_all = v),
    Field::bool("preventCleanupPhase", true, |s, v| {
        s.game_options.prevent_cleanup_phase = v
    }),
    Field::bool(
        "assumeMultipleStartingBlackMovesAreHandicap",
        true,
        |s, v| {
            s.game_options
                .assume_multiple_starting_black_moves_are_handicap = v
        },
    ),
];

/// KataGo's `loadSingleRules` without komi (GTP starts at 7.5): the
/// `rules` key, or the single keys `koRule`, `scoringRule`, `taxRule`,
/// `multiStoneSuicideLegal`, `hasButton`, `whiteHandicapBonus`,
/// `friendlyPassOk` over Tromp-Taylor.
fn rules_from_config(cfg: &Config) -> Result<Rules, String> {
    if cfg.contains("rules") {
        let s = cfg.get_string("rules").map_err(|e| e.to_string())?;
        return Rules::parse_without_komi(&s, 7.5).map_err(|e| e.to_string());
    }
    let mut json = Rules::tromp_taylor().to_json(false);
    let keys = [
        ("koRule", "ko"),
        ("scoringRule", "scoring"),
        ("taxRule", "tax"),
        ("multiStoneSuicideLegal", "suicide"),
        ("hasButton", "hasButton"),
        ("whiteHandicapBonus", "whiteHandicapBonus"),
        ("friendlyPassOk", "friendlyPassOk"),
    ];
    for (cfg_key, json_key) in keys {
        if cfg.contains(cfg_key) {
            let v = cfg.get_string(cfg_key).map_err(|e| e.to_string())?;
            json[json_key] = match parse_bool(&v) {
                Some(b) => serde_json::Value::Bool(b),
                None => serde_json::Value::String(v.to_ascii_uppercase()),
            };
        }
    }
    Rules::parse_without_komi(&json.to_string(), 7.5).map_err(|e| e.to_string())
}
