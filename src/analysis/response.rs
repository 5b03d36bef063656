//! Building the JSON response of one analysed position, as KataGo's
//! `Search::getAnalysisJson`: `moveInfos`, `rootInfo` (search values, raw
//! network values, hashes), `ownership`, `ownershipStdev` and `policy`.
//!
//! The search hands over its one report ([`AnalysisSnapshot`], values from
//! the root player's point of view); this module only turns them to the
//! perspective the user asked for (`reportAnalysisWinratesAs`) and rounds
//! numbers the way KataGo prints them.

use serde_json::{Map, Value};

use crate::game::Player;
use crate::nn::NnOutput;
use crate::search::{AnalysisSnapshot, MoveInfo, Perspective};
use crate::tsumego::Prepared;

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
    pub perspective: Perspective,
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
    // The snapshot is the root player's view; the raw network values are
    // White's.
    let flip = opts.perspective.flips_from(snap.root_pla);
    let sign = if flip { -1.0 } else { 1.0 };
    let white_sign = if opts.perspective.player(snap.root_pla) == Player::Black {
        -1.0
    } else {
        1.0
    };
    let (xs, ys) = (pos.board_x_size, pos.board_y_size);
    let mut out = head(id, turn, during_search);

    let human = snap.root_human_nn.as_deref();
    let move_infos = snap
        .moves
        .iter()
        .map(|m| move_info_json(m, flip, xs, ys, opts, human))
        .collect();
    out.insert("moveInfos".into(), Value::Array(move_infos));

    let mut r = Map::new();
    r.insert("visits".into(), Value::from(root.visits.max(0)));
    r.insert("weight".into(), Value::from(root.weight));
    let winrate = if flip {
        1.0 - root.winrate
    } else {
        root.winrate
    };
    r.insert("winrate".into(), num(winrate));
    r.insert("scoreSelfplay".into(), num(root.score_mean * sign));
    r.insert("scoreLead".into(), num(root.score_lead * sign));
    r.insert("scoreStdev".into(), num(root.score_stdev));
    r.insert("utility".into(), num(root.utility * sign));
    if let Some(nn) = &snap.root_nn {
        let raw = [
            "rawWinrate",
            "rawScoreSelfplay",
            "rawScoreSelfplayStdev",
            "rawStWrError",
            "rawStScoreError",
        ];
        insert_net_values(&mut r, nn, white_sign, raw);
        r.insert("rawLead".into(), num(nn.white_lead as f64 * white_sign));
        r.insert(
            "rawNoResultProb".into(),
            num(nn.white_no_result_prob as f64),
        );
        r.insert("rawVarTimeLeft".into(), num(nn.var_time_left as f64));
    }
    if let Some(h) = human {
        // KataGo's human fields: the human net's score mean (not its
        // lead), in the reported perspective.
        let keys = [
            "humanWinrate",
            "humanScoreMean",
            "humanScoreStdev",
            "humanStWrError",
            "humanStScoreError",
        ];
        insert_net_values(&mut r, h, white_sign, keys);
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
        if let Some(h) = human {
            let policy = h.policy.iter().map(|&p| num(p as f64)).collect();
            out.insert("humanPolicy".into(), Value::Array(policy));
        }
    }
    if opts.include_ownership {
        if let Some(own) = &snap.ownership {
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

/// The `"tsumego"` object of a tsumego query's response: the problem
/// judged from the snapshot ([`Prepared::judge_snapshot`]).
pub fn tsumego_json(problem: &Prepared, snap: &AnalysisSnapshot) -> Value {
    problem.judge_snapshot(snap).to_json(problem)
}

/// A net's root values under `keys` (winrate, score mean, score stdev,
/// short-term winrate and score errors), as KataGo prints them for the
/// main net (`raw*`) and the human net (`human*`); `sign` turns White's
/// view into the reported one.
fn insert_net_values(r: &mut Map<String, Value>, nn: &NnOutput, sign: f64, keys: [&str; 5]) {
    let wl = (nn.white_win_prob - nn.white_loss_prob) as f64;
    let wsm = nn.white_score_mean as f64;
    let stdev = (nn.white_score_mean_sq as f64 - wsm * wsm).max(0.0).sqrt();
    let values = [
        0.5 + 0.5 * wl * sign,
        wsm * sign,
        stdev,
        nn.shortterm_winloss_error as f64 * 0.5,
        nn.shortterm_score_error as f64,
    ];
    for (key, value) in keys.into_iter().zip(values) {
        r.insert(key.into(), num(value));
    }
}

/// One entry of `moveInfos`; `human` is the human-style net's root output
/// (its prior for the move), when one ran.
fn move_info_json(
    m: &MoveInfo,
    flip: bool,
    xs: usize,
    ys: usize,
    opts: &ReportOptions,
    human: Option<&NnOutput>,
) -> Value {
    let sign = if flip { -1.0 } else { 1.0 };
    let (winrate, lcb) = if flip {
        (1.0 - m.winrate, 1.0 - m.lcb)
    } else {
        (m.winrate, m.lcb)
    };
    let lead = m.score_lead * sign;
    let mut o = Map::new();
    o.insert("move".into(), Value::String(m.mv.to_gtp(xs, ys)));
    o.insert("visits".into(), Value::from(m.visits.max(0)));
    o.insert("weight".into(), num(m.weight));
    o.insert("utility".into(), num(m.utility * sign));
    o.insert("winrate".into(), num(winrate));
    // As KataGo: "scoreMean" carries the lead for older tools, the real
    // mean is "scoreSelfplay".
    o.insert("scoreMean".into(), num(lead));
    o.insert("scoreSelfplay".into(), num(m.score_selfplay * sign));
    o.insert("scoreLead".into(), num(lead));
    o.insert("scoreStdev".into(), num(m.score_stdev));
    if opts.include_no_result_value {
        // The search keeps no per-move no-result value (0 under the rules
        // the engine plays).
        o.insert("noResultValue".into(), num(0.0));
    }
    o.insert("prior".into(), num(m.prior));
    if let Some(h) = human {
        let p = h.policy[m.mv.policy_index(xs, ys)];
        o.insert("humanPrior".into(), num(f64::from(p).max(0.0)));
    }
    o.insert("lcb".into(), num(lcb));
    o.insert("utilityLcb".into(), num(m.utility_lcb * sign));
    o.insert("order".into(), Value::from(m.order));
    if let Some(of) = m.is_symmetry_of {
        o.insert("isSymmetryOf".into(), Value::String(of.to_gtp(xs, ys)));
    }
    o.insert("edgeVisits".into(), Value::from(m.edge_visits.max(0)));
    // A tree search sends all of a child's weight down its one edge.
    o.insert("edgeWeight".into(), num(m.weight));
    o.insert("playSelectionValue".into(), num(m.play_selection_value));

    let pv_len = m.pv.len().min(opts.analysis_pv_len + 1);
    let pv = m.pv[..pv_len]
        .iter()
        .map(|mv| Value::String(mv.to_gtp(xs, ys)))
        .collect();
    o.insert("pv".into(), Value::Array(pv));
    if opts.include_pv_visits {
        let take = |v: &[i64]| -> Value {
            Value::Array(
                (0..pv_len)
                    .map(|i| Value::from(v.get(i).copied().unwrap_or(0).max(0)))
                    .collect(),
            )
        };
        o.insert("pvVisits".into(), take(&m.pv_visits));
        o.insert("pvEdgeVisits".into(), take(&m.pv_edge_visits));
    }
    if opts.include_moves_ownership {
        if let Some(own) = &m.ownership {
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
    use crate::game::{Loc, Move};
    use crate::search::RootInfo;

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
        assert_eq!("BLACK".parse(), Ok(Perspective::Black));
        assert_eq!("w".parse(), Ok(Perspective::White));
        assert_eq!("SideToMove".parse(), Ok(Perspective::SideToMove));
        assert!("blue".parse::<Perspective>().is_err());
        assert!(!Perspective::SideToMove.flips_from(Player::Black));
        assert!(Perspective::Black.flips_from(Player::White));
        assert!(Perspective::White.flips_from(Player::Black));
        assert!(!Perspective::White.flips_from(Player::White));
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

    /// White's values, as seen by `pla` (the root player).
    fn snapshot(pla: Player) -> AnalysisSnapshot {
        let q16 = Move::Play(Loc::from_xy(15, 3, 19));
        let d4 = Move::Play(Loc::from_xy(3, 15, 19));
        let s = if pla == Player::White { 1.0 } else { -1.0 };
        let wr = |w: f64| if s > 0.0 { w } else { 1.0 - w };
        AnalysisSnapshot {
            x_size: 19,
            y_size: 19,
            root_pla: pla,
            moves: vec![MoveInfo {
                mv: q16,
                visits: 10,
                edge_visits: 10,
                weight: 10.0,
                winrate: wr(0.75),
                score_selfplay: s * 3.0,
                score_mean: s * 3.0,
                score_lead: s * 2.0,
                score_stdev: 20.0,
                utility: s * 0.4,
                utility_lcb: s * 0.3,
                lcb: wr(0.7),
                prior: 0.25,
                order: 0,
                pv: vec![q16, d4, Move::Pass],
                pv_visits: vec![10, 4, 1],
                pv_edge_visits: vec![10, 4, 1],
                ownership: Some(vec![s * 0.25; 361]),
                ..MoveInfo::default()
            }],
            root: Some(RootInfo {
                visits: 11,
                weight: 11.0,
                winrate: wr(0.75),
                score_mean: s * 3.0,
                score_lead: s * 2.0,
                score_stdev: 20.0,
                utility: s * 0.4,
                current_player: pla,
                ..RootInfo::default()
            }),
            root_nn: None,
            root_human_nn: None,
            ownership: Some(vec![s * 0.5; 361]),
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
        let v = analysis_json(
            "a",
            3,
            false,
            &facts(Player::Black),
            &snapshot(Player::Black),
            &opts,
        )
        .unwrap();
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

        let v = analysis_json(
            "a",
            3,
            true,
            &facts(Player::White),
            &snapshot(Player::White),
            &opts,
        )
        .unwrap();
        assert_eq!(v["moveInfos"][0]["winrate"], 0.75);
        assert_eq!(v["ownership"][0], 0.5);
        assert_eq!(v["isDuringSearch"], true);
    }

    #[test]
    fn no_root_no_response() {
        let mut s = snapshot(Player::Black);
        s.root = None;
        let f = facts(Player::Black);
        assert!(analysis_json("a", 0, false, &f, &s, &ReportOptions::default()).is_none());
        assert_eq!(
            no_results_json("a", 2).to_string(),
            r#"{"id":"a","isDuringSearch":false,"noResults":true,"turnNumber":2}"#
        );
    }
}
