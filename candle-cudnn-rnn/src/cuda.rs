//! The op on cuDNN: `cudnnRNNForward`, `cudnnRNNBackwardData_v8`, `cudnnRNNBackwardWeights_v8`.
//!
//! A module owns one [`CudnnRnn`]: its RNN descriptors, the dropout random state (allocated
//! once, reused by every call and by backward through the reserve space), and data descriptors
//! cached per `(seq, batch)`. Workspace sizes are queried per call.

mod auto;

use crate::cpu::Call;
use crate::cudnn::{
    cudnn, data_type, handle, DropoutDesc, Handle, RnnDataDesc, RnnDesc, TensorDesc,
    RNN_PADDED_IO_ENABLED,
};
use crate::layout::{Bias, RnnDims};
use crate::op::RnnOp;
use crate::{MathMode, RnnAlgo, RnnMode};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::cudnn::sys;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, CudaView, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits,
};
use candle_core::cuda_backend::{CudaDType, CudaDevice, DeviceId};
use candle_core::op::BackpropOp;
use candle_core::{bail, CudaStorage, DType, Layout, Result, Storage, Tensor, WithDType};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The element types cuDNN's RNN runs on here.
pub(crate) trait Elem: CudaDType + WithDType + DeviceRepr + ValidAsZeroBits {}
impl Elem for f32 {}
impl Elem for f64 {}
impl Elem for half::f16 {}
impl Elem for half::bf16 {}

/// The reserve space of one training-mode forward, freed when its backward takes it, and
/// the algorithm that wrote it (backward must use the same).
pub(crate) struct CudaReserve {
    space: CudaSlice<u8>,
    algo: RnnAlgo,
}

/// An RNN descriptor for one algorithm; a dynamic one remembers the batch it was built for.
struct AlgoDesc {
    desc: RnnDesc,
    built_for: Option<usize>,
}

/// One piece of the weight buffer: where it sits in the canonical layout and in cuDNN's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    canonical: usize,
    cudnn: usize,
    len: usize,
}

/// Descriptors that depend on the call's sequence length and batch.
struct Shapes {
    x: RnnDataDesc,
    y: RnnDataDesc,
    h: TensorDesc,
    /// `c`'s shape differs from `h`'s with a projection.
    c: TensorDesc,
}

/// The raw handles of a [`Shapes`], valid while the prepared state is locked.
#[derive(Clone, Copy)]
struct Raw {
    x: sys::cudnnRNNDataDescriptor_t,
    y: sys::cudnnRNNDataDescriptor_t,
    h: sys::cudnnTensorDescriptor_t,
    c: sys::cudnnTensorDescriptor_t,
}

/// Everything cuDNN needs for one device and dtype, built at the first call.
struct Prepared {
    device: DeviceId,
    dtype: DType,
    no_dropout: DropoutDesc,
    /// The dropout descriptor and its RNG state, allocated once and reused by every call.
    dropout: Option<(DropoutDesc, CudaSlice<u8>)>,
    /// RNN descriptors by (algorithm, with dropout), built when first used.
    descs: HashMap<(RnnAlgo, bool), AlgoDesc>,
    /// `Auto`'s measured choice per (seq, batch, training).
    chosen: HashMap<(usize, usize, bool), RnnAlgo>,
    /// Weight space size in elements.
    space_len: usize,
    /// `None` when the canonical layout is cuDNN's own, so the weight tensor is used in place.
    remap: Option<Vec<Span>>,
    shapes: HashMap<(usize, usize), Shapes>,
}

// SAFETY: the raw descriptors inside are only used while the owning Mutex is held.
unsafe impl Send for Prepared {}

/// The cuDNN side of one module.
pub(crate) struct CudnnRnn {
    dims: RnnDims,
    math: MathMode,
    algo: RnnAlgo,
    dropout: f32,
    seed: AtomicU64,
    /// Set by [`CudnnRnn::reseed`]: restart the dropout RNG from `seed` before the next call.
    reseed: AtomicBool,
    prepared: Mutex<Option<Prepared>>,
}

fn ptr<T>(base: u64, elems: usize) -> *mut c_void {
    (base + (elems * std::mem::size_of::<T>()) as u64) as *mut c_void
}

fn view<'a, T: CudaDType>(s: &'a CudaStorage, l: &Layout, what: &str) -> Result<CudaView<'a, T>> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(s.as_cuda_slice::<T>()?.slice(a..b)),
        None => bail!("rnn: {what} must be contiguous"),
    }
}

impl CudnnRnn {
    pub(crate) fn new(
        dims: RnnDims,
        math: MathMode,
        algo: RnnAlgo,
        dropout: f32,
        seed: u64,
    ) -> Self {
        Self {
            dims,
            math,
            algo,
            dropout,
            seed: AtomicU64::new(seed),
            reseed: AtomicBool::new(false),
            prepared: Mutex::new(None),
        }
    }

    fn rnn_desc(&self, dtype: DType, dropout: &DropoutDesc, algo: RnnAlgo) -> Result<RnnDesc> {
        use sys::{cudnnDirectionMode_t as Dir, cudnnMathType_t as M, cudnnRNNBiasMode_t as B};
        let d = &self.dims;
        let dt = data_type(dtype)?;
        // Half types accumulate in f32 on tensor cores (PyTorch's choice too: f16 asks for
        // tensor-op math, bf16 takes the default, which allows them).
        let (math, prec) = match (self.math, dtype) {
            (_, DType::F16) => (M::CUDNN_TENSOR_OP_MATH, data_type(DType::F32)?),
            (_, DType::BF16) => (M::CUDNN_DEFAULT_MATH, data_type(DType::F32)?),
            (MathMode::Tf32, DType::F32) => (M::CUDNN_DEFAULT_MATH, dt),
            _ => (M::CUDNN_FMA_MATH, dt),
        };
        let desc = RnnDesc::new()?;
        cudnn!(cudnnSetRNNDescriptor_v8(
            desc.0,
            match algo {
                RnnAlgo::PersistStatic => sys::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_STATIC,
                RnnAlgo::PersistStaticSmallH => {
                    sys::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H
                }
                RnnAlgo::PersistDynamic => sys::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_DYNAMIC,
                RnnAlgo::Standard | RnnAlgo::Auto => sys::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_STANDARD,
            },
            match d.mode {
                RnnMode::Lstm => sys::cudnnRNNMode_t::CUDNN_LSTM,
                RnnMode::Gru => sys::cudnnRNNMode_t::CUDNN_GRU,
                RnnMode::RnnTanh => sys::cudnnRNNMode_t::CUDNN_RNN_TANH,
                RnnMode::RnnRelu => sys::cudnnRNNMode_t::CUDNN_RNN_RELU,
            },
            match d.bias {
                Bias::None => B::CUDNN_RNN_NO_BIAS,
                Bias::Single => B::CUDNN_RNN_SINGLE_INP_BIAS,
                Bias::Double => B::CUDNN_RNN_DOUBLE_BIAS,
            },
            if d.num_directions == 2 {
                Dir::CUDNN_BIDIRECTIONAL
            } else {
                Dir::CUDNN_UNIDIRECTIONAL
            },
            sys::cudnnRNNInputMode_t::CUDNN_LINEAR_INPUT,
            dt,
            prec,
            math,
            d.input_size as i32,
            d.hidden_size as i32,
            d.h_size() as i32,
            d.num_layers as i32,
            dropout.0,
            RNN_PADDED_IO_ENABLED,
        ))?;
        Ok(desc)
    }

    fn prepare(&self, h: &Handle, dev: &CudaDevice, dtype: DType, w_base: u64) -> Result<Prepared> {
        let stream = dev.cuda_stream();
        let no_dropout = DropoutDesc::new()?;
        cudnn!(cudnnSetDropoutDescriptor(
            no_dropout.0,
            h.0,
            0.0,
            std::ptr::null_mut(),
            0,
            0
        ))?;
        let plain = self.rnn_desc(dtype, &no_dropout, RnnAlgo::Standard)?;
        let mut dropout = None;
        if self.dropout > 0.0 {
            let mut size = 0usize;
            cudnn!(cudnnDropoutGetStatesSize(h.0, &mut size))?;
            let state = unsafe { stream.alloc::<u8>(size.max(1)) }?;
            let mut d = (DropoutDesc::new()?, state);
            self.reseed.store(false, Ordering::Relaxed);
            self.seed_dropout(h, &stream, &mut d)?;
            dropout = Some(d);
        }
        let mut bytes = 0usize;
        cudnn!(cudnnGetRNNWeightSpaceSize(h.0, plain.0, &mut bytes))?;
        let elem = dtype.size_in_bytes();
        let spans = self.weight_spans(h, &plain, bytes, w_base, elem)?;
        let identity = bytes == self.dims.weight_count() * elem
            && spans.iter().all(|s| s.canonical == s.cudnn);
        let mut descs = HashMap::new();
        descs.insert(
            (RnnAlgo::Standard, false),
            AlgoDesc {
                desc: plain,
                built_for: None,
            },
        );
        Ok(Prepared {
            device: dev.id(),
            dtype,
            no_dropout,
            dropout,
            descs,
            chosen: HashMap::new(),
            space_len: bytes / elem,
            remap: (!identity).then_some(spans),
            shapes: HashMap::new(),
        })
    }

    /// The RNN descriptor for `algo` (with the dropout state when `dropout`), built on first
    /// use; a dynamic persistent one is (re)compiled for `batch`. Errors when cuDNN refuses the
    /// configuration or the algorithm would lay the weights out differently.
    fn desc(
        &self,
        h: &Handle,
        p: &mut Prepared,
        algo: RnnAlgo,
        dropout: bool,
        batch: usize,
    ) -> Result<sys::cudnnRNNDescriptor_t> {
        let dropout = dropout && p.dropout.is_some();
        let key = (algo, dropout);
        if !p.descs.contains_key(&key) {
            let d = match (&p.dropout, dropout) {
                (Some((d, _)), true) => d,
                _ => &p.no_dropout,
            };
            let desc = self.rnn_desc(p.dtype, d, algo)?;
            let mut bytes = 0usize;
            cudnn!(cudnnGetRNNWeightSpaceSize(h.0, desc.0, &mut bytes))?;
            if bytes != p.space_len * p.dtype.size_in_bytes() {
                bail!("rnn: cuDNN's {algo:?} algorithm sizes the weights differently")
            }
            let built_for = None;
            p.descs.insert(key, AlgoDesc { desc, built_for });
        }
        let entry = p.descs.get_mut(&key).expect("inserted above");
        if algo == RnnAlgo::PersistDynamic && entry.built_for != Some(batch) {
            cudnn!(cudnnBuildRNNDynamic(h.0, entry.desc.0, batch as i32))?;
            entry.built_for = Some(batch);
        }
        Ok(entry.desc.0)
    }

    /// (Re)starts the dropout RNG from the current seed.
    fn seed_dropout(
        &self,
        h: &Handle,
        stream: &Arc<CudaStream>,
        (desc, state): &mut (DropoutDesc, CudaSlice<u8>),
    ) -> Result<()> {
        let size = state.len();
        let (p, _g) = state.device_ptr_mut(stream);
        let seed = self.seed.load(Ordering::Relaxed);
        cudnn!(cudnnSetDropoutDescriptor(
            desc.0,
            h.0,
            self.dropout,
            p as *mut c_void,
            size,
            seed
        ))
    }

    /// What `Auto` chose for `(seq, batch, train)`, once a call of that shape has run.
    pub(crate) fn chosen_algo(&self, seq: usize, batch: usize, train: bool) -> Option<RnnAlgo> {
        let guard = self.prepared.lock().ok()?;
        guard.as_ref()?.chosen.get(&(seq, batch, train)).copied()
    }

    /// Whether the weight tensor is used in place (cuDNN's layout is the canonical one), once
    /// a call has run; `false` means each call copies it into cuDNN's order.
    pub(crate) fn weights_in_place(&self) -> Option<bool> {
        let guard = self.prepared.lock().ok()?;
        Some(guard.as_ref()?.remap.is_none())
    }

    /// Restarts the dropout random state from `seed` at the next call.
    pub(crate) fn reseed(&self, seed: u64) {
        self.seed.store(seed, Ordering::Relaxed);
        self.reseed.store(true, Ordering::Relaxed);
    }

    /// Where cuDNN keeps each gate's matrix and bias, next to the canonical offsets.
    fn weight_spans(
        &self,
        h: &Handle,
        desc: &RnnDesc,
        bytes: usize,
        base: u64,
        elem: usize,
    ) -> Result<Vec<Span>> {
        let d = &self.dims;
        let (g, hid) = (d.mode.gates(), d.hidden_size);
        let (m_desc, b_desc) = (TensorDesc::new()?, TensorDesc::new()?);
        let mut spans = Vec::new();
        for layer in 0..d.num_layers {
            for dir in 0..d.num_directions {
                let blk = d.block(layer, dir);
                let pseudo = (layer * d.num_directions + dir) as i32;
                // Linear layers 0..g act on the input, g..2g on h, and 8 is the projection.
                let proj = blk.w_hr.map(|_| 8);
                for lin in (0..2 * g).chain(proj) {
                    let (mut m, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
                    cudnn!(cudnnGetRNNWeightParams(
                        h.0,
                        desc.0,
                        pseudo,
                        bytes,
                        base as *const c_void,
                        lin as i32,
                        m_desc.0,
                        &mut m,
                        b_desc.0,
                        &mut b
                    ))?;
                    let at = |p: *mut c_void| (p as u64 - base) as usize / elem;
                    if let (Some(w_hr), 8) = (blk.w_hr, lin) {
                        let len = d.proj_size * hid;
                        spans.push(Span {
                            canonical: w_hr,
                            cudnn: at(m),
                            len,
                        });
                        continue;
                    }
                    let (gate, recurrent) = (lin % g, lin >= g);
                    let (m_off, cols) = if recurrent {
                        (blk.w_hh, d.h_size())
                    } else {
                        (blk.w_ih, blk.in_size)
                    };
                    spans.push(Span {
                        canonical: m_off + gate * hid * cols,
                        cudnn: at(m),
                        len: hid * cols,
                    });
                    let b_off = if recurrent { blk.b_hh } else { blk.b_ih };
                    if let (Some(b_off), false) = (b_off, b.is_null()) {
                        spans.push(Span {
                            canonical: b_off + gate * hid,
                            cudnn: at(b),
                            len: hid,
                        });
                    }
                }
            }
        }
        Ok(spans)
    }

    /// The data and state descriptors of `call`: cached per `(seq, batch)` for full-length
    /// calls; built for the call (`held`) when it has its own lengths.
    fn shapes(&self, p: &mut Prepared, call: &Call, held: &mut Option<Shapes>) -> Result<Raw> {
        let key = (call.seq, call.batch);
        let s = match &call.lengths {
            Some(lengths) => held.insert(self.build_shapes(p.dtype, call, lengths)?),
            None => {
                if !p.shapes.contains_key(&key) {
                    let full = vec![call.seq; call.batch];
                    let built = self.build_shapes(p.dtype, call, &full)?;
                    p.shapes.insert(key, built);
                }
                &p.shapes[&key]
            }
        };
        Ok(Raw {
            x: s.x.0,
            y: s.y.0,
            h: s.h.0,
            c: s.c.0,
        })
    }

    fn build_shapes(&self, dtype: DType, call: &Call, lengths: &[usize]) -> Result<Shapes> {
        let dt = data_type(dtype)?;
        let lengths: Vec<i32> = lengths.iter().map(|&l| l as i32).collect();
        // Padded outputs are set to this zero (of any float type: all bits clear).
        let fill = 0f64;
        let data = |vector: usize| -> Result<RnnDataDesc> {
            let desc = RnnDataDesc::new()?;
            cudnn!(cudnnSetRNNDataDescriptor(
                desc.0,
                dt,
                sys::cudnnRNNDataLayout_t::CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                call.seq as i32,
                call.batch as i32,
                vector as i32,
                lengths.as_ptr(),
                &fill as *const f64 as *mut c_void,
            ))?;
            Ok(desc)
        };
        let tensor = |[ld, b, f]: [usize; 3]| -> Result<TensorDesc> {
            let t = TensorDesc::new()?;
            let dims = [ld as i32, b as i32, f as i32];
            let strides = [(b * f) as i32, f as i32, 1];
            cudnn!(cudnnSetTensorNdDescriptor(
                t.0,
                dt,
                3,
                dims.as_ptr(),
                strides.as_ptr()
            ))?;
            Ok(t)
        };
        let h_shape = self.dims.h_shape(call.batch);
        Ok(Shapes {
            x: data(self.dims.input_size)?,
            y: data(self.dims.output_size())?,
            h: tensor(h_shape)?,
            c: tensor(self.dims.c_shape(call.batch).unwrap_or(h_shape))?,
        })
    }

    /// The prepared state for this device and dtype, built on first use.
    fn lock_prepared<'a>(
        &'a self,
        h: &Handle,
        dev: &CudaDevice,
        dtype: DType,
        w_base: u64,
    ) -> Result<std::sync::MutexGuard<'a, Option<Prepared>>> {
        let mut guard = self
            .prepared
            .lock()
            .map_err(|_| candle_core::Error::Msg("rnn: cuDNN state lock poisoned".into()))?;
        let stale = guard
            .as_ref()
            .is_none_or(|p| p.device != dev.id() || p.dtype != dtype);
        if stale {
            *guard = Some(self.prepare(h, dev, dtype, w_base)?);
        } else if self.reseed.swap(false, Ordering::Relaxed) {
            let p = guard.as_mut().expect("not stale");
            if let Some(d) = p.dropout.as_mut() {
                self.seed_dropout(h, &dev.cuda_stream(), d)?;
                // Descriptors that hold the dropout state are rebuilt over the new one.
                p.descs.retain(|&(_, dropped), _| !dropped);
            }
        }
        Ok(guard)
    }

    pub(crate) fn forward(
        &self,
        op: &RnnOp,
        x: (&CudaStorage, &Layout),
        w: (&CudaStorage, &Layout),
        s: (&CudaStorage, &Layout),
    ) -> Result<(CudaStorage, Option<CudaReserve>)> {
        let dtypes = (x.0.dtype(), w.0.dtype(), s.0.dtype());
        match dtypes {
            (DType::F32, DType::F32, DType::F32) => self.forward_typed::<f32>(op, x, w, s),
            (DType::F64, DType::F64, DType::F64) => self.forward_typed::<f64>(op, x, w, s),
            (DType::F16, DType::F16, DType::F16) => self.forward_typed::<half::f16>(op, x, w, s),
            (DType::BF16, DType::BF16, DType::BF16) => {
                self.forward_typed::<half::bf16>(op, x, w, s)
            }
            _ => bail!(
                "rnn on cuda: x, weight and state must share one float dtype (f16, bf16, f32 or \
                 f64), got {dtypes:?}"
            ),
        }
    }

    fn forward_typed<T: Elem>(
        &self,
        op: &RnnOp,
        (xs, xl): (&CudaStorage, &Layout),
        (ws, wl): (&CudaStorage, &Layout),
        (ss, sl): (&CudaStorage, &Layout),
    ) -> Result<(CudaStorage, Option<CudaReserve>)> {
        let dev = xs.device().clone();
        let stream = dev.cuda_stream();
        let h = handle(&dev)?;
        let (x, w, s) = (
            view::<T>(xs, xl, "x")?,
            view::<T>(ws, wl, "weight")?,
            view::<T>(ss, sl, "state")?,
        );
        let (w_ptr, _wg) = w.device_ptr(&stream);
        let mut guard = self.lock_prepared(&h, &dev, T::DTYPE, w_ptr)?;
        let p = guard.as_mut().expect("prepared above");
        let call = &op.call;
        let space = WeightSpace::new(&stream, p, &w)?;
        let mut held = None;
        let shapes = self.shapes(p, call, &mut held)?;
        let dev_lengths = device_lengths(&stream, call)?;
        let (x_ptr, _xg) = x.device_ptr(&stream);
        let (s_ptr, _sg) = s.device_ptr(&stream);
        let (space_ptr, _pg) = space.ptr(&stream, w_ptr);
        let (len_ptr, _lg) = lengths_ptr(&stream, &dev_lengths);
        let operands = Operands {
            x: x_ptr,
            state: s_ptr,
            space: space_ptr,
            lengths: len_ptr,
        };
        let algo = self.algo_for::<T>(&h, &stream, p, call, op.train, shapes, operands)?;
        let desc = self.desc(&h, p, algo, op.dropout > 0.0, call.batch)?;
        let (work_len, reserve_len) = temp_sizes(&h, desc, op.train, shapes)?;
        let mut out = stream.alloc_zeros::<T>(call.output_len() + call.state_len())?;
        let mut work = unsafe { stream.alloc::<u8>(work_len.max(1)) }?;
        let mut reserve = match op.train {
            true => Some(unsafe { stream.alloc::<u8>(reserve_len.max(1)) }?),
            false => None,
        };
        {
            let (o_ptr, _og) = out.device_ptr_mut(&stream);
            let (work_ptr, _kg) = work.device_ptr_mut(&stream);
            let (res_ptr, _rg) = match reserve.as_mut() {
                Some(r) => {
                    let (p, g) = r.device_ptr_mut(&stream);
                    (p, Some(g))
                }
                None => (0, None),
            };
            let sizes = Sizes {
                space: p.space_len * std::mem::size_of::<T>(),
                work: work_len,
                reserve: if op.train { reserve_len } else { 0 },
            };
            self.forward_raw::<T>(
                &h, desc, shapes, call, sizes, operands, o_ptr, work_ptr, res_ptr,
            )?;
        }
        Ok((
            CudaStorage::wrap_cuda_slice(out, dev),
            reserve.map(|space| CudaReserve { space, algo }),
        ))
    }

    /// `at` elements past `base` where the cell has a `c` state (LSTM), NULL otherwise.
    fn c_ptr<T>(&self, base: u64, at: usize) -> *mut c_void {
        match self.dims.mode {
            RnnMode::Lstm => ptr::<T>(base, at),
            _ => std::ptr::null_mut(),
        }
    }

    /// `cudnnRNNForward` (training mode when a reserve space is given) into the packed `out`.
    #[allow(clippy::too_many_arguments)]
    fn forward_raw<T: Elem>(
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
        let lstm = self.dims.mode == RnnMode::Lstm;
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
    fn backward_raw<T: Elem>(
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
        let lstm = self.dims.mode == RnnMode::Lstm;
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

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn backward(
        &self,
        op: &RnnOp,
        r: CudaReserve,
        x: &Tensor,
        w: &Tensor,
        state: &Tensor,
        res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        match w.dtype() {
            DType::F32 => self.backward_typed::<f32>(op, r, [x, w, state, res, grad]),
            DType::F64 => self.backward_typed::<f64>(op, r, [x, w, state, res, grad]),
            DType::F16 => self.backward_typed::<half::f16>(op, r, [x, w, state, res, grad]),
            DType::BF16 => self.backward_typed::<half::bf16>(op, r, [x, w, state, res, grad]),
            dt => bail!("rnn backward on cuda: unsupported dtype {dt:?}"),
        }
    }

    fn backward_typed<T: Elem>(
        &self,
        op: &RnnOp,
        mut r: CudaReserve,
        tensors: [&Tensor; 5],
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let guards: Vec<_> = tensors.iter().map(|t| t.storage_and_layout()).collect();
        let mut views = Vec::with_capacity(5);
        for ((g, l), what) in guards
            .iter()
            .zip(["x", "weight", "state", "output", "gradient"])
        {
            match &**g {
                Storage::Cuda(s) => views.push((view::<T>(s, l, what)?, s.device().clone())),
                _ => bail!("rnn backward: a cuDNN forward needs CUDA tensors in backward"),
            }
        }
        let dev = views[0].1.clone();
        let stream = dev.cuda_stream();
        let h = handle(&dev)?;
        let [x, w, s, y, dy] = [0, 1, 2, 3, 4].map(|i| &views[i].0);
        let (w_ptr, _wg) = w.device_ptr(&stream);
        let mut guard = self.lock_prepared(&h, &dev, T::DTYPE, w_ptr)?;
        let p = guard.as_mut().expect("prepared above");
        let call = &op.call;
        let space = WeightSpace::new(&stream, p, w)?;
        let desc = self.desc(&h, p, r.algo, op.dropout > 0.0, call.batch)?;
        let mut held = None;
        let shapes = self.shapes(p, call, &mut held)?;
        let dev_lengths = device_lengths(&stream, call)?;
        let (work_len, reserve_len) = temp_sizes(&h, desc, true, shapes)?;
        if reserve_len > r.space.len() {
            bail!(
                "rnn backward: reserve space of {} bytes, cuDNN wants {reserve_len}",
                r.space.len()
            );
        }
        let mut work = unsafe { stream.alloc::<u8>(work_len.max(1)) }?;
        let mut dx = stream.alloc_zeros::<T>(call.input_len())?;
        let mut ds = stream.alloc_zeros::<T>(call.state_len())?;
        // ADD mode accumulates into this zeroed gradient buffer.
        let mut dspace = stream.alloc_zeros::<T>(p.space_len)?;
        {
            let [(x_ptr, _a), (s_ptr, _b), (y_ptr, _c), (dy_ptr, _d)] =
                [x, s, y, dy].map(|v| v.device_ptr(&stream));
            let (dx_ptr, _e) = dx.device_ptr_mut(&stream);
            let (ds_ptr, _f) = ds.device_ptr_mut(&stream);
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
            self.backward_raw::<T>(
                &h,
                desc,
                shapes,
                call,
                sizes,
                operands,
                [y_ptr, dy_ptr, dx_ptr, ds_ptr, dw_ptr, work_ptr, res_ptr],
            )?;
        }
        let dw = match &p.remap {
            None => dspace,
            Some(spans) => {
                let mut dw = stream.alloc_zeros::<T>(self.dims.weight_count())?;
                for sp in spans {
                    stream.memcpy_dtod(
                        &dspace.slice(sp.cudnn..sp.cudnn + sp.len),
                        &mut dw.slice_mut(sp.canonical..sp.canonical + sp.len),
                    )?;
                }
                dw
            }
        };
        let wrap = |slice: CudaSlice<T>, n: usize| {
            let storage = Storage::Cuda(CudaStorage::wrap_cuda_slice(slice, dev.clone()));
            Tensor::from_storage(storage, (n,), BackpropOp::none(), false)
        };
        Ok((
            wrap(dx, call.input_len()),
            wrap(dw, self.dims.weight_count()),
            wrap(ds, call.state_len()),
        ))
    }
}

/// Device addresses of a call's inputs.
#[derive(Clone, Copy)]
struct Operands {
    x: u64,
    state: u64,
    space: u64,
    lengths: *const i32,
}

/// Byte sizes of the weight, work and reserve spaces of a call.
#[derive(Clone, Copy)]
struct Sizes {
    space: usize,
    work: usize,
    reserve: usize,
}

/// `(work, reserve)` bytes a call needs.
fn temp_sizes(
    h: &Handle,
    desc: sys::cudnnRNNDescriptor_t,
    train: bool,
    shapes: Raw,
) -> Result<(usize, usize)> {
    let mode = if train {
        sys::cudnnForwardMode_t::CUDNN_FWD_MODE_TRAINING
    } else {
        sys::cudnnForwardMode_t::CUDNN_FWD_MODE_INFERENCE
    };
    let (mut work, mut reserve) = (0usize, 0usize);
    cudnn!(cudnnGetRNNTempSpaceSizes(
        h.0,
        desc,
        mode,
        shapes.x,
        &mut work,
        &mut reserve
    ))?;
    Ok((work, reserve))
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

/// The weights as cuDNN reads them: the module's tensor itself, or a copy in cuDNN's order.
enum WeightSpace<T> {
    InPlace,
    Copied(CudaSlice<T>),
}

impl<T: Elem> WeightSpace<T> {
    fn new(stream: &std::sync::Arc<CudaStream>, p: &Prepared, w: &CudaView<T>) -> Result<Self> {
        let Some(spans) = &p.remap else {
            return Ok(Self::InPlace);
        };
        let mut space = stream.alloc_zeros::<T>(p.space_len)?;
        for sp in spans {
            stream.memcpy_dtod(
                &w.slice(sp.canonical..sp.canonical + sp.len),
                &mut space.slice_mut(sp.cudnn..sp.cudnn + sp.len),
            )?;
        }
        Ok(Self::Copied(space))
    }

    fn ptr<'a>(&'a self, stream: &'a CudaStream, in_place: u64) -> (u64, Option<impl Drop + 'a>) {
        match self {
            Self::InPlace => (in_place, None),
            Self::Copied(s) => {
                let (p, g) = s.device_ptr(stream);
                (p, Some(g))
            }
        }
    }
}
