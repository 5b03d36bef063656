//! A running `engine serve` for the end-to-end tests of the server
//! (`tests/serve*.rs`): the real binary on 127.0.0.1 at a free port it
//! picks and prints, keys files, and reading `/metrics`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use engine::analysis::serve::keys::sha256_hex;

/// The longest any step may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// A running `engine serve`, killed when dropped.
pub struct Server {
    pub child: Child,
    /// `HOST:PORT`.
    pub addr: String,
    /// stderr up to the line that names the address.
    pub startup: Vec<String>,
    _stderr: Receiver<String>,
}

impl Server {
    /// `engine serve -listen 127.0.0.1:0 ARGS`, run from the repository
    /// root; returns once it names its address.
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("serve")
            .args(["-listen", "127.0.0.1:0"])
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("engine serve starts");
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

    /// `http://ADDR/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// One value of `/metrics` (the line `name value`), 0 when absent.
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

/// A keys file with alice (secret "alice-secret") and bob ("bob-secret"),
/// and `alice_extra` lines in alice's table.
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
