//! The syntax tree of one SGF game: nodes with properties, and variations.
//!
//! Nodes live in one arena (`Vec<SgfNode>`) and point to their children by
//! index, so neither building, walking nor dropping a tree recurses: a file
//! nested ten thousand variations deep costs no stack.

/// A position in the SGF text: 1-based line and column (in characters).
/// `0:0` marks something that was not read from text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TextPos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

/// The index of a node in its [`SgfTree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) u32);

impl NodeId {
    /// The root node of every tree.
    pub const ROOT: NodeId = NodeId(0);
}

/// One property: an identifier (uppercase letters only) and its decoded
/// values, with where each value started in the text.
#[derive(Debug, Clone)]
struct Property {
    ident: String,
    values: Vec<String>,
    /// Position of the identifier, then of each value's `[`.
    ident_pos: TextPos,
    value_pos: Vec<TextPos>,
}

/// One SGF node: its properties in the order they were written.
///
/// Values are decoded text: escapes resolved, soft line breaks removed,
/// line breaks as `\n`. An identifier written twice in one node (which
/// FF[4] forbids but some programs write) is merged into one property.
/// Equality ignores text positions.
#[derive(Debug, Clone, Default)]
pub struct SgfNode {
    properties: Vec<Property>,
    children: Vec<NodeId>,
    /// Where the node's `;` was.
    pos: TextPos,
}

impl PartialEq for SgfNode {
    fn eq(&self, other: &SgfNode) -> bool {
        self.properties.len() == other.properties.len()
            && self
                .properties
                .iter()
                .zip(&other.properties)
                .all(|(a, b)| a.ident == b.ident && a.values == b.values)
            && self.children == other.children
    }
}

impl SgfNode {
    /// An empty node, for building trees by hand.
    pub fn new() -> SgfNode {
        SgfNode::default()
    }

    /// The values of property `ident` (e.g. `"AB"`), if the node has it.
    pub fn get(&self, ident: &str) -> Option<&[String]> {
        self.find(ident).map(|p| p.values.as_slice())
    }

    /// The first value of property `ident`, if the node has it.
    pub fn get_first(&self, ident: &str) -> Option<&str> {
        self.find(ident)
            .and_then(|p| p.values.first())
            .map(String::as_str)
    }

    /// Whether the node has property `ident`.
    pub fn has(&self, ident: &str) -> bool {
        self.find(ident).is_some()
    }

    /// All properties in written order, as `(identifier, values)`.
    pub fn properties(&self) -> impl Iterator<Item = (&str, &[String])> {
        self.properties
            .iter()
            .map(|p| (p.ident.as_str(), p.values.as_slice()))
    }

    /// Appends `value` to property `ident`, creating it at the end of the
    /// node if it is new. `ident` should be uppercase letters (FF[4]).
    pub fn push(&mut self, ident: &str, value: impl Into<String>) {
        self.push_at(ident, value.into(), TextPos::default(), TextPos::default());
    }

    /// Where the node's `;` was in the text.
    pub fn position(&self) -> TextPos {
        self.pos
    }

    pub(crate) fn with_position(pos: TextPos) -> SgfNode {
        SgfNode {
            pos,
            ..SgfNode::default()
        }
    }

    pub(crate) fn push_at(
        &mut self,
        ident: &str,
        value: String,
        ident_pos: TextPos,
        value_pos: TextPos,
    ) {
        match self.properties.iter_mut().find(|p| p.ident == ident) {
            Some(p) => {
                p.values.push(value);
                p.value_pos.push(value_pos);
            }
            None => self.properties.push(Property {
                ident: ident.to_string(),
                values: vec![value],
                ident_pos,
                value_pos: vec![value_pos],
            }),
        }
    }

    /// Where property `ident` was written (its identifier).
    pub(crate) fn ident_position(&self, ident: &str) -> TextPos {
        self.find(ident).map(|p| p.ident_pos).unwrap_or(self.pos)
    }

    /// Where value `i` of property `ident` was written (its `[`).
    pub(crate) fn value_position(&self, ident: &str, i: usize) -> TextPos {
        self.find(ident)
            .and_then(|p| p.value_pos.get(i).copied())
            .unwrap_or(self.pos)
    }

    fn find(&self, ident: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.ident == ident)
    }
}

/// One game: a tree of [`SgfNode`]s. The root always exists.
#[derive(Debug, Clone, PartialEq)]
pub struct SgfTree {
    nodes: Vec<SgfNode>,
}

impl SgfTree {
    /// A tree holding only `root`.
    pub fn new(root: SgfNode) -> SgfTree {
        let mut root = root;
        root.children.clear();
        SgfTree { nodes: vec![root] }
    }

    /// The root node (game information and setup live here).
    pub fn root(&self) -> &SgfNode {
        &self.nodes[0]
    }

    /// Node `id`, if it is in this tree.
    pub fn node(&self, id: NodeId) -> Option<&SgfNode> {
        self.nodes.get(id.0 as usize)
    }

    /// The children of node `id` (variations), main line first.
    pub fn children(&self, id: NodeId) -> &[NodeId] {
        self.node(id).map(|n| n.children.as_slice()).unwrap_or(&[])
    }

    /// Adds `node` as the last child of `parent` and returns its id, or
    /// `None` if `parent` is not in the tree.
    pub fn add_child(&mut self, parent: NodeId, node: SgfNode) -> Option<NodeId> {
        let id = NodeId(u32::try_from(self.nodes.len()).ok()?);
        let mut node = node;
        node.children.clear();
        self.nodes.get_mut(parent.0 as usize)?.children.push(id);
        self.nodes.push(node);
        Some(id)
    }

    /// Number of nodes in all variations.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: a tree has at least its root.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The main line: the root, then the first child at every node.
    pub fn main_line(&self) -> impl Iterator<Item = &SgfNode> + '_ {
        let mut next = Some(NodeId::ROOT);
        std::iter::from_fn(move || {
            let node = self.node(next?)?;
            next = node.children.first().copied();
            Some(node)
        })
    }
}
