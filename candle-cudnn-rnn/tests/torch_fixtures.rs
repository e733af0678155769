//! Interchangeability with PyTorch: the CPU op on `nn.LSTM`/`nn.GRU`/`nn.RNN` weights, inputs and
//! upstream gradients recorded in f64 by `scripts/torch_fixtures.py`, against PyTorch's
//! outputs and gradients.

mod common;

use candle_core::{Device, Tensor};
use candle_cudnn_rnn::{flat_from_named, RnnConfig, RnnMode, RnnState};
use common::*;
use serde_json::Value;

fn tensor(v: &Value) -> Option<Tensor> {
    let shape: Vec<usize> = v
        .get("shape")?
        .as_array()?
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let data: Vec<f64> = v["data"]
        .as_array()?
        .iter()
        .map(|d| d.as_f64().unwrap())
        .collect();
    Some(Tensor::from_vec(data, shape, &Device::Cpu).unwrap())
}

/// `h` and, if present, `c` packed like the op's state.
fn packed(h: &Tensor, c: Option<Tensor>) -> Tensor {
    RnnState::new(h, c.as_ref()).unwrap().packed().clone()
}

#[test]
fn cpu_op_reproduces_pytorch() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/torch_rnn.json"
    ))
    .unwrap();
    let fixtures: Value = serde_json::from_str(&text).unwrap();
    let cases = fixtures["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 13);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let num = |k: &str| c[k].as_u64().unwrap() as usize;
        let case = Case {
            mode: c["mode"].as_str().unwrap().parse::<RnnMode>().unwrap(),
            input: num("input_size"),
            hidden: num("hidden_size"),
            cfg: RnnConfig {
                num_layers: num("num_layers"),
                bias: c["bias"].as_bool().unwrap(),
                bidirectional: c["bidirectional"].as_bool().unwrap(),
                proj_size: c["proj_size"].as_u64().unwrap_or(0) as usize,
                ..Default::default()
            },
            seq: num("seq"),
            batch: num("batch"),
        };
        let named = |key: &str| {
            flat_from_named(&case.dims(), |n, _| Ok(tensor(&c[key][n]).unwrap())).unwrap()
        };
        let w = named("params");
        let x = tensor(&c["x"]).unwrap();
        let h_n = tensor(&c["h_n"]).unwrap();
        let state = match tensor(&c["h0"]) {
            Some(h0) => packed(&h0, tensor(&c["c0"])),
            None => packed(&h_n, tensor(&c["c_n"])).zeros_like().unwrap(),
        };
        let gy = tensor(&c["gy"]).unwrap();
        let gs = packed(&tensor(&c["gh"]).unwrap(), tensor(&c["gc"]));
        let lengths: Option<Vec<usize>> = c["lengths"]
            .as_array()
            .map(|l| l.iter().map(|v| v.as_u64().unwrap() as usize).collect());
        let (y, st, [dx, dw, ds]) =
            op_grads(&case, lengths.as_deref(), (&w, &x, &state), (&gy, &gs)).unwrap();

        let check = |what: &str, ours: &Tensor, theirs: &Tensor| {
            let e = rel_err(ours, theirs);
            assert!(e < 1e-12, "{name}: {what} relative error {e}");
        };
        check("y", &y, &tensor(&c["y"]).unwrap());
        check("h_n, c_n", &st, &packed(&h_n, tensor(&c["c_n"])));
        check("grad x", &dx, &tensor(&c["grad_x"]).unwrap());
        check("grad weights", &dw, &named("grad_params"));
        if let Some(gh0) = tensor(&c["grad_h0"]) {
            check("grad h0, c0", &ds, &packed(&gh0, tensor(&c["grad_c0"])));
        }
    }
}
