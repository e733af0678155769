//! [`RnnAlgo::Persistent`](crate::RnnAlgo::Persistent): our own LSTM kernel that keeps each
//! layer's recurrent weights on chip for the whole sequence (`lstm_fwd.cu`), beside cuDNN.
//!
//! Per layer: the input projection of all steps as one GEMM, then one persistent kernel for
//! the recurrence (`forward`); backward, one persistent kernel for the recurrence backward
//! through time, then the weight and input gradients as GEMMs (`backward`); inter-layer
//! dropout applied inside both recurrences, its masks counted on the device (`masks`). Where
//! a stack's layers all fit on the GPU at once, one kernel per pass runs all of them as a
//! wavefront (`wave`). It serves calls of a unidirectional LSTM without projection or
//! per-sample lengths, in bf16 or f16, whose hidden size and batch fit in shared memory
//! ([`kernel::Plan::new`] says why not); every other call goes to cuDNN's standard algorithm
//! over the same weights. Under [`RnnAlgo::Auto`] it serves the calls it takes only where it
//! measured faster than cuDNN (`choose`), and cuDNN's `Auto` the others.

mod backward;
mod choose;
mod forward;
mod gemm;
mod kernel;
mod launch;
mod masks;
mod padded;
mod wave;

use crate::backend::{BackwardInputs, DwInto, GpuBackend, GpuReserve, Operand};
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

/// A call's device, dtype, `seq`, `batch` and `train`.
type CallShape = (DeviceId, DType, usize, usize, bool);

/// A kernel plan, or why a call goes to cuDNN.
type PlanOrWhyNot = std::result::Result<Plan, String>;

/// Whether a module of `dims` has calls the persistent kernels may take (their dtype, batch
/// and device decide per call).
pub(crate) fn may_serve(dims: &RnnDims) -> bool {
    dims.mode == RnnMode::Lstm && dims.num_directions == 1 && dims.proj_size == 0
}

/// The persistent LSTM, with cuDNN for the calls it does not take.
pub(crate) struct PersistentLstm {
    dims: RnnDims,
    cudnn: CudnnRnn,
    /// Under `Auto`: whether the kernels won the measurement, per device, dtype and
    /// `(seq, batch, train)`; `None` when they serve every call they take.
    won: Option<Mutex<HashMap<CallShape, bool>>>,
    /// The plan (or the reason for none) per device, hidden size, batch and dtype.
    plans: Mutex<HashMap<(DeviceId, usize, DType, bool), PlanOrWhyNot>>,
    /// The inter-layer dropout masks' counters.
    counters: masks::Counters,
    /// Which algorithm served each `(seq, batch, train)`, for [`GpuBackend::chosen_algo`].
    served: Mutex<HashMap<(usize, usize, bool), RnnAlgo>>,
}

impl PersistentLstm {
    /// With `cfg.algo` [`RnnAlgo::Auto`] the kernels compete with cuDNN's algorithms.
    pub(crate) fn new(dims: RnnDims, cfg: &RnnConfig) -> Self {
        let auto = cfg.algo == RnnAlgo::Auto;
        let cudnn_algo = if auto {
            RnnAlgo::Auto
        } else {
            RnnAlgo::Standard
        };
        Self {
            dims,
            cudnn: CudnnRnn::new(dims, cfg.math, cudnn_algo, cfg.dropout),
            won: auto.then(Default::default),
            plans: Mutex::new(HashMap::new()),
            served: Mutex::new(HashMap::new()),
            counters: Default::default(),
        }
    }

    /// The kernel plan for this call, or why it goes to cuDNN.
    fn plan(&self, call: &Call, train: bool, x: &CudaStorage) -> PlanOrWhyNot {
        let d = &self.dims;
        if !may_serve(d) {
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
                Plan::new(dev, sizes, train)
            })
            .clone()
    }

    /// Under `Auto`, whether the kernels serve this call (measured on its first shape).
    fn kernels_chosen(
        &self,
        call: &Call,
        (plan, train): (Plan, bool),
        dropout: Dropout,
        ops: [Operand; 3],
    ) -> Result<bool> {
        let Some(won) = &self.won else {
            return Ok(true);
        };
        let dev = ops[0].0.device();
        let key = (dev.id(), ops[0].0.dtype(), call.seq, call.batch, train);
        if let Some(&w) = won.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(w);
        }
        let w = match key.1 {
            DType::BF16 => self.kernels_win::<half::bf16>(call, (plan, train), dropout, ops)?,
            _ => self.kernels_win::<half::f16>(call, (plan, train), dropout, ops)?,
        };
        won.lock().unwrap_or_else(|e| e.into_inner()).insert(key, w);
        Ok(w)
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
        let plan = match plan {
            Some(p) if !self.kernels_chosen(call, (p, train), dropout, [x, w, s])? => None,
            p => p,
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
        dw_into: Option<DwInto>,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
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
        match served.get(&(seq, batch, train)).copied() {
            // cuDNN served it: with its algorithm when it measured one.
            Some(RnnAlgo::Standard) => self
                .cudnn
                .chosen_algo(seq, batch, train)
                .or(Some(RnnAlgo::Standard)),
            other => other,
        }
    }

    fn weights_in_place(&self) -> Option<bool> {
        self.cudnn.weights_in_place()
    }
}
