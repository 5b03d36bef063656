//! Ladder search, as KataGo computes it for the network's ladder input
//! features (`Board::searchIsLadderCaptured`,
//! `Board::searchIsLadderCapturedAttackerFirst2Libs` in
//! `cpp/game/board.cpp`, and `iterLadders` in `cpp/neuralnet/nninputs.cpp`).
//!
//! The answers must be KataGo's exactly, including its heuristics and
//! cut-offs (ko points count as escapes, a 25,000-node budget, a stack limit
//! of 1.5 moves per point), because the network was trained on them. The
//! search plays and undoes moves on the board it is given; [`iter_ladders`]
//! works on a copy so the caller's board is untouched.
//!
//! All buffers live in a [`LadderScratch`] that callers keep and reuse, so a
//! search allocates nothing once the buffers have grown to their working size.

use super::board::{Board, MoveRecord};
use super::scratch::Scratch;
use super::types::{Color, Loc, Move, Player, MAX_PLAY_SIZE};

/// KataGo's `MAX_LADDER_SEARCH_NODE_BUDGET`: past this many moves played,
/// a ladder is assumed not to work.
const NODE_BUDGET: usize = 25_000;

/// No location (index 0 of the padded array is always wall).
const NULL: u16 = 0;

/// Reusable buffers for ladder searches (see the module docs).
#[derive(Default)]
pub struct LadderScratch {
    /// Move lists of every search level, back to back.
    buf: Vec<Loc>,
    /// One frame per search level.
    frames: Vec<Frame>,
    /// Attacker first moves that capture a two-liberty chain.
    working: Vec<Loc>,
    /// `iter_ladders`: chain heads already solved, with their answer.
    solved: Vec<(u16, bool)>,
    /// `iter_ladders`: the board the searches play on, kept so that copying
    /// the position in allocates nothing once the size is known.
    board: Option<Board>,
}

impl LadderScratch {
    /// Empty buffers; they grow on first use.
    pub fn new() -> LadderScratch {
        LadderScratch::default()
    }
}

#[derive(Clone, Copy)]
struct Frame {
    /// Index in `buf` of this level's move list.
    start: usize,
    /// Length of the move list.
    len: usize,
    /// Move being searched, `None` until the list is generated.
    cur: Option<usize>,
    /// The move played at this level, to undo it on the way back.
    record: Option<MoveRecord>,
}

impl Frame {
    const FRESH: Frame = Frame {
        start: 0,
        len: 0,
        cur: None,
        record: None,
    };
}

/// Where the ladder search stands in its explicit stack of levels.
struct Walk {
    /// The level being searched; below 0 the search is over.
    stack_idx: isize,
    /// The answer of the level last left (or of the move last tried).
    ret: bool,
    /// Whether `ret` came back from a deeper level (whose move to undo).
    from_deeper: bool,
}

impl Walk {
    /// Leaves the current level with answer `r`.
    #[inline]
    fn pop(&mut self, r: bool) {
        self.ret = r;
        self.from_deeper = true;
        self.stack_idx -= 1;
    }
}

/// What generating one search level's moves found.
enum Level {
    /// The level is decided without searching: the ladder works (`true`)
    /// or not, for the attacker.
    Settled(bool),
    /// This many moves to try, written into the buffer.
    Moves(usize),
}

impl Board {
    #[inline]
    fn adj4(&self, loc: usize) -> [usize; 4] {
        [loc - self.stride, loc - 1, loc + 1, loc + self.stride]
    }

    /// The points next to each stone of the chain at `loc`, in chain list
    /// order and then up/left/right/down (KataGo's order; repeats kept).
    fn chain_neighbours(&self, loc: Loc) -> impl Iterator<Item = usize> + '_ {
        self.chain_stones(loc)
            .flat_map(|stone| self.adj4(stone.idx()))
    }

    /// Writes the liberties of the chain at `loc` into `buf` from `buf_idx`
    /// on, skipping any already in `buf[buf_start..]`; returns how many.
    /// The order (chain list order, then up/left/right/down) is KataGo's.
    fn find_liberties(
        &self,
        loc: Loc,
        buf: &mut Vec<Loc>,
        buf_start: usize,
        buf_idx: usize,
    ) -> usize {
        let mut found = 0;
        for a in self.chain_neighbours(loc) {
            let lib = Loc(a as u16);
            if self.colors[a] != Color::Empty || buf[buf_start..buf_idx + found].contains(&lib) {
                continue;
            }
            if buf_idx + found >= buf.len() {
                buf.resize(buf.len() * 3 / 2 + 64, Loc(NULL));
            }
            buf[buf_idx + found] = lib;
            found += 1;
        }
        found
    }

    /// Writes the moves that capture an opponent chain in atari next to the
    /// chain at `loc` (their lone liberties) into `buf` from `start` on, as
    /// [`Board::find_liberties`] (whose `buf_start` and `buf_idx` are both
    /// `start` here: the ladder search always begins a fresh list).
    fn find_liberty_gaining_captures(&self, loc: Loc, buf: &mut Vec<Loc>, start: usize) -> usize {
        let Some(pla) = self.get(loc).player() else {
            return 0;
        };
        let oc = pla.opp().color();
        let mut checked: Scratch<u16, MAX_PLAY_SIZE> = Scratch::new();
        let mut found = 0;
        for a in self.chain_neighbours(loc) {
            if self.colors[a] != oc {
                continue;
            }
            let head = self.chain_head[a];
            if self.chain_libs[head as usize] != 1 || checked.contains(&head) {
                continue;
            }
            found += self.find_liberties(Loc(a as u16), buf, start, start + found);
            checked.push(head);
        }
        found
    }

    /// Whether an opponent chain next to the chain at `loc` is in atari.
    fn has_liberty_gaining_captures(&self, loc: Loc) -> bool {
        let Some(pla) = self.get(loc).player() else {
            return false;
        };
        let oc = pla.opp().color();
        self.chain_neighbours(loc)
            .any(|a| self.colors[a] == oc && self.chain_libs[self.chain_head[a] as usize] == 1)
    }

    /// KataGo's `getBoundNumLibertiesAfterPlay`: quick lower and upper
    /// bounds on the liberties of a `pla` stone played on `loc`.
    fn bound_num_liberties_after_play(&self, loc: Loc, pla: Player) -> (usize, usize) {
        let (pc, oc) = (pla.color(), pla.opp().color());
        let mut immediate = 0;
        let mut caps = 0;
        let mut libs_from_caps = 0;
        let mut conn_libs = 0;
        let mut max_conn_libs = 0;
        for a in self.adj4(loc.idx()) {
            let c = self.colors[a];
            let head = self.chain_head[a] as usize;
            if c == Color::Empty {
                immediate += 1;
            } else if c == oc {
                if self.chain_libs[head] == 1 {
                    caps += 1;
                    libs_from_caps += self.chain_size[head] as usize;
                }
            } else if c == pc {
                let libs = self.chain_libs[head] as usize - 1;
                conn_libs += libs;
                max_conn_libs = max_conn_libs.max(libs);
            }
        }
        (
            caps + max_conn_libs.max(immediate),
            immediate + libs_from_caps + conn_libs,
        )
    }

    /// KataGo's `countHeuristicConnectionLibertiesX2`: twice the liberties
    /// `pla` could connect to on `loc`, minus 1.5 per chain connected.
    fn heuristic_connection_liberties_x2(&self, loc: Loc, pla: Player) -> i32 {
        let pc = pla.color();
        self.adj4(loc.idx())
            .iter()
            .filter(|&&a| self.colors[a] == pc)
            .map(|&a| self.chain_libs[self.chain_head[a] as usize] as i32)
            .filter(|&libs| libs > 1)
            .map(|libs| libs * 2 - 3)
            .sum()
    }

    #[inline]
    fn is_adjacent(&self, a: Loc, b: Loc) -> bool {
        let (a, b) = (a.idx(), b.idx());
        a + self.stride == b || a + 1 == b || b + 1 == a || b + self.stride == a
    }

    /// Whether the chain at `loc` (one liberty if `defender_first`, else at
    /// most two) is captured in a ladder: the defender may only extend on
    /// its liberty or capture an adjacent chain in atari, the attacker only
    /// fills the defender's liberties. Leaves the board as it was (apart
    /// from chain representation details, as KataGo's undo does).
    ///
    /// KataGo's quirks are kept: at the root with `defender_first` the
    /// simple-ko ban is lifted, a defender facing a ko point escapes, and
    /// when the node budget runs out the answer is `false` and the ko ban is
    /// not restored.
    pub fn search_is_ladder_captured(
        &mut self,
        loc: Loc,
        defender_first: bool,
        scratch: &mut LadderScratch,
    ) -> bool {
        let Some(pla) = self.get(loc).player() else {
            return false;
        };
        let libs = self.num_liberties(loc);
        if libs > 2 || (defender_first && libs > 1) {
            return false;
        }
        let opp = pla.opp();
        let LadderScratch { buf, frames, .. } = scratch;

        let ko_saved = self.ko_loc;
        if defender_first {
            self.ko_loc = NULL;
        }

        // A bit deeper than the board is big, in case recaptures lengthen
        // the sequence (KataGo's paranoia margin).
        let stack_size = self.x_size * self.y_size * 3 / 2 + 1;
        if frames.len() < stack_size + 1 {
            frames.resize(stack_size + 1, Frame::FRESH);
        }
        frames[0] = Frame::FRESH;
        let mut w = Walk {
            stack_idx: 0,
            ret: false,
            from_deeper: false,
        };
        let mut nodes = 0;

        loop {
            if w.stack_idx < 0 {
                self.ko_loc = ko_saved;
                return w.ret;
            }
            let si = w.stack_idx as usize;
            if si >= stack_size - 1 {
                w.pop(true);
                continue;
            }
            if nodes >= NODE_BUDGET {
                self.unwind_ladder(&frames[..si]);
                return false;
            }

            let is_defender = defender_first == si.is_multiple_of(2);

            match frames[si].cur {
                None => {
                    let start = frames[si].start;
                    let level = match self.ladder_base_case(loc, is_defender) {
                        Some(r) => Level::Settled(r),
                        None if is_defender => self.defender_ladder_moves(loc, pla, buf, start),
                        None => self.attacker_ladder_moves(loc, pla, buf, start),
                    };
                    match level {
                        Level::Settled(r) => {
                            w.pop(r);
                            continue;
                        }
                        Level::Moves(len) => {
                            frames[si].len = len;
                            frames[si].cur = Some(0);
                        }
                    }
                }
                Some(cur) => {
                    if w.from_deeper {
                        if let Some(rec) = frames[si].record {
                            self.undo(rec);
                        }
                    }
                    // A defender move that escapes, or an attacker move
                    // that captures, settles this level.
                    if is_defender != w.ret {
                        w.pop(w.ret);
                        continue;
                    }
                    frames[si].cur = Some(cur + 1);
                }
            }

            let Frame {
                start, len, cur, ..
            } = frames[si];
            let cur = cur.unwrap_or(0);
            if cur >= len {
                // Out of moves: the side to move has lost.
                w.pop(is_defender);
                continue;
            }
            let mv = Move::Play(buf[start + cur]);
            let p = if is_defender { pla } else { opp };
            // Suicide never helps either side in a ladder, so it is illegal
            // here whatever the rules; an illegal move simply fails.
            if !self.is_legal(mv, p, false) {
                w.ret = is_defender;
                w.from_deeper = false;
                continue;
            }
            frames[si].record = Some(self.play_recorded(mv, p));
            nodes += 1;
            w.stack_idx += 1;
            frames[si + 1] = Frame {
                start: start + len,
                ..Frame::FRESH
            };
        }
    }

    /// Undoes the moves of the given levels, deepest first (the node budget
    /// ran out).
    #[inline]
    fn unwind_ladder(&mut self, frames: &[Frame]) {
        for frame in frames.iter().rev() {
            if let Some(rec) = frame.record {
                self.undo(rec);
            }
        }
    }

    /// The ladder's answer at a level before any move is generated, if the
    /// liberties of the chain at `loc` already settle it.
    #[inline]
    fn ladder_base_case(&self, loc: Loc, is_defender: bool) -> Option<bool> {
        let libs = self.num_liberties(loc);
        // Base cases: an attacker to move against one liberty has won,
        // against three has lost; a defender to move with two liberties, or
        // facing a ko point, escapes (ladders that hinge on kos are not
        // called captured).
        if is_defender {
            (libs >= 2 || self.ko_loc != NULL).then_some(false)
        } else if libs <= 1 {
            Some(true)
        } else if libs >= 3 {
            Some(false)
        } else {
            None
        }
    }

    /// The defender's moves at a level, written into `buf[start..]`:
    /// captures that gain liberties, then the lone liberty; or the answer
    /// when the liberty bounds settle it.
    #[inline]
    fn defender_ladder_moves(
        &self,
        loc: Loc,
        pla: Player,
        buf: &mut Vec<Loc>,
        start: usize,
    ) -> Level {
        let mut len = self.find_liberty_gaining_captures(loc, buf, start);
        len += self.find_liberties(loc, buf, start, start + len);
        // The last move is always the lone liberty.
        let (lower, upper) = self.bound_num_liberties_after_play(buf[start + len - 1], pla);
        if lower >= 3 {
            Level::Settled(false)
        } else if len == 1 && upper <= 1 {
            Level::Settled(true)
        } else {
            Level::Moves(len)
        }
    }

    /// The attacker's moves at a level, written into `buf[start..]`: the
    /// defender's two liberties, the more promising first; or the answer
    /// when the shape settles it.
    #[inline]
    fn attacker_ladder_moves(
        &self,
        loc: Loc,
        pla: Player,
        buf: &mut Vec<Loc>,
        start: usize,
    ) -> Level {
        let opp = pla.opp();
        let mut len = self.find_liberties(loc, buf, start, start);
        debug_assert_eq!(len, 2);
        let (m0, m1) = (buf[start], buf[start + 1]);
        let mut libs0 = self.num_immediate_liberties(m0) as i32;
        let mut libs1 = self.num_immediate_liberties(m1) as i32;

        // Double-ko death: both liberties are ko mouths, connecting at
        // either gains nothing and no attacker stone is in atari.
        if libs0 == 0
            && libs1 == 0
            && self.would_be_ko_capture(m0, opp)
            && self.would_be_ko_capture(m1, opp)
            && self.num_liberties_after_play(m0, pla, 3) <= 2
            && self.num_liberties_after_play(m1, pla, 3) <= 2
            && !self.has_liberty_gaining_captures(loc)
        {
            return Level::Settled(true);
        }

        // With non-adjacent liberties, an escape to three immediate
        // liberties cannot be stopped there.
        if !self.is_adjacent(m0, m1) {
            if libs0 >= 3 && libs1 >= 3 {
                return Level::Settled(false);
            } else if libs0 >= 3 {
                len = 1;
            } else if libs1 >= 3 {
                buf[start] = m1;
                len = 1;
            }
        }
        if len > 1 {
            libs0 = libs0 * 2 + self.heuristic_connection_liberties_x2(m0, pla);
            libs1 = libs1 * 2 + self.heuristic_connection_liberties_x2(m1, pla);
            if libs1 > libs0 {
                buf.swap(start, start + 1);
            }
        }
        Level::Moves(len)
    }

    /// Whether the attacker, moving first, can ladder-capture the
    /// two-liberty chain at `loc`. On success `working` holds the attacker
    /// moves that work (in KataGo's order); otherwise it is untouched.
    pub fn search_is_ladder_captured_attacker_first_2_libs(
        &mut self,
        loc: Loc,
        scratch: &mut LadderScratch,
        working: &mut Vec<Loc>,
    ) -> bool {
        let Some(pla) = self.get(loc).player() else {
            return false;
        };
        if self.num_liberties(loc) != 2 {
            return false;
        }
        let opp = pla.opp();
        let num_libs = self.find_liberties(loc, &mut scratch.buf, 0, 0);
        debug_assert_eq!(num_libs, 2);
        let moves = [scratch.buf[0], scratch.buf[1]];
        let mut works = [false; 2];
        for (i, &m) in moves.iter().enumerate() {
            let mv = Move::Play(m);
            if self.is_legal(mv, opp, false) {
                let rec = self.play_recorded(mv, opp);
                works[i] = self.search_is_ladder_captured(loc, true, scratch);
                self.undo(rec);
            }
        }
        if !(works[0] || works[1]) {
            return false;
        }
        working.clear();
        working.extend(moves.iter().zip(works).filter(|(_, w)| *w).map(|(&m, _)| m));
        true
    }
}

/// Calls `f(loc, working_moves)` for every stone, row by row from the top
/// left, whose chain is in an inescapable atari (one liberty) or can be put
/// in one (two liberties, attacker first). For a two-liberty chain,
/// `working_moves` lists the attacker moves that work, given with the
/// chain's first stone only (later stones of the chain get an empty
/// slice, as in KataGo); for a one-liberty chain it is empty.
pub fn iter_ladders(board: &Board, scratch: &mut LadderScratch, mut f: impl FnMut(Loc, &[Loc])) {
    let mut copy = match scratch.board.take() {
        Some(mut b) => {
            b.clone_from(board);
            b
        }
        None => board.clone(),
    };
    let mut solved = std::mem::take(&mut scratch.solved);
    let mut working = std::mem::take(&mut scratch.working);
    solved.clear();
    for loc in board.locs() {
        if board.get(loc).player().is_none() {
            continue;
        }
        let libs = board.num_liberties(loc);
        if libs != 1 && libs != 2 {
            continue;
        }
        let head = board.chain_head[loc.idx()];
        if let Some(&(_, laddered)) = solved.iter().find(|(h, _)| *h == head) {
            if laddered {
                f(loc, &[]);
            }
            continue;
        }
        // The searches run on the copy, whose chain heads may drift as
        // moves are undone; `solved` keys on the original board's heads.
        let laddered = if libs == 1 {
            copy.search_is_ladder_captured(loc, true, scratch)
        } else {
            working.clear();
            copy.search_is_ladder_captured_attacker_first_2_libs(loc, scratch, &mut working)
        };
        solved.push((head, laddered));
        if laddered {
            f(loc, if libs == 2 { &working } else { &[] });
        }
    }
    scratch.solved = solved;
    scratch.working = working;
    scratch.board = Some(copy);
}

#[cfg(test)]
#[path = "ladder_tests.rs"]
mod tests;
