//! Unit and property tests of the SGF layer.

use super::*;
use crate::game::{Color, Player};
use proptest::prelude::*;

fn one(text: &str) -> SgfTree {
    let mut trees = parse_collection(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trees.len(), 1);
    trees.remove(0)
}

fn rec(text: &str) -> GameRecord {
    one(text).record().unwrap_or_else(|e| panic!("{e}"))
}

/// The error of parsing and reading `text`, as (line, column, kind).
fn err(text: &str) -> (usize, usize, SgfErrorKind) {
    let e = match parse_collection(text) {
        Err(e) => e,
        Ok(trees) => trees
            .iter()
            .map(SgfTree::record)
            .find_map(Result::err)
            .unwrap_or_else(|| panic!("{text:?} should fail")),
    };
    (e.line, e.column, e.kind)
}

fn bad_point(property: &str, value: &str, reason: &'static str) -> SgfErrorKind {
    SgfErrorKind::BadPoint {
        property: property.into(),
        value: value.into(),
        reason,
    }
}

#[test]
fn reads_game_information() {
    let r = rec(
        "(;FF[4]GM[1]SZ[13]KM[6.5]HA[2]RU[Japanese]RE[W+R]PB[Honinbo]PW[Shusaku]\
                 DT[1846-09-11]EV[Castle game]GN[Ear-reddening]C[A game.]PL[W];W[dd])",
    );
    assert_eq!((r.x_size, r.y_size), (13, 13));
    assert_eq!(r.komi, Some(6.5));
    assert_eq!(r.handicap, Some(2));
    assert_eq!(r.rules.as_deref(), Some("Japanese"));
    assert_eq!(r.result.as_deref(), Some("W+R"));
    assert_eq!(r.player_black.as_deref(), Some("Honinbo"));
    assert_eq!(r.player_white.as_deref(), Some("Shusaku"));
    assert_eq!(r.date.as_deref(), Some("1846-09-11"));
    assert_eq!(r.event.as_deref(), Some("Castle game"));
    assert_eq!(r.game_name.as_deref(), Some("Ear-reddening"));
    assert_eq!(r.game_comment.as_deref(), Some("A game."));
    assert_eq!(r.player_to_move, Some(Player::White));
    assert_eq!(r.moves, vec![(Player::White, Some((3, 3)))]);
}

#[test]
fn defaults_when_absent() {
    let r = rec("(;)");
    assert_eq!(r, GameRecord::new(19, 19));
}

#[test]
fn coordinates_are_column_then_row_from_the_top() {
    let r = rec("(;SZ[19:13];B[ab];W[sm];B[ba])");
    assert_eq!((r.x_size, r.y_size), (19, 13));
    let points: Vec<_> = r.moves.iter().map(|m| m.1).collect();
    assert_eq!(points, vec![Some((0, 1)), Some((18, 12)), Some((1, 0))]);
    // Row 13 is off a 13-row board, column 19 off a 19-column one.
    assert_eq!(
        err("(;SZ[19:13];B[an])").2,
        bad_point("B", "an", "off the board")
    );
    assert_eq!(
        err("(;SZ[19:13];B[ta])").2,
        bad_point("B", "ta", "off the board")
    );
    // Uppercase letters are 26 and up.
    assert_eq!(
        err("(;SZ[25];B[yA])").2,
        bad_point("B", "yA", "off the board")
    );
    let r = rec("(;SZ[25];B[yy])");
    assert_eq!(r.moves[0].1, Some((24, 24)));
}

#[test]
fn passes_empty_and_tt() {
    let r = rec("(;FF[3]SZ[19];B[];W[tt])");
    assert_eq!(r.moves, vec![(Player::Black, None), (Player::White, None)]);
    let r = rec("(;FF[3]SZ[9];B[tt])");
    assert_eq!(r.moves, vec![(Player::Black, None)]);
    // tt is the point (19, 19) once the board has it.
    let r = rec("(;SZ[20];B[tt])");
    assert_eq!(r.moves, vec![(Player::Black, Some((19, 19)))]);
    let r = rec("(;SZ[19:25];B[tt])");
    assert_eq!(r.moves, vec![(Player::Black, None)]);
    // In setup, tt is a point like any other, so off a 19x19 board.
    assert_eq!(err("(;AB[tt])").2, bad_point("AB", "tt", "off the board"));
}

#[test]
fn text_escapes_and_line_breaks() {
    let t = one("(;C[a\\]b\\\\c\\:d]GN[x\\\ny\\\r\nz]EV[1\r\n2\n\r3\r4\n\n5]PC[\ttab\x0b])");
    let root = t.root();
    assert_eq!(root.get_first("C"), Some("a]b\\c:d"));
    // Soft line breaks vanish whatever the line-break style.
    assert_eq!(root.get_first("GN"), Some("xyz"));
    assert_eq!(root.get_first("EV"), Some("1\n2\n3\n4\n\n5"));
    assert_eq!(root.get_first("PC"), Some(" tab "));
    // Non-ASCII text after an escape survives.
    assert_eq!(one("(;C[\\é日])").root().get_first("C"), Some("é日"));
}

#[test]
fn whitespace_between_all_tokens() {
    let text =
        " \r\n ( \n ; FF [4]\t SZ\n[9] [ignored?] ;\n B\n [aa] \n ( ; W [bb] ) ( ;W[cc]) \n ) \n";
    let t = one(text);
    assert_eq!(t.root().get("SZ").map(<[String]>::len), Some(2));
    // SZ with two values is refused by the typed view ...
    assert!(matches!(err(text).2, SgfErrorKind::MultipleValues(p) if p == "SZ"));
    // ... but the same layout with one value reads.
    let r = rec(" ( \n ; FF [4]\t SZ\n[9] ;\n B\n [aa] \n ( ; W [bb] ) ( ;W[cc]) \n ) ");
    assert_eq!(
        r.moves,
        vec![(Player::Black, Some((0, 0))), (Player::White, Some((1, 1)))]
    );
}

#[test]
fn lowercase_letters_in_identifiers_are_ignored() {
    let t = one(
        "(;FileFormat[3]GaMe[1]SiZe[9]AddBlack[aa][bb]AddWhite[cc]PLayer[W];White[dd];Black[ee])",
    );
    assert_eq!(t.root().get_first("FF"), Some("3"));
    assert_eq!(t.root().get("AB").map(<[String]>::len), Some(2));
    let r = t.record().expect("reads");
    assert_eq!(r.x_size, 9);
    assert_eq!(
        r.setup,
        vec![
            (Color::Black, (0, 0)),
            (Color::Black, (1, 1)),
            (Color::White, (2, 2))
        ]
    );
    assert_eq!(r.player_to_move, Some(Player::White));
    assert_eq!(
        r.moves,
        vec![(Player::White, Some((3, 3))), (Player::Black, Some((4, 4)))]
    );
}

#[test]
fn compressed_point_lists_expand_row_by_row() {
    let r = rec("(;SZ[9]AB[aa:cb][ee]AW[ca:ab]AE[ii:ii])");
    let black: Vec<_> = r
        .setup
        .iter()
        .filter(|s| s.0 == Color::Black)
        .map(|s| s.1)
        .collect();
    assert_eq!(
        black,
        vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (4, 4)]
    );
    // Any two opposite corners give the same rectangle.
    let white: Vec<_> = r
        .setup
        .iter()
        .filter(|s| s.0 == Color::White)
        .map(|s| s.1)
        .collect();
    assert_eq!(white, vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
    assert_eq!(r.setup.last(), Some(&(Color::Empty, (8, 8))));
    assert_eq!(
        err("(;SZ[9]AB[aa:jj])").2,
        bad_point("AB", "aa:jj", "off the board")
    );
    assert_eq!(
        err("(;SZ[9]AB[aa:])").2,
        bad_point("AB", "aa:", "a point is two letters")
    );
    assert_eq!(
        err("(;SZ[9]AB[])").2,
        bad_point("AB", "", "a point is two letters")
    );
}

#[test]
fn setup_keeps_written_order_including_ae() {
    let r = rec("(;SZ[5]AW[bb]AB[aa]AE[bb];AB[cc]PL[B];B[dd])");
    assert_eq!(
        r.setup,
        vec![
            (Color::White, (1, 1)),
            (Color::Black, (0, 0)),
            (Color::Empty, (1, 1)),
            (Color::Black, (2, 2)),
        ]
    );
    assert_eq!(r.player_to_move, Some(Player::Black));
    assert_eq!(r.moves.len(), 1);
}

#[test]
fn several_games_in_one_text() {
    let text = "(;SZ[9];B[aa])\n(;SZ[13];B[bb];W[cc])\r\n\n(;SZ[7:9])";
    let trees = parse_collection(text).expect("parses");
    let sizes: Vec<_> = trees
        .iter()
        .map(|t| t.record().map(|r| (r.x_size, r.y_size, r.moves.len())))
        .collect::<Result<_, _>>()
        .expect("reads");
    assert_eq!(sizes, vec![(9, 9, 1), (13, 13, 2), (7, 9, 0)]);
}

#[test]
fn main_line_takes_the_first_variation() {
    let t = one("(;SZ[9];B[aa](;W[bb](;B[cc])(;B[dd]))(;W[ee]))");
    assert_eq!(t.len(), 6);
    assert_eq!(t.main_line().count(), 4);
    let r = t.record().expect("reads");
    let points: Vec<_> = r.moves.iter().map(|m| m.1).collect();
    assert_eq!(points, vec![Some((0, 0)), Some((1, 1)), Some((2, 2))]);
    // Node 1 (B[aa]) has the two variations W[bb] and W[ee].
    let first = t.children(NodeId::ROOT)[0];
    let kids: Vec<_> = t
        .children(first)
        .iter()
        .map(|&k| t.node(k).and_then(|n| n.get_first("W")))
        .collect();
    assert_eq!(kids, vec![Some("bb"), Some("ee")]);
}

#[test]
fn moves_in_the_root_node() {
    let r = rec("(;SZ[9]KM[7]B[ee];W[cc])");
    assert_eq!(
        r.moves,
        vec![(Player::Black, Some((4, 4))), (Player::White, Some((2, 2)))]
    );
}

#[test]
fn numbers() {
    assert_eq!(rec("(;KM[ -3.5 ])").komi, Some(-3.5));
    assert_eq!(rec("(;KM[0]HA[0])").handicap, Some(0));
    let bad_km = |v: &str| SgfErrorKind::BadNumber {
        property: "KM".into(),
        value: v.into(),
    };
    assert_eq!(err("(;KM[7.5x])"), (1, 5, bad_km("7.5x")));
    assert_eq!(err("(;KM[])").2, bad_km(""));
    assert_eq!(err("(;KM[inf])").2, bad_km("inf"));
    assert_eq!(err("(;KM[NaN])").2, bad_km("NaN"));
    assert!(matches!(err("(;HA[-1])").2, SgfErrorKind::BadNumber { .. }));
    assert!(matches!(
        err("(;HA[2.0])").2,
        SgfErrorKind::BadNumber { .. }
    ));
}

#[test]
fn board_sizes() {
    assert_eq!(rec("(;SZ[ 7 ])").x_size, 7);
    assert_eq!(rec("(;SZ[25:2])").y_size, 2);
    assert_eq!(rec("(;SZ[37])").x_size, 37);
    assert_eq!(rec("(;SZ[29:19])").x_size, 29);
    assert_eq!(rec("(;SZ[29:19])").y_size, 19);
    let reason = |v: &str| match err(&format!("(;SZ[{v}])")) {
        (1, 5, SgfErrorKind::BadSize { value, reason }) if value == v => reason,
        other => panic!("{v}: {other:?}"),
    };
    let big = "edge is larger than 37 (each side must be 2 to 37)";
    let small = "edge is smaller than 2 (each side must be 2 to 37)";
    assert_eq!(reason("38"), big);
    assert_eq!(reason("19:38"), big);
    assert_eq!(reason("99999999999999999999999"), big);
    assert_eq!(reason("1"), small);
    assert_eq!(reason("0:9"), small);
    assert_eq!(reason("abc"), "not a number");
    assert_eq!(reason("19:"), "not a number");
    assert_eq!(reason("+9"), "not a number");
    assert_eq!(reason("9:9:9"), "not a number");
}

#[test]
fn syntax_errors_say_where() {
    use SgfErrorKind::*;
    let unexpected = |found, expected| UnexpectedChar { found, expected };
    assert_eq!(err(""), (1, 1, EmptyCollection));
    assert_eq!(err(" \n\t "), (2, 3, EmptyCollection));
    assert_eq!(err("(;B[aa]"), (1, 1, UnclosedTree));
    assert_eq!(err("(;B[aa]\n  (;W[bb]"), (2, 3, UnclosedTree));
    assert_eq!(err("(;B[aa](;W[bb])"), (1, 1, UnclosedTree));
    assert_eq!(
        err("(;B[aa]))"),
        (1, 9, unexpected(')', "'(' to start a game"))
    );
    assert_eq!(err("(B[aa])"), (1, 2, unexpected('B', "';', '(' or ')'")));
    assert_eq!(
        err("()"),
        (
            1,
            2,
            unexpected(')', "';' to start a node (empty game tree)")
        )
    );
    assert_eq!(
        err("((;B[aa]))"),
        (1, 2, unexpected('(', "';' to start a node"))
    );
    assert_eq!(err("(;C[abc"), (1, 4, UnterminatedValue));
    assert_eq!(err("(;C[abc\\]"), (1, 4, UnterminatedValue));
    assert_eq!(err("(;C[abc\\"), (1, 4, UnterminatedValue));
    assert_eq!(
        err("(;B[aa] 123 ;W[bb])"),
        (1, 9, unexpected('1', "';', '(' or ')'"))
    );
    assert_eq!(err("(;B;W[aa])"), (1, 4, MissingValue("B".into())));
    assert_eq!(err("(;B"), (1, 4, MissingValue("B".into())));
    assert_eq!(err("(;foo[1])"), (1, 3, NoUppercaseIdent("foo".into())));
    assert_eq!(
        err("(;B[aa](;W[bb]);B[cc])"),
        (
            1,
            16,
            unexpected(';', "'(' or ')': no node may follow a variation")
        )
    );
    assert_eq!(
        err("junk(;)"),
        (1, 1, unexpected('j', "'(' to start a game"))
    );
    assert_eq!(err("(;)x"), (1, 4, unexpected('x', "'(' to start a game")));
    // Columns count characters, not bytes; CRLF is one line break.
    assert_eq!(
        err("(;C[日本語]\r\n;é"),
        (2, 2, unexpected('é', "';', '(' or ')'"))
    );
}

#[test]
fn game_errors_say_where() {
    use SgfErrorKind::*;
    assert_eq!(err("(;GM[2])"), (1, 5, NotGo("2".into())));
    assert_eq!(
        err("(;SZ[9]\n;B[aa]\n;W[jj])"),
        (3, 3, bad_point("W", "jj", "off the board"))
    );
    assert_eq!(
        err("(;B[a])"),
        (1, 4, bad_point("B", "a", "a point is two letters"))
    );
    assert_eq!(
        err("(;B[a1])"),
        (1, 4, bad_point("B", "a1", "a point is two letters"))
    );
    assert_eq!(err("(;B[aa][bb])"), (1, 8, MultipleValues("B".into())));
    assert_eq!(err("(;B[aa]W[bb])"), (1, 8, TwoMovesInNode));
    assert_eq!(err("(;B[aa];AB[bb])"), (1, 9, SetupAfterMove("AB".into())));
    assert_eq!(err("(;B[aa];PL[W])"), (1, 9, SetupAfterMove("PL".into())));
    assert_eq!(err("(;PL[X])"), (1, 5, BadPlayer("X".into())));
    // Faults in variations other than the main line do not matter.
    assert!(one("(;B[aa](;W[bb])(;W[zz]))").record().is_ok());
}

#[test]
fn error_display_names_the_position() {
    let e = parse_collection("(;SZ[9]\n;B[aa").expect_err("unterminated");
    assert_eq!(
        e.to_string(),
        "SGF error at line 2, column 3: property value opened here is never closed (missing ']')"
    );
}

#[test]
fn byte_order_mark_is_skipped() {
    assert_eq!(rec("\u{feff}(;SZ[9])").x_size, 9);
}

#[test]
fn writes_the_expected_text() {
    let mut r = GameRecord::new(19, 13);
    r.komi = Some(7.5);
    r.handicap = Some(2);
    r.rules = Some("koSIMPLEscoreAREA".into());
    r.result = Some("B+R".into());
    r.player_black = Some("a]b\\c".into());
    r.setup = vec![(Color::Black, (3, 3)), (Color::White, (0, 12))];
    r.player_to_move = Some(Player::White);
    r.moves = vec![(Player::White, Some((18, 0))), (Player::Black, None)];
    assert_eq!(
        write_sgf(&r),
        "(;FF[4]GM[1]CA[UTF-8]SZ[19:13]KM[7.5]HA[2]RU[koSIMPLEscoreAREA]RE[B+R]\
         PB[a\\]b\\\\c]AB[dd]AW[am]PL[W];W[sa];B[])"
    );
    assert_eq!(one(&write_sgf(&r)).record(), Ok(r));
}

#[test]
fn written_setup_keeps_its_order() {
    let mut r = GameRecord::new(9, 9);
    r.setup = vec![
        (Color::Black, (0, 0)),
        (Color::Black, (1, 0)),
        (Color::White, (2, 0)),
        (Color::Black, (3, 0)),
        (Color::Empty, (0, 0)),
    ];
    r.player_to_move = Some(Player::Black);
    let text = write_sgf(&r);
    assert_eq!(
        text,
        "(;FF[4]GM[1]CA[UTF-8]SZ[9]AB[aa][ba]AW[ca];AB[da]AE[aa]PL[B])"
    );
    assert_eq!(one(&text).record(), Ok(r));
}

#[test]
fn tree_writer_keeps_variations() {
    let text = "(;FF[4]C[x\\]y];B[aa](;W[bb];B[cc])(;W[dd](;B[ee])(;B[ff]))(;W[gg]))";
    let t = one(text);
    assert_eq!(t.to_sgf(), text);
    assert_eq!(one(&t.to_sgf()), t);
}

#[test]
fn deep_nesting_uses_no_stack() {
    let depth = 200_000;
    let mut text = String::from("(;SZ[9]");
    for _ in 0..depth {
        text.push_str("(;B[]");
    }
    text.push_str(&")".repeat(depth + 1));
    let t = one(&text);
    assert_eq!(t.len(), depth + 1);
    assert_eq!(t.record().map(|r| r.moves.len()), Ok(depth));
    // Writing turns single-child chains into one sequence.
    let written = t.to_sgf();
    assert_eq!(written.len(), "(;SZ[9])".len() + depth * ";B[]".len());
    let unclosed = &text[..text.len() - depth / 2];
    assert!(matches!(err(unclosed).2, SgfErrorKind::UnclosedTree));
}

/// A game with most features, for mutation tests.
const SAMPLE: &str = "(;FF[4]GM[1]SZ[9:7]KM[6.5]HA[2]RU[koSIMPLEscoreAREA]RE[B+3.5]\
    PB[x]C[multi\\]\nline\\\\ \\\n soft]AB[aa:bb][ee]AW[cc]AE[aa]PL[W]\
    ;W[dd]C[0.5 0.5];B[](;W[tt];B[ab])(;W[ba]))\n(;FileFormat[3]AddBlack[ff];B[gg])";

fn check_never_panics(text: &str) {
    if let Ok(trees) = parse_collection(text) {
        for t in &trees {
            let _ = t.record();
            let _ = t.to_sgf();
        }
    }
}

fn arb_text() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        "(?s)[^\t\r\u{b}\u{c}]{0,12}".prop_map(Some),
        "[\\]\\[\\\\:;()a-z\n ]{0,8}".prop_map(Some),
    ]
}

fn arb_record() -> impl Strategy<Value = GameRecord> {
    (2usize..=25, 2usize..=25).prop_flat_map(|(xs, ys)| {
        let point = (0..xs, 0..ys);
        let color = prop_oneof![Just(Color::Black), Just(Color::White), Just(Color::Empty)];
        let player = prop_oneof![Just(Player::Black), Just(Player::White)];
        let setup = prop::collection::vec((color, point.clone()), 0..12);
        let moves = prop::collection::vec((player.clone(), prop::option::of(point)), 0..40);
        let komi = prop_oneof![
            (-400i32..400).prop_map(|k| k as f32 * 0.5),
            any::<f32>().prop_filter("finite", |k| k.is_finite()),
        ];
        let numbers = (prop::option::of(komi), prop::option::of(any::<u32>()));
        let texts = (
            (arb_text(), arb_text(), arb_text(), arb_text()),
            (arb_text(), arb_text(), arb_text(), arb_text()),
        );
        (numbers, texts, setup, prop::option::of(player), moves).prop_map(
            move |((komi, handicap), ((ru, re, pb, pw), (dt, ev, gn, c)), setup, pl, moves)| {
                GameRecord {
                    x_size: xs,
                    y_size: ys,
                    komi,
                    handicap,
                    rules: ru,
                    result: re,
                    setup,
                    player_to_move: pl,
                    moves,
                    game_comment: c,
                    player_black: pb,
                    player_white: pw,
                    date: dt,
                    event: ev,
                    game_name: gn,
                }
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        check_never_panics(&text);
    }

    #[test]
    fn sgf_like_text_never_panics(text in "[();\\[\\]\\\\ \nABCWPLSZKMtaz:é]{0,60}") {
        check_never_panics(&text);
    }

    #[test]
    fn mutated_sample_never_panics(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = SAMPLE.as_bytes().to_vec();
        for (at, op, b) in edits {
            let i = at.index(bytes.len().max(1));
            match op {
                0 if i < bytes.len() => bytes[i] = b,
                1 if i < bytes.len() => { bytes.remove(i); }
                2 => bytes.insert(i.min(bytes.len()), b"()[];\\:\nBWt"[b as usize % 11]),
                _ => bytes.truncate(cut.index(bytes.len() + 1)),
            }
        }
        check_never_panics(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn record_round_trips_through_text(r in arb_record()) {
        let text = write_sgf(&r);
        let trees = parse_collection(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(trees.len(), 1);
        prop_assert_eq!(trees[0].record(), Ok(r));
        prop_assert_eq!(trees[0].to_sgf(), text);
    }
}

#[test]
fn points_past_z_are_upper_case_letters() {
    assert_eq!(super::point(0, 0), "aa");
    assert_eq!(super::point(25, 26), "zA");
    assert_eq!(super::point(36, 36), "KK");
}
