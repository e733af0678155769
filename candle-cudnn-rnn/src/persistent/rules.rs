//! The planner's rules by shape: for each choice of a [`Plan`](super::plan::Plan) that the tuning
//! ([`super::tuning::Tuning`]) leaves to the call, the measured rule that makes it (batch groups,
//! one-cluster sizes, clusters, multicast, the wgmma kernels, units a block, the folded input
//! projection, the register-gates forward's wider blocks), each with the measurements that set
//! it. [`Plan::new`](super::plan::Plan::new) applies them.

use super::cell::{Cell, UNIT_STEP};
use super::kernel::{
    Operands, CHUNK_SAMPLES, DEFAULT_CHUNK, REG_GATES_MOST_UNITS, WARPS, WGMMA_BWD_BATCH,
    WGMMA_BWD_HIDDEN, WGMMA_GROUP_SAMPLES, WGMMA_MOST_HIDDEN, WGMMA_REGISTER_UNITS, WGMMA_UNITS,
};
use super::launch::{MOST_CLUSTER_BLOCKS, PORTABLE_CLUSTER_BLOCKS};
use candle_core::DType;

/// Whether a layer-by-layer backward in half precision runs on the wgmma kernel
/// ([`Plan::wgmma_backward`](super::plan::Plan::wgmma_backward)) where the tuning leaves it to the
/// shape: where the training forward runs on wgmma ([`shape_wgmma_training`]) at
/// [`WGMMA_BWD_HIDDEN`], the one hidden size it takes, so layers of 1024 at batch 128. There
/// graphed training of one layer took 0.93-0.94x of the wgmma forward's with the layer-by-layer
/// backward (LSTM [30, 128, 1024] 5.64 against 6.07 µs an example, GRU 5.24 against 5.55, LSTM
/// [200, 128, 1024] 35.6 against 38.5; `results/2026-11-30-h200-wgmma-backward/`). Stacks of 1024
/// train here where the chooser gives them ours: eagerly (graphed, cuDNN's `Standard` keeps them;
/// `choose.rs`'s `wgmma_leads`).
pub(crate) fn shape_wgmma_backward(hidden: usize, batch: usize) -> bool {
    hidden == WGMMA_BWD_HIDDEN && batch == WGMMA_BWD_BATCH && shape_wgmma_training(hidden, batch)
}

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

/// Whether an inference forward in half precision runs on the wgmma kernel
/// ([`Plan::wgmma`](super::plan::Plan::wgmma)) where the tuning leaves it to the shape, in whole
/// groups: at hidden [`WGMMA_MOST_HIDDEN`] from batch [`WGMMA_FROM_BATCH`], at hidden
/// [`WGMMA_HALF_HIDDEN`] from batch [`WGMMA_HALF_HIDDEN_FROM_BATCH`] to
/// [`WGMMA_HALF_HIDDEN_BATCH`]. At hidden 1024 the layer-by-layer kernel is bound by the exchange
/// through L2 and cuDNN's `Standard` served: in the lab a whole step of the wgmma forward took
/// 4.6-4.7 µs at [128, 1024] against the kernel's 8.6-9.1 in two groups and `Standard`'s 9.3-10.3
/// (`results/2026-11-30-h200-wgmma-hybrid/`). In the op, graphed forwards at [*, 96-128, 1024] took
/// 0.61-0.81x of `Standard`'s time, and LSTM [30, 64, 1024] 2.57 against the default's 2.98 µs an
/// example; but LSTM [30, 32, 1024] 4.7 against the layer-by-layer kernel's 3.8
/// (`results/2026-11-30-h200-wgmma-forward/`). With the gates summed in registers, graphed forwards
/// at batch 128 and hidden 512 took 0.84-0.93x of the layer-by-layer kernels' time (the stacks
/// layer by layer against their wavefront: LSTM [30, 128, 3 x 512] 2.40 against 2.81, GRU [200,
/// 128, 3 x 512] 13.9 against 16.3), but LSTM [30, 64, 512] 1.52 against 1.39
/// (`results/2026-11-30-h200-wgmma-register-gates/`). On 16-unit blocks ([`shape_wgmma_units`])
/// LSTM [30, 32, 1024] took 3.33 against the layer-by-layer kernel's 3.83, GRU 3.20 against 3.39
/// (`results/2026-12-01-h200-wgmma-16-units/`): one group from batch 32. At hidden 512 below batch
/// 128 they took 0.78-0.93x of the layer-by-layer kernels' time graphed (LSTM [200, 64, 512] 7.51
/// against 8.79 µs an example, [30, 96, 512] 0.90 against 1.16, [30, 64, 3 x 512] 3.67 against
/// 4.00; GRU [30, 96, 512] 0.87 against 1.01), GRU [30, 64, 512] as long (1.21 against 1.20),
/// eagerly alike (`results/2026-12-01-h200-wgmma-train64/`); at batch 32, 1.04-1.24x (LSTM [30, 32,
/// 512] 2.41 against 2.11): from batch 64.
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
/// projection; at 512 the backward in its own batch groups,
/// [`Plan::pass_groups`](super::plan::Plan::pass_groups)) where the tuning leaves it to the shape:
/// at hidden [`WGMMA_HALF_HIDDEN`] and [`WGMMA_MOST_HIDDEN`] at batch [`WGMMA_HALF_HIDDEN_BATCH`],
/// and at [`WGMMA_MOST_HIDDEN`] at batch [`WGMMA_TRAINING_HALF_BATCH`] too. Graphed training at
/// hidden 512 took 0.93-0.99x of the layer-by-layer forward's time (LSTM [200, 128, 3 x 512] 37.9
/// against 40.8 µs an example, GRU [30, 128, 512] 1.97 against 1.99), its whole batch in the
/// backward's 8 groups; the backward in the forward's 4 groups instead took 1.12-1.14x
/// (`results/2026-11-30-h200-wgmma-train-forward/`). At hidden 1024 it took 0.96-0.97x of cuDNN's
/// `Standard` on one layer (LSTM [30, 128, 1024] 6.12 against 6.34, GRU 5.60 against 5.76) but
/// 1.04-1.22x on stacks of 3, which `Standard` runs with its layers overlapped (GRU [200, 128, 3 x
/// 1024] 104.6 against 85.8; `results/2026-11-30-h200-wgmma-train-1024/`): graphed, the chooser
/// gives those `Standard`. Eagerly, where it gives stacks of 1024 ours, both wgmma kernels trained
/// them in 0.69-0.72x of the layer-by-layer kernels' time (LSTM [30, 128, 3 x 1024] 17.35 against
/// 24.18 µs an example, GRU [200, 128, 3 x 1024] 99.0 against 143.5;
/// `results/2026-12-01-h200-stack-1024-profile/`, "Stacks of 1024 on the wgmma kernels"). At batch
/// 64 of 1024 (the backward layer by layer) it took 0.93-0.94x of the layer-by-layer forward's time
/// graphed and 0.88-0.99x eagerly, one layer and 3 x 1024 (LSTM [30, 64, 3 x 1024] 19.38 against
/// 20.93 µs an example; `results/2026-12-01-h200-wgmma-16-units/`, "Training at batch 64 of 1024").
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
/// and the upper layers' projection blocks fit,
/// [`Plan::wgmma_subgroups`](super::plan::Plan::wgmma_subgroups) 2) where the tuning leaves it to
/// the shape and the wavefront fits (else one subgroup layer by layer, which is faster than two).
/// With the projections' input loaded by tensor copies, graphed inference forwards at [*, 128, 3 x
/// 512] took 0.73-0.85x of the time layer by layer, and training its time through the wavefront's
/// forward (`results/2026-12-01-h200-wgmma-wave/`, "Tensor copies").
pub(crate) fn shape_wgmma_wave(layers: usize, hidden: usize, batch: usize) -> bool {
    layers == WGMMA_WAVE_LAYERS && hidden == WGMMA_HALF_HIDDEN && batch == WGMMA_HALF_HIDDEN_BATCH
}

/// See [`shape_wgmma_wave`]: the stacks measured.
const WGMMA_WAVE_LAYERS: usize = 3;

/// Whether a bidirectional layer's inference forward on the wgmma kernel runs in two subgroups a
/// block ([`Plan::wgmma_subgroups`](super::plan::Plan::wgmma_subgroups) 2), which halves its
/// blocks so that both directions' grids fit at once, side by side (`units.rs`). Alone two
/// subgroups are slower ([`shape_wgmma_wave`]), side by side faster: graphed f16 inference
/// forwards at [30, 128, 512] (1 to 3 layers, LSTM and GRU, and [200, 128, 3 x 512]) took
/// 0.90-0.92x the time of one subgroup, but training forwards in two trained 1.07x slower
/// (`results/2026-12-02-h200-bidir-layer-plans/`). At [30, 96, 512] and [30, 128, 1024] two
/// changed nothing.
pub(crate) fn shape_wgmma_side_by_side(hidden: usize, batch: usize) -> bool {
    hidden == WGMMA_HALF_HIDDEN && batch == WGMMA_HALF_HIDDEN_BATCH
}

/// See [`shape_wgmma_forward`]: the largest batch measured ahead at [`WGMMA_HALF_HIDDEN`] (past
/// 128 the layer-by-layer kernels were not measured against it); the one batch of the wgmma
/// training forward there ([`shape_wgmma_training`]) and of its wavefront ([`shape_wgmma_wave`]).
const WGMMA_HALF_HIDDEN_BATCH: usize = 128;

/// Batch groups of a call of `layers` of `hidden` units at `batch` in `elem` (`train`: a training
/// call), where the tuning leaves it to the shape; the planner takes fewer where they do not divide
/// the batch or fit ([`Plan::new`](super::plan::Plan::new)). In one group a batch runs within each
/// step on every block, which takes in all of h_{t-1}; in groups each block takes only its group's.
/// A plan of f32 operands on scaled f16 ones (the default in TF32,
/// [`Plan::scaled`](super::plan::Plan::scaled)) asks with f16 for `elem` ([`rules_operands`]); the
/// TF32 counts below serve its TF32 products (`CANDLE_RNN_PERSISTENT_F16_SCALED=0`). Graphed on an
/// H100 (`results/2026-11-27-h100-groups-sanitize/`), the best was:
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
pub(super) fn most_dividing(groups: usize, batch: usize) -> usize {
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

/// Whether a one-cluster plan's forward and backward at `hidden` push what a step exchanges through
/// distributed shared memory where they can ([`Plan::push`](super::plan::Plan::push): one chunk of
/// the batch), with no barrier between the steps. Forward: graphed bf16 forwards took 0.60-0.93x
/// the time of the exchange through L2 behind the cluster's barrier ([30, 8, 256] 6.84 µs an
/// example against 8.18, [30, 32, 128] in 8 groups 1.03-1.19 against 1.52-1.62; training
/// 0.84-0.98x), `results/2026-11-27-h100-async-push/`. The barrier's release, which waits for the
/// stores before it, had taken a third of a small step (`results/2026-11-27-h100-small-phases/`).
/// Backward: each block pushes its parts of the cluster's dh_{t-1}; graphed bf16 training took
/// 0.72-0.94x the time of the backward through L2 ([30, 32, 128] in 8 groups: LSTM 2.70 µs an
/// example against 3.30, GRU 2.41 against 3.09; [200, 32, 128] 0.72-0.74x; hidden 256 0.92-0.94x),
/// the harness's launch at hidden 128 and batch 4 37.6 µs against 64.0, bit-identical
/// (`results/2026-11-27-h100-pushed-backward/`); TF32 training 0.78-0.95x ([30, 32, 128] GRU 3.68
/// against 4.43). Pushing the gate gradients themselves, twice the bytes, had been slower than the
/// barrier. The TF32 forward pushed (H200, `results/2026-11-29-h200-tf32-push/`): forwards
/// 0.69-0.84x ([30, 32, 128] LSTM 1.40 against 1.85, GRU 1.28 against 1.70; [200, 32, 128] GRU 6.7
/// against 9.7; [30, 8, 256] LSTM 8.2 against 9.8), training 0.81-0.93x. Past hidden
/// [`PUSHED_BACKWARD_MOST_HIDDEN`] (512 in 16 blocks of 32 units) the backward does not push:
/// graphed bf16 training took 0.93-0.98x of the pushed backward's time (GRU [30, 32, 512] 4.84 µs
/// an example against 5.14, LSTM [200, 32, 512] 31.6 against 32.3), where at hidden 384 (24 units)
/// and 256 the pushed one led by 7-19% (`results/2026-11-29-h200-cluster16/`, push-split). With
/// its tile in registers (`recurrence_bwd.cu`'s PUSH_IN_REGS) the pushed backward at 512 still
/// trained slower, graphed f16: [30, 32, 512] LSTM 5.28 against 5.00, GRU 4.81 against 4.54;
/// [200, 32, 512] 29.8 against 28.0 and 27.8 against 25.7 (`results/2026-12-02-h200-push16-wreg/`).
pub(super) fn shape_one_cluster_pushes(hidden: usize) -> [bool; 2] {
    [true, hidden <= PUSHED_BACKWARD_MOST_HIDDEN]
}

/// See [`shape_one_cluster_pushes`].
const PUSHED_BACKWARD_MOST_HIDDEN: usize = 384;

/// Whether a layer-by-layer backward through L2 of `cell` at `hidden` in batch groups of
/// `group_batch` samples, in chunks of `chunk` gate columns, that can run wide (16 warps, each
/// warp's fragments of the weight tile in registers:
/// [`Plan::wide_backward`](super::plan::Plan::wide_backward)) does, where the tuning leaves it to
/// the shape: where graphed training ran faster so (`results/2026-12-02-h200-wide-backward/`,
/// §3), an LSTM at hidden 512, a GRU at 1024, and a GRU at 512 in chunks of 32 or in groups of up
/// to [`WIDE_GRU_512_MOST_SAMPLES`]. A GRU's 24 chunks of 64 gate columns at 512 fall unevenly on
/// 16 warps: in groups of 16 samples it ran slower wide, where its 48 chunks of 32 did not
/// (`results/2026-12-02-h200-wide-chunks/`); so did an LSTM at 1024.
pub(crate) fn shape_wide_backward(
    cell: Cell,
    hidden: usize,
    (group_batch, chunk): (usize, usize),
) -> bool {
    match (cell, hidden) {
        (Cell::Lstm, 512) | (Cell::Gru, 1024) => true,
        (Cell::Gru, 512) => chunk == 32 || group_batch <= WIDE_GRU_512_MOST_SAMPLES,
        _ => false,
    }
}

/// The most chunk buffers a warp of a wide backward has, where the tuning leaves it to the
/// planner (shared memory held 5-8 at hidden 512). With 3, graphed f16 training took 0.97-0.98x
/// the time it took with as many as fit at LSTM [*, 32, 512] and GRU [30, 128, 512], 0.99x at GRU
/// [30, 32, 512] (in chunks of 32), and as long at GRU [30, 32, 1024] (which has 3) and the
/// [30, 128, 3 x 512] stack (2) (`results/2026-12-02-h200-wide-chunks/`, §6). Fewer buffers spill
/// less (ptxas: 40 bytes against 60-80 at 4-5 in an LSTM's groups of 8 at 512), and each warp
/// still has 2 of its 2-3 chunks of K a step in flight ahead of its products.
pub(crate) const WIDE_BACKWARD_MOST_BUFFERS: usize = 3;

/// Gate columns per chunk of a wide backward's product
/// ([`Tuning::chunk`](super::tuning::Tuning::chunk)) of `cell` at `hidden`
/// where the tuning leaves it to the shape: 32 for a GRU at 512, whose 1536 gate columns then
/// fall in 48 chunks, 3 for each of the 16 warps (in chunks of 64, 24 chunks: 12 warps take 2 and
/// 4 none). Graphed f16 training took 0.91-0.99x the time it took in 64s at batches 32-128, and as
/// long at 256 (`results/2026-12-02-h200-wide-chunks/`, §3). Else [`DEFAULT_CHUNK`] (an LSTM at
/// 512 and 1024, and a GRU at 1024, ran slower in 32s).
pub(crate) fn shape_wide_backward_chunk(cell: Cell, hidden: usize) -> usize {
    match (cell, hidden) {
        (Cell::Gru, 512) => 32,
        _ => DEFAULT_CHUNK,
    }
}

/// See [`shape_wide_backward`].
const WIDE_GRU_512_MOST_SAMPLES: usize = 8;

/// Whether a pushed forward of `cell` with blocks of `units` units at `group_batch` samples makes
/// its input projection (of `input` columns) itself ([`Plan::input`](super::plan::Plan::input))
/// where the tuning leaves it to the shape: where some of its warps do no gate math
/// (`recurrence_fwd.cu`'s ITEM_WARPS < NWARPS), they make the next step's input products while the
/// others do the step's gate math, up to [`FOLD_MOST_PRODUCTS`] tensor-core tiles' products each a
/// step. In the lab (`results/2026-11-29-h200-folded-input/`), a launch's time against the GEMM's
/// kernel alone: LSTM hidden 128 at 4 and 8 samples 0.90-0.97x (8 products a warp, 6 and 4 free
/// warps); at 256 and 4 samples 1.25x (32 a warp); where every warp has gate math, the products
/// wait behind the step's pushes: 1.08-1.12x at hidden 128 and 16 samples, 1.35x at 256 and 8.
/// Through the op, graphed f16 at hidden 128 and 4-8 samples a group, the GEMM saved too: forwards
/// 0.89-0.90x (LSTM) and 0.96-0.99x (GRU, whose n gate's input products the gate math sums apart),
/// training 0.95-0.96x and 0.99-1.01x.
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

/// Blocks per cluster of the forward's multicast exchange
/// ([`Plan::multicast`](super::plan::Plan::multicast)) of a forward of `blocks` blocks (a batch
/// group's, of `groups`), where the tuning leaves it to the shape: none below [`MULTICAST_FROM`]
/// blocks, else the largest of 8, 4 and 2 that divides them (the planner halves it where its
/// clusters are not all resident). Each step's copies of h_{t-1} out of L2 grow with the blocks
/// that read it: forwards of 64 blocks (hidden 512) ran fastest in clusters of 8, of 128 (hidden
/// 1024, where only clusters of 2 are all resident) in clusters of 2, and of 32 (hidden 256, one
/// group) no faster in any; `results/2026-11-27-h100-multicast/`. In batch groups, from
/// [`GROUPED_MULTICAST_FROM`] blocks a group, clusters of 2: hidden 512 at 8 samples a group (4
/// groups of 32 blocks at batch 32) ran GRU forwards 0.89-0.97x and LSTM training 0.93-0.97x the
/// time without (`results/2026-11-29-h200-forward-2x/`); groups of 16 blocks ([30, 64, 512]) were
/// slower.
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
/// ([`Plan::transposed`](super::plan::Plan::transposed)) where the tuning leaves it to the planner:
/// in half precision, where a layer's W_hh (`gh` x `hidden` elements of `elem`) takes at most
/// [`TRANSPOSED_MOST_BYTES`]. There the backward's launch saves more than the forward's side stream
/// costs: graphed bf16 training took 0.97-0.99x the time (LSTM [30, 128, 512] 2.20 against 2.26 µs
/// an example, [30, 32, 512] 5.24 against 5.34, GRU [30, 128, 512] 1.99 against 2.02, LSTM [30,
/// 128, 3 x 512] 6.63 against 6.69); at hidden 1024 and 1500, whose transposes move 8 and 18 MB a
/// layer beside the forward, 1.01x (LSTM [30, 32, 1024] 9.27 against 9.18, [35, 20, 2 x 1500] 52.4
/// against 52.0); in TF32, whose tile is filled through registers either way, 0.99-1.01x
/// (`results/2026-11-30-h200-fill-rows/`).
pub(super) fn shape_transposed(elem: Operands, (gh, hidden): (usize, usize)) -> bool {
    elem != Operands::Tf32 && gh * hidden * 2 <= TRANSPOSED_MOST_BYTES
}

/// See [`shape_transposed`]: an LSTM's W_hh at hidden 512 in half elements.
const TRANSPOSED_MOST_BYTES: usize = 2 << 20;

/// The most bytes of W_hh transposed that each block of a pushed training forward writes in its
/// prologue ([`Plan::transpose_share_bytes`](super::plan::Plan::transpose_share_bytes)) where the
/// tuning leaves [`Plan::forward_transposes`](super::plan::Plan::forward_transposes) to the
/// planner. At 32 KiB (an LSTM at hidden 512 in 4 batch groups of 16 blocks; a GRU's 24) graphed
/// bf16 and f16 training took 0.91-0.97x the time of the side stream's transpose (LSTM [30, 32,
/// 512] 5.10 against 5.26 µs an example, GRU 4.56 against 4.77, LSTM [200, 32, 512] 28.4 against
/// 31.1); at 128 KiB (one group, [30, 8, 512]) 1.02x (19.7 against 19.2),
/// `results/2026-11-30-h200-forward-transposes/`.
pub(super) const FORWARD_SHARE_MOST_BYTES: usize = 32 << 10;

/// Whether an inference forward of `cell` in half precision takes its input projection in half
/// elements ([`Plan::half_projection`](super::plan::Plan::half_projection)) where the tuning leaves
/// it to the planner: a GRU's. Its GEMM writes half the bytes (11.0 against 12.3 µs at [30, 32,
/// 1024], `results/2026-11-29-h200-gru-forward/logs/gemm.log`): GRU forwards took 0.98-0.99x of
/// their time with it in f32 ([30, 32, 512 | 1024], [35, 20, 2 x 1500]); LSTM forwards as long at
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
/// [`shape_one_cluster`]): f16's where `as_f16` (a scaled plan,
/// [`Plan::scaled`](super::plan::Plan::scaled), whose tiles and exchange are f16's: its groups in
/// inference and training, its one-cluster sizes in inference and in some training,
/// [`one_cluster_operands`]; a training plan's backward keeps f32 tiles), else the operands' own.
/// Graphed, on half precision's groups, TF32 forwards at [30, 64-128, 128] took 0.65-0.85x the time
/// (`results/2026-12-01-h200-tf32-scaled-half-rules/`) and TF32 training at [30, 48-128, 128-256]
/// 0.56-0.86x, at hidden 512 0.95-1.0x (`results/2026-12-01-h200-tf32-scaled-rules/`).
pub(super) fn rules_operands(elem: Operands, as_f16: bool) -> Operands {
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
pub(super) fn one_cluster_operands(
    elem: Operands,
    scaled: bool,
    (train, batch): (bool, usize),
    (layers, hidden, group_batch): (usize, usize, usize),
) -> Operands {
    let small_chunk = batch <= CHUNK_SAMPLES && small_one_cluster_step(layers, hidden, group_batch);
    rules_operands(elem, scaled && (!train || small_chunk))
}

/// The cluster sizes, largest first, that a one-cluster plan
/// ([`Plan::one_cluster`](super::plan::Plan::one_cluster)) of each batch group of `group_batch`
/// samples of a layer of `hidden` units in `elem`, of a stack of `layers`, tries where the tuning
/// leaves it to the shape (the planner takes the first whose clusters all fit at once); none: the
/// grid barrier.
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

/// Units per block of a forward with its gates in registers
/// ([`Plan::reg_gates`](super::plan::Plan::reg_gates)) of `hidden` units planned at `units` a
/// block, in `groups` batch groups of one cluster each, where `alone(blocks)` is how many clusters
/// of `blocks` blocks the GPU holds with a multiprocessor to each block: `units` where its groups'
/// clusters all fit so, else the fewest more (in steps of [`UNIT_STEP`], up to
/// [`REG_GATES_MOST_UNITS`]) whose fewer blocks a cluster do, if any. The clusters that share
/// multiprocessors end every launch: at hidden 128 and batch 128 (16 groups of 8 samples) an H200
/// holds 15 clusters of 8 blocks of 16 units alone, and the other group's step took 1.6x as long
/// (each group's end, the lab: 37.5-37.9 µs against 23.4-24.1); in clusters of 6 blocks of 24
/// units, 17 of which it holds alone, every group ended at 29.9-30.9 µs and a launch took
/// 0.82-0.87x the time, LSTM and GRU alike (`results/2026-12-02-h200-cluster-sizes/`). Blocks of
/// 32 units ended later (35.6-36.3 µs), and clusters of 7 blocks of 20 units fit only 15 times.
pub(super) fn reg_gates_units(
    hidden: usize,
    groups: usize,
    units: usize,
    alone: impl Fn(usize) -> usize,
) -> usize {
    let blocks = |units: usize| hidden.div_ceil(units);
    if groups == 1 || alone(blocks(units)) >= groups {
        return units;
    }
    (units + UNIT_STEP..=REG_GATES_MOST_UNITS)
        .step_by(UNIT_STEP)
        .filter(|&wider| blocks(wider) < blocks(units))
        .find(|&wider| alone(blocks(wider)) >= groups)
        .unwrap_or(units)
}

/// The cluster sizes a one-cluster plan tries, largest first: 16 blocks, then the portable 8.
pub(super) const ONE_CLUSTER_SIZES: [usize; 2] = [MOST_CLUSTER_BLOCKS, PORTABLE_CLUSTER_BLOCKS];

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
mod tests {
    use super::*;

    #[test]
    fn register_gates_widen_blocks_until_every_cluster_has_multiprocessors_of_its_own() {
        // An H200's clusters alone by blocks a cluster, as its driver counted them (8: 15, 7: 15,
        // 6: 17); smaller clusters fit more.
        let h200 = |blocks: usize| match blocks {
            8 => 15,
            7 => 15,
            6 => 17,
            b => 132 / b,
        };
        // Batch 128 at hidden 128: 16 groups, 8 blocks of 16 units: 6 of 24.
        assert_eq!(reg_gates_units(128, 16, 16, h200), 24);
        // 15 groups fit as they are; one group always does.
        assert_eq!(reg_gates_units(128, 15, 16, h200), 16);
        assert_eq!(reg_gates_units(128, 1, 8, |_| 0), 8);
        // Hidden 64 at 8 units (8 blocks): 12 units, 6 blocks.
        assert_eq!(reg_gates_units(64, 16, 8, h200), 12);
        // No count from the driver, or none wide enough: the planned units.
        assert_eq!(reg_gates_units(128, 16, 16, |_| 0), 16);
        assert_eq!(
            reg_gates_units(256, 16, 16, |b| if b > 8 { 0 } else { 15 }),
            16
        );
    }

    #[test]
    fn the_backward_runs_wide_where_it_was_faster() {
        // LSTM at 512, however grouped; a GRU at 1024, and at 512 in chunks of 32 or in groups
        // of 8.
        assert!(shape_wide_backward(Cell::Lstm, 512, (8, 64)));
        assert!(shape_wide_backward(Cell::Lstm, 512, (16, 64)));
        assert!(shape_wide_backward(Cell::Gru, 1024, (16, 64)));
        assert!(shape_wide_backward(Cell::Gru, 512, (8, 64)));
        assert!(shape_wide_backward(Cell::Gru, 512, (16, 32)));
        assert!(!shape_wide_backward(Cell::Gru, 512, (16, 64)));
        assert!(!shape_wide_backward(Cell::Lstm, 1024, (16, 64)));
        assert!(!shape_wide_backward(Cell::Lstm, 256, (8, 64)));
        // A GRU at 512 in chunks of 32 (3 a warp), the rest in 64s.
        assert_eq!(shape_wide_backward_chunk(Cell::Gru, 512), 32);
        assert_eq!(shape_wide_backward_chunk(Cell::Gru, 1024), 64);
        assert_eq!(shape_wide_backward_chunk(Cell::Lstm, 512), 64);
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
}
