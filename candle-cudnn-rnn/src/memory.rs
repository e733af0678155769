//! Freed device memory kept for reuse. candle allocates through CUDA's stream-ordered
//! allocator (`cuMemAllocAsync` from the device's memory pool), and that pool, by default,
//! hands every free byte back to the driver at each synchronization. A training loop that
//! synchronizes once per step (to read its loss, or to time the step) then has the driver map
//! its activations, cuDNN's reserve space and its gradients afresh at every step, which made
//! PTB large's LSTM training step markedly slower than with the memory kept
//! (`results/2026-11-23-h100-op-pool/`).
//! PyTorch's caching allocator keeps freed blocks; the op has candle's pool do the same.

use candle_core::cuda_backend::cudarc::driver::{result, sys, CudaStream};
use candle_core::cuda_backend::CudaDevice;
use candle_core::{Device, Result};
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// Devices (by ordinal) whose pool policy is set, by the op's first call or by the caller.
fn settled() -> &'static Mutex<HashSet<usize>> {
    static SETTLED: OnceLock<Mutex<HashSet<usize>>> = OnceLock::new();
    SETTLED.get_or_init(Default::default)
}

/// With `keep`, memory freed on `device` stays in its pool for later allocations instead of
/// returning to the driver at every synchronization (the pool's release threshold set to
/// unlimited), as PyTorch's caching allocator does; the memory stays reserved by the process.
/// Without, the pool goes back to CUDA's default (free memory is released at a
/// synchronization). The op keeps freed memory on each device it runs on unless this was
/// called for the device first. Nothing to do on the CPU.
pub fn keep_freed_memory(device: &Device, keep: bool) -> Result<()> {
    match device {
        Device::Cuda(dev) => set(dev, keep),
        _ => Ok(()),
    }
}

/// At the op's first call on `dev`: keep freed memory unless the caller chose otherwise.
pub(crate) fn keep_by_default(dev: &CudaDevice) -> Result<()> {
    let ordinal = dev.cuda_stream().context().ordinal();
    let done = settled()
        .lock()
        .map(|s| s.contains(&ordinal))
        .unwrap_or(true);
    match done {
        true => Ok(()),
        false => set(dev, true),
    }
}

fn set(dev: &CudaDevice, keep: bool) -> Result<()> {
    let ctx = dev.cuda_stream().context().clone();
    let ordinal = ctx.ordinal();
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid out-pointer, and the device handle comes from a live context.
    let status = unsafe { sys::cuDeviceGetMemPool(&mut pool, ctx.cu_device()) };
    check(status, "cuDeviceGetMemPool", ordinal)?;
    let mut threshold: u64 = if keep { u64::MAX } else { 0 };
    // SAFETY: the release threshold's value is a cuuint64_t, read through the pointer.
    let status = unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    };
    check(status, "cuMemPoolSetAttribute", ordinal)?;
    if let Ok(mut s) = settled().lock() {
        s.insert(ordinal);
    }
    Ok(())
}

fn check(status: sys::CUresult, call: &str, ordinal: usize) -> Result<()> {
    match status {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        e => candle_core::bail!("rnn: {call} on cuda:{ordinal} failed: {e:?}"),
    }
}

/// Sets `len` bytes at the device address `ptr` to `byte`, in `stream`'s order.
pub(crate) fn fill(stream: &CudaStream, ptr: u64, len: usize, byte: u8) -> Result<()> {
    // SAFETY: the callers pass a live allocation of at least `len` bytes on the stream's device.
    unsafe { result::memset_d8_async(ptr, byte, len, stream.cu_stream()) }
        .map_err(|e| candle_core::Error::Msg(format!("rnn: cuMemsetD8Async: {e}")))
}
