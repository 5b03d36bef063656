//! Judging a local fight from ownership: the status of each group in the
//! region, and whether a first move reaches the problem's goal.
//!
//! Ownership is per point, row-major from the top-left, +1 = Black owns it
//! (callers turn the search's side-to-move view into Black's).

use crate::game::{Board, Color, Loc, Move, Player};

use super::region::Region;

/// A group counts as settled when its stones' mean ownership, from its own
/// side, is at least this (alive) or at most minus this (dead).
pub const SETTLED: f64 = 0.5;
/// Below this (in absolute value) a group and its neighbour are "shared":
/// the ownership of a seki.
pub const SEKI_BAND: f64 = 0.35;

/// What became of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Its owner keeps it.
    Alive,
    /// It is captured (or as good as).
    Dead,
    /// It lives without eyes of its own, sharing liberties with an
    /// opposing group that lives the same way.
    Seki,
    /// Its fate hangs on a ko in the principal line.
    Ko,
    /// None of the above could be told from the ownership.
    Unsettled,
}

impl Status {
    /// The protocol's name.
    pub fn name(self) -> &'static str {
        match self {
            Status::Alive => "alive",
            Status::Dead => "dead",
            Status::Seki => "seki",
            Status::Ko => "ko",
            Status::Unsettled => "unsettled",
        }
    }
}

/// One group's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupVerdict {
    /// Its stones, in board order.
    pub stones: Vec<Loc>,
    /// Its colour.
    pub color: Player,
    /// Mean ownership of its stones from its own side (+1: its own).
    pub own: f64,
    /// The verdict.
    pub status: Status,
    /// Who ends up owning its points.
    pub owner: Player,
    /// With status `ko`: the side that must find a ko threat to go on
    /// (the other side took the ko last in the principal line).
    pub must_find_threats: Option<Player>,
}

/// The chains with a stone in `region`, each once, in board order.
pub fn region_chains(board: &Board, region: &Region) -> Vec<Vec<Loc>> {
    let mut seen: Vec<Loc> = Vec::new();
    let mut out = Vec::new();
    for l in region.points() {
        if board.get(l) == Color::Empty || seen.contains(&board.chain_head(l)) {
            continue;
        }
        seen.push(board.chain_head(l));
        let mut stones: Vec<Loc> = board.chain_stones(l).collect();
        stones.sort();
        out.push(stones);
    }
    out
}

/// Mean ownership of `stones` from `color`'s side.
pub fn mean_own(stones: &[Loc], color: Player, ownership: &[f64], x_size: usize) -> f64 {
    if stones.is_empty() {
        return 0.0;
    }
    let sign = if color == Player::Black { 1.0 } else { -1.0 };
    let sum: f64 = stones
        .iter()
        .map(|l| {
            let (x, y) = l.xy(x_size);
            ownership.get(y * x_size + x).copied().unwrap_or(0.0) * sign
        })
        .sum();
    sum / stones.len() as f64
}

/// The side that must find a ko threat after `line` (played from `board`
/// with `first` to move; passes allowed), if the line fights a ko over
/// `stones`: a ko capture in it takes one of their stones or is played
/// next to them. The last such capture decides: its maker's opponent may
/// not retake at once and must find a threat first.
pub fn line_has_ko_over(
    board: &Board,
    first: Player,
    line: &[Move],
    stones: &[Loc],
) -> Option<Player> {
    let mut b = board.clone();
    let mut pla = first;
    let mut needs_threat = None;
    let touches =
        |b: &Board, l: Loc| stones.contains(&l) || b.adjacent_locs(l).any(|a| stones.contains(&a));
    for &mv in line {
        if let Move::Play(l) = mv {
            if b.would_be_ko_capture(l, pla) {
                let captured = b.ko_capture_loc(l, pla);
                if touches(&b, l) || captured.is_some_and(|c| touches(&b, c)) {
                    needs_threat = Some(pla.opp());
                }
            }
            if !b.try_play(mv, pla, false) {
                break;
            }
        }
        pla = pla.opp();
    }
    needs_threat
}

/// The status of one group from ownership (Black's view); `ko` is the
/// side that must find a ko threat when the principal line fights a ko
/// over it (see [`line_has_ko_over`]).
pub fn group_status(
    board: &Board,
    stones: &[Loc],
    ownership: &[f64],
    ko: Option<Player>,
) -> GroupVerdict {
    let xs = board.x_size();
    let color = stones
        .first()
        .and_then(|&l| board.get(l).player())
        .unwrap_or(Player::Black);
    let own = mean_own(stones, color, ownership, xs);
    let status = if ko.is_some() && own.abs() < 0.9 {
        Status::Ko
    } else if own >= SETTLED && alive_in_seki(board, stones, color, ownership) {
        Status::Seki
    } else if own >= SETTLED {
        Status::Alive
    } else if own <= -SETTLED {
        Status::Dead
    } else if own.abs() < SEKI_BAND
        && shares_liberty_with_unsettled_enemy(board, stones, color, ownership)
    {
        Status::Seki
    } else {
        Status::Unsettled
    };
    let owner = if own >= 0.0 { color } else { color.opp() };
    GroupVerdict {
        stones: stones.to_vec(),
        color,
        own,
        status,
        owner,
        must_find_threats: ko.filter(|_| status == Status::Ko),
    }
}

/// Ownership at `loc` (Black positive), 0 off the map.
fn own_at(ownership: &[f64], xs: usize, loc: Loc) -> f64 {
    let (x, y) = loc.xy(xs);
    ownership.get(y * xs + x).copied().unwrap_or(0.0)
}

/// The distinct empty points next to `chain`.
fn liberties(board: &Board, chain: &[Loc]) -> Vec<Loc> {
    let mut libs: Vec<Loc> = chain
        .iter()
        .flat_map(|&s| board.adjacent_locs(s).collect::<Vec<_>>())
        .filter(|&l| board.get(l) == Color::Empty)
        .collect();
    libs.sort();
    libs.dedup();
    libs
}

/// Whether an enemy chain at one of `libs` that nobody owns (ownership
/// within the seki band) passes `test`: the shape both seki rules look for.
fn enemy_at_unowned_liberty(
    board: &Board,
    libs: &[Loc],
    color: Player,
    ownership: &[f64],
    mut test: impl FnMut(&[Loc]) -> bool,
) -> bool {
    let xs = board.x_size();
    libs.iter()
        .filter(|&&lib| own_at(ownership, xs, lib).abs() < SEKI_BAND)
        .flat_map(|&lib| board.adjacent_locs(lib).collect::<Vec<_>>())
        .filter(|&e| board.get(e) == color.opp().color())
        .any(|e| test(&board.chain_stones(e).collect::<Vec<_>>()))
}

/// Seki as area scoring's ownership shows it: both sides' stones are
/// their own (ownership near +1 each), only the shared liberties are
/// nobody's. So: the group and an enemy chain, each owned by its own side,
/// share a liberty owned by neither, and neither has two liberties it owns
/// (two eyes, or territory: then the shared point is only a dame between
/// two living groups).
fn alive_in_seki(board: &Board, stones: &[Loc], color: Player, ownership: &[f64]) -> bool {
    let xs = board.x_size();
    let owned_by = |libs: &[Loc], p: Player| {
        let sign = if p == Player::Black { 1.0 } else { -1.0 };
        libs.iter()
            .filter(|&&l| own_at(ownership, xs, l) * sign >= SETTLED)
            .count()
    };
    let mine = liberties(board, stones);
    if owned_by(&mine, color) >= 2 {
        return false;
    }
    enemy_at_unowned_liberty(board, &mine, color, ownership, |enemy| {
        mean_own(enemy, color.opp(), ownership, xs) >= SETTLED
            && owned_by(&liberties(board, enemy), color.opp()) < 2
    })
}

/// Seki's shape as territory scoring's ownership shows it: an enemy chain, itself near zero ownership, with a
/// liberty in common with the group, that liberty owned by neither side.
fn shares_liberty_with_unsettled_enemy(
    board: &Board,
    stones: &[Loc],
    color: Player,
    ownership: &[f64],
) -> bool {
    let xs = board.x_size();
    enemy_at_unowned_liberty(
        board,
        &liberties(board, stones),
        color,
        ownership,
        |enemy| mean_own(enemy, color.opp(), ownership, xs).abs() < SEKI_BAND,
    )
}

/// The problem's goal for its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// The target must die.
    Kill,
    /// The target must live (seki counts).
    Live,
}

impl Goal {
    /// The protocol's name.
    pub fn name(self) -> &'static str {
        match self {
            Goal::Kill => "kill",
            Goal::Live => "live",
        }
    }

    /// Whether a target with this status meets the goal.
    pub fn met_by(self, status: Status) -> bool {
        match self {
            Goal::Kill => status == Status::Dead,
            Goal::Live => matches!(status, Status::Alive | Status::Seki),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A square board from rows of `X` (black), `O` (white) and `.`.
    fn board(rows: &[&str]) -> Board {
        let size = rows.len();
        let mut b = Board::new(size, size).unwrap();
        for (y, row) in rows.iter().enumerate() {
            for (x, c) in row.chars().enumerate() {
                let color = match c {
                    'X' => Color::Black,
                    'O' => Color::White,
                    _ => continue,
                };
                b.set_stone(Loc::from_xy(x, y, size), color);
            }
        }
        b
    }

    fn ownership(rows: &[&[f64]]) -> Vec<f64> {
        rows.iter().flat_map(|r| r.iter().copied()).collect()
    }

    fn chain_at(b: &Board, x: usize, y: usize) -> Vec<Loc> {
        b.chain_stones(Loc::from_xy(x, y, b.x_size())).collect()
    }

    #[test]
    fn clear_ownership_gives_alive_and_dead() {
        let b = board(&["XO...", "XO...", "OO...", ".....", "....."]);
        let own = ownership(&[
            &[-0.9, -0.95, -1.0, -1.0, -1.0],
            &[-0.9, -0.95, -1.0, -1.0, -1.0],
            &[-0.9, -0.9, -1.0, -1.0, -1.0],
            &[-1.0; 5],
            &[-1.0; 5],
        ]);
        let black = group_status(&b, &chain_at(&b, 0, 0), &own, None);
        assert_eq!(black.status, Status::Dead);
        assert_eq!(black.owner, Player::White);
        let white = group_status(&b, &chain_at(&b, 1, 0), &own, None);
        assert_eq!(white.status, Status::Alive);
        assert_eq!(white.owner, Player::White);
        assert!(Goal::Kill.met_by(black.status));
        assert!(!Goal::Live.met_by(black.status));
    }

    #[test]
    fn shared_ownership_with_a_shared_liberty_is_seki() {
        // Black (0,0)-(0,1) and White (2,0)-(2,1) share the liberties
        // between them; nobody owns anything.
        let b = board(&["X.O", "X.O", "..."]);
        let own = ownership(&[&[0.05, 0.0, -0.1], &[0.0, 0.02, -0.05], &[0.1, 0.0, -0.1]]);
        let v = group_status(&b, &chain_at(&b, 0, 0), &own, None);
        assert_eq!(v.status, Status::Seki, "{v:?}");
        assert!(Goal::Live.met_by(v.status));
        // Area scoring: both groups' stones their own, the two shared
        // liberties (0,0) and (2,0) nobody's; White's outer wall has
        // territory, so it is alive, not in seki.
        let area = board(&[".O.XO", "XOXXO", "XXXOO", "OOOO.", "....."]);
        let own = ownership(&[
            &[0.0, -0.95, 0.0, 0.9, -1.0],
            &[0.9, -0.95, 0.9, 0.9, -1.0],
            &[0.9, 0.9, 0.9, -1.0, -1.0],
            &[-1.0; 5],
            &[-1.0; 5],
        ]);
        let v = group_status(&area, &chain_at(&area, 0, 1), &own, None);
        assert_eq!(v.status, Status::Seki, "{v:?}");
        let w = group_status(&area, &chain_at(&area, 1, 0), &own, None);
        assert_eq!(w.status, Status::Seki, "{w:?}");
        let wall = group_status(&area, &chain_at(&area, 4, 0), &own, None);
        assert_eq!(wall.status, Status::Alive, "{wall:?}");
        // The same stones with eyes of their own (owned liberties): alive.
        let mut eyes = own.clone();
        eyes[0] = 0.9;
        eyes[2] = 0.9;
        assert!(group_status(&area, &chain_at(&area, 1, 0), &eyes, None).status != Status::Seki);
        let v = group_status(&area, &chain_at(&area, 0, 1), &eyes, None);
        assert_eq!(v.status, Status::Alive, "{v:?}");
        // Near-zero ownership with no shared liberty is only unsettled.
        let lonely = board(&["X..", "...", "..O"]);
        let v = group_status(&lonely, &chain_at(&lonely, 0, 0), &[0.0; 9], None);
        assert_eq!(v.status, Status::Unsettled);
    }

    #[test]
    fn a_ko_capture_over_the_group_in_the_line_is_ko() {
        // White takes Black's (2,1) at (1,1): a ko mouth.
        let b = board(&[".XO..", "X.XO.", ".XO..", ".....", "....."]);
        let take = Loc::from_xy(1, 1, 5);
        assert!(b.would_be_ko_capture(take, Player::White));
        let black_stone = chain_at(&b, 2, 1);
        // White took the ko last: Black must find a threat.
        assert_eq!(
            line_has_ko_over(&b, Player::White, &[Move::Play(take)], &black_stone),
            Some(Player::Black)
        );
        assert_eq!(
            line_has_ko_over(&b, Player::White, &[Move::Pass], &black_stone),
            None
        );
        let far = board(&[".XO..", "X.XO.", ".XO..", ".....", "....X"]);
        assert_eq!(
            line_has_ko_over(
                &far,
                Player::White,
                &[Move::Play(take)],
                &chain_at(&far, 4, 4)
            ),
            None
        );
        let v = group_status(&b, &black_stone, &[0.0; 25], Some(Player::Black));
        assert_eq!(v.status, Status::Ko);
        assert_eq!(v.must_find_threats, Some(Player::Black));
        // Settled ownership: the ko is over, nobody needs threats.
        let v = group_status(&b, &black_stone, &[-1.0; 25], Some(Player::Black));
        assert_eq!((v.status, v.must_find_threats), (Status::Dead, None));
    }
}
