//! Training input: the rows of one shuffled window, streamed from the run
//! store in batches, with bounded memory.
//!
//! The rows of a window's files, in file-name order, are one sequence
//! (`engine train` walks it with a cursor that survives restarts). A
//! fetch thread reads and decodes the next file while the batch thread
//! cuts the current one into batches, so at most [`FILES_IN_MEMORY`]
//! decoded files are held whatever the window's size (KataGo's trainer
//! also reads its window file by file). Batches may span two files.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use thiserror::Error;

use super::npz::{read_npz_bytes, read_npz_num_rows_bytes};
use super::{NpzError, TrainingRows};
use crate::store::layout::{ShuffledData, WindowFile};
use crate::store::{Store, StoreError};

/// Decoded files held at most: the one being cut into batches and the
/// next one (decoded while the first is cut, then handed over).
pub const FILES_IN_MEMORY: usize = 2;

/// Reading a window failed.
#[derive(Debug, Error)]
pub enum WindowReadError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file is not a readable `.npz`.
    #[error(transparent)]
    Npz(#[from] NpzError),
    /// A file's rows are laid out for another board size, or its row count
    /// is not the one recorded beside it.
    #[error("{target}: {why}")]
    Mismatch {
        /// The file's URL.
        target: String,
        /// What differs.
        why: String,
    },
}

/// The files of a window (its training or its validation part) with their
/// row counts.
#[derive(Debug, Clone)]
pub struct WindowRows {
    store: Store,
    files: Vec<(String, u64)>,
    pos_len: usize,
}

impl WindowRows {
    /// The rows of `files` (from [`ShuffledData::window`]). Files whose row
    /// count is not recorded beside them are read once to count it.
    pub fn open(
        data: &ShuffledData,
        files: &[WindowFile],
        pos_len: usize,
    ) -> Result<WindowRows, WindowReadError> {
        let store = data.store().clone();
        let mut counted = Vec::with_capacity(files.len());
        for f in files {
            let rows = match f.rows {
                Some(n) => n,
                None => {
                    let bytes = store.get(&f.key)?;
                    read_npz_num_rows_bytes(&bytes, &store.describe(&f.key))? as u64
                }
            };
            counted.push((f.key.clone(), rows));
        }
        Ok(WindowRows {
            store,
            files: counted,
            pos_len,
        })
    }

    /// Rows in all files.
    pub fn num_rows(&self) -> u64 {
        self.files.iter().map(|(_, n)| n).sum()
    }

    /// Number of files.
    pub fn num_files(&self) -> usize {
        self.files.len()
    }

    /// Batches of `batch_size` rows starting at row `start` (taken modulo
    /// the rows), going round the window for ever.
    pub fn cycle(&self, start: u64, batch_size: usize) -> RowBatches {
        RowBatches::spawn(self.clone(), start, batch_size, true)
    }

    /// Batches of `batch_size` rows over the window once, the last one
    /// short if the rows do not divide evenly.
    pub fn once(&self, batch_size: usize) -> RowBatches {
        RowBatches::spawn(self.clone(), 0, batch_size, false)
    }

    /// File `i`'s rows, with its URL.
    fn read_file(&self, i: usize) -> Result<(TrainingRows, String), WindowReadError> {
        let (key, expected) = &self.files[i];
        let target = self.store.describe(key);
        let bytes = self.store.get(key)?;
        let rows = read_npz_bytes(&bytes, &target)?;
        if rows.pos_len != self.pos_len {
            return Err(WindowReadError::Mismatch {
                target,
                why: format!(
                    "rows for a {0}x{0} data board, expected {1}x{1} (-pos-len)",
                    rows.pos_len, self.pos_len
                ),
            });
        }
        if rows.num_rows as u64 != *expected {
            return Err(WindowReadError::Mismatch {
                target,
                why: format!("{} rows, its .json says {expected}", rows.num_rows),
            });
        }
        Ok((rows, target))
    }
}

/// Batches of a window, read ahead on two threads (fetch and decode; cut).
/// Dropping it stops both.
pub struct RowBatches {
    rx: Option<Receiver<Result<TrainingRows, WindowReadError>>>,
    threads: Vec<JoinHandle<()>>,
}

impl RowBatches {
    fn spawn(window: WindowRows, start: u64, batch_size: usize, cycle: bool) -> RowBatches {
        let batch_size = batch_size.max(1);
        // A rendezvous: the fetch thread decodes the next file, then waits
        // with it until the batch thread is done with the current one.
        let (file_tx, file_rx) = sync_channel::<Result<(TrainingRows, String), WindowReadError>>(0);
        let (tx, rx) = sync_channel(2);
        let total = window.num_rows();
        // The first file and the offset in it.
        let (mut first, mut skip) = (0usize, if total == 0 { 0 } else { start % total });
        while first < window.files.len() && skip >= window.files[first].1 {
            skip -= window.files[first].1;
            first += 1;
        }
        let mut threads = Vec::new();
        let fetcher = window.clone();
        let spawned = std::thread::Builder::new()
            .name("window-fetch".into())
            .spawn(move || {
                if fetcher.files.is_empty() || total == 0 {
                    return;
                }
                let mut i = first;
                loop {
                    if i == fetcher.files.len() {
                        if !cycle {
                            return;
                        }
                        i = 0;
                    }
                    let read = fetcher.read_file(i);
                    let failed = read.is_err();
                    if file_tx.send(read).is_err() || failed {
                        return;
                    }
                    i += 1;
                }
            });
        if let Ok(h) = spawned {
            threads.push(h);
        }
        let pos_len = window.pos_len;
        let spawned = std::thread::Builder::new()
            .name("window-batches".into())
            .spawn(move || {
                let mut pending = TrainingRows::new(pos_len);
                let mut first_file = true;
                // Whether the window's rows carry metadata: its first file
                // says, and every other file must agree.
                let mut with_metadata = None;
                for file in file_rx {
                    let rows = match file {
                        Ok((r, _)) if with_metadata.is_none_or(|m| m == r.has_metadata) => r,
                        Ok((r, target)) => {
                            let _ = tx.send(Err(WindowReadError::Mismatch {
                                target,
                                why: format!(
                                    "rows {} metadataInputNC, the window's first file's {}",
                                    if r.has_metadata { "with" } else { "without" },
                                    if r.has_metadata { "without" } else { "with" },
                                ),
                            }));
                            return;
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    with_metadata = Some(rows.has_metadata);
                    let from = if first_file { skip as usize } else { 0 };
                    first_file = false;
                    let mut at = from;
                    while at < rows.num_rows {
                        let take = (batch_size - pending.num_rows).min(rows.num_rows - at);
                        if pending.num_rows == 0 && take == batch_size {
                            pending = rows.slice(at, at + take);
                        } else {
                            pending.append(&rows.slice(at, at + take));
                        }
                        at += take;
                        if pending.num_rows == batch_size {
                            let batch = std::mem::replace(&mut pending, TrainingRows::new(pos_len));
                            if tx.send(Ok(batch)).is_err() {
                                return; // the consumer is gone
                            }
                        }
                    }
                }
                if !cycle && pending.num_rows > 0 {
                    let _ = tx.send(Ok(pending));
                }
            });
        if let Ok(h) = spawned {
            threads.push(h);
        }
        RowBatches {
            rx: Some(rx),
            threads,
        }
    }
}

impl Iterator for RowBatches {
    type Item = Result<TrainingRows, WindowReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.rx.as_ref()?.recv().ok()
    }
}

impl Drop for RowBatches {
    fn drop(&mut self) {
        // Closing the channel makes the batch thread's next send fail; its
        // end closes the fetch thread's channel in turn.
        self.rx.take();
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{encode_npz, NpzWriteOptions};
    use crate::store::layout::ShuffleOutput;
    use crate::store::StoreUrl;
    use std::path::PathBuf;

    fn rows_numbered(start: usize, n: usize) -> TrainingRows {
        let mut rows = TrainingRows::new(5);
        for r in 0..n {
            rows.push_zeroed_row();
            rows.row_mut(r).global_targets[0] = (start + r) as f32;
        }
        rows
    }

    fn firsts(b: &TrainingRows) -> Vec<f32> {
        b.global_targets_nc
            .chunks(super::super::NUM_GLOBAL_TARGETS)
            .map(|g| g[0])
            .collect()
    }

    /// A window `w` under a scratch parent with files of the given sizes,
    /// rows numbered 0.. in order.
    fn window(tag: &str, sizes: &[usize], record_rows: bool) -> (PathBuf, WindowRows) {
        let parent =
            std::env::temp_dir().join(format!("engine-window-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let out = ShuffleOutput::open(&StoreUrl::Local(parent.join("w/train"))).unwrap();
        let mut start = 0;
        for (i, &n) in sizes.iter().enumerate() {
            let bytes = encode_npz(&rows_numbered(start, n), &NpzWriteOptions::default()).unwrap();
            out.write_file(&ShuffleOutput::file_name(i, 0), bytes, n)
                .unwrap();
            if !record_rows {
                std::fs::remove_file(parent.join(format!("w/train/data{i}_0.json"))).unwrap();
            }
            start += n;
        }
        out.finish((0, start as i64)).unwrap();
        let data = ShuffledData::open(&StoreUrl::Local(parent.clone())).unwrap();
        let w = data.newest().unwrap().unwrap();
        let rows = WindowRows::open(&data, &w.train, 5).unwrap();
        (parent, rows)
    }

    #[test]
    fn batches_run_across_files_from_any_cursor_and_wrap() {
        let (dir, w) = window("cycle", &[10, 7, 3], true);
        assert_eq!((w.num_rows(), w.num_files()), (20, 3));
        let got: Vec<Vec<f32>> = w.cycle(8, 4).take(4).map(|b| firsts(&b.unwrap())).collect();
        assert_eq!(
            got,
            [
                vec![8., 9., 10., 11.],
                vec![12., 13., 14., 15.],
                vec![16., 17., 18., 19.],
                vec![0., 1., 2., 3.],
            ]
        );
        // A cursor past the end is taken modulo the rows.
        let b = w.cycle(20 * 3 + 17, 5).next().unwrap().unwrap();
        assert_eq!(firsts(&b), [17., 18., 19., 0., 1.]);
        // Once: every row, the last batch short.
        let once: Vec<usize> = w.once(6).map(|b| b.unwrap().num_rows).collect();
        assert_eq!(once, [6, 6, 6, 2]);
        // Dropping early stops the threads (no hang).
        let mut it = w.cycle(0, 1);
        assert!(it.next().is_some());
        drop(it);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unrecorded_counts_are_read_and_bad_files_are_errors() {
        let (dir, w) = window("count", &[4, 2], false);
        assert_eq!(w.num_rows(), 6);
        // A file cut short is an error naming it, not fewer rows.
        let f = dir.join("w/train/data1_0.npz");
        let bytes = std::fs::read(&f).unwrap();
        std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
        let out: Vec<_> = w.once(4).collect();
        assert!(out[0].is_ok());
        let e = out[1].as_ref().unwrap_err().to_string();
        assert!(e.contains("data1_0.npz"), "{e}");
        // A board-size mismatch is refused.
        let data = ShuffledData::open(&StoreUrl::Local(dir.clone())).unwrap();
        let win = data.newest().unwrap().unwrap();
        let w9 = WindowRows::open(&data, &win.train[..1], 9).unwrap();
        let e = w9.once(4).next().unwrap().unwrap_err();
        assert!(matches!(e, WindowReadError::Mismatch { .. }), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A window whose files all carry metadata gives batches with it; a
    /// file without it after one with it is an error naming the file.
    #[test]
    fn metadata_comes_through_and_files_may_not_mix() {
        let (dir, w) = window("meta", &[3, 3], true);
        let with_meta = |start: usize| {
            let mut rows = rows_numbered(start, 3);
            rows.has_metadata = true;
            rows.metadata_input_nc = vec![0.5; 3 * crate::data::NUM_METADATA_INPUTS];
            encode_npz(&rows, &NpzWriteOptions::default()).unwrap()
        };
        std::fs::write(dir.join("w/train/data0_0.npz"), with_meta(0)).unwrap();
        let out: Vec<_> = w.once(2).collect();
        assert!(out[0].as_ref().unwrap().has_metadata);
        let e = out
            .iter()
            .find_map(|b| b.as_ref().err())
            .unwrap()
            .to_string();
        assert!(
            e.contains("data1_0.npz") && e.contains("metadataInputNC"),
            "{e}"
        );
        std::fs::write(dir.join("w/train/data1_0.npz"), with_meta(3)).unwrap();
        let batches: Vec<TrainingRows> = w.once(4).map(|b| b.unwrap()).collect();
        assert!(batches.iter().all(|b| b.has_metadata));
        assert_eq!(firsts(&batches[0]), [0., 1., 2., 3.]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
