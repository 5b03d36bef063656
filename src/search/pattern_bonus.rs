//! KataGo's pattern bonus table (`search/patternbonustable.cpp`): utility
//! added to a search node for the shape of the move that led to it, so a
//! bot avoids shapes it has played before (`avoidRepeatedPatternUtility`:
//! the current game's own moves) or that stand in chosen SGF files
//! (`avoidSgfPattern*`: say, a bot's recent games on a server).
//!
//! Shapes are [`pattern_hash_with_sym`]es (KataGo's keys), entered under
//! all eight symmetries and both colourings; a bonus is always in White's
//! utility, as KataGo's. The search looks a node's hash up
//! ([`PatternBonusTable::get`]) only for moves of the player the search is
//! for.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::game::sgf::{parse_collection, NodeId, SgfTree};
use crate::game::{pattern_hash_with_sym, Board, Color, Hash128, Loc, Move, Player};

mod auto_avoid;
pub use auto_avoid::{AutoAvoidLoad, AutoAvoidRepeat, AutoAvoidSizeSettings, PositionSample};

/// Shapes and their bonuses to White's utility.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatternBonusTable {
    entries: HashMap<Hash128, f64>,
}

/// `avoidSgfPattern*`: penalise the shapes of the moves in some SGF files
/// (one set of KataGo's keys; a config may give several).
#[derive(Debug, Clone, PartialEq)]
pub struct AvoidSgfPatterns {
    /// `avoidSgfPatternUtility`: the penalty for each game a shape is in
    /// (for the player who played it).
    pub utility: f64,
    /// `avoidSgfPatternLambda`: each older file counts this much less.
    pub lambda: f64,
    /// `avoidSgfPatternMinTurnNumber`: moves before this turn are skipped.
    pub min_turn_number: usize,
    /// `avoidSgfPatternMaxFiles`: only this many of the newest files.
    pub max_files: usize,
    /// `avoidSgfPatternAllowedNames`: only the moves of players so named
    /// (all when empty).
    pub allowed_names: Vec<String>,
    /// `avoidSgfPatternDirs`: SGF files, or folders searched for them.
    pub dirs: Vec<PathBuf>,
}

/// What loading one SGF file gave.
#[derive(Debug, Clone, PartialEq)]
pub enum SgfFileOutcome {
    /// This many shapes were entered.
    Added(usize),
    /// The file was skipped: why.
    Invalid(String),
}

impl PatternBonusTable {
    /// An empty table.
    pub fn new() -> PatternBonusTable {
        PatternBonusTable::default()
    }

    /// The bonus to White's utility for a move whose hash is `hash` (0 for
    /// a shape not in the table).
    #[inline]
    pub fn get(&self, hash: Hash128) -> f64 {
        self.entries.get(&hash).copied().unwrap_or(0.0)
    }

    /// Number of shapes.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no shape is in the table.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every shape and its bonus, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (Hash128, f64)> + '_ {
        self.entries.iter().map(|(&h, &b)| (h, b))
    }

    /// Enters `pla` playing `mv` on `board` (before the move) under all
    /// eight symmetries and both colourings, once per game (`seen`), with
    /// `bonus(colours_flipped)`: KataGo's `addBonus` loop.
    fn add_shape(
        &mut self,
        board: &Board,
        pla: Player,
        mv: Move,
        bonus: impl Fn(bool) -> f64,
        seen: &mut HashSet<Hash128>,
    ) {
        for flip in [false, true] {
            for symmetry in 0..8 {
                let Some(hash) = pattern_hash_with_sym(board, pla, mv, symmetry, flip) else {
                    return;
                };
                if seen.insert(hash) {
                    *self.entries.entry(hash).or_insert(0.0) += bonus(flip);
                }
            }
        }
    }

    /// Adds `bonus` for the shape of every move of a game (all players'
    /// or only `only`'s), replayed from `initial`: KataGo's
    /// `addBonusForGameMoves`, which the search uses for
    /// `avoidRepeatedPatternUtility`. Stops at a move that cannot be played.
    pub fn add_game_moves(
        &mut self,
        initial: &Board,
        moves: &[(Move, Player)],
        bonus: f64,
        only: Option<Player>,
    ) {
        let mut seen = HashSet::new();
        let mut board = initial.clone();
        for &(mv, pla) in moves {
            let before = board.clone();
            if !play_tolerant(&mut board, mv, pla) {
                break;
            }
            if only.is_none_or(|p| p == pla) {
                self.add_shape(&before, pla, mv, |_| bonus, &mut seen);
            }
        }
    }

    /// Penalises the shapes of the moves in the SGF files `avoid` names,
    /// newest file first, each older one by `lambda` less: KataGo's
    /// `avoidRepeatedSgfMoves`. Every variation counts; a move whose comment
    /// holds `%SKIP%` does not. Returns what each file gave: a file that
    /// cannot be read or parsed is reported and skipped, as KataGo does; a
    /// path that does not exist, or a file not named `.sgf`, is an error.
    pub fn add_sgf_files(
        &mut self,
        avoid: &AvoidSgfPatterns,
    ) -> Result<Vec<(PathBuf, SgfFileOutcome)>, String> {
        let mut report = Vec::new();
        let mut factor = 1.0;
        for path in newest_first(collect_sgf_files(&avoid.dirs)?)
            .into_iter()
            .take(avoid.max_files)
        {
            let outcome = match std::fs::read(&path) {
                Err(e) => SgfFileOutcome::Invalid(e.to_string()),
                Ok(bytes) => self.add_sgf_text(&String::from_utf8_lossy(&bytes), avoid, factor),
            };
            report.push((path, outcome));
            factor *= avoid.lambda;
        }
        Ok(report)
    }

    /// One file's games (every game of a collection).
    fn add_sgf_text(
        &mut self,
        text: &str,
        avoid: &AvoidSgfPatterns,
        factor: f64,
    ) -> SgfFileOutcome {
        let trees = match parse_collection(text) {
            Ok(trees) => trees,
            Err(e) => return SgfFileOutcome::Invalid(e.to_string()),
        };
        let mut seen = HashSet::new();
        for tree in &trees {
            if let Err(e) = self.add_sgf_tree(tree, avoid, factor, &mut seen) {
                return SgfFileOutcome::Invalid(e);
            }
        }
        SgfFileOutcome::Added(seen.len())
    }

    fn add_sgf_tree(
        &mut self,
        tree: &SgfTree,
        avoid: &AvoidSgfPatterns,
        factor: f64,
        seen: &mut HashSet<Hash128>,
    ) -> Result<(), String> {
        let (xs, ys) = tree.board_size().map_err(|e| e.to_string())?;
        let name_ok = |ident: &str| {
            avoid.allowed_names.is_empty()
                || tree
                    .root()
                    .get_first(ident)
                    .is_some_and(|n| avoid.allowed_names.iter().any(|a| a == n))
        };
        let allowed = [name_ok("PB"), name_ok("PW")];
        let board = Board::new(xs, ys).map_err(|e| e.to_string())?;
        // Depth first over every variation: (node, board before it, moves
        // since the last setup).
        let mut stack = vec![(NodeId::ROOT, board, 0usize)];
        while let Some((id, mut board, mut moves)) = stack.pop() {
            let Some(step) = tree.step(id) else { continue };
            let step = step.map_err(|e| e.to_string())?;
            if !step.setup.is_empty() || step.player_to_move.is_some() {
                let placements: Vec<(Loc, Color)> = step
                    .setup
                    .iter()
                    .map(|&(c, (x, y))| (Loc::from_xy(x, y, xs), c))
                    .collect();
                if !board.set_stones_fail_if_no_libs(&placements) {
                    return Err("setup stones without liberties".to_string());
                }
                board.clear_simple_ko_loc();
                moves = 0;
            }
            if let Some((pla, at)) = step.mv {
                let mv = at.map_or(Move::Pass, |(x, y)| Move::Play(Loc::from_xy(x, y, xs)));
                let before = board.clone();
                if !play_tolerant(&mut board, mv, pla) {
                    // As KataGo, a variation ends at a move it cannot play.
                    continue;
                }
                moves += 1;
                let skip = step
                    .comment
                    .as_deref()
                    .is_some_and(|c| c.contains("%SKIP%"));
                let player_ok = allowed[if pla == Player::Black { 0 } else { 1 }];
                if !skip && moves >= avoid.min_turn_number && player_ok {
                    let penalty = avoid.utility * factor;
                    let bonus = |flip: bool| {
                        let sym_pla = if flip { pla.opp() } else { pla };
                        if sym_pla == Player::White {
                            -penalty
                        } else {
                            penalty
                        }
                    };
                    self.add_shape(&before, pla, mv, bonus, seen);
                }
            }
            for &child in tree.children(id).iter().rev() {
                stack.push((child, board.clone(), moves));
            }
        }
        Ok(())
    }
}

/// The `.sgf` files among `dirs` (files as given, folders searched
/// recursively, names sorted), KataGo's `collectSgfsFromDirsOrFiles`.
fn collect_sgf_files(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.iter().rev().cloned().collect();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            let entries = std::fs::read_dir(&path)
                .map_err(|e| format!("reading the folder {}: {e}", path.display()))?;
            let mut inner: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            inner.sort();
            stack.extend(inner.into_iter().filter(|p| p.is_dir() || is_sgf(p)).rev());
        } else if path.is_file() {
            if !is_sgf(&path) {
                return Err(format!("{} does not end in .sgf or .SGF", path.display()));
            }
            out.push(path);
        } else {
            return Err(format!("{}: no such file or folder", path.display()));
        }
    }
    Ok(out)
}

/// Plays a recorded move as KataGo's `makeBoardMoveTolerant`: ko bans and
/// suicide rules ignored, only an occupied point or a single-stone suicide
/// refused.
fn play_tolerant(board: &mut Board, mv: Move, pla: Player) -> bool {
    if !board.is_legal_ignoring_ko(mv, pla, true) {
        return false;
    }
    board.play(mv, pla);
    true
}

fn is_sgf(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sgf" || e == "SGF")
}

/// Files by modification time, newest first (KataGo's `sortNewestToOldest`;
/// files whose time cannot be read count as oldest).
fn newest_first(mut files: Vec<PathBuf>) -> Vec<PathBuf> {
    let time = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    files.sort_by_key(|p| std::cmp::Reverse(time(p)));
    files
}

#[cfg(test)]
#[path = "pattern_bonus_tests.rs"]
mod tests;
