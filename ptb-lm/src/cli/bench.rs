//! `ptb-lm bench`: real training steps (forward, loss, backward, clip, SGD) timed one by one
//! after a warm-up (median ms per batch, words per second, device memory), then the same number
//! back to back as training runs them (mean ms per batch, and the host's median time to queue
//! one: when it nears the mean, the step is bound by the host, not the device).

use crate::config::precision::Precision;
use crate::config::ranges;
use crate::config::{LmConfig, Preset};
use crate::data::{Corpus, SplitFiles};
use crate::gpu::device_arg::DeviceArg;
use crate::model::{Masks, RnnChoice};
use crate::train::fixed_step::FixedStep;
use crate::train::run::RunSpec;
use crate::train::setup::{device_name, kernel_path, Setup, Trainee};
use crate::train::step::{step_timed, Phase, Training};
use anyhow::{Context, Result};
use candle_core::Device;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The tutorial's configuration whose training step to time
    #[arg(long, value_enum, default_value = "small")]
    pub config: Preset,
    /// The LSTM's kernel: the fused op on cuDNN or with its own persistent kernels, candle-nn's
    /// cell stepped in a loop, or auto (on a GPU the op picks per call: its persistent kernels
    /// for bf16/f16, cuDNN otherwise)
    #[arg(long, value_enum, default_value = "auto")]
    pub rnn: RnnChoice,
    /// Arithmetic of the step
    #[arg(long, value_enum, default_value = "fp32")]
    pub precision: Precision,
    /// Timed steps, each way (synchronized, then back to back)
    #[arg(long, default_value_t = 100, value_parser = ranges::count)]
    pub batches: usize,
    /// Untimed steps first
    #[arg(long, default_value_t = 10, value_parser = ranges::count_or_zero)]
    pub warmup: usize,
    /// Folder of a corpus in PTB's format to read the batches from [default: random tokens]
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Names of the split files in --data, `{split}` standing for train, valid and test
    #[arg(long, default_value = SplitFiles::PTB, value_parser = SplitFiles::parse_pattern)]
    pub files: String,
    /// cpu, cuda, cuda:N, or auto (the first GPU if any)
    #[arg(long, default_value = "auto", value_parser = DeviceArg::parse)]
    pub device: DeviceArg,
    /// Also write the JSON result to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also time the phases of a step (forward+loss, backward, clipped SGD update) separately
    #[arg(long)]
    pub breakdown: bool,
    /// Run every step eagerly instead of replaying it from a CUDA graph
    #[arg(long)]
    pub no_cuda_graph: bool,
}

/// Median milliseconds of each phase of `reps` real training steps (`step::step_timed`, loss
/// scaling included), synchronizing at the end of every phase.
fn breakdown(
    model: &crate::model::PtbModel,
    (batches, stream): (&crate::data::Batches, &candle_core::Tensor),
    t: &mut Training,
    masks: &mut Masks,
    reps: usize,
) -> Result<serde_json::Value> {
    let dev = model.device();
    let mut times = vec![Vec::new(); 3];
    let mut state = model.zero_state(batches.batch_size())?;
    for i in 0..reps {
        dev.synchronize()?;
        let mut clock = Instant::now();
        let lap = |phase: Phase| -> Result<()> {
            dev.synchronize()?;
            times[phase as usize].push(clock.elapsed().as_secs_f64() * 1e3);
            clock = Instant::now();
            Ok(())
        };
        let window = batches.window(stream, i % batches.len())?;
        let (_, next) = step_timed(model, window, &state, masks, Some(t), lap)?;
        state = next.detach();
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Ok(serde_json::json!({
        "forward_and_loss": median(&mut times[Phase::ForwardAndLoss as usize]),
        "backward": median(&mut times[Phase::Backward as usize]),
        "clip_and_sgd": median(&mut times[Phase::Update as usize]),
    }))
}

/// Device memory in use (all of the process's allocations, as the driver reports them).
fn memory_in_use(device: &Device) -> Result<Option<usize>> {
    #[cfg(feature = "cuda")]
    if device.is_cuda() {
        let (free, total) = candle_core::cuda_backend::cudarc::driver::result::mem_get_info()?;
        return Ok(Some(total - free));
    }
    let _ = device;
    Ok(None)
}

/// A setting as its flag and the JSON name it: `small`, `bf16`.
fn json_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

pub fn bench(args: BenchArgs) -> Result<()> {
    let cfg = LmConfig::preset(args.config);
    let setup = Setup::open(args.device)?.graphed(!args.no_cuda_graph);
    let words_needed = (args.warmup + args.batches + 1) * cfg.batch_size * cfg.num_steps + 1;
    let files = args.data.as_ref().map(|dir| SplitFiles {
        dir: dir.clone(),
        pattern: args.files.clone(),
    });
    let (ids, vocab) = match &files {
        Some(files) => {
            let c = Corpus::load(files, cfg.vocab_size)?;
            let v = c.vocab_size();
            (c.train, v)
        }
        None => {
            let mut rng = StdRng::seed_from_u64(0);
            (
                (0..words_needed)
                    .map(|_| rng.random_range(0..cfg.vocab_size as u32))
                    .collect(),
                cfg.vocab_size,
            )
        }
    };
    let mut spec = RunSpec::new(args.config, cfg.clone(), vocab);
    spec.rnn = args.rnn.resolve(&setup.device, None);
    spec.precision = args.precision;
    let Trainee { model, mut opt, .. } = setup.training(&spec, None)?;
    let device = model.device();
    let mut masks = Masks::new(0);
    let batches = crate::data::Batches::new(&ids, cfg.batch_size, cfg.num_steps)?;
    let stream = batches.upload(&device)?;
    let graph = !args.no_cuda_graph;
    let mut fixed = FixedStep::new(&model, cfg.batch_size, cfg.num_steps, graph)?;
    let graphed = fixed.graphed();
    // Step `i` of the stream, state carried, nothing synchronized.
    let mut train_step = |i: usize| -> Result<()> {
        let mut training = Training { opt: &mut opt };
        let window = batches.window(&stream, i % batches.len())?;
        fixed.run(window, &mut masks, Some(&mut training))
    };
    let mut times = Vec::with_capacity(args.batches);
    let mut peak = memory_in_use(&device)?;
    for i in 0..args.warmup + args.batches {
        device.synchronize()?;
        let start = Instant::now();
        train_step(i)?;
        device.synchronize()?;
        if i >= args.warmup {
            times.push(start.elapsed().as_secs_f64());
        }
        peak = peak.max(memory_in_use(&device)?);
    }
    // The same steps back to back, synchronized only at the end, as training runs them: the
    // host queues a step while the device works on the one before.
    let mut host = Vec::with_capacity(args.batches);
    device.synchronize()?;
    let start = Instant::now();
    for i in 0..args.batches {
        let queued = Instant::now();
        train_step(args.warmup + i)?;
        host.push(queued.elapsed().as_secs_f64());
    }
    device.synchronize()?;
    let pipelined = start.elapsed().as_secs_f64() / args.batches.max(1) as f64;
    host.sort_by(f64::total_cmp);
    let host_median = host.get(host.len() / 2).copied().unwrap_or(f64::NAN);
    let phases = match args.breakdown {
        true => {
            let mut t = Training { opt: &mut opt };
            Some(breakdown(
                &model,
                (&batches, &stream),
                &mut t,
                &mut masks,
                args.batches.max(3),
            )?)
        }
        false => None,
    };
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    let words = (cfg.batch_size * cfg.num_steps) as f64;
    let result = serde_json::json!({
        "config": args.config,
        "rnn": spec.rnn,
        "lstm": kernel_path(spec.rnn, &device),
        "lstm_kernel": model.lstm_kernel(),
        "precision": args.precision,
        "device": device_name(&device),
        "data": files.map_or("random".into(), |f| f.path("train").display().to_string()),
        "batch_size": cfg.batch_size,
        "num_steps": cfg.num_steps,
        "warmup": args.warmup,
        "batches": args.batches,
        "ms_per_batch": median * 1e3,
        "ms_per_batch_min": times.first().map(|t| t * 1e3),
        "words_per_second": words / median,
        "pipelined_ms_per_batch": pipelined * 1e3,
        "pipelined_words_per_second": words / pipelined,
        "host_ms_per_batch": host_median * 1e3,
        "cuda_graph": graphed,
        "device_memory_bytes": peak,
        "breakdown_ms": phases,
    });
    let ran_on = match model.lstm_kernel() {
        Some(k) => format!(" (ran on {k})"),
        None => String::new(),
    };
    eprintln!(
        "{} config on {}, {}{ran_on}, {}{}: {:.2} ms/batch, {:.0} words/s; back to back {:.2} \
         ms/batch, {:.0} words/s, host {:.2} ms/batch",
        json_name(&args.config),
        device_name(&device),
        kernel_path(spec.rnn, &device),
        json_name(&args.precision),
        if graphed { " (CUDA graph)" } else { "" },
        median * 1e3,
        words / median,
        pipelined * 1e3,
        words / pipelined,
        host_median * 1e3
    );
    let text = serde_json::to_string(&result)?;
    if let Some(p) = &args.json {
        std::fs::write(p, &text).with_context(|| format!("writing --json {}", p.display()))?;
    }
    println!("{text}");
    Ok(())
}
