use super::*;
use crate::game::AreaOptions;
use proptest::prelude::*;
use rand::rngs::StdRng as SmallRng;
use rand::{Rng, SeedableRng};

fn b(x: usize, y: usize, text: &str) -> Board {
    Board::from_diagram(x, y, text).unwrap()
}

fn at(board: &Board, x: usize, y: usize) -> Loc {
    board.loc(x, y)
}

#[test]
fn sizes_are_checked() {
    assert!(Board::new(1, 5).is_err());
    assert!(Board::new(38, 5).is_err());
    assert!(Board::new(26, 5).is_ok());
    let board = Board::new(25, 2).unwrap();
    assert_eq!(board.locs().count(), 50);
    let r = Board::new(3, 4).unwrap();
    let expected: Vec<Loc> = (0..4)
        .flat_map(|y| (0..3).map(move |x| Loc::from_xy(x, y, 3)))
        .collect();
    assert_eq!(r.locs().collect::<Vec<_>>(), expected);
    assert!(r.locs().all(|l| r.get(l) == Color::Empty));
    assert!(board.is_empty());
    assert_ne!(
        Board::new(9, 9).unwrap().pos_hash(),
        Board::new(9, 10).unwrap().pos_hash()
    );
}

#[test]
fn captures_remove_only_dead_chains() {
    let mut board = b(
        5,
        5,
        "
        . x o . .
        x o . o .
        . x o . .
        . . . . .
        . . . . .",
    );
    // Black at (2,1) captures the white stone at (1,1)? No: (1,1) has
    // liberty (2,1); filling it captures it.
    let mv = Move::Play(at(&board, 2, 1));
    assert!(board.would_be_capture(at(&board, 2, 1), Player::Black));
    assert!(board.is_legal(mv, Player::Black, false));
    board.play(mv, Player::Black);
    assert_eq!(board.get(at(&board, 1, 1)), Color::Empty);
    assert_eq!(board.num_white_captures(), 1);
    assert_eq!(board.get(at(&board, 2, 0)), Color::White);
    board.check_consistency().unwrap();
}

#[test]
fn suicide_rules() {
    let board = b(
        4,
        4,
        "
        . x o .
        x x o .
        o o . .
        . . . .",
    );
    let corner = at(&board, 0, 0);
    // Black filling its own last liberty: multi-stone suicide.
    assert!(board.is_suicide(corner, Player::Black));
    assert!(board.is_illegal_suicide(corner, Player::Black, false));
    assert!(!board.is_illegal_suicide(corner, Player::Black, true));
    // White in the corner: a lone stone with no liberties is always illegal.
    let board2 = b(
        3,
        3,
        "
        . x .
        x . .
        . . .",
    );
    let c = at(&board2, 0, 0);
    assert!(board2.is_illegal_suicide(c, Player::White, true));
    assert!(!board2.is_legal(Move::Play(c), Player::White, true));
    // Playing a legal multi-stone suicide removes the chain.
    let mut s = board.clone();
    let libs_before = s.num_liberties(at(&s, 0, 2));
    s.play(Move::Play(corner), Player::Black);
    assert_eq!(s.get(at(&s, 0, 1)), Color::Empty);
    assert_eq!(s.get(at(&s, 1, 0)), Color::Empty);
    assert_eq!(s.num_black_captures(), 4);
    assert!(s.num_liberties(at(&s, 0, 2)) > libs_before);
    s.check_consistency().unwrap();
}

#[test]
fn simple_ko_ban_and_lift() {
    let mut board = b(
        5,
        3,
        "
        . x o . .
        x . x o .
        . x o . .",
    );
    let take = Move::Play(at(&board, 1, 1));
    board.play(take, Player::White);
    assert_eq!(board.get(at(&board, 2, 1)), Color::Empty);
    assert_eq!(board.ko_loc(), Some(at(&board, 2, 1)));
    assert!(!board.is_legal(Move::Play(at(&board, 2, 1)), Player::Black, true));
    assert!(board.would_be_ko_capture(at(&board, 2, 1), Player::Black));
    assert_eq!(
        board.ko_capture_loc(at(&board, 2, 1), Player::Black),
        Some(at(&board, 1, 1))
    );
    board.play(Move::Pass, Player::Black);
    assert_eq!(board.ko_loc(), None);
    assert!(board.is_legal(Move::Play(at(&board, 2, 1)), Player::Black, true));
}

#[test]
fn simple_eye() {
    let board = b(
        4,
        4,
        "
        . x . .
        x x o .
        . . . .
        . . . .",
    );
    assert!(board.is_simple_eye(at(&board, 0, 0), Player::Black));
    assert!(!board.is_simple_eye(at(&board, 0, 0), Player::White));
    let board2 = b(
        4,
        4,
        "
        . x . .
        x o . .
        . . . .
        . . . .",
    );
    // Against the wall, one opponent diagonal is enough to spoil it.
    assert!(!board2.is_simple_eye(at(&board2, 0, 0), Player::Black));
}

#[test]
fn liberties_after_play_and_hash_after_move() {
    let board = b(
        5,
        5,
        "
        . x o . .
        x o . o .
        . x o . .
        . . . . .
        . . . . .",
    );
    let l = at(&board, 2, 1);
    // Only the point of the captured stone.
    assert_eq!(board.num_liberties_after_play(l, Player::Black, 10), 1);
    assert_eq!(
        board.num_liberties_after_play(at(&board, 3, 3), Player::Black, 10),
        4
    );
    assert_eq!(
        board.num_liberties_after_play(at(&board, 0, 2), Player::Black, 10),
        3
    );
    assert_eq!(
        board.num_liberties_after_play(at(&board, 0, 2), Player::Black, 2),
        2
    );
    let mut copy = board.clone();
    let predicted = board.pos_hash_after_move(Move::Play(l), Player::Black);
    copy.play(Move::Play(l), Player::Black);
    assert_eq!(predicted, copy.pos_hash());
}

#[test]
fn undo_restores_everything() {
    let mut rng = SmallRng::seed_from_u64(7);
    for _ in 0..30 {
        let mut board = Board::new(7, 7).unwrap();
        let mut records = Vec::new();
        let mut snapshots = Vec::new();
        let mut pla = Player::Black;
        for _ in 0..120 {
            let Some(mv) = random_legal(&board, pla, true, &mut rng) else {
                break;
            };
            snapshots.push(board.clone());
            records.push(board.play_recorded(mv, pla));
            board.check_consistency().unwrap();
            pla = pla.opp();
        }
        while let Some(rec) = records.pop() {
            board.undo(rec);
            board.check_consistency().unwrap();
            let snap = snapshots.pop().unwrap();
            assert_eq!(board, snap);
            assert_eq!(board.num_black_captures(), snap.num_black_captures());
            assert_eq!(board.num_white_captures(), snap.num_white_captures());
        }
    }
}

#[test]
fn set_stones_for_setup() {
    let mut board = Board::new(5, 5).unwrap();
    let a = at(&board, 0, 0);
    let c = at(&board, 1, 0);
    assert!(board.set_stones_fail_if_no_libs(&[(a, Color::Black), (c, Color::White)]));
    assert_eq!(board.get(a), Color::Black);
    // A placement that would capture fails.
    assert!(!board.set_stones_fail_if_no_libs(&[(at(&board, 0, 1), Color::White)]));
    let mut board = Board::new(5, 5).unwrap();
    assert!(!board.set_stones_fail_if_no_libs(&[(a, Color::Black), (a, Color::White)]));
    assert!(board.set_stone(a, Color::Black));
    assert!(board.set_stone(a, Color::Empty));
    assert!(board.is_empty());
    assert!(!board.set_stone(Loc(0), Color::Black));
    board.check_consistency().unwrap();
}

#[test]
fn benson_pass_alive_group_with_two_eyes() {
    let board = b(
        5,
        5,
        "
        . x . x .
        x x x x x
        . . . . .
        . . o . .
        . . . . .",
    );
    let area = board.calculate_area(AreaOptions::default());
    // Two real eyes: the stones and both eyes are pass-alive for black.
    assert_eq!(area.get(at(&board, 0, 0)), Color::Black);
    assert_eq!(area.get(at(&board, 2, 0)), Color::Black);
    assert_eq!(area.get(at(&board, 1, 1)), Color::Black);
    assert_eq!(area.get(at(&board, 2, 2)), Color::Empty);
    assert_eq!(area.get(at(&board, 2, 3)), Color::Empty);
    // One eye only: nothing is pass-alive.
    let one_eye = b(
        5,
        5,
        "
        . x . . .
        x x . . .
        . . . . .
        . . o . .
        . . . . .",
    );
    let area = one_eye.calculate_area(AreaOptions::default());
    assert!(one_eye.locs().all(|l| area.get(l) == Color::Empty));
    // With non-pass-alive stones and big territories: stones and the
    // one-colour region are marked, the shared region is not.
    let area = one_eye.calculate_area(AreaOptions {
        non_pass_alive_stones: true,
        safe_big_territories: true,
        unsafe_big_territories: true,
        multi_stone_suicide_legal: false,
    });
    assert_eq!(area.get(at(&one_eye, 1, 1)), Color::Black);
    assert_eq!(area.get(at(&one_eye, 0, 0)), Color::Black);
    assert_eq!(area.get(at(&one_eye, 2, 3)), Color::White);
    assert_eq!(area.get(at(&one_eye, 2, 2)), Color::Empty);
}

#[test]
fn dead_stones_inside_pass_alive_territory_count_for_the_owner() {
    // Black's wall is pass-alive (three regions all of whose points touch
    // it), so the small region holding a white stone is black's.
    let board = b(
        5,
        3,
        "
        . o x . x
        x x x x x
        . . . . .",
    );
    let area = board.calculate_area(AreaOptions {
        non_pass_alive_stones: true,
        ..AreaOptions::default()
    });
    for l in board.locs() {
        assert_eq!(area.get(l), Color::Black, "{:?}", l.xy(5));
    }
}

#[test]
fn independent_life_strips_seki() {
    // Seki: each group has a one-point eye and they share (2,0).
    let board = b(
        5,
        2,
        "
        . x . o .
        x x x o o",
    );
    let basic = board.calculate_area(AreaOptions {
        non_pass_alive_stones: true,
        safe_big_territories: true,
        unsafe_big_territories: true,
        multi_stone_suicide_legal: false,
    });
    assert_eq!(basic.get(at(&board, 0, 0)), Color::Black);
    assert_eq!(basic.get(at(&board, 4, 0)), Color::White);
    assert_eq!(basic.get(at(&board, 2, 0)), Color::Empty);
    let (area, count) = board.calculate_independent_life_area(false, false, false);
    assert_eq!(count, 0);
    assert!(board.locs().all(|l| area.get(l) == Color::Empty));
    let (stones, _) = board.calculate_independent_life_area(false, true, false);
    assert_eq!(stones.get(at(&board, 1, 0)), Color::Black);
    assert_eq!(stones.get(at(&board, 0, 0)), Color::Empty);
    let (terr, _) = board.calculate_independent_life_area(true, false, false);
    assert_eq!(terr.get(at(&board, 0, 0)), Color::Black);
    assert_eq!(terr.get(at(&board, 1, 0)), Color::Empty);

    // An independent life region: black with two eyes, no dame.
    let alive = b(
        4,
        2,
        "
        . x . x
        x x x x",
    );
    let (area, count) = alive.calculate_independent_life_area(false, false, false);
    assert_eq!(count, -1);
    assert!(alive.locs().all(|l| area.get(l) == Color::Black));
}

pub(super) fn random_legal(
    board: &Board,
    pla: Player,
    multi: bool,
    rng: &mut SmallRng,
) -> Option<Move> {
    let cands: Vec<Loc> = board
        .locs()
        .filter(|&l| board.is_legal(Move::Play(l), pla, multi) && !board.is_simple_eye(l, pla))
        .collect();
    if cands.is_empty() || rng.gen_bool(0.02) {
        return if cands.is_empty() {
            None
        } else {
            Some(Move::Pass)
        };
    }
    Some(Move::Play(cands[rng.gen_range(0..cands.len())]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random legal games keep chains, liberties and the hash equal to a
    /// recount, copies are independent, and captures take only chains left
    /// without liberties.
    #[test]
    fn random_games_keep_invariants(seed in any::<u64>(), xs in 2usize..=9, ys in 2usize..=9, multi in any::<bool>()) {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut board = Board::new(xs, ys).unwrap();
        let mut pla = Player::Black;
        for _ in 0..(xs * ys * 3) {
            let Some(mv) = random_legal(&board, pla, multi, &mut rng) else { break };
            let before = board.clone();
            let predicted = if let Move::Play(l) = mv { Some(board.pos_hash_after_move(Move::Play(l), pla)) } else { None };
            let mut copy = board.clone();
            copy.play(mv, pla);
            prop_assert_eq!(&before, &board, "playing on a copy changed the original");
            board = copy;
            prop_assert!(board.check_consistency().is_ok(), "{:?}", board.check_consistency());
            if let Some(h) = predicted {
                prop_assert_eq!(h, board.pos_hash());
            }
            // Every stone that vanished belonged to a chain whose last
            // liberty was the move (or to the mover's own chain on suicide).
            if let Move::Play(l) = mv {
                for p in before.locs() {
                    let was = before.get(p);
                    if was.player().is_some() && board.get(p) == Color::Empty {
                        prop_assert!(before.num_liberties(p) == 1 && before.is_adjacent_to_chain(l, p) || was == pla.color());
                    }
                }
            }
            pla = pla.opp();
        }
    }
}

#[test]
fn storage_is_sized_by_the_board_and_clone_from_reuses_it() {
    // 19x19 holds 20 * 21 + 1 points, whatever the largest size is.
    let mut b19 = Board::new(19, 19).unwrap();
    assert_eq!(b19.colors.len(), 421);
    assert_eq!(Board::new(37, 37).unwrap().colors.len(), 38 * 39 + 1);
    assert_eq!(Board::new(29, 19).unwrap().colors.len(), 30 * 21 + 1);
    // Same size: copied into the existing buffers (what the search does
    // every playout), no new allocation.
    let mut src = Board::new(19, 19).unwrap();
    src.play(Move::Play(src.loc(3, 3)), Player::Black);
    let ptr = b19.colors.as_ptr();
    b19.clone_from(&src);
    assert_eq!(b19.colors.as_ptr(), ptr);
    assert_eq!(b19, src);
    // Another size: the buffers follow the source.
    let big = Board::new(37, 2).unwrap();
    b19.clone_from(&big);
    assert_eq!((b19.x_size(), b19.y_size()), (37, 2));
    assert_eq!(b19, big);
    assert!(b19.check_consistency().is_ok());
}

#[test]
fn sizes_outside_2_to_37_are_refused_with_the_range() {
    for (x, y) in [(38, 19), (19, 38), (1, 9), (0, 0)] {
        let e = Board::new(x, y).unwrap_err();
        assert!(e.to_string().contains("2 to 37"), "{e}");
    }
    for (x, y) in [(37, 37), (2, 2), (29, 19), (37, 2)] {
        assert!(Board::new(x, y).is_ok(), "{x}x{y}");
    }
}
