//! The Winograd algorithms' matrices: `G` on a 3x3 kernel's taps, `B^T` on
//! input tiles and `A^T` on products, for F(4x4, 3x3) and F(3x3, 3x3), and
//! the kernels transformed once at load.

use super::Tiling;

/// One Winograd algorithm's three 1-D transforms: `G` on kernel taps, `B^T`
/// on an input row of `IN` values, `A^T` from `IN` values to `OUT`
/// outputs. The 2-D transforms apply them along y, then along x.
pub(super) trait Transforms<const IN: usize, const OUT: usize> {
    /// `G`: three kernel taps to `IN` values.
    fn kernel(z: [f64; 3]) -> [f64; IN];
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
    fn kernel(z: [f64; 3]) -> [f64; 7] {
        let [z0, z1, z2] = z;
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
    fn kernel(z: [f64; 3]) -> [f64; 6] {
        let [z0, z1, z2] = z;
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
    fn kernel(z: [f64; 3]) -> [f64; 5] {
        let [z0, z1, z2] = z;
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

/// `G w G^T` of every (in, out) kernel pair of `weights` (`[out, in, 3, 3]`
/// row-major), laid out `[area, in, out]` for the per-position products of
/// `tiling`.
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
    assert_eq!(weights.len(), out_channels * in_channels * 9);
    let mut u = vec![0f32; IN * IN * in_channels * out_channels];
    for oc in 0..out_channels {
        for ic in 0..in_channels {
            let w = &weights[(oc * in_channels + ic) * 9..][..9];
            // Rows of the 3x3 kernel transformed along x, then columns along y.
            let rows: [[f64; IN]; 3] = std::array::from_fn(|ky| {
                T::kernel([w[ky * 3], w[ky * 3 + 1], w[ky * 3 + 2]].map(f64::from))
            });
            let [r0, r1, r2] = &rows;
            for (tx, ((&a, &b), &c)) in r0.iter().zip(r1).zip(r2).enumerate() {
                let col = T::kernel([a, b, c]);
                for (ty, v) in col.iter().enumerate() {
                    let s = ty * IN + tx;
                    u[(s * in_channels + ic) * out_channels + oc] = *v as f32;
                }
            }
        }
    }
    u
}
