//! How the small kernels walk a product: the order of their register
//! blocks ([`BlockOrder`]), and the next weight matrix each block asks the
//! CPU for as it runs ([`Prefetch`]).

#[cfg(target_arch = "x86_64")]
use super::bf16_operand;
use super::AlignedWeights;

/// The blocks of `c` (`m x n`) the small kernels compute, in their order.
/// Row blocks are of as even a size as possible (25 rows by 5-row blocks:
/// 5 x 5, not 4 x 6 + 1: a one-row block has too few accumulators to hide
/// FMA latency), and run in groups of `group`, whose rows of `a` stay in
/// L1 across the column blocks.
///
/// An iterator, not a function taking the block kernel as a closure: a
/// closure is compiled with its own enclosing function's target features,
/// so a closure built outside the `#[target_feature]` kernels would run
/// their intrinsics as calls (25x slower, measured). A plain struct with
/// an inlined `next`, not adapters: `flat_map` and `enumerate` were left
/// as calls, 3.5% of a 19x19 analysis (`perf`, AMD Zen 4).
pub(super) struct BlockOrder {
    /// Rows and columns of `c`.
    m: usize,
    n: usize,
    /// Row blocks, columns per block and row blocks per group.
    row_blocks: usize,
    nb: usize,
    group: usize,
    /// The next block: its group's first row block, its row block, its
    /// first column, and its place in the order.
    g0: usize,
    i: usize,
    j0: usize,
    index: usize,
}

/// One block of [`BlockOrder`]: rows `i0..i0 + rows` and the columns from
/// `j0` (`nb` of them, or fewer at the end), `index`-th of `count`.
#[derive(Clone, Copy)]
pub(super) struct Block {
    pub(super) i0: usize,
    pub(super) rows: usize,
    pub(super) j0: usize,
    pub(super) index: usize,
    pub(super) count: usize,
}

impl BlockOrder {
    pub(super) fn new(
        (m, n): (usize, usize),
        (mr, nb, group): (usize, usize, usize),
    ) -> BlockOrder {
        BlockOrder {
            m,
            n,
            row_blocks: m.div_ceil(mr),
            nb,
            group,
            g0: 0,
            i: 0,
            j0: 0,
            index: 0,
        }
    }

    /// The first row of row block `i`.
    #[inline(always)]
    fn row_start(&self, i: usize) -> usize {
        i * (self.m / self.row_blocks) + i.min(self.m % self.row_blocks)
    }
}

impl Iterator for BlockOrder {
    type Item = Block;

    #[inline(always)]
    fn next(&mut self) -> Option<Block> {
        if self.g0 >= self.row_blocks || self.n == 0 {
            return None;
        }
        let i0 = self.row_start(self.i);
        let block = Block {
            i0,
            rows: self.row_start(self.i + 1) - i0,
            j0: self.j0,
            index: self.index,
            count: self.row_blocks * self.n.div_ceil(self.nb),
        };
        self.index += 1;
        self.i += 1;
        if self.i == (self.g0 + self.group).min(self.row_blocks) {
            self.i = self.g0;
            self.j0 += self.nb;
            if self.j0 >= self.n {
                self.j0 = 0;
                self.g0 += self.group;
                self.i = self.g0;
            }
        }
        Some(block)
    }
}

/// Lines of a weight matrix a product asks the CPU to bring towards L2
/// while it runs: a Winograd conv walks 25 or 36 `k x n` matrices in turn
/// (0.9-1.3 MB for 96 channels), a net's convs together far more than L2
/// holds, so at batch 1 each matrix would come from L3 just as its
/// product wants it. Asking for the next matrix one line per step of the
/// product's blocks keeps the requests among the multiply-adds; asking
/// for all of a matrix's 576 lines at once before the product (until
/// 2026-12-04) stalled on the CPU's few outstanding misses, 13% of the
/// time of a 19x19 analysis (`perf`, AMD Zen 4).
#[derive(Clone, Copy)]
pub(in crate::nn::network::cpu) struct Prefetch {
    start: *const i8,
    lines: usize,
}

impl Prefetch {
    /// Nothing to ask for.
    pub(in crate::nn::network::cpu) const NONE: Prefetch = Prefetch {
        start: std::ptr::null(),
        lines: 0,
    };

    /// Matrix `index` of `weights` (a run of `k x n` matrices) in the
    /// precision [`gemm_weights`] reads it; nothing for an index past the
    /// run.
    pub(in crate::nn::network::cpu) fn matrix(
        weights: &AlignedWeights,
        index: usize,
        (k, n): (usize, usize),
    ) -> Prefetch {
        #[cfg(target_arch = "x86_64")]
        if let Some(pairs) = bf16_operand(weights, index, (k, n)) {
            return Prefetch::bytes(pairs);
        }
        match weights.get(index * k * n..(index + 1) * k * n) {
            Some(values) => Prefetch::bytes(values),
            None => Prefetch::NONE,
        }
    }

    fn bytes<T>(values: &[T]) -> Prefetch {
        Prefetch {
            start: values.as_ptr().cast(),
            lines: std::mem::size_of_val(values).div_ceil(64),
        }
    }

    /// Part `part` of `parts` (nearly equal runs of lines), for one block
    /// of a product.
    pub(super) fn part(self, part: usize, parts: usize) -> Prefetch {
        let first = self.lines * part / parts;
        let lines = (self.lines * (part + 1) / parts).saturating_sub(first);
        Prefetch {
            // A pointer past the lines is never read: `lines` is 0 there.
            start: self.start.wrapping_add(64 * first),
            lines,
        }
    }

    /// At step `step` of a block: asks for line `step`, if there is one
    /// (a block has more steps than lines but for the smallest products).
    #[inline(always)]
    pub(super) fn step(self, step: usize) {
        self.line(step);
    }

    /// After a block's `steps` steps: asks for the lines they had no
    /// step for.
    #[inline(always)]
    pub(super) fn after(self, steps: usize) {
        self.lines_from(steps);
    }

    /// Asks for line `i`, if there is one.
    #[inline(always)]
    fn line(self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if i < self.lines {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
            // SAFETY: a prefetch reads nothing architecturally; the
            // address is inside the matrix.
            unsafe { _mm_prefetch::<_MM_HINT_T1>(self.start.wrapping_add(64 * i)) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Asks for every line at once.
    pub(in crate::nn::network::cpu) fn all(self) {
        self.lines_from(0);
    }

    /// Asks for the lines from `i` on.
    #[inline(always)]
    fn lines_from(self, i: usize) {
        for line in i..self.lines {
            self.line(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The blocks of a product ask for every line of the next matrix
    /// once, in order, whatever the numbers of lines and blocks.
    #[test]
    fn the_parts_of_a_prefetch_cover_its_lines_once() {
        let values = vec![0u8; 64 * 1000];
        for lines in [0, 1, 5, 64, 576, 1000] {
            let whole = Prefetch::bytes(&values[..64 * lines]);
            assert_eq!(whole.lines, lines);
            for parts in [1, 3, 9, 15, 16, 2000] {
                let mut next = whole.start;
                let mut total = 0;
                for part in 0..parts {
                    let p = whole.part(part, parts);
                    if p.lines > 0 {
                        assert_eq!(p.start, next, "{lines} lines in {parts} parts");
                    }
                    next = p.start.wrapping_add(64 * p.lines);
                    total += p.lines;
                }
                assert_eq!(total, lines, "{lines} lines in {parts} parts");
            }
        }
    }

    /// The blocks cover every element of `c` once, rows in blocks that
    /// differ by at most one, in groups of `group` row blocks, numbered in
    /// order.
    #[test]
    fn the_block_order_covers_c_once_in_even_row_blocks() {
        for (m, n) in [(1, 16), (25, 96), (49, 96), (13, 32), (392, 48), (7, 16)] {
            for (mr, nb, group) in [(12, 32, 3), (6, 16, 8), (1, 16, 1)] {
                let mut seen = vec![0u32; m * n];
                let blocks: Vec<Block> = BlockOrder::new((m, n), (mr, nb, group)).collect();
                let sizes: Vec<usize> = blocks.iter().map(|b| b.rows).collect();
                let (least, most) = (sizes.iter().min(), sizes.iter().max());
                assert!(most.unwrap() - least.unwrap() <= 1 && *most.unwrap() <= mr);
                for (index, block) in blocks.iter().enumerate() {
                    assert_eq!((block.index, block.count), (index, blocks.len()));
                    for row in block.i0..block.i0 + block.rows {
                        for col in block.j0..(block.j0 + nb).min(n) {
                            seen[row * n + col] += 1;
                        }
                    }
                }
                assert!(seen.iter().all(|&c| c == 1), "{m}x{n} by {mr}x{nb}");
                // Columns change only after a whole group of row blocks.
                let first_group = m.div_ceil(mr).min(group);
                assert!(blocks[..first_group].iter().all(|b| b.j0 == 0));
            }
        }
    }
}
