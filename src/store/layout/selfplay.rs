//! The self-play output folder: rows, games and configs per net, and the
//! names of their files.

use std::time::SystemTime;

use bytes::Bytes;

use super::is_usable_name;
use crate::store::{ObjectInfo, ObjectReader, Store, StoreError, StoreUrl};

/// The self-play output folder (`selfplay -output-dir`): per net, its
/// rows, games and config.
#[derive(Debug, Clone)]
pub struct SelfplayOut {
    pub(super) store: Store,
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
    pub fn reader(&self, file: &SelfplayFile) -> Result<ObjectReader, StoreError> {
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
