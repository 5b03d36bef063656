//! Big boards at run time (issue 71): games on 37x37 and 29x19 played to
//! the end and scored against an independent count, an SGF round trip at
//! SZ[37], GTP `boardsize 37` + `genmove` and an analysis of a 31x31
//! position with KataGo's g170 net, an `engine match` on 25x25 whose games
//! replay legally, and sizes above 37 refused clearly.

#[path = "common/engine_cli.rs"]
mod engine_cli;
#[path = "common/gtp.rs"]
mod gtp;

use std::collections::VecDeque;

use engine::game::sgf::{parse_collection, write_sgf, GameRecord};
use engine::game::{Board, Color, GameOptions, GameState, Loc, Move, Player, Rules};
use engine_cli::run_engine;
use gtp::session;
use rand::rngs::StdRng as SmallRng;
use rand::{Rng, SeedableRng};

/// The g170 net from the shared data folder.
fn g170() -> std::path::PathBuf {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let model = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    assert!(model.is_file(), "network missing: {}", model.display());
    model
}

/// Whether `loc` is an empty point whose on-board neighbours are all
/// `pla`'s stones (an eye a random player should not fill).
fn is_own_eye(b: &Board, loc: Loc, pla: Player) -> bool {
    b.get(loc) == Color::Empty && b.adjacent_locs(loc).all(|a| b.get(a) == pla.color())
}

/// A random game to the end: legal moves that fill no own eye, until
/// neither player has one (then two passes), under Tromp-Taylor rules.
fn random_game(x: usize, y: usize, seed: u64) -> GameState {
    let board = Board::new(x, y).expect("size in range");
    let mut rules = Rules::tromp_taylor();
    rules.komi = 7.5;
    let mut st = GameState::start(board, Player::Black, rules, GameOptions::default());
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut passes = 0;
    let limit = 6 * x * y;
    for _ in 0..limit {
        let pla = st.next;
        let candidates: Vec<Loc> = st
            .board
            .locs()
            .filter(|&l| !is_own_eye(&st.board, l, pla) && st.is_legal(Move::Play(l)))
            .collect();
        let mv = if candidates.is_empty() {
            Move::Pass
        } else {
            Move::Play(candidates[rng.gen_range(0..candidates.len())])
        };
        st.play(mv);
        passes = if mv == Move::Pass { passes + 1 } else { 0 };
        if st.hist.is_game_finished() {
            break;
        }
    }
    assert!(
        passes >= 2 && st.hist.is_game_finished(),
        "game did not end"
    );
    st
}

/// Tromp-Taylor area by a plain flood fill, written here independently of
/// the engine: stones count for their colour, an empty region for a colour
/// if it touches only that colour's stones. White minus black, komi added.
fn flood_fill_score(b: &Board, komi: f32) -> f32 {
    let (xs, ys) = (b.x_size(), b.y_size());
    let at = |x: usize, y: usize| b.get(b.loc(x, y));
    let mut seen = vec![false; xs * ys];
    let (mut black, mut white) = (0i64, 0i64);
    for y in 0..ys {
        for x in 0..xs {
            match at(x, y) {
                Color::Black => black += 1,
                Color::White => white += 1,
                _ if !seen[y * xs + x] => {
                    let (mut size, mut touches_b, mut touches_w) = (0i64, false, false);
                    let mut queue = VecDeque::from([(x, y)]);
                    seen[y * xs + x] = true;
                    while let Some((cx, cy)) = queue.pop_front() {
                        size += 1;
                        let mut nbrs = Vec::new();
                        if cx > 0 {
                            nbrs.push((cx - 1, cy));
                        }
                        if cx + 1 < xs {
                            nbrs.push((cx + 1, cy));
                        }
                        if cy > 0 {
                            nbrs.push((cx, cy - 1));
                        }
                        if cy + 1 < ys {
                            nbrs.push((cx, cy + 1));
                        }
                        for (nx, ny) in nbrs {
                            match at(nx, ny) {
                                Color::Black => touches_b = true,
                                Color::White => touches_w = true,
                                _ if !seen[ny * xs + nx] => {
                                    seen[ny * xs + nx] = true;
                                    queue.push_back((nx, ny));
                                }
                                _ => {}
                            }
                        }
                    }
                    match (touches_b, touches_w) {
                        (true, false) => black += size,
                        (false, true) => white += size,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
    (white - black) as f32 + komi
}

fn check_full_game(x: usize, y: usize, seed: u64) {
    let st = random_game(x, y, seed);
    assert!(st.hist.moves().len() > x * y / 2, "a real game was played");
    let expected = flood_fill_score(&st.board, 7.5);
    assert_eq!(
        st.hist.final_white_minus_black_score(),
        expected,
        "{x}x{y}: the engine's score against a flood-fill count"
    );
    // The same game written to SGF and read back gives the same position.
    let mut rec = GameRecord::new(x, y);
    rec.komi = Some(7.5);
    rec.moves = st
        .hist
        .moves()
        .iter()
        .map(|&(mv, pla)| {
            let at = match mv {
                Move::Pass => None,
                Move::Play(l) => Some((l.x(x), l.y(x))),
            };
            (pla, at)
        })
        .collect();
    let text = write_sgf(&rec);
    let trees = parse_collection(&text).expect("own SGF parses");
    let back = trees[0].record().expect("own SGF reads");
    assert_eq!((back.x_size, back.y_size), (x, y));
    assert_eq!(back.moves, rec.moves);
}

#[test]
fn full_game_on_37x37_scores_as_a_flood_fill() {
    check_full_game(37, 37, 71);
}

#[test]
fn full_game_on_29x19_scores_as_a_flood_fill() {
    check_full_game(29, 19, 72);
}

#[test]
fn sgf_sizes_up_to_37_and_a_clear_error_above() {
    let trees = parse_collection("(;SZ[37];B[KK];W[aa];B[])").expect("parses");
    let rec = trees[0].record().expect("SZ[37] is accepted");
    assert_eq!((rec.x_size, rec.y_size), (37, 37));
    assert_eq!(rec.moves[0], (Player::Black, Some((36, 36))));
    let again = parse_collection(&write_sgf(&rec)).expect("round trip");
    assert_eq!(again[0].record().expect("reads").moves, rec.moves);
    let rect = parse_collection("(;SZ[29:19])").expect("parses")[0]
        .record()
        .expect("SZ[29:19] is accepted");
    assert_eq!((rect.x_size, rect.y_size), (29, 19));
    let err = parse_collection("(;SZ[38])").expect("parses")[0]
        .record()
        .expect_err("SZ[38] is refused");
    assert!(err.to_string().contains("2 to 37"), "{err}");
    assert!(Board::new(38, 19).is_err() && Board::new(1, 5).is_err());
    assert!(Board::new(37, 2).is_ok());
}

#[test]
fn gtp_genmove_on_37x37_and_29x19_and_boardsize_38_refused() {
    let model = g170();
    let args: [&std::ffi::OsStr; 4] = [
        "-model".as_ref(),
        model.as_os_str(),
        "-override-config".as_ref(),
        "maxVisits=4,numSearchThreads=1,logAllGTPCommunication=false".as_ref(),
    ];
    let (answers, stderr) = session(
        &args,
        "boardsize 37\nplay w AJ37\ngenmove b\nboardsize 38\nboardsize 1\n\
         rectangular_boardsize 29 19\ngenmove b\nrectangular_boardsize 19 38\nname\nquit\n",
    );
    assert_eq!(answers.len(), 10, "{answers:?}\n{stderr}");
    assert_eq!(answers[0], "=");
    assert_eq!(answers[1], "=");
    let mv = answers[2].trim_start_matches('=').trim();
    assert!(!mv.is_empty() && mv != "AJ37", "genmove on 37x37: {mv}");
    for i in [3, 4, 7] {
        assert!(
            answers[i].starts_with('?') && answers[i].contains("2 to 37"),
            "{}",
            answers[i]
        );
    }
    assert_eq!(answers[5], "=");
    let mv = answers[6].trim_start_matches('=').trim();
    assert!(!mv.is_empty(), "genmove on 29x19");
    assert!(answers[8].starts_with('='), "still running: {}", answers[8]);
}

#[test]
fn analysis_of_a_31x31_position() {
    let model = g170();
    let model = model.to_string_lossy().into_owned();
    let query = r#"{"id":"big","boardXSize":31,"boardYSize":31,"rules":"tromp-taylor","komi":7.5,"moves":[["B","P16"],["W","AE30"],["B","D4"]],"maxVisits":4,"includeOwnership":true}
{"id":"toobig","boardXSize":38,"boardYSize":19,"rules":"tromp-taylor","komi":7.5,"moves":[]}
"#;
    let out = run_engine(
        &[
            "analysis",
            "-model",
            model.as_str(),
            "-config",
            "configs/analysis.toml",
            "-override-config",
            "numSearchThreads=1,numAnalysisThreads=1",
        ],
        query,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let big = lines
        .iter()
        .find(|v| v["id"] == "big" && v.get("error").is_none())
        .unwrap_or_else(|| panic!("no answer for the 31x31 query:\n{stdout}\n{stderr}"));
    let infos = big["moveInfos"].as_array().expect("moveInfos");
    assert!(!infos.is_empty());
    assert_eq!(
        big["ownership"].as_array().expect("ownership").len(),
        31 * 31
    );
    assert_eq!(big["rootInfo"]["currentPlayer"], "W");
    let too_big = lines
        .iter()
        .find(|v| v["id"] == "toobig")
        .unwrap_or_else(|| panic!("no answer for the 38x19 query:\n{stdout}"));
    let err = too_big["error"].as_str().expect("an error");
    assert!(err.contains("2 to 37"), "{err}");
}

#[test]
fn match_on_25x25_writes_whole_games_and_refuses_38() {
    let model = g170();
    let dir = std::env::temp_dir().join(format!("engine-bigboard-match-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sgfs = dir.join("sgfs");
    let bot = |name: &str| format!("{name}={}", model.display());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["match", "-bot", &bot("a"), "-bot", &bot("b"), "-games", "2"])
        .args(["-boardsize", "25", "-komi", "7.5", "-seed", "5"])
        .args([
            "-override-config",
            "maxVisits=2,maxMovesPerGame=120,nnRandomize=false,numGameThreads=2",
        ])
        .arg("-sgf-output-dir")
        .arg(&sgfs)
        .output()
        .expect("engine runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let summary = std::fs::read_to_string(sgfs.join("match_summary.json")).expect("summary");
    let v: serde_json::Value = serde_json::from_str(&summary).expect("summary JSON");
    assert_eq!(v["games"], 2, "{v}");
    for r in v["results"].as_array().expect("results") {
        let text = std::fs::read_to_string(sgfs.join(r["sgf"].as_str().expect("sgf name")))
            .expect("the game's SGF");
        let rec = parse_collection(&text).expect("SGF parses")[0]
            .record()
            .expect("a game record");
        assert_eq!((rec.x_size, rec.y_size), (25, 25));
        assert!(!rec.moves.is_empty() && rec.moves.len() <= 120);
        // Every move replays on a 25x25 board, in turn, on an empty point
        // and without suicide or a simple-ko recapture.
        let board = Board::new(25, 25).expect("size in range");
        let mut rules = Rules::tromp_taylor();
        rules.komi = 7.5;
        let mut st = GameState::start(board, Player::Black, rules, GameOptions::default());
        for &(pla, at) in &rec.moves {
            let mv = at.map_or(Move::Pass, |(x, y)| Move::Play(st.board.loc(x, y)));
            assert_eq!(pla, st.next, "players alternate");
            assert!(st.is_legal(mv), "{mv:?} by {pla:?} in\n{text}");
            st.play(mv);
        }
        assert_eq!(rec.result.as_deref(), r["result"].as_str());
    }
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["match", "-bot", &bot("a"), "-bot", &bot("b"), "-games", "1"])
        .args(["-boardsize", "38"])
        .arg("-sgf-output-dir")
        .arg(dir.join("refused"))
        .output()
        .expect("engine runs");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "38 must be refused");
    assert!(err.contains("38") && err.contains("37"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
