//! Ladder search against KataGo's own expected answers (the boards and
//! results of the ladder cases in KataGo's `cpp/tests/testboardbasic.cpp`),
//! plus hand-made working and broken ladders.

use super::*;
use crate::game::{Board, Color, Loc};

/// One KataGo ladder case: boards (rows top first, `x` black, `o` white)
/// and the expected answer at every stone (`1` captured, `0` not).
struct Case {
    name: &'static str,
    x_size: usize,
    y_size: usize,
    /// `searchIsLadderCaptured(loc, true)` if true, else
    /// `searchIsLadderCapturedAttackerFirst2Libs`.
    one_lib: bool,
    boards: &'static [&'static str],
    expected: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "Ladders 1 Lib",
        x_size: 9,
        y_size: 9,
        one_lib: true,
        boards: &["xo.x..oxo\
             xoxo..o..\
             xxo......\
             ..o.x....\
             xo..xox..\
             o..ooxo..\
             .....xo..\
             xoox..xo.\
             .xxoo.xxo"],
        expected: &["01.0..010\
             0100..0..\
             000......\
             ..0.0....\
             10..000..\
             0..0000..\
             .....00..\
             0000..00.\
             .1100.001"],
    },
    Case {
        name: "Ladders 2 Libs",
        x_size: 9,
        y_size: 9,
        one_lib: false,
        boards: &["xo.x..oxo\
             xo.o..o..\
             xxo......\
             ..o.x....\
             xo..xo...\
             ...ooxo..\
             .....xo..\
             xoox..xo.\
             .xx.o.xxo"],
        expected: &["11.1..000\
             11.0..0..\
             110......\
             ..0.0....\
             10..00...\
             ...0010..\
             .....10..\
             1110..01.\
             .11.0.000"],
    },
    Case {
        name: "LaddersKo-1",
        x_size: 18,
        y_size: 9,
        one_lib: false,
        boards: &["..................\
             ..................\
             ....ox.......ox...\
             ..xooox....xooox..\
             ..xoxox....xoxox..\
             ..xx.x......x.x...\
             ...ox.......ox....\
             ....o.............\
             .................."],
        expected: &["..................\
             ..................\
             ....10.......00...\
             ..01110....00000..\
             ..01010....00000..\
             ..00.0......0.0...\
             ...00.......00....\
             ....0.............\
             .................."],
    },
    Case {
        name: "LaddersKo-2",
        x_size: 18,
        y_size: 9,
        one_lib: false,
        boards: &[
            ".............xo.oo\
             ....x........xxooo\
             ...x.xx.......xxo.\
             ..xoxoxo.......xxo\
             ..xoooxo........xx\
             ...xo......o......\
             ..................\
             ..................\
             .....x.oo.........",
            "..................\
             ....x.............\
             ...x.xx...........\
             ..xoxoxo..........\
             ..xoooxo..........\
             ...xo......o......\
             .................x\
             ..................\
             .....x.oo.........",
            "....xo.......xo...\
             ....xox......xox..\
             ...xo.ox....xo.ox.\
             ...xxoox....xxoox.\
             ..xooox....xooox..\
             .xo.ox....xo.ox...\
             ..xox......xox....\
             ..xox......xox....\
             ............o.....",
        ],
        expected: &[
            ".............00.11\
             ....0........00111\
             ...0.00.......001.\
             ..000000.......000\
             ..000000........00\
             ...00......0......\
             ..................\
             ..................\
             .....0.00.........",
            "..................\
             ....0.............\
             ...0.00...........\
             ..010100..........\
             ..011100..........\
             ...01......0......\
             .................0\
             ..................\
             .....0.00.........",
            "....01.......01...\
             ....011......011..\
             ...00.10....00.00.\
             ...00110....00000.\
             ..01110....00000..\
             .00.10....00.00...\
             ..010......000....\
             ..010......000....\
             ............0.....",
        ],
    },
    Case {
        name: "LaddersMultiKo",
        x_size: 9,
        y_size: 9,
        one_lib: false,
        boards: &[".xxxxxxo.\
             xoxox.xo.\
             ooo.oxoo.\
             ..oooo...\
             .xxxx....\
             xx.x.xx..\
             xoxoxox..\
             xoooooxx.\
             o.ooo.ox."],
        expected: &[".0000000.\
             00000.00.\
             000.0000.\
             ..0000...\
             .0000....\
             00.0.00..\
             0000000..\
             00000000.\
             0.000.00."],
    },
    Case {
        name: "LaddersBigBoard",
        x_size: 19,
        y_size: 19,
        one_lib: false,
        boards: &["...................\
             ...................\
             ...................\
             ...X...........X...\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ..............XOO..\
             ...O..........OXX..\
             ...................\
             ..................."],
        expected: &["...................\
             ...................\
             ...................\
             ...0...........0...\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ...................\
             ..............000..\
             ...0..........000..\
             ...................\
             ..................."],
    },
    Case {
        name: "WholeBoardLadder",
        x_size: 19,
        y_size: 19,
        one_lib: false,
        boards: &["....O..............\
             O.................O\
             ..................O\
             ...OOXO............\
             O...OXOOOO.O.....O.\
             OXXXXXXXXXO........\
             XOOO.X....X.......O\
             X.OOOX....XO.......\
             XOOOOX....X........\
             OXXXXXXXXXO.......O\
             OO...XO..O.........\
             .O.O.X.O...........\
             ......O............\
             ....O....X.........\
             O....X...X...XO....\
             .....X...X...X.....\
             .....X...X...X.....\
             ....O.XXXXXXXO...O.\
             .O....OOOOOOO.O...."],
        expected: &["....0..............\
             0.................0\
             ..................0\
             ...0000............\
             0...000000.0.....0.\
             00000000000........\
             0000.0....0.......0\
             0.0000....00.......\
             000000....0........\
             00000000000.......0\
             00...00..0.........\
             .0.0.0.0...........\
             ......0............\
             ....0....0.........\
             0....0...0...00....\
             .....0...0...0.....\
             .....0...0...0.....\
             ....0.00000000...0.\
             .0....1111111.0...."],
    },
    Case {
        name: "CubicLadder not far from max node budget",
        x_size: 19,
        y_size: 19,
        one_lib: false,
        boards: &["...OOOOOOOO.....O.O\
             XXX.XXXXX...OOOOO.O\
             O.....OO.......XXX.\
             .......OOO......O..\
             O.O................\
             ..O......O......O.O\
             ..O.......X.....O..\
             .........OX........\
             .......X.X.O.O.....\
             OXX.....X.O........\
             OX......XO.........\
             ..XO.....X.........\
             O...X..............\
             ...................\
             ...................\
             O...............O..\
             .........XO.....O..\
             ...OO....XOX.X...X.\
             ......X.OOOX.X..OOO"],
        expected: &["...00000000.....0.0\
             000.00000...00000.0\
             0.....00.......000.\
             .......000......0..\
             0.0................\
             ..0......0......0.0\
             ..0.......0.....0..\
             .........00........\
             .......0.0.0.0.....\
             000.....0.0........\
             00......01.........\
             ..00.....0.........\
             0...0..............\
             ...................\
             ...................\
             0...............0..\
             .........00.....0..\
             ...00....000.0...0.\
             ......0.0000.0..000"],
    },
];

/// A board from diagram text (whitespace ignored, rows top first).
fn board_from(x_size: usize, y_size: usize, text: &str) -> Board {
    let points: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    assert_eq!(points.len(), x_size * y_size, "diagram size");
    let mut board = Board::new(x_size, y_size).unwrap();
    for (i, ch) in points.into_iter().enumerate() {
        let color = match ch {
            'x' | 'X' => Color::Black,
            'o' | 'O' => Color::White,
            '.' => continue,
            _ => panic!("unexpected {ch:?} in diagram"),
        };
        assert!(board.set_stone(Loc::from_xy(i % x_size, i / x_size, x_size), color));
    }
    board
}

/// Runs the case's search at every stone, as KataGo's test prints it.
fn answers(board: &mut Board, one_lib: bool, scratch: &mut LadderScratch) -> String {
    let (xs, ys) = (board.x_size(), board.y_size());
    let mut out = String::new();
    let mut working = Vec::new();
    for y in 0..ys {
        for x in 0..xs {
            let loc = Loc::from_xy(x, y, xs);
            if board.get(loc) == Color::Empty {
                out.push('.');
                continue;
            }
            let captured = if one_lib {
                board.search_is_ladder_captured(loc, true, scratch)
            } else {
                board.search_is_ladder_captured_attacker_first_2_libs(loc, scratch, &mut working)
            };
            out.push(if captured { '1' } else { '0' });
        }
    }
    out
}

#[test]
fn ladder_answers_match_katagos_tests() {
    let mut scratch = LadderScratch::new();
    for case in CASES {
        for (i, (text, expected)) in case.boards.iter().zip(case.expected).enumerate() {
            let mut board = board_from(case.x_size, case.y_size, text);
            let before = board.clone();
            let got = answers(&mut board, case.one_lib, &mut scratch);
            let want: String = expected.chars().filter(|c| !c.is_whitespace()).collect();
            assert_eq!(got, want, "{} board {i}", case.name);
            // The search leaves the position as it found it.
            assert!(board.check_consistency().is_ok(), "{} board {i}", case.name);
            for loc in before.locs() {
                assert_eq!(board.get(loc), before.get(loc), "{} board {i}", case.name);
            }
            assert_eq!(board.pos_hash(), before.pos_hash());
        }
    }
}

/// The ladder of the nn.jsonl vectors: white D4 with two liberties (D5,
/// E4) against black C4, D3, E3 (plus black Q3, white C16 elsewhere); black
/// D5 starts a ladder running to the upper right, where a white stone on
/// Q16 breaks it. `atari` adds the black stone on D5.
fn ladder_board(breaker: bool, atari: bool) -> Board {
    let mut board = Board::new(19, 19).unwrap();
    let mut put = |gtp: &str, color| {
        let loc = crate::game::Move::parse(gtp, 19, 19)
            .unwrap()
            .loc()
            .unwrap();
        assert!(board.set_stone(loc, color));
    };
    for p in ["C4", "D3", "E3", "Q3"] {
        put(p, Color::Black);
    }
    put("D4", Color::White);
    put("C16", Color::White);
    if breaker {
        put("Q16", Color::White);
    }
    if atari {
        put("D5", Color::Black);
    }
    board
}

fn gtp(s: &str) -> Loc {
    crate::game::Move::parse(s, 19, 19).unwrap().loc().unwrap()
}

#[test]
fn a_working_ladder_captures_and_a_breaker_saves() {
    let mut scratch = LadderScratch::new();
    let d4 = gtp("D4");
    assert!(ladder_board(false, true).search_is_ladder_captured(d4, true, &mut scratch));
    assert!(!ladder_board(true, true).search_is_ladder_captured(d4, true, &mut scratch));

    // iter_ladders reports the stone in atari only when the ladder works.
    let mut seen = Vec::new();
    iter_ladders(&ladder_board(false, true), &mut scratch, |loc, moves| {
        seen.push((loc, moves.to_vec()))
    });
    assert_eq!(seen, vec![(d4, vec![])]);
    seen.clear();
    iter_ladders(&ladder_board(true, true), &mut scratch, |loc, moves| {
        seen.push((loc, moves.to_vec()))
    });
    assert!(seen.is_empty(), "{seen:?}");
}

#[test]
fn two_liberty_chain_reports_the_working_attacker_move() {
    let mut scratch = LadderScratch::new();
    let d4 = gtp("D4");
    let mut working = Vec::new();
    let mut board = ladder_board(false, false);
    assert!(board.search_is_ladder_captured_attacker_first_2_libs(d4, &mut scratch, &mut working));
    // Black E4 lets white out through D5; only D5 works.
    assert_eq!(working, vec![gtp("D5")]);

    let mut reported = Vec::new();
    iter_ladders(&board, &mut scratch, |loc, moves| {
        reported.push((loc, moves.to_vec()))
    });
    assert_eq!(reported, vec![(d4, vec![gtp("D5")])]);

    let mut broken = ladder_board(true, false);
    working.clear();
    assert!(!broken.search_is_ladder_captured_attacker_first_2_libs(
        d4,
        &mut scratch,
        &mut working
    ));
    assert!(working.is_empty());
}

#[test]
fn a_ko_ban_at_the_root_is_lifted_and_restored() {
    // KataGo assumes every ko works for the defender at the root: a ban on
    // the defender's lone liberty does not stop the search.
    let mut board = ladder_board(false, true);
    let mut scratch = LadderScratch::new();
    board.set_simple_ko_loc(Some(gtp("E4")));
    assert!(board.search_is_ladder_captured(gtp("D4"), true, &mut scratch));
    assert_eq!(
        board.ko_loc(),
        Some(gtp("E4")),
        "the root ko ban is restored"
    );
}
