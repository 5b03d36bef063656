//! The game core: players, points and moves, the board, KataGo's rules,
//! move history with ko/superko/encore, scoring, and SGF.

pub mod sgf;
mod types;

pub use types::{
    Color, CoordError, CoordErrorKind, Loc, Move, Player, MAX_ARR_SIZE, MAX_LEN, MAX_PLAY_SIZE,
    MIN_LEN,
};
