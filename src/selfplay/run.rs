//! `engine selfplay`: many games at once sharing one batching evaluator,
//! rows and SGFs written under `OUT/<modelName>/` as `katago selfplay`
//! does (through the run store: a folder or `s3://`), the newest net under
//! `-models-dir` picked up between games.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Args;
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::fork::{maybe_fork, maybe_seki_fork, ForkQueue};
use super::game::play_game;
use super::rows::write_game_rows;
use super::settings::{PlaySettings, DATA_QUEUE_SIZE, LOG_GAMES_EVERY};
use super::writer::{DataWriter, WriterMsg};
use crate::config::Config;
use crate::data::TrainingRows;
use crate::nn::{FeatureEncoder, ModelFile};
use crate::play::PlayError;
use crate::search::{SearchParams, SetupFor};
use crate::setup::{load_network_from, read_model, search_settings, Network};
use crate::store::layout::{ModelEntry, ModelsDir, SelfplayOut};
use crate::store::StoreUrl;

use crate::exit::{CommandError, CommandResult, Exit, Failure};

/// How often `-models-dir` is checked for a newer net.
const MODELS_POLL: Duration = Duration::from_secs(10);

/// Flags of `engine selfplay` (KataGo's spelling).
#[derive(Debug, Args)]
pub struct SelfplayArgs {
    /// Self-play config (`configs/selfplay.toml`, or a KataGo `.cfg`).
    #[arg(long)]
    pub config: PathBuf,
    /// Folder of models (a path or `s3://` URL), one sub-folder per model
    /// (`NAME/model.bin.gz`); the newest is used and newer ones are picked
    /// up while running.
    #[arg(long = "models-dir")]
    pub models_dir: Option<String>,
    /// A single model file (a path or `s3://` URL) instead of `-models-dir`.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Where `<modelName>/tdata`, `<modelName>/sgfs` go (a path or `s3://` URL).
    #[arg(long = "output-dir")]
    pub output_dir: String,
    /// Stop after this many games in all.
    #[arg(long = "max-games-total")]
    pub max_games_total: Option<u64>,
    /// Config overrides, `key=value[,key=value...]`; may be repeated.
    #[arg(long = "override-config")]
    pub override_config: Vec<String>,
}

/// The newest net under a models folder (see `crate::store::layout` for
/// what "newest" means), or an error saying there is none.
fn find_latest_model(models: &ModelsDir) -> Result<ModelEntry, PlayError> {
    models.newest()?.ok_or_else(|| {
        PlayError::Model(format!(
            "no model under {} (expected NAME/model.bin.gz sub-folders)",
            models.url()
        ))
    })
}

/// A net's name from its file: `NAME.bin.gz`, or `NAME/model.bin.gz` as
/// models folders hold it.
fn model_name_of_file(path: &Path) -> String {
    let stem = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .trim_end_matches(".gz")
            .trim_end_matches(".bin")
            .trim_end_matches(".txt")
            .to_string()
    };
    match (stem(path).as_str(), path.parent()) {
        ("model", Some(dir)) if !stem(dir).is_empty() => stem(dir),
        (name, _) => name.to_string(),
    }
}

/// Runs `engine selfplay`: [`Exit::Stopped`] after a signal (every
/// finished game written).
pub fn run(args: &SelfplayArgs) -> CommandResult {
    match run_inner(args) {
        Ok(Ended::AllGames) => Ok(Exit::Success),
        Ok(Ended::Signalled) => Ok(Exit::Stopped),
        Err(e) => Err(CommandError::runtime(e)),
    }
}

/// How a run that wrote every finished game ended.
enum Ended {
    /// `-max-games-total` games were played (or play stopped by itself).
    AllGames,
    /// A signal stopped it first.
    Signalled,
}

/// Where the nets come from.
enum NetSource {
    /// `-model`: one net for the whole run.
    File(PathBuf),
    /// `-models-dir`: the newest, followed while running.
    Folder(ModelsDir),
}

/// What a run reads before its first game: config, settings, search
/// parameters, where the nets come from and where the data goes.
struct RunSetup {
    cfg: Config,
    settings: PlaySettings,
    params: SearchParams,
    /// `maxDataQueueSize`: games the writer's queue holds.
    queue_games: usize,
    /// `logGamesEvery`: a progress line every this many games without a
    /// terminal.
    log_games_every: u64,
    /// The config file's bytes, stored beside each net's data.
    config_text: Bytes,
    source: NetSource,
    out: SelfplayOut,
}

impl RunSetup {
    fn read(args: &SelfplayArgs) -> Result<RunSetup, PlayError> {
        let cfg = crate::setup::load_config(Some(&args.config), &args.override_config)
            .map_err(Box::new)?;
        let (settings, warnings) = PlaySettings::from_config(&cfg)?;
        for w in warnings {
            eprintln!("engine selfplay: warning: {w}");
        }
        let mut overrides = search_settings(&cfg);
        // Self-play's search: root symmetry pruning would break the policy
        // targets (KataGo asserts it off).
        overrides.retain(|(k, _)| k != "rootSymmetryPruning");
        let params = SearchParams::from_overrides(
            SetupFor::Other,
            overrides.iter().map(|(k, v)| (k.as_str(), v)),
        )
        .map_err(|e| PlayError::Usage(format!("{}: {e}", args.config.display())))?;
        let queue_games = DATA_QUEUE_SIZE.read(&cfg).map_err(Box::new)? as usize;
        let config_text: Bytes = std::fs::read(&args.config)
            .map_err(|source| PlayError::Io {
                path: args.config.clone(),
                source,
            })?
            .into();
        let source = match (&args.model, &args.models_dir) {
            (Some(m), None) => NetSource::File(m.clone()),
            (None, Some(d)) => NetSource::Folder(ModelsDir::open(&StoreUrl::parse(d)?)?),
            _ => {
                return Err(PlayError::Usage(
                    "give exactly one of -models-dir DIR or -model FILE".into(),
                ))
            }
        };
        let out = SelfplayOut::open(&StoreUrl::parse(&args.output_dir)?)?;
        let log_games_every = LOG_GAMES_EVERY.read(&cfg).map_err(Box::new)? as u64;
        Ok(RunSetup {
            cfg,
            settings,
            params,
            queue_games,
            log_games_every,
            config_text,
            source,
            out,
        })
    }

    /// The net the run starts with.
    fn first_generation(&self) -> Result<Generation, PlayError> {
        match &self.source {
            NetSource::File(path) => {
                let file = read_model(path).map_err(|e| PlayError::Model(e.to_string()))?;
                start_generation(
                    &model_name_of_file(path),
                    file,
                    path,
                    &self.cfg,
                    &self.settings,
                )
            }
            NetSource::Folder(models) => load_generation(
                models,
                &find_latest_model(models)?,
                &self.cfg,
                &self.settings,
            ),
        }
    }
}

/// What the game threads and the models-folder poller share while a run
/// plays.
struct Playing<'a> {
    setup: &'a RunSetup,
    /// The net new games start with.
    current: parking_lot::RwLock<Arc<Generation>>,
    forks: ForkQueue,
    writer: DataWriter,
    progress: indicatif::ProgressBar,
    games_started: AtomicU64,
    games_done: AtomicU64,
    rows_done: AtomicU64,
    threads_done: AtomicU64,
    /// Ends the games (a signal, or a failure).
    stop: &'a AtomicBool,
    /// The first failure, which ends the run.
    failure: Mutex<Option<PlayError>>,
    start: Instant,
    max_games: u64,
}

impl Playing<'_> {
    /// Records the first failure and stops every game.
    fn fail(&self, e: impl ToString) {
        self.failure
            .lock()
            .get_or_insert(PlayError::Game(e.to_string()));
        self.stop.store(true, Ordering::Relaxed);
    }

    /// One game thread: plays games until `-max-games-total` games have
    /// started, a failure, or `stop`.
    fn game_thread(&self) {
        let mut rng = StdRng::from_entropy();
        let mut encoder = FeatureEncoder::new();
        while !self.stop.load(Ordering::Relaxed) {
            if self.games_started.fetch_add(1, Ordering::SeqCst) >= self.max_games {
                break;
            }
            if !self.play_one(&mut rng, &mut encoder) {
                break;
            }
        }
        self.threads_done.fetch_add(1, Ordering::SeqCst);
    }

    /// Plays one game and hands its rows to the writer; false when the
    /// thread should stop.
    fn play_one(&self, rng: &mut StdRng, encoder: &mut FeatureEncoder) -> bool {
        let (settings, params) = (&self.setup.settings, &self.setup.params);
        // The newest model at the start of the game plays it (and a newer
        // one takes over with switchNetsMidGame). The rows go to the folder
        // of the net that finished it (KataGo writes a game that changed
        // nets mid-game as data of the newer net).
        let start_gen = self.current.read().clone();
        let mut gen = start_gen.clone();
        let (fork, used_seki_fork) = self.forks.next_start(settings, rng);
        let mut newer_net = || {
            let latest = self.current.read().clone();
            if Arc::ptr_eq(&latest, &gen) {
                return None;
            }
            let evaluator = latest.net.evaluator.clone();
            gen = latest;
            Some(evaluator)
        };
        let played = match play_game(
            settings,
            params,
            start_gen.net.evaluator.clone(),
            &start_gen.name,
            fork,
            rng,
            self.stop,
            &mut newer_net,
        ) {
            Ok(Some(p)) => p,
            Ok(None) => return false,
            Err(e) => {
                self.fail(e);
                return false;
            }
        };
        drop(start_gen);
        match maybe_fork(settings, &played.game, params, &gen.net.evaluator, rng) {
            Ok(Some(f)) => self.forks.push(f, rng),
            Ok(None) => {}
            Err(e) => {
                self.fail(e);
                return false;
            }
        }
        if !used_seki_fork {
            maybe_seki_fork(settings, &played.game, &self.forks, rng);
        }
        // Encoded here, on the game thread, outside any lock; the writer
        // only appends, compresses and writes.
        let mut rows = TrainingRows::new(settings.data_board_len);
        let n = match write_game_rows(&played.game, &mut rows, encoder, rng) {
            Ok(n) => n,
            Err(e) => {
                self.fail(e);
                return false;
            }
        };
        let model = gen.name.clone();
        let batch = gen.net.evaluator.evaluator().stats().average_batch_size();
        // The game no longer needs its net: a replaced net is freed once
        // its last game gets here.
        drop(gen);
        if !self.writer.send(WriterMsg::Game {
            model: model.clone(),
            rows: Box::new(rows),
            sgf: played.sgf,
        }) {
            return false;
        }
        self.report_game(&model, n, batch);
        true
    }

    /// Counts a game of `n` rows and shows the run's progress.
    fn report_game(&self, model: &str, n: usize, batch: f64) {
        self.rows_done.fetch_add(n as u64, Ordering::Relaxed);
        let g = self.games_done.fetch_add(1, Ordering::Relaxed) + 1;
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let r = self.rows_done.load(Ordering::Relaxed);
        let line = format!(
            "{model}: {g} games, {r} rows, {:.3} games/s, {:.2} rows/s, avg batch {batch:.2}",
            g as f64 / secs,
            r as f64 / secs,
        );
        // Without a terminal the bar is hidden: a line every
        // `logGamesEvery` games instead.
        if self.progress.is_hidden() {
            if g.is_multiple_of(self.setup.log_games_every) {
                eprintln!("engine selfplay: {line}");
            }
        } else {
            self.progress.set_message(line);
        }
    }

    /// Models-dir polling, until every game thread is done: a newer model
    /// is loaded beside the running one and takes over from the next game
    /// on; rows go to its folder.
    fn follow_models(&self, models: &ModelsDir) {
        let threads = self.setup.settings.num_game_threads as u64;
        let mut last_check = Instant::now();
        while self.threads_done.load(Ordering::SeqCst) < threads {
            std::thread::sleep(Duration::from_millis(200));
            if last_check.elapsed() < MODELS_POLL || self.stop.load(Ordering::Relaxed) {
                continue;
            }
            last_check = Instant::now();
            let newest = match models.newest() {
                Ok(Some(e)) => e,
                Ok(None) => continue,
                Err(e) => {
                    say(&self.progress, &format!("engine selfplay: warning: {e}"));
                    continue;
                }
            };
            if newest.name != self.current.read().name {
                self.switch_to(models, &newest);
            }
        }
    }

    /// Loads `newest` and makes it the net of new games.
    fn switch_to(&self, models: &ModelsDir, newest: &ModelEntry) {
        match load_generation(models, newest, &self.setup.cfg, &self.setup.settings) {
            Ok(gen) => {
                let name = gen.name.clone();
                let old = std::mem::replace(&mut *self.current.write(), Arc::new(gen));
                old.replaced.store(true, Ordering::SeqCst);
                drop(old);
                say(
                    &self.progress,
                    &format!("engine selfplay: switching to model {name}"),
                );
                self.writer.send(WriterMsg::Model {
                    name,
                    config: self.setup.config_text.clone(),
                });
            }
            Err(e) => say(
                &self.progress,
                &format!(
                    "engine selfplay: warning: newer model {} not used: {e}",
                    newest.name
                ),
            ),
        }
    }
}

fn run_inner(args: &SelfplayArgs) -> Result<Ended, PlayError> {
    let setup = RunSetup::read(args)?;
    let first = Arc::new(setup.first_generation()?);
    for line in crate::setup::config_key_report(&setup.cfg, "engine selfplay") {
        eprintln!("{line}");
    }
    for note in crate::setup::MemoryBudget::notes(&setup.cfg, setup.settings.num_game_threads) {
        eprintln!("engine selfplay: {note}");
    }
    let progress = indicatif::ProgressBar::new_spinner();
    progress.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    progress.enable_steady_tick(Duration::from_millis(500));
    // `stop` ends the games (a signal, or a failure); `signalled` says a
    // signal raised it. Ctrl-C / SIGTERM: games in flight are dropped,
    // every finished game is written; a second signal exits at once.
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = Arc::new(AtomicBool::new(false));
    install_stop_handler(&stop, &signalled, &progress);
    let writer = DataWriter::start(
        setup.out.clone(),
        setup.settings.data_board_len,
        setup.settings.max_rows_per_train_file,
        setup.queue_games,
        stop.clone(),
    )
    .map_err(|source| PlayError::Io {
        path: PathBuf::from("selfplay-writer thread"),
        source,
    })?;
    writer.send(WriterMsg::Model {
        name: first.name.clone(),
        config: setup.config_text.clone(),
    });
    let max_games = args.max_games_total.unwrap_or(u64::MAX);
    let playing = Playing {
        setup: &setup,
        current: parking_lot::RwLock::new(first),
        // Fork positions from finished games, started by any thread.
        forks: ForkQueue::new(),
        writer,
        progress,
        games_started: AtomicU64::new(0),
        games_done: AtomicU64::new(0),
        rows_done: AtomicU64::new(0),
        threads_done: AtomicU64::new(0),
        stop: &stop,
        failure: Mutex::new(None),
        start: Instant::now(),
        max_games,
    };
    std::thread::scope(|scope| {
        for _ in 0..setup.settings.num_game_threads {
            scope.spawn(|| playing.game_thread());
        }
        if let NetSource::Folder(models) = &setup.source {
            playing.follow_models(models);
        }
    });
    finish_run(playing, &signalled)
}

/// Waits for the writer, reports the run and says how it ended (stopped
/// early when `signalled` before `-max-games-total` games were done).
fn finish_run(playing: Playing<'_>, signalled: &AtomicBool) -> Result<Ended, PlayError> {
    playing.progress.finish_and_clear();
    let (last_name, net_stats) = {
        let current = playing.current.read();
        (
            current.name.clone(),
            current.net.evaluator.evaluator().stats(),
        )
    };
    drop(playing.current);
    let report = playing.writer.finish();
    if let Some(source) = report.error {
        return Err(PlayError::Write {
            source,
            lost: report.lost_games,
        });
    }
    if let Some(e) = playing.failure.lock().take() {
        return Err(e);
    }
    let secs = playing.start.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "engine selfplay: {} games, {} rows in {} files, {secs:.1} s ({:.1} games/h, {:.0} rows/h), model {last_name}, output {}",
        report.games,
        report.rows,
        report.files,
        report.games as f64 * 3600.0 / secs,
        report.rows as f64 * 3600.0 / secs,
        playing.setup.out.url()
    );
    // The network's work counts every move searched, also of games cut
    // short, so a run stopped before its first game ends still says how
    // fast the evaluator went (the GPU check's self-play stage reads it).
    eprintln!(
        "engine selfplay: network {last_name}: {} rows evaluated ({:.0} rows/s), {} cache hits, avg batch {:.2}",
        net_stats.rows,
        net_stats.rows as f64 / secs,
        net_stats.cache_hits,
        net_stats.average_batch_size()
    );
    let games_done = playing.games_done.load(Ordering::Relaxed);
    if signalled.load(Ordering::SeqCst) && games_done < playing.max_games {
        eprintln!(
            "engine selfplay: stopped by a signal; every finished game was written (exit code {})",
            Exit::Stopped.code()
        );
        return Ok(Ended::Signalled);
    }
    Ok(Ended::AllGames)
}

/// A message above the progress bar, or on stderr when there is no bar
/// (stderr not a terminal: the bar would swallow it).
fn say(progress: &indicatif::ProgressBar, msg: &str) {
    if progress.is_hidden() {
        eprintln!("{msg}");
    } else {
        progress.println(msg);
    }
}

/// Ctrl-C and SIGTERM raise `stop` and `signalled` (the game threads drop
/// the games in flight and the finished games are written); a second
/// signal exits at once.
fn install_stop_handler(
    stop: &Arc<AtomicBool>,
    signalled: &Arc<AtomicBool>,
    progress: &indicatif::ProgressBar,
) {
    let (flag, seen) = (stop.clone(), signalled.clone());
    let bar = progress.clone();
    let installed = ctrlc::set_handler(move || {
        if seen.swap(true, Ordering::SeqCst) {
            eprintln!("engine selfplay: second signal, exiting without writing");
            std::process::exit(Failure::Interrupted.process_code());
        }
        flag.store(true, Ordering::SeqCst);
        say(
            &bar,
            "engine selfplay: stopping: writing the finished games (signal again to quit at once)",
        );
    });
    if let Err(e) = installed {
        say(
            progress,
            &format!(
                "engine selfplay: warning: no Ctrl-C/SIGTERM handler ({e}); a kill loses unwritten rows"
            ),
        );
    }
}

/// One net in use and its name (its data folder). Freed when a newer net
/// has replaced it and its last game is over (said on stderr).
struct Generation {
    name: String,
    net: Network,
    /// Set when a newer net takes over.
    replaced: AtomicBool,
}

impl Drop for Generation {
    fn drop(&mut self) {
        if self.replaced.load(Ordering::SeqCst) {
            eprintln!("engine selfplay: released model {}", self.name);
        }
    }
}

/// Loads net `entry` of a models folder.
fn load_generation(
    models: &ModelsDir,
    entry: &ModelEntry,
    cfg: &Config,
    settings: &PlaySettings,
) -> Result<Generation, PlayError> {
    let shown = models.describe(entry);
    let bytes = models.read(entry)?;
    let file = ModelFile::from_file_contents(&bytes, Path::new(&shown))
        .map_err(|e| PlayError::Model(e.to_string()))?;
    start_generation(&entry.name, file, Path::new(&shown), cfg, settings)
}

/// Sets up a net read from `path` for the game threads.
fn start_generation(
    name: &str,
    file: ModelFile,
    path: &Path,
    cfg: &Config,
    settings: &PlaySettings,
) -> Result<Generation, PlayError> {
    let net: Network = load_network_from(file, path, cfg, settings.num_game_threads.max(8))
        .map_err(|e| PlayError::Model(format!("{}: {e}", path.display())))?;
    eprintln!(
        "engine selfplay: model {name} on {}, max batch {}",
        net.device, net.max_batch_size
    );
    Ok(Generation {
        name: name.to_string(),
        net,
        replaced: AtomicBool::new(false),
    })
}
