//! The softmax layer's matrix product `x · wᵀ` as a custom op whose backward returns the input's
//! gradient to autograd but leaves the weight's in a slot the optimizer takes. candle's own
//! matmul backward computes the weight's gradient even for a detached weight and adds every
//! gradient into a fresh zero-filled buffer (then, in half precision, casts it to f32 and adds
//! it into another): for PTB large's 10000 × 1500 softmax that was most of a millisecond.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp2, DType, Layout, Result, Shape, Tensor};
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

/// `x · wᵀ` for `x` `[n, h]` and `w` `[v, h]` (one dtype); `w`'s gradient goes to `slot`.
///
/// On a GPU in bf16 or f16 with `h` not a multiple of 8 (PTB large's 1500), both operands are
/// first padded with zero columns to the next multiple: cuBLAS takes its Hopper kernels only
/// for rows of whole 16 bytes (on an H100 the three products of PTB large's softmax then take
/// about half as long, for two copies of the weight's size).
pub fn matmul_t(x: &Tensor, w: &Tensor, slot: &GradSlot) -> Result<Tensor> {
    let h = x.dim(1)?;
    let half = matches!(x.dtype(), DType::BF16 | DType::F16);
    let pad = match x.device().is_cuda() && half {
        true => h.next_multiple_of(8) - h,
        false => 0,
    };
    matmul_t_padded(x, w, slot, pad)
}

/// [`matmul_t`] with `pad` zero columns added to both operands.
fn matmul_t_padded(x: &Tensor, w: &Tensor, slot: &GradSlot, pad: usize) -> Result<Tensor> {
    let w = w.detach();
    let op = MatmulT {
        slot: slot.clone(),
        width: w.dim(1)?,
    };
    match pad {
        0 => x.apply_op2(&w, op),
        _ => x
            .pad_with_zeros(1, 0, pad)?
            .apply_op2(&w.pad_with_zeros(1, 0, pad)?, op),
    }
}

struct MatmulT {
    slot: GradSlot,
    /// The weight's columns before any padding: its gradient in the slot has these.
    width: usize,
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
        let dx = grad.matmul(&w.detach())?;
        let mut dw = grad.t()?.matmul(&x.detach())?;
        if dw.dim(1)? != self.width {
            dw = dw.narrow(1, 0, self.width)?.contiguous()?;
        }
        let mut slot = self.slot.lock()?;
        let dw = match slot.take() {
            Some(sum) => (sum + dw)?,
            None => dw,
        };
        *slot = Some(dw);
        Ok((Some(dx), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device, Var};

    /// The same numbers as candle's `x.matmul(&w.t())` and its gradients, the weight's in the
    /// slot (summed over two calls, of the weight's shape) and none through autograd, with and
    /// without padded operands.
    #[test]
    fn matches_candle_matmul_and_leaves_the_weight_gradient_in_the_slot() {
        let dev = Device::Cpu;
        let x = Var::from_tensor(&Tensor::randn(0f32, 1., (7, 5), &dev).unwrap()).unwrap();
        let w = Var::from_tensor(&Tensor::randn(0f32, 1., (11, 5), &dev).unwrap()).unwrap();
        let c = Tensor::randn(0f32, 1., (7, 11), &dev).unwrap();
        let want_y = x.matmul(&w.t().unwrap()).unwrap();
        let want = (&want_y * &c)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        for pad in [0, 3] {
            let slot = GradSlot::default();
            for round in 1..=2 {
                let y = matmul_t_padded(x.as_tensor(), w.as_tensor(), &slot, pad).unwrap();
                let close = |a: &Tensor, b: &Tensor| {
                    let d = (a - b).unwrap().abs().unwrap().max_all().unwrap();
                    d.to_dtype(DType::F64).unwrap().to_scalar::<f64>().unwrap()
                };
                assert!(close(&y, &want_y) < 1e-6);
                let got = (&y * &c).unwrap().sum_all().unwrap().backward().unwrap();
                assert!(got.get(w.as_tensor()).is_none(), "autograd got dw");
                let dx = got.get(x.as_tensor()).unwrap();
                assert!(close(dx, want.get(x.as_tensor()).unwrap()) < 1e-5);
                if round == 2 {
                    let dw = slot.take().unwrap().unwrap();
                    assert_eq!(dw.dims(), w.dims());
                    let twice = (want.get(w.as_tensor()).unwrap() * 2.0).unwrap();
                    assert!(close(&dw, &twice) < 1e-5);
                    assert!(slot.take().unwrap().is_none());
                }
            }
        }
    }
}
