//! Per-row softmax cross-entropy as one op: `loss[i] = logsumexp(x[i]) − x[i, y[i]]`, and its
//! gradient `g[i] · (softmax(x[i]) − onehot(y[i]))` in a second pass. Composed of candle ops
//! (cast, log-softmax, gather, and their backward) the same loss costs about twenty passes over
//! the `[tokens, vocab]` logits; here it is one read forward and one read plus one write
//! backward, in the logits' own dtype (f32, bf16 or f16) with f32 arithmetic.

use candle_core::backend::BackendStorage;
use candle_core::{bail, CpuStorage, CustomOp2, CustomOp3, DType, Layout, Result, Shape, Tensor};
use rayon::prelude::*;

/// Cross-entropy of each row of `logits` `[n, classes]` against `targets` `[n]` (u32), as f32
/// `[n]` (f64 for f64 logits). Differentiable in `logits`.
pub fn cross_entropy_rows(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
    let targets = targets_of(logits.dims2()?.0, targets)?;
    logits.contiguous()?.apply_op2(&targets, Forward)
}

/// `targets` flat and contiguous, checked to be `n` u32 class ids.
pub(crate) fn targets_of(n: usize, targets: &Tensor) -> Result<Tensor> {
    let targets = targets.flatten_all()?;
    if targets.dims1()? != n || targets.dtype() != DType::U32 {
        bail!(
            "cross_entropy_rows: {n} rows need {n} u32 targets, got {:?} {:?}",
            targets.shape(),
            targets.dtype()
        )
    }
    targets.contiguous()
}

/// The gradient of the rows' losses with respect to `logits`, given theirs (`grad`).
pub(crate) fn logits_grad(logits: &Tensor, targets: &Tensor, grad: &Tensor) -> Result<Tensor> {
    let g = grad.to_dtype(out_dtype(logits.dtype()))?.contiguous()?;
    logits.apply_op3_no_bwd(targets, &g, &Backward)
}

/// The forward as an op (`CustomOp2` on logits and targets), for ops built on it.
pub(crate) struct Forward;
struct Backward;

fn out_dtype(dt: DType) -> DType {
    if dt == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// Row `i`'s max and log Σ exp(x − max), the sum accumulated in f64 (an f32 sum over a 10k-word
/// row would lose ~1e-5 of it).
fn row_stats<F: num_traits::Float>(row: &[F]) -> (F, F) {
    let m = row.iter().copied().fold(F::neg_infinity(), F::max);
    let sum: f64 = row
        .iter()
        .map(|&v| (v - m).exp().to_f64().unwrap_or(0.0))
        .sum();
    (m, F::from(sum.ln()).unwrap_or_else(F::nan))
}

/// Logits as a float type the CPU computes in: f64 stays f64, everything else becomes f32.
enum Rows<'a> {
    F32(std::borrow::Cow<'a, [f32]>),
    F64(&'a [f64]),
}

/// The logits and targets of a contiguous CPU storage, the targets checked against the classes.
fn cpu_inputs<'a>(
    x: &'a CpuStorage,
    xl: &Layout,
    y: &'a CpuStorage,
    yl: &Layout,
) -> Result<(Rows<'a>, &'a [u32])> {
    let (_, c) = xl.shape().dims2()?;
    let Some((a, b)) = xl.contiguous_offsets() else {
        bail!("cross_entropy_rows: logits must be contiguous")
    };
    let rows = match x {
        CpuStorage::F32(v) => Rows::F32(std::borrow::Cow::Borrowed(&v[a..b])),
        CpuStorage::F64(v) => Rows::F64(&v[a..b]),
        CpuStorage::BF16(v) => Rows::F32(v[a..b].iter().map(|v| v.to_f32()).collect()),
        CpuStorage::F16(v) => Rows::F32(v[a..b].iter().map(|v| v.to_f32()).collect()),
        s => bail!("cross_entropy_rows: logits of {:?}", s.dtype()),
    };
    let Some((ya, yb)) = yl.contiguous_offsets() else {
        bail!("cross_entropy_rows: targets must be contiguous")
    };
    let ys = &y.as_slice::<u32>()?[ya..yb];
    if let Some(&t) = ys.iter().find(|&&t| t as usize >= c) {
        bail!("cross_entropy_rows: target {t} out of range for {c} classes")
    }
    Ok((rows, ys))
}

/// Each row's loss, rows spread over threads.
fn losses<F: num_traits::Float + Send + Sync>(x: &[F], ys: &[u32]) -> Vec<F> {
    let c = x.len() / ys.len().max(1);
    x.par_chunks(c.max(1))
        .zip(ys)
        .map(|(row, &t)| {
            let (m, lse) = row_stats(row);
            m + lse - row[t as usize]
        })
        .collect()
}

/// `g[i] · (softmax(x[i]) − onehot(y[i]))` for each row, rows spread over threads.
fn gradient<F: num_traits::Float + Send + Sync>(x: &[F], ys: &[u32], g: &[F]) -> Vec<F> {
    let c = x.len() / ys.len().max(1);
    let mut dx = vec![F::zero(); x.len()];
    dx.par_chunks_mut(c.max(1))
        .zip(x.par_chunks(c.max(1)))
        .zip(ys.par_iter().zip(g))
        .for_each(|((d, row), (&t, &gi))| {
            let (m, lse) = row_stats(row);
            for (d, &v) in d.iter_mut().zip(row) {
                *d = gi * (v - m - lse).exp();
            }
            d[t as usize] = d[t as usize] - gi;
        });
    dx
}

impl CustomOp2 for Forward {
    fn name(&self) -> &'static str {
        "cross-entropy-rows"
    }

    fn cpu_fwd(
        &self,
        x: &CpuStorage,
        xl: &Layout,
        y: &CpuStorage,
        yl: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let n = xl.shape().dims2()?.0;
        let out = match cpu_inputs(x, xl, y, yl)? {
            (Rows::F64(v), ys) => CpuStorage::F64(losses(v, ys)),
            (Rows::F32(v), ys) => CpuStorage::F32(losses(&v, ys)),
        };
        Ok((out, Shape::from(n)))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        x: &candle_core::CudaStorage,
        xl: &Layout,
        y: &candle_core::CudaStorage,
        yl: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let (n, _) = xl.shape().dims2()?;
        Ok((cuda::forward(x, xl, y, yl)?, Shape::from(n)))
    }

    fn bwd(
        &self,
        x: &Tensor,
        y: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        Ok((Some(logits_grad(x, y, grad)?), None))
    }
}

impl CustomOp3 for Backward {
    fn name(&self) -> &'static str {
        "cross-entropy-rows-grad"
    }

    fn cpu_fwd(
        &self,
        x: &CpuStorage,
        xl: &Layout,
        y: &CpuStorage,
        yl: &Layout,
        g: &CpuStorage,
        gl: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let Some((ga, gb)) = gl.contiguous_offsets() else {
            bail!("cross_entropy_rows: gradient must be contiguous")
        };
        let out = match (cpu_inputs(x, xl, y, yl)?, g) {
            ((Rows::F64(v), ys), CpuStorage::F64(g)) => {
                CpuStorage::F64(gradient(v, ys, &g[ga..gb]))
            }
            ((Rows::F32(v), ys), CpuStorage::F32(g)) => {
                let dx = gradient(&v, ys, &g[ga..gb]);
                match x.dtype() {
                    DType::BF16 => {
                        CpuStorage::BF16(dx.iter().map(|&v| half::bf16::from_f32(v)).collect())
                    }
                    DType::F16 => {
                        CpuStorage::F16(dx.iter().map(|&v| half::f16::from_f32(v)).collect())
                    }
                    _ => CpuStorage::F32(dx),
                }
            }
            (_, g) => bail!(
                "cross_entropy_rows: gradient of {:?} for {:?} logits",
                g.dtype(),
                x.dtype()
            ),
        };
        Ok((out, xl.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        x: &candle_core::CudaStorage,
        xl: &Layout,
        y: &candle_core::CudaStorage,
        yl: &Layout,
        g: &candle_core::CudaStorage,
        gl: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        Ok((cuda::backward(x, xl, y, yl, g, gl)?, xl.shape().clone()))
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    //! Launches `xent.cu`'s kernels, one block per row: a max pass, a Σexp pass, then the loss
    //! (forward) or the gradient row (backward). Compiled once per process with NVRTC, after
    //! the half prelude; no CUDA headers needed (half types are handled as raw bits), so it
    //! builds wherever candle's CUDA backend does.

    use crate::gpu::nvrtc::{block_per_row, dtype_suffix, for_dtype};
    use candle_core::backend::BackendStorage;
    use candle_core::cuda_backend::cudarc::driver::PushKernelArg;
    use candle_core::cuda_backend::WrapErr;
    use candle_core::{CudaStorage, Layout, Result};
    use candle_cudnn_rnn::kernels::view;
    use candle_cudnn_rnn::kernels::{Module, HALF};

    const SOURCE: &str = include_str!("xent.cu");

    const THREADS: u32 = 512;
    static KERNELS: Module = Module::new("ptb_lm_xent", &[HALF, SOURCE]);

    pub fn forward(
        x: &CudaStorage,
        xl: &Layout,
        y: &CudaStorage,
        yl: &Layout,
    ) -> Result<CudaStorage> {
        let (rows, cols) = xl.shape().dims2()?;
        let dev = x.device().clone();
        let f = KERNELS.function(
            &dev,
            &format!(
                "xent_fwd_{}",
                dtype_suffix(x.dtype(), "cross_entropy_rows")?
            ),
        )?;
        let stream = dev.cuda_stream();
        let ys = view(y.as_cuda_slice::<u32>()?, yl)?;
        // SAFETY: every element is written by the kernel (thread 0 of each row's block).
        let loss = unsafe { dev.alloc::<f32>(rows)? };
        let mut b = stream.launch_builder(&f);
        let cols = cols as i32;
        macro_rules! launch {
            ($t:ty) => {{
                let xs = view(x.as_cuda_slice::<$t>()?, xl)?;
                b.arg(&xs).arg(&ys).arg(&loss).arg(&cols);
                // SAFETY: rows × cols logits, rows targets and losses, as the kernel reads them.
                unsafe { b.launch(block_per_row(rows, THREADS)) }.w()?;
            }};
        }
        for_dtype!(x.dtype(), launch);
        Ok(CudaStorage::wrap_cuda_slice(loss, dev))
    }

    pub fn backward(
        x: &CudaStorage,
        xl: &Layout,
        y: &CudaStorage,
        yl: &Layout,
        g: &CudaStorage,
        gl: &Layout,
    ) -> Result<CudaStorage> {
        let (rows, cols) = xl.shape().dims2()?;
        let dev = x.device().clone();
        let f = KERNELS.function(
            &dev,
            &format!(
                "xent_bwd_{}",
                dtype_suffix(x.dtype(), "cross_entropy_rows")?
            ),
        )?;
        let stream = dev.cuda_stream();
        let ys = view(y.as_cuda_slice::<u32>()?, yl)?;
        let gs = view(g.as_cuda_slice::<f32>()?, gl)?;
        let mut b = stream.launch_builder(&f);
        let n = cols as i32;
        macro_rules! launch {
            ($t:ty) => {{
                let xs = view(x.as_cuda_slice::<$t>()?, xl)?;
                // SAFETY: every element is written by the kernel.
                let dx = unsafe { dev.alloc::<$t>(rows * cols)? };
                b.arg(&xs).arg(&ys).arg(&gs).arg(&dx).arg(&n);
                // SAFETY: rows × cols logits and gradients, rows targets and row gradients.
                unsafe { b.launch(block_per_row(rows, THREADS)) }.w()?;
                CudaStorage::wrap_cuda_slice(dx, dev)
            }};
        }
        Ok(for_dtype!(x.dtype(), launch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var, D};

    use crate::gpu::test_gpu::device;

    fn reference(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
        let logp = candle_nn::ops::log_softmax(logits, D::Minus1)?;
        logp.gather(&targets.unsqueeze(1)?, 1)?.squeeze(1)?.neg()
    }

    fn inputs(dev: &Device, n: usize, c: usize, seed: u32) -> (Tensor, Tensor) {
        let x = (Tensor::randn(0f32, 3., (n, c), dev).unwrap() + seed as f64).unwrap();
        let ids: Vec<u32> = (0..n as u32)
            .map(|i| (i * 7919 + seed) % c as u32)
            .collect();
        (x, Tensor::new(ids, dev).unwrap())
    }

    fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
        (a.to_dtype(DType::F32).unwrap() - b.to_dtype(DType::F32).unwrap())
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    }

    /// Loss and gradient against candle's log-softmax + gather and its autograd, taken in f64,
    /// with a row weight so that each row's gradient is scaled differently.
    #[test]
    fn matches_log_softmax_and_its_gradient() {
        let dev = device();
        for (n, c) in [(7, 5), (33, 1000), (3, 10_000)] {
            let (x, y) = inputs(&dev, n, c, n as u32);
            let w = Tensor::rand(-1f32, 1., n, &dev).unwrap();
            let v = Var::from_tensor(&x).unwrap();
            let got = cross_entropy_rows(v.as_tensor(), &y).unwrap();
            let v64 = Var::from_tensor(&x.to_dtype(DType::F64).unwrap()).unwrap();
            let want = reference(v64.as_tensor(), &y).unwrap();
            assert!(max_diff(&got, &want) < 1e-4, "loss {n}x{c}");
            let dg = (got * &w).unwrap().sum_all().unwrap().backward().unwrap();
            let w64 = w.to_dtype(DType::F64).unwrap();
            let dw = (want * w64).unwrap().sum_all().unwrap().backward().unwrap();
            let (dg, dw) = (dg.get(&v).unwrap(), dw.get(&v64).unwrap());
            assert!(max_diff(dg, dw) < 5e-6, "gradient {n}x{c}");
        }
    }

    /// The f64 gradient against central finite differences of the f64 loss.
    #[test]
    fn gradient_matches_finite_differences() {
        let (x, y) = inputs(&Device::Cpu, 4, 6, 1);
        let x = x.to_dtype(DType::F64).unwrap();
        let w = Tensor::new(&[0.3f64, -1.2, 2.0, 0.7], &Device::Cpu).unwrap();
        let loss = |x: &Tensor| -> f64 {
            (cross_entropy_rows(x, &y).unwrap() * &w)
                .unwrap()
                .sum_all()
                .unwrap()
                .to_scalar()
                .unwrap()
        };
        let v = Var::from_tensor(&x).unwrap();
        let g = (cross_entropy_rows(v.as_tensor(), &y).unwrap() * &w)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let g = g
            .get(&v)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f64>()
            .unwrap();
        let base = x.flatten_all().unwrap().to_vec1::<f64>().unwrap();
        let h = 1e-6;
        for (i, &gi) in g.iter().enumerate() {
            let at = |d: f64| {
                let mut p = base.clone();
                p[i] += d;
                loss(&Tensor::from_vec(p, (4, 6), &Device::Cpu).unwrap())
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!((fd - gi).abs() < 1e-7, "element {i}: {fd} vs {gi}");
        }
    }

    /// Half logits: the loss in f32 equals the loss of the same values cast to f32; the gradient
    /// comes back in the logits' dtype, equal to the f32 gradient to the type's precision.
    #[test]
    fn half_logits_compute_in_f32() {
        let dev = device();
        for dt in [DType::BF16, DType::F16] {
            let (x, y) = inputs(&dev, 20, 3000, 2);
            let x = x.to_dtype(dt).unwrap();
            let x32 = x.to_dtype(DType::F32).unwrap();
            let got = cross_entropy_rows(&x, &y).unwrap();
            assert_eq!(got.dtype(), DType::F32);
            assert!(
                max_diff(&got, &reference(&x32, &y).unwrap()) < 1e-4,
                "{dt:?}"
            );
            let g = Tensor::ones(20, DType::F32, &dev).unwrap();
            let dx = x.apply_op3_no_bwd(&y, &g, &Backward).unwrap();
            let dx32 = x32.apply_op3_no_bwd(&y, &g, &Backward).unwrap();
            assert_eq!(dx.dtype(), dt);
            assert!(max_diff(&dx, &dx32) < 4e-3, "{dt:?}");
        }
    }

    #[test]
    fn rejects_bad_targets() {
        let (x, _) = inputs(&Device::Cpu, 3, 4, 0);
        let y = Tensor::new(&[0u32, 4, 1], &Device::Cpu).unwrap();
        let e = cross_entropy_rows(&x, &y).unwrap_err().to_string();
        assert!(e.contains("target 4 out of range for 4 classes"), "{e}");
        let short = Tensor::new(&[0u32, 1], &Device::Cpu).unwrap();
        assert!(cross_entropy_rows(&x, &short).is_err());
    }
}
