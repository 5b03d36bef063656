//! The libtorch net's layers: convolutions (libtorch or Winograd),
//! normalisation and activation, dense layers, the per-batch masking
//! context, and the layer operations ([`TorchOps`]) through which the
//! shared topology (`network/topology.rs`) runs them.

use super::*;

// ---------------------------------------------------------------------------
// Per-batch masking context

/// The mask and the per-row board-area terms of the pooling layers.
pub(in crate::nn::network) struct Ctx {
    /// `[N,1,H,W]`, or `None` when every row fills the tensor.
    pub(in crate::nn::network) mask: Option<Tensor>,
    /// `mask - 1` (0 on the board, -1 off it), for the masked max.
    pub(in crate::nn::network) mask_minus_one: Option<Tensor>,
    /// The mask as host values `[N*H*W]`, for the Winograd convs.
    pub(in crate::nn::network) mask_host: Option<Vec<f32>>,
    /// `[N,1]`: number of board points.
    pub(in crate::nn::network) area: Tensor,
    /// `[N,1]`: `(sqrt(area) - 14) / 10`.
    pub(in crate::nn::network) size_term: Tensor,
    /// `[N,1]`: `(sqrt(area) - 14)^2 / 100 - 0.1`.
    pub(in crate::nn::network) size_term2: Tensor,
}

impl Ctx {
    pub(in crate::nn::network) fn from_area(
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

    pub(in crate::nn::network) fn masked(mask: Tensor, host: &[f32]) -> Ctx {
        let area = mask
            .sum_dim_intlist([2i64, 3].as_slice(), false, None)
            .reshape([-1, 1]);
        Ctx::from_area(area, Some(mask), Some(host.to_vec()))
    }

    /// A mask already on the device, with no host copy (the Winograd
    /// convs that read one run on the CPU only).
    pub(in crate::nn::network) fn masked_on_device(mask: Tensor) -> Ctx {
        let area = mask
            .sum_dim_intlist([2i64, 3].as_slice(), false, None)
            .reshape([-1, 1]);
        Ctx::from_area(area, Some(mask), None)
    }

    pub(in crate::nn::network) fn full(n: i64, h: i64, w: i64, device: Device, kind: Kind) -> Ctx {
        let area = Tensor::full([n, 1], (h * w) as f64, (kind, device));
        Ctx::from_area(area, None, None)
    }

    /// Zeroes `x` off the board (in place).
    pub(in crate::nn::network) fn apply(&self, mut x: Tensor) -> Tensor {
        if let Some(m) = &self.mask {
            let _ = x.g_mul_(m);
        }
        x
    }

    /// KataGo's gpool features `[N, 3C]`: mean, mean * size term, max over
    /// the board. `x` must already be zero off the board.
    pub(in crate::nn::network) fn pool(&self, x: &Tensor) -> Tensor {
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
    pub(in crate::nn::network) fn pool_value(&self, x: &Tensor) -> Tensor {
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
pub(in crate::nn::network) fn activate(mut x: Tensor, a: Activation) -> Tensor {
    match a {
        Activation::Identity => x,
        Activation::Relu => x.relu_(),
        Activation::Mish => x.mish_(),
        Activation::Silu => x.silu_(),
    }
}

/// A convolution with optional bias (the folded batch norm).
pub(in crate::nn::network) enum Conv {
    /// libtorch's convolution (oneDNN on the CPU, cuDNN on CUDA).
    Torch(TorchConv),
    /// 3x3 convs on the CPU in f32.
    Winograd(Winograd),
}

/// A convolution run by libtorch.
pub(in crate::nn::network) struct TorchConv {
    pub(in crate::nn::network) weight: Tensor,
    pub(in crate::nn::network) bias: Option<Tensor>,
    pub(in crate::nn::network) padding: [i64; 2],
    pub(in crate::nn::network) dilation: [i64; 2],
    /// CUDA: cuDNN with autotuning (`benchmark`) and without TF32, so fp32
    /// stays fp32 (libtorch's default lets cuDNN use TF32 on Ampere and
    /// later, about 1e-3 relative error).
    pub(in crate::nn::network) cuda_way: bool,
}

/// Whether `t` is a CPU f32 `[N, C, H, W]` tensor whose memory is dense
/// NHWC (strides of size-1 dimensions do not matter).
pub(in crate::nn::network) fn is_dense_nhwc(t: &Tensor) -> bool {
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
pub(in crate::nn::network) fn dense_nhwc(t: &Tensor) -> Tensor {
    if is_dense_nhwc(t) {
        t.shallow_clone()
    } else {
        to_channels_last(&t.to_kind(Kind::Float).contiguous())
    }
}

/// `[N, C, H, W]` of a 4-D tensor, as `usize`s.
pub(in crate::nn::network) fn dims4(t: &Tensor) -> (usize, usize, usize, usize) {
    let s = t.size();
    let u = |i: usize| usize::try_from(s[i]).unwrap_or(0);
    (u(0), u(1), u(2), u(3))
}

impl Conv {
    /// `conv(x) + bias`.
    pub(in crate::nn::network) fn forward(
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
    pub(in crate::nn::network) fn forward_act(
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
    pub(in crate::nn::network) fn forward_add(
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
pub(in crate::nn::network) fn winograd_new(
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
    pub(in crate::nn::network) fn forward(&self, x: &Tensor) -> Result<Tensor, NetError> {
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
pub(in crate::nn::network) enum NormAct {
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
    pub(in crate::nn::network) fn forward(&self, x: &Tensor, ctx: &Ctx) -> Tensor {
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
pub(in crate::nn::network) struct Dense {
    pub(in crate::nn::network) weight: Tensor,
    pub(in crate::nn::network) bias: Option<Tensor>,
}

impl Dense {
    pub(in crate::nn::network) fn forward(&self, x: &Tensor) -> Tensor {
        match &self.bias {
            Some(b) => b.addmm(x, &self.weight),
            None => x.matmul(&self.weight),
        }
    }
}

/// The libtorch net's layer operations on one batch (see [`Ops`]).
pub(in crate::nn::network) struct TorchOps<'a> {
    pub(in crate::nn::network) ctx: &'a Ctx,
    pub(in crate::nn::network) ws: &'a mut Workspace,
}

impl Ops for TorchOps<'_> {
    type F = Builder;
    type Act = Tensor;
    type Rows = Tensor;

    fn conv(&mut self, c: &Conv, x: &Tensor) -> Result<Tensor, NetError> {
        c.forward(x, self.ctx, self.ws)
    }

    fn conv_act(&mut self, c: &Conv, x: &Tensor, act: Activation) -> Result<Tensor, NetError> {
        c.forward_act(x, act, self.ctx, self.ws)
    }

    fn conv_add(&mut self, c: &Conv, x: &Tensor, acc: &mut Tensor) -> Result<(), NetError> {
        c.forward_add(x, acc, self.ws)
    }

    fn norm_act(&mut self, na: &NormAct, x: &Tensor) -> Result<Tensor, NetError> {
        Ok(na.forward(x, self.ctx))
    }

    fn dense(&mut self, d: &Dense, x: &Tensor) -> Result<Tensor, NetError> {
        Ok(d.forward(x))
    }

    fn add_row_bias(&mut self, x: &mut Tensor, bias: &Tensor) -> Result<(), NetError> {
        let _ = x.f_add_(&bias.f_unsqueeze(-1)?.f_unsqueeze(-1)?)?;
        Ok(())
    }

    fn act_masked(&mut self, x: &mut Tensor, act: Activation) -> Result<(), NetError> {
        // In place: `activate` and `apply` return the tensor they were given.
        *x = self.ctx.apply(activate(x.shallow_clone(), act));
        Ok(())
    }

    fn act_rows(&mut self, x: &mut Tensor, act: Activation) -> Result<(), NetError> {
        *x = activate(x.shallow_clone(), act);
        Ok(())
    }

    fn global_pool(&mut self, x: &Tensor) -> Result<Tensor, NetError> {
        Ok(self.ctx.pool(x))
    }

    fn value_pool(&mut self, x: &Tensor) -> Result<Tensor, NetError> {
        Ok(self.ctx.pool_value(x))
    }

    fn transformer_block(&mut self, t: &TorchTransformer, x: &mut Tensor) -> Result<(), NetError> {
        t.add_to(x, self.ctx)
    }

    fn rms_tip(&mut self, t: &TorchRmsTip, x: &Tensor) -> Result<Tensor, NetError> {
        Ok(t.forward(x, self.ctx))
    }

    fn give(&mut self, _: Tensor) {}

    fn give_rows(&mut self, _: Tensor) {}
}
