//! `ptb-lm eval` and `ptb-lm generate` on a saved checkpoint.

use crate::checkpoint::{self, Checkpoint};
use crate::config::ranges;
use crate::data::{encode, read_words, SplitFiles, EOS, UNK};
use crate::gpu::device_arg::DeviceArg;
use crate::model::{Masks, PtbModel};
use crate::train::pass::{evaluate, evaluate_stream, never, PassShape};
use crate::train::setup::Setup;
use anyhow::{Context, Result};
use candle_core::{DType, Tensor};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Split {
    Valid,
    Test,
}

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// Run folder written by `ptb-lm train` (model.safetensors, tokenizer.json)
    #[arg(long)]
    pub checkpoint: PathBuf,
    #[command(flatten)]
    pub files: SplitFiles,
    /// Which split to score
    #[arg(long, value_enum, default_value = "test")]
    pub split: Split,
    /// cpu, cuda, cuda:N, or auto (the first GPU if any)
    #[arg(long, default_value = "auto", value_parser = DeviceArg::parse)]
    pub device: DeviceArg,
    /// Parallel streams [default: the training batch for valid, 1 for test]
    #[arg(long, value_parser = ranges::batch_size)]
    pub batch_size: Option<usize>,
    /// Steps per call [default: the training steps]
    #[arg(long, value_parser = ranges::num_steps)]
    pub num_steps: Option<usize>,
    /// Score only this many batches [default: the whole split]
    #[arg(long, value_parser = ranges::count)]
    pub max_batches: Option<usize>,
    /// Run every step eagerly instead of replaying it from a CUDA graph (on a GPU, steps after
    /// the first are replays of one captured step by default)
    #[arg(long)]
    pub no_cuda_graph: bool,
}

/// A checkpoint and its model for evaluation on `device`, with the run's matmul precision.
fn load_for_inference(
    dir: &Path,
    (device, graph): (DeviceArg, bool),
) -> Result<(Checkpoint, PtbModel)> {
    let setup = Setup::open(device)?.graphed(graph);
    let ckpt = checkpoint::load(dir, &candle_core::Device::Cpu)?;
    let model = setup.inference(&ckpt.spec, &ckpt.weights)?;
    Ok((ckpt, model))
}

/// Perplexity of a split as training measures it: valid with the training batch and steps;
/// test as training's final pass reads it, one stream (batch 1) in windows of the training
/// steps, the last one shorter, the state carried (the tutorial's one word per step up to
/// rounding; `--num-steps 1` is exactly that), so the number is the one training printed.
/// Other batches and steps as asked; the whole split unless `--max-batches` says otherwise.
/// Says how many words it scored.
pub fn eval(args: EvalArgs) -> Result<()> {
    let how = (args.device, !args.no_cuda_graph);
    let (ckpt, model) = load_for_inference(&args.checkpoint, how)?;
    let spec = &ckpt.spec;
    let (name, batch, why) = match args.split {
        Split::Valid => (
            "valid",
            spec.config.batch_size,
            "training's batch and steps, as training validates",
        ),
        Split::Test => (
            "test",
            1,
            "one stream, as training's final test pass reads it",
        ),
    };
    let why = match (args.batch_size, args.num_steps) {
        (None, None) => why,
        _ => "as asked",
    };
    let (batch, steps) = (
        args.batch_size.unwrap_or(batch),
        args.num_steps.unwrap_or(spec.config.num_steps),
    );
    args.files.check(name)?;
    let path = args.files.path(name);
    let words = read_words(&path)?;
    let ids = encode(&ckpt.tokenizer, &words)?;
    let shape = PassShape {
        max_batches: args.max_batches,
        graph: !args.no_cuda_graph,
        label: Some(name),
        ..PassShape::new((batch, steps))
    };
    let (r, left) = match batch {
        // One stream: every word but the first is scored, the last window shorter.
        1 => (
            evaluate_stream(&model, &ids, shape, &never)?,
            "the last window shorter; the first word is context only",
        ),
        _ => (
            evaluate(&model, &ids, shape, &never)?,
            "the rest do not fill a last batch window; the first word is context only",
        ),
    };
    let r = r.context("an evaluation pass that never pauses paused")?;
    let label = if args.split == Split::Test {
        "Test"
    } else {
        "Valid"
    };
    println!("{label} Perplexity: {:.3}", r.perplexity);
    let left = match args.max_batches {
        Some(m) => format!("--max-batches {m}"),
        None => left.into(),
    };
    eprintln!(
        "scored {} of the {} words of {} in batches of {batch} x {steps} steps ({why}; {left})",
        r.words,
        ids.len(),
        path.display()
    );
    Ok(())
}

#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// Run folder written by `ptb-lm train`
    #[arg(long)]
    pub checkpoint: PathBuf,
    /// Words to sample
    #[arg(long, default_value_t = 50, value_parser = ranges::count)]
    pub words: usize,
    /// Softmax temperature: below 1 sharper, above 1 flatter; near 0, the likeliest word
    #[arg(long, default_value_t = 1.0, value_parser = ranges::positive)]
    pub temperature: f64,
    /// Words to start from, separated by spaces (words outside the vocabulary read as `<unk>`);
    /// without it, a sentence start (`<eos>`)
    #[arg(long)]
    pub prompt: Option<String>,
    /// Seed of the sampling
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// cpu, cuda, cuda:N, or auto (the first GPU if any)
    #[arg(long, default_value = "auto", value_parser = DeviceArg::parse)]
    pub device: DeviceArg,
}

/// Probabilities `softmax(logits / temperature)`, computed from the largest logit down so that
/// they stay finite for any positive temperature (a tiny one gives the likeliest word).
fn sampling_probabilities(logits: &[f64], temperature: f64) -> Vec<f64> {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = logits
        .iter()
        .map(|&l| ((l - max) / temperature).exp())
        .collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

/// Samples words from the model, one step at a time; `<eos>` prints as a line break.
pub fn generate(args: GenerateArgs) -> Result<()> {
    // One token a step, eagerly.
    let (ckpt, model) = load_for_inference(&args.checkpoint, (args.device, false))?;
    let device = model.device();
    let mut prompt: Vec<String> = args
        .prompt
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if prompt.is_empty() {
        prompt.push(EOS.to_owned());
    }
    let unknown: Vec<&str> = prompt
        .iter()
        .filter(|w| ckpt.tokenizer.token_to_id(w).is_none())
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        eprintln!(
            "ptb-lm: not in the vocabulary, read as {UNK}: {}",
            unknown.join(" ")
        );
    }
    let ids = encode(&ckpt.tokenizer, &prompt)?;
    let mut masks = Masks::new(0);
    let x = Tensor::from_vec(ids.clone(), (ids.len(), 1), &device)?;
    let (mut logits, mut st, _) = model.forward(&x, &model.zero_state(1)?, &mut masks, false)?;
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut text: Vec<String> = prompt.into_iter().filter(|w| w != EOS).collect();
    for _ in 0..args.words {
        let last = logits.get(logits.dim(0)? - 1)?;
        let probs = sampling_probabilities(
            &last.to_dtype(DType::F64)?.to_vec1::<f64>()?,
            args.temperature,
        );
        let mut u = rng.random::<f64>();
        let next = probs
            .iter()
            .position(|&p| {
                u -= p;
                u <= 0.0
            })
            .unwrap_or(probs.len() - 1);
        let word = ckpt.tokenizer.id_to_token(next as u32).unwrap_or_default();
        text.push(if word == EOS { "\n".into() } else { word });
        let x = Tensor::from_vec(vec![next as u32], (1, 1), &device)?;
        (logits, st, _) = model.forward(&x, &st, &mut masks, false)?;
    }
    println!(
        "{}",
        text.join(" ").replace(" \n ", "\n").replace(" \n", "\n")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_stay_finite_at_any_temperature() {
        let logits = [2.0, -1.0, 2.5, 40.0, -300.0];
        for t in [1e-300, 1e-3, 1.0, 1e300] {
            let p = sampling_probabilities(&logits, t);
            assert!(p.iter().all(|v| v.is_finite()), "{t}: {p:?}");
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{t}: {p:?}");
        }
        assert_eq!(sampling_probabilities(&logits, 1e-300)[3], 1.0);
        let flat = sampling_probabilities(&logits, 1e300);
        assert!(flat.iter().all(|&v| (v - 0.2).abs() < 1e-12), "{flat:?}");
    }
}
