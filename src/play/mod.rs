//! The play layer: what every command that plays games shares (KataGo keeps
//! it in `cpp/program/`). `engine selfplay`, `engine match`, the gatekeeper
//! and `engine learn` build on it; none of them imports another for it.
//!
//! - [`benchmark`]: search speed on a fixed set of positions (`engine
//!   benchmark`, GTP's `kata-benchmark`).
//! - [`error`]: [`PlayError`], why such a command stopped.
//! - [`settings`]: [`SettingsError`], KataGo's comma-separated lists
//!   ([`parse_list`]), the rule lists a game's rules are drawn from
//!   ([`RuleLists`]), and [`Field`] tables that read a command's scalar
//!   settings (one table per command, as `gtp/commands.rs`' `COMMANDS`
//!   drives dispatch).
//! - [`matches`]: games between bots for `match`, `gatekeeper` and gating
//!   in `learn` (KataGo's `program/play.cpp`).
//! - [`opening`]: opening moves and handicap stones drawn from the raw
//!   policy ([`play_policy_moves`], [`play_extra_black`]).
//! - [`stats`]: win/loss/draw tallies, Elo estimates with intervals,
//!   Bradley-Terry and SPRT.

pub mod benchmark;
pub mod error;
pub mod matches;
pub mod opening;
pub mod settings;
pub mod stats;

pub use error::{io_err, PlayError};
pub use opening::{play_extra_black, play_policy_moves};
pub use settings::{parse_bool, parse_list, RuleLists, SettingsError};
