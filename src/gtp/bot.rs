//! What the GTP engine needs from a search, as one small trait
//! ([`GtpBot`]), and [`RandomBot`], a stand-in that plays random legal
//! moves so that the whole protocol can be driven and tested without a
//! network.
//!
//! The engine calls the bot from one thread at a time (analysis and
//! pondering run on a background thread that holds the bot, and the
//! command loop stops and joins that thread before it touches the bot).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::game::{Board, Color, Loc, Move, Player, Rules};

use super::analyze_args::AvoidMoves;
use super::position::GtpGame;
use crate::search::{
    AnalysisSnapshot, MoveInfo, PatternBonusTable, Perspective, PrintTreeOptions, RootInfo,
};
use crate::setup::ModelInfo;
use crate::timecontrol::TimeControls;

/// Why a search runs; the bot picks its limits and parameter set from it.
#[derive(Debug, Clone, PartialEq)]
pub enum SearchPurpose {
    /// Choose a move to play now (`genmove` and friends): genmove
    /// parameters, the clock of the player to move, and KataGo's search
    /// factor (< 1 when winning with `searchFactorWhenWinning`).
    Genmove {
        /// The mover's clock.
        clock: TimeControls,
        /// Multiplier on the thinking time.
        search_factor: f64,
    },
    /// Live analysis until stopped: analysis parameters, no limits.
    Analysis,
    /// Think on the opponent's time until stopped (tree kept for reuse).
    Ponder,
}

/// A search to run.
#[derive(Clone)]
pub struct SearchRequest<'a> {
    /// The game: rules with komi, initial position and moves (everything a
    /// search needs to build its own history).
    pub game: &'a GtpGame,
    /// The player to search for (may differ from the game's next player
    /// when a controller asks `genmove` for the other colour).
    pub pla: Player,
    /// Why the search runs.
    pub purpose: SearchPurpose,
    /// Moves the search must not play.
    pub avoid: &'a AvoidMoves,
    /// Whether snapshots must carry ownership.
    pub want_ownership: bool,
    /// Seconds between analysis reports (`None`: no reports).
    pub report_interval: Option<f64>,
    /// Report at least this many moves, padding with unvisited ones
    /// (`minmoves`).
    pub min_moves: usize,
}

/// The end of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    /// The move chosen (already legal for `pla`).
    pub best: Move,
    /// Root win-loss value in [-1, 1], White's view.
    pub white_win_loss: f64,
    /// Root score lead, White's view.
    pub white_lead: f64,
    /// The final state of the analysis (printed once more by the
    /// `*-genmove_analyze` commands).
    pub snapshot: AnalysisSnapshot,
}

/// An estimate of how the game ends, for `final_score` and
/// `final_status_list` on unfinished games (KataGo searches for it).
#[derive(Debug, Clone, PartialEq)]
pub struct FinalEstimate {
    /// Expected final score, White minus Black (before rounding).
    pub white_lead: f64,
    /// Ownership of every point, row-major from the top-left, in [-1, 1],
    /// positive for White.
    pub ownership: Vec<f64>,
}

/// KataGo's `lagBuffer` default (seconds), for a bot without a search.
pub const DEFAULT_LAG_BUFFER: f64 = 1.0;

/// The search behind the GTP engine.
pub trait GtpBot: Send {
    /// The network's short name, appended to `version` (empty for a bot
    /// without a network).
    fn model_name(&self) -> String {
        String::new()
    }

    /// The nets the bot evaluates with (none for a bot without a network).
    fn models(&self) -> Vec<ModelInfo> {
        Vec::new()
    }

    /// `n` free handicap stones for an empty board of `game`'s size and
    /// rules, chosen by the network as KataGo's `place_free_handicap`
    /// does; `None` for a bot without a network (the engine then uses
    /// fixed points).
    fn free_handicap(&mut self, game: &GtpGame, n: usize) -> Option<Vec<Loc>> {
        let _ = (game, n);
        None
    }

    /// `kata-benchmark`: the benchmark result line for `visits` visits per
    /// position on a `size`x`size` board, or why it cannot run.
    fn benchmark(&mut self, size: usize, visits: i64) -> Result<String, String> {
        let _ = (size, visits);
        Err("no network to benchmark".into())
    }

    /// Seconds kept back from every thinking time (`lagBuffer`).
    fn lag_buffer(&self) -> f64 {
        DEFAULT_LAG_BUFFER
    }

    /// When the network was not trained for `rules` (nets before model
    /// version 7 know fewer rules), the nearest rules it was; `None` when
    /// it was, or for a bot without a network.
    fn supported_rules(&self, rules: &Rules) -> Option<Rules> {
        let _ = rules;
        None
    }

    /// Runs a search. `report` is called every `report_interval` seconds
    /// and, for analysis, at least once at the end; the search returns
    /// soon after `stop` is set. Returns `None` when the position has no
    /// search result (never for a legal position).
    fn search(
        &mut self,
        req: &SearchRequest<'_>,
        stop: &AtomicBool,
        report: &mut (dyn FnMut(&AnalysisSnapshot) + Send),
    ) -> Option<SearchOutcome>;

    /// Estimates the final score and ownership of the position with `pla`
    /// to move (KataGo: a short search without playout doubling, with
    /// conservative passing).
    fn estimate_final(&mut self, game: &GtpGame, pla: Player) -> FinalEstimate;

    /// White's utility, expected score and lead after `pla` plays `mv`,
    /// from a short noiseless search with conservative passing and no
    /// playout doubling (how KataGo's friendly pass compares passing with
    /// the chosen move); `None` when the bot cannot tell.
    fn values_after_move(&mut self, game: &GtpGame, pla: Player, mv: Move) -> Option<[f64; 3]> {
        let _ = (game, pla, mv);
        None
    }

    /// White's lead in the position with `pla` to move, for `final_score`
    /// (KataGo's `computeLead`: the komi that makes the game even, found
    /// by searching at several komis). By default the estimate's lead.
    fn estimate_lead(&mut self, game: &GtpGame, pla: Player) -> f64 {
        self.estimate_final(game, pla).white_lead
    }

    /// KataGo's `kata-raw-nn` text: the raw network output for the
    /// position with `pla` to move, in one symmetry (0-7) or all of them
    /// (`None`), with `policy_optimism` in [0, 1]; `None` means the
    /// genmove search's `rootPolicyOptimism`, as KataGo's default.
    fn raw_nn(
        &mut self,
        _game: &GtpGame,
        _pla: Player,
        _symmetry: Option<usize>,
        _policy_optimism: Option<f64>,
    ) -> Result<String, String> {
        Err("no network".to_string())
    }

    /// KataGo's `kata-raw-human-nn` text: as [`GtpBot::raw_nn`] for the
    /// human-style net of `-human-model`, with the genmove search's
    /// `rootPolicyOptimism`.
    fn raw_human_nn(
        &mut self,
        _game: &GtpGame,
        _pla: Player,
        _symmetry: Option<usize>,
    ) -> Result<String, String> {
        Err("Cannot run kata-raw-human-nn, -human-model was not provided".to_string())
    }

    /// KataGo's `printTree` text for `debug_moves`: the last search's tree,
    /// brought to `game`'s position as the next search would reuse it,
    /// printed with `options` from `perspective`. Empty when there is no
    /// searched tree there (and for a bot without a search).
    fn print_tree(
        &mut self,
        game: &GtpGame,
        options: &PrintTreeOptions,
        perspective: Perspective,
    ) -> String {
        let _ = (game, options, perspective);
        String::new()
    }

    /// KataGo's `rawNNBrief` (`debug_moves rawstats`): in each symmetry,
    /// the net's White win-loss and lead after `branch` is played from
    /// `game`'s position, and, with a branch, the policy of its last move
    /// before it was played. Empty for a bot without a network.
    fn raw_nn_brief(&mut self, game: &GtpGame, branch: &[Move]) -> Result<String, String> {
        let _ = (game, branch);
        Ok(String::new())
    }

    /// Searches with this pattern bonus table from now on (KataGo's
    /// `setPatternBonusTable`); a bot without a search ignores it.
    fn set_pattern_bonus_table(&mut self, table: Option<Arc<PatternBonusTable>>) {
        let _ = table;
    }

    /// Forgets the search tree and the network cache (`clear_cache`).
    fn clear_cache(&mut self);

    /// Search parameter names `kata-get-param` knows, in KataGo's order.
    fn param_names(&self) -> Vec<String>;

    /// A parameter's current value as KataGo prints it (JSON scalar).
    fn get_param(&self, name: &str) -> Option<String>;

    /// Sets a parameter; an unknown name or bad value is an error text.
    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String>;
}

/// The parameters [`RandomBot`] pretends to have, so that the
/// `kata-*-param` commands can be exercised.
const RANDOM_BOT_PARAMS: &[(&str, &str)] = &[
    ("maxVisits", "500"),
    ("maxPlayouts", "1125899906842624"),
    ("maxTime", "1e+20"),
    ("numSearchThreads", "1"),
    ("playoutDoublingAdvantage", "0.0"),
    ("wideRootNoise", "0.0"),
];

/// A stand-in search: random legal moves that do not fill the mover's own
/// simple eyes, passing when none is left. Analysis reports those moves
/// with growing fake visit counts. Ownership comes from a territory
/// heuristic (see [`heuristic_ownership`]).
pub struct RandomBot {
    rng: StdRng,
    params: Vec<(String, String)>,
}

impl RandomBot {
    /// A bot with a fixed seed (reproducible games in tests).
    pub fn new(seed: u64) -> RandomBot {
        RandomBot {
            rng: StdRng::seed_from_u64(seed),
            params: RANDOM_BOT_PARAMS
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn candidate_moves(&self, req: &SearchRequest<'_>) -> Vec<Move> {
        let avoid = match req.pla {
            Player::Black => &req.avoid.black,
            Player::White => &req.avoid.white,
        };
        let board = req.game.board();
        board
            .locs()
            .filter(|&loc| avoid.get(loc.idx()).is_none_or(|&d| d <= 0))
            .filter(|&loc| !board.is_simple_eye(loc, req.pla))
            .map(Move::Play)
            .filter(|&mv| req.game.is_legal_strict(mv, req.pla))
            .collect()
    }
}

impl GtpBot for RandomBot {
    fn search(
        &mut self,
        req: &SearchRequest<'_>,
        stop: &AtomicBool,
        report: &mut (dyn FnMut(&AnalysisSnapshot) + Send),
    ) -> Option<SearchOutcome> {
        let mut moves = self.candidate_moves(req);
        moves.shuffle(&mut self.rng);
        moves.truncate(10);
        let best = moves.first().copied().unwrap_or(Move::Pass);
        if moves.is_empty() {
            moves.push(Move::Pass);
        }
        let n = moves.len();
        let mut visits = 0u64;
        let board = req.game.board();
        let snapshot = |visits: u64| {
            let mut snap = AnalysisSnapshot::empty(board.x_size(), board.y_size(), req.pla);
            snap.root = Some(RootInfo {
                visits: visits as i64,
                winrate: 0.5,
                weight: visits as f64,
                current_player: req.pla,
                ..RootInfo::default()
            });
            for (order, &mv) in moves.iter().enumerate() {
                let v = (visits >> order).max(1) as i64;
                snap.moves.push(MoveInfo {
                    mv,
                    visits: v,
                    edge_visits: v,
                    weight: v as f64,
                    prior: 1.0 / n as f64,
                    order,
                    pv: vec![mv],
                    pv_visits: vec![v],
                    pv_edge_visits: vec![v],
                    ..MoveInfo::default()
                });
            }
            if req.want_ownership {
                // The heuristic is White's view; the snapshot the mover's.
                let s = if req.pla == Player::White { 1.0 } else { -1.0 };
                snap.ownership = Some(heuristic_ownership(board).iter().map(|x| s * x).collect());
                snap.ownership_stdev = Some(vec![0.0; board.x_size() * board.y_size()]);
            }
            snap
        };
        if let Some(interval) = req.report_interval {
            let interval = Duration::from_secs_f64(interval.clamp(0.01, 3600.0));
            let endless = !matches!(req.purpose, SearchPurpose::Genmove { .. });
            let mut next = Instant::now();
            // A genmove_analyze reports a few times; analysis runs until stopped.
            for _ in 0..if endless { u64::MAX } else { 3 } {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                visits += self.rng.gen_range(8..16);
                report(&snapshot(visits));
                next += interval;
                sleep_until(next, stop);
            }
        } else if !matches!(req.purpose, SearchPurpose::Genmove { .. }) {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let snapshot = snapshot(visits.max(1));
        if req.report_interval.is_some() && !matches!(req.purpose, SearchPurpose::Ponder) {
            report(&snapshot);
        }
        Some(SearchOutcome {
            best,
            white_win_loss: 0.0,
            white_lead: 0.0,
            snapshot,
        })
    }

    fn estimate_final(&mut self, game: &GtpGame, _pla: Player) -> FinalEstimate {
        let ownership = heuristic_ownership(game.board());
        let area: f64 = ownership.iter().sum();
        FinalEstimate {
            white_lead: area + game.rules().komi as f64,
            ownership,
        }
    }

    fn clear_cache(&mut self) {}

    fn param_names(&self) -> Vec<String> {
        self.params.iter().map(|(k, _)| k.clone()).collect()
    }

    fn get_param(&self, name: &str) -> Option<String> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        let slot = self
            .params
            .iter_mut()
            .find(|(k, _)| k == name)
            .ok_or_else(|| {
                format!("Unrecognized or non-overridable parameter in kata-set-params: {name}")
            })?;
        if value.trim().parse::<f64>().is_err() {
            return Err(format!("Could not parse value for {name}: {value}"));
        }
        slot.1 = value.trim().to_string();
        Ok(())
    }
}

fn sleep_until(deadline: Instant, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(5)));
    }
}

/// A network-free ownership guess (White positive), row-major from the
/// top-left: an empty region belongs to the colour whose stones border it
/// clearly more (at least twice as many bordering stones), and a chain is
/// dead when every empty region it touches belongs to the opponent. Good
/// enough to call a lone stone inside a wall dead; the real search replaces
/// it with the network's ownership.
pub fn heuristic_ownership(board: &Board) -> Vec<f64> {
    let (xs, ys) = (board.x_size(), board.y_size());
    let idx = |loc: Loc| Move::Play(loc).policy_index(xs, ys);
    let neighbours = |loc: Loc| {
        let (x, y) = loc.xy(xs);
        let mut v = Vec::with_capacity(4);
        if x > 0 {
            v.push(Loc::from_xy(x - 1, y, xs));
        }
        if x + 1 < xs {
            v.push(Loc::from_xy(x + 1, y, xs));
        }
        if y > 0 {
            v.push(Loc::from_xy(x, y - 1, xs));
        }
        if y + 1 < ys {
            v.push(Loc::from_xy(x, y + 1, xs));
        }
        v
    };
    // Empty regions and who borders them.
    let mut region_of = vec![usize::MAX; xs * ys];
    let mut owner: Vec<Color> = Vec::new();
    for start in board.locs() {
        if board.get(start) != Color::Empty || region_of[idx(start)] != usize::MAX {
            continue;
        }
        let id = owner.len();
        let (mut black, mut white) = (Vec::new(), Vec::new());
        let mut stack = vec![start];
        region_of[idx(start)] = id;
        while let Some(p) = stack.pop() {
            for q in neighbours(p) {
                match board.get(q) {
                    Color::Empty if region_of[idx(q)] == usize::MAX => {
                        region_of[idx(q)] = id;
                        stack.push(q);
                    }
                    Color::Black if !black.contains(&q) => black.push(q),
                    Color::White if !white.contains(&q) => white.push(q),
                    _ => {}
                }
            }
        }
        owner.push(
            if black.len() >= 2 * white.len().max(1) || white.is_empty() && !black.is_empty() {
                Color::Black
            } else if white.len() >= 2 * black.len().max(1) || black.is_empty() && !white.is_empty()
            {
                Color::White
            } else {
                Color::Empty
            },
        );
    }
    let mut own = vec![0.0; xs * ys];
    for loc in board.locs() {
        let c = board.get(loc);
        own[idx(loc)] = match c {
            Color::Empty => match owner[region_of[idx(loc)]] {
                Color::Black => -1.0,
                Color::White => 1.0,
                _ => 0.0,
            },
            _ => {
                let pla = c.player().unwrap_or(Player::Black);
                let opp = pla.opp().color();
                let regions: Vec<usize> = board
                    .chain_stones(loc)
                    .flat_map(neighbours)
                    .filter(|&q| board.get(q) == Color::Empty)
                    .map(|q| region_of[idx(q)])
                    .collect();
                let dead = !regions.is_empty() && regions.iter().all(|&r| owner[r] == opp);
                let alive_sign = if pla == Player::White { 1.0 } else { -1.0 };
                if dead {
                    -alive_sign
                } else {
                    alive_sign
                }
            }
        };
    }
    own
}
