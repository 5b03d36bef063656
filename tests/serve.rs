//! `engine serve` end to end: the real binary on 127.0.0.1 (a free port
//! the server picks and prints), driven with a blocking HTTP client
//! (`ureq`) and WebSocket client (`tungstenite`). Most servers run the
//! stand-in search (`-stub-search`: one visit per millisecond, values by
//! visit count), which makes orders and cancellations observable without
//! depending on the machine's speed; streaming and `-remote` also run on
//! the project's small net. Nothing here asserts speed: time limits only
//! bound how long a broken server can hang a test.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::Message;

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::FIRST_NET;
#[path = "common/serve_client.rs"]
mod serve_client;
use serve_client::{is_final, keys_file, query, Server, Ws, WAIT};

/// `POST /v1/analyze`: status, `Retry-After`, and the body's lines.
fn post(server: &Server, secret: Option<&str>, body: &str) -> (u16, Option<String>, Vec<Value>) {
    let mut req = ureq::post(&server.url("/v1/analyze")).timeout(WAIT);
    if let Some(s) = secret {
        req = req.set("Authorization", &format!("Bearer {s}"));
    }
    let resp = match req.send_string(body) {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{e}"),
    };
    let status = resp.status();
    let retry = resp.header("Retry-After").map(str::to_string);
    let text = resp.into_string().unwrap();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (status, retry, lines)
}

/// Sends a query on a WebSocket whose server queue is full: the refusal
/// comes back as a message with the query's id.
fn bob_ws_refusal(ws: &mut Ws) -> Value {
    ws.send(&query("b3", 5));
    let v = ws.next();
    assert!(
        v["error"].as_str().unwrap().contains("queue is full"),
        "{v}"
    );
    v
}

#[test]
fn ndjson_streams_partials_then_the_final_and_sse_the_same_objects() {
    let server = Server::start(&[
        "-model",
        FIRST_NET,
        "-config",
        "configs/serve.toml",
        "-override-config",
        "numAnalysisThreads=1",
    ]);
    // configs/serve.toml draws no config key warning from engine serve.
    assert!(
        !server.startup.iter().any(|l| l.contains("config key")),
        "{:?}",
        server.startup
    );
    assert!(server.startup.last().unwrap().contains("keys off"));
    let mut q: Value = serde_json::from_str(&query("net", 400)).unwrap();
    q["reportDuringSearchEvery"] = json!(0.002);
    let (status, _, lines) = post(&server, None, &q.to_string());
    assert_eq!(status, 200, "{lines:?}");
    let last = lines.last().unwrap();
    assert!(is_final(last), "{last}");
    assert!(
        last["rootInfo"]["visits"].as_i64().unwrap() >= 400,
        "{last}"
    );
    assert!(
        lines[..lines.len() - 1]
            .iter()
            .all(|v| v["isDuringSearch"] == json!(true)),
        "partials first: {lines:?}"
    );
    assert!(lines.len() >= 2, "at least one partial result: {lines:?}");

    let resp = ureq::post(&server.url("/v1/analyze"))
        .set("Accept", "text/event-stream")
        .send_string(&query("sse", 50))
        .unwrap();
    assert_eq!(resp.content_type(), "text/event-stream");
    let text = resp.into_string().unwrap();
    let events: Vec<Value> = text
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap())
        .collect();
    assert_eq!(events.len(), 1, "{text}");
    assert!(is_final(&events[0]) && events[0]["id"] == "sse");

    // Actions over HTTP: one answer line.
    let (status, _, lines) = post(&server, None, r#"{"id":"v","action":"query_version"}"#);
    assert_eq!(status, 200);
    assert_eq!(lines[0]["version"], "1.17.2");
    assert_eq!(
        ureq::get(&server.url("/healthz")).call().unwrap().status(),
        200
    );
    assert_eq!(
        ureq::get(&server.url("/readyz")).call().unwrap().status(),
        200
    );
    assert!(server.metric("engine_nn_batches_total") > 0.0);
}

#[test]
fn websocket_carries_many_queries_and_terminate_is_scoped_to_the_connection() {
    let server = Server::stub("numAnalysisThreads=2", &[]);
    let mut a = server.ws(None);
    let mut b = server.ws(None);
    // Several queries in flight on one connection: every final comes.
    for i in 0..5 {
        a.send(&query(&format!("q{i}"), 5));
    }
    let mut finals: Vec<String> = Vec::new();
    while finals.len() < 5 {
        let v = a.next();
        if is_final(&v) {
            finals.push(v["id"].as_str().unwrap().to_string());
        }
    }
    finals.sort();
    assert_eq!(finals, ["q0", "q1", "q2", "q3", "q4"]);

    // a: two long searches (both threads); b: the same id, queued.
    a.send(&query("long", 1_000_000));
    a.send(&query("long2", 1_000_000));
    server.wait_metric("engine_serve_searches_running", |v| v == 2.0);
    b.send(&query("long", 1_000_000));
    server.wait_metric("engine_serve_queue_depth{key=\"anonymous\"}", |v| v == 1.0);
    a.send(r#"{"id":"stop","action":"terminate_all"}"#);
    let mut seen = Vec::new();
    while !(seen
        .iter()
        .any(|v: &Value| is_final(v) && v["id"] == "long")
        && seen
            .iter()
            .any(|v: &Value| is_final(v) && v["id"] == "long2"))
    {
        seen.push(a.next());
    }
    assert!(
        seen.iter().any(|v| v["action"] == "terminate_all"),
        "{seen:?}"
    );
    // b's query of the same id was not terminated: it runs now.
    assert_eq!(b.next_within(Duration::from_millis(300)), None);
    server.wait_metric("engine_serve_searches_running", |v| v == 1.0);
    b.send(r#"{"id":"t","action":"terminate","terminateId":"long"}"#);
    let got = b.until_final("long");
    assert!(got.iter().any(|v| v["action"] == "terminate"), "{got:?}");
    // Errors come back as messages, in order, and the socket stays open.
    b.send("{not json");
    assert!(b.next()["error"]
        .as_str()
        .unwrap()
        .contains("could not parse"));
    b.send(&query("after", 3));
    assert!(is_final(b.until_final("after").last().unwrap()));
}

#[test]
fn every_refusal_has_its_status_and_a_json_error() {
    let keys = keys_file("errors", "maxVisits = 5000\nmaxInFlight = 1\nperMinute = 3");
    let server = Server::stub(
        "numAnalysisThreads=1,spareAnalysisThreads=0,maxRequestBytes=2000,maxQueuedPositions=1,retryAfterSeconds=7",
        &["-keys", keys.to_str().unwrap()],
    );
    let alice = Some("alice-secret");
    let bob = Some("bob-secret");
    let check =
        |(status, retry, lines): (u16, Option<String>, Vec<Value>), want: u16, text: &str| {
            assert_eq!(status, want, "{lines:?}");
            let error = lines[0]["error"]
                .as_str()
                .unwrap_or_else(|| panic!("{lines:?}"));
            assert!(error.contains(text), "{error}");
            retry
        };
    // Keys.
    check(post(&server, None, &query("a", 5)), 401, "missing key");
    check(
        post(&server, Some("nope"), &query("a", 5)),
        401,
        "wrong key",
    );
    let ws_refused = tungstenite::connect(format!("ws://{}/v1/ws", server.addr));
    assert!(
        matches!(ws_refused, Err(tungstenite::Error::Http(ref r)) if r.status() == 401),
        "{ws_refused:?}"
    );
    // Bad input: KataGo's own messages.
    check(
        post(&server, bob, "{\"id\":"),
        400,
        "could not parse input line",
    );
    let bad_move = query("bad", 5).replace("E5", "Z99");
    let (status, _, lines) = post(&server, bob, &bad_move);
    assert_eq!(
        (status, &lines[0]["field"]),
        (400, &json!("moves")),
        "{lines:?}"
    );
    check(post(&server, bob, "a\nb"), 400, "exactly one query line");
    check(
        post(&server, bob, &" ".repeat(3000)),
        413,
        "maxRequestBytes",
    );
    check(
        post(&server, alice, &query("many", 5001)),
        400,
        "maxVisits 5001",
    );
    // overrideSettings.maxVisits as the search reads it: a float and a
    // string with blanks are numbers too, not "no maxVisits".
    for over in [json!(6000.0), json!(" 6000 ")] {
        let mut q: Value = serde_json::from_str(&query("over", 5)).unwrap();
        q.as_object_mut().unwrap().remove("maxVisits");
        q["overrideSettings"] = json!({ "maxVisits": over });
        check(
            post(&server, alice, &q.to_string()),
            400,
            "maxVisits 6000 is over this key's limit",
        );
    }
    // Quotas: alice may have one query in flight (the key in the URL).
    let mut ws = Ws::connect(
        &format!("ws://{}/v1/ws?key=alice-secret", server.addr),
        None,
    );
    ws.send(&query("long", 5000));
    server.wait_metric("engine_serve_searches_running", |v| v == 1.0);
    let retry = check(
        post(&server, alice, &query("second", 5)),
        429,
        "maxInFlight",
    );
    assert_eq!(retry.as_deref(), Some("1"));
    // The queue (1 position) is full while bob's first query waits.
    let mut bob_ws = server.ws(bob);
    bob_ws.send(&query("b1", 100_000));
    server.wait_metric("engine_serve_queue_depth{key=\"bob\"}", |v| v == 1.0);
    let retry = check(post(&server, bob, &query("b2", 5)), 503, "queue is full");
    assert_eq!(retry.as_deref(), Some("7"));
    let refusal = bob_ws_refusal(&mut bob_ws);
    assert_eq!(refusal["id"], "b3", "{refusal}");
    ws.send(r#"{"id":"s","action":"terminate_all"}"#);
    ws.until_final("long");
    bob_ws.send(r#"{"id":"s","action":"terminate_all"}"#);
    bob_ws.until_final("b1");
    // perMinute = 3: "long" and two more, then 429 with the wait.
    for id in ["p1", "p2"] {
        let (status, _, lines) = post(&server, alice, &query(id, 2));
        assert_eq!(status, 200, "{lines:?}");
    }
    let retry = check(post(&server, alice, &query("p3", 2)), 429, "perMinute");
    let wait: u64 = retry.unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    // Unknown paths, wrong methods, a plain GET of the WebSocket, a query
    // string that does not parse: JSON errors too.
    let get = |path: &str| match ureq::get(&server.url(path))
        .set("Authorization", "Bearer bob-secret")
        .call()
    {
        Err(ureq::Error::Status(s, r)) => {
            let body: Value = serde_json::from_str(&r.into_string().unwrap()).unwrap();
            assert!(body["error"].is_string(), "{path}: {body}");
            s
        }
        other => panic!("{path}: {other:?}"),
    };
    assert_eq!(get("/v2/nothing"), 404);
    assert_eq!(get("/v1/analyze"), 405);
    assert!((400..500).contains(&get("/v1/ws")));
    let garbled = ureq::get(&server.url("/v1/ws?key=%zz&&=")).call();
    assert!(
        matches!(garbled, Err(ureq::Error::Status(401, _))),
        "{garbled:?}"
    );
    assert!(
        server
            .metric("engine_serve_requests_total{key=\"alice\",endpoint=\"analyze\",code=\"429\"}")
            >= 2.0
    );
    let _ = std::fs::remove_file(keys);
}

#[test]
fn slow_headers_slow_bodies_and_idle_websockets_are_closed() {
    let server = Server::stub(
        "headerReadTimeoutSeconds=0.3,bodyReadTimeoutSeconds=0.3,wsIdleTimeoutSeconds=0.3",
        &[],
    );
    let mut tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let mut buf = Vec::new();
    // The server closes the connection (perhaps after a 408) instead of
    // waiting for the rest of the headers.
    let _ = tcp.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text}"
    );

    // A body that stops coming: 408 with a JSON error.
    let mut tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.write_all(b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"id\":")
        .unwrap();
    tcp.set_read_timeout(Some(WAIT)).unwrap();
    let mut buf = Vec::new();
    let _ = tcp.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        text.contains("{\"error\":\"the request body did not arrive in time\"}"),
        "{text}"
    );

    let mut ws = server.ws(None);
    let v = ws.next();
    assert!(v.get("closed").is_some(), "{v}");

    // Pings keep a waiting client (`-remote` under a GUI) connected.
    let mut pinging = server.ws(None);
    for _ in 0..8 {
        pinging.0.send(Message::Ping(Vec::new().into())).unwrap();
        assert_eq!(pinging.next_within(Duration::from_millis(100)), None);
    }
    pinging.send(&query("still-here", 2));
    assert!(is_final(pinging.until_final("still-here").last().unwrap()));
}

#[test]
fn a_key_neither_sees_nor_terminates_another_keys_queries() {
    let keys = keys_file("scope", "");
    let server = Server::stub("numAnalysisThreads=1", &["-keys", keys.to_str().unwrap()]);
    let mut alice = server.ws(Some("alice-secret"));
    alice.send(&query("shared-id", 1_000_000));
    server.wait_metric("engine_serve_searches_running", |v| v == 1.0);
    // Bob terminates "shared-id" over HTTP (his key's scope) and on his
    // own WebSocket: alice's search keeps running and she hears nothing.
    let (status, _, lines) = post(
        &server,
        Some("bob-secret"),
        r#"{"id":"t","action":"terminate","terminateId":"shared-id"}"#,
    );
    assert_eq!((status, lines.len()), (200, 1), "{lines:?}");
    let mut bob = server.ws(Some("bob-secret"));
    bob.send(r#"{"id":"t2","action":"terminate_all"}"#);
    assert_eq!(bob.next()["action"], "terminate_all");
    assert_eq!(bob.next_within(Duration::from_millis(200)), None);
    assert_eq!(alice.next_within(Duration::from_millis(200)), None);
    assert_eq!(server.metric("engine_serve_searches_running"), 1.0);
    assert_eq!(server.metric("engine_serve_cancelled_jobs_total"), 0.0);
    // Alice's own terminate over HTTP reaches it.
    post(
        &server,
        Some("alice-secret"),
        r#"{"id":"t","action":"terminate","terminateId":"shared-id"}"#,
    );
    assert!(is_final(alice.until_final("shared-id").last().unwrap()));
    let _ = std::fs::remove_file(keys);
}

/// The board page (docs/web.md) needs no key even with keys on: it holds
/// no data, and its WebSocket asks for one. Its assets come with their
/// content types, gzipped when asked for, and revalidate with a 304.
#[test]
fn the_board_page_needs_no_key() {
    let keys = keys_file("web", "");
    let server = Server::stub("numAnalysisThreads=1", &["-keys", keys.to_str().unwrap()]);
    let page = ureq::get(&server.url("/")).call().expect("/ without a key");
    assert_eq!(page.content_type(), "text/html");
    let html = page.into_string().unwrap();
    assert!(html.contains("/assets/app.js") && html.contains("/assets/app.css"));
    for (path, kind) in [
        ("/assets/app.js", "text/javascript"),
        ("/assets/app.css", "text/css"),
        ("/assets/board.png", "image/png"),
    ] {
        let r = ureq::get(&server.url(path))
            .set("Accept-Encoding", "gzip")
            .call()
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(r.content_type(), kind, "{path}");
        let gzipped = r.header("content-encoding") == Some("gzip");
        assert_eq!(gzipped, kind != "image/png", "{path}");
        let etag = r.header("etag").expect("an ETag").to_string();
        let again = ureq::get(&server.url(path))
            .set("If-None-Match", &etag)
            .call()
            .unwrap();
        assert_eq!(again.status(), 304, "{path}");
    }
    assert!(matches!(
        ureq::get(&server.url("/assets/nothing.js")).call(),
        Err(ureq::Error::Status(404, _))
    ));
    // The API still wants the key.
    assert!(matches!(
        ureq::get(&server.url("/v1/ws")).call(),
        Err(ureq::Error::Status(401, _))
    ));
    let _ = std::fs::remove_file(keys);
}

#[test]
fn a_client_that_goes_away_has_its_searches_stopped() {
    let server = Server::stub("numAnalysisThreads=1", &[]);
    // HTTP: the request's connection closes mid-search.
    let mut tcp = TcpStream::connect(&server.addr).unwrap();
    let body = query("gone", 1_000_000);
    write!(
        tcp,
        "POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    server.wait_metric("engine_serve_searches_running", |v| v == 1.0);
    drop(tcp);
    server.wait_metric("engine_serve_cancelled_jobs_total", |v| v == 1.0);
    server.wait_metric("engine_serve_searches_running", |v| v == 0.0);
    // WebSocket: one running, two queued; all stopped or dropped.
    let mut ws = server.ws(None);
    for id in ["w1", "w2", "w3"] {
        ws.send(&query(id, 1_000_000));
    }
    server.wait_metric("engine_serve_queue_depth{key=\"anonymous\"}", |v| v == 2.0);
    drop(ws);
    server.wait_metric("engine_serve_cancelled_jobs_total", |v| v == 4.0);
    server.wait_metric("engine_serve_searches_running", |v| v == 0.0);
    assert_eq!(
        server.metric("engine_serve_queue_depth{key=\"anonymous\"}"),
        0.0
    );
    assert_eq!(server.metric("engine_serve_disconnects_total"), 2.0);
}

#[test]
fn a_flooding_key_does_not_starve_another() {
    let keys = keys_file("fair", "");
    let server = Server::stub("numAnalysisThreads=1", &["-keys", keys.to_str().unwrap()]);
    let mut alice = server.ws(Some("alice-secret"));
    for i in 0..40 {
        alice.send(&query(&format!("a{i}"), 20));
    }
    let name = "engine_serve_queue_depth{key=\"alice\"}";
    let before = server.wait_metric(name, |v| v >= 30.0);
    let (status, _, lines) = post(&server, Some("bob-secret"), &query("b", 20));
    assert_eq!(status, 200, "{lines:?}");
    let after = server.metric(name);
    // Served first come first served, bob would wait for all of alice's
    // queue; by turns, after one or two of hers.
    assert!(
        after >= before - 5.0,
        "alice's queue went {before} -> {after}"
    );
    let _ = std::fs::remove_file(keys);
}

#[test]
fn sigterm_lets_open_queries_finish_then_exits_0() {
    let mut server = Server::stub("numAnalysisThreads=1,drainSeconds=20", &[]);
    let url = server.url("/v1/analyze");
    let pending = std::thread::spawn(move || {
        ureq::post(&url)
            .timeout(WAIT)
            .send_string(&query("drained", 1500))
            .unwrap()
            .into_string()
            .unwrap()
    });
    server.wait_metric("engine_serve_searches_running", |v| v == 1.0);
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let text = pending.join().unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert!(is_final(&last), "{text}");
    assert_eq!(last["rootInfo"]["visits"], 1500);
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "still running after the drain");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}

/// `engine analysis` with `args`, `input` on stdin; its stdout lines.
fn analysis(args: &[&str], input: &str) -> (bool, Vec<Value>, String) {
    let out = engine_cli::run_engine(args, input);
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status.success(),
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn analysis_remote_gives_what_local_analysis_gives() {
    let keys = keys_file("remote", "");
    let server = Server::start(&[
        "-model",
        FIRST_NET,
        "-config",
        "configs/serve.toml",
        "-keys",
        keys.to_str().unwrap(),
        "-override-config",
        "numAnalysisThreads=2",
    ]);
    let key_file = keys.with_extension("secret");
    std::fs::write(&key_file, "alice-secret\n").unwrap();
    let mut input = String::new();
    for (i, visits) in [1, 1, 1].iter().enumerate() {
        let mut q: Value = serde_json::from_str(&query(&format!("r{i}"), *visits)).unwrap();
        q["analyzeTurns"] = json!([0, 1, 2]);
        input.push_str(&format!("{q}\n"));
    }
    input.push_str("{\"id\":\"bad\"\n{\"id\":\"v\",\"action\":\"query_version\"}\n");
    let url = format!("ws://{}/v1/ws", server.addr);
    let (ok, remote, stderr) = analysis(
        &[
            "analysis",
            "-remote",
            &url,
            "-key-file",
            key_file.to_str().unwrap(),
        ],
        &input,
    );
    assert!(ok, "{stderr}");
    let (ok, local, stderr) = analysis(
        &[
            "analysis",
            "-model",
            FIRST_NET,
            "-config",
            "configs/analysis.toml",
        ],
        &input,
    );
    assert!(ok, "{stderr}");
    // The same answers, order between queries aside (values differ by
    // the net's random symmetries, so the shape is compared).
    let shape = |v: &[Value]| {
        let mut out: Vec<String> = v
            .iter()
            .map(|x| {
                let keys: Vec<&String> = x.as_object().unwrap().keys().collect();
                format!("{} {} {:?}", x["id"], x["turnNumber"], keys)
            })
            .collect();
        out.sort();
        out
    };
    assert_eq!(remote.len(), 11, "{remote:?}");
    assert_eq!(shape(&remote), shape(&local));
    // Only immediate answers: still every one of them before the end.
    let (ok, answers, stderr) = analysis(
        &[
            "analysis",
            "-remote",
            &url,
            "-key-file",
            key_file.to_str().unwrap(),
        ],
        "{\"id\":\"v\",\"action\":\"query_version\"}\n{bad\n",
    );
    assert!(ok, "{stderr}");
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["version"], "1.17.2");
    assert!(answers[1]["error"].is_string(), "{answers:?}");
    // A wrong key: a clear error, exit 1.
    std::fs::write(&key_file, "mallory\n").unwrap();
    let (ok, _, stderr) = analysis(
        &[
            "analysis",
            "-remote",
            &url,
            "-key-file",
            key_file.to_str().unwrap(),
        ],
        "",
    );
    assert!(!ok && stderr.contains("401"), "{stderr}");
    let _ = std::fs::remove_file(keys);
    let _ = std::fs::remove_file(key_file);
}

#[test]
fn start_up_refuses_an_open_public_address_and_a_bad_keys_file() {
    let refused = |args: &[&str], text: &str| {
        let mut all = vec!["serve", "-stub-search"];
        all.extend(args);
        let out = engine_cli::run_engine(&all, "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(text), "{stderr}");
    };
    refused(&["-listen", "0.0.0.0:0"], "without -keys");
    refused(
        &["-listen", "localhost:8080"],
        "HOST:PORT with an IP address",
    );
    let bad = std::env::temp_dir().join(format!("serve-bad-keys-{}.toml", std::process::id()));
    std::fs::write(&bad, "[[key]]\nname = \"eve\"\nsha256 = \"12ab\"\n").unwrap();
    refused(
        &["-keys", bad.to_str().unwrap()],
        "key #1 (\"eve\"): sha256 must be 64 hex digits",
    );
    let _ = std::fs::remove_file(bad);
}
