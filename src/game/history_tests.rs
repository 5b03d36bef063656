use super::*;
use crate::game::{Area, TaxRule, WhiteHandicapBonusRule};

fn b(x: usize, y: usize, text: &str) -> Board {
    Board::from_diagram(x, y, text).unwrap()
}

/// A board from its rows, top first (one character per point, spaces
/// ignored).
fn rows(lines: &[&str]) -> Board {
    let width = lines[0].split_whitespace().count();
    b(width, lines.len(), &lines.join("\n"))
}

fn play(h: &mut BoardHistory, board: &mut Board, x: usize, y: usize, pla: Player) {
    let mv = Move::Play(board.loc(x, y));
    assert!(
        h.is_legal(board, mv, pla),
        "({x},{y}) {pla} should be legal\n{board}"
    );
    h.play(board, mv, pla);
}

fn pass(h: &mut BoardHistory, board: &mut Board, pla: Player) {
    assert!(h.is_legal(board, Move::Pass, pla));
    h.play(board, Move::Pass, pla);
}

/// KataGo's `printIllegalMoves` from its rules tests: pseudo-legal points
/// the history forbids.
fn illegal(h: &BoardHistory, board: &Board, pla: Player) -> String {
    let mut out = String::new();
    for loc in board.locs() {
        if board.get(loc) == Color::Empty
            && !board.is_illegal_suicide(loc, pla, h.rules().multi_stone_suicide_legal)
            && !h.is_legal(board, Move::Play(loc), pla)
        {
            let (x, y) = loc.xy(board.x_size());
            out.push_str(&format!("Illegal: ({x},{y}) {}\n", pla.color().symbol()));
        }
    }
    out
}

fn base_rules(ko: KoRule) -> Rules {
    Rules {
        ko_rule: ko,
        scoring_rule: ScoringRule::Territory,
        tax_rule: TaxRule::None,
        multi_stone_suicide_legal: false,
        komi: 0.5,
        ..Rules::tromp_taylor()
    }
}

/// Tromp-Taylor rules with the tax rule, scoring rule and komi the scoring
/// tests vary.
fn tax_rules(tax: TaxRule, scoring: ScoringRule, komi: f32) -> Rules {
    Rules {
        tax_rule: tax,
        scoring_rule: scoring,
        komi,
        ..Rules::tromp_taylor()
    }
}

/// A history of `board` with `pla` to move under `rules`, scored at once as
/// the board stands; also the area it scored.
fn scored_now(board: &Board, pla: Player, rules: Rules) -> (BoardHistory, Area) {
    let mut h = BoardHistory::new(board, pla, rules);
    let area = h.end_and_score_game_now(board);
    (h, area)
}

fn base_board() -> Board {
    b(
        6,
        5,
        "
        .o.xxo
        oxxxo.
        o.x.oo
        xx.oo.
        oooo.o",
    )
}

/// The "sending two returning one" cycle of KataGo's rules tests
/// (`testrules.cpp`, positional and situational ko rules), with the same
/// expected illegal moves at each step.
fn sending_two_returning_one(ko: KoRule) -> String {
    let mut board = base_board();
    let mut h = BoardHistory::new(&board, Player::Black, base_rules(ko));
    let mut out = String::new();
    use Player::{Black as B, White as W};
    play(&mut h, &mut board, 5, 1, B);
    out += "After black ko capture:\n";
    out += &illegal(&h, &board, W);
    pass(&mut h, &mut board, W);
    out += "After black ko capture and one pass:\n";
    out += &illegal(&h, &board, B);
    // A black pass now would end the main phase.
    let (mut tb, mut th) = (board.clone(), h.clone());
    pass(&mut th, &mut tb, B);
    assert_eq!(th.encore_phase(), 1);
    assert!(!th.is_game_finished());

    // The cycle: each step's move (None: a pass), its player and the line
    // KataGo prints; from the second step on, the illegal moves of the
    // player to move follow.
    let cycle = [
        (Some((3, 2)), B, "Beginning sending two returning one cycle"),
        (Some((2, 0)), W, "After white sends two?"),
        (Some((0, 0)), B, "Can white recapture?"),
        (
            Some((5, 0)),
            W,
            "After white recaptures the other ko instead",
        ),
        (
            None,
            B,
            "After white recaptures the other ko instead and black passes",
        ),
        (Some((1, 0)), W, "After white now returns 1"),
        (None, B, "After white now returns 1 and black passes"),
        (Some((2, 0)), W, "After white sends 2 again"),
    ];
    for (step, (mv, pla, line)) in cycle.into_iter().enumerate() {
        match mv {
            Some((x, y)) => play(&mut h, &mut board, x, y, pla),
            None => pass(&mut h, &mut board, pla),
        }
        out += line;
        out += "\n";
        if step > 0 {
            out += &illegal(&h, &board, pla.opp());
        }
    }
    assert_eq!(h.encore_phase(), 0);
    assert!(!h.is_game_finished());
    assert_eq!(h.num_consec_valid_turns_this_game(), 10);
    out
}

#[test]
fn positional_superko_matches_katago() {
    let expected = "After black ko capture:
Illegal: (5,0) O
After black ko capture and one pass:
Beginning sending two returning one cycle
After white sends two?
Can white recapture?
Illegal: (1,0) O
After white recaptures the other ko instead
Illegal: (5,1) X
After white recaptures the other ko instead and black passes
After white now returns 1
Illegal: (5,1) X
After white now returns 1 and black passes
After white sends 2 again
Illegal: (0,0) X
Illegal: (5,1) X
";
    assert_eq!(sending_two_returning_one(KoRule::Positional), expected);
}

#[test]
fn situational_superko_matches_katago() {
    let expected = "After black ko capture:
Illegal: (5,0) O
After black ko capture and one pass:
Beginning sending two returning one cycle
After white sends two?
Can white recapture?
After white recaptures the other ko instead
Illegal: (5,1) X
After white recaptures the other ko instead and black passes
After white now returns 1
Illegal: (5,1) X
After white now returns 1 and black passes
After white sends 2 again
Illegal: (0,0) X
";
    assert_eq!(sending_two_returning_one(KoRule::Situational), expected);
}

#[test]
fn illegal_moves_are_tolerated_but_counted() {
    let mut board = base_board();
    let mut h = BoardHistory::new(&board, Player::Black, base_rules(KoRule::Positional));
    let _ = sending_two_returning_one(KoRule::Positional);
    // Replay the same line, then force the banned move as a record would.
    for (x, y, p) in [
        (5, 1, 0),
        (9, 9, 1),
        (3, 2, 0),
        (2, 0, 1),
        (0, 0, 0),
        (5, 0, 1),
        (9, 9, 0),
        (1, 0, 1),
        (9, 9, 0),
        (2, 0, 1),
    ] {
        let pla = if p == 0 { Player::Black } else { Player::White };
        let mv = if x == 9 {
            Move::Pass
        } else {
            Move::Play(board.loc(x, y))
        };
        h.play(&mut board, mv, pla);
    }
    let banned = Move::Play(board.loc(0, 0));
    assert!(!h.is_legal(&board, banned, Player::Black));
    assert!(h.is_legal_tolerant(&board, banned, Player::Black));
    assert!(h.play_tolerant(&mut board, banned, Player::Black));
    assert_eq!(h.num_consec_valid_turns_this_game(), 0);
}

#[test]
fn simple_ko_and_out_of_turn() {
    let mut board = b(
        5,
        3,
        "
        . x o . .
        x . x o .
        . x o . .",
    );
    let mut h = BoardHistory::new(&board, Player::White, Rules::japanese());
    assert!(!h.is_legal(&board, Move::Pass, Player::Black));
    play(&mut h, &mut board, 1, 1, Player::White);
    let retake = Move::Play(board.loc(2, 1));
    assert!(!h.is_legal(&board, retake, Player::Black));
    pass(&mut h, &mut board, Player::Black);
    pass(&mut h, &mut board, Player::White);
    // Two passes under territory scoring start the encore, not the end.
    assert_eq!(h.encore_phase(), 1);
    assert!(!h.is_game_finished());
}

#[test]
fn encore_ko_recapture_block_and_pass_for_ko() {
    let mut board = b(
        5,
        3,
        "
        . x o . .
        x . x o .
        . x o . .",
    );
    use Player::{Black as B, White as W};
    let mut h = BoardHistory::new(&board, W, Rules::japanese());
    let q_hash = board.pos_hash();
    pass(&mut h, &mut board, W);
    pass(&mut h, &mut board, B);
    assert_eq!(h.encore_phase(), 1);
    let bonus0 = h.white_bonus_score();
    // White takes the ko: the capturing stone is recapture-blocked.
    play(&mut h, &mut board, 1, 1, W);
    assert_eq!(h.white_bonus_score(), bonus0 - 1.0);
    let w_stone = board.loc(1, 1);
    let retake = Move::Play(board.loc(2, 1));
    assert!(h.is_ko_recap_blocked(w_stone));
    assert_eq!(board.ko_loc(), None, "the encore absorbs the simple ko");
    // Black "retaking" is a pass-for-ko: legal, changes no stone, lifts the block.
    assert!(h.is_pass_for_ko(&board, retake, B));
    assert!(h.is_legal(&board, retake, B));
    let before = board.clone();
    h.play(&mut board, retake, B);
    assert_eq!(board, before);
    assert!(!h.is_ko_recap_blocked(w_stone));
    assert_eq!(
        h.white_bonus_score(),
        bonus0 - 1.0,
        "pass-for-ko is not a stone"
    );
    pass(&mut h, &mut board, W);
    // Now black may really retake.
    play(&mut h, &mut board, 2, 1, B);
    assert_eq!(board.pos_hash(), q_hash);
    assert!(h.is_ko_recap_blocked(board.loc(2, 1)));
    // White's capture from this very position was already made once: it is
    // banned, but a move there is still a pass-for-ko while blocked.
    let capture = Move::Play(w_stone);
    assert!(h.is_super_ko_banned(w_stone));
    assert!(h.is_pass_for_ko(&board, capture, W));
    h.play(&mut board, capture, W);
    pass(&mut h, &mut board, B);
    assert!(!h.is_pass_for_ko(&board, capture, W));
    assert!(h.is_super_ko_banned(w_stone));
    assert!(!h.is_legal(&board, capture, W));
    // Phase 2 records the stones and the game ends after two more passes.
    pass(&mut h, &mut board, W);
    assert_eq!(h.encore_phase(), 2);
    assert_eq!(h.second_encore_start_color(board.loc(2, 1)), Color::Black);
    pass(&mut h, &mut board, B);
    pass(&mut h, &mut board, W);
    assert!(h.is_game_finished() && h.is_scored());
}

#[test]
fn button_goes_to_the_first_passer() {
    let rules = Rules::parse("aga-button").unwrap();
    assert_eq!(rules.komi, 7.0);
    let board = Board::new(5, 5).unwrap();
    for (first, expected) in [(Player::Black, 6.5), (Player::White, 7.5)] {
        let mut bd = board.clone();
        let mut h = BoardHistory::new(&bd, first, rules);
        pass(&mut h, &mut bd, first);
        assert!(!h.has_button());
        assert_eq!(h.consecutive_ending_passes(), 0);
        pass(&mut h, &mut bd, first.opp());
        assert!(!h.is_game_finished());
        pass(&mut h, &mut bd, first);
        assert!(h.is_game_finished());
        assert_eq!(h.final_white_minus_black_score(), expected);
    }
    // Scored before anyone passed: the player to move gets the button.
    let mut bd = board.clone();
    let mut h = BoardHistory::new(&bd, Player::White, rules);
    play(&mut h, &mut bd, 2, 2, Player::White);
    h.end_and_score_game_now(&bd);
    assert_eq!(h.final_white_minus_black_score(), 25.0 - 0.5 + 7.0);
}

#[test]
fn white_handicap_bonus_rules() {
    let board = b(
        5,
        5,
        "
        . . . . .
        . x . x .
        . . . . .
        . x . . .
        . . . . .",
    );
    for (whb, bonus) in [
        (WhiteHandicapBonusRule::Zero, 0.0),
        (WhiteHandicapBonusRule::N, 3.0),
        (WhiteHandicapBonusRule::NMinusOne, 2.0),
    ] {
        let rules = Rules {
            white_handicap_bonus_rule: whb,
            ..Rules::tromp_taylor()
        };
        let h = BoardHistory::new(&board, Player::White, rules);
        assert_eq!(h.white_handicap_bonus_score(), bonus);
    }
    // Handicap given as consecutive black moves.
    let rules = Rules::chinese();
    let mut bd = Board::new(9, 9).unwrap();
    let mut h = BoardHistory::new(&bd, Player::Black, rules);
    h.set_assume_multiple_starting_black_moves_are_handicap(true);
    h.play(&mut bd, Move::Play(Loc::from_xy(2, 2, 9)), Player::Black);
    assert_eq!(h.white_handicap_bonus_score(), 0.0);
    h.play(&mut bd, Move::Play(Loc::from_xy(6, 6, 9)), Player::Black);
    h.play(&mut bd, Move::Play(Loc::from_xy(6, 2, 9)), Player::Black);
    assert_eq!(h.white_handicap_bonus_score(), 3.0);
    h.play(&mut bd, Move::Play(Loc::from_xy(4, 4, 9)), Player::White);
    h.play(&mut bd, Move::Play(Loc::from_xy(2, 6, 9)), Player::Black);
    assert_eq!(h.white_handicap_bonus_score(), 3.0);
    assert_eq!(BoardHistory::num_handicap_stones_on_board(&board), 3);
}

#[test]
fn seki_and_group_tax() {
    // Seki: one-point eye each, one shared liberty.
    let seki = rows(&[". x . o .", "x x x o o"]);
    // Area: 4 stones + eye vs 3 + eye; with tax the eyes drop out.
    for (tax, score) in [
        (TaxRule::None, -1.0),
        (TaxRule::Seki, -1.0),
        (TaxRule::All, -1.0),
    ] {
        let rules = tax_rules(tax, ScoringRule::Area, 0.0);
        let (h, area) = scored_now(&seki, Player::Black, rules);
        assert_eq!(h.final_white_minus_black_score(), score, "{tax:?}");
        let eye_owner = area.get(seki.loc(0, 0));
        assert_eq!(
            eye_owner,
            if tax == TaxRule::None {
                Color::Black
            } else {
                Color::Empty
            }
        );
    }
    // An independently living group pays two points under tax ALL.
    let alive = rows(&[". x . x", "x x x x"]);
    for (tax, score) in [
        (TaxRule::None, -8.0),
        (TaxRule::Seki, -8.0),
        (TaxRule::All, -6.0),
    ] {
        for scoring in [ScoringRule::Area, ScoringRule::Territory] {
            let (h, _) = scored_now(&alive, Player::White, tax_rules(tax, scoring, 0.0));
            // Territory scoring chills the 6 stones already on the board.
            let chill = if scoring == ScoringRule::Territory {
                6.0
            } else {
                0.0
            };
            assert_eq!(
                h.final_white_minus_black_score(),
                score + chill,
                "{tax:?} {scoring:?}"
            );
        }
    }
}

#[test]
fn all_pass_alive_ends_the_game() {
    let alive = rows(&[". x . x .", "x x x x x"]);
    for (tax, score) in [
        (TaxRule::None, -10.0 + 7.5),
        (TaxRule::All, -10.0 + 2.0 + 7.5),
    ] {
        let mut h = BoardHistory::new(
            &alive,
            Player::White,
            tax_rules(tax, ScoringRule::Area, 7.5),
        );
        assert!(h.end_game_if_all_pass_alive(&alive));
        assert!(h.is_game_finished());
        assert_eq!(h.final_white_minus_black_score(), score);
        assert_eq!(h.winner(), Some(Player::Black));
    }
    let open = Board::new(5, 5).unwrap();
    let mut h = BoardHistory::new(&open, Player::Black, Rules::tromp_taylor());
    assert!(!h.end_game_if_all_pass_alive(&open));
    assert!(!h.is_game_finished());
}

#[test]
fn area_game_ends_on_two_passes_and_undo_replays() {
    let mut board = Board::new(5, 5).unwrap();
    let mut h = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
    play(&mut h, &mut board, 2, 2, Player::Black);
    let after_one = board.clone();
    play(&mut h, &mut board, 1, 1, Player::White);
    assert_eq!(h.recent_board(1), &after_one);
    assert!(!h.pass_would_end_game(&board, Player::Black));
    pass(&mut h, &mut board, Player::Black);
    assert!(h.pass_would_end_game(&board, Player::White));
    pass(&mut h, &mut board, Player::White);
    assert!(h.is_game_finished());
    // Not pass-alive: both stones count and the rest is dame-less? The
    // empty region touches both colours, so only the stones score.
    assert_eq!(h.final_white_minus_black_score(), 7.5);
    assert!(h.undo(&mut board));
    assert!(!h.is_game_finished());
    assert_eq!(h.moves().len(), 3);
    assert_eq!(h.next_player(), Player::White);
    assert!(h.undo(&mut board));
    assert!(h.undo(&mut board));
    assert_eq!(board, after_one);
    assert_eq!(h.next_player(), Player::White);
}

#[test]
fn situation_hash_depends_on_player_rules_and_komi() {
    let board = Board::new(9, 9).unwrap();
    let h = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
    let base = h.situation_rules_and_ko_hash(&board, Player::Black, 0.5);
    assert_ne!(
        base,
        h.situation_rules_and_ko_hash(&board, Player::White, 0.5)
    );
    let mut k = h.clone();
    k.set_komi(6.5);
    assert_ne!(
        base,
        k.situation_rules_and_ko_hash(&board, Player::Black, 0.5)
    );
    let j = BoardHistory::new(
        &board,
        Player::Black,
        Rules {
            komi: 7.5,
            ..Rules::japanese()
        },
    );
    assert_ne!(
        base,
        j.situation_rules_and_ko_hash(&board, Player::Black, 0.5)
    );
    assert_eq!(
        base,
        h.clone()
            .situation_rules_and_ko_hash(&board, Player::Black, 0.5)
    );
}

#[test]
fn encore_phase_constructor_checks() {
    let board = Board::new(5, 5).unwrap();
    assert!(BoardHistory::new_in_encore(&board, Player::Black, Rules::tromp_taylor(), 1).is_err());
    assert!(BoardHistory::new_in_encore(&board, Player::Black, Rules::japanese(), 3).is_err());
    let h = BoardHistory::new_in_encore(&board, Player::Black, Rules::japanese(), 2).unwrap();
    assert_eq!(h.encore_phase(), 2);
    assert!(h.is_final_phase());
}

/// Three kos on one board, the first two Black's (White may take them), the
/// third White's: a triple ko, which cycles with period 6 under simple ko.
fn triple_ko_board() -> Board {
    rows(&[
        ". . o x . . . . .",
        ". o x . x . . . .",
        ". . o x . . . . .",
        ". . o x . . . . .",
        ". o x . x . . . .",
        ". . o x . . . . .",
        ". . o x . . . . .",
        ". o . o x . . . .",
        ". . o x . . . . .",
    ])
}

/// The triple ko's six captures from [`triple_ko_board`], White first:
/// each takes a ko the previous move did not.
const TRIPLE_KO_CYCLE: [(usize, usize, Player); 6] = [
    (3, 1, Player::White),
    (2, 7, Player::Black),
    (3, 4, Player::White),
    (2, 1, Player::Black),
    (3, 7, Player::White),
    (2, 4, Player::Black),
];

#[test]
fn a_triple_ko_ends_without_result_at_the_third_repetition_under_simple_ko() {
    let start = triple_ko_board();
    let rules = Rules {
        ko_rule: KoRule::Simple,
        ..Rules::tromp_taylor()
    };
    let (mut board, mut h) = (
        start.clone(),
        BoardHistory::new(&start, Player::White, rules),
    );
    // Twice round the cycle: the starting position stands for the third
    // time at the twelfth move (KataGo's rule in `makeBoardMoveAssumeLegal`).
    for turn in 0..12 {
        let (x, y, pla) = TRIPLE_KO_CYCLE[turn % 6];
        assert!(!h.is_game_finished(), "finished before move {}", turn + 1);
        play(&mut h, &mut board, x, y, pla);
    }
    assert_eq!(board.pos_hash(), start.pos_hash());
    assert!(h.is_game_finished() && h.is_no_result());

    // Going on round the cycle repeats a position a third time again...
    let (mut on_board, mut on) = (board.clone(), h.clone());
    play(&mut on, &mut on_board, 3, 1, Player::White);
    assert!(on.is_game_finished() && on.is_no_result());
    // ... while a move out of it (here White connects elsewhere) goes on.
    play(&mut h, &mut board, 7, 7, Player::White);
    assert!(!h.is_game_finished() && !h.is_no_result());

    // Under positional superko the cycle cannot close: its sixth capture
    // would make the starting position again.
    let rules = Rules {
        ko_rule: KoRule::Positional,
        ..Rules::tromp_taylor()
    };
    let (mut board, mut h) = (
        start.clone(),
        BoardHistory::new(&start, Player::White, rules),
    );
    for &(x, y, pla) in &TRIPLE_KO_CYCLE[..5] {
        play(&mut h, &mut board, x, y, pla);
    }
    let (x, y, pla) = TRIPLE_KO_CYCLE[5];
    assert!(!h.is_legal(&board, Move::Play(board.loc(x, y)), pla));
}
