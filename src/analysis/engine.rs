//! The analysis engine's core, shared by every client: one fair queue of
//! positions, `numAnalysisThreads` analysis threads over one backend (so
//! one NN evaluator batches every client's positions), and the bookkeeping
//! of open jobs. `engine analysis` is one [`Client`] of it (stdin/stdout);
//! `engine serve` makes one per HTTP request or WebSocket.
//!
//! Life of a job, as in KataGo: it is *queued* until an analysis thread pops
//! it, *popped* while the thread prepares the search, then *running* under
//! that thread's index. `terminate` flips it to *terminated*: a queued job is
//! answered with `noResults` at once (by the client), a running one is
//! stopped and answered by its thread with whatever the search found. Each
//! job ends with exactly one final response, whoever writes it; a client
//! that goes away gets none (its jobs are dropped or stopped).

use std::any::Any;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};
use serde_json::Value;

use super::backend::{AnalysisBackend, SearchJob, Searcher};
use super::fair_queue::FairQueue;
use super::options::{AnalysisLog, ServerOptions};
use super::response::{analysis_json, no_results_json, tsumego_json, PositionFacts, ReportOptions};

/// Job states; values >= 0 are the index of the thread running it.
const IN_QUEUE: i64 = -1;
const POPPED: i64 = -2;
const TERMINATED: i64 = -3;

/// Where a client's responses go. Called from the client's own thread and
/// from analysis threads; each call is one whole response.
pub trait ResponseSink: Send + Sync + 'static {
    /// One response object.
    fn send(&self, value: &Value);
    /// Every job of one of this client's queries has had its final
    /// response (sent just before).
    fn query_finished(&self) {}
}

/// Whose jobs `terminate` and `terminate_all` reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminateScope {
    /// The client's own (stdin, a WebSocket).
    Client,
    /// Every client of the same key (one-shot HTTP requests, whose
    /// queries are open on other connections).
    Key,
}

/// Who a client is to the engine.
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    /// Its key's number (`0..`): its share of the queue and its scope.
    pub key: usize,
    /// Its key's weight in the fair queue (at least 1).
    pub weight: u32,
    /// Whose jobs its terminate actions reach.
    pub scope: TerminateScope,
    /// Stop and drop its open jobs when the client is dropped (a network
    /// client that went away); stdin's client instead lets them finish.
    pub cancel_on_drop: bool,
}

/// One query's jobs still without a final response, and whatever the
/// caller holds for as long as the query is open (a quota slot).
pub(crate) struct QueryState {
    /// Jobs whose final response has not started to be written.
    remaining: AtomicUsize,
    /// Jobs whose final response has not been written yet: the query is
    /// finished only when this reaches 0, since finals of different turns
    /// are written by different threads at once.
    unwritten: AtomicUsize,
    /// Dropped with the last final response (before the client hears of
    /// it, so a quota slot is free by then), or with the query's jobs when
    /// they are dropped unanswered.
    hold: Mutex<Option<Box<dyn Any + Send + Sync>>>,
    /// The client's count of its queries not yet finished.
    client_open: Arc<AtomicUsize>,
}

/// One (query, turn) to analyse.
pub(crate) struct Task<P> {
    pub(crate) internal_id: u64,
    pub(crate) id: String,
    pub(crate) turn: usize,
    pub(crate) facts: PositionFacts,
    pub(crate) job: SearchJob<P>,
    pub(crate) report: ReportOptions,
    pub(crate) priority: i64,
    /// The framed problem of a `tsumego` query, judged into each response.
    pub(crate) tsumego: Option<Arc<crate::tsumego::Prepared>>,
    status: AtomicI64,
    client: u64,
    key: usize,
    sink: Arc<dyn ResponseSink>,
    query: Arc<QueryState>,
}

impl<P> Task<P> {
    /// A queued job of one query (see [`Client::prepare`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        internal_id: u64,
        id: String,
        turn: usize,
        facts: PositionFacts,
        job: SearchJob<P>,
        report: ReportOptions,
        priority: i64,
    ) -> Self {
        Task {
            internal_id,
            id,
            turn,
            facts,
            job,
            report,
            priority,
            tsumego: None,
            status: AtomicI64::new(IN_QUEUE),
            client: 0,
            key: 0,
            sink: Arc::new(NoSink),
            query: Arc::new(QueryState {
                remaining: AtomicUsize::new(0),
                unwritten: AtomicUsize::new(0),
                hold: Mutex::new(None),
                client_open: Arc::new(AtomicUsize::new(0)),
            }),
        }
    }
}

struct NoSink;
impl ResponseSink for NoSink {
    fn send(&self, _: &Value) {}
}

/// Counters of the engine for `engine serve`'s metrics.
#[derive(Debug, Clone, Default)]
pub struct EngineStats {
    /// Positions queued, per key number (keys with none left out).
    pub queued_by_key: Vec<(usize, usize)>,
    /// Searches running now.
    pub running: usize,
    /// Jobs stopped or dropped by `terminate` or by their client leaving.
    pub cancelled: u64,
    /// Searches finished.
    pub searches: u64,
    /// Visits of the finished searches.
    pub visits: u64,
}

pub(crate) struct Shared<B: AnalysisBackend> {
    pub(crate) backend: Arc<B>,
    pub(crate) opts: ServerOptions,
    queue: Mutex<QueueState<Arc<Task<B::Params>>>>,
    queue_cv: Condvar,
    /// Jobs not yet finished, by internal id.
    open: Mutex<BTreeMap<u64, Arc<Task<B::Params>>>>,
    /// Stop flag of each analysis thread's current search.
    stops: Vec<AtomicBool>,
    /// Set on a quick quit: nothing more is written, nothing started.
    killed: AtomicBool,
    pub(crate) next_internal_id: AtomicU64,
    next_client: AtomicU64,
    running: AtomicUsize,
    cancelled: AtomicU64,
    searches: AtomicU64,
    visits: AtomicU64,
}

struct QueueState<T> {
    queue: FairQueue<T>,
    /// Jobs popped and not yet done, per key number: a spare thread only
    /// takes a job of a key with none.
    running_by_key: Vec<usize>,
    /// Analysis threads (not spare ones) with a job: spare threads take
    /// jobs only when all are busy.
    busy_regular: usize,
    /// No more jobs will come.
    closed: bool,
}

impl<B: AnalysisBackend> Shared<B> {
    pub(crate) fn log(&self) -> AnalysisLog {
        self.opts.log
    }

    /// Writes one response to `sink`, logged as KataGo does.
    pub(crate) fn write(&self, sink: &dyn ResponseSink, value: &Value) {
        if self.killed.load(Ordering::Acquire) {
            return;
        }
        if self.log().responses {
            crate::logfile::line(&format!("Response: {value}"));
        }
        sink.send(value);
    }

    /// The final response of `task`; tells its client when it was the
    /// query's last.
    fn finish(&self, task: &Task<B::Params>, value: &Value) {
        if task.query.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The quota slot is free before the client can read the last
            // final response: a client that sends its next query on reading
            // it is never refused for the one just answered.
            drop(task.query.hold.lock().take());
        }
        self.write(&*task.sink, value);
        // Counted after the write: another turn's final may still be being
        // written by another thread when this one's is done, and the
        // client (an HTTP reply) ends at `query_finished`.
        if task.query.unwritten.fetch_sub(1, Ordering::AcqRel) == 1 {
            task.query.client_open.fetch_sub(1, Ordering::AcqRel);
            task.sink.query_finished();
        }
    }
}

/// The shared engine (see the module docs).
pub struct AnalysisEngine<B: AnalysisBackend> {
    shared: Arc<Shared<B>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl<B: AnalysisBackend> AnalysisEngine<B> {
    /// Starts the analysis threads: `numAnalysisThreads`, then the spare
    /// ones.
    pub fn start(backend: Arc<B>, opts: ServerOptions) -> std::io::Result<Self> {
        let threads = opts.searches_at_once();
        let shared = Arc::new(Shared {
            backend: backend.clone(),
            opts,
            queue: Mutex::new(QueueState {
                queue: FairQueue::new(),
                running_by_key: Vec::new(),
                busy_regular: 0,
                closed: false,
            }),
            queue_cv: Condvar::new(),
            open: Mutex::new(BTreeMap::new()),
            stops: (0..threads).map(|_| AtomicBool::new(false)).collect(),
            killed: AtomicBool::new(false),
            next_internal_id: AtomicU64::new(0),
            next_client: AtomicU64::new(0),
            running: AtomicUsize::new(0),
            cancelled: AtomicU64::new(0),
            searches: AtomicU64::new(0),
            visits: AtomicU64::new(0),
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
        Ok(AnalysisEngine {
            shared,
            workers: Mutex::new(workers),
        })
    }

    /// A new client whose responses go to `sink`.
    pub fn client(&self, opts: ClientOptions, sink: Arc<dyn ResponseSink>) -> Client<B> {
        Client {
            shared: self.shared.clone(),
            id: self.shared.next_client.fetch_add(1, Ordering::Relaxed),
            opts,
            sink,
            open_queries: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The backend every analysis thread shares.
    pub fn backend(&self) -> &Arc<B> {
        &self.shared.backend
    }

    /// Positions queued in all.
    pub fn queued(&self) -> usize {
        self.shared.queue.lock().queue.len()
    }

    /// Jobs queued or running.
    pub fn open_jobs(&self) -> usize {
        self.shared.open.lock().len()
    }

    /// The engine's counters.
    pub fn stats(&self) -> EngineStats {
        let queued_by_key = self.shared.queue.lock().queue.depths().collect();
        EngineStats {
            queued_by_key,
            running: self.shared.running.load(Ordering::Relaxed),
            cancelled: self.shared.cancelled.load(Ordering::Relaxed),
            searches: self.shared.searches.load(Ordering::Relaxed),
            visits: self.shared.visits.load(Ordering::Relaxed),
        }
    }

    /// A quick quit: nothing more is written, queued jobs are dropped and
    /// running searches stopped.
    pub fn kill(&self) {
        self.shared.killed.store(true, Ordering::Release);
        self.shared.queue.lock().queue.clear();
        for stop in &self.shared.stops {
            stop.store(true, Ordering::Release);
        }
    }

    /// No more jobs: the analysis threads finish the queue and end; waits
    /// for them.
    pub fn close_and_join(&self) {
        self.shared.queue.lock().closed = true;
        self.shared.queue_cv.notify_all();
        for w in std::mem::take(&mut *self.workers.lock()) {
            if w.join().is_err() {
                crate::logfile::startup("engine analysis: an analysis thread panicked");
            }
        }
    }
}

/// One client of the engine: its own responses, its own ids for
/// `terminate`. Queries go in through [`Client::submit`] (the line parsed
/// by [`super::parse_line`]); see `server.rs` for the stdin loop.
pub struct Client<B: AnalysisBackend> {
    pub(crate) shared: Arc<Shared<B>>,
    id: u64,
    opts: ClientOptions,
    pub(crate) sink: Arc<dyn ResponseSink>,
    /// Its queries not yet finished: a client that leaves with none (the
    /// usual end of an HTTP request) needs no search through open jobs.
    open_queries: Arc<AtomicUsize>,
}

impl<B: AnalysisBackend> Client<B> {
    /// Writes one response to this client.
    pub(crate) fn write(&self, value: &Value) {
        self.shared.write(&*self.sink, value);
    }

    /// Queues a query's jobs (made by `prepare`) for this client; `hold`
    /// lives as long as the query has a job without its final response.
    pub(crate) fn enqueue(
        &self,
        tasks: Vec<Task<B::Params>>,
        hold: Option<Box<dyn Any + Send + Sync>>,
    ) {
        if tasks.is_empty() {
            return;
        }
        self.open_queries.fetch_add(1, Ordering::AcqRel);
        let query = Arc::new(QueryState {
            remaining: AtomicUsize::new(tasks.len()),
            unwritten: AtomicUsize::new(tasks.len()),
            hold: Mutex::new(hold),
            client_open: self.open_queries.clone(),
        });
        let tasks: Vec<_> = tasks
            .into_iter()
            .map(|t| {
                Arc::new(Task {
                    client: self.id,
                    key: self.opts.key,
                    sink: self.sink.clone(),
                    query: query.clone(),
                    ..t
                })
            })
            .collect();
        {
            let mut open = self.shared.open.lock();
            for task in &tasks {
                open.insert(task.internal_id, task.clone());
            }
        }
        let mut queue = self.shared.queue.lock();
        for task in tasks {
            queue
                .queue
                .push(self.opts.key, self.opts.weight, task.priority, task);
        }
        drop(queue);
        self.shared.queue_cv.notify_all();
    }

    /// Terminates this client's open jobs (its key's, with
    /// [`TerminateScope::Key`]) with this id (any id if `None`) and, if
    /// given, one of these turn numbers.
    pub(crate) fn terminate(&self, id: Option<&str>, turns: Option<&[i64]>) {
        let shared = &*self.shared;
        // Answered after the lock is released: a slow writer (a blocked
        // stdout) must not hold up the analysis threads, which take the
        // lock to retire every job.
        let mut answer_now = Vec::new();
        let open = shared.open.lock();
        for task in open.values() {
            let mine = match self.opts.scope {
                TerminateScope::Client => task.client == self.id,
                TerminateScope::Key => task.key == self.opts.key,
            };
            let id_matches = id.is_none_or(|id| task.id == id);
            let turn_matches = turns.is_none_or(|ts| ts.contains(&(task.turn as i64)));
            if !(mine && id_matches && turn_matches) {
                continue;
            }
            match task.status.swap(TERMINATED, Ordering::AcqRel) {
                TERMINATED | POPPED => {}
                // Nobody will pop it as live any more: answer for it now.
                IN_QUEUE => {
                    shared.cancelled.fetch_add(1, Ordering::Relaxed);
                    answer_now.push(task.clone());
                }
                thread => {
                    shared.cancelled.fetch_add(1, Ordering::Relaxed);
                    if let Some(stop) = shared.stops.get(thread as usize) {
                        stop.store(true, Ordering::Release);
                    }
                }
            }
        }
        drop(open);
        if answer_now.is_empty() {
            return;
        }
        // Out of the queue before they are answered: a client that sends its
        // next query on reading the answer finds their places free (no
        // analysis thread would pop them as live any more).
        let removed = shared.queue.lock().queue.remove_where(self.opts.key, |t| {
            t.status.load(Ordering::Acquire) == TERMINATED
        });
        // A closed queue's spare threads end when it is empty.
        shared.queue_cv.notify_all();
        {
            let mut open = shared.open.lock();
            for task in &removed {
                open.remove(&task.internal_id);
            }
        }
        for task in answer_now {
            shared.finish(&task, &no_results_json(&task.id, task.turn));
        }
    }

    /// The client went away: its queued jobs leave the queue unanswered
    /// and its running searches are stopped.
    pub fn cancel_all(&self) {
        if self.open_queries.load(Ordering::Acquire) == 0 {
            return;
        }
        let shared = &*self.shared;
        let mut dropped = Vec::new();
        {
            let open = shared.open.lock();
            for task in open.values().filter(|t| t.client == self.id) {
                match task.status.swap(TERMINATED, Ordering::AcqRel) {
                    TERMINATED | POPPED => {}
                    IN_QUEUE => {
                        shared.cancelled.fetch_add(1, Ordering::Relaxed);
                        dropped.push(task.internal_id);
                    }
                    thread => {
                        shared.cancelled.fetch_add(1, Ordering::Relaxed);
                        if let Some(stop) = shared.stops.get(thread as usize) {
                            stop.store(true, Ordering::Release);
                        }
                    }
                }
            }
        }
        if dropped.is_empty() {
            return;
        }
        let removed = shared
            .queue
            .lock()
            .queue
            .remove_where(self.opts.key, |t| t.client == self.id);
        shared.queue_cv.notify_all();
        let mut open = shared.open.lock();
        for task in removed {
            open.remove(&task.internal_id);
        }
    }
}

impl<B: AnalysisBackend> Drop for Client<B> {
    fn drop(&mut self) {
        if self.opts.cancel_on_drop {
            self.cancel_all();
        }
    }
}

/// Blocks for the next job; `None` once the queue is closed and empty (of
/// jobs this thread may take). A spare thread takes a job only while every
/// analysis thread is busy, and only of a key with nothing running: it lets
/// a key whose query would wait behind another key's started searches
/// (which are never preempted) start at once.
fn pop<B: AnalysisBackend>(shared: &Shared<B>, spare: bool) -> Option<Arc<Task<B::Params>>> {
    let regular = shared.opts.num_analysis_threads.max(1);
    let mut queue = shared.queue.lock();
    loop {
        let QueueState {
            queue: fair,
            running_by_key,
            busy_regular,
            closed,
        } = &mut *queue;
        let popped = if !spare {
            fair.pop()
        } else if *busy_regular >= regular {
            fair.pop_allowed(|key| running_by_key.get(key).is_none_or(|&n| n == 0))
        } else {
            None
        };
        if let Some(task) = popped {
            if running_by_key.len() <= task.key {
                running_by_key.resize(task.key + 1, 0);
            }
            running_by_key[task.key] += 1;
            if !spare {
                *busy_regular += 1;
                if *busy_regular == regular && !fair.is_empty() {
                    // The spare threads may take what is left now.
                    shared.queue_cv.notify_all();
                }
            }
            return Some(task);
        }
        if *closed && (!spare || fair.is_empty()) {
            return None;
        }
        shared.queue_cv.wait(&mut queue);
    }
}

/// A popped job is done: its key's running count goes down.
fn done<B: AnalysisBackend>(shared: &Shared<B>, key: usize, spare: bool) {
    let mut queue = shared.queue.lock();
    if !spare {
        queue.busy_regular = queue.busy_regular.saturating_sub(1);
    }
    let left = match queue.running_by_key.get_mut(key) {
        Some(n) => {
            *n = n.saturating_sub(1);
            *n
        }
        None => return,
    };
    // A spare thread may take this key's next job now, or end.
    let wake = (left == 0 && queue.queue.len_of(key) > 0) || queue.closed;
    drop(queue);
    if wake {
        shared.queue_cv.notify_all();
    }
}

fn worker_loop<B: AnalysisBackend>(shared: &Shared<B>, index: usize, mut searcher: B::Searcher) {
    let spare = index >= shared.opts.num_analysis_threads.max(1);
    while let Some(task) = pop(shared, spare) {
        let live = task
            .status
            .compare_exchange(IN_QUEUE, POPPED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        // A job terminated while queued was already answered.
        if live {
            shared.running.fetch_add(1, Ordering::Relaxed);
            run_task(shared, index, &mut searcher, &task);
            shared.running.fetch_sub(1, Ordering::Relaxed);
        }
        shared.open.lock().remove(&task.internal_id);
        done(shared, task.key, spare);
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
        shared.finish(task, &no_results_json(&task.id, task.turn));
        return;
    }
    let on_progress = |snap: &_| {
        if let Some(v) = analysis_json(&task.id, task.turn, true, &task.facts, snap, &task.report) {
            shared.write(&*task.sink, &with_tsumego(v, task, snap));
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
            shared.finish(task, &no_results_json(&task.id, task.turn));
            return;
        }
    };
    shared.searches.fetch_add(1, Ordering::Relaxed);
    if let Some(root) = &snapshot.root {
        shared
            .visits
            .fetch_add(root.visits.max(0) as u64, Ordering::Relaxed);
    }
    if shared.log().search_info {
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
        Some(v) => shared.finish(task, &with_tsumego(v, task, &snapshot)),
        None => {
            // No root values: the search was stopped before its first visit.
            // The protocol promises one final line per job all the same.
            shared.finish(task, &no_results_json(&task.id, task.turn));
        }
    }
}

/// `response` with the `"tsumego"` judgement of a tsumego query added.
fn with_tsumego<P>(
    mut response: Value,
    task: &Task<P>,
    snap: &crate::search::AnalysisSnapshot,
) -> Value {
    if let (Some(problem), Value::Object(m)) = (&task.tsumego, &mut response) {
        m.insert("tsumego".into(), tsumego_json(problem, snap));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stub::StubBackend;
    use std::time::{Duration, Instant};

    /// Collects every response a client gets.
    #[derive(Default)]
    struct Collect(Mutex<Vec<Value>>);
    impl ResponseSink for Collect {
        fn send(&self, value: &Value) {
            self.0.lock().push(value.clone());
        }
    }

    fn query(id: &str, visits: u64) -> String {
        format!(
            r#"{{"id":"{id}","moves":[],"rules":"tromp-taylor","komi":7.5,"boardXSize":9,"boardYSize":9,"maxVisits":{visits}}}"#
        )
    }

    /// A client of key `key`, weight 1, terminating its own jobs only.
    fn client_options(key: usize, cancel_on_drop: bool) -> ClientOptions {
        ClientOptions {
            key,
            weight: 1,
            scope: TerminateScope::Client,
            cancel_on_drop,
        }
    }

    fn wait_until(what: &str, done: impl Fn() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(20), "{what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A queued job that `terminate` answers leaves the queue before its
    /// answer is written: the client that reads the answer and sends its next
    /// query finds the queue's places free, even while the only analysis
    /// thread is busy and has not popped it.
    #[test]
    fn a_terminated_queued_job_leaves_the_queue_before_it_is_answered() {
        let backend = Arc::new(StubBackend {
            default_max_visits: 10,
        });
        let engine = AnalysisEngine::start(backend, ServerOptions::default()).unwrap();
        let sink = Arc::new(Collect::default());
        let client = engine.client(client_options(0, true), sink.clone());
        client.handle_line(&query("busy", 100_000));
        wait_until("the first search runs", || engine.stats().running == 1);
        client.handle_line(&query("waiting", 100_000));
        assert_eq!(engine.queued(), 1);
        client.handle_line(r#"{"id":"t","action":"terminate","terminateId":"waiting"}"#);
        // Answered at once, and out of the queue and the open jobs by then.
        let answers = sink.0.lock().clone();
        assert!(
            answers
                .iter()
                .any(|v| v["id"] == "waiting" && v["noResults"] == true),
            "{answers:?}"
        );
        assert_eq!(engine.queued(), 0);
        assert_eq!(engine.open_jobs(), 1);
        assert_eq!(engine.stats().queued_by_key, []);
        client.handle_line(r#"{"id":"t2","action":"terminate_all"}"#);
        wait_until("the busy search ends", || engine.open_jobs() == 0);
        engine.close_and_join();
        let answers = sink.0.lock().clone();
        let finals = |id: &str| {
            answers
                .iter()
                .filter(|v| {
                    v["id"] == id && v["isDuringSearch"] != true && v.get("action").is_none()
                })
                .count()
        };
        assert_eq!((finals("busy"), finals("waiting")), (1, 1), "{answers:?}");
    }

    /// Records the finals and the query's end in the order they arrive;
    /// the first final is written slowly.
    #[derive(Default)]
    struct SlowFirstFinal {
        events: Mutex<Vec<String>>,
        finals_started: AtomicUsize,
    }
    impl ResponseSink for SlowFirstFinal {
        fn send(&self, value: &Value) {
            if value["isDuringSearch"] == true {
                return;
            }
            if self.finals_started.fetch_add(1, Ordering::AcqRel) == 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            self.events
                .lock()
                .push(format!("final {}", value["turnNumber"]));
        }
        fn query_finished(&self) {
            self.events.lock().push("finished".into());
        }
    }

    /// A query's turns are searched by different threads at once: the
    /// query is finished (an HTTP reply ends there) only after every
    /// turn's final response is written, however slow one write is.
    #[test]
    fn a_query_finishes_after_all_its_finals_are_written() {
        let backend = Arc::new(StubBackend {
            default_max_visits: 10,
        });
        let opts = ServerOptions {
            num_analysis_threads: 2,
            ..ServerOptions::default()
        };
        let engine = AnalysisEngine::start(backend, opts).unwrap();
        let sink = Arc::new(SlowFirstFinal::default());
        let client = engine.client(client_options(0, false), sink.clone());
        let line = r#"{"id":"q","moves":[["B","E5"]],"rules":"tromp-taylor","komi":7.5,"boardXSize":9,"boardYSize":9,"maxVisits":5,"analyzeTurns":[0,1]}"#;
        client.handle_line(line);
        wait_until("the query finishes", || {
            sink.events.lock().iter().any(|e| e == "finished")
        });
        engine.close_and_join();
        let events = sink.events.lock().clone();
        assert_eq!(events.len(), 3, "{events:?}");
        assert_eq!(events[2], "finished", "{events:?}");
    }

    /// A spare thread starts the query of a key with nothing running while
    /// the analysis threads are busy with another key's searches, and never
    /// takes that busy key's queued jobs.
    #[test]
    fn a_spare_thread_serves_only_keys_with_nothing_running() {
        let backend = Arc::new(StubBackend {
            default_max_visits: 10,
        });
        let opts = ServerOptions {
            spare_analysis_threads: 1,
            ..ServerOptions::default()
        };
        let engine = AnalysisEngine::start(backend, opts).unwrap();
        let client = |key| {
            let sink = Arc::new(Collect::default());
            (engine.client(client_options(key, true), sink.clone()), sink)
        };
        let (flood, _) = client(0);
        let (single, single_answers) = client(1);
        flood.handle_line(&query("f1", 100_000));
        wait_until("the first search runs", || engine.stats().running == 1);
        flood.handle_line(&query("f2", 100_000));
        // Key 0 has a search running: its second job waits for the
        // analysis thread, not the spare one.
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!((engine.stats().running, engine.queued()), (1, 1));
        single.handle_line(&query("s", 5));
        wait_until("key 1's query is answered", || {
            single_answers.0.lock().iter().any(|v| v["id"] == "s")
        });
        assert_eq!((engine.stats().running, engine.queued()), (1, 1));
        flood.handle_line(r#"{"id":"t","action":"terminate_all"}"#);
        wait_until("key 0's jobs end", || engine.open_jobs() == 0);
        engine.close_and_join();
    }
}
