//! The backward of a call on the persistent kernel, from the top layer down: the recurrence
//! backward through time (one cooperative launch, which leaves the gate gradients of every
//! step), then the layer's weight and bias gradients and its input's gradient as GEMMs over
//! all steps.

use super::forward::{addresses, cooperative, zero_counter, Reserve};
use super::gemm::{matmul, Mat, Out};
use super::kernel::Pass;
use super::Elem;
use crate::backend::{cuda_views, BackwardInputs};
use crate::call::Call;
use crate::layout::RnnDims;
use candle_core::cuda_backend::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use candle_core::op::BackpropOp;
use candle_core::{bail, CudaStorage, Device, Result, Storage, Tensor};

/// `(dx, dw, dstate)`, flat, of the forward that left `r`; `dw` is `None` when it was added
/// into `dw_into`, `dstate` when not asked for.
pub(super) fn backward<T: Elem>(
    dims: &RnnDims,
    call: &Call,
    mut r: Reserve<T>,
    i: BackwardInputs,
    dw_into: Option<&mut CudaStorage>,
) -> Result<(Tensor, Option<Tensor>, Option<Tensor>)> {
    let storages = i.storages();
    let (views, dev) = cuda_views::<T>(&storages, "persistent-kernel")?;
    let stream = dev.cuda_stream();
    let plan = r.plan;
    let (seq, batch, hidden, layers) = (call.seq, call.batch, dims.hidden_size, dims.num_layers);
    let (steps, g4) = (seq * batch, 4 * hidden);
    let elem = std::mem::size_of::<T>() as u64;
    // SAFETY (allocations): layer 0's input GEMM writes all of dx, the kernels all of dstate
    // and dg, each layer's input GEMM all of the next one's dy.
    let mut dx = unsafe { stream.alloc::<T>(call.input_len()) }?;
    let mut ds = unsafe { stream.alloc::<T>(call.state_len()) }?;
    let mut dg = unsafe { stream.alloc::<T>(steps * g4) }?;
    let mut dy_below = unsafe { stream.alloc::<T>(if layers > 1 { steps * hidden } else { 1 }) }?;
    let mut exchange = stream.alloc_zeros::<T>(2 * batch * plan.gpad())?;
    let counter = stream.alloc_zeros::<u32>(1)?;
    let ones = Tensor::ones(steps, T::DTYPE, &Device::Cuda(dev.clone()))?;
    let (ones_guard, _) = ones.storage_and_layout();
    let ones = match &*ones_guard {
        Storage::Cuda(s) => s.as_cuda_slice::<T>()?,
        _ => bail!("rnn backward: ones not on the GPU"),
    };
    let mut own = None;
    let dw: &mut CudaSlice<T> = match dw_into {
        Some(into) => {
            let into = into.as_cuda_slice_mut::<T>()?;
            if into.len() != dims.weight_count() {
                bail!(
                    "rnn backward: a weight-gradient buffer of {} elements for {} weights",
                    into.len(),
                    dims.weight_count()
                );
            }
            into
        }
        None => own.insert(stream.alloc_zeros::<T>(dims.weight_count())?),
    };
    let f = plan.kernel(&dev, Pass::Backward)?;
    {
        let [(x, _a), (w, _b), (s, _c), (y_top, _d), (grad, _e)] =
            [0, 1, 2, 3, 4].map(|k| views[k].device_ptr(&stream));
        let (dx_ptr, _f) = dx.device_ptr_mut(&stream);
        let (ds_ptr, _g) = ds.device_ptr_mut(&stream);
        let (dg_ptr, _h) = dg.device_ptr_mut(&stream);
        let (dyb, _i) = dy_below.device_ptr_mut(&stream);
        let (dgx, _j) = exchange.device_ptr_mut(&stream);
        let (counter_ptr, _k) = counter.device_ptr(&stream);
        let (ones_ptr, _l) = ones.device_ptr(&stream);
        let (dw_ptr, _m) = dw.device_ptr_mut(&stream);
        let gate_ptrs = addresses(&mut r.gates, &stream);
        let cell_ptrs = addresses(&mut r.cells, &stream);
        let below_ptrs = addresses(&mut r.below, &stream);
        let (masks, dropped) = match r.masks.as_mut() {
            Some((m, d)) => (Some(&*m), addresses(d, &stream)),
            None => (None, Vec::new()),
        };
        let state = |slot: usize, layer: usize| call.state_slot(slot, layer, 0).start as u64 * elem;
        let grad_state = |slot, layer| grad + call.output_len() as u64 * elem + state(slot, layer);
        for layer in (0..layers).rev() {
            let b = dims.block(layer, 0);
            let top = layer + 1 == layers;
            let args = [
                w + b.w_hh as u64 * elem,
                gate_ptrs[layer].0,
                cell_ptrs[layer].0,
                s + state(1, layer),
                if top { grad } else { dyb },
                grad_state(0, layer),
                grad_state(1, layer),
                dg_ptr,
                dgx,
                ds_ptr + state(0, layer),
                ds_ptr + state(1, layer),
                counter_ptr,
            ];
            zero_counter(&stream, counter_ptr)?;
            cooperative(&stream, &f, &plan, Pass::Backward, &args, seq)?;
            let input = match (layer, dropped.get(layer.wrapping_sub(1))) {
                (0, _) => x,
                (_, Some(d)) => d.0,
                _ => below_ptrs[layer - 1].0,
            };
            let y = if top { y_top } else { below_ptrs[layer].0 };
            let dw_at = |o: usize| dw_ptr + o as u64 * elem;
            let dgt = Mat::new(dg_ptr, g4).t();
            let add = |(m, n, k), a, bm, c| {
                // SAFETY: every address is inside its live buffer, sized by `call` and `dims`.
                unsafe { matmul(&dev, plan.bf16, (m, n, k), a, bm, c, Out::AddHalf) }
            };
            add(
                (g4, b.in_size, steps),
                dgt,
                Mat::new(input, b.in_size),
                dw_at(b.w_ih),
            )?;
            // dW_hh: h_{t-1} is y[t-1] for t >= 1 and h_0 for t = 0.
            if seq > 1 {
                let dg1 = Mat::new(dg_ptr + (batch * g4) as u64 * elem, g4).t();
                add(
                    (g4, hidden, steps - batch),
                    dg1,
                    Mat::new(y, hidden),
                    dw_at(b.w_hh),
                )?;
            }
            let h0 = Mat::new(s + state(0, layer), hidden);
            add((g4, hidden, batch), dgt, h0, dw_at(b.w_hh))?;
            for bias in [b.b_ih, b.b_hh].into_iter().flatten() {
                add(
                    (1, g4, steps),
                    Mat::new(ones_ptr, steps),
                    Mat::new(dg_ptr, g4),
                    dw_at(bias),
                )?;
            }
            let dinput = if layer == 0 { dx_ptr } else { dyb };
            let w_ih = Mat::new(w + b.w_ih as u64 * elem, b.in_size);
            // SAFETY: as above.
            unsafe {
                matmul(
                    &dev,
                    plan.bf16,
                    (steps, b.in_size, g4),
                    Mat::new(dg_ptr, g4),
                    w_ih,
                    dinput,
                    Out::Half,
                )?
            };
            // The gradient of the layer below's output goes back through its mask.
            if let (Some(m), true) = (masks, layer > 0) {
                let n = steps * hidden;
                m.apply(
                    &stream,
                    &dev,
                    (&plan, Pass::Backward),
                    dyb,
                    dyb,
                    n,
                    layer - 1,
                )?;
            }
        }
    }
    let wrap = |slice: CudaSlice<T>, n: usize| {
        let storage = Storage::Cuda(CudaStorage::wrap_cuda_slice(slice, dev.clone()));
        Tensor::from_storage(storage, (n,), BackpropOp::none(), false)
    };
    let dw = own.map(|d| wrap(d, dims.weight_count()));
    let ds = i.state_grad.then(|| wrap(ds, call.state_len()));
    Ok((wrap(dx, call.input_len()), dw, ds))
}
