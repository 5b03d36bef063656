//! KataGo's defence against mirror Go (`antiMirror`, its
//! `search/searchmirror.cpp`). An opponent who answers every move with its
//! reflection through the centre keeps the position symmetric, and a
//! symmetric position is hard for a net to value: a much weaker player can
//! hold the game that way. When the root's game record shows such an
//! opponent ([`MirrorStatus::detect`], here), the search (`anti_mirror.rs`)
//!
//! - expects the opponent to go on mirroring (a policy prior on the mirror
//!   reply) and looks at the centre and the points next to it more;
//! - forces playouts down the mirror reply and towards the centre, so that
//!   moves which make mirroring bad are found and tolerated even when their
//!   value looks a little worse;
//! - in the hard case, where the mirroring player holds the centre point
//!   and the komi favours them, values positions partly by who owns the
//!   centre;
//! - averages children without noise pruning or value down-weighting and
//!   without the subtree value bias.
//!
//! KataGo's GTP turns it on for `genmove` by default (`genmoveAntiMirror`);
//! analysis, self-play and matches have it off unless `antiMirror` is set.
//! Every constant below is KataGo 1.17.2's.

use crate::game::{Color, Loc, Move, Player, WhiteHandicapBonusRule};

/// Whether the opponent of the root player is mirroring, and how the game
/// would end if the mirror held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MirrorStatus {
    /// The mirroring player (always the root player's opponent); `None`
    /// when nobody is mirroring.
    pub mirroring: Option<Player>,
    /// Points the mirroring player wins by if the mirror holds to the end
    /// (komi and handicap against the extra point of the last move).
    pub advantage: f64,
    /// How far the 7x7 centre is from point symmetry in the mirroring
    /// player's favour (0 = symmetric; 1e10 on boards smaller than 7x7).
    pub center_symmetry_error: f64,
}

impl MirrorStatus {
    /// Nobody is mirroring.
    pub const NONE: MirrorStatus = MirrorStatus {
        mirroring: None,
        advantage: 0.0,
        center_symmetry_error: 1e10,
    };

    /// KataGo's `updateMirroring`: the opponent of `game.root_pla` is
    /// mirroring when at least 7 plus half of their moves were mirror
    /// replies, the recent ones mostly so (an exponentially weighted mean,
    /// decay 0.75, of at least 0.45), and their last move was one.
    pub fn detect<C: Fn(Loc) -> Color>(game: &MirrorGame<'_, C>) -> MirrorStatus {
        let (xs, ys) = (game.x_size, game.y_size);
        let mut status = MirrorStatus::NONE;
        let (mut mirror_count, mut total_count) = (0u32, 0u32);
        let (mut mirror_ewms, mut total_ewms) = (0.0f64, 0.0f64);
        let mut last_was_mirror = false;
        for i in 1..game.moves.len() {
            let (mv, pla) = game.moves[i];
            if pla == game.root_pla {
                continue;
            }
            last_was_mirror = false;
            if mv == mirror_move(game.moves[i - 1].0, xs, ys) {
                mirror_count += 1;
                mirror_ewms += 1.0;
                last_was_mirror = true;
            }
            total_count += 1;
            total_ewms += 1.0;
            mirror_ewms *= 0.75;
            total_ewms *= 0.75;
        }
        if f64::from(mirror_count) >= 7.0 + 0.5 * f64::from(total_count)
            && mirror_ewms >= 0.45 * total_ewms
            && last_was_mirror
        {
            let mirroring = game.root_pla.opp();
            status.mirroring = Some(mirroring);
            let handicap = game.handicap_stones;
            let mut black_extra = 0.0;
            if game.area_scoring {
                if handicap > 0 {
                    black_extra += f64::from(handicap - 1);
                }
                let black_gets_last_move =
                    (xs % 2 == 1 && ys % 2 == 1) == (handicap == 0 || handicap % 2 == 1);
                if black_gets_last_move {
                    black_extra += 1.0;
                }
            }
            if handicap > 0 {
                match game.white_handicap_bonus {
                    WhiteHandicapBonusRule::N => black_extra -= f64::from(handicap),
                    WhiteHandicapBonusRule::NMinusOne => black_extra -= f64::from(handicap - 1),
                    WhiteHandicapBonusRule::Zero => {}
                }
            }
            status.advantage = if mirroring == Player::Black {
                black_extra - game.komi
            } else {
                game.komi - black_extra
            };
        }
        if xs >= 7 && ys >= 7 {
            status.center_symmetry_error = center_symmetry_error(game, status.mirroring);
        }
        status
    }
}

/// The 7x7 centre's asymmetry: an opponent stone of the mirroring player
/// whose reflection is not theirs counts 1; once anything counts, each
/// unanswered stone of the mirroring player adds 0.2; from 1 on the sum
/// `e` becomes `e (1 + e) / 2`.
fn center_symmetry_error<C: Fn(Loc) -> Color>(
    game: &MirrorGame<'_, C>,
    mirroring: Option<Player>,
) -> f64 {
    let (xs, ys) = (game.x_size, game.y_size);
    // KataGo compares with the colours of `mirroringPla` even when nobody
    // mirrors (then `C_EMPTY`, whose opponent is the wall colour).
    let (mirror_color, opp_color) = match mirroring {
        Some(p) => (p.color(), p.opp().color()),
        None => (Color::Empty, Color::Wall),
    };
    let (half_x, half_y) = ((xs / 2) as i64, (ys / 2) as i64);
    let mut error = 0.0;
    let mut unmatched = 0u32;
    for dy in -3..=3i64 {
        for dx in -3..=3i64 {
            let loc = Loc::from_xy((half_x + dx) as usize, (half_y + dy) as usize, xs);
            let Move::Play(mirror) = mirror_move(Move::Play(loc), xs, ys) else {
                continue;
            };
            if loc == mirror {
                continue;
            }
            let (c0, c1) = ((game.color_at)(loc), (game.color_at)(mirror));
            if c0 == opp_color && c1 != mirror_color {
                error += 1.0;
            }
            if c0 == mirror_color && c1 == Color::Empty {
                unmatched += 1;
            }
        }
    }
    if error > 0.0 {
        error += 0.2 * f64::from(unmatched);
    }
    if error >= 1.0 {
        error = 0.5 * error * (1.0 + error);
    }
    error
}

/// What [`MirrorStatus::detect`] reads about the root's game.
pub struct MirrorGame<'a, C: Fn(Loc) -> Color> {
    /// Every move of the game so far, with its player.
    pub moves: &'a [(Move, Player)],
    /// The player to move at the root.
    pub root_pla: Player,
    pub x_size: usize,
    pub y_size: usize,
    /// Area scoring (the player with the last move gets a point more).
    pub area_scoring: bool,
    /// KataGo's `computeNumHandicapStones`.
    pub handicap_stones: u32,
    pub white_handicap_bonus: WhiteHandicapBonusRule,
    pub komi: f64,
    /// The root board's colours.
    pub color_at: C,
}

/// The point reflection of a move through the board's centre (a pass
/// stays a pass).
pub fn mirror_move(mv: Move, x_size: usize, y_size: usize) -> Move {
    match mv {
        Move::Pass => Move::Pass,
        Move::Play(loc) => {
            let (x, y) = loc.xy(x_size);
            Move::Play(Loc::from_xy(x_size - 1 - x, y_size - 1 - y, x_size))
        }
    }
}

/// The centre point of a board with odd sides.
pub fn center_loc(x_size: usize, y_size: usize) -> Option<Loc> {
    (x_size % 2 == 1 && y_size % 2 == 1).then(|| Loc::from_xy(x_size / 2, y_size / 2, x_size))
}

/// Squared distance between two points given as `(x, y)`.
pub(super) fn distance_sq(a: (i64, i64), b: (i64, i64)) -> i64 {
    (a.0 - b.0).pow(2) + (a.1 - b.1).pow(2)
}

/// A point's `(x, y)` as signed numbers.
pub(super) fn xy(loc: Loc, x_size: usize) -> (i64, i64) {
    let (x, y) = loc.xy(x_size);
    (x as i64, y as i64)
}

/// Whether moves `path[1], path[3], ...` (moves below the root) each
/// mirror the move before them, leaving out the last `skip_recent` moves
/// (KataGo's `isMirroringSinceSearchStart`).
pub fn mirroring_since_root(
    path: &[Move],
    skip_recent: usize,
    x_size: usize,
    y_size: usize,
) -> bool {
    let mut i = 1;
    while i + skip_recent < path.len() {
        if path[i] != mirror_move(path[i - 1], x_size, y_size) {
            return false;
        }
        i += 2;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(x: usize, y: usize) -> Move {
        Move::Play(Loc::from_xy(x, y, 19))
    }

    #[test]
    fn advantage_counts_handicap_as_katago() {
        let moves: Vec<(Move, Player)> = (0..14)
            .flat_map(|i| {
                [
                    (play(i, 0), Player::Black),
                    (play(18 - i, 18), Player::White),
                ]
            })
            .collect();
        let status = |area_scoring, handicap_stones, white_handicap_bonus| {
            MirrorStatus::detect(&MirrorGame {
                moves: &moves,
                root_pla: Player::Black,
                x_size: 19,
                y_size: 19,
                area_scoring,
                handicap_stones,
                white_handicap_bonus,
                komi: 0.5,
                color_at: |_| Color::Empty,
            })
            .advantage
        };
        // Two stones, area: one extra point, but with an even number of
        // handicap stones White gets the last move; bonus N takes two.
        assert_eq!(status(true, 2, WhiteHandicapBonusRule::N), 0.5 + 1.0);
        assert_eq!(status(true, 2, WhiteHandicapBonusRule::Zero), 0.5 - 1.0);
        // Three stones: two extra points and the last move.
        assert_eq!(
            status(true, 3, WhiteHandicapBonusRule::NMinusOne),
            0.5 - 1.0
        );
        assert_eq!(status(false, 3, WhiteHandicapBonusRule::N), 0.5 + 3.0);
    }

    #[test]
    fn center_symmetry_error_as_katago() {
        let at = |stones: &'static [(usize, usize, Color)]| {
            move |loc: Loc| {
                stones
                    .iter()
                    .find(|&&(x, y, _)| Loc::from_xy(x, y, 9) == loc)
                    .map_or(Color::Empty, |s| s.2)
            }
        };
        let game = |color_at| MirrorGame {
            moves: &[],
            root_pla: Player::Black,
            x_size: 9,
            y_size: 9,
            area_scoring: true,
            handicap_stones: 0,
            white_handicap_bonus: WhiteHandicapBonusRule::Zero,
            komi: 7.5,
            color_at,
        };
        let white = Some(Player::White);
        // A Black stone answered by White's reflection: symmetric.
        let g = game(at(&[(3, 3, Color::Black), (5, 5, Color::White)]));
        assert_eq!(center_symmetry_error(&g, white), 0.0);
        // An unanswered Black stone counts 1, an unanswered White one 0.2
        // more, and 1.2 becomes 1.2 x 2.2 / 2.
        let g = game(at(&[(3, 3, Color::Black), (4, 2, Color::White)]));
        assert!((center_symmetry_error(&g, white) - 1.32).abs() < 1e-12);
        // Unanswered White stones alone count nothing; outside the 7x7
        // centre nothing counts.
        let g = game(at(&[(4, 2, Color::White), (0, 0, Color::Black)]));
        assert_eq!(center_symmetry_error(&g, white), 0.0);
    }

    #[test]
    fn mirror_helpers() {
        assert_eq!(mirror_move(play(3, 4), 19, 19), play(15, 14));
        assert_eq!(mirror_move(Move::Pass, 19, 19), Move::Pass);
        assert_eq!(center_loc(19, 19), Some(Loc::from_xy(9, 9, 19)));
        assert_eq!(center_loc(19, 18), None);
        let (a, b) = (play(3, 4), play(15, 14));
        assert!(mirroring_since_root(&[a, b, b, a, play(0, 0)], 0, 19, 19));
        assert!(!mirroring_since_root(&[a, b, b, play(0, 0)], 0, 19, 19));
        // The last `skip_recent` moves are not looked at.
        assert!(mirroring_since_root(&[a, b, b, play(0, 0)], 1, 19, 19));
    }
}
