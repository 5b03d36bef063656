//! The analysis backend over the engine's own search ([`crate::search`]):
//! search parameters from the analysis config plus each query's overrides,
//! one [`Search`] per analysis thread, all sharing one evaluator.
//!
//! Generic over the search's game state `S` and evaluator `E`; the caller
//! says how a [`GameState`] becomes an `S`.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde_json::Value;

use crate::game::{GameState, Rules};
use crate::search::{
    AnalysisSnapshot, EvalCache, PatternBonusTable, PositionEvaluator, RunOptions, Search,
    SearchParams, SearchState, SearchView, SetupFor, SnapshotRequest,
};

use super::backend::{AnalysisBackend, ModelInfo, SearchJob, Searcher, SnapshotContents};
use super::query::MoveRestriction;

/// KataGo's alias: the analysis config may say
/// `numSearchThreadsPerAnalysisThread` for `numSearchThreads`.
const THREADS_ALIAS: (&str, &str) = ("numSearchThreadsPerAnalysisThread", "numSearchThreads");

/// The search parameter settings of an analysis config
/// ([`crate::setup::analysis_search_settings`]).
pub use crate::setup::analysis_search_settings as config_search_settings;

/// Converts a query position to the search's game state.
pub type MakeState<S> = Arc<dyn Fn(&GameState) -> S + Send + Sync>;

/// [`AnalysisBackend`] over [`Search`].
pub struct SearchBackend<S, E> {
    /// The config's search settings (from [`config_search_settings`]),
    /// applied before each query's.
    pub base: Vec<(String, Value)>,
    /// The evaluator every search uses.
    pub evaluator: Arc<E>,
    /// The human-style net of `-human-model`, if given.
    pub human: Option<Arc<E>>,
    /// Turns a query's position into the search's state.
    pub make_state: MakeState<S>,
    /// The nets `query_models` reports.
    pub models: Vec<ModelInfo>,
    /// Empties the evaluator's cache (`clear_cache`).
    pub clear_cache: Box<dyn Fn() + Send + Sync>,
    /// Seed of the searches' randomness.
    pub seed: u64,
    /// Each analysis thread's tree share of `maxMemoryMB`, if set.
    pub tree_memory_limit: Option<u64>,
    /// Shapes to avoid (`avoidSgfPattern*`), if any.
    pub patterns: Option<Arc<PatternBonusTable>>,
    /// The eval cache every analysis thread shares (`useEvalCache` in the
    /// config), made with the first thread; `clear_cache` empties it.
    pub eval_cache: OnceLock<Option<Arc<EvalCache>>>,
}

impl<S, E> SearchBackend<S, E> {
    /// The config's search parameters, before any query's overrides.
    fn base_params(&self) -> Result<SearchParams, String> {
        let settings = self.base.iter().map(|(k, v)| (k.as_str(), v));
        SearchParams::from_overrides(SetupFor::Analysis, settings).map_err(|e| e.to_string())
    }
}

impl<S, E> AnalysisBackend for SearchBackend<S, E>
where
    S: SearchState + 'static,
    E: PositionEvaluator<S> + 'static,
{
    type Params = SearchParams;
    type Searcher = SearchSearcher<S, E>;

    fn query_params(
        &self,
        overrides: &[(String, Value)],
    ) -> Result<(SearchParams, Vec<String>), String> {
        let mut settings: Vec<(&str, &Value)> =
            self.base.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let mut unknown = Vec::new();
        for (key, value) in overrides {
            let name = if key == THREADS_ALIAS.0 {
                THREADS_ALIAS.1
            } else {
                key.as_str()
            };
            if SearchParams::NAMES.contains(&name) {
                settings.push((name, value));
            } else {
                unknown.push(key.clone());
            }
        }
        let changed = settings.len() > self.base.len();
        let params = SearchParams::from_overrides(SetupFor::Analysis, settings)
            .map_err(|e| e.to_string())?;
        if changed {
            params.check_unchangeable(&self.base_params()?)?;
        }
        Ok((params, unknown))
    }

    fn new_searcher(&self, index: usize) -> SearchSearcher<S, E> {
        // Made on first use: the config's parameters decide.
        let eval_cache = self
            .eval_cache
            .get_or_init(|| {
                self.base_params()
                    .ok()
                    .and_then(|p| EvalCache::for_params(&p))
            })
            .clone();
        SearchSearcher {
            search: None,
            evaluator: self.evaluator.clone(),
            human: self.human.clone(),
            make_state: self.make_state.clone(),
            seed: self.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            tree_memory_limit: self.tree_memory_limit,
            patterns: self.patterns.clone(),
            eval_cache,
        }
    }

    fn models(&self) -> Vec<ModelInfo> {
        self.models.clone()
    }

    fn has_human_model(&self) -> bool {
        self.human.is_some()
    }

    fn clear_cache(&self) {
        (self.clear_cache)();
        if let Some(Some(cache)) = self.eval_cache.get() {
            cache.clear();
        }
    }

    fn supported_rules(&self, rules: &Rules) -> Option<Rules> {
        // One net per backend; KataGo asks that net's description.
        let version = self.models.first()?.version;
        crate::nn::supported_rules(version, rules)
    }
}

/// One analysis thread's [`Search`], reused from query to query.
pub struct SearchSearcher<S: SearchState, E: PositionEvaluator<S>> {
    search: Option<Search<S, E>>,
    evaluator: Arc<E>,
    human: Option<Arc<E>>,
    make_state: MakeState<S>,
    seed: u64,
    tree_memory_limit: Option<u64>,
    patterns: Option<Arc<PatternBonusTable>>,
    eval_cache: Option<Arc<EvalCache>>,
}

impl<S, E> Searcher<SearchParams> for SearchSearcher<S, E>
where
    S: SearchState + 'static,
    E: PositionEvaluator<S> + 'static,
{
    fn analyze(
        &mut self,
        job: &SearchJob<SearchParams>,
        stop: &AtomicBool,
        on_progress: &(dyn Fn(&AnalysisSnapshot) + Sync),
    ) -> AnalysisSnapshot {
        let state = (self.make_state)(&job.position);
        self.seed = self.seed.wrapping_add(1);
        let search = match &mut self.search {
            Some(s) => {
                s.set_params(job.params.clone());
                s.set_position(state);
                s.clear_tree();
                s
            }
            slot => {
                let mut search =
                    Search::new(job.params.clone(), self.evaluator.clone(), state, self.seed);
                if let Some(bytes) = self.tree_memory_limit {
                    search.set_tree_memory_limit(bytes);
                }
                search.set_pattern_bonus_table(self.patterns.clone());
                search.set_human_evaluator(self.human.clone());
                search.set_eval_cache(self.eval_cache.clone());
                slot.insert(search)
            }
        };
        search.set_include_ownership(job.contents.any_ownership());
        search.clear_avoid_moves();
        match &job.restriction {
            Some(MoveRestriction::Avoid(entries)) => {
                for e in entries {
                    search.set_avoid_moves(e.player, &e.moves, e.until_depth);
                }
            }
            Some(MoveRestriction::Allow(entries)) => {
                for e in entries {
                    search.set_allow_moves(e.player, &e.moves, e.until_depth);
                }
            }
            None => {}
        }
        let contents = job.contents;
        // The first report after `firstReportDuringSearchAfter`, then one
        // every `reportDuringSearchEvery`.
        let reported = Mutex::new(());
        let callback = |view: &SearchView<'_>| {
            let _one_at_a_time = reported.lock();
            on_progress(&snapshot_of(view, &contents));
        };
        let opts = RunOptions {
            stop: Some(stop),
            callback: job
                .progress
                .map(|_| &callback as &(dyn Fn(&SearchView<'_>) + Sync)),
            callback_period: job.progress.map(|p| p.every),
            first_callback_after: job.progress.map(|p| p.first_after),
            ..RunOptions::default()
        };
        match search.run(&opts) {
            Err(e) => {
                crate::logfile::startup(&format!("engine analysis: search stopped early: {e}"))
            }
            Ok(stats) if stats.memory_capped => crate::logfile::line(&format!(
                "engine analysis: a search stopped at {} visits, its tree's share of maxMemoryMB",
                stats.root_visits
            )),
            Ok(_) => {}
        }
        snapshot_of(&search.view(), &contents)
    }
}

/// The search's report with what the query asked for.
fn snapshot_of(view: &SearchView<'_>, contents: &SnapshotContents) -> AnalysisSnapshot {
    view.snapshot(&SnapshotRequest {
        pv_len: contents.pv_len + 1,
        min_moves: 0,
        moves_ownership: contents.moves_ownership,
        ownership: contents.ownership,
        ownership_stdev: contents.ownership_stdev,
    })
}
