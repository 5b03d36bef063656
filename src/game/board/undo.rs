//! Taking moves back: [`Board::play_recorded`] and [`Board::undo`], and the
//! chain surgery they need (restoring captured chains, splitting a chain
//! when a stone is lifted).

use super::{stone_key, Board, NULL};
use crate::game::scratch::Scratch;
use crate::game::types::{Color, Loc, Move, Player, MAX_ARR_SIZE, MAX_PLAY_SIZE};

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

impl Board {
    /// Removes one stone, even from a larger chain, rebuilding the rest.
    pub(super) fn remove_single_stone(&mut self, loc: usize) {
        let c = self.colors[loc];
        let Some(pla) = c.player() else { return };
        let mut locs: Scratch<u16, MAX_PLAY_SIZE> = Scratch::new();
        let mut cur = loc;
        loop {
            locs.push(cur as u16);
            cur = self.next_in_chain[cur] as usize;
            if cur == loc {
                break;
            }
        }
        self.remove_chain(loc);
        for &l in locs.iter() {
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
        let mut stack: Scratch<u16, MAX_PLAY_SIZE> = Scratch::new();
        let mut tail = loc as u16;
        // Mark first, then fill, so each point is pushed once.
        self.colors[loc] = c;
        stack.push(loc as u16);
        while let Some(cur) = stack.pop() {
            let cur = cur as usize;
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
                    stack.push(a as u16);
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
        let mut stack: Scratch<u16, MAX_PLAY_SIZE> = Scratch::new();
        stack.push(head);
        let mut tail = head;
        while let Some(cur) = stack.pop() {
            let cur = cur as usize;
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
                    stack.push(a as u16);
                }
            }
        }
        // Count liberties once the membership is complete.
        let mut libs = 0;
        let mut counted: Scratch<bool, MAX_ARR_SIZE> = Scratch::new();
        counted.fill(false, self.arr_len());
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
}
