//! The forward of a call on the persistent kernel, layer by layer: the input projection of
//! all steps (one GEMM), then the recurrence (one cooperative launch). In training mode every
//! layer keeps its gate activations, cell states and output for the backward ([`Reserve`]).

use super::f16_scaled::ScaledOperands;
use super::gemm::{device_blas, matmul, Mat, Out};
use super::kernel::Limits;
use super::kernel::Pass;
use super::launch::{Launch, GROUP_WORDS, MAX_GROUPS};
use super::masks::{self, Masks};
use super::padded::{pad_input, padded, pads, Order, PaddedInput, RowKernels, Rows};
use super::plan::Plan;
use super::side::{bias_parts_summed_after, weight_gradients_aside, Fork};
use super::transposed::transpose_recurrent_weights;
use super::tuning::WaveTuning;
use super::units::{Units, REVERSE_SIDE};
use super::wave::{Wave, WaveArgs};
use super::wgmma_wave::WgmmaWave;
use super::Elem;
use crate::backend::{view, Operand, OutputBuffers, Outputs};
use crate::call::Call;
use crate::layout::RnnDims;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop,
};
use candle_core::Result;
use std::sync::Arc;

/// What a training forward keeps for its backward, per layer (per unit, `Units`, where it says
/// so: a bidirectional layer's directions).
pub(super) struct Reserve<T> {
    pub plan: Plan,
    /// Per unit, gate activations (an LSTM's `i, f, g, o`), f32 `[T, B, GATES * H]`.
    pub gates: Vec<CudaSlice<f32>>,
    /// Per unit, what the cell saves for the backward (an LSTM's cell states), f32
    /// `[T, B, Cell::saved(), H]`.
    pub cells: Vec<CudaSlice<f32>>,
    /// Outputs of the layers below the top one, `[T, B, H]` (the top's is the op's output); of
    /// a bidirectional call, every unit's own (`Units::outputs`), the reverse directions' in
    /// their flipped time.
    pub below: Vec<CudaSlice<T>>,
    /// A bidirectional call's layer outputs below the top, `[T, B, 2H]`: the inputs of the
    /// layers above.
    pub joined: Vec<CudaSlice<T>>,
    /// With inter-layer dropout: the masks, and the outputs of the units below the top layer
    /// after dropout (one direction: the inputs of the layers above the first; two: placed into
    /// `joined`).
    pub masks: Option<(Masks, Vec<CudaSlice<T>>)>,
    /// Per unit, its input (a reverse direction's flipped in time) and input weights with
    /// padded rows, where its input size needs them (`padded`).
    pub padded: Vec<Option<PaddedInput<T>>>,
    /// Where the hidden size needs padding: per unit, h_0 and its outputs in padded rows,
    /// `[T + 1, B, padded(H)]` (`recurrence_fwd.cu`'s `yp`), which are the backward's h_{t-1}
    /// for the recurrent weight's gradient.
    pub h_prev: Vec<CudaSlice<T>>,
    /// The forward's exchange buffer, and behind it the backward's, zeroed with it (one fill a
    /// call, not one a pass) unless no pass reads it ([`Reserve::exchanges_zeroed`]).
    pub exchanges: CudaSlice<T>,
    /// Elements of `exchanges` from one direction's buffers (the forward's and the backward's,
    /// each with its barrier) to the other's, where a bidirectional layer's directions run side
    /// by side in either pass (`Units::side_by_side`); else 0, one set of buffers for all.
    pub direction_stride: usize,
    /// Whether the backward runs a bidirectional layer's directions side by side (in buffers
    /// `direction_stride` apart).
    pub backward_side_by_side: bool,
    /// Whether `exchanges` was zeroed: not where both passes push what a step exchanges, layer
    /// by layer, and no layer's batch groups join at words (`exchange_is_read`; should a
    /// backward launch read those words anyway, the backward zeroes them first).
    pub exchanges_zeroed: bool,
    /// The backward's exchange buffers in `exchanges` (see [`BackwardExchange`]).
    pub backward_exchange: BackwardExchange,
    /// The backward's every-layer launch, where it runs as one (`wave`), decided with the
    /// exchange buffers it sizes.
    pub backward_wave: Option<Wave>,
    /// Per unit, W_hh transposed for the backward's tile, where it runs layer by layer on a
    /// plan that reads it (`transposed`); else empty.
    pub w_hh_t: Vec<CudaSlice<T>>,
}

/// Where the backward's exchange buffers lie in [`Reserve::exchanges`], and their size.
#[derive(Clone, Copy, Debug)]
pub(super) struct BackwardExchange {
    /// The first element, past the forward's buffer and its barrier.
    pub at: usize,
    /// Elements of one layer's buffer (`[2][B][gpad]`).
    pub layer_len: usize,
    /// Elements of every layer's buffers (one layer's, or each layer's in the wavefront); the
    /// barrier follows them.
    pub len: usize,
}

impl BackwardExchange {
    /// The backward's exchange buffers of a call of `batch` on `plan`, for `layers` layers
    /// whose backward runs as one wavefront (`wave`) or layer by layer (one buffer serving
    /// each in turn), placed from element `at`.
    fn new(plan: &Plan, (batch, layers): (usize, usize), wave: bool, at: usize) -> Self {
        // (The kernels count its columns in 16-bit words.)
        let cols = if wave { Wave::gpad(plan) } else { plan.gpad() };
        let layer_len = 2 * batch * cols / plan.elem.words();
        let len = if wave { layers } else { 1 } * layer_len;
        BackwardExchange { at, layer_len, len }
    }

    /// Elements of `T` from the start of [`Reserve::exchanges`] to the end of the backward's
    /// barrier.
    fn end<T>(&self) -> usize {
        self.at + with_barrier::<T>(self.len)
    }
}

/// Launches `f`, `plan`'s kernel of `pass`, on every block at once (its grid barrier needs
/// them all resident), with the device addresses `ptrs` and the step count as arguments, on
/// `stream` or on the side stream `side` (of a `side::Fork` of `stream`).
pub(super) fn cooperative(
    (stream, side): (&CudaStream, Option<sys::CUstream>),
    f: &CudaFunction,
    plan: &Plan,
    pass: Pass,
    ptrs: &[u64],
    seq: usize,
) -> Result<()> {
    let launch = plan.launch(stream, f, pass);
    Launch { side, ..launch }.cooperative(ptrs, seq as i32)
}

/// Launches a bidirectional layer's recurrences of `pass` (`launches`: the kernel's arguments of
/// each direction in turn) side by side: the reverse one's on a side stream ([`REVERSE_SIDE`]) of
/// `sides` (forked from `stream` here, or forked again to follow `stream`'s work so far), the
/// forward one's on `stream`, which then waits for both. On `stream` one after the other where
/// the device has no side streams yet and `stream` is being captured.
pub(super) fn run_side_by_side<'a>(
    (stream, sides): (&'a Arc<CudaStream>, &mut Option<Fork<'a>>),
    (f, plan, pass): (&CudaFunction, &Plan, Pass),
    launches: impl Iterator<Item = impl AsRef<[u64]>>,
    seq: usize,
) -> Result<()> {
    match sides {
        Some(fork) => fork.follow()?,
        None => *sides = Fork::new(stream)?,
    }
    let launches: Vec<_> = launches.collect();
    for (dir, ptrs) in launches.iter().enumerate().rev() {
        let side = match (dir, sides.as_ref()) {
            (0, _) | (_, None) => None,
            (_, Some(fork)) => Some(fork.stream(REVERSE_SIDE)),
        };
        cooperative((stream, side), f, plan, pass, ptrs.as_ref(), seq)?;
    }
    match sides {
        Some(fork) => fork.meet(),
        None => Ok(()),
    }
}

/// The device addresses of `bufs`, held for writing on `stream` while the guards live.
pub(super) fn addresses<'a, T>(
    bufs: &'a mut [CudaSlice<T>],
    stream: &'a CudaStream,
) -> Vec<(u64, SyncOnDrop<'a>)> {
    bufs.iter_mut().map(|b| b.device_ptr_mut(stream)).collect()
}

/// The grid barrier's u32 counters (common.cuh's `grid_leave`, two a batch group, then two that
/// join the groups: `group_counter`), in lines of their own behind an exchange buffer of `len` elements of `T` (the blocks poll the counter
/// while others write the buffer): zeroed with it once per call, and set back to 0 by the last
/// block out of each launch, so that no launch needs a fill of its own before it (a memset node,
/// and the gap it left before every persistent launch: results/2026-11-26-h200-barrier-leave/).
/// Returns the elements of `T` to allocate for the buffer and the barrier.
pub(super) fn with_barrier<T>(len: usize) -> usize {
    (barrier_offset::<T>(len) + BARRIER_LINE) / std::mem::size_of::<T>()
}

/// Whether a call on `plan` reads its exchange buffer or the words behind it, so that they must
/// start zeroed: not where every pass it runs pushes what a step exchanges into its cluster's
/// shared memory, layer by layer, and meets at no barrier in memory (a fill is a node of its own
/// in a graph, about 1.25 µs: results/2026-11-30-h200-call-trace/). `forward_wave`: the forward
/// runs as a wavefront; `backward`: none in inference, else whether the backward runs as one and
/// whether any layer's batch groups join at the words behind their barriers
/// (`side::bias_parts_summed_after`; a fill the backward made itself, between the passes, took
/// 1-2% longer than the forward's: results/2026-12-01-h200-unzeroed-exchange/).
fn exchange_is_read(plan: &Plan, forward_wave: bool, backward: Option<(bool, bool)>) -> bool {
    let pushed = |pass, wave: bool| !wave && plan.pass_push(pass);
    let backward_unread =
        backward.is_none_or(|(wave, joins)| pushed(Pass::Backward, wave) && !joins);
    !(pushed(Pass::Forward, forward_wave) && backward_unread)
}

/// The address of the barrier behind the exchange buffer at `base` of `len` elements of `T`.
pub(super) fn barrier_at<T>(base: u64, len: usize) -> u64 {
    base + barrier_offset::<T>(len) as u64
}

/// Bytes of the barrier's words: each batch group's two ([`GROUP_WORDS`] apart), then the two
/// that join the groups, in whole 128-byte lines.
const BARRIER_LINE: usize = ((MAX_GROUPS + 1) * GROUP_WORDS * 4).next_multiple_of(128);

fn barrier_offset<T>(len: usize) -> usize {
    (len * std::mem::size_of::<T>()).next_multiple_of(BARRIER_LINE)
}

/// Allocates `n` buffers of `len` elements that a kernel or GEMM writes before any read.
fn buffers<T: Elem>(stream: &Arc<CudaStream>, n: usize, len: usize) -> Result<Vec<CudaSlice<T>>> {
    // SAFETY: see above.
    (0..n)
        .map(|_| Ok(unsafe { stream.alloc::<T>(len) }?))
        .collect()
}

/// The outputs of `call` on `plan`'s kernels (all layers as a wavefront where `wave` allows it
/// and they fit; a bidirectional layer's directions side by side where `side_by_side` allows it
/// and they fit): the packed `[y | h_n | c_n]`, or with `state_apart` `y` and the final state
/// apart; and in training mode the reserve. `masks` (in training mode only) drop units between
/// layers.
pub(super) fn forward<T: Elem>(
    dims: &RnnDims,
    (plan, wave_tuning, side_by_side): (Plan, WaveTuning, bool),
    (call, state_apart): (&Call, bool),
    (train, masks): (bool, Option<Masks>),
    [(xs, xl), (ws, wl), (ss, sl)]: [Operand; 3],
) -> Result<(Outputs, Option<Reserve<T>>)> {
    let dev = xs.device().clone();
    let stream = dev.cuda_stream();
    let (x, w, s) = (
        view::<T>(xs, xl, "x")?,
        view::<T>(ws, wl, "weight")?,
        view::<T>(ss, sl, "state")?,
    );
    let (seq, batch, hidden, layers) = (call.seq, call.batch, dims.hidden_size, dims.num_layers);
    let (steps, cell) = (seq * batch, plan.cell);
    let gh = cell.gates() * hidden;
    let elem = std::mem::size_of::<T>() as u64;
    // A bidirectional layer's directions are units of their own (`Units`).
    let units = Units::of(dims, train);
    // Every layer at once, where asked for and it fits (`wave`, or on wgmma `wgmma_wave`), else
    // layer by layer (always for two directions).
    let one_way = !units.bidirectional();
    let wave = Wave::new(&dev, &plan, (layers, Pass::Forward), wave_tuning).filter(|_| one_way);
    let wgmma_wave = WgmmaWave::new(&dev, &plan, layers, wave_tuning).filter(|_| one_way);
    let f = match (wave, wgmma_wave) {
        (Some(w), _) => w.kernel(&dev, &plan)?,
        (None, Some(w)) => w.kernel(&dev, &plan)?,
        (None, None) => plan.kernel(&dev, Pass::Forward)?,
    };
    // Each pass's directions side by side where they may and both grids fit at once
    // (`Units::side_by_side`), each in exchange buffers of its own.
    let sms = Limits::of(&dev).map_or(0, |l| l.sms);
    let fit_twice = |f: &CudaFunction, pass| plan.launch(&stream, f, pass).fits_twice(sms);
    let apart_forward = match units.side_by_side(&plan, Pass::Forward, side_by_side) {
        true => fit_twice(&f, Pass::Forward)?,
        false => false,
    };
    let apart_backward = match train && units.side_by_side(&plan, Pass::Backward, side_by_side) {
        true => fit_twice(&plan.kernel(&dev, Pass::Backward)?, Pass::Backward)?,
        false => false,
    };
    // Inference layer by layer reuses one gate buffer and one buffer between layers (a layer's
    // GEMM reads its input before its kernel overwrites it); training and the wgmma wavefront
    // (whose layers run at once) keep them all.
    let kept = |n: usize| match train || wgmma_wave.is_some() {
        true => n,
        false => n.min(1),
    };
    // A unit's own buffers (its input projection's): in inference one serves every unit in turn,
    // or one each direction where the directions run side by side.
    let kept_units = match (train || wgmma_wave.is_some(), apart_forward) {
        (true, _) => units.count,
        (false, true) => units.directions,
        (false, false) => 1,
    };
    let mut outputs = OutputBuffers::new(call, state_apart, |len| {
        Ok(buffers::<T>(&stream, 1, len)?.remove(0))
    })?;
    // A recurrence that makes its input projection itself (`Plan::input`, one layer) reads no
    // gate buffer, and writes one only in training. An inference forward layer by layer reads
    // its projection in half elements (`Plan::half_projection`; the wavefront's is f32), from
    // one buffer that every layer's GEMM writes in turn (the wgmma wavefront's too, one a layer:
    // the upper ones' its projection blocks write).
    let folded = plan.pass_input(Pass::Forward).is_some();
    let half_xg = plan.half_projection && wave.is_none() && !folded;
    let n_gates = if (folded || half_xg) && !train {
        0
    } else {
        kept_units
    };
    let mut gates = buffers::<f32>(&stream, n_gates, steps * gh)?;
    let n_projection = if half_xg { kept_units } else { 0 };
    let mut projection = buffers::<T>(&stream, n_projection, steps * gh)?;
    let saved = steps * cell.saved() * hidden;
    let mut cells = buffers::<f32>(&stream, if train { units.count } else { 0 }, saved)?;
    // One direction: the outputs of the layers below the top (the top's is the op's). Two: each
    // unit's own (`Units::outputs`), which go into their columns of the layer's output, and the
    // layers' outputs below the top, `[T, B, 2H]`.
    let n_below = match units.bidirectional() {
        true => units.outputs,
        false => kept(layers - 1),
    };
    let mut below = buffers::<T>(&stream, n_below, steps * hidden)?;
    let n_joined = if one_way { 0 } else { kept(layers - 1) };
    let mut joined = buffers::<T>(&stream, n_joined, steps * 2 * hidden)?;
    let n_dropped = if masks.is_some() {
        units.index(layers - 1, 0)
    } else {
        0
    };
    let mut dropped = buffers::<T>(&stream, n_dropped, steps * hidden)?;
    // A reverse direction's input, flipped in time, where no padded copy holds it (one buffer
    // that each layer's reverse direction reads in turn; the backward needs none, `backward.rs`).
    let widest_input = (0..layers).map(|l| dims.block(l, 0).in_size).max();
    let n_flipped = if one_way { 0 } else { 1 };
    let flipped_len = steps * widest_input.unwrap_or(0);
    let mut flipped = buffers::<T>(&stream, n_flipped, flipped_len)?;
    // Zeroed: the kernel writes every row's first H columns (h_0's only when it is given).
    let n_h_prev = match train && pads(&plan, hidden) {
        true => units.count,
        false => 0,
    };
    let mut h_prev = (0..n_h_prev)
        .map(|_| Ok(stream.alloc_zeros::<T>((seq + 1) * batch * padded(hidden))?))
        .collect::<Result<Vec<_>>>()?;
    // h_t for the other blocks, two slots taken in turn, rows padded to whole K steps; the
    // padding stays zero. The grid barrier behind it. (The kernels count its columns in 16-bit
    // words: `Operands::words` a `T`.)
    let cols = match (wave, wgmma_wave) {
        (Some(w), _) => w.exchange_cols(&plan),
        (None, Some(w)) => w.exchange_cols(&plan),
        (None, None) => plan.kpad(),
    };
    let exchange_len = 2 * batch * cols / plan.elem.words();
    // In training the backward's exchange buffers follow, zeroed in the same fill.
    let backward = train.then(|| {
        let wave =
            Wave::new(&dev, &plan, (layers, Pass::Backward), wave_tuning).filter(|_| one_way);
        let at = with_barrier::<T>(exchange_len);
        (
            BackwardExchange::new(&plan, (batch, layers), wave.is_some(), at),
            wave,
        )
    });
    let one_direction_len = match backward {
        Some((b, _)) => b.end::<T>(),
        None => with_barrier::<T>(exchange_len),
    };
    // A whole number of the barrier's lines, so each direction's barrier keeps lines of its own.
    let direction_stride = match apart_forward || apart_backward {
        true => one_direction_len,
        false => 0,
    };
    let exchanges_len = one_direction_len + direction_stride;
    // In training, whether a layer's backward groups join at words (its padded rows as this
    // pass keeps them, or where its input needs padding and a folded or wavefront projection
    // kept none).
    let groups_join = || {
        (0..layers).any(|layer| {
            let b = dims.block(layer, 0);
            let padded_rows = pads(&plan, b.in_size) || pads(&plan, hidden);
            let aside = weight_gradients_aside(&plan, padded_rows, (gh, b.in_size, hidden));
            let biased = b.b_ih.is_some() || b.b_hh.is_some();
            plan.pass_groups(Pass::Backward) > 1 && !bias_parts_summed_after(&plan, aside, biased)
        })
    };
    let backward_reads = backward.as_ref().map(|(_, w)| (w.is_some(), groups_join()));
    let unread = !exchange_is_read(&plan, wave.is_some(), backward_reads);
    let mut exchange = match unread {
        // SAFETY: nothing reads it (`recurrence_fwd.cu`'s and `recurrence_bwd.cu`'s PUSH, no
        // groups joined at words; the backward zeroes those itself where a launch would read).
        true => unsafe { stream.alloc::<T>(exchanges_len) }?,
        false => stream.alloc_zeros::<T>(exchanges_len)?,
    };
    // W_hh transposed for each layer's backward, where it runs layer by layer on a plan that
    // reads it (`transposed`): written by each layer's launch where the plan's forward does it
    // (`forward_transposes`), else made beside this pass's launches.
    let transposed_fill = matches!(backward, Some((_, None))) && plan.backward_transposed();
    let n_transposed = if transposed_fill { units.count } else { 0 };
    let mut w_hh_t = buffers::<T>(&stream, n_transposed, hidden * plan.transposed_pitch())?;
    let in_launch = wave.is_none() && plan.forward_transposes;
    let rows = RowKernels {
        dev: &dev,
        stream: &stream,
        plan: &plan,
        pass: Pass::Forward,
    };
    let mut padded = Vec::with_capacity(units.count);
    {
        let (x_ptr, _xg) = x.device_ptr(&stream);
        let (w_ptr, _wg) = w.device_ptr(&stream);
        let (s_ptr, _sg) = s.device_ptr(&stream);
        let aside = if in_launch { 0 } else { n_transposed };
        let w_hh: Vec<u64> = (0..aside)
            .map(|u| w_ptr + units.block(dims, u).w_hh as u64 * elem)
            .collect();
        // The side streams: the transposes' (kept until the launches below are queued), and a
        // reverse direction's recurrence where the directions run side by side.
        let mut sides = transpose_recurrent_weights((&dev, &stream, &plan), &w_hh, &mut w_hh_t)?;
        let w_t_ptrs = match in_launch {
            true => addresses(&mut w_hh_t, &stream),
            false => Vec::new(),
        };
        let ([out_ptr, state_ptr], _og) = outputs.addresses(&stream, call);
        let (hx, _hg) = exchange.device_ptr_mut(&stream);
        let counter_ptr = barrier_at::<T>(hx, exchange_len);
        // Direction `dir`'s exchange buffer and barrier (one for both unless they run side by
        // side).
        let hx_of =
            |dir: usize| hx + (usize::from(apart_forward) * dir * direction_stride) as u64 * elem;
        let gate_ptrs = addresses(&mut gates, &stream);
        let projection_ptr = addresses(&mut projection, &stream);
        let cell_ptrs = addresses(&mut cells, &stream);
        let below_ptrs = addresses(&mut below, &stream);
        let joined_ptrs = addresses(&mut joined, &stream);
        let flipped_ptrs = addresses(&mut flipped, &stream);
        let dropped_ptrs = addresses(&mut dropped, &stream);
        let h_prev_ptrs = addresses(&mut h_prev, &stream);
        // Layer i's of the buffers kept (the one buffer where inference shares it).
        let pick = |v: &Vec<(u64, _)>, i: usize| v[i.min(v.len() - 1)].0;
        // Unit u's of the buffers kept per unit (`kept_units`: every unit's, one a direction, or
        // one for all).
        let per_unit = |v: &Vec<(u64, _)>, u: usize| v[u % v.len()].0;
        let state_at = |slot: usize, (layer, dir): (usize, usize)| {
            call.state_slot(slot, layer, dir).start as u64
        };
        // Two directions' outputs go into `joined` (through the masks, with dropout).
        let input_of = |layer: usize| match (layer, dropped_ptrs.get(layer.wrapping_sub(1))) {
            (0, _) => x_ptr,
            _ if units.bidirectional() => pick(&joined_ptrs, layer - 1),
            (_, Some(d)) => d.0,
            _ => pick(&below_ptrs, layer - 1),
        };
        let mut wave_args = WaveArgs::default();
        let mut drop_guards = Vec::new();
        // Inputs copied to 16-byte alignment, alive until the launches that read them are
        // queued; and a layer's launches held back until both its directions' are ready, where
        // they run side by side (`apart_forward`).
        let mut aligned_copies = Vec::new();
        let mut held = Vec::new();
        // An f32 layer's inference forward takes W_hh and h_0 as scaled f16 rows
        // (`Plan::scaled`).
        let mut scaled = match plan.scaled {
            true => Some(ScaledOperands::new(&dev, &stream, &plan)?),
            false => None,
        };
        for (layer, dir) in units.each(false) {
            let b = dims.block(layer, dir);
            let unit = units.index(layer, dir);
            // The reverse direction reads the layer's input flipped in time: in padded rows where
            // its input needs them (`pad_input` flips it), else in `flipped`.
            let order = Units::order(dir, batch);
            let input = match (order, pads(&plan, b.in_size) && !folded) {
                (Order::Same, _) | (_, true) => input_of(layer),
                (flip, false) => {
                    let at = flipped_ptrs[0].0;
                    let n = Rows {
                        rows: steps,
                        cols: b.in_size,
                    };
                    rows.copy_in((input_of(layer), b.in_size), (at, b.in_size), n, flip)?;
                    at
                }
            };
            // In inference the wavefront's layers below the top pass their outputs on through
            // the exchange buffer only (they would share the one `below` buffer at once). Two
            // directions write their own, then the layer's (below).
            let y = match (layer + 1 == layers, wave.is_some() && !train) {
                _ if units.bidirectional() => below_ptrs[units.output(layer, dir)].0,
                (true, _) => out_ptr,
                (false, true) => 0,
                (false, false) => pick(&below_ptrs, layer),
            };
            let xg = match (projection_ptr.is_empty(), n_gates) {
                (false, _) => per_unit(&projection_ptr, unit),
                (true, 0) => 0,
                (true, _) => per_unit(&gate_ptrs, unit),
            };
            let xg_type = if half_xg { Out::Elem } else { Out::F32 };
            let at = |o: usize| w_ptr + o as u64 * elem;
            let project = |(input, w_ih): (u64, u64), ld: usize| {
                // SAFETY: every address is inside its live buffer, sized by `call` and `dims`
                // (padded operands: rows of `ld`, zeros past the input size).
                unsafe {
                    matmul(
                        device_blas(&dev),
                        plan.elem,
                        (steps, gh, ld),
                        Mat::new(input, ld),
                        Mat::new(w_ih, ld).t(),
                        xg,
                        xg_type,
                    )
                }
            };
            // Where the recurrence makes the input projection itself (one layer, `Plan::input`),
            // it reads the input in 16-byte copies: an input that starts off that alignment (a
            // view into a larger buffer) is copied first.
            let mut folded_input = None;
            if folded {
                folded_input = Some(match input % 16 {
                    0 => (input, None),
                    _ => {
                        let mut copy = buffers::<T>(&stream, 1, steps * b.in_size)?.remove(0);
                        let at = copy.device_ptr_mut(&stream).0;
                        let n = Rows {
                            rows: steps,
                            cols: b.in_size,
                        };
                        rows.copy((input, b.in_size), (at, b.in_size), n)?;
                        (at, Some(copy))
                    }
                });
                padded.push(None);
            } else if (wave.is_some() || wgmma_wave.is_some()) && layer > 0 {
                // Its input's product is made in the launch; the backward's padded operands
                // come after it.
                padded.push(None);
            } else if pads(&plan, b.in_size) {
                let sizes = (steps, gh, b.in_size);
                let p = pad_input::<T>(&rows, (input, at(b.w_ih)), sizes, order)?;
                {
                    let (pi, _a) = p.input.device_ptr(&stream);
                    let (pw, _b) = p.w_ih.device_ptr(&stream);
                    project((pi, pw), p.ld)?;
                }
                padded.push(Some(p));
            } else {
                project((input, at(b.w_ih)), b.in_size)?;
                padded.push(None);
            }
            let opt = |o: Option<usize>| o.map_or(0, at);
            let (drop, guard) = masks::kernel_args(masks.as_ref(), &stream, (unit, layer, layers));
            drop_guards.push(guard);
            let packed = |slot| state_ptr + state_at(slot, (layer, dir)) * elem;
            // Null (zeros) for a call given no initial state.
            let initial = |slot| call.initial_state(s_ptr + state_at(slot, (layer, dir)) * elem);
            let h0 = initial(0);
            // A cell without c carries h from where an LSTM's c starts, and writes no c_n.
            let (c0, c_n) = match cell.has_c() {
                true => (initial(1), packed(1)),
                false => (h0, 0),
            };
            let args = [
                at(b.w_ih),
                at(b.w_hh),
                xg,
                opt(b.b_ih),
                opt(b.b_hh),
                h0,
                c0,
                y,
                packed(0),
                c_n,
                cell_ptrs.get(unit).map_or(0, |p| p.0),
                h_prev_ptrs.get(unit).map_or(0, |p| p.0),
                // With dropout after this layer, the kernel also writes y through the mask,
                // the next layer's input.
                dropped_ptrs.get(unit).map_or(0, |p| p.0),
                drop[0],
                drop[1],
                drop[2],
            ];
            if wave.is_some() || wgmma_wave.is_some() {
                wave_args.layers[layer] = args;
                continue;
            }
            // `persistent_fwd`'s arguments: `LayerArgs` without W_ih, the exchange buffer
            // after the final state, then W_ih and the input where the recurrence makes the
            // input projection (else null), W_hh transposed where it writes it (else null),
            // the counter last.
            let [w_ih, w_hh, xg, b_ih, b_hh, h0, c0, y, h_n, c_n, save, yp, dropped, d0, d1, d2] =
                args;
            let (w_ih, folded_x) = match folded_input {
                Some((x, copy)) => {
                    aligned_copies.extend(copy);
                    (w_ih, x)
                }
                None => (0, 0),
            };
            // The scaled f16 rows take the places of W_hh and h_0, their scales those of W_ih
            // and the folded input (which no scaled forward reads).
            let (w_hh, h0, w_ih, folded_x) = match scaled.as_mut() {
                Some(s) => {
                    let rows = s.scale(&stream, w_hh, h0)?;
                    (rows.w_hh, rows.h0, rows.w_scale, rows.h_scale)
                }
                None => (w_hh, h0, w_ih, folded_x),
            };
            let ptrs = [
                w_hh,
                xg,
                b_ih,
                b_hh,
                h0,
                c0,
                y,
                h_n,
                c_n,
                hx_of(dir),
                save,
                yp,
                dropped,
                d0,
                d1,
                d2,
                w_ih,
                folded_x,
                w_t_ptrs.get(unit).map_or(0, |p| p.0),
                barrier_at::<T>(hx_of(dir), exchange_len),
            ];
            match apart_forward {
                true => held.push(ptrs),
                false => cooperative((&stream, None), &f, &plan, Pass::Forward, &ptrs, seq)?,
            }
            // A bidirectional layer's output: each direction's in its columns, the reverse
            // one's flipped back (the op's output at the top, else the next layer's input).
            if units.bidirectional() && dir + 1 == units.directions {
                if apart_forward {
                    run_side_by_side(
                        (&stream, &mut sides),
                        (&f, &plan, Pass::Forward),
                        held.drain(..),
                        seq,
                    )?;
                }
                let to = match layer + 1 == layers {
                    true => out_ptr,
                    false => pick(&joined_ptrs, layer),
                };
                for d in 0..units.directions {
                    // Through the masks below the top, with dropout.
                    let from = match dropped_ptrs.get(units.index(layer, d)) {
                        Some(dropped) => dropped.0,
                        None => below_ptrs[units.output(layer, d)].0,
                    };
                    let n = Rows {
                        rows: steps,
                        cols: hidden,
                    };
                    let to = (to + (d * hidden) as u64 * elem, 2 * hidden);
                    rows.place((from, hidden), to, n, Units::order(d, batch))?;
                }
            }
        }
        if let Some(w) = wgmma_wave {
            wave_args.exchange = hx;
            // The upper layers' inputs, which their projection blocks copy by tensor maps.
            let inputs: Vec<u64> = (1..layers).map(input_of).collect();
            w.launch((&stream, &f, &plan), (&wave_args, &inputs), seq)?;
        }
        if let Some(w) = wave {
            wave_args.exchange = hx;
            w.launch((&stream, &f, &plan), (&wave_args, None), counter_ptr, seq)?;
            // The upper layers' operands in padded rows for the backward's GEMMs, as the
            // layer-by-layer forward makes them for its input projections.
            for (layer, p) in padded.iter_mut().enumerate().skip(1) {
                let b = dims.block(layer, 0);
                if train && pads(&plan, b.in_size) {
                    let sizes = (steps, gh, b.in_size);
                    let w_ih = w_ptr + b.w_ih as u64 * elem;
                    let operands = (input_of(layer), w_ih);
                    *p = Some(pad_input::<T>(&rows, operands, sizes, Order::Same)?);
                }
            }
        }
        // The transposes ran beside the launches above; what follows on the stream waits.
        if let Some(fork) = sides {
            fork.join()?;
        }
        drop(aligned_copies);
    }
    let reserve = backward.map(|(backward_exchange, backward_wave)| Reserve {
        plan,
        direction_stride,
        backward_side_by_side: apart_backward,
        gates,
        cells,
        below,
        joined,
        masks: masks.map(|m| (m, dropped)),
        padded,
        h_prev,
        exchanges: exchange,
        exchanges_zeroed: !unread,
        backward_exchange,
        backward_wave,
        w_hh_t,
    });
    Ok((outputs.into_outputs(&dev), reserve))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistent::cell::Cell;

    #[test]
    fn the_exchange_is_left_unfilled_only_where_every_pass_pushes() {
        let plan = |push| Plan {
            push,
            one_cluster: true,
            ..Plan::example(Cell::Lstm, 128, 32)
        };
        // (push per pass, forward wavefront, backward: (wavefront, groups joined at words)), read
        let cases = [
            // Inference: the forward's push decides.
            ([true, false], false, None, false),
            ([false, false], false, None, true),
            // Training, layer by layer: both passes pushed and no groups joined at words, or it
            // is read.
            ([true, true], false, Some((false, false)), false),
            ([true, true], false, Some((false, true)), true),
            ([true, false], false, Some((false, false)), true),
            ([false, true], false, Some((false, false)), true),
            // A wavefront exchanges through memory.
            ([true, true], true, Some((false, false)), true),
            ([true, true], false, Some((true, false)), true),
            ([true, false], true, None, true),
        ];
        for (push, forward_wave, backward, read) in cases {
            assert_eq!(
                exchange_is_read(&plan(push), forward_wave, backward),
                read,
                "push {push:?}, forward wave {forward_wave}, backward {backward:?}"
            );
        }
    }

    #[test]
    fn the_barrier_has_a_line_of_its_own_inside_the_allocation() {
        for len in [1usize, 31, 32, 64, 65, 2 * 77 * 208, 2 * 128 * 4096] {
            let offset = barrier_at::<u16>(0, len) as usize;
            assert!(offset >= len * 2, "{len}: the barrier overlaps the buffer");
            assert_eq!(offset % BARRIER_LINE, 0, "{len}: shares a line");
            assert!(
                offset + 8 <= with_barrier::<u16>(len) * 2,
                "{len}: past the allocation"
            );
        }
    }
}
