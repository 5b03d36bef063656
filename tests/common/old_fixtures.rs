//! The fixture nets of model versions 3 to 7 (`engine::nn::old_version_fixture`),
//! built here rather than committed, and checked byte for byte against the
//! nets KataGo 1.17.2 answered for (`tests/data/katago_old_versions/fixtures.md5`).

// Each test file that includes this uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use md5::{Digest, Md5};

/// `tests/data/katago_old_versions`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/katago_old_versions")
}

/// The unpacked model file of `version`, after checking that it is the
/// one KataGo's reference answers were made with.
pub fn bytes(version: i32) -> Vec<u8> {
    let data = engine::nn::old_version_fixture(version).to_bytes();
    let sums = std::fs::read_to_string(dir().join("fixtures.md5")).expect("fixtures.md5");
    let name = format!("synthetic-v{version}");
    let want = sums
        .lines()
        .find_map(|l| {
            l.split_once("  ")
                .filter(|(_, n)| *n == name)
                .map(|(s, _)| s)
        })
        .unwrap_or_else(|| panic!("{name} is not in fixtures.md5"));
    let got = format!("{:x}", Md5::digest(&data));
    assert_eq!(
        got, want,
        "{name}: the net built today is not the one KataGo answered for (rerun scripts/old_version_fixtures.sh)"
    );
    data
}

/// The net of `version` written to a file of this process's temp folder
/// (`synthetic-vN.bin`), for the loaders and the engine binary; removed
/// when the value is dropped.
pub fn path(version: i32) -> FixtureFile {
    let folder = std::env::temp_dir().join(format!("engine-old-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("temp folder");
    let path = folder.join(format!("synthetic-v{version}.bin"));
    let tmp = folder.join(format!("synthetic-v{version}.bin.tmp"));
    std::fs::write(&tmp, bytes(version)).expect("write fixture");
    std::fs::rename(&tmp, &path).expect("rename fixture");
    FixtureFile(path)
}

/// A fixture net's file, removed (with its folder, once empty) on drop.
pub struct FixtureFile(PathBuf);

impl std::ops::Deref for FixtureFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for FixtureFile {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for FixtureFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        if let Some(folder) = self.0.parent() {
            // Fails while another fixture of this process is still there.
            let _ = std::fs::remove_dir(folder);
        }
    }
}
