//! Starting weights from a KataGo model file (`-initial-checkpoint NET.bin.gz`):
//! the inverse of [`super::export`]. Heads the file lacks (opponent and soft
//! policies, long-term optimistic policy, TD values, scoring, future
//! positions, seki, score belief) keep their fresh initialisation.
//!
//! Files of versions 8 to 15+ load. A fixup net holds a file only where
//! every norm's folded scale is 1 at the norms without gamma (true of
//! KataGo's v15 fixup exports and of g170's version-8 fixup nets);
//! batch-norm nets need a net with [`NormKind::ScaleBias`] norms, which
//! hold a folded batch norm exactly ([`needs_scalebias`] tells which). Older heads map onto the v15
//! heads exactly: a version-8..14 pass logit `w·g` becomes the pass MLP
//! `relu(w·g) - relu(-w·g)`, and a file with one policy channel also seeds
//! the short-term optimistic policy (row 5, the export's second channel).
//!
//! The file is walked in its order beside the key table ([`super::keys`])
//! that the export shares; a step that does not fit the net's model kind
//! (block kind, block count, layer kind, a non-ReLU activation) is an error.

use std::collections::BTreeMap;

use tch::{Device, Kind, Tensor};

use super::config::META_SUFFIX;
use super::config::{NormKind, TrunkTip, ACTIVATION_SUFFIXES};
use super::keys::{key_table, Entry, Step, Transform, META_ENCODER_LAYER};
use super::model::{TrainNet, META_OUT_SCALE};
use super::TrainError;
use crate::nn::desc::*;
use crate::nn::model_file::walk::{shared, ModelVisitor, Ref, Shared, MODEL_NAME};
use crate::nn::ModelFile;

struct Im<'a> {
    net: &'a TrainNet,
    out: BTreeMap<String, Tensor>,
}

fn t(v: &[f32], shape: &[i64]) -> Tensor {
    Tensor::from_slice(v).view(shape)
}

impl Im<'_> {
    fn current(&self, key: &str) -> Result<Tensor, TrainError> {
        self.net
            .params
            .iter()
            .find(|p| p.name == key)
            .map(|p| p.tensor.detach().to_device(Device::Cpu).copy())
            .ok_or_else(|| TrainError::Checkpoint(format!("no parameter {key}")))
    }

    fn conv(&mut self, key: &str, c: &ConvLayer) {
        let shape = [
            c.out_channels as i64,
            c.in_channels as i64,
            c.y_size as i64,
            c.x_size as i64,
        ];
        self.out.insert(key.to_string(), t(&c.weights, &shape));
    }

    fn matmul_t(m: &MatMulLayer) -> Tensor {
        t(&m.weights, &[m.in_channels as i64, m.out_channels as i64])
            .tr()
            .contiguous()
    }

    fn matmul(&mut self, key: &str, m: &MatMulLayer) {
        self.out.insert(key.to_string(), Self::matmul_t(m));
    }

    fn bn(&mut self, prefix: &str, b: &BatchNormLayer) -> Result<(), TrainError> {
        let (s, bias) = b.merged();
        let c = b.num_channels as i64;
        let gamma_key = format!("{prefix}.gamma");
        let has_gamma = self.net.params.iter().any(|p| p.name == gamma_key);
        if has_gamma {
            let g: Vec<f32> = s.iter().map(|x| x - 1.0).collect();
            self.out.insert(gamma_key, t(&g, &[1, c, 1, 1]));
        } else if s.iter().any(|x| (x - 1.0).abs() > 1e-4) {
            return Err(TrainError::Checkpoint(format!(
                "{}: a scaled norm (a batch-norm net), which a fixup net cannot hold; use model kind {}-scalebias",
                b.name, self.net.config.name
            )));
        }
        self.out
            .insert(format!("{prefix}.beta"), t(&bias, &[1, c, 1, 1]));
        Ok(())
    }

    /// Overwrites rows `rows` (dim 0) of parameter `key` with `src`'s rows in order.
    fn rows(&mut self, key: &str, rows: &[i64], src: &Tensor) -> Result<(), TrainError> {
        let cur = self.current(key)?;
        let idx = Tensor::from_slice(rows);
        let cur = cur.index_copy(0, &idx, &src.to_kind(Kind::Float));
        self.out.insert(key.to_string(), cur);
        Ok(())
    }
}

fn block_norms(b: &Block) -> Vec<&BatchNormLayer> {
    match b {
        Block::Ordinary(r) => vec![&r.pre_bn, &r.mid_bn],
        Block::GlobalPooling(g) => vec![&g.pre_bn, &g.gpool_bn, &g.mid_bn],
        Block::NestedBottleneck(nb) => {
            let mut v = vec![&nb.pre_bn, &nb.post_bn];
            for inner in &nb.blocks {
                v.extend(block_norms(inner));
            }
            v
        }
        // RMSNorms only, which hold any scale.
        Block::Attention(_) | Block::Ffn(_) => Vec::new(),
    }
}

/// Whether the file has a norm whose folded scale is not 1 anywhere but at
/// the end of a residual branch (a batch-norm net such as g170's), so that
/// only a [`NormKind::ScaleBias`] net holds it.
pub fn needs_scalebias(file: &ModelFile) -> bool {
    let mut norms: Vec<&BatchNormLayer> = vec![
        &file.trunk.tip_bn,
        &file.policy_head.g1_bn,
        &file.policy_head.p1_bn,
        &file.value_head.v1_bn,
    ];
    for b in &file.trunk.blocks {
        match b {
            Block::Ordinary(r) => norms.push(&r.pre_bn),
            Block::GlobalPooling(g) => norms.extend([&g.pre_bn, &g.gpool_bn]),
            Block::NestedBottleneck(nb) => {
                // Only the post norm and inner mid norms carry a fixup gamma.
                norms.push(&nb.pre_bn);
                for inner in &nb.blocks {
                    let all = block_norms(inner);
                    norms.extend(all.iter().take(all.len().saturating_sub(1)));
                }
            }
            Block::Attention(_) | Block::Ffn(_) => {}
        }
    }
    norms
        .iter()
        .any(|b| b.merged().0.iter().any(|x| (x - 1.0).abs() > 1e-4))
}

/// Copies every weight a KataGo model file holds into `net` (shapes must
/// match the net's config). Returns how many parameters were set, fully or
/// in part.
pub fn load_model_file(net: &mut TrainNet, file: &ModelFile) -> Result<usize, TrainError> {
    if file.version < 8 || file.num_input_channels != 22 || file.num_input_global_channels != 19 {
        return Err(TrainError::Checkpoint(format!(
            "model version {} with {}+{} inputs (versions 8+ with 22 spatial and 19 global inputs load)",
            file.version, file.num_input_channels, file.num_input_global_channels
        )));
    }
    if net.config.norm == NormKind::Fixup && needs_scalebias(file) {
        return Err(TrainError::Checkpoint(format!(
            "{}: a batch-norm net, which a fixup net cannot hold; use model kind {}-scalebias",
            file.name, net.config.name
        )));
    }
    let k = file.trunk.initial_conv.y_size as i64;
    if k != net.config.initial_conv {
        return Err(TrainError::Checkpoint(format!(
            "{}: a {k}x{k} input convolution; use model kind {}",
            file.name,
            net.config.with_initial_conv(k).name
        )));
    }
    let config = net.config.clone();
    if file.trunk.blocks.len() != config.blocks.len() {
        return Err(TrainError::Checkpoint(format!(
            "the file has {} blocks, model kind {} has {}",
            file.trunk.blocks.len(),
            config.name,
            config.blocks.len()
        )));
    }
    let mut visitor = Import {
        im: Im {
            net,
            out: BTreeMap::new(),
        },
        config_name: config.name.clone(),
        tip: config.tip,
        activation: config.activation,
        steps: key_table(&config).into_iter().peekable(),
        version: file.version,
        skip_table_encoder: false,
    };
    shared::walk(&mut visitor, file)?;
    let named: Vec<(String, Tensor)> = visitor.im.out.into_iter().collect();
    net.load_partial(&named)
}

/// The importing visitor: walks the file and, step by step alongside the
/// key table ([`super::keys`]), turns each layer into the trainer
/// parameter(s) it holds.
struct Import<'a> {
    im: Im<'a>,
    config_name: String,
    /// The net's trunk tip, which the file's must equal.
    tip: TrunkTip,
    /// The net's activation, which every one of the file's must equal.
    activation: Activation,
    steps: std::iter::Peekable<std::vec::IntoIter<Step>>,
    version: i32,
    /// The net has a metadata encoder and the file none: the key table's
    /// encoder steps are passed over and the encoder keeps its fresh
    /// initialisation.
    skip_table_encoder: bool,
}

type IResult<T = ()> = Result<T, TrainError>;

/// Trainer rows 0 (policy) and 5 (short-term optimistic policy).
const POLICY_ROWS: [i64; 2] = [0, 5];

impl Import<'_> {
    /// The next step that is not a header value (a file whose header
    /// differs has layers of other shapes, which the net refuses).
    fn step(&mut self, what: &str) -> IResult<Step> {
        loop {
            match self.steps.next() {
                Some(Step::Size(_) | Step::Flag(_)) => continue,
                Some(Step::Name(n)) if self.skip_table_encoder && n == META_ENCODER_LAYER => {
                    continue
                }
                Some(Step::Layer(e))
                    if self.skip_table_encoder && e.layer.starts_with(META_ENCODER_LAYER) =>
                {
                    continue
                }
                Some(step) => return Ok(step),
                None => {
                    return Err(TrainError::Checkpoint(format!(
                        "{what}: the file goes on where model kind {} ends",
                        self.config_name
                    )))
                }
            }
        }
    }

    /// The next layer entry this file's version holds.
    fn entry(&mut self, layer: &str) -> IResult<Entry> {
        loop {
            match self.step(layer)? {
                Step::Layer(e) if e.min_version > self.version => continue,
                Step::Layer(e) => return Ok(e),
                other => {
                    return Err(TrainError::Checkpoint(format!(
                        "{layer}: a layer where model kind {} has {other:?}",
                        self.config_name
                    )))
                }
            }
        }
    }

    fn mismatch(&self, e: &Entry, layer: &str) -> IResult {
        Err(TrainError::Checkpoint(format!(
            "{layer}: the file's layer does not fit {} ({:?}) of model kind {}",
            e.key, e.transform, self.config_name
        )))
    }

    /// The file's channels 0 and 1 become trainer rows 0 and 5; a
    /// one-channel file seeds both from channel 0.
    fn policy_rows(&mut self, key: &str, w: &Tensor) -> IResult {
        let src_rows = if w.size()[0] >= 2 {
            Tensor::from_slice(&[0i64, 1])
        } else {
            Tensor::from_slice(&[0i64, 0])
        };
        self.im
            .rows(key, &POLICY_ROWS, &w.index_select(0, &src_rows))
    }

    /// Score values: rows 0..4 to `key`, rows 4..6 (when the file has them,
    /// version 9+) to rows 0..2 of `more`.
    fn score_values(&mut self, key: &str, more: &str, v: &Tensor) -> IResult {
        let n = v.size()[0];
        if n == 4 {
            self.im.rows(key, &[0, 1, 2, 3], v)?;
        } else if n >= 6 {
            self.im.rows(key, &[0, 1, 2, 3], &v.narrow(0, 0, 4))?;
            self.im.rows(more, &[0, 1], &v.narrow(0, 4, 2))?;
        }
        Ok(())
    }

    /// A file before version 15 has one pass logit `w·g` and no pass MLP:
    /// it becomes the MLP `relu(w·g) - relu(-w·g)`, exactly. The MLP's
    /// bias and output layer are the next table entries, which such a
    /// file does not hold.
    fn pass_without_mlp(&mut self, key: &str, m: &MatMulLayer) -> IResult {
        let mut bias_key = None;
        let mut out_key = None;
        while let Some(Step::Layer(e)) = self.steps.peek() {
            if e.min_version <= self.version {
                break;
            }
            match e.transform {
                Transform::Bias => bias_key = Some(e.key.clone()),
                Transform::PolicyMatMulRows => out_key = Some(e.key.clone()),
                _ => {}
            }
            self.steps.next();
        }
        let (Some(bias_key), Some(out_key)) = (bias_key, out_key) else {
            return Err(TrainError::Checkpoint(format!(
                "{key}: the key table has no pass MLP to hold a version-{} pass layer",
                self.version
            )));
        };
        let w = Im::matmul_t(m).narrow(0, 0, 1);
        let hidden = self.im.current(key)?.size();
        if hidden[0] < 2 || w.size()[1] != hidden[1] {
            return Err(TrainError::Checkpoint(format!(
                "policy pass layer {:?} does not fit the pass MLP {hidden:?}",
                w.size()
            )));
        }
        let lp = Tensor::zeros(hidden.as_slice(), (Kind::Float, Device::Cpu));
        let lp = lp.index_copy(
            0,
            &Tensor::from_slice(&[0i64, 1]),
            &Tensor::cat(&[&w, &w.neg()], 0),
        );
        self.im.out.insert(key.to_string(), lp);
        self.im.out.insert(
            bias_key,
            Tensor::zeros([hidden[0]], (Kind::Float, Device::Cpu)),
        );
        let mut out = vec![0f32; 2 * hidden[0] as usize];
        out[0] = 1.0;
        out[1] = -1.0;
        let i = hidden[0] as usize;
        out[i] = 1.0;
        out[i + 1] = -1.0;
        self.im
            .rows(&out_key, &POLICY_ROWS, &t(&out, &[2, hidden[0]]))
    }
}

impl ModelVisitor for Import<'_> {
    type Access = Shared;
    type Error = TrainError;

    fn version(&mut self, _: &i32) -> IResult {
        Ok(())
    }

    fn name(&mut self, what: &str, name: &String) -> IResult {
        match what {
            MODEL_NAME => Ok(()),
            _ => match self.step(name)? {
                Step::Name(_) => Ok(()),
                other => Err(TrainError::Checkpoint(format!(
                    "{name}: a {what} where model kind {} has {other:?}",
                    self.config_name
                ))),
            },
        }
    }

    fn size(&mut self, _: &str, _: &usize) -> IResult {
        Ok(())
    }

    fn flag(&mut self, _: &str, _: &bool) -> IResult {
        Ok(())
    }

    fn reserved(&mut self, _: &str) -> IResult {
        Ok(())
    }

    fn multiplier(&mut self, _: &str, _: &f64) -> IResult {
        Ok(())
    }

    fn trunk_norm(&mut self, trunk: &str, tip: &Option<RmsNormLayer>) -> IResult {
        let file_tip = match tip {
            None => TrunkTip::Norm,
            Some(r) => TrunkTip::RmsNorm { spatial: r.spatial },
        };
        if file_tip == self.tip {
            return Ok(());
        }
        let want = match file_tip {
            TrunkTip::Norm => "a model kind without -rnh or -rsnh",
            TrunkTip::RmsNorm { spatial: false } => "model kind suffix -rnh",
            TrunkTip::RmsNorm { spatial: true } => "model kind suffix -rsnh",
        };
        Err(TrainError::Checkpoint(format!(
            "{trunk}: the file's trunk tip is {file_tip:?}, model kind {} has {:?}; use {want}",
            self.config_name, self.tip
        )))
    }

    fn rms_norm(&mut self, layer: &RmsNormLayer) -> IResult {
        let e = self.entry(&layer.name)?;
        let Transform::RmsTip { spatial } = e.transform else {
            return self.mismatch(&e, &layer.name);
        };
        let c = layer.num_channels as i64;
        let gamma_key = if spatial {
            format!("{}.gamma", e.key)
        } else {
            format!("{}.norm.weight", e.key)
        };
        self.im.out.insert(gamma_key, t(&layer.gamma, &[c]));
        self.im
            .out
            .insert(format!("{}.beta", e.key), t(&layer.beta, &[c]));
        Ok(())
    }

    fn transformer_norm(&mut self, layer: &TransformerNorm) -> IResult {
        let e = self.entry(&layer.name)?;
        if e.transform != Transform::TransformerNorm {
            return self.mismatch(&e, &layer.name);
        }
        let c = layer.num_channels as i64;
        self.im.out.insert(e.key, t(&layer.weight, &[c]));
        Ok(())
    }

    fn rope(&mut self, block: &AttentionBlock) -> IResult {
        let e = self.entry(&block.rope_name)?;
        match e.transform {
            Transform::RopeFreqs if block.learnable_rope => {
                let shape = [block.num_kv_heads as i64, block.q_head_dim as i64 / 2, 2];
                self.im.out.insert(e.key, t(&block.rope_freqs, &shape));
                Ok(())
            }
            Transform::RopeTheta if !block.learnable_rope => match e.key.parse::<f32>() {
                Ok(theta) if theta == block.rope_theta => Ok(()),
                _ => Err(TrainError::Checkpoint(format!(
                    "{}: RoPE theta {} where model kind {} has {}",
                    block.rope_name, block.rope_theta, self.config_name, e.key
                ))),
            },
            _ => Err(TrainError::Checkpoint(format!(
                "{}: {} RoPE where model kind {} has {:?}",
                block.rope_name,
                if block.learnable_rope {
                    "learned"
                } else {
                    "fixed"
                },
                self.config_name,
                e.transform
            ))),
        }
    }

    fn meta_encoder(&mut self, encoder: &Option<MetadataEncoder>) -> IResult {
        match (encoder.is_some(), self.im.net.reads_metadata()) {
            (true, false) => Err(TrainError::Checkpoint(format!(
                "the file has an SGF metadata encoder (a human-SL net), which model kind {0} lacks; use model kind {0}{META_SUFFIX}",
                self.config_name
            ))),
            (false, true) => {
                self.skip_table_encoder = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn implied(&mut self, _: &usize, _: usize) -> IResult {
        Ok(())
    }

    fn optional<T: Default + 'static>(&mut self, _: &Option<T>, _: bool) -> IResult {
        Ok(())
    }

    fn block_count(&mut self, what: &str, blocks: &Vec<Block>) -> IResult<usize> {
        match self.step(what)? {
            Step::Count(n) if n == blocks.len() => Ok(n),
            other => Err(TrainError::Checkpoint(format!(
                "{what}: the file has {}, model kind {} has {other:?}",
                blocks.len(),
                self.config_name
            ))),
        }
    }

    fn block<'b>(
        &mut self,
        owner: &str,
        blocks: Ref<'b, Self, Vec<Block>>,
        index: usize,
    ) -> IResult<Ref<'b, Self, Block>> {
        let block = &blocks[index];
        match self.step(owner)? {
            Step::Block { keyword, .. } if keyword == block.kind_keyword() => Ok(block),
            Step::Block { key, .. } => Err(TrainError::Checkpoint(format!(
                "{key}: block kind differs from {}",
                self.config_name
            ))),
            other => Err(TrainError::Checkpoint(format!(
                "{owner}: a block where model kind {} has {other:?}",
                self.config_name
            ))),
        }
    }

    fn conv(&mut self, c: &ConvLayer) -> IResult {
        let e = self.entry(&c.name)?;
        match &e.transform {
            Transform::Conv => self.im.conv(&e.key, c),
            Transform::PolicyConvRows => {
                let shape = [c.out_channels as i64, c.in_channels as i64, 1, 1];
                return self.policy_rows(&e.key, &t(&c.weights, &shape));
            }
            _ => return self.mismatch(&e, &c.name),
        }
        Ok(())
    }

    fn batch_norm(&mut self, b: &BatchNormLayer) -> IResult {
        let e = self.entry(&b.name)?;
        match e.transform {
            Transform::Norm => self.im.bn(&e.key, b),
            _ => self.mismatch(&e, &b.name),
        }
    }

    fn activation(&mut self, a: &ActivationLayer, _: i32) -> IResult {
        let e = self.entry(&a.name)?;
        if e.transform != Transform::Act {
            return self.mismatch(&e, &a.name);
        }
        if a.activation != self.activation {
            let suffix = ACTIVATION_SUFFIXES
                .iter()
                .find(|(_, x)| *x == a.activation)
                .map_or("none", |(s, _)| s);
            return Err(TrainError::Checkpoint(format!(
                "{}: activation {:?} where model kind {} has {:?} (the activation suffix for this file: {suffix})",
                a.name, a.activation, self.config_name, self.activation
            )));
        }
        Ok(())
    }

    fn matmul(&mut self, m: &MatMulLayer) -> IResult {
        let e = self.entry(&m.name)?;
        match &e.transform {
            Transform::MatMul => self.im.matmul(&e.key, m),
            Transform::PassMatMul if self.version >= 15 => self.im.matmul(&e.key, m),
            Transform::PassMatMul => return self.pass_without_mlp(&e.key, m),
            Transform::PolicyMatMulRows => return self.policy_rows(&e.key, &Im::matmul_t(m)),
            // The board-area column is 0 in the file, and masked in the net.
            Transform::MetaInputMatMul => self.im.matmul(&e.key, m),
            Transform::MetaOutputMatMul => {
                let w = Im::matmul_t(m) / META_OUT_SCALE;
                self.im.out.insert(e.key.clone(), w);
            }
            Transform::ScoreValues { more, bias: false } => {
                return self.score_values(&e.key, more, &Im::matmul_t(m))
            }
            _ => return self.mismatch(&e, &m.name),
        }
        Ok(())
    }

    fn matbias(&mut self, b: &MatBiasLayer) -> IResult {
        let e = self.entry(&b.name)?;
        let v = t(&b.weights, &[b.weights.len() as i64]);
        match &e.transform {
            Transform::Bias => {
                self.im.out.insert(e.key.clone(), v);
                Ok(())
            }
            Transform::ScoreValues { more, bias: true } => self.score_values(&e.key, more, &v),
            _ => self.mismatch(&e, &b.name),
        }
    }
}
