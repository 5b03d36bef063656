//! KataGo's rules (`cpp/game/rules.{h,cpp}`): ko, scoring, group tax,
//! suicide, button, white handicap bonus, friendly pass, and komi.
//!
//! Komi lives inside [`Rules`] as in KataGo, so one value describes how a
//! game is scored. Three text forms are read: the shorthand names
//! (`japanese`, `tromp-taylor`, ...), the JSON object of KataGo's
//! `kata-get-rules`/analysis queries, and the compact SGF `RU[...]` form
//! (`koPOSITIONALscoreAREAtaxNONEsui1button1`).

use std::fmt;

use serde_json::{Map, Value};

/// When a repeated position is forbidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KoRule {
    /// Only the immediate recapture of a single-stone ko.
    Simple,
    /// No whole-board position may repeat.
    Positional,
    /// No position may repeat with the same player to move.
    Situational,
    /// KataGo's "spight" rule: like positional, but passes lift the bans.
    Spight,
}

/// How the final score is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScoringRule {
    /// Stones plus surrounded empty points (Chinese-like).
    Area,
    /// Surrounded empty points plus captures, with KataGo's encore
    /// (Japanese-like).
    Territory,
}

/// Which living groups pay a tax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaxRule {
    /// No tax: points in seki count.
    None,
    /// Points surrounded by groups in seki do not count.
    Seki,
    /// As `Seki`, and every independently living group pays two points.
    All,
}

/// What white gets per black handicap stone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WhiteHandicapBonusRule {
    /// Nothing.
    Zero,
    /// One point per handicap stone.
    N,
    /// One point per handicap stone after the first.
    NMinusOne,
}

/// A complete rule set, komi included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    pub ko_rule: KoRule,
    pub scoring_rule: ScoringRule,
    pub tax_rule: TaxRule,
    pub multi_stone_suicide_legal: bool,
    /// The first pass of the game takes a half-point "button" (area scoring).
    pub has_button: bool,
    pub white_handicap_bonus_rule: WhiteHandicapBonusRule,
    /// Informational: passing before dead stones are captured is fine
    /// (area scoring). Changes only how the engine passes, not the score.
    pub friendly_pass_ok: bool,
    /// Points given to white.
    pub komi: f32,
}

/// Rules text that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    /// Not a known name, JSON object or compact string.
    #[error("could not parse rules: {0:?}")]
    Unparsable(String),
    /// A JSON key that is not a rules option.
    #[error("unknown rules option: {0:?}")]
    UnknownKey(String),
    /// A known option with a value it cannot take.
    #[error("invalid value for rules option {key:?}: {value}")]
    BadValue { key: String, value: String },
    /// Komi that is not a finite half-integer in [-400, 400], or komi given
    /// where it is not allowed.
    #[error("komi {0} is not allowed: it must be an integer or half-integer from -400 to 400")]
    BadKomi(String),
}

/// Smallest komi a user may set.
pub const MIN_USER_KOMI: f32 = -400.0;
/// Largest komi a user may set.
pub const MAX_USER_KOMI: f32 = 400.0;

impl Default for Rules {
    /// KataGo's default: Tromp-Taylor-like.
    fn default() -> Rules {
        Rules::tromp_taylor()
    }
}

/// A rule enum's values and their KataGo names, for parsing them both as
/// whole words and as parts of a compact rules string (`koSIMPLEscoreAREA`).
trait Named: Copy + 'static {
    /// Every value; a name that is a prefix of another comes after it.
    const ALL: &'static [Self];
    /// KataGo's name.
    fn name(self) -> &'static str;
}

fn parse_named<T: Named>(s: &str) -> Option<T> {
    T::ALL.iter().copied().find(|k| k.name() == s)
}

impl Named for KoRule {
    const ALL: &'static [Self] = &[
        KoRule::Simple,
        KoRule::Positional,
        KoRule::Situational,
        KoRule::Spight,
    ];
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Named for ScoringRule {
    const ALL: &'static [Self] = &[ScoringRule::Area, ScoringRule::Territory];
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Named for TaxRule {
    const ALL: &'static [Self] = &[TaxRule::None, TaxRule::Seki, TaxRule::All];
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Named for WhiteHandicapBonusRule {
    const ALL: &'static [Self] = &[
        WhiteHandicapBonusRule::Zero,
        // "N-1" before "N", which is its prefix.
        WhiteHandicapBonusRule::NMinusOne,
        WhiteHandicapBonusRule::N,
    ];
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl KoRule {
    /// `SIMPLE`, `POSITIONAL`, `SITUATIONAL`, `SPIGHT`.
    pub fn as_str(self) -> &'static str {
        match self {
            KoRule::Simple => "SIMPLE",
            KoRule::Positional => "POSITIONAL",
            KoRule::Situational => "SITUATIONAL",
            KoRule::Spight => "SPIGHT",
        }
    }

    /// Parses the exact upper-case name.
    pub fn parse(s: &str) -> Option<KoRule> {
        parse_named(s)
    }
}

impl ScoringRule {
    /// `AREA`, `TERRITORY`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoringRule::Area => "AREA",
            ScoringRule::Territory => "TERRITORY",
        }
    }

    /// Parses the exact upper-case name.
    pub fn parse(s: &str) -> Option<ScoringRule> {
        parse_named(s)
    }
}

impl TaxRule {
    /// `NONE`, `SEKI`, `ALL`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaxRule::None => "NONE",
            TaxRule::Seki => "SEKI",
            TaxRule::All => "ALL",
        }
    }

    /// Parses the exact upper-case name.
    pub fn parse(s: &str) -> Option<TaxRule> {
        parse_named(s)
    }
}

impl WhiteHandicapBonusRule {
    /// `0`, `N`, `N-1`.
    pub fn as_str(self) -> &'static str {
        match self {
            WhiteHandicapBonusRule::Zero => "0",
            WhiteHandicapBonusRule::N => "N",
            WhiteHandicapBonusRule::NMinusOne => "N-1",
        }
    }

    /// Parses `0`, `N` or `N-1`.
    pub fn parse(s: &str) -> Option<WhiteHandicapBonusRule> {
        parse_named(s)
    }
}

/// Whether `komi` is finite and a multiple of 0.5.
pub fn komi_is_int_or_half_int(komi: f32) -> bool {
    komi.is_finite() && komi * 2.0 == (komi * 2.0).trunc()
}

impl Rules {
    /// Tromp-Taylor: positional superko, area, suicide legal, komi 7.5.
    pub const fn tromp_taylor() -> Rules {
        rule_set(
            K::Positional,
            S::Area,
            T::None,
            true,
            false,
            W::Zero,
            false,
            7.5,
        )
    }

    /// Japanese-like: simple ko, territory, seki tax, no suicide, komi 6.5.
    pub const fn japanese() -> Rules {
        rule_set(
            K::Simple,
            S::Territory,
            T::Seki,
            false,
            false,
            W::Zero,
            false,
            6.5,
        )
    }

    /// Chinese: simple ko, area, no suicide, handicap bonus N, komi 7.5.
    pub const fn chinese() -> Rules {
        rule_set(K::Simple, S::Area, T::None, false, false, W::N, true, 7.5)
    }

    /// The default komi KataGo uses for this scoring rule and button when
    /// none is given: 6.5 for territory, 7.0 with a button, else 7.5.
    pub fn default_komi(scoring_rule: ScoringRule, has_button: bool) -> f32 {
        match (scoring_rule, has_button) {
            (ScoringRule::Territory, _) => 6.5,
            (ScoringRule::Area, true) => 7.0,
            (ScoringRule::Area, false) => 7.5,
        }
    }

    /// Whether the final score is always an integer (integer komi xor button).
    pub fn game_result_will_be_integer(&self) -> bool {
        let komi_is_integer = self.komi.trunc() == self.komi;
        komi_is_integer != self.has_button
    }

    /// Equal apart from komi.
    pub fn equals_ignoring_komi(&self, other: &Rules) -> bool {
        Rules { komi: 0.0, ..*self }
            == Rules {
                komi: 0.0,
                ..*other
            }
    }

    /// Parses any form KataGo's `Rules::parseRules` accepts: a shorthand
    /// name (any case, `-`/`_`/space/no separator), a JSON object, or the
    /// compact string; komi may be given inside the JSON or compact form.
    pub fn parse(s: &str) -> Result<Rules, RulesError> {
        parse_helper(s, true)
    }

    /// As [`Rules::parse`], but komi may not appear in the text; the result
    /// has `komi`.
    pub fn parse_without_komi(s: &str, komi: f32) -> Result<Rules, RulesError> {
        Ok(Rules {
            komi,
            ..parse_helper(s, false)?
        })
    }

    /// KataGo's `toJson`: `{"friendlyPassOk","hasButton","ko","komi",
    /// "scoring","suicide","tax","whiteHandicapBonus"}` (keys sorted, as
    /// nlohmann::json prints them). Komi omitted with `include_komi = false`
    /// (`kata-get-rules` prints it without komi).
    pub fn to_json(&self, include_komi: bool) -> Value {
        let mut m = Map::new();
        m.insert("friendlyPassOk".into(), Value::Bool(self.friendly_pass_ok));
        m.insert("hasButton".into(), Value::Bool(self.has_button));
        m.insert("ko".into(), Value::String(self.ko_rule.as_str().into()));
        if include_komi {
            m.insert("komi".into(), serde_json::json!(self.komi));
        }
        m.insert(
            "scoring".into(),
            Value::String(self.scoring_rule.as_str().into()),
        );
        m.insert(
            "suicide".into(),
            Value::Bool(self.multi_stone_suicide_legal),
        );
        m.insert("tax".into(), Value::String(self.tax_rule.as_str().into()));
        m.insert(
            "whiteHandicapBonus".into(),
            Value::String(self.white_handicap_bonus_rule.as_str().into()),
        );
        Value::Object(m)
    }

    /// The compact form without komi, as KataGo writes into SGF `RU[]`:
    /// `koSIMPLEscoreTERRITORYtaxSEKIsui0`, plus `button1`, `whbN`,
    /// `fpok1` where they differ from the defaults.
    pub fn to_compact_string(&self) -> String {
        let mut s = format!(
            "ko{}score{}tax{}sui{}",
            self.ko_rule.as_str(),
            self.scoring_rule.as_str(),
            self.tax_rule.as_str(),
            u8::from(self.multi_stone_suicide_legal)
        );
        if self.has_button {
            s.push_str("button1");
        }
        if self.white_handicap_bonus_rule != WhiteHandicapBonusRule::Zero {
            s.push_str("whb");
            s.push_str(self.white_handicap_bonus_rule.as_str());
        }
        if self.friendly_pass_ok {
            s.push_str("fpok1");
        }
        s
    }

    /// KataGo's nice name if these rules (ignoring komi) match one
    /// (`TrompTaylor`, `Japanese`, `Chinese`, `Chinese-OGS`, `AGA`,
    /// `StoneScoring`, `NewZealand`), else the compact string.
    pub fn to_string_no_komi_maybe_nice(&self) -> String {
        for name in [
            "TrompTaylor",
            "Japanese",
            "Chinese",
            "Chinese-OGS",
            "AGA",
            "StoneScoring",
            "NewZealand",
        ] {
            if let Some(r) = named_rules(&name.to_ascii_lowercase()) {
                if self.equals_ignoring_komi(&r) {
                    return name.to_string();
                }
            }
        }
        self.to_compact_string()
    }
}

impl fmt::Display for Rules {
    /// The compact form followed by `komi<value>`, as KataGo prints rules.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}komi{}", self.to_compact_string(), self.komi)
    }
}

impl std::str::FromStr for Rules {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<Rules, RulesError> {
        Rules::parse(s)
    }
}

use KoRule as K;
use ScoringRule as S;
use TaxRule as T;
use WhiteHandicapBonusRule as W;

/// Rules from their fields in declaration order, for the tables below.
#[allow(clippy::too_many_arguments)]
const fn rule_set(
    ko: K,
    sc: S,
    tax: T,
    sui: bool,
    button: bool,
    whb: W,
    fpok: bool,
    komi: f32,
) -> Rules {
    Rules {
        ko_rule: ko,
        scoring_rule: sc,
        tax_rule: tax,
        multi_stone_suicide_legal: sui,
        has_button: button,
        white_handicap_bonus_rule: whb,
        friendly_pass_ok: fpok,
        komi,
    }
}

/// The shorthand names of KataGo's `parseRulesHelper`, lower case, in each
/// spelling it accepts, and their rules; the first match wins.
#[rustfmt::skip]
const NAMED_RULES: &[(&[&str], Rules)] = &[
    (&["japanese", "korean"], Rules::japanese()),
    (&["chinese"], Rules::chinese()),
    (&["chineseogs", "chinese_ogs", "chinese-ogs", "chinesekgs", "chinese_kgs", "chinese-kgs"],
        rule_set(K::Positional, S::Area, T::None, false, false, W::N, true, 7.5)),
    (&["ancientarea", "ancient-area", "ancient_area", "ancient area",
       "stonescoring", "stone-scoring", "stone_scoring", "stone scoring"],
        rule_set(K::Simple, S::Area, T::All, false, false, W::Zero, true, 7.5)),
    (&["ancientterritory", "ancient-territory", "ancient_territory", "ancient territory"],
        rule_set(K::Simple, S::Territory, T::All, false, false, W::Zero, false, 6.5)),
    (&["agabutton", "aga-button", "aga_button", "aga button"],
        rule_set(K::Situational, S::Area, T::None, false, true, W::NMinusOne, true, 7.0)),
    (&["aga", "bga", "french"],
        rule_set(K::Situational, S::Area, T::None, false, false, W::NMinusOne, true, 7.5)),
    (&["nz", "newzealand", "new zealand", "new-zealand", "new_zealand"],
        rule_set(K::Situational, S::Area, T::None, true, false, W::Zero, true, 7.0)),
    (&["tromp-taylor", "tromp_taylor", "tromp taylor", "tromptaylor"], Rules::tromp_taylor()),
    (&["goe", "ing"],
        rule_set(K::Positional, S::Area, T::None, true, false, W::Zero, true, 7.5)),
];

/// The rules named `name` (lower-cased and trimmed), if it is a shorthand.
fn named_rules(name: &str) -> Option<Rules> {
    NAMED_RULES
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|&(_, rules)| rules)
}

fn parse_helper(orig: &str, allow_komi: bool) -> Result<Rules, RulesError> {
    let lower = orig.trim().to_ascii_lowercase();
    if let Some(r) = named_rules(&lower) {
        return Ok(r);
    }
    // As KataGo: JSON only when the untrimmed text starts with '{'.
    let mut rules = Rules::tromp_taylor();
    let (komi_given, tax_given) = if orig.starts_with('{') {
        parse_json(orig, allow_komi, &mut rules)?
    } else {
        parse_compact(orig, allow_komi, &mut rules)?
    };
    if !tax_given {
        rules.tax_rule = match rules.scoring_rule {
            ScoringRule::Territory => TaxRule::Seki,
            ScoringRule::Area => TaxRule::None,
        };
    }
    if !komi_given {
        rules.komi = Rules::default_komi(rules.scoring_rule, rules.has_button);
    }
    Ok(rules)
}

fn parse_json(orig: &str, allow_komi: bool, rules: &mut Rules) -> Result<(bool, bool), RulesError> {
    let unparsable = || RulesError::Unparsable(orig.to_string());
    let value: Value = serde_json::from_str(orig).map_err(|_| unparsable())?;
    let obj = value.as_object().ok_or_else(unparsable)?;
    let (mut komi_given, mut tax_given) = (false, false);
    for (key, v) in obj {
        let bad = || RulesError::BadValue {
            key: key.clone(),
            value: v.to_string(),
        };
        // KataGo reads these with `get<string>()`/`get<bool>()`: no coercion.
        let as_str = || v.as_str().ok_or_else(bad);
        let as_bool = || v.as_bool().ok_or_else(bad);
        match key.as_str() {
            "ko" => rules.ko_rule = KoRule::parse(as_str()?).ok_or_else(bad)?,
            "score" | "scoring" => {
                rules.scoring_rule = ScoringRule::parse(as_str()?).ok_or_else(bad)?
            }
            "tax" => {
                rules.tax_rule = TaxRule::parse(as_str()?).ok_or_else(bad)?;
                tax_given = true;
            }
            "suicide" => rules.multi_stone_suicide_legal = as_bool()?,
            "hasButton" => rules.has_button = as_bool()?,
            "whiteHandicapBonus" => {
                rules.white_handicap_bonus_rule =
                    WhiteHandicapBonusRule::parse(as_str()?).ok_or_else(bad)?
            }
            "friendlyPassOk" => rules.friendly_pass_ok = as_bool()?,
            "komi" => {
                if !allow_komi {
                    return Err(RulesError::UnknownKey(key.clone()));
                }
                let k = v.as_f64().ok_or_else(bad)? as f32;
                if !(MIN_USER_KOMI..=MAX_USER_KOMI).contains(&k) || !komi_is_int_or_half_int(k) {
                    return Err(RulesError::BadKomi(v.to_string()));
                }
                rules.komi = k;
                komi_given = true;
            }
            _ => return Err(RulesError::UnknownKey(key.clone())),
        }
    }
    Ok((komi_given, tax_given))
}

fn parse_compact(
    orig: &str,
    allow_komi: bool,
    rules: &mut Rules,
) -> Result<(bool, bool), RulesError> {
    let unparsable = || RulesError::Unparsable(orig.to_string());
    let mut s = orig.trim();
    if s.is_empty() {
        return Err(unparsable());
    }
    let (mut komi_given, mut tax_given) = (false, false);
    while !s.is_empty() {
        if strip(&mut s, "komi") {
            if !allow_komi {
                return Err(unparsable());
            }
            let end = s
                .find(|c: char| c.is_ascii_alphabetic() || c.is_ascii_whitespace())
                .unwrap_or(s.len());
            let k: f32 = s[..end].parse().map_err(|_| unparsable())?;
            if !k.is_finite() || !(-1e5..=1e5).contains(&k) {
                return Err(unparsable());
            }
            rules.komi = k;
            komi_given = true;
            s = s[end..].trim();
        } else if strip(&mut s, "ko") {
            rules.ko_rule = strip_choice(&mut s).ok_or_else(unparsable)?;
        } else if strip(&mut s, "scoring") || strip(&mut s, "score") {
            rules.scoring_rule = strip_choice(&mut s).ok_or_else(unparsable)?;
        } else if strip(&mut s, "tax") {
            rules.tax_rule = strip_choice(&mut s).ok_or_else(unparsable)?;
            tax_given = true;
        } else if strip(&mut s, "sui") {
            rules.multi_stone_suicide_legal = parse_flag(&mut s).ok_or_else(unparsable)?;
        } else if strip(&mut s, "button") {
            rules.has_button = parse_flag(&mut s).ok_or_else(unparsable)?;
        } else if strip(&mut s, "whb") {
            rules.white_handicap_bonus_rule = strip_choice(&mut s).ok_or_else(unparsable)?;
        } else if strip(&mut s, "fpok") {
            rules.friendly_pass_ok = parse_flag(&mut s).ok_or_else(unparsable)?;
        } else {
            return Err(unparsable());
        }
    }
    Ok((komi_given, tax_given))
}

/// Strips `prefix` from `s` and the blanks after it (KataGo trims after
/// every token it strips); false if `s` does not start with it.
fn strip(s: &mut &str, prefix: &str) -> bool {
    match s.strip_prefix(prefix) {
        Some(rest) => {
            *s = rest.trim();
            true
        }
        None => false,
    }
}

/// The value of the first of `choices` whose name `s` starts with, that
/// name stripped (see [`strip`]).
/// Strips the first of `T`'s names that `s` starts with.
fn strip_choice<T: Named>(s: &mut &str) -> Option<T> {
    T::ALL.iter().copied().find(|k| strip(s, k.name()))
}

fn parse_flag(s: &mut &str) -> Option<bool> {
    let v = match s.as_bytes().first()? {
        b'1' => true,
        b'0' => false,
        _ => return None,
    };
    *s = s[1..].trim();
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_names_match_katago() {
        let j = Rules::parse(" Japanese ").unwrap();
        assert_eq!(j, Rules::japanese());
        assert_eq!(Rules::parse("korean").unwrap(), Rules::japanese());
        let c = Rules::parse("chinese").unwrap();
        assert_eq!(c.white_handicap_bonus_rule, WhiteHandicapBonusRule::N);
        assert!(c.friendly_pass_ok);
        let ogs = Rules::parse("Chinese_KGS").unwrap();
        assert_eq!(ogs.ko_rule, KoRule::Positional);
        let aga = Rules::parse("aga").unwrap();
        assert_eq!(
            (aga.ko_rule, aga.white_handicap_bonus_rule),
            (KoRule::Situational, WhiteHandicapBonusRule::NMinusOne)
        );
        assert_eq!(Rules::parse("bga").unwrap(), aga);
        assert_eq!(Rules::parse("french").unwrap(), aga);
        let button = Rules::parse("aga-button").unwrap();
        assert!(button.has_button);
        assert_eq!(button.komi, 7.0);
        let nz = Rules::parse("new zealand").unwrap();
        assert!(nz.multi_stone_suicide_legal);
        assert_eq!(nz.komi, 7.0);
        let stone = Rules::parse("stone-scoring").unwrap();
        assert_eq!(stone.tax_rule, TaxRule::All);
        assert_eq!(Rules::parse("ancient_area").unwrap(), stone);
        let at = Rules::parse("ancient territory").unwrap();
        assert_eq!(
            (at.scoring_rule, at.tax_rule, at.komi),
            (ScoringRule::Territory, TaxRule::All, 6.5)
        );
        assert_eq!(Rules::parse("tromp-taylor").unwrap(), Rules::tromp_taylor());
        assert!(Rules::parse("ing").unwrap().friendly_pass_ok);
    }

    #[test]
    fn json_form_round_trips_and_defaults_like_katago() {
        let r = Rules::parse(
            r#"{"ko":"SIMPLE","scoring":"AREA","tax":"NONE","suicide":false,"hasButton":false,"whiteHandicapBonus":"0","friendlyPassOk":false}"#,
        )
        .unwrap();
        assert_eq!(r.ko_rule, KoRule::Simple);
        assert!(!r.multi_stone_suicide_legal);
        assert_eq!(r.komi, 7.5);
        // Territory without tax: tax SEKI, komi 6.5.
        let t = Rules::parse(r#"{"scoring":"TERRITORY"}"#).unwrap();
        assert_eq!(
            (t.tax_rule, t.komi, t.ko_rule),
            (TaxRule::Seki, 6.5, KoRule::Positional)
        );
        let b = Rules::parse(r#"{"hasButton":true}"#).unwrap();
        assert_eq!(b.komi, 7.0);
        let k = Rules::parse(r#"{"komi":-3}"#).unwrap();
        assert_eq!(k.komi, -3.0);
        for r in [
            Rules::japanese(),
            Rules::parse("aga-button").unwrap(),
            Rules::parse("chinese").unwrap(),
        ] {
            let text = r.to_json(true).to_string();
            assert_eq!(Rules::parse(&text).unwrap(), r, "{text}");
        }
        assert_eq!(
            Rules::japanese().to_json(false).to_string(),
            r#"{"friendlyPassOk":false,"hasButton":false,"ko":"SIMPLE","scoring":"TERRITORY","suicide":false,"tax":"SEKI","whiteHandicapBonus":"0"}"#
        );
    }

    #[test]
    fn json_errors_are_typed() {
        assert!(matches!(
            Rules::parse(r#"{"ko":"SUPER"}"#),
            Err(RulesError::BadValue { .. })
        ));
        assert!(matches!(
            Rules::parse(r#"{"colour":"x"}"#),
            Err(RulesError::UnknownKey(_))
        ));
        assert!(matches!(
            Rules::parse(r#"{"suicide":"true"}"#),
            Err(RulesError::BadValue { .. })
        ));
        assert!(matches!(
            Rules::parse(r#"{"komi":7.3}"#),
            Err(RulesError::BadKomi(_))
        ));
        assert!(matches!(
            Rules::parse(r#"{"komi":7}"#.replace('7', "700").as_str()),
            Err(RulesError::BadKomi(_))
        ));
        assert!(matches!(
            Rules::parse_without_komi(r#"{"komi":7}"#, 1.0),
            Err(RulesError::UnknownKey(_))
        ));
        assert!(matches!(
            Rules::parse("{not json"),
            Err(RulesError::Unparsable(_))
        ));
        assert!(matches!(Rules::parse(""), Err(RulesError::Unparsable(_))));
        assert!(matches!(
            Rules::parse("lasker"),
            Err(RulesError::Unparsable(_))
        ));
    }

    #[test]
    fn compact_form_round_trips() {
        let r = Rules::parse("koPOSITIONALscoreAREAtaxNONEsui1button1whbN-1fpok1").unwrap();
        assert_eq!(r.ko_rule, KoRule::Positional);
        assert!(r.has_button && r.friendly_pass_ok && r.multi_stone_suicide_legal);
        assert_eq!(
            r.white_handicap_bonus_rule,
            WhiteHandicapBonusRule::NMinusOne
        );
        assert_eq!(r.komi, 7.0);
        assert_eq!(
            r.to_compact_string(),
            "koPOSITIONALscoreAREAtaxNONEsui1button1whbN-1fpok1"
        );
        let t = Rules::parse("koSITUATIONALscoreTERRITORYtaxALLsui1").unwrap();
        assert_eq!((t.tax_rule, t.komi), (TaxRule::All, 6.5));
        let k = Rules::parse("koSIMPLEscoringAREAsui0komi5.5").unwrap();
        assert_eq!((k.komi, k.tax_rule), (5.5, TaxRule::None));
        assert_eq!(Rules::parse(&k.to_string()).unwrap(), k);
        assert!(Rules::parse_without_komi("koSIMPLEkomi5", 1.0).is_err());
        assert!(Rules::parse("koSIMPLEsui2").is_err());
        assert!(Rules::parse("koFOO").is_err());
    }

    #[test]
    fn nice_names() {
        assert_eq!(Rules::japanese().to_string_no_komi_maybe_nice(), "Japanese");
        assert_eq!(
            Rules::tromp_taylor().to_string_no_komi_maybe_nice(),
            "TrompTaylor"
        );
        let odd = Rules {
            has_button: true,
            ..Rules::japanese()
        };
        assert_eq!(
            odd.to_string_no_komi_maybe_nice(),
            "koSIMPLEscoreTERRITORYtaxSEKIsui0button1"
        );
    }

    #[test]
    fn integer_results() {
        assert!(!Rules::tromp_taylor().game_result_will_be_integer());
        // Integer komi plus the half-point button: half-integer results.
        assert!(!Rules::parse("aga-button")
            .unwrap()
            .game_result_will_be_integer());
        assert!(Rules {
            komi: 7.5,
            ..Rules::parse("aga-button").unwrap()
        }
        .game_result_will_be_integer());
        assert!(Rules {
            komi: 7.0,
            ..Rules::tromp_taylor()
        }
        .game_result_will_be_integer());
    }
}
