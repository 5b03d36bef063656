//! The GPU check as a device call makes it, on the CPU: `scripts/gpu_pack.sh`
//! packs the freshly built binary with the nets and reference files, then
//! `scripts/gpu_check.sh --dry-run --pack DIR` runs the budget profile with
//! tiny sizes from that folder alone (no `ENGINE_SHARED_DIR`). The report
//! must be complete (every stage has rows, every number is finite, nothing
//! failed), the binary must link libtorch_cuda and fit in 64 MiB stripped,
//! a run killed after its second stage must leave a report of those two,
//! and `--plan` must fit the device budget, so a GPU session never finds
//! the script, the pack or the binary broken.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The budget profile's stages, in order.
const BUDGET: [&str; 7] = [
    "link", "parity", "search", "nn", "selfplay", "train", "analysis",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Packs into `target/<name>` (inside the repository and git-ignored, as a
/// device call's `carry` needs) and returns the folder and the script's
/// output.
fn pack(name: &str) -> (PathBuf, Output) {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let dir = root().join("target").join(name);
    let out = Command::new(root().join("scripts/gpu_pack.sh"))
        .arg("--dir")
        .arg(&dir)
        .arg("--engine")
        .arg(env!("CARGO_BIN_EXE_engine"))
        .env("ENGINE_SHARED_DIR", &shared)
        .current_dir(root())
        .output()
        .expect("run scripts/gpu_pack.sh");
    assert!(
        out.status.success(),
        "gpu_pack.sh failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, out)
}

/// `gpu_check.sh --dry-run --pack DIR`, with no shared folder in reach.
fn dry_run(pack: &Path, out: &Path) -> Command {
    let mut cmd = Command::new(pack.join("scripts/gpu_check.sh"));
    cmd.arg("--dry-run")
        .arg("--pack")
        .arg(pack)
        .env("OUT", out)
        .env_remove("ENGINE_SHARED_DIR")
        .env_remove("ENGINE")
        .env_remove("KATAGO_CUDA")
        .current_dir(pack);
    cmd
}

fn read_report(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("gpu_report.json")).expect("gpu_report.json");
    serde_json::from_str(&text).expect("the report is whole JSON")
}

fn stage_names(report: &Value) -> Vec<String> {
    report["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .map(|s| s["stage"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn gpu_check_dry_run_from_a_pack_writes_a_complete_report() {
    let (pack, _) = pack("gpu-pack-dry-run");
    let out = std::env::temp_dir().join(format!("gpu-check-dry-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let start = Instant::now();
    let run = dry_run(&pack, &out).output().expect("run gpu_check.sh");
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "gpu_check.sh --dry-run failed ({:?}) after {:?}:\n{stdout}\n{stderr}",
        run.status,
        start.elapsed()
    );
    let report = read_report(&out);
    assert_eq!(report["complete"], Value::Bool(true), "{report:#}");
    assert_eq!(report["profile"], "budget");
    assert!(report["mode"].as_str().unwrap().starts_with("dry-run"));
    // Read from the pack, not from a shared folder beside the checkout.
    assert_eq!(
        report["shared"].as_str().unwrap(),
        pack.join("shared").to_str().unwrap()
    );
    assert_eq!(stage_names(&report), BUDGET);
    assert_eq!(report["not_reached"], Value::Array(vec![]));
    let stages = report["stages"].as_array().unwrap();
    for s in stages {
        let rows = s["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "stage {} has no rows", s["stage"]);
        for r in rows {
            assert_ne!(r["status"], "fail", "{r:#}");
            for (k, v) in r["values"].as_object().unwrap() {
                if let Some(x) = v.as_f64() {
                    assert!(x.is_finite(), "{}: {k} = {x}", r["item"]);
                }
            }
        }
    }
    let row = |stage: &str, item: &str| -> Value {
        let s = stages.iter().find(|s| s["stage"] == stage).unwrap();
        s["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["item"].as_str().unwrap().contains(item))
            .unwrap_or_else(|| panic!("no row '{item}' in stage {stage}"))
            .clone()
    };
    assert_eq!(row("link", "links libtorch_cuda")["status"], "pass");
    let size = row("link", "stripped size");
    assert_eq!(size["status"], "pass");
    assert!(size["values"]["stripped_MiB"].as_f64().unwrap() <= 64.0);
    // Parity ran the three precisions of g170 against KataGo's outputs, and
    // of the transformer net against the CPU.
    for p in ["fp32", "fp16", "bf16"] {
        let r = row("parity", &format!("{p} vs KataGo"));
        assert_eq!(r["status"], "pass", "{r:#}");
        assert!(r["values"]["positions"].as_u64().unwrap() > 0);
        let t = row(
            "parity",
            &format!("b7c96h6kv3qk32v16tflrs-fson-bnh: {p} vs CPU"),
        );
        assert_eq!(t["status"], "pass", "{t:#}");
    }
    // Positive throughput in every measuring stage.
    for (stage, item, key) in [
        ("search", "2 threads", "visits_per_s"),
        ("nn", "fp16, batch 4", "evals_per_s"),
        ("nn", "bf16, batch 4", "evals_per_s"),
        ("selfplay", "game threads", "nn_rows_per_s"),
        ("train", "bf16", "samples_per_s"),
        ("analysis", "in flight", "positions_per_s"),
    ] {
        let r = row(stage, item);
        assert!(r["values"][key].as_f64().unwrap() > 0.0, "{r:#}");
    }
    let md = std::fs::read_to_string(out.join("gpu_report.md")).expect("gpu_report.md");
    assert!(md.contains("report complete: **yes**"), "{md}");
    for s in BUDGET {
        assert!(md.contains(&format!("\n## {s}\n")), "{s} missing in:\n{md}");
    }
    // Only the report is in OUT: a device call brings back at most 8 files.
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["gpu_report.json", "gpu_report.md"]);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&pack);
}

/// The full profile (the longer list, for a longer lease) from the checkout
/// and the shared folder, so it does not rot while the budget profile is
/// the one that runs.
#[test]
fn the_full_profile_dry_run_is_complete() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let out = std::env::temp_dir().join(format!("gpu-check-full-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(root().join("scripts/gpu_check.sh"))
        .args(["--dry-run", "--profile", "full", "--engine"])
        .arg(env!("CARGO_BIN_EXE_engine"))
        .env("OUT", &out)
        .env("ENGINE_SHARED_DIR", &shared)
        .env_remove("KATAGO_CUDA")
        .current_dir(root())
        .output()
        .expect("run gpu_check.sh --profile full");
    let report = read_report(&out);
    assert!(
        run.status.success(),
        "{report:#}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(report["complete"], Value::Bool(true), "{report:#}");
    assert_eq!(report["profile"], "full");
    assert_eq!(
        stage_names(&report),
        ["link", "parity", "search", "nn", "analysis", "selfplay", "train", "katago"]
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// A run killed (SIGKILL, the device's limit) after its second stage leaves
/// a whole report holding those two stages, the rest listed as not reached.
#[test]
fn a_killed_dry_run_keeps_its_finished_stages() {
    use std::os::unix::process::CommandExt;
    let (pack, _) = pack("gpu-pack-killed");
    let out = std::env::temp_dir().join(format!("gpu-check-killed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut cmd = dry_run(&pack, &out);
    // Its own process group, so the kill takes the engine children too.
    cmd.process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("start gpu_check.sh");
    let group = child.id() as i32;
    let deadline = Instant::now() + Duration::from_secs(400);
    // The report is there from the start (every stage not reached), then
    // rewritten whole after each stage.
    loop {
        assert!(
            Instant::now() < deadline,
            "two stages did not finish in time"
        );
        if let Ok(text) = std::fs::read_to_string(out.join("gpu_report.json")) {
            let report: Value = serde_json::from_str(&text).expect("never a torn report");
            if report["stages"].as_array().map_or(0, Vec::len) >= 2 {
                break;
            }
        }
        assert!(
            child.try_wait().expect("wait").is_none(),
            "gpu_check.sh ended before its second stage"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) on our own child's process group.
    let killed = unsafe { libc::kill(-group, libc::SIGKILL) };
    assert_eq!(killed, 0, "kill the check's process group");
    let _ = child.wait();
    let report = read_report(&out);
    let names = stage_names(&report);
    assert!(names.len() >= 2, "{report:#}");
    assert_eq!(names[..2], ["link", "parity"]);
    for s in report["stages"].as_array().unwrap().iter().take(2) {
        assert!(!s["rows"].as_array().unwrap().is_empty(), "{s:#}");
    }
    let not_reached: Vec<&str> = report["not_reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(not_reached, BUDGET[names.len()..]);
    assert_eq!(report["complete"], Value::Bool(false));
    let md = std::fs::read_to_string(out.join("gpu_report.md")).expect("gpu_report.md");
    assert!(md.contains("| analysis | not reached |"), "{md}");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&pack);
}

fn plan(args: &[&str]) -> Vec<(String, u64)> {
    let out = Command::new(root().join("scripts/gpu_check.sh"))
        .arg("--plan")
        .args(args)
        .output()
        .expect("run gpu_check.sh --plan");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let (name, secs) = l.split_once(' ').expect("STAGE SECONDS");
            (name.to_string(), secs.parse().expect("seconds"))
        })
        .collect()
}

/// `--plan`: the budget profile's caps sum to at most 450 s, in the issue's
/// order; the full profile keeps the longer list.
#[test]
fn the_budget_plan_fits_one_device_call() {
    let budget = plan(&[]);
    let (total, stages) = budget.split_last().unwrap();
    assert_eq!(total.0, "total");
    let names: Vec<&str> = stages.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, BUDGET);
    let sum: u64 = stages.iter().map(|(_, s)| s).sum();
    assert_eq!(total.1, sum);
    assert!(sum <= 450, "budget caps sum to {sum} s");
    assert_eq!(plan(&["--profile", "budget"]), budget);
    let full = plan(&["--profile", "full"]);
    assert!(full.iter().any(|(n, _)| n == "katago"));
    assert!(full.last().unwrap().1 > 450);
    let only = plan(&["--only", "link,nn"]);
    assert_eq!(only.len(), 3);
    assert_eq!(only[2], ("total".to_string(), 15 + 60));
}

/// The pack fits the device's 64 MiB with the repository, and the printed
/// call carries it and sets the torch libraries' path.
#[test]
fn the_pack_prints_the_device_call() {
    let (pack, out) = pack("gpu-pack-call");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("carry:     [\"target/gpu-pack-call\"]"),
        "{text}"
    );
    assert!(text.contains("timeout_s: 540"), "{text}");
    assert!(
        text.contains(
            "LD_LIBRARY_PATH=$(echo /opt/torch/.venv/lib/python3*/site-packages/torch/lib)"
        ),
        "{text}"
    );
    assert!(
        text.contains("target/gpu-pack-call/scripts/gpu_check.sh --pack target/gpu-pack-call"),
        "{text}"
    );
    let size: u64 = walk(&pack)
        .iter()
        .map(|p| p.metadata().unwrap().len())
        .sum();
    assert!(size <= 60 << 20, "the pack is {size} bytes");
    for f in [
        "engine.xz",
        "PACK.txt",
        "scripts/gpu_check.py",
        "configs/analysis.toml",
        "shared/models/g170-b6c96-s175395328-d26788732.bin.gz",
        "shared/models/b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz",
        "shared/vectors/nn/nn.jsonl",
    ] {
        assert!(pack.join(f).is_file(), "{f} not packed");
    }
    let _ = std::fs::remove_dir_all(&pack);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

/// `--help` documents the profiles, the pack and the GPU recipes.
#[test]
fn gpu_check_help_documents_the_recipes() {
    let out = Command::new(root().join("scripts/gpu_check.sh"))
        .arg("--help")
        .output()
        .expect("run scripts/gpu_check.sh --help");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Copying the binary to a GPU machine",
        "LD_LIBRARY_PATH",
        "libtorch_cuda",
        "-DUSE_BACKEND=CUDA",
        "--dry-run",
        "KATAGO_CUDA",
        "--profile",
        "scripts/gpu_pack.sh",
        "not reached",
    ] {
        assert!(text.contains(needle), "--help lacks {needle}");
    }
}
