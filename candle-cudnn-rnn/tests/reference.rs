//! The CPU op against an independent step-loop reference (candle ops + candle autograd), on
//! random shapes, plus cell steps worked out by hand.

mod common;

use candle_core::{DType, Device, Tensor};
use candle_cudnn_rnn::{Rnn, RnnConfig, RnnMode, RnnState};
use common::*;
use rand::Rng;

const MODES: [RnnMode; 4] = [
    RnnMode::Lstm,
    RnnMode::Gru,
    RnnMode::RnnTanh,
    RnnMode::RnnRelu,
];

fn random_case(rng: &mut rand::rngs::StdRng) -> Case {
    let mode = MODES[rng.random_range(0..4)];
    let hidden = rng.random_range(1..6);
    // Half the LSTMs project h to fewer features.
    let proj_size = match mode == RnnMode::Lstm && hidden > 1 && rng.random() {
        true => rng.random_range(1..hidden),
        false => 0,
    };
    Case {
        mode,
        input: rng.random_range(1..6),
        hidden,
        cfg: RnnConfig {
            num_layers: rng.random_range(1..4),
            bias: rng.random(),
            single_bias: rng.random(),
            bidirectional: rng.random(),
            proj_size,
            ..Default::default()
        },
        seq: rng.random_range(1..7),
        batch: rng.random_range(1..4),
    }
}

/// Outputs, final state and all gradients of the op against the step-loop reference, f64.
fn matches_the_step_loop(case: &Case, rng: &mut rand::rngs::StdRng) {
    let (w, x, s) = case.random_inputs(rng);
    let (y0, _) = reference(&case.dims(), &w, &x, &s).unwrap();
    let gy = uniform(rng, y0.dims(), 1.0);
    let gs = uniform(rng, s.dims(), 1.0);
    let (args, weights) = ((&w, &x, &s), (&gy, &gs));
    let (y, st, g) = op_grads(case, None, args, weights).unwrap();
    let (ry, rst, rg) = reference_grads(case, args, weights).unwrap();
    let what = format!("{:?} seq {} batch {}", case.dims(), case.seq, case.batch);
    assert!(rel_err(&y, &ry) < 1e-12, "y: {what}");
    assert!(rel_err(&st, &rst) < 1e-12, "state: {what}");
    for (name, (a, b)) in ["dx", "dw", "dstate"].iter().zip(g.iter().zip(rg.iter())) {
        let e = rel_err(a, b);
        assert!(e < 1e-11, "{name} rel err {e}: {what}");
    }
}

#[test]
fn outputs_and_gradients_match_the_step_loop_on_random_shapes() {
    let mut rng = rng("random_shapes");
    for _ in 0..40 {
        let case = random_case(&mut rng);
        matches_the_step_loop(&case, &mut rng);
    }
}

#[test]
fn f32_matches_the_f64_reference() {
    let mut rng = rng("f32");
    for _ in 0..10 {
        let case = random_case(&mut rng);
        let (w, x, s) = case.random_inputs(&mut rng);
        let (ry, rs) = reference(&case.dims(), &w, &x, &s).unwrap();
        let f = |t: &Tensor| t.to_dtype(DType::F32).unwrap();
        let rnn = case.rnn(&f(&w));
        let (y, st) = rnn
            .forward(&f(&x), Some(&RnnState::from_packed(f(&s))))
            .unwrap();
        assert!(rel_err(&y, &ry) < 1e-5 && rel_err(st.packed(), &rs) < 1e-5);
    }
}

/// f16 and bf16 compute in f32: outputs and gradients match the f64 reference on the same
/// rounded inputs up to the rounding of the results.
#[test]
fn half_precision_matches_the_f64_reference() {
    let mut rng = rng("half");
    for (dtype, tol) in [(DType::F16, 4e-3), (DType::BF16, 2e-2)] {
        for _ in 0..6 {
            let case = random_case(&mut rng);
            let (w, x, s) = case.random_inputs(&mut rng);
            let round = |t: &Tensor| t.to_dtype(dtype).unwrap();
            let up = |t: &Tensor| round(t).to_dtype(DType::F64).unwrap();
            let (w, x, s) = (up(&w), up(&x), up(&s));
            let (y0, _) = reference(&case.dims(), &w, &x, &s).unwrap();
            let (gy, gs) = (
                uniform(&mut rng, y0.dims(), 1.0),
                uniform(&mut rng, s.dims(), 1.0),
            );
            let rounded = (round(&w), round(&x), round(&s));
            let rounded_weights = (round(&gy), round(&gs));
            let (y, st, g) = op_grads(
                &case,
                None,
                (&rounded.0, &rounded.1, &rounded.2),
                (&rounded_weights.0, &rounded_weights.1),
            )
            .unwrap();
            let (gy, gs) = (up(&gy), up(&gs));
            let (ry, rst, rg) = reference_grads(&case, (&w, &x, &s), (&gy, &gs)).unwrap();
            assert_eq!(y.dtype(), dtype);
            let what = format!("{dtype:?} {:?}", case.dims());
            assert!(rel_err(&y, &ry) < tol, "y {}: {what}", rel_err(&y, &ry));
            assert!(rel_err(&st, &rst) < tol, "state: {what}");
            for (a, b) in g.iter().zip(&rg) {
                assert_eq!(a.dtype(), dtype);
                assert!(rel_err(a, b) < tol, "grad {}: {what}", rel_err(a, b));
            }
        }
    }
}

#[test]
fn batch_first_and_strided_inputs_give_the_same_result() {
    let mut rng = rng("batch_first");
    let mut case = Case {
        mode: RnnMode::Lstm,
        input: 3,
        hidden: 4,
        cfg: RnnConfig {
            num_layers: 2,
            bidirectional: true,
            ..Default::default()
        },
        seq: 5,
        batch: 2,
    };
    let (w, x, s) = case.random_inputs(&mut rng);
    let state = RnnState::from_packed(s.clone());
    let (y, st) = case.rnn(&w).forward(&x, Some(&state)).unwrap();
    // A transposed (non-contiguous) view in batch-first layout.
    case.cfg.batch_first = true;
    let xb = x.transpose(0, 1).unwrap();
    assert!(!xb.is_contiguous());
    let (yb, stb) = case.rnn(&w).forward(&xb, Some(&state)).unwrap();
    assert_eq!(yb.dims(), &[2, 5, 8]);
    assert!(rel_err(&yb.transpose(0, 1).unwrap(), &y) == 0.0);
    assert!(rel_err(stb.packed(), st.packed()) == 0.0);
}

#[test]
fn zero_state_equals_no_state() {
    let mut rng = rng("zero_state");
    let case = Case {
        mode: RnnMode::Gru,
        input: 2,
        hidden: 3,
        cfg: RnnConfig {
            num_layers: 2,
            ..Default::default()
        },
        seq: 4,
        batch: 3,
    };
    let (w, x, _) = case.random_inputs(&mut rng);
    let rnn = case.rnn(&w);
    let (y, _) = rnn.forward(&x, None).unwrap();
    let (y0, _) = rnn.forward(&x, Some(&rnn.zero_state(3).unwrap())).unwrap();
    assert_eq!(rel_err(&y, &y0), 0.0);
}

/// One LSTM step with input 1, hidden 1: only the g gate's input weight is 1, the rest 0.
/// i = f = o = σ(0) = 1/2, g = tanh(1), c = i·g = tanh(1)/2, h = o·tanh(c).
#[test]
fn lstm_cell_step_by_hand() {
    let cfg = RnnConfig {
        bias: true,
        ..Default::default()
    };
    // weight_ih [4,1] (i,f,g,o), weight_hh [4,1], bias_ih [4], bias_hh [4].
    let w = [
        0., 0., 1., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0.,
    ];
    let rnn = Rnn::from_weight(
        RnnMode::Lstm,
        1,
        1,
        cfg,
        Tensor::new(&w, &Device::Cpu).unwrap(),
    )
    .unwrap();
    let x = Tensor::new(&[[[1f64]]], &Device::Cpu).unwrap();
    let (y, st) = rnn.forward(&x, None).unwrap();
    let c = 1f64.tanh() / 2.0; // 0.3807970779778824
    let h = 0.5 * c.tanh(); // 0.18171...
    assert!((c - 0.380_797_077_977_882_4).abs() < 1e-15);
    assert!((y.flatten_all().unwrap().to_vec1::<f64>().unwrap()[0] - h).abs() < 1e-15);
    let st = st.packed().flatten_all().unwrap().to_vec1::<f64>().unwrap();
    assert!((st[0] - h).abs() < 1e-15 && (st[1] - c).abs() < 1e-15);
}

/// One GRU step with input 1, hidden 1, h0 = 1/2: weights pick r, z, n apart.
/// W_ir = 1, W_iz = 0, W_in = 1; W_hr = 0, W_hz = 0, W_hn = 2; b_hn = 1, other biases 0; x = 1:
/// r = σ(1), z = σ(0) = 1/2, n = tanh(1 + r·(2·h0 + 1)) = tanh(1 + 2r), h = (1−z)·n + z·h0.
#[test]
fn gru_cell_step_by_hand() {
    let cfg = RnnConfig::default();
    let w = [1., 0., 1., 0., 0., 2., 0., 0., 0., 0., 0., 1.];
    let rnn = Rnn::from_weight(
        RnnMode::Gru,
        1,
        1,
        cfg,
        Tensor::new(&w, &Device::Cpu).unwrap(),
    )
    .unwrap();
    let x = Tensor::new(&[[[1f64]]], &Device::Cpu).unwrap();
    let h0 = Tensor::new(&[[[0.5f64]]], &Device::Cpu).unwrap();
    let (y, _) = rnn
        .forward(&x, Some(&RnnState::new(&h0, None).unwrap()))
        .unwrap();
    let r = 1.0 / (1.0 + (-1f64).exp());
    let n = (1.0 + 2.0 * r).tanh();
    let h = 0.5 * n + 0.25;
    assert!((y.flatten_all().unwrap().to_vec1::<f64>().unwrap()[0] - h).abs() < 1e-15);
}

/// Batches big enough for the CPU path's per-sample loops to run on several threads.
#[test]
fn large_batches_match_the_step_loop() {
    let mut rng = rng("large_batches");
    for (mode, hidden, proj_size) in [
        (RnnMode::Lstm, 64, 0),
        (RnnMode::Gru, 100, 0),
        (RnnMode::RnnTanh, 300, 0),
        (RnnMode::Lstm, 64, 24),
    ] {
        let case = Case {
            mode,
            input: 7,
            hidden,
            cfg: RnnConfig {
                num_layers: 2,
                bidirectional: true,
                proj_size,
                ..Default::default()
            },
            seq: 3,
            batch: 64,
        };
        matches_the_step_loop(&case, &mut rng);
    }
}
