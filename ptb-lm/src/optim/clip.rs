//! TensorFlow's `clip_by_global_norm`, on the device: the norm over every variable's counted
//! gradient, the factor that brings it down to the bound, and the statistics of the steps.

use super::blas::Nrm2;
use super::Gradient;
use candle_core::{DType, Result, Tensor};

/// How a step's gradients are to be scaled: by `recip · k`, `recip` a device scalar.
pub struct GradScale {
    /// `1 / (max(norm, max_norm) · loss_scale)`; 0 for a step whose scaled gradients
    /// overflowed, which leaves the weights alone.
    pub recip: Tensor,
    /// `max_norm`.
    pub k: f64,
    /// With a loss scale: 1.0 if the step's gradients were finite, 0.0 if they overflowed.
    pub finite: Option<Tensor>,
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

    /// The scale of a step whose gradients have the global norm `norm`, multiplied by the
    /// device scalar `loss_scale` if given (then a step whose norm is not finite overflowed:
    /// its factor is 0 and the statistics leave it out); records the step in the statistics.
    /// Constants are filled in on the device (`Tensor::full`), not copied from the host, so
    /// that the step can be captured.
    pub fn scale(&mut self, norm: &Tensor, loss_scale: Option<&Tensor>) -> Result<GradScale> {
        let dev = norm.device();
        let full = |v: f32| Tensor::full(v, norm.shape(), dev);
        let bound = full(self.max_norm as f32)?;
        let (recip, norm, taken, finite) = match loss_scale {
            None => {
                let recip = norm.maximum(&bound)?.recip()?;
                (recip, norm.clone(), full(1.0)?, None)
            }
            Some(s) => {
                let s = s.reshape(norm.shape())?;
                // NaN compares false too.
                let ok = norm.lt(&full(f32::INFINITY)?)?;
                let zero = full(0.0)?;
                let unscaled = ok.where_cond(&(norm / &s)?, &zero)?;
                let recip = (unscaled.maximum(&bound)? * &s)?.recip()?;
                let recip = ok.where_cond(&recip, &zero)?;
                let ok = ok.to_dtype(DType::F32)?;
                (recip, unscaled, ok.clone(), Some(ok))
            }
        };
        let clipped = norm.gt(&bound)?.to_dtype(DType::F32)?;
        let step = Tensor::stack(&[&norm, &clipped, &taken], 0)?;
        match &self.sums {
            Some(sums) => sums.slice_set(&(sums + step)?, 0, 0)?,
            None => self.sums = Some(step),
        }
        Ok(GradScale {
            recip,
            k: self.max_norm,
            finite,
        })
    }

    /// The running sums since the last `take_stats` (reads the device), for a checkpoint taken
    /// between steps.
    pub fn sums(&self) -> Result<Option<Vec<f32>>> {
        self.sums.as_ref().map(|s| s.to_vec1::<f32>()).transpose()
    }

    /// Continues from `sums` (of [`Self::sums`]) on `dev`, as a run resumed between steps does.
    pub fn set_sums(&mut self, sums: &[f32], dev: &candle_core::Device) -> Result<()> {
        self.sums = Some(Tensor::new(sums, dev)?);
        Ok(())
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
