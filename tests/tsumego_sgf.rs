//! `engine tsumego PROBLEM.sgf` end to end, on the project's own net
//! (`models/`): a straight-three corner whose vital point (B9) kills, the
//! solution written as SGF (stdout and `-o`), and bad SGF refused with exit
//! code 2; on g170 b6c96, a 19x19 corner ko whose written verdict follows
//! `-ko-threats`.

use engine::game::sgf::{parse_collection, NodeId};

#[path = "common/engine_cli.rs"]
mod engine_cli;
use engine_cli::{repo, run_engine};

/// The default net in `models/` (the one the README's commands use).
fn own_net() -> String {
    let nets = engine::setup::models_in(&repo().join("models"));
    nets.first()
        .expect("models/ holds the project's net")
        .display()
        .to_string()
}

/// Black's corner A8 B8 C8 D8 D9 with the straight-three eye space A9 B9
/// C9, inside White's wall A7..E7, E8, E9; White to play kills at B9.
const STRAIGHT_THREE: &str = "(;GM[1]FF[4]SZ[9]KM[7]\
    AB[ab][bb][cb][db][da]AW[ac][bc][cc][dc][ec][eb][ea]PL[W]\
    ;W[ba];B[aa];W[ca])";

fn write_problem(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("engine-tsumego-sgf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write problem");
    path
}

#[test]
fn straight_three_kill_is_solved_into_sgf_variations() {
    let problem = write_problem("straight_three.sgf", STRAIGHT_THREE);
    let out_path = problem.with_extension("solution.sgf");
    let net = own_net();
    let problem_arg = problem.display().to_string();
    let out_arg = out_path.display().to_string();
    let out = run_engine(
        &[
            "tsumego",
            &problem_arg,
            "-model",
            &net,
            "-visits",
            "150",
            "-override-config",
            "numSearchThreads=1",
            "-o",
            &out_arg,
        ],
        "",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "engine tsumego failed: {stderr}");
    let text = std::fs::read_to_string(&out_path).expect("solution written");
    let trees = parse_collection(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let tree = &trees[0];
    let record = tree.record().expect("a game record");
    assert_eq!(record.x_size, 9);
    assert_eq!(record.setup.len(), 12, "the problem's stones are kept");
    let comment = record.game_comment.clone().unwrap_or_default();
    assert!(comment.contains("goal: kill"), "{comment}");
    // The setup node's children are the first moves: B9 (`ba`) is one,
    // marked correct, commented with the verdict.
    let first: Vec<_> = tree
        .children(NodeId::ROOT)
        .iter()
        .filter_map(|&id| tree.node(id))
        .collect();
    assert!(!first.is_empty(), "no variations: {text}");
    let b9 = first
        .iter()
        .find(|n| n.get_first("W") == Some("ba"))
        .unwrap_or_else(|| panic!("no W[ba] variation: {text}"));
    assert_eq!(b9.get_first("TE"), Some("1"), "{text}");
    let c = b9.get_first("C").unwrap_or_default();
    assert!(
        c.contains("Correct") && c.contains("dead") && c.contains("visits"),
        "{c}"
    );
    assert!(first.iter().all(|n| n.has("C")), "{text}");
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&problem);
}

#[test]
fn bad_sgf_is_refused_with_exit_code_2() {
    let problem = write_problem("broken.sgf", "(;SZ[9]AB[ab");
    let arg = problem.display().to_string();
    let out = run_engine(&["tsumego", &arg, "-model", &own_net()], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("engine tsumego:"), "{stderr}");
    let empty = write_problem("empty.sgf", "(;SZ[9])");
    let arg = empty.display().to_string();
    let out = run_engine(&["tsumego", &arg, "-model", &own_net()], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no setup stones"), "{stderr}");
    let out = run_engine(&["tsumego", "/nonexistent/problem.sgf"], "");
    assert_eq!(out.status.code(), Some(2));
}

/// KataGo's g170 b6c96 in the shared data: the ko problem is 19x19, which
/// the project's net does not play.
fn g170() -> String {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let net = shared.join("models/g170-b6c96-s175395328-d26788732.bin.gz");
    assert!(net.is_file(), "shared net missing: {}", net.display());
    net.display().to_string()
}

/// The corner ko of tests/tsumego.rs as SGF (Black to play and live):
/// Black takes at E18 (`eb`); it wins only if the frame gives Black the
/// ko threats.
const KO: &str = "(;GM[1]FF[4]SZ[19]KM[7]PL[B]\
    AB[ba][da][ab][bb][cb][cc][dc]\
    AW[ea][fa][db][fb][ac][bc][ec][fc][bd][cd][dd][ed])";

/// Solves `KO` with `-ko-threats SIDE` and returns the SGF and the colour
/// marks of the E18 variation (`TE` correct, `BM` wrong, neither).
fn solve_ko(side: &str) -> (String, Option<String>) {
    let problem = write_problem(&format!("ko-{side}.sgf"), KO);
    let arg = problem.display().to_string();
    let out = run_engine(
        &[
            "tsumego",
            &arg,
            "-model",
            &g170(),
            "-visits",
            "200",
            "-ko-threats",
            side,
            "-override-config",
            "numSearchThreads=1,nnRandSeed=tsumego-sgf,searchRandSeed=tsumego-sgf",
        ],
        "",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "engine tsumego failed: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let trees = parse_collection(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let tree = &trees[0];
    let e18 = tree
        .children(NodeId::ROOT)
        .iter()
        .filter_map(|&id| tree.node(id))
        .find(|n| n.get_first("B") == Some("eb"))
        .map(|n| {
            if n.get_first("TE").is_some() {
                "TE".to_string()
            } else if n.get_first("BM").is_some() {
                "BM".to_string()
            } else {
                "unmarked".to_string()
            }
        });
    let _ = std::fs::remove_file(&problem);
    (text, e18)
}

#[test]
fn ko_threats_decide_the_ko_in_the_written_solution() {
    let (text, e18) = solve_ko("defender");
    assert_eq!(e18.as_deref(), Some("TE"), "{text}");
    assert!(text.contains("Ko threats in the frame"), "{text}");
    assert!(text.contains("for Black"), "{text}");
    let (text, e18) = solve_ko("attacker");
    assert_ne!(e18.as_deref(), Some("TE"), "{text}");
    assert!(text.contains("for White"), "{text}");
    // A side that is not one gets a usage error naming the flag.
    let problem = write_problem("ko-bad.sgf", KO);
    let arg = problem.display().to_string();
    let out = run_engine(&["tsumego", &arg, "-ko-threats", "both"], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("-ko-threats"), "{stderr}");
}
