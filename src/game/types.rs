//! Small `Copy` types shared by the whole engine: [`Player`], [`Color`],
//! [`Loc`], [`Move`], and board coordinates in GTP (`Q16`, `AA5`) and
//! machine (`(x,y)`) form.
//!
//! A [`Loc`] indexes a board array padded with a wall on every side, as in
//! KataGo: `loc = (x + 1) + (y + 1) * (x_size + 1)`, with `y = 0` the top
//! row. Neighbours are `loc ± 1` and `loc ± (x_size + 1)`, so the hot loops
//! need no bounds checks. A `Loc` only means something together with the
//! board width it was made for.

use std::fmt;

/// Largest supported board edge (KataGo's big-board build limit; KataGo
/// needs a recompile above 19). Storage is sized by each board, not by this
/// maximum (see [`crate::game::Board`]), so a large maximum costs nothing on
/// 19x19.
pub const MAX_LEN: usize = 37;
/// Smallest supported board edge.
pub const MIN_LEN: usize = 2;
/// Length of the padded per-point arrays of a board of the largest size
/// (static tables and non-hot scratch only; boards size by their game).
pub const MAX_ARR_SIZE: usize = (MAX_LEN + 1) * (MAX_LEN + 2) + 1;
/// Most playable points on a board.
pub const MAX_PLAY_SIZE: usize = MAX_LEN * MAX_LEN;

/// Length of the padded per-point arrays of an `x_size` by `y_size` board:
/// one wall row above, one below plus the final corner, and one wall column
/// shared between rows (see [`Loc`]).
#[inline]
pub const fn arr_size(x_size: usize, y_size: usize) -> usize {
    (x_size + 1) * (y_size + 2) + 1
}

/// One of the two players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Player {
    Black,
    White,
}

impl Player {
    /// Both players, black first.
    pub const BOTH: [Player; 2] = [Player::Black, Player::White];

    /// The other player.
    #[inline]
    pub fn opp(self) -> Player {
        match self {
            Player::Black => Player::White,
            Player::White => Player::Black,
        }
    }

    /// 0 for black, 1 for white: an index for per-player arrays.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stone colour of this player.
    #[inline]
    pub fn color(self) -> Color {
        match self {
            Player::Black => Color::Black,
            Player::White => Color::White,
        }
    }

    /// `B` or `W`, as in SGF and KataGo's JSON.
    pub fn letter(self) -> char {
        match self {
            Player::Black => 'B',
            Player::White => 'W',
        }
    }

    /// Parses `b`, `black`, `w`, `white` in any case (GTP colours).
    pub fn parse(s: &str) -> Option<Player> {
        match s.to_ascii_lowercase().as_str() {
            "b" | "black" => Some(Player::Black),
            "w" | "white" => Some(Player::White),
            _ => None,
        }
    }
}

/// A `Player` that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a player: {0:?} (expected b, black, w or white)")]
pub struct PlayerParseError(pub String);

impl std::str::FromStr for Player {
    type Err = PlayerParseError;

    /// As [`Player::parse`], with a typed error.
    fn from_str(s: &str) -> Result<Player, PlayerParseError> {
        Player::parse(s).ok_or_else(|| PlayerParseError(s.to_string()))
    }
}

/// One value per player, indexed by [`Player`] (black first), so per-player
/// state needs no `pla.index()` arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ByPlayer<T>(pub [T; 2]);

impl<T> ByPlayer<T> {
    /// Black's and White's values.
    pub const fn new(black: T, white: T) -> ByPlayer<T> {
        ByPlayer([black, white])
    }

    /// The same value for both players.
    pub fn both(v: T) -> ByPlayer<T>
    where
        T: Clone,
    {
        ByPlayer([v.clone(), v])
    }

    /// `(player, value)` pairs, black first.
    pub fn iter(&self) -> impl Iterator<Item = (Player, &T)> {
        Player::BOTH.into_iter().zip(self.0.iter())
    }
}

impl<T> std::ops::Index<Player> for ByPlayer<T> {
    type Output = T;
    #[inline]
    fn index(&self, p: Player) -> &T {
        &self.0[p.index()]
    }
}

impl<T> std::ops::IndexMut<Player> for ByPlayer<T> {
    #[inline]
    fn index_mut(&mut self, p: Player) -> &mut T {
        &mut self.0[p.index()]
    }
}

impl std::ops::Not for Player {
    type Output = Player;
    #[inline]
    fn not(self) -> Player {
        self.opp()
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Player::Black => "Black",
            Player::White => "White",
        })
    }
}

/// What occupies a point of the padded board array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Color {
    #[default]
    Empty = 0,
    Black = 1,
    White = 2,
    /// Off the board (the padding around it).
    Wall = 3,
}

impl Color {
    /// The player owning a stone of this colour, if it is a stone.
    #[inline]
    pub fn player(self) -> Option<Player> {
        match self {
            Color::Black => Some(Player::Black),
            Color::White => Some(Player::White),
            _ => None,
        }
    }

    /// `.`, `X` (black), `O` (white) or `#`, as KataGo prints boards.
    pub fn symbol(self) -> char {
        match self {
            Color::Empty => '.',
            Color::Black => 'X',
            Color::White => 'O',
            Color::Wall => '#',
        }
    }
}

impl From<Player> for Color {
    fn from(p: Player) -> Color {
        p.color()
    }
}

/// A point of the padded board array (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc(pub u16);

impl Loc {
    /// The location of `(x, y)` (`y = 0` is the top row) on a board `x_size` wide.
    #[inline]
    pub fn from_xy(x: usize, y: usize, x_size: usize) -> Loc {
        Loc(((x + 1) + (y + 1) * (x_size + 1)) as u16)
    }

    /// Column, 0 at the left.
    #[inline]
    pub fn x(self, x_size: usize) -> usize {
        (self.0 as usize % (x_size + 1)) - 1
    }

    /// Row, 0 at the top.
    #[inline]
    pub fn y(self, x_size: usize) -> usize {
        (self.0 as usize / (x_size + 1)) - 1
    }

    /// `(x, y)`.
    #[inline]
    pub fn xy(self, x_size: usize) -> (usize, usize) {
        (self.x(x_size), self.y(x_size))
    }

    /// The array index.
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }

    /// Parses a vertex as [`Move::parse`] does; a pass is an error
    /// ([`CoordErrorKind::Pass`]). A `Loc` depends on the board size, so
    /// this takes the size instead of being `FromStr`.
    pub fn parse(s: &str, x_size: usize, y_size: usize) -> Result<Loc, CoordError> {
        match Move::parse(s, x_size, y_size)? {
            Move::Play(loc) => Ok(loc),
            Move::Pass => Err(CoordError {
                text: s.to_string(),
                kind: CoordErrorKind::Pass,
            }),
        }
    }
}

/// A move: a stone on a point, or a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Move {
    Pass,
    Play(Loc),
}

impl Move {
    /// The point played, if any.
    #[inline]
    pub fn loc(self) -> Option<Loc> {
        match self {
            Move::Pass => None,
            Move::Play(loc) => Some(loc),
        }
    }

    /// Whether this is a pass.
    #[inline]
    pub fn is_pass(self) -> bool {
        self == Move::Pass
    }

    /// Index of this move in a policy vector: `y * x_size + x` (`y = 0` the
    /// top row), pass last at `x_size * y_size`, as KataGo's network.
    #[inline]
    pub fn policy_index(self, x_size: usize, y_size: usize) -> usize {
        match self {
            Move::Pass => x_size * y_size,
            Move::Play(loc) => {
                let (x, y) = loc.xy(x_size);
                y * x_size + x
            }
        }
    }

    /// The move at a policy index (the inverse of [`Move::policy_index`];
    /// any index past the board is a pass).
    #[inline]
    pub fn from_policy_index(i: usize, x_size: usize, y_size: usize) -> Move {
        if i >= x_size * y_size {
            Move::Pass
        } else {
            Move::Play(Loc::from_xy(i % x_size, i / x_size, x_size))
        }
    }

    /// The move in GTP form: `pass`, `Q16`, or `AA5` past the 25th column.
    pub fn to_gtp(self, x_size: usize, y_size: usize) -> String {
        match self {
            Move::Pass => "pass".to_string(),
            Move::Play(loc) => {
                let (x, y) = loc.xy(x_size);
                let mut s = String::new();
                if x >= 25 {
                    s.push(COLUMN_LETTERS[x / 25 - 1] as char);
                }
                s.push(COLUMN_LETTERS[x % 25] as char);
                s.push_str(&(y_size - y).to_string());
                s
            }
        }
    }

    /// The move in machine form: `pass` or `(x,y)` with `y = 0` at the top.
    pub fn to_xy_string(self, x_size: usize) -> String {
        match self {
            Move::Pass => "pass".to_string(),
            Move::Play(loc) => {
                let (x, y) = loc.xy(x_size);
                format!("({x},{y})")
            }
        }
    }

    /// Parses a vertex as KataGo does: `pass` (or `pss`), GTP letters and
    /// number in any case (`q16`, `AA5`), or `(x,y)`. Surrounding whitespace
    /// is ignored; anything off the board is an error.
    pub fn parse(s: &str, x_size: usize, y_size: usize) -> Result<Move, CoordError> {
        let err = |kind| CoordError {
            text: s.to_string(),
            kind,
        };
        let t = s.trim();
        if t.eq_ignore_ascii_case("pass") || t.eq_ignore_ascii_case("pss") {
            return Ok(Move::Pass);
        }
        let (x, y) = if let Some(inner) = t.strip_prefix('(') {
            let inner = inner.strip_suffix(')').ok_or(err(CoordErrorKind::Syntax))?;
            let (xs, ys) = inner.split_once(',').ok_or(err(CoordErrorKind::Syntax))?;
            let x: i64 = xs.trim().parse().map_err(|_| err(CoordErrorKind::Syntax))?;
            let y: i64 = ys.trim().parse().map_err(|_| err(CoordErrorKind::Syntax))?;
            (x, y)
        } else {
            let bytes = t.as_bytes();
            let letters = bytes.iter().take_while(|c| c.is_ascii_alphabetic()).count();
            let x = match letters {
                1 => column_of_letter(bytes[0]).ok_or(err(CoordErrorKind::Syntax))?,
                2 => {
                    let hi = column_of_letter(bytes[0]).ok_or(err(CoordErrorKind::Syntax))?;
                    let lo = column_of_letter(bytes[1]).ok_or(err(CoordErrorKind::Syntax))?;
                    (hi + 1) * 25 + lo
                }
                _ => return Err(err(CoordErrorKind::Syntax)),
            };
            let digits = &t[letters..];
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return Err(err(CoordErrorKind::Syntax));
            }
            let row: i64 = digits.parse().map_err(|_| err(CoordErrorKind::OffBoard))?;
            (x, y_size as i64 - row)
        };
        if x < 0 || y < 0 || x >= x_size as i64 || y >= y_size as i64 {
            return Err(err(CoordErrorKind::OffBoard));
        }
        Ok(Move::Play(Loc::from_xy(x as usize, y as usize, x_size)))
    }
}

/// GTP column letters: `A` to `Z` without `I`.
const COLUMN_LETTERS: &[u8; 25] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

fn column_of_letter(c: u8) -> Option<i64> {
    let c = c.to_ascii_uppercase();
    match c {
        b'A'..=b'H' => Some((c - b'A') as i64),
        b'J'..=b'Z' => Some((c - b'A') as i64 - 1),
        _ => None,
    }
}

/// Why a vertex could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordErrorKind {
    /// Not a vertex at all.
    Syntax,
    /// A vertex, but not on this board.
    OffBoard,
    /// A pass where a point was needed.
    Pass,
}

/// A vertex that could not be parsed, with the text that was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {text:?}", match .kind { CoordErrorKind::Syntax => "not a vertex", CoordErrorKind::OffBoard => "vertex is off the board", CoordErrorKind::Pass => "a pass is not a point" })]
pub struct CoordError {
    pub text: String,
    pub kind: CoordErrorKind,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn gtp_coordinates_follow_katago() {
        let m = Move::parse("Q16", 19, 19).unwrap();
        assert_eq!(m, Move::Play(Loc::from_xy(15, 3, 19)));
        assert_eq!(m.to_gtp(19, 19), "Q16");
        // (text, board size, the point it names as (x, y))
        let points = [
            ("a1", 19, (0, 18)),
            ("J19", 19, (8, 0)),
            ("(3,4)", 9, (3, 4)),
            ("Z25", 25, (24, 0)),
        ];
        for (text, size, xy) in points {
            let m = Move::parse(text, size, size).unwrap();
            assert_eq!(m.loc().unwrap().xy(size), xy, "{text}");
        }
        assert_eq!(Move::parse(" PASS ", 9, 9).unwrap(), Move::Pass);
        let errors = [
            ("I5", CoordErrorKind::Syntax),
            ("T1", CoordErrorKind::OffBoard),
            ("A0", CoordErrorKind::OffBoard),
            ("A10", CoordErrorKind::OffBoard),
        ];
        for (text, kind) in errors {
            assert_eq!(Move::parse(text, 9, 9).unwrap_err().kind, kind, "{text}");
        }
    }

    #[test]
    fn extended_columns_parse_like_katago() {
        // KataGo: x = (first + 1) * 25 + second.
        assert_eq!(
            Move::parse("AA1", 30, 3).unwrap().loc().unwrap().xy(30),
            (25, 2)
        );
        assert_eq!(
            Move::parse("AA1", 25, 3).unwrap_err().kind,
            CoordErrorKind::OffBoard
        );
        assert_eq!(Move::Play(Loc::from_xy(26, 0, 30)).to_gtp(30, 3), "AB3");
    }

    #[test]
    fn small_types_parse_and_index() {
        assert_eq!("W".parse::<Player>(), Ok(Player::White));
        assert_eq!("black".parse::<Player>(), Ok(Player::Black));
        assert!("x".parse::<Player>().is_err());
        assert_eq!(
            Loc::parse("pass", 9, 9).unwrap_err().kind,
            CoordErrorKind::Pass
        );
        assert_eq!(Loc::parse("A9", 9, 9), Ok(Loc::from_xy(0, 0, 9)));
        let mut bp = ByPlayer::new(1, 2);
        bp[Player::White] += 5;
        assert_eq!((bp[Player::Black], bp[Player::White]), (1, 7));
        assert_eq!(Move::Pass.policy_index(9, 7), 63);
        assert_eq!(Move::Play(Loc::from_xy(2, 1, 9)).policy_index(9, 7), 11);
    }

    proptest! {
        #[test]
        fn policy_index_round_trips(xs in 2usize..=25, ys in 2usize..=25, i in 0usize..700) {
            let i = i % (xs * ys + 1);
            prop_assert_eq!(Move::from_policy_index(i, xs, ys).policy_index(xs, ys), i);
        }

        #[test]
        fn vertex_parser_never_panics(s in "\\PC{0,12}", xs in 2usize..=25, ys in 2usize..=25) {
            let _ = Move::parse(&s, xs, ys);
        }

        #[test]
        fn gtp_and_xy_round_trip(xs in 2usize..=25, ys in 2usize..=25, fx in 0.0f64..1.0, fy in 0.0f64..1.0) {
            let x = ((xs as f64) * fx) as usize;
            let y = ((ys as f64) * fy) as usize;
            let m = Move::Play(Loc::from_xy(x, y, xs));
            prop_assert_eq!(Move::parse(&m.to_gtp(xs, ys), xs, ys).unwrap(), m);
            prop_assert_eq!(Move::parse(&m.to_xy_string(xs), xs, ys).unwrap(), m);
        }
    }
}
