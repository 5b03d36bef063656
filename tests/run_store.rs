//! The run store end to end, on a real S3 server (SeaweedFS, started by
//! `scripts/s3_server.sh`) and on a `file://` folder through the same code:
//! self-play writes a run's data, `engine shuffle`, `train`, `export` and
//! `gatekeeper` read and write it; a `kill -9` of self-play or training
//! leaves only whole objects; a wrong secret, a missing bucket and a
//! stopped server give a clear error, a non-zero exit and nothing half
//! written; Ctrl-C/SIGTERM ends self-play with its documented exit code
//! after writing every finished game; a net replaced under `-models-dir`
//! is released.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::s3_server::S3Server;
use engine::data::read_npz_bytes;
use engine::store::layout::ModelsDir;
use engine::store::{Store, StoreUrl};

/// Self-play settings small enough for tests: 9x9, a few visits, short
/// games, small files.
const TINY_SELFPLAY: &str = "bSizes=9,bSizeRelProbs=1,dataBoardLen=9,maxVisits=8,cheapSearchVisits=4,\
reducedVisitsMin=4,numGameThreads=4,nnMaxBatchSize=8,maxMovesPerGame=40,maxRowsPerTrainFile=50,logGamesEvery=1";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn s3() -> &'static S3Server {
    S3Server::shared_in_process()
}

fn engine(server: Option<&S3Server>) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine"));
    if let Some(s) = server {
        s.configure(&mut c);
    }
    c.env("OMP_NUM_THREADS", "1").stdin(Stdio::null());
    c
}

fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-runstore-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn selfplay_config() -> String {
    repo().join("configs/selfplay.toml").display().to_string()
}

/// A b2c16 net with random weights as `models/NAME` of `root`.
fn random_net(root: &str, name: &str, seed: u32, server: Option<&S3Server>) {
    run_ok(engine(server).args([
        "export",
        "-random-init",
        "b2c16",
        "-seed",
        &seed.to_string(),
        "-export-dir",
        &format!("{root}/models/{name}"),
        "-model-name",
        "model",
    ]));
}

/// Every object of the store is whole: no temporary name, every `.npz`
/// decodes, every net loads. Returns the keys.
fn assert_all_whole(store: &Store) -> Vec<String> {
    let mut keys = Vec::new();
    for o in store.list("").unwrap() {
        assert!(
            !o.key.contains(".tmp") && !o.key.contains('#'),
            "temporary object {}",
            o.key
        );
        if o.key.ends_with(".npz") {
            let bytes = store.get(&o.key).unwrap();
            read_npz_bytes(&bytes, &o.key).unwrap_or_else(|e| panic!("not whole: {e}"));
        }
        if o.key.ends_with(".bin.gz") {
            let bytes = store.get(&o.key).unwrap();
            engine::nn::ModelFile::from_file_contents(&bytes, Path::new(&o.key))
                .unwrap_or_else(|e| panic!("not whole: {e}"));
        }
        keys.push(o.key);
    }
    keys
}

fn rows_under(store: &Store, prefix: &str) -> usize {
    store
        .list(prefix)
        .unwrap()
        .iter()
        .filter(|o| o.key.ends_with(".npz"))
        .map(|o| {
            read_npz_bytes(&store.get(&o.key).unwrap(), &o.key)
                .unwrap()
                .num_rows
        })
        .sum()
}

fn games_under(store: &Store, prefix: &str) -> usize {
    store
        .list(prefix)
        .unwrap()
        .iter()
        .filter(|o| o.key.ends_with(".sgfs"))
        .map(|o| {
            String::from_utf8_lossy(&store.get(&o.key).unwrap())
                .lines()
                .filter(|l| l.starts_with("(;"))
                .count()
        })
        .sum()
}

/// `engine selfplay` following `root/models`, writing `root/selfplay`.
fn selfplay_args(root: &str, overrides: &str) -> Vec<String> {
    [
        "selfplay",
        "-config",
        &selfplay_config(),
        "-override-config",
        overrides,
        "-models-dir",
        &format!("{root}/models"),
        "-output-dir",
        &format!("{root}/selfplay"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `engine shuffle` of all of `root/selfplay` into `root/shuffleddata/s1`.
fn shuffle_args(root: &str, scratch: &Path) -> Vec<String> {
    [
        "shuffle",
        &format!("{root}/selfplay"),
        "-out-dir",
        &format!("{root}/shuffleddata/s1/train"),
        "-out-tmp-dir",
        &scratch.display().to_string(),
        "-min-rows",
        "20",
        "-keep-target-rows",
        "100000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `engine train` of b2c16 on `root`'s newest window (9x9 rows), exporting
/// each epoch into `root/<exports>`.
fn train_args(
    root: &str,
    traindir: &Path,
    samples: u32,
    epochs: u32,
    exports: &str,
) -> Vec<String> {
    [
        "train",
        "-traindir",
        &traindir.display().to_string(),
        "-latestdatadir",
        &format!("{root}/shuffleddata"),
        "-model-kind",
        "b2c16",
        "-pos-len",
        "9",
        "-batch-size",
        "16",
        "-samples-per-epoch",
        &samples.to_string(),
        "-max-epochs-this-instance",
        &epochs.to_string(),
        "-no-lr-warmup",
        "-exportdir",
        &format!("{root}/{exports}"),
        "-exportprefix",
        "b2c16",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Self-play -> shuffle -> train -> export -> gatekeeper with every run
/// folder under `root` (an `s3://` or `file://` URL), then checks what the
/// store holds.
fn pipeline(root: &str, server: Option<&S3Server>, local: &Path) {
    random_net(root, "b2c16-random", 1, server);
    let out = run_ok(
        engine(server)
            .args(selfplay_args(root, TINY_SELFPLAY))
            .args(["-max-games-total", "6"]),
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("engine selfplay: 6 games"), "{log}");
    let shuffled = run_ok(
        engine(server)
            .args(shuffle_args(root, &local.join("shuffle-scratch")))
            .args(["-approx-rows-per-out-file", "100"]),
    );
    let shuffle_log = String::from_utf8_lossy(&shuffled.stdout).into_owned();
    run_ok(engine(server).args(train_args(
        root,
        &local.join("train"),
        128,
        1,
        "modelstobetested",
    )));
    run_ok(engine(server).args([
        "gatekeeper",
        "-config",
        &repo().join("configs/gatekeeper.toml").display().to_string(),
        "-override-config",
        "numGamesPerGating=2,maxVisits=4,numGameThreads=2,maxMovesPerGame=40",
        "-test-models-dir",
        &format!("{root}/modelstobetested"),
        "-accepted-models-dir",
        &format!("{root}/models"),
        "-rejected-models-dir",
        &format!("{root}/rejectedmodels"),
        "-sgf-output-dir",
        &format!("{root}/gatekeeper"),
        "-quit-if-no-nets-to-test",
    ]));

    let store = Store::open_str(root).unwrap();
    let keys = assert_all_whole(&store);
    // Self-play: 6 games of the random net, rows and config in its folder.
    assert_eq!(games_under(&store, "selfplay/b2c16-random/sgfs"), 6);
    let rows = rows_under(&store, "selfplay/b2c16-random/tdata");
    assert!(rows > 20, "{rows} rows");
    assert!(
        keys.iter()
            .any(|k| k.starts_with("selfplay/b2c16-random/selfplay-") && k.ends_with(".cfg")),
        "{keys:?}"
    );
    // The shuffle saw every row and wrote a whole window.
    assert!(
        shuffle_log.contains(&format!("Total rows found: {rows} ")),
        "{shuffle_log}"
    );
    assert!(store.exists("shuffleddata/s1/train.json").unwrap());
    assert!(rows_under(&store, "shuffleddata/s1/train") > 0);
    // The trained net was gated: out of modelstobetested, in models or
    // rejectedmodels, with one decision in the log.
    assert!(ModelsDir::new(store.child("modelstobetested").unwrap())
        .list()
        .unwrap()
        .is_empty());
    let names = |dir: &str| -> Vec<String> {
        ModelsDir::new(store.child(dir).unwrap())
            .list()
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect()
    };
    let (accepted, rejected) = (names("models"), names("rejectedmodels"));
    assert_eq!(
        accepted.len() + rejected.len(),
        2,
        "{accepted:?} {rejected:?}"
    );
    assert!(accepted.contains(&"b2c16-random".to_string()));
    let trained = accepted
        .iter()
        .chain(&rejected)
        .find(|n| n.starts_with("b2c16-s128-d"))
        .unwrap_or_else(|| panic!("{accepted:?} {rejected:?}"));
    let gate_log =
        String::from_utf8(store.get("gatekeeper/gatekeeper_log.tsv").unwrap().to_vec()).unwrap();
    assert_eq!(gate_log.lines().count(), 2, "{gate_log}");
    assert!(gate_log.contains(trained.as_str()), "{gate_log}");
    assert!(store
        .exists(&format!("gatekeeper/{trained}/match_summary.json"))
        .unwrap());
}

#[test]
fn s3_run_selfplay_shuffle_train_export_gate() {
    let server = s3();
    let local = scratch("s3-pipeline");
    pipeline(&server.unique_url("pipeline"), Some(server), &local);
    let _ = std::fs::remove_dir_all(&local);
}

#[test]
fn file_url_run_uses_the_same_code() {
    let local = scratch("file-pipeline");
    let root = format!("file://{}", local.join("run").display());
    pipeline(&root, None, &local);
    // Nothing but whole files on disk either (no temporary names).
    let mut stack = vec![local.join("run")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.contains('#') && !name.ends_with(".tmp"), "{name}");
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&local);
}

/// Starts `cmd` with stderr piped and returns once `want` lines of it
/// matching `pred` were seen (the lines so far are returned too).
fn wait_for_lines(
    child: &mut std::process::Child,
    pred: impl Fn(&str) -> bool,
    want: usize,
    timeout: Duration,
) -> Vec<String> {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut seen = Vec::new();
    let mut hits = 0;
    while hits < want {
        let left = timeout.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => {
                hits += usize::from(pred(&line));
                seen.push(line);
            }
            Err(_) => panic!(
                "timed out waiting for {want} lines; got:\n{}",
                seen.join("\n")
            ),
        }
    }
    // Keep draining in the background so the child never blocks on stderr.
    std::thread::spawn(move || for _ in rx {});
    seen
}

#[test]
fn kill_9_of_selfplay_and_train_leaves_whole_objects_on_s3() {
    let server = s3();
    let root = server.unique_url("kill");
    let local = scratch("s3-kill");
    random_net(&root, "b2c16-random", 2, Some(server));
    let store = Store::open_str(&root).unwrap();
    // Self-play killed at spread-out moments while it writes small files.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ u64::from(std::process::id());
    for round in 0..3 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut child = engine(Some(server))
            .args(selfplay_args(
                &root,
                &format!("{TINY_SELFPLAY},maxRowsPerTrainFile=10"),
            ))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_lines(
            &mut child,
            |l| l.contains(" games, "),
            2,
            Duration::from_secs(120),
        );
        std::thread::sleep(Duration::from_millis(x % 700));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert_all_whole(&store);
        assert!(
            rows_under(&store, "selfplay") > 0,
            "round {round}: nothing written"
        );
    }
    // Training killed while it checkpoints and exports each epoch, then
    // resumed: the exported nets are whole, the checkpoint goes on.
    run_ok(engine(Some(server)).args(shuffle_args(&root, &local.join("scratch"))));
    let kill_train_args = |epochs: u32| {
        let mut a = train_args(&root, &local.join("train"), 64, epochs, "models");
        a.extend(["-checkpoint-every-samples".to_string(), "32".to_string()]);
        a
    };
    let mut child = engine(Some(server))
        .args(kill_train_args(50))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(
        &mut child,
        |l| l.contains("train: exported"),
        2,
        Duration::from_secs(120),
    );
    std::thread::sleep(Duration::from_millis(x % 300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_all_whole(&store);
    let before = ModelsDir::new(store.child("models").unwrap())
        .list()
        .unwrap()
        .len();
    assert!(before >= 3, "the random net and at least two exports");
    let out = run_ok(engine(Some(server)).args(kill_train_args(1)));
    assert!(String::from_utf8_lossy(&out.stderr).contains("train: resumed from"));
    assert_all_whole(&store);
    assert_eq!(
        ModelsDir::new(store.child("models").unwrap())
            .list()
            .unwrap()
            .len(),
        before + 1
    );
    let _ = std::fs::remove_dir_all(&local);
}

#[test]
fn wrong_secret_and_missing_bucket_fail_clearly_and_write_nothing() {
    let server = s3();
    let root = server.unique_url("denied");
    let local = scratch("denied");
    // A net on disk, so that only the output is on S3.
    run_ok(engine(None).args([
        "export",
        "-random-init",
        "b2c16",
        "-export-dir",
        &local.display().to_string(),
        "-model-name",
        "net",
    ]));
    let net = local.join("net.bin.gz").display().to_string();
    let selfplay_to = |out: &str, env: Vec<(String, String)>| {
        let mut c = engine(Some(server));
        c.envs(env).args([
            "selfplay",
            "-config",
            &selfplay_config(),
            "-override-config",
            TINY_SELFPLAY,
            "-model",
            &net,
            "-output-dir",
            out,
            "-max-games-total",
            "2",
        ]);
        let start = Instant::now();
        let o = c.output().unwrap();
        (o, start.elapsed())
    };
    let (out, took) = selfplay_to(&format!("{root}/selfplay"), server.env_with_wrong_secret());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("access denied"), "{err}");
    assert!(err.contains(&format!("{root}/selfplay/net")), "{err}");
    assert!(
        took < Duration::from_secs(60),
        "a permanent error is not retried: {took:?}"
    );
    let store = Store::open_str(&root).unwrap();
    assert!(store.list("").unwrap().is_empty(), "nothing written");

    // Reading with a wrong secret: the trainer and the shuffle say so too.
    let mut c = engine(Some(server));
    let out = c
        .envs(server.env_with_wrong_secret())
        .args([
            "shuffle",
            &format!("{root}/selfplay"),
            "-out-dir",
            &format!("{root}/sh/train"),
            "-keep-target-rows",
            "all",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("access denied"), "{err}");

    // A bucket that does not exist (the server does not create it).
    let (out, _) = selfplay_to("s3://engine-no-such-bucket/run/selfplay", server.env());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the bucket does not exist"), "{err}");
    assert!(
        err.contains("s3://engine-no-such-bucket/run/selfplay"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&local);
}

#[test]
fn a_stopped_server_is_reported_after_the_retries() {
    let mut private = S3Server::start_private();
    let root = private.unique_url("gone");
    let local = scratch("gone");
    let mut env = private.env();
    env.retain(|(k, _)| k != "ENGINE_STORE_RETRY_SECONDS");
    env.push(("ENGINE_STORE_RETRY_SECONDS".into(), "3".into()));
    // A net on the server, read by -model, while it is up.
    let mut c = engine(Some(&private.server));
    run_ok(c.envs(env.clone()).args([
        "export",
        "-random-init",
        "b2c16",
        "-export-dir",
        &format!("{root}/models"),
        "-model-name",
        "net",
    ]));
    private.stop();
    for args in [
        vec![
            "gtp".to_string(),
            "-model".into(),
            format!("{root}/models/net.bin.gz"),
        ],
        vec![
            "selfplay".into(),
            "-config".into(),
            selfplay_config(),
            "-override-config".into(),
            TINY_SELFPLAY.into(),
            "-models-dir".into(),
            format!("{root}/models"),
            "-output-dir".into(),
            local.join("out").display().to_string(),
        ],
    ] {
        let mut c = engine(Some(&private.server));
        let start = Instant::now();
        let out = c.envs(env.clone()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.contains("unreachable"), "{args:?}: {err}");
        assert!(err.contains(&root), "{args:?}: {err}");
        assert!(start.elapsed() < Duration::from_secs(90), "{args:?}");
    }
    assert!(!local.join("out").exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&local);
}

/// SIGTERM: every finished game is written and the exit code says the run
/// was cut short. A newer net in `-models-dir` takes over and the old one
/// is released once its games are over.
#[test]
fn selfplay_follows_new_nets_releases_old_ones_and_exits_3_on_sigterm() {
    let local = scratch("follow");
    let root = local.join("run").display().to_string();
    random_net(&root, "b2c16-random", 3, None);
    let mut child = engine(None)
        .args(selfplay_args(&root, TINY_SELFPLAY))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut log = Vec::new();
    let wait_for = |what: &str, log: &mut Vec<String>| {
        let start = Instant::now();
        while !log.iter().any(|l: &String| l.contains(what)) {
            match rx.recv_timeout(Duration::from_secs(120).saturating_sub(start.elapsed())) {
                Ok(l) => log.push(l),
                Err(_) => panic!("no line with {what:?}:\n{}", log.join("\n")),
            }
        }
    };
    wait_for("b2c16-random: 1 games", &mut log);
    // A trained-looking name: newer than the random net.
    random_net(&root, "b2c16-s64-d100", 4, None);
    wait_for("switching to model b2c16-s64-d100", &mut log);
    wait_for("released model b2c16-random", &mut log);
    wait_for("b2c16-s64-d100: ", &mut log);
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    while let Ok(l) = rx.recv_timeout(Duration::from_secs(5)) {
        log.push(l);
    }
    let text = log.join("\n");
    assert_eq!(
        status.code(),
        Some(i32::from(engine::exit::Exit::Stopped.code())),
        "{text}"
    );
    assert!(text.contains("stopped by a signal"), "{text}");
    // Every game counted as finished was written, in its net's folder.
    let store = Store::open(&StoreUrl::parse(&root).unwrap()).unwrap();
    let written = games_under(&store, "selfplay");
    let summary = log
        .iter()
        .find_map(|l| {
            l.strip_prefix("engine selfplay: ")?
                .split(" games, ")
                .next()?
                .parse::<usize>()
                .ok()
        })
        .unwrap_or_else(|| panic!("no summary line:\n{text}"));
    assert_eq!(written, summary, "{text}");
    assert!(games_under(&store, "selfplay/b2c16-random") > 0);
    assert!(games_under(&store, "selfplay/b2c16-s64-d100") > 0);
    assert_all_whole(&store);
    let _ = std::fs::remove_dir_all(&local);
}
