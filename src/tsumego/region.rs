//! The problem region: which points a tsumego is about, given as `"auto"`,
//! a list of GTP points or a rectangle (`"A14-H19"`), resolved against the
//! board into a [`Region`].

use crate::game::{Board, Color, Loc, Move};

/// How a region was asked for, checked against the board size but not yet
/// resolved (`Auto` needs the stones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionSpec {
    /// Found from the problem's stones ([`auto_region`]).
    Auto,
    /// Exactly these points (a list, or every point of a rectangle).
    Points(Vec<Loc>),
}

/// Why a region cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegionError {
    /// No points at all (an empty list, or `auto` on a board without stones).
    #[error("the region is empty: {0}")]
    Empty(String),
    /// A point that is not on the board, or not a point at all.
    #[error("region point {text:?} is not on the {x_size}x{y_size} board")]
    OffBoard {
        /// The point as written.
        text: String,
        /// Board width.
        x_size: usize,
        /// Board height.
        y_size: usize,
    },
    /// A text that is neither `"auto"` nor a rectangle `"A14-H19"`.
    #[error("cannot read region {0:?}: expected \"auto\", a list of points, or a rectangle such as \"A14-H19\"")]
    Syntax(String),
    /// More of the board than a local problem may cover: the rest of the
    /// board must hold the frame.
    #[error("the region covers {points} of the board's {board_points} points; a tsumego region may cover at most half the board ({max} points)")]
    TooLarge {
        /// Points in the region.
        points: usize,
        /// Points on the board.
        board_points: usize,
        /// The most a region may cover.
        max: usize,
    },
}

/// A resolved region: a non-empty set of points covering at most half the
/// board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    x_size: usize,
    y_size: usize,
    /// Row-major membership, `y * x_size + x`.
    inside: Vec<bool>,
}

impl Region {
    /// The region of `points` on an `x_size` x `y_size` board, checked for
    /// emptiness and size.
    pub fn from_points(
        points: &[Loc],
        x_size: usize,
        y_size: usize,
    ) -> Result<Region, RegionError> {
        let mut inside = vec![false; x_size * y_size];
        for &loc in points {
            let (x, y) = loc.xy(x_size);
            inside[y * x_size + x] = true;
        }
        let region = Region {
            x_size,
            y_size,
            inside,
        };
        let count = region.len();
        if count == 0 {
            return Err(RegionError::Empty("no points were given".into()));
        }
        let board_points = x_size * y_size;
        let max = board_points / 2;
        if count > max {
            return Err(RegionError::TooLarge {
                points: count,
                board_points,
                max,
            });
        }
        Ok(region)
    }

    /// Resolves `spec` on `board` (`target`, if given, picks the cluster of
    /// an `auto` region).
    pub fn resolve(
        spec: &RegionSpec,
        board: &Board,
        target: Option<Loc>,
    ) -> Result<Region, RegionError> {
        match spec {
            RegionSpec::Auto => auto_region(board, target),
            RegionSpec::Points(points) => {
                Region::from_points(points, board.x_size(), board.y_size())
            }
        }
    }

    /// Board width.
    pub fn x_size(&self) -> usize {
        self.x_size
    }

    /// Board height.
    pub fn y_size(&self) -> usize {
        self.y_size
    }

    /// Whether `(x, y)` is in the region.
    pub fn contains_xy(&self, x: usize, y: usize) -> bool {
        x < self.x_size && y < self.y_size && self.inside[y * self.x_size + x]
    }

    /// Whether `loc` is in the region.
    pub fn contains(&self, loc: Loc) -> bool {
        let (x, y) = loc.xy(self.x_size);
        self.contains_xy(x, y)
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.inside.iter().filter(|&&b| b).count()
    }

    /// Always false: a region is never empty (kept for clippy's `len` rule).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The points, row by row from the top.
    pub fn points(&self) -> Vec<Loc> {
        (0..self.x_size * self.y_size)
            .filter(|&i| self.inside[i])
            .map(|i| Loc::from_xy(i % self.x_size, i / self.x_size, self.x_size))
            .collect()
    }

    /// The points as GTP vertices (`"C17"`), row by row from the top.
    pub fn gtp_points(&self) -> Vec<String> {
        self.points()
            .into_iter()
            .map(|l| Move::Play(l).to_gtp(self.x_size, self.y_size))
            .collect()
    }

    /// Chebyshev distance from `(x, y)` to the nearest region point.
    pub fn distance_xy(&self, x: usize, y: usize) -> usize {
        let mut best = usize::MAX;
        for (i, _) in self.inside.iter().enumerate().filter(|(_, &b)| b) {
            let (px, py) = (i % self.x_size, i / self.x_size);
            best = best.min(px.abs_diff(x).max(py.abs_diff(y)));
        }
        best
    }
}

/// Parses a region text: `"auto"` or a rectangle `"A14-H19"` (corners in
/// any order).
pub fn parse_region_text(
    text: &str,
    x_size: usize,
    y_size: usize,
) -> Result<RegionSpec, RegionError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(RegionSpec::Auto);
    }
    let Some((a, b)) = t.split_once('-') else {
        return Err(RegionError::Syntax(text.to_string()));
    };
    let a = parse_point(a, x_size, y_size)?;
    let b = parse_point(b, x_size, y_size)?;
    let (ax, ay) = a.xy(x_size);
    let (bx, by) = b.xy(x_size);
    let mut points = Vec::new();
    for y in ay.min(by)..=ay.max(by) {
        for x in ax.min(bx)..=ax.max(bx) {
            points.push(Loc::from_xy(x, y, x_size));
        }
    }
    Ok(RegionSpec::Points(points))
}

/// Parses a list of GTP points.
pub fn parse_region_points<S: AsRef<str>>(
    list: &[S],
    x_size: usize,
    y_size: usize,
) -> Result<RegionSpec, RegionError> {
    if list.is_empty() {
        return Err(RegionError::Empty("the list of points is empty".into()));
    }
    let points = list
        .iter()
        .map(|s| parse_point(s.as_ref(), x_size, y_size))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RegionSpec::Points(points))
}

/// One GTP point (not a pass).
pub fn parse_point(text: &str, x_size: usize, y_size: usize) -> Result<Loc, RegionError> {
    match Loc::parse(text, x_size, y_size) {
        Ok(loc) => Ok(loc),
        Err(_) => Err(RegionError::OffBoard {
            text: text.trim().to_string(),
            x_size,
            y_size,
        }),
    }
}

/// Stones within this Chebyshev distance belong to one problem cluster.
const CLUSTER_DISTANCE: usize = 2;
/// Empty points added around the cluster's bounding box.
const MARGIN: usize = 1;
/// A box this close to an edge (after the margin) is extended to it: the
/// line between would be a useless gap for the frame.
const SNAP_TO_EDGE: usize = 2;

/// The `auto` region: the cluster of stones holding `target` (else the
/// largest cluster), its bounding box plus [`MARGIN`], extended to an edge
/// when within [`SNAP_TO_EDGE`] lines of it, and clipped so that it does
/// not cross the board's middle line (a corner or side problem stays on its
/// half, leaving the other half for the frame).
pub fn auto_region(board: &Board, target: Option<Loc>) -> Result<Region, RegionError> {
    let (xs, ys) = (board.x_size(), board.y_size());
    let stones: Vec<(usize, usize)> = board
        .locs()
        .filter(|&l| board.get(l) != Color::Empty)
        .map(|l| l.xy(xs))
        .collect();
    if stones.is_empty() {
        return Err(RegionError::Empty(
            "\"auto\" needs the problem's stones and the board has none".into(),
        ));
    }
    let clusters = clusters(&stones);
    let target_xy = target.map(|t| t.xy(xs));
    let chosen = clusters
        .iter()
        .find(|c| target_xy.is_some_and(|t| c.iter().any(|&i| stones[i] == t)))
        .or_else(|| clusters.iter().max_by_key(|c| c.len()))
        .ok_or_else(|| RegionError::Empty("no stone cluster".into()))?;
    let (mut x0, mut x1, mut y0, mut y1) = (usize::MAX, 0, usize::MAX, 0);
    for &i in chosen {
        let (x, y) = stones[i];
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let (x0, x1) = extend_axis(x0, x1, xs);
    let (y0, y1) = extend_axis(y0, y1, ys);
    let mut points = Vec::new();
    for y in y0..=y1 {
        for x in x0..=x1 {
            points.push(Loc::from_xy(x, y, xs));
        }
    }
    Region::from_points(&points, xs, ys)
}

/// One axis of the auto box: margin, snap to the edges, clip at the
/// middle line when the stones lie on one side of it.
fn extend_axis(lo: usize, hi: usize, size: usize) -> (usize, usize) {
    let last = size - 1;
    let mut a = lo.saturating_sub(MARGIN);
    let mut b = (hi + MARGIN).min(last);
    if a <= SNAP_TO_EDGE {
        a = 0;
    }
    if last - b <= SNAP_TO_EDGE {
        b = last;
    }
    // The middle line: the central line on odd sizes, the lower of the two
    // central lines on even sizes. A box whose stones stay on one side may
    // reach it but not cross it.
    let middle = last / 2;
    if hi <= middle {
        b = b.min(middle);
    } else if lo >= last - middle {
        a = a.max(last - middle);
    }
    (a, b)
}

/// Groups stone indices into clusters: stones within [`CLUSTER_DISTANCE`]
/// (Chebyshev) of each other, transitively.
fn clusters(stones: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut cluster_of = vec![usize::MAX; stones.len()];
    let mut out: Vec<Vec<usize>> = Vec::new();
    for start in 0..stones.len() {
        if cluster_of[start] != usize::MAX {
            continue;
        }
        let id = out.len();
        let mut members = vec![start];
        cluster_of[start] = id;
        let mut next = 0;
        while next < members.len() {
            let (x, y) = stones[members[next]];
            next += 1;
            for (j, &(sx, sy)) in stones.iter().enumerate() {
                if cluster_of[j] == usize::MAX
                    && sx.abs_diff(x).max(sy.abs_diff(y)) <= CLUSTER_DISTANCE
                {
                    cluster_of[j] = id;
                    members.push(j);
                }
            }
        }
        out.push(members);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_with(size: usize, black: &[&str], white: &[&str]) -> Board {
        let mut b = Board::new(size, size).unwrap();
        for (list, c) in [(black, Color::Black), (white, Color::White)] {
            for s in list {
                b.set_stone(Loc::parse(s, size, size).unwrap(), c);
            }
        }
        b
    }

    #[test]
    fn rectangle_and_list_parse_to_the_same_points() {
        let RegionSpec::Points(rect) = parse_region_text("A1-B2", 9, 9).unwrap() else {
            panic!("not points")
        };
        let RegionSpec::Points(list) =
            parse_region_points(&["A2", "B2", "A1", "B1"], 9, 9).unwrap()
        else {
            panic!("not points")
        };
        let a = Region::from_points(&rect, 9, 9).unwrap();
        let b = Region::from_points(&list, 9, 9).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.gtp_points(), vec!["A2", "B2", "A1", "B1"]);
        assert_eq!(parse_region_text(" AUTO ", 9, 9).unwrap(), RegionSpec::Auto);
    }

    #[test]
    fn bad_regions_say_why() {
        assert!(matches!(
            parse_region_points::<&str>(&[], 9, 9),
            Err(RegionError::Empty(_))
        ));
        let off = parse_region_text("A1-K10", 9, 9).unwrap_err();
        assert!(matches!(off, RegionError::OffBoard { .. }), "{off}");
        assert!(off.to_string().contains("K10"), "{off}");
        assert!(matches!(
            parse_region_points(&["Z99"], 9, 9),
            Err(RegionError::OffBoard { .. })
        ));
        assert!(matches!(
            parse_region_text("corner", 9, 9),
            Err(RegionError::Syntax(_))
        ));
        let RegionSpec::Points(all) = parse_region_text("A1-J9", 9, 9).unwrap() else {
            panic!()
        };
        let big = Region::from_points(&all, 9, 9).unwrap_err();
        assert!(
            big.to_string()
                .contains("at most half the board (40 points)"),
            "{big}"
        );
        let empty = auto_region(&Board::new(9, 9).unwrap(), None).unwrap_err();
        assert!(matches!(empty, RegionError::Empty(_)));
    }

    #[test]
    fn auto_region_takes_the_corner_cluster_to_the_edges_and_stops_at_the_middle() {
        // A corner group on 13x13 (top-left): black B12 C12 B11, white D12 D11 C10 B10.
        let b = board_with(
            13,
            &["B12", "C12", "B11"],
            &["D12", "D11", "C10", "B10", "D13"],
        );
        let r = auto_region(&b, None).unwrap();
        // Stones span x 1..=3, y 0..=3; margin 1 -> x 0..=4, y 0..=4; the
        // low sides snap to the edge.
        assert!(r.contains(Loc::parse("A13", 13, 13).unwrap()));
        assert!(r.contains(Loc::parse("E9", 13, 13).unwrap()));
        assert!(!r.contains(Loc::parse("F9", 13, 13).unwrap()));
        assert!(!r.contains(Loc::parse("E8", 13, 13).unwrap()));
        assert_eq!(r.len(), 25);
        // A far-away stone makes its own cluster; the larger one wins, and
        // a target picks its own.
        let b2 = board_with(13, &["B12", "C12", "B11", "L2"], &["D12"]);
        assert!(!auto_region(&b2, None)
            .unwrap()
            .contains(Loc::parse("L2", 13, 13).unwrap()));
        let r2 = auto_region(&b2, Loc::parse("L2", 13, 13).ok()).unwrap();
        assert!(r2.contains(Loc::parse("L2", 13, 13).unwrap()));
        assert!(r2.contains(Loc::parse("N1", 13, 13).unwrap()));
    }

    #[test]
    fn auto_box_never_crosses_the_middle_line() {
        // Stones on the top half reaching down to the middle row stay there.
        for size in 7..=19 {
            let middle = (size - 1) / 2;
            let (a, b) = extend_axis(0, middle, size);
            assert_eq!((a, b), (0, middle), "size {size}");
            let (a, b) = extend_axis(size - 1 - middle, size - 1, size);
            assert_eq!((a, b), (size - 1 - middle, size - 1), "size {size}");
        }
    }
}
