//! Shuffled windows: the parent folder of windows, one window's files, and
//! where a shuffle writes.

use bytes::Bytes;

use super::is_usable_name;
use crate::store::{Store, StoreError, StoreUrl};

/// Training files of one shuffled window with the rows each holds.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFile {
    /// The key, relative to the shuffled-data parent.
    pub key: String,
    /// Rows, from the `dataB_J.json` beside it; `None` if that is missing.
    pub rows: Option<u64>,
}

/// One whole shuffled window.
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffledWindow {
    /// The window's name (`<stamp>`).
    pub name: String,
    /// `NAME/train/*.npz`, by name.
    pub train: Vec<WindowFile>,
    /// `NAME/val/*.npz`, by name (empty without validation data).
    pub val: Vec<WindowFile>,
    /// `train.json`'s `range`: `(window start row, total data rows)`.
    pub range: (i64, i64),
}

/// Why a shuffled window could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `train.json` is not `{"range": [start, end]}` with `0 <= start <= end`.
    #[error("{target}: {why}")]
    BadSummary {
        /// The object's URL.
        target: String,
        /// What is wrong.
        why: String,
    },
}

/// The parent of shuffled windows (`-latestdatadir`, `RUN/shuffleddata`).
#[derive(Debug, Clone)]
pub struct ShuffledData {
    pub(super) store: Store,
}

impl ShuffledData {
    /// The parent at `url`.
    pub fn open(url: &StoreUrl) -> Result<ShuffledData, StoreError> {
        Ok(ShuffledData {
            store: Store::open(url)?,
        })
    }

    /// Where it is.
    pub fn url(&self) -> &StoreUrl {
        self.store.url()
    }

    /// The store, for reading a window's files by key.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Names of the whole windows (a `NAME/train.json` is there), oldest
    /// first by the time `train.json` was written (it is written last),
    /// then by name.
    pub fn complete_windows(&self) -> Result<Vec<String>, StoreError> {
        let mut whole = Vec::new();
        for name in self.store.list_dirs("")? {
            if !is_usable_name(&name) {
                continue;
            }
            if let Some(o) = self.store.head(&format!("{name}/train.json"))? {
                whole.push((o.modified, name));
            }
        }
        whole.sort();
        Ok(whole.into_iter().map(|(_, n)| n).collect())
    }

    /// The newest whole window, as KataGo's `train.py -latestdatadir`
    /// picks it; `None` when there is none yet.
    pub fn newest(&self) -> Result<Option<ShuffledWindow>, WindowError> {
        match self.complete_windows()?.pop() {
            None => Ok(None),
            Some(name) => self.window(&name).map(Some),
        }
    }

    /// The window `name` (which must be whole).
    pub fn window(&self, name: &str) -> Result<ShuffledWindow, WindowError> {
        let summary_key = format!("{name}/train.json");
        let text = self.store.get(&summary_key)?;
        let bad = |why: String| WindowError::BadSummary {
            target: self.store.describe(&summary_key),
            why,
        };
        let range = parse_train_json(&text).map_err(bad)?;
        Ok(ShuffledWindow {
            name: name.to_string(),
            train: self.window_files(&format!("{name}/train"))?,
            val: self.window_files(&format!("{name}/val"))?,
            range,
        })
    }

    fn window_files(&self, prefix: &str) -> Result<Vec<WindowFile>, StoreError> {
        let level = self.store.list_level(prefix)?;
        let mut files = Vec::new();
        for o in &level.objects {
            let Some(stem) = o.name().strip_suffix(".npz") else {
                continue;
            };
            let json_key = format!("{prefix}/{stem}.json");
            let rows = if level.objects.iter().any(|j| j.key == json_key) {
                self.store
                    .get(&json_key)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                    .and_then(|v| v.get("num_rows")?.as_u64())
            } else {
                None
            };
            files.push(WindowFile {
                key: o.key.clone(),
                rows,
            });
        }
        Ok(files)
    }
}

/// The `range` of a window's `train.json` (`{"range": [start, end]}`,
/// `start <= end`, `end >= 0`): `(window start row, total data rows)`.
/// The error says what is wrong.
pub fn parse_train_json(bytes: &[u8]) -> Result<(i64, i64), String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    v.get("range")
        .and_then(|r| r.as_array())
        .filter(|r| r.len() == 2)
        .and_then(|r| Some((r[0].as_i64()?, r[1].as_i64()?)))
        .filter(|(a, b)| *a <= *b && *b >= 0)
        .ok_or_else(|| "expected {\"range\": [start, end]} with start <= end".into())
}

/// The bytes of a window's `train.json` (`OUT.json`) for `range`, as the
/// shuffle writes them and [`parse_train_json`] reads them.
pub fn train_json_bytes(range: (i64, i64)) -> Vec<u8> {
    format!("{{\"range\": [{}, {}]}}", range.0, range.1).into_bytes()
}

/// Where `engine shuffle -out-dir URL` writes: the files go under `URL/`,
/// the summary `URL.json` beside it (KataGo's `shuffle.py` layout: the
/// window is `PARENT/STAMP` with `train/` and `train.json`).
#[derive(Debug, Clone)]
pub struct ShuffleOutput {
    parent: Store,
    name: String,
}

impl ShuffleOutput {
    /// The output at `url`.
    pub fn open(url: &StoreUrl) -> Result<ShuffleOutput, StoreError> {
        let (parent, name) = url.split_last().ok_or_else(|| {
            StoreError::invalid_url(&url.to_string(), "-out-dir cannot be a root")
        })?;
        Ok(ShuffleOutput {
            parent: Store::open(&parent)?,
            name,
        })
    }

    /// The output folder's URL.
    pub fn url(&self) -> StoreUrl {
        self.parent.url().join(&self.name)
    }

    /// The summary object's URL (`URL.json`).
    pub fn summary_url(&self) -> String {
        self.parent.describe(&self.summary_key())
    }

    fn summary_key(&self) -> String {
        format!("{}.json", self.name)
    }

    /// The key, relative to the output folder, of output file `b`, `j`.
    pub fn file_name(bucket: usize, index: usize) -> String {
        format!("data{bucket}_{index}.npz")
    }

    /// Whether the summary exists (the output is whole).
    pub fn is_finished(&self) -> Result<bool, StoreError> {
        self.parent.exists(&self.summary_key())
    }

    /// Names of what is in the output folder now.
    pub fn existing(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .parent
            .list(&self.name)?
            .into_iter()
            .map(|o| o.key[self.name.len() + 1..].to_string())
            .collect())
    }

    /// Removes what interrupted writes of an earlier run of this shuffle
    /// left in the output folder (temporary files).
    pub fn remove_temporaries(&self) -> Result<(), StoreError> {
        self.parent.remove_temporaries(&self.name)
    }

    /// Removes an object of the output folder.
    pub fn remove(&self, name: &str) -> Result<(), StoreError> {
        self.parent.delete(&format!("{}/{name}", self.name))
    }

    /// Writes an output file (`name` from [`ShuffleOutput::file_name`]) and
    /// its row count beside it (`dataB_J.json`, `{"num_rows": n}`).
    pub fn write_file(
        &self,
        name: &str,
        npz: impl Into<Bytes>,
        rows: usize,
    ) -> Result<(), StoreError> {
        let stem = name.strip_suffix(".npz").unwrap_or(name);
        self.parent.put(
            &format!("{}/{stem}.json", self.name),
            format!("{{\"num_rows\": {rows}}}").into_bytes(),
        )?;
        self.parent.put(&format!("{}/{name}", self.name), npz)
    }

    /// Writes the summary, last: it marks the output whole.
    pub fn finish(&self, range: (i64, i64)) -> Result<(), StoreError> {
        self.parent
            .put(&self.summary_key(), train_json_bytes(range))
    }
}

impl ShuffledData {
    /// Removes every window but `keep` (and its output's leftovers): a
    /// learner keeps only the window it trains on.
    pub fn remove_all_but(&self, keep: &str) -> Result<(), StoreError> {
        for name in self.store.list_dirs("")? {
            if name != keep {
                self.store.delete_prefix(&name)?;
            }
        }
        Ok(())
    }
}
