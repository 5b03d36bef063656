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

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;

use super::{Created, ObjectInfo, Store, StoreError, StoreErrorKind, StoreOp, StoreUrl};

/// File names a model folder may hold, in the order they are preferred.
pub const MODEL_FILE_NAMES: [&str; 4] = ["model.bin.gz", "model.bin", "model.txt.gz", "model.txt"];

/// The file name a published model gets inside its folder.
pub const MODEL_FILE: &str = "model.bin.gz";

/// Extensions of bare model files at the top of a models folder.
const BARE_MODEL_EXTENSIONS: [&str; 4] = [".bin.gz", ".bin", ".txt.gz", ".txt"];

/// Whether `name` can name a model, a self-play folder or a shuffled
/// window: not empty, not hidden (`.x`), not temporary (`x.tmp`, `x#1`).
pub fn is_usable_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.ends_with(".tmp") && !name.contains('#')
}

/// What orders model names: samples and rows from `…-s<N>-d<M>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct TrainedAmount {
    /// Training samples the net has seen.
    pub samples: u64,
    /// Data rows there were when it was exported.
    pub rows: u64,
}

impl TrainedAmount {
    /// The amount a model name states (`kata1-b18c384nbt-s9996604416-d4316597426`
    /// gives 9996604416 samples, 4316597426 rows); zero when it states none.
    pub fn of_name(name: &str) -> TrainedAmount {
        let parse = || -> Option<TrainedAmount> {
            let (head, rows) = name.rsplit_once("-d")?;
            let (_, samples) = head.rsplit_once("-s")?;
            Some(TrainedAmount {
                samples: samples.parse().ok()?,
                rows: rows.parse().ok()?,
            })
        };
        parse().unwrap_or_default()
    }
}

/// The name an exported net gets: `<prefix>-s<samples>-d<rows>`.
pub fn trained_model_name(prefix: &str, samples: u64, rows: u64) -> String {
    format!("{prefix}-s{samples}-d{rows}")
}

/// One net in a models folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEntry {
    /// Its name: the sub-folder's, or a bare file's without extension.
    pub name: String,
    /// The network file's key, relative to the models folder.
    pub key: String,
    /// When the network file was written.
    pub modified: SystemTime,
    /// Whether it is a bare file at the top (not `NAME/model.bin.gz`).
    pub bare: bool,
}

impl ModelEntry {
    /// Newer-than order: trained amount, then write time, then name.
    pub fn cmp_age(&self, other: &ModelEntry) -> Ordering {
        TrainedAmount::of_name(&self.name)
            .cmp(&TrainedAmount::of_name(&other.name))
            .then(self.modified.cmp(&other.modified))
            .then(self.name.cmp(&other.name))
    }

    /// The file name of the network (for its format: `.txt` or binary).
    pub fn file_name(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or(&self.key)
    }
}

/// A models folder (`models/`, `modelstobetested/`, `rejectedmodels/`, or
/// any `-models-dir`): one sub-folder per net (`NAME/model.bin.gz`), or
/// bare `NAME.bin.gz` files.
#[derive(Debug, Clone)]
pub struct ModelsDir {
    store: Store,
}

impl ModelsDir {
    /// The models folder at `url`.
    pub fn open(url: &StoreUrl) -> Result<ModelsDir, StoreError> {
        Ok(ModelsDir {
            store: Store::open(url)?,
        })
    }

    /// The models folder in `store`'s root.
    pub fn new(store: Store) -> ModelsDir {
        ModelsDir { store }
    }

    /// Where it is.
    pub fn url(&self) -> &StoreUrl {
        self.store.url()
    }

    /// The full URL of a net's file, for messages.
    pub fn describe(&self, entry: &ModelEntry) -> String {
        self.store.describe(&entry.key)
    }

    /// Every net here, oldest first ([`ModelEntry::cmp_age`]).
    pub fn list(&self) -> Result<Vec<ModelEntry>, StoreError> {
        let mut by_name: BTreeMap<String, ModelEntry> = BTreeMap::new();
        for o in self.store.list("")? {
            let segments: Vec<&str> = o.key.split('/').collect();
            let entry = match segments.as_slice() {
                [file] => {
                    let Some(ext) = BARE_MODEL_EXTENSIONS.iter().find(|e| file.ends_with(*e))
                    else {
                        continue;
                    };
                    ModelEntry {
                        name: file[..file.len() - ext.len()].to_string(),
                        key: o.key.clone(),
                        modified: o.modified,
                        bare: true,
                    }
                }
                [dir, file] if MODEL_FILE_NAMES.contains(file) => ModelEntry {
                    name: dir.to_string(),
                    key: o.key.clone(),
                    modified: o.modified,
                    bare: false,
                },
                _ => continue,
            };
            if !is_usable_name(&entry.name) {
                continue;
            }
            let preferred = |e: &ModelEntry| {
                (
                    !e.bare,
                    MODEL_FILE_NAMES
                        .iter()
                        .position(|f| *f == e.file_name())
                        .map(|p| usize::MAX - p),
                )
            };
            match by_name.get(&entry.name) {
                Some(old) if preferred(old) >= preferred(&entry) => {}
                _ => {
                    by_name.insert(entry.name.clone(), entry);
                }
            }
        }
        let mut all: Vec<ModelEntry> = by_name.into_values().collect();
        all.sort_by(|a, b| a.cmp_age(b));
        Ok(all)
    }

    /// The newest net, or `None` when there is none.
    pub fn newest(&self) -> Result<Option<ModelEntry>, StoreError> {
        Ok(self.list()?.pop())
    }

    /// The net called `name`, if it is here.
    pub fn find(&self, name: &str) -> Result<Option<ModelEntry>, StoreError> {
        Ok(self.list()?.into_iter().find(|e| e.name == name))
    }

    /// The bytes of a net's file.
    pub fn read(&self, entry: &ModelEntry) -> Result<Bytes, StoreError> {
        self.store.get(&entry.key)
    }

    /// Adds a net as `NAME/model.bin.gz`, only if no net of that name is
    /// here: two trainers can never overwrite each other's net.
    pub fn publish(&self, name: &str, bytes: impl Into<Bytes>) -> Result<Created, StoreError> {
        if !is_usable_name(name) || name.contains('/') {
            return Err(StoreError::new(
                StoreOp::Create,
                self.store.describe(name),
                StoreErrorKind::InvalidUrl,
                "not a usable model name",
            ));
        }
        self.store.put_new(&format!("{name}/{MODEL_FILE}"), bytes)
    }

    /// Removes a net (its file; an emptied folder goes with it).
    pub fn remove(&self, entry: &ModelEntry) -> Result<(), StoreError> {
        self.store.delete(&entry.key)
    }

    /// Moves a net into `dest` (the gatekeeper's accept or reject): it is
    /// created there if absent, then removed here. A crash in between
    /// leaves it in both; the next move finds it in `dest` and only
    /// removes it here. A different net of the same name in `dest` is an
    /// error and nothing is removed.
    pub fn move_to(&self, entry: &ModelEntry, dest: &ModelsDir) -> Result<(), StoreError> {
        dest.store.put_new(&entry.key, self.read(entry)?)?;
        self.remove(entry)
    }
}

/// Reads a single network named by a path or URL (`-model`), local or
/// `s3://bucket/path/model.bin.gz`. Returns its bytes and the name to
/// show for it.
pub fn read_model_url(text: &str) -> Result<(Bytes, String), StoreError> {
    let url = StoreUrl::parse(text)?;
    let (parent, name) = url
        .split_last()
        .ok_or_else(|| StoreError::invalid_url(text, "names a folder root, not a network file"))?;
    let bytes = Store::open(&parent)?.get(&name)?;
    Ok((bytes, url.to_string()))
}

/// The self-play output folder (`selfplay -output-dir`): per net, its
/// rows, games and config.
#[derive(Debug, Clone)]
pub struct SelfplayOut {
    store: Store,
}

impl SelfplayOut {
    /// The output folder at `url`.
    pub fn open(url: &StoreUrl) -> Result<SelfplayOut, StoreError> {
        Ok(SelfplayOut {
            store: Store::open(url)?,
        })
    }

    /// Where it is.
    pub fn url(&self) -> &StoreUrl {
        self.store.url()
    }

    /// Writes rows as `MODEL/tdata/STEM.npz`.
    pub fn write_rows(
        &self,
        model: &str,
        stem: &str,
        npz: impl Into<Bytes>,
    ) -> Result<(), StoreError> {
        self.store.put(&format!("{model}/tdata/{stem}.npz"), npz)
    }

    /// Writes games as `MODEL/sgfs/STEM.sgfs`.
    pub fn write_games(
        &self,
        model: &str,
        stem: &str,
        sgfs: impl Into<Bytes>,
    ) -> Result<(), StoreError> {
        self.store.put(&format!("{model}/sgfs/{stem}.sgfs"), sgfs)
    }

    /// Writes the config that plays net `model` as
    /// `MODEL/selfplay-<unix seconds>.cfg`.
    pub fn write_config(&self, model: &str, text: impl Into<Bytes>) -> Result<(), StoreError> {
        let secs = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.store
            .put(&format!("{model}/selfplay-{secs}.cfg"), text)
    }
}

impl SelfplayOut {
    /// Every rows or games file, with its net and worker, sorted by key.
    pub fn data_files(&self) -> Result<Vec<SelfplayFile>, StoreError> {
        Ok(self
            .store
            .list("")?
            .into_iter()
            .filter_map(|info| {
                let mut parts = info.key.split('/');
                let (model, sub, name) = (parts.next()?, parts.next()?, parts.next()?);
                if parts.next().is_some() || !is_usable_name(model) {
                    return None;
                }
                let (kind, stem) = match sub {
                    "tdata" => (SelfplayFileKind::Rows, name.strip_suffix(".npz")?),
                    "sgfs" => (SelfplayFileKind::Games, name.strip_suffix(".sgfs")?),
                    _ => return None,
                };
                Some(SelfplayFile {
                    model: model.to_string(),
                    kind,
                    worker: worker_of_stem(stem).to_string(),
                    info,
                })
            })
            .collect())
    }

    /// The whole object of a data file.
    pub fn read(&self, file: &SelfplayFile) -> Result<Bytes, StoreError> {
        self.store.get(&file.info.key)
    }

    /// A seekable reader of a data file (an npz's header without the rest).
    pub fn reader(&self, file: &SelfplayFile) -> Result<super::ObjectReader, StoreError> {
        self.store.reader(&file.info.key)
    }

    /// The URL of a data file, for messages.
    pub fn describe(&self, file: &SelfplayFile) -> String {
        self.store.describe(&file.info.key)
    }
}

/// What a self-play data file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelfplayFileKind {
    /// Training rows (`tdata/*.npz`).
    Rows,
    /// Games, one SGF a line (`sgfs/*.sgfs`).
    Games,
}

/// One file of self-play output.
#[derive(Debug, Clone)]
pub struct SelfplayFile {
    /// The net that played it.
    pub model: String,
    /// Rows or games.
    pub kind: SelfplayFileKind,
    /// The worker that wrote it (`unknown` for names without one).
    pub worker: String,
    /// The object.
    pub info: ObjectInfo,
}

/// A self-play file's stem: `<worker>-<16 hex digits>`.
pub fn selfplay_file_stem(worker: &str, random: u64) -> String {
    format!("{worker}-{random:016X}")
}

/// The worker of a self-play file's stem; `unknown` for KataGo's bare
/// hex names.
pub fn worker_of_stem(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((worker, hex)) if !worker.is_empty() && hex.len() == 16 => worker,
        _ => "unknown",
    }
}

/// A worker name fit for file names: letters, digits and `.` kept, runs
/// of anything else become one `-` (never `_`, which KataGo's shuffle takes
/// for a temporary file).
pub fn sanitize_worker_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "worker".to_string()
    } else {
        out
    }
}

/// Every `*.npz` under `store`, walked one level at a time, sorted within
/// each level. A folder for which `substitute` returns entries is not
/// listed: those entries stand for its files (KataGo's shuffle summary
/// file of old, unchanging folders). Used by `engine shuffle`.
pub fn walk_npz_files(
    store: &Store,
    substitute: &mut dyn FnMut(&StoreUrl) -> Option<Vec<ObjectInfo>>,
) -> Result<Vec<ObjectInfo>, StoreError> {
    let mut found = Vec::new();
    let mut seen_local = std::collections::HashSet::new();
    walk(store, "", substitute, &mut found, &mut seen_local)?;
    Ok(found)
}

fn walk(
    store: &Store,
    prefix: &str,
    substitute: &mut dyn FnMut(&StoreUrl) -> Option<Vec<ObjectInfo>>,
    found: &mut Vec<ObjectInfo>,
    seen_local: &mut std::collections::HashSet<std::path::PathBuf>,
) -> Result<(), StoreError> {
    let here = store.url().join(prefix);
    // Local folders follow symlinks (as KataGo's os.walk with
    // followlinks); a cycle is walked once.
    if let Some(p) = here.local_path() {
        let canon = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if !seen_local.insert(canon) {
            return Ok(());
        }
    }
    let level = store.list_level(prefix)?;
    found.extend(
        level
            .objects
            .into_iter()
            .filter(|o| o.name().ends_with(".npz")),
    );
    for dir in level.dirs {
        let sub = if prefix.is_empty() {
            dir
        } else {
            format!("{prefix}/{dir}")
        };
        if let Some(entries) = substitute(&store.url().join(&sub)) {
            found.extend(entries.into_iter().map(|o| ObjectInfo {
                key: format!("{sub}/{}", o.key),
                ..o
            }));
            continue;
        }
        walk(store, &sub, substitute, found, seen_local)?;
    }
    Ok(())
}

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
    store: Store,
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
        let v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        let range = v
            .get("range")
            .and_then(|r| r.as_array())
            .filter(|r| r.len() == 2)
            .and_then(|r| Some((r[0].as_i64()?, r[1].as_i64()?)))
            .filter(|(a, b)| *a <= *b && *b >= 0)
            .ok_or_else(|| bad("expected {\"range\": [start, end]} with start <= end".into()))?;
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
        self.parent.put(
            &self.summary_key(),
            format!("{{\"range\": [{}, {}]}}", range.0, range.1).into_bytes(),
        )
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

/// A training run's root (`engine learn -store URL`): its folders, by
/// KataGo's layout (see the module docs).
#[derive(Debug, Clone)]
pub struct Run {
    store: Store,
}

impl Run {
    /// The run at `url` (a folder or `s3://bucket/prefix`).
    pub fn open(url: &StoreUrl) -> Result<Run, StoreError> {
        Ok(Run {
            store: Store::open(url)?,
        })
    }

    /// Where it is.
    pub fn url(&self) -> &StoreUrl {
        self.store.url()
    }

    fn models_dir(&self, sub: &str) -> Result<ModelsDir, StoreError> {
        Ok(ModelsDir::new(self.store.child(sub)?))
    }

    /// `models/`: accepted nets; self-play follows the newest.
    pub fn models(&self) -> Result<ModelsDir, StoreError> {
        self.models_dir("models")
    }

    /// `modelstobetested/`: trained nets waiting for the gatekeeper.
    pub fn candidates(&self) -> Result<ModelsDir, StoreError> {
        self.models_dir("modelstobetested")
    }

    /// `rejectedmodels/`: nets the gatekeeper turned down.
    pub fn rejected(&self) -> Result<ModelsDir, StoreError> {
        self.models_dir("rejectedmodels")
    }

    /// `selfplay/` (`engine selfplay -output-dir`).
    pub fn selfplay(&self) -> Result<SelfplayOut, StoreError> {
        Ok(SelfplayOut {
            store: self.store.child("selfplay")?,
        })
    }

    /// `shuffleddata/`: the shuffled windows.
    pub fn shuffled(&self) -> Result<ShuffledData, StoreError> {
        Ok(ShuffledData {
            store: self.store.child("shuffleddata")?,
        })
    }

    /// The shuffle output of window `name` (`shuffleddata/NAME/train`).
    pub fn shuffle_output(&self, name: &str) -> StoreUrl {
        self.url().join("shuffleddata").join(name).join("train")
    }

    /// `gatekeeper/`: gating games and `gatekeeper_log.tsv`.
    pub fn gatekeeper_log(&self) -> Result<Store, StoreError> {
        self.store.child("gatekeeper")
    }

    /// `train/`: the learner's trainer (checkpoint, metrics, loss plot).
    pub fn train_dir(&self) -> Result<Store, StoreError> {
        self.store.child("train")
    }

    /// `learn/`: the learner's ledger, lease and plot.
    pub fn learn(&self) -> Result<LearnFiles, StoreError> {
        Ok(LearnFiles {
            store: self.store.child("learn")?,
        })
    }
}

/// The learner's own objects (`RUN/learn/`): one ledger object per
/// generation, its leases and the progress plot.
#[derive(Debug, Clone)]
pub struct LearnFiles {
    store: Store,
}

/// Digits of the generation and lease numbers in keys (sortable names).
const SEQUENCE_DIGITS: usize = 6;

fn sequence_key(dir: &str, n: u64, ext: &str) -> String {
    format!("{dir}/{n:0w$}{ext}", w = SEQUENCE_DIGITS)
}

impl LearnFiles {
    /// Where it is.
    pub fn url(&self) -> &StoreUrl {
        self.store.url()
    }

    /// The numbers of the objects `DIR/<NNNNNN>EXT`, ascending.
    fn numbers(&self, dir: &str, ext: &str) -> Result<Vec<u64>, StoreError> {
        let mut out: Vec<u64> = self
            .store
            .list_level(dir)?
            .objects
            .iter()
            .filter_map(|o| o.name().strip_suffix(ext)?.parse().ok())
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// Generations with a ledger object, ascending.
    pub fn generations(&self) -> Result<Vec<u64>, StoreError> {
        self.numbers("generations", ".json")
    }

    /// The ledger object of generation `g`.
    pub fn read_generation(&self, g: u64) -> Result<Bytes, StoreError> {
        self.store.get(&sequence_key("generations", g, ".json"))
    }

    /// Writes the ledger object of generation `g`, create-if-absent.
    pub fn write_generation(&self, g: u64, bytes: impl Into<Bytes>) -> Result<Created, StoreError> {
        self.store
            .put_new(&sequence_key("generations", g, ".json"), bytes)
    }

    /// The URL of generation `g`'s ledger object, for messages.
    pub fn describe_generation(&self, g: u64) -> String {
        self.store
            .describe(&sequence_key("generations", g, ".json"))
    }

    /// Lease numbers taken so far, ascending.
    pub fn leases(&self) -> Result<Vec<u64>, StoreError> {
        self.numbers("lease", ".json")
    }

    /// Takes lease `n`, create-if-absent: of two learners taking the same
    /// number, one gets [`StoreErrorKind::AlreadyExists`].
    pub fn create_lease(&self, n: u64, bytes: impl Into<Bytes>) -> Result<Created, StoreError> {
        self.store
            .put_new(&sequence_key("lease", n, ".json"), bytes)
    }

    /// Lease `n`'s object.
    pub fn read_lease(&self, n: u64) -> Result<Bytes, StoreError> {
        self.store.get(&sequence_key("lease", n, ".json"))
    }

    /// Writes lease `n`'s heartbeat.
    pub fn write_heartbeat(&self, n: u64, bytes: impl Into<Bytes>) -> Result<(), StoreError> {
        self.store.put(&sequence_key("lease", n, ".alive"), bytes)
    }

    /// Lease `n`'s heartbeat, if it has one.
    pub fn read_heartbeat(&self, n: u64) -> Result<Option<Bytes>, StoreError> {
        self.store.get_opt(&sequence_key("lease", n, ".alive"))
    }

    /// Writes the progress plot; returns its URL.
    pub fn write_plot(&self, svg: impl Into<Bytes>) -> Result<String, StoreError> {
        self.store.put("progress.svg", svg)?;
        Ok(self.store.describe("progress.svg"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
