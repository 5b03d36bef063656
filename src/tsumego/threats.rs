//! Ko threats in the frame: for `koThreats: "attacker"` / `"defender"`,
//! a few local threats for the named side that the other side must answer,
//! far from the region, so that the named side wins a ko in the problem.
//!
//! Each threat is a *peninsula*: a block of the other side's stones that
//! juts into the named side's area and is joined to its own area only
//! through two empty points (miai):
//!
//! ```text
//!   s s s s      s: the named side's stones (its settled area)
//!   s a a s      a: the peninsula, the other side's stones; its only
//!   s a a s         liberties are c and d
//!   s a a s
//!   s a a s
//!   t c d t      t: the other side's settled area
//!   t t t t
//! ```
//!
//! The named side plays `c` (or `d`): the peninsula is in atari. The other
//! side answers at the other point, which joins the peninsula to its area
//! and captures the stone at `c`; the threat is then spent and everything
//! is settled again. Unanswered, the named side captures the peninsula
//! (up to 2 x [`MAX_LENGTH`] stones; the swing is about twice as many
//! points): a threat, as
//! KaTrain's `tsumego_frame` places one, but checked here like the rest of
//! the frame. The other side gets no threat from it: filling `c` or `d`
//! itself only connects.

use crate::game::Player;

/// The peninsula's longest length (its width is 2): the bigger, the more
/// the threat is worth (a threat smaller than the ko is ignored). Where
/// that does not fit, shorter ones are tried, down to [`MIN_LENGTH`].
pub const MAX_LENGTH: usize = 7;

/// The shortest peninsula.
pub const MIN_LENGTH: usize = 2;

/// How many threats the frame tries to place (fewer when the frame has no
/// room: at least one, else the frame fails).
pub const WANTED_THREATS: usize = 2;

/// A placement may move at most this many frame points from one side to
/// the other (beyond the peninsula itself): each one moves the frame's
/// balance by two points.
const MAX_CHANGED: usize = 4;

/// Threat cells keep at least this distance (Chebyshev) from the region
/// and its liberties (a line of the wall between), so that they never
/// touch the fight.
const MIN_DISTANCE: usize = 2;

/// One placed threat, as point indices (`y * x_size + x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedThreat {
    /// `c` and `d`: the named side plays either; the other answers at the
    /// other one.
    pub points: [usize; 2],
    /// The peninsula's stones (the other side's).
    pub stones: Vec<usize>,
    /// Every cell of the pattern.
    pub cells: Vec<usize>,
}

/// A turn of the pattern: `(column, row)` to `(dx, dy)`.
type Rotation = fn(i64, i64) -> (i64, i64);

/// A pattern's cells on the board: `(point index, cell)`.
type Placement = Vec<(usize, Cell)>;

/// What a pattern cell must hold before, and holds after, placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cell {
    /// The named side's stone, kept.
    Own,
    /// The named side's stone, turned into the other side's (peninsula).
    Peninsula,
    /// The other side's stone, kept.
    Other,
    /// The other side's stone, emptied (the miai `c` / `d`).
    Miai,
}

/// The pattern for a peninsula of `length` as `(column, row, cell)`, row 0
/// deepest in the named side's area.
fn pattern(length: usize) -> Vec<(i64, i64, Cell)> {
    let mut rows: Vec<[Cell; 4]> = vec![[Cell::Own; 4]];
    for _ in 0..length {
        rows.push([Cell::Own, Cell::Peninsula, Cell::Peninsula, Cell::Own]);
    }
    rows.push([Cell::Other, Cell::Miai, Cell::Miai, Cell::Other]);
    rows.push([Cell::Other; 4]);
    rows.iter()
        .enumerate()
        .flat_map(|(r, row)| {
            row.iter()
                .enumerate()
                .map(move |(c, &cell)| (c as i64, r as i64, cell))
        })
        .collect()
}

/// The board as the threats see it: each point's stone (`None`: empty or
/// eye) and whether it is an eye.
pub struct Grid<'a> {
    /// Stones after the frame's split and eyes.
    pub stone: &'a mut [Option<Player>],
    /// The frame's eyes.
    pub eyes: &'a [bool],
    /// Distance (Chebyshev) from the protected points.
    pub dist: &'a [usize],
    /// Board width.
    pub xs: usize,
    /// Board height.
    pub ys: usize,
}

/// Places up to `wanted` threats for `side`, peninsulas of `length` (in any of the four
/// orientations, the edge standing in for the side's stones around the
/// peninsula), changing `grid.stone`; a placement that would split either
/// side's area into more chains, or join two, is not made. Returns the
/// threats placed.
pub fn place_threats(
    grid: &mut Grid<'_>,
    side: Player,
    wanted: usize,
    length: usize,
) -> Vec<PlacedThreat> {
    let (xs, ys) = (grid.xs, grid.ys);
    let rotations: [Rotation; 4] = [
        |c, r| (c, r),
        |c, r| (-r, c),
        |c, r| (-c, -r),
        |c, r| (r, -c),
    ];
    // Every fitting placement, with how many of its cells change side
    // (the pattern straddles the border of the two areas, which is rarely
    // straight) and its nearest cell's distance from the region.
    let mut candidates: Vec<(usize, usize, Placement)> = Vec::new();
    let pat = pattern(length);
    for rot in rotations {
        for ay in 0..ys as i64 {
            for ax in 0..xs as i64 {
                let mut cells = Vec::with_capacity(pat.len());
                let mut on_board = true;
                for &(c, r, cell) in &pat {
                    let (dx, dy) = rot(c, r);
                    let (x, y) = (ax + dx, ay + dy);
                    if x < 0 || y < 0 || x >= xs as i64 || y >= ys as i64 {
                        // The edge may stand in for the named side's
                        // stones around the peninsula, nothing else.
                        on_board &= cell == Cell::Own;
                        continue;
                    }
                    cells.push((y as usize * xs + x as usize, cell));
                }
                if !on_board {
                    continue;
                }
                if let Some(changed) = fits(grid, &cells, side) {
                    let score = cells.iter().map(|&(i, _)| grid.dist[i]).min().unwrap_or(0);
                    candidates.push((changed, score, cells));
                }
            }
        }
    }
    // Fewest changed cells first (each moves the balance), then the
    // farthest from the region.
    candidates.sort_by(|a, b| {
        (a.0.cmp(&b.0))
            .then(b.1.cmp(&a.1))
            .then(a.2[0].0.cmp(&b.2[0].0))
    });

    let mut used = vec![false; xs * ys];
    let mut placed = Vec::new();
    for (_, _, cells) in candidates {
        if placed.len() == wanted {
            break;
        }
        if cells.iter().any(|&(i, _)| used[i]) {
            continue;
        }
        let before = [
            chain_count(grid.stone, side, xs, ys),
            chain_count(grid.stone, side.opp(), xs, ys),
        ];
        let saved: Vec<(usize, Option<Player>)> =
            cells.iter().map(|&(i, _)| (i, grid.stone[i])).collect();
        for &(i, cell) in &cells {
            grid.stone[i] = match cell {
                Cell::Peninsula | Cell::Other => Some(side.opp()),
                Cell::Miai => None,
                Cell::Own => Some(side),
            };
        }
        // The peninsula is one new chain of the other side; nothing else
        // may be cut off.
        let after = [
            chain_count(grid.stone, side, xs, ys),
            chain_count(grid.stone, side.opp(), xs, ys),
        ];
        if after != [before[0], before[1] + 1] {
            for (i, s) in saved {
                grid.stone[i] = s;
            }
            continue;
        }
        // Keep a line between patterns, so that they never interact.
        for &(i, _) in &cells {
            let (x, y) = (i % xs, i / xs);
            for ny in y.saturating_sub(1)..=(y + 1).min(ys - 1) {
                for nx in x.saturating_sub(1)..=(x + 1).min(xs - 1) {
                    used[ny * xs + nx] = true;
                }
            }
        }
        let pick = |want: Cell| -> Vec<usize> {
            cells
                .iter()
                .filter(|&&(_, c)| c == want)
                .map(|&(i, _)| i)
                .collect()
        };
        let miai = pick(Cell::Miai);
        placed.push(PlacedThreat {
            points: [miai[0], miai[1]],
            stones: pick(Cell::Peninsula),
            cells: cells.iter().map(|&(i, _)| i).collect(),
        });
    }
    placed
}

/// How many cells the pattern would move from one side to the other
/// (at most [`MAX_CHANGED`]; `None` if more), if every cell is a frame
/// stone far from the region with no eye on or next to it (an emptied
/// point beside an eye would change the eye). Whether both areas stay
/// whole is checked when it is placed.
fn fits(grid: &Grid<'_>, cells: &[(usize, Cell)], side: Player) -> Option<usize> {
    let (xs, ys) = (grid.xs, grid.ys);
    let mut changed = 0;
    for &(i, cell) in cells {
        let want = match cell {
            Cell::Own | Cell::Peninsula => side,
            Cell::Other | Cell::Miai => side.opp(),
        };
        let (x, y) = (i % xs, i / xs);
        let near_eye = (y.saturating_sub(1)..=(y + 1).min(ys - 1)).any(|ny| {
            (x.saturating_sub(1)..=(x + 1).min(xs - 1)).any(|nx| grid.eyes[ny * xs + nx])
        });
        if grid.stone[i].is_none() || grid.dist[i] < MIN_DISTANCE || near_eye {
            return None;
        }
        if grid.stone[i] != Some(want) {
            changed += 1;
        }
    }
    (changed <= MAX_CHANGED).then_some(changed)
}

/// The number of orthogonally connected chains of `pla`'s stones.
fn chain_count(stone: &[Option<Player>], pla: Player, xs: usize, ys: usize) -> usize {
    let mut seen = vec![false; xs * ys];
    let mut count = 0;
    for start in 0..xs * ys {
        if seen[start] || stone[start] != Some(pla) {
            continue;
        }
        count += 1;
        seen[start] = true;
        let mut stack = vec![start];
        while let Some(p) = stack.pop() {
            let (x, y) = (p % xs, p / xs);
            let near = [
                (x > 0).then(|| p - 1),
                (x + 1 < xs).then_some(p + 1),
                (y > 0).then(|| p - xs),
                (y + 1 < ys).then_some(p + xs),
            ];
            for q in near.into_iter().flatten() {
                if !seen[q] && stone[q] == Some(pla) {
                    seen[q] = true;
                    stack.push(q);
                }
            }
        }
    }
    count
}
