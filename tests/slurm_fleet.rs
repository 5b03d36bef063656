//! The self-play fleet on a real Slurm: `scripts/slurm/one_node_cluster.sh`
//! starts a one-node cluster on this machine (installing Debian's slurm-wlm
//! and munge when they are missing; root), `scripts/slurm/submit.sh`
//! submits two self-play workers (an array job) and the learner on a
//! folder store and then on a SeaweedFS `s3://` store. The test waits for
//! a published generation, cancels one worker for good (the run must go
//! on), waits for the next generation, cancels everything and checks the
//! ledger, the nets and the data. It fails, never skips, when the cluster
//! cannot be started.

// libtorch (and the trainer) are in the default build only.
#![cfg(feature = "torch")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::learn_config::tiny_config;
use common::s3_server::S3Server;
use engine::learn::ledger::Ledger;
use engine::store::layout::Run;
use engine::store::{Store, StoreUrl};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(out: &Output) -> String {
    common::output_text(out)
}

fn sh(cmd: &mut Command) -> Output {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}",
        out.status,
        text(&out)
    );
    out
}

/// Starts the one-node cluster; stops it when dropped.
struct Cluster;

impl Cluster {
    fn start() -> Cluster {
        let out = Command::new(repo().join("scripts/slurm/one_node_cluster.sh"))
            .arg("start")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "could not start the one-node Slurm cluster (it needs root, and apt-get for \
             slurm-wlm and munge when they are missing):\n{}",
            text(&out)
        );
        Cluster
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(repo().join("scripts/slurm/one_node_cluster.sh"))
            .arg("stop")
            .status();
    }
}

fn squeue() -> String {
    let out = Command::new("squeue")
        .args(["-o", "%.12i %.16j %.2t %.10M %R"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn logs(dir: &Path) -> String {
    let mut all = String::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let body = std::fs::read_to_string(e.path()).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(15).collect();
            all.push_str(&format!("== {}\n", e.path().display()));
            for l in tail.into_iter().rev() {
                all.push_str(l);
                all.push('\n');
            }
        }
    }
    all
}

/// Waits until the run's ledger holds `n` generations.
fn wait_for_generations(url: &StoreUrl, n: usize, logs_dir: &Path, limit: Duration) -> Ledger {
    let run = Run::open(url).unwrap();
    let files = run.learn().unwrap();
    let end = Instant::now() + limit;
    loop {
        let ledger = Ledger::read(&files).unwrap();
        if ledger.records.len() >= n {
            return ledger;
        }
        if Instant::now() > end {
            let _ = Command::new("scancel").arg("--partition=debug").status();
            panic!(
                "{n} generations not reached in {limit:?}\n{}\n{}",
                squeue(),
                logs(logs_dir)
            );
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn fleet(store_arg: &str, server: Option<&S3Server>, tag: &str) {
    let dir = std::env::temp_dir().join(format!("engine-slurm-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let logs_dir = dir.join("logs");
    let config = tiny_config(&dir, "leaseSeconds = 30\npollSeconds = 1.0");
    let mut submit = Command::new(repo().join("scripts/slurm/submit.sh"));
    submit
        .arg(store_arg)
        .arg(&config)
        .current_dir(&dir)
        .env("ENGINE", env!("CARGO_BIN_EXE_engine"))
        .env("ENGINE_WORKERS", "2")
        .env("ENGINE_GPUS_PER_WORKER", "0")
        .env("ENGINE_LEARNER_CPUS", "1")
        .env("ENGINE_LOG_DIR", &logs_dir)
        .env("OMP_NUM_THREADS", "1")
        .env("ENGINE_SELFPLAY_OVERRIDES", "numGameThreads=4");
    if let Some(s) = server {
        s.configure(&mut submit);
    }
    let out = sh(&mut submit);
    let ids = String::from_utf8_lossy(&out.stdout).to_string();
    let mut ids = ids.split_whitespace();
    let (workers, learner) = (
        ids.next().expect("workers job").to_string(),
        ids.next().expect("learner job").to_string(),
    );
    eprintln!(
        "[{tag}] submitted: workers {workers}, learner {learner}\n{}",
        squeue()
    );
    let url = StoreUrl::parse(store_arg).unwrap();
    let first = wait_for_generations(&url, 1, &logs_dir, Duration::from_secs(300));
    eprintln!(
        "[{tag}] generation 1: {}\n{}",
        first.records[0].candidate,
        squeue()
    );
    // A worker that never comes back: the run goes on with the other.
    sh(Command::new("scancel").arg(format!("{workers}_1")));
    let before = first.records.len();
    let mut ledger = wait_for_generations(&url, before + 1, &logs_dir, Duration::from_secs(300));
    // Worker counts in a record are cumulative, and task 0 keeps playing:
    // a later generation names both tasks even if task 0's first games
    // came after the generations so far (its job may start late).
    let names_both = |l: &Ledger| {
        l.records.last().is_some_and(|r| {
            (0..2).all(|t| r.workers.contains_key(&format!("slurm-{workers}-{t}")))
        })
    };
    while !names_both(&ledger) {
        let n = ledger.records.len() + 1;
        ledger = wait_for_generations(&url, n, &logs_dir, Duration::from_secs(300));
    }
    eprintln!("[{tag}] {} generations\n{}", ledger.records.len(), squeue());
    sh(Command::new("scancel").args([&workers, &learner]));
    let end = Instant::now() + Duration::from_secs(90);
    while squeue()
        .lines()
        .skip(1)
        .any(|l| l.contains(&workers) || l.contains(&learner))
    {
        assert!(
            Instant::now() < end,
            "jobs still there after scancel:\n{}",
            squeue()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!("[{tag}] logs after scancel:\n{}", logs(&logs_dir));

    // The ledger: consecutive generations, each net where its record says.
    let run = Run::open(&url).unwrap();
    let ledger = Ledger::read(&run.learn().unwrap()).unwrap();
    assert!(ledger.records.len() >= 2);
    for (i, r) in ledger.records.iter().enumerate() {
        assert_eq!(r.generation, i as u64 + 1);
        let placed = if r.gate.accepted {
            run.models()
        } else {
            run.rejected()
        };
        assert!(
            placed.unwrap().find(&r.candidate).unwrap().is_some(),
            "{}",
            r.candidate
        );
    }
    // The data: files of both array tasks, named after them; every object whole.
    let store = Store::open(&url).unwrap();
    let keys: Vec<String> = store.list("").unwrap().into_iter().map(|o| o.key).collect();
    for task in 0..2 {
        let name = format!("/slurm-{workers}-{task}-");
        assert!(
            keys.iter()
                .any(|k| k.contains(&name) && k.ends_with(".npz")),
            "no rows of task {task}: {keys:?}"
        );
    }
    assert!(
        keys.iter()
            .all(|k| !k.contains('#') && !k.ends_with(".tmp")),
        "temporary objects: {keys:?}"
    );
    let learner_log = std::fs::read_to_string(logs_dir.join(format!("engine-learn-{learner}.out")))
        .unwrap_or_default();
    assert!(learner_log.contains("learn: gen 2:"), "{learner_log}");
    // status names every net of the ledger and both workers.
    let mut status = Command::new(env!("CARGO_BIN_EXE_engine"));
    status.args(["learn", "-store", store_arg, "status"]);
    if let Some(s) = server {
        s.configure(&mut status);
    }
    let status = String::from_utf8_lossy(&sh(&mut status).stdout).to_string();
    eprintln!("[{tag}] status:\n{status}");
    for r in &ledger.records {
        assert!(status.contains(&r.candidate), "{status}");
    }
    for task in 0..2 {
        assert!(
            status.contains(&format!("slurm-{workers}-{task}")),
            "{status}"
        );
    }
}

#[test]
fn a_fleet_on_slurm_publishes_generations_on_a_folder_and_on_s3() {
    let _cluster = Cluster::start();
    let dir = std::env::temp_dir().join(format!("engine-slurm-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    fleet(&format!("file://{}", dir.display()), None, "file");
    let server = S3Server::shared();
    for (k, v) in server.env() {
        std::env::set_var(k, v);
    }
    fleet(&server.unique_url("slurm"), Some(server), "s3");
}
