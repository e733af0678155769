//! The tutorial's model: embedding → dropout → stacked LSTM (dropout between layers) → dropout
//! → softmax layer. The LSTM is either the fused cuDNN op or a stack of candle-nn's step-loop
//! LSTM cells (the classic CudnnLSTM vs BasicLSTMCell comparison: same model, two kernels).

pub mod columns;
pub mod dropout;
pub mod owned_linear;
pub mod xent;

use crate::config::precision::PrecisionPlan;
use crate::config::{LmConfig, LstmBias};
use crate::model::dropout::DropoutRng;
use crate::model::owned_linear::GradSlot;
use crate::optim::{Lookup, OwnedGrad};
use anyhow::{bail, ensure, Result};
use candle_core::{DType, Device, Tensor, Var};
use candle_cudnn_rnn::{
    Launch, MathMode, ParamKind, Rnn, RnnAlgo, RnnConfig, RnnDims, RnnMode, RnnState, SinkMode,
};
use candle_nn::rnn::{LSTMConfig, LSTMState, RNN};
use candle_nn::{Init, Module, VarBuilder};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The LSTM's kernel, as a run records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RnnKind {
    /// The fused op of candle-cudnn-rnn: cuDNN on a GPU, the op's own CPU path on the CPU
    /// (`--rnn cudnn`; checkpoints of older builds say "cudnn").
    #[serde(alias = "cudnn")]
    Fused,
    /// The fused op with its own persistent LSTM kernels on CUDA (bf16 and f16; cuDNN for
    /// what they do not take, f32 included); the same weights as `fused`.
    Persistent,
    /// The fused op with each call's kernel chosen by the op's rules (`RnnAlgo::Heuristic`: its
    /// persistent kernels or one of cuDNN's); the same weights as `fused`.
    Heuristic,
    /// candle-nn's LSTM, one cell step at a time.
    CandleNn,
}

/// `--rnn`: a kernel, or `auto`: on a GPU the fused op with its default choice of kernel
/// (`RnnAlgo::Heuristic`: the rules of `candle_cudnn_rnn`'s `choose.rs` pick each call's kernel,
/// its own persistent kernels or one of cuDNN's); on the CPU the fused op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RnnChoice {
    Auto,
    /// The fused op (cuDNN on a GPU): what a run records as `fused`.
    #[value(alias = "fused")]
    Cudnn,
    Persistent,
    CandleNn,
}

impl RnnChoice {
    /// The kernel for a run on `device`; `saved`, a resumed run's kernel, is what `auto` keeps.
    pub fn resolve(self, device: &Device, saved: Option<RnnKind>) -> RnnKind {
        self.resolve_for(device.is_cuda(), saved)
    }

    fn resolve_for(self, on_gpu: bool, saved: Option<RnnKind>) -> RnnKind {
        match (self, saved) {
            (RnnChoice::Auto, Some(kind)) => kind,
            (RnnChoice::Auto, None) if on_gpu => RnnKind::Heuristic,
            (RnnChoice::Auto, None) => RnnKind::Fused,
            (RnnChoice::Cudnn, _) => RnnKind::Fused,
            (RnnChoice::Persistent, _) => RnnKind::Persistent,
            (RnnChoice::CandleNn, _) => RnnKind::CandleNn,
        }
    }
}

enum Recurrent {
    Fused(Rnn),
    Loop(Vec<candle_nn::LSTM>),
}

/// The LSTM state carried from batch to batch.
#[derive(Clone)]
pub enum LmState {
    Fused(RnnState),
    Loop(Vec<LSTMState>),
}

impl LmState {
    /// Overwrites this state's memory with `next` (a state of the same model and batch).
    pub fn assign(&self, next: &LmState) -> Result<()> {
        let set = |to: &Tensor, from: &Tensor| -> Result<()> {
            Ok(to.slice_set(&from.reshape(to.shape())?.contiguous()?, 0, 0)?)
        };
        match (self, next) {
            (LmState::Fused(a), LmState::Fused(b)) => set(a.packed(), b.packed()),
            (LmState::Loop(a), LmState::Loop(b)) if a.len() == b.len() => {
                a.iter().zip(b).try_for_each(|(a, b)| {
                    set(&a.h, &b.h)?;
                    set(&a.c, &b.c)
                })
            }
            _ => bail!("assigning a state of another model"),
        }
    }

    /// Its tensors, in a fixed order: the fused op's packed state, or each layer's h and c.
    pub fn parts(&self) -> Vec<Tensor> {
        match self {
            LmState::Fused(s) => vec![s.packed().clone()],
            LmState::Loop(v) => v.iter().flat_map(|s| [s.h.clone(), s.c.clone()]).collect(),
        }
    }

    /// Overwrites this state's memory with `parts` (of [`Self::parts`], from a state of the
    /// same model and batch, on any device).
    pub fn assign_parts(&self, parts: &[Tensor]) -> Result<()> {
        let mine = self.parts();
        ensure!(
            parts.len() == mine.len(),
            "a carried state of {} tensors, this model's has {}",
            parts.len(),
            mine.len()
        );
        for (to, from) in mine.iter().zip(parts) {
            ensure!(
                (to.dims(), to.dtype()) == (from.dims(), from.dtype()),
                "a carried state tensor {:?} {:?}, this model's is {:?} {:?}",
                from.dims(),
                from.dtype(),
                to.dims(),
                to.dtype()
            );
            to.slice_set(&from.to_device(to.device())?, 0, 0)?;
        }
        Ok(())
    }

    pub fn detach(&self) -> Self {
        match self {
            LmState::Fused(s) => LmState::Fused(s.detach()),
            LmState::Loop(v) => LmState::Loop(
                v.iter()
                    .map(|s| LSTMState::new(s.h.detach(), s.c.detach()))
                    .collect(),
            ),
        }
    }
}

/// Dropout masks from a seeded counter-based generator (`crate::model::dropout`), so that a
/// resumed run draws what an uninterrupted one would, on the CPU and on a GPU alike: its seed
/// and step counter live with the tensors (in device memory on a GPU, so a step replayed from a
/// CUDA graph draws new masks). Each dropout of a step takes the next slot; `end_step` moves to
/// the next step.
pub struct Masks {
    seed: u64,
    rng: Option<DropoutRng>,
    slot: u32,
}

impl Masks {
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            rng: None,
            slot: 0,
        }
    }

    pub fn reseed(&mut self, seed: u64, device: &Device) -> Result<()> {
        (self.seed, self.slot) = (seed, 0);
        match &self.rng {
            Some(d) => d.reseed(seed)?,
            None => self.rng = Some(DropoutRng::new(seed, device)?),
        }
        Ok(())
    }

    /// Inverted dropout with probability `p`.
    pub fn dropout(&mut self, x: &Tensor, p: f32) -> Result<Tensor> {
        if p <= 0.0 {
            return Ok(x.clone());
        }
        let rng = match &mut self.rng {
            Some(rng) => rng,
            none => none.insert(DropoutRng::new(self.seed, x.device())?),
        };
        self.slot += 1;
        Ok(rng.dropout(x, p, self.slot - 1)?)
    }

    /// Ends a step: the next one draws other masks.
    pub fn end_step(&mut self) -> Result<()> {
        if self.slot > 0 {
            if let Some(d) = &self.rng {
                d.advance()?;
            }
        }
        self.slot = 0;
        Ok(())
    }

    /// The steps whose masks were drawn since the seed was set (reads the device), for a
    /// checkpoint taken between steps.
    pub fn steps_done(&self) -> Result<u64> {
        match &self.rng {
            Some(d) => Ok(d.position()?.1),
            None => Ok(0),
        }
    }

    /// Continues after `steps` steps of the current seed, as a resumed run must (between steps).
    pub fn skip_to(&mut self, steps: u64, device: &Device) -> Result<()> {
        let seed = self.seed;
        self.reseed(seed, device)?;
        match &self.rng {
            Some(d) => Ok(d.set_position(seed, steps)?),
            None => Ok(()),
        }
    }

    /// Forgets the slots a step that did not run took (its next try draws the same masks).
    #[cfg(feature = "cuda")]
    pub fn restart_step(&mut self) {
        self.slot = 0;
    }
}

/// What a forward gives: its output (logits or cost), the next state and, when training, the
/// embedding lookup whose gradient the optimizer applies.
pub type Ran = (Tensor, LmState, Option<Lookup>);

/// Where a model's dropout generators stand between two steps, as a checkpoint keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaskPosition {
    /// Steps whose masks ptb-lm's own generator drew since its seed was set.
    pub steps: u64,
    /// The fused LSTM's inter-layer masks: its seed and its calls since (the GPU's random state
    /// is kept beside, as bytes); `None` for candle-nn's cells.
    pub rnn: Option<(u64, u64)>,
}

/// The fused LSTM's sizes under `cfg`.
pub fn rnn_dims(cfg: &LmConfig) -> RnnDims {
    let h = cfg.hidden_size;
    RnnDims::new(
        RnnMode::Lstm,
        h,
        h,
        &rnn_config(cfg, MathMode::Fp32, (RnnKind::Fused, Launch::Eager)),
    )
}

/// The fused LSTM's configuration: `kind` names its algorithm, `launch` how its calls run
/// (replayed from CUDA graphs, or eagerly), which the default algorithm's rules read.
fn rnn_config(cfg: &LmConfig, math: MathMode, (kind, launch): (RnnKind, Launch)) -> RnnConfig {
    RnnConfig {
        num_layers: cfg.num_layers,
        dropout: cfg.dropout(),
        single_bias: cfg.lstm_bias == LstmBias::Single,
        math,
        algo: match kind {
            RnnKind::Persistent => RnnAlgo::Persistent,
            RnnKind::Heuristic => RnnAlgo::Heuristic,
            RnnKind::Fused | RnnKind::CandleNn => RnnAlgo::Standard,
        },
        launch,
        ..Default::default()
    }
}

/// The elements of variable `name` (of `len` elements) that start at zero rather than uniform
/// in ±init_scale: the single LSTM bias, as TensorFlow's cells initialize it.
pub fn zero_init_ranges(cfg: &LmConfig, name: &str, len: usize) -> Vec<Range<usize>> {
    if cfg.lstm_bias != LstmBias::Single {
        return Vec::new();
    }
    match name {
        "rnn.weight" => rnn_dims(cfg)
            .params()
            .into_iter()
            .filter(|p| p.kind == ParamKind::BiasIh)
            .map(|p| p.offset..p.offset + p.len())
            .collect(),
        n if n.starts_with("rnn.bias_ih") => std::iter::once(0..len).collect(),
        _ => Vec::new(),
    }
}

pub struct PtbModel {
    embedding: Tensor,
    rnn: Recurrent,
    /// The fused LSTM's weight gradient, which its backward adds here in the layers' dtype,
    /// and the softmax weight's, left here by its backward (see `owned_gradients`); made by
    /// `with_owned_gradients`.
    rnn_grad: Option<Tensor>,
    softmax_grad: Option<GradSlot>,
    /// The softmax bias's gradient, when its product leaves it here (`owned_linear::linear_t`).
    softmax_bias_grad: Option<GradSlot>,
    /// In half precision, the fused LSTM's and the softmax layer's weights in the layers'
    /// dtype, which the optimizer's update refreshes (`OwnedGrad::copy`) instead of each step
    /// casting them anew; made by `with_owned_gradients`.
    rnn_copy: Option<Tensor>,
    softmax_copy: Option<Tensor>,
    softmax: candle_nn::Linear,
    dropout: f32,
    hidden: usize,
    /// What the layers compute in: f32, or a half type over half copies of the f32 weights
    /// (kept by the update in training, cast each call otherwise).
    dtype: DType,
}

impl PtbModel {
    /// Builds the model; every parameter is created through `vb` (uniform in ±init_scale when
    /// new), in f32 whatever dtype the plan's layers compute in; its fused LSTM's calls run as
    /// `launch` says.
    pub fn new(
        cfg: &LmConfig,
        vocab: usize,
        (kind, launch): (RnnKind, Launch),
        plan: &PrecisionPlan,
        vb: VarBuilder,
    ) -> Result<Self> {
        let (math, dtype) = (plan.rnn_math, plan.compute);
        if kind == RnnKind::CandleNn && dtype != DType::F32 {
            bail!("--rnn candle-nn computes in f32 only (fp32 or tf32), not {dtype:?}")
        }
        let (h, s) = (cfg.hidden_size, cfg.init_scale);
        let init = Init::Uniform { lo: -s, up: s };
        let embedding = vb.get_with_hints((vocab, h), "embedding.weight", init)?;
        let rnn = match kind {
            RnnKind::Fused | RnnKind::Persistent | RnnKind::Heuristic => {
                let rcfg = rnn_config(cfg, math, (kind, launch));
                let dims = RnnDims::new(RnnMode::Lstm, h, h, &rcfg);
                let w = vb.get_with_hints(dims.weight_count(), "rnn.weight", init)?;
                Recurrent::Fused(Rnn::from_weight(RnnMode::Lstm, h, h, rcfg, w)?)
            }
            RnnKind::CandleNn => {
                let layers = (0..cfg.num_layers)
                    .map(|l| {
                        let single = cfg.lstm_bias == LstmBias::Single;
                        let lc = LSTMConfig {
                            w_ih_init: init,
                            w_hh_init: init,
                            b_ih_init: Some(if single { Init::Const(0.0) } else { init }),
                            b_hh_init: (!single).then_some(init),
                            layer_idx: l,
                            ..Default::default()
                        };
                        candle_nn::lstm(h, h, lc, vb.pp("rnn"))
                    })
                    .collect::<candle_core::Result<_>>()?;
                Recurrent::Loop(layers)
            }
        };
        let w = vb.get_with_hints((vocab, h), "softmax.weight", init)?;
        let b = vb.get_with_hints(vocab, "softmax.bias", init)?;
        Ok(Self {
            embedding,
            rnn_grad: None,
            softmax_grad: None,
            softmax_bias_grad: None,
            rnn_copy: None,
            softmax_copy: None,
            rnn,
            softmax: candle_nn::Linear::new(w, Some(b)),
            dropout: cfg.dropout(),
            hidden: h,
            dtype,
        })
    }

    /// For training: the fused LSTM's backward writes its weight gradient into a buffer of this
    /// model (one backward per step: the buffer needs no zeroing; the persistent kernel's GEMMs
    /// write into it directly), and the softmax layer's backward leaves its
    /// weight's in a slot (`crate::model::owned_linear`), rather than handing them to autograd, which
    /// would add each into a zero-filled buffer and then, in half precision, cast it to f32 and
    /// add it into another; the optimizer takes them (`owned_gradients`). In half precision
    /// the two layers then read copies of their weights in their dtype, made here (so after
    /// the weights are set) and refreshed by each update.
    pub fn with_owned_gradients(mut self) -> Result<Self> {
        let half = self.dtype != DType::F32;
        // Detached, as in `forward`: a tracked cast would wait for a gradient that never comes.
        let copy = |w: &Tensor| -> Result<Option<Tensor>> {
            Ok(half.then(|| w.detach().to_dtype(self.dtype)).transpose()?)
        };
        if let Recurrent::Fused(r) = &self.rnn {
            let w = r.weight();
            self.rnn_grad = Some(Tensor::zeros(w.shape(), self.dtype, w.device())?);
            self.rnn_copy = copy(w)?;
        }
        self.softmax_copy = copy(self.softmax.weight())?;
        self.softmax_grad = Some(GradSlot::default());
        self.softmax_bias_grad = Some(GradSlot::default());
        Ok(self)
    }

    /// The kernel that served the fused LSTM's last GPU call (`Rnn::last_algo`), its name as
    /// the op's `RnnAlgo` spells it; `None` before one, on the CPU and for candle-nn's cells.
    pub fn lstm_kernel(&self) -> Option<String> {
        match &self.rnn {
            Recurrent::Fused(r) => r.last_algo().map(|a| format!("{a:?}")),
            Recurrent::Loop(_) => None,
        }
    }

    /// The gradients this model's layers kept themselves in the last backward: the LSTM's
    /// buffer (which its next backward overwrites), the softmax weight's and, when it left it, its bias's
    /// (taken from their slots).
    pub fn owned_gradients(&self) -> Result<Vec<OwnedGrad>> {
        let mut out = Vec::new();
        if let (Recurrent::Fused(r), Some(g)) = (&self.rnn, &self.rnn_grad) {
            out.push(OwnedGrad {
                var: r.weight().clone(),
                grad: g.clone(),
                reset: false,
                copy: self.rnn_copy.clone(),
            });
        }
        if let Some(g) = self
            .softmax_grad
            .as_ref()
            .map(GradSlot::take)
            .transpose()?
            .flatten()
        {
            out.push(OwnedGrad {
                var: self.softmax.weight().clone(),
                grad: g,
                reset: false,
                copy: self.softmax_copy.clone(),
            });
        }
        // The bias's, when the softmax product left it (on a GPU in half precision).
        if let (Some(b), Some(slot)) = (self.softmax.bias(), &self.softmax_bias_grad) {
            if let Some(g) = slot.take()? {
                out.push(OwnedGrad {
                    var: b.clone(),
                    grad: g,
                    reset: false,
                    copy: None,
                });
            }
        }
        Ok(out)
    }

    pub fn zero_state(&self, batch: usize) -> Result<LmState> {
        Ok(match &self.rnn {
            Recurrent::Fused(r) => {
                let packed = r.zero_state(batch)?.packed().to_dtype(self.dtype)?;
                LmState::Fused(RnnState::from_packed(packed))
            }
            Recurrent::Loop(layers) => LmState::Loop(
                layers
                    .iter()
                    .map(|l| l.zero_state(batch))
                    .collect::<candle_core::Result<_>>()?,
            ),
        })
    }

    /// Restarts every dropout generator from `seed`.
    pub fn reseed(&self, masks: &mut Masks, seed: u64) -> Result<()> {
        masks.reseed(seed, self.embedding.device())?;
        if let Recurrent::Fused(r) = &self.rnn {
            r.set_seed(seed.wrapping_add(1));
        }
        Ok(())
    }

    /// Where every dropout generator stands between two steps: the steps of `masks` and the
    /// fused LSTM's inter-layer masks (with the GPU's random state as bytes), for a checkpoint.
    pub fn mask_position(&self, masks: &Masks) -> Result<(MaskPosition, Vec<u8>)> {
        let (rnn, bytes) = match &self.rnn {
            Recurrent::Fused(r) => {
                let s = r.dropout_state(&self.device())?;
                (Some((s.seed, s.calls)), s.device_state)
            }
            Recurrent::Loop(_) => (None, Vec::new()),
        };
        let position = MaskPosition {
            steps: masks.steps_done()?,
            rnn,
        };
        Ok((position, bytes))
    }

    /// Continues every dropout generator from `position` and `bytes` (of
    /// [`Self::mask_position`]), after [`Self::reseed`] with the same seed.
    pub fn restore_masks(
        &self,
        masks: &mut Masks,
        position: &MaskPosition,
        bytes: &[u8],
    ) -> Result<()> {
        masks.skip_to(position.steps, &self.device())?;
        match (&self.rnn, position.rnn) {
            (Recurrent::Fused(r), Some((seed, calls))) => {
                let state = candle_cudnn_rnn::DropoutState {
                    seed,
                    calls,
                    device_state: bytes.to_vec(),
                };
                Ok(r.restore_dropout_state(&state, &self.device())?)
            }
            (Recurrent::Loop(_), None) => Ok(()),
            _ => bail!("the checkpoint's dropout state is another LSTM kernel's"),
        }
    }

    /// `ids` is time-major `[steps, batch]`; returns logits `[steps * batch, vocab]`, the next
    /// state and, when training, the embedding lookup whose gradient the optimizer applies.
    pub fn forward(
        &self,
        ids: &Tensor,
        state: &LmState,
        masks: &mut Masks,
        train: bool,
    ) -> Result<Ran> {
        let (y, state, lookup) = self.below_softmax(ids, state, masks, train)?;
        Ok((self.logits(&y, train)?, state, lookup))
    }

    /// A training step's forward to its cost against `targets` ([`sequence_loss`] of the
    /// logits), the next state and the embedding lookup. With the gradients the layers keep
    /// themselves, the softmax layer and its cross-entropy are one op
    /// (`owned_linear::linear_t_xent`).
    pub fn train_loss(
        &self,
        ids: &Tensor,
        targets: &Tensor,
        state: &LmState,
        masks: &mut Masks,
    ) -> Result<Ran> {
        let steps = ids.dim(0)?;
        let (y, state, lookup) = self.below_softmax(ids, state, masks, true)?;
        let loss = match &self.softmax_grad {
            Some(slot) => {
                let bias = self.softmax.bias().zip(self.softmax_bias_grad.as_ref());
                let w = self.softmax_weight_in_dtype()?;
                let rows = crate::model::owned_linear::linear_t_xent(&y, &w, bias, targets, slot)?;
                sequence_cost(&rows, steps)?
            }
            None => sequence_loss(&self.logits(&y, true)?, targets, steps)?,
        };
        Ok((loss, state, lookup))
    }

    /// Everything below the softmax layer: its input `[steps * batch, hidden]` (the top
    /// layer's output after dropout), the next state and, when training, the lookup.
    fn below_softmax(
        &self,
        ids: &Tensor,
        state: &LmState,
        masks: &mut Masks,
        train: bool,
    ) -> Result<Ran> {
        let (steps, batch) = ids.dims2()?;
        let p = if train { self.dropout } else { 0.0 };
        let ids = ids.flatten_all()?;
        let (rows, lookup) = if train {
            let rows = Var::from_tensor(&self.embedding.detach().index_select(&ids, 0)?)?;
            let lookup = Lookup {
                table: self.embedding.clone(),
                ids,
                rows: rows.clone(),
            };
            (rows.as_tensor().clone(), Some(lookup))
        } else {
            (self.embedding.index_select(&ids, 0)?, None)
        };
        let x = rows
            .to_dtype(self.dtype)?
            .reshape((steps, batch, self.hidden))?;
        let x = masks.dropout(&x, p)?;
        let (y, state) = match (&self.rnn, state) {
            (Recurrent::Fused(r), LmState::Fused(s)) => {
                let r = match (&self.rnn_grad, train) {
                    // Detached: autograd has nothing to do for the weight (candle would stop
                    // at a tracked cast that receives no gradient).
                    (Some(g), true) => r
                        .with_weight(self.rnn_weight_in_dtype()?)?
                        .with_weight_grad_sink_mode(g.clone(), SinkMode::Overwrite)?,
                    _ => r.with_weight(r.weight().to_dtype(self.dtype)?)?,
                };
                let (y, s) = r.forward_t(&x, Some(s), train)?;
                (y, LmState::Fused(s))
            }
            (Recurrent::Loop(layers), LmState::Loop(states)) => {
                let mut input = x;
                let mut finals = Vec::with_capacity(layers.len());
                for (l, (cell, s0)) in layers.iter().zip(states).enumerate() {
                    let mut s = s0.clone();
                    let mut outs = Vec::with_capacity(steps);
                    for t in 0..steps {
                        s = cell.step(&input.get(t)?, &s)?;
                        outs.push(s.h.clone());
                    }
                    input = Tensor::stack(&outs, 0)?;
                    if l + 1 < layers.len() {
                        input = masks.dropout(&input, p)?;
                    }
                    finals.push(s);
                }
                (input, LmState::Loop(finals))
            }
            _ => bail!("state does not belong to this model's recurrent layer"),
        };
        let y = masks.dropout(&y, p)?;
        Ok((y.reshape((steps * batch, self.hidden))?, state, lookup))
    }

    /// The softmax layer's logits of `y` (`[tokens, hidden]`).
    fn logits(&self, y: &Tensor, train: bool) -> Result<Tensor> {
        // Casts to the layers' dtype (none in f32: `to_dtype` then returns the tensor itself).
        let dt = self.dtype;
        Ok(match (&self.softmax_grad, train) {
            (Some(slot), true) => {
                let bias = self.softmax.bias().zip(self.softmax_bias_grad.as_ref());
                let w = self.softmax_weight_in_dtype()?;
                crate::model::owned_linear::linear_t(y, &w, bias, slot)?
            }
            _ => {
                let b = self.softmax.bias().map(|b| b.to_dtype(dt)).transpose()?;
                candle_nn::Linear::new(self.softmax.weight().to_dtype(dt)?, b).forward(y)?
            }
        })
    }

    /// The softmax weight, detached, in the layers' dtype: its half copy when it has one.
    fn softmax_weight_in_dtype(&self) -> Result<Tensor> {
        match &self.softmax_copy {
            Some(c) => Ok(c.clone()),
            None => Ok(self.softmax.weight().detach().to_dtype(self.dtype)?),
        }
    }

    pub fn device(&self) -> Device {
        self.embedding.device().clone()
    }

    /// The fused LSTM's weight, detached, in the layers' dtype: its half copy when it has one.
    fn rnn_weight_in_dtype(&self) -> Result<Tensor> {
        match (&self.rnn_copy, &self.rnn) {
            (Some(c), _) => Ok(c.clone()),
            (None, Recurrent::Fused(r)) => Ok(r.weight().detach().to_dtype(self.dtype)?),
            (None, Recurrent::Loop(_)) => bail!("the candle-nn LSTM has no fused weight"),
        }
    }
}

/// The tutorial's cost: the sum over time steps of the batch-mean cross-entropy, i.e. the
/// token-mean cross-entropy times `steps`; an f32 scalar whatever the logits' dtype.
pub fn sequence_loss(logits: &Tensor, targets: &Tensor, steps: usize) -> Result<Tensor> {
    sequence_cost(
        &crate::model::xent::cross_entropy_rows(logits, targets)?,
        steps,
    )
}

/// [`sequence_loss`] from the tokens' cross-entropies `rows`.
fn sequence_cost(rows: &Tensor, steps: usize) -> Result<Tensor> {
    Ok((rows.mean_all()? * steps as f64)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a GPU `auto` leaves each call's kernel to the op's rules; on the CPU the fused op.
    #[test]
    fn auto_leaves_a_gpu_call_to_the_op() {
        let auto = |gpu, saved| RnnChoice::Auto.resolve_for(gpu, saved);
        assert_eq!(auto(true, None), RnnKind::Heuristic);
        assert_eq!(auto(false, None), RnnKind::Fused);
        // A resumed run keeps its kernel; a named one is taken as asked.
        assert_eq!(auto(true, Some(RnnKind::Fused)), RnnKind::Fused);
        let named = RnnChoice::Cudnn.resolve_for(true, Some(RnnKind::Persistent));
        assert_eq!(named, RnnKind::Fused);
    }

    /// The cost is Σ_t mean_b CE(t, b), not the mean over all tokens.
    #[test]
    fn loss_sums_over_steps_of_batch_means() {
        let (steps, batch, vocab) = (3, 2, 5);
        let logits = Tensor::randn(0f32, 1., (steps * batch, vocab), &Device::Cpu).unwrap();
        let targets: Vec<u32> = vec![0, 4, 2, 2, 1, 3];
        let t = Tensor::from_vec(targets.clone(), (steps, batch), &Device::Cpu).unwrap();
        let got = sequence_loss(&logits, &t, steps)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        let rows = logits.to_vec2::<f32>().unwrap();
        let ce = |r: &[f32], y: usize| r.iter().map(|v| v.exp()).sum::<f32>().ln() - r[y];
        let want: f32 = (0..steps)
            .map(|s| {
                (0..batch)
                    .map(|b| ce(&rows[s * batch + b], targets[s * batch + b] as usize))
                    .sum::<f32>()
                    / batch as f32
            })
            .sum();
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }

    /// The fused LSTM's inter-layer masks change from epoch to epoch of a CPU run (each epoch
    /// reseeds them) and replay when an epoch's seed comes again (a resumed run).
    #[test]
    fn inter_layer_masks_follow_the_epoch_seed() {
        use crate::config::{LmConfig, Preset};
        use crate::train::run::RunSpec;
        let mut cfg = LmConfig::preset(Preset::Medium);
        (cfg.hidden_size, cfg.num_steps, cfg.batch_size) = (16, 4, 3);
        let spec = RunSpec::new(Preset::Medium, cfg, 20);
        let (model, _) =
            crate::train::setup::build_model(&spec, (&Device::Cpu, Launch::Eager), None).unwrap();
        let ids = Tensor::new(
            &[[1u32, 2, 3], [4, 5, 6], [7, 8, 9], [1, 3, 5]],
            &Device::Cpu,
        )
        .unwrap();
        let mut masks = Masks::new(0);
        // The embedding's and the output's masks held fixed: only the LSTM's may differ.
        let mut epoch = |e: usize| -> Vec<f32> {
            model
                .reseed(&mut masks, crate::train::run::epoch_seed(0, e))
                .unwrap();
            masks.reseed(99, &Device::Cpu).unwrap();
            let state = model.zero_state(3).unwrap();
            let (logits, _, _) = model.forward(&ids, &state, &mut masks, true).unwrap();
            logits.flatten_all().unwrap().to_vec1().unwrap()
        };
        let (first, second) = (epoch(0), epoch(1));
        assert_ne!(first, second, "epoch 2 reused epoch 1's inter-layer masks");
        assert_eq!(epoch(0), first, "an epoch's seed replays its masks");
    }

    #[test]
    fn cpu_masks_replay_from_a_seed() {
        let x = Tensor::ones((4, 50), candle_core::DType::F32, &Device::Cpu).unwrap();
        let mut m = Masks::new(3);
        let a = m.dropout(&x, 0.5).unwrap();
        m.reseed(3, &Device::Cpu).unwrap();
        let b = m.dropout(&x, 0.5).unwrap();
        assert_eq!(a.to_vec2::<f32>().unwrap(), b.to_vec2::<f32>().unwrap());
        let kept = a
            .to_vec2::<f32>()
            .unwrap()
            .concat()
            .iter()
            .filter(|&&v| v == 2.0)
            .count();
        assert!((50..150).contains(&kept), "{kept} of 200 kept");
    }
}
