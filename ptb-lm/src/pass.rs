//! One pass over a split, training or evaluating, step after step (`crate::stepper`).

use crate::data::Batches;
use crate::model::{Masks, PtbModel};
use crate::progress::Progress;
use crate::step::Training;
use crate::stepper::Stepper;
use anyhow::Result;
use std::time::Instant;

pub struct PassResult {
    pub perplexity: f64,
    pub words: usize,
    pub seconds: f64,
}

impl PassResult {
    pub fn words_per_second(&self) -> f64 {
        self.words as f64 / self.seconds.max(1e-9)
    }
}

/// Runs the batches of `data` (at most `max_batches`), carrying the state from batch to
/// batch; trains when `training` is given. On a GPU with `graph`, the steps after the first are
/// replays of a CUDA graph (`Stepper`). Progress, when `label` names the pass, shows the running
/// perplexity and words/s.
#[allow(clippy::too_many_arguments)]
pub fn run_pass(
    model: &PtbModel,
    data: &[u32],
    (batch, steps): (usize, usize),
    mut training: Option<Training>,
    masks: &mut Masks,
    max_batches: Option<usize>,
    graph: bool,
    label: Option<&str>,
) -> Result<PassResult> {
    let batches = Batches::new(data, batch, steps)?;
    let n = batches.len().min(max_batches.unwrap_or(usize::MAX));
    let stream = batches.upload(&model.device())?;
    let mut progress = label.map_or_else(Progress::hidden, |l| Progress::new(l, n));
    let mut stepper = Stepper::new(model, batch, steps, graph)?;
    let start = Instant::now();
    for i in 0..n {
        stepper.run(batches.window(&stream, i)?, masks, training.as_mut())?;
        // Reading the cost waits for the device: only when the progress is shown.
        if progress.due(i + 1) {
            let c = stepper.cost()?;
            let words = (i + 1) * batch * steps;
            let secs = start.elapsed().as_secs_f64();
            let perplexity = (c / ((i + 1) * steps) as f64).exp();
            progress.show(i + 1, perplexity, words as f64 / secs);
        }
    }
    progress.finish();
    let c = stepper.cost()?;
    Ok(PassResult {
        perplexity: (c / (n * steps) as f64).exp(),
        words: n * batch * steps,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Perplexity of `data` without training (no dropout, the state carried as in training).
pub fn evaluate(
    model: &PtbModel,
    data: &[u32],
    shape: (usize, usize),
    max_batches: Option<usize>,
    graph: bool,
    label: Option<&str>,
) -> Result<PassResult> {
    let masks = &mut Masks::new(0);
    run_pass(model, data, shape, None, masks, max_batches, graph, label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LmConfig, Preset};
    use crate::run::RunSpec;
    use crate::session::{build_model, inference_model};
    use candle_core::Device;

    /// With the state carried, one step per call and 6 steps per call see the same stream, so
    /// the perplexity agrees (on CUDA when built with it: cuDNN at seq 1 and seq 6).
    #[test]
    fn state_carries_across_calls_in_evaluation() {
        let dev = Device::cuda_if_available(0).unwrap();
        let mut config = LmConfig::preset(Preset::Small);
        (config.hidden_size, config.init_scale) = (16, 0.5);
        let mut spec = RunSpec::new(Preset::Small, config, 13);
        spec.seed = 5;
        let (_, varmap) = build_model(&spec, &dev, None).unwrap();
        let model = inference_model(&spec, &varmap, &dev).unwrap();
        // 1 + 6k words: both windowings cover every target.
        let data: Vec<u32> = (0..61u32).map(|i| (i * 7 + i / 3) % 13).collect();
        let one = evaluate(&model, &data, (1, 1), None, false, None).unwrap();
        let six = evaluate(&model, &data, (1, 6), None, false, None).unwrap();
        assert_eq!((one.words, six.words), (60, 60));
        let rel = (one.perplexity / six.perplexity - 1.0).abs();
        assert!(rel < 1e-5, "{} vs {}", one.perplexity, six.perplexity);
        // And the state matters: restarting it every step changes the number.
        let mut fresh = 0.0;
        for i in 0..60 {
            let w = [data[i], data[i + 1]];
            fresh += evaluate(&model, &w, (1, 1), None, false, None)
                .unwrap()
                .perplexity
                .ln();
        }
        let fresh = (fresh / 60.0).exp();
        assert!(
            (fresh / one.perplexity - 1.0).abs() > 1e-4,
            "{fresh} vs {}",
            one.perplexity
        );
    }
}
