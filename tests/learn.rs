//! `engine learn` end to end on tiny settings (9x9, b2c16, a few games):
//! generations on a folder and on a real S3 server; `kill -9` staged in
//! the shuffle, the training, after the export, during the gating and in
//! the middle of a net's move, each followed by a restart that finishes the
//! generation with one ledger entry and no litter; a second learner refused
//! while the first lives and taking over once it is dead; SIGUSR1 during
//! training checkpoints and exits 3, and the restart goes on from there; a
//! corrupt npz and a truncated net are skipped and rejected.

// libtorch (and the trainer) are in the default build only.
#![cfg(feature = "torch")]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::learn_config::{tiny_config, TINY_SELFPLAY};
use common::s3_server::S3Server;
use engine::learn::ledger::Ledger;
use engine::store::layout::Run;
use engine::store::{Store, StoreUrl};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-learn-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s3() -> &'static S3Server {
    S3Server::shared_in_process()
}

fn engine(server: Option<&S3Server>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine"));
    if let Some(s) = server {
        s.configure(&mut c);
    }
    c.env("OMP_NUM_THREADS", "1")
        .env_remove("ENGINE_TEST_KILL_AFTER_WRITES")
        .stdin(Stdio::null());
    c
}

fn text(out: &Output) -> String {
    common::output_text(out)
}

fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}",
        out.status,
        text(&out)
    );
    out
}

fn learn(server: Option<&S3Server>, store: &str, config: &Path, extra: &[&str]) -> Command {
    let mut c = engine(server);
    c.args(["learn", "-store", store, "-config"])
        .arg(config)
        .args(extra);
    c
}

/// A random first net and 10 games of self-play with it: a run whose
/// first generation can start at once.
fn prepared_run(root: &str, server: Option<&S3Server>) {
    run_ok(engine(server).args([
        "export",
        "-random-init",
        "b2c16",
        "-seed",
        "3",
        "-export-dir",
        &format!("{root}/models/b2c16-random"),
        "-model-name",
        "model",
    ]));
    run_ok(engine(server).args([
        "selfplay",
        "-config",
        &repo().join("configs/selfplay.toml").display().to_string(),
        "-override-config",
        &format!("{TINY_SELFPLAY},dataBoardLen=9"),
        "-models-dir",
        &format!("{root}/models"),
        "-output-dir",
        &format!("{root}/selfplay"),
        "-max-games-total",
        "10",
    ]));
}

/// Checks a run after `generations` generations: one ledger record each
/// (numbered 1..), each net in exactly one of models/ and rejectedmodels/
/// as its record says, nothing left to test, one logged decision per net,
/// only the last window kept, the trainer at the last record's samples,
/// and no temporary object anywhere.
fn check_run(store: &Store, url: &StoreUrl, generations: u64) -> Ledger {
    let run = Run::open(url).unwrap();
    let ledger = Ledger::read(&run.learn().unwrap()).unwrap();
    let gens: Vec<u64> = ledger.records.iter().map(|r| r.generation).collect();
    assert_eq!(
        gens,
        (1..=generations).collect::<Vec<_>>(),
        "ledger of {url}"
    );
    let models = run.models().unwrap();
    let rejected = run.rejected().unwrap();
    assert!(
        run.candidates().unwrap().list().unwrap().is_empty(),
        "left to test"
    );
    let log =
        String::from_utf8(store.get("gatekeeper/gatekeeper_log.tsv").unwrap().to_vec()).unwrap();
    let mut samples = 0;
    for r in &ledger.records {
        let in_models = models.find(&r.candidate).unwrap().is_some();
        let in_rejected = rejected.find(&r.candidate).unwrap().is_some();
        assert_eq!(
            (in_models, in_rejected),
            (r.gate.accepted, !r.gate.accepted),
            "{} placed against its record",
            r.candidate
        );
        let lines = log
            .lines()
            .filter(|l| l.split('\t').nth(1) == Some(r.candidate.as_str()))
            .count();
        assert_eq!(lines, 1, "decisions logged for {}:\n{log}", r.candidate);
        assert_eq!(r.train.samples_before, samples);
        assert_eq!(r.train.samples_after, samples + 512);
        samples = r.train.samples_after;
        assert!(
            r.candidate.contains(&format!("-s{samples}-")),
            "{}",
            r.candidate
        );
    }
    let windows: Vec<String> = store
        .list("shuffleddata")
        .unwrap()
        .iter()
        .filter_map(|o| o.key.split('/').nth(1).map(str::to_string))
        .collect();
    let last = format!("gen-{generations:06}");
    assert!(
        windows.iter().all(|w| w.starts_with(&last)),
        "windows other than the last: {windows:?}"
    );
    for o in store.list("").unwrap() {
        assert!(
            !o.key.contains('#') && !o.key.ends_with(".tmp"),
            "temporary object {}",
            o.key
        );
    }
    ledger
}

fn local_store(dir: &Path) -> (Store, StoreUrl) {
    let url = StoreUrl::Local(dir.to_path_buf());
    (Store::open(&url).unwrap(), url)
}

#[test]
fn synchronous_generations_on_a_folder() {
    let dir = scratch("sync");
    let root = dir.join("run");
    let cfg = tiny_config(&dir, "maxGenerations = 2");
    let out = run_ok(&mut learn(
        None,
        &root.display().to_string(),
        &cfg,
        &["-synchronous", "8"],
    ));
    let log = text(&out);
    assert!(log.contains("generation 0: random b2c16 net"), "{log}");
    let (store, url) = local_store(&root);
    let ledger = check_run(&store, &url, 2);
    // At least 8 new games a generation (8 more while the window lacks
    // rows), played by the learner's own self-play under one worker name.
    let (g1, g2) = (
        ledger.records[0].games_total(),
        ledger.records[1].games_total(),
    );
    assert!(
        g1 >= 8 && g1 % 8 == 0 && g2 >= g1 + 8 && g2 % 8 == 0,
        "{g1} {g2}"
    );
    assert_eq!(
        ledger.records[1].workers.len(),
        1,
        "{:?}",
        ledger.records[1].workers
    );
    assert!(ledger.records[0].train.losses["loss"].is_finite());
    assert!(store.exists("learn/progress.svg").unwrap());
    assert!(store.exists("train/loss.svg").unwrap());
    // status names every net and the learner's state.
    let status =
        run_ok(engine(None).args(["learn", "-store", &root.display().to_string(), "status"]));
    let status = String::from_utf8_lossy(&status.stdout).to_string();
    for r in &ledger.records {
        assert!(status.contains(&r.candidate), "{status}");
    }
    assert!(status.contains("released"), "{status}");
    let json = run_ok(engine(None).args([
        "learn",
        "-store",
        &root.display().to_string(),
        "status",
        "-json",
    ]));
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["ledger"].as_array().map(Vec::len), Some(2), "{json}");
    let accepted: Vec<&str> = json["accepted"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(accepted.first(), Some(&"b2c16-random"), "{json}");
    for r in ledger.records.iter().filter(|r| r.gate.accepted) {
        assert!(accepted.contains(&r.candidate.as_str()), "{json}");
    }
    // A third run of the same command is done at once: nothing to redo.
    let again = run_ok(&mut learn(
        None,
        &root.display().to_string(),
        &cfg,
        &["-synchronous", "8"],
    ));
    assert!(
        text(&again).contains("2 generations done"),
        "{}",
        text(&again)
    );
    check_run(&store, &url, 2);
}

#[test]
fn asynchronous_generations_on_s3_with_a_separate_worker() {
    let server = s3();
    let url_text = server.unique_url("learn");
    prepared_run(&url_text, Some(server));
    let dir = scratch("s3");
    let cfg = tiny_config(&dir, "maxGenerations = 1");
    // Generation 1 starts at once (the run holds 10 games); generation 2
    // waits for a worker's rows.
    run_ok(&mut learn(Some(server), &url_text, &cfg, &[]));
    let url = StoreUrl::parse(&url_text).unwrap();
    let store = Store::open(&url).unwrap();
    check_run(&store, &url, 1);
    let mut learner = learn(
        Some(server),
        &url_text,
        &cfg,
        &[
            "-override-config",
            "maxGenerations=2,newRowsPerGeneration=60",
        ],
    )
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    run_ok(engine(Some(server)).args([
        "selfplay",
        "-config",
        &repo().join("configs/selfplay.toml").display().to_string(),
        "-override-config",
        &format!("{TINY_SELFPLAY},dataBoardLen=9"),
        "-models-dir",
        &format!("{url_text}/models"),
        "-output-dir",
        &format!("{url_text}/selfplay"),
        "-max-games-total",
        "12",
    ]));
    let status = wait_with_timeout(&mut learner, Duration::from_secs(240));
    let mut err = String::new();
    std::io::Read::read_to_string(learner.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "learner: {status}\n{err}");
    assert!(err.contains("waiting for self-play"), "{err}");
    let ledger = check_run(&store, &url, 2);
    assert!(ledger.records[1].rows_total() > ledger.records[0].rows_total());
}

fn wait_with_timeout(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let end = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("timed out after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn kill_9_in_each_step_then_restart_finishes_the_generation_once() {
    let dir = scratch("kill");
    let prepared = dir.join("prepared");
    prepared_run(&prepared.display().to_string(), None);
    let cfg = tiny_config(&dir, "maxGenerations = 1");
    // Where the kill lands: in the middle of the shuffle's output, after
    // the first training checkpoint, right after the export, after the
    // first gating game, between a net's copy and its delete, right after
    // the ledger object (before the old windows are tidied).
    for (i, spec) in [
        "shuffleddata/gen-000001/train/data0_0.npz:1",
        "train/checkpoint:1",
        "modelstobetested/:1",
        "gatekeeper/b2c16:1",
        "gatekeeper/gatekeeper_log.tsv:1",
        "learn/generations/:1",
    ]
    .iter()
    .enumerate()
    {
        let root = dir.join(format!("run{i}"));
        let status = Command::new("cp")
            .arg("-r")
            .arg(&prepared)
            .arg(&root)
            .status()
            .unwrap();
        assert!(status.success());
        let store_arg = root.display().to_string();
        let killed = learn(None, &store_arg, &cfg, &["-synchronous", "10"])
            .env("ENGINE_TEST_KILL_AFTER_WRITES", spec)
            .output()
            .unwrap();
        assert_eq!(
            killed.status.signal(),
            Some(9),
            "{spec}: not killed ({}):\n{}",
            killed.status,
            text(&killed)
        );
        let again = run_ok(&mut learn(None, &store_arg, &cfg, &["-synchronous", "10"]));
        let (store, url) = local_store(&root);
        let ledger = check_run(&store, &url, 1);
        // The restart played no new games: the data was there.
        assert!(ledger.records[0].games_total() >= 10, "{spec}");
        assert!(
            !text(&again).contains("self-play of"),
            "{spec}: {}",
            text(&again)
        );
    }
}

#[test]
fn a_second_learner_is_refused_until_the_first_is_dead() {
    let dir = scratch("lease");
    let root = dir.join("run");
    let store_arg = root.display().to_string();
    // Waits for rows that never come: it only holds the lease.
    let cfg = tiny_config(&dir, "newRowsPerGeneration = 100000000");
    let mut first = learn(None, &store_arg, &cfg, &[])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = common::stderr_lines(&mut first);
    common::read_until(&mut lines, "waiting for self-play");
    let second = learn(None, &store_arg, &cfg, &[]).output().unwrap();
    assert_eq!(second.status.code(), Some(4), "{}", text(&second));
    assert!(
        text(&second).contains("another learner holds this run"),
        "{}",
        text(&second)
    );
    // kill -9 of the first: on this host a dead holder is taken over at once.
    first.kill().unwrap();
    first.wait().unwrap();
    let mut third = learn(None, &store_arg, &cfg, &[])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = common::stderr_lines(&mut third);
    let seen = common::read_until(&mut lines, "waiting for self-play");
    assert!(
        !seen.iter().any(|l| l.contains("another learner")),
        "{seen:?}"
    );
    // SIGTERM: it lets the lease go and exits 3.
    nix_kill(third.id(), "TERM");
    let status = wait_with_timeout(&mut third, Duration::from_secs(30));
    assert_eq!(status.code(), Some(3));
    let status = run_ok(engine(None).args(["learn", "-store", &store_arg, "status"]));
    let status = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(status.contains("(lease 2 of"), "{status}");
    assert!(status.contains("released"), "{status}");
}

fn nix_kill(pid: u32, sig: &str) {
    let s = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(s.success());
}

#[test]
fn sigusr1_during_training_checkpoints_and_the_restart_goes_on() {
    let dir = scratch("usr1");
    let root = dir.join("run");
    prepared_run(&root.display().to_string(), None);
    let store_arg = root.display().to_string();
    // A long generation (about 200 steps), checkpointed only at its end
    // unless stopped.
    let cfg = tiny_config(
        &dir,
        "maxGenerations = 1\ntrainSamplesPerGeneration = 12800\ntrainCheckpointEverySamples = 1000000",
    );
    let mut first = learn(None, &store_arg, &cfg, &["-synchronous", "10"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = common::stderr_lines(&mut first);
    common::read_until(&mut lines, "training 12800 samples");
    std::thread::sleep(Duration::from_millis(300));
    nix_kill(first.id(), "USR1");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = wait_with_timeout(&mut first, Duration::from_secs(60));
    assert_eq!(status.code(), Some(3), "{}", rest.join("\n"));
    let log = rest.join("\n");
    assert!(log.contains("stopped at"), "{log}");
    assert!(log.contains("stopped by SIGUSR1"), "{log}");
    let again = run_ok(&mut learn(None, &store_arg, &cfg, &["-synchronous", "10"]));
    let again = text(&again);
    let resumed = again
        .lines()
        .find(|l| l.contains("resumed from"))
        .unwrap_or_else(|| panic!("{again}"));
    let at: u64 = resumed
        .rsplit("at ")
        .next()
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{resumed}"));
    assert!(at > 0 && at < 12800, "{resumed}");
    let (store, url) = local_store(&root);
    let run = Run::open(&url).unwrap();
    let ledger = Ledger::read(&run.learn().unwrap()).unwrap();
    assert_eq!(ledger.records.len(), 1);
    assert_eq!(ledger.records[0].train.samples_after, 12800);
    assert!(store.exists("train/checkpoint.safetensors").unwrap());
}

#[test]
fn a_corrupt_npz_and_a_truncated_net_are_skipped_and_the_run_goes_on() {
    let dir = scratch("bad");
    let root = dir.join("run");
    prepared_run(&root.display().to_string(), None);
    let store_arg = root.display().to_string();
    let (store, url) = local_store(&root);
    store
        .put(
            "selfplay/b2c16-random/tdata/byhand-00000000000000AA.npz",
            b"PK\x03\x04 not a zip".to_vec(),
        )
        .unwrap();
    let good = store.get("models/b2c16-random/model.bin.gz").unwrap();
    store
        .put(
            "modelstobetested/byhand-s99999999-d1/model.bin.gz",
            good.slice(0..good.len() / 3),
        )
        .unwrap();
    let cfg = tiny_config(&dir, "maxGenerations = 1");
    let out = run_ok(&mut learn(None, &store_arg, &cfg, &["-synchronous", "10"]));
    let log = text(&out);
    assert!(log.contains("skipping bad file"), "{log}");
    check_run(&store, &url, 1);
    let gate_log =
        String::from_utf8(store.get("gatekeeper/gatekeeper_log.tsv").unwrap().to_vec()).unwrap();
    let line = gate_log
        .lines()
        .find(|l| l.contains("byhand-s99999999-d1"))
        .unwrap_or_else(|| panic!("{gate_log}"));
    assert!(line.ends_with("\tfalse\tunloadable"), "{line}");
    assert!(Run::open(&url)
        .unwrap()
        .rejected()
        .unwrap()
        .find("byhand-s99999999-d1")
        .unwrap()
        .is_some());
}

#[test]
fn a_store_unreachable_for_a_minute_is_waited_for_and_nothing_is_lost() {
    let mut server = S3Server::start_private();
    let url = server.unique_url("outage");
    prepared_run(&url, Some(&server));
    let dir = scratch("outage");
    let cfg = tiny_config(&dir, "maxGenerations = 2\nnewRowsPerGeneration = 60");
    // Requests that fail are retried for up to 3 minutes.
    let with_retries = |mut c: Command| {
        c.env("ENGINE_STORE_RETRY_SECONDS", "180");
        c
    };
    let mut learner = with_retries(learn(Some(&server), &url, &cfg, &[]))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut worker = with_retries(engine(Some(&server)));
    let mut worker = worker
        .args([
            "selfplay",
            "-config",
            &repo().join("configs/selfplay.toml").display().to_string(),
            "-override-config",
            &format!("{TINY_SELFPLAY},dataBoardLen=9,maxRowsPerTrainFile=20"),
            "-models-dir",
            &format!("{url}/models"),
            "-output-dir",
            &format!("{url}/selfplay"),
            "-max-games-total",
            "16",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the learner's first generation, then take the server away
    // for a minute while both are at work.
    let mut lines = common::stderr_lines(&mut learner);
    let mut seen = common::read_until(&mut lines, "; ledger ");
    server.stop();
    std::thread::sleep(Duration::from_secs(60));
    server.restart();
    seen.extend(lines.map_while(Result::ok));
    let status = wait_with_timeout(&mut learner, Duration::from_secs(300));
    assert!(status.success(), "learner: {status}\n{}", seen.join("\n"));
    let worker_status = wait_with_timeout(&mut worker, Duration::from_secs(300));
    let mut worker_log = String::new();
    std::io::Read::read_to_string(worker.stderr.as_mut().unwrap(), &mut worker_log).unwrap();
    assert!(
        worker_status.success(),
        "worker: {worker_status}\n{worker_log}"
    );
    // Nothing lost: the worker wrote its 16 games (exit 0: every game it
    // played is in the store), and the learner finished generation 2.
    let mut status = engine(Some(&server));
    status.args(["learn", "-store", &url, "status"]);
    let report = String::from_utf8_lossy(&run_ok(&mut status).stdout).to_string();
    assert!(report.contains("\n   2  "), "{report}");
    assert!(
        worker_log.contains("engine selfplay: 16 games"),
        "the worker's summary: {worker_log}"
    );
    server.stop();
}

#[test]
fn bad_flags_and_configs_are_refused_clearly() {
    let dir = scratch("flags");
    let store_arg = dir.join("run").display().to_string();
    let cfg = tiny_config(&dir, "trainBatchSise = 3");
    let out = learn(None, &store_arg, &cfg, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("did you mean 'trainBatchSize'"),
        "{}",
        text(&out)
    );
    let cfg = tiny_config(&dir, "");
    let out = learn(None, &store_arg, &cfg, &["-synchronous", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // Nothing was written for a refused start.
    assert!(!dir.join("run").exists());
}

/// A run started from another run's trainer checkpoint (`initialCheckpoint`,
/// relative to the config's folder) publishes that checkpoint's net as its
/// generation 0, byte for byte, and trains on from its samples rather than
/// from random weights; a missing checkpoint stops the start with its path.
#[test]
fn a_run_started_from_a_checkpoint_grows_that_net() {
    let dir = scratch("initial");
    let first = dir.join("first");
    let cfg = tiny_config(&dir, "maxGenerations = 1\ngating = false");
    run_ok(&mut learn(
        None,
        &first.display().to_string(),
        &cfg,
        &["-synchronous", "8"],
    ));
    let (first_store, first_url) = local_store(&first);
    let first_ledger = Ledger::read(&Run::open(&first_url).unwrap().learn().unwrap()).unwrap();
    let grown = &first_ledger.records[0];
    let net_key = |name: &str| format!("models/{name}/model.bin.gz");
    std::fs::write(
        dir.join("checkpoint.safetensors"),
        first_store
            .get(&format!("train/{}", engine::train::CHECKPOINT_FILE))
            .unwrap(),
    )
    .unwrap();

    let config_dir = dir.join("configs");
    std::fs::create_dir_all(&config_dir).unwrap();
    let second = dir.join("second");
    let missing = tiny_config(
        &config_dir,
        "maxGenerations = 1\ngating = false\ninitialCheckpoint = \"../missing.safetensors\"",
    );
    let out = learn(
        None,
        &second.display().to_string(),
        &missing,
        &["-synchronous", "8"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("missing.safetensors"), "{}", text(&out));

    let cfg = tiny_config(
        &config_dir,
        "maxGenerations = 1\ngating = false\ninitialCheckpoint = \"../checkpoint.safetensors\"",
    );
    let out = run_ok(&mut learn(
        None,
        &second.display().to_string(),
        &cfg,
        &["-synchronous", "8"],
    ));
    assert!(
        text(&out).contains(&format!("generation 0: {} from", grown.candidate)),
        "{}",
        text(&out)
    );
    let (second_store, second_url) = local_store(&second);
    assert_eq!(
        second_store.get(&net_key(&grown.candidate)).unwrap(),
        first_store.get(&net_key(&grown.candidate)).unwrap(),
        "generation 0 is the first run's net"
    );
    let run = Run::open(&second_url).unwrap();
    let ledger = Ledger::read(&run.learn().unwrap()).unwrap();
    assert_eq!(ledger.records.len(), 1);
    let record = &ledger.records[0];
    assert_eq!(record.selfplay_net, grown.candidate);
    assert_eq!(record.train.samples_before, grown.train.samples_after);
    assert_eq!(record.train.samples_after, grown.train.samples_after + 512);
    let models: Vec<String> = second_store
        .list("models")
        .unwrap()
        .iter()
        .map(|o| o.key.clone())
        .collect();
    assert!(
        models.iter().all(|k| !k.contains("random")),
        "no random net in a grown run: {models:?}"
    );
}
