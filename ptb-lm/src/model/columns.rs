//! A matrix's rows widened with a column and zeros, and narrowed back: the softmax weight and
//! its gradient around the widened product of `owned_linear`. candle's `cat` and
//! `narrow(..).contiguous()` do it too, and do on the CPU; on a GPU they move one element per
//! thread through generic index arithmetic, which for PTB large's 10000 × 1500 weight took a
//! sizeable share of every step (`results/2026-11-23-h100-copies/`), so there a kernel moves
//! 8-byte words.

use candle_core::{Result, Tensor};

/// `[rows, ld]`: `w`'s rows (`[rows, cols]`), then `column` (`[rows]`, `w`'s dtype) if given,
/// then zeros.
pub fn widen(w: &Tensor, column: Option<&Tensor>, ld: usize) -> Result<Tensor> {
    let (rows, cols) = w.dims2()?;
    let extra = usize::from(column.is_some());
    if ld < cols + extra {
        candle_core::bail!("widen: [{rows}, {cols}] and {extra} column(s) into rows of {ld}")
    }
    #[cfg(feature = "cuda")]
    if w.device().is_cuda() {
        return cuda::widen(w, column, ld);
    }
    let mut parts = vec![w.clone()];
    if let Some(c) = column {
        parts.push(c.reshape((rows, 1))?);
    }
    if ld > cols + extra {
        parts.push(Tensor::zeros(
            (rows, ld - cols - extra),
            w.dtype(),
            w.device(),
        )?);
    }
    Tensor::cat(&parts, 1)
}

/// The first `cols` columns of `m` (`[rows, ld]`), contiguous, and column `cols` as `[rows]`
/// when `with_column`: [`widen`]'s inverse.
pub fn narrow(m: &Tensor, cols: usize, with_column: bool) -> Result<(Tensor, Option<Tensor>)> {
    let (rows, ld) = m.dims2()?;
    if ld < cols + usize::from(with_column) {
        candle_core::bail!("narrow: {cols} columns (and one more: {with_column}) of [{rows}, {ld}]")
    }
    #[cfg(feature = "cuda")]
    if m.device().is_cuda() {
        return cuda::narrow(m, cols, with_column);
    }
    let column = match with_column {
        true => Some(m.narrow(1, cols, 1)?.squeeze(1)?.contiguous()?),
        false => None,
    };
    Ok((m.narrow(1, 0, cols)?.contiguous()?, column))
}

#[cfg(feature = "cuda")]
mod cuda {
    //! Launches `columns.cu`'s kernels: blockIdx.y walks the rows, the threads of blockIdx.x a
    //! row's words: 8 bytes (4 halves or 2 floats) where the columns and the pitch allow, else
    //! one element. Custom ops without backward, for their access to the storages.

    use candle_core::backend::BackendStorage;
    use candle_core::cuda_backend::cudarc::driver::{DeviceRepr, LaunchConfig, PushKernelArg};
    use candle_core::cuda_backend::WrapErr;
    use candle_core::{
        CpuStorage, CudaStorage, CustomOp1, CustomOp2, DType, Layout, Result, Shape, Tensor,
    };
    use candle_cudnn_rnn::kernels::view;
    use candle_cudnn_rnn::kernels::{Module, HALF};

    const SOURCE: &str = include_str!("columns.cu");
    static KERNELS: Module = Module::new("ptb_lm_columns", &[HALF, SOURCE]);
    const THREADS: u32 = 128;
    const MAX_GRID_Y: usize = 65535;

    /// The kernel `op` for `dt`, in 8-byte words when `pitches` (the row offsets, in elements)
    /// allow (the operands start at a tensor's 256-byte aligned start), and its elements per
    /// word.
    fn kernel(
        op: &str,
        dt: DType,
        pitches: &[usize],
        offsets: &[usize],
    ) -> Result<(String, usize)> {
        let bytes = match dt {
            DType::BF16 | DType::F16 => 2,
            DType::F32 => 4,
            dt => candle_core::bail!("{op} on CUDA: {dt:?} (f32, bf16 or f16)"),
        };
        let v = 8 / bytes;
        Ok(match pitches.iter().chain(offsets).all(|p| p % v == 0) {
            true => (format!("{op}_e{bytes}_words"), v),
            false => (format!("{op}_e{bytes}"), 1),
        })
    }

    fn config(rows: usize, words: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (
                (words as u32).div_ceil(THREADS).max(1),
                rows.clamp(1, MAX_GRID_Y) as u32,
                1,
            ),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn no_cpu<T>(op: &str) -> Result<T> {
        candle_core::bail!("{op}: the CUDA kernel's op ran on the CPU")
    }

    /// `[rows, ld]` from `w` and the column (`has_column`; else any operand of w's dtype).
    struct Widen {
        ld: usize,
        has_column: bool,
    }

    impl CustomOp2 for Widen {
        fn name(&self) -> &'static str {
            "widen"
        }

        fn cpu_fwd(
            &self,
            _: &CpuStorage,
            _: &Layout,
            _: &CpuStorage,
            _: &Layout,
        ) -> Result<(CpuStorage, Shape)> {
            no_cpu("widen")
        }

        fn cuda_fwd(
            &self,
            w: &CudaStorage,
            wl: &Layout,
            c: &CudaStorage,
            cl: &Layout,
        ) -> Result<(CudaStorage, Shape)> {
            let (rows, cols) = wl.shape().dims2()?;
            let ld = self.ld;
            let dt = w.dtype();
            let offsets = [wl.start_offset()];
            let (name, v) = kernel("widen", dt, &[cols, ld], &offsets)?;
            let dev = w.device().clone();
            let f = KERNELS.function(&dev, &name)?;
            let has = i32::from(self.has_column);
            fn go<T: DeviceRepr + candle_core::cuda_backend::CudaDType>(
                (w, wl, c, cl): (&CudaStorage, &Layout, &CudaStorage, &Layout),
                dev: &candle_core::CudaDevice,
                f: &candle_core::cuda_backend::cudarc::driver::CudaFunction,
                (has, rows, cols, ld, v): (i32, usize, usize, usize, usize),
            ) -> Result<CudaStorage> {
                let ws = view(w.as_cuda_slice::<T>()?, wl)?;
                let cs = view(c.as_cuda_slice::<T>()?, cl)?;
                // SAFETY: the kernel writes all rows × ld elements.
                let out = unsafe { dev.alloc::<T>(rows * ld)? };
                let [r, c, l] = [rows, cols, ld].map(|x| x as u32);
                let stream = dev.cuda_stream();
                let mut b = stream.launch_builder(f);
                b.arg(&ws)
                    .arg(&cs)
                    .arg(&has)
                    .arg(&out)
                    .arg(&r)
                    .arg(&c)
                    .arg(&l);
                // SAFETY: `w` holds rows × cols elements, the column (when read) rows.
                unsafe { b.launch(config(rows, ld / v)) }.w()?;
                Ok(CudaStorage::wrap_cuda_slice(out, dev.clone()))
            }
            let args = (w, wl, c, cl);
            let sizes = (has, rows, cols, ld, v);
            let out = match dt {
                DType::F32 => go::<f32>(args, &dev, &f, sizes)?,
                DType::BF16 => go::<half::bf16>(args, &dev, &f, sizes)?,
                _ => go::<half::f16>(args, &dev, &f, sizes)?,
            };
            Ok((out, Shape::from((rows, ld))))
        }
    }

    /// The first `cols` columns of `[rows, ld]`.
    struct Narrow {
        cols: usize,
    }

    impl CustomOp1 for Narrow {
        fn name(&self) -> &'static str {
            "narrow-columns"
        }

        fn cpu_fwd(&self, _: &CpuStorage, _: &Layout) -> Result<(CpuStorage, Shape)> {
            no_cpu("narrow")
        }

        fn cuda_fwd(&self, m: &CudaStorage, ml: &Layout) -> Result<(CudaStorage, Shape)> {
            let (rows, ld) = ml.shape().dims2()?;
            let cols = self.cols;
            let dt = m.dtype();
            let (name, v) = kernel("narrow", dt, &[cols, ld], &[ml.start_offset()])?;
            let dev = m.device().clone();
            let f = KERNELS.function(&dev, &name)?;
            fn go<T: DeviceRepr + candle_core::cuda_backend::CudaDType>(
                (m, ml): (&CudaStorage, &Layout),
                dev: &candle_core::CudaDevice,
                f: &candle_core::cuda_backend::cudarc::driver::CudaFunction,
                (rows, cols, ld, v): (usize, usize, usize, usize),
            ) -> Result<CudaStorage> {
                let ms = view(m.as_cuda_slice::<T>()?, ml)?;
                // SAFETY: the kernel writes all rows × cols elements.
                let out = unsafe { dev.alloc::<T>(rows * cols)? };
                let [r, c, l] = [rows, cols, ld].map(|x| x as u32);
                let stream = dev.cuda_stream();
                let mut b = stream.launch_builder(f);
                b.arg(&ms).arg(&out).arg(&r).arg(&c).arg(&l);
                // SAFETY: `m` holds rows × ld elements.
                unsafe { b.launch(config(rows, cols / v)) }.w()?;
                Ok(CudaStorage::wrap_cuda_slice(out, dev.clone()))
            }
            let sizes = (rows, cols, ld, v);
            let out = match dt {
                DType::F32 => go::<f32>((m, ml), &dev, &f, sizes)?,
                DType::BF16 => go::<half::bf16>((m, ml), &dev, &f, sizes)?,
                _ => go::<half::f16>((m, ml), &dev, &f, sizes)?,
            };
            Ok((out, Shape::from((rows, cols))))
        }
    }

    pub fn widen(w: &Tensor, column: Option<&Tensor>, ld: usize) -> Result<Tensor> {
        let w = w.contiguous()?;
        let op = Widen {
            ld,
            has_column: column.is_some(),
        };
        match column {
            Some(c) => {
                if c.dtype() != w.dtype() || c.elem_count() != w.dim(0)? {
                    candle_core::bail!(
                        "widen: a column {:?} of {:?} for {:?} of {:?}",
                        c.dims(),
                        c.dtype(),
                        w.dims(),
                        w.dtype()
                    )
                }
                w.apply_op2_no_bwd(&c.contiguous()?, &op)
            }
            None => w.apply_op2_no_bwd(&w, &op),
        }
    }

    pub fn narrow(m: &Tensor, cols: usize, with_column: bool) -> Result<(Tensor, Option<Tensor>)> {
        let m = m.contiguous()?;
        let column = match with_column {
            true => Some(m.narrow(1, cols, 1)?.squeeze(1)?.contiguous()?),
            false => None,
        };
        Ok((m.apply_op1_no_bwd(&Narrow { cols })?, column))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_gpu::device;
    use candle_core::{DType, Device};

    /// On the test device (the GPU's kernels when there is one) against candle's `cat` and
    /// `narrow` on the CPU, bit for bit: 8-byte words (1500 columns into 1504), one element at
    /// a time (an odd width), with and without the column, in every dtype; then narrowing
    /// the widened matrix gives back what went in.
    #[test]
    fn widen_and_narrow_match_cat_and_narrow() {
        let dev = device();
        for dt in [DType::F32, DType::BF16, DType::F16] {
            for (rows, cols, ld) in [(7, 1500, 1504), (5, 13, 17), (3, 8, 16), (4, 6, 7)] {
                let w = Tensor::randn(0f32, 1., (rows, cols), &Device::Cpu)
                    .and_then(|t| t.to_dtype(dt))
                    .unwrap();
                let b = Tensor::randn(0f32, 1., rows, &Device::Cpu)
                    .and_then(|t| t.to_dtype(dt))
                    .unwrap();
                let bits = |t: &Tensor| {
                    t.to_device(&Device::Cpu)
                        .and_then(|t| t.to_dtype(DType::F32))
                        .and_then(|t| t.flatten_all())
                        .and_then(|t| t.to_vec1::<f32>())
                        .unwrap()
                };
                for column in [None, Some(&b)] {
                    let want = {
                        let mut parts = vec![w.clone()];
                        if let Some(c) = column {
                            parts.push(c.reshape((rows, 1)).unwrap());
                        }
                        let used = cols + usize::from(column.is_some());
                        parts.push(Tensor::zeros((rows, ld - used), dt, &Device::Cpu).unwrap());
                        Tensor::cat(&parts, 1).unwrap()
                    };
                    let on = |t: &Tensor| t.to_device(&dev).unwrap();
                    let c_on = column.map(on);
                    let wide = widen(&on(&w), c_on.as_ref(), ld).unwrap();
                    assert_eq!(wide.dims(), &[rows, ld]);
                    assert_eq!(
                        bits(&wide),
                        bits(&want),
                        "widen {dt:?} {rows}x{cols} -> {ld}"
                    );
                    let (back, c) = narrow(&wide, cols, column.is_some()).unwrap();
                    assert_eq!(bits(&back), bits(&w), "narrow {dt:?} {rows}x{cols} <- {ld}");
                    assert_eq!(c.map(|c| bits(&c)), column.map(bits), "column {dt:?}");
                }
            }
        }
    }

    #[test]
    fn too_narrow_rows_are_an_error() {
        let w = Tensor::zeros((2, 4), DType::F32, &Device::Cpu).unwrap();
        let c = Tensor::zeros(2, DType::F32, &Device::Cpu).unwrap();
        let e = widen(&w, Some(&c), 4).unwrap_err().to_string();
        assert!(e.contains("rows of 4"), "{e}");
        assert!(narrow(&w, 4, true).is_err());
    }
}
