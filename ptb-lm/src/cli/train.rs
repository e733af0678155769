//! `ptb-lm train`: the tutorial's schedule, a checkpoint every epoch, `--resume` from it.

use crate::checkpoint;
use crate::checkpoint::host_copy::HostCopies;
use crate::checkpoint::run_dir::RunLock;
use crate::checkpoint::writer::CheckpointWriter;
use crate::config::precision::Precision;
use crate::config::ranges::{self, UsageError};
use crate::config::{LmConfig, Preset};
use crate::data::{vocab_of, Corpus, SplitFiles};
use crate::gpu::device_arg::DeviceArg;
use crate::model::{Masks, RnnChoice};
use crate::train::pass::{evaluate, evaluate_stream, run_pass};
use crate::train::run::{epoch_seed, EpochMetrics, RunProgress, RunSpec};
use crate::train::setup::{
    device_name, inference_model, kernel_path, named_weights, Setup, Trainee,
};
use crate::train::step::Training;
use anyhow::{bail, ensure, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Every field of the configuration, overridable from the command line; each default is the
/// preset's (small / medium / large).
#[derive(clap::Args, Debug, Default)]
pub struct Overrides {
    /// Initial weights are uniform in ±this [default small / medium / large: 0.1 / 0.05 / 0.04]
    #[arg(long, value_parser = ranges::positive)]
    pub init_scale: Option<f64>,
    /// Initial learning rate of SGD [default: 1.0]
    #[arg(long, value_parser = ranges::positive)]
    pub learning_rate: Option<f64>,
    /// Gradients are clipped to this global norm [default small / medium / large: 5 / 5 / 10]
    #[arg(long, value_parser = ranges::positive)]
    pub max_grad_norm: Option<f64>,
    /// LSTM layers [default: 2]
    #[arg(long, value_parser = ranges::num_layers)]
    pub num_layers: Option<usize>,
    /// Unrolled steps per batch (truncated backpropagation) [default small / medium / large: 20 / 35 / 35]
    #[arg(long, value_parser = ranges::num_steps)]
    pub num_steps: Option<usize>,
    /// Features of the embedding and of each LSTM layer [default small / medium / large: 200 / 650 / 1500]
    #[arg(long, value_parser = ranges::hidden_size)]
    pub hidden_size: Option<usize>,
    /// Epochs after the first at the initial learning rate; decay starts after them
    /// [default small / medium / large: 4 / 6 / 14]
    #[arg(long, value_parser = ranges::epochs_or_zero)]
    pub max_epoch: Option<usize>,
    /// Epochs of the whole run [default small / medium / large: 13 / 39 / 55]
    #[arg(long, value_parser = ranges::epochs)]
    pub max_max_epoch: Option<usize>,
    /// Probability of keeping a unit under dropout; 1 turns dropout off
    /// [default small / medium / large: 1.0 / 0.5 / 0.35]
    #[arg(long, value_parser = ranges::fraction)]
    pub keep_prob: Option<f64>,
    /// Learning-rate factor per epoch once decay starts [default small / medium / large: 0.5 / 0.8 / 1/1.15]
    #[arg(long, value_parser = ranges::fraction)]
    pub lr_decay: Option<f64>,
    /// Parallel streams per batch [default: 20]
    #[arg(long, value_parser = ranges::batch_size)]
    pub batch_size: Option<usize>,
    /// Most word types; the training split must not have more [default: 10000]
    #[arg(long, value_parser = ranges::vocab_size)]
    pub vocab_size: Option<usize>,
    /// The LSTM's biases [default: single]
    #[arg(long, value_enum)]
    pub lstm_bias: Option<crate::config::LstmBias>,
    /// How the embedding's gradient counts in the clipping norm [default: lookups]
    #[arg(long, value_enum)]
    pub embedding_norm: Option<crate::config::EmbeddingNorm>,
}

impl Overrides {
    pub fn apply(&self, c: &mut LmConfig) {
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { c.$f = v; } )* };
        }
        set!(
            init_scale,
            learning_rate,
            max_grad_norm,
            num_layers,
            num_steps,
            hidden_size,
            max_epoch,
            max_max_epoch,
            keep_prob,
            lr_decay,
            batch_size,
            vocab_size,
            lstm_bias,
            embedding_norm
        );
    }
}

#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    /// The tutorial's configuration to start from; flags below override its fields
    #[arg(long, value_enum, default_value = "small")]
    pub config: Preset,
    #[command(flatten)]
    pub files: SplitFiles,
    /// Where to train: auto (the first GPU when built with CUDA and one is present, else the
    /// CPU), cpu, cuda or cuda:N
    #[arg(long, default_value = "auto", value_parser = DeviceArg::parse)]
    pub device: DeviceArg,
    /// The LSTM's kernel: the fused op on cuDNN or on its own persistent kernels, candle-nn's
    /// cell stepped in a loop, or auto (persistent for bf16/f16 on a GPU, else cuDNN; a
    /// resumed run keeps its own)
    #[arg(long, value_enum, default_value = "auto")]
    pub rnn: RnnChoice,
    /// Arithmetic of a training step (weights and updates stay f32)
    #[arg(long, value_enum, default_value = "fp32")]
    pub precision: Precision,
    /// Stop once this many epochs are done in all, counting those of the run resumed, so the
    /// same command with --resume continues to the same end [default: --max-max-epoch]
    #[arg(long, value_parser = ranges::count)]
    pub epochs: Option<usize>,
    /// Cap on the batches of every pass (train, valid and test), for quick runs
    #[arg(long, value_parser = ranges::count)]
    pub max_batches: Option<usize>,
    /// Seed of the initial weights and of every dropout mask
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Checkpoint and metrics folder [default: runs/CONFIG]
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the run checkpointed in --out (same flags), exactly as if never stopped
    #[arg(long)]
    pub resume: bool,
    /// Run every step eagerly instead of replaying it from a CUDA graph (on a GPU, steps after
    /// the first are replays of one captured step by default)
    #[arg(long)]
    pub no_cuda_graph: bool,
    #[command(flatten)]
    pub overrides: Overrides,
}

fn metrics_line(out: &Path, value: &serde_json::Value) -> Result<()> {
    let path = out.join("metrics.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    writeln!(f, "{value}")?;
    Ok(())
}

/// The run `args` ask for: its specification and where it starts (from scratch, or from the
/// checkpoint in `out` after checking it is this run's).
fn start(
    args: &TrainArgs,
    cfg: LmConfig,
    (corpus, device): (&Corpus, &candle_core::Device),
    out: &Path,
) -> Result<(RunSpec, RunProgress, Option<checkpoint::Checkpoint>)> {
    let mut spec = RunSpec::new(args.config, cfg, corpus.vocab_size());
    spec.rnn = args.rnn.resolve(device, args.precision, None);
    (spec.precision, spec.seed) = (args.precision, args.seed);
    spec.max_batches = args.max_batches;
    let has_checkpoint = out.join("model.safetensors").exists();
    if !args.resume {
        ensure!(
            !has_checkpoint,
            "{} already holds a checkpoint: pass --resume to continue it, or another --out",
            out.display()
        );
        return Ok((spec, RunProgress::default(), None));
    }
    let ckpt = checkpoint::load(out, &candle_core::Device::Cpu)?;
    spec.rnn = args
        .rnn
        .resolve(device, args.precision, Some(ckpt.spec.rnn));
    spec.check_resumes(&ckpt.spec)
        .with_context(|| format!("the checkpoint in {} cannot continue here", out.display()))?;
    if vocab_of(&ckpt.tokenizer) != vocab_of(&corpus.tokenizer) {
        bail!(
            "the checkpoint's vocabulary differs from the one built from {}",
            args.files.dir.display()
        );
    }
    Ok((spec, ckpt.progress.clone(), Some(ckpt)))
}

pub fn train(args: TrainArgs) -> Result<()> {
    let mut cfg = LmConfig::preset(args.config);
    args.overrides.apply(&mut cfg);
    cfg.validate().map_err(UsageError)?;
    let setup = Setup::open(args.device)?;
    let corpus = Corpus::load(&args.files, cfg.vocab_size)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/{:?}", args.config).to_lowercase()));
    let _lock = RunLock::acquire(&out)?;
    let (spec, mut progress, ckpt) = start(&args, cfg.clone(), (&corpus, &setup.device), &out)?;
    // The checkpoint's history is the record: the metrics file restarts from it.
    let lines: String = progress
        .history
        .iter()
        .map(|m| Ok(serde_json::to_string(m)? + "\n"))
        .collect::<Result<_>>()?;
    checkpoint::write_atomic(&out.join("metrics.jsonl"), lines.as_bytes())?;
    let Trainee {
        model,
        varmap,
        mut opt,
    } = setup.training(&spec, ckpt.as_ref().map(|c| &c.weights))?;
    let device = model.device();
    drop(ckpt);
    let end = cfg.max_max_epoch.min(args.epochs.unwrap_or(usize::MAX));
    let epochs = match progress.epochs_done < end {
        true => format!(
            "epochs {} to {end} of {}",
            progress.epochs_done + 1,
            cfg.max_max_epoch
        ),
        false => format!(
            "{} of {} epochs already done, nothing to train",
            progress.epochs_done, cfg.max_max_epoch
        ),
    };
    eprintln!(
        "ptb-lm: {} config on {}, {}, {}; vocabulary {}, {} train words; {epochs}; out {}",
        format!("{:?}", args.config).to_lowercase(),
        device_name(&device),
        kernel_path(spec.rnn, &device),
        format!("{:?}", spec.precision).to_lowercase(),
        spec.vocab_size,
        corpus.train.len(),
        out.display()
    );
    if let Some(s) = progress.loss_scale {
        opt.set_loss_scale(s)?;
    }
    let mut masks = Masks::new(args.seed);
    let graph = !args.no_cuda_graph;
    let mut writer = CheckpointWriter::default();
    let mut copies = HostCopies::default();
    while progress.epochs_done < end {
        let epoch = progress.epochs_done;
        let lr = cfg.learning_rate_at(epoch);
        opt.set_learning_rate(lr)?;
        model.reseed(&mut masks, epoch_seed(args.seed, epoch))?;
        let training = Training { opt: &mut opt };
        let tr = run_pass(
            &model,
            &corpus.train,
            (cfg.batch_size, cfg.num_steps),
            Some(training),
            &mut masks,
            args.max_batches,
            graph,
            Some(&format!("epoch {}", epoch + 1)),
        )?;
        let clip = opt.take_stats()?;
        let loss_scale = opt.loss_scale()?;
        // Validation reads the training model as it stands, in its precision (the half
        // copies a half-precision run keeps): the per-epoch number costs no model to build and
        // runs on the training kernels. The test pass below, and `eval`, read f32 weights in
        // f32.
        let va = evaluate(
            &model,
            &corpus.valid,
            (cfg.batch_size, cfg.num_steps),
            args.max_batches,
            graph,
            Some(&format!("valid {}", epoch + 1)),
        )?;
        let m = EpochMetrics {
            epoch: epoch + 1,
            learning_rate: lr,
            train_perplexity: tr.perplexity,
            valid_perplexity: va.perplexity,
            words_per_second: tr.words_per_second(),
            seconds: tr.seconds + va.seconds,
            grad_norm_mean: clip.map(|c| c.mean_norm),
            clipped_fraction: clip.map(|c| c.clipped_fraction),
            skipped_steps: loss_scale.and(clip.map(|c| c.skipped)),
            loss_scale: loss_scale.map(|s| s.scale),
        };
        let scaling = match (m.loss_scale, m.skipped_steps) {
            (Some(s), Some(k)) => format!(" loss scale: {s} skipped: {k}"),
            _ => String::new(),
        };
        println!(
            "Epoch: {} Learning rate: {:.3} Train Perplexity: {:.3} Valid Perplexity: {:.3} wps: {:.0} \
             grad norm: {:.2} clipped: {:.0}%{scaling}",
            m.epoch,
            m.learning_rate,
            m.train_perplexity,
            m.valid_perplexity,
            m.words_per_second,
            m.grad_norm_mean.unwrap_or(f64::NAN),
            100.0 * m.clipped_fraction.unwrap_or(f64::NAN)
        );
        progress.history.push(m.clone());
        progress.epochs_done += 1;
        progress.loss_scale = loss_scale;
        let run = (&spec, &progress);
        // The last checkpoint has had an epoch to land; its copies' buffer is then free.
        writer.finish()?;
        let weights = named_weights(&varmap);
        let files = checkpoint::encode(&out, &weights, run, &corpus.tokenizer, &mut copies)?;
        writer.write(files)?;
        metrics_line(&out, &serde_json::to_value(&m)?)?;
    }
    writer.finish()?;
    if progress.epochs_done == cfg.max_max_epoch {
        let eval_model = inference_model(&spec, &varmap, &device)?;
        // The tutorial's test pass (batch 1, one word per step), read in windows of the
        // training steps: the same perplexity up to rounding, in `num_steps` times fewer steps.
        let te = evaluate_stream(
            &eval_model,
            &corpus.test,
            cfg.num_steps,
            args.max_batches,
            graph,
            Some("test"),
        )?;
        println!("Test Perplexity: {:.3}", te.perplexity);
        metrics_line(
            &out,
            &serde_json::json!({ "test_perplexity": te.perplexity, "epochs": progress.epochs_done }),
        )?;
    }
    Ok(())
}
