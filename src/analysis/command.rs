//! `engine analysis`: reads the config, builds the backend, runs the
//! server on stdin/stdout.

use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{Config, ConfigError, Key, Row};
use crate::exit::{CommandError, CommandResult, Exit};
use crate::game::{GameOptions, GameState};
use crate::search::{Perspective, SearchParams, SetupFor};
use crate::setup::{
    load_human_network, load_network, EngineArgs, Network, SetupError, NUM_ANALYSIS_THREADS,
};

use super::backend::AnalysisBackend;
use super::options::{AnalysisLog, ServerOptions};
use super::query::ParseOptions;
use super::search_backend::{config_search_settings, MakeState, SearchBackend};
use super::server::serve;
use super::stub::StubBackend;

/// Flags of `engine analysis` (`engine serve` and the Python package fill
/// in the ones they share).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AnalysisArgs {
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Analyze up to this many positions in parallel (instead of
    /// `numAnalysisThreads` in the config).
    #[arg(long = "analysis-threads")]
    pub analysis_threads: Option<usize>,
    /// When stdin is closed, quit quickly without waiting for queued tasks.
    #[arg(long = "quit-without-waiting")]
    pub quit_without_waiting: bool,
    /// Testing only: answer with a stand-in search that needs no network.
    #[arg(long = "stub-search", hide = true)]
    pub stub_search: bool,
    /// Analyse on a remote `engine serve` instead (its WebSocket,
    /// `ws://HOST:PORT/v1/ws`): stdin and stdout are passed through.
    #[arg(long)]
    pub remote: Option<String>,
    /// With `-remote`: a file holding the key's secret (first line).
    #[arg(long = "key-file")]
    pub key_file: Option<PathBuf>,
}

/// Why the engine could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(Box<ConfigError>),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("reading stdin: {0}")]
    Io(#[from] io::Error),
}

impl From<ConfigError> for StartError {
    fn from(e: ConfigError) -> Self {
        StartError::Config(Box::new(e))
    }
}

/// `maxVisits` of the stand-in search (`-stub-search`, tests only); the
/// search parameters' table lists the key.
const STUB_MAX_VISITS: Key<i64> = Key::int("maxVisits", 500, 1..=1 << 50);
/// The analysis engine's own keys (KataGo's names and defaults).
const REPORT_AS: Key<Option<String>> = Key::parsed(
    "reportAnalysisWinratesAs",
    "BLACK, WHITE or SIDETOMOVE",
    "SIDETOMOVE",
)
.doc("Whose point of view win rates and scores are reported from.");
const WARN_UNUSED_FIELDS: Key<bool> = Key::flag("warnUnusedFields", true)
    .doc("Warn about fields of a query that the engine does not read.");
const ANALYSIS_PV_LEN: Key<i64> =
    Key::int("analysisPVLen", 15, 1..=100).doc("Most moves of each principal variation.");
const HANDICAP_BLACK_MOVES: Key<bool> =
    Key::flag("assumeMultipleStartingBlackMovesAreHandicap", true)
        .doc("Several black moves at the start count as handicap stones.");
const PREVENT_CLEANUP: Key<bool> = Key::flag("preventCleanupPhase", true)
    .doc("A game does not go on into a cleanup phase after two passes.");
const LOG_REQUESTS: Key<bool> = Key::flag("logAllRequests", false).doc("Log every query line.");
const LOG_RESPONSES: Key<bool> =
    Key::flag("logAllResponses", false).doc("Log every response line.");
const LOG_ERRORS: Key<bool> =
    Key::flag("logErrorsAndWarnings", true).doc("Log the errors and warnings sent back.");
const LOG_SEARCH_INFO: Key<bool> =
    Key::flag("logSearchInfo", false).doc("Log a summary of each search.");

/// The configuration reference's rows of the analysis engine's own keys
/// (`engine analysis`, `engine serve`).
pub fn config_rows() -> Vec<Row> {
    [
        NUM_ANALYSIS_THREADS.setting(),
        REPORT_AS.setting(),
        WARN_UNUSED_FIELDS.setting(),
        ANALYSIS_PV_LEN.setting(),
        HANDICAP_BLACK_MOVES.setting(),
        PREVENT_CLEANUP.setting(),
        LOG_REQUESTS.setting(),
        LOG_RESPONSES.setting(),
        LOG_ERRORS.setting(),
        LOG_SEARCH_INFO.setting(),
    ]
    .iter()
    .map(|s| s.row())
    .collect()
}

/// Server options from the config (KataGo's keys and defaults).
pub fn server_options(cfg: &Config, cmd: &AnalysisArgs) -> Result<ServerOptions, StartError> {
    // KataGo refuses the flag next to the key in a config file; the
    // built-in config (no -config) gives way to it instead.
    let num_analysis_threads = match cmd.analysis_threads {
        Some(_) if cmd.engine.config.is_some() && NUM_ANALYSIS_THREADS.is_set(cfg) => {
            return Err(StartError::Invalid(format!(
                "When specifying numAnalysisThreads in the config ({}), it is redundant and \
                 disallowed to also specify it via -analysis-threads",
                cfg.file_name()
            )))
        }
        Some(n) if (1..=16384).contains(&n) => n,
        Some(n) => {
            return Err(StartError::Invalid(format!(
                "Invalid value for numAnalysisThreads: {n}"
            )))
        }
        None => match NUM_ANALYSIS_THREADS.read(cfg)? {
            Some(n) => n as usize,
            None => crate::setup::default_analysis_threads(cfg)?,
        },
    };
    let perspective = REPORT_AS
        .read_parsed::<Perspective>(cfg, "BLACK, WHITE or SIDETOMOVE")?
        .unwrap_or(Perspective::SideToMove);
    Ok(ServerOptions {
        num_analysis_threads,
        spare_analysis_threads: 0,
        quit_without_waiting: cmd.quit_without_waiting,
        parse: ParseOptions {
            warn_unused_fields: WARN_UNUSED_FIELDS.read(cfg)?,
        },
        analysis_pv_len: ANALYSIS_PV_LEN.read(cfg)? as usize,
        perspective,
        replay: GameOptions {
            assume_multiple_starting_black_moves_are_handicap: HANDICAP_BLACK_MOVES.read(cfg)?,
            prevent_cleanup_phase: PREVENT_CLEANUP.read(cfg)?,
        },
        log: AnalysisLog {
            requests: LOG_REQUESTS.read(cfg)?,
            responses: LOG_RESPONSES.read(cfg)?,
            errors_and_warnings: LOG_ERRORS.read(cfg)?,
            search_info: LOG_SEARCH_INFO.read(cfg)?,
        },
    })
}

/// Loads the config named on the command line (the built-in
/// `configs/analysis.toml` if none) with the overrides applied.
pub fn load_config(cmd: &AnalysisArgs) -> Result<Config, ConfigError> {
    crate::setup::load_config_or_built_in(
        cmd.engine.config.as_deref(),
        &cmd.engine.override_config,
        crate::setup::ANALYSIS_CONFIG,
    )
}

/// Runs `engine analysis`.
pub fn run(cmd: &AnalysisArgs) -> CommandResult {
    let result = match &cmd.remote {
        Some(url) => super::remote::run(url, cmd.key_file.as_deref(), cmd.quit_without_waiting)
            .map_err(StartError::Invalid),
        None => run_inner(cmd),
    };
    result
        .map(|()| Exit::Success)
        .map_err(CommandError::runtime)
}

/// The loaded engine: the stand-in search of the protocol tests, or a
/// network.
pub(crate) enum Loaded {
    /// `-stub-search`.
    Stub(Arc<StubBackend>),
    /// The real search over a network.
    Net {
        /// The search over the network's evaluator.
        backend: Arc<NetBackend>,
        /// The loaded network (its evaluator's counters).
        net: Box<Network>,
    },
}

/// The analysis backend over the real search and a network's evaluator.
pub(crate) type NetBackend = SearchBackend<GameState, crate::search::NnSearchEvaluator>;

impl Loaded {
    /// `maxVisits` of a query that names none.
    pub(crate) fn default_max_visits(&self) -> u64 {
        match self {
            Loaded::Stub(b) => b.default_max_visits,
            Loaded::Net { backend, .. } => backend
                .query_params(&[])
                .map_or(u64::MAX, |(p, _)| p.max_visits.max(0) as u64),
        }
    }
}

fn run_inner(cmd: &AnalysisArgs) -> Result<(), StartError> {
    run_on(cmd, BufReader::new(io::stdin()), io::stdout())
}

/// [`run`] on `input` and `output` instead of stdin and stdout, returning
/// the start-up error instead of logging it: the same config, start-up,
/// backend and protocol, for a program that embeds the analysis engine
/// behind an in-process pipe (the Python package). Returns when `input`
/// ends and every query has been answered.
pub fn run_on(
    cmd: &AnalysisArgs,
    input: impl BufRead,
    output: impl Write + Send + 'static,
) -> Result<(), StartError> {
    let cfg = load_config(cmd)?;
    let opts = server_options(&cfg, cmd)?;
    match load_engine(&cfg, cmd, &opts, "engine analysis")? {
        Loaded::Stub(backend) => start(backend, opts, input, output),
        Loaded::Net { backend, net } => {
            start(backend, opts, input, output)?;
            // KataGo logs its evaluator's counters at exit; benchmarks read them.
            let s = net.evaluator.evaluator().stats();
            crate::logfile::startup(&format!(
                "engine analysis: NN requests {}, cache hits {}, rows {}, batches {}, average batch size {:.2}",
                s.requests,
                s.cache_hits,
                s.rows,
                s.batches,
                s.average_batch_size()
            ));
            Ok(())
        }
    }
}

/// Loads the stub or the network named on the command line, with the
/// start-up lines of `who` (`engine analysis`, `engine serve`); the
/// command's own config keys must be read before (the key report is
/// printed here).
pub(crate) fn load_engine(
    cfg: &Config,
    cmd: &AnalysisArgs,
    opts: &ServerOptions,
    who: &str,
) -> Result<Loaded, StartError> {
    if cmd.stub_search {
        return Ok(Loaded::Stub(Arc::new(StubBackend {
            default_max_visits: STUB_MAX_VISITS.read(cfg)? as u64,
        })));
    }
    // KataGo's analysis engine logs to stderr too by default.
    let log = crate::logfile::LogSettings::from_config(cfg, true)
        .map_err(|e| StartError::Invalid(e.to_string()))?;
    if let Some(path) =
        crate::logfile::start(&log).map_err(|e| StartError::Invalid(e.to_string()))?
    {
        crate::logfile::startup(&format!("{who}: logging to {}", path.display()));
    }
    let Some(model) = &cmd.engine.model else {
        return Err(StartError::Invalid(
            "-model MODEL.bin.gz is required (the network to analyse with)".to_string(),
        ));
    };
    crate::setup::refuse_human_keys_without_human_model(cfg, cmd.engine.human_model.is_some())?;
    let base = config_search_settings(cfg);
    // Check the config's search settings once at start-up, as KataGo does,
    // rather than failing every query with the same error.
    let defaults = SearchParams::from_overrides(
        SetupFor::Analysis,
        base.iter().map(|(k, v)| (k.as_str(), v)),
    )
    .map_err(|e| StartError::Invalid(format!("search settings in the config: {e}")))?;
    // KataGo makes nnMaxBatchSize mandatory here; default it instead to
    // what every search thread evaluating at once needs.
    let concurrent = opts.searches_at_once() * defaults.num_threads.max(1) as usize;
    let patterns = crate::setup::avoid_sgf_pattern_table(cfg, 0)
        .map_err(|e| StartError::Invalid(e.to_string()))?;
    let net = load_network(model, cfg, concurrent.max(8))?;
    let human = match &cmd.engine.human_model {
        Some(path) => Some(load_human_network(path, cfg, concurrent.max(8))?),
        None => None,
    };
    if let Some(h) = &human {
        crate::logfile::startup(&format!(
            "{who}: human SL model {} (version {}) on {}",
            h.model_name, h.model_version, h.device
        ));
        if defaults.human_sl_profile.meta.is_none() {
            crate::logfile::startup(
                "Warning: Provided -human-model but humanSLProfile is not yet set. The human SL model \
                 will only be used on queries that provide humanSLProfile in overrideSettings.",
            );
        }
    }
    for line in crate::setup::config_key_report(cfg, who) {
        crate::logfile::startup(&line);
    }
    crate::logfile::startup(&format!(
        "{who}: model {} (version {}) on {}, max batch {}, {} analysis threads{} x {} search threads",
        net.model_name,
        net.model_version,
        net.device,
        net.max_batch_size,
        opts.num_analysis_threads,
        match opts.spare_analysis_threads {
            0 => String::new(),
            n => format!(" (+{n} spare)"),
        },
        defaults.num_threads
    ));
    let threads_key = if cfg.contains("numSearchThreads") {
        "numSearchThreads"
    } else {
        "numSearchThreadsPerAnalysisThread"
    };
    crate::logfile::startup(&format!(
        "{who}: {}",
        crate::setup::machine_report(
            cfg,
            &[
                ("numAnalysisThreads", opts.num_analysis_threads.to_string()),
                (threads_key, defaults.num_threads.to_string()),
                ("nnMaxBatchSize", net.max_batch_size.to_string()),
                ("numNNServerThreadsPerModel", net.server_threads.to_string()),
                (
                    "nnCacheSizePowerOfTwo",
                    net.asked_cache_power_of_two.to_string()
                ),
            ],
        )
    ));
    let plan = net.memory_plan(opts.searches_at_once());
    for note in plan.iter().flat_map(|p| &p.notes) {
        crate::logfile::startup(&format!("{who}: {note}"));
    }
    let tree_memory_limit = plan.map(|p| p.tree_bytes);
    let backend = Arc::new(network_backend(
        base,
        &net,
        human.as_ref(),
        tree_memory_limit,
        patterns,
    ));
    Ok(Loaded::Net {
        backend,
        net: Box::new(net),
    })
}

/// The analysis backend over the real search and `net`'s evaluator, which
/// every analysis thread shares (so positions batch together).
fn network_backend(
    base: Vec<(String, serde_json::Value)>,
    net: &Network,
    human: Option<&Network>,
    tree_memory_limit: Option<u64>,
    patterns: Option<Arc<crate::search::PatternBonusTable>>,
) -> NetBackend {
    let make_state: MakeState<GameState> = Arc::new(|p: &GameState| p.clone());
    let mut models = vec![net.model_info()];
    models.extend(human.map(Network::model_info));
    let evaluator = net.evaluator.clone();
    let caches: Vec<_> = std::iter::once(net)
        .chain(human)
        .map(|n| n.evaluator.clone())
        .collect();
    SearchBackend {
        base,
        evaluator,
        human: human.map(|h| h.evaluator.clone()),
        make_state,
        models,
        clear_cache: Box::new(move || caches.iter().for_each(|c| c.evaluator().clear_cache())),
        seed: rand::random(),
        tree_memory_limit,
        patterns,
        eval_cache: Default::default(),
    }
}

fn start<B: AnalysisBackend>(
    backend: Arc<B>,
    opts: ServerOptions,
    input: impl BufRead,
    output: impl Write + Send + 'static,
) -> Result<(), StartError> {
    crate::logfile::startup("Started, ready to begin handling requests");
    serve(backend, opts, input, output)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-analysis-threads` next to `numAnalysisThreads` in a config file is
    /// KataGo's start-up error; with the built-in config the flag wins.
    #[test]
    fn analysis_threads_flag_against_config_file_and_built_in_config() {
        let dir = std::env::temp_dir().join(format!("analysis-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.toml");
        std::fs::write(&file, "numAnalysisThreads = 3\n").unwrap();
        let with_file = AnalysisArgs {
            engine: EngineArgs {
                config: Some(file),
                ..EngineArgs::default()
            },
            analysis_threads: Some(1),
            ..AnalysisArgs::default()
        };
        let cfg = load_config(&with_file).unwrap();
        let err = server_options(&cfg, &with_file).expect_err("refused");
        assert!(err.to_string().contains("redundant"), "{err}");

        let built_in = AnalysisArgs {
            analysis_threads: Some(1),
            ..AnalysisArgs::default()
        };
        let cfg = load_config(&built_in).unwrap();
        assert_eq!(
            server_options(&cfg, &built_in)
                .unwrap()
                .num_analysis_threads,
            1
        );
        // Without the flag or the key (the built-in config leaves it
        // unset): one per core on the CPU.
        assert!(!cfg.contains("numAnalysisThreads"));
        let no_flag = AnalysisArgs::default();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 16));
        assert_eq!(
            server_options(&cfg, &no_flag).unwrap().num_analysis_threads,
            cores
        );
        // With the key in a file and no flag: the key.
        let from_file = AnalysisArgs {
            engine: with_file.engine.clone(),
            ..AnalysisArgs::default()
        };
        let cfg = load_config(&from_file).unwrap();
        assert_eq!(
            server_options(&cfg, &from_file)
                .unwrap()
                .num_analysis_threads,
            3
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
