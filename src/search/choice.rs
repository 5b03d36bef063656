//! The move the search plays (KataGo's `getChosenMoveLoc` over
//! `getPlaySelectionValues`): play selection values, moved towards the
//! human net's policy with `humanSLChosenMoveProp`, chosen with the
//! chosen-move temperature.

use rand::Rng;

use super::explore;
use super::results::{sign, SearchView};
use crate::game::{Move, Player};

impl SearchView<'_> {
    /// The chosen-move temperature at this turn: the early temperature
    /// decaying to the late one with the configured half-life.
    pub(super) fn chosen_move_temperature(&self) -> f64 {
        let p = self.params;
        explore::interpolate_early(
            p.chosen_move_temperature_halflife,
            p.chosen_move_temperature_early,
            p.chosen_move_temperature,
            self.turn,
            self.x_size,
            self.y_size,
        )
    }

    /// The move to play: by play selection value (moved towards the
    /// human net's policy with `humanSLChosenMoveProp`) with KataGo's
    /// chosen-move temperature; from the raw policy if the root has no
    /// children.
    pub fn chosen_move<R: Rng>(&self, rng: &mut R) -> Option<Move> {
        if let Some(mv) = self.gumbel_choice() {
            return Some(mv);
        }
        let p = self.params;
        let sel = self.selection();
        let temp = self.chosen_move_temperature();
        let (mut cands, only_below): (Vec<(Move, f64)>, f64) = if sel.iter().any(|x| x.value > 0.0)
        {
            let cands = sel.iter().map(|x| (x.mv, x.value)).collect();
            (cands, p.chosen_move_temperature_only_below_prob)
        } else {
            let nn = self.root.nn()?;
            let policy = nn.policy.iter().enumerate().filter(|(_, &x)| x >= 0.0);
            let cands = policy
                .map(|(i, &x)| {
                    (
                        Move::from_policy_index(i, self.x_size, self.y_size),
                        x as f64,
                    )
                })
                .collect();
            (cands, 1.0)
        };
        self.mix_human_policy(&mut cands);
        let vals: Vec<f64> = cands.iter().map(|c| c.1).collect();
        let i = explore::choose_index_with_temperature(rng, &vals, temp, only_below)?;
        Some(cands[i].0)
    }

    /// Gumbel root search's move (`gumbelRootSearch`): the best by prior
    /// and completed Q of the moves the halving visited most; `None`
    /// without a halving for this root or before any visit.
    fn gumbel_choice(&self) -> Option<Move> {
        let g = self.gumbel.filter(|g| g.is_for(self.root))?;
        let nn = self.root.nn()?;
        let children = self.root.children();
        if children.is_empty() {
            return None;
        }
        let mut stats = Vec::new();
        g.stats(
            &children,
            self.root_pla,
            |mv, v| self.root_child_utility(mv, v),
            &mut stats,
        );
        Some(g.final_choice(&stats, sign(self.root_pla) * self.utility.of_nn(&nn)))
    }

    /// KataGo's "average in human policy" of `getPlaySelectionValues` at
    /// the root (`humanSLChosenMoveProp`): `cands` (the root's moves and
    /// their play selection values, KataGo's order) gain every other legal
    /// move with value 0, then move towards the human net's policy,
    /// shifted towards the moves the search valued (`exp((u - u_max) /
    /// humanSLChosenMovePiklLambda)`, `u` a searched child's utility for
    /// the root player, the children's mean for the others), with
    /// `humanSLChosenMoveIgnorePass` keeping the search's weight on pass.
    /// Nothing changes without the human net's root output.
    pub(super) fn mix_human_policy(&self, cands: &mut Vec<(Move, f64)>) {
        let p = self.params;
        let Some(human) = self.human_root.as_deref() else {
            return;
        };
        if p.human_sl_chosen_move_prop <= 0.0 {
            return;
        }
        let (xs, ys) = (self.x_size, self.y_size);
        let suppress_pass = self.fills_dame
            && self
                .root
                .nn()
                .is_some_and(|nn| self.should_suppress_pass(self.root, &nn));
        let human_prob = |mv: Move| {
            let prob = f64::from(human.policy[mv.policy_index(xs, ys)]);
            if (suppress_pass && mv == Move::Pass) || prob < 0.0 {
                0.0
            } else {
                prob
            }
        };
        let n = human.policy.len();
        let mut listed = vec![false; n];
        for c in cands.iter() {
            listed[c.0.policy_index(xs, ys)] = true;
        }
        if let Some(nn) = self.root.nn() {
            for (i, &prob) in nn.policy.iter().enumerate() {
                if prob >= 0.0 && human.policy[i] >= 0.0 && !listed[i] {
                    cands.push((Move::from_policy_index(i, xs, ys), 0.0));
                }
            }
        }
        // Each searched child's utility for the root player; the others
        // get the children's mean.
        let root_sign = if self.root_pla == Player::White {
            1.0
        } else {
            -1.0
        };
        let mut searched: Vec<Option<f64>> = vec![None; n];
        let (mut sum, mut count, mut max) = (0.0, 0usize, f64::MIN);
        for c in self.root.children().iter() {
            let u = root_sign * c.node.values().utility;
            searched[c.mv.policy_index(xs, ys)] = Some(u);
            (sum, count, max) = (sum + u, count + 1, max.max(u));
        }
        let mean = sum / count.max(1) as f64;
        let max = max.max(mean);
        let utility = |mv: Move| searched[mv.policy_index(xs, ys)].unwrap_or(mean);
        let mix = HumanMix {
            prop: p.human_sl_chosen_move_prop,
            pikl_lambda: p.human_sl_chosen_move_pikl_lambda,
            ignore_pass: p.human_sl_chosen_move_ignore_pass,
        };
        let shifted: Vec<f64> = cands
            .iter()
            .map(|&(mv, _)| human_prob(mv) * ((utility(mv) - max) / mix.pikl_lambda).exp())
            .collect();
        mix.apply(cands, shifted);
    }
}

/// How the move choice moves towards the human policy.
struct HumanMix {
    /// `humanSLChosenMoveProp`.
    prop: f64,
    /// `humanSLChosenMovePiklLambda`.
    pikl_lambda: f64,
    /// `humanSLChosenMoveIgnorePass`.
    ignore_pass: bool,
}

impl HumanMix {
    /// Moves the play selection values of `cands` towards `shifted` (the
    /// human policy already shifted by utility, one entry per candidate,
    /// not yet normalised), scaled to the values' sum; with `ignore_pass`,
    /// pass keeps its share of the values and the other moves share the
    /// rest by the human policy.
    fn apply(&self, cands: &mut [(Move, f64)], mut shifted: Vec<f64>) {
        let total: f64 = shifted.iter().sum();
        let value_sum: f64 = cands.iter().map(|c| c.1).sum();
        if total <= 0.0 || value_sum <= 0.0 {
            return;
        }
        shifted.iter_mut().for_each(|s| *s /= total);
        let non_pass_sum: f64 = cands
            .iter()
            .filter(|c| c.0 != Move::Pass)
            .map(|c| c.1)
            .sum();
        if self.ignore_pass {
            let shifted_non_pass: f64 = cands
                .iter()
                .zip(&shifted)
                .filter(|(c, _)| c.0 != Move::Pass)
                .map(|(_, s)| s)
                .sum();
            if shifted_non_pass > 0.0 {
                for (c, s) in cands.iter().zip(shifted.iter_mut()) {
                    *s = if c.0 == Move::Pass {
                        (value_sum - non_pass_sum) / value_sum
                    } else {
                        *s / shifted_non_pass * non_pass_sum / value_sum
                    };
                }
            }
        }
        for (c, s) in cands.iter_mut().zip(&shifted) {
            c.1 += self.prop * (value_sum * s - c.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Loc;

    fn cands() -> Vec<(Move, f64)> {
        let at = |x| Move::Play(Loc::from_xy(x, 0, 9));
        vec![
            (at(0), 60.0),
            (at(1), 30.0),
            (at(2), 0.0),
            (Move::Pass, 10.0),
        ]
    }

    fn mix(prop: f64, ignore_pass: bool) -> HumanMix {
        HumanMix {
            prop,
            pikl_lambda: 1e9,
            ignore_pass,
        }
    }

    fn close(a: &[(Move, f64)], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x.1 - y).abs() < 1e-9)
    }

    #[test]
    fn prop_one_gives_the_human_policy_at_the_values_scale() {
        let mut c = cands();
        // Unnormalised: 1:2:1:0 of the 100 the values sum to.
        mix(1.0, false).apply(&mut c, vec![0.5, 1.0, 0.5, 0.0]);
        assert!(close(&c, &[25.0, 50.0, 25.0, 0.0]), "{c:?}");
    }

    #[test]
    fn prop_half_goes_halfway() {
        let mut c = cands();
        mix(0.5, false).apply(&mut c, vec![1.0, 2.0, 1.0, 0.0]);
        assert!(close(&c, &[42.5, 40.0, 12.5, 5.0]), "{c:?}");
    }

    #[test]
    fn ignoring_pass_leaves_the_search_its_pass_share() {
        let mut c = cands();
        // The human net would pass half the time: ignored, pass keeps the
        // search's 10 of 100 and the rest follows the human policy.
        mix(1.0, true).apply(&mut c, vec![0.25, 0.5, 0.25, 1.0]);
        assert!(close(&c, &[22.5, 45.0, 22.5, 10.0]), "{c:?}");
    }

    #[test]
    fn nothing_changes_without_a_human_policy_or_values() {
        let mut c = cands();
        mix(1.0, false).apply(&mut c, vec![0.0; 4]);
        assert!(close(&c, &[60.0, 30.0, 0.0, 10.0]));
        let mut zero: Vec<(Move, f64)> = cands().into_iter().map(|(m, _)| (m, 0.0)).collect();
        mix(1.0, false).apply(&mut zero, vec![1.0; 4]);
        assert!(close(&zero, &[0.0; 4]));
    }
}
