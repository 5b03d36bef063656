//! The commands that search: `genmove` and its variants, the analysis
//! commands, cancellable searches and pondering.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use crate::game::{Move, Player};

use super::analysis_format::format_analysis;
use super::analyze_args::{parse_analyze_args, AnalyzeArgs, AnalyzeKind, AvoidMoves};
use parking_lot::Mutex;

use super::bot::{GtpBot, SearchOutcome, SearchPurpose, SearchRequest};
use super::engine::{Background, GtpEngine, Handled};
use super::genmove_finish::{FinishedGenmove, GenmoveFinish};
use super::position::GtpGame;
use super::protocol::Output;
use super::protocol::{format_header, format_response, CommandLine};
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
        if let Some(frame) = self.tsumego_frame.clone() {
            let vertex = self
                .genmove_framed(pla, &frame, play)?
                .to_gtp(self.game.x_size(), self.game.y_size());
            return Ok(if analysis.is_some() {
                format!("play {vertex}")
            } else {
                vertex
            });
        }
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
        let finished = self.genmove_finish().finish(pla, outcome);
        let seconds = started.elapsed().as_secs_f64();
        let finished = match finished {
            Ok(f) => f,
            Err(e) => {
                self.genmove_time_sum += seconds;
                return Err(e);
            }
        };
        self.record_genmove(&finished.record(seconds));
        let FinishedGenmove { mv, resign, .. } = finished;
        let vertex = if resign {
            "resign".to_string()
        } else {
            mv.to_gtp(self.game.x_size(), self.game.y_size())
        };
        if play && !resign {
            self.game.play(mv, pla);
            self.maybe_ponder(true);
        }
        Ok(if analysis.is_some() {
            format!("play {vertex}")
        } else {
            vertex
        })
    }

    /// What finishes a genmove of this position (a copy of the state it
    /// reads).
    fn genmove_finish(&self) -> GenmoveFinish {
        GenmoveFinish {
            settings: self.settings.clone(),
            game: self.game.clone(),
            bot: self.bot.clone(),
            recent_win_loss: self.recent_win_loss.clone(),
        }
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
            None
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
    /// search thread finishes the move as `genmove` does (without playing
    /// it) and writes the answer itself, `cancelled` when stopped; the
    /// engine records the move when it collects the thread.
    fn spawn_cancellable(&mut self, id: Option<u64>, pla: Player, args: Option<AnalyzeArgs>) {
        let started = Instant::now();
        let purpose = SearchPurpose::Genmove {
            clock: self.clocks[pla].clone(),
            search_factor: self.search_factor(pla),
        };
        let (job, stop) = self.background_search(pla, args);
        let finish = self.genmove_finish();
        let handle = std::thread::spawn(move || {
            let outcome = job.run(purpose);
            let answer = |text: &str, ok: bool| match (&job.args, ok) {
                (Some(_), true) => job.out.write_str(&format!("play {text}\n\n")),
                // The header is out: KataGo ends the response with its
                // blank line and reports the error on stderr.
                (Some(_), false) => {
                    crate::logfile::startup(text);
                    job.out.write_str("\n");
                }
                (None, ok) => job.out.write_str(&format_response(id, ok, text)),
            };
            if job.stop.load(std::sync::atomic::Ordering::Relaxed) {
                answer("cancelled", true);
                return None;
            }
            let (xs, ys) = (job.game.x_size(), job.game.y_size());
            match finish.finish(pla, outcome) {
                Ok(f) => {
                    let text = if f.resign {
                        "resign".to_string()
                    } else {
                        f.mv.to_gtp(xs, ys)
                    };
                    answer(&text, true);
                    Some(f.record(started.elapsed().as_secs_f64()))
                }
                Err(e) => {
                    answer(&e, false);
                    None
                }
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
