//! The live analysis lines of `lz-analyze`, `kata-analyze` and Sabaki's
//! `analyze`, printed exactly as KataGo prints them.
//!
//! The search fills one [`AnalysisSnapshot`] (the search's own report,
//! values from the root player's point of view); [`format_analysis`] turns
//! it into one output line for the reporting perspective. Formatting only;
//! the arguments are parsed in `analyze_args`.

use crate::game::Move;
use crate::search::{AnalysisSnapshot, MoveInfo, Perspective, RootInfo};

use super::analyze_args::{AnalyzeArgs, AnalyzeKind};
use crate::numfmt::format_g;

/// Formats one analysis line (without its newline) from `perspective`, or
/// `None` when there is nothing to print (no moves, or no root values for
/// the kata formats), as KataGo prints nothing then.
pub fn format_analysis(
    snap: &AnalysisSnapshot,
    args: &AnalyzeArgs,
    perspective: Perspective,
) -> Option<String> {
    let moves = kept_moves(snap, args);
    if moves.is_empty() {
        return None;
    }
    let flip = perspective.flips_from(snap.root_pla);
    let mut out = String::with_capacity(256 * moves.len());
    if args.kind == AnalyzeKind::Lz {
        let f = Formatter {
            snap,
            args,
            flip,
            sign: 1.0,
            showpoint: false,
        };
        for (i, m) in moves.iter().enumerate() {
            f.push_lz_move(&mut out, i, m);
        }
        return Some(out);
    }

    let root = snap.root.as_ref()?;
    let f = Formatter {
        snap,
        args,
        flip,
        sign: if flip { -1.0 } else { 1.0 },
        showpoint: args.kind == AnalyzeKind::Sabaki,
    };
    for (i, m) in moves.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        f.push_kata_move(&mut out, m);
    }
    if args.root_info {
        f.push_root_info(&mut out, root);
    }
    if args.ownership || args.ownership_stdev {
        f.push_grid(&mut out, "ownership", snap.ownership.as_ref(), f.sign);
    }
    if args.ownership_stdev {
        f.push_grid(
            &mut out,
            "ownershipStdev",
            snap.ownership_stdev.as_ref(),
            1.0,
        );
    }
    Some(out)
}

/// The moves to print: those with visits, padded to `min_moves` with
/// unvisited ones, at most `max_moves`.
fn kept_moves<'a>(snap: &'a AnalysisSnapshot, args: &AnalyzeArgs) -> Vec<&'a MoveInfo> {
    let mut kept = 0usize;
    snap.moves
        .iter()
        .filter(|m| {
            let keep = m.visits > 0 || kept < args.min_moves;
            kept += keep as usize;
            keep
        })
        .take(args.max_moves)
        .collect()
}

/// What every part of one line is formatted with.
struct Formatter<'a> {
    snap: &'a AnalysisSnapshot,
    args: &'a AnalyzeArgs,
    /// Whether the reporting perspective is the root player's opponent.
    flip: bool,
    /// -1 to flip signed values (kata formats), else 1.
    sign: f64,
    /// Sabaki's `analyze` prints a decimal point on every number.
    showpoint: bool,
}

impl Formatter<'_> {
    fn vertex(&self, m: Move) -> String {
        m.to_gtp(self.snap.x_size, self.snap.y_size)
    }

    fn join_pv(&self, pv: &[Move]) -> String {
        pv.iter()
            .map(|&m| self.vertex(m))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn g(&self, x: f64) -> String {
        // `+ 0.0` turns a negated zero into zero: no `-0` in the output.
        format_g(x + 0.0, self.showpoint)
    }

    /// Winrate and LCB from the reporting perspective.
    fn winrate_lcb(&self, m: &MoveInfo) -> (f64, f64) {
        if self.flip {
            (1.0 - m.winrate, 1.0 - m.lcb)
        } else {
            (m.winrate, m.lcb)
        }
    }

    /// The `pvVisits` and `pvEdgeVisits` lists, where asked for.
    fn push_pv_visits(&self, out: &mut String, m: &MoveInfo) {
        if self.args.pv_visits {
            out.push_str(" pvVisits ");
            out.push_str(&join_u64(&m.pv_visits));
        }
        if self.args.pv_edge_visits {
            out.push_str(" pvEdgeVisits ");
            out.push_str(&join_u64(&m.pv_edge_visits));
        }
    }

    /// One value per board point (0 where the search has none).
    fn push_grid(&self, out: &mut String, name: &str, vals: Option<&Vec<f64>>, s: f64) {
        out.push(' ');
        out.push_str(name);
        let n = self.snap.x_size * self.snap.y_size;
        for i in 0..n {
            let v = vals.and_then(|v| v.get(i)).copied().unwrap_or(0.0);
            out.push(' ');
            out.push_str(&self.g(s * v));
        }
    }

    /// One move of an `lz-analyze` line (integers in ten-thousandths).
    fn push_lz_move(&self, out: &mut String, i: usize, m: &MoveInfo) {
        let (winrate, lcb) = self.winrate_lcb(m);
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&format!(
            "info move {} visits {} winrate {} prior {} lcb {} order {} pv {}",
            self.vertex(m.mv),
            m.visits.max(0),
            round_i64(winrate * 10000.0),
            round_i64(m.prior.max(0.0) * 10000.0),
            round_i64(lcb * 10000.0),
            m.order,
            self.join_pv(&m.pv)
        ));
        self.push_pv_visits(out, m);
    }

    /// One move of a `kata-analyze` or `analyze` line.
    fn push_kata_move(&self, out: &mut String, m: &MoveInfo) {
        let (args, sign) = (self.args, self.sign);
        let g = |x: f64| self.g(x);
        let (winrate, lcb) = self.winrate_lcb(m);
        out.push_str(&format!(
            "info move {} visits {} edgeVisits {} ",
            self.vertex(m.mv),
            m.visits.max(0),
            m.edge_visits.max(0),
        ));
        let values = [
            m.utility,
            winrate,
            m.score_lead,
            m.score_stdev,
            m.score_selfplay,
        ];
        self.push_values(out, values);
        if args.no_result_value {
            // The search keeps no no-result value per move (KataGo's is 0
            // under every rule set the engine plays).
            out.push_str(&format!(" noResultValue {}", g(0.0)));
        }
        out.push_str(&format!(
            " prior {} lcb {} utilityLcb {} weight {}",
            g(m.prior.max(0.0)),
            g(lcb),
            g(sign * m.utility_lcb),
            g(m.weight)
        ));
        if let Some(sym) = m.is_symmetry_of {
            out.push_str(&format!(" isSymmetryOf {}", self.vertex(sym)));
        }
        out.push_str(&format!(" order {} pv {}", m.order, self.join_pv(&m.pv)));
        self.push_pv_visits(out, m);
        if args.moves_ownership || args.moves_ownership_stdev {
            self.push_grid(out, "movesOwnership", m.ownership.as_ref(), sign);
        }
        if args.moves_ownership_stdev {
            self.push_grid(out, "movesOwnershipStdev", m.ownership_stdev.as_ref(), 1.0);
        }
    }

    /// `utility winrate scoreMean scoreStdev scoreLead scoreSelfplay` of a
    /// move or the root, from `[utility, winrate, lead, stdev, selfplay]`
    /// (winrate already in the reported perspective; scoreMean is the lead,
    /// as in KataGo).
    fn push_values(&self, out: &mut String, values: [f64; 5]) {
        let [utility, winrate, lead, stdev, selfplay] = values;
        let (sign, g) = (self.sign, |x: f64| self.g(x));
        out.push_str(&format!(
            "utility {} winrate {} scoreMean {} scoreStdev {} scoreLead {} scoreSelfplay {}",
            g(sign * utility),
            g(winrate),
            g(sign * lead),
            g(stdev),
            g(sign * lead),
            g(sign * selfplay),
        ));
    }

    /// The `rootInfo` part of a kata line.
    fn push_root_info(&self, out: &mut String, root: &RootInfo) {
        let g = |x: f64| self.g(x);
        let winrate = if self.flip {
            1.0 - root.winrate
        } else {
            root.winrate
        };
        out.push_str(&format!(" rootInfo visits {} ", root.visits.max(0)));
        // KataGo prints the root's score mean as its `scoreSelfplay`.
        let values = [
            root.utility,
            winrate,
            root.score_lead,
            root.score_stdev,
            root.score_mean,
        ];
        self.push_values(out, values);
        out.push_str(&format!(" weight {}", g(root.weight)));
        if self.snap.root_nn.is_some() {
            out.push_str(&format!(
                " rawStWrError {} rawStScoreError {} rawVarTimeLeft {}",
                g(root.raw_shortterm_winloss_error),
                g(root.raw_shortterm_score_error),
                g(root.raw_var_time_left)
            ));
        }
    }
}

/// Visit counts, negatives printed as 0.
fn join_u64(v: &[i64]) -> String {
    v.iter()
        .map(|n| n.max(&0).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// C++ `round` (half away from zero) as an integer for printing.
fn round_i64(x: f64) -> i64 {
    x.round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line for the sample search seen by `pla`, from the side to move.
    fn side_to_move_line(pla: Player, args: &AnalyzeArgs) -> String {
        format_analysis(&seen_by(sample(), pla), args, Perspective::SideToMove).unwrap()
    }
    use crate::game::{Loc, Player};
    use crate::search::RootInfo;

    fn mv(gtp: &str) -> Move {
        Move::parse(gtp, 19, 19).unwrap()
    }

    fn sample() -> AnalysisSnapshot {
        let d4 = mv("D4");
        let q16 = mv("Q16");
        AnalysisSnapshot {
            x_size: 19,
            y_size: 19,
            root_pla: Player::White,
            moves: vec![
                MoveInfo {
                    mv: d4,
                    visits: 487,
                    edge_visits: 487,
                    utility: 0.0408357,
                    winrate: 0.519982,
                    score_selfplay: 0.515178,
                    score_stdev: 24.7058,
                    score_lead: 0.611848,
                    prior: 0.221121,
                    lcb: 0.522779,
                    utility_lcb: 0.0486664,
                    weight: 487.5,
                    order: 0,
                    pv: vec![d4, q16],
                    pv_visits: vec![487, 200],
                    ..MoveInfo::default()
                },
                MoveInfo {
                    mv: q16,
                    visits: 0,
                    prior: 0.1,
                    winrate: 0.5,
                    lcb: 0.5,
                    order: 1,
                    pv: vec![q16],
                    ..MoveInfo::default()
                },
            ],
            root: Some(RootInfo {
                visits: 500,
                winrate: 0.52,
                score_lead: 0.6,
                score_stdev: 24.0,
                weight: 500.0,
                ..RootInfo::default()
            }),
            root_nn: None,
            root_human_nn: None,
            ownership: Some(vec![0.25; 361]),
            ownership_stdev: None,
        }
    }

    /// `snap` (White's values) as the search reports it with `pla` to move:
    /// from `pla`'s point of view.
    fn seen_by(mut snap: AnalysisSnapshot, pla: Player) -> AnalysisSnapshot {
        snap.root_pla = pla;
        if pla == Player::White {
            return snap;
        }
        for m in &mut snap.moves {
            m.winrate = 1.0 - m.winrate;
            m.lcb = 1.0 - m.lcb;
            m.utility = -m.utility;
            m.utility_lcb = -m.utility_lcb;
            m.score_lead = -m.score_lead;
            m.score_selfplay = -m.score_selfplay;
        }
        if let Some(r) = &mut snap.root {
            r.winrate = 1.0 - r.winrate;
            r.utility = -r.utility;
            r.score_lead = -r.score_lead;
            r.score_mean = -r.score_mean;
        }
        if let Some(o) = &mut snap.ownership {
            o.iter_mut().for_each(|x| *x = -*x);
        }
        snap
    }

    #[test]
    fn lz_format_is_integers_from_the_movers_view() {
        let args = AnalyzeArgs::new(AnalyzeKind::Lz);
        let line = side_to_move_line(Player::Black, &args);
        assert_eq!(
            line,
            "info move D4 visits 487 winrate 4800 prior 2211 lcb 4772 order 0 pv D4 Q16"
        );
        let mut args = args;
        args.min_moves = 2;
        args.pv_visits = true;
        let line = side_to_move_line(Player::White, &args);
        assert_eq!(
            line,
            "info move D4 visits 487 winrate 5200 prior 2211 lcb 5228 order 0 pv D4 Q16 pvVisits 487 200 \
             info move Q16 visits 0 winrate 5000 prior 1000 lcb 5000 order 1 pv Q16 pvVisits "
        );
    }

    #[test]
    fn kata_format_has_katago_field_order() {
        let mut args = AnalyzeArgs::new(AnalyzeKind::Kata);
        args.root_info = true;
        let line = side_to_move_line(Player::White, &args);
        assert_eq!(
            line,
            "info move D4 visits 487 edgeVisits 487 utility 0.0408357 winrate 0.519982 scoreMean 0.611848 \
             scoreStdev 24.7058 scoreLead 0.611848 scoreSelfplay 0.515178 prior 0.221121 lcb 0.522779 \
             utilityLcb 0.0486664 weight 487.5 order 0 pv D4 Q16 \
             rootInfo visits 500 utility 0 winrate 0.52 scoreMean 0.6 scoreStdev 24 scoreLead 0.6 \
             scoreSelfplay 0 weight 500"
        );
        // Black to move: values are negated / mirrored.
        let line = side_to_move_line(Player::Black, &args);
        assert!(line.starts_with(
            "info move D4 visits 487 edgeVisits 487 utility -0.0408357 winrate 0.480018 scoreMean -0.611848"
        ));
        // Fixed White perspective: no flip even with Black to move.
        let line =
            format_analysis(&seen_by(sample(), Player::Black), &args, Perspective::White).unwrap();
        assert!(line.contains("winrate 0.519982"));
    }

    #[test]
    fn ownership_is_row_major_and_flipped() {
        let mut args = AnalyzeArgs::new(AnalyzeKind::Kata);
        args.ownership = true;
        let line = side_to_move_line(Player::Black, &args);
        let (_, own) = line.split_once(" ownership ").unwrap();
        let vals: Vec<&str> = own.split(' ').collect();
        assert_eq!(vals.len(), 361);
        assert!(vals.iter().all(|v| *v == "-0.25"));
    }

    #[test]
    fn sabaki_format_always_has_a_decimal_point() {
        let args = AnalyzeArgs::new(AnalyzeKind::Sabaki);
        let line = side_to_move_line(Player::White, &args);
        assert!(line.contains("weight 487.500 order 0"), "{line}");
        assert!(
            line.contains("visits 487 edgeVisits 487 utility 0.0408357"),
            "{line}"
        );
    }

    #[test]
    fn nothing_is_printed_without_moves_or_root() {
        let kata = AnalyzeArgs::new(AnalyzeKind::Kata);
        let no_moves_wanted = AnalyzeArgs {
            max_moves: 0,
            ..kata.clone()
        };
        let mut no_root = sample();
        no_root.root = None;
        let mut no_moves = sample();
        no_moves.moves.clear();
        for (snap, args) in [
            (no_root, &kata),
            (no_moves, &kata),
            (sample(), &no_moves_wanted),
        ] {
            let seen = seen_by(snap, Player::Black);
            assert_eq!(format_analysis(&seen, args, Perspective::SideToMove), None);
        }
    }

    #[test]
    fn symmetry_and_pass_moves_print_as_vertices() {
        let mut snap = sample();
        snap.moves[0].is_symmetry_of = Some(Move::Play(Loc::from_xy(15, 3, 19)));
        snap.moves[0].mv = Move::Pass;
        snap.moves[0].pv = vec![Move::Pass];
        let args = AnalyzeArgs::new(AnalyzeKind::Kata);
        let line = format_analysis(
            &seen_by(snap.clone(), Player::White),
            &args,
            Perspective::SideToMove,
        )
        .unwrap();
        assert!(line.starts_with("info move pass "));
        assert!(line.contains(" isSymmetryOf Q16 order 0 pv pass"));
    }
}
