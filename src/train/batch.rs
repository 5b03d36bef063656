//! Training batches: KataGo's `data_processing_pytorch.py` on
//! [`TrainingRows`]: unpacking the bit planes, one random symmetry per batch
//! and random history masking (both switchable off for parity).

use rand::Rng;
use tch::{Device, Kind, Tensor};

use crate::data::{TrainingRows, NUM_BINARY_CHANNELS, NUM_GLOBAL_INPUTS, NUM_GLOBAL_TARGETS};

/// One batch on the training device, every member as f32.
pub struct Batch {
    /// `[N, 22, L, L]`.
    pub binary_input: Tensor,
    /// `[N, 19]`.
    pub global_input: Tensor,
    /// `[N, 2, L²+1]`.
    pub policy_targets: Tensor,
    /// `[N, 80]`.
    pub global_targets: Tensor,
    /// `[N, 2L²+120]`.
    pub score_distr: Tensor,
    /// `[N, 5, L, L]`.
    pub value_targets: Tensor,
}

/// KataGo's data augmentation switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Augment {
    /// One random symmetry (of 8) for the whole batch.
    pub symmetry: bool,
    /// Drop history features at random (each further step back with 2%).
    pub history_masking: bool,
}

impl Augment {
    /// Everything off: rows go in as they are.
    pub const NONE: Augment = Augment {
        symmetry: false,
        history_masking: false,
    };
    /// KataGo's training default.
    pub const KATAGO: Augment = Augment {
        symmetry: true,
        history_masking: true,
    };
}

/// KataGo's `apply_symmetry` on the last two (square) dims.
pub fn apply_symmetry(t: &Tensor, symm: u8) -> Tensor {
    let d = t.dim() as i64;
    let (a, b) = (d - 2, d - 1);
    match symm {
        0 => t.shallow_clone(),
        1 => t.transpose(a, b).flip([a]),
        2 => t.flip([b]).flip([a]),
        3 => t.transpose(a, b).flip([b]),
        4 => t.transpose(a, b),
        5 => t.flip([b]),
        6 => t.transpose(a, b).flip([b]).flip([a]),
        _ => t.flip([a]),
    }
}

/// `apply_symmetry_policy`: the board part moves, pass stays last.
fn apply_symmetry_policy(t: &Tensor, symm: u8, pos_len: i64) -> Tensor {
    let n = t.size()[0];
    let c = t.size()[1];
    let area = pos_len * pos_len;
    let board = t.narrow(2, 0, area).view([n, c, pos_len, pos_len]);
    let moved = apply_symmetry(&board, symm).reshape([n, c, area]);
    Tensor::cat(&[moved, t.narrow(2, area, 1)], 2)
}

/// KataGo's history matrices (`build_history_matrices`): `(h_base [1,22,22], h_builder [5,22,22])`.
fn history_matrices(device: Device) -> (Tensor, Tensor) {
    let nb = NUM_BINARY_CHANNELS;
    let mut base = vec![0f32; nb * nb];
    for i in 0..nb {
        if !(9..=13).contains(&i) && i != 15 && i != 16 {
            base[i * nb + i] = 1.0;
        }
    }
    base[14 * nb + 15] = 1.0;
    base[14 * nb + 16] = 1.0;
    let mut builder = vec![0f32; 5 * nb * nb];
    let mut set = |k: usize, i: usize, j: usize, v: f32| builder[(k * nb + i) * nb + j] = v;
    set(0, 9, 9, 1.0);
    set(0, 14, 15, -1.0);
    set(0, 14, 16, -1.0);
    set(0, 15, 15, 1.0);
    set(0, 15, 16, 1.0);
    set(1, 10, 10, 1.0);
    set(1, 15, 16, -1.0);
    set(1, 16, 16, 1.0);
    set(2, 11, 11, 1.0);
    set(3, 12, 12, 1.0);
    set(4, 13, 13, 1.0);
    let nb = nb as i64;
    (
        Tensor::from_slice(&base)
            .view([1, nb, nb])
            .to_device(device),
        Tensor::from_slice(&builder)
            .view([5, nb, nb])
            .to_device(device),
    )
}

impl Batch {
    /// Builds a batch from rows `indices` of `rows` (KataGo's
    /// `read_npz_training_data` per batch).
    pub fn from_rows(
        rows: &TrainingRows,
        indices: &[usize],
        augment: Augment,
        rng: &mut impl Rng,
        device: Device,
    ) -> Batch {
        let n = indices.len();
        let l = rows.pos_len;
        let area = l * l;
        let packed = rows.packed_len();
        let pl = rows.policy_len();
        let sdl = rows.score_distr_len();
        let mut bin = vec![0f32; n * NUM_BINARY_CHANNELS * area];
        let mut glob = Vec::with_capacity(n * NUM_GLOBAL_INPUTS);
        let mut pol = Vec::with_capacity(n * 2 * pl);
        let mut gt = Vec::with_capacity(n * NUM_GLOBAL_TARGETS);
        let mut sd = Vec::with_capacity(n * sdl);
        let mut vt = Vec::with_capacity(n * 5 * area);
        for (r, &i) in indices.iter().enumerate() {
            let src = &rows.binary_input_nchw_packed
                [i * NUM_BINARY_CHANNELS * packed..(i + 1) * NUM_BINARY_CHANNELS * packed];
            for c in 0..NUM_BINARY_CHANNELS {
                let plane = &src[c * packed..(c + 1) * packed];
                let dst = &mut bin[(r * NUM_BINARY_CHANNELS + c) * area
                    ..(r * NUM_BINARY_CHANNELS + c + 1) * area];
                for (p, d) in dst.iter_mut().enumerate() {
                    if plane[p / 8] & (0x80 >> (p % 8)) != 0 {
                        *d = 1.0;
                    }
                }
            }
            glob.extend_from_slice(
                &rows.global_input_nc[i * NUM_GLOBAL_INPUTS..(i + 1) * NUM_GLOBAL_INPUTS],
            );
            pol.extend(
                rows.policy_targets_nc_move[i * 2 * pl..(i + 1) * 2 * pl]
                    .iter()
                    .map(|&v| v as f32),
            );
            gt.extend_from_slice(
                &rows.global_targets_nc[i * NUM_GLOBAL_TARGETS..(i + 1) * NUM_GLOBAL_TARGETS],
            );
            sd.extend(
                rows.score_distr_n[i * sdl..(i + 1) * sdl]
                    .iter()
                    .map(|&v| v as f32),
            );
            vt.extend(
                rows.value_targets_nchw[i * 5 * area..(i + 1) * 5 * area]
                    .iter()
                    .map(|&v| v as f32),
            );
        }
        let (n, l, nb) = (n as i64, l as i64, NUM_BINARY_CHANNELS as i64);
        let mut binary_input = Tensor::from_slice(&bin)
            .view([n, nb, l, l])
            .to_device(device);
        let mut global_input = Tensor::from_slice(&glob)
            .view([n, NUM_GLOBAL_INPUTS as i64])
            .to_device(device);
        let mut policy_targets = Tensor::from_slice(&pol)
            .view([n, 2, pl as i64])
            .to_device(device);
        let global_targets = Tensor::from_slice(&gt)
            .view([n, NUM_GLOBAL_TARGETS as i64])
            .to_device(device);
        let score_distr = Tensor::from_slice(&sd)
            .view([n, sdl as i64])
            .to_device(device);
        let mut value_targets = Tensor::from_slice(&vt).view([n, 5, l, l]).to_device(device);

        if augment.history_masking {
            // apply_history_matrices: each further step of history is dropped
            // with 2%, and once one is dropped all older ones are too.
            let mut include = Vec::with_capacity(n as usize * 5);
            for _ in 0..n {
                let mut stopped = false;
                for _ in 0..5 {
                    stopped |= rng.gen::<f32>() >= 0.98;
                    include.push(if stopped { 0f32 } else { 1.0 });
                }
            }
            let include = Tensor::from_slice(&include).view([n, 5]).to_device(device);
            let (h_base, h_builder) = history_matrices(device);
            let h = h_base + Tensor::einsum("bi,ijk->bjk", &[&include, &h_builder], None::<i64>);
            binary_input = Tensor::einsum("bijk,bil->bljk", &[&binary_input, &h], None::<i64>);
            let pad = Tensor::ones([n, NUM_GLOBAL_INPUTS as i64 - 5], (Kind::Float, device));
            global_input *= Tensor::cat(&[include, pad], 1);
        }
        if augment.symmetry {
            let symm: u8 = rng.gen_range(0..8);
            binary_input = apply_symmetry(&binary_input, symm);
            policy_targets = apply_symmetry_policy(&policy_targets, symm, l);
            value_targets = apply_symmetry(&value_targets, symm);
        }
        Batch {
            binary_input: binary_input.contiguous(),
            global_input,
            policy_targets: policy_targets.contiguous(),
            global_targets,
            score_distr,
            value_targets: value_targets.contiguous(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_history_matrix_is_identity() {
        let (b, h) = history_matrices(Device::Cpu);
        let full = b + h.sum_dim_intlist([0i64].as_slice(), true, Kind::Float);
        let eye = Tensor::eye(22, (Kind::Float, Device::Cpu)).view([1, 22, 22]);
        assert_eq!(f64::try_from((full - eye).abs().max()).unwrap_or(1.0), 0.0);
    }

    #[test]
    fn symmetries_are_the_eight_distinct_maps() {
        let t = Tensor::arange(9, (Kind::Float, Device::Cpu)).view([1, 3, 3]);
        let mut seen = Vec::new();
        for s in 0..8u8 {
            let v: Vec<f32> =
                Vec::try_from(apply_symmetry(&t, s).flatten(0, -1)).unwrap_or_default();
            assert_eq!(v.len(), 9);
            assert!(!seen.contains(&v), "symmetry {s} repeats another");
            seen.push(v);
        }
    }
}
