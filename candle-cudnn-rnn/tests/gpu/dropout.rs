//! Inter-layer dropout on the GPU, on cuDNN (`Standard`) and on the persistent kernels: the
//! masks follow `set_seed` (replayed exactly, fresh every call, other for another seed, none
//! in inference), and backward uses the forward's masks. The CPU path draws other masks than
//! the GPU, so the gradients are checked against central finite differences of the GPU's own
//! loss along a direction, as gpu_check's persistent dropout check does.

use super::*;
use candle_cudnn_rnn::MathMode;

/// The dropout of every case here.
const P: f32 = 0.5;

fn shape(
    mode: RnnMode,
    (layers, bidirectional): (usize, bool),
    (batch, seq, input, hidden): (usize, usize, usize, usize),
    algo: RnnAlgo,
) -> Shape {
    Shape {
        mode,
        cfg: RnnConfig {
            num_layers: layers,
            bidirectional,
            dropout: P,
            algo,
            ..Default::default()
        },
        batch,
        seq,
        input,
        hidden,
    }
}

/// `shape` in a module built for TF32 products (`MathMode::Tf32`): its f32 calls on the
/// persistent kernels.
fn tf32(mut shape: Shape) -> Shape {
    shape.cfg.math = MathMode::Tf32;
    shape
}

/// The case's name in the printed lines.
fn name(shape: &Shape, dtype: DType) -> String {
    let dtype = match (dtype, shape.cfg.math) {
        (DType::F32, MathMode::Tf32) => "tf32",
        _ => dtype.as_str(),
    };
    format!("{} {:?} {dtype} p={P}", shape.name(), shape.cfg.algo)
}

/// y of a call in training mode (dropout on) or inference, nothing tracked.
fn output(rnn: &Rnn, inputs: &Inputs, train: bool) -> Tensor {
    let state = inputs.s.clone().map(RnnState::from_packed);
    rnn.forward_t(&inputs.x, state.as_ref(), train).unwrap().0
}

/// Masks against seeds: four training calls from a seed, twice, give the same outputs bit
/// for bit; consecutive calls, another seed, and the module without dropout give other
/// outputs; inference equals the module without dropout exactly.
fn check_replay(gpu: &Gpu, shape: &Shape, dtype: DType, rng: &mut StdRng, v: &mut Verdicts) {
    let name = name(shape, dtype);
    let inputs = Inputs::random(shape, true, dtype, rng).to(&gpu.device, dtype);
    let rnn = shape.rnn(&inputs.w);
    let without = Shape {
        cfg: RnnConfig {
            dropout: 0.0,
            ..shape.cfg
        },
        ..*shape
    }
    .rnn(&inputs.w);
    let four_calls = |seed: u64| -> Vec<Tensor> {
        rnn.set_seed(seed);
        (0..4).map(|_| output(&rnn, &inputs, true)).collect()
    };
    let (first, again) = (four_calls(11), four_calls(11));
    rnn.set_seed(12);
    let other_seed = output(&rnn, &inputs, true);
    let plain = output(&without, &inputs, true);
    let replayed = (0..4)
        .map(|k| max_diff(&first[k], &again[k]))
        .fold(0.0, f64::max);
    let consecutive = (1..4)
        .map(|k| rel_err(&first[k], &first[k - 1]))
        .fold(f64::INFINITY, f64::min);
    let seeds = rel_err(&other_seed, &first[0]);
    let dropped = rel_err(&first[0], &plain);
    let inference = max_diff(
        &output(&rnn, &inputs, false),
        &output(&without, &inputs, false),
    );
    eprintln!(
        "{name}: replayed from the seed: max diff {replayed:.1e}; consecutive calls differ by \
         >= {consecutive:.1e}, another seed by {seeds:.1e}, no dropout by {dropped:.1e} \
         (each > 1e-3); inference vs no dropout {inference:.1e}"
    );
    v.require(replayed == 0.0, || {
        format!("{name}: the same seed did not replay the masks (max diff {replayed:.1e})")
    });
    // Half the units dropped between layers moves the top layer's outputs by tens of
    // percent; 1e-3 is far below that and far above rounding.
    v.require(consecutive > 1e-3, || {
        format!("{name}: consecutive calls drew the same masks ({consecutive:.1e})")
    });
    v.require(seeds > 1e-3, || {
        format!("{name}: another seed drew the same masks ({seeds:.1e})")
    });
    v.require(dropped > 1e-3, || {
        format!("{name}: training dropped nothing ({dropped:.1e})")
    });
    v.require(inference == 0.0, || {
        format!("{name}: inference is not the module without dropout ({inference:.1e})")
    });
    if shape.cfg.algo == RnnAlgo::Persistent {
        v.require_persistent(&name, rnn.auto_algo(shape.seq, shape.batch, true));
    }
}

/// gpu_check's bound for a directional derivative against central differences through
/// dropout (f16 on the persistent kernels, whose TF32 products keep as many mantissa bits; f32
/// on cuDNN is well inside it): a gradient under
/// other masks than the forward's is off by 4e-2 or more along w (see `check_gradients`).
const FD_BOUND: f64 = 1e-2;

/// Σ y·gy + Σ state·gs in f64 of a training call from seed 7 (the masks of the analytic call).
fn loss(shape: &Shape, inputs: &Inputs) -> f64 {
    let got = call(shape, inputs, None, true, true, Some(7)).unwrap();
    let dot = |a: &Tensor, b: &Tensor| {
        (host64(a) * host64(b))
            .unwrap()
            .sum_all()
            .unwrap()
            .to_scalar::<f64>()
            .unwrap()
    };
    dot(&got.y, &inputs.gy) + dot(&got.state, &inputs.gs)
}

/// 1 on the input matrices of the layers above the first, 0 elsewhere: the weights that read
/// the dropped outputs of the layer below, whose gradients the masks move the most (half of
/// their columns are zero where a unit was dropped).
fn reads_dropped_inputs(shape: &Shape) -> Tensor {
    let dims = shape.dims();
    let mut ones = vec![0f64; dims.weight_count()];
    for layer in 1..dims.num_layers {
        for direction in 0..dims.num_directions {
            let block = dims.block(layer, direction);
            let len = dims.gate_size() * block.in_size;
            ones[block.w_ih..block.w_ih + len].fill(1.0);
        }
    }
    Tensor::from_vec(ones, dims.weight_count(), &Device::Cpu).unwrap()
}

/// dw and dx of a training call with dropout against central differences of the loss along a
/// direction, the masks drawn from the same seed in every call. The direction is half random,
/// half along the gradient: a random one alone can be nearly orthogonal to the gradient, and
/// the relative error of a tiny derivative says nothing. The perturbed inputs are rounded to
/// the dtype, and their real difference is the step. Seen on the H100, with agreeing masks and
/// with a gradient taken under another seed's masks: along all of w (gpu_check's check)
/// 1.3e-3 to 2.8e-3 (the central difference's own error) against 3.7e-2 to 2.5e-1; along the
/// upper layers' input matrices alone (`reads_dropped_inputs`) 5e-5 to 3e-4 against 2.4e-1
/// to 4.1e-1; along x 3e-5 to 1.3e-3 against 4.4e-3 to 4.4e-1.
fn check_gradients(gpu: &Gpu, shape: &Shape, dtype: DType, rng: &mut StdRng, v: &mut Verdicts) {
    let name = name(shape, dtype);
    let inputs = Inputs::random(shape, true, dtype, rng).to(&gpu.device, dtype);
    let got = call(shape, &inputs, None, true, true, Some(7)).unwrap();
    if shape.cfg.algo == RnnAlgo::Persistent {
        v.require_persistent(&name, got.served);
    }
    let norm = |t: &Tensor| t.sqr().unwrap().sum_all().unwrap().sqrt().unwrap();
    let norm = |t: &Tensor| norm(t).to_scalar::<f64>().unwrap();
    let k = 1.0 / (shape.hidden as f64).sqrt();
    let dw = got.dw.as_ref().expect("dw");
    let dx = got.dx.as_ref().expect("dx");
    let all_of_w = Tensor::ones(dw.dims(), DType::F64, &Device::Cpu).unwrap();
    let all_of_x = Tensor::ones(dx.dims(), DType::F64, &Device::Cpu).unwrap();
    // The loss sums every output rounded to the dtype, so its differences carry that rounding
    // whatever the step; x's derivative being the smallest, its relative error is the noisiest.
    // In bf16 (8 significant bits, 8x f16's spacing) at [3, 128, 2 x 1024] the difference of
    // about 30 strayed from the analytic one by 1e-4 to 1.1e-2 over eleven seeds, the last past
    // the bound; a step 4x as long keeps that noise 4x smaller against the derivative, where
    // the central difference's own error (2e-4 in f32 at 2%) grows 16x.
    let x_step = match dtype {
        DType::BF16 => 0.08,
        _ => 0.02,
    };
    // (quantity, its value, its gradient, the entries moved, the random part's scale: 2% of
    // the value's own, x's in bf16 8%)
    let quantities = [
        ("dw", &inputs.w, dw, all_of_w, 0.02 * k),
        (
            "dW_ih above layer 0",
            &inputs.w,
            dw,
            reads_dropped_inputs(shape),
            0.02 * k,
        ),
        ("dx", &inputs.x, dx, all_of_x, x_step),
    ];
    let mut rows = Vec::new();
    let mut derivatives = Vec::new();
    for (what, value, grad, moved, scale) in quantities {
        let (value, grad) = (host64(value), host64(grad));
        let r = (common::uniform(rng, value.dims(), scale) * &moved).unwrap();
        let grad_moved = (&grad * &moved).unwrap();
        let along = (&grad_moved * (norm(&r) / norm(&grad_moved).max(1e-30))).unwrap();
        let dir = ((r + along).unwrap() * std::f64::consts::FRAC_1_SQRT_2).unwrap();
        // Entries outside `moved` round back to themselves: their step is exactly 0.
        let plus = (&value + &dir).unwrap().to_dtype(dtype).unwrap();
        let minus = (&value - &dir).unwrap().to_dtype(dtype).unwrap();
        let step = (host64(&plus) - host64(&minus)).unwrap();
        let at = |t: &Tensor| {
            let t = t.to_device(&gpu.device).unwrap();
            let mut perturbed = inputs.clone();
            match what {
                "dx" => perturbed.x = t,
                _ => perturbed.w = t,
            }
            loss(shape, &perturbed)
        };
        let differences = at(&plus) - at(&minus);
        let analytic = (&grad * &step)
            .unwrap()
            .sum_all()
            .unwrap()
            .to_scalar::<f64>()
            .unwrap();
        let e = (differences - analytic).abs() / analytic.abs().max(1e-12);
        derivatives.push(format!(
            "{what}·step {analytic:.4e}, differences {differences:.4e}"
        ));
        rows.push((what, e, FD_BOUND));
    }
    v.case(
        &format!("{name} vs finite differences ({})", derivatives.join("; ")),
        &rows,
    );
}

const LSTM: RnnMode = RnnMode::Lstm;
const GRU: RnnMode = RnnMode::Gru;

/// [`check_replay`] on each `(shape, dtype)` of a test.
fn replay(test: &str, cases: &[(Shape, DType)]) {
    check_each(test, cases, |gpu, (shape, dtype), rng, v| {
        check_replay(gpu, shape, *dtype, rng, v)
    });
}

/// [`check_gradients`] on each `(shape, dtype)` of a test.
fn gradients(test: &str, cases: &[(Shape, DType)]) {
    check_each(test, cases, |gpu, (shape, dtype), rng, v| {
        check_gradients(gpu, shape, *dtype, rng, v)
    });
}

#[test]
fn dropout_masks_replay_from_the_seed_on_cudnn() {
    let standard = RnnAlgo::Standard;
    replay(
        "dropout_masks_replay_from_the_seed_on_cudnn",
        &[
            (
                shape(LSTM, (3, false), (8, 10, 64, 64), standard),
                DType::F32,
            ),
            (shape(GRU, (2, true), (5, 6, 16, 32), standard), DType::F32),
            (
                shape(LSTM, (2, false), (6, 8, 32, 48), standard),
                DType::BF16,
            ),
        ],
    );
}

#[test]
fn dropout_masks_replay_from_the_seed_on_the_persistent_kernels() {
    let persistent = RnnAlgo::Persistent;
    replay(
        "dropout_masks_replay_from_the_seed_on_the_persistent_kernels",
        &[
            (
                shape(LSTM, (3, false), (4, 5, 32, 64), persistent),
                DType::F16,
            ),
            (
                shape(LSTM, (2, false), (20, 12, 96, 96), persistent),
                DType::BF16,
            ),
            (
                shape(GRU, (2, false), (6, 7, 32, 80), persistent),
                DType::BF16,
            ),
            (
                tf32(shape(LSTM, (2, false), (20, 12, 96, 96), persistent)),
                DType::F32,
            ),
            (
                tf32(shape(GRU, (3, false), (6, 7, 32, 80), persistent)),
                DType::F32,
            ),
            // Two directions, each output through a mask of its own; hidden 130 in padded rows.
            (
                shape(LSTM, (2, true), (6, 7, 32, 64), persistent),
                DType::F16,
            ),
            (
                shape(GRU, (3, true), (5, 6, 16, 48), persistent),
                DType::BF16,
            ),
            (
                shape(GRU, (2, true), (4, 5, 20, 130), persistent),
                DType::F16,
            ),
        ],
    );
}

#[test]
fn dropout_gradients_use_the_forward_masks_on_cudnn() {
    let standard = RnnAlgo::Standard;
    gradients(
        "dropout_gradients_use_the_forward_masks_on_cudnn",
        &[
            (
                shape(LSTM, (3, false), (4, 5, 32, 64), standard),
                DType::F32,
            ),
            (shape(GRU, (2, true), (5, 6, 16, 32), standard), DType::F32),
        ],
    );
}

#[test]
fn dropout_gradients_use_the_forward_masks_on_the_persistent_kernels() {
    let persistent = RnnAlgo::Persistent;
    gradients(
        "dropout_gradients_use_the_forward_masks_on_the_persistent_kernels",
        &[
            (
                shape(LSTM, (3, false), (4, 5, 32, 64), persistent),
                DType::F16,
            ),
            (
                shape(LSTM, (2, false), (8, 6, 48, 96), persistent),
                DType::F16,
            ),
            (
                shape(GRU, (3, false), (4, 5, 32, 64), persistent),
                DType::F16,
            ),
            // Whole batch groups of 32 at a hidden size of 256: where
            // `CANDLE_RNN_PERSISTENT_WGMMA=1` puts the training forward on wgmma (its masks).
            (
                shape(LSTM, (2, false), (32, 4, 40, 256), persistent),
                DType::BF16,
            ),
            // A batch of 128 at hidden 1024: a stack trains on both wgmma kernels (the forward
            // writes the next layer's input through the masks; the backward takes dy through
            // them).
            (
                shape(GRU, (2, false), (128, 3, 32, 1024), persistent),
                DType::BF16,
            ),
            // A batch of 128 at hidden 512 in 3 layers: the training forward runs as the wgmma
            // wavefront (the upper layers' inputs through the masks).
            (
                shape(LSTM, (3, false), (128, 3, 32, 512), persistent),
                DType::BF16,
            ),
            (
                tf32(shape(LSTM, (2, false), (8, 6, 48, 96), persistent)),
                DType::F32,
            ),
            (
                tf32(shape(GRU, (3, false), (4, 5, 32, 64), persistent)),
                DType::F32,
            ),
            // Two directions (side by side where they fit), each output through a mask of its
            // own: the next layer's input gradient split back through both; hidden 130 in padded
            // rows; and a batch of 128 at hidden 1024 on both wgmma kernels.
            (
                shape(LSTM, (2, true), (4, 5, 32, 64), persistent),
                DType::F16,
            ),
            (
                shape(GRU, (3, true), (4, 5, 16, 48), persistent),
                DType::F16,
            ),
            (
                shape(LSTM, (2, true), (4, 5, 20, 130), persistent),
                DType::F16,
            ),
            (
                shape(GRU, (2, true), (128, 3, 32, 1024), persistent),
                DType::BF16,
            ),
        ],
    );
}
