//! KataGo's JSON analysis protocol (`engine analysis`): queries on stdin,
//! one JSON response per line on stdout, many positions searched at once.
//!
//! - [`query`]: one input line to a typed [`Request`], with KataGo's error
//!   and warning texts;
//! - [`response`]: search results to KataGo's response JSON;
//! - [`server`]: the reader, the priority queue, the analysis threads and
//!   the single writer; terminate and shutdown;
//! - [`backend`]: the two traits the search implements for it.
//!
//! Protocol reference: `shared/docs/seeds/analysis-protocol.txt`, and
//! KataGo's `cpp/command/analysis.cpp` for texts and edge cases.

pub mod backend;
mod command;
mod position;
pub mod query;
pub mod response;
pub mod search_backend;
mod server;
pub mod stub;

pub use backend::{
    AnalysisBackend, ModelInfo, ProgressSchedule, SearchJob, Searcher, SnapshotContents,
};
pub use command::{run as run_command, run_on as run_command_on, AnalysisCommand, StartError};
pub use position::{build_positions, position_facts};
pub use query::{parse_line, ParseOptions, Parsed, QueryError, QueryWarning, Request};
pub use response::PositionFacts;
pub use search_backend::config_search_settings;
pub use server::{serve, AnalysisLog, ServerOptions, PROTOCOL_VERSION};
