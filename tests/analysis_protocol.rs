//! `engine analysis` end to end: the real binary, driven over stdin/stdout
//! with KataGo's JSON protocol. The search behind it is the stand-in
//! (`-stub-search`), so these tests check the protocol layer (parsing,
//! errors, warnings, actions, queueing, terminate, shutdown), not analysis
//! quality.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(20);

struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Engine {
    fn start(extra: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
            .arg("analysis")
            .arg("-stub-search")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start engine");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                assert!(v.is_object(), "stdout line is not an object: {line}");
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Engine {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn send_json(&mut self, v: Value) {
        self.send(&v.to_string());
    }

    /// Waits for a response matching `pred` (remembering everything seen).
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(v) = self.seen.iter().find(|v| pred(v)) {
            return v.clone();
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if pred(&v) {
                        return v;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("timed out waiting for {what}; saw {:?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("engine closed stdout before {what}; saw {:?}", self.seen)
                }
            }
        }
    }

    fn final_for(&mut self, id: &str, turn: u64) -> Value {
        self.wait_for(&format!("final response {id}/{turn}"), |v| {
            v["id"] == id && v["turnNumber"] == turn && v["isDuringSearch"] == false
        })
    }

    fn error_for(&mut self, id: &str) -> Value {
        self.wait_for(&format!("error for {id}"), |v| {
            v["id"] == id && v.get("error").is_some()
        })
    }

    /// Closes stdin, collects the rest of stdout, returns the exit status.
    fn close(mut self) -> (i32, Vec<Value>) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                while let Ok(v) = self.lines.recv_timeout(Duration::from_millis(500)) {
                    self.seen.push(v);
                }
                return (status.code().unwrap_or(-1), std::mem::take(&mut self.seen));
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("engine did not exit after stdin closed");
            }
            while let Ok(v) = self.lines.try_recv() {
                self.seen.push(v);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn query(id: &str, size: u64, moves: Value) -> Value {
    json!({"id": id, "moves": moves, "rules": "tromp-taylor", "komi": 7.5,
           "boardXSize": size, "boardYSize": size})
}

#[test]
fn analyses_requested_turns_with_requested_fields() {
    let mut e = Engine::start(&[]);
    let mut q = query("a", 9, json!([["B", "E5"], ["W", "C3"]]));
    q["analyzeTurns"] = json!([0, 2]);
    q["maxVisits"] = json!(5);
    q["includePolicy"] = json!(true);
    q["includeOwnership"] = json!(true);
    q["includePVVisits"] = json!(true);
    e.send_json(q);
    let r0 = e.final_for("a", 0);
    assert_eq!(r0["rootInfo"]["currentPlayer"], "B");
    assert_eq!(r0["policy"].as_array().unwrap().len(), 82);
    assert_eq!(r0["ownership"].as_array().unwrap().len(), 81);
    let r2 = e.final_for("a", 2);
    assert_eq!(r2["rootInfo"]["currentPlayer"], "B");
    assert_eq!(r2["rootInfo"]["visits"], 5);
    // E5 is occupied at turn 2: policy -1 there (row 5 from the top is index 4).
    assert_eq!(r2["policy"][4 * 9 + 4], -1.0);
    let mi = &r2["moveInfos"][0];
    assert_eq!(mi["order"], 0);
    assert_eq!(
        mi["pvVisits"].as_array().unwrap().len(),
        mi["pv"].as_array().unwrap().len()
    );
    assert!(r2.get("ownershipStdev").is_none());
    let (code, all) = e.close();
    assert_eq!(code, 0);
    assert!(!all.iter().any(|v| v["id"] == "a" && v["turnNumber"] == 1));
}

#[test]
fn general_and_field_errors() {
    let mut e = Engine::start(&[]);
    e.send("this is not json {");
    let r = e.wait_for("non-json error", |v| v.get("error").is_some());
    assert!(r.get("id").is_none() && r.get("field").is_none());
    e.send("[1,2,3]");
    e.send(r#"{"moves":[]}"#);

    let cases = [
        (query("coord", 19, json!([["B", "Z99"]])), "moves"),
        (
            query("occupied", 19, json!([["B", "D4"], ["W", "D4"]])),
            "moves",
        ),
        (
            json!({"id":"size","moves":[],"rules":"chinese","boardXSize":40,"boardYSize":19}),
            "boardXSize",
        ),
        (
            json!({"id":"norules","moves":[],"boardXSize":9,"boardYSize":9}),
            "rules",
        ),
        (
            json!({"id":"komi","moves":[],"rules":"chinese","komi":7.3,"boardXSize":9,"boardYSize":9}),
            "komi",
        ),
        (
            json!({"id":"turns","moves":[],"rules":"chinese","analyzeTurns":[1],"boardXSize":9,"boardYSize":9}),
            "analyzeTurns",
        ),
        (json!({"id":"term","action":"terminate"}), "terminateId"),
        // Unlike KataGo, an unknown action's error carries the id.
        (json!({"id":"x","action":"bogus"}), "action"),
    ];
    for (q, _) in &cases {
        e.send_json(q.clone());
    }
    for (q, field) in &cases {
        let id = q["id"].as_str().unwrap();
        let r = e.error_for(id);
        assert_eq!(r["field"], *field, "{id}: {r}");
        assert!(r["error"].as_str().is_some_and(|s| !s.is_empty()));
    }
    let (code, all) = e.close();
    assert_eq!(code, 0);
    let general = all
        .iter()
        .filter(|v| v.get("error").is_some() && v.get("id").is_none())
        .count();
    assert_eq!(general, 3, "{all:?}");
    assert!(
        !all.iter().any(|v| v.get("turnNumber").is_some()),
        "analysis after an error"
    );
}

#[test]
fn warnings_do_not_stop_the_query() {
    let mut e = Engine::start(&[]);
    let mut q = query("w", 9, json!([]));
    q["maxVisits"] = json!(3);
    q["rootNumSymmetriesToSample"] = json!(2);
    q["overrideSettings"] = json!({"notARealParam": 1, "wideRootNoise": 0.0});
    e.send_json(q);
    let w1 = e.wait_for("field warning", |v| {
        v["field"] == "rootNumSymmetriesToSample"
    });
    assert_eq!(w1["id"], "w");
    assert!(w1["warning"]
        .as_str()
        .unwrap()
        .contains("Unexpected or unused field"));
    let w2 = e.wait_for("override warning", |v| v["field"] == "overrideSettings");
    assert_eq!(w2["warning"], "Unknown config params: notARealParam");
    e.final_for("w", 0);

    // As KataGo: a profile for nets that read none is an error.
    let mut q = query("human", 9, json!([]));
    q["overrideSettings"] = json!({"humanSLProfile": "rank_3d"});
    e.send_json(q);
    let r = e.error_for("human");
    assert_eq!(r["field"], "overrideSettings");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("humanSLProfile is specified but the model(s) don't use it"),
        "{r}"
    );
}

#[test]
fn actions_echo_their_query() {
    let mut e = Engine::start(&[]);
    for (id, action) in [
        ("v", "query_version"),
        ("m", "query_models"),
        ("c", "clear_cache"),
    ] {
        e.send_json(json!({"id": id, "action": action}));
    }
    e.send_json(json!({"id":"t","action":"terminate","terminateId":"nothing","turnNumbers":[3]}));
    e.send_json(json!({"id":"ta","action":"terminate_all"}));
    let v = e.wait_for("version", |v| v["id"] == "v");
    assert!(v["version"].is_string() && v["git_hash"].is_string());
    let m = e.wait_for("models", |v| v["id"] == "m");
    assert_eq!(m["models"][0]["version"], 8);
    assert_eq!(
        e.wait_for("clear", |v| v["id"] == "c"),
        json!({"id":"c","action":"clear_cache"})
    );
    assert_eq!(
        e.wait_for("terminate", |v| v["id"] == "t"),
        json!({"id":"t","action":"terminate","terminateId":"nothing","turnNumbers":[3]})
    );
    assert_eq!(
        e.wait_for("terminate_all", |v| v["id"] == "ta"),
        json!({"id":"ta","action":"terminate_all"})
    );
}

#[test]
fn terminate_stops_running_and_queued_searches() {
    let mut e = Engine::start(&["-analysis-threads", "1"]);
    let mut q = query("long", 9, json!([["B", "E5"]]));
    q["analyzeTurns"] = json!([0, 1]);
    q["maxVisits"] = json!(10_000_000);
    // A report during the search shows that turn 0 is running and has
    // visits; a fixed sleep raced with a slow start on a loaded machine.
    q["reportDuringSearchEvery"] = json!(0.05);
    e.send_json(q);
    let report = e.wait_for("turn 0 searching", |v| {
        v["id"] == "long" && v["isDuringSearch"] == true
    });
    assert_eq!(report["turnNumber"], 0, "one thread: turn 0 runs first");
    // Turn 0 runs, turn 1 waits: terminate only the waiting one first.
    e.send_json(json!({"id":"t1","action":"terminate","terminateId":"long","turnNumbers":[1]}));
    let r1 = e.final_for("long", 1);
    assert_eq!(
        r1,
        json!({"id":"long","isDuringSearch":false,"noResults":true,"turnNumber":1})
    );
    e.send_json(json!({"id":"t0","action":"terminate_all"}));
    let r0 = e.final_for("long", 0);
    let visits = r0["rootInfo"]["visits"].as_u64();
    assert!(
        visits.is_some_and(|v| v > 0),
        "terminated turn 0 must report what it searched: {r0}"
    );
    let (code, all) = e.close();
    assert_eq!(code, 0);
    let finals = all
        .iter()
        .filter(|v| v["id"] == "long" && v["isDuringSearch"] == false)
        .count();
    assert_eq!(finals, 2);
}

#[test]
fn reports_during_search_then_one_final() {
    let mut e = Engine::start(&[]);
    let mut q = query("d", 9, json!([]));
    q["maxVisits"] = json!(10_000_000);
    q["reportDuringSearchEvery"] = json!(0.05);
    e.send_json(q);
    for _ in 0..3 {
        let n = e.seen.len();
        e.wait_for("during-search report", |v| {
            v["id"] == "d" && v["isDuringSearch"] == true
        });
        // Wait for a new one next time round.
        e.seen.truncate(n);
    }
    e.send_json(json!({"id":"stop","action":"terminate","terminateId":"d"}));
    e.final_for("d", 0);
    let (_, all) = e.close();
    let d: Vec<&Value> = all.iter().filter(|v| v["id"] == "d").collect();
    assert_eq!(d.last().unwrap()["isDuringSearch"], false);
    assert_eq!(d.iter().filter(|v| v["isDuringSearch"] == false).count(), 1);
}

#[test]
fn higher_priority_runs_first() {
    let mut e = Engine::start(&["-analysis-threads", "1"]);
    let mut blocker = query("block", 9, json!([]));
    blocker["maxVisits"] = json!(10_000_000);
    e.send_json(blocker);
    std::thread::sleep(Duration::from_millis(200));
    let mut low = query("low", 9, json!([]));
    low["maxVisits"] = json!(1);
    low["priority"] = json!(-10);
    let mut high = query("high", 9, json!([]));
    high["maxVisits"] = json!(1);
    high["priority"] = json!(10);
    e.send_json(low);
    e.send_json(high);
    e.send_json(json!({"id":"t","action":"terminate","terminateId":"block"}));
    e.final_for("low", 0);
    let order: Vec<String> = e
        .seen
        .iter()
        .filter(|v| v["isDuringSearch"] == false)
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order, ["block", "high", "low"]);
}

#[test]
fn stdin_close_finishes_queued_work() {
    let mut e = Engine::start(&[]);
    let mut q = query("c", 9, json!([["B", "E5"], ["W", "pass"]]));
    q["analyzeTurns"] = json!([0, 1, 2]);
    q["maxVisits"] = json!(20);
    e.send_json(q);
    let (code, all) = e.close();
    assert_eq!(code, 0);
    let turns: Vec<u64> = all
        .iter()
        .filter(|v| v["id"] == "c" && v["isDuringSearch"] == false)
        .map(|v| v["turnNumber"].as_u64().unwrap())
        .collect();
    assert_eq!(turns.len(), 3, "{all:?}");
    let after_pass = all
        .iter()
        .find(|v| v["id"] == "c" && v["turnNumber"] == 2)
        .unwrap();
    assert_eq!(after_pass["rootInfo"]["currentPlayer"], "B");
}

#[test]
fn quit_without_waiting_drops_work_and_exits() {
    let mut e = Engine::start(&["-quit-without-waiting"]);
    let mut q = query("q", 9, json!([]));
    q["maxVisits"] = json!(10_000_000);
    e.send_json(q);
    std::thread::sleep(Duration::from_millis(100));
    let (code, _) = e.close();
    assert_eq!(code, 0);
}
