//! The Winograd algorithms' matrices: `G` on a kernel's taps, `B^T` on
//! input tiles and `A^T` on products, for F(5x5, 3x3), F(4x4, 3x3) and
//! F(3x3, 3x3), and F(3x3, 5x5) for the 5x5 input convolution of KataGo's
//! nets, and the kernels transformed once at load.
//!
//! An algorithm's `B^T` depends only on its interpolation points, so
//! F(3x3, 5x5) reuses the input transform of F(5x5, 3x3), which has the
//! same points; only `G` and `A^T` differ. Each was derived with exact
//! fractions from its points (`G`'s row for point `p` is `p^j / prod(p -
//! q)` over the other finite points `q`, `A^T`'s column `p^i`, then `B^T`
//! solved for exactly; F(4x4, 3x3)'s come out as `wincnn`'s). F(2x2, 5x5)
//! by F(4x4, 3x3)'s points and input transform was also tried: on g170
//! b6c96's input conv it ran 0-9% slower than F(3x3, 5x5) on 9x9 to 19x19
//! (2026-12-06, AMD Zen 1).

use super::Tiling;

/// One Winograd algorithm's three 1-D transforms: `G` on kernel taps, `B^T`
/// on an input row of `IN` values, `A^T` from `IN` values to `OUT`
/// outputs. The 2-D transforms apply them along y, then along x.
pub(super) trait Transforms<const IN: usize, const OUT: usize> {
    /// Kernel side: `IN - OUT + 1`.
    const TAPS: usize = IN - OUT + 1;
    /// `G`: [`Transforms::TAPS`] kernel taps to `IN` values.
    fn kernel(z: &[f64]) -> [f64; IN];
    /// `B^T` on `IN` input values.
    fn input(a: [f32; IN]) -> [f32; IN];
    /// `A^T`: `IN` products to `OUT` outputs.
    fn output(a: [f32; IN]) -> [f32; OUT];
}

/// F(5,3) with the interpolation points 0, 1, -1, 2, -2, 1/2, ∞, built as
/// [`F4`] is (Lagrange's basis on the finite points), with `B^T` doubled so
/// that its entries are integers and `G` halved to match (powers of two:
/// exact in floating point). Of the point sets with one more point than
/// F4's tried in f32 on random tiles (2026-12-06: ±1/2 and 2, ±1/2 and
/// -2, ±2 and 1/2 or -1/2), all gave about twice F(4x4)'s error (a mean
/// largest error of 8-9e-6 per 5x5 tile of unit-variance inputs and
/// taps, against 4e-6); 3 instead of 1/2 gave 25 times that.
pub(super) struct F5;

impl Transforms<7, 5> for F5 {
    fn kernel(z: &[f64]) -> [f64; 7] {
        let &[z0, z1, z2] = z else {
            panic!("F(5x5, 3x3) takes 3 taps")
        };
        [
            -z0 / 4.0,
            -(z0 + z1 + z2) / 6.0,
            (z0 - z1 + z2) / 18.0,
            (z0 + 2.0 * z1 + 4.0 * z2) / 72.0,
            (-z0 + 2.0 * z1 - 4.0 * z2) / 120.0,
            (16.0 * z0 + 8.0 * z1 + 4.0 * z2) / 45.0,
            z2 / 2.0,
        ]
    }

    #[inline(always)]
    fn input(a: [f32; 7]) -> [f32; 7] {
        let [a0, a1, a2, a3, a4, a5, a6] = a;
        let a5x2 = 2.0 * a5;
        [
            -4.0 * a0 + 8.0 * a1 + 5.0 * a2 - 10.0 * a3 - a4 + a5x2,
            4.0 * (a1 - a2) - 9.0 * a3 + a4 + a5x2,
            -4.0 * a1 + 12.0 * a2 - 7.0 * a3 - 3.0 * a4 + a5x2,
            2.0 * a1 - 3.0 * (a2 - a4) - 4.0 * a3 + a5x2,
            -2.0 * a1 + 5.0 * (a2 - a4) + a5x2,
            8.0 * a1 - 10.0 * a3 + a5x2,
            -4.0 * a1 + 8.0 * a2 + 5.0 * a3 - 10.0 * a4 - a5 + 2.0 * a6,
        ]
    }

    #[inline(always)]
    fn output(a: [f32; 7]) -> [f32; 5] {
        let [a0, a1, a2, a3, a4, a5, a6] = a;
        let (d12, s12, d34, s34) = (a1 - a2, a1 + a2, a3 - a4, a3 + a4);
        [
            a0 + s12 + s34 + a5,
            d12 + 2.0 * d34 + 0.5 * a5,
            s12 + 4.0 * s34 + 0.25 * a5,
            d12 + 8.0 * d34 + 0.125 * a5,
            s12 + 16.0 * s34 + 0.0625 * a5 + a6,
        ]
    }
}

/// Lavin & Gray's F(4,3) with the interpolation points 0, ±1, ±2, ∞.
pub(super) struct F4;

impl Transforms<6, 4> for F4 {
    fn kernel(z: &[f64]) -> [f64; 6] {
        let &[z0, z1, z2] = z else {
            panic!("F(4x4, 3x3) takes 3 taps")
        };
        [
            z0 / 4.0,
            -(z0 + z1 + z2) / 6.0,
            -(z0 - z1 + z2) / 6.0,
            (z0 + 2.0 * z1 + 4.0 * z2) / 24.0,
            (z0 - 2.0 * z1 + 4.0 * z2) / 24.0,
            z2,
        ]
    }

    #[inline(always)]
    fn input(a: [f32; 6]) -> [f32; 6] {
        let [a0, a1, a2, a3, a4, a5] = a;
        [
            4.0 * a0 - 5.0 * a2 + a4,
            -4.0 * (a1 + a2) + a3 + a4,
            4.0 * (a1 - a2) - a3 + a4,
            2.0 * (a3 - a1) - a2 + a4,
            2.0 * (a1 - a3) - a2 + a4,
            4.0 * a1 - 5.0 * a3 + a5,
        ]
    }

    #[inline(always)]
    fn output(a: [f32; 6]) -> [f32; 4] {
        let [a0, a1, a2, a3, a4, a5] = a;
        let (d12, s12, d34, s34) = (a1 - a2, a1 + a2, a3 - a4, a3 + a4);
        [
            a0 + s12 + s34,
            d12 + 2.0 * d34,
            s12 + 4.0 * s34,
            d12 + 8.0 * d34 + a5,
        ]
    }
}

/// F(3,3) with the interpolation points 0, 1, -1, 2, ∞ (the matrices
/// `wincnn` derives for them).
pub(super) struct F3;

impl Transforms<5, 3> for F3 {
    fn kernel(z: &[f64]) -> [f64; 5] {
        let &[z0, z1, z2] = z else {
            panic!("F(3x3, 3x3) takes 3 taps")
        };
        [
            z0 / 2.0,
            -(z0 + z1 + z2) / 2.0,
            (z1 - z0 - z2) / 6.0,
            (z0 + 2.0 * z1 + 4.0 * z2) / 6.0,
            z2,
        ]
    }

    #[inline(always)]
    fn input(a: [f32; 5]) -> [f32; 5] {
        let [a0, a1, a2, a3, a4] = a;
        [
            2.0 * (a0 - a2) - a1 + a3,
            -2.0 * a1 - a2 + a3,
            2.0 * a1 - 3.0 * a2 + a3,
            a3 - a1,
            2.0 * (a1 - a3) - a2 + a4,
        ]
    }

    #[inline(always)]
    fn output(a: [f32; 5]) -> [f32; 3] {
        let [a0, a1, a2, a3, a4] = a;
        [
            a0 + a1 + a2 + a3,
            a1 - a2 + 2.0 * a3,
            a1 + a2 + 4.0 * a3 + a4,
        ]
    }
}

/// F(3,5) with [`F5`]'s points (0, 1, -1, 2, -2, 1/2, ∞) and its `B^T`
/// (doubled), so `G` halved as there.
pub(super) struct F3K5;

impl Transforms<7, 3> for F3K5 {
    fn kernel(z: &[f64]) -> [f64; 7] {
        let &[z0, z1, z2, z3, z4] = z else {
            panic!("F(3x3, 5x5) takes 5 taps")
        };
        [
            -z0 / 4.0,
            -(z0 + z1 + z2 + z3 + z4) / 6.0,
            (z0 - z1 + z2 - z3 + z4) / 18.0,
            (z0 + 2.0 * z1 + 4.0 * z2 + 8.0 * z3 + 16.0 * z4) / 72.0,
            (-z0 + 2.0 * z1 - 4.0 * z2 + 8.0 * z3 - 16.0 * z4) / 120.0,
            (16.0 * z0 + 8.0 * z1 + 4.0 * z2 + 2.0 * z3 + z4) / 45.0,
            z4 / 2.0,
        ]
    }

    #[inline(always)]
    fn input(a: [f32; 7]) -> [f32; 7] {
        F5::input(a)
    }

    #[inline(always)]
    fn output(a: [f32; 7]) -> [f32; 3] {
        let [a0, a1, a2, a3, a4, a5, a6] = a;
        let (s12, s34) = (a1 + a2, a3 + a4);
        [
            a0 + s12 + s34 + a5,
            a1 - a2 + 2.0 * (a3 - a4) + 0.5 * a5,
            s12 + 4.0 * s34 + 0.25 * a5 + a6,
        ]
    }
}

/// `G w G^T` of every (in, out) kernel pair of `weights` (`[out, in, k,
/// k]` row-major, `k` the side `tiling` takes), laid out `[area, in, out]`
/// for the per-position products of `tiling`.
pub(in crate::nn::network) fn transform_kernel(
    weights: &[f32],
    in_channels: usize,
    out_channels: usize,
    tiling: Tiling,
) -> Vec<f32> {
    super::with_tiling!(
        tiling,
        transform_kernel_with(weights, in_channels, out_channels)
    )
}

fn transform_kernel_with<T: Transforms<IN, OUT>, const IN: usize, const OUT: usize>(
    weights: &[f32],
    in_channels: usize,
    out_channels: usize,
) -> Vec<f32> {
    let k = T::TAPS;
    assert_eq!(weights.len(), out_channels * in_channels * k * k);
    let mut u = vec![0f32; IN * IN * in_channels * out_channels];
    let mut taps = vec![0f64; k];
    for oc in 0..out_channels {
        for ic in 0..in_channels {
            let w = &weights[(oc * in_channels + ic) * k * k..][..k * k];
            // Rows of the kernel transformed along x, then columns along y.
            let rows: Vec<[f64; IN]> = w
                .chunks_exact(k)
                .map(|row| {
                    taps.iter_mut()
                        .zip(row)
                        .for_each(|(t, &v)| *t = f64::from(v));
                    T::kernel(&taps)
                })
                .collect();
            for tx in 0..IN {
                taps.iter_mut().zip(&rows).for_each(|(t, row)| *t = row[tx]);
                let col = T::kernel(&taps);
                for (ty, v) in col.iter().enumerate() {
                    let s = ty * IN + tx;
                    u[(s * in_channels + ic) * out_channels + oc] = *v as f32;
                }
            }
        }
    }
    u
}
