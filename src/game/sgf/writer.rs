//! [`GameRecord`]s and [`SgfTree`]s to FF[4] text.

use super::record::{letter, GameRecord};
use super::tree::{NodeId, SgfNode, SgfTree};
use crate::game::{Color, Player};

/// Writes `rec` as one FF[4] game: a root node with `FF[4]GM[1]CA[UTF-8]`,
/// `SZ` (`X:Y` for rectangles), the game information that is set, setup
/// and `PL`, then one node per move with a pass as `[]`. No trailing
/// newline, so games can be joined one per line as in `.sgfs` files.
///
/// `parse_collection(&write_sgf(rec))?[0].record()? == *rec` for every
/// record whose komi is finite, whose points are on the board, and whose
/// text holds no tab, vertical tab, form feed or carriage return (SGF reads
/// those as a space or a line break).
pub fn write_sgf(rec: &GameRecord) -> String {
    rec.to_tree().to_sgf()
}

impl GameRecord {
    /// The record as an [`SgfTree`] with a single line of nodes (see
    /// [`write_sgf`]).
    pub fn to_tree(&self) -> SgfTree {
        let mut root = SgfNode::new();
        root.push("FF", "4");
        root.push("GM", "1");
        root.push("CA", "UTF-8");
        root.push(
            "SZ",
            if self.x_size == self.y_size {
                self.x_size.to_string()
            } else {
                format!("{}:{}", self.x_size, self.y_size)
            },
        );
        // f32's Display is the shortest text that parses back to the same value.
        let numbers = [
            ("KM", self.komi.map(|k| k.to_string())),
            ("HA", self.handicap.map(|h| h.to_string())),
        ];
        let texts = [
            ("RU", &self.rules),
            ("RE", &self.result),
            ("PB", &self.player_black),
            ("PW", &self.player_white),
            ("DT", &self.date),
            ("EV", &self.event),
            ("GN", &self.game_name),
            ("C", &self.game_comment),
        ];
        for (ident, value) in numbers {
            if let Some(v) = value {
                root.push(ident, v);
            }
        }
        for (ident, value) in texts {
            if let Some(v) = value {
                root.push(ident, v.as_str());
            }
        }

        // Setup keeps its order: each run of one colour is one property,
        // and a colour already used in the node starts a new node (a node
        // holds each property once).
        let mut setup_nodes = vec![root];
        let mut last_color = None;
        for &(color, (x, y)) in &self.setup {
            let ident = match color {
                Color::Black => "AB",
                Color::White => "AW",
                _ => "AE",
            };
            let node = setup_nodes.last_mut();
            let needs_new =
                last_color != Some(ident) && node.as_ref().is_some_and(|n| n.has(ident));
            if needs_new {
                setup_nodes.push(SgfNode::new());
            }
            if let Some(node) = setup_nodes.last_mut() {
                node.push(ident, point(x, y));
            }
            last_color = Some(ident);
        }
        if let (Some(p), Some(node)) = (self.player_to_move, setup_nodes.last_mut()) {
            node.push("PL", p.letter().to_string());
        }

        let mut nodes = setup_nodes.into_iter();
        let mut tree = SgfTree::new(nodes.next().unwrap_or_default());
        let mut last = NodeId::ROOT;
        let move_nodes = self.moves.iter().map(|&(player, at)| {
            let mut node = SgfNode::new();
            let ident = match player {
                Player::Black => "B",
                Player::White => "W",
            };
            node.push(ident, at.map_or(String::new(), |(x, y)| point(x, y)));
            node
        });
        for node in nodes.chain(move_nodes) {
            // `last` is always in the tree, so this never fails.
            if let Some(id) = tree.add_child(last, node) {
                last = id;
            }
        }
        tree
    }
}

/// The SGF text of the point `(x, y)` (`y = 0` at the top): two letters,
/// `a`-`z` then `A`-`Z` (boards above 26).
pub fn point(x: usize, y: usize) -> String {
    let mut s = String::with_capacity(2);
    s.push(letter(x));
    s.push(letter(y));
    s
}

impl SgfTree {
    /// Writes the whole tree, variations included, as SGF text with
    /// values escaped (`\]`, `\\`). Parsing the text gives back an equal tree.
    pub fn to_sgf(&self) -> String {
        enum Step {
            Open,
            Node(NodeId),
            Close,
        }
        let mut out = String::from("(");
        let mut steps = vec![Step::Node(NodeId::ROOT)];
        while let Some(step) = steps.pop() {
            match step {
                Step::Open => out.push('('),
                Step::Close => out.push(')'),
                Step::Node(id) => {
                    if let Some(node) = self.node(id) {
                        write_node(&mut out, node);
                    }
                    match self.children(id) {
                        [only] => steps.push(Step::Node(*only)),
                        children => {
                            for &child in children.iter().rev() {
                                steps.push(Step::Close);
                                steps.push(Step::Node(child));
                                steps.push(Step::Open);
                            }
                        }
                    }
                }
            }
        }
        out.push(')');
        out
    }
}

fn write_node(out: &mut String, node: &SgfNode) {
    out.push(';');
    for (ident, values) in node.properties() {
        out.push_str(ident);
        for value in values {
            out.push('[');
            for c in value.chars() {
                if c == ']' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push(']');
        }
    }
}
