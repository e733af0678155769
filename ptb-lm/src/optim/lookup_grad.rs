//! The gradient of a table lookup kept sparse: one summed row per distinct id instead of a dense
//! table-sized gradient. `sum_repeats` adds up the gradient rows of repeated ids (in lookup order,
//! so the sums are bit-identical to candle's `index_add` into zeros); `scatter_axpy` adds
//! `a · sums` into the table's looked-up rows in place. Dense, the same update costs a memset of
//! the whole table, an `index_add` whose threads each walk every id, and an axpy over the table.

use candle_core::{bail, CpuStorage, CustomOp2, DType, InplaceOp3, Layout, Result, Shape, Tensor};

/// For gradient rows `rows` `[n, h]` of the lookups `ids` `[n]`: row `i` of the result is the
/// sum of the rows of all lookups of `ids[i]` if `i` is that id's first lookup, else zeros. So
/// its norm is the dense table gradient's norm, and `scatter_axpy` applies it.
pub fn sum_repeats(rows: &Tensor, ids: &Tensor) -> Result<Tensor> {
    let (n, _) = rows.dims2()?;
    if ids.dims1()? != n || ids.dtype() != DType::U32 || rows.dtype() != DType::F32 {
        bail!(
            "sum_repeats: {n} f32 rows need {n} u32 ids, got {:?} rows and {:?} {:?} ids",
            rows.dtype(),
            ids.shape(),
            ids.dtype()
        )
    }
    rows.contiguous()?
        .apply_op2_no_bwd(&ids.contiguous()?, &SumRepeats)
}

/// `table[ids[i]] += a[0] · sums[i]` for each id's first lookup `i`, with `sums` from
/// `sum_repeats` and `a` a one-element f32 tensor (read on the device).
pub fn scatter_axpy(table: &Tensor, ids: &Tensor, sums: &Tensor, a: &Tensor) -> Result<()> {
    let (v, h) = table.dims2()?;
    let (n, sh) = sums.dims2()?;
    if sh != h || ids.dims1()? != n || a.elem_count() != 1 || !table.is_contiguous() {
        bail!(
            "scatter_axpy: {n}x{sh} sums, {:?} ids into a {v}x{h} table",
            ids.shape()
        )
    }
    let ids = ids.contiguous()?;
    table.inplace_op3(&sums.contiguous()?, &a.contiguous()?, &ScatterAxpy { ids })
}

struct SumRepeats;

struct ScatterAxpy {
    ids: Tensor,
}

fn slice<'a, T: candle_core::WithDType>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [T]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&s.as_slice::<T>()?[a..b]),
        None => bail!("lookup gradient: operands must be contiguous"),
    }
}

/// Whether lookup `i` is the first of its id.
fn first(ids: &[u32], i: usize) -> bool {
    !ids[..i].contains(&ids[i])
}

impl CustomOp2 for SumRepeats {
    fn name(&self) -> &'static str {
        "sum-repeats"
    }

    fn cpu_fwd(
        &self,
        r: &CpuStorage,
        rl: &Layout,
        i: &CpuStorage,
        il: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (n, h) = rl.shape().dims2()?;
        let (rows, ids) = (slice::<f32>(r, rl)?, slice::<u32>(i, il)?);
        let mut out = vec![0f32; n * h];
        for i in (0..n).filter(|&i| first(ids, i)) {
            let sum = &mut out[i * h..(i + 1) * h];
            for k in (i..n).filter(|&k| ids[k] == ids[i]) {
                sum.iter_mut()
                    .zip(&rows[k * h..(k + 1) * h])
                    .for_each(|(s, &g)| *s += g);
            }
        }
        Ok((CpuStorage::F32(out), rl.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        r: &candle_core::CudaStorage,
        rl: &Layout,
        i: &candle_core::CudaStorage,
        il: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        Ok((cuda::sum_repeats(r, rl, i, il)?, rl.shape().clone()))
    }
}

impl InplaceOp3 for ScatterAxpy {
    fn name(&self) -> &'static str {
        "scatter-axpy"
    }

    fn cpu_fwd(
        &self,
        t: &mut CpuStorage,
        tl: &Layout,
        s: &CpuStorage,
        sl: &Layout,
        a: &CpuStorage,
        al: &Layout,
    ) -> Result<()> {
        let (v, h) = tl.shape().dims2()?;
        let (sums, alpha) = (slice::<f32>(s, sl)?, slice::<f32>(a, al)?[0]);
        if alpha == 0.0 {
            return Ok(());
        }
        let (storage, il) = self.ids.storage_and_layout();
        let candle_core::Storage::Cpu(ids) = &*storage else {
            bail!("scatter_axpy: ids on another device than the table")
        };
        let ids = slice::<u32>(ids, il)?;
        let Some((lo, hi)) = tl.contiguous_offsets() else {
            bail!("scatter_axpy: the table must be contiguous")
        };
        let CpuStorage::F32(table) = t else {
            bail!("scatter_axpy: the table must be f32")
        };
        let table = &mut table[lo..hi];
        for (i, &id) in ids.iter().enumerate().filter(|&(i, _)| first(ids, i)) {
            if id as usize >= v {
                bail!("scatter_axpy: id {id} out of range for {v} rows")
            }
            let row = &mut table[id as usize * h..(id as usize + 1) * h];
            row.iter_mut()
                .zip(&sums[i * h..(i + 1) * h])
                .for_each(|(w, &g)| *w += alpha * g);
        }
        Ok(())
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        t: &mut candle_core::CudaStorage,
        tl: &Layout,
        s: &candle_core::CudaStorage,
        sl: &Layout,
        a: &candle_core::CudaStorage,
        al: &Layout,
    ) -> Result<()> {
        let (storage, il) = self.ids.storage_and_layout();
        let candle_core::Storage::Cuda(ids) = &*storage else {
            bail!("scatter_axpy: ids on another device than the table")
        };
        cuda::scatter_axpy(t, tl, ids, il, s, sl, a, al)
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    //! Launches `lookup_grad.cu`'s kernels: one block per lookup `i`; it works only when `i` is
    //! its id's first lookup (found by its threads' scan of the ids before it), its threads
    //! striding over the columns. Deterministic: every sum is taken in lookup order by one
    //! thread.

    use crate::gpu::nvrtc::block_per_row;
    use candle_core::backend::BackendStorage;
    use candle_core::cuda_backend::cudarc::driver::PushKernelArg;
    use candle_core::cuda_backend::WrapErr;
    use candle_core::{bail, CudaStorage, Layout, Result};
    use candle_cudnn_rnn::kernels::view;
    use candle_cudnn_rnn::kernels::Module;

    const SOURCE: &str = include_str!("lookup_grad.cu");
    static KERNELS: Module = Module::new("ptb_lm_lookup_grad", &[SOURCE]);

    pub fn sum_repeats(
        r: &CudaStorage,
        rl: &Layout,
        i: &CudaStorage,
        il: &Layout,
    ) -> Result<CudaStorage> {
        let (n, h) = rl.shape().dims2()?;
        let dev = r.device().clone();
        // SAFETY: every element is written by the kernel.
        let out = unsafe { dev.alloc::<f32>(n * h)? };
        if n > 0 {
            let f = KERNELS.function(&dev, "sum_repeats")?;
            let stream = dev.cuda_stream();
            let (rows, ids) = (
                view(r.as_cuda_slice::<f32>()?, rl)?,
                view(i.as_cuda_slice::<u32>()?, il)?,
            );
            let (n32, h32) = (n as i32, h as i32);
            let mut b = stream.launch_builder(&f);
            b.arg(&rows).arg(&ids).arg(&out).arg(&n32).arg(&h32);
            // SAFETY: n × h rows and sums, n ids.
            unsafe { b.launch(block_per_row(n, 256)) }.w()?;
        }
        Ok(CudaStorage::wrap_cuda_slice(out, dev))
    }

    #[allow(clippy::too_many_arguments)]
    pub fn scatter_axpy(
        t: &mut CudaStorage,
        tl: &Layout,
        i: &CudaStorage,
        il: &Layout,
        s: &CudaStorage,
        sl: &Layout,
        a: &CudaStorage,
        al: &Layout,
    ) -> Result<()> {
        let (v, h) = tl.shape().dims2()?;
        let n = sl.shape().dims2()?.0;
        if n == 0 {
            return Ok(());
        }
        let dev = s.device().clone();
        let f = KERNELS.function(&dev, "scatter_axpy")?;
        let stream = dev.cuda_stream();
        let (ids, sums, alpha) = (
            view(i.as_cuda_slice::<u32>()?, il)?,
            view(s.as_cuda_slice::<f32>()?, sl)?,
            view(a.as_cuda_slice::<f32>()?, al)?,
        );
        let Some((lo, hi)) = tl.contiguous_offsets() else {
            bail!("scatter_axpy: the table must be contiguous")
        };
        let mut table = t.as_cuda_slice_mut::<f32>()?.slice_mut(lo..hi);
        let (v32, h32) = (v as i32, h as i32);
        let mut b = stream.launch_builder(&f);
        b.arg(&mut table)
            .arg(&ids)
            .arg(&sums)
            .arg(&alpha)
            .arg(&v32)
            .arg(&h32);
        // SAFETY: a v × h table, n ids and n × h sums, one factor; rows out of range are skipped.
        unsafe { b.launch(block_per_row(n, 256)) }.w()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    use crate::gpu::test_gpu::device;

    /// Repeated and unique ids, against the dense computation (zeros + `index_add`, then
    /// `table += a · dense`): bit-identical sums and update, and the same norm.
    /// An id looked up more often than the CUDA kernel lists at a time (1024): its sum is still
    /// taken in lookup order, bit for bit the serial sum (and the CPU's, on CUDA).
    #[test]
    fn long_runs_of_one_id_sum_in_lookup_order() {
        let dev = device();
        let (n, h) = (2600, 33);
        let ids: Vec<u32> = (0..n as u32)
            .map(|k| if k % 10 == 7 { k % 40 } else { 3 })
            .collect();
        let rows_cpu = Tensor::randn(0f32, 1., (n, h), &Device::Cpu).unwrap();
        let rows = rows_cpu.to_device(&dev).unwrap();
        let sums = sum_repeats(&rows, &Tensor::new(ids.as_slice(), &dev).unwrap()).unwrap();
        let sums = sums.to_vec2::<f32>().unwrap();
        let r = rows_cpu.to_vec2::<f32>().unwrap();
        let mut want = vec![0f32; h];
        for (k, _) in ids.iter().enumerate().filter(|(_, &id)| id == 3) {
            for (w, x) in want.iter_mut().zip(&r[k]) {
                *w += x;
            }
        }
        assert_eq!(sums[0], want);
        assert!(
            sums[1].iter().all(|&x| x == 0.0),
            "a repeat of id 3 got a sum"
        );
        if !dev.is_cpu() {
            let ids_cpu = Tensor::new(ids.as_slice(), &Device::Cpu).unwrap();
            let cpu = sum_repeats(&rows_cpu, &ids_cpu)
                .unwrap()
                .to_vec2::<f32>()
                .unwrap();
            assert_eq!(sums, cpu);
        }
    }

    #[test]
    fn matches_the_dense_update_bit_for_bit() {
        let dev = device();
        let (v, h) = (50, 37);
        let ids: Vec<u32> = vec![3, 7, 3, 49, 0, 7, 3, 12, 0, 5];
        let n = ids.len();
        let ids = Tensor::new(ids, &dev).unwrap();
        let rows = Tensor::randn(0f32, 1., (n, h), &dev).unwrap();
        let table = Tensor::randn(0f32, 1., (v, h), &dev).unwrap();
        let a = Tensor::new(&[-0.37f32], &dev).unwrap();

        // The dense update as the optimizer made it before.
        let dense = Tensor::zeros((v, h), DType::F32, &dev)
            .unwrap()
            .index_add(&ids, &rows, 0)
            .unwrap();
        let want = table.copy().unwrap();
        crate::optim::blas::axpy(&want, &dense, &a, None).unwrap();

        let sums = sum_repeats(&rows, &ids).unwrap();
        let norm = |t: &Tensor| {
            t.sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap()
        };
        assert!((norm(&sums) / norm(&dense) - 1.0).abs() < 1e-6);
        // Only first lookups carry a sum; rows 2, 5, 6 and 8 repeat an earlier id.
        let nz: Vec<f32> = sums.abs().unwrap().sum(1).unwrap().to_vec1().unwrap();
        let zero: Vec<usize> = (0..n).filter(|&i| nz[i] == 0.0).collect();
        assert_eq!(zero, vec![2, 5, 6, 8]);
        let sum_of_3 = sums.get(0).unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(sum_of_3, dense.get(3).unwrap().to_vec1::<f32>().unwrap());

        let got = table.copy().unwrap();
        scatter_axpy(&got, &ids, &sums, &a).unwrap();
        let (got, want) = (
            got.to_vec2::<f32>().unwrap(),
            want.to_vec2::<f32>().unwrap(),
        );
        if dev.is_cpu() {
            assert_eq!(got, want);
        } else {
            // cuBLAS's axpy and the kernel may contract to FMA differently: a rounding apart.
            for (g, w) in got.concat().iter().zip(want.concat()) {
                assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{g} vs {w}");
            }
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        let dev = Device::Cpu;
        let rows = Tensor::zeros((3, 4), DType::F32, &dev).unwrap();
        let ids = Tensor::new(&[1u32, 2], &dev).unwrap();
        assert!(sum_repeats(&rows, &ids).is_err());
        let table = Tensor::zeros((5, 4), DType::F32, &dev).unwrap();
        let ids = Tensor::new(&[1u32, 9, 2], &dev).unwrap();
        let a = Tensor::new(&[1f32], &dev).unwrap();
        let sums = sum_repeats(&rows, &ids).unwrap();
        let e = scatter_axpy(&table, &ids, &sums, &a)
            .unwrap_err()
            .to_string();
        assert!(e.contains("id 9 out of range for 5 rows"), "{e}");
    }
}
