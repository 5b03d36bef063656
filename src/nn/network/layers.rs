//! The layers of a network: convolutions (libtorch or Winograd),
//! normalisation and activation, residual blocks, the trunk and the heads,
//! and the per-batch masking context.

use super::*;

// ---------------------------------------------------------------------------
// Per-batch masking context

/// The mask and the per-row board-area terms of the pooling layers.
pub(super) struct Ctx {
    /// `[N,1,H,W]`, or `None` when every row fills the tensor.
    pub(super) mask: Option<Tensor>,
    /// `mask - 1` (0 on the board, -1 off it), for the masked max.
    pub(super) mask_minus_one: Option<Tensor>,
    /// The mask as host values `[N*H*W]`, for the Winograd convs.
    pub(super) mask_host: Option<Vec<f32>>,
    /// `[N,1]`: number of board points.
    pub(super) area: Tensor,
    /// `[N,1]`: `(sqrt(area) - 14) / 10`.
    pub(super) size_term: Tensor,
    /// `[N,1]`: `(sqrt(area) - 14)^2 / 100 - 0.1`.
    pub(super) size_term2: Tensor,
}

impl Ctx {
    pub(super) fn from_area(
        area: Tensor,
        mask: Option<Tensor>,
        mask_host: Option<Vec<f32>>,
    ) -> Ctx {
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

    pub(super) fn masked(mask: Tensor, host: &[f32]) -> Ctx {
        let area = mask
            .sum_dim_intlist([2i64, 3].as_slice(), false, None)
            .reshape([-1, 1]);
        Ctx::from_area(area, Some(mask), Some(host.to_vec()))
    }

    /// A mask already on the device, with no host copy (the Winograd
    /// convs that read one run on the CPU only).
    pub(super) fn masked_on_device(mask: Tensor) -> Ctx {
        let area = mask
            .sum_dim_intlist([2i64, 3].as_slice(), false, None)
            .reshape([-1, 1]);
        Ctx::from_area(area, Some(mask), None)
    }

    pub(super) fn full(n: i64, h: i64, w: i64, device: Device, kind: Kind) -> Ctx {
        let area = Tensor::full([n, 1], (h * w) as f64, (kind, device));
        Ctx::from_area(area, None, None)
    }

    /// Zeroes `x` off the board (in place).
    pub(super) fn apply(&self, mut x: Tensor) -> Tensor {
        if let Some(m) = &self.mask {
            let _ = x.g_mul_(m);
        }
        x
    }

    /// KataGo's gpool features `[N, 3C]`: mean, mean * size term, max over
    /// the board. `x` must already be zero off the board.
    pub(super) fn pool(&self, x: &Tensor) -> Tensor {
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
    pub(super) fn pool_value(&self, x: &Tensor) -> Tensor {
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
pub(super) fn activate(mut x: Tensor, a: Activation) -> Tensor {
    match a {
        Activation::Identity => x,
        Activation::Relu => x.relu_(),
        Activation::Mish => x.mish_(),
        Activation::Silu => x.silu_(),
    }
}

/// A convolution with optional bias (the folded batch norm).
pub(super) enum Conv {
    /// libtorch's convolution (oneDNN on the CPU, cuDNN on CUDA).
    Torch(TorchConv),
    /// 3x3 convs on the CPU in f32.
    Winograd(Winograd),
}

/// A convolution run by libtorch.
pub(super) struct TorchConv {
    pub(super) weight: Tensor,
    pub(super) bias: Option<Tensor>,
    pub(super) padding: [i64; 2],
    pub(super) dilation: [i64; 2],
    /// CUDA: cuDNN with autotuning (`benchmark`) and without TF32, so fp32
    /// stays fp32 (libtorch's default lets cuDNN use TF32 on Ampere and
    /// later, about 1e-3 relative error).
    pub(super) cuda_way: bool,
}

/// Whether `t` is a CPU f32 `[N, C, H, W]` tensor whose memory is dense
/// NHWC (strides of size-1 dimensions do not matter).
pub(super) fn is_dense_nhwc(t: &Tensor) -> bool {
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
pub(super) fn dense_nhwc(t: &Tensor) -> Tensor {
    if is_dense_nhwc(t) {
        t.shallow_clone()
    } else {
        to_channels_last(&t.to_kind(Kind::Float).contiguous())
    }
}

/// `[N, C, H, W]` of a 4-D tensor, as `usize`s.
pub(super) fn dims4(t: &Tensor) -> (usize, usize, usize, usize) {
    let s = t.size();
    let u = |i: usize| usize::try_from(s[i]).unwrap_or(0);
    (u(0), u(1), u(2), u(3))
}

impl Conv {
    /// `conv(x) + bias`.
    pub(super) fn forward(
        &self,
        x: &Tensor,
        ctx: &Ctx,
        ws: &mut Workspace,
    ) -> Result<Tensor, NetError> {
        match self {
            Conv::Torch(c) => c.forward(x),
            Conv::Winograd(wg) => winograd_new(wg, x, Epilogue::Store, ctx, ws),
        }
    }

    /// `act(conv(x) + bias)`, zeroed off the board.
    pub(super) fn forward_act(
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
    pub(super) fn forward_add(
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
                let _ = acc.g_add_(&c.forward(x)?);
                Ok(())
            }
        }
    }
}

/// Runs a Winograd conv into a new dense NHWC tensor.
pub(super) fn winograd_new(
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
    pub(super) fn forward(&self, x: &Tensor) -> Result<Tensor, NetError> {
        if self.cuda_way {
            return Ok(x.f_internal_convolution(
                &self.weight,
                self.bias.as_ref(),
                [1, 1],
                self.padding,
                self.dilation,
                false,
                [0, 0],
                1,
                true,
                false,
                true,
                false,
            )?);
        }
        Ok(x.f_conv2d(
            &self.weight,
            self.bias.as_ref(),
            [1, 1],
            self.padding,
            self.dilation,
            1,
        )?)
    }
}

/// A batch norm that cannot be folded into the conv before it (it follows
/// a residual sum), with its activation.
pub(super) enum NormAct {
    /// `relu(x + shift)`: a ReLU batch norm whose scales are all positive,
    /// so `relu(s x + b) = s relu(x + b / s)` and `s` is folded into the
    /// input channels of the convs that read the result (one fused op on
    /// the CPU; libtorch has no CUDA kernel for `_add_relu`, so `fused`
    /// is false there and it runs as an add and an in-place ReLU).
    Shift { shift: Tensor, fused: bool },
    /// `act(x * scale + bias)`.
    Affine {
        scale: Tensor,
        bias: Tensor,
        act: Activation,
    },
}

impl NormAct {
    pub(super) fn forward(&self, x: &Tensor, ctx: &Ctx) -> Tensor {
        let y = match self {
            NormAct::Shift { shift, fused: true } => x.internal_add_relu(shift),
            NormAct::Shift {
                shift,
                fused: false,
            } => (x + shift).relu_(),
            NormAct::Affine { scale, bias, act } => activate(bias.addcmul(x, scale), *act),
        };
        ctx.apply(y)
    }
}

/// `x W (+ b)` with `W` of shape `[in, out]`.
pub(super) struct Dense {
    pub(super) weight: Tensor,
    pub(super) bias: Option<Tensor>,
}

impl Dense {
    pub(super) fn forward(&self, x: &Tensor) -> Tensor {
        match &self.bias {
            Some(b) => b.addmm(x, &self.weight),
            None => x.matmul(&self.weight),
        }
    }
}

pub(super) enum NetBlock {
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
    pub(super) fn forward(
        &self,
        mut x: Tensor,
        ctx: &Ctx,
        ws: &mut Workspace,
    ) -> Result<Tensor, NetError> {
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

pub(super) struct NetTrunk {
    pub(super) initial_conv: Conv,
    pub(super) initial_matmul: Dense,
    pub(super) blocks: Vec<NetBlock>,
    pub(super) tip: NormAct,
}

pub(super) struct NetPolicy {
    /// p1 conv with p1 batch norm folded in.
    pub(super) p1: Conv,
    /// g1 conv with g1 batch norm folded in.
    pub(super) g1: Conv,
    pub(super) g1_act: Activation,
    /// Pooled -> p1 bias, columns scaled by the p1 batch norm.
    pub(super) gpool_to_bias: Dense,
    pub(super) p1_act: Activation,
    pub(super) p2: Conv,
    pub(super) pass1: Dense,
    /// v15+: activation and second layer of the pass MLP.
    pub(super) pass2: Option<(Activation, Dense)>,
}

pub(super) struct NetValue {
    /// v1 conv with its batch norm folded in.
    pub(super) v1: Conv,
    pub(super) v1_act: Activation,
    pub(super) v2: Dense,
    pub(super) v2_act: Activation,
    pub(super) v3: Dense,
    pub(super) sv3: Dense,
    pub(super) ownership: Conv,
}

pub(super) struct Net {
    pub(super) trunk: NetTrunk,
    pub(super) policy: NetPolicy,
    pub(super) value: NetValue,
}

impl Net {
    pub(super) fn forward(
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
