//! Building the JSON response of one analysed position, as KataGo's
//! `Search::getAnalysisJson`: `moveInfos`, `rootInfo` (search values, raw
//! network values, hashes), `ownership`, `ownershipStdev` and `policy`.
//!
//! The search hands over plain data ([`AnalysisSnapshot`]) with every value
//! from **white's** point of view, as KataGo keeps them internally; this
//! module turns them to the perspective the user asked for
//! (`reportAnalysisWinratesAs`) and rounds numbers the way KataGo prints them.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::game::{Move, Player};
use crate::nn::NnOutput;

/// Significant digits KataGo keeps in analysis values (`OUTPUT_PRECISION`).
const OUTPUT_PRECISION: i32 = 8;

/// Rounds to `precision` significant digits, exactly as KataGo's
/// `Global::roundDynamic` (so that printed values match digit for digit).
pub fn round_dynamic(x: f64, precision: i32) -> f64 {
    let absx = x.abs();
    if absx <= 1e-60 || !x.is_finite() {
        return x;
    }
    let order_of_magnitude = absx.log10().floor() as i32;
    let rounding_magnitude = order_of_magnitude - precision;
    if rounding_magnitude >= 0 {
        return x.round();
    }
    let inverse_scale = 10f64.powf(-rounding_magnitude as f64);
    round_static(x, inverse_scale)
}

/// Rounds to a multiple of `1 / inverse_scale` (KataGo's `Global::roundStatic`).
pub fn round_static(x: f64, inverse_scale: f64) -> f64 {
    (x * inverse_scale).round() / inverse_scale
}

/// A number rounded like KataGo's analysis values (8 significant digits).
fn num(x: f64) -> Value {
    Value::from(round_dynamic(x, OUTPUT_PRECISION))
}

/// Whose point of view reported winrates, scores and ownership take
/// (`reportAnalysisWinratesAs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportPerspective {
    /// Always black's.
    Black,
    /// Always white's.
    White,
    /// The player to move at the analysed position (KataGo's default).
    #[default]
    SideToMove,
}

impl ReportPerspective {
    /// Whether white-perspective values must be negated for a position with
    /// `to_move` to move.
    pub fn flips(self, to_move: Player) -> bool {
        match self {
            ReportPerspective::Black => true,
            ReportPerspective::White => false,
            ReportPerspective::SideToMove => to_move == Player::Black,
        }
    }
}

/// `reportAnalysisWinratesAs` value that is none of `BLACK`, `WHITE`,
/// `SIDETOMOVE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Could not parse config value for reportAnalysisWinratesAs: {0}")]
pub struct BadPerspective(pub String);

impl FromStr for ReportPerspective {
    type Err = BadPerspective;
    /// Parses KataGo's values, in any case: `b`/`black`, `w`/`white`, `sidetomove`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "b" | "black" => Ok(ReportPerspective::Black),
            "w" | "white" => Ok(ReportPerspective::White),
            "sidetomove" => Ok(ReportPerspective::SideToMove),
            _ => Err(BadPerspective(s.to_string())),
        }
    }
}

impl fmt::Display for ReportPerspective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReportPerspective::Black => "BLACK",
            ReportPerspective::White => "WHITE",
            ReportPerspective::SideToMove => "SIDETOMOVE",
        })
    }
}

/// Search statistics of one root move (KataGo's `AnalysisData`), values
/// from white's point of view.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveStats {
    /// The move, `Move::Pass` for a pass.
    pub mv: Move,
    /// Visits of the child node.
    pub visits: u64,
    /// Visits the root sent down this edge.
    pub edge_visits: u64,
    /// Total weight of the child's visits.
    pub weight: f64,
    /// Total weight the root sent down this edge.
    pub edge_weight: f64,
    /// Win minus loss in [-1, 1], white's view.
    pub white_win_loss: f64,
    /// Expected final score (white minus black).
    pub white_score_mean: f64,
    /// Expected lead of white in points.
    pub white_lead: f64,
    /// Standard deviation of the final score.
    pub score_stdev: f64,
    /// Expected no-result value.
    pub no_result_value: f64,
    /// Utility, white's view.
    pub white_utility: f64,
    /// Lower confidence bound of the utility, white's view.
    pub white_utility_lcb: f64,
    /// Lower confidence bound of the winrate in winrate units (KataGo's
    /// "hacked" LCB), white's view.
    pub white_winrate_lcb: f64,
    /// Policy prior of the move.
    pub prior: f64,
    /// KataGo's play selection value (what `order` is sorted by).
    pub play_selection_value: f64,
    /// Rank of the move, 0 = best.
    pub order: usize,
    /// When the move was not searched because it is symmetric to another
    /// move (`rootSymmetryPruning`), that move.
    pub is_symmetry_of: Option<Move>,
    /// Principal variation starting with `mv`.
    pub pv: Vec<Move>,
    /// Visits of the node reached by each move of `pv`.
    pub pv_visits: Vec<u64>,
    /// Visits of the edge of each move of `pv`.
    pub pv_edge_visits: Vec<u64>,
    /// Average tree ownership after the move, +1 = white, row-major from the
    /// top-left, when asked for.
    pub white_ownership: Option<Vec<f64>>,
    /// Its standard deviation over the subtree, when asked for.
    pub ownership_stdev: Option<Vec<f64>>,
}

impl MoveStats {
    /// Statistics of `mv` with every number zero and nothing optional, to
    /// fill in field by field.
    pub fn new(mv: Move) -> MoveStats {
        MoveStats {
            mv,
            visits: 0,
            edge_visits: 0,
            weight: 0.0,
            edge_weight: 0.0,
            white_win_loss: 0.0,
            white_score_mean: 0.0,
            white_lead: 0.0,
            score_stdev: 0.0,
            no_result_value: 0.0,
            white_utility: 0.0,
            white_utility_lcb: 0.0,
            white_winrate_lcb: 0.0,
            prior: 0.0,
            play_selection_value: 0.0,
            order: 0,
            is_symmetry_of: None,
            pv: Vec::new(),
            pv_visits: Vec::new(),
            pv_edge_visits: Vec::new(),
            white_ownership: None,
            ownership_stdev: None,
        }
    }
}

/// Statistics of the root (KataGo's `ReportedSearchValues`), white's view.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RootStats {
    pub visits: u64,
    pub weight: f64,
    pub white_win_loss: f64,
    pub white_score_mean: f64,
    pub white_lead: f64,
    pub score_stdev: f64,
    pub white_utility: f64,
}

/// What a search reports about one position (partial or final).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnalysisSnapshot {
    /// Root moves, ordered by `order`.
    pub moves: Vec<MoveStats>,
    /// Root statistics; `None` when the search has no root values yet (then
    /// there is nothing to report).
    pub root: Option<RootStats>,
    /// The root's network output (raw values and the policy).
    pub root_nn: Option<Arc<NnOutput>>,
    /// Average tree ownership at the root, +1 = white, row-major from the
    /// top-left, when asked for.
    pub white_ownership: Option<Vec<f64>>,
    /// Its standard deviation, when asked for.
    pub ownership_stdev: Option<Vec<f64>>,
}

/// Facts about the analysed position itself, known before any search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionFacts {
    pub board_x_size: usize,
    pub board_y_size: usize,
    /// The player to move.
    pub to_move: Player,
    /// Hash of (stones, player to move, simple ko) as `(high, low)` words.
    pub this_hash: (u64, u64),
    /// The least of `this_hash` over the 8 board symmetries.
    pub sym_hash: (u64, u64),
}

/// What the query asked to be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportOptions {
    pub perspective: ReportPerspective,
    /// Longest PV after the move itself.
    pub analysis_pv_len: usize,
    pub include_policy: bool,
    pub include_ownership: bool,
    pub include_ownership_stdev: bool,
    pub include_moves_ownership: bool,
    pub include_moves_ownership_stdev: bool,
    pub include_pv_visits: bool,
    pub include_no_result_value: bool,
}

/// The `{"id","isDuringSearch","turnNumber"}` head every response has.
fn head(id: &str, turn: usize, during_search: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), Value::String(id.to_string()));
    m.insert("isDuringSearch".into(), Value::Bool(during_search));
    m.insert("turnNumber".into(), Value::from(turn));
    m
}

/// The response for a query terminated before any analysis:
/// `{"id","isDuringSearch":false,"noResults":true,"turnNumber"}`.
pub fn no_results_json(id: &str, turn: usize) -> Value {
    let mut m = head(id, turn, false);
    m.insert("noResults".into(), Value::Bool(true));
    Value::Object(m)
}

/// The analysis response for turn `turn` of query `id`, or `None` when the
/// snapshot has no root values (KataGo then writes nothing, or `noResults`
/// if the query was terminated).
pub fn analysis_json(
    id: &str,
    turn: usize,
    during_search: bool,
    pos: &PositionFacts,
    snap: &AnalysisSnapshot,
    opts: &ReportOptions,
) -> Option<Value> {
    let root = snap.root.as_ref()?;
    let flip = opts.perspective.flips(pos.to_move);
    let sign = if flip { -1.0 } else { 1.0 };
    let (xs, ys) = (pos.board_x_size, pos.board_y_size);
    let mut out = head(id, turn, during_search);

    let move_infos = snap
        .moves
        .iter()
        .map(|m| move_info_json(m, flip, xs, ys, opts))
        .collect();
    out.insert("moveInfos".into(), Value::Array(move_infos));

    let mut r = Map::new();
    r.insert("visits".into(), Value::from(root.visits));
    r.insert("weight".into(), Value::from(root.weight));
    r.insert(
        "winrate".into(),
        num(0.5 + 0.5 * root.white_win_loss * sign),
    );
    r.insert("scoreSelfplay".into(), num(root.white_score_mean * sign));
    r.insert("scoreLead".into(), num(root.white_lead * sign));
    r.insert("scoreStdev".into(), num(root.score_stdev));
    r.insert("utility".into(), num(root.white_utility * sign));
    if let Some(nn) = &snap.root_nn {
        let wl = (nn.white_win_prob - nn.white_loss_prob) as f64;
        r.insert("rawWinrate".into(), num(0.5 + 0.5 * wl * sign));
        r.insert("rawLead".into(), num(nn.white_lead as f64 * sign));
        r.insert(
            "rawScoreSelfplay".into(),
            num(nn.white_score_mean as f64 * sign),
        );
        let wsm = nn.white_score_mean as f64;
        let stdev = (nn.white_score_mean_sq as f64 - wsm * wsm).max(0.0).sqrt();
        r.insert("rawScoreSelfplayStdev".into(), num(stdev));
        r.insert(
            "rawNoResultProb".into(),
            num(nn.white_no_result_prob as f64),
        );
        r.insert(
            "rawStWrError".into(),
            num(nn.shortterm_winloss_error as f64 * 0.5),
        );
        r.insert(
            "rawStScoreError".into(),
            num(nn.shortterm_score_error as f64),
        );
        r.insert("rawVarTimeLeft".into(), num(nn.var_time_left as f64));
    }
    r.insert("thisHash".into(), Value::String(hash_hex(pos.this_hash)));
    r.insert("symHash".into(), Value::String(hash_hex(pos.sym_hash)));
    r.insert(
        "currentPlayer".into(),
        Value::String(pos.to_move.letter().to_string()),
    );
    out.insert("rootInfo".into(), Value::Object(r));

    if opts.include_policy {
        // KataGo gives up on the whole response when the root has no net
        // output; the same happens here.
        let nn = snap.root_nn.as_ref()?;
        let policy = nn.policy.iter().map(|&p| num(p as f64)).collect();
        out.insert("policy".into(), Value::Array(policy));
    }
    if opts.include_ownership {
        if let Some(own) = &snap.white_ownership {
            out.insert("ownership".into(), ownership_json(own, flip));
        }
    }
    if opts.include_ownership_stdev {
        if let Some(sd) = &snap.ownership_stdev {
            out.insert("ownershipStdev".into(), ownership_json(sd, false));
        }
    }
    Some(Value::Object(out))
}

/// One entry of `moveInfos`.
fn move_info_json(m: &MoveStats, flip: bool, xs: usize, ys: usize, opts: &ReportOptions) -> Value {
    let sign = if flip { -1.0 } else { 1.0 };
    let mut winrate = 0.5 * (1.0 + m.white_win_loss);
    let mut lcb = m.white_winrate_lcb;
    if flip {
        winrate = 1.0 - winrate;
        lcb = 1.0 - lcb;
    }
    let lead = m.white_lead * sign;
    let mut o = Map::new();
    o.insert("move".into(), Value::String(m.mv.to_gtp(xs, ys)));
    o.insert("visits".into(), Value::from(m.visits));
    o.insert("weight".into(), num(m.weight));
    o.insert("utility".into(), num(m.white_utility * sign));
    o.insert("winrate".into(), num(winrate));
    // As KataGo: "scoreMean" carries the lead for older tools, the real
    // mean is "scoreSelfplay".
    o.insert("scoreMean".into(), num(lead));
    o.insert("scoreSelfplay".into(), num(m.white_score_mean * sign));
    o.insert("scoreLead".into(), num(lead));
    o.insert("scoreStdev".into(), num(m.score_stdev));
    if opts.include_no_result_value {
        o.insert("noResultValue".into(), num(m.no_result_value));
    }
    o.insert("prior".into(), num(m.prior));
    o.insert("lcb".into(), num(lcb));
    o.insert("utilityLcb".into(), num(m.white_utility_lcb * sign));
    o.insert("order".into(), Value::from(m.order));
    if let Some(of) = m.is_symmetry_of {
        o.insert("isSymmetryOf".into(), Value::String(of.to_gtp(xs, ys)));
    }
    o.insert("edgeVisits".into(), Value::from(m.edge_visits));
    o.insert("edgeWeight".into(), num(m.edge_weight));
    o.insert("playSelectionValue".into(), num(m.play_selection_value));

    let pv_len = m.pv.len().min(opts.analysis_pv_len + 1);
    let pv = m.pv[..pv_len]
        .iter()
        .map(|mv| Value::String(mv.to_gtp(xs, ys)))
        .collect();
    o.insert("pv".into(), Value::Array(pv));
    if opts.include_pv_visits {
        let take = |v: &[u64]| -> Value {
            Value::Array(
                (0..pv_len)
                    .map(|i| Value::from(v.get(i).copied().unwrap_or(0)))
                    .collect(),
            )
        };
        o.insert("pvVisits".into(), take(&m.pv_visits));
        o.insert("pvEdgeVisits".into(), take(&m.pv_edge_visits));
    }
    if opts.include_moves_ownership {
        if let Some(own) = &m.white_ownership {
            o.insert("ownership".into(), ownership_json(own, flip));
        }
    }
    if opts.include_moves_ownership_stdev {
        if let Some(sd) = &m.ownership_stdev {
            o.insert("ownershipStdev".into(), ownership_json(sd, false));
        }
    }
    Value::Object(o)
}

/// An ownership map (or its stdev) rounded to 6 decimals as KataGo does,
/// negated when the perspective flips.
fn ownership_json(values: &[f64], flip: bool) -> Value {
    Value::Array(
        values
            .iter()
            .map(|&v| Value::from(round_static(if flip { -v } else { v }, 1_000_000.0)))
            .collect(),
    )
}

/// KataGo's hash text: the high word then the low word, 16 upper-case hex
/// digits each.
pub fn hash_hex((high, low): (u64, u64)) -> String {
    format!("{high:016X}{low:016X}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Loc;

    #[test]
    fn round_dynamic_matches_katago() {
        // KataGo's "8 digits" keep 9 significant digits (the leading digit
        // is not counted).
        assert_eq!(round_dynamic(0.874_085_516_648_995_3, 8), 0.874085517);
        assert_eq!(round_dynamic(8.18535151076558, 8), 8.18535151);
        assert_eq!(round_dynamic(-123456789.4, 8), -123456789.0);
        assert_eq!(round_dynamic(0.0, 8), 0.0);
        assert_eq!(round_dynamic(1e-70, 8), 1e-70);
        assert_eq!(round_dynamic(0.00012345678912, 8), 0.000123456789);
        assert!(round_dynamic(f64::NAN, 8).is_nan());
        assert_eq!(round_static(0.1234567, 1_000_000.0), 0.123457);
    }

    #[test]
    fn perspective_parses_katago_values() {
        assert_eq!("BLACK".parse(), Ok(ReportPerspective::Black));
        assert_eq!("w".parse(), Ok(ReportPerspective::White));
        assert_eq!("SideToMove".parse(), Ok(ReportPerspective::SideToMove));
        assert!("blue".parse::<ReportPerspective>().is_err());
        assert!(ReportPerspective::SideToMove.flips(Player::Black));
        assert!(!ReportPerspective::SideToMove.flips(Player::White));
        assert!(ReportPerspective::Black.flips(Player::White));
        assert!(!ReportPerspective::White.flips(Player::Black));
    }

    fn facts(to_move: Player) -> PositionFacts {
        PositionFacts {
            board_x_size: 19,
            board_y_size: 19,
            to_move,
            this_hash: (0xF8FA, 0x5AA5),
            sym_hash: (1, 2),
        }
    }

    fn snapshot() -> AnalysisSnapshot {
        let q16 = Move::Play(Loc::from_xy(15, 3, 19));
        let d4 = Move::Play(Loc::from_xy(3, 15, 19));
        AnalysisSnapshot {
            moves: vec![MoveStats {
                mv: q16,
                visits: 10,
                edge_visits: 10,
                weight: 10.0,
                edge_weight: 10.0,
                white_win_loss: 0.5,
                white_score_mean: 3.0,
                white_lead: 2.0,
                score_stdev: 20.0,
                white_utility: 0.4,
                white_utility_lcb: 0.3,
                white_winrate_lcb: 0.7,
                prior: 0.25,
                order: 0,
                pv: vec![q16, d4, Move::Pass],
                pv_visits: vec![10, 4, 1],
                pv_edge_visits: vec![10, 4, 1],
                white_ownership: Some(vec![0.25; 361]),
                ..MoveStats::new(q16)
            }],
            root: Some(RootStats {
                visits: 11,
                weight: 11.0,
                white_win_loss: 0.5,
                white_score_mean: 3.0,
                white_lead: 2.0,
                score_stdev: 20.0,
                white_utility: 0.4,
            }),
            root_nn: None,
            white_ownership: Some(vec![0.5; 361]),
            ownership_stdev: Some(vec![0.1; 361]),
        }
    }

    #[test]
    fn values_turn_to_the_side_to_move() {
        let opts = ReportOptions {
            analysis_pv_len: 1,
            include_ownership: true,
            include_pv_visits: true,
            include_moves_ownership: true,
            ..ReportOptions::default()
        };
        let v = analysis_json("a", 3, false, &facts(Player::Black), &snapshot(), &opts).unwrap();
        let mi = &v["moveInfos"][0];
        assert_eq!(mi["move"], "Q16");
        assert_eq!(mi["winrate"], 0.25);
        assert_eq!(mi["lcb"], 0.3);
        assert_eq!(mi["scoreLead"], -2.0);
        assert_eq!(mi["scoreMean"], -2.0);
        assert_eq!(mi["scoreSelfplay"], -3.0);
        assert_eq!(mi["pv"], serde_json::json!(["Q16", "D4"]));
        assert_eq!(mi["pvVisits"], serde_json::json!([10, 4]));
        assert_eq!(mi["ownership"][0], -0.25);
        assert_eq!(v["rootInfo"]["winrate"], 0.25);
        assert_eq!(v["rootInfo"]["currentPlayer"], "B");
        assert_eq!(
            v["rootInfo"]["thisHash"],
            "000000000000F8FA0000000000005AA5"
        );
        assert_eq!(v["ownership"][0], -0.5);
        assert!(v.get("ownershipStdev").is_none());
        assert!(v.get("policy").is_none());
        assert_eq!(v["isDuringSearch"], false);
        assert_eq!(v["turnNumber"], 3);

        let v = analysis_json("a", 3, true, &facts(Player::White), &snapshot(), &opts).unwrap();
        assert_eq!(v["moveInfos"][0]["winrate"], 0.75);
        assert_eq!(v["ownership"][0], 0.5);
        assert_eq!(v["isDuringSearch"], true);
    }

    #[test]
    fn no_root_no_response() {
        let mut s = snapshot();
        s.root = None;
        let f = facts(Player::Black);
        assert!(analysis_json("a", 0, false, &f, &s, &ReportOptions::default()).is_none());
        assert_eq!(
            no_results_json("a", 2).to_string(),
            r#"{"id":"a","isDuringSearch":false,"noResults":true,"turnNumber":2}"#
        );
    }
}
