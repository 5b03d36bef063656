//! Root symmetry pruning (KataGo's `rootSymmetryPruning`): when the root
//! position is symmetric, only one copy of each set of equivalent moves is
//! searched, and front ends get the others back as copies
//! (`isSymmetryOf`) of the searched one.

use crate::game::{Move, Player};
use crate::nn::Symmetry;

/// The root's symmetries and which of its moves are copies of another.
#[derive(Debug, Clone, PartialEq)]
pub struct RootSymmetry {
    pub(super) x_size: usize,
    pub(super) y_size: usize,
    pub(super) symmetries: Vec<Symmetry>,
    /// Per policy index: a copy of a move that is searched instead.
    duplicate: Vec<bool>,
    /// Per policy index: avoided at the root (never listed as a copy).
    pub(super) avoided: Vec<bool>,
}

impl RootSymmetry {
    /// No pruning: only the identity.
    pub fn none(x_size: usize, y_size: usize) -> RootSymmetry {
        RootSymmetry {
            x_size,
            y_size,
            symmetries: vec![Symmetry::IDENTITY],
            duplicate: Vec::new(),
            avoided: Vec::new(),
        }
    }

    /// Marks all but one move of each equivalence class under
    /// `symmetries` as duplicates, as KataGo's `markDuplicateMoveLocs`: the
    /// first of a class in KataGo's scan order is kept (for Black columns
    /// from the right, for White from the left, so that natural openings
    /// put Black in the upper right). Moves avoided at the root
    /// (`avoid_until[i] > 0`) never claim a class.
    pub fn new(
        symmetries: Vec<Symmetry>,
        x_size: usize,
        y_size: usize,
        pla: Player,
        avoid_until: &[u32],
    ) -> RootSymmetry {
        let n = x_size * y_size + 1;
        let avoided: Vec<bool> = (0..n)
            .map(|i| avoid_until.get(i).is_some_and(|&d| d > 0))
            .collect();
        let mut duplicate = vec![false; n];
        let mut scan = |x: usize, y: usize| {
            let i = y * x_size + x;
            if avoided[i] || duplicate[i] {
                return;
            }
            for sym in symmetries.iter().skip(1) {
                let (sx, sy) = sym.point(x, y, x_size, y_size);
                let j = sy * x_size + sx;
                if j != i {
                    duplicate[j] = true;
                }
            }
        };
        if pla == Player::Black {
            for x in (0..x_size).rev() {
                for y in 0..y_size {
                    scan(x, y);
                }
            }
        } else {
            for x in 0..x_size {
                for y in (0..y_size).rev() {
                    scan(x, y);
                }
            }
        }
        RootSymmetry {
            x_size,
            y_size,
            symmetries,
            duplicate,
            avoided,
        }
    }

    /// The symmetries the root is invariant under, identity first.
    pub fn symmetries(&self) -> &[Symmetry] {
        &self.symmetries
    }

    /// Whether the move at policy index `i` is a copy not to be searched.
    #[inline]
    pub fn is_duplicate(&self, i: usize) -> bool {
        self.duplicate.get(i).copied().unwrap_or(false)
    }

    /// Whether `mv` is a copy not to be searched.
    pub fn is_duplicate_move(&self, mv: Move) -> bool {
        self.is_duplicate(mv.policy_index(self.x_size, self.y_size))
    }

    /// A row-major board plane moved by `sym` (the value at a point goes
    /// to its image).
    pub(super) fn map_plane(&self, sym: Symmetry, plane: &[f64]) -> Vec<f64> {
        let (xs, ys) = (self.x_size, self.y_size);
        let mut out = plane.to_vec();
        for y in 0..ys {
            for x in 0..xs {
                let (sx, sy) = sym.point(x, y, xs, ys);
                if let (Some(&v), Some(slot)) = (plane.get(y * xs + x), out.get_mut(sy * xs + sx)) {
                    *slot = v;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Color;
    use crate::game::Loc;
    use crate::nn::invariant_symmetries;
    use crate::search::results::{symmetric_copies, MoveInfo};

    fn board_symmetries(size: usize, stones: &[(usize, usize)]) -> Vec<Symmetry> {
        let mut colors = vec![Color::Empty; (size + 1) * (size + 2) + 1];
        for &(x, y) in stones {
            colors[Loc::from_xy(x, y, size).idx()] = Color::Black;
        }
        invariant_symmetries(size, size, |a, b| colors[a.idx()] == colors[b.idx()])
    }

    fn kept_moves(size: usize, syms: Vec<Symmetry>, pla: Player) -> usize {
        let rs = RootSymmetry::new(syms, size, size, pla, &[]);
        (0..size * size).filter(|&i| !rs.is_duplicate(i)).count()
    }

    #[test]
    fn empty_boards_keep_one_move_per_class() {
        // n*n points under the 8 symmetries of the square: classes are
        // the points of one eighth triangle.
        for (size, classes) in [(19, 55), (9, 15), (5, 6), (2, 1)] {
            let syms = board_symmetries(size, &[]);
            assert_eq!(syms.len(), 8);
            assert_eq!(syms[0], Symmetry::IDENTITY);
            for pla in [Player::Black, Player::White] {
                assert_eq!(kept_moves(size, syms.clone(), pla), classes, "{size}");
            }
            // Pass is never a duplicate.
            let rs = RootSymmetry::new(syms, size, size, Player::Black, &[]);
            assert!(!rs.is_duplicate_move(Move::Pass));
        }
    }

    #[test]
    fn stones_and_rectangles_break_symmetries() {
        assert_eq!(board_symmetries(19, &[(9, 9)]).len(), 8);
        // A 4-4 point keeps only the diagonal through it.
        let syms = board_symmetries(19, &[(3, 3)]);
        assert_eq!(syms.len(), 2);
        assert_eq!(kept_moves(19, syms, Player::White), (361 - 19) / 2 + 19);
        assert_eq!(board_symmetries(19, &[(3, 3), (15, 4)]).len(), 1);
        // Rectangles never transpose.
        let syms = invariant_symmetries(9, 5, |_, _| true);
        assert_eq!(syms.len(), 4);
        assert!(syms.iter().all(|s| !s.transposes()));
    }

    #[test]
    fn black_keeps_the_upper_right_and_white_the_left() {
        let syms = board_symmetries(19, &[]);
        let r16 = Loc::from_xy(16, 3, 19); // R16 (upper right)
        let d16 = Loc::from_xy(3, 3, 19);
        let black = RootSymmetry::new(syms.clone(), 19, 19, Player::Black, &[]);
        assert!(!black.is_duplicate_move(Move::Play(r16)));
        assert!(black.is_duplicate_move(Move::Play(d16)));
        let white = RootSymmetry::new(syms, 19, 19, Player::White, &[]);
        assert!(white.is_duplicate_move(Move::Play(r16)));
    }

    #[test]
    fn avoided_moves_do_not_claim_their_class() {
        let syms = board_symmetries(9, &[]);
        let three_three = [(2, 2), (6, 2), (2, 6), (6, 6)].map(|(x, y)| y * 9 + x);
        let kept = |rs: &RootSymmetry| -> Vec<usize> {
            three_three
                .into_iter()
                .filter(|&i| !rs.is_duplicate(i))
                .collect()
        };
        let plain = kept(&RootSymmetry::new(syms.clone(), 9, 9, Player::Black, &[]));
        assert_eq!(plain.len(), 1);
        // Avoiding the searched copy hands its class to the next copy.
        let mut avoid = vec![0u32; 82];
        avoid[plain[0]] = 1;
        let now = kept(&RootSymmetry::new(syms, 9, 9, Player::Black, &avoid));
        assert_eq!(now.len(), 1);
        assert_ne!(now[0], plain[0]);
    }

    #[test]
    fn copies_map_moves_pvs_and_ownership() {
        let size = 5;
        let syms = board_symmetries(size, &[]);
        let rs = RootSymmetry::new(syms, size, size, Player::Black, &[]);
        let corner = Move::Play(Loc::from_xy(4, 0, size));
        let mut own = vec![0.0; 25];
        own[4] = 1.0;
        let info = MoveInfo {
            mv: corner,
            visits: 10,
            edge_visits: 10,
            weight: 10.0,
            winrate: 0.5,
            score_mean: 0.0,
            score_lead: 0.0,
            score_selfplay: 0.0,
            score_stdev: 1.0,
            prior: 0.1,
            utility: 0.0,
            lcb: 0.4,
            utility_lcb: -0.1,
            order: 0,
            play_selection_value: 10.0,
            pv: vec![corner, Move::Play(Loc::from_xy(3, 1, size)), Move::Pass],
            pv_visits: vec![10, 5, 1],
            pv_edge_visits: vec![10, 5, 1],
            ownership: Some(own),
            ownership_stdev: None,
            is_symmetry_of: None,
        };
        let out = symmetric_copies(&rs, vec![info]);
        assert_eq!(out.len(), 4, "four corners");
        assert_eq!(out[0].mv, corner);
        assert_eq!(out[0].is_symmetry_of, None);
        for (i, c) in out.iter().enumerate() {
            assert_eq!(c.order, i);
            assert_eq!(c.visits, 10);
            assert_eq!(c.pv[0], c.mv);
            assert_eq!(c.pv[2], Move::Pass);
            let Move::Play(l) = c.mv else { panic!() };
            let (x, y) = l.xy(size);
            assert_eq!(c.ownership.as_ref().unwrap()[y * size + x], 1.0);
            if i > 0 {
                assert_eq!(c.is_symmetry_of, Some(corner));
            }
        }
    }
}
