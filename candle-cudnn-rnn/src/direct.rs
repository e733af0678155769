//! [`backward`]: `loss.backward()` with each module's weight gradient stored straight into the
//! returned [`GradStore`].
//!
//! Candle adds every gradient a custom op returns into a fresh zero-filled tensor of the
//! argument's size (`GradStore::or_insert`, then an add): for a module's flat weight that is a
//! fill and an add over every weight in each backward, which PyTorch does not do and which
//! cost PTB large's LSTM about a tenth of its training call
//! (`results/2026-11-25-h100-plain-api/`). Under [`backward`], a GPU call whose weight is a
//! variable (a `Var`, as a `VarMap` holds it) writes its gradient into a buffer of its own and
//! returns none for the weight; `backward` then puts the buffer into the store, adding it to
//! whatever candle summed there for the same variable. Candle's own `backward` has a change
//! open that stores a first gradient directly (huggingface/candle#3822); with it merged,
//! `loss.backward()` would do the same.

use crate::sink::SinkMode;
use candle_core::backprop::GradStore;
use candle_core::{bail, Result, Tensor};
use std::cell::RefCell;

thread_local! {
    /// While [`backward`] runs on this thread: each variable met (a weight, an input, an initial
    /// state) and its gradient.
    static COLLECTING: RefCell<Option<Vec<(Tensor, Tensor)>>> = const { RefCell::new(None) };
}

/// `loss.backward()`, with the weight gradient of every module of this crate that ran on a GPU
/// over a variable weight (a `Var`: `candle_nn::VarMap`'s, or `Var::from_tensor`) written
/// straight into the returned store, with none of the zero fill and add that candle spends on
/// a custom op's gradient; the same for an input or initial state that is itself a variable. The store holds the same gradients as `loss.backward()`'s, so a
/// `candle_nn` optimizer steps with it as usual:
///
/// ```ignore
/// let grads = candle_cudnn_rnn::backward(&loss)?;
/// sgd.step(&grads)?;
/// ```
///
/// Modules with a weight-gradient sink ([`crate::Rnn::with_weight_grad_sink`]) still fill
/// their sinks; CPU calls and weights that are not variables (a cast of one, say) go through
/// candle's accumulation as under `loss.backward()`.
pub fn backward(loss: &Tensor) -> Result<GradStore> {
    let started = COLLECTING.with(|c| match &mut *c.borrow_mut() {
        Some(_) => false,
        none => {
            *none = Some(Vec::new());
            true
        }
    });
    if !started {
        bail!("candle_cudnn_rnn::backward: called inside another candle_cudnn_rnn::backward")
    }
    // Whatever happens in candle's backward (an error, a panic unwinding through here), this
    // thread stops collecting when it is over.
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            COLLECTING.with(|c| c.borrow_mut().take());
        }
    }
    let stop = Stop;
    let grads = loss.backward();
    let collected = COLLECTING
        .with(|c| c.borrow_mut().take())
        .unwrap_or_default();
    drop(stop);
    let mut grads = grads?;
    for (w, dw) in collected {
        let dw = match grads.remove(&w) {
            Some(summed) => (summed + dw)?,
            None => dw,
        };
        grads.insert(&w, dw);
    }
    Ok(grads)
}

/// `grad`, the gradient of the op's argument `arg`, as the op hands it to candle: `None` when
/// [`backward`] runs and `arg` is a variable (the input or the initial state as a `Var`), after
/// keeping it for `backward` to put into the store (summed with one kept before for `arg`);
/// `Some(grad)` otherwise.
pub(crate) fn hand_over(arg: &Tensor, grad: Tensor) -> Result<Option<Tensor>> {
    if !arg.is_variable() {
        return Ok(Some(grad));
    }
    COLLECTING.with(|c| {
        let mut c = c.borrow_mut();
        let Some(met) = c.as_mut() else {
            return Ok(Some(grad));
        };
        match met.iter_mut().find(|(t, _)| t.id() == arg.id()) {
            Some((_, kept)) => *kept = (&*kept + grad)?,
            None => met.push((arg.clone(), grad)),
        }
        Ok(None)
    })
}

/// candle-nn's `Optimizer::backward_step` through [`backward`]: `opt`'s step with the gradients
/// of `loss`.
pub fn backward_step<O: candle_nn::Optimizer>(opt: &mut O, loss: &Tensor) -> Result<()> {
    opt.step(&backward(loss)?)
}

/// Where a GPU backward over the weight `w` leaves its gradient while [`backward`] runs and
/// `w` is a variable: a buffer of `w`'s shape, new (to be overwritten) the first time `w` comes
/// by, the same one (to be added to) when it comes by again. `None` otherwise: the op returns
/// the gradient to candle.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn sink_for(w: &Tensor) -> Result<Option<(Tensor, SinkMode)>> {
    if !w.is_variable() {
        return Ok(None);
    }
    COLLECTING.with(|c| {
        let mut c = c.borrow_mut();
        let Some(met) = c.as_mut() else {
            return Ok(None);
        };
        if let Some((_, dw)) = met.iter().find(|(t, _)| t.id() == w.id()) {
            return Ok(Some((dw.clone(), SinkMode::Add)));
        }
        // SAFETY: an overwritten sink has every element written by the backward before it is
        // read (`SinkMode::Overwrite`).
        let dw = unsafe { Tensor::empty(w.shape(), w.dtype(), w.device()) }?;
        met.push((w.clone(), dw.clone()));
        Ok(Some((dw, SinkMode::Overwrite)))
    })
}
