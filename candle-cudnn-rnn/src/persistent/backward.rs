//! The backward of a call on the persistent kernel, from the top layer down: the recurrence
//! backward through time (one cooperative launch, which leaves the gate gradients of every
//! step), then the layer's weight and bias gradients and its input's gradient as GEMMs over
//! all steps (the kernel sums the bias gradients itself; with batch groups and side streams,
//! each group's, which `rnn_sum_bias_parts` then adds). Where the layers fit on the GPU at once,
//! one wavefront launch (`wave`) runs every layer's recurrence first, the upper layers making
//! the layers below's output gradients on the way, then the GEMMs follow.

use super::forward::{addresses, barrier_at, cooperative, run_side_by_side, Reserve};
use super::gemm::{device_blas, matmul, Mat, Out};
use super::kernel::Pass;
use super::launch::GROUP_WORDS;
use super::masks;
use super::padded::{padded, pads, Order, RowKernels, Rows};
use super::plan::Plan;
use super::side::{bias_parts_summed_after, weight_gradients_aside, Fork};
use super::units::Units;
use super::wave::WaveBwdArgs;
use super::Elem;
use crate::backend::{cuda_views, weight_grad_buffer, BackwardInputs, DwInto, Gradients};
use crate::layout::RnnDims;
use crate::memory::fill;
use crate::sink::SinkMode;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::CudaDevice;
use candle_core::op::BackpropOp;
use candle_core::{CudaStorage, Result, Storage, Tensor};
use std::sync::Arc;

/// The gradients of the forward that left `r` (all layers' recurrences as a wavefront where
/// that forward chose one, `Reserve::backward_wave`); `dw` is `None` when it went into
/// `i.dw_into`, `dx` and `dstate` when not asked for.
pub(super) fn backward<T: Elem>(
    dims: &RnnDims,
    mut r: Reserve<T>,
    i: BackwardInputs,
) -> Result<Gradients> {
    let call = i.call;
    let storages = i.storages();
    let (views, dev) = cuda_views::<T>(&storages, "persistent-kernel")?;
    let stream = dev.cuda_stream();
    let plan = r.plan;
    let (seq, batch, hidden, layers) = (call.seq, call.batch, dims.hidden_size, dims.num_layers);
    let (steps, gh) = (seq * batch, plan.cell.gates() * hidden);
    let elem = std::mem::size_of::<T>() as u64;
    // SAFETY (allocations): layer 0's input GEMM writes all of dx (when asked for), the kernels
    // all of dstate and dg, each layer's input GEMM all of the next one's dy.
    let mut dx = unsafe { stream.alloc::<T>(if i.input_grad { call.input_len() } else { 1 }) }?;
    let mut ds = unsafe { stream.alloc::<T>(call.state_len()) }?;
    // A zero h_0 for the recurrent weight's gradient at t = 0 where it is the only product
    // (one step) and the call was given no initial state; with more steps that product is
    // skipped (it adds zero).
    let zero_h0 = match call.zero_state && seq == 1 {
        true => Some(stream.alloc_zeros::<T>(batch * hidden)?),
        false => None,
    };
    // Every layer at once, where the forward chose it, else layer by layer. The wavefront
    // needs every layer's gate gradients, exchange buffer and (below the top) output gradient
    // at once; layer by layer one of each serves in turn.
    // A bidirectional layer's two directions side by side where the forward judged they fit
    // (`Units::side_by_side`): each with gate gradients, bias parts and exchange buffers of its
    // own.
    let wave = r.backward_wave;
    let apart = r.backward_side_by_side;
    let units = Units::of(dims, true);
    let each = |n: usize| if wave.is_some() { n } else { n.min(1) };
    let dg_slots = if apart {
        units.directions
    } else {
        each(layers)
    };
    let mut dg = unsafe { stream.alloc::<T>(dg_slots * steps * gh) }?;
    // A split gate's cell (a GRU): the gate gradients on the recurrent product's side, for the
    // recurrent weight's gradient (the kernels write them all).
    let split = plan.cell.splits();
    let mut dgh = unsafe { stream.alloc::<T>(if split { dg_slots * steps * gh } else { 1 }) }?;
    // The output gradient of the layer below, `[T, B, 2H]` below a bidirectional layer.
    let dy_cols = units.directions * hidden;
    let mut dy_below = unsafe { stream.alloc::<T>((each(layers - 1) * steps * dy_cols).max(1)) }?;
    // A bidirectional layer's directions' output gradients, split from the layer's before either
    // runs (the first one's input gradient overwrites the layer's), the reverse one's flipped in
    // time; and the reverse one's gate gradients flipped back, for its input weight's and input's
    // gradients in time order against the layer's input.
    // SAFETY (allocations): the row copies write all of them before the kernels and GEMMs read.
    let two = units.bidirectional();
    let mut dy_split = unsafe { stream.alloc::<T>(if two { 2 * steps * hidden } else { 1 }) }?;
    let mut dg_flipped = unsafe { stream.alloc::<T>(if two { steps * gh } else { 1 }) }?;
    // With batch groups, each group's bias gradients before the first group or
    // `rnn_sum_bias_parts` adds them (`recurrence_bwd.cu`'s `db_parts`: a slot per gate, and a
    // split gate's recurrent side).
    // SAFETY (allocation): each layer's kernel writes every group's slots before either reads
    // them.
    let db_slots = plan.cell.gates() + usize::from(split);
    let db_parts_each = match plan.pass_groups(Pass::Backward) {
        1 => 0,
        g => g * db_slots * hidden,
    };
    let db_parts_len = db_parts_each * if apart { units.directions } else { 1 };
    let mut db_parts = unsafe { stream.alloc::<f32>(db_parts_len.max(1)) }?;
    // Each step's gate gradients for the other blocks, two slots taken in turn, and the grid
    // barrier behind them: zeroed by the forward, behind its own (`Reserve::exchanges`).
    let place = r.backward_exchange;
    let (exchange_len, exchanges_len) = (place.layer_len, place.len);
    let mut own = None;
    // Written rather than added to: an overwritten sink, or our own buffer.
    let overwrite = i
        .dw_into
        .as_ref()
        .is_none_or(|d| d.mode == SinkMode::Overwrite);
    let dw: &mut CudaSlice<T> = match i.dw_into {
        Some(DwInto { buf, .. }) => weight_grad_buffer::<T>(buf, dims.weight_count())?,
        // SAFETY (allocation): the products below write every weight's gradient and the
        // kernels every bias's (`overwrite`); the gpu_check rows compare all of them.
        None => own.insert(unsafe { stream.alloc::<T>(dims.weight_count()) }?),
    };
    // Padded rows for the GEMMs (`padded`): a weight gradient's product before it is copied or
    // added into place, and an input gradient before it is copied into place. (Writing 1500-wide
    // rows, say, straight from the GEMMs costs more than the copies: cuBLAS then leaves its
    // Hopper kernels, `results/2026-11-24-h100-trials/`.)
    let widest = (0..layers)
        .map(|l| dims.block(l, 0).in_size)
        .max()
        .unwrap_or(0);
    let pad_in = r.padded.iter().any(Option::is_some);
    let pad_hidden = pads(&plan, hidden);
    let scratch_len = |on: bool, n: usize| if on { n } else { 1 };
    // SAFETY (allocations): each is written by a GEMM before it is read.
    let mut dw_rows = unsafe {
        stream.alloc::<T>(scratch_len(
            pad_in || pad_hidden,
            gh * padded(widest.max(hidden)),
        ))
    }?;
    let mut dx_rows = unsafe { stream.alloc::<T>(scratch_len(pad_in, steps * padded(widest))) }?;
    let rows = RowKernels {
        dev: &dev,
        stream: &stream,
        plan: &plan,
        pass: Pass::Backward,
    };
    let f = match wave {
        Some(w) => w.kernel(&dev, &plan)?,
        None => plan.kernel(&dev, Pass::Backward)?,
    };
    // The wgmma backward reads dy in 16-byte pieces: the output's gradient, where it starts off
    // that alignment (a view into a larger buffer), is copied first (the layers below read
    // buffers of their own).
    let grad_copy =
        match plan.pass_wgmma(Pass::Backward) && views[4].device_ptr(&stream).0 % 16 != 0 {
            true => {
                // SAFETY: the copy below writes all of it.
                let mut copy = unsafe { stream.alloc::<T>(views[4].len()) }?;
                stream.memcpy_dtod(&views[4], &mut copy)?;
                Some(copy)
            }
            false => None,
        };
    {
        let [(x, _a), (w, _b), (s, _c), (y_top, _d), (grad, _e)] =
            [0, 1, 2, 3, 4].map(|k| views[k].device_ptr(&stream));
        let (grad, _grad_copy) = match &grad_copy {
            Some(c) => {
                let (p, g) = c.device_ptr(&stream);
                (p, Some(g))
            }
            None => (grad, None),
        };
        // The final state's gradient; null (the kernels read zeros) when the loss does not
        // read the state.
        let (d_state, _l) = match views.get(5) {
            Some(v) => {
                let (p, g) = v.device_ptr(&stream);
                (p, Some(g))
            }
            None => (0, None),
        };
        let zero_h0 = zero_h0.as_ref().map(|z| z.device_ptr(&stream));
        let (dx_ptr, _f) = dx.device_ptr_mut(&stream);
        let (ds_ptr, _g) = ds.device_ptr_mut(&stream);
        let (dg_all, _h) = dg.device_ptr_mut(&stream);
        let (dgh_all, _q) = dgh.device_ptr_mut(&stream);
        let (dyb_all, _i) = dy_below.device_ptr_mut(&stream);
        let (dy_split, _s) = dy_split.device_ptr_mut(&stream);
        let (dg_flipped, _t) = dg_flipped.device_ptr_mut(&stream);
        let (db_parts_all, _r) = db_parts.device_ptr_mut(&stream);
        let (exchanges, _j) = r.exchanges.device_ptr_mut(&stream);
        // Direction `d`'s: its own buffers where the directions run side by side, else the one
        // set.
        let own = |d: usize| if apart { d } else { 0 };
        let dgx_all = |d: usize| exchanges + (own(d) * r.direction_stride + place.at) as u64 * elem;
        let db_parts = |d: usize| db_parts_all + (own(d) * db_parts_each * 4) as u64;
        // Layer `l`'s (direction `d`'s) gate gradients, exchange buffer and output gradient
        // (`dyb(l)`, below the top: what the layer above's input gradient fills).
        let slot = |l: usize| if wave.is_some() { l as u64 } else { 0 };
        let dg_slot = |(l, d): (usize, usize)| slot(l) + own(d) as u64;
        let dg_of = |at| dg_all + dg_slot(at) * (steps * gh) as u64 * elem;
        let dgh_of = |at| match split {
            true => dgh_all + dg_slot(at) * (steps * gh) as u64 * elem,
            false => 0,
        };
        let dgx_of = |(l, d)| dgx_all(d) + slot(l) * exchange_len as u64 * elem;
        let dyb = |l| dyb_all + slot(l) * (steps * dy_cols) as u64 * elem;
        // A bidirectional layer's direction `d`'s output gradient, split from the layer's.
        let dy_of = |d: usize| dy_split + (d * steps * hidden) as u64 * elem;
        let counter_of = |d: usize| barrier_at::<T>(dgx_all(d), exchanges_len);
        let (dw_ptr, _m) = dw.device_ptr_mut(&stream);
        let (dw_rows, _n) = dw_rows.device_ptr_mut(&stream);
        let (dx_rows, _p) = dx_rows.device_ptr_mut(&stream);
        let padded_inputs: Vec<_> = r
            .padded
            .iter()
            .map(|p| {
                p.as_ref().map(|p| {
                    (
                        p.input.device_ptr(&stream),
                        p.w_ih.device_ptr(&stream),
                        p.ld,
                    )
                })
            })
            .collect();
        let gate_ptrs = addresses(&mut r.gates, &stream);
        let cell_ptrs = addresses(&mut r.cells, &stream);
        let kept_h_prev = addresses(&mut r.h_prev, &stream);
        let below_ptrs = addresses(&mut r.below, &stream);
        let joined_ptrs = addresses(&mut r.joined, &stream);
        let transposed = addresses(&mut r.w_hh_t, &stream);
        let (masks, dropped) = match r.masks.as_mut() {
            Some((m, d)) => (Some(&*m), addresses(d, &stream)),
            None => (None, Vec::new()),
        };
        // Below the top, with dropout, the kernel takes dy (the next layer's input gradient)
        // back through this layer's mask.
        let drop_args = |(layer, dir): (usize, usize)| {
            let unit = units.index(layer, dir);
            masks::kernel_args(masks, &stream, (unit, layer, layers))
        };
        let state = |slot: usize, (layer, dir): (usize, usize)| {
            call.state_slot(slot, layer, dir).start as u64 * elem
        };
        let grad_state = |slot, layer| match d_state {
            0 => 0,
            d => d + state(slot, layer),
        };
        let bias_at = |o: Option<usize>| o.map_or(0, |o| dw_ptr + o as u64 * elem);
        // `recurrence_bwd.cu`'s `BwdArgs` of `layer` (the guard keeps its dropout offset's
        // view). The state the cell carries from t = 0 is an LSTM's c_0, a GRU's h_0; a cell
        // without c has no dc_n or dc_0.
        let has_c = plan.cell.has_c();
        let carried = usize::from(has_c);
        let args_of = |layer: usize, dir: usize| {
            let b = dims.block(layer, dir);
            let unit = units.index(layer, dir);
            let at = (layer, dir);
            let top = layer + 1 == layers;
            let (drop, guard) = drop_args(at);
            let c_slot = |base: u64| match has_c && base != 0 {
                true => base + state(1, at),
                false => 0,
            };
            let dy = match (two, top) {
                (true, _) => dy_of(dir),
                (false, true) => grad,
                (false, false) => dyb(layer),
            };
            let args = [
                w + b.w_hh as u64 * elem,
                w + b.w_ih as u64 * elem,
                gate_ptrs[unit].0,
                cell_ptrs[unit].0,
                call.initial_state(s + state(carried, at)),
                dy,
                grad_state(0, at),
                c_slot(d_state),
                dg_of(at),
                dgx_of(at),
                ds_ptr + state(0, at),
                c_slot(ds_ptr),
                // The bias gradients, written or added (`overwrite`).
                bias_at(b.b_ih),
                bias_at(b.b_hh),
                // In the wavefront an upper layer makes the layer below's output gradient.
                if layer > 0 { dyb(layer - 1) } else { 0 },
                drop[0],
                drop[1],
                drop[2],
                dgh_of(at),
            ];
            (args, guard)
        };
        if let Some(wv) = wave {
            let mut all = WaveBwdArgs::default();
            let mut guards = Vec::new();
            for layer in 0..layers {
                let (args, guard) = args_of(layer, 0);
                all.layers[layer] = args;
                guards.push(guard);
            }
            let db_add = u64::from(!overwrite);
            wv.launch(
                (&stream, &f, &plan),
                (&all, Some(db_add)),
                counter_of(0),
                seq,
            )?;
        }
        // candle's cuBLAS handle, on the device's stream.
        let main_blas = device_blas(&dev);
        // Whether the words that join a backward's groups are zero: where the forward zeroed
        // the exchange (wherever it judged them read: `forward.rs`'s `exchange_is_read`), or
        // once the first launch that reads them had them zeroed (each launch's last block sets
        // them back).
        let mut joins_zeroed = [r.exchanges_zeroed; 2];
        // Whether unit `(layer, dir)`'s weight gradients go to the side streams (beside its input
        // gradient's product on the device's, `side`): from unpadded rows only (padded ones share
        // one scratch buffer and the row kernels of the device's stream); and whether its batch
        // groups' bias parts are then summed after its kernel.
        let aside_of = |(layer, dir): (usize, usize)| {
            let b = dims.block(layer, dir);
            let unit = units.index(layer, dir);
            let padded_rows = padded_inputs[unit].is_some() || kept_h_prev.get(unit).is_some();
            let aside = weight_gradients_aside(&plan, padded_rows, (gh, b.in_size, hidden));
            let biased = b.b_ih.is_some() || b.b_hh.is_some();
            (
                aside,
                wave.is_none() && bias_parts_summed_after(&plan, aside, biased),
            )
        };
        // The recurrence's arguments of unit `at` (`persistent_bwd`'s or, on a plan whose
        // backward runs on wgmma, `wgmma_bwd`'s): `BwdArgs` without W_ih and the input gradient,
        // `db_add` after the bias gradients, the groups' words, the counter last; and the guard
        // of its dropout offset's view. Fills the words that join its groups where they are not
        // zero yet (`joins_zeroed`, per set of buffers).
        let recurrence_ptrs = |at: (usize, usize), joins_zeroed: &mut [bool; 2]| {
            let (layer, dir) = at;
            let unit = units.index(layer, dir);
            let (args, guard) = args_of(layer, dir);
            let [w_hh, _w_ih, gates, cells, c0, dy, dh_n, dc_n, dg, dgx, dh0, dc0, db_ih, db_hh, _dx, d0, d1, d2, dgh] =
                args;
            // The tile from W_hh transposed, where the plan reads it (`transposed`).
            let w_hh = match plan.backward_transposed() {
                true => transposed.get(unit).map(|t| t.0).ok_or_else(|| {
                    candle_core::Error::Msg(format!(
                        "rnn: persistent backward: the forward left no W_hh transposed for layer {layer}"
                    ))
                })?,
                false => w_hh,
            };
            let db_add = u64::from(!overwrite);
            let mut ptrs = vec![
                w_hh, gates, cells, c0, dy, dh_n, dc_n, dg, dgx, dh0, dc0, db_ih, db_hh, db_add,
                d0, d1, d2, dgh,
            ];
            // `recurrence_wgmma_bwd.cu`'s take the counter next (one batch group);
            // `persistent_bwd`'s first the groups' bias parts and the words that join them.
            let counter = counter_of(dir);
            if !plan.pass_wgmma(Pass::Backward) {
                let joins = match aside_of(at).1 {
                    true => 0,
                    false => counter + (GROUP_WORDS * plan.groups * 4) as u64,
                };
                // A forward that judged no word read left the buffer unfilled
                // (`Reserve::exchanges_zeroed`); the joining words must start at 0.
                if joins != 0 && !joins_zeroed[own(dir)] {
                    fill(&stream, joins, GROUP_WORDS * 4, 0)?;
                    joins_zeroed[own(dir)] = true;
                }
                ptrs.extend([db_parts(dir), joins]);
            }
            ptrs.push(counter);
            Ok::<_, candle_core::Error>((ptrs, guard))
        };
        for (layer, dir) in units.each(true) {
            let b = dims.block(layer, dir);
            let unit = units.index(layer, dir);
            let top = layer + 1 == layers;
            let dg_ptr = dg_of((layer, dir));
            // A bidirectional layer's output gradient, split into its directions' before the
            // first runs.
            if two && dir == 0 {
                let from = if top { grad } else { dyb(layer) };
                for d in 0..units.directions {
                    let from = (from + (d * hidden) as u64 * elem, dy_cols);
                    let n = Rows {
                        rows: steps,
                        cols: hidden,
                    };
                    rows.place(from, (dy_of(d), hidden), n, Units::order(d, batch))?;
                }
            }
            // Both weight gradients from unpadded rows go to the side streams (`aside_of`).
            let padded_input = padded_inputs[unit].as_ref();
            let kept = kept_h_prev.get(unit);
            let (aside, sum_after) = aside_of((layer, dir));
            let (db_ih, db_hh) = (bias_at(b.b_ih), bias_at(b.b_hh));
            if wave.is_none() {
                match (apart, dir) {
                    // Both directions' recurrences side by side, with the first.
                    (true, 0) => {
                        let mut launches = Vec::with_capacity(units.directions);
                        let mut guards = Vec::with_capacity(units.directions);
                        for d in 0..units.directions {
                            let (ptrs, guard) = recurrence_ptrs((layer, d), &mut joins_zeroed)?;
                            launches.push(ptrs);
                            guards.push(guard);
                        }
                        let mut sides = None;
                        let pass = (&f, &plan, Pass::Backward);
                        run_side_by_side((&stream, &mut sides), pass, launches.iter(), seq)?;
                        if let Some(fork) = sides {
                            fork.join()?;
                        }
                    }
                    (true, _) => {}
                    (false, _) => {
                        let (ptrs, _guard) = recurrence_ptrs((layer, dir), &mut joins_zeroed)?;
                        cooperative((&stream, None), &f, &plan, Pass::Backward, &ptrs, seq)?;
                    }
                }
            }
            // The reverse direction's gate gradients in time order, for the products with the
            // layer's input (its own input was the layer's flipped).
            let dg_in_time = match Units::order(dir, batch) {
                Order::Same => dg_ptr,
                flip => {
                    let n = Rows {
                        rows: steps,
                        cols: gh,
                    };
                    rows.copy_in((dg_ptr, gh), (dg_flipped, gh), n, flip)?;
                    dg_flipped
                }
            };
            // (Two directions' outputs went into `joined`, through the masks with dropout.)
            let input = match (layer, dropped.get(layer.wrapping_sub(1))) {
                (0, _) => x,
                _ if two => joined_ptrs[layer - 1].0,
                (_, Some(d)) => d.0,
                _ => below_ptrs[layer - 1].0,
            };
            // The unit's outputs, in the order it ran.
            let y = match (two, top) {
                (true, _) => below_ptrs[unit].0,
                (false, true) => y_top,
                (false, false) => below_ptrs[layer].0,
            };
            // The layer's input in padded rows, in time order: the forward's copy for direction 0.
            let padded_in_time = padded_inputs[units.index(layer, 0)].as_ref();
            let dw_at = |o: usize| dw_ptr + o as u64 * elem;
            let dgt = Mat::new(dg_in_time, gh).t();
            // The recurrent weight's gradient takes the recurrent side's gate gradients.
            let dgh_ptr = if split { dgh_of((layer, dir)) } else { dg_ptr };
            let dght = Mat::new(dgh_ptr, gh).t();
            // The first product into a weight's gradient writes it or adds to it (`overwrite`),
            // a second adds.
            let first = if overwrite { Out::Elem } else { Out::AddElem };
            let product = |blas, (m, n, k), a, bm, c, out| {
                // SAFETY: every address is inside its live buffer, sized by `call` and `dims`.
                unsafe { matmul(blas, plan.elem, (m, n, k), a, bm, c, out) }
            };
            // A weight gradient made in padded rows, then copied or added into place.
            let padded_product = |g: Mat, (k, ld): (usize, usize), a: u64, dw: u64, cols: usize| {
                // SAFETY: `a` holds `k` rows of `ld`, `dw_rows` `gh` rows of `ld`.
                unsafe {
                    let a = Mat::new(a, ld);
                    matmul(main_blas, plan.elem, (gh, ld, k), g, a, dw_rows, Out::Elem)?
                };
                let n = Rows { rows: gh, cols };
                match overwrite {
                    true => rows.copy((dw_rows, ld), (dw, cols), n),
                    false => rows.add((dw_rows, ld), (dw, cols), n),
                }
            };
            // dW_hh: h_{t-1} is y[t-1] for t >= 1 and h_0 for t = 0 (none to add for a zero
            // h_0 after other steps).
            let h0 = match (call.zero_state, &zero_h0) {
                (false, _) => Some(s + state(0, (layer, dir))),
                (true, Some((z, _))) => Some(*z),
                (true, None) => None,
            };
            // dW_hh's products, on `blas`'s stream.
            let recurrent_weight = |blas| -> Result<()> {
                if seq > 1 {
                    let dg1 = Mat::new(dgh_ptr + (batch * gh) as u64 * elem, gh).t();
                    let y = Mat::new(y, hidden);
                    product(
                        blas,
                        (gh, hidden, steps - batch),
                        dg1,
                        y,
                        dw_at(b.w_hh),
                        first,
                    )?;
                }
                if let Some(h0) = h0 {
                    let out = if seq > 1 { Out::AddElem } else { first };
                    let h0 = Mat::new(h0, hidden);
                    product(blas, (gh, hidden, batch), dght, h0, dw_at(b.w_hh), out)?;
                }
                Ok(())
            };
            let input_weight = |blas| {
                let input = Mat::new(input, b.in_size);
                product(
                    blas,
                    (gh, b.in_size, steps),
                    dgt,
                    input,
                    dw_at(b.w_ih),
                    first,
                )
            };
            let fork = match aside {
                true => Fork::new(&stream)?,
                false => None,
            };
            let (ih_blas, hh_blas) = fork
                .as_ref()
                .map_or((main_blas, main_blas), |f| (f.blas(0), f.blas(1)));
            match padded_in_time {
                Some(((pi, _), _, ld)) => {
                    padded_product(dgt, (steps, *ld), *pi, dw_at(b.w_ih), b.in_size)?
                }
                None => input_weight(ih_blas)?,
            }
            // With padded rows, the forward kept them (`Reserve::h_prev`).
            match kept {
                Some((kept, _)) => {
                    padded_product(dght, (steps, padded(hidden)), *kept, dw_at(b.w_hh), hidden)?
                }
                None => recurrent_weight(hh_blas)?,
            }
            // The first layer's input gradient only when x tracks one; the wavefront made the
            // others'.
            if !((layer == 0 && !i.input_grad) || (layer > 0 && wave.is_some())) {
                let dinput = if layer == 0 { dx_ptr } else { dyb(layer - 1) };
                // A bidirectional layer's reverse direction adds its input gradient to the
                // forward one's.
                let adds = dir > 0;
                // The first `cols` columns of dg · W_ih into `out`, rows of `cols`.
                let input_grad = |(w_ih, ld): (u64, usize), out: (u64, Out), cols: usize| {
                    // SAFETY: as above; `w_ih` holds `gh` rows of `ld` >= `cols`, `out` `steps`
                    // rows of `cols`.
                    unsafe {
                        let dg = Mat::new(dg_in_time, gh);
                        let w_ih = Mat::new(w_ih, ld);
                        matmul(
                            main_blas,
                            plan.elem,
                            (steps, cols, gh),
                            dg,
                            w_ih,
                            out.0,
                            out.1,
                        )
                    }
                };
                match padded_input {
                    Some((_, (pw, _), ld)) => {
                        input_grad((*pw, *ld), (dx_rows, Out::Elem), *ld)?;
                        let n = Rows {
                            rows: steps,
                            cols: b.in_size,
                        };
                        let (from, to) = ((dx_rows, *ld), (dinput, b.in_size));
                        match adds {
                            true => rows.add(from, to, n)?,
                            false => rows.copy(from, to, n)?,
                        }
                    }
                    None => {
                        let out = (dinput, if adds { Out::AddElem } else { Out::Elem });
                        input_grad((w + b.w_ih as u64 * elem, b.in_size), out, b.in_size)?
                    }
                }
            }
            // On the device's stream after the input gradient's product, so beside the side
            // streams' products.
            if sum_after {
                sum_bias_parts(
                    (&dev, &stream, &plan),
                    db_parts(dir),
                    [db_ih, db_hh],
                    (gh, !overwrite),
                )?;
            }
            // The next layer's recurrence overwrites the gate gradients that the side streams
            // read.
            if let Some(fork) = fork {
                fork.join()?;
            }
        }
    }
    let wrap = |slice: CudaSlice<T>, n: usize| {
        let storage = Storage::Cuda(CudaStorage::wrap_cuda_slice(slice, dev.clone()));
        Tensor::from_storage(storage, (n,), BackpropOp::none(), false)
    };
    let dw = own.map(|d| wrap(d, dims.weight_count()));
    let ds = i.state_grad.then(|| wrap(ds, call.state_len()));
    let dx = i.input_grad.then(|| wrap(dx, call.input_len()));
    Ok((dx, dw, ds))
}

/// `recurrence_bwd.cu`'s `rnn_sum_bias_parts` on `stream`: the batch groups' bias gradients
/// that `plan`'s backward kernel left in `db_parts`, added in group order into `db`
/// (`[db_ih, db_hh]`, `gh` elements each, or 0 for none), written over them or, with `add`,
/// added to them.
fn sum_bias_parts(
    (dev, stream, plan): (&CudaDevice, &Arc<CudaStream>, &Plan),
    db_parts: u64,
    [db_ih, db_hh]: [u64; 2],
    (gh, add): (usize, bool),
) -> Result<()> {
    let f = plan.function(dev, Pass::Backward, "rnn_sum_bias_parts")?;
    let threads = 128;
    let config = LaunchConfig {
        grid_dim: ((gh as u32).div_ceil(threads), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let add = u64::from(add);
    let mut launch = stream.launch_builder(&f);
    launch.arg(&db_parts).arg(&db_ih).arg(&db_hh).arg(&add);
    // SAFETY: `db_parts` holds every group's slots, which the layer's kernel wrote before this
    // launch on the same stream; the bias gradients hold `gh` elements each, or are null.
    unsafe { launch.launch(config) }.map_err(|e| {
        candle_core::Error::Msg(format!("rnn: persistent kernel rnn_sum_bias_parts: {e}"))
    })?;
    Ok(())
}
