//! Malformed input on both protocols (issue 11): lines that are not UTF-8,
//! NUL bytes, CR/LF mixes, a 100 MB line, deep JSON nesting, huge numbers,
//! an unknown action. Nothing may end the session or lose a good query, and
//! a refused line is answered with its id when it has one.
//!
//! GTP runs in-process with the random-move bot; the analysis server runs
//! in-process and as the real binary, both with the stand-in search.

use std::io::{Cursor, Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{json, Value};

use engine::analysis::stub::StubBackend;
use engine::analysis::{serve as serve_analysis, ServerOptions};
use engine::gtp::protocol::{spawn_line_reader, Output};
use engine::gtp::{serve as serve_gtp, GtpEngine, GtpSettings, RandomBot};
use engine::io_lines::MAX_LINE_BYTES;

/// A writer whose bytes the test reads afterwards.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().clone()).expect("output is UTF-8")
    }
}

/// `len` bytes of `x` and a newline, made as they are read, so that a
/// 100 MB line never exists in the test's memory either.
struct LongLine {
    prefix: Vec<u8>,
    left: u64,
}

impl Read for LongLine {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.prefix.is_empty() {
            let n = self.prefix.len().min(buf.len());
            buf[..n].copy_from_slice(&self.prefix[..n]);
            self.prefix.drain(..n);
            return Ok(n);
        }
        if self.left == 0 {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(self.left) as usize;
        buf[..n].fill(b'x');
        self.left -= n as u64;
        if self.left == 0 {
            buf[n - 1] = b'\n';
        }
        Ok(n)
    }
}

fn gtp_session(input: impl Read + Send + 'static) -> String {
    let out = Captured::default();
    let mut engine = GtpEngine::new(
        GtpSettings::default(),
        Box::new(RandomBot::new(3)),
        Output::new(Box::new(out.clone())),
        false,
    )
    .expect("engine");
    serve_gtp(
        &mut engine,
        spawn_line_reader(std::io::BufReader::new(input)),
    );
    out.text()
}

#[test]
fn gtp_refuses_bad_lines_with_their_id_and_goes_on() {
    let head: Vec<u8> = [
        &b"1 name\n"[..],
        b"2 na\xffme\n",
        b"\x00\x003 protocol_version\r\n",
        b"4 na\x00me\r\r\n",
        b"\xfe\xfe\n",
        b"5 boardsize 9\r\n",
    ]
    .concat();
    let long = LongLine {
        prefix: b"6 play b ".to_vec(),
        left: 100 << 20,
    };
    let tail = Cursor::new(b"7 play b E5\n8 showboard\n9 name".to_vec());
    let text = gtp_session(Cursor::new(head).chain(long).chain(tail));
    let answers: Vec<&str> = text.split("\n\n").filter(|s| !s.is_empty()).collect();
    assert_eq!(answers[0], "=1 engine");
    assert!(
        answers[1].starts_with("?2 ") && answers[1].contains("UTF-8"),
        "{}",
        answers[1]
    );
    // NUL and CR are control bytes: dropped, as KataGo drops them.
    assert_eq!(answers[2], "=3 2");
    assert_eq!(answers[3], "=4 engine");
    assert!(
        answers[4].starts_with("? ") && answers[4].contains("UTF-8"),
        "{}",
        answers[4]
    );
    assert_eq!(answers[5], "=5 ");
    assert!(
        answers[6].starts_with("?6 ") && answers[6].contains("longer than the limit"),
        "{}",
        answers[6]
    );
    assert_eq!(answers[7], "=7 ");
    assert!(answers[8].starts_with("=8"), "{}", answers[8]);
    assert!(
        answers[8].contains('X'),
        "the move after the long line was played"
    );
    assert_eq!(answers[9], "=9 engine");
    assert_eq!(answers.len(), 10, "{answers:?}");
}

fn query(id: &str) -> Value {
    json!({"id": id, "moves": [["B","C3"]], "rules": "tromp-taylor",
           "boardXSize": 5, "boardYSize": 5, "maxVisits": 1})
}

/// Runs the analysis server on `input` and returns its output lines.
fn analysis_session(input: impl Read + Send + 'static) -> Vec<Value> {
    let out = Captured::default();
    let backend = Arc::new(StubBackend {
        default_max_visits: 1,
    });
    let opts = ServerOptions {
        num_analysis_threads: 2,
        ..ServerOptions::default()
    };
    serve_analysis(backend, opts, std::io::BufReader::new(input), out.clone())
        .expect("serve ends cleanly");
    out.text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn answered(all: &[Value], id: &str) -> bool {
    all.iter()
        .any(|v| v["id"] == id && v["isDuringSearch"] == false && v.get("rootInfo").is_some())
}

fn error_for<'a>(all: &'a [Value], id: &str) -> &'a Value {
    all.iter()
        .find(|v| v["id"] == id && v.get("error").is_some())
        .unwrap_or_else(|| panic!("no error for {id}: {all:?}"))
}

#[test]
fn analysis_answers_every_good_query_around_bad_lines() {
    let mut head = Vec::new();
    for k in 0..60 {
        writeln!(head, "{}", query(&format!("g{k}"))).unwrap();
    }
    // Not UTF-8, with an id: an error that names it.
    head.extend_from_slice(b"{\"id\":\"latin1\",\"moves\":[],\"player\":\"Fran\xe7ois\"}\n");
    // Not UTF-8, no id to be found.
    head.extend_from_slice(b"\xff\xfe\xfd\n");
    // NUL bytes, CR/LF mixes, deep nesting, huge numbers, unknown action.
    head.extend_from_slice(b"\x00\x00\x00\r\n\r\n\r\r\n");
    head.extend_from_slice(format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000)).as_bytes());
    head.extend_from_slice(
        format!(
            "{{\"id\":\"deep\",\"x\":{}1{}}}\n",
            "[".repeat(5000),
            "]".repeat(5000)
        )
        .as_bytes(),
    );
    let mut huge = query("huge");
    huge["maxVisits"] = json!(1e300);
    writeln!(head, "{huge}").unwrap();
    head.extend_from_slice(
        b"{\"id\":\"hugeint\",\"moves\":[],\"rules\":\"tromp-taylor\",\"boardXSize\":5,\
          \"boardYSize\":5,\"maxVisits\":1,\"komi\":1e999}\n",
    );
    head.extend_from_slice(
        b"{\"id\":\"bigsize\",\"moves\":[],\"rules\":\"tromp-taylor\",\
          \"boardXSize\":18446744073709551617,\"boardYSize\":5}\n",
    );
    head.extend_from_slice(b"{\"id\":\"act\",\"action\":\"no_such_action\"}\n");
    // A line of 100 MB whose start carries an id.
    let long = LongLine {
        prefix: b"{\"id\":\"long\",\"moves\":[".to_vec(),
        left: 100 << 20,
    };
    let mut tail = Vec::new();
    for k in 60..130 {
        write!(tail, "{}\r\n", query(&format!("g{k}"))).unwrap();
    }
    // The last line has no line ending at all.
    write!(tail, "{}", query("last")).unwrap();

    let all = analysis_session(Cursor::new(head).chain(long).chain(Cursor::new(tail)));

    for k in 0..130 {
        assert!(answered(&all, &format!("g{k}")), "g{k} lost: {all:?}");
    }
    assert!(answered(&all, "last"));
    let e = error_for(&all, "latin1");
    assert!(e["error"].as_str().unwrap().contains("UTF-8"), "{e}");
    let e = error_for(&all, "long");
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .contains("longer than the limit"),
        "{e}"
    );
    let e = error_for(&all, "act");
    assert_eq!(e["field"], "action", "{e}");
    // Nesting past serde_json's limit is a general error (no id is parsed).
    assert!(all.iter().any(|v| v.get("id").is_none()
        && v["error"]
            .as_str()
            .is_some_and(|s| s.contains("recursion limit"))));
    // Errors of their own for the other bad lines, and nothing analysed.
    for id in ["huge", "bigsize", "deep", "hugeint"] {
        assert!(!answered(&all, id), "{id} was analysed");
    }
    let general_utf8 = all
        .iter()
        .filter(|v| {
            v.get("id").is_none() && v["error"].as_str().is_some_and(|s| s.contains("UTF-8"))
        })
        .count();
    assert_eq!(general_utf8, 1, "{all:?}");
}

#[test]
fn the_analysis_binary_survives_bad_bytes_and_answers_the_rest() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["analysis", "-stub-search"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start engine");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let mut data = Vec::new();
        for k in 0..110 {
            if k == 55 {
                data.extend_from_slice(b"{\"id\":\"bad\",\"x\":\"\xc3\x28\"}\n\x00\n");
                // Longer than the cap: refused, the stream goes on.
                data.extend_from_slice(b"{\"id\":\"toolong\",\"moves\":\"");
                data.extend(std::iter::repeat_n(b'y', MAX_LINE_BYTES + 10));
                data.extend_from_slice(b"\"}\n");
            }
            writeln!(data, "{}", query(&format!("q{k}"))).unwrap();
        }
        stdin.write_all(&data).expect("write queries");
        // Dropping stdin closes it: the engine finishes its queue and exits.
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read stdout");
    writer.join().expect("writer");
    let status = child.wait().expect("wait");
    assert!(status.success(), "engine exited with {status}");
    let all: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    for k in 0..110 {
        assert!(answered(&all, &format!("q{k}")), "q{k} lost");
    }
    assert!(error_for(&all, "bad")["error"]
        .as_str()
        .unwrap()
        .contains("UTF-8"));
    assert!(error_for(&all, "toolong")["error"]
        .as_str()
        .unwrap()
        .contains("longer than the limit"));
}
