//! KataGo's training-data format: the rows `engine selfplay` writes and
//! `engine shuffle` / `engine train` read.
//!
//! Front door: [`TrainingRows`], a column store of whole rows in KataGo's
//! exact layout (`cpp/dataio/trainingwrite.h`): the seven `.npz` members with
//! KataGo's names, dtypes and shapes, and the optional eighth that human-SL
//! data carries (`metadataInputNC`, the SGF metadata encoder's inputs). Every row is `pos_len x pos_len`
//! (KataGo's `dataBoardLen`, 19 by default) whatever the real board size;
//! smaller and rectangular boards sit in the top-left corner.
//!
//! | member | dtype | shape per row |
//! | --- | --- | --- |
//! | `binaryInputNCHWPacked` | u8 | `[22, ceil(pos_len²/8)]` bit-packed, big-endian bit order |
//! | `globalInputNC` | f32 | `[19]` |
//! | `policyTargetsNCMove` | i16 | `[2, pos_len² + 1]` |
//! | `globalTargetsNC` | f32 | `[80]` |
//! | `scoreDistrN` | i8 | `[2·pos_len² + 120]` |
//! | `valueTargetsNCHW` | i8 | `[5, pos_len, pos_len]` |
//! | `qValueTargetsNCMove` | i16 | `[3, pos_len² + 1]` |
//! | `metadataInputNC` (optional) | f32 | `[192]` |
//!
//! Files: [`read_npz`] / [`read_npz_bytes`] / [`encode_npz`] (KataGo's
//! `.npz`, checked and bounded; see `npz.rs`; the run store writes the
//! bytes whole). `engine shuffle`: [`shuffle`] with [`ShuffleConfig`]
//! (KataGo's `shuffle.py`; the flags are [`ShuffleArgs`]). Training input:
//! [`WindowRows`], a shuffled window's rows streamed from the store in
//! batches with bounded memory.

mod cli;
pub mod npy;
mod npz;
mod shuffle;
mod window_rows;

pub use cli::{run_shuffle, ShuffleArgs};
pub use npz::{
    encode_npz, read_npz, read_npz_bytes, read_npz_from, read_npz_num_rows,
    read_npz_num_rows_bytes, read_npz_num_rows_from, write_npz_to, NpzError, NpzErrorKind,
    NpzWriteOptions, MEMBER_NAMES,
};
pub use shuffle::window::{desired_num_rows, is_temp_npz_like, parse_summary, WindowParams};
pub use shuffle::{shuffle, ShuffleConfig, ShuffleError, ShuffleReport};
pub use window_rows::{RowBatches, WindowReadError, WindowRows, FILES_IN_MEMORY};

/// KataGo's default data board length (`dataBoardLen`).
pub const DEFAULT_POS_LEN: usize = 19;
/// Spatial input planes per row (input version 7).
pub const NUM_BINARY_CHANNELS: usize = 22;
/// Global inputs per row (input version 7).
pub const NUM_GLOBAL_INPUTS: usize = 19;
/// Policy target channels: this turn, next turn.
pub const NUM_POLICY_TARGETS: usize = 2;
/// Global target channels (`globalTargetsNC`), data format version 3.
pub const NUM_GLOBAL_TARGETS: usize = 80;
/// Spatial value target channels: final ownership, seki, two future boards,
/// final area.
pub const NUM_VALUE_SPATIAL_TARGETS: usize = 5;
/// Per-move search value channels: winloss×32000, score×60, visits.
pub const NUM_Q_VALUE_TARGETS: usize = 3;
/// SGF metadata inputs per row (`metadataInputNC`, KataGo's
/// `SGFMetadata::METADATA_INPUT_NUM_CHANNELS`, the same as
/// `nn::metadata::METADATA_INPUT_NUM_CHANNELS`), read by nets with a
/// metadata encoder.
pub const NUM_METADATA_INPUTS: usize = 192;
/// Extra score-distribution bins beyond `2·pos_len²` (60 on each side).
pub const EXTRA_SCORE_DISTR_RADIUS: usize = 60;
/// `globalTargetsNC[63]`: the data format version KataGo 1.17.2 writes.
pub const DATA_FORMAT_VERSION: f32 = 3.0;

/// Rows of training data in KataGo's layout, one flat vector per `.npz`
/// member, rows back to back (C order).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingRows {
    /// Side of the square data board every row is laid out on.
    pub pos_len: usize,
    /// Number of whole rows held.
    pub num_rows: usize,
    /// `binaryInputNCHWPacked`: `[N, 22, packed_len]`.
    pub binary_input_nchw_packed: Vec<u8>,
    /// `globalInputNC`: `[N, 19]`.
    pub global_input_nc: Vec<f32>,
    /// `policyTargetsNCMove`: `[N, 2, pos_len² + 1]`.
    pub policy_targets_nc_move: Vec<i16>,
    /// `globalTargetsNC`: `[N, 80]`.
    pub global_targets_nc: Vec<f32>,
    /// `scoreDistrN`: `[N, 2·pos_len² + 120]`.
    pub score_distr_n: Vec<i8>,
    /// `valueTargetsNCHW`: `[N, 5, pos_len, pos_len]`.
    pub value_targets_nchw: Vec<i8>,
    /// `qValueTargetsNCMove`: `[N, 3, pos_len² + 1]`.
    pub q_value_targets_nc_move: Vec<i16>,
    /// Whether the rows carry `metadataInputNC` (human-SL data, or
    /// KataGo's `shuffle.py -include-meta` output); all rows do or none.
    pub has_metadata: bool,
    /// `metadataInputNC`: `[N, 192]`, empty without metadata.
    pub metadata_input_nc: Vec<f32>,
}

/// One row's slices inside a [`TrainingRows`], for filling in place.
#[derive(Debug)]
pub struct RowMut<'a> {
    /// `[22, packed_len]`.
    pub binary_input_packed: &'a mut [u8],
    /// `[19]`.
    pub global_input: &'a mut [f32],
    /// `[2, pos_len² + 1]`.
    pub policy_targets: &'a mut [i16],
    /// `[80]`.
    pub global_targets: &'a mut [f32],
    /// `[2·pos_len² + 120]`.
    pub score_distr: &'a mut [i8],
    /// `[5, pos_len, pos_len]`.
    pub value_targets: &'a mut [i8],
    /// `[3, pos_len² + 1]`.
    pub q_value_targets: &'a mut [i16],
    /// `[192]`, or empty when the rows carry no metadata.
    pub metadata_input: &'a mut [f32],
}

impl TrainingRows {
    /// No rows, laid out on a `pos_len x pos_len` data board.
    pub fn new(pos_len: usize) -> Self {
        TrainingRows {
            pos_len,
            num_rows: 0,
            binary_input_nchw_packed: Vec::new(),
            global_input_nc: Vec::new(),
            policy_targets_nc_move: Vec::new(),
            global_targets_nc: Vec::new(),
            score_distr_n: Vec::new(),
            value_targets_nchw: Vec::new(),
            q_value_targets_nc_move: Vec::new(),
            has_metadata: false,
            metadata_input_nc: Vec::new(),
        }
    }

    /// No rows, laid out as `like`'s (board side and metadata).
    pub fn empty_like(like: &TrainingRows) -> Self {
        TrainingRows {
            has_metadata: like.has_metadata,
            ..TrainingRows::new(like.pos_len)
        }
    }

    /// Drops the metadata inputs (for a net that reads none).
    pub fn drop_metadata(&mut self) {
        self.has_metadata = false;
        self.metadata_input_nc = Vec::new();
    }

    /// Bytes per bit-packed plane: `ceil(pos_len² / 8)`.
    pub fn packed_len(&self) -> usize {
        (self.pos_len * self.pos_len).div_ceil(8)
    }

    /// Policy entries per channel: every point plus pass.
    pub fn policy_len(&self) -> usize {
        self.pos_len * self.pos_len + 1
    }

    /// Score-distribution bins per row.
    pub fn score_distr_len(&self) -> usize {
        2 * self.pos_len * self.pos_len + 2 * EXTRA_SCORE_DISTR_RADIUS
    }

    /// Per-row element counts of the eight members, in member order
    /// (metadata: 0 when the rows carry none).
    fn row_sizes(&self) -> [usize; 8] {
        let area = self.pos_len * self.pos_len;
        [
            NUM_BINARY_CHANNELS * self.packed_len(),
            NUM_GLOBAL_INPUTS,
            NUM_POLICY_TARGETS * self.policy_len(),
            NUM_GLOBAL_TARGETS,
            self.score_distr_len(),
            NUM_VALUE_SPATIAL_TARGETS * area,
            NUM_Q_VALUE_TARGETS * self.policy_len(),
            if self.has_metadata {
                NUM_METADATA_INPUTS
            } else {
                0
            },
        ]
    }

    /// Makes an empty `self` take `other`'s metadata layout; rows of both
    /// layouts never mix (readers settle the layout first: a caller bug).
    fn match_layout(&mut self, other: &TrainingRows) {
        assert_eq!(self.pos_len, other.pos_len, "pos_len mismatch");
        if self.num_rows == 0 {
            self.has_metadata = other.has_metadata;
            self.metadata_input_nc.clear();
        }
        assert_eq!(
            self.has_metadata, other.has_metadata,
            "rows with and without metadataInputNC mixed"
        );
    }

    /// Appends one all-zero row and returns its index.
    pub fn push_zeroed_row(&mut self) -> usize {
        let s = self.row_sizes();
        let n = self.num_rows + 1;
        self.binary_input_nchw_packed.resize(n * s[0], 0);
        self.global_input_nc.resize(n * s[1], 0.0);
        self.policy_targets_nc_move.resize(n * s[2], 0);
        self.global_targets_nc.resize(n * s[3], 0.0);
        self.score_distr_n.resize(n * s[4], 0);
        self.value_targets_nchw.resize(n * s[5], 0);
        self.q_value_targets_nc_move.resize(n * s[6], 0);
        self.metadata_input_nc.resize(n * s[7], 0.0);
        self.num_rows = n;
        n - 1
    }

    /// Mutable views of row `i`. Panics if `i >= num_rows` (a caller bug,
    /// never input-driven).
    pub fn row_mut(&mut self, i: usize) -> RowMut<'_> {
        assert!(i < self.num_rows, "row {i} of {}", self.num_rows);
        let s = self.row_sizes();
        RowMut {
            binary_input_packed: &mut self.binary_input_nchw_packed[i * s[0]..(i + 1) * s[0]],
            global_input: &mut self.global_input_nc[i * s[1]..(i + 1) * s[1]],
            policy_targets: &mut self.policy_targets_nc_move[i * s[2]..(i + 1) * s[2]],
            global_targets: &mut self.global_targets_nc[i * s[3]..(i + 1) * s[3]],
            score_distr: &mut self.score_distr_n[i * s[4]..(i + 1) * s[4]],
            value_targets: &mut self.value_targets_nchw[i * s[5]..(i + 1) * s[5]],
            q_value_targets: &mut self.q_value_targets_nc_move[i * s[6]..(i + 1) * s[6]],
            metadata_input: &mut self.metadata_input_nc[i * s[7]..(i + 1) * s[7]],
        }
    }

    /// Appends a copy of row `i` of `other` (same `pos_len`, and the same
    /// metadata layout unless `self` is empty).
    pub fn push_row_from(&mut self, other: &TrainingRows, i: usize) {
        self.match_layout(other);
        assert!(i < other.num_rows, "row {i} of {}", other.num_rows);
        let s = self.row_sizes();
        self.binary_input_nchw_packed
            .extend_from_slice(&other.binary_input_nchw_packed[i * s[0]..(i + 1) * s[0]]);
        self.global_input_nc
            .extend_from_slice(&other.global_input_nc[i * s[1]..(i + 1) * s[1]]);
        self.policy_targets_nc_move
            .extend_from_slice(&other.policy_targets_nc_move[i * s[2]..(i + 1) * s[2]]);
        self.global_targets_nc
            .extend_from_slice(&other.global_targets_nc[i * s[3]..(i + 1) * s[3]]);
        self.score_distr_n
            .extend_from_slice(&other.score_distr_n[i * s[4]..(i + 1) * s[4]]);
        self.value_targets_nchw
            .extend_from_slice(&other.value_targets_nchw[i * s[5]..(i + 1) * s[5]]);
        self.q_value_targets_nc_move
            .extend_from_slice(&other.q_value_targets_nc_move[i * s[6]..(i + 1) * s[6]]);
        self.metadata_input_nc
            .extend_from_slice(&other.metadata_input_nc[i * s[7]..(i + 1) * s[7]]);
        self.num_rows += 1;
    }
}

impl TrainingRows {
    /// Appends all rows of `other` (same `pos_len`, and the same metadata
    /// layout unless `self` is empty).
    pub fn append(&mut self, other: &TrainingRows) {
        self.match_layout(other);
        self.binary_input_nchw_packed
            .extend_from_slice(&other.binary_input_nchw_packed);
        self.global_input_nc
            .extend_from_slice(&other.global_input_nc);
        self.policy_targets_nc_move
            .extend_from_slice(&other.policy_targets_nc_move);
        self.global_targets_nc
            .extend_from_slice(&other.global_targets_nc);
        self.score_distr_n.extend_from_slice(&other.score_distr_n);
        self.value_targets_nchw
            .extend_from_slice(&other.value_targets_nchw);
        self.q_value_targets_nc_move
            .extend_from_slice(&other.q_value_targets_nc_move);
        self.metadata_input_nc
            .extend_from_slice(&other.metadata_input_nc);
        self.num_rows += other.num_rows;
    }

    /// A copy of rows `start..end`. Panics if the range is out of bounds (a
    /// caller bug).
    pub fn slice(&self, start: usize, end: usize) -> TrainingRows {
        assert!(
            start <= end && end <= self.num_rows,
            "rows {start}..{end} of {}",
            self.num_rows
        );
        let s = self.row_sizes();
        TrainingRows {
            pos_len: self.pos_len,
            num_rows: end - start,
            binary_input_nchw_packed: self.binary_input_nchw_packed[start * s[0]..end * s[0]]
                .to_vec(),
            global_input_nc: self.global_input_nc[start * s[1]..end * s[1]].to_vec(),
            policy_targets_nc_move: self.policy_targets_nc_move[start * s[2]..end * s[2]].to_vec(),
            global_targets_nc: self.global_targets_nc[start * s[3]..end * s[3]].to_vec(),
            score_distr_n: self.score_distr_n[start * s[4]..end * s[4]].to_vec(),
            value_targets_nchw: self.value_targets_nchw[start * s[5]..end * s[5]].to_vec(),
            q_value_targets_nc_move: self.q_value_targets_nc_move[start * s[6]..end * s[6]]
                .to_vec(),
            has_metadata: self.has_metadata,
            metadata_input_nc: self.metadata_input_nc[start * s[7]..end * s[7]].to_vec(),
        }
    }

    /// The rows at `indices`, in that order (a permutation or a subset).
    /// Panics on an index out of bounds (a caller bug).
    pub fn select(&self, indices: &[usize]) -> TrainingRows {
        let mut out = TrainingRows::empty_like(self);
        let s = self.row_sizes();
        out.binary_input_nchw_packed.reserve(indices.len() * s[0]);
        out.value_targets_nchw.reserve(indices.len() * s[5]);
        out.q_value_targets_nc_move.reserve(indices.len() * s[6]);
        out.metadata_input_nc.reserve(indices.len() * s[7]);
        for &i in indices {
            out.push_row_from(self, i);
        }
        out
    }
}

/// Sets bit `index` of a big-endian bit-packed plane (numpy's `packbits`
/// order: bit 7 of byte 0 is point 0).
pub fn set_packed_bit(plane: &mut [u8], index: usize) {
    plane[index / 8] |= 0x80 >> (index % 8);
}

/// Reads bit `index` of a big-endian bit-packed plane.
pub fn packed_bit(plane: &[u8], index: usize) -> bool {
    plane[index / 8] & (0x80 >> (index % 8)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_katago_sizes_at_19() {
        let mut rows = TrainingRows::new(DEFAULT_POS_LEN);
        assert_eq!(rows.packed_len(), 46);
        assert_eq!(rows.policy_len(), 362);
        assert_eq!(rows.score_distr_len(), 842);
        rows.push_zeroed_row();
        let r = rows.row_mut(0);
        assert_eq!(r.binary_input_packed.len(), 22 * 46);
        assert_eq!(r.policy_targets.len(), 2 * 362);
        assert_eq!(r.value_targets.len(), 5 * 361);
        assert_eq!(r.q_value_targets.len(), 3 * 362);
    }

    #[test]
    fn packed_bits_follow_numpy_order() {
        let mut plane = [0u8; 2];
        set_packed_bit(&mut plane, 0);
        set_packed_bit(&mut plane, 9);
        assert_eq!(plane, [0x80, 0x40]);
        assert!(packed_bit(&plane, 9) && !packed_bit(&plane, 8));
    }

    #[test]
    fn append_slice_select_keep_rows_whole() {
        let mut a = TrainingRows::new(5);
        for r in 0..4 {
            a.push_zeroed_row();
            a.row_mut(r).global_targets[0] = r as f32;
            a.row_mut(r).value_targets[24] = r as i8;
        }
        let s = a.slice(1, 3);
        assert_eq!(s.num_rows, 2);
        assert_eq!(s.global_targets_nc[80], 2.0);
        let p = a.select(&[3, 0]);
        assert_eq!(p.value_targets_nchw[124], 0);
        assert_eq!(p.value_targets_nchw[24], 3);
        let mut b = a.slice(0, 1);
        b.append(&a.slice(1, 4));
        assert_eq!(b, a);
    }

    #[test]
    fn push_row_from_copies_whole_rows() {
        let mut a = TrainingRows::new(9);
        a.push_zeroed_row();
        a.push_zeroed_row();
        a.row_mut(1).global_targets[63] = DATA_FORMAT_VERSION;
        let mut b = TrainingRows::new(9);
        b.push_row_from(&a, 1);
        assert_eq!(b.num_rows, 1);
        assert_eq!(b.global_targets_nc[63], 3.0);
    }
}
