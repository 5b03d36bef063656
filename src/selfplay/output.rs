//! Self-play's non-`.npz` files (SGF lines, the config copy), written to a
//! temporary name in the same folder, synced and renamed, so that a crash
//! leaves only whole files. Training rows go through
//! [`crate::data::write_npz_atomic`].

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: a temporary file beside it,
/// synced, then renamed over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = dir.join(format!("{name}.tmp"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    // Make the rename itself durable.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_leaves_only_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("selfplay-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.sgfs");
        write_atomically(&path, b"(;FF[4])\n").unwrap();
        write_atomically(&path, b"(;FF[4]GM[1])\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"(;FF[4]GM[1])\n");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
