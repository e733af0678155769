//! cuDNN's algorithms against the CPU path in f64 on the same rounded inputs: inference
//! (outputs, final states) and training (those and every gradient), with initial states and
//! per-sample lengths.

use super::*;
use candle_core::DType::{BF16, F16, F32};
use rand::Rng;

/// Output and gradient bounds (relative L2 error) from gpu_check. `Standard` in f32 with fp32
/// arithmetic (FMA, no TF32) agrees with f64 to about 1e-7: `Case::tolerances`' 1e-5 and 1e-4.
/// cuDNN's persistent algorithms sum in another order: gpu_check's `check_algos` holds them
/// to 1e-4 of `Standard` (seen: 5e-6). bf16 and f16 LSTM and GRU: 2e-2 for everything (seen:
/// a few 1e-3 in bf16, a few 1e-4 in f16); a wrong layout or cell gives errors of order 1.
fn bounds(algo: RnnAlgo, dtype: DType) -> (f64, f64) {
    match (algo, dtype) {
        (_, DType::F16 | DType::BF16) => (2e-2, 2e-2),
        (RnnAlgo::Standard, _) => (1e-5, 1e-4),
        _ => (1e-4, 1e-4),
    }
}

struct Case {
    shape: Shape,
    dtype: DType,
    /// An initial state given (and its gradient checked).
    state: bool,
    /// Per-sample lengths in a padded input.
    varlen: bool,
}

fn case(
    mode: RnnMode,
    (layers, bidirectional): (usize, bool),
    (batch, seq, input, hidden): (usize, usize, usize, usize),
    algo: RnnAlgo,
    dtype: DType,
    (state, varlen): (bool, bool),
) -> Case {
    let cfg = RnnConfig {
        num_layers: layers,
        bidirectional,
        algo,
        ..Default::default()
    };
    Case {
        shape: Shape {
            mode,
            cfg,
            batch,
            seq,
            input,
            hidden,
        },
        dtype,
        state,
        varlen,
    }
}

/// `c` for a module replayed from CUDA graphs (`Launch::Graphed`: the default's rules for
/// graphs' replays).
fn graphed(mut c: Case) -> Case {
    c.shape.cfg.launch = Launch::Graphed;
    c
}

/// Random lengths in `1..=seq`: the first sample full, the second (if any) one step long.
fn random_lengths(rng: &mut StdRng, batch: usize, seq: usize) -> Vec<usize> {
    let mut l: Vec<usize> = (0..batch).map(|_| rng.random_range(1..=seq)).collect();
    l[0] = seq;
    if batch > 1 {
        l[1] = 1;
    }
    l
}

/// Inference and training of `case` on the GPU against the f64 CPU path.
fn check(gpu: &Gpu, case: &Case, rng: &mut StdRng, verdicts: &mut Verdicts) {
    let shape = &case.shape;
    let inputs = Inputs::random(shape, case.state, case.dtype, rng);
    let lengths = case
        .varlen
        .then(|| random_lengths(rng, shape.batch, shape.seq));
    let (host, on_gpu) = (
        inputs.to(&Device::Cpu, DType::F64),
        inputs.to(&gpu.device, case.dtype),
    );
    let (out_bound, grad_bound) = bounds(shape.cfg.algo, case.dtype);
    for train in [false, true] {
        let name = format!(
            "{} {:?} {} h0 {} lengths {lengths:?} {}",
            shape.name(),
            shape.cfg.algo,
            case.dtype.as_str(),
            case.state,
            if train { "training" } else { "inference" },
        );
        let l = lengths.as_deref();
        let want = call(
            &shape.with_algo(RnnAlgo::Standard),
            &host,
            l,
            train,
            true,
            None,
        )
        .expect("the CPU path");
        let got = match call(shape, &on_gpu, l, train, true, None) {
            Ok(got) => got,
            Err(e) => {
                verdicts.require(false, || format!("{name}: the GPU call failed: {e}"));
                continue;
            }
        };
        verdicts.require(got.y.device().is_cuda(), || {
            format!("{name}: the output is not on the GPU")
        });
        let rows = bounded(&errors(shape, &got, &want), out_bound, grad_bound);
        verdicts.case(&name, &rows);
        if let Some(l) = &lengths {
            let pad = padding(&got, l);
            verdicts.require(pad == 0.0, || {
                format!("{name}: y or dx past a sample's length is {pad:.1e}, not exactly 0")
            });
        }
    }
}

const LSTM: RnnMode = RnnMode::Lstm;
const GRU: RnnMode = RnnMode::Gru;
const UNI: bool = false;
const BI: bool = true;
/// (initial state given, per-sample lengths)
const H0: (bool, bool) = (true, false);
const ZEROS: (bool, bool) = (false, false);
const H0_LENGTHS: (bool, bool) = (true, true);
const LENGTHS: (bool, bool) = (false, true);

#[test]
fn cudnn_standard_f32_matches_the_f64_cpu_path() {
    let standard = RnnAlgo::Standard;
    check_each(
        "cudnn_standard_f32_matches_the_f64_cpu_path",
        &[
            case(LSTM, (2, UNI), (5, 7, 20, 32), standard, F32, H0),
            case(GRU, (2, BI), (4, 6, 16, 24), standard, F32, H0),
            case(LSTM, (1, BI), (6, 9, 12, 20), standard, F32, H0_LENGTHS),
            case(GRU, (1, UNI), (5, 8, 10, 18), standard, F32, LENGTHS),
            case(LSTM, (3, BI), (3, 5, 9, 15), standard, F32, ZEROS),
            // Lengths through a bidirectional stack: each reverse direction starts at its
            // sample's own end, on every layer.
            case(GRU, (2, BI), (7, 6, 8, 12), standard, F32, H0_LENGTHS),
        ],
        check,
    );
}

#[test]
fn cudnn_standard_half_precision_matches_the_f64_cpu_path() {
    let standard = RnnAlgo::Standard;
    check_each(
        "cudnn_standard_half_precision_matches_the_f64_cpu_path",
        &[
            case(LSTM, (2, BI), (5, 7, 20, 32), standard, BF16, H0),
            case(GRU, (2, UNI), (6, 9, 12, 20), standard, BF16, H0_LENGTHS),
            case(LSTM, (2, UNI), (4, 6, 16, 24), standard, F16, ZEROS),
            case(GRU, (1, BI), (6, 9, 12, 20), standard, F16, H0_LENGTHS),
            case(LSTM, (1, BI), (5, 8, 10, 18), standard, F16, LENGTHS),
        ],
        check,
    );
}

/// cuDNN's `PersistStatic` on shapes it accepts (gpu_check's `check_algos`: a 2-layer
/// bidirectional LSTM, a GRU), against the f64 CPU path.
#[test]
fn cudnn_persist_static_matches_the_f64_cpu_path() {
    let ps = RnnAlgo::PersistStatic;
    check_each(
        "cudnn_persist_static_matches_the_f64_cpu_path",
        &[
            case(LSTM, (2, BI), (8, 10, 64, 64), ps, F32, H0),
            case(LSTM, (2, BI), (8, 10, 64, 64), ps, F16, ZEROS),
            case(GRU, (1, UNI), (16, 12, 128, 128), ps, F32, ZEROS),
            case(GRU, (1, UNI), (16, 12, 128, 128), ps, F16, H0),
        ],
        check,
    );
}

/// cuDNN's `PersistStaticSmallH` (which the default algorithm picks for f32 and f16 LSTMs and
/// GRUs of one direction at hidden sizes up to 128) against the f64 CPU path.
#[test]
fn cudnn_persist_static_small_h_matches_the_f64_cpu_path() {
    let psh = RnnAlgo::PersistStaticSmallH;
    check_each(
        "cudnn_persist_static_small_h_matches_the_f64_cpu_path",
        &[
            case(LSTM, (1, UNI), (16, 12, 128, 128), psh, F32, H0),
            case(GRU, (2, UNI), (8, 10, 64, 64), psh, F32, ZEROS),
            case(LSTM, (1, UNI), (16, 12, 128, 128), psh, F16, H0),
            case(GRU, (1, UNI), (32, 9, 128, 128), psh, F16, ZEROS),
        ],
        check,
    );
}

/// The default algorithm (`RnnAlgo::Heuristic`) serves each call with the kernel its rules name
/// (`Rnn::last_algo`), and matches the f64 CPU path there.
#[test]
fn the_default_serves_its_rules_kernels_and_matches_the_f64_cpu_path() {
    let default = RnnAlgo::Heuristic;
    let cases = [
        (
            case(LSTM, (1, UNI), (16, 12, 128, 128), default, F32, H0),
            [RnnAlgo::PersistStaticSmallH; 2],
        ),
        // f16 at hidden 128: ours in batch groups, but a GRU's training at a batch that is not a
        // multiple of 8 on cuDNN's SmallH.
        (
            case(GRU, (1, UNI), (32, 9, 128, 128), default, F16, ZEROS),
            [RnnAlgo::Persistent; 2],
        ),
        (
            case(GRU, (1, UNI), (20, 9, 128, 128), default, F16, H0),
            [RnnAlgo::Persistent, RnnAlgo::PersistStaticSmallH],
        ),
        // f16 LSTM from hidden 256: cuDNN's PersistStatic for one layer's inference at batch 16,
        // ours for its training.
        (
            case(LSTM, (1, UNI), (16, 10, 256, 256), default, F16, H0),
            [RnnAlgo::PersistStatic, RnnAlgo::Persistent],
        ),
        // Past batch 32 ours lead it in inference too, and `PersistStaticSmallH` in a stack at
        // hidden 128 up to batch 96; at 97-128 in training only (`choose.rs`'s
        // `ours_lead_persist_static`, `small_h_leads_ours`).
        (
            case(LSTM, (1, UNI), (48, 3, 256, 256), default, F16, H0),
            [RnnAlgo::Persistent; 2],
        ),
        (
            case(GRU, (3, UNI), (48, 3, 128, 128), default, F16, ZEROS),
            [RnnAlgo::Persistent; 2],
        ),
        (
            case(LSTM, (2, UNI), (16, 3, 128, 128), default, F16, H0),
            [RnnAlgo::Persistent; 2],
        ),
        (
            case(LSTM, (2, UNI), (128, 2, 128, 128), default, F16, H0),
            [RnnAlgo::PersistStaticSmallH, RnnAlgo::Persistent],
        ),
        (
            case(LSTM, (2, UNI), (8, 9, 64, 64), default, BF16, H0),
            [RnnAlgo::Persistent; 2],
        ),
        (
            case(LSTM, (1, BI), (5, 7, 20, 32), default, F32, H0),
            [RnnAlgo::Standard; 2],
        ),
        // Bidirectional stacks in half precision: ours, each direction in turn
        // (`ours_lead_bidirectional`).
        (
            case(GRU, (2, BI), (16, 5, 48, 64), default, F16, H0),
            [RnnAlgo::Persistent; 2],
        ),
        (
            case(GRU, (1, UNI), (16, 12, 128, 128), default, BF16, ZEROS),
            [RnnAlgo::Persistent; 2],
        ),
        // Three layers: ours where each pass runs as one wavefront; at hidden 1024 and batch
        // 32, where the stack does not fit on the GPU at once, ours infer layer by layer on the
        // wgmma forward (`shape_wgmma_forward`) and cuDNN trains.
        (
            case(GRU, (3, UNI), (8, 6, 32, 64), default, BF16, H0),
            [RnnAlgo::Persistent; 2],
        ),
        (
            case(LSTM, (3, UNI), (32, 2, 64, 1024), default, BF16, ZEROS),
            [RnnAlgo::Persistent, RnnAlgo::Standard],
        ),
        // Past batch 32, at a batch no batch groups divide (61): ours for a small stack in one
        // launch (the batch in chunks).
        (
            case(GRU, (2, UNI), (61, 3, 32, 200), default, BF16, H0),
            [RnnAlgo::Persistent; 2],
        ),
        // A stack whose backward alone runs as one wavefront (the forward's tile in chunks does
        // not fit): its training on ours; its inference on ours eagerly (layer by layer), on
        // cuDNN in a module replayed from CUDA graphs (`Launch`).
        (
            case(LSTM, (2, UNI), (61, 3, 32, 650), default, BF16, H0),
            [RnnAlgo::Persistent, RnnAlgo::Persistent],
        ),
        (
            graphed(case(LSTM, (2, UNI), (61, 3, 32, 650), default, BF16, H0)),
            [RnnAlgo::Standard, RnnAlgo::Persistent],
        ),
        // At batch 64 the same stack runs in batch groups, layer by layer: ours, graphed too.
        (
            graphed(case(LSTM, (2, UNI), (64, 3, 32, 650), default, BF16, H0)),
            [RnnAlgo::Persistent; 2],
        ),
        // Eagerly, a stack at hidden 1024 at batch 128 trains on ours (layer by layer,
        // `choose.rs`'s `ours_lead_stack_eagerly`) and infers on ours' wgmma forward
        // (`wgmma_leads`; cuDNN inferred before it).
        (
            case(LSTM, (2, UNI), (128, 2, 16, 1024), default, BF16, H0),
            [RnnAlgo::Persistent; 2],
        ),
        // Graphed at batch 128 and hidden 1024: one layer trains on ours too (the wgmma forward,
        // `shape_wgmma_training`), a stack on `Standard`, which overlaps its layers.
        (
            graphed(case(GRU, (1, UNI), (128, 3, 16, 1024), default, F16, H0)),
            [RnnAlgo::Persistent; 2],
        ),
        (
            graphed(case(
                LSTM,
                (2, UNI),
                (128, 2, 16, 1024),
                default,
                BF16,
                ZEROS,
            )),
            [RnnAlgo::Persistent, RnnAlgo::Standard],
        ),
        // Past batch 128, a stack at hidden 128: ours eagerly; graphed its training only
        // (`ours_lead_wide_batch_stack`).
        (
            case(GRU, (2, UNI), (200, 3, 32, 128), default, BF16, ZEROS),
            [RnnAlgo::Persistent; 2],
        ),
        (
            graphed(case(GRU, (2, UNI), (200, 3, 32, 128), default, BF16, ZEROS)),
            [RnnAlgo::Standard, RnnAlgo::Persistent],
        ),
        // f16 at hidden 128 past batch 128: cuDNN's SmallH infers, ours train one layer and
        // a GRU stack (`small_h_leads_ours`).
        (
            case(GRU, (1, UNI), (200, 3, 32, 128), default, F16, H0),
            [RnnAlgo::PersistStaticSmallH, RnnAlgo::Persistent],
        ),
        (
            case(GRU, (2, UNI), (200, 3, 32, 128), default, F16, ZEROS),
            [RnnAlgo::PersistStaticSmallH, RnnAlgo::Persistent],
        ),
        (
            case(LSTM, (1, UNI), (6, 9, 12, 20), default, F32, H0_LENGTHS),
            [RnnAlgo::Standard; 2],
        ),
    ];
    check_each(
        "the_default_serves_its_rules_kernels_and_matches_the_f64_cpu_path",
        &cases,
        |gpu, (case, wants), rng, verdicts| {
            check(gpu, case, rng, verdicts);
            let shape = &case.shape;
            let inputs =
                Inputs::random(shape, case.state, case.dtype, rng).to(&gpu.device, case.dtype);
            let lengths = case
                .varlen
                .then(|| random_lengths(rng, shape.batch, shape.seq));
            for train in [false, true] {
                // The rules' kernel for inference, then for training.
                let want = wants[usize::from(train)];
                let served =
                    call(shape, &inputs, lengths.as_deref(), train, true, None).map(|o| o.served);
                verdicts.require(matches!(served, Ok(Some(a)) if a == want), || {
                    format!(
                        "{} {} {}: served by {served:?}, the rules name {want:?}",
                        shape.name(),
                        case.dtype.as_str(),
                        if train { "training" } else { "inference" }
                    )
                });
            }
        },
    );
}
