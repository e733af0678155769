//! Gradients of the CPU op against central finite differences in f64.

mod common;

use candle_core::Tensor;
use candle_cudnn_rnn::{Bias, RnnConfig, RnnMode, RnnState};
use common::*;

/// Loss `Σ y·gy + Σ state·gs` through the op, without gradient tracking.
fn loss(case: &Case, w: &Tensor, x: &Tensor, s: &Tensor, gy: &Tensor, gs: &Tensor) -> f64 {
    let (y, st) = case
        .rnn(w)
        .forward(x, Some(&RnnState::from_packed(s.clone())))
        .unwrap();
    let l = ((&y * gy).unwrap().sum_all().unwrap()
        + (st.packed() * gs).unwrap().sum_all().unwrap())
    .unwrap();
    l.to_scalar::<f64>().unwrap()
}

/// Every coordinate of `t`, nudged by ±eps, against the analytic gradient.
fn check_coordinates(name: &str, analytic: &Tensor, t: &Tensor, f: impl Fn(&Tensor) -> f64) {
    let eps = 1e-6;
    let base = t.flatten_all().unwrap().to_vec1::<f64>().unwrap();
    let g = analytic.flatten_all().unwrap().to_vec1::<f64>().unwrap();
    for i in 0..base.len() {
        let at = |d: f64| {
            let mut v = base.clone();
            v[i] += d;
            f(&Tensor::from_vec(v, t.dims(), t.device()).unwrap())
        };
        let fd = (at(eps) - at(-eps)) / (2.0 * eps);
        let tol = 1e-6 * (1.0 + g[i].abs());
        assert!(
            (fd - g[i]).abs() < tol,
            "{name}[{i}]: analytic {} finite difference {fd}",
            g[i]
        );
    }
}

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
    let (_, _, [dx, dw, ds]) = op_grads(&case, &w, &x, &s, &gy, &gs).unwrap();
    check_coordinates("weight", &dw, &w, |w| loss(&case, w, &x, &s, &gy, &gs));
    check_coordinates("x", &dx, &x, |x| loss(&case, &w, x, &s, &gy, &gs));
    check_coordinates("state", &ds, &s, |s| loss(&case, &w, &x, s, &gy, &gs));
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
