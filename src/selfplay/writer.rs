//! Self-play's one writer: finished games arrive through a bounded queue
//! (KataGo's `maxDataQueueSize`, in games) already encoded as rows by the
//! game threads; this thread gathers them per net, cuts files of exactly
//! `maxRowsPerTrainFile` rows (KataGo's `TrainingDataWriter`), compresses
//! them and writes each file whole through the run store. A slow store
//! only fills the queue (the game threads wait to hand over a game); the
//! store retries transient failures itself. A failure that outlasts its
//! retries stops self-play: the games not yet written are counted and
//! reported, nothing is half written.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use crossbeam::channel::{bounded, Receiver, Sender};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::data::{encode_npz, NpzWriteOptions, TrainingRows};
use crate::store::layout::{selfplay_file_stem, SelfplayOut};
use crate::store::worker_name;
use crate::store::StoreError;

/// What the writer is told.
pub(super) enum WriterMsg {
    /// A net starts playing: its config copy is written, and the data
    /// gathered for other nets is written out.
    Model {
        /// The net's name (its data folder).
        name: String,
        /// The config text that plays it.
        config: Bytes,
    },
    /// A finished game, encoded by its game thread.
    Game {
        /// The net whose folder gets the rows.
        model: String,
        /// The game's training rows (boxed: the other message is small).
        rows: Box<TrainingRows>,
        /// The game as one SGF line.
        sgf: String,
    },
}

/// What the writer did, when it is done.
#[derive(Debug, Default)]
pub(super) struct WriterReport {
    /// Games whose rows and SGF were written.
    pub games: u64,
    /// Rows written.
    pub rows: u64,
    /// `.npz` files written.
    pub files: u64,
    /// Finished games that were not written (after a failure).
    pub lost_games: u64,
    /// The failure that stopped writing.
    pub error: Option<StoreError>,
}

/// The writer thread and the sending end of its queue.
pub(super) struct DataWriter {
    tx: Option<Sender<WriterMsg>>,
    thread: Option<JoinHandle<WriterReport>>,
}

/// Rows and games gathered for one net.
struct Pending {
    rows: TrainingRows,
    sgfs: Vec<String>,
    /// Games whose last rows are in `rows` (not yet written).
    games: u64,
}

impl DataWriter {
    /// Starts the writer of `out`. `queue_games` bounds the queue;
    /// `stop` is raised when writing fails, so the game threads end.
    pub fn start(
        out: SelfplayOut,
        pos_len: usize,
        max_rows_per_file: usize,
        queue_games: usize,
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<DataWriter> {
        let (tx, rx) = bounded(queue_games.max(1));
        let thread = std::thread::Builder::new()
            .name("selfplay-writer".into())
            .spawn(move || write_loop(rx, out, pos_len, max_rows_per_file.max(1), &stop))?;
        Ok(DataWriter {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues a message, waiting while the queue is full. `false` if the
    /// writer is gone (it never stops early: it keeps taking messages
    /// after a failure, to count the games it could not write).
    pub fn send(&self, msg: WriterMsg) -> bool {
        self.tx.as_ref().is_some_and(|tx| tx.send(msg).is_ok())
    }

    /// Writes what is queued and gathered, and reports.
    pub fn finish(mut self) -> WriterReport {
        self.tx.take();
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(report)) => report,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => WriterReport::default(),
        }
    }
}

fn write_loop(
    rx: Receiver<WriterMsg>,
    out: SelfplayOut,
    pos_len: usize,
    max_rows: usize,
    stop: &AtomicBool,
) -> WriterReport {
    let mut report = WriterReport::default();
    let mut pending: BTreeMap<String, Pending> = BTreeMap::new();
    let mut rng = StdRng::from_entropy();
    let fail = |report: &mut WriterReport, pending: &BTreeMap<String, Pending>, e: StoreError| {
        report.lost_games += pending.values().map(|p| p.games).sum::<u64>();
        report.error.get_or_insert(e);
        stop.store(true, Ordering::SeqCst);
    };
    for msg in rx {
        if report.error.is_some() {
            if let WriterMsg::Game { .. } = msg {
                report.lost_games += 1;
            }
            continue;
        }
        let result = match msg {
            WriterMsg::Model { name, config } => out.write_config(&name, config).and_then(|()| {
                // The other nets' games are done with (apart from the few
                // still in flight): write them out now.
                let others: Vec<String> = pending.keys().filter(|k| **k != name).cloned().collect();
                for model in others {
                    if let Some(p) = pending.get_mut(&model) {
                        let n = p.rows.num_rows;
                        write_file(&out, &model, p, n, &mut report, &mut rng)?;
                    }
                }
                Ok(())
            }),
            WriterMsg::Game { model, rows, sgf } => {
                let p = pending.entry(model.clone()).or_insert_with(|| Pending {
                    rows: TrainingRows::new(pos_len),
                    sgfs: Vec::new(),
                    games: 0,
                });
                p.rows.append(&rows);
                p.sgfs.push(sgf);
                p.games += 1;
                let mut r = Ok(());
                while r.is_ok() && p.rows.num_rows >= max_rows {
                    r = write_file(&out, &model, p, max_rows, &mut report, &mut rng);
                }
                r
            }
        };
        if let Err(e) = result {
            fail(&mut report, &pending, e);
        }
    }
    if report.error.is_none() {
        let models: Vec<String> = pending.keys().cloned().collect();
        for model in models {
            if let Some(p) = pending.get_mut(&model) {
                let n = p.rows.num_rows;
                if let Err(e) = write_file(&out, &model, p, n, &mut report, &mut rng) {
                    fail(&mut report, &pending, e);
                    break;
                }
            }
        }
    }
    report
}

/// Writes the first `n` rows of `p` as one file (and its gathered games'
/// SGFs beside it), then drops them from `p`. Nothing is dropped if the
/// write fails.
fn write_file(
    out: &SelfplayOut,
    model: &str,
    p: &mut Pending,
    n: usize,
    report: &mut WriterReport,
    rng: &mut StdRng,
) -> Result<(), StoreError> {
    if n == 0 && p.sgfs.is_empty() {
        return Ok(());
    }
    let stem = selfplay_file_stem(worker_name(), rng.gen::<u64>());
    if n > 0 {
        let file = p.rows.slice(0, n);
        let bytes = encode_npz(&file, &NpzWriteOptions::default())
            .unwrap_or_else(|e| panic!("encoding self-play rows (a bug): {e}"));
        out.write_rows(model, &stem, bytes)?;
        report.rows += n as u64;
        report.files += 1;
    }
    if !p.sgfs.is_empty() {
        let mut text = p.sgfs.join("\n");
        text.push('\n');
        out.write_games(model, &stem, text.into_bytes())?;
        p.sgfs.clear();
    }
    // Games whose rows are all written now count as written.
    let rest = p.rows.num_rows - n;
    p.rows = p.rows.slice(n, n + rest);
    let done = if rest == 0 {
        p.games
    } else {
        p.games.saturating_sub(1)
    };
    report.games += done;
    p.games -= done;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreUrl;

    fn rows(n: usize, first: f32) -> TrainingRows {
        let mut r = TrainingRows::new(5);
        for i in 0..n {
            r.push_zeroed_row();
            r.row_mut(i).global_targets[0] = first + i as f32;
        }
        r
    }

    fn files(dir: &std::path::Path, model: &str, ext: &str) -> Vec<std::path::PathBuf> {
        let sub = if ext == "npz" { "tdata" } else { "sgfs" };
        let mut v: Vec<_> = std::fs::read_dir(dir.join(model).join(sub))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    #[test]
    fn files_hold_exactly_max_rows_and_the_rest_at_the_end() {
        let dir = std::env::temp_dir().join(format!("engine-writer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = SelfplayOut::open(&StoreUrl::Local(dir.clone())).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let w = DataWriter::start(out, 5, 4, 2, stop.clone()).unwrap();
        assert!(w.send(WriterMsg::Model {
            name: "a".into(),
            config: Bytes::from_static(b"cfg")
        }));
        for g in 0..5 {
            assert!(w.send(WriterMsg::Game {
                model: "a".into(),
                rows: Box::new(rows(3, g as f32 * 10.0)),
                sgf: format!("(;G{g})")
            }));
        }
        // A new net: "a"'s gathered rows are written out.
        assert!(w.send(WriterMsg::Model {
            name: "b".into(),
            config: Bytes::from_static(b"cfg")
        }));
        assert!(w.send(WriterMsg::Game {
            model: "b".into(),
            rows: Box::new(rows(2, 0.0)),
            sgf: "(;B)".into()
        }));
        let report = w.finish();
        assert!(report.error.is_none());
        assert_eq!(
            (report.games, report.rows, report.files, report.lost_games),
            (6, 17, 5, 0)
        );
        let sizes: Vec<usize> = files(&dir, "a", "npz")
            .iter()
            .map(|f| crate::data::read_npz(f).unwrap().num_rows)
            .collect();
        let mut sorted = sizes.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            [3, 4, 4, 4],
            "15 rows of net a: three full files and the rest"
        );
        let games: usize = files(&dir, "a", "sgfs")
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap().lines().count())
            .sum();
        assert_eq!(games, 5);
        assert_eq!(files(&dir, "b", "npz").len(), 1);
        assert!(!stop.load(Ordering::SeqCst));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_stops_play_and_counts_lost_games() {
        // A file where the output folder should be: every write fails.
        let base = std::env::temp_dir().join(format!("engine-writer-fail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("out"), b"not a folder").unwrap();
        let out = SelfplayOut::open(&StoreUrl::Local(base.join("out"))).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let w = DataWriter::start(out, 5, 2, 1, stop.clone()).unwrap();
        for g in 0..4 {
            assert!(w.send(WriterMsg::Game {
                model: "a".into(),
                rows: Box::new(rows(1, g as f32)),
                sgf: "(;)".into()
            }));
        }
        let report = w.finish();
        let e = report.error.expect("the write failed");
        assert!(e.to_string().contains("out/a/tdata/"), "{e}");
        assert_eq!((report.games, report.lost_games), (0, 4));
        assert!(stop.load(Ordering::SeqCst));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
