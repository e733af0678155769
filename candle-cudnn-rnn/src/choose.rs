//! Which kernel runs each GPU call, decided in one function of named rules
//! ([`Chooser::choose`]), in the manner of PyTorch's `get_algo`
//! (aten/src/ATen/native/cudnn/RNN.cpp). The candidates are this crate's persistent LSTM
//! kernels ("ours", `crate::persistent`) and cuDNN's four algorithms (`crate::cudnn`).
//!
//! - The module's algorithm decides first: a cuDNN algorithm serves every call
//!   ([`cudnn_takes`] refuses what it cannot run); [`RnnAlgo::Persistent`] gives ours every
//!   call they take ([`ours_take_module`], [`ours_take_lengths`], [`ours_take_state`],
//!   [`ours_take_dtype`], [`ours_take_batch`], then the kernels' plan, where the hidden size's
//!   share of each multiprocessor must fit in shared memory) and the others to cuDNN's
//!   [`PERSISTENT_FALLBACK`].
//! - [`RnnAlgo::Auto`] measures, once per call shape (device, dtype, `seq`, `batch`, `train`):
//!   first cuDNN's [`cudnn_candidates`] against each other ([`FastestAgreeing`]: the fastest
//!   whose results [`agrees`] with the first's, `Standard`'s), then, where ours take the call,
//!   ours against that winner ([`ours_win`]). Calls that only `Standard` takes run it unmeasured
//!   ([`auto_measures`]).

use crate::backend::{operand_dtype, view, BackwardInputs, ForwardInputs, GpuReserve, Operand};
use crate::call::{Call, Dropout};
use crate::cudnn::{CudnnRnn, Trial};
use crate::layout::RnnDims;
use crate::persistent::{PersistentLstm, Plan, Tuning, MAX_BATCH};
use crate::{RnnAlgo, RnnConfig, RnnMode};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use candle_core::cuda_backend::{CudaDType, CudaDevice, DeviceId};
use candle_core::op::BackpropOp;
use candle_core::{bail, CudaStorage, DType, Result, Storage, Tensor};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Instant;

/// The kernel that runs one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Ours, on this plan.
    Persistent(Plan),
    /// cuDNN, with this one of its algorithms ([`RnnAlgo::CONCRETE`]).
    Cudnn(RnnAlgo),
}

impl Kernel {
    /// The algorithm that names it.
    pub fn algo(&self) -> RnnAlgo {
        match self {
            Kernel::Persistent(_) => RnnAlgo::Persistent,
            Kernel::Cudnn(algo) => *algo,
        }
    }
}

/// The kernel paths of one module: cuDNN always, ours where the module may use them.
pub(crate) struct Backends {
    pub cudnn: CudnnRnn,
    pub ours: Option<PersistentLstm>,
}

impl Backends {
    /// The paths of a module of `dims` built with `cfg`: ours where [`ours_in_play`], tuned as
    /// the environment asks.
    pub fn new(dims: RnnDims, cfg: &RnnConfig) -> Self {
        let ours = ours_in_play(cfg.algo, &dims);
        Self {
            cudnn: CudnnRnn::new(dims, cfg.math, cfg.dropout),
            ours: ours.then(|| PersistentLstm::new(dims, Tuning::from_env())),
        }
    }
}

// The rules, each named for what it decides.

/// Whether a module built for `algo` may run calls on ours: where it asks for them
/// (`Persistent`) or lets them compete (`Auto`), and they take the module.
fn ours_in_play(algo: RnnAlgo, dims: &RnnDims) -> bool {
    matches!(algo, RnnAlgo::Persistent | RnnAlgo::Auto) && ours_take_module(dims)
}

/// Ours implement one direction of an LSTM cell without a projection (`persistent/lstm_fwd.cu`,
/// `lstm_bwd.cu`).
fn ours_take_module(dims: &RnnDims) -> bool {
    dims.mode == RnnMode::Lstm && dims.num_directions == 1 && dims.proj_size == 0
}

/// Ours run every sample for all of the call's steps: no per-sample lengths.
fn ours_take_lengths(call: &Call) -> bool {
    call.lengths.is_none()
}

/// Ours read h_0 in pairs of elements: the state `s` must start at an even element.
fn ours_take_state(s: Operand) -> bool {
    s.1.start_offset() % 2 == 0
}

/// Ours multiply half-precision operands on tensor cores (f32 accumulation): bf16 or f16.
fn ours_take_dtype(dtype: DType) -> bool {
    matches!(dtype, DType::BF16 | DType::F16)
}

/// Ours keep each sample's accumulators in registers: batches up to [`MAX_BATCH`].
fn ours_take_batch(batch: usize) -> bool {
    batch <= MAX_BATCH
}

/// What `RnnAlgo::Persistent` runs the calls ours do not take on: cuDNN's standard algorithm,
/// which takes every configuration, over the same weights.
const PERSISTENT_FALLBACK: RnnAlgo = RnnAlgo::Standard;

/// Whether cuDNN's `algo` takes `call` of a module of `dims`: its persistent algorithms take
/// neither per-sample lengths nor a projection (cuDNN's own refusal would be less clear).
fn cudnn_takes(algo: RnnAlgo, call: &Call, dims: &RnnDims) -> Result<()> {
    match algo {
        a if a != RnnAlgo::Standard && call.lengths.is_some() => bail!(
            "rnn: cuDNN's {a:?} algorithm does not take variable-length sequences; use \
             RnnAlgo::Standard or RnnAlgo::Auto"
        ),
        a if a != RnnAlgo::Standard && dims.proj_size > 0 => bail!(
            "rnn: cuDNN's {a:?} algorithm does not take a projection; use RnnAlgo::Standard or \
             RnnAlgo::Auto"
        ),
        _ => Ok(()),
    }
}

/// Whether `Auto` measures for `call`: not where only cuDNN's `Standard` takes it (per-sample
/// lengths or a projection: see [`cudnn_takes`]; ours take neither either).
fn auto_measures(call: &Call, dims: &RnnDims) -> bool {
    call.lengths.is_none() && dims.proj_size == 0
}

/// Below this batch, training in half precision gets only cuDNN's standard algorithm: cuDNN's
/// persistent backward of an f16 LSTM at batch 1 gave infinite gradients in some calls and
/// finite ones in others, even after agreeing in its trial (cuDNN 9.19 on the H100,
/// `results/2026-11-23-h100-land/`), so no trial can clear it. (Seen at batch 1; 8, the
/// smallest tensor-core tile, leaves a margin.)
const HALF_TRAINING_PERSIST_MIN_BATCH: usize = 8;

/// The cuDNN algorithms `Auto` tries on a call: all of them, in [`RnnAlgo::CONCRETE`]'s order
/// (`Standard` first: the reference the others must agree with); only `Standard` for training
/// in half precision below [`HALF_TRAINING_PERSIST_MIN_BATCH`].
fn cudnn_candidates(dtype: DType, batch: usize, train: bool) -> &'static [RnnAlgo] {
    let half = matches!(dtype, DType::F16 | DType::BF16);
    if train && half && batch < HALF_TRAINING_PERSIST_MIN_BATCH {
        return &RnnAlgo::CONCRETE[..1];
    }
    &RnnAlgo::CONCRETE
}

/// How close a candidate's results must be to the reference's (relative L2): far above TF32 or
/// half-precision rounding, far below a wrong result.
const AGREE: f64 = 1e-2;

/// ‖a − b‖ ≤ AGREE ‖b‖, false for NaN: whether a candidate of `Auto` computes what the
/// reference does.
fn agrees(a: &[f64], b: &[f64]) -> bool {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    matches!(
        d.sqrt().partial_cmp(&(AGREE * n.sqrt())),
        Some(Ordering::Less | Ordering::Equal)
    )
}

/// `Auto`'s pick among cuDNN's trials: the first trial's results are the reference; a later
/// one counts only where all its results agree with them (not a persistent kernel that
/// silently returns zeros for a shape it does not handle, say, or one that reads memory it did
/// not write); the fastest counted wins, the earlier on a tie, and `Standard` when none ran.
struct FastestAgreeing {
    reference: Option<[Vec<f64>; 4]>,
    best: (RnnAlgo, f64),
}

impl FastestAgreeing {
    fn new() -> Self {
        Self {
            reference: None,
            best: (RnnAlgo::Standard, f64::INFINITY),
        }
    }

    fn judge(&mut self, t: Trial) {
        match &self.reference {
            None => self.reference = Some(t.results),
            Some(r) if !t.results.iter().zip(r).all(|(a, b)| agrees(a, b)) => return,
            Some(_) => {}
        }
        if t.seconds < self.best.1 {
            self.best = (t.algo, t.seconds);
        }
    }
}

/// Timed runs of each side when ours compete with cuDNN, after an untimed one.
const OURS_TRIAL_REPS: usize = 3;

/// A call's device, dtype, `seq`, `batch` and `train`: what `Auto` measures once.
type CallShape = (DeviceId, DType, usize, usize, bool);

/// The choice of kernel for a module's calls, and what `Auto` measured.
pub(crate) struct Chooser {
    algo: RnnAlgo,
    dims: RnnDims,
    /// `Auto`'s cuDNN algorithm per call shape.
    cudnn_fastest: Mutex<HashMap<CallShape, RnnAlgo>>,
    /// `Auto`: whether ours beat that algorithm, per call shape ours take.
    ours_won: Mutex<HashMap<CallShape, bool>>,
}

/// The value of `key` in `memo`, made by `make` on a miss (not under the lock: it may
/// measure for a long while).
fn memoized<K: Hash + Eq, V: Copy>(
    memo: &Mutex<HashMap<K, V>>,
    key: K,
    make: impl FnOnce() -> Result<V>,
) -> Result<V> {
    let lock = || memo.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&v) = lock().get(&key) {
        return Ok(v);
    }
    let v = make()?;
    Ok(*lock().entry(key).or_insert(v))
}

impl Chooser {
    /// The chooser of a module of `dims` built for `algo`.
    pub fn new(algo: RnnAlgo, dims: RnnDims) -> Self {
        Self {
            algo,
            dims,
            cudnn_fastest: Mutex::new(HashMap::new()),
            ours_won: Mutex::new(HashMap::new()),
        }
    }

    /// The kernel that runs the call of `inputs` among `paths`.
    pub fn choose(&self, paths: &Backends, inputs: ForwardInputs) -> Result<Kernel> {
        let ForwardInputs {
            call, train, ops, ..
        } = inputs;
        // One dtype for all three operands, which every path needs.
        let dtype = operand_dtype(ops)?;
        // Ours where the module has them and they take this call, with their plan for it.
        let ours = paths
            .ours
            .as_ref()
            .filter(|_| ours_take_lengths(call) && ours_take_state(ops[2]))
            .filter(|_| ours_take_dtype(dtype) && ours_take_batch(call.batch))
            .and_then(|ours| {
                let plan = ours
                    .plan(ops[0].0.device(), call.batch, dtype, train)
                    .ok()?;
                Some((ours, plan))
            });
        match self.algo {
            RnnAlgo::Persistent => Ok(match ours {
                Some((_, plan)) => Kernel::Persistent(plan),
                None => Kernel::Cudnn(PERSISTENT_FALLBACK),
            }),
            RnnAlgo::Auto if !auto_measures(call, &self.dims) => {
                Ok(Kernel::Cudnn(RnnAlgo::Standard))
            }
            RnnAlgo::Auto => {
                let shape = (ops[0].0.device().id(), dtype, call.seq, call.batch, train);
                let fastest = self.cudnn_fastest(&paths.cudnn, shape, inputs)?;
                let Some((backend, plan)) = ours else {
                    return Ok(Kernel::Cudnn(fastest));
                };
                let sides = ((backend, plan), (&paths.cudnn, fastest));
                Ok(match self.ours_beat(sides, shape, inputs)? {
                    true => Kernel::Persistent(plan),
                    false => Kernel::Cudnn(fastest),
                })
            }
            algo => {
                cudnn_takes(algo, call, &self.dims)?;
                Ok(Kernel::Cudnn(algo))
            }
        }
    }

    /// `Auto`'s cuDNN algorithm for calls of `shape`: the only candidate, or the trials'
    /// [`FastestAgreeing`], measured once.
    fn cudnn_fastest(
        &self,
        cudnn: &CudnnRnn,
        shape: CallShape,
        inputs: ForwardInputs,
    ) -> Result<RnnAlgo> {
        let (_, dtype, _, batch, train) = shape;
        memoized(&self.cudnn_fastest, shape, || {
            match cudnn_candidates(dtype, batch, train) {
                [only] => Ok(*only),
                candidates => {
                    let mut pick = FastestAgreeing::new();
                    let judge = &mut |t: Trial| pick.judge(t);
                    cudnn.trials(inputs, (candidates, judge))?;
                    Ok(pick.best.0)
                }
            }
        })
    }

    /// Whether ours (on their plan) beat cuDNN (with `Auto`'s algorithm) on calls of `shape`
    /// ([`ours_win`]), measured once.
    fn ours_beat(
        &self,
        sides: ((&PersistentLstm, Plan), (&CudnnRnn, RnnAlgo)),
        shape: CallShape,
        inputs: ForwardInputs,
    ) -> Result<bool> {
        let (_, dtype, _, _, _) = shape;
        memoized(&self.ours_won, shape, || match dtype {
            DType::BF16 => ours_win::<half::bf16>(sides, inputs),
            _ => ours_win::<half::f16>(sides, inputs),
        })
    }

    /// The cuDNN algorithm `Auto` measured fastest for `(seq, batch, train)` (on any device and
    /// dtype that ran it), if it did.
    pub fn measured(&self, seq: usize, batch: usize, train: bool) -> Option<RnnAlgo> {
        let memo = self.cudnn_fastest.lock().unwrap_or_else(|e| e.into_inner());
        memo.iter()
            .find(|((_, _, s, b, t), _)| (*s, *b, *t) == (seq, batch, train))
            .map(|(_, &algo)| algo)
    }
}

/// A flat tensor over a copy of `op`'s elements.
fn copy<T: CudaDType + DeviceRepr>(op: Operand, what: &str, dev: &CudaDevice) -> Result<Tensor> {
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

/// Whether ours (on `plan`) run the call of `inputs` faster than cuDNN's `algo`, and agree
/// with it: each side runs the call (forward, and in training backward with a gradient of
/// ones) on copies of the operands, without dropout (a measurement must not move the masks'
/// counters), once untimed and then [`OURS_TRIAL_REPS`] times, its fastest run counting; ours
/// win when faster and their packed output [`agrees`] with cuDNN's.
fn ours_win<T: CudaDType + DeviceRepr + ValidAsZeroBits>(
    ((ours, plan), (cudnn, algo)): ((&PersistentLstm, Plan), (&CudnnRnn, RnnAlgo)),
    inputs: ForwardInputs,
) -> Result<bool> {
    let ForwardInputs {
        call,
        dropout,
        ops: [x, w, s],
        ..
    } = inputs;
    let dev = x.0.device().clone();
    let stream = dev.cuda_stream();
    let (x, w, s) = (
        copy::<T>(x, "x", &dev)?,
        copy::<T>(w, "weight", &dev)?,
        copy::<T>(s, "state", &dev)?,
    );
    let quiet = Dropout { p: 0.0, ..dropout };
    // One call forward (and backward, in training); its output.
    let run = |on_ours: bool| -> Result<Tensor> {
        let (out, reserve) = with_operand(&x, |xo| {
            with_operand(&w, |wo| {
                with_operand(&s, |so| {
                    let copies = ForwardInputs {
                        dropout: quiet,
                        ops: [xo, wo, so],
                        ..inputs
                    };
                    match on_ours {
                        true => ours.forward(plan, copies),
                        false => cudnn.forward(algo, copies),
                    }
                })
            })
        })?;
        let n = call.output_len() + call.state_len();
        let packed = Tensor::from_storage(Storage::Cuda(out), n, BackpropOp::none(), false);
        if let Some(r) = reserve {
            let grad = packed.ones_like()?;
            let inputs = BackwardInputs {
                call,
                x: &x,
                weight: &w,
                state: &s,
                packed: &packed,
                grad: &grad,
                // The whole of each backward's work (cuDNN's always makes dx).
                state_grad: true,
                input_grad: true,
                dw_into: None,
            };
            backward(on_ours, (ours, cudnn), r, inputs)?;
        }
        Ok(packed)
    };
    let time = |on_ours: bool| -> Result<(f64, Tensor)> {
        let mut out = run(on_ours)?;
        let mut best = f64::INFINITY;
        for _ in 0..OURS_TRIAL_REPS {
            stream.synchronize()?;
            let start = Instant::now();
            out = run(on_ours)?;
            stream.synchronize()?;
            best = best.min(start.elapsed().as_secs_f64());
        }
        Ok((best, out))
    };
    let (theirs, reference) = time(false)?;
    let (mine, out) = time(true)?;
    let values = |t: &Tensor| -> Result<Vec<f64>> { t.to_dtype(DType::F64)?.to_vec1::<f64>() };
    Ok(mine < theirs && agrees(&values(&out)?, &values(&reference)?))
}

/// The backward of a measured call, on the side (ours or cuDNN) whose forward left `reserve`.
fn backward(
    on_ours: bool,
    (ours, cudnn): (&PersistentLstm, &CudnnRnn),
    reserve: GpuReserve,
    inputs: BackwardInputs,
) -> Result<()> {
    match on_ours {
        true => ours.backward(reserve, inputs)?,
        false => cudnn.backward(reserve, inputs)?,
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RnnConfig;

    fn dims(mode: RnnMode, cfg: RnnConfig) -> RnnDims {
        RnnDims::new(mode, 8, 16, &cfg)
    }

    #[test]
    fn ours_are_in_play_for_persistent_and_auto_on_plain_lstms() {
        let lstm = dims(RnnMode::Lstm, RnnConfig::default());
        for (algo, want) in [
            (RnnAlgo::Persistent, true),
            (RnnAlgo::Auto, true),
            (RnnAlgo::Standard, false),
            (RnnAlgo::PersistStatic, false),
        ] {
            assert_eq!(ours_in_play(algo, &lstm), want, "{algo:?}");
        }
        let bidirectional = RnnConfig {
            bidirectional: true,
            ..Default::default()
        };
        let projected = RnnConfig {
            proj_size: 4,
            ..Default::default()
        };
        for d in [
            dims(RnnMode::Gru, RnnConfig::default()),
            dims(RnnMode::Lstm, bidirectional),
            dims(RnnMode::Lstm, projected),
        ] {
            assert!(!ours_in_play(RnnAlgo::Persistent, &d), "{d:?}");
        }
    }

    #[test]
    fn cudnn_persistent_algorithms_refuse_lengths_and_projections() {
        let plain = dims(RnnMode::Lstm, RnnConfig::default());
        let projected = dims(
            RnnMode::Lstm,
            RnnConfig {
                proj_size: 4,
                ..Default::default()
            },
        );
        let call = |dims, lengths: Option<Vec<usize>>| Call {
            dims,
            seq: 3,
            batch: 2,
            lengths: lengths.map(Into::into),
        };
        let varlen = call(plain, Some(vec![3, 2]));
        assert!(cudnn_takes(RnnAlgo::Standard, &varlen, &plain).is_ok());
        assert!(cudnn_takes(RnnAlgo::PersistStatic, &varlen, &plain).is_err());
        assert!(cudnn_takes(RnnAlgo::Standard, &call(projected, None), &projected).is_ok());
        assert!(cudnn_takes(RnnAlgo::PersistDynamic, &call(projected, None), &projected).is_err());
        assert!(cudnn_takes(RnnAlgo::PersistDynamic, &call(plain, None), &plain).is_ok());
        assert!(!auto_measures(&varlen, &plain));
        assert!(!auto_measures(&call(projected, None), &projected));
        assert!(auto_measures(&call(plain, None), &plain));
    }

    #[test]
    fn half_training_at_small_batches_tries_standard_only() {
        assert_eq!(cudnn_candidates(DType::F16, 7, true), [RnnAlgo::Standard]);
        assert_eq!(cudnn_candidates(DType::BF16, 1, true), [RnnAlgo::Standard]);
        assert_eq!(cudnn_candidates(DType::F16, 8, true), RnnAlgo::CONCRETE);
        assert_eq!(cudnn_candidates(DType::F16, 1, false), RnnAlgo::CONCRETE);
        assert_eq!(cudnn_candidates(DType::F32, 1, true), RnnAlgo::CONCRETE);
    }

    #[test]
    fn agreement_is_relative_and_refuses_nan() {
        assert!(agrees(&[1.0, 2.0], &[1.0, 2.0]));
        assert!(agrees(&[1.0, 2.001], &[1.0, 2.0]));
        assert!(!agrees(&[1.0, 2.5], &[1.0, 2.0]));
        assert!(!agrees(&[f64::NAN, 2.0], &[1.0, 2.0]));
        assert!(agrees(&[0.0], &[0.0]));
    }

    #[test]
    fn the_fastest_agreeing_trial_wins() {
        let trial = |algo, seconds, v: f64| Trial {
            algo,
            seconds,
            results: [vec![v], vec![v], vec![v], vec![v]],
        };
        let pick = |trials: Vec<Trial>| {
            let mut p = FastestAgreeing::new();
            trials.into_iter().for_each(|t| p.judge(t));
            p.best.0
        };
        assert_eq!(pick(vec![]), RnnAlgo::Standard);
        let [s, ps, psh, pd] = RnnAlgo::CONCRETE;
        assert_eq!(
            pick(vec![
                trial(s, 3.0, 1.0),
                trial(ps, 2.0, 1.0),
                trial(pd, 1.0, 9.0)
            ]),
            ps,
            "a faster trial that disagrees does not count"
        );
        assert_eq!(
            pick(vec![trial(s, 2.0, 1.0), trial(ps, 2.0, 1.0)]),
            s,
            "the earlier wins a tie"
        );
        // The first trial that ran is the reference, whichever it is.
        assert_eq!(pick(vec![trial(psh, 3.0, 5.0), trial(pd, 1.0, 5.0)]), pd);
    }
}
