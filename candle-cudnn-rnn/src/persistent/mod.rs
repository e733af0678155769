//! [`RnnAlgo::Persistent`](crate::RnnAlgo::Persistent): our own LSTM kernel that keeps each
//! layer's recurrent weights on chip for the whole sequence (`lstm_fwd.cu`), beside cuDNN.
//!
//! Per layer: the input projection of all steps as one GEMM (`gemm`), then one persistent
//! kernel for the recurrence (`kernel`). It serves inference-mode calls of a unidirectional
//! LSTM without projection or per-sample lengths, in bf16 or f16, whose hidden size fits in
//! shared memory ([`kernel::Plan::new`] says why not); every other call, and training, goes to
//! cuDNN's standard algorithm over the same weights.

mod gemm;
mod kernel;

use crate::backend::{view, BackwardInputs, GpuBackend, GpuReserve, Operand};
use crate::call::{Call, Dropout};
use crate::cudnn::CudnnRnn;
use crate::layout::RnnDims;
use crate::{RnnAlgo, RnnConfig, RnnMode};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use candle_core::cuda_backend::{CudaDType, DeviceId};
use candle_core::{CudaStorage, DType, Result, Tensor};
use kernel::Plan;
use std::collections::HashMap;
use std::sync::Mutex;

/// A kernel plan, or why a call goes to cuDNN.
type PlanOrWhyNot = std::result::Result<Plan, String>;

/// The persistent LSTM, with cuDNN for the calls it does not take.
pub(crate) struct PersistentLstm {
    dims: RnnDims,
    cudnn: CudnnRnn,
    /// The plan (or the reason for none) per device, hidden size, batch and dtype.
    plans: Mutex<HashMap<(DeviceId, usize, DType), PlanOrWhyNot>>,
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
        if train {
            return Err("has no backward yet".into());
        }
        let dev = x.device();
        let key = (dev.id(), call.batch, x.dtype());
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        plans
            .entry(key)
            .or_insert_with(|| Plan::new(&dev.cuda_stream(), d.hidden_size, call.batch, x.dtype()))
            .clone()
    }
}

/// The inference forward of `call` on the persistent kernel: the packed `[y | h_n | c_n]`.
fn forward<T: CudaDType + DeviceRepr + ValidAsZeroBits>(
    dims: &RnnDims,
    plan: Plan,
    call: &Call,
    [(xs, xl), (ws, wl), (ss, sl)]: [Operand; 3],
) -> Result<CudaStorage> {
    let dev = xs.device().clone();
    let stream = dev.cuda_stream();
    let (x, w, s) = (
        view::<T>(xs, xl, "x")?,
        view::<T>(ws, wl, "weight")?,
        view::<T>(ss, sl, "state")?,
    );
    let (seq, batch, hidden, layers) = (call.seq, call.batch, dims.hidden_size, dims.num_layers);
    let steps = seq * batch;
    let elem = std::mem::size_of::<T>() as u64;
    // SAFETY: the kernels write every element of y, h_n and c_n, and cuBLAS all of xg,
    // before anything reads them.
    let mut out = unsafe { stream.alloc::<T>(call.output_len() + call.state_len()) }?;
    let mut xg = unsafe { stream.alloc::<f32>(steps * 4 * hidden) }?;
    // The output of the layers below the top one; a layer's GEMM reads it before its kernel
    // overwrites it.
    let mut below = match layers {
        1 => None,
        _ => Some(unsafe { stream.alloc::<T>(steps * hidden) }?),
    };
    let mut counter = stream.alloc_zeros::<u32>(1)?;
    // h_t for the other blocks, rows padded to whole K steps; the padding stays zero.
    let mut exchange = stream.alloc_zeros::<T>(2 * batch * plan.kpad())?;
    let (hx, _hg) = exchange.device_ptr_mut(&stream);
    let f = plan.forward_kernel(&dev)?;
    let cfg = LaunchConfig {
        grid_dim: (plan.blocks() as u32, 1, 1),
        block_dim: (plan.threads() as u32, 1, 1),
        shared_mem_bytes: plan.smem_bytes() as u32,
    };
    let (x_ptr, _xg) = x.device_ptr(&stream);
    let (w_ptr, _wg) = w.device_ptr(&stream);
    let (s_ptr, _sg) = s.device_ptr(&stream);
    let (out_ptr, _og) = out.device_ptr_mut(&stream);
    let (xg_ptr, _gg) = xg.device_ptr_mut(&stream);
    let below_ptr = below.as_mut().map(|b| b.device_ptr_mut(&stream));
    let state_at = |slot: usize, layer: usize| call.state_slot(slot, layer, 0).start as u64;
    for layer in 0..layers {
        let b = dims.block(layer, 0);
        let input = match layer {
            0 => x_ptr,
            _ => below_ptr.as_ref().map_or(0, |p| p.0),
        };
        // SAFETY: every address is inside its live buffer, sized by `call` and `dims`.
        unsafe {
            gemm::x_times_wt(
                &dev,
                plan.bf16,
                (steps, b.in_size, 4 * hidden),
                input,
                w_ptr + b.w_ih as u64 * elem,
                xg_ptr,
            )?
        };
        let y = match (layer + 1 == layers, &below_ptr) {
            (false, Some(p)) => p.0,
            _ => out_ptr,
        };
        let opt = |o: Option<usize>| o.map_or(0u64, |o| w_ptr + o as u64 * elem);
        let w_hh = w_ptr + b.w_hh as u64 * elem;
        let (b_ih, b_hh) = (opt(b.b_ih), opt(b.b_hh));
        let h0 = s_ptr + state_at(0, layer) * elem;
        let c0 = s_ptr + state_at(1, layer) * elem;
        let h_n = out_ptr + (call.output_len() as u64 + state_at(0, layer)) * elem;
        let c_n = out_ptr + (call.output_len() as u64 + state_at(1, layer)) * elem;
        let save = 0u64;
        let seq_arg = seq as i32;
        stream.memset_zeros(&mut counter)?;
        let (counter_ptr, _cg) = counter.device_ptr_mut(&stream);
        let mut launch = stream.launch_builder(&f);
        launch
            .arg(&w_hh)
            .arg(&xg_ptr)
            .arg(&b_ih)
            .arg(&b_hh)
            .arg(&h0)
            .arg(&c0)
            .arg(&y)
            .arg(&h_n)
            .arg(&c_n)
            .arg(&hx)
            .arg(&save)
            .arg(&counter_ptr)
            .arg(&seq_arg);
        // SAFETY: the arguments match `lstm_persistent_fwd`'s signature; the grid has at most
        // one block per multiprocessor, each of which fits (checked by `Plan::new`).
        unsafe { launch.launch_cooperative(cfg) }
            .map_err(|e| candle_core::Error::Msg(format!("rnn: persistent LSTM launch: {e}")))?;
    }
    drop((below_ptr, _og));
    Ok(CudaStorage::wrap_cuda_slice(out, dev))
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
        let out = match dtypes.0 {
            DType::BF16 => forward::<half::bf16>(&self.dims, plan, call, [x, w, s])?,
            _ => forward::<half::f16>(&self.dims, plan, call, [x, w, s])?,
        };
        Ok((out, None))
    }

    fn backward(
        &self,
        call: &Call,
        reserve: GpuReserve,
        inputs: BackwardInputs,
        dw_into: Option<&mut CudaStorage>,
    ) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
        // Training-mode forwards all ran on cuDNN.
        self.cudnn.backward(call, reserve, inputs, dw_into)
    }

    fn chosen_algo(&self, seq: usize, batch: usize, train: bool) -> Option<RnnAlgo> {
        let served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        served.get(&(seq, batch, train)).copied()
    }

    fn weights_in_place(&self) -> Option<bool> {
        self.cudnn.weights_in_place()
    }
}
