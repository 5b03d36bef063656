//! Match and gatekeeper settings read from a config with KataGo's key
//! names (`cpp/configs/match_example.cfg`, `training/gatekeeper1.cfg`):
//! the bots (`numBots`, `botName<i>`, `nnModelFile<i>`, search keys with a
//! bot's index as suffix overriding the plain key for that bot), the games
//! (`numGamesTotal`, `numGameThreads`, `maxMovesPerGame`), the board sizes,
//! rules and komi, resignation, and the paired openings.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{read_fields, Field, Key};
use crate::config::{Config, ConfigError};
use crate::game::{Rules, MAX_LEN, MIN_LEN};
use crate::nn::device::Precision;
use crate::play::{parse_list, RuleLists, SettingsError};
use crate::search::{NnSearchEvaluator, PatternBonusTable, SearchParams, SetupFor};
use crate::setup::search_settings;

/// One player of a match.
#[derive(Debug, Clone)]
pub struct BotSpec {
    /// `botName<i>` (default `bot<i>`): the name in tables and SGFs.
    pub name: String,
    /// `nnModelFile<i>`: the network file.
    pub model: PathBuf,
    /// `nnPrecision<i>`: this bot's arithmetic when it has its own (the
    /// engine's key, so that one net can play itself in two precisions);
    /// `None` runs the config's `nnPrecision`. Bots with the same file and
    /// precision share one evaluator.
    pub precision: Option<Precision>,
    /// The search parameters: the config's search keys, then the ones
    /// suffixed with this bot's index.
    pub params: SearchParams,
    /// Shapes this bot avoids (`avoidSgfPattern*`), loaded by `engine
    /// match` after the settings ([`crate::setup::avoid_sgf_pattern_table`]:
    /// reading the settings reads no file).
    pub patterns: Option<Arc<PatternBonusTable>>,
    /// The human-style net of `engine match -human-model`, shared by every
    /// bot (its `humanSL*` keys decide what it does); set by `engine
    /// match` after the settings, as `patterns`.
    pub human: Option<Arc<NnSearchEvaluator>>,
}

/// Everything a match reads from the config besides the bots' nets.
/// `Default` is the empty value [`MatchSettings::from_config`] starts from.
#[derive(Debug, Clone, Default)]
pub struct MatchSettings {
    /// The bots, in index order.
    pub bots: Vec<BotSpec>,
    /// `numGamesTotal` (match) or `numGamesPerGating` (gatekeeper).
    pub num_games_total: u64,
    /// `numGameThreads`: games played at once.
    pub num_game_threads: usize,
    /// `maxMovesPerGame`: a game reaching it is scored as it stands.
    pub max_moves_per_game: usize,
    /// `bSizes` with `bSizeRelProbs`.
    pub board_sizes: Vec<usize>,
    /// Relative probabilities of `board_sizes`.
    pub board_size_rel_probs: Vec<f64>,
    /// `koRules`, `scoringRules`, `taxRules`, `multiStoneSuicideLegals`,
    /// `hasButtons`: one of each list is drawn per opening.
    pub rules: RuleLists,
    /// `komiMean`: the komi of every game.
    pub komi: f32,
    /// `allowResignation`.
    pub allow_resignation: bool,
    /// `resignThreshold`: resign when the searched win-loss value (-1..1)
    /// stays below this for `resignConsecTurns` own turns.
    pub resign_threshold: f64,
    /// `resignConsecTurns`.
    pub resign_consec_turns: usize,
    /// `openingMoves`: moves of each paired opening, drawn from the raw
    /// policy of the pair's first bot.
    pub opening_moves: usize,
    /// `openingTemperature`: temperature of those draws (1: the policy).
    pub opening_temperature: f64,
    /// `matchSeed`: seed of openings, board sizes and rules (random if absent).
    pub seed: Option<u64>,
    /// `logGamesEvery`: a progress line every this many games.
    pub log_games_every: u64,
    /// Each search tree's share of `maxMemoryMB` (two searches per game
    /// thread), if set.
    pub tree_memory_limit: Option<u64>,
}

fn cfg_err(e: ConfigError) -> SettingsError {
    SettingsError::Config(Box::new(e))
}

/// The search parameters of bot `index`: the config's plain search keys,
/// then `<key><index>` for every search key (KataGo's per-bot suffixes).
pub fn bot_params(cfg: &Config, index: usize) -> Result<SearchParams, SettingsError> {
    let mut overrides = search_settings(cfg);
    let suffix = index.to_string();
    let all = cfg.to_json_value();
    if let serde_json::Value::Object(map) = all {
        for (key, value) in map {
            let Some(base) = key.strip_suffix(&suffix) else {
                continue;
            };
            // `maxVisits10` is bot 10's, not bot 0's `maxVisits1`.
            if base.ends_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            if SearchParams::NAMES.contains(&base) {
                cfg.mark_used(&key);
                overrides.push((base.to_string(), value));
            }
        }
    }
    SearchParams::from_overrides(
        SetupFor::Other,
        overrides.iter().map(|(k, v)| (k.as_str(), v)),
    )
    .map_err(|e| SettingsError::Invalid(format!("bot {index}: {e}")))
}

/// The configuration reference's rows of the match settings tables
/// (`engine match`, `engine gatekeeper`).
pub fn config_rows() -> Vec<crate::config::Row> {
    crate::config::field_rows(MATCH_FIELDS)
}

/// The rows of the keys only `engine match` reads (its bots and games).
pub fn match_rows() -> Vec<crate::config::Row> {
    [
        NUM_BOTS.setting(),
        BOT_NAME.setting(),
        MODEL_FILE.setting(),
        GAMES_TOTAL.setting(),
        MATCH_SEED.setting(),
    ]
    .iter()
    .map(|s| s.row())
    .collect()
}

/// The rows of the keys only `engine gatekeeper` reads.
pub fn gating_rows() -> Vec<crate::config::Row> {
    [
        GAMES_PER_GATING.setting(),
        REQUIRED_WIN_PROP.setting(),
        MATCH_SEED.setting(),
    ]
    .iter()
    .map(|s| s.row())
    .collect()
}

/// `numBots`.
const NUM_BOTS: Key<i64> = Key::int("numBots", 1, 1..=1024).doc("Bots in the match.");
/// `botName<i>` (`botName` alone for a single bot).
const BOT_NAME: Key<Option<String>> =
    Key::opt_text("botName").doc("Bot i's name, with its index: botName0 (default bot0).");
/// `nnModelFile<i>` (`nnModelFile` alone for a single bot).
const MODEL_FILE: Key<Option<String>> = Key::opt_text("nnModelFile")
    .doc("Bot i's net, with its index: nnModelFile0 (required for each bot, or -bot).");
/// `numGamesTotal` (match).
const GAMES_TOTAL: Key<i64> =
    Key::int("numGamesTotal", 100, 1..=u32::MAX as i64).doc("Games of the match.");
/// `numGamesPerGating` (gatekeeper): 0 accepts every candidate unplayed.
const GAMES_PER_GATING: Key<i64> = Key::int("numGamesPerGating", 100, 0..=u32::MAX as i64)
    .doc("Games per candidate net; 0 accepts every candidate unplayed.");
/// `requiredCandidateWinProp` (this engine's key; `-required-candidate-win-prop`
/// wins over it).
pub(crate) const REQUIRED_WIN_PROP: Key<f64> =
    Key::real("requiredCandidateWinProp", 0.5, 0.0..=1.0)
        .doc("The score a candidate net needs against the accepted one to be accepted.");

/// `matchSeed`.
const MATCH_SEED: Key<Option<i64>> = Key::opt_int("matchSeed", 0..=i64::MAX)
    .doc("Seed of the openings, sizes and rules (default: random).");

/// The scalar settings of a match or gating: KataGo's key, the default,
/// the range, and the field it fills.
const MATCH_FIELDS: &[Field<MatchSettings>] = &[
    Field::i64("numGameThreads", 2, 1..=4096, |s, v| {
        s.num_game_threads = v as usize
    }),
    Field::i64("maxMovesPerGame", 1200, 1..=100_000, |s, v| {
        s.max_moves_per_game = v as usize
    }),
    Field::f64("komiMean", 7.5, -150.0..=150.0, |s, v| s.komi = v as f32),
    Field::bool("allowResignation", true, |s, v| s.allow_resignation = v),
    Field::f64("resignThreshold", -0.95, -1.0..=0.0, |s, v| {
        s.resign_threshold = v
    }),
    Field::i64("resignConsecTurns", 6, 1..=1000, |s, v| {
        s.resign_consec_turns = v as usize
    }),
    Field::i64("openingMoves", 4, 0..=1000, |s, v| {
        s.opening_moves = v as usize
    }),
    Field::f64("openingTemperature", 1.0, 0.01..=100.0, |s, v| {
        s.opening_temperature = v
    }),
    Field::i64("logGamesEvery", 10, 1..=i64::MAX, |s, v| {
        s.log_games_every = v as u64
    }),
];

impl MatchSettings {
    /// Reads the settings; `games_key` is `numGamesTotal` (match) or
    /// `numGamesPerGating` (gatekeeper). With `need_bots` false (the
    /// gatekeeper, whose two bots are nets found on disk) no bot is read.
    pub fn from_config(
        cfg: &Config,
        games_key: &str,
        need_bots: bool,
    ) -> Result<MatchSettings, SettingsError> {
        let mut bots = Vec::new();
        if need_bots {
            let num_bots = NUM_BOTS.read(cfg).map_err(cfg_err)? as usize;
            // KataGo lets a single bot drop the suffix.
            let indexed = |key: &Key<Option<String>>, i: usize| -> Result<_, SettingsError> {
                let with_index = key.read_named(cfg, &format!("{}{i}", key.name()));
                match with_index.map_err(cfg_err)? {
                    Some(v) => Ok(Some(v)),
                    None if num_bots == 1 => key.read(cfg).map_err(cfg_err),
                    None => Ok(None),
                }
            };
            for i in 0..num_bots {
                let name = indexed(&BOT_NAME, i)?.unwrap_or_else(|| format!("bot{i}"));
                let Some(model) = indexed(&MODEL_FILE, i)? else {
                    return Err(SettingsError::Invalid(format!(
                        "bot {i} ({name}) has no network: set nnModelFile{i} (or -bot NAME=MODEL)"
                    )));
                };
                let precision = match crate::setup::NN_PRECISION
                    .read_named(cfg, &format!("nnPrecision{i}"))
                    .map_err(cfg_err)?
                {
                    Some(text) => Some(Precision::parse(&text).ok_or_else(|| {
                        SettingsError::Invalid(format!(
                            "nnPrecision{i} = \"{text}\": expected fp32, fp16, bf16 or int8"
                        ))
                    })?),
                    None => None,
                };
                bots.push(BotSpec {
                    name,
                    model: PathBuf::from(model),
                    precision,
                    params: bot_params(cfg, i)?,
                    patterns: None,
                    human: None,
                });
            }
            let mut names: Vec<&str> = bots.iter().map(|b| b.name.as_str()).collect();
            names.sort_unstable();
            if names.windows(2).any(|w| w[0] == w[1]) {
                return Err(SettingsError::Invalid(
                    "two bots have the same name (botName<i>)".into(),
                ));
            }
        }
        let board_sizes: Vec<usize> =
            parse_list(cfg, "bSizes", &["19"], |s| s.parse::<usize>().ok())?;
        if let Some(n) = board_sizes
            .iter()
            .find(|n| !(MIN_LEN..=MAX_LEN).contains(*n))
        {
            return Err(SettingsError::Invalid(format!(
                "bSizes: board size {n} is not supported (each side must be {MIN_LEN} to {MAX_LEN})"
            )));
        }
        let probs: Vec<f64> = if cfg.contains("bSizeRelProbs") {
            parse_list(cfg, "bSizeRelProbs", &[], |s| {
                s.parse::<f64>().ok().filter(|p| p.is_finite() && *p >= 0.0)
            })?
        } else {
            vec![1.0; board_sizes.len()]
        };
        if probs.len() != board_sizes.len() || probs.iter().all(|&p| p <= 0.0) {
            return Err(SettingsError::Invalid(
                "bSizeRelProbs must have one positive weight per bSizes entry".into(),
            ));
        }
        let mut s = MatchSettings {
            bots,
            board_sizes,
            board_size_rel_probs: probs,
            rules: RuleLists::from_config(cfg)?,
            ..MatchSettings::default()
        };
        read_fields(cfg, MATCH_FIELDS, &mut s)?;
        s.tree_memory_limit =
            crate::setup::MemoryBudget::tree_share(cfg, 2 * s.num_game_threads.max(1))?;
        // A gating of 0 games accepts every candidate unplayed (a loop
        // without gating still moves its nets through the gatekeeper).
        let games = if games_key == GAMES_PER_GATING.name() {
            &GAMES_PER_GATING
        } else {
            &GAMES_TOTAL
        };
        s.num_games_total = games.read(cfg).map_err(cfg_err)? as u64;
        s.seed = MATCH_SEED.read(cfg).map_err(cfg_err)?.map(|n| n as u64);
        Ok(s)
    }

    /// The rules of one opening drawn from the lists (komi `komiMean`).
    pub fn draw_rules(&self, rng: &mut impl rand::Rng) -> Rules {
        let mut rules = self.rules.draw(rng);
        rules.komi = self.komi;
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{KoRule, ScoringRule};

    fn cfg(text: &str) -> Config {
        Config::from_cfg_str(text, "t.cfg").unwrap()
    }

    #[test]
    fn a_bot_may_have_its_own_precision() {
        let c = cfg(
            "numBots = 2\nnnModelFile0 = a.bin.gz\nnnModelFile1 = a.bin.gz\nnnPrecision1 = bf16\n",
        );
        let s = MatchSettings::from_config(&c, "numGamesTotal", true).unwrap();
        assert_eq!(s.bots[0].precision, None);
        assert_eq!(s.bots[1].precision, Some(Precision::BF16));
        let bad = cfg("numBots = 2\nnnModelFile0 = a\nnnModelFile1 = a\nnnPrecision0 = int4\n");
        let err = MatchSettings::from_config(&bad, "numGamesTotal", true).unwrap_err();
        assert!(err.to_string().contains("nnPrecision0"), "{err}");
    }

    #[test]
    fn suffixed_search_keys_override_per_bot() {
        let c = cfg(
            "numBots = 3\nbotName0 = a\nnnModelFile0 = a.bin.gz\nbotName1 = b\n\
             nnModelFile1 = b.bin.gz\nnnModelFile2 = c.bin.gz\nmaxVisits = 50\nmaxVisits1 = 8\n\
             cpuctExploration2 = 2.0\n",
        );
        let s = MatchSettings::from_config(&c, "numGamesTotal", true).unwrap();
        assert_eq!(s.bots.len(), 3);
        assert_eq!(s.bots[0].name, "a");
        assert_eq!(s.bots[2].name, "bot2");
        assert_eq!(s.bots[0].params.max_visits, 50);
        assert_eq!(s.bots[1].params.max_visits, 8);
        assert_eq!(s.bots[2].params.max_visits, 50);
        assert_eq!(s.bots[2].params.cpuct_exploration, 2.0);
        assert_ne!(s.bots[0].params.cpuct_exploration, 2.0);
    }

    #[test]
    fn defaults_are_one_fixed_rule_set_and_komi() {
        let c = cfg("numBots = 2\nnnModelFile0 = a\nnnModelFile1 = b\n");
        let s = MatchSettings::from_config(&c, "numGamesTotal", true).unwrap();
        let r = s.draw_rules(&mut rand::thread_rng());
        assert_eq!(r.ko_rule, KoRule::Positional);
        assert_eq!(r.scoring_rule, ScoringRule::Area);
        assert_eq!(r.komi, 7.5);
        assert!(s.allow_resignation);
        assert_eq!(s.resign_threshold, -0.95);
        assert_eq!(s.resign_consec_turns, 6);
    }

    #[test]
    fn missing_model_and_bad_sizes_are_errors() {
        let c = cfg("numBots = 2\nnnModelFile0 = a\n");
        let e = MatchSettings::from_config(&c, "numGamesTotal", true).unwrap_err();
        assert!(e.to_string().contains("nnModelFile1"), "{e}");
        let c =
            cfg("numBots = 2\nnnModelFile0 = a\nnnModelFile1 = b\nbotName0 = x\nbotName1 = x\n");
        assert!(MatchSettings::from_config(&c, "numGamesTotal", true).is_err());
        let c = cfg("bSizes = 9,13\nbSizeRelProbs = 1\n");
        assert!(MatchSettings::from_config(&c, "numGamesTotal", false).is_err());
    }
}
