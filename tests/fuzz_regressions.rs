//! Every crash input found (`tests/data/fuzz_crashes/TARGET/*`, kept by
//! `scripts/fuzz.sh`; its README says where each came from), every input of
//! the committed corpora (`fuzz/corpus/TARGET/*`) and every generated seed
//! run through the same target bodies as the AFL++ binaries
//! (`engine::fuzz_targets`): none may panic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use engine::fuzz_targets::{seed_corpus, target, TARGETS};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `data` through `target_name`, returning the panic message if any.
fn run(target_name: &str, data: &[u8]) -> Result<(), String> {
    let body = target(target_name).ok_or_else(|| format!("no fuzz target {target_name}"))?;
    catch_unwind(AssertUnwindSafe(|| body(data))).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

/// Every file in `root/TARGET/` for every target, sorted, after checking
/// that each folder in `root` is named for a target (a misnamed folder
/// would be skipped without a word).
fn inputs_by_target(root: &Path) -> Vec<(&'static str, PathBuf)> {
    let entries = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e} (it is part of the repository)", root.display()));
    for e in entries.flatten().filter(|e| e.path().is_dir()) {
        let n = e.file_name().to_string_lossy().into_owned();
        assert!(
            target(&n).is_some(),
            "{}: not a fuzz target",
            e.path().display()
        );
    }
    let mut inputs = Vec::new();
    for (name, _) in TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(name)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        inputs.extend(files.into_iter().map(|f| (*name, f)));
    }
    inputs
}

/// Runs every input through its target; the failures, one line each.
fn failures(inputs: &[(&str, PathBuf)]) -> Vec<String> {
    inputs
        .iter()
        .filter_map(|(name, file)| {
            let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            run(name, &data)
                .err()
                .map(|msg| format!("{}: {msg}", file.display()))
        })
        .collect()
}

#[test]
fn crash_inputs_found_by_fuzzing_no_longer_panic() {
    let inputs = inputs_by_target(&repo().join("tests/data/fuzz_crashes"));
    // An empty folder would make this test pass while checking nothing.
    assert!(
        !inputs.is_empty(),
        "tests/data/fuzz_crashes holds no crash input"
    );
    let failing = failures(&inputs);
    assert!(
        failing.is_empty(),
        "{} crash inputs, failing:\n{}",
        inputs.len(),
        failing.join("\n")
    );
}

#[test]
fn committed_corpora_run_through_every_target() {
    let inputs = inputs_by_target(&repo().join("fuzz/corpus"));
    for (name, _) in TARGETS {
        let n = inputs.iter().filter(|(t, _)| t == name).count();
        assert!(n >= 2, "fuzz/corpus/{name} holds only {n} inputs");
    }
    let failing = failures(&inputs);
    assert!(
        failing.is_empty(),
        "{} corpus inputs, failing:\n{}",
        inputs.len(),
        failing.join("\n")
    );
}

#[test]
fn seed_corpora_run_through_every_target() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let seeds = seed_corpus(&shared, &repo()).expect("seed corpora");
    let mut failures = Vec::new();
    for (name, _) in TARGETS {
        let n = seeds.iter().filter(|s| s.target == *name).count();
        assert!(n >= 2, "target {name} has only {n} seeds");
    }
    for s in &seeds {
        if let Err(msg) = run(s.target, &s.data) {
            failures.push(format!("{}/{}: {msg}", s.target, s.name));
        }
    }
    assert!(
        failures.is_empty(),
        "failing seeds:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_target_survives_empty_and_junk_input() {
    let junk: &[&[u8]] = &[
        b"",
        b"\0",
        b"\xff\xfe\n\n",
        &[b'('; 4096],
        b"T",
        b"?PK\x03\x04",
    ];
    for (name, _) in TARGETS {
        for data in junk {
            run(name, data).unwrap_or_else(|m| panic!("{name} on {data:?}: {m}"));
        }
    }
    assert!(target("no_such_target").is_none());
}
