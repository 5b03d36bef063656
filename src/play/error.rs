//! [`PlayError`]: why a command that plays games (`selfplay`, `match`,
//! `gatekeeper`) stopped.

use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::play::SettingsError;
use crate::store::StoreError;

/// Why a command that plays games could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// Bad command line.
    #[error("{0}")]
    Usage(String),
    /// Bad config.
    #[error(transparent)]
    Config(#[from] Box<ConfigError>),
    /// Bad playing settings.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A network could not be found or loaded.
    #[error("{0}")]
    Model(String),
    /// Reading or writing a local file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The run store failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// Writing self-play data failed; `lost` finished games were not
    /// written.
    #[error("{source}; {lost} finished game(s) not written")]
    Write {
        /// The store failure.
        source: StoreError,
        /// Games lost.
        lost: u64,
    },
    /// A game failed.
    #[error("game failed: {0}")]
    Game(String),
}

impl PlayError {
    /// The kind of failure of `match` and `gatekeeper` for this error: a
    /// bad command line, or one while running.
    pub fn failure(&self) -> crate::exit::Failure {
        match self {
            PlayError::Usage(_) => crate::exit::Failure::Usage,
            _ => crate::exit::Failure::Runtime,
        }
    }
}

/// A `map_err` that turns an I/O error on `path` into [`PlayError::Io`].
pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PlayError + '_ {
    move |source| PlayError::Io {
        path: path.to_path_buf(),
        source,
    }
}
