//! W_hh transposed, `[H][Plan::transposed_pitch]`, for a backward that fills its weight tile from
//! it (`recurrence_bwd.cu`'s WT_ROWS, [`Plan::backward_transposed`]). A backward block's tile
//! holds its units' columns of W_hh: read from W_hh itself, each block takes a 32-64-byte stripe
//! of every weight row, which took a launch 9.6 µs against 3.0 from whole rows of the transpose
//! at hidden 512 (`results/2026-11-30-h200-fill-rows/`). The training forward makes each layer's
//! transpose (`rnn_transpose_w_hh`) on a side stream beside its own launches, so that it stays off
//! the path of both passes; a pushed forward can write it in its own launch instead
//! ([`Plan::forward_transposes`], by default where each block's share is small).

use super::kernel::Pass;
use super::plan::Plan;
use super::side::Fork;
use super::Elem;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::CudaDevice;
use candle_core::Result;
use std::sync::Arc;

/// Launches the transposes of each layer's W_hh (device addresses `w_hh`) into `out` (as many
/// buffers of `H * plan.transposed_pitch()` elements, each written whole) on a side stream forked
/// from `stream`. Returns the fork, for the caller to join once its own launches are queued (the
/// buffers must outlive that join); `None` where they ran on `stream` itself (a capture before the
/// device had side streams, or no layers at all).
pub(super) fn transpose_recurrent_weights<'a, T: Elem>(
    (dev, stream, plan): (&CudaDevice, &'a Arc<CudaStream>, &Plan),
    w_hh: &[u64],
    out: &mut [CudaSlice<T>],
) -> Result<Option<Fork<'a>>> {
    if w_hh.is_empty() {
        return Ok(None);
    }
    let f = plan.function(dev, Pass::Backward, "rnn_transpose_w_hh")?;
    // 32 x 32 tiles of the transpose, a block of 32 x 8 threads each.
    let cfg = LaunchConfig {
        grid_dim: (
            plan.transposed_pitch().div_ceil(32) as u32,
            plan.hidden.div_ceil(32) as u32,
            1,
        ),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let fork = Fork::new(stream)?;
    for (&src, dst) in w_hh.iter().zip(out.iter_mut()) {
        let (dst, _guard) = dst.device_ptr_mut(stream);
        match &fork {
            // SAFETY: `rnn_transpose_w_hh` takes these two pointers; `src` is the layer's W_hh,
            // `GATES * H * H` elements of the weights the call holds, `dst` a buffer of the size
            // above, which the caller keeps past the join.
            Some(fork) => unsafe { fork.launch(0, &f, cfg, &mut [src, dst]) }?,
            None => {
                let mut launch = stream.launch_builder(&f);
                launch.arg(&src).arg(&dst);
                // SAFETY: as above, on the device's stream.
                unsafe { launch.launch(cfg) }.map_err(|e| {
                    candle_core::Error::Msg(format!(
                        "rnn: persistent kernel rnn_transpose_w_hh: {e}"
                    ))
                })?;
            }
        }
    }
    Ok(fork)
}
