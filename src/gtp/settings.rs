//! GTP-level settings read from the config (KataGo's key names, defaults
//! and ranges) and the initial rules.

use crate::config::{field_rows, read_fields, Config, Enabled, Field, Key, Row};
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
        let perspective = REPORT_AS.read(cfg).map_err(e)?;
        let perspective = Perspective::parse(&perspective)
            .ok_or_else(|| format!("reportAnalysisWinratesAs: unknown value {perspective:?}"))?;
        // KataGo reads the threshold only when resignation is configured.
        let resign_threshold = if cfg.contains("allowResignation") {
            RESIGN_THRESHOLD.read(cfg).map_err(e)?
        } else {
            -1.0
        };
        let forced_komi = FORCED_KOMI.read(cfg).map_err(e)?.map(|k| k as f32);
        let size = match BOARD_SIZE.read(cfg).map_err(e)? {
            Some(n) => (n as usize, n as usize),
            None if BOARD_X_SIZE.is_set(cfg) || BOARD_Y_SIZE.is_set(cfg) => (
                BOARD_X_SIZE.read(cfg).map_err(e)? as usize,
                BOARD_Y_SIZE.read(cfg).map_err(e)? as usize,
            ),
            None => d.default_size,
        };
        let cleanup_before_pass = CLEANUP_BEFORE_PASS.read(cfg).map_err(e)?;
        let friendly_pass = FRIENDLY_PASS.read(cfg).map_err(e)?;
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

/// The GTP keys read on their own (the scalar ones are [`GTP_FIELDS`]).
const REPORT_AS: Key<String> = Key::text("reportAnalysisWinratesAs", "SIDETOMOVE")
    .doc("Whose point of view win rates and scores are reported from: BLACK, WHITE or SIDETOMOVE.");
const RESIGN_THRESHOLD: Key<f64> = Key::real("resignThreshold", -1.0, -1.0..=0.0)
    .doc("Resign below this win-loss value (read only when allowResignation is set).");
const FORCED_KOMI: Key<Option<f64>> = Key::opt_real("ignoreGTPAndForceKomi", -400.0..=400.0)
    .doc("Play with this komi whatever the controller says.");
const BOARD_SIZE: Key<Option<i64>> =
    Key::opt_int("defaultBoardSize", 2..=MAX_LEN as i64).doc("Board size at start (default 19).");
const BOARD_X_SIZE: Key<i64> = Key::int("defaultBoardXSize", 19, 2..=MAX_LEN as i64)
    .doc("Board width at start, without defaultBoardSize.");
const BOARD_Y_SIZE: Key<i64> = Key::int("defaultBoardYSize", 19, 2..=MAX_LEN as i64)
    .doc("Board height at start, without defaultBoardSize.");
const CLEANUP_BEFORE_PASS: Key<Enabled> = Key::enabled("cleanupBeforePass")
    .doc("Capture dead stones in our pass-alive area before passing (auto: under area scoring without friendly passes).");
const FRIENDLY_PASS: Key<Enabled> = Key::enabled("friendlyPass").doc(
    "Pass after the opponent passed once the game is settled (auto: where the rules allow it).",
);

/// The rule keys: `rules` (a name or JSON) or the single keys over
/// Tromp-Taylor, each with its field in the rules' JSON.
const RULES: Key<Option<String>> = Key::parsed(
    "rules",
    "rules (a name such as japanese, or JSON)",
    "tromp-taylor",
)
.doc("The rules at start (komi 7.5); the single rule keys change one part.");
const SINGLE_RULE_KEYS: [(Key<Option<String>>, &str); 7] = [
    (
        Key::parsed("koRule", "SIMPLE, POSITIONAL or SITUATIONAL", "from rules"),
        "ko",
    ),
    (
        Key::parsed("scoringRule", "AREA or TERRITORY", "from rules"),
        "scoring",
    ),
    (
        Key::parsed("taxRule", "NONE, SEKI or ALL", "from rules"),
        "tax",
    ),
    (
        Key::parsed("multiStoneSuicideLegal", "boolean", "from rules"),
        "suicide",
    ),
    (
        Key::parsed("hasButton", "boolean", "from rules"),
        "hasButton",
    ),
    (
        Key::parsed("whiteHandicapBonus", "0, N or N-1", "from rules"),
        "whiteHandicapBonus",
    ),
    (
        Key::parsed("friendlyPassOk", "boolean", "from rules"),
        "friendlyPassOk",
    ),
];

/// `numSearchThreads` as `engine gtp` reads it first (default: the net's,
/// for the machine); the search parameters' table lists the key.
pub(crate) const SEARCH_THREADS: Key<Option<i64>> = Key::opt_int("numSearchThreads", 1..=1 << 20);
/// `antiMirror` as genmove reads it when `genmoveAntiMirror` is not set
/// (on by default there; the search parameters' table lists the key).
pub(crate) const ANTI_MIRROR: Key<Option<bool>> = Key::opt_flag("antiMirror");
/// `genmoveAntiMirror`.
pub(crate) const GENMOVE_ANTI_MIRROR: Key<Option<bool>> = Key::opt_flag("genmoveAntiMirror")
    .doc("The anti-mirror defence for genmove (default: antiMirror when set, else on); analysis takes antiMirror.");
/// `analysisWideRootNoise` (KataGo's default).
pub(crate) const ANALYSIS_WIDE_ROOT_NOISE: Key<f64> =
    Key::real("analysisWideRootNoise", 0.04, 0.0..=5.0).doc(
        "wideRootNoise of the analysis commands (kata-analyze, lz-analyze), apart from genmove's.",
    );
/// `analysisIgnorePreRootHistory`.
pub(crate) const ANALYSIS_IGNORE_PRE_ROOT_HISTORY: Key<bool> =
    Key::flag("analysisIgnorePreRootHistory", true)
        .doc("ignorePreRootHistory of the analysis commands, apart from genmove's.");
/// `analysisPVLen`.
pub(crate) const ANALYSIS_PV_LEN: Key<i64> =
    Key::int("analysisPVLen", 15, 1..=1000).doc("Most moves of each principal variation.");
/// `logSearchInfo`.
pub(crate) const LOG_SEARCH_INFO: Key<bool> =
    Key::flag("logSearchInfo", false).doc("Log a summary of each search.");
/// `logSearchInfoForChosenMove`.
pub(crate) const LOG_SEARCH_INFO_FOR_CHOSEN_MOVE: Key<bool> =
    Key::flag("logSearchInfoForChosenMove", false).doc(
        "The search summary names the chosen move's line even when it is not among the top moves.",
    );

/// The configuration reference's rows of the GTP settings tables.
pub fn config_rows() -> Vec<Row> {
    let mut rows = field_rows(GTP_FIELDS);
    rows.extend(
        [
            GENMOVE_ANTI_MIRROR.setting(),
            ANALYSIS_WIDE_ROOT_NOISE.setting(),
            ANALYSIS_IGNORE_PRE_ROOT_HISTORY.setting(),
            ANALYSIS_PV_LEN.setting(),
            LOG_SEARCH_INFO.setting(),
            LOG_SEARCH_INFO_FOR_CHOSEN_MOVE.setting(),
        ]
        .iter()
        .map(|s| s.row()),
    );
    rows.extend(
        [
            REPORT_AS.setting(),
            RESIGN_THRESHOLD.setting(),
            FORCED_KOMI.setting(),
            BOARD_SIZE.setting(),
            BOARD_X_SIZE.setting(),
            BOARD_Y_SIZE.setting(),
            CLEANUP_BEFORE_PASS.setting(),
            FRIENDLY_PASS.setting(),
            RULES.setting(),
        ]
        .iter()
        .map(|s| s.row()),
    );
    rows.extend(SINGLE_RULE_KEYS.iter().map(|(k, _)| k.setting().row()));
    rows
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
    if let Some(s) = RULES.read(cfg).map_err(|e| e.to_string())? {
        return Rules::parse_without_komi(&s, 7.5).map_err(|e| e.to_string());
    }
    let mut json = Rules::tromp_taylor().to_json(false);
    for (key, json_key) in &SINGLE_RULE_KEYS {
        if let Some(v) = key.read(cfg).map_err(|e| e.to_string())? {
            json[*json_key] = match parse_bool(&v) {
                Some(b) => serde_json::Value::Bool(b),
                None => serde_json::Value::String(v.to_ascii_uppercase()),
            };
        }
    }
    Rules::parse_without_komi(&json.to_string(), 7.5).map_err(|e| e.to_string())
}
