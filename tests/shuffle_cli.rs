//! `engine shuffle` end to end on KataGo's `shared/vectors/npz-more/`
//! (3 files x 1,000 rows): the window as KataGo's `shuffle.py` computes it,
//! every output row an input row, rows spread across outputs, KataGo's json
//! summaries, and `kill -9` at random moments leaving only whole files.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use engine::data::{read_npz, TrainingRows, WindowRows};
use engine::exit::Exit;
use engine::store::layout::ShuffledData;
use engine::store::StoreUrl;

fn engine() -> Command {
    Command::new(env!("CARGO_BIN_EXE_engine"))
}

fn input_dir() -> PathBuf {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    shared.join("vectors/npz-more")
}

/// The `*.npz` files directly in `dir`, by name (empty if it is missing).
fn list_npz_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "npz"));
    v.sort();
    v
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-shuffle-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A hash of every member of row `i`.
fn row_hash(rows: &TrainingRows, i: usize) -> u64 {
    fn part<T: Copy>(v: &[T], i: usize, n: usize) -> &[T] {
        &v[i * n..(i + 1) * n]
    }
    let n = rows.num_rows;
    let mut h = DefaultHasher::new();
    part(
        &rows.binary_input_nchw_packed,
        i,
        rows.binary_input_nchw_packed.len() / n,
    )
    .hash(&mut h);
    for x in part(&rows.global_input_nc, i, rows.global_input_nc.len() / n) {
        x.to_bits().hash(&mut h);
    }
    part(
        &rows.policy_targets_nc_move,
        i,
        rows.policy_targets_nc_move.len() / n,
    )
    .hash(&mut h);
    for x in part(&rows.global_targets_nc, i, rows.global_targets_nc.len() / n) {
        x.to_bits().hash(&mut h);
    }
    part(&rows.score_distr_n, i, rows.score_distr_n.len() / n).hash(&mut h);
    part(
        &rows.value_targets_nchw,
        i,
        rows.value_targets_nchw.len() / n,
    )
    .hash(&mut h);
    part(
        &rows.q_value_targets_nc_move,
        i,
        rows.q_value_targets_nc_move.len() / n,
    )
    .hash(&mut h);
    h.finish()
}

/// Row hash -> (input file index, count) over the input files.
fn input_rows() -> (Vec<PathBuf>, HashMap<u64, (usize, usize)>) {
    let files = list_npz_files(&input_dir());
    assert_eq!(files.len(), 3);
    let mut map = HashMap::new();
    for (fi, f) in files.iter().enumerate() {
        let rows = read_npz(f).unwrap();
        assert_eq!(rows.num_rows, 1000);
        for i in 0..rows.num_rows {
            map.entry(row_hash(&rows, i)).or_insert((fi, 0)).1 += 1;
        }
    }
    (files, map)
}

fn shuffle_args(out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "shuffle".into(),
        input_dir().to_string_lossy().into_owned(),
        "-out-dir".into(),
        out.to_string_lossy().into_owned(),
        "-min-rows".into(),
        "1000".into(),
        "-expand-window-per-row".into(),
        "0.4".into(),
        "-taper-window-exponent".into(),
        "0.65".into(),
        "-num-processes".into(),
        "2".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run_ok(args: &[String]) -> String {
    let out = engine().args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "engine {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn shuffle_keeps_the_window_and_spreads_rows() {
    let (_, inputs) = input_rows();
    let parent = scratch("window");
    let out = parent.join("s1/train");
    let log = run_ok(&shuffle_args(
        &out,
        &[
            "-keep-target-rows",
            "all",
            "-approx-rows-per-out-file",
            "500",
        ],
    ));
    // shuffle.py on the same files and flags: "Desired num rows: 1641 / 3000",
    // "Finally, using: (1000-3000) (2000/1641 desired rows)", 4 buckets x 1.
    assert!(log.contains("Desired num rows: 1641 / 3000"), "{log}");
    assert!(
        log.contains("Finally, using: (1000-3000) (2000/1641 desired rows)"),
        "{log}"
    );
    assert_eq!(
        std::fs::read_to_string(parent.join("s1/train.json")).unwrap(),
        r#"{"range": [1000, 3000]}"#
    );
    let outputs = list_npz_files(&out);
    let names: Vec<String> = outputs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["data0_0.npz", "data1_0.npz", "data2_0.npz", "data3_0.npz"]
    );

    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut per_source = [0usize; 3];
    for f in &outputs {
        let rows = read_npz(f).unwrap();
        let json = std::fs::read_to_string(f.with_extension("json")).unwrap();
        assert_eq!(json, format!("{{\"num_rows\": {}}}", rows.num_rows));
        // Uniform dealing into 4 buckets: ~500 rows each.
        assert!(
            (350..650).contains(&rows.num_rows),
            "{} rows in {f:?}",
            rows.num_rows
        );
        let mut sources_here = [0usize; 3];
        for i in 0..rows.num_rows {
            let h = row_hash(&rows, i);
            let (src, _) = *inputs
                .get(&h)
                .unwrap_or_else(|| panic!("{f:?} row {i} is no input row"));
            *seen.entry(h).or_default() += 1;
            per_source[src] += 1;
            sources_here[src] += 1;
        }
        // Both window files feed every output file.
        assert_eq!(
            sources_here.iter().filter(|&&n| n > 50).count(),
            2,
            "{f:?}: {sources_here:?}"
        );
    }
    // Exactly two whole input files (the newest) make the window, no row
    // twice more than it occurs in the input.
    let mut used: Vec<usize> = per_source.iter().copied().filter(|&n| n > 0).collect();
    used.sort();
    assert_eq!(used, [1000, 1000], "{per_source:?}");
    for (h, n) in &seen {
        assert!(*n <= inputs[h].1, "row {h:x} appears {n} times");
    }

    // The trainer's reader finds the shuffle as train.py would and reads
    // every row once, in file order.
    let data = ShuffledData::open(&StoreUrl::Local(parent.clone())).unwrap();
    let window = data.newest().unwrap().unwrap();
    assert_eq!((window.name.as_str(), window.range), ("s1", (1000, 3000)));
    let rows = WindowRows::open(&data, &window.train, 19).unwrap();
    assert_eq!(rows.num_rows(), 2000);
    let batches: Vec<TrainingRows> = rows.once(128).map(|b| b.unwrap()).collect();
    assert_eq!(batches.len(), 16);
    assert!(batches[..15].iter().all(|b| b.num_rows == 128));
    let first = read_npz(&outputs[0]).unwrap();
    assert_eq!(row_hash(&batches[0], 0), row_hash(&first, 0));

    // A finished shuffle is not overwritten.
    let again = engine()
        .args(shuffle_args(&out, &["-keep-target-rows", "all"]))
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists and is not empty"));
    std::fs::remove_dir_all(&parent).unwrap();
}

#[test]
fn keep_target_rows_subsamples_and_too_few_rows_writes_nothing() {
    let parent = scratch("keep");
    let out = parent.join("train");
    run_ok(&shuffle_args(
        &out,
        &[
            "-keep-target-rows",
            "700",
            "-approx-rows-per-out-file",
            "350",
            "-seed",
            "7",
        ],
    ));
    let total: usize = list_npz_files(&out)
        .iter()
        .map(|f| read_npz(f).unwrap().num_rows)
        .sum();
    // One sharding group of 2000 rows keeps round(2000 * 700/2000) rows.
    assert_eq!(total, 700);

    // Too few rows: a documented exit code, nothing written, and the
    // window written before (`train` above) untouched.
    let before: Vec<(PathBuf, Vec<u8>)> = list_npz_files(&out)
        .into_iter()
        .map(|f| (f.clone(), std::fs::read(&f).unwrap()))
        .collect();
    let few = parent.join("few");
    let out = engine()
        .args([
            "shuffle".into(),
            input_dir().to_string_lossy().into_owned(),
            "-out-dir".into(),
            few.to_string_lossy().into_owned(),
            "-min-rows".into(),
            "5000".into(),
            "-keep-target-rows".into(),
            "all".into(),
        ])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(i32::from(Exit::TooFewRows.code())),
        "{log}"
    );
    assert!(log.contains("fewer than -min-rows 5000"), "{log}");
    assert!(!few.exists());
    assert!(!parent.join("few.json").exists());
    for (f, bytes) in &before {
        assert_eq!(&std::fs::read(f).unwrap(), bytes, "{f:?} changed");
    }
    assert!(parent.join("train.json").exists());
    std::fs::remove_dir_all(&parent).unwrap();
}

#[test]
fn kill_9_leaves_only_whole_files_and_a_rerun_completes() {
    let parent = scratch("kill");
    let out = parent.join("train");
    let args = shuffle_args(
        &out,
        &[
            "-keep-target-rows",
            "all",
            "-approx-rows-per-out-file",
            "100",
            "-num-processes",
            "1",
        ],
    );
    // Kill at spread-out moments (a pseudo-random sequence).
    let mut x: u64 = 0x2545_F491_4F6C_DD1D ^ std::process::id() as u64;
    for _ in 0..4 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut child = engine()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Start the clock when the shuffling starts (loading libtorch at
        // start-up takes a while), then kill within the ~1.5 s of work.
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            if line.map_or(true, |l| l.starts_with("Grouping")) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(x % 1500));
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
        drop(lines);
        for f in list_npz_files(&out) {
            read_npz(&f).unwrap_or_else(|e| panic!("after kill -9: {e}"));
        }
        // A shuffle that finished before the kill is complete; start over.
        if parent.join("train.json").exists() {
            std::fs::remove_dir_all(&out).unwrap();
            std::fs::remove_file(parent.join("train.json")).unwrap();
        }
    }
    run_ok(&args);
    let files = list_npz_files(&out);
    assert_eq!(files.len(), 20);
    let total: usize = files.iter().map(|f| read_npz(f).unwrap().num_rows).sum();
    assert_eq!(total, 2000);
    // The rerun cleared what the kills left in the output folder, whole
    // or temporary (`NAME#N`): only its own 20 files and their counts.
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.retain(|n| !n.starts_with("data") || !(n.ends_with(".npz") || n.ends_with(".json")));
    assert!(names.is_empty(), "left in the output folder: {names:?}");
    std::fs::remove_dir_all(&parent).unwrap();
}

/// A file whose zip directory and first member header read fine (so its
/// rows are counted) but whose body is corrupt is skipped with a warning,
/// as one with a bad header is, and the shuffle goes on with the others.
#[test]
fn a_corrupt_body_is_skipped_with_a_warning() {
    let parent = scratch("corrupt");
    let inputs = parent.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    let files = list_npz_files(&input_dir());
    for f in &files {
        std::fs::copy(f, inputs.join(f.file_name().unwrap())).unwrap();
    }
    // Flip bytes in the middle of the last member's compressed data: the
    // deflate stream or its CRC fails, the header of the first does not.
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let archive = zip::ZipArchive::new(std::io::Cursor::new(bytes.clone())).unwrap();
    let last = archive.len() - 1;
    let (start, len) = {
        let mut a = archive;
        let m = a.by_index(last).unwrap();
        (m.data_start() as usize, m.compressed_size() as usize)
    };
    for b in &mut bytes[start + len / 3..start + len / 3 + 64] {
        *b ^= 0x5A;
    }
    let bad = inputs.join("BADBODY0000000000.npz");
    std::fs::write(&bad, &bytes).unwrap();
    engine::data::read_npz_num_rows(&bad).expect("the header still reads");
    assert!(read_npz(&bad).is_err(), "the body does not");

    let out = parent.join("w/train");
    let result = engine()
        .args([
            "shuffle".into(),
            inputs.to_string_lossy().into_owned(),
            "-out-dir".into(),
            out.to_string_lossy().into_owned(),
            "-min-rows".into(),
            "1000".into(),
            "-keep-target-rows".into(),
            "all".into(),
            "-expand-window-per-row".into(),
            "1".into(),
            "-taper-window-exponent".into(),
            "1".into(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{err}");
    assert!(
        err.contains("WARNING: Skipping bad file") && err.contains("BADBODY"),
        "{err}"
    );
    let total: usize = list_npz_files(&out)
        .iter()
        .map(|f| read_npz(f).unwrap().num_rows)
        .sum();
    assert_eq!(total, 3000, "the three good files' rows, not the bad one's");
    std::fs::remove_dir_all(&parent).unwrap();
}
