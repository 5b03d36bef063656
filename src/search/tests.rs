//! Search tests on a tiny toy Go (area scoring, simple ko, game ends after
//! two passes or a move cap) with a stub evaluator that scores material.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;

use super::*;
use crate::game::{Color, Hash128, Loc, Move, Player};
use crate::nn::NnOutput;
use tree::Node;

#[derive(Clone)]
struct ToyGo {
    n: usize,
    board: Vec<Color>,
    next: Player,
    passes: u32,
    ko: Option<Loc>,
    history: Vec<(Player, Move)>,
    komi: f64,
    /// Friendly-pass rules: a game-ending pass is searched past.
    friendly: bool,
    /// White score bonus per policy index at the full
    /// `rootEndingBonusPoints` of 0.5 (empty: none).
    ending_bonus: Vec<f64>,
    /// Root moves `rootPruneUselessMoves` keeps out (empty: none).
    useless: Vec<bool>,
    /// Has a graph hash (graph search), else the search is a tree.
    graph: bool,
}

impl ToyGo {
    fn new(n: usize) -> ToyGo {
        ToyGo {
            n,
            board: vec![Color::Empty; (n + 1) * (n + 2) + 1],
            next: Player::Black,
            passes: 0,
            ko: None,
            history: vec![],
            komi: 0.5,
            friendly: false,
            ending_bonus: vec![],
            useless: vec![],
            graph: false,
        }
    }
    fn put(&mut self, x: usize, y: usize, c: Color) {
        self.board[Loc::from_xy(x, y, self.n).idx()] = c;
    }
    fn neighbours(&self, l: Loc) -> impl Iterator<Item = Loc> + '_ {
        let (x, y) = l.xy(self.n);
        let n = self.n;
        [(0i64, 1i64), (0, -1), (1, 0), (-1, 0)]
            .into_iter()
            .filter_map(move |(dx, dy)| {
                let (a, b) = (x as i64 + dx, y as i64 + dy);
                (a >= 0 && b >= 0 && a < n as i64 && b < n as i64)
                    .then(|| Loc::from_xy(a as usize, b as usize, n))
            })
    }
    /// The chain at `l` and its liberty count.
    fn chain(&self, l: Loc) -> (Vec<Loc>, usize) {
        let c = self.board[l.idx()];
        let (mut seen, mut stack, mut libs) = (vec![l], vec![l], vec![]);
        while let Some(p) = stack.pop() {
            for q in self.neighbours(p) {
                let qc = self.board[q.idx()];
                if qc == c && !seen.contains(&q) {
                    seen.push(q);
                    stack.push(q);
                } else if qc == Color::Empty && !libs.contains(&q) {
                    libs.push(q);
                }
            }
        }
        (seen, libs.len())
    }
    fn try_play(&self, l: Loc) -> Option<(ToyGo, usize)> {
        if self.board[l.idx()] != Color::Empty || Some(l) == self.ko {
            return None;
        }
        let mut g = self.clone();
        g.board[l.idx()] = self.next.color();
        let mut captured = vec![];
        for q in self.neighbours(l) {
            if g.board[q.idx()] == self.next.opp().color() {
                let (ch, libs) = g.chain(q);
                if libs == 0 {
                    for s in &ch {
                        g.board[s.idx()] = Color::Empty;
                    }
                    captured.extend(ch);
                }
            }
        }
        if g.chain(l).1 == 0 {
            return None;
        }
        g.ko = (captured.len() == 1 && g.chain(l).0.len() == 1 && g.chain(l).1 == 1)
            .then(|| captured[0]);
        Some((g, captured.len()))
    }
    fn material(&self) -> f64 {
        let mut s = self.komi;
        for c in &self.board {
            match c {
                Color::White => s += 1.0,
                Color::Black => s -= 1.0,
                _ => {}
            }
        }
        s
    }
}

impl SearchState for ToyGo {
    fn x_size(&self) -> usize {
        self.n
    }
    fn y_size(&self) -> usize {
        self.n
    }
    fn next_player(&self) -> Player {
        self.next
    }
    fn is_legal(&self, mv: Move) -> bool {
        match mv {
            Move::Pass => true,
            Move::Play(l) => self.try_play(l).is_some(),
        }
    }
    fn play(&mut self, mv: Move) {
        let pla = self.next;
        match mv {
            Move::Pass => {
                self.passes += 1;
                self.ko = None;
                self.next = pla.opp();
            }
            Move::Play(l) => {
                if let Some((g, _)) = self.try_play(l) {
                    *self = g;
                    self.passes = 0;
                    self.next = pla.opp();
                }
            }
        }
        self.history.push((pla, mv));
    }
    fn outcome(&self) -> Option<Outcome> {
        if self.passes >= 2 || self.history.len() >= 40 {
            let s = self.material();
            let winner = if s > 0.0 {
                Some(Player::White)
            } else if s < 0.0 {
                Some(Player::Black)
            } else {
                None
            };
            return Some(Outcome::Scored {
                winner,
                white_minus_black: s,
            });
        }
        None
    }
    fn turn_number(&self) -> usize {
        self.history.len()
    }
    fn last_move(&self) -> Option<(Player, Move)> {
        self.history.last().copied()
    }
    fn pass_would_end_game(&self) -> bool {
        self.passes >= 1
    }
    fn friendly_pass_continues(&self) -> bool {
        self.friendly && self.passes == 1
    }
    fn useless_root_moves(&self) -> Vec<bool> {
        self.useless.clone()
    }
    fn ending_score_bonuses(&self, _white_ownership: &[f32], points: f64) -> Vec<f64> {
        self.ending_bonus.iter().map(|b| b * points / 0.5).collect()
    }
    fn color_at(&self, loc: Loc) -> Color {
        self.board[loc.idx()]
    }
    fn in_atari(&self, loc: Loc) -> bool {
        self.board[loc.idx()] != Color::Empty && self.chain(loc).1 == 1
    }
    fn ko_loc(&self) -> Option<Loc> {
        self.ko
    }
    fn chain_liberties(&self, loc: Loc) -> usize {
        if self.board[loc.idx()] == Color::Empty {
            0
        } else {
            self.chain(loc).1
        }
    }
    fn adjacent_to_chain(&self, loc: Loc, chain: Loc) -> bool {
        self.board[chain.idx()] != Color::Empty
            && self
                .neighbours(loc)
                .any(|q| self.chain(chain).0.contains(&q))
    }
    fn mirror_status(&self) -> MirrorStatus {
        let moves: Vec<(Move, Player)> = self.history.iter().map(|&(p, m)| (m, p)).collect();
        MirrorStatus::detect(&MirrorGame {
            moves: &moves,
            root_pla: self.next,
            x_size: self.n,
            y_size: self.n,
            area_scoring: true,
            handicap_stones: 0,
            white_handicap_bonus: crate::game::WhiteHandicapBonusRule::Zero,
            komi: self.komi,
            color_at: |loc| self.board[loc.idx()],
        })
    }
    fn graph_hash(&self, _prev: Hash128, _rep_bound: usize, _draw: f64) -> Option<Hash128> {
        // The position, the passes and the move count (the game ends at 40
        // moves): no path, no cycles to fear in these short games.
        self.graph.then(|| {
            Hash128(
                (u128::from(self.position_hash()) << 64)
                    ^ (u128::from(self.passes) << 8)
                    ^ self.history.len() as u128,
            )
        })
    }
    fn position_hash(&self) -> u64 {
        self.board.iter().fold(self.next as u64, |h, &c| {
            h.wrapping_mul(31).wrapping_add(c as u64)
        })
    }
}

/// Uniform policy over legal moves (or, as a stand-in human net, 0.9 on
/// one favourite move); value = sigmoid of material.
struct MaterialEval {
    rows: AtomicU64,
    delay: Duration,
    favourite: Option<Move>,
}

impl MaterialEval {
    fn new() -> Arc<MaterialEval> {
        Arc::new(MaterialEval {
            rows: AtomicU64::new(0),
            delay: Duration::ZERO,
            favourite: None,
        })
    }

    /// A "human net" that plays `favourite` wherever it is legal.
    fn favouring(favourite: Move) -> Arc<MaterialEval> {
        Arc::new(MaterialEval {
            rows: AtomicU64::new(0),
            delay: Duration::ZERO,
            favourite: Some(favourite),
        })
    }
}

impl PositionEvaluator<ToyGo> for MaterialEval {
    fn evaluate(&self, s: &ToyGo, opts: &EvalOptions) -> Result<Arc<NnOutput>, EvalError> {
        self.rows.fetch_add(1, Ordering::Relaxed);
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        let n = s.n;
        let mut policy: Vec<f32> = (0..n * n)
            .map(|i| {
                if s.is_legal(Move::Play(Loc::from_xy(i % n, i / n, n))) {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        policy.push(1.0);
        let legal = policy.iter().filter(|&&p| p > 0.0).count() as f32;
        policy
            .iter_mut()
            .filter(|p| **p > 0.0)
            .for_each(|p| *p /= legal);
        if let Some(fav) = self.favourite {
            let i = fav.policy_index(n, n);
            if policy[i] > 0.0 && legal > 1.0 {
                for p in policy.iter_mut().filter(|p| **p > 0.0) {
                    *p = 0.1 / (legal - 1.0);
                }
                policy[i] = 0.9;
            }
        }
        let m = s.material();
        let win = 1.0 / (1.0 + (-0.8 * m).exp());
        Ok(Arc::new(NnOutput {
            x_size: n,
            y_size: n,
            policy,
            white_win_prob: win as f32,
            white_loss_prob: 1.0 - win as f32,
            white_no_result_prob: 0.0,
            white_score_mean: m as f32,
            white_score_mean_sq: (m * m + 4.0) as f32,
            white_lead: m as f32,
            var_time_left: -1.0,
            shortterm_winloss_error: 0.2,
            shortterm_score_error: 2.0,
            white_ownership: opts.include_ownership.then(|| vec![0.0; n * n]),
        }))
    }
    fn stats(&self) -> EvalStats {
        EvalStats {
            rows: self.rows.load(Ordering::Relaxed),
            ..EvalStats::default()
        }
    }
}

fn params(visits: i64, threads: i32) -> SearchParams {
    let mut p = SearchParams::defaults(SetupFor::Gtp);
    p.max_visits = visits;
    p.num_threads = threads;
    p.min_playouts_per_thread = 0.0;
    p
}

/// Black to move; the white stone at (2,2) is in atari with its last liberty at (2,3).
fn capture_position() -> ToyGo {
    let mut g = ToyGo::new(5);
    g.put(2, 2, Color::White);
    g.put(1, 2, Color::Black);
    g.put(3, 2, Color::Black);
    g.put(2, 1, Color::Black);
    g.history
        .push((Player::White, Move::Play(Loc::from_xy(2, 2, 5))));
    g
}

#[test]
fn finds_the_capture() {
    let mut s = Search::new(params(300, 1), MaterialEval::new(), capture_position(), 1);
    s.run(&RunOptions::default()).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let mut p = s.params().clone();
    p.chosen_move_temperature = 0.0;
    p.chosen_move_temperature_early = 0.0;
    s.set_params(p);
    let mv = s.view().chosen_move(&mut rng).unwrap();
    assert_eq!(mv, Move::Play(Loc::from_xy(2, 3, 5)), "{}", mv.to_gtp(5, 5));
    let infos = s.view().move_infos(5, false);
    assert_eq!(infos[0].mv, mv);
    assert!(infos[0].winrate > 0.5, "{}", infos[0].winrate);
}

#[test]
fn avoids_self_atari_for_white() {
    // White to move; a white stone at (2,3) would be self-atari-captured at once.
    let mut g = capture_position();
    g.board.iter_mut().for_each(|c| {
        if *c == Color::White {
            *c = Color::Empty
        }
    });
    g.next = Player::White;
    let mut s = Search::new(params(400, 1), MaterialEval::new(), g, 3);
    s.run(&RunOptions::default()).unwrap();
    let infos = s.view().move_infos(3, false);
    let self_atari = Move::Play(Loc::from_xy(2, 2, 5));
    assert_ne!(infos[0].mv, self_atari);
}

#[test]
fn one_thread_with_a_seed_repeats_exactly() {
    let run = || {
        let mut p = params(200, 1);
        p.root_noise_enabled = true;
        p.wide_root_noise = 0.05;
        let mut s = Search::new(p, MaterialEval::new(), capture_position(), 42);
        s.run(&RunOptions::default()).unwrap();
        s.view().move_infos(6, true)
    };
    assert_eq!(run(), run());
}

#[test]
fn many_threads_stop_at_exactly_max_visits_with_consistent_stats() {
    let mut s = Search::new(params(700, 6), MaterialEval::new(), ToyGo::new(5), 5);
    let stats = s.run(&RunOptions::default()).unwrap();
    assert_eq!(stats.root_visits, 700);
    let view = s.view();
    let child_visits: i64 = view.move_infos(1, false).iter().map(|m| m.visits).sum();
    assert_eq!(child_visits + 1, 700);
    let root = view.root_info().unwrap();
    assert!(root.winrate > 0.0 && root.winrate < 1.0);
    // Playing the best move keeps its subtree.
    let best = view.move_infos(1, false)[0].clone();
    assert!(s.make_move(best.mv));
    assert_eq!(s.view().root_values().visits, best.visits);
    let stats = s.run(&RunOptions::default()).unwrap();
    assert_eq!(stats.root_visits, 700);
    assert_eq!(stats.playouts, 700 - best.visits);
}

#[test]
fn stop_flag_ends_pondering_quickly() {
    let eval = Arc::new(MaterialEval {
        rows: AtomicU64::new(0),
        favourite: None,
        delay: Duration::from_micros(200),
    });
    let mut s = Search::new(params(1 << 40, 2), eval, ToyGo::new(5), 9);
    let stop = AtomicBool::new(false);
    let calls = AtomicU64::new(0);
    let cb = |v: &SearchView<'_>| {
        let _ = v.move_infos(3, false);
        calls.fetch_add(1, Ordering::Relaxed);
    };
    let start = Instant::now();
    std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(150));
            stop.store(true, Ordering::Release);
        });
        let opts = RunOptions {
            pondering: true,
            stop: Some(&stop),
            callback: Some(&cb),
            callback_period: Some(Duration::from_millis(20)),
            ..RunOptions::default()
        };
        s.run(&opts).unwrap();
    });
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(calls.load(Ordering::Relaxed) >= 2);
    assert!(s.last_stats().playouts > 10);
}

/// KataGo's `firstReportDuringSearchAfter` without `reportDuringSearchEvery`:
/// the first callback comes, no second one, and a period too long for the
/// clock does not break the search.
#[test]
fn a_first_callback_alone_comes_once() {
    let eval = Arc::new(MaterialEval {
        rows: AtomicU64::new(0),
        favourite: None,
        delay: Duration::from_micros(500),
    });
    let mut s = Search::new(params(200, 1), eval, ToyGo::new(5), 9);
    let calls = AtomicU64::new(0);
    let cb = |_: &SearchView<'_>| {
        calls.fetch_add(1, Ordering::Relaxed);
    };
    let opts = RunOptions {
        callback: Some(&cb),
        callback_period: Some(Duration::MAX),
        first_callback_after: Some(Duration::from_millis(10)),
        ..RunOptions::default()
    };
    let stats = s.run(&opts).unwrap();
    assert_eq!(stats.root_visits, 200);
    assert_eq!(calls.load(Ordering::Relaxed), 1);
}

#[test]
fn time_limit_and_ownership() {
    let mut s = Search::new(params(1 << 40, 1), MaterialEval::new(), ToyGo::new(5), 2);
    s.set_include_ownership(true);
    let stats = s
        .run(&RunOptions {
            max_time: Some(0.1),
            ..RunOptions::default()
        })
        .unwrap();
    assert!(stats.seconds < 1.5 && stats.playouts > 0);
    let (own, stdev) = s.view().ownership().unwrap();
    assert_eq!(own.len(), 25);
    assert!(stdev.iter().all(|x| *x >= 0.0));
}

#[test]
fn move_infos_follow_katago_lcb_pv_and_ownership_rules() {
    let mut s = Search::new(params(400, 1), MaterialEval::new(), capture_position(), 7);
    s.set_include_ownership(true);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    let p = s.params();
    let infos = view.move_infos(6, true);
    assert!(infos.len() >= 2);
    let share = 0.5 * p.win_loss_utility_factor
        / (p.win_loss_utility_factor
            + p.static_score_utility_factor
            + p.dynamic_score_utility_factor);
    for (i, m) in infos.iter().enumerate() {
        assert_eq!(m.order, i);
        // lcb is the winrate less the utility radius on the winrate scale.
        let radius = m.utility - m.utility_lcb;
        assert!(radius > 0.0, "{m:?}");
        assert!((m.lcb - (m.winrate - radius * share)).abs() < 1e-9, "{m:?}");
        assert_eq!(m.pv[0], m.mv);
        assert_eq!(m.pv_visits[0], m.visits);
        assert_eq!(m.pv_edge_visits, m.pv_visits);
        // Visits fall along a PV: each node's child has fewer visits.
        assert!(
            m.pv_visits.windows(2).all(|w| w[1] < w[0]),
            "{:?}",
            m.pv_visits
        );
        let (own, stdev) = (
            m.ownership.as_ref().unwrap(),
            m.ownership_stdev.as_ref().unwrap(),
        );
        assert_eq!((own.len(), stdev.len()), (25, 25));
        assert!(stdev.iter().all(|&x| (0.0..=1.0).contains(&x)));
    }
    // Sorted by play selection value.
    assert!(infos
        .windows(2)
        .all(|w| w[0].play_selection_value >= w[1].play_selection_value));
    // The root's tree ownership is a proper weighted average: with a stub
    // net whose ownership is all zero it is zero with zero spread.
    let (mean, stdev) = view.ownership().unwrap();
    assert!(mean.iter().chain(&stdev).all(|&x| x.abs() < 1e-12));
}

#[test]
fn print_tree_prints_katago_lines_for_the_root_and_its_children() {
    let mut s = Search::new(params(200, 1), MaterialEval::new(), capture_position(), 3);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    // printTree shows the node's own values (not the pruned ones analysis
    // reports); White's, here from Black's view.
    let root = view.root_values();
    let black_utility = -root.utility;
    let infos = view.move_infos(8, false);
    let text = view.print_tree(&PrintTreeOptions::default(), Player::Black);
    let lines: Vec<&str> = text.lines().collect();
    // The root: its values from Black's view (Black is to move), visits
    // and the PV the best move starts.
    assert!(
        lines[0].starts_with(&format!(": T {:6.2}c W ", black_utility * 100.0)),
        "{text}"
    );
    let best_pv: Vec<String> = infos[0].pv[..7].iter().map(|m| m.to_gtp(5, 5)).collect();
    assert!(
        lines[0].ends_with(&format!("N {:7}  --  {}", root.visits, best_pv.join(" "))),
        "{text}"
    );
    assert!(!lines[0].contains("LCB") && !lines[0].contains(" P ") && !lines[0].contains("WF"));
    assert_eq!(lines[1], "---Black(^)---");
    // One line per child, in `move_infos`' order, with its figures.
    assert_eq!(lines.len(), 2 + infos.len(), "{text}");
    let mut weight_factors = 0.0;
    for (line, info) in lines[2..].iter().zip(&infos) {
        let pv: Vec<String> = info.pv.iter().map(|m| m.to_gtp(5, 5)).collect();
        let name = info.mv.to_gtp(5, 5);
        assert!(
            line.starts_with(&format!("{name:<3} : T {:6.2}c ", info.utility * 100.0)),
            "{line}"
        );
        assert!(
            line.contains(&format!(" P {:5.2}% WF ", info.prior * 100.0)),
            "{line}"
        );
        assert!(
            line.ends_with(&format!(
                "PSV {:7.0} N {:7}  --  {}",
                info.play_selection_value,
                info.visits,
                pv.join(" ")
            )),
            "{line}"
        );
        let wf = line
            .split("WF ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        weight_factors += wf.parse::<f64>().unwrap();
    }
    // The weight factors share out the children's weight (rounded to 0.1).
    let children_weight: f64 = infos.iter().map(|m| m.weight).sum();
    assert!(
        (weight_factors - children_weight).abs() <= 0.05 * infos.len() as f64 + 1e-9,
        "{weight_factors} vs {children_weight}"
    );
    // White's view negates the values and marks Black's turn as the
    // other side's.
    let white = view.print_tree(&PrintTreeOptions::default(), Player::White);
    assert!(
        white.starts_with(&format!(": T {:6.2}c W ", root.utility * 100.0)),
        "{white}"
    );
    assert_eq!(white.lines().nth(1), Some("---Black(v)---"));
}

#[test]
fn print_tree_follows_a_branch_and_expands_below_it() {
    let mut s = Search::new(params(200, 1), MaterialEval::new(), capture_position(), 3);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    let best = view.move_infos(8, false)[0].clone();
    let name = best.mv.to_gtp(5, 5);
    let opts = PrintTreeOptions {
        branch: vec![best.mv],
        ..PrintTreeOptions::default()
    };
    let text = view.print_tree(&opts, Player::Black);
    let lines: Vec<&str> = text.lines().collect();
    // The root, the branch's move alone, then White's replies below it.
    assert!(lines[0].starts_with(": T "), "{text}");
    assert!(lines[1].starts_with(&format!("{name:<3} : ")), "{text}");
    assert_eq!(lines[2], "---White(v)---");
    let replies = &lines[3..];
    assert!(!replies.is_empty());
    let mut reply_visits = 0;
    for line in replies {
        assert!(line.starts_with(&format!("{name:<3} ")), "{line}");
        let n = line
            .split(" N ")
            .nth(1)
            .unwrap()
            .split("--")
            .next()
            .unwrap();
        reply_visits += n.trim().parse::<i64>().unwrap();
    }
    // A tree search: the node's own visit and its children's make its visits.
    assert_eq!(reply_visits + 1, best.visits, "{text}");
    // A branch the tree does not have: the root line alone. (Two visits
    // make one child.)
    let mut small = Search::new(params(2, 1), MaterialEval::new(), capture_position(), 3);
    small.run(&RunOptions::default()).unwrap();
    let child = small.view().move_infos(8, false)[0].mv;
    let other = [Move::Pass, Move::Play(Loc::from_xy(0, 0, 5))]
        .into_iter()
        .find(|&m| m != child)
        .unwrap();
    let off_tree = PrintTreeOptions {
        branch: vec![other],
        ..PrintTreeOptions::default()
    };
    let text = small.view().print_tree(&off_tree, Player::Black);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with(": T ") && text.contains(&format!("N {:7}  --  ", 2)));
    // An unsearched root prints nothing.
    let fresh = Search::new(params(10, 1), MaterialEval::new(), capture_position(), 3);
    assert_eq!(
        fresh
            .view()
            .print_tree(&PrintTreeOptions::default(), Player::Black),
        ""
    );
}

/// As KataGo's root (a copy of the child made without its subtree bias
/// entry): the promoted child's share leaves the bias table and the new
/// root takes no bias.
#[test]
fn a_promoted_root_gives_up_its_subtree_bias_entry() {
    let mut p = params(300, 1);
    p.subtree_value_bias_factor = 0.45;
    p.subtree_value_bias_free_prop = 0.8;
    let mut s = Search::new(p, MaterialEval::new(), capture_position(), 5);
    s.run(&RunOptions::default()).unwrap();
    // A root child with a grandchild below it holds an entry with sums.
    let (mv, entry, last) = {
        let children = s.view().root.children();
        let c = children
            .iter()
            .find(|c| !c.node.children().is_empty() && c.node.bias.lock().entry.is_some())
            .expect("a searched child with a bias entry");
        let b = c.node.bias.lock();
        (
            c.mv,
            b.entry.clone().unwrap(),
            (b.last_delta_sum, b.last_weight),
        )
    };
    let before = entry.get();
    assert!(last.1 > 0.0);
    assert!(s.make_move(mv));
    assert!(s.view().root.bias.lock().entry.is_none());
    let after = entry.get();
    assert!(
        (after.0 - (before.0 - 0.8 * last.0)).abs() < 1e-9,
        "{before:?} {after:?} {last:?}"
    );
    assert!(
        (after.1 - (before.1 - 0.8 * last.1)).abs() < 1e-9,
        "{before:?} {after:?} {last:?}"
    );
}

/// Each live node's bias entry and last contribution, once per node.
fn live_bias_shares(root: &Node) -> Vec<(Arc<BiasEntry>, f64, f64)> {
    let share = |n: &Node| {
        let b = n.bias.lock();
        b.entry
            .clone()
            .map(|e| (e, b.last_delta_sum, b.last_weight))
    };
    let mut shares: Vec<_> = share(root).into_iter().collect();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<Arc<Node>> = root.children().iter().map(|c| c.node.clone()).collect();
    while let Some(n) = stack.pop() {
        if seen.insert(Arc::as_ptr(&n)) {
            shares.extend(share(&n));
            stack.extend(n.children().iter().map(|c| c.node.clone()));
        }
    }
    shares
}

/// KataGo's sweep after a move takes every deleted node's share out of the
/// subtree bias table: with `subtreeValueBiasFreeProp` 1, each entry still
/// in use then holds exactly the shares of the nodes the new root reaches,
/// with graph search (the sweep) and without (the dropped subtrees).
#[test]
fn after_a_move_the_bias_table_holds_only_live_nodes_shares() {
    for graph in [true, false] {
        let mut g = ToyGo::new(9);
        g.graph = graph;
        let mut p = params(1500, 1);
        p.use_graph_search = graph;
        p.subtree_value_bias_factor = 0.45;
        p.subtree_value_bias_free_prop = 1.0;
        let mut s = Search::new(p, MaterialEval::new(), g, 5);
        s.run(&RunOptions::default()).unwrap();
        let best = s.view().move_infos(8, false)[0].mv;
        let sibling_entries = {
            let children = s.view().root.children();
            let kept = live_bias_shares(&children.iter().find(|c| c.mv == best).unwrap().node);
            live_bias_shares(s.view().root).len() - kept.len()
        };
        assert!(sibling_entries > 0, "graph {graph}: siblings with entries");
        assert!(s.make_move(best));
        let shares = live_bias_shares(s.view().root);
        assert!(!shares.is_empty(), "graph {graph}");
        let mut by_entry: Vec<(Arc<BiasEntry>, f64, f64)> = Vec::new();
        for (e, d, w) in shares {
            match by_entry.iter_mut().find(|(x, _, _)| Arc::ptr_eq(x, &e)) {
                Some(slot) => {
                    slot.1 += d;
                    slot.2 += w;
                }
                None => by_entry.push((e, d, w)),
            }
        }
        for (e, d, w) in &by_entry {
            let (td, tw) = e.get();
            assert!(
                (td - d).abs() < 1e-9 && (tw - w).abs() < 1e-9,
                "graph {graph}: table ({td}, {tw}), live nodes ({d}, {w})"
            );
        }
    }
}

/// KataGo's `recursivelyRecomputeStats` when a tree is reused: a node
/// without children gets the utility of its values under the current
/// utility function, without the subtree bias it was evaluated with.
#[test]
fn reuse_recomputes_a_leaf_without_its_subtree_bias() {
    for graph in [true, false] {
        let mut g = capture_position();
        g.graph = graph;
        let mut p = params(400, 1);
        p.use_graph_search = graph;
        p.subtree_value_bias_factor = 0.45;
        // Utility is the win-loss value alone, so a leaf's is checkable.
        p.static_score_utility_factor = 0.0;
        p.dynamic_score_utility_factor = 0.0;
        let mut s = Search::new(p.clone(), MaterialEval::new(), g, 5);
        s.run(&RunOptions::default()).unwrap();
        let best = s.view().move_infos(8, false)[0].mv;
        assert!(s.make_move(best));
        let leaves = |root: &Node| {
            let mut out = Vec::new();
            let mut stack: Vec<Arc<Node>> =
                root.children().iter().map(|c| c.node.clone()).collect();
            while let Some(n) = stack.pop() {
                let kids: Vec<Arc<Node>> = n.children().iter().map(|c| c.node.clone()).collect();
                if kids.is_empty() && n.values().weight_sum > 0.0 {
                    out.push(n.values());
                }
                stack.extend(kids);
            }
            out
        };
        let biased = leaves(s.view().root)
            .iter()
            .filter(|v| (v.utility - v.win_loss).abs() > 1e-9)
            .count();
        assert!(biased > 0, "graph {graph}: leaves evaluated with a bias");
        // No playout: the search only begins, recomputing the tree.
        p.max_visits = 1;
        s.set_params(p);
        s.run(&RunOptions::default()).unwrap();
        let found = leaves(s.view().root);
        assert!(!found.is_empty());
        for v in found {
            assert!(
                (v.utility - v.win_loss).abs() < 1e-12,
                "graph {graph}: {v:?}"
            );
        }
    }
}

/// Evaluates as [`MaterialEval`] and records one field of each
/// evaluation's options: `(moves in the state, pick(options))`.
struct OptionsRecorder<T> {
    inner: Arc<MaterialEval>,
    pick: fn(&EvalOptions) -> T,
    seen: parking_lot::Mutex<Vec<(usize, T)>>,
}

impl<T> OptionsRecorder<T> {
    fn new(pick: fn(&EvalOptions) -> T) -> Arc<Self> {
        Arc::new(OptionsRecorder {
            inner: MaterialEval::new(),
            pick,
            seen: parking_lot::Mutex::new(Vec::new()),
        })
    }
}

/// Searches [`capture_position`] with `p` (one thread) and returns what
/// an [`OptionsRecorder`] with `pick` saw.
fn recorded_search<T: Send + 'static>(
    p: SearchParams,
    pick: fn(&EvalOptions) -> T,
) -> Vec<(usize, T)> {
    let eval = OptionsRecorder::new(pick);
    let mut s = Search::new(p, eval.clone(), capture_position(), 1);
    s.run(&RunOptions::default()).unwrap();
    let seen = std::mem::take(&mut *eval.seen.lock());
    seen
}

impl<T: Send + 'static> PositionEvaluator<ToyGo> for OptionsRecorder<T> {
    fn evaluate(&self, s: &ToyGo, opts: &EvalOptions) -> Result<Arc<NnOutput>, EvalError> {
        self.seen.lock().push((s.history.len(), (self.pick)(opts)));
        self.inner.evaluate(s, opts)
    }
}

/// KataGo's `maxHistory`: with `ignorePreRootHistory` the root shows no
/// history and a node below it only the moves played since the root; with
/// `ignoreAllHistory` none; otherwise all.
#[test]
fn ignoring_pre_root_history_shows_the_moves_since_the_root() {
    let root_moves = capture_position().history.len();
    assert!(root_moves > 0);
    for (pre_root, all) in [(true, false), (false, false), (false, true)] {
        let mut p = params(60, 1);
        p.ignore_pre_root_history = pre_root;
        p.ignore_all_history = all;
        let seen = recorded_search(p, |o| o.max_history);
        assert!(
            seen.iter().any(|&(n, _)| n >= root_moves + 2),
            "a node two moves down"
        );
        for &(moves, max_history) in seen.iter() {
            let want = if all {
                Some(0)
            } else if pre_root {
                Some(moves - root_moves)
            } else {
                None
            };
            assert_eq!(
                max_history, want,
                "{moves} moves, pre_root {pre_root}, all {all}"
            );
        }
    }
}

/// `numSymmetriesToSample` (the engine's own key) sets the symmetries
/// averaged below the root; the root takes the larger of it and KataGo's
/// `rootNumSymmetriesToSample`.
#[test]
fn symmetries_to_sample_apply_below_the_root_and_the_root_takes_the_larger() {
    let root_moves = capture_position().history.len();
    for (root, every, want_root, want_below) in
        [(1, 1, 1, 1), (2, 1, 2, 1), (1, 4, 4, 4), (8, 4, 8, 4)]
    {
        let mut p = params(40, 1);
        p.root_num_symmetries_to_sample = root;
        p.num_symmetries_to_sample = every;
        let seen = recorded_search(p, |o| o.num_symmetries);
        assert!(seen.iter().any(|&(n, _)| n == root_moves), "the root");
        assert!(seen.iter().any(|&(n, _)| n > root_moves), "a node below");
        for &(moves, n) in seen.iter() {
            let want = if moves == root_moves {
                want_root
            } else {
                want_below
            };
            assert_eq!(n, want, "{moves} moves, root {root}, every {every}");
        }
    }
}

/// KataGo's pruned root values: the reported root weighs each child by
/// its play selection value (here without LCB, so `move_infos` shows the
/// weights) and the root's own evaluation by its playout weight; the
/// explored-but-unwanted moves count for less than in the node's values.
#[test]
fn root_info_reports_katagos_pruned_root_values() {
    let mut p = params(300, 1);
    p.use_lcb_for_selection = false;
    let mut s = Search::new(p, MaterialEval::new(), capture_position(), 7);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    let root = view.root_info().unwrap();
    let nn = view.root_nn_output().unwrap();
    let w_nn = view.utility.playout_weight(view.params, &nn);
    // Black is to move: the root player's win-loss is minus White's.
    let nn_wl = -(nn.white_win_prob as f64 - nn.white_loss_prob as f64);
    let infos = view.move_infos(2, false);
    let (mut num, mut den) = (w_nn * nn_wl, w_nn);
    for m in &infos {
        num += m.play_selection_value * (2.0 * m.winrate - 1.0);
        den += m.play_selection_value;
    }
    let want = 0.5 * (1.0 + num / den);
    assert!(
        (root.winrate - want).abs() < 1e-9,
        "{} vs {want}",
        root.winrate
    );
    let raw = view.root_values();
    let raw_winrate = 0.5 * (1.0 - raw.win_loss);
    assert!(
        root.winrate > raw_winrate,
        "{} vs {raw_winrate}",
        root.winrate
    );
    assert_eq!(root.visits, raw.visits);
}

#[test]
fn a_view_with_other_params_chooses_by_them() {
    // Self-play chooses its move without LCB from a search run with it.
    // Find searches where LCB raises a child above its weight, and check
    // that the view without LCB values every child at most its weight
    // (rounded up, as KataGo rounds the root's reduced weights).
    let mut raised = 0;
    for seed in 0..12 {
        let mut p = params(40 + 20 * seed, 1);
        p.use_lcb_for_selection = true;
        p.min_visit_prop_for_lcb = 0.01;
        p.chosen_move_temperature = 0.0;
        p.chosen_move_temperature_early = 0.0;
        let mut s = Search::new(
            p.clone(),
            MaterialEval::new(),
            capture_position(),
            seed as u64,
        );
        s.run(&RunOptions::default()).unwrap();
        let mut no_lcb = p.clone();
        no_lcb.use_lcb_for_selection = false;
        let view = s.view();
        let plain = view.with_params(&no_lcb);
        let with_lcb = view.move_infos(30, false);
        let without = plain.move_infos(30, false);
        for m in &without {
            assert!(m.play_selection_value <= m.weight.ceil() + 1e-9, "{m:?}");
        }
        if with_lcb
            .iter()
            .any(|m| m.play_selection_value > m.weight.ceil() + 1e-9)
        {
            raised += 1;
        }
        // At temperature 0 each view picks its own top move.
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        assert_eq!(plain.chosen_move(&mut rng), Some(without[0].mv));
        assert_eq!(view.chosen_move(&mut rng), Some(with_lcb[0].mv));
    }
    assert!(raised > 0, "LCB never mattered: the test shows nothing");
}

#[test]
fn time_limit_is_recomputed_as_the_search_runs() {
    // The limit is far away at first and becomes "now" after 0.3 s.
    let mut s = Search::new(params(1 << 40, 1), MaterialEval::new(), ToyGo::new(5), 2);
    let calls = AtomicU64::new(0);
    let limit = |_: &SearchView<'_>, used: f64| {
        calls.fetch_add(1, Ordering::Relaxed);
        if used < 0.3 {
            1e9
        } else {
            used
        }
    };
    let stats = s
        .run(&RunOptions {
            time_limit: Some(&limit),
            ..RunOptions::default()
        })
        .unwrap();
    assert!(stats.seconds >= 0.3 && stats.seconds < 3.0, "{stats:?}");
    assert!(calls.load(Ordering::Relaxed) >= 3);
}

#[test]
fn a_time_limit_cannot_stop_the_search_before_two_playouts() {
    let mut s = Search::new(params(1 << 40, 1), MaterialEval::new(), ToyGo::new(5), 2);
    let limit = |_: &SearchView<'_>, _: f64| 0.0;
    let stats = s
        .run(&RunOptions {
            time_limit: Some(&limit),
            max_time: Some(0.0),
            ..RunOptions::default()
        })
        .unwrap();
    assert!(stats.playouts >= 2, "{stats:?}");
}

#[test]
fn search_time_carries_over_through_tree_reuse_by_visit_share() {
    let mut p = params(300, 1);
    p.tree_reuse_carry_over_time_factor = 0.5;
    let mut s = Search::new(p.clone(), MaterialEval::new(), capture_position(), 1);
    assert_eq!(s.time_carried_over(), 0.0);
    s.run(&RunOptions::default()).unwrap();
    let first = s.time_carried_over();
    assert!(first > 0.0 && first == s.last_stats().seconds);
    s.run(&RunOptions::default()).unwrap(); // at the limit already: a few ms more
    let thought = s.time_carried_over();
    assert!(thought >= first);
    let root_visits = s.view().root_values().visits as f64;
    let best = s.view().move_infos(1, false)[0].clone();
    assert!(s.make_move(best.mv));
    let expected = thought * best.visits as f64 / root_visits * 0.5;
    assert!((s.time_carried_over() - expected).abs() < 1e-12);
    // A move outside the tree, or a new position, carries nothing.
    s.clear_tree();
    assert_eq!(s.time_carried_over(), 0.0);
    let mut s = Search::new(p, MaterialEval::new(), capture_position(), 1);
    s.run(&RunOptions::default()).unwrap();
    s.set_position(capture_position());
    assert_eq!(s.time_carried_over(), 0.0);
}

#[test]
fn policy_surprise_and_entropy_follow_katago() {
    let mut s = Search::new(params(300, 1), MaterialEval::new(), capture_position(), 1);
    assert!(s.view().policy_surprise_and_entropy().is_none());
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    let (surprise, search_entropy, policy_entropy) = view.policy_surprise_and_entropy().unwrap();
    let nn = view.root_nn_output().unwrap();
    let expected: f64 = nn
        .policy
        .iter()
        .map(|&p| p as f64)
        .filter(|&p| p > 0.0)
        .map(|p| -p * p.ln())
        .sum();
    assert!((policy_entropy - expected).abs() < 1e-9);
    // A KL divergence against a sub-distribution of the policy is >= 0.
    assert!(surprise >= 0.0, "{surprise}");
    let children = view.move_infos(0, false).len() as f64;
    assert!(search_entropy >= 0.0 && search_entropy <= children.ln() + 1e-9);
    // The search piles onto the capture, far from the flat stub policy.
    assert!(
        search_entropy < policy_entropy,
        "{search_entropy} {policy_entropy}"
    );
}

#[test]
fn futile_search_test_needs_a_threshold_and_no_reachable_rival() {
    let mut s = Search::new(params(3000, 1), MaterialEval::new(), capture_position(), 1);
    s.run(&RunOptions::default()).unwrap();
    assert!(
        !s.view().is_rest_of_search_futile(0.0),
        "threshold 0: never futile"
    );
    let mut p = s.params().clone();
    p.futile_visits_threshold = 0.5;
    p.chosen_move_temperature = 0.0;
    p.chosen_move_temperature_early = 0.0;
    s.set_params(p);
    let view = s.view();
    let infos = view.move_infos(0, false);
    let (best, second) = (infos[0].visits as f64, infos[1].visits as f64);
    assert!(
        second < 0.5 * best,
        "{:?}",
        infos.iter().map(|m| m.visits).collect::<Vec<_>>()
    );
    assert!(view.is_rest_of_search_futile(0.0));
    assert!(!view.is_rest_of_search_futile(0.5 * best - second + 1.0));
}

#[test]
fn root_symmetry_pruning_searches_one_copy_and_reports_all() {
    // An empty 5x5 board: 6 classes of points under the 8 symmetries.
    let mut p = params(400, 1);
    p.root_symmetry_pruning = true;
    let mut s = Search::new(p.clone(), MaterialEval::new(), ToyGo::new(5), 1);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    assert_eq!(view.root_symmetries().len(), 8);
    let searched = view.move_infos(3, false);
    let points = searched.iter().filter(|m| m.mv != Move::Pass).count();
    assert!(points <= 6, "{points} root moves searched");
    let all = view.with_symmetric_copies(searched.clone());
    assert!(all.len() > searched.len());
    for (i, m) in all.iter().enumerate() {
        assert_eq!(m.order, i);
        assert_eq!(m.pv[0], m.mv);
        if let Some(of) = m.is_symmetry_of {
            let orig = searched.iter().find(|o| o.mv == of).unwrap();
            assert_eq!((m.visits, m.winrate), (orig.visits, orig.winrate));
        }
    }
    let mut moves: Vec<Move> = all.iter().map(|m| m.mv).collect();
    moves.sort();
    moves.dedup();
    assert_eq!(moves.len(), all.len(), "each move listed once");

    // Off: every point may be searched, nothing is copied.
    p.root_symmetry_pruning = false;
    let mut s = Search::new(p, MaterialEval::new(), ToyGo::new(5), 1);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    assert_eq!(view.root_symmetries().len(), 1);
    let infos = view.move_infos(3, false);
    assert!(infos.iter().filter(|m| m.mv != Move::Pass).count() > 6);
    assert_eq!(view.with_symmetric_copies(infos.clone()), infos);
}

#[test]
fn a_ko_ban_or_a_stone_breaks_root_symmetry() {
    let mut g = ToyGo::new(5);
    g.put(0, 0, Color::Black);
    assert_eq!(
        g.invariant_symmetries().len(),
        2,
        "the diagonal through a corner"
    );
    let mut p = params(50, 1);
    p.root_symmetry_pruning = true;
    g.ko = Some(Loc::from_xy(2, 2, 5));
    let mut s = Search::new(p, MaterialEval::new(), g, 1);
    s.run(&RunOptions::default()).unwrap();
    assert_eq!(s.view().root_symmetries().len(), 1);
}

#[test]
fn friendly_pass_rules_search_past_a_game_ending_pass() {
    // White just passed: Black's pass would end the game. With friendly
    // passes the search looks past it (the pass child gets children);
    // without, the pass is a terminal leaf.
    let mut g = capture_position();
    g.passes = 1;
    g.history.push((Player::White, Move::Pass));
    let pass_pv = |friendly: bool| {
        let mut g = g.clone();
        g.friendly = friendly;
        let mut p = params(600, 1);
        p.conservative_pass = false;
        let mut s = Search::new(p, MaterialEval::new(), g, 5);
        // Only passing at the root, so that every playout goes through it.
        s.set_allow_moves(Player::Black, &[Move::Pass], 1);
        s.run(&RunOptions::default()).unwrap();
        let infos = s.view().move_infos(4, false);
        let pass = infos.iter().find(|m| m.mv == Move::Pass).cloned();
        pass.map(|m| (m.visits, m.pv.len()))
    };
    let (visits, len) = pass_pv(true).expect("pass searched");
    assert!(visits > 100 && len > 1, "{visits} {len}");
    let (visits, len) = pass_pv(false).expect("pass searched");
    assert!(visits > 100 && len == 1, "terminal pass: {visits} {len}");
}

#[test]
fn minmoves_pads_with_unvisited_moves_by_policy() {
    let mut s = Search::new(params(10, 1), MaterialEval::new(), capture_position(), 3);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    let searched = view.move_infos(3, false);
    assert!(searched.len() < 15, "{}", searched.len());
    assert_eq!(view.pad_with_unvisited(searched.clone(), 0), searched);
    let padded = view.pad_with_unvisited(searched.clone(), 15);
    assert_eq!(padded.len(), 15);
    assert_eq!(padded[..searched.len()], searched[..]);
    let extra = &padded[searched.len()..];
    for (i, m) in extra.iter().enumerate() {
        assert_eq!((m.visits, m.pv.len(), m.order), (0, 1, searched.len() + i));
        assert!(searched.iter().all(|o| o.mv != m.mv));
        // All valued alike (first-play urgency), by policy order.
        assert_eq!((m.utility, m.winrate), (extra[0].utility, extra[0].winrate));
        if i > 0 {
            assert!(m.prior <= extra[i - 1].prior);
        }
    }
    // FPU is below the root's own value for the player to move.
    let root = view.root_info().unwrap();
    assert!(
        extra[0].utility < root.utility,
        "{} {}",
        extra[0].utility,
        root.utility
    );
}

/// A tree memory limit stops the search where the visits' nodes fill it,
/// with many threads; the tree then has no more nodes than fit, and a
/// subtree kept by tree reuse counts against the limit.
#[test]
fn tree_memory_limit_caps_the_tree() {
    let mut s = Search::new(params(1 << 40, 4), MaterialEval::new(), ToyGo::new(5), 3);
    let (x, y) = (s.root_state().x_size(), s.root_state().y_size());
    let node = super::tree_node_bytes(x, y);
    s.set_tree_memory_limit(300 * node);
    // Room for one node per search thread more than the visits.
    assert_eq!(s.max_tree_visits(), 296);
    let stats = s.run(&RunOptions::default()).unwrap();
    assert!(stats.memory_capped);
    assert_eq!(stats.root_visits, 296);
    assert!(s.count_nodes() <= 300, "{} nodes", s.count_nodes());
    let best = s.view().move_infos(1, false)[0].clone();
    assert!(s.make_move(best.mv));
    let kept = s.view().root_values().visits;
    let stats = s.run(&RunOptions::default()).unwrap();
    assert_eq!(stats.playouts, 296 - kept);
    assert!(stats.memory_capped && stats.root_visits == 296);
    assert!(s.count_nodes() <= 300, "{} nodes", s.count_nodes());
    // A visit limit below the cap ends the search first, as before.
    let mut s = Search::new(params(200, 4), MaterialEval::new(), ToyGo::new(5), 3);
    s.set_tree_memory_limit(300 * node);
    let stats = s.run(&RunOptions::default()).unwrap();
    assert!(!stats.memory_capped && stats.root_visits == 200);
}

#[test]
fn the_ending_bonus_steers_the_root_choice() {
    // The capture is Black's best move; a large ending bonus for White on
    // it (Black loses points by playing it) must make Black choose another
    // move, and only while rootEndingBonusPoints is not 0.
    let capture = Move::Play(Loc::from_xy(2, 3, 5));
    let mut g = capture_position();
    g.ending_bonus = vec![0.0; 26];
    g.ending_bonus[capture.policy_index(5, 5)] = 60.0;
    let chosen = |points: f64| {
        let mut p = params(300, 1);
        p.root_ending_bonus_points = points;
        p.chosen_move_temperature = 0.0;
        p.chosen_move_temperature_early = 0.0;
        let mut s = Search::new(p, MaterialEval::new(), g.clone(), 1);
        s.run(&RunOptions::default()).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(0);
        s.view().chosen_move(&mut rng).unwrap()
    };
    assert_eq!(chosen(0.0), capture, "no bonus: the capture");
    assert_ne!(
        chosen(0.5),
        capture,
        "the bonus makes the capture lose points"
    );
}

#[test]
fn useless_root_moves_are_not_searched_unless_the_key_is_off() {
    let capture = Move::Play(Loc::from_xy(2, 3, 5));
    let mut g = capture_position();
    g.useless = vec![false; 26];
    g.useless[capture.policy_index(5, 5)] = true;
    let search = |prune: bool| {
        let mut p = params(200, 1);
        p.root_prune_useless_moves = prune;
        let mut s = Search::new(p, MaterialEval::new(), g.clone(), 1);
        s.run(&RunOptions::default()).unwrap();
        s.view()
            .move_infos(1, false)
            .iter()
            .map(|m| m.mv)
            .collect::<Vec<_>>()
    };
    assert!(!search(true).contains(&capture), "pruned: never searched");
    assert_eq!(search(false)[0], capture, "not pruned: the best move");
}

/// Black's 14 moves along the top rows, each answered by White's mirror
/// reply through the centre: Black to move, White mirroring.
fn game_mirrored_by_white() -> ToyGo {
    let mut g = ToyGo::new(9);
    g.komi = 7.5;
    for i in 0..14 {
        let (x, y) = (i % 9, i / 9);
        g.play(Move::Play(Loc::from_xy(x, y, 9)));
        g.play(Move::Play(Loc::from_xy(8 - x, 8 - y, 9)));
    }
    g
}

#[test]
fn anti_mirror_forces_the_mirror_reply_and_the_centre() {
    let g = game_mirrored_by_white();
    let status = g.mirror_status();
    assert_eq!(status.mirroring, Some(Player::White));
    // White would win by komi less Black's last-move point.
    assert_eq!(status.advantage, 6.5);
    let center = Move::Play(Loc::from_xy(4, 4, 9));
    // (most visited root move, smallest and largest share of White's mirror
    // reply below Black's moves with 40 visits or more whose mirror point
    // is free; at least three such moves)
    let search = |anti_mirror: bool| {
        let mut p = params(3000, 1);
        p.anti_mirror = anti_mirror;
        let mut s = Search::new(p, MaterialEval::new(), g.clone(), 3);
        s.run(&RunOptions::default()).unwrap();
        let view = s.view();
        let children = view.root.children();
        let most = children
            .iter()
            .max_by_key(|c| c.node.visits())
            .map(|c| c.mv);
        let (mut lo, mut hi, mut counted) = (1.0f64, 0.0f64, 0);
        for c in children.iter().filter(|c| c.node.visits() >= 40) {
            let reply = mirror_move(c.mv, 9, 9);
            let mut after = g.clone();
            after.play(c.mv);
            if reply == c.mv || !after.is_legal(reply) {
                continue;
            }
            let kids = c.node.children();
            let total: i64 = kids.iter().map(|k| k.node.visits()).sum();
            let r = kids
                .iter()
                .find(|k| k.mv == reply)
                .map_or(0, |k| k.node.visits());
            let share = r as f64 / total as f64;
            (lo, hi, counted) = (lo.min(share), hi.max(share), counted + 1);
        }
        assert!(counted >= 3, "{counted}");
        (most, lo, hi)
    };
    let (most, lo, _) = search(true);
    // KataGo's anti-mirror: White's reply is forced to 15% of the weight
    // (advantage >= 5) and favoured up to half of it; the root player's
    // centre gets a policy bonus.
    assert_eq!(most, Some(center));
    assert!(lo >= 0.3, "{lo}");
    // Without it some replies are hardly searched.
    let (most, lo, hi) = search(false);
    assert_ne!(most, Some(center));
    assert!(lo < 0.12 && hi > lo, "{lo} {hi}");
}

/// [`MaterialEval`] whose ownership says White owns every point by 0.5,
/// counting the evaluations that asked for ownership.
struct HalfWhiteOwnership {
    inner: Arc<MaterialEval>,
    with_ownership: AtomicU64,
}

impl PositionEvaluator<ToyGo> for HalfWhiteOwnership {
    fn evaluate(&self, s: &ToyGo, opts: &EvalOptions) -> Result<Arc<NnOutput>, EvalError> {
        let mut out = (*self.inner.evaluate(s, opts)?).clone();
        if opts.include_ownership {
            self.with_ownership.fetch_add(1, Ordering::Relaxed);
            out.white_ownership = Some(vec![0.5; s.n * s.n]);
        }
        Ok(Arc::new(out))
    }
    fn stats(&self) -> EvalStats {
        self.inner.stats()
    }
}

#[test]
fn anti_mirror_values_the_hard_case_by_the_centre() {
    // Black took the centre and mirrors White; with komi 0.5 a mirror held
    // to the end wins Black half a point: KataGo's hard case.
    let mut g = ToyGo::new(9);
    g.play(Move::Play(Loc::from_xy(4, 4, 9)));
    for i in 0..14 {
        let (x, y) = (i % 9, i / 9);
        g.play(Move::Play(Loc::from_xy(x, y, 9)));
        g.play(Move::Play(Loc::from_xy(8 - x, 8 - y, 9)));
    }
    let status = g.mirror_status();
    assert_eq!(status.mirroring, Some(Player::Black));
    assert_eq!((status.advantage, status.center_symmetry_error), (0.5, 0.0));
    let run = |anti_mirror: bool| {
        let eval = Arc::new(HalfWhiteOwnership {
            inner: MaterialEval::new(),
            with_ownership: AtomicU64::new(0),
        });
        let mut p = params(200, 1);
        p.anti_mirror = anti_mirror;
        let mut s = Search::new(p, eval.clone(), g.clone(), 5);
        s.run(&RunOptions::default()).unwrap();
        let root = s.view().root_nn_output().unwrap();
        let rows = eval.stats().rows;
        (
            root.white_win_prob,
            eval.with_ownership.load(Ordering::Relaxed),
            rows,
        )
    };
    // Material: komi 0.5 + 14 white stones - 15 black = -0.5.
    let raw = 1.0 / (1.0 + (0.4f64).exp());
    let (win, owned, _) = run(false);
    assert!((f64::from(win) - raw).abs() < 1e-6);
    assert_eq!(owned, 1, "only the root asks for ownership");
    // The root's win/loss split moves by 0.7 x the centre's ownership in
    // logit space; evaluations below it ask for ownership too while Black
    // keeps mirroring (all but the deepest, which need 6 plies).
    let hacked = 0.5 + 0.5 * ((2.0 * raw - 1.0).atanh() + 0.7 * 0.5).tanh();
    let (win, owned, rows) = run(true);
    assert!((f64::from(win) - hacked).abs() < 1e-6, "{win} {hacked}");
    assert!(owned <= rows && owned * 2 > rows, "{owned} of {rows}");
}

#[test]
fn futile_root_children_get_no_more_visits() {
    // (root visits, root children visited, visits outside the best child)
    let run = |threshold: f64| {
        let mut p = params(300, 1);
        p.futile_visits_threshold = threshold;
        let mut s = Search::new(p, MaterialEval::new(), capture_position(), 1);
        s.run(&RunOptions::default()).unwrap();
        let view = s.view();
        let visits: Vec<i64> = view
            .root
            .children()
            .iter()
            .map(|c| c.node.visits())
            .collect();
        let best = visits.iter().copied().max().unwrap_or(0);
        let visited = visits.iter().filter(|&&v| v > 0).count();
        (
            view.root.visits(),
            visited,
            visits.iter().sum::<i64>() - best,
        )
    };
    let (all_visits, all_children, all_others) = run(0.0);
    // KataGo's pruning with the threshold at its top (1.0): once the
    // capture leads, a move that cannot catch up with it in the visits
    // left is not searched, new moves included; the search still spends
    // its whole budget.
    let (visits, children, others) = run(1.0);
    assert_eq!((all_visits, visits), (300, 300));
    assert!(children < all_children, "{children} {all_children}");
    assert!(others < all_others, "{others} {all_others}");
}

/// (edge visits, child visits) of every edge below `node`.
fn edges(node: &tree::Node, out: &mut Vec<(i64, i64)>) {
    for c in node.children().iter() {
        out.push((c.edge_visits(), c.node.visits()));
        edges(&c.node, out);
    }
}

#[test]
fn edge_visits_count_the_playouts_through_each_edge() {
    let mut p = params(600, 4);
    p.enable_more_passing_hacks = false;
    let mut s = Search::new(p, MaterialEval::new(), ToyGo::new(5), 5);
    s.run(&RunOptions::default()).unwrap();
    let view = s.view();
    let mut all = Vec::new();
    edges(view.root, &mut all);
    assert!(all.len() > 100, "{}", all.len());
    // With no weightless playout, every playout below a child came
    // through its edge.
    for (edge, child) in all {
        assert_eq!(edge, child);
    }
    let root_edges: i64 = view.root.children().iter().map(|c| c.edge_visits()).sum();
    assert_eq!(root_edges + 1, view.root.visits());
    let infos = view.move_infos(1, false);
    assert!(infos.iter().all(|m| m.edge_visits == m.visits));
    assert!(infos.iter().all(|m| m.pv_edge_visits == m.pv_visits));
}

/// Black to move on 5x5 after White passed: a pass ends the game.
fn white_just_passed() -> ToyGo {
    let mut g = ToyGo::new(5);
    g.play(Move::Play(Loc::from_xy(2, 2, 5)));
    g.play(Move::Pass);
    g
}

#[test]
fn passing_hacks_search_a_pass_without_counting_it() {
    // (root visits, playouts, the pass's edge and child visits)
    let run = |hacks: bool| {
        let mut p = params(12, 1);
        p.enable_more_passing_hacks = hacks;
        let mut s = Search::new(p, MaterialEval::new(), white_just_passed(), 7);
        let stats = s.run(&RunOptions::default()).unwrap();
        let view = s.view();
        let children = view.root.children();
        let pass = children
            .iter()
            .find(|c| c.mv == Move::Pass)
            .map(|c| (c.edge_visits(), c.node.visits()));
        (stats.root_visits, stats.playouts, pass)
    };
    // Uniform policy with the pass last: 12 visits never reach it.
    let (visits, playouts, pass) = run(false);
    assert_eq!((visits, pass), (12, None));
    // KataGo's enableMorePassingHacks: once the root has two visits, the
    // pass gets a playout of its own that counts for nothing above it.
    let (hacked_visits, hacked_playouts, pass) = run(true);
    assert_eq!((hacked_visits, hacked_playouts), (visits, playouts));
    let (edge, child) = pass.expect("the pass is searched");
    assert_eq!(edge, 0);
    assert!(child >= 1, "{child}");
}

/// The top-left corner: the stand-in human net's favourite.
fn corner() -> Move {
    Move::Play(Loc::from_xy(0, 0, 5))
}

/// A 5x5 search from the empty board with the stand-in human net, with
/// `set` applied to the parameters; returns the search.
fn human_search(visits: i64, set: impl Fn(&mut SearchParams)) -> Search<ToyGo, MaterialEval> {
    let mut p = params(visits, 1);
    // The corner must stay a root move of its own.
    p.root_symmetry_pruning = false;
    set(&mut p);
    let mut s = Search::new(p, MaterialEval::new(), ToyGo::new(5), 9);
    s.set_human_evaluator(Some(MaterialEval::favouring(corner())));
    s.run(&RunOptions::default()).unwrap();
    s
}

#[test]
fn root_human_exploration_follows_the_human_policy() {
    // (root visits, the corner's edge visits, the corner's own visits)
    let corner_visits = |s: &Search<ToyGo, MaterialEval>| {
        let view = s.view();
        let children = view.root.children();
        let c = children.iter().find(|c| c.mv == corner());
        (
            view.root.visits(),
            c.map_or(0, |c| c.edge_visits()),
            c.map_or(0, |c| c.node.visits()),
        )
    };
    let (root, edge, _) = corner_visits(&human_search(200, |_| {}));
    assert_eq!(root, 200);
    assert!(edge < 40, "{edge}");
    // Every root playout by the human policy, counted.
    let s = human_search(200, |p| p.human_sl_root_explore_prob_weightful = 1.0);
    let (root, edge, child) = corner_visits(&s);
    assert_eq!(root, 200);
    assert!(edge > 120, "{edge}");
    assert_eq!(edge, child);
    // Weightless: the corner's subtree grows, the root does not.
    let s = human_search(200, |p| p.human_sl_root_explore_prob_weightless = 1.0);
    let (root, edge, child) = corner_visits(&s);
    assert!(root <= 2, "{root}");
    assert_eq!(edge, 0);
    assert!(child > 120, "{child}");
    // The root's own evaluation was its first visit; the other 199 are
    // playouts that count towards the limit though the root gets none.
    assert_eq!(s.last_stats().playouts, 199);
}

#[test]
fn human_exploration_below_the_root_is_by_player() {
    // The share of White's replies at the corner, below Black's root moves
    // with 20 visits or more other than the corner, and the human net's
    // evaluations.
    let replies_at_corner = |set: &dyn Fn(&mut SearchParams)| {
        let human = MaterialEval::favouring(corner());
        let mut p = params(600, 1);
        p.root_symmetry_pruning = false;
        set(&mut p);
        let mut s = Search::new(p, MaterialEval::new(), ToyGo::new(5), 9);
        s.set_human_evaluator(Some(human.clone()));
        s.run(&RunOptions::default()).unwrap();
        let view = s.view();
        let (mut at_corner, mut total) = (0, 0);
        for c in view.root.children().iter() {
            if c.mv == corner() || c.node.visits() < 20 {
                continue;
            }
            for k in c.node.children().iter() {
                total += k.edge_visits();
                if k.mv == corner() {
                    at_corner += k.edge_visits();
                }
            }
        }
        (at_corner as f64 / total.max(1) as f64, human.stats().rows)
    };
    // The human net runs at the root only unless the tree explores by it.
    let (share, rows) = replies_at_corner(&|_| {});
    assert_eq!(rows, 1);
    assert!(share < 0.3, "{share}");
    // White's nodes are the opponent's: humanSLOppExploreProb* steers them,
    // humanSLPlaExploreProb* (Black's) does not.
    // (0.17, 1.0 and 0.30 with this seed.)
    let (share, rows) = replies_at_corner(&|p| p.human_sl_opp_explore_prob_weightful = 1.0);
    assert!(share > 0.9, "{share}");
    assert!(rows > 100, "{rows}");
    let (share, rows) = replies_at_corner(&|p| p.human_sl_pla_explore_prob_weightful = 1.0);
    assert!(share < 0.5, "{share}");
    assert!(rows > 100, "{rows}");
}

/// Each node below `root` once, with how many parents point at it.
fn in_degrees(root: &tree::Node) -> Vec<(Arc<tree::Node>, usize)> {
    let mut seen: std::collections::HashMap<*const tree::Node, (Arc<tree::Node>, usize)> =
        std::collections::HashMap::new();
    let mut stack: Vec<Arc<tree::Node>> = root.children().iter().map(|c| c.node.clone()).collect();
    for c in root.children().iter() {
        seen.entry(Arc::as_ptr(&c.node))
            .or_insert_with(|| (c.node.clone(), 0))
            .1 += 1;
    }
    while let Some(n) = stack.pop() {
        for c in n.children().iter() {
            let e = seen
                .entry(Arc::as_ptr(&c.node))
                .or_insert_with(|| (c.node.clone(), 0));
            e.1 += 1;
            if e.1 == 1 {
                stack.push(c.node.clone());
            }
        }
    }
    seen.into_values().collect()
}

#[test]
fn graph_search_shares_transposed_positions_and_keeps_counts_consistent() {
    let mut g = ToyGo::new(5);
    g.graph = true;
    // (nodes, nodes with two parents or more)
    let run = |graph: bool, threads: i32| {
        let mut p = params(3000, threads);
        p.use_graph_search = graph;
        let mut s = Search::new(p, MaterialEval::new(), g.clone(), 11);
        let stats = s.run(&RunOptions::default()).unwrap();
        assert_eq!(stats.root_visits, 3000);
        let view = s.view();
        let nodes = in_degrees(view.root);
        for (n, _) in &nodes {
            let children = n.children();
            if children.is_empty() {
                continue;
            }
            // A node's visits: its own evaluation and its edges' playouts
            // (catch-ups and cycles included).
            let edges: i64 = children.iter().map(|c| c.edge_visits()).sum();
            assert_eq!(n.visits(), 1 + edges);
        }
        let shared = nodes.iter().filter(|(_, d)| *d >= 2).count();
        (nodes.len(), shared)
    };
    let (tree_nodes, tree_shared) = run(false, 1);
    assert_eq!(tree_shared, 0);
    let (graph_nodes, graph_shared) = run(true, 1);
    assert!(graph_shared > 20, "{graph_shared}");
    // The same visits spread over fewer positions.
    assert!(graph_nodes < tree_nodes, "{graph_nodes} {tree_nodes}");
    // Many threads: the table under contention, the same invariants.
    let (_, shared) = run(true, 6);
    assert!(shared > 20, "{shared}");
}

#[test]
fn graph_search_reuses_the_graph_after_a_move_and_sweeps_the_rest() {
    let mut g = ToyGo::new(5);
    g.graph = true;
    let mut s = Search::new(params(1500, 2), MaterialEval::new(), g, 3);
    s.run(&RunOptions::default()).unwrap();
    let best = s.view().move_infos(1, false)[0].clone();
    let before = s.count_nodes();
    assert!(s.make_move(best.mv));
    // What the new root (a node of the table) reaches is kept, the rest
    // forgotten.
    let kept = s.count_nodes();
    assert!(kept < before && kept > 1, "{kept} {before}");
    assert_eq!(s.table_len(), kept);
    let stats = s.run(&RunOptions::default()).unwrap();
    assert_eq!(stats.root_visits, 1500);
}

/// Graph search with `useEvalCache`: a search leaves the values of its
/// well-searched positions; a later search from scratch explores a
/// remembered move first (its cached utility beats the FPU of unexplored
/// moves) and pulls that child's first evaluation towards the cached
/// values by KataGo's share.
#[test]
fn eval_cache_remembers_a_search_for_the_next() {
    let mut g = ToyGo::new(5);
    g.graph = true;
    let cached_params = |visits: i64, cache: bool| {
        let mut p = params(visits, 1);
        p.use_graph_search = true;
        p.use_eval_cache = cache;
        p.eval_cache_min_visits = 50;
        p.root_noise_enabled = false;
        p
    };
    let eval = MaterialEval::new();
    let mut s = Search::new(cached_params(3000, true), eval.clone(), g.clone(), 5);
    s.run(&RunOptions::default()).unwrap();
    let cache = s.eval_cache().expect("a cache").clone();
    assert!(cache.len() > 5, "{}", cache.len());
    let key = eval_cache_params_key(s.params());
    let root_entry = cache
        .find(key ^ s.view().root.graph_hash)
        .expect("root entry");
    assert!(root_entry.first_explore.len() >= 2);

    // The same position afresh, two visits: the root and one child.
    let second = |cache_on: bool| {
        let mut s2 = Search::new(cached_params(2, cache_on), eval.clone(), g.clone(), 9);
        s2.set_eval_cache(Some(cache.clone()));
        s2.run(&RunOptions::default()).unwrap();
        let root = s2.view().root;
        let children = root.children();
        assert_eq!(children.len(), 1);
        (children[0].mv, children[0].node.clone())
    };
    let (mv, child) = second(true);
    let entry = child.eval_cache.clone().expect("the child's entry");
    let mut after = g.clone();
    after.play(mv);
    let raw = eval.evaluate(&after, &EvalOptions::default()).unwrap();
    let raw_wl = raw.white_win_prob as f64 - raw.white_loss_prob as f64;
    let mut cw = entry.cache_weight as f64;
    if cw > 50.0 {
        cw = (50.0 * cw).sqrt();
    }
    let frac = 1.0 / (1.0 + 3.0 / cw * (1.0 + 2.0 / (cw * cw)));
    let expected = raw_wl + frac * (entry.win_loss as f64 - raw_wl);
    assert!((child.values().win_loss - expected).abs() < 1e-9);
    assert!(
        (expected - raw_wl).abs() > 1e-3,
        "the cache changed nothing"
    );

    // Without the cache: the first move by policy, its raw evaluation.
    let (mv0, child0) = second(false);
    // With the cache, Black's best remembered move (least for White)
    // comes first, not the first by policy.
    let best_remembered = root_entry
        .first_explore
        .iter()
        .min_by(|a, b| a.1.win_loss.total_cmp(&b.1.win_loss))
        .map(|(m, _)| *m);
    assert_eq!(Some(mv), best_remembered);
    assert_ne!(mv, mv0);
    assert_eq!(child0.eval_cache, None);
    let mut after0 = g.clone();
    after0.play(mv0);
    let raw0 = eval.evaluate(&after0, &EvalOptions::default()).unwrap();
    let wl0 = raw0.white_win_prob as f64 - raw0.white_loss_prob as f64;
    assert!((child0.values().win_loss - wl0).abs() < 1e-9);

    // `clear_cache` forgets.
    s.clear_eval_cache();
    assert!(cache.is_empty());
}

/// KataGo's `getPlaySelectionValues` rounds the root's reduced weights up
/// (`ceil(getReducedPlaySelectionWeight(...))`): a child searched as much as
/// the search wanted keeps its weight rounded up, not its fractional
/// weight. (Its `rootInfo` averages the children by these values.)
#[test]
fn root_play_selection_values_are_reduced_weights_rounded_up() {
    let mut fractional = 0;
    for seed in 0..6 {
        let mut p = params(60 + 20 * seed, 1);
        p.use_lcb_for_selection = false;
        p.chosen_move_prune = 0.0;
        p.chosen_move_subtract = 0.0;
        let mut s = Search::new(p, MaterialEval::new(), capture_position(), seed as u64);
        s.run(&RunOptions::default()).unwrap();
        let infos = s.view().move_infos(50, false);
        let best = infos
            .iter()
            .map(|m| m.play_selection_value)
            .fold(0.0, f64::max);
        for m in infos.iter().filter(|m| m.play_selection_value < best) {
            assert_eq!(m.play_selection_value.fract(), 0.0, "{m:?}");
            assert!(m.play_selection_value <= m.weight.ceil(), "{m:?}");
            if m.weight.fract() != 0.0 {
                fractional += 1;
            }
        }
    }
    assert!(fractional > 0, "no child with a fractional weight was seen");
}

/// What sequential halving gives `m` considered moves in `n` playouts,
/// most first: each playout goes to a move with the schedule's count.
fn halving_counts(m: usize, n: i64) -> Vec<i64> {
    let mut counts = vec![0i64; m];
    for k in 0..n {
        let target = gumbel::considered_visits(m, n, k);
        if let Some(c) = counts.iter_mut().find(|c| **c == target) {
            *c += 1;
        }
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts
}

/// Gumbel root search considering every root move.
fn gumbel_params(visits: i64, threads: i32) -> SearchParams {
    let mut p = params(visits, threads);
    p.gumbel_root_search = true;
    p.gumbel_considered_moves = 64;
    p
}

/// The root's edge visits per move.
fn root_edge_visits(s: &Search<ToyGo, MaterialEval>) -> Vec<(Move, i64)> {
    let infos = s.view().move_infos(1, false);
    infos.iter().map(|m| (m.mv, m.edge_visits)).collect()
}

fn most_first(visits: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut v: Vec<i64> = visits.collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

#[test]
fn gumbel_root_search_visits_the_root_by_sequential_halving_and_plays_the_capture() {
    let capture = Move::Play(Loc::from_xy(2, 3, 5));
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let mut s = Search::new(
        gumbel_params(101, 1),
        MaterialEval::new(),
        capture_position(),
        1,
    );
    s.run(&RunOptions::default()).unwrap();
    let counts = most_first(root_edge_visits(&s).into_iter().map(|(_, v)| v));
    assert_eq!(counts.iter().sum::<i64>(), 100);
    assert!(counts.len() > 8, "{counts:?}");
    assert_eq!(counts, halving_counts(counts.len(), 100));
    assert_eq!(s.view().chosen_move(&mut rng), Some(capture));

    // PUCT spreads the same visits otherwise (the check above can fail).
    let mut puct = Search::new(params(101, 1), MaterialEval::new(), capture_position(), 1);
    puct.run(&RunOptions::default()).unwrap();
    let puct_counts = most_first(root_edge_visits(&puct).into_iter().map(|(_, v)| v));
    assert_ne!(puct_counts, halving_counts(puct_counts.len(), 100));
}

#[test]
fn gumbel_root_search_on_a_reused_tree_schedules_only_this_searchs_visits() {
    let mut s = Search::new(
        gumbel_params(61, 1),
        MaterialEval::new(),
        capture_position(),
        2,
    );
    s.run(&RunOptions::default()).unwrap();
    let before = root_edge_visits(&s);
    let mut p = s.params().clone();
    p.max_visits = 161;
    s.set_params(p);
    s.run(&RunOptions::default()).unwrap();
    let after = root_edge_visits(&s);
    assert_eq!(after.len(), before.len());
    let added = after.iter().map(|(mv, v)| {
        let old = before.iter().find(|b| b.0 == *mv).map_or(0, |b| b.1);
        v - old
    });
    assert_eq!(most_first(added), halving_counts(before.len(), 100));
}

#[test]
fn gumbel_root_search_with_many_threads_stops_at_max_visits_and_plays_the_capture() {
    let capture = Move::Play(Loc::from_xy(2, 3, 5));
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let mut s = Search::new(
        gumbel_params(400, 4),
        MaterialEval::new(),
        capture_position(),
        3,
    );
    let stats = s.run(&RunOptions::default()).unwrap();
    assert_eq!(stats.root_visits, 400);
    let visits = root_edge_visits(&s);
    assert!(visits.iter().all(|&(_, v)| v >= 1), "{visits:?}");
    let infos = s.view().move_infos(1, false);
    let dbg: Vec<_> = infos
        .iter()
        .map(|m| (m.mv, m.edge_visits, m.winrate))
        .collect();
    assert_eq!(s.view().chosen_move(&mut rng), Some(capture), "{dbg:?}");
}

#[test]
fn gumbel_root_search_keeps_puct_without_a_visit_budget() {
    // Limited by time only: no halving is made (its first phase would
    // never end), the root stays PUCT's.
    let mut p = gumbel_params(1 << 50, 1);
    p.max_time = 0.05;
    let mut s = Search::new(p, MaterialEval::new(), capture_position(), 4);
    s.run(&RunOptions::default()).unwrap();
    assert!(s.view().gumbel.is_none());
    let mut with_budget = Search::new(
        gumbel_params(50, 1),
        MaterialEval::new(),
        capture_position(),
        4,
    );
    with_budget.run(&RunOptions::default()).unwrap();
    assert!(with_budget.view().gumbel.is_some());
}
