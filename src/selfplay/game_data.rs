//! What a finished self-play game hands to the training-row writer: KataGo's
//! `FinishedGameData` (`cpp/dataio/trainingwrite.h`) and the end-of-game
//! targets `Play::runGame` computes (`cpp/program/play.cpp`, the
//! `recordFullData` block): final ownership, full area, seki areas and the
//! per-point scoring map.

use crate::game::{
    Area, AreaOptions, Board, BoardHistory, Color, Hash128, Move, Player, TaxRule, MAX_ARR_SIZE,
};

/// Value targets from white's point of view (KataGo's `ValueTargets`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ValueTargets {
    /// White's win probability (or result).
    pub win: f32,
    /// White's loss probability.
    pub loss: f32,
    /// No-result probability.
    pub no_result: f32,
    /// White's expected score.
    pub score: f32,
    /// White's lead, when one was estimated.
    pub lead: Option<f32>,
}

/// One move of a recorded policy target: a move and its (pruned) visits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolicyTargetMove {
    /// The move.
    pub mv: Move,
    /// Its target, in visits after forced-playout pruning.
    pub target: i16,
}

/// One move's search values (KataGo's `QValueTargetMove`), white's view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QValueTargetMove {
    /// The move.
    pub mv: Move,
    /// White's win-loss value of the child, in [-1, 1].
    pub win_loss: f32,
    /// White's score of the child.
    pub score: f32,
    /// The child's visits.
    pub visits: i64,
}

/// Raw network statistics at the root (KataGo's `NNRawStats`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NnRawStats {
    /// White's raw win-loss value.
    pub white_win_loss: f64,
    /// White's raw score mean.
    pub white_score_mean: f64,
    /// Entropy of the raw policy.
    pub policy_entropy: f64,
}

/// How a game was started (`globalTargetsNC` C55, KataGo's `MODE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GameMode {
    /// An ordinary game from the empty board.
    #[default]
    Normal = 0,
    /// A cleanup-phase training game.
    CleanupTraining = 1,
    /// A fork of an earlier game.
    Fork = 2,
    /// A handicap game.
    Handicap = 3,
    /// Started from an SGF position.
    SgfPos = 4,
    /// Started from a hint position.
    HintPos = 5,
    /// A fork from a hint position.
    HintFork = 6,
    /// An asymmetric-playout game.
    Asym = 7,
}

/// The search's output at one turn that becomes (part of) a training row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnRecord {
    /// Expected number of rows for this turn (0 for cheap searches unless
    /// `cheapSearchTargetWeight` > 0; fractions are drawn at random).
    pub target_weight: f64,
    /// Visits of the search before any visit reduction.
    pub unreduced_num_visits: i64,
    /// The recorded policy target; `None` gives a uniform target with
    /// weight 0.
    pub policy_target: Option<Vec<PolicyTargetMove>>,
    /// KL divergence of the policy target from the raw policy.
    pub policy_surprise: f64,
    /// Entropy of the raw policy.
    pub policy_entropy: f64,
    /// Entropy of the policy target.
    pub search_entropy: f64,
    /// The search's value targets at this turn (white's view).
    pub white_value_targets: ValueTargets,
    /// Per-child search values.
    pub q_value_targets: Vec<QValueTargetMove>,
    /// Raw network stats at the root.
    pub nn_raw_stats: NnRawStats,
}

/// A position off the game's line that was searched for training
/// (KataGo's `SidePosition`).
#[derive(Debug, Clone)]
pub struct SidePosition {
    /// The board.
    pub board: Board,
    /// Its history.
    pub hist: BoardHistory,
    /// The player to move.
    pub pla: Player,
    /// The search's targets; its `white_value_targets` serve as the final
    /// targets too.
    pub turn: TurnRecord,
    /// How many network changes had happened when it was searched.
    pub num_nn_changes_so_far: usize,
}

/// The targets derived from how the game ended.
#[derive(Debug, Clone)]
pub struct FinalOutcome {
    /// The final value targets (game result and score), white's view.
    pub white_value_targets: ValueTargets,
    /// Final ownership as scored (KataGo's `finalOwnership`).
    pub ownership: Area,
    /// Every pass-alive stone, territory and remaining stone
    /// (`finalFullArea`).
    pub full_area: Area,
    /// Points of `full_area` that are not independent life (`finalSekiAreas`).
    pub seki_areas: Vec<bool>,
    /// Per-point score for white in [-1, 1] (`finalWhiteScoring`), indexed by
    /// `Loc::idx`.
    pub white_scoring: Vec<f32>,
}

impl FinalOutcome {
    /// Scores the game as `Play::runGame` does once it stops: a no-result
    /// game owns nothing; otherwise the game is ended and scored now (which
    /// also ends a game that hit the move limit) and the areas are taken.
    pub fn compute(
        board: &Board,
        hist: &BoardHistory,
        draw_equivalent_wins_for_white: f64,
    ) -> Self {
        let mut hist = hist.clone();
        let mut seki_areas = vec![false; MAX_ARR_SIZE];
        let (white_value_targets, ownership, full_area) =
            if hist.is_game_finished() && hist.is_no_result() {
                let targets = ValueTargets {
                    win: 0.0,
                    loss: 0.0,
                    no_result: 1.0,
                    score: 0.0,
                    lead: None,
                };
                (targets, Area::empty(), Area::empty())
            } else {
                let ownership = hist.end_and_score_game_now(board);
                let win = match hist.winner() {
                    Some(Player::White) => 1.0,
                    Some(Player::Black) => 0.0,
                    None => draw_equivalent_wins_for_white as f32,
                };
                let score = hist.final_white_minus_black_score()
                    + hist.white_komi_adjustment_for_draws(draw_equivalent_wins_for_white);
                let targets = ValueTargets {
                    win,
                    loss: 1.0 - win,
                    no_result: 0.0,
                    score,
                    lead: Some(score),
                };
                let multi = hist.suicide_legal_for_pass_alive();
                let full_area = board.calculate_area(AreaOptions {
                    non_pass_alive_stones: true,
                    safe_big_territories: true,
                    unsafe_big_territories: true,
                    multi_stone_suicide_legal: multi,
                });
                let (independent, _) = board.calculate_independent_life_area(false, false, multi);
                for loc in board.locs() {
                    seki_areas[loc.idx()] =
                        independent.get(loc) == Color::Empty && full_area.get(loc) != Color::Empty;
                }
                (targets, ownership, full_area)
            };
        let white_scoring = fill_scoring(board, &ownership, hist.rules().tax_rule == TaxRule::All);
        FinalOutcome {
            white_value_targets,
            ownership,
            full_area,
            seki_areas,
            white_scoring,
        }
    }
}

/// KataGo's `NNInputs::fillScoring`: +1/-1 per owned point; with the group
/// tax, each owned region's empty (or captured) points share the region's
/// value less two points.
pub fn fill_scoring(board: &Board, area: &Area, group_tax: bool) -> Vec<f32> {
    let mut scoring = vec![0f32; MAX_ARR_SIZE];
    let value_of = |c: Color| match c {
        Color::White => 1.0f32,
        Color::Black => -1.0,
        _ => 0.0,
    };
    if !group_tax {
        for loc in board.locs() {
            scoring[loc.idx()] = value_of(area.get(loc));
        }
        return scoring;
    }
    let mut visited = vec![false; MAX_ARR_SIZE];
    let mut queue = Vec::with_capacity(MAX_ARR_SIZE);
    let (xs, ys) = (board.x_size(), board.y_size());
    for loc in board.locs() {
        let c = area.get(loc);
        if visited[loc.idx()] || c == Color::Empty {
            continue;
        }
        let full = value_of(c);
        queue.clear();
        queue.push(loc);
        visited[loc.idx()] = true;
        let mut head = 0;
        let mut territory = 0usize;
        while head < queue.len() {
            let next = queue[head];
            head += 1;
            if board.get(next) != c {
                territory += 1;
            }
            let (x, y) = next.xy(xs);
            let mut neighbours = [None; 4];
            if x > 0 {
                neighbours[0] = Some(board.loc(x - 1, y));
            }
            if x + 1 < xs {
                neighbours[1] = Some(board.loc(x + 1, y));
            }
            if y > 0 {
                neighbours[2] = Some(board.loc(x, y - 1));
            }
            if y + 1 < ys {
                neighbours[3] = Some(board.loc(x, y + 1));
            }
            for adj in neighbours.into_iter().flatten() {
                if area.get(adj) == c && !visited[adj.idx()] {
                    visited[adj.idx()] = true;
                    queue.push(adj);
                }
            }
        }
        let territory_value = if territory <= 2 {
            0.0
        } else {
            full * (territory as f32 - 2.0) / territory as f32
        };
        for &l in &queue {
            scoring[l.idx()] = if board.get(l) != c {
                territory_value
            } else {
                full
            };
        }
    }
    scoring
}

/// A finished game with everything the row writer needs (KataGo's
/// `FinishedGameData` with `hasFullData`).
#[derive(Debug, Clone)]
pub struct FinishedGame {
    /// The board when recording started (after any initialisation moves).
    pub start_board: Board,
    /// The history when recording started; its moves are the
    /// initialisation moves (`globalTargetsNC` C53 counts them).
    pub start_hist: BoardHistory,
    /// The player to move at the start.
    pub start_pla: Player,
    /// The history at the end of the game, before the final scoring (a game
    /// that hit the move limit is unfinished here).
    pub end_hist: BoardHistory,
    /// The game's random 128-bit hash.
    pub game_hash: Hash128,
    /// Whether the game stopped at `maxMovesPerGame`.
    pub hit_turn_limit: bool,
    /// Extra black stones (handicap).
    pub num_extra_black: u32,
    /// How the game was initialised.
    pub mode: GameMode,
    /// The game's draw value for white.
    pub draw_equivalent_wins_for_white: f64,
    /// The player given the playout advantage, if any.
    pub playout_doubling_advantage_pla: Option<Player>,
    /// That player's playout doubling advantage.
    pub playout_doubling_advantage: f64,
    /// Weight of every row of the game (`globalTargetsNC` C25).
    pub training_weight: f64,
    /// One record per move played after the start.
    pub turns: Vec<TurnRecord>,
    /// The game's outcome targets.
    pub outcome: FinalOutcome,
    /// Side positions searched during the game.
    pub side_positions: Vec<SidePosition>,
    /// Turn indices at which a newer network was switched in mid-game.
    pub changed_nets_turns: Vec<usize>,
}

impl FinishedGame {
    /// The moves played after the start, with their players.
    pub fn game_moves(&self) -> &[(Move, Player)] {
        &self.end_hist.moves()[self.start_hist.moves().len()..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Loc, Rules};

    #[test]
    fn group_tax_scoring_shares_region_value() {
        // A 5x1-wide white wall at x=1 owning the column x=0: with the tax,
        // the 5 empty points share 5-2 points.
        let mut board = Board::new(5, 5).unwrap();
        let mut area = Area::empty();
        for y in 0..5 {
            assert!(board.set_stone(Loc::from_xy(1, y, 5), Color::White));
            area.0[Loc::from_xy(0, y, 5).idx()] = Color::White;
            area.0[Loc::from_xy(1, y, 5).idx()] = Color::White;
        }
        let s = fill_scoring(&board, &area, true);
        let terr = s[Loc::from_xy(0, 2, 5).idx()];
        assert!((terr - 0.6).abs() < 1e-6, "{terr}");
        assert_eq!(s[Loc::from_xy(1, 2, 5).idx()], 1.0);
        assert_eq!(s[Loc::from_xy(3, 2, 5).idx()], 0.0);
        let plain = fill_scoring(&board, &area, false);
        assert_eq!(plain[Loc::from_xy(0, 2, 5).idx()], 1.0);
    }

    #[test]
    fn no_result_game_owns_nothing_and_unfinished_game_is_scored() {
        let board = Board::new(5, 5).unwrap();
        let hist = BoardHistory::new(&board, Player::Black, Rules::default());
        let out = FinalOutcome::compute(&board, &hist, 0.5);
        // Empty board, komi 7.5 under default rules: white wins by komi.
        assert_eq!(out.white_value_targets.win, 1.0);
        assert!(out.white_value_targets.score > 0.0);
        assert!(out.seki_areas.iter().all(|&s| !s));
    }
}
