//! Rows padded for the layer's GEMMs. cuBLAS takes its Hopper kernels only when every
//! operand's rows, and the extent along them, are whole multiples of 16 bytes; a hidden or
//! input size like PTB large's 1500 (3000-byte rows) sends every product to older kernels,
//! much slower than with 1504 columns (`results/2026-11-23-h100-gemm-pad/gemm-probe/`).
//! Operands of such a width are copied into zero-padded rows first, and products of such a
//! width are made in padded rows, then copied or added into place (`pad.cu`).

use super::kernel::Pass;
use super::plan::Plan;
use super::Elem;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::CudaDevice;
use candle_core::Result;
use std::sync::Arc;

/// Row widths in elements: multiples of 8 (16 bytes of a half type).
pub(super) fn padded(cols: usize) -> usize {
    cols.next_multiple_of(8)
}

/// Whether `plan`'s rows of `cols` elements are padded for the GEMMs: half elements whose rows
/// are not whole multiples of 16 bytes. (The row kernels copy half elements; f32 rows, in TF32,
/// go to cuBLAS at any width.)
pub(super) fn pads(plan: &Plan, cols: usize) -> bool {
    plan.elem.words() == 1 && padded(cols) != cols
}

/// A layer's input and input weights with padded rows, made by the forward for its input
/// projection and kept for the backward's weight and input gradients.
pub(super) struct PaddedInput<T> {
    /// `[T * B, ld]`.
    pub input: CudaSlice<T>,
    /// `[4H, ld]`.
    pub w_ih: CudaSlice<T>,
    pub ld: usize,
}

/// `rows` rows of `cols` elements between device buffers of the plan's half type.
#[derive(Clone, Copy)]
pub(super) struct Rows {
    pub rows: usize,
    pub cols: usize,
}

/// Launches the row kernels of `pass`'s module on the device's stream.
pub(super) struct RowKernels<'a> {
    pub dev: &'a CudaDevice,
    pub stream: &'a Arc<CudaStream>,
    pub plan: &'a Plan,
    pub pass: Pass,
}

impl RowKernels<'_> {
    /// `dst[r][c] = src[r][c]` for `c < cols`, zeros up to `dst_ld` (also un-padding, with
    /// `dst_ld == cols`).
    pub fn copy(
        &self,
        (src, src_ld): (u64, usize),
        (dst, dst_ld): (u64, usize),
        n: Rows,
    ) -> Result<()> {
        self.launch("rnn_copy_rows", (dst, dst_ld), (src, src_ld), n, dst_ld)
    }

    /// `dst[r][c] += src[r][c]` for `c < cols`.
    pub fn add(
        &self,
        (src, src_ld): (u64, usize),
        (dst, dst_ld): (u64, usize),
        n: Rows,
    ) -> Result<()> {
        self.launch("rnn_add_rows", (dst, dst_ld), (src, src_ld), n, n.cols)
    }

    /// `name`'s kernel moving `width` elements of every row, in the widest words that both
    /// pitches, the columns and both addresses allow (`pad.cu`).
    fn launch(
        &self,
        name: &str,
        (dst, dst_ld): (u64, usize),
        (src, src_ld): (u64, usize),
        n: Rows,
        width: usize,
    ) -> Result<()> {
        if n.rows == 0 || width == 0 {
            return Ok(());
        }
        let elem = 2; // bytes of a half type
        let word = [4usize, 2, 1]
            .into_iter()
            .find(|&v| {
                [src_ld, dst_ld, n.cols].iter().all(|x| x % v == 0)
                    && [src, dst].iter().all(|a| a % (v * elem) as u64 == 0)
            })
            .unwrap_or(1);
        let f = self
            .plan
            .function(self.dev, self.pass, &format!("{name}_{word}"))?;
        let [src_ld, dst_ld, rows, cols] = [src_ld, dst_ld, n.rows, n.cols].map(|v| v as u32);
        const THREADS: u32 = 128;
        let words = width.div_ceil(word) as u32;
        let config = LaunchConfig {
            grid_dim: (words.div_ceil(THREADS), rows.min(MAX_GRID_Y), 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = self.stream.launch_builder(&f);
        launch
            .arg(&src)
            .arg(&src_ld)
            .arg(&dst)
            .arg(&dst_ld)
            .arg(&rows)
            .arg(&cols);
        // SAFETY: the callers pass buffers of `rows` rows of their `ld` on this stream.
        unsafe { launch.launch(config) }
            .map_err(|e| candle_core::Error::Msg(format!("rnn: persistent kernel {name}: {e}")))?;
        Ok(())
    }
}

/// The most blocks a grid has along y; the row kernels loop over more rows.
const MAX_GRID_Y: u32 = 65535;

/// The input projection's operands of a layer with `in_size` inputs, padded: `input`'s `steps`
/// rows and `w_ih`'s `4H` rows, each `in_size` wide.
pub(super) fn pad_input<T: Elem>(
    k: &RowKernels,
    (input, w_ih): (u64, u64),
    (steps, gh, in_size): (usize, usize, usize),
) -> Result<PaddedInput<T>> {
    let ld = padded(in_size);
    // SAFETY: both are written whole by the copies below before any read.
    let mut x = unsafe { k.stream.alloc::<T>(steps * ld) }?;
    let mut w = unsafe { k.stream.alloc::<T>(gh * ld) }?;
    {
        use candle_core::cuda_backend::cudarc::driver::DevicePtrMut;
        let (xp, _a) = x.device_ptr_mut(k.stream);
        let (wp, _b) = w.device_ptr_mut(k.stream);
        k.copy(
            (input, in_size),
            (xp, ld),
            Rows {
                rows: steps,
                cols: in_size,
            },
        )?;
        k.copy(
            (w_ih, in_size),
            (wp, ld),
            Rows {
                rows: gh,
                cols: in_size,
            },
        )?;
    }
    Ok(PaddedInput {
        input: x,
        w_ih: w,
        ld,
    })
}
