//! What a move would do, without playing it: liberties after the move,
//! the position hash after it, and self-connections outside pass-alive
//! area (for the search's move filters and superko).

use super::{stone_key, Area, Board, NULL};
use crate::game::scratch::Scratch;
use crate::game::types::{Color, Loc, Move, Player, MAX_PLAY_SIZE};
use crate::game::zobrist::Hash128;

impl Board {
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
        let mut libs: Scratch<u16, MAX_PLAY_SIZE> = Scratch::new();
        let mut cap_heads = [NULL; 4];
        let mut ncap = 0;
        for a in self.adj(l) {
            let c = self.colors[a];
            if c == Color::Empty || (c == oc && self.libs(a) == 1) {
                libs.push(a as u16);
                if libs.len() >= max {
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
                    if p != l && would_be_empty(p) && !libs.contains(&(p as u16)) {
                        libs.push(p as u16);
                        if libs.len() >= max {
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
        libs.len()
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
}
