//! `kata-tsumego REGION GOAL [TARGET] [KOTHREATS]`: solve the local problem
//! of the current position (see [`crate::tsumego`]). The answer is one
//! line, the same JSON object as the analysis protocol's `"tsumego"`
//! (groups with their status, winning first moves, refutations).
//!
//! `REGION` is `auto`, a rectangle `A1-E5`, or points joined by commas
//! (`C16,C17`); `GOAL` is `auto`, `kill` or `live`; `TARGET` a point;
//! `KOTHREATS` `none` (the default). The game itself is left as it was.
//!
//! `kata-tsumego-frame REGION GOAL [TARGET] [KOTHREATS]` keeps such a
//! problem for the `genmove`s that follow (until `kata-tsumego-frame off`,
//! `clear_board` or `boardsize`): each searches the framed position, both
//! sides restricted to the problem, and plays its move in the real game,
//! so a GUI can play a problem out against the engine.

use std::sync::atomic::AtomicBool;

use crate::game::{Board, Move, Player, MAX_ARR_SIZE};
use crate::search::AnalysisSnapshot;
use crate::tsumego::{self, KoThreats, Prepared, TsumegoRequest};

use super::analyze_args::AvoidMoves;
use super::bot::{SearchPurpose, SearchRequest};
use super::engine::GtpEngine;
use super::tsumego_frame::TsumegoFrame;

impl GtpEngine {
    /// Runs `kata-tsumego`.
    pub(super) fn tsumego(&mut self, args: &[String]) -> Result<String, String> {
        self.stop_background();
        let board = self.game.board().clone();
        let req = parse_args(args, &board)?;
        let to_move = self.game.next_pla();
        let problem = tsumego::prepare(&board, to_move, self.game.rules().komi, &req)
            .map_err(|e| e.to_string())?;
        let snapshot = self.search_framed(&problem, to_move)?;
        Ok(problem
            .judge_snapshot(&snapshot)
            .to_json(&problem)
            .to_string())
    }

    /// Runs `kata-tsumego-frame`: `off` forgets the frame, no argument
    /// shows it, else the arguments of `kata-tsumego` set it (the region
    /// and the sides' roles fixed now, from the current position).
    pub(super) fn tsumego_frame(&mut self, args: &[String]) -> Result<String, String> {
        match args {
            [] => Ok(self.tsumego_frame.as_ref().map_or_else(
                || "off".to_string(),
                |f| {
                    f.to_json(self.game.x_size(), self.game.y_size())
                        .to_string()
                },
            )),
            [off] if off.eq_ignore_ascii_case("off") => {
                self.tsumego_frame = None;
                Ok(String::new())
            }
            _ => {
                let board = self.game.board();
                let req = parse_args(args, board)?;
                let problem =
                    tsumego::prepare(board, self.game.next_pla(), self.game.rules().komi, &req)
                        .map_err(|e| e.to_string())?;
                let frame = TsumegoFrame {
                    region: problem.region.points(),
                    attacker: problem.attacker,
                    target: problem.target_stones.first().copied(),
                    ko_threats: req.ko_threats,
                };
                let answer = frame
                    .to_json(self.game.x_size(), self.game.y_size())
                    .to_string();
                self.tsumego_frame = Some(frame);
                Ok(answer)
            }
        }
    }

    /// `genmove` inside the kept frame: the framed position is searched
    /// with the genmove limits, both sides restricted to the problem; the
    /// best move that is not one of the frame's ko-threat points (those
    /// are not on the real board) and is legal in the game is played.
    pub(super) fn genmove_framed(
        &mut self,
        pla: Player,
        frame: &TsumegoFrame,
        play: bool,
    ) -> Result<Move, String> {
        self.stop_background();
        self.game.set_player_if_new(pla);
        let board = self.game.board().clone();
        let problem = tsumego::prepare(
            &board,
            pla,
            self.game.rules().komi,
            &frame.request(&board, pla),
        )
        .map_err(|e| format!("tsumego frame: {e}"))?;
        let snapshot = self.search_framed(&problem, pla)?;
        let mut moves: Vec<_> = snapshot
            .moves
            .iter()
            .filter(|m| m.is_symmetry_of.is_none())
            .collect();
        moves.sort_by_key(|m| m.order);
        let mv = moves
            .iter()
            .map(|m| m.mv)
            .find(|&mv| !problem.is_threat_point(mv) && self.game.is_legal_tolerant(mv, pla))
            .unwrap_or(Move::Pass);
        if play {
            self.game.play(mv, pla);
        }
        Ok(mv)
    }

    /// Searches `problem`'s framed board with `to_move` to play and the
    /// genmove limits, both sides kept to its playable points; the game
    /// itself is left as it was.
    fn search_framed(
        &mut self,
        problem: &Prepared,
        to_move: Player,
    ) -> Result<AnalysisSnapshot, String> {
        let mut game = self.game.clone();
        game.restart(problem.board.clone(), to_move, *self.game.rules());
        let avoid = allow_only(problem);
        let search = SearchRequest {
            game: &game,
            pla: to_move,
            purpose: SearchPurpose::Genmove {
                clock: self.clocks[to_move].clone(),
                search_factor: 1.0,
            },
            avoid: &avoid,
            want_ownership: true,
            report_interval: None,
            min_moves: 0,
        };
        let stop = AtomicBool::new(false);
        self.bot
            .lock()
            .search(&search, &stop, &mut |_| {})
            .map(|outcome| outcome.snapshot)
            .ok_or_else(|| "the search gave no result".to_string())
    }
}

/// Both players may play only the problem's points (and pass, which the
/// tables never bar), at every depth.
fn allow_only(problem: &Prepared) -> AvoidMoves {
    let mut table = vec![i32::MAX; MAX_ARR_SIZE];
    for l in &problem.playable {
        table[l.idx()] = 0;
    }
    AvoidMoves {
        black: table.clone(),
        white: table,
    }
}

/// `REGION GOAL [TARGET] [KOTHREATS]`.
fn parse_args(args: &[String], board: &Board) -> Result<TsumegoRequest, String> {
    let usage = "expected REGION GOAL [TARGET] [KOTHREATS], e.g. `kata-tsumego auto kill C17`";
    let (xs, ys) = (board.x_size(), board.y_size());
    let (Some(region), Some(goal)) = (args.first(), args.get(1)) else {
        return Err(usage.to_string());
    };
    let region = if region.contains(',') {
        let points: Vec<&str> = region.split(',').filter(|s| !s.is_empty()).collect();
        tsumego::parse_region_points(&points, xs, ys)
    } else if region.contains('-') || region.eq_ignore_ascii_case("auto") {
        tsumego::parse_region_text(region, xs, ys)
    } else {
        tsumego::parse_region_points(&[region.as_str()], xs, ys)
    }
    .map_err(|e| e.to_string())?;
    let goal = tsumego::parse_goal(goal).map_err(|e| e.to_string())?;
    let mut target = None;
    let mut ko_threats = KoThreats::None;
    for arg in &args[2..] {
        if let Ok(k) = tsumego::parse_ko_threats(arg) {
            ko_threats = k;
        } else if target.is_none() {
            target = Some(tsumego::parse_point(arg, xs, ys).map_err(|e| format!("target: {e}"))?);
        } else {
            return Err(usage.to_string());
        }
    }
    Ok(TsumegoRequest {
        region,
        goal,
        target,
        ko_threats,
    })
}
