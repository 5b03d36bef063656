//! A KataGo network in pure Rust for the CPU: no libtorch in the forward
//! pass, f32 NHWC activations, single-threaded per model (parallelism comes
//! from several evaluator server threads, each owning one [`CpuModel`], as
//! KataGo's Eigen backend does), scratch buffers kept between batches.
//!
//! The layers, their order and their folded batch norms are those of the
//! libtorch net: both instantiate the one topology of
//! `network/topology.rs`, this backend through [`CpuFold`] and the layer
//! operations of `CpuOps`, so both give the same outputs up to float
//! rounding; tests compare them.

use std::path::Path;
use std::sync::Arc;

use super::builder::{fold_dense, fold_norm_act};
use super::topology::{Fold, Net, Ops, RawHeads, TransformerBlock};
use super::winograd::Epilogue;
use super::{validate_input, HostOutputs, InputSizes, NetError, NetInput};
use crate::nn::desc::*;
use crate::nn::device::Precision;
use crate::nn::model_file::ModelFile;
use crate::nn::outputs::NetOutputs;

mod gemm;
mod int8;
mod ops;
mod probe;
mod transformer;

use gemm::AlignedWeights;
use ops::{activate, add_row_bias, Conv, ConvScratch, Dense, Mask, NormAct};
use transformer::{CpuTransformer, RmsTip};

pub use probe::{conv3x3_speeds, dot_peaks, ConvSpeed};

/// The share of `file`'s multiply-adds on 19x19 (convs and matmuls, as
/// [`ModelFile::multiply_adds`] counts them) that `nnPrecision = "int8"`
/// runs in int8: its 3x3 convs whose channels the kernels' blocks tile
/// (every trunk conv of g170 b6c96 and of the project's b4c32; none of a
/// transformer trunk's layers). The start-up line of a net run in int8
/// gives it.
pub fn int8_share(file: &ModelFile) -> f64 {
    let all = file.multiply_adds(19, 19, &|_| true, true);
    if all > 0.0 {
        file.multiply_adds(19, 19, &int8::takes, false) / all
    } else {
        0.0
    }
}

/// A KataGo network evaluated by plain Rust code on the calling thread.
pub struct CpuModel {
    name: String,
    version: i32,
    /// Spatial planes and global values per row.
    inputs: InputSizes,
    post_process: PostProcessParams,
    policy_channels: usize,
    num_parameters: usize,
    /// Shared by every replica: the weights are read-only, and one copy
    /// (16 MB of Winograd weights for b6c96) stays in L3 where one per
    /// server thread would not.
    net: Arc<Net<CpuFold>>,
    scratch: Scratch,
    /// fp32, or bf16 matrix products.
    precision: Precision,
}

impl std::fmt::Debug for CpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuModel")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Buffers reused from batch to batch (grown to the largest batch seen).
#[derive(Default)]
struct Scratch {
    conv: ConvScratch,
    /// Free activation buffers (taken and given back around each layer),
    /// each at the longest length it has had.
    pool: Vec<Vec<f32>>,
}

/// A pooled activation: the first `len` values of a buffer that keeps its
/// full length. A `Vec` truncated for a small layer zero-filled its values
/// again when a large layer took it (`memset` 0.7% of a 13x13 evaluation
/// in `perf`, AMD Zen 1).
pub(super) struct Buf {
    data: Vec<f32>,
    len: usize,
}

impl std::ops::Deref for Buf {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        &self.data[..self.len]
    }
}

impl std::ops::DerefMut for Buf {
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut self.data[..self.len]
    }
}

impl Scratch {
    /// A buffer of `len` values, from the free list when possible. Its
    /// values are left from earlier use: every layer writes the whole of
    /// its output, so zeroing (5% of a forward pass) bought nothing. Unit
    /// tests fill it with NaN instead, so a layer that leaves a value
    /// unwritten makes the outputs NaN.
    ///
    /// The buffer is the shortest free one already holding `len` values
    /// (the most recently given among equals, likely still in the caches),
    /// else the longest, grown (zero-filled once).
    fn take(&mut self, len: usize) -> Buf {
        let mut best: Option<usize> = None;
        for (i, v) in self.pool.iter().enumerate() {
            let better = match best.map(|b| self.pool[b].len()) {
                None => true,
                Some(b) if b >= len => v.len() >= len && v.len() <= b,
                Some(b) => v.len() >= b,
            };
            if better {
                best = Some(i);
            }
        }
        let mut data = best.map(|i| self.pool.remove(i)).unwrap_or_default();
        if data.len() < len {
            data.resize(len, 0.0);
        }
        if cfg!(test) {
            data[..len].fill(f32::NAN);
        }
        Buf { data, len }
    }

    fn give(&mut self, b: Buf) {
        self.pool.push(b.data);
    }
}

/// How the CPU backend stores the layers: folded weights in aligned host
/// buffers, 3x3 convs with their Winograd weights.
struct CpuFold {
    /// Whether the layers keep bf16 copies of their weights for the bf16
    /// GEMM kernel.
    bf16: bool,
    /// Whether 3x3 convs get an int8 form.
    int8: bool,
}

impl Fold for CpuFold {
    type Conv = Conv;
    type NormAct = NormAct;
    type Dense = Dense;
    type Transformer = CpuTransformer;
    type RmsTip = RmsTip;

    fn folded_conv(&self, c: &ConvLayer, w: &[f32], bias: Option<Vec<f32>>) -> Conv {
        Conv::new(c, w, bias, self.bf16, self.int8)
    }

    fn norm_act(&self, bn: &BatchNormLayer, act: &ActivationLayer) -> (NormAct, Option<Vec<f32>>) {
        let (p, s) = fold_norm_act(bn, act, true);
        (NormAct(p), s)
    }

    fn dense(&self, m: &MatMulLayer, col_scale: Option<&[f32]>, bias: Option<&[f32]>) -> Dense {
        let weight = fold_dense(m, col_scale);
        Dense {
            weight: AlignedWeights::matrices(&weight, (m.in_channels, m.out_channels), self.bf16),
            bias: bias.map(<[f32]>::to_vec),
            in_channels: m.in_channels,
            out_channels: m.out_channels,
        }
    }

    fn transformer(&self, block: TransformerBlock<'_>) -> Result<CpuTransformer, String> {
        CpuTransformer::build(self, block)
    }

    fn rms_tip(&self, norm: &RmsNormLayer, act: Activation) -> RmsTip {
        RmsTip::new(norm, act)
    }
}

/// Shape of one batch: rows, height, width.
type Shape = (usize, usize, usize);

/// The CPU backend's layer operations on one batch: activations are NHWC
/// `Vec`s taken from and given back to the [`Scratch`] pool, so a forward
/// pass allocates nothing once the pool has grown.
struct CpuOps<'a> {
    shape: Shape,
    mask: &'a Mask<'a>,
    s: &'a mut Scratch,
}

impl CpuOps<'_> {
    /// Board points of the batch (rows x h x w).
    fn points(&self) -> usize {
        self.shape.0 * self.shape.1 * self.shape.2
    }

    /// Channels of an NHWC activation of this batch.
    fn channels(&self, x: &[f32]) -> usize {
        x.len() / self.points()
    }

    /// `c` on `x` into a pooled buffer, finished as `epilogue` says.
    fn run_conv(&mut self, c: &Conv, x: &[f32], epilogue: Epilogue) -> Buf {
        let mut out = self.s.take(self.points() * c.out_channels);
        c.run(
            None,
            x,
            self.shape,
            &mut out,
            epilogue,
            self.mask,
            &mut self.s.conv,
        );
        out
    }
}

impl Ops for CpuOps<'_> {
    type F = CpuFold;
    type Act = Buf;
    type Rows = Buf;

    fn conv(&mut self, c: &Conv, x: &Buf) -> Result<Buf, NetError> {
        Ok(self.run_conv(c, x, Epilogue::Store))
    }

    /// With the ReLU fused into the Winograd output transform where possible.
    fn conv_act(&mut self, c: &Conv, x: &Buf, act: Activation) -> Result<Buf, NetError> {
        if act == Activation::Relu {
            return Ok(self.run_conv(c, x, Epilogue::ReluMasked));
        }
        let mut out = self.run_conv(c, x, Epilogue::Store);
        activate(&mut out, act);
        self.mask.apply(&mut out, c.out_channels);
        Ok(out)
    }

    fn conv_add(&mut self, c: &Conv, x: &Buf, acc: &mut Buf) -> Result<(), NetError> {
        let epilogue = Epilogue::Accumulate;
        c.run(
            None,
            x,
            self.shape,
            acc,
            epilogue,
            self.mask,
            &mut self.s.conv,
        );
        Ok(())
    }

    fn norm_act(&mut self, na: &NormAct, x: &Buf) -> Result<Buf, NetError> {
        let mut out = self.s.take(x.len());
        na.run(x, &mut out, self.channels(x), self.mask);
        Ok(out)
    }

    fn dense(&mut self, d: &Dense, x: &Buf) -> Result<Buf, NetError> {
        let mut out = self.s.take(self.shape.0 * d.out_channels);
        d.run(x, self.shape.0, &mut out);
        Ok(out)
    }

    fn add_row_bias(&mut self, x: &mut Buf, bias: &Buf) -> Result<(), NetError> {
        let c = self.channels(x);
        add_row_bias(x, bias, self.mask.hw, c);
        Ok(())
    }

    fn act_masked(&mut self, x: &mut Buf, act: Activation) -> Result<(), NetError> {
        let c = self.channels(x);
        activate(x, act);
        self.mask.apply(x, c);
        Ok(())
    }

    fn act_rows(&mut self, x: &mut Buf, act: Activation) -> Result<(), NetError> {
        activate(x, act);
        Ok(())
    }

    fn global_pool(&mut self, x: &Buf) -> Result<Buf, NetError> {
        let c = self.channels(x);
        let mut out = self.s.take(self.mask.pooled_len(c));
        self.mask.pool(x, c, &mut out);
        Ok(out)
    }

    fn value_pool(&mut self, x: &Buf) -> Result<Buf, NetError> {
        let c = self.channels(x);
        let mut out = self.s.take(self.mask.pooled_len(c));
        self.mask.pool_value(x, c, &mut out);
        Ok(out)
    }

    fn transformer_block(&mut self, t: &CpuTransformer, x: &mut Buf) -> Result<(), NetError> {
        t.add_to(x, self.shape, self.mask, self.s);
        Ok(())
    }

    fn rms_tip(&mut self, t: &RmsTip, x: &Buf) -> Result<Buf, NetError> {
        let mut out = self.s.take(x.len());
        t.run(x, self.shape, self.mask, &mut out);
        Ok(out)
    }

    fn give(&mut self, x: Buf) {
        self.s.give(x);
    }

    fn give_rows(&mut self, x: Buf) {
        self.s.give(x);
    }
}

/// Board points (rows x h x w) one pass through the net takes at most:
/// four 19x19 rows, sixteen 9x9 ones.
const MAX_POINTS_PER_PASS: usize = 4 * 19 * 19;

/// Runs the rows of one pass: `spatial_nchw`, `global` and `meta` as in
/// an [`NetInput`]; the outputs are NHWC, in buffers of `s`.
fn forward_pass(
    net: &Net<CpuFold>,
    spatial_nchw: &[f32],
    global: &[f32],
    meta: Option<&[f32]>,
    shape: Shape,
    mask: &Mask,
    s: &mut Scratch,
) -> Result<RawHeads<Buf, Buf>, NetError> {
    let (n, h, w) = shape;
    let hw = h * w;
    let cin = net.trunk.initial_conv.in_channels;
    // NCHW -> NHWC.
    let mut input = s.take(n * hw * cin);
    for b in 0..n {
        for ch in 0..cin {
            let plane = &spatial_nchw[(b * cin + ch) * hw..][..hw];
            for (p, &v) in plane.iter().enumerate() {
                input[(b * hw + p) * cin + ch] = v;
            }
        }
    }
    let mut rows = s.take(global.len());
    rows.copy_from_slice(global);
    let meta_rows = meta.map(|m| {
        let mut rows = s.take(m.len());
        rows.copy_from_slice(m);
        rows
    });
    let mut ops = CpuOps { shape, mask, s };
    let heads = net.forward(&mut ops, input, &rows, meta_rows.as_ref());
    s.give(rows);
    if let Some(m) = meta_rows {
        s.give(m);
    }
    heads
}

impl CpuModel {
    /// Loads a model file and builds the network.
    pub fn load(path: impl AsRef<Path>) -> Result<CpuModel, NetError> {
        Self::from_file(&ModelFile::load(path)?)
    }

    /// Builds the network from an already parsed model file, in fp32.
    pub fn from_file(file: &ModelFile) -> Result<CpuModel, NetError> {
        Self::with_precision(file, Precision::F32)
    }

    /// Builds the network to run its matrix products in `precision`: fp32,
    /// or bf16 on a CPU with AVX-512 BF16 (each product's inputs rounded
    /// to bf16, its sums in f32; the rest of the net in f32), or int8 on a
    /// CPU with AVX-512 VNNI or AVX-VNNI (the 3x3 convs whose shape allows it, with
    /// `i8` weights per output channel and `u8` inputs on a scale
    /// calibrated here, at load, on fixed positions: see
    /// [`CpuModel::calibrate_int8`]; the rest in f32). fp16, or bf16 or
    /// int8 on a CPU without their kernels, is [`NetError::Unsupported`].
    pub fn with_precision(file: &ModelFile, precision: Precision) -> Result<CpuModel, NetError> {
        let unsupported = |what: &str| NetError::Unsupported {
            name: file.name.clone(),
            what: what.to_string(),
        };
        let (bf16, int8) = match precision {
            Precision::F32 => (false, false),
            Precision::BF16 if crate::nn::cpu_info::bf16_kernels_run() => (true, false),
            Precision::BF16 => {
                return Err(unsupported(
                    "bf16 on the Rust backend without AVX-512 BF16 kernels (the CPU lacks them, or ENGINE_SIMD turned them off)",
                ))
            }
            Precision::Int8 if crate::nn::cpu_info::int8_kernels_run() => (false, true),
            Precision::Int8 => {
                return Err(unsupported(
                    "int8 on the Rust backend without AVX-512 VNNI or AVX-VNNI kernels (the CPU lacks them, or ENGINE_SIMD turned them off)",
                ))
            }
            Precision::F16 => return Err(unsupported("fp16 on the Rust backend")),
        };
        let mut model = CpuModel {
            name: file.name.clone(),
            version: file.version,
            inputs: InputSizes::of(file),
            post_process: file.post_process,
            policy_channels: file.policy_head.policy_out_channels,
            num_parameters: file.num_parameters(),
            net: Arc::new(Net::build(&CpuFold { bf16, int8 }, file)?),
            scratch: Scratch::default(),
            precision,
        };
        if int8 {
            model.calibrate_int8()?;
        }
        Ok(model)
    }

    /// Sets the input scale of every int8 conv: runs the net in f32 on the
    /// calibration positions (48 positions: 16 each on 9x9, 13x13 and
    /// 19x19 from games of random moves, the same on every load), each
    /// int8 conv recording the range of its input, then quantises each
    /// conv's input over the whole range it saw. For g170 b6c96 this is
    /// 48 evaluations: `engine gtp` started in 0.2 s either way on a Zen 5
    /// core (`docs/RESULTS.md`).
    fn calibrate_int8(&mut self) -> Result<(), NetError> {
        let version =
            crate::nn::desc::InputVersion::of_model_version(self.version).ok_or_else(|| {
                NetError::Unsupported {
                    name: self.name.clone(),
                    what: format!("model version {}", self.version),
                }
            })?;
        let meta_len = self.inputs.meta;
        self.scratch.conv.calibrating_int8 = true;
        let mut outcome = Ok(());
        for batch in int8::calibration_batches(version, meta_len) {
            let input = NetInput {
                batch_size: batch.rows,
                height: batch.side,
                width: batch.side,
                spatial: &batch.spatial,
                global: &batch.global,
                meta: (meta_len > 0).then_some(&batch.meta[..]),
                mask: None,
            };
            if let Err(e) = self.forward(&input) {
                outcome = Err(e);
                break;
            }
        }
        self.scratch.conv.calibrating_int8 = false;
        outcome?;
        self.net.for_each_conv(&mut |c: &Conv| c.settle_int8());
        Ok(())
    }

    /// Another model on the same weights with its own scratch buffers, for
    /// another evaluator server thread.
    pub fn replica(&self) -> CpuModel {
        CpuModel {
            name: self.name.clone(),
            version: self.version,
            inputs: self.inputs,
            post_process: self.post_process,
            policy_channels: self.policy_channels,
            num_parameters: self.num_parameters,
            net: Arc::clone(&self.net),
            scratch: Scratch::default(),
            precision: self.precision,
        }
    }

    /// What the matrix products run in (see [`CpuModel::with_precision`]).
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The model's name from its file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model version (3..=17).
    pub fn version(&self) -> i32 {
        self.version
    }

    /// Learned parameters, as KataGo counts them.
    pub fn num_parameters(&self) -> usize {
        self.num_parameters
    }

    /// Multiply-adds of the convolutions for one `h x w` row in a batch of
    /// `batch`: as a direct convolution counts them, and as this backend
    /// runs them (Winograd does fewer; small batches of small boards run
    /// direct).
    pub fn conv_macs_per_row(&self, batch: usize, h: usize, w: usize) -> (usize, usize) {
        let (mut direct, mut executed) = (0, 0);
        self.net.for_each_conv(&mut |c: &Conv| {
            let (d, e) = c.macs_per_row(batch, h, w);
            direct += d;
            executed += e;
        });
        (direct, executed)
    }

    /// Spatial input planes expected per row.
    pub fn num_spatial_features(&self) -> usize {
        self.inputs.spatial
    }

    /// Global inputs expected per row.
    pub fn num_global_features(&self) -> usize {
        self.inputs.global
    }

    /// Metadata inputs expected per row (0: the net reads none).
    pub fn num_meta_features(&self) -> usize {
        self.inputs.meta
    }

    /// Runs one batch. Outputs are from the side to move's perspective, as
    /// [`super::Model::forward`]'s.
    pub fn forward(&mut self, batch: &NetInput) -> Result<NetOutputs, NetError> {
        validate_input(batch, self.inputs)?;
        let (n, h, w) = (batch.batch_size, batch.height, batch.width);
        let hw = h * w;
        let p = self.policy_channels;
        let mut host = HostOutputs {
            policy: Vec::with_capacity(n * p * hw),
            pass: Vec::with_capacity(n * p),
            value: Vec::with_capacity(n * 3),
            score: Vec::with_capacity(n * 6),
            ownership: Vec::with_capacity(n * hw),
        };
        // Rows go through the net in chunks small enough that a layer's
        // activations and Winograd buffers stay in the caches: batch 8 on
        // 19x19 in one pass was ~10% slower per row than two passes of 4.
        let chunk = (MAX_POINTS_PER_PASS / hw).clamp(1, n);
        let (spatial_len, global_len) = (batch.spatial.len() / n, batch.global.len() / n);
        let meta_len = self.inputs.meta;
        for r0 in (0..n).step_by(chunk) {
            let rows = chunk.min(n - r0);
            let mask_rows = batch.mask.map(|m| &m[r0 * hw..(r0 + rows) * hw]);
            let mask = Mask::new(rows, hw, mask_rows);
            let heads = forward_pass(
                &self.net,
                &batch.spatial[r0 * spatial_len..(r0 + rows) * spatial_len],
                &batch.global[r0 * global_len..(r0 + rows) * global_len],
                batch
                    .meta
                    .map(|m| &m[r0 * meta_len..(r0 + rows) * meta_len]),
                (rows, h, w),
                &mask,
                &mut self.scratch,
            )?;
            // NHWC `[rows, hw, p]` policy planes to NCHW ones.
            for plane in heads.policy.chunks_exact(hw * p) {
                for c in 0..p {
                    host.policy.extend(plane.iter().skip(c).step_by(p));
                }
            }
            host.pass.extend_from_slice(&heads.pass);
            host.value.extend_from_slice(&heads.value);
            host.score.extend_from_slice(&heads.score);
            host.ownership
                .extend(heads.ownership.iter().map(|v| v.tanh()));
            let s = &mut self.scratch;
            for buf in [
                heads.policy,
                heads.pass,
                heads.value,
                heads.score,
                heads.ownership,
            ] {
                s.give(buf);
            }
        }
        Ok(host.into_outputs((n, h, w), p, self.version, &self.post_process))
    }
}

#[cfg(test)]
mod tests;
