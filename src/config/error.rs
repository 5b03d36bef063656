//! Typed errors of config loading and reading.

use thiserror::Error;

/// Everything that can go wrong while loading a config or reading a key.
///
/// Errors about a key name the key and where its value came from
/// (`config file 'gtp.toml', line 12` or `-override-config`), so a user can
/// find and fix it.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be opened or read.
    #[error("could not read config file '{path}': {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, or not valid KataGo `.cfg` syntax.
    #[error("config file '{file}', line {line}: {message}")]
    Syntax {
        /// The file name.
        file: String,
        /// 1-based line of the problem.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The same key was given twice (in one file, or in two TOML sections,
    /// which share one namespace).
    #[error("key '{key}' is specified more than once in config file '{file}' (line {line}); delete one of them")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The file name.
        file: String,
        /// 1-based line of the second occurrence (0 when unknown).
        line: usize,
    },
    /// A required key is absent.
    #[error("could not find key '{key}' in config file '{file}'")]
    Missing {
        /// The key.
        key: String,
        /// The file name.
        file: String,
    },
    /// The value has the wrong type (a string where a number is expected...).
    #[error("key '{key}' in {origin}: expected {expected}, got {found}")]
    WrongType {
        /// The key.
        key: String,
        /// Where the value came from.
        origin: String,
        /// The type that was expected, in words.
        expected: String,
        /// The value that was found, as written.
        found: String,
    },
    /// A number outside the allowed range (NaN included).
    #[error("key '{key}' in {origin}: value {value} must be in the range {min} to {max}")]
    OutOfRange {
        /// The key.
        key: String,
        /// Where the value came from.
        origin: String,
        /// The value found.
        value: String,
        /// Smallest allowed value.
        min: String,
        /// Largest allowed value.
        max: String,
    },
    /// A string that is not one of the allowed choices.
    #[error("key '{key}' in {origin}: '{value}' must be one of ({choices})")]
    NotOneOf {
        /// The key.
        key: String,
        /// Where the value came from.
        origin: String,
        /// The value found.
        value: String,
        /// The allowed values, `|`-separated.
        choices: String,
    },
    /// A value that a parser (for rules, players...) rejected.
    #[error("key '{key}' in {origin}: could not parse '{value}' as {expected}: {message}")]
    Invalid {
        /// The key.
        key: String,
        /// Where the value came from.
        origin: String,
        /// The value found.
        value: String,
        /// What was expected, in words.
        expected: String,
        /// The parser's message.
        message: String,
    },
    /// A malformed `-override-config` argument.
    #[error("could not parse -override-config '{text}': {message}")]
    Override {
        /// The offending piece of the argument.
        text: String,
        /// What is wrong.
        message: String,
    },
    /// Filling a typed parameter struct from the config failed.
    #[error("config file '{file}': {message}")]
    Deserialize {
        /// The file name.
        file: String,
        /// serde's message, with the key when it could be found.
        message: String,
    },
}
