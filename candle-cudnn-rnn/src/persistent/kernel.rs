//! The persistent kernels as the host sees them: their CUDA sources and kernel names, the sizes
//! they are built around, their shared-memory layouts, the operand types and device limits they are
//! planned for, and how a module of them is compiled (NVRTC at first use, `crate::kernels::Module`:
//! one PTX cache for the process) and loaded once per device. How a call's layer is spread over the
//! GPU is its [`super::plan::Plan`], by the rules of [`super::rules`].

use super::cell::{Cell, CELL_GRU, CELL_LSTM};
use crate::kernels::{Module, HALF, PHILOX};
use candle_core::cuda_backend::cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use candle_core::cuda_backend::cudarc::driver::CudaFunction;
use candle_core::cuda_backend::cudarc::nvrtc::CompileOptions;
use candle_core::cuda_backend::{CudaDevice, DeviceId};
use candle_core::{DType, Result};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

const COMMON: &str = include_str!("common.cuh");
const DROPOUT: &str = include_str!("dropout.cu");
const PAD: &str = include_str!("pad.cu");
const RECURRENCE_FWD: &str = include_str!("recurrence_fwd.cu");
const RECURRENCE_REG_FWD: &str = include_str!("recurrence_reg_fwd.cu");
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
    /// The name of the pass's layer-by-layer kernel (`recurrence_fwd.cu`, `recurrence_bwd.cu`).
    pub(super) fn name(self) -> &'static str {
        match self {
            Pass::Forward => "persistent_fwd",
            Pass::Backward => "persistent_bwd",
        }
    }

    /// The source of the pass's modules for `cell`: the preludes, the cell's pointwise steps, the
    /// dropout and row-copy kernels, then the recurrence (its layer-by-layer kernel and its
    /// wavefront; the forward's with its gates in registers, which a module takes instead of the
    /// layer-by-layer one, [`Plan::reg_gates`](super::plan::Plan::reg_gates)), and the forward's
    /// scaled f16 rows of an f32 layer's operands ([`Plan::scaled`](super::plan::Plan::scaled)).
    pub(super) fn sources(self, cell: Cell) -> &'static [&'static str] {
        match self {
            Pass::Forward => cell_sources!(
                cell,
                [DROPOUT, PAD, RECURRENCE_FWD, RECURRENCE_REG_FWD, F16_SCALED]
            ),
            Pass::Backward => cell_sources!(cell, [DROPOUT, PAD, RECURRENCE_BWD]),
        }
    }
}

/// The wgmma forward's kernel (`recurrence_wgmma_fwd.cu`,
/// [`Plan::wgmma`](super::plan::Plan::wgmma)).
pub(super) const WGMMA_KERNEL: &str = "wgmma_fwd";

/// The source of the wgmma forward's modules for `cell`, in [`Pass::sources`]'s order (the
/// dropout and row-copy kernels too, which the forward's host code takes from its module), the
/// instruction's wrappers (`wgmma.cuh`) before the recurrence, and the scaled f16 rows of an f32
/// layer's operands after it ([`Plan::scaled`](super::plan::Plan::scaled)).
pub(super) fn wgmma_sources(cell: Cell) -> &'static [&'static str] {
    cell_sources!(
        cell,
        [DROPOUT, PAD, WGMMA, RECURRENCE_WGMMA_FWD, F16_SCALED]
    )
}

/// The kernel of `f16_scaled.cu`, in the forward's modules.
pub(super) const F16_SCALED_KERNEL: &str = "rows_to_f16_scaled";

/// The wgmma wavefront's kernel (`recurrence_wgmma_wave.cu`, [`super::wgmma_wave::WgmmaWave`]).
pub(super) const WGMMA_WAVE_KERNEL: &str = "wgmma_wave_fwd";

/// The source of the wgmma wavefront's modules for `cell`: the wgmma forward's, then the
/// wavefront (its projection blocks and its kernel).
pub(super) fn wgmma_wave_sources(cell: Cell) -> &'static [&'static str] {
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

/// The wgmma backward's kernel (`recurrence_wgmma_bwd.cu`,
/// [`Plan::wgmma_backward`](super::plan::Plan::wgmma_backward)).
pub(super) const WGMMA_BWD_KERNEL: &str = "wgmma_bwd";

/// The source of the wgmma backward's modules for `cell` (its helpers, the transpose of W_hh and
/// the bias parts' sum, stay in the layer-by-layer backward's module:
/// [`Plan::function`](super::plan::Plan::function)).
pub(super) fn wgmma_bwd_sources(cell: Cell) -> &'static [&'static str] {
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

/// The wgmma forward's samples of a batch group (`recurrence_wgmma_fwd.cu`'s BATCH): wgmma's N. A
/// group of [`Plan::wgmma_subgroups`](super::plan::Plan::wgmma_subgroups) of them runs on one set
/// of blocks.
pub(super) const WGMMA_GROUP_SAMPLES: usize = 32;

/// The most subgroups of [`WGMMA_GROUP_SAMPLES`] a wgmma forward's block multiplies a step.
pub(super) const WGMMA_MOST_SUBGROUPS: usize = 2;

/// The wgmma forward's units a block: 128 gate rows of an LSTM, two of wgmma's M of 64.
pub(super) const WGMMA_UNITS: usize = 32;

/// The wgmma forward's units a block in its narrow form (`recurrence_wgmma_fwd.cu`'s WG_UNITS
/// 16): the block's 64 gate rows (an LSTM's; a GRU's 48, padded) all in registers, one wgmma a
/// k-step instead of two, on twice the blocks; one subgroup.
pub(super) const WGMMA_REGISTER_UNITS: usize = 16;
/// The wgmma forward takes hidden sizes that are multiples of this: whole chunks of 128 columns
/// of h in each warpgroup's half of K.
pub(super) const WGMMA_HIDDEN_STEP: usize = 256;

/// The wgmma forward's most hidden units: its registers hold a block's first 64 gate rows, 128 a
/// thread at hidden 1024.
pub(super) const WGMMA_MOST_HIDDEN: usize = 1024;
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

/// The warps of a wide backward's block (`Plan::wide_backward`).
pub(super) const WIDE_BACKWARD_WARPS: usize = 16;

/// The registers a thread of a wide backward holds its warp's fragments of the weight tile in
/// (`recurrence_bwd.cu`'s `BwdTile::L2_FRAG_REGS`, half elements, no clusters): the warp's chunks
/// of the `gates * hidden` gate columns (`chunk` each), 16 columns a K step, 16 of the block's
/// `units` a row tile, 4 registers a fragment.
pub(super) fn wide_backward_fragment_registers(
    gates: usize,
    (hidden, units, chunk): (usize, usize, usize),
) -> usize {
    let chunks = (gates * hidden).div_ceil(chunk);
    chunks.div_ceil(WIDE_BACKWARD_WARPS) * (chunk / 16) * units.div_ceil(16) * 4
}

/// The most registers of fragments that a wide backward's thread keeps (`recurrence_bwd.cu`'s
/// L2_IN_REGS at 16 warps, 128 registers a thread: the rest of the kernel takes about as many).
pub(super) const WIDE_BACKWARD_MOST_FRAGMENT_REGISTERS: usize = 64;

/// Gate columns per chunk of the backward's product (`recurrence_bwd.cu`'s CH) where neither the
/// tuning nor a rule says otherwise ([`super::tuning::Tuning::chunk`]).
pub(super) const DEFAULT_CHUNK: usize = 64;

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

    /// The name of the pass's layer-by-layer kernel (`recurrence_fwd.cu`, `recurrence_bwd.cu`).
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
    pub major: usize,
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

/// Past this many chunk buffers per warp the backward's loads no longer wait on L2.
pub(super) const MAX_BUFFERS: usize = 8;

/// Shared memory that more chunk buffers leave to L1 (which shares the multiprocessor's 256 KB
/// with it): a third buffer that took PTB large's backward from 208.6 to 226.5 KB ran slower
/// than two (`results/2026-11-24-h100-trials/`).
pub(super) const L1_RESERVE: usize = 16 * 1024;

/// Shared memory of a forward block of `units` units whose input rows are `steps` K steps long, in
/// clusters of `cluster` blocks, as `recurrence_fwd.cu`'s `FwdTile` lays it out: the weight tile
/// (the cluster's gate rows, the block's columns), the block's partial sums (with clusters), each K
/// group's stage of its input rows (or its sums), and with `multicast` clusters
/// ([`Plan::multicast`](super::plan::Plan::multicast)) the stage of all of h_{t-1} and its chunks'
/// mbarriers (with `ring`, [`Plan::ring`](super::plan::Plan::ring), two chunks' and their
/// mbarriers, in the tile's place, and the K groups' regions hold only their sums), or with `push`
/// ([`Plan::push`](super::plan::Plan::push)) two stages of all of h; where the input projection is
/// folded in ([`Plan::input`](super::plan::Plan::input): `folded`, the input size and whether the
/// cell splits a gate), the W_ih tile and two stages of x_t, and a split gate's input products in
/// each row of sums.
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

/// The most hidden units (and input columns) of a forward with its gates in registers
/// ([`Plan::reg_gates`](super::plan::Plan::reg_gates)): 16 K steps of W_hh's tile in each warp's
/// registers.
pub(super) const REG_GATES_MOST_HIDDEN: usize = 256;

/// The most units a block of such a forward takes where its batch groups' clusters would share
/// multiprocessors otherwise ([`super::rules::reg_gates_units`]): 16 warps, a gate warp and a
/// helper for each 4 units (the widest the lab ran, `results/2026-12-02-h200-cluster-sizes/`).
pub(super) const REG_GATES_MOST_UNITS: usize = 32;

/// The most samples of a batch group of such a forward: one tile of 8 (two made each step longer
/// than two groups' steps, `results/2026-12-02-h200-register-gates/`).
pub(super) const REG_GATES_GROUP_SAMPLES: usize = 8;

/// Shared memory of a forward block with its gates in registers ([`Plan::reg_gates`]) of
/// `units` units of a layer of `hidden` (half elements) and a batch group of `batch` samples (one
/// tile of 8), folding in an input of `input` columns (0: none), as `recurrence_reg_fwd.cu` lays
/// it out: the two pushed stages of all of h (8 rows of whole K steps and a 16-byte pad), six
/// mbarriers (the stages' and the hand-offs', two each), two slots of each item's input sums (4
/// f32) and records (8 f32), a gate warp's 32 items a tile of 4 units, with an input each helper
/// warp's two stages of x, and where units and h come in whole 8s (RG_PUSH16: 16-byte pushes) two
/// slots of the block's h_t.
///
/// [`Plan::reg_gates`]: super::plan::Plan::reg_gates
pub(super) fn reg_gates_smem(units: usize, hidden: usize, batch: usize, input: usize) -> usize {
    debug_assert!(batch <= REG_GATES_GROUP_SAMPLES, "one tile of 8 samples");
    let rows = REG_GATES_GROUP_SAMPLES;
    let stages = 2 * rows * (hidden.next_multiple_of(16) + 8) * 2;
    let items = units / 4 * 32;
    let x_stages = match input {
        0 => 0,
        _ => units / 4 * 2 * rows * (input.div_ceil(16) * 16 + 8) * 2,
    };
    let push_slots = match units % 8 == 0 && hidden % 8 == 0 {
        true => 2 * rows * units * 2,
        false => 0,
    };
    stages + 6 * 8 + 2 * items * 16 + 2 * items * 32 + x_stages + push_slots
}

/// Shared memory of a pushed backward block ([`Plan::push`](super::plan::Plan::push)) of `units`
/// units of a layer of `hidden` at `batch` with elements of `words` 16-bit words, as
/// `recurrence_bwd.cu`'s `BwdTile` lays it out: the tile of the block's gate columns' rows of W_hh
/// (every unit of the cluster, whole 16-row tiles, by whole K steps), the step's gate gradients
/// (whole 8-sample tiles, two buffers), two stages of every block's f32 parts of the block's units
/// (samples in pairs) or the bias gradient's slots where larger, and the stages' mbarriers.
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

/// The batch the wgmma wavefront takes: each warpgroup of a projection block multiplies half of
/// it, wgmma's N of 64 (`recurrence_wgmma_wave.cu`'s PN).
pub(super) const WGMMA_WAVE_BATCH: usize = 128;

/// The samples of a wgmma wavefront's batch group: a projection warpgroup's half of the batch
/// is one group, which it waits for and publishes on its own.
pub(super) const WGMMA_WAVE_GROUP: usize = 64;

/// The gate rows of W_ih a wgmma wavefront's projection block multiplies
/// (`recurrence_wgmma_wave.cu`'s PROJ_ROWS): two of wgmma's M of 64.
pub(super) const WGMMA_PROJECTION_ROWS: usize = 128;

/// The chunks of 128 columns of the input each projection warpgroup's ring holds, each with an
/// mbarrier (`recurrence_wgmma_wave.cu`'s PSLOTS).
pub(super) const WGMMA_PROJECTION_SLOTS: usize = 2;

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
}
