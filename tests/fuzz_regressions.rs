//! Every crash the fuzzers found (`tests/data/fuzz_crashes/TARGET/*`, kept
//! by `scripts/fuzz.sh`) and every seed of the corpora run through the same
//! target bodies as the AFL++ binaries (`engine::fuzz_targets`): none may
//! panic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

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

#[test]
fn crash_inputs_found_by_fuzzing_no_longer_panic() {
    let root = repo().join("tests/data/fuzz_crashes");
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, _) in TARGETS {
        let dir = root.join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for file in files.iter().filter(|f| f.is_file()) {
            let data = std::fs::read(file).expect("read a crash input");
            count += 1;
            if let Err(msg) = run(name, &data) {
                failures.push(format!("{}: {msg}", file.display()));
            }
        }
    }
    // Folders named for no target would be silently skipped: refuse them.
    if let Ok(entries) = std::fs::read_dir(&root) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            assert!(
                target(&n).is_some(),
                "{}: not a fuzz target",
                e.path().display()
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{count} crash inputs, failing:\n{}",
        failures.join("\n")
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
