//! The board: stones, chains with liberty counts, captures, simple ko and
//! the position hash.
//!
//! The layout follows KataGo's `Board` (`cpp/game/board.{h,cpp}`): a padded
//! array with a wall around the board (see [`Loc`]), every chain kept as a
//! circular linked list of its stones with one stone as its head, and the
//! stone and liberty counts stored at the head. Everything is fixed-size, so
//! a `Board` is `Copy` and copying it is one `memcpy` (about 6 KB).
//!
//! The board knows only the simple ko rule and does not enforce turn order;
//! superko, the encore and scoring live in [`super::BoardHistory`].

use std::fmt;

use super::types::{Color, Loc, Move, Player, MAX_ARR_SIZE, MAX_LEN, MAX_PLAY_SIZE, MIN_LEN};
use super::zobrist::{Hash128, ZOBRIST};

/// A board size outside 2x2..25x25.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unsupported board size {x_size}x{y_size}: each side must be {MIN_LEN} to {MAX_LEN}")]
pub struct BoardSizeError {
    pub x_size: usize,
    pub y_size: usize,
}

/// A board diagram that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad board diagram: {0}")]
pub struct DiagramError(pub String);

/// What [`Board::undo`] needs to take a move back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveRecord {
    pub pla: Player,
    pub mv: Move,
    /// The simple-ko point before the move.
    pub ko_loc: Option<Loc>,
    /// Bits 0-3: opponent chains captured in each direction; 0x10: suicide.
    pub cap_dirs: u8,
}

/// A Go board of any size from 2x2 to 25x25 (see the module docs).
#[derive(Clone, Copy)]
pub struct Board {
    pub(crate) x_size: usize,
    pub(crate) y_size: usize,
    /// `x_size + 1`: the offset between vertically adjacent points.
    pub(crate) stride: usize,
    pub(crate) colors: [Color; MAX_ARR_SIZE],
    /// For stones: the head of their chain.
    pub(crate) chain_head: [u16; MAX_ARR_SIZE],
    /// For stones: the next stone of their chain (circular).
    pub(crate) next_in_chain: [u16; MAX_ARR_SIZE],
    /// At chain heads: the number of distinct liberties of the chain.
    pub(crate) chain_libs: [u16; MAX_ARR_SIZE],
    /// At chain heads: the number of stones of the chain.
    pub(crate) chain_size: [u16; MAX_ARR_SIZE],
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
        let mut colors = [Color::Wall; MAX_ARR_SIZE];
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
            chain_head: [NULL; MAX_ARR_SIZE],
            next_in_chain: [NULL; MAX_ARR_SIZE],
            chain_libs: [0; MAX_ARR_SIZE],
            chain_size: [0; MAX_ARR_SIZE],
            ko_loc: NULL,
            pos_hash: ZOBRIST.size_x[x_size] ^ ZOBRIST.size_y[y_size],
            num_black_captures: 0,
            num_white_captures: 0,
        })
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

    fn is_suicide_idx(&self, loc: usize, pla: Player) -> bool {
        let (pc, oc) = (pla.color(), pla.opp().color());
        for a in self.adj(loc) {
            let c = self.colors[a];
            if c == Color::Empty {
                return false;
            } else if c == pc {
                if self.libs(a) > 1 {
                    return false;
                }
            } else if c == oc && self.libs(a) == 1 {
                return false;
            }
        }
        true
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

    /// Whether `pla` on `loc` would join two distinct `pla` chains, at least
    /// one not pass-alive, on a point not in `pla`'s pass-alive area
    /// (`pass_alive_area` as from [`Board::calculate_area`] with no extras).
    pub fn is_non_pass_alive_self_connection(
        &self,
        loc: Loc,
        pla: Player,
        pass_alive_area: &Area,
    ) -> bool {
        let l = loc.idx();
        let pc = pla.color();
        if self.colors[l] != Color::Empty || pass_alive_area.0[l] == pc {
            return false;
        }
        let Some(head) = self
            .adj(l)
            .into_iter()
            .find(|&a| self.colors[a] == pc && pass_alive_area.0[a] == Color::Empty)
            .map(|a| self.chain_head[a])
        else {
            return false;
        };
        self.adj(l)
            .iter()
            .any(|&a| self.colors[a] == pc && self.chain_head[a] != head)
    }

    /// Liberties a `pla` stone on `loc` would have after captures, capped at
    /// `max`.
    pub fn num_liberties_after_play(&self, loc: Loc, pla: Player, max: usize) -> usize {
        let l = loc.idx();
        let oc = pla.opp().color();
        let pc = pla.color();
        let mut libs = [0u16; MAX_PLAY_SIZE];
        let mut n = 0usize;
        let mut cap_heads = [NULL; 4];
        let mut ncap = 0;
        for a in self.adj(l) {
            let c = self.colors[a];
            if c == Color::Empty || (c == oc && self.libs(a) == 1) {
                libs[n] = a as u16;
                n += 1;
                if n >= max {
                    return max;
                }
                if c == oc {
                    let h = self.chain_head[a];
                    if !cap_heads[..ncap].contains(&h) {
                        cap_heads[ncap] = h;
                        ncap += 1;
                    }
                }
            }
        }
        let would_be_empty = |p: usize| {
            let c = self.colors[p];
            c == Color::Empty || (c == oc && cap_heads[..ncap].contains(&self.chain_head[p]))
        };
        let mut conn_heads = [NULL; 4];
        let mut nconn = 0;
        for a in self.adj(l) {
            if self.colors[a] != pc {
                continue;
            }
            let h = self.chain_head[a];
            if conn_heads[..nconn].contains(&h) {
                continue;
            }
            conn_heads[nconn] = h;
            nconn += 1;
            let mut cur = a;
            loop {
                for p in self.adj(cur) {
                    if p != l && would_be_empty(p) && !libs[..n].contains(&(p as u16)) {
                        libs[n] = p as u16;
                        n += 1;
                        if n >= max {
                            return max;
                        }
                    }
                }
                cur = self.next_in_chain[cur] as usize;
                if cur == a {
                    break;
                }
            }
        }
        n
    }

    /// The position hash after `pla` plays `mv` (captures and suicide
    /// resolved), without playing it. `mv` must be a pass or on an empty
    /// point.
    pub fn pos_hash_after_move(&self, mv: Move, pla: Player) -> Hash128 {
        let Move::Play(loc) = mv else {
            return self.pos_hash;
        };
        let l = loc.idx();
        let (pc, oc) = (pla.color(), pla.opp().color());
        let mut hash = self.pos_hash ^ stone_key(l, pc);
        let mut suicide = true;
        let mut heads = [NULL; 4];
        let mut nheads = 0;
        for a in self.adj(l) {
            let c = self.colors[a];
            if c == Color::Empty || (c == pc && self.libs(a) > 1) {
                suicide = false;
            } else if c == oc && self.libs(a) == 1 {
                let h = self.chain_head[a];
                if !heads[..nheads].contains(&h) {
                    heads[nheads] = h;
                    nheads += 1;
                    suicide = false;
                    for s in self.chain_stones(Loc(a as u16)) {
                        hash ^= stone_key(s.idx(), oc);
                    }
                }
            }
        }
        if suicide {
            for a in self.adj(l) {
                if self.colors[a] == pc && self.libs(a) == 1 {
                    let h = self.chain_head[a];
                    if !heads[..nheads].contains(&h) {
                        heads[nheads] = h;
                        nheads += 1;
                        for s in self.chain_stones(Loc(a as u16)) {
                            hash ^= stone_key(s.idx(), pc);
                        }
                    }
                }
            }
            hash ^= stone_key(l, pc);
        }
        hash
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

    /// Removes one stone, even from a larger chain, rebuilding the rest.
    fn remove_single_stone(&mut self, loc: usize) {
        let c = self.colors[loc];
        let Some(pla) = c.player() else { return };
        let mut locs = [0u16; MAX_PLAY_SIZE];
        let mut n = 0;
        let mut cur = loc;
        loop {
            locs[n] = cur as u16;
            n += 1;
            cur = self.next_in_chain[cur] as usize;
            if cur == loc {
                break;
            }
        }
        self.remove_chain(loc);
        for &l in &locs[..n] {
            if l as usize != loc {
                self.play_stone(l as usize, pla);
            }
        }
    }

    /// Plays `mv` (legal apart from ko) and returns what [`Board::undo`]
    /// needs to take it back.
    pub fn play_recorded(&mut self, mv: Move, pla: Player) -> MoveRecord {
        let mut rec = MoveRecord {
            pla,
            mv,
            ko_loc: self.ko_loc(),
            cap_dirs: 0,
        };
        if let Move::Play(loc) = mv {
            let oc = pla.opp().color();
            for (i, a) in self.adj(loc.idx()).into_iter().enumerate() {
                if self.colors[a] == oc && self.libs(a) == 1 {
                    rec.cap_dirs |= 1 << i;
                }
            }
            if rec.cap_dirs == 0 && self.is_suicide_idx(loc.idx(), pla) {
                rec.cap_dirs = 0x10;
            }
        }
        self.play(mv, pla);
        rec
    }

    /// Takes back the move of `rec`; moves must be undone newest first.
    /// Chain heads and list order may differ from before the move.
    pub fn undo(&mut self, rec: MoveRecord) {
        self.set_simple_ko_loc(rec.ko_loc);
        let Move::Play(loc) = rec.mv else { return };
        let loc = loc.idx();
        let pc = rec.pla.color();
        let opp = rec.pla.opp();
        for (i, a) in self.adj(loc).into_iter().enumerate() {
            if rec.cap_dirs & (1 << i) != 0 && self.colors[a] == Color::Empty {
                self.add_chain(a, opp);
                let n = self.chain_size[self.chain_head[a] as usize] as u32;
                match rec.pla {
                    Player::Black => self.num_white_captures -= n,
                    Player::White => self.num_black_captures -= n,
                }
            }
        }
        if rec.cap_dirs == 0x10 {
            debug_assert_eq!(self.colors[loc], Color::Empty);
            self.add_chain(loc, rec.pla);
            let n = self.chain_size[self.chain_head[loc] as usize] as u32;
            match rec.pla {
                Player::Black => self.num_black_captures -= n,
                Player::White => self.num_white_captures -= n,
            }
        }

        self.pos_hash ^= stone_key(loc, pc);
        self.colors[loc] = Color::Empty;
        self.change_surrounding_liberties(loc, opp.color(), 1);

        let head = self.chain_head[loc];
        if self.chain_size[head as usize] > 1 {
            let neighbours = self
                .adj(loc)
                .iter()
                .filter(|&&a| self.colors[a] == pc)
                .count();
            if neighbours <= 1 {
                // Removing a stone with one friendly neighbour cannot split
                // the chain: unlink it and fix the counts.
                let mut head = head;
                if head as usize == loc {
                    let new_head = self.next_in_chain[loc];
                    let mut cur = loc;
                    loop {
                        self.chain_head[cur] = new_head;
                        cur = self.next_in_chain[cur] as usize;
                        if cur == loc {
                            break;
                        }
                    }
                    self.chain_size[new_head as usize] = self.chain_size[head as usize];
                    self.chain_libs[new_head as usize] = self.chain_libs[head as usize];
                    head = new_head;
                }
                let mut cur = head as usize;
                while self.next_in_chain[cur] as usize != loc {
                    cur = self.next_in_chain[cur] as usize;
                }
                self.next_in_chain[cur] = self.next_in_chain[loc];
                let mut delta: i32 = 1;
                for a in self.adj(loc) {
                    if self.colors[a] == Color::Empty && !self.is_liberty_of(a, head) {
                        delta -= 1;
                    }
                }
                let h = head as usize;
                self.chain_libs[h] = (self.chain_libs[h] as i32 + delta) as u16;
                self.chain_size[h] -= 1;
            } else {
                // The chain may have split: rebuild whatever remains.
                let mut cur = loc;
                loop {
                    self.chain_head[cur] = NULL;
                    cur = self.next_in_chain[cur] as usize;
                    if cur == loc {
                        break;
                    }
                }
                for a in self.adj(loc) {
                    if self.colors[a] == pc && self.chain_head[a] == NULL {
                        self.rebuild_chain(a, pc);
                    }
                }
            }
        }
    }

    /// Flood-fills a new chain of `pla` stones into the empty region at
    /// `loc` (used to restore captured stones on undo).
    fn add_chain(&mut self, loc: usize, pla: Player) {
        let c = pla.color();
        let oc = pla.opp().color();
        self.chain_libs[loc] = 0;
        self.chain_size[loc] = 0;
        let mut stack = [0u16; MAX_PLAY_SIZE];
        let mut sp = 0;
        let mut tail = loc as u16;
        // Mark first, then fill, so each point is pushed once.
        self.colors[loc] = c;
        stack[sp] = loc as u16;
        sp += 1;
        while sp > 0 {
            sp -= 1;
            let cur = stack[sp] as usize;
            self.pos_hash ^= stone_key(cur, c);
            self.chain_head[cur] = loc as u16;
            self.chain_size[loc] += 1;
            if cur != loc {
                self.next_in_chain[cur] = self.next_in_chain[tail as usize];
                self.next_in_chain[tail as usize] = cur as u16;
                tail = cur as u16;
            } else {
                self.next_in_chain[loc] = loc as u16;
            }
            self.change_surrounding_liberties(cur, oc, -1);
            for a in self.adj(cur) {
                if self.colors[a] == Color::Empty {
                    self.colors[a] = c;
                    stack[sp] = a as u16;
                    sp += 1;
                }
            }
        }
    }

    /// Rebuilds links, size and liberties of the chain of colour `c` at
    /// `loc`, whose stones must have `chain_head == NULL`.
    fn rebuild_chain(&mut self, loc: usize, c: Color) {
        let head = loc as u16;
        self.chain_libs[loc] = 0;
        self.chain_size[loc] = 0;
        self.chain_head[loc] = head;
        self.next_in_chain[loc] = head;
        let mut stack = [0u16; MAX_PLAY_SIZE];
        let mut sp = 1;
        stack[0] = head;
        let mut tail = head;
        while sp > 0 {
            sp -= 1;
            let cur = stack[sp] as usize;
            if cur != loc {
                self.next_in_chain[cur] = self.next_in_chain[tail as usize];
                self.next_in_chain[tail as usize] = cur as u16;
                tail = cur as u16;
            }
            self.chain_size[loc] += 1;
            for a in self.adj(cur) {
                let ac = self.colors[a];
                if ac == c && self.chain_head[a] != head {
                    self.chain_head[a] = head;
                    stack[sp] = a as u16;
                    sp += 1;
                }
            }
        }
        // Count liberties once the membership is complete.
        let mut libs = 0;
        let mut counted = [false; MAX_ARR_SIZE];
        let mut cur = loc;
        loop {
            for a in self.adj(cur) {
                if self.colors[a] == Color::Empty && !counted[a] {
                    counted[a] = true;
                    libs += 1;
                }
            }
            cur = self.next_in_chain[cur] as usize;
            if cur == loc {
                break;
            }
        }
        self.chain_libs[loc] = libs;
    }

    // ---------------------------------------------------------------
    // Setup

    /// Puts `color` on `loc` (a stone, or `Empty` to clear), as KataGo's
    /// `setStone`: captures and suicide that result are resolved, a lone
    /// stone that would have no liberties is not placed, and the simple-ko
    /// ban is cleared. Returns false if `loc` is off the board or `color`
    /// is `Wall`.
    pub fn set_stone(&mut self, loc: Loc, color: Color) -> bool {
        if !self.is_on_board(loc) || color == Color::Wall {
            return false;
        }
        let l = loc.idx();
        let cur = self.colors[l];
        if cur == color {
        } else if cur == Color::Empty {
            if let Some(p) = color.player() {
                if !self.is_illegal_suicide_idx(l, p, true) {
                    self.play_stone(l, p);
                }
            }
        } else if color == Color::Empty {
            self.remove_single_stone(l);
        } else {
            self.remove_single_stone(l);
            if let Some(p) = color.player() {
                if !self.is_suicide_idx(l, p) {
                    self.play_stone(l, p);
                }
            }
        }
        self.ko_loc = NULL;
        true
    }

    /// One placement of KataGo's `setStoneFailIfNoLibs`.
    fn set_stone_fail_if_no_libs(&mut self, loc: Loc, color: Color) -> bool {
        if !self.is_on_board(loc) || color == Color::Wall {
            return false;
        }
        let l = loc.idx();
        let cur = self.colors[l];
        let old_ko = self.ko_loc;
        if cur == color {
        } else if cur == Color::Empty {
            let Some(p) = color.player() else {
                return false;
            };
            if self.is_suicide_idx(l, p) || self.would_be_capture(loc, p) {
                return false;
            }
            self.play_stone(l, p);
        } else if color == Color::Empty {
            self.remove_single_stone(l);
        } else {
            let Some(p) = color.player() else {
                return false;
            };
            self.remove_single_stone(l);
            if self.is_suicide_idx(l, p) || self.would_be_capture(loc, p) {
                self.play_stone(l, p.opp());
                self.ko_loc = old_ko;
                return false;
            }
            self.play_stone(l, p);
        }
        self.ko_loc = NULL;
        true
    }

    /// Sets up several stones (SGF `AB`/`AW`/`AE`) as KataGo does for SGF
    /// setup: every listed point is cleared first, then set; fails (leaving
    /// the board valid but changed) if a point is listed twice, is off the
    /// board, or the result would capture or leave a chain without
    /// liberties.
    pub fn set_stones_fail_if_no_libs(&mut self, placements: &[(Loc, Color)]) -> bool {
        for (i, (l, _)) in placements.iter().enumerate() {
            if placements[..i].iter().any(|(m, _)| m == l) {
                return false;
            }
        }
        for &(l, _) in placements {
            if !self.set_stone_fail_if_no_libs(l, Color::Empty) {
                return false;
            }
        }
        for &(l, c) in placements {
            if !self.set_stone_fail_if_no_libs(l, c) {
                return false;
            }
        }
        true
    }

    /// A board from a diagram: one line per row from the top, `x`/`X`
    /// black, `o`/`O` white, `.` or `+` empty, whitespace ignored, blank
    /// lines skipped. Handy for tests and debugging.
    pub fn from_diagram(x_size: usize, y_size: usize, text: &str) -> Result<Board, DiagramError> {
        let mut board = Board::new(x_size, y_size).map_err(|e| DiagramError(e.to_string()))?;
        let mut y = 0;
        for line in text.lines() {
            let points: Vec<char> = line.chars().filter(|c| !c.is_whitespace()).collect();
            if points.is_empty() {
                continue;
            }
            if y >= y_size || points.len() != x_size {
                return Err(DiagramError(format!(
                    "row {y} {line:?} does not fit {x_size}x{y_size}"
                )));
            }
            for (x, ch) in points.into_iter().enumerate() {
                let color = match ch {
                    'x' | 'X' => Color::Black,
                    'o' | 'O' => Color::White,
                    '.' | '+' => continue,
                    _ => return Err(DiagramError(format!("unexpected {ch:?} in row {y}"))),
                };
                board.set_stone(Loc::from_xy(x, y, x_size), color);
            }
            y += 1;
        }
        if y != y_size {
            return Err(DiagramError(format!("{y} rows, expected {y_size}")));
        }
        Ok(board)
    }

    // ---------------------------------------------------------------
    // Checks

    /// Recomputes every chain, liberty count and the hash from the stones
    /// alone and compares with the incremental data; for tests.
    pub fn check_consistency(&self) -> Result<(), String> {
        let mut hash = ZOBRIST.size_x[self.x_size] ^ ZOBRIST.size_y[self.y_size];
        let mut seen = [false; MAX_ARR_SIZE];
        for loc in self.locs() {
            let l = loc.idx();
            let c = self.colors[l];
            if c == Color::Wall {
                return Err(format!("wall inside the board at {l}"));
            }
            if c == Color::Empty || seen[l] {
                continue;
            }
            hash ^= stone_key(l, c);
            // Flood-fill the chain from scratch.
            let mut members = vec![l];
            let mut in_chain = [false; MAX_ARR_SIZE];
            in_chain[l] = true;
            let mut i = 0;
            while i < members.len() {
                for a in self.adj(members[i]) {
                    if self.colors[a] == c && !in_chain[a] {
                        in_chain[a] = true;
                        members.push(a);
                    }
                }
                i += 1;
            }
            let mut libs = 0;
            let mut lib_seen = [false; MAX_ARR_SIZE];
            for &m in &members {
                for a in self.adj(m) {
                    if self.colors[a] == Color::Empty && !lib_seen[a] {
                        lib_seen[a] = true;
                        libs += 1;
                    }
                }
            }
            if libs == 0 {
                return Err(format!("chain at {l} has no liberties"));
            }
            let head = self.chain_head[l];
            // The linked list must visit exactly the members.
            let mut walked = 0;
            let mut cur = l;
            loop {
                if !in_chain[cur] || self.chain_head[cur] != head {
                    return Err(format!("chain list at {l} leaves the chain at {cur}"));
                }
                walked += 1;
                if walked > members.len() {
                    return Err(format!("chain list at {l} does not close"));
                }
                cur = self.next_in_chain[cur] as usize;
                if cur == l {
                    break;
                }
            }
            if walked != members.len() {
                return Err(format!(
                    "chain at {l}: list {walked}, flood {}",
                    members.len()
                ));
            }
            if self.chain_size[head as usize] as usize != members.len() {
                return Err(format!(
                    "chain at {l}: size {} != {}",
                    self.chain_size[head as usize],
                    members.len()
                ));
            }
            if self.chain_libs[head as usize] != libs {
                return Err(format!(
                    "chain at {l}: libs {} != {libs}",
                    self.chain_libs[head as usize]
                ));
            }
            for &m in &members {
                seen[m] = true;
                if m != l {
                    hash ^= stone_key(m, c);
                }
            }
        }
        if hash != self.pos_hash {
            return Err("position hash differs from a recount".to_string());
        }
        if self.ko_loc != NULL && self.colors[self.ko_loc as usize] != Color::Empty {
            return Err("ko point is not empty".to_string());
        }
        Ok(())
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
