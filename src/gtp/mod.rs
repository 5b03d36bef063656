//! The GTP front end (`engine gtp`): the protocol loop, KataGo's command
//! set and extensions, and the live analysis formats Sabaki and Lizzie read.

pub mod analysis_format;
pub mod analyze_args;
pub mod protocol;

pub use analysis_format::format_analysis;
pub use analyze_args::{parse_analyze_args, AnalyzeArgs, AnalyzeKind, AvoidMoves};

mod auto_avoid;
mod board_cmds;
pub mod bot;
mod commands;
pub mod engine;
mod genmove_finish;
pub mod position;
mod raw_nn;
mod rules_cmds;
mod scoring_cmds;
mod search_bot;
mod search_cmds;
mod session;
mod settings;
mod sgf_cmds;
mod tsumego_cmd;
mod tsumego_frame;

pub use auto_avoid::AutoAvoidGames;
pub use bot::{FinalEstimate, GtpBot, RandomBot, SearchOutcome, SearchPurpose, SearchRequest};
pub use commands::known_commands;
pub use engine::GtpEngine;
pub use position::GtpGame;
pub use search_bot::SearchBot;
pub use session::{run, serve};
pub use settings::config_rows;
pub use settings::GtpSettings;
