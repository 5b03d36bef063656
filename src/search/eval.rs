//! What the search needs from the outside world: the game state it plays
//! moves on ([`SearchState`]) and the network behind a small trait
//! ([`PositionEvaluator`]). The lead implements both for the real
//! `BoardHistory` and batching evaluator; tests use stubs.

use std::sync::Arc;

use super::mirror::MirrorStatus;
use super::pattern_bonus::PatternBonusTable;
use crate::game::{Color, Hash128, Loc, Move, Player};
use crate::nn::{NnOutput, SgfMetadata, Symmetry};

use crate::nn::invariant_symmetries;

/// How a finished game ended, from white's side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Scored: the winner (`None` = draw) and the final white-minus-black
    /// score including komi.
    Scored {
        winner: Option<Player>,
        white_minus_black: f64,
    },
    /// No result (e.g. a long cycle under some ko rules).
    NoResult,
}

/// A game position with its history and rules: what the search plays moves
/// on. Clones are taken per search thread, once per search, not per visit.
pub trait SearchState: Clone + Send + Sync {
    /// Board width.
    fn x_size(&self) -> usize;
    /// Board height.
    fn y_size(&self) -> usize;
    /// The player to move.
    fn next_player(&self) -> Player;
    /// Whether `mv` is legal for the player to move (superko included).
    fn is_legal(&self, mv: Move) -> bool;
    /// Plays a legal move for the player to move.
    fn play(&mut self, mv: Move);
    /// `Some` once the game is over.
    fn outcome(&self) -> Option<Outcome>;
    /// Turn number (moves played since the start of the game).
    fn turn_number(&self) -> usize;
    /// The last move played and by whom.
    fn last_move(&self) -> Option<(Player, Move)>;
    /// Whether a pass by the player to move now would end the game; used
    /// for conservative passing and passing hacks.
    fn pass_would_end_game(&self) -> bool;
    /// Whether a pass by the player to move now would end the current
    /// phase (the game, or under territory scoring the main phase; KataGo's
    /// `passWouldEndPhase`), for `enableMorePassingHacks`. Default: the
    /// game.
    fn pass_would_end_phase(&self) -> bool {
        self.pass_would_end_game()
    }
    /// KataGo's graph hash of this state (`GraphHash::getGraphHash`, see
    /// [`crate::game::graph_hash`]), reached by the last move from a state
    /// whose graph hash was `prev`: positions with equal hashes are one
    /// node of the search graph. `None` (the default): no transpositions,
    /// the search is a tree.
    fn graph_hash(
        &self,
        prev: Hash128,
        rep_bound: usize,
        draw_equivalent_wins_for_white: f64,
    ) -> Option<Hash128> {
        let _ = (prev, rep_bound, draw_equivalent_wins_for_white);
        None
    }
    /// The graph hash of this state chained over the whole game from its
    /// start (KataGo's `getGraphHashFromScratch`): a search's root. The
    /// default chains from nothing.
    fn graph_hash_from_scratch(
        &self,
        rep_bound: usize,
        draw_equivalent_wins_for_white: f64,
    ) -> Option<Hash128> {
        self.graph_hash(Hash128::ZERO, rep_bound, draw_equivalent_wins_for_white)
    }
    /// Stone colour at a point (for the subtree value bias pattern).
    fn color_at(&self, loc: Loc) -> Color;
    /// Whether the chain at `loc` has exactly one liberty.
    fn in_atari(&self, loc: Loc) -> bool;
    /// The point the player to move may not play because of a simple ko.
    fn ko_loc(&self) -> Option<Loc>;
    /// Liberties of the chain at `loc` (0 on an empty point).
    fn chain_liberties(&self, loc: Loc) -> usize;
    /// Whether `loc` touches the chain holding the stone at `chain` (never
    /// when `chain` is empty).
    fn adjacent_to_chain(&self, loc: Loc, chain: Loc) -> bool;
    /// A hash of the position (stones, player, ko) for symmetry checks and logs.
    fn position_hash(&self) -> u64;
    /// Whether a pass by the player to move would end the game although,
    /// under friendly-pass rules, the search should look past it (KataGo's
    /// `shouldSuppressEndGameFromFriendlyPass`). Default: never.
    fn friendly_pass_continues(&self) -> bool {
        false
    }
    /// KataGo's `getEndingWhiteScoreBonus` for every move from this
    /// position as the root, per policy index (pass last): the score
    /// bonus, in points for white, that nudges the end of the game
    /// (`rootEndingBonusPoints` = `points`), from the root's net ownership
    /// (`white_ownership`, white's view, row-major). Empty when there is
    /// no bonus. Default: none.
    fn ending_score_bonuses(&self, white_ownership: &[f32], points: f64) -> Vec<f64> {
        let _ = (white_ownership, points);
        Vec::new()
    }

    /// Whether the opponent of the player to move is mirroring, from the
    /// game record up to this position as the root (`antiMirror`,
    /// [`MirrorStatus::detect`]). Default: nobody is.
    fn mirror_status(&self) -> MirrorStatus {
        MirrorStatus::NONE
    }

    /// The shape hash of the player to move playing `mv` here, for the
    /// pattern bonus table ([`crate::game::pattern_hash`]); zero for a move
    /// without one (a pass, a ko capture). Default: none.
    fn pattern_hash(&self, mv: Move) -> Hash128 {
        let _ = mv;
        Hash128::ZERO
    }

    /// Adds `bonus` to `table` for the shape of every move `only` played in
    /// the game so far (`avoidRepeatedPatternUtility`, KataGo's
    /// `addBonusForGameMoves`). Default: no moves known.
    fn add_game_patterns(&self, table: &mut PatternBonusTable, bonus: f64, only: Player) {
        let _ = (table, bonus, only);
    }

    /// Whether `fillDameBeforePass` applies here as the root: territory
    /// scoring before the encore (KataGo's `shouldSuppressPass`). Default:
    /// never.
    fn fills_dame_before_pass(&self) -> bool {
        false
    }

    /// KataGo's `rootPruneUselessMoves` (in `isAllowedRootMove`): per
    /// policy index, whether the move is never searched from this position
    /// as the root. After the opponent's last four moves were all passes,
    /// no move in either player's pass-alive area is, so that a game where
    /// one side keeps passing is not prolonged by the other filling space.
    /// Empty: none pruned. Default: none.
    fn useless_root_moves(&self) -> Vec<bool> {
        Vec::new()
    }

    /// The board symmetries this position is invariant under, identity
    /// first (for root symmetry pruning). Any ko ban makes a position
    /// asymmetric. The default compares stones; states with more that
    /// decides legality (superko, the encore) must say so.
    fn invariant_symmetries(&self) -> Vec<Symmetry> {
        if self.ko_loc().is_some() {
            return vec![Symmetry::IDENTITY];
        }
        invariant_symmetries(self.x_size(), self.y_size(), |a, b| {
            self.color_at(a) == self.color_at(b)
        })
    }
}

/// Options the search passes with each evaluation, as KataGo's
/// `MiscNNInputParams` plus symmetry handling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalOptions {
    /// Random symmetries (without replacement) to average; 1 = one random symmetry.
    pub num_symmetries: u8,
    /// Seed for the symmetry choice, so single-threaded searches repeat.
    pub symmetry_seed: u64,
    /// Also compute the ownership head.
    pub include_ownership: bool,
    /// Policy temperature applied by the evaluator.
    pub policy_temperature: f32,
    /// Blend towards the optimistic policy (0 = the normal policy).
    pub policy_optimism: f64,
    /// The conservative-pass input feature (set for the root's children).
    pub conservative_pass: bool,
    /// Passing hacks (KataGo's `enablePassingHacks` input).
    pub enable_passing_hacks: bool,
    /// KataGo's playout doubling advantage input, for the player to move.
    pub playout_doubling_advantage: f64,
    /// At most this many of the last moves shown to the net as history
    /// (KataGo's `maxHistory`; `None`: all it takes).
    pub max_history: Option<usize>,
    /// What a human-style net is told about the players (KataGo's
    /// `humanSLProfile`); other nets ignore it.
    pub human_profile: Option<SgfMetadata>,
}

impl Default for EvalOptions {
    fn default() -> EvalOptions {
        EvalOptions {
            num_symmetries: 1,
            symmetry_seed: 0,
            include_ownership: false,
            policy_temperature: 1.0,
            policy_optimism: 0.0,
            conservative_pass: false,
            enable_passing_hacks: false,
            playout_doubling_advantage: 0.0,
            max_history: None,
            human_profile: None,
        }
    }
}

/// Why an evaluation failed (the search stops and reports it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("evaluation failed: {0}")]
pub struct EvalError(pub String);

/// Counters of an evaluator, for `engine benchmark`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EvalStats {
    /// Positions evaluated by the network.
    pub rows: u64,
    /// Forward passes.
    pub batches: u64,
    /// Evaluations answered from the cache.
    pub cache_hits: u64,
}

/// The network as the search sees it.
pub trait PositionEvaluator<S: SearchState>: Send + Sync {
    /// Evaluates `state` (the player to move is `state.next_player()`).
    /// The output's values are white-perspective, its policy -1 on
    /// illegal moves, pass last.
    fn evaluate(&self, state: &S, opts: &EvalOptions) -> Result<Arc<NnOutput>, EvalError>;

    /// Counters so far.
    fn stats(&self) -> EvalStats {
        EvalStats::default()
    }

    /// Whether the net has the short-term error heads that uncertainty
    /// weighting needs.
    fn supports_shortterm_error(&self) -> bool {
        true
    }

    /// Whether the net reads a human SL profile and cannot run without one
    /// (KataGo's `requiresSGFMetadata`).
    fn requires_metadata(&self) -> bool {
        false
    }
}
