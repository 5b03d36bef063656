//! API keys of `engine serve -keys FILE` and their quotas.
//!
//! The file holds no secret, only each secret's SHA-256:
//!
//! ```toml
//! [[key]]
//! name = "alice"          # in logs and metrics, never the secret
//! sha256 = "<hex sha256 of the secret>"
//! weight = 1              # share of the queue under contention
//! maxVisits = 2000        # a query asking for more: 400
//! maxInFlight = 64        # queries not yet finished; more: 429
//! perMinute = 600         # queries accepted per rolling minute; more: 429
//! ```
//!
//! A presented secret is hashed and compared with every key's digest in
//! constant time (no early exit, no secret-dependent branch), so timing
//! tells nothing about which bytes matched.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Why a keys file is unusable.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    /// The file cannot be read.
    #[error("keys file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The reading error.
        source: std::io::Error,
    },
    /// Not TOML of the expected shape (unknown or missing fields included).
    #[error("keys file {path}: {message}")]
    Toml {
        /// The file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// A key's value is wrong.
    #[error("keys file {path}: key #{index} ({name:?}): {message}")]
    Key {
        /// The file.
        path: String,
        /// The key's place in the file, from 1.
        index: usize,
        /// Its name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysFile {
    key: Vec<KeyEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct KeyEntry {
    name: String,
    sha256: String,
    #[serde(default = "one")]
    weight: u32,
    max_visits: Option<u64>,
    max_in_flight: Option<usize>,
    per_minute: Option<usize>,
}

fn one() -> u32 {
    1
}

/// One key: its limits and its live counters.
#[derive(Debug)]
pub struct Key {
    /// Its name (logs, metrics).
    pub name: String,
    digest: [u8; 32],
    /// Its weight in the fair queue.
    pub weight: u32,
    /// Most visits a query may ask for.
    pub max_visits: Option<u64>,
    /// Most queries not yet finished.
    pub max_in_flight: Option<usize>,
    /// Most queries accepted in any 60 seconds.
    pub per_minute: Option<usize>,
    in_flight: AtomicUsize,
    accepted: Mutex<VecDeque<Instant>>,
}

impl Key {
    fn new(name: &str, digest: [u8; 32], weight: u32) -> Key {
        Key {
            name: name.to_string(),
            digest,
            weight,
            max_visits: None,
            max_in_flight: None,
            per_minute: None,
            in_flight: AtomicUsize::new(0),
            accepted: Mutex::new(VecDeque::new()),
        }
    }

    /// Queries of this key not yet finished.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }
}

/// Why a query is refused by its key's quota.
#[derive(Debug, Clone, PartialEq)]
pub enum QuotaRefusal {
    /// `maxInFlight` queries are open.
    InFlight(usize),
    /// `perMinute` queries were accepted in the last minute; retry after
    /// this long.
    PerMinute(usize, Duration),
}

impl std::fmt::Display for QuotaRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuotaRefusal::InFlight(n) => {
                write!(f, "this key has {n} queries in flight, its maxInFlight")
            }
            QuotaRefusal::PerMinute(n, _) => {
                write!(
                    f,
                    "this key had {n} queries in the last minute, its perMinute"
                )
            }
        }
    }
}

/// A query's place in its key's `maxInFlight`, released when dropped.
pub struct InFlight {
    key: Arc<Key>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.key.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The keys a server accepts; key numbers are places in [`Keyring::keys`].
#[derive(Debug)]
pub struct Keyring {
    keys: Vec<Arc<Key>>,
    /// Without `-keys`: one open key that needs no secret.
    open: bool,
}

impl Keyring {
    /// No keys: every request is served as the key "anonymous".
    pub fn open() -> Keyring {
        Keyring {
            keys: vec![Arc::new(Key::new("anonymous", [0; 32], 1))],
            open: true,
        }
    }

    /// Reads a keys file (see the module docs).
    pub fn load(path: &Path) -> Result<Keyring, KeysError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeysError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Keyring::parse(&text, &path.display().to_string())
    }

    /// Reads the text of a keys file named `path` (for errors).
    pub fn parse(text: &str, path: &str) -> Result<Keyring, KeysError> {
        let file: KeysFile = toml::from_str(text).map_err(|e| KeysError::Toml {
            path: path.to_string(),
            message: e.message().to_string(),
        })?;
        let mut names = HashSet::new();
        let mut digests = HashSet::new();
        let mut keys = Vec::with_capacity(file.key.len());
        for (i, entry) in file.key.into_iter().enumerate() {
            let err = |message: &str| KeysError::Key {
                path: path.to_string(),
                index: i + 1,
                name: entry.name.clone(),
                message: message.to_string(),
            };
            let name_ok = !entry.name.is_empty()
                && entry.name.len() <= 64
                && entry
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.@".contains(&b));
            if !name_ok {
                return Err(err(
                    "name must be 1 to 64 letters, digits or -_.@ (it labels metrics)",
                ));
            }
            let digest = parse_hex_digest(&entry.sha256)
                .ok_or_else(|| err("sha256 must be 64 hex digits (the SHA-256 of the secret)"))?;
            if entry.weight == 0 || entry.weight > 1000 {
                return Err(err("weight must be 1 to 1000"));
            }
            if entry.max_visits == Some(0)
                || entry.max_in_flight == Some(0)
                || entry.per_minute == Some(0)
            {
                return Err(err(
                    "maxVisits, maxInFlight and perMinute must be at least 1",
                ));
            }
            if !names.insert(entry.name.clone()) {
                return Err(err("a second key with this name"));
            }
            if !digests.insert(digest) {
                return Err(err("a second key with this sha256"));
            }
            let mut key = Key::new(&entry.name, digest, entry.weight);
            key.max_visits = entry.max_visits;
            key.max_in_flight = entry.max_in_flight;
            key.per_minute = entry.per_minute;
            keys.push(Arc::new(key));
        }
        if keys.is_empty() {
            return Err(KeysError::Toml {
                path: path.to_string(),
                message: "no [[key]] tables".to_string(),
            });
        }
        Ok(Keyring { keys, open: false })
    }

    /// Whether requests need a key.
    pub fn required(&self) -> bool {
        !self.open
    }

    /// Every key, by number.
    pub fn keys(&self) -> &[Arc<Key>] {
        &self.keys
    }

    /// The number of the key whose secret this is. Every key's digest is
    /// compared, in constant time, whatever matches. Without keys, any (or
    /// no) secret is the open key.
    pub fn authenticate(&self, secret: Option<&str>) -> Option<usize> {
        if self.open {
            return Some(0);
        }
        let digest: [u8; 32] = Sha256::digest(secret?.as_bytes()).into();
        let mut found = None;
        for (i, key) in self.keys.iter().enumerate() {
            if bool::from(key.digest.ct_eq(&digest)) {
                found = Some(i);
            }
        }
        found
    }

    /// Takes a place for one more query of key `key` (checked against its
    /// `maxInFlight` and `perMinute`); the place is freed when the
    /// returned guard drops.
    pub fn admit(&self, key: usize, now: Instant) -> Result<InFlight, QuotaRefusal> {
        let key = &self.keys[key];
        let taken = key.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight { key: key.clone() };
        if let Some(max) = key.max_in_flight {
            if taken >= max {
                return Err(QuotaRefusal::InFlight(max));
            }
        }
        if let Some(max) = key.per_minute {
            let minute = Duration::from_secs(60);
            let mut accepted = key.accepted.lock();
            while accepted
                .front()
                .is_some_and(|&t| now.saturating_duration_since(t) >= minute)
            {
                accepted.pop_front();
            }
            if accepted.len() >= max {
                let oldest = accepted.front().copied().unwrap_or(now);
                let wait = minute.saturating_sub(now.saturating_duration_since(oldest));
                return Err(QuotaRefusal::PerMinute(max, wait));
            }
            accepted.push_back(now);
        }
        Ok(guard)
    }
}

/// 64 hex digits as 32 bytes.
fn parse_hex_digest(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.trim().as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

/// The hex SHA-256 of a secret, as a keys file holds it.
pub fn sha256_hex(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(secret_a: &str, secret_b: &str) -> String {
        format!(
            "[[key]]\nname = \"alice\"\nsha256 = \"{}\"\nweight = 2\nmaxVisits = 2000\n\
             maxInFlight = 2\nperMinute = 3\n\n[[key]]\nname = \"bob\"\nsha256 = \"{}\"\n",
            sha256_hex(secret_a),
            sha256_hex(secret_b).to_uppercase()
        )
    }

    #[test]
    fn parses_keys_and_authenticates_by_digest() {
        let ring = Keyring::parse(&file("s3cret", "other"), "k.toml").unwrap();
        assert!(ring.required());
        let alice = &ring.keys()[0];
        assert_eq!(
            (alice.name.as_str(), alice.weight, alice.max_visits),
            ("alice", 2, Some(2000))
        );
        assert_eq!(ring.keys()[1].weight, 1);
        assert_eq!(ring.keys()[1].max_in_flight, None);
        assert_eq!(ring.authenticate(Some("s3cret")), Some(0));
        assert_eq!(ring.authenticate(Some("other")), Some(1));
        assert_eq!(ring.authenticate(Some("s3cret ")), None);
        assert_eq!(ring.authenticate(None), None);
        assert_eq!(Keyring::open().authenticate(None), Some(0));
    }

    #[test]
    fn bad_files_name_the_key_and_the_problem() {
        let cases = [
            ("[[key]]\nname = \"a\"\n", "sha256"),
            ("[[key]]\nname = \"a\"\nsha256 = \"abc\"\n", "64 hex digits"),
            (
                "[[key]]\nname = \"a b\"\nsha256 = \"abc\"\n",
                "letters, digits",
            ),
            ("[[key]]\nname = \"a\"\nsecret = \"x\"\n", "unknown field"),
            ("", "key"),
        ];
        for (text, expected) in cases {
            let err = Keyring::parse(text, "k.toml").unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
            assert!(err.starts_with("keys file k.toml"), "{err}");
        }
        let twice = format!("{}{}", file("a", "b"), file("c", "d"));
        let err = Keyring::parse(&twice, "k.toml").unwrap_err().to_string();
        assert!(err.contains("second key with this name"), "{err}");
        let zero = file("a", "b").replace("weight = 2", "weight = 0");
        let err = Keyring::parse(&zero, "k.toml").unwrap_err().to_string();
        assert!(err.contains("key #1 (\"alice\")"), "{err}");
    }

    #[test]
    fn quotas_count_in_flight_and_a_rolling_minute() {
        let ring = Keyring::parse(&file("a", "b"), "k.toml").unwrap();
        let t0 = Instant::now();
        let first = ring.admit(0, t0).unwrap();
        let second = ring.admit(0, t0).unwrap();
        assert_eq!(ring.admit(0, t0).err(), Some(QuotaRefusal::InFlight(2)));
        assert_eq!(ring.keys()[0].in_flight(), 2);
        drop(first);
        let third = ring.admit(0, t0 + Duration::from_secs(10)).unwrap();
        drop((second, third));
        // Three accepted in the minute: the fourth waits for the first to
        // leave the window.
        match ring.admit(0, t0 + Duration::from_secs(20)) {
            Err(QuotaRefusal::PerMinute(3, wait)) => assert_eq!(wait, Duration::from_secs(40)),
            other => panic!("{:?}", other.err()),
        }
        assert!(ring.admit(0, t0 + Duration::from_secs(60)).is_ok());
        // Another key is not limited by alice's.
        let many: Vec<_> = (0..10).map(|_| ring.admit(1, t0).unwrap()).collect();
        assert_eq!(ring.keys()[1].in_flight(), 10);
        drop(many);
        assert_eq!(ring.keys()[1].in_flight(), 0);
    }
}
