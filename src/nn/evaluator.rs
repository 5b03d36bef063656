//! The batching evaluator that many search threads share (KataGo's
//! `NNEvaluator`).
//!
//! A caller thread checks the NN cache, picks the symmetries, queues one job
//! per symmetry on a crossbeam channel and blocks on its own reply channel.
//! Each server thread owns one [`BatchModel`]: it takes jobs off the queue,
//! forms a batch, runs one forward pass per tensor shape and sends every
//! job its raw row back. The caller then post-processes (undoes the
//! symmetry, softmaxes, flips to white's perspective) on its own thread,
//! so that CPU work spreads over the search threads as in KataGo, and
//! stores the result in the cache.
//!
//! # Batching policy
//!
//! A server blocks for the first job, then takes whatever else is queued
//! (up to `max_batch_size`). If the batch is still smaller than the number
//! of callers recently seen waiting at once (divided among the servers), it
//! waits at most [`EvaluatorConfig::max_batch_wait`] for them: those callers
//! are most likely search threads walking down the tree for their next
//! leaf. A lone searching thread is therefore never delayed (one caller
//! seen, batch of one, no wait). "Recently" is the peak of the count over
//! the current and the previous 100 ms, so when a search with many threads
//! ends, at most ~200 ms of batches each wait `max_batch_wait` in vain.
//!
//! # Callers that run the net themselves
//!
//! With [`EvaluatorConfig::callers_run`] (the Rust CPU backend, whose
//! models run batch 1 on one core), a caller that finds a model free and no
//! other caller waiting runs its own rows on that model, on its own thread:
//! no hand-over to a server and back, no second thread per core. With as
//! many search threads as models (the CPU default) the servers then sit
//! idle and each search thread is one core's whole pipeline; with more
//! callers than models the rest queue and the servers batch them as above.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::batch::{BatchModel, InputBatch, ModelError};
use super::cache::NnCache;
use super::output::NnOutput;
use super::outputs::NetOutputs;
use super::postprocess::{average, postprocess, RowLayout};
use super::request::{EvalError, EvalParams, EvalRequest, SymmetryChoice};
use super::symmetry::Symmetry;
use crate::game::MAX_LEN;

/// Settings of an [`Evaluator`] (KataGo's names in brackets).
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluatorConfig {
    /// Most rows in one forward pass (`nnMaxBatchSize`); at least 1.
    pub max_batch_size: usize,
    /// The cache holds `2^this` entries (`nnCacheSizePowerOfTwo`).
    pub cache_size_power_of_two: u32,
    /// Longest a server waits for more callers to fill a batch (see the
    /// module docs); zero never waits, as KataGo.
    pub max_batch_wait: Duration,
    /// Put every board up to this size into a padded square of this side,
    /// so boards of different sizes share batches (KataGo's `nnXLen` /
    /// `nnYLen` without `requireExactNNLen`). `None`: exact-size tensors,
    /// and rows batch together only when their tensor shapes match.
    pub pad_to_len: Option<usize>,
    /// Seed of the random symmetries drawn for [`SymmetryChoice::Random`]
    /// and [`SymmetryChoice::Average`] requests (KataGo's `nnRandSeed`);
    /// `None`: a random seed.
    pub rand_seed: Option<u64>,
    /// Whether a caller may run its rows itself on a free model when no
    /// other caller is waiting (see the module docs). Only for models
    /// that any thread may run in turn at batch 1 without loss (the Rust
    /// CPU backend); `false` (every row goes through a server, as KataGo)
    /// by default.
    pub callers_run: bool,
}

impl Default for EvaluatorConfig {
    fn default() -> Self {
        EvaluatorConfig {
            max_batch_size: 32,
            cache_size_power_of_two: 20,
            max_batch_wait: Duration::from_micros(500),
            pad_to_len: None,
            rand_seed: None,
            callers_run: false,
        }
    }
}

/// Upper bounds of the batch size histogram's buckets ([`EvalStats`]);
/// larger batches are counted only in `batches`.
pub const BATCH_SIZE_BUCKETS: [u64; 10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/// Counters since the evaluator started or [`Evaluator::clear_stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvalStats {
    /// Calls to [`Evaluator::evaluate`].
    pub requests: u64,
    /// Requests answered from the cache.
    pub cache_hits: u64,
    /// Rows the network evaluated (a request averaging N symmetries is N).
    pub rows: u64,
    /// Forward passes.
    pub batches: u64,
    /// Forward passes by size: `[i]` counts those of more rows than
    /// `BATCH_SIZE_BUCKETS[i - 1]` and at most `BATCH_SIZE_BUCKETS[i]`.
    pub batch_sizes: [u64; BATCH_SIZE_BUCKETS.len()],
}

impl EvalStats {
    /// Mean rows per forward pass (0 before the first).
    pub fn average_batch_size(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.rows as f64 / self.batches as f64
        }
    }
}

/// The batching evaluator: cheap to clone, every clone shares the same
/// server threads, cache and counters. Dropping the last clone stops the
/// server threads (after the batch in progress) and joins them.
#[derive(Clone)]
pub struct Evaluator {
    inner: Arc<Inner>,
}

struct Inner {
    queue: Option<Sender<Job>>,
    servers: Vec<JoinHandle<()>>,
    /// The servers' models, each with its input buffers: a server locks
    /// its own for each batch; with `callers_run` a caller locks a free
    /// one and runs its own rows.
    slots: Vec<Arc<parking_lot::Mutex<ModelSlot>>>,
    /// Where the next caller starts looking for a free model (so that
    /// callers spread over them).
    next_slot: AtomicUsize,
    shared: Arc<Shared>,
    cache: NnCache,
    config: EvaluatorConfig,
    /// Spatial, global and metadata inputs per row.
    features: (usize, usize, usize),
    /// The models' KataGo model version.
    model_version: i32,
    /// Draws random symmetries (seeded by `nnRandSeed`).
    rng: parking_lot::Mutex<StdRng>,
}

/// State the caller threads and the servers both touch.
#[derive(Default)]
struct Shared {
    requests: AtomicU64,
    cache_hits: AtomicU64,
    rows: AtomicU64,
    batches: AtomicU64,
    batch_sizes: [AtomicU64; BATCH_SIZE_BUCKETS.len()],
    /// Callers currently blocked in `evaluate` waiting for the network.
    waiting_callers: AtomicUsize,
}

/// A job's answer: its symmetry slot, and the batch's outputs with the
/// job's row in them (shared by every job of the batch, so no row is
/// copied; the caller post-processes its own row).
type Reply = (usize, Result<(Arc<NetOutputs>, usize), EvalError>);

/// One row for the network: a request in one symmetry.
struct Job {
    req: Arc<EvalRequest>,
    layout: RowLayout,
    /// Which of the caller's symmetries this is.
    slot: usize,
    reply: Sender<Reply>,
}

impl Evaluator {
    /// An evaluator with one server thread owning `model`.
    ///
    /// # Panics
    /// If the operating system cannot start a thread.
    pub fn new(model: Box<dyn BatchModel>, config: EvaluatorConfig) -> Evaluator {
        match Evaluator::with_models(vec![model], config) {
            Ok(e) => e,
            Err(e) => panic!("cannot start the evaluator: {e}"),
        }
    }

    /// An evaluator with one server thread per model (e.g. one per GPU, or
    /// two on one GPU to overlap the CPU part of batches). All models must
    /// take the same inputs.
    pub fn with_models(
        models: Vec<Box<dyn BatchModel>>,
        mut config: EvaluatorConfig,
    ) -> Result<Evaluator, EvalError> {
        let first = models
            .first()
            .ok_or_else(|| EvalError::BadRequest("an evaluator needs at least one model".into()))?;
        let features_of = |m: &dyn BatchModel| {
            (
                m.num_spatial_features(),
                m.num_global_features(),
                m.num_meta_features(),
            )
        };
        let features = features_of(first.as_ref());
        let model_version = first.model_version();
        if models
            .iter()
            .any(|m| features_of(m.as_ref()) != features || m.model_version() != model_version)
        {
            return Err(EvalError::BadRequest(
                "the models of one evaluator must be of one version and take the same input features"
                    .into(),
            ));
        }
        config.max_batch_size = config.max_batch_size.max(1);
        config.pad_to_len = config.pad_to_len.map(|n| n.clamp(1, MAX_LEN));

        let (queue, jobs) = channel::unbounded::<Job>();
        let shared = Arc::new(Shared::default());
        let num_servers = models.len();
        let mut servers = Vec::with_capacity(num_servers);
        let mut slots = Vec::with_capacity(num_servers);
        for (i, model) in models.into_iter().enumerate() {
            let slot = Arc::new(parking_lot::Mutex::new(ModelSlot {
                model: Some(model),
                batch: InputBatch::default(),
            }));
            slots.push(Arc::clone(&slot));
            let server = Server {
                slot,
                jobs: jobs.clone(),
                shared: Arc::clone(&shared),
                max_batch_size: config.max_batch_size,
                max_wait: config.max_batch_wait,
                num_servers,
                features,
            };
            let handle = std::thread::Builder::new()
                .name(format!("nn-server-{i}"))
                .spawn(move || server.run())
                .map_err(|e| EvalError::BadRequest(format!("cannot start a server thread: {e}")))?;
            servers.push(handle);
        }
        Ok(Evaluator {
            inner: Arc::new(Inner {
                queue: Some(queue),
                servers,
                slots,
                next_slot: AtomicUsize::new(0),
                shared,
                cache: NnCache::new(config.cache_size_power_of_two),
                rng: parking_lot::Mutex::new(
                    config
                        .rand_seed
                        .map_or_else(StdRng::from_entropy, StdRng::seed_from_u64),
                ),
                config,
                features,
                model_version,
            }),
        })
    }

    /// Evaluates one position, blocking this thread until the result is
    /// ready; any number of threads may call this at once.
    ///
    /// A cached result is returned as is (the same `Arc`), unless ownership
    /// is asked for and the cached one lacks it: then the net runs again and
    /// only its ownership is used, so the policy and value stay the ones the
    /// search has already seen (as KataGo does).
    pub fn evaluate(&self, mut req: EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        let inner = &*self.inner;
        inner.shared.requests.fetch_add(1, Ordering::Relaxed);
        req.validate(inner.features)?;
        req.params = self.effective(req.params);
        let key = req.params.cache_key(req.hash);
        let mut without_ownership = None;
        if !req.params.skip_cache {
            // A hit for another board size can only come from a caller
            // whose hash omits the size; treat it as a miss.
            let size = (req.input.x_size, req.input.y_size);
            if let Some(hit) = inner
                .cache
                .get(key)
                .filter(|h| (h.x_size, h.y_size) == size)
            {
                if !req.params.include_ownership || hit.white_ownership.is_some() {
                    inner.shared.cache_hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(hit);
                }
                without_ownership = Some(hit);
            }
        }
        let mut out = self.run_network(req)?;
        if let Some(old) = without_ownership {
            let ownership = out.white_ownership.take();
            out = NnOutput {
                white_ownership: ownership,
                ..(*old).clone()
            };
        }
        let out = Arc::new(out);
        inner.cache.insert(key, Arc::clone(&out));
        Ok(out)
    }

    /// The cached result for a position with this hash and these params, if
    /// any (lets a caller skip encoding the input); counts as a cache hit.
    pub fn lookup(&self, hash: u128, params: &EvalParams) -> Option<Arc<NnOutput>> {
        let params = self.effective(*params);
        let hit = self.inner.cache.get(params.cache_key(hash))?;
        if params.include_ownership && hit.white_ownership.is_none() {
            return None;
        }
        self.inner.shared.cache_hits.fetch_add(1, Ordering::Relaxed);
        Some(hit)
    }

    /// `params` as this net runs them: KataGo gives a human-style net (one
    /// that reads metadata) no policy optimism.
    fn effective(&self, mut params: EvalParams) -> EvalParams {
        if self.inner.features.2 > 0 {
            params.policy_optimism = 0.0;
        }
        params
    }

    fn run_network(&self, req: EvalRequest) -> Result<NnOutput, EvalError> {
        let inner = &*self.inner;
        let queue = inner.queue.as_ref().ok_or(EvalError::Stopped)?;
        let mut syms = Symmetry::ALL;
        let count = match req.params.symmetry {
            SymmetryChoice::Fixed(s) => {
                syms[0] = s;
                1
            }
            SymmetryChoice::Random => {
                syms[0] = Symmetry::ALL[inner.rng.lock().gen_range(0..Symmetry::COUNT)];
                1
            }
            SymmetryChoice::Seeded(seed) => {
                // SplitMix64's finaliser: nearby seeds give unrelated symmetries.
                let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                syms[0] = Symmetry::ALL[(z % Symmetry::COUNT as u64) as usize];
                1
            }
            SymmetryChoice::Average(n) => {
                // n distinct symmetries: a partial Fisher-Yates shuffle.
                let n = usize::from(n);
                let mut rng = inner.rng.lock();
                for i in 0..n {
                    syms.swap(i, rng.gen_range(i..Symmetry::COUNT));
                }
                n
            }
        };
        let (x_size, y_size) = (req.input.x_size, req.input.y_size);
        let pad = inner.config.pad_to_len;
        let layouts = syms.map(|s| RowLayout::new(x_size, y_size, s, pad));
        let want_ownership = req.params.include_ownership;
        let version = inner.model_version;
        if inner.config.callers_run {
            if let Some(out) = self.run_here(&req, &layouts[..count])? {
                return Ok(out);
            }
        }
        let req = Arc::new(req);
        let (reply, replies) = channel::bounded(count);

        let _waiting = WaitingCaller::enter(&inner.shared.waiting_callers);
        for (slot, layout) in layouts.iter().take(count).enumerate() {
            let job = Job {
                req: Arc::clone(&req),
                layout: *layout,
                slot,
                reply: reply.clone(),
            };
            queue.send(job).map_err(|_| EvalError::Stopped)?;
        }
        drop(reply);

        // Each caller post-processes its own row, on its own thread.
        let receive = || -> Result<(usize, NnOutput), EvalError> {
            let (slot, reply) = replies.recv().map_err(|_| EvalError::Stopped)?;
            let (outputs, row) = reply?;
            let layout = &layouts[slot];
            let out = postprocess(&outputs.row(row), layout, &req, want_ownership, version)?;
            Ok((slot, out))
        };
        if count == 1 {
            return receive().map(|(_, out)| out);
        }
        let mut outputs = Vec::with_capacity(count);
        for _ in 0..count {
            outputs.push(receive()?);
        }
        // Average in symmetry order so the result does not depend on which
        // reply came first.
        outputs.sort_unstable_by_key(|(slot, _)| *slot);
        let outputs: Vec<NnOutput> = outputs.into_iter().map(|(_, o)| o).collect();
        Ok(average(&outputs))
    }

    /// Runs `req`'s rows (one forward pass) on this thread, with a free
    /// model, when no other caller is waiting for one; `None` otherwise
    /// (the rows then go through the queue).
    fn run_here(
        &self,
        req: &EvalRequest,
        layouts: &[RowLayout],
    ) -> Result<Option<NnOutput>, EvalError> {
        let inner = &*self.inner;
        // Waiting callers come first (their batch forms on a server), and
        // rows of two tensor shapes (transposed non-square boards) would
        // take two passes.
        if inner.shared.waiting_callers.load(Ordering::Relaxed) > 0
            || layouts.iter().any(|l| l.shape() != layouts[0].shape())
        {
            return Ok(None);
        }
        let n = inner.slots.len();
        let start = inner.next_slot.fetch_add(1, Ordering::Relaxed);
        let free = (0..n).find_map(|i| {
            inner.slots[(start + i) % n]
                .try_lock()
                .filter(|slot| slot.model.is_some())
        });
        let Some(mut slot) = free else {
            return Ok(None);
        };
        let outputs = match slot.forward(inner.features, layouts.iter().map(|l| (req, l))) {
            Ok(outputs) => outputs,
            Err(ForwardError::Failed(e) | ForwardError::Panicked(e)) => return Err(e),
            Err(ForwardError::Gone) => return Ok(None),
        };
        drop(slot);
        inner.shared.count_batch(layouts.len());
        let want_ownership = req.params.include_ownership;
        let version = inner.model_version;
        let finish = |row: usize| {
            postprocess(
                &outputs.row(row),
                &layouts[row],
                req,
                want_ownership,
                version,
            )
        };
        // One row (the search's case) needs no list of rows.
        if layouts.len() == 1 {
            return finish(0).map(Some);
        }
        let rows = (0..layouts.len())
            .map(finish)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(average(&rows)))
    }

    /// The counters so far.
    pub fn stats(&self) -> EvalStats {
        let s = &self.inner.shared;
        EvalStats {
            requests: s.requests.load(Ordering::Relaxed),
            cache_hits: s.cache_hits.load(Ordering::Relaxed),
            rows: s.rows.load(Ordering::Relaxed),
            batches: s.batches.load(Ordering::Relaxed),
            batch_sizes: std::array::from_fn(|i| s.batch_sizes[i].load(Ordering::Relaxed)),
        }
    }

    /// Resets the counters to zero.
    pub fn clear_stats(&self) {
        let s = &self.inner.shared;
        for c in [&s.requests, &s.cache_hits, &s.rows, &s.batches]
            .into_iter()
            .chain(&s.batch_sizes)
        {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// Empties the NN cache.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    /// The NN cache (for its size and statistics).
    pub fn cache(&self) -> &NnCache {
        &self.inner.cache
    }

    /// The configuration in force (after clamping).
    pub fn config(&self) -> &EvaluatorConfig {
        &self.inner.config
    }

    /// Spatial input planes per position the model expects.
    pub fn num_spatial_features(&self) -> usize {
        self.inner.features.0
    }

    /// Global input features per position the model expects.
    pub fn num_global_features(&self) -> usize {
        self.inner.features.1
    }

    /// SGF metadata inputs per position the model expects (0: it reads
    /// none; 192: a human-style net, which needs a profile).
    pub fn num_meta_features(&self) -> usize {
        self.inner.features.2
    }

    /// The KataGo model version of the net (which input features it
    /// reads, see [`super::InputVersion::of_model_version`]).
    pub fn model_version(&self) -> i32 {
        self.inner.model_version
    }

    /// How many server threads (models) there are.
    pub fn num_servers(&self) -> usize {
        self.inner.servers.len()
    }
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("config", &self.inner.config)
            .field("servers", &self.inner.servers.len())
            .field("stats", &self.stats())
            .finish()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the queue ends each server's loop once it is idle.
        self.queue = None;
        for handle in self.servers.drain(..) {
            // A server that died has already failed its callers.
            let _ = handle.join();
        }
    }
}

/// Counts a caller as waiting for the network while alive.
struct WaitingCaller<'a>(&'a AtomicUsize);

impl<'a> WaitingCaller<'a> {
    fn enter(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        WaitingCaller(count)
    }
}

impl Drop for WaitingCaller<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The peak number of waiting callers over the current and previous period.
struct CallerEstimate {
    current: usize,
    previous: usize,
    since: Instant,
}

impl CallerEstimate {
    const PERIOD: Duration = Duration::from_millis(100);

    fn new() -> Self {
        CallerEstimate {
            current: 0,
            previous: 0,
            since: Instant::now(),
        }
    }

    fn observe(&mut self, waiting: usize) -> usize {
        if self.since.elapsed() >= Self::PERIOD {
            self.previous = self.current;
            self.current = 0;
            self.since = Instant::now();
        }
        self.current = self.current.max(waiting);
        self.current.max(self.previous)
    }
}

/// A model and the input buffers of its batches.
struct ModelSlot {
    /// `None` once the model panicked: its state is unknown, so it is
    /// dropped and nobody runs it again.
    model: Option<Box<dyn BatchModel>>,
    batch: InputBatch,
}

impl ModelSlot {
    /// One forward pass of `rows` on this slot's model, its outputs
    /// checked against their shape; a panic drops the model and is
    /// returned as an error naming it.
    fn forward<'a>(
        &mut self,
        features: (usize, usize, usize),
        rows: impl ExactSizeIterator<Item = (&'a EvalRequest, &'a RowLayout)> + Clone,
    ) -> Result<NetOutputs, ForwardError> {
        let ModelSlot { model, batch } = self;
        let Some(net) = model.as_mut() else {
            return Err(ForwardError::Gone);
        };
        let count = rows.len();
        let shape = rows.clone().next().map(|(_, layout)| layout.shape());
        fill_batch(batch, features, rows);
        match catch_unwind(AssertUnwindSafe(|| net.forward(batch))) {
            Ok(Ok(outputs)) => {
                let (x_len, y_len) = shape.unwrap_or_default();
                match outputs.check(count, y_len, x_len) {
                    Ok(()) => Ok(outputs),
                    Err(msg) => Err(ForwardError::Failed(EvalError::BadOutput(format!(
                        "model outputs: {msg}"
                    )))),
                }
            }
            Ok(Err(e)) => Err(ForwardError::Failed(EvalError::Model(e))),
            Err(panic) => {
                *model = None;
                let msg = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                Err(ForwardError::Panicked(EvalError::Model(ModelError(
                    format!("model panicked: {msg}"),
                ))))
            }
        }
    }
}

/// Why [`ModelSlot::forward`] gave no outputs.
enum ForwardError {
    /// The model returned an error; it can go on.
    Failed(EvalError),
    /// The model panicked now and was dropped.
    Panicked(EvalError),
    /// The model had panicked before.
    Gone,
}

/// One server thread: owns a model, turns queued jobs into batches.
struct Server {
    slot: Arc<parking_lot::Mutex<ModelSlot>>,
    jobs: Receiver<Job>,
    shared: Arc<Shared>,
    max_batch_size: usize,
    max_wait: Duration,
    num_servers: usize,
    /// Spatial, global and metadata inputs per row.
    features: (usize, usize, usize),
}

impl Server {
    fn run(mut self) {
        let mut jobs: Vec<Job> = Vec::with_capacity(self.max_batch_size);
        let mut callers = CallerEstimate::new();
        // The queue closes (recv fails) when the evaluator is dropped.
        while let Ok(first) = self.jobs.recv() {
            jobs.push(first);
            self.gather(&mut jobs, &mut callers);
            jobs.sort_unstable_by_key(|j| j.layout.shape());
            let mut alive = true;
            for group in jobs.chunk_by(|a, b| a.layout.shape() == b.layout.shape()) {
                if alive {
                    alive = self.run_group(group);
                } else {
                    fail(group, &EvalError::Stopped);
                }
            }
            jobs.clear();
            if !alive {
                // The model panicked: its state is unknown, so this server
                // stops; jobs still queued fail once every server is gone.
                return;
            }
        }
    }

    /// Adds queued jobs to `jobs`, waiting briefly for likely ones.
    fn gather(&self, jobs: &mut Vec<Job>, callers: &mut CallerEstimate) {
        while jobs.len() < self.max_batch_size {
            match self.jobs.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        let waiting = self.shared.waiting_callers.load(Ordering::Relaxed);
        let expected = callers.observe(waiting).div_ceil(self.num_servers);
        let target = expected.min(self.max_batch_size);
        if jobs.len() >= target || self.max_wait.is_zero() {
            return;
        }
        let deadline = Instant::now() + self.max_wait;
        while jobs.len() < target {
            match self.jobs.recv_deadline(deadline) {
                Ok(job) => jobs.push(job),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// Runs one forward pass for jobs sharing a tensor shape and replies to
    /// each; false if the model panicked.
    fn run_group(&mut self, group: &[Job]) -> bool {
        let result = self.slot.lock().forward(
            self.features,
            group.iter().map(|job| (&*job.req, &job.layout)),
        );
        match result {
            Ok(outputs) => {
                self.shared.count_batch(group.len());
                let outputs = Arc::new(outputs);
                for (row, job) in group.iter().enumerate() {
                    // A caller that gave up (another of its rows failed)
                    // no longer listens; nothing to do then.
                    let _ = job.reply.send((job.slot, Ok((Arc::clone(&outputs), row))));
                }
                true
            }
            Err(ForwardError::Failed(e)) => {
                fail(group, &e);
                true
            }
            Err(ForwardError::Panicked(e)) => {
                fail(group, &e);
                false
            }
            Err(ForwardError::Gone) => {
                // A caller's own run panicked the model.
                fail(group, &EvalError::Stopped);
                false
            }
        }
    }
}

impl Shared {
    /// Counts one forward pass of `rows` rows.
    fn count_batch(&self, rows: usize) {
        self.rows.fetch_add(rows as u64, Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
        if let Some(bucket) = BATCH_SIZE_BUCKETS.iter().position(|&b| rows as u64 <= b) {
            self.batch_sizes[bucket].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Writes `rows` (each a request in one symmetry's layout, all of one
/// tensor shape) into `batch`.
fn fill_batch<'a>(
    batch: &mut InputBatch,
    features: (usize, usize, usize),
    rows: impl ExactSizeIterator<Item = (&'a EvalRequest, &'a RowLayout)> + Clone,
) {
    let (c, g, m) = features;
    let Some((_, first)) = rows.clone().next() else {
        return;
    };
    let (x_len, y_len) = first.shape();
    batch.reset(rows.len(), features, x_len, y_len);
    let plane = x_len * y_len;
    for (r, (req, layout)) in rows.enumerate() {
        layout.write_row(
            &req.input.spatial,
            c,
            &mut batch.spatial[r * c * plane..(r + 1) * c * plane],
            &mut batch.mask[r * plane..(r + 1) * plane],
        );
        batch.global[r * g..(r + 1) * g].copy_from_slice(&req.input.global);
        batch.meta[r * m..(r + 1) * m].copy_from_slice(&req.input.meta);
        batch.include_ownership |= req.params.include_ownership;
    }
}

fn fail(group: &[Job], err: &EvalError) {
    for job in group {
        let _ = job.reply.send((job.slot, Err(err.clone())));
    }
}
