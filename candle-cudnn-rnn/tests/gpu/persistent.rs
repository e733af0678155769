//! The crate's own persistent kernels (`RnnAlgo::Persistent`) against the CPU path in f64 on
//! the same rounded inputs, in bf16 and f16 (and f32 in TF32): inference (outputs, final
//! states), training (those and every gradient) and training with x untracked (the kernels then skip dx). Every
//! call must be served by the kernels themselves, not handed to cuDNN. LSTMs and GRUs.

use super::*;
use candle_cudnn_rnn::MathMode;

/// gpu_check's bound for the persistent kernels in bf16 and f16, on every quantity (seen: a
/// few 1e-3 in bf16, a few 1e-4 in f16).
const BOUND: f64 = 2e-2;

/// Which bias vectors a cell has.
#[derive(Clone, Copy)]
enum Biases {
    /// PyTorch's `bias_ih` and `bias_hh`.
    Both,
    /// One per gate (`single_bias`): the kernels read no `b_hh`.
    Single,
    /// None (`bias: false`).
    Neither,
}

/// A unidirectional cell of `mode` with `biases` for the persistent kernels.
fn shape(
    (mode, biases): (RnnMode, Biases),
    (layers, batch, seq, input, hidden): (usize, usize, usize, usize, usize),
) -> Shape {
    Shape {
        mode,
        cfg: RnnConfig {
            num_layers: layers,
            algo: RnnAlgo::Persistent,
            bias: !matches!(biases, Biases::Neither),
            single_bias: matches!(biases, Biases::Single),
            ..Default::default()
        },
        batch,
        seq,
        input,
        hidden,
    }
}

/// Inference, from zeros and from a given state, on the kernels against the CPU path in f64.
fn check_inference(
    gpu: &Gpu,
    shape: &Shape,
    dtype: DType,
    rng: &mut StdRng,
    verdicts: &mut Verdicts,
) {
    let name = format!("{} Persistent {}", shape.name(), dtype.as_str());
    let reference = shape.with_algo(RnnAlgo::Standard);
    for with_state in [false, true] {
        let inputs = Inputs::random(shape, with_state, dtype, rng);
        let host = inputs.to(&Device::Cpu, DType::F64);
        let want = call(&reference, &host, None, false, true, None).expect("the CPU path");
        let what = format!("inference, h0 {with_state}");
        match call(
            shape,
            &inputs.to(&gpu.device, dtype),
            None,
            false,
            true,
            None,
        ) {
            Ok(got) => {
                verdicts.require_persistent(&format!("{name} {what}"), got.served);
                let rows = bounded(&errors(shape, &got, &want), BOUND, BOUND);
                verdicts.case(&format!("{name} {what}"), &rows);
            }
            Err(e) => verdicts.require(false, || format!("{name} {what}: failed: {e}")),
        }
    }
}

/// Inference ([`check_inference`]), then training on the kernels against the CPU path in f64.
fn check(gpu: &Gpu, shape: &Shape, dtype: DType, rng: &mut StdRng, verdicts: &mut Verdicts) {
    check_inference(gpu, shape, dtype, rng, verdicts);
    let name = format!("{} Persistent {}", shape.name(), dtype.as_str());
    let reference = shape.with_algo(RnnAlgo::Standard);
    let served = |what: &str, got: &Outcome, verdicts: &mut Verdicts| {
        verdicts.require_persistent(&format!("{name} {what}"), got.served);
    };
    // Training: every gradient, then the same call with x untracked.
    let inputs = Inputs::random(shape, true, dtype, rng);
    let host = inputs.to(&Device::Cpu, DType::F64);
    let on_gpu = inputs.to(&gpu.device, dtype);
    let want = call(&reference, &host, None, true, true, None).expect("the CPU path");
    for track_x in [true, false] {
        let what = if track_x {
            "training"
        } else {
            "training, x untracked"
        };
        match call(shape, &on_gpu, None, true, track_x, None) {
            Ok(got) => {
                served(what, &got, verdicts);
                let mut rows = errors(shape, &got, &want);
                // Untracked, no dx comes back (`call` fails if one does).
                rows.retain(|(q, _)| track_x || *q != "dx");
                verdicts.case(&format!("{name} {what}"), &bounded(&rows, BOUND, BOUND));
            }
            Err(e) => verdicts.require(false, || format!("{name} {what}: failed: {e}")),
        }
    }
}

/// Each shape of a cell of `mode` with both biases in bf16 and in f16.
fn run(test: &str, mode: RnnMode, shapes: &[(usize, usize, usize, usize, usize)]) {
    run_cells(test, &[(mode, Biases::Both)], shapes);
}

/// Each shape of each cell (mode and biases) in bf16 and in f16.
fn run_cells(
    test: &str,
    cells: &[(RnnMode, Biases)],
    shapes: &[(usize, usize, usize, usize, usize)],
) {
    let cases = cells.iter().flat_map(|&cell| {
        shapes
            .iter()
            .flat_map(move |&s| [DType::BF16, DType::F16].map(|dtype| (shape(cell, s), dtype)))
    });
    check_each(test, cases, |gpu, (shape, dtype), rng, verdicts| {
        check(gpu, &shape, dtype, rng, verdicts)
    });
}

/// One layer: batch 1 and a hidden size of 200 (neither fills a tensor-core tile), batch 32
/// (one chunk), a small odd batch, and batch 128 at hidden 128 (16 batch groups of 8, each in
/// one cluster).
#[test]
fn persistent_lstm_one_layer_matches_the_f64_cpu_path() {
    // (layers, batch, seq, input, hidden)
    run(
        "persistent_lstm_one_layer_matches_the_f64_cpu_path",
        RnnMode::Lstm,
        &[
            (1, 1, 3, 100, 200),
            (1, 32, 20, 64, 128),
            (1, 5, 7, 32, 64),
            (1, 128, 6, 32, 128),
        ],
    );
}

/// Stacks: three layers of 200 at batch 20, small enough to run each pass as a wavefront
/// (every layer in one launch); three of 512 at batch 32, a wavefront whose blocks do their
/// gate math in two rounds; two layers at an odd batch and a hidden size that fills no block;
/// one step through three layers (each wavefront's first and last steps at once).
#[test]
fn persistent_lstm_stacks_match_the_f64_cpu_path() {
    run(
        "persistent_lstm_stacks_match_the_f64_cpu_path",
        RnnMode::Lstm,
        &[
            (3, 20, 16, 200, 200),
            (3, 32, 3, 64, 512),
            (2, 17, 12, 96, 130),
            (3, 2, 1, 24, 48),
        ],
    );
}

/// GRUs: one layer at batch 1 and hidden 200 (no tile filled), batch 32; stacks as the LSTM's
/// (each pass as a wavefront, whose upper layers keep the n gate's two products apart in a row
/// group of their own forward and its input-side gradient in an exchange column group of its
/// own backward): three layers of 200 at batch 20, three of 512 at batch 32 (two rounds), two
/// layers at an odd batch and a hidden size that fills no block, one step through three layers.
#[test]
fn persistent_gru_matches_the_f64_cpu_path() {
    run(
        "persistent_gru_matches_the_f64_cpu_path",
        RnnMode::Gru,
        &[
            (1, 1, 3, 100, 200),
            (1, 32, 20, 64, 128),
            (3, 20, 16, 200, 200),
            (3, 32, 3, 64, 512),
            (2, 17, 12, 96, 130),
            (3, 2, 1, 24, 48),
        ],
    );
}

/// One layer in clusters of 16 blocks (`rules.rs`'s `shape_one_cluster`, sm_90), h pushed
/// between their shared memories: hidden 256 at batch 8 (one group, 16 units a block), LSTM
/// hidden 384 at batch 32 (4 groups of 8, 24 units a block, the pushed backward's tile in
/// registers: `recurrence_bwd.cu`'s PUSH_IN_REGS), and at hidden 512 (32 units a
/// block, the backward's exchange through L2 behind the cluster's barrier) GRU at batch 32 (4
/// of 8) and LSTM at batch 16 (2 of 8); LSTM hidden 128 at batch 32 (4 groups of 8, 8 units a
/// block), and beside it a GRU at hidden 64 and batch 16 (2 groups of 8, each one cluster).
#[test]
fn persistent_clusters_of_16_match_the_f64_cpu_path() {
    let test = "persistent_clusters_of_16_match_the_f64_cpu_path";
    run(
        test,
        RnnMode::Lstm,
        &[
            (1, 8, 9, 40, 256),
            (1, 32, 7, 64, 384),
            (1, 16, 5, 32, 512),
            (1, 32, 7, 48, 128),
        ],
    );
    run(
        test,
        RnnMode::Gru,
        &[(1, 8, 9, 40, 256), (1, 32, 7, 64, 512), (1, 16, 6, 32, 64)],
    );
}

/// Training whose backward runs wide where the rule takes it (`rules.rs`'s
/// `shape_wide_backward`: 16 warps a block, each warp's fragments of the weight tile in registers,
/// `recurrence_bwd.cu`'s BWD_WREG), and beside it where it does not: hidden 1024 at batch 32 (2
/// groups of 16, 16 units a block: the GRU's wide), two layers of 512 at batch 128 (layer by layer
/// in 8 groups of 16, the forward on wgmma: both wide, the GRU's in chunks of 32 gate columns,
/// `rules.rs`'s `shape_wide_backward_chunk`), and 512 at batch 24 (on an H200 3 groups of 8 on
/// blocks of 12 units, an LSTM's, or 16, a GRU's in chunks of 32: both wide), LSTM and GRU. (At
/// hidden 512 and batch 16-32 `persistent_clusters_of_16_match_the_f64_cpu_path`'s backwards in
/// one cluster a group, through L2, run wide too.)
#[test]
fn persistent_wide_backward_matches_the_f64_cpu_path() {
    run_cells(
        "persistent_wide_backward_matches_the_f64_cpu_path",
        &[(RnnMode::Lstm, Biases::Both), (RnnMode::Gru, Biases::Both)],
        &[
            (1, 32, 6, 48, 1024),
            (2, 128, 4, 32, 512),
            (1, 24, 7, 64, 512),
        ],
    );
}

/// The shapes at the edges of the forward with its gates in registers (`recurrence_reg_fwd.cu`: a
/// pushed one-cluster forward of up to 8 samples a batch group, hidden up to 256), which they take
/// by default (with `CANDLE_RNN_PERSISTENT_REG_GATES=0`, `recurrence_fwd.cu`'s), LSTM and GRU, each
/// biases' form, h pushed 8 units a store where the blocks' units and h come in whole 8s
/// (`recurrence_reg_fwd.cu`'s RG_PUSH16), else 4: hidden 66 at batch 3 (a block's last 4 units past
/// the hidden size, three samples of a tile's 8, padded rows for the weight gradient's products)
/// with a folded input of 24 (two K steps, the second short); hidden 256 at batch 8 (16 K steps)
/// with a folded input of 200; hidden 64 at batch 16 (2 groups, 4 units a block: one gate warp and
/// one helper) from an input of 100 (not a multiple of 8: the projection by a GEMM before the
/// launch); two layers of 128 at batch 128 (on main a stack's plan: 8 groups of 16, layer by
/// layer, without gates in registers, which the branch `stack-layer-plans` gives them) and one of
/// 64 there, whose 16 groups' clusters take wider blocks where they would
/// share multiprocessors (`rules.rs`'s `reg_gates_units`; on an H200 6 blocks of 24 and of 12
/// units, the last block's tiles partly past the hidden size).
#[test]
fn persistent_register_gates_match_the_f64_cpu_path() {
    run_cells(
        "persistent_register_gates_match_the_f64_cpu_path",
        &[
            (RnnMode::Lstm, Biases::Both),
            (RnnMode::Gru, Biases::Single),
            (RnnMode::Gru, Biases::Neither),
        ],
        &[
            (1, 3, 5, 24, 66),
            (1, 8, 6, 200, 256),
            (1, 16, 7, 100, 64),
            (2, 128, 4, 32, 128),
            (1, 128, 3, 40, 64),
        ],
    );
}

/// One layer at hidden 512, whose forward on an sm_90 GPU shares each step's h_{t-1} by
/// multicast within clusters (`rules.rs`'s `shape_multicast`): at batch 20, in two batch groups
/// of 10 rows, which the blocks of a cluster of 8 copy unevenly; at batch 37 (no batch groups
/// divide it), two chunks of the batch (the second ends early), 128 blocks in clusters of 2;
/// and at hidden 1024 and batch 100 (one group of four chunks, the last ending early), whose
/// stage of all of h does not fit: a ring of two chunk slots. LSTM and GRU.
#[test]
fn persistent_multicast_forward_matches_the_f64_cpu_path() {
    run_cells(
        "persistent_multicast_forward_matches_the_f64_cpu_path",
        &[(RnnMode::Lstm, Biases::Both), (RnnMode::Gru, Biases::Both)],
        &[
            (1, 20, 6, 64, 512),
            (1, 37, 4, 32, 512),
            (1, 100, 3, 32, 1024),
        ],
    );
}

/// f32 inference and training with TF32 products (a module built with `MathMode::Tf32`) on the
/// kernels, LSTM and GRU: one layer at an odd batch and hidden size (66 at 3, no tile filled),
/// at hidden 512 and batch 8 (64 blocks: on an H100, in multicast clusters of 8) and 32 (in 4
/// batch groups), a batch of several chunks whose last ends early (67 at 200: a prime, in one
/// group, as no count divides it) and 77 at 200 (7 groups of 11 on scaled operands); and on the default (`RnnAlgo::Heuristic`, whose rule gives them to
/// the kernels), a stack of two layers at batch 64 (layer by layer, in batch groups), one layer
/// at hidden 128 and batch 16 (4 groups, each in one cluster, h pushed), at batch 32 (4 groups of
/// 8, training too in clusters of 16, half precision's size, since
/// `results/2026-12-01-h200-tf32-cluster16-training/`) and at batch 128 (16 groups, half
/// precision's count for scaled plans; a GRU's training too since
/// `results/2026-12-01-h200-tf32-scaled-rules/`); each by [`check_tf32`].
#[test]
fn persistent_tf32_matches_the_f64_cpu_path() {
    let test = "persistent_tf32_matches_the_f64_cpu_path";
    let cases = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [
            (1, 3, 5, 40, 66, RnnAlgo::Persistent),
            (1, 8, 4, 32, 512, RnnAlgo::Persistent),
            (1, 32, 12, 64, 512, RnnAlgo::Persistent),
            (1, 67, 4, 32, 200, RnnAlgo::Persistent),
            (1, 77, 4, 32, 200, RnnAlgo::Persistent),
            (2, 64, 5, 48, 256, RnnAlgo::Heuristic),
            (1, 16, 6, 32, 128, RnnAlgo::Heuristic),
            (1, 32, 6, 32, 128, RnnAlgo::Heuristic),
            (1, 128, 5, 32, 128, RnnAlgo::Heuristic),
        ]
        .map(move |(layers, batch, seq, input, hidden, algo)| {
            let mut shape = shape((mode, Biases::Both), (layers, batch, seq, input, hidden));
            shape.cfg.math = MathMode::Tf32;
            shape.cfg.algo = algo;
            shape
        })
    });
    check_each(test, cases, |gpu, shape, rng, verdicts| {
        // Inference from zeros and from a given state, then training (every gradient).
        for (train, with_state) in [(false, false), (false, true), (true, true)] {
            check_tf32(gpu, &shape, (train, with_state), rng, verdicts);
        }
    });
}

/// One call of `shape` in TF32, which must be served by the kernels, against the CPU path in
/// f64, each quantity's error bounded by twice cuDNN's TF32 `Standard`'s on the same inputs (or
/// [`TF32_FLOOR`]).
fn check_tf32(
    gpu: &Gpu,
    shape: &Shape,
    (train, with_state): (bool, bool),
    rng: &mut StdRng,
    verdicts: &mut Verdicts,
) {
    let (name, algo) = (shape.name(), shape.cfg.algo);
    let what = match train {
        true => format!("{name} {algo:?} tf32 training"),
        false => format!("{name} {algo:?} tf32 inference, h0 {with_state}"),
    };
    let inputs = Inputs::random(shape, with_state, DType::F32, rng);
    check_tf32_on(gpu, shape, train, &inputs, &what, verdicts);
}

/// [`check_tf32`] on `inputs` (f32), named `what`.
fn check_tf32_on(
    gpu: &Gpu,
    shape: &Shape,
    train: bool,
    inputs: &Inputs,
    what: &str,
    verdicts: &mut Verdicts,
) {
    let reference = shape.with_algo(RnnAlgo::Standard);
    let host = inputs.to(&Device::Cpu, DType::F64);
    let want = call(&reference, &host, None, train, true, None).expect("the CPU path");
    let on_gpu = inputs.to(&gpu.device, DType::F32);
    let cudnn = call(&reference, &on_gpu, None, train, true, None).expect("cuDNN");
    match call(shape, &on_gpu, None, train, true, None) {
        Ok(got) => {
            verdicts.require_persistent(what, got.served);
            let theirs = errors(shape, &cudnn, &want);
            let rows: Vec<_> = errors(shape, &got, &want)
                .into_iter()
                .zip(theirs)
                .map(|((q, e), (_, their))| (q, e, (2.0 * their).max(TF32_FLOOR)))
                .collect();
            verdicts.case(what, &rows);
        }
        Err(e) => verdicts.require(false, || format!("{what}: failed: {e}")),
    }
}

/// f32 inference in TF32 on the wgmma forward, whose products take f16 operands scaled by powers
/// of two (`Plan::scaled`): LSTM and GRU at hidden 1024 at batch 32 (16-unit blocks) and 128
/// (32-unit ones, in 4 groups), a stack of two at batch 96, and hidden 512 at batch 64, from zeros
/// and from a given state, each by [`check_tf32`]; on the default (`Heuristic`, whose rule gives
/// them to the kernels) [*, 128, 1024] graphed and [*, 96, 3 x 1024] eagerly. Then operands that f16 could not hold
/// unscaled, at [*, 32, 1024] without biases, each against the CPU path in f64 within twice
/// cuDNN's TF32 `Standard`'s error: one step of weights 10^7 times as large (past f16's largest)
/// on an input and h_0 10^-7 times (h_0 among f16's subnormals; the gates short of saturation),
/// and four steps of weights 10^-6 times as large (among its subnormals) from h_0 10^6 times
/// (past its largest; W_hh h_0 still counts, and a GRU carries such an h on).
#[test]
fn persistent_tf32_wgmma_forward_matches_the_f64_cpu_path() {
    let test = "persistent_tf32_wgmma_forward_matches_the_f64_cpu_path";
    let tf32 = |mode, (layers, batch, seq, input, hidden)| {
        let mut shape = shape((mode, Biases::Both), (layers, batch, seq, input, hidden));
        shape.cfg.math = MathMode::Tf32;
        shape.with_algo(RnnAlgo::Persistent)
    };
    let cases = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [
            (1, 32, 4, 64, 1024),
            (1, 128, 5, 64, 1024),
            (2, 96, 3, 200, 1024),
            (1, 64, 3, 96, 512),
        ]
        .map(move |s| tf32(mode, s))
    });
    check_each(test, cases, |gpu, shape, rng, verdicts| {
        for with_state in [false, true] {
            check_tf32(gpu, &shape, (false, with_state), rng, verdicts);
        }
    });
    // The default's rule gives such calls the kernels, graphed and eager, in stacks of three.
    let defaults = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [
            ((1, 128, 4, 64, 1024), Launch::Graphed),
            ((3, 96, 3, 64, 1024), Launch::Eager),
        ]
        .map(move |(s, launch)| {
            let mut shape = tf32(mode, s).with_algo(RnnAlgo::Heuristic);
            shape.cfg.launch = launch;
            shape
        })
    });
    check_each(test, defaults, |gpu, shape, rng, verdicts| {
        check_tf32(gpu, &shape, (false, true), rng, verdicts);
    });
    // (steps, and the factors of the weights, the input and the state)
    let extremes = [(1, [1e7, 1e-7, 1e-7]), (4, [1e-6, 1.0, 1e6])];
    let extremes = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        extremes.map(|(seq, factors)| {
            let mut shape = shape((mode, Biases::Neither), (1, 32, seq, 64, 1024));
            shape.cfg.math = MathMode::Tf32;
            (shape.with_algo(RnnAlgo::Persistent), factors)
        })
    });
    check_each(test, extremes, |gpu, (shape, [w, x, s]), rng, verdicts| {
        let mut inputs = Inputs::random(&shape, true, DType::F32, rng);
        inputs.w = (&inputs.w * w).unwrap();
        inputs.x = (&inputs.x * x).unwrap();
        inputs.s = inputs.s.map(|s0| (s0 * s).unwrap());
        let what = format!(
            "{} tf32 inference, weights x {w:e}, input x {x:e}, h0 x {s:e}",
            shape.name()
        );
        check_tf32_on(gpu, &shape, false, &inputs, &what, verdicts);
    });
}

/// f32 inference in TF32 where f32 tiles would not fit on chip, as scaled f16 operands on the
/// layer-by-layer forward (`Plan::scaled`, its shared memory the f16 layout's): PTB large's two
/// layers of 1500 at batch 20, LSTM and GRU, from zeros and from a given state, each by
/// [`check_tf32`]; asked for (`Persistent`) and by the default's rule (`Heuristic`, graphed).
#[test]
fn persistent_tf32_scaled_inference_matches_the_f64_cpu_path_past_f32s_fit() {
    let test = "persistent_tf32_scaled_inference_matches_the_f64_cpu_path_past_f32s_fit";
    let cases = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [RnnAlgo::Persistent, RnnAlgo::Heuristic].map(|algo| {
            let mut shape = shape((mode, Biases::Both), (2, 20, 4, 64, 1500));
            shape.cfg.math = MathMode::Tf32;
            shape.cfg.launch = Launch::Graphed;
            shape.with_algo(algo)
        })
    });
    check_each(test, cases, |gpu, shape, rng, verdicts| {
        for with_state in [false, true] {
            check_tf32(gpu, &shape, (false, with_state), rng, verdicts);
        }
    });
}

/// The least bound of [`persistent_tf32_matches_the_f64_cpu_path`]: TF32 keeps 10
/// mantissa bits (relative rounding 2^-11, about 5e-4), and a few 1e-4 are seen either way.
const TF32_FLOOR: f64 = 1e-3;

/// A single bias per gate (the kernels read no `b_hh`: a GRU's n gate then has no bias inside
/// r's product) and no biases at all, LSTM and GRU: one layer, and two layers at an odd batch.
#[test]
fn persistent_single_and_no_bias_match_the_f64_cpu_path() {
    use Biases::{Neither, Single};
    run_cells(
        "persistent_single_and_no_bias_match_the_f64_cpu_path",
        &[
            (RnnMode::Lstm, Single),
            (RnnMode::Gru, Single),
            (RnnMode::Lstm, Neither),
            (RnnMode::Gru, Neither),
        ],
        &[(1, 5, 7, 32, 64), (2, 3, 6, 40, 96)],
    );
}

/// Bidirectional layers (`persistent/units.rs`: each direction in turn, the reverse one on its
/// input flipped in time, the outputs joined into the layer's `[T, B, 2H]`; the backward splits
/// the output gradient and adds the reverse direction's input gradient in time order), LSTM and
/// GRU in bf16 and f16: one layer at batch 32 (one cluster), batch 128 (batch groups), stacks of
/// two at an odd batch whose input (100) and hidden size (130; the upper layers' input 260)
/// need padded rows, two layers at batch 32 (planned as one layer, `persistent/mod.rs`'s
/// `planned_layers`: batch groups of one cluster each, gates in registers, no folded input),
/// one layer of 512 at batch 128 (inference on the wgmma forward in two subgroups, both
/// directions at once: `rules.rs`'s `shape_wgmma_side_by_side`), three small layers, one step
/// through two layers; then TF32 (one layer,
/// and a stack at a hidden size that fills no tile) by [`check_tf32`]. Inference from zeros and
/// from a state, then every gradient, as [`check`].
#[test]
fn persistent_bidirectional_matches_the_f64_cpu_path() {
    let test = "persistent_bidirectional_matches_the_f64_cpu_path";
    let bidirectional = |mode, sizes| {
        let mut shape = shape((mode, Biases::Both), sizes);
        shape.cfg.bidirectional = true;
        shape
    };
    let half = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [
            (1, 32, 20, 64, 128),
            (1, 128, 6, 32, 128),
            (2, 17, 12, 100, 130),
            (2, 32, 10, 64, 128),
            (1, 128, 4, 32, 512),
            (3, 8, 5, 48, 64),
            (2, 2, 1, 24, 48),
        ]
        .into_iter()
        .flat_map(move |s| [DType::BF16, DType::F16].map(|dtype| (bidirectional(mode, s), dtype)))
    });
    let tf32 = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [(1, 32, 6, 32, 128), (2, 8, 5, 40, 66)].map(|s| {
            let mut shape = bidirectional(mode, s);
            shape.cfg.math = MathMode::Tf32;
            (shape, DType::F32)
        })
    });
    check_each(
        test,
        half.chain(tf32),
        |gpu, (shape, dtype), rng, verdicts| match dtype {
            DType::F32 => {
                for (train, with_state) in [(false, false), (false, true), (true, true)] {
                    check_tf32(gpu, &shape, (train, with_state), rng, verdicts);
                }
            }
            _ => check(gpu, &shape, dtype, rng, verdicts),
        },
    );
}

/// A bidirectional stack with inter-layer dropout trains and infers on the kernels (each
/// direction's output through a mask of its own, `persistent/masks.rs`), which
/// `RnnAlgo::Persistent` asks for; its gradients are checked in `dropout.rs`.
#[test]
fn persistent_bidirectional_dropout_runs_on_the_kernels() {
    let test = "persistent_bidirectional_dropout_runs_on_the_kernels";
    let mut stack = shape((RnnMode::Lstm, Biases::Both), (2, 8, 5, 32, 64));
    stack.cfg.bidirectional = true;
    stack.cfg.dropout = 0.5;
    check_each(test, [stack], |gpu, shape, rng, verdicts| {
        let inputs = Inputs::random(&shape, true, DType::F16, rng).to(&gpu.device, DType::F16);
        for train in [true, false] {
            let what = format!("{} dropout 0.5, training {train}", shape.name());
            let want = RnnAlgo::Persistent;
            match call(&shape, &inputs, None, train, true, None) {
                Ok(got) => verdicts.require(got.served == Some(want), || {
                    format!("{what}: served by {:?}, not {want:?}", got.served)
                }),
                Err(e) => verdicts.require(false, || format!("{what}: failed: {e}")),
            }
        }
    });
}

/// Inference batches of several chunks (a step's batch multiplied 32 samples at a time): the
/// grid's batch 128 and the largest, 256, in one layer, and an odd batch whose last chunk ends
/// early in two layers (a wavefront in chunks), LSTM and GRU.
#[test]
fn persistent_inference_in_chunks_matches_the_f64_cpu_path() {
    let cases = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [
            (1, 128, 6, 64, 256),
            (1, 256, 3, 32, 96),
            (2, 77, 5, 40, 200),
        ]
        .into_iter()
        .flat_map(move |s| {
            [DType::BF16, DType::F16].map(|dtype| (shape((mode, Biases::Both), s), dtype))
        })
    });
    check_each(
        "persistent_inference_in_chunks_matches_the_f64_cpu_path",
        cases,
        |gpu, (shape, dtype), rng, verdicts| check_inference(gpu, &shape, dtype, rng, verdicts),
    );
}

/// Training batches of several chunks: batch 96 in one layer, in 8 batch groups of 12
/// (`rules.rs`'s `shape_groups`; each group's bias gradients added by the first), batch 64 at
/// hidden 512 in 8 groups of 8, and a prime batch (67, no groups) whose last chunk ends early in
/// two layers (a wavefront in chunks: both recurrences take a step's batch 32 samples at a
/// time), LSTM and GRU: inference, then every gradient.
#[test]
fn persistent_training_in_chunks_matches_the_f64_cpu_path() {
    run_cells(
        "persistent_training_in_chunks_matches_the_f64_cpu_path",
        &[(RnnMode::Lstm, Biases::Both), (RnnMode::Gru, Biases::Both)],
        &[
            (1, 96, 5, 48, 128),
            (1, 64, 4, 32, 512),
            (2, 67, 4, 40, 200),
        ],
    );
}

/// Batch groups at small sizes, for compute-sanitizer's runs: batch 64 in 8 groups at hidden 64,
/// batch 96 in 8 of 12 at an odd hidden size that fills no tile (46), LSTM and GRU (the GRU's
/// bias gradients with the split gate's slot), inference then every gradient.
#[test]
fn persistent_batch_groups_match_the_f64_cpu_path() {
    run_cells(
        "persistent_batch_groups_match_the_f64_cpu_path",
        &[(RnnMode::Lstm, Biases::Both), (RnnMode::Gru, Biases::Both)],
        &[(1, 64, 3, 16, 64), (1, 96, 2, 24, 46)],
    );
}

/// The default algorithm runs inference past batch 32 on the kernels (in chunks) where its rule
/// says they lead (one layer, hidden up to 256, bf16); training at batch 96 on them (8 batch
/// groups), at batch 79 (a prime, which splits into no groups) for eager calls, on cuDNN for a
/// module replayed from CUDA graphs (`Launch`).
#[test]
fn the_default_runs_inference_in_chunks_on_the_kernels() {
    let cases = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [
            (Launch::Eager, 79, RnnAlgo::Persistent),
            (Launch::Graphed, 79, RnnAlgo::Standard),
            (Launch::Graphed, 96, RnnAlgo::Persistent),
        ]
        .map(|(launch, batch, training)| {
            let mut s =
                shape((mode, Biases::Both), (1, batch, 5, 48, 128)).with_algo(RnnAlgo::Heuristic);
            s.cfg.launch = launch;
            (s, training)
        })
    });
    check_each(
        "the_default_runs_inference_in_chunks_on_the_kernels",
        cases,
        |gpu, (shape, training), rng, verdicts| {
            let dtype = DType::BF16;
            let inputs = Inputs::random(&shape, true, dtype, rng).to(&gpu.device, dtype);
            for (train, want) in [(false, RnnAlgo::Persistent), (true, training)] {
                let served = call(&shape, &inputs, None, train, true, None).map(|o| o.served);
                verdicts.require(matches!(served, Ok(Some(a)) if a == want), || {
                    format!(
                        "{} bf16 {} {:?}: served by {served:?}, the rules name {want:?}",
                        shape.name(),
                        if train { "training" } else { "inference" },
                        shape.cfg.launch
                    )
                });
            }
        },
    );
}

/// The inference forward on the wgmma kernel (`recurrence_wgmma_fwd.cu`, sm_90), which the
/// planner takes at hidden 1024 from batch 32 and at hidden 512 from batch 64 to 128
/// (`rules.rs`'s `shape_wgmma_forward`; on 16-unit blocks where they fit, `shape_wgmma_units`:
/// at batch 32 and 64 of 1024 and one layer of 512): one layer at batch 128 (4 groups of 32), at
/// 64 (2) and at 32 (1), one of 512 at batch 64 (2 groups), two at batch 96
/// (3 groups; the first layer's input 200, the second's the first's output), and three layers
/// of 512 and of 1024 at batch 128 (16 blocks a group at 512), LSTM and GRU with both biases and
/// a GRU with one (no b_hh: n's recurrent side without a bias), bf16 and f16, from zeros and from
/// a given state.
/// The shapes at batch 64 and 128 train too (every gradient): at [*, 128, 512] and
/// [*, 128, 1024] the training forward runs on the kernel (its f32 projection and saves,
/// `shape_wgmma_training`), at 512 beside the backward in its own batch groups, and layers of
/// [*, 128, 1024] run their backward on the wgmma backward (`recurrence_wgmma_bwd.cu`,
/// `shape_wgmma_backward`), and at [*, 64, 1024] the training forward too (32-unit blocks, the
/// backward layer by layer). The [*, 128, 3 x 512] cases train with their forward as
/// one wgmma wavefront (`recurrence_wgmma_wave.cu`, two subgroups a block, `shape_wgmma_wave`);
/// with `CANDLE_RNN_PERSISTENT_WGMMA_SUB=2` their inference runs so too. One layer at batch 32
/// trains too: by default on the layer-by-layer kernels, with `CANDLE_RNN_PERSISTENT_WGMMA=1`
/// on the wgmma forward in one group, and with `CANDLE_RNN_PERSISTENT_WGMMA_UNITS=16` besides
/// on its 16-unit blocks (as are the cases at batch 64 and the [*, 128, 512] ones then, layer by
/// layer). Then the default (`Heuristic`) serves such inference calls on the kernels, graphed
/// and eager.
#[test]
fn persistent_wgmma_forward_matches_the_f64_cpu_path() {
    let test = "persistent_wgmma_forward_matches_the_f64_cpu_path";
    let cells = [
        (RnnMode::Lstm, Biases::Both),
        (RnnMode::Gru, Biases::Both),
        (RnnMode::Gru, Biases::Single),
    ];
    // (Shapes, and whether they train.)
    let cases = cells.into_iter().flat_map(|cell| {
        [
            ((1, 128, 5, 64, 1024), true),
            ((1, 64, 4, 96, 1024), true),
            ((1, 32, 4, 64, 1024), true),
            ((2, 96, 3, 200, 1024), false),
            ((1, 64, 3, 96, 512), false),
            ((3, 128, 3, 64, 512), true),
            ((3, 128, 2, 64, 1024), true),
        ]
        .into_iter()
        .flat_map(move |(s, train)| {
            [DType::BF16, DType::F16].map(|dtype| (shape(cell, s), train, dtype))
        })
    });
    check_each(
        test,
        cases,
        |gpu, (shape, train, dtype), rng, verdicts| match train {
            true => check(gpu, &shape, dtype, rng, verdicts),
            false => check_inference(gpu, &shape, dtype, rng, verdicts),
        },
    );
    let defaults = [RnnMode::Lstm, RnnMode::Gru].into_iter().flat_map(|mode| {
        [Launch::Graphed, Launch::Eager].map(|launch| {
            let mut s =
                shape((mode, Biases::Both), (1, 128, 4, 64, 1024)).with_algo(RnnAlgo::Heuristic);
            s.cfg.launch = launch;
            s
        })
    });
    check_each(test, defaults, |gpu, shape, rng, verdicts| {
        let dtype = DType::F16;
        let inputs = Inputs::random(&shape, true, dtype, rng).to(&gpu.device, dtype);
        let served = call(&shape, &inputs, None, false, true, None).map(|o| o.served);
        verdicts.require(matches!(served, Ok(Some(RnnAlgo::Persistent))), || {
            format!(
                "{} f16 inference {:?}: served by {served:?}, the rules name Persistent",
                shape.name(),
                shape.cfg.launch
            )
        });
    });
}
