//! The buffers a net's weights live in: 64-byte lines, and from
//! [`HUGE_FROM`] on, memory the kernel is asked to back with 2 MB pages.
//!
//! At a search's small batches every evaluation streams all of a net's
//! Winograd weights from memory (g170 b6c96's F(5x5) ones are 21 MB, more
//! than these CPUs' L3), and with 4 KB pages each 4 KB of them is a TLB
//! miss and a page walk: the prefetched lines wait on the walks. On Linux
//! with transparent huge pages in `madvise` mode (as on the VMs measured),
//! nothing is backed by 2 MB pages unless asked. Measured 2026-12-06 on a
//! 2-core AMD EPYC Zen 1 VM, g170 b6c96, `engine benchmark -nn -batch 1`,
//! `scripts/nn_ab.sh` (6-8 alternated pairs): with every large malloc block
//! advised (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`) 1.17x, 1.15x and 1.11x
//! evaluations/s on 9x9, 13x13 and 19x19; these buffers alone give about
//! as much (docs/RESULTS.md, "AVX2 only: AMD Zen 1, 2026-12-06 evening").

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

/// Buffers of this many bytes or more go on 2 MB pages: a 96-channel
/// net's F(3x3) weights (0.9 MB a conv) and up. Smaller ones stay in
/// 4 KB pages, where rounding them up to a whole 2 MB page would waste more
/// than it saves.
const HUGE_FROM: usize = 512 * 1024;

/// A huge page of x86-64 and most 64-bit Linux targets.
const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// A fixed-length buffer of `T` (a 64-byte line of plain values) that
/// never moves: from [`HUGE_FROM`] bytes on it starts on a 2 MB boundary,
/// spans whole 2 MB pages, and is advised as huge pages before it is first
/// written, so the kernel backs it with them where it can (a kernel
/// without transparent huge pages ignores the advice: 4 KB pages then).
pub(super) struct Lines<T: Copy> {
    ptr: NonNull<T>,
    len: usize,
    /// What was allocated (`size` 0: nothing).
    layout: Layout,
}

// SAFETY: `Lines` owns its buffer as a `Vec` would; `T` is plain data.
unsafe impl<T: Copy + Send> Send for Lines<T> {}
// SAFETY: shared access only reads.
unsafe impl<T: Copy + Sync> Sync for Lines<T> {}

impl<T: Copy> Lines<T> {
    /// `len` copies of `fill`.
    ///
    /// # Panics
    /// If the size overflows `isize` (a net's weights do not come near).
    pub(super) fn filled(len: usize, fill: T) -> Lines<T> {
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .expect("weight buffer size overflows");
        let huge = bytes >= HUGE_FROM;
        let layout = if huge {
            Layout::from_size_align(bytes.next_multiple_of(HUGE_PAGE), HUGE_PAGE)
        } else {
            Layout::from_size_align(bytes, std::mem::align_of::<T>())
        }
        .expect("weight buffer layout");
        if layout.size() == 0 {
            return Lines {
                ptr: NonNull::dangling(),
                len,
                layout,
            };
        }
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            handle_alloc_error(layout)
        };
        if huge {
            advise_huge_pages(raw, layout.size());
        }
        for i in 0..len {
            // SAFETY: `i < len` values of `T` fit the allocation, which is
            // aligned for `T`.
            unsafe { ptr.as_ptr().add(i).write(fill) };
        }
        Lines { ptr, len, layout }
    }
}

impl<T: Copy> std::ops::Deref for Lines<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised values from `ptr` (dangling but
        // aligned when `len` is 0 or `T` has no size).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for Lines<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as `deref`, and `self` is borrowed exclusively.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Drop for Lines<T> {
    fn drop(&mut self) {
        if self.layout.size() > 0 {
            // SAFETY: allocated by `filled` with this layout.
            unsafe { dealloc(self.ptr.as_ptr().cast(), self.layout) };
        }
    }
}

/// Asks the kernel to back `len` bytes from `start` (2 MB aligned, not yet
/// written) with transparent huge pages. Advice only: an error (no THP in
/// this kernel) leaves 4 KB pages.
fn advise_huge_pages(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the range is one allocation of ours; `madvise` with
    // `MADV_HUGEPAGE` changes no contents.
    unsafe {
        libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small and huge buffers hold what they were filled with, are
    /// aligned as asked, and the huge ones start on a 2 MB boundary.
    #[test]
    fn lines_hold_their_values_at_their_alignment() {
        #[derive(Clone, Copy, PartialEq, Debug)]
        #[repr(C, align(64))]
        struct Line([f32; 16]);
        for len in [0, 1, 5, HUGE_FROM / 64 - 1, HUGE_FROM / 64, 40_000] {
            let mut lines = Lines::filled(len, Line([1.5; 16]));
            assert_eq!(lines.len(), len);
            assert!(lines.iter().all(|l| *l == Line([1.5; 16])));
            let start = lines.as_ptr() as usize;
            assert_eq!(start % 64, 0);
            if len * 64 >= HUGE_FROM {
                assert_eq!(start % HUGE_PAGE, 0, "{len} lines");
            }
            if let Some(last) = lines.last_mut() {
                last.0[15] = -2.0;
            }
            assert_eq!(lines.last().map(|l| l.0[15]), (len > 0).then_some(-2.0));
        }
    }
}
