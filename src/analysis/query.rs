//! Parsing one input line of KataGo's JSON analysis protocol into a typed
//! [`Request`], with KataGo's error and warning texts.
//!
//! Parsing needs no board and no search. What needs those (replaying the
//! moves, applying `overrideSettings` to the search parameters) happens
//! later, in the server, and reports errors in the same shapes.
//!
//! The checks run in KataGo's order (`cpp/command/analysis.cpp`), and the
//! first failing field ends the query with one error, as there.

use serde_json::{Map, Value};

use crate::game::{Move, Player, Rules};
use crate::tsumego::TsumegoRequest;

mod fields;
use fields::FieldParser;

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
    "tsumego",
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
    /// `tsumego`: search a framed local problem instead (see
    /// [`crate::tsumego`]); excludes `allowMoves` / `avoidMoves`.
    pub tsumego: Option<TsumegoRequest>,
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

#[cfg(test)]
#[path = "query_tests.rs"]
mod tests;
