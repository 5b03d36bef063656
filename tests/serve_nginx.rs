//! `engine serve` behind nginx (issue 65, point 9): Debian's nginx, started
//! here as a non-root process with `deploy/nginx.conf` (only its three
//! addresses replaced by free loopback ports), in front of two stub
//! replicas. Streaming (NDJSON and SSE partial results arrive while the
//! search still runs), a client going away through the proxy, and a
//! WebSocket all pass through it; then one replica is killed with SIGKILL
//! while four clients keep sending queries, and every query sent after the
//! kill must be answered, 200 with a final response, by the other.
//!
//! nginx is found on PATH or at /usr/sbin/nginx (or `$NGINX`). Without it
//! the test says so loudly and passes, unless `ENGINE_REQUIRE_NGINX=1`
//! (set by `.ci/run`, which installs nginx with `scripts/install_nginx.sh`),
//! when it fails.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "common/engine_cli.rs"]
mod engine_cli;
#[path = "common/serve_client.rs"]
mod serve_client;
use serve_client::{is_final, query, Server, Ws, WAIT};

/// The nginx binary, if there is one.
fn nginx_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NGINX") {
        return Some(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|dir| dir.join("nginx"))
        .find(|p| p.is_file())
}

/// uid and gid of `nobody` on Debian: nginx is started as that user when
/// the tests run as root (CI's containers), so it never runs as root here.
const NOBODY: u32 = 65534;

/// A running nginx (master and its one worker) in its own prefix
/// directory; stopped and its directory removed when dropped.
struct Nginx {
    child: Child,
    dir: PathBuf,
    port: u16,
    /// The upstream servers' `fail_timeout`: how long nginx leaves a
    /// failed replica alone.
    fail_timeout: Duration,
}

impl Nginx {
    /// Starts `deploy/nginx.conf` on a free port, with `replicas` as its two
    /// upstream servers; waits until it proxies `/healthz`.
    fn start(binary: &Path, replicas: [&str; 2]) -> Nginx {
        let template = std::fs::read_to_string(engine_cli::repo().join("deploy/nginx.conf"))
            .expect("deploy/nginx.conf");
        let port = free_port();
        let mut config = template.clone();
        for (from, to) in [
            (
                "listen 127.0.0.1:8080;",
                format!("listen 127.0.0.1:{port};"),
            ),
            ("server 127.0.0.1:8081 ", format!("server {} ", replicas[0])),
            ("server 127.0.0.1:8082 ", format!("server {} ", replicas[1])),
        ] {
            assert!(config.contains(from), "deploy/nginx.conf lost {from:?}");
            config = config.replacen(from, &to, 1);
        }
        let dir = std::env::temp_dir().join(format!("serve-nginx-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("nginx.conf"), config).unwrap();
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let mut cmd = Command::new(binary);
        cmd.arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if root {
            cmd.uid(NOBODY).gid(NOBODY);
        }
        // If this test process dies (killed by a timeout), the master gets
        // SIGTERM, which also stops its worker: no nginx outlives the test.
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe and touches no memory of the
        // parent.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd.spawn().expect("nginx starts");
        let mut nginx = Nginx {
            child,
            dir,
            port,
            fail_timeout: fail_timeout(&template),
        };
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(Some(status)) = nginx.child.try_wait() {
                panic!("nginx exited ({status}):\n{}", nginx.error_log());
            }
            match ureq::get(&nginx.url("/healthz"))
                .timeout(Duration::from_secs(2))
                .call()
            {
                Ok(r) if r.status() == 200 => return nginx,
                _ => {}
            }
            assert!(
                Instant::now() < deadline,
                "nginx does not proxy /healthz:\n{}",
                nginx.error_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its worker, then exits; SIGKILL if it
        // has not within 10 s.
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                let _ = std::fs::remove_dir_all(&self.dir);
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The (first) `fail_timeout=Ns` of a config.
fn fail_timeout(config: &str) -> Duration {
    let secs = config
        .split("fail_timeout=")
        .nth(1)
        .and_then(|rest| rest.split('s').next()?.parse().ok())
        .expect("deploy/nginx.conf names a fail_timeout in seconds");
    Duration::from_secs(secs)
}

/// A port nothing listens on now (the kernel's pick, released at once).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The sum of a metric over its labels, 0 when absent.
fn metric_sum(server: &Server, name: &str) -> f64 {
    let text = ureq::get(&server.url("/metrics"))
        .timeout(WAIT)
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What one query through nginx got: its status and whether its last line
/// was its final response (or why not).
fn post_through(agent: &ureq::Agent, url: &str, id: &str, visits: u64) -> Result<(), String> {
    let resp = agent
        .post(url)
        .timeout(WAIT)
        .send_string(&query(id, visits))
        .map_err(|e| e.to_string())?;
    let text = resp.into_string().map_err(|e| e.to_string())?;
    let last: Value = text
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| format!("no JSON line: {text:?}"))?;
    if is_final(&last) && last["id"] == id {
        Ok(())
    } else {
        Err(format!("not a final response: {last}"))
    }
}

/// Sends a long query through nginx, reads its first line, and checks it
/// is a partial result that came while the search still runs on a replica
/// (so nginx passed it on as it was written, not when the answer was
/// complete); then goes away, which must stop the search.
fn first_partial_while_running(nginx: &Nginx, replicas: &[&Server; 2], sse: bool) {
    let mut q: Value = serde_json::from_str(&query("stream", 1_000_000)).unwrap();
    q["reportDuringSearchEvery"] = json!(0.05);
    let mut req = ureq::post(&nginx.url("/v1/analyze")).timeout(WAIT);
    if sse {
        req = req.set("Accept", "text/event-stream");
    }
    let resp = req.send_string(&q.to_string()).expect("200 through nginx");
    let want = if sse {
        "text/event-stream"
    } else {
        "application/x-ndjson"
    };
    assert_eq!(resp.content_type(), want);
    let mut reader = BufReader::new(resp.into_reader());
    let mut line = String::new();
    reader.read_line(&mut line).expect("a first line");
    let json_text = if sse {
        line.strip_prefix("data: ").expect("an SSE data line")
    } else {
        line.as_str()
    };
    let first: Value = serde_json::from_str(json_text.trim()).unwrap();
    assert_eq!(first["isDuringSearch"], json!(true), "{first}");
    let running: f64 = replicas
        .iter()
        .map(|r| metric_sum(r, "engine_serve_searches_running"))
        .sum();
    assert!(running >= 1.0, "the partial result came after the search");
    drop(reader);
    // The client went away: nginx closes its upstream connection, and the
    // replica stops the search (1_000_000 stub visits would take minutes).
    let deadline = Instant::now() + WAIT;
    while replicas
        .iter()
        .map(|r| metric_sum(r, "engine_serve_searches_running"))
        .sum::<f64>()
        > 0.0
    {
        assert!(
            Instant::now() < deadline,
            "the search went on after its client left"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One query's outcome under load.
struct Outcome {
    /// Sent after the killed replica was dead.
    after_kill: bool,
    result: Result<(), String>,
}

#[test]
fn nginx_streams_and_the_surviving_replica_answers_after_a_sigkill() {
    let Some(binary) = nginx_binary() else {
        let message = "tests/serve_nginx.rs: NO NGINX FOUND (PATH, /usr/sbin/nginx, $NGINX): \
                       THE NGINX TEST DID NOT RUN. Install it with scripts/install_nginx.sh \
                       (.ci/run does).";
        assert!(
            std::env::var("ENGINE_REQUIRE_NGINX").as_deref() != Ok("1"),
            "{message}"
        );
        // Written to stderr itself, not with eprintln!, which the test
        // harness captures and hides for a test that passes.
        let _ = writeln!(std::io::stderr(), "\n********\n{message}\n********\n");
        return;
    };
    let mut a = Server::stub("numAnalysisThreads=2", &[]);
    let b = Server::stub("numAnalysisThreads=2", &[]);
    let nginx = Nginx::start(&binary, [&a.addr, &b.addr]);

    first_partial_while_running(&nginx, &[&a, &b], false);
    first_partial_while_running(&nginx, &[&a, &b], true);
    let mut ws = Ws::connect(&format!("ws://127.0.0.1:{}/v1/ws", nginx.port), None);
    ws.send(&query("ws", 20));
    assert!(is_final(ws.until_final("ws").last().unwrap()));
    drop(ws);

    // Four clients keep sending 30-visit queries (about 30 ms each).
    let url = nginx.url("/v1/analyze");
    let killed = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes = Arc::new(Mutex::new(Vec::<Outcome>::new()));
    let loaders: Vec<_> = (0..4)
        .map(|t| {
            let (url, killed, stop, outcomes) =
                (url.clone(), killed.clone(), stop.clone(), outcomes.clone());
            std::thread::spawn(move || {
                let agent = ureq::AgentBuilder::new().build();
                let mut i = 0;
                while !stop.load(Ordering::Acquire) {
                    let after_kill = killed.load(Ordering::Acquire);
                    let result = post_through(&agent, &url, &format!("load-{t}-{i}"), 30);
                    outcomes
                        .lock()
                        .unwrap()
                        .push(Outcome { after_kill, result });
                    i += 1;
                }
            })
        })
        .collect();
    let served = |s: &Server| metric_sum(s, "engine_serve_requests_total");
    let deadline = Instant::now() + WAIT;
    while served(&a) < 10.0 || served(&b) < 10.0 {
        assert!(Instant::now() < deadline, "the load did not reach both");
        std::thread::sleep(Duration::from_millis(20));
    }
    let b_before = served(&b);

    // SIGKILL under load; requests sent once it is dead must all succeed.
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    killed.store(true, Ordering::Release);
    let kill_time = Instant::now();
    let load_after_kill = nginx.fail_timeout + Duration::from_secs(2);
    let deadline = kill_time + load_after_kill + WAIT;
    loop {
        let after = outcomes
            .lock()
            .unwrap()
            .iter()
            .filter(|o| o.after_kill)
            .count();
        // At least 30, and load past the config's fail_timeout, when nginx
        // tries the dead replica again: without `proxy_next_upstream` that
        // attempt would reach the client as a 502.
        if after >= 30 && kill_time.elapsed() > load_after_kill {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {after} answers after the kill"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Release);
    for l in loaders {
        l.join().unwrap();
    }
    // A WebSocket opened after the kill reaches the survivor too.
    let mut ws = Ws::connect(&format!("ws://127.0.0.1:{}/v1/ws", nginx.port), None);
    ws.send(&query("ws-after", 20));
    assert!(is_final(ws.until_final("ws-after").last().unwrap()));

    let outcomes = outcomes.lock().unwrap();
    let (after, before): (Vec<&Outcome>, Vec<&Outcome>) =
        outcomes.iter().partition(|o| o.after_kill);
    let failed_after: Vec<&String> = after
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .collect();
    let failed_before = before.iter().filter(|o| o.result.is_err()).count();
    // Queries open on the killed replica when it died may fail (their
    // stream is cut); that is all that may.
    eprintln!(
        "serve_nginx: {} queries before the kill ({failed_before} failed: open on the killed \
         replica), {} after it ({} failed)",
        before.len(),
        after.len(),
        failed_after.len()
    );
    assert!(failed_before <= 4, "{failed_before} failed before the kill");
    assert!(
        failed_after.is_empty(),
        "after the kill: {failed_after:?}\nnginx's log:\n{}",
        nginx.error_log()
    );
    assert!(after.len() >= 30);
    assert!(
        served(&b) - b_before >= after.len() as f64,
        "the survivor answered them"
    );
}
