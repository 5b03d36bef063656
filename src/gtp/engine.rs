//! The GTP engine: its state (game, clocks, settings, the bot) and the
//! commands that do not search. The search commands are in
//! [`super::search_cmds`]; the read loop in [`super::session`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::config::{Config, Enabled};
use crate::game::sgf::{parse_collection, write_sgf, GameRecord};
use crate::game::{
    Board, ByPlayer, Color, GameOptions, Loc, Move, Player, Rules, ScoringRule, MAX_LEN,
};

use super::bot::GtpBot;
use super::numfmt::{format_g, parse_bool, parse_finite_f64, parse_i64};
use super::position::{fixed_handicap_points, GtpGame};
use super::protocol::{CommandLine, Output};
use crate::search::Perspective;
use crate::timecontrol::{self as time, TimeControls, KATA_TIME_SETTINGS_LIST};

/// Every command the engine answers, in KataGo's order (`list_commands`).
pub const KNOWN_COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "rectangular_boardsize",
    "clear_board",
    "set_position",
    "komi",
    "get_komi",
    "play",
    "undo",
    "kata-get-rules",
    "kata-set-rule",
    "kata-set-rules",
    "kata-get-param",
    "kata-set-param",
    "kata-get-params",
    "kata-set-params",
    "kata-list-params",
    "kgs-rules",
    "genmove",
    "kata-search",
    "kata-search_cancellable",
    "genmove_debug",
    "kata-search_debug",
    "clear_cache",
    "showboard",
    "fixed_handicap",
    "place_free_handicap",
    "set_free_handicap",
    "time_settings",
    "kgs-time_settings",
    "time_left",
    "kata-list_time_settings",
    "kata-time_settings",
    "final_score",
    "final_status_list",
    "loadsgf",
    "printsgf",
    "genmove_analyze",
    "lz-genmove_analyze",
    "kata-genmove_analyze",
    "kata-search_analyze",
    "kata-search_analyze_cancellable",
    "analyze",
    "lz-analyze",
    "kata-analyze",
    "kata-raw-nn",
    "cputime",
    "gomill-cpu_time",
    "stop",
];

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
        let allow_resignation = cfg.get_bool_or("allowResignation", false).map_err(e)?;
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
        Ok(GtpSettings {
            perspective,
            allow_resignation,
            resign_threshold,
            resign_consec_turns: cfg.get_i64_or("resignConsecTurns", 3, 1..=100).map_err(e)?
                as usize,
            resign_min_score_difference: cfg
                .get_f64_or("resignMinScoreDifference", -1e10, 0.0..=1000.0)
                .map_err(e)?,
            resign_min_moves_per_board_area: cfg
                .get_f64_or("resignMinMovesPerBoardArea", 0.0, 0.0..=1.0)
                .map_err(e)?,
            pondering_enabled: cfg.get_bool_or("ponderingEnabled", false).map_err(e)?,
            forced_komi,
            search_factor_when_winning: cfg
                .get_f64_or("searchFactorWhenWinning", 1.0, 0.01..=1.0)
                .map_err(e)?,
            search_factor_when_winning_threshold: cfg
                .get_f64_or("searchFactorWhenWinningThreshold", 1.0, 0.0..=1.0)
                .map_err(e)?,
            delay_move_scale: cfg
                .get_f64_or("delayMoveScale", 0.0, 0.0..=10000.0)
                .map_err(e)?,
            delay_move_max: cfg
                .get_f64_or("delayMoveMax", 1_000_000.0, 0.0..=1_000_000.0)
                .map_err(e)?,
            log_all: cfg
                .get_bool_or("logAllGTPCommunication", false)
                .map_err(e)?,
            default_size: size,
            initial_rules: rules_from_config(cfg)?,
            game_options: GameOptions {
                prevent_cleanup_phase: cfg.get_bool_or("preventCleanupPhase", true).map_err(e)?,
                assume_multiple_starting_black_moves_are_handicap: cfg
                    .get_bool_or("assumeMultipleStartingBlackMovesAreHandicap", true)
                    .map_err(e)?,
            },
            cleanup_before_pass,
            friendly_pass,
        })
    }
}

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

/// What handling a command did.
pub enum Handled {
    /// Answer with `=` and this text.
    Ok(String),
    /// Answer with `?` and this text.
    Err(String),
    /// The command wrote its own response.
    Written,
    /// Answer `=` and end the session.
    Quit,
}

impl From<Result<String, String>> for Handled {
    fn from(r: Result<String, String>) -> Handled {
        match r {
            Ok(s) => Handled::Ok(s),
            Err(s) => Handled::Err(s),
        }
    }
}

/// A search running on its own thread: analysis, pondering or a
/// cancellable search. The command loop stops it on the next input line.
pub(super) struct Background {
    pub stop: Arc<AtomicBool>,
    pub handle: JoinHandle<()>,
    /// Analysis ends its open response with a blank line once stopped.
    pub ends_response: bool,
}

/// The engine behind `engine gtp`.
pub struct GtpEngine {
    pub(super) settings: GtpSettings,
    pub(super) game: GtpGame,
    pub(super) bot: Arc<Mutex<Box<dyn GtpBot>>>,
    pub(super) out: Output,
    pub(super) clocks: ByPlayer<TimeControls>,
    pub(super) recent_win_loss: Vec<f64>,
    pub(super) genmove_time_sum: f64,
    pub(super) background: Option<Background>,
    name: String,
    version: String,
}

impl GtpEngine {
    /// An engine with `settings`, answering on `out`. `unlimited_config`
    /// says whether the config set no visit/playout/time limit, in which
    /// case KataGo assumes a fast clock (1 s main, 5 x 5 s byo-yomi).
    pub fn new(
        settings: GtpSettings,
        bot: Box<dyn GtpBot>,
        out: Output,
        no_search_limit_in_config: bool,
    ) -> Result<GtpEngine, String> {
        let (xs, ys) = settings.default_size;
        let board = Board::new(xs, ys).map_err(|e| e.to_string())?;
        let mut rules = settings.initial_rules;
        if let Some(k) = settings.forced_komi {
            rules.komi = k;
        }
        let clock = if no_search_limit_in_config {
            TimeControls::byo_yomi(1.0, 5.0, 5)
        } else {
            TimeControls::default()
        };
        let model = bot.model_name();
        let version = if model.is_empty() {
            env!("CARGO_PKG_VERSION").to_string()
        } else {
            format!("{}+{model}", env!("CARGO_PKG_VERSION"))
        };
        let game = GtpGame::new(board, rules, settings.game_options);
        Ok(GtpEngine {
            game,
            settings,
            bot: Arc::new(Mutex::new(bot)),
            out,
            clocks: ByPlayer::both(clock),
            recent_win_loss: Vec::new(),
            genmove_time_sum: 0.0,
            background: None,
            name: "engine".to_string(),
            version,
        })
    }

    /// The current game.
    pub fn game(&self) -> &GtpGame {
        &self.game
    }

    /// Stops any background search and waits for it; ends an open
    /// analysis response with its blank line.
    pub fn stop_background(&mut self) {
        if let Some(bg) = self.background.take() {
            bg.stop.store(true, Ordering::Relaxed);
            let _ = bg.handle.join();
            if bg.ends_response {
                self.out.write_str("\n");
            }
        }
    }

    /// Runs one command; the caller writes the answer for `Ok`/`Err`/`Quit`.
    pub fn handle(&mut self, c: &CommandLine) -> Handled {
        let a = &c.args;
        let args = c.joined_args();
        match c.name.as_str() {
            "protocol_version" => Handled::Ok("2".into()),
            "name" => Handled::Ok(self.name.clone()),
            "version" => Handled::Ok(self.version.clone()),
            "known_command" => match a.as_slice() {
                [cmd] => Handled::Ok(KNOWN_COMMANDS.contains(&cmd.as_str()).to_string()),
                _ => Handled::Err(format!(
                    "Expected single argument for known_command but got '{args}'"
                )),
            },
            "list_commands" => Handled::Ok(KNOWN_COMMANDS.join("\n")),
            "quit" => Handled::Quit,
            "boardsize" | "rectangular_boardsize" => self.boardsize(a).into(),
            "clear_board" => {
                self.game.clear();
                self.recent_win_loss.clear();
                Handled::Ok(String::new())
            }
            "komi" => self.komi(a).into(),
            "get_komi" => Handled::Ok(format_g(self.game.rules().komi as f64, false)),
            "play" => self.play(a).into(),
            "undo" => {
                if self.game.undo() {
                    Handled::Ok(String::new())
                } else {
                    Handled::Err("cannot undo".into())
                }
            }
            "set_position" => self.set_position(a).into(),
            "kata-get-rules" => Handled::Ok(self.game.rules().to_json(false).to_string()),
            "kata-set-rules" => self.set_rules_text(&args).into(),
            "kata-set-rule" => self.set_rule(a).into(),
            "kgs-rules" => self.kgs_rules(a).into(),
            "kata-list-params" => Handled::Ok(self.param_names().join(" ")),
            "kata-get-param" => match a.as_slice() {
                [p] => self
                    .get_param(p)
                    .ok_or_else(|| format!("Invalid parameter: {p}"))
                    .into(),
                _ => Handled::Err(format!(
                    "Expected one arguments for kata-get-param but got '{args}'"
                )),
            },
            "kata-get-params" => Handled::Ok(self.get_params_json()),
            "kata-set-param" => match a.as_slice() {
                [p] => self.set_params(&[(p.clone(), String::new())]).into(),
                [p, v] => self.set_params(&[(p.clone(), v.clone())]).into(),
                _ => Handled::Err(format!(
                    "Expected one or two arguments for kata-set-param but got '{args}'"
                )),
            },
            "kata-set-params" => self.set_params_json(&args).into(),
            "time_settings" => self.set_clocks(time::parse_time_settings(&strs(a))).into(),
            "kgs-time_settings" => self
                .set_clocks(time::parse_kgs_time_settings(&strs(a)))
                .into(),
            "kata-time_settings" => self
                .set_clocks(time::parse_kata_time_settings(&strs(a)))
                .into(),
            "kata-list_time_settings" => Handled::Ok(KATA_TIME_SETTINGS_LIST.into()),
            "time_left" => self.time_left(a).into(),
            "kata-raw-nn" => self.raw_nn(a).into(),
            "clear_cache" => {
                self.bot.lock().clear_cache();
                Handled::Ok(String::new())
            }
            "showboard" => Handled::Ok(self.game.showboard().trim().to_string()),
            "fixed_handicap" => self.fixed_handicap(a).into(),
            "place_free_handicap" => self.place_free_handicap(a).into(),
            "set_free_handicap" => self.set_free_handicap(a).into(),
            "final_score" => Handled::Ok(self.final_score()),
            "final_status_list" => self.final_status_list(a).into(),
            "loadsgf" => self.loadsgf(a).into(),
            "printsgf" => self.printsgf(a).into(),
            "cputime" | "gomill-cpu_time" => Handled::Ok(format_g(self.genmove_time_sum, false)),
            "stop" => Handled::Ok(String::new()),
            _ => self.handle_search(c),
        }
    }

    fn boardsize(&mut self, a: &[String]) -> Result<String, String> {
        let int = |s: &str| parse_i64(s);
        let size = match a {
            [one] => match one.split_once(':') {
                Some((x, y)) => int(x).zip(int(y)),
                None => int(one).map(|n| (n, n)),
            },
            [x, y] => int(x).zip(int(y)),
            _ => None,
        };
        let (xs, ys) = size.ok_or_else(|| {
            format!(
                "Expected int argument for boardsize or pair of ints but got '{}'",
                a.join(" ")
            )
        })?;
        if xs < 2 || ys < 2 {
            return Err("unacceptable size".into());
        }
        if xs > MAX_LEN as i64 || ys > MAX_LEN as i64 {
            return Err(format!("unacceptable size (Board::MAX_LEN is {MAX_LEN})"));
        }
        let board = Board::new(xs as usize, ys as usize).map_err(|e| e.to_string())?;
        let rules = *self.game.rules();
        self.game.restart(board, Player::Black, rules);
        self.recent_win_loss.clear();
        Ok(String::new())
    }

    fn komi(&mut self, a: &[String]) -> Result<String, String> {
        let komi = match a {
            [k] => parse_finite_f64(k),
            _ => None,
        }
        .ok_or_else(|| {
            format!(
                "Expected single float argument for komi but got '{}'",
                a.join(" ")
            )
        })?;
        if !(-400.0..=400.0).contains(&komi) {
            return Err("unacceptable komi".into());
        }
        if (komi * 2.0).fract() != 0.0 {
            return Err("komi must be an integer or half-integer".into());
        }
        let komi = self.settings.forced_komi.unwrap_or(komi as f32);
        self.game.set_komi(komi);
        self.maybe_ponder(!self.game.moves().is_empty());
        Ok(String::new())
    }

    fn play(&mut self, a: &[String]) -> Result<String, String> {
        let [colour, vertex] = a else {
            return Err(format!(
                "Expected two arguments for play but got '{}'",
                a.join(" ")
            ));
        };
        let pla =
            Player::parse(colour).ok_or_else(|| format!("Could not parse color: '{colour}'"))?;
        let mv = Move::parse(vertex, self.game.x_size(), self.game.y_size())
            .map_err(|_| format!("Could not parse vertex: '{vertex}'"))?;
        if !self.game.play(mv, pla) {
            return Err("illegal move".into());
        }
        self.maybe_ponder(true);
        Ok(String::new())
    }

    fn set_position(&mut self, a: &[String]) -> Result<String, String> {
        let all = a.join(" ");
        let prefix = || {
            format!("Expected a space-separated sequence of <COLOR> <VERTEX> pairs but got '{all}'")
        };
        if a.len() % 2 != 0 {
            return Err(prefix());
        }
        let mut stones = Vec::with_capacity(a.len() / 2);
        for pair in a.chunks(2) {
            let pla = Player::parse(&pair[0])
                .ok_or_else(|| format!("{}: could not parse color: '{}'", prefix(), pair[0]))?;
            let loc = Move::parse(&pair[1], self.game.x_size(), self.game.y_size())
                .ok()
                .and_then(Move::loc)
                .ok_or_else(|| format!("{}: could not parse vertex: '{}'", prefix(), pair[1]))?;
            stones.push((loc, pla.color()));
        }
        if !self.game.set_position(&stones) {
            return Err(
                "Illegal stone placements - overlapping stones or stones with no liberties?".into(),
            );
        }
        self.recent_win_loss.clear();
        Ok(String::new())
    }

    fn apply_rules(&mut self, rules: Rules) -> Result<String, String> {
        self.game.set_rules_keep_komi(rules);
        eprintln!("Changed rules to {}", rules.to_string_no_komi_maybe_nice());
        Ok(String::new())
    }

    fn set_rules_text(&mut self, text: &str) -> Result<String, String> {
        let rules = Rules::parse_without_komi(text, self.game.rules().komi)
            .map_err(|e| format!("Unknown rules '{text}', {e}"))?;
        self.apply_rules(rules)
    }

    fn set_rule(&mut self, a: &[String]) -> Result<String, String> {
        let [key, value] = a else {
            return Err(format!(
                "Expected two arguments for kata-set-rule but got '{}'",
                a.join(" ")
            ));
        };
        let mut json = self.game.rules().to_json(false);
        let Some(slot) = json.get_mut(key.as_str()) else {
            return Err(format!("Unknown rules option: {key}"));
        };
        *slot = match parse_bool(value) {
            Some(b) if slot.is_boolean() => serde_json::Value::Bool(b),
            _ if slot.is_boolean() => return Err(format!("Invalid value for {key}: {value}")),
            _ => serde_json::Value::String(value.to_ascii_uppercase()),
        };
        let rules = Rules::parse_without_komi(&json.to_string(), self.game.rules().komi)
            .map_err(|e| e.to_string())?;
        self.apply_rules(rules)
    }

    fn kgs_rules(&mut self, a: &[String]) -> Result<String, String> {
        let s = a
            .first()
            .map(|s| s.trim().to_ascii_lowercase())
            .ok_or("Expected one argument kgs-rules")?;
        let name = match s.as_str() {
            "chinese" => "chinese-kgs",
            "aga" | "japanese" | "new_zealand" => s.as_str(),
            _ => return Err(format!("Unknown rules '{s}'")),
        };
        let rules =
            Rules::parse_without_komi(name, self.game.rules().komi).map_err(|e| e.to_string())?;
        self.apply_rules(rules)
    }

    fn param_names(&self) -> Vec<String> {
        let mut names: Vec<String> = [
            "allowResignation",
            "ponderingEnabled",
            "delayMoveScale",
            "delayMoveMax",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(self.bot.lock().param_names());
        names
    }

    fn get_param(&self, name: &str) -> Option<String> {
        let s = &self.settings;
        match name {
            "allowResignation" => Some(s.allow_resignation.to_string()),
            "ponderingEnabled" => Some(s.pondering_enabled.to_string()),
            "delayMoveScale" => Some(format_g(s.delay_move_scale, false)),
            "delayMoveMax" => Some(format_g(s.delay_move_max, false)),
            _ => self.bot.lock().get_param(name),
        }
    }

    fn get_params_json(&self) -> String {
        let mut m = serde_json::Map::new();
        for name in self.param_names() {
            if let Some(v) = self.get_param(&name) {
                let value = serde_json::from_str(&v).unwrap_or(serde_json::Value::String(v));
                m.insert(name, value);
            }
        }
        serde_json::Value::Object(m).to_string()
    }

    /// Applies `(name, value)` pairs; all are checked before any is set so
    /// that a bad one changes nothing.
    fn set_params(&mut self, pairs: &[(String, String)]) -> Result<String, String> {
        let err = |m: String| format!("Could not set params: {m}");
        let known = self.param_names();
        for (k, v) in pairs {
            if !known.contains(k) {
                return Err(err(format!(
                    "Unrecognized or non-overridable parameter in kata-set-params: {k}"
                )));
            }
            let ok = match k.as_str() {
                "allowResignation" | "ponderingEnabled" => parse_bool(v).is_some(),
                "delayMoveScale" | "delayMoveMax" => parse_finite_f64(v).is_some_and(|x| x >= 0.0),
                _ => true,
            };
            if !ok {
                return Err(err(format!("Invalid value for {k}: '{v}'")));
            }
        }
        for (k, v) in pairs {
            let s = &mut self.settings;
            match k.as_str() {
                "allowResignation" => s.allow_resignation = parse_bool(v).unwrap_or(false),
                "ponderingEnabled" => s.pondering_enabled = parse_bool(v).unwrap_or(false),
                "delayMoveScale" => s.delay_move_scale = parse_finite_f64(v).unwrap_or(0.0),
                "delayMoveMax" => s.delay_move_max = parse_finite_f64(v).unwrap_or(0.0),
                _ => self.bot.lock().set_param(k, v).map_err(err)?,
            }
        }
        Ok(String::new())
    }

    fn set_params_json(&mut self, text: &str) -> Result<String, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("Could not set params: {e}"))?;
        let obj = value
            .as_object()
            .ok_or("Could not set params: Argument to kata-set-params must be a json object")?;
        let pairs: Vec<(String, String)> = obj
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect();
        self.set_params(&pairs)
    }

    fn set_clocks(
        &mut self,
        tc: Result<TimeControls, time::TimeControlError>,
    ) -> Result<String, String> {
        let tc = tc.map_err(|e| e.to_string())?;
        self.clocks = ByPlayer::both(tc);
        Ok(String::new())
    }

    /// `kata-raw-nn [COLOR] all|0-7 [OPTIMISM]`.
    fn raw_nn(&mut self, a: &[String]) -> Result<String, String> {
        let fail = |why: String| {
            format!(
                "{why} for kata-raw-nn (expected an optional color, a symmetry 'all' or index [0-7], and an optional optimism [0-1])"
            )
        };
        let mut i = 0;
        let mut pla = self.game.next_pla();
        if let Some(p) = a.first().and_then(|s| Player::parse(s)) {
            pla = p;
            i += 1;
        }
        let symmetry = match a.get(i).map(|s| s.trim().to_ascii_lowercase()) {
            None => {
                return Err(fail(
                    "Expected a symmetry argument 'all' or index [0-7]".into(),
                ))
            }
            Some(s) if s == "all" => None,
            Some(s) => match parse_i64(&s) {
                Some(n) if (0..8).contains(&n) => Some(n as usize),
                _ => {
                    return Err(fail(format!(
                        "Expected a symmetry argument 'all' or index [0-7] but got '{}'",
                        a[i]
                    )))
                }
            },
        };
        i += 1;
        let mut optimism = 0.0;
        if let Some(s) = a.get(i) {
            optimism = parse_finite_f64(s)
                .filter(|x| (0.0..=1.0).contains(x))
                .ok_or_else(|| {
                    fail(format!("Expected an optimism value in [0,1] but got '{s}'"))
                })?;
            i += 1;
        }
        if i < a.len() {
            return Err(fail(format!("Unexpected argument '{}'", a[i])));
        }
        self.stop_background();
        let game = self.game.clone();
        self.bot.lock().raw_nn(&game, pla, symmetry, optimism)
    }

    fn time_left(&mut self, a: &[String]) -> Result<String, String> {
        let (pla, seconds, stones) = time::parse_time_left(&strs(a)).map_err(|e| e.to_string())?;
        self.clocks[pla]
            .time_left(seconds, stones)
            .map_err(|e| e.to_string())?;
        Ok(String::new())
    }

    fn parse_handicap_count(&self, cmd: &str, a: &[String]) -> Result<usize, String> {
        let [n] = a else {
            return Err(format!(
                "Expected one argument for {cmd} but got '{}'",
                a.join(" ")
            ));
        };
        let count = parse_i64(n)
            .ok_or_else(|| format!("Could not parse number of handicap stones: '{n}'"))?;
        if count < 2 {
            return Err(format!("Number of handicap stones less than 2: '{n}'"));
        }
        if !self.game.board().is_empty() {
            return Err("Board is not empty".into());
        }
        Ok(count as usize)
    }

    fn handicap_response(&self) -> String {
        self.game.stone_vertices(|_| true).join(" ")
    }

    fn fixed_handicap(&mut self, a: &[String]) -> Result<String, String> {
        let n = self.parse_handicap_count("fixed_handicap", a)?;
        let locs = fixed_handicap_points(self.game.x_size(), self.game.y_size(), n)
            .map_err(|e| format!("{e}, try place_free_handicap"))?;
        self.game.set_handicap(&locs);
        self.recent_win_loss.clear();
        Ok(self.handicap_response())
    }

    /// KataGo lets the network place free handicap stones; without one we
    /// use the fixed points where they exist and then spread the rest over
    /// the board's third and fourth lines.
    fn place_free_handicap(&mut self, a: &[String]) -> Result<String, String> {
        let (xs, ys) = (self.game.x_size(), self.game.y_size());
        let n = self
            .parse_handicap_count("place_free_handicap", a)?
            .min((xs * ys / 4).min(30));
        let mut locs = fixed_handicap_points(xs, ys, n.min(9)).unwrap_or_default();
        if locs.len() < n {
            let board = Board::new(xs, ys).map_err(|e| e.to_string())?;
            let taken = |locs: &Vec<Loc>, l: Loc| {
                let (x, y) = l.xy(xs);
                locs.iter().any(|o| {
                    let (ox, oy) = o.xy(xs);
                    x.abs_diff(ox) + y.abs_diff(oy) <= 1
                })
            };
            for step in [3usize, 2, 1] {
                for l in board.locs() {
                    let (x, y) = l.xy(xs);
                    if locs.len() < n
                        && x % step == step / 2
                        && y % step == step / 2
                        && !taken(&locs, l)
                    {
                        locs.push(l);
                    }
                }
            }
        }
        locs.truncate(n);
        if !self.game.set_handicap(&locs) {
            return Err("Handicap placement is invalid".into());
        }
        self.recent_win_loss.clear();
        Ok(self.handicap_response())
    }

    fn set_free_handicap(&mut self, a: &[String]) -> Result<String, String> {
        if !self.game.board().is_empty() {
            return Err("Board is not empty".into());
        }
        let mut locs = Vec::with_capacity(a.len());
        for v in a {
            let loc = Move::parse(v, self.game.x_size(), self.game.y_size())
                .ok()
                .and_then(Move::loc)
                .ok_or_else(|| format!("Invalid handicap location: {v}"))?;
            locs.push(loc);
        }
        if !self.game.set_handicap(&locs) {
            return Err("Handicap placement is invalid".into());
        }
        self.recent_win_loss.clear();
        Ok(String::new())
    }

    /// Whether the game is over and the rules score it exactly (KataGo:
    /// finished under area scoring without friendly passes, or under
    /// territory scoring); otherwise scores come from a search.
    fn scored_exactly(&self) -> bool {
        let hist = self.game.history();
        let rules = hist.rules();
        hist.is_game_finished()
            && ((rules.scoring_rule == ScoringRule::Area && !rules.friendly_pass_ok)
                || rules.scoring_rule == ScoringRule::Territory)
    }

    /// KataGo's `computeAnticipatedWinnerAndScore`: the winner (`None` for
    /// a draw or no result) and White minus Black.
    fn anticipated_winner_and_score(&mut self) -> (Option<Player>, f64) {
        self.stop_background();
        if self.scored_exactly() {
            let hist = self.game.history();
            return (
                hist.winner(),
                f64::from(hist.final_white_minus_black_score()),
            );
        }
        let pla = self.game.next_pla();
        let lead = self.bot.lock().estimate_lead(&self.game, pla);
        let lead = if self.game.rules().game_result_will_be_integer() {
            lead.round()
        } else {
            (lead + 0.5).round() - 0.5
        };
        let winner = if lead > 0.0 {
            Some(Player::White)
        } else if lead < 0.0 {
            Some(Player::Black)
        } else {
            None
        };
        (winner, lead)
    }

    fn final_score(&mut self) -> String {
        match self.anticipated_winner_and_score() {
            (Some(Player::White), score) => format!("W+{score:.1}"),
            (Some(Player::Black), score) => format!("B+{:.1}", -score),
            (None, _) => "0".to_string(),
        }
    }

    /// Alive (true) or dead for every stone, by `Loc::idx`: from the rules'
    /// own scoring of a finished game, else from the search's ownership.
    fn anticipated_statuses(&mut self) -> Vec<bool> {
        self.stop_background();
        let board = *self.game.board();
        if self.scored_exactly() {
            let mut hist = self.game.history().clone();
            if hist.is_no_result() {
                return vec![true; crate::game::MAX_ARR_SIZE];
            }
            let area = hist.end_and_score_game_now(&board);
            let mut alive = vec![true; crate::game::MAX_ARR_SIZE];
            for loc in board.locs() {
                alive[loc.idx()] = board.get(loc) == area.get(loc);
            }
            return alive;
        }
        let pla = self.game.next_pla();
        let own = self.bot.lock().estimate_final(&self.game, pla).ownership;
        chain_statuses(&board, &own)
    }

    fn final_status_list(&mut self, a: &[String]) -> Result<String, String> {
        let [which] = a else {
            return Err(format!(
                "Expected one argument for final_status_list but got '{}'",
                a.join(" ")
            ));
        };
        let want_alive = match which.as_str() {
            "alive" => Some(true),
            "dead" => Some(false),
            "seki" => None,
            _ => {
                return Err(
                    "Argument to final_status_list must be 'alive' or 'seki' or 'dead'".into(),
                )
            }
        };
        let Some(want_alive) = want_alive else {
            return Ok(String::new());
        };
        let alive = self.anticipated_statuses();
        Ok(self
            .game
            .stone_vertices(|l| alive.get(l.idx()).copied().unwrap_or(true) == want_alive)
            .join(" "))
    }

    fn loadsgf(&mut self, a: &[String]) -> Result<String, String> {
        let (file, move_number) = match a {
            [f] => (f, None),
            [f, n] => {
                let n = parse_i64(n)
                    .map(|n| n - 1)
                    .filter(|n| (0..=10_000_000).contains(n))
                    .ok_or("Invalid value for moveNumber for loadsgf")?;
                (f, Some(n as usize))
            }
            _ => {
                return Err(format!(
                    "Expected one or two arguments for loadsgf but got '{}'",
                    a.join(" ")
                ))
            }
        };
        let text = std::fs::read_to_string(file).map_err(|_| "Cannot load file".to_string())?;
        let rec = parse_collection(&text)
            .and_then(|trees| {
                trees
                    .first()
                    .map(|t| t.record())
                    .unwrap_or_else(|| Ok(GameRecord::new(19, 19)))
            })
            .map_err(|e| format!("Could not load sgf: {e}"))?;
        let mut rules = *self.game.rules();
        if let Some(ru) = &rec.rules {
            match Rules::parse_without_komi(ru, rules.komi) {
                Ok(r) => rules = r,
                Err(e) => eprintln!(
                    "WARNING: could not read rules {ru:?} from sgf ({e}); keeping current rules"
                ),
            }
        }
        if let Some(k) = rec.komi {
            rules.komi = k;
        }
        if let Some(k) = self.settings.forced_komi {
            rules.komi = k;
        }
        let mut board =
            Board::new(rec.x_size, rec.y_size).map_err(|e| format!("Could not load sgf: {e}"))?;
        let setup: Vec<(Loc, Color)> = rec
            .setup
            .iter()
            .map(|&(c, (x, y))| (Loc::from_xy(x, y, rec.x_size), c))
            .collect();
        if !board.set_stones_fail_if_no_libs(&setup) {
            return Err("Could not load sgf: invalid setup stones".into());
        }
        let first = rec
            .player_to_move
            .or_else(|| rec.moves.first().map(|(p, _)| *p))
            .unwrap_or(Player::Black);
        let mut game = self.game.clone();
        game.restart(board, first, rules);
        let limit = move_number.unwrap_or(usize::MAX).min(rec.moves.len());
        for &(pla, pt) in &rec.moves[..limit] {
            let mv = match pt {
                Some((x, y)) => Move::Play(Loc::from_xy(x, y, rec.x_size)),
                None => Move::Pass,
            };
            // Tolerant like KataGo: a move onto a stone ends the replay.
            if !game.play(mv, pla) {
                break;
            }
        }
        if rules.komi != self.game.rules().komi {
            eprintln!("Changing komi to {}", rules.komi);
        }
        self.game = game;
        self.recent_win_loss.clear();
        Ok(String::new())
    }

    fn printsgf(&mut self, a: &[String]) -> Result<String, String> {
        if a.len() > 1 {
            return Err(format!(
                "Expected zero or one argument for print but got '{}'",
                a.join(" ")
            ));
        }
        let g = &self.game;
        let (xs, ys) = (g.x_size(), g.y_size());
        let mut rec = GameRecord::new(xs, ys);
        rec.komi = Some(g.rules().komi);
        rec.rules = Some(g.rules().to_compact_string());
        let init = g.initial_board();
        rec.setup = init
            .locs()
            .filter(|&l| init.get(l) != Color::Empty)
            .map(|l| (init.get(l), l.xy(xs)))
            .collect();
        let black_stones = rec.setup.iter().filter(|(c, _)| *c == Color::Black).count();
        if black_stones >= 2 && black_stones == rec.setup.len() {
            rec.handicap = Some(black_stones as u32);
        }
        if !rec.setup.is_empty() {
            rec.player_to_move = Some(g.initial_pla());
        }
        rec.moves = g
            .moves()
            .iter()
            .map(|&(m, p)| (p, m.loc().map(|l| l.xy(xs))))
            .collect();
        let _ = ys;
        let text = write_sgf(&rec);
        match a.first().map(String::as_str) {
            None | Some("-") => Ok(text),
            Some(path) => std::fs::write(path, text + "\n")
                .map(|_| String::new())
                .map_err(|_| format!("Could not open or write to file: {path}")),
        }
    }
}

/// The arguments as `&str`s, for the time-control parsers.
fn strs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

/// KataGo's life-and-death call from ownership (White positive): a chain
/// is alive when its mean ownership is above 0.2 for its colour and no
/// stone of it is below -0.6. Indexed by `Loc::idx`.
pub fn chain_statuses(board: &Board, ownership: &[f64]) -> Vec<bool> {
    let xs = board.x_size();
    let mut alive = vec![true; crate::game::MAX_ARR_SIZE];
    let mut solved = vec![false; crate::game::MAX_ARR_SIZE];
    for loc in board.locs() {
        let Some(pla) = board.get(loc).player() else {
            continue;
        };
        if solved[loc.idx()] {
            continue;
        }
        let sign = if pla == Player::White { 1.0 } else { -1.0 };
        let vals: Vec<f64> = board
            .chain_stones(loc)
            .map(|l| {
                sign * ownership
                    .get(Move::Play(l).policy_index(xs, board.y_size()))
                    .copied()
                    .unwrap_or(0.0)
            })
            .collect();
        let mean = vals.iter().sum::<f64>() / vals.len().max(1) as f64;
        let worst = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let is_alive = mean > 0.2 && worst > -0.6;
        for l in board.chain_stones(loc) {
            alive[l.idx()] = is_alive;
            solved[l.idx()] = true;
        }
    }
    alive
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
