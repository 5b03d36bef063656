//! The search side of the anti-mirror defence (see [`super::mirror`]):
//! the policy, exploration and value changes KataGo makes while the
//! opponent mirrors.

use super::eval::SearchState;
use super::mirror::{center_loc, distance_sq, mirror_move, mirroring_since_root, xy, MirrorStatus};
use crate::game::{Color, Loc, Move, Player};
use crate::nn::NnOutput;

/// One search's anti-mirror state, set when the search starts and the
/// opponent is found mirroring.
#[derive(Debug, Clone, PartialEq)]
pub struct AntiMirror {
    status: MirrorStatus,
    mirroring: Player,
    root_pla: Player,
    x_size: usize,
    y_size: usize,
    center: Option<Loc>,
    /// The colour of the root board's centre point.
    root_center: Color,
    /// The last move of the game before the root.
    root_last_move: Option<Move>,
}

/// Where in a playout a selection happens: the position reached and the
/// moves played below the root to reach it.
pub struct MirrorAt<'a, S> {
    pub state: &'a S,
    pub path: &'a [Move],
    /// Whether the node is the root.
    pub is_root: bool,
}

impl<S: SearchState> MirrorAt<'_, S> {
    fn last_move(&self, am: &AntiMirror) -> Option<Move> {
        self.path.last().copied().or(am.root_last_move)
    }
}

impl AntiMirror {
    /// The anti-mirror state for a search from `root` with `status`
    /// detected there; `None` when nobody is mirroring.
    pub fn new<S: SearchState>(root: &S, status: MirrorStatus) -> Option<AntiMirror> {
        let mirroring = status.mirroring?;
        let (x_size, y_size) = (root.x_size(), root.y_size());
        let center = center_loc(x_size, y_size);
        Some(AntiMirror {
            status,
            mirroring,
            root_pla: root.next_player(),
            x_size,
            y_size,
            center,
            root_center: center.map_or(Color::Wall, |c| root.color_at(c)),
            root_last_move: root.last_move().map(|(_, mv)| mv),
        })
    }

    /// The detected status.
    pub fn status(&self) -> &MirrorStatus {
        &self.status
    }

    /// Whether the formulas apply below the root along `path`: every
    /// reply of the opponent so far mirrored (skipping the last
    /// `skip_recent` moves).
    pub fn applies(&self, path: &[Move], skip_recent: usize) -> bool {
        mirroring_since_root(path, skip_recent, self.x_size, self.y_size)
    }

    /// The hard case at a position: the mirroring player holds the centre
    /// and would not lose by more than half a point if the mirror held.
    fn is_difficult<S: SearchState>(&self, state: &S) -> bool {
        self.center
            .is_some_and(|c| state.color_at(c) == self.mirroring.color())
            && self.status.advantage >= -0.5
    }

    /// Whether a position reached along `path` is evaluated with the
    /// centre-ownership hack ([`AntiMirror::hack_nn_output`]): the hard
    /// case, with the opponent mirroring all the way down (the last four
    /// moves aside). The evaluation then includes ownership.
    pub fn hacks_evaluation<S: SearchState>(&self, state: &S, path: &[Move]) -> bool {
        self.is_difficult(state) && self.applies(path, 4)
    }

    /// KataGo's `hackNNOutputForMirror`: moves White's win/loss split in
    /// logit space by the net's ownership of the root's centre point
    /// (scale 0.7 when the centre is symmetric, else 0.3).
    pub fn hack_nn_output(&self, nn: &mut NnOutput) {
        let (Some(center), Some(own)) = (self.center, nn.white_ownership.as_deref()) else {
            return;
        };
        let (x, y) = center.xy(self.x_size);
        let Some(&center_own) = own.get(y * self.x_size + x) else {
            return;
        };
        let total = f64::from(nn.white_win_prob) + f64::from(nn.white_loss_prob);
        let own_scale = if self.status.center_symmetry_error <= 0.0 {
            0.7
        } else {
            0.3
        };
        let wl = (f64::from(nn.white_win_prob) - f64::from(nn.white_loss_prob)) / (total + 1e-10);
        let wl = wl.clamp(-1.0 + 1e-15, 1.0 - 1e-15);
        let wl = (wl.atanh() + own_scale * f64::from(center_own)).tanh();
        let win = total * (0.5 + 0.5 * wl);
        nn.white_win_prob = win as f32;
        nn.white_loss_prob = (total - win) as f32;
    }

    /// The mirror reply to the last move, or a pass where that point is
    /// illegal (`policy` below 0); `None` after a pass or with no moves.
    fn mirror_reply<S: SearchState>(&self, at: &MirrorAt<'_, S>, policy: &[f32]) -> Option<Move> {
        let prev = at.last_move(self)?;
        if prev == Move::Pass {
            return None;
        }
        let mirror = mirror_move(prev, self.x_size, self.y_size);
        let legal = policy
            .get(mirror.policy_index(self.x_size, self.y_size))
            .is_some_and(|&p| p >= 0.0);
        Some(if legal { mirror } else { Move::Pass })
    }

    /// KataGo's `maybeApplyAntiMirrorPolicy`: the policy of `mv` for
    /// `mover` at `at`, raised towards 1 for the opponent's mirror reply
    /// (three times as much in the hard case) and a little for the root
    /// player's central moves and moves touching an opponent stone on the
    /// centre, less the deeper the node.
    pub fn adjust_policy<S: SearchState>(
        &self,
        at: &MirrorAt<'_, S>,
        mover: Player,
        mv: Move,
        policy: &[f32],
        prob: f64,
    ) -> f64 {
        let (xs, ys) = (self.x_size, self.y_size);
        let mut weight = 0.0;
        if mover == self.root_pla.opp() && at.last_move(self).is_some() {
            let Some(mirror) = self.mirror_reply(at, policy) else {
                return prob;
            };
            if mv == mirror {
                weight = 1.0;
                if self.is_difficult(at.state) {
                    weight *= 3.0;
                }
            }
        } else if let (true, Move::Play(loc)) = (mover == self.root_pla, mv) {
            let (x, y) = loc.xy(xs);
            let central = x >= (xs - 1) / 2 && x <= xs / 2 && y >= (ys - 1) / 2 && y <= ys / 2;
            if central {
                weight = 0.3;
            } else {
                let near_central = x + 1 >= (xs - 1) / 2
                    && x <= xs / 2 + 1
                    && y + 1 >= (ys - 1) / 2
                    && y <= ys / 2 + 1;
                if near_central {
                    weight = 0.05;
                }
                if let Some(center) = self.center {
                    if self.root_center == mover.opp().color() {
                        if at.state.adjacent_to_chain(loc, center) {
                            weight = 0.05;
                        } else {
                            let d = distance_sq(xy(loc, xs), xy(center, xs));
                            if d <= 2 {
                                weight = 0.05;
                            } else if d <= 4 {
                                weight = 0.03;
                            }
                        }
                    }
                }
            }
        }
        if weight <= 0.0 {
            return prob;
        }
        let weight = weight / (1.0 + (at.path.len() as f64).sqrt());
        let p = prob as f32;
        f64::from(p + (1.0 - p) * weight as f32)
    }

    /// KataGo's `maybeApplyAntiMirrorForcedExplore`: the utility (White's
    /// view) of an existing child `mv` of a node where `mover` is to move,
    /// with large bonuses while the child has less than its share of the
    /// parent's weight: the opponent's mirror reply (so its refutation is
    /// searched), and the root player's centre and, in the hard case,
    /// moves touching the mirroring player's centre stone.
    #[allow(clippy::too_many_arguments)]
    pub fn forced_explore<S: SearchState>(
        &self,
        at: &MirrorAt<'_, S>,
        mover: Player,
        mv: Move,
        policy: &[f32],
        child_utility: f64,
        parent_utility: f64,
        child_weight: f64,
        total_child_weight: f64,
    ) -> f64 {
        let (xs, cse) = (self.x_size, self.status.center_symmetry_error);
        let sign = if mover == Player::White { 1.0 } else { -1.0 };
        let damping = (1.0 - 0.7 * parent_utility * parent_utility).max(0.3);
        let is_difficult = self.is_difficult(at.state);
        let mut utility = child_utility;
        if mover == self.mirroring && at.last_move(self).is_some() {
            let Some(mirror) = self.mirror_reply(at, policy) else {
                return utility;
            };
            if mv != mirror {
                return utility;
            }
            let advantage = self.status.advantage;
            let (mut dump, mut bias) = if is_difficult {
                let mut dump: f64 = 0.20;
                if let (Move::Play(m), Some(c)) = (mirror, self.center) {
                    let d = distance_sq(xy(c, xs), xy(m, xs)) as f64;
                    dump = dump.max(1.0 / (0.75 + 0.5 * d.sqrt()) / cse.max(1.0));
                }
                (dump, 0.75)
            } else if advantage >= 5.0 {
                (0.15, 0.50)
            } else if advantage >= -5.0 {
                (0.10 + advantage, 0.30 + advantage * 4.0)
            } else {
                (0.05, 0.10)
            };
            if mirror == Move::Pass {
                // KataGo also tests `moveLoc == centerLoc` here, which a
                // pass never is.
                dump *= 0.35 / cse.sqrt().max(1.0);
            }
            if cse >= 1.0 {
                dump /= cse;
                bias /= cse;
            }
            if child_weight < dump * total_child_weight {
                utility += sign * 100.0;
            }
            if child_weight < bias * total_child_weight {
                utility += sign * 0.18 * damping;
            }
            if child_weight < 0.5 * bias * total_child_weight {
                utility += sign * 0.36 * damping;
            }
            return utility;
        }
        let Move::Play(loc) = mv else {
            return utility;
        };
        if mover != self.root_pla {
            return utility;
        }
        let mut dump: f64 = 0.0;
        if let (true, Some(c)) = (is_difficult, self.center) {
            if at.state.adjacent_to_chain(loc, c) {
                let libs = at.state.chain_liberties(c) as f64;
                utility += sign * 0.75 / (1.0 + libs) / cse.max(1.0) * damping;
                dump = 0.10 / libs;
            }
            let d = distance_sq(xy(loc, xs), xy(c, xs));
            if d <= 2 {
                dump = dump.max(0.010);
            } else if d <= 4 {
                dump = dump.max(0.005);
            }
        }
        if Some(loc) == self.center {
            dump = if at.is_root { 0.06 } else { 0.12 };
        }
        let loss = if mover == Player::White {
            parent_utility - utility
        } else {
            utility - parent_utility
        };
        if loss > 0.0 && loss * dump > 0.03 {
            dump += 0.5 * (0.03 / loss - dump);
        }
        if let Some(Move::Play(prev)) = at.last_move(self) {
            // On even boards KataGo measures from its NULL_LOC, which sits
            // at (-1, -1); kept so that the search behaves the same.
            let c = self.center.map_or((-1, -1), |c| xy(c, xs));
            let d = distance_sq(c, xy(prev, xs));
            if d <= 16 {
                dump *= 0.900;
            }
            if d <= 5 {
                dump *= 0.825;
            }
            if d <= 2 {
                dump *= 0.750;
            }
        }
        if child_weight < dump * total_child_weight {
            utility += sign * 100.0;
        }
        utility
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Board, GameOptions, GameState, Rules};

    fn play(x: usize, y: usize) -> Move {
        Move::Play(Loc::from_xy(x, y, 19))
    }

    /// A 19x19 game of `replies.len()` Black moves along the top rows, each
    /// answered by White: the mirror reply where `replies[i]`, else a move
    /// in row 10.
    fn game(rules: &str, komi: f32, replies: &[bool]) -> GameState {
        let board = Board::new(19, 19).unwrap();
        let rules = Rules::parse_without_komi(rules, komi).unwrap();
        let mut g = GameState::start(board, Player::Black, rules, GameOptions::default());
        for (i, &mirror) in replies.iter().enumerate() {
            let (x, y) = (i % 19, i / 19);
            g.play(play(x, y));
            g.play(if mirror {
                play(18 - x, 18 - y)
            } else {
                play(i % 19, 10)
            });
        }
        g
    }

    #[test]
    fn detects_a_mirroring_opponent_as_katago() {
        let status = game("chinese", 7.5, &[true; 14]).mirror_status();
        assert_eq!(status.mirroring, Some(Player::White));
        // Area scoring on an odd board: Black gets the last move's point.
        assert_eq!(status.advantage, 6.5);
        assert_eq!(status.center_symmetry_error, 0.0);
        let status = game("japanese", 6.5, &[true; 14]).mirror_status();
        assert_eq!(
            (status.mirroring, status.advantage),
            (Some(Player::White), 6.5)
        );
        // At least 7 + half of the replies must mirror: 13 of 13 is short.
        assert_eq!(
            game("chinese", 7.5, &[true; 13]).mirror_status().mirroring,
            None
        );
        // The last reply must mirror.
        let mut replies = vec![true; 20];
        replies.push(false);
        assert_eq!(
            game("chinese", 7.5, &replies).mirror_status().mirroring,
            None
        );
        // And the recent ones mostly: after 20 mirrors, four others and a
        // mirror pass (weighted share 0.487); five others do not (0.428),
        // though 21 of 26 is enough by count.
        let recent = |others: usize| {
            let mut r = vec![true; 20];
            r.extend(std::iter::repeat_n(false, others));
            r.push(true);
            game("chinese", 7.5, &r).mirror_status().mirroring
        };
        assert_eq!(recent(4), Some(Player::White));
        assert_eq!(recent(5), None);
        // White to move looks at Black, who did not mirror.
        let mut g = game("chinese", 7.5, &[true; 14]);
        g.play(play(0, 5));
        assert_eq!(g.mirror_status().mirroring, None);
    }

    fn nn(win: f32, loss: f32, center_own: f32) -> NnOutput {
        let mut own = vec![0.0; 19 * 19];
        own[9 * 19 + 9] = center_own;
        NnOutput {
            x_size: 19,
            y_size: 19,
            policy: vec![0.0; 19 * 19 + 1],
            white_win_prob: win,
            white_loss_prob: loss,
            white_no_result_prob: 1.0 - win - loss,
            white_score_mean: 0.0,
            white_score_mean_sq: 0.0,
            white_lead: 0.0,
            var_time_left: -1.0,
            shortterm_winloss_error: -1.0,
            shortterm_score_error: -1.0,
            white_ownership: Some(own),
        }
    }

    #[test]
    fn policy_forced_explore_and_value_as_katago() {
        let root = game("chinese", 7.5, &[true; 14]);
        let am = AntiMirror::new(&root, root.mirror_status()).unwrap();
        let policy = vec![0.1f32; 19 * 19 + 1];
        let at_root = MirrorAt {
            state: &root,
            path: &[],
            is_root: true,
        };
        let black = Player::Black;
        let adjust =
            |at: &MirrorAt<'_, GameState>, mover, mv| am.adjust_policy(at, mover, mv, &policy, 0.1);
        // The root player: the centre +0.3, next to it +0.05, else nothing.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(adjust(&at_root, black, play(9, 9)), 0.1 + 0.9 * 0.3));
        assert!(close(
            adjust(&at_root, black, play(10, 8)),
            0.1 + 0.9 * 0.05
        ));
        assert_eq!(adjust(&at_root, black, play(3, 3)), 0.1);
        // The mirroring player one move down: the reply +1 / (1 + sqrt 1).
        let mut after = root.clone();
        after.play(play(3, 3));
        let path = [play(3, 3)];
        let below = MirrorAt {
            state: &after,
            path: &path,
            is_root: false,
        };
        let white = Player::White;
        assert!(close(adjust(&below, white, play(15, 15)), 0.1 + 0.9 * 0.5));
        assert_eq!(adjust(&below, white, play(15, 14)), 0.1);

        // Forced exploration of the reply (advantage 6.5 >= 5: dump 15% of
        // the weight, bias 50%); White's utility goes up.
        let forced = |share: f64| {
            am.forced_explore(&below, white, play(15, 15), &policy, 0.0, 0.0, share, 1.0)
        };
        assert!(close(forced(0.0), 100.0 + 0.18 + 0.36));
        assert!(close(forced(0.2), 0.18 + 0.36));
        assert!(close(forced(0.3), 0.18));
        assert_eq!(forced(0.6), 0.0);
        // The root player's centre at the root: 6% (times 0.9 for White's
        // last move within distance 4 of it: none here), Black's view.
        let centre = |share: f64| {
            am.forced_explore(&at_root, black, play(9, 9), &policy, 0.0, 0.0, share, 1.0)
        };
        assert_eq!(centre(0.05), -100.0);
        assert_eq!(centre(0.07), 0.0);
        assert_eq!(
            am.forced_explore(&at_root, black, play(3, 3), &policy, 0.2, 0.0, 0.0, 1.0),
            0.2
        );

        // The value hack: logit(White's win share) + 0.7 x the centre's
        // ownership when the centre is symmetric.
        let mut out = nn(0.6, 0.3, 0.5);
        am.hack_nn_output(&mut out);
        let wl = ((0.6f64 - 0.3) / 0.9).atanh() + 0.35;
        let win = 0.9 * (0.5 + 0.5 * wl.tanh());
        assert!(close(f64::from(out.white_win_prob), win));
        assert!(close(f64::from(out.white_loss_prob), 0.9 - win));
        // Not the hard case: White (mirroring) does not hold the centre.
        assert!(!am.hacks_evaluation(&root, &[]));
    }
}
