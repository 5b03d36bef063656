//! The 1-D Winograd transforms applied to rows of channels: `N` rows of
//! `c` values in, `K` rows out, eight channels at a time, from a buffer or
//! from rows anywhere (the board read in place), into a buffer or onto the
//! board with the conv's epilogue.

/// Lanes processed together by the 1-D transforms: they copy `LANES`
/// values of each row into local arrays first, so that the compiler sees
/// no possible aliasing between the twelve streams (LLVM gives up
/// vectorizing a loop with that many runtime alias checks and runs it
/// scalar) and emits plain vector code.
const LANES: usize = 8;

/// Rows of `c` values in a buffer: row `k` starts at value
/// `first + k * step`.
#[derive(Clone, Copy)]
pub(super) struct Strided {
    pub(super) first: usize,
    pub(super) step: usize,
}

impl Strided {
    /// One past the last value that `n` rows of `c` values reach.
    fn end(self, n: usize, c: usize) -> usize {
        self.first + (n - 1) * self.step + c
    }
}

/// Applies `f` (`N` values to `K`) channel by channel to the `N` `c`-long
/// rows `from` of `src`, putting the `K` results in `sink`.
///
/// The rows are addressed from one base pointer and a stride each, not
/// from `N + K` slices: twelve slices' pointers and lengths did not fit
/// the registers, and the loop reloaded them from the stack and checked
/// each write's bounds (a third of the transforms' instructions in
/// `perf annotate`, AMD Zen 1).
///
/// # Safety
/// As [`transform_into`]'s `sink`.
#[inline(always)]
pub(super) unsafe fn transform_rows<const N: usize, const K: usize>(
    (src, from): (&[f32], Strided),
    sink: &impl Sink<K>,
    c: usize,
    f: impl Fn([f32; N]) -> [f32; K],
) {
    assert!(from.end(N, c) <= src.len(), "Winograd rows out of range");
    let src = src.as_ptr();
    // SAFETY: rows `k < N` of `from` lie in `src` (checked above) and the
    // loop reads at most `c` values of each.
    let load = |k: usize, i: usize| unsafe { src.add(from.first + k * from.step + i) };
    // SAFETY: forwarded from the caller.
    unsafe { transform_into(load, sink, c, f) }
}

/// [`transform_rows`] from `N` rows anywhere: `rows[k]` is row `k`'s `c`
/// values (the first pass of the input transform reads the board's points
/// in place, a row of zeros for each point off the board).
///
/// # Safety
/// As [`transform_rows`].
#[inline(always)]
pub(super) unsafe fn transform_gathered<const N: usize, const K: usize>(
    rows: [&[f32]; N],
    sink: &impl Sink<K>,
    c: usize,
    f: impl Fn([f32; N]) -> [f32; K],
) {
    assert!(rows.iter().all(|r| r.len() >= c), "Winograd rows too short");
    let rows = rows.map(<[f32]>::as_ptr);
    // SAFETY: each row holds `c` values (checked above).
    let load = |k: usize, i: usize| unsafe { rows[k].add(i) };
    // SAFETY: forwarded from the caller.
    unsafe { transform_into(load, sink, c, f) }
}

/// Where [`transform_into`] puts row `k`'s values `i..i + L`.
pub(super) trait Sink<const K: usize> {
    /// # Safety
    /// `k < K`, `i + L <= c` for the `c` of the transform.
    unsafe fn put<const L: usize>(&self, k: usize, i: usize, values: [f32; L]);
}

/// Rows `to` of a buffer.
pub(super) struct StridedSink<const K: usize> {
    dst: *mut f32,
    to: Strided,
}

impl<const K: usize> StridedSink<K> {
    /// `K` rows `to` of `dst`, of `c` values each.
    ///
    /// # Safety
    /// No other thread may access those rows while the sink is in use.
    pub(super) unsafe fn new((dst, to): (Shared, Strided), c: usize) -> StridedSink<K> {
        assert!(
            to.end(K, c) <= dst.1 && (K == 1 || to.step >= c),
            "Winograd rows out of range or overlapping"
        );
        StridedSink { dst: dst.0, to }
    }
}

impl<const K: usize> Sink<K> for StridedSink<K> {
    #[inline(always)]
    unsafe fn put<const L: usize>(&self, k: usize, i: usize, values: [f32; L]) {
        // SAFETY: `new` checked rows `k < K` of `c` values.
        unsafe {
            self.dst
                .add(self.to.first + k * self.to.step + i)
                .cast::<[f32; L]>()
                .write_unaligned(values)
        }
    }
}

/// The output transform's last pass, finished as an [`Epilogue`] says and
/// written to the board: `points[k]` is output `k`'s `c` values (a
/// discarded row where the tile runs off the board), `bias` the conv's,
/// and `keep[k]` false where the mask zeroes the point (`ReluMasked`).
pub(super) struct BoardSink<const K: usize, const E: u8> {
    pub(super) points: [*mut f32; K],
    pub(super) bias: *const f32,
    pub(super) keep: [bool; K],
}

/// [`BoardSink`]'s `E` for each [`Epilogue`] (one monomorphised loop each).
pub(super) const STORE: u8 = 0;
pub(super) const ACCUMULATE: u8 = 1;
pub(super) const RELU_MASKED: u8 = 2;

impl<const K: usize, const E: u8> Sink<K> for BoardSink<K, E> {
    #[inline(always)]
    unsafe fn put<const L: usize>(&self, k: usize, i: usize, values: [f32; L]) {
        // SAFETY: the constructor's caller vouches for `c` values at each
        // point and of `bias`.
        unsafe {
            let dst = self.points[k].add(i).cast::<[f32; L]>();
            if E == RELU_MASKED && !self.keep[k] {
                dst.write_unaligned([0.0; L]);
                return;
            }
            let bias = self.bias.add(i).cast::<[f32; L]>().read_unaligned();
            let mut out = if E == ACCUMULATE {
                dst.read_unaligned()
            } else {
                [0.0; L]
            };
            for l in 0..L {
                let y = values[l] + bias[l];
                out[l] = match E {
                    STORE => y,
                    ACCUMULATE => out[l] + y,
                    _ => y.max(0.0),
                };
            }
            dst.write_unaligned(out);
        }
    }
}

/// The loop of [`transform_rows`] and [`transform_gathered`]: `load(k, i)`
/// points at value `i` of source row `k`.
///
/// # Safety
/// `load(k, i)` must be readable for `k < N`, `i < c`; `sink` must take
/// rows `k < K` of `c` values, which no other thread accesses meanwhile.
#[inline(always)]
unsafe fn transform_into<const N: usize, const K: usize>(
    load: impl Fn(usize, usize) -> *const f32,
    sink: &impl Sink<K>,
    c: usize,
    f: impl Fn([f32; N]) -> [f32; K],
) {
    // `f` on each lane of `N` vectors (the loop the compiler vectorises).
    let lanes = |a: [[f32; LANES]; N]| {
        let mut r = [[0f32; LANES]; K];
        for l in 0..LANES {
            let v = f(std::array::from_fn(|k| a[k][l]));
            for k in 0..K {
                r[k][l] = v[k];
            }
        }
        r
    };
    // SAFETY (every access below): the caller's `load` and `sink`, with
    // `i + LANES <= c` or `i < c`.
    let mut i = 0;
    while i + LANES <= c {
        let a =
            std::array::from_fn(|k| unsafe { load(k, i).cast::<[f32; LANES]>().read_unaligned() });
        for (k, row) in lanes(a).into_iter().enumerate() {
            unsafe { sink.put(k, i, row) };
        }
        i += LANES;
    }
    // The last `c % LANES` channels (6 of the 22 input features of a
    // g170 net's first conv) as one vector with its lanes past `c` zero:
    // one scalar transform per channel made the transforms' code a third
    // scalar in `perf annotate` (AMD Zen 1).
    let rest = c - i;
    if rest > 0 {
        let a = std::array::from_fn(|k| {
            std::array::from_fn(|l| {
                if l < rest {
                    unsafe { load(k, i + l).read() }
                } else {
                    0.0
                }
            })
        });
        for (k, row) in lanes(a).iter().enumerate() {
            for (l, &value) in row[..rest].iter().enumerate() {
                unsafe { sink.put(k, i + l, [value]) };
            }
        }
    }
}

/// A buffer written through a raw pointer: by the team of one
/// `omp::parallel` call in disjoint parts, or through a [`StridedSink`].
#[derive(Clone, Copy)]
pub(super) struct Shared(pub(super) *mut f32, pub(super) usize);

// SAFETY: only used to hand a buffer to the team of one `omp::parallel`
// call, whose members write disjoint ranges of it (distinct tiles).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    pub(super) fn new(buf: &mut [f32]) -> Shared {
        Shared(buf.as_mut_ptr(), buf.len())
    }

    /// `len` values at `at`.
    ///
    /// # Safety
    /// No other live slice may overlap the range.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn slice(&self, at: usize, len: usize) -> &mut [f32] {
        assert!(at + len <= self.1, "Winograd buffer index out of range");
        // SAFETY: in bounds (checked); exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(at), len) }
    }
}
