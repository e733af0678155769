//! One pass over a split, training or evaluating, step after step (`crate::train::fixed_step`).

use crate::data::Batches;
use crate::model::{LmState, Masks, PtbModel};
use crate::train::fixed_step::FixedStep;
use crate::train::progress::Progress;
use crate::train::step::Training;
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
/// replays of a CUDA graph (`FixedStep`). Progress, when `label` names the pass, shows the running
/// perplexity and words/s.
#[allow(clippy::too_many_arguments)]
pub fn run_pass(
    model: &PtbModel,
    data: &[u32],
    shape: (usize, usize),
    training: Option<Training>,
    masks: &mut Masks,
    max_batches: Option<usize>,
    graph: bool,
    label: Option<&str>,
) -> Result<PassResult> {
    let pass = (shape, training, max_batches, graph, label);
    Ok(pass_from(model, data, pass, masks, None)?.0)
}

/// What a pass takes besides the model, the data and the masks: `(batch, steps)`, the training,
/// the most batches, whether to graph the steps, the progress label.
type PassArgs<'a> = (
    (usize, usize),
    Option<Training<'a>>,
    Option<usize>,
    bool,
    Option<&'a str>,
);

/// [`run_pass`] from `start` (zeros when `None`); also the state it ends in.
fn pass_from(
    model: &PtbModel,
    data: &[u32],
    ((batch, steps), mut training, max_batches, graph, label): PassArgs,
    masks: &mut Masks,
    start: Option<&LmState>,
) -> Result<(PassResult, LmState)> {
    let batches = Batches::new(data, batch, steps)?;
    let n = batches.len().min(max_batches.unwrap_or(usize::MAX));
    let stream = batches.upload(&model.device())?;
    let mut progress = label.map_or_else(Progress::hidden, |l| Progress::new(l, n));
    let mut fixed = FixedStep::new(model, batch, steps, graph)?;
    if let Some(state) = start {
        fixed.start_from(state)?;
    }
    let clock = Instant::now();
    for i in 0..n {
        fixed.run(batches.window(&stream, i)?, masks, training.as_mut())?;
        // Reading the cost waits for the device: only when the progress is shown.
        if progress.due(i + 1) {
            let c = fixed.cost()?;
            let words = (i + 1) * batch * steps;
            let secs = clock.elapsed().as_secs_f64();
            let perplexity = (c / ((i + 1) * steps) as f64).exp();
            progress.show(i + 1, perplexity, words as f64 / secs);
        }
    }
    progress.finish();
    let c = fixed.cost()?;
    let result = PassResult {
        perplexity: (c / (n * steps) as f64).exp(),
        words: n * batch * steps,
        seconds: clock.elapsed().as_secs_f64(),
    };
    Ok((result, fixed.state().clone()))
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

/// Perplexity of `data` read as one stream (batch 1) in windows of `steps` words, the last
/// window shorter so that every word but the first is predicted: the tutorial's test pass (one
/// word per step) in about `steps` times fewer steps, the state carried the same way, and so
/// the same perplexity up to rounding.
pub fn evaluate_stream(
    model: &PtbModel,
    data: &[u32],
    steps: usize,
    max_batches: Option<usize>,
    graph: bool,
    label: Option<&str>,
) -> Result<PassResult> {
    let masks = &mut Masks::new(0);
    let targets = data.len().saturating_sub(1);
    let steps = steps.clamp(1, targets.max(1));
    let windows = targets / steps;
    let (whole, state) = pass_from(
        model,
        data,
        ((1, steps), None, max_batches, graph, label),
        masks,
        None,
    )?;
    let rest = targets - windows * steps;
    // The shorter window is one batch more: not when `max_batches` stopped the pass already.
    if rest == 0 || max_batches.is_some_and(|m| m <= windows) {
        return Ok(whole);
    }
    // The last `rest` targets, from the state the windows ended in, in one eager step.
    let tail = &data[windows * steps..];
    let pass = ((1, rest), None, None, false, None);
    let (last, _) = pass_from(model, tail, pass, masks, Some(&state))?;
    let words = whole.words + last.words;
    let cost =
        whole.perplexity.ln() * whole.words as f64 + last.perplexity.ln() * last.words as f64;
    Ok(PassResult {
        perplexity: (cost / words as f64).exp(),
        words,
        seconds: whole.seconds + last.seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LmConfig, Preset};
    use crate::train::run::RunSpec;
    use crate::train::setup::{build_model, inference_model};

    /// With the state carried, one step per call and 6 steps per call see the same stream, so
    /// the perplexity agrees (on CUDA when built with it: cuDNN at seq 1 and seq 6).
    #[test]
    fn state_carries_across_calls_in_evaluation() {
        let dev = crate::gpu::test_gpu::device();
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

    /// Windows of 6 with a shorter last one predict every word as one step at a time does.
    #[test]
    fn a_stream_in_windows_equals_one_word_at_a_time() {
        let dev = crate::gpu::test_gpu::device();
        let mut config = LmConfig::preset(Preset::Small);
        (config.hidden_size, config.init_scale) = (16, 0.5);
        let mut spec = RunSpec::new(Preset::Small, config, 13);
        spec.seed = 7;
        let (_, varmap) = build_model(&spec, &dev, None).unwrap();
        let model = inference_model(&spec, &varmap, &dev).unwrap();
        // 1 + 6 * 7 + 4 words: 7 windows of 6 targets and one of 4.
        let data: Vec<u32> = (0..47u32).map(|i| (i * 5 + i / 4) % 13).collect();
        let one = evaluate(&model, &data, (1, 1), None, false, None).unwrap();
        for steps in [6, 46, 100] {
            let s = evaluate_stream(&model, &data, steps, None, false, None).unwrap();
            assert_eq!(s.words, 46, "steps {steps}");
            let rel = (s.perplexity / one.perplexity - 1.0).abs();
            assert!(
                rel < 1e-5,
                "steps {steps}: {} vs {}",
                s.perplexity,
                one.perplexity
            );
        }
        // Without the last window the number differs: it is counted.
        let cut = evaluate(&model, &data, (1, 6), None, false, None).unwrap();
        assert_eq!(cut.words, 42);
        assert!((cut.perplexity / one.perplexity - 1.0).abs() > 1e-5);
    }
}
