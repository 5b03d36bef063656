//! A Sabaki-like session against the real binary: every response checked.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
        let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
            .args(["gtp", "-model"])
            .arg(&model)
            .args(["-override-config", "maxVisits=50"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start engine");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("engine answered in time")
    }

    fn send(&mut self, cmd: &str) {
        writeln!(self.stdin, "{cmd}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends `id cmd` and returns (ok, body lines joined by '\n').
    fn ask(&mut self, id: u32, cmd: &str) -> (bool, String) {
        self.send(&format!("{id} {cmd}"));
        let head = self.line();
        let ok = head.starts_with(&format!("={id}"));
        assert!(
            ok || head.starts_with(&format!("?{id}")),
            "{cmd}: bad header {head:?}"
        );
        let mut body = vec![head[format!("={id}").len()..].trim().to_string()];
        loop {
            let l = self.line();
            if l.is_empty() {
                break;
            }
            body.push(l);
        }
        (ok, body.join("\n").trim().to_string())
    }

    fn ok(&mut self, id: u32, cmd: &str) -> String {
        let (ok, body) = self.ask(id, cmd);
        assert!(ok, "{cmd} failed: {body}");
        body
    }
}

#[test]
fn sabaki_like_session() {
    let mut e = Engine::start();
    assert_eq!(e.ok(1, "name"), "engine");
    assert!(!e.ok(2, "version").is_empty());
    let cmds = e.ok(3, "list_commands");
    for c in [
        "kata-analyze",
        "lz-analyze",
        "genmove",
        "undo",
        "final_score",
        "loadsgf",
    ] {
        assert!(cmds.lines().any(|l| l == c), "{c} not listed");
    }
    e.ok(4, "boardsize 9");
    e.ok(5, "clear_board");
    e.ok(6, "komi 7.5");
    assert_eq!(e.ok(7, "get_komi"), "7.5");
    e.ok(8, "play b E5");
    e.ok(9, "play w C3");
    let (ok, msg) = e.ask(10, "play b E5");
    assert!(!ok && msg == "illegal move", "{msg}");

    // kata-analyze for a moment, then the next command stops it.
    e.send("11 kata-analyze interval 10");
    assert_eq!(e.line(), "=11");
    let info = e.line();
    assert!(info.starts_with("info move "), "{info}");
    assert!(info.contains(" winrate ") && info.contains(" scoreLead ") && info.contains(" pv "));
    assert!(!info.contains("move E5 ") && !info.contains("move C3 "));
    e.send("12 play b G7");
    loop {
        let l = e.line();
        if l.is_empty() {
            break;
        }
        assert!(l.starts_with("info move "), "{l}");
    }
    assert_eq!(e.line(), "=12 ");
    assert_eq!(e.line(), "");

    let mv = e.ok(13, "genmove w");
    assert!(mv == "pass" || mv == "resign" || mv.len() >= 2, "{mv}");
    if mv != "pass" && mv != "resign" {
        let (ok, _) = e.ask(14, &format!("play b {mv}"));
        assert!(!ok, "genmove's stone must be on the board");
        e.ok(15, "undo");
        e.ok(16, &format!("play b {mv}"));
        e.ok(17, "undo");
    }
    let score = e.ok(18, "final_score");
    assert!(
        score == "0" || score.starts_with("B+") || score.starts_with("W+"),
        "{score}"
    );
    let (ok, _) = e.ask(19, "xyzzy");
    assert!(!ok);
    e.ok(20, "quit");
    assert!(e.child.wait().unwrap().success());
}
