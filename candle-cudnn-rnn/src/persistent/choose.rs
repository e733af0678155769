//! `RnnAlgo::Auto` with this crate's kernels among the candidates: a call they take is timed
//! once per `(seq, batch, train)` on them and on cuDNN (whose own `Auto` has picked its
//! algorithm by then), on copies of the call's operands and without dropout (a measurement
//! must not move the masks' counters). The kernels win when they are faster and their outputs
//! agree with cuDNN's.

use super::kernel::Plan;
use super::{forward, Elem, PersistentLstm};
use crate::backend::{view, BackwardInputs, GpuBackend, GpuReserve, Operand};
use crate::call::{Call, Dropout};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::CudaDevice;
use candle_core::op::BackpropOp;
use candle_core::{bail, CudaStorage, Result, Storage, Tensor};
use std::time::Instant;

/// Timed runs per candidate, after an untimed one (which also lets cuDNN's `Auto` measure).
const REPS: usize = 3;

/// A flat tensor over a copy of `op`'s elements.
fn copy<T: Elem>(op: Operand, what: &str, dev: &CudaDevice) -> Result<Tensor> {
    let slice = dev
        .cuda_stream()
        .clone_dtod(&view::<T>(op.0, op.1, what)?)?;
    let n = slice.len();
    let storage = Storage::Cuda(CudaStorage::wrap_cuda_slice(slice, dev.clone()));
    Ok(Tensor::from_storage(storage, n, BackpropOp::none(), false))
}

/// `f` on the storage of `t` (a tensor of [`copy`]).
fn with_operand<R>(t: &Tensor, f: impl FnOnce(Operand) -> Result<R>) -> Result<R> {
    let (guard, layout) = t.storage_and_layout();
    match &*guard {
        Storage::Cuda(s) => f((s, layout)),
        _ => bail!("rnn: a measured operand is not on the GPU"),
    }
}

impl PersistentLstm {
    /// Whether this crate's kernels (planned as `plan`) serve `call` faster than cuDNN, and
    /// agree with it.
    pub(super) fn kernels_win<T: Elem>(
        &self,
        call: &Call,
        (plan, train): (Plan, bool),
        dropout: Dropout,
        [x, w, s]: [Operand; 3],
    ) -> Result<bool> {
        let dev = x.0.device().clone();
        let stream = dev.cuda_stream();
        let (x, w, s) = (
            copy::<T>(x, "x", &dev)?,
            copy::<T>(w, "weight", &dev)?,
            copy::<T>(s, "state", &dev)?,
        );
        let quiet = Dropout { p: 0.0, ..dropout };
        // One call forward (and backward, with a gradient of ones, in training); its output.
        let run = |ours: bool| -> Result<Tensor> {
            let (out, reserve) = with_operand(&x, |xo| {
                with_operand(&w, |wo| {
                    with_operand(&s, |so| match ours {
                        true => {
                            let (out, r) = forward::forward::<T>(
                                &self.dims,
                                plan,
                                call,
                                (train, None),
                                [xo, wo, so],
                            )?;
                            Ok((out, r.map(|r| Box::new(r) as GpuReserve)))
                        }
                        false => self.cudnn.forward(call, quiet, train, xo, wo, so),
                    })
                })
            })?;
            let n = call.output_len() + call.state_len();
            let packed = Tensor::from_storage(Storage::Cuda(out), n, BackpropOp::none(), false);
            if let Some(r) = reserve {
                let grad = packed.ones_like()?;
                let inputs = BackwardInputs {
                    x: &x,
                    weight: &w,
                    state: &s,
                    packed: &packed,
                    grad: &grad,
                    // The whole of each backward's work (cuDNN's always makes dx).
                    state_grad: true,
                    input_grad: true,
                };
                // Our reserve goes to our backward, cuDNN's to cuDNN's.
                self.backward(call, r, inputs, None)?;
            }
            Ok(packed)
        };
        let time = |ours: bool| -> Result<(f64, Tensor)> {
            let mut out = run(ours)?;
            let mut best = f64::INFINITY;
            for _ in 0..REPS {
                stream.synchronize()?;
                let start = Instant::now();
                out = run(ours)?;
                stream.synchronize()?;
                best = best.min(start.elapsed().as_secs_f64());
            }
            Ok((best, out))
        };
        let (theirs, reference) = time(false)?;
        let (ours, out) = time(true)?;
        let values = |t: &Tensor| -> Result<Vec<f64>> {
            t.to_dtype(candle_core::DType::F64)?.to_vec1::<f64>()
        };
        Ok(ours < theirs && crate::cudnn::agrees(&values(&out)?, &values(&reference)?))
    }
}
