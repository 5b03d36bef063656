//! KataGo's JSON analysis protocol (`engine analysis`): queries on stdin,
//! one JSON response per line on stdout, many positions searched at once.
//!
//! - [`query`]: one input line to a typed [`Request`], with KataGo's error
//!   and warning texts;
//! - [`response`]: search results to KataGo's response JSON;
//! - [`engine`]: the core every client shares: the fair queue
//!   ([`fair_queue`]), the analysis threads, terminate and cancellation;
//!   `dispatch`: one client's lines to actions and queued jobs;
//! - [`server`]: stdin/stdout as one client of the engine;
//! - [`backend`]: the two traits the search implements for it;
//! - [`serve`]: `engine serve`, the engine as a network service, and
//!   `remote`: `engine analysis -remote`, stdin/stdout over its WebSocket.
//!
//! Protocol reference: `shared/docs/seeds/analysis-protocol.txt`, and
//! KataGo's `cpp/command/analysis.cpp` for texts and edge cases.

pub mod backend;
mod command;
mod dispatch;
mod engine;
pub mod fair_queue;
mod options;
mod position;
pub mod query;
mod remote;
pub mod response;
pub mod search_backend;
pub mod serve;
mod server;
pub mod stub;

pub use backend::{
    AnalysisBackend, ModelInfo, ProgressSchedule, SearchJob, Searcher, SnapshotContents,
};
pub use command::{
    config_rows, run as run_command, run_on as run_command_on, AnalysisArgs, StartError,
};
pub use dispatch::Submitted;
pub use engine::{
    AnalysisEngine, Client, ClientOptions, EngineStats, ResponseSink, TerminateScope,
};
pub use options::{AnalysisLog, ServerOptions, PROTOCOL_VERSION};
pub use position::{build_positions, position_facts};
pub use query::{parse_line, ParseOptions, Parsed, QueryError, QueryWarning, Request};
pub use response::PositionFacts;
pub use search_backend::config_search_settings;
pub use server::serve;
