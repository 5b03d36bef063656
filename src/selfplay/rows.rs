//! Training rows from a finished game: KataGo's
//! `TrainingDataWriter::writeGame` and `TrainingWriteBuffers::addRow`
//! (`cpp/dataio/trainingwrite.cpp`), channel for channel.

use rand::Rng;

use super::game_data::{
    FinalOutcome, FinishedGame, PolicyTargetMove, QValueTargetMove, TurnRecord, ValueTargets,
};
use crate::data::{
    set_packed_bit, TrainingRows, DATA_FORMAT_VERSION, EXTRA_SCORE_DISTR_RADIUS,
    NUM_BINARY_CHANNELS, NUM_GLOBAL_INPUTS,
};
use crate::game::{Board, BoardHistory, Color, Move, Player, ScoringRule};
use crate::nn::{FeatureEncoder, NnInputParams};

/// KataGo's `NNPos::MAX_BOARD_AREA` (19x19): score targets are capped at
/// this plus the extra score-distribution radius whatever `pos_len` is.
const MAX_BOARD_AREA: f32 = 361.0;

/// Why a game could not become rows.
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    /// The board does not fit the data board.
    #[error("board {x}x{y} does not fit the {pos_len}x{pos_len} data board (dataBoardLen)")]
    BoardTooBig {
        /// Board width.
        x: usize,
        /// Board height.
        y: usize,
        /// The data board side.
        pos_len: usize,
    },
    /// The game record is inconsistent (a bug in the game loop).
    #[error("inconsistent game record: {0}")]
    Inconsistent(String),
}

/// Everything `addRow` reads besides the game-wide fields.
struct RowArgs<'a> {
    board: &'a Board,
    hist: &'a BoardHistory,
    next: Player,
    turn_idx: usize,
    turn: &'a TurnRecord,
    next_policy_target: Option<&'a [PolicyTargetMove]>,
    /// This turn's and every later turn's value targets, the last being
    /// the game result (just one entry for side positions).
    white_value_targets: &'a [ValueTargets],
    outcome: Option<&'a FinalOutcome>,
    /// Boards from this turn to the end (main-line rows only).
    future_boards: Option<&'a [Board]>,
    is_side_position: bool,
    num_nets_behind_latest: usize,
    pda_pla: Option<Player>,
    pda: f64,
}

/// Writes a game's rows into `rows`. Returns the number of rows added.
pub fn write_game_rows<R: Rng>(
    game: &FinishedGame,
    rows: &mut TrainingRows,
    encoder: &mut FeatureEncoder,
    rng: &mut R,
) -> Result<usize, RowError> {
    let (xs, ys) = (game.start_board.x_size(), game.start_board.y_size());
    if xs > rows.pos_len || ys > rows.pos_len {
        return Err(RowError::BoardTooBig {
            x: xs,
            y: ys,
            pos_len: rows.pos_len,
        });
    }
    let moves = game.game_moves();
    if game.turns.len() != moves.len() {
        return Err(RowError::Inconsistent(format!(
            "{} turn records for {} moves",
            game.turns.len(),
            moves.len()
        )));
    }
    if !game.end_hist.is_game_finished() && !game.hit_turn_limit {
        return Err(RowError::Inconsistent(
            "unfinished game that did not hit the turn limit".into(),
        ));
    }

    // Every board along the game, for the future-position planes.
    let mut boards = Vec::with_capacity(moves.len() + 1);
    {
        let mut board = game.start_board.clone();
        let mut hist = game.start_hist.clone();
        boards.push(board.clone());
        for &(mv, pla) in moves {
            if !hist.is_legal(&board, mv, pla) {
                return Err(RowError::Inconsistent(format!(
                    "illegal move {} in the game record",
                    mv.to_gtp(xs, ys)
                )));
            }
            hist.play(&mut board, mv, pla);
            boards.push(board.clone());
        }
    }
    let mut value_targets: Vec<ValueTargets> =
        game.turns.iter().map(|t| t.white_value_targets).collect();
    value_targets.push(game.outcome.white_value_targets);

    let start_idx = game.start_hist.moves().len();
    let mut board = game.start_board.clone();
    let mut hist = game.start_hist.clone();
    let mut next = game.start_pla;
    let mut count = 0;
    for (i, &(mv, pla)) in moves.iter().enumerate() {
        let turn = &game.turns[i];
        let turn_idx = start_idx + i;
        let num_nets_behind_latest = game
            .changed_nets_turns
            .iter()
            .position(|&t| t > turn_idx)
            .map_or(0, |p| game.changed_nets_turns.len() - p);
        let mut weight = turn.target_weight;
        while weight > 0.0 {
            if weight >= 1.0 || rng.gen_bool(weight) {
                let args = RowArgs {
                    board: &board,
                    hist: &hist,
                    next,
                    turn_idx,
                    turn,
                    next_policy_target: game
                        .turns
                        .get(i + 1)
                        .and_then(|t| t.policy_target.as_deref()),
                    white_value_targets: &value_targets[i..],
                    outcome: Some(&game.outcome),
                    future_boards: Some(&boards[i..]),
                    is_side_position: false,
                    num_nets_behind_latest,
                    pda_pla: game.playout_doubling_advantage_pla,
                    pda: game.playout_doubling_advantage,
                };
                add_row(game, &args, rows, encoder, rng);
                count += 1;
            }
            weight -= 1.0;
        }
        debug_assert_eq!(pla, next);
        hist.play(&mut board, mv, pla);
        next = pla.opp();
    }

    for sp in &game.side_positions {
        let mut weight = sp.turn.target_weight;
        let targets = [sp.turn.white_value_targets];
        while weight > 0.0 {
            if weight >= 1.0 || rng.gen_bool(weight) {
                let args = RowArgs {
                    board: &sp.board,
                    hist: &sp.hist,
                    next: sp.pla,
                    turn_idx: sp.hist.moves().len(),
                    turn: &sp.turn,
                    next_policy_target: None,
                    white_value_targets: &targets,
                    outcome: None,
                    future_boards: None,
                    is_side_position: true,
                    num_nets_behind_latest: game
                        .changed_nets_turns
                        .len()
                        .saturating_sub(sp.num_nn_changes_so_far),
                    pda_pla: None,
                    pda: 0.0,
                };
                add_row(game, &args, rows, encoder, rng);
                count += 1;
            }
            weight -= 1.0;
        }
    }
    Ok(count)
}

/// KataGo's `clampToRadius120`/`clampToRadius32000`: an integer in
/// `[-radius, radius]` whose expectation is exactly `x`.
fn stochastic_round<R: Rng>(x: f32, radius: i32, rng: &mut R) -> i32 {
    let low = x.floor() as i32;
    let high = low + 1;
    if low < -radius {
        return -radius;
    }
    if high > radius {
        return radius;
    }
    let lambda = x - low as f32;
    if lambda == 0.0 || !rng.gen_bool(f64::from(lambda).clamp(0.0, 1.0)) {
        low
    } else {
        high
    }
}

/// `fillValueTDTargets`: an exponentially discounted blend of this turn's
/// and later value targets, from `next`'s point of view.
fn td_targets(targets: &[ValueTargets], next: Player, now_factor: f64) -> [f32; 4] {
    let (mut win, mut loss, mut no_result, mut score) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut left = 1.0f64;
    for (i, t) in targets.iter().enumerate() {
        let now = if i + 1 == targets.len() {
            let w = left;
            left = 0.0;
            w
        } else {
            let w = left * now_factor;
            left *= 1.0 - now_factor;
            w
        };
        let white = next == Player::White;
        win += now * f64::from(if white { t.win } else { t.loss });
        loss += now * f64::from(if white { t.loss } else { t.win });
        no_result += now * f64::from(t.no_result);
        score += now * f64::from(if white { t.score } else { -t.score });
    }
    let cap = f64::from(MAX_BOARD_AREA) + EXTRA_SCORE_DISTR_RADIUS as f64;
    [
        win as f32,
        loss as f32,
        no_result as f32,
        score.clamp(-cap, cap) as f32,
    ]
}

/// Where a board point goes in a row laid out on the data board.
#[derive(Clone, Copy)]
struct RowGeometry {
    pos_len: usize,
    pos_area: usize,
    xs: usize,
    ys: usize,
}

impl RowGeometry {
    /// The position of point `(x, y)` on the data board.
    #[inline]
    fn pos_of(&self, x: usize, y: usize) -> usize {
        y * self.pos_len + x
    }

    /// The position of a move (a pass is the last one).
    #[inline]
    fn move_pos(&self, mv: Move) -> usize {
        match mv.loc() {
            Some(loc) => {
                let (x, y) = loc.xy(self.xs);
                self.pos_of(x, y)
            }
            None => self.pos_area,
        }
    }
}

/// Appends one row: inputs, policy and value targets, the game's facts,
/// the spatial targets and the per-move search values, in KataGo's
/// `TrainingWriteBuffers::addRow` order (the random draws included).
fn add_row<R: Rng>(
    game: &FinishedGame,
    a: &RowArgs<'_>,
    rows: &mut TrainingRows,
    encoder: &mut FeatureEncoder,
    rng: &mut R,
) {
    let pos_len = rows.pos_len;
    let geo = RowGeometry {
        pos_len,
        pos_area: pos_len * pos_len,
        xs: a.board.x_size(),
        ys: a.board.y_size(),
    };
    let packed_len = rows.packed_len();
    let policy_len = rows.policy_len();
    let row_idx = rows.push_zeroed_row();
    let r = rows.row_mut(row_idx);
    fill_inputs(
        game,
        a,
        geo,
        encoder,
        r.binary_input_packed,
        r.global_input,
        packed_len,
    );
    let g = &mut *r.global_targets;
    g[25] = game.training_weight as f32;
    // Policy targets: this turn and the next.
    let (this_turn, next_turn) = r.policy_targets.split_at_mut(policy_len);
    g[26] = fill_policy_target(this_turn, a.turn.policy_target.as_deref(), geo);
    g[28] = fill_policy_target(&mut next_turn[..policy_len], a.next_policy_target, geo);
    fill_value_targets(game, a, geo, g);
    // History masking for training, 2% dropped per step.
    let mut use_hist = true;
    for flag in &mut g[36..41] {
        use_hist = use_hist && rng.gen::<f64>() < 0.98;
        *flag = if use_hist { 1.0 } else { 0.0 };
    }
    fill_game_facts(game, a, g);
    fill_spatial_targets(game, a, geo, g, r.value_targets, r.score_distr, rng);
    fill_q_values(
        &a.turn.q_value_targets,
        a.next,
        policy_len,
        &|mv| geo.move_pos(mv),
        r.q_value_targets,
        rng,
    );
}

/// The net's inputs, from the player to move, with the game's draw value
/// and (on the main line) the playout advantage; the spatial ones packed
/// into bits.
fn fill_inputs(
    game: &FinishedGame,
    a: &RowArgs<'_>,
    geo: RowGeometry,
    encoder: &mut FeatureEncoder,
    binary_input_packed: &mut [u8],
    global_input: &mut [f32],
    packed_len: usize,
) {
    let (xs, ys) = (geo.xs, geo.ys);
    let pda = if a.is_side_position {
        0.0
    } else if a.pda_pla == Some(a.next.opp()) {
        -a.pda
    } else {
        a.pda
    };
    let params = NnInputParams {
        draw_equivalent_wins_for_white: game.draw_equivalent_wins_for_white,
        playout_doubling_advantage: pda,
        ..NnInputParams::default()
    };
    let mut spatial = vec![0f32; NUM_BINARY_CHANNELS * xs * ys];
    encoder.fill_row_v7(
        a.board,
        a.hist,
        a.next,
        &params,
        &mut spatial,
        &mut global_input[..NUM_GLOBAL_INPUTS],
    );
    for c in 0..NUM_BINARY_CHANNELS {
        let plane = &mut binary_input_packed[c * packed_len..(c + 1) * packed_len];
        for y in 0..ys {
            for x in 0..xs {
                if spatial[c * xs * ys + y * xs + x] != 0.0 {
                    set_packed_bit(plane, geo.pos_of(x, y));
                }
            }
        }
    }
}

/// One policy target channel; returns its weight (0 without a target,
/// whose channel is then all ones).
fn fill_policy_target(p: &mut [i16], target: Option<&[PolicyTargetMove]>, geo: RowGeometry) -> f32 {
    match target {
        Some(moves) => {
            for m in moves {
                p[geo.move_pos(m.mv)] = m.target;
            }
            1.0
        }
        None => {
            p.fill(1);
            0.0
        }
    }
}

/// The value targets: the game result, td-like blends of later results,
/// the lead, the variance's time of arrival and the turn's surprise.
fn fill_value_targets(game: &FinishedGame, a: &RowArgs<'_>, geo: RowGeometry, g: &mut [f32]) {
    let board_area = (geo.xs * geo.ys) as f64;
    let vt = a.white_value_targets;
    g[0..4].copy_from_slice(&td_targets(vt, a.next, 0.0));
    g[4..8].copy_from_slice(&td_targets(vt, a.next, 1.0 / (1.0 + board_area * 0.176)));
    g[8..12].copy_from_slice(&td_targets(vt, a.next, 1.0 / (1.0 + board_area * 0.056)));
    g[12..16].copy_from_slice(&td_targets(vt, a.next, 1.0 / (1.0 + board_area * 0.016)));
    g[16..20].copy_from_slice(&td_targets(vt, a.next, 1.0));
    let cap = MAX_BOARD_AREA + EXTRA_SCORE_DISTR_RADIUS as f32;
    if let (Some(lead), false) = (vt[0].lead, ended_no_result(game)) {
        let lead = if a.next == Player::White { lead } else { -lead };
        g[21] = lead.clamp(-cap, cap);
        g[29] = VALUE_WEIGHT;
    }
    // Expected time of arrival of win-loss variance, in turns.
    let mut eta = 0.0f64;
    for i in 1..vt.len() {
        let prev = f64::from(vt[i - 1].win - vt[i - 1].loss);
        let next = f64::from(vt[i].win - vt[i].loss);
        eta += i as f64 * (next - prev) * (next - prev);
    }
    g[22] = eta as f32;
    g[30] = a.turn.policy_surprise as f32;
    g[31] = a.turn.policy_entropy as f32;
    g[32] = a.turn.search_entropy as f32;
}

/// The weight of the value targets a row has.
const VALUE_WEIGHT: f32 = 1.0;

/// Whether the game ended without a result.
fn ended_no_result(game: &FinishedGame) -> bool {
    game.end_hist.is_game_finished() && game.end_hist.is_no_result()
}

/// What the row says about its game and turn: hash, komi, rules, nets,
/// turn numbers, game type, the raw net's view and the bonus score.
fn fill_game_facts(game: &FinishedGame, a: &RowArgs<'_>, g: &mut [f32]) {
    let end = &game.end_hist;
    let (h0, h1) = (game.game_hash.lo(), game.game_hash.hi());
    g[41] = (h0 & 0x3F_FFFF) as f32;
    g[42] = ((h0 >> 22) & 0x3F_FFFF) as f32;
    g[43] = ((h0 >> 44) & 0xF_FFFF) as f32;
    g[44] = (h1 & 0x3F_FFFF) as f32;
    g[45] = ((h1 >> 22) & 0x3F_FFFF) as f32;
    g[46] = ((h1 >> 44) & 0xF_FFFF) as f32;
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    g[47] = a
        .hist
        .current_self_komi(a.next, game.draw_equivalent_wins_for_white);
    g[48] = flag(a.hist.encore_phase() == 2 || a.hist.rules().scoring_rule == ScoringRule::Area);
    g[49] = flag(!game.changed_nets_turns.is_empty());
    g[50] = a.num_nets_behind_latest as f32;
    g[51] = a.turn_idx as f32;
    g[52] = flag(game.hit_turn_limit);
    g[53] = game.start_hist.moves().len() as f32;
    g[54] = game.num_extra_black as f32;
    g[55] = game.mode as i32 as f32;
    g[56] = a.hist.initial_turn_number() as f32;
    let raw = a.turn.nn_raw_stats;
    let sign = if a.next == Player::White { 1.0 } else { -1.0 };
    g[57] = (sign * raw.white_win_loss) as f32;
    g[58] = (sign * raw.white_score_mean) as f32;
    g[59] = raw.policy_entropy as f32;
    g[60] = a.turn.unreduced_num_visits as f32;
    if !a.is_side_position {
        let white_bonus = end.white_bonus_score() - a.hist.white_bonus_score();
        let own = if a.next == Player::White {
            white_bonus
        } else {
            -white_bonus
        };
        // Avoids writing -0.0.
        g[61] = if own != 0.0 { own } else { 0.0 };
    }
    g[62] = flag(!a.is_side_position && end.is_game_finished() && !game.hit_turn_limit);
    g[63] = DATA_FORMAT_VERSION;
    g[68] = flag(a.hist.always_compute_pass_alive_under_suicide_rules());
}

/// Final ownership and seki, the score distribution, the boards 8 and 32
/// turns later, and the final per-point scoring in 1/120ths.
fn fill_spatial_targets<R: Rng>(
    game: &FinishedGame,
    a: &RowArgs<'_>,
    geo: RowGeometry,
    g: &mut [f32],
    own: &mut [i8],
    score_distr: &mut [i8],
    rng: &mut R,
) {
    let (xs, ys, pos_area) = (geo.xs, geo.ys, geo.pos_area);
    let relative = |c: Color| -> i8 {
        match c.player() {
            Some(p) if p == a.next => 1,
            Some(_) => -1,
            None => 0,
        }
    };
    let no_result = ended_no_result(game);
    match a.outcome {
        Some(outcome) if !no_result => {
            g[27] = VALUE_WEIGHT;
            let vt = a.white_value_targets;
            let score = if a.next == Player::White {
                vt[vt.len() - 1].score
            } else {
                -vt[vt.len() - 1].score
            };
            g[20] = score;
            for y in 0..ys {
                for x in 0..xs {
                    let loc = a.board.loc(x, y);
                    let pos = geo.pos_of(x, y);
                    let o = outcome.ownership.get(loc);
                    own[pos] = relative(o);
                    let full = outcome.full_area.get(loc);
                    if full != Color::Empty && o == Color::Empty {
                        own[pos + pos_area] = relative(full);
                    }
                }
            }
            fill_score_distr(score_distr, score, pos_area);
        }
        _ => {
            // Dummy target that still sums to 100.
            let sd_mid = pos_area + EXTRA_SCORE_DISTR_RADIUS;
            score_distr[sd_mid - 1] = 50;
            score_distr[sd_mid] = 50;
        }
    }
    // Future positions 8 and 32 turns later.
    if let Some(boards) = a.future_boards {
        g[33] = 1.0;
        let last = boards.len() - 1;
        let b2 = &boards[8.min(last)];
        let b3 = &boards[32.min(last)];
        for y in 0..ys {
            for x in 0..xs {
                let loc = a.board.loc(x, y);
                let pos = geo.pos_of(x, y);
                own[pos + 2 * pos_area] = relative(b2.get(loc));
                own[pos + 3 * pos_area] = relative(b3.get(loc));
            }
        }
    }
    // Final per-point scoring, in 1/120ths.
    if let (Some(outcome), false) = (a.outcome, no_result) {
        g[34] = VALUE_WEIGHT;
        for y in 0..ys {
            for x in 0..xs {
                let loc = a.board.loc(x, y);
                let s = outcome.white_scoring[loc.idx()];
                let s = if a.next == Player::White { s } else { -s };
                own[geo.pos_of(x, y) + 4 * pos_area] = stochastic_round(s * 120.0, 120, rng) as i8;
            }
        }
    }
}

/// The final score (from the player to move) as a distribution over the
/// two bins around it, in percent.
fn fill_score_distr(score_distr: &mut [i8], score: f32, pos_area: usize) {
    let sd_len = score_distr.len();
    let sd_mid = pos_area + EXTRA_SCORE_DISTR_RADIUS;
    let center = score.round() as i64;
    let lower = center + sd_mid as i64 - 1;
    let upper = center + sd_mid as i64;
    if upper <= 0 {
        score_distr[0] = 100;
    } else if lower >= sd_len as i64 - 1 {
        score_distr[sd_len - 1] = 100;
    } else {
        let lambda = score - (center as f32 - 0.5);
        let upper_prop = (lambda * 100.0).round() as i32;
        score_distr[lower as usize] = (100 - upper_prop) as i8;
        score_distr[upper as usize] = upper_prop as i8;
    }
}

/// `fillQValueTarget`: per-move win-loss ×32000, score ×60 and visits.
fn fill_q_values<R: Rng>(
    targets: &[QValueTargetMove],
    next: Player,
    policy_len: usize,
    move_pos: &dyn Fn(Move) -> usize,
    out: &mut [i16],
    rng: &mut R,
) {
    let cap = MAX_BOARD_AREA + EXTRA_SCORE_DISTR_RADIUS as f32;
    for t in targets {
        let pos = move_pos(t.mv);
        let (wl, score) = if next == Player::White {
            (t.win_loss, t.score)
        } else {
            (-t.win_loss, -t.score)
        };
        let score = score.clamp(-cap, cap);
        out[pos] = stochastic_round(wl * 32000.0, 32000, rng) as i16;
        out[pos + policy_len] = stochastic_round(score * 60.0, 32000, rng) as i16;
        out[pos + 2 * policy_len] = t.visits.clamp(0, 32000) as i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn stochastic_round_keeps_expectation_and_range() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        assert_eq!(stochastic_round(3.0, 120, &mut rng), 3);
        assert_eq!(stochastic_round(500.0, 120, &mut rng), 120);
        assert_eq!(stochastic_round(-500.0, 120, &mut rng), -120);
        let n = 20000;
        let sum: i64 = (0..n)
            .map(|_| i64::from(stochastic_round(2.25, 120, &mut rng)))
            .sum();
        let mean = sum as f64 / n as f64;
        assert!((mean - 2.25).abs() < 0.02, "{mean}");
    }

    #[test]
    fn td_targets_blend_toward_the_result() {
        let a = ValueTargets {
            win: 0.4,
            loss: 0.6,
            score: -2.0,
            ..ValueTargets::default()
        };
        let end = ValueTargets {
            win: 1.0,
            loss: 0.0,
            score: 5.0,
            ..ValueTargets::default()
        };
        // Now-factor 0: the result; 1: this turn. Black sees them flipped.
        assert_eq!(
            td_targets(&[a, end], Player::White, 0.0),
            [1.0, 0.0, 0.0, 5.0]
        );
        assert_eq!(
            td_targets(&[a, end], Player::Black, 1.0),
            [0.6, 0.4, 0.0, 2.0]
        );
        let half = td_targets(&[a, end], Player::White, 0.5);
        assert!((half[0] - 0.7).abs() < 1e-6 && (half[3] - 1.5).abs() < 1e-6);
    }
}
