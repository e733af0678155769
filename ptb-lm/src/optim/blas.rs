//! The two vector operations the optimizer's pieces run on every variable, as candle in-place
//! ops: the norm (`Nrm2`, for clipping) and `axpy` (`Axpy`, for SGD), with their scalars on the
//! device, so that no step waits for the host. The gradient may be f32, bf16 or f16 (a
//! half-precision layer's own gradient, `super::OwnedGrad`). The f32 norm is cuBLAS's; the half
//! norms and every axpy are kernels of ours computing in f32. An axpy by a factor of exactly 0
//! leaves its destination alone: an overflowed f16 step has a 0 factor and may have inf
//! gradients, and 0 · inf is NaN. An axpy can also refresh a half-precision copy of the
//! variable that a layer computes with ([`axpy`]): on CUDA in the same kernel, which saves
//! the layer's per-step cast a read of every f32 weight.

use candle_core::{bail, CpuStorage, Layout, Result, Tensor};

/// `dst[0] = ‖src‖₂` for a one-element `dst`.
pub struct Nrm2;

/// `dst += a[0] · src`, elementwise, `a` a one-element tensor; nothing when `a[0]` is 0.
/// With `copy` (CUDA only), the kernel also writes `dst` rounded to `copy`'s half dtype there.
#[derive(Default)]
pub struct Axpy {
    copy: Option<Tensor>,
}

/// `copy = src` rounded to `copy`'s dtype (to nearest even, as `to_dtype`).
struct RoundInto;

/// `var += a[0] · grad` and, with `copy`, `copy = var` in `copy`'s dtype afterwards (left alone
/// too when `a[0]` is 0); `var` contiguous f32, `copy` contiguous of `var`'s size.
pub fn axpy(var: &Tensor, grad: &Tensor, a: &Tensor, copy: Option<&Tensor>) -> Result<()> {
    if let Some(c) = copy {
        if c.elem_count() != var.elem_count() || !c.is_contiguous() {
            bail!(
                "axpy: the copy must be contiguous, of the variable's {} elements",
                var.elem_count()
            )
        }
    }
    match copy {
        Some(c) if var.device().is_cuda() => {
            let op = Axpy {
                copy: Some(c.clone()),
            };
            var.inplace_op3(grad, a, &op)
        }
        Some(c) => {
            var.inplace_op3(grad, a, &Axpy::default())?;
            c.inplace_op2(var, &RoundInto)
        }
        None => var.inplace_op3(grad, a, &Axpy::default()),
    }
}

fn contiguous<'a>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&s.as_slice::<f32>()?[a..b]),
        None => bail!("optimizer: operands must be contiguous"),
    }
}

/// A contiguous f32, bf16 or f16 operand's values.
fn widened(s: &CpuStorage, l: &Layout) -> Result<Vec<f64>> {
    let Some((a, b)) = l.contiguous_offsets() else {
        bail!("optimizer: operands must be contiguous")
    };
    Ok(match s {
        CpuStorage::F32(v) => v[a..b].iter().map(|&x| x as f64).collect(),
        CpuStorage::BF16(v) => v[a..b].iter().map(|x| x.to_f64()).collect(),
        CpuStorage::F16(v) => v[a..b].iter().map(|x| x.to_f64()).collect(),
        _ => bail!("optimizer: gradients must be f32, bf16 or f16"),
    })
}

fn contiguous_mut<'a>(s: &'a mut CpuStorage, l: &Layout) -> Result<&'a mut [f32]> {
    let (a, b) = match l.contiguous_offsets() {
        Some(r) => r,
        None => bail!("optimizer: operands must be contiguous"),
    };
    match s {
        CpuStorage::F32(v) => Ok(&mut v[a..b]),
        _ => bail!("optimizer: operands must be f32"),
    }
}

/// `dst += alpha · src`.
fn add_scaled(dst: &mut [f32], alpha: f32, src: impl ExactSizeIterator<Item = f32>) -> Result<()> {
    if src.len() != dst.len() {
        bail!("axpy: {} elements into {}", src.len(), dst.len())
    }
    if alpha == 0.0 {
        return Ok(());
    }
    dst.iter_mut().zip(src).for_each(|(w, g)| *w += alpha * g);
    Ok(())
}

impl candle_core::InplaceOp2 for Nrm2 {
    fn name(&self) -> &'static str {
        "nrm2"
    }

    fn cpu_fwd(&self, d: &mut CpuStorage, dl: &Layout, s: &CpuStorage, sl: &Layout) -> Result<()> {
        let sum: f64 = widened(s, sl)?.iter().map(|&x| x * x).sum();
        contiguous_mut(d, dl)?[0] = sum.sqrt() as f32;
        Ok(())
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        d: &mut candle_core::CudaStorage,
        dl: &Layout,
        s: &candle_core::CudaStorage,
        sl: &Layout,
    ) -> Result<()> {
        cublas::nrm2(d, dl, s, sl)
    }
}

impl candle_core::InplaceOp3 for Axpy {
    fn name(&self) -> &'static str {
        "axpy"
    }

    fn cpu_fwd(
        &self,
        d: &mut CpuStorage,
        dl: &Layout,
        s: &CpuStorage,
        sl: &Layout,
        a: &CpuStorage,
        al: &Layout,
    ) -> Result<()> {
        if self.copy.is_some() {
            bail!("axpy: the CPU refreshes a copy separately (blas::axpy)")
        }
        let alpha = contiguous(a, al)?[0];
        let dst = contiguous_mut(d, dl)?;
        // An f32 gradient is read in place: this runs on every variable at every CPU step.
        match s {
            CpuStorage::F32(_) => add_scaled(dst, alpha, contiguous(s, sl)?.iter().copied()),
            _ => add_scaled(dst, alpha, widened(s, sl)?.into_iter().map(|g| g as f32)),
        }
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        d: &mut candle_core::CudaStorage,
        dl: &Layout,
        s: &candle_core::CudaStorage,
        sl: &Layout,
        a: &candle_core::CudaStorage,
        al: &Layout,
    ) -> Result<()> {
        kernels::axpy(d, dl, s, sl, a, al, self.copy.as_ref())
    }
}

impl candle_core::InplaceOp2 for RoundInto {
    fn name(&self) -> &'static str {
        "round-into"
    }

    fn cpu_fwd(&self, d: &mut CpuStorage, dl: &Layout, s: &CpuStorage, sl: &Layout) -> Result<()> {
        let src = contiguous(s, sl)?;
        let Some((a, b)) = dl.contiguous_offsets() else {
            bail!("optimizer: operands must be contiguous")
        };
        if b - a != src.len() {
            bail!("round-into: {} elements into {}", src.len(), b - a)
        }
        match d {
            CpuStorage::BF16(v) => v[a..b]
                .iter_mut()
                .zip(src)
                .for_each(|(c, &w)| *c = half::bf16::from_f32(w)),
            CpuStorage::F16(v) => v[a..b]
                .iter_mut()
                .zip(src)
                .for_each(|(c, &w)| *c = half::f16::from_f32(w)),
            _ => bail!("round-into: the copy must be bf16 or f16"),
        }
        Ok(())
    }
}

#[cfg(feature = "cuda")]
mod cublas {
    //! cuBLAS's f32 norm, on candle's handle and stream, with its result on the device
    //! (pointer mode DEVICE for the call, HOST again after, as candle expects).

    use candle_core::backend::BackendStorage;
    use candle_core::cuda_backend::cudarc::cublas::sys;
    use candle_core::cuda_backend::cudarc::driver::{CudaView, DevicePtr, DevicePtrMut};
    use candle_core::{bail, CudaStorage, Layout, Result};

    fn view<'a>(s: &'a CudaStorage, l: &Layout) -> Result<CudaView<'a, f32>> {
        match l.contiguous_offsets() {
            Some((a, b)) => Ok(s.as_cuda_slice::<f32>()?.slice(a..b)),
            None => bail!("optimizer: operands must be contiguous"),
        }
    }

    fn check(status: sys::cublasStatus_t, call: &str) -> Result<()> {
        match status {
            sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(()),
            s => bail!("{call} failed: {s:?}"),
        }
    }

    /// Runs `f` with the device's cuBLAS handle in device pointer mode.
    fn on_device(
        s: &CudaStorage,
        f: impl FnOnce(sys::cublasHandle_t) -> sys::cublasStatus_t,
        call: &str,
    ) -> Result<()> {
        let blas = s.device().cublas_handle();
        let h = *blas.handle();
        use sys::cublasPointerMode_t as P;
        // SAFETY: the handle is live; the calls are enqueued on candle's stream.
        unsafe {
            check(
                sys::cublasSetPointerMode_v2(h, P::CUBLAS_POINTER_MODE_DEVICE),
                "cublasSetPointerMode_v2",
            )?;
            let status = f(h);
            check(
                sys::cublasSetPointerMode_v2(h, P::CUBLAS_POINTER_MODE_HOST),
                "cublasSetPointerMode_v2",
            )?;
            check(status, call)
        }
    }

    pub fn nrm2(d: &mut CudaStorage, dl: &Layout, s: &CudaStorage, sl: &Layout) -> Result<()> {
        let stream = s.device().cuda_stream();
        let at = dl.start_offset();
        let dst = d.as_cuda_slice_mut::<f32>()?;
        let mut out = dst.slice_mut(at..at + 1);
        if s.dtype() != candle_core::DType::F32 {
            // cuBLAS's nrm2Ex gives a half's norm only in half precision.
            return super::kernels::nrm2(s, sl, &mut out);
        }
        let (dp, _dg) = out.device_ptr_mut(&stream);
        let src = view(s, sl)?;
        let n = src.len();
        let (sp, _sg) = src.device_ptr(&stream);
        on_device(
            s,
            // SAFETY: n f32 at sp, one f32 at dp, both on this device.
            |h| unsafe { sys::cublasSnrm2_v2_64(h, n as i64, sp as *const f32, 1, dp as *mut f32) },
            "cublasSnrm2",
        )
    }
}

#[cfg(feature = "cuda")]
mod kernels {
    //! Launches `blas.cu`'s kernels: `w += a[0] · g` into f32 `w` for an f32, bf16 or f16 `g`,
    //! one thread per element, none writing when `a[0]` is 0 (cuBLAS's axpy cannot skip on a
    //! device scalar, nor mix types), optionally writing the new `w` to a bf16/f16 copy too;
    //! and for bf16/f16 gradients the norm in f32, in two deterministic stages (each block's
    //! sum of squares over its fixed chunk, then one block over the partials).

    use crate::gpu::nvrtc::{dtype_suffix, for_dtype};
    use candle_core::backend::BackendStorage;
    use candle_core::cuda_backend::cudarc::driver::{
        DevicePtr, LaunchConfig, PushKernelArg, SyncOnDrop,
    };
    use candle_core::cuda_backend::WrapErr;
    use candle_core::{bail, CudaStorage, DType, Layout, Result, Tensor};
    use candle_cudnn_rnn::kernels::view;
    use candle_cudnn_rnn::kernels::{Module, HALF};

    const SOURCE: &str = include_str!("blas.cu");
    static KERNELS: Module = Module::new("ptb_lm_blas_kernels", &[HALF, SOURCE]);
    const BLOCKS: u32 = 1024;
    const THREADS: u32 = 256;

    /// `out[0] = ‖g‖₂` for a bf16/f16 `g`.
    pub fn nrm2(
        s: &CudaStorage,
        sl: &Layout,
        out: &mut candle_core::cuda_backend::cudarc::driver::CudaViewMut<f32>,
    ) -> Result<()> {
        let dev = s.device().clone();
        let suffix = dtype_suffix(s.dtype(), "nrm2")?;
        let (squares, finish) = (
            KERNELS.function(&dev, &format!("squares_{suffix}"))?,
            KERNELS.function(&dev, "nrm2_finish")?,
        );
        let stream = dev.cuda_stream();
        let n = sl.shape().elem_count();
        let chunk = n.div_ceil(BLOCKS as usize).max(1) as i64;
        // SAFETY: every partial is written by its block.
        let partial = unsafe { dev.alloc::<f32>(BLOCKS as usize)? };
        let n64 = n as i64;
        let grid = |blocks: u32| LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        macro_rules! first {
            ($t:ty) => {{
                let g = view(s.as_cuda_slice::<$t>()?, sl)?;
                let mut b = stream.launch_builder(&squares);
                b.arg(&g).arg(&partial).arg(&n64).arg(&chunk);
                // SAFETY: n values, BLOCKS partials.
                unsafe { b.launch(grid(BLOCKS)) }.w()?;
            }};
        }
        match s.dtype() {
            DType::BF16 => first!(half::bf16),
            _ => first!(half::f16),
        }
        let blocks = BLOCKS as i32;
        let mut b = stream.launch_builder(&finish);
        b.arg(&partial).arg(&blocks).arg(out);
        // SAFETY: BLOCKS partials, one output.
        unsafe { b.launch(grid(1)) }.w()?;
        Ok(())
    }

    /// With `copy`, its storage is written through a read lock: the kernel writes it in
    /// stream order, and candle never reads device memory on the host outside stream order.
    pub fn axpy(
        d: &mut CudaStorage,
        dl: &Layout,
        s: &CudaStorage,
        sl: &Layout,
        a: &CudaStorage,
        al: &Layout,
        copy: Option<&Tensor>,
    ) -> Result<()> {
        let dev = s.device().clone();
        let mut name = format!("axpy_{}", dtype_suffix(s.dtype(), "axpy")?);
        let copy = match copy {
            Some(c) => {
                let suffix = match c.dtype() {
                    DType::BF16 => "bf16",
                    DType::F16 => "f16",
                    dt => bail!("axpy: the copy must be bf16 or f16, not {dt:?}"),
                };
                name = format!("{name}_into_{suffix}");
                Some(c.storage_and_layout())
            }
            None => None,
        };
        let f = KERNELS.function(&dev, &name)?;
        let stream = dev.cuda_stream();
        let Some((lo, hi)) = dl.contiguous_offsets() else {
            bail!("optimizer: the variable must be contiguous")
        };
        let n = hi - lo;
        let alpha = view(a.as_cuda_slice::<f32>()?, al)?;
        let mut w = d.as_cuda_slice_mut::<f32>()?.slice_mut(lo..hi);
        let n64 = n as i64;
        let cfg = LaunchConfig::for_num_elems(n as u32);
        macro_rules! launch {
            ($t:ty) => {{
                let g = view(s.as_cuda_slice::<$t>()?, sl)?;
                if g.len() != n {
                    bail!("axpy: {} elements into {n}", g.len())
                }
                let copy_at = match &copy {
                    Some((c, cl)) => Some(copy_address(c, cl, n, &stream)?),
                    None => None,
                };
                // Eight elements per thread when a half copy is written and every array
                // starts on 16 bytes (the update is bandwidth-bound: 12 bytes an element).
                let wide = match &copy_at {
                    Some((ptr, _)) if std::mem::size_of::<$t>() == 2 => {
                        let (wp, _w) = w.device_ptr(&stream);
                        let (gp, _g) = g.device_ptr(&stream);
                        [wp, gp, *ptr].iter().all(|p| p % 16 == 0)
                    }
                    _ => false,
                };
                let (f, cfg) = match wide {
                    true => (
                        KERNELS.function(&dev, &name.replacen("axpy_", "axpy8_", 1))?,
                        LaunchConfig::for_num_elems((n / 8).max(n % 8).max(1) as u32),
                    ),
                    false => (f.clone(), cfg),
                };
                let mut b = stream.launch_builder(&f);
                b.arg(&mut w).arg(&g).arg(&alpha);
                if let Some((ptr, _)) = &copy_at {
                    b.arg(ptr);
                }
                b.arg(&n64);
                // SAFETY: n f32 weights and n gradients, one factor, n copy elements (with
                // `wide`, 16-byte aligned, in n / 8 groups of 8 and n % 8 more).
                unsafe { b.launch(cfg) }.w()?;
            }};
        }
        for_dtype!(s.dtype(), launch);
        Ok(())
    }

    /// The device address of the `n` contiguous bf16/f16 elements of a copy.
    fn copy_address<'a>(
        c: &'a candle_core::Storage,
        cl: &Layout,
        n: usize,
        stream: &'a std::sync::Arc<candle_core::cuda_backend::cudarc::driver::CudaStream>,
    ) -> Result<(u64, SyncOnDrop<'a>)> {
        let candle_core::Storage::Cuda(c) = c else {
            bail!("axpy: the copy is not on the GPU")
        };
        let Some((lo, hi)) = cl.contiguous_offsets() else {
            bail!("axpy: the copy must be contiguous")
        };
        if hi - lo != n {
            bail!("axpy: a copy of {} elements for {n}", hi - lo)
        }
        let (base, guard) = match c.dtype() {
            DType::BF16 => c.as_cuda_slice::<half::bf16>()?.device_ptr(stream),
            _ => c.as_cuda_slice::<half::f16>()?.device_ptr(stream),
        };
        Ok((base + 2 * lo as u64, guard))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_gpu::device;
    use candle_core::DType;

    /// The update of a variable with a half copy, once on arrays that start on 16 bytes (on
    /// CUDA, eight elements per thread and a tail) and once on arrays that start 4 and 2 bytes
    /// past (one element per thread): the same weights and copies, bit for bit.
    #[test]
    fn aligned_and_unaligned_updates_agree_bit_for_bit() {
        let dev = device();
        let n = 1003;
        for dt in [DType::BF16, DType::F16] {
            let w0 = Tensor::randn(0f32, 1., n, &dev).unwrap();
            let g0 = Tensor::randn(0f32, 1e-2, n, &dev)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let a = Tensor::new(&[-0.7f32], &dev).unwrap();
            let update = |offset: usize| -> (Vec<f32>, Vec<f32>) {
                // `offset` elements in front: the arrays start that far into their storage.
                let pad = |t: &Tensor| {
                    let front = Tensor::zeros(offset, t.dtype(), &dev).unwrap();
                    Tensor::cat(&[&front, t], 0)
                        .unwrap()
                        .narrow(0, offset, n)
                        .unwrap()
                };
                let (w, g) = (pad(&w0), pad(&g0));
                let copy = pad(&Tensor::zeros(n, dt, &dev).unwrap());
                axpy(&w, &g, &a, Some(&copy)).unwrap();
                let f32s = |t: &Tensor| t.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap();
                (f32s(&w), f32s(&copy))
            };
            let (aligned, unaligned) = (update(0), update(1));
            assert!(
                aligned.0 != w0.to_vec1::<f32>().unwrap(),
                "{dt:?}: nothing moved"
            );
            assert_eq!(aligned, unaligned, "{dt:?}");
        }
    }
}
