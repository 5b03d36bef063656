//! The analysis engine's settings from the command line and config, and
//! the protocol version it reports.

use super::query::ParseOptions;
use crate::game::GameOptions;
use crate::search::Perspective;

/// Version reported by `query_version`: the KataGo release whose protocol
/// this engine speaks, since tools compare it to enable features.
pub const PROTOCOL_VERSION: &str = "1.17.2";

/// Settings of the server that come from the command line and config.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Positions searched at the same time (`numAnalysisThreads`).
    pub num_analysis_threads: usize,
    /// Extra analysis threads that only start a search for a key with none
    /// running (`engine serve`'s `spareAnalysisThreads`; 0 elsewhere).
    pub spare_analysis_threads: usize,
    /// On stdin close, stop searches and drop queued jobs instead of
    /// finishing them (`-quit-without-waiting`).
    pub quit_without_waiting: bool,
    /// Query parsing options (`warnUnusedFields`).
    pub parse: ParseOptions,
    /// Default PV length after the first move (`analysisPVLen`, 15).
    pub analysis_pv_len: usize,
    /// Default perspective (`reportAnalysisWinratesAs`, SIDETOMOVE).
    pub perspective: Perspective,
    /// How game records are replayed.
    pub replay: GameOptions,
    /// What goes to the log file besides the start-up lines.
    pub log: AnalysisLog,
}

/// KataGo's analysis logging keys: each line goes to the process's log
/// ([`crate::logfile`]), as KataGo writes it to its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalysisLog {
    /// `logAllRequests`: every input line, `Request: LINE`.
    pub requests: bool,
    /// `logAllResponses`: every output line, `Response: LINE`.
    pub responses: bool,
    /// `logErrorsAndWarnings` (on by default): every error and warning
    /// answer, `Error: LINE` / `Warning: LINE`.
    pub errors_and_warnings: bool,
    /// `logSearchInfo`: a summary of each finished search (the query's id
    /// and turn, root values, top moves).
    pub search_info: bool,
}

impl Default for AnalysisLog {
    /// KataGo's defaults: only errors and warnings.
    fn default() -> Self {
        AnalysisLog {
            requests: false,
            responses: false,
            errors_and_warnings: true,
            search_info: false,
        }
    }
}

impl ServerOptions {
    /// Searches that may run at once: the analysis threads and the spare
    /// ones (what the batch size and the tree memory are planned for).
    pub fn searches_at_once(&self) -> usize {
        self.num_analysis_threads.max(1) + self.spare_analysis_threads
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            num_analysis_threads: 1,
            spare_analysis_threads: 0,
            quit_without_waiting: false,
            parse: ParseOptions::default(),
            analysis_pv_len: 15,
            perspective: Perspective::SideToMove,
            replay: GameOptions::default(),
            log: AnalysisLog::default(),
        }
    }
}
