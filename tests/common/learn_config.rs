//! A tiny `engine learn` config for the tests of `learn` and of the Slurm
//! fleet: b2c16 on 9x9, small windows and generations, a few games.

use std::path::{Path, PathBuf};

/// Self-play keys small enough for tests.
pub const TINY_SELFPLAY: &str = "bSizes=9,bSizeRelProbs=1,maxVisits=8,cheapSearchVisits=4,\
reducedVisitsMin=4,numGameThreads=8,nnMaxBatchSize=8,maxMovesPerGame=80,maxRowsPerTrainFile=100";

/// A learn config for tests in `dir`: b2c16 on 9x9, a window from 100
/// rows, 512 samples a generation, 4 gating games at 8 visits; `extra`
/// lines (`key = value`) replace these.
pub fn tiny_config(dir: &Path, extra: &str) -> PathBuf {
    let configs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut keys: Vec<(String, String)> = [
        ("modelKind", "\"b2c16\"".to_string()),
        ("posLen", "9".into()),
        ("seed", "3".into()),
        ("newRowsPerGeneration", "100".into()),
        ("pollSeconds", "0.5".into()),
        ("leaseSeconds", "60".into()),
        ("shuffleMinRows", "100".into()),
        ("shuffleKeepTargetRows", "0".into()),
        ("shuffleRowsPerFile", "200".into()),
        ("shuffleThreads", "1".into()),
        ("trainBatchSize", "64".into()),
        ("trainSamplesPerGeneration", "512".into()),
        ("trainSwaPeriodSamples", "256".into()),
        ("trainLrWarmup", "false".into()),
        ("trainCheckpointEverySamples", "128".into()),
        ("gating", "true".into()),
        (
            "gatekeeperConfig",
            format!("\"{}\"", configs.join("gatekeeper.toml").display()),
        ),
        (
            "gatekeeperOverrides",
            "\"numGamesPerGating=4,maxVisits=8,numGameThreads=4,maxMovesPerGame=60\"".into(),
        ),
        (
            "selfplayConfig",
            format!("\"{}\"", configs.join("selfplay.toml").display()),
        ),
        ("selfplayOverrides", format!("\"{TINY_SELFPLAY}\"")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for line in extra.lines().filter(|l| !l.trim().is_empty()) {
        let (k, v) = line.split_once('=').expect("key = value");
        let (k, v) = (k.trim().to_string(), v.trim().to_string());
        match keys.iter_mut().find(|(key, _)| *key == k) {
            Some(entry) => entry.1 = v,
            None => keys.push((k, v)),
        }
    }
    let text: String = keys.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
    let path = dir.join("learn.toml");
    std::fs::write(&path, text).unwrap();
    path
}
