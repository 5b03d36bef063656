//! engine: a Go (baduk/weiqi) engine that does what KataGo does.
//!
//! The crate is one binary (`engine`) over this library. Modules, each with
//! one front door:
//!
//! - [`game`]: board, rules, move history, scoring, coordinates and SGF.
//! - [`gtp`]: the GTP engine (`engine gtp`) with KataGo's extensions.
//! - [`nn`]: KataGo networks: model files, input features, the batching
//!   evaluator, the pure-Rust CPU backend and (feature `torch`) libtorch.
//! - [`search`]: KataGo's PUCT Monte-Carlo tree search.
//! - [`selfplay`]: `engine selfplay`, self-play games and their training rows.
//! - [`train`]: `engine train`/`engine export`, the trainable network and
//!   KataGo's losses (feature `torch`, on by default).
//! - [`learn`]: `engine learn`, the learning loop in one resumable command
//!   over a run store, its ledger and `status` (feature `torch`).
//! - [`matchplay`]: `engine match` and `engine gatekeeper`, games between
//!   bots with Elo tables, and the gating of new nets.
//! - [`play`]: the play layer shared by the commands that play games
//!   (self-play, match, gatekeeper, learn): playing settings, rule lists,
//!   opening moves, Elo statistics.
//! - [`data`]: KataGo's training-data rows (`.npz`), shared by self-play
//!   and training.
//! - [`store`]: a run's files and objects in a local folder or on S3, and
//!   the run's layout (models, self-play data, shuffled windows).
//! - [`config`]: config files with KataGo's key names, and overrides.
//! - [`timecontrol`]: clocks and time management.
//! - [`tsumego`]: life and death: a problem's region, its frame, and the
//!   judgement of groups and first moves.
//! - [`benchmark`]: `engine benchmark`, search speed per thread count.
//! - [`tune`]: `engine tune`, a config measured for this machine and a
//!   target (playing, analysis).
//! - [`solve`]: `engine tsumego`, a life-and-death problem in SGF solved
//!   into an SGF solution tree.
//! - [`io_lines`]: protocol input read as bytes, a line at a time, with a
//!   cap on its length.
//! - [`setup`]: start-up shared by every command (flags, config and
//!   overrides, default model, device and evaluator).
//! - [`fuzz_targets`]: the bodies of the fuzz targets (`fuzz/`,
//!   `scripts/fuzz.sh`) and their seed corpora.
//! - [`numfmt`]: numbers printed and read as KataGo's C++ does (`%g`).
//! - [`cli`]: the command line (`engine gtp|analysis|selfplay|shuffle|train|export|learn|match|gatekeeper|benchmark|tune|tsumego`).

pub mod analysis;
pub mod benchmark;
pub mod cli;
pub mod config;
pub mod data;
pub mod exit;
pub mod fuzz_targets;
pub mod game;
pub mod gtp;
pub mod io_lines;
#[cfg(feature = "torch")]
pub mod learn;
pub mod logfile;
pub mod matchplay;
pub mod nn;
pub mod numfmt;
pub mod play;
pub mod search;
pub mod selfplay;
pub mod setup;
pub mod solve;
pub mod store;
pub mod timecontrol;
#[cfg(feature = "torch")]
pub mod train;
pub mod tsumego;
pub mod tune;

use std::path::PathBuf;

/// The `shared/` folder of reference data (KataGo test networks and
/// vectors) that tests and benchmarks read: `../shared` beside the checkout
/// (where CI puts it), else the folder named by `ENGINE_SHARED_DIR`.
///
/// Tests call this and fail with its message when the data is absent, so a
/// missing folder is never mistaken for a pass.
pub fn shared_data_dir() -> Result<PathBuf, String> {
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if beside.is_dir() {
        return Ok(beside);
    }
    if let Some(dir) = std::env::var_os("ENGINE_SHARED_DIR") {
        let dir = PathBuf::from(dir);
        if dir.is_dir() {
            return Ok(dir);
        }
        return Err(format!(
            "ENGINE_SHARED_DIR={} is not a directory",
            dir.display()
        ));
    }
    Err(format!(
        "reference data not found: expected {} (KataGo networks and vectors; CI puts shared/ \
         beside the checkout) or ENGINE_SHARED_DIR",
        beside.display()
    ))
}
