//! Which kernel runs each GPU call, decided in one function of named rules
//! ([`Chooser::choose`]), in the manner of PyTorch's `get_algo`
//! (aten/src/ATen/native/cudnn/RNN.cpp). The candidates are this crate's persistent LSTM and
//! GRU kernels ("ours", `crate::persistent`) and cuDNN's four algorithms (`crate::cudnn`).
//!
//! - The module's algorithm decides first: a cuDNN algorithm serves every call
//!   ([`cudnn_takes`] refuses what it cannot run); [`RnnAlgo::Persistent`] gives ours every
//!   call they take ([`ours_take_module`], [`ours_take_lengths`], [`ours_take_operands`],
//!   [`ours_take_dtype`], [`ours_take_batch`], then the kernels' plan,
//!   where the hidden size's share of each multiprocessor must fit in shared memory) and the
//!   others to cuDNN's [`PERSISTENT_FALLBACK`].
//! - [`RnnAlgo::Heuristic`], the default, decides by static rules what the benchmarks measured
//!   fastest ([`Chooser::heuristic`]): ours where they take the call and [`ours_lead`] (two
//!   directions: [`ours_lead_bidirectional`]), else
//!   cuDNN's algorithm of [`cudnn_by_rule`]. Past batch 32 some rules read how the module's
//!   calls will be launched (`RnnConfig::launch`: eagerly, or replayed from CUDA graphs), since
//!   cuDNN's `Standard` pays the host's launches eagerly step by step and ours do not.
//! - [`RnnAlgo::Auto`] measures, once per call shape (device, dtype, `seq`, `batch`, `train`):
//!   cuDNN's [`cudnn_candidates`] against each other (only those whose results [`agrees`] with
//!   `Standard`'s), then, where ours take the call, ours against cuDNN's pick; it leaves the
//!   heuristic's kernel only for one [`clearly_faster`] (medians and quartiles of
//!   [`TRIAL_REPS`] runs each), and never keeps one slower than `Standard`'s median
//!   ([`Stable`]). Calls that only `Standard` takes run it unmeasured ([`auto_measures`]).

use crate::backend::{operand_dtype, view, BackwardInputs, ForwardInputs, GpuReserve, Operand};
use crate::call::{Call, Dropout};
use crate::cudnn::{CudnnRnn, Trial};
use crate::layout::RnnDims;
use crate::persistent::{
    batch_groups, shape_wgmma_forward, Cell, OneLaunch, PersistentRnn, Plan, Tuning, CHUNK_SAMPLES,
    MAX_KERNEL_BATCH,
};
use crate::timing::{eager_times, graphed_times};
use crate::{Launch, MathMode, RnnAlgo, RnnConfig, RnnMode};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use candle_core::cuda_backend::{CudaDType, CudaDevice, DeviceId};
use candle_core::op::BackpropOp;
use candle_core::{bail, CudaStorage, DType, Result, Storage, Tensor};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::Mutex;

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
    pub ours: Option<PersistentRnn>,
}

impl Backends {
    /// The paths of a module of `dims` built with `cfg`: ours where [`ours_in_play`], tuned as
    /// the environment asks.
    pub fn new(dims: RnnDims, cfg: &RnnConfig) -> Self {
        let ours = Cell::of(dims.mode).filter(|_| ours_in_play(cfg.algo, &dims));
        Self {
            cudnn: CudnnRnn::new(dims, cfg.math, cfg.dropout),
            ours: ours.map(|cell| PersistentRnn::new(dims, cell, Tuning::from_env())),
        }
    }
}

// The rules, each named for what it decides.

/// Whether a module built for `algo` may run calls on ours: where it asks for them
/// (`Persistent`) or lets the chooser pick them (`Heuristic`, `Auto`), and they take the module.
fn ours_in_play(algo: RnnAlgo, dims: &RnnDims) -> bool {
    matches!(
        algo,
        RnnAlgo::Persistent | RnnAlgo::Heuristic | RnnAlgo::Auto
    ) && ours_take_module(dims)
}

/// Ours implement an LSTM or GRU cell without a projection (`persistent/recurrence_fwd.cu`,
/// `recurrence_bwd.cu`), in one direction or in two (`persistent/units.rs`).
fn ours_take_module(dims: &RnnDims) -> bool {
    Cell::of(dims.mode).is_some() && dims.proj_size == 0
}

/// Where `Heuristic` gives ours a bidirectional call they take (the directions side by side where
/// both fit at once, else in turn, `persistent/units.rs`; the rules below were measured on one
/// direction): every one in half precision, except graphed training whose backward runs on the
/// wgmma kernel (layers of 1024 at batch 128), where cuDNN's `Standard`, which overlaps the two
/// directions, took 0.86-0.95x of ours' time (LSTM [30, 128, 1024] 10.5 against 11.6 µs an
/// example, GRU 9.3 against 10.8, LSTM [30, 128, 3 x 1024] 36.5 against 38.4; ours with the two
/// wgmma backwards side by side 11.8 against 10.5, `results/2026-12-02-h200-side-by-side/`).
/// Elsewhere graphed f16 training took 0.33-0.92x of `Standard`'s time (LSTM [30, 32, 128] 3.4
/// against 10.2, [35, 20, 2 x 1500] 108 against 290, [30, 128, 3 x 512] 16.4 against 17.7),
/// forwards 0.30-1.00x, and eager training 0.11-0.77x, at 1024 and batch 128 too (LSTM
/// [30, 128, 1024] 12.8 against 18.7; H200, `results/2026-12-02-h200-bidir-units/`), all before
/// the directions ran side by side. f32 in TF32 was not measured: cuDNN's rule keeps it.
fn ours_lead_bidirectional(plan: &Plan, dtype: DType, (train, launch): (bool, Launch)) -> bool {
    let graphed_wgmma_training = train && plan.wgmma_backward && launch == Launch::Graphed;
    dtype != DType::F32 && !graphed_wgmma_training
}

/// Ours run every sample for all of the call's steps: no per-sample lengths.
fn ours_take_lengths(call: &Call) -> bool {
    call.lengths.is_none()
}

/// Ours read the weights, and h_0 where the call has one, in pairs of elements: the weight `w`
/// must start at an even element, and the state `s` unless the call was given none (its operand
/// is then a placeholder that nothing reads, `Call::zero_state`).
fn ours_take_operands(call: &Call, [_, w, s]: [Operand; 3]) -> bool {
    let even = |o: Operand| o.1.start_offset() % 2 == 0;
    even(w) && (call.zero_state || even(s))
}

/// Ours multiply on tensor cores with f32 accumulation: bf16 or f16 operands, and f32 ones in
/// TF32 where the module's math allows TF32 (`MathMode::Tf32`). Strict fp32 (`MathMode::Fp32`)
/// stays on cuDNN.
fn ours_take_dtype(dtype: DType, math: MathMode) -> bool {
    match dtype {
        DType::BF16 | DType::F16 => true,
        DType::F32 => math == MathMode::Tf32,
        _ => false,
    }
}

/// Ours keep each sample's accumulators in registers for a chunk of [`CHUNK_SAMPLES`] samples at a
/// time: batches up to [`MAX_KERNEL_BATCH`], inference and training.
fn ours_take_batch(batch: usize) -> bool {
    batch <= MAX_KERNEL_BATCH
}

/// What `RnnAlgo::Persistent` runs the calls ours do not take on: cuDNN's standard algorithm,
/// which takes every configuration, over the same weights.
const PERSISTENT_FALLBACK: RnnAlgo = RnnAlgo::Standard;

// `Heuristic`'s rules: what graphed training calls and forwards measured fastest on an H100
// (cuDNN 9.19) for every kernel that serves a call, on the benchmark grid and PTB-like LSTM
// shapes (`results/2026-11-25-h100-plain-api/`, `sweep.sh`). In short: ours win every call they
// take in one or two layers (0.27-0.91x of cuDNN's best, bf16; 0.33x on PTB large) and in three
// or four that they run as one wavefront (0.35-0.52x, H200,
// `results/2026-11-26-h200-deep-stacks/`); cuDNN's `PersistStaticSmallH` wins f32 and f16 calls
// at hidden 128 (0.35-0.53x of `Standard`), its
// `PersistStatic` f16 LSTMs whose sizes are multiples of 128 at batches up to 32, and in
// inference up to 128 (its kernels for other sizes, and at batches 9-31 not multiples of 8, run
// many times slower), except where ours lead it; cuDNN runs bf16 at
// one speed whatever the algorithm, and its persistent f32 algorithms and `PersistDynamic` run
// 2-15x slower than `Standard`. Past batch 32, where eager calls ([`Launch::Eager`]) and graphs'
// replays ([`Launch::Graphed`]) ranked kernels differently, each has its rule
// (`results/2026-11-26-h100-eager-graphed/`): the module says which (a kernel picked by how
// each call is launched would break a graph's capture, whose warm-up must run the same ops,
// `results/2026-11-26-h100-launch-rules/`).

/// Where `Heuristic` puts calls that ours take (an LSTM or GRU in bf16 or f16, batch up to 32,
/// ...): ours, for the cells of [`OURS_MEASURED_CELLS`], in the stacks of
/// [`ours_lead_stack`] (and eagerly [`ours_lead_stack_eagerly`]), except where cuDNN's f16
/// persistent kernels lead: [`small_h_leads`] (f16 GRU [200, 20, 128]: 18.8 against ours' 25.1
/// µs an example) where [`small_h_leads_ours`], or [`persist_static_leads`] where not
/// [`ours_lead_persist_static`], in stacks of up to [`OURS_LEAD_MAX_LAYERS`] (deeper
/// wavefronts ran faster than it). f32 in TF32 has a rule of its own, [`ours_lead_tf32`], which
/// [`Chooser::heuristic`] asks instead.
fn ours_lead(
    call: &Call,
    dims: &RnnDims,
    (dtype, train): (DType, bool),
    (one_launch, launch): (OneLaunch, Launch),
) -> bool {
    let deeper = dims.num_layers > OURS_LEAD_MAX_LAYERS;
    let persist_static = persist_static_leads(dims, call, (dtype, train), launch);
    let cudnn_faster = (small_h_leads(dims, call, (dtype, train))
        && small_h_leads_ours(dims, call, train))
        || (persist_static && !ours_lead_persist_static(dims, call, train) && !deeper);
    let stack = (ours_lead_stack(dims, one_launch.every_pass(train))
        && (call.batch <= CHUNK_SAMPLES
            || ours_lead_in_chunks(call, dims, train, launch)
            || ours_lead_stack_in_chunks(call, dims, (one_launch, train))))
        || ours_lead_in_groups(call, dims, (dtype, train), launch)
        || ours_lead_wide_batch_stack(call, dims, train, launch);
    // Eagerly, where f16 `PersistStatic` leads a stack that ours run in one group (its forward
    // at [30, 128, 3 x 512] ran beside ours: 6.2-8.5 against 7.0-7.1 µs an example), it keeps
    // it; in batch groups ours ran that forward 1.7x faster than in one (graphed,
    // `results/2026-11-27-h100-deep-stacks/`), and lead.
    let eagerly = launch == Launch::Eager
        && ours_lead_stack_eagerly(call, dims, (one_launch, train))
        && !persist_static;
    OURS_MEASURED_CELLS.contains(&dims.mode) && (stack || eagerly) && !cudnn_faster
}

/// Where the planner put an inference forward on the wgmma kernel (`persistent::rules`'s
/// `shape_wgmma_forward`: in half precision, hidden 1024 from batch 32, where `Standard` served
/// from batch 96 before, and hidden 512 from batch 64 to 128, where ours led already), ours lead
/// it:
/// graphed forwards took 0.61-0.81x of `Standard`'s time (LSTM [30, 128, 1024] 1.51 against 2.45
/// µs an example, GRU [200, 128, 3 x 1024] 24.6 against 30.4), eager ones 0.40-0.58x (H200,
/// `results/2026-11-30-h200-wgmma-forward/`); at batch 32 and 64 on 16-unit blocks 0.83-0.94x
/// of ours before, and stacks of 1024 at batch 32, which cuDNN had served, 0.58-0.67x of its
/// time graphed (LSTM [30, 32, 3 x 1024] 9.86 against 16.96), 0.27-0.31x eagerly
/// (`results/2026-12-01-h200-wgmma-16-units/`).
/// A training plan whose backward runs on the wgmma kernel (`shape_wgmma_backward`: layers of
/// 1024 at batch 128, whose forward is on wgmma too) is taken where it is planned too, for one
/// layer, and eagerly for stacks of up to [`WGMMA_EAGER_STACK_MAX_LAYERS`], where cuDNN's
/// `Standard` waits on the host's launches ([`Launch`]): there ours took 0.42-0.57x of its time
/// at 4 x 1024 (LSTM [30, 128, 4 x 1024] 23.2 against 40.8 µs an example, GRU [200, 128,
/// 4 x 1024] 133 against 321). Graphed, `Standard`, which overlaps the layers' backward, keeps
/// stacks: it trained them in 0.87-1.06x of the time on both wgmma kernels (LSTM [200, 128,
/// 3 x 1024] 99.7 against 105.6, GRU [200, 128, 4 x 1024] 112.9 against 131.0, LSTM [30, 128,
/// 2 x 1024] 12.0 against 11.2; `results/2026-12-01-h200-stack-1024-profile/`, "Stacks of 1024
/// on the wgmma kernels").
fn wgmma_leads(plan: &Plan, dims: &RnnDims, (train, launch): (bool, Launch)) -> bool {
    let stack_backward = train && dims.num_layers > 1 && plan.wgmma_backward;
    let eager_stack = launch == Launch::Eager && dims.num_layers <= WGMMA_EAGER_STACK_MAX_LAYERS;
    (plan.wgmma || plan.wgmma_backward) && (!stack_backward || eager_stack)
}

/// See [`wgmma_leads`]: the deepest stack measured.
const WGMMA_EAGER_STACK_MAX_LAYERS: usize = 4;

/// Where `Heuristic` gives ours f32 calls in TF32, inference and training: one layer at batches
/// up to [`CHUNK_SAMPLES`], except GRUs at hidden sizes up to [`TF32_SMALL_H_UP_TO`], where
/// cuDNN's `PersistStaticSmallH` leads. Graphed on an H100: forwards
/// (`results/2026-11-27-h100-tf32-forward/`) took 0.27-0.51x of cuDNN's TF32 `Standard` at
/// [30, 8-32, 256-512] and 0.83x of `PersistStaticSmallH` on LSTM [30, 32, 128], but 1.4x on GRU
/// [30, 32, 128] and 1.24-1.31x `Standard` at batch 128; training
/// (`results/2026-11-27-h100-tf32-train/`) 0.36-0.57x of PyTorch's TF32 module at [30, 32,
/// 256-1024] and 0.82x on LSTM [30, 32, 128], but 1.27x on GRU [30, 32, 128] and 0.85-0.91x at
/// [30, 128, 512], whose forward alone is slower: so training past batch 32 goes to ours too
/// at hidden sizes up to [`TF32_CHUNKED_MAX_HIDDEN`] (at [30, 128, 512] 0.91x `Standard`'s time
/// for a GRU, 0.97x for an LSTM), inference does not. Stacks run layer by layer (the wavefront
/// multiplies half elements only; see below). At hidden 1024 a TF32 forward splits K over
/// clusters of 2; at several chunks of the batch its f32 tiles did not fit (cuDNN served; on
/// scaled f16 operands they do, below). Since ours run each batch group in one cluster, LSTMs at
/// hidden 128 lead up to that batch too: at [30, 48-128, 128] training took 0.83-0.89x of
/// `PersistStaticSmallH`'s time, forwards 0.65-0.80x; GRUs there still took 1.06-1.34x (1.5x at
/// [200, 32, 128]; `results/2026-11-27-h100-small-h-default/`); with the pushed backward, 1.0x at
/// [30, 32, 128], 1.1-1.23x at batches 20 and 48 and seq 200
/// (`results/2026-11-27-h100-pushed-backward/`).
///
/// Stacks (layer by layer, past batch 32 in batch groups) lead up to
/// [`TF32_STACK_MAX_LAYERS`] layers, in training and inference, graphed and eager: graphed,
/// ours took 0.44-0.82x of cuDNN's TF32 `Standard`'s training time and 0.46-0.95x of its
/// forwards' on LSTM and GRU [30, 128, 3 x 512], [200, 128, 3 x 512], [30, 128, 2 x 512],
/// [30, 128, 3 x 256], [30, 64, 3 x 512], [30, 32, 2 x 512], [30, 32, 3 x 512] and
/// [35, 20, 2 x 650]; eagerly 0.17-0.32x and 0.16-0.28x (H200,
/// `results/2026-11-29-h200-tf32-stacks/`).
///
/// Since the one-cluster forward pushes h in f32 too (`results/2026-11-29-h200-tf32-push/`,
/// graphed, H200), one GRU layer at hidden up to [`TF32_SMALL_H_UP_TO`] leads
/// `PersistStaticSmallH` at batches up to [`CHUNK_SAMPLES`] in training (GRU [30, 32, 128] 2.89
/// against 3.67 µs an example, [200, 32, 128] 13.2 against 15.4) and in inference up to seq
/// [`TF32_SMALL_GRU_INFERENCE_MAX_SEQ`] ([30, 32, 128] 1.28 against 1.70, but [200, 32, 128]
/// 6.7 against 5.4); at batch 128 `PersistStaticSmallH` then kept both (1.48 | 0.65 against
/// 1.42 | 0.47; but see the scaled operands below). With batches 16-24 in groups of 4
/// (`persistent::batch_groups`) ours lead there too (GRU [30, 16, 128] 5.25 | 2.33 against
/// 6.53 | 3.35, [100, 16, 128]'s training 12.7 against 14.4); at hidden up to
/// [`TF32_SMALL_GRU_INFERENCE_PAST_HIDDEN`] `PersistStaticSmallH` keeps inference (forwards at
/// [30, 8-32, 64] 3.86, 1.82 and 0.93 against 3.51, 1.75 and 0.90; the training the same or
/// faster on ours: `results/2026-11-29-h200-batch128-exchange/`). On the
/// scaled f16 operands (below) in half precision's batch groups, a small GRU's inference leads
/// up to batch 128 too: [30, 64, 128] 0.67 against 0.88 µs an
/// example, [30, 128, 128] 0.39 against 0.46 (`results/2026-12-01-h200-tf32-scaled-half-rules/`;
/// [30, 48-96, 128] 0.72-0.44 against 1.17-0.61, but [200, 64-128, 128] 3.24 and 2.24 against
/// 2.83 and 1.59). With its training forward scaled and half precision's groups, its training
/// leads up to that batch too: [30, 96-128, 128] 0.95 and 0.89 against 1.62 and 1.39, [200,
/// 128, 128] 4.82 against 11.44, [30, 128, 64] 0.55 against 1.08
/// (`results/2026-12-01-h200-tf32-scaled-rules/`).
///
/// Inference at the wgmma forward's shapes (`persistent::rules`'s `shape_wgmma_forward`: hidden
/// 1024 from batch 32, 512 from 64 to 128), whose products take the f32 operands as f16 ones
/// scaled by powers of two (`Plan::scaled`), leads in stacks of up to
/// [`TF32_SCALED_MAX_LAYERS`]: graphed forwards took 0.40-0.50x of cuDNN's TF32 `Standard`'s time
/// at [30, 128, 1024], [30, 128, 3 x 1024] and [200, 128, 3 x 1024] (LSTM [30, 128, 1024] 1.88
/// against 4.66 µs an example), eagerly 0.36-0.47x; at the shapes the rule above gave ours
/// already they run on it too (LSTM [30, 32, 1024] 4.1, [30, 128, 3 x 512] 2.6; H200,
/// `results/2026-12-01-h200-tf32-f16-scaled/`). On the layer-by-layer forward, sized for f16
/// tiles, inference of stacks up to hidden [`TF32_SCALED_STACK_MAX_HIDDEN`] at batches up to
/// [`CHUNK_SAMPLES`] leads too: PTB large's [35, 20, 2 x 1500] 25.9 against `Standard`'s 52.5
/// µs an example, [35, 20, 2 x 1024] and [30, 8, 3 x 1024] 0.42-0.56x its time
/// (`results/2026-12-01-h200-tf32-f16-scaled-layers/` §4).
///
/// With the training forward scaled, ours train wider layers past batch 32, and run batches
/// past 128 (graphed, µs an example against the TF32 `Standard` or `PersistStaticSmallH` the
/// rule above left them on; H200, `results/2026-12-01-h200-tf32-wide-rules/`):
/// - one layer up to hidden [`TF32_WIDE_MAX_HIDDEN`] trains on ours up to batch
///   [`TF32_WIDE_MAX_BATCH`]: LSTM [30, 64-128, 1024] 13.6-12.2 against 23.4-14.0, [200, 64-128,
///   1024] 0.51-0.85x, [30, 128, 768] 0.91-0.95x; at batch 256 `Standard` led (LSTM [30, 256,
///   1024] 9.9 against 12.5, [30, 256, 768] 7.1 against 11.0);
/// - stacks up to that hidden size lead up to batch [`TF32_WIDE_STACK_MAX_BATCH`], in training
///   and inference: LSTM [30, 32, 3 x 1024] 45 against 77, [200, 32, 3 x 1024] 260 against 453,
///   [30, 64, 3 x 1024] 0.74-0.77x, [30, 64, 3 x 768] 0.74-0.94x and its forward 0.72-0.74x; at
///   batch 96-128 `Standard` trained three layers of 1024 in 0.87-0.96x of ours' time, three of
///   768 at 128 in 0.74-0.76x;
/// - past batch [`TF32_WIDE_MAX_BATCH`], layers and stacks up to hidden
///   [`TF32_CHUNKED_MAX_HIDDEN`] lead in training and inference: [30, 256, 128-256] 0.34-0.60x
///   (GRUs on ours too), [30, 192-256, 512] 0.54-0.88x, [200, 256, 512] 0.47-0.69x, [30, 256,
///   3 x 512] 0.86-0.98x (training and forwards).
///
/// Where the module's forwards keep TF32 products (`scaled` false:
/// `CANDLE_RNN_PERSISTENT_F16_SCALED=0`), the rule is the one measured on them, before the
/// scaled operands: batches up to 128, a small GRU on ours up to batch 32 (at batch 128 its
/// training took 1.48 µs an example against `PersistStaticSmallH`'s 1.42, above), stacks up to
/// hidden 650 at batches up to 32 and 512 past it, and no wide layers past batch 32.
///
/// Eagerly ([`Launch::Eager`], a module's default), where cuDNN's `Standard` waits on the host's
/// launches step by step, ours also lead layers wider than [`TF32_CHUNKED_MAX_HIDDEN`] up to
/// [`TF32_EAGER_WIDE_MAX_HIDDEN`] at batches up to [`TF32_WIDE_MAX_BATCH`], stacks and one
/// layer's inference alike. Eager training | forward, µs an example, ours against the rule's
/// `Standard` (H200, `results/2026-12-01-h200-plain-api-grid/` `tf32-eager`): LSTM [30, 128,
/// 3 x 768] 31.5 | 11.7 against 39.0 | 16.6, GRU 27.0 | 10.5 against 34.2 | 14.0; the forward of
/// LSTM [30, 128, 768] 4.0 against 5.8, GRU 3.7 against 4.1. At [30, 128, 3 x 1024] they tied
/// (36.6 against 35.7 in training), and at batch 256 `Standard` kept leading ([30, 256, 768]
/// 11.3 | 4.6 against 7.9 | 2.3).
fn ours_lead_tf32(
    call: &Call,
    dims: &RnnDims,
    (train, scaled): (bool, bool),
    launch: Launch,
) -> bool {
    let (hidden, batch) = (dims.hidden_size, call.batch);
    // Without the scaled operands (`CANDLE_RNN_PERSISTENT_F16_SCALED=0`), the rule as it was
    // measured on TF32 products: up to batch 128, no wide layers past batch 32.
    if !scaled && batch > TF32_WIDE_MAX_BATCH {
        return false;
    }
    let small_h = hidden <= TF32_SMALL_H_UP_TO;
    // In batch groups (`persistent::batch_groups`) ours trained [30, 64-128, 512] in 0.43-0.53x
    // of cuDNN's TF32 `Standard`'s time, and ran its forward at batch 128 in 0.65-0.67x
    // (`results/2026-11-27-h100-batch-groups/`): there inference goes to ours too, and past
    // batch 128 at any grouping.
    let shape = (dims.num_layers, hidden, batch);
    let grouped = batch_groups(shape, (DType::F32, train)) > 1;
    let past_wide = batch > TF32_WIDE_MAX_BATCH;
    let chunked = (train || grouped || past_wide) && hidden <= TF32_CHUNKED_MAX_HIDDEN;
    // Training layers wider than that, on the scaled forward, up to batch 128.
    let wide_training = scaled && train && hidden <= TF32_WIDE_MAX_HIDDEN && !past_wide;
    // On scaled f16 operands in half precision's batch groups (`persistent::rules`'s
    // `rules_operands`) a small GRU leads at every batch too, its inference at short seqs.
    let pushed_leads = dims.num_layers == 1
        && (scaled || batch <= CHUNK_SAMPLES)
        && (train
            || (call.seq <= TF32_SMALL_GRU_INFERENCE_MAX_SEQ
                && hidden > TF32_SMALL_GRU_INFERENCE_PAST_HIDDEN));
    let small_gru = dims.mode == RnnMode::Gru && small_h && !pushed_leads;
    let layer = dims.num_layers == 1 && (batch <= CHUNK_SAMPLES || chunked || wide_training);
    let stack_hidden = match (scaled, batch) {
        (true, ..=TF32_WIDE_STACK_MAX_BATCH) => TF32_WIDE_MAX_HIDDEN,
        (false, ..=CHUNK_SAMPLES) => TF32_PRODUCTS_STACK_MAX_HIDDEN,
        _ => TF32_CHUNKED_MAX_HIDDEN,
    };
    let stack = (2..=TF32_STACK_MAX_LAYERS).contains(&dims.num_layers) && hidden <= stack_hidden;
    let scaled_inference = scaled
        && !train
        && (shape_wgmma_forward(hidden, batch)
            || (batch <= CHUNK_SAMPLES && hidden <= TF32_SCALED_STACK_MAX_HIDDEN))
        && dims.num_layers <= TF32_SCALED_MAX_LAYERS;
    let eager_wide = launch == Launch::Eager
        && scaled
        && !past_wide
        && (TF32_CHUNKED_MAX_HIDDEN + 1..=TF32_EAGER_WIDE_MAX_HIDDEN).contains(&hidden)
        && dims.num_layers <= TF32_STACK_MAX_LAYERS;
    (layer || stack || scaled_inference || eager_wide) && !small_gru
}

/// See [`ours_lead_tf32`]: the widest stack measured ahead of `Standard` eagerly past batch
/// [`TF32_WIDE_STACK_MAX_BATCH`].
const TF32_EAGER_WIDE_MAX_HIDDEN: usize = 768;

/// See [`ours_lead_tf32`]: the widest stack measured on the scaled f16 operands up to batch
/// [`CHUNK_SAMPLES`] (PTB large's).
const TF32_SCALED_STACK_MAX_HIDDEN: usize = 1500;

/// See [`ours_lead_tf32`]: the deepest stack measured on the scaled f16 operands.
const TF32_SCALED_MAX_LAYERS: usize = 3;

/// See [`ours_lead_tf32`]: below where a small GRU's inference on ours and on
/// `PersistStaticSmallH` take the same time by the two seqs measured (30 and 200, each a fixed
/// cost and a cost a step: 10 + 1.02 T µs a call against 33 + 0.70 T at [T, 32, 128], even near
/// seq 71).
const TF32_SMALL_GRU_INFERENCE_MAX_SEQ: usize = 64;

/// See [`ours_lead_tf32`]: up to this hidden size a small GRU's inference stays on
/// `PersistStaticSmallH`.
const TF32_SMALL_GRU_INFERENCE_PAST_HIDDEN: usize = 64;

/// See [`ours_lead_tf32`]: the deepest TF32 stack measured.
const TF32_STACK_MAX_LAYERS: usize = 3;

/// See [`ours_lead_tf32`]: the largest batch at which layers wider than
/// [`TF32_CHUNKED_MAX_HIDDEN`] train on ours (at 256 `Standard` led hidden 768-1024), and past
/// which layers up to it infer on ours in any batch grouping.
const TF32_WIDE_MAX_BATCH: usize = 128;

/// See [`ours_lead_tf32`]: the widest layer measured in TF32 training past batch 32.
const TF32_WIDE_MAX_HIDDEN: usize = 1024;

/// See [`ours_lead_tf32`]: the largest batch at which stacks up to [`TF32_WIDE_MAX_HIDDEN`] lead
/// (at 96-128 `Standard` trained three layers of 1024 faster).
const TF32_WIDE_STACK_MAX_BATCH: usize = 64;

/// See [`ours_lead_tf32`]: the widest layer ours lead at every batch they take.
const TF32_CHUNKED_MAX_HIDDEN: usize = 512;

/// See [`ours_lead_tf32`]: the widest stack measured on TF32 products up to batch
/// [`CHUNK_SAMPLES`] (PTB medium's, at batch 20).
const TF32_PRODUCTS_STACK_MAX_HIDDEN: usize = 650;

/// See [`ours_lead_tf32`].
const TF32_SMALL_H_UP_TO: usize = 128;

/// Past batch 32 (the kernels multiply chunks of 32 in turn) ours lead one layer: eagerly in
/// training and inference up to batch [`OURS_LEAD_IN_CHUNKS_MAX_BATCH`] (below); graphed, in
/// training up to batch [`OURS_LEAD_TRAINING_IN_CHUNKS_MAX_BATCH`], in inference up to it at
/// hidden sizes up to [`OURS_LEAD_IN_CHUNKS_MAX_HIDDEN`] and up to
/// [`OURS_LEAD_SMALL_IN_CHUNKS_MAX_BATCH`] at hidden sizes up to
/// [`OURS_LEAD_SMALL_IN_CHUNKS_MAX_HIDDEN`].
///
/// Training: graphed through `loss.backward()`, at batches 40-64 ours took 0.81-0.96x of bf16
/// `Standard`'s time at hidden 256-1024 ([30, 64, 512] LSTM 6.8 against 7.5 µs an example, GRU
/// 6.6 against 6.9; [200, 64, 512] 0.81-0.82x), 0.47-0.61x at 650 and 0.75-0.77x at 128 (where
/// f16 `PersistStaticSmallH` leads both: [`small_h_leads`]), H100,
/// `results/2026-11-26-h100-batch64-single/`. At batch 128 they took 1.40-1.51x
/// (`results/2026-11-26-h100-chunk-clusters/`).
///
/// Inference: eager forwards at batch 128 took 0.47-0.50x of cuDNN's bf16 `Standard` at hidden
/// 128 and 0.91x at 512, 1.23-1.26x at 1024 (every block reads all of h_{t-1} a step),
/// `results/2026-11-25-h100-forward-chunks/`; graphed (the device's time) 1.6x `Standard`'s at
/// hidden 512 (H200, `results/2026-11-26-h200-forward-graphed/`).
///
/// Eager against graphed ([`Launch`]; H100, `results/2026-11-26-h100-eager-graphed/`, ours
/// against bf16 `Standard`, µs an example): at batch 128 and hidden 256 ours trained in 4.8-5.3
/// against 6.1-12 eagerly (graphed 4.4-4.5 against 3.2), at 512 in 6.7-7.0 against 6.6-7.7;
/// graphed forwards at batches 96-128 took 1.2-1.45x `Standard`'s time at hidden 512 (GRU
/// [30, 128, 512] 2.12 against 1.46), 0.97-1.0x at 256 and 0.9x at 128, and at batch 64 and
/// hidden 512 0.91-0.92x (`results/2026-11-26-h100-chunk-clusters/`).
///
/// Since the forward's multicast (`results/2026-11-27-h100-multicast/`, one command, H100):
/// graphed at batch 128 ours still trail `Standard` in training and in the forward at hidden 512,
/// and lead the forward at 256; eager training at [30, 128, 512] took ours 0.53-0.88x of
/// `Standard`'s time, which the rule does not follow yet (one measurement).
///
/// Eagerly ours lead one layer up to batch [`OURS_LEAD_IN_CHUNKS_MAX_BATCH`] at every hidden size
/// up to [`OURS_LEAD_EAGER_IN_CHUNKS_MAX_HIDDEN`], in training and inference: f16
/// [30, 96, 768] trained in 7.9 against `Standard`'s 14.2 µs an example (GRU 7.0 against 9.1) and
/// inferred in 3.3 against 5.4, [30, 96, 1024] trained in 0.58-0.68x; graphed `Standard` led
/// their training (6.3 against 6.9; H200, `results/2026-12-01-h200-half-rule-sweep/`);
/// [30, 128, 768] 7.1 | 3.1 against 11.0 | 4.2 (training | forward), [30, 80, 640] 7.7 | 3.1
/// against 15.0 | 6.6
/// (`results/2026-12-01-h200-half-rules/` `eager`).
fn ours_lead_in_chunks(call: &Call, dims: &RnnDims, train: bool, launch: Launch) -> bool {
    let (batch, hidden) = (call.batch, dims.hidden_size);
    let small = batch <= OURS_LEAD_SMALL_IN_CHUNKS_MAX_BATCH
        && hidden <= OURS_LEAD_SMALL_IN_CHUNKS_MAX_HIDDEN;
    let up_to_64 = batch <= OURS_LEAD_TRAINING_IN_CHUNKS_MAX_BATCH;
    dims.num_layers == 1
        && match (train, launch) {
            (true, Launch::Graphed) => up_to_64,
            (false, Launch::Graphed) => {
                (up_to_64 && hidden <= OURS_LEAD_IN_CHUNKS_MAX_HIDDEN) || small
            }
            (_, Launch::Eager) => {
                (train && up_to_64)
                    || (batch <= OURS_LEAD_IN_CHUNKS_MAX_BATCH
                        && hidden <= OURS_LEAD_EAGER_IN_CHUNKS_MAX_HIDDEN)
            }
        }
}

/// See [`ours_lead_in_chunks`]: the largest hidden size measured eagerly past batch 64.
const OURS_LEAD_EAGER_IN_CHUNKS_MAX_HIDDEN: usize = 1024;

/// Where a batch past [`CHUNK_SAMPLES`] runs on ours in batch groups (`persistent::batch_groups`:
/// the batch split into independent recurrences on blocks of their own; a stack then runs layer
/// by layer), ours lead its training, graphed and eager, at every batch they take, and its
/// inference up to [`OURS_LEAD_GROUPED_INFERENCE_MAX_BATCH`]; stacks up to
/// [`OURS_LEAD_GROUPED_STACK_MAX_BATCH`] (those deeper than two layers take groups by the
/// hidden size and the batch, `persistent::rules`'s `shape_groups`). Graphed on an H100, bf16,
/// µs an example against cuDNN's `Standard` (`results/2026-11-27-h100-batch-groups/`): training
/// [30, 64, 512] 3.8-4.2 against 6.7-7.2, [30, 128, 512] 2.5-2.7 against 4.0-4.1, [30, 128, 128]
/// 1.3 against 2.6, [30, 256, 512] 2.0-2.6 against 2.6-2.8, [30, 256, 128] 0.73-0.77 against
/// 1.46-1.56; forwards at batch 128 0.50-0.77x `Standard`'s, at 256 0.53-0.54x at hidden 128
/// but 0.95-1.08x at 512. Stacks
/// (`results/2026-11-27-h100-groups-sanitize/`): training [30, 128, 3 x 512] 7.3-8.1 against
/// 8.1-8.7, [200, 128, 3 x 512] 0.88-0.91x, [30, 128, 3 x 128] 0.76-0.80x, [35, 64, 2 x 650]
/// 0.41-0.53x; forwards of two layers 0.45-0.91x; at [30, 64, 1024] 7.5 against 10.6. Forwards
/// of three layers in 8 groups (`results/2026-11-27-h100-deep-stacks/`): [30, 128, 3 x 512]
/// 2.6-3.1 against 3.2-3.4, [200, 128, 3 x 512] 16.5-18.8 against 18.9-20.1, [30, 128, 3 x 256]
/// 1.9 against 2.3-2.5, [30, 96, 3 x 512] 3.7 against 4.6. Past batch
/// [`OURS_LEAD_GROUPED_INFERENCE_MAX_BATCH`], one layer's inference up to hidden
/// [`OURS_LEAD_WIDE_BATCH_INFERENCE_MAX_HIDDEN`] graphed, [`OURS_LEAD_IN_CHUNKS_MAX_HIDDEN`]
/// eagerly: graphed bf16 forwards at batches 200-256 took 0.27-0.69x of `Standard`'s time at
/// hidden 64-256 (LSTM [30, 256, 128] 0.29 against 0.60 µs an example, [200, 256, 128] 1.82
/// against 4.52), but LSTM [30, 256, 512] 1.09x (GRU 0.88x) and [30, 256, 3 x 128] 1.07-1.12x;
/// eager ones 0.22-0.37x at hidden 128-256 and 0.57-0.78x at [30, 256, 512] (H200,
/// `results/2026-11-29-h200-refill-batch256/`). A GRU's graphed forward leads up to hidden
/// [`OURS_LEAD_WIDE_BATCH_GRU_INFERENCE_MAX_HIDDEN`]: f16 [30, 160-256, 512] 0.69-0.79 against
/// `Standard`'s 0.82-1.21, [200, 256, 512] 4.83 against 5.86; LSTMs there 1.06-1.35x
/// (`results/2026-12-01-h200-half-rule-sweep/`).
fn ours_lead_in_groups(
    call: &Call,
    dims: &RnnDims,
    (dtype, train): (DType, bool),
    launch: Launch,
) -> bool {
    let shape = (dims.num_layers, dims.hidden_size, call.batch);
    let grouped = call.batch > CHUNK_SAMPLES && batch_groups(shape, (dtype, train)) > 1;
    let one_layer = dims.num_layers == 1;
    let stack_batch = one_layer || call.batch <= OURS_LEAD_GROUPED_STACK_MAX_BATCH;
    let wide_batch_max_hidden = match (launch, dims.mode) {
        (Launch::Graphed, RnnMode::Gru) => OURS_LEAD_WIDE_BATCH_GRU_INFERENCE_MAX_HIDDEN,
        (Launch::Graphed, _) => OURS_LEAD_WIDE_BATCH_INFERENCE_MAX_HIDDEN,
        (Launch::Eager, _) => OURS_LEAD_IN_CHUNKS_MAX_HIDDEN,
    };
    let inference = call.batch <= OURS_LEAD_GROUPED_INFERENCE_MAX_BATCH
        || (one_layer && dims.hidden_size <= wide_batch_max_hidden);
    grouped && stack_batch && (train || inference)
}

/// See [`ours_lead_in_groups`]: the largest batch of a stack measured there (past it,
/// [`ours_lead_wide_batch_stack`]).
const OURS_LEAD_GROUPED_STACK_MAX_BATCH: usize = 128;

/// Stacks past batch [`OURS_LEAD_GROUPED_STACK_MAX_BATCH`] (up to the kernels' largest,
/// [`MAX_KERNEL_BATCH`]): graphed, ours lead training up to hidden
/// [`OURS_LEAD_WIDE_BATCH_STACK_GRAPHED_MAX_HIDDEN`]; eagerly, where cuDNN's `Standard` waits on
/// the host's launches, training and inference up to
/// [`OURS_LEAD_WIDE_BATCH_STACK_EAGER_MAX_HIDDEN`]. µs an example, bf16, ours against
/// `Standard` at batch 256 (H200, `results/2026-11-29-h200-wgmma-eager1024/` §3): graphed
/// training [30, 256, 2 x 128] 1.37-1.47 against 2.33-2.43, [200, 256, 3 x 128] 12.8-13.7
/// against 19.5-20.2, [30, 256, 3 x 256] 2.8-3.0 against 4.2, [30, 256, 4 x 256] 3.7-4.0
/// against 5.3; but at hidden 512 LSTMs 1.05-1.09x (GRUs 0.86-0.94x). Graphed forwards took
/// 0.64-0.65x at 2 x 128 and 0.90-0.93x at 3-4 x 256, but 1.07-1.14x at [30, 256, 3 x 128],
/// 1.11x for GRU [200, 256, 3 x 128] and 1.04-1.27x at hidden 512: `Standard` keeps them (too
/// few measurements for a rule by shape). Eagerly ours took 0.19-0.61x of `Standard`'s time in
/// training and 0.17-0.63x in the forward on all of those and [30, 256, 3 x 512].
///
/// In f16 at batches 192-256 (graphed, against the f16 `Standard`, H200,
/// `results/2026-12-01-h200-half-rule-sweep/`): GRU stacks train on ours up to hidden
/// [`OURS_LEAD_WIDE_BATCH_GRU_STACK_GRAPHED_MAX_HIDDEN`] ([30, 192-256, 2 x 512] 3.45-3.53
/// against 4.08-4.85 µs an example, [30, 192-256, 3 x 512] 0.78-0.93x, [200, 256, 3 x 512] 31.6
/// against 35.5; LSTMs there 1.05-1.12x); forwards of stacks past hidden 128 up to
/// [`OURS_LEAD_WIDE_BATCH_STACK_GRAPHED_MAX_HIDDEN`] lead too ([30, 192-256, 2 x 256] 0.71-0.81x,
/// [30, 192-256, 3 x 256] 0.83-0.91x), where at hidden 128 f16 `PersistStaticSmallH` leads and
/// bf16 `Standard` led three layers (above). GRU stacks' forwards lead at hidden 512 too, up to
/// batch [`OURS_LEAD_WIDE_BATCH_GRU_STACK_INFERENCE_MAX_BATCH`]: f16 [30, 160, 2 x 512] 1.60
/// against 2.00 µs an example, [30, 160, 3 x 512] 2.39 against 2.65, [200, 192, 3 x 512] 13.6
/// against 14.8; at batch 224 `Standard` tied or led (1.56 against 1.59, 2.09 against 2.36;
/// `results/2026-12-01-h200-plain-api-grid/` `half-left`).
fn ours_lead_wide_batch_stack(call: &Call, dims: &RnnDims, train: bool, launch: Launch) -> bool {
    let hidden = dims.hidden_size;
    let fits = match (launch, train) {
        (Launch::Graphed, true) => match dims.mode {
            RnnMode::Gru => hidden <= OURS_LEAD_WIDE_BATCH_GRU_STACK_GRAPHED_MAX_HIDDEN,
            _ => hidden <= OURS_LEAD_WIDE_BATCH_STACK_GRAPHED_MAX_HIDDEN,
        },
        (Launch::Graphed, false) => {
            let gru_fits = dims.mode == RnnMode::Gru
                && hidden <= OURS_LEAD_WIDE_BATCH_GRU_STACK_GRAPHED_MAX_HIDDEN
                && call.batch <= OURS_LEAD_WIDE_BATCH_GRU_STACK_INFERENCE_MAX_BATCH;
            hidden > SMALL_H_MAX_HIDDEN
                && (hidden <= OURS_LEAD_WIDE_BATCH_STACK_GRAPHED_MAX_HIDDEN || gru_fits)
        }
        (Launch::Eager, _) => hidden <= OURS_LEAD_WIDE_BATCH_STACK_EAGER_MAX_HIDDEN,
    };
    dims.num_layers > 1
        && call.batch > OURS_LEAD_GROUPED_STACK_MAX_BATCH
        && call.batch <= MAX_KERNEL_BATCH
        && fits
}

/// See [`ours_lead_wide_batch_stack`].
const OURS_LEAD_WIDE_BATCH_STACK_GRAPHED_MAX_HIDDEN: usize = 256;

/// See [`ours_lead_wide_batch_stack`]: the largest hidden size measured ahead.
const OURS_LEAD_WIDE_BATCH_GRU_STACK_GRAPHED_MAX_HIDDEN: usize = 512;

/// See [`ours_lead_wide_batch_stack`]: the largest hidden size measured.
const OURS_LEAD_WIDE_BATCH_STACK_EAGER_MAX_HIDDEN: usize = 512;

/// See [`ours_lead_wide_batch_stack`]: the largest batch of a GRU stack's forward measured ahead
/// at hidden [`OURS_LEAD_WIDE_BATCH_GRU_STACK_GRAPHED_MAX_HIDDEN`].
const OURS_LEAD_WIDE_BATCH_GRU_STACK_INFERENCE_MAX_BATCH: usize = 192;

/// See [`ours_lead_in_groups`].
const OURS_LEAD_GROUPED_INFERENCE_MAX_BATCH: usize = 128;

/// See [`ours_lead_in_groups`].
const OURS_LEAD_WIDE_BATCH_INFERENCE_MAX_HIDDEN: usize = 256;

/// See [`ours_lead_in_groups`]: [`OURS_LEAD_WIDE_BATCH_INFERENCE_MAX_HIDDEN`] for a GRU.
const OURS_LEAD_WIDE_BATCH_GRU_INFERENCE_MAX_HIDDEN: usize = 512;

/// See [`ours_lead_in_chunks`]: past batch 64, ours lead one layer up to this hidden size in
/// graphed inference and eager training, up to batch [`OURS_LEAD_SMALL_IN_CHUNKS_MAX_BATCH`].
const OURS_LEAD_SMALL_IN_CHUNKS_MAX_HIDDEN: usize = 256;

/// See [`OURS_LEAD_SMALL_IN_CHUNKS_MAX_HIDDEN`]: the largest batch measured.
const OURS_LEAD_SMALL_IN_CHUNKS_MAX_BATCH: usize = 128;

/// See [`ours_lead_in_chunks`].
const OURS_LEAD_IN_CHUNKS_MAX_HIDDEN: usize = 512;

/// See [`ours_lead_in_chunks`]: the largest batch measured faster in training.
const OURS_LEAD_TRAINING_IN_CHUNKS_MAX_BATCH: usize = 64;

/// Past batch 32 ours also lead a stack whose slower pass they run in one launch (each step of
/// the wavefront taking the batch in chunks): in training the backward, in inference the
/// forward; at batches up to [`OURS_LEAD_STACK_IN_CHUNKS_MAX_BATCH`] and stacks of up to
/// [`OURS_LEAD_STACK_IN_CHUNKS_MAX_UNITS`] units (layers x hidden). Graphed training at batch
/// 48-64 took 0.48-0.79x of cuDNN's fastest, forwards 0.66-0.86x, eager far less (LSTM and GRU
/// [35, 64, 2 x 200], [35, 64, 2 x 650], [35, 48, 2 x 650], [30, 64, 2 x 512], [30, 64, 3 x 256],
/// H200, `results/2026-11-26-h200-batch64/`); [30, 64, 3 x 512] took 1.04-1.08x and batch 128
/// 1.6-1.9x (`results/2026-11-26-h200-wave-chunks/`). The 2 x 650 stacks among those run only
/// their backward in one launch (the forward's two-stage tile does not fit, so it runs layer by
/// layer): they trained in 0.48-0.74x of cuDNN's time (graphed; their forwards 0.67-0.95x,
/// `results/2026-11-26-h200-batch64/`), which is why training asks only the backward; their
/// inference stays on cuDNN (its forward unmeasured eagerly). A forward in one launch also led
/// up to batch [`OURS_LEAD_STACK_IN_CHUNKS_INFERENCE_MAX_BATCH`]: graphed, µs an example against
/// `Standard`'s, [30, 128, 3 x 128] 1.31-1.36 against 1.91-2.02 and [30, 128, 4 x 256] 2.44
/// against 3.28 (bf16, H100, `results/2026-11-27-h100-deep-stacks/`).
fn ours_lead_stack_in_chunks(
    call: &Call,
    dims: &RnnDims,
    (one_launch, train): (OneLaunch, bool),
) -> bool {
    let slower_pass = match train {
        true => one_launch.backward,
        false => one_launch.forward,
    };
    let max_batch = match train {
        true => OURS_LEAD_STACK_IN_CHUNKS_MAX_BATCH,
        false => OURS_LEAD_STACK_IN_CHUNKS_INFERENCE_MAX_BATCH,
    };
    slower_pass
        && call.batch <= max_batch
        && dims.num_layers * dims.hidden_size <= OURS_LEAD_STACK_IN_CHUNKS_MAX_UNITS
}

/// See [`ours_lead_stack_in_chunks`]: the largest batch measured ahead of cuDNN.
const OURS_LEAD_STACK_IN_CHUNKS_MAX_BATCH: usize = 64;

/// See [`ours_lead_stack_in_chunks`]: the largest batch of a forward measured ahead of cuDNN.
const OURS_LEAD_STACK_IN_CHUNKS_INFERENCE_MAX_BATCH: usize = 128;

/// Eagerly, past batch 32, ours also lead stacks of up to [`OURS_LEAD_EAGER_STACK_MAX_UNITS`]
/// units at batches up to [`OURS_LEAD_EAGER_STACK_MAX_BATCH`] (in training where the backward
/// runs in one launch; the forward may run layer by layer): cuDNN's `Standard` waits on the
/// host's launches there ([`Launch`]). Ours against bf16 `Standard`, µs an example, eager
/// training | forward (H100, `results/2026-11-26-h100-eager-graphed/`): LSTM
/// [30, 128, 3 x 512] 16.9 | 7.1 against 22.7-27.2 | 10.8, GRU 16.3 | 7.0 against 22.8 |
/// 9.9-13.1; [200, 128, 3 x 512] 96-98 | 43-47 against 129-133 | 61-84; [30, 64, 3 x 512] 17.0
/// | 8.6-9.3 against 40-57 | 17-23. Graphed, `Standard` led all of these (15.9 against 9.2 at
/// [30, 128, 3 x 512]).
///
/// Training also leads in stacks of up to [`OURS_LEAD_EAGER_STACK_TRAINING_MAX_UNITS`] units
/// whatever runs in one launch (layer by layer at hidden 1024; on an H100 before the forward's
/// multicast [30, 128, 3 x 1024] took 30.3 against 26.1). Eager training, µs an example, ours
/// (bf16 and f16) against bf16 `Standard` (H200, `results/2026-11-29-h200-wgmma-eager1024/`
/// §2-3): [30, 128, 3 x 1024] 22.6-24.9 against 27.8-28.5, [30, 128, 2 x 1024] 15.2-17.0
/// against 18.5-25.0, [200, 128, 3 x 1024] 142-154 against 151-153 (graphed `Standard` leads:
/// 0.61-0.76x of ours' time). Their forwards stay on cuDNN: ours took 0.95-1.07x of its time at
/// 3 x 1024 (0.75-0.99x at [30, 128, 2 x 1024]). Their training now runs on both wgmma kernels
/// at batch 128 (`persistent::rules`'s `shape_wgmma_training`), in 0.69-0.72x of the
/// layer-by-layer kernels' time eagerly (LSTM [30, 128, 3 x 1024] 17.35 against 24.18,
/// [200, 128, 3 x 1024] 106.9 against 153.2; `results/2026-12-01-h200-stack-1024-profile/`).
fn ours_lead_stack_eagerly(
    call: &Call,
    dims: &RnnDims,
    (one_launch, train): (OneLaunch, bool),
) -> bool {
    let units = dims.num_layers * dims.hidden_size;
    let one_launch_where_slower =
        units <= OURS_LEAD_EAGER_STACK_MAX_UNITS && (one_launch.backward || !train);
    let training = train && units <= OURS_LEAD_EAGER_STACK_TRAINING_MAX_UNITS;
    dims.num_layers > 1
        && call.batch > CHUNK_SAMPLES
        && call.batch <= OURS_LEAD_EAGER_STACK_MAX_BATCH
        && (one_launch_where_slower || training)
}

/// See [`ours_lead_stack_eagerly`]: 3 x 512 led.
const OURS_LEAD_EAGER_STACK_MAX_UNITS: usize = 1536;

/// See [`ours_lead_stack_eagerly`]: 3 x 1024 led in training.
const OURS_LEAD_EAGER_STACK_TRAINING_MAX_UNITS: usize = 3072;

/// See [`ours_lead_stack_eagerly`]: the largest batch measured.
const OURS_LEAD_EAGER_STACK_MAX_BATCH: usize = 128;

/// See [`ours_lead_stack_in_chunks`]: 2 x 650 led, 3 x 512 did not.
const OURS_LEAD_STACK_IN_CHUNKS_MAX_UNITS: usize = 1300;

/// See [`ours_lead_in_chunks`]: the largest batch measured (ours take up to
/// [`MAX_KERNEL_BATCH`] when asked for).
const OURS_LEAD_IN_CHUNKS_MAX_BATCH: usize = 128;

/// The cells whose calls on ours were measured against cuDNN. GRU training calls, graphed, bf16
/// and f16, on the grid's shapes ours take (`results/2026-11-25-h100-gru-train/`): ours 0.43-0.78x
/// of cuDNN's `Standard` in the same dtype (7.2 against 9.2 µs an example at [30, 32, 128] bf16,
/// 65 against 147-152 at [35, 20, 2 x 1500]), slower only than f16 `PersistStaticSmallH` at
/// hidden 128 (7.1 against 4.3), which [`small_h_leads`] gives it.
const OURS_MEASURED_CELLS: &[RnnMode] = &[RnnMode::Lstm, RnnMode::Gru];

/// The deepest stack ours lead in layer by layer: a 3-layer LSTM [30, 32, 3 x 512] ran 1.07x
/// `Standard`'s time in bf16, where one and two layers ran 0.27-0.91x. On an H200, 3-layer
/// stacks layer by layer ran 0.90-1.24x cuDNN's fastest (graphed training, bf16 and f16: LSTM
/// and GRU [30, 32, 3 x 512], [30, 32, 3 x 1024], [200, 32, 3 x 512],
/// `results/2026-11-26-h200-deep-stacks/`; of those only 3 x 1024 still runs layer by layer,
/// the others now as wavefronts in two rounds, `results/2026-11-26-h200-wave-rounds/`).
const OURS_LEAD_MAX_LAYERS: usize = 2;

/// The stacks ours lead: up to [`OURS_LEAD_MAX_LAYERS`] layers, and deeper ones (up to the
/// wavefront's 4) where every pass of the call runs `in_one_launch`, as one wavefront: graphed
/// training there took 0.35-0.52x of cuDNN's fastest kernel (f16 `PersistStatic` included) and
/// 0.36-0.51x of PyTorch's fp16 module, bf16 and f16 alike (LSTM and GRU [30, 32, 3 x 256],
/// [30, 32, 4 x 256], [35, 20, 3 x 200], [35, 20, 4 x 200], [30, 8, 3 x 512]; H200,
/// `results/2026-11-26-h200-deep-stacks/`), and in two rounds 0.48-0.56x of PyTorch's
/// ([30, 32, 3 x 512], [200, 32, 3 x 512], [30, 32, 4 x 512], `results/2026-11-26-h200-wave-rounds/`).
fn ours_lead_stack(dims: &RnnDims, in_one_launch: bool) -> bool {
    dims.num_layers <= OURS_LEAD_MAX_LAYERS || in_one_launch
}

/// Where ours lead cuDNN's f16 `PersistStatic` where both serve (an f16 LSTM whose sizes are
/// multiples of 128): up to hidden [`OURS_LEAD_PERSIST_STATIC_MAX_HIDDEN`]; in stacks up to
/// [`OURS_LEAD_PERSIST_STATIC_STACKED_MAX_HIDDEN`]; one layer's training at every hidden size and
/// batch, and its inference from batch [`OURS_LEAD_PERSIST_STATIC_INFERENCE_MIN_BATCH`].
/// Graphed, µs an example, ours against `PersistStatic` (H200,
/// `results/2026-11-29-h200-prologue/` section 4):
/// forwards [30, 32, 256] 1.67 against 2.73, [30, 32, 384] 2.28 against 2.55, [30, 32, 512] 2.33
/// against 2.73, [30, 32, 1024] 3.84-3.87 against 3.97-3.99, [200, 32, 512] 15.1 against 18.6;
/// training [30, 8, 512] 19.2 against 22.5, [30, 16, 512] 10.4 against 11.6, [30, 32, 1024] 9.3
/// against 10.1. `PersistStatic` leads one layer's forward at [30, 8-16, 512] (7.1 against 8.3,
/// 3.3 against 4.6). Past batch 32 ours lead it further: graphed forwards at [30, 48-96, 256]
/// took 0.79-1.00 against 2.50-2.61, [30, 48, 512] 1.44 against 2.60, [200, 64, 256] 6.4 against
/// 18.2; eagerly 0.37-0.62x of its time (H200, `results/2026-12-01-h200-half-rule-sweep/`).
/// Stacks (H100, `results/2026-11-26-h100-h200-f16-persist-static/`, through
/// `loss.backward()`, before the pushed and multicast forwards): [30, 32, 2 x 256] 7.5 | 3.0
/// against 14.4 | 5.2 in training | inference, [30, 8-32, 2 x 512] 0.63-0.72x in training and
/// 0.81-1.0x forward; `PersistStatic` led [30, 32, 2 x 1024] (26.1 against 26.9).
fn ours_lead_persist_static(dims: &RnnDims, call: &Call, train: bool) -> bool {
    let hidden = dims.hidden_size;
    let stacked = dims.num_layers > 1;
    hidden <= OURS_LEAD_PERSIST_STATIC_MAX_HIDDEN
        || (stacked && hidden <= OURS_LEAD_PERSIST_STATIC_STACKED_MAX_HIDDEN)
        || (!stacked && (train || call.batch >= OURS_LEAD_PERSIST_STATIC_INFERENCE_MIN_BATCH))
}

/// See [`ours_lead_persist_static`]: ours lead every call up to this hidden size (LSTM
/// [30, 32, 128]: 6.1 against 6.9 µs an example, though `PersistStaticSmallH` leads both there).
const OURS_LEAD_PERSIST_STATIC_MAX_HIDDEN: usize = 128;

/// See [`ours_lead_persist_static`]: ours lead stacks up to this hidden size.
const OURS_LEAD_PERSIST_STATIC_STACKED_MAX_HIDDEN: usize = 512;

/// See [`ours_lead_persist_static`]: the smallest batch at which ours lead one layer's
/// inference (8 and 16 measured behind).
const OURS_LEAD_PERSIST_STATIC_INFERENCE_MIN_BATCH: usize = 32;

/// Where cuDNN's `PersistStatic` leads `Standard` in f16: an LSTM of one direction without
/// per-sample lengths or a projection, input and hidden sizes multiples of 128 (at 200, 650 or
/// 1500 it ran 3-13x slower than `Standard`), hidden up to 1024, batches up to 32 (at 128 only
/// for hidden 128, and in inference up to [`PERSIST_STATIC_INFERENCE_MAX_HIDDEN`], graphed
/// [`PERSIST_STATIC_GRAPHED_INFERENCE_MAX_HIDDEN`]) that [`cudnn_persistent_batch_fits`], and
/// in training batches from [`HALF_TRAINING_PERSIST_MIN_BATCH`].
fn persist_static_leads(
    dims: &RnnDims,
    call: &Call,
    (dtype, train): (DType, bool),
    launch: Launch,
) -> bool {
    let max_inference_hidden = match launch {
        Launch::Graphed if call.batch > PERSIST_STATIC_GRAPHED_FROM_BATCH => {
            PERSIST_STATIC_GRAPHED_INFERENCE_MAX_HIDDEN
        }
        _ => PERSIST_STATIC_INFERENCE_MAX_HIDDEN,
    };
    let inference_at_batch_128 = !train
        && call.batch <= PERSIST_STATIC_INFERENCE_MAX_BATCH
        && dims.hidden_size <= max_inference_hidden;
    let sizes = dims.input_size % 128 == 0
        && dims.hidden_size % 128 == 0
        && dims.hidden_size <= 1024
        && (call.batch <= 32 || dims.hidden_size <= 128 || inference_at_batch_128)
        && cudnn_persistent_batch_fits(call.batch);
    dtype == DType::F16
        && dims.mode == RnnMode::Lstm
        && cudnn_persistent_may_serve(dims, call, (dtype, train))
        && sizes
}

/// Batches at which cuDNN's f16 persistent kernels run at their speed: up to
/// [`CUDNN_PERSISTENT_BATCH_STEP`] and its multiples. At batches 9, 12, 20 and 28,
/// `PersistStatic` took 3.5-12x ours' time and 1.8-4.7x `Standard`'s (f16 LSTM [30, 20, 512]
/// training 77.3 µs an example against 10.9 on ours and 21.4 on `Standard`; [30, 20, 1024] 235
/// against 19.6), where at batches 1-8, 16, 24 and 32 it ran beside ours;
/// `PersistStaticSmallH`'s LSTM at batches 12 and 20 took 1.2-1.4x ours' time, where at 24 and
/// 32 it leads ([`small_h_leads_ours`]). H100, `results/2026-11-26-h100-h200-f16-persist-static/`.
fn cudnn_persistent_batch_fits(batch: usize) -> bool {
    batch <= CUDNN_PERSISTENT_BATCH_STEP || batch % CUDNN_PERSISTENT_BATCH_STEP == 0
}

/// See [`cudnn_persistent_batch_fits`].
const CUDNN_PERSISTENT_BATCH_STEP: usize = 8;

/// Where cuDNN's `PersistStaticSmallH`, where it leads `Standard` ([`small_h_leads`]), also
/// leads ours. One layer, whose batch groups each run in one cluster: only a GRU's training at
/// batches that [`cudnn_persistent_batch_fits`] does not take (f16 [200, 20, 128] 18.8 against
/// ours' 25.1 µs an example in 5 groups, [30, 20, 128] 5.1 against 4.8); ours trained LSTMs and
/// GRUs at batches 8-128 in 0.68-0.88x of its time, and inferred at batch 20 in 0.62-0.98x
/// (H100, `results/2026-11-27-h100-small-h-default/`). A stack keeps the rule that one layer
/// measured before the clusters: a GRU at any batch (f16 [30, 20, 128] 5.4 against 7.4), an
/// LSTM at batches that [`cudnn_persistent_batch_fits`] (f16 [30, 20, 128] 9.5 against ours'
/// 7.7, [35, 20, 128] 10.5 against 8.6). Past batch [`OURS_LEAD_GROUPED_INFERENCE_MAX_BATCH`]
/// it leads one layer's inference too, graphed and eager: LSTM [30, 256, 128] 0.24 against
/// ours' 0.28-0.29 µs an example graphed, GRU 0.24 against 0.25, [200, 200, 128] 1.72-1.73
/// against 2.22-2.44; eagerly 0.36-0.38 against 0.39-0.42 and 1.95-2.09 against 2.32-2.70
/// (H200, `results/2026-11-29-h200-wgmma-eager1024/` §4; ours lead its training there, 0.57-0.62
/// against 0.71-0.89 graphed). There GRU stacks train faster on ours (graphed [30, 256, 2 x 128]
/// 1.37 against 1.50, [200, 256, 3 x 128] 12.8 against 14.8; eagerly 1.56-1.69 against 1.73 and
/// 13.1 against 15.1), LSTM stacks not throughout ([30, 256, 2 x 128] 1.47 against 1.28 graphed,
/// §3).
///
/// Stacks now lead it up to batch [`OURS_LEAD_SMALL_H_STACK_MAX_BATCH`] (as wavefronts and in
/// batch groups), and train faster up to [`OURS_LEAD_GROUPED_INFERENCE_MAX_BATCH`]. Graphed f16,
/// training | forward, µs an example, ours against `PersistStaticSmallH` (H200,
/// `results/2026-12-01-h200-half-rules/` `small` and `neighbors`, and
/// `results/2026-12-01-h200-half-rule-sweep/`): [30, 8, 3 x 128] 17.7 | 7.9 against
/// 48.7 | 20.7, [30, 16-32, 2-3 x 128] 0.42-0.64x | 0.42-0.69x, GRU [35, 24, 2 x 128] 7.2 | 3.3
/// against 12.0 | 5.2, [30, 48-96, 2-3 x 128] 0.62-0.89x | 0.55-0.99x; at batch 128 training
/// 0.80-0.95x ([200, 128, 2 x 128] 13.2 against 16.6), but the forward 0.97-1.13x ([30, 128,
/// 2 x 128] 1.02 against 0.90); at batch 192-256 it kept the forward (0.92 against 1.20 at
/// [30, 192, 3 x 128]) and led or tied LSTMs' training ([30, 256, 2 x 128] 1.28 against 1.43).
fn small_h_leads_ours(dims: &RnnDims, call: &Call, train: bool) -> bool {
    let batch_fits = cudnn_persistent_batch_fits(call.batch);
    let wide = call.batch > OURS_LEAD_GROUPED_INFERENCE_MAX_BATCH;
    let gru = dims.mode == RnnMode::Gru;
    match (dims.num_layers, call.batch) {
        (1, _) => (train && gru && !batch_fits) || (!train && wide),
        (_, b) if b <= OURS_LEAD_SMALL_H_STACK_MAX_BATCH => false,
        (_, _) if !wide => !train,
        (_, _) => !(train && gru) && (gru || batch_fits),
    }
}

/// See [`small_h_leads_ours`]: the largest batch at which ours were measured ahead of
/// `PersistStaticSmallH` in a stack's forward.
const OURS_LEAD_SMALL_H_STACK_MAX_BATCH: usize = 96;

/// Up to this hidden size cuDNN's f16 `PersistStatic` leads inference past batch 32 too: eager
/// forwards at batch 128 took 0.83x of ours in chunks at [30, 128, 512] (2.16 against 2.60 µs
/// an example), 0.63x of `Standard` at [30, 128, 3 x 512], 0.84x of ours at [30, 64, 512]; at
/// hidden 1024 1.28x `Standard`'s time (H200, `results/2026-11-26-h200-inference-forward/`).
/// Graphed (the device's time) it took 0.81x of ours at [30, 128, 512] but 1.29x of bf16
/// `Standard`'s (`results/2026-11-26-h200-forward-graphed/`).
const PERSIST_STATIC_INFERENCE_MAX_HIDDEN: usize = 512;

/// See [`PERSIST_STATIC_INFERENCE_MAX_HIDDEN`]: the largest batch measured.
const PERSIST_STATIC_INFERENCE_MAX_BATCH: usize = 128;

/// [`PERSIST_STATIC_INFERENCE_MAX_HIDDEN`] for graphed calls ([`Launch`]) past batch
/// [`PERSIST_STATIC_GRAPHED_FROM_BATCH`]: at batch 128,
/// graphed forwards on `PersistStatic` took 0.67x of bf16 `Standard`'s time at [30, 128, 256]
/// (0.86 against 1.29 µs an example), 1.39x at [30, 128, 512] (2.18 against 1.57), 1.83x at
/// [30, 128, 3 x 512] and 2.05x at [200, 128, 3 x 512] (H100,
/// `results/2026-11-26-h100-eager-graphed/`).
const PERSIST_STATIC_GRAPHED_INFERENCE_MAX_HIDDEN: usize = 256;

/// See [`PERSIST_STATIC_GRAPHED_INFERENCE_MAX_HIDDEN`]: measured at batches 96 and 128 (at 96,
/// [30, 96, 512] 2.52 against 2.04); at 64 and below the eager rule holds (not measured
/// graphed).
const PERSIST_STATIC_GRAPHED_FROM_BATCH: usize = 64;

/// Where cuDNN's `PersistStaticSmallH` leads `Standard` in f32 (fp32 and TF32 math) and f16
/// (not bf16, which cuDNN runs at one speed whatever the algorithm): hidden sizes up to
/// [`SMALL_H_MAX_HIDDEN`], one direction, no per-sample lengths or projection; in f16 training
/// batches from [`HALF_TRAINING_PERSIST_MIN_BATCH`], as for its other persistent algorithms.
fn small_h_leads(dims: &RnnDims, call: &Call, (dtype, train): (DType, bool)) -> bool {
    matches!(dtype, DType::F32 | DType::F16)
        && dims.hidden_size <= SMALL_H_MAX_HIDDEN
        && cudnn_persistent_may_serve(dims, call, (dtype, train))
}

/// The largest hidden size of cuDNN's `PersistStaticSmallH` (it refuses 200 and up in bf16,
/// 512 in f32; measured at 128: LSTM and GRU 0.35-0.53x of `Standard`'s time in f32 and f16,
/// `RnnAlgo::Auto`'s picks in `final.sh`).
const SMALL_H_MAX_HIDDEN: usize = 128;

/// Calls cuDNN's persistent algorithms may take and were measured on: LSTM and GRU cells of
/// one direction (the grid's), no per-sample lengths or projection ([`cudnn_takes`]), and not
/// half-precision training below [`HALF_TRAINING_PERSIST_MIN_BATCH`] ([`cudnn_candidates`]).
fn cudnn_persistent_may_serve(dims: &RnnDims, call: &Call, (dtype, train): (DType, bool)) -> bool {
    matches!(dims.mode, RnnMode::Lstm | RnnMode::Gru)
        && dims.num_directions == 1
        && call.lengths.is_none()
        && dims.proj_size == 0
        && cudnn_candidates(dtype, call.batch, train).len() > 1
}

/// cuDNN's algorithm for a call by rule: [`small_h_leads`], [`persist_static_leads`],
/// `Standard` elsewhere (where it is fastest or no faster one was measured).
fn cudnn_by_rule(
    dims: &RnnDims,
    call: &Call,
    (dtype, train): (DType, bool),
    launch: Launch,
) -> RnnAlgo {
    if small_h_leads(dims, call, (dtype, train)) {
        RnnAlgo::PersistStaticSmallH
    } else if persist_static_leads(dims, call, (dtype, train), launch) {
        RnnAlgo::PersistStatic
    } else {
        RnnAlgo::Standard
    }
}

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

/// Timed runs of each candidate of `Auto` (after an untimed one): enough for a median and
/// quartiles that two runs of a program reproduce.
const TRIAL_REPS: usize = 9;

/// How much faster a candidate's median must be than the kernel it would replace.
const AUTO_MARGIN: f64 = 0.03;

/// The median and quartiles of a candidate's timed runs, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Timing {
    q1: f64,
    median: f64,
    q3: f64,
}

impl Timing {
    fn of(mut times: Vec<f64>) -> Self {
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times.get(((times.len() - 1) as f64 * q).round() as usize);
        let v = |q| at(q).copied().unwrap_or(f64::INFINITY);
        Self {
            q1: v(0.25),
            median: v(0.5),
            q3: v(0.75),
        }
    }
}

/// Whether `a` is faster than `b` beyond noise: its median by [`AUTO_MARGIN`], and its upper
/// quartile below `b`'s lower one.
fn clearly_faster(a: Timing, b: Timing) -> bool {
    a.median < b.median * (1.0 - AUTO_MARGIN) && a.q3 < b.q1
}

/// `Auto`'s pick among cuDNN's trials, stable from run to run: the first trial (`Standard`'s)
/// is the reference that a later one's results must agree with (not a persistent kernel that
/// silently returns zeros for a shape it does not handle, say, or one that reads memory it did
/// not write). It starts from the heuristic's algorithm (`Standard` where that was not
/// measured or its median is slower than `Standard`'s) and moves only to the fastest of those
/// [`clearly_faster`] than it.
struct Stable {
    baseline: RnnAlgo,
    /// The reference's results, and whether its times were a graph's replays (a trial counts
    /// only when timed the same way).
    reference: Option<([Vec<f64>; 4], bool)>,
    /// The agreeing trials in order, the reference first.
    measured: Vec<(RnnAlgo, Timing)>,
}

impl Stable {
    fn new(baseline: RnnAlgo) -> Self {
        Self {
            baseline,
            reference: None,
            measured: Vec::new(),
        }
    }

    fn judge(&mut self, t: Trial) {
        match &self.reference {
            None => self.reference = Some((t.results, t.graphed)),
            Some((_, graphed)) if *graphed != t.graphed => return,
            Some((r, _)) if !t.results.iter().zip(r).all(|(a, b)| agrees(a, b)) => return,
            Some(_) => {}
        }
        self.measured.push((t.algo, Timing::of(t.times)));
    }

    fn pick(&self) -> RnnAlgo {
        let timing = |algo| self.measured.iter().find(|m| m.0 == algo).map(|m| m.1);
        let Some(standard) = timing(RnnAlgo::Standard) else {
            return RnnAlgo::Standard;
        };
        let start = match timing(self.baseline) {
            Some(t) if t.median <= standard.median => (self.baseline, t),
            _ => (RnnAlgo::Standard, standard),
        };
        self.measured
            .iter()
            .filter(|(_, t)| clearly_faster(*t, start.1))
            .min_by(|a, b| a.1.median.total_cmp(&b.1.median))
            .copied()
            .unwrap_or(start)
            .0
    }
}

/// Whether `Auto` keeps ours (`mine`) against cuDNN's pick (`theirs`), both timed in one
/// harness: where the heuristic puts ours (`ours_default`), unless cuDNN's median is lower;
/// elsewhere only when [`clearly_faster`].
fn ours_kept(mine: Timing, theirs: Timing, ours_default: bool) -> bool {
    match ours_default {
        true => mine.median <= theirs.median,
        false => clearly_faster(mine, theirs),
    }
}

/// A call's device, dtype, `seq`, `batch` and `train`: what `Auto` measures once.
type CallShape = (DeviceId, DType, usize, usize, bool);

/// The choice of kernel for a module's calls, and what `Auto` measured.
pub(crate) struct Chooser {
    algo: RnnAlgo,
    /// How the module's calls will be launched, which some of `Heuristic`'s rules read.
    launch: Launch,
    /// The module's f32 math: whether ours may multiply f32 calls in TF32.
    math: MathMode,
    dims: RnnDims,
    /// `Auto`'s cuDNN algorithm per call shape.
    cudnn_fastest: Mutex<HashMap<CallShape, RnnAlgo>>,
    /// `Auto`: whether ours beat that algorithm, per call shape ours take.
    ours_won: Mutex<HashMap<CallShape, bool>>,
    /// `Heuristic`: cuDNN's algorithms that cuDNN refused for a dtype and batch.
    refused: Mutex<HashSet<(DType, usize, RnnAlgo)>>,
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
    /// The chooser of a module of `dims` built for `algo` and calls launched as `launch`.
    pub fn new((algo, launch, math): (RnnAlgo, Launch, MathMode), dims: RnnDims) -> Self {
        Self {
            algo,
            launch,
            math,
            dims,
            cudnn_fastest: Mutex::new(HashMap::new()),
            ours_won: Mutex::new(HashMap::new()),
            refused: Mutex::new(HashSet::new()),
        }
    }

    /// Whether a call that cuDNN's `algo` failed may run on `Standard` instead: where a rule
    /// of `Heuristic`'s picked `algo`.
    pub fn may_fall_back(&self, algo: RnnAlgo) -> bool {
        self.algo == RnnAlgo::Heuristic && algo != RnnAlgo::Standard
    }

    /// Records that cuDNN refused `algo` for the call of `inputs`: `Heuristic` gives its
    /// dtype and batch `Standard` from now on.
    pub fn refused(&self, algo: RnnAlgo, inputs: ForwardInputs) -> Result<()> {
        let key = (operand_dtype(inputs.ops)?, inputs.call.batch, algo);
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key);
        Ok(())
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
            .filter(|_| ours_take_lengths(call) && ours_take_operands(call, ops))
            .filter(|_| ours_take_dtype(dtype, self.math) && ours_take_batch(call.batch))
            // `Heuristic` plans ours for an f32 call only where it may give it them (a plan
            // compiles kernels, to ask the driver whether its clusters fit).
            .filter(|ours| {
                self.algo != RnnAlgo::Heuristic
                    || dtype != DType::F32
                    || ours_lead_tf32(call, &self.dims, (train, ours.scales_tf32()), self.launch)
            })
            .and_then(|ours| {
                let plan = ours
                    .plan(ops[0].0.device(), call.batch, dtype, train)
                    .ok()?;
                Some((ours, plan))
            });
        // Heuristic's kernel, which Auto starts from too (not worked out for the other
        // algorithms), from ours' plan and which passes run the call's layers in one launch,
        // for the module's calls launched as `launch`.
        let dev = ops[0].0.device();
        let heuristic = |launch| {
            let ours = ours.map(|(backend, plan)| {
                let one = backend.in_one_launch(dev, &plan, train);
                (plan, one)
            });
            self.heuristic(ours, call, (dtype, train), launch)
        };
        let launch = self.launch;
        match self.algo {
            RnnAlgo::Persistent => Ok(match ours {
                Some((_, plan)) => Kernel::Persistent(plan),
                None => Kernel::Cudnn(PERSISTENT_FALLBACK),
            }),
            RnnAlgo::Heuristic => Ok(heuristic(launch)),
            RnnAlgo::Auto if !auto_measures(call, &self.dims) => Ok(heuristic(launch)),
            RnnAlgo::Auto => {
                let heuristic = heuristic(launch);
                let shape = (dev.id(), dtype, call.seq, call.batch, train);
                let baseline = match heuristic {
                    Kernel::Cudnn(algo) => algo,
                    Kernel::Persistent(_) => {
                        cudnn_by_rule(&self.dims, call, (dtype, train), launch)
                    }
                };
                let fastest = self.cudnn_fastest(&paths.cudnn, (shape, baseline), inputs)?;
                let Some((backend, plan)) = ours else {
                    return Ok(Kernel::Cudnn(fastest));
                };
                let sides = ((backend, plan), (&paths.cudnn, fastest));
                let ours_default = matches!(heuristic, Kernel::Persistent(_));
                Ok(
                    match self.ours_beat(sides, (shape, ours_default), inputs)? {
                        true => Kernel::Persistent(plan),
                        false => Kernel::Cudnn(fastest),
                    },
                )
            }
            algo => {
                cudnn_takes(algo, call, &self.dims)?;
                Ok(Kernel::Cudnn(algo))
            }
        }
    }

    /// `Heuristic`'s kernel for `call` in `dtype` launched as `launch`, given ours' plan where
    /// they take it (and which passes they run with every layer in one launch): ours where
    /// they [`ours_lead`], else cuDNN's [`cudnn_by_rule`].
    fn heuristic(
        &self,
        ours: Option<(Plan, OneLaunch)>,
        call: &Call,
        (dtype, train): (DType, bool),
        launch: Launch,
    ) -> Kernel {
        let dims = &self.dims;
        let lead = |plan: &Plan, one| match dims.num_directions {
            1 => {
                wgmma_leads(plan, dims, (train, launch))
                    || match dtype {
                        DType::F32 => ours_lead_tf32(call, dims, (train, plan.scaled), launch),
                        _ => ours_lead(call, dims, (dtype, train), (one, launch)),
                    }
            }
            _ => ours_lead_bidirectional(plan, dtype, (train, launch)),
        };
        match ours {
            Some((plan, one)) if lead(&plan, one) => Kernel::Persistent(plan),
            _ => {
                let algo = cudnn_by_rule(dims, call, (dtype, train), launch);
                let refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
                match refused.contains(&(dtype, call.batch, algo)) {
                    true => Kernel::Cudnn(RnnAlgo::Standard),
                    false => Kernel::Cudnn(algo),
                }
            }
        }
    }

    /// `Auto`'s cuDNN algorithm for calls of `shape`: the only candidate, or the trials'
    /// [`Stable`] pick from `baseline`, measured once.
    fn cudnn_fastest(
        &self,
        cudnn: &CudnnRnn,
        (shape, baseline): (CallShape, RnnAlgo),
        inputs: ForwardInputs,
    ) -> Result<RnnAlgo> {
        let (_, dtype, _, batch, train) = shape;
        memoized(&self.cudnn_fastest, shape, || {
            match cudnn_candidates(dtype, batch, train) {
                [only] => Ok(*only),
                candidates => {
                    let mut pick = Stable::new(baseline);
                    let judge = &mut |t: Trial| pick.judge(t);
                    cudnn.trials(inputs, (candidates, TRIAL_REPS, judge))?;
                    Ok(pick.pick())
                }
            }
        })
    }

    /// Whether ours (on their plan) are kept against cuDNN (with `Auto`'s algorithm) on calls
    /// of `shape` ([`ours_win`]), measured once.
    fn ours_beat(
        &self,
        sides: ((&PersistentRnn, Plan), (&CudnnRnn, RnnAlgo)),
        (shape, ours_default): (CallShape, bool),
        inputs: ForwardInputs,
    ) -> Result<bool> {
        let (_, dtype, _, _, _) = shape;
        memoized(&self.ours_won, shape, || match dtype {
            DType::BF16 => ours_win::<half::bf16>(sides, inputs, ours_default),
            DType::F16 => ours_win::<half::f16>(sides, inputs, ours_default),
            DType::F32 => ours_win::<f32>(sides, inputs, ours_default),
            dt => {
                bail!("rnn: Auto measured the kernels on {dt:?} operands, which they do not take")
            }
        })
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

/// Whether `Auto` keeps ours (on `plan`) against cuDNN's `algo` for the call of `inputs`: each
/// side runs the call (forward, and in training backward with a gradient of ones) on copies of
/// the operands, without dropout (a measurement must not move the masks' counters), once
/// untimed and then [`TRIAL_REPS`] times (replays of a captured graph: `crate::timing`); ours
/// are kept when [`ours_kept`] by those timings and their output [`agrees`] with cuDNN's.
fn ours_win<T: CudaDType + DeviceRepr + ValidAsZeroBits>(
    ((ours, plan), (cudnn, algo)): ((&PersistentRnn, Plan), (&CudnnRnn, RnnAlgo)),
    inputs: ForwardInputs,
    ours_default: bool,
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
    // The gradients of the outputs, made once: a timed call only runs the kernels.
    let dtype = x.dtype();
    let grad_y = Tensor::ones(call.output_len(), dtype, x.device())?;
    let grad_state = Tensor::ones(call.state_len(), dtype, x.device())?;
    // One call forward (and backward, in training); its output.
    let run = |on_ours: bool| -> Result<Tensor> {
        let (out, reserve) = with_operand(&x, |xo| {
            with_operand(&w, |wo| {
                with_operand(&s, |so| {
                    // Packed, as read below.
                    let copies = ForwardInputs {
                        dropout: quiet,
                        ops: [xo, wo, so],
                        state_apart: false,
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
        let packed = Tensor::from_storage(Storage::Cuda(out.out), n, BackpropOp::none(), false);
        if let Some(r) = reserve {
            let y = packed.narrow(0, 0, call.output_len())?;
            let inputs = BackwardInputs {
                call,
                x: &x,
                weight: &w,
                state: &s,
                y: &y,
                grad_y: &grad_y,
                grad_state: Some(&grad_state),
                // The whole of each backward's work (cuDNN's always makes dx).
                state_grad: true,
                input_grad: true,
                dw_into: None,
            };
            backward(on_ours, (ours, cudnn), r, inputs)?;
        }
        Ok(packed)
    };
    let (reference, out) = (run(false)?, run(true)?);
    // Both sides timed the same way: as graphs' replays where both capture, else eagerly.
    let once = |on_ours: bool| move || run(on_ours).map(drop);
    let graphed = match graphed_times(&stream, TRIAL_REPS, once(false))? {
        Some(theirs) => graphed_times(&stream, TRIAL_REPS, once(true))?.map(|mine| (mine, theirs)),
        None => None,
    };
    let (mine, theirs) = match graphed {
        Some(both) => both,
        None => (
            eager_times(&stream, TRIAL_REPS, once(true))?,
            eager_times(&stream, TRIAL_REPS, once(false))?,
        ),
    };
    let (mine, theirs) = (Timing::of(mine), Timing::of(theirs));
    let values = |t: &Tensor| -> Result<Vec<f64>> { t.to_dtype(DType::F64)?.to_vec1::<f64>() };
    Ok(ours_kept(mine, theirs, ours_default) && agrees(&values(&out)?, &values(&reference)?))
}

/// The backward of a measured call, on the side (ours or cuDNN) whose forward left `reserve`.
fn backward(
    on_ours: bool,
    (ours, cudnn): (&PersistentRnn, &CudnnRnn),
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

    // Training was measured graphed and inference eagerly, unless a test says.
    const GRAPHED: Launch = Launch::Graphed;
    const EAGER: Launch = Launch::Eager;
    use crate::RnnConfig;

    fn dims(mode: RnnMode, cfg: RnnConfig) -> RnnDims {
        RnnDims::new(mode, 8, 16, &cfg)
    }

    /// A plan on the wgmma kernels leads where it is planned, but for a stack's graphed
    /// training with its backward on them (`Standard` keeps it) and stacks deeper than measured.
    #[test]
    fn wgmma_plans_lead_but_for_stacks_graphed_training() {
        let on_wgmma = Plan {
            wgmma: true,
            wgmma_backward: true,
            ..Plan::example(Cell::Lstm, 1024, 128)
        };
        let forward_only = Plan {
            wgmma_backward: false,
            ..on_wgmma
        };
        let layers = |num_layers| {
            let cfg = RnnConfig {
                num_layers,
                ..Default::default()
            };
            RnnDims::new(RnnMode::Lstm, 1024, 1024, &cfg)
        };
        let plain = Plan::example(Cell::Lstm, 1024, 128);
        // (A stack's training with only its forward on wgmma, as the 3 x 512 stacks train,
        // leads both ways.)
        for launch in [GRAPHED, EAGER] {
            assert!(wgmma_leads(&on_wgmma, &layers(1), (true, launch)));
            assert!(wgmma_leads(&forward_only, &layers(3), (false, launch)));
            assert!(wgmma_leads(&forward_only, &layers(3), (true, launch)));
            assert!(!wgmma_leads(&plain, &layers(1), (true, launch)));
        }
        assert!(!wgmma_leads(&on_wgmma, &layers(3), (true, GRAPHED)));
        assert!(wgmma_leads(&on_wgmma, &layers(4), (true, EAGER)));
        assert!(!wgmma_leads(&on_wgmma, &layers(5), (true, EAGER)));
    }

    #[test]
    fn ours_are_in_play_for_persistent_and_auto_on_lstms_and_grus_of_either_direction() {
        let bidirectional = RnnConfig {
            bidirectional: true,
            ..Default::default()
        };
        for mode in [RnnMode::Lstm, RnnMode::Gru] {
            for cfg in [RnnConfig::default(), bidirectional] {
                let d = dims(mode, cfg);
                for (algo, want) in [
                    (RnnAlgo::Persistent, true),
                    (RnnAlgo::Auto, true),
                    (RnnAlgo::Standard, false),
                    (RnnAlgo::PersistStatic, false),
                ] {
                    assert_eq!(ours_in_play(algo, &d), want, "{d:?} {algo:?}");
                }
            }
        }
        let projected = RnnConfig {
            proj_size: 4,
            ..Default::default()
        };
        for d in [
            dims(RnnMode::RnnTanh, RnnConfig::default()),
            dims(RnnMode::Lstm, projected),
        ] {
            assert!(!ours_in_play(RnnAlgo::Persistent, &d), "{d:?}");
        }
    }

    #[test]
    fn ours_lead_bidirectional_calls_but_graphed_training_on_the_wgmma_backward() {
        let plain = Plan::example(Cell::Lstm, 128, 32);
        let wgmma = Plan {
            wgmma: true,
            wgmma_backward: true,
            ..Plan::example(Cell::Lstm, 1024, 128)
        };
        for launch in [GRAPHED, EAGER] {
            for train in [false, true] {
                assert!(ours_lead_bidirectional(&plain, DType::F16, (train, launch)));
                assert!(ours_lead_bidirectional(
                    &plain,
                    DType::BF16,
                    (train, launch)
                ));
                // TF32 was not measured.
                assert!(!ours_lead_bidirectional(
                    &plain,
                    DType::F32,
                    (train, launch)
                ));
            }
            assert!(ours_lead_bidirectional(&wgmma, DType::F16, (false, launch)));
        }
        assert!(!ours_lead_bidirectional(
            &wgmma,
            DType::F16,
            (true, GRAPHED)
        ));
        assert!(ours_lead_bidirectional(&wgmma, DType::F16, (true, EAGER)));
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
            zero_state: false,
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

    /// Ours take f32 only with TF32 allowed, and `Heuristic` gives them one layer at batches up
    /// to 32 (GRUs at hidden 128 in inference up to seq 64), inference and training alike,
    /// training at hidden 512 at every batch and at 1024 up to batch 128, inference past batch
    /// 128 at hidden 512, and stacks of up to three layers ([`ours_lead_tf32`]).
    #[test]
    fn ours_take_tf32_and_lead_layers_and_small_stacks() {
        use MathMode::{Fp32, Tf32};
        assert!(ours_take_dtype(DType::F32, Tf32));
        assert!(!ours_take_dtype(DType::F32, Fp32));
        assert!(ours_take_dtype(DType::BF16, Fp32));
        assert!(!ours_take_dtype(DType::F64, Tf32));
        let cell = |mode, layers, hidden| {
            let cfg = RnnConfig {
                num_layers: layers,
                math: Tf32,
                ..Default::default()
            };
            RnnDims::new(mode, hidden, hidden, &cfg)
        };
        for train in [false, true] {
            // On the scaled f16 operands (`scaled`) or TF32 products, launched as `launch`
            // (graphed unless said).
            let lead_launched = |dims: RnnDims, batch, scaled, launch| {
                let c = Call {
                    dims,
                    seq: 30,
                    batch,
                    lengths: None,
                    zero_state: true,
                };
                ours_lead_tf32(&c, &dims, (train, scaled), launch)
            };
            let lead_as = |dims, batch, scaled| lead_launched(dims, batch, scaled, GRAPHED);
            let lead = |dims, batch| lead_as(dims, batch, true);
            for mode in [RnnMode::Lstm, RnnMode::Gru] {
                assert!(
                    lead(cell(mode, 1, 512), 32),
                    "{mode:?} [30, 32, 512] {train}"
                );
                assert!(
                    lead(cell(mode, 1, 1024), 32),
                    "{mode:?} [30, 32, 1024] {train}"
                );
                assert!(lead(cell(mode, 1, 256), 8), "{mode:?} [30, 8, 256] {train}");
                // Past batch 32 ours train, and infer in batch groups.
                assert!(
                    lead(cell(mode, 1, 512), 128),
                    "{mode:?} [30, 128, 512] {train}"
                );
                assert_eq!(
                    lead(cell(mode, 1, 200), 77),
                    train,
                    "{mode:?} [30, 77, 200] {train}"
                );
                // At the wgmma forward's shapes ours infer (as scaled f16 operands), in stacks
                // of up to three layers; one layer of 1024 trains on ours up to batch 128.
                assert!(
                    lead(cell(mode, 1, 1024), 128),
                    "{mode:?} [30, 128, 1024] {train}"
                );
                assert_eq!(
                    lead(cell(mode, 1, 1024), 256),
                    !train,
                    "{mode:?} [30, 256, 1024] {train}"
                );
                assert_eq!(
                    lead(cell(mode, 1, 768), 128),
                    train,
                    "{mode:?} [30, 128, 768] {train}"
                );
                assert_eq!(
                    lead(cell(mode, 3, 1024), 96),
                    !train,
                    "{mode:?} [30, 96, 3 x 1024] {train}"
                );
                assert!(
                    !lead(cell(mode, 4, 1024), 128),
                    "{mode:?} [30, 128, 4 x 1024] {train}"
                );
                // Past batch 128, hidden up to 512 at any grouping.
                assert!(
                    lead(cell(mode, 1, 512), 256),
                    "{mode:?} [30, 256, 512] {train}"
                );
                assert!(
                    lead(cell(mode, 1, 128), 256),
                    "{mode:?} [30, 256, 128] {train}"
                );
                // Stacks, layer by layer: up to three layers, hidden 1024 up to batch 64 and 512
                // past it.
                for (layers, hidden, batch, leads) in [
                    (2, 512, 32, true),
                    (3, 512, 128, true),
                    (2, 650, 20, true),
                    (3, 256, 64, true),
                    (2, 512, 8, true),
                    (4, 512, 32, false),
                    (2, 650, 64, true),
                    (3, 768, 64, true),
                    (3, 1024, 32, true),
                    (3, 768, 128, false),
                    (3, 512, 256, true),
                    (2, 1500, 20, !train),
                ] {
                    assert_eq!(
                        lead(cell(mode, layers, hidden), batch),
                        leads,
                        "{mode:?} [30, {batch}, {layers} x {hidden}] {train}"
                    );
                }
            }
            // Small layers at hidden 128 (a GRU's forward pushed; in batch groups from batch
            // 16); a GRU's inference at hidden 64 on `PersistStaticSmallH`; a small GRU stack
            // on cuDNN. Without the scaled operands (`scaled` false), the rule measured on TF32
            // products: up to batch 128, a small GRU past batch 32 and wide layers past it on
            // cuDNN, stacks up to hidden 650.
            for (mode, layers, hidden, batch, scaled, leads) in [
                (RnnMode::Lstm, 1, 128, 32, true, true),
                (RnnMode::Gru, 1, 128, 32, true, true),
                (RnnMode::Gru, 1, 128, 16, true, true),
                (RnnMode::Gru, 1, 64, 16, true, train),
                (RnnMode::Gru, 2, 128, 32, true, false),
                (RnnMode::Lstm, 1, 512, 128, false, true),
                (RnnMode::Lstm, 1, 512, 256, false, false),
                (RnnMode::Lstm, 1, 1024, 32, false, true),
                (RnnMode::Lstm, 1, 1024, 128, false, false),
                (RnnMode::Gru, 1, 128, 32, false, true),
                (RnnMode::Gru, 1, 128, 64, false, false),
                (RnnMode::Lstm, 2, 650, 20, false, true),
                (RnnMode::Lstm, 3, 1024, 32, false, false),
                (RnnMode::Lstm, 3, 512, 128, false, true),
            ] {
                assert_eq!(
                    lead_as(cell(mode, layers, hidden), batch, scaled),
                    leads,
                    "{mode:?} [30, {batch}, {layers} x {hidden}] {train}, scaled {scaled}"
                );
            }
            // At seq 200 a small GRU's inference on `PersistStaticSmallH`.
            let long = Call {
                dims: cell(RnnMode::Gru, 1, 128),
                seq: 200,
                batch: 32,
                lengths: None,
                zero_state: true,
            };
            assert_eq!(
                ours_lead_tf32(&long, &long.dims, (train, true), GRAPHED),
                train,
                "GRU [200, 32, 128] {train}"
            );
            // At hidden 128 in batch groups, LSTMs and (on scaled operands) GRUs at every batch.
            for batch in [48, 64, 96, 128, 256] {
                for mode in [RnnMode::Lstm, RnnMode::Gru] {
                    assert!(
                        lead(cell(mode, 1, 128), batch),
                        "{mode:?} [30, {batch}, 128] {train}"
                    );
                }
            }
            // Eagerly, layers past 512 up to 768 at batches up to 128, stacks and inference
            // alike; not past batch 128, nor wider, nor deeper than three layers.
            for (layers, hidden, batch, leads) in [
                (3, 768, 128, true),
                (2, 640, 96, true),
                (1, 768, 128, true),
                (3, 768, 256, false),
                (1, 768, 256, false),
                (4, 768, 128, false),
                (3, 1024, 128, !train),
            ] {
                for mode in [RnnMode::Lstm, RnnMode::Gru] {
                    assert_eq!(
                        lead_launched(cell(mode, layers, hidden), batch, true, EAGER),
                        leads,
                        "{mode:?} [30, {batch}, {layers} x {hidden}] {train}, eager"
                    );
                }
            }
        }
    }

    /// `Heuristic`'s rules on the measured shapes (`results/2026-11-25-h100-plain-api/`).
    #[test]
    fn the_rules_pick_what_the_sweep_measured_fastest() {
        let lstm = |layers, hidden| {
            let cfg = RnnConfig {
                num_layers: layers,
                ..Default::default()
            };
            RnnDims::new(RnnMode::Lstm, hidden, hidden, &cfg)
        };
        let call = |dims, batch| Call {
            dims,
            seq: 30,
            batch,
            lengths: None,
            zero_state: false,
        };
        let train = |dims: RnnDims, batch, dtype| {
            let c = call(dims, batch);
            (
                ours_lead(&c, &dims, (dtype, true), (OneLaunch::default(), GRAPHED)),
                cudnn_by_rule(&dims, &c, (dtype, true), GRAPHED),
            )
        };
        let (s, ps, psh) = (
            RnnAlgo::Standard,
            RnnAlgo::PersistStatic,
            RnnAlgo::PersistStaticSmallH,
        );
        // bf16: ours in one or two layers, Standard on cuDNN.
        assert_eq!(train(lstm(1, 512), 32, DType::BF16), (true, s));
        assert_eq!(train(lstm(2, 1500), 20, DType::BF16), (true, s));
        assert_eq!(train(lstm(3, 512), 32, DType::BF16), (false, s));
        // f16: PersistStatic from 256 at multiples of 128, ours elsewhere (SmallH at hidden 128
        // for one GRU's training at batches that are not multiples of 8, and for stacks' past
        // batch 96, `half-rules`).
        assert_eq!(train(lstm(1, 128), 32, DType::F16), (true, psh));
        assert_eq!(train(lstm(2, 128), 32, DType::F16), (true, psh));
        // Ours lead PersistStatic in one layer's training (`prologue`), in stacks up to 512
        // (`f16-persist-static`).
        assert_eq!(train(lstm(1, 1024), 32, DType::F16), (true, ps));
        assert_eq!(train(lstm(1, 512), 32, DType::F16), (true, ps));
        assert_eq!(train(lstm(1, 256), 24, DType::F16), (true, ps));
        assert_eq!(train(lstm(1, 512), 16, DType::F16), (true, ps));
        assert_eq!(train(lstm(1, 512), 8, DType::F16), (true, ps));
        assert_eq!(train(lstm(2, 512), 8, DType::F16), (true, ps));
        assert_eq!(train(lstm(2, 1024), 32, DType::F16), (false, ps));
        // cuDNN's persistent kernels at batches past 8 that are not multiples of 8: never
        // PersistStatic; SmallH for GRUs only.
        assert_eq!(train(lstm(1, 1024), 20, DType::F16), (true, s));
        assert_eq!(train(lstm(1, 512), 12, DType::F16), (true, s));
        assert_eq!(train(lstm(2, 512), 20, DType::F16), (true, s));
        assert_eq!(train(lstm(1, 128), 20, DType::F16), (true, psh));
        assert_eq!(train(lstm(2, 128), 20, DType::F16), (true, psh));
        assert_eq!(train(lstm(1, 1024), 6, DType::F16).1, s);
        assert_eq!(
            cudnn_by_rule(
                &lstm(1, 1024),
                &call(lstm(1, 1024), 6),
                (DType::F16, false),
                EAGER
            ),
            ps
        );
        // Past batch 64 ours train slower than cuDNN in one group (`training-chunks`): training
        // stays there, but for batches that split into groups (`batch-groups`, 65 in 5 of 13);
        // ours in groups lead f16 SmallH at hidden 128.
        assert_eq!(train(lstm(1, 512), 128, DType::F16), (true, s));
        assert_eq!(train(lstm(1, 128), 128, DType::F16), (true, psh));
        assert_eq!(train(lstm(1, 512), 65, DType::BF16), (true, s));
        assert_eq!(train(lstm(1, 512), 67, DType::BF16), (false, s));
        assert_eq!(train(lstm(1, 1024), 128, DType::BF16), (false, s));
        // One layer at batches 33-64 trains on ours (`batch64-single`), f16 at hidden 128 too
        // (`small-h-default`).
        assert_eq!(train(lstm(1, 512), 64, DType::BF16), (true, s));
        assert_eq!(train(lstm(1, 1024), 40, DType::F16), (true, s));
        assert_eq!(train(lstm(1, 128), 64, DType::F16), (true, psh));
        assert_eq!(train(lstm(1, 128), 64, DType::BF16), (true, s));
        assert_eq!(train(lstm(1, 128), 32, DType::BF16), (true, s));
        assert_eq!(train(lstm(2, 650), 20, DType::F16), (true, s));
        assert_eq!(train(lstm(3, 512), 32, DType::F16), (false, ps));
        // Deeper stacks: ours where every pass runs as one wavefront, PersistStatic's f16
        // shapes included, else cuDNN (`deep-stacks`).
        let deep = |dims: RnnDims, batch, dtype, in_one_launch| {
            let c = call(dims, batch);
            (
                ours_lead(
                    &c,
                    &dims,
                    (dtype, true),
                    (OneLaunch::both(in_one_launch), GRAPHED),
                ),
                cudnn_by_rule(&dims, &c, (dtype, true), GRAPHED),
            )
        };
        assert_eq!(deep(lstm(3, 256), 32, DType::BF16, true), (true, s));
        assert_eq!(deep(lstm(4, 256), 32, DType::F16, true), (true, ps));
        assert_eq!(deep(lstm(3, 512), 8, DType::F16, true), (true, ps));
        assert_eq!(deep(lstm(3, 512), 32, DType::F16, false), (false, ps));
        assert_eq!(deep(lstm(3, 1024), 32, DType::BF16, false), (false, s));
        // SmallH's f16 shapes are ours too up to batch 96 (`half-rules`).
        assert_eq!(deep(lstm(3, 128), 32, DType::F16, true), (true, psh));
        // Two layers lead whether or not they run in one launch.
        assert_eq!(deep(lstm(2, 1500), 20, DType::BF16, false), (true, s));
        // Past batch 32, stacks in one launch up to batch 64 and 1300 units (`batch64`).
        assert_eq!(deep(lstm(2, 650), 64, DType::F16, true), (true, s));
        assert_eq!(deep(lstm(3, 256), 64, DType::BF16, true), (true, s));
        assert_eq!(deep(lstm(2, 650), 61, DType::BF16, false), (false, s));
        // Or in batch groups, layer by layer (`groups-sanitize`).
        assert_eq!(deep(lstm(2, 650), 64, DType::BF16, false), (true, s));
        assert_eq!(deep(lstm(3, 512), 128, DType::BF16, false), (true, s));
        // There, a stack whose backward alone runs in one launch trains on ours but infers on
        // cuDNN (`batch64-check`).
        let backward_only = |dims: RnnDims, batch, train| {
            let one = OneLaunch {
                forward: false,
                backward: true,
            };
            ours_lead(
                &call(dims, batch),
                &dims,
                (DType::BF16, train),
                (one, GRAPHED),
            )
        };
        assert!(backward_only(lstm(2, 650), 61, true));
        assert!(!backward_only(lstm(2, 650), 61, false));
        // Deeper stacks need every pass in one launch, or batch groups.
        assert!(!backward_only(lstm(3, 256), 32, true));
        assert_eq!(deep(lstm(3, 512), 61, DType::BF16, true), (false, s));
        assert_eq!(deep(lstm(3, 512), 64, DType::BF16, true), (true, s));
        assert_eq!(deep(lstm(3, 256), 96, DType::BF16, false), (true, s));
        assert_eq!(deep(lstm(3, 512), 96, DType::BF16, true), (true, s));
        assert_eq!(deep(lstm(2, 512), 127, DType::BF16, true), (false, s));
        // f16 training below batch 8: never cuDNN's persistent kernels.
        assert_eq!(train(lstm(1, 512), 4, DType::F16), (true, s));
        assert_eq!(train(lstm(1, 128), 4, DType::F16), (true, s));
        assert_eq!(train(lstm(1, 128), 4, DType::F32).1, psh);
        // f32: SmallH at hidden 128, Standard above.
        assert_eq!(train(lstm(1, 128), 128, DType::F32).1, psh);
        assert_eq!(train(lstm(1, 512), 32, DType::F32).1, s);
        let gru = RnnDims::new(RnnMode::Gru, 128, 128, &RnnConfig::default());
        assert_eq!(
            cudnn_by_rule(&gru, &call(gru, 32), (DType::F32, true), GRAPHED),
            psh
        );
        assert_eq!(
            cudnn_by_rule(&gru, &call(gru, 32), (DType::F16, true), GRAPHED),
            psh
        );
        assert_eq!(
            cudnn_by_rule(&gru, &call(gru, 32), (DType::BF16, true), GRAPHED),
            s
        );
        let gru512 = RnnDims::new(RnnMode::Gru, 512, 512, &RnnConfig::default());
        assert_eq!(
            cudnn_by_rule(&gru512, &call(gru512, 32), (DType::F16, true), GRAPHED),
            s
        );
        // GRUs on ours as LSTMs, but f16 at hidden 128 at batches that are not multiples of 8 on
        // SmallH (`gru-train`'s sweep, `small-h-default`).
        let gru_train = |dims: RnnDims, batch, dtype| {
            let c = call(dims, batch);
            (
                ours_lead(&c, &dims, (dtype, true), (OneLaunch::default(), GRAPHED)),
                cudnn_by_rule(&dims, &c, (dtype, true), GRAPHED),
            )
        };
        assert_eq!(gru_train(gru512, 32, DType::BF16), (true, s));
        assert_eq!(gru_train(gru512, 32, DType::F16), (true, s));
        assert_eq!(gru_train(gru, 32, DType::BF16), (true, s));
        assert_eq!(gru_train(gru, 32, DType::F16), (true, psh));
        assert_eq!(gru_train(gru, 20, DType::F16), (false, psh));
        let gru_stack = |layers, hidden| {
            let cfg = RnnConfig {
                num_layers: layers,
                ..Default::default()
            };
            RnnDims::new(RnnMode::Gru, hidden, hidden, &cfg)
        };
        assert_eq!(deep(gru_stack(3, 200), 20, DType::F16, true), (true, s));
        assert_eq!(deep(gru_stack(3, 512), 32, DType::BF16, false), (false, s));
        // Inference past batch 32 (ours in chunks): one layer up to hidden 512
        // (`forward-chunks`), f16 at 128 too since each batch group runs in one cluster
        // (`small-h-default`).
        let infer = |dims: RnnDims, batch, dtype| {
            ours_lead(
                &call(dims, batch),
                &dims,
                (dtype, false),
                (OneLaunch::default(), EAGER),
            )
        };
        assert!(infer(lstm(1, 128), 128, DType::BF16));
        assert!(infer(lstm(1, 512), 128, DType::BF16));
        assert!(infer(gru512, 128, DType::F16));
        assert!(infer(gru, 128, DType::F16));
        // f16 LSTM inference at batch 128 up to hidden 512: PersistStatic (`inference-forward`).
        let infer_cudnn = |dims: RnnDims, batch, dtype| {
            let c = call(dims, batch);
            (
                ours_lead(&c, &dims, (dtype, false), (OneLaunch::default(), EAGER)),
                cudnn_by_rule(&dims, &c, (dtype, false), EAGER),
            )
        };
        // cuDNN's rule: f16 LSTM inference at batch 128 up to hidden 512 on PersistStatic
        // (`inference-forward`); but ours lead it in one layer past batch 32 (`half-rule-sweep`).
        assert_eq!(infer_cudnn(lstm(1, 512), 128, DType::F16), (true, ps));
        assert_eq!(infer_cudnn(lstm(1, 256), 48, DType::F16), (true, ps));
        // And a stack in batch groups (`deep-stacks`).
        assert_eq!(infer_cudnn(lstm(3, 512), 128, DType::F16), (true, ps));
        // (Eagerly every hidden size up to batch 128, `half-rules`; the wgmma forward at 1024.)
        assert_eq!(infer_cudnn(lstm(1, 1024), 128, DType::F16), (true, s));
        // Past batch 128, eagerly ours up to hidden 512 (`refill-batch256`).
        assert_eq!(infer_cudnn(lstm(1, 512), 256, DType::F16), (true, s));
        assert_eq!(infer_cudnn(lstm(1, 512), 128, DType::BF16), (true, s));
        assert!(infer(lstm(1, 1024), 128, DType::BF16));
        assert!(!infer(lstm(1, 1024), 160, DType::BF16));
        // Eagerly ours infer a stack of up to 3 x 512 at batch 128 (`eager-graphed`).
        assert!(infer(lstm(3, 512), 128, DType::BF16));
        assert!(!infer(lstm(3, 1024), 128, DType::BF16));
        assert!(infer(lstm(1, 512), 256, DType::BF16));
        // And a stack's up to 512 too (`wgmma-eager1024` §3).
        assert!(infer(lstm(3, 512), 256, DType::BF16));
        assert!(!infer(lstm(3, 1024), 256, DType::BF16));
        // f16 LSTM inference: PersistStatic in one layer from 256 at batches 8-16, ours at 32
        // (`prologue`) and in stacks up to 512.
        assert_eq!(infer_cudnn(lstm(1, 512), 32, DType::F16), (true, ps));
        assert_eq!(infer_cudnn(lstm(1, 1024), 32, DType::F16), (true, ps));
        assert_eq!(infer_cudnn(lstm(1, 512), 16, DType::F16), (false, ps));
        assert_eq!(infer_cudnn(lstm(1, 256), 8, DType::F16), (false, ps));
        // (The GPU tests' default case: inference on PersistStatic, training on ours.)
        assert_eq!(infer_cudnn(lstm(1, 256), 16, DType::F16), (false, ps));
        assert_eq!(train(lstm(1, 256), 16, DType::F16), (true, ps));
        assert_eq!(infer_cudnn(lstm(2, 512), 32, DType::F16), (true, ps));
        assert_eq!(infer_cudnn(lstm(2, 1024), 32, DType::F16), (false, ps));
        // Lengths and two directions: Standard.
        let bi = RnnDims::new(
            RnnMode::Lstm,
            128,
            128,
            &RnnConfig {
                bidirectional: true,
                ..Default::default()
            },
        );
        assert_eq!(
            cudnn_by_rule(&bi, &call(bi, 32), (DType::F32, true), GRAPHED),
            s
        );
        let elman = RnnDims::new(RnnMode::RnnTanh, 128, 128, &RnnConfig::default());
        assert_eq!(
            cudnn_by_rule(&elman, &call(elman, 32), (DType::F32, true), GRAPHED),
            s
        );
        let varlen = Call {
            lengths: Some(vec![30; 32].into()),
            zero_state: false,
            ..call(lstm(1, 128), 32)
        };
        assert_eq!(
            cudnn_by_rule(&lstm(1, 128), &varlen, (DType::F16, true), GRAPHED),
            s
        );
    }

    /// Where eager and graphed calls differ (`results/2026-11-26-h100-eager-graphed/`).
    #[test]
    fn eager_and_graphed_calls_past_batch_32_follow_their_own_measurements() {
        let dims = |mode, layers, hidden| {
            let cfg = RnnConfig {
                num_layers: layers,
                ..Default::default()
            };
            RnnDims::new(mode, hidden, hidden, &cfg)
        };
        let (lstm, gru) = (RnnMode::Lstm, RnnMode::Gru);
        let pick = |dims: RnnDims, batch, (dtype, train), one: OneLaunch, launch| {
            let c = Call {
                dims,
                seq: 30,
                batch,
                lengths: None,
                zero_state: false,
            };
            match ours_lead(&c, &dims, (dtype, train), (one, launch)) {
                true => RnnAlgo::Persistent,
                false => cudnn_by_rule(&dims, &c, (dtype, train), launch),
            }
        };
        let (p, s, ps) = (
            RnnAlgo::Persistent,
            RnnAlgo::Standard,
            RnnAlgo::PersistStatic,
        );
        let pssh = RnnAlgo::PersistStaticSmallH;
        let one = OneLaunch::default();
        // [30, 128, 3 x 512] runs its backward in one launch, its forward layer by layer.
        let backward_only = OneLaunch {
            forward: false,
            backward: true,
        };
        let (bf16, f16) = (DType::BF16, DType::F16);
        let both = |d, b, how, one| {
            (
                pick(d, b, how, one, Launch::Eager),
                pick(d, b, how, one, Launch::Graphed),
            )
        };
        // Inference, one layer: in batch groups (up to hidden 512) ours up to batch 128, and
        // ahead of f16 `PersistStatic` (`half-rule-sweep`); not in groups, eagerly ours up to
        // hidden 512 at batch 128, graphed `Standard` (ours and `PersistStatic` 1.2-1.45x).
        assert_eq!(both(dims(gru, 1, 512), 128, (bf16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 128, (f16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 96, (bf16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 77, (bf16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 79, (bf16, false), one), (p, s));
        assert_eq!(both(dims(gru, 1, 256), 128, (bf16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 256), 128, (f16, false), one), (p, p));
        assert_eq!(both(dims(gru, 1, 512), 64, (bf16, false), one), (p, p));
        // Past batch 128 ours infer one layer up to hidden 256, eagerly 512 (`refill-batch256`),
        // a GRU graphed up to 512 too (`half-rule-sweep`).
        assert_eq!(both(dims(gru, 1, 512), 256, (bf16, false), one), (p, p));
        assert_eq!(both(dims(gru, 1, 512), 160, (f16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 192, (f16, false), one), (p, s));
        assert_eq!(both(dims(lstm, 1, 128), 256, (bf16, false), one), (p, p));
        assert_eq!(both(dims(gru, 1, 256), 256, (bf16, false), one), (p, p));
        assert_eq!(both(dims(gru, 1, 64), 200, (bf16, false), one), (p, p));
        // But f16 `PersistStaticSmallH` at hidden 128 (`wgmma-eager1024` §4).
        assert_eq!(
            both(dims(lstm, 1, 128), 256, (f16, false), one),
            (pssh, pssh)
        );
        assert_eq!(
            both(dims(gru, 1, 128), 200, (f16, false), one),
            (pssh, pssh)
        );
        assert_eq!(both(dims(gru, 1, 128), 128, (f16, false), one), (p, p));
        assert_eq!(both(dims(gru, 1, 128), 256, (f16, true), one), (p, p));
        assert_eq!(both(dims(gru, 1, 256), 256, (f16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 256, (bf16, false), one), (p, s));
        // A stack's, eagerly (`wgmma-eager1024` §3).
        assert_eq!(both(dims(lstm, 3, 128), 256, (bf16, false), one), (p, s));
        assert_eq!(both(dims(gru, 3, 512), 256, (bf16, false), one), (p, s));
        assert_eq!(both(dims(gru, 3, 1024), 256, (bf16, false), one), (s, s));
        // (Eagerly ours by this rule at every hidden size up to batch 128, `half-rules`; at
        // hidden 1024 the wgmma forward serves, `wgmma_leads`.)
        assert_eq!(both(dims(gru, 1, 1024), 128, (bf16, false), one), (p, s));
        // Training, one layer: in batch groups ours at every batch; not in groups graphed up to
        // batch 64, eagerly up to 128.
        assert_eq!(both(dims(gru, 1, 256), 128, (bf16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 128, (bf16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 512), 64, (bf16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 256), 256, (bf16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 256), 77, (bf16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 256), 79, (bf16, true), one), (p, s));
        assert_eq!(both(dims(lstm, 1, 1024), 128, (bf16, true), one), (p, s));
        // Stacks past batch 32 run in batch groups, layer by layer, up to batch 128
        // (`groups-sanitize`); deeper than two layers past hidden 256, or past batch 64 in
        // training and hidden 128 in inference (`deep-stacks`). Inference in groups is ours.
        let l3 = dims(lstm, 3, 512);
        assert_eq!(both(l3, 128, (bf16, true), one), (p, p));
        assert_eq!(both(l3, 128, (f16, true), one), (p, p));
        assert_eq!(both(dims(gru, 3, 512), 128, (bf16, false), one), (p, p));
        assert_eq!(both(dims(gru, 3, 256), 128, (bf16, false), one), (p, p));
        // Not f16 `PersistStatic`, which keeps a stack's eager inference in one group.
        assert_eq!(both(l3, 128, (f16, false), one), (p, p));
        assert_eq!(both(l3, 64, (bf16, true), one), (p, p));
        // In one group, a stack whose forward runs in one launch infers on ours up to batch
        // 128; one whose backward alone does trains on ours graphed up to batch 64.
        let forward_only = OneLaunch {
            forward: true,
            backward: false,
        };
        let l3_128 = dims(lstm, 3, 128);
        assert_eq!(both(l3_128, 128, (bf16, false), forward_only), (p, p));
        assert_eq!(
            both(dims(lstm, 3, 256), 64, (bf16, true), backward_only),
            (p, s)
        );
        assert_eq!(both(l3, 96, (bf16, true), one), (p, p));
        // Eagerly, stacks of up to 3 x 1024 train on ours layer by layer
        // (`wgmma-eager1024` §2), also neither in groups (a prime batch) nor with the backward
        // in one launch; graphed those stay on cuDNN. (At batch 128 a plan on both wgmma
        // kernels leads eagerly up to 4 x 1024: `wgmma_leads`.)
        assert_eq!(both(dims(lstm, 3, 1024), 128, (bf16, true), one), (p, s));
        assert_eq!(both(dims(gru, 2, 1024), 128, (f16, true), one), (p, s));
        assert_eq!(both(dims(gru, 4, 1024), 128, (bf16, true), one), (s, s));
        assert_eq!(both(dims(gru, 3, 1024), 128, (bf16, false), one), (s, s));
        assert_eq!(both(dims(lstm, 2, 1024), 128, (bf16, false), one), (s, s));
        assert_eq!(both(l3, 127, (bf16, true), one), (p, s));
        // Past batch 128 stacks train on ours up to hidden 256 graphed, 512 eagerly
        // (`wgmma-eager1024` §3), but f16 `PersistStaticSmallH` keeps hidden 128.
        assert_eq!(both(l3, 256, (bf16, true), backward_only), (p, s));
        assert_eq!(both(dims(gru, 2, 128), 256, (bf16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 4, 256), 256, (f16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 3, 256), 200, (bf16, true), one), (p, p));
        assert_eq!(both(dims(gru, 2, 128), 200, (bf16, false), one), (p, s));
        assert_eq!(
            both(dims(lstm, 2, 128), 256, (f16, true), one),
            (pssh, pssh)
        );
        // f16 GRU stacks there train on ours; at batch 97-128 stacks train on ours and infer on
        // `PersistStaticSmallH` (`half-rules`).
        assert_eq!(both(dims(gru, 2, 128), 256, (f16, true), one), (p, p));
        assert_eq!(both(dims(gru, 3, 128), 128, (f16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 2, 128), 128, (f16, true), one), (p, p));
        assert_eq!(
            both(dims(lstm, 2, 128), 128, (f16, false), one),
            (pssh, pssh)
        );
        assert_eq!(
            both(dims(gru, 3, 128), 256, (f16, false), one),
            (pssh, pssh)
        );
        assert_eq!(both(l3, 127, (bf16, true), backward_only), (p, s));
        // Up to batch 96 ours lead stacks at hidden 128 (`half-rule-sweep`, `half-rules`): up to
        // batch 64 as a wavefront in one launch, past it in groups (inference in one launch).
        let wave = OneLaunch::both(true);
        assert_eq!(both(dims(lstm, 3, 128), 64, (f16, true), wave), (p, p));
        assert_eq!(both(dims(gru, 3, 128), 96, (f16, true), one), (p, p));
        assert_eq!(both(dims(gru, 3, 128), 96, (f16, false), wave), (p, p));
        assert_eq!(both(dims(lstm, 3, 128), 48, (f16, false), wave), (p, p));
        assert_eq!(both(dims(lstm, 2, 128), 32, (f16, true), one), (p, p));
        assert_eq!(both(dims(gru, 2, 128), 20, (f16, false), one), (p, p));
        // Past batch 128, graphed, f16 GRU stacks train on ours up to hidden 512, LSTMs up to
        // 256; forwards of stacks lead past hidden 128 up to 256 (`half-rule-sweep`), a GRU
        // stack's up to 512 up to batch 192 (`plain-api-grid`'s `half-left`).
        assert_eq!(both(dims(gru, 2, 512), 256, (f16, true), one), (p, p));
        assert_eq!(both(dims(gru, 3, 512), 192, (f16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 2, 512), 256, (f16, true), one), (p, s));
        assert_eq!(both(dims(gru, 2, 1024), 256, (f16, true), one), (s, s));
        assert_eq!(both(dims(lstm, 2, 256), 256, (f16, false), one), (p, p));
        assert_eq!(both(dims(gru, 3, 256), 192, (bf16, false), one), (p, p));
        assert_eq!(both(dims(gru, 3, 512), 192, (f16, false), one), (p, p));
        assert_eq!(both(dims(gru, 2, 512), 160, (bf16, false), one), (p, p));
        assert_eq!(both(dims(gru, 3, 512), 224, (f16, false), one), (p, s));
        assert_eq!(both(dims(lstm, 3, 512), 192, (f16, false), one), (p, s));
        assert_eq!(both(dims(gru, 3, 1024), 192, (f16, false), one), (s, s));
        // One layer, eagerly: ours at every hidden size up to batch 128 (`half-rule-sweep`,
        // `half-rules`).
        assert_eq!(both(dims(lstm, 1, 768), 96, (f16, true), one), (p, s));
        assert_eq!(both(dims(gru, 1, 768), 96, (f16, false), one), (p, s));
        assert_eq!(both(dims(lstm, 1, 768), 128, (f16, true), one), (p, s));
        assert_eq!(both(dims(lstm, 1, 768), 160, (f16, true), one), (s, s));
        assert_eq!(both(dims(lstm, 1, 1500), 96, (bf16, true), one), (s, s));
        assert_eq!(both(dims(lstm, 1, 1500), 64, (bf16, true), one), (p, p));
        // At batch 32 and below the two agree.
        assert_eq!(both(dims(gru, 1, 512), 32, (bf16, true), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 1024), 32, (f16, false), one), (p, p));
        assert_eq!(both(dims(lstm, 1, 1024), 16, (f16, false), one), (ps, ps));
    }

    fn timing(median: f64) -> Timing {
        Timing {
            q1: median * 0.99,
            median,
            q3: median * 1.01,
        }
    }

    #[test]
    fn timings_take_the_median_and_quartiles() {
        let t = Timing::of(vec![5.0, 1.0, 9.0, 3.0, 7.0]);
        assert_eq!((t.q1, t.median, t.q3), (3.0, 5.0, 7.0));
        assert!(clearly_faster(timing(1.0), timing(2.0)));
        assert!(
            !clearly_faster(timing(1.0), timing(1.01)),
            "within the margin"
        );
        let noisy = Timing {
            q1: 1.0,
            median: 2.0,
            q3: 3.0,
        };
        assert!(
            !clearly_faster(timing(1.5), noisy),
            "inside the other's quartiles"
        );
    }

    #[test]
    fn auto_moves_from_the_heuristic_only_to_a_clearly_faster_agreeing_trial() {
        let trial = |algo, median: f64, v: f64| Trial {
            algo,
            times: vec![median * 0.99, median, median * 1.01],
            graphed: true,
            results: [vec![v], vec![v], vec![v], vec![v]],
        };
        let pick = |baseline, trials: Vec<Trial>| {
            let mut p = Stable::new(baseline);
            trials.into_iter().for_each(|t| p.judge(t));
            p.pick()
        };
        let [s, ps, psh, pd] = RnnAlgo::CONCRETE;
        assert_eq!(pick(s, vec![]), s);
        assert_eq!(
            pick(
                s,
                vec![trial(s, 3.0, 1.0), trial(ps, 2.0, 1.0), trial(pd, 1.0, 9.0)]
            ),
            ps,
            "a faster trial that disagrees does not count"
        );
        assert_eq!(
            pick(s, vec![trial(s, 2.0, 1.0), trial(ps, 1.99, 1.0)]),
            s,
            "a tie keeps the heuristic's"
        );
        assert_eq!(
            pick(
                psh,
                vec![
                    trial(s, 2.0, 1.0),
                    trial(psh, 1.99, 1.0),
                    trial(pd, 1.98, 1.0)
                ]
            ),
            psh,
            "a tie keeps the heuristic's, here not Standard"
        );
        assert_eq!(
            pick(psh, vec![trial(s, 2.0, 1.0), trial(psh, 2.1, 1.0)]),
            s,
            "never a pick slower than Standard's median"
        );
        assert_eq!(
            pick(
                s,
                vec![trial(s, 3.0, 1.0), trial(ps, 2.0, 1.0), trial(pd, 1.5, 1.0)]
            ),
            pd,
            "the fastest of the clearly faster"
        );
    }

    #[test]
    fn ours_stay_where_the_heuristic_puts_them_unless_slower() {
        assert!(ours_kept(timing(1.0), timing(1.0), true));
        assert!(!ours_kept(timing(1.1), timing(1.0), true));
        assert!(
            !ours_kept(timing(0.99), timing(1.0), false),
            "not clearly faster"
        );
        assert!(ours_kept(timing(0.5), timing(1.0), false));
    }
}
