//! Where a store lives: a local folder or an S3 bucket and prefix, parsed
//! from what a user types after `-output-dir`, `-models-dir`, `-model`, ...

use std::fmt;
use std::path::{Path, PathBuf};

use super::StoreError;

/// The root of a store: a local folder (a plain path or `file:///abs/path`)
/// or `s3://bucket/prefix` on any S3-compatible server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StoreUrl {
    /// A folder on this machine's file system (absolute, not required to
    /// exist yet).
    Local(PathBuf),
    /// A bucket and a key prefix (no leading or trailing `/`; may be empty).
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix inside the bucket.
        prefix: String,
    },
}

impl StoreUrl {
    /// Parses a path or URL. Relative paths are made absolute against the
    /// working directory, so that a store names the same folder wherever
    /// its URL is printed. Other schemes (`gs://`, `http://`) are refused.
    pub fn parse(text: &str) -> Result<StoreUrl, StoreError> {
        let bad = |why: &str| StoreError::invalid_url(text, why);
        if text.is_empty() {
            return Err(bad("empty path"));
        }
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad("no bucket name after s3://"));
            }
            let prefix = prefix.trim_matches('/');
            if prefix.split('/').any(|seg| seg == "." || seg == "..") || prefix.contains("//") {
                return Err(bad(
                    "'.', '..' and empty segments are not allowed in a key prefix",
                ));
            }
            return Ok(StoreUrl::S3 {
                bucket: bucket.to_string(),
                prefix: prefix.to_string(),
            });
        }
        if let Some(rest) = text.strip_prefix("file://") {
            if !rest.starts_with('/') {
                return Err(bad(
                    "a file:// URL needs an absolute path (file:///abs/path)",
                ));
            }
            return Ok(StoreUrl::Local(normalize(Path::new(rest))));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(bad(&format!(
                    "unsupported scheme '{scheme}://' (use a folder path, file:///path or s3://bucket/prefix)"
                )));
            }
        }
        let path = Path::new(text);
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| bad(&format!("working directory: {e}")))?
                .join(path)
        };
        Ok(StoreUrl::Local(normalize(&abs)))
    }

    /// The same kind of store one level down (`sub` is `/`-separated).
    pub fn join(&self, sub: &str) -> StoreUrl {
        let sub = sub.trim_matches('/');
        if sub.is_empty() {
            return self.clone();
        }
        match self {
            StoreUrl::Local(p) => StoreUrl::Local(normalize(&p.join(sub))),
            StoreUrl::S3 { bucket, prefix } => StoreUrl::S3 {
                bucket: bucket.clone(),
                prefix: if prefix.is_empty() {
                    sub.to_string()
                } else {
                    format!("{prefix}/{sub}")
                },
            },
        }
    }

    /// The parent and the last segment (`s3://b/run/models` gives
    /// `s3://b/run` and `models`); `None` at a bucket's or a file system's
    /// root.
    pub fn split_last(&self) -> Option<(StoreUrl, String)> {
        match self {
            StoreUrl::Local(p) => {
                let name = p.file_name()?.to_string_lossy().into_owned();
                Some((StoreUrl::Local(p.parent()?.to_path_buf()), name))
            }
            StoreUrl::S3 { bucket, prefix } => {
                if prefix.is_empty() {
                    return None;
                }
                let (parent, name) = prefix.rsplit_once('/').unwrap_or(("", prefix));
                Some((
                    StoreUrl::S3 {
                        bucket: bucket.clone(),
                        prefix: parent.to_string(),
                    },
                    name.to_string(),
                ))
            }
        }
    }

    /// Whether this is a local folder.
    pub fn is_local(&self) -> bool {
        matches!(self, StoreUrl::Local(_))
    }

    /// The local folder, for a local store.
    pub fn local_path(&self) -> Option<&Path> {
        match self {
            StoreUrl::Local(p) => Some(p),
            StoreUrl::S3 { .. } => None,
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Local(p) => write!(f, "{}", p.display()),
            StoreUrl::S3 { bucket, prefix } if prefix.is_empty() => write!(f, "s3://{bucket}"),
            StoreUrl::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

impl std::str::FromStr for StoreUrl {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StoreUrl::parse(s)
    }
}

/// `a/./b/../c` as `a/c`, without touching the file system (the folder
/// may not exist yet, and symlinks are the user's business).
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paths_file_and_s3_urls() {
        assert_eq!(
            StoreUrl::parse("s3://bucket/run/models/").unwrap(),
            StoreUrl::S3 {
                bucket: "bucket".into(),
                prefix: "run/models".into()
            }
        );
        assert_eq!(
            StoreUrl::parse("s3://bucket").unwrap(),
            StoreUrl::S3 {
                bucket: "bucket".into(),
                prefix: String::new()
            }
        );
        assert_eq!(
            StoreUrl::parse("file:///tmp/a/../run").unwrap(),
            StoreUrl::Local(PathBuf::from("/tmp/run"))
        );
        let rel = StoreUrl::parse("some/dir").unwrap();
        assert_eq!(
            rel.local_path().unwrap(),
            std::env::current_dir().unwrap().join("some/dir")
        );
        assert!(StoreUrl::parse("s3://").is_err());
        assert!(StoreUrl::parse("s3://b/x/../y").is_err());
        assert!(StoreUrl::parse("gs://b/x").is_err());
        assert!(StoreUrl::parse("file://relative").is_err());
        assert!(StoreUrl::parse("").is_err());
    }

    #[test]
    fn join_split_and_display() {
        let u = StoreUrl::parse("s3://b/run").unwrap();
        let m = u.join("models/");
        assert_eq!(m.to_string(), "s3://b/run/models");
        let (parent, name) = m.split_last().unwrap();
        assert_eq!((parent, name.as_str()), (u.clone(), "models"));
        let (root, run) = u.split_last().unwrap();
        assert_eq!((root.to_string(), run.as_str()), ("s3://b".into(), "run"));
        assert!(root.split_last().is_none());
        let l = StoreUrl::parse("/x/y").unwrap();
        assert_eq!(l.join("z").to_string(), "/x/y/z");
        assert_eq!(l.split_last().unwrap().1, "y");
    }
}
