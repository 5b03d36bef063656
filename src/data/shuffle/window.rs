//! Which input files `engine shuffle` considers, and how many of the newest
//! rows it keeps: KataGo's `python/shuffle.py` rules.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::UNIX_EPOCH;

use super::ShuffleError;
use crate::store::layout::walk_npz_files;
use crate::store::{ObjectInfo, Store, StoreUrl};

/// KataGo's window size (`compute_desired_num_rows` in `shuffle.py`):
///
/// `WINDOW(N) = (x^E - S^E) / (E * S^(E-1)) * EXPAND + MIN_ROWS`, with
/// `x = N - MIN_ROWS + S + ADD`, `S` = `taper_window_scale` (default
/// `min_rows`), clamped to `[min_rows, max_rows]`.
pub fn desired_num_rows(
    num_usable_rows: u64,
    min_rows: u64,
    add_to_data_rows: f64,
    taper_window_exponent: f64,
    expand_window_per_row: f64,
    taper_window_scale: Option<f64>,
    max_rows: Option<u64>,
) -> u64 {
    let offset = taper_window_scale.unwrap_or(min_rows as f64);
    let x = num_usable_rows as f64 - min_rows as f64 + offset + add_to_data_rows;
    let e = taper_window_exponent;
    let unscaled = x.powf(e) - offset.powf(e);
    let scaled = unscaled / (e * offset.powf(e - 1.0));
    // Python's int() truncates toward zero; a NaN (negative base) becomes
    // min_rows through the clamp, where Python would raise.
    let desired = scaled * expand_window_per_row + min_rows as f64;
    let mut rows = if desired.is_finite() && desired > 0.0 {
        desired.trunc() as u64
    } else {
        0
    };
    rows = rows.max(min_rows);
    if let Some(m) = max_rows {
        rows = rows.min(m);
    }
    rows
}

/// KataGo's test for names that look like temporary files: any `_` in the
/// file name (its self-play writes `HEX.npz`, shuffled outputs are
/// `dataB_J.npz`).
pub fn is_temp_npz_like(file_name: &str) -> bool {
    file_name.contains('_')
}

/// One candidate input file.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// The store that holds it.
    pub store: Store,
    /// Its key in that store.
    pub key: String,
    /// Its full URL (a path for a folder), as logs and excludes name it.
    pub url: String,
    /// Modification time, seconds since the epoch.
    pub mtime: f64,
    /// Rows, when known from a summary file.
    pub num_rows: Option<u64>,
}

/// What [`find_files`] skipped.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FindCounts {
    /// All skipped files.
    pub excluded: usize,
    /// Skipped as temporary-looking.
    pub temp_like: usize,
    /// Skipped by the exclude list.
    pub by_excludes: usize,
}

/// One summary-file entry: (file name, mtime, rows).
pub type SummaryEntry = (String, f64, Option<u64>);

/// A summary file's contents: folder URL (an absolute path for a local
/// folder) -> its files.
pub type Summary = HashMap<String, Vec<SummaryEntry>>;

/// Filters for [`find_files`].
#[derive(Debug, Default, Clone)]
pub struct FindOptions {
    /// `-summary-file`: folder URL -> `filename_mtime_num_rowss`.
    pub summary: Summary,
    /// `-exclude` entries (prefixed).
    pub excludes: HashSet<String>,
    /// `-exclude-basename`.
    pub exclude_basename: bool,
}

/// Loads a summary file (`summarize_old_selfplay_files.py`'s json: dir path
/// -> `{"filename_mtime_num_rowss": [[name, mtime, rows], ...]}`). Its
/// folders may be paths or `s3://` URLs.
pub fn load_summary(path: &Path) -> Result<Summary, ShuffleError> {
    let text = std::fs::read_to_string(path).map_err(|e| ShuffleError::io(path, e))?;
    parse_summary(&text).map_err(|why| ShuffleError::BadSummary {
        path: path.to_path_buf(),
        why,
    })
}

/// Parses a summary file's text (see [`load_summary`]); the error says
/// what is wrong.
pub fn parse_summary(text: &str) -> Result<Summary, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let obj = v.as_object().ok_or("not a json object")?;
    let mut out = HashMap::new();
    for (dir, entry) in obj {
        let list = entry
            .get("filename_mtime_num_rowss")
            .and_then(|l| l.as_array())
            .ok_or_else(|| format!("{dir}: no filename_mtime_num_rowss list"))?;
        let mut files = Vec::with_capacity(list.len());
        for item in list {
            let t = item
                .as_array()
                .filter(|t| t.len() == 3)
                .ok_or("entry is not [name, mtime, rows]")?;
            let name = t[0].as_str().ok_or("file name is not a string")?;
            let mtime = t[1].as_f64().ok_or("mtime is not a number")?;
            files.push((name.to_string(), mtime, t[2].as_u64()));
        }
        let url = StoreUrl::parse(dir).map_err(|e| e.to_string())?;
        out.insert(url.to_string(), files);
    }
    Ok(out)
}

/// Every `*.npz` under `dirs` (local folders follow symlinks), KataGo's
/// way: skips temporary-looking names and excluded files, and takes whole
/// folders from the summary instead of listing them.
pub fn find_files(
    dirs: &[Store],
    opts: &FindOptions,
) -> Result<(Vec<InputFile>, FindCounts), ShuffleError> {
    let mut files = Vec::new();
    let mut counts = FindCounts::default();
    for store in dirs {
        // shuffle.py's os.walk yields nothing for a missing dir (a loop may
        // run before self-play has made it); say so and go on.
        if store.url().local_path().is_some_and(|p| !p.is_dir()) {
            eprintln!("WARNING: {} is not a directory, no data there", store.url());
            continue;
        }
        // Objects found in summarised folders carry their summary mtime
        // and rows: remember them by key.
        let mut summarised: HashMap<String, (f64, Option<u64>)> = HashMap::new();
        let found = walk_npz_files(store, &mut |url| {
            let entries = opts.summary.get(&url.to_string())?;
            Some(
                entries
                    .iter()
                    .map(|(name, mtime, rows)| {
                        summarised.insert(format!("{url}/{name}"), (*mtime, *rows));
                        ObjectInfo {
                            key: name.clone(),
                            size: 0,
                            modified: UNIX_EPOCH,
                        }
                    })
                    .collect(),
            )
        })
        .map_err(ShuffleError::Store)?;
        for o in found {
            let url = store.describe(&o.key);
            let name = o.name().to_string();
            let summary = summarised.get(&url).copied();
            if is_temp_npz_like(&name) {
                counts.excluded += 1;
                counts.temp_like += 1;
                continue;
            }
            if excluded(opts, &name, &url) {
                counts.excluded += 1;
                counts.by_excludes += 1;
                continue;
            }
            let (mtime, num_rows) = match summary {
                // A summarised file without rows was unreadable then.
                Some((_, None)) => {
                    counts.excluded += 1;
                    continue;
                }
                Some((mtime, rows)) => (mtime, rows),
                None => (
                    o.modified
                        .duration_since(UNIX_EPOCH)
                        .map_or(0.0, |d| d.as_secs_f64()),
                    None,
                ),
            };
            files.push(InputFile {
                store: store.clone(),
                key: o.key,
                url,
                mtime,
                num_rows,
            });
        }
    }
    Ok((files, counts))
}

fn excluded(opts: &FindOptions, name: &str, full: &str) -> bool {
    if opts.exclude_basename {
        opts.excludes.contains(name)
    } else {
        opts.excludes.contains(full)
    }
}

/// The newest files that fill the window, and the data-row range they
/// cover (`train.json`'s `range`).
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// Rows in all usable files.
    pub num_rows_total: u64,
    /// Post-random rows plus random rows capped at `min_rows`.
    pub num_usable_rows: u64,
    /// The window size.
    pub desired_num_rows: u64,
    /// Files chosen (their URLs), newest first, with their rows.
    pub files: Vec<(String, u64)>,
    /// Rows in the chosen files (at least `desired_num_rows` unless the
    /// data runs out).
    pub num_rows_used: u64,
    /// `(min_start_row, max_end_row)`, offset by `add_to_data_rows`.
    pub range: (i64, i64),
}

/// Window parameters (the `shuffle.py` flags of the same names).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowParams {
    /// `-min-rows`.
    pub min_rows: u64,
    /// `-max-rows`.
    pub max_rows: Option<u64>,
    /// `-expand-window-per-row`.
    pub expand_window_per_row: f64,
    /// `-taper-window-exponent`.
    pub taper_window_exponent: f64,
    /// `-taper-window-scale`.
    pub taper_window_scale: Option<f64>,
    /// `-add-to-data-rows`.
    pub add_to_data_rows: f64,
    /// `-skip-mtime-range-start` / `-end`.
    pub skip_mtime_range: Option<(f64, f64)>,
}

/// Chooses the window from files with known row counts (`None` rows =
/// unreadable, skipped). Returns `None` when there are no rows or fewer
/// than `min_rows` (KataGo then quits without output).
pub fn choose_window(
    mut files: Vec<(String, f64, Option<u64>)>,
    p: &WindowParams,
) -> Option<Window> {
    // Oldest first by mtime (stable), as shuffle.py sorts.
    files.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut total = 0u64;
    let mut random_capped = 0u64;
    let mut postrandom = 0u64;
    for (path, _, rows) in &files {
        let Some(rows) = *rows else { continue };
        if rows == 0 {
            continue;
        }
        total += rows;
        if !path.contains("random/tdata/") && !path.contains("random\\tdata\\") {
            postrandom += rows;
        } else {
            random_capped = (random_capped + rows).min(p.min_rows);
        }
    }
    if total == 0 || total < p.min_rows {
        return None;
    }
    let usable = random_capped + postrandom;
    files.reverse();
    let desired = desired_num_rows(
        usable,
        p.min_rows,
        p.add_to_data_rows,
        p.taper_window_exponent,
        p.expand_window_per_row,
        p.taper_window_scale,
        p.max_rows,
    );
    let offset = p.add_to_data_rows.trunc() as i64;
    let max_end = total as i64 + offset;
    let mut min_start = max_end;
    let mut end_row = max_end;
    let mut used = 0u64;
    let mut chosen = Vec::new();
    for (path, mtime, rows) in files {
        if let Some((a, b)) = p.skip_mtime_range {
            if mtime >= a && mtime <= b {
                continue;
            }
        }
        let start_row = match rows {
            Some(r) if r > 0 => {
                chosen.push((path, r));
                used += r;
                let s = end_row - r as i64;
                min_start = min_start.min(s);
                s
            }
            _ => end_row,
        };
        if used >= desired {
            break;
        }
        end_row = start_row;
    }
    Some(Window {
        num_rows_total: total,
        num_usable_rows: usable,
        desired_num_rows: desired,
        files: chosen,
        num_rows_used: used,
        range: (min_start, max_end),
    })
}

/// Python's `round()` to an integer: halves go to the even neighbour.
pub fn py_round(x: f64) -> i64 {
    x.round_ties_even() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_formula_matches_shuffle_py() {
        // Values computed with shuffle.py's compute_desired_num_rows.
        assert_eq!(
            desired_num_rows(3000, 250_000, 0.0, 1.0, 1.0, None, None),
            250_000
        );
        assert_eq!(
            desired_num_rows(3000, 1000, 0.0, 1.0, 1.0, None, None),
            3000
        );
        assert_eq!(
            desired_num_rows(3000, 1000, 0.0, 0.65, 0.4, None, None),
            1641
        );
        assert_eq!(
            desired_num_rows(1_000_000, 250_000, 0.0, 0.65, 0.4, None, None),
            474_967
        );
        assert_eq!(
            desired_num_rows(1_000_000, 250_000, 0.0, 0.65, 0.4, Some(100_000.0), None),
            435_787
        );
        assert_eq!(
            desired_num_rows(1_000_000, 250_000, 5000.0, 0.675, 0.4, None, Some(400_000)),
            400_000
        );
        assert_eq!(
            desired_num_rows(100, 1000, 0.0, 0.65, 0.4, None, None),
            1000
        );
    }

    #[test]
    fn temp_names_follow_katago() {
        assert!(is_temp_npz_like("data0_3.npz"));
        assert!(!is_temp_npz_like("1F20939B3476347D.npz"));
    }

    fn params(min_rows: u64) -> WindowParams {
        WindowParams {
            min_rows,
            max_rows: None,
            expand_window_per_row: 0.4,
            taper_window_exponent: 0.65,
            taper_window_scale: None,
            add_to_data_rows: 0.0,
            skip_mtime_range: None,
        }
    }

    #[test]
    fn window_takes_newest_files_first() {
        let files = vec![
            ("a.npz".to_string(), 1.0, Some(1000)),
            ("c.npz".to_string(), 3.0, Some(1000)),
            ("b.npz".to_string(), 2.0, Some(1000)),
            ("bad.npz".to_string(), 4.0, None),
        ];
        let w = choose_window(files.clone(), &params(1000)).unwrap();
        assert_eq!(w.num_rows_total, 3000);
        assert_eq!(w.desired_num_rows, 1641);
        let names: Vec<_> = w.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["c.npz", "b.npz"]);
        assert_eq!((w.num_rows_used, w.range), (2000, (1000, 3000)));
        assert!(choose_window(files, &params(5000)).is_none());
    }

    #[test]
    fn random_rows_are_capped_at_min_rows() {
        let files = vec![
            ("x/random/tdata/a.npz".to_string(), 1.0, Some(5000)),
            ("x/sp/tdata/b.npz".to_string(), 2.0, Some(1000)),
        ];
        let w = choose_window(files, &params(2000)).unwrap();
        assert_eq!((w.num_rows_total, w.num_usable_rows), (6000, 3000));
    }

    #[test]
    fn find_files_skips_temp_names_excludes_and_uses_summaries() {
        let d = std::env::temp_dir().join(format!("engine-window-find-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for sub in ["sp/tdata", "sp/sum", "sp/tdata/deeper"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        for f in [
            "a.npz",
            "b_1.npz",
            "c.npz.tmp",
            "x.txt",
            "deeper/e.npz",
            "skip.npz",
        ] {
            std::fs::write(d.join("sp/tdata").join(f), b"").unwrap();
        }
        std::fs::write(d.join("sp/sum/not-listed.npz"), b"").unwrap();
        let summary_path = d.join("summary.json");
        let sum_dir = std::path::absolute(d.join("sp/sum")).unwrap();
        std::fs::write(
            &summary_path,
            serde_json::json!({ sum_dir.to_string_lossy(): {
                "filename_mtime_num_rowss": [["s.npz", 5.0, 123], ["t_1.npz", 6.0, 1], ["u.npz", 7.0, null]]
            }})
            .to_string(),
        )
        .unwrap();
        let opts = FindOptions {
            summary: load_summary(&summary_path).unwrap(),
            excludes: ["skip.npz".to_string()].into_iter().collect(),
            exclude_basename: true,
        };
        let dirs = [
            Store::open_path(&d.join("sp")).unwrap(),
            Store::open_path(&d.join("missing")).unwrap(),
        ];
        let (files, counts) = find_files(&dirs, &opts).unwrap();
        let mut names: Vec<String> = files
            .iter()
            .map(|f| {
                f.url
                    .strip_prefix(&format!("{}/", d.display()))
                    .unwrap()
                    .to_string()
            })
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["sp/sum/s.npz", "sp/tdata/a.npz", "sp/tdata/deeper/e.npz"]
        );
        let s = files.iter().find(|f| f.url.ends_with("/s.npz")).unwrap();
        assert_eq!((s.mtime, s.num_rows), (5.0, Some(123)));
        assert_eq!(
            counts,
            FindCounts {
                excluded: 4,
                temp_like: 2,
                by_excludes: 1
            }
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn python_rounding() {
        assert_eq!(
            (py_round(0.5), py_round(1.5), py_round(2.5), py_round(2.6)),
            (0, 2, 2, 3)
        );
    }
}
