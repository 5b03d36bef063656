//! Hand-made positions for the input features; the exhaustive comparison
//! with KataGo's own rows is `tests/features_npz.rs`.

use super::*;
use crate::game::{Rules, MAX_LEN};

fn at(board: &Board, gtp: &str) -> Loc {
    Move::parse(gtp, board.x_size(), board.y_size())
        .unwrap()
        .loc()
        .unwrap()
}

/// Encodes with `params`; returns (spatial, global).
fn encode(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    params: &NnInputParams,
) -> (Vec<f32>, Vec<f32>) {
    let area = board.x_size() * board.y_size();
    let mut spatial = vec![f32::NAN; NUM_SPATIAL_FEATURES_V7 * area];
    let mut global = vec![f32::NAN; NUM_GLOBAL_FEATURES_V7];
    FeatureEncoder::new().fill_row_v7(board, hist, next, params, &mut spatial, &mut global);
    (spatial, global)
}

fn plane_at(board: &Board, spatial: &[f32], plane: usize, loc: Loc) -> f32 {
    let (x, y) = loc.xy(board.x_size());
    spatial[plane * board.x_size() * board.y_size() + y * board.x_size() + x]
}

/// The points set in `plane`, in GTP form, sorted.
fn plane_points(board: &Board, spatial: &[f32], plane: usize) -> Vec<String> {
    let mut v: Vec<String> = board
        .locs()
        .filter(|&l| plane_at(board, spatial, plane, l) == 1.0)
        .map(|l| Move::Play(l).to_gtp(board.x_size(), board.y_size()))
        .collect();
    v.sort();
    v
}

fn play_all(board: &mut Board, hist: &mut BoardHistory, moves: &[(Player, &str)]) {
    for &(pla, m) in moves {
        let mv = Move::parse(m, board.x_size(), board.y_size()).unwrap();
        assert!(hist.is_legal(board, mv, pla), "{m}");
        hist.play(board, mv, pla);
    }
}

/// The ladder of the KataGo vectors: white D4 with liberties D5 and E4
/// against black C4, D3, E3; `breaker` adds white Q16.
fn ladder(breaker: bool) -> Board {
    let mut b = Board::new(19, 19).unwrap();
    for p in ["C4", "D3", "E3", "Q3"] {
        let l = at(&b, p);
        b.set_stone(l, Color::Black);
    }
    for p in ["D4", "C16"]
        .iter()
        .chain(if breaker { &["Q16"][..] } else { &[] })
    {
        let l = at(&b, p);
        b.set_stone(l, Color::White);
    }
    b
}

#[test]
fn stones_liberties_and_board_planes() {
    let board = Board::from_diagram(
        5,
        4,
        "x o . . .
         x o . . .
         . . . . .
         . . . . x",
    )
    .unwrap();
    let hist = BoardHistory::new(&board, Player::White, Rules::tromp_taylor());
    let (s, _) = encode(&board, &hist, Player::White, &NnInputParams::default());
    // Every value written: no NaN left from the buffer.
    assert!(s.iter().all(|v| *v == 0.0 || *v == 1.0));
    assert_eq!(plane_points(&board, &s, 0).len(), 20);
    assert_eq!(plane_points(&board, &s, 1), ["B3", "B4"]); // white = pla
    assert_eq!(plane_points(&board, &s, 2), ["A3", "A4", "E1"]);
    assert_eq!(plane_points(&board, &s, 3), ["A3", "A4"]); // liberty A2
    assert_eq!(plane_points(&board, &s, 4), ["E1"]);
    assert_eq!(plane_points(&board, &s, 5), ["B3", "B4"]);
}

#[test]
fn working_and_broken_ladders() {
    let hist = |b: &Board| BoardHistory::new(b, Player::Black, Rules::japanese());
    let params = NnInputParams::default();
    // Black to move: white D4 (two liberties) can be laddered from D5.
    let works = ladder(false);
    let (s, _) = encode(&works, &hist(&works), Player::Black, &params);
    assert_eq!(plane_points(&works, &s, 14), ["D4"]);
    assert_eq!(plane_points(&works, &s, 17), ["D5"]);
    // No history: the previous-board ladder planes repeat the current one.
    assert_eq!(plane_points(&works, &s, 15), ["D4"]);
    assert_eq!(plane_points(&works, &s, 16), ["D4"]);

    let broken = ladder(true);
    let (s, _) = encode(&broken, &hist(&broken), Player::Black, &params);
    for plane in [14, 15, 16, 17] {
        assert!(plane_points(&broken, &s, plane).is_empty(), "plane {plane}");
    }

    // White to move after the atari: plane 14 marks the stone, but plane
    // 17 is only for the opponent's two-liberty chains.
    let mut atari = ladder(false);
    let d5 = at(&atari, "D5");
    atari.set_stone(d5, Color::Black);
    let h = BoardHistory::new(&atari, Player::White, Rules::japanese());
    let (s, _) = encode(&atari, &h, Player::White, &params);
    assert_eq!(plane_points(&atari, &s, 14), ["D4"]);
    assert!(plane_points(&atari, &s, 17).is_empty());
}

#[test]
fn ko_ban_history_and_pass_globals() {
    // 7x7: black B4 captures the white stone on C4 in a ko mouth, so white
    // may not retake at C4 at once.
    let mut board = Board::new(7, 7).unwrap();
    let mut hist = BoardHistory::new(&board, Player::Black, Rules::japanese());
    let moves = [
        (Player::Black, "C5"),
        (Player::White, "B5"),
        (Player::Black, "D4"),
        (Player::White, "A4"),
        (Player::Black, "C3"),
        (Player::White, "B3"),
        (Player::Black, "pass"),
        (Player::White, "C4"),
        (Player::Black, "B4"),
    ];
    play_all(&mut board, &mut hist, &moves);
    assert_eq!(board.ko_loc(), Some(at(&board, "C4")));
    let (s, g) = encode(&board, &hist, Player::White, &NnInputParams::default());
    assert_eq!(plane_points(&board, &s, 6), ["C4"]);
    // Last five moves, opponent's last first: B4, C4, pass, B3, C3.
    assert_eq!(plane_points(&board, &s, 9), ["B4"]);
    assert_eq!(plane_points(&board, &s, 10), ["C4"]);
    assert!(plane_points(&board, &s, 11).is_empty());
    assert_eq!(plane_points(&board, &s, 12), ["B3"]);
    assert_eq!(plane_points(&board, &s, 13), ["C3"]);
    assert_eq!(&g[..5], &[0.0, 0.0, 1.0, 0.0, 0.0]);

    // With no history allowed, only the ko ban remains.
    let params = NnInputParams {
        max_history: 0,
        ..NnInputParams::default()
    };
    let (s, g) = encode(&board, &hist, Player::White, &params);
    assert_eq!(plane_points(&board, &s, 6), ["C4"]);
    for plane in 9..=13 {
        assert!(plane_points(&board, &s, plane).is_empty());
    }
    assert_eq!(&g[..5], &[0.0; 5]);
}

#[test]
fn pass_would_end_the_game_hides_history_at_a_conservative_root() {
    // Tromp-Taylor: no friendly-pass rule (under KataGo's "chinese",
    // friendlyPassOk hides the history even without conservativePass).
    let mut board = Board::new(9, 9).unwrap();
    let mut hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
    play_all(
        &mut board,
        &mut hist,
        &[(Player::Black, "E5"), (Player::White, "pass")],
    );
    let plain = NnInputParams::default();
    let (s, g) = encode(&board, &hist, Player::Black, &plain);
    assert_eq!(g[0], 1.0, "opponent passed");
    assert_eq!(g[14], 1.0, "a black pass ends the game");
    assert_eq!(plane_points(&board, &s, 10), ["E5"]);

    let root = NnInputParams {
        conservative_pass_and_is_root: true,
        ..plain
    };
    let (s, g) = encode(&board, &hist, Player::Black, &root);
    assert_eq!(g[0], 0.0);
    assert_eq!(g[14], 0.0);
    assert!(plane_points(&board, &s, 10).is_empty());
    assert_ne!(
        nn_input_hash(&board, &hist, Player::Black, &plain),
        nn_input_hash(&board, &hist, Player::Black, &root)
    );
}

#[test]
fn pass_alive_area_under_area_scoring() {
    // Black owns the left with two eyes, white the right with two eyes.
    let board = Board::from_diagram(
        7,
        5,
        ". x . x o . o
         x x x x o o o
         . x . x o . o
         x x x x o o o
         . x . x o . o",
    )
    .unwrap();
    let hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
    let (s, g) = encode(&board, &hist, Player::Black, &NnInputParams::default());
    let left: usize = board.locs().filter(|l| l.x(7) <= 3).count();
    assert_eq!(plane_points(&board, &s, 18).len(), left);
    assert_eq!(plane_points(&board, &s, 19).len(), 35 - left);
    // Under territory scoring the area appears only in the second encore.
    let hist = BoardHistory::new(&board, Player::Black, Rules::japanese());
    let (s, _) = encode(&board, &hist, Player::Black, &NnInputParams::default());
    assert!(plane_points(&board, &s, 18).is_empty());
    assert_eq!(g[9], 0.0);
}

#[test]
fn komi_and_rules_globals() {
    let board = Board::new(9, 9).unwrap();
    let mut rules = Rules::japanese();
    rules.komi = 6.5;
    let hist = BoardHistory::new(&board, Player::Black, rules);
    let (_, g) = encode(&board, &hist, Player::Black, &NnInputParams::default());
    assert_eq!(g[5], -6.5 / 20.0);
    assert_eq!((g[6], g[7]), (0.0, 0.0), "japanese: simple ko");
    assert_eq!(
        (g[8], g[9], g[10], g[11]),
        (0.0, 1.0, 1.0, 0.0),
        "territory, seki tax"
    );
    assert_eq!(g[18], 0.0, "no parity wave under territory scoring");

    let mut rules = Rules::tromp_taylor();
    rules.komi = 7.5;
    let hist = BoardHistory::new(&board, Player::White, rules);
    let (_, g) = encode(&board, &hist, Player::White, &NnInputParams::default());
    assert_eq!(g[5], 7.5 / 20.0);
    assert_eq!((g[6], g[7]), (1.0, 0.5), "tromp-taylor: positional superko");
    assert_eq!(g[8], 1.0, "tromp-taylor: suicide allowed");
    assert_eq!((g[9], g[10]), (0.0, 0.0));
    // 81 points: drawable komis are odd; 7.5 is half-way up from 7.
    assert_eq!(g[18], 1.0 - 0.5);

    // Komi is clipped to the board area plus 20.
    let mut rules = Rules::chinese();
    rules.komi = 150.0;
    let hist = BoardHistory::new(&board, Player::White, rules);
    let (_, g) = encode(&board, &hist, Player::White, &NnInputParams::default());
    assert_eq!(g[5], (81.0 + 20.0) / 20.0);
}

#[test]
fn komi_parity_wave_is_a_triangle() {
    // Even board area: drawable komis are even.
    assert_eq!(komi_parity_wave(0.0, true), 0.0);
    assert_eq!(komi_parity_wave(0.5, true), 0.5);
    assert_eq!(komi_parity_wave(1.0, true), 0.0);
    assert_eq!(komi_parity_wave(1.5, true), -0.5);
    assert_eq!(komi_parity_wave(0.25, true), 0.25);
    assert_eq!(komi_parity_wave(-0.5, true), -0.5);
    // Odd area: shifted by one.
    assert_eq!(komi_parity_wave(1.0, false), 0.0);
    assert_eq!(komi_parity_wave(1.25, false), 0.25);
    assert_eq!(komi_parity_wave(7.5, false), 0.5);
}

#[test]
fn encore_planes_and_globals() {
    // Territory scoring: two passes start encore phase 1, two more phase 2.
    let mut board = Board::new(5, 5).unwrap();
    let mut hist = BoardHistory::new(&board, Player::Black, Rules::japanese());
    play_all(
        &mut board,
        &mut hist,
        &[
            (Player::Black, "B2"),
            (Player::White, "D4"),
            (Player::Black, "pass"),
            (Player::White, "pass"),
        ],
    );
    assert_eq!(hist.encore_phase(), 1);
    let (s, g) = encode(&board, &hist, Player::Black, &NnInputParams::default());
    assert_eq!((g[12], g[13]), (1.0, 0.0));
    assert!(plane_points(&board, &s, 20).is_empty());
    play_all(
        &mut board,
        &mut hist,
        &[(Player::Black, "pass"), (Player::White, "pass")],
    );
    assert_eq!(hist.encore_phase(), 2);
    let (s, g) = encode(&board, &hist, Player::Black, &NnInputParams::default());
    assert_eq!((g[12], g[13]), (1.0, 1.0));
    assert_eq!(plane_points(&board, &s, 20), ["B2"]);
    assert_eq!(plane_points(&board, &s, 21), ["D4"]);
    // History does not reach back into the previous phase.
    assert!(plane_points(&board, &s, 9).is_empty());
    // In the second encore the parity wave is on even for territory rules.
    assert_ne!(g[18], 0.0);
}

#[test]
fn playout_doubling_and_button_globals() {
    let board = Board::new(9, 9).unwrap();
    let hist = BoardHistory::new(&board, Player::Black, Rules::parse("aga-button").unwrap());
    let params = NnInputParams {
        playout_doubling_advantage: 1.5,
        ..NnInputParams::default()
    };
    let (_, g) = encode(&board, &hist, Player::Black, &params);
    assert_eq!((g[15], g[16], g[17]), (1.0, 0.75, 1.0));
    assert_ne!(
        nn_input_hash(&board, &hist, Player::Black, &params),
        nn_input_hash(&board, &hist, Player::Black, &NnInputParams::default())
    );
}

#[test]
fn hash_separates_what_the_net_sees() {
    let board = Board::new(9, 9).unwrap();
    let hist = BoardHistory::new(&board, Player::Black, Rules::chinese());
    let p = NnInputParams::default();
    let base = nn_input_hash(&board, &hist, Player::Black, &p);
    assert_eq!(base, nn_input_hash(&board, &hist, Player::Black, &p));
    assert_ne!(base, nn_input_hash(&board, &hist, Player::White, &p));
    let no_history = NnInputParams {
        max_history: 0,
        ..p
    };
    assert_ne!(
        base,
        nn_input_hash(&board, &hist, Player::Black, &no_history)
    );
    let mut rules = Rules::chinese();
    rules.komi = 6.5;
    let other_komi = BoardHistory::new(&board, Player::Black, rules);
    assert_ne!(base, nn_input_hash(&board, &other_komi, Player::Black, &p));
}

#[test]
fn every_board_size_encodes() {
    let mut enc = FeatureEncoder::new();
    for (x, y) in [(2, 2), (5, 9), (19, 11), (MAX_LEN, MAX_LEN)] {
        let board = Board::new(x, y).unwrap();
        let hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
        let mut s = vec![0.0; NUM_SPATIAL_FEATURES_V7 * x * y];
        let mut g = vec![0.0; NUM_GLOBAL_FEATURES_V7];
        enc.fill_row_v7(
            &board,
            &hist,
            Player::Black,
            &NnInputParams::default(),
            &mut s,
            &mut g,
        );
        assert_eq!(s[..x * y].iter().sum::<f32>(), (x * y) as f32);
    }
}
