//! KataGo's input versions 3 to 5 (model versions 3 to 6), as
//! `NNInputs::fillRowV3`, `fillRowV4` and `fillRowV5` write them. Version 6
//! is version 7's code with a flag (see the parent module).
//!
//! Versions 3 and 4 (22 planes, 14 globals) have version 7's planes 0..=21
//! except that planes 18 and 19 are an area map made by
//! `Board::calculateArea` (version 3: area scoring counts every stone and
//! empty region, territory scoring only pass-alive ones; version 4: always
//! only pass-alive ones), with no group tax, and the history is hidden only
//! when the game is over or a pass would end it while the search pretends
//! it would not (never for the passing hacks, and `maxHistory` is ignored).
//! Their globals:
//!
//! | global | meaning |
//! |---|---|
//! | 0..=4 | the last 5 moves were passes |
//! | 5 | komi from pla's view / 15 (clipped to the area plus 1) |
//! | 6..=9 | ko rule, multi-stone suicide, territory scoring (as version 7) |
//! | 10, 11 | encore phase ≥ 1, ≥ 2 |
//! | 12 | a pass would end the phase (0 when history is hidden) |
//! | 13 | komi parity wave (area scoring or second encore) |
//!
//! Version 5 (13 planes, 12 globals) keeps only: 0 on board, 1 and 2
//! stones, 3 ko ban, 4 encore recapture block, 6..=10 the last 5 moves,
//! 11 and 12 stones at the start of the second encore; and globals 0..=11
//! as versions 3 and 4 (no pass-ends-phase, no parity).

use crate::game::{AreaOptions, Board, BoardHistory, Player, ScoringRule};

use super::{
    clipped_self_komi, ko_planes, komi_parity_wave, move_history, rule_globals,
    second_encore_planes, stone_planes, FeatureEncoder, NnInputParams, Planes, Row,
    MAX_HISTORY_FEATURES, OLD_KOMI_CLIP_RADIUS,
};

/// Whether versions 3 to 5 hide the history: the game is over, or a pass
/// would end it and the search behaves as if it would not (at a
/// conservative-pass root, or in a friendly-pass setting).
fn history_hidden(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    params: &NnInputParams,
) -> bool {
    hist.is_game_finished()
        || hist.is_past_normal_phase_end()
        || (hist.pass_would_end_game(board, next)
            && (params.conservative_pass_and_is_root
                || hist.should_suppress_end_game_from_friendly_pass(board, next)))
}

/// Global 5 of versions 3 to 5: komi scaled by 1/15; returns the clipped
/// komi, which the parity wave also reads.
fn komi_global(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    params: &NnInputParams,
    global: &mut [f32],
) -> f32 {
    let self_komi = clipped_self_komi(board, hist, next, params, OLD_KOMI_CLIP_RADIUS);
    global[5] = self_komi / 15.0;
    self_komi
}

/// Globals 10 and 11 of versions 3 to 5: the encore phase.
fn encore_globals(hist: &BoardHistory, global: &mut [f32]) {
    if hist.encore_phase() > 0 {
        global[10] = 1.0;
    }
    if hist.encore_phase() > 1 {
        global[11] = 1.0;
    }
}

impl FeatureEncoder {
    /// Input versions 3 and 4 (`pass_alive_only`), into zeroed buffers.
    pub(super) fn fill_v3_v4(
        &mut self,
        (board, hist, next, params): Row<'_>,
        pass_alive_only: bool,
        planes: &mut Planes<'_>,
        global: &mut [f32],
    ) {
        let pla = next;
        let (pc, oc) = (pla.color(), pla.opp().color());
        stone_planes::<true>(board, pc, oc, planes);
        ko_planes(board, hist, (6, 7), planes);
        let hidden = history_hidden(board, hist, next, params);
        let usable = if hidden { 0 } else { MAX_HISTORY_FEATURES };
        let num_turns_included = move_history(hist, pla, usable, 9, planes, global);
        self.ladder_planes(board, hist, oc, num_turns_included, planes);

        // Version 4 changed these planes to pass-alive areas only; version
        // 3 shows every area under area scoring.
        let rules = *hist.rules();
        let everything = !pass_alive_only && rules.scoring_rule == ScoringRule::Area;
        let area = board.calculate_area(AreaOptions {
            non_pass_alive_stones: everything,
            safe_big_territories: true,
            unsafe_big_territories: everything,
            multi_stone_suicide_legal: params.suicide_legal_for_pass_alive(hist),
        });
        for loc in board.locs() {
            let owner = area.get(loc);
            if owner == pc {
                planes.set(18, loc);
            } else if owner == oc {
                planes.set(19, loc);
            }
        }
        second_encore_planes(board, hist, pc, oc, (20, 21), planes);

        let self_komi = komi_global(board, hist, next, params, global);
        rule_globals(&rules, global);
        encore_globals(hist, global);
        if !hidden && hist.pass_would_end_phase(board, next) {
            global[12] = 1.0;
        }
        if rules.scoring_rule == ScoringRule::Area || hist.encore_phase() >= 2 {
            let area_is_even = board.x_size() * board.y_size() % 2 == 0;
            global[13] = komi_parity_wave(self_komi, area_is_even);
        }
    }
}

/// Input version 5, into zeroed buffers: no liberties, ladders, area or
/// pass-ends-phase features.
pub(super) fn fill_v5(
    (board, hist, next, params): Row<'_>,
    planes: &mut Planes<'_>,
    global: &mut [f32],
) {
    let pla = next;
    let (pc, oc) = (pla.color(), pla.opp().color());
    stone_planes::<false>(board, pc, oc, planes);
    ko_planes(board, hist, (3, 4), planes);
    let usable = if history_hidden(board, hist, next, params) {
        0
    } else {
        MAX_HISTORY_FEATURES
    };
    move_history(hist, pla, usable, 6, planes, global);
    second_encore_planes(board, hist, pc, oc, (11, 12), planes);
    komi_global(board, hist, next, params, global);
    rule_globals(hist.rules(), global);
    encore_globals(hist, global);
}

#[cfg(test)]
#[path = "old_tests.rs"]
mod tests;
