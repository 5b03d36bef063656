//! Playing a set of match games: the schedule (round robin, paired
//! openings, alternating colours), several games at once sharing one
//! batching evaluator per distinct model file, SGFs written as games
//! finish, and an early stop (SPRT, a decided gating). Shared by
//! `engine match` ([`super::cli`]) and `engine gatekeeper`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::Mutex;
use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::game::{game_comment, play_match_game, GameEnd, GameOutcome, Opening, Thinking};
use super::settings::{BotSpec, MatchSettings};
use crate::config::Config;
use crate::game::{Board, BoardHistory, GameState, Player};
use crate::nn::device::Precision;
use crate::play::stats::{Pentanomial, Wld};
use crate::play::{io_err, play_policy_moves, PlayError};
use crate::search::{NnSearchEvaluator, Search, SearchError};
use crate::store::Store;

/// Progress lines to stderr and, with `-log-file`, appended to a file.
pub struct Logger {
    prefix: String,
    file: Mutex<Option<File>>,
}

impl Logger {
    /// A logger whose lines start with `prefix` (e.g. `engine match`).
    pub fn new(prefix: &str, log_file: Option<&Path>) -> Result<Logger, PlayError> {
        let file = match log_file {
            Some(p) => Some(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(io_err(p))?,
            ),
            None => None,
        };
        Ok(Logger {
            prefix: prefix.to_string(),
            file: Mutex::new(file),
        })
    }

    /// Writes one line.
    pub fn line(&self, text: &str) {
        eprintln!("{}: {text}", self.prefix);
        if let Some(f) = self.file.lock().as_mut() {
            // One write per line, so lines from several threads never mix.
            let _ = f.write_all(format!("{text}\n").as_bytes());
        }
    }
}

/// Loads one evaluator per distinct model file and precision (bots sharing
/// both share its evaluator, its batches and its cache); returns one per
/// bot. A bot's own `nnPrecision<i>` replaces the config's for its net.
pub fn load_evaluators(
    bots: &[BotSpec],
    cfg: &Config,
    default_batch: usize,
    log: &Logger,
) -> Result<Vec<Arc<NnSearchEvaluator>>, PlayError> {
    let mut loaded: HashMap<(PathBuf, Option<Precision>), Arc<NnSearchEvaluator>> = HashMap::new();
    let mut out = Vec::with_capacity(bots.len());
    for bot in bots {
        let model = &bot.model;
        if crate::setup::is_missing_local_file(model) {
            return Err(PlayError::Model(format!(
                "model file not found: {}",
                model.display()
            )));
        }
        let file = std::fs::canonicalize(model).unwrap_or_else(|_| model.clone());
        let key = (file, bot.precision);
        if let Some(e) = loaded.get(&key) {
            out.push(e.clone());
            continue;
        }
        let own_cfg;
        let bot_cfg = match bot.precision {
            Some(p) => {
                let mut c = cfg.clone();
                c.set("nnPrecision", toml::Value::String(p.name().into()));
                own_cfg = c;
                &own_cfg
            }
            None => cfg,
        };
        let net = crate::setup::load_network(model, bot_cfg, default_batch)
            .map_err(|e| PlayError::Model(format!("{}: {e}", model.display())))?;
        // The bot's copy read the net's keys (`numNNServerThreadsPerModel`,
        // `nnCacheSizePowerOfTwo`...): they are not unused in `cfg`.
        cfg.mark_used_as_in(bot_cfg);
        log.line(&format!(
            "loaded {} ({}) on {}{}",
            net.model_name,
            model.display(),
            net.device,
            bot.precision.map_or(String::new(), |p| format!(
                " in {p} (the bot's nnPrecision)"
            ))
        ));
        loaded.insert(key, net.evaluator.clone());
        out.push(net.evaluator);
    }
    Ok(out)
}

/// The pairs of bots that meet: every pair once (round robin), or bot 0
/// against itself when there is one bot.
pub fn round_robin(num_bots: usize) -> Vec<(usize, usize)> {
    if num_bots <= 1 {
        return vec![(0, 0)];
    }
    let mut pairs = Vec::new();
    for i in 0..num_bots {
        for j in i + 1..num_bots {
            pairs.push((i, j));
        }
    }
    pairs
}

/// Game `g` of the schedule: (opening index, black bot, white bot). Games
/// come in twos on one opening with colours swapped (`2k`: the pair's
/// first bot is black, `2k+1`: white); successive openings go round the
/// pairs, so every prefix of the schedule is as balanced as it can be.
pub fn game_assignment(g: u64, pairs: &[(usize, usize)]) -> (u64, usize, usize) {
    let opening = g / 2;
    let (a, b) = pairs[(opening % pairs.len() as u64) as usize];
    if g.is_multiple_of(2) {
        (opening, a, b)
    } else {
        (opening, b, a)
    }
}

/// One finished game as the summary lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GameSummary {
    /// Index in the schedule.
    pub index: u64,
    /// Black bot's name.
    pub black: String,
    /// White bot's name.
    pub white: String,
    /// SGF result text (`B+R`, `W+3.5`, `0`, `Void`).
    pub result: String,
    /// How it ended.
    pub end: GameEnd,
    /// Moves played, opening included.
    pub moves: usize,
    /// The SGF file, relative to the SGF folder.
    pub sgf: String,
}

/// Results so far: `table[i][j]` is bot i's record against bot j, each
/// bot's searches, each game's result by its index in the schedule (for
/// the pairs of games on one opening), and the games in the order they
/// finished.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Pairwise records.
    pub table: Vec<Vec<Wld>>,
    /// Each bot's searches over its games (those whose SGF records them).
    pub thinking: Vec<Thinking>,
    /// Finished games.
    pub games: Vec<GameSummary>,
    /// Each finished game by its index in the schedule: black, white and
    /// black's points in half points (2 a win, 1 a draw or no result).
    by_index: BTreeMap<u64, (usize, usize, usize)>,
}

impl Tally {
    /// An empty tally for `n` bots.
    pub fn new(n: usize) -> Tally {
        Tally {
            table: vec![vec![Wld::default(); n]; n],
            thinking: vec![Thinking::default(); n],
            games: Vec::new(),
            by_index: BTreeMap::new(),
        }
    }

    /// Counts game `index` of the schedule: a win and a loss, or a draw
    /// for both (no result counts as a draw), and both sides' searches.
    pub fn add(&mut self, index: u64, o: &GameOutcome) {
        let (b, w) = (o.black, o.white);
        self.thinking[b].merge(&o.black_thinking);
        self.thinking[w].merge(&o.white_thinking);
        let black_half_points = match (o.winner, o.no_result) {
            (Some(Player::Black), false) => {
                self.table[b][w].wins += 1;
                self.table[w][b].losses += 1;
                2
            }
            (Some(Player::White), false) => {
                self.table[w][b].wins += 1;
                self.table[b][w].losses += 1;
                0
            }
            _ => {
                self.table[b][w].draws += 1;
                if b != w {
                    self.table[w][b].draws += 1;
                }
                1
            }
        };
        self.by_index.insert(index, (b, w, black_half_points));
    }

    /// Bot `a`'s results against bot `b` by pairs of games (games `2k` and
    /// `2k + 1`: one opening, colours swapped; see [`game_assignment`]):
    /// the pairs both of whose games between `a` and `b` have finished.
    pub fn pairs(&self, a: usize, b: usize) -> Pentanomial {
        let mut out = Pentanomial::default();
        let a_half_points = |&(black, white, black_half): &(usize, usize, usize)| {
            if (black, white) == (a, b) {
                Some(black_half)
            } else if (black, white) == (b, a) {
                Some(2 - black_half)
            } else {
                None
            }
        };
        for (&index, first) in self.by_index.iter().filter(|(i, _)| *i % 2 == 0) {
            let Some(second) = self.by_index.get(&(index + 1)) else {
                continue;
            };
            if let (Some(x), Some(y)) = (a_half_points(first), a_half_points(second)) {
                out.add(x + y);
            }
        }
        out
    }

    /// Bot i's record against everyone.
    pub fn total(&self, i: usize) -> Wld {
        let mut t = Wld::default();
        for (j, r) in self.table[i].iter().enumerate() {
            if j == i {
                // A bot against itself: each game once.
                t.wins += r.wins;
                t.draws += r.draws;
                t.losses += r.losses;
                continue;
            }
            t.wins += r.wins;
            t.losses += r.losses;
            t.draws += r.draws;
        }
        t
    }
}

/// An opening made once by the first of its two games (an error as text).
type OpeningCell = OnceLock<Result<Opening, String>>;

/// A set of games to play.
pub struct MatchRunner<'a> {
    /// Settings (bots, games, board, rules).
    pub settings: &'a MatchSettings,
    /// One evaluator per bot (shared between bots with the same net).
    pub evaluators: Vec<Arc<NnSearchEvaluator>>,
    /// Where each game's SGF goes (a folder or `s3://` URL).
    pub sgf_dir: Store,
    /// Prefix of the SGF file names.
    pub run_name: String,
    /// Progress lines.
    pub log: &'a Logger,
}

/// What [`MatchRunner::run`] did.
pub struct RunResult {
    /// The results.
    pub tally: Tally,
    /// Whether `should_stop` ended the run before all games were played.
    pub stopped_early: bool,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl MatchRunner<'_> {
    /// Draws opening `k`: its board size, rules and moves (from the raw
    /// policy of `bot`'s net), from a generator seeded by `seed` and `k`
    /// so both games of the pair start alike.
    fn make_opening(&self, seed: u64, k: u64, bot: usize) -> Result<Opening, SearchError> {
        let s = self.settings;
        let mut rng = StdRng::seed_from_u64(seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let size = WeightedIndex::new(&s.board_size_rel_probs)
            .map(|d| s.board_sizes[d.sample(&mut rng)])
            .unwrap_or(s.board_sizes[0]);
        let board = Board::new(size, size).map_err(|e| {
            SearchError::Eval(crate::search::EvalError(format!("board size {size}: {e}")))
        })?;
        let rules = s.draw_rules(&mut rng);
        let mut moves = Vec::new();
        if s.opening_moves > 0 {
            let params = &s.bots[bot].params;
            let mut search = Search::new(
                params.clone(),
                self.evaluators[bot].clone(),
                GameState::new(
                    board.clone(),
                    BoardHistory::new(&board, Player::Black, rules),
                    Player::Black,
                ),
                rng.gen(),
            );
            let never = AtomicBool::new(false);
            play_policy_moves(
                &mut search,
                params,
                s.opening_moves,
                s.opening_temperature,
                &mut rng,
                &never,
            )?;
            moves = search
                .root_state()
                .hist
                .moves()
                .iter()
                .map(|&(mv, _)| mv)
                .collect();
        }
        Ok(Opening {
            board,
            rules,
            moves,
        })
    }

    /// Plays the schedule's games, `numGameThreads` at once, until all
    /// `numGamesTotal` are done or `should_stop` (asked after every game)
    /// says so; games still running then are abandoned and not counted.
    pub fn run(
        &self,
        should_stop: &(dyn Fn(&Tally) -> bool + Sync),
        on_game: &(dyn Fn(&Tally, &GameOutcome) + Sync),
    ) -> Result<RunResult, PlayError> {
        self.run_from(Tally::new(self.settings.bots.len()), should_stop, on_game)
    }

    /// [`MatchRunner::run`] going on from `played`, the games of this
    /// schedule already finished (a resumed match): those count and are
    /// not played again; `should_stop` is asked once before any game.
    pub fn run_from(
        &self,
        played: Tally,
        should_stop: &(dyn Fn(&Tally) -> bool + Sync),
        on_game: &(dyn Fn(&Tally, &GameOutcome) + Sync),
    ) -> Result<RunResult, PlayError> {
        let s = self.settings;
        let pairs = round_robin(s.bots.len());
        let seed = s.seed.unwrap_or_else(rand::random);
        let openings: Mutex<HashMap<u64, Arc<OpeningCell>>> = Mutex::new(HashMap::new());
        let next_game = AtomicU64::new(0);
        let done: HashSet<u64> = played.games.iter().map(|g| g.index).collect();
        let decided = !played.games.is_empty() && should_stop(&played);
        let stop = AtomicBool::new(decided);
        let stopped_early = AtomicBool::new(decided);
        let tally = Mutex::new(played);
        let failure: Mutex<Option<PlayError>> = Mutex::new(None);
        let start = Instant::now();
        let to_play = s.num_games_total.saturating_sub(done.len() as u64);
        let threads = s.num_game_threads.min(to_play as usize).max(1);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let g = next_game.fetch_add(1, Ordering::SeqCst);
                        if g >= s.num_games_total {
                            break;
                        }
                        if done.contains(&g) {
                            continue;
                        }
                        let (k, black, white) = game_assignment(g, &pairs);
                        let cell = openings.lock().entry(k).or_default().clone();
                        let opening = cell.get_or_init(|| {
                            self.make_opening(seed, k, pairs[(k % pairs.len() as u64) as usize].0)
                                .map_err(|e| e.to_string())
                        });
                        let opening = match opening {
                            Ok(o) => o,
                            Err(e) => {
                                failure.lock().get_or_insert(PlayError::Game(e.clone()));
                                stop.store(true, Ordering::Relaxed);
                                break;
                            }
                        };
                        let mut rng = StdRng::seed_from_u64(seed.wrapping_add(g).rotate_left(17));
                        let comment = game_comment(g, k);
                        let played = play_match_game(
                            s,
                            (black, &s.bots[black], &self.evaluators[black]),
                            (white, &s.bots[white], &self.evaluators[white]),
                            opening,
                            &comment,
                            &mut rng,
                            &stop,
                        );
                        let outcome = match played {
                            Ok(Some(o)) => o,
                            Ok(None) => break,
                            Err(e) => {
                                failure.lock().get_or_insert(PlayError::Game(e.to_string()));
                                stop.store(true, Ordering::Relaxed);
                                break;
                            }
                        };
                        let mut t = tally.lock();
                        if stop.load(Ordering::Relaxed) {
                            // Decided while this game ran: not counted.
                            break;
                        }
                        let file = format!("{}-{g:06}.sgf", self.run_name);
                        let mut text = outcome.sgf.clone();
                        text.push('\n');
                        if let Err(e) = self.sgf_dir.put(&file, text.into_bytes()) {
                            failure.lock().get_or_insert(PlayError::Store(e));
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        t.add(g, &outcome);
                        t.games.push(GameSummary {
                            index: g,
                            black: s.bots[black].name.clone(),
                            white: s.bots[white].name.clone(),
                            result: outcome.result_text.clone(),
                            end: outcome.end,
                            moves: outcome.num_moves,
                            sgf: file,
                        });
                        on_game(&t, &outcome);
                        if (t.games.len() as u64) < s.num_games_total && should_stop(&t) {
                            stopped_early.store(true, Ordering::Relaxed);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        if let Some(e) = failure.lock().take() {
            return Err(e);
        }
        Ok(RunResult {
            tally: tally.into_inner(),
            stopped_early: stopped_early.load(Ordering::Relaxed),
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_pairs() {
        assert_eq!(round_robin(1), vec![(0, 0)]);
        assert_eq!(round_robin(2), vec![(0, 1)]);
        assert_eq!(round_robin(3), vec![(0, 1), (0, 2), (1, 2)]);
    }

    #[test]
    fn paired_openings_swap_colours() {
        let pairs = round_robin(3);
        let games: Vec<_> = (0..12).map(|g| game_assignment(g, &pairs)).collect();
        for k in 0..6 {
            let (o1, b1, w1) = games[2 * k];
            let (o2, b2, w2) = games[2 * k + 1];
            // Same opening, colours swapped.
            assert_eq!((o1, o2), (k as u64, k as u64));
            assert_eq!((b1, w1), (w2, b2));
            assert_ne!(b1, w1);
        }
        // Every pair plays every colour equally often over 12 games.
        let mut count = HashMap::new();
        for &(_, b, w) in &games {
            *count.entry((b, w)).or_insert(0) += 1;
        }
        assert_eq!(count.len(), 6);
        assert!(count.values().all(|&c| c == 2), "{count:?}");
        // Two bots: black alternates game by game.
        let two = round_robin(2);
        let blacks: Vec<usize> = (0..6).map(|g| game_assignment(g, &two).1).collect();
        assert_eq!(blacks, [0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn tally_counts_both_sides() {
        let mut t = Tally::new(2);
        let mut o = GameOutcome {
            black: 0,
            white: 1,
            winner: Some(Player::Black),
            no_result: false,
            end: GameEnd::Resignation,
            white_minus_black: 0.0,
            num_moves: 10,
            result_text: "B+R".into(),
            sgf: String::new(),
            black_thinking: Thinking {
                searches: 5,
                playouts: 500,
                seconds: 2.0,
            },
            white_thinking: Thinking {
                searches: 5,
                playouts: 250,
                seconds: 1.0,
            },
        };
        t.add(0, &o);
        o.black = 1;
        o.white = 0;
        o.winner = None;
        t.add(1, &o);
        o.winner = Some(Player::White);
        t.add(3, &o);
        assert_eq!(
            t.total(0),
            Wld {
                wins: 2,
                losses: 0,
                draws: 1
            }
        );
        assert_eq!(t.total(1), t.total(0).flipped());
        // Bot 0 was black in game 0 and white in games 1 and 3.
        assert_eq!(t.thinking[0].playouts, 500 + 250 + 250);
        assert_eq!(t.thinking[1].playouts, 250 + 500 + 500);
        assert_eq!(t.thinking[0].searches, 15);
        // Pairs: games 0 and 1 (bot 0 won one, drew one: 3 half points);
        // game 3's pair waits for game 2.
        assert_eq!(t.pairs(0, 1).counts, [0, 0, 0, 1, 0]);
        assert_eq!(t.pairs(1, 0).counts, [0, 1, 0, 0, 0]);
        o.black = 0;
        o.white = 1;
        o.winner = Some(Player::Black);
        t.add(2, &o);
        assert_eq!(t.pairs(0, 1).counts, [0, 0, 0, 1, 1]);
        // Bots that did not meet in a pair have none.
        assert_eq!(Tally::new(3).pairs(0, 2).pairs(), 0);
    }
}
