//! `scripts/gpu_check.sh --dry-run` with the freshly built binary: every
//! stage of the GPU check runs on the CPU with tiny sizes, and the report
//! must be complete (every stage has rows, every number is finite, nothing
//! failed), the binary must link libtorch_cuda and fit in 64 MiB stripped,
//! so a GPU session never finds the script or the binary broken.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const STAGES: [&str; 8] = [
    "link", "parity", "search", "nn", "analysis", "selfplay", "train", "katago",
];

#[test]
fn gpu_check_dry_run_writes_a_complete_report() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("gpu-check-dry-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let start = std::time::Instant::now();
    let run = Command::new(root.join("scripts/gpu_check.sh"))
        .arg("--dry-run")
        .arg("--engine")
        .arg(env!("CARGO_BIN_EXE_engine"))
        .env("OUT", &out)
        .env("ENGINE_SHARED_DIR", &shared)
        .env_remove("KATAGO_CUDA")
        .current_dir(root)
        .output()
        .expect("run scripts/gpu_check.sh");
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "gpu_check.sh --dry-run failed ({:?}) after {:?}:\n{stdout}\n{stderr}",
        run.status,
        start.elapsed()
    );
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("gpu_report.json")).expect("gpu_report.json"),
    )
    .expect("report is JSON");
    assert_eq!(report["complete"], Value::Bool(true), "{report:#}");
    assert!(report["mode"].as_str().unwrap().starts_with("dry-run"));
    let stages = report["stages"].as_array().unwrap();
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(names, STAGES);
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
    // Parity ran the three precisions of g170 against KataGo's outputs.
    for p in ["fp32", "fp16", "bf16"] {
        let r = row("parity", &format!("{p} vs KataGo"));
        assert_eq!(r["status"], "pass", "{r:#}");
        assert!(r["values"]["positions"].as_u64().unwrap() > 0);
    }
    // Positive throughput in every measuring stage.
    for (stage, item, key) in [
        ("search", "2 threads", "visits_per_s"),
        ("nn", "batch 4", "evals_per_s"),
        ("analysis", "in flight", "positions_per_s"),
        ("selfplay", "game threads", "rows_per_hour"),
        ("train", "fp16", "samples_per_s"),
    ] {
        let r = row(stage, item);
        assert!(r["values"][key].as_f64().unwrap() > 0.0, "{r:#}");
    }
    let md = std::fs::read_to_string(out.join("gpu_report.md")).expect("gpu_report.md");
    assert!(md.contains("report complete: **yes**"), "{md}");
    for s in STAGES {
        assert!(md.contains(&format!("\n## {s}\n")), "{s} missing in:\n{md}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// `--help` documents the GPU recipe and KataGo's CUDA build.
#[test]
fn gpu_check_help_documents_the_recipes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("scripts/gpu_check.sh"))
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
    ] {
        assert!(text.contains(needle), "--help lacks {needle}");
    }
}
