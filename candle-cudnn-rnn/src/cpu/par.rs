//! The CPU path's per-sample loops, spread over threads when a step is big enough to pay
//! for it: within one time step the samples of a batch are independent.

use rayon::prelude::*;
use std::marker::PhantomData;

/// Steps with fewer elements than this stay on one thread.
const MIN_PARALLEL: usize = 1 << 14;

/// Calls `f(b)` for every sample `b` in `0..batch`, on several threads when `batch * width`
/// (the elements a step touches) is large.
pub(crate) fn for_each_sample(batch: usize, width: usize, f: impl Fn(usize) + Send + Sync) {
    if batch > 1 && batch * width >= MIN_PARALLEL {
        (0..batch).into_par_iter().for_each(f);
    } else {
        (0..batch).for_each(f);
    }
}

/// A buffer that per-sample closures write into, each sample its own rows.
pub(crate) struct Rows<'a, T> {
    ptr: *mut T,
    len: usize,
    _buf: PhantomData<&'a mut [T]>,
}

// SAFETY: a `Rows` only hands out slices that its users keep disjoint across threads (see
// `get`), and `T` itself may move between threads.
unsafe impl<T: Send> Send for Rows<'_, T> {}
unsafe impl<T: Send> Sync for Rows<'_, T> {}

impl<'a, T> Rows<'a, T> {
    pub(crate) fn new(buf: &'a mut [T]) -> Self {
        Self {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            _buf: PhantomData,
        }
    }

    /// `len` elements from `start` (bounds-checked).
    ///
    /// # Safety
    /// No two slices alive at the same time may overlap: each sample takes only its own rows.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn get(&self, start: usize, len: usize) -> &mut [T] {
        assert!(start + len <= self.len, "row out of bounds");
        // SAFETY: in bounds (checked above); exclusivity is the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), len) }
    }
}
