//! SGF text to [`SgfTree`]s: the FF[4] grammar, read leniently where FF[3]
//! files differ (lowercase letters in identifiers) and strictly otherwise.
//!
//! ```text
//! Collection = GameTree { GameTree }
//! GameTree   = "(" Node { Node } { GameTree } ")"
//! Node       = ";" { Property }
//! Property   = Ident Value { Value }
//! ```
//!
//! Whitespace may stand between any two tokens. The parser keeps an explicit
//! stack of open game trees instead of recursing, so deep nesting is safe.

use super::error::{SgfError, SgfErrorKind};
use super::tree::{NodeId, SgfNode, SgfTree, TextPos};

/// Parses every game of an SGF collection: a file with one or more game
/// trees one after another (KataGo's `.sgfs` files are one game per line).
///
/// A leading UTF-8 byte-order mark is skipped. Text outside the game trees
/// other than whitespace is an error, as is a text with no game.
pub fn parse_collection(text: &str) -> Result<Vec<SgfTree>, SgfError> {
    let mut cur = Cursor::new(text.strip_prefix('\u{feff}').unwrap_or(text));
    let mut games = Vec::new();
    loop {
        cur.skip_whitespace();
        match cur.peek() {
            None => break,
            Some(b'(') => games.push(parse_game_tree(&mut cur)?),
            Some(_) => {
                return Err(cur.unexpected("'(' to start a game"));
            }
        }
    }
    if games.is_empty() {
        return Err(SgfError::at(cur.pos(), SgfErrorKind::EmptyCollection));
    }
    Ok(games)
}

/// A byte cursor that knows its line and column.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
    line: u32,
    column: u32,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            at: 0,
            line: 1,
            column: 1,
        }
    }

    fn pos(&self) -> TextPos {
        TextPos {
            line: self.line,
            column: self.column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Moves past one byte, counting lines (`\n`, `\r\n`, a lone `\r`) and
    /// columns in characters (UTF-8 continuation bytes do not count).
    fn bump(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        match b {
            b'\n' => {
                self.line = self.line.saturating_add(1);
                self.column = 1;
            }
            b'\r' if self.peek() != Some(b'\n') => {
                self.line = self.line.saturating_add(1);
                self.column = 1;
            }
            b'\r' => {}
            _ if b & 0xC0 != 0x80 => self.column = self.column.saturating_add(1),
            _ => {}
        }
        Some(b)
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(is_sgf_whitespace) {
            self.bump();
        }
    }

    /// An error for the character under the cursor (or the end of text).
    fn unexpected(&self, expected: &'static str) -> SgfError {
        let kind = match self.text.get(self.at..).and_then(|s| s.chars().next()) {
            Some(found) => SgfErrorKind::UnexpectedChar { found, expected },
            None => SgfErrorKind::UnexpectedChar {
                found: '\u{0}',
                expected,
            },
        };
        SgfError::at(self.pos(), kind)
    }
}

fn is_sgf_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C)
}

/// One `(` still open: the node new nodes hang under, and whether a
/// variation was already closed inside it (then only `(` or `)` may follow).
struct OpenTree {
    open_pos: TextPos,
    /// The last node of this tree's sequence; `None` before its first node.
    last: Option<NodeId>,
    /// The node the first node of this tree becomes a child of.
    parent: Option<NodeId>,
    had_variation: bool,
}

/// Parses one game tree; the cursor is on its `(`.
fn parse_game_tree(cur: &mut Cursor) -> Result<SgfTree, SgfError> {
    let mut tree: Option<SgfTree> = None;
    let mut stack = vec![OpenTree {
        open_pos: cur.pos(),
        last: None,
        parent: None,
        had_variation: false,
    }];
    cur.bump();
    loop {
        cur.skip_whitespace();
        // The stack is never empty inside the loop: the last `)` returns.
        let Some(top) = stack.last_mut() else {
            break;
        };
        match cur.peek() {
            None => return Err(SgfError::at(top.open_pos, SgfErrorKind::UnclosedTree)),
            Some(b';') => {
                if top.had_variation {
                    return Err(cur.unexpected("'(' or ')': no node may follow a variation"));
                }
                let node = parse_node(cur)?;
                let id = match (&mut tree, top.last.or(top.parent)) {
                    (None, _) => {
                        tree = Some(SgfTree::new(node));
                        Some(NodeId::ROOT)
                    }
                    (Some(t), Some(parent)) => t.add_child(parent, node),
                    // A tree exists, so every open tree has a parent node.
                    (Some(_), None) => None,
                };
                top.last = id;
            }
            Some(b'(') => {
                let Some(last) = top.last else {
                    return Err(cur.unexpected("';' to start a node"));
                };
                top.had_variation = true;
                stack.push(OpenTree {
                    open_pos: cur.pos(),
                    last: None,
                    parent: Some(last),
                    had_variation: false,
                });
                cur.bump();
            }
            Some(b')') => {
                if top.last.is_none() {
                    return Err(cur.unexpected("';' to start a node (empty game tree)"));
                }
                cur.bump();
                stack.pop();
                if stack.is_empty() {
                    break;
                }
            }
            Some(_) => return Err(cur.unexpected("';', '(' or ')'")),
        }
    }
    tree.ok_or_else(|| cur.unexpected("';' to start a node"))
}

/// Parses one node; the cursor is on its `;`. Stops before the first byte
/// that cannot start a property.
fn parse_node(cur: &mut Cursor) -> Result<SgfNode, SgfError> {
    let mut node = SgfNode::with_position(cur.pos());
    cur.bump();
    loop {
        cur.skip_whitespace();
        match cur.peek() {
            Some(b) if b.is_ascii_alphabetic() => parse_property(cur, &mut node)?,
            _ => return Ok(node),
        }
    }
}

/// Parses `Ident [value]...` into `node`. FF[3] identifiers may contain
/// lowercase letters (`AddBlack`); as FF[4] readers do, only the uppercase
/// letters count (`AB`).
fn parse_property(cur: &mut Cursor, node: &mut SgfNode) -> Result<(), SgfError> {
    let ident_pos = cur.pos();
    let start = cur.at;
    let mut ident = String::new();
    while let Some(b) = cur.peek().filter(u8::is_ascii_alphabetic) {
        if b.is_ascii_uppercase() {
            ident.push(b as char);
        }
        cur.bump();
    }
    if ident.is_empty() {
        let written = cur.text.get(start..cur.at).unwrap_or_default().to_string();
        return Err(SgfError::at(
            ident_pos,
            SgfErrorKind::NoUppercaseIdent(written),
        ));
    }
    cur.skip_whitespace();
    if cur.peek() != Some(b'[') {
        return Err(SgfError::at(cur.pos(), SgfErrorKind::MissingValue(ident)));
    }
    while cur.peek() == Some(b'[') {
        let value_pos = cur.pos();
        let value = parse_value(cur)?;
        node.push_at(&ident, value, ident_pos, value_pos);
        cur.skip_whitespace();
    }
    Ok(())
}

/// Parses `[...]` and decodes it as FF[4] text: `\x` is `x` (so `\]` and
/// `\\`), a backslash before a line break removes both (a soft break), any
/// line break (`\n`, `\r\n`, `\n\r`, `\r`) becomes `\n`, and other
/// whitespace becomes a space. The cursor is on the `[`.
fn parse_value(cur: &mut Cursor) -> Result<String, SgfError> {
    let open = cur.pos();
    cur.bump();
    let mut out: Vec<u8> = Vec::new();
    loop {
        let Some(b) = cur.bump() else {
            return Err(SgfError::at(open, SgfErrorKind::UnterminatedValue));
        };
        match b {
            b']' => break,
            b'\\' => match cur.bump() {
                None => return Err(SgfError::at(open, SgfErrorKind::UnterminatedValue)),
                Some(nl @ (b'\n' | b'\r')) => skip_pair(cur, nl),
                Some(c) => out.push(c),
            },
            b'\n' | b'\r' => {
                skip_pair(cur, b);
                out.push(b'\n');
            }
            0x09 | 0x0B | 0x0C => out.push(b' '),
            _ => out.push(b),
        }
    }
    // Only whole ASCII bytes were dropped or replaced, so this is UTF-8.
    Ok(match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// After line-break byte `first`, consumes the other half of a two-byte
/// break (`\r\n` or `\n\r`).
fn skip_pair(cur: &mut Cursor, first: u8) {
    let second = if first == b'\n' { b'\r' } else { b'\n' };
    if cur.peek() == Some(second) {
        cur.bump();
    }
}
