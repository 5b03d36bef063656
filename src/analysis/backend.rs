//! What the analysis server needs from the search engine, as two small
//! traits: [`AnalysisBackend`] (shared by every analysis thread: parameters,
//! model facts, cache) and [`Searcher`] (one per analysis thread: runs one
//! search at a time).
//!
//! The protocol code depends only on these traits, so it can be tested with
//! a stub; the engine's real search and evaluator implement them.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde_json::Value;

use crate::game::Rules;

use super::query::MoveRestriction;
use crate::game::GameState;
use crate::search::AnalysisSnapshot;

pub use crate::setup::ModelInfo;

/// Per-query search parameters, built from the analysis config.
pub trait AnalysisBackend: Send + Sync + 'static {
    /// KataGo's `SearchParams` (or whatever the search takes).
    type Params: Clone + Send + Sync + 'static;
    /// The per-thread search.
    type Searcher: Searcher<Self::Params>;

    /// The parameters for one query: the config's, with `overrides` applied
    /// in order (later wins), KataGo names as keys and JSON values. Returns
    /// the keys that are no search parameter (they draw a warning and are
    /// ignored), or `Err(message)` when a value is bad.
    fn query_params(
        &self,
        overrides: &[(String, Value)],
    ) -> Result<(Self::Params, Vec<String>), String>;

    /// A searcher for analysis thread number `index`; it lives as long as
    /// the server.
    fn new_searcher(&self, index: usize) -> Self::Searcher;

    /// The loaded networks.
    fn models(&self) -> Vec<ModelInfo>;

    /// Whether a human-style net runs beside the main one (`-human-model`).
    fn has_human_model(&self) -> bool {
        false
    }

    /// Empties the neural net cache.
    fn clear_cache(&self);

    /// When the network cannot play under `rules` (older nets lack some
    /// options), the nearest rules it can; `None` when `rules` are fine.
    fn supported_rules(&self, rules: &Rules) -> Option<Rules> {
        let _ = rules;
        None
    }
}

/// When a search should hand over partial results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressSchedule {
    /// Time from the start of the search to the first report.
    pub first_after: Duration,
    /// Time between later reports.
    pub every: Duration,
}

/// What to report besides the moves: the search keeps the ownership maps
/// (and their spread) only when they are asked for, since they cost memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SnapshotContents {
    /// Longest PV after the move itself.
    pub pv_len: usize,
    /// Root ownership.
    pub ownership: bool,
    /// Root ownership stdev.
    pub ownership_stdev: bool,
    /// Ownership after each root move.
    pub moves_ownership: bool,
    /// Ownership stdev after each root move.
    pub moves_ownership_stdev: bool,
}

impl SnapshotContents {
    /// Whether the search must keep ownership at all (KataGo's
    /// `alwaysIncludeOwnerMap`).
    pub fn any_ownership(&self) -> bool {
        self.ownership || self.ownership_stdev || self.moves_ownership || self.moves_ownership_stdev
    }
}

/// One position to search.
#[derive(Debug, Clone)]
pub struct SearchJob<P> {
    /// The position at the analysed turn, with its history and rules.
    pub position: GameState,
    /// Search parameters (visits, exploration, ...).
    pub params: P,
    /// What the snapshots must contain.
    pub contents: SnapshotContents,
    /// Partial results, if the query asked for them.
    pub progress: Option<ProgressSchedule>,
    /// Moves the search must not play near the root (`avoidMoves` /
    /// `allowMoves`).
    pub restriction: Option<MoveRestriction>,
}

/// One analysis thread's search.
pub trait Searcher<P>: Send + 'static {
    /// Searches `job` until its visit or time limit, or until `stop` is set,
    /// and returns the final results. When `job.progress` is set, calls
    /// `on_progress` with partial results on that schedule, from any
    /// thread, never after returning. A search stopped before its first visit returns a
    /// snapshot with `root: None`.
    fn analyze(
        &mut self,
        job: &SearchJob<P>,
        stop: &AtomicBool,
        on_progress: &(dyn Fn(&AnalysisSnapshot) + Sync),
    ) -> AnalysisSnapshot;
}
