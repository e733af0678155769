//! The persistent kernels' tuning knobs, read from the environment once per process
//! ([`Tuning::from_env`]) and handed to the planners ([`super::plan::Plan::new`],
//! [`super::wave::Wave::new`]). Each has a default that the measurements chose; the variables
//! exist to measure the alternatives again.

use super::cell::UNIT_STEP;
use super::launch::{MAX_GROUPS, MOST_CLUSTER_BLOCKS, PORTABLE_CLUSTER_BLOCKS};
use std::sync::OnceLock;

/// How the persistent kernels are tuned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Tuning {
    /// Blocks per thread-block cluster of the forward and of the backward (1: none), which split
    /// the recurrent product's K (`recurrence_fwd.cu`, `recurrence_bwd.cu`); a size whose
    /// clusters do not fit falls back to the next smaller. `None` (the default): the planner's
    /// rule for the shape ([`super::rules::shape_clusters`]). `CANDLE_RNN_PERSISTENT_CLUSTER` =
    /// `N` (both passes) or `F,B`, each 1, 2 or 4 (anything else: 1), sets them for every shape.
    pub clusters: Option<[usize; 2]>,
    /// Gate columns per chunk of the backward's product (`recurrence_bwd.cu`'s CH). `None` (the
    /// default): [`super::kernel::DEFAULT_CHUNK`] (half as many waits and copies per step as 32,
    /// and fewer buffers in shared memory: the faster for PTB large,
    /// `results/2026-11-23-h100-chunk-jit/bwd-chunk/`), or a wide backward's rule
    /// ([`super::rules::shape_wide_backward_chunk`]);
    /// `CANDLE_RNN_PERSISTENT_CHUNK` = `32` or `64` sets it for every shape.
    pub chunk: Option<usize>,
    /// Whether stacked layers run as one wavefront launch per pass (`wave`).
    pub wave: WaveTuning,
    /// Whether a layer whose blocks fit in one thread-block cluster of
    /// [`Tuning::one_cluster_blocks`] (sm_90; hidden sizes up to about 512) runs in
    /// one, each step's barrier the cluster's hardware barrier instead of the grid-wide one in
    /// memory (`common.cuh`'s ONE_CLUSTER); its blocks then take more units each. `None` (the
    /// default): the planner's rule for the shape ([`super::rules::shape_one_cluster`]);
    /// `CANDLE_RNN_PERSISTENT_ONE_CLUSTER` = `1` wherever it fits (in batch groups, one cluster
    /// per group), `0` never.
    pub one_cluster: Option<bool>,
    /// The most blocks of a one-cluster plan's cluster: by default 16, the non-portable size
    /// that sm_90 gives a kernel that asks, where the shape's rule tries it
    /// ([`super::rules::shape_one_cluster`]); `CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8`
    /// keeps every cluster to the portable size.
    pub one_cluster_blocks: usize,
    /// Whether a one-cluster layer's forward and backward push what a step exchanges into the
    /// shared memory of the cluster's blocks, with no barrier between steps
    /// (`recurrence_fwd.cu`'s and `recurrence_bwd.cu`'s PUSH), instead of exchanging it through
    /// L2 behind the cluster's barrier, where they can (a batch of one chunk).
    /// `None` (the default): the planner's ([`super::rules::shape_one_cluster_pushes`]);
    /// `CANDLE_RNN_PERSISTENT_PUSH` = `1` both where they can, `0` neither, or `F,B` each
    /// (`1,0`: the forward only).
    pub push: Option<[bool; 2]>,
    /// Whether a pushed forward makes its input projection itself
    /// ([`super::plan::Plan::input`]). `None` (the default): the planner's rule for the shape
    /// ([`super::rules::folds_input`]); `CANDLE_RNN_PERSISTENT_FOLD` = `1` wherever it can,
    /// `0` never.
    pub fold: Option<bool>,
    /// Hidden units per block of a layer-by-layer forward and backward. `None` (the default):
    /// the planner's rule for the shape ([`super::rules::block_units`]);
    /// `CANDLE_RNN_PERSISTENT_UNITS` = `U` (both passes) or `F,B`, positive multiples of 4, sets
    /// them where the blocks fit (one per multiprocessor; a pass whose clusters do not all fit
    /// may take more).
    pub units: Option<[usize; 2]>,
    /// Blocks per cluster of the forward's multicast exchange (`common.cuh`'s MCAST), where the
    /// forward can take one ([`super::plan::Plan::multicast`]). `None` (the default): the
    /// planner's rule for the shape ([`super::rules::shape_multicast`]);
    /// `CANDLE_RNN_PERSISTENT_MULTICAST` = `1` (none), `2`, `4` or `8` sets it for every shape.
    pub multicast: Option<usize>,
    /// Batch groups of a layer-by-layer forward and backward: the batch split into this many
    /// equal slices, each an independent recurrence on blocks of its own (`common.cuh`'s
    /// GROUPS; [`super::plan::Plan::groups`]). `None` (the default): the planner's rule for
    /// the shape ([`super::rules::shape_groups`]); `CANDLE_RNN_PERSISTENT_GROUPS` = `G`
    /// (1 to [`MAX_GROUPS`]) asks for G where they divide the batch and fit.
    pub groups: Option<usize>,
    /// Whether an inference forward in half precision takes its input projection from the GEMM
    /// in the operands' type instead of f32 ([`super::plan::Plan::half_projection`]). `None`
    /// (the default): the planner's rule for the cell
    /// ([`super::rules::cell_half_projection`]); `CANDLE_RNN_PERSISTENT_HALF_PROJECTION` = `1`
    /// for every cell, `0` never.
    pub half_projection: Option<bool>,
    /// Whether a layer's two weight-gradient GEMMs run on side streams beside its input
    /// gradient's (`side`). `None` (the default): where the products are small
    /// ([`super::side::shape_side_streams`]); `CANDLE_RNN_PERSISTENT_SIDE_STREAMS` = `1` always,
    /// `0` never.
    pub side_streams: Option<bool>,
    /// Whether a layer-by-layer backward that exchanges through L2 (not pushed) fills its
    /// weight tile from W_hh transposed, which the training forward makes on a side stream
    /// ([`super::plan::Plan::transposed`]). `None` (the default): the planner's rule for the
    /// shape ([`super::rules::shape_transposed`]); `CANDLE_RNN_PERSISTENT_TRANSPOSED` = `1`
    /// wherever it can, `0` never (the tile from W_hh itself).
    pub transposed: Option<bool>,
    /// Whether a pushed training forward writes that transpose itself
    /// ([`super::plan::Plan::forward_transposes`]) instead of a side stream.
    /// `None` (the default): where each block's share is small
    /// ([`super::rules::FORWARD_SHARE_MOST_BYTES`]); `CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES` =
    /// `1`: wherever it can; `0`: never (the side stream's).
    pub forward_transposes: Option<bool>,
    /// Whether a pushed one-cluster forward of at most 8 samples a batch group keeps its gates in
    /// registers ([`super::plan::Plan::reg_gates`], `recurrence_reg_fwd.cu`) where it fits: on
    /// unless `CANDLE_RNN_PERSISTENT_REG_GATES=0` (`recurrence_fwd.cu`'s kernel then), its
    /// forwards 0.85-0.89x the other's (`results/2026-12-02-h200-register-gates/` §3, §6).
    pub reg_gates: bool,
    /// Whether a forward runs on the wgmma kernel ([`super::plan::Plan::wgmma`], sm_90).
    /// `None` (the default): the planner's rules for the shape, an inference forward's
    /// ([`super::rules::shape_wgmma_forward`]) and a training forward's
    /// ([`super::rules::shape_wgmma_training`]);
    /// `CANDLE_RNN_PERSISTENT_WGMMA` = `1` wherever it fits, inference and training, `0` never.
    pub wgmma: Option<bool>,
    /// Whether a layer-by-layer backward runs on the wgmma kernel
    /// ([`super::plan::Plan::wgmma_backward`], sm_90, batch 128). `None` (the default): the
    /// planner's rule ([`super::rules::shape_wgmma_backward`]);
    /// `CANDLE_RNN_PERSISTENT_WGMMA_BWD` = `1` wherever it fits, `0` never.
    pub wgmma_backward: Option<bool>,
    /// Whether a layer-by-layer backward through L2 runs its blocks in 16 warps with each warp's
    /// share of the weight tile in registers ([`super::plan::Plan::wide_backward`]). `None` (the
    /// default): the planner's rule ([`super::rules::shape_wide_backward`]);
    /// `CANDLE_RNN_PERSISTENT_WIDE_BACKWARD` = `1` wherever it applies, `0` never.
    pub wide_backward: Option<bool>,
    /// The most chunk buffers a warp of a wide backward has (each one more chunk of gate
    /// gradients in flight from L2), where shared memory holds them. `None` (the default): the
    /// planner's rule ([`super::rules::WIDE_BACKWARD_MOST_BUFFERS`]);
    /// `CANDLE_RNN_PERSISTENT_WIDE_BUFFERS` = `2` to `8` sets it.
    pub wide_buffers: Option<usize>,
    /// Whether the wgmma backward sends its partial sums in bf16
    /// ([`super::plan::Plan::bf16_partials`]): `CANDLE_RNN_PERSISTENT_WGMMA_BWD_BF16=1`. Off by
    /// default.
    pub bf16_partials: bool,
    /// Subgroups of 32 samples a wgmma forward's block multiplies each step
    /// ([`super::plan::Plan::wgmma_subgroups`]): `CANDLE_RNN_PERSISTENT_WGMMA_SUB` = `1` or `2`
    /// (where it fits; with 2, a stack's forward runs as the wgmma wavefront where that fits,
    /// `super::wgmma_wave`). `None` (the default): the planner's rule, 2 in a forward (training or
    /// inference) that runs as that wavefront ([`super::rules::shape_wgmma_wave`]), else 1.
    pub wgmma_subgroups: Option<usize>,
    /// Units a wgmma forward's block takes ([`super::plan::Plan::units`]):
    /// `CANDLE_RNN_PERSISTENT_WGMMA_UNITS` = `32` (64 of its gate rows in registers, the rest in
    /// shared memory) or `16` (all of them in registers, twice the blocks; one subgroup), where
    /// they fit. `None` (the default): the planner's rule ([`super::rules::shape_wgmma_units`]).
    pub wgmma_units: Option<usize>,
    /// Blocks per cluster of the wgmma wavefront's launch (`super::wgmma_wave`):
    /// `CANDLE_RNN_PERSISTENT_WAVE_CLUSTER` = `1` (no clusters), `2` or `4`, where the clusters
    /// fit. `None` (the default): the planner's rule
    /// ([`super::wgmma_wave::WgmmaWave::cluster`]).
    pub wave_cluster: Option<usize>,
    /// Whether a forward of f32 operands (TF32 math; inference, and training's forward) takes
    /// them as f16 ones, each row of W_hh and of h scaled by a power of two
    /// ([`super::plan::Plan::scaled`]): by default; `CANDLE_RNN_PERSISTENT_F16_SCALED=0` keeps
    /// its products in TF32 (and so an inference off the wgmma forward).
    pub f16_scaled: bool,
    /// Whether a bidirectional layer's two recurrences run side by side, the reverse one on a
    /// side stream, where both grids fit on the GPU at once ([`super::units::Units::side_by_side`]):
    /// by default; `CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE=0` runs them one after the other.
    pub side_by_side: bool,
    /// Whether each new plan is written to stderr (what a call's kernels took: batch groups,
    /// units, clusters, pushes, which the rules decide from the shape and from what fits on the
    /// device): `CANDLE_RNN_PERSISTENT_SHOW_PLANS=1`. Off by default.
    pub show_plans: bool,
}

/// What `CANDLE_RNN_PERSISTENT_WAVE` asks: unset or `1` (or anything else), the wavefront where
/// it fits, its units per block chosen by the planner; `0`, layer by layer always; `U0,U1`
/// (multiples of 4), the wavefront with those units per block (lowest layer, the others) where
/// they fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum WaveTuning {
    Off,
    Fitted,
    Units([usize; 2]),
}

impl Tuning {
    /// The tuning without any of the variables set.
    pub const DEFAULT: Tuning = Tuning {
        clusters: None,
        chunk: None,
        wave: WaveTuning::Fitted,
        one_cluster: None,
        one_cluster_blocks: MOST_CLUSTER_BLOCKS,
        push: None,
        fold: None,
        units: None,
        multicast: None,
        groups: None,
        half_projection: None,
        side_streams: None,
        transposed: None,
        forward_transposes: None,
        reg_gates: true,
        wgmma: None,
        wgmma_backward: None,
        wide_backward: None,
        wide_buffers: None,
        bf16_partials: false,
        wgmma_subgroups: None,
        wgmma_units: None,
        wave_cluster: None,
        f16_scaled: true,
        side_by_side: true,
        show_plans: false,
    };

    /// The process's tuning: the defaults, changed by the variables that are set, read at the
    /// first call.
    pub fn from_env() -> Tuning {
        static TUNING: OnceLock<Tuning> = OnceLock::new();
        *TUNING.get_or_init(|| Self::from_vars(|name| std::env::var(name).ok()))
    }

    /// The tuning that the variables' values `var(name)` ask for (`None`: unset).
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Tuning {
        let d = Self::DEFAULT;
        let size = |v: &str| match v.trim() {
            "2" => 2,
            "4" => 4,
            _ => 1,
        };
        let clusters = match var("CANDLE_RNN_PERSISTENT_CLUSTER") {
            Some(v) => match v.split_once(',') {
                Some((f, b)) => Some([size(f), size(b)]),
                None => Some([size(&v), size(&v)]),
            },
            None => d.clusters,
        };
        let units = |u: &str| {
            u.trim()
                .parse()
                .ok()
                .filter(|u: &usize| u % UNIT_STEP == 0 && *u > 0)
        };
        let wave = match var("CANDLE_RNN_PERSISTENT_WAVE") {
            None => d.wave,
            Some(v) => match v.trim().split_once(',') {
                Some((a, b)) => match (units(a), units(b)) {
                    (Some(a), Some(b)) => WaveTuning::Units([a, b]),
                    _ => WaveTuning::Fitted,
                },
                None if v.trim() == "0" => WaveTuning::Off,
                None => WaveTuning::Fitted,
            },
        };
        // A switch: `1` on, `0` off, anything else (or unset) the default's.
        let on = |v: &str| match v.trim() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        };
        let switch = |name| var(name).as_deref().and_then(on);
        // A count that must be one of `allowed` (as written, spaces around it aside), else the
        // default's.
        let choice = |name, allowed: &[&str]| {
            var(name)
                .filter(|v| allowed.contains(&v.trim()))
                .and_then(|v| v.trim().parse().ok())
        };
        let chunk = choice("CANDLE_RNN_PERSISTENT_CHUNK", &["32", "64"]).or(d.chunk);
        let one_cluster = switch("CANDLE_RNN_PERSISTENT_ONE_CLUSTER").or(d.one_cluster);
        let one_cluster_blocks = match var("CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS")
            .as_deref()
            .map(str::trim)
        {
            Some("16") => MOST_CLUSTER_BLOCKS,
            Some("8") => PORTABLE_CLUSTER_BLOCKS,
            _ => d.one_cluster_blocks,
        };
        let push = match var("CANDLE_RNN_PERSISTENT_PUSH") {
            Some(v) => match v.split_once(',') {
                Some((f, b)) => on(f).zip(on(b)).map(|(f, b)| [f, b]),
                None => on(&v).map(|p| [p; 2]),
            },
            None => None,
        }
        .or(d.push);
        let fold = switch("CANDLE_RNN_PERSISTENT_FOLD").or(d.fold);
        let block_units = match var("CANDLE_RNN_PERSISTENT_UNITS") {
            Some(v) => match v.split_once(',') {
                Some((f, b)) => units(f).zip(units(b)).map(|(f, b)| [f, b]),
                None => units(&v).map(|u| [u, u]),
            },
            None => d.units,
        };
        let multicast =
            choice("CANDLE_RNN_PERSISTENT_MULTICAST", &["1", "2", "4", "8"]).or(d.multicast);
        let groups = var("CANDLE_RNN_PERSISTENT_GROUPS")
            .and_then(|v| v.trim().parse().ok())
            .filter(|g: &usize| (1..=MAX_GROUPS).contains(g))
            .or(d.groups);
        let half_projection = switch("CANDLE_RNN_PERSISTENT_HALF_PROJECTION").or(d.half_projection);
        let side_streams = switch("CANDLE_RNN_PERSISTENT_SIDE_STREAMS").or(d.side_streams);
        let transposed = switch("CANDLE_RNN_PERSISTENT_TRANSPOSED").or(d.transposed);
        let forward_transposes =
            switch("CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES").or(d.forward_transposes);
        let reg_gates = switch("CANDLE_RNN_PERSISTENT_REG_GATES").unwrap_or(d.reg_gates);
        let wgmma = switch("CANDLE_RNN_PERSISTENT_WGMMA").or(d.wgmma);
        let wgmma_backward = switch("CANDLE_RNN_PERSISTENT_WGMMA_BWD").or(d.wgmma_backward);
        let wide_backward = switch("CANDLE_RNN_PERSISTENT_WIDE_BACKWARD").or(d.wide_backward);
        let wide_buffers = choice(
            "CANDLE_RNN_PERSISTENT_WIDE_BUFFERS",
            &["2", "3", "4", "5", "6", "7", "8"],
        )
        .or(d.wide_buffers);
        let bf16_partials =
            switch("CANDLE_RNN_PERSISTENT_WGMMA_BWD_BF16").unwrap_or(d.bf16_partials);
        let wgmma_subgroups =
            choice("CANDLE_RNN_PERSISTENT_WGMMA_SUB", &["1", "2"]).or(d.wgmma_subgroups);
        let wgmma_units =
            choice("CANDLE_RNN_PERSISTENT_WGMMA_UNITS", &["16", "32"]).or(d.wgmma_units);
        let wave_cluster =
            choice("CANDLE_RNN_PERSISTENT_WAVE_CLUSTER", &["1", "2", "4"]).or(d.wave_cluster);
        let f16_scaled = switch("CANDLE_RNN_PERSISTENT_F16_SCALED").unwrap_or(d.f16_scaled);
        let side_by_side = switch("CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE").unwrap_or(d.side_by_side);
        let show_plans = switch("CANDLE_RNN_PERSISTENT_SHOW_PLANS").unwrap_or(d.show_plans);
        Tuning {
            clusters,
            chunk,
            wave,
            one_cluster,
            one_cluster_blocks,
            push,
            fold,
            units: block_units,
            multicast,
            groups,
            half_projection,
            side_streams,
            transposed,
            forward_transposes,
            reg_gates,
            wgmma,
            wgmma_backward,
            wide_backward,
            wide_buffers,
            bf16_partials,
            wgmma_subgroups,
            wgmma_units,
            wave_cluster,
            f16_scaled,
            side_by_side,
            show_plans,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Tuning, WaveTuning};

    fn with(vars: &[(&str, &str)]) -> Tuning {
        Tuning::from_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn unset_variables_give_the_defaults() {
        assert_eq!(with(&[]), Tuning::DEFAULT);
        assert_eq!(
            Tuning::DEFAULT,
            Tuning {
                clusters: None,
                chunk: None,
                wave: WaveTuning::Fitted,
                one_cluster: None,
                one_cluster_blocks: 16,
                push: None,
                fold: None,
                units: None,
                multicast: None,
                groups: None,
                half_projection: None,
                side_streams: None,
                transposed: None,
                forward_transposes: None,
                reg_gates: true,
                wgmma: None,
                wgmma_backward: None,
                wide_backward: None,
                wide_buffers: None,
                bf16_partials: false,
                wgmma_subgroups: None,
                wgmma_units: None,
                wave_cluster: None,
                f16_scaled: true,
                side_by_side: true,
                show_plans: false,
            }
        );
    }

    /// The switches that leave it to the shape unless set: on, off, or (anything else) the
    /// rule's; and those that are off unless set.
    #[test]
    fn switches_by_shape_unless_asked() {
        // A knob's name and the field it sets.
        type Switch<T> = (&'static str, fn(&Tuning) -> T);
        let by_shape: [Switch<Option<bool>>; 9] = [
            ("CANDLE_RNN_PERSISTENT_TRANSPOSED", |t| t.transposed),
            ("CANDLE_RNN_PERSISTENT_FORWARD_TRANSPOSES", |t| {
                t.forward_transposes
            }),
            ("CANDLE_RNN_PERSISTENT_WGMMA", |t| t.wgmma),
            ("CANDLE_RNN_PERSISTENT_WGMMA_BWD", |t| t.wgmma_backward),
            ("CANDLE_RNN_PERSISTENT_WIDE_BACKWARD", |t| t.wide_backward),
            ("CANDLE_RNN_PERSISTENT_SIDE_STREAMS", |t| t.side_streams),
            ("CANDLE_RNN_PERSISTENT_HALF_PROJECTION", |t| {
                t.half_projection
            }),
            ("CANDLE_RNN_PERSISTENT_FOLD", |t| t.fold),
            ("CANDLE_RNN_PERSISTENT_ONE_CLUSTER", |t| t.one_cluster),
        ];
        for (name, field) in by_shape {
            let value = |v| field(&with(&[(name, v)]));
            assert_eq!(value("1"), Some(true), "{name}");
            assert_eq!(value(" 1 "), Some(true), "{name}");
            assert_eq!(value(" 0 "), Some(false), "{name}");
            for other in ["", "maybe", "yes", "2"] {
                assert_eq!(value(other), None, "{name}={other:?}");
            }
        }
        let off_unless_set: [Switch<bool>; 2] = [
            ("CANDLE_RNN_PERSISTENT_WGMMA_BWD_BF16", |t| t.bf16_partials),
            ("CANDLE_RNN_PERSISTENT_SHOW_PLANS", |t| t.show_plans),
        ];
        for (name, field) in off_unless_set {
            let value = |v| field(&with(&[(name, v)]));
            assert!(value("1"), "{name}");
            assert!(value(" 1 "), "{name}");
            assert!(!value("0"), "{name}");
            assert!(!value("yes"), "{name}");
        }
        // On unless set to 0.
        let on_unless_zero: [Switch<bool>; 3] = [
            ("CANDLE_RNN_PERSISTENT_F16_SCALED", |t| t.f16_scaled),
            ("CANDLE_RNN_PERSISTENT_REG_GATES", |t| t.reg_gates),
            ("CANDLE_RNN_PERSISTENT_SIDE_BY_SIDE", |t| t.side_by_side),
        ];
        for (name, field) in on_unless_zero {
            let value = |v| field(&with(&[(name, v)]));
            assert!(value("1") && value("yes") && value(""), "{name}");
            assert!(!value("0") && !value(" 0 "), "{name}");
        }
    }

    #[test]
    fn counts_from_a_few_unless_asked() {
        let sub = |v| with(&[("CANDLE_RNN_PERSISTENT_WGMMA_SUB", v)]).wgmma_subgroups;
        assert_eq!(sub("2"), Some(2));
        assert_eq!(sub(" 1"), Some(1));
        assert_eq!(sub("3"), None);
        let units = |v| with(&[("CANDLE_RNN_PERSISTENT_WGMMA_UNITS", v)]).wgmma_units;
        assert_eq!(units("16"), Some(16));
        assert_eq!(units(" 32"), Some(32));
        assert_eq!(units("8"), None);
        let cluster = |v| with(&[("CANDLE_RNN_PERSISTENT_WAVE_CLUSTER", v)]).wave_cluster;
        assert_eq!(cluster("4"), Some(4));
        assert_eq!(cluster("1 "), Some(1));
        assert_eq!(cluster("8"), None);
        let buffers = |v| with(&[("CANDLE_RNN_PERSISTENT_WIDE_BUFFERS", v)]).wide_buffers;
        assert_eq!(buffers("3"), Some(3));
        assert_eq!(buffers(" 8"), Some(8));
        assert_eq!(buffers("1"), None);
        assert_eq!(buffers("9"), None);
    }

    #[test]
    fn one_cluster_of_8_blocks_only_when_asked() {
        let most = |v| with(&[("CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS", v)]).one_cluster_blocks;
        assert_eq!(most("8"), 8);
        assert_eq!(most(" 8 "), 8);
        // Anything else: the default, 16.
        assert_eq!(most("16"), 16);
        assert_eq!(most("32"), 16);
        assert_eq!(most("x"), 16);
    }

    #[test]
    fn the_pushed_exchange_only_when_asked() {
        let push = |v| with(&[("CANDLE_RNN_PERSISTENT_PUSH", v)]).push;
        assert_eq!(push("1"), Some([true; 2]));
        assert_eq!(push(" 0 "), Some([false; 2]));
        assert_eq!(push("1, 0"), Some([true, false]));
        assert_eq!(push("0,1"), Some([false, true]));
        assert_eq!(push("yes"), None);
        assert_eq!(push("1,x"), None);
    }

    #[test]
    fn batch_groups_by_shape_unless_asked() {
        let groups = |v| with(&[("CANDLE_RNN_PERSISTENT_GROUPS", v)]).groups;
        assert_eq!(groups("2"), Some(2));
        assert_eq!(groups(" 4 "), Some(4));
        assert_eq!(groups("1"), Some(1));
        // Anything else: the rule.
        assert_eq!(groups("0"), None);
        assert_eq!(groups("99"), None);
        assert_eq!(groups("x"), None);
    }

    #[test]
    fn multicast_by_shape_unless_asked() {
        let multicast = |v| with(&[("CANDLE_RNN_PERSISTENT_MULTICAST", v)]).multicast;
        assert_eq!(multicast("1"), Some(1));
        assert_eq!(multicast(" 8 "), Some(8));
        assert_eq!(multicast("4"), Some(4));
        // Anything else: the rule.
        assert_eq!(multicast("16"), None);
        assert_eq!(multicast("3"), None);
    }

    #[test]
    fn units_per_block_for_both_passes_or_each() {
        let units = |v| with(&[("CANDLE_RNN_PERSISTENT_UNITS", v)]).units;
        assert_eq!(units("8"), Some([8, 8]));
        assert_eq!(units(" 8 , 4 "), Some([8, 4]));
        // Positive multiples of 4 only.
        assert_eq!(units("6"), None);
        assert_eq!(units("8,0"), None);
        assert_eq!(units("x"), None);
    }

    #[test]
    fn clusters_for_both_passes_or_each() {
        let clusters = |v| with(&[("CANDLE_RNN_PERSISTENT_CLUSTER", v)]).clusters;
        assert_eq!(clusters("2"), Some([2, 2]));
        assert_eq!(clusters("1,2"), Some([1, 2]));
        assert_eq!(clusters(" 4 , 2 "), Some([4, 2]));
        // Anything but 2 or 4 is none.
        assert_eq!(clusters("8,3"), Some([1, 1]));
        assert_eq!(clusters(""), Some([1, 1]));
    }

    #[test]
    fn chunk_of_32_or_64_only_when_asked() {
        let chunk = |v| with(&[("CANDLE_RNN_PERSISTENT_CHUNK", v)]).chunk;
        assert_eq!(chunk("32"), Some(32));
        assert_eq!(chunk(" 32 "), Some(32));
        assert_eq!(chunk("64"), Some(64));
        assert_eq!(chunk("16"), None);
    }

    #[test]
    fn wavefront_off_fitted_or_with_units() {
        let wave = |v| with(&[("CANDLE_RNN_PERSISTENT_WAVE", v)]).wave;
        assert_eq!(wave("0"), WaveTuning::Off);
        assert_eq!(wave("1"), WaveTuning::Fitted);
        assert_eq!(wave("8, 12"), WaveTuning::Units([8, 12]));
        // Units must be positive multiples of 4.
        assert_eq!(wave("6,12"), WaveTuning::Fitted);
        assert_eq!(wave("0,12"), WaveTuning::Fitted);
    }
}
