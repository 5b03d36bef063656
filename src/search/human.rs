//! The human-style net beside the main one (KataGo's `humanEvaluator`,
//! `-human-model`): where the search evaluates it. The playouts that
//! explore by its policy are in [`super::playout`].

use std::sync::Arc;

use super::eval::{EvalError, EvalOptions, PositionEvaluator, SearchState};
use super::params::SearchParams;
use crate::nn::NnOutput;

/// The human net's output at the root, evaluated as the root is (`opts`),
/// when it can run: a human SL profile is set or the net needs none
/// (KataGo's `needsHumanOutputAtRoot`).
pub(super) fn human_root_output<S: SearchState, E: PositionEvaluator<S>>(
    human: Option<&E>,
    params: &SearchParams,
    root: &S,
    opts: &EvalOptions,
) -> Result<Option<Arc<NnOutput>>, EvalError> {
    match human.filter(|h| can_run(*h, params)) {
        Some(h) => h.evaluate(root, opts).map(Some),
        None => Ok(None),
    }
}

/// The human net, when every node needs its output: it can run and a
/// playout may explore by its policy below the root (KataGo's
/// `needsHumanOutputInTree`: some `humanSLPlaExploreProb*` or
/// `humanSLOppExploreProb*` above 0).
pub(super) fn human_in_tree<'e, S: SearchState, E: PositionEvaluator<S>>(
    human: Option<&'e E>,
    params: &SearchParams,
) -> Option<&'e E> {
    let explores_below_root = params.human_sl_pla_explore_prob_weightless > 0.0
        || params.human_sl_pla_explore_prob_weightful > 0.0
        || params.human_sl_opp_explore_prob_weightless > 0.0
        || params.human_sl_opp_explore_prob_weightful > 0.0;
    human.filter(|h| explores_below_root && can_run(*h, params))
}

/// KataGo's `needsHumanOutputAtRoot`: a human SL profile is set, or the
/// net needs none.
fn can_run<S: SearchState, E: PositionEvaluator<S>>(human: &E, params: &SearchParams) -> bool {
    params.human_sl_profile.meta.is_some() || !human.requires_metadata()
}
