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
use crate::model::{Masks, PtbModel, RnnChoice};
use crate::optim::Optimizer;
use crate::train::interrupt::{self, Stopped};
use crate::train::pass::{evaluate, evaluate_stream, run_pass, Outcome, PassPoint, PassShape};
use crate::train::run::{epoch_seed, EpochMetrics, PartialEpoch, RunProgress, RunSpec};
use crate::train::setup::{
    device_name, inference_model, kernel_path, named_weights, Setup, Trainee,
};
use crate::train::step::Training;
use anyhow::{bail, ensure, Context, Result};
use candle_core::Tensor;
use candle_nn::VarMap;
use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokenizers::Tokenizer;

/// Every field of the configuration, overridable from the command line; each default is the
/// preset's (small / medium / large).
#[derive(clap::Args, Debug, Default, serde::Serialize)]
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
    /// Sets the fields of `c` that a flag names: each flag is the field of its name.
    pub fn apply(&self, c: &mut LmConfig) -> Result<()> {
        let mut config = serde_json::to_value(&*c)?;
        let (Some(fields), serde_json::Value::Object(flags)) =
            (config.as_object_mut(), serde_json::to_value(self)?)
        else {
            bail!("a configuration is not a JSON object");
        };
        for (name, value) in flags.into_iter().filter(|(_, v)| !v.is_null()) {
            ensure!(
                fields.contains_key(&name),
                "--{name} names no configuration field"
            );
            fields.insert(name, value);
        }
        *c = serde_json::from_value(config)?;
        Ok(())
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
    /// The LSTM's kernel: the fused op on cuDNN or with its own persistent kernels, candle-nn's
    /// cell stepped in a loop, or auto (on a GPU the op picks per call: its persistent kernels
    /// for bf16/f16, cuDNN otherwise; a resumed run keeps its own)
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
    /// Minutes between checkpoints inside an epoch (besides the one at each epoch's end and the
    /// one Ctrl-C or SIGTERM leaves); 0 for none
    #[arg(long, default_value_t = 5.0, value_parser = ranges::minutes)]
    pub save_every: f64,
    /// Stops as Ctrl-C would after this many training steps of this command (for tests)
    #[arg(long, hide = true)]
    pub stop_after: Option<usize>,
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
    spec.rnn = args.rnn.resolve(device, None);
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
    spec.rnn = args.rnn.resolve(device, Some(ckpt.spec.rnn));
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
    args.overrides.apply(&mut cfg)?;
    cfg.validate().map_err(UsageError)?;
    let setup = Setup::open(args.device)?.graphed(!args.no_cuda_graph);
    let launch = setup.launch;
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
    let resume = ckpt.map(|c| c.resume).unwrap_or_default();
    let end = cfg.max_max_epoch.min(args.epochs.unwrap_or(usize::MAX));
    let epochs = match (progress.epochs_done < end, &progress.partial) {
        (true, Some(p)) => format!(
            "epochs {} (from batch {}) to {end} of {}",
            progress.epochs_done + 1,
            p.batches + 1,
            cfg.max_max_epoch
        ),
        (true, None) => format!(
            "epochs {} to {end} of {}",
            progress.epochs_done + 1,
            cfg.max_max_epoch
        ),
        (false, _) => format!(
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
    let mut saves = Checkpoints {
        out: &out,
        spec: &spec,
        tokenizer: &corpus.tokenizer,
        varmap: &varmap,
        writer: CheckpointWriter::default(),
        copies: HostCopies::default(),
    };
    let base = PassShape {
        max_batches: args.max_batches,
        graph: !args.no_cuda_graph,
        ..PassShape::new((cfg.batch_size, cfg.num_steps))
    };
    interrupt::catch();
    let every = Duration::from_secs_f64(args.save_every * 60.0);
    let last_save = Cell::new(Instant::now());
    let steps = Cell::new(0);
    let due = || {
        steps.set(steps.get() + 1);
        if args.stop_after.is_some_and(|n| steps.get() >= n) {
            interrupt::ask();
        }
        interrupt::asked() || (!every.is_zero() && last_save.get().elapsed() >= every)
    };
    let mut tr_first = true;
    while progress.epochs_done < end {
        let epoch = progress.epochs_done;
        let lr = cfg.learning_rate_at(epoch);
        opt.set_learning_rate(lr)?;
        model.reseed(&mut masks, epoch_seed(args.seed, epoch))?;
        let mut from = match progress.partial.take() {
            Some(p) => {
                let training = (&model, &mut masks, &mut opt);
                Some(restore(&p, &resume, training, cfg.batch_size)?)
            }
            None => None,
        };
        // The training pass, paused for a checkpoint every `every` and on an interrupt.
        let label = format!("epoch {}", epoch + 1);
        let (tr, state) = loop {
            let training = Some(Training { opt: &mut opt });
            let ran = run_pass(
                &model,
                &corpus.train,
                PassShape {
                    label: Some(&label),
                    ..base
                },
                (training, &mut masks),
                from.as_ref(),
                &due,
            )?;
            let point = match ran {
                Outcome::Done(r, state) => break (r, state),
                Outcome::Paused(point) => point,
            };
            saves.inside(&progress, &point, (&model, &masks, &opt))?;
            last_save.set(Instant::now());
            if interrupt::asked() {
                return Err(saves.stopped(epoch, &point)?.into());
            }
            from = Some(point);
        };
        // Which kernel the op picked for the training calls, once (the start line could only
        // say who picks).
        if let (true, Some(k)) = (tr_first, model.lstm_kernel()) {
            eprintln!("ptb-lm: the LSTM's training calls run on {k}");
            tr_first = false;
        }
        // Validation reads the training model as it stands, in its precision (the half
        // copies a half-precision run keeps): the per-epoch number costs no model to build and
        // runs on the training kernels. The test pass below, and `eval`, read f32 weights in
        // f32. An interrupt during it leaves a checkpoint of the finished training pass, which
        // a resumed run validates again.
        let va = evaluate(
            &model,
            &corpus.valid,
            PassShape {
                label: Some(&format!("valid {}", epoch + 1)),
                ..base
            },
            &interrupt::asked,
        )?;
        let Some(va) = va else {
            let point = PassPoint {
                batch: tr.batches,
                state,
                cost: tr.cost,
                seconds: tr.seconds,
            };
            saves.inside(&progress, &point, (&model, &masks, &opt))?;
            return Err(saves.stopped(epoch, &point)?.into());
        };
        let clip = opt.take_stats()?;
        let loss_scale = opt.loss_scale()?;
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
        saves.save(&progress, Vec::new())?;
        last_save.set(Instant::now());
        metrics_line(&out, &serde_json::to_value(&m)?)?;
    }
    saves.writer.finish()?;
    if progress.epochs_done == cfg.max_max_epoch {
        let eval_model = inference_model(&spec, &varmap, (&device, launch))?;
        // The tutorial's test pass (batch 1, one word per step), read in windows of the
        // training steps: the same perplexity up to rounding, in `num_steps` times fewer steps.
        let test = PassShape {
            batch: 1,
            label: Some("test"),
            ..base
        };
        let Some(te) = evaluate_stream(&eval_model, &corpus.test, test, &interrupt::asked)? else {
            let why = format!(
                "stopped during the test pass; every epoch is saved in {}, and the same command \
                 with --resume runs the test pass",
                out.display()
            );
            return Err(Stopped(why).into());
        };
        println!("Test Perplexity: {:.3}", te.perplexity);
        metrics_line(
            &out,
            &serde_json::json!({ "test_perplexity": te.perplexity, "epochs": progress.epochs_done }),
        )?;
    }
    Ok(())
}

/// What writes a run's checkpoints: its folder, specification, vocabulary and weights, and the
/// thread that writes one while training goes on, with its host buffer.
struct Checkpoints<'a> {
    out: &'a Path,
    spec: &'a RunSpec,
    tokenizer: &'a Tokenizer,
    varmap: &'a VarMap,
    writer: CheckpointWriter,
    copies: HostCopies,
}

impl Checkpoints<'_> {
    /// Starts writing a checkpoint of `progress`, with `resume` beside the weights (see
    /// [`Self::inside`]), once the one before has landed.
    fn save(&mut self, progress: &RunProgress, resume: Vec<(String, Tensor)>) -> Result<()> {
        // The last checkpoint has had an epoch (or minutes) to land; its copies' buffer is then
        // free.
        self.writer.finish()?;
        let weights = named_weights(self.varmap);
        let run = (self.spec, progress);
        let files = checkpoint::encode(self.out, &weights, run, self.tokenizer, &mut self.copies)?;
        self.writer.write(files.with_resume(resume)?)
    }

    /// A checkpoint inside the epoch after `progress`'s, at `point` of its training pass: what
    /// the next step reads besides the weights (the carried state, where the dropout
    /// generators and the optimizer's running sums stand), so that `--resume` continues as if
    /// never stopped.
    fn inside(
        &mut self,
        progress: &RunProgress,
        point: &PassPoint,
        (model, masks, opt): (&PtbModel, &Masks, &Optimizer),
    ) -> Result<()> {
        let (position, bytes) = model.mask_position(masks)?;
        let mut inside = progress.clone();
        inside.partial = Some(PartialEpoch {
            batches: point.batch,
            cost: point.cost,
            seconds: point.seconds,
            masks: position,
            optimizer: opt.running()?,
        });
        let mut tensors: Vec<(String, Tensor)> = point
            .state
            .parts()
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("{STATE}{i}"), t))
            .collect();
        if !bytes.is_empty() {
            let n = bytes.len();
            let bytes = Tensor::from_vec(bytes, n, &candle_core::Device::Cpu)?;
            tensors.push((RNN_DROPOUT.into(), bytes));
        }
        self.save(&inside, tensors)
    }

    /// The end of a run stopped at `point` of epoch `epoch` (0-based): its checkpoint landed.
    fn stopped(&mut self, epoch: usize, point: &PassPoint) -> Result<Stopped> {
        self.writer.finish()?;
        Ok(Stopped(format!(
            "stopped in epoch {} after {} training steps; the checkpoint in {} holds it, and the \
             same command with --resume continues exactly",
            epoch + 1,
            point.batch,
            self.out.display()
        )))
    }
}

/// The carried state's tensors in a checkpoint taken inside an epoch: `state.0`, `state.1`, ...
const STATE: &str = "state.";
/// The fused LSTM's dropout state on the GPU, as bytes.
const RNN_DROPOUT: &str = "rnn_dropout";

/// Where a run stopped inside an epoch continues (after the epoch's `reseed`): its dropout
/// generators and optimizer as they stood, and the point of its training pass (of `batch`
/// streams).
fn restore(
    p: &PartialEpoch,
    resume: &HashMap<String, Tensor>,
    (model, masks, opt): (&PtbModel, &mut Masks, &mut Optimizer),
    batch: usize,
) -> Result<PassPoint> {
    let bytes = match resume.get(RNN_DROPOUT) {
        Some(t) => t.to_vec1::<u8>()?,
        None => Vec::new(),
    };
    model.restore_masks(masks, &p.masks, &bytes)?;
    opt.set_running(&p.optimizer)?;
    let parts: Vec<Tensor> = (0..)
        .map_while(|i| resume.get(&format!("{STATE}{i}")).cloned())
        .collect();
    let state = model.zero_state(batch)?;
    state.assign_parts(&parts)?;
    Ok(PassPoint {
        batch: p.batches,
        state,
        cost: p.cost,
        seconds: p.seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EmbeddingNorm, LstmBias};

    /// Each flag sets the field of its name, and only that.
    #[test]
    fn every_override_sets_its_field() {
        let mut c = LmConfig::preset(Preset::Small);
        Overrides::default().apply(&mut c).unwrap();
        assert_eq!(c, LmConfig::preset(Preset::Small));
        let o = Overrides {
            init_scale: Some(0.3),
            learning_rate: Some(0.7),
            max_grad_norm: Some(2.5),
            num_layers: Some(3),
            num_steps: Some(9),
            hidden_size: Some(33),
            max_epoch: Some(2),
            max_max_epoch: Some(5),
            keep_prob: Some(0.9),
            lr_decay: Some(0.25),
            batch_size: Some(7),
            vocab_size: Some(99),
            lstm_bias: Some(LstmBias::Double),
            embedding_norm: Some(EmbeddingNorm::Table),
        };
        o.apply(&mut c).unwrap();
        let want = LmConfig {
            init_scale: 0.3,
            learning_rate: 0.7,
            max_grad_norm: 2.5,
            num_layers: 3,
            num_steps: 9,
            hidden_size: 33,
            max_epoch: 2,
            max_max_epoch: 5,
            keep_prob: 0.9,
            lr_decay: 0.25,
            batch_size: 7,
            vocab_size: 99,
            lstm_bias: LstmBias::Double,
            embedding_norm: EmbeddingNorm::Table,
        };
        assert_eq!(c, want);
    }
}
