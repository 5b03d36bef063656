//! The typed view of a game: [`GameRecord`], read from the main line of an
//! [`SgfTree`].

use super::error::{SgfError, SgfErrorKind};
use super::tree::{NodeId, SgfNode, SgfTree};
use crate::game::{Color, Player, MAX_LEN, MIN_LEN};

/// A game as the engine needs it: board size, game information, setup and
/// the moves of the main line. Text fields are raw SGF text (decoded);
/// `rules` is parsed by the rules module.
#[derive(Debug, Clone, PartialEq)]
pub struct GameRecord {
    /// Columns (`SZ[19]`, or `X` of `SZ[X:Y]`); 19 when `SZ` is absent.
    pub x_size: usize,
    /// Rows (`Y` of `SZ[X:Y]`).
    pub y_size: usize,
    /// `KM`.
    pub komi: Option<f32>,
    /// `HA`.
    pub handicap: Option<u32>,
    /// `RU`, raw (KataGo also writes its own compact rules string here).
    pub rules: Option<String>,
    /// `RE`, raw (`B+R`, `W+3.5`, `0`, `Void`, ...).
    pub result: Option<String>,
    /// Setup stones from `AB`/`AW`/`AE` (the last as [`Color::Empty`]) in
    /// the nodes before the first move, in written order, point lists
    /// expanded row by row.
    pub setup: Vec<(Color, (usize, usize))>,
    /// `PL`: who moves first after the setup.
    pub player_to_move: Option<Player>,
    /// Main-line moves: `B`/`W`, `None` for a pass.
    pub moves: Vec<(Player, Option<(usize, usize)>)>,
    /// `C` of the root node.
    pub game_comment: Option<String>,
    /// `PB`.
    pub player_black: Option<String>,
    /// `PW`.
    pub player_white: Option<String>,
    /// `DT`.
    pub date: Option<String>,
    /// `EV`.
    pub event: Option<String>,
    /// `GN`.
    pub game_name: Option<String>,
}

impl GameRecord {
    /// An empty game on an `x_size` by `y_size` board.
    pub fn new(x_size: usize, y_size: usize) -> GameRecord {
        GameRecord {
            x_size,
            y_size,
            komi: None,
            handicap: None,
            rules: None,
            result: None,
            setup: Vec::new(),
            player_to_move: None,
            moves: Vec::new(),
            game_comment: None,
            player_black: None,
            player_white: None,
            date: None,
            event: None,
            game_name: None,
        }
    }
}

impl SgfTree {
    /// Reads the main line as a [`GameRecord`].
    ///
    /// Game information comes from the root node. Setup (`AB`, `AW`, `AE`,
    /// `PL`) may stand in any node before the first move, moves in any node
    /// including the root. `B[]` is a pass, and so is `B[tt]` when `tt` is
    /// off the board (FF[3]); every other point must be on the board.
    pub fn record(&self) -> Result<GameRecord, SgfError> {
        let root = self.root();
        if let Some(gm) = single(root, "GM")? {
            if gm.trim() != "1" {
                return Err(SgfError::at(
                    root.value_position("GM", 0),
                    SgfErrorKind::NotGo(gm.to_string()),
                ));
            }
        }
        let (x_size, y_size) = board_size(root)?;
        let mut rec = GameRecord::new(x_size, y_size);
        rec.komi = number(root, "KM", |s| {
            s.parse::<f32>().ok().filter(|k| k.is_finite())
        })?;
        rec.handicap = number(root, "HA", |s| s.parse::<u32>().ok())?;
        let text = |ident| single(root, ident).map(|v| v.map(str::to_string));
        rec.rules = text("RU")?;
        rec.result = text("RE")?;
        rec.game_comment = text("C")?;
        rec.player_black = text("PB")?;
        rec.player_white = text("PW")?;
        rec.date = text("DT")?;
        rec.event = text("EV")?;
        rec.game_name = text("GN")?;

        for node in self.main_line() {
            read_setup(node, &mut rec)?;
            let black = node.get("B").is_some();
            let white = node.get("W").is_some();
            if black && white {
                return Err(SgfError::at(
                    node.ident_position("W"),
                    SgfErrorKind::TwoMovesInNode,
                ));
            }
            for (player, ident) in [(Player::Black, "B"), (Player::White, "W")] {
                if let Some(value) = single(node, ident)? {
                    let at = read_move(value, x_size, y_size)
                        .map_err(|reason| bad_point(node, ident, 0, value, reason))?;
                    rec.moves.push((player, at));
                }
            }
        }
        Ok(rec)
    }
}

/// One node of a tree as a step of play, for walks over every variation
/// ([`SgfTree::step`]): its setup, who moves next, its move and comment.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeStep {
    /// `AB`/`AW`/`AE` stones, as in [`GameRecord::setup`].
    pub setup: Vec<(Color, (usize, usize))>,
    /// `PL`.
    pub player_to_move: Option<Player>,
    /// `B` or `W`: the player and the point (`None`: a pass).
    pub mv: Option<(Player, Option<(usize, usize)>)>,
    /// `C`.
    pub comment: Option<String>,
}

impl SgfTree {
    /// The board size (`SZ`), as [`SgfTree::record`] reads it.
    pub fn board_size(&self) -> Result<(usize, usize), SgfError> {
        board_size(self.root())
    }

    /// Node `id` as a typed [`NodeStep`] on this tree's board, with the
    /// same rules for points as [`SgfTree::record`] (`None`: no such node).
    pub fn step(&self, id: NodeId) -> Option<Result<NodeStep, SgfError>> {
        let node = self.node(id)?;
        Some(self.read_step(node))
    }

    fn read_step(&self, node: &SgfNode) -> Result<NodeStep, SgfError> {
        let (x_size, y_size) = self.board_size()?;
        let mut rec = GameRecord::new(x_size, y_size);
        read_setup(node, &mut rec)?;
        if node.get("B").is_some() && node.get("W").is_some() {
            return Err(SgfError::at(
                node.ident_position("W"),
                SgfErrorKind::TwoMovesInNode,
            ));
        }
        let mut mv = None;
        for (player, ident) in [(Player::Black, "B"), (Player::White, "W")] {
            if let Some(value) = single(node, ident)? {
                let at = read_move(value, x_size, y_size)
                    .map_err(|reason| bad_point(node, ident, 0, value, reason))?;
                mv = Some((player, at));
            }
        }
        Ok(NodeStep {
            setup: rec.setup,
            player_to_move: rec.player_to_move,
            mv,
            comment: single(node, "C")?.map(str::to_string),
        })
    }
}

/// `AB`/`AW`/`AE`/`PL` of one node, in written order.
fn read_setup(node: &SgfNode, rec: &mut GameRecord) -> Result<(), SgfError> {
    for (ident, values) in node.properties() {
        let color = match ident {
            "AB" => Color::Black,
            "AW" => Color::White,
            "AE" => Color::Empty,
            "PL" => Color::Wall,
            _ => continue,
        };
        if !rec.moves.is_empty() {
            return Err(SgfError::at(
                node.ident_position(ident),
                SgfErrorKind::SetupAfterMove(ident.to_string()),
            ));
        }
        if color == Color::Wall {
            let value = single(node, ident)?.unwrap_or_default();
            let player = Player::parse(value.trim()).ok_or_else(|| {
                SgfError::at(
                    node.value_position(ident, 0),
                    SgfErrorKind::BadPlayer(value.to_string()),
                )
            })?;
            rec.player_to_move = Some(player);
            continue;
        }
        for (i, value) in values.iter().enumerate() {
            let ((x0, y0), (x1, y1)) = read_point_or_rectangle(value, rec.x_size, rec.y_size)
                .map_err(|reason| bad_point(node, ident, i, value, reason))?;
            for y in y0..=y1 {
                for x in x0..=x1 {
                    rec.setup.push((color, (x, y)));
                }
            }
        }
    }
    Ok(())
}

/// The only value of `ident`, or an error if it has several.
fn single<'a>(node: &'a SgfNode, ident: &str) -> Result<Option<&'a str>, SgfError> {
    match node.get(ident) {
        None => Ok(None),
        Some([v]) => Ok(Some(v.as_str())),
        Some(_) => Err(SgfError::at(
            node.value_position(ident, 1),
            SgfErrorKind::MultipleValues(ident.to_string()),
        )),
    }
}

/// A number property, surrounding whitespace allowed, anything else not.
fn number<T>(
    node: &SgfNode,
    ident: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, SgfError> {
    let Some(value) = single(node, ident)? else {
        return Ok(None);
    };
    parse(value.trim()).map(Some).ok_or_else(|| {
        SgfError::at(
            node.value_position(ident, 0),
            SgfErrorKind::BadNumber {
                property: ident.to_string(),
                value: value.to_string(),
            },
        )
    })
}

// The size messages are static strings: they must follow the limits.
const _: () = assert!(MIN_LEN == 2 && MAX_LEN == 37);

/// `SZ[N]` or `SZ[X:Y]`; 19x19 when absent.
fn board_size(root: &SgfNode) -> Result<(usize, usize), SgfError> {
    let Some(value) = single(root, "SZ")? else {
        return Ok((19, 19));
    };
    let fail = |reason| {
        SgfError::at(
            root.value_position("SZ", 0),
            SgfErrorKind::BadSize {
                value: value.to_string(),
                reason,
            },
        )
    };
    let edge = |s: &str| {
        let s = s.trim();
        // Digits only: `usize::parse` would also take a leading `+`.
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(fail("not a number"));
        }
        match s.parse::<usize>() {
            Ok(n) if (MIN_LEN..=MAX_LEN).contains(&n) => Ok(n),
            Ok(n) if n < MIN_LEN => Err(fail("edge is smaller than 2 (each side must be 2 to 37)")),
            _ => Err(fail("edge is larger than 37 (each side must be 2 to 37)")),
        }
    };
    match value.split_once(':') {
        Some((x, y)) => Ok((edge(x)?, edge(y)?)),
        None => {
            let n = edge(value)?;
            Ok((n, n))
        }
    }
}

fn bad_point(node: &SgfNode, ident: &str, i: usize, value: &str, reason: &'static str) -> SgfError {
    SgfError::at(
        node.value_position(ident, i),
        SgfErrorKind::BadPoint {
            property: ident.to_string(),
            value: value.to_string(),
            reason,
        },
    )
}

/// The coordinate of one SGF letter: `a..z` are 0..25, `A..Z` 26..51.
fn coordinate(c: u8) -> Option<usize> {
    match c {
        b'a'..=b'z' => Some((c - b'a') as usize),
        b'A'..=b'Z' => Some((c - b'A') as usize + 26),
        _ => None,
    }
}

/// A board point `(x, y)`, `y = 0` at the top.
type Point = (usize, usize);

/// The SGF letter of coordinate `i` (`i < 52`).
pub(super) fn letter(i: usize) -> char {
    const LETTERS: &[u8; 52] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    LETTERS.get(i).map_or('?', |&b| b as char)
}

/// A two-letter point on an `x_size` by `y_size` board.
fn read_point(s: &str, x_size: usize, y_size: usize) -> Result<(usize, usize), &'static str> {
    let &[cx, cy] = s.as_bytes() else {
        return Err("a point is two letters");
    };
    let (Some(x), Some(y)) = (coordinate(cx), coordinate(cy)) else {
        return Err("a point is two letters");
    };
    if x >= x_size || y >= y_size {
        return Err("off the board");
    }
    Ok((x, y))
}

/// A move value: a point, or a pass (`""`, or `tt` where that is off the
/// board, as FF[3] and KataGo have it).
fn read_move(
    s: &str,
    x_size: usize,
    y_size: usize,
) -> Result<Option<(usize, usize)>, &'static str> {
    if s.is_empty() || (s == "tt" && (x_size <= 19 || y_size <= 19)) {
        return Ok(None);
    }
    read_point(s, x_size, y_size).map(Some)
}

/// One element of a point list: `xy`, or the rectangle `xy:xy` (FF[4]
/// compressed lists), returned as its (top-left, bottom-right) corners
/// whichever two opposite corners were written.
fn read_point_or_rectangle(
    s: &str,
    x_size: usize,
    y_size: usize,
) -> Result<(Point, Point), &'static str> {
    match s.split_once(':') {
        None => {
            let p = read_point(s, x_size, y_size)?;
            Ok((p, p))
        }
        Some((a, b)) => {
            let (xa, ya) = read_point(a, x_size, y_size)?;
            let (xb, yb) = read_point(b, x_size, y_size)?;
            Ok(((xa.min(xb), ya.min(yb)), (xa.max(xb), ya.max(yb))))
        }
    }
}
