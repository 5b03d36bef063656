//! What [`super::Model::forward`] returns, and the per-version post-processing
//! of the score outputs (KataGo's `nneval.cpp`).
//!
//! Everything here is from the **side to move**'s perspective, as KataGo's
//! backends produce it; converting to white's perspective (and applying the
//! legal-move softmax and symmetries) is the evaluator's job.

use super::desc::PostProcessParams;

/// Outputs of one batch, one entry per row, laid out flat.
///
/// Board-shaped outputs use the batch tensor's own `height x width`
/// (including any padding), indexed `y * width + x`.
#[derive(Debug, Clone, PartialEq)]
pub struct NetOutputs {
    /// Rows in the batch.
    pub batch_size: usize,
    /// Height of the board tensor.
    pub height: usize,
    /// Width of the board tensor.
    pub width: usize,
    /// Policy logits, `batch_size * (height*width + 1)`; per row the board
    /// points then the pass.
    pub policy: Vec<f32>,
    /// Optimistic policy logits (model version >= 12), same layout.
    pub policy_optimistic: Option<Vec<f32>>,
    /// Win / loss / no-result logits for the side to move, `batch_size * 3`.
    pub value_logits: Vec<f32>,
    /// Post-processed score outputs, one per row.
    pub scores: Vec<ScoreOutputs>,
    /// Ownership in [-1, 1] (+1 = side to move), `batch_size * height*width`.
    pub ownership: Vec<f32>,
}

impl NetOutputs {
    pub(super) fn with_capacity(
        batch_size: usize,
        height: usize,
        width: usize,
        policy: Vec<f32>,
        policy_optimistic: Option<Vec<f32>>,
        value_logits: Vec<f32>,
        ownership: Vec<f32>,
    ) -> NetOutputs {
        NetOutputs {
            batch_size,
            height,
            width,
            policy,
            policy_optimistic,
            value_logits,
            scores: Vec::with_capacity(batch_size),
            ownership,
        }
    }

    pub(super) fn push_scores(&mut self, s: ScoreOutputs) {
        self.scores.push(s);
    }

    /// No rows yet, on a `height` x `width` tensor: for models that make
    /// their rows one at a time ([`NetOutputs::push_row`]), as test stubs do.
    pub fn empty(height: usize, width: usize) -> NetOutputs {
        NetOutputs {
            batch_size: 0,
            height,
            width,
            policy: Vec::new(),
            policy_optimistic: None,
            value_logits: Vec::new(),
            scores: Vec::new(),
            ownership: Vec::new(),
        }
    }

    /// Appends one row. Every row must agree on whether it has an
    /// optimistic policy and ownership ([`NetOutputs::check`] finds rows
    /// that do not).
    pub fn push_row(&mut self, row: NetRow<'_>) {
        self.batch_size += 1;
        self.policy.extend_from_slice(row.policy);
        if let Some(p) = row.policy_optimistic {
            self.policy_optimistic
                .get_or_insert_with(Vec::new)
                .extend_from_slice(p);
        }
        self.value_logits.extend_from_slice(&row.value_logits);
        self.scores.push(row.scores);
        self.ownership.extend_from_slice(row.ownership);
    }

    /// Whether these are `rows` whole rows on a `height` x `width` tensor
    /// (ownership may be absent: an empty buffer); the error says what is
    /// wrong. The evaluator checks a model's outputs with it before any row
    /// is read, so a broken model fails its callers instead of panicking.
    pub fn check(&self, rows: usize, height: usize, width: usize) -> Result<(), String> {
        let hw = height * width;
        let expect = |what: &str, len: usize, want: usize| {
            if len == want {
                Ok(())
            } else {
                Err(format!("{what} has {len} values, expected {want}"))
            }
        };
        if (self.batch_size, self.height, self.width) != (rows, height, width) {
            return Err(format!(
                "{} rows on a {}x{} tensor, expected {rows} on {width}x{height}",
                self.batch_size, self.width, self.height
            ));
        }
        expect("policy", self.policy.len(), rows * (hw + 1))?;
        if let Some(p) = &self.policy_optimistic {
            expect("optimistic policy", p.len(), rows * (hw + 1))?;
        }
        expect("value", self.value_logits.len(), rows * 3)?;
        expect("score", self.scores.len(), rows)?;
        if !self.ownership.is_empty() {
            expect("ownership", self.ownership.len(), rows * hw)?;
        }
        Ok(())
    }

    /// Row `i`'s outputs as slices (ownership empty when the model gave
    /// none).
    ///
    /// # Panics
    /// If `i >= batch_size`, or on buffers that [`NetOutputs::check`]
    /// refuses.
    pub fn row(&self, i: usize) -> NetRow<'_> {
        let hw = self.height * self.width;
        NetRow {
            policy: &self.policy[i * (hw + 1)..(i + 1) * (hw + 1)],
            policy_optimistic: self
                .policy_optimistic
                .as_ref()
                .map(|p| &p[i * (hw + 1)..(i + 1) * (hw + 1)]),
            value_logits: [
                self.value_logits[3 * i],
                self.value_logits[3 * i + 1],
                self.value_logits[3 * i + 2],
            ],
            scores: self.scores[i],
            ownership: if self.ownership.is_empty() {
                &[]
            } else {
                &self.ownership[i * hw..(i + 1) * hw]
            },
        }
    }
}

/// One row of [`NetOutputs`].
#[derive(Debug, Clone, Copy)]
pub struct NetRow<'a> {
    /// Policy logits, board points then pass.
    pub policy: &'a [f32],
    /// Optimistic policy logits, when the model has them.
    pub policy_optimistic: Option<&'a [f32]>,
    /// Win / loss / no-result logits for the side to move.
    pub value_logits: [f32; 3],
    /// Post-processed score outputs.
    pub scores: ScoreOutputs,
    /// Ownership, +1 = side to move; empty when the model gave none.
    pub ownership: &'a [f32],
}

impl NetRow<'_> {
    /// Policy logits mixed with the optimistic policy as KataGo does
    /// (`p + (p_opt - p) * optimism`); the plain policy when the model has
    /// no optimistic head or `optimism` is 0.
    pub fn mixed_policy_logit(&self, index: usize, optimism: f32) -> f32 {
        let p = self.policy[index];
        match self.policy_optimistic {
            Some(opt) if optimism != 0.0 => p + (opt[index] - p) * optimism,
            _ => p,
        }
    }

    /// The game-outcome values as KataGo's `nneval` finishes them, still
    /// from the side to move's perspective. `no_result_possible` is false
    /// unless the ko rule is simple or the scoring is territory (KataGo
    /// then suppresses the no-result logit).
    pub fn values(&self, no_result_possible: bool) -> Values {
        let [w, l, mut nr] = self.value_logits.map(f64::from);
        if !no_result_possible {
            nr -= 100_000.0;
        }
        let max = w.max(l).max(nr);
        let (ew, el) = ((w - max).exp(), (l - max).exp());
        let enr = if no_result_possible {
            (nr - max).exp()
        } else {
            0.0
        };
        let sum = ew + el + enr;
        let (win, loss, no_result) = (ew / sum, el / sum, enr / sum);
        let s = &self.scores;
        let (mean, stdev) = (f64::from(s.score_mean), f64::from(s.score_stdev));
        // Score statistics are conditional on the game having a result;
        // a no-result counts as score 0.
        let keep = 1.0 - no_result;
        Values {
            win,
            loss,
            no_result,
            score_mean: mean * keep,
            score_mean_sq: (mean * mean + stdev * stdev) * keep,
            lead: f64::from(s.lead) * keep,
        }
    }
}

/// Finished outcome values of one row (side to move's perspective).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Values {
    /// P(side to move wins).
    pub win: f64,
    /// P(side to move loses).
    pub loss: f64,
    /// P(no result).
    pub no_result: f64,
    /// Expected score of the side to move.
    pub score_mean: f64,
    /// Expected squared score.
    pub score_mean_sq: f64,
    /// Points the side to move is ahead by.
    pub lead: f64,
}

/// Score-head outputs of one row after KataGo's per-version scaling.
/// Mean, stdev and lead are conditional on the game having a result (see
/// [`NetRow::values`]). Model version 3 is the exception: its mean and
/// lead are the raw score value channel (before the arctan, stdev 0),
/// which only becomes points with the board's size, as the evaluator does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreOutputs {
    /// Expected final score of the side to move.
    pub score_mean: f32,
    /// Standard deviation of the final score.
    pub score_stdev: f32,
    /// Points the side to move is ahead by.
    pub lead: f32,
    /// Expected remaining game-variance time in turns; -1 before model version 9.
    pub var_time_left: f32,
    /// Short-term win/loss error; -1 before model version 9.
    pub shortterm_winloss_error: f32,
    /// Short-term score error; -1 before model version 9.
    pub shortterm_score_error: f32,
}

/// The raw score-head channels of one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct ScoreRaw {
    mean: f32,
    stdev_pre_softplus: f32,
    lead: f32,
    var_time_pre_softplus: f32,
    st_winloss_pre: f32,
    st_score_pre: f32,
}

/// `ln(1 + e^x)` without overflow, as KataGo's `softPlus`.
fn softplus(x: f64) -> f64 {
    if x > 40.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

impl ScoreRaw {
    /// From the 1 (v3), 2 (v4-7), 4 (v8) or 6 (v9+) channels of the score
    /// head; absent channels read 0.
    pub(super) fn from_channels(c: &[f32]) -> ScoreRaw {
        let at = |i: usize| c.get(i).copied().unwrap_or(0.0);
        ScoreRaw {
            mean: at(0),
            stdev_pre_softplus: at(1),
            lead: at(2),
            var_time_pre_softplus: at(3),
            st_winloss_pre: at(4),
            st_score_pre: at(5),
        }
    }

    pub(super) fn post_process(self, version: i32, p: &PostProcessParams) -> ScoreOutputs {
        if version <= 3 {
            // One channel: a score value before its arctan, whose meaning in
            // points depends on the row's board size. Only the evaluator
            // knows that (`postprocess`, as KataGo's nneval does it), so
            // the channel goes on as is, as mean and lead.
            return ScoreOutputs {
                score_mean: self.mean,
                score_stdev: 0.0,
                lead: self.mean,
                var_time_left: -1.0,
                shortterm_winloss_error: -1.0,
                shortterm_score_error: -1.0,
            };
        }
        let score_mean = f64::from(self.mean) * p.score_mean_multiplier;
        let score_stdev = softplus(f64::from(self.stdev_pre_softplus)) * p.score_stdev_multiplier;
        // Versions 4-7 have no lead head: KataGo's backends copy the raw
        // score mean into the lead before scaling it.
        let lead_raw = if version >= 8 { self.lead } else { self.mean };
        let lead = f64::from(lead_raw) * p.lead_multiplier;
        let (var_time_left, st_wl, st_score) = if version >= 9 {
            let var_time =
                softplus(f64::from(self.var_time_pre_softplus)) * p.variance_time_multiplier;
            let (wl, sc) = (f64::from(self.st_winloss_pre), f64::from(self.st_score_pre));
            let (st_wl, st_score) = if version >= 14 {
                let a = softplus(wl * 0.5);
                let b = softplus(sc * 0.5);
                (
                    (a * a * p.shortterm_value_error_multiplier).sqrt(),
                    (b * b * p.shortterm_score_error_multiplier).sqrt(),
                )
            } else if version >= 10 {
                (
                    (softplus(wl) * p.shortterm_value_error_multiplier).sqrt(),
                    (softplus(sc) * p.shortterm_score_error_multiplier).sqrt(),
                )
            } else {
                (softplus(wl), softplus(sc) * 10.0)
            };
            (var_time, st_wl, st_score)
        } else {
            // KataGo reports "absent" for heads a net before version 9 lacks.
            (-1.0, -1.0, -1.0)
        };
        ScoreOutputs {
            score_mean: score_mean as f32,
            score_stdev: score_stdev as f32,
            lead: lead as f32,
            var_time_left: var_time_left as f32,
            shortterm_winloss_error: st_wl as f32,
            shortterm_score_error: st_score as f32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_8_reports_absent_heads() {
        let s = ScoreRaw::from_channels(&[0.1, 0.2, 0.3, 0.4])
            .post_process(8, &PostProcessParams::default());
        assert_eq!(s.var_time_left, -1.0);
        assert_eq!(s.shortterm_winloss_error, -1.0);
        assert_eq!(s.shortterm_score_error, -1.0);
        assert!((s.score_mean - 2.0).abs() < 1e-6);
        assert!((s.lead - 6.0).abs() < 1e-6);
        assert!((f64::from(s.score_stdev) - softplus(0.2f32 as f64) * 20.0).abs() < 1e-5);
    }

    #[test]
    fn versions_4_to_7_take_the_lead_from_the_mean() {
        let s = ScoreRaw::from_channels(&[0.1, 0.2]).post_process(7, &PostProcessParams::default());
        assert!((s.score_mean - 2.0).abs() < 1e-6);
        assert_eq!(s.lead, s.score_mean);
        assert!((f64::from(s.score_stdev) - softplus(0.2f32 as f64) * 20.0).abs() < 1e-5);
        assert_eq!(s.var_time_left, -1.0);
        assert_eq!(s.shortterm_score_error, -1.0);
        let v3 = ScoreRaw::from_channels(&[0.7]).post_process(3, &PostProcessParams::default());
        assert_eq!((v3.score_mean, v3.lead, v3.score_stdev), (0.7, 0.7, 0.0));
    }

    #[test]
    fn shortterm_errors_follow_the_version() {
        let p = PostProcessParams::default();
        let raw = ScoreRaw::from_channels(&[0.0, 0.0, 0.0, 1.0, 0.5, -0.5]);
        let v9 = raw.post_process(9, &p);
        let v10 = raw.post_process(10, &p);
        let v14 = raw.post_process(14, &p);
        assert!((f64::from(v9.shortterm_winloss_error) - softplus(0.5)).abs() < 1e-6);
        assert!((f64::from(v9.shortterm_score_error) - softplus(-0.5) * 10.0).abs() < 1e-5);
        assert!(
            (f64::from(v10.shortterm_winloss_error) - (softplus(0.5) * 0.25).sqrt()).abs() < 1e-6
        );
        assert!((f64::from(v14.shortterm_winloss_error) - softplus(0.25) * 0.5).abs() < 1e-6);
        assert!((f64::from(v14.var_time_left) - softplus(1.0) * 40.0).abs() < 1e-4);
    }

    #[test]
    fn no_result_is_suppressed_when_impossible() {
        let outs = NetOutputs {
            batch_size: 1,
            height: 1,
            width: 1,
            policy: vec![0.0, 0.0],
            policy_optimistic: None,
            value_logits: vec![1.0, 0.0, 3.0],
            scores: vec![ScoreOutputs {
                score_mean: 2.0,
                score_stdev: 1.0,
                lead: 1.5,
                var_time_left: -1.0,
                shortterm_winloss_error: -1.0,
                shortterm_score_error: -1.0,
            }],
            ownership: vec![0.0],
        };
        let row = outs.row(0);
        let without = row.values(false);
        assert_eq!(without.no_result, 0.0);
        assert!((without.win + without.loss - 1.0).abs() < 1e-12);
        assert!((without.score_mean - 2.0).abs() < 1e-12);
        assert!((without.score_mean_sq - 5.0).abs() < 1e-12);
        let with = row.values(true);
        assert!(with.no_result > 0.8);
        assert!((with.score_mean - 2.0 * (1.0 - with.no_result)).abs() < 1e-12);
    }
}
