//! Turning a parsed query into the positions to search: place the initial
//! stones, replay the moves as KataGo's analysis engine does, keep a copy of
//! each requested turn; and the facts about a position the response reports.

use crate::game::{Board, BoardHistory, Color, GameOptions, GameState, Hash128, Loc, Player};

use super::query::{AnalyzeQuery, QueryError};
use super::response::PositionFacts;

/// Size, player to move and hashes of a position, for the response.
pub fn position_facts(pos: &GameState) -> PositionFacts {
    let this = pos.board.sit_hash_with_simple_ko(pos.next);
    let sym = (1..8)
        .filter_map(|sym| symmetric_board(&pos.board, sym))
        .map(|b| b.sit_hash_with_simple_ko(pos.next))
        .fold(this, |a, b| if b.0 < a.0 { b } else { a });
    PositionFacts {
        board_x_size: pos.x_size(),
        board_y_size: pos.y_size(),
        to_move: pos.next,
        this_hash: split(this),
        sym_hash: split(sym),
    }
}

fn split(h: Hash128) -> (u64, u64) {
    ((h.0 >> 64) as u64, h.0 as u64)
}

/// `board` under symmetry `sym` (bit 0: flip rows, bit 1: flip columns,
/// bit 2: transpose), with the simple-ko point carried along.
fn symmetric_board(board: &Board, sym: u8) -> Option<Board> {
    let (xs, ys) = (board.x_size(), board.y_size());
    let transpose = sym & 4 != 0;
    let (nx, ny) = if transpose { (ys, xs) } else { (xs, ys) };
    let map = |loc: Loc| -> Loc {
        let (mut x, mut y) = loc.xy(xs);
        if sym & 1 != 0 {
            y = ys - 1 - y;
        }
        if sym & 2 != 0 {
            x = xs - 1 - x;
        }
        if transpose {
            (x, y) = (y, x);
        }
        Loc::from_xy(x, y, nx)
    };
    let mut out = Board::new(nx, ny).ok()?;
    for loc in board.locs() {
        let c = board.get(loc);
        if c != Color::Empty {
            out.set_stone(map(loc), c);
        }
    }
    out.set_simple_ko_loc(board.ko_loc().map(map));
    Some(out)
}

/// The positions at the requested turns, in turn order, or the error for
/// the first move that cannot be played. Moves are applied as
/// [`GameState::play_tolerant`] (a move out of turn restarts the history,
/// as KataGo does when a record has a gap).
pub fn build_positions(
    q: &AnalyzeQuery,
    opts: &GameOptions,
) -> Result<Vec<(usize, GameState)>, QueryError> {
    let (xs, ys) = (q.board_x_size, q.board_y_size);
    let mut board = Board::new(xs, ys).map_err(|e| QueryError::Field {
        id: q.id.clone(),
        field: "boardXSize".into(),
        message: e.to_string(),
    })?;
    for s in &q.initial_stones {
        if let Some(loc) = s.mv.loc() {
            board.set_stone(loc, s.player.color());
        }
    }
    let next = q.initial_player.unwrap_or_else(|| match q.moves.first() {
        Some(m) => m.player,
        None if BoardHistory::num_handicap_stones_on_board(&board) > 0 => Player::White,
        None => Player::Black,
    });
    let mut state = GameState::start(board, next, q.rules, *opts);

    let mut out = Vec::with_capacity(q.analyze_turns.len());
    for turn in 0..=q.moves.len() {
        if q.analyze_turns.binary_search(&turn).is_ok() {
            out.push((turn, state.clone()));
        }
        let Some(m) = q.moves.get(turn) else { break };
        if !state.play_tolerant(m.mv, m.player) {
            return Err(QueryError::Field {
                id: q.id.clone(),
                field: "moves".into(),
                message: format!("Illegal move {turn}: {}", m.mv.to_gtp(xs, ys)),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::query::{parse_line, ParseOptions, Request};

    fn positions(line: &str) -> Result<Vec<(usize, GameState)>, QueryError> {
        let Ok(Request::Analyze(q)) = parse_line(line, &ParseOptions::default()).result else {
            panic!("not a query: {line}");
        };
        build_positions(&q, &GameOptions::default())
    }

    #[test]
    fn replays_moves_and_keeps_requested_turns() {
        let p = positions(
            r#"{"id":"a","moves":[["B","E5"],["W","pass"],["B","C3"]],"rules":"chinese",
               "boardXSize":9,"boardYSize":9,"analyzeTurns":[0,2,3]}"#,
        )
        .unwrap();
        let turns: Vec<usize> = p.iter().map(|t| t.0).collect();
        assert_eq!(turns, [0, 2, 3]);
        assert_eq!(p[0].1.next, Player::Black);
        assert_eq!(p[1].1.next, Player::Black);
        assert_eq!(p[2].1.next, Player::White);
        assert_eq!(p[2].1.board.num_stones(), 2);
        assert_eq!(p[2].1.hist.rules().komi, 7.5);
    }

    #[test]
    fn occupied_point_is_an_illegal_move() {
        let e = positions(
            r#"{"id":"a","moves":[["B","D4"],["W","D4"]],"rules":"chinese","boardXSize":19,"boardYSize":19}"#,
        )
        .unwrap_err();
        assert_eq!(
            e,
            QueryError::Field {
                id: "a".into(),
                field: "moves".into(),
                message: "Illegal move 1: D4".into()
            }
        );
    }

    #[test]
    fn handicap_stones_give_white_the_move() {
        let p = positions(
            r#"{"id":"a","moves":[],"initialStones":[["B","D4"],["B","Q16"]],"rules":"chinese",
               "boardXSize":19,"boardYSize":19}"#,
        )
        .unwrap();
        assert_eq!(p[0].1.next, Player::White);
        assert_eq!(p[0].1.board.num_stones(), 2);
    }

    #[test]
    fn symmetric_positions_share_sym_hash() {
        let at = |v: &str| {
            let line = format!(
                r#"{{"id":"a","moves":[["B","{v}"]],"rules":"chinese","boardXSize":19,"boardYSize":19}}"#
            );
            position_facts(&positions(&line).unwrap()[0].1)
        };
        let (a, b, c) = (at("D4"), at("Q16"), at("C4"));
        assert_eq!(a.sym_hash, b.sym_hash);
        assert_ne!(a.this_hash, b.this_hash);
        assert_ne!(a.sym_hash, c.sym_hash);
        assert_eq!(at("D3").sym_hash, at("C4").sym_hash, "transposed");
    }

    #[test]
    fn hashes_are_katagos() {
        use crate::analysis::response::hash_hex;
        // KataGo 1.17.2's rootInfo for these queries (shared/vectors/nn/
        // nn.jsonl: empty_19_japanese_k6.5, empty_9_korean_k6.5 and
        // ko_7_japanese_k6.5_koban-B4, where a simple-ko ban is part of the
        // hash; tests/analysis_parity.rs compares all 39 of them).
        let cases = [
            (
                r#"{"id":"a","moves":[],"rules":"japanese","komi":6.5,"boardXSize":19,"boardYSize":19}"#,
                "47E1EBDAE69A5DED3FF8DB1FA4E91845",
                "47E1EBDAE69A5DED3FF8DB1FA4E91845",
            ),
            (
                r#"{"id":"a","moves":[],"rules":"korean","komi":6.5,"boardXSize":9,"boardYSize":9}"#,
                "1521075FDD85FFE1B074F776AFC4E49D",
                "1521075FDD85FFE1B074F776AFC4E49D",
            ),
            (
                r#"{"id":"a","moves":[["B","B5"],["W","C5"],["B","A4"],["W","B4"],["B","B3"],["W","C3"],["B","F6"],["W","D4"],["B","C4"]],"rules":"japanese","komi":6.5,"boardXSize":7,"boardYSize":7}"#,
                "29F22C0DA4428FDF024BFB6BF9204F23",
                "29F22C0DA4428FDF024BFB6BF9204F23",
            ),
        ];
        for (line, this, sym) in cases {
            let facts = position_facts(&positions(line).unwrap().pop().unwrap().1);
            assert_eq!(hash_hex(facts.this_hash), this, "{line}");
            assert_eq!(hash_hex(facts.sym_hash), sym, "{line}");
        }
    }
}
