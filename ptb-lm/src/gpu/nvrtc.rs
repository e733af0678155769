//! ptb-lm's own CUDA kernels: CUDA C compiled with NVRTC at first use (written without CUDA
//! headers, so it builds wherever candle's CUDA backend does), loaded once per device.

use candle_core::cuda_backend::cudarc::driver::{
    CudaFunction, CudaSlice, CudaView, DeviceRepr, LaunchConfig,
};
use candle_core::cuda_backend::cudarc::nvrtc;
use candle_core::{bail, CudaDevice, Result};
use std::sync::OnceLock;

/// CUDA C shared by the modules that read and write half types: `bf16` and `f16` as raw bits,
/// `load` to f32 and `store` from f32 (round to nearest even), without CUDA's headers.
/// A macro so that modules can `concat!` it in front of their own source.
macro_rules! half_types {
    () => {
        r#"
struct bf16 { unsigned short x; };
struct f16 { unsigned short x; };
__device__ __forceinline__ float load(float v) { return v; }
__device__ __forceinline__ float load(bf16 v) { return __uint_as_float(((unsigned int)v.x) << 16); }
__device__ __forceinline__ float load(f16 v) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.x)); return f; }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(bf16* p, float v) {
    unsigned int u = __float_as_uint(v);
    p->x = (v != v) ? (unsigned short)0x7fc0 : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ void store(f16* p, float v) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v)); p->x = h; }
"#
    };
}
pub(crate) use half_types;

/// A CUDA C source and, once compiled, its PTX.
pub struct Module {
    name: &'static str,
    source: &'static str,
    ptx: OnceLock<std::result::Result<String, String>>,
}

impl Module {
    pub const fn new(name: &'static str, source: &'static str) -> Self {
        Self {
            name,
            source,
            ptx: OnceLock::new(),
        }
    }

    /// Kernel `f` of this module on `dev`.
    pub fn function(&self, dev: &CudaDevice, f: &str) -> Result<CudaFunction> {
        let ptx = self
            .ptx
            .get_or_init(|| {
                nvrtc::compile_ptx(self.source)
                    .map(|p| p.to_src())
                    .map_err(|e| e.to_string())
            })
            .as_deref()
            .map_err(|e| candle_core::Error::Msg(format!("{}: NVRTC: {e}", self.name)))?;
        Ok(dev
            .get_or_load_custom_func(f, self.name, ptx)?
            .into_cuda_function())
    }
}

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

/// The elements of a contiguous operand.
pub fn view<'a, T: DeviceRepr>(
    s: &'a CudaSlice<T>,
    l: &candle_core::Layout,
) -> Result<CudaView<'a, T>> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(s.slice(a..b)),
        None => bail!("kernel operands must be contiguous"),
    }
}

/// One block of `threads` per row.
pub fn block_per_row(rows: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (rows as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}
