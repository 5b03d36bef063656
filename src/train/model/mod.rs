//! The trainable KataGo convnet (KataGo's `model_pytorch.py`, fixup
//! normalisation, version 15) on a `tch` VarStore.
//!
//! Every parameter is registered under KataGo's own state_dict name
//! (`blocks.0.normactconv1.norm.beta`, `policy_head.conv1p.weight`, ...) and
//! in torch's layout, so weights move between this module and KataGo's
//! trainer by name, and [`super::export`] can follow KataGo's exporter.
//!
//! Files: `init` (parameter registration, KataGo's init), `blocks` (norms,
//! pooling, residual and nested-bottleneck blocks), `heads` (policy and
//! value heads and their outputs), `meta` (the SGF metadata encoder of the
//! `-meta` kinds), this file (the net and its weights).

use std::collections::BTreeMap;

use tch::{nn, Device, Kind, Tensor};

use super::config::{BlockKind, ModelConfig, NormKind, TrunkTip};
use super::precision::Precision;
use super::TrainError;

/// Extra score-distribution bins on each side (`EXTRA_SCORE_DISTR_RADIUS`).
pub const EXTRA_SCORE_DISTR_RADIUS: i64 = 60;

mod blocks;
mod heads;
mod init;
mod masks;
mod meta;
mod transformer;

pub use heads::OUTPUT_MULTIPLIERS;
pub use init::{ParamGroup, ParamInfo};
pub use masks::Masks;
pub use meta::{MASKED_FEATURE as META_MASKED_FEATURE, OUT_SCALE as META_OUT_SCALE};

use blocks::{build_trunk, trunk_conv, Norm, TrunkBlock};
use heads::{HeadConvs, PolicyHead, ValueHead};
use init::{act, gain, init_std, Builder};
use masks::cast;
use meta::MetaEncoder;
use transformer::RmsTip;

/// The net's outputs after KataGo's `postprocess_output`.
pub struct NetOutput {
    /// `[N, 6, pos_len²+1]`: player, opponent, soft player, soft opponent,
    /// long-term optimistic, short-term optimistic.
    pub policy_logits: Tensor,
    /// `[N, 3]`: win, loss, no result.
    pub value_logits: Tensor,
    /// `[N, 3, 3]`: {long, mid, short} x {win, loss, no result}.
    pub td_value_logits: Tensor,
    /// `[N, 3]`.
    pub pred_td_score: Tensor,
    /// `[N, 1, H, W]`.
    pub ownership_pretanh: Tensor,
    /// `[N, 1, H, W]`.
    pub pred_scoring: Tensor,
    /// `[N, 2, H, W]`.
    pub futurepos_pretanh: Tensor,
    /// `[N, 4, H, W]`.
    pub seki_logits: Tensor,
    /// `[N]`.
    pub pred_scoremean: Tensor,
    /// `[N]`.
    pub pred_scorestdev: Tensor,
    /// `[N]`.
    pub pred_lead: Tensor,
    /// `[N]`.
    pub pred_variance_time: Tensor,
    /// `[N]`.
    pub pred_shortterm_value_error: Tensor,
    /// `[N]`.
    pub pred_shortterm_score_error: Tensor,
    /// `[N, 2·(pos_len² + 60)]` log-probabilities.
    pub scorebelief_logits: Tensor,
}

/// The trunk's last norm ([`TrunkTip`]).
enum TipNorm {
    Norm(Norm),
    Rms(RmsTip),
}

/// What [`TrainNet::new`] builds: version 15 without transformer blocks or
/// an RMSNorm tip, version 17 with them, and transformer settings exactly
/// when there are transformer blocks.
fn validate(config: &ModelConfig) -> Result<(), TrainError> {
    let has_tf = config.blocks.iter().any(|k| {
        matches!(
            k,
            BlockKind::Attention | BlockKind::FfnSwiGlu | BlockKind::BottleNestTransformer(_)
        )
    });
    if has_tf != config.transformer.is_some() {
        return Err(TrainError::Config(format!(
            "{}: transformer settings are given exactly for nets with transformer blocks",
            config.name
        )));
    }
    let want = if has_tf || config.tip != TrunkTip::Norm {
        17
    } else {
        15
    };
    if config.version != want {
        return Err(TrainError::Config(format!(
            "{}: model version {} (this trainer builds version {want} for this shape)",
            config.name, config.version
        )));
    }
    if let Some(t) = &config.transformer {
        let widths = config.blocks.iter().map(|k| match k {
            BlockKind::BottleNestTransformer(_) => config.mid,
            _ => config.trunk,
        });
        for c in widths {
            let (q, v) = t.head_dims(c);
            if t.heads <= 0 || t.kv_heads <= 0 || t.heads % t.kv_heads != 0 || q % 4 != 0 || v <= 0
            {
                return Err(TrainError::Config(format!(
                    "{}: {} heads over {} key/value heads with head widths {q}/{v} on {c} channels (heads must divide evenly, query width a multiple of 4)",
                    config.name, t.heads, t.kv_heads
                )));
            }
        }
    }
    Ok(())
}

/// The trainable network.
pub struct TrainNet {
    /// The variables, named as KataGo's state_dict.
    pub vs: nn::VarStore,
    /// Its config.
    pub config: ModelConfig,
    /// Data board side.
    pub pos_len: i64,
    /// Every parameter in registration order (KataGo's `add_reg_dict` order).
    pub params: Vec<ParamInfo>,
    /// The trunk's arithmetic (fp32 unless training with `-use-fp16` or
    /// `-use-bf16`; the heads are always fp32).
    pub precision: Precision,
    conv_spatial: Tensor,
    linear_global: Tensor,
    meta: Option<MetaEncoder>,
    blocks: Vec<TrunkBlock>,
    norm_trunkfinal: TipNorm,
    policy: PolicyHead,
    value: ValueHead,
}

impl std::fmt::Debug for TrainNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainNet")
            .field("config", &self.config.name)
            .field("params", &self.params.len())
            .finish()
    }
}

impl TrainNet {
    /// A freshly initialised net (KataGo's `Model.initialize()` for fixup;
    /// with [`NormKind::ScaleBias`] the extra gammas start at 0, a scale of 1).
    pub fn new(config: &ModelConfig, pos_len: i64, device: Device) -> Result<TrainNet, TrainError> {
        validate(config)?;
        let vs = nn::VarStore::new(device);
        let mut b = Builder {
            root: vs.root(),
            params: Vec::new(),
            scale_everywhere: config.norm == NormKind::ScaleBias,
            activation: config.activation,
        };
        let act_gain = gain(config.activation);
        let c = config.trunk;
        let conv_spatial = b.param(
            "conv_spatial.weight",
            &[c, 22, config.initial_conv, config.initial_conv],
            init_std(
                act_gain,
                0.8,
                22 * config.initial_conv * config.initial_conv,
            ),
            ParamGroup::Input,
        );
        let linear_global = b.param(
            "linear_global.weight",
            &[c, 19],
            init_std(act_gain, 0.6, 19),
            ParamGroup::Input,
        );
        let meta = config
            .meta_encoder
            .map(|internal| MetaEncoder::new(&mut b, internal, c, device));
        let blocks = build_trunk(&mut b, config);
        let norm_trunkfinal = match config.tip {
            TrunkTip::Norm => TipNorm::Norm(Norm::new(&mut b, "norm_trunkfinal", c, false, true)),
            TrunkTip::RmsNorm { spatial } => {
                TipNorm::Rms(RmsTip::new(&mut b, "norm_trunkfinal", c, spatial))
            }
        };
        let policy = PolicyHead::new(&mut b, config);
        let value = ValueHead::new(&mut b, config, pos_len, device);
        let params = b.params;
        Ok(TrainNet {
            config: config.clone(),
            pos_len,
            params,
            precision: Precision::default(),
            conv_spatial,
            linear_global,
            meta,
            blocks,
            norm_trunkfinal,
            policy,
            value,
            vs,
        })
    }

    /// The score-belief bin centres (`score_belief_offset_vector`).
    pub fn score_offset_vector(&self) -> &Tensor {
        &self.value.score_offset
    }

    /// The parameters' gradients (shallow handles: writing to them writes
    /// the gradients), leaving out parameters that have none yet.
    pub fn grads(&self) -> Vec<Tensor> {
        self.params
            .iter()
            .map(|p| p.tensor.grad())
            .filter(|g| g.defined())
            .collect()
    }

    /// Number of learned scalars.
    pub fn num_parameters(&self) -> i64 {
        self.params.iter().map(|p| p.tensor.numel() as i64).sum()
    }

    /// Parameters by KataGo name.
    pub fn param_map(&self) -> BTreeMap<&str, &Tensor> {
        self.params
            .iter()
            .map(|p| (p.name.as_str(), &p.tensor))
            .collect()
    }

    /// Copies named tensors into the parameters. Every parameter must be
    /// present with the right shape; unknown names are an error too.
    pub fn load_named(&mut self, named: &[(String, Tensor)]) -> Result<(), TrainError> {
        let n = self.load_partial(named)?;
        if n != self.params.len() {
            let have: std::collections::BTreeSet<&str> =
                named.iter().map(|(k, _)| k.as_str()).collect();
            let missing: Vec<&str> = self
                .params
                .iter()
                .map(|p| p.name.as_str())
                .filter(|k| !have.contains(k))
                .collect();
            return Err(TrainError::Checkpoint(format!(
                "missing parameters: {}",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// Copies the named tensors present into the parameters (others keep
    /// their values); a name the net lacks or a wrong shape is an error.
    /// Returns how many parameters were set.
    pub fn load_partial(&mut self, named: &[(String, Tensor)]) -> Result<usize, TrainError> {
        let _guard = tch::no_grad_guard();
        let mut count = 0;
        for (name, src) in named {
            let p = self
                .params
                .iter()
                .find(|p| &p.name == name)
                .ok_or_else(|| TrainError::Checkpoint(format!("unknown parameter {name}")))?;
            if src.size() != p.tensor.size() {
                return Err(TrainError::Checkpoint(format!(
                    "parameter {}: shape {:?}, expected {:?}",
                    p.name,
                    src.size(),
                    p.tensor.size()
                )));
            }
            p.tensor
                .shallow_clone()
                .copy_(&src.to_kind(Kind::Float).to_device(p.tensor.device()));
            count += 1;
        }
        Ok(count)
    }

    /// Whether the net has an SGF metadata encoder (a `-meta` kind), and so
    /// reads `metadataInputNC`.
    pub fn reads_metadata(&self) -> bool {
        self.meta.is_some()
    }

    /// Refuses rows that lack the inputs this net reads (a `-meta` net on
    /// rows without `metadataInputNC`); `what` names the rows.
    pub fn check_rows_fit(&self, rows_have_metadata: bool, what: &str) -> Result<(), TrainError> {
        if self.reads_metadata() && !rows_have_metadata {
            return Err(TrainError::Data(format!(
                "{what}: no metadataInputNC, which model kind {} reads (its metadata encoder); \
                 self-play rows have none: train it on human-SL rows, shuffled with -include-meta",
                self.config.name
            )));
        }
        Ok(())
    }

    /// Runs the net on a batch's inputs.
    ///
    /// Panics if the net reads metadata and the batch has none: callers
    /// check their rows first ([`TrainNet::check_rows_fit`]).
    pub fn forward_batch(&self, b: &super::batch::Batch) -> NetOutput {
        self.forward(&b.binary_input, &b.global_input, b.meta_input.as_ref())
    }

    /// Runs the net on `[N,22,H,W]` spatial, `[N,19]` global and (for a
    /// net with a metadata encoder) `[N,192]` metadata inputs; metadata
    /// given to a net without an encoder is not read.
    ///
    /// Panics if the net reads metadata and none is given: callers check
    /// their rows first ([`TrainNet::check_rows_fit`]).
    pub fn forward(
        &self,
        input_spatial: &Tensor,
        input_global: &Tensor,
        input_meta: Option<&Tensor>,
    ) -> NetOutput {
        self.forward_with_masks(
            input_spatial,
            input_global,
            input_meta,
            &Masks::from_input(input_spatial),
        )
    }

    /// [`TrainNet::forward`] with the board masks given (tests force the
    /// masked path on full boards with them).
    pub(crate) fn forward_with_masks(
        &self,
        input_spatial: &Tensor,
        input_global: &Tensor,
        input_meta: Option<&Tensor>,
        m: &Masks,
    ) -> NetOutput {
        let kind = self.precision.compute_kind();
        let x_spatial = trunk_conv(input_spatial, &self.conv_spatial, kind);
        let x_global = cast(input_global, kind)
            .matmul(&cast(&self.linear_global, kind).tr())
            .unsqueeze(-1)
            .unsqueeze(-1);
        let mut out = x_spatial + x_global;
        if let Some(encoder) = &self.meta {
            let Some(meta) = input_meta else {
                panic!(
                    "model kind {} reads metadataInputNC and the batch has none (rows unchecked)",
                    self.config.name
                );
            };
            out += encoder.forward(meta, kind);
        }
        for block in &self.blocks {
            // Not in place: a norm with a gamma saved `out` for its backward.
            out = &out + block.forward(&out, m, kind);
        }
        // The final norm's fp32 bias brings the trunk back to fp32 for the
        // heads (KataGo casts with `.float()` there).
        let out = match &self.norm_trunkfinal {
            TipNorm::Norm(n) => n.forward(&out, m),
            TipNorm::Rms(r) => r.forward(&out, m),
        };
        let out = act(&out, self.config.activation);
        let HeadConvs {
            policy_p,
            policy_g,
            value,
        } = HeadConvs::new(&out, &self.policy, &self.value);
        let policy = self.policy.forward(policy_p, &policy_g, m);
        self.value
            .forward(value, m, input_global, policy, &self.config)
    }
}
