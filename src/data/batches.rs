//! Training batches from shuffled data, read ahead on a thread.
//!
//! KataGo's layout: `engine shuffle -out-dir PARENT/STAMP/train` (and
//! `.../val`) writes `PARENT/STAMP/train/dataB_J.npz` plus
//! `PARENT/STAMP/train.json` (`{"range": [start, end]}`), the last file it
//! writes. [`latest_shuffled_dir`] picks the newest complete `STAMP` as
//! KataGo's `train.py -latestdatadir PARENT` does, and [`BatchReader`]
//! yields whole batches file by file, dropping each file's incomplete tail
//! as KataGo's `read_npz_training_data` does.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;
use std::time::SystemTime;

use thiserror::Error;

use super::npz::read_npz;
use super::{NpzError, TrainingRows};

/// A shuffled data directory could not be listed or its summary read.
#[derive(Debug, Error)]
pub enum DataDirError {
    /// Listing or reading failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// `train.json` is not `{"range": [start, end]}`.
    #[error("{}: {why}", path.display())]
    BadSummary {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

/// One complete shuffle: `DIR/train/*.npz`, `DIR/val/*.npz` and the data
/// rows its window covers.
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffledData {
    /// The shuffle's directory (`PARENT/STAMP`).
    pub dir: PathBuf,
    /// `DIR/train/*.npz`, sorted by name.
    pub train_files: Vec<PathBuf>,
    /// `DIR/val/*.npz`, sorted by name (empty without a `val` dir).
    pub val_files: Vec<PathBuf>,
    /// `train.json`'s `range`: `(window start row, total data rows)`.
    pub range: (i64, i64),
}

/// The newest complete shuffle under `parent`: among subdirectories whose
/// names do not end in `.tmp` and that hold `train.json`, the one modified
/// last. `Ok(None)` when there is none yet.
pub fn latest_shuffled_dir(parent: &Path) -> Result<Option<ShuffledData>, DataDirError> {
    let io = |path: &Path, source| DataDirError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut best: Option<(SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(parent).map_err(|e| io(parent, e))? {
        let entry = entry.map_err(|e| io(parent, e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp") || !path.is_dir() || !path.join("train.json").is_file() {
            continue;
        }
        let mtime = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| io(&path, e))?;
        if best.as_ref().is_none_or(|(t, _)| mtime > *t) {
            best = Some((mtime, path));
        }
    }
    let Some((_, dir)) = best else {
        return Ok(None);
    };
    let json_path = dir.join("train.json");
    let text = std::fs::read_to_string(&json_path).map_err(|e| io(&json_path, e))?;
    let bad = |why: String| DataDirError::BadSummary {
        path: json_path.clone(),
        why,
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let range = v
        .get("range")
        .and_then(|r| r.as_array())
        .filter(|r| r.len() == 2)
        .and_then(|r| Some((r[0].as_i64()?, r[1].as_i64()?)))
        .ok_or_else(|| bad("expected {\"range\": [start, end]}".into()))?;
    let train_files = list_npz_files(&dir.join("train"))?;
    let val_dir = dir.join("val");
    let val_files = if val_dir.is_dir() {
        list_npz_files(&val_dir)?
    } else {
        Vec::new()
    };
    Ok(Some(ShuffledData {
        dir,
        train_files,
        val_files,
        range,
    }))
}

/// The `*.npz` files directly in `dir`, sorted by name (temporary
/// `*.npz.tmp` files do not match).
pub fn list_npz_files(dir: &Path) -> Result<Vec<PathBuf>, DataDirError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| DataDirError::Io {
            path: dir.to_path_buf(),
            source: e,
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "npz") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Batches of exactly `batch_size` rows from `files` in order, each file's
/// last `rows % batch_size` rows dropped. A reader thread stays up to
/// `prefetch` batches ahead. A file that cannot be read yields one `Err`
/// and the reader goes on with the next file; the consumer decides whether
/// to stop. Dropping the reader stops the thread.
///
/// ```no_run
/// # use engine::data::{latest_shuffled_dir, BatchReader};
/// # use std::path::Path;
/// let data = latest_shuffled_dir(Path::new("shuffleddata")).unwrap().unwrap();
/// for batch in BatchReader::new(data.train_files, 256) {
///     let batch = batch.unwrap(); // TrainingRows with num_rows == 256
///     # let _ = batch;
/// }
/// ```
pub struct BatchReader {
    rx: Option<Receiver<Result<TrainingRows, NpzError>>>,
    handle: Option<JoinHandle<()>>,
}

impl BatchReader {
    /// Reads `files` in order with 4 batches of read-ahead. Panics if
    /// `batch_size` is 0 (a caller bug).
    pub fn new(files: Vec<PathBuf>, batch_size: usize) -> Self {
        Self::with_prefetch(files, batch_size, 4)
    }

    /// [`BatchReader::new`] with `prefetch` batches of read-ahead (at
    /// least 1).
    pub fn with_prefetch(files: Vec<PathBuf>, batch_size: usize, prefetch: usize) -> Self {
        assert!(batch_size > 0, "batch_size must be positive");
        let (tx, rx) = sync_channel(prefetch.max(1));
        let handle = std::thread::Builder::new()
            .name("batch-reader".into())
            .spawn(move || {
                for f in files {
                    match read_npz(&f) {
                        Err(e) => {
                            if tx.send(Err(e)).is_err() {
                                return;
                            }
                        }
                        Ok(rows) => {
                            for b in 0..rows.num_rows / batch_size {
                                let batch = rows.slice(b * batch_size, (b + 1) * batch_size);
                                if tx.send(Ok(batch)).is_err() {
                                    return; // the reader was dropped
                                }
                            }
                        }
                    }
                }
            })
            .ok();
        BatchReader {
            rx: Some(rx),
            handle,
        }
    }
}

impl Iterator for BatchReader {
    type Item = Result<TrainingRows, NpzError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.rx.as_ref()?.recv().ok()
    }
}

impl Drop for BatchReader {
    fn drop(&mut self) {
        // Closing the channel makes the thread's next send fail.
        self.rx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::write_npz_atomic;

    fn rows_numbered(start: usize, n: usize) -> TrainingRows {
        let mut rows = TrainingRows::new(5);
        for r in 0..n {
            rows.push_zeroed_row();
            rows.row_mut(r).global_targets[0] = (start + r) as f32;
        }
        rows
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("engine-batches-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn batches_drop_each_files_tail() {
        let d = temp_dir("tail");
        write_npz_atomic(&d.join("a.npz"), &rows_numbered(0, 10)).unwrap();
        write_npz_atomic(&d.join("b.npz"), &rows_numbered(100, 7)).unwrap();
        write_npz_atomic(&d.join("c.npz"), &rows_numbered(200, 3)).unwrap();
        let files = list_npz_files(&d).unwrap();
        assert_eq!(files.len(), 3);
        let firsts: Vec<f32> = BatchReader::with_prefetch(files, 4, 1)
            .map(|b| {
                let b = b.unwrap();
                assert_eq!(b.num_rows, 4);
                b.global_targets_nc[0]
            })
            .collect();
        assert_eq!(firsts, [0.0, 4.0, 100.0]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn bad_files_yield_an_error_and_reading_goes_on() {
        let d = temp_dir("bad");
        std::fs::write(d.join("a.npz"), b"junk").unwrap();
        write_npz_atomic(&d.join("b.npz"), &rows_numbered(0, 2)).unwrap();
        let out: Vec<_> = BatchReader::new(list_npz_files(&d).unwrap(), 2).collect();
        assert_eq!(out.len(), 2);
        assert!(out[0].as_ref().is_err_and(|e| e.path.ends_with("a.npz")));
        assert!(out[1].is_ok());
        // Dropping a reader early stops its thread (no hang).
        let mut r = BatchReader::with_prefetch(vec![d.join("b.npz"); 50], 1, 1);
        assert!(r.next().is_some());
        drop(r);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn latest_complete_shuffle_is_chosen() {
        let parent = temp_dir("latest");
        assert_eq!(latest_shuffled_dir(&parent).unwrap(), None);
        for (name, complete) in [("old", true), ("new.tmp", true), ("newer", false)] {
            let d = parent.join(name);
            std::fs::create_dir_all(d.join("train")).unwrap();
            write_npz_atomic(&d.join("train/data0_0.npz"), &rows_numbered(0, 1)).unwrap();
            if complete {
                std::fs::write(d.join("train.json"), r#"{"range": [5, 1005]}"#).unwrap();
            }
        }
        let got = latest_shuffled_dir(&parent).unwrap().unwrap();
        assert_eq!(got.dir, parent.join("old"));
        assert_eq!(got.range, (5, 1005));
        assert_eq!(got.train_files, vec![parent.join("old/train/data0_0.npz")]);
        assert!(got.val_files.is_empty());
        std::fs::write(parent.join("newer/train.json"), "{}").unwrap();
        assert!(matches!(
            latest_shuffled_dir(&parent),
            Err(DataDirError::BadSummary { .. })
        ));
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
