//! The 8 symmetries of a Go board, as KataGo numbers them.
//!
//! A symmetry is 3 bits: flip y (bit 0), flip x (bit 1), transpose (bit 2),
//! applied in that order (KataGo's `SymmetryHelpers`). A transposing
//! symmetry turns an `x_size`×`y_size` board into a `y_size`×`x_size` one;
//! everything here says which dimensions it means.
//!
//! Inputs are transformed forward ([`Symmetry::apply_planes`]) and network
//! outputs backward ([`Symmetry::undo_plane`]), so that what the search sees
//! is always in the position's own orientation.

use crate::game::{Loc, Move};

/// One of the 8 board symmetries (see the module docs for the numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symmetry(u8);

impl Symmetry {
    /// How many symmetries there are.
    pub const COUNT: usize = 8;
    /// The symmetry that changes nothing.
    pub const IDENTITY: Symmetry = Symmetry(0);
    /// All 8, in KataGo's order.
    pub const ALL: [Symmetry; 8] = [
        Symmetry(0),
        Symmetry(1),
        Symmetry(2),
        Symmetry(3),
        Symmetry(4),
        Symmetry(5),
        Symmetry(6),
        Symmetry(7),
    ];

    /// The symmetry with KataGo's number `index` (0..8).
    pub const fn from_index(index: usize) -> Option<Symmetry> {
        if index < Self::COUNT {
            Some(Symmetry(index as u8))
        } else {
            None
        }
    }

    /// KataGo's number of this symmetry, 0..8.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Whether rows are mirrored (`y -> y_size - 1 - y`), applied first.
    #[inline]
    pub const fn flips_y(self) -> bool {
        self.0 & 1 != 0
    }

    /// Whether columns are mirrored (`x -> x_size - 1 - x`), applied second.
    #[inline]
    pub const fn flips_x(self) -> bool {
        self.0 & 2 != 0
    }

    /// Whether x and y are swapped, applied last.
    #[inline]
    pub const fn transposes(self) -> bool {
        self.0 & 4 != 0
    }

    /// The symmetry that undoes this one. Every symmetry is its own inverse
    /// except the two quarter turns, 5 and 6, which undo each other.
    pub const fn inverse(self) -> Symmetry {
        match self.0 {
            5 => Symmetry(6),
            6 => Symmetry(5),
            s => Symmetry(s),
        }
    }

    /// The symmetry equal to applying `self` first and then `next`.
    pub const fn then(self, next: Symmetry) -> Symmetry {
        // After a transpose, a later flip of x is a flip of the original y
        // and vice versa, so next's flip bits swap roles.
        let n = if self.transposes() {
            (next.0 & 4) | ((next.0 & 2) >> 1) | ((next.0 & 1) << 1)
        } else {
            next.0
        };
        Symmetry(self.0 ^ n)
    }

    /// `(x_size, y_size)` of a board of those dimensions after this symmetry.
    #[inline]
    pub const fn dims(self, x_size: usize, y_size: usize) -> (usize, usize) {
        if self.transposes() {
            (y_size, x_size)
        } else {
            (x_size, y_size)
        }
    }

    /// Where point `(x, y)` of an `x_size`×`y_size` board goes; the result
    /// is a point of the board of dimensions [`Symmetry::dims`].
    #[inline]
    pub const fn point(self, x: usize, y: usize, x_size: usize, y_size: usize) -> (usize, usize) {
        let y = if self.flips_y() { y_size - 1 - y } else { y };
        let x = if self.flips_x() { x_size - 1 - x } else { x };
        if self.transposes() {
            (y, x)
        } else {
            (x, y)
        }
    }

    /// [`Symmetry::point`] for a [`Loc`] (KataGo's `getSymLoc`); the result
    /// is a `Loc` of the board of dimensions [`Symmetry::dims`].
    pub fn loc(self, loc: Loc, x_size: usize, y_size: usize) -> Loc {
        let (x, y) = loc.xy(x_size);
        let (sx, sy) = self.point(x, y, x_size, y_size);
        Loc::from_xy(sx, sy, self.dims(x_size, y_size).0)
    }

    /// [`Symmetry::loc`] for a move; a pass stays a pass.
    pub fn mv(self, mv: Move, x_size: usize, y_size: usize) -> Move {
        match mv {
            Move::Pass => Move::Pass,
            Move::Play(loc) => Move::Play(self.loc(loc, x_size, y_size)),
        }
    }

    /// Copies `channels` planes of an `x_size`×`y_size` board (`[C, y, x]`
    /// row-major) from `src` into `dst` transformed by this symmetry, so that
    /// `dst` is `[C, y', x']` with `(x', y') = self.dims(x_size, y_size)`
    /// (KataGo's `copyInputsWithSymmetry`).
    ///
    /// # Panics
    /// If either slice is shorter than `channels * x_size * y_size` (a bug in
    /// the caller, not a user input).
    pub fn apply_planes(
        self,
        src: &[f32],
        dst: &mut [f32],
        channels: usize,
        x_size: usize,
        y_size: usize,
    ) {
        let area = x_size * y_size;
        let (dx, _) = self.dims(x_size, y_size);
        let src = &src[..channels * area];
        let dst = &mut dst[..channels * area];
        for y in 0..y_size {
            for x in 0..x_size {
                let (sx, sy) = self.point(x, y, x_size, y_size);
                let from = y * x_size + x;
                let to = sy * dx + sx;
                for c in 0..channels {
                    dst[c * area + to] = src[c * area + from];
                }
            }
        }
    }

    /// Undoes this symmetry on one plane: `src` is in the transformed
    /// orientation (dimensions [`Symmetry::dims`]) and `dst` gets the
    /// original `x_size`×`y_size` orientation (KataGo's
    /// `copyOutputsWithSymmetry`).
    ///
    /// # Panics
    /// If either slice is shorter than `x_size * y_size`.
    pub fn undo_plane(self, src: &[f32], dst: &mut [f32], x_size: usize, y_size: usize) {
        let (dx, _) = self.dims(x_size, y_size);
        let src = &src[..x_size * y_size];
        let dst = &mut dst[..x_size * y_size];
        for y in 0..y_size {
            for x in 0..x_size {
                let (sx, sy) = self.point(x, y, x_size, y_size);
                dst[y * x_size + x] = src[sy * dx + sx];
            }
        }
    }
}

impl std::fmt::Display for Symmetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The symmetries among `candidates` (identity first, always) under which
/// every point `a` and its image `b` are alike by `same(a, b)`. Symmetries
/// that transpose are tried only on square boards.
pub fn invariant_symmetries(
    x_size: usize,
    y_size: usize,
    same: impl Fn(Loc, Loc) -> bool,
) -> Vec<Symmetry> {
    let mut out = vec![Symmetry::IDENTITY];
    for sym in Symmetry::ALL.into_iter().skip(1) {
        if sym.transposes() && x_size != y_size {
            continue;
        }
        let invariant = (0..y_size).all(|y| {
            (0..x_size).all(|x| {
                let (sx, sy) = sym.point(x, y, x_size, y_size);
                same(Loc::from_xy(x, y, x_size), Loc::from_xy(sx, sy, x_size))
            })
        });
        if invariant {
            out.push(sym);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SIZES: [(usize, usize); 6] = [(19, 19), (9, 9), (2, 2), (7, 5), (5, 13), (1, 4)];

    fn planes(channels: usize, x_size: usize, y_size: usize) -> Vec<f32> {
        (0..channels * x_size * y_size).map(|i| i as f32).collect()
    }

    #[test]
    fn inverse_undoes_every_symmetry_on_points() {
        for &(xs, ys) in &SIZES {
            for s in Symmetry::ALL {
                let (dx, dy) = s.dims(xs, ys);
                for y in 0..ys {
                    for x in 0..xs {
                        let (sx, sy) = s.point(x, y, xs, ys);
                        assert!(sx < dx && sy < dy);
                        assert_eq!(s.inverse().point(sx, sy, dx, dy), (x, y), "sym {s}");
                    }
                }
            }
        }
    }

    #[test]
    fn planes_round_trip_and_agree_with_point() {
        for &(xs, ys) in &SIZES {
            for s in Symmetry::ALL {
                let src = planes(3, xs, ys);
                let mut fwd = vec![f32::NAN; src.len()];
                s.apply_planes(&src, &mut fwd, 3, xs, ys);
                // sym_loc agrees with the plane transform.
                let (dx, _) = s.dims(xs, ys);
                for c in 0..3 {
                    for y in 0..ys {
                        for x in 0..xs {
                            let (sx, sy) = s.point(x, y, xs, ys);
                            assert_eq!(
                                fwd[c * xs * ys + sy * dx + sx],
                                src[c * xs * ys + y * xs + x]
                            );
                        }
                    }
                }
                // undo_plane inverts apply_planes, channel by channel.
                let area = xs * ys;
                let mut back = vec![f32::NAN; src.len()];
                for c in 0..3 {
                    s.undo_plane(
                        &fwd[c * area..(c + 1) * area],
                        &mut back[c * area..(c + 1) * area],
                        xs,
                        ys,
                    );
                }
                assert_eq!(back, src, "sym {s} on {xs}x{ys}");
                // Applying the inverse symmetry to the transformed planes is
                // the same as undoing.
                let (dx, dy) = s.dims(xs, ys);
                let mut inv = vec![f32::NAN; src.len()];
                s.inverse().apply_planes(&fwd, &mut inv, 3, dx, dy);
                assert_eq!(inv, src);
            }
        }
    }

    #[test]
    fn loc_matches_katago_get_sym_loc() {
        // Q16 on 19x19 is (15, 3); a quarter turn (transpose + flipX = 6)
        // sends (x, y) to (y, 18 - x).
        let loc = Loc::from_xy(15, 3, 19);
        assert_eq!(Symmetry(6).loc(loc, 19, 19), Loc::from_xy(3, 3, 19));
        assert_eq!(Symmetry(1).loc(loc, 19, 19), Loc::from_xy(15, 15, 19));
        // Rectangular: a 7 wide, 5 tall board transposes into 5 wide, 7 tall.
        let loc = Loc::from_xy(6, 1, 7);
        assert_eq!(Symmetry(4).loc(loc, 7, 5), Loc::from_xy(1, 6, 5));
        assert_eq!(Symmetry(5).mv(Move::Pass, 7, 5), Move::Pass);
    }

    #[test]
    fn composition_table_matches_points() {
        for &(xs, ys) in &SIZES {
            for a in Symmetry::ALL {
                let (ax, ay) = a.dims(xs, ys);
                for b in Symmetry::ALL {
                    let ab = a.then(b);
                    assert_eq!(ab.dims(xs, ys), b.dims(ax, ay));
                    for y in 0..ys {
                        for x in 0..xs {
                            let (px, py) = a.point(x, y, xs, ys);
                            assert_eq!(ab.point(x, y, xs, ys), b.point(px, py, ax, ay));
                        }
                    }
                }
                assert_eq!(a.then(a.inverse()), Symmetry::IDENTITY);
                assert_eq!(a.inverse().then(a), Symmetry::IDENTITY);
            }
        }
        assert_eq!(Symmetry::from_index(8), None);
        assert_eq!(Symmetry::from_index(5).map(Symmetry::index), Some(5));
    }

    /// KataGo's `copyWithSymmetry` (NCHW branch) for one square plane,
    /// written the way it works there: flips as negative strides, transpose
    /// as swapped strides, and the flips swapped for inputs.
    fn katago_copy(src: &[f32], n: usize, sym: Symmetry, reverse: bool) -> Vec<f32> {
        let mut dst = vec![f32::NAN; n * n];
        let transpose = sym.transposes();
        let (mut flip_x, mut flip_y) = (sym.flips_x(), sym.flips_y());
        if transpose && !reverse {
            std::mem::swap(&mut flip_x, &mut flip_y);
        }
        let n = n as isize;
        let (mut h_base, mut h_stride, mut w_base, mut w_stride) = (0, n, 0, 1);
        if flip_y {
            h_base = (n - 1) * h_stride;
            h_stride = -h_stride;
        }
        if flip_x {
            w_base = (n - 1) * w_stride;
            w_stride = -w_stride;
        }
        if transpose {
            std::mem::swap(&mut h_stride, &mut w_stride);
        }
        for h in 0..n {
            for w in 0..n {
                let to = h_base + h * h_stride + w_base + w * w_stride;
                dst[to as usize] = src[(h * n + w) as usize];
            }
        }
        dst
    }

    #[test]
    fn square_planes_match_katago_strides() {
        for n in [1, 2, 5, 19] {
            let src = planes(1, n, n);
            for s in Symmetry::ALL {
                let mut fwd = vec![0.0; n * n];
                s.apply_planes(&src, &mut fwd, 1, n, n);
                assert_eq!(fwd, katago_copy(&src, n, s, false), "inputs, sym {s}");
                let mut back = vec![0.0; n * n];
                s.undo_plane(&src, &mut back, n, n);
                assert_eq!(back, katago_copy(&src, n, s, true), "outputs, sym {s}");
            }
        }
    }

    proptest! {
        #[test]
        fn random_boards_round_trip(xs in 1usize..=25, ys in 1usize..=25, s in 0usize..8, c in 1usize..4) {
            let s = Symmetry::from_index(s).unwrap();
            let src = planes(c, xs, ys);
            let mut fwd = vec![0.0; src.len()];
            s.apply_planes(&src, &mut fwd, c, xs, ys);
            let (dx, dy) = s.dims(xs, ys);
            let mut back = vec![0.0; src.len()];
            s.inverse().apply_planes(&fwd, &mut back, c, dx, dy);
            prop_assert_eq!(back, src);
        }
    }
}
