//! `engine selfplay`: many games at once sharing one batching evaluator,
//! rows and SGFs written under `OUT/<modelName>/` as `katago selfplay`
//! does, the newest model under `-models-dir` picked up between games.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use clap::Args;
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::fork::{maybe_fork, maybe_seki_fork, ForkQueue};
use super::game::{play_game_switching, PlayedGame};
use super::output::write_atomically;
use super::rows::write_game_rows;
use super::settings::PlaySettings;
use crate::config::Config;
use crate::data::{write_npz_atomic, TrainingRows};
use crate::nn::FeatureEncoder;
use crate::search::{SearchParams, SetupFor};
use crate::setup::{load_network, search_settings, Network};

/// Flags of `engine selfplay` (KataGo's spelling).
#[derive(Debug, Args)]
pub struct SelfplayArgs {
    /// Self-play config (`configs/selfplay.toml`, or a KataGo `.cfg`).
    #[arg(long)]
    pub config: PathBuf,
    /// Folder of models, one sub-folder per model (`NAME/model.bin.gz`);
    /// the newest is used and newer ones are picked up while running.
    #[arg(long = "models-dir")]
    pub models_dir: Option<PathBuf>,
    /// A single model file instead of `-models-dir`.
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Where `<modelName>/tdata`, `<modelName>/sgfs` go.
    #[arg(long = "output-dir")]
    pub output_dir: PathBuf,
    /// Stop after this many games in all.
    #[arg(long = "max-games-total")]
    pub max_games_total: Option<u64>,
    /// Config overrides, `key=value[,key=value...]`; may be repeated.
    #[arg(long = "override-config")]
    pub override_config: Vec<String>,
}

/// Why self-play could not run.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    /// Bad command line.
    #[error("{0}")]
    Usage(String),
    /// Bad config.
    #[error(transparent)]
    Config(#[from] Box<crate::config::ConfigError>),
    /// Bad self-play settings.
    #[error(transparent)]
    Settings(#[from] super::settings::SettingsError),
    /// The model could not be found or loaded.
    #[error("{0}")]
    Model(String),
    /// Writing output failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A game failed.
    #[error("game failed: {0}")]
    Game(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SelfplayError + '_ {
    move |source| SelfplayError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The newest model under `dir` (KataGo's rule): a sub-folder holding
/// `model.bin.gz` (or `.bin`, `.txt.gz`), newest by modification time;
/// the model is named after its folder.
pub fn find_latest_model(dir: &Path) -> Result<(String, PathBuf), SelfplayError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| SelfplayError::Model(format!("reading models dir {}: {e}", dir.display())))?;
    let mut best: Option<(SystemTime, String, PathBuf)> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let candidates: Vec<PathBuf> = if path.is_dir() {
            ["model.bin.gz", "model.bin", "model.txt.gz"]
                .iter()
                .map(|f| path.join(f))
                .collect()
        } else {
            vec![path.clone()]
        };
        let Some(file) = candidates.into_iter().find(|p| {
            p.is_file()
                && p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.ends_with(".bin.gz") || n.ends_with(".bin") || n.ends_with(".txt.gz")
                })
        }) else {
            continue;
        };
        let name = if path.is_dir() {
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            model_name_of_file(&path)
        };
        let time = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        if best.as_ref().is_none_or(|(t, _, _)| time > *t) {
            best = Some((time, name, file));
        }
    }
    best.map(|(_, n, p)| (n, p)).ok_or_else(|| {
        SelfplayError::Model(format!(
            "no model under {} (expected NAME/model.bin.gz sub-folders)",
            dir.display()
        ))
    })
}

fn model_name_of_file(path: &Path) -> String {
    let n = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    n.trim_end_matches(".gz")
        .trim_end_matches(".bin")
        .trim_end_matches(".txt")
        .to_string()
}

/// Rows and SGF lines waiting to be written, for one model's folder.
struct DataWriter {
    tdata: PathBuf,
    sgfs: PathBuf,
    rows: TrainingRows,
    sgf_lines: Vec<String>,
    max_rows: usize,
    rng: StdRng,
    files: usize,
}

impl DataWriter {
    fn new(out: &Path, pos_len: usize, max_rows: usize) -> Result<Self, SelfplayError> {
        let tdata = out.join("tdata");
        let sgfs = out.join("sgfs");
        std::fs::create_dir_all(&tdata).map_err(io_err(&tdata))?;
        std::fs::create_dir_all(&sgfs).map_err(io_err(&sgfs))?;
        Ok(DataWriter {
            tdata,
            sgfs,
            rows: TrainingRows::new(pos_len),
            sgf_lines: Vec::new(),
            max_rows,
            rng: StdRng::from_entropy(),
            files: 0,
        })
    }

    /// Writes the rows and SGFs held so far, each as one whole file.
    fn flush(&mut self) -> Result<(), SelfplayError> {
        let name = format!("{:016X}", self.rng.gen::<u64>());
        if self.rows.num_rows > 0 {
            let path = self.tdata.join(format!("{name}.npz"));
            write_npz_atomic(&path, &self.rows).map_err(|e| SelfplayError::Io {
                path: path.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
            self.rows = TrainingRows::new(self.rows.pos_len);
            self.files += 1;
        }
        if !self.sgf_lines.is_empty() {
            let mut text = self.sgf_lines.join("\n");
            text.push('\n');
            let path = self.sgfs.join(format!("{name}.sgfs"));
            write_atomically(&path, text.as_bytes()).map_err(io_err(&path))?;
            self.sgf_lines.clear();
        }
        Ok(())
    }

    fn add_game(
        &mut self,
        played: &PlayedGame,
        encoder: &mut FeatureEncoder,
    ) -> Result<usize, SelfplayError> {
        self.sgf_lines.push(played.sgf.clone());
        let mut full = false;
        let max = self.max_rows;
        let n = write_game_rows(
            &played.game,
            &mut self.rows,
            encoder,
            &mut self.rng,
            &mut |rows| full |= rows.num_rows >= max,
        )
        .map_err(|e| SelfplayError::Game(e.to_string()))?;
        if full {
            self.flush()?;
        }
        Ok(n)
    }
}

/// Runs `engine selfplay`; returns the exit code.
pub fn run(args: &SelfplayArgs) -> i32 {
    match run_inner(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("engine selfplay: {e}");
            1
        }
    }
}

fn run_inner(args: &SelfplayArgs) -> Result<(), SelfplayError> {
    let cfg =
        crate::setup::load_config(Some(&args.config), &args.override_config).map_err(Box::new)?;
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
    .map_err(|e| SelfplayError::Usage(format!("{}: {e}", args.config.display())))?;

    let (model_name, model_path) = match (&args.model, &args.models_dir) {
        (Some(m), None) => (model_name_of_file(m), m.clone()),
        (None, Some(d)) => find_latest_model(d)?,
        _ => {
            return Err(SelfplayError::Usage(
                "give exactly one of -models-dir DIR or -model FILE".into(),
            ))
        }
    };
    let first = Arc::new(start_generation(
        &model_name,
        &model_path,
        &cfg,
        &settings,
        args,
    )?);
    let current = parking_lot::RwLock::new(first.clone());
    let generations = Mutex::new(vec![first]);

    let progress = indicatif::ProgressBar::new_spinner();
    progress.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    progress.enable_steady_tick(Duration::from_millis(500));
    let games_started = AtomicU64::new(0);
    let games_done = AtomicU64::new(0);
    let rows_done = AtomicU64::new(0);
    let threads_done = AtomicU64::new(0);
    // Ctrl-C / SIGTERM: games in flight are dropped, every finished game's
    // rows and SGF are written; a second signal exits at once.
    let stop = Arc::new(AtomicBool::new(false));
    install_stop_handler(&stop, &progress);
    let stop = &*stop;
    let failure: Mutex<Option<SelfplayError>> = Mutex::new(None);
    let start = Instant::now();
    let max_games = args.max_games_total.unwrap_or(u64::MAX);
    let log_games_every = cfg
        .get_i64_or("logGamesEvery", 10, 1..=i64::MAX)
        .map_err(Box::new)? as u64;

    // Fork positions from finished games, started by any thread.
    let forks = ForkQueue::new();
    std::thread::scope(|scope| {
        for _ in 0..settings.num_game_threads {
            let (settings, params, current, forks) = (&settings, &params, &current, &forks);
            let (games_started, games_done, rows_done, threads_done, stop, failure, progress) = (
                &games_started,
                &games_done,
                &rows_done,
                &threads_done,
                stop,
                &failure,
                &progress,
            );
            scope.spawn(move || {
                let mut rng = StdRng::from_entropy();
                // The rows of a game go to the folder of the net that
                // finished it (KataGo writes a game that changed nets
                // mid-game as data of the newer net).
                let mut encoder = FeatureEncoder::new();
                while !stop.load(Ordering::Relaxed) {
                    if games_started.fetch_add(1, Ordering::SeqCst) >= max_games {
                        break;
                    }
                    // The newest model at the start of the game plays it
                    // (and a newer one takes over with switchNetsMidGame).
                    let start_gen = current.read().clone();
                    let mut gen = start_gen.clone();
                    let (fork, used_seki_fork) = forks.next_start(settings, &mut rng);
                    let mut newer_net = || {
                        let latest = current.read().clone();
                        if Arc::ptr_eq(&latest, &gen) {
                            return None;
                        }
                        let evaluator = latest.net.evaluator.clone();
                        gen = latest;
                        Some(evaluator)
                    };
                    let played = match play_game_switching(
                        settings,
                        params,
                        start_gen.net.evaluator.clone(),
                        &start_gen.name,
                        fork,
                        &mut rng,
                        stop,
                        &mut newer_net,
                    ) {
                        Ok(Some(p)) => p,
                        Ok(None) => break,
                        Err(e) => {
                            failure
                                .lock()
                                .get_or_insert(SelfplayError::Game(e.to_string()));
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    };
                    match maybe_fork(settings, &played.game, params, &gen.net.evaluator, &mut rng) {
                        Ok(Some(f)) => forks.push(f, &mut rng),
                        Ok(None) => {}
                        Err(e) => {
                            failure
                                .lock()
                                .get_or_insert(SelfplayError::Game(e.to_string()));
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                    if !used_seki_fork {
                        maybe_seki_fork(settings, &played.game, forks, &mut rng);
                    }
                    let added = gen.writer.lock().add_game(&played, &mut encoder);
                    match added {
                        Ok(n) => {
                            rows_done.fetch_add(n as u64, Ordering::Relaxed);
                        }
                        Err(e) => {
                            failure.lock().get_or_insert(e);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                    let g = games_done.fetch_add(1, Ordering::Relaxed) + 1;
                    let secs = start.elapsed().as_secs_f64().max(1e-9);
                    let r = rows_done.load(Ordering::Relaxed);
                    let line = format!(
                        "{}: {g} games, {r} rows, {:.3} games/s, {:.2} rows/s, avg batch {:.2}",
                        gen.name,
                        g as f64 / secs,
                        r as f64 / secs,
                        gen.net.evaluator.evaluator().stats().average_batch_size()
                    );
                    // Without a terminal the bar is hidden: a line every
                    // `logGamesEvery` games instead.
                    if progress.is_hidden() {
                        if g % log_games_every == 0 {
                            eprintln!("engine selfplay: {line}");
                        }
                    } else {
                        progress.set_message(line);
                    }
                }
                threads_done.fetch_add(1, Ordering::SeqCst);
            });
        }
        // Models-dir polling: a newer model is loaded beside the running
        // one and takes over from the next game on; rows go to its folder.
        if let Some(dir) = &args.models_dir {
            let mut last_check = Instant::now();
            while threads_done.load(Ordering::SeqCst) < settings.num_game_threads as u64 {
                std::thread::sleep(Duration::from_millis(200));
                if last_check.elapsed() < Duration::from_secs(10) || stop.load(Ordering::Relaxed) {
                    continue;
                }
                last_check = Instant::now();
                let Ok((name, path)) = find_latest_model(dir) else {
                    continue;
                };
                if name == current.read().name {
                    continue;
                }
                match start_generation(&name, &path, &cfg, &settings, args) {
                    Ok(gen) => {
                        let gen = Arc::new(gen);
                        let old = std::mem::replace(&mut *current.write(), gen.clone());
                        generations.lock().push(gen);
                        say(
                            &progress,
                            &format!("engine selfplay: switching to model {name}"),
                        );
                        let flushed = old.writer.lock().flush();
                        if let Err(e) = flushed {
                            failure.lock().get_or_insert(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(e) => say(
                        &progress,
                        &format!("engine selfplay: warning: newer model {name} not used: {e}"),
                    ),
                }
            }
        }
    });
    progress.finish_and_clear();
    let mut flushed = Ok(());
    for gen in generations.lock().iter() {
        let r = gen.writer.lock().flush();
        if flushed.is_ok() {
            flushed = r;
        }
    }
    if let Some(e) = failure.lock().take() {
        return Err(e);
    }
    flushed?;
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let g = games_done.load(Ordering::Relaxed);
    let r = rows_done.load(Ordering::Relaxed);
    let last = current.read().clone();
    eprintln!(
        "engine selfplay: {g} games, {r} rows in {secs:.1} s ({:.1} games/h, {:.0} rows/h, avg batch {:.2}), model {}, output {}",
        g as f64 * 3600.0 / secs,
        r as f64 * 3600.0 / secs,
        last.net.evaluator.evaluator().stats().average_batch_size(),
        last.name,
        last.out.display()
    );
    Ok(())
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

/// Ctrl-C and SIGTERM raise `stop` (the game threads drop the games in
/// flight and the finished games' data is written); a second signal exits
/// at once.
fn install_stop_handler(stop: &Arc<AtomicBool>, progress: &indicatif::ProgressBar) {
    let flag = stop.clone();
    let bar = progress.clone();
    let installed = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            eprintln!("engine selfplay: second signal, exiting without writing");
            std::process::exit(130);
        }
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

/// One model in use: its network and the writer of its output folder.
struct Generation {
    name: String,
    net: Network,
    writer: Mutex<DataWriter>,
    out: PathBuf,
}

/// Loads a model and prepares `OUT/<name>/` (with the config copy).
fn start_generation(
    name: &str,
    path: &Path,
    cfg: &Config,
    settings: &PlaySettings,
    args: &SelfplayArgs,
) -> Result<Generation, SelfplayError> {
    let net: Network = load_network(path, cfg, settings.num_game_threads.max(8))
        .map_err(|e| SelfplayError::Model(format!("{}: {e}", path.display())))?;
    let out = args.output_dir.join(name);
    std::fs::create_dir_all(&out).map_err(io_err(&out))?;
    let cfg_copy = out.join(format!(
        "selfplay-{}.cfg",
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    ));
    let cfg_text = std::fs::read(&args.config).map_err(io_err(&args.config))?;
    write_atomically(&cfg_copy, &cfg_text).map_err(io_err(&cfg_copy))?;
    let writer = Mutex::new(DataWriter::new(
        &out,
        settings.data_board_len,
        settings.max_rows_per_train_file,
    )?);
    Ok(Generation {
        name: name.to_string(),
        net,
        writer,
        out,
    })
}
