//! Bad input gives an error that says what was expected and what came, never a panic.

use candle_core::{DType, Device, Tensor, Var};
use candle_cudnn_rnn::{gru, lstm, Rnn, RnnConfig, RnnMode, RnnState};
use candle_nn::{VarBuilder, VarMap};

fn err_of<T: std::fmt::Debug>(r: candle_core::Result<T>) -> String {
    r.expect_err("expected an error").to_string()
}

fn small_lstm(cfg: RnnConfig) -> Rnn {
    let vm = VarMap::new();
    lstm(
        3,
        4,
        cfg,
        VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
    )
    .unwrap()
}

fn x(shape: &[usize]) -> Tensor {
    Tensor::randn(0f32, 1., shape, &Device::Cpu).unwrap()
}

#[test]
fn wrong_rank() {
    let e = err_of(small_lstm(RnnConfig::default()).forward(&x(&[5, 3]), None));
    assert!(e.contains("rank 3") && e.contains("[5, 3]"), "{e}");
}

#[test]
fn wrong_feature_count() {
    let e = err_of(small_lstm(RnnConfig::default()).forward(&x(&[5, 2, 7]), None));
    assert!(
        e.contains("3 input features") && e.contains("[5, 2, 7]"),
        "{e}"
    );
}

#[test]
fn wrong_dtype() {
    let x64 = x(&[5, 2, 3]).to_dtype(DType::F64).unwrap();
    let e = err_of(small_lstm(RnnConfig::default()).forward(&x64, None));
    assert!(e.contains("F64") && e.contains("F32"), "{e}");
}

#[test]
fn integer_weights() {
    let w = Tensor::zeros(144, DType::U32, &Device::Cpu).unwrap();
    let e = err_of(Rnn::from_weight(
        RnnMode::Lstm,
        3,
        4,
        RnnConfig::default(),
        w,
    ));
    assert!(e.contains("float") && e.contains("U32"), "{e}");
}

#[test]
fn empty_sequence_or_batch() {
    let rnn = small_lstm(RnnConfig::default());
    for shape in [[0, 2, 3], [5, 0, 3]] {
        let e = err_of(rnn.forward(&x(&shape), None));
        assert!(e.contains("empty"), "{e}");
    }
}

#[test]
fn wrong_state_shape() {
    let rnn = small_lstm(RnnConfig {
        num_layers: 2,
        ..Default::default()
    });
    // A GRU-shaped state (h only) for an LSTM, and a state for the wrong batch.
    let h = x(&[2, 2, 4]);
    let e = err_of(rnn.forward(&x(&[5, 2, 3]), Some(&RnnState::new(&h, None).unwrap())));
    assert!(
        e.contains("[2, 2, 2, 4]") && e.contains("[1, 2, 2, 4]"),
        "{e}"
    );
    let st = rnn.zero_state(3).unwrap();
    let e = err_of(rnn.forward(&x(&[5, 2, 3]), Some(&st)));
    assert!(
        e.contains("[2, 2, 2, 4]") && e.contains("[2, 2, 3, 4]"),
        "{e}"
    );
}

#[test]
fn wrong_weight_size() {
    let w = Tensor::zeros(100, DType::F32, &Device::Cpu).unwrap();
    let e = err_of(Rnn::from_weight(
        RnnMode::Gru,
        3,
        4,
        RnnConfig::default(),
        w,
    ));
    assert!(e.contains("108 elements") && e.contains("[100]"), "{e}");
}

#[test]
fn zero_sizes() {
    let vm = VarMap::new();
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let e = err_of(gru(3, 0, RnnConfig::default(), vb.clone()));
    assert!(e.contains("hidden_size") && e.contains(", 0,"), "{e}");
    let e = err_of(lstm(
        3,
        4,
        RnnConfig {
            num_layers: 0,
            ..Default::default()
        },
        vb,
    ));
    assert!(e.contains("num_layers"), "{e}");
}

#[test]
fn dropout_out_of_range() {
    let vm = VarMap::new();
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    for p in [1.0, -0.1, f32::NAN] {
        let e = err_of(lstm(
            3,
            4,
            RnnConfig {
                dropout: p,
                ..Default::default()
            },
            vb.clone(),
        ));
        assert!(e.contains("dropout"), "{e}");
    }
}

#[test]
fn backward_twice_through_one_forward() {
    let w = Var::from_tensor(&small_lstm(RnnConfig::default()).weight().clone()).unwrap();
    let rnn = Rnn::from_weight(
        RnnMode::Lstm,
        3,
        4,
        RnnConfig::default(),
        w.as_tensor().clone(),
    )
    .unwrap();
    let (y, _) = rnn.forward_t(&x(&[2, 1, 3]), None, true).unwrap();
    let loss = y.sum_all().unwrap();
    loss.backward().unwrap();
    let e = err_of(loss.backward());
    assert!(e.contains("backward already ran"), "{e}");
}

#[test]
fn bad_projection() {
    let vm = VarMap::new();
    let vb = || VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
    let cfg = |proj_size| RnnConfig {
        proj_size,
        ..Default::default()
    };
    let e = err_of(lstm(3, 4, cfg(4), vb()));
    assert!(
        e.contains("proj_size must be smaller than hidden_size (4)"),
        "{e}"
    );
    let e = err_of(gru(3, 4, cfg(2), vb().pp("g")));
    assert!(e.contains("needs an LSTM") && e.contains("Gru"), "{e}");

    // A projected LSTM's state is flat [h | c]; a stacked one is refused by size.
    let rnn = lstm(3, 4, cfg(2), vb().pp("p")).unwrap();
    let st = rnn.zero_state(2).unwrap();
    assert_eq!(st.packed().dims(), &[2 * 2 + 2 * 4]);
    assert_eq!(st.h().unwrap().dims(), &[1, 2, 2]);
    let stacked = RnnState::new(&x(&[1, 2, 4]), Some(&x(&[1, 2, 4]))).unwrap();
    let e = err_of(rnn.forward(&x(&[5, 2, 3]), Some(&stacked)));
    assert!(e.contains("[12]") && e.contains("flattened"), "{e}");
    // h()/c() of a flat packed tensor of unknown sizes say what to do.
    let e = err_of(RnnState::from_packed(st.packed().clone()).h());
    assert!(e.contains("RnnState::new"), "{e}");
}
