//! A KataGo network as libtorch tensors, built from a [`ModelFile`].
//!
//! The forward pass follows KataGo's backends layer by layer (pre-activation
//! residual blocks, masked global pooling, the policy and value heads). Batch
//! norms that directly follow a convolution are folded into that
//! convolution's weights and bias when the model is built, so the hot path is
//! convolutions plus a few element-wise ops. On the CPU the 3x3 convolutions
//! run by Winograd's F(4x4, 3x3) (see `network/winograd.rs`), which also
//! applies their bias, ReLU, mask or residual sum. Boards smaller than the batch
//! tensor are handled with a mask, as KataGo does: every activation that
//! feeds a convolution or a pooling is zeroed outside the board.

use std::path::Path;

use parking_lot::Mutex;
use tch::{Device, Kind, Tensor};

use super::desc::*;
use super::model_file::{ModelFile, ModelFileError};
use super::outputs::{NetOutputs, ScoreRaw};

mod omp;
mod winograd;

use winograd::{Epilogue, Winograd, Workspace};

/// Largest board side the model accepts (KataGo's compile-time maximum).
pub const MAX_BOARD_LEN: usize = 37;

/// Why a model could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The model file could not be read.
    #[error(transparent)]
    File(#[from] ModelFileError),
    /// The file is valid but uses a feature this engine does not run.
    #[error("model {name}: {what} is not supported by this engine")]
    Unsupported {
        /// The model's name.
        name: String,
        /// The unsupported feature.
        what: String,
    },
    /// The caller's batch does not match its declared sizes.
    #[error("bad network input: {0}")]
    BadInput(String),
    /// libtorch reported an error.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}

/// One batch of network inputs as flat `f32` buffers, row-major (NCHW).
#[derive(Debug, Clone, Copy)]
pub struct InputBatch<'a> {
    /// Number of rows.
    pub batch_size: usize,
    /// Height of the (possibly padded) board tensor.
    pub height: usize,
    /// Width of the (possibly padded) board tensor.
    pub width: usize,
    /// `[batch, 22, height, width]` spatial features.
    pub spatial: &'a [f32],
    /// `[batch, 19]` global features.
    pub global: &'a [f32],
    /// `[batch, 1, height, width]`: 1 on the board, 0 on padding. `None`
    /// means every row fills the whole tensor (no masking work is done).
    pub mask: Option<&'a [f32]>,
}

/// A KataGo network ready to evaluate batches on a CPU or CUDA device.
///
/// `Model` is `Send + Sync`; [`Model::forward`] takes an internal lock, so
/// calls from several threads run one after another (the evaluator thread
/// is meant to own it and batch requests). CPU speed depends on libtorch's
/// global intra-op thread count (`tch::set_num_threads`), which the caller
/// sets; with more runnable threads than cores, libtorch's OpenMP threads
/// spin and throughput collapses, so leave it below the free cores. (On
/// a shared 2-core machine, starting the process with
/// `OMP_WAIT_POLICY=PASSIVE` was measured 3-10x faster than the default
/// spinning at 2 threads; libgomp reads it only at start-up.)
pub struct Model {
    name: String,
    version: i32,
    device: Device,
    kind: Kind,
    post_process: PostProcessParams,
    policy_channels: usize,
    num_parameters: usize,
    channels_last: bool,
    net: Mutex<(Net, Workspace)>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("device", &self.device)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Loads a model file and builds the network on `device` in f32.
    pub fn load(path: impl AsRef<Path>, device: Device) -> Result<Model, NetError> {
        Self::load_with(path, device, false)
    }

    /// Loads a model file; `fp16` runs the network in half precision
    /// (honoured on CUDA only, ignored on the CPU where it is slower).
    pub fn load_with(
        path: impl AsRef<Path>,
        device: Device,
        fp16: bool,
    ) -> Result<Model, NetError> {
        let file = ModelFile::load(path)?;
        Self::from_file(&file, device, fp16)
    }

    /// Builds the network from an already parsed model file.
    pub fn from_file(file: &ModelFile, device: Device, fp16: bool) -> Result<Model, NetError> {
        Self::build(file, device, fp16, true, true)
    }

    /// `fold_relu_scales: false` keeps every trunk batch norm as a separate
    /// scale-and-shift, `winograd: false` runs every conv through libtorch
    /// (tests compare the forms).
    fn build(
        file: &ModelFile,
        device: Device,
        fp16: bool,
        fold_relu_scales: bool,
        winograd: bool,
    ) -> Result<Model, NetError> {
        if file.trunk.metadata_encoder.is_some() {
            return Err(NetError::Unsupported {
                name: file.name.clone(),
                what: "an SGF metadata encoder (human-style net, metaEncoderVersion 1)".into(),
            });
        }
        let kind = if fp16 && device.is_cuda() {
            Kind::Half
        } else {
            Kind::Float
        };
        // Channels-last convolutions are much faster on the CPU (oneDNN);
        // on CUDA cuDNN picks its own layouts well from NCHW.
        let channels_last = device == Device::Cpu;
        let b = Builder {
            device,
            kind,
            channels_last,
            fold_relu_scales,
            winograd,
        };
        let _guard = tch::no_grad_guard();
        let (trunk, tip_scale) = b.trunk(&file.trunk);
        let net = Net {
            trunk,
            policy: b.policy_head(&file.policy_head, tip_scale.as_deref()),
            value: b.value_head(&file.value_head, tip_scale.as_deref()),
        };
        Ok(Model {
            name: file.name.clone(),
            version: file.version,
            device,
            kind,
            post_process: file.post_process,
            policy_channels: file.policy_head.policy_out_channels,
            num_parameters: file.num_parameters(),
            channels_last,
            net: Mutex::new((net, Workspace::default())),
        })
    }

    /// The model's name from its file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model version (8..=16).
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The device the network runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Whether the network runs in half precision.
    pub fn is_fp16(&self) -> bool {
        self.kind == Kind::Half
    }

    /// Learned parameters, as KataGo counts them.
    pub fn num_parameters(&self) -> usize {
        self.num_parameters
    }

    /// Whether outputs carry an optimistic policy (model version >= 12).
    pub fn has_optimistic_policy(&self) -> bool {
        self.policy_channels >= 2
    }

    /// Largest board side accepted by [`Model::forward`].
    pub fn max_board_size(&self) -> usize {
        MAX_BOARD_LEN
    }

    /// Spatial input planes expected per row.
    pub fn num_spatial_features(&self) -> usize {
        NUM_SPATIAL_FEATURES
    }

    /// Global inputs expected per row.
    pub fn num_global_features(&self) -> usize {
        NUM_GLOBAL_FEATURES
    }

    /// Runs one batch. Outputs are from the side to move's perspective
    /// (see [`NetOutputs`]).
    pub fn forward(&self, batch: &InputBatch) -> Result<NetOutputs, NetError> {
        let (n, h, w) = (batch.batch_size, batch.height, batch.width);
        if n == 0 {
            return Err(NetError::BadInput("empty batch".into()));
        }
        if h == 0 || w == 0 || h > MAX_BOARD_LEN || w > MAX_BOARD_LEN {
            return Err(NetError::BadInput(format!(
                "board tensor {w}x{h} outside 1..={MAX_BOARD_LEN}"
            )));
        }
        let check = |what: &str, got: usize, want: usize| {
            if got == want {
                Ok(())
            } else {
                Err(NetError::BadInput(format!(
                    "{what} has {got} values, expected {want} for a batch of {n} on {w}x{h}"
                )))
            }
        };
        check(
            "spatial input",
            batch.spatial.len(),
            n * NUM_SPATIAL_FEATURES * h * w,
        )?;
        check("global input", batch.global.len(), n * NUM_GLOBAL_FEATURES)?;
        if let Some(m) = batch.mask {
            check("mask", m.len(), n * h * w)?;
            // A row with an empty board would divide by zero in the pooling.
            for (row, plane) in m.chunks_exact(h * w).enumerate() {
                if !plane.iter().any(|&v| v != 0.0) {
                    return Err(NetError::BadInput(format!("mask of row {row} is all zero")));
                }
            }
        }
        let (n64, h64, w64) = (n as i64, h as i64, w as i64);
        let _guard = tch::no_grad_guard();
        let to_dev = |data: &[f32], shape: &[i64]| -> Result<Tensor, NetError> {
            Ok(Tensor::f_from_slice(data)?
                .f_reshape(shape)?
                .f_to_device(self.device)?
                .f_to_kind(self.kind)?)
        };
        let mut spatial = to_dev(batch.spatial, &[n64, NUM_SPATIAL_FEATURES as i64, h64, w64])?;
        if self.channels_last {
            spatial = to_channels_last(&spatial);
        }
        let global = to_dev(batch.global, &[n64, NUM_GLOBAL_FEATURES as i64])?;
        let ctx = match batch.mask {
            Some(m) => Ctx::masked(to_dev(m, &[n64, 1, h64, w64])?, m),
            None => Ctx::full(n64, h64, w64, self.device, self.kind),
        };
        let raw = {
            let mut guard = self.net.lock();
            let (net, ws) = &mut *guard;
            net.forward(&spatial, &global, &ctx, ws)?
        };
        Ok(raw.into_outputs(self, n, h, w)?)
    }
}

/// Raw head outputs still on the device.
struct RawOutputs {
    /// `[N, P, H, W]`.
    policy: Tensor,
    /// `[N, P]`.
    pass: Tensor,
    /// `[N, 3]`.
    value: Tensor,
    /// `[N, 4 or 6]`.
    score: Tensor,
    /// `[N, 1, H, W]`.
    ownership: Tensor,
}

impl RawOutputs {
    fn into_outputs(
        self,
        model: &Model,
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutputs, tch::TchError> {
        let to_vec = |t: &Tensor| -> Result<Vec<f32>, tch::TchError> {
            let t = t
                .f_to_kind(Kind::Float)?
                .f_to_device(Device::Cpu)?
                .f_contiguous()?;
            let numel = t.numel();
            let mut v = vec![0f32; numel];
            t.f_copy_data(&mut v, numel)?;
            Ok(v)
        };
        let hw = h * w;
        let p = model.policy_channels;
        let policy_all = to_vec(&self.policy)?;
        let pass_all = to_vec(&self.pass)?;
        let take_channel = |c: usize| {
            let mut out = Vec::with_capacity(n * (hw + 1));
            for row in 0..n {
                let base = (row * p + c) * hw;
                out.extend_from_slice(&policy_all[base..base + hw]);
                out.push(pass_all[row * p + c]);
            }
            out
        };
        let policy = take_channel(0);
        let policy_optimistic = (p >= 2).then(|| take_channel(1));
        let value_logits = to_vec(&self.value)?;
        let score_raw = to_vec(&self.score)?;
        let ownership = to_vec(&self.ownership.tanh())?;
        let score_channels = score_raw.len() / n;
        let mut outs =
            NetOutputs::with_capacity(n, h, w, policy, policy_optimistic, value_logits, ownership);
        for row in 0..n {
            let s = &score_raw[row * score_channels..(row + 1) * score_channels];
            outs.push_scores(
                ScoreRaw::from_channels(s).post_process(model.version, &model.post_process),
            );
        }
        Ok(outs)
    }
}

// ---------------------------------------------------------------------------
// Per-batch masking context

/// The mask and the per-row board-area terms of the pooling layers.
struct Ctx {
    /// `[N,1,H,W]`, or `None` when every row fills the tensor.
    mask: Option<Tensor>,
    /// `mask - 1` (0 on the board, -1 off it), for the masked max.
    mask_minus_one: Option<Tensor>,
    /// The mask as host values `[N*H*W]`, for the Winograd convs.
    mask_host: Option<Vec<f32>>,
    /// `[N,1]`: number of board points.
    area: Tensor,
    /// `[N,1]`: `(sqrt(area) - 14) / 10`.
    size_term: Tensor,
    /// `[N,1]`: `(sqrt(area) - 14)^2 / 100 - 0.1`.
    size_term2: Tensor,
}

impl Ctx {
    fn from_area(area: Tensor, mask: Option<Tensor>, mask_host: Option<Vec<f32>>) -> Ctx {
        let centred = area.sqrt() - 14.0;
        let size_term = &centred * 0.1;
        let size_term2 = &centred * &centred * 0.01 - 0.1;
        let mask_minus_one = mask.as_ref().map(|m| m - 1.0);
        Ctx {
            mask,
            mask_minus_one,
            mask_host,
            area,
            size_term,
            size_term2,
        }
    }

    fn masked(mask: Tensor, host: &[f32]) -> Ctx {
        let area = mask
            .sum_dim_intlist([2i64, 3].as_slice(), false, None)
            .reshape([-1, 1]);
        Ctx::from_area(area, Some(mask), Some(host.to_vec()))
    }

    fn full(n: i64, h: i64, w: i64, device: Device, kind: Kind) -> Ctx {
        let area = Tensor::full([n, 1], (h * w) as f64, (kind, device));
        Ctx::from_area(area, None, None)
    }

    /// Zeroes `x` off the board (in place).
    fn apply(&self, mut x: Tensor) -> Tensor {
        if let Some(m) = &self.mask {
            let _ = x.g_mul_(m);
        }
        x
    }

    /// KataGo's gpool features `[N, 3C]`: mean, mean * size term, max over
    /// the board. `x` must already be zero off the board.
    fn pool(&self, x: &Tensor) -> Tensor {
        let dims = [2i64, 3];
        let sum = x.sum_dim_intlist(dims.as_slice(), false, None);
        let mean = sum / &self.area;
        let max = match &self.mask_minus_one {
            Some(mm) => (x + mm).amax(dims.as_slice(), false),
            None => x.amax(dims.as_slice(), false),
        };
        let scaled = &mean * &self.size_term;
        Tensor::cat(&[mean, scaled, max], 1)
    }

    /// KataGo's value-head pooling `[N, 3C]`: mean, mean * size term,
    /// mean * quadratic size term.
    fn pool_value(&self, x: &Tensor) -> Tensor {
        let sum = x.sum_dim_intlist([2i64, 3].as_slice(), false, None);
        let mean = sum / &self.area;
        let a = &mean * &self.size_term;
        let b = &mean * &self.size_term2;
        Tensor::cat(&[mean, a, b], 1)
    }
}

// ---------------------------------------------------------------------------
// Layers

/// Applies an activation, in place where libtorch has an in-place form.
fn activate(mut x: Tensor, a: Activation) -> Tensor {
    match a {
        Activation::Identity => x,
        Activation::Relu => x.relu_(),
        Activation::Mish => x.mish_(),
        Activation::Silu => x.silu_(),
    }
}

/// A convolution with optional bias (the folded batch norm).
enum Conv {
    /// libtorch's convolution (oneDNN on the CPU, cuDNN on CUDA).
    Torch(TorchConv),
    /// 3x3 convs on the CPU in f32.
    Winograd(Winograd),
}

/// A convolution run by libtorch.
struct TorchConv {
    weight: Tensor,
    bias: Option<Tensor>,
    padding: [i64; 2],
    dilation: [i64; 2],
}

/// Whether `t` is a CPU f32 `[N, C, H, W]` tensor whose memory is dense
/// NHWC (strides of size-1 dimensions do not matter).
fn is_dense_nhwc(t: &Tensor) -> bool {
    let size = t.size();
    let stride = t.stride();
    if size.len() != 4 || t.kind() != Kind::Float || t.device() != Device::Cpu {
        return false;
    }
    let (c, h, w) = (size[1], size[2], size[3]);
    let want = [h * w * c, 1, w * c, c];
    (0..4).all(|i| size[i] <= 1 || stride[i] == want[i])
}

/// `t` with dense NHWC memory (the same tensor when it already is).
fn dense_nhwc(t: &Tensor) -> Tensor {
    if is_dense_nhwc(t) {
        t.shallow_clone()
    } else {
        to_channels_last(&t.to_kind(Kind::Float).contiguous())
    }
}

/// `[N, C, H, W]` of a 4-D tensor, as `usize`s.
fn dims4(t: &Tensor) -> (usize, usize, usize, usize) {
    let s = t.size();
    let u = |i: usize| usize::try_from(s[i]).unwrap_or(0);
    (u(0), u(1), u(2), u(3))
}

impl Conv {
    /// `conv(x) + bias`.
    fn forward(&self, x: &Tensor, ctx: &Ctx, ws: &mut Workspace) -> Result<Tensor, NetError> {
        match self {
            Conv::Torch(c) => Ok(c.forward(x)),
            Conv::Winograd(wg) => winograd_new(wg, x, Epilogue::Store, ctx, ws),
        }
    }

    /// `act(conv(x) + bias)`, zeroed off the board.
    fn forward_act(
        &self,
        x: &Tensor,
        act: Activation,
        ctx: &Ctx,
        ws: &mut Workspace,
    ) -> Result<Tensor, NetError> {
        match self {
            Conv::Winograd(wg) if act == Activation::Relu => {
                winograd_new(wg, x, Epilogue::ReluMasked, ctx, ws)
            }
            _ => Ok(ctx.apply(activate(self.forward(x, ctx, ws)?, act))),
        }
    }

    /// `acc += conv(x) + bias` (a residual connection).
    fn forward_add(
        &self,
        x: &Tensor,
        acc: &mut Tensor,
        ws: &mut Workspace,
    ) -> Result<(), NetError> {
        match self {
            Conv::Winograd(wg) => {
                let input = dense_nhwc(x);
                let (n, c, h, w) = dims4(&input);
                let co = wg.out_channels();
                if c != wg.in_channels() || dims4(acc) != (n, co, h, w) {
                    return Err(NetError::BadInput(format!(
                        "residual conv {}->{co} does not fit {:?} into {:?}",
                        wg.in_channels(),
                        x.size(),
                        acc.size()
                    )));
                }
                if !is_dense_nhwc(acc) {
                    *acc = dense_nhwc(acc);
                }
                // SAFETY: both tensors are dense NHWC f32 on the CPU (checked
                // above), so their storages hold exactly n*h*w*channels
                // values from their data pointers; `acc` is a different
                // tensor from `input`, exclusively borrowed, and no libtorch
                // op runs on either while the slices live.
                let (src, dst) = unsafe {
                    (
                        std::slice::from_raw_parts(input.data_ptr() as *const f32, n * h * w * c),
                        std::slice::from_raw_parts_mut(acc.data_ptr() as *mut f32, n * h * w * co),
                    )
                };
                wg.run(src, (n, h, w), dst, Epilogue::Accumulate, None, ws)?;
                Ok(())
            }
            Conv::Torch(c) => {
                let _ = acc.g_add_(&c.forward(x));
                Ok(())
            }
        }
    }
}

/// Runs a Winograd conv into a new dense NHWC tensor.
fn winograd_new(
    wg: &Winograd,
    x: &Tensor,
    epilogue: Epilogue,
    ctx: &Ctx,
    ws: &mut Workspace,
) -> Result<Tensor, NetError> {
    let input = dense_nhwc(x);
    let (n, c, h, w) = dims4(&input);
    if c != wg.in_channels() {
        return Err(NetError::BadInput(format!(
            "conv expects {} channels, got {c}",
            wg.in_channels()
        )));
    }
    let co = wg.out_channels();
    let out = Tensor::f_empty(
        [n as i64, h as i64, w as i64, co as i64],
        (Kind::Float, Device::Cpu),
    )?
    .f_permute([0, 3, 1, 2])?;
    // SAFETY: `input` is dense NHWC f32 on the CPU (made so above) and
    // `out` was just allocated dense NHWC; they do not alias and no libtorch
    // op touches them while the slices live.
    let (src, dst) = unsafe {
        (
            std::slice::from_raw_parts(input.data_ptr() as *const f32, n * h * w * c),
            std::slice::from_raw_parts_mut(out.data_ptr() as *mut f32, n * h * w * co),
        )
    };
    wg.run(src, (n, h, w), dst, epilogue, ctx.mask_host.as_deref(), ws)?;
    Ok(out)
}

impl TorchConv {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.conv2d(
            &self.weight,
            self.bias.as_ref(),
            [1, 1],
            self.padding,
            self.dilation,
            1,
        )
    }
}

/// A batch norm that cannot be folded into the conv before it (it follows
/// a residual sum), with its activation.
enum NormAct {
    /// `relu(x + shift)`: a ReLU batch norm whose scales are all positive,
    /// so `relu(s x + b) = s relu(x + b / s)` and `s` is folded into the
    /// input channels of the convs that read the result (one fused op).
    Shift { shift: Tensor },
    /// `act(x * scale + bias)`.
    Affine {
        scale: Tensor,
        bias: Tensor,
        act: Activation,
    },
}

impl NormAct {
    fn forward(&self, x: &Tensor, ctx: &Ctx) -> Tensor {
        let y = match self {
            NormAct::Shift { shift } => x.internal_add_relu(shift),
            NormAct::Affine { scale, bias, act } => activate(bias.addcmul(x, scale), *act),
        };
        ctx.apply(y)
    }
}

/// `x W (+ b)` with `W` of shape `[in, out]`.
struct Dense {
    weight: Tensor,
    bias: Option<Tensor>,
}

impl Dense {
    fn forward(&self, x: &Tensor) -> Tensor {
        match &self.bias {
            Some(b) => b.addmm(x, &self.weight),
            None => x.matmul(&self.weight),
        }
    }
}

enum NetBlock {
    Ordinary {
        pre: NormAct,
        /// First conv with the mid batch norm folded in.
        conv1: Conv,
        mid_act: Activation,
        conv2: Conv,
    },
    GlobalPooling {
        pre: NormAct,
        /// Regular conv with the mid batch norm folded in.
        regular: Conv,
        /// Pooled conv with its batch norm folded in.
        gpool: Conv,
        gpool_act: Activation,
        /// Pooled features -> bias, columns scaled by the mid batch norm.
        gpool_to_bias: Dense,
        mid_act: Activation,
        conv2: Conv,
    },
    Nested {
        pre: NormAct,
        pre_conv: Conv,
        blocks: Vec<NetBlock>,
        post: NormAct,
        post_conv: Conv,
    },
}

impl NetBlock {
    /// Returns `x + block(x)` (reusing `x`'s storage).
    fn forward(&self, mut x: Tensor, ctx: &Ctx, ws: &mut Workspace) -> Result<Tensor, NetError> {
        match self {
            NetBlock::Ordinary {
                pre,
                conv1,
                mid_act,
                conv2,
            } => {
                let a = pre.forward(&x, ctx);
                let m = conv1.forward_act(&a, *mid_act, ctx, ws)?;
                conv2.forward_add(&m, &mut x, ws)?;
                Ok(x)
            }
            NetBlock::GlobalPooling {
                pre,
                regular,
                gpool,
                gpool_act,
                gpool_to_bias,
                mid_act,
                conv2,
            } => {
                let a = pre.forward(&x, ctx);
                let g = gpool.forward_act(&a, *gpool_act, ctx, ws)?;
                let bias = gpool_to_bias.forward(&ctx.pool(&g));
                let mut r = regular.forward(&a, ctx, ws)?;
                let _ = r.g_add_(&bias.unsqueeze(-1).unsqueeze(-1));
                let m = ctx.apply(activate(r, *mid_act));
                conv2.forward_add(&m, &mut x, ws)?;
                Ok(x)
            }
            NetBlock::Nested {
                pre,
                pre_conv,
                blocks,
                post,
                post_conv,
            } => {
                let a = pre.forward(&x, ctx);
                let mut inner = pre_conv.forward(&a, ctx, ws)?;
                for b in blocks {
                    inner = b.forward(inner, ctx, ws)?;
                }
                let m = post.forward(&inner, ctx);
                post_conv.forward_add(&m, &mut x, ws)?;
                Ok(x)
            }
        }
    }
}

struct NetTrunk {
    initial_conv: Conv,
    initial_matmul: Dense,
    blocks: Vec<NetBlock>,
    tip: NormAct,
}

struct NetPolicy {
    /// p1 conv with p1 batch norm folded in.
    p1: Conv,
    /// g1 conv with g1 batch norm folded in.
    g1: Conv,
    g1_act: Activation,
    /// Pooled -> p1 bias, columns scaled by the p1 batch norm.
    gpool_to_bias: Dense,
    p1_act: Activation,
    p2: Conv,
    pass1: Dense,
    /// v15+: activation and second layer of the pass MLP.
    pass2: Option<(Activation, Dense)>,
}

struct NetValue {
    /// v1 conv with its batch norm folded in.
    v1: Conv,
    v1_act: Activation,
    v2: Dense,
    v2_act: Activation,
    v3: Dense,
    sv3: Dense,
    ownership: Conv,
}

struct Net {
    trunk: NetTrunk,
    policy: NetPolicy,
    value: NetValue,
}

impl Net {
    fn forward(
        &self,
        spatial: &Tensor,
        global: &Tensor,
        ctx: &Ctx,
        ws: &mut Workspace,
    ) -> Result<RawOutputs, NetError> {
        let t = &self.trunk;
        let bias = t.initial_matmul.forward(global);
        let mut x = t.initial_conv.forward(spatial, ctx, ws)?;
        let _ = x.g_add_(&bias.unsqueeze(-1).unsqueeze(-1));
        for b in &t.blocks {
            x = b.forward(x, ctx, ws)?;
        }
        let trunk = t.tip.forward(&x, ctx);

        let p = &self.policy;
        let g1 = p.g1.forward_act(&trunk, p.g1_act, ctx, ws)?;
        let pooled = ctx.pool(&g1);
        let mut p1 = p.p1.forward(&trunk, ctx, ws)?;
        let _ = p1.g_add_(&p.gpool_to_bias.forward(&pooled).unsqueeze(-1).unsqueeze(-1));
        let p1 = ctx.apply(activate(p1, p.p1_act));
        let policy = p.p2.forward(&p1, ctx, ws)?;
        let mut pass = p.pass1.forward(&pooled);
        if let Some((act, dense)) = &p.pass2 {
            pass = dense.forward(&activate(pass, *act));
        }

        let v = &self.value;
        let v1 = v.v1.forward_act(&trunk, v.v1_act, ctx, ws)?;
        let v2 = activate(v.v2.forward(&ctx.pool_value(&v1)), v.v2_act);
        Ok(RawOutputs {
            policy,
            pass,
            value: v.v3.forward(&v2),
            score: v.sv3.forward(&v2),
            ownership: v.ownership.forward(&v1, ctx, ws)?,
        })
    }
}

// ---------------------------------------------------------------------------
// Building tensors from descriptors

struct Builder {
    device: Device,
    kind: Kind,
    channels_last: bool,
    fold_relu_scales: bool,
    /// Run 3x3 convs by Winograd (CPU, f32 only).
    winograd: bool,
}

/// The same NCHW tensor with NHWC strides (tch 0.24 has no memory-format
/// API; libtorch recognises the strides and picks its channels-last kernels).
fn to_channels_last(t: &Tensor) -> Tensor {
    t.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

impl Builder {
    /// Puts a 4-D tensor in the layout the convolutions run fastest in.
    fn layout(&self, t: Tensor) -> Tensor {
        if self.channels_last {
            to_channels_last(&t)
        } else {
            t
        }
    }

    fn tensor(&self, data: &[f32], shape: &[i64]) -> Tensor {
        Tensor::from_slice(data)
            .reshape(shape)
            .to_device(self.device)
            .to_kind(self.kind)
    }

    /// A conv whose output is scaled per channel by `scale` then offset by
    /// `bias`, and whose input channels are scaled by `in_scale`.
    fn conv(
        &self,
        c: &ConvLayer,
        affine: Option<(&[f32], &[f32])>,
        in_scale: Option<&[f32]>,
    ) -> Conv {
        let per_out = c.in_channels * c.y_size * c.x_size;
        let per_in = c.y_size * c.x_size;
        let mut w = c.weights.clone();
        if let Some(si) = in_scale {
            for chunk in w.chunks_exact_mut(per_out) {
                for (ic, kernel) in chunk.chunks_exact_mut(per_in).enumerate() {
                    for v in kernel {
                        *v *= si[ic];
                    }
                }
            }
        }
        let bias_values = affine.map(|(scale, bias)| {
            for (oc, chunk) in w.chunks_exact_mut(per_out).enumerate() {
                for v in chunk {
                    *v *= scale[oc];
                }
            }
            bias.to_vec()
        });
        let winograd = self.channels_last
            && self.kind == Kind::Float
            && self.winograd
            && (c.y_size, c.x_size, c.dilation_y, c.dilation_x) == (3, 3, 1, 1);
        if winograd {
            return Conv::Winograd(Winograd::new(
                &w,
                bias_values.as_deref(),
                c.in_channels,
                c.out_channels,
            ));
        }
        let bias = bias_values.map(|b| self.tensor(&b, &[c.out_channels as i64]));
        let shape = [
            c.out_channels as i64,
            c.in_channels as i64,
            c.y_size as i64,
            c.x_size as i64,
        ];
        Conv::Torch(TorchConv {
            weight: self.layout(self.tensor(&w, &shape)),
            bias,
            padding: [
                (c.y_size as i64 / 2) * c.dilation_y as i64,
                (c.x_size as i64 / 2) * c.dilation_x as i64,
            ],
            dilation: [c.dilation_y as i64, c.dilation_x as i64],
        })
    }

    /// A conv with the batch norm that follows it folded in.
    fn conv_bn(&self, c: &ConvLayer, bn: &BatchNormLayer, in_scale: Option<&[f32]>) -> Conv {
        let (s, b) = bn.merged();
        self.conv(c, Some((&s, &b)), in_scale)
    }

    /// A normalisation + activation, and the per-channel factor (if any)
    /// the convs reading its output must fold into their input channels.
    fn norm_act(&self, bn: &BatchNormLayer, act: &ActivationLayer) -> (NormAct, Option<Vec<f32>>) {
        let (s, b) = bn.merged();
        let shape = [1, bn.num_channels as i64, 1, 1];
        let shift: Vec<f32> = s.iter().zip(&b).map(|(s, b)| b / s).collect();
        let foldable = self.fold_relu_scales
            && act.activation == Activation::Relu
            && s.iter().all(|&v| v > 0.0)
            && shift.iter().all(|v| v.is_finite());
        if foldable {
            let na = NormAct::Shift {
                shift: self.tensor(&shift, &shape),
            };
            (na, Some(s))
        } else {
            let na = NormAct::Affine {
                scale: self.tensor(&s, &shape),
                bias: self.tensor(&b, &shape),
                act: act.activation,
            };
            (na, None)
        }
    }

    /// A dense layer; `col_scale` multiplies each output column (a folded
    /// batch-norm scale), `bias` is added after.
    fn dense(&self, m: &MatMulLayer, col_scale: Option<&[f32]>, bias: Option<&[f32]>) -> Dense {
        let mut w = m.weights.clone();
        if let Some(s) = col_scale {
            for row in w.chunks_exact_mut(m.out_channels) {
                for (v, sc) in row.iter_mut().zip(s) {
                    *v *= sc;
                }
            }
        }
        Dense {
            weight: self.tensor(&w, &[m.in_channels as i64, m.out_channels as i64]),
            bias: bias.map(|b| self.tensor(b, &[m.out_channels as i64])),
        }
    }

    fn block(&self, b: &Block) -> NetBlock {
        match b {
            Block::Ordinary(b) => {
                let (pre, si) = self.norm_act(&b.pre_bn, &b.pre_activation);
                NetBlock::Ordinary {
                    pre,
                    conv1: self.conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    mid_act: b.mid_activation.activation,
                    conv2: self.conv(&b.final_conv, None, None),
                }
            }
            Block::GlobalPooling(b) => {
                let (ms, _) = b.mid_bn.merged();
                let (pre, si) = self.norm_act(&b.pre_bn, &b.pre_activation);
                NetBlock::GlobalPooling {
                    pre,
                    regular: self.conv_bn(&b.regular_conv, &b.mid_bn, si.as_deref()),
                    gpool: self.conv_bn(&b.gpool_conv, &b.gpool_bn, si.as_deref()),
                    gpool_act: b.gpool_activation.activation,
                    gpool_to_bias: self.dense(&b.gpool_to_bias_mul, Some(&ms), None),
                    mid_act: b.mid_activation.activation,
                    conv2: self.conv(&b.final_conv, None, None),
                }
            }
            Block::NestedBottleneck(b) => {
                let (pre, si) = self.norm_act(&b.pre_bn, &b.pre_activation);
                let (post, so) = self.norm_act(&b.post_bn, &b.post_activation);
                NetBlock::Nested {
                    pre,
                    pre_conv: self.conv(&b.pre_conv, None, si.as_deref()),
                    blocks: b.blocks.iter().map(|x| self.block(x)).collect(),
                    post,
                    post_conv: self.conv(&b.post_conv, None, so.as_deref()),
                }
            }
        }
    }

    /// The trunk, and the input-channel factor the heads' first convs must fold in.
    fn trunk(&self, t: &Trunk) -> (NetTrunk, Option<Vec<f32>>) {
        let (tip, si) = self.norm_act(&t.tip_bn, &t.tip_activation);
        let trunk = NetTrunk {
            initial_conv: self.conv(&t.initial_conv, None, None),
            initial_matmul: self.dense(&t.initial_matmul, None, None),
            blocks: t.blocks.iter().map(|b| self.block(b)).collect(),
            tip,
        };
        (trunk, si)
    }

    fn policy_head(&self, p: &PolicyHead, si: Option<&[f32]>) -> NetPolicy {
        let (ps, _) = p.p1_bn.merged();
        NetPolicy {
            p1: self.conv_bn(&p.p1_conv, &p.p1_bn, si),
            g1: self.conv_bn(&p.g1_conv, &p.g1_bn, si),
            g1_act: p.g1_activation.activation,
            gpool_to_bias: self.dense(&p.gpool_to_bias_mul, Some(&ps), None),
            p1_act: p.p1_activation.activation,
            p2: self.conv(&p.p2_conv, None, None),
            pass1: match &p.pass_mlp {
                Some((bias, _, _)) => self.dense(&p.gpool_to_pass_mul, None, Some(&bias.weights)),
                None => self.dense(&p.gpool_to_pass_mul, None, None),
            },
            pass2: p
                .pass_mlp
                .as_ref()
                .map(|(_, act, mul2)| (act.activation, self.dense(mul2, None, None))),
        }
    }

    fn value_head(&self, v: &ValueHead, si: Option<&[f32]>) -> NetValue {
        NetValue {
            v1: self.conv_bn(&v.v1_conv, &v.v1_bn, si),
            v1_act: v.v1_activation.activation,
            v2: self.dense(&v.v2_mul, None, Some(&v.v2_bias.weights)),
            v2_act: v.v2_activation.activation,
            v3: self.dense(&v.v3_mul, None, Some(&v.v3_bias.weights)),
            sv3: self.dense(&v.sv3_mul, None, Some(&v.sv3_bias.weights)),
            ownership: self.conv(&v.ownership_conv, None, None),
        }
    }
}

#[cfg(test)]
mod tests;
