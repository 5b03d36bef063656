//! 3x3 and 5x5 convolutions by Winograd's minimal filtering on the CPU,
//! channels-last.
//!
//! A direct 3x3 convolution of the 19x19 trunk costs 9 multiply-adds per
//! input channel and output point; Winograd's F(4x4, 3x3) computes each
//! 4x4 output tile from a 6x6 input tile with 36 instead of 144, so the
//! convolution becomes 36 small matrix products (one per tile position)
//! between cheap linear transforms done in Rust. KataGo's Eigen backend uses
//! the same transforms; with them the trunk's GEMM work drops 4x and the CPU
//! speed target is reachable at the small batches a search produces.
//!
//! F(3x3, 3x3) (5x5 input tiles, 25 products per 3x3 output tile) does 2.25x
//! less GEMM work than the direct form instead of 4x, but tiles a 9x9 board
//! exactly where F(4x4) computes a 12x12 output: 225 transformed points per
//! channel pair instead of 324, and needs 25 transformed weight matrices
//! instead of 36, which matters at a search's small batches, where every
//! evaluation streams them all from cache. F(5x5, 3x3) (7x7 input tiles,
//! 49 products per 5x5 output tile) does 3.7x less GEMM work than the
//! direct form, at about twice F(4x4)'s rounding error and 1.5x its
//! transform work per point; it tiles 13x13 and 15x15 with 9 tiles (441
//! points against 576 by F(4x4)) and 19x19 with 16 (784 against 900).
//! [`Tiling::cheapest`] picks among them.
//!
//! KataGo's nets open with a 5x5 convolution of the input features (22
//! channels for g170's): by im2col it was about 12% of a 19x19 evaluation
//! of g170 b6c96 (25 multiply-adds per channel pair and point). F(3x3,
//! 5x5) (7x7 input tiles, 49 products per 3x3 output tile: 6.7 per point
//! on a 19x19 board) does 3.8x fewer; it shares F(5x5, 3x3)'s input
//! transform. Measured 2026-12-06 on AMD Zen 1 (AVX2, `engine benchmark
//! -nn -batch 1`, g170 b6c96, 3 alternated rounds): 1.05-1.10x
//! evaluations/s on 9x9 to 19x19.
//!
//! The output transform also applies the conv's bias, a ReLU, the board
//! mask, or adds into a residual tensor, so those need no separate passes.
//!
//! Activations are `[N, C, H, W]` tensors with NHWC strides, read and
//! written in place through their data pointers (see [`NhwcView`]).

#[cfg(feature = "torch")]
use tch::{Device, Kind, Tensor};

mod rows;
mod transforms;

use rows::{
    transform_gathered, transform_rows, BoardSink, Shared, Strided, StridedSink, ACCUMULATE,
    RELU_MASKED, STORE,
};
pub(super) use transforms::transform_kernel;
use transforms::{Transforms, F3, F3K5, F4, F5};

/// Calls `f::<T, IN, OUT>(args)` with the transforms of `tiling`: the one
/// place that pairs each [`Tiling`] with its [`Transforms`] and tile sizes.
macro_rules! with_tiling {
    ($tiling:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $tiling {
            Tiling::F5 => $f::<F5, 7, 5>($($arg),*),
            Tiling::F4 => $f::<F4, 6, 4>($($arg),*),
            Tiling::F3 => $f::<F3, 5, 3>($($arg),*),
            Tiling::F3K5 => $f::<F3K5, 7, 3>($($arg),*),
        }
    };
}
pub(super) use with_tiling;

/// Side of an F(4x4, 3x3) input tile.
#[cfg(feature = "torch")]
const IN_TILE: usize = 6;
/// Values per F(4x4, 3x3) input tile (and number of matrix products).
#[cfg(feature = "torch")]
const TILE_AREA: usize = IN_TILE * IN_TILE;

/// Which Winograd algorithm tiles the board (and so the kernel size it
/// convolves with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tiling {
    /// F(5x5, 3x3): 7x7 input tiles, 5x5 output tiles.
    F5,
    /// F(4x4, 3x3): 6x6 input tiles, 4x4 output tiles.
    F4,
    /// F(3x3, 3x3): 5x5 input tiles, 3x3 output tiles.
    F3,
    /// F(3x3, 5x5): 7x7 input tiles, 3x3 output tiles, for 5x5 kernels.
    F3K5,
}

impl Tiling {
    /// Side of the kernel.
    pub(super) fn taps(self) -> usize {
        match self {
            Tiling::F5 | Tiling::F4 | Tiling::F3 => 3,
            Tiling::F3K5 => 5,
        }
    }

    /// Side of an input tile.
    pub(super) fn in_tile(self) -> usize {
        self.out_tile() + self.taps() - 1
    }

    /// Side of an output tile.
    pub(super) fn out_tile(self) -> usize {
        match self {
            Tiling::F5 => 5,
            Tiling::F4 => 4,
            Tiling::F3 | Tiling::F3K5 => 3,
        }
    }

    /// Zero rows and columns the input needs on each side: the kernel's
    /// radius.
    fn border(self) -> usize {
        self.taps() / 2
    }

    /// Values per input tile: the number of matrix products.
    pub(super) fn area(self) -> usize {
        self.in_tile() * self.in_tile()
    }

    /// Transformed values per channel of an `h x w` image: the rows of all
    /// the matrix products together, so the GEMM work.
    pub(super) fn points(self, h: usize, w: usize) -> usize {
        self.tiles(h, w) * self.area()
    }

    /// Tiles of side [`Tiling::out_tile`] over an `h x w` image.
    pub(super) fn tiles(self, h: usize, w: usize) -> usize {
        h.div_ceil(self.out_tile()) * w.div_ceil(self.out_tile())
    }

    /// The tiling with the least estimated cost for a batch of `n` `h x w`
    /// images: the GEMM rows (`n` times [`Tiling::points`]) plus
    /// [`WEIGHT_COST_ROWS`] for each transformed weight matrix the
    /// products stream through (F(4x4) on a tie, as its transforms are
    /// cheaper per output point). F(3x3) on 9x9 at any batch (225 points
    /// against 324), and on 13x13 up to a batch of 3 (at 1: 625 + 400
    /// against 576 + 576); F(4x4) on 13x13 from a batch of 4, on 19x19, and
    /// on 7x7 from a batch of 3 (at 1 and 2 its 9 F(3x3) tiles win).
    ///
    /// Then, on the AVX2 and AVX-512 kernels, F(5x5) where
    /// [`Tiling::f5_pays`]: 13x13 to 15x15 and 17x17 to 20x20 at any batch
    /// (and larger boards whose tiles fall as well: 25x25, 29x29, ...), 9x9
    /// from a batch of 3 (AVX2) or 4 (AVX-512); never where `with_f5` is
    /// false (bf16 convs: see `Conv::tiling`).
    pub(super) fn cheapest(n: usize, h: usize, w: usize, with_f5: bool) -> Tiling {
        use crate::nn::cpu_info::SimdPath;
        let cost = |t: Tiling| n * t.points(h, w) + WEIGHT_COST_ROWS * t.area();
        let small = if cost(Tiling::F3) < cost(Tiling::F4) {
            Tiling::F3
        } else {
            Tiling::F4
        };
        if !with_f5 {
            return small;
        }
        let min_rows_near = match simd_path() {
            SimdPath::Avx2Fma => F5_MIN_ROWS_NEAR_AVX2,
            SimdPath::Avx512 => F5_MIN_ROWS_NEAR_AVX512,
            // Not measured on the portable path: it keeps F(3x3) and F(4x4).
            SimdPath::Portable => return small,
        };
        if Tiling::f5_pays(n, h, w, small, min_rows_near) {
            Tiling::F5
        } else {
            small
        }
    }

    /// Whether F(5x5) beats `other` on a batch of `n` `h x w` images with
    /// the AVX2 or AVX-512 kernels: when it has at most 9/10 of `other`'s points and
    /// at least [`F5_MIN_ROWS`] rows per product, against F(3x3) (whose
    /// 5x5 transforms cost less per point than F(4x4)'s 6x6) only with
    /// `min_rows_near` rows where it saves less than 1/5 of the
    /// points (its 7x7 transforms cost about 1.5x F(4x4)'s per point, and
    /// its 49 weight matrices, 21 MB for g170 b6c96, stream from memory).
    /// Measured on a 2-core AMD EPYC Zen 1 VM (AVX2+FMA, no AVX-512), g170
    /// b6c96, `engine benchmark -nn`, alternated rounds, evaluations/s:
    /// 13x13 at batch 1, 2 and 8 1.09x, 1.13x and 1.25x F(3x3) or F(4x4)
    /// (441 points against 625 and 576; 2026-12-06 morning); 19x19 (784
    /// points against 900) 1.04x, 1.07x and 1.10x F(4x4) at batch 1, 2 and
    /// 8 (8, 6 and 4 pairs; 2026-12-06 noon, after the transforms lost
    /// their copies: a tie at batches 1 and 2 before them), 1.07x at batch
    /// 1 with the weights on 2 MB pages (13x13 1.23x F(3x3)). Where it has
    /// 0.87 of F(3x3)'s points (`scripts/nn_ab.sh` with `ENGINE_WINOGRAD=f5`,
    /// 6 pairs, 2026-12-06 evening): 17x17 1.01x and 1.05x at batch 1 and
    /// 8, 18x18 1.02x at batch 1, 9x9 (4 tiles a board) 0.77x, 0.90x,
    /// 0.98x, 1.01x and 1.03x at batch 1, 2, 3, 4 and 8 (with the weights
    /// on 2 MB pages 0.86x, 1.00x, 1.07x and 1.07x at 1 to 4). At batch 1,
    /// 21x21 (F(3x3)'s points) 0.96x and 23x23 (0.945 of F(4x4)'s) 1.00x:
    /// they keep those. 20x20 has 19x19's tile counts; the boards past
    /// 23x23 are not measured. With the AVX-512 kernels (AMD Zen 4, 2-core
    /// EPYC family 25 model 17 VM, 6 pairs each, 2026-12-06 evening): 19x19
    /// 1.06x and 1.05x at batch 1 and 8, 13x13 1.07x and 1.25x, 17x17 1.05x
    /// at batch 1, 9x9 0.88x, 0.89x, 0.92x, 1.05x and 1.04x at batch 1, 2,
    /// 3, 4 and 8, 21x21 0.95x at batch 1: the same rule but for the rows
    /// it needs against F(3x3) ([`F5_MIN_ROWS_NEAR_AVX512`]).
    fn f5_pays(n: usize, h: usize, w: usize, other: Tiling, min_rows_near: usize) -> bool {
        let rows = n * Tiling::F5.tiles(h, w);
        let (f5, theirs) = (Tiling::F5.points(h, w), other.points(h, w));
        let saves_a_tenth = rows >= F5_MIN_ROWS && 10 * f5 <= 9 * theirs;
        match other {
            Tiling::F3 => saves_a_tenth && (rows >= min_rows_near || 5 * f5 <= 4 * theirs),
            _ => saves_a_tenth,
        }
    }

    /// The tiling the environment variable `ENGINE_WINOGRAD` forces on
    /// every 3x3 conv that can build it (`f3`, `f4`, `f5`), or `None` for
    /// [`Tiling::cheapest`]'s rule (unset, `auto`, or a value that is not a
    /// tiling, reported once on stderr). Read once. For measuring the rule
    /// on a CPU it was not measured on (`scripts/nn_ab.sh`), as
    /// `ENGINE_SIMD` compares the SIMD paths: the rule's F(5x5) is measured
    /// on AMD Zen 1's AVX2 kernels and AMD Zen 4's AVX-512 ones only.
    pub(super) fn forced() -> Option<Tiling> {
        static FORCED: std::sync::OnceLock<Option<Tiling>> = std::sync::OnceLock::new();
        *FORCED.get_or_init(|| {
            let value = std::env::var("ENGINE_WINOGRAD").ok()?;
            match Tiling::parse_forced(&value) {
                Ok(Some(tiling)) => {
                    eprintln!(
                        "ENGINE_WINOGRAD={value}: 3x3 convs run F({0}x{0}, 3x3) tiles",
                        tiling.out_tile()
                    );
                    Some(tiling)
                }
                Ok(None) => None,
                Err(e) => {
                    eprintln!("{e}; the measured rule picks the tiling");
                    None
                }
            }
        })
    }

    /// `ENGINE_WINOGRAD`'s value: a 3x3 tiling, or `None` for `auto`.
    pub(super) fn parse_forced(value: &str) -> Result<Option<Tiling>, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(None),
            "f3" => Ok(Some(Tiling::F3)),
            "f4" => Ok(Some(Tiling::F4)),
            "f5" => Ok(Some(Tiling::F5)),
            _ => Err(format!(
                "ENGINE_WINOGRAD={value}: not one of auto, f3, f4, f5"
            )),
        }
    }
}

/// The fewest GEMM rows (tiles of the batch) per F(5x5) product for it to
/// pay: a 9x9 board's 4 tiles left each 36 KB weight matrix (96 channels)
/// too few rows to hide reading it, 13x13's 9 did not.
const F5_MIN_ROWS: usize = 9;

/// The fewest GEMM rows per F(5x5) product for it to pay against F(3x3)
/// where it saves less than 1/5 of the points, with the AVX2 kernels: with
/// the weights on 2 MB pages, 9x9 batches of 2 (8 rows) ran 1.00x F(3x3),
/// of 3 (12) 1.07x, of 4 (16) 1.07x (0.90x, 0.98x and 1.01x on 4 KB pages;
/// AMD Zen 1).
const F5_MIN_ROWS_NEAR_AVX2: usize = 12;

/// The same with the AVX-512 kernels (12 x 32 register blocks): 9x9
/// batches of 3 (12 rows) ran 0.92x F(3x3), of 4 (16) 1.05x (AMD Zen 4).
const F5_MIN_ROWS_NEAR_AVX512: usize = 16;

/// What [`Tiling::cheapest`] counts reading one transformed weight matrix
/// as, in GEMM rows. Measured 2026-11-28 on a 2-core Zen 4 VM (g170 b6c96,
/// `engine benchmark`, 4 and 3 alternated rounds): on 13x13 at batch 1,
/// F(3x3) ran 11% (AVX-512 kernels) and 24% (AVX2) faster than F(4x4)
/// despite 8% more rows, and 2% slower at batch 8; on 19x19 at batch 1
/// F(4x4) ran 9% faster. Any value from about 5 to 29 orders those
/// cases so; 16 is in the middle.
const WEIGHT_COST_ROWS: usize = 16;

/// Scratch buffers shared by every Winograd conv of a network.
#[derive(Default)]
pub(super) struct Workspace {
    /// Transformed inputs `[area, tiles, in_channels]` (the buffer may be
    /// longer: it holds the largest conv's so far).
    pub(super) v: Vec<f32>,
    /// Transformed outputs `[area, tiles, out_channels]` (as `v`).
    pub(super) m: Vec<f32>,
    /// `c` zeros: the rows off the board that a tile reads (grown to the
    /// widest conv input).
    zero_row: Vec<f32>,
}

/// Where a conv's input is read: `[n, h, w, c]` NHWC, with a row of `c`
/// zeros for every point off the board.
#[derive(Clone, Copy)]
struct Board<'a> {
    input: &'a [f32],
    zero_row: &'a [f32],
}

impl<'a> Board<'a> {
    /// The `c` values of point `(y, x)` of image `b`, zeros if the point
    /// is off the `h x w` board.
    #[inline(always)]
    fn point(self, g: Geometry, c: usize, (b, y, x): (usize, isize, isize)) -> &'a [f32] {
        if y < 0 || x < 0 || y >= g.h as isize || x >= g.w as isize {
            return &self.zero_row[..c];
        }
        &self.input[((b * g.h + y as usize) * g.w + x as usize) * c..][..c]
    }
}

/// What the output transform does with each finished value `y` (conv plus
/// bias) at a board point with mask value `mask` (1 without a mask).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Epilogue {
    /// `out = y`.
    Store,
    /// `out = relu(y) * mask`.
    ReluMasked,
    /// `out += y` (a residual connection; no masking, as in KataGo).
    Accumulate,
}

/// A 3x3, stride 1, undilated, zero-padded convolution with its weights
/// already transformed, for the libtorch net (its GEMMs run in libtorch).
#[cfg(feature = "torch")]
pub(super) struct Winograd {
    in_channels: usize,
    out_channels: usize,
    /// `[36, in, out]`: `G w G^T` per (in, out) pair.
    kernel: Tensor,
    /// One per output channel (zeros when the conv has none).
    bias: Vec<f32>,
}

#[cfg(feature = "torch")]
impl Winograd {
    /// `weights` is `[out, in, 3, 3]` row-major (the model file's layout,
    /// batch norms already folded in); `bias` one per output channel.
    pub(super) fn new(
        weights: &[f32],
        bias: Option<&[f32]>,
        in_channels: usize,
        out_channels: usize,
    ) -> Winograd {
        let u = transform_kernel(weights, in_channels, out_channels, Tiling::F4);
        let kernel = Tensor::from_slice(&u).reshape([
            TILE_AREA as i64,
            in_channels as i64,
            out_channels as i64,
        ]);
        Winograd {
            in_channels,
            out_channels,
            kernel,
            bias: bias.map_or_else(|| vec![0.0; out_channels], <[f32]>::to_vec),
        }
    }

    /// Input channels.
    pub(super) fn in_channels(&self) -> usize {
        self.in_channels
    }

    /// Output channels.
    pub(super) fn out_channels(&self) -> usize {
        self.out_channels
    }

    /// Convolves `input` (`[n, h, w, in]` NHWC) into `out` (`[n, h, w, out]`)
    /// as `epilogue` says; `mask` is `[n, h, w]` or `None` for all ones.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run(
        &self,
        input: &[f32],
        (n, h, w): (usize, usize, usize),
        out: &mut [f32],
        epilogue: Epilogue,
        mask: Option<&[f32]>,
        ws: &mut Workspace,
    ) -> Result<(), tch::TchError> {
        let (ci, co) = (self.in_channels, self.out_channels);
        assert_eq!(input.len(), n * h * w * ci);
        assert_eq!(out.len(), n * h * w * co);
        let g = Geometry::new(n, h, w, Tiling::F4);
        let tiles = g.tiles();
        ws.v.resize(TILE_AREA * tiles * ci, 0.0);
        ws.m.resize(TILE_AREA * tiles * co, 0.0);

        let threads = tch::get_num_threads().max(1) as usize;
        input_transform(input, g, ci, ws, threads);
        {
            let shape = |c: usize| [TILE_AREA as i64, tiles as i64, c as i64];
            // SAFETY: both buffers hold exactly 36 * tiles * channels f32s,
            // contiguous, and outlive these views, which are dropped at the
            // end of this block; libtorch writes only into `m`'s view.
            let (v, m) = unsafe {
                (
                    Tensor::from_blob(
                        ws.v.as_ptr().cast(),
                        &shape(ci),
                        &[],
                        Kind::Float,
                        Device::Cpu,
                    ),
                    Tensor::from_blob(
                        ws.m.as_mut_ptr().cast(),
                        &shape(co),
                        &[],
                        Kind::Float,
                        Device::Cpu,
                    ),
                )
            };
            let _ = v.f_bmm_out(&m, &self.kernel)?;
        }
        if let Some(mk) = mask {
            assert_eq!(mk.len(), n * h * w);
        }
        output_transform(&ws.m, g, co, (&self.bias, epilogue, mask), out, threads);
        Ok(())
    }
}

/// The tiles part `part` of `parts` handles.
fn tile_range(tiles: usize, part: usize, parts: usize) -> std::ops::Range<usize> {
    (tiles * part / parts)..(tiles * (part + 1) / parts)
}

/// The path the transforms take ([`crate::nn::cpu_info::SimdPath::current`]):
/// the same Rust, compiled for AVX-512, AVX2 or the build's baseline.
fn simd_path() -> crate::nn::cpu_info::SimdPath {
    crate::nn::cpu_info::SimdPath::current()
}

/// Geometry of one Winograd run.
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    n: usize,
    h: usize,
    w: usize,
    tiles_y: usize,
    tiles_x: usize,
    tiling: Tiling,
}

impl Geometry {
    /// The tiling of `n` images of `h x w` points by `tiling`.
    pub(super) fn new(n: usize, h: usize, w: usize, tiling: Tiling) -> Geometry {
        Geometry {
            n,
            h,
            w,
            tiles_y: h.div_ceil(tiling.out_tile()),
            tiles_x: w.div_ceil(tiling.out_tile()),
            tiling,
        }
    }

    /// Number of tiles.
    pub(super) fn tiles(&self) -> usize {
        self.n * self.tiles_y * self.tiles_x
    }

    /// Image, tile row and tile column of tile `t`.
    fn split(&self, t: usize) -> (usize, usize, usize) {
        let per_image = self.tiles_y * self.tiles_x;
        (
            t / per_image,
            (t % per_image) / self.tiles_x,
            t % self.tiles_x,
        )
    }
}

/// Fills `ws.v` (`[area, tiles, c]`) with `B^T d B` of every input tile `d`
/// (with output tiles of side `s` and a kernel of radius `r`, tile `(ty,
/// tx)` starts at board point `(s ty - r, s tx - r)`; points off the tensor
/// are zero padding), on up to `threads` OpenMP threads.
pub(super) fn input_transform(
    input: &[f32],
    g: Geometry,
    c: usize,
    ws: &mut Workspace,
    threads: usize,
) {
    assert!(
        input.len() >= g.n * g.h * g.w * c,
        "Winograd input too short"
    );
    if ws.zero_row.len() < c {
        ws.zero_row.resize(c, 0.0);
    }
    let board = Board {
        input,
        zero_row: &ws.zero_row,
    };
    let v = Shared::new(&mut ws.v);
    let path = simd_path();
    super::omp::parallel(threads, &|part, parts| {
        let range = tile_range(g.tiles(), part, parts);
        #[cfg(target_arch = "x86_64")]
        {
            use crate::nn::cpu_info::SimdPath;
            // SAFETY: the CPU has the path's instructions (checked); tiles
            // are disjoint per part.
            match path {
                SimdPath::Avx512 => unsafe {
                    return with_tiling!(g.tiling, input_tiles_avx512(board, g, c, v, range));
                },
                SimdPath::Avx2Fma => unsafe {
                    return with_tiling!(g.tiling, input_tiles_avx2(board, g, c, v, range));
                },
                SimdPath::Portable => {}
            }
        }
        let _ = path;
        // SAFETY: tiles are disjoint per part.
        unsafe { with_tiling!(g.tiling, input_tiles(board, g, c, v, range)) };
    });
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn input_tiles_avx2<T: Transforms<IN, OUT>, const IN: usize, const OUT: usize>(
    board: Board,
    g: Geometry,
    c: usize,
    v: Shared,
    range: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe { input_tiles::<T, IN, OUT>(board, g, c, v, range) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn input_tiles_avx512<T: Transforms<IN, OUT>, const IN: usize, const OUT: usize>(
    board: Board,
    g: Geometry,
    c: usize,
    v: Shared,
    range: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe { input_tiles::<T, IN, OUT>(board, g, c, v, range) }
}

/// The input transform of tiles `range`, read from the board in place.
///
/// # Safety
/// No other thread may write these tiles' entries of `v` meanwhile.
#[inline(always)]
unsafe fn input_tiles<T: Transforms<IN, OUT>, const IN: usize, const OUT: usize>(
    board: Board,
    g: Geometry,
    c: usize,
    v: Shared,
    range: std::ops::Range<usize>,
) {
    let tiles = g.tiles();
    let border = g.tiling.border() as isize;
    let mut scratch = TileScratch::take(IN * IN * c);
    let tmp = &mut scratch[..IN * IN * c];
    for t in range {
        let (b, ty, tx) = g.split(t);
        // Tile point (dy, dx) is board point (OUT ty + dy - border, OUT tx
        // + dx - border).
        let (y0, x0) = ((ty * OUT) as isize - border, (tx * OUT) as isize - border);
        // Along y for each column (tmp is [x][y']), then along x for each
        // y', straight into v.
        for dx in 0..IN {
            let x = x0 + dx as isize;
            if x < 0 || x >= g.w as isize {
                // A column off the board: B^T 0 = 0.
                tmp[dx * IN * c..][..IN * c].fill(0.0);
                continue;
            }
            let rows = std::array::from_fn(|dy| board.point(g, c, (b, y0 + dy as isize, x)));
            let to = Strided {
                first: dx * IN * c,
                step: c,
            };
            // SAFETY: `tmp` is this call's own.
            unsafe {
                let sink = StridedSink::new((Shared::new(tmp), to), c);
                transform_gathered(rows, &sink, c, T::input);
            }
        }
        for y in 0..IN {
            let from = Strided {
                first: y * c,
                step: IN * c,
            };
            let to = Strided {
                first: (y * IN * tiles + t) * c,
                step: tiles * c,
            };
            // SAFETY: tile `t`'s rows of `v` belong to this caller only.
            unsafe { transform_rows((tmp, from), &StridedSink::new((v, to), c), c, T::input) };
        }
    }
    TileScratch::give_back(scratch);
}

/// Turns `m` (`[area, tiles, c]`) into output tiles `A^T m A` and writes
/// the on-tensor points of each into `out` as `epilogue` says, on up to
/// `threads` OpenMP threads.
pub(super) fn output_transform(
    m: &[f32],
    g: Geometry,
    c: usize,
    ep: (&[f32], Epilogue, Option<&[f32]>),
    out: &mut [f32],
    threads: usize,
) {
    let out = Shared::new(out);
    let path = simd_path();
    super::omp::parallel(threads, &|part, parts| {
        let range = tile_range(g.tiles(), part, parts);
        #[cfg(target_arch = "x86_64")]
        {
            use crate::nn::cpu_info::SimdPath;
            // SAFETY: the CPU has the path's instructions (checked); tiles
            // are disjoint per part and cover disjoint output points.
            match path {
                SimdPath::Avx512 => unsafe {
                    return with_tiling!(g.tiling, output_tiles_avx512(m, g, c, ep, out, range));
                },
                SimdPath::Avx2Fma => unsafe {
                    return with_tiling!(g.tiling, output_tiles_avx2(m, g, c, ep, out, range));
                },
                SimdPath::Portable => {}
            }
        }
        let _ = path;
        // SAFETY: as above.
        unsafe { with_tiling!(g.tiling, output_tiles(m, g, c, ep, out, range)) };
    });
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn output_tiles_avx2<T: Transforms<IN, OUT>, const IN: usize, const OUT: usize>(
    m: &[f32],
    g: Geometry,
    c: usize,
    ep: (&[f32], Epilogue, Option<&[f32]>),
    out: Shared,
    range: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe { output_tiles::<T, IN, OUT>(m, g, c, ep, out, range) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn output_tiles_avx512<T: Transforms<IN, OUT>, const IN: usize, const OUT: usize>(
    m: &[f32],
    g: Geometry,
    c: usize,
    ep: (&[f32], Epilogue, Option<&[f32]>),
    out: Shared,
    range: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe { output_tiles::<T, IN, OUT>(m, g, c, ep, out, range) }
}

/// The output transform of tiles `range`.
///
/// # Safety
/// No other thread may write these tiles' points of `out` meanwhile.
#[inline(always)]
unsafe fn output_tiles<T: Transforms<IN, OUT>, const IN: usize, const OUT: usize>(
    m: &[f32],
    g: Geometry,
    c: usize,
    (bias, epilogue, mask): (&[f32], Epilogue, Option<&[f32]>),
    out: Shared,
    range: std::ops::Range<usize>,
) {
    let (h, w, tiles) = (g.h, g.w, g.tiles());
    let bias = &bias[..c];
    // tmp is [x][y'] (IN x OUT); `discard` takes the outputs of tile points
    // off the board.
    let mut scratch = TileScratch::take((IN * OUT + 1) * c);
    let (tmp, discard) = scratch[..(IN * OUT + 1) * c].split_at_mut(IN * OUT * c);
    let discard = discard.as_mut_ptr();
    for t in range {
        let (b, ty, tx) = g.split(t);
        // Along y for each of the IN columns, read in place from m, then
        // along x for each on-board y', finished and written to the board.
        for dx in 0..IN {
            let from = Strided {
                first: (dx * tiles + t) * c,
                step: IN * tiles * c,
            };
            let to = Strided {
                first: dx * OUT * c,
                step: c,
            };
            // SAFETY: `tmp` is this call's own.
            unsafe {
                let sink = StridedSink::new((Shared::new(tmp), to), c);
                transform_rows((m, from), &sink, c, T::output);
            }
        }
        for dy in 0..OUT.min(h - ty * OUT) {
            let y = ty * OUT + dy;
            let from = Strided {
                first: dy * c,
                step: OUT * c,
            };
            let point = |dx: usize| (b * h + y) * w + tx * OUT + dx;
            let on_board = |dx: usize| tx * OUT + dx < w;
            // SAFETY: each on-board point belongs to exactly one tile, and
            // `out` holds `c` values per point of the batch.
            let points = std::array::from_fn(|dx| {
                if on_board(dx) {
                    unsafe { out.slice(point(dx) * c, c) }.as_mut_ptr()
                } else {
                    discard
                }
            });
            let keep = std::array::from_fn(|dx| {
                on_board(dx) && mask.is_none_or(|mk| mk[point(dx)] != 0.0)
            });
            let bias = bias.as_ptr();
            let src = (&*tmp, from);
            // SAFETY: `points` and `bias` hold `c` values each; `discard`
            // and `tmp` are this call's own.
            unsafe {
                match epilogue {
                    Epilogue::Store => {
                        let sink = BoardSink::<OUT, STORE> { points, bias, keep };
                        transform_rows(src, &sink, c, T::output);
                    }
                    Epilogue::Accumulate => {
                        let sink = BoardSink::<OUT, ACCUMULATE> { points, bias, keep };
                        transform_rows(src, &sink, c, T::output);
                    }
                    Epilogue::ReluMasked => {
                        let sink = BoardSink::<OUT, RELU_MASKED> { points, bias, keep };
                        transform_rows(src, &sink, c, T::output);
                    }
                }
            }
        }
    }
    TileScratch::give_back(scratch);
}

thread_local! {
    /// The transforms' per-tile scratch, kept from call to call on each
    /// thread (no allocation per convolution once it has grown).
    static TILE_SCRATCH: std::cell::Cell<Vec<f32>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The transforms' scratch: taken from [`TILE_SCRATCH`] (not borrowed in
/// a closure, which would be compiled without the kernels' target
/// features) and given back after.
struct TileScratch;

impl TileScratch {
    /// At least `len` values, whatever they hold (every use writes before
    /// it reads).
    fn take(len: usize) -> Vec<f32> {
        let mut scratch = TILE_SCRATCH.take();
        if scratch.len() < len {
            scratch.resize(len, 0.0);
        }
        scratch
    }

    fn give_back(scratch: Vec<f32>) {
        TILE_SCRATCH.set(scratch);
    }
}

// The tests compare with the libtorch net's Winograd convolution.
#[cfg(all(test, feature = "torch"))]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1).
    fn noise(len: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    }

    /// Direct zero-padded 3x3 convolution, NHWC in and out, f64 sums.
    fn direct(
        input: &[f32],
        weights: &[f32],
        (n, h, w): (usize, usize, usize),
        ci: usize,
        co: usize,
    ) -> Vec<f32> {
        let mut out = vec![0f32; n * h * w * co];
        for b in 0..n {
            for y in 0..h {
                for x in 0..w {
                    for oc in 0..co {
                        let mut acc = 0f64;
                        for ky in 0..3 {
                            for kx in 0..3 {
                                let (yy, xx) = ((y + ky).wrapping_sub(1), (x + kx).wrapping_sub(1));
                                if yy >= h || xx >= w {
                                    continue;
                                }
                                for ic in 0..ci {
                                    acc += f64::from(input[((b * h + yy) * w + xx) * ci + ic])
                                        * f64::from(weights[((oc * ci + ic) * 3 + ky) * 3 + kx]);
                                }
                            }
                        }
                        out[((b * h + y) * w + x) * co + oc] = acc as f32;
                    }
                }
            }
        }
        out
    }

    #[test]
    #[cfg(feature = "torch")]
    fn matches_direct_convolution_on_odd_shapes() {
        let mut ws = Workspace::default();
        for &(n, h, w, ci, co) in &[(1, 19, 19, 5, 7), (2, 9, 13, 3, 4), (3, 1, 6, 8, 2)] {
            let input = noise(n * h * w * ci, 1);
            let weights = noise(co * ci * 9, 2);
            let bias = noise(co, 3);
            let mask: Vec<f32> = (0..n * h * w).map(|i| f32::from(i % 5 != 0)).collect();
            let conv = Winograd::new(&weights, Some(&bias), ci, co);
            let want = direct(&input, &weights, (n, h, w), ci, co);
            let start = noise(n * h * w * co, 4);
            for epilogue in [Epilogue::Store, Epilogue::ReluMasked, Epilogue::Accumulate] {
                let mut out = start.clone();
                conv.run(&input, (n, h, w), &mut out, epilogue, Some(&mask), &mut ws)
                    .expect("bmm");
                for (i, got) in out.iter().enumerate() {
                    let y = want[i] + bias[i % co];
                    let expect = match epilogue {
                        Epilogue::Store => y,
                        Epilogue::Accumulate => start[i] + y,
                        Epilogue::ReluMasked => y.max(0.0) * mask[i / co],
                    };
                    assert!(
                        (got - expect).abs() < 1e-4,
                        "{epilogue:?} {n}x{h}x{w} {ci}->{co} at {i}: {got} vs {expect}"
                    );
                }
            }
        }
    }
}
