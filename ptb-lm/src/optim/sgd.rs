//! Update rules: what a step does to each variable with its (clipped) gradient. The tutorial's
//! is plain SGD.

use super::blas::axpy;
use super::clip::GradScale;
use super::lookup_grad::scatter_axpy;
use super::{Gradient, Update};
use candle_core::{Result, Tensor};

/// An optimizer's rule: `apply` updates every variable from its gradient times `scale`.
pub trait UpdateRule {
    fn set_learning_rate(&mut self, lr: f64) -> Result<()>;
    fn apply(&mut self, grads: &[Gradient], scale: &GradScale) -> Result<()>;
}

/// `w ← w − lr · scale · g`, in place: a dense gradient by `axpy` (which refreshes the
/// variable's half copy, if it has one), a lookup's summed rows into
/// the rows they belong to (`scatter_axpy`), the factor read on the device. The learning rate
/// too lives on the device once a step has run, and changes in place there, so that a step
/// captured as a CUDA graph follows it.
pub struct Sgd {
    lr: f64,
    on_device: Option<Tensor>,
}

impl Sgd {
    pub fn new(lr: f64) -> Self {
        Self {
            lr,
            on_device: None,
        }
    }
}

impl UpdateRule for Sgd {
    fn set_learning_rate(&mut self, lr: f64) -> Result<()> {
        self.lr = lr;
        if let Some(t) = &self.on_device {
            t.const_set((lr as f32).into())?;
        }
        Ok(())
    }

    fn apply(&mut self, grads: &[Gradient], scale: &GradScale) -> Result<()> {
        let Some(first) = grads.first() else {
            return Ok(());
        };
        let lr = match &self.on_device {
            Some(t) => t.clone(),
            None => {
                // A fill, not an upload: the memory is the rule's own (see `DropoutRng::reseed`).
                let t = Tensor::full(self.lr as f32, 1, first.var.device())?;
                self.on_device.insert(t).clone()
            }
        };
        let factor = (scale.recip.reshape(1)? * lr)?.affine(-scale.k, 0.0)?;
        for g in grads {
            match &g.update {
                Update::Dense(d) => axpy(g.var.as_tensor(), d, &factor, g.copy.as_ref())?,
                Update::Rows { ids, sums } => scatter_axpy(g.var.as_tensor(), ids, sums, &factor)?,
            }
        }
        Ok(())
    }
}
