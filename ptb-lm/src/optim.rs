//! The tutorial's update: plain SGD after TensorFlow's `clip_by_global_norm`, as one fused pass
//! that never waits for the host. Per variable, cuBLAS `nrm2` writes the gradient's norm to the
//! device and `axpy` applies `w += (-lr · clip) g` in place, reading the factor from the
//! device; no scaled copy of a gradient is ever made.

use crate::config::EmbeddingNorm;
use crate::loss_scale::LossScale;
use candle_core::backprop::GradStore;
use candle_core::{bail, CpuStorage, DType, Layout, Result, Tensor, Var};

/// A table read through a lookup: `rows` holds `table[ids]` as a leaf of its own, so that its
/// gradient, one row per looked-up id, survives backward for the norm to see.
pub struct Lookup {
    pub table: Tensor,
    pub ids: Tensor,
    pub rows: Var,
}

/// SGD with global-norm clipping: `g ← g · max_norm / max(‖g‖, max_norm)`, `w ← w − lr · g`,
/// the norm taken over all variables together.
pub struct ClippedSgd {
    vars: Vec<Var>,
    lr: f64,
    max_norm: f64,
    embedding_norm: EmbeddingNorm,
    /// With f16 steps: the gradients arrive multiplied by its scale.
    loss_scale: Option<LossScale>,
    /// Device sums since the last `take_stats`: the norms, and the steps that clipped.
    norm_sum: Option<(Tensor, Tensor)>,
    steps: usize,
    /// Steps skipped since the last `take_stats` because their scaled gradients overflowed.
    skipped: usize,
}

/// The global norm over the steps since the last look.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipStats {
    pub mean_norm: f64,
    pub clipped_fraction: f64,
    pub skipped: usize,
}

impl ClippedSgd {
    /// `vars` in a fixed order: the norm sums in it, so runs repeat bit for bit.
    pub fn new(
        vars: Vec<Var>,
        lr: f64,
        max_norm: f64,
        embedding_norm: EmbeddingNorm,
    ) -> Result<Self> {
        for v in &vars {
            if v.dtype() != DType::F32 || !v.is_contiguous() {
                bail!("ClippedSgd: variables must be contiguous f32 tensors")
            }
        }
        Ok(Self {
            vars,
            lr,
            max_norm,
            embedding_norm,
            loss_scale: None,
            norm_sum: None,
            steps: 0,
            skipped: 0,
        })
    }

    /// The tutorial's optimizer for `cfg`: its initial learning rate, max norm and norm; with
    /// loss scaling when the steps compute in f16.
    pub fn for_config(vars: Vec<Var>, cfg: &crate::config::LmConfig, dtype: DType) -> Result<Self> {
        let mut opt = Self::new(
            vars,
            cfg.learning_rate,
            cfg.max_grad_norm,
            cfg.embedding_norm,
        )?;
        if dtype == DType::F16 {
            opt.loss_scale = Some(LossScale::default());
        }
        Ok(opt)
    }

    pub fn loss_scale(&self) -> Option<LossScale> {
        self.loss_scale
    }

    /// Continues a checkpointed run's scaling.
    pub fn set_loss_scale(&mut self, s: LossScale) {
        self.loss_scale = Some(s);
    }

    pub fn set_learning_rate(&mut self, lr: f64) {
        self.lr = lr;
    }

    /// Each variable's update and the tensor whose norm it adds to the global one.
    fn gradients(
        &self,
        grads: &GradStore,
        lookups: &[Lookup],
    ) -> Result<Vec<(Var, Update, Tensor)>> {
        let mut out = Vec::with_capacity(self.vars.len());
        for v in &self.vars {
            match lookups.iter().find(|l| l.table.id() == v.id()) {
                Some(l) => {
                    let Some(rows) = grads.get(l.rows.as_tensor()) else {
                        continue;
                    };
                    let rows = rows.contiguous()?;
                    // One row per distinct id; its norm is the dense table gradient's.
                    let sums = crate::lookup_grad::sum_repeats(&rows, &l.ids)?;
                    let counted = match self.embedding_norm {
                        EmbeddingNorm::Lookups => rows,
                        EmbeddingNorm::Table => sums.clone(),
                    };
                    let ids = l.ids.clone();
                    out.push((v.clone(), Update::Rows { ids, sums }, counted));
                }
                None => {
                    if let Some(g) = grads.get(v.as_tensor()) {
                        let g = g.contiguous()?;
                        out.push((v.clone(), Update::Dense(g.clone()), g));
                    }
                }
            }
        }
        Ok(out)
    }

    /// One update; returns the gradients' global norm before clipping (a device scalar).
    /// `lookups` name the tables whose gradient arrives through the rows they gathered.
    pub fn step(&mut self, grads: &GradStore, lookups: &[Lookup]) -> Result<Tensor> {
        let updates = self.gradients(grads, lookups)?;
        let Some((first, _, _)) = updates.first() else {
            bail!("ClippedSgd: no variable has a gradient")
        };
        let norms = Tensor::zeros(updates.len(), DType::F32, first.device())?;
        for (i, (_, _, counted)) in updates.iter().enumerate() {
            norms.narrow(0, i, 1)?.inplace_op2(counted, &Nrm2)?;
        }
        let mut norm = norms.sqr()?.sum_all()?.sqrt()?;
        let mut unscale = 1.0;
        if let Some(ls) = self.loss_scale.as_mut() {
            // The one host read of a step: an overflowed step must not touch the weights.
            let finite = norm.to_dtype(DType::F64)?.to_scalar::<f64>()?.is_finite();
            unscale = ls.scale;
            ls.update(finite);
            if !finite {
                self.skipped += 1;
                return Ok(norm);
            }
            norm = (norm / unscale)?;
        }
        let factor = ((norm.maximum(self.max_norm)?.recip()?
            * (-self.lr * self.max_norm / unscale))?)
            .reshape(1)?;
        for (v, update, _) in &updates {
            match update {
                Update::Dense(g) => v.as_tensor().inplace_op3(g, &factor, &Axpy)?,
                Update::Rows { ids, sums } => {
                    crate::lookup_grad::scatter_axpy(v.as_tensor(), ids, sums, &factor)?
                }
            }
        }
        let clipped = norm.gt(self.max_norm)?.to_dtype(DType::F32)?;
        self.norm_sum = Some(match self.norm_sum.take() {
            Some((n, c)) => ((n + &norm)?, (c + clipped)?),
            None => (norm.clone(), clipped),
        });
        self.steps += 1;
        Ok(norm)
    }

    /// The norm statistics of the steps since the last call (waits for the device); the norms
    /// are the unscaled ones of the steps taken.
    pub fn take_stats(&mut self) -> Result<Option<ClipStats>> {
        let skipped = std::mem::take(&mut self.skipped);
        let Some((n, c)) = self.norm_sum.take() else {
            return Ok((skipped > 0).then_some(ClipStats {
                mean_norm: f64::NAN,
                clipped_fraction: f64::NAN,
                skipped,
            }));
        };
        let steps = std::mem::take(&mut self.steps) as f64;
        Ok(Some(ClipStats {
            mean_norm: n.to_dtype(DType::F64)?.to_scalar::<f64>()? / steps,
            clipped_fraction: c.to_dtype(DType::F64)?.to_scalar::<f64>()? / steps,
            skipped,
        }))
    }
}

/// A variable's gradient: dense, or the summed rows of a lookup (see `lookup_grad`).
enum Update {
    Dense(Tensor),
    Rows { ids: Tensor, sums: Tensor },
}

/// `dst[0] = ‖src‖₂` for a one-element `dst`.
struct Nrm2;

/// `dst += a[0] · src`, elementwise, `a` a one-element tensor.
pub(crate) struct Axpy;

fn contiguous<'a>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&s.as_slice::<f32>()?[a..b]),
        None => bail!("optimizer: operands must be contiguous"),
    }
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

impl candle_core::InplaceOp2 for Nrm2 {
    fn name(&self) -> &'static str {
        "nrm2"
    }

    fn cpu_fwd(&self, d: &mut CpuStorage, dl: &Layout, s: &CpuStorage, sl: &Layout) -> Result<()> {
        let sum: f64 = contiguous(s, sl)?
            .iter()
            .map(|&x| (x as f64) * (x as f64))
            .sum();
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
        let alpha = contiguous(a, al)?[0];
        let src = contiguous(s, sl)?;
        let dst = contiguous_mut(d, dl)?;
        if src.len() != dst.len() {
            bail!("axpy: {} elements into {}", src.len(), dst.len())
        }
        dst.iter_mut().zip(src).for_each(|(w, &g)| *w += alpha * g);
        Ok(())
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
        cublas::axpy(d, dl, s, sl, a, al)
    }
}

#[cfg(feature = "cuda")]
mod cublas {
    //! The two level-1 cuBLAS calls, on candle's handle and stream, with their scalar on the
    //! device (pointer mode DEVICE for the call, HOST again after, as candle expects).

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
        let src = view(s, sl)?;
        let n = src.len();
        let at = dl.start_offset();
        let dst = d.as_cuda_slice_mut::<f32>()?;
        let mut out = dst.slice_mut(at..at + 1);
        let (sp, _sg) = src.device_ptr(&stream);
        let (dp, _dg) = out.device_ptr_mut(&stream);
        on_device(
            s,
            // SAFETY: n f32 at sp, one f32 at dp, both on this device.
            |h| unsafe { sys::cublasSnrm2_v2_64(h, n as i64, sp as *const f32, 1, dp as *mut f32) },
            "cublasSnrm2",
        )
    }

    pub fn axpy(
        d: &mut CudaStorage,
        dl: &Layout,
        s: &CudaStorage,
        sl: &Layout,
        a: &CudaStorage,
        al: &Layout,
    ) -> Result<()> {
        let stream = s.device().cuda_stream();
        let (src, alpha) = (view(s, sl)?, view(a, al)?);
        let n = src.len();
        let Some((lo, hi)) = dl.contiguous_offsets() else {
            bail!("optimizer: the variable must be contiguous")
        };
        if hi - lo != n {
            bail!("axpy: {n} elements into {}", hi - lo)
        }
        let dst = d.as_cuda_slice_mut::<f32>()?;
        let mut out = dst.slice_mut(lo..hi);
        let (sp, _sg) = src.device_ptr(&stream);
        let (ap, _ag) = alpha.device_ptr(&stream);
        let (dp, _dg) = out.device_ptr_mut(&stream);
        on_device(
            a,
            // SAFETY: n f32 at sp and dp, one f32 at ap, all on this device.
            |h| unsafe {
                sys::cublasSaxpy_v2_64(
                    h,
                    n as i64,
                    ap as *const f32,
                    sp as *const f32,
                    1,
                    dp as *mut f32,
                    1,
                )
            },
            "cublasSaxpy",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// CUDA when this build and machine have it: the same test then checks the cuBLAS path.
    fn device() -> Device {
        Device::cuda_if_available(0).unwrap()
    }

    /// Returns the vars and the gradients of `loss = Σ_i Σ (v_i · c_i)`, i.e. `c_i`.
    fn setup(scales: &[f32]) -> (Vec<Var>, GradStore, Vec<Vec<f32>>) {
        let dev = device();
        let shapes: [&[usize]; 3] = [&[3, 4], &[5], &[1000, 7]];
        let mut vars = Vec::new();
        let mut coefs = Vec::new();
        let mut loss = Tensor::new(0f32, &dev).unwrap();
        for (shape, s) in shapes.iter().zip(scales) {
            let v = Var::from_tensor(&Tensor::randn(0f32, 1., *shape, &dev).unwrap()).unwrap();
            let c = (Tensor::randn(0f32, 1., *shape, &dev).unwrap() * *s as f64).unwrap();
            loss = (loss + (v.as_tensor() * &c).unwrap().sum_all().unwrap()).unwrap();
            coefs.push(c.flatten_all().unwrap().to_vec1::<f32>().unwrap());
            vars.push(v);
        }
        (vars, loss.backward().unwrap(), coefs)
    }

    fn values(v: &Var) -> Vec<f32> {
        v.flatten_all().unwrap().to_vec1().unwrap()
    }

    fn check(scales: &[f32], max_norm: f64) {
        let (vars, grads, coefs) = setup(scales);
        let before: Vec<Vec<f32>> = vars.iter().map(values).collect();
        let norm: f64 = coefs
            .iter()
            .flatten()
            .map(|&c| (c as f64).powi(2))
            .sum::<f64>();
        let norm = norm.sqrt();
        let lr = 0.7;
        let mut opt = ClippedSgd::new(vars.clone(), lr, max_norm, EmbeddingNorm::Table).unwrap();
        let got = opt.step(&grads, &[]).unwrap().to_scalar::<f32>().unwrap() as f64;
        assert!((got - norm).abs() < 1e-4 * norm, "norm {got} vs {norm}");
        let clip = max_norm / norm.max(max_norm);
        for ((v, w0), c) in vars.iter().zip(&before).zip(&coefs) {
            for ((w, w0), c) in values(v).iter().zip(w0).zip(c) {
                let want = *w0 as f64 - lr * clip * *c as f64;
                assert!((*w as f64 - want).abs() < 1e-5, "{w} vs {want}");
            }
        }
    }

    #[test]
    fn clips_large_gradients_to_the_global_norm() {
        check(&[3.0, 2.0, 1.0], 1.0);
    }

    #[test]
    fn leaves_small_gradients_alone() {
        check(&[0.01, 0.02, 0.001], 100.0);
    }

    /// A table read through a lookup with repeated ids: the update is the summed gradient in
    /// both modes; the norm counts the rows (TensorFlow's `IndexedSlices`) or the summed table.
    #[test]
    fn lookup_gradients_count_per_row_or_per_table() {
        let dev = device();
        let ids: Vec<u32> = vec![1, 3, 1, 1, 5, 3, 0, 1];
        let (vocab, h, n) = (6, 4, ids.len());
        for (mode, clips) in [
            (EmbeddingNorm::Lookups, true),
            (EmbeddingNorm::Table, true),
            (EmbeddingNorm::Lookups, false),
        ] {
            let table =
                Var::from_tensor(&Tensor::randn(0f32, 1., (vocab, h), &dev).unwrap()).unwrap();
            let other = Var::from_tensor(&Tensor::randn(0f32, 1., 5, &dev).unwrap()).unwrap();
            let ids_t = Tensor::new(ids.as_slice(), &dev).unwrap();
            let rows = table.as_tensor().detach().index_select(&ids_t, 0).unwrap();
            let rows = Var::from_tensor(&rows).unwrap();
            let c = Tensor::randn(0f32, 1., (n, h), &dev).unwrap();
            let d = Tensor::randn(0f32, 1., 5, &dev).unwrap();
            let loss = ((rows.as_tensor() * &c).unwrap().sum_all().unwrap()
                + (other.as_tensor() * &d).unwrap().sum_all().unwrap())
            .unwrap();
            let grads = loss.backward().unwrap();

            let c = c.to_vec2::<f32>().unwrap();
            let d = d.to_vec1::<f32>().unwrap();
            let mut summed = vec![vec![0f64; h]; vocab];
            for (row, &id) in c.iter().zip(&ids) {
                for (s, &g) in summed[id as usize].iter_mut().zip(row) {
                    *s += g as f64;
                }
            }
            let sq = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
            let d64: Vec<f64> = d.iter().map(|&x| x as f64).collect();
            let rows_sq: f64 = c
                .iter()
                .map(|r| sq(&r.iter().map(|&x| x as f64).collect::<Vec<_>>()))
                .sum();
            let table_sq: f64 = summed.iter().map(|r| sq(r)).sum();
            let norm = match mode {
                EmbeddingNorm::Lookups => (rows_sq + sq(&d64)).sqrt(),
                EmbeddingNorm::Table => (table_sq + sq(&d64)).sqrt(),
            };
            // Repeated ids make the two norms differ, so the mode is really in use.
            assert!((rows_sq - table_sq).abs() > 1e-3 * rows_sq);
            let max_norm = if clips { norm / 2.0 } else { norm * 2.0 };
            let lr = 0.3;
            let before = table.to_vec2::<f32>().unwrap();
            let other_before = values(&other);
            let vars = vec![table.clone(), other.clone()];
            let mut opt = ClippedSgd::new(vars, lr, max_norm, mode).unwrap();
            let lookup = Lookup {
                table: table.as_tensor().clone(),
                ids: ids_t,
                rows,
            };
            let got = opt
                .step(&grads, &[lookup])
                .unwrap()
                .to_scalar::<f32>()
                .unwrap() as f64;
            assert!(
                (got - norm).abs() < 1e-4 * norm,
                "{mode:?}: norm {got} vs {norm}"
            );
            let clip = max_norm / norm.max(max_norm);
            for (after, (w0, g)) in table
                .to_vec2::<f32>()
                .unwrap()
                .iter()
                .zip(before.iter().zip(&summed))
            {
                for (w, (w0, g)) in after.iter().zip(w0.iter().zip(g)) {
                    let want = *w0 as f64 - lr * clip * g;
                    assert!((*w as f64 - want).abs() < 1e-5, "{w} vs {want}");
                }
            }
            for (w, (w0, g)) in values(&other).iter().zip(other_before.iter().zip(&d)) {
                let want = *w0 as f64 - lr * clip * *g as f64;
                assert!((*w as f64 - want).abs() < 1e-5, "{w} vs {want}");
            }
            let stats = opt.take_stats().unwrap().unwrap();
            assert!((stats.mean_norm - norm).abs() < 1e-4 * norm);
            assert_eq!(stats.clipped_fraction, if clips { 1.0 } else { 0.0 });
            assert_eq!(opt.take_stats().unwrap(), None);
        }
    }

    /// With a loss scale the gradients are unscaled before clipping, and a step whose scaled
    /// gradients overflowed leaves the weights alone and halves the scale.
    #[test]
    fn scaled_steps_unscale_and_overflowed_ones_are_skipped() {
        let dev = device();
        let w = Var::from_tensor(&Tensor::new(&[1f32, 2., 3.], &dev).unwrap()).unwrap();
        let cfg = crate::config::LmConfig::preset(crate::config::Preset::Small);
        let mut opt = ClippedSgd::for_config(vec![w.clone()], &cfg, DType::F16).unwrap();
        let s = opt.loss_scale().unwrap().scale;
        // loss·s with d loss/dw = (1, 0, 2): norm √5 < max_norm 5, so w ← w − g.
        let c = Tensor::new(&[s as f32, 0., 2. * s as f32], &dev).unwrap();
        let grads = (w.as_tensor() * &c)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let norm = opt.step(&grads, &[]).unwrap().to_scalar::<f32>().unwrap();
        assert!((norm - 5f32.sqrt()).abs() < 1e-5, "{norm}");
        assert_eq!(values(&w), [0., 2., 1.]);

        let inf = Tensor::new(&[f32::INFINITY, 0., 1.], &dev).unwrap();
        let grads = (w.as_tensor() * &inf)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        opt.step(&grads, &[]).unwrap();
        assert_eq!(values(&w), [0., 2., 1.]);
        assert_eq!(opt.loss_scale().unwrap().scale, s / 2.0);
        let stats = opt.take_stats().unwrap().unwrap();
        assert_eq!((stats.skipped, stats.clipped_fraction), (1, 0.0));
        assert!((stats.mean_norm - 5f64.sqrt()).abs() < 1e-5);
    }
}
