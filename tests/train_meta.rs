//! Training a human-SL kind end to end: rows with SGF metadata
//! (`metadataInputNC`, made here from KataGo's profiles for 300 rows of
//! `shared/vectors/npz-more`), `engine shuffle -include-meta`, `engine
//! train -model-kind b2c16-meta` with an export, and the exported net used
//! as `engine gtp -human-model`, where the profile changes its answer.
//! Without `-include-meta` the shuffle drops the metadata and the training
//! stops with the reason; `-meta-kata-only-soft-policy` trains as well.

#![cfg(feature = "torch")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use engine::data::{encode_npz, read_npz, NpzWriteOptions, NUM_METADATA_INPUTS};
use engine::game::Player;
use engine::nn::metadata::SgfMetadata;

#[path = "common/gtp.rs"]
mod gtp;

fn engine() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engine"));
    c.env("OMP_NUM_THREADS", "1").stdin(Stdio::null());
    c
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("engine runs")
}

fn run_ok(cmd: &mut Command) -> Output {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-train-meta-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// 300 self-play rows with human-SL metadata of three profiles in turn
/// (each row's side to move as `nextPlayer`), as one `.npz` in `dir`.
fn write_rows_with_metadata(dir: &Path) {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let mut rows = read_npz(&shared.join("vectors/npz-more/45C4BC88EB096EBB.npz"))
        .expect("shared rows")
        .slice(0, 300);
    let profiles: Vec<SgfMetadata> = ["rank_15k", "rank_1d", "preaz_9d"]
        .iter()
        .map(|p| SgfMetadata::profile(p).expect("known").expect("a profile"))
        .collect();
    rows.has_metadata = true;
    rows.metadata_input_nc = vec![0.0; rows.num_rows * NUM_METADATA_INPUTS];
    for (i, row) in rows
        .metadata_input_nc
        .chunks_mut(NUM_METADATA_INPUTS)
        .enumerate()
    {
        let pla = if i % 2 == 0 {
            Player::Black
        } else {
            Player::White
        };
        profiles[i % 3].fill_row(row, pla, 361);
    }
    std::fs::create_dir_all(dir).expect("input dir");
    let bytes = encode_npz(&rows, &NpzWriteOptions::default()).expect("encode");
    std::fs::write(dir.join("human.npz"), bytes).expect("write rows");
}

fn shuffle(input: &Path, root: &Path, window: &str, include_meta: bool) {
    let mut cmd = engine();
    cmd.arg("shuffle").arg(input).args([
        "-out-dir",
        &root
            .join(format!("shuffleddata/{window}/train"))
            .display()
            .to_string(),
        "-out-tmp-dir",
        &root.join("tmp").display().to_string(),
        "-min-rows",
        "100",
        "-keep-target-rows",
        "100000",
    ]);
    if include_meta {
        cmd.arg("-include-meta");
    }
    run_ok(&mut cmd);
}

fn train(root: &Path, traindir: &str, prefix: &str) -> Command {
    let mut cmd = engine();
    cmd.args([
        "train",
        "-traindir",
        &root.join(traindir).display().to_string(),
        "-latestdatadir",
        &root.join("shuffleddata").display().to_string(),
        "-model-kind",
        "b2c16-meta",
        "-batch-size",
        "16",
        "-samples-per-epoch",
        "64",
        "-max-epochs-this-instance",
        "1",
        "-no-lr-warmup",
        "-exportdir",
        &root.join("models").display().to_string(),
        "-exportprefix",
        prefix,
    ]);
    cmd
}

/// The one model file exported under `root/models` with `prefix`.
fn exported(root: &Path, prefix: &str) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(root.join("models"))
        .expect("models dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].join("model.bin.gz")
}

#[test]
fn a_meta_kind_trains_on_metadata_rows_and_plays_as_a_human_model() {
    let root = scratch();
    let input = root.join("selfplay");
    write_rows_with_metadata(&input);

    // Without -include-meta the metadata is dropped, and a -meta kind
    // cannot train on the window.
    shuffle(&input, &root, "s1", false);
    let out = run(&mut train(&root, "train-plain", "plain"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "trained without metadata");
    assert!(
        stderr.contains("metadataInputNC") && stderr.contains("-include-meta"),
        "{stderr}"
    );

    shuffle(&input, &root, "s2", true);
    let shuffled = std::fs::read_dir(root.join("shuffleddata/s2/train"))
        .expect("window")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "npz"))
        .expect("a shuffled file");
    assert!(read_npz(&shuffled).expect("shuffled rows").has_metadata);
    run_ok(&mut train(&root, "train", "human"));
    let model = exported(&root, "human");
    let file = engine::nn::ModelFile::load(&model).expect("the export loads");
    assert!(file.trunk.metadata_encoder.is_some());
    assert_eq!(file.version, 15);

    // The export as the human net beside the main one: each profile gets
    // its own answer.
    let g170 = engine::shared_data_dir()
        .unwrap_or_else(|e| panic!("{e}"))
        .join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    let commands = "kata-set-param humanSLProfile rank_15k\nkata-raw-human-nn 0\n\
                    kata-set-param humanSLProfile preaz_9d\nkata-raw-human-nn 0\n";
    let (answers, stderr) = gtp::session(
        &[
            "-model".as_ref(),
            g170.as_os_str(),
            "-human-model".as_ref(),
            model.as_os_str(),
        ],
        commands,
    );
    assert_eq!(answers.len(), 4, "{answers:?}\n{stderr}");
    assert!(answers.iter().all(|a| a.starts_with('=')), "{answers:?}");
    assert!(answers[1].contains("policy"), "{}", answers[1]);
    assert_ne!(answers[1], answers[3], "the profile changes nothing");

    // KataGo's -meta-kata-only-soft-policy trains on these rows too (its
    // losses are checked against KataGo's trainer in the unit tests).
    run_ok(train(&root, "train-soft", "soft").arg("-meta-kata-only-soft-policy"));
    assert!(exported(&root, "soft").exists());
    let _ = std::fs::remove_dir_all(&root);
}
