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

/// `rows` rows of `cols` elements of the plan's type between device buffers.
#[derive(Clone, Copy)]
pub(super) struct Rows {
    pub rows: usize,
    pub cols: usize,
}

/// The order in which a row kernel writes the rows it reads: as they come, or (`Flipped`, a
/// bidirectional layer's reverse direction) in blocks of `batch` rows, one a step, in reverse
/// order: time flipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Order {
    Same,
    Flipped { batch: usize },
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
    pub fn copy(&self, src: (u64, usize), dst: (u64, usize), n: Rows) -> Result<()> {
        self.copy_in(src, dst, n, Order::Same)
    }

    /// [`RowKernels::copy`], the rows written in `order`.
    pub fn copy_in(
        &self,
        src: (u64, usize),
        dst: (u64, usize),
        n: Rows,
        order: Order,
    ) -> Result<()> {
        self.launch(("rnn_copy_rows", order), dst, src, n, dst.1)
    }

    /// `dst[r][c] = src[r][c]` for `c < cols` only, the rows written in `order`: columns
    /// placed between others of a wider row (a direction's output in a bidirectional layer's).
    pub fn place(&self, src: (u64, usize), dst: (u64, usize), n: Rows, order: Order) -> Result<()> {
        self.launch(("rnn_copy_rows", order), dst, src, n, n.cols)
    }

    /// `dst[r][c] += src[r][c]` for `c < cols` (half elements only).
    pub fn add(
        &self,
        (src, src_ld): (u64, usize),
        (dst, dst_ld): (u64, usize),
        n: Rows,
    ) -> Result<()> {
        if self.plan.elem.words() != 1 {
            candle_core::bail!("rnn: the row kernels add half elements only");
        }
        let add = ("rnn_add_rows", Order::Same);
        self.launch(add, (dst, dst_ld), (src, src_ld), n, n.cols)
    }

    /// `name`'s kernel moving `width` elements of every row, in the widest words that both
    /// pitches, the columns and both addresses allow (`pad.cu`), writing rows in `order`. The
    /// kernels move 16-bit words, so an f32 element is two (a copy moves bits).
    fn launch(
        &self,
        (name, order): (&str, Order),
        (dst, dst_ld): (u64, usize),
        (src, src_ld): (u64, usize),
        n: Rows,
        width: usize,
    ) -> Result<()> {
        if n.rows == 0 || width == 0 {
            return Ok(());
        }
        let flip = match order {
            Order::Same => 0,
            Order::Flipped { batch } => batch,
        };
        let halves = self.plan.elem.words();
        let [src_ld, dst_ld, cols, width] = [src_ld, dst_ld, n.cols, width].map(|v| v * halves);
        let elem = 2; // bytes of a 16-bit word
        let word = [4usize, 2, 1]
            .into_iter()
            .find(|&v| {
                [src_ld, dst_ld, cols].iter().all(|x| x % v == 0)
                    && [src, dst].iter().all(|a| a % (v * elem) as u64 == 0)
            })
            .unwrap_or(1);
        let f = self
            .plan
            .function(self.dev, self.pass, &format!("{name}_{word}"))?;
        let [src_ld, dst_ld, rows, cols, width_32, flip] =
            [src_ld, dst_ld, n.rows, cols, width, flip].map(|v| v as u32);
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
            .arg(&cols)
            .arg(&width_32)
            .arg(&flip);
        // SAFETY: the callers pass buffers of `rows` rows of their `ld` on this stream (`rows` a
        // whole number of `flip` blocks where it flips).
        unsafe { launch.launch(config) }
            .map_err(|e| candle_core::Error::Msg(format!("rnn: persistent kernel {name}: {e}")))?;
        Ok(())
    }
}

/// The most blocks a grid has along y; the row kernels loop over more rows.
const MAX_GRID_Y: u32 = 65535;

/// The input projection's operands of a layer with `in_size` inputs, padded: `input`'s `steps`
/// rows (written in `order`: a reverse direction's flipped in time) and `w_ih`'s `4H` rows, each
/// `in_size` wide.
pub(super) fn pad_input<T: Elem>(
    k: &RowKernels,
    (input, w_ih): (u64, u64),
    (steps, gh, in_size): (usize, usize, usize),
    order: Order,
) -> Result<PaddedInput<T>> {
    let ld = padded(in_size);
    // SAFETY: both are written whole by the copies below before any read.
    let mut x = unsafe { k.stream.alloc::<T>(steps * ld) }?;
    let mut w = unsafe { k.stream.alloc::<T>(gh * ld) }?;
    {
        use candle_core::cuda_backend::cudarc::driver::DevicePtrMut;
        let (xp, _a) = x.device_ptr_mut(k.stream);
        let (wp, _b) = w.device_ptr_mut(k.stream);
        let n = Rows {
            rows: steps,
            cols: in_size,
        };
        k.copy_in((input, in_size), (xp, ld), n, order)?;
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
