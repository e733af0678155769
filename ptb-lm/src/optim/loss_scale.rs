//! Dynamic loss scaling for f16 steps, as PyTorch's `GradScaler`: the loss is multiplied by
//! `scale` before backward so that small gradients survive f16; a step whose gradients
//! overflowed is skipped and the scale halved; after `interval` good steps in a row it doubles.
//! The scale and its counters live on the device and change there, in place, so that an f16
//! step needs no host read and can be captured as a CUDA graph.

use candle_core::{DType, Device, Result, Tensor};
use serde::{Deserialize, Serialize};

/// The scale as checkpoints keep it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossScale {
    pub scale: f64,
    /// Good steps since the last change.
    pub good: usize,
}

/// PyTorch's defaults: start at 2^16, double after 2000 good steps.
const INITIAL: f64 = 65536.0;
const INTERVAL: usize = 2000;

impl Default for LossScale {
    fn default() -> Self {
        Self {
            scale: INITIAL,
            good: 0,
        }
    }
}

/// `[scale, good steps, skipped steps]` in f32 on the device (powers of two and counts below
/// 2^24 are exact).
pub struct DeviceLossScale {
    state: Tensor,
}

impl DeviceLossScale {
    /// Uploads `s` (outside any graph capture: the optimizer does it when made or resumed).
    pub fn new(s: LossScale, dev: &Device) -> Result<Self> {
        let state = Tensor::new(&[s.scale as f32, s.good as f32, 0.0], dev)?;
        Ok(Self { state })
    }

    /// The scale, a one-element device tensor the step multiplies its loss by.
    pub fn scale(&self) -> Result<Tensor> {
        self.state.narrow(0, 0, 1)
    }

    /// After a step whose gradients were `finite` (1.0) or overflowed (0.0), a one-element f32
    /// tensor: count it, and double or halve the scale (never below 1), all on the device.
    pub fn update(&self, finite: &Tensor) -> Result<()> {
        let finite = finite.reshape(1)?;
        let part = |i| self.state.narrow(0, i, 1);
        let (scale, good, skipped) = (part(0)?, part(1)?, part(2)?);
        let overflowed = finite.affine(-1.0, 1.0)?;
        // good + 1 after a finite step, 0 after an overflow.
        let good = ((good + 1.0)? * &finite)?;
        let grow = good.ge(&Tensor::full(INTERVAL as f32, 1, good.device())?)?;
        let grow = grow.to_dtype(DType::F32)?;
        let kept = (&scale * grow.affine(1.0, 1.0)?)?;
        let halved =
            scale
                .affine(0.5, 0.0)?
                .maximum(&Tensor::ones(1, DType::F32, scale.device())?)?;
        let scale = ((kept * &finite)? + (halved * &overflowed)?)?;
        let good = (good * grow.affine(-1.0, 1.0)?)?;
        let skipped = (skipped + overflowed)?;
        self.state
            .slice_set(&Tensor::cat(&[scale, good, skipped], 0)?, 0, 0)
    }

    /// `[scale, good steps, skipped steps]` as they stand (reads the device), for a checkpoint
    /// taken between steps.
    pub fn values(&self) -> Result<Vec<f32>> {
        self.state.to_vec1::<f32>()
    }

    /// Continues from `values` (of [`Self::values`]), in place.
    pub fn set_values(&self, values: &[f32]) -> Result<()> {
        let v = Tensor::new(values, self.state.device())?;
        self.state.slice_set(&v, 0, 0)
    }

    /// The scale for a checkpoint (waits for the device).
    pub fn read(&self) -> Result<LossScale> {
        let v = self.state.to_vec1::<f32>()?;
        Ok(LossScale {
            scale: v[0] as f64,
            good: v[1] as usize,
        })
    }

    /// Steps skipped since the last call (waits for the device), counting from 0 again.
    pub fn take_skipped(&self) -> Result<usize> {
        let skipped = self.state.narrow(0, 2, 1)?;
        let n = skipped.to_vec1::<f32>()?[0] as usize;
        skipped.zero_set()?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GradScaler's rule, on the host.
    fn next(s: LossScale, finite: bool) -> LossScale {
        match finite {
            true if s.good + 1 == INTERVAL => LossScale {
                scale: s.scale * 2.0,
                good: 0,
            },
            true => LossScale {
                good: s.good + 1,
                ..s
            },
            // Never below 1: a gradient that overflows unscaled is no scaling's fault.
            false => LossScale {
                scale: (s.scale / 2.0).max(1.0),
                good: 0,
            },
        }
    }

    fn step(d: &DeviceLossScale, finite: bool) {
        let f = Tensor::new(&[finite as u8 as f32], &Device::Cpu).unwrap();
        d.update(&f).unwrap();
    }

    #[test]
    fn device_scale_halves_on_overflow_and_doubles_after_a_good_run() {
        let start = LossScale {
            scale: INITIAL,
            good: INTERVAL - 3,
        };
        let d = DeviceLossScale::new(start, &Device::Cpu).unwrap();
        let mut host = start;
        // Two good steps, the doubling one, an overflow, a good run that doubles again, and
        // overflows down to the floor of 1.
        let mut flags = vec![true, true, true, false];
        flags.extend(std::iter::repeat_n(true, INTERVAL));
        flags.extend(std::iter::repeat_n(false, 20));
        let mut skipped = 0;
        for (i, &f) in flags.iter().enumerate() {
            step(&d, f);
            host = next(host, f);
            skipped += usize::from(!f);
            assert_eq!(d.read().unwrap(), host, "after step {i}");
        }
        assert_eq!(host.scale, 1.0);
        assert_eq!(d.take_skipped().unwrap(), skipped);
        assert_eq!(d.take_skipped().unwrap(), 0);
        assert_eq!(d.scale().unwrap().to_vec1::<f32>().unwrap(), [1.0]);
    }
}
