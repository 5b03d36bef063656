//! A GTP session fed raw bytes: the line reader, the command parser and the
//! engine's dispatch of every command, with the random-move bot in place of
//! a search so that no network is needed.
#![no_main]

use std::io::Cursor;

use engine::gtp::engine::Handled;
use engine::gtp::protocol::{parse_line, InputLine, Output, ParsedLine};
use engine::gtp::{GtpEngine, GtpSettings, RandomBot};
use engine::io_lines::LineReader;
use libfuzzer_sys::fuzz_target;

/// Commands left out: they touch files named by the input (`loadsgf`,
/// `printsgf FILE`) or sleep for as long as the input asks (the
/// `*genmove_analyze` family reports at the interval it is given).
const SKIPPED: &[&str] = &[
    "loadsgf",
    "printsgf",
    "genmove_analyze",
    "lz-genmove_analyze",
    "kata-genmove_analyze",
    "kata-search_analyze",
    "kata-search_analyze_cancellable",
];

fuzz_target!(|data: &[u8]| {
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
            if SKIPPED.contains(&c.name.as_str()) {
                continue;
            }
            if let Handled::Quit = engine.handle(&c) {
                break;
            }
        }
    }
    engine.stop_background();
});
