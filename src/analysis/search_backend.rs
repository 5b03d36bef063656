//! The analysis backend over the engine's own search ([`crate::search`]):
//! search parameters from the analysis config plus each query's overrides,
//! one [`Search`] per analysis thread, all sharing one evaluator.
//!
//! Generic over the search's game state `S` and evaluator `E`; the caller
//! says how a [`GameState`] becomes an `S`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use crate::config::Config;
use crate::game::Player;
use crate::search::{
    PositionEvaluator, RunOptions, Search, SearchParams, SearchState, SearchView, SetupFor,
};

use super::backend::{AnalysisBackend, ModelInfo, SearchJob, Searcher, SnapshotContents};
use super::query::MoveRestriction;
use super::response::{AnalysisSnapshot, MoveStats, RootStats};
use crate::game::GameState;

/// KataGo's alias: the analysis config may say
/// `numSearchThreadsPerAnalysisThread` for `numSearchThreads`.
const THREADS_ALIAS: (&str, &str) = ("numSearchThreadsPerAnalysisThread", "numSearchThreads");

/// The search parameter settings of a config, as `(KataGo name, value)`
/// pairs, with the analysis engine's own default (`conservativePass =
/// true`) first; marks those keys used.
pub fn config_search_settings(cfg: &Config) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if !cfg.contains("conservativePass") {
        out.push(("conservativePass".to_string(), Value::Bool(true)));
    }
    out.extend(crate::setup::search_settings(cfg));
    out
}

/// Converts a query position to the search's game state.
pub type MakeState<S> = Arc<dyn Fn(&GameState) -> S + Send + Sync>;

/// [`AnalysisBackend`] over [`Search`].
pub struct SearchBackend<S, E> {
    /// The config's search settings, applied before each query's.
    base: Vec<(String, Value)>,
    evaluator: Arc<E>,
    make_state: MakeState<S>,
    models: Vec<ModelInfo>,
    clear_cache: Box<dyn Fn() + Send + Sync>,
    seed: u64,
}

impl<S, E> SearchBackend<S, E> {
    /// A backend searching with `evaluator`; `base` from
    /// [`config_search_settings`], `seed` for the searches' randomness.
    pub fn new(
        base: Vec<(String, Value)>,
        evaluator: Arc<E>,
        make_state: MakeState<S>,
        models: Vec<ModelInfo>,
        clear_cache: Box<dyn Fn() + Send + Sync>,
        seed: u64,
    ) -> Self {
        SearchBackend {
            base,
            evaluator,
            make_state,
            models,
            clear_cache,
            seed,
        }
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
        let params = SearchParams::from_overrides(SetupFor::Analysis, settings)
            .map_err(|e| e.to_string())?;
        Ok((params, unknown))
    }

    fn new_searcher(&self, index: usize) -> SearchSearcher<S, E> {
        SearchSearcher {
            search: None,
            evaluator: self.evaluator.clone(),
            make_state: self.make_state.clone(),
            seed: self.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        }
    }

    fn models(&self) -> Vec<ModelInfo> {
        self.models.clone()
    }

    fn clear_cache(&self) {
        (self.clear_cache)()
    }
}

/// One analysis thread's [`Search`], reused from query to query.
pub struct SearchSearcher<S: SearchState, E: PositionEvaluator<S>> {
    search: Option<Search<S, E>>,
    evaluator: Arc<E>,
    make_state: MakeState<S>,
    seed: u64,
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
            slot => slot.insert(Search::new(
                job.params.clone(),
                self.evaluator.clone(),
                state,
                self.seed,
            )),
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
        // The search calls back on one period; the first report comes after
        // one period too (KataGo's firstReportDuringSearchAfter is honoured
        // only through reportDuringSearchEvery).
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
            ..RunOptions::default()
        };
        if let Err(e) = search.run(&opts) {
            eprintln!("engine analysis: search stopped early: {e}");
        }
        snapshot_of(&search.view(), &contents)
    }
}

/// Search results as the response builder takes them (white's view).
fn snapshot_of(view: &SearchView<'_>, contents: &SnapshotContents) -> AnalysisSnapshot {
    let Some(root) = view.root_info() else {
        return AnalysisSnapshot::default();
    };
    // The search reports from the root player's view; s turns that into
    // white's.
    let s = if root.current_player == Player::White {
        1.0
    } else {
        -1.0
    };
    let white_winrate = |wr: f64| if s > 0.0 { wr } else { 1.0 - wr };
    let infos = view.move_infos(contents.pv_len + 1, contents.moves_ownership);
    let moves = view
        .with_symmetric_copies(infos)
        .into_iter()
        .map(|m| {
            let mut out = MoveStats::new(m.mv);
            out.visits = m.visits.max(0) as u64;
            out.edge_visits = m.edge_visits.max(0) as u64;
            out.weight = m.weight;
            out.edge_weight = m.weight;
            out.white_win_loss = 2.0 * white_winrate(m.winrate) - 1.0;
            out.white_score_mean = s * m.score_selfplay;
            out.white_lead = s * m.score_lead;
            out.score_stdev = m.score_stdev;
            out.white_utility = s * m.utility;
            out.white_utility_lcb = s * m.utility_lcb;
            out.white_winrate_lcb = white_winrate(m.lcb);
            out.prior = m.prior;
            out.play_selection_value = m.play_selection_value;
            out.order = m.order;
            out.is_symmetry_of = m.is_symmetry_of;
            out.pv_visits = m.pv_visits.iter().map(|&v| v.max(0) as u64).collect();
            out.pv_edge_visits = out.pv_visits.clone();
            out.pv = m.pv;
            out.white_ownership = m.ownership.map(|o| o.into_iter().map(|x| s * x).collect());
            out
        })
        .collect();
    let (white_ownership, ownership_stdev) = if contents.ownership || contents.ownership_stdev {
        match view.ownership() {
            Some((mean, stdev)) => (
                contents
                    .ownership
                    .then(|| mean.into_iter().map(|x| s * x).collect()),
                contents.ownership_stdev.then_some(stdev),
            ),
            None => (None, None),
        }
    } else {
        (None, None)
    };
    AnalysisSnapshot {
        moves,
        root: Some(RootStats {
            visits: root.visits.max(0) as u64,
            weight: root.weight,
            white_win_loss: 2.0 * white_winrate(root.winrate) - 1.0,
            white_score_mean: s * root.score_mean,
            white_lead: s * root.score_lead,
            score_stdev: root.score_stdev,
            white_utility: s * root.utility,
        }),
        root_nn: view.root_nn_output(),
        white_ownership,
        ownership_stdev,
    }
}
