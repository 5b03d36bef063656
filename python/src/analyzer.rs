//! `engine_go.Analyzer`: KataGo's JSON analysis protocol in-process.
//!
//! This is the one file of the package that knows the analysis module.
//! It runs the engine's own `engine analysis`
//! (`engine::analysis::run_command_on`: the same config, backend, queue,
//! analysis threads and response JSON) on a thread, behind an in-process
//! pipe: query lines go in through a channel, response lines come out
//! through a writer that routes each one by its `id` to whoever waits for
//! it. Each query is sent under an id of its own (so that callers may
//! reuse ids) and given its own id back. When the analysis module grows a
//! multi-client core, only this file changes.

use std::collections::HashMap;
use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};
use engine::analysis::query::{Action, Request};
use engine::analysis::{parse_line, AnalysisArgs, ParseOptions, StartError};
use engine::setup::EngineArgs;
use parking_lot::Mutex;
use pyo3::exceptions::{PyTypeError, PyUserWarning};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;

use crate::errors::{check_exists, runtime_error, start_error, value_error};

/// How often a waiting call takes the GIL back to look for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);
/// How long an interrupted call waits for its terminated queries' answers.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// The engine's input: lines sent through a channel; ends when every
/// sender is gone.
struct PipeIn {
    rx: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for PipeIn {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PipeIn {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos >= self.buf.len() {
            match self.rx.recv() {
                Ok(b) => {
                    self.buf = b;
                    self.pos = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }
}

/// Where the responses of one internal id go.
type Routes = Arc<Mutex<HashMap<String, Sender<Value>>>>;

/// The engine's output: whole lines, each parsed and sent to the route of
/// its `id`. Lines nobody waits for are dropped.
struct PipeOut {
    partial: Vec<u8>,
    routes: Routes,
}

impl PipeOut {
    fn route(&self, line: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(id) = v.get("id").and_then(Value::as_str) else {
            return;
        };
        if let Some(tx) = self.routes.lock().get(id) {
            // The receiver may have gone (an abandoned stream): drop it.
            let _ = tx.send(v);
        }
    }
}

impl Write for PipeOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(buf);
        while let Some(i) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=i).collect();
            self.route(&line[..i]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The running engine, shared by an `Analyzer` and its streams.
struct Core {
    input: Mutex<Option<Sender<Vec<u8>>>>,
    routes: Routes,
    next_id: AtomicU64,
    thread: Mutex<Option<JoinHandle<Result<(), StartError>>>>,
    /// Open queries: internal id -> the caller's id (for `terminate`).
    open: Mutex<HashMap<String, String>>,
}

impl Core {
    fn new_id(&self) -> String {
        format!("py{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn send(&self, v: &Value) -> PyResult<()> {
        let mut line = v.to_string();
        line.push('\n');
        let input = self.input.lock();
        let tx = input
            .as_ref()
            .ok_or_else(|| runtime_error("the analyzer is closed"))?;
        tx.send(line.into_bytes())
            .map_err(|_| runtime_error("the analysis engine has stopped"))
    }

    /// Stops the queries with these internal ids (each ends with what its
    /// search found, or `noResults` if it had not started).
    fn terminate(&self, ids: &[String]) {
        for id in ids {
            let line = serde_json::json!({
                "id": format!("{id}-terminate"),
                "action": "terminate",
                "terminateId": id,
            });
            // A stopped engine answers nothing; the caller sees that below.
            let _ = self.send(&line);
        }
    }

    fn unroute(&self, id: &str) {
        self.routes.lock().remove(id);
        self.open.lock().remove(id);
    }

    /// Ends the engine: queued and running searches are terminated, the
    /// input closed and the thread joined.
    fn close(&self) {
        let _ = self.send(&serde_json::json!({"id": "py-close", "action": "terminate_all"}));
        self.input.lock().take();
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
        // Whoever still waits (a stream of another thread) sees the end.
        self.routes.lock().clear();
    }
}

/// One query in flight: how many final responses end it.
struct Pending {
    user_id: String,
    /// For `terminate`: the caller's `terminateId` to give back.
    terminate_id: Option<String>,
    expected: usize,
    finals: usize,
}

/// A checked query ready to send: its lines (several for a `terminate`
/// of a reused id) and what ends it.
struct Prepared {
    lines: Vec<(String, Value)>,
    pending: Pending,
}

/// Checks a query with the engine's own parser and gives it internal ids.
fn prepare(core: &Core, text: &str) -> PyResult<Prepared> {
    if text.len() > engine::io_lines::MAX_LINE_BYTES {
        return Err(value_error(format!(
            "query of {} bytes is longer than the limit of {} bytes",
            text.len(),
            engine::io_lines::MAX_LINE_BYTES
        )));
    }
    let parsed = parse_line(text, &ParseOptions::default());
    let request = parsed.result.map_err(|e| {
        let j = e.to_json();
        value_error(j.get("error").and_then(Value::as_str).map_or_else(
            || j.to_string(),
            |msg| match j.get("field").and_then(Value::as_str) {
                Some(f) => format!("{msg} (field {f})"),
                None => msg.to_string(),
            },
        ))
    })?;
    let mut v: Value = serde_json::from_str(text).map_err(value_error)?;
    let obj = v
        .as_object_mut()
        .ok_or_else(|| value_error("a query is a JSON object"))?;
    let user_id = obj
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let (expected, targets, terminate_id) = match &request {
        Request::Analyze(q) => (q.analyze_turns.len().max(1), None, None),
        Request::Action(a) => match &a.action {
            Action::Terminate { terminate_id, .. } => {
                let ids: Vec<String> = core
                    .open
                    .lock()
                    .iter()
                    .filter(|(_, u)| *u == terminate_id)
                    .map(|(i, _)| i.clone())
                    .collect();
                (1, Some(ids), Some(terminate_id.clone()))
            }
            _ => (1, None, None),
        },
    };
    let internal = core.new_id();
    obj.insert("id".into(), Value::String(internal.clone()));
    let mut lines = Vec::new();
    match targets {
        // terminate of a caller's id: one line per query sent under it;
        // the first echo answers, the others are dropped.
        Some(ids) if !ids.is_empty() => {
            for (k, target) in ids.iter().enumerate() {
                let mut line = v.clone();
                line["terminateId"] = Value::String(target.clone());
                let id = if k == 0 {
                    internal.clone()
                } else {
                    format!("{internal}-{k}")
                };
                line["id"] = Value::String(id.clone());
                lines.push((id, line));
            }
        }
        _ => lines.push((internal, v)),
    }
    Ok(Prepared {
        lines,
        pending: Pending {
            user_id,
            terminate_id,
            expected,
            finals: 0,
        },
    })
}

/// What one response means to its query.
enum Kind {
    Warning,
    Error,
    Partial,
    Final,
}

fn kind(v: &Value) -> Kind {
    if v.get("error").is_some() {
        Kind::Error
    } else if v.get("warning").is_some() {
        Kind::Warning
    } else if v.get("isDuringSearch").and_then(Value::as_bool) == Some(true) {
        Kind::Partial
    } else {
        Kind::Final
    }
}

/// The queries of one call and the channel their responses come on.
struct Batch {
    core: Arc<Core>,
    rx: Receiver<Value>,
    pending: HashMap<String, Pending>,
}

impl Batch {
    /// Sends every query (checked first: nothing is sent if one is bad).
    fn start(core: Arc<Core>, texts: &[String]) -> PyResult<Batch> {
        let prepared: Vec<Prepared> = texts
            .iter()
            .map(|t| prepare(&core, t))
            .collect::<PyResult<_>>()?;
        let (tx, rx) = channel::unbounded();
        let mut pending = HashMap::new();
        for p in prepared {
            let first = p.lines[0].0.clone();
            {
                let mut routes = core.routes.lock();
                for (id, _) in &p.lines {
                    routes.insert(id.clone(), tx.clone());
                }
            }
            core.open
                .lock()
                .insert(first.clone(), p.pending.user_id.clone());
            for (k, (id, line)) in p.lines.iter().enumerate() {
                core.send(line)?;
                if k > 0 {
                    // Extra terminate lines: their echoes are not waited for.
                    core.routes.lock().remove(id);
                }
            }
            pending.insert(first, p.pending);
        }
        Ok(Batch { core, rx, pending })
    }

    fn is_done(&self) -> bool {
        self.pending.is_empty()
    }

    /// The next response (the caller's id restored) and whether its query
    /// is done; `None` while none is ready within `SIGNAL_POLL`.
    fn next(&mut self, py: Python<'_>) -> PyResult<Option<Value>> {
        let rx = self.rx.clone();
        let got = py.allow_threads(|| rx.recv_timeout(SIGNAL_POLL));
        let mut v = match got {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => return Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(runtime_error("the analysis engine has stopped"))
            }
        };
        let Some(id) = v.get("id").and_then(Value::as_str).map(str::to_string) else {
            return Ok(None);
        };
        let Some(p) = self.pending.get_mut(&id) else {
            return Ok(None);
        };
        v["id"] = Value::String(p.user_id.clone());
        if let Some(t) = &p.terminate_id {
            if v.get("terminateId").is_some() {
                v["terminateId"] = Value::String(t.clone());
            }
        }
        let done = match kind(&v) {
            Kind::Error => true,
            Kind::Final => {
                p.finals += 1;
                p.finals >= p.expected
            }
            Kind::Warning | Kind::Partial => false,
        };
        if done {
            self.pending.remove(&id);
            self.core.unroute(&id);
        }
        Ok(Some(v))
    }

    /// On Ctrl-C: terminates what is left and waits (a bounded time) for
    /// the engine to answer it, so the engine is left clean.
    fn abandon(&mut self, py: Python<'_>) {
        let ids: Vec<String> = self.pending.keys().cloned().collect();
        self.core.terminate(&ids);
        let start = Instant::now();
        while !self.is_done() && start.elapsed() < DRAIN_LIMIT {
            if self.next(py).is_err() {
                break;
            }
        }
        for id in ids {
            self.core.unroute(&id);
        }
        self.pending.clear();
    }

    /// Waits for the next response; Ctrl-C terminates the batch and raises
    /// `KeyboardInterrupt`.
    fn wait(&mut self, py: Python<'_>) -> PyResult<Option<Value>> {
        while !self.is_done() {
            if let Some(v) = self.next(py)? {
                return Ok(Some(v));
            }
            if let Err(e) = py.check_signals() {
                self.abandon(py);
                return Err(e);
            }
        }
        Ok(None)
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // A stream dropped before its end: stop its searches.
        let ids: Vec<String> = self.pending.keys().cloned().collect();
        if !ids.is_empty() {
            self.core.terminate(&ids);
            for id in ids {
                self.core.unroute(&id);
            }
        }
    }
}

/// JSON text of a query given as a dict (or as JSON text).
fn query_text(py: Python<'_>, q: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = q.downcast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if !q.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(
            "a query is a dict (KataGo's JSON query)",
        ));
    }
    py.import("json")?.call_method1("dumps", (q,))?.extract()
}

fn to_python<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (v.to_string(),))
}

/// A warning of the engine about a query, as a Python `UserWarning`.
fn warn(py: Python<'_>, v: &Value) -> PyResult<()> {
    let msg = format!(
        "query {}: {} (field {})",
        v.get("id").and_then(Value::as_str).unwrap_or(""),
        v.get("warning").and_then(Value::as_str).unwrap_or(""),
        v.get("field").and_then(Value::as_str).unwrap_or("")
    );
    let category = py.get_type::<PyUserWarning>();
    PyErr::warn(
        py,
        &category,
        &std::ffi::CString::new(msg).unwrap_or_default(),
        1,
    )
}

/// A config override `key=value` for a Python value.
fn override_text(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = if let Ok(b) = value.extract::<bool>() {
        b.to_string()
    } else if let Ok(i) = value.extract::<i64>() {
        i.to_string()
    } else if let Ok(f) = value.extract::<f64>() {
        f.to_string()
    } else if let Ok(s) = value.extract::<String>() {
        // Quoted, so that commas stay in the value.
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        return Err(PyTypeError::new_err(format!(
            "config value of {key}: a bool, number or string"
        )));
    };
    Ok(format!("{key}={v}"))
}

/// KataGo's JSON analysis engine, in-process: the same engine, config keys
/// and responses as ``engine analysis``.
///
/// ``Analyzer(model, config=None, threads=None)``:
///
/// - ``model``: a KataGo network file;
/// - ``config``: ``None`` for the engine's built-in ``configs/analysis.toml``
///   (note: it reports winrates as ``BLACK``), a path to a config file, or
///   a dict of config keys applied over the built-in config
///   (``{"reportAnalysisWinratesAs": "SIDETOMOVE", "maxVisits": 100}``);
/// - ``threads``: positions searched at once (``numAnalysisThreads``).
///
/// Searches run on the engine's threads with the GIL released. Raises
/// ``FileNotFoundError`` for a missing model and ``ValueError`` for a bad
/// model or config. Use as a context manager, or call ``close()``.
#[pyclass(module = "engine_go", frozen)]
pub struct Analyzer {
    core: Arc<Core>,
}

#[pymethods]
impl Analyzer {
    #[new]
    #[pyo3(signature = (model, config=None, threads=None))]
    fn new(
        py: Python<'_>,
        model: PathBuf,
        config: Option<&Bound<'_, PyAny>>,
        threads: Option<usize>,
    ) -> PyResult<Analyzer> {
        check_exists(&model, "model file")?;
        let mut cmd = AnalysisArgs {
            engine: EngineArgs {
                model: Some(model),
                ..EngineArgs::default()
            },
            analysis_threads: threads,
            ..AnalysisArgs::default()
        };
        // Errors and warnings reach the caller as exceptions and Python
        // warnings; the engine's log of them (to stderr, with internal
        // ids) is off unless the config dict asks for it.
        cmd.engine
            .override_config
            .push("logErrorsAndWarnings=false".to_string());
        match config {
            None => {}
            Some(c) if c.is_none() => {}
            Some(c) if c.is_instance_of::<PyDict>() => {
                let d = c.downcast::<PyDict>()?;
                for (k, v) in d.iter() {
                    let key: String = k.extract()?;
                    cmd.engine.override_config.push(override_text(&key, &v)?);
                }
            }
            Some(c) => {
                let path: PathBuf = c.extract().map_err(|_| {
                    PyTypeError::new_err("config is None, a config file path or a dict of keys")
                })?;
                check_exists(&path, "config file")?;
                cmd.engine.config = Some(path);
            }
        }
        let (tx, rx) = channel::unbounded::<Vec<u8>>();
        let routes: Routes = Arc::default();
        let out = PipeOut {
            partial: Vec::new(),
            routes: routes.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("engine-analysis".into())
            .spawn(move || {
                let input = PipeIn {
                    rx,
                    buf: Vec::new(),
                    pos: 0,
                };
                engine::analysis::run_command_on(&cmd, input, out)
            })
            .map_err(runtime_error)?;
        let core = Arc::new(Core {
            input: Mutex::new(Some(tx)),
            routes,
            next_id: AtomicU64::new(0),
            thread: Mutex::new(Some(thread)),
            open: Mutex::new(HashMap::new()),
        });
        // Ready once the engine answers a first query; a start-up error
        // (bad model or config) ends its thread instead.
        let (ready_tx, ready_rx) = channel::unbounded();
        core.routes.lock().insert("py-ready".into(), ready_tx);
        // If the engine has already failed, the send fails too: the loop
        // below then finds the thread ended and returns its error.
        let _ = core.send(&serde_json::json!({"id": "py-ready", "action": "query_version"}));
        loop {
            let r = ready_rx.clone();
            if py.allow_threads(|| r.recv_timeout(SIGNAL_POLL)).is_ok() {
                core.routes.lock().remove("py-ready");
                break;
            }
            let finished = core.thread.lock().as_ref().is_none_or(|t| t.is_finished());
            if finished {
                let t = core.thread.lock().take();
                return Err(match t.map(JoinHandle::join) {
                    Some(Ok(Err(e))) => start_error(e),
                    _ => runtime_error("the analysis engine stopped while starting"),
                });
            }
            if let Err(e) = py.check_signals() {
                core.close();
                return Err(e);
            }
        }
        Ok(Analyzer { core })
    }

    /// Runs one KataGo analysis query (a dict, exactly as the JSON
    /// protocol has it, ``id`` included) and returns its responses as
    /// ``engine analysis`` prints them, in turn order: one final response
    /// per analysed turn, preceded by its ``isDuringSearch`` reports if
    /// ``reportDuringSearchEvery`` asks for them. An action query
    /// (``query_version``, ``clear_cache``, ``terminate``, ...) returns its
    /// one answer. Warnings become Python ``UserWarning``; an error
    /// response raises ``ValueError`` with the engine's message.
    /// ``KeyboardInterrupt`` terminates the query's searches before it is
    /// raised.
    fn analyze<'py>(
        &self,
        py: Python<'py>,
        query: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let text = query_text(py, query)?;
        let mut batch = Batch::start(self.core.clone(), &[text])?;
        let mut out: Vec<Value> = Vec::new();
        while let Some(v) = batch.wait(py)? {
            match kind(&v) {
                Kind::Warning => warn(py, &v)?,
                Kind::Error => {
                    let msg = v.get("error").and_then(Value::as_str).unwrap_or("error");
                    return Err(value_error(match v.get("field").and_then(Value::as_str) {
                        Some(f) => format!("{msg} (field {f})"),
                        None => msg.to_string(),
                    }));
                }
                Kind::Partial | Kind::Final => out.push(v),
            }
        }
        // Turns finish in any order; KataGo's clients sort by turn.
        out.sort_by_key(|v| v.get("turnNumber").and_then(Value::as_i64).unwrap_or(0));
        out.iter().map(|v| to_python(py, v)).collect()
    }

    /// Sends every query at once (their positions are searched and
    /// batched on the net together) and returns an iterator over their
    /// responses as they finish, each with its query's ``id``. A query the
    /// engine refuses yields its error response (a dict with ``"error"``)
    /// rather than raising, so the others go on; a query that does not
    /// parse raises ``ValueError`` before anything is sent. Warnings become
    /// Python ``UserWarning``. Leaving the iterator early or
    /// ``KeyboardInterrupt`` terminates the remaining searches.
    fn analyze_many(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<AnalysisStream> {
        let mut texts = Vec::new();
        for q in queries.try_iter()? {
            texts.push(query_text(py, &q?)?);
        }
        let batch = Batch::start(self.core.clone(), &texts)?;
        Ok(AnalysisStream { batch })
    }

    /// Terminates every query in progress (KataGo's ``terminate_all``):
    /// running searches end with what they found so far, queued ones with
    /// ``noResults``. Safe to call from another thread.
    fn cancel(&self) -> PyResult<()> {
        let id = format!("{}-cancel", self.core.new_id());
        self.core
            .send(&serde_json::json!({"id": id, "action": "terminate_all"}))
    }

    /// Stops the engine (terminating any search) and frees its threads.
    fn close(&self, py: Python<'_>) {
        let core = self.core.clone();
        py.allow_threads(move || core.close());
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }
}

impl Drop for Analyzer {
    fn drop(&mut self) {
        self.core.close();
    }
}

/// The responses of ``Analyzer.analyze_many``, as they finish.
#[pyclass(module = "engine_go")]
pub struct AnalysisStream {
    batch: Batch,
}

#[pymethods]
impl AnalysisStream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        while let Some(v) = self.batch.wait(py)? {
            if let Kind::Warning = kind(&v) {
                warn(py, &v)?;
                continue;
            }
            return to_python(py, &v).map(Some);
        }
        Ok(None)
    }

    /// Queries not yet finished.
    #[getter]
    fn remaining(&self) -> usize {
        self.batch.pending.len()
    }
}
