//! A layer's [`Plan`]: how its hidden units and batch are spread over the GPU's multiprocessors
//! for each pass (units a block, batch groups, clusters, the exchange of h, the kernel forms),
//! planned from the rules of [`super::rules`] to fit the device, and the defines, module and
//! launch of each pass's kernel under it.

use super::cell::{Cell, UNIT_STEP};
use super::kernel::{
    allow_smem, forward_smem, function, module, pushed_backward_smem, reg_gates_smem,
    wgmma_bwd_smem, wgmma_bwd_sources, wgmma_smem, wgmma_sources, wgmma_wave_sources,
    wide_backward_fragment_registers, Limits, Operands, Pass, CHUNK_SAMPLES, DEFAULT_CHUNK,
    L1_RESERVE, MAX_BUFFERS, MAX_KERNEL_BATCH, REG_GATES_GROUP_SAMPLES, REG_GATES_MOST_HIDDEN,
    WARPS, WGMMA_BWD_BATCH, WGMMA_BWD_CLUSTER, WGMMA_BWD_HIDDEN, WGMMA_BWD_KERNEL, WGMMA_BWD_UNITS,
    WGMMA_GROUP_SAMPLES, WGMMA_HIDDEN_STEP, WGMMA_KERNEL, WGMMA_MOST_HIDDEN, WGMMA_MOST_SUBGROUPS,
    WGMMA_PROJECTION_ROWS, WGMMA_PROJECTION_SLOTS, WGMMA_REGISTER_UNITS, WGMMA_UNITS,
    WGMMA_WAVE_BATCH, WGMMA_WAVE_GROUP, WGMMA_WAVE_KERNEL, WIDE_BACKWARD_MOST_FRAGMENT_REGISTERS,
    WIDE_BACKWARD_WARPS,
};
use super::launch::{Launch, MAX_GROUPS, PORTABLE_CLUSTER_BLOCKS};
use super::rules::{
    block_units, cell_half_projection, folds_input, most_dividing, one_cluster_operands,
    reg_gates_units, rules_operands, shape_clusters, shape_groups, shape_multicast,
    shape_one_cluster, shape_one_cluster_pushes, shape_transposed, shape_wgmma_backward,
    shape_wgmma_forward, shape_wgmma_side_by_side, shape_wgmma_training, shape_wgmma_units,
    shape_wgmma_wave, shape_wide_backward, shape_wide_backward_chunk, FORWARD_SHARE_MOST_BYTES,
    ONE_CLUSTER_SIZES, WIDE_BACKWARD_MOST_BUFFERS,
};
use super::tuning::{Tuning, WaveTuning};
use candle_core::cuda_backend::cudarc::driver::sys::CUfunction_attribute;
use candle_core::cuda_backend::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig};
use candle_core::cuda_backend::CudaDevice;
use candle_core::{DType, Result};

/// One layer's kernel for one hidden size, batch and dtype, and how it runs on this GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Plan {
    /// The cell whose steps the kernels run.
    pub cell: Cell,
    pub hidden: usize,
    pub batch: usize,
    /// Hidden units per block in the forward and in the backward. The forward's are a multiple
    /// of [`UNIT_STEP`], and grow where a forward with its gates in registers would have batch
    /// groups' clusters share multiprocessors otherwise ([`reg_gates_units`]); the backward's
    /// grow when its clusters would not all be resident at once otherwise.
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
    /// MRING) instead of all of h_{t-1}: in half precision, where the batch takes three chunks or
    /// more, the stage of all of them does not fit, and the forward's weights are in registers (its
    /// tile's bytes then hold the ring; [`Plan::ring_applies`]). bf16 [30, 96-128, 1024] forwards
    /// took 0.90-0.94x of the time a step without multicast
    /// (`results/2026-11-29-h200-batch128-exchange/`).
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
    /// weight tile filled from W_hh transposed ([`Plan::backward_transposed`],
    /// `recurrence_bwd.cu`'s WT_ROWS), which the training forward makes beside its recurrence on a
    /// side stream (`transposed`): [`Tuning::transposed`], by default [`shape_transposed`].
    pub transposed: bool,
    /// Whether a training forward writes that transpose itself (`recurrence_fwd.cu`'s WT_WRITE)
    /// instead of a side stream: where [`Plan::forward_may_transpose`] and
    /// [`Tuning::forward_transposes`] asks, by default where each block's share
    /// ([`Plan::transpose_share_bytes`]) is at most [`FORWARD_SHARE_MOST_BYTES`].
    pub forward_transposes: bool,
    /// Whether the forward keeps its gates in registers (`recurrence_reg_fwd.cu`, REG_GATES):
    /// each warp multiplies 4 units' gate rows by all of h_{t-1} and does their gate math
    /// itself, with no partial sums through shared memory, and helper warps store the outputs
    /// and make the input sums. Where [`Plan::reg_gates_fit`] and [`Tuning::reg_gates`] asks (on
    /// by default): a pushed one-cluster forward of at most 8 samples a batch group, hidden up to
    /// 256, where its steps were shorter than `recurrence_fwd.cu`'s, or as long
    /// (`results/2026-12-02-h200-register-gates/`).
    pub reg_gates: bool,
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
    /// Whether a layer-by-layer backward through L2 (neither pushed, in clusters, in a wavefront
    /// nor on wgmma; half elements) runs its blocks in [`WIDE_BACKWARD_WARPS`] warps instead of
    /// [`WARPS`], each warp's fragments of the weight tile in its registers for the whole
    /// sequence (`recurrence_bwd.cu`'s BWD_WREG, L2_IN_REGS) instead of read from shared memory at
    /// every step: [`Tuning::wide_backward`] asks, by default [`shape_wide_backward`]; taken where
    /// it fits ([`Plan::with_wide_backward`]). Its chunk buffers (`buffers`) are counted for its
    /// warps.
    pub wide_backward: bool,
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
            reg_gates: false,
            wgmma: false,
            wgmma_backward: false,
            wide_backward: false,
            bf16_partials: false,
            wgmma_subgroups: 1,
            scaled: false,
        }
    }
}

impl Plan {
    /// The plan for `cell` at `(hidden, batch, dtype)` on `dev` (with room for the backward
    /// when `train`), of `layers` that a launch may run at once (a wavefront's) in `directions`
    /// (2: side by side where they fit, `units.rs`), the first of them taking `input` (0: a
    /// forward folds none), tuned by `tuning`, or why there is none: a dtype or batch the kernels
    /// do not take (the chooser's rules keep those from asking; a plan stays valid whoever asks),
    /// an odd hidden size, or blocks that do not fit in shared memory.
    pub fn new(
        dev: &CudaDevice,
        (cell, hidden, batch, dtype): (Cell, usize, usize, DType),
        (train, (layers, directions), input): (bool, (usize, usize), usize),
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
            if let Some(plan) = Self::wgmma_forward(limits, shape, (tuning, layers, directions)) {
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
                    let plan = Plan {
                        reg_gates: tuning.reg_gates && plan.reg_gates_fit(),
                        ..plan
                    };
                    let plan = match plan.reg_gates {
                        true => plan.with_forward_clusters_alone(dev, limits.smem),
                        false => plan,
                    };
                    let wgmma_backward = tuning
                        .wgmma_backward
                        .unwrap_or_else(|| shape_wgmma_backward(hidden, batch));
                    let plan = match train && wgmma_backward {
                        true => Self::with_wgmma_backward(limits, plan, tuning),
                        false => plan,
                    };
                    return Ok(match train {
                        true => plan.with_wide_backward(limits.smem, (tuning, layers)),
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
            reg_gates: false,
            wgmma: true,
            wgmma_subgroups,
            ..plan
        }
    }

    /// This training plan (of `layers` layers) with a wide backward ([`Plan::wide_backward`])
    /// in chunks of the tuning's gate columns (by default [`shape_wide_backward_chunk`]'s) where
    /// `tuning` asks for one (by default [`shape_wide_backward`]) and it applies: a
    /// layer-by-layer backward through L2 (not pushed, no clusters, not on wgmma) in half
    /// elements that no wavefront takes (one layer, batch groups or one cluster a group:
    /// `wave.rs`'s `Wave::new` takes none of them), whose fragments fit a thread's registers
    /// beside the rest, and whose blocks fit in `smem` bytes with their chunk buffers counted
    /// again for the wider blocks; else this plan.
    fn with_wide_backward(self, smem: usize, (tuning, layers): (&Tuning, usize)) -> Plan {
        let units = self.units[Pass::Backward as usize];
        let gates = self.cell.gates();
        let chunk = tuning
            .chunk
            .unwrap_or_else(|| shape_wide_backward_chunk(self.cell, self.hidden));
        let fragments = wide_backward_fragment_registers(gates, (self.hidden, units, chunk));
        let applies = self.elem.words() == 1
            && !self.wgmma_backward
            && !self.pass_push(Pass::Backward)
            && self.cluster(Pass::Backward) == 1
            && (layers == 1 || self.groups > 1 || self.one_cluster)
            && fragments <= WIDE_BACKWARD_MOST_FRAGMENT_REGISTERS;
        let asked = tuning.wide_backward.unwrap_or_else(|| {
            shape_wide_backward(self.cell, self.hidden, (self.group_batch(), chunk))
        });
        if !(applies && asked) {
            return self;
        }
        let mut wide = Plan {
            wide_backward: true,
            chunk,
            ..self
        };
        wide.buffers = wide
            .most_buffers(smem)
            .min(tuning.wide_buffers.unwrap_or(WIDE_BACKWARD_MOST_BUFFERS));
        match wide.smem_bytes(Pass::Backward) <= smem {
            true => wide,
            false => self,
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

    /// The inference plan of `layers` layers in `directions` on the wgmma forward
    /// ([`Plan::wgmma`]) where it fits ([`Plan::wgmma_fits`]): two directions in two subgroups
    /// where [`shape_wgmma_side_by_side`] takes them, half elements and both directions' grids
    /// then fit at once (the tuning asking for no subgroups), else in the rule's subgroups
    /// ([`Plan::in_rule_subgroups`]); `None` elsewhere.
    fn wgmma_forward(
        limits: Limits,
        (cell, hidden, batch, elem): (Cell, usize, usize, Operands),
        (tuning, layers, directions): (&Tuning, usize, usize),
    ) -> Option<Plan> {
        let build =
            |asked| Self::wgmma_forward_in(limits, (cell, hidden, batch, elem), tuning, asked);
        let side = tuning.wgmma_subgroups.is_none()
            && directions == 2
            && elem != Operands::Tf32
            && shape_wgmma_side_by_side(hidden, batch);
        let paired = side.then(|| build(2)).flatten().filter(|plan| {
            plan.wgmma_subgroups == 2 && 2 * plan.grid_blocks(Pass::Forward) <= limits.sms
        });
        paired.or_else(|| Self::in_rule_subgroups(limits, (tuning, (layers, hidden, batch)), build))
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
            chunk: tuning.chunk.unwrap_or(DEFAULT_CHUNK),
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
            reg_gates: false,
            wgmma: true,
            wgmma_backward: false,
            wide_backward: false,
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
            chunk: tuning.chunk.unwrap_or(DEFAULT_CHUNK),
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
            reg_gates: false,
            wgmma: false,
            wgmma_backward: false,
            wide_backward: false,
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
                asked => (layers == 1 && input > 0 && input % 8 == 0)
                    .then_some((input, asked == Some(true))),
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

    /// This plan with the forward's units a block that [`reg_gates_units`] gives a forward with
    /// its gates in registers (wider blocks where its batch groups' clusters would share
    /// multiprocessors), where those fit in `smem` bytes a block and every group's cluster is
    /// resident at once.
    fn with_forward_clusters_alone(self, dev: &CudaDevice, smem: usize) -> Plan {
        let forward = Pass::Forward as usize;
        let alone = |blocks| self.alone_clusters(dev, smem, blocks).unwrap_or(0);
        let units = reg_gates_units(self.hidden, self.groups, self.units[forward], alone);
        if units == self.units[forward] {
            return self;
        }
        let mut wider = self;
        wider.units[forward] = units;
        let fits = wider.smem_bytes(Pass::Forward) <= smem
            && wider
                .resident_clusters(dev, Pass::Forward)
                .is_some_and(|r| r >= self.groups);
        match fits {
            true => wider,
            false => self,
        }
    }

    /// How many one-cluster forwards of `blocks` blocks the GPU holds at once with each block on
    /// a multiprocessor of its own (asked of this plan's forward kernel given all of a block's
    /// `smem` bytes of shared memory, which is then set back; none where the kernel does not
    /// build or the driver cannot say).
    fn alone_clusters(&self, dev: &CudaDevice, smem: usize, blocks: usize) -> Option<usize> {
        let f = self.kernel(dev, Pass::Forward).ok()?;
        allow_smem(&f, smem).ok()?;
        let stream = dev.cuda_stream();
        let mut launch = self.launch(&stream, &f, Pass::Forward);
        launch.cfg.grid_dim.0 = blocks as u32;
        launch.cluster = blocks;
        let alone = launch.alone_clusters(smem).ok();
        allow_smem(&f, self.smem_bytes(Pass::Forward)).ok()?;
        alone
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
            side: None,
        }
    }

    /// The grid, block and shared memory of `pass`'s launch.
    fn launch_config(&self, pass: Pass) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.blocks(pass) as u32, self.pass_groups(pass) as u32, 1),
            block_dim: (self.pass_warps(pass) as u32 * 32, 1, 1),
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

    /// Whether the forward can keep its gates in registers ([`Plan::reg_gates`]): a pushed
    /// one-cluster forward (not the wgmma kernel's) of half elements (not scaled f32), at most 8
    /// samples a batch group, units a multiple of 4 (two warps a 4 units: a gate warp and its
    /// helper), hidden and a folded input up to 256 (16 K steps in registers).
    pub fn reg_gates_fit(&self) -> bool {
        let units = self.units[Pass::Forward as usize];
        !self.wgmma
            && self.one_cluster
            && self.pass_push(Pass::Forward)
            && self.elem != Operands::Tf32
            && !self.scaled
            && self.group_batch() <= REG_GATES_GROUP_SAMPLES
            && units % 4 == 0
            && units / 4 * 2 <= WARPS
            && self.kpad() <= REG_GATES_MOST_HIDDEN
            && self.input <= REG_GATES_MOST_HIDDEN
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

    /// Blocks of the grid of `pass`: [`Plan::blocks`] for each of its batch groups.
    pub fn grid_blocks(&self, pass: Pass) -> usize {
        self.pass_groups(pass) * self.blocks(pass)
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

    /// Whether `pass` keeps its gates in registers ([`Plan::reg_gates`]: the forward).
    pub fn pass_reg_gates(&self, pass: Pass) -> bool {
        pass == Pass::Forward && self.reg_gates
    }

    /// Whether `pass` runs wide ([`Plan::wide_backward`]: the backward).
    pub fn pass_wide(&self, pass: Pass) -> bool {
        pass == Pass::Backward && self.wide_backward
    }

    /// Warps of a block of `pass`'s layer-by-layer kernel: [`WARPS`], or with its gates in
    /// registers ([`Plan::reg_gates`]) a gate warp and a helper for each 4 units, and no more
    /// (no warp idles through the steps), or a wide backward's ([`Plan::wide_backward`]).
    pub fn pass_warps(&self, pass: Pass) -> usize {
        match (self.pass_reg_gates(pass), self.pass_wide(pass)) {
            (true, _) => self.units[pass as usize] / 4 * 2,
            (_, true) => WIDE_BACKWARD_WARPS,
            _ => WARPS,
        }
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
            Pass::Forward if self.pass_reg_gates(pass) => reg_gates_smem(
                self.units[pass as usize],
                self.hidden,
                self.group_batch(),
                self.input,
            ),
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
        let warps = self.pass_warps(Pass::Backward);
        tile_rows * (columns + 8) * 2 + part + warps * buffers.max(sums).next_multiple_of(16)
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
            format!("-DNWARPS={}", self.pass_warps(pass)),
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
        if self.pass_reg_gates(pass) {
            defines.push("-DREG_GATES=1".into());
        }
        if self.pass_wide(pass) {
            defines.push("-DBWD_WREG=1".into());
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
            "candle_cudnn_rnn_{}_{}_h{}_b{}_g{}_u{}_n{}_c{}_m{}{}_ch{}{}{}{}{}{}{}_{}",
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
            match (self.pass_reg_gates(pass), self.pass_wide(pass)) {
                (true, _) => "_rg",
                (_, true) => "_wide",
                _ => "",
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
        let recurrence = self.grid_blocks(Pass::Forward);
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A training plan with its backward on wgmma: the batch of 128 as one group at hidden 1024 on
    /// 64 blocks in clusters of 8, its own module (compiled for sm_90a, W_hh or its transpose) with
    /// the layout's shared memory; the helpers' module (the transpose, the bias parts' sum) and the
    /// forward's stay the plain plan's. The rule takes layers of 1024 at batch 128.
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

    /// A bidirectional layer infers on the wgmma forward at [*, 128, 512] in two subgroups, whose
    /// grids fit side by side on 132 multiprocessors (one subgroup's do not), in half elements
    /// only, and where the tuning asks for no subgroups; one direction in one subgroup.
    #[test]
    fn two_directions_infer_on_the_wgmma_forward_in_two_subgroups_where_both_fit() {
        let plan = |tuning: &Tuning, (hidden, batch), elem, directions| {
            let shape = (Cell::Lstm, hidden, batch, elem);
            Plan::wgmma_forward(sm90(132), shape, (tuning, 1, directions))
                .expect("the wgmma forward fits")
        };
        let rule = Tuning::DEFAULT;
        let paired = plan(&rule, (512, 128), Operands::F16, 2);
        assert_eq!(paired.wgmma_subgroups, 2);
        assert!(2 * paired.grid_blocks(Pass::Forward) <= 132);
        let alone = plan(&rule, (512, 128), Operands::F16, 1);
        assert_eq!(alone.wgmma_subgroups, 1);
        assert!(2 * alone.grid_blocks(Pass::Forward) > 132);
        assert_eq!(
            plan(&rule, (512, 128), Operands::Tf32, 2).wgmma_subgroups,
            1
        );
        assert_eq!(
            plan(&rule, (1024, 128), Operands::F16, 2).wgmma_subgroups,
            1
        );
        let one = Tuning {
            wgmma_subgroups: Some(1),
            ..Tuning::DEFAULT
        };
        assert_eq!(plan(&one, (512, 128), Operands::F16, 2).wgmma_subgroups, 1);
    }

    /// f32 operands (TF32 math) infer on the wgmma forward as scaled f16 ones (`F16_SCALED`):
    /// f16 elements, an f32 projection (its rows of xs padded by 4 floats), the inference's
    /// 16-unit blocks, a module of their own; not as the wgmma wavefront (one subgroup, layer by
    /// layer, at [*, 128, 3 x 512]), and not in training.
    #[test]
    fn f32_operands_infer_on_the_wgmma_forward_as_scaled_f16() {
        let rule = Tuning::DEFAULT;
        let plan = |cell, (hidden, batch), elem, layers| {
            Plan::wgmma_forward(sm90(132), (cell, hidden, batch, elem), (&rule, layers, 1))
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

    /// A wide backward runs its blocks in 16 warps with its tile's fragments in registers: its
    /// launch, defines and module say so, its shared memory counts 16 warps' chunk buffers, and
    /// the forward is as before. The fragments of the shapes measured take 64 registers.
    #[test]
    fn a_wide_backward_runs_16_warps_with_its_fragments_in_registers() {
        let plan = Plan {
            units: [32, 32],
            buffers: 3,
            ..Plan::example(Cell::Lstm, 512, 16)
        };
        let wide = Plan {
            wide_backward: true,
            ..plan
        };
        assert_eq!(wide.pass_warps(Pass::Backward), WIDE_BACKWARD_WARPS);
        assert_eq!(wide.pass_warps(Pass::Forward), WARPS);
        assert_eq!(wide.launch_config(Pass::Backward).block_dim, (512, 1, 1));
        assert_defines(&wide, Pass::Backward, &["-DNWARPS=16", "-DBWD_WREG=1"]);
        assert!(!plan
            .defines(Pass::Backward)
            .contains(&"-DBWD_WREG=1".to_string()));
        assert_eq!(wide.defines(Pass::Forward), plan.defines(Pass::Forward));
        assert_modules_differ_in(&wide, &plan, Pass::Backward);
        // The tile (32 units by 2048 gate columns, 8 padding), then each warp's three buffers
        // of 16 samples by 64 columns (larger than its 16 x (32 + 4) f32 sums).
        let per_warp = 3 * 16 * 64 * 2;
        assert_eq!(
            wide.smem_bytes(Pass::Backward),
            32 * 2056 * 2 + 16 * per_warp
        );
        assert_eq!(
            plan.smem_bytes(Pass::Backward),
            32 * 2056 * 2 + 8 * per_warp
        );
        let registers = |gates, shape| wide_backward_fragment_registers(gates, shape);
        assert_eq!(registers(4, (512, 32, 64)), 64);
        assert_eq!(registers(3, (512, 32, 64)), 64);
        assert_eq!(registers(4, (1024, 16, 64)), 64);
        assert_eq!(registers(4, (1024, 32, 64)), 128);
    }

    /// A GRU at hidden 512 in groups of 16 samples runs its backward wide in chunks of 32 gate
    /// columns (3 for each of the 16 warps), and not at all where the tuning asks for chunks of
    /// 64; an LSTM's wide backward keeps chunks of 64; neither moves a plan that does not run
    /// wide. A wide backward's warps take [`WIDE_BACKWARD_MOST_BUFFERS`] chunk buffers where
    /// shared memory holds more, or as many as the tuning asks for and it holds.
    #[test]
    fn a_gru_at_512_runs_wide_in_chunks_of_32() {
        let half = |cell, batch, groups| Plan {
            units: [32, 32],
            elem: Operands::F16,
            groups,
            ..Plan::example(cell, 512, batch)
        };
        let widened_with = |plan: Plan, chunk, wide_buffers| {
            let tuning = Tuning {
                chunk,
                wide_buffers,
                ..Tuning::DEFAULT
            };
            plan.with_wide_backward(H100_SMEM, (&tuning, 1))
        };
        let widened = |plan: Plan, chunk| {
            let wide = widened_with(plan, chunk, None);
            (wide.wide_backward, wide.chunk)
        };
        assert_eq!(widened(half(Cell::Gru, 128, 8), None), (true, 32));
        assert_eq!(widened(half(Cell::Gru, 128, 8), Some(64)), (false, 64));
        assert_eq!(widened(half(Cell::Gru, 32, 4), Some(64)), (true, 64));
        assert_eq!(widened(half(Cell::Lstm, 128, 8), None), (true, 64));
        assert_eq!(widened(half(Cell::Lstm, 128, 8), Some(32)), (true, 32));
        let narrow = Plan {
            hidden: 256,
            ..half(Cell::Gru, 128, 8)
        };
        assert_eq!(widened(narrow, None), (false, 64));
        // Shared memory holds 7 buffers a warp of the GRU's chunks of 32; the rule takes 3, the
        // tuning may ask for more.
        let buffers = |asked| widened_with(half(Cell::Gru, 128, 8), None, asked).buffers;
        assert_eq!(buffers(None), WIDE_BACKWARD_MOST_BUFFERS);
        assert_eq!(buffers(Some(8)), 7);
        assert_eq!(buffers(Some(2)), 2);
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

    /// The forward keeps its gates in registers only where its kernel takes the plan (a pushed
    /// one-cluster forward in half precision, 8 samples a group, 4-unit tiles, hidden and input
    /// up to 256); such a plan's forward module, block and shared memory are that kernel's, its
    /// backward's unchanged.
    #[test]
    fn the_forward_keeps_its_gates_in_registers_where_its_kernel_fits() {
        // LSTM [*, 128, 128]: 16 groups of 8, each one cluster of 8 blocks of 16 units, the
        // input of 128 folded in.
        let fits = Plan {
            units: [16, 16],
            groups: 16,
            one_cluster: true,
            push: [true, true],
            input: 128,
            ..Plan::example(Cell::Lstm, 128, 128)
        };
        assert!(fits.reg_gates_fit());
        let no = |plan: Plan, why: &str| assert!(!plan.reg_gates_fit(), "{why}");
        no(Plan { groups: 8, ..fits }, "16 samples a group");
        no(
            Plan {
                push: [false, true],
                ..fits
            },
            "not pushed",
        );
        no(
            Plan {
                one_cluster: false,
                ..fits
            },
            "no cluster",
        );
        no(
            Plan {
                elem: Operands::Tf32,
                ..fits
            },
            "f32 operands",
        );
        no(
            Plan {
                units: [18, 16],
                ..fits
            },
            "units past 4-unit tiles",
        );
        no(
            Plan {
                units: [20, 16],
                ..fits
            },
            "10 warps",
        );
        no(
            Plan {
                hidden: 272,
                ..fits
            },
            "17 K steps",
        );
        no(Plan { input: 264, ..fits }, "an input of 17 K steps");
        no(
            Plan {
                wgmma: true,
                ..fits
            },
            "the wgmma forward",
        );
        let on = Plan {
            reg_gates: true,
            ..fits
        };
        // Two stages of 8 rows of 136 elements, six mbarriers, the input sums' and the
        // records' two slots of 4 x 32 items, the helpers' two stages of x, and (16 units, h of
        // 128: 16-byte pushes) two slots of the block's h_t for 8 samples.
        let smem = 2 * 8 * 136 * 2
            + 48
            + 2 * 128 * 16
            + 2 * 128 * 32
            + 4 * 2 * 8 * 136 * 2
            + 2 * 8 * 16 * 2;
        assert_eq!(on.smem_bytes(Pass::Forward), smem);
        // 4-unit blocks push 8 bytes a store: no slots of h_t.
        let four = Plan {
            units: [4, 4],
            ..on
        };
        let smem = 2 * 8 * 136 * 2 + 48 + 2 * 32 * 16 + 2 * 32 * 32 + 2 * 8 * 136 * 2;
        assert_eq!(four.smem_bytes(Pass::Forward), smem);
        assert_eq!(
            on.smem_bytes(Pass::Backward),
            fits.smem_bytes(Pass::Backward)
        );
        assert_eq!(on.pass_warps(Pass::Forward), 8);
        assert_eq!(
            Plan {
                units: [8, 8],
                ..on
            }
            .pass_warps(Pass::Forward),
            4
        );
        assert_eq!(on.pass_warps(Pass::Backward), WARPS);
        assert_eq!(on.launch_config(Pass::Forward).block_dim, (256, 1, 1));
        let defines = on.defines(Pass::Forward);
        assert!(
            defines.contains(&"-DREG_GATES=1".to_string()),
            "{defines:?}"
        );
        assert!(!on
            .defines(Pass::Backward)
            .contains(&"-DREG_GATES=1".to_string()));
        assert_ne!(
            on.module_name(Pass::Forward),
            fits.module_name(Pass::Forward)
        );
        assert_eq!(
            on.module_name(Pass::Backward),
            fits.module_name(Pass::Backward)
        );
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
