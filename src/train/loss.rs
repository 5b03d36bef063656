//! Every loss term of KataGo's `metrics_pytorch.py` (version-15 net, no
//! intermediate head, no q-value head), with KataGo's weights and the per-row
//! weights from `globalTargetsNC`. Losses are summed over the batch, as
//! KataGo sums them, so the learning rate is per sample.

use std::collections::BTreeMap;

use tch::{Kind, Tensor};

use super::batch::Batch;
use super::model::NetOutput;

/// The loss scales `train.py` passes to the metrics (its flag defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct LossScales {
    /// `-soft-policy-weight-scale` (8.0).
    pub soft_policy_weight_scale: f64,
    /// `-value-loss-scale` (0.6).
    pub value_loss_scale: f64,
    /// `-td-value-loss-scales` (0.6,0.6,0.6).
    pub td_value_loss_scales: [f64; 3],
    /// `-seki-loss-scale` (1.0).
    pub seki_loss_scale: f64,
    /// `-variance-time-loss-scale` (1.0).
    pub variance_time_loss_scale: f64,
    /// `-meta-kata-only-soft-policy` (off): the soft policy losses count
    /// only the rows whose metadata says KataGo played them (metadata input
    /// [`KATAGO_SOURCE_INPUT`], the source one-hot's first entry), so human
    /// games teach the sharp policy only. Needs rows with metadata.
    pub meta_kata_only_soft_policy: bool,
}

/// The metadata input that is 1 on rows of KataGo's own games (the source
/// one-hot's "KataGo" entry in `SGFMetadata::fillMetadataRow`).
pub const KATAGO_SOURCE_INPUT: i64 = 151;

impl Default for LossScales {
    fn default() -> Self {
        LossScales {
            soft_policy_weight_scale: 8.0,
            value_loss_scale: 0.6,
            td_value_loss_scales: [0.6, 0.6, 0.6],
            seki_loss_scale: 1.0,
            variance_time_loss_scale: 1.0,
            meta_kata_only_soft_policy: false,
        }
    }
}

/// State the losses carry between batches: the seki loss's moving average
/// of the unowned proportion.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LossState {
    /// `moving_unowned_proportion_sum`.
    pub moving_unowned_proportion_sum: f64,
    /// `moving_unowned_proportion_weight`.
    pub moving_unowned_proportion_weight: f64,
}

/// One batch's loss terms by KataGo's metric names (`p0loss_sum`, ...) and
/// the total `loss_sum`, which keeps its graph for backward.
pub struct Losses {
    /// The training objective.
    pub loss_sum: Tensor,
    /// Every term and statistic, detached, by KataGo's name.
    pub terms: BTreeMap<&'static str, Tensor>,
}

impl Losses {
    /// The terms as plain numbers (one device sync and one copy for all).
    pub fn values(&self) -> BTreeMap<&'static str, f64> {
        let _g = tch::no_grad_guard();
        let mut keys: Vec<&'static str> = self.terms.keys().copied().collect();
        let mut all: Vec<Tensor> = self
            .terms
            .values()
            .map(|v| v.to_kind(Kind::Double).reshape([1]))
            .collect();
        keys.push("loss_sum");
        all.push(self.loss_sum.detach().to_kind(Kind::Double).reshape([1]));
        let flat = Tensor::cat(&all, 0).to_device(tch::Device::Cpu);
        let nums = Vec::<f64>::try_from(&flat).unwrap_or_else(|_| vec![f64::NAN; keys.len()]);
        keys.into_iter().zip(nums).collect()
    }
}

fn cross_entropy(pred_logits: &Tensor, target: &Tensor, dim: i64) -> Tensor {
    -(target * pred_logits.log_softmax(dim, Kind::Float)).sum_dim_intlist(
        [dim].as_slice(),
        false,
        Kind::Float,
    )
}

fn huber(x: &Tensor, y: &Tensor, delta: f64) -> Tensor {
    let d = (x - y).abs();
    let big = (&d - delta) * delta + 0.5 * delta * delta;
    let small = &d * &d * 0.5;
    big.where_self(&d.gt(delta), &small)
}

fn sum_dims(t: &Tensor, dims: &[i64]) -> Tensor {
    t.sum_dim_intlist(dims, false, Kind::Float)
}

/// The targets of one batch, sliced out of its tensors under KataGo's names
/// (`target_*`), plus the board mask every spatial loss is averaged over.
struct Targets {
    n: i64,
    area: i64,
    mask: Tensor,
    mask_sum_hw: Tensor,
    policy_player: Tensor,
    policy_opponent: Tensor,
    policy_player_soft: Tensor,
    policy_opponent_soft: Tensor,
    weight_policy_player: Tensor,
    weight_policy_opponent: Tensor,
    /// The soft policies' weights: the above, or with
    /// [`LossScales::meta_kata_only_soft_policy`] those times the rows'
    /// KataGo-source input.
    weight_policy_player_soft: Tensor,
    weight_policy_opponent_soft: Tensor,
    value: Tensor,
    scoremean: Tensor,
    td_value: Tensor,
    td_score: Tensor,
    lead: Tensor,
    variance_time: Tensor,
    global_weight: Tensor,
    weight_ownership: Tensor,
    weight_lead: Tensor,
    weight_futurepos: Tensor,
    weight_scoring: Tensor,
    weight_value: Tensor,
    weight_td_value: Tensor,
    score_distribution: Tensor,
    ownership: Tensor,
    seki: Tensor,
    futurepos: Tensor,
    scoring: Tensor,
}

impl Targets {
    /// Panics if `kata_only_soft` is set and the batch has no metadata:
    /// the trainer checks its rows first.
    fn new(batch: &Batch, kata_only_soft: bool) -> Targets {
        let n = batch.binary_input.size()[0];
        let h = batch.binary_input.size()[2];
        let w = batch.binary_input.size()[3];
        let area = h * w;
        let mask = batch.binary_input.select(1, 0).contiguous();
        let mask_sum_hw = sum_dims(&mask, &[1, 2]);
        let policymask = Tensor::cat(
            &[
                mask.view([n, area]),
                Tensor::ones([n, 1], (Kind::Float, mask.device())),
            ],
            1,
        );

        let tp = &batch.policy_targets;
        let norm = |t: Tensor| -> Tensor {
            let s = t.sum_dim_intlist([1i64].as_slice(), true, Kind::Float);
            t / s
        };
        let policy_player = norm(tp.select(1, 0));
        let policy_opponent = norm(tp.select(1, 1));
        let soften = |t: &Tensor| -> Tensor {
            let s = ((t + 1e-7) * &policymask).pow_tensor_scalar(0.25);
            let sum = s.sum_dim_intlist([1i64].as_slice(), true, Kind::Float);
            s / sum
        };
        let policy_player_soft = soften(&policy_player);
        let policy_opponent_soft = soften(&policy_opponent);

        let g = &batch.global_targets;
        let col = |i: i64| g.select(1, i);
        let vt = &batch.value_targets;
        let (weight_policy_player, weight_policy_opponent) = (col(26), col(28));
        let (weight_policy_player_soft, weight_policy_opponent_soft) = if kata_only_soft {
            let Some(meta) = &batch.meta_input else {
                panic!("-meta-kata-only-soft-policy on a batch without metadata (rows unchecked)");
            };
            let katago = meta.select(1, KATAGO_SOURCE_INPUT);
            (
                &weight_policy_player * &katago,
                &weight_policy_opponent * &katago,
            )
        } else {
            (
                weight_policy_player.shallow_clone(),
                weight_policy_opponent.shallow_clone(),
            )
        };
        Targets {
            n,
            area,
            policy_player,
            policy_opponent,
            policy_player_soft,
            policy_opponent_soft,
            weight_policy_player,
            weight_policy_opponent,
            weight_policy_player_soft,
            weight_policy_opponent_soft,
            value: g.narrow(1, 0, 3),
            scoremean: col(3),
            td_value: Tensor::stack(
                &[g.narrow(1, 4, 3), g.narrow(1, 8, 3), g.narrow(1, 12, 3)],
                1,
            ),
            td_score: Tensor::cat(
                &[g.narrow(1, 7, 1), g.narrow(1, 11, 1), g.narrow(1, 15, 1)],
                1,
            ),
            lead: col(21),
            variance_time: col(22),
            global_weight: col(25),
            weight_ownership: col(27),
            weight_lead: col(29),
            weight_futurepos: col(33),
            weight_scoring: col(34),
            weight_value: col(35).neg() + 1.0,
            weight_td_value: col(24).neg() + 1.0,
            score_distribution: &batch.score_distr / 100.0,
            ownership: vt.select(1, 0),
            seki: vt.select(1, 1),
            futurepos: vt.narrow(1, 2, 2),
            scoring: vt.select(1, 4) / 120.0,
            mask,
            mask_sum_hw,
        }
    }
}

/// Every loss term and statistic of one batch, before weighting.
struct Terms {
    policy_player: Tensor,
    policy_opponent: Tensor,
    policy_player_soft: Tensor,
    policy_opponent_soft: Tensor,
    longopt: Tensor,
    longopt_weight_sum: Tensor,
    shortopt: Tensor,
    shortopt_weight_sum: Tensor,
    value: Tensor,
    td_value: [Tensor; 3],
    td_score: Tensor,
    ownership: Tensor,
    scoring: Tensor,
    futurepos: Tensor,
    seki: Tensor,
    seki_weight_scale: f64,
    scoremean: Tensor,
    sb_cdf: Tensor,
    sb_pdf: Tensor,
    scorestdev: Tensor,
    lead: Tensor,
    vtime: Tensor,
    st_value_err: Tensor,
    st_score_err: Tensor,
}

/// Computes every term (KataGo's `metrics_dict_batchwise_single_heads_output`).
/// With `is_training`, the seki moving average in `state` is updated as
/// KataGo's training step does.
pub fn compute_losses(
    out: &NetOutput,
    batch: &Batch,
    scales: &LossScales,
    state: &mut LossState,
    is_training: bool,
) -> Losses {
    let t = Targets::new(batch, scales.meta_kata_only_soft_policy);
    let (w_long, w_short) = optimistic_policy_weights(out, &batch.global_targets, &t);
    let gw = &t.global_weight;
    let policy = policy_losses(out, &t, &w_long, &w_short);
    let [policy_player, policy_opponent, policy_player_soft, policy_opponent_soft, longopt, shortopt] =
        policy;
    let (value, td_value, td_score) = value_losses(out, &t);
    let (ownership, scoring, futurepos) = board_losses(out, &t);
    let (seki, seki_weight_scale) = seki_loss(out, &t, state, is_training);
    let (scoremean, sb_cdf, sb_pdf, scorestdev) = score_losses(out, batch, &t);
    let (lead, vtime, st_value_err, st_score_err) = auxiliary_losses(out, &t);
    let terms = Terms {
        policy_player,
        policy_opponent,
        policy_player_soft,
        policy_opponent_soft,
        longopt,
        longopt_weight_sum: (gw * &w_long).sum(Kind::Float),
        shortopt,
        shortopt_weight_sum: (gw * &w_short).sum(Kind::Float),
        value,
        td_value,
        td_score,
        ownership,
        scoring,
        futurepos,
        seki,
        seki_weight_scale,
        scoremean,
        sb_cdf,
        sb_pdf,
        scorestdev,
        lead,
        vtime,
        st_value_err,
        st_score_err,
    };
    let loss_sum = weighted_sum(&terms, scales);
    Losses {
        loss_sum,
        terms: named_terms(out, &t, &terms),
    }
}

/// The per-row weights of the long- and short-term optimistic policies:
/// rows where the game went better than the net expected count more.
fn optimistic_policy_weights(out: &NetOutput, g: &Tensor, t: &Targets) -> (Tensor, Tensor) {
    let col = |i: i64| g.select(1, i);
    // Long-term optimistic policy weight.
    let win_squared = (col(0) + col(2) * 0.5).square();
    let long_excess = (col(3) - out.pred_scoremean.detach())
        / (out.pred_scorestdev.detach().square() + 0.25).sqrt();
    let w_long = (win_squared + ((long_excess - 1.5) * 3.0).sigmoid()).clamp(0.0, 1.0)
        * &t.weight_policy_player
        * &t.weight_ownership;

    // Short-term optimistic policy weight.
    let st_actual = col(12) - col(13);
    let st_pred = out
        .td_value_logits
        .select(1, 2)
        .detach()
        .softmax(1, Kind::Float);
    let st_pred = st_pred.select(1, 0) - st_pred.select(1, 1);
    let st_value_excess =
        (st_actual - st_pred) / (out.pred_shortterm_value_error.detach() + 0.0001).sqrt();
    let st_score_excess = (col(15) - out.pred_td_score.select(1, 2).detach())
        / (out.pred_shortterm_score_error.detach() + 0.25).sqrt();
    let w_short = (((st_value_excess - 1.5) * 3.0).sigmoid()
        + ((st_score_excess - 1.5) * 3.0).sigmoid())
    .clamp(0.0, 1.0)
        * &t.weight_policy_player
        * &t.weight_ownership;
    (w_long, w_short)
}

/// The six policy losses: player, opponent, their soft versions, long- and
/// short-term optimistic.
fn policy_losses(out: &NetOutput, t: &Targets, w_long: &Tensor, w_short: &Tensor) -> [Tensor; 6] {
    // Each is KataGo's weighted cross-entropy, in one pass over the
    // `[N, 6, moves]` logits instead of six: a handful of operators forward
    // and backward where there were some sixty.
    let policy_targets = Tensor::stack(
        &[
            &t.policy_player,
            &t.policy_opponent,
            &t.policy_player_soft,
            &t.policy_opponent_soft,
            &t.policy_player,
            &t.policy_player,
        ],
        1,
    );
    let policy_ce = cross_entropy(&out.policy_logits, &policy_targets, 2);
    let policy_coeffs = Tensor::from_slice(&[1.0f32, 0.15, 1.0, 0.15, 1.0, 1.0])
        .to_device(policy_ce.device())
        .view([1, 6]);
    let policy_weights = Tensor::stack(
        &[
            &t.weight_policy_player,
            &t.weight_policy_opponent,
            &t.weight_policy_player_soft,
            &t.weight_policy_opponent_soft,
            w_long,
            w_short,
        ],
        1,
    ) * t.global_weight.unsqueeze(1)
        * policy_coeffs;
    let policy_losses =
        (policy_ce * policy_weights).sum_dim_intlist([0i64].as_slice(), false, Kind::Float);
    std::array::from_fn(|head| policy_losses.select(0, head as i64))
}

/// The game-outcome loss, the three TD-value losses and the TD-score loss.
fn value_losses(out: &NetOutput, t: &Targets) -> (Tensor, [Tensor; 3], Tensor) {
    let gw = &t.global_weight;
    let loss_value = (cross_entropy(&out.value_logits, &t.value, 1) * 1.2 * gw * &t.weight_value)
        .sum(Kind::Float);

    let td_ce = cross_entropy(&out.td_value_logits, &t.td_value, 2)
        - cross_entropy(&(&t.td_value + 1.0e-30).log(), &t.td_value, 2);
    let td = td_ce * 1.2 * gw.unsqueeze(1) * t.weight_td_value.unsqueeze(1);
    let loss_td_value = std::array::from_fn(|i| td.select(1, i as i64).sum(Kind::Float));

    let loss_td_score = (sum_dims(&huber(&out.pred_td_score, &t.td_score, 12.0), &[1])
        * 0.0004
        * gw
        * &t.weight_ownership)
        .sum(Kind::Float);
    (loss_value, loss_td_value, loss_td_score)
}

/// The per-point losses: ownership, scoring and future position.
fn board_losses(out: &NetOutput, t: &Targets) -> (Tensor, Tensor, Tensor) {
    let (n, area, mask, gw) = (t.n, t.area, &t.mask, &t.global_weight);
    let mask_flat = mask.view([n, area]);
    let own_logits = out.ownership_pretanh.view([n, area]) * 2.0;
    let own_target = (t.ownership.view([n, area]) + 1.0) / 2.0;
    let own_bce = own_logits.binary_cross_entropy_with_logits::<Tensor>(
        &own_target,
        None,
        None,
        tch::Reduction::None,
    );
    let loss_ownership =
        (sum_dims(&(own_bce * &mask_flat), &[1]) / &t.mask_sum_hw * 1.5 * gw * &t.weight_ownership)
            .sum(Kind::Float);

    let sc = sum_dims(
        &((out.pred_scoring.squeeze_dim(1) - &t.scoring).square() * mask),
        &[1, 2],
    ) / &t.mask_sum_hw;
    let sc = ((sc * 0.5 + 1.0).sqrt() - 1.0) * 4.0;
    let loss_scoring = (sc * gw * &t.weight_scoring).sum(Kind::Float);

    let fp = (out.futurepos_pretanh.tanh() - &t.futurepos).square() * mask.unsqueeze(1);
    let fpw = Tensor::from_slice(&[1.0f32, 0.25])
        .to_device(fp.device())
        .view([1, 2, 1, 1]);
    let fp = sum_dims(&(fp * fpw), &[1, 2, 3]) / t.mask_sum_hw.sqrt();
    let loss_futurepos = (fp * 0.25 * gw * &t.weight_futurepos).sum(Kind::Float);
    (loss_ownership, loss_scoring, loss_futurepos)
}

/// The seki loss and its weight scale; in training the scale follows the
/// moving average of the unowned proportion kept in `state`.
fn seki_loss(
    out: &NetOutput,
    t: &Targets,
    state: &mut LossState,
    is_training: bool,
) -> (Tensor, f64) {
    let (mask, mask_sum_hw) = (&t.mask, &t.mask_sum_hw);
    let owned_target = t.ownership.square();
    let unowned_target = owned_target.neg() + 1.0;
    let unowned_proportion = sum_dims(&(&unowned_target * mask), &[1, 2]) / (mask_sum_hw + 1.0);
    let unowned_proportion = (unowned_proportion * &t.weight_ownership).mean(Kind::Float);
    let seki_weight_scale = if is_training {
        state.moving_unowned_proportion_sum =
            state.moving_unowned_proportion_sum * 0.998 + unowned_proportion.double_value(&[]);
        state.moving_unowned_proportion_weight =
            state.moving_unowned_proportion_weight * 0.998 + 1.0;
        let moving = state.moving_unowned_proportion_sum / state.moving_unowned_proportion_weight;
        8.0 * 0.005 / (0.005 + moving)
    } else {
        7.0
    };
    let sign_pred = out.seki_logits.narrow(1, 0, 3);
    let sign_target = Tensor::stack(
        &[
            t.seki.square().neg() + 1.0,
            t.seki.relu(),
            (-&t.seki).relu(),
        ],
        1,
    );
    let loss_sign = sum_dims(
        &(cross_entropy(&sign_pred, &sign_target, 1) * mask),
        &[1, 2],
    );
    let neutral_pred = Tensor::stack(&[out.seki_logits.select(1, 3), t.ownership.zeros_like()], 1);
    let neutral_target = Tensor::stack(&[unowned_target, owned_target], 1);
    let loss_neutral = sum_dims(
        &(cross_entropy(&neutral_pred, &neutral_target, 1) * mask),
        &[1, 2],
    );
    let sk = (loss_sign + loss_neutral * 0.5) / mask_sum_hw;
    let loss_seki =
        (sk * &t.global_weight * seki_weight_scale * &t.weight_ownership).sum(Kind::Float);
    (loss_seki, seki_weight_scale)
}

/// The score losses: mean, belief CDF and PDF, and the stdev regulariser.
fn score_losses(out: &NetOutput, batch: &Batch, t: &Targets) -> (Tensor, Tensor, Tensor, Tensor) {
    let gw = &t.global_weight;
    let loss_scoremean =
        (huber(&out.pred_scoremean, &t.scoremean, 12.0) * 0.0015 * gw * &t.weight_ownership)
            .sum(Kind::Float);

    let sb = &out.scorebelief_logits;
    let probs = sb.softmax(1, Kind::Float);
    let pred_cdf = probs.cumsum(1, Kind::Float);
    let target_cdf = t.score_distribution.cumsum(1, Kind::Float);
    let loss_sb_cdf =
        (sum_dims(&(pred_cdf - target_cdf).square(), &[1]) * 0.02 * gw * &t.weight_ownership)
            .sum(Kind::Float);
    let loss_sb_pdf =
        (cross_entropy(sb, &t.score_distribution, 1) * 0.02 * gw * &t.weight_ownership)
            .sum(Kind::Float);

    let offs = out_score_offsets(batch);
    let expected = (&probs * &offs).sum_dim_intlist([1i64].as_slice(), true, Kind::Float);
    let stdev = ((&probs * (&offs - expected).square()).sum_dim_intlist(
        [1i64].as_slice(),
        false,
        Kind::Float,
    ) + 0.001)
        .sqrt();
    let loss_scorestdev = (huber(&out.pred_scorestdev, &stdev, 10.0) * 0.001 * gw).sum(Kind::Float);
    (loss_scoremean, loss_sb_cdf, loss_sb_pdf, loss_scorestdev)
}

/// The lead and variance-time losses and the two short-term error losses.
fn auxiliary_losses(out: &NetOutput, t: &Targets) -> (Tensor, Tensor, Tensor, Tensor) {
    let gw = &t.global_weight;
    let loss_lead =
        (huber(&out.pred_lead, &t.lead, 8.0) * 0.006 * gw * &t.weight_lead).sum(Kind::Float);
    let loss_vtime = (huber(&out.pred_variance_time, &(&t.variance_time + 1.0e-5), 50.0)
        * 0.0003
        * gw
        * &t.weight_ownership)
        .sum(Kind::Float);

    let tdp = out.td_value_logits.select(1, 2).softmax(1, Kind::Float);
    let predvalue = (tdp.select(1, 0) - tdp.select(1, 1)).detach();
    let realvalue = t.td_value.select(1, 2).select(1, 0) - t.td_value.select(1, 2).select(1, 1);
    let sqerr = (predvalue - realvalue).square() + 1.0e-8;
    let loss_st_value_err =
        (huber(&out.pred_shortterm_value_error, &sqerr, 0.4) * 2.0 * gw * &t.weight_ownership)
            .sum(Kind::Float);
    let predscore = out.pred_td_score.select(1, 2).detach();
    let realscore = t.td_score.select(1, 2);
    let sqerr = (predscore - realscore).square() + 1.0e-4;
    let loss_st_score_err = (huber(&out.pred_shortterm_score_error, &sqerr, 100.0)
        * 0.00002
        * gw
        * &t.weight_ownership)
        .sum(Kind::Float);
    (loss_lead, loss_vtime, loss_st_value_err, loss_st_score_err)
}

/// The training objective: the terms with KataGo's weights and the scales,
/// summed in KataGo's order.
fn weighted_sum(l: &Terms, scales: &LossScales) -> Tensor {
    &l.policy_player * 0.93
        + &l.policy_opponent
        + &l.policy_player_soft * scales.soft_policy_weight_scale
        + &l.policy_opponent_soft * scales.soft_policy_weight_scale
        + &l.longopt * 0.1
        + &l.shortopt * 0.2
        + &l.value * scales.value_loss_scale
        + &l.td_value[0] * scales.td_value_loss_scales[0]
        + &l.td_value[1] * scales.td_value_loss_scales[1]
        + &l.td_value[2] * scales.td_value_loss_scales[2]
        + &l.td_score
        + &l.ownership
        + &l.scoring * 0.25
        + &l.futurepos
        + &l.seki * scales.seki_loss_scale
        + &l.scoremean
        + &l.sb_cdf
        + &l.sb_pdf
        + &l.scorestdev
        + &l.lead
        + &l.vtime * scales.variance_time_loss_scale
        + &l.st_value_err
        + &l.st_score_err
}

/// Every term, detached, by KataGo's metric name, with the batch statistics
/// (policy accuracy, value square, target entropies, weight sums).
fn named_terms(out: &NetOutput, t: &Targets, l: &Terms) -> BTreeMap<&'static str, Tensor> {
    let gw = &t.global_weight;
    let zero = l.policy_player.zeros_like();
    let pacc1 = (gw
        * &t.weight_policy_player
        * out
            .policy_logits
            .select(1, 0)
            .argmax(1, false)
            .eq_tensor(&t.policy_player.argmax(1, false))
            .to_kind(Kind::Float))
    .sum(Kind::Float);
    let vprobs = out.value_logits.softmax(1, Kind::Float);
    let vsquare = (gw * (vprobs.select(1, 0) - vprobs.select(1, 1)).square()).sum(Kind::Float);
    let entropy = |p: &Tensor| -> Tensor {
        (gw * &t.weight_policy_player
            * -(p * (p + 1e-30).log()).sum_dim_intlist([-1i64].as_slice(), false, Kind::Float))
        .sum(Kind::Float)
    };
    let wsum = gw.sum(Kind::Float);

    let mut terms: BTreeMap<&'static str, Tensor> = BTreeMap::new();
    let mut put = |k: &'static str, v: &Tensor| {
        terms.insert(k, v.detach());
    };
    put("p0loss_sum", &l.policy_player);
    put("p1loss_sum", &l.policy_opponent);
    put("p0softloss_sum", &l.policy_player_soft);
    put("p1softloss_sum", &l.policy_opponent_soft);
    put("p0lopt_sum", &l.longopt);
    put("p0loptw_sum", &l.longopt_weight_sum);
    put("p0sopt_sum", &l.shortopt);
    put("p0soptw_sum", &l.shortopt_weight_sum);
    put("vloss_sum", &l.value);
    put("tdvloss1_sum", &l.td_value[0]);
    put("tdvloss2_sum", &l.td_value[1]);
    put("tdvloss3_sum", &l.td_value[2]);
    put("tdsloss_sum", &l.td_score);
    put("oloss_sum", &l.ownership);
    put("sloss_sum", &l.scoring);
    put("fploss_sum", &l.futurepos);
    put("skloss_sum", &l.seki);
    put("smloss_sum", &l.scoremean);
    put("sbcdfloss_sum", &l.sb_cdf);
    put("sbpdfloss_sum", &l.sb_pdf);
    put("sdregloss_sum", &l.scorestdev);
    put("leadloss_sum", &l.lead);
    put("vtimeloss_sum", &l.vtime);
    put("evstloss_sum", &l.st_value_err);
    put("esstloss_sum", &l.st_score_err);
    put("qwlloss_sum", &zero);
    put("qscloss_sum", &zero);
    put("pacc1_sum", &pacc1);
    put("vsquare_sum", &vsquare);
    put("ptentr_sum", &entropy(&t.policy_player));
    put("ptsoftentr_sum", &entropy(&t.policy_player_soft));
    put("wsum", &wsum);
    put("sekiweightscale_sum", &(&wsum * l.seki_weight_scale));
    put("nsamp", &Tensor::from(t.n as f32).to_device(wsum.device()));
    terms
}

/// `score_belief_offset_vector` for the batch's board length.
fn out_score_offsets(batch: &Batch) -> Tensor {
    let pos_len = batch.binary_input.size()[2];
    let mid = pos_len * pos_len + super::model::EXTRA_SCORE_DISTR_RADIUS;
    let v: Vec<f32> = (0..2 * mid).map(|i| (i - mid) as f32 + 0.5).collect();
    Tensor::from_slice(&v)
        .to_device(batch.binary_input.device())
        .view([1, -1])
}
