//! What cuDNN needs for one module on one device and dtype, built at the module's first call
//! there and kept: RNN descriptors (one per algorithm, with or without dropout), the dropout
//! random state, where cuDNN keeps each weight matrix, and data descriptors per `(seq, batch)`.

use super::ffi::{
    cudnn, data_type, DropoutDesc, Handle, RnnDataDesc, RnnDesc, TensorDesc, LSTM_PROJECTION_ID,
    RNN_PADDED_IO_ENABLED,
};
use crate::call::{Call, Dropout};
use crate::layout::{Bias, RnnDims};
use crate::{MathMode, RnnAlgo, RnnMode};
use candle_core::cuda_backend::cudarc::cudnn::sys;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, CudaView, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits,
};
use candle_core::cuda_backend::CudaDevice;
use candle_core::{bail, DType, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

/// What fixes a module's descriptors: its sizes, its math and its dropout probability.
#[derive(Clone, Copy, Debug)]
pub(super) struct Spec {
    pub dims: RnnDims,
    pub math: MathMode,
    pub dropout: f32,
}

/// An RNN descriptor for one algorithm; a dynamic one remembers the batch it was built for.
struct AlgoDesc {
    desc: RnnDesc,
    built_for: Option<usize>,
}

/// One piece of the weight buffer: where it sits in the canonical layout and in cuDNN's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    pub canonical: usize,
    pub cudnn: usize,
    pub len: usize,
}

/// Descriptors that depend on the call's sequence length and batch.
struct Shapes {
    x: RnnDataDesc,
    y: RnnDataDesc,
    h: TensorDesc,
    /// `c`'s shape differs from `h`'s with a projection.
    c: TensorDesc,
}

/// The raw handles of a call's data and state descriptors, valid while the prepared state is
/// locked (and, for a variable-length call, while its own descriptors are held).
#[derive(Clone, Copy)]
pub(super) struct Raw {
    pub x: sys::cudnnRNNDataDescriptor_t,
    pub y: sys::cudnnRNNDataDescriptor_t,
    pub h: sys::cudnnTensorDescriptor_t,
    pub c: sys::cudnnTensorDescriptor_t,
}

/// A variable-length call's own descriptors (cached ones cover full-length calls).
pub(super) struct HeldShapes(Option<Shapes>);

impl HeldShapes {
    pub fn none() -> Self {
        Self(None)
    }
}

/// A full-length call's (algorithm, dropout, seq, batch, train).
type TempKey = (RnnAlgo, bool, usize, usize, bool);

/// Everything cuDNN needs for one module on one device and dtype.
pub(super) struct Prepared {
    pub dtype: DType,
    no_dropout: DropoutDesc,
    /// The dropout descriptor and its random state, allocated once and reused by every call.
    dropout: Option<(DropoutDesc, CudaSlice<u8>)>,
    /// The seed generation the random state was last started from.
    generation: u64,
    /// RNN descriptors by (algorithm, with dropout), built when first used.
    descs: HashMap<(RnnAlgo, bool), AlgoDesc>,
    /// Weight space size in elements.
    pub space_len: usize,
    /// `None` when the canonical layout is cuDNN's own, so the weight tensor is used in place.
    pub remap: Option<Vec<Span>>,
    shapes: HashMap<(usize, usize), Shapes>,
    /// Work and reserve bytes of full-length calls by (algorithm, dropout, seq, batch, train).
    temp: HashMap<TempKey, (usize, usize)>,
    /// The workspace every call borrows (stream order keeps calls apart), grown as needed.
    work: Option<CudaSlice<u8>>,
}

// SAFETY: the raw descriptors inside are only used while the owning Mutex is held.
unsafe impl Send for Prepared {}

impl Prepared {
    /// Builds the state for `dtype`, `w_base` being the address of a weight tensor (only read
    /// to learn cuDNN's offsets), the dropout state started from `seed`'s seed.
    pub fn new(
        spec: &Spec,
        h: &Handle,
        stream: &Arc<CudaStream>,
        dtype: DType,
        w_base: u64,
        seed: &Dropout,
    ) -> Result<Self> {
        let no_dropout = DropoutDesc::new()?;
        cudnn!(cudnnSetDropoutDescriptor(
            no_dropout.0,
            h.0,
            0.0,
            std::ptr::null_mut(),
            0,
            0
        ))?;
        let plain = rnn_desc(spec, dtype, &no_dropout, RnnAlgo::Standard)?;
        let mut dropout = None;
        if spec.dropout > 0.0 {
            let mut size = 0usize;
            cudnn!(cudnnDropoutGetStatesSize(h.0, &mut size))?;
            let state = unsafe { stream.alloc::<u8>(size.max(1)) }?;
            let mut d = (DropoutDesc::new()?, state);
            seed_dropout(spec, h, stream, &mut d, seed.seed)?;
            dropout = Some(d);
        }
        let mut bytes = 0usize;
        cudnn!(cudnnGetRNNWeightSpaceSize(h.0, plain.0, &mut bytes))?;
        let elem = dtype.size_in_bytes();
        let spans = weight_spans(&spec.dims, h, &plain, bytes, w_base, elem)?;
        let identity = bytes == spec.dims.weight_count() * elem
            && spans.iter().all(|s| s.canonical == s.cudnn);
        let mut descs = HashMap::new();
        descs.insert(
            (RnnAlgo::Standard, false),
            AlgoDesc {
                desc: plain,
                built_for: None,
            },
        );
        Ok(Self {
            dtype,
            no_dropout,
            dropout,
            generation: seed.generation,
            descs,
            space_len: bytes / elem,
            remap: (!identity).then_some(spans),
            shapes: HashMap::new(),
            temp: HashMap::new(),
            work: None,
        })
    }

    /// Restarts the dropout random state from the module's seed if it was set since the
    /// state last started (`Rnn::set_seed`); says whether it did.
    pub fn follow_seed(
        &mut self,
        spec: &Spec,
        h: &Handle,
        stream: &Arc<CudaStream>,
        seed: &Dropout,
    ) -> Result<bool> {
        if seed.generation == self.generation {
            return Ok(false);
        }
        self.generation = seed.generation;
        if let Some(d) = self.dropout.as_mut() {
            seed_dropout(spec, h, stream, d, seed.seed)?;
            // Descriptors that hold the dropout state are rebuilt over the new one.
            self.descs.retain(|&(_, dropped), _| !dropped);
        }
        Ok(true)
    }

    /// cuDNN's dropout random state (the whole of it: every thread's generator), when the
    /// module has dropout. Reads the device.
    pub fn dropout_states(&self, dev: &CudaDevice) -> Result<Option<Vec<u8>>> {
        match &self.dropout {
            Some((_, states)) => Ok(Some(dev.cuda_stream().clone_dtoh(states)?)),
            None => Ok(None),
        }
    }

    /// Continues the dropout from `states` (of [`Self::dropout_states`], on a GPU of the same
    /// kind): written over the memory every dropout descriptor reads its generators from.
    pub fn set_dropout_states(&mut self, stream: &Arc<CudaStream>, states: &[u8]) -> Result<()> {
        match self.dropout.as_mut() {
            Some((_, memory)) if memory.len() == states.len() => {
                stream.memcpy_htod(states, memory)?;
                Ok(())
            }
            Some((_, memory)) => bail!(
                "rnn: a cuDNN dropout state of {} bytes, this GPU's has {} (another GPU or cuDNN)",
                states.len(),
                memory.len()
            ),
            None => bail!("rnn: a cuDNN dropout state for a module without dropout"),
        }
    }

    /// The RNN descriptor for `algo` (with the dropout state when `dropout`), built on first
    /// use; a dynamic persistent one is (re)compiled for `batch`. Errors when cuDNN refuses the
    /// configuration or the algorithm would lay the weights out differently.
    pub fn desc(
        &mut self,
        spec: &Spec,
        h: &Handle,
        algo: RnnAlgo,
        dropout: bool,
        batch: usize,
    ) -> Result<sys::cudnnRNNDescriptor_t> {
        let dropout = dropout && self.dropout.is_some();
        let key = (algo, dropout);
        if !self.descs.contains_key(&key) {
            let d = match (&self.dropout, dropout) {
                (Some((d, _)), true) => d,
                _ => &self.no_dropout,
            };
            let desc = rnn_desc(spec, self.dtype, d, algo)?;
            let mut bytes = 0usize;
            cudnn!(cudnnGetRNNWeightSpaceSize(h.0, desc.0, &mut bytes))?;
            if bytes != self.space_len * self.dtype.size_in_bytes() {
                bail!("rnn: cuDNN's {algo:?} algorithm sizes the weights differently")
            }
            let built_for = None;
            self.descs.insert(key, AlgoDesc { desc, built_for });
        }
        let entry = self.descs.get_mut(&key).expect("inserted above");
        if algo == RnnAlgo::PersistDynamic && entry.built_for != Some(batch) {
            cudnn!(cudnnBuildRNNDynamic(h.0, entry.desc.0, batch as i32))?;
            entry.built_for = Some(batch);
        }
        Ok(entry.desc.0)
    }

    /// The data and state descriptors of `call`: cached per `(seq, batch)` for full-length
    /// calls; built for the call (into `held`) when it has its own lengths.
    pub fn shapes(&mut self, spec: &Spec, call: &Call, held: &mut HeldShapes) -> Result<Raw> {
        let key = (call.seq, call.batch);
        let s = match &call.lengths {
            Some(lengths) => held
                .0
                .insert(build_shapes(spec, self.dtype, call, lengths)?),
            None => {
                if !self.shapes.contains_key(&key) {
                    let full = vec![call.seq; call.batch];
                    let built = build_shapes(spec, self.dtype, call, &full)?;
                    self.shapes.insert(key, built);
                }
                &self.shapes[&key]
            }
        };
        Ok(Raw {
            x: s.x.0,
            y: s.y.0,
            h: s.h.0,
            c: s.c.0,
        })
    }

    /// `(work, reserve)` bytes a call of `desc` needs: asked of cuDNN once per key for
    /// full-length calls, every time for a call with its own lengths.
    #[allow(clippy::too_many_arguments)]
    pub fn temp_sizes(
        &mut self,
        h: &Handle,
        desc: sys::cudnnRNNDescriptor_t,
        (algo, dropout): (RnnAlgo, bool),
        call: &Call,
        train: bool,
        shapes: Raw,
    ) -> Result<(usize, usize)> {
        let key = (algo, dropout, call.seq, call.batch, train);
        if call.lengths.is_none() {
            if let Some(&sizes) = self.temp.get(&key) {
                return Ok(sizes);
            }
        }
        let sizes = temp_sizes(h, desc, train, shapes)?;
        if call.lengths.is_none() {
            self.temp.insert(key, sizes);
        }
        Ok(sizes)
    }

    /// The shared workspace, at least `bytes` long; give it back with `return_workspace`.
    pub fn take_workspace(
        &mut self,
        stream: &Arc<CudaStream>,
        bytes: usize,
    ) -> Result<CudaSlice<u8>> {
        match self.work.take() {
            Some(w) if w.len() >= bytes => Ok(w),
            // The old one is freed in stream order, after the calls that used it.
            _ => Ok(unsafe { stream.alloc::<u8>(bytes.max(1)) }?),
        }
    }

    pub fn return_workspace(&mut self, work: CudaSlice<u8>) {
        self.work = Some(work);
    }

    /// The weights as cuDNN reads them: the module's tensor itself, or a copy in cuDNN's order.
    pub fn weight_space<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        stream: &Arc<CudaStream>,
        w: &CudaView<T>,
    ) -> Result<WeightSpace<T>> {
        let Some(spans) = &self.remap else {
            return Ok(WeightSpace::InPlace);
        };
        let mut space = stream.alloc_zeros::<T>(self.space_len)?;
        for sp in spans {
            stream.memcpy_dtod(
                &w.slice(sp.canonical..sp.canonical + sp.len),
                &mut space.slice_mut(sp.cudnn..sp.cudnn + sp.len),
            )?;
        }
        Ok(WeightSpace::Copied(space))
    }
}

/// The weights as cuDNN reads them: the module's tensor itself, or a copy in cuDNN's order.
pub(super) enum WeightSpace<T> {
    InPlace,
    Copied(CudaSlice<T>),
}

impl<T> WeightSpace<T> {
    /// The address to hand cuDNN: `in_place` (the tensor's) or the copy's.
    pub fn ptr<'a>(
        &'a self,
        stream: &'a CudaStream,
        in_place: u64,
    ) -> (u64, Option<impl Drop + 'a>) {
        match self {
            Self::InPlace => (in_place, None),
            Self::Copied(s) => {
                let (p, g) = s.device_ptr(stream);
                (p, Some(g))
            }
        }
    }
}

fn rnn_desc(spec: &Spec, dtype: DType, dropout: &DropoutDesc, algo: RnnAlgo) -> Result<RnnDesc> {
    use sys::{cudnnDirectionMode_t as Dir, cudnnMathType_t as M, cudnnRNNBiasMode_t as B};
    let d = &spec.dims;
    let dt = data_type(dtype)?;
    // Half types accumulate in f32 on tensor cores (PyTorch's choice too: f16 asks for
    // tensor-op math, bf16 takes the default, which allows them).
    let (math, prec) = match (spec.math, dtype) {
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
            // The chooser hands cuDNN one of its own algorithms; the others stand for Standard.
            RnnAlgo::Standard | RnnAlgo::Heuristic | RnnAlgo::Auto | RnnAlgo::Persistent => {
                sys::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_STANDARD
            }
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

/// (Re)starts the dropout random state from `seed`.
fn seed_dropout(
    spec: &Spec,
    h: &Handle,
    stream: &Arc<CudaStream>,
    (desc, state): &mut (DropoutDesc, CudaSlice<u8>),
    seed: u64,
) -> Result<()> {
    let size = state.len();
    let (p, _g) = state.device_ptr_mut(stream);
    cudnn!(cudnnSetDropoutDescriptor(
        desc.0,
        h.0,
        spec.dropout,
        p as *mut c_void,
        size,
        seed
    ))
}

/// Where cuDNN keeps each gate's matrix and bias, next to the canonical offsets.
fn weight_spans(
    d: &RnnDims,
    h: &Handle,
    desc: &RnnDesc,
    bytes: usize,
    base: u64,
    elem: usize,
) -> Result<Vec<Span>> {
    let (g, hid) = (d.mode.gates(), d.hidden_size);
    let (m_desc, b_desc) = (TensorDesc::new()?, TensorDesc::new()?);
    let mut spans = Vec::new();
    for layer in 0..d.num_layers {
        for dir in 0..d.num_directions {
            let blk = d.block(layer, dir);
            let pseudo = (layer * d.num_directions + dir) as i32;
            let proj = blk.w_hr.map(|_| LSTM_PROJECTION_ID);
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
                if let (Some(w_hr), LSTM_PROJECTION_ID) = (blk.w_hr, lin) {
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

fn build_shapes(spec: &Spec, dtype: DType, call: &Call, lengths: &[usize]) -> Result<Shapes> {
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
    let d = &spec.dims;
    let h_shape = d.h_shape(call.batch);
    Ok(Shapes {
        x: data(d.input_size)?,
        y: data(d.output_size())?,
        h: tensor(h_shape)?,
        c: tensor(d.c_shape(call.batch).unwrap_or(h_shape))?,
    })
}

/// `(work, reserve)` bytes a call needs, as cuDNN says.
pub(super) fn temp_sizes(
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
