//! The commands that search: `genmove` and its variants, the analysis
//! commands, cancellable searches and pondering.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use crate::config::Enabled;
use crate::game::{AreaOptions, Color, Move, Player, ScoringRule};

use super::analysis_format::format_analysis;
use super::analyze_args::{parse_analyze_args, AnalyzeArgs, AnalyzeKind, AvoidMoves};
use parking_lot::Mutex;

use super::bot::{GtpBot, SearchOutcome, SearchPurpose, SearchRequest};
use super::engine::{Background, GtpEngine, Handled};
use super::position::GtpGame;
use super::protocol::Output;
use super::protocol::{format_header, format_response, CommandLine};
use super::scoring_cmds::chain_statuses;
use crate::search::{Perspective, PrintTreeOptions};

impl GtpEngine {
    /// Search commands; anything else is an unknown command.
    pub(super) fn handle_search(&mut self, c: &CommandLine) -> Handled {
        let name = c.name.as_str();
        match name {
            "genmove"
            | "genmove_debug"
            | "kata-search"
            | "kata-search_debug"
            | "kata-search_cancellable" => {
                let [colour] = c.args.as_slice() else {
                    return Handled::Err(format!(
                        "Expected one argument for {name} but got '{}'",
                        c.joined_args()
                    ));
                };
                let Some(pla) = Player::parse(colour) else {
                    return Handled::Err(format!("Could not parse color: '{colour}'"));
                };
                let play = name == "genmove" || name == "genmove_debug";
                if name == "kata-search_cancellable" {
                    self.spawn_cancellable(c.id, pla, None);
                    return Handled::Written;
                }
                match self.genmove(pla, None, play) {
                    Ok(text) => Handled::Ok(text),
                    Err(e) => Handled::Err(e),
                }
            }
            _ => match AnalyzeKind::of_command(name) {
                Some(kind) => self.analysis_command(c, kind),
                None => Handled::Err("unknown command".into()),
            },
        }
    }

    fn analysis_command(&mut self, c: &CommandLine, kind: AnalyzeKind) -> Handled {
        let args = match parse_analyze_args(
            kind,
            &c.name,
            &c.args,
            self.game.x_size(),
            self.game.y_size(),
        ) {
            Ok(a) => a,
            Err(e) => return Handled::Err(e),
        };
        let pla = args.player.unwrap_or(self.game.next_pla());
        match c.name.as_str() {
            "analyze" | "lz-analyze" | "kata-analyze" => {
                self.out.write_str(&format_header(c.id));
                self.spawn_background(pla, SearchPurpose::Analysis, Some(args), true);
                Handled::Written
            }
            "kata-search_analyze_cancellable" => {
                self.out.write_str(&format_header(c.id));
                self.spawn_cancellable(c.id, pla, Some(args));
                Handled::Written
            }
            name => {
                let play = name != "kata-search_analyze";
                self.out.write_str(&format_header(c.id));
                match self.genmove(pla, Some(&args), play) {
                    Ok(text) => self.out.write_str(&format!("{text}\n\n")),
                    // The header is out already: KataGo ends the response
                    // with a blank line and reports the error on stderr.
                    Err(e) => {
                        crate::logfile::startup(&e);
                        self.out.write_str("\n");
                    }
                }
                Handled::Written
            }
        }
    }

    /// Chooses (and with `play`, plays) a move for `pla`; with `analysis`
    /// set, prints analysis lines while searching and answers `play X`.
    fn genmove(
        &mut self,
        pla: Player,
        analysis: Option<&AnalyzeArgs>,
        play: bool,
    ) -> Result<String, String> {
        self.stop_background();
        let started = Instant::now();
        // KataGo's bot takes `pla` as the player to move (restarting the
        // history if it was the other's turn).
        self.game.set_player_if_new(pla);
        let search_factor = self.search_factor(pla);
        let no_avoid = AvoidMoves::default();
        let req = SearchRequest {
            game: &self.game,
            pla,
            purpose: SearchPurpose::Genmove {
                clock: self.clocks[pla].clone(),
                search_factor,
            },
            avoid: analysis.map_or(&no_avoid, |a| &a.avoid),
            want_ownership: analysis.is_some_and(AnalyzeArgs::wants_ownership),
            report_interval: analysis.and_then(|a| a.report_interval),
            min_moves: analysis.map_or(0, |a| a.min_moves),
        };
        let stop = AtomicBool::new(false);
        let out = self.out.clone();
        let perspective = self.settings.perspective;
        let mut report = |snap: &crate::search::AnalysisSnapshot| {
            if let Some(args) = analysis {
                if let Some(line) = format_analysis(snap, args, perspective) {
                    out.write_str(&(line + "\n"));
                }
            }
        };
        let outcome = self.bot.lock().search(&req, &stop, &mut report);
        let outcome = match outcome {
            Some(o) if self.game.is_legal_strict(o.best, pla) => o,
            _ => {
                self.genmove_time_sum += started.elapsed().as_secs_f64();
                return Err("genmove returned null location or illegal move".into());
            }
        };
        self.delay_move(&outcome);
        let best = self.maybe_friendly_pass(pla, outcome.best);
        let outcome = SearchOutcome {
            best: self.maybe_cleanup_before_pass(pla, best),
            ..outcome
        };
        self.recent_win_loss.push(outcome.white_win_loss);
        let resign = self.settings.allow_resignation && self.should_resign(pla, outcome.white_lead);
        self.genmove_time_sum += started.elapsed().as_secs_f64();
        self.auto_avoid_record(pla, outcome.best);
        let vertex = if resign {
            "resign".to_string()
        } else {
            outcome.best.to_gtp(self.game.x_size(), self.game.y_size())
        };
        if play && !resign {
            self.game.play(outcome.best, pla);
            self.maybe_ponder(true);
        }
        Ok(if analysis.is_some() {
            format!("play {vertex}")
        } else {
            vertex
        })
    }

    /// KataGo's human-like pause before answering a genmove
    /// (`delayMoveScale`, `delayMoveMax`): a Gamma(2) wait whose mean,
    /// `delayMoveScale / 2 / (p + 0.1)` seconds, is longer for a move the
    /// net finds less likely (`p`: the human net's policy when one ran,
    /// else the main net's), capped at `delayMoveMax`.
    fn delay_move(&self, outcome: &SearchOutcome) {
        let (scale, max) = (self.settings.delay_move_scale, self.settings.delay_move_max);
        if scale <= 0.0 || max <= 0.0 {
            return;
        }
        let snap = &outcome.snapshot;
        let Some(nn) = snap.root_human_nn.as_ref().or(snap.root_nn.as_ref()) else {
            return;
        };
        let prob =
            f64::from(nn.policy[outcome.best.policy_index(snap.x_size, snap.y_size)]).max(0.0);
        let mean = 0.5 * scale / (prob + 0.10);
        // Gamma(2, 1): the sum of two unit exponentials.
        let gamma2 = -(1.0 - rand::random::<f64>()).ln() - (1.0 - rand::random::<f64>()).ln();
        let wait = (gamma2 * mean / 2.0).clamp(0.0001, max);
        std::thread::sleep(std::time::Duration::from_secs_f64(wait));
    }

    /// KataGo's `maybeFriendlyPass`: when the opponent has just passed and
    /// passing too would end the game under area scoring with friendly
    /// passes (rules with `friendlyPassOk`, or `friendlyPass = true`), pass
    /// instead of `mv` if the game is settled: no dead stone needs removing
    /// to see the borders closed (every point the search owns surely lies
    /// in a closed area once dead stones are lifted), `mv` touches no
    /// living opponent stone and saves nothing in atari, and a search after
    /// passing rates the game no worse than one after `mv` (utility within
    /// 0.1, score and lead within 0.25 points).
    fn maybe_friendly_pass(&mut self, pla: Player, mv: Move) -> Move {
        let s = &self.settings;
        if s.cleanup_before_pass == Enabled::True || mv == Move::Pass {
            return mv;
        }
        let hist = self.game.history();
        let rules = *hist.rules();
        let wanted = match s.friendly_pass {
            Enabled::True => true,
            Enabled::False => false,
            Enabled::Auto => rules.friendly_pass_ok && rules.scoring_rule == ScoringRule::Area,
        };
        let board = *self.game.board();
        let opponent_passed = hist.moves().last() == Some(&(Move::Pass, pla.opp()));
        if !wanted
            || rules.scoring_rule != ScoringRule::Area
            || !hist.is_final_phase()
            || hist.has_button()
            || !hist.pass_would_end_phase(&board, pla)
            || !opponent_passed
        {
            return mv;
        }
        let Move::Play(loc) = mv else {
            return mv;
        };
        let suicide_legal = hist.suicide_legal_for_pass_alive();
        let ownership = self.bot.lock().estimate_final(&self.game, pla).ownership;
        let alive = chain_statuses(&board, &ownership);
        let mut clean = board;
        for l in board.locs() {
            if board.get(l) != Color::Empty && !alive[l.idx()] {
                clean.set_stone(l, Color::Empty);
            }
        }
        let area = clean.calculate_area(AreaOptions {
            non_pass_alive_stones: true,
            safe_big_territories: true,
            unsafe_big_territories: true,
            multi_stone_suicide_legal: suicide_legal,
        });
        let xs = board.x_size();
        let unsurrounded = board.locs().any(|l| {
            let own = ownership
                .get(Move::Play(l).policy_index(xs, board.y_size()))
                .copied()
                .unwrap_or(0.0);
            (own > 0.75 && area.get(l) != Color::White)
                || (own < -0.75 && area.get(l) != Color::Black)
        });
        if unsurrounded
            || clean.is_adjacent_to_pla(loc, pla.opp())
            || clean.would_be_capture(loc, pla.opp())
        {
            return mv;
        }
        let (after_pass, after_move) = {
            let mut bot = self.bot.lock();
            (
                bot.values_after_move(&self.game, pla, Move::Pass),
                bot.values_after_move(&self.game, pla, mv),
            )
        };
        match (after_pass, after_move) {
            (Some(p), Some(m)) if passing_is_no_worse(pla, p, m) => Move::Pass,
            _ => mv,
        }
    }

    /// KataGo's `maybeCleanupBeforePass`: instead of passing, capture an
    /// opponent stone left inside our pass-alive area (under area scoring
    /// without friendly passes, unless configured otherwise), so that a
    /// strict area count cannot give it to the opponent.
    fn maybe_cleanup_before_pass(&self, pla: Player, mv: Move) -> Move {
        let s = &self.settings;
        if mv != Move::Pass || s.friendly_pass == Enabled::True {
            return mv;
        }
        let hist = self.game.history();
        let rules = hist.rules();
        let wanted = match s.cleanup_before_pass {
            Enabled::True => true,
            Enabled::False => false,
            Enabled::Auto => !rules.friendly_pass_ok && rules.scoring_rule == ScoringRule::Area,
        };
        if !wanted || !hist.is_final_phase() || hist.has_button() {
            return mv;
        }
        let board = self.game.board();
        let safe = board.calculate_area(AreaOptions {
            non_pass_alive_stones: false,
            safe_big_territories: false,
            unsafe_big_territories: false,
            multi_stone_suicide_legal: rules.multi_stone_suicide_legal,
        });
        board
            .locs()
            .find(|&loc| {
                board.get(loc) == Color::Empty
                    && safe.get(loc) == pla.color()
                    && board.is_adjacent_to_pla(loc, pla.opp())
                    && hist.is_legal(board, Move::Play(loc), pla)
            })
            .map_or(mv, Move::Play)
    }

    /// KataGo's `getSearchFactor`: think less when the last three
    /// searches all saw `pla` winning by more than the threshold.
    fn search_factor(&self, pla: Player) -> f64 {
        let s = &self.settings;
        let tp = crate::timecontrol::TimeParams {
            search_factor_when_winning: s.search_factor_when_winning,
            search_factor_when_winning_threshold: s.search_factor_when_winning_threshold,
            ..crate::timecontrol::TimeParams::default()
        };
        let wl_factor = self
            .bot
            .lock()
            .get_param("winLossUtilityFactor")
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(1.0);
        tp.winning_search_factor(wl_factor, &self.recent_win_loss, pla)
    }

    /// KataGo's `shouldResign`, with the handicap allowance for White.
    fn should_resign(&self, pla: Player, white_lead: f64) -> bool {
        let s = &self.settings;
        let (xs, ys) = (self.game.x_size() as f64, self.game.y_size() as f64);
        let area = xs * ys;
        let init = self.game.initial_board();
        let handicap = if init.num_stones_of(Player::White) == 0 {
            init.num_stones_of(Player::Black)
        } else {
            0
        };
        let rules = self.game.rules();
        let komi = rules.komi as f64;
        let initial_black_advantage = if handicap <= 1 {
            7.0 - komi
        } else {
            use crate::game::{ScoringRule, WhiteHandicapBonusRule};
            let stone_value = if rules.scoring_rule == ScoringRule::Area {
                15.0
            } else {
                14.0
            };
            let bonus = match rules.white_handicap_bonus_rule {
                WhiteHandicapBonusRule::N => handicap as f64,
                WhiteHandicapBonusRule::NMinusOne => handicap as f64 - 1.0,
                WhiteHandicapBonusRule::Zero => 0.0,
            };
            stone_value * (handicap as f64 - 1.0) + (7.0 - komi - bonus)
        };
        let turns = self.game.moves().len() as f64;
        let mut min_turn = 0.0;
        let mut no_resign_above = area;
        if initial_black_advantage > 0.9 && pla == Player::White {
            min_turn = 1.0 + (area / 5.0).floor();
            let catch_up = (0.60 * area - min_turn).max(1.0);
            let spent = (turns - min_turn).clamp(0.0, catch_up);
            no_resign_above = -initial_black_advantage * ((catch_up - spent) / catch_up)
                - 5.0
                - initial_black_advantage * 0.15;
        }
        let min_turn = min_turn.max((s.resign_min_moves_per_board_area * area).floor());
        if turns < min_turn {
            return false;
        }
        if pla == Player::White && white_lead > no_resign_above {
            return false;
        }
        if s.resign_consec_turns > self.recent_win_loss.len() {
            return false;
        }
        let close = match pla {
            Player::White => white_lead > -s.resign_min_score_difference,
            Player::Black => white_lead < s.resign_min_score_difference,
        };
        if close {
            return false;
        }
        self.recent_win_loss
            .iter()
            .rev()
            .take(s.resign_consec_turns)
            .all(|&v| match pla {
                Player::White => v < s.resign_threshold,
                Player::Black => v > -s.resign_threshold,
            })
    }

    /// `debug_moves [MOVES...] [rawstats]`, as KataGo's: the board after
    /// the moves (when they can all be played), the last search's tree
    /// from the current position down that line and one level below it
    /// (KataGo's `printTree`), and with `rawstats` the raw net's brief
    /// figures there. It does not search.
    pub(super) fn debug_moves(&mut self, args: &[String]) -> Result<String, String> {
        let (xs, ys) = (self.game.x_size(), self.game.y_size());
        let branch = args
            .iter()
            .filter(|a| *a != "rawstats")
            .map(|a| Move::parse(a, xs, ys))
            .collect::<Result<Vec<Move>, _>>()
            .map_err(|_| "Invalid move sequence".to_string())?;
        let mut after = self.game.clone();
        let all_legal = branch.iter().all(|&mv| {
            let pla = after.next_pla();
            after.play(mv, pla)
        });
        let mut out = if all_legal {
            after.board_text()
        } else {
            String::new()
        };
        let options = PrintTreeOptions {
            branch,
            ..PrintTreeOptions::default()
        };
        let mut bot = self.bot.lock();
        out += &bot.print_tree(&self.game, &options, self.settings.perspective);
        if args.iter().any(|a| a == "rawstats") {
            out += &bot.raw_nn_brief(&self.game, &options.branch)?;
        }
        Ok(out)
    }

    /// Starts pondering if enabled and `wanted`.
    pub(super) fn maybe_ponder(&mut self, wanted: bool) {
        if wanted && self.settings.pondering_enabled && self.background.is_none() {
            let pla = self.game.next_pla();
            self.spawn_background(pla, SearchPurpose::Ponder, None, false);
        }
    }

    /// Runs a search on a thread until stopped, printing analysis lines
    /// when `args` is set.
    fn spawn_background(
        &mut self,
        pla: Player,
        purpose: SearchPurpose,
        args: Option<AnalyzeArgs>,
        ends_response: bool,
    ) {
        let (job, stop) = self.background_search(pla, args);
        let handle = std::thread::spawn(move || {
            let _ = job.run(purpose);
        });
        self.background = Some(Background {
            stop,
            handle,
            ends_response,
        });
    }

    /// Stops any background search and sets up the next one on this
    /// position, with the flag that stops it.
    fn background_search(
        &mut self,
        pla: Player,
        args: Option<AnalyzeArgs>,
    ) -> (BackgroundSearch, Arc<AtomicBool>) {
        self.stop_background();
        let stop = Arc::new(AtomicBool::new(false));
        let job = BackgroundSearch {
            bot: self.bot.clone(),
            game: self.game.clone(),
            pla,
            args,
            perspective: self.settings.perspective,
            out: self.out.clone(),
            stop: stop.clone(),
        };
        (job, stop)
    }

    /// `kata-search_cancellable` / `kata-search_analyze_cancellable`: the
    /// search thread writes the answer itself, `cancelled` when stopped.
    fn spawn_cancellable(&mut self, id: Option<u64>, pla: Player, args: Option<AnalyzeArgs>) {
        let clock = self.clocks[pla].clone();
        let (job, stop) = self.background_search(pla, args);
        let handle = std::thread::spawn(move || {
            let purpose = SearchPurpose::Genmove {
                clock,
                search_factor: 1.0,
            };
            let outcome = job.run(purpose);
            let cancelled = job.stop.load(std::sync::atomic::Ordering::Relaxed);
            let (xs, ys) = (job.game.x_size(), job.game.y_size());
            let mv = match outcome {
                _ if cancelled => "cancelled".to_string(),
                Some(o) => o.best.to_gtp(xs, ys),
                None => Move::Pass.to_gtp(xs, ys),
            };
            if job.args.is_some() {
                job.out.write_str(&format!("play {mv}\n\n"));
            } else {
                job.out.write_str(&format_response(id, true, &mv));
            }
        });
        self.background = Some(Background {
            stop,
            handle,
            ends_response: false,
        });
    }
}

/// A search run on a background thread (pondering, `*-analyze`,
/// `kata-search_cancellable`): one search of `pla`, an analysis line
/// written for each report when `args` asks for them.
struct BackgroundSearch {
    bot: Arc<Mutex<Box<dyn GtpBot>>>,
    game: GtpGame,
    pla: Player,
    args: Option<AnalyzeArgs>,
    perspective: Perspective,
    out: Output,
    /// Raised to end the search.
    stop: Arc<AtomicBool>,
}

impl BackgroundSearch {
    fn run(&self, purpose: SearchPurpose) -> Option<SearchOutcome> {
        let args = self.args.as_ref();
        let avoid = args.map(|a| a.avoid.clone()).unwrap_or_default();
        let req = SearchRequest {
            game: &self.game,
            pla: self.pla,
            purpose,
            avoid: &avoid,
            want_ownership: args.is_some_and(AnalyzeArgs::wants_ownership),
            report_interval: args.and_then(|a| a.report_interval),
            min_moves: args.map_or(0, |a| a.min_moves),
        };
        let mut report = |snap: &crate::search::AnalysisSnapshot| {
            if let Some(a) = args {
                if let Some(line) = format_analysis(snap, a, self.perspective) {
                    self.out.write_str(&(line + "\n"));
                }
            }
        };
        self.bot.lock().search(&req, &self.stop, &mut report)
    }
}

/// KataGo's test in `maybeFriendlyPass`: passing is fine for `pla` if,
/// after it, White's utility, expected score and lead (`[utility, score,
/// lead]`) are no better for the opponent than after the move, within
/// 0.1 utility and a quarter point.
fn passing_is_no_worse(pla: Player, after_pass: [f64; 3], after_move: [f64; 3]) -> bool {
    // White wants these high, Black low.
    let sign = if pla == Player::White { 1.0 } else { -1.0 };
    let margins = [0.1, 0.25, 0.25];
    (0..3).all(|i| sign * after_pass[i] > sign * after_move[i] - margins[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn friendly_pass_margins_are_katago_s() {
        let mv = [0.5, 3.0, 3.0];
        // White: passing may cost up to 0.1 utility and a quarter point.
        assert!(passing_is_no_worse(Player::White, [0.45, 2.8, 2.8], mv));
        assert!(!passing_is_no_worse(Player::White, [0.39, 2.8, 2.8], mv));
        assert!(!passing_is_no_worse(Player::White, [0.5, 2.7, 3.0], mv));
        assert!(!passing_is_no_worse(Player::White, [0.5, 3.0, 2.74], mv));
        // Black wants White's values low.
        assert!(passing_is_no_worse(Player::Black, [0.55, 3.2, 3.2], mv));
        assert!(!passing_is_no_worse(Player::Black, [0.61, 3.0, 3.0], mv));
        assert!(!passing_is_no_worse(Player::Black, [0.5, 3.3, 3.0], mv));
    }
}
