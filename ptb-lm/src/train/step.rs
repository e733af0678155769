//! One training or evaluation step: forward and loss, and when training backward, clipping
//! and the update.

use crate::model::{sequence_loss, LmState, Masks, PtbModel};
use crate::optim::Optimizer;
use anyhow::Result;
use candle_core::Tensor;

pub struct Training<'a> {
    pub opt: &'a mut Optimizer,
}

/// The phases of a training step, in order: `step_timed` reports the end of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    ForwardAndLoss,
    Backward,
    Update,
}

/// One batch: forward and loss, and with `training` backward, clipping and the SGD update.
/// `x` and `y` are time-major `[steps, batch]` ids on the model's device (`Batches::window`).
/// Returns the loss and the next state.
pub fn step(
    model: &PtbModel,
    batch: (Tensor, Tensor),
    state: &LmState,
    masks: &mut Masks,
    training: Option<&mut Training>,
) -> Result<(Tensor, LmState)> {
    step_timed(model, batch, state, masks, training, |_| Ok(()))
}

/// [`step`], calling `lap` at the end of each phase (a benchmark synchronizes and reads its
/// clock there).
pub fn step_timed(
    model: &PtbModel,
    (x, y): (Tensor, Tensor),
    state: &LmState,
    masks: &mut Masks,
    training: Option<&mut Training>,
    mut lap: impl FnMut(Phase) -> Result<()>,
) -> Result<(Tensor, LmState)> {
    let (loss, next, lookup) = match training {
        Some(_) => model.train_loss(&x, &y, state, masks)?,
        None => {
            let (logits, next, lookup) = model.forward(&x, state, masks, false)?;
            (sequence_loss(&logits, &y, x.dim(0)?)?, next, lookup)
        }
    };
    lap(Phase::ForwardAndLoss)?;
    if let Some(t) = training {
        // The loss scale is a device scalar: a replayed step reads its current value.
        let scaled = match t.opt.loss_scale_tensor()? {
            Some(s) => loss.broadcast_mul(&s.reshape(loss.shape())?)?,
            None => loss.clone(),
        };
        let grads = scaled.backward()?;
        lap(Phase::Backward)?;
        t.opt
            .step(&grads, lookup.as_slice(), &model.owned_gradients()?)?;
        lap(Phase::Update)?;
    }
    masks.end_step()?;
    Ok((loss, next))
}
