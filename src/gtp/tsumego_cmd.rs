//! `kata-tsumego REGION GOAL [TARGET] [KOTHREATS]`: solve the local problem
//! of the current position (see [`crate::tsumego`]). The answer is one
//! line, the same JSON object as the analysis protocol's `"tsumego"`
//! (groups with their status, winning first moves, refutations).
//!
//! `REGION` is `auto`, a rectangle `A1-E5`, or points joined by commas
//! (`C16,C17`); `GOAL` is `auto`, `kill` or `live`; `TARGET` a point;
//! `KOTHREATS` `none` (the default). The game itself is left as it was.

use std::sync::atomic::AtomicBool;

use crate::game::{Board, MAX_ARR_SIZE};
use crate::tsumego::{self, KoThreats, Prepared, TsumegoRequest};

use super::analyze_args::AvoidMoves;
use super::bot::{SearchPurpose, SearchRequest};
use super::engine::GtpEngine;

impl GtpEngine {
    /// Runs `kata-tsumego`.
    pub(super) fn tsumego(&mut self, args: &[String]) -> Result<String, String> {
        self.stop_background();
        let board = self.game.board().clone();
        let req = parse_args(args, &board)?;
        let to_move = self.game.next_pla();
        let rules = *self.game.rules();
        let problem =
            tsumego::prepare(&board, to_move, rules.komi, &req).map_err(|e| e.to_string())?;
        let mut game = self.game.clone();
        game.restart(problem.board.clone(), to_move, rules);
        let avoid = allow_only(&problem);
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
        let outcome = self
            .bot
            .lock()
            .search(&search, &stop, &mut |_| {})
            .ok_or_else(|| "the search gave no result".to_string())?;
        Ok(problem
            .judge_snapshot(&outcome.snapshot)
            .to_json(&problem)
            .to_string())
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
