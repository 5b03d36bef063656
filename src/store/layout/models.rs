//! Models folders: the nets of a run by name and age.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;

use crate::store::{Created, Store, StoreError, StoreErrorKind, StoreOp, StoreUrl};

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
    pub(super) store: Store,
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
