//! The seam between the op and its GPU kernels: what the op asks of the GPU for one call
//! ([`GpuBackend`]), and the operands, reserves and gradient buffers that every kernel path
//! shares. The kernel paths sit side by side below it, neither importing the other: cuDNN
//! (`crate::cudnn`) and this crate's persistent LSTM and GRU kernels (`crate::persistent`).
//! Which one serves a call is decided in `crate::choose`, and `crate::registry`'s backend
//! routes each call there, with neither the op nor the layer knowing.

use crate::call::{Call, Dropout};
use crate::RnnAlgo;
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, CudaView, DevicePtrMut, DeviceRepr, SyncOnDrop,
};
use candle_core::cuda_backend::{CudaDType, CudaDevice};
use candle_core::{bail, CudaStorage, DType, Layout, Result, Storage, StorageRef, Tensor};
use std::any::Any;
use std::sync::Arc;

/// A GPU operand as candle hands it to a custom op.
pub(crate) type Operand<'a> = (&'a CudaStorage, &'a Layout);

/// The one float dtype that the operands `[x, w, s]` share; an error when they do not share
/// one, or it is not a float type the GPU paths take.
pub(crate) fn operand_dtype([x, w, s]: [Operand; 3]) -> Result<DType> {
    match (x.0.dtype(), w.0.dtype(), s.0.dtype()) {
        (a, b, c)
            if a == b
                && b == c
                && [DType::F16, DType::BF16, DType::F32, DType::F64].contains(&a) =>
        {
            Ok(a)
        }
        dtypes => bail!(
            "rnn on cuda: x, weight and state must share one float dtype (f16, bf16, f32 or \
             f64), got {dtypes:?}"
        ),
    }
}

/// The elements of a contiguous operand; `what` names it in the error.
pub(crate) fn view<'a, T: CudaDType>(
    s: &'a CudaStorage,
    l: &Layout,
    what: &str,
) -> Result<CudaView<'a, T>> {
    crate::kernels::view(s.as_cuda_slice::<T>()?, l)
        .map_err(|_| candle_core::Error::Msg(format!("rnn: {what} must be contiguous")))
}

/// What a training-mode forward keeps for its backward (cuDNN's reserve space, say); only
/// the backend that made it reads it.
pub(crate) type GpuReserve = Box<dyn Any + Send + Sync>;

/// What a forward reads, as every kernel path receives it: the call, its inter-layer dropout,
/// whether it trains (and so keeps what its backward needs), and the operands `[x, w, s]`: x
/// `[T, B, I]`, the flat weight and the packed state (contiguous, one dtype).
#[derive(Clone, Copy)]
pub(crate) struct ForwardInputs<'a> {
    pub call: &'a Call,
    pub dropout: Dropout,
    pub train: bool,
    pub ops: [Operand<'a>; 3],
    /// Whether the final state goes to a buffer of its own ([`Outputs::state`]) rather than
    /// behind `y`: where the op hands `y` and the state out as two tensors, so that the state
    /// needs no copy (`op::FinalState`).
    pub state_apart: bool,
}

/// A forward's outputs: `out`, the packed `[y | h_n | c_n]`, or `y` alone with the final state
/// `[h_n | c_n]` in `state` where [`ForwardInputs::state_apart`] asked for it.
pub(crate) struct Outputs {
    pub out: CudaStorage,
    pub state: Option<CudaStorage>,
}

/// What a forward gives: its outputs and, when it trains, what its backward needs.
pub(crate) type Forwarded = (Outputs, Option<GpuReserve>);

/// The buffers a forward of `call` writes, as [`Outputs`] holds them.
pub(crate) struct OutputBuffers<T> {
    out: CudaSlice<T>,
    state: Option<CudaSlice<T>>,
}

impl<T: CudaDType + DeviceRepr> OutputBuffers<T> {
    /// The buffers of `call`'s outputs, each made by `alloc` (of a length in elements): one
    /// packed, or with `apart` one for `y` and one for the final state.
    pub fn new(
        call: &Call,
        apart: bool,
        alloc: impl Fn(usize) -> Result<CudaSlice<T>>,
    ) -> Result<Self> {
        let (y, state) = (call.output_len(), call.state_len());
        Ok(match apart {
            true => Self {
                out: alloc(y)?,
                state: Some(alloc(state)?),
            },
            false => Self {
                out: alloc(y + state)?,
                state: None,
            },
        })
    }

    /// The addresses of `y` and of the final state (behind `y` where they are packed), with
    /// the guards that keep the buffers' uses in `stream`'s order while they are held.
    pub fn addresses<'a>(
        &'a mut self,
        stream: &'a Arc<CudaStream>,
        call: &Call,
    ) -> ([u64; 2], [Option<SyncOnDrop<'a>>; 2]) {
        let (y, y_guard) = self.out.device_ptr_mut(stream);
        match self.state.as_mut() {
            Some(state) => {
                let (s, s_guard) = state.device_ptr_mut(stream);
                ([y, s], [Some(y_guard), Some(s_guard)])
            }
            None => ([y, call.state_behind_y::<T>(y)], [Some(y_guard), None]),
        }
    }

    /// The buffers as the op's storages on `dev`.
    pub fn into_outputs(self, dev: &CudaDevice) -> Outputs {
        Outputs {
            out: CudaStorage::wrap_cuda_slice(self.out, dev.clone()),
            state: self
                .state
                .map(|s| CudaStorage::wrap_cuda_slice(s, dev.clone())),
        }
    }
}

/// What a backward gives: the gradients `(dx, dw, dstate)`, flat.
pub(crate) type Gradients = (Option<Tensor>, Option<Tensor>, Option<Tensor>);

/// What a backward reads: the call, the forward's inputs and output `y`, the gradients of `y`
/// and of the final state (contiguous; none when the loss does not read the state: zero), and
/// where it leaves the weight's gradient instead of returning it, if anywhere.
pub(crate) struct BackwardInputs<'a> {
    pub call: &'a Call,
    pub x: &'a Tensor,
    pub weight: &'a Tensor,
    pub state: &'a Tensor,
    pub y: &'a Tensor,
    pub grad_y: &'a Tensor,
    pub grad_state: Option<&'a Tensor>,
    /// Whether the gradient of the initial state is wanted (its input tracks gradients).
    pub state_grad: bool,
    /// Whether the gradient of x is wanted; a backend that can skip it returns none when not.
    pub input_grad: bool,
    /// A caller's buffer for the weight's gradient; the backward then returns no `dw`.
    pub dw_into: Option<DwInto<'a>>,
}

/// The storages a backward reads, locked for reading: x, weight, state, output `y`, its
/// gradient and (when there is one) the final state's gradient, in that order.
pub(crate) type Storages<'a> = Vec<(StorageRef<'a>, &'a Layout)>;

impl<'a> BackwardInputs<'a> {
    /// The storages of x, weight, state, `y`, `y`'s gradient and the final state's gradient
    /// (when there is one), for [`cuda_views`].
    pub fn storages(&self) -> Storages<'a> {
        [self.x, self.weight, self.state, self.y, self.grad_y]
            .into_iter()
            .chain(self.grad_state)
            .map(|t| t.storage_and_layout())
            .collect()
    }
}

/// The elements of each of `storages` (from [`BackwardInputs::storages`], in its order) and
/// their device; `path` names the kernel path of the forward in the error for a tensor that
/// is not on a GPU.
pub(crate) fn cuda_views<'a, T: CudaDType>(
    storages: &'a Storages,
    path: &str,
) -> Result<(Vec<CudaView<'a, T>>, CudaDevice)> {
    let mut views = Vec::with_capacity(storages.len());
    let mut device = None;
    for ((g, l), what) in storages.iter().zip([
        "x",
        "weight",
        "state",
        "output",
        "gradient",
        "state gradient",
    ]) {
        match &**g {
            Storage::Cuda(s) => {
                views.push(view::<T>(s, l, what)?);
                device.get_or_insert_with(|| s.device().clone());
            }
            _ => bail!("rnn backward: a {path} forward needs CUDA tensors in backward"),
        }
    }
    match device {
        Some(d) => Ok((views, d)),
        None => bail!("rnn backward: no tensors"),
    }
}

/// A caller's buffer (flat, of the weight's size and dtype) that a backward leaves the
/// weight's gradient in, added or written as `mode` says.
pub(crate) struct DwInto<'a> {
    pub buf: &'a mut CudaStorage,
    pub mode: crate::sink::SinkMode,
}

/// The elements of a caller's weight-gradient buffer (of [`DwInto`]), which must hold
/// `weights` of them.
pub(crate) fn weight_grad_buffer<T: CudaDType>(
    buf: &mut CudaStorage,
    weights: usize,
) -> Result<&mut CudaSlice<T>> {
    let into = buf.as_cuda_slice_mut::<T>()?;
    if into.len() != weights {
        bail!(
            "rnn backward: a weight-gradient buffer of {} elements for {weights} weights",
            into.len()
        );
    }
    Ok(into)
}

/// What the op asks of the GPU for one module: the whole RNN stack, forward and backward.
pub(crate) trait GpuBackend: Send + Sync {
    /// Runs one call forward: its packed output and, when it trains, what its backward needs.
    fn forward(&self, inputs: ForwardInputs) -> Result<Forwarded>;

    /// The gradients of the forward that left `reserve`; `dstate` only when
    /// `inputs.state_grad`, `dx` at least when `inputs.input_grad`, `dw` only without
    /// `inputs.dw_into`.
    fn backward(&self, reserve: GpuReserve, inputs: BackwardInputs) -> Result<Gradients>;

    /// The algorithm that served the last call of `(seq, batch, train)` (see `Rnn::auto_algo`).
    fn chosen_algo(&self, seq: usize, batch: usize, train: bool) -> Option<RnnAlgo>;

    /// The algorithm that served the module's last call (see `Rnn::last_algo`).
    fn last_algo(&self) -> Option<RnnAlgo>;

    /// Whether the backward of the forward that left `reserve` can leave the weight's gradient
    /// in a caller's buffer ([`BackwardInputs::dw_into`]).
    fn takes_weight_grad_buffer(&self, reserve: &GpuReserve) -> bool;

    /// Whether the flat weight is read in place rather than copied per call, once known.
    fn weights_in_place(&self) -> Option<bool>;

    /// The inter-layer dropout's random state on `dev`, as opaque bytes (empty where none ran
    /// there), for `Rnn::dropout_state`. Reads the device.
    fn dropout_state(&self, dev: &CudaDevice) -> Result<Vec<u8>>;

    /// Continues the inter-layer dropout on `dev` from `state` (of [`Self::dropout_state`]) once
    /// the module's seed is `(seed, generation)` (`DropoutSeed::set_position`): the next call
    /// of that generation starts from it.
    fn restore_dropout_state(&self, dev: &CudaDevice, seed: (u64, u64), state: &[u8])
        -> Result<()>;
}

/// Byte strings one after another, each after its length (a little-endian u64): how a GPU
/// path packs the dropout states of its parts into one opaque state.
pub(crate) fn pack(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// The byte strings of [`pack`] (none for an empty state); an error names `what` when the
/// bytes are not such a packing.
pub(crate) fn unpack<'a>(mut bytes: &'a [u8], what: &str) -> Result<Vec<&'a [u8]>> {
    let mut parts = Vec::new();
    while !bytes.is_empty() {
        let len = match bytes.split_first_chunk::<8>() {
            Some((len, rest)) if (u64::from_le_bytes(*len) as usize) <= rest.len() => {
                bytes = rest;
                u64::from_le_bytes(*len) as usize
            }
            _ => bail!("rnn: {what} is not a dropout state this crate wrote"),
        };
        let (part, rest) = bytes.split_at(len);
        parts.push(part);
        bytes = rest;
    }
    Ok(parts)
}
