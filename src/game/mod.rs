//! The game core: players, points and moves, the board, KataGo's rules,
//! move history with ko/superko/encore, scoring, and SGF.
//!
//! Front door: [`Board`] (stones, chains, captures, simple ko, pass-alive
//! area), [`Rules`] (KataGo's rule options and their text forms),
//! [`BoardHistory`] (superko, passes, button, encore, handicap bonus, game
//! end and score), [`GameState`] (board + history + player to move +
//! [`GameOptions`], the one game state of GTP, analysis and the search),
//! and the small shared types ([`Loc`], [`Move`], [`Player`], [`ByPlayer`],
//! [`Color`], [`Hash128`]).

mod area;
mod board;
pub mod graph_hash;
mod history;
mod katago_rand;
mod ladder;
mod local_pattern;
mod rules;
mod scratch;
pub mod sgf;
mod state;
mod types;
mod zobrist;

pub use area::AreaOptions;
pub use board::{Area, Board, BoardSizeError, DiagramError, Locs, MoveRecord};
pub use history::{BoardHistory, HistoryError, NUM_RECENT_BOARDS};
pub use ladder::{iter_ladders, LadderScratch};
pub use local_pattern::{pattern_hash, pattern_hash_with_sym};
pub use rules::{
    komi_is_int_or_half_int, KoRule, Rules, RulesError, ScoringRule, TaxRule,
    WhiteHandicapBonusRule, MAX_USER_KOMI, MIN_USER_KOMI,
};
pub use state::{GameOptions, GameState};
pub use types::{
    ByPlayer, Color, CoordError, CoordErrorKind, Loc, Move, Player, PlayerParseError, MAX_ARR_SIZE,
    MAX_LEN, MAX_PLAY_SIZE, MIN_LEN,
};
pub use zobrist::Hash128;
