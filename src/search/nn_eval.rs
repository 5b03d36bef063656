//! The network as the search sees it: encodes a [`GameState`] into KataGo's
//! input features, asks the shared batching [`Evaluator`] and hands back
//! its post-processed output.

use std::cell::RefCell;
use std::sync::Arc;

use crate::game::{KoRule, Move, ScoringRule};
use crate::nn::{
    nn_input_hash, EncodedInput, EvalParams, EvalRequest, Evaluator, FeatureEncoder, InputVersion,
    NnInputParams, NnOutput, Symmetry, SymmetryChoice,
};

use super::eval::{EvalError, EvalOptions, EvalStats, PositionEvaluator};
use crate::game::GameState;

thread_local! {
    /// Ladder-search buffers of this thread's encoder, kept between calls.
    static ENCODER: RefCell<FeatureEncoder> = RefCell::new(FeatureEncoder::new());
}

/// How the search's requests become network requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NnEvalSettings {
    /// KataGo's `nnRandomize`: a random symmetry per evaluation (drawn from
    /// the search's seeded generator); otherwise always the identity.
    pub randomize_symmetry: bool,
    /// KataGo's `drawEquivalentWinsForWhite`, which shifts the komi the net sees.
    pub draw_equivalent_wins_for_white: f64,
    /// Whether the net has short-term error heads (model version >= 9).
    pub has_shortterm_error: bool,
}

/// A [`PositionEvaluator`] over the real network.
pub struct NnSearchEvaluator {
    evaluator: Evaluator,
    settings: NnEvalSettings,
    /// The input features the net reads, from its model version (looked
    /// up once here, not per evaluation).
    inputs: InputVersion,
}

impl std::fmt::Debug for NnSearchEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NnSearchEvaluator")
            .field("settings", &self.settings)
            .field("inputs", &self.inputs)
            .finish_non_exhaustive()
    }
}

impl NnSearchEvaluator {
    /// Wraps a shared evaluator.
    pub fn new(evaluator: Evaluator, settings: NnEvalSettings) -> NnSearchEvaluator {
        // Every loaded net has a version of 3..=17; a stub model reports
        // the newest.
        let inputs =
            InputVersion::of_model_version(evaluator.model_version()).unwrap_or(InputVersion::V7);
        NnSearchEvaluator {
            evaluator,
            settings,
            inputs,
        }
    }

    /// The batching evaluator underneath (for its statistics and cache).
    pub fn evaluator(&self) -> &Evaluator {
        &self.evaluator
    }

    /// The settings this evaluator was made with.
    pub fn settings(&self) -> &NnEvalSettings {
        &self.settings
    }

    fn input_params(&self, opts: &EvalOptions) -> NnInputParams {
        NnInputParams {
            draw_equivalent_wins_for_white: self.settings.draw_equivalent_wins_for_white,
            conservative_pass_and_is_root: opts.conservative_pass,
            enable_passing_hacks: opts.enable_passing_hacks,
            playout_doubling_advantage: opts.playout_doubling_advantage,
            max_history: opts.max_history.unwrap_or(1000),
            pass_alive_suicide_rules_override: None,
        }
    }

    fn eval_params(&self, state: &GameState, opts: &EvalOptions) -> EvalParams {
        let symmetry = if opts.num_symmetries > 1 {
            SymmetryChoice::Average(opts.num_symmetries.min(8))
        } else if self.settings.randomize_symmetry {
            SymmetryChoice::Seeded(opts.symmetry_seed)
        } else {
            SymmetryChoice::Fixed(Symmetry::ALL[0])
        };
        let rules = state.hist.rules();
        EvalParams {
            symmetry,
            policy_temperature: opts.policy_temperature,
            policy_optimism: opts.policy_optimism as f32,
            include_ownership: opts.include_ownership,
            skip_cache: false,
            // KataGo: a no-result is only possible where long cycles can
            // happen without a superko rule, or in territory encores.
            allow_no_result: rules.ko_rule == KoRule::Simple
                || rules.scoring_rule == ScoringRule::Territory,
            passing_hacks: opts.enable_passing_hacks,
        }
    }

    /// Evaluates `state` as [`PositionEvaluator::evaluate`] does, returning
    /// the evaluator's own error type.
    pub fn evaluate_state(
        &self,
        state: &GameState,
        opts: &EvalOptions,
    ) -> Result<Arc<NnOutput>, crate::nn::EvalError> {
        let params = self.eval_params(state, opts);
        self.evaluate_with_params(state, opts, params)
    }

    /// One raw evaluation in exactly the given symmetry (0-7), bypassing
    /// the cache, with ownership (GTP `kata-raw-nn`).
    pub fn evaluate_in_symmetry(
        &self,
        state: &GameState,
        symmetry: usize,
        opts: &EvalOptions,
    ) -> Result<Arc<NnOutput>, crate::nn::EvalError> {
        let mut params = self.eval_params(state, opts);
        params.symmetry = SymmetryChoice::Fixed(Symmetry::ALL[symmetry % 8]);
        params.skip_cache = true;
        params.include_ownership = true;
        self.evaluate_with_params(state, opts, params)
    }

    fn evaluate_with_params(
        &self,
        state: &GameState,
        opts: &EvalOptions,
        params: EvalParams,
    ) -> Result<Arc<NnOutput>, crate::nn::EvalError> {
        let input_params = self.input_params(opts);
        let mut hash = nn_input_hash(&state.board, &state.hist, state.next, &input_params).0;
        let meta_len = self.evaluator.num_meta_features();
        let profile = if meta_len > 0 {
            let profile = opts.human_profile.ok_or_else(|| {
                crate::nn::EvalError::BadRequest(
                    "this human-style net needs a profile of the players: set humanSLProfile \
                     (e.g. rank_5k) in the config, with kata-set-param or in overrideSettings"
                        .into(),
                )
            })?;
            // As KataGo: the profile is part of what the net sees.
            hash = profile.mix_into(hash, state.next);
            Some(profile)
        } else {
            None
        };
        if !params.skip_cache {
            if let Some(hit) = self.evaluator.lookup(hash, &params) {
                return Ok(hit);
            }
        }
        let (x, y) = (state.board.x_size(), state.board.y_size());
        let mut input = EncodedInput {
            x_size: x,
            y_size: y,
            spatial: vec![0.0; self.inputs.num_spatial_features() * x * y],
            global: vec![0.0; self.inputs.num_global_features()],
            meta: vec![0.0; meta_len],
        };
        if let Some(profile) = profile {
            profile.fill_row(&mut input.meta, state.next, x * y);
        }
        ENCODER.with(|enc| {
            enc.borrow_mut().fill_row(
                self.inputs,
                &state.board,
                &state.hist,
                state.next,
                &input_params,
                &mut input.spatial,
                &mut input.global,
            )
        });
        let mut legal = Vec::with_capacity(x * y + 1);
        legal.extend(state.board.locs().map(|loc| {
            state
                .hist
                .is_legal(&state.board, Move::Play(loc), state.next)
        }));
        legal.push(true);
        let mut req = EvalRequest::new(input, legal, state.next, hash);
        req.params = params;
        self.evaluator.evaluate(req)
    }
}

impl PositionEvaluator<GameState> for NnSearchEvaluator {
    fn evaluate(&self, state: &GameState, opts: &EvalOptions) -> Result<Arc<NnOutput>, EvalError> {
        self.evaluate_state(state, opts)
            .map_err(|e| EvalError(e.to_string()))
    }

    fn stats(&self) -> EvalStats {
        let s = self.evaluator.stats();
        EvalStats {
            rows: s.rows,
            batches: s.batches,
            cache_hits: s.cache_hits,
        }
    }

    fn supports_shortterm_error(&self) -> bool {
        self.settings.has_shortterm_error
    }

    fn requires_metadata(&self) -> bool {
        self.evaluator.num_meta_features() > 0
    }
}
