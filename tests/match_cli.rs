//! `engine match` and `engine gatekeeper` end to end on tiny random nets
//! (`engine export -random-init b2c16`), 9x9, 8 visits, games cut at 40
//! moves: the
//! table and `match_summary.json` add up, every game's SGF parses with its
//! players and result, and the gatekeeper accepts the first net into an
//! empty accepted folder, then moves a second one into exactly one of
//! accepted/rejected, and exits with `-quit-if-no-nets-to-test`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use engine::game::sgf::parse_collection;
use engine::game::Player;
use engine::play::matches::Thinking;

fn engine() -> Command {
    Command::new(env!("CARGO_BIN_EXE_engine"))
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-match-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("engine runs");
    if !out.status.success() {
        panic!(
            "{cmd:?} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// A random b2c16 net `D/<name>.bin.gz`.
fn random_net(dir: &Path, name: &str, seed: u64) -> PathBuf {
    run(engine().args([
        "export",
        "-random-init",
        "b2c16",
        "-seed",
        &seed.to_string(),
        "-export-dir",
        dir.to_str().unwrap(),
        "-model-name",
        name,
    ]));
    let p = dir.join(format!("{name}.bin.gz"));
    assert!(p.is_file(), "{}", p.display());
    p
}

/// Search and game settings that keep random-net games short.
const FAST: &str = "maxVisits=8,maxMovesPerGame=40,nnRandomize=false,numGameThreads=2";

#[test]
fn match_table_summary_and_sgfs_add_up() {
    let dir = scratch("match");
    let a = random_net(&dir, "a", 1);
    let b = random_net(&dir, "b", 2);
    let sgfs = dir.join("sgfs");
    let out = run(engine().args([
        "match",
        "-bot",
        &format!("alpha={}", a.display()),
        "-bot",
        &format!("beta={},maxVisits=4", b.display()),
        "-games",
        "4",
        "-boardsize",
        "9",
        "-komi",
        "7",
        "-seed",
        "11",
        "-override-config",
        FAST,
        "-sgf-output-dir",
        sgfs.to_str().unwrap(),
    ]));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("alpha") && table.contains("beta"), "{table}");
    assert!(table.contains("alpha vs beta"), "{table}");

    let text = std::fs::read_to_string(sgfs.join("match_summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["games"], 4, "{v}");
    let bots = v["bots"].as_array().unwrap();
    assert_eq!(bots.len(), 2);
    for bot in bots {
        let n = |k: &str| bot[k].as_u64().unwrap();
        assert_eq!(n("games"), 4, "{bot}");
        assert_eq!(n("wins") + n("losses") + n("draws"), 4, "{bot}");
    }
    assert_eq!(bots[0]["wins"], bots[1]["losses"]);
    assert_eq!(bots[0]["draws"], bots[1]["draws"]);
    assert_eq!(bots[0]["elo"], 0.0);
    assert_eq!(bots[1]["max_visits"], 4);
    let pair = &v["pairs"][0];
    assert_eq!(pair["games"], 4);
    assert_eq!(pair["a_wins"], bots[0]["wins"]);
    assert!(v["sprt"].is_null());

    // Every game: an SGF with the bots' names, komi, rules and a result
    // that agrees with the summary; colours alternate over the games.
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let mut alpha_black = 0;
    let mut alpha_points = 0.0;
    for r in results {
        let file = sgfs.join(r["sgf"].as_str().unwrap());
        let text = std::fs::read_to_string(&file).unwrap();
        let trees = parse_collection(&text).unwrap();
        assert_eq!(trees.len(), 1);
        let rec = trees[0].record().unwrap();
        assert_eq!((rec.x_size, rec.y_size), (9, 9));
        assert_eq!(rec.komi, Some(7.0));
        assert!(rec.rules.is_some());
        let re = rec.result.clone().unwrap();
        assert_eq!(re, r["result"].as_str().unwrap());
        assert!(
            re.starts_with("B+") || re.starts_with("W+") || re == "0" || re == "Void",
            "{re}"
        );
        let (pb, pw) = (rec.player_black.unwrap(), rec.player_white.unwrap());
        assert_eq!(pb, r["black"].as_str().unwrap());
        assert_eq!(pw, r["white"].as_str().unwrap());
        assert_ne!(pb, pw);
        assert!(!rec.moves.is_empty() && rec.moves.len() <= 40);
        if pb == "alpha" {
            alpha_black += 1;
        }
        let alpha_won =
            (re.starts_with("B+") && pb == "alpha") || (re.starts_with("W+") && pw == "alpha");
        let draw = !re.starts_with("B+") && !re.starts_with("W+");
        alpha_points += if alpha_won {
            1.0
        } else if draw {
            0.5
        } else {
            0.0
        };
    }
    assert_eq!(alpha_black, 2, "colours alternate");
    let w = bots[0]["wins"].as_f64().unwrap() + 0.5 * bots[0]["draws"].as_f64().unwrap();
    assert_eq!(alpha_points, w);
    // The 4 games are 2 pairs (one opening each, colours swapped), whose
    // counts by alpha's points (0, 1/2, ... 2) hold the same points.
    let by_pairs: Vec<u64> = pair["game_pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(by_pairs.len(), 5, "{pair}");
    assert_eq!(by_pairs.iter().sum::<u64>(), 2, "{pair}");
    let pair_points: f64 = (0..5).map(|k| by_pairs[k] as f64 * k as f64 / 2.0).sum();
    assert_eq!(pair_points, alpha_points, "{pair}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-sprt` stops a lopsided match once the pairs of games decide it: the
/// project's net at 48 visits against itself at 1 visit, SPRT(0, 300).
#[test]
fn sprt_on_pairs_stops_a_lopsided_match() {
    let dir = scratch("sprt-stop");
    let net =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/engine-9x9-13x13-b4c32-grow304.bin.gz");
    let sgfs = dir.join("sgfs");
    let out = run(engine().args([
        "match",
        "-bot",
        &format!("strong={},maxVisits=48", net.display()),
        "-bot",
        &format!("weak={},maxVisits=1", net.display()),
        "-games",
        "200",
        "-boardsize",
        "9",
        "-komi",
        "7",
        "-seed",
        "5",
        "-game-threads",
        "2",
        "-sprt",
        "0,300",
        "-sgf-output-dir",
        sgfs.to_str().unwrap(),
    ]));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("on the pairs: LLR"), "{table}");
    assert!(table.contains("H1 accepted"), "{table}");
    let text = std::fs::read_to_string(sgfs.join("match_summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["stopped_early"], true, "{v}");
    let games = v["games"].as_u64().unwrap();
    assert!(games < 200, "{games}");
    let sprt = &v["sprt"];
    assert_eq!(sprt["statistic"], "pentanomial", "{sprt}");
    assert_eq!(sprt["decision"], "H1 accepted", "{sprt}");
    assert!(sprt["llr"].as_f64().unwrap() >= sprt["upper_bound"].as_f64().unwrap());
    // Every complete pair is counted, and only those: at most the two
    // games in flight at the stop are left out of a pair.
    let pairs: u64 = sprt["game_pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert!(
        2 * pairs <= games && games <= 2 * pairs + 2,
        "{pairs} pairs, {games} games"
    );
    // Each bot's speed beside its results: the strong bot adds up to 48
    // playouts a move, the weak one at most 1 (none where the tree it kept
    // already has its visit).
    assert!(
        table.contains("s/move") && table.contains("playouts/s"),
        "{table}"
    );
    let bot = |i: usize, k: &str| v["bots"][i][k].as_f64().unwrap();
    for i in 0..2 {
        assert!(
            bot(i, "searches") > 0.0 && bot(i, "search_seconds") > 0.0,
            "{v}"
        );
        assert!(bot(i, "seconds_per_move") > 0.0, "{v}");
    }
    let per_move = |i: usize| bot(i, "playouts") / bot(i, "searches");
    assert!(per_move(0) > 10.0 && per_move(0) <= 48.0, "{v}");
    assert!(per_move(1) <= 1.0, "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bots_own_precision_loads_the_net_again() {
    let dir = scratch("precision");
    // The project's net (this test needs no `engine export`, so it also
    // runs in the light build).
    let a =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/engine-9x9-13x13-b4c32-grow304.bin.gz");
    let play_pair = |first: &str, second: &str| {
        engine()
            .args([
                "match",
                "-bot",
                &format!("plain={}{first}", a.display()),
                "-bot",
                &format!("own={}{second}", a.display()),
                "-games",
                "2",
                "-boardsize",
                "9",
                "-override-config",
                FAST,
                "-sgf-output-dir",
                dir.join("sgfs").to_str().unwrap(),
            ])
            .output()
            .expect("engine runs")
    };
    let play = |second: &str| play_pair("", second);
    let loaded = |out: &Output| {
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains(": loaded "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // One net, one evaluator; with the second bot's own precision, two.
    let shared = play("");
    assert!(shared.status.success());
    assert_eq!(loaded(&shared).len(), 1, "{:?}", loaded(&shared));
    let own = play(",nnPrecision=fp32");
    assert!(
        own.status.success(),
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
    let lines = loaded(&own);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[1].contains("in fp32 (the bot's nnPrecision)"),
        "{lines:?}"
    );
    // Each bot with its own precision: the net's keys (`nnRandomize` of
    // FAST), read on each bot's copy of the config, are not called unused.
    let both = play_pair(",nnPrecision=fp32", ",nnPrecision=fp32");
    let err = String::from_utf8_lossy(&both.stderr);
    assert!(both.status.success(), "{err}");
    assert!(!err.contains("is not used"), "{err}");
    // A precision that is not one is refused before any game, naming the key.
    let bad = play(",nnPrecision=fp8");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("nnPrecision1") && err.contains("fp8"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stopped_match_goes_on_with_resume() {
    let dir = scratch("resume");
    let net =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/engine-9x9-13x13-b4c32-grow304.bin.gz");
    let sgfs = dir.join("sgfs");
    let play = |games: &str, komi: &str, resume: bool| {
        let mut cmd = engine();
        cmd.args([
            "match",
            "-bot",
            &format!("a={}", net.display()),
            "-bot",
            &format!("b={},maxVisits=4", net.display()),
            "-games",
            games,
            "-boardsize",
            "9",
            "-komi",
            komi,
            "-seed",
            "21",
            "-override-config",
            FAST,
            "-sgf-output-dir",
            sgfs.to_str().unwrap(),
        ]);
        if resume {
            cmd.arg("-resume");
        }
        cmd.output().expect("engine runs")
    };
    let ok = |out: Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    // The run's games by index, as (file name, bytes).
    let games = || {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&sgfs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sgf"))
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let summary = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(sgfs.join("match_summary.json")).unwrap())
            .unwrap()
    };

    // Resuming needs a run to go on with.
    let none = play("4", "7", true);
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("match_run.json"));

    ok(play("2", "7", false));
    let first = games();
    assert_eq!(first.len(), 2);
    assert!(first[0].0.ends_with("-000000.sgf") && first[1].0.ends_with("-000001.sgf"));

    // Going on to 5 games plays games 2-4 of the same schedule and keeps
    // the first two as they were.
    let log = ok(play("5", "7", true));
    assert!(log.contains("2 games already played"), "{log}");
    let five = games();
    assert_eq!(five.len(), 5);
    assert_eq!(&five[..2], &first[..]);
    let v = summary();
    assert_eq!(v["games"], 5, "{v}");
    let indices: Vec<u64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices.len(), 5);
    assert!((0..5).all(|g| indices.contains(&g)), "{indices:?}");
    let bots = v["bots"].as_array().unwrap();
    let n = |b: &serde_json::Value, k: &str| b[k].as_u64().unwrap();
    assert_eq!(
        n(&bots[0], "wins") + n(&bots[0], "losses") + n(&bots[0], "draws"),
        5
    );
    // The pairs of games count the resumed games with the new ones: games
    // 0-1 (read back) and 2-3; game 4's pair has no second game.
    let pairs: u64 = v["pairs"][0]["game_pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(pairs, 2, "{v}");
    // Colours still alternate game by game over the resumed schedule, and
    // each bot's searches are those its games' SGFs record, the resumed
    // games' included.
    let mut searches = [0u64; 2];
    let mut playouts = [0u64; 2];
    for (g, (_, bytes)) in five.iter().enumerate() {
        let rec = parse_collection(&String::from_utf8_lossy(bytes)).unwrap()[0]
            .record()
            .unwrap();
        let black = if g % 2 == 0 { "a" } else { "b" };
        assert_eq!(rec.player_black.as_deref(), Some(black), "game {g}");
        let comment = rec.game_comment.unwrap();
        for (side, bot) in [(Player::Black, g % 2), (Player::White, 1 - g % 2)] {
            let t = Thinking::from_comment(&comment, side).expect(&comment);
            assert!(t.searches > 0 && t.seconds > 0.0, "{comment}");
            searches[bot] += t.searches;
            playouts[bot] += t.playouts;
        }
    }
    for bot in 0..2 {
        assert_eq!(n(&bots[bot], "searches"), searches[bot], "{v}");
        assert_eq!(n(&bots[bot], "playouts"), playouts[bot], "{v}");
    }
    // b searches at most 4 visits a move; a at 8.
    assert!(playouts[1] <= 4 * searches[1], "{v}");
    assert!(playouts[0] > playouts[1], "{v}");

    // A game lost with a kill (its SGF absent) is played again, and only it.
    std::fs::remove_file(sgfs.join(&five[3].0)).unwrap();
    let log = ok(play("5", "7", true));
    assert!(log.contains("4 games already played"), "{log}");
    let again = games();
    assert_eq!(again.len(), 5);
    for g in [0, 1, 2, 4] {
        assert_eq!(again[g], five[g], "game {g} kept");
    }
    assert_eq!(again[3].0, five[3].0);

    // Other settings are refused, naming what differs; so is a total below
    // the games already played.
    let other = play("5", "6.5", true);
    assert_eq!(other.status.code(), Some(2));
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("komiMean: 7"), "{err}");
    let fewer = play("3", "7", true);
    assert!(!fewer.status.success());
    let err = String::from_utf8_lossy(&fewer.stderr);
    assert!(err.contains("beyond the match's 3 games"), "{err}");
    assert_eq!(games(), again, "a refused resume changes nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sprt_needs_two_bots() {
    let dir = scratch("sprt");
    let out = engine()
        .args([
            "match",
            "-bot",
            "a=x.bin.gz",
            "-bot",
            "b=y.bin.gz",
            "-bot",
            "c=z.bin.gz",
            "-sprt",
            "0,10",
            "-sgf-output-dir",
            dir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("two bots"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gatekeeper_accepts_first_then_moves_second_once() {
    let dir = scratch("gate");
    let nets = dir.join("nets");
    std::fs::create_dir_all(&nets).unwrap();
    let (t, a, r, s) = (
        dir.join("test"),
        dir.join("accepted"),
        dir.join("rejected"),
        dir.join("sgfs"),
    );
    let gate = || {
        let mut c = engine();
        c.args([
            "gatekeeper",
            "-test-models-dir",
            t.to_str().unwrap(),
            "-accepted-models-dir",
            a.to_str().unwrap(),
            "-rejected-models-dir",
            r.to_str().unwrap(),
            "-sgf-output-dir",
            s.to_str().unwrap(),
            "-quit-if-no-nets-to-test",
            "-override-config",
            &format!("{FAST},numGamesPerGating=2,bSizes=9,komiMean=7"),
        ]);
        c
    };
    let place = |net: &Path, name: &str| {
        std::fs::create_dir_all(t.join(name)).unwrap();
        std::fs::copy(net, t.join(name).join("model.bin.gz")).unwrap();
    };
    place(&random_net(&nets, "n1", 1), "net1");
    run(&mut gate());
    assert!(a.join("net1/model.bin.gz").is_file(), "first net accepted");
    assert!(!t.join("net1").exists());

    place(&random_net(&nets, "n2", 2), "net2");
    run(&mut gate());
    let in_a = a.join("net2/model.bin.gz").is_file();
    let in_r = r.join("net2/model.bin.gz").is_file();
    assert!(in_a ^ in_r, "net2 in exactly one of accepted/rejected");
    assert!(!t.join("net2").exists());
    let log = std::fs::read_to_string(s.join("gatekeeper_log.tsv")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert_eq!(lines[0], engine::play::matches::LOG_HEADER);
    let cols: Vec<&str> = lines[2].split('\t').collect();
    assert_eq!(cols[1], "net2");
    assert_eq!(cols[2], "net1");
    assert_eq!(cols[9], if in_a { "true" } else { "false" });
    // Games played agree with the win/loss/draw columns.
    let n = |i: usize| cols[i].parse::<u64>().unwrap();
    assert_eq!(n(3), n(4) + n(5) + n(6));
    assert!(n(3) >= 1 && n(3) <= 2);
    assert!(s.join("net2/match_summary.json").is_file());

    // Nothing left to test: exits at once.
    run(&mut gate());

    // A net that cannot be loaded is rejected unplayed ("unloadable") and
    // the gatekeeper goes on; temporary names are never taken for nets.
    std::fs::create_dir_all(t.join("net3")).unwrap();
    std::fs::write(t.join("net3/model.bin.gz"), b"\x1f\x8b not a net").unwrap();
    std::fs::create_dir_all(t.join("half.tmp")).unwrap();
    std::fs::write(t.join("half.tmp/model.bin.gz"), b"\x1f\x8b").unwrap();
    run(&mut gate());
    assert!(r.join("net3/model.bin.gz").is_file());
    assert!(
        t.join("half.tmp/model.bin.gz").is_file(),
        "not a net: left alone"
    );
    let log = std::fs::read_to_string(s.join("gatekeeper_log.tsv")).unwrap();
    let last: Vec<&str> = log.lines().last().unwrap().split('\t').collect();
    assert_eq!(
        (last[1], last[9], last[10]),
        ("net3", "false", "unloadable"),
        "{log}"
    );

    // A move cut short by a crash (decision logged, net still in the test
    // folder) is finished without a new gating.
    place(&random_net(&nets, "n4", 4), "net4");
    let mut text = log.clone();
    text.push_str("1\tnet4\tnet1\t2\t0\t2\t0\t0\t0.5\tfalse\tall games\n");
    std::fs::write(s.join("gatekeeper_log.tsv"), text).unwrap();
    let out = run(&mut gate());
    assert!(r.join("net4/model.bin.gz").is_file() && !t.join("net4").exists());
    assert!(!s.join("net4").exists(), "no games played");
    let log = std::fs::read_to_string(s.join("gatekeeper_log.tsv")).unwrap();
    assert_eq!(log.lines().count(), 5, "no second decision: {log}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("decided before a restart"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A candidate trained less than the newest accepted net is rejected
/// without a game ("older than accepted"), though it loads and could play.
#[test]
fn gatekeeper_rejects_an_older_candidate_unplayed() {
    let dir = scratch("gate-old");
    let nets = dir.join("nets");
    std::fs::create_dir_all(&nets).unwrap();
    let (t, a, r, s) = (
        dir.join("test"),
        dir.join("accepted"),
        dir.join("rejected"),
        dir.join("sgfs"),
    );
    let put = |folder: &Path, name: &str, seed: u64| {
        std::fs::create_dir_all(folder.join(name)).unwrap();
        let net = random_net(&nets, &format!("n{seed}"), seed);
        std::fs::copy(net, folder.join(name).join("model.bin.gz")).unwrap();
    };
    put(&a, "run-s2000-d20", 1);
    put(&t, "run-s1000-d10", 2);
    let out = run(engine().args([
        "gatekeeper",
        "-test-models-dir",
        t.to_str().unwrap(),
        "-accepted-models-dir",
        a.to_str().unwrap(),
        "-rejected-models-dir",
        r.to_str().unwrap(),
        "-sgf-output-dir",
        s.to_str().unwrap(),
        "-quit-if-no-nets-to-test",
        "-override-config",
        &format!("{FAST},numGamesPerGating=2,bSizes=9,komiMean=7"),
    ]));
    assert!(r.join("run-s1000-d10/model.bin.gz").is_file());
    assert!(!t.join("run-s1000-d10").exists());
    assert!(a.join("run-s2000-d20/model.bin.gz").is_file());
    assert!(!s.join("run-s1000-d10").exists(), "no games played");
    let log = std::fs::read_to_string(s.join("gatekeeper_log.tsv")).unwrap();
    let last: Vec<&str> = log.lines().last().unwrap().split('\t').collect();
    assert_eq!(
        (last[1], last[2], last[3], last[9], last[10]),
        (
            "run-s1000-d10",
            "run-s2000-d20",
            "0",
            "false",
            "older than accepted"
        ),
        "{log}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `-human-model`: a bot with `humanSLChosenMoveProp` 1 (its own keys,
/// suffixed with its index) opens its game as Black, on 19x19, with the
/// human net's most likely move for its profile (temperature 0, the
/// identity symmetry: `kata-raw-human-nn 0`'s top point) where the other
/// bot, the same main net alone, opens elsewhere; `humanSL*` keys without
/// `-human-model` stop the match before it starts, as in KataGo.
#[test]
fn a_bot_plays_the_human_nets_moves() {
    let dir = scratch("human");
    let net = random_net(&dir, "main", 3);
    let human = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/test-human-sl/b2c16-fson-mish-meta.bin.gz");
    let sgfs = dir.join("sgfs");
    let human_bot = format!(
        "human={},humanSLProfile=rank_5k,humanSLChosenMoveProp=1,\
         chosenMoveTemperature=0,chosenMoveTemperatureEarly=0",
        net.display()
    );
    let args = |with_human: bool| {
        let mut cmd = engine();
        cmd.args(["match", "-bot", &human_bot, "-bot"])
            .arg(format!("plain={}", net.display()))
            .args([
                "-games",
                "2",
                "-boardsize",
                "19",
                "-komi",
                "7",
                "-seed",
                "5",
            ])
            .args(["-override-config", &format!("{FAST},openingMoves=0")])
            .arg("-sgf-output-dir")
            .arg(&sgfs);
        if with_human {
            cmd.arg("-human-model").arg(&human);
        }
        cmd
    };
    let refused = args(false).output().unwrap();
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("Provided parameter humanSL")
            && err.contains("0 but no human model was specified"),
        "{err}"
    );
    run(&mut args(true));

    // The human net's top point on the empty board, for Black.
    let gtp = engine()
        .args(["gtp", "-model"])
        .arg(&net)
        .arg("-human-model")
        .arg(&human)
        .args(["-override-config", "humanSLProfile=rank_5k"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    gtp.stdin
        .as_ref()
        .unwrap()
        .write_all(b"boardsize 19\nkomi 7\nkata-raw-human-nn 0\nquit\n")
        .unwrap();
    let text = String::from_utf8(gtp.wait_with_output().unwrap().stdout).unwrap();
    let policy: Vec<f64> = text
        .split("policy\n")
        .nth(1)
        .unwrap()
        .split("policyPass")
        .next()
        .unwrap()
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(policy.len(), 361);
    let best = (0..361)
        .max_by(|&a, &b| policy[a].total_cmp(&policy[b]))
        .unwrap();

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sgfs.join("match_summary.json")).unwrap())
            .unwrap();
    let mut openings = Vec::new();
    for r in summary["results"].as_array().unwrap() {
        let text = std::fs::read_to_string(sgfs.join(r["sgf"].as_str().unwrap())).unwrap();
        let rec = parse_collection(&text).unwrap()[0].record().unwrap();
        let first = rec.moves[0].1.map(|(x, y)| y * 19 + x);
        openings.push((r["black"].as_str().unwrap().to_string(), first));
    }
    openings.sort();
    // The human bot opens with the human net's move, the plain one not.
    assert_eq!(
        openings,
        vec![
            ("human".into(), Some(best)),
            ("plain".into(), openings[1].1)
        ]
    );
    assert_ne!(
        openings[1].1,
        Some(best),
        "the main net alone plays the same"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
