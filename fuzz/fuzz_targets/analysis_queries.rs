//! The analysis server fed raw bytes: line reading, query parsing and
//! validation, game replay and the queue, with the stand-in search. Input
//! ends at once and `quit_without_waiting` drops the queue, so a query that
//! asks for a long search does not stall the fuzzer.
#![no_main]

use std::io::Cursor;
use std::sync::Arc;

use engine::analysis::stub::StubBackend;
use engine::analysis::{serve, ServerOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let backend = Arc::new(StubBackend {
        default_max_visits: 2,
    });
    let opts = ServerOptions {
        quit_without_waiting: true,
        ..ServerOptions::default()
    };
    let _ = serve(backend, opts, Cursor::new(data.to_vec()), std::io::sink());
    // The parser alone, on each line, with the unused-field warnings off.
    for line in data.split(|&b| b == b'\n').take(16) {
        if let Ok(text) = std::str::from_utf8(line) {
            let opts = engine::analysis::ParseOptions {
                warn_unused_fields: false,
            };
            let _ = engine::analysis::parse_line(text.trim(), &opts);
        }
    }
});
