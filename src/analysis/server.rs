//! The analysis engine's main loop: read query lines, queue one job per
//! (query, turn) by priority, run `numAnalysisThreads` searches at a time,
//! write every response as one whole line.
//!
//! Life of a job, as in KataGo: it is *queued* until an analysis thread pops
//! it, *popped* while the thread prepares the search, then *running* under
//! that thread's index. `terminate` flips it to *terminated*: a queued job is
//! answered with `noResults` at once (by the reader), a running one is
//! stopped and answered by its thread with whatever the search found. Each
//! job ends with exactly one final response, whoever writes it.

use std::collections::{BTreeMap, BinaryHeap};
use std::io::{self, BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use serde_json::Value;

use crate::io_lines::{json_refusal, LineReader, RawLine};

use super::backend::{AnalysisBackend, ProgressSchedule, SearchJob, Searcher, SnapshotContents};
use super::position::{build_positions, position_facts};
use super::query::{
    parse_line, Action, ActionRequest, AnalyzeQuery, ParseOptions, QueryError, QueryWarning,
    Request,
};
use super::response::{analysis_json, no_results_json, PositionFacts, ReportOptions};
use crate::game::GameOptions;
use crate::search::Perspective;

/// Version reported by `query_version`: the KataGo release whose protocol
/// this engine speaks, since tools compare it to enable features.
pub const PROTOCOL_VERSION: &str = "1.17.2";

/// Settings of the server that come from the command line and config.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Positions searched at the same time (`numAnalysisThreads`).
    pub num_analysis_threads: usize,
    /// On stdin close, stop searches and drop queued jobs instead of
    /// finishing them (`-quit-without-waiting`).
    pub quit_without_waiting: bool,
    /// Query parsing options (`warnUnusedFields`).
    pub parse: ParseOptions,
    /// Default PV length after the first move (`analysisPVLen`, 15).
    pub analysis_pv_len: usize,
    /// Default perspective (`reportAnalysisWinratesAs`, SIDETOMOVE).
    pub perspective: Perspective,
    /// How game records are replayed.
    pub replay: GameOptions,
    /// What goes to the log file besides the start-up lines.
    pub log: AnalysisLog,
}

/// KataGo's analysis logging keys: each line goes to the process's log
/// ([`crate::logfile`]), as KataGo writes it to its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalysisLog {
    /// `logAllRequests`: every input line, `Request: LINE`.
    pub requests: bool,
    /// `logAllResponses`: every output line, `Response: LINE`.
    pub responses: bool,
    /// `logErrorsAndWarnings` (on by default): every error and warning
    /// answer, `Error: LINE` / `Warning: LINE`.
    pub errors_and_warnings: bool,
    /// `logSearchInfo`: a summary of each finished search (the query's id
    /// and turn, root values, top moves).
    pub search_info: bool,
}

impl Default for AnalysisLog {
    /// KataGo's defaults: only errors and warnings.
    fn default() -> Self {
        AnalysisLog {
            requests: false,
            responses: false,
            errors_and_warnings: true,
            search_info: false,
        }
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            num_analysis_threads: 1,
            quit_without_waiting: false,
            parse: ParseOptions::default(),
            analysis_pv_len: 15,
            perspective: Perspective::SideToMove,
            replay: GameOptions::default(),
            log: AnalysisLog::default(),
        }
    }
}

/// Job states; values >= 0 are the index of the thread running it.
const IN_QUEUE: i64 = -1;
const POPPED: i64 = -2;
const TERMINATED: i64 = -3;

/// One (query, turn) to analyse.
struct Task<P> {
    internal_id: u64,
    id: String,
    turn: usize,
    facts: PositionFacts,
    job: SearchJob<P>,
    report: ReportOptions,
    status: AtomicI64,
}

/// Queue entry: highest priority first, then earliest.
struct Queued<P> {
    priority: i64,
    seq: u64,
    task: Arc<Task<P>>,
}

impl<P> PartialEq for Queued<P> {
    fn eq(&self, other: &Self) -> bool {
        (self.priority, self.seq) == (other.priority, other.seq)
    }
}
impl<P> Eq for Queued<P> {}
impl<P> PartialOrd for Queued<P> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<P> Ord for Queued<P> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.priority
            .cmp(&other.priority)
            .then(other.seq.cmp(&self.seq))
    }
}

struct QueueState<P> {
    heap: BinaryHeap<Queued<P>>,
    /// No more jobs will come (stdin closed).
    closed: bool,
}

/// Whole-line output shared by all threads.
struct Output {
    sink: Mutex<Box<dyn Write + Send>>,
    /// Set on a quick quit: nothing more is written.
    muted: AtomicBool,
    log: AnalysisLog,
}

impl Output {
    fn write(&self, value: &Value) {
        if self.muted.load(Ordering::Acquire) {
            return;
        }
        let mut line = value.to_string();
        if self.log.responses {
            crate::logfile::line(&format!("Response: {line}"));
        }
        line.push('\n');
        let mut sink = self.sink.lock();
        // A closed stdout is the client's business; keep serving until stdin
        // closes, as KataGo does.
        let _ = sink.write_all(line.as_bytes()).and_then(|_| sink.flush());
    }

    /// An error answer, logged as KataGo does (`logErrorsAndWarnings`).
    fn error(&self, value: &Value) {
        self.write(value);
        if self.log.errors_and_warnings {
            crate::logfile::line(&format!("Error: {value}"));
        }
    }

    /// A warning answer, logged as KataGo does (`logErrorsAndWarnings`).
    fn warning(&self, value: &Value) {
        self.write(value);
        if self.log.errors_and_warnings {
            crate::logfile::line(&format!("Warning: {value}"));
        }
    }
}

struct Shared<B: AnalysisBackend> {
    backend: Arc<B>,
    opts: ServerOptions,
    out: Output,
    queue: Mutex<QueueState<B::Params>>,
    queue_cv: Condvar,
    /// Jobs not yet finished, by internal id.
    open: Mutex<BTreeMap<u64, Arc<Task<B::Params>>>>,
    /// Stop flag of each analysis thread's current search.
    stops: Vec<AtomicBool>,
    /// Set on a quick quit: threads start nothing more.
    killed: AtomicBool,
}

/// Runs the analysis engine until `input` ends, then finishes (or, with
/// `quit_without_waiting`, abandons) the queued work and returns.
pub fn serve<B: AnalysisBackend>(
    backend: Arc<B>,
    opts: ServerOptions,
    input: impl BufRead,
    output: impl Write + Send + 'static,
) -> io::Result<()> {
    let threads = opts.num_analysis_threads.max(1);
    let log = opts.log;
    let shared = Arc::new(Shared {
        backend: backend.clone(),
        opts,
        out: Output {
            sink: Mutex::new(Box::new(output)),
            muted: AtomicBool::new(false),
            log,
        },
        queue: Mutex::new(QueueState {
            heap: BinaryHeap::new(),
            closed: false,
        }),
        queue_cv: Condvar::new(),
        open: Mutex::new(BTreeMap::new()),
        stops: (0..threads).map(|_| AtomicBool::new(false)).collect(),
        killed: AtomicBool::new(false),
    });

    let mut workers = Vec::with_capacity(threads);
    for index in 0..threads {
        let searcher = backend.new_searcher(index);
        let shared = shared.clone();
        workers.push(
            std::thread::Builder::new()
                .name(format!("analysis-{index}"))
                .spawn(move || worker_loop(&shared, index, searcher))?,
        );
    }

    let mut reader = Reader {
        shared: &shared,
        next_internal_id: 0,
        next_seq: 0,
    };
    let mut read_error = None;
    // Raw bytes with a cap on a line's length: a line that is not UTF-8 or
    // is too long gets an error answer, and every other query still runs.
    let mut lines = LineReader::new(input);
    let max_len = lines.max_len();
    loop {
        match lines.next_line() {
            Ok(None) => break,
            Ok(Some(RawLine::Text(line))) => {
                let line = line.trim();
                if !line.is_empty() {
                    reader.handle_line(line);
                }
            }
            Ok(Some(refused)) => {
                if let Some(answer) = json_refusal(&refused, max_len) {
                    shared.out.error(&answer);
                }
            }
            Err(e) => {
                read_error = Some(e);
                break;
            }
        }
    }

    if shared.opts.quit_without_waiting {
        shared.out.muted.store(true, Ordering::Release);
        shared.killed.store(true, Ordering::Release);
        shared.queue.lock().heap.clear();
        for stop in &shared.stops {
            stop.store(true, Ordering::Release);
        }
    }
    shared.queue.lock().closed = true;
    shared.queue_cv.notify_all();
    for w in workers {
        if w.join().is_err() {
            crate::logfile::startup("engine analysis: an analysis thread panicked");
        }
    }
    match read_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The stdin side: parses lines, answers actions, queues jobs.
struct Reader<'a, B: AnalysisBackend> {
    shared: &'a Shared<B>,
    next_internal_id: u64,
    next_seq: u64,
}

impl<B: AnalysisBackend> Reader<'_, B> {
    fn handle_line(&mut self, line: &str) {
        if self.shared.opts.log.requests {
            crate::logfile::line(&format!("Request: {line}"));
        }
        let parsed = parse_line(line, &self.shared.opts.parse);
        match parsed.result {
            Err(e) => {
                self.write_warnings(&parsed.warnings);
                self.shared.out.error(&e.to_json());
            }
            Ok(Request::Action(a)) => {
                self.write_warnings(&parsed.warnings);
                self.handle_action(a);
            }
            Ok(Request::Analyze(q)) => self.handle_query(&q, &parsed.warnings),
        }
    }

    fn write_warnings(&self, warnings: &[QueryWarning]) {
        for w in warnings {
            self.shared.out.warning(&w.to_json());
        }
    }

    fn handle_action(&mut self, a: ActionRequest) {
        let shared = self.shared;
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
        shared.out.write(&Value::Object(echo));
    }

    /// Terminates the open jobs with this id (any id if `None`) and, if
    /// given, one of these turn numbers.
    fn terminate(&self, id: Option<&str>, turns: Option<&[i64]>) {
        let shared = self.shared;
        let open = shared.open.lock();
        for task in open.values() {
            let id_matches = id.is_none_or(|id| task.id == id);
            let turn_matches = turns.is_none_or(|ts| ts.contains(&(task.turn as i64)));
            if !(id_matches && turn_matches) {
                continue;
            }
            match task.status.swap(TERMINATED, Ordering::AcqRel) {
                TERMINATED | POPPED => {}
                // Nobody will pop it as live any more: answer for it now.
                IN_QUEUE => shared.out.write(&no_results_json(&task.id, task.turn)),
                thread => {
                    if let Some(stop) = shared.stops.get(thread as usize) {
                        stop.store(true, Ordering::Release);
                    }
                }
            }
        }
    }

    fn handle_query(&mut self, q: &AnalyzeQuery, parse_warnings: &[QueryWarning]) {
        let shared = self.shared;
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
                shared.out.error(&e.to_json());
                return;
            }
        };
        self.write_warnings(parse_warnings);
        {
            let mut open = shared.open.lock();
            for (_, task) in &tasks {
                open.insert(task.internal_id, task.clone());
            }
        }
        let mut queue = shared.queue.lock();
        for (priority, task) in tasks {
            queue.heap.push(Queued {
                priority,
                seq: self.next_seq,
                task,
            });
            self.next_seq += 1;
        }
        drop(queue);
        shared.queue_cv.notify_all();
    }

    /// Builds the jobs of a query. On error, also says whether the error came
    /// after the settings were accepted (then unknown-field warnings are due).
    #[allow(clippy::type_complexity)]
    fn prepare(
        &mut self,
        q: &AnalyzeQuery,
        warnings: &mut Vec<QueryWarning>,
    ) -> Result<Vec<(i64, Arc<Task<B::Params>>)>, (QueryError, bool)> {
        let shared = self.shared;
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
        let contents = SnapshotContents {
            pv_len: report.analysis_pv_len,
            ownership: q.include_ownership,
            ownership_stdev: q.include_ownership_stdev,
            moves_ownership: q.include_moves_ownership,
            moves_ownership_stdev: q.include_moves_ownership_stdev,
        };
        let progress = progress_schedule(q);

        let mut tasks = Vec::with_capacity(positions.len());
        for (turn, position) in positions {
            let priority = q
                .analyze_turns
                .iter()
                .position(|&t| t == turn)
                .map_or(0, |i| q.turn_priorities[i]);
            let facts = position_facts(&position);
            let task = Task {
                internal_id: self.next_internal_id,
                id: q.id.clone(),
                turn,
                facts,
                job: SearchJob {
                    position,
                    params: params.clone(),
                    contents,
                    progress,
                    restriction: q.restriction.clone(),
                },
                report,
                status: AtomicI64::new(IN_QUEUE),
            };
            self.next_internal_id += 1;
            tasks.push((priority, Arc::new(task)));
        }
        Ok(tasks)
    }
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

/// Blocks for the next job; `None` once the queue is closed and empty.
fn pop<B: AnalysisBackend>(shared: &Shared<B>) -> Option<Arc<Task<B::Params>>> {
    let mut queue = shared.queue.lock();
    loop {
        if let Some(q) = queue.heap.pop() {
            return Some(q.task);
        }
        if queue.closed {
            return None;
        }
        shared.queue_cv.wait(&mut queue);
    }
}

fn worker_loop<B: AnalysisBackend>(shared: &Shared<B>, index: usize, mut searcher: B::Searcher) {
    while let Some(task) = pop(shared) {
        let live = task
            .status
            .compare_exchange(IN_QUEUE, POPPED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        // A job terminated while queued was already answered.
        if live {
            run_task(shared, index, &mut searcher, &task);
        }
        shared.open.lock().remove(&task.internal_id);
    }
}

fn run_task<B: AnalysisBackend>(
    shared: &Shared<B>,
    index: usize,
    searcher: &mut B::Searcher,
    task: &Task<B::Params>,
) {
    let stop = &shared.stops[index];
    stop.store(false, Ordering::Release);
    let started = task
        .status
        .compare_exchange(POPPED, index as i64, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if !started || shared.killed.load(Ordering::Acquire) {
        // Terminated between pop and start: nothing was analysed.
        shared.out.write(&no_results_json(&task.id, task.turn));
        return;
    }
    let on_progress = |snap: &_| {
        if let Some(v) = analysis_json(&task.id, task.turn, true, &task.facts, snap, &task.report) {
            shared.out.write(&v);
        }
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        searcher.analyze(&task.job, stop, &on_progress)
    }));
    let snapshot = match result {
        Ok(s) => s,
        Err(_) => {
            crate::logfile::startup(&format!(
                "engine analysis: the search of query {:?} turn {} panicked",
                task.id, task.turn
            ));
            shared.out.write(&no_results_json(&task.id, task.turn));
            return;
        }
    };
    if shared.opts.log.search_info {
        crate::logfile::line(&snapshot.log_summary(
            &format!("Search for query {:?} turn {}", task.id, task.turn),
            None,
            false,
        ));
    }
    match analysis_json(
        &task.id,
        task.turn,
        false,
        &task.facts,
        &snapshot,
        &task.report,
    ) {
        Some(v) => shared.out.write(&v),
        None => {
            // No root values: the search was stopped before its first visit.
            // The protocol promises one final line per job all the same.
            shared.out.write(&no_results_json(&task.id, task.turn));
        }
    }
}
