//! Helpers of ptb-lm's kernel launchers. The kernels themselves are `.cu` files beside their
//! launchers, compiled with NVRTC at first use through the op crate's process-wide module cache
//! (`candle_cudnn_rnn::kernels::Module`), after its preludes where they need them (`HALF`: bf16
//! and f16 loads and stores; `PHILOX`: the dropout masks' generator).

use candle_core::cuda_backend::cudarc::driver::LaunchConfig;
use candle_core::{bail, Result};

/// The suffix of a kernel instantiated for `dt` by a module's `OPS(T, N)` lines (`f32`, `bf16`,
/// `f16`); `what` names the operation in the error for another dtype.
pub fn dtype_suffix(dt: candle_core::DType, what: &str) -> Result<&'static str> {
    use candle_core::DType;
    Ok(match dt {
        DType::F32 => "f32",
        DType::BF16 => "bf16",
        DType::F16 => "f16",
        dt => bail!("{what} on CUDA: {dt:?} operands (f32, bf16 or f16)"),
    })
}

/// `$launch!(T)` with `T` the element type of a kernel instantiated for `$dtype` by its
/// module's `OPS(T, N)` lines: f32, bf16, or f16 (the one left once [`dtype_suffix`] has
/// refused the others).
macro_rules! for_dtype {
    ($dtype:expr, $launch:ident) => {
        match $dtype {
            candle_core::DType::F32 => $launch!(f32),
            candle_core::DType::BF16 => $launch!(half::bf16),
            _ => $launch!(half::f16),
        }
    };
}
pub(crate) use for_dtype;

/// One block of `threads` per row.
pub fn block_per_row(rows: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (rows as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}
