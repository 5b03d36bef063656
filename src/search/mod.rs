//! The search: KataGo's PUCT Monte-Carlo tree search.
//!
//! Front door: [`Search`] (one game's tree; [`Search::run`] with
//! [`RunOptions`], [`Search::make_move`] for tree reuse, [`Search::view`]
//! for results), [`SearchParams`] (KataGo's parameter names, defaults per
//! [`SetupFor`], overrides by name), and the two traits the search needs
//! from outside: [`SearchState`] (the game) and [`PositionEvaluator`] (the
//! network). The pure formulas live in [`explore`] and [`utility`].
//!
//! Results: [`SearchView::snapshot`] gives the one report every front end
//! formats ([`AnalysisSnapshot`] of [`MoveInfo`]s and a [`RootInfo`], from
//! the root player's view; [`Perspective`] for `reportAnalysisWinratesAs`).
//! The game the search runs on is [`crate::game::GameState`].

mod anti_mirror;
mod bias;
mod choice;
mod eval;
mod even_komi;
pub mod explore;
mod fill_dame;
mod game_state;
mod gumbel;
mod human;
mod mirror;
mod nn_eval;
mod node_table;
mod params;
mod pattern_bonus;
mod playout;
mod report;
mod results;
mod root_symmetry;
mod runner;
mod threads;
mod tree;
pub mod utility;

#[cfg(test)]
mod tests;

pub use bias::{bias_key, BiasEntry, BiasTable};
pub use eval::{EvalError, EvalOptions, EvalStats, Outcome, PositionEvaluator, SearchState};
pub use even_komi::{compute_lead, round_and_clip_komi};
pub use mirror::{mirror_move, MirrorGame, MirrorStatus};
pub use nn_eval::{NnEvalSettings, NnSearchEvaluator};
pub use params::{Enabled, HumanProfile, OptPlayer, ParamError, SearchParams, SetupFor};
pub use pattern_bonus::{
    AutoAvoidLoad, AutoAvoidRepeat, AutoAvoidSizeSettings, AvoidSgfPatterns, PatternBonusTable,
    PositionSample, SgfFileOutcome,
};
pub use report::{AnalysisSnapshot, BadPerspective, Perspective, SnapshotRequest};
pub use results::{MoveInfo, PrintTreeOptions, RootInfo, SearchView};
pub use root_symmetry::RootSymmetry;
pub use runner::{RunOptions, Search, SearchError, SearchStats, TimeLimitFn};
pub use tree::eval_cache::{
    params_key as eval_cache_params_key, EvalCache, EvalCacheEntry, FirstExploreEval,
};
pub use tree::NodeValues;

/// Bytes one search tree node takes at most on an `x_size` x `y_size`
/// board: the node, its parent's edge, its graph search table entry (key,
/// weak pointer, hash map slack), the network output it holds and their
/// heap blocks (for memory budgets).
pub fn tree_node_bytes(x_size: usize, y_size: usize) -> u64 {
    (std::mem::size_of::<tree::Node>() + 16 + std::mem::size_of::<tree::Child>() + 16 + 48) as u64
        + crate::nn::NnOutput::bytes_for(x_size * y_size)
}
