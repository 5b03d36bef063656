//! `engine analysis -remote ws://HOST:PORT/v1/ws [-key-file FILE]`: the
//! analysis engine's stdin/stdout, passed through an `engine serve`
//! WebSocket, so a GUI that starts `engine analysis` analyses on another
//! machine by changing its command line only.
//!
//! Each stdin line is one text message; each message back is printed as
//! one line. When stdin closes the proxy waits, as the local engine does,
//! for every answer: it sends one more action (`query_version` with its
//! own id), whose answer comes after the immediate answers (errors,
//! warnings, actions) to every line before it and is not printed, and it
//! waits for the final responses of every query it sent (counted with the
//! same query parser as the server: one per analysed turn; an error
//! answer for a query's id ends it); then it closes the connection.
//! `-quit-without-waiting` closes at once, which cancels the queries.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tungstenite::client::IntoClientRequest;
use tungstenite::http::HeaderValue;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use super::query::{parse_line, ParseOptions, Request};

/// How long a read waits before the proxy looks at stdin again.
const POLL: Duration = Duration::from_millis(10);

/// A ping after this long without sending, so that the server's idle
/// timeout (`wsIdleTimeoutSeconds`, 300 by default) never closes the
/// connection of a GUI that is merely waiting for its user.
const KEEPALIVE: Duration = Duration::from_secs(60);

/// Runs the proxy until stdin closes and the answers are in.
pub fn run(url: &str, key_file: Option<&Path>, quit_without_waiting: bool) -> Result<(), String> {
    let mut request = url
        .into_client_request()
        .map_err(|e| format!("-remote {url}: {e}"))?;
    if let Some(path) = key_file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("-key-file {}: {e}", path.display()))?;
        let secret = text.lines().next().unwrap_or("").trim();
        let value = HeaderValue::from_str(&format!("Bearer {secret}"))
            .map_err(|_| format!("-key-file {}: not a usable key", path.display()))?;
        request.headers_mut().insert("Authorization", value);
    }
    let (mut socket, _) =
        tungstenite::connect(request).map_err(|e| format!("-remote {url}: {e}"))?;
    if let MaybeTlsStream::Plain(stream) = socket.get_mut() {
        stream
            .set_read_timeout(Some(POLL))
            .map_err(|e| e.to_string())?;
    }
    crate::logfile::startup(&format!("engine analysis: analysing on {url}"));
    // The local engine's line, which some GUIs wait for.
    crate::logfile::startup("Started, ready to begin handling requests");
    let lines = stdin_lines();
    let mut pending = Pending::default();
    let mut stdin_open = true;
    // The id of the action sent when stdin closes, and whether its answer
    // is still due.
    let eof_id = format!("engine-analysis-remote-eof-{}", std::process::id());
    let mut marker_due = false;
    let mut last_sent = Instant::now();
    let stdout = std::io::stdout();
    loop {
        while stdin_open {
            match lines.try_recv() {
                Ok(line) => {
                    pending.sent(&line);
                    socket
                        .send(Message::text(line))
                        .map_err(|e| format!("sending to {url}: {e}"))?;
                    last_sent = Instant::now();
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    stdin_open = false;
                    if !quit_without_waiting {
                        // Answered after every immediate answer (errors,
                        // warnings, actions) to the lines before it.
                        let marker = serde_json::json!({"id": eof_id, "action": "query_version"});
                        socket
                            .send(Message::text(marker.to_string()))
                            .map_err(|e| format!("sending to {url}: {e}"))?;
                        marker_due = true;
                    }
                }
            }
        }
        if !stdin_open && (quit_without_waiting || (!marker_due && pending.is_empty())) {
            let _ = socket.close(None);
            let _ = socket.flush();
            return Ok(());
        }
        if last_sent.elapsed() >= KEEPALIVE {
            socket
                .send(Message::Ping(Vec::new().into()))
                .map_err(|e| format!("sending to {url}: {e}"))?;
            last_sent = Instant::now();
        }
        match read(&mut socket) {
            Ok(Some(text)) if is_answer_to(&text, &eof_id) => marker_due = false,
            Ok(Some(text)) => {
                pending.received(&text);
                let mut out = stdout.lock();
                let _ = writeln!(out, "{text}").and_then(|_| out.flush());
            }
            Ok(None) => {}
            Err(e) => return Err(format!("connection to {url}: {e}")),
        }
    }
}

/// One text message, or `None` when none came within [`POLL`].
fn read(socket: &mut WebSocket<MaybeTlsStream<TcpStream>>) -> Result<Option<String>, String> {
    match socket.read() {
        Ok(Message::Text(text)) => Ok(Some(text.as_str().to_string())),
        Ok(Message::Close(frame)) => Err(format!(
            "closed by the server{}",
            frame.map_or(String::new(), |f| format!(": {}", f.reason))
        )),
        Ok(_) => Ok(None),
        Err(tungstenite::Error::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Whether `text` is the answer to the action of id `id`.
fn is_answer_to(text: &str, id: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .is_some_and(|v| v.get("id").and_then(Value::as_str) == Some(id))
}

/// Non-empty stdin lines from a thread; the channel closes with stdin.
fn stdin_lines() -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let line = line.trim().to_string();
            if !line.is_empty() && tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Final responses still due, by query id.
#[derive(Debug, Default)]
struct Pending {
    due: HashMap<String, usize>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.due.is_empty()
    }

    /// A line sent: a query owes one final response per analysed turn.
    fn sent(&mut self, line: &str) {
        let parsed = parse_line(line, &ParseOptions::default());
        if let Ok(Request::Analyze(q)) = parsed.result {
            *self.due.entry(q.id.clone()).or_insert(0) += q.analyze_turns.len().max(1);
        }
    }

    /// A response received: a final one pays one turn, an error ends its
    /// query (a refused query gets nothing else).
    fn received(&mut self, text: &str) {
        let Ok(Value::Object(v)) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let Some(id) = v.get("id").and_then(Value::as_str) else {
            return;
        };
        if v.contains_key("error") {
            self.due.remove(id);
            return;
        }
        let is_final = v.contains_key("turnNumber")
            && !v
                .get("isDuringSearch")
                .and_then(Value::as_bool)
                .unwrap_or(false);
        if is_final {
            if let Some(n) = self.due.get_mut(id) {
                *n -= 1;
                if *n == 0 {
                    self.due.remove(id);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_one_final_per_turn_and_an_error_ends_a_query() {
        let mut p = Pending::default();
        p.sent(r#"{"id":"a","moves":[["B","C3"]],"rules":"japanese","boardXSize":9,"boardYSize":9,"analyzeTurns":[0,1]}"#);
        p.sent(r#"{"id":"b","moves":[],"rules":"japanese","boardXSize":9,"boardYSize":9}"#);
        p.sent(r#"{"id":"x","action":"query_version"}"#);
        p.sent("not json");
        assert_eq!(p.due.len(), 2);
        p.received(r#"{"id":"a","turnNumber":0,"isDuringSearch":true}"#);
        p.received(r#"{"id":"a","turnNumber":0,"isDuringSearch":false}"#);
        assert_eq!(p.due["a"], 1);
        p.received(r#"{"id":"a","turnNumber":1,"noResults":true}"#);
        p.received(r#"{"id":"b","error":"over quota"}"#);
        assert!(p.is_empty());
    }
}
