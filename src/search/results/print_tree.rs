//! KataGo's `printTree` (`search/searchresults.cpp`), the text GTP's
//! `debug_moves` answers: one line per node with its values from one
//! player's view, its prior, weight factor, play selection value, visits
//! and principal variation, below a chosen branch of the tree.

use std::fmt::Write as _;
use std::sync::Arc;

use super::{explore, sign, SearchView, Selected};
use crate::game::{Move, Player};
use crate::search::explore::ChildWeight;
use crate::search::tree::Node;

/// What [`SearchView::print_tree`] prints: the parts of KataGo's
/// `PrintTreeOptions` that `debug_moves` sets (every other option at
/// KataGo's default: no child is hidden for having few visits, a node is
/// expanded when it has a visit).
#[derive(Debug, Clone, PartialEq)]
pub struct PrintTreeOptions {
    /// How many levels below the end of `branch` to expand (`maxDepth`).
    pub max_depth: usize,
    /// The line from the root to print down to before expanding; other
    /// moves along it are not shown (`onlyBranch`).
    pub branch: Vec<Move>,
    /// Moves of each line's principal variation after its own
    /// (`maxPVDepth`).
    pub max_pv_depth: usize,
}

impl Default for PrintTreeOptions {
    /// `debug_moves`' options: one level, no branch, PVs of 7.
    fn default() -> PrintTreeOptions {
        PrintTreeOptions {
            max_depth: 1,
            branch: Vec::new(),
            max_pv_depth: 7,
        }
    }
}

/// One node's line (KataGo's `AnalysisData`, the fields printed). Values
/// are White's; NaN where KataGo's are NaN (the root has no prior, LCB or
/// weight factor).
struct Line {
    mv: Option<Move>,
    /// The child's node (`None`: the root).
    node: Option<Arc<Node>>,
    /// Visits through the edge (the root: its own visits).
    edge_visits: i64,
    child_visits: i64,
    utility: f64,
    result_utility: f64,
    score_utility: f64,
    score_mean: f64,
    lead: f64,
    lcb: f64,
    prior: f64,
    weight_factor: f64,
    play_selection_value: f64,
    pv: Vec<Move>,
}

/// The parent's values a child without visits or weight takes (KataGo
/// reports the first-play utility and the parent's scores for it).
struct ParentValues {
    fpu: f64,
    score_mean: f64,
    score_mean_sq: f64,
    lead: f64,
}

impl SearchView<'_> {
    /// KataGo's `printTree` from the root with `options`, values from
    /// `perspective`'s view: empty when the root has not been searched.
    pub fn print_tree(&self, options: &PrintTreeOptions, perspective: Player) -> String {
        let root = self.root;
        let v = root.values();
        if v.visits <= 0 || v.weight_sum <= 0.0 {
            return String::new();
        }
        let root_line = Line {
            mv: None,
            node: None,
            edge_visits: v.visits,
            child_visits: v.visits,
            utility: v.utility,
            result_utility: self.utility.result(v.win_loss, v.no_result),
            score_utility: self.utility.score(v.score_mean, v.score_mean_sq),
            score_mean: v.score_mean,
            lead: v.lead,
            lcb: f64::NAN,
            prior: f64::NAN,
            weight_factor: f64::NAN,
            play_selection_value: 0.0,
            pv: self.root_pv(options.max_pv_depth),
        };
        let mut out = String::new();
        let mut prefix = String::new();
        let printer = Printer {
            view: self,
            options,
            perspective,
        };
        printer.print(&mut out, &mut prefix, &root_line, 0);
        out
    }

    /// The root's principal variation: its best move by the root's play
    /// selection values, then the line below it.
    fn root_pv(&self, max_len: usize) -> Vec<Move> {
        let mut best: Option<Selected> = None;
        for c in self.selection() {
            if best.as_ref().is_none_or(|b| c.value > b.value) {
                best = Some(c);
            }
        }
        match best {
            Some(b) if max_len > 0 => self.pv_of(b.mv, &b.node, b.edge_visits, max_len).0,
            _ => Vec::new(),
        }
    }

    /// The lines of `node`'s children in KataGo's order (visited first,
    /// then by play selection value, visits and prior), with their weight
    /// factors: each child's share of the node's value after noise pruning
    /// and the down-weighting of bad children.
    fn child_lines(&self, node: &Node, is_root: bool, max_pv_depth: usize) -> Vec<Line> {
        let Some(nn) = node.nn() else {
            return Vec::new();
        };
        let p = self.params;
        let (xs, ys) = (self.x_size, self.y_size);
        let selected = self.selection_of(node, is_root, true);
        let prior = |mv: Move| nn.policy[mv.policy_index(xs, ys)] as f64;
        let parent = {
            let v = node.values();
            let visited_policy: f64 = selected.iter().map(|c| prior(c.mv).max(0.0)).sum();
            // KataGo's `getAnalysisData` takes the root's first-play
            // reduction at every node.
            let fpu = explore::fpu_value(
                p,
                node.next_pla,
                true,
                v.utility,
                self.utility.of_nn(&nn),
                visited_policy,
            );
            ParentValues {
                fpu,
                score_mean: v.score_mean,
                score_mean_sq: v.score_mean_sq,
                lead: v.lead,
            }
        };
        let mut lines: Vec<Line> = selected
            .iter()
            .map(|c| self.child_line(c, &parent, node.next_pla, prior(c.mv), max_pv_depth))
            .collect();
        let mut weights: Vec<ChildWeight> = lines
            .iter()
            .zip(&selected)
            .map(|(line, c)| ChildWeight {
                self_utility: sign(node.next_pla) * line.utility,
                weight: c.edge.weight_sum,
                visits: line.child_visits,
                policy: prior(c.mv).max(1e-30),
            })
            .collect();
        let mut total: f64 = weights.iter().map(|w| w.weight).sum();
        if p.use_noise_pruning {
            total = explore::prune_noise_weight(p, &mut weights, total);
        }
        explore::downweight_bad_children(
            &mut weights,
            p.value_weight_exponent,
            total,
            total,
            0.0,
            0.0,
        );
        for (line, w) in lines.iter_mut().zip(&weights) {
            line.weight_factor = w.weight;
        }
        // A stable sort, as KataGo's.
        lines.sort_by(|a, b| {
            (b.edge_visits > 0)
                .cmp(&(a.edge_visits > 0))
                .then(b.play_selection_value.total_cmp(&a.play_selection_value))
                .then(b.edge_visits.cmp(&a.edge_visits))
                .then(b.prior.total_cmp(&a.prior))
        });
        lines
    }

    /// One child's line (KataGo's `getAnalysisDataOfSingleChild`).
    fn child_line(
        &self,
        c: &Selected,
        parent: &ParentValues,
        pla: Player,
        prior: f64,
        max_pv_depth: usize,
    ) -> Line {
        let v = c.node.values();
        let pv = self.pv_of(c.mv, &c.node, c.edge_visits, max_pv_depth + 1).0;
        // The LCB is the mover's; lines hold White's values.
        let lcb = sign(pla) * c.lcb;
        let mut line = Line {
            mv: Some(c.mv),
            node: Some(Arc::clone(&c.node)),
            edge_visits: c.edge_visits,
            child_visits: v.visits,
            utility: v.utility,
            result_utility: self.utility.result(v.win_loss, v.no_result),
            score_utility: self.utility.score(v.score_mean, v.score_mean_sq),
            score_mean: v.score_mean,
            lead: v.lead,
            lcb,
            prior,
            weight_factor: f64::NAN,
            play_selection_value: c.value,
            pv,
        };
        if v.visits <= 0 || v.weight_sum <= 1e-30 {
            let score_utility = self.utility.score(parent.score_mean, parent.score_mean_sq);
            line.utility = parent.fpu;
            line.score_utility = score_utility;
            line.result_utility = parent.fpu - score_utility;
            line.score_mean = parent.score_mean;
            line.lead = parent.lead;
        }
        line
    }
}

/// The recursive part of `printTree`, with what stays fixed on the way.
struct Printer<'v, 'a> {
    view: &'v SearchView<'a>,
    options: &'v PrintTreeOptions,
    perspective: Player,
}

impl Printer<'_, '_> {
    fn print(&self, out: &mut String, prefix: &mut String, line: &Line, depth: usize) {
        let opts = self.options;
        let branch = &opts.branch;
        let factor = if self.perspective == Player::Black {
            -1.0
        } else {
            1.0
        };
        self.write_line(out, prefix, line, depth, factor);
        if depth >= branch.len() && (depth >= opts.max_depth + branch.len() || line.edge_visits < 1)
        {
            return;
        }
        let node: &Node = line.node.as_deref().unwrap_or(self.view.root);
        if depth == branch.len() {
            let mark = if node.next_pla == self.perspective {
                "^"
            } else {
                "v"
            };
            let _ = writeln!(out, "---{}({mark})---", node.next_pla);
        }
        let is_root = depth == 0;
        let children = self.view.child_lines(node, is_root, opts.max_pv_depth);
        for child in &children {
            let Some(mv) = child.mv else { continue };
            let next_depth = match branch.get(depth) {
                None => depth + 1,
                Some(&b) if b == mv => depth + 1,
                Some(_) => continue,
            };
            let old_len = prefix.len();
            let name = match mv {
                Move::Pass => "pss".to_string(),
                m => m.to_gtp(self.view.x_size, self.view.y_size),
            };
            let _ = write!(prefix, "{name:<3} ");
            self.print(out, prefix, child, next_depth);
            prefix.truncate(old_len);
        }
    }

    /// One node's line, as KataGo formats it.
    fn write_line(&self, out: &mut String, prefix: &str, line: &Line, depth: usize, factor: f64) {
        let _ = write!(out, "{prefix}: ");
        if line.child_visits > 0 {
            let _ = write!(
                out,
                "T {:6.2}c W {:6.2}c S {:6.2}c ({:+5.1} L {:+5.1}) ",
                factor * line.utility * 100.0,
                factor * line.result_utility * 100.0,
                factor * line.score_utility * 100.0,
                factor * line.score_mean,
                factor * line.lead
            );
        }
        if depth > 0 && !line.lcb.is_nan() {
            let _ = write!(out, "LCB {:7.2}c ", factor * line.lcb * 100.0);
        }
        if !line.prior.is_nan() {
            let _ = write!(out, "P {:5.2}% ", line.prior * 100.0);
        }
        if !line.weight_factor.is_nan() {
            let _ = write!(out, "WF {:5.1} ", line.weight_factor);
        }
        if depth > 0 && line.play_selection_value >= 0.0 {
            let _ = write!(out, "PSV {:7.0} ", line.play_selection_value);
        }
        let _ = write!(out, "N {:7}  --  ", line.child_visits);
        let moves: Vec<String> = line
            .pv
            .iter()
            .map(|m| m.to_gtp(self.view.x_size, self.view.y_size))
            .collect();
        let _ = writeln!(out, "{}", moves.join(" "));
    }
}
