//! The generation loop: wait for data → shuffle → train → export → gate →
//! ledger. Each step is found done or redone after a crash by the fixed
//! names of what it writes, so a restart carries on where the store says.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::lease::{Lease, ReleaseHandle};
use super::ledger::{GateRecord, GenerationRecord, Ledger, TrainRecord, WindowRecord};
use super::scan::{Scan, SelfplayScan};
use super::settings::{resolve, LearnSettings};
use super::signals;
use super::status::progress_svg;
use super::LearnError;
use crate::data::{shuffle, ShuffleConfig, WindowParams};
use crate::play::matches::{GateDecision, GateFolders, Gatekeeper, Logger};
use crate::store::layout::{LearnFiles, ModelsDir, Run, ShuffledWindow};
use crate::store::WORKER_NAME_ENV;
use crate::store::{StoreUrl, TEST_KILL_AFTER_WRITES_ENV};
use crate::train::{random_net_bin_gz, TrainData, TrainOptions, Trainer};

/// What the learner is doing, for the signal watcher: a stop during a
/// step with nothing to save (shuffle, export, gating) exits at once; the
/// other steps stop themselves cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Step {
    /// Waiting for data or running self-play: stops itself.
    Waiting = 0,
    /// Training: checkpoints, then stops.
    Training = 1,
    /// Anything that is simply redone after a restart.
    Redoable = 2,
}

/// How a run of the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// `maxGenerations` reached.
    Done,
    /// A signal stopped it (checkpointed where it was training).
    Stopped,
}

/// The learner of one run.
pub struct Learner {
    settings: LearnSettings,
    config_file: Option<PathBuf>,
    run: Run,
    files: LearnFiles,
    lease: Lease,
    ledger: Ledger,
    scan: SelfplayScan,
    gatekeeper: Gatekeeper,
    /// `-synchronous N`: N games of the newest net per generation, played
    /// by self-play that the learner starts itself.
    synchronous: Option<u64>,
    step: Arc<AtomicU8>,
    selfplay_failures: u32,
}

impl Learner {
    /// A learner of `run` holding `lease`.
    pub fn new(
        settings: LearnSettings,
        config_file: Option<PathBuf>,
        run: Run,
        lease: Lease,
        synchronous: Option<u64>,
    ) -> Result<Learner, LearnError> {
        let files = run.learn()?;
        let ledger = Ledger::read(&files)?;
        let scan = SelfplayScan::new(run.selfplay()?);
        let gatekeeper = gatekeeper(&settings, config_file.as_deref(), &run)?;
        let step = Arc::new(AtomicU8::new(Step::Waiting as u8));
        watch_signals(step.clone(), lease.release_handle());
        Ok(Learner {
            settings,
            config_file,
            run,
            files,
            lease,
            ledger,
            scan,
            gatekeeper,
            synchronous,
            step,
            selfplay_failures: 0,
        })
    }

    /// Lets the run's lease go (the next learner starts at once).
    pub fn release(self) {
        self.lease.release();
    }

    fn set_step(&self, step: Step) {
        self.step.store(step as u8, Ordering::SeqCst);
    }

    /// Runs generations until `maxGenerations` or a signal.
    pub fn run(&mut self) -> Result<Outcome, LearnError> {
        self.ensure_first_net()?;
        if let Some(last) = self.ledger.last() {
            eprintln!(
                "learn: {} generations in the ledger; the last trained {} ({})",
                last.generation,
                last.candidate,
                if last.gate.accepted {
                    "accepted"
                } else {
                    "rejected"
                }
            );
        }
        loop {
            let g = self.ledger.next_generation();
            let max = self.settings.max_generations;
            if max > 0 && g > max {
                eprintln!("learn: {max} generations done (maxGenerations)");
                return Ok(Outcome::Done);
            }
            if !self.generation(g)? {
                return Ok(Outcome::Stopped);
            }
        }
    }

    /// The first net of a run from scratch, published create-if-absent:
    /// the export of `initialCheckpoint` where the config names one (a run
    /// that goes on growing an earlier run's net), else random weights
    /// (the same seed gives the same bytes).
    fn ensure_first_net(&self) -> Result<(), LearnError> {
        let models = self.run.models()?;
        if models.newest()?.is_some() || self.ledger.last().is_some() {
            return Ok(());
        }
        let opts = self.train_options()?;
        if let Some(from) = opts.initial_checkpoint.clone() {
            let trainer = Trainer::open(opts, self.run.train_dir()?)?;
            self.lease.check()?;
            let (name, _) = trainer.export(&models, self.settings.prefix())?;
            eprintln!(
                "learn: generation 0: {name} from {} ({} samples trained)",
                from.display(),
                trainer.samples()
            );
            return Ok(());
        }
        let name = format!("{}-random", self.settings.prefix());
        let bytes = random_net_bin_gz(&self.settings.model_kind, self.settings.seed, &name)?;
        self.lease.check()?;
        models.publish(&name, bytes)?;
        eprintln!(
            "learn: generation 0: random {} net {}/{name}",
            self.settings.model_kind,
            models.url()
        );
        Ok(())
    }

    /// The trainer's options, `initialCheckpoint` resolved against the
    /// config file's folder.
    fn train_options(&self) -> Result<TrainOptions, LearnError> {
        Ok(self.settings.train_options(self.config_file.as_deref())?)
    }

    /// One generation; `false` when a signal stopped it.
    fn generation(&mut self, g: u64) -> Result<bool, LearnError> {
        let started = Instant::now();
        let models = self.run.models()?;
        let selfplay_net = models
            .newest()?
            .map(|m| m.name)
            .ok_or_else(|| LearnError::Invalid(format!("no net in {}", models.url())))?;
        let window_name = format!("gen-{g:06}");
        let shuffled = self.run.shuffled()?;

        // 1. Data and window.
        let (window, scan) = if shuffled.complete_windows()?.contains(&window_name) {
            eprintln!("learn: gen {g}: window {window_name} is already shuffled");
            (shuffled.window(&window_name)?, self.scan.scan()?)
        } else {
            match self.data_and_window(g, &selfplay_net, &window_name)? {
                Some(found) => found,
                None => return Ok(false),
            }
        };

        // 2. Train to this generation's target and export.
        // The first generation trains on from the starting checkpoint's samples.
        let samples_before = match self.ledger.last() {
            Some(r) => r.train.samples_after,
            None => Trainer::starting_samples(&self.train_options()?)?,
        };
        let Some((train, candidate)) = self.train(g, &window, samples_before)? else {
            return Ok(false);
        };

        // 3. Gate.
        self.set_step(Step::Redoable);
        let decision = self.gate(g, &candidate)?;

        // 4. The ledger.
        let previous_elo = self.ledger.last().map_or(0.0, |r| r.cumulative_elo);
        let gate = GateRecord {
            opponent: decision.opponent.clone(),
            wins: decision.result.wins,
            losses: decision.result.losses,
            draws: decision.result.draws,
            required: decision.required,
            accepted: decision.accepted,
            reason: decision.reason.clone(),
        };
        let record = GenerationRecord {
            generation: g,
            finished_unix: now_unix(),
            seconds: started.elapsed().as_secs_f64(),
            selfplay_net,
            workers: scan.workers.clone(),
            window: WindowRecord {
                name: window.name.clone(),
                start: window.range.0,
                end: window.range.1,
            },
            train,
            candidate: candidate.clone(),
            cumulative_elo: GenerationRecord::next_cumulative_elo(previous_elo, &gate),
            gate,
        };
        self.lease.check()?;
        self.ledger.append(&self.files, record)?;
        eprintln!(
            "learn: gen {g}: {candidate} {} ({}), {:.0} s; ledger {}",
            if decision.accepted {
                "accepted"
            } else {
                "rejected"
            },
            decision.reason,
            started.elapsed().as_secs_f64(),
            self.files.describe_generation(g)
        );

        // 5. Tidy up and draw: older windows go, the plot is redrawn.
        shuffled.remove_all_but(&window_name)?;
        let plot = self.files.write_plot(progress_svg(&self.ledger))?;
        eprintln!("learn: progress plot {plot}");
        Ok(true)
    }

    /// Waits for this generation's data (self-play of its own in
    /// synchronous mode) and shuffles the window; `None` when a signal
    /// stopped it.
    fn data_and_window(
        &mut self,
        g: u64,
        net: &str,
        window_name: &str,
    ) -> Result<Option<(ShuffledWindow, Scan)>, LearnError> {
        let s = &self.settings;
        // Synchronous: N games more than when the last window was cut (the
        // learner's own self-play is the only writer), whether or not the
        // last net was accepted.
        let previous_games = self.ledger.last().map_or(0, |r| r.games_total());
        let mut games_wanted = previous_games + self.synchronous.unwrap_or(0);
        let previous_rows = self.ledger.last().map_or(0, |r| r.rows_total());
        let mut rows_wanted = (previous_rows + s.new_rows_per_generation).max(s.shuffle_min_rows);
        loop {
            self.set_step(Step::Waiting);
            let scan = match self.synchronous {
                Some(_) => self.play_games(g, net, games_wanted)?,
                None => self.wait_for_rows(g, rows_wanted)?,
            };
            let Some(scan) = scan else {
                return Ok(None);
            };
            self.set_step(Step::Redoable);
            eprintln!(
                "learn: gen {g}: shuffling {} rows of self-play ({} games of {net})",
                scan.rows(),
                scan.games_of(net)
            );
            if let Some(window) = self.shuffle(window_name)? {
                return Ok(Some((window, scan)));
            }
            // Too few rows for the window's minimum: more self-play.
            eprintln!(
                "learn: gen {g}: fewer than shuffleMinRows {} usable rows, waiting for more",
                self.settings.shuffle_min_rows
            );
            games_wanted = scan.games() + self.synchronous.unwrap_or(0);
            rows_wanted = scan.rows() + self.settings.new_rows_per_generation.max(1);
        }
    }

    /// Polls the store until it holds `rows` rows; `None` on a signal.
    fn wait_for_rows(&mut self, g: u64, rows: u64) -> Result<Option<Scan>, LearnError> {
        let mut said = false;
        loop {
            self.lease.check()?;
            let scan = self.scan.scan()?;
            if scan.rows() >= rows {
                return Ok(Some(scan));
            }
            if !said {
                eprintln!(
                    "learn: gen {g}: waiting for self-play: {} of {rows} rows",
                    scan.rows()
                );
                said = true;
            }
            if sleep_unless_stopped(Duration::from_secs_f64(self.settings.poll_seconds)) {
                return Ok(None);
            }
        }
    }

    /// Synchronous mode: plays games with the newest net until the run
    /// holds `games` games in all; `None` on a signal.
    fn play_games(&mut self, g: u64, net: &str, games: u64) -> Result<Option<Scan>, LearnError> {
        loop {
            self.lease.check()?;
            let scan = self.scan.scan()?;
            let have = scan.games();
            if have >= games {
                return Ok(Some(scan));
            }
            eprintln!(
                "learn: gen {g}: self-play of {} games with {net} ({have} of {games} in the run)",
                games - have
            );
            let mut child = self.start_selfplay(games - have)?;
            let status = loop {
                if signals::stop_requested() {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(child.id() as i32),
                        nix::sys::signal::SIGTERM,
                    );
                    let _ = child.wait();
                    return Ok(None);
                }
                match child.try_wait() {
                    Ok(Some(status)) => break status,
                    Ok(None) => std::thread::sleep(Duration::from_millis(200)),
                    Err(e) => return Err(LearnError::Invalid(format!("self-play: {e}"))),
                }
            };
            if status.success() {
                self.selfplay_failures = 0;
                continue;
            }
            self.selfplay_failures += 1;
            eprintln!(
                "learn: gen {g}: self-play failed ({status}), {} in a row",
                self.selfplay_failures
            );
            if self.selfplay_failures >= 3 {
                return Err(LearnError::Invalid(
                    "self-play failed 3 times in a row: stopping".into(),
                ));
            }
            if sleep_unless_stopped(Duration::from_secs(5)) {
                return Ok(None);
            }
        }
    }

    /// Starts `engine selfplay` on the run for `games` games.
    fn start_selfplay(&self, games: u64) -> Result<Child, LearnError> {
        selfplay_command(
            &self.settings,
            self.config_file.as_deref(),
            self.run.url(),
            Some(games),
            "",
        )?
        // One worker name for all the learner's own self-play.
        .env(
            WORKER_NAME_ENV,
            format!("{}-learn", super::lease::host_name()),
        )
        // Its own process group: a Ctrl-C in the terminal (or a kill of the
        // learner's group) reaches the learner only, which passes one
        // SIGTERM on; a second signal would make self-play drop its
        // finished games.
        .process_group(0)
        .spawn()
        .map_err(|e| LearnError::Invalid(format!("starting self-play: {e}")))
    }

    /// Shuffles the window `name`; `None` when there are too few rows.
    fn shuffle(&self, name: &str) -> Result<Option<ShuffledWindow>, LearnError> {
        let s = &self.settings;
        // One scratch folder per run (not per process): a shuffle killed
        // mid-way leaves its shards there, and the next one clears them.
        let scratch = std::env::temp_dir().join(format!(
            "engine-learn-shuffle-{:016x}.tmp",
            fnv1a(self.run.url().to_string().as_bytes())
        ));
        let cfg = ShuffleConfig {
            dirs: vec![self.run.url().join("selfplay")],
            out_dir: self.run.shuffle_output(name),
            out_tmp_dir: scratch,
            window: WindowParams {
                min_rows: s.shuffle_min_rows,
                max_rows: (s.shuffle_max_rows > 0).then_some(s.shuffle_max_rows),
                expand_window_per_row: s.shuffle_expand_window_per_row,
                taper_window_exponent: s.shuffle_taper_window_exponent,
                taper_window_scale: (s.shuffle_taper_window_scale > 0.0)
                    .then_some(s.shuffle_taper_window_scale),
                add_to_data_rows: 0.0,
                skip_mtime_range: None,
            },
            keep_target_rows: (s.shuffle_keep_target_rows > 0)
                .then_some(s.shuffle_keep_target_rows),
            summary_file: None,
            approx_rows_per_out_file: s.shuffle_rows_per_file,
            approx_rows_per_bucket: s.shuffle_rows_per_file,
            num_processes: s.shuffle_threads.max(1),
            worker_group_size: 80_000,
            excludes: Vec::new(),
            exclude_basename: false,
            md5_bounds: (None, None),
            include_meta: false,
            seed: None,
            level: None,
        };
        self.lease.check()?;
        // The shuffle's own log (a line per input file) is not for the
        // learner's user; its summary is.
        let mut log = Vec::new();
        let Some(report) = shuffle(&cfg, &mut log)? else {
            return Ok(None);
        };
        eprintln!(
            "learn: window {name}: rows {}..{} of {} ({} kept in {} files)",
            report.range.0,
            report.range.1,
            report.num_rows_total,
            report.outputs.iter().map(|(_, n)| n).sum::<usize>(),
            report.outputs.len()
        );
        Ok(Some(self.run.shuffled()?.window(name)?))
    }

    /// Trains generation `g` to its target and exports its net; `None` when
    /// a signal stopped the training (checkpointed).
    fn train(
        &mut self,
        g: u64,
        window: &ShuffledWindow,
        samples_before: u64,
    ) -> Result<Option<(TrainRecord, String)>, LearnError> {
        let s = &self.settings;
        let mut trainer = Trainer::open(self.train_options()?, self.run.train_dir()?)?;
        let target = samples_before + trainer.epoch_samples(s.train_samples_per_generation);
        let mut record = TrainRecord {
            samples_before,
            ..TrainRecord::default()
        };
        if trainer.samples() < target {
            let data = TrainData::window(&self.run.shuffled()?, window, s.pos_len)?;
            eprintln!(
                "learn: gen {g}: training {} samples ({} to {target}) on {} rows",
                target - trainer.samples(),
                trainer.samples(),
                data.num_rows()
            );
            self.set_step(Step::Training);
            let report = trainer.train_epoch(&data, target - trainer.samples(), signals::flag())?;
            let Some(report) = report else {
                return Ok(None);
            };
            self.set_step(Step::Redoable);
            record.seconds = report.seconds;
            record.losses = report.train;
            record.val_losses = report.val.unwrap_or_default();
        }
        record.samples_after = trainer.samples();
        let candidate = trainer.export_name(s.prefix());
        let placed = [self.run.models()?, self.run.rejected()?];
        if !is_in_any(&placed, &candidate)? {
            self.lease.check()?;
            trainer.export(&self.run.candidates()?, s.prefix())?;
        }
        Ok(Some((record, candidate)))
    }

    /// Gates every net waiting (this generation's among them) and returns
    /// the decision on `candidate`, made now or before a restart.
    fn gate(&self, g: u64, candidate: &str) -> Result<GateDecision, LearnError> {
        let mut mine = None;
        loop {
            self.lease.check()?;
            match self.gatekeeper.gate_next()? {
                Some(d) if d.candidate == candidate => mine = Some(d),
                Some(d) => eprintln!(
                    "learn: gen {g}: gated {} too ({})",
                    d.candidate,
                    if d.accepted { "accepted" } else { "rejected" }
                ),
                None => break,
            }
        }
        if let Some(d) = mine {
            return Ok(d);
        }
        if let Some(d) = self.gatekeeper.decision_of(candidate)? {
            return Ok(d);
        }
        Err(LearnError::Invalid(format!(
            "{candidate} was neither gated nor found in the gatekeeper's log"
        )))
    }
}

/// The `engine selfplay` command line that plays for the run at `run`
/// with the learner's self-play settings (`selfplayConfig`,
/// `selfplayOverrides`, then `extra_overrides`, then `dataBoardLen` =
/// `posLen`, which the trainer needs): `games` games, or until stopped.
pub(super) fn selfplay_command(
    s: &LearnSettings,
    config_file: Option<&std::path::Path>,
    run: &StoreUrl,
    games: Option<u64>,
    extra_overrides: &str,
) -> Result<Command, LearnError> {
    let exe = std::env::current_exe()
        .map_err(|e| LearnError::Invalid(format!("the engine binary: {e}")))?;
    let config = resolve(config_file, &s.selfplay_config);
    let board = format!("dataBoardLen={}", s.pos_len);
    let overrides: Vec<&str> = [s.selfplay_overrides.as_str(), extra_overrides, &board]
        .into_iter()
        .map(|o| o.trim().trim_matches(','))
        .filter(|o| !o.is_empty())
        .collect();
    let mut cmd = Command::new(exe);
    cmd.arg("selfplay")
        .arg("-config")
        .arg(&config)
        .arg("-override-config")
        .arg(overrides.join(","))
        .arg("-models-dir")
        .arg(run.join("models").to_string())
        .arg("-output-dir")
        .arg(run.join("selfplay").to_string())
        .env_remove(TEST_KILL_AFTER_WRITES_ENV);
    if let Some(n) = games {
        cmd.arg("-max-games-total").arg(n.to_string());
    }
    Ok(cmd)
}

/// Whether a net named `name` is in any of `dirs`.
fn is_in_any(dirs: &[ModelsDir], name: &str) -> Result<bool, LearnError> {
    for d in dirs {
        if d.find(name)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The learner's gatekeeper over the run's folders: `gatekeeperConfig`
/// with its overrides, or accept-all when `gating` is off.
fn gatekeeper(
    s: &LearnSettings,
    config_file: Option<&std::path::Path>,
    run: &Run,
) -> Result<Gatekeeper, LearnError> {
    let cfg = if s.gating {
        let path = resolve(config_file, &s.gatekeeper_config);
        let overrides: Vec<String> = if s.gatekeeper_overrides.trim().is_empty() {
            Vec::new()
        } else {
            vec![s.gatekeeper_overrides.clone()]
        };
        crate::setup::load_config(Some(&path), &overrides).map_err(Box::new)?
    } else {
        crate::setup::load_config(None, &["numGamesPerGating=0".to_string()]).map_err(Box::new)?
    };
    let folders = GateFolders {
        test: run.candidates()?,
        accepted: run.models()?,
        rejected: run.rejected()?,
        log: run.gatekeeper_log()?,
    };
    let log = Logger::new("learn: gatekeeper", None)?;
    let gatekeeper = Gatekeeper::new(cfg, None, folders, log)?;
    if s.gating {
        for line in gatekeeper.config_key_report("engine learn's gatekeeper") {
            gatekeeper.log().line(&line);
        }
    }
    Ok(gatekeeper)
}

/// Sleeps up to `d`, waking early on a signal; `true` if one came.
pub(super) fn sleep_unless_stopped(d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if signals::stop_requested() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100).min(end - Instant::now()));
    }
    signals::stop_requested()
}

/// Exits at once on a signal that comes during a step that is simply
/// redone (letting the lease go first); the other steps stop themselves.
fn watch_signals(step: Arc<AtomicU8>, release: ReleaseHandle) {
    let _ = std::thread::Builder::new()
        .name("learn-signals".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            if signals::stop_requested() && step.load(Ordering::SeqCst) == Step::Redoable as u8 {
                eprintln!("learn: stopped by a signal; the step in progress is redone on restart");
                release.release();
                std::process::exit(crate::exit::Exit::Stopped.process_code());
            }
        });
}

/// FNV-1a: a stable short name for a run's URL.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
