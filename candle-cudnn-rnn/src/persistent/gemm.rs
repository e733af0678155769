//! The non-recurrent products of a layer, each done for all steps at once by one cuBLAS GEMM
//! (half inputs, or f32 ones in TF32; f32 accumulation) on candle's handle and stream
//! ([`device_blas`]) or a side stream's (`side`): the input projection before the forward
//! recurrence, the weight and input gradients after the backward one.

use super::kernel::Operands;
use candle_core::cuda_backend::cudarc::cublas::sys;
use candle_core::cuda_backend::CudaDevice;
use candle_core::{bail, Result};
use std::ffi::c_void;

/// A row-major matrix operand in device memory: `ld` elements per stored row; `t`: the
/// operand is the transpose of what is stored.
#[derive(Clone, Copy)]
pub(super) struct Mat {
    pub ptr: u64,
    pub ld: usize,
    pub t: bool,
}

impl Mat {
    pub fn new(ptr: u64, ld: usize) -> Self {
        Self { ptr, ld, t: false }
    }

    /// The transpose of the stored matrix.
    pub fn t(self) -> Self {
        Self { t: true, ..self }
    }
}

/// The cuBLAS handle of `dev`'s stream (candle's, which lives as long as `dev`).
pub(super) fn device_blas(dev: &CudaDevice) -> sys::cublasHandle_t {
    *dev.cublas_handle().handle()
}

/// Where a product goes: its element type and whether it adds to what is there.
#[derive(Clone, Copy)]
pub(super) enum Out {
    /// f32, overwritten.
    F32,
    /// The operands' type (`Operands`: bf16, f16 or f32), overwritten.
    Elem,
    /// The operands' type, added to.
    AddElem,
}

/// `c = a · b` (or `c += a · b`), row-major, `a` `[m, k]` and `b` `[k, n]` of `elem`, `c`
/// `[m, n]` with `n` elements per row, on the stream of the cuBLAS handle `blas`.
///
/// # Safety
/// `blas` must be a live handle; the operands device buffers of those sizes and types on its
/// device, live until the product has run.
pub(super) unsafe fn matmul(
    blas: sys::cublasHandle_t,
    elem: Operands,
    (m, n, k): (usize, usize, usize),
    a: Mat,
    b: Mat,
    c: u64,
    out: Out,
) -> Result<()> {
    use sys::cublasComputeType_t::{CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    use sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
    let (operand_type, compute) = match elem {
        Operands::Bf16 => (sys::cudaDataType::CUDA_R_16BF, CUBLAS_COMPUTE_32F),
        Operands::F16 => (sys::cudaDataType::CUDA_R_16F, CUBLAS_COMPUTE_32F),
        Operands::Tf32 => (sys::cudaDataType::CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32),
    };
    let (c_type, beta) = match out {
        Out::F32 => (sys::cudaDataType::CUDA_R_32F, 0f32),
        Out::Elem => (operand_type, 0.0),
        Out::AddElem => (operand_type, 1.0),
    };
    let op = |t: bool| if t { CUBLAS_OP_T } else { CUBLAS_OP_N };
    let alpha = 1f32;
    // cuBLAS is column-major, where a row-major matrix reads as its transpose: it computes
    // cᵀ (n x m) = bᵀ · aᵀ.
    let status = sys::cublasGemmEx(
        blas,
        op(b.t),
        op(a.t),
        n as i32,
        m as i32,
        k as i32,
        &alpha as *const f32 as *const c_void,
        b.ptr as *const c_void,
        operand_type,
        b.ld as i32,
        a.ptr as *const c_void,
        operand_type,
        a.ld as i32,
        &beta as *const f32 as *const c_void,
        c as *mut c_void,
        c_type,
        n as i32,
        compute,
        sys::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
    );
    if status != sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        bail!("rnn: the persistent kernels' GEMM (cublasGemmEx, {m}x{n}x{k}) failed: {status:?}")
    }
    Ok(())
}
