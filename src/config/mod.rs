//! Config files with KataGo's parameter names.
//!
//! A [`Config`] is a flat map from KataGo key (`maxVisits`,
//! `numSearchThreads`, `rules`...) to a value, loaded from a TOML file
//! (sections allowed, they only group keys) or from one of KataGo's own
//! `.cfg` files (`key = value` lines), then patched by `-override-config
//! key=value,...`. Typed getters check types and ranges and name the key and
//! its file in errors; every key read is recorded so that unused keys
//! (typos, mostly) can be reported as KataGo does.
//!
//! ```
//! use engine::config::Config;
//! let mut cfg = Config::from_toml_str("maxVisits = 500\nrules = \"japanese\"", "x.toml")?;
//! cfg.apply_overrides("numSearchThreads=4")?;
//! assert_eq!(cfg.get_i64("maxVisits", 1..=i64::MAX)?, 500);
//! assert_eq!(cfg.get_i64_or("numSearchThreads", 1, 1..=1024)?, 4);
//! assert_eq!(cfg.unused_keys(), vec!["rules".to_string()]);
//! # Ok::<(), engine::config::ConfigError>(())
//! ```

mod error;
mod katago_keys;
mod known_keys;
mod parse;
mod reference;
mod report;
mod setting;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::ops::RangeInclusive;
use std::path::Path;
use std::str::FromStr;

use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use error::ConfigError;
pub use katago_keys::{katago_has_key, KATAGO_KEYS};
pub use known_keys::{is_known_key, AUTO_AVOID_SIZED_KEYS, KNOWN_KEYS};
pub use parse::parse_overrides;
pub use reference::{render_reference, CommandSettings};
pub use report::{KeyProblem, KeyReport, Vocabulary};
pub use setting::{field_rows, json_row, number, read_fields, Field, Key, Kind, Row, Setting};

use parse::{Entry, Origin};

/// Keys that set the whole rules (`rules`) versus keys that set one part of
/// them: an override of one side removes the other side, as in KataGo, so
/// that `-override-config rules=japanese` works on a config that spells
/// out `koRule` etc.
const MUTEX_KEY_SETS: &[(&[&str], &[&str])] = &[(
    &["rules"],
    &[
        "koRule",
        "scoringRule",
        "multiStoneSuicideLegal",
        "taxRule",
        "hasButton",
        "whiteBonusPerHandicapStone",
        "friendlyPassOk",
        "whiteHandicapBonus",
    ],
)];

/// A three-way switch (`true`, `false` or `auto`), as KataGo's `enabled_t`
/// for keys such as `cleanupBeforePass` and `friendlyPass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enabled {
    /// Explicitly on.
    True,
    /// Explicitly off.
    False,
    /// Let the engine decide (usually from the rules).
    Auto,
}

impl Enabled {
    /// KataGo's `enabled_t::toString`: `true`, `false` or `auto`.
    pub fn as_str(self) -> &'static str {
        match self {
            Enabled::True => "true",
            Enabled::False => "false",
            Enabled::Auto => "auto",
        }
    }
}

/// A loaded config: KataGo keys to values, plus the record of which keys
/// have been read.
///
/// Getters take `&self` and record the key as used, so a config can be
/// shared between the parts of the program that read it.
#[derive(Debug)]
pub struct Config {
    file: String,
    entries: BTreeMap<String, Entry>,
    used: Mutex<BTreeSet<String>>,
}

impl Clone for Config {
    fn clone(&self) -> Self {
        Config {
            file: self.file.clone(),
            entries: self.entries.clone(),
            used: Mutex::new(self.used.lock().clone()),
        }
    }
}

impl Default for Config {
    /// An empty config (every key absent), as when no `-config` is given.
    fn default() -> Self {
        Config::from_entries("(no config file)".to_string(), BTreeMap::new())
    }
}

impl Config {
    fn from_entries(file: String, entries: BTreeMap<String, Entry>) -> Config {
        Config {
            file,
            entries,
            used: Mutex::new(BTreeSet::new()),
        }
    }

    /// Loads a config file: TOML when the name ends in `.toml`, otherwise
    /// KataGo's `.cfg` format (so KataGo users' configs work as they are).
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: name.clone(),
            source,
        })?;
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
        {
            Config::from_toml_str(&text, &name)
        } else {
            Config::from_cfg_str(&text, &name)
        }
    }

    /// Parses TOML text; `name` is used in messages.
    pub fn from_toml_str(text: &str, name: &str) -> Result<Config, ConfigError> {
        Ok(Config::from_entries(
            name.to_string(),
            parse::parse_toml(text, name)?,
        ))
    }

    /// Parses KataGo `.cfg` text; `name` is used in messages.
    pub fn from_cfg_str(text: &str, name: &str) -> Result<Config, ConfigError> {
        Ok(Config::from_entries(
            name.to_string(),
            parse::parse_cfg(text, name)?,
        ))
    }

    /// Applies a `-override-config` argument (`key=value,key2=value2`; an
    /// empty value deletes the key). Setting `rules` drops the individual
    /// rule keys (`koRule`...) and the reverse, as KataGo does.
    pub fn apply_overrides(&mut self, text: &str) -> Result<(), ConfigError> {
        let overrides = parse_overrides(text)?;
        for (whole, parts) in MUTEX_KEY_SETS {
            let has = |set: &[&str]| overrides.iter().any(|(k, _)| set.contains(&k.as_str()));
            let (has_whole, has_parts) = (has(whole), has(parts));
            if has_whole {
                parts.iter().for_each(|k| {
                    self.entries.remove(*k);
                });
            }
            if has_parts {
                whole.iter().for_each(|k| {
                    self.entries.remove(*k);
                });
            }
        }
        for (key, value) in overrides {
            match value {
                None => {
                    self.entries.remove(&key);
                }
                Some(value) => self.set_with_origin(key, value, Origin::Override),
            }
        }
        if !self.file.ends_with(" and/or -override-config") {
            self.file.push_str(" and/or -override-config");
        }
        Ok(())
    }

    /// Sets one key, as an override would.
    pub fn set(&mut self, key: &str, value: toml::Value) {
        self.set_with_origin(key.to_string(), value, Origin::Override);
    }

    fn set_with_origin(&mut self, key: String, value: toml::Value, origin: Origin) {
        // Overrides are typed from bare text, so a string getter must still
        // see text (`logDir=2024` is a directory name, not a number).
        let raw = match &value {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                Some(value.to_string())
            }
            _ => None,
        };
        self.entries.insert(key, Entry { value, raw, origin });
    }

    /// The file name (with `and/or -override-config` once overridden), as
    /// used in messages.
    pub fn file_name(&self) -> &str {
        &self.file
    }

    /// Removes every present key for which `drop` is true, as if the file
    /// had not set it; returns their names, sorted.
    pub fn remove_keys_where(&mut self, drop: impl Fn(&str) -> bool) -> Vec<String> {
        let gone: Vec<String> = self.entries.keys().filter(|k| drop(k)).cloned().collect();
        for key in &gone {
            self.entries.remove(key);
        }
        gone
    }

    /// Whether the key is present. Does not count as using it.
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Whether any of the keys is present.
    pub fn contains_any(&self, keys: &[&str]) -> bool {
        keys.iter().any(|k| self.contains(k))
    }

    /// All keys present, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Records a key as used without reading it through a getter.
    pub fn mark_used(&self, key: &str) {
        if self.entries.contains_key(key) {
            self.used.lock().insert(key.to_string());
        }
    }

    /// Records every present key that starts with `prefix` as used.
    pub fn mark_used_with_prefix(&self, prefix: &str) {
        let mut used = self.used.lock();
        for key in self.entries.keys().filter(|k| k.starts_with(prefix)) {
            used.insert(key.clone());
        }
    }

    /// Records as used here every key that `copy` (a clone of this
    /// config with some keys set differently, as a match bot's own
    /// precision) had read: the copy does the reading, this config makes
    /// the report of unused keys.
    pub fn mark_used_as_in(&self, copy: &Config) {
        let read = copy.used.lock().clone();
        let mut used = self.used.lock();
        used.extend(read.into_iter().filter(|k| self.entries.contains_key(k)));
    }

    /// Present keys that no getter has read, sorted.
    pub fn unused_keys(&self) -> Vec<String> {
        let used = self.used.lock();
        self.entries
            .keys()
            .filter(|k| !used.contains(*k))
            .cloned()
            .collect()
    }

    /// Present keys that KataGo does not know (see [`KNOWN_KEYS`]).
    pub fn unknown_keys(&self) -> Vec<String> {
        self.keys()
            .filter(|k| !is_known_key(k))
            .map(str::to_string)
            .collect()
    }

    fn entry(&self, key: &str) -> Result<&Entry, ConfigError> {
        let entry = self.entries.get(key).ok_or_else(|| ConfigError::Missing {
            key: key.to_string(),
            file: self.file.clone(),
        })?;
        self.used.lock().insert(key.to_string());
        Ok(entry)
    }

    /// Where `key` was set, as errors and reports name it.
    fn origin_of(&self, key: &str) -> String {
        match self.entries.get(key) {
            Some(entry) => self.origin(entry),
            None => format!("config file '{}'", self.source_file()),
        }
    }

    /// The file the config was loaded from (without the override note).
    fn source_file(&self) -> &str {
        self.file
            .strip_suffix(" and/or -override-config")
            .unwrap_or(&self.file)
    }

    fn origin(&self, entry: &Entry) -> String {
        match entry.origin {
            Origin::File { line: Some(line) } => {
                format!("config file '{}', line {line}", self.source_file())
            }
            Origin::File { line: None } => format!("config file '{}'", self.source_file()),
            Origin::Override => "-override-config".to_string(),
        }
    }

    fn wrong_type(&self, key: &str, entry: &Entry, expected: &str) -> ConfigError {
        ConfigError::WrongType {
            key: key.to_string(),
            origin: self.origin(entry),
            expected: expected.to_string(),
            found: shown(entry),
        }
    }

    fn out_of_range<T: Display>(
        &self,
        key: &str,
        entry: &Entry,
        range: &RangeInclusive<T>,
    ) -> ConfigError {
        ConfigError::OutOfRange {
            key: key.to_string(),
            origin: self.origin(entry),
            value: shown(entry),
            min: range.start().to_string(),
            max: range.end().to_string(),
        }
    }

    /// A string value; for `.cfg` files and overrides, the text exactly as
    /// written whatever it looks like.
    pub fn get_string(&self, key: &str) -> Result<String, ConfigError> {
        let entry = self.entry(key)?;
        match (&entry.raw, &entry.value) {
            (Some(raw), _) => Ok(raw.clone()),
            (None, toml::Value::String(s)) => Ok(s.clone()),
            _ => Err(self.wrong_type(key, entry, "a string")),
        }
    }

    /// A boolean (`true`/`false`).
    pub fn get_bool(&self, key: &str) -> Result<bool, ConfigError> {
        let entry = self.entry(key)?;
        match entry.value {
            toml::Value::Boolean(b) => Ok(b),
            _ => Err(self.wrong_type(key, entry, "a boolean (true or false)")),
        }
    }

    /// A number within `range` (integers are accepted; NaN never is).
    pub fn get_f64(&self, key: &str, range: RangeInclusive<f64>) -> Result<f64, ConfigError> {
        let entry = self.entry(key)?;
        let x = match entry.value {
            toml::Value::Float(x) => x,
            toml::Value::Integer(i) => i as f64,
            _ => return Err(self.wrong_type(key, entry, "a number")),
        };
        if !range.contains(&x) {
            return Err(self.out_of_range(key, entry, &range));
        }
        Ok(x)
    }

    /// An integer within `range` (a float with no fractional part, such as
    /// `1e6`, is accepted).
    pub fn get_i64(&self, key: &str, range: RangeInclusive<i64>) -> Result<i64, ConfigError> {
        let entry = self.entry(key)?;
        let x = match entry.value {
            toml::Value::Integer(i) => i,
            // 2^63 itself is out of range, hence the strict upper bound.
            toml::Value::Float(x) if x.fract() == 0.0 && x.abs() < 9.223_372_036_854_776e18 => {
                x as i64
            }
            _ => return Err(self.wrong_type(key, entry, "an integer")),
        };
        if !range.contains(&x) {
            return Err(self.out_of_range(key, entry, &range));
        }
        Ok(x)
    }

    /// A string that must be one of `choices` (exact match); returns the
    /// matching choice.
    pub fn get_enum<'a>(&self, key: &str, choices: &[&'a str]) -> Result<&'a str, ConfigError> {
        let value = self.get_string(key)?;
        choices
            .iter()
            .find(|c| **c == value)
            .copied()
            .ok_or_else(|| {
                let entry = &self.entries[key];
                ConfigError::NotOneOf {
                    key: key.to_string(),
                    origin: self.origin(entry),
                    value,
                    choices: choices.join("|"),
                }
            })
    }

    /// `true`, `false` or `auto` (any case), as KataGo's `getEnabled`.
    pub fn get_enabled(&self, key: &str) -> Result<Enabled, ConfigError> {
        let entry = self.entry(key)?;
        match &entry.value {
            toml::Value::Boolean(true) => Ok(Enabled::True),
            toml::Value::Boolean(false) => Ok(Enabled::False),
            toml::Value::String(s) if s.trim().eq_ignore_ascii_case("auto") => Ok(Enabled::Auto),
            _ => Err(self.wrong_type(key, entry, "true, false or auto")),
        }
    }

    /// A value parsed from its string form by `T::from_str` (rules, player
    /// names...); `expected` describes it in the error.
    pub fn get_parsed<T>(&self, key: &str, expected: &str) -> Result<T, ConfigError>
    where
        T: FromStr,
        T::Err: Display,
    {
        let entry = self.entry(key)?;
        let text = entry.raw.clone().unwrap_or_else(|| match &entry.value {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        text.parse().map_err(|e: T::Err| ConfigError::Invalid {
            key: key.to_string(),
            origin: self.origin(entry),
            value: text.clone(),
            expected: expected.to_string(),
            message: e.to_string(),
        })
    }

    /// A list of strings: a TOML array of strings, or one comma-separated
    /// string (KataGo's form); items are trimmed and empty ones dropped.
    pub fn get_strings(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        let entry = self.entry(key)?;
        let items: Vec<String> = match (&entry.raw, &entry.value) {
            (Some(raw), _) => raw.split(',').map(str::to_string).collect(),
            (None, toml::Value::String(s)) => s.split(',').map(str::to_string).collect(),
            (None, toml::Value::Array(a)) => a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s.clone()),
                    _ => Err(self.wrong_type(key, entry, "a list of strings")),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(self.wrong_type(key, entry, "a list of strings")),
        };
        Ok(items
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect())
    }

    /// A list of numbers in `range`: a TOML array or a comma-separated string.
    pub fn get_f64s(&self, key: &str, range: RangeInclusive<f64>) -> Result<Vec<f64>, ConfigError> {
        self.get_list(key, "a list of numbers", |v| match v {
            toml::Value::Float(x) if range.contains(x) => Some(*x),
            toml::Value::Integer(i) if range.contains(&(*i as f64)) => Some(*i as f64),
            _ => None,
        })
        .map_err(|e| self.range_hint(e, &range))
    }

    /// A list of integers in `range`: a TOML array or a comma-separated string.
    pub fn get_i64s(&self, key: &str, range: RangeInclusive<i64>) -> Result<Vec<i64>, ConfigError> {
        self.get_list(key, "a list of integers", |v| match v {
            toml::Value::Integer(i) if range.contains(i) => Some(*i),
            _ => None,
        })
        .map_err(|e| self.range_hint(e, &range))
    }

    fn range_hint<T: Display>(&self, e: ConfigError, range: &RangeInclusive<T>) -> ConfigError {
        match e {
            ConfigError::WrongType {
                key,
                origin,
                expected,
                found,
            } => ConfigError::WrongType {
                key,
                origin,
                expected: format!(
                    "{expected} in the range {} to {}",
                    range.start(),
                    range.end()
                ),
                found,
            },
            e => e,
        }
    }

    fn get_list<T>(
        &self,
        key: &str,
        expected: &str,
        item: impl Fn(&toml::Value) -> Option<T>,
    ) -> Result<Vec<T>, ConfigError> {
        let entry = self.entry(key)?;
        let values: Vec<toml::Value> = match (&entry.raw, &entry.value) {
            (_, toml::Value::Array(a)) => a.clone(),
            (Some(s), _) | (None, toml::Value::String(s)) => s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(parse::type_scalar)
                .collect(),
            (None, v) => vec![v.clone()],
        };
        values
            .iter()
            .map(|v| item(v).ok_or_else(|| self.wrong_type(key, entry, expected)))
            .collect()
    }

    /// [`Config::get_string`], or `default` when the key is absent.
    pub fn get_string_or(&self, key: &str, default: &str) -> Result<String, ConfigError> {
        if self.contains(key) {
            self.get_string(key)
        } else {
            Ok(default.to_string())
        }
    }

    /// [`Config::get_bool`], or `default` when the key is absent.
    pub fn get_bool_or(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        if self.contains(key) {
            self.get_bool(key)
        } else {
            Ok(default)
        }
    }

    /// [`Config::get_f64`], or `default` when the key is absent (the default
    /// is not range-checked).
    pub fn get_f64_or(
        &self,
        key: &str,
        default: f64,
        range: RangeInclusive<f64>,
    ) -> Result<f64, ConfigError> {
        if self.contains(key) {
            self.get_f64(key, range)
        } else {
            Ok(default)
        }
    }

    /// [`Config::get_i64`], or `default` when the key is absent (the default
    /// is not range-checked).
    pub fn get_i64_or(
        &self,
        key: &str,
        default: i64,
        range: RangeInclusive<i64>,
    ) -> Result<i64, ConfigError> {
        if self.contains(key) {
            self.get_i64(key, range)
        } else {
            Ok(default)
        }
    }

    /// The whole config as one flat JSON object (key to value), for filling
    /// a serde struct with `serde_json::from_value`. Floats without a
    /// fractional part become integers so that integer fields accept `1e6`;
    /// float fields accept integers anyway. Marks nothing as used; see
    /// [`Config::deserialize`] for that.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.entries
                .iter()
                .map(|(k, e)| (k.clone(), toml_to_json(&e.value)))
                .collect(),
        )
    }

    /// Fills a parameter struct (serde, camelCase KataGo names, missing
    /// fields defaulted with `#[serde(default)]`) from the config, and
    /// marks as used every key that is a field of `T` (found by serialising
    /// the result). Keys that are not fields are left for
    /// [`Config::unused_keys`]. On a type error, the message names the key.
    pub fn deserialize<T>(&self) -> Result<T, ConfigError>
    where
        T: DeserializeOwned + Serialize,
    {
        let view = self.to_json_value();
        let value: T = match serde_json::from_value(view.clone()) {
            Ok(v) => v,
            Err(e) => return Err(self.find_bad_key::<T>(&view, e)),
        };
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&value) {
            let mut used = self.used.lock();
            for key in fields.keys().filter(|k| self.entries.contains_key(*k)) {
                used.insert(key.clone());
            }
        }
        Ok(value)
    }

    /// serde_json's errors do not say which key was wrong; try the keys one
    /// at a time to find it (only on the error path, so the cost is fine).
    fn find_bad_key<T: DeserializeOwned>(
        &self,
        view: &serde_json::Value,
        err: serde_json::Error,
    ) -> ConfigError {
        if let serde_json::Value::Object(map) = view {
            for (key, value) in map {
                let single = serde_json::Value::Object(
                    std::iter::once((key.clone(), value.clone())).collect(),
                );
                if let Err(e) = serde_json::from_value::<T>(single) {
                    let origin = self.origin(&self.entries[key]);
                    return ConfigError::Deserialize {
                        file: self.file.clone(),
                        message: format!("key '{key}' in {origin}: {e}"),
                    };
                }
            }
        }
        ConfigError::Deserialize {
            file: self.file.clone(),
            message: err.to_string(),
        }
    }
}

/// A value as the user would have written it, for messages.
fn shown(entry: &Entry) -> String {
    match (&entry.raw, &entry.value) {
        (Some(raw), _) => format!("'{raw}'"),
        (None, toml::Value::String(s)) => format!("'{s}'"),
        (None, v) => v.to_string(),
    }
}

fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s.clone()),
        toml::Value::Integer(i) => J::from(*i),
        toml::Value::Float(x) if x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15 => {
            J::from(*x as i64)
        }
        toml::Value::Float(x) => serde_json::Number::from_f64(*x).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(*b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(a) => J::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => J::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests;
