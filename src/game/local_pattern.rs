//! Hashes of the local shape around a move, with KataGo 1.17.2's keys
//! (`search/localpattern.cpp` and `PatternBonusTable::getHash` in
//! `search/patternbonustable.cpp`): the 9x9 window centred on the move
//! (cut at the board's edges), each stone's colour and whether its chain is
//! in atari, the player moving, the move's point and the board size.
//!
//! The keys are drawn at compile time from KataGo's generator seeded with
//! KataGo's strings, so a shape hashes to the same 128 bits as in KataGo:
//! the pattern bonus table built from SGFs ([`crate::search`]'s
//! `avoidSgfPattern*`) matches what KataGo's would.

use super::board::Board;
use super::katago_rand::KataRand;
use super::types::{Color, Loc, Move, Player, MAX_ARR_SIZE};
use super::zobrist::{next_hash, Hash128, ZOBRIST};

/// Width and height of the window (KataGo's `patternHasher.init(9,9,...)`).
const SIZE: usize = 9;
const RADIUS: i64 = (SIZE / 2) as i64;
/// KataGo's `NUM_BOARD_COLORS`: empty, black, white, wall.
const NUM_COLORS: usize = 4;

struct PatternKeys {
    /// Colour `c` at window point `i`: `[c * SIZE * SIZE + i]`.
    local: [Hash128; NUM_COLORS * SIZE * SIZE],
    /// The player moving, by KataGo colour number.
    player: [Hash128; NUM_COLORS],
    /// A stone in atari at window point `i`.
    atari: [Hash128; SIZE * SIZE],
    /// The move's point (KataGo's `ZOBRIST_MOVE_LOCS`).
    move_loc: [Hash128; MAX_ARR_SIZE],
}

impl PatternKeys {
    /// KataGo's draws, in its order.
    const fn generate() -> PatternKeys {
        let z = Hash128(0);
        let mut k = PatternKeys {
            local: [z; NUM_COLORS * SIZE * SIZE],
            player: [z; NUM_COLORS],
            atari: [z; SIZE * SIZE],
            move_loc: [z; MAX_ARR_SIZE],
        };
        let mut rand = KataRand::new(b"PatternBonusTable ZOBRIST STUFF");
        let mut i = 0;
        while i < NUM_COLORS * SIZE * SIZE {
            k.local[i] = next_hash(&mut rand);
            i += 1;
        }
        i = 0;
        while i < NUM_COLORS {
            k.player[i] = next_hash(&mut rand);
            i += 1;
        }
        i = 0;
        while i < SIZE * SIZE {
            k.atari[i] = next_hash(&mut rand);
            i += 1;
        }
        // KataGo reseeds here so that these keys do not depend on its
        // largest compiled board: loc i gets the i-th draw on any build.
        let mut rand = KataRand::new(
            b"Reseed PatternBonusTable zobrist so that zobrists don't change when Board::MAX_ARR_SIZE changes",
        );
        i = 0;
        while i < MAX_ARR_SIZE {
            k.move_loc[i] = next_hash(&mut rand);
            i += 1;
        }
        k
    }
}

static KEYS: PatternKeys = PatternKeys::generate();

/// One of the eight symmetries of a square, as KataGo numbers them
/// (`SymmetryHelpers`: bit 0 flips y, bit 1 flips x, bit 2 transposes,
/// applied in that order).
fn sym_xy(x: usize, y: usize, x_size: usize, y_size: usize, symmetry: u8) -> (usize, usize) {
    let x = if symmetry & 2 != 0 { x_size - 1 - x } else { x };
    let y = if symmetry & 1 != 0 { y_size - 1 - y } else { y };
    if symmetry & 4 != 0 {
        (y, x)
    } else {
        (x, y)
    }
}

/// The hash of `pla` playing `mv` on `board` (the board before the move),
/// seen through `symmetry` (0..8) and with colours swapped when
/// `flip_colors`: KataGo's `getHashWithSym` with the move-point and
/// board-size keys `PatternBonusTable::addBonus` adds. `None` for a pass
/// and for a ko capture (KataGo's zero hash: such moves get no bonus, so a
/// long ko fight does not pile up penalties).
pub fn pattern_hash_with_sym(
    board: &Board,
    pla: Player,
    mv: Move,
    symmetry: u8,
    flip_colors: bool,
) -> Option<Hash128> {
    let loc = mv.loc()?;
    if board.would_be_ko_capture(loc, pla) {
        return None;
    }
    let (xs, ys) = (board.x_size(), board.y_size());
    let flip = |p: Player| if flip_colors { p.opp() } else { p };
    let mut hash = KEYS.player[flip(pla).color() as usize];
    let (x, y) = loc.xy(xs);
    let transpose = symmetry & 4 != 0;
    for dy in -RADIUS..=RADIUS {
        for dx in -RADIUS..=RADIUS {
            let (px, py) = (x as i64 + dx, y as i64 + dy);
            if px < 0 || py < 0 || px >= xs as i64 || py >= ys as i64 {
                continue;
            }
            let at = Loc::from_xy(px as usize, py as usize, xs);
            let (wx, wy) = sym_xy(
                (dx + RADIUS) as usize,
                (dy + RADIUS) as usize,
                SIZE,
                SIZE,
                symmetry,
            );
            let window = wy * SIZE + wx;
            let color = match board.get(at) {
                Color::Black => flip(Player::Black).color(),
                Color::White => flip(Player::White).color(),
                other => other,
            };
            hash ^= KEYS.local[color as usize * SIZE * SIZE + window];
            if color != Color::Empty && board.num_liberties(at) == 1 {
                hash ^= KEYS.atari[window];
            }
        }
    }
    let (sx, sy) = sym_xy(x, y, xs, ys, symmetry);
    let (sym_xs, sym_ys) = if transpose { (ys, xs) } else { (xs, ys) };
    hash ^= KEYS.move_loc[Loc::from_xy(sx, sy, sym_xs).idx()];
    hash ^= ZOBRIST.size_x[sym_xs];
    hash ^= ZOBRIST.size_y[sym_ys];
    Some(hash)
}

/// The hash of `pla` playing `mv` on `board` as it stands (KataGo's
/// `PatternBonusTable::getHash`): [`pattern_hash_with_sym`] with the
/// identity.
pub fn pattern_hash(board: &Board, pla: Player, mv: Move) -> Option<Hash128> {
    pattern_hash_with_sym(board, pla, mv, 0, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_with(x_size: usize, y_size: usize, stones: &[(Player, usize, usize)]) -> Board {
        let mut b = Board::new(x_size, y_size).expect("board size");
        for &(p, x, y) in stones {
            b.play(Move::Play(Loc::from_xy(x, y, x_size)), p);
        }
        b
    }

    #[test]
    fn every_symmetry_of_a_shape_hashes_as_the_shape_seen_that_way() {
        // A shape near a corner of a 9x11 board; transposing it needs the
        // 11x9 board.
        let stones = [
            (Player::Black, 2, 3),
            (Player::White, 3, 3),
            (Player::Black, 3, 2),
            (Player::White, 1, 1),
        ];
        let (xs, ys) = (9, 11);
        let board = board_with(xs, ys, &stones);
        let mv = Loc::from_xy(2, 2, xs);
        for sym in 0..8u8 {
            let transpose = sym & 4 != 0;
            let (sxs, sys) = if transpose { (ys, xs) } else { (xs, ys) };
            let moved: Vec<_> = stones
                .iter()
                .map(|&(p, x, y)| {
                    let (sx, sy) = sym_xy(x, y, xs, ys, sym);
                    (p, sx, sy)
                })
                .collect();
            let sym_board = board_with(sxs, sys, &moved);
            let (mx, my) = sym_xy(2, 2, xs, ys, sym);
            let direct = pattern_hash(
                &sym_board,
                Player::Black,
                Move::Play(Loc::from_xy(mx, my, sxs)),
            );
            let seen = pattern_hash_with_sym(&board, Player::Black, Move::Play(mv), sym, false);
            assert_eq!(direct, seen, "symmetry {sym}");
            assert!(direct.is_some());
        }
        // Swapping colours is the same shape with the other player moving.
        let swapped: Vec<_> = stones.iter().map(|&(p, x, y)| (p.opp(), x, y)).collect();
        let swapped_board = board_with(xs, ys, &swapped);
        assert_eq!(
            pattern_hash(&swapped_board, Player::White, Move::Play(mv)),
            pattern_hash_with_sym(&board, Player::Black, Move::Play(mv), 0, true)
        );
    }

    #[test]
    fn passes_and_ko_captures_have_no_hash_and_atari_changes_it() {
        let board = board_with(9, 9, &[]);
        assert_eq!(pattern_hash(&board, Player::Black, Move::Pass), None);
        // A ko: white E5 in black's mouth, black takes at F5.
        let ko = board_with(
            9,
            9,
            &[
                (Player::Black, 3, 4),
                (Player::Black, 4, 3),
                (Player::Black, 4, 5),
                (Player::White, 5, 3),
                (Player::White, 5, 5),
                (Player::White, 6, 4),
                (Player::White, 4, 4),
            ],
        );
        let take = Move::Play(Loc::from_xy(5, 4, 9));
        assert!(ko.would_be_ko_capture(Loc::from_xy(5, 4, 9), Player::Black));
        assert_eq!(pattern_hash(&ko, Player::Black, take), None);
        // Only the atari differs inside the window of a move at A5: white
        // E5's fourth neighbour F5 lies outside it.
        let w = (Player::White, 4, 4);
        let (above, below, right) = (
            (Player::Black, 4, 3),
            (Player::Black, 4, 5),
            (Player::Black, 5, 4),
        );
        let free = board_with(9, 9, &[w, above, below]);
        let atari = board_with(9, 9, &[w, above, below, right]);
        assert_eq!(atari.num_liberties(Loc::from_xy(4, 4, 9)), 1);
        let mv = Move::Play(Loc::from_xy(0, 4, 9));
        assert_ne!(
            pattern_hash(&free, Player::Black, mv),
            pattern_hash(&atari, Player::Black, mv)
        );
        // A stone outside the window, not touching it, changes nothing.
        let far = board_with(9, 9, &[w, above, below, (Player::Black, 7, 7)]);
        assert_eq!(
            pattern_hash(&free, Player::Black, mv),
            pattern_hash(&far, Player::Black, mv)
        );
    }
}
