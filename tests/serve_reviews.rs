//! `engine serve`'s whole-game reviews end to end (`POST /v1/reviews`,
//! `GET`/`DELETE /v1/reviews/{id}`): mostly on the stand-in search
//! (`-stub-search`: one visit per millisecond), which makes progress and
//! cancellation observable whatever the machine's speed; one review runs
//! on the project's small net to check its numbers are sane.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::FIRST_NET;

#[path = "common/serve_client.rs"]
mod serve_client;
use serve_client::{keys_file, Server, WAIT};

/// A 9x9 game of 12 moves (a white pass at move 3), with a variation
/// that must be ignored.
const SGF: &str = "(;GM[1]FF[4]SZ[9]KM[7]RU[Chinese]\n;B[ee];W[cc];B[gc];W[];B[cg]\
                   ;W[gg];B[dc];W[cd];B[ec];W[gf];B[fg](;W[fh])(;W[ff]))";

/// The moves of [`SGF`]'s main line, as the review names them.
const SGF_MOVES: [(&str, &str); 12] = [
    ("B", "E5"),
    ("W", "C7"),
    ("B", "G7"),
    ("W", "pass"),
    ("B", "C3"),
    ("W", "G3"),
    ("B", "D7"),
    ("W", "C6"),
    ("B", "E7"),
    ("W", "G4"),
    ("B", "F3"),
    ("W", "F2"),
];

/// A request's status, its `Location` (or `Retry-After`) header and its
/// JSON body.
fn call(
    method: &str,
    server: &Server,
    path: &str,
    secret: Option<&str>,
    body: Option<&Value>,
) -> (u16, Option<String>, Value) {
    let mut req = ureq::request(method, &server.url(path)).timeout(WAIT);
    if let Some(s) = secret {
        req = req.set("Authorization", &format!("Bearer {s}"));
    }
    let result = match body {
        Some(b) => req.send_string(&b.to_string()),
        None => req.call(),
    };
    let resp = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{e}"),
    };
    let status = resp.status();
    let location = resp
        .header("Location")
        .or(resp.header("Retry-After"))
        .map(str::to_string);
    let text = resp.into_string().unwrap();
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, location, value)
}

/// Starts a review; returns its id.
fn submit(server: &Server, secret: Option<&str>, body: &Value) -> String {
    let (status, location, v) = call("POST", server, "/v1/reviews", secret, Some(body));
    assert_eq!(status, 202, "{v}");
    let id = v["id"].as_str().unwrap().to_string();
    assert_eq!(
        location.as_deref(),
        Some(format!("/v1/reviews/{id}").as_str())
    );
    assert_eq!(v["status"], "queued");
    id
}

/// Polls a review until `pred` holds.
fn wait_review(
    server: &Server,
    secret: Option<&str>,
    id: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, _, v) = call("GET", server, &format!("/v1/reviews/{id}"), secret, None);
        assert_eq!(status, 200, "{v}");
        if pred(&v) {
            return v;
        }
        assert!(Instant::now() < deadline, "review stuck: {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The moves' `pointsLost`, by turn.
fn points_lost(review: &Value) -> Vec<f64> {
    review["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["pointsLost"].as_f64().unwrap())
        .collect()
}

/// `mistakes` are turns, largest `pointsLost` first.
fn assert_mistakes_ordered(review: &Value) {
    let lost = points_lost(review);
    let turns: Vec<usize> = review["mistakes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_u64().unwrap() as usize)
        .collect();
    let sizes: Vec<f64> = turns.iter().map(|&t| lost[t]).collect();
    assert!(
        sizes.windows(2).all(|w| w[0] >= w[1]),
        "{sizes:?}: {review}"
    );
    assert!(sizes.iter().all(|&s| s > 0.0), "{sizes:?}");
}

#[test]
fn a_fast_review_scans_every_move_then_goes_deeper_and_is_its_keys_only() {
    let keys = keys_file("reviews", "");
    let server = Server::stub(
        "numAnalysisThreads=2,reviewFastVisits=5,reviewDeepVisits=20,reviewDeepMistakes=3",
        &["-keys", keys.to_str().unwrap()],
    );
    let alice = Some("alice-secret");
    let id = submit(&server, alice, &json!({ "sgf": SGF }));
    let path = format!("/v1/reviews/{id}");

    // Another key, or none, learns nothing about it.
    let bob = Some("bob-secret");
    for method in ["GET", "DELETE"] {
        let (status, _, v) = call(method, &server, &path, bob, None);
        assert_eq!(status, 404, "{method}: {v}");
        assert_eq!(v["error"], "no such review");
        let (status, _, _) = call(method, &server, &path, None, None);
        assert_eq!(status, 401);
    }
    let (status, _, _) = call("GET", &server, "/v1/reviews/nonesuch", alice, None);
    assert_eq!(status, 404);

    let review = wait_review(&server, alice, &id, |v| v["status"] == "done");
    assert_eq!(review["mode"], "fast");
    assert_eq!(review["visits"], json!({ "scan": 5, "deep": 20 }));
    let moves = review["moves"].as_array().unwrap();
    let seen: Vec<(usize, &str, &str)> = moves
        .iter()
        .map(|m| {
            (
                m["turn"].as_u64().unwrap() as usize,
                m["player"].as_str().unwrap(),
                m["move"].as_str().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(usize, &str, &str)> = SGF_MOVES
        .iter()
        .enumerate()
        .map(|(t, &(p, m))| (t, p, m))
        .collect();
    assert_eq!(seen, expected, "{review}");
    for m in moves {
        assert!(m["bestMove"].is_string(), "{m}");
        for field in ["winrate", "scoreLead", "pointsLost", "winrateLost"] {
            assert!(m[field].is_number(), "{field}: {m}");
        }
    }
    // 13 positions scanned, then before and after the 3 largest mistakes
    // again (the stub's values tie: turns 0, 1 and 2, positions 0 to 3).
    assert_eq!(review["progress"], json!({ "done": 17, "total": 17 }));
    assert_eq!(review["pass"], 2);
    let visits: Vec<u64> = moves
        .iter()
        .map(|m| m["visits"].as_u64().unwrap())
        .collect();
    assert_eq!(visits[..4], [20, 20, 20, 20], "{visits:?}");
    assert!(visits[4..].iter().all(|&v| v == 5), "{visits:?}");
    assert_mistakes_ordered(&review);
    assert_eq!(server.metric("engine_serve_reviews{status=\"done\"}"), 1.0);
    assert_eq!(
        server.metric("engine_serve_queries_in_flight{key=\"alice\"}"),
        0.0
    );

    // A finished review is forgotten by DELETE.
    let (status, _, v) = call("DELETE", &server, &path, alice, None);
    assert_eq!((status, v["status"].as_str()), (200, Some("done")));
    let (status, _, _) = call("GET", &server, &path, alice, None);
    assert_eq!(status, 404);
}

#[test]
fn delete_cancels_a_running_review_and_stops_its_searches() {
    let server = Server::stub(
        "numAnalysisThreads=1,reviewFastVisits=300,reviewMaxActivePerKey=1,reviewTtlSeconds=2",
        &[],
    );
    let moves: Vec<Value> = SGF_MOVES.iter().map(|(p, m)| json!([p, m])).collect();
    let body = json!({
        "moves": moves, "boardXSize": 9, "boardYSize": 9, "komi": 7.5,
        "rules": "tromp-taylor", "mode": "full", "visits": 300,
    });
    let id = submit(&server, None, &body);
    // One review at a time for this key: the next waits.
    let (status, retry, v) = call("POST", &server, "/v1/reviews", None, Some(&body));
    assert_eq!((status, retry.as_deref()), (429, Some("1")), "{v}");
    assert!(v["error"]
        .as_str()
        .unwrap()
        .contains("reviewMaxActivePerKey"));

    let running = wait_review(&server, None, &id, |v| v["status"] == "running");
    assert_eq!(running["mode"], "full");
    assert!(
        running["progress"]["done"].as_u64().unwrap() < 13,
        "{running}"
    );
    server.wait_metric("engine_serve_searches_running", |v| v == 1.0);

    let (status, _, v) = call("DELETE", &server, &format!("/v1/reviews/{id}"), None, None);
    assert_eq!(
        (status, v["status"].as_str()),
        (200, Some("cancelled")),
        "{v}"
    );
    server.wait_metric("engine_serve_searches_running", |v| v == 0.0);
    server.wait_metric("engine_serve_queue_depth{key=\"anonymous\"}", |v| v == 0.0);
    server.wait_metric("engine_serve_queries_in_flight{key=\"anonymous\"}", |v| {
        v == 0.0
    });
    let searches = server.metric("engine_serve_searches_total");
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(server.metric("engine_serve_searches_total"), searches);
    let after = wait_review(&server, None, &id, |_| true);
    assert_eq!(after["status"], "cancelled");
    assert!(after["progress"]["done"].as_u64().unwrap() < 13, "{after}");
    assert_eq!(
        server.metric("engine_serve_reviews{status=\"cancelled\"}"),
        1.0
    );
    // The key's place is free again.
    let next = submit(&server, None, &body);
    let (status, _, _) = call(
        "DELETE",
        &server,
        &format!("/v1/reviews/{next}"),
        None,
        None,
    );
    assert_eq!(status, 200);
    // Finished reviews are forgotten after reviewTtlSeconds.
    std::thread::sleep(Duration::from_millis(2100));
    for id in [id, next] {
        let (status, _, _) = call("GET", &server, &format!("/v1/reviews/{id}"), None, None);
        assert_eq!(status, 404);
    }
    assert_eq!(
        server.metric("engine_serve_reviews{status=\"cancelled\"}"),
        0.0
    );
}

#[test]
fn bad_reviews_are_refused_with_a_json_error() {
    let keys = keys_file("reviews-bad", "maxVisits = 50");
    let server = Server::stub(
        "numAnalysisThreads=1,reviewMaxVisits=100,reviewMaxStored=1,maxRequestBytes=4000",
        &["-keys", keys.to_str().unwrap()],
    );
    let alice = Some("alice-secret");
    let post = |secret: Option<&str>, body: Value| {
        call("POST", &server, "/v1/reviews", secret, Some(&body))
    };
    let (status, _, v) = post(None, json!({ "sgf": SGF }));
    assert_eq!(status, 401, "{v}");
    let (status, _, v) = post(Some("wrong"), json!({ "sgf": SGF }));
    assert_eq!(status, 401, "{v}");

    let cases = [
        (json!({ "sgf": "(;GM[1]SZ[9];B[ee" }), "sgf: "),
        (json!({ "sgf": "(;GM[1]SZ[9];B[zz])" }), "sgf: "),
        (json!({ "sgf": "no game here" }), "sgf: "),
        (json!({ "sgf": "(;GM[1]SZ[9])" }), "no moves"),
        (json!({ "sgf": SGF, "moves": [] }), "not both"),
        (json!({ "sgf": SGF, "visits": 10 }), "mode \"full\""),
        (json!({ "sgf": SGF, "mode": "slow" }), "unknown variant"),
        (json!({ "sgf": SGF, "colour": 1 }), "unknown field"),
        (json!({}), "give sgf"),
        (
            json!({ "moves": [["B", "E5"], ["W", "E5"]], "boardXSize": 9, "boardYSize": 9, "rules": "chinese" }),
            "Illegal move",
        ),
        (
            json!({ "moves": [["B", "Z99"]], "boardXSize": 9, "boardYSize": 9, "rules": "chinese" }),
            "Could not parse board location",
        ),
    ];
    for (body, expected) in cases {
        let (status, _, v) = post(alice, body.clone());
        assert_eq!(status, 400, "{body}: {v}");
        let error = v["error"].as_str().unwrap_or_default();
        assert!(error.contains(expected), "{body}: {v}");
    }
    let (status, _, v) = call("POST", &server, "/v1/reviews", alice, None);
    assert_eq!(status, 400, "{v}");
    assert_eq!(
        server
            .metric("engine_serve_requests_total{key=\"alice\",endpoint=\"reviews\",code=\"400\"}"),
        12.0
    );
    // A body that is not JSON, and one over maxRequestBytes (4000 here,
    // small enough that the client has sent it all before the answer):
    // JSON errors too.
    let raw = |body: &str| {
        let resp = match ureq::post(&server.url("/v1/reviews"))
            .timeout(WAIT)
            .set("Authorization", "Bearer alice-secret")
            .send_string(body)
        {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{e}"),
        };
        let status = resp.status();
        let v: Value = serde_json::from_str(&resp.into_string().unwrap()).unwrap();
        (status, v)
    };
    let (status, v) = raw("{\"sgf\": ");
    assert_eq!(status, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("bad review request"),
        "{v}"
    );
    let (status, v) = raw(&format!("{{\"sgf\": \"{}\"}}", "x".repeat(6000)));
    assert_eq!(status, 413, "{v}");
    assert!(v["error"].is_string(), "{v}");

    // Full mode's visits are capped by the key's maxVisits.
    let id = submit(
        &server,
        alice,
        &json!({ "sgf": SGF, "mode": "full", "visits": 1000 }),
    );
    let done = wait_review(&server, alice, &id, |v| v["status"] == "done");
    assert_eq!(done["visits"], json!({ "scan": 50 }));
    assert!(done["moves"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["visits"] == 50));
    // The server holds one review at most: the next waits until the
    // finished one is forgotten.
    let (status, retry, v) = post(alice, json!({ "sgf": SGF }));
    assert_eq!((status, retry.as_deref()), (503, Some("1")), "{v}");
    assert!(v["error"].as_str().unwrap().contains("reviewMaxStored"));
    let (status, _, _) = call("DELETE", &server, &format!("/v1/reviews/{id}"), alice, None);
    assert_eq!(status, 200);
    submit(&server, alice, &json!({ "sgf": SGF }));
}

#[test]
fn a_review_on_the_small_net_gives_sane_numbers() {
    let server = Server::start(&[
        "-model",
        FIRST_NET,
        "-config",
        "configs/serve.toml",
        "-override-config",
        "numAnalysisThreads=2,reviewFastVisits=16,reviewDeepVisits=64,reviewDeepMistakes=3",
    ]);
    let started = Instant::now();
    let id = submit(&server, None, &json!({ "sgf": SGF }));
    let review = wait_review(&server, None, &id, |v| v["status"] == "done");
    eprintln!("review on {FIRST_NET} in {:?}: {review}", started.elapsed());
    let moves = review["moves"].as_array().unwrap();
    assert_eq!(moves.len(), SGF_MOVES.len());
    for m in moves {
        let wr = m["winrate"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&wr), "{m}");
        let lead = m["scoreLead"].as_f64().unwrap();
        assert!(lead.abs() <= 81.0, "{m}");
        // A move can look better than the engine's choice by search noise
        // at these visits, never by much.
        assert!(m["pointsLost"].as_f64().unwrap() >= -3.0, "{m}");
        assert!(m["winrateLost"].as_f64().unwrap().abs() <= 1.0, "{m}");
    }
    assert_mistakes_ordered(&review);
    // White's pass in the opening is a clear mistake.
    let lost = points_lost(&review);
    assert!(lost[3] > 2.0, "{lost:?}");
    assert!(
        review["mistakes"].as_array().unwrap().contains(&json!(3)),
        "{review}"
    );
}

/// An id that is not UTF-8 once percent-decoded (`%FF`) is no review's:
/// 401 without a key, else 404, both with a JSON body (axum's own answer
/// was a plain-text 400 before the key was even checked).
#[test]
fn an_id_that_is_not_utf8_is_no_review() {
    let keys = keys_file("reviews-utf8", "");
    let server = Server::stub("numAnalysisThreads=1", &["-keys", keys.to_str().unwrap()]);
    for method in ["GET", "DELETE"] {
        let (status, _, v) = call(method, &server, "/v1/reviews/%FF", None, None);
        assert_eq!(status, 401, "{method}: {v}");
        let (status, _, v) = call(
            method,
            &server,
            "/v1/reviews/%FF%FE",
            Some("alice-secret"),
            None,
        );
        assert_eq!(status, 404, "{method}: {v}");
        assert_eq!(v["error"], "no such review", "{method}");
    }
}
