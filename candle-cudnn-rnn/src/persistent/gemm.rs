//! The non-recurrent half of a layer, done for all steps at once before the recurrence: one
//! cuBLAS GEMM on candle's handle and stream, half inputs, f32 accumulation and output.

use candle_core::cuda_backend::cudarc::cublas::sys;
use candle_core::cuda_backend::CudaDevice;
use candle_core::{bail, Result};
use std::ffi::c_void;

/// `out[r, g] = Σ_k x[r, k] · w[g, k]` (`x · wᵀ`): `x` `[rows, k]` and `w` `[gates, k]` row-major
/// in bf16 (`bf16`) or f16, `out` `[rows, gates]` f32; all device addresses.
///
/// # Safety
/// The addresses must hold buffers of those sizes and types on `dev`, live until the GEMM ran.
pub(super) unsafe fn x_times_wt(
    dev: &CudaDevice,
    bf16: bool,
    (rows, k, gates): (usize, usize, usize),
    x: u64,
    w: u64,
    out: u64,
) -> Result<()> {
    let dtype = if bf16 {
        sys::cudaDataType::CUDA_R_16BF
    } else {
        sys::cudaDataType::CUDA_R_16F
    };
    let (alpha, beta) = (1f32, 0f32);
    let blas = dev.cublas_handle();
    // Column-major, cuBLAS's view: out (gates x rows) = op(w)ᵀ (gates x k) · x (k x rows).
    let status = sys::cublasGemmEx(
        *blas.handle(),
        sys::cublasOperation_t::CUBLAS_OP_T,
        sys::cublasOperation_t::CUBLAS_OP_N,
        gates as i32,
        rows as i32,
        k as i32,
        &alpha as *const f32 as *const c_void,
        w as *const c_void,
        dtype,
        k as i32,
        x as *const c_void,
        dtype,
        k as i32,
        &beta as *const f32 as *const c_void,
        out as *mut c_void,
        sys::cudaDataType::CUDA_R_32F,
        gates as i32,
        sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
        sys::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
    );
    if status != sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        bail!("rnn: persistent LSTM's input projection (cublasGemmEx) failed: {status:?}")
    }
    Ok(())
}
