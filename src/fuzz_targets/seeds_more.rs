//! Seeds of the settings targets (the repository's configs, KataGo's
//! self-play configs in `../shared`, `engine match`'s documented short
//! form) and of the training-file targets (the `.npy` members of KataGo's
//! npz files, the `train.json` and summary a shuffle of them gives, the
//! test safetensors and a checkpoint the trainer's writer makes of them).

#[cfg(feature = "torch")]
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::Path;

#[cfg(feature = "torch")]
use safetensors::SafeTensors;

use super::Seed;
use super::{file_name, files_with};
use crate::data::read_npz_num_rows_bytes;
use crate::store::layout::train_json_bytes;
#[cfg(feature = "torch")]
use crate::train::{Checkpoint, TrainState};

/// The seeds of the targets added with the settings and training files.
/// Folders that are absent give no seeds; a file that is there but cannot
/// be read is an error.
pub(super) fn seeds(shared: &Path, repo: &Path) -> io::Result<Vec<Seed>> {
    let mut seeds = Vec::new();
    let mut add = |target: &'static str, name: String, data: Vec<u8>| {
        seeds.push(Seed { target, name, data });
    };
    let vectors = shared.join("vectors");
    let configs = repo.join("configs");

    // KataGo's self-play configs (as written by KataGo, as our vector
    // generator used them) and ours.
    let selfplay = [
        configs.join("selfplay.toml"),
        vectors.join("configs").join("selfplay_vecgen.cfg"),
        vectors
            .join("npz")
            .join("selfplay_config_as_written_by_katago.cfg"),
        vectors.join("npz-more").join("selfplay.cfg"),
    ];
    for path in selfplay.iter().filter(|p| p.is_file()) {
        add("selfplay_settings", file_name(path), fs::read(path)?);
    }
    // A match reads the keys a gating reads, and the bots besides.
    for name in ["match.toml", "gatekeeper.toml"] {
        let path = configs.join(name);
        if path.is_file() {
            let data = fs::read(&path)?;
            add("match_settings", name.to_string(), data.clone());
            add("gatekeeper_settings", name.to_string(), data);
        }
    }

    // `-sprt` and `-bot` values as the README, the guides that show
    // `engine match` lines (docs/training.md, docs/RESULTS.md) and
    // configs/match.toml give them: the first line the `-sprt` value, then
    // one `-bot` per line.
    let docs = repo.join("docs");
    let with_match_lines = [
        repo.join("README.md"),
        docs.join("training.md"),
        docs.join("RESULTS.md"),
        configs.join("match.toml"),
    ];
    for path in with_match_lines {
        if !path.is_file() {
            continue;
        }
        let (sprts, bots) = short_form_values(&fs::read_to_string(&path)?);
        if bots.is_empty() {
            continue;
        }
        for (k, sprt) in sprts.iter().chain([&String::new()]).enumerate() {
            let data = format!("{sprt}\n{}\n", bots.join("\n")).into_bytes();
            add("match_args", format!("{}-{k}", file_name(&path)), data);
        }
    }

    // The `.npy` members of KataGo's npz files: each header with the start
    // of its data.
    for dir in [vectors.join("npz"), vectors.join("npz-more")] {
        for path in files_with(&dir, &["npz"])?.iter().take(1) {
            let mut zip = zip::ZipArchive::new(fs::File::open(path)?).map_err(io::Error::other)?;
            for i in 0..zip.len() {
                let mut member = zip.by_index(i).map_err(io::Error::other)?;
                let name = format!("{}-{}", file_name(path), member.name());
                let mut head = Vec::new();
                (&mut member).take(1024).read_to_end(&mut head)?;
                add("npy", name, head);
            }
        }
    }

    // What a shuffle of those files writes (`train.json`: the window of
    // rows it took) and a summary file listing them, as KataGo's
    // `summarize_old_selfplay_files.py` writes it.
    let mut total = 0u64;
    let mut summary = serde_json::Map::new();
    for dir in [vectors.join("npz"), vectors.join("npz-more")] {
        let mut entries = Vec::new();
        for path in files_with(&dir, &["npz"])? {
            let rows = read_npz_num_rows_bytes(&fs::read(&path)?, &file_name(&path))
                .map_err(io::Error::other)?;
            let mtime = fs::metadata(&path)?
                .modified()?
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            entries.push(serde_json::json!([file_name(&path), mtime, rows]));
            let start = total;
            total += rows as u64;
            let range = (start as i64, total as i64);
            add(
                "train_json",
                format!("{}.json", file_name(&path)),
                train_json_bytes(range),
            );
        }
        if entries.is_empty() {
            continue;
        }
        let dir = std::path::absolute(&dir)?;
        let one = serde_json::json!({
            "dir_mtime": 0.0,
            "filename_mtime_num_rowss": entries,
        });
        let text = serde_json::json!({ dir.to_string_lossy(): one.clone() }).to_string();
        add("shuffle_summary", file_name(&dir), text.into_bytes());
        summary.insert(dir.to_string_lossy().into_owned(), one);
    }
    let text = serde_json::Value::Object(summary).to_string();
    add("shuffle_summary", "both.json".into(), text.into_bytes());

    // Whole small nets, so that the round trip of `model_file` is reached:
    // the old-version fixtures KataGo was given (tests/data/katago_old_versions).
    for version in [3, 7] {
        let bytes = crate::nn::old_version_fixture(version).to_bytes();
        add("model_file", format!("old-version-{version}.bin"), bytes);
    }
    #[cfg(feature = "torch")]
    trainer_seeds(repo, &mut add)?;
    Ok(seeds)
}

/// The seeds that need the trainer (feature `torch`): the trainer's test
/// safetensors (weights of two small nets, no train state), a checkpoint
/// our writer makes of the first one's weights, and a random b1c6nbt net as
/// `engine export -random-init` writes it.
#[cfg(feature = "torch")]
fn trainer_seeds(
    repo: &Path,
    add: &mut impl FnMut(&'static str, String, Vec<u8>),
) -> io::Result<()> {
    let train = repo.join("tests").join("data").join("train");
    for name in ["parity_b1c6nbt.safetensors", "parity_b2c16.safetensors"] {
        let path = train.join(name);
        if !path.is_file() {
            continue;
        }
        let data = fs::read(&path)?;
        if name == "parity_b1c6nbt.safetensors" {
            add(
                "checkpoint",
                "checkpoint-b1c6nbt".into(),
                as_checkpoint(&data)?,
            );
        }
        add("checkpoint", name.to_string(), data);
    }
    let net =
        crate::train::random_net_bin_gz("b1c6nbt", 1, "fuzz-b1c6nbt").map_err(io::Error::other)?;
    add("model_file", "random-b1c6nbt.bin.gz".into(), net);
    Ok(())
}

/// The `-sprt` and `-bot` values in `text` (a README, a guide or a config
/// whose comments show `engine match` lines); a `-sprt` value is cut at its
/// first `[` (the optional part of docs/training.md's usage line).
fn short_form_values(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut sprts, mut bots) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            let value = pair[1].trim_start_matches('[');
            match pair[0].trim_start_matches('[') {
                "-bot" => bots.push(value.to_string()),
                "-sprt" => {
                    let cut = value.split('[').next().unwrap_or(value);
                    sprts.push(cut.trim_end_matches(']').to_string());
                }
                _ => {}
            }
        }
    }
    sprts.sort();
    sprts.dedup();
    bots.sort();
    bots.dedup();
    (sprts, bots)
}

/// A checkpoint (train state, the file's tensors as `model.*`) written by
/// [`Checkpoint::to_bytes`].
#[cfg(feature = "torch")]
fn as_checkpoint(safetensors: &[u8]) -> io::Result<Vec<u8>> {
    let st =
        SafeTensors::deserialize(safetensors).map_err(|e| io::Error::other(format!("{e:?}")))?;
    let mut tensors = BTreeMap::new();
    for (name, view) in st.tensors() {
        let t = tch::Tensor::try_from(view).map_err(io::Error::other)?;
        tensors.insert(format!("model.{name}"), t);
    }
    let ck = Checkpoint {
        state: TrainState {
            model_kind: "b1c6nbt".into(),
            global_step_samples: 256,
            global_step_batches: 1,
            total_num_data_rows: 1000,
            ..TrainState::default()
        },
        tensors,
    };
    ck.to_bytes().map_err(io::Error::other)
}
