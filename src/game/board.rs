//! The board: stones, chains with liberty counts, captures, simple ko and
//! the position hash.
//!
//! The layout follows KataGo's `Board` (`cpp/game/board.{h,cpp}`): a padded
//! array with a wall around the board (see [`Loc`]), every chain kept as a
//! circular linked list of its stones with one stone as its head, and the
//! stone and liberty counts stored at the head. The per-point arrays are
//! sized by the board's own size (`(x_size + 1) * (y_size + 2) + 1` points,
//! see [`super::types::arr_size`]), not by the largest supported size: a
//! 19x19 board holds 421 points (3.8 KB) whatever [`MAX_LEN`] is, and
//! [`Clone::clone_from`] copies into the existing buffers without
//! allocating, which is how the search resets its per-thread state for
//! every playout.
//!
//! The board knows only the simple ko rule and does not enforce turn order;
//! superko, the encore and scoring live in [`super::BoardHistory`].

use std::fmt;

use super::types::{arr_size, Color, Loc, Move, Player, MAX_ARR_SIZE, MAX_LEN, MIN_LEN};
use super::zobrist::{Hash128, ZOBRIST};

mod lookahead;
mod setup;
mod undo;

pub use setup::DiagramError;
pub use undo::MoveRecord;

/// A board size outside 2x2..37x37.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unsupported board size {x_size}x{y_size}: each side must be {MIN_LEN} to {MAX_LEN}")]
pub struct BoardSizeError {
    pub x_size: usize,
    pub y_size: usize,
}

/// A Go board of any size from 2x2 to 37x37, rectangular too (see the
/// module docs). Not `Copy`: clone it, or `clone_from` into a board kept for
/// reuse on hot paths.
pub struct Board {
    pub(crate) x_size: usize,
    pub(crate) y_size: usize,
    /// `x_size + 1`: the offset between vertically adjacent points.
    pub(crate) stride: usize,
    pub(crate) colors: Box<[Color]>,
    /// For stones: the head of their chain.
    pub(crate) chain_head: Box<[u16]>,
    /// For stones: the next stone of their chain (circular).
    pub(crate) next_in_chain: Box<[u16]>,
    /// At chain heads: the number of distinct liberties of the chain.
    pub(crate) chain_libs: Box<[u16]>,
    /// At chain heads: the number of stones of the chain.
    pub(crate) chain_size: Box<[u16]>,
    pub(crate) ko_loc: u16,
    pub(crate) pos_hash: Hash128,
    pub(crate) num_black_captures: u32,
    pub(crate) num_white_captures: u32,
}

/// No location (KataGo's `NULL_LOC`); index 0 is always wall.
const NULL: u16 = 0;

#[inline]
fn stone_key(loc: usize, c: Color) -> Hash128 {
    ZOBRIST.stone[loc][c as usize - 1]
}

impl Board {
    /// An empty board `x_size` wide and `y_size` high.
    pub fn new(x_size: usize, y_size: usize) -> Result<Board, BoardSizeError> {
        if !(MIN_LEN..=MAX_LEN).contains(&x_size) || !(MIN_LEN..=MAX_LEN).contains(&y_size) {
            return Err(BoardSizeError { x_size, y_size });
        }
        let stride = x_size + 1;
        let n = arr_size(x_size, y_size);
        let mut colors = vec![Color::Wall; n].into_boxed_slice();
        for y in 0..y_size {
            for x in 0..x_size {
                colors[(x + 1) + (y + 1) * stride] = Color::Empty;
            }
        }
        Ok(Board {
            x_size,
            y_size,
            stride,
            colors,
            chain_head: vec![NULL; n].into_boxed_slice(),
            next_in_chain: vec![NULL; n].into_boxed_slice(),
            chain_libs: vec![0; n].into_boxed_slice(),
            chain_size: vec![0; n].into_boxed_slice(),
            ko_loc: NULL,
            pos_hash: ZOBRIST.size_x[x_size] ^ ZOBRIST.size_y[y_size],
            num_black_captures: 0,
            num_white_captures: 0,
        })
    }

    /// Length of this board's padded per-point arrays (walls included):
    /// what a per-point scratch table for it needs.
    #[inline]
    pub(crate) fn arr_len(&self) -> usize {
        self.colors.len()
    }

    /// Width (number of columns).
    #[inline]
    pub fn x_size(&self) -> usize {
        self.x_size
    }

    /// Height (number of rows).
    #[inline]
    pub fn y_size(&self) -> usize {
        self.y_size
    }

    /// The location of `(x, y)`, `y = 0` at the top. Panics in debug builds
    /// if off the board.
    #[inline]
    pub fn loc(&self, x: usize, y: usize) -> Loc {
        debug_assert!(x < self.x_size && y < self.y_size);
        Loc::from_xy(x, y, self.x_size)
    }

    /// What is on `loc` (`Wall` for anything off the board, including
    /// indices past the array).
    #[inline]
    pub fn get(&self, loc: Loc) -> Color {
        self.colors.get(loc.idx()).copied().unwrap_or(Color::Wall)
    }

    /// Whether `loc` is a point of this board.
    #[inline]
    pub fn is_on_board(&self, loc: Loc) -> bool {
        self.get(loc) != Color::Wall
    }

    /// Every point of the board, row by row from the top left.
    pub fn locs(&self) -> Locs {
        Locs {
            next: self.stride + 1,
            x: 0,
            x_size: self.x_size,
            remaining: self.x_size * self.y_size,
        }
    }

    /// The four orthogonal neighbour offsets (up, left, right, down).
    #[inline]
    fn adj(&self, loc: usize) -> [usize; 4] {
        [loc - self.stride, loc - 1, loc + 1, loc + self.stride]
    }

    /// The four diagonal neighbours.
    #[inline]
    fn diag(&self, loc: usize) -> [usize; 4] {
        [
            loc - self.stride - 1,
            loc - self.stride + 1,
            loc + self.stride - 1,
            loc + self.stride + 1,
        ]
    }

    /// The point where a simple-ko recapture is banned right now, if any.
    #[inline]
    pub fn ko_loc(&self) -> Option<Loc> {
        (self.ko_loc != NULL).then_some(Loc(self.ko_loc))
    }

    /// Lifts the simple-ko ban.
    #[inline]
    pub fn clear_simple_ko_loc(&mut self) {
        self.ko_loc = NULL;
    }

    /// Sets a simple-ko ban directly (for positions set up from outside).
    pub fn set_simple_ko_loc(&mut self, loc: Option<Loc>) {
        self.ko_loc = loc.map_or(NULL, |l| l.0);
    }

    /// Zobrist hash of the stones and board size (no ko, no player).
    #[inline]
    pub fn pos_hash(&self) -> Hash128 {
        self.pos_hash
    }

    /// Position hash with the simple-ko ban and the player to move.
    pub fn sit_hash_with_simple_ko(&self, pla: Player) -> Hash128 {
        let mut h = self.pos_hash ^ ZOBRIST.player[pla.index()];
        if self.ko_loc != NULL {
            h ^= ZOBRIST.ko_loc[self.ko_loc as usize];
        }
        h
    }

    /// Black stones captured so far (including black suicides).
    pub fn num_black_captures(&self) -> u32 {
        self.num_black_captures
    }

    /// White stones captured so far (including white suicides).
    pub fn num_white_captures(&self) -> u32 {
        self.num_white_captures
    }

    /// The head stone of the chain at `loc` (a stone).
    #[inline]
    pub fn chain_head(&self, loc: Loc) -> Loc {
        Loc(self.chain_head[loc.idx()])
    }

    /// The next stone of the chain at `loc` (a stone); following it goes
    /// round the whole chain back to `loc`.
    #[inline]
    pub fn next_in_chain(&self, loc: Loc) -> Loc {
        Loc(self.next_in_chain[loc.idx()])
    }

    /// Liberties of the chain at `loc`, which must hold a stone.
    #[inline]
    pub fn num_liberties(&self, loc: Loc) -> usize {
        self.libs(loc.idx()) as usize
    }

    /// Stones in the chain at `loc`, which must hold a stone.
    #[inline]
    pub fn chain_size(&self, loc: Loc) -> usize {
        self.chain_size[self.chain_head[loc.idx()] as usize] as usize
    }

    /// The stones of the chain at `loc` (a stone).
    pub fn chain_stones(&self, loc: Loc) -> impl Iterator<Item = Loc> + '_ {
        let start = loc.0;
        let mut cur = Some(start);
        std::iter::from_fn(move || {
            let c = cur?;
            let next = self.next_in_chain[c as usize];
            cur = (next != start).then_some(next);
            Some(Loc(c))
        })
    }

    #[inline]
    fn libs(&self, loc: usize) -> u16 {
        self.chain_libs[self.chain_head[loc] as usize]
    }

    /// The on-board points orthogonally next to `loc`.
    pub fn adjacent_locs(&self, loc: Loc) -> impl Iterator<Item = Loc> + '_ {
        self.adj(loc.idx())
            .into_iter()
            .filter(|&a| self.colors[a] != Color::Wall)
            .map(|a| Loc(a as u16))
    }

    /// Empty points orthogonally next to `loc`.
    pub fn num_immediate_liberties(&self, loc: Loc) -> usize {
        self.adj(loc.idx())
            .iter()
            .filter(|&&a| self.colors[a] == Color::Empty)
            .count()
    }

    /// Stones on the board.
    pub fn num_stones(&self) -> usize {
        self.locs()
            .filter(|&l| matches!(self.colors[l.idx()], Color::Black | Color::White))
            .count()
    }

    /// Stones of `pla` on the board.
    pub fn num_stones_of(&self, pla: Player) -> usize {
        let c = pla.color();
        self.locs().filter(|&l| self.colors[l.idx()] == c).count()
    }

    /// Whether the board has no stones.
    pub fn is_empty(&self) -> bool {
        self.locs().all(|l| self.colors[l.idx()] == Color::Empty)
    }

    // ---------------------------------------------------------------
    // Legality

    /// Whether a `pla` stone on the empty point `loc` would have no
    /// liberties after captures (single- or multi-stone suicide).
    pub fn is_suicide(&self, loc: Loc, pla: Player) -> bool {
        self.is_suicide_idx(loc.idx(), pla)
    }

    #[inline]
    fn is_suicide_idx(&self, loc: usize, pla: Player) -> bool {
        // When multi-stone suicide is illegal, every suicide is illegal, so
        // the rule check with `multi == false` is exactly the suicide test.
        self.is_illegal_suicide_idx(loc, pla, false)
    }

    /// Whether `pla` on `loc` would be a suicide the rules forbid: any
    /// suicide when `multi_stone_suicide_legal` is false, otherwise only a
    /// lone stone's suicide (always illegal in KataGo).
    pub fn is_illegal_suicide(
        &self,
        loc: Loc,
        pla: Player,
        multi_stone_suicide_legal: bool,
    ) -> bool {
        self.is_illegal_suicide_idx(loc.idx(), pla, multi_stone_suicide_legal)
    }

    fn is_illegal_suicide_idx(&self, loc: usize, pla: Player, multi: bool) -> bool {
        let (pc, oc) = (pla.color(), pla.opp().color());
        for a in self.adj(loc) {
            let c = self.colors[a];
            if c == Color::Empty {
                return false;
            } else if c == pc {
                if multi || self.libs(a) > 1 {
                    return false;
                }
            } else if c == oc && self.libs(a) == 1 {
                return false;
            }
        }
        true
    }

    /// Whether `loc` is the simple-ko banned point.
    #[inline]
    pub fn is_ko_banned(&self, loc: Loc) -> bool {
        self.ko_loc != NULL && loc.0 == self.ko_loc
    }

    /// Whether `pla` may play `mv`, ignoring the simple-ko ban.
    pub fn is_legal_ignoring_ko(
        &self,
        mv: Move,
        pla: Player,
        multi_stone_suicide_legal: bool,
    ) -> bool {
        match mv {
            Move::Pass => true,
            Move::Play(loc) => {
                self.get(loc) == Color::Empty
                    && !self.is_illegal_suicide_idx(loc.idx(), pla, multi_stone_suicide_legal)
            }
        }
    }

    /// Whether `pla` may play `mv` under the simple ko rule.
    #[inline]
    pub fn is_legal(&self, mv: Move, pla: Player, multi_stone_suicide_legal: bool) -> bool {
        match mv {
            Move::Pass => true,
            Move::Play(loc) => {
                self.get(loc) == Color::Empty
                    && !self.is_ko_banned(loc)
                    && !self.is_illegal_suicide_idx(loc.idx(), pla, multi_stone_suicide_legal)
            }
        }
    }

    /// Whether the empty point `loc` is a simple eye of `pla`: all
    /// neighbours are `pla` stones or wall and the opponent holds fewer than
    /// two diagonals (none on the edge).
    pub fn is_simple_eye(&self, loc: Loc, pla: Player) -> bool {
        let loc = loc.idx();
        if self.colors[loc] != Color::Empty {
            return false;
        }
        let pc = pla.color();
        let mut against_wall = false;
        for a in self.adj(loc) {
            match self.colors[a] {
                Color::Wall => against_wall = true,
                c if c != pc => return false,
                _ => {}
            }
        }
        let oc = pla.opp().color();
        let opp_corners = self
            .diag(loc)
            .iter()
            .filter(|&&d| self.colors[d] == oc)
            .count();
        !(opp_corners >= 2 || (against_wall && opp_corners >= 1))
    }

    /// Whether `pla` on the empty point `loc` would capture something.
    pub fn would_be_capture(&self, loc: Loc, pla: Player) -> bool {
        let loc = loc.idx();
        if self.colors[loc] != Color::Empty {
            return false;
        }
        let oc = pla.opp().color();
        self.adj(loc)
            .iter()
            .any(|&a| self.colors[a] == oc && self.libs(a) == 1)
    }

    /// The single opponent stone `pla` would capture on `loc` in a ko mouth
    /// (all neighbours opponent or wall, exactly one capturable chain, of
    /// one stone), if any.
    pub fn ko_capture_loc(&self, loc: Loc, pla: Player) -> Option<Loc> {
        let l = loc.idx();
        if self.get(loc) != Color::Empty {
            return None;
        }
        let oc = pla.opp().color();
        let mut cap = NULL;
        for a in self.adj(l) {
            let c = self.colors[a];
            if c != Color::Wall && c != oc {
                return None;
            }
            if c == oc && self.libs(a) == 1 {
                if cap != NULL {
                    return None;
                }
                cap = a as u16;
            }
        }
        if cap == NULL || self.chain_size[self.chain_head[cap as usize] as usize] != 1 {
            return None;
        }
        Some(Loc(cap))
    }

    /// Whether `pla` on `loc` would capture a single stone in a ko mouth.
    pub fn would_be_ko_capture(&self, loc: Loc, pla: Player) -> bool {
        self.ko_capture_loc(loc, pla).is_some()
    }

    /// Whether a `pla` stone is orthogonally next to `loc`.
    pub fn is_adjacent_to_pla(&self, loc: Loc, pla: Player) -> bool {
        let c = pla.color();
        self.adj(loc.idx()).iter().any(|&a| self.colors[a] == c)
    }

    /// Whether a `pla` stone is orthogonally or diagonally next to `loc`.
    pub fn is_adjacent_or_diagonal_to_pla(&self, loc: Loc, pla: Player) -> bool {
        let c = pla.color();
        let l = loc.idx();
        self.adj(l)
            .iter()
            .chain(self.diag(l).iter())
            .any(|&a| self.colors[a] == c)
    }

    /// Whether `loc` touches the chain containing the stone `chain`.
    pub fn is_adjacent_to_chain(&self, loc: Loc, chain: Loc) -> bool {
        let c = self.get(chain);
        if c == Color::Empty || c == Color::Wall {
            return false;
        }
        let head = self.chain_head[chain.idx()];
        self.adj(loc.idx())
            .iter()
            .any(|&a| self.colors[a] == c && self.chain_head[a] == head)
    }

    // ---------------------------------------------------------------
    // Playing moves

    /// Plays `mv` for `pla` if legal under the simple ko rule; returns
    /// whether it was played.
    pub fn try_play(&mut self, mv: Move, pla: Player, multi_stone_suicide_legal: bool) -> bool {
        if self.is_legal(mv, pla, multi_stone_suicide_legal) {
            self.play(mv, pla);
            true
        } else {
            false
        }
    }

    /// Plays `mv` for `pla`, which must be legal apart from ko (a pass, or
    /// an empty point; suicide is resolved by removing the chain).
    #[inline]
    pub fn play(&mut self, mv: Move, pla: Player) {
        match mv {
            Move::Pass => self.ko_loc = NULL,
            Move::Play(loc) => {
                debug_assert_eq!(self.get(loc), Color::Empty);
                self.play_stone(loc.idx(), pla)
            }
        }
    }

    fn play_stone(&mut self, loc: usize, pla: Player) {
        let (pc, oc) = (pla.color(), pla.opp().color());
        self.colors[loc] = pc;
        self.pos_hash ^= stone_key(loc, pc);
        self.chain_size[loc] = 1;
        self.chain_libs[loc] = self.num_immediate_liberties(Loc(loc as u16)) as u16;
        self.chain_head[loc] = loc as u16;
        self.next_in_chain[loc] = loc as u16;

        let mut num_captured = 0u32;
        let mut possible_ko = NULL;
        let mut opp_seen = [NULL; 4];
        let mut nopp = 0;
        for a in self.adj(loc) {
            let c = self.colors[a];
            if c == pc {
                if self.chain_head[a] == self.chain_head[loc] {
                    continue;
                }
                self.chain_libs[self.chain_head[a] as usize] -= 1;
                self.merge_chains(a, loc);
            } else if c == oc {
                let h = self.chain_head[a];
                if opp_seen[..nopp].contains(&h) {
                    continue;
                }
                opp_seen[nopp] = h;
                nopp += 1;
                self.chain_libs[h as usize] -= 1;
                if self.chain_libs[h as usize] == 0 {
                    num_captured += self.remove_chain(a);
                    possible_ko = a as u16;
                }
            }
        }
        let head = self.chain_head[loc] as usize;
        self.ko_loc =
            if num_captured == 1 && self.chain_size[head] == 1 && self.chain_libs[head] == 1 {
                possible_ko
            } else {
                NULL
            };
        match pla {
            Player::Black => self.num_white_captures += num_captured,
            Player::White => self.num_black_captures += num_captured,
        }
        if self.chain_libs[head] == 0 {
            let n = self.remove_chain(loc);
            match pla {
                Player::Black => self.num_black_captures += n,
                Player::White => self.num_white_captures += n,
            }
        }
    }

    /// Whether the empty point `loc` touches the chain headed by `head`.
    #[inline]
    fn is_liberty_of(&self, loc: usize, head: u16) -> bool {
        let hc = self.colors[head as usize];
        self.adj(loc)
            .iter()
            .any(|&a| self.colors[a] == hc && self.chain_head[a] == head)
    }

    fn merge_chains(&mut self, loc1: usize, loc2: usize) {
        let mut h1 = self.chain_head[loc1];
        let mut h2 = self.chain_head[loc2];
        debug_assert_ne!(h1, h2);
        // Relabel the smaller chain.
        if self.chain_size[h1 as usize] < self.chain_size[h2 as usize] {
            std::mem::swap(&mut h1, &mut h2);
        }
        self.chain_size[h1 as usize] += self.chain_size[h2 as usize];
        let mut new_libs = 0;
        let mut loc = h2 as usize;
        loop {
            for a in self.adj(loc) {
                if self.colors[a] == Color::Empty && !self.is_liberty_of(a, h1) {
                    new_libs += 1;
                }
            }
            self.chain_head[loc] = h1;
            let next = self.next_in_chain[loc];
            if next == h2 {
                break;
            }
            loc = next as usize;
        }
        self.chain_libs[h1 as usize] += new_libs;
        // head1 -> head2 -> ... -> last2 -> next1 -> ... -> head1
        self.next_in_chain[loc] = self.next_in_chain[h1 as usize];
        self.next_in_chain[h1 as usize] = h2;
    }

    /// Removes the chain at `loc`; returns the number of stones removed.
    fn remove_chain(&mut self, loc: usize) -> u32 {
        let c = self.colors[loc];
        let oc = if c == Color::Black {
            Color::White
        } else {
            Color::Black
        };
        let mut n = 0;
        let mut cur = loc;
        loop {
            self.pos_hash ^= stone_key(cur, c);
            self.colors[cur] = Color::Empty;
            n += 1;
            self.change_surrounding_liberties(cur, oc, 1);
            cur = self.next_in_chain[cur] as usize;
            if cur == loc {
                break;
            }
        }
        n
    }

    /// Adds `delta` to the liberties of each distinct chain of colour `c`
    /// next to `loc`.
    fn change_surrounding_liberties(&mut self, loc: usize, c: Color, delta: i16) {
        let adj = self.adj(loc);
        let mut seen = [NULL; 4];
        let mut n = 0;
        for a in adj {
            if self.colors[a] == c {
                let h = self.chain_head[a];
                if !seen[..n].contains(&h) {
                    seen[n] = h;
                    n += 1;
                    let l = &mut self.chain_libs[h as usize];
                    *l = (*l as i16 + delta) as u16;
                }
            }
        }
    }
}

impl Clone for Board {
    fn clone(&self) -> Board {
        Board {
            x_size: self.x_size,
            y_size: self.y_size,
            stride: self.stride,
            colors: self.colors.clone(),
            chain_head: self.chain_head.clone(),
            next_in_chain: self.next_in_chain.clone(),
            chain_libs: self.chain_libs.clone(),
            chain_size: self.chain_size.clone(),
            ko_loc: self.ko_loc,
            pos_hash: self.pos_hash,
            num_black_captures: self.num_black_captures,
            num_white_captures: self.num_white_captures,
        }
    }

    /// Copies `source` into `self`'s buffers when both boards have the same
    /// size (no allocation: the search does this every playout), and
    /// reallocates only when the size differs.
    fn clone_from(&mut self, source: &Board) {
        // Destructured so that a new field cannot be forgotten here.
        let Board {
            x_size,
            y_size,
            stride,
            colors,
            chain_head,
            next_in_chain,
            chain_libs,
            chain_size,
            ko_loc,
            pos_hash,
            num_black_captures,
            num_white_captures,
        } = source;
        if self.colors.len() == colors.len() {
            self.colors.copy_from_slice(colors);
            self.chain_head.copy_from_slice(chain_head);
            self.next_in_chain.copy_from_slice(next_in_chain);
            self.chain_libs.copy_from_slice(chain_libs);
            self.chain_size.copy_from_slice(chain_size);
        } else {
            self.colors = colors.clone();
            self.chain_head = chain_head.clone();
            self.next_in_chain = next_in_chain.clone();
            self.chain_libs = chain_libs.clone();
            self.chain_size = chain_size.clone();
        }
        self.x_size = *x_size;
        self.y_size = *y_size;
        self.stride = *stride;
        self.ko_loc = *ko_loc;
        self.pos_hash = *pos_hash;
        self.num_black_captures = *num_black_captures;
        self.num_white_captures = *num_white_captures;
    }
}

impl PartialEq for Board {
    /// Same size, stones, ko point and hash (not the internal chain layout).
    fn eq(&self, other: &Board) -> bool {
        self.x_size == other.x_size
            && self.y_size == other.y_size
            && self.ko_loc == other.ko_loc
            && self.pos_hash == other.pos_hash
            && self
                .locs()
                .all(|l| self.colors[l.idx()] == other.colors[l.idx()])
    }
}

impl Eq for Board {}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board {}x{}\n{}", self.x_size, self.y_size, self)
    }
}

impl fmt::Display for Board {
    /// Rows top to bottom, `X` black, `O` white, `.` empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for y in 0..self.y_size {
            for x in 0..self.x_size {
                if x > 0 {
                    f.write_str(" ")?;
                }
                write!(
                    f,
                    "{}",
                    self.colors[Loc::from_xy(x, y, self.x_size).idx()].symbol()
                )?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Iterator over the points of a board, row by row (see [`Board::locs`]).
#[derive(Debug, Clone)]
pub struct Locs {
    next: usize,
    x: usize,
    x_size: usize,
    remaining: usize,
}

impl Iterator for Locs {
    type Item = Loc;

    #[inline]
    fn next(&mut self) -> Option<Loc> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let loc = Loc(self.next as u16);
        self.x += 1;
        if self.x == self.x_size {
            // Skip the wall column at the end of the row.
            self.x = 0;
            self.next += 2;
        } else {
            self.next += 1;
        }
        Some(loc)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Locs {}

/// Ownership of every point as computed by [`Board::calculate_area`]:
/// `Black`, `White` or `Empty` (nobody), indexed by [`Loc`].
#[derive(Clone, Copy, PartialEq, Eq)]
///
/// Fixed at the largest size (1.5 KB) so that it stays `Copy`; it is made
/// once per scoring or feature computation, not copied per playout.
pub struct Area(pub(crate) [Color; MAX_ARR_SIZE]);

impl Area {
    /// An area with every point owned by nobody.
    pub fn empty() -> Area {
        Area([Color::Empty; MAX_ARR_SIZE])
    }

    /// The owner of `loc`.
    #[inline]
    pub fn get(&self, loc: Loc) -> Color {
        self.0.get(loc.idx()).copied().unwrap_or(Color::Empty)
    }
}

impl fmt::Debug for Area {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Area")
    }
}

#[cfg(test)]
#[path = "board_tests.rs"]
mod tests;
