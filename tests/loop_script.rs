//! `scripts/loop.sh` end to end with a tiny net and a few games per
//! generation: generations run in turns (random net, self-play, shuffle,
//! train, export, accept), and the loop killed with SIGKILL part-way and
//! started again with the same command goes on from its files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A loop config for tests: b2c16, 9x9, 6 games of at most 40 moves per
/// generation at 8 visits, 512 training samples; gating (4 games) or not.
fn tiny_config(dir: &Path, max_generations: u32, gatekeeper: bool) -> PathBuf {
    let text = format!(
        r#"MODEL_KIND=b2c16
POS_LEN=9
SEED=3
GAMES_PER_GENERATION=6
SELFPLAY_OVERRIDES="bSizes=9,bSizeRelProbs=1,dataBoardLen=9,maxVisits=8,cheapSearchVisits=4,reducedVisitsMin=4,numGameThreads=6,nnMaxBatchSize=8,maxMovesPerGame=40,maxRowsPerTrainFile=50"
SHUFFLE_MIN_ROWS=20
SHUFFLE_KEEP_TARGET_ROWS=100000
SHUFFLE_EXPAND_WINDOW_PER_ROW=0.4
SHUFFLE_TAPER_WINDOW_EXPONENT=0.675
TRAIN_BATCH_SIZE=32
TRAIN_SAMPLES_PER_GENERATION=512
TRAIN_LR_SCALE=1.0
TRAIN_SWA_SCALE=4
TRAIN_SWA_PERIOD_SAMPLES=128
TRAIN_EXTRA_FLAGS="-no-lr-warmup"
GATEKEEPER={gk}
GATEKEEPER_OVERRIDES="numGamesPerGating=4,maxVisits=4,numGameThreads=4,maxMovesPerGame=40"
MAX_GENERATIONS={max_generations}
TIME_BUDGET_MINUTES=30
"#,
        gk = u8::from(gatekeeper)
    );
    let path = dir.join(format!("tiny-{max_generations}-{gatekeeper}.conf"));
    std::fs::write(&path, text).unwrap();
    path
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-loop-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn loop_command(base: &Path, config: &Path) -> Command {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut c = Command::new("bash");
    c.arg(root.join("scripts/loop.sh"))
        .arg(base)
        .arg(config)
        .env("ENGINE", env!("CARGO_BIN_EXE_engine"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// Nets in `models/` (accepted) or another folder of the loop: sub-folders
/// each with a whole `model.bin.gz`.
fn models_in(base: &Path, folder: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(base.join(folder))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    for n in &names {
        let file = base.join(folder).join(n).join("model.bin.gz");
        engine::nn::ModelFile::load(&file)
            .unwrap_or_else(|e| panic!("{}: not a whole model: {e}", file.display()));
    }
    names
}

fn accepted_models(base: &Path) -> Vec<String> {
    models_in(base, "models")
}

fn generations_tsv(base: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(base.join("generations.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

fn copy_model(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(from.join("model.bin.gz"), to.join("model.bin.gz")).unwrap();
}

/// A crash between a net's export (or its gating) and its line in
/// `generations.tsv` must not lose the line: the loop writes it from the
/// in-flight generation's facts when it starts again. The crash is staged:
/// a loop with no generations to run leaves the random net, then a net is
/// put where training (or the gatekeeper) would have left it. A random net
/// half written by a crash is written again.
#[test]
fn leftovers_of_a_crash_are_picked_up_on_restart() {
    let base = scratch("recover");
    let run = base.join("run");
    let conf = tiny_config(&base, 0, false);
    // Killed while writing the random net: its temporary folder is left.
    let half_written = run.join("models/.random.tmp");
    std::fs::create_dir_all(&half_written).unwrap();
    std::fs::write(half_written.join("model.bin.gz"), b"\x1f\x8b").unwrap();
    assert!(loop_command(&run, &conf).status().unwrap().success());
    assert_eq!(accepted_models(&run), ["b2c16-random"]);
    assert!(generations_tsv(&run).is_empty());
    let random = run.join("models/b2c16-random");

    // Stages what a crash leaves: a net in `folder`, the in-flight
    // generation's record, and starts the loop again.
    let crash_and_restart = |folder: &str, net: &str, pending: &str| {
        copy_model(&random, &run.join(folder).join(net));
        std::fs::write(run.join("generation.pending"), pending).unwrap();
        assert!(loop_command(&run, &conf).status().unwrap().success());
    };
    // Exported, not yet gated (gating is off here: it is accepted).
    crash_and_restart(
        "modelstobetested",
        "b2c16-s480-d120",
        "p_gen=1 p_model=b2c16-random p_games=6 p_rows=120 p_t0=1\n",
    );
    // Gated and rejected before the crash.
    crash_and_restart(
        "rejectedmodels",
        "b2c16-s960-d250",
        "p_gen=2 p_model=b2c16-s480-d120 p_games=6 p_rows=250 p_t0=1\n",
    );
    // A third start finds nothing left to record.
    assert!(loop_command(&run, &conf).status().unwrap().success());

    let row = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        generations_tsv(&run),
        vec![
            row(&[
                "1",
                "b2c16-random",
                "6",
                "120",
                "480",
                "b2c16-s480-d120",
                "b2c16-s480-d120",
                "?"
            ]),
            row(&[
                "2",
                "b2c16-s480-d120",
                "6",
                "250",
                "960",
                "b2c16-s960-d250",
                "none",
                "?"
            ]),
        ]
    );
    assert!(!run.join("generation.pending").exists());
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn two_generations_then_kill_and_resume() {
    let base = scratch("run");
    // Two generations with the gatekeeper: each new net is gated against
    // the newest accepted one and ends in models/ or rejectedmodels/.
    let conf2 = tiny_config(&base, 2, true);
    let status = loop_command(&base.join("run"), &conf2).status().unwrap();
    assert!(status.success(), "loop failed: {status}");
    let run = base.join("run");
    let models = accepted_models(&run);
    let rejected = models_in(&run, "rejectedmodels");
    assert_eq!(
        models.len() + rejected.len(),
        3,
        "random net + 2 trained nets: {models:?} {rejected:?}"
    );
    assert!(models.iter().any(|m| m == "b2c16-random"), "{models:?}");
    assert_eq!(generations_tsv(&run).len(), 2);
    assert!(run.join("train/checkpoint.safetensors").is_file());
    let gating_log =
        std::fs::read_to_string(run.join("gatekeeper/sgfs/gatekeeper_log.tsv")).unwrap();
    assert_eq!(
        gating_log.lines().count(),
        3,
        "header + 2 gatings:\n{gating_log}"
    );

    // Kill the loop (its whole process group) part-way through, then run it
    // again with a larger budget: it must finish from the files left.
    let conf4 = tiny_config(&base, 4, false);
    let mut cmd = loop_command(&run, &conf4);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_secs(6));
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.wait();
    let status = loop_command(&run, &conf4).status().unwrap();
    assert!(status.success(), "resumed loop failed: {status}");
    let models = accepted_models(&run);
    let rejected = models_in(&run, "rejectedmodels");
    assert_eq!(
        models.len() + rejected.len(),
        5,
        "random net + 4 trained nets: {models:?} {rejected:?}"
    );
    // Every trained net has exactly one line, whenever the kill came.
    let mut recorded: Vec<String> = generations_tsv(&run)
        .into_iter()
        .map(|r| r[5].clone())
        .collect();
    recorded.sort();
    let mut trained: Vec<String> = models
        .iter()
        .chain(&rejected)
        .filter(|m| *m != "b2c16-random")
        .cloned()
        .collect();
    trained.sort();
    assert_eq!(recorded, trained);
    // Training went on from its checkpoint: the newest net has seen all four
    // generations' samples (4 x 512, rounded down to whole batches).
    let newest_samples: u64 = models
        .iter()
        .filter_map(|m| m.split("-s").nth(1)?.split('-').next()?.parse().ok())
        .max()
        .unwrap();
    assert!(newest_samples >= 4 * 512 - 4 * 32, "{models:?}");
    let _ = std::fs::remove_dir_all(&base);
}
