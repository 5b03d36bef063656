//! The one error type of the SGF layer.

use super::tree::TextPos;

/// What is wrong with an SGF text or with the game it describes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SgfErrorKind {
    /// The text holds no game tree at all.
    #[error("no game in the SGF text (a game starts with '(;')")]
    EmptyCollection,
    /// A character that cannot stand where it stands.
    #[error("unexpected {found:?}, expected {expected}")]
    UnexpectedChar {
        /// The character found.
        found: char,
        /// What the grammar allows here.
        expected: &'static str,
    },
    /// A `(` whose `)` never comes; the position is that of the `(`.
    #[error("game tree opened here is never closed (missing ')')")]
    UnclosedTree,
    /// A `[` whose `]` never comes; the position is that of the `[`.
    #[error("property value opened here is never closed (missing ']')")]
    UnterminatedValue,
    /// A property identifier with no `[value]` after it.
    #[error("property {0} has no value")]
    MissingValue(String),
    /// A property identifier made only of lowercase letters, which FF[4]
    /// readers ignore, leaving nothing.
    #[error("property identifier {0:?} has no uppercase letter")]
    NoUppercaseIdent(String),
    /// `GM` names another game than Go (`GM[1]`).
    #[error("GM[{0}] is not Go (GM[1])")]
    NotGo(String),
    /// `SZ` that is not `N` or `X:Y` with every edge in 2..=25.
    #[error("bad board size SZ[{value}]: {reason}")]
    BadSize {
        /// The value as written.
        value: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A number property (`KM`, `HA`) that does not parse.
    #[error("bad number {property}[{value}]")]
    BadNumber {
        /// The property identifier.
        property: String,
        /// The value as written.
        value: String,
    },
    /// A point that is not two letters, or is off the board.
    #[error("bad point {property}[{value}]: {reason}")]
    BadPoint {
        /// The property identifier.
        property: String,
        /// The value as written.
        value: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// `PL` that is not `B` or `W`.
    #[error("bad player PL[{0}] (expected B or W)")]
    BadPlayer(String),
    /// A property that must have exactly one value has several.
    #[error("property {0} has several values where one is expected")]
    MultipleValues(String),
    /// One node with both a black and a white move.
    #[error("node has both a B and a W move")]
    TwoMovesInNode,
    /// Setup (`AB`, `AW`, `AE`, `PL`) after the first move of the main line,
    /// which a [`GameRecord`](super::GameRecord) cannot express.
    #[error("setup property {0} after a move is not supported")]
    SetupAfterMove(String),
}

/// An SGF fault, with the 1-based line and column (in characters) where it
/// was found. Line and column are 0 when the fault is in a tree that was not
/// built by the parser.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SGF error at line {line}, column {column}: {kind}")]
pub struct SgfError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// What is wrong.
    pub kind: SgfErrorKind,
}

impl SgfError {
    pub(crate) fn at(pos: TextPos, kind: SgfErrorKind) -> SgfError {
        SgfError {
            line: pos.line as usize,
            column: pos.column as usize,
            kind,
        }
    }
}
