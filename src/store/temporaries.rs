//! Local folders: temporary files of interrupted writes, and the empty
//! folders a delete leaves.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use super::STALE_TEMPORARY_AGE;

/// After deleting `root/key`, removes the folders of `key` that are now
/// empty, deepest first, never `root` itself.
pub(super) fn remove_empty_parents(root: &Path, key: &str) {
    let segments: Vec<&str> = key.trim_matches('/').split('/').collect();
    for depth in (1..segments.len()).rev() {
        let dir: PathBuf = segments[..depth]
            .iter()
            .fold(root.to_path_buf(), |p, s| p.join(s));
        if std::fs::remove_dir(&dir).is_err() {
            break; // not empty (or already gone): stop climbing
        }
    }
}

/// Removes, once per process, the temporary files (`NAME#N`) that writes
/// interrupted more than [`STALE_TEMPORARY_AGE`] ago left directly in
/// `dir`. Failures only leave litter, which listing ignores anyway.
pub(super) fn remove_stale_temporaries_once(dir: &Path) {
    static DONE: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(HashSet::new()));
    let first = done
        .lock()
        .map(|mut seen| seen.insert(dir.to_path_buf()))
        .unwrap_or(false);
    if first {
        remove_temporaries_in(dir, STALE_TEMPORARY_AGE, false);
    }
}

/// Whether a file name is a local store's temporary name (`NAME#123`).
pub(crate) fn is_temporary_name(name: &str) -> bool {
    name.rsplit_once('#')
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Removes the temporary files at least `older_than` old in `dir` (and
/// below it with `recursive`); returns how many.
pub(super) fn remove_temporaries_in(dir: &Path, older_than: Duration, recursive: bool) -> usize {
    let mut removed = 0;
    let mut stack = vec![dir.to_path_buf()];
    let now = SystemTime::now();
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            if ft.is_dir() {
                if recursive {
                    stack.push(path);
                }
            } else if ft.is_file() && is_temporary_name(&e.file_name().to_string_lossy()) {
                let old = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|age| age >= older_than);
                if old && std::fs::remove_file(&path).is_ok() {
                    removed += 1;
                }
            }
        }
    }
    removed
}
