//! [`RnnAlgo::Persistent`](crate::RnnAlgo::Persistent): our own kernels that keep each
//! layer's recurrent weights on chip for the whole sequence (`recurrence_fwd.cu`), beside cuDNN, for
//! the cells of `cell` (LSTM and GRU, each a header of pointwise steps).
//!
//! Per layer: the input projection of all steps as one GEMM, then one persistent kernel for
//! the recurrence (`forward`); backward, one persistent kernel for the recurrence backward
//! through time, then the weight and input gradients as GEMMs (`backward`); inter-layer
//! dropout applied inside both recurrences, its masks counted on the device (`masks`). Where
//! a stack's layers all fit on the GPU at once, one kernel per pass runs all of them as a
//! wavefront (`wave`). The kernels implement unidirectional LSTMs and GRUs without projection
//! or per-sample lengths, in bf16, f16 or f32 (TF32 products; layer by layer), whose hidden size
//! and batch fit in shared memory; a bidirectional layer runs its directions side by side where
//! both fit at once, else one after the other, the reverse one on its input flipped in time
//! (`units`; layer by layer, each direction's output through a mask of its own). A module
//! offers a call's [`Plan`] or why there is none ([`PersistentRnn::plan`]) and runs it; which
//! calls it gets (the others go to cuDNN) is decided in `crate::choose`. The knobs of `tuning`
//! are read from the environment once.

mod backward;
mod cell;
mod f16_scaled;
mod forward;
mod gemm;
mod kernel;
mod launch;
mod masks;
mod padded;
mod plan;
mod rules;
mod side;
mod transposed;
mod tuning;
mod units;
mod wave;
mod wgmma_wave;

use kernel::Pass;
use wave::Wave;
use wgmma_wave::WgmmaWave;

pub(crate) use cell::Cell;
pub(crate) use kernel::{Operands, CHUNK_SAMPLES, MAX_KERNEL_BATCH};
pub(crate) use plan::Plan;
pub(crate) use rules::{batch_groups, shape_wgmma_forward};
pub(crate) use tuning::Tuning;

use crate::backend::{BackwardInputs, ForwardInputs, Forwarded, GpuReserve, Gradients, Outputs};
use crate::layout::RnnDims;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use candle_core::cuda_backend::{CudaDType, CudaDevice, DeviceId};
use candle_core::{bail, DType, Result, WithDType};
use std::collections::HashMap;
use std::sync::Mutex;

/// Which passes of a call run every layer of the module in one launch, as a wavefront
/// ([`PersistentRnn::in_one_launch`]; `backward` only for a training call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OneLaunch {
    pub forward: bool,
    pub backward: bool,
}

impl OneLaunch {
    /// Both passes, or (`as_both`) neither.
    #[cfg(test)]
    pub fn both(as_both: bool) -> Self {
        OneLaunch {
            forward: as_both,
            backward: as_both,
        }
    }

    /// Whether every pass of a call (`train`: the forward and the backward) runs in one launch.
    pub fn every_pass(self, train: bool) -> bool {
        self.forward && (self.backward || !train)
    }
}

/// The element types the kernels run on.
trait Elem: CudaDType + WithDType + DeviceRepr + ValidAsZeroBits {}
impl Elem for half::f16 {}
impl Elem for half::bf16 {}
impl Elem for f32 {}

/// A kernel plan, or why a call cannot run on the kernels.
pub(crate) type PlanOrWhyNot = std::result::Result<Plan, String>;

/// The persistent kernels of one module (a cell of [`Cell`] in one or two directions, without
/// projection).
pub(crate) struct PersistentRnn {
    dims: RnnDims,
    cell: Cell,
    tuning: Tuning,
    /// The plan (or the reason for none) per device, batch, dtype and training mode.
    plans: Mutex<HashMap<(DeviceId, usize, DType, bool), PlanOrWhyNot>>,
    /// The inter-layer dropout masks' counters.
    counters: masks::Counters,
}

impl PersistentRnn {
    /// The kernels of a module of `dims` whose cell is `cell`, planned with `tuning`.
    pub(crate) fn new(dims: RnnDims, cell: Cell, tuning: Tuning) -> Self {
        Self {
            dims,
            cell,
            tuning,
            plans: Mutex::new(HashMap::new()),
            counters: Default::default(),
        }
    }

    /// The inter-layer dropout's mask counter on `dev` (8 bytes; none before a call with
    /// dropout ran there).
    pub(crate) fn dropout_state(&self, dev: &CudaDevice) -> Result<Vec<u8>> {
        self.counters.state(dev)
    }

    /// Continues the mask counter on `dev` from `state` (of [`Self::dropout_state`]) at the
    /// seed's `generation`.
    pub(crate) fn restore_dropout_state(
        &self,
        dev: &CudaDevice,
        generation: u64,
        state: &[u8],
    ) -> Result<()> {
        self.counters.restore(dev, generation, state)
    }

    /// Whether its TF32 plans multiply scaled f16 operands in their forwards (`Plan::scaled`;
    /// off with `CANDLE_RNN_PERSISTENT_F16_SCALED=0`).
    pub(crate) fn scales_tf32(&self) -> bool {
        self.tuning.f16_scaled
    }

    /// The kernel plan for calls of `batch` in `dtype` on `dev` (with room for the backward
    /// when `train`), or why there is none (the dtype, the batch or the hidden size; made once).
    pub(crate) fn plan(
        &self,
        dev: &CudaDevice,
        batch: usize,
        dtype: DType,
        train: bool,
    ) -> PlanOrWhyNot {
        let key = (dev.id(), batch, dtype, train);
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        plans
            .entry(key)
            .or_insert_with(|| {
                let sizes = (self.cell, self.dims.hidden_size, batch, dtype);
                let (layers, input) = planned_layers(&self.dims);
                let directions = self.dims.num_directions;
                let plan = Plan::new(
                    dev,
                    sizes,
                    (train, (layers, directions), input),
                    &self.tuning,
                );
                if self.tuning.show_plans {
                    let wgmma_wave = plan
                        .as_ref()
                        .ok()
                        .and_then(|p| WgmmaWave::new(dev, p, layers, self.tuning.wave));
                    eprintln!(
                        "candle-cudnn-rnn: {:?} {layers} x {}, input {input}, batch {batch}, \
                         {dtype:?}, train {train}: {plan:?}, wgmma wavefront: {wgmma_wave:?}",
                        self.cell, self.dims.hidden_size
                    );
                }
                plan
            })
            .clone()
    }

    /// Which passes of calls on `plan` (of [`PersistentRnn::plan`] on `dev`) run all the
    /// module's layers in one launch (`wave`): the forward, and for a `train`ing call the
    /// backward. Never for one layer, nor for two directions (`units`).
    pub(crate) fn in_one_launch(&self, dev: &CudaDevice, plan: &Plan, train: bool) -> OneLaunch {
        let layers = self.dims.num_layers;
        let one_way = self.dims.num_directions == 1;
        let wave =
            |pass| one_way && Wave::new(dev, plan, (layers, pass), self.tuning.wave).is_some();
        OneLaunch {
            forward: wave(Pass::Forward),
            backward: train && wave(Pass::Backward),
        }
    }

    /// Runs one call forward on `plan`'s kernels (from [`PersistentRnn::plan`] for the call's
    /// device, batch, dtype and mode; the operands of `plan`'s dtype, the state at an even
    /// element); what it keeps for training is for [`PersistentRnn::backward`].
    pub(crate) fn forward(&self, plan: Plan, inputs: ForwardInputs) -> Result<Forwarded> {
        fn boxed<T: Elem>((out, r): (Outputs, Option<forward::Reserve<T>>)) -> Forwarded {
            (out, r.map(|r| Box::new(r) as GpuReserve))
        }
        let ForwardInputs {
            call,
            dropout,
            train,
            ops,
            state_apart,
        } = inputs;
        let call = (call, state_apart);
        let masks = match train && dropout.active() && self.dims.num_layers > 1 {
            true => Some(self.counters.take(ops[0].0.device(), &plan, &dropout)?),
            false => None,
        };
        let side_by_side = self.tuning.side_by_side;
        let (mode, planned) = ((train, masks), (plan, self.tuning.wave, side_by_side));
        Ok(match plan.elem {
            Operands::Bf16 => boxed(forward::forward::<half::bf16>(
                &self.dims, planned, call, mode, ops,
            )?),
            Operands::F16 => boxed(forward::forward::<half::f16>(
                &self.dims, planned, call, mode, ops,
            )?),
            Operands::Tf32 => boxed(forward::forward::<f32>(
                &self.dims, planned, call, mode, ops,
            )?),
        })
    }

    /// The gradients of the forward that left `reserve` (one of [`PersistentRnn::forward`]'s);
    /// `dstate` only when `inputs.state_grad`, `dx` only when `inputs.input_grad`, `dw` only
    /// without `inputs.dw_into`.
    pub(crate) fn backward(
        &self,
        reserve: GpuReserve,
        inputs: BackwardInputs,
    ) -> Result<Gradients> {
        let reserve = match reserve.downcast::<forward::Reserve<half::bf16>>() {
            Ok(r) => return backward::backward(&self.dims, *r, inputs),
            Err(other) => other,
        };
        let reserve = match reserve.downcast::<forward::Reserve<half::f16>>() {
            Ok(r) => return backward::backward(&self.dims, *r, inputs),
            Err(other) => other,
        };
        match reserve.downcast::<forward::Reserve<f32>>() {
            Ok(r) => backward::backward(&self.dims, *r, inputs),
            Err(_) => bail!("rnn backward: the forward's reserve was not the persistent kernels'"),
        }
    }
}

/// The layers and the input size that a plan of a module of `dims` is made for ([`Plan::new`]):
/// the module's, where its launches may run all the layers at once (`wave`). Two directions run
/// layer by layer (`units`), each launch one layer's, so their plan is a layer's: its rules
/// (batch groups, one cluster, gates in registers) are those measured on one layer. Above
/// the first, a bidirectional layer's input (both directions' outputs) is not the module's,
/// so no stack of them folds its input projection into the forward (input 0). Planned as a
/// stack, such layers ran in one batch group, as a wavefront would, at twice the time
/// (`results/2026-12-02-h200-bidir-dropout/`).
fn planned_layers(dims: &RnnDims) -> (usize, usize) {
    let RnnDims {
        num_layers,
        input_size,
        num_directions,
        ..
    } = *dims;
    match (num_directions, num_layers) {
        (1, _) => (num_layers, input_size),
        (_, 1) => (1, input_size),
        _ => (1, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use units::tests::dims;

    #[test]
    fn two_directions_are_planned_as_one_layer_and_fold_only_the_first_layers_input() {
        assert_eq!(planned_layers(&dims(3, false)), (3, 24));
        assert_eq!(planned_layers(&dims(1, false)), (1, 24));
        assert_eq!(planned_layers(&dims(1, true)), (1, 24));
        assert_eq!(planned_layers(&dims(2, true)), (1, 0));
    }
}
