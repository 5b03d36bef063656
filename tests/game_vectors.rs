//! Conformance with KataGo 1.17.2 on finished self-play games
//! (`shared/vectors/games`, see section 3 of the README there).
//!
//! Every game is replayed under the rules of its JSON sidecar and its `KM`:
//! every move must be legal under those rules (ko, superko, suicide, encore
//! recapture blocks), the game must end exactly where the SGF ends (by
//! passes, or by pass-alive adjudication, which KataGo's self-play checks
//! before every move), and the final score must equal
//! `final_score_white_minus_black` exactly. Needs the shared data folder
//! (see `engine::shared_data_dir`) and fails when it is absent.

use engine::game::sgf::parse_collection;
use engine::game::{Board, BoardHistory, Color, Loc, Move, Player, Rules};
use serde_json::Value;
use std::path::{Path, PathBuf};

struct Outcome {
    /// Moves played before the game ended.
    ended_after: usize,
    ended_by_pass_alive: bool,
    hist: BoardHistory,
}

fn replay(path: &Path, sidecar: &Value) -> Result<Outcome, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let trees = parse_collection(&text).map_err(|e| e.to_string())?;
    let rec = trees
        .first()
        .ok_or("no game in file")?
        .record()
        .map_err(|e| e.to_string())?;

    let komi = sidecar["KM"].as_f64().ok_or("sidecar has no KM")? as f32;
    let rules_json = sidecar["rules"].to_string();
    let rules = Rules::parse_without_komi(&rules_json, komi).map_err(|e| e.to_string())?;
    // The SGF's own RU must say the same thing as kata-get-rules.
    let ru = rec.rules.as_deref().ok_or("no RU")?;
    let from_ru = Rules::parse_without_komi(ru, komi).map_err(|e| e.to_string())?;
    if from_ru != rules {
        return Err(format!(
            "RU {ru} parses to {from_ru:?}, sidecar says {rules:?}"
        ));
    }
    if rules.to_compact_string() != ru {
        return Err(format!(
            "compact string {} != RU {ru}",
            rules.to_compact_string()
        ));
    }

    let mut board = Board::new(rec.x_size, rec.y_size).map_err(|e| e.to_string())?;
    let placements: Vec<(Loc, Color)> = rec
        .setup
        .iter()
        .map(|&(c, (x, y))| (board.loc(x, y), c))
        .collect();
    if !board.set_stones_fail_if_no_libs(&placements) {
        return Err("setup stones rejected".into());
    }
    // Who moves first, as KataGo's CompactSgf::setupInitialBoardAndHist.
    let all_black = !placements.is_empty() && placements.iter().all(|&(_, c)| c == Color::Black);
    let mut first = rec.player_to_move.unwrap_or(if all_black {
        Player::White
    } else {
        Player::Black
    });
    if let Some(&(p, _)) = rec.moves.first() {
        first = p;
    }
    let mut hist = BoardHistory::new(&board, first, rules);
    hist.set_assume_multiple_starting_black_moves_are_handicap(true);

    let n = rec.moves.len();
    for i in 0..=n {
        // KataGo's self-play adjudicates before every move.
        if hist.end_game_if_all_pass_alive(&board) {
            return Ok(Outcome {
                ended_after: i,
                ended_by_pass_alive: true,
                hist,
            });
        }
        if hist.is_game_finished() {
            return Ok(Outcome {
                ended_after: i,
                ended_by_pass_alive: false,
                hist,
            });
        }
        let Some(&(pla, xy)) = rec.moves.get(i) else {
            break;
        };
        let mv = match xy {
            None => Move::Pass,
            Some((x, y)) => Move::Play(board.loc(x, y)),
        };
        if !hist.is_legal(&board, mv, pla) {
            return Err(format!(
                "move {i} {} {} is illegal (encore phase {})\n{board}",
                pla.letter(),
                mv.to_gtp(board.x_size(), board.y_size()),
                hist.encore_phase()
            ));
        }
        hist.play(&mut board, mv, pla);
        board
            .check_consistency()
            .map_err(|e| format!("after move {i}: {e}"))?;
    }
    Err(format!(
        "game not finished after all {n} moves (encore phase {}, passes {})",
        hist.encore_phase(),
        hist.consecutive_ending_passes()
    ))
}

fn check(path: &Path) -> Result<(), String> {
    let sidecar_path = path.with_extension("json");
    let sidecar: Value = serde_json::from_str(
        &std::fs::read_to_string(&sidecar_path)
            .map_err(|e| format!("{}: {e}", sidecar_path.display()))?,
    )
    .map_err(|e| e.to_string())?;
    let out = replay(path, &sidecar)?;
    let n = sidecar["numMoves"].as_u64().ok_or("no numMoves")? as usize;
    if out.ended_after != n {
        return Err(format!(
            "game ended after {} moves, SGF has {n}",
            out.ended_after
        ));
    }
    let by_pass_alive = sidecar["endedBy"]
        .as_str()
        .unwrap_or("")
        .contains("pass-alive");
    if out.ended_by_pass_alive != by_pass_alive {
        return Err(format!(
            "ended by pass-alive adjudication: {}, sidecar says {:?}",
            out.ended_by_pass_alive, sidecar["endedBy"]
        ));
    }
    let expected = sidecar["final_score_white_minus_black"]
        .as_f64()
        .ok_or("no final score")? as f32;
    let got = out.hist.final_white_minus_black_score();
    if !out.hist.is_scored() || got != expected {
        return Err(format!(
            "final score {got} (scored: {}), KataGo {expected}",
            out.hist.is_scored()
        ));
    }
    let winner = out.hist.winner();
    let expected_winner = match expected {
        s if s > 0.0 => Some(Player::White),
        s if s < 0.0 => Some(Player::Black),
        _ => None,
    };
    if winner != expected_winner {
        return Err(format!("winner {winner:?}, expected {expected_winner:?}"));
    }
    if !by_pass_alive {
        let phase = sidecar["encorePhaseAfterLoad"].as_u64().unwrap_or(0) as u8;
        if out.hist.encore_phase() != phase {
            return Err(format!(
                "encore phase {} != {phase}",
                out.hist.encore_phase()
            ));
        }
    }
    Ok(())
}

#[test]
fn katago_selfplay_games_replay_and_score_exactly() {
    let shared = engine::shared_data_dir().unwrap_or_else(|e| panic!("{e}"));
    let dir: PathBuf = shared.join("vectors/games");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sgf"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no games in {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = check(f) {
            failures.push(format!(
                "{}: {e}",
                f.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} games disagree with KataGo:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    eprintln!("{} games replayed, all scores exact", files.len());
}
