//! Every SGF of the shared KataGo vectors parses, and its record matches the
//! JSON sidecar KataGo wrote for it (board size, komi, handicap, rules text,
//! result, move count). Needs the shared data folder (see
//! `engine::shared_data_dir`); fails when it is absent.

use engine::game::sgf::{parse_collection, write_sgf, GameRecord, SgfTree};
use std::path::{Path, PathBuf};

fn sgf_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sgf"))
        .collect();
    files.sort();
    files
}

fn shared() -> PathBuf {
    engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"))
}

/// Parses a file holding exactly one game.
fn read_one(path: &Path) -> (String, SgfTree, GameRecord) {
    let text = std::fs::read_to_string(path).expect("readable SGF");
    let mut trees = parse_collection(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(trees.len(), 1, "{}: one game per file", path.display());
    let tree = trees.remove(0);
    let rec = tree
        .record()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (text, tree, rec)
}

/// Writing the record and the tree and reading them back changes nothing.
fn check_round_trips(path: &Path, tree: &SgfTree, rec: &GameRecord) {
    let again = parse_collection(&write_sgf(rec)).expect("written SGF parses");
    assert_eq!(again.len(), 1);
    assert_eq!(
        &again[0].record().expect("written SGF reads"),
        rec,
        "{}",
        path.display()
    );
    let again = parse_collection(&tree.to_sgf()).expect("written tree parses");
    assert_eq!(&again[0], tree, "{}", path.display());
}

#[test]
fn selfplay_games_match_sidecars() {
    let dir = shared().join("vectors/games");
    let files = sgf_files(&dir);
    assert!(
        files.len() >= 40,
        "expected the 44 shared games in {}",
        dir.display()
    );
    let mut handicap_games = 0;
    let mut rectangles = 0;
    for path in &files {
        let (_, tree, rec) = read_one(path);
        let sidecar = path.with_extension("json");
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&sidecar).expect("sidecar next to every game"),
        )
        .expect("sidecar is JSON");
        let name = path.display();
        assert_eq!(
            rec.x_size as u64,
            json["boardXSize"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            rec.y_size as u64,
            json["boardYSize"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            rec.moves.len() as u64,
            json["numMoves"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(rec.komi.map(f64::from), json["KM"].as_f64(), "{name}");
        assert_eq!(rec.handicap.map(u64::from), json["HA"].as_u64(), "{name}");
        assert_eq!(rec.rules.as_deref(), json["RU"].as_str(), "{name}");
        assert_eq!(rec.result.as_deref(), json["RE"].as_str(), "{name}");
        // KataGo: HA = number of AB stones + 1 in handicap games, else 0.
        let stones = rec.setup.len() as u32;
        if stones > 0 {
            handicap_games += 1;
            assert_eq!(rec.handicap, Some(stones + 1), "{name}");
            assert!(rec
                .setup
                .iter()
                .all(|&(c, _)| c == engine::game::Color::Black));
        }
        if rec.x_size != rec.y_size {
            rectangles += 1;
        }
        // Self-play always moves black first and alternates.
        for (i, &(player, _)) in rec.moves.iter().enumerate() {
            let expected = if i % 2 == 0 {
                engine::game::Player::Black
            } else {
                engine::game::Player::White
            };
            assert_eq!(player, expected, "{name}: move {i}");
        }
        if json["endedWithTwoPasses"].as_bool() == Some(true) {
            let n = rec.moves.len();
            assert!(n >= 2 && rec.moves[n - 2].1.is_none() && rec.moves[n - 1].1.is_none());
        }
        assert!(rec
            .game_comment
            .as_deref()
            .unwrap_or("")
            .contains("gameHash="));
        check_round_trips(path, &tree, &rec);
    }
    assert_eq!(handicap_games, 3, "README: three handicap games");
    assert!(rectangles >= 7, "README: 9x13, 13x9, 19x11, 7x9 games");
}

#[test]
fn npz_run_games_parse_and_concatenate_like_sgfs() {
    let dir = shared().join("vectors/npz/sgfs");
    let files = sgf_files(&dir);
    assert_eq!(files.len(), 12, "README: the 12 SGFs of the npz run");
    let mut joined = String::new();
    let mut records = Vec::new();
    for path in &files {
        let (text, tree, rec) = read_one(path);
        assert!(!rec.moves.is_empty(), "{}", path.display());
        assert!(
            rec.komi.is_some() && rec.rules.is_some(),
            "{}",
            path.display()
        );
        check_round_trips(path, &tree, &rec);
        // A KataGo `.sgfs` file: one game per line.
        joined.push_str(text.trim_end());
        joined.push('\n');
        records.push(rec);
    }
    let all = parse_collection(&joined).expect("the games joined one per line parse");
    let all: Vec<GameRecord> = all.iter().map(|t| t.record().expect("reads")).collect();
    assert_eq!(all, records);
}
