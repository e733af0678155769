//! The layer: [`lstm`], [`gru`], [`rnn_tanh`] and [`rnn_relu`] build an [`Rnn`] that holds one
//! flat weight tensor (one `Var`, one gradient, one optimizer parameter) and runs the whole stack
//! as one op.

use crate::call::{Call, DropoutSeed};
use crate::layout::RnnDims;
use crate::lengths::{checked_lengths, SeqLengths};
use crate::op::{FinalState, GradSlot, RnnOp, StateSlot};
use crate::sink::SinkMode;
use crate::state::RnnState;
use crate::{RnnConfig, RnnMode};
use candle_core::{bail, DType, ModuleT, Result, Tensor};
use candle_nn::{Init, VarBuilder};
use std::path::Path;
use std::sync::Arc;

/// Where a module's inter-layer dropout masks stand ([`Rnn::dropout_state`]): the seed last
/// set, the calls since, and the GPU's random state on one device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DropoutState {
    /// The seed last set ([`Rnn::set_seed`]).
    pub seed: u64,
    /// Calls of the module since then.
    pub calls: u64,
    /// The GPU backend's random state on the device, opaque: cuDNN's dropout states, or the
    /// crate's kernels' mask counter; empty on the CPU, whose masks follow from the calls.
    pub device_state: Vec<u8>,
}

/// A stacked, optionally bidirectional LSTM or GRU.
#[derive(Clone)]
pub struct Rnn {
    weight: Tensor,
    dims: RnnDims,
    cfg: RnnConfig,
    /// The one seed of the dropout masks, shared with clones and `with_weight` copies: every
    /// call draws fresh masks from it, on the CPU and on the GPU.
    seed: Arc<DropoutSeed>,
    /// The kernels for tensors on a GPU, shared likewise (descriptors, dropout state).
    #[cfg(feature = "cuda")]
    gpu: Arc<dyn crate::backend::GpuBackend>,
    /// Where backward leaves the weight's gradient instead of returning it, and how
    /// (`with_weight_grad_sink_mode`).
    weight_grad: Option<(Tensor, SinkMode)>,
}

impl std::fmt::Debug for Rnn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rnn")
            .field("dims", &self.dims)
            .field("cfg", &self.cfg)
            .finish()
    }
}

/// An LSTM with PyTorch's `nn.LSTM` semantics.
pub fn lstm(input_size: usize, hidden_size: usize, cfg: RnnConfig, vb: VarBuilder) -> Result<Rnn> {
    rnn(RnnMode::Lstm, input_size, hidden_size, cfg, vb)
}

/// A GRU with PyTorch's `nn.GRU` semantics.
pub fn gru(input_size: usize, hidden_size: usize, cfg: RnnConfig, vb: VarBuilder) -> Result<Rnn> {
    rnn(RnnMode::Gru, input_size, hidden_size, cfg, vb)
}

/// An Elman RNN with `tanh`, PyTorch's `nn.RNN`.
pub fn rnn_tanh(
    input_size: usize,
    hidden_size: usize,
    cfg: RnnConfig,
    vb: VarBuilder,
) -> Result<Rnn> {
    rnn(RnnMode::RnnTanh, input_size, hidden_size, cfg, vb)
}

/// An Elman RNN with `relu`, PyTorch's `nn.RNN(nonlinearity="relu")`.
pub fn rnn_relu(
    input_size: usize,
    hidden_size: usize,
    cfg: RnnConfig,
    vb: VarBuilder,
) -> Result<Rnn> {
    rnn(RnnMode::RnnRelu, input_size, hidden_size, cfg, vb)
}

/// Builds the module. The weight is `vb`'s flat `weight` tensor, initialized like PyTorch's
/// (uniform in ±1/sqrt(hidden)); if `vb` instead holds PyTorch-named tensors
/// (`weight_ih_l0`, ...), as in a `state_dict` saved to safetensors, they are assembled.
pub fn rnn(
    mode: RnnMode,
    input_size: usize,
    hidden_size: usize,
    cfg: RnnConfig,
    vb: VarBuilder,
) -> Result<Rnn> {
    let dims = dims(mode, input_size, hidden_size, &cfg)?;
    let first = &dims.params()[0].name;
    let weight = if !vb.contains_tensor("weight") && vb.contains_tensor(first) {
        crate::pytorch::flat_from_var_builder(&dims, &vb)?
    } else {
        let k = 1.0 / (hidden_size as f64).sqrt();
        vb.get_with_hints(
            dims.weight_count(),
            "weight",
            Init::Uniform { lo: -k, up: k },
        )?
    };
    Rnn::from_weight(mode, input_size, hidden_size, cfg, weight)
}

fn dims(mode: RnnMode, input_size: usize, hidden_size: usize, cfg: &RnnConfig) -> Result<RnnDims> {
    if input_size == 0 || hidden_size == 0 || cfg.num_layers == 0 {
        bail!(
            "rnn: input_size, hidden_size and num_layers must be positive, got {input_size}, \
             {hidden_size}, {}",
            cfg.num_layers
        )
    }
    if !(0.0..1.0).contains(&cfg.dropout) {
        bail!("rnn: dropout must be in [0, 1), got {}", cfg.dropout)
    }
    if cfg.proj_size > 0 && (mode != RnnMode::Lstm || cfg.proj_size >= hidden_size) {
        bail!(
            "rnn: proj_size must be smaller than hidden_size ({hidden_size}) and needs an LSTM, \
             got proj_size {} for {mode:?}",
            cfg.proj_size
        )
    }
    Ok(RnnDims::new(mode, input_size, hidden_size, cfg))
}

/// Bytes to whose multiple a final state handed out as a view of the op's output must start
/// (see `Rnn::run`): 16, a whole vector load.
const STATE_ALIGN: usize = 16;

impl Rnn {
    /// Wraps an existing flat weight tensor in the canonical layout (see [`crate::layout`]).
    pub fn from_weight(
        mode: RnnMode,
        input_size: usize,
        hidden_size: usize,
        cfg: RnnConfig,
        weight: Tensor,
    ) -> Result<Self> {
        let dims = dims(mode, input_size, hidden_size, &cfg)?;
        if weight.dims() != [dims.weight_count()] {
            bail!(
                "rnn: weight must be a flat tensor of {} elements for {dims:?}, got shape {:?}",
                dims.weight_count(),
                weight.dims()
            )
        }
        if !weight.dtype().is_float() {
            bail!(
                "rnn: weight must be a float tensor, got {:?}",
                weight.dtype()
            )
        }
        Ok(Self {
            weight: weight.contiguous()?,
            dims,
            cfg,
            seed: Arc::new(DropoutSeed::new(cfg.seed)),
            #[cfg(feature = "cuda")]
            gpu: crate::registry::gpu_backend(dims, &cfg),
            weight_grad: None,
        })
    }

    /// The flat weight, in the layout of [`crate::layout`].
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The same module over another flat weight of the same size, often of another dtype: a
    /// half-precision copy of an f32 master weight, made once per step for mixed-precision
    /// training (gradients flow back through the cast). It shares the GPU descriptors and the
    /// dropout seed and state with `self`, so building it is free.
    pub fn with_weight(&self, weight: Tensor) -> Result<Self> {
        if weight.dims() != self.weight.dims() || !weight.dtype().is_float() {
            bail!(
                "rnn: with_weight needs a flat float weight of {} elements, got {:?} of shape {:?}",
                self.dims.weight_count(),
                weight.dtype(),
                weight.dims()
            )
        }
        Ok(Self {
            weight: weight.contiguous()?,
            ..self.clone()
        })
    }

    /// This module with backward adding the weight's gradient into `sink` (a tensor of the
    /// weight's shape and dtype, contiguous, on its device) instead of returning it: the
    /// weight then gets no gradient from candle's autograd, and cuDNN accumulates straight
    /// into the sink, without the zero-filled buffer and the add that candle spends on every
    /// gradient a custom op returns. As PyTorch's `.grad`, the sink sums over backward calls:
    /// zero it once its sum is used. Not available where cuDNN reads the weights through a
    /// copy in its own order (an error at backward).
    pub fn with_weight_grad_sink(&self, sink: Tensor) -> Result<Self> {
        self.with_weight_grad_sink_mode(sink, SinkMode::Add)
    }

    /// [`Rnn::with_weight_grad_sink`], with backward adding into the sink or overwriting it
    /// ([`SinkMode`]).
    pub fn with_weight_grad_sink_mode(&self, sink: Tensor, mode: SinkMode) -> Result<Self> {
        let w = &self.weight;
        if sink.dims() != w.dims() || sink.dtype() != w.dtype() || !sink.is_contiguous() {
            bail!(
                "rnn: a weight-gradient sink must be a contiguous {:?} tensor of shape {:?}, got \
                 {:?} of shape {:?}",
                w.dtype(),
                w.dims(),
                sink.dtype(),
                sink.dims()
            )
        }
        if !sink.device().same_device(w.device()) {
            bail!("rnn: the weight-gradient sink lives on another device than the weight")
        }
        Ok(Self {
            weight_grad: Some((sink, mode)),
            ..self.clone()
        })
    }

    /// The sizes that fix the weights and the state.
    pub fn dims(&self) -> &RnnDims {
        &self.dims
    }

    /// The options the module was built with.
    pub fn config(&self) -> &RnnConfig {
        &self.cfg
    }

    /// Views of the flat weight under PyTorch's names and shapes.
    pub fn named_weights(&self) -> Result<Vec<(String, Tensor)>> {
        self.dims
            .params()
            .into_iter()
            .map(|p| {
                Ok((
                    p.name.clone(),
                    self.weight.narrow(0, p.offset, p.len())?.reshape(p.shape)?,
                ))
            })
            .collect()
    }

    /// Restarts the dropout masks from `seed` (the CPU path's and the GPU's random state), so
    /// that a run resumed at this point draws the same masks as an uninterrupted one, and
    /// different seeds draw different masks.
    pub fn set_seed(&self, seed: u64) {
        self.seed.set(seed);
    }

    /// Where the inter-layer dropout masks stand on `device`: with
    /// [`restore_dropout_state`](Self::restore_dropout_state), a run resumed between two calls
    /// in another process draws the masks an uninterrupted one would. Reads the GPU's random
    /// state (cuDNN's dropout states, or the crate's kernels' mask counter), so call it between
    /// calls, not while a CUDA graph is being captured.
    pub fn dropout_state(&self, device: &candle_core::Device) -> Result<DropoutState> {
        let (seed, calls) = self.seed.position();
        let device_state = match device {
            #[cfg(feature = "cuda")]
            candle_core::Device::Cuda(dev) => self.gpu.dropout_state(dev)?,
            _ => Vec::new(),
        };
        Ok(DropoutState {
            seed,
            calls,
            device_state,
        })
    }

    /// Continues the inter-layer dropout masks from `state` (of
    /// [`dropout_state`](Self::dropout_state), on the same kind of device and kernels) on
    /// `device`.
    pub fn restore_dropout_state(
        &self,
        state: &DropoutState,
        device: &candle_core::Device,
    ) -> Result<()> {
        let generation = self.seed.set_position(state.seed, state.calls);
        #[cfg(not(feature = "cuda"))]
        let _ = generation;
        match device {
            #[cfg(feature = "cuda")]
            candle_core::Device::Cuda(dev) => {
                self.gpu
                    .restore_dropout_state(dev, (state.seed, generation), &state.device_state)
            }
            _ if state.device_state.is_empty() => Ok(()),
            _ => bail!("rnn: a GPU's dropout state cannot continue on the CPU"),
        }
    }

    /// The kernel that served the module's last call on a GPU: [`crate::RnnAlgo::Persistent`]
    /// for this crate's own kernels, else the cuDNN algorithm (never `Heuristic` or `Auto`,
    /// which choose among these); `None` before the first GPU call, and without the `cuda`
    /// feature. Shared with the module's clones and [`Rnn::with_weight`] copies.
    pub fn last_algo(&self) -> Option<crate::RnnAlgo> {
        #[cfg(feature = "cuda")]
        return self.gpu.last_algo();
        #[cfg(not(feature = "cuda"))]
        None
    }

    /// The kernel that served the last GPU call of `(seq, batch, train)`, as
    /// [`Rnn::last_algo`] names it, once a call of that shape has run.
    #[cfg(feature = "cuda")]
    pub fn auto_algo(&self, seq: usize, batch: usize, train: bool) -> Option<crate::RnnAlgo> {
        self.gpu.chosen_algo(seq, batch, train)
    }

    /// Whether cuDNN reads the weight tensor in place (its layout is the canonical one) rather
    /// than a per-call copy; known once a call has run on the GPU.
    #[cfg(feature = "cuda")]
    pub fn cudnn_weights_in_place(&self) -> Option<bool> {
        self.gpu.weights_in_place()
    }

    /// Writes the weights as a safetensors file in PyTorch's names (see [`save_pytorch`]).
    pub fn save_pytorch(&self, prefix: &str, path: impl AsRef<Path>) -> Result<()> {
        crate::pytorch::save_named(&self.dims, self.named_weights()?, prefix, path.as_ref())
    }

    /// A zero state for `batch` sequences.
    pub fn zero_state(&self, batch: usize) -> Result<RnnState> {
        let packed = Tensor::zeros(
            self.dims.state_shape(batch),
            self.weight.dtype(),
            self.weight.device(),
        )?;
        Ok(self.state(packed, batch))
    }

    /// Inference: no dropout. Returns the output sequence and the final state.
    pub fn forward(&self, x: &Tensor, state: Option<&RnnState>) -> Result<(Tensor, RnnState)> {
        self.forward_t(x, state, false)
    }

    /// `x` is `[seq, batch, input]` (`[batch, seq, input]` with `batch_first`); the output is
    /// `[seq, batch, D*hidden]` likewise. `train` turns inter-layer dropout on. Gradients flow
    /// whenever an input (usually the weight `Var`) tracks them.
    ///
    /// Each call's backward runs once: it consumes what the forward kept for it (cuDNN's
    /// reserve space, which its backward overwrites), so a second `backward()` over the same
    /// graph fails with "no saved forward state" where candle's own ops would run again. Sum
    /// the losses into one before a single `backward()`, or run the forward again.
    pub fn forward_t(
        &self,
        x: &Tensor,
        state: Option<&RnnState>,
        train: bool,
    ) -> Result<(Tensor, RnnState)> {
        self.run(x, None, state, train)
    }

    /// Variable-length sequences in a padded `x` (layout as [`Rnn::forward_t`]): sample `b`
    /// has `lengths[b]` valid steps, each length in `1..=seq`. Outputs past a sample's length
    /// are exactly zero, its final state is the one after its last valid step, the reverse
    /// direction starts at its own end, and no gradient reaches the padding (PyTorch's
    /// `PackedSequence` semantics, cuDNN's padded I/O). `lengths` may be a host slice or a
    /// u32/i64 tensor.
    pub fn forward_with_lengths(
        &self,
        x: &Tensor,
        lengths: &(impl SeqLengths + ?Sized),
        state: Option<&RnnState>,
        train: bool,
    ) -> Result<(Tensor, RnnState)> {
        self.run(x, Some(lengths.to_lengths()?), state, train)
    }

    fn run(
        &self,
        x: &Tensor,
        lengths: Option<Vec<usize>>,
        state: Option<&RnnState>,
        train: bool,
    ) -> Result<(Tensor, RnnState)> {
        let x = self.time_major(x)?;
        let (seq, batch, _) = x.dims3()?;
        let lengths = lengths
            .map(|l| checked_lengths(l, seq, batch))
            .transpose()?;
        // Without an initial state the op's state operand is the weight, a placeholder that no
        // path reads (`Call::zero_state`): no zero state to allocate and fill (a graph node
        // fewer a call).
        let (state, zero_state) = match state {
            Some(s) => (self.checked_state(s, batch)?, false),
            None => (self.weight.clone(), true),
        };
        let dropout = self
            .seed
            .next_call(if train { self.cfg.dropout } else { 0.0 });
        let tracked = x.track_op() || self.weight.track_op() || state.track_op();
        let call = Call {
            dims: self.dims,
            seq,
            batch,
            lengths,
            zero_state,
        };
        let (grad_state, state_apart) = (GradSlot::default(), StateSlot::default());
        let at = call.output_len();
        let final_state = FinalState {
            shape: self.dims.state_shape(batch).into(),
            grad_state: grad_state.clone(),
            state: state_apart.clone(),
        };
        // Without a backward, `y` and the final state are views of the op's packed output
        // (`RnnOp`'s `whole`), with no copy of the state (a graph node fewer a call), where the
        // state starts on a 16-byte boundary, as the kernels read it when it comes back as
        // the next call's initial state. Elsewhere, and in training, the final state is a
        // second op on `y`, which takes the buffer the op's forward made it in (see `crate::op`).
        let state_len = final_state.shape.elem_count();
        let views = !tracked && (at * x.dtype().size_in_bytes()) % STATE_ALIGN == 0;
        let op = RnnOp::new(
            call,
            dropout,
            // cuDNN's inference mode skips dropout, so dropout also needs training mode.
            tracked || dropout.active(),
            #[cfg(feature = "cuda")]
            self.gpu.clone(),
            (self.weight_grad.clone(), grad_state, state_apart),
            views,
        );
        let (y, state) = if tracked {
            let y = x.apply_op3(&self.weight, &state, op)?;
            let state = y.apply_op1(final_state)?;
            (y, state)
        } else if views {
            let packed = x.apply_op3_no_bwd(&self.weight, &state, &op)?;
            let y = packed
                .narrow(0, 0, at)?
                .reshape((seq, batch, self.dims.output_size()))?;
            let state = packed
                .narrow(0, at, state_len)?
                .reshape(final_state.shape.clone())?;
            (y, state)
        } else {
            let y = x.apply_op3_no_bwd(&self.weight, &state, &op)?;
            let state = y.apply_op1_no_bwd(&final_state)?;
            (y, state)
        };
        let y = if self.cfg.batch_first {
            y.transpose(0, 1)?
        } else {
            y
        };
        Ok((y, self.state(state, batch)))
    }

    /// Checks `x` and returns it time-major and contiguous.
    fn time_major(&self, x: &Tensor) -> Result<Tensor> {
        let layout = if self.cfg.batch_first {
            "[batch, seq, input]"
        } else {
            "[seq, batch, input]"
        };
        let &[a, b, features] = x.dims() else {
            bail!("rnn: x must have rank 3 {layout}, got shape {:?}", x.dims())
        };
        if features != self.dims.input_size {
            bail!(
                "rnn: x must have {} input features {layout}, got shape {:?}",
                self.dims.input_size,
                x.dims()
            )
        }
        if a == 0 || b == 0 {
            bail!(
                "rnn: x has an empty sequence or batch, shape {:?}",
                x.dims()
            )
        }
        self.check_like_weight(x, "x")?;
        let x = if self.cfg.batch_first {
            x.transpose(0, 1)?
        } else {
            x.clone()
        };
        x.contiguous()
    }

    fn state(&self, packed: Tensor, batch: usize) -> RnnState {
        RnnState::with_shapes(packed, self.dims.h_shape(batch), self.dims.c_shape(batch))
    }

    fn checked_state(&self, s: &RnnState, batch: usize) -> Result<Tensor> {
        let want = self.dims.state_shape(batch);
        if s.packed().dims() != want.as_slice() {
            let what = match (want.len(), self.dims.mode.state_slots()) {
                (1, _) => "h and c flattened and concatenated",
                (_, 2) => "h and c stacked, layers*directions, batch, hidden",
                _ => "h, layers*directions, batch, hidden",
            };
            bail!(
                "rnn: state must be {want:?} ({what}), got {:?}",
                s.packed().dims()
            )
        }
        self.check_like_weight(s.packed(), "state")?;
        s.packed().contiguous()
    }

    fn check_like_weight(&self, t: &Tensor, what: &str) -> Result<()> {
        let (dt, wdt) = (t.dtype(), self.weight.dtype());
        if dt != wdt {
            bail!("rnn: {what} has dtype {dt:?} but the weights are {wdt:?}")
        }
        if !t.device().same_device(self.weight.device()) {
            bail!(
                "rnn: {what} is on {:?} but the weights are on {:?}",
                t.device().location(),
                self.weight.device().location()
            )
        }
        Ok(())
    }

    /// The weight's dtype, which inputs and states must share.
    pub fn dtype(&self) -> DType {
        self.weight.dtype()
    }
}

/// `xs.apply_t(&rnn, train)`: the output sequence from a zero state.
impl ModuleT for Rnn {
    fn forward_t(&self, xs: &Tensor, train: bool) -> Result<Tensor> {
        Ok(Rnn::forward_t(self, xs, None, train)?.0)
    }
}

/// Writes `rnn`'s weights as a safetensors file with PyTorch's names under the submodule
/// `prefix` (`"lstm"` or `"lstm."` give `lstm.weight_ih_l0`, ...; `""` the bare names), as
/// `torch.save(model.state_dict())` names them. A single-bias module also writes zero
/// `bias_hh` tensors, so that `nn.LSTM`/`nn.GRU` load the file as it is and compute the same.
pub fn save_pytorch(rnn: &Rnn, prefix: &str, path: impl AsRef<Path>) -> Result<()> {
    rnn.save_pytorch(prefix, path)
}
