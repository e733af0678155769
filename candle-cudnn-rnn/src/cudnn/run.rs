//! One call on cuDNN: the forward (inference or training mode) into the packed output, and
//! the backward from the reserve space the forward left.

use super::ffi::{cudnn, handle, Handle};
use super::prepared::{HeldShapes, Prepared, Raw};
use super::{poisoned, CudnnReserve, CudnnRnn};
use crate::backend::{
    cuda_views, view, weight_grad_buffer, BackwardInputs, DwInto, ForwardInputs, Gradients,
    OutputBuffers, Outputs,
};
use crate::call::Call;
use crate::memory::fill;
use crate::sink::SinkMode;
use crate::{MathMode, RnnAlgo, RnnMode};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::cudnn::sys;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, CudaView, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits,
};
use candle_core::cuda_backend::CudaDType;
use candle_core::op::BackpropOp;
use candle_core::{bail, CudaStorage, DType, Result, Storage, Tensor, WithDType};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// The element types cuDNN's RNN runs on here.
pub(super) trait Elem: CudaDType + WithDType + DeviceRepr + ValidAsZeroBits {}
impl Elem for f32 {}
impl Elem for f64 {}
impl Elem for half::f16 {}
impl Elem for half::bf16 {}

fn ptr<T>(base: u64, elems: usize) -> *mut c_void {
    (base + (elems * std::mem::size_of::<T>()) as u64) as *mut c_void
}

/// A buffer of `len` elements that cuDNN writes: left unset for a full-length call, where
/// cuDNN writes every element; zeroed when the call has its own lengths, so that nothing past a
/// sample's end is ever garbage.
fn output<T: Elem>(stream: &Arc<CudaStream>, call: &Call, len: usize) -> Result<CudaSlice<T>> {
    Ok(match call.lengths {
        // SAFETY: cuDNN writes all of y, h_n, c_n (forward) and dx, dh_0, dc_0 (backward) of a
        // full-length call before anything reads them.
        None => unsafe { stream.alloc::<T>(len) }?,
        Some(_) => stream.alloc_zeros::<T>(len)?,
    })
}

/// What every cuDNN call of one shape needs, set up by [`with_call`] (and the backward): the
/// stream, the prepared state (locked) and what every cuDNN function of the call reads.
pub(super) struct CallState<'a> {
    pub stream: &'a Arc<CudaStream>,
    pub p: &'a mut Prepared,
    pub raw: RawCall<'a>,
}

/// `f` on the state of `inputs`' call over its operands (of type `T`), the prepared state
/// following its dropout's seed; the operands stay held while `f` runs.
pub(super) fn with_call<T: Elem, R>(
    rnn: &CudnnRnn,
    inputs: &ForwardInputs,
    f: impl FnOnce(CallState) -> Result<R>,
) -> Result<R> {
    let [(xs, xl), (ws, wl), (ss, sl)] = inputs.ops;
    let dev = xs.device();
    let stream = dev.cuda_stream();
    let h = handle(dev)?;
    let (x, w, s) = (
        view::<T>(xs, xl, "x")?,
        view::<T>(ws, wl, "weight")?,
        view::<T>(ss, sl, "state")?,
    );
    let (w_ptr, _wg) = w.device_ptr(&stream);
    let entry = rnn.prepared(&h, dev, T::DTYPE, w_ptr, &inputs.dropout)?;
    let operands = ([&x, &w, &s], w_ptr);
    with_prepared(rnn, (&h, &stream), inputs.call, &entry, operands, f)
}

/// `f` on the state of `call` with the prepared state `entry` (locked while `f` runs) over the
/// operands x, weight (at `w_ptr`, which the caller holds) and state, whose addresses and
/// sequence lengths stay held while `f` runs.
fn with_prepared<T: Elem, R>(
    rnn: &CudnnRnn,
    (h, stream): (&Handle, &Arc<CudaStream>),
    call: &Call,
    entry: &Mutex<Prepared>,
    ([x, w, s], w_ptr): ([&CudaView<T>; 3], u64),
    f: impl FnOnce(CallState) -> Result<R>,
) -> Result<R> {
    let mut guard = entry.lock().map_err(|_| poisoned())?;
    let p = &mut *guard;
    let space = p.weight_space(stream, w)?;
    let mut held = HeldShapes::none();
    let shapes = p.shapes(&rnn.spec, call, &mut held)?;
    let dev_lengths = device_lengths(stream, call)?;
    let (x_ptr, _xg) = x.device_ptr(stream);
    let (s_ptr, _sg) = s.device_ptr(stream);
    let (space_ptr, _pg) = space.ptr(stream, w_ptr);
    let (len_ptr, _lg) = lengths_ptr(stream, &dev_lengths);
    let o = Operands {
        x: x_ptr,
        // NULL (cuDNN: a zero initial state) for a call given none.
        state: call.initial_state(s_ptr),
        space: space_ptr,
        lengths: len_ptr,
    };
    let raw = RawCall { h, shapes, call, o };
    f(CallState { stream, p, raw })
}

/// Whether `algo` reads a call given no initial state as zeros rather than NULL, in the module's
/// math: cuDNN's `Standard` over a stack, which, handed NULL, skips each layer's first
/// recurrent products but runs its layers' streams with less overlap (graphed training, H100,
/// `results/2026-11-26-h100-no-zero-state/`: GRU [30 and 200, 128, 3 x 1024] bf16 2-4% slower,
/// in TF32 0-0.7%; LSTM [200, 128, 3 x 512] f16 0.4%); except an LSTM stack in TF32, which NULL
/// made 1.4-2% faster at [30 and 200, 128, 3 x 1024]. Elsewhere NULL, a graph node fewer.
pub(super) fn reads_zeros(call: &Call, algo: RnnAlgo, (math, dtype): (MathMode, DType)) -> bool {
    let tf32_lstm =
        call.dims.mode == RnnMode::Lstm && math == MathMode::Tf32 && dtype == DType::F32;
    call.zero_state && algo == RnnAlgo::Standard && call.dims.num_layers > 1 && !tf32_lstm
}

/// The zero initial state of a call that `algo` reads as zeros ([`reads_zeros`]), `o.state`
/// then pointing at it (it must outlive the call); else none.
fn zeros_for_stacks<T: Elem>(
    stream: &Arc<CudaStream>,
    (rnn, call, algo): (&CudnnRnn, &Call, RnnAlgo),
    o: &mut Operands,
) -> Result<Option<CudaSlice<T>>> {
    if !reads_zeros(call, algo, (rnn.spec.math, T::DTYPE)) {
        return Ok(None);
    }
    let zeros = stream.alloc_zeros::<T>(call.state_len())?;
    // The address stays valid while `zeros` lives (stream-ordered allocation).
    o.state = zeros.device_ptr(stream).0;
    Ok(Some(zeros))
}

/// The forward of `inputs`' call with `algo`: its outputs (the packed `[y | h_n | c_n]`, or `y`
/// and the final state apart, as `inputs` asks), and the reserve space when it trains.
pub(super) fn forward<T: Elem>(
    rnn: &CudnnRnn,
    algo: RnnAlgo,
    inputs: ForwardInputs,
) -> Result<(Outputs, Option<CudnnReserve>)> {
    let (call, train) = (inputs.call, inputs.train);
    let dev = inputs.ops[0].0.device().clone();
    with_call::<T, _>(rnn, &inputs, |c| {
        let CallState { stream, p, mut raw } = c;
        let _zeros = zeros_for_stacks::<T>(stream, (rnn, call, algo), &mut raw.o)?;
        let with_dropout = inputs.dropout.active();
        let desc = p.desc(&rnn.spec, raw.h, algo, with_dropout, call.batch)?;
        let (work_len, reserve_len) =
            p.temp_sizes(raw.h, desc, (algo, with_dropout), call, train, raw.shapes)?;
        let mut outputs = OutputBuffers::new(call, inputs.state_apart, |len| {
            output::<T>(stream, call, len)
        })?;
        let mut work = p.take_workspace(stream, work_len)?;
        let mut reserve = match train {
            true => Some(unsafe { stream.alloc::<u8>(reserve_len.max(1)) }?),
            false => None,
        };
        {
            let (out, _og) = outputs.addresses(stream, call);
            let (work_ptr, _kg) = work.device_ptr_mut(stream);
            let (res_ptr, _rg) = optional_ptr_mut(stream, reserve.as_mut());
            let sizes = Sizes {
                space: p.space_len * std::mem::size_of::<T>(),
                work: work_len,
                reserve: if train { reserve_len } else { 0 },
            };
            rnn.forward_raw::<T>(&raw, desc, sizes, (out, [work_ptr, res_ptr]))?;
        }
        p.return_workspace(work);
        Ok((
            outputs.into_outputs(&dev),
            reserve.map(|space| CudnnReserve {
                space,
                algo,
                dropout: with_dropout,
            }),
        ))
    })
}

/// The gradients of `i`'s call from the reserve its forward left; `dstate` only when asked
/// for (cuDNN skips it for a NULL `dhx`/`dcx`).
pub(super) fn backward<T: Elem>(
    rnn: &CudnnRnn,
    mut r: CudnnReserve,
    i: BackwardInputs,
) -> Result<Gradients> {
    let call = i.call;
    let storages = i.storages();
    let (views, dev) = cuda_views::<T>(&storages, "cuDNN")?;
    let stream = dev.cuda_stream();
    let h = handle(&dev)?;
    let [x, w, s, y, dy] = [0, 1, 2, 3, 4].map(|i| &views[i]);
    // The final state's gradient; none (NULL to cuDNN: zero) when the loss does not read it.
    let d_state = views.get(5);
    let (w_ptr, _wg) = w.device_ptr(&stream);
    let entry = rnn.prepared_for_backward(&dev, T::DTYPE)?;
    let operands = ([x, w, s], w_ptr);
    with_prepared(rnn, (&h, &stream), call, &entry, operands, |c| {
        let CallState { stream, p, mut raw } = c;
        let _zeros = zeros_for_stacks::<T>(stream, (rnn, call, r.algo), &mut raw.o)?;
        let desc = p.desc(&rnn.spec, raw.h, r.algo, r.dropout, call.batch)?;
        let (work_len, reserve_len) =
            p.temp_sizes(raw.h, desc, (r.algo, r.dropout), call, true, raw.shapes)?;
        if reserve_len > r.space.len() {
            bail!(
                "rnn backward: reserve space of {} bytes, cuDNN wants {reserve_len}",
                r.space.len()
            );
        }
        let mut work = p.take_workspace(stream, work_len)?;
        let mut dx = output::<T>(stream, call, call.input_len())?;
        let mut ds = match i.state_grad {
            true => Some(output::<T>(stream, call, call.state_len())?),
            false => None,
        };
        // ADD mode accumulates: into the caller's buffer (cuDNN's layout is the module's when
        // it reads the weights in place; zeroed first when the caller asked for it to be
        // overwritten), or into a zeroed one of our own (zeroed by `backward_raw`).
        let mut own = None;
        let (dspace, zero_dw): (&mut CudaSlice<T>, bool) = match i.dw_into {
            Some(_) if p.remap.is_some() => bail!(
                "rnn backward: a weight-gradient buffer needs weights cuDNN reads in place \
                 (this configuration copies them into cuDNN's order)"
            ),
            Some(DwInto { buf, mode }) => (
                weight_grad_buffer::<T>(buf, p.space_len)?,
                mode == SinkMode::Overwrite,
            ),
            // SAFETY: zeroed by `backward_raw` before cuDNN adds into it.
            None => (own.insert(unsafe { stream.alloc::<T>(p.space_len) }?), true),
        };
        {
            let [(y_ptr, _c), (dy_ptr, _d)] = [y, dy].map(|v| v.device_ptr(stream));
            let (d_state_ptr, _s) = match d_state {
                Some(v) => {
                    let (p, g) = v.device_ptr(stream);
                    (p, Some(g))
                }
                None => (0, None),
            };
            let (dx_ptr, _e) = dx.device_ptr_mut(stream);
            let (ds_ptr, _f) = optional_ptr_mut(stream, ds.as_mut());
            let (dw_ptr, _g) = dspace.device_ptr_mut(stream);
            let (work_ptr, _h) = work.device_ptr_mut(stream);
            let (res_ptr, _i) = r.space.device_ptr_mut(stream);
            let sizes = Sizes {
                space: p.space_len * std::mem::size_of::<T>(),
                work: work_len,
                reserve: reserve_len,
            };
            let bufs = [
                y_ptr,
                dy_ptr,
                d_state_ptr,
                dx_ptr,
                ds_ptr,
                dw_ptr,
                work_ptr,
                res_ptr,
            ];
            let zero_dw = zero_dw.then_some(&**stream);
            rnn.backward_raw::<T>(&raw, desc, sizes, bufs, zero_dw)?;
        }
        p.return_workspace(work);
        let dw = match (own, &p.remap) {
            (None, _) => None,
            (Some(dspace), None) => Some(dspace),
            (Some(dspace), Some(spans)) => {
                let mut dw = stream.alloc_zeros::<T>(rnn.spec.dims.weight_count())?;
                for sp in spans {
                    stream.memcpy_dtod(
                        &dspace.slice(sp.cudnn..sp.cudnn + sp.len),
                        &mut dw.slice_mut(sp.canonical..sp.canonical + sp.len),
                    )?;
                }
                Some(dw)
            }
        };
        let wrap = |slice: CudaSlice<T>, n: usize| {
            let storage = Storage::Cuda(CudaStorage::wrap_cuda_slice(slice, dev.clone()));
            Tensor::from_storage(storage, (n,), BackpropOp::none(), false)
        };
        Ok((
            Some(wrap(dx, call.input_len())),
            dw.map(|dw| wrap(dw, rnn.spec.dims.weight_count())),
            ds.map(|ds| wrap(ds, call.state_len())),
        ))
    })
}

impl CudnnRnn {
    /// `at` elements past `base` where the cell has a `c` state (LSTM), NULL otherwise (and
    /// for a NULL `base`: an output not asked for).
    fn c_ptr<T>(&self, base: u64, at: usize) -> *mut c_void {
        match self.spec.dims.mode {
            RnnMode::Lstm if base != 0 => ptr::<T>(base, at),
            _ => std::ptr::null_mut(),
        }
    }

    /// The descriptor of the `c` states where the cell has them (LSTM), NULL otherwise.
    fn c_desc(&self, shapes: &Raw) -> sys::cudnnTensorDescriptor_t {
        match self.spec.dims.mode {
            RnnMode::Lstm => shapes.c,
            _ => std::ptr::null_mut(),
        }
    }

    /// `cudnnRNNForward` (training mode when a reserve space is given) into `y` at `out` and the
    /// packed final state `[h_n | c_n]` at `state`.
    pub(super) fn forward_raw<T: Elem>(
        &self,
        raw: &RawCall,
        desc: sys::cudnnRNNDescriptor_t,
        sizes: Sizes,
        ([out, state], [work, reserve]): ([u64; 2], [u64; 2]),
    ) -> Result<()> {
        let half = raw.call.h_len();
        let c = |base: u64, at: usize| self.c_ptr::<T>(base, at);
        let mode = if reserve != 0 {
            sys::cudnnForwardMode_t::CUDNN_FWD_MODE_TRAINING
        } else {
            sys::cudnnForwardMode_t::CUDNN_FWD_MODE_INFERENCE
        };
        cudnn!(cudnnRNNForward(
            raw.h.0,
            desc,
            mode,
            raw.o.lengths,
            raw.shapes.x,
            raw.o.x as *const c_void,
            raw.shapes.y,
            out as *mut c_void,
            raw.shapes.h,
            raw.o.state as *const c_void,
            state as *mut c_void,
            self.c_desc(&raw.shapes),
            c(raw.o.state, half),
            c(state, half),
            sizes.space,
            raw.o.space as *const c_void,
            sizes.work,
            work as *mut c_void,
            sizes.reserve,
            reserve as *mut c_void,
        ))
    }

    /// `cudnnRNNBackwardData_v8` then `cudnnRNNBackwardWeights_v8`, accumulating into `dw`;
    /// `d_state` is the final state's packed gradient, 0 for none (zero). With `zero_dw`,
    /// `dw` is zeroed in that stream's order between the two, as PyTorch orders it: a fill of
    /// the weights' size just before the backward's recurrence slowed cuDNN's persistent
    /// backward kernel (results/2026-11-26-h200-dw-fill-order/).
    pub(super) fn backward_raw<T: Elem>(
        &self,
        raw: &RawCall,
        desc: sys::cudnnRNNDescriptor_t,
        sizes: Sizes,
        [y, dy, d_state, dx, ds, dw, work, reserve]: [u64; 8],
        zero_dw: Option<&CudaStream>,
    ) -> Result<()> {
        let half = raw.call.h_len();
        let c = |base: u64, at: usize| self.c_ptr::<T>(base, at);
        // BackwardData first: it updates the reserve space that BackwardWeights reads.
        cudnn!(cudnnRNNBackwardData_v8(
            raw.h.0,
            desc,
            raw.o.lengths,
            raw.shapes.y,
            y as *const c_void,
            dy as *const c_void,
            raw.shapes.x,
            dx as *mut c_void,
            raw.shapes.h,
            raw.o.state as *const c_void,
            d_state as *const c_void,
            ds as *mut c_void,
            self.c_desc(&raw.shapes),
            c(raw.o.state, half),
            c(d_state, half),
            c(ds, half),
            sizes.space,
            raw.o.space as *const c_void,
            sizes.work,
            work as *mut c_void,
            sizes.reserve,
            reserve as *mut c_void,
        ))?;
        if let Some(stream) = zero_dw {
            fill(stream, dw, sizes.space, 0)?;
        }
        cudnn!(cudnnRNNBackwardWeights_v8(
            raw.h.0,
            desc,
            sys::cudnnWgradMode_t::CUDNN_WGRAD_MODE_ADD,
            raw.o.lengths,
            raw.shapes.x,
            raw.o.x as *const c_void,
            raw.shapes.h,
            raw.o.state as *const c_void,
            raw.shapes.y,
            y as *const c_void,
            sizes.space,
            dw as *mut c_void,
            sizes.work,
            work as *mut c_void,
            sizes.reserve,
            reserve as *mut c_void,
        ))
    }
}

/// What every cuDNN function of one call reads besides its RNN descriptor, its spaces and its
/// buffers: the handle, the call's data descriptors, the call itself and its operands'
/// addresses.
#[derive(Clone, Copy)]
pub(super) struct RawCall<'a> {
    pub h: &'a Handle,
    pub shapes: Raw,
    pub call: &'a Call,
    pub o: Operands,
}

/// Device addresses of a call's inputs.
#[derive(Clone, Copy)]
pub(super) struct Operands {
    pub x: u64,
    pub state: u64,
    pub space: u64,
    pub lengths: *const i32,
}

/// Byte sizes of the weight, work and reserve spaces of a call.
#[derive(Clone, Copy)]
pub(super) struct Sizes {
    pub space: usize,
    pub work: usize,
    pub reserve: usize,
}

/// The call's sequence lengths on the device (cuDNN reads them from kernels); `None` when
/// every sequence is full length.
fn device_lengths(stream: &Arc<CudaStream>, call: &Call) -> Result<Option<CudaSlice<i32>>> {
    match &call.lengths {
        Some(l) => {
            let l: Vec<i32> = l.iter().map(|&v| v as i32).collect();
            Ok(Some(stream.clone_htod(&l)?))
        }
        None => Ok(None),
    }
}

/// The address of a buffer that may be absent: 0 (NULL to cuDNN) for none.
fn optional_ptr_mut<'a, T>(
    stream: &'a CudaStream,
    buf: Option<&'a mut CudaSlice<T>>,
) -> (u64, Option<impl Drop + 'a>) {
    match buf {
        Some(b) => {
            let (p, g) = b.device_ptr_mut(stream);
            (p, Some(g))
        }
        None => (0, None),
    }
}

fn lengths_ptr<'a>(
    stream: &'a CudaStream,
    lengths: &'a Option<CudaSlice<i32>>,
) -> (*const i32, Option<impl Drop + 'a>) {
    match lengths {
        Some(l) => {
            let (p, g) = l.device_ptr(stream);
            (p as *const i32, Some(g))
        }
        None => (std::ptr::null(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RnnConfig, RnnDims};

    /// Which calls given no state hand cuDNN zeros rather than NULL: `Standard` stacks, but
    /// not an LSTM stack in TF32 (`reads_zeros`'s measurements).
    #[test]
    fn standard_stacks_but_tf32_lstms_read_zeros() {
        let call = |mode, layers, zero_state| Call {
            dims: RnnDims::new(
                mode,
                8,
                16,
                &RnnConfig {
                    num_layers: layers,
                    ..Default::default()
                },
            ),
            seq: 3,
            batch: 2,
            lengths: None,
            zero_state,
        };
        let (half, tf32) = ((MathMode::Fp32, DType::BF16), (MathMode::Tf32, DType::F32));
        let standard = RnnAlgo::Standard;
        for mode in [RnnMode::Lstm, RnnMode::Gru] {
            assert!(
                reads_zeros(&call(mode, 3, true), standard, half),
                "{mode:?}"
            );
            assert!(
                !reads_zeros(&call(mode, 3, false), standard, half),
                "{mode:?} given"
            );
            assert!(
                !reads_zeros(&call(mode, 1, true), standard, half),
                "{mode:?} one layer"
            );
            let persistent = RnnAlgo::PersistStatic;
            assert!(
                !reads_zeros(&call(mode, 3, true), persistent, half),
                "{mode:?}"
            );
        }
        assert!(reads_zeros(&call(RnnMode::Gru, 3, true), standard, tf32));
        assert!(!reads_zeros(&call(RnnMode::Lstm, 3, true), standard, tf32));
        // f32 without TF32 keeps the zeros.
        let fp32 = (MathMode::Fp32, DType::F32);
        assert!(reads_zeros(&call(RnnMode::Lstm, 3, true), standard, fp32));
    }
}
