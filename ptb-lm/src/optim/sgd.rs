//! Update rules: what a step does to each variable with its (clipped) gradient. The tutorial's
//! is plain SGD.

use super::blas::Axpy;
use super::clip::GradScale;
use super::lookup_grad::scatter_axpy;
use super::{Gradient, Update};
use candle_core::Result;

/// An optimizer's rule: `apply` updates every variable from its gradient times `scale`.
pub trait UpdateRule {
    fn set_learning_rate(&mut self, lr: f64);
    fn apply(&mut self, grads: &[Gradient], scale: &GradScale) -> Result<()>;
}

/// `w ← w − lr · scale · g`, in place: a dense gradient by `axpy`, a lookup's summed rows into
/// the rows they belong to (`scatter_axpy`), the factor read on the device.
pub struct Sgd {
    pub lr: f64,
}

impl UpdateRule for Sgd {
    fn set_learning_rate(&mut self, lr: f64) {
        self.lr = lr;
    }

    fn apply(&mut self, grads: &[Gradient], scale: &GradScale) -> Result<()> {
        let factor = (&scale.recip * (-self.lr * scale.k))?.reshape(1)?;
        for g in grads {
            match &g.update {
                Update::Dense(d) => g.var.as_tensor().inplace_op3(d, &factor, &Axpy)?,
                Update::Rows { ids, sums } => scatter_axpy(g.var.as_tensor(), ids, sums, &factor)?,
            }
        }
        Ok(())
    }
}
