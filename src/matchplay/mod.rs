//! `engine match` and `engine gatekeeper`: the command lines of KataGo's
//! `match` and `gatekeeper`. What they play with (match settings, the game
//! runner, reports, gating) is the play layer's ([`crate::play::matches`]);
//! the statistics (Elo with confidence intervals, Bradley-Terry ratings,
//! SPRT) are [`crate::play::stats`].
//!
//! Front door: [`run_match`] with [`MatchArgs`], [`run_gatekeeper`] with
//! [`GatekeeperArgs`].

use std::path::PathBuf;

use crate::play::matches::Logger;
use crate::play::PlayError;

mod cli;
mod gatekeeper;

pub use cli::{apply_short_form, run as run_match, MatchArgs};
pub use gatekeeper::{run as run_gatekeeper, GatekeeperArgs};

/// The `-log-file` flag of `match` and `gatekeeper`.
#[derive(Debug, Default, clap::Args)]
pub struct LogFileArg {
    /// Also append the progress lines to this file.
    #[arg(long = "log-file")]
    pub log_file: Option<PathBuf>,
}

impl LogFileArg {
    /// A [`Logger`] whose lines start with `prefix`, appending to the file
    /// if one was given.
    pub fn logger(&self, prefix: &str) -> Result<Logger, PlayError> {
        Logger::new(prefix, self.log_file.as_deref())
    }
}
