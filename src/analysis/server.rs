//! `engine analysis`'s main loop: stdin is one client of the shared
//! engine ([`super::engine`]): read query lines, hand each to the client,
//! write every response as one whole line on stdout.

use std::io::{self, BufRead, Write};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;

use crate::io_lines::{json_refusal, LineReader, RawLine};

use super::backend::AnalysisBackend;
use super::engine::{AnalysisEngine, ClientOptions, ResponseSink, TerminateScope};
use super::options::ServerOptions;

/// Whole lines on a writer (stdout), shared by every analysis thread.
struct LineSink {
    sink: Mutex<Box<dyn Write + Send>>,
}

impl ResponseSink for LineSink {
    fn send(&self, value: &Value) {
        let mut line = value.to_string();
        line.push('\n');
        let mut sink = self.sink.lock();
        // A closed stdout is the client's business; keep serving until stdin
        // closes, as KataGo does.
        let _ = sink.write_all(line.as_bytes()).and_then(|_| sink.flush());
    }
}

/// Runs the analysis engine until `input` ends, then finishes (or, with
/// `quit_without_waiting`, abandons) the queued work and returns.
pub fn serve<B: AnalysisBackend>(
    backend: Arc<B>,
    opts: ServerOptions,
    input: impl BufRead,
    output: impl Write + Send + 'static,
) -> io::Result<()> {
    let quit_without_waiting = opts.quit_without_waiting;
    let engine = AnalysisEngine::start(backend, opts)?;
    let client = engine.client(
        ClientOptions {
            key: 0,
            weight: 1,
            scope: TerminateScope::Client,
            cancel_on_drop: false,
        },
        Arc::new(LineSink {
            sink: Mutex::new(Box::new(output)),
        }),
    );

    let mut read_error = None;
    // Raw bytes with a cap on a line's length: a line that is not UTF-8 or
    // is too long gets an error answer, and every other query still runs.
    let mut lines = LineReader::new(input);
    let max_len = lines.max_len();
    loop {
        match lines.next_line() {
            Ok(None) => break,
            Ok(Some(RawLine::Text(line))) => {
                let line = line.trim();
                if !line.is_empty() {
                    client.handle_line(line);
                }
            }
            Ok(Some(refused)) => {
                if let Some(answer) = json_refusal(&refused, max_len) {
                    client.error(&answer);
                }
            }
            Err(e) => {
                read_error = Some(e);
                break;
            }
        }
    }

    if quit_without_waiting {
        engine.kill();
    }
    engine.close_and_join();
    match read_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
