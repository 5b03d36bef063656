//! What every command that plays games reads from its config besides the
//! search: its errors, KataGo's comma-separated lists, and the rule lists
//! each game's rules are drawn from (`cpp/program/play.cpp`'s
//! `GameInitializer` and `setupsearch.cpp` are KataGo's counterparts).

use rand::Rng;

use crate::config::{Config, ConfigError};
use crate::game::{KoRule, Rules, ScoringRule, TaxRule, WhiteHandicapBonusRule};

/// Why the playing settings of a command (self-play, match, gatekeeper)
/// are unusable.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A key is missing, mistyped or out of range.
    #[error(transparent)]
    Config(#[from] Box<ConfigError>),
    /// Keys that contradict each other or a value KataGo rejects.
    #[error("{0}")]
    Invalid(String),
}

impl From<ConfigError> for SettingsError {
    fn from(e: ConfigError) -> Self {
        SettingsError::Config(Box::new(e))
    }
}

/// The list under `key` (KataGo's comma-separated values; a single number
/// reads as a one-item list), each item read by `parse`, or `default` when
/// the key is absent. An empty list or an unreadable item is an error that
/// names the key.
pub fn parse_list<T>(
    cfg: &Config,
    key: &str,
    default: &[&str],
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, SettingsError> {
    let items: Vec<String> = if cfg.contains(key) {
        // A single number (`bSizes = 9` as an override) reads as a number.
        match cfg.get_strings(key) {
            Ok(items) => items,
            Err(e) => match cfg.get_i64s(key, i64::MIN..=i64::MAX) {
                Ok(ns) => ns.iter().map(|n| n.to_string()).collect(),
                Err(_) => return Err(e.into()),
            },
        }
    } else {
        default.iter().map(|s| s.to_string()).collect()
    };
    let mut out = Vec::new();
    for item in &items {
        out.push(
            parse(item.trim())
                .ok_or_else(|| SettingsError::Invalid(format!("{key}: cannot read '{item}'")))?,
        );
    }
    if out.is_empty() {
        return Err(SettingsError::Invalid(format!("{key}: empty list")));
    }
    Ok(out)
}

/// `true`/`false` (any case) or `1`/`0`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// The lists a game's rules are drawn from, one item of each per game
/// (KataGo's self-play and match keys `koRules`, `scoringRules`,
/// `taxRules`, `multiStoneSuicideLegals`, `hasButtons`).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleLists {
    /// `koRules` (default `POSITIONAL`).
    pub ko_rules: Vec<KoRule>,
    /// `scoringRules` (default `AREA`).
    pub scoring_rules: Vec<ScoringRule>,
    /// `taxRules` (default `NONE`).
    pub tax_rules: Vec<TaxRule>,
    /// `multiStoneSuicideLegals` (default `false`).
    pub multi_stone_suicide_legals: Vec<bool>,
    /// `hasButtons` (default `false`; a button only under area scoring).
    pub has_buttons: Vec<bool>,
}

impl Default for RuleLists {
    /// KataGo's defaults: positional ko, area scoring, no tax, no
    /// multi-stone suicide, no button.
    fn default() -> RuleLists {
        RuleLists {
            ko_rules: vec![KoRule::Positional],
            scoring_rules: vec![ScoringRule::Area],
            tax_rules: vec![TaxRule::None],
            multi_stone_suicide_legals: vec![false],
            has_buttons: vec![false],
        }
    }
}

impl RuleLists {
    /// Reads the five lists (upper or lower case).
    pub fn from_config(cfg: &Config) -> Result<RuleLists, SettingsError> {
        Ok(RuleLists {
            ko_rules: parse_list(cfg, "koRules", &["POSITIONAL"], |s| {
                KoRule::parse(&s.to_ascii_uppercase())
            })?,
            scoring_rules: parse_list(cfg, "scoringRules", &["AREA"], |s| {
                ScoringRule::parse(&s.to_ascii_uppercase())
            })?,
            tax_rules: parse_list(cfg, "taxRules", &["NONE"], |s| {
                TaxRule::parse(&s.to_ascii_uppercase())
            })?,
            multi_stone_suicide_legals: parse_list(
                cfg,
                "multiStoneSuicideLegals",
                &["false"],
                parse_bool,
            )?,
            has_buttons: parse_list(cfg, "hasButtons", &["false"], parse_bool)?,
        })
    }

    /// One rule set drawn from the lists, in KataGo's order (ko, scoring,
    /// tax, suicide, button); the rest is Tromp-Taylor's, with no
    /// handicap bonus for White. Komi is the caller's.
    pub fn draw(&self, rng: &mut impl Rng) -> Rules {
        let mut rules = Rules::tromp_taylor();
        rules.ko_rule = pick(&self.ko_rules, rng);
        rules.scoring_rule = pick(&self.scoring_rules, rng);
        rules.tax_rule = pick(&self.tax_rules, rng);
        rules.multi_stone_suicide_legal = pick(&self.multi_stone_suicide_legals, rng);
        rules.has_button = pick(&self.has_buttons, rng) && rules.scoring_rule == ScoringRule::Area;
        rules.white_handicap_bonus_rule = WhiteHandicapBonusRule::Zero;
        rules
    }

    /// Draws scoring, tax and button again (KataGo's forks of a finished
    /// game keep its ko and suicide rules); the button is drawn only under
    /// area scoring.
    pub fn redraw_scoring(&self, rules: &mut Rules, rng: &mut impl Rng) {
        rules.scoring_rule = pick(&self.scoring_rules, rng);
        rules.tax_rule = pick(&self.tax_rules, rng);
        rules.has_button = rules.scoring_rule == ScoringRule::Area && pick(&self.has_buttons, rng);
    }
}

/// A uniformly drawn item of a non-empty list.
fn pick<T: Copy>(items: &[T], rng: &mut impl Rng) -> T {
    items[rng.gen_range(0..items.len())]
}
