//! `Rnn::with_weight_grad_sink`: the weight's gradient is added into a caller's tensor instead
//! of being returned to autograd, or written over what it holds (`SinkMode::Overwrite`); on the
//! CPU path here, `gpu_check` checks cuDNN's and the persistent kernel's.

use candle_core::{DType, Device, Tensor, Var};
use candle_cudnn_rnn::{gru, lstm, Rnn, RnnConfig, SinkMode};
use candle_nn::{VarBuilder, VarMap};

fn layer(gru_cell: bool) -> (Rnn, Var) {
    let vm = VarMap::new();
    let cfg = RnnConfig {
        num_layers: 2,
        ..Default::default()
    };
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let rnn = match gru_cell {
        true => gru(4, 6, cfg, vb),
        false => lstm(4, 6, cfg, vb),
    }
    .unwrap();
    let w = vm.data().lock().unwrap().values().next().unwrap().clone();
    (rnn, w)
}

/// `Σ y·c` through `rnn`; its gradients.
fn backward(rnn: &Rnn, x: &Tensor, c: &Tensor) -> candle_core::backprop::GradStore {
    let (y, _) = rnn.forward_t(x, None, true).unwrap();
    (y * c).unwrap().sum_all().unwrap().backward().unwrap()
}

#[test]
fn the_sink_receives_what_autograd_would_and_sums_over_calls() {
    for gru_cell in [false, true] {
        let (rnn, w) = layer(gru_cell);
        let x =
            Var::from_tensor(&Tensor::randn(0f32, 1., (5, 3, 4), &Device::Cpu).unwrap()).unwrap();
        let c = Tensor::randn(0f32, 1., (5, 3, 6), &Device::Cpu).unwrap();
        let plain = backward(&rnn, x.as_tensor(), &c);
        let want = plain.get(w.as_tensor()).unwrap().to_vec1::<f32>().unwrap();
        let want_dx = plain.get(x.as_tensor()).unwrap().flatten_all().unwrap();

        let sink = Tensor::zeros(w.shape(), DType::F32, &Device::Cpu).unwrap();
        let sunk = rnn.with_weight_grad_sink(sink.clone()).unwrap();
        let grads = backward(&sunk, x.as_tensor(), &c);
        assert!(grads.get(w.as_tensor()).is_none(), "autograd still got dw");
        assert_eq!(sink.to_vec1::<f32>().unwrap(), want);
        // The other gradients are unchanged.
        let dx = grads.get(x.as_tensor()).unwrap().flatten_all().unwrap();
        assert_eq!(
            dx.to_vec1::<f32>().unwrap(),
            want_dx.to_vec1::<f32>().unwrap()
        );

        backward(&sunk, x.as_tensor(), &c);
        let twice: Vec<f32> = want.iter().map(|g| g + g).collect();
        assert_eq!(sink.to_vec1::<f32>().unwrap(), twice);
    }
}

#[test]
fn an_overwritten_sink_holds_one_calls_gradient_whatever_it_held() {
    for gru_cell in [false, true] {
        let (rnn, w) = layer(gru_cell);
        let x = Tensor::randn(0f32, 1., (5, 3, 4), &Device::Cpu).unwrap();
        let c = Tensor::randn(0f32, 1., (5, 3, 6), &Device::Cpu).unwrap();
        let want = backward(&rnn, &x, &c)
            .get(w.as_tensor())
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let sink = Tensor::randn(0f32, 1., w.shape(), &Device::Cpu).unwrap();
        let sunk = rnn
            .with_weight_grad_sink_mode(sink.clone(), SinkMode::Overwrite)
            .unwrap();
        for call in 0..2 {
            let grads = backward(&sunk, &x, &c);
            assert!(grads.get(w.as_tensor()).is_none(), "autograd still got dw");
            assert_eq!(sink.to_vec1::<f32>().unwrap(), want, "call {call}");
        }
    }
}

#[test]
fn a_sink_of_the_wrong_shape_or_dtype_is_refused() {
    let (rnn, w) = layer(false);
    let n = w.elem_count();
    for bad in [
        Tensor::zeros(n + 1, DType::F32, &Device::Cpu).unwrap(),
        Tensor::zeros(n, DType::F64, &Device::Cpu).unwrap(),
    ] {
        let e = rnn.with_weight_grad_sink(bad).unwrap_err().to_string();
        assert!(e.contains("weight-gradient sink"), "{e}");
    }
}
