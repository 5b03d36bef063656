//! `fillDameBeforePass`: KataGo's `shouldSuppressPass`, the root's pass
//! taken out of the move choice under territory scoring while a move is
//! as good, so that dame are filled before the game ends.

use super::results::SearchView;
use super::tree::Node;
use crate::game::{Move, Player};
use crate::nn::NnOutput;

impl SearchView<'_> {
    /// KataGo's `shouldSuppressPass` (`fillDameBeforePass`, territory
    /// scoring): the root's pass gets no play weight when a move that is
    /// not surely in the opponent's area (or touches a point surely the
    /// mover's), well searched, is within 0.1 utility and half a point of
    /// score and lead of passing, so dame are filled before the pass.
    pub(super) fn should_suppress_pass(&self, node: &Node, nn: &NnOutput) -> bool {
        const EXTREME: f64 = 0.95;
        let Some(own) = nn.white_ownership.as_deref() else {
            return false;
        };
        let children = node.children();
        let Some(pass) = children.iter().find(|c| c.mv == Move::Pass) else {
            return false;
        };
        // Weights as the root counts them (edge visits).
        let pv = pass.edge_values();
        if pv.visits <= 0 || pv.weight_sum <= 1e-10 {
            return false;
        }
        let (xs, ys) = (self.x_size, self.y_size);
        let s = if self.root_pla == Player::White {
            1.0
        } else {
            -1.0
        };
        let mine = |x: usize, y: usize| s * f64::from(own[y * xs + x]);
        children.iter().any(|c| {
            let Move::Play(loc) = c.mv else {
                return false;
            };
            let (x, y) = loc.xy(xs);
            let opp_owned = mine(x, y) < -EXTREME;
            let next_to_mine = [(0, 1), (2, 1), (1, 0), (1, 2)].iter().any(|&(dx, dy)| {
                let (ax, ay) = ((x + dx).wrapping_sub(1), (y + dy).wrapping_sub(1));
                ax < xs && ay < ys && mine(ax, ay) > EXTREME
            });
            if opp_owned && !next_to_mine {
                return false;
            }
            let v = c.edge_values();
            if (c.edge_visits() <= 500 && v.weight_sum <= 2.0 * pv.weight_sum.sqrt())
                || v.weight_sum <= 1e-10
            {
                return false;
            }
            // Values are white's: White wants them high, Black low.
            s * (v.utility - pv.utility) > -0.1
                && s * (v.score_mean - pv.score_mean) > -0.5
                && s * (v.lead - pv.lead) > -0.5
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Loc;
    use crate::search::params::SearchParams;
    use crate::search::root_symmetry::RootSymmetry;
    use crate::search::tree::Child;
    use crate::search::tree::NodeValues;
    use crate::search::utility::UtilityFn;
    use crate::search::SetupFor;
    use std::sync::Arc;

    /// A 3x3 root, White to move, with a pass child and a child at B2
    /// with these (visits = weight, utility, score = lead) values, and the
    /// root's net ownership `own` everywhere (white's view).
    fn root(pass: (i64, f64, f64), b2: (i64, f64, f64), own: f32) -> Node {
        let root = Node::new(Player::White, true);
        let nn = NnOutput {
            x_size: 3,
            y_size: 3,
            policy: vec![0.1; 10],
            white_win_prob: 0.5,
            white_loss_prob: 0.5,
            white_no_result_prob: 0.0,
            white_score_mean: 0.0,
            white_score_mean_sq: 1.0,
            white_lead: 0.0,
            var_time_left: -1.0,
            shortterm_winloss_error: -1.0,
            shortterm_score_error: -1.0,
            white_ownership: Some(vec![own; 9]),
        };
        assert!(root.try_begin_eval());
        root.finish_eval(Arc::new(nn));
        for (mv, (visits, utility, score)) in
            [(Move::Pass, pass), (Move::Play(Loc::from_xy(1, 1, 3)), b2)]
        {
            let node = Node::new(Player::Black, false);
            let v = NodeValues {
                visits: 0,
                weight_sum: visits as f64,
                weight_sq_sum: visits as f64,
                utility,
                score_mean: score,
                score_mean_sq: score * score + 1.0,
                lead: score,
                ..NodeValues::default()
            };
            node.store_values(&v, visits);
            root.children_mut()
                .push(Child::with_edge_visits(mv, Arc::new(node), visits));
        }
        root
    }

    fn suppressed(root: &Node) -> bool {
        let params = SearchParams::defaults(SetupFor::Gtp);
        let view = SearchView {
            params: &params,
            root,
            root_pla: Player::White,
            x_size: 3,
            y_size: 3,
            turn: 10,
            utility: UtilityFn::new(&params, 3, 3, 0.0),
            root_symmetry: &RootSymmetry::none(3, 3),
            ending_bonus: &[],
            fills_dame: true,
            human_root: None,
            gumbel: None,
        };
        let nn = root.nn().expect("evaluated");
        view.should_suppress_pass(root, &nn)
    }

    #[test]
    fn pass_is_suppressed_only_for_a_well_searched_move_as_good_as_passing() {
        // As good (utility within 0.1, score and lead within 0.5): suppressed.
        assert!(suppressed(&root((100, 0.5, 3.0), (600, 0.45, 2.8), 0.0)));
        // Much worse in utility, or in score.
        assert!(!suppressed(&root((100, 0.5, 3.0), (600, 0.35, 2.8), 0.0)));
        assert!(!suppressed(&root((100, 0.5, 3.0), (600, 0.45, 2.0), 0.0)));
        // Too little searched: at most 500 visits and 2*sqrt(100) weight.
        assert!(!suppressed(&root((100, 0.5, 3.0), (20, 0.5, 3.0), 0.0)));
        // On a point surely Black's, with no neighbour surely White's.
        assert!(!suppressed(&root((100, 0.5, 3.0), (600, 0.45, 2.8), -0.99)));
        // No visit to the pass: nothing to compare with.
        assert!(!suppressed(&root((0, 0.5, 3.0), (600, 0.45, 2.8), 0.0)));
    }
}
