//! The persistent kernels: how a layer's hidden units are spread over the GPU's
//! multiprocessors ([`Plan`]), and the CUDA source of the forward and backward recurrences
//! specialised for that plan and its cell, compiled with NVRTC at first use
//! (`crate::kernels::Module`: one PTX cache for the process) and loaded once per device.

use super::cell::{Cell, CELL_GRU, CELL_LSTM, UNIT_STEP};
use super::launch::{Launch, MAX_GROUPS, MOST_CLUSTER_BLOCKS, PORTABLE_CLUSTER_BLOCKS};
use super::tuning::{Tuning, WaveTuning};
use crate::kernels::{Module, HALF, PHILOX};
use candle_core::cuda_backend::cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use candle_core::cuda_backend::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig};
use candle_core::cuda_backend::cudarc::nvrtc::CompileOptions;
use candle_core::cuda_backend::{CudaDevice, DeviceId};
use candle_core::{DType, Result};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

const COMMON: &str = include_str!("common.cuh");
const DROPOUT: &str = include_str!("dropout.cu");
const PAD: &str = include_str!("pad.cu");
const RECURRENCE_FWD: &str = include_str!("recurrence_fwd.cu");
const RECURRENCE_BWD: &str = include_str!("recurrence_bwd.cu");
const WGMMA: &str = include_str!("wgmma.cuh");
const RECURRENCE_WGMMA_FWD: &str = include_str!("recurrence_wgmma_fwd.cu");
const RECURRENCE_WGMMA_BWD: &str = include_str!("recurrence_wgmma_bwd.cu");
const RECURRENCE_WGMMA_WAVE: &str = include_str!("recurrence_wgmma_wave.cu");
const F16_SCALED: &str = include_str!("f16_scaled.cu");

/// The source of a module for cell `$cell` (a [`Cell`]): the preludes, the cell's pointwise
/// steps, then `$part`s, as one static list per cell.
macro_rules! cell_sources {
    ($cell:expr, [$($part:expr),* $(,)?]) => {
        match $cell {
            Cell::Lstm => &[HALF, PHILOX, COMMON, CELL_LSTM, $($part),*],
            Cell::Gru => &[HALF, PHILOX, COMMON, CELL_GRU, $($part),*],
        }
    };
}

/// Which recurrence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Pass {
    Forward,
    Backward,
}

impl Pass {
    fn name(self) -> &'static str {
        match self {
            Pass::Forward => "persistent_fwd",
            Pass::Backward => "persistent_bwd",
        }
    }

    /// The source of the pass's modules for `cell`: the preludes, the cell's pointwise steps,
    /// the dropout and row-copy kernels, then the recurrence (its layer-by-layer kernel and its
    /// wavefront), and the forward's scaled f16 rows of an f32 layer's operands ([`Plan::scaled`]).
    pub(super) fn sources(self, cell: Cell) -> &'static [&'static str] {
        match self {
            Pass::Forward => cell_sources!(cell, [DROPOUT, PAD, RECURRENCE_FWD, F16_SCALED]),
            Pass::Backward => cell_sources!(cell, [DROPOUT, PAD, RECURRENCE_BWD]),
        }
    }
}

/// The wgmma forward's kernel (`recurrence_wgmma_fwd.cu`, [`Plan::wgmma`]).
const WGMMA_KERNEL: &str = "wgmma_fwd";

/// The source of the wgmma forward's modules for `cell`, in [`Pass::sources`]'s order (the
/// dropout and row-copy kernels too, which the forward's host code takes from its module), the
/// instruction's wrappers (`wgmma.cuh`) before the recurrence, and the scaled f16 rows of an f32
/// layer's operands after it ([`Plan::scaled`]).
fn wgmma_sources(cell: Cell) -> &'static [&'static str] {
    cell_sources!(
        cell,
        [DROPOUT, PAD, WGMMA, RECURRENCE_WGMMA_FWD, F16_SCALED]
    )
}

/// The kernel of `f16_scaled.cu`, in the forward's modules.
pub(super) const F16_SCALED_KERNEL: &str = "rows_to_f16_scaled";

/// The wgmma wavefront's kernel (`recurrence_wgmma_wave.cu`, [`super::wgmma_wave::WgmmaWave`]).
const WGMMA_WAVE_KERNEL: &str = "wgmma_wave_fwd";

/// The source of the wgmma wavefront's modules for `cell`: the wgmma forward's, then the
/// wavefront (its projection blocks and its kernel).
fn wgmma_wave_sources(cell: Cell) -> &'static [&'static str] {
    cell_sources!(
        cell,
        [
            DROPOUT,
            PAD,
            WGMMA,
            RECURRENCE_WGMMA_FWD,
            RECURRENCE_WGMMA_WAVE
        ]
    )
}

/// The wgmma backward's kernel (`recurrence_wgmma_bwd.cu`, [`Plan::wgmma_backward`]).
const WGMMA_BWD_KERNEL: &str = "wgmma_bwd";

/// The source of the wgmma backward's modules for `cell` (its helpers, the transpose of W_hh
/// and the bias parts' sum, stay in the layer-by-layer backward's module: [`Plan::function`]).
fn wgmma_bwd_sources(cell: Cell) -> &'static [&'static str] {
    cell_sources!(cell, [DROPOUT, WGMMA, RECURRENCE_WGMMA_BWD])
}

/// The wgmma backward's batch: one group, wgmma's N.
pub(super) const WGMMA_BWD_BATCH: usize = 128;

/// The wgmma backward's units a block, and its clusters' blocks, which split the product's K:
/// a cluster's 128 units are two warpgroups' M of 64.
pub(super) const WGMMA_BWD_UNITS: usize = 16;
pub(super) const WGMMA_BWD_CLUSTER: usize = 8;

/// The wgmma backward's hidden size: as many clusters of 128 units as a cluster's blocks.
pub(super) const WGMMA_BWD_HIDDEN: usize = WGMMA_BWD_UNITS * WGMMA_BWD_CLUSTER * WGMMA_BWD_CLUSTER;

/// Whether a layer-by-layer backward in half precision runs on the wgmma kernel
/// ([`Plan::wgmma_backward`]) where the tuning leaves it to the shape: where the training forward
/// runs on wgmma ([`shape_wgmma_training`]) at [`WGMMA_BWD_HIDDEN`], the one hidden size it
/// takes, so layers of 1024 at batch 128. There graphed training of one layer took 0.93-0.94x of
/// the wgmma forward's with the layer-by-layer backward (LSTM [30, 128, 1024] 5.64 against 6.07
/// µs an example, GRU 5.24 against 5.55, LSTM [200, 128, 1024] 35.6 against 38.5;
/// `results/2026-11-30-h200-wgmma-backward/`). Stacks of 1024 train here where the chooser gives
/// them ours: eagerly (graphed, cuDNN's `Standard` keeps them; `choose.rs`'s `wgmma_leads`).
pub(crate) fn shape_wgmma_backward(hidden: usize, batch: usize) -> bool {
    hidden == WGMMA_BWD_HIDDEN && batch == WGMMA_BWD_BATCH && shape_wgmma_training(hidden, batch)
}

/// Shared memory of a wgmma backward block for `cell`, as `recurrence_wgmma_bwd.cu` lays it out:
/// the ring (a region of the exchange: one chunk of 128 samples by 128 gate rows a gate, which
/// the partial sums' slots take after the products), its mbarriers, each thread's stage (the
/// gate activations, what the cell saved and the state before, 8 units in f32; dy, 8
/// elements) and the samples' gradients by column (64 columns padded by 4, f32).
pub(super) fn wgmma_bwd_smem(cell: Cell) -> usize {
    let ring = cell.gates() * WGMMA_BWD_BATCH * 128 * 2;
    let saved = match cell {
        Cell::Lstm => 1,
        Cell::Gru => 2,
    };
    let stage = 32 * cell.gates() + 32 * saved + 32 + 16;
    let columns = (cell.gates() + usize::from(cell.splits())) * WGMMA_BWD_UNITS;
    ring + 64 + WARPS * 32 * stage + WGMMA_BWD_BATCH * (columns + 4) * 4
}

/// The wgmma forward's samples of a batch group (`recurrence_wgmma_fwd.cu`'s BATCH): wgmma's N.
/// A group of [`Plan::wgmma_subgroups`] of them runs on one set of blocks.
pub(super) const WGMMA_GROUP_SAMPLES: usize = 32;

/// The most subgroups of [`WGMMA_GROUP_SAMPLES`] a wgmma forward's block multiplies a step.
pub(super) const WGMMA_MOST_SUBGROUPS: usize = 2;

/// The wgmma forward's units a block: 128 gate rows of an LSTM, two of wgmma's M of 64.
pub(super) const WGMMA_UNITS: usize = 32;

/// The wgmma forward's units a block in its narrow form (`recurrence_wgmma_fwd.cu`'s WG_UNITS
/// 16): the block's 64 gate rows (an LSTM's; a GRU's 48, padded) all in registers, one wgmma a
/// k-step instead of two, on twice the blocks; one subgroup.
pub(super) const WGMMA_REGISTER_UNITS: usize = 16;

/// The units a wgmma forward's block takes ([`WGMMA_UNITS`] or [`WGMMA_REGISTER_UNITS`]) where
/// the tuning leaves it to the call and they fit (`Plan::wgmma_form_of`; not in the wavefront's
/// two subgroups): an inference forward's [`WGMMA_REGISTER_UNITS`], a training forward's
/// [`WGMMA_UNITS`]. Graphed inference forwards on 16-unit blocks took 0.83-0.94x of the rule's
/// kernels before (LSTM [30, 32, 1024] 3.33 against the layer-by-layer kernel's 3.83 µs an
/// example, [30, 64, 1024] 1.93 against the 32-unit blocks' 2.31, GRU [200, 128, 512] 3.96
/// against 4.62), but training with them 1.01-1.04x at batch 32 and 128 (LSTM [30, 128, 512] 2.13
/// against 2.08; `results/2026-12-01-h200-wgmma-16-units/`).
pub(crate) fn shape_wgmma_units(train: bool) -> usize {
    match train {
        true => WGMMA_UNITS,
        false => WGMMA_REGISTER_UNITS,
    }
}

/// The wgmma forward takes hidden sizes that are multiples of this: whole chunks of 128 columns
/// of h in each warpgroup's half of K.
pub(super) const WGMMA_HIDDEN_STEP: usize = 256;

/// The wgmma forward's most hidden units: its registers hold a block's first 64 gate rows, 128 a
/// thread at hidden 1024.
pub(super) const WGMMA_MOST_HIDDEN: usize = 1024;

/// Whether an inference forward in half precision runs on the wgmma kernel ([`Plan::wgmma`])
/// where the tuning leaves it to the shape, in whole groups: at hidden [`WGMMA_MOST_HIDDEN`] from
/// batch [`WGMMA_FROM_BATCH`], at hidden [`WGMMA_HALF_HIDDEN`] from batch
/// [`WGMMA_HALF_HIDDEN_FROM_BATCH`] to [`WGMMA_HALF_HIDDEN_BATCH`]. At hidden 1024 the layer-by-layer kernel is bound by the
/// exchange through L2 and cuDNN's `Standard` served: in the lab a whole step of the wgmma
/// forward took 4.6-4.7 µs at [128, 1024] against the kernel's 8.6-9.1 in two groups and
/// `Standard`'s 9.3-10.3 (`results/2026-11-30-h200-wgmma-hybrid/`). In the op, graphed forwards
/// at [*, 96-128, 1024] took 0.61-0.81x of `Standard`'s time, and LSTM [30, 64, 1024] 2.57
/// against the default's 2.98 µs an example; but LSTM [30, 32, 1024] 4.7 against the
/// layer-by-layer kernel's 3.8 (`results/2026-11-30-h200-wgmma-forward/`). With the gates
/// summed in registers, graphed forwards at batch 128 and hidden 512 took 0.84-0.93x of the
/// layer-by-layer kernels' time (the stacks layer by layer against their wavefront: LSTM
/// [30, 128, 3 x 512] 2.40 against 2.81, GRU [200, 128, 3 x 512] 13.9 against 16.3), but LSTM
/// [30, 64, 512] 1.52 against 1.39 (`results/2026-11-30-h200-wgmma-register-gates/`). On 16-unit
/// blocks ([`shape_wgmma_units`]) LSTM [30, 32, 1024] took 3.33 against the layer-by-layer
/// kernel's 3.83, GRU 3.20 against 3.39 (`results/2026-12-01-h200-wgmma-16-units/`): one group
/// from batch 32. At hidden 512 below batch 128 they took 0.78-0.93x of the layer-by-layer
/// kernels' time graphed (LSTM [200, 64, 512] 7.51 against 8.79 µs an example, [30, 96, 512]
/// 0.90 against 1.16, [30, 64, 3 x 512] 3.67 against 4.00; GRU [30, 96, 512] 0.87 against
/// 1.01), GRU [30, 64, 512] as long (1.21 against 1.20), eagerly alike
/// (`results/2026-12-01-h200-wgmma-train64/`); at batch 32, 1.04-1.24x (LSTM [30, 32, 512] 2.41
/// against 2.11): from batch 64.
pub(crate) fn shape_wgmma_forward(hidden: usize, batch: usize) -> bool {
    let batches = match hidden {
        WGMMA_MOST_HIDDEN => WGMMA_FROM_BATCH..=usize::MAX,
        WGMMA_HALF_HIDDEN => WGMMA_HALF_HIDDEN_FROM_BATCH..=WGMMA_HALF_HIDDEN_BATCH,
        _ => return false,
    };
    batches.contains(&batch) && batch % WGMMA_GROUP_SAMPLES == 0
}

/// See [`shape_wgmma_forward`]: one group (of 16-unit blocks) and more.
const WGMMA_FROM_BATCH: usize = 32;

/// See [`shape_wgmma_forward`]: two groups (of 16-unit blocks) and more at hidden
/// [`WGMMA_HALF_HIDDEN`].
const WGMMA_HALF_HIDDEN_FROM_BATCH: usize = 64;

/// Whether a training forward in half precision runs on the wgmma kernel (its saves and an f32
/// projection; at 512 the backward in its own batch groups, [`Plan::pass_groups`]) where the
/// tuning leaves it to the shape: at hidden [`WGMMA_HALF_HIDDEN`] and [`WGMMA_MOST_HIDDEN`] at
/// batch [`WGMMA_HALF_HIDDEN_BATCH`], and at [`WGMMA_MOST_HIDDEN`] at batch
/// [`WGMMA_TRAINING_HALF_BATCH`] too.
/// Graphed training at hidden 512 took 0.93-0.99x of the layer-by-layer forward's time (LSTM
/// [200, 128, 3 x 512] 37.9 against 40.8 µs an example, GRU [30, 128, 512] 1.97 against 1.99),
/// its whole batch in the backward's 8 groups; the backward in the forward's 4 groups instead
/// took 1.12-1.14x (`results/2026-11-30-h200-wgmma-train-forward/`). At hidden 1024 it took
/// 0.96-0.97x of cuDNN's `Standard` on one layer (LSTM [30, 128, 1024] 6.12 against 6.34, GRU
/// 5.60 against 5.76) but 1.04-1.22x on stacks of 3, which `Standard` runs with its layers
/// overlapped (GRU [200, 128, 3 x 1024] 104.6 against 85.8;
/// `results/2026-11-30-h200-wgmma-train-1024/`): graphed, the chooser gives those `Standard`.
/// Eagerly, where it gives stacks of 1024 ours, both wgmma kernels trained them in 0.69-0.72x of
/// the layer-by-layer kernels' time (LSTM [30, 128, 3 x 1024] 17.35 against 24.18 µs an example,
/// GRU [200, 128, 3 x 1024] 99.0 against 143.5; `results/2026-12-01-h200-stack-1024-profile/`,
/// "Stacks of 1024 on the wgmma kernels"). At batch 64 of 1024 (the backward layer by layer)
/// it took 0.93-0.94x of the layer-by-layer forward's time graphed and 0.88-0.99x eagerly, one
/// layer and 3 x 1024 (LSTM [30, 64, 3 x 1024] 19.38 against 20.93 µs an example;
/// `results/2026-12-01-h200-wgmma-16-units/`, "Training at batch 64 of 1024").
pub(crate) fn shape_wgmma_training(hidden: usize, batch: usize) -> bool {
    let batch_128 = batch == WGMMA_HALF_HIDDEN_BATCH
        && (hidden == WGMMA_HALF_HIDDEN || hidden == WGMMA_MOST_HIDDEN);
    batch_128 || (batch == WGMMA_TRAINING_HALF_BATCH && hidden == WGMMA_MOST_HIDDEN)
}

/// See [`shape_wgmma_training`]: the batch of two wgmma groups, measured at hidden 1024 only.
const WGMMA_TRAINING_HALF_BATCH: usize = 64;

/// See [`shape_wgmma_forward`].
const WGMMA_HALF_HIDDEN: usize = WGMMA_MOST_HIDDEN / 2;

/// Whether a forward of `layers` layers, training or inference, runs as the wgmma wavefront
/// (`recurrence_wgmma_wave.cu`: every layer at once in two subgroups a block, so that three layers
/// and the upper layers' projection blocks fit, [`Plan::wgmma_subgroups`] 2) where the tuning
/// leaves it to the shape and the wavefront fits (else one subgroup layer by layer, which is
/// faster than two). With the projections' input loaded by tensor copies, graphed inference
/// forwards at [*, 128, 3 x 512] took 0.73-0.85x of the time layer by layer, and training its
/// time through the wavefront's forward (`results/2026-12-01-h200-wgmma-wave/`, "Tensor copies").
pub(crate) fn shape_wgmma_wave(layers: usize, hidden: usize, batch: usize) -> bool {
    layers == WGMMA_WAVE_LAYERS && hidden == WGMMA_HALF_HIDDEN && batch == WGMMA_HALF_HIDDEN_BATCH
}

/// See [`shape_wgmma_wave`]: the stacks measured.
const WGMMA_WAVE_LAYERS: usize = 3;

/// See [`shape_wgmma_forward`]: the largest batch measured ahead at [`WGMMA_HALF_HIDDEN`] (past
/// 128 the layer-by-layer kernels were not measured against it); the one batch of the wgmma
/// training forward there ([`shape_wgmma_training`]) and of its wavefront ([`shape_wgmma_wave`]).
const WGMMA_HALF_HIDDEN_BATCH: usize = 128;

/// Shared memory of a wgmma forward block of `units` units for `cell` at `hidden`, as
/// `recurrence_wgmma_fwd.cu` lays it out: the gate rows past the registers' 64 (padded to 64
/// more; none with [`WGMMA_REGISTER_UNITS`]), the partial sums the two warpgroups hand each
/// other (16 a thread, 8 with two gate rows a thread), the ring of all of h_{t-1} (the group's)
/// and its mbarriers, and a step's input projection of the block's units, in half elements
/// (`half_projection`: rows padded by 8) or f32 (training's: by 4); the ring, mbarriers and
/// inputs once for each of `subgroups`.
pub(super) fn wgmma_smem(
    cell: Cell,
    hidden: usize,
    half_projection: bool,
    (subgroups, units): (usize, usize),
) -> usize {
    let group = WGMMA_GROUP_SAMPLES * subgroups;
    let narrow = units == WGMMA_REGISTER_UNITS;
    let tile = if narrow { 0 } else { 64 * hidden * 2 };
    let sums = 2 * if narrow { 8 } else { 16 } * 128 * 4;
    let ring = group * hidden * 2;
    let bars = subgroups * hidden / 128 * 8;
    let inputs = match half_projection {
        true => cell.gates() * group * (units + 8) * 2,
        false => cell.gates() * group * (units + 4) * 4,
    };
    tile + sums + ring + bars + inputs
}

/// Warps per block: each takes an eighth of the recurrent product's K dimension.
pub(super) const WARPS: usize = 8;

/// The samples of a chunk of the batch: both recurrences multiply a step's batch in chunks of
/// this many, one after another (`common.cuh`'s NB, NCH; more would need more accumulator
/// registers than a thread has). The measured rules (`choose.rs`) cover batches up to it.
pub(crate) const CHUNK_SAMPLES: usize = 32;

/// Batches up to this run on the kernels, inference and training, in chunks of [`CHUNK_SAMPLES`].
pub(crate) const MAX_KERNEL_BATCH: usize = 256;

/// The operands' element type on the kernels, and the tensor cores' products of it (f32
/// accumulation in each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Operands {
    Bf16,
    F16,
    /// f32 operands multiplied in TF32 (the precision of cuDNN's and cuBLAS's TF32 math): for
    /// modules built with `MathMode::Tf32`.
    Tf32,
}

impl Operands {
    /// The operands of `dtype`, if the kernels take it.
    pub fn of(dtype: DType) -> Option<Self> {
        match dtype {
            DType::BF16 => Some(Operands::Bf16),
            DType::F16 => Some(Operands::F16),
            DType::F32 => Some(Operands::Tf32),
            _ => None,
        }
    }

    /// 16-bit words per element: the kernels count the K columns of their tiles and exchange
    /// rows in them (`common.cuh`'s EW), so that a K step is 32 bytes in every type.
    pub fn words(self) -> usize {
        match self {
            Operands::Bf16 | Operands::F16 => 1,
            Operands::Tf32 => 2,
        }
    }

    /// The NVRTC define that selects the type (`common.cuh`'s elem).
    pub(super) fn define(self) -> &'static str {
        match self {
            Operands::Bf16 => "-DELEM_BF16=1",
            Operands::F16 => "-DELEM_BF16=0",
            Operands::Tf32 => "-DELEM_F32=1",
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Operands::Bf16 => "bf16",
            Operands::F16 => "f16",
            Operands::Tf32 => "tf32",
        }
    }
}

/// What a plan must fit on the device: its multiprocessors, the shared memory a block may take,
/// and its compute capability's major version.
#[derive(Clone, Copy)]
pub(super) struct Limits {
    pub sms: usize,
    pub smem: usize,
    major: usize,
}

impl Limits {
    /// The limits of `dev`, read from the driver once a device (a forward of a stack on wgmma
    /// asks on every call, [`super::wgmma_wave::WgmmaWave::new`]).
    pub(super) fn of(dev: &CudaDevice) -> std::result::Result<Limits, String> {
        static LIMITS: OnceLock<Mutex<HashMap<DeviceId, Limits>>> = OnceLock::new();
        let known = LIMITS.get_or_init(Default::default);
        if let Some(limits) = known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&dev.id())
        {
            return Ok(*limits);
        }
        let limits = Self::read(dev)?;
        known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dev.id(), limits);
        Ok(limits)
    }

    fn read(dev: &CudaDevice) -> std::result::Result<Limits, String> {
        let stream = dev.cuda_stream();
        let attr = |a| {
            stream
                .context()
                .attribute(a)
                .map(|v| v as usize)
                .map_err(|e| e.to_string())
        };
        Ok(Limits {
            sms: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            smem: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            major: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
        })
    }
}

/// One layer's kernel for one hidden size, batch and dtype, and how it runs on this GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Plan {
    /// The cell whose steps the kernels run.
    pub cell: Cell,
    pub hidden: usize,
    pub batch: usize,
    /// Hidden units per block in the forward and in the backward. The forward's are a multiple
    /// of [`UNIT_STEP`]; the backward's grow when its clusters would not all be resident
    /// at once otherwise.
    pub units: [usize; 2],
    pub elem: Operands,
    /// The backward's chunk buffers per warp: as many as shared memory holds, up to
    /// [`MAX_BUFFERS`] (each one more chunk of gate gradients in flight from L2).
    pub buffers: usize,
    /// Gate columns per chunk of the backward's product (`recurrence_bwd.cu`'s CH): see
    /// [`Tuning::chunk`].
    pub chunk: usize,
    /// Blocks per thread-block cluster (1: none) of the forward and of the backward, whose
    /// blocks split the recurrent product's K (`recurrence_fwd.cu`, `recurrence_bwd.cu`): as
    /// [`Tuning::clusters`] asks (by default [`shape_clusters`]), or smaller where those do not
    /// fit.
    pub clusters: [usize; 2],
    /// Each batch group's blocks (the whole grid of each pass, in one group) are one
    /// thread-block cluster whose hardware barrier serves each step (`common.cuh`'s
    /// ONE_CLUSTER; [`Tuning::one_cluster`], by default [`shape_one_cluster`] of a group's
    /// batch, in clusters of up to [`Tuning::one_cluster_blocks`]); `clusters` are then 1.
    pub one_cluster: bool,
    /// Blocks per thread-block cluster of the forward's multicast exchange (1: none): each
    /// block copies a share of h_{t-1} from L2 into the shared memory of every block of its
    /// cluster (`common.cuh`'s MCAST). [`Tuning::multicast`] asks, by default
    /// [`shape_multicast`]; taken only where the forward runs one layer without clusters of its
    /// own, fits in shared memory, and its clusters are all resident.
    pub multicast: usize,
    /// With `multicast`, whether its stage is a ring of two chunk slots (`recurrence_fwd.cu`'s
    /// MRING) instead of all of h_{t-1}: in half precision, where the batch takes three chunks
    /// or more, the stage of all of them does not fit, and the forward's weights are in
    /// registers (its tile's bytes then hold the ring; [`Plan::ring_applies`]). bf16 [30, 96-128, 1024] forwards took 0.90-0.94x of the time
    /// a step without multicast (`results/2026-11-29-h200-batch128-exchange/`).
    pub ring: bool,
    /// In a one-cluster plan ([`Plan::one_cluster`]), whether the forward and the backward
    /// push what a step exchanges into the shared memory of the blocks of the cluster
    /// (`recurrence_fwd.cu`'s and `recurrence_bwd.cu`'s PUSH: each step's h to every block; the
    /// parts of dh_{t-1} to the blocks of their units), where mbarriers count it in and no
    /// barrier separates the steps, instead of exchanging it through L2: [`Tuning::push`] asks,
    /// by default [`shape_one_cluster_pushes`].
    pub push: [bool; 2],
    /// The layer's input size where a pushed forward makes the input projection itself
    /// (`recurrence_fwd.cu`'s XIN: W_ih's rows in shared memory beside W_hh's, x_{t+1}
    /// multiplied by the warps without gate math during step t), instead of a GEMM before the
    /// launch: [`Tuning::fold`] asks, by default [`folds_input`], where the input size is a
    /// multiple of 8. 0: none.
    pub input: usize,
    /// Whether the forward's input projection (`recurrence_fwd.cu`'s `xg`) comes from the GEMM
    /// in the operands' half type instead of f32 (XG_HALF): an inference forward's in half
    /// precision, which nothing overwrites with the gate activations that training keeps in
    /// f32, where [`Tuning::half_projection`] asks (by default [`cell_half_projection`]). The
    /// pre-activations are rounded once more, as the outputs are at every step.
    pub half_projection: bool,
    /// Batch groups (1: none): the batch split into this many equal slices of
    /// [`Plan::group_batch`] samples, each an independent recurrence on its own
    /// [`Plan::blocks`] blocks (the launch's second grid dimension; `common.cuh`'s GROUPS),
    /// with its own copy of the weight tiles and its own grid barrier. Each block then takes in
    /// only its slice's h_{t-1} and gate gradients a step. [`Tuning::groups`] asks, by default
    /// [`shape_groups`]; taken where the groups divide the batch and all their blocks fit, one
    /// per multiprocessor.
    pub groups: usize,
    /// Whether a layer's weight-gradient GEMMs run on side streams ([`Tuning::side_streams`]:
    /// `None`, the default, leaves it to the products' sizes, `side::shape_side_streams`).
    pub side_streams: Option<bool>,
    /// Whether a backward that exchanges through L2 (not pushed) runs layer by layer with its
    /// weight tile filled from W_hh transposed ([`Plan::backward_transposed`], `recurrence_bwd.cu`'s
    /// WT_ROWS), which the training forward makes beside its recurrence on a side stream
    /// (`transposed`): [`Tuning::transposed`], by default [`shape_transposed`].
    pub transposed: bool,
    /// Whether a training forward writes that transpose itself (`recurrence_fwd.cu`'s WT_WRITE)
    /// instead of a side stream: where [`Plan::forward_may_transpose`] and
    /// [`Tuning::forward_transposes`] asks, by default where each block's share
    /// ([`Plan::transpose_share_bytes`]) is at most [`FORWARD_SHARE_MOST_BYTES`].
    pub forward_transposes: bool,
    /// Whether the forward runs on the wgmma kernel (`recurrence_wgmma_fwd.cu`, sm_90a): batch
    /// groups of [`WGMMA_GROUP_SAMPLES`], each on hidden / [`WGMMA_UNITS`] blocks whose first 64
    /// gate rows are in registers and the rest in shared memory (or on hidden /
    /// [`WGMMA_REGISTER_UNITS`] blocks, all their rows in registers: `units`,
    /// [`Tuning::wgmma_units`], by default [`shape_wgmma_units`]). [`Tuning::wgmma`] asks, by
    /// default [`shape_wgmma_forward`] (inference, the projection in half elements: `units`,
    /// `groups` and `half_projection` say the same, [`Plan::wgmma_forward`]) and
    /// [`shape_wgmma_training`] (training, an f32 projection and the saves; the backward keeps
    /// its own fields and groups, [`Plan::pass_groups`]); taken where it fits. The plain
    /// forward's other fields are unused.
    pub wgmma: bool,
    /// Whether a training plan's backward runs on the wgmma kernel (`recurrence_wgmma_bwd.cu`,
    /// sm_90a): the batch of [`WGMMA_BWD_BATCH`] as one group at hidden [`WGMMA_BWD_HIDDEN`], on
    /// hidden / [`WGMMA_BWD_UNITS`] blocks in clusters of [`WGMMA_BWD_CLUSTER`].
    /// [`Tuning::wgmma_backward`] asks, by default [`shape_wgmma_backward`]; taken where it fits
    /// ([`Plan::wgmma_bwd_fits`]). The backward's other fields stay the layer-by-layer
    /// backward's (its module serves the helpers).
    pub wgmma_backward: bool,
    /// Whether the wgmma backward sends its partial sums through distributed shared memory in
    /// bf16 (half the bytes; `recurrence_wgmma_bwd.cu`'s PARTIAL_BF16), as
    /// [`Tuning::bf16_partials`] asks.
    pub bf16_partials: bool,
    /// Subgroups of [`WGMMA_GROUP_SAMPLES`] a wgmma forward's block multiplies each step (1 or
    /// [`WGMMA_MOST_SUBGROUPS`]; `recurrence_wgmma_fwd.cu`'s SUB): its batch groups are that
    /// many times larger, on the same blocks a group, one exchange and barrier a step for
    /// all of them. [`Tuning::wgmma_subgroups`] asks (1 by default); taken where it fits. Alone
    /// it is slower (a step on 32 blocks took 1.38x the time of one on 64 at [128, 512],
    /// `results/2026-11-30-h200-wgmma-subgroups/`): it is the layers' share of a wavefront's
    /// multiprocessors to come.
    pub wgmma_subgroups: usize,
    /// Whether the forward takes f32 operands (TF32 math) as f16 ones, each row of W_hh and of h
    /// scaled by a power of two (`recurrence_fwd.cu`'s and `recurrence_wgmma_fwd.cu`'s
    /// F16_SCALED, `f16_scaled.cu`): TF32's 11 significant bits with f32's range, the tiles and
    /// the exchange in half the bytes, the products at half precision's rate; where W_hh fits on
    /// chip in f16 and not in f32 (hidden 1024), on the wgmma forward. Plans of f32 operands
    /// where [`Tuning::f16_scaled`] leaves it on: inference, and training's forward (its
    /// backward keeps TF32 products: the gate gradients have no bound that one scale could
    /// serve; its forward's saves are f32 either way). Such a plan's shared memory and
    /// exchange rows are the f16 layout's ([`Plan::kpad`]); its units follow the TF32 rules, its
    /// batch groups half precision's, its one-cluster sizes half precision's in inference and in
    /// a small step's training up to batch 32, else TF32's ([`one_cluster_operands`]).
    pub scaled: bool,
}

/// Batch groups of a call of `layers` of `hidden` units at `batch` in `elem` (`train`: a
/// training call), where the tuning leaves it to the shape; the planner takes fewer where they
/// do not divide the batch or fit ([`Plan::new`]). In one group a batch runs within each step
/// on every block, which takes in all of h_{t-1}; in groups each block takes only its group's.
/// A plan of f32 operands on scaled f16 ones (the default in TF32, [`Plan::scaled`]) asks with
/// f16 for `elem` ([`rules_operands`]); the TF32 counts below serve its TF32 products
/// (`CANDLE_RNN_PERSISTENT_F16_SCALED=0`). Graphed on an H100
/// (`results/2026-11-27-h100-groups-sanitize/`), the best was:
/// - up to hidden [`GROUPS_MAX_HIDDEN`], one group per [`GROUP_SAMPLES`] samples, up to
///   [`HALF_MAX_GROUPS`] ([`TF32_MAX_GROUPS`] in TF32, whose tiles are twice the size): bf16 GRU
///   [30, 32, 512] trained in 5.8 µs an example in 4 groups against 6.4 in one, LSTM
///   [30, 128, 512] in 2.5 in 8 against 2.8 in 4; batch 8 was faster in one; up to hidden
///   [`SMALL_GROUPS_MAX_HIDDEN`] from batch [`CHUNK_SAMPLES`], one per [`SMALL_GROUP_SAMPLES`]
///   (LSTM and GRU [30, 32, 128] 3.99-4.06 | 1.72-1.75 µs an example, training | forward, in 8
///   groups against 4.11-4.24 | 1.78-1.82 in 4, `results/2026-11-27-h100-groups-rule-check/`),
///   and in half precision from batch [`HALF_SMALL_GROUPS_FROM_BATCH`], where each group runs
///   in one cluster: bf16 training at hidden 128 took 0.79-0.85x of the previous rule's time at
///   batches 16 and 20 (LSTM [30, 20, 128] 5.0 against 5.9 µs an example in 5 groups against
///   2, [200, 20, 128] 26.2 against 31.4), 0.93-0.95x at 8 and 24
///   (`results/2026-11-27-h100-small-h-default/`). In half precision the groups take
///   [`GROUP_SAMPLES`] from batch [`HALF_FEWER_SMALL_GROUPS_FROM_BATCH`] (up to hidden
///   [`HALF_NARROW_MAX_HIDDEN`] from [`HALF_NARROW_FEWER_SMALL_GROUPS_FROM_BATCH`]): at batch 32
///   they then number 4 instead of 8, each in a cluster of up to 16 blocks
///   ([`shape_one_cluster`]).
///   bf16 graphed, training | forward, against groups of 4 (`results/2026-11-30-h200-phases/`):
///   [30, 32, 128] LSTM 2.08 | 0.89 against 2.23 | 1.00, GRU 2.08 | 0.90 against 2.31 | 1.04;
///   at hidden 64 batches 16-32 0.88-0.95x (GRU [30, 32, 64] 1.92 | 0.81 against
///   2.17 | 0.99); but at hidden 128 two groups of 8 took 1.02-1.04x four of 4 at batch 16, and
///   three 1.00-1.03x six at 24. In TF32 from batch
///   [`TF32_SMALL_GROUPS_FROM_BATCH`], since its one-cluster forward pushes h too: 4 groups
///   trained GRU and LSTM [30, 16-24, 128] in 0.56-0.96x of one group's time and [100, 16, 128]
///   in 0.63x (GRU [30, 16, 128] 5.25 | 2.33 µs an example, training | forward, against
///   7.38 | 3.37), [30, 16, 64] in 0.84-0.88x; at batch 8 two or four groups took 1.0-1.07x
///   (H200, `results/2026-11-29-h200-batch128-exchange/`); one half-precision layer past batch
///   [`HALF_MANY_GROUPS_PAST_BATCH`] in groups of [`GROUP_SAMPLES`], up to
///   [`HALF_MANY_GROUPS`]: at [30, 128, 128] 16 groups took 0.79-0.83x the time of 8 (LSTM
///   0.76 | 0.34 µs an example against 0.93 | 0.43, GRU 0.73 | 0.32 against 0.88 | 0.39, bf16
///   and f16), at [30, 128, 64] 0.94-0.96x; at batch 64 groups of 4 took 1.12-1.18x groups of
///   8 (the same results);
/// - past it, one per [`WIDE_GROUP_SAMPLES`], up to [`WIDE_MAX_GROUPS`], at batches up to
///   [`WIDE_GROUPS_MAX_BATCH`]: [30, 64, 1024] 0.73-0.77x of one group's time, but [30, 128,
///   1024] 1.05-1.09x;
/// - a stack in groups runs layer by layer (the wavefront takes one group): that led at batches
///   past [`CHUNK_SAMPLES`] ([30, 128, 3 x 512] trained in 8.1 against the wavefront's 14.0 and
///   cuDNN's 8.7), the wavefront at 32 and below (12.6 against 18.7 at [30, 32, 3 x 512]). A
///   stack deeper than [`SHALLOW_STACK_MAX_LAYERS`] up to hidden
///   [`DEEP_STACK_ONE_GROUP_MAX_HIDDEN`] runs in one group up to batch
///   [`DEEP_STACK_ONE_GROUP_MAX_BATCH`], and infers in one past it up to hidden
///   [`DEEP_STACK_INFERENCE_ONE_GROUP_MAX_HIDDEN`]: training | forward, µs an example, one group
///   against 8 (`results/2026-11-27-h100-deep-stacks/`), [30, 64, 3 x 256] 6.4 | 2.5 against
///   7.3-7.8 | 3.1-3.2, [30, 64, 4 x 256] 7.2 | 2.5-2.6 against 9.8-10.3 | 3.9-4.4, [30, 128,
///   3 x 128] forwards 1.3-1.4 against 1.5-1.6; but [30, 64, 3 x 512] 13.5-13.9 | 6.0-6.1
///   against 9.6-10.6 | 3.8-4.4, and [30, 128, 3 x 256] forwards 2.2-2.3 against 1.9.
///
/// A layer whose whole batch is a small one-cluster step ([`small_one_cluster_step`]) keeps one
/// group, unless
/// groups of [`SMALL_GROUP_SAMPLES`] apply (each then runs in a cluster of its own).
pub(super) fn shape_groups(
    (layers, hidden, batch): (usize, usize, usize),
    (elem, train): (Operands, bool),
) -> usize {
    let stacked = layers > 1;
    let deep = layers > SHALLOW_STACK_MAX_LAYERS;
    let narrow = hidden <= DEEP_STACK_ONE_GROUP_MAX_HIDDEN;
    let narrow_inference = !train && hidden <= DEEP_STACK_INFERENCE_ONE_GROUP_MAX_HIDDEN;
    let deep_wavefront =
        deep && narrow && (batch <= DEEP_STACK_ONE_GROUP_MAX_BATCH || narrow_inference);
    let wavefront = stacked && (batch <= CHUNK_SAMPLES || deep_wavefront);
    let half = elem != Operands::Tf32;
    let small_from = match half {
        true => HALF_SMALL_GROUPS_FROM_BATCH,
        false => TF32_SMALL_GROUPS_FROM_BATCH,
    };
    let small = hidden <= SMALL_GROUPS_MAX_HIDDEN && batch >= small_from;
    if wavefront || (small_one_cluster_step(layers, hidden, batch) && !small) {
        return 1;
    }
    let most = match half {
        true => HALF_MAX_GROUPS,
        false => TF32_MAX_GROUPS,
    };
    let half_fewer_groups = batch >= HALF_FEWER_SMALL_GROUPS_FROM_BATCH
        || (hidden <= HALF_NARROW_MAX_HIDDEN && batch >= HALF_NARROW_FEWER_SMALL_GROUPS_FROM_BATCH);
    let (samples, most) = match small {
        true if half && !stacked && batch > HALF_MANY_GROUPS_PAST_BATCH => {
            (GROUP_SAMPLES, HALF_MANY_GROUPS)
        }
        true if half && half_fewer_groups => (GROUP_SAMPLES, most),
        true => (SMALL_GROUP_SAMPLES, most),
        false => (GROUP_SAMPLES, most),
    };
    match hidden <= GROUPS_MAX_HIDDEN {
        true => (batch / samples).clamp(1, most),
        false if batch <= WIDE_GROUPS_MAX_BATCH => {
            (batch / WIDE_GROUP_SAMPLES).clamp(1, most.min(WIDE_MAX_GROUPS))
        }
        false => 1,
    }
}

/// The batch groups a plan starts from where the tuning leaves it to the shape: the most, up
/// to [`shape_groups`]'s, that divide the batch (the planner takes fewer where their blocks do
/// not fit); 1 for a dtype the kernels do not take.
pub(crate) fn batch_groups(
    (layers, hidden, batch): (usize, usize, usize),
    (dtype, train): (DType, bool),
) -> usize {
    match Operands::of(dtype) {
        Some(elem) => most_dividing(shape_groups((layers, hidden, batch), (elem, train)), batch),
        None => 1,
    }
}

/// The most groups, up to `groups`, that divide `batch` (1 at least).
fn most_dividing(groups: usize, batch: usize) -> usize {
    (1..=groups.min(batch.max(1)))
        .rev()
        .find(|g| batch % g == 0)
        .unwrap_or(1)
}

/// See [`shape_groups`]: the samples of a group up to hidden [`GROUPS_MAX_HIDDEN`].
const GROUP_SAMPLES: usize = 8;

/// See [`shape_groups`].
const SMALL_GROUPS_MAX_HIDDEN: usize = 128;

/// See [`shape_groups`]: the samples of a group up to hidden [`SMALL_GROUPS_MAX_HIDDEN`] from
/// batch [`TF32_SMALL_GROUPS_FROM_BATCH`] (in half precision from
/// [`HALF_SMALL_GROUPS_FROM_BATCH`]).
const SMALL_GROUP_SAMPLES: usize = 4;

/// See [`shape_groups`].
const HALF_SMALL_GROUPS_FROM_BATCH: usize = 8;

/// See [`shape_groups`].
const TF32_SMALL_GROUPS_FROM_BATCH: usize = 16;

/// See [`shape_groups`]: the most groups in half precision.
const HALF_MAX_GROUPS: usize = 8;

/// See [`shape_groups`]: from this batch, half precision's small groups take
/// [`GROUP_SAMPLES`] samples.
const HALF_FEWER_SMALL_GROUPS_FROM_BATCH: usize = 32;

/// See [`shape_groups`]: up to this hidden size, half precision's small groups take
/// [`GROUP_SAMPLES`] samples from batch [`HALF_NARROW_FEWER_SMALL_GROUPS_FROM_BATCH`].
const HALF_NARROW_MAX_HIDDEN: usize = 64;

/// See [`HALF_NARROW_MAX_HIDDEN`].
const HALF_NARROW_FEWER_SMALL_GROUPS_FROM_BATCH: usize = 16;

/// See [`shape_groups`].
const HALF_MANY_GROUPS_PAST_BATCH: usize = 64;

/// See [`shape_groups`]: at most the launch's [`super::launch::MAX_GROUPS`].
const HALF_MANY_GROUPS: usize = 16;
const _: () = assert!(HALF_MANY_GROUPS <= super::launch::MAX_GROUPS);

/// See [`shape_groups`]: the most groups in TF32.
const TF32_MAX_GROUPS: usize = 4;

/// See [`shape_groups`]: past this hidden size groups take [`WIDE_GROUP_SAMPLES`] samples each.
const GROUPS_MAX_HIDDEN: usize = 512;

/// See [`shape_groups`].
const WIDE_GROUP_SAMPLES: usize = 16;

/// See [`shape_groups`].
const WIDE_MAX_GROUPS: usize = 4;

/// See [`shape_groups`]: past hidden [`GROUPS_MAX_HIDDEN`], the largest batch that ran faster
/// in groups.
const WIDE_GROUPS_MAX_BATCH: usize = 64;

/// See [`shape_groups`]: the deepest stack that runs in groups from batch [`CHUNK_SAMPLES`]
/// whatever its hidden size.
const SHALLOW_STACK_MAX_LAYERS: usize = 2;

/// See [`shape_groups`].
const DEEP_STACK_ONE_GROUP_MAX_BATCH: usize = 64;

/// See [`shape_groups`]: the widest deep stack that runs in one group.
const DEEP_STACK_ONE_GROUP_MAX_HIDDEN: usize = 256;

/// See [`shape_groups`]: the widest deep stack that infers in one group past batch
/// [`DEEP_STACK_ONE_GROUP_MAX_BATCH`].
const DEEP_STACK_INFERENCE_ONE_GROUP_MAX_HIDDEN: usize = 128;

/// Whether a one-cluster plan's forward and backward at `hidden` push what a step exchanges
/// through distributed shared memory where they can ([`Plan::push`]: one chunk of the batch),
/// with no barrier between the steps. Forward: graphed bf16
/// forwards took 0.60-0.93x the time of the exchange through L2 behind the cluster's barrier
/// ([30, 8, 256] 6.84 µs an example against 8.18, [30, 32, 128] in 8 groups 1.03-1.19 against
/// 1.52-1.62; training 0.84-0.98x), `results/2026-11-27-h100-async-push/`. The barrier's
/// release, which waits for the stores before it, had taken a third of a small step
/// (`results/2026-11-27-h100-small-phases/`). Backward: each block pushes its parts of the
/// cluster's dh_{t-1}; graphed bf16 training took 0.72-0.94x the time of the backward through
/// L2 ([30, 32, 128] in 8 groups: LSTM 2.70 µs an example against 3.30, GRU 2.41 against 3.09;
/// [200, 32, 128] 0.72-0.74x; hidden 256 0.92-0.94x), the harness's launch at hidden 128 and
/// batch 4 37.6 µs against 64.0, bit-identical (`results/2026-11-27-h100-pushed-backward/`);
/// TF32 training 0.78-0.95x ([30, 32, 128] GRU 3.68 against 4.43). Pushing the gate gradients
/// themselves, twice the bytes, had been slower than the barrier. The TF32 forward pushed
/// (H200, `results/2026-11-29-h200-tf32-push/`): forwards 0.69-0.84x ([30, 32, 128] LSTM 1.40
/// against 1.85, GRU 1.28 against 1.70; [200, 32, 128] GRU 6.7 against 9.7; [30, 8, 256] LSTM
/// 8.2 against 9.8), training 0.81-0.93x. Past hidden [`PUSHED_BACKWARD_MOST_HIDDEN`] (512 in
/// 16 blocks of 32 units) the backward does not push: graphed bf16 training took 0.93-0.98x of
/// the pushed backward's time (GRU [30, 32, 512] 4.84 µs an example against 5.14, LSTM
/// [200, 32, 512] 31.6 against 32.3), where at hidden 384 (24 units) and 256 the pushed one
/// led by 7-19% (`results/2026-11-29-h200-cluster16/`, push-split).
pub(super) fn shape_one_cluster_pushes(hidden: usize) -> [bool; 2] {
    [true, hidden <= PUSHED_BACKWARD_MOST_HIDDEN]
}

/// See [`shape_one_cluster_pushes`].
const PUSHED_BACKWARD_MOST_HIDDEN: usize = 384;

/// Whether a pushed forward of `cell` with blocks of `units` units at `group_batch` samples
/// makes its input projection (of `input` columns) itself ([`Plan::input`]) where the tuning
/// leaves it to the shape: where some of its warps do no gate math (`recurrence_fwd.cu`'s
/// ITEM_WARPS < NWARPS), they make the next step's input products while the others do the
/// step's gate math, up to [`FOLD_MOST_PRODUCTS`] tensor-core tiles' products each a step.
/// In the lab (`results/2026-11-29-h200-folded-input/`), a launch's time against the GEMM's
/// kernel alone: LSTM hidden 128 at 4 and 8 samples 0.90-0.97x (8 products a warp, 6 and 4 free
/// warps); at 256 and 4 samples 1.25x (32 a warp); where every warp has gate math, the products
/// wait behind the step's pushes: 1.08-1.12x at hidden 128 and 16 samples, 1.35x at 256 and 8.
/// Through the op, graphed f16 at hidden 128 and 4-8 samples a group, the GEMM saved too:
/// forwards 0.89-0.90x (LSTM) and 0.96-0.99x (GRU, whose n gate's input products the gate math
/// sums apart), training 0.95-0.96x and 0.99-1.01x.
pub(super) fn folds_input(cell: Cell, units: usize, group_batch: usize, input: usize) -> bool {
    // One (unit, sample) pair a thread, while they fit: the warps with gate math.
    let busy = (units * group_batch.min(CHUNK_SAMPLES)).div_ceil(32);
    if busy >= WARPS {
        return false;
    }
    let tiles = (cell.gates() * units).div_ceil(16);
    let k_steps = input.div_ceil(16).div_ceil(WARPS - busy);
    tiles * k_steps <= FOLD_MOST_PRODUCTS
}

/// See [`folds_input`].
const FOLD_MOST_PRODUCTS: usize = 8;

/// Past this many chunk buffers per warp the backward's loads no longer wait on L2.
pub(super) const MAX_BUFFERS: usize = 8;

/// Shared memory that more chunk buffers leave to L1 (which shares the multiprocessor's 256 KB
/// with it): a third buffer that took PTB large's backward from 208.6 to 226.5 KB ran slower
/// than two (`results/2026-11-24-h100-trials/`).
pub(super) const L1_RESERVE: usize = 16 * 1024;

/// Shared memory of a forward block of `units` units whose input rows are `steps` K steps long,
/// in clusters of `cluster` blocks, as `recurrence_fwd.cu`'s `FwdTile` lays it out: the weight tile
/// (the cluster's gate rows, the block's columns), the block's partial sums (with clusters),
/// each K group's stage of its input rows (or its sums), and with `multicast` clusters
/// ([`Plan::multicast`]) the stage of all of h_{t-1} and its chunks' mbarriers (with `ring`,
/// [`Plan::ring`], two chunks' and their mbarriers, in the tile's place, and the K groups'
/// regions hold only their sums), or with `push` ([`Plan::push`]) two stages of all of h; where the input projection is folded in ([`Plan::input`]:
/// `folded`, the input size and whether the cell splits a gate), the W_ih tile and two stages of
/// x_t, and a split gate's input products in each row of sums.
pub(super) fn forward_smem(
    (units, steps): (usize, usize),
    (cluster, multicast, ring, push): (usize, usize, bool, bool),
    (batch, gates): (usize, usize),
    folded: Option<(usize, bool)>,
) -> usize {
    // The input rows' columns, whole K steps.
    let kpad = steps * 16;
    // A stage (and the cluster's parts) holds one chunk of the batch.
    let chunk_batch = batch.min(CHUNK_SAMPLES);
    let npad = chunk_batch.div_ceil(8) * 8;
    // The gate rows, in whole 16-row tiles.
    let rows = (gates * units * cluster).div_ceil(16) * 16;
    let steps = steps.div_ceil(cluster);
    let row_groups = match (cluster, rows / 16) {
        (1, _) => 1,
        (_, mt) if mt >= 4 => 4,
        (_, mt) if mt >= 2 => 2,
        _ => 1,
    };
    let k_groups = WARPS / row_groups;
    let kw = steps.div_ceil(k_groups) * 16;
    let stage = npad * (kw + 8) * 2;
    let split_inputs = match folded {
        Some((_, true)) => units,
        _ => 0,
    };
    let sums = npad * (rows + split_inputs + 4) * 4;
    // The W_ih tile and x's two stages, rows of whole K steps.
    let x_pitch = folded.map_or(0, |(input, _)| input.div_ceil(16) * 16 + 8);
    let folded_bytes = (rows + 2 * npad) * x_pitch * 2;
    let part = match cluster {
        1 => 0,
        _ => (chunk_batch * (rows + 4) * 4).next_multiple_of(16),
    };
    // With several chunks, two stages taken in turn (the next chunk's h lands in one while the
    // other is multiplied).
    let stages = if batch > CHUNK_SAMPLES { 2 } else { 1 };
    // The multicast's stage: every chunk's rows, padded to whole tensor-core tiles, of all
    // the columns.
    let chunks = batch.div_ceil(CHUNK_SAMPLES);
    let slots = if ring { 2 } else { chunks };
    let stage_of_all = chunks * npad * (kpad + 8) * 2;
    let whole = match (multicast, push) {
        (1, false) => 0,
        (1, true) => 2 * stage_of_all + 16,
        _ => slots * npad * (kpad + 8) * 2 + (slots * 8).next_multiple_of(16),
    };
    let tile = rows * (steps * 16 + 8) * 2;
    let group = match ring {
        true => sums,
        false => stage.max(sums),
    };
    let (head, behind) = match ring {
        true => (tile.max(whole), 0),
        false => (tile, whole),
    };
    head + part + stages * k_groups * group.next_multiple_of(16) + behind + folded_bytes
}

/// Shared memory of a pushed backward block ([`Plan::push`]) of `units` units of a layer of
/// `hidden` at `batch` with elements of `words` 16-bit words, as `recurrence_bwd.cu`'s `BwdTile`
/// lays it out: the tile of the block's gate columns' rows of W_hh (every unit of the cluster,
/// whole 16-row tiles, by whole K steps), the step's gate gradients (whole 8-sample tiles, two
/// buffers), two stages of every block's f32 parts of the block's units (samples in pairs) or
/// the bias gradient's slots where larger, and the stages' mbarriers.
pub(super) fn pushed_backward_smem(
    units: usize,
    (hidden, batch): (usize, usize),
    (cell, words): (Cell, usize),
) -> usize {
    let blocks = hidden.div_ceil(units);
    let rows = (blocks * units).next_multiple_of(16);
    let pitch = (cell.gates() * units * words).next_multiple_of(16) + 8;
    let npad = batch.next_multiple_of(8);
    let stages = 2 * blocks * units * batch.next_multiple_of(2) * 4;
    let slots = batch * cell.wave_groups() * units * 4;
    (rows + 2 * npad) * pitch * 2 + stages.max(slots) + 16
}

/// Units per block of a layer of `hidden` units of `cell` at `batch` on `sms` multiprocessors:
/// the fewest multiple of [`UNIT_STEP`] that puts every unit on a block at one block per
/// multiprocessor, and at least [`FEWEST_UNITS`] where the batch is one chunk; or more where
/// the blocks then keep the same number of 16-row tiles (fewer blocks for the same work per
/// block: a GRU at hidden 1500 took 65.5 µs an example with 16 units, 66.5 with 12, both 3
/// tiles; `results/2026-11-25-h100-gru-units/`). An LSTM's tiles grow with every 4 units.
pub(super) fn block_units(cell: Cell, hidden: usize, batch: usize, sms: usize) -> usize {
    let fewest = match batch <= CHUNK_SAMPLES {
        true => FEWEST_UNITS,
        false => UNIT_STEP,
    };
    let least = hidden
        .div_ceil(sms.max(1))
        .next_multiple_of(UNIT_STEP)
        .max(fewest);
    let tiles = |units: usize| (cell.gates() * units).div_ceil(16);
    (least..)
        .step_by(UNIT_STEP)
        .take_while(|&units| tiles(units) == tiles(least))
        .last()
        .unwrap_or(least)
}

/// See [`block_units`]: the fewest units per block of a batch of one chunk. Every block reads
/// all of h_{t-1} (the backward: all of a step's gate gradients) from L2 at every step; at
/// hidden 512 and batch 32, 64 blocks of 8 units trained 4-13% faster than 128 of 4 (LSTM and
/// GRU, seq 30 and 200; the forward 5-15%), at 256 4-5% faster, at 128 within 2%;
/// `results/2026-11-26-h100-block-units/`. Batches of several chunks, whose copies overlap the
/// products of the chunk before, kept 4 (LSTM [30, 128, 512] 6.30 against 6.41 µs an example).
pub(super) const FEWEST_UNITS: usize = 8;

/// Blocks per cluster of the forward's multicast exchange ([`Plan::multicast`]) of a forward of
/// `blocks` blocks (a batch group's, of `groups`), where the tuning leaves it to the shape: none
/// below [`MULTICAST_FROM`] blocks, else the largest of 8, 4 and 2 that divides them (the
/// planner halves it where its clusters are not all resident). Each step's copies of h_{t-1}
/// out of L2 grow with the blocks that read it: forwards of 64 blocks (hidden 512) ran fastest
/// in clusters of 8, of 128 (hidden 1024, where only clusters of 2 are all resident) in
/// clusters of 2, and of 32 (hidden 256, one group) no faster in any;
/// `results/2026-11-27-h100-multicast/`. In batch groups, from [`GROUPED_MULTICAST_FROM`]
/// blocks a group, clusters of 2: hidden 512 at 8 samples a group (4 groups of 32 blocks at
/// batch 32) ran GRU forwards 0.89-0.97x and LSTM training 0.93-0.97x the time without
/// (`results/2026-11-29-h200-forward-2x/`); groups of 16 blocks ([30, 64, 512]) were slower.
pub(super) fn shape_multicast(blocks: usize, groups: usize) -> usize {
    match blocks {
        b if b >= MULTICAST_FROM => [8, 4, 2].into_iter().find(|m| b % m == 0).unwrap_or(1),
        b if groups > 1 && b >= GROUPED_MULTICAST_FROM && b % 2 == 0 => 2,
        _ => 1,
    }
}

/// See [`shape_multicast`].
const MULTICAST_FROM: usize = 64;

/// See [`shape_multicast`]: a batch group's fewest blocks for clusters of 2.
const GROUPED_MULTICAST_FROM: usize = 32;

/// Whether a layer-by-layer backward that is not pushed fills its tile from W_hh transposed
/// ([`Plan::transposed`]) where the tuning leaves it to the planner: in half precision, where a
/// layer's W_hh (`gh` x `hidden` elements of `elem`) takes at most [`TRANSPOSED_MOST_BYTES`].
/// There the backward's launch saves more than the forward's side stream costs: graphed bf16
/// training took 0.97-0.99x the time (LSTM [30, 128, 512] 2.20 against 2.26 µs an example, [30,
/// 32, 512] 5.24 against 5.34, GRU [30, 128, 512] 1.99 against 2.02, LSTM [30, 128, 3 x 512] 6.63
/// against 6.69); at hidden 1024 and 1500, whose transposes move 8 and 18 MB a layer beside the
/// forward, 1.01x (LSTM [30, 32, 1024] 9.27 against 9.18, [35, 20, 2 x 1500] 52.4 against 52.0);
/// in TF32, whose tile is filled through registers either way, 0.99-1.01x
/// (`results/2026-11-30-h200-fill-rows/`).
pub(super) fn shape_transposed(elem: Operands, (gh, hidden): (usize, usize)) -> bool {
    elem != Operands::Tf32 && gh * hidden * 2 <= TRANSPOSED_MOST_BYTES
}

/// See [`shape_transposed`]: an LSTM's W_hh at hidden 512 in half elements.
const TRANSPOSED_MOST_BYTES: usize = 2 << 20;

/// The most bytes of W_hh transposed that each block of a pushed training forward writes in its
/// prologue ([`Plan::transpose_share_bytes`]) where the tuning leaves [`Plan::forward_transposes`]
/// to the planner. At 32 KiB (an LSTM at hidden 512 in 4 batch groups of 16 blocks; a GRU's 24)
/// graphed bf16 and f16 training took 0.91-0.97x the time of the side stream's transpose (LSTM
/// [30, 32, 512] 5.10 against 5.26 µs an example, GRU 4.56 against 4.77, LSTM [200, 32, 512] 28.4
/// against 31.1); at 128 KiB (one group, [30, 8, 512]) 1.02x (19.7 against 19.2),
/// `results/2026-11-30-h200-forward-transposes/`.
pub(super) const FORWARD_SHARE_MOST_BYTES: usize = 32 << 10;

/// Whether an inference forward of `cell` in half precision takes its input projection in half
/// elements ([`Plan::half_projection`]) where the tuning leaves it to the planner: a GRU's. Its
/// GEMM writes half the bytes (11.0 against 12.3 µs at [30, 32, 1024],
/// `results/2026-11-29-h200-gru-forward/logs/gemm.log`): GRU forwards took 0.98-0.99x of their
/// time with it in f32 ([30, 32, 512 | 1024], [35, 20, 2 x 1500]); LSTM forwards as long at
/// [30, 32, 1024] and 1.035x at [35, 20, 2 x 1500] (not found why: neither kernel spills),
/// `results/2026-11-29-h200-forward-2x/`.
pub(super) fn cell_half_projection(cell: Cell) -> bool {
    cell == Cell::Gru
}

/// Blocks per cluster of the forward and of the backward for a layer of `hidden` units of
/// `cell` at `batch`, where the tuning leaves it to the shape. The forward runs without: its
/// per-step input, h, is small, and clusters of 2 or 4 were slower on every shape measured. The
/// backward reads each step's gate gradients, `batch * GATES * hidden` 2-byte elements, from
/// L2; a cluster of k blocks reads a k-th each, at the cost of a distributed-shared-memory
/// exchange and a cluster barrier per step: none below [`UNCLUSTERED_BELOW`] a step (hidden
/// 128-256 at batch 32, a GRU at 650 and batch 20) or up to hidden [`UNCLUSTERED_UP_TO`] at a
/// batch of one chunk (its blocks of 8 units, [`FEWEST_UNITS`], half as many as before: 3-6%
/// faster training at [30, 32, 512] than in pairs, `results/2026-11-26-h100-block-units/`),
/// else 2 (hidden 512-1024, 4-8% faster than 4), and 4 past hidden [`WIDE`] (PTB large's LSTM,
/// where 2 and 4 are within half a percent and 4 keeps its results).
/// `results/2026-11-25-h100-clusters/`. A layer past hidden [`GROUPS_MAX_HIDDEN`] in batch
/// groups (`grouped`; `batch` a group's) runs its backward without: [30, 32, 1024] in 2 groups
/// trained in 0.95-0.97x of the time in clusters of 2 (LSTM 9.68 µs an example against 9.95,
/// GRU 8.54 against 8.98, `results/2026-11-27-h100-groups-rule-check/`; as the default, 0.95-0.97x,
/// `results/2026-11-27-h100-small-groups/`), [30, 64, 1024] in 4 in the same time.
pub(super) fn shape_clusters(
    cell: Cell,
    hidden: usize,
    (batch, grouped): (usize, bool),
) -> [usize; 2] {
    let step_bytes = batch * cell.gates() * hidden * 2;
    let one_chunk = batch <= CHUNK_SAMPLES;
    let backward = match (step_bytes, hidden) {
        (b, _) if b < UNCLUSTERED_BELOW => 1,
        (_, h) if grouped && h > GROUPS_MAX_HIDDEN => 1,
        (_, h) if one_chunk && h <= UNCLUSTERED_UP_TO => 1,
        (_, h) if h > WIDE => 4,
        _ => 2,
    };
    [1, backward]
}

/// See [`shape_clusters`]: a backward step's gate gradients in bytes below which its blocks
/// run without clusters.
const UNCLUSTERED_BELOW: usize = 96 << 10;

/// See [`shape_clusters`]: hidden sizes up to this run the backward of a one-chunk batch
/// without clusters.
const UNCLUSTERED_UP_TO: usize = 512;

/// See [`shape_clusters`]: hidden sizes past this run the backward in clusters of 4.
const WIDE: usize = 1024;

/// The operands whose rules size a plan's batch groups or one-cluster blocks ([`shape_groups`],
/// [`shape_one_cluster`]): f16's where `as_f16` (a scaled plan, [`Plan::scaled`], whose tiles and
/// exchange are f16's: its groups in inference and training, its one-cluster sizes in
/// inference and in some training, [`one_cluster_operands`]; a training plan's backward keeps
/// f32 tiles), else the operands' own. Graphed, on
/// half precision's groups, TF32 forwards at [30, 64-128, 128] took 0.65-0.85x the time
/// (`results/2026-12-01-h200-tf32-scaled-half-rules/`) and TF32 training at [30, 48-128,
/// 128-256] 0.56-0.86x, at hidden 512 0.95-1.0x (`results/2026-12-01-h200-tf32-scaled-rules/`).
fn rules_operands(elem: Operands, as_f16: bool) -> Operands {
    match as_f16 {
        true => Operands::F16,
        false => elem,
    }
}

/// The operands whose rule sizes the clusters of a one-cluster plan of `step` ((layers, hidden,
/// group batch), [`shape_one_cluster`]): as [`rules_operands`] for a `scaled` plan's inference,
/// and for its training where the step is small ([`small_one_cluster_step`]) and the batch one
/// chunk ([`CHUNK_SAMPLES`]), whose backward's f32 tiles then fit in clusters of 16 too: graphed
/// TF32 training at [30, 32, 128] took 0.88x (LSTM, 2.35 against 2.68 µs an example) and 0.93x
/// (GRU) the time of TF32's clusters of 8; at batch 64 1.0-1.05x
/// (`results/2026-12-01-h200-tf32-scaled-rules/logs/last/probe.log`). Wider steps keep TF32's
/// rule in training (the grid barrier).
fn one_cluster_operands(
    elem: Operands,
    scaled: bool,
    (train, batch): (bool, usize),
    (layers, hidden, group_batch): (usize, usize, usize),
) -> Operands {
    let small_chunk = batch <= CHUNK_SAMPLES && small_one_cluster_step(layers, hidden, group_batch);
    rules_operands(elem, scaled && (!train || small_chunk))
}

/// The cluster sizes, largest first, that a one-cluster plan ([`Plan::one_cluster`]) of each
/// batch group of `group_batch` samples of a layer of `hidden` units in `elem`, of a stack of
/// `layers`, tries where the tuning leaves it to the shape (the planner takes the first whose
/// clusters all fit at once); none: the grid barrier.
///
/// Where a group's step is small ([`small_one_cluster_step`]), the cluster's barrier (and in
/// half precision the forward's pushed h, without a barrier) saves more than its fewer blocks
/// cost. One group: training 5-22% faster, LSTM and GRU, batches 1-32, hidden 64-256; at
/// 128 x 32 and 256 x 16 the grid barrier's blocks won by 8-11%
/// (`results/2026-11-25-h200-cluster-rule/`, `results/2026-11-25-h100-one-cluster/`). Batch
/// groups, graphed bf16, training | forward against the grid barrier's groups
/// (`results/2026-11-27-h100-async-push/`): [30, 32, 128] (8 groups of 4) 0.78-0.80x |
/// 0.60-0.68x, [30, 128, 128] (8 of 16) 0.86-0.90x | 0.78-0.85x, [30, 64, 256] (8 of 8)
/// 0.93-0.94x | 0.83-0.84x, [200, 32, 128] 0.72-0.74x | 0.51-0.57x. A stack keeps its
/// wavefront, one barrier per wave step for all its layers; groups of several chunks were not
/// measured in one cluster.
///
/// In half precision such a cluster takes 16 blocks ([`MOST_CLUSTER_BLOCKS`], half the units
/// each) where every group's fits, else 8: graphed, against 8 blocks, training 0.81-0.99x and
/// forwards 0.89-1.02x at [30, 1-16, 128-256], [30, 16, 200] and [200, 16, 128], LSTM and GRU,
/// bf16 and f16 (`results/2026-11-29-h200-cluster16/`, small). Past a small step, up to
/// [`WIDE_ONE_CLUSTER_MOST_WORK`] (hidden 512 at 8 samples), it runs in 16 blocks only (8 do
/// not hold hidden 512's weights): against the grid barrier's groups at batch 32, graphed
/// training | forward, hidden 384 0.79-0.87x | 0.81-0.85x, hidden 512 GRU 0.90-1.00x |
/// 0.85-0.86x and LSTM forwards 0.92-0.94x (same folder, wider and speed). At hidden 512 the
/// backward does not push ([`shape_one_cluster_pushes`]): LSTM training then 0.94-1.00x
/// (pushed, 1.06x at seq 30; push-split), and through `loss.backward()` GRU training 0.89-0.94x,
/// LSTM 0.94-1.00x (rule2).
pub(super) fn shape_one_cluster(
    elem: Operands,
    (layers, hidden, group_batch): (usize, usize, usize),
) -> &'static [usize] {
    let half = elem != Operands::Tf32;
    let step = |most_work| one_cluster_step(most_work, (layers, hidden, group_batch));
    match (
        half,
        step(ONE_CLUSTER_MOST_WORK),
        step(WIDE_ONE_CLUSTER_MOST_WORK),
    ) {
        (true, true, _) => &ONE_CLUSTER_SIZES,
        (false, true, _) => &ONE_CLUSTER_SIZES[1..],
        (true, false, true) => &ONE_CLUSTER_SIZES[..1],
        _ => &[],
    }
}

/// The cluster sizes a one-cluster plan tries, largest first: 16 blocks, then the portable 8.
const ONE_CLUSTER_SIZES: [usize; 2] = [MOST_CLUSTER_BLOCKS, PORTABLE_CLUSTER_BLOCKS];

/// Whether a group's step is small enough for one cluster of either size
/// ([`shape_one_cluster`]): [`one_cluster_step`] up to [`ONE_CLUSTER_MOST_WORK`] (hidden 64 at
/// 32 samples, 128 at 16, 256 at 8).
fn small_one_cluster_step(layers: usize, hidden: usize, group_batch: usize) -> bool {
    one_cluster_step(ONE_CLUSTER_MOST_WORK, (layers, hidden, group_batch))
}

/// Whether a group's step is one layer's, of one chunk, whose group_batch x hidden is at most
/// `most_work`.
fn one_cluster_step(
    most_work: usize,
    (layers, hidden, group_batch): (usize, usize, usize),
) -> bool {
    layers == 1 && group_batch <= CHUNK_SAMPLES && group_batch * hidden <= most_work
}

/// See [`small_one_cluster_step`].
const ONE_CLUSTER_MOST_WORK: usize = 2048;

/// See [`shape_one_cluster`]: in 16 blocks.
const WIDE_ONE_CLUSTER_MOST_WORK: usize = 4096;

#[cfg(test)]
impl Plan {
    /// A plan for the planner's and the chooser's unit tests: bf16, 8 units a block, no
    /// clusters, multicast or batch groups (what a test varies it sets itself).
    pub(crate) fn example(cell: Cell, hidden: usize, batch: usize) -> Plan {
        Plan {
            cell,
            hidden,
            batch,
            units: [8; 2],
            elem: Operands::Bf16,
            buffers: 2,
            chunk: 64,
            clusters: [1, 1],
            one_cluster: false,
            multicast: 1,
            ring: false,
            push: [false; 2],
            input: 0,
            half_projection: false,
            groups: 1,
            side_streams: None,
            transposed: true,
            forward_transposes: false,
            wgmma: false,
            wgmma_backward: false,
            bf16_partials: false,
            wgmma_subgroups: 1,
            scaled: false,
        }
    }
}

impl Plan {
    /// The plan for `cell` at `(hidden, batch, dtype)` on `dev` (with room for the backward
    /// when `train`), tuned by `tuning`, or why there is none: a dtype or batch the kernels do
    /// not take (the chooser's rules keep those from asking; a plan stays valid whoever asks),
    /// an odd hidden size, or blocks that do not fit in shared memory.
    pub fn new(
        dev: &CudaDevice,
        (cell, hidden, batch, dtype): (Cell, usize, usize, DType),
        (train, layers, input): (bool, usize, usize),
        tuning: &Tuning,
    ) -> std::result::Result<Plan, String> {
        let elem = match Operands::of(dtype) {
            Some(elem) => elem,
            None => return Err(format!("takes bf16, f16 or f32, not {dtype:?}")),
        };
        if hidden % 2 != 0 {
            return Err(format!("needs an even hidden size, not {hidden}"));
        }
        if batch > MAX_KERNEL_BATCH {
            return Err(format!(
                "takes batches up to {MAX_KERNEL_BATCH}, not {batch}"
            ));
        }
        let limits = Limits::of(dev)?;
        let wgmma_asked = tuning
            .wgmma
            .unwrap_or_else(|| shape_wgmma_forward(hidden, batch));
        // (f32 operands take the wgmma forward only as scaled f16 ones: [`Plan::scaled`].)
        let scaled = elem == Operands::Tf32 && tuning.f16_scaled;
        let wgmma_takes = elem != Operands::Tf32 || scaled;
        if !train && wgmma_asked && wgmma_takes {
            let shape = (cell, hidden, batch, elem);
            if let Some(plan) = Self::wgmma_forward(limits, shape, (tuning, layers)) {
                return Ok(plan);
            }
        }
        // The most batch groups asked for (or by the rule) that divide the batch; their blocks'
        // fit is checked below, with fewer groups while they do not.
        let rule_elem = rules_operands(elem, scaled);
        let asked_groups = tuning
            .groups
            .unwrap_or_else(|| shape_groups((layers, hidden, batch), (rule_elem, train)));
        let mut groups = most_dividing(asked_groups, batch);
        loop {
            match Self::grouped(
                (dev, limits),
                (cell, hidden, batch, elem),
                (train, layers, input),
                tuning,
                groups,
            ) {
                Ok(plan) => {
                    let forward_transposes = train
                        && plan.forward_may_transpose()
                        && tuning.forward_transposes.unwrap_or_else(|| {
                            plan.transpose_share_bytes() <= FORWARD_SHARE_MOST_BYTES
                        });
                    let plan = Plan {
                        forward_transposes,
                        ..plan
                    };
                    let wgmma_training = tuning
                        .wgmma
                        .unwrap_or_else(|| shape_wgmma_training(hidden, batch));
                    let plan = match train && wgmma_training {
                        true => Self::with_wgmma_training_forward(limits, plan, (tuning, layers)),
                        false => plan,
                    };
                    let wgmma_backward = tuning
                        .wgmma_backward
                        .unwrap_or_else(|| shape_wgmma_backward(hidden, batch));
                    return Ok(match train && wgmma_backward {
                        true => Self::with_wgmma_backward(limits, plan, tuning),
                        false => plan,
                    });
                }
                Err(e) if groups == 1 => return Err(e),
                Err(_) => groups = most_dividing(groups - 1, batch),
            }
        }
    }

    /// Whether the wgmma forward fits `(cell, hidden, batch, elem)` on a device of `limits`,
    /// its projection in half elements or f32 (`half_projection`), in `subgroups` subgroups of
    /// blocks of `units` units: sm_90, half elements (or f32 ones as scaled f16 operands, with an
    /// f32 projection: [`Plan::scaled`]), hidden a multiple of
    /// [`WGMMA_HIDDEN_STEP`] up to [`WGMMA_MOST_HIDDEN`], [`WGMMA_UNITS`] (or
    /// [`WGMMA_REGISTER_UNITS`] in one subgroup), the batch whole groups of
    /// [`WGMMA_GROUP_SAMPLES`] whose blocks are all resident, one per multiprocessor.
    fn wgmma_fits(
        Limits { sms, smem, major }: Limits,
        (cell, hidden, batch, elem): (Cell, usize, usize, Operands),
        (half_projection, subgroups, units): (bool, usize, usize),
    ) -> bool {
        let group = WGMMA_GROUP_SAMPLES * subgroups;
        let groups = batch / group;
        let form = units == WGMMA_UNITS || (units == WGMMA_REGISTER_UNITS && subgroups == 1);
        major >= 9
            && (elem != Operands::Tf32 || !half_projection)
            && hidden % WGMMA_HIDDEN_STEP == 0
            && hidden <= WGMMA_MOST_HIDDEN
            && form
            && (1..=WGMMA_MOST_SUBGROUPS).contains(&subgroups)
            && batch % group == 0
            && (1..=MAX_GROUPS).contains(&groups)
            && groups * hidden / units <= sms
            && wgmma_smem(cell, hidden, half_projection, (subgroups, units)) <= smem
    }

    /// The subgroups and units a block a wgmma forward of `shape` takes
    /// ([`Plan::wgmma_subgroups`], [`Plan::units`]), a training forward's (`train`) or an
    /// inference forward's (its projection in half elements, f32 for f32 operands): in the
    /// `asked` subgroups the units of `tuning` (else
    /// [`shape_wgmma_units`]) where they fit, else [`WGMMA_UNITS`]; then likewise in one
    /// subgroup; `None` where no wgmma forward fits. (Two subgroups, the wavefront's, thus keep
    /// 32 units.)
    fn wgmma_form_of(
        limits: Limits,
        shape: (Cell, usize, usize, Operands),
        (train, tuning): (bool, &Tuning),
        asked: usize,
    ) -> Option<(usize, usize)> {
        let units = tuning
            .wgmma_units
            .unwrap_or_else(|| shape_wgmma_units(train));
        let half_projection = !train && shape.3 != Operands::Tf32;
        [
            (asked, units),
            (asked, WGMMA_UNITS),
            (1, units),
            (1, WGMMA_UNITS),
        ]
        .into_iter()
        .find(|&(sub, units)| Self::wgmma_fits(limits, shape, (half_projection, sub, units)))
    }

    /// `plan` (a training plan of `layers` layers) with its forward on the wgmma kernel where
    /// that fits and the backward does not run in one cluster (whose launch would take the
    /// forward's grid as a cluster): the forward's fields the wgmma forward's (its own batch
    /// groups, [`Plan::pass_groups`]; an f32 projection; no transpose of its own), the
    /// backward's as they are; else `plan`. Its subgroups: those the tuning asks for, else two
    /// where [`shape_wgmma_wave`] takes the wgmma wavefront and it fits, else one.
    fn with_wgmma_training_forward(
        limits: Limits,
        plan: Plan,
        (tuning, layers): (&Tuning, usize),
    ) -> Plan {
        let shape = (layers, plan.hidden, plan.batch);
        Self::in_rule_subgroups(limits, (tuning, shape), |sub| {
            Some(Self::on_wgmma_training_forward(limits, plan, (tuning, sub)))
        })
        .unwrap_or(plan)
    }

    /// `build`'s wgmma forward plan (of `shape`: layers, hidden, batch) in the subgroups the
    /// tuning asks for, else two where [`shape_wgmma_wave`] takes the wgmma wavefront and it
    /// then fits ([`Plan::wgmma_wave_fits`]), else one: alone, two subgroups are slower than one
    /// (`results/2026-11-30-h200-wgmma-subgroups/`).
    fn in_rule_subgroups(
        limits: Limits,
        (tuning, (layers, hidden, batch)): (&Tuning, (usize, usize, usize)),
        build: impl Fn(usize) -> Option<Plan>,
    ) -> Option<Plan> {
        let wave = tuning.wave == WaveTuning::Fitted && shape_wgmma_wave(layers, hidden, batch);
        let asked = tuning.wgmma_subgroups.unwrap_or(if wave { 2 } else { 1 });
        let plan = build(asked)?;
        let unfit = tuning.wgmma_subgroups.is_none()
            && plan.wgmma_subgroups > 1
            && !plan.wgmma_wave_fits(layers, limits);
        match unfit {
            true => build(1),
            false => Some(plan),
        }
    }

    /// [`Plan::with_wgmma_training_forward`] in `asked` subgroups (where they fit, else one),
    /// its blocks' units as [`Plan::wgmma_form_of`] takes them.
    fn on_wgmma_training_forward(
        limits: Limits,
        plan: Plan,
        (tuning, asked): (&Tuning, usize),
    ) -> Plan {
        let shape = (plan.cell, plan.hidden, plan.batch, plan.elem);
        // (f32 operands train on the other kernels: scaled f16 operands serve inference only.)
        let form = match plan.elem {
            Operands::Tf32 => None,
            _ => Self::wgmma_form_of(limits, shape, (true, tuning), asked),
        };
        let Some((wgmma_subgroups, units)) = form.filter(|_| !plan.one_cluster) else {
            return plan;
        };
        Plan {
            units: [units, plan.units[1]],
            clusters: [1, plan.clusters[1]],
            multicast: 1,
            ring: false,
            push: [false, plan.push[1]],
            input: 0,
            half_projection: false,
            forward_transposes: false,
            wgmma: true,
            wgmma_subgroups,
            ..plan
        }
    }

    /// Whether the wgmma backward fits `plan` (a training plan) on a device of `limits`: sm_90,
    /// half elements, a batch of [`WGMMA_BWD_BATCH`], hidden [`WGMMA_BWD_HIDDEN`] (block r of
    /// each cluster multiplies cluster r's gate rows, so the clusters number as many as a
    /// cluster's blocks) on blocks that fit one per multiprocessor, its shared memory, and a
    /// layer-by-layer backward that exchanges through L2 (neither in one cluster nor pushed).
    /// (Whether its clusters are all resident at once, the launch checks.)
    fn wgmma_bwd_fits(Limits { sms, smem, major }: Limits, plan: &Plan) -> bool {
        major >= 9
            && plan.elem != Operands::Tf32
            && plan.batch == WGMMA_BWD_BATCH
            && plan.hidden == WGMMA_BWD_HIDDEN
            && plan.hidden / WGMMA_BWD_UNITS <= sms
            && !plan.one_cluster
            && !plan.push[Pass::Backward as usize]
            && wgmma_bwd_smem(plan.cell) <= smem
    }

    /// `plan` (a training plan) with its backward on the wgmma kernel where that fits
    /// ([`Plan::wgmma_bwd_fits`]), its partial sums in bf16 where `tuning` asks; else `plan`.
    fn with_wgmma_backward(limits: Limits, plan: Plan, tuning: &Tuning) -> Plan {
        let fits = Self::wgmma_bwd_fits(limits, &plan);
        Plan {
            wgmma_backward: fits,
            bf16_partials: fits && tuning.bf16_partials,
            ..plan
        }
    }

    /// The inference plan of `layers` layers on the wgmma forward ([`Plan::wgmma`]) where it
    /// fits ([`Plan::wgmma_fits`]), in the rule's subgroups ([`Plan::in_rule_subgroups`]);
    /// `None` elsewhere.
    fn wgmma_forward(
        limits: Limits,
        (cell, hidden, batch, elem): (Cell, usize, usize, Operands),
        (tuning, layers): (&Tuning, usize),
    ) -> Option<Plan> {
        Self::in_rule_subgroups(limits, (tuning, (layers, hidden, batch)), |asked| {
            Self::wgmma_forward_in(limits, (cell, hidden, batch, elem), tuning, asked)
        })
    }

    /// [`Plan::wgmma_forward`] in `asked` subgroups where they fit, else one.
    fn wgmma_forward_in(
        limits: Limits,
        (cell, hidden, batch, elem): (Cell, usize, usize, Operands),
        tuning: &Tuning,
        asked: usize,
    ) -> Option<Plan> {
        let shape = (cell, hidden, batch, elem);
        let form = Self::wgmma_form_of(limits, shape, (false, tuning), asked);
        form.map(|(wgmma_subgroups, units)| Plan {
            cell,
            hidden,
            batch,
            units: [units; 2],
            elem,
            buffers: 2,
            chunk: tuning.chunk,
            clusters: [1, 1],
            one_cluster: false,
            multicast: 1,
            ring: false,
            push: [false; 2],
            input: 0,
            half_projection: elem != Operands::Tf32,
            groups: batch / (WGMMA_GROUP_SAMPLES * wgmma_subgroups),
            side_streams: None,
            transposed: false,
            forward_transposes: false,
            wgmma: true,
            wgmma_backward: false,
            bf16_partials: false,
            wgmma_subgroups,
            scaled: elem == Operands::Tf32,
        })
    }

    /// [`Plan::new`] with `groups` batch groups (which divide the batch), or why there is none,
    /// on `dev` of `limits`.
    fn grouped(
        (dev, limits): (&CudaDevice, Limits),
        (cell, hidden, batch, elem): (Cell, usize, usize, Operands),
        (train, layers, input): (bool, usize, usize),
        tuning: &Tuning,
        groups: usize,
    ) -> std::result::Result<Plan, String> {
        let Limits { sms, smem, major } = limits;
        // Each group's blocks on its share of the multiprocessors.
        let group_batch = batch / groups;
        let group_sms = sms / groups;
        // Asked-for units whose blocks fit one per multiprocessor, else the rule's.
        let rule = block_units(cell, hidden, group_batch, group_sms);
        let units = tuning
            .units
            .filter(|u| u.iter().all(|&u| hidden.div_ceil(u) <= group_sms))
            .unwrap_or([rule; 2]);
        let mut plan = Plan {
            cell,
            hidden,
            batch,
            units,
            elem,
            buffers: 2,
            chunk: tuning.chunk,
            clusters: tuning
                .clusters
                .unwrap_or_else(|| shape_clusters(cell, hidden, (group_batch, groups > 1))),
            one_cluster: false,
            multicast: 1,
            ring: false,
            push: [false; 2],
            input: 0,
            half_projection: !train
                && elem != Operands::Tf32
                && tuning
                    .half_projection
                    .unwrap_or_else(|| cell_half_projection(cell)),
            groups,
            side_streams: tuning.side_streams,
            transposed: tuning
                .transposed
                .unwrap_or_else(|| shape_transposed(elem, (cell.gates() * hidden, hidden))),
            forward_transposes: false,
            wgmma: false,
            wgmma_backward: false,
            bf16_partials: false,
            wgmma_subgroups: 1,
            scaled: elem == Operands::Tf32 && tuning.f16_scaled,
        };
        let passes: &[Pass] = match train {
            true => &[Pass::Forward, Pass::Backward],
            false => &[Pass::Forward],
        };
        // The cluster sizes to try, largest first: the tuning's (`Some(true)`: wherever one
        // fits) or the rule's, none larger than the tuning allows.
        let sizes: &[usize] = match tuning.one_cluster {
            Some(true) => &ONE_CLUSTER_SIZES,
            Some(false) => &[],
            None => {
                let step = (layers, hidden, plan.group_batch());
                shape_one_cluster(
                    one_cluster_operands(elem, plan.scaled, (train, batch), step),
                    step,
                )
            }
        };
        if major >= 9 {
            let push = tuning.push.unwrap_or(shape_one_cluster_pushes(hidden));
            // The input size where the forward may make the input projection itself, and
            // whether the tuning asks for it even where the rule does not.
            let folded = match tuning.fold {
                Some(false) => None,
                asked => (layers == 1 && input % 8 == 0).then_some((input, asked == Some(true))),
            };
            for &most_blocks in sizes.iter().filter(|&&b| b <= tuning.one_cluster_blocks) {
                let fit = plan.in_one_cluster(dev, (smem, most_blocks), passes, (push, folded));
                if let Some(one) = fit {
                    return Ok(one);
                }
            }
        }
        // A pass whose clusters do not fit runs in clusters half as large, down to none.
        for &pass in passes {
            plan.buffers = plan.most_buffers(smem);
            while plan.cluster(pass) > 1 && !plan.fit_clusters(dev, (sms, smem, major), pass) {
                plan.clusters[pass as usize] /= 2;
                plan.units[pass as usize] = units[pass as usize];
                plan.buffers = plan.most_buffers(smem);
            }
        }
        // A forward whose blocks do not fit in shared memory alone (f32 tiles at hidden 1024)
        // splits K over clusters of 2 or 4 where those fit: each block then holds the
        // cluster's units' rows for its share of the columns.
        if major >= 9 && plan.cluster(Pass::Forward) == 1 && plan.smem_bytes(Pass::Forward) > smem {
            for cluster in [2, 4] {
                let mut split = Plan {
                    clusters: [cluster, plan.clusters[1]],
                    ..plan
                };
                if split.fit_clusters(dev, (sms, smem, major), Pass::Forward) {
                    plan = split;
                    break;
                }
            }
        }
        if major >= 9 && plan.cluster(Pass::Forward) == 1 {
            let blocks = plan.blocks(Pass::Forward);
            let mut multicast = tuning
                .multicast
                .unwrap_or_else(|| shape_multicast(blocks, groups));
            let fits = |asked: &Plan| {
                blocks % asked.multicast == 0
                    && asked.smem_bytes(Pass::Forward) <= smem
                    && asked
                        .resident_clusters(dev, Pass::Forward)
                        .is_some_and(|r| r >= groups * blocks / asked.multicast)
            };
            plan = loop {
                if multicast == 1 {
                    break plan;
                }
                let whole = Plan { multicast, ..plan };
                let ring = Plan {
                    ring: true,
                    ..whole
                };
                if fits(&whole) {
                    break whole;
                }
                if ring.ring_applies() && fits(&ring) {
                    break ring;
                }
                multicast /= 2;
            };
        }
        for &pass in passes {
            if groups * plan.blocks(pass) > sms {
                return Err(format!(
                    "hidden size {hidden}, batch {batch}: {groups} groups of {} blocks ({pass:?}), \
                     the GPU has {sms} multiprocessors",
                    plan.blocks(pass)
                ));
            }
            if plan.smem_bytes(pass) > smem {
                return Err(format!(
                    "hidden size {hidden}, batch {batch}: a block's {} units need {} KiB of \
                     shared memory ({pass:?}), the GPU has {} KiB per block",
                    plan.units[pass as usize],
                    plan.smem_bytes(pass) >> 10,
                    smem >> 10
                ));
            }
        }
        Ok(plan)
    }

    /// This plan's layer in one cluster of at most `most_blocks` blocks per batch group
    /// (one of [`ONE_CLUSTER_SIZES`]), each reading all of K,
    /// where its blocks fit in `smem` bytes each and the GPU holds every group's cluster at once
    /// for every pass of `passes`; `None` otherwise. Each pass
    /// pushes its exchange through distributed shared memory ([`Plan::push`]) where `push` asks
    /// and a group's batch is one chunk; a pushed forward in half elements makes its input
    /// projection itself ([`Plan::input`]) where `folded` gives the input size,
    /// [`folds_input`] says it pays (or `folded` asks for it anyway) and its tiles fit too.
    fn in_one_cluster(
        &self,
        dev: &CudaDevice,
        (smem, most_blocks): (usize, usize),
        passes: &[Pass],
        (push, folded): ([bool; 2], Option<(usize, bool)>),
    ) -> Option<Plan> {
        let units = self
            .hidden
            .div_ceil(most_blocks)
            .next_multiple_of(UNIT_STEP);
        let one_chunk = self.group_batch() <= CHUNK_SAMPLES;
        let mut one = Plan {
            units: [units; 2],
            clusters: [1, 1],
            one_cluster: true,
            multicast: 1,
            ring: false,
            push: [push[0] && one_chunk, push[1] && one_chunk],
            ..*self
        };
        one.buffers = one.most_buffers(smem);
        let half = self.elem != Operands::Tf32;
        if let Some((input, anyway)) = folded.filter(|_| one.push[0] && half) {
            let with_input = Plan { input, ..one };
            let pays = anyway || folds_input(self.cell, units, one.group_batch(), input);
            if pays && with_input.smem_bytes(Pass::Forward) <= smem {
                one = with_input;
            }
        }
        let fits = passes.iter().all(|&pass| {
            one.smem_bytes(pass) <= smem
                && one.blocks(pass) <= most_blocks
                && one
                    .resident_clusters(dev, pass)
                    .is_some_and(|r| r >= self.groups)
        });
        fits.then_some(one)
    }

    /// The most chunk buffers per warp that the backward's shared memory (`smem` bytes per
    /// block) holds, at least 2, at most [`MAX_BUFFERS`].
    fn most_buffers(&self, smem: usize) -> usize {
        (2..=MAX_BUFFERS)
            .take_while(|&buffers| {
                let plan = Plan { buffers, ..*self };
                buffers == 2 || plan.smem_bytes(Pass::Backward) + L1_RESERVE <= smem
            })
            .last()
            .unwrap_or(2)
    }

    /// Whether `pass` can run in its clusters on a GPU with `sms` multiprocessors, `smem` bytes
    /// of shared memory per block and compute capability `major`: clusters need sm_90, and
    /// every cluster must be resident at once (the grid barrier waits for all blocks). When the
    /// backward's do not all fit (PTB large's 32 clusters of 4 blocks of 12 units on an H100,
    /// which holds 30), its blocks take more units each, fewer clusters, if shared memory
    /// allows (29 of 13 units).
    fn fit_clusters(
        &mut self,
        dev: &CudaDevice,
        (sms, smem, major): (usize, usize, usize),
        pass: Pass,
    ) -> bool {
        let fits =
            |plan: &Plan| plan.groups * plan.blocks(pass) <= sms && plan.smem_bytes(pass) <= smem;
        if major < 9 || !fits(self) {
            return false;
        }
        let Some(resident) = self.resident_clusters(dev, pass) else {
            return false;
        };
        let cluster = self.cluster(pass);
        if resident >= self.groups * self.blocks(pass) / cluster {
            return true;
        }
        if pass == Pass::Forward || resident == 0 {
            return false;
        }
        // As many clusters of larger blocks fit: one block per multiprocessor either way.
        let mut wider = *self;
        wider.units[pass as usize] = self
            .hidden
            .div_ceil(cluster * (resident / self.groups).max(1));
        wider.buffers = wider.most_buffers(smem);
        let ok = fits(&wider)
            && wider
                .resident_clusters(dev, pass)
                .is_some_and(|r| r >= wider.groups * wider.blocks(pass) / cluster);
        if ok {
            *self = wider;
        }
        ok
    }

    /// How many clusters of `pass` the GPU holds at once (none when its kernel does not build
    /// or the driver cannot say).
    fn resident_clusters(&self, dev: &CudaDevice, pass: Pass) -> Option<usize> {
        let f = self.kernel(dev, pass).ok()?;
        let stream = dev.cuda_stream();
        self.launch(&stream, &f, pass).resident_clusters().ok()
    }

    /// How `f`, the kernel of `pass`, launches on `stream` under this plan: its grid, block,
    /// shared memory and clusters.
    pub(super) fn launch<'a>(
        &self,
        stream: &'a CudaStream,
        f: &'a CudaFunction,
        pass: Pass,
    ) -> Launch<'a> {
        Launch {
            stream,
            f,
            cfg: self.launch_config(pass),
            cluster: self.launch_cluster(pass),
        }
    }

    /// The grid, block and shared memory of `pass`'s launch.
    fn launch_config(&self, pass: Pass) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.blocks(pass) as u32, self.pass_groups(pass) as u32, 1),
            block_dim: (self.threads() as u32, 1, 1),
            shared_mem_bytes: self.smem_bytes(pass) as u32,
        }
    }

    /// Blocks per cluster in `pass` that split K (1: none).
    pub fn cluster(&self, pass: Pass) -> usize {
        self.clusters[pass as usize]
    }

    /// Blocks per cluster of `pass`'s launch: the whole grid in one-cluster plans, the
    /// forward's [`Plan::multicast`] where it has one, else [`Plan::cluster`].
    fn launch_cluster(&self, pass: Pass) -> usize {
        if pass == Pass::Backward && self.wgmma_backward {
            return WGMMA_BWD_CLUSTER;
        }
        match (self.one_cluster, pass) {
            (true, _) => self.blocks(pass),
            (false, Pass::Forward) if self.multicast > 1 => self.multicast,
            (false, _) => self.cluster(pass),
        }
    }

    /// The multicast's blocks per cluster in `pass` (1: none; the backward has none).
    fn pass_multicast(&self, pass: Pass) -> usize {
        match pass {
            Pass::Forward => self.multicast,
            Pass::Backward => 1,
        }
    }

    /// Whether `pass`'s multicast stage is a ring ([`Plan::ring`]).
    fn pass_ring(&self, pass: Pass) -> bool {
        self.ring && self.pass_multicast(pass) > 1
    }

    /// Whether the forward's multicast stage can be a ring ([`Plan::ring`]): half elements (in
    /// f32 it was neither measured nor checked), three chunks of a group's batch or more, and
    /// the warps' tiles of the weights in registers (`recurrence_fwd.cu`'s `FwdTile::IN_REGS`,
    /// without clusters: each warp a K group of the block's rows, at most 160 registers of
    /// tiles).
    fn ring_applies(&self) -> bool {
        let steps = self.kpad() / 16;
        let tiles = (self.cell.gates() * self.units[Pass::Forward as usize]).div_ceil(16);
        let chunks = self.group_batch().div_ceil(CHUNK_SAMPLES);
        let in_registers = steps.div_ceil(WARPS) * tiles * 4 <= 160;
        self.elem != Operands::Tf32
            && chunks >= 3
            && self.cluster(Pass::Forward) == 1
            && in_registers
    }

    /// Whether `pass` pushes its exchange through distributed shared memory ([`Plan::push`]).
    pub fn pass_push(&self, pass: Pass) -> bool {
        self.push[pass as usize]
    }

    /// Whether a layer-by-layer backward fills its tile from W_hh transposed
    /// ([`Plan::transposed`]): where it is not pushed (a pushed backward keeps its units' rows of
    /// W_hh, not their columns). The wavefront's tiles come from W_hh and W_ih themselves.
    pub fn backward_transposed(&self) -> bool {
        self.transposed && !self.pass_push(Pass::Backward)
    }

    /// Whether a training forward on this plan can write W_hh transposed for its backward
    /// ([`Plan::backward_transposed`]) itself, in its prologue (`recurrence_fwd.cu`'s WT_WRITE):
    /// where it is pushed, in half elements, at hidden sizes that are multiples of 8 (whole 8x8
    /// tiles). A pushed forward's blocks leave the GPU half free: in the lab the transpose cost
    /// its launch nothing at [*, 32, 512], where the side stream's left about 3.5 µs a call on
    /// the backward's path; an unpushed forward on 128 blocks paid 2.6 µs at [*, 128, 512], and
    /// 11 at [*, 32, 1024] (`results/2026-11-30-h200-fill-rows/` §6).
    pub fn forward_may_transpose(&self) -> bool {
        self.backward_transposed()
            && self.pass_push(Pass::Forward)
            && self.elem != Operands::Tf32
            && self.hidden % 8 == 0
    }

    /// Bytes of W_hh transposed that each block of a training forward writes where it writes
    /// the transpose ([`Plan::forward_transposes`]): the layer's, over all batch groups' blocks.
    pub fn transpose_share_bytes(&self) -> usize {
        let bytes = self.cell.gates() * self.hidden * self.hidden * self.elem.words() * 2;
        bytes.div_ceil(self.blocks(Pass::Forward) * self.groups)
    }

    /// Elements of a row of W_hh transposed (`recurrence_bwd.cu`'s WT_PITCH): the gate rows in
    /// whole 16-byte pieces.
    pub fn transposed_pitch(&self) -> usize {
        let words = self.elem.words();
        (self.cell.gates() * self.hidden * words).next_multiple_of(8) / words
    }

    /// A batch group's samples ([`Plan::groups`]).
    pub fn group_batch(&self) -> usize {
        self.batch / self.groups
    }

    /// Blocks of a batch group ([`Plan::groups`]; the grid has `groups` times as many) in
    /// `pass`, one per multiprocessor at most, in whole clusters.
    pub fn blocks(&self, pass: Pass) -> usize {
        if pass == Pass::Backward && self.wgmma_backward {
            return self.hidden / WGMMA_BWD_UNITS;
        }
        let cluster = self.cluster(pass);
        self.hidden.div_ceil(self.units[pass as usize] * cluster) * cluster
    }

    pub fn threads(&self) -> usize {
        WARPS * 32
    }

    /// Columns of the forward's exchange buffer rows in 16-bit words ([`Operands::words`]): the
    /// hidden size in whole K steps.
    pub fn kpad(&self) -> usize {
        // (A scaled plan's forward exchanges f16 h: [`Plan::scaled`].)
        let words = match self.scaled {
            true => Operands::F16.words(),
            false => self.elem.words(),
        };
        (self.hidden * words).div_ceil(16) * 16
    }

    /// Columns of the backward's exchange buffer rows: the gate rows in whole chunks.
    pub fn gpad(&self) -> usize {
        self.gpad_of(self.cell.gates())
    }

    /// Columns of exchange rows of `groups` column groups of `hidden` (the wavefront's may have
    /// one more than the gates: `Cell::wave_groups`), in 16-bit words ([`Operands::words`]), in
    /// whole chunks.
    pub(super) fn gpad_of(&self, groups: usize) -> usize {
        (groups * self.hidden * self.elem.words()).div_ceil(self.chunk) * self.chunk
    }

    /// Shared memory per block of `pass`'s recurrence, as `recurrence_fwd.cu`,
    /// `recurrence_bwd.cu` and the wgmma kernels lay it out.
    pub fn smem_bytes(&self, pass: Pass) -> usize {
        self.smem_of(pass, self.pass_wgmma(pass))
    }

    /// [`Plan::smem_bytes`] of `pass`'s wgmma kernel (`wgmma`) or its other kernel (a wgmma
    /// backward's helpers come from the layer-by-layer backward's module).
    fn smem_of(&self, pass: Pass, wgmma: bool) -> usize {
        let cluster = self.cluster(pass);
        match pass {
            Pass::Forward if wgmma => wgmma_smem(
                self.cell,
                self.hidden,
                self.half_projection,
                (self.wgmma_subgroups, self.units[Pass::Forward as usize]),
            ),
            Pass::Backward if wgmma => wgmma_bwd_smem(self.cell),
            Pass::Forward => {
                let steps = self.kpad() / 16;
                let sizes = (self.group_batch(), self.cell.gates());
                let units = self.units[pass as usize];
                let push = self.pass_push(pass);
                let folded = (self.input > 0).then_some((self.input, self.cell.splits()));
                forward_smem(
                    (units, steps),
                    (cluster, self.multicast, self.ring, push),
                    sizes,
                    folded,
                )
            }
            Pass::Backward if self.pass_push(pass) => pushed_backward_smem(
                self.units[pass as usize],
                (self.hidden, self.group_batch()),
                (self.cell, self.elem.words()),
            ),
            Pass::Backward => {
                self.backward_smem((self.units[pass as usize], 1), cluster, self.gpad())
            }
        }
    }

    /// Shared memory of a backward block of `units` units whose tile holds `matrices` of their
    /// transposed weight columns (2: an upper wavefront layer's W_hh and W_ih), in clusters of
    /// `cluster` blocks, as `recurrence_bwd.cu`'s `BwdTile` lays it out: the tile (the cluster's
    /// units, the block's gate rows of exchange rows `gpad` long), the block's partial sums
    /// (with clusters), and each warp's chunk buffers (or sums).
    pub(super) fn backward_smem(
        &self,
        (units, matrices): (usize, usize),
        cluster: usize,
        gpad: usize,
    ) -> usize {
        let units = units * cluster;
        let tile_rows = matrices * units;
        let rows = tile_rows.div_ceil(16) * 16;
        let columns = (gpad / self.chunk).div_ceil(cluster) * self.chunk;
        // The chunk buffers, sums and cluster parts hold one chunk of the batch (group's).
        let chunk_batch = self.group_batch().min(CHUNK_SAMPLES);
        let part = match cluster {
            1 => 0,
            _ => (chunk_batch * (units + 4) * 4).next_multiple_of(16),
        };
        let buffers = self.buffers * chunk_batch * self.chunk * 2;
        let sums = chunk_batch * (rows + 4) * 4;
        tile_rows * (columns + 8) * 2 + part + WARPS * buffers.max(sums).next_multiple_of(16)
    }

    /// The NVRTC definitions of the module of `pass`'s recurrence.
    #[cfg(test)]
    fn defines(&self, pass: Pass) -> Vec<String> {
        self.defines_of(pass, self.pass_wgmma(pass))
    }

    /// The NVRTC definitions of `pass`'s module: its wgmma kernel's (`wgmma`) or its other one's.
    fn defines_of(&self, pass: Pass, wgmma: bool) -> Vec<String> {
        if wgmma && pass == Pass::Backward {
            let mut defines = vec![
                format!("-DHID={}", self.hidden),
                format!("-DBATCH={WGMMA_BWD_BATCH}"),
                "-DGROUPS=1".to_string(),
                format!("-DNWARPS={WARPS}"),
                self.elem.define().to_string(),
                format!("-DSMEM_BYTES={}", self.smem_of(pass, true)),
            ];
            if self.backward_transposed() {
                defines.push("-DWT_ROWS=1".into());
            }
            if self.bf16_partials {
                defines.push("-DPARTIAL_BF16=1".into());
            }
            return defines;
        }
        if wgmma {
            let scaled = self.scaled;
            return vec![
                format!("-DHID={}", self.hidden),
                format!("-DBATCH={WGMMA_GROUP_SAMPLES}"),
                format!("-DSUB={}", self.wgmma_subgroups),
                format!("-DWG_UNITS={}", self.units[pass as usize]),
                format!("-DGROUPS={}", self.pass_groups(pass)),
                format!("-DNWARPS={WARPS}"),
                match scaled {
                    true => Operands::F16.define(),
                    false => self.elem.define(),
                }
                .to_string(),
                format!("-DF16_SCALED={}", u8::from(scaled)),
                format!("-DXG_HALF={}", u8::from(self.half_projection)),
                format!("-DSMEM_BYTES={}", self.smem_of(pass, true)),
            ];
        }
        let scaled = self.pass_scaled(pass);
        let mut defines = vec![
            format!("-DHID={}", self.hidden),
            format!("-DBATCH={}", self.group_batch()),
            format!("-DGROUPS={}", self.groups),
            format!("-DUNITS={}", self.units[pass as usize]),
            format!("-DNWARPS={WARPS}"),
            match scaled {
                true => Operands::F16.define(),
                false => self.elem.define(),
            }
            .to_string(),
            format!("-DNBUF={}", self.buffers),
            format!("-DCL={}", self.cluster(pass)),
            format!("-DCH={}", self.chunk),
            format!("-DONE_CLUSTER={}", u8::from(self.one_cluster)),
            format!("-DMCAST={}", self.pass_multicast(pass)),
            format!("-DPUSH={}", u8::from(self.pass_push(pass))),
            // Checked against the kernel's layout when it compiles.
            format!("-DSMEM_BYTES={}", self.smem_of(pass, false)),
        ];
        if let Some(input) = self.pass_input(pass) {
            defines.push(format!("-DXIN={input}"));
        }
        if self.pass_half_projection(pass) {
            defines.push("-DXG_HALF=1".into());
        }
        if self.pass_ring(pass) {
            defines.push("-DMRING=1".into());
        }
        if pass == Pass::Backward && self.backward_transposed() {
            defines.push("-DWT_ROWS=1".into());
        }
        if self.pass_transposes(pass) {
            defines.push("-DWT_WRITE=1".into());
        }
        if scaled {
            defines.push("-DF16_SCALED=1".into());
        }
        defines
    }

    /// Whether `pass` takes f32 operands as scaled f16 ones ([`Plan::scaled`]: the forward).
    pub fn pass_scaled(&self, pass: Pass) -> bool {
        pass == Pass::Forward && self.scaled
    }

    /// Whether `pass` writes W_hh transposed ([`Plan::forward_transposes`]: the forward).
    pub fn pass_transposes(&self, pass: Pass) -> bool {
        pass == Pass::Forward && self.forward_transposes
    }

    /// The input size whose projection `pass` makes itself ([`Plan::input`]: the forward's).
    pub fn pass_input(&self, pass: Pass) -> Option<usize> {
        (pass == Pass::Forward && self.input > 0).then_some(self.input)
    }

    /// Whether `pass` reads its input projection in half elements ([`Plan::half_projection`]:
    /// the forward's).
    fn pass_half_projection(&self, pass: Pass) -> bool {
        pass == Pass::Forward && self.half_projection
    }

    /// Whether `pass` runs on a wgmma kernel ([`Plan::wgmma`]: the forward,
    /// [`Plan::wgmma_backward`]: the backward).
    pub fn pass_wgmma(&self, pass: Pass) -> bool {
        match pass {
            Pass::Forward => self.wgmma,
            Pass::Backward => self.wgmma_backward,
        }
    }

    /// The batch groups of `pass`: the wgmma forward's of [`WGMMA_GROUP_SAMPLES`] (in training
    /// the backward keeps [`Plan::groups`]: `results/2026-11-30-h200-wgmma-train-forward/`),
    /// else [`Plan::groups`].
    pub fn pass_groups(&self, pass: Pass) -> usize {
        match (pass, self.pass_wgmma(pass)) {
            (Pass::Forward, true) => self.batch / (WGMMA_GROUP_SAMPLES * self.wgmma_subgroups),
            (Pass::Backward, true) => 1,
            (_, false) => self.groups,
        }
    }

    /// The name of `pass`'s kernel in its module.
    fn kernel_name(&self, pass: Pass) -> &'static str {
        match (pass, self.pass_wgmma(pass)) {
            (Pass::Forward, true) => WGMMA_KERNEL,
            (Pass::Backward, true) => WGMMA_BWD_KERNEL,
            (_, false) => pass.name(),
        }
    }

    /// The name of the module of `pass`'s recurrence.
    #[cfg(test)]
    fn module_name(&self, pass: Pass) -> String {
        self.module_name_of(pass, self.pass_wgmma(pass))
    }

    /// The name of `pass`'s module: its wgmma kernel's (`wgmma`) or its other one's.
    fn module_name_of(&self, pass: Pass, wgmma: bool) -> String {
        if wgmma && pass == Pass::Backward {
            return format!(
                "candle_cudnn_rnn_{}_{WGMMA_BWD_KERNEL}_h{}{}{}_{}",
                self.cell.name(),
                self.hidden,
                match self.backward_transposed() {
                    true => "_wt",
                    false => "",
                },
                match self.bf16_partials {
                    true => "_p16",
                    false => "",
                },
                self.elem.name()
            );
        }
        if wgmma {
            return format!(
                "candle_cudnn_rnn_{}_{WGMMA_KERNEL}_h{}_b{}_g{}_s{}_u{}{}_{}",
                self.cell.name(),
                self.hidden,
                self.batch,
                self.pass_groups(pass),
                self.wgmma_subgroups,
                self.units[pass as usize],
                match (self.half_projection, self.scaled) {
                    (true, _) => "_xh",
                    (false, true) => "_f16s",
                    (false, false) => "_train",
                },
                self.elem.name()
            );
        }
        format!(
            "candle_cudnn_rnn_{}_{}_h{}_b{}_g{}_u{}_n{}_c{}_m{}{}_ch{}{}{}{}{}{}_{}",
            self.cell.name(),
            pass.name(),
            self.hidden,
            self.batch,
            self.groups,
            self.units[pass as usize],
            self.buffers,
            self.cluster(pass),
            self.pass_multicast(pass),
            match self.pass_ring(pass) {
                true => "_ring",
                false => "",
            },
            self.chunk,
            match (self.one_cluster, self.pass_push(pass)) {
                (true, true) => "_one_push",
                (true, false) => "_one",
                (false, _) => "",
            },
            self.pass_input(pass)
                .map_or(String::new(), |i| format!("_x{i}")),
            match self.pass_half_projection(pass) {
                true => "_xh",
                false => "",
            },
            match (pass, self.backward_transposed(), self.pass_transposes(pass)) {
                (Pass::Backward, true, _) => "_wt",
                (Pass::Forward, _, true) => "_wtw",
                _ => "",
            },
            match self.pass_scaled(pass) {
                true => "_f16s",
                false => "",
            },
            self.elem.name(),
        )
    }

    /// The recurrence of `pass` for this plan on `dev`, compiled on first use.
    pub fn kernel(&self, dev: &CudaDevice, pass: Pass) -> Result<CudaFunction> {
        let f = self.function(dev, pass, self.kernel_name(pass))?;
        allow_smem(&f, self.smem_bytes(pass))?;
        if self.launch_cluster(pass) > PORTABLE_CLUSTER_BLOCKS {
            f.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                1,
            )
            .map_err(|e| candle_core::Error::Msg(format!("rnn: persistent kernel: {e}")))?;
        }
        Ok(f)
    }

    /// Kernel `name` of the module of `pass` (each also holds the dropout and row-copy kernels;
    /// a wgmma backward's module only its recurrence: the other kernels come from the
    /// layer-by-layer backward's).
    pub fn function(&self, dev: &CudaDevice, pass: Pass, name: &str) -> Result<CudaFunction> {
        let wgmma = self.pass_wgmma(pass) && (pass == Pass::Forward || name == WGMMA_BWD_KERNEL);
        // wgmma needs sm_90a's PTX; clusters sm_90's (the layer-by-layer backward's own).
        let clusters = match (pass, wgmma) {
            (Pass::Backward, false) => self.cluster(pass) > 1,
            _ => self.launch_cluster(pass) > 1,
        };
        let arch = match (wgmma, clusters || self.one_cluster) {
            (true, _) => "compute_90a",
            (false, true) => "compute_90",
            (false, false) => "compute_80",
        };
        let sources = match (pass, wgmma) {
            (Pass::Forward, true) => wgmma_sources(self.cell),
            (Pass::Backward, true) => wgmma_bwd_sources(self.cell),
            (_, false) => pass.sources(self.cell),
        };
        let module = module(
            self.module_name_of(pass, wgmma),
            sources,
            self.defines_of(pass, wgmma),
            arch,
        );
        function(&module, dev, pass, name)
    }
}

impl Plan {
    /// Whether the wgmma wavefront of `layers` layers of this plan (its forward on wgmma) fits a
    /// device of `limits` (`recurrence_wgmma_wave.cu`): batch groups of [`WGMMA_WAVE_GROUP`]
    /// samples, whole projection blocks, every block at once one a multiprocessor.
    pub(super) fn wgmma_wave_fits(&self, layers: usize, Limits { sms, smem, .. }: Limits) -> bool {
        let group = self.batch / self.pass_groups(Pass::Forward);
        let gh = self.cell.gates() * self.hidden;
        self.pass_wgmma(Pass::Forward)
            && !self.scaled
            && self.units[Pass::Forward as usize] == WGMMA_UNITS
            && self.batch == WGMMA_WAVE_BATCH
            && group == WGMMA_WAVE_GROUP
            && gh % WGMMA_PROJECTION_ROWS == 0
            && self.wgmma_wave_blocks(layers) <= sms
            && self.wgmma_wave_smem() <= smem
    }

    /// The wgmma wavefront's blocks: each layer's recurrence, then the projections of the
    /// layers above the lowest (128 gate rows of W_ih each).
    pub(super) fn wgmma_wave_blocks(&self, layers: usize) -> usize {
        let (recurrence, projection) = self.wgmma_wave_layer_blocks();
        layers * recurrence + (layers - 1) * projection
    }

    /// A layer's blocks in the wgmma wavefront: its recurrence's (every batch group's), its
    /// projection's (above the lowest layer).
    pub(super) fn wgmma_wave_layer_blocks(&self) -> (usize, usize) {
        let recurrence = self.pass_groups(Pass::Forward) * self.blocks(Pass::Forward);
        let projection = self.cell.gates() * self.hidden / WGMMA_PROJECTION_ROWS;
        (recurrence, projection)
    }

    /// The wgmma wavefront's shared memory a block: the larger of the recurrence's and a
    /// projection block's (its rows of W_ih, each warpgroup's ring of chunks of 128 columns of
    /// its half of the batch, the slots' mbarriers).
    pub(super) fn wgmma_wave_smem(&self) -> usize {
        let projection = WGMMA_PROJECTION_ROWS * self.hidden * 2
            + WGMMA_PROJECTION_SLOTS * self.batch * 128 * 2
            + 2 * WGMMA_PROJECTION_SLOTS * 8;
        self.smem_of(Pass::Forward, true).max(projection)
    }

    /// The wgmma wavefront's kernel of `layers` layers of this plan (its forward on wgmma) on
    /// `dev`, compiled on first use.
    pub(super) fn wgmma_wave_function(
        &self,
        dev: &CudaDevice,
        layers: usize,
    ) -> Result<CudaFunction> {
        let smem = self.wgmma_wave_smem();
        let mut defines = self.defines_of(Pass::Forward, true);
        defines.retain(|d| !d.starts_with("-DSMEM_BYTES="));
        defines.push(format!("-DSMEM_BYTES={smem}"));
        defines.push(format!("-DWAVE_LAYERS={layers}"));
        let name = format!("{}_wave{layers}", self.module_name_of(Pass::Forward, true));
        let sources = wgmma_wave_sources(self.cell);
        let module = module(name, sources, defines, "compute_90a");
        let f = function(&module, dev, Pass::Forward, WGMMA_WAVE_KERNEL)?;
        allow_smem(&f, smem)?;
        Ok(f)
    }
}

/// The batch the wgmma wavefront takes: each warpgroup of a projection block multiplies half of
/// it, wgmma's N of 64 (`recurrence_wgmma_wave.cu`'s PN).
const WGMMA_WAVE_BATCH: usize = 128;

/// The samples of a wgmma wavefront's batch group: a projection warpgroup's half of the batch
/// is one group, which it waits for and publishes on its own.
const WGMMA_WAVE_GROUP: usize = 64;

/// The gate rows of W_ih a wgmma wavefront's projection block multiplies
/// (`recurrence_wgmma_wave.cu`'s PROJ_ROWS): two of wgmma's M of 64.
const WGMMA_PROJECTION_ROWS: usize = 128;

/// The chunks of 128 columns of the input each projection warpgroup's ring holds, each with an
/// mbarrier (`recurrence_wgmma_wave.cu`'s PSLOTS).
const WGMMA_PROJECTION_SLOTS: usize = 2;

/// The module of `sources` compiled with `defines` for `arch`, named `name` (unique per pass,
/// cell and defines).
pub(super) fn module(
    name: String,
    sources: &'static [&'static str],
    defines: Vec<String>,
    arch: &'static str,
) -> Module {
    let options = CompileOptions {
        arch: Some(arch),
        options: defines,
        ..Default::default()
    };
    Module::with_options(name, sources, options)
}

/// Kernel `name` of `module`, a module of `pass`, on `dev`.
pub(super) fn function(
    module: &Module,
    dev: &CudaDevice,
    pass: Pass,
    name: &str,
) -> Result<CudaFunction> {
    module.function(dev, name).map_err(|e| {
        candle_core::Error::Msg(format!("rnn: persistent kernel {pass:?} kernel: {e}"))
    })
}

/// Lets `f` take `bytes` of dynamic shared memory.
pub(super) fn allow_smem(f: &CudaFunction, bytes: usize) -> Result<()> {
    f.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        bytes as i32,
    )
    .map_err(|e| candle_core::Error::Msg(format!("rnn: persistent kernel: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistent::wave::Wave;

    /// Asserts that `plan`'s module of `pass` compiles with each of `wanted` (`-DNAME=VALUE`).
    fn assert_defines(plan: &Plan, pass: Pass, wanted: &[&str]) {
        let defines = plan.defines(pass);
        for d in wanted {
            assert!(
                defines.contains(&d.to_string()),
                "{d} in {pass:?}'s {defines:?}"
            );
        }
    }

    /// Plans `a` and `b` compile different modules for `pass` (each its own, cached apart) and
    /// the same one for the other pass.
    fn assert_modules_differ_in(a: &Plan, b: &Plan, pass: Pass) {
        let other = match pass {
            Pass::Forward => Pass::Backward,
            Pass::Backward => Pass::Forward,
        };
        assert_ne!(a.module_name(pass), b.module_name(pass), "{pass:?}");
        assert_eq!(a.module_name(other), b.module_name(other), "{other:?}");
    }

    /// An sm_90 device's limits (227 KiB of shared memory a block) with `sms` multiprocessors.
    fn sm90(sms: usize) -> Limits {
        Limits {
            sms,
            smem: 227 << 10,
            major: 9,
        }
    }

    /// Every kernel the host launches by name is a kernel of its pass's source, for each cell.
    #[test]
    fn the_launched_names_are_the_sources_kernels() {
        for pass in [Pass::Forward, Pass::Backward] {
            for cell in [Cell::Lstm, Cell::Gru] {
                let source = pass.sources(cell).concat();
                for name in [pass.name(), Wave::kernel_name(pass)] {
                    let kernel = format!(
                        "extern \"C\" __global__ void __launch_bounds__(THREADS, 1)\n{name}("
                    );
                    let defined = source.contains(&kernel);
                    assert!(defined, "{pass:?} {cell:?}: no kernel {name}");
                }
            }
        }
        // The wgmma modules: each kernel after what it calls (the instruction's wrappers of
        // wgmma.cuh; the wavefront the wgmma forward's layer).
        for cell in [Cell::Lstm, Cell::Gru] {
            let modules = [
                (WGMMA_KERNEL, wgmma_sources(cell), "void wgmma_rs_n32("),
                (
                    WGMMA_WAVE_KERNEL,
                    wgmma_wave_sources(cell),
                    "void layer_forward(",
                ),
                (
                    WGMMA_BWD_KERNEL,
                    wgmma_bwd_sources(cell),
                    "void wgmma_rs_n128(",
                ),
            ];
            for (name, sources, callee) in modules {
                let kernel =
                    format!("extern \"C\" __global__ void __launch_bounds__(THREADS, 1)\n{name}(");
                let source = sources.concat();
                let at = source.find(&kernel);
                assert!(at.is_some(), "{cell:?}: no kernel {name}");
                let defined = source.find(callee);
                assert!(
                    defined.is_some_and(|d| Some(d) < at),
                    "{cell:?}: {callee} not before {name}"
                );
            }
        }
    }

    /// A training plan with its backward on wgmma: the batch of 128 as one group at hidden 1024
    /// on 64 blocks in clusters of 8, its own module (compiled for sm_90a, W_hh or its transpose) with
    /// the layout's shared memory; the helpers' module (the transpose, the bias parts' sum) and
    /// the forward's stay the plain plan's. The rule takes layers of 1024 at batch 128.
    #[test]
    fn a_wgmma_backward_runs_the_batch_in_one_group_in_clusters_of_8() {
        assert!(shape_wgmma_backward(1024, 128));
        assert!(!shape_wgmma_backward(1024, 64));
        assert!(!shape_wgmma_backward(512, 128));
        // The kernel's layout (recurrence_wgmma_bwd.cu's SMEM): the ring (a chunk of 128 x 128 a
        // gate), 4 mbarriers' 64 bytes, 256 stages of 208 bytes, 128 samples' 64 columns + 4.
        assert_eq!(
            wgmma_bwd_smem(Cell::Lstm),
            131072 + 64 + 256 * 208 + 128 * 68 * 4
        );
        assert_eq!(
            wgmma_bwd_smem(Cell::Gru),
            98304 + 64 + 256 * 208 + 128 * 68 * 4
        );
        let plain = Plan {
            units: [WGMMA_UNITS, 16],
            groups: 2,
            clusters: [1, 4],
            transposed: false,
            ..Plan::example(Cell::Lstm, 1024, 128)
        };
        let plan = Plan {
            wgmma_backward: true,
            ..plain
        };
        assert_eq!(plan.pass_groups(Pass::Backward), 1);
        assert_eq!(plan.pass_groups(Pass::Forward), 2);
        assert_eq!(plan.launch_config(Pass::Backward).grid_dim, (64, 1, 1));
        assert_eq!(plan.launch_cluster(Pass::Backward), WGMMA_BWD_CLUSTER);
        assert_eq!(plan.smem_bytes(Pass::Backward), wgmma_bwd_smem(Cell::Lstm));
        assert_eq!(plan.kernel_name(Pass::Backward), WGMMA_BWD_KERNEL);
        assert_defines(
            &plan,
            Pass::Backward,
            &[
                "-DHID=1024",
                "-DBATCH=128",
                "-DGROUPS=1",
                "-DNWARPS=8",
                "-DELEM_BF16=1",
            ],
        );
        assert!(!plan
            .defines(Pass::Backward)
            .contains(&"-DWT_ROWS=1".to_string()));
        let transposed = Plan {
            transposed: true,
            ..plan
        };
        assert!(transposed
            .defines(Pass::Backward)
            .contains(&"-DWT_ROWS=1".to_string()));
        assert_ne!(
            transposed.module_name(Pass::Backward),
            plan.module_name(Pass::Backward)
        );
        let bf16 = Plan {
            bf16_partials: true,
            ..plan
        };
        assert!(bf16
            .defines(Pass::Backward)
            .contains(&"-DPARTIAL_BF16=1".to_string()));
        assert!(!plan
            .defines(Pass::Backward)
            .contains(&"-DPARTIAL_BF16=1".to_string()));
        assert_ne!(
            bf16.module_name(Pass::Backward),
            plan.module_name(Pass::Backward)
        );
        assert_modules_differ_in(&plan, &plain, Pass::Backward);
        // The helpers' module: the plain plan's, with its own shared memory.
        assert_eq!(
            plan.module_name_of(Pass::Backward, false),
            plain.module_name(Pass::Backward)
        );
        assert_eq!(
            plan.defines_of(Pass::Backward, false),
            plain.defines(Pass::Backward)
        );
        // Where it fits: sm_90, half elements, batch 128, hidden 1024.
        let h200 = || sm90(132);
        assert!(Plan::wgmma_bwd_fits(h200(), &plain));
        assert!(Plan::wgmma_bwd_fits(
            h200(),
            &Plan::example(Cell::Gru, 1024, 128)
        ));
        let ampere = Limits { major: 8, ..h200() };
        assert!(!Plan::wgmma_bwd_fits(ampere, &plain));
        for other in [
            Plan::example(Cell::Lstm, 1024, 64),
            Plan::example(Cell::Lstm, 1000, 128),
            // Block r of a cluster takes cluster r's gate rows: 8 clusters of 8, no other count.
            Plan::example(Cell::Gru, 512, 128),
            Plan::example(Cell::Lstm, 2048, 128),
            Plan {
                elem: Operands::Tf32,
                ..plain
            },
            Plan {
                one_cluster: true,
                ..plain
            },
            Plan {
                push: [false, true],
                ..plain
            },
        ] {
            assert!(!Plan::wgmma_bwd_fits(h200(), &other), "{other:?}");
        }
    }

    /// The wgmma forward by default at hidden 1024 from batch 32 and at hidden 512 from batch 64
    /// to 128, in whole groups of 32, its blocks in shared memory (227 KiB on sm_90), its module
    /// of its own (compiled for sm_90a) with the layout's defines; the backward's module is the
    /// plain one.
    #[test]
    fn the_wgmma_forward_at_hidden_1024_from_batch_32_and_512_from_64() {
        assert!(shape_wgmma_forward(1024, 128));
        assert!(shape_wgmma_forward(1024, 96));
        assert!(shape_wgmma_forward(1024, 64));
        assert!(shape_wgmma_forward(1024, 32));
        assert!(!shape_wgmma_forward(1024, 16));
        assert!(!shape_wgmma_forward(1024, 100));
        assert!(shape_wgmma_forward(512, 128));
        assert!(shape_wgmma_forward(512, 96));
        assert!(shape_wgmma_forward(512, 64));
        assert!(!shape_wgmma_forward(512, 32));
        assert!(!shape_wgmma_forward(512, 80));
        assert!(!shape_wgmma_forward(512, 256));
        assert!(!shape_wgmma_forward(768, 128));
        assert!(!shape_wgmma_forward(256, 128));
        // Training: hidden 512 and 1024 at batch 128, in stacks too; 1024 at batch 64.
        assert!(shape_wgmma_training(512, 128));
        assert!(shape_wgmma_training(1024, 128));
        assert!(!shape_wgmma_training(768, 128));
        assert!(shape_wgmma_training(1024, 64));
        assert!(!shape_wgmma_training(1024, 32));
        assert!(!shape_wgmma_training(512, 64));
        assert!(!shape_wgmma_training(512, 256));
        for cell in [Cell::Lstm, Cell::Gru] {
            assert!(
                wgmma_smem(cell, 1024, true, (1, WGMMA_UNITS)) <= 227 << 10,
                "{cell:?}"
            );
        }
        // The kernel's layout (recurrence_wgmma_fwd.cu's SMEM) at hidden 1024: 64 rows of 1024
        // columns, 2 x 16 x 128 partial sums, 32 samples of h, 8 mbarriers, 4 gates x 32 samples
        // x 40 inputs.
        assert_eq!(
            wgmma_smem(Cell::Lstm, 1024, true, (1, WGMMA_UNITS)),
            131072 + 16384 + 65536 + 64 + 10240
        );
        let plan = Plan {
            units: [WGMMA_UNITS; 2],
            groups: 4,
            half_projection: true,
            wgmma: true,
            ..Plan::example(Cell::Lstm, 1024, 128)
        };
        assert_eq!(plan.blocks(Pass::Forward), 32);
        assert_eq!(plan.group_batch(), WGMMA_GROUP_SAMPLES);
        assert_eq!(
            plan.smem_bytes(Pass::Forward),
            wgmma_smem(Cell::Lstm, 1024, true, (1, WGMMA_UNITS))
        );
        assert_eq!(plan.kernel_name(Pass::Forward), WGMMA_KERNEL);
        assert_eq!(plan.kernel_name(Pass::Backward), Pass::Backward.name());
        let wanted = [
            "-DHID=1024",
            "-DBATCH=32",
            "-DGROUPS=4",
            "-DNWARPS=8",
            "-DELEM_BF16=1",
            "-DXG_HALF=1",
        ];
        assert_defines(&plan, Pass::Forward, &wanted);
        let plain = Plan {
            wgmma: false,
            ..plan
        };
        assert_modules_differ_in(&plan, &plain, Pass::Forward);
    }

    /// A wgmma forward of 16 units a block: twice the blocks, no shared-memory rows, half the
    /// partial sums, its own module; taken where asked and its blocks fit (one subgroup), else
    /// the 32-unit form.
    #[test]
    fn a_wgmma_forward_of_16_units_runs_twice_the_blocks() {
        // The kernel's layout at hidden 1024, one group of 32 (batch 32): no rows in shared
        // memory, 2 x 8 x 128 partial sums, 32 samples of h, 8 mbarriers, 4 gates x 32 samples x
        // 24 inputs in half elements (x 20 in f32).
        assert_eq!(
            wgmma_smem(Cell::Lstm, 1024, true, (1, WGMMA_REGISTER_UNITS)),
            8192 + 65536 + 64 + 6144
        );
        assert_eq!(
            wgmma_smem(Cell::Gru, 1024, false, (1, WGMMA_REGISTER_UNITS)),
            8192 + 65536 + 64 + 7680
        );
        let plan = Plan {
            units: [WGMMA_REGISTER_UNITS, 16],
            groups: 1,
            half_projection: true,
            wgmma: true,
            ..Plan::example(Cell::Lstm, 1024, 32)
        };
        assert_eq!(plan.blocks(Pass::Forward), 64);
        assert_eq!(
            plan.smem_bytes(Pass::Forward),
            wgmma_smem(Cell::Lstm, 1024, true, (1, WGMMA_REGISTER_UNITS))
        );
        assert_defines(
            &plan,
            Pass::Forward,
            &["-DWG_UNITS=16", "-DSUB=1", "-DBATCH=32"],
        );
        let wide = Plan {
            units: [WGMMA_UNITS, 16],
            ..plan
        };
        assert_eq!(wide.blocks(Pass::Forward), 32);
        assert_defines(&wide, Pass::Forward, &["-DWG_UNITS=32"]);
        assert_modules_differ_in(&plan, &wide, Pass::Forward);
        // Where asked: at batch 32 and 64 of hidden 1024 (64 and 128 blocks), not at 128 (256
        // blocks) nor in two subgroups, where the 32-unit form serves.
        let asked = Tuning {
            wgmma_units: Some(WGMMA_REGISTER_UNITS),
            ..Tuning::DEFAULT
        };
        let shape = |batch| (Cell::Lstm, 1024, batch, Operands::Bf16);
        let form = |batch, sub| Plan::wgmma_form_of(sm90(132), shape(batch), (false, &asked), sub);
        assert_eq!(form(32, 1), Some((1, WGMMA_REGISTER_UNITS)));
        assert_eq!(form(64, 1), Some((1, WGMMA_REGISTER_UNITS)));
        assert_eq!(form(64, 2), Some((1, WGMMA_REGISTER_UNITS)));
        assert_eq!(form(128, 1), Some((1, WGMMA_UNITS)));
        let shape = (Cell::Gru, 512, 128, Operands::F16);
        let form = Plan::wgmma_form_of(sm90(132), shape, (true, &asked), 1);
        assert_eq!(form, Some((1, WGMMA_REGISTER_UNITS)));
        // Two subgroups asked (the wavefront's): 32 units in two where they fit.
        let form = Plan::wgmma_form_of(sm90(132), shape, (false, &asked), 2);
        assert_eq!(form, Some((2, WGMMA_UNITS)));
        // Unasked, the rule's: 16 units for inference, 32 for training.
        let rule =
            |train, sub| Plan::wgmma_form_of(sm90(132), shape, (train, &Tuning::DEFAULT), sub);
        assert_eq!(rule(false, 1), Some((1, WGMMA_REGISTER_UNITS)));
        assert_eq!(rule(true, 1), Some((1, WGMMA_UNITS)));
        assert_eq!(rule(false, 2), Some((2, WGMMA_UNITS)));
        // Where 16-unit blocks do not fit, 32-unit ones.
        assert_eq!(
            Plan::wgmma_form_of(sm90(100), shape, (false, &Tuning::DEFAULT), 1),
            Some((1, WGMMA_UNITS))
        );
    }

    /// A wgmma forward of two subgroups a block: groups of 64 (half the blocks), the ring,
    /// mbarriers and inputs twice, BATCH still wgmma's N of 32, its own module; at hidden 1024
    /// two subgroups overflow shared memory.
    #[test]
    fn a_wgmma_forward_of_two_subgroups_runs_half_the_blocks() {
        let one = Plan {
            units: [WGMMA_UNITS; 2],
            groups: 4,
            half_projection: true,
            wgmma: true,
            ..Plan::example(Cell::Lstm, 512, 128)
        };
        let two = Plan {
            wgmma_subgroups: 2,
            ..one
        };
        assert_eq!(one.pass_groups(Pass::Forward), 4);
        assert_eq!(two.pass_groups(Pass::Forward), 2);
        assert_eq!(two.launch_config(Pass::Forward).grid_dim, (16, 2, 1));
        // 64 rows of 512, the sums, 2 x 32 samples of h, 2 x 4 mbarriers, 2 x 4 gates x 32
        // samples x 40 half inputs.
        assert_eq!(
            two.smem_bytes(Pass::Forward),
            65536 + 16384 + 2 * 32768 + 2 * 32 + 2 * 4 * 32 * 40 * 2
        );
        assert_defines(
            &two,
            Pass::Forward,
            &["-DBATCH=32", "-DSUB=2", "-DGROUPS=2", "-DHID=512"],
        );
        assert_defines(
            &one,
            Pass::Forward,
            &["-DBATCH=32", "-DSUB=1", "-DGROUPS=4"],
        );
        assert_modules_differ_in(&one, &two, Pass::Forward);
        for cell in [Cell::Lstm, Cell::Gru] {
            for half in [true, false] {
                assert!(
                    wgmma_smem(cell, 512, half, (2, WGMMA_UNITS)) <= 227 << 10,
                    "{cell:?}"
                );
                assert!(
                    wgmma_smem(cell, 1024, half, (2, WGMMA_UNITS)) > 227 << 10,
                    "{cell:?}"
                );
            }
        }
    }

    /// The wgmma wavefront at [*, 128, 3 x 512] in two subgroups: 3 x 32 recurrence blocks and
    /// 2 x 16 projection blocks of 128 gate rows for an LSTM (2 x 12 for a GRU), fitting an H100
    /// SXM's or H200's 132 multiprocessors but not an H100 PCIe's 114; in one subgroup the
    /// layers' 64 blocks each do not fit together. The rule takes three layers of 512 at batch 128
    /// only.
    #[test]
    fn a_wgmma_wavefront_of_three_layers_fits_132_multiprocessors_in_two_subgroups() {
        for (cell, projection_blocks) in [(Cell::Lstm, 16), (Cell::Gru, 12)] {
            let one = Plan {
                units: [WGMMA_UNITS, 4],
                groups: 8,
                wgmma: true,
                ..Plan::example(cell, 512, 128)
            };
            let two = Plan {
                wgmma_subgroups: 2,
                ..one
            };
            assert_eq!(two.wgmma_wave_blocks(3), 3 * 32 + 2 * projection_blocks);
            assert_eq!(two.wgmma_wave_blocks(2), 2 * 32 + projection_blocks);
            // A projection block's 128 rows of 512 and 2 x 2 chunks of 64 x 128 and their mbarriers outweigh the
            // recurrence's shared memory.
            assert_eq!(two.wgmma_wave_smem(), 131072 + 65536 + 32);
            assert!(two.wgmma_wave_fits(3, sm90(132)), "{cell:?}");
            assert!(!two.wgmma_wave_fits(3, sm90(114)), "{cell:?}");
            assert!(!one.wgmma_wave_fits(3, sm90(132)), "{cell:?}");
            assert!(!one.wgmma_wave_fits(2, sm90(132)), "{cell:?}");
            let plain = Plan {
                wgmma: false,
                ..two
            };
            assert!(!plain.wgmma_wave_fits(3, sm90(132)), "{cell:?}");
        }
        assert!(shape_wgmma_wave(3, 512, 128));
        assert!(!shape_wgmma_wave(2, 512, 128));
        assert!(!shape_wgmma_wave(3, 1024, 128));
        assert!(!shape_wgmma_wave(3, 512, 64));
    }

    /// The rule's subgroups, training and inference alike: two at [*, 128, 3 x 512] where the
    /// wavefront then fits, one on 114 multiprocessors (no wavefront) and on other stacks; the
    /// tuning's subgroups wherever it asks, the wavefront or not.
    #[test]
    fn the_rule_takes_two_subgroups_only_where_the_wgmma_wavefront_fits() {
        let build = |sub| {
            Some(Plan {
                units: [WGMMA_UNITS, 4],
                wgmma: true,
                wgmma_subgroups: sub,
                ..Plan::example(Cell::Lstm, 512, 128)
            })
        };
        let sub = |sms, tuning: &Tuning, layers| {
            Plan::in_rule_subgroups(sm90(sms), (tuning, (layers, 512, 128)), build)
                .map(|plan| plan.wgmma_subgroups)
        };
        let rule = Tuning::DEFAULT;
        assert_eq!(sub(132, &rule, 3), Some(2));
        assert_eq!(sub(114, &rule, 3), Some(1));
        assert_eq!(sub(132, &rule, 2), Some(1));
        let off = Tuning {
            wave: WaveTuning::Off,
            ..rule
        };
        assert_eq!(sub(132, &off, 3), Some(1));
        let two = Tuning {
            wgmma_subgroups: Some(2),
            ..rule
        };
        assert_eq!(sub(114, &two, 3), Some(2));
        assert_eq!(sub(132, &two, 1), Some(2));
        let none = Plan::in_rule_subgroups(sm90(132), (&rule, (3, 512, 128)), |_| None);
        assert!(none.is_none());
    }

    /// f32 operands (TF32 math) infer on the wgmma forward as scaled f16 ones (`F16_SCALED`):
    /// f16 elements, an f32 projection (its rows of xs padded by 4 floats), the inference's
    /// 16-unit blocks, a module of their own; not as the wgmma wavefront (one subgroup, layer by
    /// layer, at [*, 128, 3 x 512]), and not in training.
    #[test]
    fn f32_operands_infer_on_the_wgmma_forward_as_scaled_f16() {
        let rule = Tuning::DEFAULT;
        let plan = |cell, (hidden, batch), elem, layers| {
            Plan::wgmma_forward(sm90(132), (cell, hidden, batch, elem), (&rule, layers))
        };
        for cell in [Cell::Lstm, Cell::Gru] {
            let scaled = plan(cell, (1024, 32), Operands::Tf32, 1).expect("the wgmma forward fits");
            assert!(scaled.scaled && !scaled.half_projection, "{cell:?}");
            assert_eq!(scaled.units[0], WGMMA_REGISTER_UNITS, "{cell:?}");
            assert_eq!(
                scaled.smem_bytes(Pass::Forward),
                wgmma_smem(cell, 1024, false, (1, WGMMA_REGISTER_UNITS))
            );
            let wanted = [
                "-DELEM_BF16=0",
                "-DF16_SCALED=1",
                "-DXG_HALF=0",
                "-DWG_UNITS=16",
            ];
            assert_defines(&scaled, Pass::Forward, &wanted);
            // At batch 128 the 16-unit blocks do not fit (4 groups of 64): 32-unit ones, their
            // f32 inputs beside the shared-memory rows.
            let wide = plan(cell, (1024, 128), Operands::Tf32, 1).expect("the wgmma forward fits");
            assert!(wide.scaled && wide.units[0] == WGMMA_UNITS, "{cell:?}");
            let half = plan(cell, (1024, 32), Operands::F16, 1).expect("the wgmma forward fits");
            assert!(!half.scaled, "{cell:?}");
            assert_defines(&half, Pass::Forward, &["-DELEM_BF16=0", "-DF16_SCALED=0"]);
            assert_ne!(
                scaled.module_name(Pass::Forward),
                half.module_name(Pass::Forward)
            );
            let stack = plan(cell, (512, 128), Operands::Tf32, 3).expect("the wgmma forward fits");
            assert!(stack.scaled && stack.wgmma_subgroups == 1, "{cell:?}");
            assert!(!stack.wgmma_wave_fits(3, sm90(132)), "{cell:?}");
            let training = Plan {
                elem: Operands::Tf32,
                ..Plan::example(cell, 1024, 128)
            };
            let training = Plan::on_wgmma_training_forward(sm90(132), training, (&rule, 1));
            assert!(!training.wgmma && !training.scaled, "{cell:?}");
        }
    }

    /// An inference plan of f32 operands off the wgmma forward (`Plan::scaled`) compiles the
    /// layer-by-layer forward for scaled f16 operands, in a module of its own; its backward's
    /// module (which inference never asks for) and a training plan's keep TF32.
    #[test]
    fn f32_operands_infer_layer_by_layer_as_scaled_f16() {
        let tf32 = Plan {
            elem: Operands::Tf32,
            ..Plan::example(Cell::Gru, 1500, 20)
        };
        let scaled = Plan {
            scaled: true,
            ..tf32
        };
        assert!(scaled.pass_scaled(Pass::Forward) && !scaled.pass_scaled(Pass::Backward));
        assert_defines(&scaled, Pass::Forward, &["-DELEM_BF16=0", "-DF16_SCALED=1"]);
        assert_defines(&scaled, Pass::Backward, &["-DELEM_F32=1"]);
        assert!(!scaled
            .defines(Pass::Backward)
            .contains(&"-DF16_SCALED=1".to_string()));
        assert_defines(&tf32, Pass::Forward, &["-DELEM_F32=1"]);
        assert_modules_differ_in(&tf32, &scaled, Pass::Forward);
    }

    /// A training plan with its forward on wgmma: the forward in groups of 32 with an f32
    /// projection (its own module and layout: rows of xs padded by 4 floats), the backward in
    /// the plan's own groups (8 of 16 at [*, 128, 512]), launched on its own grid.
    #[test]
    fn a_wgmma_training_forward_keeps_the_backwards_groups() {
        let plan = Plan {
            units: [WGMMA_UNITS, 4],
            groups: 8,
            half_projection: false,
            wgmma: true,
            ..Plan::example(Cell::Gru, 512, 128)
        };
        assert_eq!(plan.pass_groups(Pass::Forward), 4);
        assert_eq!(plan.pass_groups(Pass::Backward), 8);
        assert_eq!(plan.launch_config(Pass::Forward).grid_dim, (16, 4, 1));
        assert_eq!(plan.launch_config(Pass::Backward).grid_dim, (128, 8, 1));
        // At 512: 64 rows of 512 columns, the sums, 32 samples of h, 4 mbarriers, 3 gates x 32
        // samples x 36 f32 inputs.
        assert_eq!(
            plan.smem_bytes(Pass::Forward),
            65536 + 16384 + 32768 + 32 + 3 * 32 * 36 * 4
        );
        assert_defines(
            &plan,
            Pass::Forward,
            &["-DBATCH=32", "-DGROUPS=4", "-DXG_HALF=0"],
        );
        assert_defines(
            &plan,
            Pass::Backward,
            &["-DBATCH=16", "-DGROUPS=8", "-DUNITS=4"],
        );
        // The training forward at hidden 1024 still fits beside its f32 inputs (227 KiB).
        for cell in [Cell::Lstm, Cell::Gru] {
            assert!(
                wgmma_smem(cell, 1024, false, (1, WGMMA_UNITS)) <= 227 << 10,
                "{cell:?}"
            );
        }
        let inference = Plan {
            half_projection: true,
            ..plan
        };
        assert_modules_differ_in(&plan, &inference, Pass::Forward);
    }

    #[test]
    fn blocks_take_the_most_units_of_the_fewest_tiles() {
        // An H100's 132 multiprocessors; (hidden, batch, LSTM's units, GRU's).
        for (hidden, batch, lstm, gru) in [
            (1500, 20, 12, 16),
            (1024, 32, 8, 8),
            (650, 20, 8, 8),
            (512, 32, 8, 8),
            (512, 1, 8, 8),
            (200, 32, 8, 8),
            (128, 32, 8, 8),
            // Batches of several chunks: the fewest that spread the units over the GPU.
            (512, 128, 4, 4),
            (200, 33, 4, 4),
            (1024, 256, 8, 8),
        ] {
            let units = |cell| block_units(cell, hidden, batch, 132);
            assert_eq!(units(Cell::Lstm), lstm, "LSTM {hidden} x {batch}");
            assert_eq!(units(Cell::Gru), gru, "GRU {hidden} x {batch}");
        }
    }

    #[test]
    fn backward_clusters_grow_with_the_gate_gradients_of_a_step() {
        // (cell, hidden, batch, backward's blocks per cluster), as measured.
        for (cell, hidden, batch, backward) in [
            (Cell::Lstm, 128, 32, 1),
            (Cell::Lstm, 256, 32, 1),
            (Cell::Gru, 650, 20, 1),
            (Cell::Gru, 1024, 4, 1),
            (Cell::Lstm, 512, 32, 1),
            (Cell::Gru, 512, 32, 1),
            (Cell::Lstm, 512, 64, 2),
            (Cell::Gru, 512, 128, 2),
            (Cell::Lstm, 1024, 32, 2),
            (Cell::Gru, 1024, 16, 2),
            (Cell::Lstm, 1500, 20, 4),
            (Cell::Gru, 1500, 20, 4),
        ] {
            let clusters = shape_clusters(cell, hidden, (batch, false));
            assert_eq!(clusters, [1, backward], "{cell:?} {hidden} x {batch}");
        }
        // A wide layer's batch group (16 samples of batch 32 or 64) runs without.
        assert_eq!(shape_clusters(Cell::Lstm, 1024, (16, true)), [1, 1]);
        assert_eq!(shape_clusters(Cell::Gru, 1024, (16, true)), [1, 1]);
        assert_eq!(shape_clusters(Cell::Lstm, 512, (16, true)), [1, 1]);
        assert_eq!(shape_clusters(Cell::Lstm, 512, (64, true)), [1, 2]);
    }

    #[test]
    fn multicast_from_64_blocks_or_32_a_batch_group() {
        // (forward blocks, blocks per multicast cluster).
        for (blocks, multicast) in [
            (32, 1),
            (63, 1),
            (64, 8),
            (128, 8),
            (82, 2),
            (100, 4),
            (65, 1),
        ] {
            assert_eq!(shape_multicast(blocks, 1), multicast, "{blocks} blocks");
        }
        // In batch groups, clusters of 2 from 32 blocks a group.
        for (blocks, multicast) in [(16, 1), (31, 1), (32, 2), (33, 1), (48, 2), (64, 8)] {
            assert_eq!(
                shape_multicast(blocks, 4),
                multicast,
                "{blocks} blocks a group"
            );
        }
    }

    /// A group's samples decide: [30, 32, 128] runs in 8 groups of 4, each one cluster.
    #[test]
    fn one_cluster_for_a_single_layer_of_small_steps() {
        let bf16 = |layers, hidden, group_batch| {
            shape_one_cluster(Operands::Bf16, (layers, hidden, group_batch))
        };
        for (hidden, group_batch) in [(128, 4), (64, 32), (128, 16), (256, 8), (256, 1)] {
            assert_eq!(bf16(1, hidden, group_batch), [16, 8]);
            assert_eq!(
                shape_one_cluster(Operands::F16, (1, hidden, group_batch)),
                [16, 8]
            );
            assert_eq!(
                shape_one_cluster(Operands::Tf32, (1, hidden, group_batch)),
                [8]
            );
        }
        for (layers, hidden, group_batch) in [(2, 128, 8), (1, 16, 64), (1, 1024, 8)] {
            assert!(bf16(layers, hidden, group_batch).is_empty());
        }
    }

    /// Past a small step, half precision takes 16 blocks only, up to hidden 512 at 8 samples;
    /// there the backward exchanges through L2.
    #[test]
    fn one_cluster_of_16_blocks_for_wider_steps() {
        const NONE: [usize; 0] = [];
        for elem in [Operands::Bf16, Operands::F16] {
            for (hidden, group_batch) in [(512, 8), (384, 8), (256, 16)] {
                assert_eq!(shape_one_cluster(elem, (1, hidden, group_batch)), [16]);
            }
            for (hidden, group_batch) in [(512, 16), (128, 64), (384, 32)] {
                assert_eq!(shape_one_cluster(elem, (1, hidden, group_batch)), NONE);
            }
        }
        assert_eq!(shape_one_cluster(Operands::Tf32, (1, 512, 8)), NONE);
        assert_eq!(shape_one_cluster_pushes(384), [true, true]);
        assert_eq!(shape_one_cluster_pushes(512), [true, false]);
    }

    /// A scaled plan sizes its clusters by f16's rule in inference and in training of a small
    /// step in one chunk of the batch, else by TF32's; plans of TF32 products and half ones by
    /// their own.
    #[test]
    fn scaled_training_takes_half_clusters_in_one_chunk() {
        use Operands::{Bf16, Tf32, F16};
        let (small, wide) = ((1, 128, 8), (1, 512, 8));
        assert_eq!(one_cluster_operands(Tf32, true, (false, 128), small), F16);
        assert_eq!(one_cluster_operands(Tf32, true, (false, 32), wide), F16);
        assert_eq!(one_cluster_operands(Tf32, true, (true, 32), small), F16);
        assert_eq!(one_cluster_operands(Tf32, true, (true, 32), wide), Tf32);
        assert_eq!(one_cluster_operands(Tf32, true, (true, 64), small), Tf32);
        assert_eq!(one_cluster_operands(Tf32, false, (true, 8), small), Tf32);
        assert_eq!(one_cluster_operands(Bf16, false, (true, 8), small), Bf16);
        // [*, 32, 128] in groups of 8: clusters of 16 first, where TF32's rule gives 8 only.
        let sizes = |elem| shape_one_cluster(elem, small);
        assert_eq!(
            sizes(one_cluster_operands(Tf32, true, (true, 32), small)),
            [16, 8]
        );
        assert_eq!(
            sizes(one_cluster_operands(Tf32, true, (true, 64), small)),
            [8]
        );
    }

    /// An H100's shared memory per block (227 KiB).
    const H100_SMEM: usize = 232_448;

    /// bf16 at hidden 1024 and batch 128, 8 units a block (weights in registers): the multicast
    /// stage of all four chunks overflows shared memory, a ring of two fits; at batch 64 (two
    /// chunks), with 32 units a block (tiles past registers) and in TF32 no ring applies.
    #[test]
    fn a_multicast_ring_where_the_whole_stage_does_not_fit() {
        let steps = 1024 / 16;
        for (cell, gates) in [(Cell::Lstm, 4), (Cell::Gru, 3)] {
            let smem = |multicast, ring| {
                forward_smem((8, steps), (1, multicast, ring, false), (128, gates), None)
            };
            assert!(smem(2, false) > H100_SMEM, "{cell:?}");
            assert!(smem(2, true) <= H100_SMEM, "{cell:?}");
            let plan = Plan::example(cell, 1024, 128);
            assert!(plan.ring_applies(), "{cell:?}");
            assert!(!Plan::example(cell, 1024, 64).ring_applies(), "{cell:?}");
            let wide = Plan {
                units: [32; 2],
                ..plan
            };
            assert!(!wide.ring_applies(), "{cell:?}");
            let tf32 = Plan {
                elem: Operands::Tf32,
                hidden: 512,
                ..plan
            };
            assert!(!tf32.ring_applies(), "{cell:?}");
        }
    }

    /// f32 tiles (TF32) at hidden 1024 and batch 32, 8 units a block: alone a forward block
    /// overflows shared memory (the GPU handed such calls to cuDNN,
    /// `results/2026-11-27-h100-tf32-forward/`); in clusters of 2 that split K it fits.
    #[test]
    fn a_tf32_forward_at_hidden_1024_fits_in_clusters_of_2() {
        let steps = |words: usize| (1024 * words).div_ceil(16);
        for gates in [3, 4] {
            // bf16 fits alone; f32 (two words an element) does not, but does in pairs.
            assert!(
                forward_smem((8, steps(1)), (1, 1, false, false), (32, gates), None) <= H100_SMEM
            );
            assert!(
                forward_smem((8, steps(2)), (1, 1, false, false), (32, gates), None) > H100_SMEM
            );
            assert!(
                forward_smem((8, steps(2)), (2, 1, false, false), (32, gates), None) <= H100_SMEM
            );
            // Several chunks of the batch take two stages: pairs no longer fit.
            assert!(
                forward_smem((8, steps(2)), (2, 1, false, false), (128, gates), None) > H100_SMEM
            );
        }
    }

    /// The forward makes its input projection itself where some warps have no gate math (up
    /// to 224 (unit, sample) pairs a block: 8 warps of 32 threads, one pair each; a batch group
    /// counted up to one chunk) and the input's products fit them.
    #[test]
    fn the_input_projection_is_folded_where_warps_are_free() {
        let (lstm, gru) = (Cell::Lstm, Cell::Gru);
        // Hidden 128 in 8 blocks at 4 and 8 samples: 2 and 4 warps with gate math, 8 K steps
        // of the input over the others, 4 tiles (3 a GRU's).
        for cell in [lstm, gru] {
            assert!(folds_input(cell, 16, 4, 128) && folds_input(cell, 16, 8, 128));
            assert!(!folds_input(cell, 16, 16, 128), "every warp has gate math");
            assert!(
                !folds_input(cell, 16, 64, 128),
                "so does a group of two chunks"
            );
        }
        // Hidden 256 at 4 samples: 8 tiles (6 a GRU's) and 4 K steps a free warp.
        assert!(!folds_input(lstm, 32, 4, 256) && !folds_input(gru, 32, 4, 256));
        // A narrower input: 2 K steps a free warp.
        assert!(!folds_input(lstm, 32, 4, 128) && folds_input(lstm, 32, 4, 64));
    }

    /// The exchange rows count 16-bit words: an f32 plan's are twice a half plan's, and a scaled
    /// f32 plan's forward exchanges f16 (its backward, which inference does not run, f32).
    #[test]
    fn exchange_rows_count_16_bit_words() {
        let plan = |elem| Plan {
            elem,
            ..Plan::example(Cell::Gru, 200, 32)
        };
        let (half, tf32) = (plan(Operands::Bf16), plan(Operands::Tf32));
        assert_eq!((half.kpad(), tf32.kpad()), (208, 400));
        assert_eq!((half.gpad(), tf32.gpad()), (640, 1216));
        let scaled = Plan {
            scaled: true,
            ..tf32
        };
        assert_eq!((scaled.kpad(), scaled.gpad()), (208, 1216));
        assert!(scaled.smem_bytes(Pass::Forward) < tf32.smem_bytes(Pass::Forward));
        assert_eq!(
            scaled.smem_bytes(Pass::Forward),
            Plan {
                elem: Operands::F16,
                ..tf32
            }
            .smem_bytes(Pass::Forward)
        );
    }

    /// W_hh transposed has rows of whole 16-byte pieces: a GRU's 4500 gate rows at hidden 1500
    /// take 4504 half elements (4500 f32 ones are already whole pieces); an LSTM's 6000, 6000.
    #[test]
    fn transposed_rows_are_whole_16_byte_pieces() {
        let pitch = |cell, hidden, elem| {
            Plan {
                elem,
                ..Plan::example(cell, hidden, 20)
            }
            .transposed_pitch()
        };
        assert_eq!(pitch(Cell::Gru, 1500, Operands::Bf16), 4504);
        assert_eq!(pitch(Cell::Gru, 1500, Operands::Tf32), 4500);
        assert_eq!(pitch(Cell::Lstm, 1500, Operands::F16), 6000);
        assert_eq!(pitch(Cell::Gru, 66, Operands::Tf32), 200);
    }

    /// The transposed tile by default in half precision up to an LSTM's W_hh at hidden 512.
    #[test]
    fn the_transposed_tile_up_to_2_mib_of_half_weights() {
        let (lstm, gru) = (Cell::Lstm.gates(), Cell::Gru.gates());
        assert!(shape_transposed(Operands::Bf16, (lstm * 512, 512)));
        assert!(shape_transposed(Operands::F16, (gru * 512, 512)));
        assert!(shape_transposed(Operands::Bf16, (gru * 591, 591)));
        assert!(!shape_transposed(Operands::Bf16, (lstm * 520, 520)));
        assert!(!shape_transposed(Operands::Bf16, (lstm * 1024, 1024)));
        assert!(!shape_transposed(Operands::Tf32, (lstm * 512, 512)));
        assert!(!shape_transposed(Operands::Tf32, (gru * 256, 256)));
    }

    /// The backward reads W_hh transposed unless it is pushed or the tuning says no, and its
    /// module is then a module of its own.
    #[test]
    fn the_backward_reads_w_hh_transposed_where_it_exchanges_through_l2() {
        let plan = Plan::example(Cell::Lstm, 512, 32);
        assert!(plan.backward_transposed());
        assert_defines(&plan, Pass::Backward, &["-DWT_ROWS=1"]);
        assert!(!plan
            .defines(Pass::Forward)
            .contains(&"-DWT_ROWS=1".to_string()));
        let pushed = Plan {
            one_cluster: true,
            push: [true, true],
            ..plan
        };
        assert!(!pushed.backward_transposed());
        assert!(!pushed
            .defines(Pass::Backward)
            .contains(&"-DWT_ROWS=1".to_string()));
        let off = Plan {
            transposed: false,
            ..plan
        };
        assert!(!off.backward_transposed());
        assert_modules_differ_in(&off, &plan, Pass::Backward);
    }

    /// A pushed forward in half elements can write W_hh transposed for a backward that reads
    /// it (not pushed), at hidden sizes of whole 8x8 tiles; where its plan says so (a training
    /// plan's), its module writes it and is a module of its own.
    #[test]
    fn a_pushed_forward_writes_the_transpose_its_backward_reads() {
        let plan = Plan {
            one_cluster: true,
            push: [true, false],
            ..Plan::example(Cell::Lstm, 512, 8)
        };
        assert!(plan.forward_may_transpose());
        let writes = Plan {
            forward_transposes: true,
            ..plan
        };
        let write = "-DWT_WRITE=1".to_string();
        assert!(writes.defines(Pass::Forward).contains(&write));
        assert!(!writes.defines(Pass::Backward).contains(&write));
        assert!(!plan.defines(Pass::Forward).contains(&write));
        assert_modules_differ_in(&writes, &plan, Pass::Forward);
        let cannot = [
            Plan {
                push: [false, false],
                ..plan
            },
            Plan {
                push: [true, true],
                ..plan
            },
            Plan {
                transposed: false,
                ..plan
            },
            Plan {
                elem: Operands::Tf32,
                ..plan
            },
            Plan {
                hidden: 500,
                ..plan
            },
        ];
        for other in cannot {
            assert!(!other.forward_may_transpose(), "{other:?}");
        }
    }

    /// By default a forward writes the transpose where its blocks' shares are small: an LSTM at
    /// hidden 512 in 4 batch groups (the measured gain), not in one (the measured loss).
    #[test]
    fn the_forward_transposes_where_each_block_writes_little() {
        let grouped = Plan {
            units: [32, 32],
            groups: 4,
            ..Plan::example(Cell::Lstm, 512, 32)
        };
        assert_eq!(grouped.blocks(Pass::Forward), 16);
        assert_eq!(grouped.transpose_share_bytes(), 32 << 10);
        assert!(grouped.transpose_share_bytes() <= FORWARD_SHARE_MOST_BYTES);
        let one = Plan {
            groups: 1,
            ..grouped
        };
        assert_eq!(one.transpose_share_bytes(), 128 << 10);
        assert!(one.transpose_share_bytes() > FORWARD_SHARE_MOST_BYTES);
    }

    #[test]
    fn batch_groups_by_the_shape() {
        use Operands::{Bf16, Tf32};
        // (layers, hidden, batch, elem, train, groups): the planner then takes the most that
        // divide the batch.
        for (layers, hidden, batch, elem, train, groups) in [
            (1, 512, 1, Bf16, true, 1),
            (1, 512, 8, Bf16, true, 1),
            (1, 512, 16, Bf16, false, 2),
            (1, 128, 16, Bf16, true, 4),
            (1, 128, 20, Bf16, true, 5),
            (1, 128, 8, Bf16, true, 2),
            (1, 128, 4, Bf16, true, 1),
            (1, 128, 8, Tf32, true, 1),
            (1, 128, 16, Tf32, true, 4),
            (1, 64, 16, Tf32, false, 4),
            (1, 128, 24, Tf32, true, 4),
            (1, 256, 16, Bf16, true, 2),
            (1, 128, 24, Bf16, true, 6),
            (1, 128, 32, Bf16, true, 4),
            (1, 128, 48, Bf16, false, 6),
            (1, 64, 8, Bf16, true, 2),
            (1, 64, 16, Bf16, true, 2),
            (1, 64, 24, Bf16, false, 3),
            (1, 128, 32, Tf32, true, 4),
            (1, 200, 32, Bf16, true, 4),
            (1, 512, 32, Bf16, true, 4),
            (1, 200, 77, Bf16, true, 8),
            (1, 512, 128, Bf16, false, 8),
            (1, 128, 256, Bf16, true, 16),
            (1, 128, 128, Bf16, true, 16),
            (1, 64, 128, Bf16, false, 16),
            (1, 128, 64, Bf16, true, 8),
            (1, 128, 128, Tf32, true, 4),
            (1, 512, 32, Tf32, true, 4),
            (1, 512, 128, Tf32, true, 4),
            (1, 1024, 32, Bf16, true, 2),
            (1, 650, 64, Bf16, false, 4),
            (1, 1024, 128, Bf16, true, 1),
            // Stacks: past one chunk; deeper than two layers up to hidden 256 past batch 64, and
            // in inference past hidden 128.
            (2, 512, 32, Bf16, true, 1),
            (2, 512, 128, Bf16, false, 8),
            (2, 200, 64, Bf16, true, 8),
            (3, 256, 64, Bf16, true, 1),
            (3, 256, 64, Bf16, false, 1),
            (3, 512, 32, Bf16, true, 1),
            (3, 512, 64, Bf16, true, 8),
            (3, 512, 64, Bf16, false, 8),
            (3, 256, 128, Bf16, true, 8),
            (3, 256, 128, Bf16, false, 8),
            (3, 128, 128, Bf16, true, 8),
            (3, 128, 128, Bf16, false, 1),
            (3, 512, 128, Bf16, true, 8),
            (3, 512, 128, Bf16, false, 8),
            (3, 1024, 128, Bf16, true, 1),
        ] {
            assert_eq!(
                shape_groups((layers, hidden, batch), (elem, train)),
                groups,
                "{layers} x {hidden}, batch {batch}, {elem:?}, train {train}"
            );
        }
        // The most of those that divide the batch.
        let train = |dtype| (dtype, true);
        assert_eq!(batch_groups((1, 200, 77), train(DType::BF16)), 7);
        assert_eq!(batch_groups((1, 512, 96), train(DType::F16)), 8);
        assert_eq!(batch_groups((1, 512, 100), train(DType::BF16)), 5);
        assert_eq!(batch_groups((1, 512, 100), train(DType::F32)), 4);
        assert_eq!(batch_groups((1, 128, 250), train(DType::BF16)), 10);
        assert_eq!(batch_groups((1, 512, 64), train(DType::F64)), 1);
    }

    /// A group's kernel is the kernel of a group's batch: the same shared memory and chunks,
    /// its grid `groups` deep.
    #[test]
    fn a_grouped_plan_runs_each_group_as_its_batch() {
        let plan = |batch, groups| Plan {
            units: [16; 2],
            groups,
            ..Plan::example(Cell::Lstm, 512, batch)
        };
        let (grouped, one) = (plan(128, 4), plan(32, 1));
        assert_eq!(grouped.group_batch(), 32);
        for pass in [Pass::Forward, Pass::Backward] {
            assert_eq!(grouped.smem_bytes(pass), one.smem_bytes(pass), "{pass:?}");
            assert_eq!(grouped.blocks(pass), 32);
            assert_eq!(grouped.launch_config(pass).grid_dim, (32, 4, 1));
            let defines = grouped.defines(pass);
            assert!(defines.contains(&"-DBATCH=32".to_string()), "{defines:?}");
            assert!(defines.contains(&"-DGROUPS=4".to_string()), "{defines:?}");
        }
        assert_ne!(
            grouped.module_name(Pass::Forward),
            plan(128, 1).module_name(Pass::Forward)
        );
    }
}
