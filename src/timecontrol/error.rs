//! Typed errors of time-control parsing and updates.

use thiserror::Error;

/// Why a time setting or a clock update was rejected. The messages are
/// KataGo's GTP error responses, word for word.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TimeControlError {
    /// An argument is missing or is not a number of the right kind.
    #[error("Expected {kind} for {description} as argument {index}")]
    Expected {
        /// `float` or `int`.
        kind: &'static str,
        /// What the argument is (`main time`...).
        description: &'static str,
        /// Its 0-based position among the command's arguments.
        index: usize,
    },
    /// A number out of the accepted range (negative, NaN, too large).
    #[error("{description} is an invalid value: {text}")]
    InvalidValue {
        /// What the argument is.
        description: &'static str,
        /// The argument as given.
        text: String,
    },
    /// `kgs-time_settings` with an unknown or missing system.
    #[error("Expected 'none', 'absolute', 'byoyomi', or 'canadian' as first argument for kgs-time_settings")]
    UnknownKgsSystem,
    /// `kata-time_settings` with an unknown or missing system.
    #[error("Expected 'none', 'absolute', 'byoyomi', 'canadian', 'fischer', or 'fischer-capped' as first argument for kata-time_settings")]
    UnknownKataSystem,
    /// Capped Fischer whose cap is below the starting main time.
    #[error("TimeControls: mainTimeLimit is smaller than mainTime")]
    MainTimeLimitBelowMainTime,
    /// Overtime periods of zero stones.
    #[error("TimeControls: byo-yomi periods need at least one stone each")]
    PeriodsWithoutStones,
    /// `time_left` arguments that are not `player time stones`.
    #[error("Expected player and float time and int stones for time_left but got '{got}'")]
    TimeLeftSyntax {
        /// The arguments, joined by spaces.
        got: String,
    },
    /// `time_left` with a time out of range.
    #[error("invalid time")]
    InvalidTime,
    /// `time_left` with a stone count out of range.
    #[error("invalid stones")]
    InvalidStones,
    /// `time_left` with stones for a control without overtime.
    #[error(
        "stones left in period is > 0 but the time control used does not have any overtime periods"
    )]
    NoOvertimePeriods,
}
