//! Matrix products for the CPU path, on the `gemm` crate (the one candle's CPU backend uses).

use gemm::Parallelism;

/// A read-only matrix view: element `(r, c)` is `data[r * rs + c * cs]`.
#[derive(Clone, Copy)]
pub(crate) struct Mat<'a, T> {
    data: &'a [T],
    rs: usize,
    cs: usize,
}

impl<'a, T> Mat<'a, T> {
    /// A row-major matrix with `cols` columns.
    pub(crate) fn rows(data: &'a [T], cols: usize) -> Self {
        Self {
            data,
            rs: cols,
            cs: 1,
        }
    }

    pub(crate) fn t(self) -> Self {
        Self {
            data: self.data,
            rs: self.cs,
            cs: self.rs,
        }
    }

    fn fits(&self, rows: usize, cols: usize) -> bool {
        rows == 0 || cols == 0 || (rows - 1) * self.rs + (cols - 1) * self.cs < self.data.len()
    }
}

/// `c[m, n] = a[m, k] * b[k, n]` (plus the old `c` when `accumulate`), `c` row-major.
pub(crate) fn matmul<T: 'static + num_traits::Float>(
    (m, n, k): (usize, usize, usize),
    c: &mut [T],
    a: Mat<T>,
    b: Mat<T>,
    accumulate: bool,
) {
    // The sizes come from validated dims; a mismatch here is a bug in this crate, not bad input.
    assert!(
        c.len() >= m * n && a.fits(m, k) && b.fits(k, n),
        "matmul operand out of bounds"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            c[..m * n].iter_mut().for_each(|v| *v = T::zero());
        }
        return;
    }
    let parallelism = if m * n * k >= 1 << 18 {
        Parallelism::Rayon(0)
    } else {
        Parallelism::None
    };
    // SAFETY: every pointer is in bounds for the strides and sizes checked above.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.data.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            T::one(),
            T::one(),
            false,
            false,
            false,
            parallelism,
        )
    }
}
