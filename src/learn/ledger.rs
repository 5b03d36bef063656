//! The learner's ledger: one object per finished generation
//! (`RUN/learn/generations/<NNNNNN>.json`), written create-if-absent when
//! the generation is over. It is the learner's only memory: a restart
//! reads it and goes on with the next generation, whose own steps are
//! found in the store by their fixed names (the window
//! `shuffleddata/gen-<NNNNNN>`, the net named after the samples it was
//! trained to, the gatekeeper's logged decision).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::play::stats::{elo_estimate, elo_from_score, Wld};
use crate::store::layout::LearnFiles;
use crate::store::{Created, StoreError, StoreErrorKind};

/// Self-play output of one worker, counted in the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerTotals {
    /// Games written in all.
    pub games: u64,
    /// Rows written in all.
    pub rows: u64,
    /// When its first file was written (seconds since the epoch).
    pub first_unix: u64,
    /// When its last file was written.
    pub last_unix: u64,
}

/// The window a generation trained on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowRecord {
    /// Its name under `shuffleddata/`.
    pub name: String,
    /// `train.json`'s range: first row and end (rows in the data then).
    pub start: i64,
    /// See `start`.
    pub end: i64,
}

/// A generation's training.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainRecord {
    /// Samples trained before it.
    pub samples_before: u64,
    /// Samples trained after it.
    pub samples_after: u64,
    /// Seconds it took (in the process that finished it).
    pub seconds: f64,
    /// Training loss terms per sample (`loss`, `p0loss`, `vloss`, ...);
    /// empty when the training ended in an earlier process.
    pub losses: BTreeMap<String, f64>,
    /// Validation loss terms per sample, when the window has validation rows.
    pub val_losses: BTreeMap<String, f64>,
}

/// A generation's gating.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    /// The accepted net it played (`-` when there was none).
    pub opponent: String,
    /// The candidate's wins, losses and draws.
    pub wins: u64,
    /// See `wins`.
    pub losses: u64,
    /// See `wins`.
    pub draws: u64,
    /// The score share it needed.
    pub required: f64,
    /// Whether it was accepted.
    pub accepted: bool,
    /// The gatekeeper's reason.
    pub reason: String,
}

impl GateRecord {
    fn wld(&self) -> Wld {
        Wld {
            wins: self.wins,
            losses: self.losses,
            draws: self.draws,
        }
    }

    /// Games played.
    pub fn games(&self) -> u64 {
        self.wld().games()
    }

    /// Elo of the candidate over its opponent with a 95% interval, from
    /// the gating games; `None` without games.
    pub fn elo(&self) -> Option<(f64, f64, f64)> {
        let wld = self.wld();
        if wld.games() == 0 {
            return None;
        }
        let e = elo_estimate(&wld);
        Some((regularized_elo(&wld), e.low, e.high))
    }
}

/// Elo from a score with half a point added to each side, so that a clean
/// sweep gives a finite figure.
fn regularized_elo(wld: &Wld) -> f64 {
    elo_from_score((wld.points() + 0.5) / (wld.games() as f64 + 1.0))
}

/// One finished generation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationRecord {
    /// Its number (1 is the first trained net).
    pub generation: u64,
    /// When it was written (seconds since the epoch).
    pub finished_unix: u64,
    /// Seconds from its start to its end in the process that finished it.
    pub seconds: f64,
    /// The accepted net self-play followed when it started.
    pub selfplay_net: String,
    /// Games and rows in the store when its window was cut, per worker.
    pub workers: BTreeMap<String, WorkerTotals>,
    /// Its window.
    pub window: WindowRecord,
    /// Its training.
    pub train: TrainRecord,
    /// The net it trained.
    pub candidate: String,
    /// Its gating.
    pub gate: GateRecord,
    /// Elo of the newest accepted net after it, over the first net, summed
    /// over the accepted nets' gating results (no games: no change).
    pub cumulative_elo: f64,
}

impl GenerationRecord {
    /// Games in the store when its window was cut.
    pub fn games_total(&self) -> u64 {
        self.workers.values().map(|w| w.games).sum()
    }

    /// Rows in the store when its window was cut.
    pub fn rows_total(&self) -> u64 {
        self.workers.values().map(|w| w.rows).sum()
    }

    /// The cumulative Elo after this generation, given the one before.
    pub fn next_cumulative_elo(previous: f64, gate: &GateRecord) -> f64 {
        match (gate.accepted, gate.elo()) {
            (true, Some((elo, _, _))) => previous + elo,
            _ => previous,
        }
    }
}

/// Why the ledger could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An object is not a generation record.
    #[error("{target}: not a generation record ({why})")]
    Corrupt {
        /// The object's URL.
        target: String,
        /// What is wrong.
        why: String,
    },
    /// Another learner wrote this generation with other contents.
    #[error("{target} was written by another learner: this one stops")]
    Conflict {
        /// The object's URL.
        target: String,
    },
}

/// The finished generations of a run.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    /// Oldest first.
    pub records: Vec<GenerationRecord>,
}

impl Ledger {
    /// Every record in `files`.
    pub fn read(files: &LearnFiles) -> Result<Ledger, LedgerError> {
        let mut records = Vec::new();
        for g in files.generations()? {
            let bytes = files.read_generation(g)?;
            let record: GenerationRecord =
                serde_json::from_slice(&bytes).map_err(|e| LedgerError::Corrupt {
                    target: files.describe_generation(g),
                    why: e.to_string(),
                })?;
            if record.generation != g {
                return Err(LedgerError::Corrupt {
                    target: files.describe_generation(g),
                    why: format!("it says generation {}", record.generation),
                });
            }
            records.push(record);
        }
        Ok(Ledger { records })
    }

    /// The last finished generation.
    pub fn last(&self) -> Option<&GenerationRecord> {
        self.records.last()
    }

    /// The number of the next generation.
    pub fn next_generation(&self) -> u64 {
        self.last().map_or(1, |r| r.generation + 1)
    }

    /// Writes `record` create-if-absent and keeps it.
    pub fn append(
        &mut self,
        files: &LearnFiles,
        record: GenerationRecord,
    ) -> Result<(), LedgerError> {
        let bytes = serde_json::to_vec_pretty(&record).map_err(|e| LedgerError::Corrupt {
            target: files.describe_generation(record.generation),
            why: e.to_string(),
        })?;
        match files.write_generation(record.generation, bytes) {
            Ok(Created::New | Created::AlreadyThere) => {}
            Err(e) if e.kind == StoreErrorKind::AlreadyExists => {
                return Err(LedgerError::Conflict {
                    target: files.describe_generation(record.generation),
                })
            }
            Err(e) => return Err(e.into()),
        }
        self.records.push(record);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(w: u64, l: u64, d: u64, accepted: bool) -> GateRecord {
        GateRecord {
            opponent: "a".into(),
            wins: w,
            losses: l,
            draws: d,
            required: 0.5,
            accepted,
            reason: "all games".into(),
        }
    }

    #[test]
    fn cumulative_elo_adds_accepted_nets_only() {
        let even = gate(5, 5, 0, true);
        assert!(GenerationRecord::next_cumulative_elo(10.0, &even).abs() - 10.0 < 1e-9);
        let sweep = gate(10, 0, 0, true);
        let e = GenerationRecord::next_cumulative_elo(0.0, &sweep);
        assert!(e.is_finite() && e > 300.0, "{e}");
        let rejected = gate(0, 10, 0, false);
        assert_eq!(GenerationRecord::next_cumulative_elo(7.0, &rejected), 7.0);
        let unplayed = gate(0, 0, 0, true);
        assert_eq!(GenerationRecord::next_cumulative_elo(7.0, &unplayed), 7.0);
        assert!(unplayed.elo().is_none());
    }

    #[test]
    fn records_round_trip_and_append_is_create_if_absent() {
        let dir = std::env::temp_dir().join(format!("engine-ledger-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = crate::store::layout::Run::open(&crate::store::StoreUrl::Local(dir.clone()))
            .expect("run");
        let files = run.learn().expect("learn");
        let mut ledger = Ledger::read(&files).expect("empty");
        assert_eq!(ledger.next_generation(), 1);
        let mut r = GenerationRecord {
            generation: 1,
            candidate: "b-s10-d5".into(),
            gate: gate(3, 1, 0, true),
            ..Default::default()
        };
        r.workers.insert(
            "w1".into(),
            WorkerTotals {
                games: 4,
                rows: 40,
                first_unix: 1,
                last_unix: 2,
            },
        );
        ledger.append(&files, r.clone()).expect("append");
        // The same record again (a retried write) is fine ...
        let mut again = Ledger::default();
        again.append(&files, r.clone()).expect("same bytes");
        // ... other contents for the same generation are another learner's.
        let mut other = r.clone();
        other.candidate = "x".into();
        let e = Ledger::default()
            .append(&files, other)
            .expect_err("conflict");
        assert!(matches!(e, LedgerError::Conflict { .. }), "{e}");
        let read = Ledger::read(&files).expect("read");
        assert_eq!(read.records, vec![r.clone()]);
        assert_eq!(read.next_generation(), 2);
        assert_eq!(read.records[0].games_total(), 4);
        assert_eq!(read.records[0].rows_total(), 40);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
