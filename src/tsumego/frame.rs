//! The tsumego frame: the rest of the board filled with settled stones, so
//! that the only open question is the local fight.
//!
//! Layout (all outside the protected points: the region plus the empty
//! liberties of its stones that lie just outside it):
//! - the attacker's *wall*, every frame point within one line (Chebyshev)
//!   of the protected points, closing the fight in;
//! - the attacker's *base*, grown from the wall's end farthest from the
//!   centre, so the wall hangs on an area wide enough for eyes;
//! - the defender's area, the rest (the far side of the board).
//!
//! The attacker's share of the frame is set so that the game's result
//! turns on the fight in the region (see the balance in [`build_frame`])
//! and the search's winrate says who won it. Each colour's area gets single-point eyes, chosen so the
//! area stays one chain; the result is checked with the board's own
//! pass-alive analysis (Benson), so a frame that is returned is settled.

use crate::game::{AreaOptions, Board, Color, Loc, Player};

use super::region::Region;

/// How far (in points) the attacker's share may move off the balanced
/// split to find one where both sides have room for eyes.
const MAX_SHIFT: usize = 12;

/// Why no frame could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The frame's stones could not all be made pass-alive (too little room
    /// outside the region, or an odd region shape).
    #[error("no settled frame fits around this region ({0}); give a smaller region")]
    Unsettled(String),
}

/// A framed position.
#[derive(Debug, Clone)]
pub struct Framed {
    /// The board with the frame; the protected points are as they were.
    pub board: Board,
    /// The region plus the outside liberties of its stones: the points the
    /// search may play.
    pub playable: Vec<Loc>,
}

/// Frames `board` around `region`, the wall and base for `attacker`, the
/// far area for the other side, balanced for `komi` (White's).
pub fn build_frame(
    board: &Board,
    region: &Region,
    attacker: Player,
    komi: f32,
) -> Result<Framed, FrameError> {
    let (xs, ys) = (board.x_size(), board.y_size());
    let idx = |x: usize, y: usize| y * xs + x;
    let loc = |x: usize, y: usize| Loc::from_xy(x, y, xs);

    // Protected: the region, and empty points just outside it that are
    // liberties of the region's stones (they must keep them).
    let mut protected = vec![false; xs * ys];
    for y in 0..ys {
        for x in 0..xs {
            if region.contains_xy(x, y) {
                protected[idx(x, y)] = true;
            }
        }
    }
    for y in 0..ys {
        for x in 0..xs {
            if protected[idx(x, y)] || board.get(loc(x, y)) != Color::Empty {
                continue;
            }
            let touches_region_stone = neighbours(x, y, xs, ys).any(|(nx, ny)| {
                region.contains_xy(nx, ny) && board.get(loc(nx, ny)) != Color::Empty
            });
            if touches_region_stone {
                protected[idx(x, y)] = true;
            }
        }
    }
    let playable: Vec<Loc> = (0..xs * ys)
        .filter(|&i| protected[i])
        .map(|i| loc(i % xs, i / xs))
        .collect();

    // Distance (Chebyshev) of each point from the protected set.
    let mut dist = vec![usize::MAX; xs * ys];
    for y in 0..ys {
        for x in 0..xs {
            for p in &playable {
                let (px, py) = p.xy(xs);
                dist[idx(x, y)] = dist[idx(x, y)].min(px.abs_diff(x).max(py.abs_diff(y)));
            }
        }
    }
    let frame: Vec<usize> = (0..xs * ys).filter(|&i| !protected[i]).collect();
    let wall: Vec<usize> = frame.iter().copied().filter(|&i| dist[i] == 1).collect();
    if wall.is_empty() || frame.len() < wall.len() + 8 {
        return Err(FrameError::Unsettled("the frame area is too small".into()));
    }

    // The base grows from the wall point farthest from the centre (a point
    // where the wall meets the edge, for corner and side problems).
    let centre = ((xs as f64 - 1.0) / 2.0, (ys as f64 - 1.0) / 2.0);
    let d2 = |i: usize, (cx, cy): (f64, f64)| {
        let (x, y) = ((i % xs) as f64, (i / xs) as f64);
        (x - cx).powi(2) + (y - cy).powi(2)
    };
    let anchor = wall
        .iter()
        .copied()
        .max_by(|&a, &b| d2(a, centre).total_cmp(&d2(b, centre)).then(b.cmp(&a)))
        .ok_or_else(|| FrameError::Unsettled("no wall".into()))?;
    let anchor_xy = ((anchor % xs) as f64, (anchor / xs) as f64);
    let mut rest: Vec<usize> = frame.iter().copied().filter(|&i| dist[i] > 1).collect();
    rest.sort_by(|&a, &b| {
        d2(a, anchor_xy)
            .total_cmp(&d2(b, anchor_xy))
            .then(a.cmp(&b))
    });

    // Balance: halfway between the defender living (it keeps the region
    // but for the attacker's stones there) and dying (the attacker takes
    // it all), Black's total minus White's should be komi. So the
    // attacker's frame minus the defender's is komi (Black attacking) or
    // minus komi (White attacking), less the attacker's stones in the
    // region.
    let attacker_in_region = region
        .points()
        .into_iter()
        .filter(|&l| board.get(l) == attacker.color())
        .count() as f64;
    let n = frame.len() as f64;
    let komi_for_attacker = match attacker {
        Player::Black => komi as f64,
        Player::White => -(komi as f64),
    };
    let wanted = (n + komi_for_attacker - attacker_in_region) / 2.0;
    let min_attacker = wall.len() + 6;
    let max_attacker = frame.len().saturating_sub(8).max(min_attacker);
    let balanced = (wanted.round().max(0.0) as usize).clamp(min_attacker, max_attacker);
    // The balanced split may leave one side an area too narrow for two
    // eyes; nearby splits are tried, closest first.
    let mut last_error = FrameError::Unsettled("no split of the frame".into());
    let mut settled = None;
    for step in 0..=MAX_SHIFT {
        for attacker_count in [balanced + step, balanced.wrapping_sub(step)] {
            if !(min_attacker..=max_attacker).contains(&attacker_count) {
                continue;
            }
            let mut owner: Vec<Option<Player>> = vec![None; xs * ys];
            for &i in &wall {
                owner[i] = Some(attacker);
            }
            for (k, &i) in rest.iter().enumerate() {
                let side = if wall.len() + k < attacker_count {
                    attacker
                } else {
                    attacker.opp()
                };
                owner[i] = Some(side);
            }
            match choose_eyes(&owner, &dist, xs, ys) {
                Ok(eyes) => {
                    settled = Some((owner, eyes));
                    break;
                }
                Err(e) => last_error = e,
            }
        }
        if settled.is_some() {
            break;
        }
    }
    let (owner, eyes) = settled.ok_or(last_error)?;

    let mut framed = board.clone();
    for &i in &frame {
        framed.set_stone(loc(i % xs, i / xs), Color::Empty);
    }
    for &i in &frame {
        if let (Some(p), false) = (owner[i], eyes[i]) {
            framed.set_stone(loc(i % xs, i / xs), p.color());
        }
    }
    check_settled(board, &framed, &protected, &owner, &eyes)?;
    Ok(Framed {
        board: framed,
        playable,
    })
}

/// The on-board orthogonal neighbours of `(x, y)`.
fn neighbours(x: usize, y: usize, xs: usize, ys: usize) -> impl Iterator<Item = (usize, usize)> {
    let cand = [
        (x.wrapping_sub(1), y),
        (x + 1, y),
        (x, y.wrapping_sub(1)),
        (x, y + 1),
    ];
    cand.into_iter().filter(move |&(a, b)| a < xs && b < ys)
}

/// Single-point eyes for each colour's area: points whose orthogonal
/// neighbours are all that colour's stones, no two eyes touching (even
/// diagonally), each keeping the area one chain, far points first. Every
/// connected area gets at least two, else the frame fails.
fn choose_eyes(
    owner: &[Option<Player>],
    dist: &[usize],
    xs: usize,
    ys: usize,
) -> Result<Vec<bool>, FrameError> {
    let mut eyes = vec![false; xs * ys];
    for pla in Player::BOTH {
        for component in components(owner, &eyes, pla, xs, ys) {
            // Room for more than two keeps the frame mostly solid stones but
            // not fragile: two are enough for pass-alive.
            let max_eyes = 2 + component.len() / 30;
            let mut order = component.clone();
            order.sort_by(|&a, &b| dist[b].cmp(&dist[a]).then(a.cmp(&b)));
            let mut made = 0;
            for &p in &order {
                if made == max_eyes {
                    break;
                }
                let (x, y) = (p % xs, p / xs);
                let all_own = neighbours(x, y, xs, ys)
                    .all(|(a, b)| owner[b * xs + a] == Some(pla) && !eyes[b * xs + a]);
                let near_eye = (y.saturating_sub(1)..=(y + 1).min(ys - 1))
                    .any(|b| (x.saturating_sub(1)..=(x + 1).min(xs - 1)).any(|a| eyes[b * xs + a]));
                if !all_own || near_eye {
                    continue;
                }
                eyes[p] = true;
                let still_one = components(owner, &eyes, pla, xs, ys)
                    .iter()
                    .filter(|c| c.iter().any(|i| component.contains(i)))
                    .count()
                    == 1;
                if still_one {
                    made += 1;
                } else {
                    eyes[p] = false;
                }
            }
            if made < 2 {
                return Err(FrameError::Unsettled(format!(
                    "an area of {} {} points has room for {made} eye(s)",
                    component.len(),
                    if pla == Player::Black {
                        "black"
                    } else {
                        "white"
                    }
                )));
            }
        }
    }
    Ok(eyes)
}

/// Orthogonally connected components of `pla`'s area, eyes left out.
fn components(
    owner: &[Option<Player>],
    eyes: &[bool],
    pla: Player,
    xs: usize,
    ys: usize,
) -> Vec<Vec<usize>> {
    let mut seen = vec![false; xs * ys];
    let mut out = Vec::new();
    for start in 0..xs * ys {
        if seen[start] || owner[start] != Some(pla) || eyes[start] {
            continue;
        }
        seen[start] = true;
        let mut comp = vec![start];
        let mut next = 0;
        while next < comp.len() {
            let p = comp[next];
            next += 1;
            for (a, b) in neighbours(p % xs, p / xs, xs, ys) {
                let q = b * xs + a;
                if !seen[q] && owner[q] == Some(pla) && !eyes[q] {
                    seen[q] = true;
                    comp.push(q);
                }
            }
        }
        out.push(comp);
    }
    out
}

/// The frame is settled: the protected points are unchanged and every
/// frame stone is pass-alive.
fn check_settled(
    original: &Board,
    framed: &Board,
    protected: &[bool],
    owner: &[Option<Player>],
    eyes: &[bool],
) -> Result<(), FrameError> {
    let xs = framed.x_size();
    let area = framed.calculate_area(AreaOptions::default());
    for (i, &keep) in protected.iter().enumerate() {
        let l = Loc::from_xy(i % xs, i / xs, xs);
        if keep && original.get(l) != framed.get(l) {
            return Err(FrameError::Unsettled(
                "placing the frame changed the problem's stones".into(),
            ));
        }
        if let (false, Some(p), false) = (keep, owner[i], eyes[i]) {
            if framed.get(l) != p.color() || area.get(l) != p.color() {
                return Err(FrameError::Unsettled("a frame group is not settled".into()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tsumego::region::{auto_region, parse_region_text, RegionSpec};

    fn corner_problem(size: usize) -> Board {
        // Black's group in the top-left corner, White around it.
        let mut b = Board::new(size, size).unwrap();
        let put = |b: &mut Board, x: usize, y: usize, c: Color| {
            b.set_stone(Loc::from_xy(x, y, size), c);
        };
        for (x, y) in [(0, 1), (1, 1), (2, 1), (2, 0)] {
            put(&mut b, x, y, Color::Black);
        }
        for (x, y) in [(0, 2), (1, 2), (2, 2), (3, 1), (3, 0)] {
            put(&mut b, x, y, Color::White);
        }
        b
    }

    fn assert_settled(original: &Board, framed: &Framed, region: &Region) {
        let b = &framed.board;
        let xs = b.x_size();
        let area = b.calculate_area(AreaOptions::default());
        for l in b.locs() {
            if framed.playable.contains(&l) {
                assert_eq!(b.get(l), original.get(l), "protected point changed");
                continue;
            }
            assert!(!region.contains(l));
            if let Some(p) = b.get(l).player() {
                assert_eq!(
                    area.get(l),
                    p.color(),
                    "frame stone at {:?} not pass-alive\n{b}",
                    l.xy(xs)
                );
                // Legal: every frame chain has liberties (eyes).
                assert!(
                    b.num_liberties(l) >= 2,
                    "frame chain short of liberties\n{b}"
                );
            }
        }
    }

    #[test]
    fn corner_frames_are_settled_on_every_size() {
        for size in 7..=19 {
            for attacker in Player::BOTH {
                let b = corner_problem(size);
                let region = auto_region(&b, None).unwrap();
                let framed = build_frame(&b, &region, attacker, 7.0)
                    .unwrap_or_else(|e| panic!("size {size}: {e}"));
                assert_settled(&b, &framed, &region);
            }
        }
    }

    #[test]
    fn side_and_rectangle_regions_frame_too() {
        for size in [9, 13, 19] {
            let b = corner_problem(size);
            let last = size - 1;
            let text = format!("A{}-E{}", size, size - 3);
            let RegionSpec::Points(points) = parse_region_text(&text, size, size).unwrap() else {
                panic!()
            };
            let region = Region::from_points(&points, size, size).unwrap();
            let framed = build_frame(&b, &region, Player::White, 6.5).unwrap();
            assert_settled(&b, &framed, &region);
            // A side region in the middle of the bottom edge.
            let mid = size / 2;
            let side: Vec<Loc> = (mid - 2..=mid + 2)
                .flat_map(|x| (last - 2..=last).map(move |y| Loc::from_xy(x, y, size)))
                .collect();
            let region = Region::from_points(&side, size, size).unwrap();
            let empty = Board::new(size, size).unwrap();
            let framed = build_frame(&empty, &region, Player::Black, 7.0).unwrap();
            assert_settled(&empty, &framed, &region);
        }
    }

    #[test]
    fn the_frame_balances_the_score_around_komi() {
        let b = corner_problem(13);
        let region = auto_region(&b, None).unwrap();
        let framed = build_frame(&b, &region, Player::Black, 7.0).unwrap();
        let count = |p: Player| {
            framed
                .board
                .locs()
                .filter(|&l| !framed.playable.contains(&l))
                .filter(|&l| {
                    framed.board.calculate_area(AreaOptions::default()).get(l) == p.color()
                })
                .count() as i64
        };
        // Komi less the attacker's (Black's) 4 stones in the region.
        let diff = count(Player::Black) - count(Player::White);
        assert!(
            (diff - 3).abs() <= 2,
            "black frame minus white frame {diff}"
        );
    }
}
