//! The RNN as one candle `CustomOp3`: inputs `(x, weight, state)`, output `y`; and the final
//! state as a second op on `y` ([`FinalState`]). A call given no initial state passes the
//! weight as a placeholder state that no path reads (`Call::zero_state`). The CPU path and the
//! module's GPU backend sit side by side; the op knows the backend only through its seam.
//!
//! The op's output is `y`, shaped `[T, B, D*P]`, and `FinalState` hands out the final state,
//! which the op's forward made in a buffer of its own (the GPU paths write it there; the CPU
//! path splits its packed `[y | h_n | c_n]`): so candle's autograd finds the op's output and its
//! gradient at their full size, with no narrowing whose backward would zero-fill and add buffers
//! of the whole output (`results/2026-11-25-h100-plain-api/`), and the state costs no copy
//! (`results/2026-11-30-h200-state-apart/`). A call without a backward (`whole`) gets the
//! packed buffer on every path, flat, and `y` and the state are views of it.

#[cfg(feature = "cuda")]
use crate::backend::{BackwardInputs, DwInto, ForwardInputs, GpuBackend, GpuReserve};
use crate::call::{Call, Dropout};
use crate::cpu::{self, Trace};
use crate::sink::SinkMode;
use candle_core::{
    backend::BackendStorage, CpuStorage, CustomOp3, DType, Layout, Result, Shape, Storage, Tensor,
};
use std::sync::{Arc, Mutex};

/// What a training-mode forward keeps for its backward; taken (and freed) by the backward.
enum Reserve {
    Cpu32(Trace<f32>),
    Cpu64(Trace<f64>),
    #[cfg(feature = "cuda")]
    Gpu(GpuReserve),
}

pub(crate) struct RnnOp {
    call: Call,
    /// Inter-layer dropout of this call (probability 0 in inference mode).
    dropout: Dropout,
    /// Keep what backward needs (cuDNN training mode); without it the forward is inference only.
    train: bool,
    #[cfg(feature = "cuda")]
    gpu: Arc<dyn GpuBackend>,
    reserve: Mutex<Option<Reserve>>,
    /// Where the weight's gradient goes instead of being returned, and how
    /// (`Rnn::with_weight_grad_sink_mode`).
    weight_grad: Option<(Tensor, SinkMode)>,
    /// The final state's gradient, handed over by [`FinalState`]'s backward.
    grad_state: GradSlot,
    /// The final state, made in a buffer of its own and handed to [`FinalState`]'s forward
    /// (all but `whole` calls).
    final_state: StateSlot,
    /// The op's output is its whole packed buffer `[y | h_n | c_n]`, flat, rather than `y`
    /// over its start: for a call without a backward, whose `y` and final state are then
    /// views of it (`Rnn::run`).
    whole: bool,
}

/// A value handed from one op to another: a gradient from one's backward to the other's, or
/// the final state from the RNN's forward to [`FinalState`]'s.
pub(crate) struct Slot<T>(Arc<Mutex<Option<T>>>);

/// A gradient handed from [`FinalState`]'s backward to the RNN's.
pub(crate) type GradSlot = Slot<Tensor>;

/// The final state handed from the RNN's forward to [`FinalState`]'s.
pub(crate) type StateSlot = Slot<Storage>;

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(None)))
    }
}

impl<T> Clone for Slot<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Slot<T> {
    fn put(&self, v: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
    }

    fn take(&self) -> Option<T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// A contiguous f16/bf16 operand as f32.
fn widen(s: &CpuStorage, l: &Layout, what: &str) -> Result<Vec<f32>> {
    Ok(match s {
        CpuStorage::F16(_) => cpu_slice::<half::f16>(s, l, what)?
            .iter()
            .map(|v| v.to_f32())
            .collect(),
        CpuStorage::BF16(_) => cpu_slice::<half::bf16>(s, l, what)?
            .iter()
            .map(|v| v.to_f32())
            .collect(),
        _ => candle_core::bail!("rnn: {what} is not half precision"),
    })
}

/// The CPU path's packed `[y | h_n | c_n]` as `y` and the final state (its elements from `at`).
fn split_state(packed: CpuStorage, at: usize) -> Result<(CpuStorage, CpuStorage)> {
    fn split<T>(mut y: Vec<T>, at: usize) -> Result<(Vec<T>, Vec<T>)> {
        if at > y.len() {
            candle_core::bail!("rnn: the final state lies outside the op's buffer")
        }
        let state = y.split_off(at);
        Ok((y, state))
    }
    Ok(match packed {
        CpuStorage::F16(v) => {
            let (y, s) = split(v, at)?;
            (CpuStorage::F16(y), CpuStorage::F16(s))
        }
        CpuStorage::BF16(v) => {
            let (y, s) = split(v, at)?;
            (CpuStorage::BF16(y), CpuStorage::BF16(s))
        }
        CpuStorage::F32(v) => {
            let (y, s) = split(v, at)?;
            (CpuStorage::F32(y), CpuStorage::F32(s))
        }
        CpuStorage::F64(v) => {
            let (y, s) = split(v, at)?;
            (CpuStorage::F64(y), CpuStorage::F64(s))
        }
        other => candle_core::bail!("rnn: the final state of a {:?} output", other.dtype()),
    })
}

/// f32 results rounded to `dtype` (f16 or bf16).
fn narrow_to(v: Vec<f32>, dtype: DType) -> CpuStorage {
    match dtype {
        DType::F16 => CpuStorage::F16(v.into_iter().map(half::f16::from_f32).collect()),
        _ => CpuStorage::BF16(v.into_iter().map(half::bf16::from_f32).collect()),
    }
}

/// A contiguous slice of a CPU storage, or an error naming the operand.
pub(crate) fn cpu_slice<'a, T: candle_core::WithDType>(
    s: &'a CpuStorage,
    l: &Layout,
    what: &str,
) -> Result<&'a [T]> {
    match l.contiguous_offsets() {
        Some((start, end)) => Ok(&s.as_slice::<T>()?[start..end]),
        None => candle_core::bail!("rnn: {what} must be contiguous"),
    }
}

impl RnnOp {
    pub fn new(
        call: Call,
        dropout: Dropout,
        train: bool,
        #[cfg(feature = "cuda")] gpu: Arc<dyn GpuBackend>,
        (weight_grad, grad_state, final_state): (Option<(Tensor, SinkMode)>, GradSlot, StateSlot),
        whole: bool,
    ) -> Self {
        Self {
            call,
            dropout,
            train,
            #[cfg(feature = "cuda")]
            gpu,
            reserve: Mutex::new(None),
            weight_grad,
            grad_state,
            final_state,
            whole,
        }
    }

    /// `y`'s shape `[T, B, D*P]`, over the start of the packed buffer; with `whole`, the
    /// packed buffer's, flat.
    fn output_shape(&self) -> Shape {
        let c = &self.call;
        match self.whole {
            true => Shape::from(c.output_len() + c.state_len()),
            false => Shape::from((c.seq, c.batch, c.dims.output_size())),
        }
    }

    fn keep(&self, r: Reserve) -> Result<()> {
        *self.reserve.lock().map_err(|_| poisoned())? = Some(r);
        Ok(())
    }

    fn take_reserve(&self) -> Result<Reserve> {
        self.reserve
            .lock()
            .map_err(|_| poisoned())?
            .take()
            .ok_or_else(|| {
                candle_core::Error::Msg(
                    "rnn backward: no saved forward state (the forward ran without gradient \
                 tracking, or backward already ran once for it)"
                        .into(),
                )
            })
    }
}

fn poisoned() -> candle_core::Error {
    candle_core::Error::Msg("rnn: reserve lock poisoned by an earlier panic".into())
}

impl CustomOp3 for RnnOp {
    fn name(&self) -> &'static str {
        "cudnn-rnn"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let dtypes = (s1.dtype(), s2.dtype(), s3.dtype());
        let packed = match dtypes {
            (DType::F32, DType::F32, DType::F32) => {
                let (out, trace) = self.cpu_forward::<f32>((s1, l1), (s2, l2), (s3, l3))?;
                trace.map(|t| self.keep(Reserve::Cpu32(t))).transpose()?;
                CpuStorage::F32(out)
            }
            (DType::F64, DType::F64, DType::F64) => {
                let (out, trace) = self.cpu_forward::<f64>((s1, l1), (s2, l2), (s3, l3))?;
                trace.map(|t| self.keep(Reserve::Cpu64(t))).transpose()?;
                CpuStorage::F64(out)
            }
            // Half precision computes in f32 and rounds the outputs, as cuDNN's f32 math does.
            (dt @ (DType::F16 | DType::BF16), b, c) if b == dt && c == dt => {
                let st = match self.call.zero_state {
                    true => vec![0f32; self.call.state_len()],
                    false => widen(s3, l3, "state")?,
                };
                let (x, w) = (widen(s1, l1, "x")?, widen(s2, l2, "weight")?);
                let (out, trace) =
                    cpu::forward::<f32>(&self.call, &x, &w, &st, self.dropout, self.train);
                trace.map(|t| self.keep(Reserve::Cpu32(t))).transpose()?;
                narrow_to(out, dt)
            }
            _ => candle_core::bail!(
                "rnn on cpu: x, weight and state must share one float dtype (f16, bf16, f32 or \
                 f64), got {dtypes:?}"
            ),
        };
        if self.whole {
            return Ok((packed, self.output_shape()));
        }
        let (y, state) = split_state(packed, self.call.output_len())?;
        self.final_state.put(Storage::Cpu(state));
        Ok((y, self.output_shape()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
        s3: &candle_core::CudaStorage,
        l3: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        crate::memory::keep_by_default(s1.device())?;
        let (outputs, reserve) = self.gpu.forward(ForwardInputs {
            call: &self.call,
            dropout: self.dropout,
            train: self.train,
            ops: [(s1, l1), (s2, l2), (s3, l3)],
            state_apart: !self.whole,
        })?;
        if let Some(r) = reserve {
            self.keep(Reserve::Gpu(r))?;
        }
        if let Some(state) = outputs.state {
            self.final_state.put(Storage::Cuda(state));
        }
        Ok((outputs.out, self.output_shape()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        state: &Tensor,
        y: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        #[cfg(not(feature = "cuda"))]
        let _ = y;
        let grad_y = grad.contiguous()?;
        // The final state's gradient, if the loss reads the final state: `FinalState`'s
        // backward left it (candle runs it first, as it reads this op's output).
        let grad_state = self.grad_state.take();
        let reserve = self.take_reserve()?;
        // The CPU path reads the gradient of its packed output, and a zero initial state where
        // the call was given none (`state` is then a placeholder, see `Call::zero_state`).
        let packed = || self.packed_grad(&grad_y, grad_state.as_ref());
        let zero_state = self.call.zero_state;
        let cpu_state = || match zero_state {
            true => Tensor::zeros(self.call.state_len(), w.dtype(), w.device()),
            false => Ok(state.clone()),
        };
        let some = |(dx, dw, ds)| (Some(dx), Some(dw), Some(ds));
        let (dx, dw, ds) = match reserve {
            Reserve::Cpu32(t) if w.dtype() != DType::F32 => {
                let f = |t: &Tensor| t.to_dtype(DType::F32);
                let (dx, dw, ds) =
                    self.cpu_bwd::<f32>(&t, &f(w)?, &f(&cpu_state()?)?, &f(&packed()?)?)?;
                let back = |t: Tensor| t.to_dtype(w.dtype());
                (Some(back(dx)?), Some(back(dw)?), Some(back(ds)?))
            }
            Reserve::Cpu32(t) => some(self.cpu_bwd::<f32>(&t, w, &cpu_state()?, &packed()?)?),
            Reserve::Cpu64(t) => some(self.cpu_bwd::<f64>(&t, w, &cpu_state()?, &packed()?)?),
            #[cfg(feature = "cuda")]
            Reserve::Gpu(r) => {
                let inputs = BackwardInputs {
                    call: &self.call,
                    x,
                    weight: w,
                    state,
                    y,
                    grad_y: &grad_y,
                    grad_state: grad_state.as_ref(),
                    state_grad: !zero_state && state.track_op(),
                    input_grad: x.track_op(),
                    dw_into: None,
                };
                // The module's sink, or under `crate::backward` a buffer it puts into candle's
                // gradient store: either way nothing for candle to zero-fill and add.
                let sink = match &self.weight_grad {
                    Some(sink) => Some(sink.clone()),
                    None if self.gpu.takes_weight_grad_buffer(&r) => crate::direct::sink_for(w)?,
                    None => None,
                };
                match sink {
                    None => self.gpu.backward(r, inputs)?,
                    Some((sink, mode)) => {
                        // The backend leaves the weight's gradient straight in the sink: an
                        // in-place op hands out its memory.
                        let into = IntoSink {
                            op: self,
                            mode,
                            reserve: Mutex::new(Some(r)),
                            inputs: Mutex::new(Some(inputs)),
                            out: Mutex::new(None),
                        };
                        sink.inplace_op1(&into)?;
                        let out = into.out.lock().map_err(|_| poisoned())?.take();
                        let (dx, ds) = out.ok_or_else(|| {
                            candle_core::Error::Msg(
                                "rnn backward: the sink was not on the GPU".into(),
                            )
                        })?;
                        (dx, None, ds)
                    }
                }
            }
        };
        let dw = match (dw, &self.weight_grad) {
            (Some(dw), None) => keep(w, dw)?,
            (Some(dw), Some((sink, mode))) => {
                let dw = dw.reshape(sink.shape())?;
                let new = match mode {
                    SinkMode::Add => (sink + dw)?,
                    SinkMode::Overwrite => dw,
                };
                sink.slice_set(&new, 0, 0)?;
                None
            }
            // Left in a sink (the module's, or `crate::backward`'s).
            (None, _) => None,
        };
        // A placeholder state (the weight) takes no gradient.
        let ds = match zero_state {
            true => None,
            false => ds.map(|ds| keep(state, ds)).transpose()?.flatten(),
        };
        let dx = dx.map(|dx| keep(x, dx)).transpose()?.flatten();
        Ok((dx, dw, ds))
    }
}

impl RnnOp {
    /// The CPU path's gradient of its packed output `[y | h_n | c_n]`: `grad_y`, then the final
    /// state's gradient or zeros.
    fn packed_grad(&self, grad_y: &Tensor, grad_state: Option<&Tensor>) -> Result<Tensor> {
        let state = match grad_state {
            Some(g) => g.flatten_all()?,
            None => Tensor::zeros(self.call.state_len(), grad_y.dtype(), grad_y.device())?,
        };
        Tensor::cat(&[&grad_y.flatten_all()?, &state], 0)
    }
}

/// A GPU backward run as an in-place op on the weight-gradient sink, so that cuDNN can write
/// into the sink's memory; `out` receives `(dx, dstate)`.
#[cfg(feature = "cuda")]
struct IntoSink<'a> {
    op: &'a RnnOp,
    mode: SinkMode,
    reserve: Mutex<Option<GpuReserve>>,
    inputs: Mutex<Option<BackwardInputs<'a>>>,
    out: Mutex<Option<(Option<Tensor>, Option<Tensor>)>>,
}

#[cfg(feature = "cuda")]
impl candle_core::InplaceOp1 for IntoSink<'_> {
    fn name(&self) -> &'static str {
        "rnn-backward-into-sink"
    }

    fn cpu_fwd(&self, _: &mut CpuStorage, _: &Layout) -> Result<()> {
        candle_core::bail!(
            "rnn backward: the weight-gradient sink is on the CPU, the call on a GPU"
        )
    }

    fn cuda_fwd(&self, sink: &mut candle_core::CudaStorage, l: &Layout) -> Result<()> {
        if !l.is_contiguous() || l.start_offset() != 0 {
            candle_core::bail!(
                "rnn backward: the weight-gradient sink must be a whole contiguous tensor"
            )
        }
        let r = self.reserve.lock().map_err(|_| poisoned())?.take();
        let inputs = self.inputs.lock().map_err(|_| poisoned())?.take();
        let (Some(r), Some(inputs)) = (r, inputs) else {
            candle_core::bail!("rnn backward: ran twice into the sink")
        };
        let into = DwInto {
            buf: sink,
            mode: self.mode,
        };
        let inputs = BackwardInputs {
            dw_into: Some(into),
            ..inputs
        };
        let (dx, _, ds) = self.op.gpu.backward(r, inputs)?;
        *self.out.lock().map_err(|_| poisoned())? = Some((dx, ds));
        Ok(())
    }
}

/// The gradient of `arg`, shaped like it, if anything upstream of `arg` wants one: candle adds
/// every gradient a custom op returns into a zero-filled buffer of the argument's size, which
/// for an untracked input (a detached state, a fixed input) is work for nothing, and under
/// `crate::backward` a variable's goes straight into the store instead.
fn keep(arg: &Tensor, grad: Tensor) -> Result<Option<Tensor>> {
    match arg.track_op() {
        true => crate::direct::hand_over(arg, grad.reshape(arg.shape())?),
        false => Ok(None),
    }
}

impl RnnOp {
    #[allow(clippy::type_complexity)]
    fn cpu_forward<T: cpu::Real + candle_core::WithDType>(
        &self,
        (s1, l1): (&CpuStorage, &Layout),
        (s2, l2): (&CpuStorage, &Layout),
        (s3, l3): (&CpuStorage, &Layout),
    ) -> Result<(Vec<T>, Option<Trace<T>>)> {
        let x = cpu_slice(s1, l1, "x")?;
        let w = cpu_slice(s2, l2, "weight")?;
        let zeros;
        let s = match self.call.zero_state {
            true => {
                zeros = vec![T::zero(); self.call.state_len()];
                &zeros[..]
            }
            false => cpu_slice(s3, l3, "state")?,
        };
        Ok(cpu::forward::<T>(
            &self.call,
            x,
            w,
            s,
            self.dropout,
            self.train,
        ))
    }

    fn cpu_bwd<T: cpu::Real + candle_core::WithDType>(
        &self,
        trace: &Trace<T>,
        w: &Tensor,
        state: &Tensor,
        grad: &Tensor,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let (w_s, w_l) = w.storage_and_layout();
        let (s_s, s_l) = state.storage_and_layout();
        let (g_s, g_l) = grad.storage_and_layout();
        let (Storage::Cpu(w_s), Storage::Cpu(s_s), Storage::Cpu(g_s)) = (&*w_s, &*s_s, &*g_s)
        else {
            candle_core::bail!("rnn backward: a CPU forward needs CPU tensors in backward");
        };
        let (dx, dw, ds) = cpu::backward(
            &self.call,
            cpu_slice::<T>(w_s, w_l, "weight")?,
            cpu_slice::<T>(s_s, s_l, "state")?,
            trace,
            cpu_slice::<T>(g_s, g_l, "gradient")?,
        );
        let dev = w.device();
        Ok((
            Tensor::from_vec(dx, (self.call.input_len(),), dev)?,
            Tensor::from_vec(dw, w.shape(), dev)?,
            Tensor::from_vec(ds, (self.call.state_len(),), dev)?,
        ))
    }
}

/// The final state `[h_n | c_n]` of an [`RnnOp`] call, which the op's forward made in a buffer
/// of its own and hands over through the shared [`StateSlot`]: it costs no copy. Its backward
/// hands the state's gradient to the op's (through the shared [`GradSlot`]) and gives `y` a zero
/// gradient, which candle needs for every node on the way to a variable (a loss may read the
/// state alone).
pub(crate) struct FinalState {
    /// The packed state's shape (`RnnDims::state_shape`).
    pub shape: Shape,
    pub grad_state: GradSlot,
    pub state: StateSlot,
}

impl FinalState {
    /// The state the op's forward left, which must be of `dtype` (its output's).
    fn take(&self, dtype: DType) -> Result<Storage> {
        match self.state.take() {
            Some(state) if state.dtype() == dtype => Ok(state),
            Some(state) => candle_core::bail!(
                "rnn: the final state is {:?}, the op's output {dtype:?}",
                state.dtype()
            ),
            None => candle_core::bail!(
                "rnn: no final state from the op's forward (it is handed out once a call)"
            ),
        }
    }
}

impl candle_core::CustomOp1 for FinalState {
    fn name(&self) -> &'static str {
        "rnn-final-state"
    }

    fn cpu_fwd(&self, s: &CpuStorage, _: &Layout) -> Result<(CpuStorage, Shape)> {
        match self.take(s.dtype())? {
            Storage::Cpu(state) => Ok((state, self.shape.clone())),
            _ => candle_core::bail!("rnn: the final state is not on the op's output's device"),
        }
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s: &candle_core::CudaStorage,
        _: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        match self.take(s.dtype())? {
            Storage::Cuda(state) => Ok((state, self.shape.clone())),
            _ => candle_core::bail!("rnn: the final state is not on the op's output's device"),
        }
    }

    fn bwd(&self, y: &Tensor, _state: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        self.grad_state.put(grad.flatten_all()?.contiguous()?);
        let zero = Tensor::zeros((), y.dtype(), y.device())?;
        Ok(Some(zero.broadcast_as(y.shape())?))
    }
}
