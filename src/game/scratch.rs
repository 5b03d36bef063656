//! Stack scratch for the board's flood fills, ladder reads and Benson's
//! algorithm, sized by the board in play rather than by [`MAX_LEN`].
//!
//! These routines run for every network evaluation (feature encoding reads
//! ladders and pass-alive area) and need a few per-point tables each call.
//! A plain `[0u16; MAX_PLAY_SIZE]` costs a `memset` of the largest board
//! every time, which grew 2.2x when `MAX_LEN` went from 25 to 37, on 9x9 as
//! much as on 37x37. [`Scratch`] reserves the largest size on the stack but
//! initialises only the part the board uses, so a 19x19 call touches 19x19
//! worth of memory whatever the maximum is. It is also a bounded stack
//! (`push`/`pop`) for the fills, which need no initialisation at all.
//!
//! [`MAX_LEN`]: crate::game::MAX_LEN

use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

/// A fixed-capacity vector on the stack whose first `len` elements are
/// initialised; it derefs to that slice. Moving one copies its whole
/// capacity, so make it where it is used and fill it in place.
pub(crate) struct Scratch<T: Copy, const N: usize> {
    buf: [MaybeUninit<T>; N],
    len: usize,
}

impl<T: Copy, const N: usize> Scratch<T, N> {
    /// An empty stack (nothing initialised).
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Scratch {
            buf: [const { MaybeUninit::uninit() }; N],
            len: 0,
        }
    }

    /// Makes it `len` copies of `value` (at most `N`; panics above, a bug).
    /// A method rather than a constructor: returning a `Scratch` by value
    /// copies its whole capacity, which is what it exists to avoid.
    #[inline(always)]
    pub(crate) fn fill(&mut self, value: T, len: usize) {
        self.buf[..len].fill(MaybeUninit::new(value));
        self.len = len;
    }

    /// Appends `value` (panics when full: callers size `N` for the largest
    /// board, so that is a bug).
    #[inline(always)]
    pub(crate) fn push(&mut self, value: T) {
        self.buf[self.len] = MaybeUninit::new(value);
        self.len += 1;
    }

    /// Removes and returns the last element.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: elements below the old `len` were initialised by
        // `fill` or `push`.
        Some(unsafe { self.buf[self.len].assume_init() })
    }
}

impl<T: Copy, const N: usize> Deref for Scratch<T, N> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` elements are initialised (see `fill`,
        // `push`), and `MaybeUninit<T>` has `T`'s layout.
        unsafe { std::slice::from_raw_parts(self.buf.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Copy, const N: usize> DerefMut for Scratch<T, N> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast::<T>(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_holds_exactly_len_copies() {
        let mut s: Scratch<i16, 64> = Scratch::new();
        s.fill(-1, 10);
        assert_eq!(&*s, &[-1i16; 10][..]);
        s.fill(3, 2);
        assert_eq!(&*s, &[3i16; 2][..]);
        let mut empty: Scratch<u8, 4> = Scratch::new();
        empty.fill(7, 0);
        assert!(empty.is_empty());
    }

    #[test]
    fn push_pop_is_last_in_first_out_and_indexable() {
        let mut s: Scratch<u16, 8> = Scratch::new();
        assert_eq!(s.pop(), None);
        for v in [3, 1, 4, 1, 5] {
            s.push(v);
        }
        assert_eq!(s[2], 4);
        s[2] = 9;
        assert_eq!(&*s, &[3, 1, 9, 1, 5][..]);
        assert_eq!(s.pop(), Some(5));
        assert_eq!(s.len(), 4);
    }

    #[test]
    #[should_panic]
    fn pushing_past_the_capacity_panics_rather_than_writing_past_it() {
        let mut s: Scratch<u8, 2> = Scratch::new();
        for v in 0..3 {
            s.push(v);
        }
    }

    #[test]
    #[should_panic]
    fn filling_past_the_capacity_panics() {
        Scratch::<u8, 2>::new().fill(0, 3);
    }
}
