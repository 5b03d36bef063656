//! SGF (Smart Game Format) reading and writing, FF[3] and FF[4], for Go.
//!
//! Two layers:
//!
//! - [`parse_collection`] turns text into [`SgfTree`]s: nodes, their
//!   properties with decoded text values, and variations. This layer knows
//!   the syntax only, so any well-formed SGF parses, whatever it contains.
//! - [`SgfTree::record`] reads the main line of a tree (the first variation
//!   at every branch) as a typed [`GameRecord`]: board size, komi, rules
//!   text, setup stones and moves as `(x, y)` points. [`write_sgf`] is its
//!   inverse: `parse(write(rec)).record() == rec`.
//!
//! Points are `(x, y)` with `x` the column from the left and `y` the row
//! from the top, as in [`Loc::from_xy`](crate::game::Loc::from_xy); SGF
//! `aa` is the top-left corner and its first letter is the column. Letters
//! run `a..z` then `A..Z`.
//!
//! Every fault in the input is an [`SgfError`] carrying the line and
//! column where it was found; no input makes this module panic.

mod error;
mod parser;
mod record;
#[cfg(test)]
mod tests;
mod tree;
mod writer;

pub use error::{SgfError, SgfErrorKind};
pub use parser::parse_collection;
pub use record::{GameRecord, NodeStep};
pub use tree::{NodeId, SgfNode, SgfTree, TextPos};
pub use writer::point;
pub use writer::write_sgf;
