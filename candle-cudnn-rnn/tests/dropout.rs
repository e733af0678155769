//! Inter-layer dropout on the CPU path: `set_seed` is the one seed of the masks.

use candle_core::{DType, Device, Tensor};
use candle_cudnn_rnn::{lstm, Rnn, RnnConfig};
use candle_nn::{VarBuilder, VarMap};

fn two_layers(seed: u64) -> Rnn {
    let vm = VarMap::new();
    let cfg = RnnConfig {
        num_layers: 2,
        dropout: 0.5,
        seed,
        ..Default::default()
    };
    lstm(
        4,
        8,
        cfg,
        VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
    )
    .unwrap()
}

fn run(rnn: &Rnn, x: &Tensor) -> Vec<f32> {
    let (y, _) = rnn.forward_t(x, None, true).unwrap();
    y.flatten_all().unwrap().to_vec1().unwrap()
}

#[test]
fn seeds_choose_the_masks_and_replay_them() {
    let rnn = two_layers(0);
    let x = Tensor::randn(0f32, 1., (5, 3, 4), &Device::Cpu).unwrap();
    rnn.set_seed(1);
    let (first, second) = (run(&rnn, &x), run(&rnn, &x));
    assert_ne!(first, second, "each call draws fresh masks");
    rnn.set_seed(2);
    let other = run(&rnn, &x);
    assert_ne!(other, first, "another seed, other masks");
    rnn.set_seed(1);
    assert_eq!(run(&rnn, &x), first, "the same seed replays the masks");
    assert_eq!(run(&rnn, &x), second);

    // Copies over another weight share the seed: the module's next call continues the stream.
    let half = rnn.with_weight(rnn.weight().clone()).unwrap();
    rnn.set_seed(1);
    assert_eq!(run(&half, &x), first);
    assert_eq!(run(&rnn, &x), second);

    // Without dropout in evaluation, the seed changes nothing.
    let (eval, _) = rnn.forward_t(&x, None, false).unwrap();
    rnn.set_seed(9);
    let (again, _) = rnn.forward_t(&x, None, false).unwrap();
    let diff = (eval - again).unwrap().abs().unwrap().max_all().unwrap();
    assert_eq!(diff.to_scalar::<f32>().unwrap(), 0.0);
}

#[test]
fn the_config_seed_is_the_first_seed() {
    let x = Tensor::randn(0f32, 1., (5, 3, 4), &Device::Cpu).unwrap();
    let (a, b) = (two_layers(7), two_layers(7));
    // Different initial weights: compare the masks through a shared weight.
    let b = b.with_weight(a.weight().clone()).unwrap();
    assert_eq!(run(&a, &x), run(&b, &x));
    a.set_seed(7);
    b.set_seed(8);
    assert_ne!(run(&a, &x), run(&b, &x));
    a.set_seed(8);
    b.set_seed(8);
    assert_eq!(run(&a, &x), run(&b, &x));
}

/// A module's dropout state, taken between calls and restored into another module (as a run
/// resumed in another process does), continues the masks where the first left them.
#[test]
fn a_dropout_state_continues_in_another_module() {
    let x = Tensor::randn(0f32, 1., (5, 3, 4), &Device::Cpu).unwrap();
    let a = two_layers(0);
    a.set_seed(5);
    run(&a, &x);
    run(&a, &x);
    let state = a.dropout_state(&Device::Cpu).unwrap();
    assert_eq!((state.seed, state.calls), (5, 2));
    let third = run(&a, &x);

    // Another module over the same weights, with a seed and calls of its own.
    let weights = std::collections::HashMap::from([("weight".to_owned(), a.weight().clone())]);
    let vb = VarBuilder::from_tensors(weights, DType::F32, &Device::Cpu);
    let cfg = RnnConfig {
        num_layers: 2,
        dropout: 0.5,
        seed: 3,
        ..Default::default()
    };
    let b = lstm(4, 8, cfg, vb).unwrap();
    run(&b, &x);
    b.restore_dropout_state(&state, &Device::Cpu).unwrap();
    assert_eq!(run(&b, &x), third);
    // From the seed alone it would have drawn the first call's masks instead.
    b.set_seed(5);
    assert_ne!(run(&b, &x), third);
}
