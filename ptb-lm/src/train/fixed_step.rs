//! A pass's steps on fixed buffers: the batch's ids are copied into the same two tensors every
//! step, the state carried from batch to batch is overwritten in place, and the loss is summed
//! into one device scalar. A step then reads and writes the same memory every time, so on a GPU
//! it can be captured once as a CUDA graph and replayed for every later batch, the host no
//! longer queueing hundreds of kernels per step. Eager and graphed steps run the same kernels
//! with the same arguments: they give the same numbers.
//!
//! What a replay cannot redo is host work, so everything that changes from step to step lives
//! on the device: the dropout masks' counter (`crate::model::dropout`), the learning rate, the
//! clipping statistics and f16's loss scale with its overflow check (`crate::optim`).

use crate::model::{LmState, Masks, PtbModel};
use crate::train::step::{step, Training};
use anyhow::Result;
use candle_core::{DType, Tensor};

/// How a pass runs its steps.
enum Replay {
    /// Every step eagerly (the CPU, or `--no-cuda-graph`).
    Eager,
    /// Eagerly until a first step has run (loading kernels, sizing cuDNN's workspace), then
    /// captured.
    Capture,
    #[cfg(feature = "cuda")]
    Graph(candle_core::cuda_backend::cudarc::driver::CudaGraph),
}

/// A pass's steps on fixed buffers, run eagerly or replayed from one captured CUDA graph.
pub struct FixedStep<'m> {
    model: &'m PtbModel,
    x: Tensor,
    y: Tensor,
    state: LmState,
    /// Σ of the steps' losses, `[1]` f64.
    cost: Tensor,
    replay: Replay,
    steps: usize,
}

impl<'m> FixedStep<'m> {
    /// Steps of `batch` × `steps` ids from a zero state; captured as a CUDA graph when `graph`
    /// and the model is on a GPU.
    pub fn new(model: &'m PtbModel, batch: usize, steps: usize, graph: bool) -> Result<Self> {
        let dev = model.device();
        let replay = match graph && dev.is_cuda() && cfg!(feature = "cuda") {
            true => Replay::Capture,
            false => Replay::Eager,
        };
        Ok(Self {
            model,
            x: Tensor::zeros((steps, batch), DType::U32, &dev)?,
            y: Tensor::zeros((steps, batch), DType::U32, &dev)?,
            state: model.zero_state(batch)?,
            cost: Tensor::zeros(1, DType::F64, &dev)?,
            replay,
            steps: 0,
        })
    }

    /// Starts from `state` instead of zeros, with `cost` the Σ of earlier steps' losses (before
    /// the first step).
    pub fn start_at(&self, state: &LmState, cost: f64) -> Result<()> {
        self.state.assign(state)?;
        let cost = Tensor::new(&[cost], self.cost.device())?;
        Ok(self.cost.slice_set(&cost, 0, 0)?)
    }

    /// The state after the steps so far.
    pub fn state(&self) -> &LmState {
        &self.state
    }

    /// Whether steps are replayed from a CUDA graph (after the first).
    pub fn graphed(&self) -> bool {
        !matches!(self.replay, Replay::Eager)
    }

    /// Whether a graph has been captured and is being replayed.
    #[cfg(all(test, feature = "cuda"))]
    fn replaying(&self) -> bool {
        matches!(self.replay, Replay::Graph(_))
    }

    /// One step on the batch `(x, y)` (`Batches::window`), training when `training` is given.
    /// Once captured, a step replays what the capture saw: pass the same `masks` and
    /// `training` every time.
    pub fn run(
        &mut self,
        (x, y): (Tensor, Tensor),
        masks: &mut Masks,
        training: Option<&mut Training>,
    ) -> Result<()> {
        self.x.slice_set(&x.contiguous()?, 0, 0)?;
        self.y.slice_set(&y.contiguous()?, 0, 0)?;
        match &self.replay {
            Replay::Eager => self.body(masks, training)?,
            // Never chosen without CUDA (`new`).
            #[cfg(not(feature = "cuda"))]
            Replay::Capture => self.body(masks, training)?,
            #[cfg(feature = "cuda")]
            Replay::Graph(g) => g.launch()?,
            #[cfg(feature = "cuda")]
            Replay::Capture => {
                // candle uploads the shapes and strides of strided kernels from the host at
                // every launch; a graph would replay those copies from freed host memory. With
                // this cache on, the first step uploads each once into memory kept for good,
                // and the capture finds them there.
                let candle_core::Device::Cuda(dev) = self.model.device() else {
                    anyhow::bail!("a CUDA graph needs a CUDA device")
                };
                let _cache = dev.enable_cuda_graph_htod_cache();
                match self.steps {
                    0 => self.body(masks, training)?,
                    _ => self.capture(masks, training)?,
                }
            }
        }
        self.steps += 1;
        Ok(())
    }

    /// Σ of the losses so far (waits for the device).
    pub fn cost(&self) -> Result<f64> {
        Ok(self.cost.to_vec1::<f64>()?[0])
    }

    /// What a step enqueues: the step, then the state and the cost written in place. Every
    /// tensor it makes is dropped before it returns, so a captured graph frees all it allocates.
    fn body(&self, masks: &mut Masks, training: Option<&mut Training>) -> Result<()> {
        let ids = (self.x.clone(), self.y.clone());
        let (loss, next) = step(self.model, ids, &self.state, masks, training)?;
        self.state.assign(&next)?;
        let sum = (&self.cost + loss.detach().to_dtype(DType::F64)?.reshape(1)?)?;
        self.cost.slice_set(&sum, 0, 0)?;
        Ok(())
    }

    /// Captures a step as a graph and launches it; if the capture fails, says why once and
    /// goes on eagerly.
    #[cfg(feature = "cuda")]
    fn capture(&mut self, masks: &mut Masks, mut training: Option<&mut Training>) -> Result<()> {
        use candle_core::cuda_backend::cudarc::driver::sys;
        let candle_core::Device::Cuda(dev) = self.model.device() else {
            anyhow::bail!("a CUDA graph needs a CUDA device")
        };
        let stream = dev.cuda_stream();
        stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)?;
        let body = self.body(masks, training.as_deref_mut());
        if body.is_err() {
            // A failed capture leaves errors in the context (drops record theirs there), and
            // cudarc checks them before it would end the capture: clear them first.
            let _ = stream.context().check_err();
        }
        let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
        let _ = stream.context().check_err();
        let why = match (body, graph) {
            (Ok(()), Ok(Some(g))) => {
                g.launch()?;
                self.replay = Replay::Graph(g);
                return Ok(());
            }
            (Err(e), _) => format!("{e:#}"),
            (Ok(()), Err(e)) => e.to_string(),
            (Ok(()), Ok(None)) => "nothing was captured".to_string(),
        };
        eprintln!("ptb-lm: capturing the step as a CUDA graph failed ({why}); steps run eagerly");
        self.replay = Replay::Eager;
        masks.restart_step();
        self.body(masks, training)
    }
}

#[cfg(all(test, feature = "cuda"))]
mod tests {
    use super::*;
    use crate::config::precision::Precision;
    use crate::config::{LmConfig, Preset};
    use crate::train::run::RunSpec;
    use crate::train::setup::{build_model, named_weights, Trainee};
    use candle_core::Device;
    use std::collections::HashMap;

    /// A small medium-preset model's sizes, and the weights it starts from (its seed's when
    /// `None`).
    struct Setup<'a> {
        hidden: usize,
        keep_prob: Option<f64>,
        init: Option<&'a [(String, Tensor)]>,
    }

    const SMALL: Setup = Setup {
        hidden: 48,
        keep_prob: None,
        init: None,
    };

    fn spec(precision: Precision, setup: &Setup) -> (RunSpec, LmConfig) {
        let mut cfg = LmConfig::preset(Preset::Medium);
        (cfg.hidden_size, cfg.num_steps, cfg.batch_size) = (setup.hidden, 7, 5);
        if let Some(k) = setup.keep_prob {
            cfg.keep_prob = k;
        }
        let mut spec = RunSpec::new(Preset::Medium, cfg.clone(), 97);
        (spec.precision, spec.seed) = (precision, 11);
        (spec, cfg)
    }

    /// The weights and the summed loss after `n` training steps (the learning rate changed
    /// halfway), and whether the steps were replays of a graph.
    fn train(
        dev: &Device,
        precision: Precision,
        graph: bool,
        n: usize,
        setup: &Setup,
    ) -> (Vec<Vec<f32>>, f64, bool) {
        let (spec, cfg) = spec(precision, setup);
        let vocab = spec.vocab_size;
        let init: Option<HashMap<String, Tensor>> = setup.init.map(|w| w.iter().cloned().collect());
        let Trainee {
            model,
            varmap,
            mut opt,
        } = crate::train::setup::Setup::on(dev.clone())
            .training(&spec, init.as_ref())
            .unwrap();
        let mut masks = Masks::new(0);
        model.reseed(&mut masks, 5).unwrap();
        let data: Vec<u32> = (0..2000u32)
            .map(|i| (i * 31 + i / 7) % vocab as u32)
            .collect();
        let batches = crate::data::Batches::new(&data, cfg.batch_size, cfg.num_steps).unwrap();
        let stream = batches.upload(dev).unwrap();
        let mut fixed = FixedStep::new(&model, cfg.batch_size, cfg.num_steps, graph).unwrap();
        for i in 0..n {
            if i == n / 2 {
                opt.set_learning_rate(0.37).unwrap();
            }
            let mut t = Training { opt: &mut opt };
            let window = batches.window(&stream, i).unwrap();
            fixed.run(window, &mut masks, Some(&mut t)).unwrap();
        }
        let weights = named_weights(&varmap)
            .into_iter()
            .map(|(_, w)| w.flatten_all().unwrap().to_vec1::<f32>().unwrap())
            .collect();
        (weights, fixed.cost().unwrap(), fixed.replaying())
    }

    /// The GPU to this test alone, as ptb-lm runs it (one stream, no per-allocation events);
    /// `None` without one.
    fn graph_gpu() -> Option<(crate::gpu::test_gpu::Alone, Device)> {
        let alone = crate::gpu::test_gpu::alone();
        let dev = Device::new_cuda_with_stream(0).ok()?;
        if let Device::Cuda(d) = &dev {
            // SAFETY: the test's work all goes to this device's one stream.
            unsafe { d.disable_event_tracking() };
        }
        Some((alone, dev))
    }

    /// Replays of a captured step give what eager steps give, bit for bit: new dropout masks
    /// every step, the learning rate changed on the device, the state carried in place.
    #[test]
    fn graphed_steps_equal_eager_steps() {
        let Some((_alone, dev)) = graph_gpu() else {
            return;
        };
        for precision in [Precision::Fp32, Precision::Bf16, Precision::F16] {
            let (eager, eager_cost, replayed) = train(&dev, precision, false, 8, &SMALL);
            assert!(!replayed);
            let (graphed, graphed_cost, replayed) = train(&dev, precision, true, 8, &SMALL);
            assert!(replayed, "{precision:?}: the step was not captured");
            assert_eq!(graphed_cost, eager_cost, "{precision:?}");
            assert!(graphed == eager, "{precision:?}: the weights differ");
            // And the steps did something: other steps give other weights.
            let (fewer, _, _) = train(&dev, precision, true, 7, &SMALL);
            assert!(fewer != graphed);
        }
    }

    /// Graphed GPU steps move every weight as the CPU's f32 steps do from the same weights,
    /// without dropout (the GPU's masks are not the CPU's): the persistent LSTM (bf16), its
    /// GEMMs and the softmax product on operands widened past a hidden size of 50, the
    /// gradients the layers keep themselves (the softmax bias's among them), end to end. f16
    /// is left out: its loss scale skips overflowed first steps that f32 takes.
    #[test]
    fn gpu_steps_follow_cpu_steps() {
        let Some((_alone, dev)) = graph_gpu() else {
            return;
        };
        let setup = Setup {
            hidden: 50,
            keep_prob: Some(1.0),
            init: None,
        };
        let (spec, _) = spec(Precision::Fp32, &setup);
        let (_, varmap) =
            build_model(&spec, (&Device::Cpu, candle_cudnn_rnn::Launch::Eager), None).unwrap();
        let init = named_weights(&varmap);
        let setup = Setup {
            init: Some(&init),
            ..setup
        };
        let (want, _, _) = train(&Device::Cpu, Precision::Fp32, false, 4, &setup);
        for (precision, bound) in [(Precision::Fp32, 2e-3), (Precision::Bf16, 5e-2)] {
            let (got, _, replayed) = train(&dev, precision, true, 4, &setup);
            assert!(replayed, "{precision:?}: the step was not captured");
            for (((name, w0), a), b) in init.iter().zip(&want).zip(&got) {
                let w0 = w0.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                let norm = |v: Vec<f64>| v.iter().map(|x| x * x).sum::<f64>().sqrt();
                let moved = norm(a.iter().zip(&w0).map(|(a, w)| (a - w) as f64).collect());
                let off = norm(a.iter().zip(b).map(|(a, b)| (a - b) as f64).collect());
                assert!(moved > 0.0, "{name} did not move on the CPU");
                assert!(
                    off <= bound * moved,
                    "{precision:?} {name}: the GPU's update is off by {:.2e} of the CPU's",
                    off / moved
                );
            }
        }
    }
}
