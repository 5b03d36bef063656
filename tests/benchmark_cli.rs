//! `engine benchmark` end to end with the g170 net: tiny searches on 9x9
//! with one and two threads, and KataGo's output lines parsed back.

use std::process::Command;

fn model() -> std::path::PathBuf {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz")
}

/// The numbers of one `numSearchThreads = ...` result line.
#[derive(Debug)]
struct Line {
    threads: usize,
    searched: usize,
    total: usize,
    visits_per_sec: f64,
    evals_per_sec: f64,
    batches_per_sec: f64,
    avg_batch: f64,
    secs: f64,
    elo: String,
}

fn parse_line(line: &str) -> Option<Line> {
    let rest = line.strip_prefix("numSearchThreads = ")?;
    let (threads, rest) = rest.split_once(": ")?;
    let (counts, rest) = rest.split_once(" positions, visits/s = ")?;
    let (searched, total) = counts.split_once(" / ")?;
    let (vps, rest) = rest.split_once(" nnEvals/s = ")?;
    let (eps, rest) = rest.split_once(" nnBatches/s = ")?;
    let (bps, rest) = rest.split_once(" avgBatchSize = ")?;
    let (avg, rest) = rest.split_once(" (")?;
    let (secs, rest) = rest.split_once(" secs) (EloDiff ")?;
    let elo = rest.strip_suffix(')')?;
    // KataGo's fixed widths and decimals.
    for x in [vps, eps, bps, avg] {
        if x.split_once('.').map(|(_, d)| d.len()) != Some(2) {
            return None;
        }
    }
    if threads.len() != 2 || secs.split_once('.').map(|(_, d)| d.len()) != Some(1) {
        return None;
    }
    Some(Line {
        threads: threads.trim().parse().ok()?,
        searched: searched.parse().ok()?,
        total: total.parse().ok()?,
        visits_per_sec: vps.parse().ok()?,
        evals_per_sec: eps.parse().ok()?,
        batches_per_sec: bps.parse().ok()?,
        avg_batch: avg.parse().ok()?,
        secs: secs.parse().ok()?,
        elo: elo.to_string(),
    })
}

#[test]
fn benchmark_prints_katago_lines_for_each_thread_count() {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["benchmark", "-model"])
        .arg(model())
        .args(["-v", "10", "-t", "1,2", "-boardsize", "9"])
        .output()
        .expect("running engine benchmark");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("Testing using 10 visits."), "{stdout}");
    assert!(stdout.contains("(board size 9x9)"), "{stdout}");
    let lines: Vec<Line> = stdout
        .lines()
        .filter(|l| l.starts_with("numSearchThreads = ") && l.contains("visits/s"))
        .map(|l| parse_line(l).unwrap_or_else(|| panic!("bad line: {l:?}")))
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for (l, threads) in lines.iter().zip([1, 2]) {
        assert_eq!(l.threads, threads);
        assert_eq!((l.searched, l.total), (10, 10));
        assert!(l.secs >= 0.0 && l.visits_per_sec > 0.0, "{l:?}");
        // Each visit evaluates at most one position (none for a finished
        // game or a collision answered by the cache).
        assert!(
            l.evals_per_sec > 0.0 && l.evals_per_sec <= l.visits_per_sec + 0.01,
            "{l:?}"
        );
        assert!(
            l.batches_per_sec > 0.0 && l.batches_per_sec <= l.evals_per_sec + 1e-6,
            "{l:?}"
        );
        assert!(
            l.avg_batch >= 1.0 && l.avg_batch <= threads as f64 + 1e-9,
            "{l:?}"
        );
    }
    assert_eq!(
        lines[0].avg_batch, 1.0,
        "one thread batches one row at a time"
    );
    assert_eq!(lines[0].elo, "baseline");
    assert!(lines[1].elo.starts_with(['+', '-']), "{:?}", lines[1].elo);
    // The recommendation block follows.
    assert!(
        stdout.contains("numSearchThreads =  1: (baseline)"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("(recommended)").count(), 1, "{stdout}");
}

/// `-nn` on the CPU: batches 1, 8 and 32 by default, the CPU and its SIMD
/// path named, and (with AVX2/FMA) each batch's share of the measured FMA
/// peak, in the text and in the JSON line, equal to the achieved rate over
/// the peak.
#[test]
fn nn_benchmark_on_the_cpu_reports_the_fma_peak() {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["benchmark", "-nn", "-model"])
        .arg(model())
        .args(["-seconds", "0.05", "-boardsize", "9"])
        .output()
        .expect("running engine benchmark -nn");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let path = engine::nn::cpu_info::SimdPath::detect();
    assert!(
        stdout.contains(&format!("CPU: {}", engine::nn::cpu_info::summary())),
        "{stdout}"
    );
    let json: serde_json::Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no JSON line: {stdout}"));
    let bench = &json["nn_benchmark"];
    let results = bench["results"].as_array().expect("results");
    let batches: Vec<u64> = results.iter().filter_map(|r| r["batch"].as_u64()).collect();
    assert_eq!(batches, [1, 8, 32]);
    let peak = bench["cpu_fma_peak_gflops"].as_f64();
    assert_eq!(peak.is_some(), path.has_avx2_fma(), "{stdout}");
    if let Some(peak) = peak {
        assert!(peak > 0.0 && peak < 10_000.0, "{peak}");
        for r in results {
            let tflops = r["tflops"].as_f64().expect("tflops");
            let ratio = r["cpu_peak_ratio"].as_f64().expect("cpu_peak_ratio");
            assert!((ratio - tflops * 1e3 / peak).abs() < 1e-9, "{r}");
        }
        assert_eq!(stdout.matches("% of the FMA peak").count(), 3, "{stdout}");
    }
}

#[test]
fn benchmark_rejects_bad_arguments() {
    for args in [
        &["-v", "1"][..],
        &["-t", "0"][..],
        &["-boardsize", "25"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_engine"))
            .args(["benchmark", "-model"])
            .arg(model())
            .args(args)
            .output()
            .expect("running engine benchmark");
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
    }
}
