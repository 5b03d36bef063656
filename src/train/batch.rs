//! Training batches: KataGo's `data_processing_pytorch.py` on
//! [`TrainingRows`]: unpacking the bit planes, one random symmetry per batch
//! and random history masking (both switchable off for parity).

use rand::Rng;
use tch::{Device, Tensor};

use crate::data::{
    TrainingRows, NUM_BINARY_CHANNELS, NUM_GLOBAL_INPUTS, NUM_GLOBAL_TARGETS, NUM_METADATA_INPUTS,
};
use crate::nn::Symmetry;

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
    /// `[N, 192]` SGF metadata inputs, when the rows carry them.
    pub meta_input: Option<Tensor>,
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

/// KataGo's trainer numbers the 8 symmetries differently from its C++,
/// whose numbering [`Symmetry`] follows: the trainer's `apply_symmetry(t,
/// k)` is `Symmetry` number `TRAINER_SYMMETRIES[k]`.
const TRAINER_SYMMETRIES: [usize; 8] = [0, 6, 3, 5, 4, 2, 7, 1];

/// Where each point of the trainer's symmetry `symm` takes its value from:
/// `out[p] = in[source[p]]` on a `pos_len²` board (the tests check this
/// against KataGo's tensor version).
fn symmetry_sources(symm: u8, pos_len: usize) -> Vec<usize> {
    let l = pos_len;
    let s = Symmetry::ALL[TRAINER_SYMMETRIES[usize::from(symm)]];
    let mut source = vec![0; l * l];
    for y in 0..l {
        for x in 0..l {
            let (sx, sy) = s.point(x, y, l, l);
            source[sy * l + sx] = y * l + x;
        }
    }
    source
}

/// One batch in host memory, augmented, as f32 arrays in the tensors'
/// layouts: built without libtorch, so a helper thread can prepare the
/// next batch while the current one trains.
pub struct HostBatch {
    /// The symmetry applied (0 = none).
    pub symmetry: u8,
    n: usize,
    pos_len: usize,
    binary: Vec<f32>,
    global: Vec<f32>,
    policy: Vec<f32>,
    global_targets: Vec<f32>,
    score_distr: Vec<f32>,
    value_targets: Vec<f32>,
    /// The rows' metadata inputs, when they carry them (no symmetry
    /// touches them).
    meta: Option<Vec<f32>>,
}

impl HostBatch {
    /// Rows `indices` of `rows`, with KataGo's augmentation
    /// (`read_npz_training_data` per batch): the bit planes unpacked, the
    /// history dropped at random and one random symmetry for the batch.
    pub fn from_rows(
        rows: &TrainingRows,
        indices: &[usize],
        augment: Augment,
        rng: &mut impl Rng,
    ) -> HostBatch {
        let n = indices.len();
        let l = rows.pos_len;
        let area = l * l;
        let packed = rows.packed_len();
        let pl = rows.policy_len();
        let sdl = rows.score_distr_len();
        let nb = NUM_BINARY_CHANNELS;
        // Drawn in the order the tensor version drew them: the history
        // steps of every row, then the symmetry.
        let mut include = vec![1f32; n * 5];
        if augment.history_masking {
            // apply_history_matrices: each further step of history is dropped
            // with 2%, and once one is dropped all older ones are too.
            for row in include.chunks_mut(5) {
                let mut stopped = false;
                for v in row {
                    stopped |= rng.gen::<f32>() >= 0.98;
                    *v = if stopped { 0.0 } else { 1.0 };
                }
            }
        }
        let symm: u8 = if augment.symmetry {
            rng.gen_range(0..8)
        } else {
            0
        };
        let source = symmetry_sources(symm, l);

        let mut binary = vec![0f32; n * nb * area];
        let mut global = Vec::with_capacity(n * NUM_GLOBAL_INPUTS);
        let mut policy = Vec::with_capacity(n * 2 * pl);
        let mut global_targets = Vec::with_capacity(n * NUM_GLOBAL_TARGETS);
        let mut score_distr = Vec::with_capacity(n * sdl);
        let mut value_targets = Vec::with_capacity(n * 5 * area);
        let meta = rows.has_metadata.then(|| {
            let m = NUM_METADATA_INPUTS;
            indices
                .iter()
                .flat_map(|&i| rows.metadata_input_nc[i * m..(i + 1) * m].iter().copied())
                .collect::<Vec<f32>>()
        });
        for (r, &i) in indices.iter().enumerate() {
            let src = &rows.binary_input_nchw_packed[i * nb * packed..(i + 1) * nb * packed];
            let dst = &mut binary[r * nb * area..(r + 1) * nb * area];
            for c in 0..nb {
                let plane = &src[c * packed..(c + 1) * packed];
                for (d, &q) in dst[c * area..(c + 1) * area].iter_mut().zip(&source) {
                    if plane[q / 8] & (0x80 >> (q % 8)) != 0 {
                        *d = 1.0;
                    }
                }
            }
            let inc = &include[r * 5..r * 5 + 5];
            if inc.contains(&0.0) {
                mix_history(dst, area, inc);
            }
            let g = &rows.global_input_nc[i * NUM_GLOBAL_INPUTS..(i + 1) * NUM_GLOBAL_INPUTS];
            global.extend(
                g.iter()
                    .enumerate()
                    .map(|(k, &v)| if k < 5 { v * inc[k] } else { v }),
            );
            let pol = &rows.policy_targets_nc_move[i * 2 * pl..(i + 1) * 2 * pl];
            for ch in pol.chunks(pl) {
                policy.extend(source.iter().map(|&q| ch[q] as f32));
                policy.push(ch[area] as f32);
            }
            global_targets.extend_from_slice(
                &rows.global_targets_nc[i * NUM_GLOBAL_TARGETS..(i + 1) * NUM_GLOBAL_TARGETS],
            );
            score_distr.extend(
                rows.score_distr_n[i * sdl..(i + 1) * sdl]
                    .iter()
                    .map(|&v| v as f32),
            );
            let vt = &rows.value_targets_nchw[i * 5 * area..(i + 1) * 5 * area];
            for ch in vt.chunks(area) {
                value_targets.extend(source.iter().map(|&q| ch[q] as f32));
            }
        }
        HostBatch {
            symmetry: symm,
            n,
            pos_len: l,
            binary,
            global,
            policy,
            global_targets,
            score_distr,
            value_targets,
            meta,
        }
    }

    /// Whether the batch carries metadata inputs.
    pub fn has_metadata(&self) -> bool {
        self.meta.is_some()
    }
}

/// KataGo's history matrices applied to one row's unpacked planes
/// (`[22, area]`) with `include[k]` = 0 where history step `k+1` is
/// dropped: the dropped move planes (9-13) are cleared and the ladder
/// planes (14-16) shift so that they describe the oldest kept position.
/// Exact: the inputs are 0/1.
fn mix_history(planes: &mut [f32], area: usize, include: &[f32]) {
    let (i0, i1) = (include[0], include[1]);
    for (k, &keep) in include.iter().enumerate() {
        if keep == 0.0 {
            planes[(9 + k) * area..(10 + k) * area].fill(0.0);
        }
    }
    for p in 0..area {
        let (l14, l15, l16) = (
            planes[14 * area + p],
            planes[15 * area + p],
            planes[16 * area + p],
        );
        planes[15 * area + p] = l14 * (1.0 - i0) + l15 * i0;
        planes[16 * area + p] = l14 * (1.0 - i0) + l15 * (i0 - i1) + l16 * i1;
    }
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
        Batch::from_host(&HostBatch::from_rows(rows, indices, augment, rng), device)
    }

    /// Moves a prepared batch to `device`.
    pub fn from_host(h: &HostBatch, device: Device) -> Batch {
        let (n, l) = (h.n as i64, h.pos_len as i64);
        let tensor = |v: &[f32], shape: &[i64]| Tensor::from_slice(v).view(shape).to_device(device);
        Batch {
            binary_input: tensor(&h.binary, &[n, NUM_BINARY_CHANNELS as i64, l, l]),
            global_input: tensor(&h.global, &[n, NUM_GLOBAL_INPUTS as i64]),
            policy_targets: tensor(&h.policy, &[n, 2, l * l + 1]),
            global_targets: tensor(&h.global_targets, &[n, NUM_GLOBAL_TARGETS as i64]),
            score_distr: tensor(&h.score_distr, &[n, -1]),
            value_targets: tensor(&h.value_targets, &[n, 5, l, l]),
            meta_input: h
                .meta
                .as_ref()
                .map(|m| tensor(m, &[n, NUM_METADATA_INPUTS as i64])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::Kind;
    /// KataGo's `apply_symmetry` on the last two (square) dims.
    fn apply_symmetry(t: &Tensor, symm: u8) -> Tensor {
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

    /// The tensor version of [`HostBatch::from_rows`] (KataGo's code, op
    /// for op), drawing from the rng in the same order.
    fn reference(
        rows: &TrainingRows,
        indices: &[usize],
        augment: Augment,
        rng: &mut impl Rng,
    ) -> Batch {
        let device = Device::Cpu;
        let plain = Batch::from_host(
            &HostBatch::from_rows(rows, indices, Augment::NONE, rng),
            device,
        );
        let (n, l) = (indices.len() as i64, rows.pos_len as i64);
        let mut binary_input = plain.binary_input;
        let mut global_input = plain.global_input;
        let mut policy_targets = plain.policy_targets;
        let mut value_targets = plain.value_targets;
        if augment.history_masking {
            let mut include = Vec::with_capacity(n as usize * 5);
            for _ in 0..n {
                let mut stopped = false;
                for _ in 0..5 {
                    stopped |= rng.gen::<f32>() >= 0.98;
                    include.push(if stopped { 0f32 } else { 1.0 });
                }
            }
            let include = Tensor::from_slice(&include).view([n, 5]);
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
            value_targets: value_targets.contiguous(),
            ..plain
        }
    }

    #[test]
    fn host_batches_equal_katago_tensor_augmentation() {
        use rand::SeedableRng;
        let rows = crate::train::tests::parity_rows();
        let idx: Vec<usize> = (0..rows.num_rows.min(16)).collect();
        let augment = Augment {
            symmetry: true,
            history_masking: true,
        };
        let mut dropped = 0;
        let mut symmetries = std::collections::BTreeSet::new();
        for seed in 0..64u64 {
            let mut a = rand::rngs::StdRng::seed_from_u64(seed);
            let mut b = rand::rngs::StdRng::seed_from_u64(seed);
            let host = HostBatch::from_rows(&rows, &idx, augment, &mut a);
            let got = Batch::from_host(&host, Device::Cpu);
            let want = reference(&rows, &idx, augment, &mut b);
            dropped += host
                .global
                .chunks(NUM_GLOBAL_INPUTS)
                .filter(|g| g[..5].contains(&0.0))
                .count();
            symmetries.insert(host.symmetry);
            for (x, y, what) in [
                (&got.binary_input, &want.binary_input, "binary"),
                (&got.global_input, &want.global_input, "global"),
                (&got.policy_targets, &want.policy_targets, "policy"),
                (&got.value_targets, &want.value_targets, "value"),
                (&got.score_distr, &want.score_distr, "score"),
                (&got.global_targets, &want.global_targets, "global targets"),
            ] {
                assert_eq!(x.size(), y.size(), "{what} shape, seed {seed}");
                let diff = f64::try_from((x - y).abs().max()).unwrap_or(1.0);
                assert_eq!(diff, 0.0, "{what} differs, seed {seed}");
            }
        }
        assert!(dropped > 0, "no history was dropped");
        assert_eq!(symmetries.len(), 8, "not every symmetry was drawn");
    }

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
