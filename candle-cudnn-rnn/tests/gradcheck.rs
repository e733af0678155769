//! Gradients of the CPU op against central finite differences in f64.

mod common;

use candle_cudnn_rnn::{Bias, RnnConfig, RnnMode};
use common::*;

fn gradcheck(mode: RnnMode, bias: Bias, with_state: bool) {
    gradcheck_projected(mode, bias, with_state, 0)
}

fn gradcheck_projected(mode: RnnMode, bias: Bias, with_state: bool, proj_size: usize) {
    let mut rng = rng(&format!(
        "gradcheck {mode:?} bias {bias:?} state {with_state}"
    ));
    let case = Case {
        mode,
        input: 3,
        hidden: 3,
        cfg: RnnConfig {
            num_layers: 2,
            bidirectional: true,
            bias: bias != Bias::None,
            single_bias: bias == Bias::Single,
            proj_size,
            ..Default::default()
        },
        seq: 3,
        batch: 2,
    };
    let (w, x, s) = case.random_inputs(&mut rng);
    let s = if with_state {
        s
    } else {
        s.zeros_like().unwrap()
    };
    let (y, _) = case.rnn(&w).forward(&x, None).unwrap();
    let gy = uniform(&mut rng, y.dims(), 1.0);
    let gs = uniform(&mut rng, s.dims(), 1.0);
    let (args, weights) = ((&w, &x, &s), (&gy, &gs));
    let (_, _, grads) = op_grads(&case, None, args, weights).unwrap();
    check_every_coordinate("", (&case, None), args, weights, &grads);
}

#[test]
fn lstm_gradients() {
    gradcheck(RnnMode::Lstm, Bias::Double, true);
}

#[test]
fn lstm_gradients_without_bias_or_state() {
    gradcheck(RnnMode::Lstm, Bias::None, false);
}

#[test]
fn gru_gradients() {
    gradcheck(RnnMode::Gru, Bias::Double, true);
}

#[test]
fn gru_gradients_without_bias_or_state() {
    gradcheck(RnnMode::Gru, Bias::None, false);
}

#[test]
fn single_bias_gradients() {
    gradcheck(RnnMode::Lstm, Bias::Single, true);
    gradcheck(RnnMode::Gru, Bias::Single, true);
}

#[test]
fn plain_rnn_gradients() {
    gradcheck(RnnMode::RnnTanh, Bias::Double, true);
    gradcheck(RnnMode::RnnRelu, Bias::Double, true);
    gradcheck(RnnMode::RnnTanh, Bias::None, false);
}

#[test]
fn projected_lstm_gradients() {
    gradcheck_projected(RnnMode::Lstm, Bias::Double, true, 2);
    gradcheck_projected(RnnMode::Lstm, Bias::None, false, 1);
}
