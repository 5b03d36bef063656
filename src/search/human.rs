//! The human-style net beside the main one (KataGo's `humanEvaluator`,
//! `-human-model`): where the search evaluates it.

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
    match human {
        Some(h) if params.human_sl_profile.meta.is_some() || !h.requires_metadata() => {
            h.evaluate(root, opts).map(Some)
        }
        _ => Ok(None),
    }
}
