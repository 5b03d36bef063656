//! `engine selfplay`: KataGo's self-play data generator.
//!
//! Front door: [`run`] with [`SelfplayArgs`] (the command), [`PlaySettings`]
//! (the config's self-play keys), [`play_game`] (one game), [`FinishedGame`]
//! (a played game with its search targets, as KataGo's `FinishedGameData`),
//! [`FinalOutcome`] (end-of-game ownership, area and scoring targets) and
//! [`write_game_rows`], which turns a finished game into training rows in
//! KataGo's `.npz` layout ([`crate::data::TrainingRows`]). A run's output
//! goes through one writer thread (`writer.rs`) into the run store.

mod fork;
mod game;
mod game_data;
mod handicap;
mod komi;
mod rows;
mod run;
mod settings;
mod sgf_line;
mod side;
mod turn;
mod writer;

pub use fork::{maybe_fork, maybe_seki_fork, ForkQueue};
pub use game::{play_game, NewNetCheck, PlayedGame};
pub use game_data::{
    fill_scoring, FinalOutcome, FinishedGame, GameMode, NnRawStats, PolicyTargetMove,
    QValueTargetMove, SidePosition, TurnRecord, ValueTargets,
};
pub use rows::{write_game_rows, RowError};
pub use run::{run, SelfplayArgs};
pub use settings::PlaySettings;
pub use settings::{config_rows, DATA_QUEUE_SIZE};
