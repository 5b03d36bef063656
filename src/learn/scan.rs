//! What self-play has written to the run so far: rows and games per net
//! and per worker, counted from the store (npz headers, SGF lines). Files
//! are written whole and never changed, so each is read once per learner
//! process and remembered by key.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use super::ledger::WorkerTotals;
use crate::data::{is_temp_npz_like, read_npz_num_rows_from};
use crate::store::layout::{SelfplayFile, SelfplayFileKind, SelfplayOut};
use crate::store::StoreError;

/// Rows and games of one net's self-play.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelTotals {
    /// Games (SGF lines).
    pub games: u64,
    /// Training rows.
    pub rows: u64,
}

/// Self-play output counted at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// Per net.
    pub models: BTreeMap<String, ModelTotals>,
    /// Per worker.
    pub workers: BTreeMap<String, WorkerTotals>,
}

impl Scan {
    /// Rows in all (the shuffle's usable rows).
    pub fn rows(&self) -> u64 {
        self.models.values().map(|m| m.rows).sum()
    }

    /// Games in all.
    pub fn games(&self) -> u64 {
        self.models.values().map(|m| m.games).sum()
    }

    /// Games of net `model`.
    pub fn games_of(&self, model: &str) -> u64 {
        self.models.get(model).map_or(0, |m| m.games)
    }
}

/// Counts self-play output, remembering each file's count.
pub struct SelfplayScan {
    out: SelfplayOut,
    /// Rows (npz) or games (sgfs) of each file read, by key.
    counts: HashMap<String, u64>,
    /// Unreadable files already warned about.
    warned: HashSet<String>,
}

impl SelfplayScan {
    /// A scanner of `out`.
    pub fn new(out: SelfplayOut) -> SelfplayScan {
        SelfplayScan {
            out,
            counts: HashMap::new(),
            warned: HashSet::new(),
        }
    }

    /// Counts what is there now. A file that cannot be read counts as
    /// empty, with a warning the first time (the shuffle skips it too).
    pub fn scan(&mut self) -> Result<Scan, StoreError> {
        let mut scan = Scan::default();
        for file in self.out.data_files()? {
            if file.kind == SelfplayFileKind::Rows && is_temp_npz_like(file.info.name()) {
                continue;
            }
            let n = self.count(&file)?;
            let m = scan.models.entry(file.model.clone()).or_default();
            let w = scan.workers.entry(file.worker.clone()).or_default();
            match file.kind {
                SelfplayFileKind::Rows => {
                    m.rows += n;
                    w.rows += n;
                }
                SelfplayFileKind::Games => {
                    m.games += n;
                    w.games += n;
                }
            }
            let t = unix(file.info.modified);
            w.first_unix = if w.first_unix == 0 {
                t
            } else {
                w.first_unix.min(t)
            };
            w.last_unix = w.last_unix.max(t);
        }
        Ok(scan)
    }

    fn count(&mut self, file: &SelfplayFile) -> Result<u64, StoreError> {
        if let Some(&n) = self.counts.get(&file.info.key) {
            return Ok(n);
        }
        let n = match file.kind {
            SelfplayFileKind::Rows => {
                let reader = self.out.reader(file)?;
                match read_npz_num_rows_from(reader) {
                    Ok(n) => n as u64,
                    Err(e) => {
                        // Not remembered: a store that failed for a moment
                        // is read again at the next scan.
                        if self.warned.insert(file.info.key.clone()) {
                            eprintln!(
                                "learn: WARNING: skipping bad file {}: {e}",
                                self.out.describe(file)
                            );
                        }
                        return Ok(0);
                    }
                }
            }
            SelfplayFileKind::Games => {
                let bytes = self.out.read(file)?;
                bytes
                    .split(|&b| b == b'\n')
                    .filter(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
                    .count() as u64
            }
        };
        self.counts.insert(file.info.key.clone(), n);
        Ok(n)
    }
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
