//! The libtorch backend: a KataGo network as libtorch tensors on a CPU or
//! CUDA device (feature `torch`).

use std::path::Path;

use parking_lot::Mutex;
use tch::{Device, Kind, Tensor};

mod layers;
#[cfg(test)]
mod tests;
mod transformer;

use super::builder::*;
use super::topology::{Fold, Net, Ops, RawHeads, TransformerBlock};
use super::winograd::{Epilogue, Winograd, Workspace};
use super::{
    validate_input, HostOutputs, InputSizes, ModelOptions, NetError, NetInput, MAX_BOARD_LEN,
};
use crate::nn::desc::*;
use crate::nn::device::{batch_bucket, Precision};
use crate::nn::model_file::ModelFile;
use crate::nn::outputs::NetOutputs;
use layers::*;
use transformer::{TorchRmsTip, TorchTransformer};

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
    /// Spatial planes and global values per row (the model version's
    /// input features).
    inputs: InputSizes,
    device: Device,
    kind: Kind,
    post_process: PostProcessParams,
    policy_channels: usize,
    num_parameters: usize,
    channels_last: bool,
    /// The CUDA way of feeding the net (see [`Staging`]).
    staged: bool,
    net: Mutex<(Net<Builder>, Workspace, Staging)>,
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
        let precision = if fp16 && device.is_cuda() {
            Precision::F16
        } else {
            Precision::F32
        };
        Self::with_options(
            file,
            device,
            ModelOptions {
                precision,
                channels_last: None,
            },
        )
    }

    /// Builds the network with explicit precision and layout.
    pub fn with_options(
        file: &ModelFile,
        device: Device,
        opts: ModelOptions,
    ) -> Result<Model, NetError> {
        Self::build(file, device, opts, true, true, device.is_cuda())
    }

    /// `fold_relu_scales: false` keeps every trunk batch norm as a separate
    /// scale-and-shift, `winograd: false` runs every conv through libtorch
    /// (tests compare the forms). `cuda_way` builds and feeds the net as on
    /// CUDA (explicit cuDNN convolution flags, no CPU-only fused ops, no
    /// Winograd, padded and staged batches); on the CPU only tests ask for
    /// it, to run that code without a GPU.
    fn build(
        file: &ModelFile,
        device: Device,
        opts: ModelOptions,
        fold_relu_scales: bool,
        winograd: bool,
        cuda_way: bool,
    ) -> Result<Model, NetError> {
        if opts.precision == Precision::Int8 {
            return Err(NetError::Unsupported {
                name: file.name.clone(),
                what: "int8 on libtorch (the Rust CPU backend runs it)".into(),
            });
        }
        let kind = opts.precision.kind();
        // Channels-last convolutions are much faster on the CPU (oneDNN);
        // on CUDA they are what tensor cores want in half precision (as
        // KataGo's cudaUseNHWC = auto), while fp32 stays NCHW.
        let channels_last = opts
            .channels_last
            .unwrap_or(!device.is_cuda() || opts.precision != Precision::F32);
        let b = Builder {
            device,
            kind,
            channels_last,
            fold_relu_scales,
            winograd: winograd && !cuda_way && device == Device::Cpu,
            cuda_way,
        };
        let _guard = tch::no_grad_guard();
        let net = Net::build(&b, file)?;
        Ok(Model {
            name: file.name.clone(),
            version: file.version,
            inputs: InputSizes::of(file),
            device,
            kind,
            post_process: file.post_process,
            policy_channels: file.policy_head.policy_out_channels,
            num_parameters: file.num_parameters(),
            channels_last,
            staged: cuda_way,
            net: Mutex::new((net, Workspace::default(), Staging::default())),
        })
    }

    /// The model's name from its file.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model version (3..=17).
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

    /// The arithmetic the network runs in.
    pub fn precision(&self) -> Precision {
        match self.kind {
            Kind::Half => Precision::F16,
            Kind::BFloat16 => Precision::BF16,
            _ => Precision::F32,
        }
    }

    /// Whether activations are channels-last (NHWC).
    pub fn is_channels_last(&self) -> bool {
        self.channels_last
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

    /// Runs one batch. Outputs are from the side to move's perspective
    /// (see [`NetOutputs`]).
    pub fn forward(&self, batch: &NetInput) -> Result<NetOutputs, NetError> {
        validate_input(batch, self.inputs)?;
        if self.staged {
            return self.forward_staged(batch);
        }
        let (n, h, w) = (batch.batch_size, batch.height, batch.width);
        let (n64, h64, w64) = (n as i64, h as i64, w as i64);
        let _guard = tch::no_grad_guard();
        let to_dev = |data: &[f32], shape: &[i64]| -> Result<Tensor, NetError> {
            Ok(Tensor::f_from_slice(data)?
                .f_reshape(shape)?
                .f_to_device(self.device)?
                .f_to_kind(self.kind)?)
        };
        let (c, g) = (self.inputs.spatial as i64, self.inputs.global as i64);
        let mut spatial = to_dev(batch.spatial, &[n64, c, h64, w64])?;
        if self.channels_last {
            spatial = to_channels_last(&spatial);
        }
        let global = to_dev(batch.global, &[n64, g])?;
        let meta = match batch.meta {
            Some(m) => Some(to_dev(m, &[n64, self.inputs.meta as i64])?),
            None => None,
        };
        let ctx = match batch.mask {
            Some(m) => Ctx::masked(to_dev(m, &[n64, 1, h64, w64])?, m),
            None => Ctx::full(n64, h64, w64, self.device, self.kind),
        };
        let raw = {
            let mut guard = self.net.lock();
            let (net, ws, _) = &mut *guard;
            net.forward(
                &mut TorchOps { ctx: &ctx, ws },
                spatial,
                &global,
                meta.as_ref(),
            )?
        };
        Ok(raw.into_outputs(self, n, h, w)?)
    }

    /// The CUDA way (see [`Staging`]): the batch padded to
    /// [`batch_bucket`] rows, its inputs written into one host buffer
    /// (pinned on CUDA) and copied to the device in one non-blocking copy,
    /// the outputs of the real rows gathered into one device tensor and
    /// copied back in one copy.
    fn forward_staged(&self, batch: &NetInput) -> Result<NetOutputs, NetError> {
        let (n, h, w) = (batch.batch_size, batch.height, batch.width);
        let rows = batch_bucket(n);
        let hw = h * w;
        let InputSizes {
            spatial: c,
            global: g,
            meta: m,
        } = self.inputs;
        let (sp_len, gl_len, meta_len, mask_len) = (rows * c * hw, rows * g, rows * m, rows * hw);
        let with_mask = batch.mask.is_some();
        let total = sp_len + gl_len + meta_len + if with_mask { mask_len } else { 0 };
        let _guard = tch::no_grad_guard();
        let mut guard = self.net.lock();
        let (net, ws, staging) = &mut *guard;
        let host = staging.input(total, self.device)?;
        // SAFETY: `host` is a dense 1-D f32 CPU tensor of at least `total`
        // values, owned by this model and used under its lock; the copy
        // that last read it (the previous batch's) finished before that
        // batch's outputs were copied back, which is a blocking copy on the
        // same stream.
        let buf = unsafe { std::slice::from_raw_parts_mut(host.data_ptr() as *mut f32, total) };
        let (sp, rest) = buf.split_at_mut(sp_len);
        let (gl, rest) = rest.split_at_mut(gl_len);
        let (meta, mask) = rest.split_at_mut(meta_len);
        sp[..batch.spatial.len()].copy_from_slice(batch.spatial);
        sp[batch.spatial.len()..].fill(0.0);
        gl[..batch.global.len()].copy_from_slice(batch.global);
        gl[batch.global.len()..].fill(0.0);
        let given = batch.meta.unwrap_or_default();
        meta[..given.len()].copy_from_slice(given);
        meta[given.len()..].fill(0.0);
        if let Some(m) = batch.mask {
            mask[..m.len()].copy_from_slice(m);
            // Padding rows get a whole board: no empty-board pooling.
            mask[m.len()..].fill(1.0);
        }
        let (r64, h64, w64) = (rows as i64, h as i64, w as i64);
        let dev = host.f_narrow(0, 0, total as i64)?.f_to_device_(
            self.device,
            Kind::Float,
            true,
            false,
        )?;
        let part = |start: usize, len: usize, shape: &[i64]| -> Result<Tensor, NetError> {
            Ok(dev
                .f_narrow(0, start as i64, len as i64)?
                .f_view(shape)?
                .f_to_kind(self.kind)?)
        };
        let mut spatial = part(0, sp_len, &[r64, c as i64, h64, w64])?;
        if self.channels_last {
            spatial = to_channels_last(&spatial);
        }
        let global = part(sp_len, gl_len, &[r64, g as i64])?;
        let meta = match batch.meta {
            Some(_) => Some(part(sp_len + gl_len, meta_len, &[r64, m as i64])?),
            None => None,
        };
        let ctx = if with_mask {
            let start = sp_len + gl_len + meta_len;
            Ctx::masked_on_device(part(start, mask_len, &[r64, 1, h64, w64])?)
        } else {
            Ctx::full(r64, h64, w64, self.device, self.kind)
        };
        let host = net
            .forward(
                &mut TorchOps { ctx: &ctx, ws },
                spatial,
                &global,
                meta.as_ref(),
            )
            .and_then(|raw| raw.gather(n, staging, self.device));
        if let (Err(_), Device::Cuda(i)) = (&host, self.device) {
            // The input copy may still be reading the staging buffer: let
            // it finish before the next batch writes there.
            tch::Cuda::synchronize(i as i64);
        }
        drop(guard);
        Ok(host?.into_outputs(
            (n, h, w),
            self.policy_channels,
            self.version,
            &self.post_process,
        ))
    }
}

/// Host buffers of the CUDA way of feeding the net: one for the inputs
/// (spatial, global and mask values of a batch, back to back) and one for
/// the outputs, grown as needed and reused, pinned (page-locked) on CUDA
/// so copies run at full bus speed and the input copy need not block. A
/// pinned allocation that fails (no CUDA) leaves ordinary memory.
#[derive(Default)]
struct Staging {
    input: Option<Tensor>,
    output: Option<Tensor>,
}

impl Staging {
    fn input(&mut self, len: usize, device: Device) -> Result<Tensor, NetError> {
        Self::buffer(&mut self.input, len, device)
    }

    fn output(&mut self, len: usize, device: Device) -> Result<Tensor, NetError> {
        Self::buffer(&mut self.output, len, device)
    }

    /// A dense 1-D f32 CPU tensor of at least `len` values.
    fn buffer(slot: &mut Option<Tensor>, len: usize, device: Device) -> Result<Tensor, NetError> {
        if let Some(t) = slot.as_ref().filter(|t| t.numel() >= len) {
            return Ok(t.shallow_clone());
        }
        // Room to grow a little without a new allocation each time.
        let cap = (len + len / 4).max(1) as i64;
        let plain = Tensor::f_zeros([cap], (Kind::Float, Device::Cpu))?;
        let t = if device.is_cuda() {
            plain.f_pin_memory(device).unwrap_or(plain)
        } else {
            plain
        };
        *slot = Some(t.shallow_clone());
        Ok(t)
    }
}

/// Raw head outputs still on the device (the ownership before its tanh).
type RawOutputs = RawHeads<Tensor, Tensor>;

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
        let host = HostOutputs {
            policy: to_vec(&self.policy)?,
            pass: to_vec(&self.pass)?,
            value: to_vec(&self.value)?,
            score: to_vec(&self.score)?,
            ownership: to_vec(&self.ownership.tanh())?,
        };
        Ok(host.into_outputs(
            (n, h, w),
            model.policy_channels,
            model.version,
            &model.post_process,
        ))
    }

    /// The first `n` rows of every output, gathered on the device into
    /// one `[n, K]` f32 tensor and copied to the host in one (blocking)
    /// copy through the staging buffer, then split.
    fn gather(
        self,
        n: usize,
        staging: &mut Staging,
        device: Device,
    ) -> Result<HostOutputs, NetError> {
        let n64 = n as i64;
        let rows = |t: &Tensor| -> Result<Tensor, NetError> {
            Ok(t.f_narrow(0, 0, n64)?
                .f_flatten(1, -1)?
                .f_to_kind(Kind::Float)?)
        };
        let parts = [
            rows(&self.policy)?,
            rows(&self.pass)?,
            rows(&self.value)?,
            rows(&self.score)?,
            rows(&self.ownership.f_tanh()?)?,
        ];
        let widths: Vec<usize> = parts.iter().map(|t| t.size()[1] as usize).collect();
        let all = Tensor::f_cat(&parts, 1)?;
        let k: usize = widths.iter().sum();
        let host = staging.output(n * k, device)?;
        let mut dst = host
            .f_narrow(0, 0, (n * k) as i64)?
            .f_view([n64, k as i64])?;
        dst.f_copy_(&all)?;
        // SAFETY: `host` is a dense 1-D f32 CPU tensor of at least n*k
        // values that the blocking copy above has finished writing; it is
        // used under the model's lock only.
        let flat = unsafe { std::slice::from_raw_parts(host.data_ptr() as *const f32, n * k) };
        let mut out: Vec<Vec<f32>> = widths.iter().map(|w| Vec::with_capacity(n * w)).collect();
        for row in flat.chunks_exact(k) {
            let mut at = 0;
            for (o, &w) in out.iter_mut().zip(&widths) {
                o.extend_from_slice(&row[at..at + w]);
                at += w;
            }
        }
        let mut it = out.into_iter();
        let mut next = || it.next().unwrap_or_default();
        Ok(HostOutputs {
            policy: next(),
            pass: next(),
            value: next(),
            score: next(),
            ownership: next(),
        })
    }
}

// ---------------------------------------------------------------------------
// Building tensors from descriptors

/// How the libtorch net stores its layers (see the [`Fold`] impl).
pub(super) struct Builder {
    pub(super) device: Device,
    pub(super) kind: Kind,
    pub(super) channels_last: bool,
    pub(super) fold_relu_scales: bool,
    /// Run 3x3 convs by Winograd (CPU, f32 only).
    pub(super) winograd: bool,
    /// Built as for CUDA: explicit cuDNN convolution flags, no CPU-only
    /// fused ops.
    pub(super) cuda_way: bool,
}

/// The same NCHW tensor with NHWC strides (tch 0.24 has no memory-format
/// API; libtorch recognises the strides and picks its channels-last kernels).
pub(super) fn to_channels_last(t: &Tensor) -> Tensor {
    t.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

impl Builder {
    /// Puts a 4-D tensor in the layout the convolutions run fastest in.
    pub(super) fn layout(&self, t: Tensor) -> Tensor {
        if self.channels_last {
            to_channels_last(&t)
        } else {
            t
        }
    }

    /// A weight tensor of `shape` in the net's precision, denormal values
    /// flushed to 0 (see [`flush_denormals`]).
    pub(super) fn tensor(&self, data: &[f32], shape: &[i64]) -> Tensor {
        let data = flush_denormals(data);
        Tensor::from_slice(&data)
            .reshape(shape)
            .to_device(self.device)
            .to_kind(self.kind)
    }
}

/// The libtorch net stores convs as libtorch convolutions or (CPU, f32,
/// 3x3) Winograd weights, everything else as tensors.
impl Fold for Builder {
    type Conv = Conv;
    type NormAct = NormAct;
    type Dense = Dense;
    type Transformer = TorchTransformer;
    type RmsTip = TorchRmsTip;

    fn folded_conv(&self, c: &ConvLayer, w: &[f32], bias_values: Option<Vec<f32>>) -> Conv {
        let winograd = self.channels_last
            && self.device == Device::Cpu
            && self.kind == Kind::Float
            && self.winograd
            && (c.y_size, c.x_size, c.dilation_y, c.dilation_x) == (3, 3, 1, 1);
        if winograd {
            return Conv::Winograd(Winograd::new(
                w,
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
            weight: self.layout(self.tensor(w, &shape)),
            bias,
            padding: [
                (c.y_size as i64 / 2) * c.dilation_y as i64,
                (c.x_size as i64 / 2) * c.dilation_x as i64,
            ],
            dilation: [c.dilation_y as i64, c.dilation_x as i64],
            cuda_way: self.cuda_way,
        })
    }

    /// A normalisation + activation, and the per-channel factor (if any)
    /// the convs reading its output must fold into their input channels.
    fn norm_act(&self, bn: &BatchNormLayer, act: &ActivationLayer) -> (NormAct, Option<Vec<f32>>) {
        let shape = [1, bn.num_channels as i64, 1, 1];
        match fold_norm_act(bn, act, self.fold_relu_scales) {
            (NormActParams::Shift(shift), s) => (
                NormAct::Shift {
                    shift: self.tensor(&shift, &shape),
                    fused: !self.cuda_way && self.kind == Kind::Float,
                },
                s,
            ),
            (NormActParams::Affine { scale, bias, act }, s) => (
                NormAct::Affine {
                    scale: self.tensor(&scale, &shape),
                    bias: self.tensor(&bias, &shape),
                    act,
                },
                s,
            ),
        }
    }

    /// A dense layer; `col_scale` multiplies each output column (a folded
    /// batch-norm scale), `bias` is added after.
    fn dense(&self, m: &MatMulLayer, col_scale: Option<&[f32]>, bias: Option<&[f32]>) -> Dense {
        let w = fold_dense(m, col_scale);
        Dense {
            weight: self.tensor(&w, &[m.in_channels as i64, m.out_channels as i64]),
            bias: bias.map(|b| self.tensor(b, &[m.out_channels as i64])),
        }
    }

    fn transformer(&self, block: TransformerBlock<'_>) -> Result<TorchTransformer, String> {
        TorchTransformer::build(self, block)
    }

    fn rms_tip(&self, norm: &RmsNormLayer, act: Activation) -> TorchRmsTip {
        TorchRmsTip::new(self, norm, act)
    }
}
