//! The project's own network in `models/`: the README's main command
//! (`engine gtp` with no `-model`) finds it, loads it and plays legal moves
//! on 9x9, one of the sizes it was trained for.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn models_dir_has_the_projects_own_network_and_it_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nets = engine::setup::models_in(&root.join("models"));
    assert_eq!(
        nets.len(),
        1,
        "models/ should hold exactly one network (the default): {nets:?}"
    );
    let file = engine::nn::ModelFile::load(&nets[0])
        .unwrap_or_else(|e| panic!("{}: {e}", nets[0].display()));
    assert!(file.version >= 8, "{}", file.version);
}

#[test]
fn gtp_without_model_plays_on_the_own_network() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gtp", "-config"])
        .arg(root.join("configs/gtp.toml"))
        .args(["-override-config", "maxVisits=16,numSearchThreads=1"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start engine");
    {
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "1 boardsize 9\n2 clear_board\n3 komi 7\n4 genmove b\n5 genmove w\n6 quit"
        )
        .unwrap();
    }
    let out = BufReader::new(child.stdout.take().unwrap());
    let answers: Vec<String> = out
        .lines()
        .map_while(Result::ok)
        .filter(|l| !l.is_empty())
        .collect();
    let _ = child.wait();
    assert_eq!(answers.len(), 6, "{answers:?}");
    for (i, a) in answers.iter().enumerate() {
        assert!(a.starts_with(&format!("={}", i + 1)), "{answers:?}");
    }
    for a in &answers[3..5] {
        let mv = a.split_whitespace().nth(1).unwrap_or("");
        let legal_vertex = mv.len() >= 2
            && "ABCDEFGHJ".contains(&mv[..1])
            && mv[1..].parse::<u32>().is_ok_and(|r| (1..=9).contains(&r));
        assert!(
            legal_vertex || mv == "pass" || mv == "resign",
            "not a 9x9 move: {a}"
        );
    }
}

/// From any folder: the default net is found beside the executable
/// (`target/<profile>/../../models`), a path with `..` in it.
#[test]
fn the_default_network_is_found_from_another_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let elsewhere = std::env::temp_dir();
    let nets = engine::setup::models_in(&root.join("models/../models"));
    assert_eq!(nets.len(), 1, "{nets:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gtp", "-override-config", "maxVisits=4,numSearchThreads=1"])
        .current_dir(&elsewhere)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(b"boardsize 9\ngenmove b\nquit\n")?;
            child.wait_with_output()
        })
        .expect("engine runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("Loaded model b4c32"), "{stderr}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with('=')).count(),
        3,
        "{stdout}"
    );
}
