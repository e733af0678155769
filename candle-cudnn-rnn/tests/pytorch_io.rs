//! PyTorch names and shapes in and out through safetensors.

mod common;

use candle_core::{DType, Device, Tensor};
use candle_cudnn_rnn::{gru, load_pytorch, lstm, save_pytorch, RnnConfig, RnnState};
use candle_nn::{VarBuilder, VarMap};
use common::max_diff;

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("rnn-io-{}-{name}", std::process::id()))
}

#[test]
fn safetensors_round_trip_in_pytorch_names() {
    let dev = Device::Cpu;
    let cfg = RnnConfig {
        num_layers: 2,
        bidirectional: true,
        ..Default::default()
    };
    let vm = VarMap::new();
    let rnn = lstm(
        3,
        5,
        cfg,
        VarBuilder::from_varmap(&vm, DType::F32, &dev).pp("m"),
    )
    .unwrap();
    let path = tmp("lstm.safetensors");
    save_pytorch(&rnn, "lstm.", &path).unwrap();

    // The file holds exactly nn.LSTM's state_dict names and shapes.
    let saved = candle_core::safetensors::load(&path, &dev).unwrap();
    assert_eq!(saved.len(), 16);
    assert_eq!(saved["lstm.weight_ih_l0"].dims(), &[20, 3]);
    assert_eq!(saved["lstm.weight_hh_l0_reverse"].dims(), &[20, 5]);
    assert_eq!(saved["lstm.weight_ih_l1"].dims(), &[20, 10]);
    assert_eq!(saved["lstm.bias_hh_l1_reverse"].dims(), &[20]);

    // The submodule's name with or without PyTorch's dot names the same tensors.
    let bare = tmp("lstm-bare.safetensors");
    save_pytorch(&rnn, "lstm", &bare).unwrap();
    let names = |p: &std::path::Path| {
        let mut n: Vec<String> = candle_core::safetensors::load(p, &dev)
            .unwrap()
            .into_keys()
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&bare), names(&path));

    // Back into a flat buffer: bit-identical, the dot or not.
    assert_eq!(
        load_pytorch(rnn.dims(), "lstm", &path, &dev)
            .unwrap()
            .to_vec1::<f32>()
            .unwrap(),
        rnn.weight().to_vec1::<f32>().unwrap()
    );
    let flat = load_pytorch(rnn.dims(), "lstm.", &path, &dev).unwrap();
    let diff = (&flat - rnn.weight())
        .unwrap()
        .abs()
        .unwrap()
        .max(0)
        .unwrap();
    assert_eq!(diff.to_scalar::<f32>().unwrap(), 0.0);

    // And straight through a VarBuilder over the file: the same module, the same outputs.
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&path], DType::F32, &dev).unwrap() };
    let loaded = lstm(3, 5, cfg, vb.pp("lstm")).unwrap();
    let x = Tensor::randn(0f32, 1., (4, 2, 3), &dev).unwrap();
    let (a, _) = rnn.forward(&x, None).unwrap();
    let (b, _) = loaded.forward(&x, None).unwrap();
    assert_eq!(
        (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .sum_all()
            .unwrap()
            .to_scalar::<f32>()
            .unwrap(),
        0.0
    );
    std::fs::remove_file(path).ok();
}

#[test]
fn missing_or_misshapen_tensors_are_named() {
    let dev = Device::Cpu;
    let vm = VarMap::new();
    let rnn = gru(
        3,
        4,
        RnnConfig::default(),
        VarBuilder::from_varmap(&vm, DType::F32, &dev),
    )
    .unwrap();
    let path = tmp("gru.safetensors");
    save_pytorch(&rnn, "", &path).unwrap();
    let e = load_pytorch(rnn.dims(), "rnn.", &path, &dev)
        .unwrap_err()
        .to_string();
    assert!(e.contains("rnn.weight_ih_l0"), "{e}");
    // A file for another hidden size.
    let other = gru(
        3,
        6,
        RnnConfig::default(),
        VarBuilder::from_varmap(&vm, DType::F32, &dev).pp("o"),
    )
    .unwrap();
    let e = load_pytorch(other.dims(), "", &path, &dev)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("weight_ih_l0") && e.contains("[18, 3]") && e.contains("[12, 3]"),
        "{e}"
    );
    // A missing file and a truncated one: the error names the file.
    let gone = tmp("no-such.safetensors");
    let e = load_pytorch(rnn.dims(), "", &gone, &dev)
        .unwrap_err()
        .to_string();
    assert!(e.contains(gone.to_str().unwrap()), "{e}");
    let bytes = std::fs::read(&path).unwrap();
    let cut = tmp("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = load_pytorch(rnn.dims(), "", &cut, &dev)
        .unwrap_err()
        .to_string();
    assert!(e.contains(cut.to_str().unwrap()), "{e}");
    let e = save_pytorch(&rnn, "", tmp("no-such-dir").join("x.safetensors"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no-such-dir"), "{e}");
    std::fs::remove_file(cut).ok();
    std::fs::remove_file(path).ok();
}

#[test]
fn state_views_split_h_and_c() {
    let dev = Device::Cpu;
    let h = Tensor::randn(0f32, 1., (2, 3, 4), &dev).unwrap();
    let c = Tensor::randn(0f32, 1., (2, 3, 4), &dev).unwrap();
    let s = RnnState::new(&h, Some(&c)).unwrap();
    assert_eq!(s.packed().dims(), &[2, 2, 3, 4]);
    let back = (s.h().unwrap() - &h)
        .unwrap()
        .abs()
        .unwrap()
        .sum_all()
        .unwrap();
    assert_eq!(back.to_scalar::<f32>().unwrap(), 0.0);
    assert!(s.c().unwrap().is_some());
    assert!(RnnState::new(&h, None).unwrap().c().unwrap().is_none());
}

/// A single-bias module exports zero `bias_hh` (PyTorch loads it as is), and a double-bias
/// PyTorch file loads into a single-bias LSTM by folding `bias_hh` into `bias_ih`.
#[test]
fn single_bias_round_trips_through_pytorch_names() {
    let dev = Device::Cpu;
    let (double, single) = (
        RnnConfig::default(),
        RnnConfig {
            single_bias: true,
            ..Default::default()
        },
    );
    let vm = VarMap::new();
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &dev);
    let x = Tensor::randn(0f32, 1., (4, 2, 3), &dev).unwrap();

    let s = lstm(3, 5, single, vb.pp("s")).unwrap();
    let path = tmp("single.safetensors");
    save_pytorch(&s, "", &path).unwrap();
    let saved = candle_core::safetensors::load(&path, &dev).unwrap();
    assert_eq!(saved.len(), 4);
    assert_eq!(
        max_diff(
            &saved["bias_hh_l0"],
            &Tensor::zeros(20, DType::F32, &dev).unwrap()
        ),
        0.0
    );
    let d = lstm(
        3,
        5,
        double,
        VarBuilder::from_tensors(saved, DType::F32, &dev),
    )
    .unwrap();
    assert_eq!(
        max_diff(
            &s.forward(&x, None).unwrap().0,
            &d.forward(&x, None).unwrap().0
        ),
        0.0
    );

    let d = lstm(3, 5, double, vb.pp("d")).unwrap();
    save_pytorch(&d, "", &path).unwrap();
    let dims = *s.dims();
    let folded = load_pytorch(&dims, "", &path, &dev).unwrap();
    let s = candle_cudnn_rnn::Rnn::from_weight(s.dims().mode, 3, 5, single, folded).unwrap();
    let e = max_diff(
        &s.forward(&x, None).unwrap().0,
        &d.forward(&x, None).unwrap().0,
    );
    assert!(e < 1e-6, "{e}");
    // The same through a VarBuilder over the file.
    let file = unsafe { VarBuilder::from_mmaped_safetensors(&[&path], DType::F32, &dev).unwrap() };
    let s = lstm(3, 5, single, file).unwrap();
    let e = max_diff(
        &s.forward(&x, None).unwrap().0,
        &d.forward(&x, None).unwrap().0,
    );
    assert!(e < 1e-6, "{e}");

    // A GRU's recurrent n-gate bias cannot fold.
    let g = gru(3, 5, double, vb.pp("g")).unwrap();
    save_pytorch(&g, "", &path).unwrap();
    let gs = gru(3, 5, single, vb.pp("gs")).unwrap();
    let e = load_pytorch(gs.dims(), "", &path, &dev)
        .unwrap_err()
        .to_string();
    assert!(e.contains("bias_hh_l0") && e.contains("n-gate"), "{e}");
    std::fs::remove_file(path).ok();
}

/// A projected LSTM saves `weight_hr_l{k}` in PyTorch's shapes and loads back bit for bit.
#[test]
fn projection_round_trips_through_pytorch_names() {
    let dev = Device::Cpu;
    let cfg = RnnConfig {
        num_layers: 2,
        bidirectional: true,
        proj_size: 3,
        ..Default::default()
    };
    let vm = VarMap::new();
    let rnn = lstm(4, 6, cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    let path = tmp("proj.safetensors");
    save_pytorch(&rnn, "", &path).unwrap();
    let saved = candle_core::safetensors::load(&path, &dev).unwrap();
    assert_eq!(saved.len(), 20);
    assert_eq!(saved["weight_hr_l1_reverse"].dims(), &[3, 6]);
    assert_eq!(saved["weight_hh_l0"].dims(), &[24, 3]);
    assert_eq!(
        saved["weight_ih_l1"].dims(),
        &[24, 6],
        "layer 1 reads D*P features"
    );
    let flat = load_pytorch(rnn.dims(), "", &path, &dev).unwrap();
    assert_eq!(max_diff(&flat, rnn.weight()), 0.0);
    let vb = VarBuilder::from_tensors(saved, DType::F32, &dev);
    let loaded = lstm(4, 6, cfg, vb).unwrap();
    let x = Tensor::randn(0f32, 1., (5, 2, 4), &dev).unwrap();
    let (a, sa) = rnn.forward(&x, None).unwrap();
    let (b, sb) = loaded.forward(&x, None).unwrap();
    assert_eq!(a.dims(), &[5, 2, 6]);
    assert_eq!(max_diff(&a, &b), 0.0);
    assert_eq!(sa.h().unwrap().dims(), &[4, 2, 3]);
    assert_eq!(sa.c().unwrap().unwrap().dims(), &[4, 2, 6]);
    assert_eq!(max_diff(sa.packed(), sb.packed()), 0.0);
    std::fs::remove_file(path).ok();
}
