//! `engine serve` driven from a test: the real binary on 127.0.0.1 (a free
//! port the server picks and prints), killed when dropped, and a blocking
//! WebSocket client. Shared by tests/serve.rs and tests/serve_nginx.rs.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::client::IntoClientRequest;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use engine::analysis::serve::keys::sha256_hex;

use super::engine_cli::repo;

/// The longest any step may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// A running `engine serve`, killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
    /// stderr up to the line that names the address.
    pub startup: Vec<String>,
    _stderr: Receiver<String>,
}

impl Server {
    pub fn start(args: &[&str]) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_engine"));
        cmd.arg("serve")
            .args(["-listen", "127.0.0.1:0"])
            .args(args)
            .current_dir(repo())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // If the test process dies without dropping the Server (killed by
        // a timeout), the server dies too instead of outliving it. The
        // signal comes when the thread that started it ends: the test's
        // own thread, which outlives the Server.
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe and touches no memory of the
        // parent.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("engine serve starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + WAIT;
        let mut startup = Vec::new();
        loop {
            let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no start-up line naming the address: {startup:?}");
            };
            if let Some(rest) = line.strip_prefix("engine serve: listening on http://") {
                let addr = rest.split(',').next().unwrap().to_string();
                startup.push(line);
                return Server {
                    child,
                    addr,
                    startup,
                    _stderr: rx,
                };
            }
            startup.push(line);
        }
    }

    /// A stub server with `overrides` (`-override-config`) and more flags.
    pub fn stub(overrides: &str, extra: &[&str]) -> Server {
        let mut args = vec!["-stub-search", "-override-config", overrides];
        args.extend(extra);
        Server::start(&args)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn ws(&self, secret: Option<&str>) -> Ws {
        Ws::connect(&format!("ws://{}/v1/ws", self.addr), secret)
    }

    /// One value of `/metrics`, 0 when absent.
    pub fn metric(&self, name: &str) -> f64 {
        let text = ureq::get(&self.url("/metrics"))
            .call()
            .unwrap()
            .into_string()
            .unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0.0)
    }

    /// Waits until `/metrics` shows `name` at `pred`.
    pub fn wait_metric(&self, name: &str, pred: impl Fn(f64) -> bool) -> f64 {
        let deadline = Instant::now() + WAIT;
        loop {
            let v = self.metric(name);
            if pred(v) {
                return v;
            }
            assert!(Instant::now() < deadline, "{name} stayed at {v}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A WebSocket client that reads with a deadline.
pub struct Ws(pub WebSocket<MaybeTlsStream<TcpStream>>);

impl Ws {
    pub fn connect(url: &str, secret: Option<&str>) -> Ws {
        let mut request = url.into_client_request().unwrap();
        if let Some(s) = secret {
            request
                .headers_mut()
                .insert("Authorization", format!("Bearer {s}").parse().unwrap());
        }
        let (mut socket, _) = tungstenite::connect(request).expect("WebSocket opens");
        if let MaybeTlsStream::Plain(s) = socket.get_mut() {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        }
        Ws(socket)
    }

    pub fn send(&mut self, line: &str) {
        self.0.send(Message::text(line)).unwrap();
    }

    /// The next response, or `None` if none comes within `wait`.
    pub fn next_within(&mut self, wait: Duration) -> Option<Value> {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            match self.0.read() {
                Ok(Message::Text(t)) => return Some(serde_json::from_str(t.as_str()).unwrap()),
                Ok(Message::Close(f)) => {
                    return Some(json!({ "closed": f.map(|f| f.reason.to_string()) }))
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => return Some(json!({ "closed": e.to_string() })),
            }
        }
        None
    }

    pub fn next(&mut self) -> Value {
        self.next_within(WAIT).expect("a response in time")
    }

    /// Responses until the final one of `id` (all of them returned).
    pub fn until_final(&mut self, id: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let v = self.next();
            assert!(v.get("closed").is_none(), "closed: {v}");
            let done = is_final(&v) && v["id"] == id;
            seen.push(v);
            if done {
                return seen;
            }
        }
    }
}

pub fn is_final(v: &Value) -> bool {
    v.get("turnNumber").is_some() && v["isDuringSearch"] != json!(true)
}

/// A 9x9 query.
pub fn query(id: &str, visits: u64) -> String {
    json!({
        "id": id, "moves": [["B", "E5"], ["W", "C3"]], "rules": "tromp-taylor",
        "komi": 7.5, "boardXSize": 9, "boardYSize": 9, "maxVisits": visits,
    })
    .to_string()
}

/// A keys file with alice (secret "alice-secret") and bob, and `extra`
/// lines in alice's table.
pub fn keys_file(tag: &str, alice_extra: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("serve-keys-{tag}-{}.toml", std::process::id()));
    let text = format!(
        "[[key]]\nname = \"alice\"\nsha256 = \"{}\"\nweight = 1\n{alice_extra}\n\n\
         [[key]]\nname = \"bob\"\nsha256 = \"{}\"\nweight = 1\n",
        sha256_hex("alice-secret"),
        sha256_hex("bob-secret")
    );
    std::fs::write(&path, text).unwrap();
    path
}
