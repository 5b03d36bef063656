//! One client's side of the protocol: a line becomes a typed request
//! ([`super::query`]); actions are answered at once, queries become one
//! job per analysed turn, queued on the shared engine ([`super::engine`]).

use std::any::Any;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::backend::{AnalysisBackend, ProgressSchedule, SearchJob, SnapshotContents};
use super::engine::{Client, Task};
use super::options::PROTOCOL_VERSION;
use super::position::{build_positions, position_facts};
use super::query::{
    parse_line, Action, ActionRequest, AnalyzeQuery, Parsed, QueryError, QueryWarning, Request,
};
use super::query::{MoveRestriction, RestrictionEntry};
use super::response::ReportOptions;
use crate::game::{GameOptions, GameState, Player};
use crate::tsumego::{self, Prepared, TsumegoError, TsumegoRequest};

/// What became of one request line.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// A query, queued as this many jobs (its warnings already sent).
    Queued {
        /// One per analysed turn.
        jobs: usize,
    },
    /// An action, answered (the answer already sent).
    Answered,
    /// An error answer, not sent: the line is refused (its warnings, if
    /// any, already sent).
    Refused(Value),
}

impl<B: AnalysisBackend> Client<B> {
    /// Handles one input line as `engine analysis` does on stdin: error
    /// answers go to this client like every other response.
    pub fn handle_line(&self, line: &str) {
        if self.shared.log().requests {
            crate::logfile::line(&format!("Request: {line}"));
        }
        let parsed = parse_line(line, &self.shared.opts.parse);
        if let Submitted::Refused(error) = self.submit(parsed, None) {
            self.error(&error);
        }
    }

    /// Handles one parsed line; the error answer of a refused line is
    /// returned instead of sent. `hold` lives as long as a queued query has
    /// a job without its final response.
    pub fn submit(&self, parsed: Parsed, hold: Option<Box<dyn Any + Send + Sync>>) -> Submitted {
        match parsed.result {
            Err(e) => {
                self.write_warnings(&parsed.warnings);
                Submitted::Refused(e.to_json())
            }
            Ok(Request::Action(a)) => {
                self.write_warnings(&parsed.warnings);
                self.handle_action(a);
                Submitted::Answered
            }
            Ok(Request::Analyze(q)) => self.handle_query(&q, &parsed.warnings, hold),
        }
    }

    /// An error answer, logged as KataGo does (`logErrorsAndWarnings`).
    pub(crate) fn error(&self, value: &Value) {
        self.write(value);
        if self.shared.log().errors_and_warnings {
            crate::logfile::line(&format!("Error: {value}"));
        }
    }

    fn write_warnings(&self, warnings: &[QueryWarning]) {
        for w in warnings {
            let value = w.to_json();
            self.write(&value);
            if self.shared.log().errors_and_warnings {
                crate::logfile::line(&format!("Warning: {value}"));
            }
        }
    }

    fn handle_action(&self, a: ActionRequest) {
        let shared = &*self.shared;
        let mut echo = a.echo;
        match a.action {
            Action::QueryVersion => {
                echo.insert("version".into(), Value::from(PROTOCOL_VERSION));
                echo.insert(
                    "git_hash".into(),
                    Value::from(format!("<omitted> (engine {})", env!("CARGO_PKG_VERSION"))),
                );
            }
            Action::QueryModels => {
                let models = shared
                    .backend
                    .models()
                    .into_iter()
                    .map(|m| m.to_json())
                    .collect();
                echo.insert("models".into(), Value::Array(models));
            }
            Action::ClearCache => shared.backend.clear_cache(),
            Action::Terminate {
                terminate_id,
                turn_numbers,
            } => self.terminate(Some(&terminate_id), turn_numbers.as_deref()),
            Action::TerminateAll { turn_numbers } => self.terminate(None, turn_numbers.as_deref()),
        }
        self.write(&Value::Object(echo));
    }

    fn handle_query(
        &self,
        q: &AnalyzeQuery,
        parse_warnings: &[QueryWarning],
        hold: Option<Box<dyn Any + Send + Sync>>,
    ) -> Submitted {
        let mut warnings = Vec::new();
        let prepared = self.prepare(q, &mut warnings);
        // KataGo's order: settings and rules warnings, then unknown-field
        // warnings, then a replay error if any.
        self.write_warnings(&warnings);
        let tasks = match prepared {
            Ok(tasks) => tasks,
            Err((e, settings_ok)) => {
                if settings_ok {
                    self.write_warnings(parse_warnings);
                }
                return Submitted::Refused(e.to_json());
            }
        };
        self.write_warnings(parse_warnings);
        let jobs = tasks.len();
        self.enqueue(tasks, hold);
        Submitted::Queued { jobs }
    }

    /// Builds the jobs of a query. On error, also says whether the error came
    /// after the settings were accepted (then unknown-field warnings are due).
    #[allow(clippy::type_complexity)]
    fn prepare(
        &self,
        q: &AnalyzeQuery,
        warnings: &mut Vec<QueryWarning>,
    ) -> Result<Vec<Task<B::Params>>, (QueryError, bool)> {
        let shared = &*self.shared;
        let field_err = |field: &str, message: String| QueryError::Field {
            id: q.id.clone(),
            field: field.to_string(),
            message,
        };
        let settings_err = |message: String| {
            (
                field_err(
                    "overrideSettings",
                    format!("Could not set settings: {message}"),
                ),
                false,
            )
        };

        // overrideSettings: the perspective key is the analysis engine's
        // own; the rest go to the search parameters,
        // followed by the query's own search fields, which take precedence.
        let mut perspective = shared.opts.perspective;
        let mut overrides: Vec<(String, Value)> = Vec::new();
        for (key, value) in &q.override_settings {
            match key.as_str() {
                "reportAnalysisWinratesAs" => {
                    let text = match value {
                        Value::String(s) => s.clone(),
                        v => v.to_string(),
                    };
                    perspective = text.parse().map_err(|e| settings_err(format!("{e}")))?;
                }
                "humanSLProfile" => {
                    // As KataGo: a profile no loaded net reads is an error.
                    let models = shared.backend.models();
                    if !models.iter().any(|m| m.uses_human_sl_profile) {
                        let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
                        return Err(settings_err(format!(
                            "humanSLProfile is specified but the model(s) don't use it: {}",
                            names.join(", ")
                        )));
                    }
                    overrides.push((key.clone(), value.clone()));
                }
                k if k.starts_with("humanSL") && !shared.backend.has_human_model() => {
                    return Err(settings_err(format!(
                        "Provided parameter {k} but no human model was specified (e.g -human-model b18c384nbt-humanv0.bin.gz)"
                    )));
                }
                _ => overrides.push((key.clone(), value.clone())),
            }
        }
        if let Some(v) = q.max_visits {
            overrides.push(("maxVisits".into(), Value::from(v)));
        }
        if let Some(v) = q.root_fpu_reduction_max {
            overrides.push(("rootFpuReductionMax".into(), Value::from(v)));
        }
        if let Some(v) = q.root_policy_temperature {
            overrides.push(("rootPolicyTemperature".into(), Value::from(v)));
            overrides.push(("rootPolicyTemperatureEarly".into(), Value::from(v)));
        }
        let (params, unknown) = shared
            .backend
            .query_params(&overrides)
            .map_err(settings_err)?;
        if !unknown.is_empty() {
            warnings.push(QueryWarning::new(
                &q.id,
                "overrideSettings",
                format!("Unknown config params: {}", unknown.join(",")),
            ));
        }

        let supported;
        let q = match shared.backend.supported_rules(&q.rules) {
            Some(rules) => {
                warnings.push(QueryWarning::new(
                    &q.id,
                    "rules",
                    format!(
                        "Rules {} not supported by neural net, using {} instead",
                        q.rules, rules
                    ),
                ));
                supported = AnalyzeQuery { rules, ..q.clone() };
                &supported
            }
            None => q,
        };
        let positions = build_positions(q, &shared.opts.replay).map_err(|e| (e, true))?;

        let report = ReportOptions {
            perspective,
            analysis_pv_len: q.analysis_pv_len.unwrap_or(shared.opts.analysis_pv_len),
            include_policy: q.include_policy,
            include_ownership: q.include_ownership,
            include_ownership_stdev: q.include_ownership_stdev,
            include_moves_ownership: q.include_moves_ownership,
            include_moves_ownership_stdev: q.include_moves_ownership_stdev,
            include_pv_visits: q.include_pv_visits,
            include_no_result_value: q.include_no_result_value,
        };
        // A tsumego is judged from ownership, root and per move: the search
        // keeps them whether or not the query prints them.
        let judged = q.tsumego.is_some();
        let contents = SnapshotContents {
            pv_len: report.analysis_pv_len,
            ownership: q.include_ownership || judged,
            ownership_stdev: q.include_ownership_stdev,
            moves_ownership: q.include_moves_ownership || judged,
            moves_ownership_stdev: q.include_moves_ownership_stdev,
        };
        let progress = progress_schedule(q);

        let mut tasks = Vec::with_capacity(positions.len());
        for (turn, position) in positions {
            let (position, restriction, problem) = turn_setup(position, q, &shared.opts.replay)?;
            let priority = q
                .analyze_turns
                .iter()
                .position(|&t| t == turn)
                .map_or(0, |i| q.turn_priorities[i]);
            let facts = position_facts(&position);
            let internal_id = shared.next_internal_id.fetch_add(1, Ordering::Relaxed);
            let mut task = Task::new(
                internal_id,
                q.id.clone(),
                turn,
                facts,
                SearchJob {
                    position,
                    params: params.clone(),
                    contents,
                    progress,
                    restriction,
                },
                report,
                priority,
            );
            task.tsumego = problem;
            tasks.push(task);
        }
        Ok(tasks)
    }
}

/// A turn's position, move restriction and tsumego problem: as given, or
/// framed when the query is a tsumego.
#[allow(clippy::type_complexity)]
fn turn_setup(
    position: GameState,
    q: &AnalyzeQuery,
    opts: &GameOptions,
) -> Result<(GameState, Option<MoveRestriction>, Option<Arc<Prepared>>), (QueryError, bool)> {
    let Some(req) = &q.tsumego else {
        return Ok((position, q.restriction.clone(), None));
    };
    let (position, restriction, problem) = framed(position, req, opts).map_err(|e| {
        let error = QueryError::Field {
            id: q.id.clone(),
            field: "tsumego".into(),
            message: e.to_string(),
        };
        (error, true)
    })?;
    Ok((position, Some(restriction), Some(problem)))
}

/// Plies below the root for which a tsumego's restriction holds: the whole
/// search.
const WHOLE_SEARCH: u32 = 1_000_000_000;

/// A tsumego query's turn: the framed position (same rules and side to
/// move, a fresh history), both players restricted to the problem's points
/// and pass for the whole search, and the problem for the judge.
fn framed(
    position: GameState,
    req: &TsumegoRequest,
    opts: &GameOptions,
) -> Result<(GameState, MoveRestriction, Arc<Prepared>), TsumegoError> {
    let rules = *position.rules();
    let problem = tsumego::prepare(&position.board, position.next, rules.komi, req)?;
    let moves = problem.allowed_moves();
    let restriction = MoveRestriction::Allow(
        Player::BOTH
            .into_iter()
            .map(|player| RestrictionEntry {
                player,
                moves: moves.clone(),
                until_depth: WHOLE_SEARCH,
            })
            .collect(),
    );
    let state = GameState::start(problem.board.clone(), position.next, rules, *opts);
    Ok((state, restriction, Arc::new(problem)))
}

/// The during-search report times of a query, if it asked for any.
fn progress_schedule(q: &AnalyzeQuery) -> Option<ProgressSchedule> {
    if q.report_during_search_every.is_none() && q.first_report_during_search_after.is_none() {
        return None;
    }
    let secs = |s: f64| Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX);
    let every = q.report_during_search_every.unwrap_or(1e30);
    let first = q.first_report_during_search_after.unwrap_or(every);
    Some(ProgressSchedule {
        first_after: secs(first),
        every: secs(every),
    })
}
