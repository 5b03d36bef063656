//! A run's files and objects: one front door over the `object_store` crate
//! for a local folder or an S3-compatible bucket.
//!
//! [`Store`] is a folder-like root ([`StoreUrl`]: a plain path,
//! `file:///abs/path` or `s3://bucket/prefix`) with the few operations a
//! training run needs, all synchronous for the callers (an internal tokio
//! runtime drives `object_store`):
//!
//! - [`Store::put`]: write a whole object atomically. A folder writes a
//!   temporary name beside the target (`NAME#N`), syncs it and renames it
//!   (`object_store`'s local store with fsync on); S3 writes with one PUT.
//!   Either way a reader sees the old object or the whole new one, never
//!   part of one, whatever kills the writer.
//! - [`Store::put_new`]: create-if-absent (S3 `If-None-Match: *`, a hard
//!   link on a folder), so two writers can never overwrite each other.
//! - [`Store::get`], [`Store::head`], [`Store::list`] (a prefix, every
//!   level below it), [`Store::list_dirs`] (one level), [`Store::delete`].
//!
//! Keys are `/`-separated and relative to the store's root. Only
//! [`layout`] knows which keys a run uses (models, self-play data,
//! shuffled windows) and what "newest" means; every command goes through
//! it, so the same code serves a laptop's folder and a fleet's bucket.
//!
//! S3 is configured from the standard environment that `object_store`'s
//! S3 builder reads: `AWS_ENDPOINT` (e.g. `http://127.0.0.1:8333` for a
//! MinIO or SeaweedFS server), `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` (default
//! `us-east-1`) and `AWS_ALLOW_HTTP=true` for a plain-http endpoint.
//! Transient failures (connection refused, timeouts, 5xx, 429) are retried
//! with exponential backoff for up to `ENGINE_STORE_RETRY_SECONDS` seconds
//! (default [`DEFAULT_RETRY_SECONDS`]); a permanent one (wrong key, missing
//! bucket) fails at once with a message naming the URL.

mod error;
pub mod layout;
mod reader;
mod temporaries;
mod url;
mod worker;

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::path::{Path as ObjPath, PathPart};
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use error::error_chain;
#[cfg(test)]
use error::shorten_xml_error;
pub use error::{StoreError, StoreErrorKind, StoreOp};
pub use reader::ObjectReader;
#[cfg(test)]
use temporaries::is_temporary_name;
use temporaries::{remove_empty_parents, remove_stale_temporaries_once, remove_temporaries_in};
pub use url::StoreUrl;
pub use worker::{worker_name, WORKER_NAME_ENV};

/// How long transient failures of an S3 request are retried by default.
pub const DEFAULT_RETRY_SECONDS: u64 = 300;

/// The environment variable that overrides [`DEFAULT_RETRY_SECONDS`].
pub const RETRY_SECONDS_ENV: &str = "ENGINE_STORE_RETRY_SECONDS";

/// Testing only: `N` or `TEXT:N`. The process kills itself with SIGKILL
/// right after its `N`-th write (put, create-if-absent or delete) went
/// through, counting only writes whose URL contains `TEXT` when one is
/// given (`shuffleddata/:2`: in the middle of a shuffle's output), so a
/// test can stage `kill -9` at a chosen write of a command.
pub const TEST_KILL_AFTER_WRITES_ENV: &str = "ENGINE_TEST_KILL_AFTER_WRITES";

/// Counts this process's writes for [`TEST_KILL_AFTER_WRITES_ENV`].
fn count_write_for_kill_test(url: impl FnOnce() -> String) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SPEC: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let spec = SPEC.get_or_init(|| {
        let v = std::env::var(TEST_KILL_AFTER_WRITES_ENV).ok()?;
        let (text, n) = v.rsplit_once(':').unwrap_or(("", &v));
        Some((text.to_string(), n.parse().ok()?))
    });
    let Some((text, limit)) = spec else {
        return;
    };
    let url = url();
    if url.contains(text.as_str()) && WRITES.fetch_add(1, Ordering::SeqCst) + 1 >= *limit {
        eprintln!(
            "{TEST_KILL_AFTER_WRITES_ENV}: killing this process (SIGKILL) after writing {url}"
        );
        let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), nix::sys::signal::SIGKILL);
    }
}

/// A temporary file of an interrupted local write is removed, when a
/// process first writes into its folder, once it is this old: writes are
/// whole objects from memory and take seconds, so an older one belongs to
/// a dead process, whichever machine of a shared folder it ran on.
pub const STALE_TEMPORARY_AGE: Duration = Duration::from_secs(3600);

/// Facts about one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    /// The key, relative to the store that listed it.
    pub key: String,
    /// Size in bytes.
    pub size: u64,
    /// When it was last written (the server's clock for S3).
    pub modified: SystemTime,
}

impl ObjectInfo {
    /// The last segment of the key.
    pub fn name(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or(&self.key)
    }
}

/// One level of a store ([`Store::list_level`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Level {
    /// Objects directly at this level, keys relative to the store.
    pub objects: Vec<ObjectInfo>,
    /// Names of the "folders" one level down.
    pub dirs: Vec<String>,
}

/// What [`Store::put_new`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    /// The object was written.
    New,
    /// The object was already there with the same bytes (a retried write
    /// whose first try arrived).
    AlreadyThere,
}

/// A folder or bucket prefix holding a run's objects. Cheap to clone;
/// clones share the connection pool.
#[derive(Clone)]
pub struct Store {
    url: StoreUrl,
    backend: Arc<dyn ObjectStore>,
    /// The store root inside `backend`.
    root: ObjPath,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.url)
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        // Store calls come from many plain threads; two workers keep the
        // S3 connections and local-file blocking calls moving. A runtime
        // that cannot start (no threads left) is not recoverable.
        #[allow(clippy::expect_used)]
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("store-io")
            .enable_all()
            .build()
            .expect("starting the store's I/O runtime")
    })
}

fn block_on<F: Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

/// Retry window from [`RETRY_SECONDS_ENV`], or the default.
fn retry_window() -> Result<Duration, StoreError> {
    match std::env::var(RETRY_SECONDS_ENV) {
        Err(_) => Ok(Duration::from_secs(DEFAULT_RETRY_SECONDS)),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                StoreError::invalid_url(
                    &format!("{RETRY_SECONDS_ENV}={v}"),
                    "expected a number of seconds",
                )
            }),
    }
}

/// Checks a relative key: `/`-separated, no empty, `.` or `..` segments,
/// no control characters, no `#` (a folder's temporary names use it).
fn key_path(key: &str) -> Result<ObjPath, String> {
    let key = key.trim_matches('/');
    if key.is_empty() {
        return Ok(ObjPath::default());
    }
    for seg in key.split('/') {
        if seg.is_empty() || seg == "." || seg == ".." {
            return Err(format!("bad key {key:?}: empty, '.' or '..' segment"));
        }
        if seg.chars().any(|c| c.is_control() || c == '#' || c == '\\') {
            return Err(format!("bad key {key:?}: control character, '#' or '\\'"));
        }
    }
    ObjPath::parse(key).map_err(|e| format!("bad key {key:?}: {e}"))
}

impl Store {
    /// Opens the store at `url`. A folder need not exist yet (it is made
    /// by the first write). Opening S3 checks the configuration, not the
    /// network: the first operation reaches the server.
    pub fn open(url: &StoreUrl) -> Result<Store, StoreError> {
        match url {
            StoreUrl::Local(dir) => {
                let backend = object_store::local::LocalFileSystem::new().with_fsync(true);
                let root = ObjPath::from_iter(dir.iter().filter_map(|c| {
                    let c = c.to_string_lossy();
                    (c != "/").then(|| PathPart::from(c.into_owned()))
                }));
                Ok(Store {
                    url: url.clone(),
                    backend: Arc::new(backend),
                    root,
                })
            }
            StoreUrl::S3 { bucket, prefix } => {
                let retry = object_store::RetryConfig {
                    backoff: object_store::BackoffConfig::default(),
                    // The window, not a count, bounds the retries.
                    max_retries: 10_000,
                    retry_timeout: retry_window()?,
                };
                let backend = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_retry(retry)
                    .build()
                    .map_err(|e| {
                        StoreError::new(
                            StoreOp::Open,
                            url.to_string(),
                            StoreErrorKind::InvalidUrl,
                            error_chain(&e),
                        )
                    })?;
                let root = ObjPath::parse(prefix)
                    .map_err(|e| StoreError::invalid_url(&url.to_string(), &e.to_string()))?;
                Ok(Store {
                    url: url.clone(),
                    backend: Arc::new(backend),
                    root,
                })
            }
        }
    }

    /// [`Store::open`] on a path or URL as typed.
    pub fn open_str(text: &str) -> Result<Store, StoreError> {
        Store::open(&StoreUrl::parse(text)?)
    }

    /// [`Store::open`] on a local path.
    pub fn open_path(path: &Path) -> Result<Store, StoreError> {
        Store::open_str(&path.to_string_lossy())
    }

    /// Where this store is.
    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// The full URL of `key`, for messages.
    pub fn describe(&self, key: &str) -> String {
        self.url.join(key).to_string()
    }

    /// The store one level (or several, `a/b`) down, sharing connections.
    pub fn child(&self, sub: &str) -> Result<Store, StoreError> {
        let rel = self.relative(StoreOp::Open, sub)?;
        Ok(Store {
            url: self.url.join(sub),
            backend: self.backend.clone(),
            root: self.full(&rel),
        })
    }

    fn full(&self, rel: &ObjPath) -> ObjPath {
        ObjPath::from_iter(self.root.parts().chain(rel.parts()))
    }

    /// `prefix` checked, relative to the store (may be empty: the root).
    fn relative(&self, op: StoreOp, prefix: &str) -> Result<ObjPath, StoreError> {
        key_path(prefix).map_err(|why| {
            StoreError::new(op, self.describe(prefix), StoreErrorKind::InvalidUrl, why)
        })
    }

    /// The full path of `prefix` (may be empty: the store's root).
    fn prefix_full(&self, op: StoreOp, prefix: &str) -> Result<ObjPath, StoreError> {
        Ok(self.full(&self.relative(op, prefix)?))
    }

    /// The full path of an object's key (not empty).
    fn path(&self, op: StoreOp, key: &str) -> Result<ObjPath, StoreError> {
        let rel = self.relative(op, key)?;
        if rel.parts().count() == 0 {
            return Err(StoreError::new(
                op,
                self.describe(key),
                StoreErrorKind::InvalidUrl,
                "empty key",
            ));
        }
        Ok(self.full(&rel))
    }

    /// Before the first write of this process into a local folder: removes
    /// the temporaries that writes interrupted more than
    /// [`STALE_TEMPORARY_AGE`] ago left in that folder (only that folder:
    /// the store never walks what it does not write into).
    fn tidy_folder_of(&self, key: &str) {
        if let StoreUrl::Local(root) = &self.url {
            let parent = key
                .trim_matches('/')
                .rsplit_once('/')
                .map_or("", |(p, _)| p);
            remove_stale_temporaries_once(&root.join(parent));
        }
    }

    fn fail(&self, op: StoreOp, key: &str, e: object_store::Error) -> StoreError {
        StoreError::from_object_store(op, self.describe(key), e)
    }

    /// Writes `bytes` as `key`, replacing any object there; readers see
    /// the old object or the whole new one.
    pub fn put(&self, key: &str, bytes: impl Into<Bytes>) -> Result<(), StoreError> {
        let path = self.path(StoreOp::Write, key)?;
        self.tidy_folder_of(key);
        let payload = PutPayload::from_bytes(bytes.into());
        block_on(self.backend.put(&path, payload))
            .map(|_| count_write_for_kill_test(|| self.describe(key)))
            .map_err(|e| self.fail(StoreOp::Write, key, e))
    }

    /// Writes `bytes` as `key` only if no object is there. An object with
    /// the same bytes counts as written ([`Created::AlreadyThere`]: a
    /// retried request whose first try arrived); different bytes are
    /// [`StoreErrorKind::AlreadyExists`].
    pub fn put_new(&self, key: &str, bytes: impl Into<Bytes>) -> Result<Created, StoreError> {
        let path = self.path(StoreOp::Create, key)?;
        self.tidy_folder_of(key);
        let bytes: Bytes = bytes.into();
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match block_on(
            self.backend
                .put_opts(&path, PutPayload::from_bytes(bytes.clone()), opts),
        ) {
            Ok(_) => {
                count_write_for_kill_test(|| self.describe(key));
                Ok(Created::New)
            }
            Err(e) => {
                let err = self.fail(StoreOp::Create, key, e);
                if err.kind != StoreErrorKind::AlreadyExists {
                    return Err(err);
                }
                match self.get(key) {
                    Ok(there) if there == bytes => Ok(Created::AlreadyThere),
                    _ => Err(err),
                }
            }
        }
    }

    /// The whole object at `key`.
    pub fn get(&self, key: &str) -> Result<Bytes, StoreError> {
        let path = self.path(StoreOp::Read, key)?;
        block_on(async { self.backend.get(&path).await?.bytes().await })
            .map_err(|e| self.fail(StoreOp::Read, key, e))
    }

    /// Bytes `range` of the object at `key` (fewer at its end).
    pub fn get_range(&self, key: &str, range: std::ops::Range<u64>) -> Result<Bytes, StoreError> {
        let path = self.path(StoreOp::Read, key)?;
        block_on(self.backend.get_range(&path, range)).map_err(|e| self.fail(StoreOp::Read, key, e))
    }

    /// A seekable reader of the object at `key` that fetches only the
    /// blocks it reads (for a zip's directory and a member's header,
    /// without the whole object).
    pub fn reader(&self, key: &str) -> Result<ObjectReader, StoreError> {
        let info = self.head(key)?.ok_or_else(|| {
            StoreError::new(
                StoreOp::Read,
                self.describe(key),
                StoreErrorKind::NotFound,
                "",
            )
        })?;
        Ok(ObjectReader {
            store: self.clone(),
            key: key.to_string(),
            size: info.size,
            pos: 0,
            block: None,
        })
    }

    /// The whole object at `key`, or `None` if there is none.
    pub fn get_opt(&self, key: &str) -> Result<Option<Bytes>, StoreError> {
        match self.get(key) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Facts about `key`, or `None` if there is no such object.
    pub fn head(&self, key: &str) -> Result<Option<ObjectInfo>, StoreError> {
        let path = self.path(StoreOp::Read, key)?;
        match block_on(self.backend.head(&path)) {
            Ok(meta) => Ok(Some(ObjectInfo {
                key: key.trim_matches('/').to_string(),
                size: meta.size,
                modified: SystemTime::from(meta.last_modified),
            })),
            Err(e) => {
                let err = self.fail(StoreOp::Read, key, e);
                if err.is_not_found() {
                    Ok(None)
                } else {
                    Err(err)
                }
            }
        }
    }

    /// Whether `key` exists.
    pub fn exists(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self.head(key)?.is_some())
    }

    /// Every object under `prefix` (`""`: the whole store), at any depth,
    /// sorted by key. A folder's temporary files are not listed; a prefix
    /// with nothing under it gives an empty list.
    pub fn list(&self, prefix: &str) -> Result<Vec<ObjectInfo>, StoreError> {
        let full = self.prefix_full(StoreOp::List, prefix)?;
        let metas: Vec<object_store::ObjectMeta> = block_on(
            self.backend
                .list((full.parts().count() > 0).then_some(&full))
                .try_collect(),
        )
        .map_err(|e| self.fail(StoreOp::List, prefix, e))?;
        let mut out: Vec<ObjectInfo> = metas
            .into_iter()
            .filter_map(|m| {
                let key = self.relative_key(&m.location)?;
                Some(ObjectInfo {
                    key,
                    size: m.size,
                    modified: SystemTime::from(m.last_modified),
                })
            })
            .collect();
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// The names of the "folders" directly under `prefix` (key prefixes
    /// one segment longer that have objects below them), sorted.
    pub fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(self.list_level(prefix)?.dirs)
    }

    /// One level under `prefix`: the objects directly in it and the names
    /// of its "folders", both sorted.
    pub fn list_level(&self, prefix: &str) -> Result<Level, StoreError> {
        let full = self.prefix_full(StoreOp::List, prefix)?;
        let result = block_on(
            self.backend
                .list_with_delimiter((full.parts().count() > 0).then_some(&full)),
        );
        let listed = match result {
            Ok(l) => l,
            // A folder that does not exist yet has nothing in it.
            Err(object_store::Error::NotFound { .. }) => return Ok(Level::default()),
            Err(e) => return Err(self.fail(StoreOp::List, prefix, e)),
        };
        let mut dirs: Vec<String> = listed
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect();
        dirs.sort();
        let mut objects: Vec<ObjectInfo> = listed
            .objects
            .into_iter()
            .filter_map(|m| {
                Some(ObjectInfo {
                    key: self.relative_key(&m.location)?,
                    size: m.size,
                    modified: SystemTime::from(m.last_modified),
                })
            })
            .collect();
        objects.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Level { objects, dirs })
    }

    /// Appends `line` (and a newline) to the text object `key`, creating
    /// it with `header` first. The object is rewritten whole (S3 cannot
    /// append), so it suits one writer's small logs, not shared ones.
    pub fn append_line(&self, key: &str, header: &str, line: &str) -> Result<(), StoreError> {
        let mut text = match self.get_opt(key)? {
            Some(b) => String::from_utf8_lossy(&b).into_owned(),
            None => format!("{header}\n"),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(line);
        text.push('\n');
        self.put(key, text.into_bytes())
    }

    fn relative_key(&self, location: &ObjPath) -> Option<String> {
        let rest: Vec<String> = location
            .prefix_match(&self.root)?
            .map(|p| p.as_ref().to_string())
            .collect();
        (!rest.is_empty()).then(|| rest.join("/"))
    }

    /// Deletes `key`; deleting a missing object is not an error. On a
    /// folder, parent folders left empty are removed up to the store root.
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(StoreOp::Delete, key)?;
        match block_on(self.backend.delete(&path)) {
            Ok(()) => {}
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(self.fail(StoreOp::Delete, key, e)),
        }
        if let StoreUrl::Local(root) = &self.url {
            remove_empty_parents(root, key);
        }
        count_write_for_kill_test(|| self.describe(key));
        Ok(())
    }

    /// Removes the temporary files of interrupted writes under `prefix`,
    /// whatever their age: only for a prefix this process owns alone (a
    /// shuffle's output or scratch folder), where no other writer can be
    /// at work. Nothing to do on S3, where a write leaves no temporary.
    pub fn remove_temporaries(&self, prefix: &str) -> Result<(), StoreError> {
        if let StoreUrl::Local(root) = &self.url {
            let rel = self.relative(StoreOp::Delete, prefix)?;
            let dir = rel.parts().fold(root.clone(), |d, p| d.join(p.as_ref()));
            remove_temporaries_in(&dir, Duration::ZERO, true);
        }
        Ok(())
    }

    /// Deletes every object under `prefix`.
    pub fn delete_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        for o in self.list(prefix)? {
            self.delete(&o.key)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("engine-store-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn folder_store_writes_lists_and_deletes_whole_objects() {
        let dir = scratch("basic");
        let s = Store::open_path(&dir).unwrap();
        assert!(s.list("").unwrap().is_empty(), "a missing folder is empty");
        assert!(s.list_dirs("models").unwrap().is_empty());
        s.put("models/a/model.bin.gz", b"one".to_vec()).unwrap();
        s.put("models/b/model.bin.gz", b"two".to_vec()).unwrap();
        s.put("selfplay/x.npz", b"three".to_vec()).unwrap();
        assert_eq!(&s.get("models/a/model.bin.gz").unwrap()[..], b"one");
        assert_eq!(s.list_dirs("models").unwrap(), ["a", "b"]);
        let keys: Vec<String> = s
            .list("models")
            .unwrap()
            .into_iter()
            .map(|o| o.key)
            .collect();
        assert_eq!(keys, ["models/a/model.bin.gz", "models/b/model.bin.gz"]);
        assert_eq!(s.head("selfplay/x.npz").unwrap().unwrap().size, 5);
        assert!(s.head("nothing").unwrap().is_none());
        assert!(s.get("nothing").unwrap_err().is_not_found());
        assert!(s.get_opt("nothing").unwrap().is_none());
        // Replacing is whole; no temporary name is left.
        s.put("selfplay/x.npz", b"four".to_vec()).unwrap();
        assert_eq!(&s.get("selfplay/x.npz").unwrap()[..], b"four");
        let names: Vec<_> = std::fs::read_dir(dir.join("selfplay"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["x.npz"]);
        // A child store sees the same objects.
        let m = s.child("models").unwrap();
        assert_eq!(&m.get("b/model.bin.gz").unwrap()[..], b"two");
        assert_eq!(
            m.url().to_string(),
            dir.join("models").display().to_string()
        );
        // Deleting removes emptied folders, never the root.
        m.delete("a/model.bin.gz").unwrap();
        m.delete("a/model.bin.gz").unwrap();
        assert!(!dir.join("models/a").exists());
        assert!(dir.join("models/b").exists());
        s.delete_prefix("models").unwrap();
        assert!(s.list("models").unwrap().is_empty());
        assert!(dir.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn object_reader_reads_ranges_and_seeks() {
        use std::io::{Read, Seek, SeekFrom};
        let dir = scratch("reader");
        let s = Store::open_path(&dir).unwrap();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        s.put("big", data.clone()).unwrap();
        let mut r = s.reader("big").unwrap();
        assert_eq!(r.size(), 200_000);
        r.seek(SeekFrom::End(-10)).unwrap();
        let mut tail = Vec::new();
        r.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, &data[199_990..]);
        r.seek(SeekFrom::Start(65_530)).unwrap();
        let mut across = [0u8; 20];
        r.read_exact(&mut across).unwrap();
        assert_eq!(&across[..], &data[65_530..65_550]);
        assert!(r.seek(SeekFrom::Current(-1_000_000)).is_err());
        assert!(s.reader("missing").unwrap_err().is_not_found());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn s3_error_bodies_are_cut_to_code_and_message() {
        let body = "PUT x: 404 Not Found: <?xml version=\"1.0\"?>\n<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><Key>k</Key></Error>";
        assert_eq!(
            shorten_xml_error(body),
            "PUT x: 404 Not Found: NoSuchBucket The specified bucket does not exist"
        );
        assert_eq!(shorten_xml_error("plain\ntext"), "plain text");
    }

    #[test]
    fn put_new_never_overwrites() {
        let dir = scratch("create");
        let s = Store::open_path(&dir).unwrap();
        assert_eq!(s.put_new("m/x", b"a".to_vec()).unwrap(), Created::New);
        assert_eq!(
            s.put_new("m/x", b"a".to_vec()).unwrap(),
            Created::AlreadyThere
        );
        let e = s.put_new("m/x", b"b".to_vec()).unwrap_err();
        assert_eq!(e.kind, StoreErrorKind::AlreadyExists);
        assert!(
            e.to_string()
                .contains(&dir.join("m/x").display().to_string()),
            "{e}"
        );
        assert_eq!(&s.get("m/x").unwrap()[..], b"a");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_keys_are_refused() {
        let dir = scratch("keys");
        let s = Store::open_path(&dir).unwrap();
        for key in ["a/../b", "a//b", "", "x#1", "./a"] {
            let e = s.put(key, b"x".to_vec()).unwrap_err();
            assert_eq!(e.kind, StoreErrorKind::InvalidUrl, "{key}: {e}");
        }
        assert!(!dir.exists(), "nothing written");
    }

    #[test]
    fn stale_temporaries_go_and_fresh_ones_stay() {
        let dir = scratch("stale");
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/b/x.npz#1"), b"half").unwrap();
        std::fs::write(dir.join("a/y.npz#12"), b"half").unwrap();
        std::fs::write(dir.join("a/keep#name"), b"not a temporary").unwrap();
        std::fs::write(dir.join("a/z.npz"), b"whole").unwrap();
        assert_eq!(
            remove_temporaries_in(&dir, Duration::from_secs(3600), true),
            0
        );
        assert_eq!(
            remove_temporaries_in(&dir.join("a"), Duration::ZERO, false),
            1
        );
        assert!(dir.join("a/b/x.npz#1").exists(), "not below the folder");
        assert_eq!(remove_temporaries_in(&dir, Duration::ZERO, true), 1);
        assert!(dir.join("a/keep#name").exists() && dir.join("a/z.npz").exists());
        assert!(
            is_temporary_name("m.bin.gz#3")
                && !is_temporary_name("m#")
                && !is_temporary_name("m#x1")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
