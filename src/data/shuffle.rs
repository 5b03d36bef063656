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
//! covers) is written; it also marks the output complete. Inputs and
//! outputs are run-store URLs (folders or `s3://`), the shards go to a
//! local scratch folder. Every object is written whole, so a killed
//! shuffle leaves only whole files; a rerun into the same `-out-dir` clears
//! the leftovers of an incomplete run (no `OUT.json`) and starts over.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use thiserror::Error;

pub(super) mod window;

use super::npz::{encode_npz, read_npz_bytes, read_npz_num_rows_from};
use super::{NpzError, NpzWriteOptions, TrainingRows};
use crate::store::layout::ShuffleOutput;
use crate::store::{Store, StoreError, StoreUrl};
use window::{
    choose_window, find_files, load_summary, py_round, FindOptions, InputFile, Window, WindowParams,
};

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
    /// The run store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The summary file is not KataGo's format.
    #[error("summary file {}: {why}", path.display())]
    BadSummary {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The output directory holds a finished shuffle or foreign files.
    #[error("{url} already exists and is not empty{why}")]
    OutDirNotEmpty {
        /// The directory.
        url: String,
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
    /// Input directories (folders or `s3://` URLs).
    pub dirs: Vec<StoreUrl>,
    /// `-out-dir` (a folder or an `s3://` URL).
    pub out_dir: StoreUrl,
    /// `-out-tmp-dir`: local scratch space for shards.
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
    /// `-include-meta`: keep `metadataInputNC`, skipping files without it
    /// (otherwise it is dropped).
    pub include_meta: bool,
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
    /// Output files (their URLs) and their rows.
    pub outputs: Vec<(String, usize)>,
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
    check_args(cfg)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.num_processes.max(1))
        .build()
        .map_err(|e| ShuffleError::InvalidArgs(format!("thread pool: {e}")))?;
    let mut rng = match cfg.seed {
        Some(s) => StdRng::seed_from_u64(s),
        None => StdRng::from_entropy(),
    };
    let found = find_inputs(cfg, log)?;
    let with_rows = count_all_rows(&pool, &found);
    let Some(window) = choose_window(with_rows, &cfg.window) else {
        let _ = writeln!(
            log,
            "No rows found, or fewer than -min-rows {}",
            cfg.window.min_rows
        );
        return Ok(None);
    };
    let output = ShuffleOutput::open(&cfg.out_dir)?;
    prepare_output(&output, log)?;
    log_window(&window, log);
    let Some((inputs, keep_prob)) = select_inputs(cfg, &found, &window, &mut rng, log) else {
        return Ok(None);
    };
    let rows_in_inputs: u64 = inputs.iter().map(|(_, r)| r).sum();
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

    // Shards live in a local scratch store; a rerun starts it afresh.
    let scratch = Store::open_path(&cfg.out_tmp_dir)?;
    scratch.remove_temporaries("buckets")?;
    scratch.delete_prefix("buckets")?;
    let groups = group_files_by_rows(&inputs, cfg.worker_group_size);
    let _ = writeln!(
        log,
        "Grouping {} input files into {} sharding groups",
        inputs.len(),
        groups.len()
    );
    let plan = Plan {
        keep_prob,
        num_buckets,
        files_per_bucket,
        base_seed: rng.gen(),
        include_meta: cfg.include_meta,
    };
    shardify(&pool, &scratch, &groups, &plan)?;
    let written = merge_buckets(&pool, &scratch, &output, groups.len(), &plan, cfg.level)?;
    scratch.remove_temporaries("buckets")?;
    scratch.delete_prefix("buckets")?;
    // The scratch dir itself goes too when nothing else is in it.
    let _ = std::fs::remove_dir(&cfg.out_tmp_dir);
    let outputs: Vec<(String, usize)> = written.into_iter().flatten().collect();
    let _ = writeln!(log, "Number of rows by output file:");
    for (p, n) in &outputs {
        let _ = writeln!(log, "  {p} {n}");
    }
    output.finish(window.range)?;
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

/// What both phases share: how many rows to keep, where they go, and the
/// seed every group's and bucket's random numbers derive from.
struct Plan {
    /// The fraction of rows each group keeps.
    keep_prob: f64,
    /// Buckets (shard sets, then output-file sets).
    num_buckets: usize,
    /// Output files per bucket.
    files_per_bucket: usize,
    /// Drawn once from the run's generator after the inputs are shuffled.
    base_seed: u64,
    /// Keep `metadataInputNC` ([`ShuffleConfig::include_meta`]).
    include_meta: bool,
}

/// The scratch key of group `g`'s shard for bucket `b`.
fn shard_key(b: usize, g: usize) -> String {
    format!("buckets/tmp.shuf{b}/{g}.npz")
}

/// Rejects row counts that cannot be split into buckets and files.
fn check_args(cfg: &ShuffleConfig) -> Result<(), ShuffleError> {
    if cfg.approx_rows_per_out_file == 0 || cfg.approx_rows_per_bucket == 0 {
        return Err(ShuffleError::InvalidArgs(
            "-approx-rows-per-out-file and -approx-rows-per-bucket must be positive".into(),
        ));
    }
    if !cfg
        .approx_rows_per_bucket
        .is_multiple_of(cfg.approx_rows_per_out_file)
    {
        return Err(ShuffleError::InvalidArgs(format!(
            "-approx-rows-per-bucket ({}) must be a multiple of -approx-rows-per-out-file ({})",
            cfg.approx_rows_per_bucket, cfg.approx_rows_per_out_file
        )));
    }
    Ok(())
}

/// Every usable input file under the directories, with the counts of those
/// excluded logged.
fn find_inputs(cfg: &ShuffleConfig, log: &mut dyn Write) -> Result<Vec<InputFile>, ShuffleError> {
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
    let stores = cfg
        .dirs
        .iter()
        .map(Store::open)
        .collect::<Result<Vec<_>, _>>()?;
    let (found, counts) = find_files(&stores, &find)?;
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
    Ok(found)
}

/// Each file's URL, modification time and rows (`None`: unreadable).
fn count_all_rows(
    pool: &rayon::ThreadPool,
    found: &[InputFile],
) -> Vec<(String, f64, Option<u64>)> {
    // Row counts from each file's first member header: a folder's reader
    // or S3 range requests fetch the zip directory and that header only.
    pool.install(|| {
        found
            .par_iter()
            .map(|f| {
                let rows = f.num_rows.or_else(|| match count_rows(f) {
                    Ok(n) => Some(n as u64),
                    Err(e) => {
                        eprintln!("WARNING: Skipping bad file: {e}");
                        None
                    }
                });
                (f.url.clone(), f.mtime, rows)
            })
            .collect()
    })
}

/// Logs the window's size and the files it uses.
fn log_window(window: &Window, log: &mut dyn Write) {
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
        let _ = writeln!(log, "Using: {p} ({r} rows)");
    }
}

/// The window's files in random order, less those the md5 bounds exclude,
/// with the fraction of rows to keep. `None` (logged) when no rows are left.
fn select_inputs<'a>(
    cfg: &ShuffleConfig,
    found: &'a [InputFile],
    window: &Window,
    rng: &mut StdRng,
    log: &mut dyn Write,
) -> Option<(Vec<(&'a InputFile, u64)>, f64)> {
    let by_url: HashMap<&str, &InputFile> = found.iter().map(|f| (f.url.as_str(), f)).collect();
    let mut inputs: Vec<(&InputFile, u64)> = window
        .files
        .iter()
        .filter_map(|(url, r)| Some((*by_url.get(url.as_str())?, *r)))
        .collect();
    inputs.shuffle(rng);
    let mut approx_keep = window.num_rows_used;
    if let Some(k) = cfg.keep_target_rows {
        approx_keep = approx_keep.min(k);
    }
    let keep_prob = approx_keep as f64 / window.num_rows_used as f64;
    let (lo, hi) = cfg.md5_bounds;
    if lo.is_some() || hi.is_some() {
        let before = inputs.len();
        inputs.retain(|(f, _)| {
            let name = f.key.rsplit('/').next().unwrap_or(&f.key);
            let h = md5_path_prop(name);
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
        return None;
    }
    Some((inputs, keep_prob))
}

/// Phase 1: each group's rows, permuted and subsampled, dealt into one
/// scratch shard per bucket.
fn shardify(
    pool: &rayon::ThreadPool,
    scratch: &Store,
    groups: &[Vec<&InputFile>],
    plan: &Plan,
) -> Result<(), ShuffleError> {
    let shard_opts = NpzWriteOptions { level: Some(1) }; // scratch files: fast compression
    pool.install(|| {
        groups.par_iter().enumerate().try_for_each(|(g, files)| {
            let mut rng = StdRng::seed_from_u64(
                plan.base_seed ^ (g as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            let Some(rows) = load_concat(files, plan.include_meta)? else {
                return Ok(());
            };
            let n = rows.num_rows;
            let keep = if plan.keep_prob < 1.0 {
                (py_round(n as f64 * plan.keep_prob).max(0) as usize).min(n)
            } else {
                n
            };
            let mut perm: Vec<usize> = (0..n).collect();
            perm.shuffle(&mut rng);
            perm.truncate(keep);
            // Deal each kept row to a uniformly random bucket.
            let mut per_bucket: Vec<Vec<usize>> = vec![Vec::new(); plan.num_buckets];
            for &i in &perm {
                per_bucket[rng.gen_range(0..plan.num_buckets)].push(i);
            }
            for (b, idx) in per_bucket.iter().enumerate() {
                let key = shard_key(b, g);
                let bytes = encode_npz(&rows.select(idx), &shard_opts).map_err(|k| NpzError {
                    path: scratch.describe(&key).into(),
                    kind: k,
                })?;
                scratch.put(&key, bytes)?;
            }
            Ok::<(), ShuffleError>(())
        })
    })
}

/// Phase 2: each bucket's shards merged, permuted and split into its output
/// files; the files written (their URLs and rows), bucket by bucket.
fn merge_buckets(
    pool: &rayon::ThreadPool,
    scratch: &Store,
    output: &ShuffleOutput,
    num_groups: usize,
    plan: &Plan,
    level: Option<i32>,
) -> Result<Vec<Vec<(String, usize)>>, ShuffleError> {
    let out_opts = NpzWriteOptions { level };
    pool.install(|| {
        (0..plan.num_buckets)
            .into_par_iter()
            .map(|b| {
                let rng = StdRng::seed_from_u64(
                    plan.base_seed
                        .wrapping_add(0x5851_F42D_4C95_7F2D ^ b as u64),
                );
                let Some(rows) = load_bucket(scratch, b, num_groups)? else {
                    // No group reached this bucket (KataGo writes nothing either).
                    return Ok(Vec::new());
                };
                let results =
                    write_bucket(output, &rows, b, plan.files_per_bucket, rng, &out_opts)?;
                scratch.delete_prefix(&format!("buckets/tmp.shuf{b}"))?;
                Ok::<_, ShuffleError>(results)
            })
            .collect::<Result<Vec<_>, _>>()
    })
}

/// Bucket `b`'s shards from every group, concatenated in group order.
fn load_bucket(
    scratch: &Store,
    b: usize,
    num_groups: usize,
) -> Result<Option<TrainingRows>, ShuffleError> {
    let mut shards: Option<TrainingRows> = None;
    for g in 0..num_groups {
        let key = shard_key(b, g);
        // A group whose rows all went elsewhere wrote nothing here.
        let Some(bytes) = scratch.get_opt(&key)? else {
            continue;
        };
        let rows = read_npz_bytes(&bytes, &scratch.describe(&key))?;
        match &mut shards {
            None => shards = Some(rows),
            Some(a) => a.append(&rows),
        }
    }
    Ok(shards)
}

/// Permutes a bucket's rows with `rng` and writes them as its output files.
fn write_bucket(
    output: &ShuffleOutput,
    rows: &TrainingRows,
    b: usize,
    files_per_bucket: usize,
    mut rng: StdRng,
    out_opts: &NpzWriteOptions,
) -> Result<Vec<(String, usize)>, ShuffleError> {
    let mut results = Vec::new();
    let n = rows.num_rows;
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(&mut rng);
    for j in 0..files_per_bucket {
        let (s, e) = (j * n / files_per_bucket, (j + 1) * n / files_per_bucket);
        let name = ShuffleOutput::file_name(b, j);
        let url = output.url().join(&name).to_string();
        let bytes = encode_npz(&rows.select(&perm[s..e]), out_opts).map_err(|k| NpzError {
            path: url.clone().into(),
            kind: k,
        })?;
        output.write_file(&name, bytes, e - s)?;
        results.push((url, e - s));
    }
    Ok(results)
}

/// Rows of an input file, from its first member's header.
fn count_rows(f: &InputFile) -> Result<usize, ShuffleError> {
    let reader = f.store.reader(&f.key)?;
    read_npz_num_rows_from(reader).map_err(|k| {
        ShuffleError::Npz(NpzError {
            path: f.url.clone().into(),
            kind: k,
        })
    })
}

/// Groups files into runs of at least `size` rows (the last may be short).
fn group_files_by_rows<'a>(files: &[(&'a InputFile, u64)], size: u64) -> Vec<Vec<&'a InputFile>> {
    let mut groups = Vec::new();
    let mut cur = Vec::new();
    let mut rows = 0;
    for (f, r) in files {
        if *r == 0 {
            continue;
        }
        cur.push(*f);
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

/// Loads and concatenates files. A vanished file is skipped with a warning
/// (as KataGo does), and so is one whose body turns out to be corrupt (its
/// header was read when rows were counted): one bad file does not stop a
/// run's shuffle. `None` when none could be read.
fn load_concat(
    files: &[&InputFile],
    include_meta: bool,
) -> Result<Option<TrainingRows>, ShuffleError> {
    let mut all: Option<TrainingRows> = None;
    // Decompress a few files at once on the pool's threads; a chunk at a
    // time keeps memory at the group plus one chunk.
    for chunk in files.chunks(rayon::current_num_threads().max(1)) {
        let loaded: Vec<Option<TrainingRows>> = chunk
            .par_iter()
            .map(|f| {
                let bytes = match f.store.get(&f.key) {
                    Ok(b) => b,
                    Err(e) if e.is_not_found() => {
                        eprintln!("WARNING: Skipping vanished file: {}", f.url);
                        return Ok(None);
                    }
                    Err(e) => return Err(ShuffleError::Store(e)),
                };
                match read_npz_bytes(&bytes, &f.url) {
                    Ok(rows) if include_meta && !rows.has_metadata => {
                        eprintln!(
                            "WARNING: Skipping file without metadataInputNC (-include-meta): {}",
                            f.url
                        );
                        Ok(None)
                    }
                    Ok(mut rows) => {
                        if !include_meta {
                            rows.drop_metadata();
                        }
                        Ok(Some(rows))
                    }
                    Err(e) => {
                        eprintln!("WARNING: Skipping bad file: {e}");
                        Ok(None)
                    }
                }
            })
            .collect::<Result<Vec<_>, ShuffleError>>()?;
        for rows in loaded.into_iter().flatten() {
            match &mut all {
                None => all = Some(rows),
                Some(a) if a.pos_len == rows.pos_len => a.append(&rows),
                Some(a) => return Err(ShuffleError::MixedPosLen(a.pos_len, rows.pos_len)),
            }
        }
    }
    Ok(all)
}

/// Output files an interrupted run of ours may have left.
fn is_our_leftover(name: &str) -> bool {
    let base = name.strip_suffix(".tmp").unwrap_or(name);
    base.starts_with("data") && (base.ends_with(".npz") || base.ends_with(".json"))
}

/// Checks the output folder: empty, or holding only the leftovers of an
/// interrupted shuffle (no `OUT.json`), which are removed. A finished or
/// foreign folder is an error, as in KataGo.
fn prepare_output(out: &ShuffleOutput, log: &mut dyn Write) -> Result<(), ShuffleError> {
    let names = out.existing()?;
    if out.is_finished()? {
        return Err(ShuffleError::OutDirNotEmpty {
            url: out.url().to_string(),
            why: format!(
                " (it holds a finished shuffle: {} exists)",
                out.summary_url()
            ),
        });
    }
    if let Some(other) = names.iter().find(|n| !is_our_leftover(n)) {
        return Err(ShuffleError::OutDirNotEmpty {
            url: out.url().to_string(),
            why: format!(" ({other} is not a shuffle output)"),
        });
    }
    // Only our files are here: what a killed run was writing goes too.
    out.remove_temporaries()?;
    if names.is_empty() {
        return Ok(());
    }
    let _ = writeln!(
        log,
        "Removing {} files left by an interrupted shuffle in {}",
        names.len(),
        out.url()
    );
    for n in names {
        out.remove(&n)?;
    }
    Ok(())
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
        let store = Store::open_path(&std::env::temp_dir()).unwrap();
        let inputs: Vec<InputFile> = (0..6)
            .map(|i| InputFile {
                store: store.clone(),
                key: format!("{i}"),
                url: format!("{i}"),
                mtime: 0.0,
                num_rows: None,
            })
            .collect();
        let files: Vec<(&InputFile, u64)> = inputs.iter().zip([5, 0, 3, 4, 10, 1]).collect();
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
