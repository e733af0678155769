//! The setup that train, bench and eval share ([`Setup`]): the device, candle's kernels in the
//! driver's cache, the run's matmul precision, and the model over fresh (seeded) or checkpoint
//! weights, with the optimizer when it trains.

use crate::gpu::device_arg::DeviceArg;
use crate::gpu::driver_cache::{self, Prefill};
use crate::model::{zero_init_ranges, PtbModel, RnnKind};
use crate::optim::Optimizer;
use crate::train::run::RunSpec;
use anyhow::{bail, ensure, Context, Result};
use candle_core::{DType, Device, Tensor};
use candle_cudnn_rnn::Launch;
use candle_nn::{VarBuilder, VarMap};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::collections::HashMap;

/// Where a command's model runs, in two stages: [`Setup::open`] picks the device and starts
/// filling the driver's compile cache for it (`crate::gpu::driver_cache`), so the command can
/// read its data meanwhile; [`Setup::training`] and [`Setup::inference`] then wait for the
/// cache, set the run's precision for candle's own matrix products (a process-wide switch, so
/// set here and nowhere else) and build the run's model, its fused LSTM told how its calls
/// will run ([`Setup::graphed`]).
pub struct Setup {
    pub device: Device,
    prefill: Prefill,
    /// How the model's steps will run: replayed from CUDA graphs, or eagerly (by default).
    pub launch: Launch,
}

/// A model to train, its variables, and the optimizer over them.
pub struct Trainee {
    pub model: PtbModel,
    pub varmap: VarMap,
    pub opt: Optimizer,
}

impl Setup {
    /// The device `d` names; the children filling the driver's cache start only when the cache
    /// is cold (`driver_cache::start`).
    pub fn open(d: DeviceArg) -> Result<Self> {
        let prefill = driver_cache::start(d);
        Ok(Self {
            device: open_device(d)?,
            prefill,
            launch: Launch::Eager,
        })
    }

    /// This setup for a command whose steps are replayed from CUDA graphs when `graph` (after
    /// an eager warm-up: `FixedStep`), so that the fused LSTM's default rules follow graphs'
    /// replays (`candle_cudnn_rnn::Launch`).
    pub fn graphed(self, graph: bool) -> Self {
        let launch = match graph {
            true => Launch::Graphed,
            false => Launch::Eager,
        };
        Self { launch, ..self }
    }

    /// A device already open, with no cache to fill (the GPU unit tests').
    #[cfg(all(test, feature = "cuda"))]
    pub fn on(device: Device) -> Self {
        Self {
            device,
            prefill: Prefill::default(),
            launch: Launch::Eager,
        }
    }

    /// The device, once the driver's cache is filled, set for `spec`'s precision: the model's
    /// weights may go to it.
    fn ready(self, spec: &RunSpec) -> Device {
        spec.precision.plan().apply_to_matmuls();
        self.prefill.wait();
        self.device
    }

    /// The model of `spec` over `weights` (a checkpoint's, or the seeded initialization's when
    /// `None`) for training: its gradients taken by the optimizer over its variables.
    pub fn training(
        self,
        spec: &RunSpec,
        weights: Option<&HashMap<String, Tensor>>,
    ) -> Result<Trainee> {
        let launch = self.launch;
        let device = self.ready(spec);
        let (model, varmap) = build_model(spec, (&device, launch), weights)?;
        let model = model.with_owned_gradients()?;
        let plan = spec.precision.plan();
        let opt = Optimizer::for_config(sorted_vars(&varmap), &spec.config, &plan)?;
        Ok(Trainee { model, varmap, opt })
    }

    /// The model of `spec` over `weights` for evaluation (`inference_model`).
    pub fn inference(self, spec: &RunSpec, weights: &HashMap<String, Tensor>) -> Result<PtbModel> {
        let launch = self.launch;
        let device = self.ready(spec);
        let (_, varmap) = build_model(spec, (&device, launch), Some(weights))?;
        inference_model(spec, &varmap, (&device, launch))
    }
}

fn open_device(d: DeviceArg) -> Result<Device> {
    match d {
        DeviceArg::Cpu => Ok(Device::Cpu),
        DeviceArg::Cuda(_) if !candle_core::utils::cuda_is_available() => {
            bail!("--device cuda: this binary was built without `--features cuda`")
        }
        DeviceArg::Cuda(n) => Ok(single_stream(
            Device::new_cuda_with_stream(n)
                .with_context(|| format!("--device cuda:{n}: no usable GPU"))?,
        )),
        DeviceArg::Auto if candle_core::utils::cuda_is_available() => Ok(single_stream(
            Device::new_cuda_with_stream(0).unwrap_or(Device::Cpu),
        )),
        DeviceArg::Auto => Ok(Device::Cpu),
    }
}

/// `cpu` or `cuda:N`, as `--device` takes it.
pub fn device_name(device: &Device) -> String {
    match device.location() {
        candle_core::DeviceLocation::Cuda { gpu_id } => format!("cuda:{gpu_id}"),
        candle_core::DeviceLocation::Metal { gpu_id } => format!("metal:{gpu_id}"),
        candle_core::DeviceLocation::Cpu => "cpu".into(),
    }
}

/// What computes the LSTM on `device`: cuDNN (and which) on a GPU, the op's CPU path, or
/// candle-nn's cell stepped in a loop.
pub fn kernel_path(kind: RnnKind, device: &Device) -> String {
    match (kind, device.is_cuda()) {
        (RnnKind::CandleNn, _) => "LSTM: candle-nn's cell, one step at a time".into(),
        (RnnKind::Fused | RnnKind::Persistent | RnnKind::Heuristic, false) => {
            "LSTM: the fused op's CPU path".into()
        }
        (RnnKind::Heuristic, true) => {
            "LSTM: the fused op, each call on the kernel its rules pick".into()
        }
        (RnnKind::Persistent, true) => {
            "LSTM: the fused op's persistent kernels (cuDNN for the calls they do not take)".into()
        }
        #[cfg(feature = "cuda")]
        (RnnKind::Fused, true) => {
            let v = candle_cudnn_rnn::cudnn_version();
            format!(
                "LSTM: the fused op on cuDNN {}.{}.{}",
                v / 10000,
                v / 100 % 100,
                v % 100
            )
        }
        #[cfg(not(feature = "cuda"))]
        (RnnKind::Fused, true) => "LSTM: the fused op on the GPU".into(),
    }
}

/// Everything ptb-lm runs on a GPU goes to candle's one stream (a stream of its own rather than
/// the per-thread default one, as CUDA graph capture wants), so cudarc's per-allocation
/// events (kept to order work across streams) are pure host overhead: two events created and
/// destroyed per tensor, hundreds of tensors per training step.
fn single_stream(device: Device) -> Device {
    #[cfg(feature = "cuda")]
    if let Device::Cuda(d) = &device {
        // SAFETY: every kernel, cuBLAS, cuDNN and cuRAND call of ptb-lm is issued on this
        // device's one stream, so no allocation needs ordering across streams.
        unsafe { d.disable_event_tracking() };
    }
    device
}

/// The model of `spec`, with `weights` from a checkpoint, or initialized uniformly in
/// ±init_scale from `spec.seed` (host-side, so the same seed gives the same model everywhere),
/// a single LSTM bias at zero; its fused LSTM's calls run as `launch` says.
pub fn build_model(
    spec: &RunSpec,
    (device, launch): (&Device, Launch),
    weights: Option<&HashMap<String, Tensor>>,
) -> Result<(PtbModel, VarMap)> {
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
    let plan = spec.precision.plan();
    let model = PtbModel::new(&spec.config, spec.vocab_size, (spec.rnn, launch), &plan, vb)?;
    let vars = varmap.data().lock().expect("varmap lock").clone();
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    let mut rng = StdRng::seed_from_u64(spec.seed);
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
                let s = spec.config.init_scale as f32;
                let mut data: Vec<f32> = (0..var.elem_count())
                    .map(|_| rng.random_range(-s..s))
                    .collect();
                for r in zero_init_ranges(&spec.config, name, data.len()) {
                    data[r].fill(0.0);
                }
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
/// inference mode, with the plan's evaluation precision.
pub fn inference_model(
    spec: &RunSpec,
    varmap: &VarMap,
    (device, launch): (&Device, Launch),
) -> Result<PtbModel> {
    let tensors: HashMap<String, Tensor> = named_weights(varmap)
        .into_iter()
        .map(|(n, t)| (n, t.detach()))
        .collect();
    let vb = VarBuilder::from_tensors(tensors, DType::F32, device);
    let plan = spec.precision.plan().for_evaluation();
    PtbModel::new(&spec.config, spec.vocab_size, (spec.rnn, launch), &plan, vb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LstmBias, Preset};
    use crate::model::RnnKind;
    use candle_cudnn_rnn::ParamKind;

    fn spec(bias: LstmBias, rnn: RnnKind) -> RunSpec {
        let mut config = crate::config::LmConfig::preset(Preset::Small);
        (config.hidden_size, config.lstm_bias) = (6, bias);
        let mut spec = RunSpec::new(Preset::Small, config, 11);
        (spec.rnn, spec.seed) = (rnn, 3);
        spec
    }

    fn weights(s: &RunSpec) -> HashMap<String, Vec<f32>> {
        let (_, varmap) = build_model(s, (&Device::Cpu, Launch::Eager), None).unwrap();
        named_weights(&varmap)
            .into_iter()
            .map(|(n, t)| (n, t.flatten_all().unwrap().to_vec1().unwrap()))
            .collect()
    }

    /// A single bias starts at zero, every other weight uniform; two biases are both uniform.
    #[test]
    fn single_lstm_bias_starts_at_zero() {
        let (h, g) = (6, 24);
        let w = weights(&spec(LstmBias::Single, RnnKind::Fused));
        let flat = &w["rnn.weight"];
        assert_eq!(flat.len(), 2 * g * (h + h + 1));
        let cfg = candle_cudnn_rnn::RnnConfig {
            num_layers: 2,
            single_bias: true,
            ..Default::default()
        };
        let dims = candle_cudnn_rnn::RnnDims::new(candle_cudnn_rnn::RnnMode::Lstm, h, h, &cfg);
        for p in dims.params() {
            let v = &flat[p.offset..p.offset + p.len()];
            match p.kind {
                ParamKind::BiasIh => assert!(v.iter().all(|&v| v == 0.0), "{}", p.name),
                _ => assert!(v.iter().all(|&v| v != 0.0), "{}", p.name),
            }
        }
        let w = weights(&spec(LstmBias::Double, RnnKind::Fused));
        assert_eq!(w["rnn.weight"].len(), 2 * g * (h + h + 2));
        assert!(w["rnn.weight"].iter().all(|&v| v != 0.0 && v.abs() < 0.1));

        let w = weights(&spec(LstmBias::Single, RnnKind::CandleNn));
        assert!(w["rnn.bias_ih_l1"].iter().all(|&v| v == 0.0));
        assert!(!w.keys().any(|k| k.contains("bias_hh")));
        assert!(w["rnn.weight_hh_l1"].iter().all(|&v| v != 0.0));
    }
}
