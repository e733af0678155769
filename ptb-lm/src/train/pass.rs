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
    /// The batches run, and the Σ of their losses.
    pub batches: usize,
    pub cost: f64,
}

impl PassResult {
    pub fn words_per_second(&self) -> f64 {
        self.words as f64 / self.seconds.max(1e-9)
    }
}

/// How a pass reads its split: `(batch, steps)` ids a step, at most `max_batches` of them,
/// the steps after the first replayed from a CUDA graph when `graph` (on a GPU), progress shown
/// under `label`.
#[derive(Clone, Copy, Debug)]
pub struct PassShape<'a> {
    pub batch: usize,
    pub steps: usize,
    pub max_batches: Option<usize>,
    pub graph: bool,
    pub label: Option<&'a str>,
}

impl<'a> PassShape<'a> {
    /// The whole split in steps of `(batch, steps)`, graphed where possible, no progress.
    pub fn new((batch, steps): (usize, usize)) -> Self {
        Self {
            batch,
            steps,
            max_batches: None,
            graph: true,
            label: None,
        }
    }
}

/// Where a pass stands between two steps: `batch` steps done, the state they left, the Σ of
/// their losses and the seconds they took. A pass can start from one (a resumed run's).
#[derive(Clone)]
pub struct PassPoint {
    pub batch: usize,
    pub state: LmState,
    pub cost: f64,
    pub seconds: f64,
}

/// How a pass ended: every batch run (its numbers, and the state it ends in), or paused
/// between two steps because it was asked to.
pub enum Outcome {
    Done(PassResult, LmState),
    Paused(PassPoint),
}

/// Asks a pass after each step whether to pause there.
pub type Pause<'a> = &'a dyn Fn() -> bool;

/// Never pauses.
pub fn never() -> bool {
    false
}

/// Runs the batches of `data` (at most `shape.max_batches`), carrying the state from batch to
/// batch, from the start or from `from`; trains when `training` is given. On a GPU with
/// `shape.graph`, the steps after the first are replays of a CUDA graph (`FixedStep`). Progress,
/// when `shape.label` names the pass, shows the running perplexity and words/s. Pauses after
/// any step at which `pause` says so.
pub fn run_pass(
    model: &PtbModel,
    data: &[u32],
    shape: PassShape,
    (mut training, masks): (Option<Training>, &mut Masks),
    from: Option<&PassPoint>,
    pause: Pause,
) -> Result<Outcome> {
    let PassShape {
        batch,
        steps,
        graph,
        label,
        ..
    } = shape;
    let batches = Batches::new(data, batch, steps)?;
    let n = batches.len().min(shape.max_batches.unwrap_or(usize::MAX));
    let stream = batches.upload(&model.device())?;
    let mut progress = label.map_or_else(Progress::hidden, |l| Progress::new(l, n));
    let mut fixed = FixedStep::new(model, batch, steps, graph)?;
    let (first, earlier) = match from {
        Some(p) => {
            fixed.start_at(&p.state, p.cost)?;
            (p.batch.min(n), p.seconds)
        }
        None => (0, 0.0),
    };
    let clock = Instant::now();
    let seconds = || earlier + clock.elapsed().as_secs_f64();
    for i in first..n {
        fixed.run(batches.window(&stream, i)?, masks, training.as_mut())?;
        // Reading the cost waits for the device: only when the progress is shown.
        if progress.due(i + 1) {
            let c = fixed.cost()?;
            let words = (i + 1) * batch * steps;
            let perplexity = (c / ((i + 1) * steps) as f64).exp();
            progress.show(i + 1, perplexity, words as f64 / seconds());
        }
        if i + 1 < n && pause() {
            progress.finish();
            return Ok(Outcome::Paused(PassPoint {
                batch: i + 1,
                state: fixed.state().clone(),
                cost: fixed.cost()?,
                seconds: seconds(),
            }));
        }
    }
    progress.finish();
    let cost = fixed.cost()?;
    let result = PassResult {
        perplexity: (cost / (n * steps) as f64).exp(),
        words: n * batch * steps,
        seconds: seconds(),
        batches: n,
        cost,
    };
    Ok(Outcome::Done(result, fixed.state().clone()))
}

/// [`run_pass`] without training, from `from` or a zero state: its numbers and the state it
/// ends in, or `None` when `pause` stopped it.
fn evaluate_from(
    model: &PtbModel,
    data: &[u32],
    shape: PassShape,
    from: Option<&PassPoint>,
    pause: Pause,
) -> Result<Option<(PassResult, LmState)>> {
    let masks = &mut Masks::new(0);
    Ok(
        match run_pass(model, data, shape, (None, masks), from, pause)? {
            Outcome::Done(r, state) => Some((r, state)),
            Outcome::Paused(_) => None,
        },
    )
}

/// Perplexity of `data` without training (no dropout, the state carried as in training), or
/// `None` when `pause` stopped it.
pub fn evaluate(
    model: &PtbModel,
    data: &[u32],
    shape: PassShape,
    pause: Pause,
) -> Result<Option<PassResult>> {
    Ok(evaluate_from(model, data, shape, None, pause)?.map(|(r, _)| r))
}

/// Perplexity of `data` read as one stream (batch 1) in windows of `shape.steps` words, the
/// last window shorter so that every word but the first is predicted: the tutorial's test pass
/// (one word per step) in about `steps` times fewer steps, the state carried the same way, and
/// so the same perplexity up to rounding. `None` when `pause` stopped it.
pub fn evaluate_stream(
    model: &PtbModel,
    data: &[u32],
    shape: PassShape,
    pause: Pause,
) -> Result<Option<PassResult>> {
    let targets = data.len().saturating_sub(1);
    let steps = shape.steps.clamp(1, targets.max(1));
    let windows = targets / steps;
    let shape = PassShape {
        batch: 1,
        steps,
        ..shape
    };
    let Some((whole, state)) = evaluate_from(model, data, shape, None, pause)? else {
        return Ok(None);
    };
    let rest = targets - windows * steps;
    // The shorter window is one batch more: not when `max_batches` stopped the pass already.
    if rest == 0 || shape.max_batches.is_some_and(|m| m <= windows) {
        return Ok(Some(whole));
    }
    // The last `rest` targets, from the state the windows ended in, in one eager step.
    let tail = &data[windows * steps..];
    let last_shape = PassShape {
        steps: rest,
        max_batches: None,
        graph: false,
        label: None,
        ..shape
    };
    let start = PassPoint {
        batch: 0,
        state,
        cost: 0.0,
        seconds: 0.0,
    };
    let Some((last, _)) = evaluate_from(model, tail, last_shape, Some(&start), &never)? else {
        unreachable!("`never` pauses");
    };
    let words = whole.words + last.words;
    let cost =
        whole.perplexity.ln() * whole.words as f64 + last.perplexity.ln() * last.words as f64;
    Ok(Some(PassResult {
        perplexity: (cost / words as f64).exp(),
        words,
        seconds: whole.seconds + last.seconds,
        batches: whole.batches + last.batches,
        cost: whole.cost + last.cost,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LmConfig, Preset};
    use crate::train::run::RunSpec;
    use crate::train::setup::{build_model, inference_model};

    /// Every batch of `(batch, steps)`, eagerly.
    fn eager(shape: (usize, usize)) -> PassShape<'static> {
        PassShape {
            graph: false,
            ..PassShape::new(shape)
        }
    }

    /// [`evaluate`] of every batch of `shape`, eagerly.
    fn eval(model: &PtbModel, data: &[u32], shape: (usize, usize)) -> PassResult {
        evaluate(model, data, eager(shape), &never)
            .unwrap()
            .unwrap()
    }

    /// A small model of seed `seed` over 13 word types, for evaluation on the test GPU.
    fn small_model(seed: u64) -> PtbModel {
        let dev = crate::gpu::test_gpu::device();
        let mut config = LmConfig::preset(Preset::Small);
        (config.hidden_size, config.init_scale) = (16, 0.5);
        let mut spec = RunSpec::new(Preset::Small, config, 13);
        spec.seed = seed;
        let launch = candle_cudnn_rnn::Launch::Eager;
        let (_, varmap) = build_model(&spec, (&dev, launch), None).unwrap();
        inference_model(&spec, &varmap, (&dev, launch)).unwrap()
    }

    /// With the state carried, one step per call and 6 steps per call see the same stream, so
    /// the perplexity agrees (on CUDA when built with it: cuDNN at seq 1 and seq 6).
    #[test]
    fn state_carries_across_calls_in_evaluation() {
        let model = small_model(5);
        // 1 + 6k words: both windowings cover every target.
        let data: Vec<u32> = (0..61u32).map(|i| (i * 7 + i / 3) % 13).collect();
        let one = eval(&model, &data, (1, 1));
        let six = eval(&model, &data, (1, 6));
        assert_eq!((one.words, six.words), (60, 60));
        let rel = (one.perplexity / six.perplexity - 1.0).abs();
        assert!(rel < 1e-5, "{} vs {}", one.perplexity, six.perplexity);
        // And the state matters: restarting it every step changes the number.
        let mut fresh = 0.0;
        for i in 0..60 {
            let w = [data[i], data[i + 1]];
            fresh += eval(&model, &w, (1, 1)).perplexity.ln();
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
        let model = small_model(7);
        // 1 + 6 * 7 + 4 words: 7 windows of 6 targets and one of 4.
        let data: Vec<u32> = (0..47u32).map(|i| (i * 5 + i / 4) % 13).collect();
        let one = eval(&model, &data, (1, 1));
        for steps in [6, 46, 100] {
            let s = evaluate_stream(&model, &data, eager((1, steps)), &never)
                .unwrap()
                .unwrap();
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
        let cut = eval(&model, &data, (1, 6));
        assert_eq!(cut.words, 42);
        assert!((cut.perplexity / one.perplexity - 1.0).abs() > 1e-5);
    }
}
