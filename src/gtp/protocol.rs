//! GTP version 2 line handling: cleaning and splitting command lines,
//! formatting responses, one locked writer for stdout, and a reader thread
//! for stdin.
//!
//! Everything here follows KataGo's command loop, which GUIs are tested
//! against: control characters other than HT are dropped, `#` starts a
//! comment, tabs become spaces, blank lines are skipped without a response,
//! an optional numeric id is echoed as `=id` / `?id`, and every response ends
//! with a blank line.
//!
//! Commands are read on their own thread ([`spawn_line_reader`]) so that the
//! command loop can wait for the next line *while* an analysis is running:
//! Sabaki and Lizzie stop `kata-analyze` by sending the next command or a
//! bare newline.

use std::io::{BufRead, Write};
use std::sync::Arc;

use crate::io_lines::{LineReader, RawLine};

use crossbeam::channel::{self, Receiver};
use parking_lot::Mutex;

/// Cleans one raw input line as GTP (and KataGo) require: keeps printable
/// ASCII and HT only (so CR, LF and other control bytes vanish), cuts a `#`
/// comment, turns tabs into spaces and trims the ends.
pub fn clean_line(raw: &str) -> String {
    let kept: String = raw
        .chars()
        .filter(|&c| c == '\t' || (' '..='~').contains(&c))
        .collect();
    let uncommented = match kept.find('#') {
        Some(pos) => &kept[..pos],
        None => &kept[..],
    };
    uncommented.replace('\t', " ").trim().to_string()
}

/// One command: optional id, command name and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// The numeric id to echo in the response, if the controller sent one.
    pub id: Option<u64>,
    /// The command name, e.g. `play`.
    pub name: String,
    /// The arguments, split on whitespace.
    pub args: Vec<String>,
}

impl CommandLine {
    /// The arguments joined by single spaces, as KataGo quotes them in errors.
    pub fn joined_args(&self) -> String {
        self.args.join(" ")
    }
}

/// What one input line amounts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedLine {
    /// A blank or comment-only line: GTP says to send nothing back.
    Empty,
    /// A command to run.
    Command(CommandLine),
    /// A line that is not a command (an id with nothing after it, or an id
    /// too long to be a number): answered `? message`.
    Invalid {
        /// The id, when it could be read.
        id: Option<u64>,
        /// The error text.
        message: String,
    },
}

/// Parses one raw input line (cleaning it first, see [`clean_line`]).
pub fn parse_line(raw: &str) -> ParsedLine {
    let line = clean_line(raw);
    if line.is_empty() {
        return ParsedLine::Empty;
    }
    let digits = line.bytes().take_while(|b| b.is_ascii_digit()).count();
    let mut id = None;
    if digits > 0 {
        match line[..digits].parse::<u64>() {
            Ok(n) => id = Some(n),
            Err(_) => {
                return ParsedLine::Invalid {
                    id: None,
                    message: format!("GTP id '{}' could not be parsed", &line[..digits]),
                }
            }
        }
    }
    let mut words = line[digits..].split_whitespace().map(str::to_string);
    match words.next() {
        None => ParsedLine::Invalid {
            id,
            message: "empty command".to_string(),
        },
        Some(name) => ParsedLine::Command(CommandLine {
            id,
            name,
            args: words.collect(),
        }),
    }
}

/// Drops every second newline of a pair, since a blank line would end the
/// GTP response early (KataGo's `filterDoubleNewlines`).
pub fn filter_double_newlines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_newline = false;
    for c in s.chars() {
        if c == '\n' && prev_newline {
            continue;
        }
        prev_newline = c == '\n';
        out.push(c);
    }
    out
}

/// A complete response: `=id text` or `?id text`, then a blank line.
///
/// Like KataGo, a response without id starts `= ` (with the space) and one
/// with id starts `=id `.
pub fn format_response(id: Option<u64>, ok: bool, text: &str) -> String {
    let mark = if ok { '=' } else { '?' };
    let text = filter_double_newlines(text.trim_end_matches('\n'));
    match id {
        Some(id) => format!("{mark}{id} {text}\n\n"),
        None => format!("{mark} {text}\n\n"),
    }
}

/// The first line of a response whose body follows later (analysis
/// commands): `=id` or `=`, with nothing after it.
pub fn format_header(id: Option<u64>) -> String {
    match id {
        Some(id) => format!("={id}\n"),
        None => "=\n".to_string(),
    }
}

/// The engine's stdout: one writer shared by the command loop and the
/// analysis thread, locked per write and flushed after every write, so lines
/// never interleave and GUIs see them at once.
#[derive(Clone)]
pub struct Output {
    inner: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl Output {
    /// Wraps a writer (stdout in the engine, a buffer in tests).
    pub fn new(w: Box<dyn Write + Send>) -> Output {
        Output {
            inner: Arc::new(Mutex::new(w)),
        }
    }

    /// The process's stdout.
    pub fn stdout() -> Output {
        Output::new(Box::new(std::io::stdout()))
    }

    /// Writes `text` as it is and flushes. Errors (a GUI that closed the
    /// pipe) are ignored here: the reader sees end of input and the loop ends.
    pub fn write_str(&self, text: &str) {
        let mut w = self.inner.lock();
        let _ = w.write_all(text.as_bytes());
        let _ = w.flush();
    }

    /// Writes a complete response (see [`format_response`]).
    pub fn respond(&self, id: Option<u64>, ok: bool, text: &str) {
        self.write_str(&format_response(id, ok, text));
    }
}

/// One line from the controller, as the reader thread hands it over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputLine {
    /// A UTF-8 line, without its line ending; see [`parse_line`].
    Text(String),
    /// A line that is refused before parsing (not UTF-8, or longer than
    /// [`crate::io_lines::MAX_LINE_BYTES`]): answered `?id message`.
    Refused {
        /// The id, when the start of the line has one.
        id: Option<u64>,
        /// The error text.
        message: String,
    },
}

impl InputLine {
    /// Sorts one raw line: text passes, anything else becomes a refusal
    /// that carries the line's id if its first word is a number.
    pub fn from_raw(raw: RawLine, max_len: usize) -> InputLine {
        let message = match raw {
            RawLine::Text(s) => return InputLine::Text(s),
            ref other => other.refusal(max_len).unwrap_or_default(),
        };
        let head = String::from_utf8_lossy(raw.head_bytes());
        let id = match parse_line(&head) {
            ParsedLine::Command(c) => c.id,
            ParsedLine::Invalid { id, .. } => id,
            ParsedLine::Empty => None,
        };
        InputLine::Refused { id, message }
    }
}

/// Reads lines from `input` on a new thread and sends them down the
/// returned channel; the channel closes at end of input or on a read error.
/// Input is read as bytes with a cap on a line's length (see
/// [`crate::io_lines`]), so no line, however long or malformed, ends the
/// session or takes unbounded memory.
pub fn spawn_line_reader<R: BufRead + Send + 'static>(input: R) -> Receiver<InputLine> {
    let (tx, rx) = channel::unbounded();
    std::thread::Builder::new()
        .name("gtp-stdin".to_string())
        .spawn(move || {
            let mut reader = LineReader::new(input);
            let max_len = reader.max_len();
            while let Ok(Some(raw)) = reader.next_line() {
                if tx.send(InputLine::from_raw(raw, max_len)).is_err() {
                    break;
                }
            }
        })
        .expect("spawning the stdin reader thread");
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cleaning_follows_gtp() {
        assert_eq!(clean_line("  play b D4  \r\n"), "play b D4");
        assert_eq!(clean_line("known_command\tname"), "known_command name");
        assert_eq!(clean_line("name # a comment"), "name");
        assert_eq!(clean_line("# only a comment"), "");
        assert_eq!(clean_line("na\u{1}me\u{7f}"), "name");
        assert_eq!(clean_line("\t \t"), "");
    }

    #[test]
    fn ids_are_split_off() {
        assert_eq!(
            parse_line("12 play b D4\n"),
            ParsedLine::Command(CommandLine {
                id: Some(12),
                name: "play".into(),
                args: vec!["b".into(), "D4".into()],
            })
        );
        assert_eq!(
            parse_line("name"),
            ParsedLine::Command(CommandLine {
                id: None,
                name: "name".into(),
                args: vec![],
            })
        );
        assert_eq!(parse_line("   \n"), ParsedLine::Empty);
        assert_eq!(parse_line("# x"), ParsedLine::Empty);
        assert_eq!(
            parse_line("7"),
            ParsedLine::Invalid {
                id: Some(7),
                message: "empty command".into()
            }
        );
        assert!(matches!(
            parse_line("123456789012345678901234567890 name"),
            ParsedLine::Invalid { id: None, .. }
        ));
        // Several spaces between words are one separator.
        match parse_line("3  komi   6.5") {
            ParsedLine::Command(c) => assert_eq!(c.args, vec!["6.5".to_string()]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn responses_are_terminated_by_a_blank_line() {
        assert_eq!(format_response(Some(3), true, "2"), "=3 2\n\n");
        assert_eq!(format_response(None, false, "bad"), "? bad\n\n");
        assert_eq!(format_response(None, true, ""), "= \n\n");
        assert_eq!(format_response(Some(1), true, "a\n\nb\n"), "=1 a\nb\n\n");
        assert_eq!(format_header(Some(5)), "=5\n");
        assert_eq!(format_header(None), "=\n");
    }

    #[test]
    fn reader_thread_delivers_lines_then_closes() {
        let rx = spawn_line_reader(std::io::Cursor::new(b"a\r\n7 b\xff\nc".to_vec()));
        let lines: Vec<InputLine> = rx.iter().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], InputLine::Text("a".into()));
        assert!(
            matches!(&lines[1], InputLine::Refused { id: Some(7), message } if message.contains("UTF-8"))
        );
        assert_eq!(lines[2], InputLine::Text("c".into()));
    }

    #[test]
    fn output_writes_through_one_lock() {
        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Shared::default();
        let out = Output::new(Box::new(buf.clone()));
        out.respond(Some(1), true, "x");
        out.write_str("info move D4\n");
        assert_eq!(&*buf.0.lock(), b"=1 x\n\ninfo move D4\n");
    }

    proptest! {
        #[test]
        fn parsing_never_panics_and_responses_have_no_inner_blank_line(s in "\\PC{0,40}", t in "[a-z\\n]{0,20}") {
            let _ = parse_line(&s);
            let r = format_response(Some(1), true, &t);
            prop_assert!(r.ends_with("\n\n"));
            prop_assert!(!r[..r.len() - 2].contains("\n\n"));
        }
    }
}
