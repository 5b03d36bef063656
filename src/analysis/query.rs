//! Parsing one input line of KataGo's JSON analysis protocol into a typed
//! [`Request`], with KataGo's error and warning texts.
//!
//! Parsing needs no board and no search. What needs those (replaying the
//! moves, applying `overrideSettings` to the search parameters) happens
//! later, in the server, and reports errors in the same shapes.
//!
//! The checks run in KataGo's order (`cpp/command/analysis.cpp`), and the
//! first failing field ends the query with one error, as there.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::game::{
    komi_is_int_or_half_int, Move, Player, Rules, WhiteHandicapBonusRule, MAX_LEN, MAX_USER_KOMI,
    MIN_LEN,
};

/// Top-level keys an analysis or action query may carry; anything else draws
/// an "unexpected field" warning (KataGo's `expectedKeys`).
const EXPECTED_KEYS: &[&str] = &[
    "id",
    "action",
    "terminateId",
    "turnNumbers",
    "boardXSize",
    "boardYSize",
    "initialStones",
    "moves",
    "initialPlayer",
    "analyzeTurns",
    "priorities",
    "rules",
    "komi",
    "whiteHandicapBonus",
    "overrideSettings",
    "maxVisits",
    "analysisPVLen",
    "rootFpuReductionMax",
    "rootPolicyTemperature",
    "includeMovesOwnership",
    "includeMovesOwnershipStdev",
    "includeOwnership",
    "includeOwnershipStdev",
    "includePolicy",
    "includePVVisits",
    "includeNoResultValue",
    "reportDuringSearchEvery",
    "firstReportDuringSearchAfter",
    "priority",
    "allowMoves",
    "avoidMoves",
];

/// Bound on priorities, as KataGo: `[-2^62, 2^62]`.
const MAX_PRIORITY: i64 = 0x3FFF_FFFF_FFFF_FFFF;

/// The warning KataGo gives for an unknown top-level key.
pub const UNUSED_FIELD_WARNING: &str = "Unexpected or unused field, do you have a typo? \
     (set warnUnusedFields=false in the config to disable this warning)";

/// One parsed input line.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// A special action (`query_version`, `terminate`, ...).
    Action(ActionRequest),
    /// Positions to analyze.
    Analyze(Box<AnalyzeQuery>),
}

/// A special action query, with the object to echo back.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionRequest {
    /// The query's `id`.
    pub id: String,
    /// What to do.
    pub action: Action,
    /// The query exactly as received; KataGo answers actions by echoing it
    /// (plus a few fields for `query_version` / `query_models`).
    pub echo: Map<String, Value>,
}

/// The special actions of the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Report the version.
    QueryVersion,
    /// Report the loaded models.
    QueryModels,
    /// Empty the neural net cache.
    ClearCache,
    /// Stop the queries with id `terminate_id` (only the listed turns, if any).
    Terminate {
        terminate_id: String,
        turn_numbers: Option<Vec<i64>>,
    },
    /// Stop all queries (only the listed turns, if any).
    TerminateAll { turn_numbers: Option<Vec<i64>> },
}

/// A `[player, vertex]` pair of `moves` or `initialStones`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedMove {
    pub player: Player,
    pub mv: Move,
}

/// `avoidMoves` / `allowMoves`: per player, the search may not play the
/// listed points (avoid) or anything but them (allow) before `until_depth`
/// plies below the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveRestriction {
    /// Moves the player must not consider.
    Avoid(Vec<RestrictionEntry>),
    /// The only moves the player may consider (at most one entry per player).
    Allow(Vec<RestrictionEntry>),
}

impl MoveRestriction {
    /// Whether `player` may not play `mv` at `depth` plies below the root
    /// (0 = the root's own moves).
    pub fn is_barred(&self, player: Player, mv: Move, depth: u32) -> bool {
        match self {
            MoveRestriction::Avoid(entries) => entries
                .iter()
                .any(|e| e.player == player && depth < e.until_depth && e.moves.contains(&mv)),
            MoveRestriction::Allow(entries) => entries
                .iter()
                .any(|e| e.player == player && depth < e.until_depth && !e.moves.contains(&mv)),
        }
    }
}

/// One dict of `avoidMoves` / `allowMoves`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestrictionEntry {
    pub player: Player,
    pub moves: Vec<Move>,
    /// Plies from the root (1 = only at the root) during which it applies.
    pub until_depth: u32,
}

/// A query to analyze one or more turns of a game, parsed and range-checked.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzeQuery {
    pub id: String,
    pub board_x_size: usize,
    pub board_y_size: usize,
    /// Stones on the board before the first move (never passes).
    pub initial_stones: Vec<PlacedMove>,
    /// The moves of the game in order (passes allowed).
    pub moves: Vec<PlacedMove>,
    /// Who moves at turn 0 when given; else the first mover of `moves`, or
    /// the handicap-aware default.
    pub initial_player: Option<Player>,
    /// Turns to analyze, ascending and distinct (0 = before `moves[0]`).
    pub analyze_turns: Vec<usize>,
    /// Priority of each turn in `analyze_turns`, same order.
    pub turn_priorities: Vec<i64>,
    /// The rules, with the query's `komi` (else the rules' default komi)
    /// and `whiteHandicapBonus` applied.
    pub rules: Rules,
    /// `overrideSettings` as `(key, value)` pairs, keys sorted.
    pub override_settings: Vec<(String, Value)>,
    pub max_visits: Option<i64>,
    pub analysis_pv_len: Option<usize>,
    pub root_fpu_reduction_max: Option<f64>,
    pub root_policy_temperature: Option<f64>,
    pub include_ownership: bool,
    pub include_ownership_stdev: bool,
    pub include_moves_ownership: bool,
    pub include_moves_ownership_stdev: bool,
    pub include_policy: bool,
    pub include_pv_visits: bool,
    pub include_no_result_value: bool,
    /// Seconds between during-search reports, if asked.
    pub report_during_search_every: Option<f64>,
    /// Seconds before the first during-search report, if asked.
    pub first_report_during_search_after: Option<f64>,
    pub restriction: Option<MoveRestriction>,
}

/// An error report: KataGo's general `{"error"}` or per-field
/// `{"error","field","id"}` shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// The line could not be understood as a query at all.
    General(String),
    /// A field of the query with this id is wrong.
    Field {
        id: String,
        field: String,
        message: String,
    },
}

impl QueryError {
    fn field(id: &str, field: &str, message: impl Into<String>) -> QueryError {
        QueryError::Field {
            id: id.to_string(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// The response line for this error (keys sorted, as KataGo writes them).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        match self {
            QueryError::General(message) => {
                m.insert("error".into(), Value::String(message.clone()));
            }
            QueryError::Field { id, field, message } => {
                m.insert("error".into(), Value::String(message.clone()));
                m.insert("field".into(), Value::String(field.clone()));
                m.insert("id".into(), Value::String(id.clone()));
            }
        }
        Value::Object(m)
    }
}

/// A `{"warning","field","id"}` report; the query still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryWarning {
    pub id: String,
    pub field: String,
    pub message: String,
}

impl QueryWarning {
    /// Makes a warning about `field` of the query `id`.
    pub fn new(id: &str, field: &str, message: impl Into<String>) -> QueryWarning {
        QueryWarning {
            id: id.to_string(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// The response line for this warning.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("field".into(), Value::String(self.field.clone()));
        m.insert("id".into(), Value::String(self.id.clone()));
        m.insert("warning".into(), Value::String(self.message.clone()));
        Value::Object(m)
    }
}

/// What one input line gave: warnings to write first, then either a request
/// to carry out or an error to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub warnings: Vec<QueryWarning>,
    pub result: Result<Request, QueryError>,
}

/// Options of the parser that come from the config.
#[derive(Debug, Clone, Copy)]
pub struct ParseOptions {
    /// Warn about unknown top-level keys (`warnUnusedFields`, default true).
    pub warn_unused_fields: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            warn_unused_fields: true,
        }
    }
}

/// Parses one (trimmed, non-empty) input line.
pub fn parse_line(line: &str, opts: &ParseOptions) -> Parsed {
    let mut warnings = Vec::new();
    let result = parse_inner(line, opts, &mut warnings);
    Parsed { warnings, result }
}

fn parse_inner(
    line: &str,
    opts: &ParseOptions,
    warnings: &mut Vec<QueryWarning>,
) -> Result<Request, QueryError> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        QueryError::General(format!(
            "{e} - could not parse input line as json request: {line}"
        ))
    })?;
    let Value::Object(input) = value else {
        return Err(QueryError::General(format!(
            "Request line was valid json but was not an object, ignoring: {value}"
        )));
    };
    let id = match input.get("id") {
        Some(Value::String(s)) => s.clone(),
        _ => {
            return Err(QueryError::General(
                "Request must have a string \"id\" field".to_string(),
            ))
        }
    };
    // As in KataGo, a non-string "action" is not an action query.
    if let Some(Value::String(action)) = input.get("action") {
        let action = parse_action(&id, action, &input)?;
        return Ok(Request::Action(ActionRequest {
            id,
            action,
            echo: input,
        }));
    }
    let query = FieldParser {
        id: &id,
        input: &input,
    }
    .parse_analyze()?;
    if opts.warn_unused_fields {
        for key in input.keys() {
            if !EXPECTED_KEYS.contains(&key.as_str()) {
                warnings.push(QueryWarning::new(&id, key, UNUSED_FIELD_WARNING));
            }
        }
    }
    Ok(Request::Analyze(Box::new(query)))
}

fn parse_action(id: &str, action: &str, input: &Map<String, Value>) -> Result<Action, QueryError> {
    let turn_numbers = || -> Result<Option<Vec<i64>>, QueryError> {
        match input.get("turnNumbers") {
            None => Ok(None),
            Some(v) => int_array(v).map(Some).ok_or_else(|| {
                QueryError::field(
                    id,
                    "turnNumbers",
                    "If provided, must be an array of integers indicating turns to terminate",
                )
            }),
        }
    };
    match action {
        "query_version" => Ok(Action::QueryVersion),
        "query_models" => Ok(Action::QueryModels),
        "clear_cache" => Ok(Action::ClearCache),
        "terminate" => {
            let Some(Value::String(terminate_id)) = input.get("terminateId") else {
                return Err(QueryError::field(
                    id,
                    "terminateId",
                    "Requests for a terminate action must have a string \"terminateId\" field",
                ));
            };
            Ok(Action::Terminate {
                terminate_id: terminate_id.clone(),
                turn_numbers: turn_numbers()?,
            })
        }
        "terminate_all" => Ok(Action::TerminateAll {
            turn_numbers: turn_numbers()?,
        }),
        // KataGo answers this without the id; the id lets the client stop
        // waiting for an answer.
        _ => Err(QueryError::field(
            id,
            "action",
            "'action' field must be 'query_version' or 'query_models' or 'clear_cache' or \
             'terminate' or 'terminate_all'",
        )),
    }
}

/// An array of JSON integers, or None.
fn int_array(v: &Value) -> Option<Vec<i64>> {
    v.as_array()?.iter().map(Value::as_i64).collect()
}

/// Reads the fields of one analysis query.
struct FieldParser<'a> {
    id: &'a str,
    input: &'a Map<String, Value>,
}

impl FieldParser<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> QueryError {
        QueryError::field(self.id, field, message)
    }

    fn get(&self, field: &str) -> Option<&Value> {
        self.input.get(field)
    }

    fn integer(
        &self,
        field: &str,
        min: i64,
        max: i64,
        message: &str,
    ) -> Result<Option<i64>, QueryError> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => integer_in(v, min, max)
                .map(Some)
                .ok_or_else(|| self.err(field, message)),
        }
    }

    fn number(
        &self,
        field: &str,
        min: f64,
        max: f64,
        message: &str,
    ) -> Result<Option<f64>, QueryError> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= min && x <= max => Ok(Some(x)),
                _ => Err(self.err(field, message)),
            },
        }
    }

    fn boolean(&self, field: &str) -> Result<bool, QueryError> {
        match self.get(field) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.err(field, "Must be a boolean")),
        }
    }

    fn parse_analyze(&self) -> Result<AnalyzeQuery, QueryError> {
        let size_error = format!("Must provide an integer from {MIN_LEN} to {MAX_LEN}");
        for field in ["boardXSize", "boardYSize"] {
            if self.get(field).is_none() {
                return Err(self.err(field, size_error.clone()));
            }
        }
        let x_size = self.size("boardXSize", &size_error)?;
        let y_size = self.size("boardYSize", &size_error)?;

        let initial_stones = match self.get("initialStones") {
            Some(v) => self.placed_moves("initialStones", v, x_size, y_size, false)?,
            None => Vec::new(),
        };
        let moves = match self.get("moves") {
            Some(v) => self.placed_moves("moves", v, x_size, y_size, true)?,
            None => {
                return Err(self.err("moves", "Must specify an array of [player,location] pairs"))
            }
        };
        let initial_player = match self.get("initialPlayer") {
            Some(v) => Some(self.player("initialPlayer", v)?),
            None => None,
        };

        let analyze_turns_raw = match self.get("analyzeTurns") {
            Some(v) => Some(int_array(v).ok_or_else(|| {
                self.err(
                    "analyzeTurns",
                    "Must specify an array of integers indicating turns to analyze",
                )
            })?),
            None => None,
        };
        if let Some(turns) = &analyze_turns_raw {
            if let Some(bad) = turns.iter().find(|&&t| t < 0 || t > moves.len() as i64) {
                return Err(self.err("analyzeTurns", format!("Invalid turn number: {bad}")));
            }
        }

        let priorities = self.priorities(analyze_turns_raw.as_deref())?;

        let mut rules = match self.get("rules") {
            Some(v @ (Value::String(_) | Value::Object(_))) => {
                let text = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Rules::parse(&text)
                    .map_err(|_| self.err("rules", format!("Could not parse rules: {text}")))?
            }
            _ => {
                return Err(self.err(
                    "rules",
                    "Must specify rules string, such as \"chinese\" or \"tromp-taylor\", or a \
                     JSON object with detailed rules parameters.",
                ))
            }
        };

        let komi_msg = "Must be a integer or half-integer from -400.0 to 400.0";
        let max_komi = MAX_USER_KOMI as f64;
        if let Some(k) = self.number("komi", -max_komi, max_komi, komi_msg)? {
            let k = k as f32;
            if !komi_is_int_or_half_int(k) {
                return Err(self.err("komi", komi_msg));
            }
            rules.komi = k;
        }

        match self.get("whiteHandicapBonus") {
            None => {}
            Some(Value::String(s)) => {
                rules.white_handicap_bonus_rule =
                    WhiteHandicapBonusRule::parse(s).ok_or_else(|| {
                        self.err(
                            "whiteHandicapBonus",
                            format!("Invalid whiteHandicapBonus rule: {s}"),
                        )
                    })?
            }
            Some(_) => return Err(self.err("whiteHandicapBonus", "Must be a string")),
        }

        let override_settings = match self.get("overrideSettings") {
            None => Vec::new(),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(_) => return Err(self.err("overrideSettings", "Must be an object")),
        };

        let max_visits =
            self.integer("maxVisits", 1, 1 << 50, "Must be an integer from 1 to 2^50")?;
        let analysis_pv_len = self
            .integer(
                "analysisPVLen",
                1,
                1000,
                "Must be an integer from 1 to 1000",
            )?
            .map(|n| n as usize);
        let root_fpu_reduction_max = self.number(
            "rootFpuReductionMax",
            0.0,
            2.0,
            "Must be a number from 0.0 to 2.0",
        )?;
        let root_policy_temperature = self.number(
            "rootPolicyTemperature",
            0.01,
            100.0,
            "Must be a number from 0.01 to 100.0",
        )?;
        let include_moves_ownership = self.boolean("includeMovesOwnership")?;
        let include_moves_ownership_stdev = self.boolean("includeMovesOwnershipStdev")?;
        let include_ownership = self.boolean("includeOwnership")?;
        let include_ownership_stdev = self.boolean("includeOwnershipStdev")?;
        let include_policy = self.boolean("includePolicy")?;
        let include_pv_visits = self.boolean("includePVVisits")?;
        let include_no_result_value = self.boolean("includeNoResultValue")?;
        let seconds_msg = "Must be number of seconds from 0.001 to 1000000.0";
        let report_during_search_every =
            self.number("reportDuringSearchEvery", 0.001, 1_000_000.0, seconds_msg)?;
        let first_report_during_search_after = self.number(
            "firstReportDuringSearchAfter",
            0.001,
            1_000_000.0,
            seconds_msg,
        )?;

        let mut priority = 0;
        if self.get("priority").is_some() {
            if self.get("priorities").is_some() {
                return Err(self.err("priority", "Cannot specify both priority and priorities"));
            }
            priority = self
                .integer(
                    "priority",
                    -MAX_PRIORITY,
                    MAX_PRIORITY,
                    "Must be a number between -2^62 and 2^62",
                )?
                .unwrap_or(0);
        }

        let restriction = self.restriction(x_size, y_size)?;

        // Distinct turns in ascending order, each with its priority (a turn
        // listed twice takes the priority of its last listing, as KataGo's map).
        let mut turns: BTreeMap<usize, i64> = BTreeMap::new();
        match &analyze_turns_raw {
            Some(raw) => {
                for (i, &t) in raw.iter().enumerate() {
                    let p = priorities.as_ref().map_or(priority, |ps| ps[i]);
                    turns.insert(t as usize, p);
                }
            }
            None => {
                turns.insert(moves.len(), priority);
            }
        }

        Ok(AnalyzeQuery {
            id: self.id.to_string(),
            board_x_size: x_size,
            board_y_size: y_size,
            initial_stones,
            moves,
            initial_player,
            analyze_turns: turns.keys().copied().collect(),
            turn_priorities: turns.values().copied().collect(),
            rules,
            override_settings,
            max_visits,
            analysis_pv_len,
            root_fpu_reduction_max,
            root_policy_temperature,
            include_ownership,
            include_ownership_stdev,
            include_moves_ownership,
            include_moves_ownership_stdev,
            include_policy,
            include_pv_visits,
            include_no_result_value,
            report_during_search_every,
            first_report_during_search_after,
            restriction,
        })
    }

    fn size(&self, field: &str, message: &str) -> Result<usize, QueryError> {
        Ok(self
            .integer(field, MIN_LEN as i64, MAX_LEN as i64, message)?
            .unwrap_or(0) as usize)
    }

    fn player(&self, field: &str, v: &Value) -> Result<Player, QueryError> {
        v.as_str()
            .and_then(Player::parse)
            .ok_or_else(|| self.err(field, "Must be \"b\" or \"w\""))
    }

    fn placed_moves(
        &self,
        field: &str,
        v: &Value,
        x_size: usize,
        y_size: usize,
        allow_pass: bool,
    ) -> Result<Vec<PlacedMove>, QueryError> {
        let shape = "Must be an array of pairs of the form: [\"b\" or \"w\", GTP board vertex]";
        let list = v.as_array().ok_or_else(|| self.err(field, shape))?;
        let mut out = Vec::with_capacity(list.len());
        for elt in list {
            let pair = match elt.as_array() {
                Some(p) if p.len() == 2 => p,
                _ => return Err(self.err(field, shape)),
            };
            let (Some(pla), Some(vertex)) = (pair[0].as_str(), pair[1].as_str()) else {
                return Err(self.err(field, shape));
            };
            let player = Player::parse(pla)
                .ok_or_else(|| self.err(field, format!("Could not parse player: {pla}")))?;
            let mv = parse_vertex(vertex, x_size, y_size, allow_pass).ok_or_else(|| {
                self.err(field, format!("Could not parse board location: {vertex}"))
            })?;
            out.push(PlacedMove { player, mv });
        }
        Ok(out)
    }

    fn priorities(&self, analyze_turns: Option<&[i64]>) -> Result<Option<Vec<i64>>, QueryError> {
        let Some(v) = self.get("priorities") else {
            return Ok(None);
        };
        let list = int_array(v).ok_or_else(|| {
            self.err(
                "priorities",
                "Must specify an array of integers indicating priorities",
            )
        })?;
        let Some(turns) = analyze_turns else {
            return Err(self.err(
                "priorities",
                "Can only specify when also specifying analyzeTurns",
            ));
        };
        if list.len() != turns.len() {
            return Err(self.err("priorities", "Must be of matching length to analyzeTurns"));
        }
        if let Some(bad) = list.iter().find(|p| p.abs() > MAX_PRIORITY) {
            return Err(self.err("priorities", format!("Invalid priority: {bad}")));
        }
        Ok(Some(list))
    }

    fn restriction(
        &self,
        x_size: usize,
        y_size: usize,
    ) -> Result<Option<MoveRestriction>, QueryError> {
        let allow = self.get("allowMoves");
        let avoid = self.get("avoidMoves");
        let (field, list, is_allow) = match (allow, avoid) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "allowMoves",
                    "Cannot specify both allowMoves and avoidMoves",
                ))
            }
            (Some(v), None) => ("allowMoves", v, true),
            (None, Some(v)) => ("avoidMoves", v, false),
        };
        let shape = "Must be a list of dicts with subfields 'player', 'moves', 'untilDepth'";
        let list = list.as_array().ok_or_else(|| self.err(field, shape))?;
        if is_allow && list.len() > 2 {
            return Err(self.err(
                field,
                "Currently allowMoves only allows at most one entry per player",
            ));
        }
        let mut entries: Vec<RestrictionEntry> = Vec::with_capacity(list.len());
        for dict in list {
            let (Some(pla), Some(mvs), Some(depth)) = (
                dict.get("player"),
                dict.get("moves"),
                dict.get("untilDepth"),
            ) else {
                return Err(self.err(field, shape));
            };
            // KataGo names the sub-field ("player", "moves", "untilDepth") in
            // these errors; naming the top-level field is less ambiguous
            // ("moves" is also a top-level field), so the sub-field goes into
            // the message instead.
            let player = pla
                .as_str()
                .and_then(Player::parse)
                .ok_or_else(|| self.err(field, "player: Must be \"b\" or \"w\""))?;
            let vertices = "moves: Must be an array of GTP board vertices";
            let mut moves = Vec::new();
            for m in mvs.as_array().ok_or_else(|| self.err(field, vertices))? {
                let s = m.as_str().ok_or_else(|| self.err(field, vertices))?;
                let mv = parse_vertex(s, x_size, y_size, true).ok_or_else(|| {
                    self.err(field, format!("moves: Could not parse board location: {s}"))
                })?;
                moves.push(mv);
            }
            let until_depth = integer_in(depth, 1, 1_000_000_000)
                .ok_or_else(|| self.err(field, "untilDepth: Must be a positive integer"))?
                as u32;
            if is_allow && entries.iter().any(|e| e.player == player) {
                return Err(self.err(
                    field,
                    "Cannot specify allowMoves more than once for the same player",
                ));
            }
            entries.push(RestrictionEntry {
                player,
                moves,
                until_depth,
            });
        }
        Ok(Some(if is_allow {
            MoveRestriction::Allow(entries)
        } else {
            MoveRestriction::Avoid(entries)
        }))
    }
}

/// A JSON integer within `[min, max]`.
fn integer_in(v: &Value, min: i64, max: i64) -> Option<i64> {
    v.as_i64().filter(|x| (min..=max).contains(x))
}

/// A vertex on this board (a pass only where allowed).
fn parse_vertex(s: &str, x_size: usize, y_size: usize, allow_pass: bool) -> Option<Move> {
    match Move::parse(s, x_size, y_size) {
        Ok(Move::Pass) if !allow_pass => None,
        Ok(mv) => Some(mv),
        Err(_) => None,
    }
}

#[cfg(test)]
#[path = "query_tests.rs"]
mod tests;
