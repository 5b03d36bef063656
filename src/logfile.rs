//! The process's log: stderr, and the log file KataGo's keys ask for
//! (`logFile`, `logDir`, `logDirDated`), with `logToStderr` and
//! `logTimeStamp` as in KataGo's `Logger`. GUIs such as Lizzie and Sabaki
//! hide an engine's stderr, so a log file is where a user finds what the
//! engine said.
//!
//! One log per process, set once at start-up ([`start`]); before that, or
//! without a file, [`line`] writes to stderr as it always did. With a file,
//! every line goes to it (time-stamped unless `logTimeStamp = false`);
//! routine lines also go to stderr only when `logToStderr` is true, while
//! [`startup`] lines (the start-up report, warnings, errors) do unless
//! `startupPrintMessageToStderr = false`, as KataGo prints them. Without a
//! file, everything goes to stderr: the lines would otherwise go nowhere.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::config::{Config, ConfigError, Key, Row};

/// Where the log goes, from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSettings {
    /// `logFile` as given, or a fresh `<time>-<hex>.log` in `logDir`
    /// (or in a `<time>` folder of `logDirDated`).
    pub file: Option<PathBuf>,
    /// `logToStderr` (default: the command's).
    pub to_stderr: bool,
    /// `logTimeStamp` (default true): each file line starts with the UTC
    /// time.
    pub timestamps: bool,
    /// `startupPrintMessageToStderr` (default true): start-up lines go to
    /// stderr even when routine ones do not.
    pub startup_to_stderr: bool,
}

/// Why the log could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A key's value is wrong.
    #[error(transparent)]
    Config(#[from] Box<ConfigError>),
    /// More than one of the file keys.
    #[error("cannot specify more than one of logFile, logDir and logDirDated in the config")]
    TwoFiles,
    /// The file or its folder cannot be made.
    #[error("cannot open the log file {}: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The log keys: at most one of the three file keys; `logToStderr`'s
/// default is the command's.
const LOG_FILE: Key<Option<String>> = Key::opt_text("logFile").doc("The log file.");
const LOG_DIR: Key<Option<String>> =
    Key::opt_text("logDir").doc("A folder where each run writes a new log file.");
const LOG_DIR_DATED: Key<Option<String>> = Key::opt_text("logDirDated")
    .doc("A folder where each run writes a new log file in a folder named by the time.");
const LOG_TO_STDERR: Key<Option<bool>> = Key::opt_flag("logToStderr")
    .doc("Also write the log to stderr (default: false for gtp, true for analysis and serve).");
const LOG_TIME_STAMP: Key<bool> =
    Key::flag("logTimeStamp", true).doc("Start each log line with the time.");
const STARTUP_TO_STDERR: Key<bool> =
    Key::flag("startupPrintMessageToStderr", true).doc("Print the start-up messages to stderr.");

/// The configuration reference's rows of the log keys.
pub fn config_rows() -> Vec<Row> {
    [
        LOG_FILE.setting(),
        LOG_DIR.setting(),
        LOG_DIR_DATED.setting(),
        LOG_TO_STDERR.setting(),
        LOG_TIME_STAMP.setting(),
        STARTUP_TO_STDERR.setting(),
    ]
    .iter()
    .map(|s| s.row())
    .collect()
}

impl LogSettings {
    /// The settings of `cfg`; `default_to_stderr` is the command's
    /// `logToStderr` when the config does not say (KataGo: false for
    /// `gtp`, true for `analysis`). A `logDir` file name is chosen here.
    pub fn from_config(cfg: &Config, default_to_stderr: bool) -> Result<LogSettings, LogError> {
        let files = [&LOG_FILE, &LOG_DIR, &LOG_DIR_DATED];
        if files.iter().filter(|k| k.is_set(cfg)).count() > 1 {
            return Err(LogError::TwoFiles);
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let stamp = compact_time(now);
        let tag = format!("{:08x}", rand::random::<u32>());
        let file = if let Some(file) = LOG_FILE.read(cfg).map_err(Box::new)? {
            Some(PathBuf::from(file))
        } else if let Some(dir) = LOG_DIR.read(cfg).map_err(Box::new)? {
            Some(Path::new(&dir).join(format!("{stamp}-{tag}.log")))
        } else {
            LOG_DIR_DATED
                .read(cfg)
                .map_err(Box::new)?
                .map(|dir| Path::new(&dir).join(&stamp).join(format!("{tag}.log")))
        };
        Ok(LogSettings {
            file,
            to_stderr: LOG_TO_STDERR
                .read(cfg)
                .map_err(Box::new)?
                .unwrap_or(default_to_stderr),
            timestamps: LOG_TIME_STAMP.read(cfg).map_err(Box::new)?,
            startup_to_stderr: STARTUP_TO_STDERR.read(cfg).map_err(Box::new)?,
        })
    }
}

struct Log {
    file: Mutex<File>,
    to_stderr: bool,
    timestamps: bool,
    startup_to_stderr: bool,
}

static LOG: OnceLock<Log> = OnceLock::new();

/// Opens the log file of `settings`, if any, for the rest of the process
/// (the first call wins); returns its path.
pub fn start(settings: &LogSettings) -> Result<Option<PathBuf>, LogError> {
    let Some(path) = &settings.file else {
        return Ok(None);
    };
    let open = |source| LogError::Open {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(open)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(open)?;
    let _ = LOG.set(Log {
        file: Mutex::new(file),
        to_stderr: settings.to_stderr,
        timestamps: settings.timestamps,
        startup_to_stderr: settings.startup_to_stderr,
    });
    Ok(Some(path.clone()))
}

fn write(text: &str, stderr: bool) {
    match LOG.get() {
        None => eprintln!("{text}"),
        Some(log) => {
            let prefix = if log.timestamps {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                format!("{}+0000: ", iso_time(now))
            } else {
                String::new()
            };
            {
                let mut f = log.file.lock();
                for l in text.lines() {
                    // A full disk must not stop the engine: the line is lost.
                    let _ = writeln!(f, "{prefix}{l}");
                }
                let _ = f.flush();
            }
            if (stderr && log.startup_to_stderr) || log.to_stderr {
                eprintln!("{text}");
            }
        }
    }
}

/// A routine line: the log file, and stderr when `logToStderr` (or when
/// there is no file).
pub fn line(text: &str) {
    write(text, false);
}

/// A start-up, warning or error line: the log file and stderr (unless
/// `startupPrintMessageToStderr = false` with a file).
pub fn startup(text: &str) {
    write(text, true);
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn parts(secs: u64) -> (i64, u32, u32, u64, u64, u64) {
    let (y, mo, d) = civil((secs / 86_400) as i64);
    let s = secs % 86_400;
    (y, mo, d, s / 3600, s / 60 % 60, s % 60)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC.
fn iso_time(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// `YYYYMMDD-HHMMSS` in UTC (log file names).
fn compact_time(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_utc() {
        assert_eq!(iso_time(0), "1970-01-01 00:00:00");
        assert_eq!(iso_time(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(iso_time(1_795_000_000), "2026-11-18 11:06:40");
        assert_eq!(compact_time(1_795_000_000), "20261118-110640");
    }

    fn cfg(text: &str) -> Config {
        Config::from_toml_str(text, "l.toml").unwrap()
    }

    #[test]
    fn settings_follow_katagos_keys() {
        let s = LogSettings::from_config(&cfg(""), false).unwrap();
        assert_eq!(
            s,
            LogSettings {
                file: None,
                to_stderr: false,
                timestamps: true,
                startup_to_stderr: true,
            }
        );
        let s = LogSettings::from_config(&cfg("logFile = \"a/b.log\""), true).unwrap();
        assert_eq!(s.file, Some(PathBuf::from("a/b.log")));
        assert!(s.to_stderr);
        let s =
            LogSettings::from_config(&cfg("logDir = \"logs\"\nlogToStderr = true"), false).unwrap();
        let f = s.file.unwrap();
        assert_eq!(f.parent(), Some(Path::new("logs")));
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.len() == "20261118-070640-0123abcd.log".len() && name.ends_with(".log"));
        assert!(s.to_stderr);
        let s = LogSettings::from_config(&cfg("logDirDated = \"d\"\nlogTimeStamp = false"), false)
            .unwrap();
        assert!(s.file.unwrap().starts_with("d") && !s.timestamps);
        assert!(matches!(
            LogSettings::from_config(&cfg("logFile = \"x\"\nlogDir = \"y\""), false),
            Err(LogError::TwoFiles)
        ));
    }
}
