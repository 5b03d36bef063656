//! `engine serve`: the analysis engine as a network service. One shared
//! engine ([`crate::analysis::AnalysisEngine`]: one queue, one search pool,
//! one batching NN evaluator) serves every client; each HTTP request or
//! WebSocket is one client of it, with its own responses and `terminate`
//! scope, and a key's share of the queue.
//!
//! - `http`: the routes (`POST /v1/analyze`, `GET /v1/ws`, health,
//!   metrics), authentication and the error answers;
//! - `ws`: one WebSocket connection;
//! - `listener`: the accept loop, timeouts and the SIGTERM drain;
//! - [`keys`]: the keys file, constant-time authentication, quotas;
//! - [`metrics`]: Prometheus' text format;
//! - `port`: the engine behind small object-safe traits, so the network
//!   code is not generic over the search backend;
//! - [`reviews`]: whole-game reviews as jobs (`/v1/reviews`), searched as
//!   queries of the same engine.
//! - `web`: the board page at `/` (`web/dist/`, compiled in; `docs/web.md`).
//!
//! Guide: `docs/serve.md`.

mod http;
pub mod keys;
mod listener;
pub mod metrics;
mod port;
pub mod reviews;
mod web;
mod ws;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::config::Config;
use crate::config::{read_fields, Field};
use crate::setup::EngineArgs;

use super::command::{load_engine, server_options, AnalysisArgs, Loaded, StartError};
use super::options::ServerOptions;
use super::AnalysisEngine;
use keys::Keyring;
use reviews::ReviewSettings;

/// Flags of `engine serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Address to listen on, `HOST:PORT` (port 0: any free port, printed
    /// at start-up).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Keys file (TOML, `[[key]]` tables: name, sha256, weight, maxVisits,
    /// maxInFlight, perMinute); every request then needs
    /// `Authorization: Bearer SECRET`.
    #[arg(long)]
    pub keys: Option<PathBuf>,
    /// Listen on a non-loopback address without keys.
    #[arg(long = "insecure-no-auth")]
    pub insecure_no_auth: bool,
    /// Analyze up to this many positions in parallel (instead of
    /// `numAnalysisThreads` in the config).
    #[arg(long = "analysis-threads")]
    pub analysis_threads: Option<usize>,
    /// Testing only: answer with a stand-in search that needs no network.
    #[arg(long = "stub-search", hide = true)]
    pub stub_search: bool,
}

/// The server's own settings (config keys of `configs/serve.toml`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServeSettings {
    /// `maxRequestBytes`: largest request body or WebSocket message.
    pub max_request_bytes: usize,
    /// `drainSeconds`: after SIGTERM, how long open queries may finish.
    pub drain: Duration,
    /// `maxQueuedPositions`: positions queued beyond which queries get 503.
    pub max_queued: usize,
    /// `headerReadTimeoutSeconds`: a request's headers must arrive within.
    pub header_read_timeout: Duration,
    /// `bodyReadTimeoutSeconds`: a request's body must arrive within.
    pub body_read_timeout: Duration,
    /// `wsIdleTimeoutSeconds`: a WebSocket with nothing in flight and no
    /// message for this long is closed.
    pub ws_idle_timeout: Duration,
    /// `retryAfterSeconds`: `Retry-After` of a 503 (queue full).
    pub retry_after_secs: u64,
    /// `spareAnalysisThreads`: analysis threads beyond
    /// `numAnalysisThreads` that only start a search for a key with none
    /// running, so that one key's started searches (never preempted)
    /// cannot make another key's query wait for them to end.
    pub spare_analysis_threads: usize,
    /// The `review*` keys: whole-game reviews.
    pub reviews: ReviewSettings,
}

impl Default for ServeSettings {
    fn default() -> Self {
        ServeSettings {
            max_request_bytes: 1 << 20,
            drain: Duration::from_secs(30),
            max_queued: 10_000,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            ws_idle_timeout: Duration::from_secs(300),
            retry_after_secs: 1,
            spare_analysis_threads: 1,
            reviews: ReviewSettings::default(),
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// The configuration reference's rows of `engine serve`'s own settings.
pub fn config_rows() -> Vec<crate::config::Row> {
    crate::config::field_rows(SERVE_FIELDS)
}

/// The keys of [`ServeSettings`], their defaults and ranges.
const SERVE_FIELDS: &[Field<ServeSettings>] = &[
    Field::i64("maxRequestBytes", 1 << 20, 64..=1 << 30, |s, v| {
        s.max_request_bytes = v as usize
    }),
    Field::f64("drainSeconds", 30.0, 0.0..=3600.0, |s, v| s.drain = secs(v)),
    Field::i64("maxQueuedPositions", 10_000, 1..=1 << 30, |s, v| {
        s.max_queued = v as usize
    }),
    Field::f64("headerReadTimeoutSeconds", 10.0, 0.1..=3600.0, |s, v| {
        s.header_read_timeout = secs(v)
    }),
    Field::f64("bodyReadTimeoutSeconds", 30.0, 0.1..=3600.0, |s, v| {
        s.body_read_timeout = secs(v)
    }),
    Field::f64("wsIdleTimeoutSeconds", 300.0, 0.1..=86400.0, |s, v| {
        s.ws_idle_timeout = secs(v)
    }),
    Field::i64("retryAfterSeconds", 1, 1..=3600, |s, v| {
        s.retry_after_secs = v as u64
    }),
    Field::i64("spareAnalysisThreads", 1, 0..=1024, |s, v| {
        s.spare_analysis_threads = v as usize
    }),
    Field::i64("reviewFastVisits", 25, 1..=1 << 30, |s, v| {
        s.reviews.fast_visits = v as u64
    }),
    Field::i64("reviewDeepVisits", 200, 1..=1 << 30, |s, v| {
        s.reviews.deep_visits = v as u64
    }),
    Field::i64("reviewDeepMistakes", 10, 0..=10_000, |s, v| {
        s.reviews.deep_mistakes = v as usize
    }),
    Field::i64("reviewFullVisits", 200, 1..=1 << 30, |s, v| {
        s.reviews.full_visits = v as u64
    }),
    Field::i64("reviewMaxVisits", 2000, 1..=1 << 30, |s, v| {
        s.reviews.max_visits = v as u64
    }),
    Field::i64("reviewMaxActivePerKey", 4, 1..=1 << 20, |s, v| {
        s.reviews.max_active_per_key = v as usize
    }),
    Field::i64("reviewMaxStored", 1000, 1..=1 << 20, |s, v| {
        s.reviews.max_stored = v as usize
    }),
    Field::f64("reviewTtlSeconds", 3600.0, 0.0..=30.0 * 86400.0, |s, v| {
        s.reviews.ttl = secs(v)
    }),
];

impl ServeSettings {
    /// Reads the `engine serve` keys of `cfg` (defaults where absent).
    pub fn from_config(cfg: &Config) -> Result<ServeSettings, StartError> {
        let mut s = ServeSettings::default();
        read_fields(cfg, SERVE_FIELDS, &mut s).map_err(|e| StartError::Invalid(e.to_string()))?;
        Ok(s)
    }
}

/// Runs `engine serve`.
pub fn run(args: &ServeArgs) -> crate::exit::CommandResult {
    run_inner(args)
        .map(|()| crate::exit::Exit::Success)
        .map_err(crate::exit::CommandError::runtime)
}

fn run_inner(args: &ServeArgs) -> Result<(), StartError> {
    let addr: SocketAddr = args.listen.parse().map_err(|_| {
        StartError::Invalid(format!(
            "-listen {}: expected HOST:PORT with an IP address, e.g. 127.0.0.1:8080",
            args.listen
        ))
    })?;
    let keys = match &args.keys {
        Some(path) => Keyring::load(path).map_err(|e| StartError::Invalid(e.to_string()))?,
        None if addr.ip().is_loopback() || args.insecure_no_auth => Keyring::open(),
        None => {
            return Err(StartError::Invalid(format!(
                "refusing to listen on {addr} without -keys (anyone could use this machine); \
                 give -keys FILE, or -insecure-no-auth to do it anyway"
            )))
        }
    };
    let cmd = AnalysisArgs {
        engine: args.engine.clone(),
        analysis_threads: args.analysis_threads,
        stub_search: args.stub_search,
        ..AnalysisArgs::default()
    };
    let cfg = crate::setup::load_config_or_built_in(
        cmd.engine.config.as_deref(),
        &cmd.engine.override_config,
        crate::setup::SERVE_CONFIG,
    )?;
    let settings = ServeSettings::from_config(&cfg)?;
    let opts = ServerOptions {
        spare_analysis_threads: settings.spare_analysis_threads,
        ..server_options(&cfg, &cmd)?
    };
    let loaded = load_engine(&cfg, &cmd, &opts, "engine serve")?;
    let default_max_visits = loaded.default_max_visits();
    let setup = listener::Setup {
        addr,
        settings,
        keys,
        parse: opts.parse,
        log_requests: opts.log.requests,
        default_max_visits,
    };
    match loaded {
        Loaded::Stub(backend) => {
            let engine = Arc::new(AnalysisEngine::start(backend, opts)?);
            listener::run(setup, engine, "stub search", None)
        }
        Loaded::Net { backend, net } => {
            let engine = Arc::new(AnalysisEngine::start(backend, opts)?);
            let evaluator = net.evaluator.clone();
            let nn: port::NnStats = Box::new(move || evaluator.evaluator().stats());
            let described = format!("model {} on {}", net.model_name, net.device);
            listener::run(setup, engine, &described, Some(nn))
        }
    }
}
