//! Fuzz target bodies: one function per parser of outside input, each
//! taking raw bytes and returning nothing. A panic is the bug they look for
//! (debug assertions and overflow checks are on in the fuzz build).
//!
//! The bodies live here, in the library, so that every harness runs the
//! same code: the AFL++ binaries in `fuzz/` (`scripts/fuzz.sh`), and the
//! regression test `tests/fuzz_regressions.rs`, which replays every crash
//! found so far and the seed corpora ([`seed_corpus`]).

mod seeds;
mod seeds_more;
mod settings;
mod train_files;

pub use seeds::{seed_corpus, Seed};
pub use settings::{gatekeeper_settings, match_args, match_settings, selfplay_settings};
#[cfg(feature = "torch")]
pub use train_files::checkpoint;
pub use train_files::{npy, shuffle_summary, train_json};

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use crate::analysis::stub::StubBackend;
use crate::analysis::{serve, ParseOptions, ServerOptions};
use crate::config::Config;
use crate::data::{read_npz_from, write_npz_to, NpzWriteOptions};
use crate::game::sgf::{parse_collection, write_sgf};
use crate::gtp::engine::Handled;
use crate::gtp::protocol::{parse_line, InputLine, Output, ParsedLine};
use crate::gtp::{GtpEngine, GtpSettings, RandomBot};
use crate::io_lines::LineReader;
use crate::nn::ModelFile;
use crate::search::{SearchParams, SetupFor};
use crate::timecontrol::TimeParams;

/// A target body: raw input in, a panic on a bug.
pub type TargetFn = fn(&[u8]);

/// Every target, by the name its fuzz binary and corpus folder carry.
pub const TARGETS: &[(&str, TargetFn)] = &[
    ("gtp_lines", gtp_lines),
    ("analysis_queries", analysis_queries),
    ("sgf", sgf),
    ("config", config),
    ("model_file", model_file),
    ("npz", npz),
    ("npy", npy),
    ("selfplay_settings", selfplay_settings),
    ("match_settings", match_settings),
    ("gatekeeper_settings", gatekeeper_settings),
    ("match_args", match_args),
    ("train_json", train_json),
    ("shuffle_summary", shuffle_summary),
    #[cfg(feature = "torch")]
    ("checkpoint", checkpoint),
];

/// The body of the target called `name`, if there is one.
pub fn target(name: &str) -> Option<TargetFn> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// GTP commands left out of [`gtp_lines`]: they touch files named by the
/// input (`loadsgf`, `printsgf FILE`) or sleep for as long as the input asks
/// (the `*genmove_analyze` family reports at the interval it is given).
const GTP_SKIPPED: &[&str] = &[
    "loadsgf",
    "printsgf",
    "genmove_analyze",
    "lz-genmove_analyze",
    "kata-genmove_analyze",
    "kata-search_analyze",
    "kata-search_analyze_cancellable",
];

/// A GTP session fed raw bytes: the line reader, the command parser and the
/// engine's dispatch of every command, with the random-move bot in place of
/// a search so that no network is needed. At most 64 lines of 4 KiB.
pub fn gtp_lines(data: &[u8]) {
    let Ok(mut engine) = GtpEngine::new(
        GtpSettings::default(),
        Box::new(RandomBot::new(7)),
        Output::new(Box::new(std::io::sink())),
        false,
    ) else {
        return;
    };
    let mut lines = LineReader::with_limit(Cursor::new(data), 1 << 12);
    let max_len = lines.max_len();
    for _ in 0..64 {
        let Ok(Some(raw)) = lines.next_line() else {
            break;
        };
        engine.stop_background();
        let InputLine::Text(text) = InputLine::from_raw(raw, max_len) else {
            continue;
        };
        if let ParsedLine::Command(c) = parse_line(&text) {
            if GTP_SKIPPED.contains(&c.name.as_str()) {
                continue;
            }
            if let Handled::Quit = engine.handle(&c) {
                break;
            }
        }
    }
    engine.stop_background();
}

/// The analysis server fed raw bytes: line reading, query parsing and
/// validation, game replay and the queue, with the stand-in search. Input
/// ends at once and `quit_without_waiting` drops the queue, so a query that
/// asks for a long search does not stall the fuzzer. Then the query parser
/// alone on each of the first 16 lines, with the unused-field warnings off.
pub fn analysis_queries(data: &[u8]) {
    let backend = Arc::new(StubBackend {
        default_max_visits: 2,
    });
    let opts = ServerOptions {
        quit_without_waiting: true,
        ..ServerOptions::default()
    };
    let _ = serve(backend, opts, Cursor::new(data.to_vec()), std::io::sink());
    let parse_opts = ParseOptions {
        warn_unused_fields: false,
    };
    for line in data.split(|&b| b == b'\n').take(16) {
        if let Ok(text) = std::str::from_utf8(line) {
            let _ = crate::analysis::parse_line(text.trim(), &parse_opts);
        }
    }
}

/// SGF: parsing a collection, turning each game into a record, writing the
/// record back and parsing that again.
pub fn sgf(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(trees) = parse_collection(&text) else {
        return;
    };
    for tree in trees.iter().take(4) {
        let _ = tree.main_line().count();
        if let Ok(rec) = tree.record() {
            let again = write_sgf(&rec);
            if let Ok(trees) = parse_collection(&again) {
                for t in &trees {
                    let _ = t.record();
                }
            }
        }
    }
}

/// Config files: TOML and KataGo `.cfg` text, `-override-config` strings,
/// and the typed readers behind `engine gtp` (GTP settings, time and search
/// parameters) on whatever the file held.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let configs = [
        Config::from_toml_str(&text, "fuzz.toml"),
        Config::from_cfg_str(&text, "fuzz.cfg"),
    ];
    for cfg in configs.into_iter().flatten() {
        let _ = GtpSettings::from_config(&cfg);
        let _ = TimeParams::from_config(&cfg);
        let _ = crate::setup::cpu_threads(&cfg, 2);
        let settings = crate::setup::search_settings(&cfg);
        for setup in [SetupFor::Gtp, SetupFor::Analysis] {
            let _ =
                SearchParams::from_overrides(setup, settings.iter().map(|(k, v)| (k.as_str(), v)));
        }
        let _ = cfg.to_json_value();
        let _ = crate::setup::config_key_report(&cfg, "engine fuzz");
    }
    let Ok(mut cfg) = Config::from_toml_str("", "empty.toml") else {
        return;
    };
    if cfg.apply_overrides(&text).is_ok() {
        let _ = GtpSettings::from_config(&cfg);
    }
}

/// Model files (`.bin.gz`, `.bin`, `.txt`, and unknown extensions, which are
/// tried both ways): a file that is cut short or lies about its sizes must
/// give an error, never a panic or a huge allocation. The first byte picks
/// the file name (`T`: `.txt`, `?`: unknown, else `.bin.gz`), so that one
/// corpus serves all. A model that parses must round-trip: written, it must
/// read again to an equal model (every header field and every weight), and
/// that model must write the same bytes.
///
/// # Panics
/// When a model that parsed does not read back from its own bytes, reads
/// back different, or writes different bytes the second time.
pub fn model_file(data: &[u8]) {
    let (name, body) = match data.split_first() {
        Some((b'T', rest)) => ("fuzz.txt", rest),
        Some((b'?', rest)) => ("fuzz.model", rest),
        _ => ("fuzz.bin.gz", data),
    };
    if let Ok(m) = ModelFile::from_file_contents(body, Path::new(name)) {
        let bytes = m.to_bytes();
        let again = match ModelFile::from_bytes(&bytes, Path::new("again.bin")) {
            Ok(again) => again,
            Err(e) => panic!("a model that parsed does not read back: {e}"),
        };
        // `==` compares every field and weight; a NaN weight is never `==`
        // itself, so then the Debug forms (which print every f32 exactly,
        // NaN as `NaN`) must agree, and the byte comparison below checks
        // the NaNs' bits.
        assert!(
            again == m || format!("{again:?}") == format!("{m:?}"),
            "a model read back from its own bytes differs from the model written"
        );
        assert!(
            again.to_bytes() == bytes,
            "a model read back from its own bytes writes different bytes"
        );
        let _ = m.num_parameters();
    }
}

/// Training data: KataGo's `.npz` reader on arbitrary bytes (zip structure,
/// `.npy` headers, dtypes and shapes that lie). A file that reads must
/// write back and read again to the same rows.
///
/// # Panics
/// When rows that read do not read back equal from our own file.
pub fn npz(data: &[u8]) {
    let Ok(rows) = read_npz_from(Cursor::new(data)) else {
        return;
    };
    let mut out = Cursor::new(Vec::new());
    if write_npz_to(&mut out, &rows, &NpzWriteOptions::default()).is_ok() {
        let again = read_npz_from(Cursor::new(out.into_inner()));
        assert!(
            again.as_ref().is_ok_and(|a| *a == rows),
            "our own npz does not read back to the same rows: {:?}",
            again.err()
        );
    }
}

/// Seed-file helpers shared by the seed modules.
/// The files in `dir` whose names end in one of `exts`, sorted; none when
/// `dir` is absent.
pub(crate) fn files_with(dir: &Path, exts: &[&str]) -> std::io::Result<Vec<std::path::PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if path.is_file() && exts.contains(&ext) {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
