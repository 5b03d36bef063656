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

fn generation_lines(base: &Path) -> usize {
    std::fs::read_to_string(base.join("generations.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .count()
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
    assert_eq!(generation_lines(&run), 2);
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
    assert!(generation_lines(&run) >= 4);
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
