//! The GTP front end (`engine gtp`): the protocol loop, KataGo's command
//! set and extensions, and the live analysis formats Sabaki and Lizzie read.

pub mod analysis_format;
mod numfmt;
pub mod protocol;

pub use analysis_format::{
    format_analysis, parse_analyze_args, AnalyzeArgs, AnalyzeKind, AvoidMoves,
};
pub use numfmt::format_g;
pub mod bot;
pub mod engine;
pub mod position;
mod search_bot;
mod search_cmds;
mod session;

pub use bot::{FinalEstimate, GtpBot, RandomBot, SearchOutcome, SearchPurpose, SearchRequest};
pub use engine::{GtpEngine, GtpSettings, KNOWN_COMMANDS};
pub use position::GtpGame;
pub use search_bot::SearchBot;
pub use session::{run, serve};
