//! [`SearchBot`]: the [`GtpBot`] over the engine's own MCTS
//! ([`crate::search::Search`]) and a KataGo network, as KataGo's GTP engine
//! drives its `AsyncBot`.
//!
//! One [`Search`] lives for the whole session. Before each search the tree
//! is brought to the controller's position: when the game continues the
//! position the tree is rooted at, the new moves are played into the tree
//! (`make_move`, which keeps the subtree the search already grew, KataGo's
//! tree reuse); otherwise the tree is dropped (`set_position`).
//!
//! Two parameter sets, as in KataGo: genmove parameters (the config's
//! search keys over KataGo's GTP defaults) and analysis parameters (the
//! same with `analysisWideRootNoise` and `analysisIgnorePreRootHistory`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

use crate::config::Config;
use crate::game::GameState;
use crate::game::{Board, BoardHistory, Color, GameOptions, Loc, Move, Player, Rules, ScoringRule};
use crate::play::play_extra_black;
use crate::search::{
    compute_lead, AnalysisSnapshot, EvalOptions, NnSearchEvaluator, PatternBonusTable, Perspective,
    PositionEvaluator, PrintTreeOptions, RunOptions, Search, SearchParams, SearchView, SetupFor,
    SnapshotRequest,
};
use crate::setup::{ModelInfo, Network};
use crate::timecontrol::{upper_bound_visits_left, SearchTimeState, TimeControls, TimeParams};

use super::analyze_args::AvoidMoves;
use super::bot::{FinalEstimate, GtpBot, SearchOutcome, SearchPurpose, SearchRequest};
use super::position::GtpGame;
use super::raw_nn::{raw_nn_brief, raw_nn_text};
use super::settings::{
    ANALYSIS_IGNORE_PRE_ROOT_HISTORY, ANALYSIS_PV_LEN, ANALYSIS_WIDE_ROOT_NOISE, ANTI_MIRROR,
    GENMOVE_ANTI_MIRROR, LOG_SEARCH_INFO, LOG_SEARCH_INFO_FOR_CHOSEN_MOVE,
};

/// KataGo's temperature for the network's free handicap stones.
const FREE_HANDICAP_TEMPERATURE: f64 = 0.25;

/// The parameters `kata-list-params` names before the search's own, in
/// KataGo's order: keys of the GTP front end that set genmove and
/// analysis parameters apart.
const GTP_ONLY_PARAMS: &[&str] = &[
    "analysisWideRootNoise",
    "analysisIgnorePreRootHistory",
    "genmoveAntiMirror",
    "antiMirror",
];

/// The game a tree is rooted at: its start and the moves since, so that a
/// later request can be recognised as a continuation.
#[derive(Clone, PartialEq)]
struct RootKey {
    initial: Board,
    initial_pla: Player,
    rules: Rules,
    moves: Vec<(Move, Player)>,
    next: Player,
}

impl RootKey {
    fn of(game: &GtpGame, next: Player) -> RootKey {
        RootKey {
            initial: game.initial_board().clone(),
            initial_pla: game.initial_pla(),
            rules: *game.rules(),
            moves: game.moves().to_vec(),
            next,
        }
    }

    /// The moves that lead from `self` to `later`, if `later` continues it.
    fn continuation<'a>(&self, later: &'a RootKey) -> Option<&'a [(Move, Player)]> {
        let same_start = self.initial.pos_hash() == later.initial.pos_hash()
            && self.initial_pla == later.initial_pla
            && self.rules == later.rules
            && later.moves.len() >= self.moves.len()
            && later.moves[..self.moves.len()] == self.moves[..];
        same_start.then(|| &later.moves[self.moves.len()..])
    }
}

/// The real search behind `engine gtp`.
pub struct SearchBot {
    search: Search<GameState, NnSearchEvaluator>,
    genmove_params: SearchParams,
    analysis_params: SearchParams,
    model_name: String,
    /// The net, for `kata-get-models`.
    model: ModelInfo,
    /// The human-style net of `-human-model`, if given.
    human: Option<HumanNet>,
    /// KataGo's model version of the net (which rules it knows).
    model_version: i32,
    analysis_pv_len: usize,
    rng: StdRng,
    root: Option<RootKey>,
    /// `logSearchInfo`: each genmove's search summary goes to the log.
    log_search_info: bool,
    /// `logSearchInfoForChosenMove`: the summary names the chosen move's
    /// line even when it is not among the top moves.
    log_chosen_move: bool,
    /// Whether `genmoveAntiMirror` was set (config or `kata-set-param`):
    /// until then `antiMirror` sets genmove's defence too.
    genmove_anti_mirror_set: bool,
}

/// The second net of `-human-model` (KataGo's `humanEval`).
struct HumanNet {
    evaluator: Arc<NnSearchEvaluator>,
    /// For `kata-get-models`.
    model: ModelInfo,
}

impl SearchBot {
    /// The inputs KataGo's raw net commands evaluate with for `pla` to
    /// move: the analysis settings' playout doubling advantage and human
    /// profile.
    fn raw_eval_options(&self, pla: Player, policy_optimism: f64, ownership: bool) -> EvalOptions {
        let a = &self.analysis_params;
        let pda = match a.playout_doubling_advantage_pla.0 {
            Some(p) if p != pla => -a.playout_doubling_advantage,
            _ => a.playout_doubling_advantage,
        };
        EvalOptions {
            include_ownership: ownership,
            policy_optimism,
            playout_doubling_advantage: pda,
            human_profile: a.human_sl_profile.meta,
            ..EvalOptions::default()
        }
    }

    /// KataGo's `rawNN` text of `evaluator` for `game` with `pla` to move
    /// (see [`raw_nn_text`]), with the analysis settings' inputs.
    fn raw_nn_text(
        &self,
        evaluator: &NnSearchEvaluator,
        game: &GtpGame,
        pla: Player,
        symmetry: Option<usize>,
        policy_optimism: f64,
        human: bool,
    ) -> Result<String, String> {
        let opts = self.raw_eval_options(pla, policy_optimism, true);
        raw_nn_text(evaluator, game, pla, symmetry, &opts, human)
    }

    /// A bot searching with `net`, parameters from `cfg` (KataGo's GTP
    /// defaults, `conservativePass` and `fillDameBeforePass` on and
    /// `numSearchThreads` from the machine unless the config says
    /// otherwise).
    pub fn new(
        net: &Network,
        human: Option<&Network>,
        cfg: &Config,
        seed: u64,
    ) -> Result<SearchBot, String> {
        let mut settings = Vec::new();
        for key in ["conservativePass", "fillDameBeforePass"] {
            if !cfg.contains(key) {
                settings.push((key.to_string(), Value::Bool(true)));
            }
        }
        if !cfg.contains("numSearchThreads") {
            settings.push((
                "numSearchThreads".to_string(),
                Value::from(net.default_search_threads),
            ));
        }
        settings.extend(crate::setup::search_settings(cfg));
        let mut genmove_params = SearchParams::from_overrides(
            SetupFor::Gtp,
            settings.iter().map(|(k, v)| (k.as_str(), v)),
        )
        .map_err(|e| e.to_string())?;
        // Analysis takes `antiMirror` (off by default); genmove takes
        // `genmoveAntiMirror`, else `antiMirror`, else on (KataGo's GTP).
        let mut analysis_params = genmove_params.clone();
        let text = |e: crate::config::ConfigError| e.to_string();
        let genmove_anti_mirror = GENMOVE_ANTI_MIRROR.read(cfg).map_err(text)?;
        let genmove_anti_mirror_set = genmove_anti_mirror.is_some();
        genmove_params.anti_mirror = match genmove_anti_mirror {
            Some(on) => on,
            None => ANTI_MIRROR.read(cfg).map_err(text)?.unwrap_or(true),
        };
        analysis_params.wide_root_noise = ANALYSIS_WIDE_ROOT_NOISE.read(cfg).map_err(text)?;
        analysis_params.ignore_pre_root_history =
            ANALYSIS_IGNORE_PRE_ROOT_HISTORY.read(cfg).map_err(text)?;
        let analysis_pv_len = ANALYSIS_PV_LEN.read(cfg).map_err(text)? as usize;
        let log_search_info = LOG_SEARCH_INFO.read(cfg).map_err(text)?;
        let log_chosen_move = LOG_SEARCH_INFO_FOR_CHOSEN_MOVE.read(cfg).map_err(text)?;
        let board = Board::new(19, 19).map_err(|e| e.to_string())?;
        let game = GtpGame::new(board, Rules::tromp_taylor(), GameOptions::default());
        let mut search = Search::new(
            genmove_params.clone(),
            net.evaluator.clone(),
            game.state().clone(),
            seed,
        );
        search.set_pattern_bonus_table(
            crate::setup::avoid_sgf_pattern_table(cfg, 0).map_err(|e| e.to_string())?,
        );
        search.set_human_evaluator(human.map(|h| Arc::clone(&h.evaluator)));
        if let Some(plan) = net.memory_plan(1) {
            search.set_tree_memory_limit(plan.tree_bytes);
            for note in plan.notes {
                crate::logfile::startup(&note);
            }
        }
        Ok(SearchBot {
            search,
            genmove_params,
            analysis_params,
            model_name: net.model_name.clone(),
            model: net.model_info(),
            human: human.map(|h| HumanNet {
                evaluator: Arc::clone(&h.evaluator),
                model: h.model_info(),
            }),
            model_version: net.model_version,
            analysis_pv_len,
            rng: StdRng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15),
            root: None,
            log_search_info,
            log_chosen_move,
            genmove_anti_mirror_set,
        })
    }

    /// Brings the tree to `game` with `pla` to move: plays the new moves
    /// into the tree when `game` continues the tree's position, else
    /// starts a new tree.
    fn sync(&mut self, game: &GtpGame, pla: Player) {
        let mut game = game.clone();
        game.set_player_if_new(pla);
        let key = RootKey::of(&game, pla);
        if self.root.as_ref() == Some(&key) {
            return;
        }
        let reused = self.root.as_ref().and_then(|old| {
            let extra = old.continuation(&key)?.to_vec();
            let mut ok = true;
            for (mv, p) in extra {
                ok = ok && self.search.root_state().next == p && self.search.make_move(mv);
            }
            let st = self.search.root_state();
            (ok && st.next == pla
                && st.board.pos_hash() == game.board().pos_hash()
                && st.hist.moves().len() == game.history().moves().len())
            .then_some(())
        });
        if reused.is_none() {
            self.search.set_position(game.state().clone());
        }
        self.root = Some(key);
    }

    fn use_params(&mut self, params: &SearchParams) {
        if self.search.params() != params {
            self.search.set_params(params.clone());
        }
    }

    fn set_avoid(&mut self, avoid: &AvoidMoves, x_size: usize, y_size: usize) {
        self.search.clear_avoid_moves();
        for (pla, depths) in [(Player::Black, &avoid.black), (Player::White, &avoid.white)] {
            let board = match Board::new(x_size, y_size) {
                Ok(b) => b,
                Err(_) => return,
            };
            let mut by_depth: Vec<(u32, Vec<Move>)> = Vec::new();
            for loc in board.locs() {
                let d = depths.get(loc.idx()).copied().unwrap_or(0);
                if d <= 0 {
                    continue;
                }
                let d = d as u32;
                match by_depth.iter_mut().find(|(k, _)| *k == d) {
                    Some((_, v)) => v.push(Move::Play(loc)),
                    None => by_depth.push((d, vec![Move::Play(loc)])),
                }
            }
            for (d, moves) in by_depth {
                self.search.set_avoid_moves(pla, &moves, d);
            }
        }
    }

    /// What KataGo's time management needs for a genmove under time
    /// controls: the parameters, the clock and the position's part of the
    /// state (the time used and what the search says are filled in as it
    /// runs). `None` for analysis and unlimited time.
    fn time_management(
        &self,
        req: &SearchRequest<'_>,
        extra_factor: f64,
    ) -> Option<(TimeParams, TimeControls, SearchTimeState)> {
        let SearchPurpose::Genmove {
            clock,
            search_factor,
        } = &req.purpose
        else {
            return None;
        };
        if clock.is_effectively_unlimited() {
            return None;
        }
        let p = self.search.params();
        let tp = TimeParams {
            lag_buffer: p.lag_buffer,
            search_factor_after_one_pass: p.search_factor_after_one_pass,
            search_factor_after_two_pass: p.search_factor_after_two_pass,
            overallocate_time_factor: p.overallocate_time_factor,
            midgame_time_factor: p.midgame_time_factor,
            midgame_turn_peak_time: p.midgame_turn_peak_time,
            endgame_turn_time_decay: p.endgame_turn_time_decay,
            obvious_moves_time_factor: p.obvious_moves_time_factor,
            obvious_moves_policy_entropy_tolerance: p.obvious_moves_policy_entropy_tolerance,
            obvious_moves_policy_surprise_tolerance: p.obvious_moves_policy_surprise_tolerance,
            ..TimeParams::default()
        };
        let st = self.search.root_state();
        let state = SearchTimeState {
            board_area: st.board.x_size() * st.board.y_size(),
            stones_on_board: st.board.num_stones(),
            turn_number: st.hist.moves().len() as i64,
            time_used: 0.0,
            search_factor: search_factor * extra_factor,
            time_carried_over: self.search.time_carried_over(),
            policy_surprise_and_entropy: None,
        };
        Some((tp, clock.clone(), state))
    }

    /// KataGo's search factor after passes: searching less once the
    /// opponent passed (and less again if we passed before that).
    fn pass_factor(&self) -> f64 {
        let moves = self.search.root_state().hist.moves();
        let n = moves.len();
        let last = n >= 1 && moves[n - 1].0.is_pass();
        let third = n >= 3 && moves[n - 3].0.is_pass();
        let p = self.search.params();
        match (last, third) {
            (true, true) => p.search_factor_after_two_pass,
            (true, false) => p.search_factor_after_one_pass,
            _ => 1.0,
        }
    }

    /// Noiseless parameters for scoring searches (KataGo's
    /// `getNoiselessParams` plus conservative passing and no PDA).
    fn scoring_params(&self, visits: i64) -> SearchParams {
        let mut p = self.genmove_params.clone();
        p.search_root_as_any_node();
        p.wide_root_noise = 0.0;
        p.chosen_move_temperature = 0.0;
        p.chosen_move_temperature_early = 0.0;
        p.max_visits = visits;
        p.max_playouts = visits;
        p.max_time = 1e20;
        p.playout_doubling_advantage = 0.0;
        p.conservative_pass = true;
        p.anti_mirror = false;
        p.avoid_repeated_pattern_utility = 0.0;
        p
    }
}

/// Sign turning the root player's view into White's.
fn white_sign(pla: Player) -> f64 {
    if pla == Player::White {
        1.0
    } else {
        -1.0
    }
}

impl GtpBot for SearchBot {
    fn model_name(&self) -> String {
        self.model_name.clone()
    }

    fn models(&self) -> Vec<ModelInfo> {
        let mut models = vec![self.model.clone()];
        models.extend(self.human.as_ref().map(|h| h.model.clone()));
        models
    }

    fn lag_buffer(&self) -> f64 {
        self.genmove_params.lag_buffer
    }

    fn benchmark(&mut self, size: usize, visits: i64) -> Result<String, String> {
        let net = self.search.evaluator().clone();
        crate::play::benchmark::benchmark_gtp(&net, &self.genmove_params, size, visits)
            .map(|r| r.line())
    }

    fn free_handicap(&mut self, game: &GtpGame, n: usize) -> Option<Vec<Loc>> {
        let board = Board::new(game.x_size(), game.y_size()).ok()?;
        let rules = *game.rules();
        let hist = BoardHistory::new(&board, Player::Black, rules);
        let mut params = self.genmove_params.clone();
        params.max_visits = 1;
        params.root_noise_enabled = false;
        let mut search = Search::new(
            params,
            self.search.evaluator().clone(),
            GameState::new(board, hist, Player::Black),
            self.rng.gen(),
        );
        play_extra_black(
            &mut search,
            n as u32,
            FREE_HANDICAP_TEMPERATURE,
            &mut self.rng,
        )
        .ok()?;
        let board = &search.root_state().board;
        Some(
            board
                .locs()
                .filter(|&l| board.get(l) == Color::Black)
                .collect(),
        )
    }

    fn supported_rules(&self, rules: &Rules) -> Option<Rules> {
        crate::nn::supported_rules(self.model_version, rules)
    }

    fn search(
        &mut self,
        req: &SearchRequest<'_>,
        stop: &AtomicBool,
        report: &mut (dyn FnMut(&AnalysisSnapshot) + Send),
    ) -> Option<SearchOutcome> {
        let params = match req.purpose {
            SearchPurpose::Analysis => self.analysis_params.clone(),
            SearchPurpose::Genmove { .. } | SearchPurpose::Ponder => self.genmove_params.clone(),
        };
        self.use_params(&params);
        self.sync(req.game, req.pla);
        self.search.set_include_ownership(req.want_ownership);
        self.set_avoid(&req.avoid.clone(), req.game.x_size(), req.game.y_size());
        let pass_factor = self.pass_factor();
        let time_management = self.time_management(req, pass_factor);
        let num_threads = self.search.params().num_threads.max(1) as usize;
        // KataGo's `recomputeSearchTimeLimit`, asked again as the search runs.
        let time_limit = |view: &SearchView<'_>, used: f64| {
            let Some((tp, clock, base)) = &time_management else {
                return f64::INFINITY;
            };
            let state = SearchTimeState {
                time_used: used,
                policy_surprise_and_entropy: view
                    .policy_surprise_and_entropy()
                    .map(|(surprise, _, policy_entropy)| (surprise, policy_entropy)),
                ..base.clone()
            };
            let root_visits = view.root_values().visits;
            tp.search_time_limit(clock, &state, |planned| {
                let left = upper_bound_visits_left(
                    root_visits,
                    used,
                    state.time_carried_over,
                    planned,
                    num_threads,
                );
                left < view.params.futile_visits_threshold * root_visits as f64
                    && view.is_rest_of_search_futile(left)
            })
        };
        let snap_req = SnapshotRequest {
            pv_len: self.analysis_pv_len,
            min_moves: req.min_moves,
            moves_ownership: req.want_ownership,
            ownership: req.want_ownership,
            ownership_stdev: req.want_ownership,
        };
        let report = Mutex::new(report);
        let callback = |view: &SearchView<'_>| {
            let snap = view.snapshot(&snap_req);
            if snap.root.is_some() {
                (report.lock())(&snap);
            }
        };
        let endless = !matches!(req.purpose, SearchPurpose::Genmove { .. });
        let opts = RunOptions {
            pondering: endless,
            for_opponent: matches!(req.purpose, SearchPurpose::Ponder),
            max_time: None,
            time_limit: time_management.as_ref().map(|_| &time_limit as _),
            stop: Some(stop),
            callback: req.report_interval.map(|_| &callback as _),
            callback_period: req
                .report_interval
                .map(|s| Duration::from_secs_f64(s.clamp(0.01, 1e6))),
            first_callback_after: None,
        };
        match self.search.run(&opts) {
            Err(e) => {
                crate::logfile::startup(&format!("search failed: {e}"));
                self.search.clear_avoid_moves();
                return None;
            }
            Ok(stats) if stats.memory_capped => crate::logfile::line(&format!(
                "search stopped at {} visits: the tree holds its share of maxMemoryMB",
                stats.root_visits
            )),
            Ok(_) => {}
        }
        self.search.clear_avoid_moves();
        let view = self.search.view();
        let snap = view.snapshot(&snap_req);
        // genmove_analyze reports once more at the end, as KataGo does;
        // analysis that ran into a limit reports its final state too (KataGo
        // may print nothing at all when the limit comes before the first
        // interval).
        let stopped = stop.load(std::sync::atomic::Ordering::Acquire);
        if req.report_interval.is_some() && (!endless || !stopped) {
            (report.lock())(&snap);
        }
        let best = view.chosen_move(&mut self.rng)?;
        if self.log_search_info && matches!(req.purpose, SearchPurpose::Genmove { .. }) {
            crate::logfile::line(&snap.log_summary(
                &format!("Search for {:?}", req.pla),
                Some(best),
                self.log_chosen_move,
            ));
        }
        let values = view.root_values();
        Some(SearchOutcome {
            best,
            white_win_loss: values.win_loss,
            white_lead: values.lead,
            snapshot: snap,
        })
    }

    fn estimate_final(&mut self, game: &GtpGame, pla: Player) -> FinalEstimate {
        let visits = (i64::from(self.genmove_params.num_threads) * 20).max(100);
        let params = self.scoring_params(visits);
        let mut g = game.clone();
        g.set_player_if_new(pla);
        let mut search = Search::new(
            params,
            self.search.evaluator().clone(),
            g.state().clone(),
            self.rng.gen(),
        );
        search.set_include_ownership(true);
        let n = game.x_size() * game.y_size();
        if let Err(e) = search.run(&RunOptions::default()) {
            crate::logfile::startup(&format!("scoring search failed: {e}"));
            return FinalEstimate {
                white_lead: 0.0,
                ownership: vec![0.0; n],
            };
        }
        let view = search.view();
        let s = white_sign(pla);
        FinalEstimate {
            white_lead: view.root_values().lead,
            ownership: view
                .ownership()
                .map(|(m, _)| m.iter().map(|x| s * x).collect())
                .unwrap_or_else(|| vec![0.0; n]),
        }
    }

    fn values_after_move(&mut self, game: &GtpGame, pla: Player, mv: Move) -> Option<[f64; 3]> {
        // KataGo's numVisitsForFriendlyPass.
        let g = &self.genmove_params;
        let visits = 8 + (g.max_visits.min(g.max_playouts) / 10).min(1000);
        let params = self.scoring_params(visits);
        let mut game = game.clone();
        game.set_player_if_new(pla);
        let mut state = game.state().clone();
        if !state.is_legal(mv) {
            return None;
        }
        state.play(mv);
        let evaluator = self.search.evaluator().clone();
        let mut search = Search::new(params, evaluator, state, self.rng.gen());
        if let Err(e) = search.run(&RunOptions::default()) {
            crate::logfile::startup(&format!("friendly-pass search failed: {e}"));
            return None;
        }
        let v = search.view().root_values();
        Some([v.utility, v.score_mean, v.lead])
    }

    fn estimate_lead(&mut self, game: &GtpGame, pla: Player) -> f64 {
        // KataGo: max(50, 10 per thread) noiseless visits per komi tried.
        let visits = (i64::from(self.genmove_params.num_threads) * 10).max(50);
        let params = self.scoring_params(visits);
        let mut g = game.clone();
        g.set_player_if_new(pla);
        let state = g.state().clone();
        let rules = state.hist.rules();
        let coarse = rules.scoring_rule == ScoringRule::Area && !rules.has_button;
        let komi = f64::from(rules.komi);
        let area = state.board.x_size() * state.board.y_size();
        let evaluator = self.search.evaluator().clone();
        let rng = &mut self.rng;
        compute_lead(komi, area, coarse, |k| {
            let mut at_komi = state.clone();
            at_komi.hist.set_komi(k as f32);
            let mut search = Search::new(params.clone(), evaluator.clone(), at_komi, rng.gen());
            match search.run(&RunOptions::default()) {
                Ok(_) => {
                    let v = search.view().root_values();
                    (v.lead, v.win_loss)
                }
                Err(e) => {
                    crate::logfile::startup(&format!("scoring search failed: {e}"));
                    (0.0, 0.0)
                }
            }
        })
    }

    fn raw_nn(
        &mut self,
        game: &GtpGame,
        pla: Player,
        symmetry: Option<usize>,
        policy_optimism: Option<f64>,
    ) -> Result<String, String> {
        // KataGo answers with the genmove search's root optimism unless
        // the command names one (it matters for nets with an optimistic
        // policy head, model version 12 and up).
        let policy_optimism = policy_optimism.unwrap_or(self.genmove_params.root_policy_optimism);
        let evaluator = self.search.evaluator().clone();
        self.raw_nn_text(&evaluator, game, pla, symmetry, policy_optimism, false)
    }

    fn raw_human_nn(
        &mut self,
        game: &GtpGame,
        pla: Player,
        symmetry: Option<usize>,
    ) -> Result<String, String> {
        let Some(human) = &self.human else {
            return Err("Cannot run kata-raw-human-nn, -human-model was not provided".into());
        };
        let evaluator = Arc::clone(&human.evaluator);
        if PositionEvaluator::<GameState>::requires_metadata(&*evaluator)
            && self.genmove_params.human_sl_profile.meta.is_none()
        {
            return Err(
                "Cannot run kata-raw-human-nn, humanSLProfile parameter was not set".into(),
            );
        }
        let policy_optimism = self.genmove_params.root_policy_optimism;
        self.raw_nn_text(&evaluator, game, pla, symmetry, policy_optimism, true)
    }

    fn print_tree(
        &mut self,
        game: &GtpGame,
        options: &PrintTreeOptions,
        perspective: Perspective,
    ) -> String {
        let pla = game.next_pla();
        self.sync(game, pla);
        self.search
            .view()
            .print_tree(options, perspective.player(pla))
    }

    fn raw_nn_brief(&mut self, game: &GtpGame, branch: &[Move]) -> Result<String, String> {
        let evaluator = self.search.evaluator().clone();
        raw_nn_brief(&evaluator, game, branch, |pla| {
            self.raw_eval_options(pla, 0.0, false)
        })
    }

    fn set_pattern_bonus_table(&mut self, table: Option<Arc<PatternBonusTable>>) {
        self.search.set_pattern_bonus_table(table);
    }

    fn clear_cache(&mut self) {
        self.search.clear_tree();
        self.search.clear_eval_cache();
        self.search.evaluator().evaluator().clear_cache();
    }

    fn param_names(&self) -> Vec<String> {
        let mut v: Vec<String> = GTP_ONLY_PARAMS.iter().map(|s| s.to_string()).collect();
        // `antiMirror` is listed with the GTP-only keys, as KataGo lists it.
        v.extend(
            SearchParams::NAMES
                .iter()
                .filter(|&&s| s != "antiMirror")
                .map(|s| s.to_string()),
        );
        v
    }

    fn get_param(&self, name: &str) -> Option<String> {
        match name {
            "analysisWideRootNoise" => {
                Some(Value::from(self.analysis_params.wide_root_noise).to_string())
            }
            "analysisIgnorePreRootHistory" => {
                Some(self.analysis_params.ignore_pre_root_history.to_string())
            }
            "genmoveAntiMirror" => Some(self.genmove_params.anti_mirror.to_string()),
            "antiMirror" => Some(self.analysis_params.anti_mirror.to_string()),
            _ => self.genmove_params.get(name).map(|v| match v {
                Value::String(s) => s,
                other => other.to_string(),
            }),
        }
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let v = Value::String(value.trim().to_string());
        match name {
            "analysisWideRootNoise" => {
                let mut p = self.analysis_params.clone();
                p.apply_override("wideRootNoise", &v)
                    .map_err(|e| e.to_string())?;
                self.analysis_params = p;
            }
            "analysisIgnorePreRootHistory" => {
                let mut p = self.analysis_params.clone();
                p.apply_override("ignorePreRootHistory", &v)
                    .map_err(|e| e.to_string())?;
                self.analysis_params = p;
            }
            "genmoveAntiMirror" => {
                let mut g = self.genmove_params.clone();
                g.apply_override("antiMirror", &v)
                    .map_err(|e| e.to_string())?;
                self.genmove_params = g;
                self.genmove_anti_mirror_set = true;
            }
            // As KataGo, which re-reads its config: genmove follows
            // `antiMirror` until `genmoveAntiMirror` is set.
            "antiMirror" => {
                let mut a = self.analysis_params.clone();
                a.apply_override("antiMirror", &v)
                    .map_err(|e| e.to_string())?;
                if !self.genmove_anti_mirror_set {
                    self.genmove_params.anti_mirror = a.anti_mirror;
                }
                self.analysis_params = a;
            }
            _ => {
                let mut g = self.genmove_params.clone();
                g.apply_override(name, &v).map_err(|e| e.to_string())?;
                // Analysis parameters follow, except their two own keys.
                let mut a = self.analysis_params.clone();
                a.apply_override(name, &v).map_err(|e| e.to_string())?;
                if name == "wideRootNoise" || name == "ignorePreRootHistory" {
                    a = self.analysis_params.clone();
                }
                g.check_unchangeable(&self.genmove_params)?;
                a.check_unchangeable(&self.analysis_params)?;
                self.genmove_params = g;
                self.analysis_params = a;
            }
        }
        Ok(())
    }
}
