//! The softmax layer's matrix product `x · wᵀ` as a custom op whose backward returns the input's
//! gradient to autograd but leaves the weight's in a slot the optimizer takes. candle's own
//! matmul backward computes the weight's gradient even for a detached weight and adds every
//! gradient into a fresh zero-filled buffer (then, in half precision, casts it to f32 and adds
//! it into another): for PTB large's 10000 × 1500 softmax that was a sizeable part of the step
//! (`results/2026-11-23-h100-cuda-graph/`).

use candle_core::backend::BackendStorage;
use candle_core::op::BackpropOp;
use candle_core::{
    CpuStorage, CustomOp2, CustomOp3, DType, Layout, Result, Shape, Storage, Tensor,
};
use std::sync::{Arc, Mutex};

/// Where a backward leaves the weight's gradient (summed over calls until taken).
#[derive(Clone, Default)]
pub struct GradSlot(Arc<Mutex<Option<Tensor>>>);

impl GradSlot {
    /// The gradient summed since the last take, if any.
    pub fn take(&self) -> Result<Option<Tensor>> {
        Ok(self.lock()?.take())
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Option<Tensor>>> {
        self.0
            .lock()
            .map_err(|_| candle_core::Error::Msg("gradient slot: poisoned lock".into()))
    }
}

/// `x · wᵀ + b` for `x` `[n, h]`, `w` `[v, h]` and the optional `bias` `b` `[v]` (cast to `x`'s
/// dtype); `w`'s gradient goes to `slot`.
///
/// On a GPU in bf16 or f16 the operands are widened to a multiple of 8 columns: cuBLAS takes
/// its Hopper kernels only for rows of whole 16 bytes (the three products of PTB large's
/// softmax, 1500 wide, then run much faster: `results/2026-11-23-h100-gemm-pad/`). The first
/// added column holds ones in `x` and the bias in `w`, so the product adds the bias and its
/// weight gradient's column is the bias gradient, which goes to the bias's slot; the others
/// hold zeros. Elsewhere the bias is added after the product and its gradient goes through
/// autograd.
pub fn linear_t(
    x: &Tensor,
    w: &Tensor,
    bias: Option<(&Tensor, &GradSlot)>,
    slot: &GradSlot,
) -> Result<Tensor> {
    let half = matches!(x.dtype(), DType::BF16 | DType::F16);
    linear_t_with(x, w, bias, slot, x.device().is_cuda() && half)
}

/// [`linear_t`], with the widened operands (`widen`) or without.
fn linear_t_with(
    x: &Tensor,
    w: &Tensor,
    bias: Option<(&Tensor, &GradSlot)>,
    slot: &GradSlot,
    widen: bool,
) -> Result<Tensor> {
    if widen {
        let (x, w, op) = widened(x, w, bias, slot)?;
        return x.apply_op2(&w, op);
    }
    let op = MatmulT {
        slot: slot.clone(),
        width: x.dim(1)?,
        bias_slot: None,
    };
    let xw = x.apply_op2(&w.detach(), op)?;
    match bias {
        Some((b, _)) => xw.broadcast_add(&b.to_dtype(x.dtype())?),
        None => Ok(xw),
    }
}

/// The cross-entropy of each row of [`linear_t`]'s product against `targets` (`[n]` u32), as
/// f32 `[n]`. On a GPU in half precision one op computes both and keeps the logits to itself,
/// so that autograd never adds their gradient into a zero-filled buffer of their size (on PTB
/// large two passes over 14 MB per step); elsewhere it is `linear_t` then
/// [`cross_entropy_rows`](crate::model::xent::cross_entropy_rows).
pub fn linear_t_xent(
    x: &Tensor,
    w: &Tensor,
    bias: Option<(&Tensor, &GradSlot)>,
    targets: &Tensor,
    slot: &GradSlot,
) -> Result<Tensor> {
    let half = matches!(x.dtype(), DType::BF16 | DType::F16);
    linear_t_xent_with(x, w, bias, targets, slot, x.device().is_cuda() && half)
}

/// [`linear_t_xent`] as one op on widened operands (`fused`), or composed.
fn linear_t_xent_with(
    x: &Tensor,
    w: &Tensor,
    bias: Option<(&Tensor, &GradSlot)>,
    targets: &Tensor,
    slot: &GradSlot,
    fused: bool,
) -> Result<Tensor> {
    if !fused {
        let logits = linear_t_with(x, w, bias, slot, false)?;
        return crate::model::xent::cross_entropy_rows(&logits, targets);
    }
    let targets = crate::model::xent::targets_of(x.dim(0)?, targets)?;
    let (x, w, linear) = widened(x, w, bias, slot)?;
    let op = LinearXent {
        linear,
        logits: Mutex::new(None),
    };
    x.apply_op3(&w, &targets, op)
}

/// `x` and the detached `w` widened to a multiple of 8 columns (the bias, if any, first), and
/// their product's op.
fn widened(
    x: &Tensor,
    w: &Tensor,
    bias: Option<(&Tensor, &GradSlot)>,
    slot: &GradSlot,
) -> Result<(Tensor, Tensor, MatmulT)> {
    let ((n, h), v, dt) = (x.dims2()?, w.dim(0)?, x.dtype());
    let extra = usize::from(bias.is_some());
    let pad = (h + extra).next_multiple_of(8) - h;
    let mut xs = vec![x.clone()];
    if bias.is_some() {
        xs.push(Tensor::ones((n, 1), dt, x.device())?);
    }
    if pad > extra {
        xs.push(Tensor::zeros((n, pad - extra), dt, x.device())?);
    }
    let b = bias.map(|(b, _)| b.detach().to_dtype(dt)).transpose()?;
    let w = crate::model::columns::widen(&w.detach(), b.as_ref(), h + pad)?;
    debug_assert_eq!(w.dim(0)?, v);
    let op = MatmulT {
        slot: slot.clone(),
        width: h,
        bias_slot: bias.map(|(_, s)| s.clone()),
    };
    Ok((Tensor::cat(&xs, 1)?, w, op))
}

struct MatmulT {
    slot: GradSlot,
    /// The weight's columns before widening: its gradient in the slot has these.
    width: usize,
    /// Where the bias gradient goes when the bias is the column after them.
    bias_slot: Option<GradSlot>,
}

/// Adds `g` to what `slot` holds.
fn add_to(slot: &GradSlot, g: Tensor) -> Result<()> {
    let mut held = slot.lock()?;
    let sum = match held.take() {
        Some(sum) => (sum + g)?,
        None => g,
    };
    *held = Some(sum);
    Ok(())
}

fn dims(l1: &Layout, l2: &Layout) -> Result<((usize, usize, usize), Layout)> {
    let (n, h) = l1.shape().dims2()?;
    let (v, h2) = l2.shape().dims2()?;
    if h != h2 {
        candle_core::bail!("matmul_t: [{n}, {h}] by the transpose of [{v}, {h2}]")
    }
    Ok(((n, v, h), l2.transpose(0, 1)?))
}

impl CustomOp2 for MatmulT {
    fn name(&self) -> &'static str {
        "matmul-t-owned-grad"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let ((n, v, h), wt) = dims(l1, l2)?;
        Ok((s1.matmul(s2, (1, n, v, h), l1, &wt)?, Shape::from((n, v))))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let ((n, v, h), wt) = dims(l1, l2)?;
        Ok((s1.matmul(s2, (1, n, v, h), l1, &wt)?, Shape::from((n, v))))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        Ok((Some(self.backward(x, w, grad)?), None))
    }
}

impl MatmulT {
    /// `x`'s gradient from the product's (`grad`); the weight's and the bias's go to their slots.
    fn backward(&self, x: &Tensor, w: &Tensor, grad: &Tensor) -> Result<Tensor> {
        let dx = grad.matmul(&w.detach())?;
        let dw = grad.t()?.matmul(&x.detach())?;
        if dw.dim(1)? == self.width {
            add_to(&self.slot, dw)?;
            return Ok(dx);
        }
        let (dw, db) = crate::model::columns::narrow(&dw, self.width, self.bias_slot.is_some())?;
        if let (Some(bias_slot), Some(db)) = (&self.bias_slot, db) {
            add_to(bias_slot, db)?;
        }
        add_to(&self.slot, dw)?;
        Ok(dx)
    }
}

/// [`MatmulT`] then the rows' cross-entropy, the logits kept by the op from its forward for its
/// backward.
struct LinearXent {
    linear: MatmulT,
    logits: Mutex<Option<Tensor>>,
}

impl LinearXent {
    /// Keeps the logits for the backward.
    fn keep(&self, logits: Storage, shape: Shape) -> Result<()> {
        *self.logits()? = Some(Tensor::from_storage(
            logits,
            shape,
            BackpropOp::none(),
            false,
        ));
        Ok(())
    }

    fn logits(&self) -> Result<std::sync::MutexGuard<'_, Option<Tensor>>> {
        self.logits
            .lock()
            .map_err(|_| candle_core::Error::Msg("linear_t_xent: poisoned lock".into()))
    }
}

impl CustomOp3 for LinearXent {
    fn name(&self) -> &'static str {
        "linear-t-cross-entropy-rows"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let (logits, shape) = self.linear.cpu_fwd(s1, l1, s2, l2)?;
        let rows =
            crate::model::xent::Forward.cpu_fwd(&logits, &Layout::contiguous(&shape), s3, l3)?;
        self.keep(Storage::Cpu(logits), shape)?;
        Ok(rows)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
        s3: &candle_core::CudaStorage,
        l3: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let (logits, shape) = self.linear.cuda_fwd(s1, l1, s2, l2)?;
        let rows =
            crate::model::xent::Forward.cuda_fwd(&logits, &Layout::contiguous(&shape), s3, l3)?;
        self.keep(Storage::Cuda(logits), shape)?;
        Ok(rows)
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        targets: &Tensor,
        _: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let logits = self
            .logits()?
            .take()
            .ok_or_else(|| candle_core::Error::Msg("linear_t_xent: backward twice".into()))?;
        let dlogits = crate::model::xent::logits_grad(&logits, targets, grad)?;
        Ok((Some(self.linear.backward(x, w, &dlogits)?), None, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
        let d = (a - b).unwrap().abs().unwrap().max_all().unwrap();
        d.to_dtype(DType::F64).unwrap().to_scalar::<f64>().unwrap()
    }

    /// The same numbers as candle's `x.matmul(&w.t()) + b` and their gradients: the weight's in
    /// its slot (summed over two calls, of the weight's shape) and none through autograd; the
    /// bias's in its slot when the operands are widened (8 columns for 5: the bias and two zero
    /// columns; 7 for 7: the bias alone) and through autograd otherwise; with and without a bias.
    #[test]
    fn matches_candle_linear_and_leaves_the_weight_gradients_in_their_slots() {
        let dev = Device::Cpu;
        for h in [5, 7] {
            let x = Var::from_tensor(&Tensor::randn(0f32, 1., (7, h), &dev).unwrap()).unwrap();
            let w = Var::from_tensor(&Tensor::randn(0f32, 1., (11, h), &dev).unwrap()).unwrap();
            let b = Var::from_tensor(&Tensor::randn(0f32, 1., 11, &dev).unwrap()).unwrap();
            let c = Tensor::randn(0f32, 1., (7, 11), &dev).unwrap();
            for (with_bias, widen) in [(true, true), (true, false), (false, true), (false, false)] {
                let xw = x.matmul(&w.t().unwrap()).unwrap();
                let want_y = match with_bias {
                    true => xw.broadcast_add(b.as_tensor()).unwrap(),
                    false => xw,
                };
                let want = (&want_y * &c)
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .backward()
                    .unwrap();
                let (slot, bias_slot) = (GradSlot::default(), GradSlot::default());
                let bias = with_bias.then_some((b.as_tensor(), &bias_slot));
                for round in 1..=2 {
                    let y =
                        linear_t_with(x.as_tensor(), w.as_tensor(), bias, &slot, widen).unwrap();
                    assert!(
                        max_diff(&y, &want_y) < 1e-5,
                        "h {h} bias {with_bias} widen {widen}"
                    );
                    let got = (&y * &c).unwrap().sum_all().unwrap().backward().unwrap();
                    assert!(got.get(w.as_tensor()).is_none(), "autograd got dw");
                    let dx = got.get(x.as_tensor()).unwrap();
                    assert!(max_diff(dx, want.get(x.as_tensor()).unwrap()) < 1e-5);
                    let db_autograd = got.get(b.as_tensor());
                    assert_eq!(db_autograd.is_some(), with_bias && !widen);
                    if let Some(db) = db_autograd {
                        assert!(max_diff(db, want.get(b.as_tensor()).unwrap()) < 1e-5);
                    }
                    if round == 2 {
                        let twice = |v: &Var| (want.get(v.as_tensor()).unwrap() * 2.0).unwrap();
                        let dw = slot.take().unwrap().unwrap();
                        assert_eq!(dw.dims(), w.dims());
                        assert!(max_diff(&dw, &twice(&w)) < 1e-5);
                        assert!(slot.take().unwrap().is_none());
                        let db = bias_slot.take().unwrap();
                        assert_eq!(db.is_some(), with_bias && widen);
                        if let Some(db) = db {
                            assert_eq!(db.dims(), b.dims());
                            assert!(max_diff(&db, &twice(&b)) < 1e-5);
                        }
                    }
                }
            }
        }
    }

    /// One op for the softmax product and its cross-entropy gives the composition's losses and
    /// gradients: `x`'s through autograd, the weight's and the bias's in their slots (the
    /// composition on unwidened operands leaves the bias's to autograd), with and without a
    /// bias; and its second backward is an error, not a stale gradient.
    #[test]
    fn fused_cross_entropy_matches_the_composition() {
        let dev = Device::Cpu;
        let (n, h, v) = (9, 5, 13);
        let x = Var::from_tensor(&Tensor::randn(0f32, 1., (n, h), &dev).unwrap()).unwrap();
        let w = Tensor::randn(0f32, 1., (v, h), &dev).unwrap();
        let b = Var::from_tensor(&Tensor::randn(0f32, 1., v, &dev).unwrap()).unwrap();
        let targets = Tensor::new(&[0u32, 12, 3, 3, 7, 1, 0, 11, 5], &dev).unwrap();
        let weights = Tensor::randn(0f32, 1., n, &dev).unwrap();
        for with_bias in [true, false] {
            let run = |fused: bool| {
                let (slot, bias_slot) = (GradSlot::default(), GradSlot::default());
                let bias = with_bias.then_some((b.as_tensor(), &bias_slot));
                let rows =
                    linear_t_xent_with(x.as_tensor(), &w, bias, &targets, &slot, fused).unwrap();
                let grads = (&rows * &weights)
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .backward()
                    .unwrap();
                let dx = grads.get(x.as_tensor()).unwrap().clone();
                let db = match bias_slot.take().unwrap() {
                    Some(db) => Some(db),
                    None => grads.get(b.as_tensor()).cloned(),
                };
                (rows, dx, slot.take().unwrap().unwrap(), db)
            };
            let (want, got) = (run(false), run(true));
            assert!(max_diff(&got.0, &want.0) < 1e-5, "losses, bias {with_bias}");
            assert!(max_diff(&got.1, &want.1) < 1e-5, "dx, bias {with_bias}");
            assert_eq!(got.2.dims(), w.dims());
            assert!(max_diff(&got.2, &want.2) < 1e-5, "dw, bias {with_bias}");
            assert_eq!(got.3.is_some(), with_bias);
            if let (Some(g), Some(w)) = (&got.3, &want.3) {
                assert!(max_diff(g, w) < 1e-5, "db");
            }
        }
        let slot = GradSlot::default();
        let rows = linear_t_xent_with(x.as_tensor(), &w, None, &targets, &slot, true).unwrap();
        let loss = rows.sum_all().unwrap();
        loss.backward().unwrap();
        assert!(loss.backward().is_err(), "a second backward ran");
    }
}
