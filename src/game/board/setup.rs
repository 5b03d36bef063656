//! Setting positions up from outside (SGF `AB`/`AW`/`AE`, diagrams) and the
//! consistency check the tests use.

use super::{stone_key, Board, NULL};
use crate::game::types::{Color, Loc, MAX_ARR_SIZE};
use crate::game::zobrist::ZOBRIST;

/// A board diagram that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad board diagram: {0}")]
pub struct DiagramError(pub String);

impl Board {
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
