//! One report of a search for every front end, as KataGo's
//! `search/analysisdata.h`: an [`AnalysisSnapshot`] holds the search's own
//! [`MoveInfo`]s and [`RootInfo`] (values from the root player's point of
//! view, the LCB computed once by the search), the root's network output
//! and the tree ownership. GTP (`kata-analyze`, `lz-analyze`) and the JSON
//! analysis engine only turn it to the [`Perspective`] the user asked for
//! and format it.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::game::{Move, Player};
use crate::nn::NnOutput;

use super::results::{MoveInfo, RootInfo, SearchView};

/// Whose point of view reported winrates, scores and ownership take
/// (`reportAnalysisWinratesAs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Perspective {
    /// Always Black's.
    Black,
    /// Always White's.
    White,
    /// The player to move at the analysed position (KataGo's default).
    #[default]
    SideToMove,
}

impl Perspective {
    /// Parses KataGo's values in any case: `b`/`black`, `w`/`white`,
    /// `sidetomove`.
    pub fn parse(s: &str) -> Option<Perspective> {
        match s.trim().to_ascii_lowercase().as_str() {
            "b" | "black" => Some(Perspective::Black),
            "w" | "white" => Some(Perspective::White),
            "sidetomove" => Some(Perspective::SideToMove),
            _ => None,
        }
    }

    /// The player whose view is reported when `root_pla` is to move.
    pub fn player(self, root_pla: Player) -> Player {
        match self {
            Perspective::Black => Player::Black,
            Perspective::White => Player::White,
            Perspective::SideToMove => root_pla,
        }
    }

    /// Whether values from `root_pla`'s point of view (what a snapshot
    /// holds) must be negated, and winrates mirrored, to report them.
    pub fn flips_from(self, root_pla: Player) -> bool {
        self.player(root_pla) != root_pla
    }
}

/// A `reportAnalysisWinratesAs` value that is none of `BLACK`, `WHITE`,
/// `SIDETOMOVE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Could not parse config value for reportAnalysisWinratesAs: {0}")]
pub struct BadPerspective(pub String);

impl FromStr for Perspective {
    type Err = BadPerspective;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Perspective::parse(s).ok_or_else(|| BadPerspective(s.to_string()))
    }
}

impl fmt::Display for Perspective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Perspective::Black => "BLACK",
            Perspective::White => "WHITE",
            Perspective::SideToMove => "SIDETOMOVE",
        })
    }
}

/// What a snapshot should contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SnapshotRequest {
    /// Longest PV, the move itself included.
    pub pv_len: usize,
    /// Pad the moves with unvisited ones up to this many (GTP `minmoves`).
    pub min_moves: usize,
    /// Per-move tree ownership (and its standard deviation).
    pub moves_ownership: bool,
    /// Root tree ownership.
    pub ownership: bool,
    /// Root tree ownership's standard deviation.
    pub ownership_stdev: bool,
}

/// One report of a running or finished search (partial or final).
#[derive(Debug, Clone, PartialEq)]
pub struct AnalysisSnapshot {
    /// Board width (vertices, ownership).
    pub x_size: usize,
    /// Board height.
    pub y_size: usize,
    /// The player to move at the root: every value is from this player's
    /// point of view.
    pub root_pla: Player,
    /// Root moves in KataGo's order, symmetric copies included.
    pub moves: Vec<MoveInfo>,
    /// Root values; `None` before the root is evaluated (then there is
    /// nothing to report).
    pub root: Option<RootInfo>,
    /// The root's network output (raw values and the policy).
    pub root_nn: Option<Arc<NnOutput>>,
    /// The human-style net's output at the root (`-human-model`), when it
    /// ran.
    pub root_human_nn: Option<Arc<NnOutput>>,
    /// Tree ownership at the root, +1 = the root player, row-major from the
    /// top-left, when asked for.
    pub ownership: Option<Vec<f64>>,
    /// Its standard deviation, when asked for.
    pub ownership_stdev: Option<Vec<f64>>,
}

impl AnalysisSnapshot {
    /// Moves a search summary ([`Self::log_summary`]) lists.
    const LOG_MOVES: usize = 10;

    /// KataGo's `logSearchInfo` in a shorter form: `heading`, the root's
    /// visits and values (the root player's view) and the top moves with
    /// visits, winrate, score lead, prior and principal variation; with
    /// `chosen_line`, the chosen move's line too when it is not among them.
    pub fn log_summary(&self, heading: &str, chosen: Option<Move>, chosen_line: bool) -> String {
        let vertex = |m: Move| m.to_gtp(self.x_size, self.y_size);
        let line = |m: &MoveInfo| {
            let pv: Vec<String> = m.pv.iter().map(|&p| vertex(p)).collect();
            format!(
                "  {:<4} visits {:>6} winrate {:.4} lead {:>6.2} prior {:.4} PV {}",
                vertex(m.mv),
                m.visits,
                m.winrate,
                m.score_lead,
                m.prior,
                pv.join(" ")
            )
        };
        let chose = chosen.map_or_else(String::new, |m| format!(", chose {}", vertex(m)));
        let mut out = match &self.root {
            Some(r) => format!(
                "{heading}: {} visits, winrate {:.4}, score lead {:.2}{chose}",
                r.visits, r.winrate, r.score_lead
            ),
            None => format!("{heading}: no evaluation{chose}"),
        };
        for m in self.moves.iter().take(Self::LOG_MOVES) {
            out.push('\n');
            out.push_str(&line(m));
        }
        let listed = self
            .moves
            .iter()
            .take(Self::LOG_MOVES)
            .any(|m| Some(m.mv) == chosen);
        if chosen_line && !listed {
            if let Some(m) = self.moves.iter().find(|m| Some(m.mv) == chosen) {
                out.push_str("\n  chosen:");
                out.push_str(&line(m));
            }
        }
        out
    }

    /// A snapshot with nothing to report.
    pub fn empty(x_size: usize, y_size: usize, root_pla: Player) -> AnalysisSnapshot {
        AnalysisSnapshot {
            x_size,
            y_size,
            root_pla,
            moves: Vec::new(),
            root: None,
            root_nn: None,
            root_human_nn: None,
            ownership: None,
            ownership_stdev: None,
        }
    }
}

impl Default for AnalysisSnapshot {
    fn default() -> AnalysisSnapshot {
        AnalysisSnapshot::empty(0, 0, Player::Black)
    }
}

impl SearchView<'_> {
    /// The report of this search as `req` asks (KataGo's
    /// `getAnalysisData` plus root values and ownership).
    pub fn snapshot(&self, req: &SnapshotRequest) -> AnalysisSnapshot {
        let mut snap = AnalysisSnapshot::empty(self.x_size, self.y_size, self.root_pla);
        let Some(root) = self.root_info() else {
            return snap;
        };
        let infos = self.move_infos(req.pv_len, req.moves_ownership);
        snap.moves = self.with_symmetric_copies(self.pad_with_unvisited(infos, req.min_moves));
        if req.ownership || req.ownership_stdev {
            if let Some((mean, stdev)) = self.ownership() {
                snap.ownership = req.ownership.then_some(mean);
                snap.ownership_stdev = req.ownership_stdev.then_some(stdev);
            }
        }
        snap.root = Some(root);
        snap.root_nn = self.root_nn_output();
        snap.root_human_nn = self.human_root.clone();
        snap
    }
}

impl Default for MoveInfo {
    /// A pass with no visits and even values, to fill in field by field.
    fn default() -> MoveInfo {
        MoveInfo {
            mv: crate::game::Move::Pass,
            visits: 0,
            edge_visits: 0,
            weight: 0.0,
            winrate: 0.5,
            score_mean: 0.0,
            score_lead: 0.0,
            score_selfplay: 0.0,
            score_stdev: 0.0,
            prior: 0.0,
            utility: 0.0,
            lcb: 0.5,
            utility_lcb: 0.0,
            order: 0,
            play_selection_value: 0.0,
            pv: Vec::new(),
            pv_visits: Vec::new(),
            pv_edge_visits: Vec::new(),
            ownership: None,
            ownership_stdev: None,
            is_symmetry_of: None,
        }
    }
}

impl Default for RootInfo {
    /// No visits and even values, to fill in field by field.
    fn default() -> RootInfo {
        RootInfo {
            visits: 0,
            weight: 0.0,
            winrate: 0.5,
            score_mean: 0.0,
            score_lead: 0.0,
            score_stdev: 0.0,
            utility: 0.0,
            raw_winrate: 0.5,
            raw_score_mean: 0.0,
            raw_lead: 0.0,
            raw_no_result: 0.0,
            raw_shortterm_winloss_error: 0.0,
            raw_shortterm_score_error: 0.0,
            raw_var_time_left: 0.0,
            current_player: Player::Black,
        }
    }
}
