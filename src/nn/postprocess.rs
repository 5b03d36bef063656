//! Where a board sits in a row's tensor, and turning a [`NetRow`] into the
//! [`NnOutput`] the search wants (KataGo's `NNEvaluator::evaluate` after the
//! result arrives, and the multi-symmetry average of `NNOutput`).

use crate::game::Player;

use super::output::NnOutput;
use super::outputs::NetRow;
use super::request::{EvalError, EvalRequest};
use super::symmetry::Symmetry;

/// How one board is laid out in its row of a batch: the board sits in the
/// top-left of a `frame_x`×`frame_y` frame (the board itself, or a padded
/// square that lets boards of several sizes share a batch), and the frame
/// is transformed by `sym` into the `x_len`×`y_len` tensor.
///
/// A transposing symmetry on a rectangular board simply gives a tensor of
/// the swapped shape: no padding is needed for any symmetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowLayout {
    pub sym: Symmetry,
    pub x_size: usize,
    pub y_size: usize,
    pub frame_x: usize,
    pub frame_y: usize,
    pub x_len: usize,
    pub y_len: usize,
}

impl RowLayout {
    /// The layout of an `x_size`×`y_size` board under `sym`; with
    /// `pad_to = Some(n)` every board that fits goes into an `n`×`n` frame.
    pub fn new(x_size: usize, y_size: usize, sym: Symmetry, pad_to: Option<usize>) -> RowLayout {
        let (frame_x, frame_y) = match pad_to {
            Some(n) if x_size <= n && y_size <= n => (n, n),
            _ => (x_size, y_size),
        };
        let (x_len, y_len) = sym.dims(frame_x, frame_y);
        RowLayout {
            sym,
            x_size,
            y_size,
            frame_x,
            frame_y,
            x_len,
            y_len,
        }
    }

    /// The tensor shape `(x_len, y_len)`; rows batch together when equal.
    pub fn shape(&self) -> (usize, usize) {
        (self.x_len, self.y_len)
    }

    /// Index in the tensor plane of board point `(x, y)`.
    #[inline]
    pub fn tensor_index(&self, x: usize, y: usize) -> usize {
        let (sx, sy) = self.sym.point(x, y, self.frame_x, self.frame_y);
        sy * self.x_len + sx
    }

    /// Writes one row: `spatial` is this row's `[C, y_len, x_len]` slice
    /// and `mask` its `[y_len, x_len]` slice, both already zeroed.
    pub fn write_row(&self, input: &[f32], channels: usize, spatial: &mut [f32], mask: &mut [f32]) {
        let area = self.x_size * self.y_size;
        let plane = self.x_len * self.y_len;
        for y in 0..self.y_size {
            for x in 0..self.x_size {
                let from = y * self.x_size + x;
                let to = self.tensor_index(x, y);
                mask[to] = 1.0;
                for c in 0..channels {
                    spatial[c * plane + to] = input[c * area + from];
                }
            }
        }
    }
}

fn bad(msg: String) -> EvalError {
    EvalError::BadOutput(msg)
}

fn check_finite(name: &str, v: f64) -> Result<(), EvalError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(bad(format!("{name} is not finite ({v})")))
    }
}

/// Post-processes one network row for `req` laid out as `layout`, from a
/// net of KataGo model version `model_version`: undoes the symmetry and
/// padding, softmaxes the policy over the legal moves with the request's
/// temperature (illegal moves exactly -1), softmaxes the value, and turns
/// everything to white's perspective.
pub(crate) fn postprocess(
    raw: &NetRow<'_>,
    layout: &RowLayout,
    req: &EvalRequest,
    want_ownership: bool,
    model_version: i32,
) -> Result<NnOutput, EvalError> {
    let (x_size, y_size) = (layout.x_size, layout.y_size);
    let plane = layout.x_len * layout.y_len;
    if raw.policy.len() != plane + 1 {
        return Err(bad(format!(
            "policy has {} entries, expected {} for a {}x{} tensor",
            raw.policy.len(),
            plane + 1,
            layout.x_len,
            layout.y_len
        )));
    }
    let optimistic = optimistic_policy(raw, plane, req.params.policy_optimism)?;
    let policy = policy_probs(raw, layout, req, optimistic)?;
    let v = if model_version <= 3 {
        value_probs_v3(raw, x_size, y_size)?
    } else {
        value_probs(raw, req.params.allow_no_result)?
    };

    let white = req.to_move == Player::White;
    let sign = if white { 1.0f32 } else { -1.0 };
    let white_ownership = if want_ownership {
        Some(white_ownership(raw, layout, sign)?)
    } else {
        None
    };

    let (white_win, white_loss) = if white {
        (v.win, v.loss)
    } else {
        (v.loss, v.win)
    };
    Ok(NnOutput {
        x_size,
        y_size,
        policy,
        white_win_prob: white_win as f32,
        white_loss_prob: white_loss as f32,
        white_no_result_prob: v.no_result as f32,
        white_score_mean: sign * v.score_mean as f32,
        white_score_mean_sq: v.score_mean_sq as f32,
        white_lead: sign * v.lead as f32,
        var_time_left: raw.scores.var_time_left,
        shortterm_winloss_error: raw.scores.shortterm_winloss_error,
        shortterm_score_error: raw.scores.shortterm_score_error,
        white_ownership,
    })
}

/// The optimistic policy head's logits, when the request blends them in
/// (`optimism > 0`) and the model gave them.
#[inline]
fn optimistic_policy<'a>(
    raw: &NetRow<'a>,
    plane: usize,
    optimism: f32,
) -> Result<Option<&'a [f32]>, EvalError> {
    match raw.policy_optimistic {
        Some(p) if optimism > 0.0 => {
            if p.len() != plane + 1 {
                return Err(bad(format!(
                    "optimistic policy has {} entries, expected {}",
                    p.len(),
                    plane + 1
                )));
            }
            Ok(Some(p))
        }
        _ => Ok(None),
    }
}

/// The policy over the board's own points and pass: logits gathered back
/// into the board's orientation, then a softmax over legal moves in f32, as
/// KataGo (illegal moves exactly -1).
#[inline]
fn policy_probs(
    raw: &NetRow<'_>,
    layout: &RowLayout,
    req: &EvalRequest,
    optimistic: Option<&[f32]>,
) -> Result<Vec<f32>, EvalError> {
    let (x_size, y_size) = (layout.x_size, layout.y_size);
    let area = x_size * y_size;
    let plane = layout.x_len * layout.y_len;
    let optimism = req.params.policy_optimism;
    let logit = |t: usize| -> f32 {
        let p = raw.policy[t];
        match optimistic {
            Some(o) => p + (o[t] - p) * optimism,
            None => p,
        }
    };

    let scale = 1.0 / req.params.policy_temperature;
    let mut policy = vec![0.0f32; area + 1];
    let mut max_logit = -1e25f32;
    for y in 0..y_size {
        for x in 0..x_size {
            let i = y * x_size + x;
            policy[i] = logit(layout.tensor_index(x, y));
        }
    }
    policy[area] = logit(plane);
    let mut legal_count = 0usize;
    for (p, &legal) in policy.iter_mut().zip(&req.legal) {
        *p = if legal {
            legal_count += 1;
            *p * scale
        } else {
            -1e30
        };
        max_logit = max_logit.max(*p);
    }
    softmax_legal(
        &mut policy,
        &req.legal,
        max_logit,
        legal_count,
        req.params.passing_hacks,
    )?;
    Ok(policy)
}

/// Turns the scaled logits (illegal moves -1e30) into probabilities in
/// place, illegal moves -1.
#[inline]
fn softmax_legal(
    policy: &mut [f32],
    legal: &[bool],
    max_logit: f32,
    legal_count: usize,
    passing_hacks: bool,
) -> Result<(), EvalError> {
    let area = policy.len() - 1;
    let mut sum = 0.0f32;
    if passing_hacks {
        // Cap the pass prior at 95% (19x all other moves together).
        for p in &mut policy[..area] {
            *p = (*p - max_logit).exp();
            sum += *p;
        }
        let pass = (policy[area] - max_logit).exp();
        policy[area] = pass.min(sum * 19.0).max(1e-20);
        sum += policy[area];
    } else {
        for p in policy.iter_mut() {
            *p = (*p - max_logit).exp();
            sum += *p;
        }
    }
    if !sum.is_finite() {
        return Err(bad("policy sum is not finite".into()));
    }
    if sum <= 0.0 {
        // Every legal move underflowed: fall back to uniform, as KataGo.
        let uniform = 1.0 / legal_count as f32;
        for (p, &legal) in policy.iter_mut().zip(legal) {
            *p = if legal { uniform } else { -1.0 };
        }
    } else {
        for (p, &legal) in policy.iter_mut().zip(legal) {
            *p = if legal { *p / sum } else { -1.0 };
        }
    }
    Ok(())
}

/// The value head's probabilities and the unconditional score moments,
/// from the player to move's point of view.
struct Values {
    win: f64,
    loss: f64,
    no_result: f64,
    score_mean: f64,
    score_mean_sq: f64,
    lead: f64,
}

/// Value: softmax in f64, then make the score moments unconditional (no
/// result counts as score 0), exactly as nneval.cpp; every number checked
/// finite.
#[inline]
fn value_probs(raw: &NetRow<'_>, allow_no_result: bool) -> Result<Values, EvalError> {
    let [win_logit, loss_logit, no_result_logit] = raw.value_logits.map(f64::from);
    let no_result_logit = if allow_no_result {
        no_result_logit
    } else {
        no_result_logit - 100000.0
    };
    let max = win_logit.max(loss_logit).max(no_result_logit);
    let mut win = (win_logit - max).exp();
    let mut loss = (loss_logit - max).exp();
    let mut no_result = if allow_no_result {
        (no_result_logit - max).exp()
    } else {
        0.0
    };
    let total = win + loss + no_result;
    check_finite("value softmax sum", total)?;
    win /= total;
    loss /= total;
    no_result /= total;
    let has_result = 1.0 - no_result;
    let score_mean = f64::from(raw.scores.score_mean) * has_result;
    let score_mean_sq = f64::from(score_mean_sq(raw)) * has_result;
    let lead = f64::from(raw.scores.lead) * has_result;
    for (name, v) in [
        ("score mean", score_mean),
        ("score mean square", score_mean_sq),
        ("lead", lead),
        ("variance time", f64::from(raw.scores.var_time_left)),
        (
            "short-term win/loss error",
            f64::from(raw.scores.shortterm_winloss_error),
        ),
        (
            "short-term score error",
            f64::from(raw.scores.shortterm_score_error),
        ),
    ] {
        check_finite(name, v)?;
    }
    Ok(Values {
        win,
        loss,
        no_result,
        score_mean,
        score_mean_sq,
        lead,
    })
}

/// The expected squared score, `mean^2 + stdev^2` in f32 (the moment
/// KataGo's backends hand to nneval).
fn score_mean_sq(raw: &NetRow<'_>) -> f32 {
    let s = &raw.scores;
    s.score_mean * s.score_mean + s.score_stdev * s.score_stdev
}

/// KataGo's "inverse_atan": `tan`, saturating at ±1e6 near ±pi/2.
fn inverse_atan(x: f64) -> f64 {
    use std::f64::consts::FRAC_PI_2;
    if x >= FRAC_PI_2 - 1e-6 {
        1e6
    } else if x <= -FRAC_PI_2 + 1e-6 {
        -1e6
    } else {
        x.tan()
    }
}

/// Model version 3's values, as nneval.cpp finishes them: a plain softmax
/// (the no-result logit is never suppressed, and the score is not made
/// unconditional), and the one score channel read as a score value (its
/// arctan) whose points scale with the side of the board
/// (`ScoreValue::approxWhiteScoreOfScoreValueSmooth` with center 0 and
/// scale 2). The net has no second moment: the mean squared stands in.
fn value_probs_v3(raw: &NetRow<'_>, x_size: usize, y_size: usize) -> Result<Values, EvalError> {
    use std::f64::consts::{FRAC_2_PI, FRAC_PI_2};
    let [win_logit, loss_logit, no_result_logit] = raw.value_logits.map(f64::from);
    let max = win_logit.max(loss_logit).max(no_result_logit);
    let (win, loss, no_result) = (
        (win_logit - max).exp(),
        (loss_logit - max).exp(),
        (no_result_logit - max).exp(),
    );
    let total = win + loss + no_result;
    let score_value = f64::from(raw.scores.score_mean).atan() * FRAC_2_PI;
    check_finite("value softmax sum", total)?;
    check_finite("score value", score_value)?;
    // KataGo's `Board::sqrtBoardArea`: exact on square boards.
    let sqrt_area = if x_size == y_size {
        x_size as f64
    } else {
        ((x_size * y_size) as f64).sqrt()
    };
    // Stored as f32 before it is squared, as KataGo's NNOutput holds it.
    let mean = f64::from((inverse_atan(score_value * FRAC_PI_2) * 2.0 * sqrt_area) as f32);
    Ok(Values {
        win: win / total,
        loss: loss / total,
        no_result: no_result / total,
        score_mean: mean,
        score_mean_sq: f64::from((mean * mean) as f32),
        lead: mean,
    })
}

/// The ownership head in the board's own orientation, times `sign` (white's
/// point of view).
#[inline]
fn white_ownership(raw: &NetRow<'_>, layout: &RowLayout, sign: f32) -> Result<Vec<f32>, EvalError> {
    let (x_size, y_size) = (layout.x_size, layout.y_size);
    let plane = layout.x_len * layout.y_len;
    let own = raw.ownership;
    if own.is_empty() {
        return Err(bad("ownership was asked for but the model gave none".into()));
    }
    if own.len() != plane {
        return Err(bad(format!(
            "ownership has {} entries, expected {plane}",
            own.len()
        )));
    }
    let mut out = vec![0.0f32; x_size * y_size];
    for y in 0..y_size {
        for x in 0..x_size {
            out[y * x_size + x] = sign * own[layout.tensor_index(x, y)];
        }
    }
    Ok(out)
}

/// The average of several evaluations of one position, exactly as KataGo's
/// `NNOutput(const vector<shared_ptr<NNOutput>>&)`: every scalar is the
/// mean (so the score stdev comes from the averaged moments, not from
/// averaging stdevs), ownership is the mean over those that have it, and
/// the policy is the mean unless the outputs disagree on which moves are
/// legal (only on a hash collision), when the first policy is taken.
///
/// # Panics
/// If `outputs` is empty (a bug in the caller).
pub(crate) fn average(outputs: &[NnOutput]) -> NnOutput {
    let first = &outputs[0];
    let n = outputs.len() as f32;
    let mean = |f: fn(&NnOutput) -> f32| outputs.iter().map(f).sum::<f32>() / n;

    let mut owned = 0.0f32;
    let mut ownership: Option<Vec<f32>> = None;
    for o in outputs {
        if let Some(own) = &o.white_ownership {
            let acc = ownership.get_or_insert_with(|| vec![0.0; own.len()]);
            for (a, v) in acc.iter_mut().zip(own) {
                *a += v;
            }
            owned += 1.0;
        }
    }
    if let Some(acc) = &mut ownership {
        acc.iter_mut().for_each(|a| *a /= owned);
    }

    let mut policy = vec![0.0f32; first.policy.len()];
    let mut mismatch = false;
    for o in outputs {
        for ((acc, &p), &p0) in policy.iter_mut().zip(&o.policy).zip(&first.policy) {
            mismatch |= (p < 0.0) != (p0 < 0.0);
            *acc += p;
        }
    }
    if mismatch {
        policy.copy_from_slice(&first.policy);
    } else {
        policy.iter_mut().for_each(|p| *p /= n);
    }

    NnOutput {
        x_size: first.x_size,
        y_size: first.y_size,
        policy,
        white_win_prob: mean(|o| o.white_win_prob),
        white_loss_prob: mean(|o| o.white_loss_prob),
        white_no_result_prob: mean(|o| o.white_no_result_prob),
        white_score_mean: mean(|o| o.white_score_mean),
        white_score_mean_sq: mean(|o| o.white_score_mean_sq),
        white_lead: mean(|o| o.white_lead),
        var_time_left: mean(|o| o.var_time_left),
        shortterm_winloss_error: mean(|o| o.shortterm_winloss_error),
        shortterm_score_error: mean(|o| o.shortterm_score_error),
        white_ownership: ownership,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::outputs::ScoreOutputs;
    use crate::nn::request::{EncodedInput, EvalParams};

    fn request(x: usize, y: usize, to_move: Player) -> EvalRequest {
        EvalRequest::new(
            EncodedInput {
                x_size: x,
                y_size: y,
                spatial: vec![0.0; x * y],
                global: vec![],
                meta: vec![],
            },
            vec![true; x * y + 1],
            to_move,
            1,
        )
    }

    /// One row's outputs, owned, for tests that change a field.
    struct Raw {
        policy: Vec<f32>,
        value: [f32; 3],
        scores: ScoreOutputs,
        ownership: Vec<f32>,
    }

    impl Raw {
        fn row(&self) -> NetRow<'_> {
            NetRow {
                policy: &self.policy,
                policy_optimistic: None,
                value_logits: self.value,
                scores: self.scores,
                ownership: &self.ownership,
            }
        }
    }

    fn raw(plane: usize) -> Raw {
        Raw {
            policy: (0..=plane).map(|i| i as f32 * 0.1).collect(),
            value: [1.0, -1.0, 0.5],
            scores: ScoreOutputs {
                score_mean: 3.0,
                score_stdev: 4.0,
                lead: 2.5,
                var_time_left: 10.0,
                shortterm_winloss_error: 0.2,
                shortterm_score_error: 1.5,
            },
            ownership: (0..plane)
                .map(|i| (i as f32 / plane as f32) - 0.5)
                .collect(),
        }
    }

    #[test]
    fn layout_pads_and_transposes() {
        let l = RowLayout::new(7, 5, Symmetry::from_index(4).unwrap(), None);
        assert_eq!(l.shape(), (5, 7));
        let l = RowLayout::new(7, 5, Symmetry::from_index(7).unwrap(), Some(9));
        assert_eq!(l.shape(), (9, 9));
        // Transpose + both flips puts (0, 0) at the far corner of the frame.
        assert_eq!(l.tensor_index(0, 0), 9 * 9 - 1);
        let l = RowLayout::new(19, 19, Symmetry::IDENTITY, Some(9));
        assert_eq!(l.shape(), (19, 19), "too big for the pad: exact size");
    }

    #[test]
    fn policy_is_a_softmax_over_legal_moves() {
        let mut req = request(3, 2, Player::White);
        req.legal[1] = false;
        req.legal[4] = false;
        let layout = RowLayout::new(3, 2, Symmetry::IDENTITY, None);
        let out = postprocess(&raw(6).row(), &layout, &req, false, 17).unwrap();
        assert_eq!(out.policy[1], -1.0);
        assert_eq!(out.policy[4], -1.0);
        let legal_sum: f32 = out.policy.iter().filter(|&&p| p >= 0.0).sum();
        assert!((legal_sum - 1.0).abs() < 1e-6);
        // Ratios follow exp of the logit differences.
        let ratio = out.policy[6] / out.policy[0];
        assert!((ratio - (0.6f32).exp()).abs() < 1e-5);
        assert!(out.white_ownership.is_none());

        // Temperature 2 halves the logits.
        req.params.policy_temperature = 2.0;
        let hot = postprocess(&raw(6).row(), &layout, &req, false, 17).unwrap();
        let ratio = hot.policy[6] / hot.policy[0];
        assert!((ratio - (0.3f32).exp()).abs() < 1e-5);
    }

    #[test]
    fn passing_hacks_cap_the_pass() {
        let mut req = request(2, 1, Player::Black);
        req.params.passing_hacks = true;
        let layout = RowLayout::new(2, 1, Symmetry::IDENTITY, None);
        let mut r = raw(2);
        r.policy = vec![0.0, 0.0, 20.0];
        let out = postprocess(&r.row(), &layout, &req, false, 17).unwrap();
        assert!((out.policy[2] - 0.95).abs() < 1e-5, "{:?}", out.policy);
    }

    #[test]
    fn black_to_move_flips_values_and_ownership() {
        let layout = RowLayout::new(3, 3, Symmetry::IDENTITY, None);
        let r = raw(9);
        let w = postprocess(&r.row(), &layout, &request(3, 3, Player::White), true, 17).unwrap();
        let b = postprocess(&r.row(), &layout, &request(3, 3, Player::Black), true, 17).unwrap();
        assert_eq!(w.white_win_prob, b.white_loss_prob);
        assert_eq!(w.white_loss_prob, b.white_win_prob);
        assert_eq!(w.white_score_mean, -b.white_score_mean);
        assert_eq!(w.white_lead, -b.white_lead);
        assert_eq!(w.white_score_mean_sq, b.white_score_mean_sq);
        let (wo, bo) = (w.white_ownership.unwrap(), b.white_ownership.unwrap());
        assert!(wo.iter().zip(&bo).all(|(a, b)| *a == -*b));
        // No result is suppressed by default.
        assert_eq!(w.white_no_result_prob, 0.0);
        assert!((w.white_win_prob - 1.0 / (1.0 + (-2.0f32).exp())).abs() < 1e-6);
        assert_eq!(w.white_score_mean, 3.0);
    }

    #[test]
    fn no_result_makes_score_unconditional() {
        let mut req = request(3, 3, Player::White);
        req.params = EvalParams {
            allow_no_result: true,
            ..EvalParams::default()
        };
        let layout = RowLayout::new(3, 3, Symmetry::IDENTITY, None);
        let out = postprocess(&raw(9).row(), &layout, &req, false, 17).unwrap();
        let e = [1.0f64.exp(), (-1.0f64).exp(), 0.5f64.exp()];
        let nr = e[2] / (e[0] + e[1] + e[2]);
        assert!((f64::from(out.white_no_result_prob) - nr).abs() < 1e-6);
        assert!((f64::from(out.white_score_mean) - 3.0 * (1.0 - nr)).abs() < 1e-5);
        assert!((f64::from(out.white_lead) - 2.5 * (1.0 - nr)).abs() < 1e-5);
    }

    #[test]
    fn version_3_reads_a_score_value_and_keeps_no_result() {
        let layout = RowLayout::new(3, 3, Symmetry::IDENTITY, None);
        let mut r = raw(9);
        r.scores.score_mean = 0.25;
        let w = postprocess(&r.row(), &layout, &request(3, 3, Player::White), false, 3).unwrap();
        let e = [1.0f64.exp(), (-1.0f64).exp(), 0.5f64.exp()];
        let nr = e[2] / (e[0] + e[1] + e[2]);
        // No result stays, even though the request does not allow it.
        assert!((f64::from(w.white_no_result_prob) - nr).abs() < 1e-6);
        // tan(atan(x)) = x: the raw channel times 2 * sqrt(area) points,
        // not scaled by the chance of a result.
        assert!((w.white_score_mean - 0.25 * 2.0 * 3.0).abs() < 1e-5);
        assert_eq!(w.white_lead, w.white_score_mean);
        assert_eq!(
            w.white_score_mean_sq,
            w.white_score_mean * w.white_score_mean
        );
        let b = postprocess(&r.row(), &layout, &request(3, 3, Player::Black), false, 3).unwrap();
        assert_eq!(b.white_score_mean, -w.white_score_mean);
        // A non-square board scales by the square root of its area.
        let wide = RowLayout::new(4, 2, Symmetry::IDENTITY, None);
        let mut r8 = raw(8);
        r8.scores.score_mean = 0.25;
        let o = postprocess(&r8.row(), &wide, &request(4, 2, Player::White), false, 3).unwrap();
        assert!((f64::from(o.white_score_mean) - 0.25 * 2.0 * 8f64.sqrt()).abs() < 1e-5);
        // A huge score value saturates as KataGo's inverse_atan does.
        r.scores.score_mean = 1e12;
        let big = postprocess(&r.row(), &layout, &request(3, 3, Player::White), false, 3).unwrap();
        assert_eq!(big.white_score_mean, 6e6);
    }

    #[test]
    fn bad_outputs_are_errors() {
        let layout = RowLayout::new(3, 3, Symmetry::IDENTITY, None);
        let req = request(3, 3, Player::White);
        let mut r = raw(9);
        r.policy.pop();
        assert!(postprocess(&r.row(), &layout, &req, false, 17).is_err());
        let mut r = raw(9);
        r.value[0] = f32::NAN;
        assert!(postprocess(&r.row(), &layout, &req, false, 17).is_err());
        let mut r = raw(9);
        r.ownership.clear();
        assert!(postprocess(&r.row(), &layout, &req, true, 17).is_err());
    }

    #[test]
    fn average_uses_moments_and_keeps_illegal_at_minus_one() {
        let layout = RowLayout::new(3, 3, Symmetry::IDENTITY, None);
        let mut req = request(3, 3, Player::White);
        req.legal[2] = false;
        let mut a = postprocess(&raw(9).row(), &layout, &req, true, 17).unwrap();
        let mut b = a.clone();
        a.white_score_mean = 2.0;
        a.white_score_mean_sq = 4.0; // stdev 0
        b.white_score_mean = -2.0;
        b.white_score_mean_sq = 4.0; // stdev 0
        b.white_ownership = None;
        let avg = average(&[a.clone(), b]);
        assert_eq!(avg.white_score_mean, 0.0);
        assert_eq!(avg.white_score_stdev(), 2.0, "stdev from averaged moments");
        assert_eq!(avg.policy[2], -1.0);
        assert_eq!(
            avg.white_ownership, a.white_ownership,
            "only outputs with ownership count"
        );
    }
}
