//! Hand-made positions for input versions 3 to 6, where they differ from
//! version 7 in ways KataGo's answers on the fixture nets
//! (`tests/nn_parity.rs`) might not show.

use super::super::*;
use crate::game::Rules;

fn at(board: &Board, gtp: &str) -> Loc {
    Move::parse(gtp, board.x_size(), board.y_size())
        .unwrap()
        .loc()
        .unwrap()
}

/// Encodes in `version` into buffers full of NaN (so a value the encoder
/// forgets to write shows); returns (spatial, global).
fn encode(
    version: InputVersion,
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    params: &NnInputParams,
) -> (Vec<f32>, Vec<f32>) {
    let area = board.x_size() * board.y_size();
    let mut spatial = vec![f32::NAN; version.num_spatial_features() * area];
    let mut global = vec![f32::NAN; version.num_global_features()];
    FeatureEncoder::new().fill_row(
        version,
        board,
        hist,
        next,
        params,
        &mut spatial,
        &mut global,
    );
    assert!(spatial.iter().chain(&global).all(|v| v.is_finite()));
    (spatial, global)
}

/// The points set in `plane`, in GTP form, sorted.
fn plane_points(board: &Board, spatial: &[f32], plane: usize) -> Vec<String> {
    let (xs, ys) = (board.x_size(), board.y_size());
    let mut v: Vec<String> = board
        .locs()
        .filter(|&l| {
            let (x, y) = l.xy(xs);
            spatial[plane * xs * ys + y * xs + x] == 1.0
        })
        .map(|l| Move::Play(l).to_gtp(xs, ys))
        .collect();
    v.sort();
    v
}

fn play_all(board: &mut Board, hist: &mut BoardHistory, moves: &[(Player, &str)]) {
    for &(pla, m) in moves {
        let mv = Move::parse(m, board.x_size(), board.y_size()).unwrap();
        hist.play(board, mv, pla);
    }
}

/// Version 3 shows the whole area under area scoring (stones that are not
/// pass-alive too); version 4, and version 3 under territory scoring, only
/// pass-alive areas.
#[test]
fn version_3_area_planes_show_every_area_version_4_only_pass_alive() {
    let board = Board::from_diagram(
        7,
        5,
        ". x . x . . .
         x x x x . . .
         . x . x . o .
         x x x x . . .
         . x . x . . .",
    )
    .unwrap();
    let black_left: usize = board.locs().filter(|l| l.x(7) <= 3).count();
    let params = NnInputParams::default();
    for rules in [Rules::tromp_taylor(), Rules::japanese()] {
        let hist = BoardHistory::new(&board, Player::Black, rules);
        let (v3, _) = encode(InputVersion::V3, &board, &hist, Player::Black, &params);
        let (v4, _) = encode(InputVersion::V4, &board, &hist, Player::Black, &params);
        assert_eq!(plane_points(&board, &v4, 18).len(), black_left);
        assert!(plane_points(&board, &v4, 19).is_empty());
        assert_eq!(plane_points(&board, &v3, 18).len(), black_left);
        let white_v3 = plane_points(&board, &v3, 19);
        if rules.scoring_rule == ScoringRule::Area {
            // The lone white stone counts as white's under area scoring.
            assert_eq!(white_v3, ["F3"]);
        } else {
            assert!(white_v3.is_empty());
        }
        // Version 7 shows area only under area scoring (no tax): there it
        // counts the lone stone too.
        let (v7, _) = encode(InputVersion::V7, &board, &hist, Player::Black, &params);
        let area_v7 = plane_points(&board, &v7, 19);
        assert_eq!(
            area_v7.is_empty(),
            rules.scoring_rule == ScoringRule::Territory
        );
    }
}

/// A white stone on C4 taken by black B4 in a ko mouth (7x7); white to move.
fn ko_position() -> (Board, BoardHistory) {
    let mut board = Board::new(7, 7).unwrap();
    let mut hist = BoardHistory::new(&board, Player::Black, Rules::tromp_taylor());
    play_all(
        &mut board,
        &mut hist,
        &[
            (Player::Black, "C5"),
            (Player::White, "B5"),
            (Player::Black, "D4"),
            (Player::White, "A4"),
            (Player::Black, "C3"),
            (Player::White, "B3"),
            (Player::Black, "pass"),
            (Player::White, "C4"),
            (Player::Black, "B4"),
        ],
    );
    assert_eq!(board.ko_loc(), Some(at(&board, "C4")));
    (board, hist)
}

/// Versions 3 to 5 show the last moves whatever `maxHistory` says (KataGo's
/// `fillRowV3`..`V5` never read it); version 6 obeys it as version 7 does.
#[test]
fn versions_3_to_5_ignore_max_history() {
    let (board, hist) = ko_position();
    let no_history = NnInputParams {
        max_history: 0,
        ..NnInputParams::default()
    };
    let (v3, g3) = encode(InputVersion::V3, &board, &hist, Player::White, &no_history);
    assert_eq!(plane_points(&board, &v3, 9), ["B4"]);
    assert_eq!(plane_points(&board, &v3, 13), ["C3"]);
    assert_eq!(&g3[..5], &[0.0, 0.0, 1.0, 0.0, 0.0]);
    let (v5, g5) = encode(InputVersion::V5, &board, &hist, Player::White, &no_history);
    assert_eq!(plane_points(&board, &v5, 6), ["B4"]);
    assert_eq!(plane_points(&board, &v5, 10), ["C3"]);
    assert_eq!(g5[2], 1.0);
    let (v6, g6) = encode(InputVersion::V6, &board, &hist, Player::White, &no_history);
    assert!(plane_points(&board, &v6, 9).is_empty());
    assert_eq!(&g6[..5], &[0.0; 5]);
}

/// Version 5's layout: no liberties, the ko ban on plane 3, the history on
/// planes 6..=10, and 12 globals with komi / 15.
#[test]
fn version_5_layout() {
    let (board, hist) = ko_position();
    let (s, g) = encode(
        InputVersion::V5,
        &board,
        &hist,
        Player::White,
        &NnInputParams::default(),
    );
    assert_eq!(plane_points(&board, &s, 0).len(), 49);
    assert_eq!(plane_points(&board, &s, 1), ["A4", "B3", "B5"]);
    assert_eq!(plane_points(&board, &s, 2), ["B4", "C3", "C5", "D4"]);
    // Plane 3 is the ko ban, not the stones in atari (version 3's plane 3).
    assert_eq!(plane_points(&board, &s, 3), ["C4"]);
    for plane in [4, 5, 11, 12] {
        assert!(plane_points(&board, &s, plane).is_empty(), "plane {plane}");
    }
    let (v3, _) = encode(
        InputVersion::V3,
        &board,
        &hist,
        Player::White,
        &NnInputParams::default(),
    );
    assert_eq!(plane_points(&board, &v3, 6), ["C4"]);
    assert!(!plane_points(&board, &v3, 3).is_empty(), "stones in atari");
    assert_eq!(g.len(), 12);
    // Tromp-Taylor, komi 7.5 for white to move.
    assert_eq!(g[5], 7.5 / 15.0);
    assert_eq!(
        (g[6], g[7], g[8], g[9], g[10], g[11]),
        (1.0, 0.5, 1.0, 0.0, 0.0, 0.0)
    );
}

/// Komi: clipped to the board area plus 1 before version 7 (plus 20 in
/// version 7), over 15 in versions 3 to 5 and over 20 in version 6; the
/// parity wave sits at global 13 (versions 3, 4) or 15 (version 6).
#[test]
fn old_komi_clip_scale_and_parity_globals() {
    let board = Board::new(5, 5).unwrap();
    let mut rules = Rules::tromp_taylor();
    rules.komi = 100.0;
    let hist = BoardHistory::new(&board, Player::White, rules);
    let p = NnInputParams::default();
    let g = |v| encode(v, &board, &hist, Player::White, &p).1;
    assert_eq!(g(InputVersion::V3)[5], 26.0 / 15.0);
    assert_eq!(g(InputVersion::V5)[5], 26.0 / 15.0);
    assert_eq!(g(InputVersion::V6)[5], 26.0 / 20.0);
    assert_eq!(g(InputVersion::V7)[5], 45.0 / 20.0);
    rules.komi = 7.5;
    let hist = BoardHistory::new(&board, Player::White, rules);
    let g = |v| encode(v, &board, &hist, Player::White, &p).1;
    // 25 points: drawable komis are odd; 7.5 is half-way up from 7.
    assert_eq!(g(InputVersion::V3)[13], 0.5);
    assert_eq!(g(InputVersion::V6)[15], 0.5);
    assert_eq!(g(InputVersion::V7)[18], 0.5);
}

/// Version 6 also cuts the history at the last illegal move of the game
/// (here a multi-stone suicide under Japanese rules, replayed as a game
/// record would be); version 7 does not.
#[test]
fn version_6_cuts_history_at_an_illegal_move() {
    let mut board = Board::new(5, 5).unwrap();
    for (p, c) in [
        ("A2", Color::White),
        ("B2", Color::White),
        ("C1", Color::White),
        ("A1", Color::Black),
    ] {
        let l = at(&board, p);
        assert!(board.set_stone(l, c));
    }
    let mut hist = BoardHistory::new(&board, Player::Black, Rules::japanese());
    let suicide = Move::parse("B1", 5, 5).unwrap();
    assert!(!hist.is_legal(&board, suicide, Player::Black));
    assert!(hist.is_legal_tolerant(&board, suicide, Player::Black));
    play_all(
        &mut board,
        &mut hist,
        &[
            (Player::Black, "D4"),
            (Player::White, "D2"),
            (Player::Black, "B1"),
            (Player::White, "E4"),
        ],
    );
    assert_eq!(
        board.get(at(&board, "A1")),
        Color::Empty,
        "suicide removed A1"
    );
    let p = NnInputParams::default();
    let (v7, _) = encode(InputVersion::V7, &board, &hist, Player::Black, &p);
    assert_eq!(plane_points(&board, &v7, 9), ["E4"]);
    assert_eq!(plane_points(&board, &v7, 10), ["B1"]);
    assert_eq!(plane_points(&board, &v7, 12), ["D4"]);
    let (v6, _) = encode(InputVersion::V6, &board, &hist, Player::Black, &p);
    assert_eq!(plane_points(&board, &v6, 9), ["E4"]);
    for plane in 10..=13 {
        assert!(plane_points(&board, &v6, plane).is_empty(), "plane {plane}");
    }
}

/// A net before version 7 is shown the nearest rules it knows, as KataGo's
/// `getSupportedRules`; later nets only lose the Spight ko rule and a
/// button without area scoring.
#[test]
fn rules_old_nets_do_not_know_are_replaced() {
    let jp = Rules::japanese();
    let old = super::super::super::desc::supported_rules(6, &jp).expect("replaced");
    assert_eq!(old.ko_rule, KoRule::Situational);
    assert_eq!(old.scoring_rule, ScoringRule::Area);
    assert_eq!(old.tax_rule, TaxRule::None);
    assert_eq!(old.komi, jp.komi);
    assert_eq!(super::super::super::desc::supported_rules(7, &jp), None);
    assert_eq!(
        super::super::super::desc::supported_rules(6, &Rules::tromp_taylor()),
        None
    );
    let mut spight = Rules::tromp_taylor();
    spight.ko_rule = KoRule::Spight;
    let r = super::super::super::desc::supported_rules(17, &spight).expect("replaced");
    assert_eq!(r.ko_rule, KoRule::Situational);
}
