//! KataGo's pruned root values (`getPrunedRootValues`), what analysis and
//! `kata-analyze` report as the root's: the search's values with each
//! child weighed by what the search would play (its play selection value
//! without LCB) rather than by the visits exploration gave it.

use super::SearchView;
use crate::nn::NnOutput;
use crate::search::tree::NodeValues;

impl SearchView<'_> {
    /// The root's values with its children weighed by their play selection
    /// values (root pruning and `chosenMovePrune`/`chosenMoveSubtract`, no
    /// LCB), plus its own evaluation `nn` at its playout weight; visits and
    /// weight are the root's. `None` when no child has a value (KataGo then
    /// reports the root's own values).
    pub(crate) fn pruned_root_values(&self, nn: &NnOutput) -> Option<NodeValues> {
        let selected = self.selection_of(self.root, true, false);
        if selected.iter().all(|c| c.value <= 1e-50) {
            return None;
        }
        let mut sums = NodeValues::default();
        let mut weight_sum = 0.0;
        for c in &selected {
            let v = c.node.values();
            if v.visits <= 0 || v.weight_sum <= 0.0 || c.edge_visits <= 0 {
                continue;
            }
            let w = c.value;
            sums.win_loss += w * v.win_loss;
            sums.no_result += w * v.no_result;
            sums.score_mean += w * v.score_mean;
            sums.score_mean_sq += w * v.score_mean_sq;
            sums.lead += w * v.lead;
            sums.utility += w * v.utility;
            weight_sum += w;
        }
        let w = self.utility.playout_weight(self.params, nn);
        sums.win_loss += w * (nn.white_win_prob as f64 - nn.white_loss_prob as f64);
        sums.no_result += w * nn.white_no_result_prob as f64;
        sums.score_mean += w * nn.white_score_mean as f64;
        sums.score_mean_sq += w * nn.white_score_mean_sq as f64;
        sums.lead += w * nn.white_lead as f64;
        sums.utility += w * self.utility.of_nn(nn);
        weight_sum += w;
        let root = self.root.values();
        Some(NodeValues {
            visits: root.visits,
            weight_sum: root.weight_sum,
            weight_sq_sum: root.weight_sq_sum,
            win_loss: (sums.win_loss / weight_sum).clamp(-1.0, 1.0),
            no_result: sums.no_result / weight_sum,
            score_mean: sums.score_mean / weight_sum,
            score_mean_sq: sums.score_mean_sq / weight_sum,
            lead: sums.lead / weight_sum,
            utility: sums.utility / weight_sum,
            utility_sq: root.utility_sq,
        })
    }
}
