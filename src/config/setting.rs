//! One declaration per setting: its key, type, default, range and doc line
//! in one value, which both reads the setting from a [`Config`] and
//! describes it in the configuration reference (`docs/configuration.md`,
//! [`super::reference`]). A key, its default and its range therefore stand
//! in one place and cannot drift from what the reference says.
//!
//! Three forms, all built on [`Setting`]:
//! - [`Key`]: one setting read on its own (`MAX_TIME.read(cfg)?`), typed by
//!   what it reads;
//! - [`Field`]: one scalar setting of a settings struct, with the field it
//!   fills; a command's table of them is read by [`read_fields`];
//! - a bare [`Setting`], for keys whose reading is more than one getter
//!   (rule keys, lists) but that the reference must still list.

use std::marker::PhantomData;
use std::ops::RangeInclusive;

use super::{Config, ConfigError};

/// What a setting holds, with its default (`None`: no default, the key is
/// optional or required as its reader says) and the values accepted.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A real number.
    Real {
        /// The value when the key is absent.
        default: Option<f64>,
        /// The values accepted.
        range: RangeInclusive<f64>,
    },
    /// A whole number.
    Int {
        /// The value when the key is absent.
        default: Option<i64>,
        /// The values accepted.
        range: RangeInclusive<i64>,
    },
    /// `true` or `false`.
    Bool {
        /// The value when the key is absent.
        default: Option<bool>,
    },
    /// Text.
    Text {
        /// The value when the key is absent.
        default: Option<&'static str>,
    },
    /// A list of real numbers, each in `range`.
    Reals {
        /// The value when the key is absent, in words.
        default: &'static str,
        /// The values each item may take.
        range: RangeInclusive<f64>,
    },
    /// Anything else (lists, rules, `auto`/`true`/`false`...), described in
    /// words because its reader is more than one getter.
    Other {
        /// The type, in words (`list of integers`, `rules`).
        ty: &'static str,
        /// The default, in words.
        default: &'static str,
        /// The values accepted, in words (empty: any of the type).
        range: &'static str,
    },
}

/// One setting: its key and what it holds, a one-line doc, and how it
/// compares with KataGo's key of the same name.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The key (KataGo's name where KataGo has the setting).
    pub key: &'static str,
    /// Its type, default and range.
    pub kind: Kind,
    /// One line on what it does (empty: not written yet).
    pub doc: &'static str,
    /// How it compares with KataGo's key of that name, where known (empty:
    /// not compared). Whether KataGo has the key at all is not declared
    /// but looked up ([`super::katago_has_key`]).
    pub katago: &'static str,
}

impl Setting {
    /// A setting of `kind`, without doc yet.
    pub const fn new(key: &'static str, kind: Kind) -> Setting {
        Setting {
            key,
            kind,
            doc: "",
            katago: "",
        }
    }

    /// The same setting with its doc line.
    pub const fn doc(mut self, doc: &'static str) -> Setting {
        self.doc = doc;
        self
    }

    /// The same setting with a note on how it compares with KataGo's.
    pub const fn katago(mut self, note: &'static str) -> Setting {
        self.katago = note;
        self
    }

    /// The setting as a line of the reference (default and range in words).
    pub fn row(&self) -> Row {
        let (ty, default, range) = match &self.kind {
            Kind::Real { default, range } => (
                "real".to_string(),
                default.map_or("none".to_string(), number),
                format!("{} to {}", number(*range.start()), number(*range.end())),
            ),
            Kind::Int { default, range } => (
                "integer".to_string(),
                default.map_or("none".to_string(), integer),
                format!("{} to {}", integer(*range.start()), integer(*range.end())),
            ),
            Kind::Bool { default } => (
                "boolean".to_string(),
                default.map_or("none".to_string(), |d| d.to_string()),
                String::new(),
            ),
            Kind::Text { default } => (
                "text".to_string(),
                default.map_or("none".to_string(), |d| format!("`{d}`")),
                String::new(),
            ),
            Kind::Reals { default, range } => (
                "list of reals".to_string(),
                default.to_string(),
                format!(
                    "each {} to {}",
                    number(*range.start()),
                    number(*range.end())
                ),
            ),
            Kind::Other { ty, default, range } => {
                (ty.to_string(), default.to_string(), range.to_string())
            }
        };
        Row {
            key: self.key.to_string(),
            ty,
            default,
            range,
            doc: self.doc.to_string(),
            katago: self.katago.to_string(),
        }
    }
}

/// A number as the reference writes it: plain when short, `1e10` when huge.
pub fn number(x: f64) -> String {
    if x.is_finite() && x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// An integer as the reference writes it: the extremes of `i64` by name,
/// powers of two past a million as `2^n`.
fn integer(n: i64) -> String {
    match n {
        i64::MAX => "i64 max".to_string(),
        i64::MIN => "i64 min".to_string(),
        n if n > 1_000_000 && (n as u64).is_power_of_two() => format!("2^{}", n.trailing_zeros()),
        n => n.to_string(),
    }
}

/// A line of the configuration reference for a setting whose default is a
/// JSON value (the search parameters' defaults per program): numbers show
/// their range `(min, max)`; the doc (a doc comment's lines) goes on one line.
pub fn json_row(
    key: &str,
    ty: &str,
    (min, max): (f64, f64),
    default: Option<serde_json::Value>,
    doc: &str,
) -> Row {
    let numeric = matches!(ty, "real" | "integer");
    let default = match default {
        Some(serde_json::Value::Number(n)) => n.as_f64().map_or(n.to_string(), number),
        Some(serde_json::Value::String(s)) if s.is_empty() => "none".to_string(),
        Some(serde_json::Value::String(s)) => format!("`{s}`"),
        Some(v) => v.to_string(),
        None => "none".to_string(),
    };
    Row {
        key: key.to_string(),
        ty: ty.to_string(),
        default,
        range: if numeric {
            format!("{} to {}", number(min), number(max))
        } else {
            String::new()
        },
        // Rustdoc's links (`[`x`]`) mean nothing in the reference.
        doc: doc
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("[`", "`")
            .replace("`]", "`"),
        katago: String::new(),
    }
}

/// One line of the configuration reference, for one command: what
/// [`Setting::row`] gives, or what a table with defaults per program (the
/// search parameters) builds itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The key.
    pub key: String,
    /// The type, in words.
    pub ty: String,
    /// The default, in words.
    pub default: String,
    /// The values accepted, in words.
    pub range: String,
    /// What it does.
    pub doc: String,
    /// How it compares with KataGo's (empty: not compared).
    pub katago: String,
}

/// One setting read on its own, typed by what [`Key::read`] returns:
/// `Key<f64>` (a number with a default), `Key<Option<f64>>` (a number or
/// nothing), and so on.
#[derive(Debug, Clone, PartialEq)]
pub struct Key<T> {
    setting: Setting,
    // `fn() -> T`: the key holds no `T`, so it is `Send`/`Sync`/const-able
    // whatever `T` is.
    read_as: PhantomData<fn() -> T>,
}

impl<T> Key<T> {
    const fn of(key: &'static str, kind: Kind) -> Key<T> {
        Key {
            setting: Setting::new(key, kind),
            read_as: PhantomData,
        }
    }

    /// The same key with its doc line.
    pub const fn doc(mut self, doc: &'static str) -> Key<T> {
        self.setting.doc = doc;
        self
    }

    /// The same key with a note on how it compares with KataGo's.
    pub const fn katago(mut self, note: &'static str) -> Key<T> {
        self.setting.katago = note;
        self
    }

    /// The key's name.
    pub const fn name(&self) -> &'static str {
        self.setting.key
    }

    /// Its description.
    pub const fn setting(&self) -> &Setting {
        &self.setting
    }

    /// Whether the config sets it.
    pub fn is_set(&self, cfg: &Config) -> bool {
        cfg.contains(self.setting.key)
    }
}

impl Key<f64> {
    /// A real number, `default` when absent.
    pub const fn real(key: &'static str, default: f64, range: RangeInclusive<f64>) -> Self {
        Key::of(
            key,
            Kind::Real {
                default: Some(default),
                range,
            },
        )
    }

    /// The value, or the default when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<f64, ConfigError> {
        self.read_named(cfg, self.setting.key)
    }

    /// The value under `name`, a form of this key (with a bot's index or a
    /// board size appended, say), or the default when it is absent.
    pub fn read_named(&self, cfg: &Config, name: &str) -> Result<f64, ConfigError> {
        match &self.setting.kind {
            Kind::Real { default, range } => {
                cfg.get_f64_or(name, default.unwrap_or(0.0), range.clone())
            }
            _ => unreachable!("Key<f64> is built by Key::real only"),
        }
    }
}

impl Key<Option<f64>> {
    /// A real number with no default.
    pub const fn opt_real(key: &'static str, range: RangeInclusive<f64>) -> Self {
        Key::of(
            key,
            Kind::Real {
                default: None,
                range,
            },
        )
    }

    /// The value, or `None` when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<Option<f64>, ConfigError> {
        if cfg.contains(self.setting.key) {
            self.require_named(cfg, self.setting.key).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The value under `name` (a form of this key), which must be set.
    pub fn require_named(&self, cfg: &Config, name: &str) -> Result<f64, ConfigError> {
        match &self.setting.kind {
            Kind::Real { range, .. } => cfg.get_f64(name, range.clone()),
            _ => unreachable!("Key<Option<f64>> is built by Key::opt_real only"),
        }
    }
}

impl Key<i64> {
    /// A whole number, `default` when absent.
    pub const fn int(key: &'static str, default: i64, range: RangeInclusive<i64>) -> Self {
        Key::of(
            key,
            Kind::Int {
                default: Some(default),
                range,
            },
        )
    }

    /// The value, or the default when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<i64, ConfigError> {
        self.read_named(cfg, self.setting.key)
    }

    /// The value under `name` (a form of this key), or the default when it
    /// is absent.
    pub fn read_named(&self, cfg: &Config, name: &str) -> Result<i64, ConfigError> {
        match &self.setting.kind {
            Kind::Int { default, range } => {
                cfg.get_i64_or(name, default.unwrap_or(0), range.clone())
            }
            _ => unreachable!("Key<i64> is built by Key::int only"),
        }
    }
}

impl Key<Option<i64>> {
    /// A whole number with no default.
    pub const fn opt_int(key: &'static str, range: RangeInclusive<i64>) -> Self {
        Key::of(
            key,
            Kind::Int {
                default: None,
                range,
            },
        )
    }

    /// The value, or `None` when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<Option<i64>, ConfigError> {
        if cfg.contains(self.setting.key) {
            self.require_named(cfg, self.setting.key).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The value under `name` (a form of this key), which must be set.
    pub fn require_named(&self, cfg: &Config, name: &str) -> Result<i64, ConfigError> {
        match &self.setting.kind {
            Kind::Int { range, .. } => cfg.get_i64(name, range.clone()),
            _ => unreachable!("Key<Option<i64>> is built by Key::opt_int only"),
        }
    }

    /// The value, which must lie in `range` (narrower than the key's, for
    /// a reader that takes fewer values: one backend, say), or `None` when
    /// the key is absent.
    pub fn read_within(
        &self,
        cfg: &Config,
        range: RangeInclusive<i64>,
    ) -> Result<Option<i64>, ConfigError> {
        if cfg.contains(self.setting.key) {
            cfg.get_i64(self.setting.key, range).map(Some)
        } else {
            Ok(None)
        }
    }
}

impl Key<bool> {
    /// `true` or `false`, `default` when absent.
    pub const fn flag(key: &'static str, default: bool) -> Self {
        Key::of(
            key,
            Kind::Bool {
                default: Some(default),
            },
        )
    }

    /// The value, or the default when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<bool, ConfigError> {
        match &self.setting.kind {
            Kind::Bool { default } => cfg.get_bool_or(self.setting.key, default.unwrap_or(false)),
            _ => unreachable!("Key<bool> is built by Key::flag only"),
        }
    }
}

impl Key<Option<bool>> {
    /// `true` or `false` with no default (the reader's default applies).
    pub const fn opt_flag(key: &'static str) -> Self {
        Key::of(key, Kind::Bool { default: None })
    }

    /// The value, or `None` when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<Option<bool>, ConfigError> {
        if cfg.contains(self.setting.key) {
            cfg.get_bool(self.setting.key).map(Some)
        } else {
            Ok(None)
        }
    }
}

impl Key<super::Enabled> {
    /// `true`, `false` or `auto` (any case), `auto` when absent.
    pub const fn enabled(key: &'static str) -> Self {
        Key::of(
            key,
            Kind::Other {
                ty: "auto, true or false",
                default: "auto",
                range: "",
            },
        )
    }

    /// The value, or `auto` when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<super::Enabled, ConfigError> {
        self.read_named(cfg, self.setting.key)
    }

    /// The value under `name` (a form of this key: KataGo's `-0` per-model
    /// suffix, say), or `auto` when it is absent.
    pub fn read_named(&self, cfg: &Config, name: &str) -> Result<super::Enabled, ConfigError> {
        if cfg.contains(name) {
            cfg.get_enabled(name)
        } else {
            Ok(super::Enabled::Auto)
        }
    }
}

impl Key<String> {
    /// Text, `default` when absent.
    pub const fn text(key: &'static str, default: &'static str) -> Self {
        Key::of(
            key,
            Kind::Text {
                default: Some(default),
            },
        )
    }

    /// The value, or the default when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<String, ConfigError> {
        match &self.setting.kind {
            Kind::Text { default } => cfg.get_string_or(self.setting.key, default.unwrap_or("")),
            _ => unreachable!("Key<String> is built by Key::text only"),
        }
    }
}

impl Key<Option<String>> {
    /// Text with no default.
    pub const fn opt_text(key: &'static str) -> Self {
        Key::of(key, Kind::Text { default: None })
    }

    /// A value parsed from text by its type's `FromStr` ([`Key::read_parsed`]):
    /// `ty` names the values accepted and `default` the value when absent, in
    /// words.
    pub const fn parsed(key: &'static str, ty: &'static str, default: &'static str) -> Self {
        Key::of(
            key,
            Kind::Other {
                ty,
                default,
                range: "",
            },
        )
    }

    /// The value parsed as `T` (the error names `expected`), or `None`
    /// when the key is absent.
    pub fn read_parsed<T>(&self, cfg: &Config, expected: &str) -> Result<Option<T>, ConfigError>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        if cfg.contains(self.setting.key) {
            cfg.get_parsed(self.setting.key, expected).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The value, or `None` when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<Option<String>, ConfigError> {
        self.read_named(cfg, self.setting.key)
    }

    /// The value under `name` (a form of this key: with a bot's index, say),
    /// or `None` when it is absent.
    pub fn read_named(&self, cfg: &Config, name: &str) -> Result<Option<String>, ConfigError> {
        if cfg.contains(name) {
            cfg.get_string(name).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The value, which must be one of `choices` (exact match), or `None`
    /// when the key is absent.
    pub fn read_choice<'a>(
        &self,
        cfg: &Config,
        choices: &[&'a str],
    ) -> Result<Option<&'a str>, ConfigError> {
        if cfg.contains(self.setting.key) {
            cfg.get_enum(self.setting.key, choices).map(Some)
        } else {
            Ok(None)
        }
    }
}

impl Key<Option<Vec<f64>>> {
    /// A list of real numbers, each in `range`, with no default (`default`
    /// says in words what its reader does without it).
    pub const fn reals(
        key: &'static str,
        default: &'static str,
        range: RangeInclusive<f64>,
    ) -> Self {
        Key::of(key, Kind::Reals { default, range })
    }

    /// The items, or `None` when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<Option<Vec<f64>>, ConfigError> {
        match &self.setting.kind {
            Kind::Reals { range, .. } if cfg.contains(self.setting.key) => {
                cfg.get_f64s(self.setting.key, range.clone()).map(Some)
            }
            Kind::Reals { .. } => Ok(None),
            _ => unreachable!("Key<Option<Vec<f64>>> is built by Key::reals only"),
        }
    }
}

impl Key<Vec<String>> {
    /// A list of text (a TOML array or KataGo's comma-separated values),
    /// empty when absent; `default` says in words what empty means.
    pub const fn texts(key: &'static str, default: &'static str) -> Self {
        Key::of(
            key,
            Kind::Other {
                ty: "list of text",
                default,
                range: "",
            },
        )
    }

    /// The items, or none when the key is absent.
    pub fn read(&self, cfg: &Config) -> Result<Vec<String>, ConfigError> {
        self.read_named(cfg, self.setting.key)
    }

    /// The items under `name` (a form of this key), or none when absent.
    pub fn read_named(&self, cfg: &Config, name: &str) -> Result<Vec<String>, ConfigError> {
        if cfg.contains(name) {
            cfg.get_strings(name)
        } else {
            Ok(Vec::new())
        }
    }
}

/// How a [`Field`] stores its value into the settings struct `S`.
enum Store<S> {
    F64(fn(&mut S, f64)),
    I64(fn(&mut S, i64)),
    Bool(fn(&mut S, bool)),
}

/// One scalar setting of a command's settings struct `S`: the setting and
/// the field it fills. A command's settings are read by one table of these
/// ([`read_fields`]), so the table is also the list of the keys it reads.
pub struct Field<S> {
    setting: Setting,
    store: Store<S>,
}

impl<S> Field<S> {
    /// A real-valued setting.
    pub const fn f64(
        key: &'static str,
        default: f64,
        range: RangeInclusive<f64>,
        set: fn(&mut S, f64),
    ) -> Field<S> {
        let kind = Kind::Real {
            default: Some(default),
            range,
        };
        Field {
            setting: Setting::new(key, kind),
            store: Store::F64(set),
        }
    }

    /// A whole-number setting.
    pub const fn i64(
        key: &'static str,
        default: i64,
        range: RangeInclusive<i64>,
        set: fn(&mut S, i64),
    ) -> Field<S> {
        let kind = Kind::Int {
            default: Some(default),
            range,
        };
        Field {
            setting: Setting::new(key, kind),
            store: Store::I64(set),
        }
    }

    /// A boolean setting.
    pub const fn bool(key: &'static str, default: bool, set: fn(&mut S, bool)) -> Field<S> {
        let kind = Kind::Bool {
            default: Some(default),
        };
        Field {
            setting: Setting::new(key, kind),
            store: Store::Bool(set),
        }
    }

    /// The same field with its doc line.
    pub const fn doc(mut self, doc: &'static str) -> Field<S> {
        self.setting.doc = doc;
        self
    }

    /// The key.
    pub fn key(&self) -> &'static str {
        self.setting.key
    }

    /// Its description.
    pub fn setting(&self) -> &Setting {
        &self.setting
    }
}

/// Reads every field of `table` from `cfg` into `into`, in table order; the
/// first key that is mistyped or out of range is the error.
pub fn read_fields<S>(cfg: &Config, table: &[Field<S>], into: &mut S) -> Result<(), ConfigError> {
    for field in table {
        let key = field.setting.key;
        match (&field.setting.kind, &field.store) {
            (Kind::Real { default, range }, Store::F64(set)) => set(
                into,
                cfg.get_f64_or(key, default.unwrap_or(0.0), range.clone())?,
            ),
            (Kind::Int { default, range }, Store::I64(set)) => set(
                into,
                cfg.get_i64_or(key, default.unwrap_or(0), range.clone())?,
            ),
            (Kind::Bool { default }, Store::Bool(set)) => {
                set(into, cfg.get_bool_or(key, default.unwrap_or(false))?)
            }
            _ => unreachable!("Field's constructors pair each kind with its store"),
        }
    }
    Ok(())
}

/// The rows of a [`Field`] table, for the reference.
pub fn field_rows<S>(table: &[Field<S>]) -> Vec<Row> {
    table.iter().map(|f| f.setting.row()).collect()
}
