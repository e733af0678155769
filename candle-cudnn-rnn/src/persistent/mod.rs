//! [`RnnAlgo::Persistent`](crate::RnnAlgo::Persistent): our own LSTM kernel that keeps each
//! layer's recurrent weights on chip for the whole sequence (`lstm_fwd.cu`), beside cuDNN.
//!
//! Per layer: the input projection of all steps as one GEMM, then one persistent kernel for
//! the recurrence (`forward`); backward, one persistent kernel for the recurrence backward
//! through time, then the weight and input gradients as GEMMs (`backward`); inter-layer
//! dropout with masks counted on the device (`masks`). It serves calls of a unidirectional
//! LSTM without projection or per-sample lengths, in bf16 or f16, whose hidden size and batch fit in shared memory ([`kernel::Plan::new`] says
//! why not); every other call goes to cuDNN's standard algorithm over the same weights.

mod backward;
mod forward;
mod gemm;
mod kernel;
mod masks;

use crate::backend::{BackwardInputs, GpuBackend, GpuReserve, Operand};
use crate::call::{Call, Dropout};
use crate::cudnn::CudnnRnn;
use crate::layout::RnnDims;
use crate::{RnnAlgo, RnnConfig, RnnMode};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use candle_core::cuda_backend::{CudaDType, DeviceId};
use candle_core::{CudaStorage, DType, Result, Tensor, WithDType};
use kernel::Plan;
use std::collections::HashMap;
use std::sync::Mutex;

/// The element types the kernels run on.
trait Elem: CudaDType + WithDType + DeviceRepr + ValidAsZeroBits {}
impl Elem for half::f16 {}
impl Elem for half::bf16 {}
impl Elem for f32 {}

/// A kernel plan, or why a call goes to cuDNN.
type PlanOrWhyNot = std::result::Result<Plan, String>;

/// The persistent LSTM, with cuDNN for the calls it does not take.
pub(crate) struct PersistentLstm {
    dims: RnnDims,
    cudnn: CudnnRnn,
    /// The plan (or the reason for none) per device, hidden size, batch and dtype.
    plans: Mutex<HashMap<(DeviceId, usize, DType, bool), PlanOrWhyNot>>,
    /// The inter-layer dropout masks' counters.
    counters: masks::Counters,
    /// Which algorithm served each `(seq, batch, train)`, for [`GpuBackend::chosen_algo`].
    served: Mutex<HashMap<(usize, usize, bool), RnnAlgo>>,
}

impl PersistentLstm {
    pub(crate) fn new(dims: RnnDims, cfg: &RnnConfig) -> Self {
        Self {
            dims,
            cudnn: CudnnRnn::new(dims, cfg.math, RnnAlgo::Standard, cfg.dropout),
            plans: Mutex::new(HashMap::new()),
            served: Mutex::new(HashMap::new()),
            counters: Default::default(),
        }
    }

    /// The kernel plan for this call, or why it goes to cuDNN.
    fn plan(&self, call: &Call, train: bool, x: &CudaStorage) -> PlanOrWhyNot {
        let d = &self.dims;
        if d.mode != RnnMode::Lstm || d.num_directions != 1 || d.proj_size > 0 {
            return Err("takes unidirectional LSTMs without projection".into());
        }
        if call.lengths.is_some() {
            return Err("does not take per-sample lengths".into());
        }
        let dev = x.device();
        let key = (dev.id(), call.batch, x.dtype(), train);
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        plans
            .entry(key)
            .or_insert_with(|| {
                let sizes = (d.hidden_size, call.batch, x.dtype());
                Plan::new(&dev.cuda_stream(), sizes, train)
            })
            .clone()
    }
}

impl GpuBackend for PersistentLstm {
    fn forward(
        &self,
        call: &Call,
        dropout: Dropout,
        train: bool,
        x: Operand,
        w: Operand,
        s: Operand,
    ) -> Result<(CudaStorage, Option<GpuReserve>)> {
        let dtypes = (x.0.dtype(), w.0.dtype(), s.0.dtype());
        // The kernel reads h_0 in pairs of elements.
        let aligned = s.1.start_offset() % 2 == 0;
        let plan = match self.plan(call, train, x.0) {
            Ok(plan) if aligned && dtypes.0 == dtypes.1 && dtypes.1 == dtypes.2 => Some(plan),
            _ => None,
        };
        let algo = plan.map_or(RnnAlgo::Standard, |_| RnnAlgo::Persistent);
        self.served
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((call.seq, call.batch, train), algo);
        let Some(plan) = plan else {
            return self.cudnn.forward(call, dropout, train, x, w, s);
        };
        fn boxed<T: Elem>(
            (out, r): (CudaStorage, Option<forward::Reserve<T>>),
        ) -> (CudaStorage, Option<GpuReserve>) {
            (out, r.map(|r| Box::new(r) as GpuReserve))
        }
        let masks = match train && dropout.active() && self.dims.num_layers > 1 {
            true => Some(self.counters.take(x.0.device(), &plan, &dropout)?),
            false => None,
        };
        let (ops, mode) = ([x, w, s], (train, masks));
        Ok(match dtypes.0 {
            DType::BF16 => boxed(forward::forward::<half::bf16>(
                &self.dims, plan, call, mode, ops,
            )?),
            _ => boxed(forward::forward::<half::f16>(
                &self.dims, plan, call, mode, ops,
            )?),
        })
    }

    fn backward(
        &self,
        call: &Call,
        reserve: GpuReserve,
        inputs: BackwardInputs,
        dw_into: Option<&mut CudaStorage>,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        // A reserve of our own forward, or cuDNN's (for the calls handed to it).
        let reserve = match reserve.downcast::<forward::Reserve<half::bf16>>() {
            Ok(r) => return backward::backward(&self.dims, call, *r, inputs, dw_into),
            Err(other) => other,
        };
        match reserve.downcast::<forward::Reserve<half::f16>>() {
            Ok(r) => backward::backward(&self.dims, call, *r, inputs, dw_into),
            Err(other) => self.cudnn.backward(call, other, inputs, dw_into),
        }
    }

    fn chosen_algo(&self, seq: usize, batch: usize, train: bool) -> Option<RnnAlgo> {
        let served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        served.get(&(seq, batch, train)).copied()
    }

    fn weights_in_place(&self) -> Option<bool> {
        self.cudnn.weights_in_place()
    }
}
