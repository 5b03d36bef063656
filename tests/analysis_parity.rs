//! Raw-network parity through the analysis protocol: the real `engine
//! analysis` binary with the g170 b6c96 net is sent every query of
//! `shared/vectors/nn/nn.jsonl` (KataGo 1.17.2's 1-visit analysis with all
//! 8 symmetries averaged), and each final response's policy, ownership,
//! raw root values and 1-visit search values are compared with KataGo's
//! within the tolerances of the vectors README, section 1. The same for
//! the fixture nets of model versions 3 to 7
//! (`tests/data/katago_old_versions/`), whose rules warnings must also be
//! KataGo's.
//!
//! `tests/nn_parity.rs` makes the same comparison in-process; this one
//! also covers the query replay, the search's root evaluation
//! (`ignorePreRootHistory`, `conservativePass`, passing hacks,
//! `rootNumSymmetriesToSample`), the perspective and the JSON output.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "common/old_fixtures.rs"]
mod old_fixtures;

/// Generous: 39 one-visit queries take a few seconds on a 2-core CPU.
const DEADLINE: Duration = Duration::from_secs(300);

/// Absolute tolerances of the vectors README (section 1).
const TOL_POLICY: f64 = 1e-4;
const TOL_OWNERSHIP: f64 = 1e-3;
const TOL_WINRATE: f64 = 1e-4;
const TOL_POINTS: f64 = 1e-3;
const TOL_NO_RESULT: f64 = 1e-5;

/// Runs the engine on `input` (one query per line) and returns every
/// stdout line, parsed.
fn run_engine(model: &Path, args: &[&std::ffi::OsStr], input: String) -> Vec<Value> {
    assert!(model.exists(), "missing model {}", model.display());
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/analysis.toml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .arg("analysis")
        .arg("-model")
        .arg(model)
        .arg("-config")
        .arg(&config)
        // The vectors were made with KataGo's default perspective, in
        // fp32 (the CPU's default, auto, may pick bf16 or int8 here).
        .args([
            "-override-config",
            "reportAnalysisWinratesAs=SIDETOMOVE,nnPrecision=fp32",
        ])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start engine analysis");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        stdin.write_all(input.as_bytes()).unwrap();
        // Dropping stdin lets the engine finish the queued work and exit.
    });
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + DEADLINE;
    let mut lines = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => lines.push(
                serde_json::from_str::<Value>(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}")),
            ),
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!(
                    "engine did not finish within {DEADLINE:?}; got {} lines",
                    lines.len()
                );
            }
        }
    }
    writer.join().unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "engine exited with {status}");
    lines
}

/// Compares one final response with KataGo's; returns what differs.
/// `heads_before_v9`: the net has no short-term error and time-left heads,
/// whose answers are then constants, compared exactly.
fn compare(id: &str, ours: &Value, want: &Value, heads_before_v9: bool) -> Vec<String> {
    let mut bad = Vec::new();
    let mut check = |what: String, got: Option<f64>, want: Option<f64>, tol: f64| match (got, want)
    {
        (Some(g), Some(w)) if (g - w).abs() <= tol => {}
        (g, w) => bad.push(format!(
            "{id}: {what}: ours {g:?}, KataGo {w:?} (tolerance {tol})"
        )),
    };
    let (r, k) = (&ours["rootInfo"], &want["rootInfo"]);
    // The hashes too: KataGo's Zobrist keys, so the strings are equal.
    for key in ["currentPlayer", "visits", "thisHash", "symHash"] {
        if r[key] != k[key] {
            check(
                format!("rootInfo.{key} {} vs {}", r[key], k[key]),
                None,
                None,
                0.0,
            );
        }
    }
    check(
        "turnNumber".into(),
        ours["turnNumber"].as_f64(),
        want["turnNumber"].as_f64(),
        0.0,
    );
    // A near-zero variance (model version 3 nets have no second moment)
    // magnifies the f32 rounding of the averaged E[score^2] under the
    // square root: the stdev's tolerance grows by that (see nn_parity.rs).
    let stdev_tol = {
        let (m, sd) = (
            k["rawScoreSelfplay"].as_f64().unwrap_or(0.0),
            k["rawScoreSelfplayStdev"].as_f64().unwrap_or(0.0),
        );
        let delta = 4.0 * f64::from(f32::EPSILON) * (m * m + sd * sd);
        TOL_POINTS + delta.sqrt().min(delta / (2.0 * sd))
    };
    let head = |tol: f64| if heads_before_v9 { 0.0 } else { tol };
    let tolerances = [
        ("rawWinrate", TOL_WINRATE),
        ("rawLead", TOL_POINTS),
        ("rawScoreSelfplay", TOL_POINTS),
        ("rawScoreSelfplayStdev", stdev_tol),
        ("rawNoResultProb", TOL_NO_RESULT),
        // Constants for nets before version 9: exact.
        ("rawStWrError", head(1e-5)),
        ("rawStScoreError", head(1e-4)),
        ("rawVarTimeLeft", head(TOL_POINTS)),
        // At one visit the search's values are the raw ones.
        ("winrate", TOL_WINRATE),
        ("scoreLead", TOL_POINTS),
        ("scoreSelfplay", TOL_POINTS),
        ("scoreStdev", stdev_tol),
    ];
    for (key, tol) in tolerances {
        check(
            format!("rootInfo.{key}"),
            r[key].as_f64(),
            k[key].as_f64(),
            tol,
        );
    }

    let empty = Vec::new();
    let policy = ours["policy"].as_array().unwrap_or(&empty);
    let want_policy = want["policy"].as_array().unwrap_or(&empty);
    if policy.len() != want_policy.len() || policy.is_empty() {
        check(
            format!("policy length {} vs {}", policy.len(), want_policy.len()),
            None,
            None,
            0.0,
        );
    }
    for (i, (g, w)) in policy.iter().zip(want_policy).enumerate() {
        let (g, w) = (g.as_f64(), w.as_f64());
        if (g == Some(-1.0)) != (w == Some(-1.0)) {
            check(format!("policy[{i}] legality"), g, w, 0.0);
        } else {
            check(format!("policy[{i}]"), g, w, TOL_POLICY);
        }
    }
    let own = ours["ownership"].as_array().unwrap_or(&empty);
    let want_own = want["ownership"].as_array().unwrap_or(&empty);
    if own.len() != want_own.len() || own.is_empty() {
        check(
            format!("ownership length {} vs {}", own.len(), want_own.len()),
            None,
            None,
            0.0,
        );
    }
    for (i, (g, w)) in own.iter().zip(want_own).enumerate() {
        check(
            format!("ownership[{i}]"),
            g.as_f64(),
            w.as_f64(),
            TOL_OWNERSHIP,
        );
    }
    bad
}

#[test]
fn analysis_responses_match_katago_raw_network_outputs() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    check_vectors(
        &shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz"),
        &shared.join("vectors/nn/nn.jsonl"),
        39,
    );
}

/// A human-style net (an SGF metadata encoder) as the main model, with a
/// `humanSLProfile` in each query's `overrideSettings`: 24 queries with
/// nine profiles, answered by KataGo 1.17.2 with the random test net
/// `models/test-human-sl/b6c96-fson-mish-meta.bin.gz`
/// (`tests/data/katago_human_nn/README.md` says how both were made).
#[test]
fn human_sl_net_answers_as_katago_through_the_analysis_engine() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests/data/katago_human_nn");
    check_vectors(
        &root.join("models/test-human-sl/b6c96-fson-mish-meta.bin.gz"),
        &dir.join("analysis_main.jsonl"),
        24,
    );
}

/// The fixture nets of model versions 3 to 7 through the analysis engine:
/// input features, score outputs, the rules the net knows (and the warning
/// when the query's are replaced) and the JSON as KataGo 1.17.2 answers.
#[test]
fn old_version_nets_answer_as_katago_through_the_analysis_engine() {
    for version in 3..=7 {
        check_vectors(
            &old_fixtures::path(version),
            &old_fixtures::dir().join(format!("synthetic-v{version}.jsonl")),
            39,
        );
    }
}

/// Sends every query of the vector file `path` (`count` `{"query",
/// "response"}` lines, with KataGo's `rulesWarning` where it gave one) to
/// the engine running `model`, and compares.
fn check_vectors(model: &Path, path: &Path, count: usize) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let records: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("vector record"))
        .collect();
    assert_eq!(records.len(), count, "records in {}", path.display());
    let input: String = records
        .iter()
        .map(|r| format!("{}\n", r["query"]))
        .collect();

    let heads_before_v9 = engine::nn::ModelFile::load(model)
        .unwrap_or_else(|e| panic!("{e}"))
        .version
        < 9;
    let lines = run_engine(model, &[], input);
    let mut finals: HashMap<String, Vec<&Value>> = HashMap::new();
    let mut warnings: HashMap<String, String> = HashMap::new();
    for v in &lines {
        assert!(v.get("error").is_none(), "unexpected error: {v}");
        if let Some(w) = v.get("warning") {
            assert_eq!(v["field"], "rules", "unexpected warning: {v}");
            let id = v["id"].as_str().expect("warning id").to_string();
            warnings.insert(id, w.as_str().unwrap_or_default().to_string());
            continue;
        }
        if v["isDuringSearch"] == false {
            let id = v["id"].as_str().expect("response id").to_string();
            finals.entry(id).or_default().push(v);
        }
    }

    let mut failures = Vec::new();
    let mut summary = Vec::new();
    for rec in &records {
        let id = rec["query"]["id"].as_str().unwrap();
        let mut bad = match finals.get(id).map(Vec::as_slice) {
            Some([ours]) => compare(id, ours, &rec["response"], heads_before_v9),
            Some(several) => vec![format!("{id}: {} final responses", several.len())],
            None => vec![format!("{id}: no final response")],
        };
        let want_warning = rec.get("rulesWarning").and_then(Value::as_str);
        if warnings.get(id).map(String::as_str) != want_warning {
            bad.push(format!(
                "{id}: rules warning: ours {:?}, KataGo {want_warning:?}",
                warnings.get(id)
            ));
        }
        summary.push(format!(
            "{} {id}{}",
            if bad.is_empty() { "PASS" } else { "FAIL" },
            if bad.is_empty() {
                String::new()
            } else {
                format!(" ({} mismatches)", bad.len())
            }
        ));
        failures.extend(bad);
    }
    println!("{}: {}", model.display(), summary.join("\n"));
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `query_models` reports the net as KataGo 1.17.2 does: the path as given,
/// the internal name, the version and the `useFP16` mode (`auto` unset).
#[test]
fn query_models_reports_the_net_as_katago() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    let lines = run_engine(
        &model,
        &[],
        "{\"id\":\"m\",\"action\":\"query_models\"}\n".into(),
    );
    let [answer] = lines.as_slice() else {
        panic!("one answer expected: {lines:?}");
    };
    let m = &answer["models"][0];
    assert_eq!(
        answer["models"].as_array().map(Vec::len),
        Some(1),
        "{answer}"
    );
    assert_eq!(m["name"], model.display().to_string());
    assert_eq!(m["internalName"], "g170-b6c96-s175395328-d26788732");
    assert_eq!(m["version"], 8);
    assert_eq!(m["usesHumanSLProfile"], false);
    assert_eq!(m["usingFP16"], "auto");
    assert!(m["maxBatchSize"].as_u64().is_some_and(|b| b >= 1), "{m}");
}

/// `-human-model` beside g170: KataGo's human fields (`humanPolicy`,
/// `rootInfo.human*`, each move's `humanPrior`) for ten queries with a
/// `humanSLProfile` and one without (no human fields then), answered by
/// KataGo 1.17.2 with the random test net
/// `models/test-human-sl/b6c96-fson-mish-meta.bin.gz` as its
/// `-human-model`. Three queries search 8 visits (so that `moveInfos` is not
/// empty): their search values are not compared (KataGo's are not
/// reproducible from run to run), the net's are.
/// Mismatches and the largest difference within tolerance.
#[derive(Default)]
struct Tally {
    bad: Vec<String>,
    worst: f64,
}

impl Tally {
    fn check(&mut self, id: &str, what: String, got: Option<f64>, want: Option<f64>, tol: f64) {
        match (got, want) {
            (Some(g), Some(w)) if (g - w).abs() <= tol => {
                self.worst = self.worst.max((g - w).abs())
            }
            (g, w) => self
                .bad
                .push(format!("{id}: {what}: ours {g:?}, KataGo {w:?}")),
        }
    }
}

#[test]
fn human_model_fields_answer_as_katago() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/katago_human_nn");
    let text = std::fs::read_to_string(dir.join("analysis_with_human_model.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 10);
    let input: String = records
        .iter()
        .map(|r| format!("{}\n", r["query"]))
        .collect();
    let human = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/test-human-sl/b6c96-fson-mish-meta.bin.gz");
    let lines = run_engine(
        &shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz"),
        &["-human-model".as_ref(), human.as_os_str()],
        input,
    );
    let mut t = Tally::default();
    let mut priors = 0;
    for rec in &records {
        let id = rec["query"]["id"].as_str().unwrap();
        let want = &rec["response"];
        let Some(ours) = lines
            .iter()
            .find(|v| v["id"] == id && v["isDuringSearch"] == false)
        else {
            t.bad.push(format!("{id}: no final response"));
            continue;
        };
        let (r, k) = (&ours["rootInfo"], &want["rootInfo"]);
        for (key, tol) in [
            ("rawWinrate", TOL_WINRATE),
            ("rawLead", TOL_POINTS),
            ("humanWinrate", TOL_WINRATE),
            ("humanScoreMean", TOL_POINTS),
            ("humanScoreStdev", TOL_POINTS),
            ("humanStWrError", 1e-5),
            ("humanStScoreError", 1e-4),
        ] {
            if k.get(key).is_none() {
                if r.get(key).is_some() {
                    t.bad
                        .push(format!("{id}: rootInfo.{key} given, KataGo has none"));
                }
                continue;
            }
            t.check(
                id,
                format!("rootInfo.{key}"),
                r[key].as_f64(),
                k[key].as_f64(),
                tol,
            );
        }
        match (ours.get("humanPolicy"), want.get("humanPolicy")) {
            (None, None) => {}
            (Some(Value::Array(g)), Some(Value::Array(w))) if g.len() == w.len() => {
                for (i, (g, w)) in g.iter().zip(w).enumerate() {
                    t.check(
                        id,
                        format!("humanPolicy[{i}]"),
                        g.as_f64(),
                        w.as_f64(),
                        TOL_POLICY,
                    );
                }
            }
            (g, w) => t.bad.push(format!(
                "{id}: humanPolicy: ours {}, KataGo {}",
                g.is_some(),
                w.is_some()
            )),
        }
        // Each move both searched: its human prior is the human net's.
        let empty = Vec::new();
        let ours_moves = ours["moveInfos"].as_array().unwrap_or(&empty);
        for m in want["moveInfos"].as_array().unwrap_or(&empty) {
            if let Some(o) = ours_moves.iter().find(|o| o["move"] == m["move"]) {
                t.check(
                    id,
                    format!("humanPrior of {}", m["move"]),
                    o["humanPrior"].as_f64(),
                    m["humanPrior"].as_f64(),
                    TOL_POLICY,
                );
                priors += 1;
            }
        }
    }
    println!(
        "largest difference {:.2e}, {priors} human priors compared",
        t.worst
    );
    assert!(
        t.bad.is_empty(),
        "{} mismatches:\n{}",
        t.bad.len(),
        t.bad.join("\n")
    );
    assert!(priors >= 3, "only {priors} moves searched by both");
}

/// KaTrain 1.20's human-style AI (`HumanStyleStrategy` in its
/// `katrain/core/ai.py`, PyPI wheel): an analysis query built as its
/// `request_analysis` builds one, with its `overrideSettings` (its forced
/// `reportAnalysisWinratesAs`, `wideRootNoise`, the profile made from its
/// `human_kyu_rank`/`modern_style` or `pro_year` settings and
/// `ignorePreRootHistory: false`) and `includePolicy`; KaTrain then reads
/// `humanPolicy` (362 values on 19x19, `-1` on occupied points) and draws
/// its move among the positive ones, indexing row `size - y - 1`.
#[test]
fn katrain_human_style_queries_get_a_human_policy() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let human = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/test-human-sl/b6c96-fson-mish-meta.bin.gz");
    let moves = serde_json::json!([["B", "Q16"], ["W", "D4"], ["B", "Q3"]]);
    let query = |id: &str, profile: &str| {
        serde_json::json!({
            "id": id,
            "rules": "japanese",
            "priority": 1000,
            "analyzeTurns": [3],
            "maxVisits": 16,
            "komi": 6.5,
            "boardXSize": 19,
            "boardYSize": 19,
            "includeOwnership": false,
            "includeMovesOwnership": false,
            "includePolicy": true,
            "initialStones": [],
            "initialPlayer": "B",
            "moves": moves,
            "overrideSettings": {
                "reportAnalysisWinratesAs": "BLACK",
                "wideRootNoise": 0.0,
                "humanSLProfile": profile,
                "ignorePreRootHistory": false,
            },
        })
    };
    // human_kyu_rank 8 with modern_style false; then pro_year 1914.
    let input = format!(
        "{}\n{}\n",
        query("k8", "preaz_8k"),
        query("pro", "proyear_1914")
    );
    let lines = run_engine(
        &shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz"),
        &["-human-model".as_ref(), human.as_os_str()],
        input,
    );
    let mut policies = Vec::new();
    for id in ["k8", "pro"] {
        let r = lines
            .iter()
            .find(|v| v["id"] == id && v["isDuringSearch"] == false)
            .unwrap_or_else(|| panic!("no answer to {id}: {lines:?}"));
        let policy: Vec<f64> = r["humanPolicy"]
            .as_array()
            .unwrap_or_else(|| panic!("no humanPolicy: {r}"))
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(policy.len(), 362);
        let sum: f64 = policy.iter().filter(|&&p| p > 0.0).sum();
        assert!((sum - 1.0).abs() < 1e-4, "{id}: sums to {sum}");
        // KaTrain's candidates: every positive entry, (x, y) from the
        // bottom-left; the stones' points are not among them.
        for (x, y) in [(15, 15), (3, 3), (15, 2)] {
            assert_eq!(
                policy[(19 - y - 1) * 19 + x],
                -1.0,
                "{id}: ({x}, {y}) is occupied"
            );
        }
        assert!(r["moveInfos"][0]["humanPrior"].as_f64().is_some(), "{r}");
        policies.push(policy);
    }
    assert_ne!(
        policies[0], policies[1],
        "the profile changes the human policy"
    );
}
