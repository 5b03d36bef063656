//! A Sabaki-like session against the real binary and the real network
//! (g170 from the shared data folder): every response checked. No timed
//! assertions: reads wait generously, so a loaded machine only makes the
//! test slower.

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
        Engine::start_with("maxVisits=50,numSearchThreads=1,logAllGTPCommunication=false")
    }

    /// The engine on `configs/gtp.toml` with these `-override-config` settings.
    fn start_with(overrides: &str) -> Engine {
        let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/gtp.toml");
        let config = config.to_string_lossy();
        Engine::launch(&["-config", &config, "-override-config", overrides])
    }

    /// The engine on the g170 net with these further arguments.
    fn launch(args: &[&str]) -> Engine {
        let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
        let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
        assert!(model.is_file(), "network missing: {}", model.display());
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
            .args(["gtp", "-model"])
            .arg(&model)
            // KataGo's arithmetic, which these answers are checked
            // against (the CPU's default, auto, may pick bf16 or int8).
            .args(["-override-config", "nnPrecision=fp32"])
            .args(args)
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
            .recv_timeout(Duration::from_secs(300))
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
    let version = e.ok(2, "version");
    assert!(
        version.ends_with("+g170-b6c96-s175395328-d26788732"),
        "{version}"
    );
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
    check_kata_line(&info);
    assert!(!info.contains("move E5 ") && !info.contains("move C3 "));
    e.send("12 play b G7");
    loop {
        let l = e.line();
        if l.is_empty() {
            break;
        }
        check_kata_line(&l);
    }
    assert_eq!(e.line(), "=12 ");
    assert_eq!(e.line(), "");

    let mv = e.ok(13, "genmove w");
    assert!(
        mv == "pass" || mv == "resign" || is_vertex(&mv, 9),
        "genmove answered {mv:?}"
    );
    assert!(
        !["E5", "C3", "G7"].contains(&mv.as_str()),
        "{mv} is occupied"
    );
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

    // A finished game is scored exactly by the rules (Tromp-Taylor: the
    // lone black stone owns the whole board).
    e.ok(20, "clear_board");
    e.ok(21, "play b E5");
    e.ok(22, "play w pass");
    e.ok(23, "play b pass");
    assert_eq!(e.ok(24, "final_score"), "B+73.5");
    assert_eq!(e.ok(25, "final_status_list dead"), "");
    assert_eq!(e.ok(26, "final_status_list alive"), "E5");
    e.ok(27, "quit");
    assert!(e.child.wait().unwrap().success());
}

/// An unfinished game's score: Black's wall on column E and White's on F
/// (Black 45 points, White 36) plus a lone, dead white stone at B5; komi
/// 6.5 gives B+2.5. The score comes from searches at several komis (the
/// komi where the game is even), as KataGo's `computeLead`; one search's
/// score estimate alone rounds to B+1.5 now and then. Three rounds with
/// the engine's random seeds.
#[test]
fn search_threads_default_to_one_per_core() {
    // configs/gtp.toml leaves numSearchThreads unset: the CPU gets one
    // search thread per core (at most 16).
    let mut e = Engine::start_with("maxVisits=50,logAllGTPCommunication=false");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let want = if engine::nn::device::CudaAvailability::probe().usable() {
        16
    } else {
        cores.clamp(1, 16)
    };
    assert_eq!(e.ok(1, "kata-get-param numSearchThreads"), want.to_string());
    // A config value still wins.
    e.ok(2, "kata-set-param numSearchThreads 3");
    assert_eq!(e.ok(3, "kata-get-param numSearchThreads"), "3");
}

#[test]
fn final_score_of_an_unfinished_game_is_the_even_komi_lead() {
    let mut e = Engine::start();
    e.ok(1, "boardsize 9");
    e.ok(2, "komi 6.5");
    let mut id = 3;
    for row in 1..=9 {
        e.ok(id, &format!("play b E{row}"));
        e.ok(id + 1, &format!("play w F{row}"));
        id += 2;
    }
    e.ok(id, "play w B5");
    for round in 0..3 {
        e.ok(100 + round, "clear_cache");
        assert_eq!(e.ok(110 + round, "final_score"), "B+2.5", "round {round}");
    }
    assert_eq!(e.ok(120, "final_status_list dead"), "B5");
    e.ok(121, "quit");
}

/// Whether `s` is a vertex of a `size` x `size` board (`A1`..`J9` on 9x9).
fn is_vertex(s: &str, size: usize) -> bool {
    let mut chars = s.chars();
    let Some(col) = chars.next() else {
        return false;
    };
    let cols: Vec<char> = "ABCDEFGHJKLMNOPQRST".chars().take(size).collect();
    let row: Option<usize> = chars.as_str().parse().ok();
    cols.contains(&col) && row.is_some_and(|r| (1..=size).contains(&r))
}

/// Checks one `kata-analyze` line: `info move V visits N ... pv V ...`
/// blocks, each with KataGo's keys and values in range.
fn check_kata_line(line: &str) {
    assert!(line.starts_with("info move "), "{line}");
    for block in line.split("info ").filter(|b| !b.trim().is_empty()) {
        let words: Vec<&str> = block.split_whitespace().collect();
        let pv_at = words.iter().position(|&w| w == "pv").expect("pv");
        assert!(pv_at + 1 < words.len(), "empty pv: {block}");
        assert!(pv_at % 2 == 0, "key/value pairs before pv: {block}");
        let value = |key: &str| -> f64 {
            let i = words[..pv_at]
                .iter()
                .position(|&w| w == key)
                .unwrap_or_else(|| panic!("{key} missing: {block}"));
            words[i + 1].parse().expect(key)
        };
        assert!(is_vertex(words[1], 9) || words[1] == "pass", "{block}");
        assert_eq!(words[pv_at + 1], words[1], "pv starts with the move");
        for key in ["winrate", "prior"] {
            assert!((0.0..=1.0).contains(&value(key)), "{key}: {block}");
        }
        assert!(value("visits") >= 0.0 && value("order") >= 0.0);
        assert!(value("scoreLead").abs() < 100.0, "{block}");
        for key in ["utility", "lcb", "scoreMean", "scoreStdev", "utilityLcb"] {
            value(key);
        }
    }
}

/// With no `-config`, the built-in `configs/gtp.toml` applies: its visit
/// limit bounds `genmove` even after a GUI's `time_settings 0 1 0` ("no
/// time limit"), which otherwise means a search that never ends.
#[test]
fn without_a_config_the_built_in_one_bounds_genmove() {
    let mut e = Engine::launch(&[]);
    assert_eq!(e.ok(1, "kata-get-param maxVisits"), "500");
    e.ok(2, "boardsize 9");
    e.ok(3, "clear_board");
    e.ok(4, "time_settings 0 1 0");
    let mv = e.ok(5, "genmove b");
    assert!((2..=3).contains(&mv.len()), "not a board move: {mv}");
}

/// Without a network and without a default one, `engine gtp` says how to
/// pass one and exits with status 2 (no panic, nothing on stdout).
#[test]
fn missing_network_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gtp", "-model", "/nonexistent/net.bin.gz"])
        .stdin(Stdio::null())
        .output()
        .expect("run engine");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/net.bin.gz"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `kata-debug-print-tc` prints each clock and the time plan exactly as
/// KataGo 1.17.2 does (its answers to the same commands with the same net,
/// `gtp_example.cfg`, lagBuffer 1, recorded below), on a 19x19 and a 9x9
/// board and in every kind of time control.
#[test]
fn debug_print_tc_answers_as_katago() {
    let mut e = Engine::start_with("maxVisits=50,numSearchThreads=1,lagBuffer=1.0");
    let both = |black: &str, white: &str| format!("Black {black}\nWhite {white}");
    let canadian_600 = "originalMainTime 600 originalNumPeriods 1 numStonesPerPeriod 10 perPeriodTime 60 mainTimeLeft 600 inOvertime 0 numPeriodsLeftIncludingCurrent 1 minRecMax 0 8.31982 126.742 rrec0 8.31982 rreclimit 8.31982 rreclimit2 8.31982";
    let steps: [(&str, Option<String>); 12] = [
        ("time_settings 300 30 5", None),
        ("kata-debug-print-tc", Some(both(
            "originalMainTime 300 originalNumPeriods 1 numStonesPerPeriod 5 perPeriodTime 30 mainTimeLeft 300 inOvertime 0 numPeriodsLeftIncludingCurrent 1 minRecMax 0 8.31982 66.5 rrec0 8.31982 rreclimit 8.31982 rreclimit2 8.31982",
            "originalMainTime 300 originalNumPeriods 1 numStonesPerPeriod 5 perPeriodTime 30 mainTimeLeft 300 inOvertime 0 numPeriodsLeftIncludingCurrent 1 minRecMax 0 8.31982 66.5 rrec0 8.31982 rreclimit 8.31982 rreclimit2 8.31982",
        ))),
        ("kgs-time_settings canadian 600 60 10", None),
        ("play b d4", None),
        ("time_left b 100 0", None),
        ("kata-debug-print-tc", Some(both(
            "originalMainTime 600 originalNumPeriods 1 numStonesPerPeriod 10 perPeriodTime 60 mainTimeLeft 100 inOvertime 0 numPeriodsLeftIncludingCurrent 1 minRecMax 0 8.31982 26.7419 rrec0 8.31982 rreclimit 8.31982 rreclimit2 8.31982",
            canadian_600,
        ))),
        ("kata-time_settings fischer-capped 100 5 200 -1", None),
        ("kata-debug-print-tc", Some(both(
            "originalMainTime 100 increment 5 mainTimeLimit 200 mainTimeLeft 100 inOvertime 0 minRecMax 0 4.66023 22.8 rrec0 4.66023 rreclimit 4.66023 rreclimit2 4.66023",
            "originalMainTime 100 increment 5 mainTimeLimit 200 mainTimeLeft 100 inOvertime 0 minRecMax 0 4.66023 22.8 rrec0 4.66023 rreclimit 4.66023 rreclimit2 4.66023",
        ))),
        ("kata-time_settings byoyomi 0 30 5", None),
        ("time_left w 25 3", None),
        ("kata-debug-print-tc", Some(both(
            "originalMainTime 0 originalNumPeriods 5 numStonesPerPeriod 1 perPeriodTime 30 mainTimeLeft 0 inOvertime 0 numPeriodsLeftIncludingCurrent 5 minRecMax 0 29 29 rrec0 29 rreclimit 29 rreclimit2 29",
            "originalMainTime 0 originalNumPeriods 5 numStonesPerPeriod 1 perPeriodTime 30 mainTimeLeft 0 inOvertime 1 numPeriodsLeftIncludingCurrent 3 numStonesLeftInPeriod 1 timeLeftInPeriod 25 minRecMax 24 24 24 rrec0 24 rreclimit 24 rreclimit2 24",
        ))),
        ("boardsize 9", None),
    ];
    for (i, (cmd, want)) in steps.iter().enumerate() {
        let got = e.ok(i as u32 + 1, cmd);
        if let Some(want) = want {
            assert_eq!(&got, want, "after {cmd}");
        }
    }
    e.ok(20, "kata-time_settings fischer 60 2");
    assert_eq!(
        e.ok(21, "kata-debug-print-tc"),
        both(
            "originalMainTime 60 increment 2 mainTimeLeft 60 inOvertime 0 minRecMax 0 2.50495 12.4 rrec0 2.50495 rreclimit 2.50495 rreclimit2 2.50495",
            "originalMainTime 60 increment 2 mainTimeLeft 60 inOvertime 0 minRecMax 0 2.50495 12.4 rrec0 2.50495 rreclimit 2.50495 rreclimit2 2.50495",
        )
    );
    e.ok(22, "quit");
}

/// `kata-get-models` lists the net as KataGo does: its keys, in its order,
/// the path as given, the file's internal name and version.
#[test]
fn get_models_lists_the_net_as_katago() {
    let mut e = Engine::start_with("maxVisits=50,numSearchThreads=1,nnMaxBatchSize=7");
    let text = e.ok(1, "kata-get-models");
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    let want = serde_json::json!([{
        "internalName": "g170-b6c96-s175395328-d26788732",
        "maxBatchSize": 7,
        "name": model.display().to_string(),
        "usesHumanSLProfile": false,
        "usingFP16": "auto",
        "version": 8,
    }]);
    assert_eq!(text, want.to_string());
    let keys: Vec<&str> = text
        .match_indices("\":")
        .map(|(i, _)| {
            let start = text[..i].rfind('"').unwrap() + 1;
            &text[start..i]
        })
        .collect();
    assert_eq!(
        keys,
        [
            "internalName",
            "maxBatchSize",
            "name",
            "usesHumanSLProfile",
            "usingFP16",
            "version"
        ],
        "KataGo's key order"
    );
    e.ok(2, "quit");
}

/// `place_free_handicap` lets the net choose, as KataGo's does (its raw
/// policy at temperature 0.25, black stones one after another): four
/// distinct stones on 19x19, each where a net puts corner stones (the 3rd
/// to 5th line), then White to move.
#[test]
fn place_free_handicap_is_chosen_by_the_net() {
    let mut e = Engine::start();
    e.ok(1, "boardsize 19");
    let answer = e.ok(2, "place_free_handicap 4");
    let stones: Vec<&str> = answer.split_whitespace().collect();
    assert_eq!(stones.len(), 4, "{answer}");
    let mut seen = stones.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 4, "distinct: {answer}");
    let cols = "ABCDEFGHJKLMNOPQRST";
    for s in &stones {
        let x = cols.find(&s[..1]).expect("a column letter");
        let y: usize = s[1..].parse::<usize>().expect("a row number") - 1;
        let line = x.min(18 - x).min(y).min(18 - y) + 1;
        assert!((3..=5).contains(&line), "{s} is on line {line}: {answer}");
    }
    // Stones were placed as handicap: White moves next.
    let mv = e.ok(3, "genmove w");
    assert!(is_vertex(&mv, 19) || mv == "pass", "{mv}");
    e.ok(4, "quit");
}

/// `kata-benchmark VISITS` searches 10 positions of the current board size
/// with the genmove settings and answers KataGo's result line; bad
/// arguments and rectangular boards get KataGo's errors.
#[test]
fn kata_benchmark_answers_the_result_line() {
    let mut e = Engine::start();
    e.ok(1, "boardsize 9");
    let line = e.ok(2, "kata-benchmark 8");
    assert!(
        line.starts_with("numSearchThreads =  1: 10 / 10 positions, visits/s = "),
        "{line}"
    );
    let number = |key: &str| -> f64 {
        let rest = &line[line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len()..];
        rest.split_whitespace()
            .next()
            .unwrap()
            .trim_start_matches('(')
            .parse()
            .unwrap()
    };
    // The seconds are printed to 0.1, too coarse to recover the visits.
    assert!(number("visits/s = ") > 0.0, "{line}");
    assert!(number("nnEvals/s = ") > 0.0, "{line}");
    assert!(number("avgBatchSize = ") >= 1.0, "{line}");
    let (ok, err) = e.ask(3, "kata-benchmark");
    assert!(!ok);
    assert_eq!(err, "Expected one argument for kata-benchmark but got ''");
    let (ok, err) = e.ask(4, "kata-benchmark lots");
    assert!(!ok);
    assert_eq!(err, "Could not parse number of visits: lots");
    e.ok(5, "rectangular_boardsize 9 13");
    let (ok, err) = e.ask(6, "kata-benchmark 8");
    assert!(!ok);
    assert_eq!(
        err,
        "Current board size is 9x13, no built-in benchmarks for rectangular boards"
    );
    e.ok(7, "quit");
}

/// KataGo's GTP has anti-mirror on for genmove and off for analysis by
/// default; `antiMirror` sets both until `genmoveAntiMirror` is given.
#[test]
fn anti_mirror_params_as_katago() {
    let mut e = Engine::start_with("maxVisits=10,logAllGTPCommunication=false");
    assert_eq!(e.ok(1, "kata-get-param genmoveAntiMirror"), "true");
    assert_eq!(e.ok(2, "kata-get-param antiMirror"), "false");
    let list = e.ok(3, "kata-list-params");
    let names: Vec<&str> = list.split(' ').collect();
    assert_eq!(names.iter().filter(|&&n| n == "antiMirror").count(), 1);
    assert!(names.contains(&"genmoveAntiMirror"));
    e.ok(4, "kata-set-param antiMirror false");
    assert_eq!(e.ok(5, "kata-get-param genmoveAntiMirror"), "false");
    e.ok(6, "kata-set-param genmoveAntiMirror true");
    e.ok(7, "kata-set-param antiMirror false");
    assert_eq!(e.ok(8, "kata-get-param genmoveAntiMirror"), "true");
    assert_eq!(e.ok(9, "kata-get-param antiMirror"), "false");
    // A config's antiMirror sets genmove's too; genmoveAntiMirror wins.
    let mut e = Engine::start_with("maxVisits=10,antiMirror=false");
    assert_eq!(e.ok(1, "kata-get-param genmoveAntiMirror"), "false");
    let mut e = Engine::start_with("maxVisits=10,antiMirror=true,genmoveAntiMirror=false");
    assert_eq!(e.ok(1, "kata-get-param genmoveAntiMirror"), "false");
    assert_eq!(e.ok(2, "kata-get-param antiMirror"), "true");
}

/// `(x, y)` of a GTP vertex on a 19x19 board (`y = 0` the top row).
fn vertex_xy(v: &str) -> Option<(usize, usize)> {
    let v = v.to_ascii_uppercase();
    let col = v.chars().next()?;
    let x = "ABCDEFGHJKLMNOPQRST".find(col)?;
    let row: usize = v[1..].parse().ok()?;
    Some((x, 19usize.checked_sub(row)?))
}

/// KataGo's own `avoidcorners` check, on our engine: with
/// `avoidSgfPattern*` naming a game whose moves are the 4-4, 3-4, 3-3 and
/// 4-5 points, the first move is none of them in any corner, while without
/// it the net's first move is one of them. The search settings are those
/// of KataGo's test (1,500 visits, `rootPolicyTemperature` 1.5): with all
/// the net's favourite moves penalised alike, a search needs the visits
/// and the flatter root policy to find the unpenalised ones.
#[test]
fn avoid_sgf_patterns_keep_the_engine_off_the_shapes_of_the_games() {
    let dir = std::env::temp_dir().join(format!("engine-avoid-sgf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sgf = dir.join("corners.sgf");
    std::fs::write(&sgf, "(;GM[1]FF[4]SZ[19];B[pd];W[pq];B[cq];W[de])").unwrap();
    let mut shapes = Vec::new();
    for (a, b) in [(3, 3), (2, 3), (2, 2), (3, 4)] {
        for (x, y) in [(a, b), (b, a)] {
            for (fx, fy) in [(x, y), (18 - x, y), (x, 18 - y), (18 - x, 18 - y)] {
                shapes.push((fx, fy));
            }
        }
    }
    let first_move = |extra: &str| {
        let mut e = Engine::start_with(&format!(
            "maxVisits=1500,numSearchThreads=1,logAllGTPCommunication=false,\
             rootSymmetryPruning=false,rootPolicyTemperature=1.5{extra}"
        ));
        e.ok(1, "boardsize 19");
        e.ok(2, "clear_board");
        let mv = e.ok(3, "genmove b");
        e.send("quit");
        let _ = e.child.wait();
        vertex_xy(&mv).unwrap_or_else(|| panic!("genmove answered {mv}"))
    };
    let plain = first_move("");
    assert!(
        shapes.contains(&plain),
        "without the table the net plays {plain:?}"
    );
    let avoiding = first_move(&format!(
        ",avoidSgfPatternUtility=0.3,avoidSgfPatternLambda=0.0,avoidSgfPatternDirs={}",
        sgf.display()
    ));
    assert!(
        !shapes.contains(&avoiding),
        "with the table the engine still plays {avoiding:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parses KataGo's `rawNNBrief` line `label: a b c ...` (numbers with
/// their unit suffix) into numbers.
fn brief_numbers(line: &str, label: &str) -> Vec<f64> {
    let rest = line
        .strip_prefix(label)
        .unwrap_or_else(|| panic!("{line:?} does not start with {label:?}"));
    rest.split_whitespace()
        .map(|x| x.trim_end_matches(['c', '%']).parse().unwrap())
        .collect()
}

/// `debug_moves` answers as KataGo 1.17.2 does: the board after the
/// branch, the tree of the last search down the branch (KataGo's
/// `printTree` layout) and the raw net's brief figures. KataGo's answers
/// to the same commands with the same net (`gtp_example.cfg`,
/// `maxVisits=50`) are recorded below where they do not depend on the
/// search: the boards exactly, the raw figures to their printed 0.01.
#[test]
fn debug_moves_answers_as_katago() {
    let mut e = Engine::start();
    for (i, cmd) in ["boardsize 9", "komi 7", "play b e5", "play w c5"]
        .iter()
        .enumerate()
    {
        e.ok(i as u32 + 1, cmd);
    }
    assert!(e.ok(5, "list_commands").lines().any(|l| l == "debug_moves"));
    // Before any search: the board alone.
    let board_only = e.ok(6, "debug_moves");
    assert_eq!(board_only.lines().count(), 11, "{board_only}");
    e.ok(7, "kata-search b");
    let katago_board_d3 = "MoveNum: 3 HASH: D285048495751971F41731516D5B0952
   A B C D E F G H J
 9 . . . . . . . . .
 8 . . . . . . . . .
 7 . . . . . . . . .
 6 . . . . . . . . .
 5 . . O2. X1. . . .
 4 . . . . . . . . .
 3 . . . X3. . . . .
 2 . . . . . . . . .
 1 . . . . . . . . .";
    let got = e.ok(8, "debug_moves d3 rawstats");
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[..11].join("\n"), katago_board_d3);
    // D3 was not searched: the root's line alone, with the search's visits.
    assert!(
        lines[11].starts_with(": T ") && lines[11].contains(" N      50  --  "),
        "{got}"
    );
    assert_eq!(lines.len(), 15, "{got}");
    let close = |got: Vec<f64>, want: &[f64]| {
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 0.011, "{got:?} vs KataGo's {want:?}");
        }
    };
    close(
        brief_numbers(lines[12], "Policy:"),
        &[18.54, 18.80, 16.95, 17.95, 18.24, 27.10, 13.96, 11.12],
    );
    close(
        brief_numbers(lines[13], "White winloss:"),
        &[2.94, 4.16, 10.88, 3.50, 11.99, 9.04, 3.97, 0.65],
    );
    close(
        brief_numbers(lines[14], "White lead:"),
        &[0.02, 0.04, 0.72, -0.04, 0.71, 0.30, 0.24, -0.41],
    );

    // No branch: the root, Black's header and one line per searched move,
    // whose visits with the root's own make the root's 50.
    let got = e.ok(9, "debug_moves rawstats");
    let lines: Vec<&str> = got.lines().collect();
    assert!(lines[0].starts_with("MoveNum: 2 HASH: 21172FF837E42CFA41ED49BC1713B5B8"));
    assert!(
        lines[11].starts_with(": T ") && lines[11].contains(" N      50  --  "),
        "{got}"
    );
    assert_eq!(lines[12], "---Black(^)---");
    let children = &lines[13..lines.len() - 3];
    assert!(!children.is_empty(), "{got}");
    let mut visits = 0;
    for line in children {
        let (name, rest) = line.split_once(" : ").unwrap_or_else(|| panic!("{line}"));
        assert_eq!(name.len(), 3, "{line}");
        for field in ["T ", "W ", "S ", "LCB ", "P ", "WF ", "PSV ", "N "] {
            assert!(rest.contains(field), "{field} missing: {line}");
        }
        let pv = rest.split("  --  ").nth(1).unwrap();
        assert!(pv.starts_with(name.trim()), "{line}");
        visits += rest
            .split(" N ")
            .nth(1)
            .unwrap()
            .split("--")
            .next()
            .unwrap()
            .trim()
            .parse::<i64>()
            .unwrap();
    }
    assert_eq!(visits + 1, 50, "{got}");
    assert_eq!(lines[lines.len() - 3], "Policy: ");
    close(
        brief_numbers(lines[lines.len() - 2], "White winloss:"),
        &[8.34, 8.34, 6.55, 6.55, 4.81, 4.81, 5.17, 5.17],
    );
    close(
        brief_numbers(lines[lines.len() - 1], "White lead:"),
        &[0.24, 0.24, -0.33, -0.33, -0.27, -0.27, -0.28, -0.28],
    );

    // An occupied point: no board, the root's line alone (as KataGo).
    let got = e.ok(10, "debug_moves e5");
    assert!(got.starts_with(": T ") && got.lines().count() == 1, "{got}");
    let (ok, msg) = e.ask(11, "debug_moves zz9");
    assert!(!ok && msg == "Invalid move sequence", "{msg}");

    // After genmove the tree is the chosen move's subtree.
    let mv = e.ok(12, "genmove b");
    let got = e.ok(13, "debug_moves");
    let lines: Vec<&str> = got.lines().collect();
    assert!(lines[0].starts_with("MoveNum: 3 "), "{got}");
    if mv != "pass" && mv != "resign" {
        assert!(lines[11].starts_with(": T "), "{got}");
        assert_eq!(lines[12], "---White(v)---", "{got}");
    }
}

/// The files in `folder` (the automatic avoid patterns' saves).
fn files_in(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(folder)
        .unwrap_or_else(|err| panic!("{}: {err}", folder.display()))
        .flatten()
        .map(|f| f.path())
        .collect()
}

/// KataGo's automatic avoid patterns (`autoAvoidRepeat*`): each genmove is
/// saved to the folder in KataGo's `_poses.txt` format when the next game
/// starts (a chunk of one here) and at `quit`, and the next game's search
/// is steered off the moves saved.
#[test]
fn auto_avoid_repeat_saves_genmoves_and_avoids_them_next_game() {
    let dir = std::env::temp_dir().join(format!("engine-gtp-auto-avoid-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let settings = format!(
        "maxVisits=50,numSearchThreads=1,autoAvoidRepeatDir={},autoAvoidRepeatUtility=1.0,autoAvoidRepeatLambda=1.0,autoAvoidRepeatMinTurnNumber=0,autoAvoidRepeatMaxTurnNumber=50,autoAvoidRepeatMaxPoses=1000,autoAvoidRepeatSaveChunkSize=1",
        dir.display()
    );
    let mut e = Engine::start_with(&settings);
    e.ok(1, "boardsize 9");
    e.ok(2, "komi 7");
    let first = e.ok(3, "genmove b");
    e.ok(4, "clear_board");
    // The first game's move, in KataGo's format, in the 9x9 folder.
    let folder = dir.join("9x9");
    let files = files_in(&folder);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].to_string_lossy().ends_with("_poses.txt"));
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains(&format!("\"hintLoc\":\"{first}\"")), "{text}");
    assert!(
        text.contains("\"initialTurnNumber\":0") && text.contains("\"nextPla\":\"B\""),
        "{text}"
    );
    // A full point of utility against it: the next game opens elsewhere.
    // Without the table the second game mostly repeats the first (E5,
    // sometimes F5 or one of its images, at 50 visits); with it, the
    // opening moves saved are off in every symmetry.
    let second = e.ok(5, "genmove b");
    let images = |v: &str| -> Vec<String> {
        let cols = "ABCDEFGHJ";
        let x = cols.find(&v[..1]).unwrap() as i32;
        let y = v[1..].parse::<i32>().unwrap() - 1;
        let mut out = Vec::new();
        for (a, b) in [(x, y), (y, x)] {
            for (a, b) in [(a, b), (8 - a, b), (a, 8 - b), (8 - a, 8 - b)] {
                out.push(format!("{}{}", &cols[a as usize..a as usize + 1], b + 1));
            }
        }
        out
    };
    assert!(!images(&first).contains(&second), "{first} then {second}");
    e.ok(6, "quit");
    let _ = e.child.wait();
    let count = std::fs::read_dir(&folder).unwrap().count();
    assert_eq!(count, 2, "quit saves the second game's move");
    let _ = std::fs::remove_dir_all(&dir);

    // Every setting must be given.
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gtp", "-model"])
        .arg(
            engine::shared_data_dir()
                .unwrap()
                .join("models/g170-b6c96-s175395328-d26788732.bin.gz"),
        )
        .args([
            "-override-config",
            &format!("autoAvoidRepeatDir={}", dir.display()),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(!child.wait().unwrap().success());
    assert!(
        err.contains("autoAvoidRepeatUtility was not specified"),
        "{err}"
    );
}

/// KataGo's `searchRandSeed` and `nnRandSeed`: with one search thread and
/// both fixed, a search repeats exactly (the net's random symmetries
/// included); another seed gives another search.
#[test]
fn rand_seeds_make_a_search_repeat() {
    let analysis = |seed: &str| {
        let mut e = Engine::start_with(&format!(
            "maxVisits=60,numSearchThreads=1,logAllGTPCommunication=false,\
             searchRandSeed={seed},nnRandSeed={seed}"
        ));
        e.ok(1, "boardsize 9");
        e.ok(2, "play b E5");
        e.ok(3, "play w C3");
        let mut out = String::new();
        // Cleared each time, so every search is fresh and draws symmetries.
        for (i, color) in ["b", "w", "b"].iter().enumerate() {
            let id = 10 + 2 * i as u32;
            e.ok(id, "clear_cache");
            let body = e.ok(
                id + 1,
                &format!("kata-search_analyze {color} interval 100000"),
            );
            out.push_str(&body);
        }
        out
    };
    let first = analysis("alpha");
    assert!(first.contains("info move"), "{first}");
    assert_eq!(first, analysis("alpha"));
    assert_ne!(first, analysis("beta"));
}

/// `kata-search_cancellable` finishes its move as `genmove` does, as
/// KataGo's: it resigns a lost game, its move is saved for automatic
/// avoid patterns, and it plays nothing; a new line cancels it.
#[test]
fn cancellable_search_finishes_its_move_as_genmove() {
    let dir = std::env::temp_dir().join(format!("engine-gtp-cancellable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let settings = format!(
        "maxVisits=30,numSearchThreads=1,logAllGTPCommunication=false,resignConsecTurns=1,\
         autoAvoidRepeatDir={},autoAvoidRepeatUtility=1.0,autoAvoidRepeatLambda=1.0,\
         autoAvoidRepeatMinTurnNumber=0,autoAvoidRepeatMaxTurnNumber=50,\
         autoAvoidRepeatMaxPoses=1000,autoAvoidRepeatSaveChunkSize=1",
        dir.display()
    );
    let mut e = Engine::start_with(&settings);
    e.ok(1, "boardsize 9");
    e.ok(2, "komi 7");
    let mv = e.ok(3, "kata-search_cancellable b");
    assert!(is_vertex(&mv, 9), "{mv}");
    // Nothing was played.
    assert!(!e.ok(4, "showboard").contains('X'));
    // The move is saved as a genmove's is, at the next new game.
    e.ok(5, "clear_board");
    let folder = dir.join("9x9");
    let files = files_in(&folder);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains(&format!("\"hintLoc\":\"{mv}\"")), "{text}");
    // A game Black cannot win (komi 100): both resign at once.
    e.ok(6, "komi 100");
    assert_eq!(e.ok(7, "kata-search_cancellable b"), "resign");
    assert_eq!(e.ok(8, "genmove b"), "resign");
    // The analysing variant answers `play resign` after its lines.
    e.send("9 kata-search_analyze_cancellable b interval 100000");
    let mut last = String::new();
    loop {
        let l = e.line();
        if l.is_empty() && !last.is_empty() {
            break;
        }
        last = l;
    }
    assert_eq!(last, "play resign");
    // A long search stops at the next line and answers `cancelled`.
    e.ok(10, "komi 7");
    e.ok(11, "kata-set-param maxVisits 100000000");
    e.send("12 kata-search_cancellable w");
    std::thread::sleep(Duration::from_millis(300));
    e.send("");
    assert_eq!(e.line(), "=12 cancelled");
    assert_eq!(e.line(), "");
    e.ok(13, "quit");
    let _ = e.child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
