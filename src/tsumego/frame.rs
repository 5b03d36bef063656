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
use super::threats::{place_threats, Grid, MAX_LENGTH, MIN_LENGTH, WANTED_THREATS};

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
    /// The region plus the outside liberties of its stones, and the ko
    /// threats' points: the points the search may play.
    pub playable: Vec<Loc>,
    /// The ko threats placed (none unless asked for).
    pub threats: Vec<KoThreat>,
}

/// Frames `board` around `region`, the wall and base for `attacker`, the
/// far area for the other side, balanced for `komi` (White's), with ko
/// threats for `threats_for` if given.
pub fn build_frame(
    board: &Board,
    region: &Region,
    attacker: Player,
    komi: f32,
    threats_for: Option<Player>,
) -> Result<Framed, FrameError> {
    let (xs, ys) = (board.x_size(), board.y_size());
    let idx = |x: usize, y: usize| y * xs + x;
    let loc = |x: usize, y: usize| Loc::from_xy(x, y, xs);

    let protected = protected_points(board, region);
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
    let layout = Layout {
        board,
        protected: &protected,
        wall: &wall,
        rest: &rest,
        dist: &dist,
        attacker,
    };
    // With threats: the longest peninsulas that fit (a small threat is
    // ignored in a big ko), as many as fit (at least one). Each peninsula
    // moves its stones from the threatening side's area to the other's,
    // so the split is shifted to keep the balance.
    let tries: Vec<(usize, usize)> = match threats_for {
        None => vec![(0, 0)],
        Some(_) => (MIN_LENGTH..=MAX_LENGTH)
            .rev()
            .flat_map(|len| (1..=WANTED_THREATS).rev().map(move |n| (n, len)))
            .collect(),
    };
    let mut last_error = FrameError::Unsettled("no split of the frame".into());
    for (count, length) in tries {
        let shift = (count * 2 * length) as i64;
        let centre = balanced as i64
            + match threats_for {
                Some(side) if side == attacker => shift,
                Some(_) => -shift,
                None => 0,
            };
        let centre = centre.clamp(min_attacker as i64, max_attacker as i64) as usize;
        // The balanced split may leave one side an area too narrow for two
        // eyes (or no room for the threats); nearby splits are tried,
        // closest first.
        for step in 0..=MAX_SHIFT {
            for attacker_count in [centre + step, centre.wrapping_sub(step)] {
                if !(min_attacker..=max_attacker).contains(&attacker_count) {
                    continue;
                }
                match layout.try_split(attacker_count, threats_for, (count, length)) {
                    Ok(framed) => {
                        return Ok(Framed {
                            board: framed.0,
                            playable: playable
                                .iter()
                                .copied()
                                .chain(framed.1.iter().flat_map(|t| t.points))
                                .collect(),
                            threats: framed.1,
                        })
                    }
                    Err(e) => last_error = e,
                }
            }
        }
    }
    Err(last_error)
}

/// One ko threat of the frame (see `threats.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KoThreat {
    /// The side the threat is for.
    pub side: Player,
    /// The two miai points: the side plays either (atari on `stones`),
    /// the other side answers at the other one.
    pub points: [Loc; 2],
    /// The other side's stones the threat is against.
    pub stones: Vec<Loc>,
}

/// The frame's layout before the split: what [`Layout::try_split`] needs.
struct Layout<'a> {
    board: &'a Board,
    protected: &'a [bool],
    wall: &'a [usize],
    rest: &'a [usize],
    dist: &'a [usize],
    attacker: Player,
}

impl Layout<'_> {
    /// The frame with `attacker_count` points for the attacker (wall
    /// first, then the base nearest the anchor), its eyes and `threats`
    /// (how many, how long) ko threats for `threats_for`, checked settled.
    fn try_split(
        &self,
        attacker_count: usize,
        threats_for: Option<Player>,
        (threats, length): (usize, usize),
    ) -> Result<(Board, Vec<KoThreat>), FrameError> {
        let board = self.board;
        let (xs, ys) = (board.x_size(), board.y_size());
        let loc = |i: usize| Loc::from_xy(i % xs, i / xs, xs);
        let mut owner: Vec<Option<Player>> = vec![None; xs * ys];
        for &i in self.wall {
            owner[i] = Some(self.attacker);
        }
        for (k, &i) in self.rest.iter().enumerate() {
            let side = if self.wall.len() + k < attacker_count {
                self.attacker
            } else {
                self.attacker.opp()
            };
            owner[i] = Some(side);
        }
        let eyes = choose_eyes(&owner, self.dist, xs, ys)?;
        let mut stone: Vec<Option<Player>> = (0..xs * ys)
            .map(|i| if eyes[i] { None } else { owner[i] })
            .collect();
        let mut placed = Vec::new();
        if let Some(side) = threats_for {
            let mut grid = Grid {
                stone: &mut stone,
                eyes: &eyes,
                dist: self.dist,
                xs,
                ys,
            };
            placed = place_threats(&mut grid, side, threats, length);
            if placed.len() < threats {
                return Err(FrameError::Unsettled(format!(
                    "no room for {threats} ko threat(s) in the frame"
                )));
            }
        }
        let mut framed = board.clone();
        for (i, &keep) in self.protected.iter().enumerate() {
            if !keep {
                framed.set_stone(loc(i), stone[i].map_or(Color::Empty, |p| p.color()));
            }
        }
        let mut skip = vec![false; xs * ys];
        for t in &placed {
            for &i in &t.cells {
                skip[i] = true;
            }
        }
        check_settled(board, &framed, self.protected, &skip)?;
        let threats = placed
            .into_iter()
            .map(|t| KoThreat {
                side: threats_for.unwrap_or(self.attacker),
                points: t.points.map(loc),
                stones: t.stones.into_iter().map(loc).collect(),
            })
            .collect();
        Ok((framed, threats))
    }
}

/// Protected: the region, and empty points just outside it that are
/// liberties of the region's stones (they must keep them).
fn protected_points(board: &Board, region: &Region) -> Vec<bool> {
    let (xs, ys) = (board.x_size(), board.y_size());
    let loc = |x: usize, y: usize| Loc::from_xy(x, y, xs);
    let mut protected = vec![false; xs * ys];
    for y in 0..ys {
        for x in 0..xs {
            let touches_region_stone = || {
                neighbours(x, y, xs, ys).any(|(nx, ny)| {
                    region.contains_xy(nx, ny) && board.get(loc(nx, ny)) != Color::Empty
                })
            };
            protected[y * xs + x] = region.contains_xy(x, y)
                || (board.get(loc(x, y)) == Color::Empty && touches_region_stone());
        }
    }
    protected
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
/// frame stone is pass-alive, but for the ko threats' cells (`skip`),
/// which are settled only once a threat is answered.
fn check_settled(
    original: &Board,
    framed: &Board,
    protected: &[bool],
    skip: &[bool],
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
        let stone = framed.get(l);
        if !keep && !skip[i] && stone != Color::Empty && area.get(l) != stone {
            return Err(FrameError::Unsettled("a frame group is not settled".into()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Move;
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
            let threat_point = framed.threats.iter().any(|t| t.points.contains(&l));
            if framed.playable.contains(&l) && !threat_point {
                assert_eq!(b.get(l), original.get(l), "protected point changed");
                continue;
            }
            assert!(!region.contains(l));
            let in_threat = framed
                .threats
                .iter()
                .any(|t| t.stones.contains(&l) || t.points.contains(&l));
            if let (Some(p), false) = (b.get(l).player(), in_threat) {
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
                let framed = build_frame(&b, &region, attacker, 7.0, None)
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
            let framed = build_frame(&b, &region, Player::White, 6.5, None).unwrap();
            assert_settled(&b, &framed, &region);
            // A side region in the middle of the bottom edge.
            let mid = size / 2;
            let side: Vec<Loc> = (mid - 2..=mid + 2)
                .flat_map(|x| (last - 2..=last).map(move |y| Loc::from_xy(x, y, size)))
                .collect();
            let region = Region::from_points(&side, size, size).unwrap();
            let empty = Board::new(size, size).unwrap();
            let framed = build_frame(&empty, &region, Player::Black, 7.0, None).unwrap();
            assert_settled(&empty, &framed, &region);
        }
    }

    #[test]
    fn the_frame_balances_the_score_around_komi() {
        let b = corner_problem(13);
        let region = auto_region(&b, None).unwrap();
        let framed = build_frame(&b, &region, Player::Black, 7.0, None).unwrap();
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

    #[test]
    fn ko_threats_are_legal_far_from_the_region_and_settle_when_answered() {
        for size in [13, 19] {
            for attacker in Player::BOTH {
                for side in Player::BOTH {
                    let b = corner_problem(size);
                    let region = auto_region(&b, None).unwrap();
                    let plain = build_frame(&b, &region, attacker, 7.0, None).unwrap();
                    let framed = build_frame(&b, &region, attacker, 7.0, Some(side))
                        .unwrap_or_else(|e| panic!("size {size}: {e}"));
                    let label = format!("size {size}, attacker {attacker:?}, for {side:?}");
                    assert!(!framed.threats.is_empty(), "{label}: no threat");
                    assert_settled(&b, &framed, &region);
                    check_threats(&framed, &plain, &region, side, &label);
                }
            }
        }
    }

    /// Each threat: away from the region, searchable, an atari on the
    /// other side's peninsula that the answer turns into settled stones.
    fn check_threats(framed: &Framed, plain: &Framed, region: &Region, side: Player, label: &str) {
        let b = &framed.board;
        let xs = b.x_size();
        // Once the threats are answered (their points the other side's),
        // each side has as much of the frame as without threats, give or
        // take the split's search for eyes: the balance is kept.
        let area_of = |f: &Framed, p: Player| {
            let points: usize = f.threats.iter().map(|t| t.points.len()).sum();
            let stones = f
                .board
                .locs()
                .filter(|&l| !region.contains(l) && f.board.get(l) == p.color())
                .count();
            (stones + if p == side.opp() { points } else { 0 }) as i64
        };
        for p in Player::BOTH {
            let diff = (area_of(framed, p) - area_of(plain, p)).abs();
            assert!(diff <= 16, "{label}: {p:?} frame moved by {diff}");
        }
        for t in &framed.threats {
            assert_eq!(t.side, side);
            let far = |l: Loc| {
                let (x, y) = l.xy(xs);
                region.points().iter().all(|&r| {
                    let (rx, ry) = r.xy(xs);
                    rx.abs_diff(x).max(ry.abs_diff(y)) >= 3
                })
            };
            assert!(t.points.iter().chain(&t.stones).all(|&l| far(l)), "{label}");
            assert!(
                t.points.iter().all(|l| framed.playable.contains(l)),
                "{label}"
            );
            assert!(t.stones.iter().all(|&l| b.get(l) == side.opp().color()));
            assert_eq!(b.num_liberties(t.stones[0]), 2, "{label}\n{b}");
            for (threat, answer) in [(t.points[0], t.points[1]), (t.points[1], t.points[0])] {
                let mut after = b.clone();
                assert!(after.try_play(Move::Play(threat), side, false), "{label}");
                assert_eq!(after.num_liberties(t.stones[0]), 1, "not atari\n{after}");
                assert!(after.try_play(Move::Play(answer), side.opp(), false));
                // Answered: the threat's stone is captured and every frame
                // stone outside the problem is pass-alive again.
                assert_eq!(after.get(threat), Color::Empty, "{label}\n{after}");
                let area = after.calculate_area(AreaOptions::default());
                for l in after.locs() {
                    let other = framed
                        .threats
                        .iter()
                        .any(|o| o != t && o.stones.contains(&l));
                    if !framed.playable.contains(&l) && !other {
                        if let Some(p) = after.get(l).player() {
                            assert_eq!(area.get(l), p.color(), "{label}: {l:?}\n{after}");
                        }
                    }
                }
                // Unanswered, the side captures the peninsula.
                let mut ignored = b.clone();
                assert!(ignored.try_play(Move::Play(threat), side, false));
                assert!(ignored.try_play(Move::Play(answer), side, false));
                assert!(t.stones.iter().all(|&l| ignored.get(l) == Color::Empty));
            }
        }
    }

    #[test]
    fn a_small_board_has_no_room_for_threats() {
        let b = corner_problem(9);
        let region = auto_region(&b, None).unwrap();
        let err = build_frame(&b, &region, Player::White, 7.0, Some(Player::Black));
        assert!(
            matches!(&err, Err(FrameError::Unsettled(m)) if m.contains("ko threat")),
            "{err:?}"
        );
    }
}
