//! The op as a candle user trains it: `y` and the final state as separate tensors (a loss may
//! read either or both), `loss.backward()` or `candle_cudnn_rnn::backward` into a candle-nn
//! optimizer. On the CPU here; `tests/gpu` checks the GPU paths.

mod common;

use candle_core::{DType, Device, Tensor, Var};
use candle_cudnn_rnn::{lstm, RnnConfig, RnnMode};
use candle_nn::{Optimizer, VarBuilder, VarMap};
use common::*;

fn case(mode: RnnMode) -> Case {
    Case {
        mode,
        input: 3,
        hidden: 4,
        cfg: RnnConfig {
            num_layers: 2,
            bidirectional: true,
            ..Default::default()
        },
        seq: 3,
        batch: 2,
    }
}

/// A loss of the final state alone (y unused, as a classifier reads h_n) has the gradients of
/// one that weighs y by zero, and those match finite differences.
#[test]
fn a_loss_of_the_final_state_alone() {
    for mode in [RnnMode::Lstm, RnnMode::Gru] {
        let case = case(mode);
        let mut rng = rng(&format!("state alone {mode:?}"));
        let (w, x, s) = case.random_inputs(&mut rng);
        let gs = uniform(&mut rng, s.dims(), 1.0);
        let (wv, xv, sv) = (
            Var::from_tensor(&w).unwrap(),
            Var::from_tensor(&x).unwrap(),
            Var::from_tensor(&s).unwrap(),
        );
        let rnn = case.rnn(wv.as_tensor());
        let state = candle_cudnn_rnn::RnnState::from_packed(sv.as_tensor().clone());
        let (_, st) = rnn.forward_t(xv.as_tensor(), Some(&state), true).unwrap();
        let grads = (st.packed() * &gs)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let g = |v: &Var| grads.get(v.as_tensor()).cloned().unwrap();
        let alone = [g(&xv), g(&wv), g(&sv)];

        let gy = Tensor::zeros(
            (case.seq, case.batch, 2 * case.hidden),
            DType::F64,
            &Device::Cpu,
        )
        .unwrap();
        let (args, weights) = ((&w, &x, &s), (&gy, &gs));
        let (_, _, with_y) = op_grads(&case, None, args, weights).unwrap();
        for (a, b) in alone.iter().zip(&with_y) {
            assert_eq!(
                a.flatten_all().unwrap().to_vec1::<f64>().unwrap(),
                b.flatten_all().unwrap().to_vec1::<f64>().unwrap(),
                "{mode:?}"
            );
        }
        check_every_coordinate(&format!("{mode:?}"), (&case, None), args, weights, &alone);
    }
}

/// `candle_cudnn_rnn::backward` gives what `loss.backward()` gives, here where every call runs
/// on the CPU (the GPU tests compare its GPU path), and a candle-nn optimizer steps with it.
#[test]
fn backward_gives_what_loss_backward_gives() {
    let dev = Device::Cpu;
    let vm = VarMap::new();
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &dev);
    let rnn = lstm(3, 5, RnnConfig::default(), vb).unwrap();
    let x = Tensor::randn(0f32, 1., (4, 2, 3), &dev).unwrap();
    let loss = || {
        let (y, state) = rnn.forward_t(&x, None, true).unwrap();
        (y.sqr().unwrap().sum_all().unwrap() + state.h().unwrap().sum_all().unwrap()).unwrap()
    };
    let plain = loss().backward().unwrap();
    let direct = candle_cudnn_rnn::backward(&loss()).unwrap();
    let w = rnn.weight();
    assert_eq!(
        plain.get(w).unwrap().to_vec1::<f32>().unwrap(),
        direct.get(w).unwrap().to_vec1::<f32>().unwrap()
    );
    let before = w.to_vec1::<f32>().unwrap();
    let mut sgd = candle_nn::SGD::new(vm.all_vars(), 0.1).unwrap();
    sgd.step(&direct).unwrap();
    let stepped = rnn.weight().to_vec1::<f32>().unwrap();
    assert_ne!(stepped, before);
    // `backward_step` from the same weights takes the same step.
    let var = vm.all_vars().remove(0);
    var.set(&Tensor::new(before.as_slice(), &dev).unwrap())
        .unwrap();
    candle_cudnn_rnn::backward_step(&mut sgd, &loss()).unwrap();
    assert_eq!(rnn.weight().to_vec1::<f32>().unwrap(), stepped);
}

/// A backward that fails (a second one over the same forward) leaves `backward` usable.
#[test]
fn backward_after_a_failed_backward() {
    let dev = Device::Cpu;
    let vm = VarMap::new();
    let rnn = lstm(
        3,
        5,
        RnnConfig::default(),
        VarBuilder::from_varmap(&vm, DType::F32, &dev),
    )
    .unwrap();
    let x = Tensor::randn(0f32, 1., (4, 2, 3), &dev).unwrap();
    let loss = || rnn.forward_t(&x, None, true).unwrap().0.sum_all().unwrap();
    let once = loss();
    candle_cudnn_rnn::backward(&once).unwrap();
    let again = candle_cudnn_rnn::backward(&once).unwrap_err().to_string();
    assert!(again.contains("no saved forward state"), "{again}");
    let grads = candle_cudnn_rnn::backward(&loss()).unwrap();
    assert!(grads.get(rnn.weight()).is_some());
}

/// A call without a backward hands out `y` and the final state as views of its packed output
/// (no copy of the state): they equal a tracked call's, and the state serves as the next
/// call's initial state as a copy of it would.
#[test]
fn an_untracked_call_gives_a_tracked_calls_outputs_and_state() {
    use candle_cudnn_rnn::RnnState;
    for mode in [RnnMode::Lstm, RnnMode::Gru] {
        let case = case(mode);
        let mut rng = rng(&format!("untracked views {mode:?}"));
        let (w, x, s) = case.random_inputs(&mut rng);
        let rnn = case.rnn(&w);
        let state = RnnState::from_packed(s.clone());
        let (y, st) = rnn.forward(&x, Some(&state)).unwrap();
        let xv = Var::from_tensor(&x).unwrap();
        let (yt, stt) = rnn.forward(xv.as_tensor(), Some(&state)).unwrap();
        assert_eq!(y.dims(), yt.dims());
        assert_eq!(st.packed().dims(), stt.packed().dims());
        assert_eq!(max_diff(&y, &yt), 0.0, "{mode:?} y");
        assert_eq!(max_diff(st.packed(), stt.packed()), 0.0, "{mode:?} state");
        let copied = RnnState::from_packed(st.packed().copy().unwrap());
        let (y2, st2) = rnn.forward(&x, Some(&st)).unwrap();
        let (y2c, st2c) = rnn.forward(&x, Some(&copied)).unwrap();
        assert_eq!(max_diff(&y2, &y2c), 0.0, "{mode:?} next y");
        assert_eq!(
            max_diff(st2.packed(), st2c.packed()),
            0.0,
            "{mode:?} next state"
        );
        assert!(
            max_diff(&y2, &y) > 0.0,
            "{mode:?}: the next call starts from another state"
        );
    }
}

/// A call given no initial state (whose state operand is then a placeholder that no path
/// reads) gives what a call given a zero state gives: outputs, final state and the input's and
/// weight's gradients, through `loss.backward()` and `candle_cudnn_rnn::backward`; the
/// placeholder adds nothing to the weight's gradient.
#[test]
fn a_call_given_no_state_is_a_call_given_zeros() {
    for mode in [RnnMode::Lstm, RnnMode::Gru] {
        let case = case(mode);
        let mut rng = rng(&format!("no state {mode:?}"));
        let (w, x, s) = case.random_inputs(&mut rng);
        let (gy, gs) = (
            uniform(&mut rng, &[case.seq, case.batch, 2 * case.hidden], 1.0),
            uniform(&mut rng, s.dims(), 1.0),
        );
        let (wv, xv) = (Var::from_tensor(&w).unwrap(), Var::from_tensor(&x).unwrap());
        let rnn = case.rnn(wv.as_tensor());
        let zeros = rnn.zero_state(case.batch).unwrap();
        let run = |state: Option<&candle_cudnn_rnn::RnnState>, direct: bool| {
            let (y, st) = rnn.forward_t(xv.as_tensor(), state, true).unwrap();
            let loss = ((&y * &gy).unwrap().sum_all().unwrap()
                + (st.packed() * &gs).unwrap().sum_all().unwrap())
            .unwrap();
            let grads = match direct {
                true => candle_cudnn_rnn::backward(&loss).unwrap(),
                false => loss.backward().unwrap(),
            };
            let g = |v: &Var| grads.get(v.as_tensor()).unwrap().flatten_all().unwrap();
            [
                y.flatten_all().unwrap(),
                st.packed().flatten_all().unwrap(),
                g(&xv),
                g(&wv),
            ]
        };
        for direct in [false, true] {
            let (none, given) = (run(None, direct), run(Some(&zeros), direct));
            for (what, (a, b)) in ["y", "state", "dx", "dw"]
                .iter()
                .zip(none.iter().zip(&given))
            {
                assert_eq!(
                    a.to_vec1::<f64>().unwrap(),
                    b.to_vec1::<f64>().unwrap(),
                    "{mode:?} {what} (direct {direct})"
                );
            }
        }
    }
}
