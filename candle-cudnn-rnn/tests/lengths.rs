//! Variable-length sequences: each sample against the same module run on that sample alone,
//! exact zeros in the padding, finite-difference gradients, and bad lengths.

mod common;

use candle_core::{Device, IndexOp, Tensor};
use candle_cudnn_rnn::{Bias, RnnConfig, RnnMode, RnnState};
use common::*;
use rand::Rng;

const MODES: [RnnMode; 4] = [
    RnnMode::Lstm,
    RnnMode::Gru,
    RnnMode::RnnTanh,
    RnnMode::RnnRelu,
];

fn case(rng: &mut rand::rngs::StdRng, mode: RnnMode) -> Case {
    Case {
        mode,
        input: rng.random_range(1..5),
        hidden: rng.random_range(1..5),
        cfg: RnnConfig {
            num_layers: rng.random_range(1..4),
            bidirectional: rng.random(),
            bias: rng.random(),
            ..Default::default()
        },
        seq: rng.random_range(2..7),
        batch: rng.random_range(1..5),
    }
}

fn lengths(rng: &mut rand::rngs::StdRng, c: &Case) -> Vec<usize> {
    let mut l: Vec<usize> = (0..c.batch).map(|_| rng.random_range(1..=c.seq)).collect();
    l[0] = c.seq; // one full-length sample, the others anywhere
    l
}

#[test]
fn each_sample_equals_its_own_unpadded_run_and_padding_is_zero() {
    let mut rng = rng("lengths");
    for i in 0..42 {
        let mut c = case(&mut rng, MODES[i % 4]);
        if i >= 40 {
            // Big enough for the CPU path's per-sample loops to run on several threads.
            (c.batch, c.hidden) = (64, 80);
        }
        let (w, x, s) = c.random_inputs(&mut rng);
        let lens = lengths(&mut rng, &c);
        let rnn = c.rnn(&w);
        let state = RnnState::from_packed(s.clone());
        let (y, st) = rnn
            .forward_with_lengths(&x, &lens, Some(&state), false)
            .unwrap();
        for (b, &l) in lens.iter().enumerate() {
            let xb = x.i((..l, b..b + 1)).unwrap();
            let sb = RnnState::from_packed(s.i((.., .., b..b + 1)).unwrap().contiguous().unwrap());
            let (yb, stb) = rnn.forward(&xb, Some(&sb)).unwrap();
            let what = format!("{:?} lengths {lens:?} sample {b}", c.dims());
            assert!(
                rel_err(&y.i((..l, b..b + 1)).unwrap(), &yb) < 1e-13,
                "y {what}"
            );
            let final_b = st.packed().i((.., .., b..b + 1)).unwrap();
            assert!(rel_err(&final_b, stb.packed()) < 1e-13, "state {what}");
            if l < c.seq {
                let pad = y.i((l.., b)).unwrap().abs().unwrap().max_all().unwrap();
                assert_eq!(pad.to_scalar::<f64>().unwrap(), 0.0, "padding {what}");
            }
        }
    }
}

#[test]
fn full_lengths_change_nothing_and_tensors_work_as_lengths() {
    let mut rng = rng("full_lengths");
    let c = case(&mut rng, RnnMode::Lstm);
    let (w, x, _) = c.random_inputs(&mut rng);
    let rnn = c.rnn(&w);
    let (y, _) = rnn.forward(&x, None).unwrap();
    let full = Tensor::full(c.seq as u32, c.batch, &Device::Cpu).unwrap();
    let (yl, _) = rnn.forward_with_lengths(&x, &full, None, false).unwrap();
    assert_eq!(rel_err(&y, &yl), 0.0);
    let full = Tensor::full(c.seq as i64, c.batch, &Device::Cpu).unwrap();
    let (yl, _) = rnn.forward_with_lengths(&x, &full, None, false).unwrap();
    assert_eq!(rel_err(&y, &yl), 0.0);
}

/// Finite differences through the padding: the padded inputs get exactly zero gradient.
#[test]
fn gradients_with_lengths_match_finite_differences() {
    let mut rng = rng("lengths_gradcheck");
    for mode in MODES {
        let c = Case {
            mode,
            input: 2,
            hidden: 3,
            cfg: RnnConfig {
                num_layers: 2,
                bidirectional: true,
                bias: true,
                single_bias: mode == RnnMode::Gru,
                ..Default::default()
            },
            seq: 4,
            batch: 3,
        };
        assert_eq!(
            c.dims().bias,
            if mode == RnnMode::Gru {
                Bias::Single
            } else {
                Bias::Double
            }
        );
        let lens = [4usize, 1, 3];
        let (w, x, s) = c.random_inputs(&mut rng);
        let (y0, _) = c.rnn(&w).forward(&x, None).unwrap();
        let gy = uniform(&mut rng, y0.dims(), 1.0);
        let gs = uniform(&mut rng, s.dims(), 1.0);
        let (args, weights) = ((&w, &x, &s), (&gy, &gs));
        let (_, _, grads) = op_grads(&c, Some(&lens), args, weights).unwrap();
        let dx = &grads[0];
        // Sample 1 has one step and sample 2 three: every later input is padding.
        let pad = (dx.i((1.., 1)).unwrap().abs().unwrap().sum_all().unwrap()
            + dx.i((3.., 2)).unwrap().abs().unwrap().sum_all().unwrap())
        .unwrap();
        assert_eq!(pad.to_scalar::<f64>().unwrap(), 0.0, "{mode:?}");
        let name = format!("{mode:?} ");
        check_every_coordinate(&name, (&c, Some(&lens)), args, weights, &grads);
    }
}

#[test]
fn bad_lengths_are_clear_errors() {
    let mut rng = rng("bad_lengths");
    let c = Case {
        mode: RnnMode::Gru,
        input: 2,
        hidden: 2,
        cfg: RnnConfig::default(),
        seq: 3,
        batch: 2,
    };
    let (w, x, _) = c.random_inputs(&mut rng);
    let rnn = c.rnn(&w);
    let err = |l: &[usize]| {
        rnn.forward_with_lengths(&x, l, None, false)
            .unwrap_err()
            .to_string()
    };
    assert!(err(&[3, 0]).contains("length 0 of sample 1 is outside 1..=3"));
    assert!(err(&[4, 1]).contains("length 4 of sample 0"));
    assert!(err(&[3]).contains("1 sequence lengths for a batch of 2"));
    let neg = Tensor::new(&[2i64, -1], &Device::Cpu).unwrap();
    let e = rnn.forward_with_lengths(&x, &neg, None, false).unwrap_err();
    assert!(e.to_string().contains("negative"), "{e}");
    let f = Tensor::new(&[2f32, 1.], &Device::Cpu).unwrap();
    let e = rnn.forward_with_lengths(&x, &f, None, false).unwrap_err();
    assert!(e.to_string().contains("u32 or i64"), "{e}");
}
