//! `engine shuffle`: KataGo's `python/shuffle.py` in the binary.
//!
//! Finds every `*.npz` under the given directories (skipping names with `_`,
//! KataGo's temporary-file rule), keeps the newest rows in a window that
//! grows with the data ([`super::window`]), samples about
//! `-keep-target-rows` of them and shuffles them uniformly across output
//! files with bounded memory, KataGo's two phases:
//!
//! 1. shardify: input files are read in groups of about
//!    `-worker-group-size` rows; each group is permuted, subsampled and its
//!    rows dealt uniformly at random into `B` buckets (one shard file per
//!    group and bucket in the scratch dir);
//! 2. merge: each bucket's shards are loaded together, permuted and split
//!    into `-approx-rows-per-bucket / -approx-rows-per-out-file` output
//!    files `dataB_J.npz`, each with `dataB_J.json` = `{"num_rows": n}`.
//!
//! Finally `OUT.json` = `{"range": [start, end]}` (the data rows the window
//! covers) is written; it also marks the output complete. Every file is
//! written atomically, so a killed shuffle leaves only whole files; a rerun
//! into the same `-out-dir` clears the leftovers of an incomplete run
//! (no `OUT.json`) and starts over.

use std::io::Write;
use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use thiserror::Error;

use super::npz::{
    read_npz, read_npz_num_rows, sync_parent_dir, temp_path_for, write_npz_atomic_with,
};
use super::window::{choose_window, find_files, load_summary, py_round, FindOptions, WindowParams};
use super::{NpzError, NpzWriteOptions, TrainingRows};

/// `engine shuffle` failed.
#[derive(Debug, Error)]
pub enum ShuffleError {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A data file is bad.
    #[error("{0}")]
    Npz(#[from] NpzError),
    /// The summary file is not KataGo's format.
    #[error("summary file {}: {why}", path.display())]
    BadSummary {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The output directory holds a finished shuffle or foreign files.
    #[error("{} already exists and is not empty{why}", path.display())]
    OutDirNotEmpty {
        /// The directory.
        path: PathBuf,
        /// Why it was not cleared.
        why: String,
    },
    /// A flag value is out of range.
    #[error("{0}")]
    InvalidArgs(String),
    /// Input files mix data board sizes.
    #[error("input files mix data board sizes {0} and {1}")]
    MixedPosLen(usize, usize),
}

impl ShuffleError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        ShuffleError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Everything `engine shuffle` needs (the flags, parsed).
#[derive(Debug, Clone)]
pub struct ShuffleConfig {
    /// Input directories.
    pub dirs: Vec<PathBuf>,
    /// `-out-dir`.
    pub out_dir: PathBuf,
    /// `-out-tmp-dir` (scratch space for shards).
    pub out_tmp_dir: PathBuf,
    /// Window parameters.
    pub window: WindowParams,
    /// `-keep-target-rows` (`None` = `all`).
    pub keep_target_rows: Option<u64>,
    /// `-summary-file`.
    pub summary_file: Option<PathBuf>,
    /// `-approx-rows-per-out-file`.
    pub approx_rows_per_out_file: u64,
    /// `-approx-rows-per-bucket` (a multiple of the above).
    pub approx_rows_per_bucket: u64,
    /// `-num-processes`: worker threads.
    pub num_processes: usize,
    /// `-worker-group-size`: rows per shardify group.
    pub worker_group_size: u64,
    /// `-exclude` entries (already prefixed) and `-exclude-basename`.
    pub excludes: Vec<String>,
    /// Match excludes on the file name only.
    pub exclude_basename: bool,
    /// `-only-include-md5-path-prop-lbound` / `-ubound`.
    pub md5_bounds: (Option<f64>, Option<f64>),
    /// Seed for reproducible runs (`None`: from the OS).
    pub seed: Option<u64>,
    /// Deflate level of the output files (`None`: 6, KataGo's).
    pub level: Option<i32>,
}

/// What a shuffle did.
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffleReport {
    /// Usable input files found.
    pub files_found: usize,
    /// Rows in them.
    pub num_rows_total: u64,
    /// The window size.
    pub desired_num_rows: u64,
    /// Rows in the files the window uses.
    pub num_rows_used: u64,
    /// Files the window uses.
    pub files_used: usize,
    /// `OUT.json`'s range.
    pub range: (i64, i64),
    /// Output files and their rows.
    pub outputs: Vec<(PathBuf, usize)>,
}

/// The fraction KataGo's md5 path filter assigns a file name:
/// `int(md5(basename).hexdigest()[:13], 16) / 2**52`.
pub fn md5_path_prop(basename: &str) -> f64 {
    use md5::{Digest, Md5};
    let d = Md5::digest(basename.as_bytes());
    // 13 hex digits = the top 52 bits.
    let top = u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]) >> 12;
    top as f64 / (1u64 << 52) as f64
}

/// Runs a shuffle, logging progress lines to `log`. `Ok(None)`: no rows or
/// fewer than `min_rows`; like KataGo, nothing is written but `OUT` itself.
pub fn shuffle(
    cfg: &ShuffleConfig,
    log: &mut dyn Write,
) -> Result<Option<ShuffleReport>, ShuffleError> {
    if cfg.approx_rows_per_out_file == 0 || cfg.approx_rows_per_bucket == 0 {
        return Err(ShuffleError::InvalidArgs(
            "-approx-rows-per-out-file and -approx-rows-per-bucket must be positive".into(),
        ));
    }
    if cfg.approx_rows_per_bucket % cfg.approx_rows_per_out_file != 0 {
        return Err(ShuffleError::InvalidArgs(format!(
            "-approx-rows-per-bucket ({}) must be a multiple of -approx-rows-per-out-file ({})",
            cfg.approx_rows_per_bucket, cfg.approx_rows_per_out_file
        )));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.num_processes.max(1))
        .build()
        .map_err(|e| ShuffleError::InvalidArgs(format!("thread pool: {e}")))?;
    let mut rng = match cfg.seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => StdRng::from_entropy(),
    };

    let mut find = FindOptions {
        excludes: cfg.excludes.iter().cloned().collect(),
        exclude_basename: cfg.exclude_basename,
        ..Default::default()
    };
    if cfg.exclude_basename {
        let names: Vec<String> = cfg
            .excludes
            .iter()
            .filter_map(|e| {
                Path::new(e)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .collect();
        find.excludes.extend(names);
    }
    if let Some(s) = &cfg.summary_file {
        find.summary = load_summary(s)?;
    }
    let (found, counts) = find_files(&cfg.dirs, &find)?;
    let _ = writeln!(log, "Total number of files: {}", found.len());
    let _ = writeln!(log, "Excluded count: {}", counts.excluded);
    let _ = writeln!(
        log,
        "Excluded count due to looking like temp file: {}",
        counts.temp_like
    );
    let _ = writeln!(
        log,
        "Excluded count due to cmdline excludes file: {}",
        counts.by_excludes
    );

    let with_rows: Vec<(PathBuf, f64, Option<u64>)> = pool.install(|| {
        found
            .par_iter()
            .map(|f| {
                let rows = f.num_rows.or_else(|| match read_npz_num_rows(&f.path) {
                    Ok(n) => Some(n as u64),
                    Err(e) => {
                        eprintln!("WARNING: Skipping bad file: {e}");
                        None
                    }
                });
                (f.path.clone(), f.mtime, rows)
            })
            .collect()
    });

    prepare_out_dir(&cfg.out_dir, log)?;

    let Some(window) = choose_window(with_rows, &cfg.window) else {
        let _ = writeln!(
            log,
            "No rows found, or fewer than -min-rows {}",
            cfg.window.min_rows
        );
        return Ok(None);
    };
    let _ = writeln!(
        log,
        "Total rows found: {} ({} usable)",
        window.num_rows_total, window.num_usable_rows
    );
    let _ = writeln!(
        log,
        "Desired num rows: {} / {}",
        window.desired_num_rows, window.num_rows_total
    );
    let _ = writeln!(
        log,
        "Finally, using: ({}-{}) ({}/{} desired rows)",
        window.range.0, window.range.1, window.num_rows_used, window.desired_num_rows
    );

    for (p, r) in &window.files {
        let _ = writeln!(log, "Using: {} ({r} rows)", p.display());
    }
    let mut inputs = window.files.clone();
    inputs.shuffle(&mut rng);
    let mut approx_keep = window.num_rows_used;
    if let Some(k) = cfg.keep_target_rows {
        approx_keep = approx_keep.min(k);
    }
    let keep_prob = approx_keep as f64 / window.num_rows_used as f64;
    let (lo, hi) = cfg.md5_bounds;
    if lo.is_some() || hi.is_some() {
        let before = inputs.len();
        inputs.retain(|(p, _)| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let h = md5_path_prop(&name);
            lo.is_none_or(|l| h >= l) && hi.is_none_or(|u| h < u)
        });
        let _ = writeln!(
            log,
            "Due to only_include_md5, filtering down to {}/{} files",
            inputs.len(),
            before
        );
    }
    let rows_in_inputs: u64 = inputs.iter().map(|(_, r)| r).sum();
    if inputs.is_empty() || rows_in_inputs == 0 {
        let _ = writeln!(log, "No files after filtering for desired range");
        return Ok(None);
    }
    let approx_rows_to_keep = rows_in_inputs as f64 * keep_prob;
    let num_buckets =
        (py_round(approx_rows_to_keep / cfg.approx_rows_per_bucket as f64)).max(1) as usize;
    let files_per_bucket =
        (cfg.approx_rows_per_bucket / cfg.approx_rows_per_out_file).max(1) as usize;
    let _ = writeln!(
        log,
        "Writing ~{} output files ({} buckets x {} files/bucket), approx {:.0} kept rows (keep_prob {:.4} of {} desired rows)",
        num_buckets * files_per_bucket, num_buckets, files_per_bucket, approx_rows_to_keep, keep_prob, window.desired_num_rows
    );

    let bucket_tmp = cfg.out_tmp_dir.join("buckets");
    remove_dir_if_exists(&bucket_tmp)?;
    let bucket_dirs: Vec<PathBuf> = (0..num_buckets)
        .map(|b| bucket_tmp.join(format!("tmp.shuf{b}")))
        .collect();
    for d in &bucket_dirs {
        std::fs::create_dir_all(d).map_err(|e| ShuffleError::io(d, e))?;
    }
    let groups = group_files_by_rows(&inputs, cfg.worker_group_size);
    let _ = writeln!(
        log,
        "Grouping {} input files into {} sharding groups",
        inputs.len(),
        groups.len()
    );
    let base_seed: u64 = rng.gen();

    // Phase 1: shardify.
    let shard_level = Some(1); // scratch files: fast compression
    pool.install(|| {
        groups.par_iter().enumerate().try_for_each(|(g, files)| {
            let mut rng =
                StdRng::seed_from_u64(base_seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let Some(rows) = load_concat(files)? else {
                return Ok(());
            };
            let n = rows.num_rows;
            let keep = if keep_prob < 1.0 {
                (py_round(n as f64 * keep_prob).max(0) as usize).min(n)
            } else {
                n
            };
            let mut perm: Vec<usize> = (0..n).collect();
            perm.shuffle(&mut rng);
            perm.truncate(keep);
            // Deal each kept row to a uniformly random bucket.
            let mut per_bucket: Vec<Vec<usize>> = vec![Vec::new(); num_buckets];
            for &i in &perm {
                per_bucket[rng.gen_range(0..num_buckets)].push(i);
            }
            for (b, idx) in per_bucket.iter().enumerate() {
                let path = bucket_dirs[b].join(format!("{g}.npz"));
                write_npz_atomic_with(
                    &path,
                    &rows.select(idx),
                    &NpzWriteOptions { level: shard_level },
                )?;
            }
            Ok::<(), ShuffleError>(())
        })
    })?;

    // Phase 2: merge each bucket into its output files.
    let out_opts = NpzWriteOptions { level: cfg.level };
    let written: Vec<Vec<(PathBuf, usize)>> = pool.install(|| {
        (0..num_buckets)
            .into_par_iter()
            .map(|b| {
                let mut rng =
                    StdRng::seed_from_u64(base_seed.wrapping_add(0x5851_F42D_4C95_7F2D ^ b as u64));
                let shards: Vec<PathBuf> = (0..groups.len())
                    .map(|g| bucket_dirs[b].join(format!("{g}.npz")))
                    .collect();
                let mut results = Vec::new();
                let Some(rows) = load_concat(&shards)? else {
                    // No group reached this bucket (KataGo writes nothing either).
                    remove_dir_if_exists(&bucket_dirs[b])?;
                    return Ok(results);
                };
                let n = rows.num_rows;
                let mut perm: Vec<usize> = (0..n).collect();
                perm.shuffle(&mut rng);
                for j in 0..files_per_bucket {
                    let (s, e) = (j * n / files_per_bucket, (j + 1) * n / files_per_bucket);
                    let out = cfg.out_dir.join(format!("data{b}_{j}.npz"));
                    let part = rows.select(&perm[s..e]);
                    write_json_atomic(
                        &out.with_extension("json"),
                        &format!("{{\"num_rows\": {}}}", e - s),
                    )?;
                    write_npz_atomic_with(&out, &part, &out_opts)?;
                    results.push((out, e - s));
                }
                remove_dir_if_exists(&bucket_dirs[b])?;
                Ok::<_, ShuffleError>(results)
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    remove_dir_if_exists(&bucket_tmp)?;
    // The scratch dir itself goes too when nothing else is in it.
    let _ = std::fs::remove_dir(&cfg.out_tmp_dir);
    let outputs: Vec<(PathBuf, usize)> = written.into_iter().flatten().collect();
    let _ = writeln!(log, "Number of rows by output file:");
    for (p, n) in &outputs {
        let _ = writeln!(log, "  {} {n}", p.display());
    }
    write_json_atomic(
        &summary_json_path(&cfg.out_dir),
        &format!("{{\"range\": [{}, {}]}}", window.range.0, window.range.1),
    )?;
    Ok(Some(ShuffleReport {
        files_found: found.len(),
        num_rows_total: window.num_rows_total,
        desired_num_rows: window.desired_num_rows,
        num_rows_used: window.num_rows_used,
        files_used: window.files.len(),
        range: window.range,
        outputs,
    }))
}

/// `OUT.json`, the shuffle's summary beside its output dir (`train.json`
/// when the dir is `.../train`).
pub fn summary_json_path(out_dir: &Path) -> PathBuf {
    let mut s = out_dir.as_os_str().to_os_string();
    s.push(".json");
    PathBuf::from(s)
}

/// Groups files into runs of at least `size` rows (the last may be short).
fn group_files_by_rows(files: &[(PathBuf, u64)], size: u64) -> Vec<Vec<PathBuf>> {
    let mut groups = Vec::new();
    let mut cur = Vec::new();
    let mut rows = 0;
    for (p, r) in files {
        if *r == 0 {
            continue;
        }
        cur.push(p.clone());
        rows += r;
        if rows >= size {
            groups.push(std::mem::take(&mut cur));
            rows = 0;
        }
    }
    if !cur.is_empty() {
        groups.push(cur);
    }
    groups
}

/// Loads and concatenates files; a vanished file is skipped with a warning
/// (as KataGo does). `None` when none could be found.
fn load_concat(files: &[PathBuf]) -> Result<Option<TrainingRows>, ShuffleError> {
    let mut all: Option<TrainingRows> = None;
    // Decompress a few files at once on the pool's threads; a chunk at a
    // time keeps memory at the group plus one chunk.
    let present: Vec<&PathBuf> = files.iter().filter(|f| f.exists()).collect();
    for chunk in present.chunks(rayon::current_num_threads().max(1)) {
        let loaded = chunk
            .par_iter()
            .map(|f| read_npz(f))
            .collect::<Result<Vec<_>, _>>()?;
        for rows in loaded {
            match &mut all {
                None => all = Some(rows),
                Some(a) if a.pos_len == rows.pos_len => a.append(&rows),
                Some(a) => return Err(ShuffleError::MixedPosLen(a.pos_len, rows.pos_len)),
            }
        }
    }
    Ok(all)
}

fn remove_dir_if_exists(d: &Path) -> Result<(), ShuffleError> {
    match std::fs::remove_dir_all(d) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ShuffleError::io(d, e)),
        _ => Ok(()),
    }
}

/// Output files an interrupted run of ours may have left.
fn is_our_leftover(name: &str) -> bool {
    let base = name.strip_suffix(".tmp").unwrap_or(name);
    base.starts_with("data") && (base.ends_with(".npz") || base.ends_with(".json"))
}

/// Creates `out` or, when it holds only the leftovers of an interrupted
/// shuffle (no `OUT.json`), clears it. A finished or foreign dir is an
/// error, as in KataGo.
fn prepare_out_dir(out: &Path, log: &mut dyn Write) -> Result<(), ShuffleError> {
    if !out.exists() {
        return std::fs::create_dir_all(out).map_err(|e| ShuffleError::io(out, e));
    }
    let names: Vec<String> = std::fs::read_dir(out)
        .map_err(|e| ShuffleError::io(out, e))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    if summary_json_path(out).exists() {
        return Err(ShuffleError::OutDirNotEmpty {
            path: out.to_path_buf(),
            why: " (it holds a finished shuffle)".into(),
        });
    }
    if let Some(other) = names.iter().find(|n| !is_our_leftover(n)) {
        return Err(ShuffleError::OutDirNotEmpty {
            path: out.to_path_buf(),
            why: format!(" ({other} is not a shuffle output)"),
        });
    }
    let _ = writeln!(
        log,
        "Removing {} files left by an interrupted shuffle in {}",
        names.len(),
        out.display()
    );
    for n in names {
        let p = out.join(n);
        std::fs::remove_file(&p).map_err(|e| ShuffleError::io(&p, e))?;
    }
    Ok(())
}

/// Writes json text atomically (temp name, fsync, rename). The text is
/// formatted as Python's `json.dump` writes it, as KataGo's files are.
pub(crate) fn write_json_atomic(path: &Path, text: &str) -> Result<(), ShuffleError> {
    let tmp = temp_path_for(path);
    let run = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        sync_parent_dir(path);
        Ok(())
    };
    run().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        ShuffleError::io(path, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_prop_matches_python() {
        // python3 -c "import hashlib; print(int('0x'+hashlib.md5(b'ABC.npz').hexdigest()[:13],16)/2**52)"
        let h = md5_path_prop("ABC.npz");
        assert!((0.0..1.0).contains(&h));
        assert!((h - MD5_ABC).abs() < 1e-15, "{h}");
    }
    const MD5_ABC: f64 = 0.3586303887659461;

    #[test]
    fn groups_reach_the_target_size() {
        let files: Vec<(PathBuf, u64)> = [5, 0, 3, 4, 10, 1]
            .iter()
            .enumerate()
            .map(|(i, &r)| (PathBuf::from(format!("{i}")), r))
            .collect();
        let g = group_files_by_rows(&files, 8);
        let sizes: Vec<usize> = g.iter().map(|x| x.len()).collect();
        assert_eq!(sizes, [2, 2, 1]);
    }

    #[test]
    fn leftovers_are_recognised() {
        assert!(is_our_leftover("data0_1.npz"));
        assert!(is_our_leftover("data0_1.npz.tmp"));
        assert!(is_our_leftover("data3_0.json"));
        assert!(!is_our_leftover("model.bin.gz"));
    }
}
