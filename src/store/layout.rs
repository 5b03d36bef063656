//! The keys of a training run, KataGo's layout, and the one definition of
//! "newest". No other code builds a run's keys, lists its folders or picks
//! an entry by age.
//!
//! ```text
//! RUN/models/<name>/model.bin.gz           accepted nets (self-play follows the newest)
//! RUN/modelstobetested/<name>/model.bin.gz nets exported by training, not yet gated
//! RUN/rejectedmodels/<name>/model.bin.gz   nets the gatekeeper turned down
//! RUN/selfplay/<name>/tdata/<HEX>.npz      training rows of net <name>
//! RUN/selfplay/<name>/sgfs/<HEX>.sgfs      their games
//! RUN/selfplay/<name>/selfplay-<time>.cfg  the config that played them
//! RUN/shuffleddata/<stamp>/train/dataB_J.npz (+ dataB_J.json) one shuffled window;
//! RUN/shuffleddata/<stamp>/train.json      written last: the window is whole
//! RUN/gatekeeper/gatekeeper_log.tsv        gating decisions (+ each gating's games)
//! RUN/train/checkpoint.safetensors         the learner's trainer (+ metrics.jsonl, loss.svg)
//! RUN/learn/generations/<NNNNNN>.json      the learner's ledger: one object per generation
//! RUN/learn/lease/<NNNNNN>.json (+ .alive) who is the learner, and its heartbeat
//! RUN/learn/progress.svg                   loss and Elo per generation
//! ```
//!
//! Self-play files are named `<worker>-<HEX>` (`.npz`, `.sgfs`): the
//! worker that wrote them (`[A-Za-z0-9.]` words joined by `-`) and 16
//! random hex digits.
//!
//! Each folder above is what one KataGo flag names (`-models-dir`,
//! `-output-dir`, `-latestdatadir`, ...), so every type here is opened at
//! such a URL and knows only the keys below it.
//!
//! **Model names** sort by what they say: KataGo's trainer names a net
//! `<prefix>-s<samples>-d<rows>`, so the newest net is the one trained on
//! the most samples (then rows); names without those numbers (a random
//! first net, a net copied in by hand) count as 0 and fall back to the
//! time the object was written, then to the name. Names that start with
//! `.`, end in `.tmp` or hold `#` are never models (temporary names of
//! this or older versions, or of other tools).
mod models;
mod run;
mod selfplay;
mod shuffled;

pub use models::{
    is_usable_name, read_model_url, trained_model_name, ModelEntry, ModelsDir, TrainedAmount,
    MODEL_FILE, MODEL_FILE_NAMES,
};
pub use run::{LearnFiles, Run};
pub use selfplay::{
    sanitize_worker_name, selfplay_file_stem, walk_npz_files, worker_of_stem, SelfplayFile,
    SelfplayFileKind, SelfplayOut,
};
pub use shuffled::{
    parse_train_json, train_json_bytes, ShuffleOutput, ShuffledData, ShuffledWindow, WindowError,
    WindowFile,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, StoreErrorKind, StoreUrl};
    use std::path::PathBuf;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("engine-layout-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn model_names_order_by_training_then_time() {
        assert_eq!(
            TrainedAmount::of_name("kata1-b18c384nbt-s9996604416-d4316597426"),
            TrainedAmount {
                samples: 9996604416,
                rows: 4316597426
            }
        );
        assert_eq!(
            TrainedAmount::of_name("b4c32-random"),
            TrainedAmount::default()
        );
        assert_eq!(TrainedAmount::of_name("x-sA-d3"), TrainedAmount::default());
        assert_eq!(trained_model_name("b2c16", 512, 300), "b2c16-s512-d300");
        assert!(is_usable_name("b2c16-s512-d300"));
        for bad in [".random.tmp", "x.tmp", ".hidden", "x#1", ""] {
            assert!(!is_usable_name(bad), "{bad}");
        }
    }

    #[test]
    fn models_dir_lists_newest_publishes_and_moves() {
        let dir = scratch("models");
        let s = Store::open_path(&dir).unwrap();
        let models = ModelsDir::new(s.child("models").unwrap());
        let tested = ModelsDir::new(s.child("modelstobetested").unwrap());
        assert!(models.newest().unwrap().is_none());
        // Names with numbers sort by them, whatever the write order.
        tested.publish("b2c16-s2000-d90", b"late".to_vec()).unwrap();
        tested
            .publish("b2c16-s1000-d50", b"early".to_vec())
            .unwrap();
        s.put(
            "modelstobetested/.random.tmp/model.bin.gz",
            b"half".to_vec(),
        )
        .unwrap();
        s.put("modelstobetested/x.tmp/model.bin.gz", b"half".to_vec())
            .unwrap();
        s.put("modelstobetested/notes.txt.md", b"not a net".to_vec())
            .unwrap();
        s.put("modelstobetested/bare.bin.gz", b"bare".to_vec())
            .unwrap();
        let names: Vec<String> = tested.list().unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["bare", "b2c16-s1000-d50", "b2c16-s2000-d90"]);
        let newest = tested.newest().unwrap().unwrap();
        assert_eq!(&tested.read(&newest).unwrap()[..], b"late");
        // Create-if-absent.
        let e = tested
            .publish("b2c16-s2000-d90", b"other".to_vec())
            .unwrap_err();
        assert_eq!(e.kind, StoreErrorKind::AlreadyExists);
        assert!(tested.publish("bad.tmp", b"x".to_vec()).is_err());
        // Moving: whole, and a crash between copy and delete is finished
        // by the next move.
        tested.move_to(&newest, &models).unwrap();
        let moved = models.find("b2c16-s2000-d90").unwrap().unwrap();
        assert_eq!(moved.key, "b2c16-s2000-d90/model.bin.gz");
        assert!(tested.find("b2c16-s2000-d90").unwrap().is_none());
        assert!(!dir.join("modelstobetested/b2c16-s2000-d90").exists());
        let older = tested.find("b2c16-s1000-d50").unwrap().unwrap();
        s.put("models/b2c16-s1000-d50/model.bin.gz", b"early".to_vec())
            .unwrap();
        tested.move_to(&older, &models).unwrap();
        assert!(tested.find("b2c16-s1000-d50").unwrap().is_none());
        // The same name with other bytes is refused and nothing is lost.
        let bare = tested.find("bare").unwrap().unwrap();
        s.put("models/bare.bin.gz", b"different".to_vec()).unwrap();
        assert!(tested.move_to(&bare, &models).is_err());
        assert!(tested.find("bare").unwrap().is_some());
        let names: Vec<String> = models.list().unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["bare", "b2c16-s1000-d50", "b2c16-s2000-d90"]);
        // A single file by path or file:// URL.
        let (bytes, shown) =
            read_model_url(&format!("file://{}/models/bare.bin.gz", dir.display())).unwrap();
        assert_eq!(
            (&bytes[..], shown.ends_with("models/bare.bin.gz")),
            (&b"different"[..], true)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn shuffled_windows_newest_whole_and_bad_summaries() {
        let dir = scratch("windows");
        let data = ShuffledData::open(&StoreUrl::Local(dir.clone())).unwrap();
        assert!(data.newest().unwrap().is_none());
        let out =
            |n: &str| ShuffleOutput::open(&StoreUrl::Local(dir.join(n).join("train"))).unwrap();
        let a = out("20260101-000000");
        a.write_file(&ShuffleOutput::file_name(0, 0), b"npz".to_vec(), 7)
            .unwrap();
        assert!(!a.is_finished().unwrap());
        assert!(
            data.newest().unwrap().is_none(),
            "no summary yet: not whole"
        );
        a.finish((3, 10)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = out("20260101-000100");
        b.write_file("data0_0.npz", b"npz".to_vec(), 5).unwrap();
        b.write_file("data1_0.npz", b"npz".to_vec(), 6).unwrap();
        // An interrupted one, newer: never chosen.
        out("20260101-000200")
            .write_file("data0_0.npz", b"x".to_vec(), 1)
            .unwrap();
        assert_eq!(data.newest().unwrap().unwrap().name, "20260101-000000");
        b.finish((0, 11)).unwrap();
        let w = data.newest().unwrap().unwrap();
        assert_eq!(w.name, "20260101-000100");
        assert_eq!(w.range, (0, 11));
        assert_eq!(
            w.train,
            [
                WindowFile {
                    key: "20260101-000100/train/data0_0.npz".into(),
                    rows: Some(5)
                },
                WindowFile {
                    key: "20260101-000100/train/data1_0.npz".into(),
                    rows: Some(6)
                },
            ]
        );
        assert!(w.val.is_empty());
        // A bad summary is an error, not an empty window.
        data.store()
            .put("20260101-000100/train.json", b"{\"range\": [5]}".to_vec())
            .unwrap();
        assert!(matches!(data.newest(), Err(WindowError::BadSummary { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
