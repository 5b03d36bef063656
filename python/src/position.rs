//! `engine_go.Position`: a board with KataGo's rules (ko, superko, suicide,
//! encore), history, scoring, SGF and the network's input features, over
//! the engine's game core (`engine::game`).

use engine::game::sgf::{parse_collection, write_sgf, GameRecord};
use engine::game::{Board, BoardHistory, Color, GameState, Loc, Move, Player, Rules};
use engine::nn::{FeatureEncoder, InputVersion, NnInputParams};
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::errors::value_error;

/// A Go position: board, rules and komi, the moves so far and the player
/// to move.
///
/// ``Position(size=19, moves=(), rules="tromp-taylor", komi=7.5, setup=None, to_play=None)``
///
/// - ``size``: ``19`` or ``(x, y)`` for a rectangular board (columns, rows),
///   2 to 19 each.
/// - ``moves``: moves played in turn from the start (``"D4"``, ``"pass"``,
///   ``(x, y)``), or ``(color, move)`` pairs as in a KataGo query
///   (``("B", "D4")``).
/// - ``rules``: a KataGo rules name (``"tromp-taylor"``, ``"chinese"``,
///   ``"japanese"``, ``"korean"``, ``"aga"``, ...), KataGo's compact string
///   (``"koSIMPLEscoreAREAtaxNONEsui0"``) or a dict of KataGo's JSON rules.
/// - ``setup``: stones placed before the first move, as ``(color, move)``
///   pairs (KataGo's ``initialStones``). With only black stones, white
///   moves first (handicap), as in KataGo.
/// - ``to_play``: who moves first (``"B"``/``"W"``, KataGo's
///   ``initialPlayer``); by default the first move's color, else as above.
///
/// Points are ``(x, y)`` with ``x`` the column from the left and ``y`` the
/// row from the **top**, the same order as ``board[y, x]`` and as the
/// network's policy index ``y * width + x``; GTP coordinates (``"D4"``)
/// count rows from the bottom.
#[pyclass(module = "engine_go")]
#[derive(Clone)]
pub struct Position {
    pub(crate) state: GameState,
}

/// A point or pass from Python: a GTP string or an `(x, y)` pair.
fn parse_move(board: &Board, obj: &Bound<'_, PyAny>) -> PyResult<Move> {
    let (x_size, y_size) = (board.x_size(), board.y_size());
    if let Ok(s) = obj.downcast::<PyString>() {
        let text = s.to_cow()?;
        return Move::parse(&text, x_size, y_size).map_err(value_error);
    }
    if obj.is_none() {
        return Ok(Move::Pass);
    }
    if let Ok((x, y)) = obj.extract::<(i64, i64)>() {
        if x < 0 || y < 0 || x as usize >= x_size || y as usize >= y_size {
            return Err(value_error(format!(
                "point ({x}, {y}) is off the {x_size}x{y_size} board"
            )));
        }
        return Ok(Move::Play(board.loc(x as usize, y as usize)));
    }
    Err(PyTypeError::new_err(format!(
        "a move is a GTP string (\"D4\", \"pass\") or an (x, y) pair, not {}",
        obj.repr()?
    )))
}

/// `"B"`/`"W"` (or `"black"`/`"white"`) from Python.
fn parse_player(obj: &Bound<'_, PyAny>) -> PyResult<Player> {
    let s: String = obj
        .extract()
        .map_err(|_| PyTypeError::new_err("a color is \"B\" or \"W\""))?;
    Player::parse(&s).ok_or_else(|| value_error(format!("not a color: {s:?} (\"B\" or \"W\")")))
}

/// A `(color, move)` pair, if `obj` is one.
fn as_pair(board: &Board, obj: &Bound<'_, PyAny>) -> PyResult<Option<(Player, Move)>> {
    if obj.is_instance_of::<PyString>() {
        return Ok(None);
    }
    match obj.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>() {
        Ok((c, m)) if c.is_instance_of::<PyString>() => {
            Ok(Some((parse_player(&c)?, parse_move(board, &m)?)))
        }
        _ => Ok(None),
    }
}

/// Board size from `19` or `(x, y)`.
fn parse_size(obj: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    if let Ok(n) = obj.extract::<usize>() {
        return Ok((n, n));
    }
    obj.extract::<(usize, usize)>()
        .map_err(|_| PyTypeError::new_err("size is an int or an (x, y) pair"))
}

/// Rules from a name, compact string or dict (KataGo's JSON rules).
fn parse_rules(py: Python<'_>, obj: &Bound<'_, PyAny>, komi: f32) -> PyResult<Rules> {
    let text = if let Ok(s) = obj.extract::<String>() {
        s
    } else if obj.is_instance_of::<PyDict>() {
        py.import("json")?
            .call_method1("dumps", (obj,))?
            .extract::<String>()?
    } else {
        return Err(PyTypeError::new_err(
            "rules is a KataGo rules name, a compact rules string or a dict",
        ));
    };
    Rules::parse_without_komi(&text, komi).map_err(value_error)
}

/// `Position.features()`: the spatial planes and the global inputs.
type Features<'py> = (Bound<'py, PyArray3<f32>>, Bound<'py, PyArray1<f32>>);

fn xy_of(board: &Board, loc: Loc) -> (usize, usize) {
    loc.xy(board.x_size())
}

impl Position {
    /// A new game on an empty board (plus `setup` stones).
    fn start(
        (x, y): (usize, usize),
        rules: Rules,
        setup: &[(Player, Move)],
        first: Option<Player>,
    ) -> PyResult<Position> {
        let mut board = Board::new(x, y).map_err(value_error)?;
        let mut placements = Vec::with_capacity(setup.len());
        for &(p, m) in setup {
            let Move::Play(loc) = m else {
                return Err(value_error("a setup stone cannot be a pass"));
            };
            placements.push((loc, p.color()));
        }
        if !board.set_stones_fail_if_no_libs(&placements) {
            return Err(value_error(
                "setup stones rejected: a point is given twice or a group has no liberties",
            ));
        }
        // KataGo (CompactSgf::setupInitialBoardAndHist, and queries'
        // initialPlayer default): only black setup stones = handicap, so
        // white moves first.
        let all_black = !setup.is_empty() && setup.iter().all(|&(p, _)| p == Player::Black);
        let next = first.unwrap_or(if all_black {
            Player::White
        } else {
            Player::Black
        });
        let mut hist = BoardHistory::new(&board, next, rules);
        hist.set_assume_multiple_starting_black_moves_are_handicap(true);
        Ok(Position {
            state: GameState::new(board, hist, next),
        })
    }

    /// Plays `mv` for `pla` if legal under the rules (ko, superko,
    /// suicide, encore); the next player is then `pla`'s opponent. A move
    /// out of turn first restarts the history at the current board, as
    /// KataGo's GTP and analysis queries do (`setPlayerIfNew`).
    pub(crate) fn try_play(&mut self, mv: Move, pla: Player) -> Result<(), String> {
        let s = &self.state;
        let (x, y) = (s.board.x_size(), s.board.y_size());
        if s.hist.is_game_finished() {
            return Err(format!(
                "illegal move {} {}: the game is finished",
                pla.letter(),
                mv.to_gtp(x, y)
            ));
        }
        let mut next = if pla == s.next {
            None
        } else {
            let mut t = s.clone();
            t.set_player_if_new(pla);
            Some(t)
        };
        let t = next.as_mut().unwrap_or(&mut self.state);
        if !t.hist.is_legal(&t.board, mv, pla) {
            return Err(format!(
                "illegal move {} {} (occupied, ko, superko or suicide under these rules)",
                pla.letter(),
                mv.to_gtp(x, y)
            ));
        }
        t.hist.play(&mut t.board, mv, pla);
        t.next = pla.opp();
        if let Some(t) = next {
            self.state = t;
        }
        Ok(())
    }

    fn gtp(&self, mv: Move) -> String {
        mv.to_gtp(self.state.board.x_size(), self.state.board.y_size())
    }

    /// KataGo's `RE` text of a finished game.
    fn result_text(&self) -> Option<String> {
        let h = &self.state.hist;
        if !h.is_game_finished() {
            return None;
        }
        if h.is_no_result() {
            return Some("Void".into());
        }
        let s = h.final_white_minus_black_score();
        Some(if s > 0.0 {
            format!("W+{s}")
        } else if s < 0.0 {
            format!("B+{}", -s)
        } else {
            "0".into()
        })
    }

    /// The V7 input features (or the version `inputs`), `[C, H, W]` and `[G]`.
    pub(crate) fn encode(&self, inputs: InputVersion, history: bool) -> (Vec<f32>, Vec<f32>) {
        let s = &self.state;
        let area = s.board.x_size() * s.board.y_size();
        let mut spatial = vec![0.0; inputs.num_spatial_features() * area];
        let mut global = vec![0.0; inputs.num_global_features()];
        let params = NnInputParams {
            max_history: if history { 1000 } else { 0 },
            ..NnInputParams::default()
        };
        FeatureEncoder::new().fill_row(
            inputs,
            &s.board,
            &s.hist,
            s.next,
            &params,
            &mut spatial,
            &mut global,
        );
        (spatial, global)
    }
}

#[pymethods]
impl Position {
    #[new]
    #[pyo3(signature = (size=None, moves=None, rules=None, komi=7.5, setup=None, to_play=None))]
    fn new(
        py: Python<'_>,
        size: Option<&Bound<'_, PyAny>>,
        moves: Option<&Bound<'_, PyAny>>,
        rules: Option<&Bound<'_, PyAny>>,
        komi: f32,
        setup: Option<&Bound<'_, PyAny>>,
        to_play: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Position> {
        let dims = match size {
            Some(s) => parse_size(s)?,
            None => (19, 19),
        };
        let rules = match rules {
            Some(r) => parse_rules(py, r, komi)?,
            None => Rules::parse_without_komi("tromp-taylor", komi).map_err(value_error)?,
        };
        // Parsing points needs a board of the right size.
        let probe = Board::new(dims.0, dims.1).map_err(value_error)?;
        let mut stones = Vec::new();
        if let Some(setup) = setup {
            for item in setup.try_iter()? {
                let item = item?;
                let pair = as_pair(&probe, &item)?
                    .ok_or_else(|| PyTypeError::new_err("setup stones are (color, point) pairs"))?;
                stones.push(pair);
            }
        }
        let mut items = Vec::new();
        if let Some(moves) = moves {
            for item in moves.try_iter()? {
                let item = item?;
                items.push(match as_pair(&probe, &item)? {
                    Some((p, m)) => (Some(p), m),
                    None => (None, parse_move(&probe, &item)?),
                });
            }
        }
        let first = match to_play {
            Some(p) if !p.is_none() => Some(parse_player(p)?),
            _ => items.first().and_then(|(p, _)| *p),
        };
        let mut pos = Position::start(dims, rules, &stones, first)?;
        for (i, (pla, mv)) in items.into_iter().enumerate() {
            let pla = pla.unwrap_or(pos.state.next);
            pos.try_play(mv, pla)
                .map_err(|e| value_error(format!("move {}: {e}", i + 1)))?;
        }
        Ok(pos)
    }

    /// Plays ``move`` (``"D4"``, ``"pass"``, ``(x, y)``) for the player to
    /// move, or for ``color`` (``"B"``/``"W"``) if given. Raises
    /// ``ValueError`` for an illegal move (occupied, ko, superko, suicide
    /// where the rules forbid it, or a finished game).
    #[pyo3(signature = (move_, color=None))]
    fn play(&mut self, move_: &Bound<'_, PyAny>, color: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let mv = parse_move(&self.state.board, move_)?;
        let pla = match color {
            Some(c) => parse_player(c)?,
            None => self.state.next,
        };
        self.try_play(mv, pla).map_err(value_error)
    }

    /// The legal moves of the player to move, GTP coordinates, ``"pass"``
    /// last; empty once the game is finished.
    fn legal_moves(&self) -> Vec<String> {
        let s = &self.state;
        if s.hist.is_game_finished() {
            return Vec::new();
        }
        let mut out: Vec<String> = s
            .board
            .locs()
            .map(Move::Play)
            .chain(std::iter::once(Move::Pass))
            .filter(|&m| s.hist.is_legal(&s.board, m, s.next))
            .map(|m| self.gtp(m))
            .collect();
        out.shrink_to_fit();
        out
    }

    /// Whether the player to move may play ``move``.
    fn is_legal(&self, move_: &Bound<'_, PyAny>) -> PyResult<bool> {
        let mv = parse_move(&self.state.board, move_)?;
        let s = &self.state;
        Ok(!s.hist.is_game_finished() && s.hist.is_legal(&s.board, mv, s.next))
    }

    /// The player to move: ``"B"`` or ``"W"``.
    #[getter]
    fn to_play(&self) -> String {
        self.state.next.letter().to_string()
    }

    /// ``(x, y)``: columns and rows.
    #[getter]
    fn size(&self) -> (usize, usize) {
        (self.state.board.x_size(), self.state.board.y_size())
    }

    /// The komi (points for white).
    #[getter]
    fn komi(&self) -> f32 {
        self.state.hist.rules().komi
    }

    /// The rules as KataGo's JSON rules dict (komi included).
    #[getter]
    fn rules<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = self.state.hist.rules().to_json(true).to_string();
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The stones: an ``int8`` array ``[rows, columns]`` (row 0 at the
    /// top), 1 black, -1 white, 0 empty.
    #[getter]
    fn board<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i8>>> {
        let b = &self.state.board;
        let (w, h) = (b.x_size(), b.y_size());
        let mut a = Array2::<i8>::zeros((h, w));
        for loc in b.locs() {
            let (x, y) = xy_of(b, loc);
            a[[y, x]] = match b.get(loc) {
                Color::Black => 1,
                Color::White => -1,
                _ => 0,
            };
        }
        Ok(a.into_pyarray(py))
    }

    /// The moves played since the start, as ``(color, GTP move)`` pairs.
    #[getter]
    fn moves(&self) -> Vec<(String, String)> {
        self.state
            .hist
            .moves()
            .iter()
            .map(|&(m, p)| (p.letter().to_string(), self.gtp(m)))
            .collect()
    }

    /// Whether the game has ended (two passes under area scoring; the end
    /// of the second encore phase under territory scoring; see KataGo's
    /// rules).
    #[getter]
    fn is_finished(&self) -> bool {
        self.state.hist.is_game_finished()
    }

    /// The encore phase (territory scoring): 0 in the main phase, 1 or 2.
    #[getter]
    fn encore_phase(&self) -> u8 {
        self.state.hist.encore_phase()
    }

    /// The final score of a finished game, **white minus black** (KataGo's
    /// sign), komi and the rules' bonuses included; 0 is a draw. Raises
    /// ``ValueError`` if the game is not finished or has no result.
    fn score(&self) -> PyResult<f32> {
        let h = &self.state.hist;
        if !h.is_game_finished() {
            return Err(value_error(
                "the game is not finished: score() needs a game ended by passes",
            ));
        }
        if h.is_no_result() {
            return Err(value_error("the game ended with no result"));
        }
        Ok(h.final_white_minus_black_score())
    }

    /// The result of a finished game as SGF writes it (``"B+3.5"``,
    /// ``"W+1"``, ``"0"``, ``"Void"``), ``None`` before the end.
    fn result(&self) -> Option<String> {
        self.result_text()
    }

    /// KataGo's input features of version 7 (22 spatial planes, 19 global
    /// values) for the player to move: ``(spatial [22, rows, columns],
    /// global [19])``, ``float32``, the board's own size. ``history=False``
    /// hides the previous moves as KataGo's analysis does at the root
    /// (``ignorePreRootHistory``).
    #[pyo3(signature = (history=true))]
    fn features<'py>(&self, py: Python<'py>, history: bool) -> PyResult<Features<'py>> {
        let (spatial, global) = self.encode(InputVersion::V7, history);
        let (w, h) = self.size();
        let c = InputVersion::V7.num_spatial_features();
        let spatial = Array3::from_shape_vec((c, h, w), spatial).map_err(value_error)?;
        Ok((
            spatial.into_pyarray(py),
            Array1::from(global).into_pyarray(py),
        ))
    }

    /// A copy of this position.
    fn copy(&self) -> Position {
        self.clone()
    }

    fn __copy__(&self) -> Position {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Position {
        self.clone()
    }

    /// The position of the first game of an SGF text: size, komi (``KM``,
    /// else 7.5), rules (``RU``: a KataGo rules name or compact string,
    /// else tromp-taylor), setup stones and the main line's moves, every
    /// move checked for legality. Territory games go through the encore as
    /// written. Raises ``ValueError`` on bad SGF or an illegal move.
    #[staticmethod]
    fn from_sgf(text: &str) -> PyResult<Position> {
        let trees = parse_collection(text).map_err(value_error)?;
        let rec = trees
            .first()
            .ok_or_else(|| value_error("no game in the SGF text"))?
            .record()
            .map_err(value_error)?;
        let komi = rec.komi.unwrap_or(7.5);
        let rules = Rules::parse_without_komi(rec.rules.as_deref().unwrap_or("tromp-taylor"), komi)
            .map_err(|e| value_error(format!("RU: {e}")))?;
        let probe = Board::new(rec.x_size, rec.y_size).map_err(value_error)?;
        let mut setup = Vec::new();
        for &(c, (x, y)) in &rec.setup {
            let pla = match c {
                Color::Black => Player::Black,
                Color::White => Player::White,
                // AE before any stone: nothing to clear on an empty board.
                _ => continue,
            };
            setup.push((pla, Move::Play(probe.loc(x, y))));
        }
        let first = rec.moves.first().map(|&(p, _)| p).or(rec.player_to_move);
        let mut pos = Position::start((rec.x_size, rec.y_size), rules, &setup, first)?;
        for (i, &(pla, xy)) in rec.moves.iter().enumerate() {
            let mv = xy.map_or(Move::Pass, |(x, y)| Move::Play(probe.loc(x, y)));
            pos.try_play(mv, pla)
                .map_err(|e| value_error(format!("SGF move {}: {e}", i + 1)))?;
        }
        Ok(pos)
    }

    /// This game as SGF (FF[4]): size, komi, KataGo's compact rules string
    /// in ``RU``, setup stones, every move, and ``RE`` once finished.
    fn to_sgf(&self) -> String {
        let s = &self.state;
        let (w, h) = self.size();
        let mut rec = GameRecord::new(w, h);
        let rules = s.hist.rules();
        rec.komi = Some(rules.komi);
        rec.rules = Some(rules.to_compact_string());
        rec.result = self.result_text();
        let initial = s.hist.initial_board();
        for loc in initial.locs() {
            match initial.get(loc) {
                Color::Black => rec.setup.push((Color::Black, xy_of(initial, loc))),
                Color::White => rec.setup.push((Color::White, xy_of(initial, loc))),
                _ => {}
            }
        }
        rec.player_to_move = (!rec.setup.is_empty()).then(|| s.hist.initial_pla());
        rec.moves = s
            .hist
            .moves()
            .iter()
            .map(|&(m, p)| (p, m.loc().map(|l| xy_of(initial, l))))
            .collect();
        write_sgf(&rec)
    }

    fn __repr__(&self) -> String {
        let (w, h) = self.size();
        format!(
            "Position(size=({w}, {h}), moves={}, to_play={:?}, komi={})",
            self.state.hist.moves().len(),
            self.to_play(),
            self.komi()
        )
    }

    fn __str__(&self) -> String {
        self.state.board.to_string()
    }
}
