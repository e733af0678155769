//! One call on cuDNN: the forward (inference or training mode) into the packed output, and
//! the backward from the reserve space the forward left.

use super::ffi::{cudnn, handle, Handle};
use super::prepared::{HeldShapes, Prepared, Raw};
use super::{poisoned, CudnnReserve, CudnnRnn};
use crate::backend::{cuda_views, view, BackwardInputs, DwInto, Operand};
use crate::call::{Call, Dropout};
use crate::memory::fill;
use crate::sink::SinkMode;
use crate::{RnnAlgo, RnnMode};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::cudnn::sys;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits,
};
use candle_core::cuda_backend::CudaDType;
use candle_core::op::BackpropOp;
use candle_core::{bail, CudaStorage, Result, Storage, Tensor, WithDType};
use std::ffi::c_void;
use std::sync::Arc;

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

/// What every cuDNN call of one shape needs, set up by [`with_call`]: the handle, the stream,
/// the prepared state (locked), the call's descriptors and its operands' addresses.
pub(super) struct CallState<'a> {
    pub h: &'a Handle,
    pub stream: &'a Arc<CudaStream>,
    pub p: &'a mut Prepared,
    pub shapes: Raw,
    pub o: Operands,
}

/// `f` on the state of `call` over the operands `[x, w, s]` (of type `T`), the prepared state
/// following `dropout`'s seed; the operands stay held while `f` runs.
pub(super) fn with_call<T: Elem, R>(
    rnn: &CudnnRnn,
    call: &Call,
    dropout: &Dropout,
    [(xs, xl), (ws, wl), (ss, sl)]: [Operand; 3],
    f: impl FnOnce(CallState) -> Result<R>,
) -> Result<R> {
    let dev = xs.device();
    let stream = dev.cuda_stream();
    let h = handle(dev)?;
    let (x, w, s) = (
        view::<T>(xs, xl, "x")?,
        view::<T>(ws, wl, "weight")?,
        view::<T>(ss, sl, "state")?,
    );
    let (w_ptr, _wg) = w.device_ptr(&stream);
    let entry = rnn.prepared(&h, dev, T::DTYPE, w_ptr, dropout)?;
    let mut guard = entry.lock().map_err(|_| poisoned())?;
    let p = &mut *guard;
    let space = p.weight_space(&stream, &w)?;
    let mut held = HeldShapes::none();
    let shapes = p.shapes(&rnn.spec, call, &mut held)?;
    let dev_lengths = device_lengths(&stream, call)?;
    let (x_ptr, _xg) = x.device_ptr(&stream);
    let (s_ptr, _sg) = s.device_ptr(&stream);
    let (space_ptr, _pg) = space.ptr(&stream, w_ptr);
    let (len_ptr, _lg) = lengths_ptr(&stream, &dev_lengths);
    let o = Operands {
        x: x_ptr,
        state: s_ptr,
        space: space_ptr,
        lengths: len_ptr,
    };
    f(CallState {
        h: &h,
        stream: &stream,
        p,
        shapes,
        o,
    })
}

/// The forward of `call` with `algo`: the packed `[y | h_n | c_n]`, and the reserve space when
/// `train`.
pub(super) fn forward<T: Elem>(
    rnn: &CudnnRnn,
    algo: RnnAlgo,
    call: &Call,
    dropout: Dropout,
    train: bool,
    ops: [Operand; 3],
) -> Result<(CudaStorage, Option<CudnnReserve>)> {
    let dev = ops[0].0.device().clone();
    with_call::<T, _>(rnn, call, &dropout, ops, |c| {
        let CallState {
            h,
            stream,
            p,
            shapes,
            o: operands,
        } = c;
        let with_dropout = dropout.active();
        let desc = p.desc(&rnn.spec, h, algo, with_dropout, call.batch)?;
        let (work_len, reserve_len) =
            p.temp_sizes(h, desc, (algo, with_dropout), call, train, shapes)?;
        let mut out = output::<T>(stream, call, call.output_len() + call.state_len())?;
        let mut work = p.take_workspace(stream, work_len)?;
        let mut reserve = match train {
            true => Some(unsafe { stream.alloc::<u8>(reserve_len.max(1)) }?),
            false => None,
        };
        {
            let (o_ptr, _og) = out.device_ptr_mut(stream);
            let (work_ptr, _kg) = work.device_ptr_mut(stream);
            let (res_ptr, _rg) = optional_ptr_mut(stream, reserve.as_mut());
            let sizes = Sizes {
                space: p.space_len * std::mem::size_of::<T>(),
                work: work_len,
                reserve: if train { reserve_len } else { 0 },
            };
            rnn.forward_raw::<T>(
                h, desc, shapes, call, sizes, operands, o_ptr, work_ptr, res_ptr,
            )?;
        }
        p.return_workspace(work);
        Ok((
            CudaStorage::wrap_cuda_slice(out, dev),
            reserve.map(|space| CudnnReserve {
                space,
                algo,
                dropout: with_dropout,
            }),
        ))
    })
}

/// The gradients `(dx, dw, dstate)` of `call` from the reserve its forward left; `dstate` only
/// when asked for (cuDNN skips it for a NULL `dhx`/`dcx`).
pub(super) fn backward<T: Elem>(
    rnn: &CudnnRnn,
    call: &Call,
    mut r: CudnnReserve,
    i: BackwardInputs,
    dw_into: Option<DwInto>,
) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
    let storages = i.storages();
    let (views, dev) = cuda_views::<T>(&storages, "cuDNN")?;
    let stream = dev.cuda_stream();
    let h = handle(&dev)?;
    let [x, w, s, y, dy] = [0, 1, 2, 3, 4].map(|i| &views[i]);
    let (w_ptr, _wg) = w.device_ptr(&stream);
    let entry = rnn.prepared_for_backward(&dev, T::DTYPE)?;
    let mut guard = entry.lock().map_err(|_| poisoned())?;
    let p = &mut *guard;
    let space = p.weight_space(&stream, w)?;
    let desc = p.desc(&rnn.spec, &h, r.algo, r.dropout, call.batch)?;
    let mut held = HeldShapes::none();
    let shapes = p.shapes(&rnn.spec, call, &mut held)?;
    let dev_lengths = device_lengths(&stream, call)?;
    let (work_len, reserve_len) =
        p.temp_sizes(&h, desc, (r.algo, r.dropout), call, true, shapes)?;
    if reserve_len > r.space.len() {
        bail!(
            "rnn backward: reserve space of {} bytes, cuDNN wants {reserve_len}",
            r.space.len()
        );
    }
    let mut work = p.take_workspace(&stream, work_len)?;
    let mut dx = output::<T>(&stream, call, call.input_len())?;
    let mut ds = match i.state_grad {
        true => Some(output::<T>(&stream, call, call.state_len())?),
        false => None,
    };
    // ADD mode accumulates: into the caller's buffer (cuDNN's layout is the module's when it
    // reads the weights in place; zeroed first when the caller asked for it to be overwritten),
    // or into a zeroed one of our own.
    let mut own = None;
    let dspace: &mut CudaSlice<T> = match dw_into {
        Some(_) if p.remap.is_some() => bail!(
            "rnn backward: a weight-gradient buffer needs weights cuDNN reads in place (this \
             configuration copies them into cuDNN's order)"
        ),
        Some(DwInto { buf, mode }) => {
            let into = buf.as_cuda_slice_mut::<T>()?;
            if into.len() != p.space_len {
                bail!(
                    "rnn backward: a weight-gradient buffer of {} elements for {} weights",
                    into.len(),
                    p.space_len
                );
            }
            if mode == SinkMode::Overwrite {
                let bytes = into.len() * std::mem::size_of::<T>();
                let (ptr, _g) = into.device_ptr_mut(&stream);
                fill(&stream, ptr, bytes, 0)?;
            }
            into
        }
        None => own.insert(stream.alloc_zeros::<T>(p.space_len)?),
    };
    {
        let [(x_ptr, _a), (s_ptr, _b), (y_ptr, _c), (dy_ptr, _d)] =
            [x, s, y, dy].map(|v| v.device_ptr(&stream));
        let (dx_ptr, _e) = dx.device_ptr_mut(&stream);
        let (ds_ptr, _f) = optional_ptr_mut(&stream, ds.as_mut());
        let (dw_ptr, _g) = dspace.device_ptr_mut(&stream);
        let (work_ptr, _h) = work.device_ptr_mut(&stream);
        let (res_ptr, _i) = r.space.device_ptr_mut(&stream);
        let (len_ptr, _l) = lengths_ptr(&stream, &dev_lengths);
        let (space_ptr, _j) = space.ptr(&stream, w_ptr);
        let operands = Operands {
            x: x_ptr,
            state: s_ptr,
            space: space_ptr,
            lengths: len_ptr,
        };
        let sizes = Sizes {
            space: p.space_len * std::mem::size_of::<T>(),
            work: work_len,
            reserve: reserve_len,
        };
        rnn.backward_raw::<T>(
            &h,
            desc,
            shapes,
            call,
            sizes,
            operands,
            [y_ptr, dy_ptr, dx_ptr, ds_ptr, dw_ptr, work_ptr, res_ptr],
        )?;
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

    /// `cudnnRNNForward` (training mode when a reserve space is given) into the packed `out`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn forward_raw<T: Elem>(
        &self,
        h: &Handle,
        desc: sys::cudnnRNNDescriptor_t,
        shapes: Raw,
        call: &Call,
        sizes: Sizes,
        o: Operands,
        out: u64,
        work: u64,
        reserve: u64,
    ) -> Result<()> {
        let (half, out_len) = (call.h_len(), call.output_len());
        let lstm = self.spec.dims.mode == RnnMode::Lstm;
        let c = |base: u64, at: usize| self.c_ptr::<T>(base, at);
        let mode = if reserve != 0 {
            sys::cudnnForwardMode_t::CUDNN_FWD_MODE_TRAINING
        } else {
            sys::cudnnForwardMode_t::CUDNN_FWD_MODE_INFERENCE
        };
        cudnn!(cudnnRNNForward(
            h.0,
            desc,
            mode,
            o.lengths,
            shapes.x,
            o.x as *const c_void,
            shapes.y,
            out as *mut c_void,
            shapes.h,
            o.state as *const c_void,
            ptr::<T>(out, out_len),
            if lstm { shapes.c } else { std::ptr::null_mut() },
            c(o.state, half),
            c(out, out_len + half),
            sizes.space,
            o.space as *const c_void,
            sizes.work,
            work as *mut c_void,
            sizes.reserve,
            reserve as *mut c_void,
        ))
    }

    /// `cudnnRNNBackwardData_v8` then `cudnnRNNBackwardWeights_v8`, accumulating into `dw`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn backward_raw<T: Elem>(
        &self,
        h: &Handle,
        desc: sys::cudnnRNNDescriptor_t,
        shapes: Raw,
        call: &Call,
        sizes: Sizes,
        o: Operands,
        [y, dy, dx, ds, dw, work, reserve]: [u64; 7],
    ) -> Result<()> {
        let (half, out_len) = (call.h_len(), call.output_len());
        let lstm = self.spec.dims.mode == RnnMode::Lstm;
        let c = |base: u64, at: usize| self.c_ptr::<T>(base, at);
        // BackwardData first: it updates the reserve space that BackwardWeights reads.
        cudnn!(cudnnRNNBackwardData_v8(
            h.0,
            desc,
            o.lengths,
            shapes.y,
            y as *const c_void,
            dy as *const c_void,
            shapes.x,
            dx as *mut c_void,
            shapes.h,
            o.state as *const c_void,
            ptr::<T>(dy, out_len),
            ds as *mut c_void,
            if lstm { shapes.c } else { std::ptr::null_mut() },
            c(o.state, half),
            c(dy, out_len + half),
            c(ds, half),
            sizes.space,
            o.space as *const c_void,
            sizes.work,
            work as *mut c_void,
            sizes.reserve,
            reserve as *mut c_void,
        ))?;
        cudnn!(cudnnRNNBackwardWeights_v8(
            h.0,
            desc,
            sys::cudnnWgradMode_t::CUDNN_WGRAD_MODE_ADD,
            o.lengths,
            shapes.x,
            o.x as *const c_void,
            shapes.h,
            o.state as *const c_void,
            shapes.y,
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
