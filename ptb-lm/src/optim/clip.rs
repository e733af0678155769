//! TensorFlow's `clip_by_global_norm`, on the device: the norm over every variable's counted
//! gradient, the factor that brings it down to the bound, and the statistics of the steps.

use super::blas::Nrm2;
use super::Gradient;
use candle_core::{DType, Result, Tensor};

/// How a step's gradients are to be scaled: by `recip · k`, `recip` a device scalar.
pub struct GradScale {
    /// `1 / max(norm, max_norm)`.
    pub recip: Tensor,
    /// `max_norm / loss_scale`.
    pub k: f64,
}

/// The global norm over the steps since the last look.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipStats {
    pub mean_norm: f64,
    pub clipped_fraction: f64,
    /// Steps skipped because their scaled gradients overflowed (f16).
    pub skipped: usize,
}

/// Clipping to a global norm, with running statistics summed on the device, in place (a step
/// replayed from a CUDA graph adds to the same memory).
pub struct GlobalNormClip {
    max_norm: f64,
    /// Sums since the last `take_stats`: the norms, the steps that clipped, the steps; made by
    /// the first step.
    sums: Option<Tensor>,
}

impl GlobalNormClip {
    pub fn new(max_norm: f64) -> Self {
        Self {
            max_norm,
            sums: None,
        }
    }

    /// `‖(g_1, g_2, ...)‖₂` over the counted gradients, in their order (a device scalar).
    pub fn global_norm(&self, grads: &[Gradient]) -> Result<Tensor> {
        let Some(first) = grads.first() else {
            candle_core::bail!("optimizer: no variable has a gradient")
        };
        let norms = Tensor::zeros(grads.len(), DType::F32, first.counted.device())?;
        for (i, g) in grads.iter().enumerate() {
            norms.narrow(0, i, 1)?.inplace_op2(&g.counted, &Nrm2)?;
        }
        norms.sqr()?.sum_all()?.sqrt()
    }

    /// The scale of a step whose (unscaled) norm is `norm`, the gradients being `loss_scale`
    /// times too large; records the step in the statistics. The bound is filled in on the
    /// device (`Tensor::full`), not copied from the host, so that the step can be captured.
    pub fn scale(&mut self, norm: &Tensor, loss_scale: f64) -> Result<GradScale> {
        let dev = norm.device();
        let bound = Tensor::full(self.max_norm as f32, norm.shape(), dev)?;
        let recip = norm.maximum(&bound)?.recip()?;
        let clipped = norm.gt(&bound)?.to_dtype(DType::F32)?;
        let one = Tensor::ones(norm.shape(), DType::F32, dev)?;
        let step = Tensor::stack(&[norm, &clipped, &one], 0)?;
        match &self.sums {
            Some(sums) => sums.slice_set(&(sums + step)?, 0, 0)?,
            None => self.sums = Some(step),
        }
        Ok(GradScale {
            recip,
            k: self.max_norm / loss_scale,
        })
    }

    /// The statistics since the last call (waits for the device), with `skipped` steps.
    pub fn take_stats(&mut self, skipped: usize) -> Result<Option<ClipStats>> {
        let (norm, clipped, steps) = match &self.sums {
            Some(sums) => {
                let v = sums.to_dtype(DType::F64)?.to_vec1::<f64>()?;
                sums.zero_set()?;
                (v[0], v[1], v[2])
            }
            None => (0.0, 0.0, 0.0),
        };
        if steps == 0.0 {
            return Ok((skipped > 0).then_some(ClipStats {
                mean_norm: f64::NAN,
                clipped_fraction: f64::NAN,
                skipped,
            }));
        }
        Ok(Some(ClipStats {
            mean_norm: norm / steps,
            clipped_fraction: clipped / steps,
            skipped,
        }))
    }
}
