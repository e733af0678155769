//! Device choice and model construction: fresh (seeded init) or from checkpoint weights.

use crate::checkpoint::TrainState;
use crate::model::PtbModel;
use anyhow::{bail, ensure, Context, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceArg {
    /// CUDA when built with `--features cuda` and a GPU is present, else the CPU.
    Auto,
    Cpu,
    Cuda,
}

pub fn pick_device(d: DeviceArg) -> Result<Device> {
    match d {
        DeviceArg::Cpu => Ok(Device::Cpu),
        DeviceArg::Cuda if !candle_core::utils::cuda_is_available() => {
            bail!("--device cuda: this binary was built without `--features cuda`")
        }
        DeviceArg::Cuda => Device::new_cuda(0).context("--device cuda: no usable GPU"),
        DeviceArg::Auto if candle_core::utils::cuda_is_available() => {
            Ok(Device::new_cuda(0).unwrap_or(Device::Cpu))
        }
        DeviceArg::Auto => Ok(Device::Cpu),
    }
}

/// Turns on TF32 for candle's own float32 matrix products when asked (cuDNN's is per module).
pub fn set_matmul_precision(state: &TrainState) {
    #[cfg(feature = "cuda")]
    candle_core::cuda::set_gemm_reduced_precision_f32(
        state.precision == crate::model::Precision::Tf32,
    );
    let _ = state;
}

/// The model of `state`, with `weights` from a checkpoint, or initialized uniformly in
/// ±init_scale from `state.seed` (host-side, so the same seed gives the same model everywhere).
pub fn build_model(
    state: &TrainState,
    device: &Device,
    weights: Option<&HashMap<String, Tensor>>,
) -> Result<(PtbModel, VarMap)> {
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
    let math = state.precision.math()?;
    let model = PtbModel::new(&state.config, state.vocab_size, state.rnn, math, vb)?;
    let vars = varmap.data().lock().expect("varmap lock").clone();
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    let mut rng = StdRng::seed_from_u64(state.seed);
    for name in names {
        let var = &vars[name];
        let value = match weights {
            Some(w) => {
                let t = w
                    .get(name)
                    .with_context(|| format!("checkpoint has no tensor {name}"))?;
                ensure!(
                    t.dims() == var.dims(),
                    "checkpoint tensor {name} has shape {:?}, the model needs {:?}",
                    t.dims(),
                    var.dims()
                );
                t.to_device(device)?
            }
            None => {
                let s = state.config.init_scale as f32;
                let data: Vec<f32> = (0..var.elem_count())
                    .map(|_| rng.random_range(-s..s))
                    .collect();
                Tensor::from_vec(data, var.shape(), device)?
            }
        };
        var.set(&value)?;
    }
    Ok((model, varmap))
}

/// The trainable variables in name order: the gradient norm sums them in this order, so it
/// must not follow a HashMap's per-process order if runs are to repeat exactly.
pub fn sorted_vars(varmap: &VarMap) -> Vec<candle_core::Var> {
    let data = varmap.data().lock().expect("varmap lock");
    let mut named: Vec<(&String, &candle_core::Var)> = data.iter().collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    named.into_iter().map(|(_, v)| v.clone()).collect()
}

/// The model's weights by name, for checkpoints.
pub fn named_weights(varmap: &VarMap) -> Vec<(String, Tensor)> {
    let mut w: Vec<(String, Tensor)> = varmap
        .data()
        .lock()
        .expect("varmap lock")
        .iter()
        .map(|(n, v)| (n.clone(), v.as_tensor().clone()))
        .collect();
    w.sort_by(|a, b| a.0.cmp(&b.0));
    w
}

/// The same model over detached weights: evaluation builds no graph and runs cuDNN in
/// inference mode.
pub fn inference_model(state: &TrainState, varmap: &VarMap, device: &Device) -> Result<PtbModel> {
    let tensors: HashMap<String, Tensor> = named_weights(varmap)
        .into_iter()
        .map(|(n, t)| (n, t.detach()))
        .collect();
    let vb = VarBuilder::from_tensors(tensors, DType::F32, device);
    PtbModel::new(
        &state.config,
        state.vocab_size,
        state.rnn,
        state.precision.math()?,
        vb,
    )
}
