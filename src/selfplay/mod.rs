//! `engine selfplay`: KataGo's self-play data generator.
//!
//! Front door: [`FinishedGame`] (a played game with its search targets, as
//! KataGo's `FinishedGameData`), [`FinalOutcome`] (the end-of-game
//! ownership, area and scoring targets) and [`write_game_rows`], which turns
//! a finished game into training rows in KataGo's `.npz` layout
//! ([`crate::data::TrainingRows`]).

mod game_data;
mod rows;

pub use game_data::{
    fill_scoring, FinalOutcome, FinishedGame, GameMode, NnRawStats, PolicyTargetMove,
    QValueTargetMove, SidePosition, TurnRecord, ValueTargets,
};
pub use rows::{write_game_rows, RowError};
