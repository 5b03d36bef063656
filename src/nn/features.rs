//! The network's input features, KataGo's input version 7 (used by model
//! versions 8 to 17): 22 spatial planes and 19 global values, exactly as
//! `NNInputs::fillRowV7` writes them (`cpp/neuralnet/nninputs.cpp`), and
//! the cache key of a position (`NNInputs::getHash`). The older input
//! versions 3 to 6 (model versions 3 to 7) are in [`old`]; version 6 shares
//! version 7's code, as it differs only in the globals' tail (see
//! [`FeatureEncoder::fill_row`]).
//!
//! Everything is from the point of view of the player to move ("pla"):
//!
//! | plane | meaning |
//! |---|---|
//! | 0 | on the board |
//! | 1, 2 | pla / opponent stone |
//! | 3, 4, 5 | stone whose chain has 1 / 2 / 3 liberties |
//! | 6 | ko-banned point (simple ko and superko; in the encore the superko bans only) |
//! | 7 | encore: ko recapture blocked (pla must pass for ko) |
//! | 8 | unused in version 7 |
//! | 9..=13 | location of the last 5 moves (opponent's last move first) |
//! | 14 | stone in (or that can be put in) an inescapable ladder |
//! | 15, 16 | the same one and two moves ago |
//! | 17 | attacker moves that ladder-capture an opponent two-liberty chain |
//! | 18, 19 | pla / opponent area (area scoring, or territory in the second encore) |
//! | 20, 21 | pla / opponent stones at the start of the second encore |
//!
//! | global | meaning |
//! |---|---|
//! | 0..=4 | the last 5 moves were passes |
//! | 5 | komi from pla's view / 20 (with bonuses, clipped) |
//! | 6, 7 | ko rule: simple (0, 0), positional (1, 0.5), situational (1, -0.5) |
//! | 8 | multi-stone suicide legal |
//! | 9 | territory scoring |
//! | 10, 11 | tax: seki (1, 0), all (1, 1) |
//! | 12, 13 | encore phase ≥ 1, ≥ 2 |
//! | 14 | a pass would end the phase |
//! | 15, 16 | playout doubling advantage in use, and half of it |
//! | 17 | button rule |
//! | 18 | komi parity wave (area scoring or second encore) |
//!
//! Planes are written for the board's own size, `[C, y_size, x_size]`
//! row-major (the evaluator pads and applies symmetries).

use crate::game::{
    iter_ladders, Area, AreaOptions, Board, BoardHistory, Color, Hash128, KoRule, LadderScratch,
    Loc, Move, Player, ScoringRule, TaxRule,
};

use super::desc::InputVersion;

mod old;

/// Spatial planes of input version 7.
pub const NUM_SPATIAL_FEATURES_V7: usize = 22;
/// Global values of input version 7.
pub const NUM_GLOBAL_FEATURES_V7: usize = 19;

/// KataGo's `NNPos::KOMI_CLIP_RADIUS`: komi is clipped to the board area
/// plus this.
const KOMI_CLIP_RADIUS: f32 = 20.0;
/// What input versions 3 to 6 clip komi to beyond the board area.
const OLD_KOMI_CLIP_RADIUS: f32 = 1.0;

/// KataGo keeps at most this many previous moves in the features.
const MAX_HISTORY_FEATURES: usize = 5;

/// How a position is shown to the network beyond the position itself
/// (KataGo's `MiscNNInputParams`, the parts that change the inputs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NnInputParams {
    /// Value of a draw for white, 0..=1 (KataGo's
    /// `drawEquivalentWinsForWhite`); with integer komi it shifts the komi
    /// the net sees by `value - 0.5`.
    pub draw_equivalent_wins_for_white: f64,
    /// The root of a search that assumes passing does not end the game
    /// (KataGo's `conservativePass`): when a pass would end it, history and
    /// the "pass ends the phase" input are hidden.
    pub conservative_pass_and_is_root: bool,
    /// KataGo's `enablePassingHacks`: the same hiding when a pass would end
    /// the game in a loss or draw.
    pub enable_passing_hacks: bool,
    /// Playout doubling advantage of pla (KataGo's
    /// `playoutDoublingAdvantage`), for handicap/asymmetric play.
    pub playout_doubling_advantage: f64,
    /// Most previous moves to show, KataGo's `maxHistory` (0 with
    /// `ignorePreRootHistory` at the root; only 5 are ever used).
    pub max_history: usize,
    /// Overrides the history's "compute pass-alive under suicide rules"
    /// setting (KataGo's `passAliveSuicideRulesOverride`); `None` keeps it.
    pub pass_alive_suicide_rules_override: Option<bool>,
}

impl Default for NnInputParams {
    /// KataGo's defaults: a draw is worth half a win, full history, no
    /// pass handling, no playout advantage.
    fn default() -> Self {
        NnInputParams {
            draw_equivalent_wins_for_white: 0.5,
            conservative_pass_and_is_root: false,
            enable_passing_hacks: false,
            playout_doubling_advantage: 0.0,
            max_history: 1000,
            pass_alive_suicide_rules_override: None,
        }
    }
}

impl NnInputParams {
    /// Whether pass-alive areas are computed as if multi-stone suicide
    /// were legal (KataGo's `getSuicideLegalForPassAlive`).
    pub fn suicide_legal_for_pass_alive(&self, hist: &BoardHistory) -> bool {
        match self.pass_alive_suicide_rules_override {
            Some(always) => hist.rules().multi_stone_suicide_legal || always,
            None => hist.suicide_legal_for_pass_alive(),
        }
    }
}

/// Writes input-version-7 features; keeps the ladder search buffers
/// between calls so encoding allocates nothing once warm. One per thread.
#[derive(Default)]
pub struct FeatureEncoder {
    ladder: LadderScratch,
}

/// What one row is encoded from: the position, the player to move and the
/// input parameters.
type Row<'a> = (&'a Board, &'a BoardHistory, Player, &'a NnInputParams);

/// Row-major writer over the planes of one board.
struct Planes<'a> {
    data: &'a mut [f32],
    x_size: usize,
    area: usize,
}

impl Planes<'_> {
    #[inline]
    fn set(&mut self, plane: usize, loc: Loc) {
        let (x, y) = loc.xy(self.x_size);
        self.data[plane * self.area + y * self.x_size + x] = 1.0;
    }
}

impl FeatureEncoder {
    /// A new encoder.
    pub fn new() -> FeatureEncoder {
        FeatureEncoder::default()
    }

    /// KataGo's `NNInputs::fillRowV*` of input version `version` for `next`
    /// to move: writes `version.num_spatial_features() * y_size * x_size`
    /// values into `spatial` (`[C, y, x]` row-major, the board's own size)
    /// and `version.num_global_features()` into `global`, overwriting both.
    /// The version is picked once per row, not per plane.
    ///
    /// # Panics
    /// If the slices have the wrong length (a caller bug).
    #[allow(clippy::too_many_arguments)]
    pub fn fill_row(
        &mut self,
        version: InputVersion,
        board: &Board,
        hist: &BoardHistory,
        next: Player,
        params: &NnInputParams,
        spatial: &mut [f32],
        global: &mut [f32],
    ) {
        let area = board.x_size() * board.y_size();
        assert_eq!(
            spatial.len(),
            version.num_spatial_features() * area,
            "spatial input length"
        );
        assert_eq!(
            global.len(),
            version.num_global_features(),
            "global input length"
        );
        spatial.fill(0.0);
        global.fill(0.0);
        let mut planes = Planes {
            data: spatial,
            x_size: board.x_size(),
            area,
        };
        let rows = (board, hist, next, params);
        match version {
            InputVersion::V7 => self.fill_modern::<true>(rows, &mut planes, global),
            InputVersion::V6 => self.fill_modern::<false>(rows, &mut planes, global),
            InputVersion::V5 => old::fill_v5(rows, &mut planes, global),
            InputVersion::V4 => self.fill_v3_v4(rows, true, &mut planes, global),
            InputVersion::V3 => self.fill_v3_v4(rows, false, &mut planes, global),
        }
    }

    /// KataGo's `NNInputs::fillRowV7` for `next` to move: writes
    /// `NUM_SPATIAL_FEATURES_V7 * y_size * x_size` values into `spatial`
    /// (`[C, y, x]` row-major, the board's own size) and
    /// `NUM_GLOBAL_FEATURES_V7` into `global`, overwriting both.
    ///
    /// # Panics
    /// If the slices have the wrong length (a caller bug).
    pub fn fill_row_v7(
        &mut self,
        board: &Board,
        hist: &BoardHistory,
        next: Player,
        params: &NnInputParams,
        spatial: &mut [f32],
        global: &mut [f32],
    ) {
        self.fill_row(InputVersion::V7, board, hist, next, params, spatial, global);
    }

    /// Input versions 7 (`V7`) and 6, which differ only in the history cut
    /// (version 6 also cuts at the last rule violation), the komi clip and
    /// the globals after 14 (version 6 has no playout advantage or button).
    #[inline]
    fn fill_modern<const V7: bool>(
        &mut self,
        (board, hist, next, params): Row<'_>,
        planes: &mut Planes<'_>,
        global: &mut [f32],
    ) {
        let pla = next;
        let (pc, oc) = (pla.color(), pla.opp().color());

        stone_planes::<true>(board, pc, oc, planes);
        ko_planes(board, hist, (6, 7), planes);
        let game_end_would_not_be_win = area_planes(board, hist, pla, params, planes);
        let (max_turns, suppress_pass_would_end_phase) =
            history_shown(board, hist, next, params, game_end_would_not_be_win);
        let mut usable = max_turns.min(hist.num_approx_valid_turns_this_phase());
        if !V7 {
            usable = usable.min(hist.num_consec_valid_turns_this_game());
        }
        let num_turns_included = move_history(hist, pla, usable, 9, planes, global);
        self.ladder_planes(board, hist, oc, num_turns_included, planes);
        second_encore_planes(board, hist, pc, oc, (20, 21), planes);
        fill_globals::<V7>(
            board,
            hist,
            next,
            params,
            suppress_pass_would_end_phase,
            global,
        );
    }

    /// Ladders now (14, 17), one and two moves ago (15, 16).
    #[inline]
    fn ladder_planes(
        &mut self,
        board: &Board,
        hist: &BoardHistory,
        oc: Color,
        num_turns_included: usize,
        planes: &mut Planes<'_>,
    ) {
        iter_ladders(board, &mut self.ladder, |loc, working| {
            planes.set(14, loc);
            if board.get(loc) == oc && board.num_liberties(loc) > 1 {
                for &w in working {
                    planes.set(17, w);
                }
            }
        });
        let prev_board = if num_turns_included < 1 {
            board
        } else {
            hist.recent_board(1)
        };
        iter_ladders(prev_board, &mut self.ladder, |loc, _| planes.set(15, loc));
        let prev_prev_board = if num_turns_included < 2 {
            prev_board
        } else {
            hist.recent_board(2)
        };
        iter_ladders(prev_prev_board, &mut self.ladder, |loc, _| {
            planes.set(16, loc)
        });
    }
}

/// Stones (planes 0..=2) and, with `LIBERTIES`, liberties (3..=5).
#[inline]
fn stone_planes<const LIBERTIES: bool>(
    board: &Board,
    pc: Color,
    oc: Color,
    planes: &mut Planes<'_>,
) {
    for loc in board.locs() {
        planes.set(0, loc);
        let c = board.get(loc);
        if c == pc {
            planes.set(1, loc);
        } else if c == oc {
            planes.set(2, loc);
        }
        if LIBERTIES && (c == pc || c == oc) {
            match board.num_liberties(loc) {
                1 => planes.set(3, loc),
                2 => planes.set(4, loc),
                3 => planes.set(5, loc),
                _ => {}
            }
        }
    }
}

/// Ko bans (plane `ban`: 6, or 3 in version 5), and in the encore the
/// recapture blocks (plane `recap`: 7, or 4).
#[inline]
fn ko_planes(
    board: &Board,
    hist: &BoardHistory,
    (ban, recap): (usize, usize),
    planes: &mut Planes<'_>,
) {
    if hist.encore_phase() == 0 {
        if let Some(ko) = board.ko_loc() {
            planes.set(ban, ko);
        }
        for loc in board.locs() {
            if hist.is_super_ko_banned(loc) && Some(loc) != board.ko_loc() {
                planes.set(ban, loc);
            }
        }
    } else {
        for loc in board.locs() {
            if hist.is_super_ko_banned(loc) {
                planes.set(ban, loc);
            }
            if hist.is_ko_recap_blocked(loc) {
                planes.set(recap, loc);
            }
        }
    }
}

/// Area (planes 18, 19); returns whether ending the game now would not win
/// for pla (only known when these rules show the area).
#[inline]
fn area_planes(
    board: &Board,
    hist: &BoardHistory,
    pla: Player,
    params: &NnInputParams,
    planes: &mut Planes<'_>,
) -> bool {
    let (pc, oc) = (pla.color(), pla.opp().color());
    let rules = *hist.rules();
    let suicide_for_pass_alive = params.suicide_legal_for_pass_alive(hist);
    let area_map = area_feature(board, hist, pla, suicide_for_pass_alive);
    let mut final_phase_and_game_end_would_not_be_win = false;
    if let Some((area_map, group_tax_for_pla)) = area_map {
        let mut board_score_for_pla = group_tax_for_pla;
        for loc in board.locs() {
            let owner = area_map.get(loc);
            let stone = board.get(loc);
            let mine = owner == pc
                || (owner == Color::Empty
                    && rules.scoring_rule == ScoringRule::Territory
                    && stone == pc
                    && hist.second_encore_start_color(loc) == pc);
            let theirs = owner == oc
                || (owner == Color::Empty
                    && rules.scoring_rule == ScoringRule::Territory
                    && stone == oc
                    && hist.second_encore_start_color(loc) == oc);
            if mine {
                planes.set(18, loc);
                board_score_for_pla += 1;
            } else if theirs {
                planes.set(19, loc);
                board_score_for_pla -= 1;
            }
        }
        let self_komi = hist.current_self_komi(pla, params.draw_equivalent_wins_for_white);
        if board_score_for_pla as f32 + self_komi <= 0.0 {
            final_phase_and_game_end_would_not_be_win = true;
        }
    }
    final_phase_and_game_end_would_not_be_win
}

/// How many previous moves to show, and whether to hide that a pass would
/// end the phase.
#[inline]
fn history_shown(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    params: &NnInputParams,
    final_phase_and_game_end_would_not_be_win: bool,
) -> (usize, bool) {
    // Hide the history when a pass would end the game but the search
    // pretends it would not, and when the game is already over keep
    // only the final pass.
    let mut max_turns = MAX_HISTORY_FEATURES;
    let mut suppress_pass_would_end_phase = false;
    if hist.pass_would_end_game(board, next)
        && (params.conservative_pass_and_is_root
            || hist.should_suppress_end_game_from_friendly_pass(board, next)
            || (params.enable_passing_hacks && final_phase_and_game_end_would_not_be_win))
    {
        max_turns = 0;
        suppress_pass_would_end_phase = true;
    } else if hist.is_game_finished() || hist.is_past_normal_phase_end() {
        max_turns = 1;
    }
    (
        max_turns.min(params.max_history),
        suppress_pass_would_end_phase,
    )
}

/// Previous moves (planes `first..first + 5`: 9..=13, or 6..=10 in
/// version 5; globals 0..=4 for passes), alternating players back from the
/// opponent's last move, at most `usable` of them; returns how many were
/// shown.
#[inline]
fn move_history(
    hist: &BoardHistory,
    pla: Player,
    usable: usize,
    first: usize,
    planes: &mut Planes<'_>,
    global: &mut [f32],
) -> usize {
    let opp = pla.opp();
    let mut num_turns_included = 0;
    let moves = hist.moves();
    for i in 0..usable.min(moves.len()).min(MAX_HISTORY_FEATURES) {
        let (mv, who) = moves[moves.len() - 1 - i];
        let expected = if i % 2 == 0 { opp } else { pla };
        if who != expected {
            break;
        }
        num_turns_included = i + 1;
        match mv {
            Move::Pass => global[i] = 1.0,
            Move::Play(loc) => planes.set(first + i, loc),
        }
    }
    num_turns_included
}

/// Stones at the start of the second encore (planes `mine`, `theirs`:
/// 20 and 21, or 11 and 12 in version 5).
#[inline]
fn second_encore_planes(
    board: &Board,
    hist: &BoardHistory,
    pc: Color,
    oc: Color,
    (mine, theirs): (usize, usize),
    planes: &mut Planes<'_>,
) {
    if hist.encore_phase() >= 2 {
        for loc in board.locs() {
            let c = hist.second_encore_start_color(loc);
            if c == pc {
                planes.set(mine, loc);
            } else if c == oc {
                planes.set(theirs, loc);
            }
        }
    }
}

/// Globals 5..=18 (`V7`) or 5..=15 (version 6): komi, rules, encore
/// phase, pass ending the phase, playout doubling advantage and button
/// (version 7 only) and komi parity.
#[inline]
fn fill_globals<const V7: bool>(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    params: &NnInputParams,
    suppress_pass_would_end_phase: bool,
    global: &mut [f32],
) {
    let rules = *hist.rules();
    let area = board.x_size() * board.y_size();
    let radius = if V7 {
        KOMI_CLIP_RADIUS
    } else {
        OLD_KOMI_CLIP_RADIUS
    };
    let self_komi = clipped_self_komi(board, hist, next, params, radius);
    global[5] = self_komi / 20.0;
    rule_globals(&rules, global);
    match rules.tax_rule {
        TaxRule::None => {}
        TaxRule::Seki => global[10] = 1.0,
        TaxRule::All => {
            global[10] = 1.0;
            global[11] = 1.0;
        }
    }
    if hist.encore_phase() > 0 {
        global[12] = 1.0;
    }
    if hist.encore_phase() > 1 {
        global[13] = 1.0;
    }
    if !suppress_pass_would_end_phase && hist.pass_would_end_phase(board, next) {
        global[14] = 1.0;
    }
    let parity = rules.scoring_rule == ScoringRule::Area || hist.encore_phase() >= 2;
    if !V7 {
        if parity {
            global[15] = komi_parity_wave(self_komi, area.is_multiple_of(2));
        }
        return;
    }
    if params.playout_doubling_advantage != 0.0 {
        global[15] = 1.0;
        global[16] = (0.5 * params.playout_doubling_advantage) as f32;
    }
    if hist.has_button() {
        global[17] = 1.0;
    }
    if parity {
        global[18] = komi_parity_wave(self_komi, area.is_multiple_of(2));
    }
}

/// Globals 6..=9, the same in every input version: ko rule (simple (0, 0),
/// positional or Spight (1, 0.5), situational (1, -0.5)), multi-stone
/// suicide, territory scoring.
#[inline]
fn rule_globals(rules: &crate::game::Rules, global: &mut [f32]) {
    match rules.ko_rule {
        KoRule::Simple => {}
        KoRule::Positional | KoRule::Spight => {
            global[6] = 1.0;
            global[7] = 0.5;
        }
        KoRule::Situational => {
            global[6] = 1.0;
            global[7] = -0.5;
        }
    }
    if rules.multi_stone_suicide_legal {
        global[8] = 1.0;
    }
    if rules.scoring_rule == ScoringRule::Territory {
        global[9] = 1.0;
    }
}

/// The area map behind planes 18 and 19, with the group-tax adjustment of
/// pla's board score, or `None` when these rules show no area yet
/// (territory scoring before the second encore).
fn area_feature(
    board: &Board,
    hist: &BoardHistory,
    pla: Player,
    suicide_for_pass_alive: bool,
) -> Option<(Area, i32)> {
    let rules = hist.rules();
    let (keep_territories, keep_stones) = match (rules.scoring_rule, rules.tax_rule) {
        (ScoringRule::Area, TaxRule::None) => {
            let area = board.calculate_area(AreaOptions {
                non_pass_alive_stones: true,
                safe_big_territories: true,
                unsafe_big_territories: true,
                multi_stone_suicide_legal: suicide_for_pass_alive,
            });
            return Some((area, 0));
        }
        (ScoringRule::Area, TaxRule::Seki | TaxRule::All) => (false, true),
        (ScoringRule::Territory, _) if hist.encore_phase() < 2 => return None,
        (ScoringRule::Territory, TaxRule::None) => (true, false),
        (ScoringRule::Territory, TaxRule::Seki | TaxRule::All) => (false, false),
    };
    let (area, white_minus_black_regions) = board.calculate_independent_life_area(
        keep_territories,
        keep_stones,
        suicide_for_pass_alive,
    );
    let tax = if rules.tax_rule == TaxRule::All {
        match pla {
            Player::White => -2 * white_minus_black_regions,
            Player::Black => 2 * white_minus_black_regions,
        }
    } else {
        0
    };
    Some((area, tax))
}

/// Komi from pla's view with bonuses and draw adjustment, clipped to the
/// board area plus `radius` ([`KOMI_CLIP_RADIUS`], or
/// [`OLD_KOMI_CLIP_RADIUS`] before input version 7) either way.
fn clipped_self_komi(
    board: &Board,
    hist: &BoardHistory,
    pla: Player,
    params: &NnInputParams,
    radius: f32,
) -> f32 {
    let komi = hist.current_self_komi(pla, params.draw_equivalent_wins_for_white);
    let bound = (board.x_size() * board.y_size()) as f32 + radius;
    komi.clamp(-bound, bound)
}

/// KataGo's komi parity input: a triangle wave of period 2 in komi,
/// rising around the komi values that allow a draw (their parity is that
/// of the board area).
fn komi_parity_wave(self_komi: f32, board_area_is_even: bool) -> f32 {
    let komi_floor = if board_area_is_even {
        (self_komi / 2.0).floor() * 2.0
    } else {
        ((self_komi - 1.0) / 2.0).floor() * 2.0 + 1.0
    };
    let delta = (self_komi - komi_floor).clamp(0.0, 2.0);
    if delta < 0.5 {
        delta
    } else if delta < 1.5 {
        1.0 - delta
    } else {
        delta - 2.0
    }
}

// Keys folded into the cache hash (KataGo's `ZOBRIST_PASS_ENDS_PHASE`,
// `ZOBRIST_GAME_IS_OVER` and `MiscNNInputParams::ZOBRIST_*`); our own
// random constants, only ever compared with hashes from this crate.
const KEY_PASS_ENDS_PHASE: u128 = 0x8b3c_1f0e_5a27_d4c6_91e2_7f3a_0c5d_b8e4;
const KEY_CONSERVATIVE_PASS: u128 = 0x2d71_c4e9_63b0_5f18_e6a4_9d02_7b3c_f1a5;
const KEY_FRIENDLY_PASS: u128 = 0xf04a_6b93_1ec7_28d5_3b8f_c167_a4e0_592d;
const KEY_PASSING_HACKS: u128 = 0x5e96_0ad3_b71f_c482_0f5c_2ae8_d963_7b14;
const KEY_GAME_IS_OVER: u128 = 0xa7e1_3c58_f902_6bd9_c4d0_81f7_3e6a_259b;
const KEY_ZERO_HISTORY: u128 = 0x31f8_d6a0_4c9b_e257_7a13_e5c9_b0f4_6d82;
const KEY_PLAYOUT_DOUBLINGS: u128 = 0xc95b_27e4_0d6a_f31c_e842_5b97_1fa3_0c6e;
const KEY_PASS_ALIVE_OVERRIDE: u128 = 0x6c0e_94b7_e3d1_5a28_2f97_d04c_86b5_e13a;

/// KataGo's `NNInputs::getHash`: a hash of everything the network input
/// depends on that the evaluator cache must tell apart: position, player,
/// ko and superko bans, encore marks, rules, komi (with draw value), whether
/// a pass ends the phase (and the pass handling that then applies), game
/// over, whether history is shown at all, and the playout advantage.
///
/// Like KataGo it ignores which earlier moves were played (transpositions
/// with different recent moves share a cache entry); the policy temperature
/// and optimism are mixed in by the evaluator's own cache key. Nor does it
/// name the input version: a cache belongs to one evaluator, whose models
/// are all of one model version (the evaluator checks), as KataGo's cache
/// belongs to one `NNEvaluator`.
pub fn nn_input_hash(
    board: &Board,
    hist: &BoardHistory,
    next: Player,
    params: &NnInputParams,
) -> Hash128 {
    let mut h = hist
        .situation_rules_and_ko_hash(board, next, params.draw_equivalent_wins_for_white)
        .0;
    if let Some(always) = params.pass_alive_suicide_rules_override {
        let rules = hist.rules();
        if !rules.multi_stone_suicide_legal && always != hist.suicide_legal_for_pass_alive() {
            h ^= KEY_PASS_ALIVE_OVERRIDE;
        }
    }
    if hist.pass_would_end_phase(board, next) {
        h ^= KEY_PASS_ENDS_PHASE;
        if params.conservative_pass_and_is_root {
            h ^= KEY_CONSERVATIVE_PASS;
        }
        if hist.should_suppress_end_game_from_friendly_pass(board, next) {
            h ^= KEY_FRIENDLY_PASS;
        }
        if params.enable_passing_hacks {
            h ^= KEY_PASSING_HACKS;
        }
    }
    if hist.is_game_finished() || hist.is_past_normal_phase_end() {
        h ^= KEY_GAME_IS_OVER;
    }
    if params.max_history == 0 {
        h = h.wrapping_add(KEY_ZERO_HISTORY);
    }
    if params.playout_doubling_advantage != 0.0 {
        // Discretised as KataGo does, to 1/256 of a doubling.
        let d = (params.playout_doubling_advantage * 256.0) as i64 as u64;
        let lo = splitmix64(d);
        let hi = splitmix64(lo ^ d.rotate_left(17));
        h = h.wrapping_add(u128::from(lo) | (u128::from(hi) << 64));
        h ^= KEY_PLAYOUT_DOUBLINGS;
    }
    Hash128(h)
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
#[path = "features_tests.rs"]
mod tests;
