//! The flags of `engine shuffle` (KataGo's `shuffle.py` flags, single dash
//! accepted) and the command's entry point.

use std::path::PathBuf;

use clap::Args;

use crate::exit::{CommandError, CommandResult, Exit};

use super::shuffle::{shuffle, ShuffleConfig, ShuffleError};
use super::WindowParams;
use crate::store::StoreUrl;

/// Flags of `engine shuffle`, as `python/shuffle.py` spells them. As with
/// Python's argparse, a repeated flag's last value wins.
#[derive(Debug, Args)]
#[command(args_override_self = true)]
pub struct ShuffleArgs {
    /// Directories of training data (`*.npz`, searched recursively):
    /// folders or `s3://bucket/prefix` URLs.
    #[arg(required = true)]
    pub dirs: Vec<String>,
    /// Dir to write the shuffled files into (a folder or `s3://` URL;
    /// `OUT.json` is written beside it, last).
    #[arg(long = "out-dir")]
    pub out_dir: String,
    /// Local scratch dir for shards (default: `OUT.shuffle.tmp` beside a
    /// folder output, a fresh folder in the system's temp dir for `s3://`).
    #[arg(long = "out-tmp-dir")]
    pub out_tmp_dir: Option<PathBuf>,
    /// Minimum size of the training window (default 250000).
    #[arg(long = "min-rows")]
    pub min_rows: Option<u64>,
    /// Maximum size of the training window.
    #[arg(long = "max-rows")]
    pub max_rows: Option<u64>,
    /// Rows to sample and keep from the window, or `all`.
    #[arg(long = "keep-target-rows")]
    pub keep_target_rows: String,
    /// Beyond min rows, grow the window by this much per new row.
    #[arg(long = "expand-window-per-row", default_value_t = 1.0)]
    pub expand_window_per_row: f64,
    /// The window grows asymptotically as this power of the rows.
    #[arg(long = "taper-window-exponent", default_value_t = 1.0)]
    pub taper_window_exponent: f64,
    /// Scale of the power law (default: min rows).
    #[arg(long = "taper-window-scale")]
    pub taper_window_scale: Option<f64>,
    /// Compute the window as if there were this many more rows.
    #[arg(long = "add-to-data-rows")]
    pub add_to_data_rows: Option<f64>,
    /// Summary json of directory contents (KataGo's format).
    #[arg(long = "summary-file")]
    pub summary_file: Option<PathBuf>,
    /// Rows per output file.
    #[arg(long = "approx-rows-per-out-file", default_value_t = 70000)]
    pub approx_rows_per_out_file: u64,
    /// Rows per merge bucket, a multiple of the above (default: equal).
    #[arg(long = "approx-rows-per-bucket")]
    pub approx_rows_per_bucket: Option<u64>,
    /// Worker threads.
    #[arg(long = "num-processes", default_value_t = 1)]
    pub num_processes: usize,
    /// Rows per shardify group (bounds each worker's memory).
    #[arg(long = "worker-group-size", default_value_t = 80000)]
    pub worker_group_size: u64,
    /// Text file of npz paths to ignore, one per line.
    #[arg(long = "exclude")]
    pub exclude: Option<PathBuf>,
    /// Prefix added to each line of the exclude file.
    #[arg(long = "exclude-prefix", default_value = "")]
    pub exclude_prefix: String,
    /// Match excludes on the file name only.
    #[arg(long = "exclude-basename")]
    pub exclude_basename: bool,
    /// Use only files whose name's md5 fraction is >= this.
    #[arg(long = "only-include-md5-path-prop-lbound")]
    pub md5_lbound: Option<f64>,
    /// Use only files whose name's md5 fraction is < this.
    #[arg(long = "only-include-md5-path-prop-ubound")]
    pub md5_ubound: Option<f64>,
    /// Skip files modified in [start, end] (seconds since the epoch).
    #[arg(long = "skip-mtime-range-start")]
    pub skip_mtime_range_start: Option<f64>,
    /// See `-skip-mtime-range-start`.
    #[arg(long = "skip-mtime-range-end")]
    pub skip_mtime_range_end: Option<f64>,
    /// Keep the SGF metadata inputs (`metadataInputNC`, which nets with a
    /// metadata encoder train on); files without them are skipped.
    /// Without the flag they are dropped, as KataGo's.
    #[arg(long = "include-meta")]
    pub include_meta: bool,
    /// Random seed, for reproducible shuffles (default: from the OS).
    #[arg(long = "seed")]
    pub seed: Option<u64>,
    /// Deflate level of the output files, 0-9 (default 6, KataGo's).
    #[arg(long = "compression-level")]
    pub compression_level: Option<i32>,
}

impl ShuffleArgs {
    /// Checks and converts the flags.
    pub fn to_config(&self) -> Result<ShuffleConfig, ShuffleError> {
        let keep_target_rows = if self.keep_target_rows.eq_ignore_ascii_case("all") {
            None
        } else {
            Some(self.keep_target_rows.parse::<u64>().map_err(|_| {
                ShuffleError::InvalidArgs(format!(
                    "-keep-target-rows {:?}: expected a row count or 'all'",
                    self.keep_target_rows
                ))
            })?)
        };
        if let Some(l) = self.compression_level {
            if !(0..=9).contains(&l) {
                return Err(ShuffleError::InvalidArgs(format!(
                    "-compression-level {l}: expected 0-9"
                )));
            }
        }
        let mut excludes = Vec::new();
        if let Some(path) = &self.exclude {
            let text = std::fs::read_to_string(path).map_err(|e| ShuffleError::io(path, e))?;
            excludes.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| format!("{}{l}", self.exclude_prefix)),
            );
        }
        let out_dir = StoreUrl::parse(&self.out_dir)?;
        let dirs = self
            .dirs
            .iter()
            .map(|d| StoreUrl::parse(d))
            .collect::<Result<Vec<_>, _>>()?;
        let out_tmp_dir = match (&self.out_tmp_dir, out_dir.local_path()) {
            (Some(d), _) => d.clone(),
            (None, Some(local)) => {
                let mut s = local.as_os_str().to_os_string();
                // Ends in ".tmp" so KataGo's train.py never takes it for data.
                s.push(".shuffle.tmp");
                PathBuf::from(s)
            }
            (None, None) => {
                std::env::temp_dir().join(format!("engine-shuffle-{}.tmp", std::process::id()))
            }
        };
        Ok(ShuffleConfig {
            dirs,
            out_dir,
            out_tmp_dir,
            window: WindowParams {
                min_rows: self.min_rows.unwrap_or(250_000),
                max_rows: self.max_rows,
                expand_window_per_row: self.expand_window_per_row,
                taper_window_exponent: self.taper_window_exponent,
                taper_window_scale: self.taper_window_scale,
                add_to_data_rows: self.add_to_data_rows.unwrap_or(0.0),
                skip_mtime_range: self.skip_mtime_range_start.zip(self.skip_mtime_range_end),
            },
            keep_target_rows,
            summary_file: self.summary_file.clone(),
            approx_rows_per_out_file: self.approx_rows_per_out_file,
            approx_rows_per_bucket: self
                .approx_rows_per_bucket
                .unwrap_or(self.approx_rows_per_out_file),
            num_processes: self.num_processes.max(1),
            worker_group_size: self.worker_group_size.max(1),
            excludes,
            exclude_basename: self.exclude_basename,
            md5_bounds: (self.md5_lbound, self.md5_ubound),
            include_meta: self.include_meta,
            seed: self.seed,
            level: self.compression_level,
        })
    }
}

/// Runs `engine shuffle`: [`Exit::TooFewRows`] when there are no rows yet,
/// or fewer than `-min-rows` (nothing was written; a loop should wait for
/// more data).
pub fn run_shuffle(args: &ShuffleArgs) -> CommandResult {
    if args.min_rows.is_none() {
        println!("NOTE: -min-rows was not specified, defaulting to requiring 250K rows before shuffling.");
    }
    let result = args
        .to_config()
        .and_then(|cfg| shuffle(&cfg, &mut std::io::stdout()));
    match result {
        Ok(Some(_)) => Ok(Exit::Success),
        Ok(None) => {
            eprintln!(
                "engine shuffle: not enough rows yet: nothing written (exit code {})",
                Exit::TooFewRows.code()
            );
            Ok(Exit::TooFewRows)
        }
        Err(e) => Err(CommandError::runtime(e)),
    }
}
