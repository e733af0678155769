//! The cudnn-rnn-benchmarks grid: microseconds per example of a training step (forward, MSE
//! loss on every step, backward to all parameters) and of an inference forward, for this op
//! and candle-nn's step loop (fp32). Warm-up, then the median (and min, max) of timed
//! repetitions, each ended by a device synchronization.
//! Candle's per-allocation CUDA events are off (one stream, as in `ptb-lm`). The loss's mean is
//! two reductions (rows, then their sums): candle's `sum_all` reduces in one thread block,
//! which on the large shapes cost more than PyTorch's whole loss
//! (`results/2026-11-23-h100-op-overhead/`), a cost of the harness and not of the op.
//!
//! The op's variants are named `op-PRECISION-KERNEL` (see [`variant`]): PRECISION one of fp32,
//! tf32, bf16, f16, KERNEL one of standard, static, static-small-h, dynamic (cuDNN's
//! algorithms), persistent (the crate's own kernels), auto (measured once per shape) and
//! default (`RnnConfig::default()`'s `Heuristic`, its static rules). Without `--variants`:
//! the default in every precision, which is what a user gets, and cuDNN's standard algorithm
//! in fp32 and bf16, the baseline of earlier runs. Each row names the kernel that served the
//! variant's last training and forward calls (`Rnn::last_algo`).
//!
//! `--api` chooses how the training step takes its gradients: `plain` (`loss.backward()`),
//! `direct` (`candle_cudnn_rnn::backward`, the weight's gradient stored straight into the
//! store), `sink` or `sink-overwrite` (a weight-gradient sink of the caller's; `--sink` and
//! `--sink-overwrite` say the same). `--sgd` adds candle-nn's SGD update of the weight to the
//! step, as a model trained with a candle-nn optimizer pays it.
//!
//! `--loss sum --input-grad --api sink-overwrite` times the op as a model trains it (ptb-lm's
//! LSTM): the outputs' gradient given (ones: no loss kernels), the input's gradient computed,
//! the weight's written over a sink of the caller's. `--graph` times a training call and a
//! forward each captured once as a CUDA graph and replayed 10 times between synchronizations
//! (per call: the device's time, without the host's launches or a synchronization per call, as
//! ptb-lm's graphed steps; the graph's nodes by type go to stderr), on modules configured for
//! it (`RnnConfig::launch`: `Launch::Graphed`, whose default rules follow graphs' replays).
//!
//! `--bidirectional` makes every layer bidirectional (outputs of 2 x H), as
//! `scripts/torch_reference.py --bidirectional` does PyTorch's; it needs `--no-loop` (candle-nn's
//! step loop runs one direction).
//!
//! `--dropout P` drops units between layers with probability P in the training calls (the
//! module's `RnnConfig::dropout`; inference drops nothing), as `scripts/torch_reference.py
//! --dropout` does PyTorch's; it needs `--no-loop` too.
//!
//! `cargo run --release -p candle-cudnn-rnn --features cuda --example bench_grid -- [--json FILE] [--reps N] [--warmup N] [--quick] [--no-loop] [--shape L,B,T,H] [--mode lstm|gru] [--variants op-fp32-default,op-bf16-standard,...] [--phase train|forward] [--api plain|direct|sink|sink-overwrite] [--sgd] [--loss mse|sum] [--input-grad] [--bidirectional] [--dropout P] [--graph] [--release-memory]`

use anyhow::Result;
use candle_core::{DType, Device, Tensor, Var};
use candle_cudnn_rnn::{MathMode, Rnn, RnnAlgo, RnnConfig, RnnMode, SinkMode};
use candle_nn::rnn::{GRUConfig, LSTMConfig, GRU, LSTM, RNN};
use candle_nn::Optimizer;
use serde_json::json;
use std::time::Instant;

#[derive(Clone, Copy, Debug)]
struct Shape {
    layers: usize,
    batch: usize,
    seq: usize,
    hidden: usize,
}

fn grid() -> Vec<Shape> {
    let mut v = Vec::new();
    for batch in [32, 128] {
        for hidden in [128, 512, 1024] {
            v.push(Shape {
                layers: 1,
                batch,
                seq: 30,
                hidden,
            });
        }
    }
    for seq in [30, 200] {
        for hidden in [512, 1024] {
            v.push(Shape {
                layers: 3,
                batch: 128,
                seq,
                hidden,
            });
        }
    }
    // PTB large's LSTM, to separate the op from the rest of a ptb-lm step.
    v.push(Shape {
        layers: 2,
        batch: 20,
        seq: 35,
        hidden: 1500,
    });
    v
}

/// Seconds per run of `f` over `reps` runs after `warmup` runs, synchronizing after each:
/// median, min and max.
#[derive(Clone, Copy)]
struct Timing {
    median: f64,
    min: f64,
    max: f64,
}

/// Timing of `f` over `reps` runs after `warmup` runs, synchronizing after each. Also returns
/// the median host time until `f` returned (before the synchronization): close to the total
/// when the host, not the device, sets the pace.
fn time(
    dev: &Device,
    warmup: usize,
    reps: usize,
    mut f: impl FnMut() -> Result<()>,
) -> Result<(Timing, f64)> {
    for _ in 0..warmup {
        f()?;
    }
    dev.synchronize()?;
    let (mut t, mut host) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        let start = Instant::now();
        f()?;
        host.push(start.elapsed().as_secs_f64());
        dev.synchronize()?;
        t.push(start.elapsed().as_secs_f64());
    }
    Ok(summary(t, host))
}

/// The timing of the runs' times `t`, and the median of their host times `host`.
fn summary(mut t: Vec<f64>, mut host: Vec<f64>) -> (Timing, f64) {
    t.sort_by(f64::total_cmp);
    host.sort_by(f64::total_cmp);
    let timing = Timing {
        median: t[t.len() / 2],
        min: t[0],
        max: t[t.len() - 1],
    };
    (timing, host[host.len() / 2])
}

/// Replays of a captured graph between synchronizations (`--graph`).
#[cfg(feature = "cuda")]
const REPLAYS: usize = 10;

/// Like [`time`], for `f` captured once as a CUDA graph (after `warmup` eager runs, the first
/// of which uploads candle's kernel parameters into memory the graph can keep), then timed
/// over `reps` rounds of [`REPLAYS`] replays, each round ended by a synchronization; the host
/// time is the launches' per call.
#[cfg(feature = "cuda")]
fn time_graph(
    dev: &Device,
    warmup: usize,
    reps: usize,
    mut f: impl FnMut() -> Result<()>,
) -> Result<(Timing, f64)> {
    use candle_core::cuda_backend::cudarc::driver::sys;
    let Device::Cuda(cuda) = dev else {
        anyhow::bail!("--graph needs a CUDA device")
    };
    let _cache = cuda.enable_cuda_graph_htod_cache();
    for _ in 0..warmup.max(1) {
        f()?;
    }
    dev.synchronize()?;
    let stream = cuda.cuda_stream();
    stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)?;
    let body = f();
    if body.is_err() {
        // Errors left in the context would stop cudarc from ending the capture.
        let _ = stream.context().check_err();
    }
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    body?;
    let Some(graph) = graph? else {
        anyhow::bail!("--graph: nothing was captured")
    };
    eprintln!("graph nodes: {}", node_counts(graph.cu_graph())?);
    let round = || -> Result<(f64, f64)> {
        let start = Instant::now();
        for _ in 0..REPLAYS {
            graph.launch()?;
        }
        let host = start.elapsed().as_secs_f64();
        dev.synchronize()?;
        let n = REPLAYS as f64;
        Ok((start.elapsed().as_secs_f64() / n, host / n))
    };
    for _ in 0..warmup {
        round()?;
    }
    let (t, host): (Vec<f64>, Vec<f64>) = (0..reps)
        .map(|_| round())
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    Ok(summary(t, host))
}

/// What a captured graph holds besides kernels (allocations, frees, fills, copies) costs
/// replay time between them: its nodes counted by type, for stderr.
#[cfg(feature = "cuda")]
fn node_counts(graph: candle_core::cuda_backend::cudarc::driver::sys::CUgraph) -> Result<String> {
    use candle_core::cuda_backend::cudarc::driver::sys;
    let mut n = 0usize;
    // SAFETY: `graph` is a live captured graph; the first call only counts its nodes, the
    // second fills `nodes` (n of them).
    unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut n).result()? };
    let mut nodes = vec![std::ptr::null_mut(); n];
    unsafe { sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut n).result()? };
    let mut counts = std::collections::BTreeMap::new();
    for node in nodes.into_iter().take(n) {
        let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
        // SAFETY: `node` is one of the graph's nodes.
        unsafe { sys::cuGraphNodeGetType(node, &mut kind).result()? };
        *counts
            .entry(
                format!("{kind:?}")
                    .replace("CU_GRAPH_NODE_TYPE_", "")
                    .to_lowercase(),
            )
            .or_insert(0) += 1;
    }
    let each: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    Ok(format!("{n} ({})", each.join(", ")))
}

/// The benchmark's loss: the mean squared error over every output, its mean taken as a sum of
/// row sums (see the top of this file).
fn mse(y: &Tensor, target: &Tensor) -> Result<Tensor> {
    let d = (y - target)?.sqr()?;
    let rows = d.flatten_to(1)?.sum_keepdim(1)?;
    Ok((rows.sum_all()? / d.elem_count() as f64)?)
}

/// candle-nn's cells stacked, one step at a time.
enum Loop {
    Lstm(Vec<LSTM>),
    Gru(Vec<GRU>),
}

impl Loop {
    fn new(mode: RnnMode, s: &Shape, vb: candle_nn::VarBuilder) -> Result<Self> {
        let h = s.hidden;
        Ok(match mode {
            RnnMode::Lstm => Loop::Lstm(
                (0..s.layers)
                    .map(|l| {
                        candle_nn::lstm(
                            h,
                            h,
                            LSTMConfig {
                                layer_idx: l,
                                ..Default::default()
                            },
                            vb.clone(),
                        )
                    })
                    .collect::<candle_core::Result<_>>()?,
            ),
            RnnMode::Gru => Loop::Gru(
                (0..s.layers)
                    .map(|l| candle_nn::gru(h, h, GRUConfig::default(), vb.pp(l)))
                    .collect::<candle_core::Result<_>>()?,
            ),
            m => anyhow::bail!("candle-nn has no {m:?} cell"),
        })
    }

    /// Time-major `[T, B, H]` in, the top layer's hidden states out.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let steps = x.dim(0)?;
        let batch = x.dim(1)?;
        let mut input = x.clone();
        macro_rules! run {
            ($cells:expr) => {
                for cell in $cells {
                    let mut st = cell.zero_state(batch)?;
                    let mut outs = Vec::with_capacity(steps);
                    for t in 0..steps {
                        st = cell.step(&input.get(t)?, &st)?;
                        outs.push(st.h().clone());
                    }
                    input = Tensor::stack(&outs, 0)?;
                }
            };
        }
        match self {
            Loop::Lstm(c) => run!(c),
            Loop::Gru(c) => run!(c),
        }
        Ok(input)
    }
}

/// The variants run without `--variants`.
const DEFAULT_VARIANTS: [&str; 6] = [
    "op-fp32-default",
    "op-tf32-default",
    "op-bf16-default",
    "op-f16-default",
    "op-bf16-standard",
    "op-fp32-standard",
];

/// The dtype, f32 math and algorithm of the op's variant `name`:
/// `op-{fp32|tf32|bf16|f16}-{standard|static|static-small-h|dynamic|persistent|auto|default}`.
/// `op-PRECISION` alone is the standard algorithm, the name earlier runs (and their scripts
/// and JSON files) gave it.
fn variant(name: &str) -> Result<(DType, MathMode, RnnAlgo)> {
    let parsed = name.strip_prefix("op-").and_then(|rest| {
        let (precision, kernel) = rest.split_once('-').unwrap_or((rest, "standard"));
        let (dtype, math) = match precision {
            "fp32" => (DType::F32, MathMode::Fp32),
            "tf32" => (DType::F32, MathMode::Tf32),
            "bf16" => (DType::BF16, MathMode::Fp32),
            "f16" => (DType::F16, MathMode::Fp32),
            _ => return None,
        };
        let algo = match kernel {
            "standard" => RnnAlgo::Standard,
            "static" => RnnAlgo::PersistStatic,
            "static-small-h" => RnnAlgo::PersistStaticSmallH,
            "dynamic" => RnnAlgo::PersistDynamic,
            "persistent" => RnnAlgo::Persistent,
            "auto" => RnnAlgo::Auto,
            "default" => RnnAlgo::Heuristic,
            _ => return None,
        };
        Some((dtype, math, algo))
    });
    match parsed {
        Some(v) => Ok(v),
        None => anyhow::bail!(
            "unknown variant {name}: variants are named \
             op-{{fp32|tf32|bf16|f16}}-{{standard|static|static-small-h|dynamic|persistent|auto|default}} \
             (op-PRECISION alone: standard)"
        ),
    }
}

/// How the timed training step takes its gradients (`--api`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Api {
    /// `loss.backward()`: candle's autograd adds the weight's gradient into a fresh
    /// zero-filled buffer.
    Plain,
    /// `candle_cudnn_rnn::backward(&loss)`: the weight's gradient stored straight into the
    /// returned store, as a program that uses the crate's entry point does.
    Direct,
    /// The weight's gradient left in a sink of the caller's (`Rnn::with_weight_grad_sink_mode`):
    /// `Add` into a buffer zeroed before each step (as PyTorch's `zero_grad` + cuDNN's
    /// accumulation), `Overwrite` written over it (as ptb-lm does), which then needs no zeroing.
    Sink(SinkMode),
}

impl Api {
    fn parse(name: &str) -> Result<Self> {
        Ok(match name {
            "plain" => Api::Plain,
            "direct" => Api::Direct,
            "sink" => Api::Sink(SinkMode::Add),
            "sink-overwrite" => Api::Sink(SinkMode::Overwrite),
            a => anyhow::bail!("--api takes plain, direct, sink or sink-overwrite, got {a}"),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Api::Plain => "plain",
            Api::Direct => "direct",
            Api::Sink(SinkMode::Add) => "sink",
            Api::Sink(SinkMode::Overwrite) => "sink-overwrite",
        }
    }
}

/// One implementation's results on one shape.
struct Measured {
    /// The variant's name as asked for (or candle-nn's loop).
    variant: String,
    /// The kernels that served its last training call and its last forward, where known.
    train_kernel: Option<RnnAlgo>,
    forward_kernel: Option<RnnAlgo>,
    /// How the training step took its gradients, and whether it applied an SGD update.
    api: Api,
    sgd: bool,
    /// Seconds per batch: the training step, the forward, the training step's host time.
    train: Timing,
    fwd: Timing,
    host: f64,
    /// Why the variant did not run, if it did not.
    refused: Option<String>,
}

impl Measured {
    /// A variant that did not run, for `why`.
    fn refused(variant: String, api: Api, sgd: bool, why: String) -> Self {
        let none = Timing {
            median: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        };
        Self {
            variant,
            train_kernel: None,
            forward_kernel: None,
            api,
            sgd,
            train: none,
            fwd: none,
            host: f64::NAN,
            refused: Some(why),
        }
    }
}

/// Prints and records one shape's results as µs per example.
fn emit(
    rows: &mut Vec<serde_json::Value>,
    (mode, bidirectional): (RnnMode, bool),
    s: &Shape,
    results: Vec<Measured>,
) {
    for m in results {
        let name = match (m.train_kernel, m.forward_kernel) {
            (Some(a), Some(b)) if a != b => format!("{} (train {a:?}, forward {b:?})", m.variant),
            (Some(a), _) | (None, Some(a)) => format!("{} ({a:?})", m.variant),
            (None, None) => m.variant.clone(),
        };
        let per_example = |t: f64| t * 1e6 / s.batch as f64;
        let (tu, fu, hu) = (
            per_example(m.train.median),
            per_example(m.fwd.median),
            per_example(m.host),
        );
        let bi = if bidirectional { " x 2 directions" } else { "" };
        println!(
            "| {mode:?} | {}{bi} | {} | {} | {} | {name} | {tu:.2} | {fu:.2} | {hu:.2} |",
            s.layers, s.batch, s.seq, s.hidden
        );
        let kernel = |k: Option<RnnAlgo>| k.map(|k| format!("{k:?}"));
        rows.push(json!({
            "mode": mode.name(), "layers": s.layers, "batch": s.batch, "seq": s.seq, "hidden": s.hidden,
            "impl": name, "train_us_per_example": tu, "forward_us_per_example": fu,
            "train_min_us_per_example": per_example(m.train.min),
            "train_max_us_per_example": per_example(m.train.max),
            "forward_min_us_per_example": per_example(m.fwd.min),
            "forward_max_us_per_example": per_example(m.fwd.max),
            "train_host_us_per_example": hu,
            "variant": m.variant, "train_kernel": kernel(m.train_kernel),
            "forward_kernel": kernel(m.forward_kernel), "api": m.api.name(), "sgd": m.sgd,
            "refused": m.refused, "bidirectional": bidirectional,
        }));
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let quick = args.iter().any(|a| a == "--quick");
    // Skip candle-nn's step loop (slow on the large shapes).
    let no_loop = args.iter().any(|a| a == "--no-loop");
    let reps: usize = arg("--reps").map_or(Ok(if quick { 3 } else { 20 }), |r| r.parse())?;
    // `--phase train|forward` times one of the two alone (for a profiler to see one kind).
    let phase = arg("--phase").unwrap_or_else(|| "both".into());
    let (time_train, time_forward) = match phase.as_str() {
        "both" => (true, true),
        "train" => (true, false),
        "forward" => (false, true),
        p => anyhow::bail!("--phase takes train, forward or both, got {p}"),
    };
    // `--api` (see the top of this file); `--sink` and `--sink-overwrite` are
    // `--api sink` and `--api sink-overwrite`.
    let sink_flag = match (
        args.iter().any(|a| a == "--sink"),
        args.iter().any(|a| a == "--sink-overwrite"),
    ) {
        (false, false) => None,
        (true, false) => Some(Api::Sink(SinkMode::Add)),
        (false, true) => Some(Api::Sink(SinkMode::Overwrite)),
        (true, true) => anyhow::bail!("--sink and --sink-overwrite exclude each other"),
    };
    let api = match (
        arg("--api").as_deref().map(Api::parse).transpose()?,
        sink_flag,
    ) {
        (Some(a), Some(f)) if a != f => {
            anyhow::bail!("--api {} and --{} disagree", a.name(), f.name())
        }
        (a, f) => a.or(f).unwrap_or(Api::Plain),
    };
    let sink = match api {
        Api::Sink(mode) => Some(mode),
        Api::Plain | Api::Direct => None,
    };
    // `--sgd`: the step also updates the weight with candle-nn's SGD, from the store's
    // gradient (with a sink: the sink, put into the store as a user of a candle-nn optimizer
    // would).
    let sgd = args.iter().any(|a| a == "--sgd");
    // `--loss sum`: backward from the gradient of the outputs' sum (ones), so that the step is
    // the op's forward and backward alone; `mse` (the default) adds the loss's kernels.
    let sum_loss = match arg("--loss").as_deref() {
        None | Some("mse") => false,
        Some("sum") => true,
        Some(l) => anyhow::bail!("--loss takes mse or sum, got {l}"),
    };
    // `--input-grad`: the input's gradient is wanted too, as under an embedding or a layer.
    let input_grad = args.iter().any(|a| a == "--input-grad");
    let bidirectional = args.iter().any(|a| a == "--bidirectional");
    if bidirectional && !no_loop {
        anyhow::bail!("--bidirectional needs --no-loop: candle-nn's step loop runs one direction");
    }
    let dirs = if bidirectional { 2 } else { 1 };
    let dropout: f32 = match arg("--dropout") {
        None => 0.0,
        Some(p) => match p.parse() {
            Ok(p) if (0.0..1.0).contains(&p) => p,
            _ => anyhow::bail!("--dropout takes a probability in [0, 1), got {p}"),
        },
    };
    if dropout > 0.0 && !no_loop {
        anyhow::bail!("--dropout needs --no-loop: candle-nn's step loop drops nothing");
    }
    let graph = args.iter().any(|a| a == "--graph");
    let dev = Device::cuda_if_available(0)?;
    // The op keeps freed memory in the device's pool across the synchronization after each
    // step, as PyTorch's caching allocator does; `--release-memory` measures CUDA's default
    // instead (every free byte back to the driver at each synchronization).
    #[cfg(feature = "cuda")]
    if args.iter().any(|a| a == "--release-memory") {
        candle_cudnn_rnn::keep_freed_memory(&dev, false)?;
    }
    // Everything here runs on the device's one stream, so the per-allocation events candle's
    // CUDA backend records by default (to order work across streams) are pure host cost, which
    // PyTorch does not pay either; programs that use one stream turn them off too.
    #[cfg(feature = "cuda")]
    if let Device::Cuda(d) = &dev {
        // SAFETY: no tensor of this program is used on another stream.
        unsafe { d.disable_event_tracking() };
    }
    // Enough untimed runs for the GPU to reach its clocks: with 3, the first variant of a shape
    // measured slower than the same kernels right after it.
    let warmup: usize = arg("--warmup").map_or(Ok(if quick { 1 } else { 20 }), |w| w.parse())?;
    let mut rows = Vec::new();
    println!("| mode | L | B | T | H | impl | train us/ex | fwd us/ex | train host us/ex |");
    println!("|---|---|---|---|---|---|---|---|---|");
    // `--shape L,B,T,H` measures that shape alone.
    let shapes = match arg("--shape") {
        Some(spec) => {
            let v: Vec<usize> = spec
                .split(',')
                .map(str::parse)
                .collect::<std::result::Result<_, _>>()?;
            let &[layers, batch, seq, hidden] = v.as_slice() else {
                anyhow::bail!("--shape takes L,B,T,H, got {spec}")
            };
            vec![Shape {
                layers,
                batch,
                seq,
                hidden,
            }]
        }
        None if quick => grid().into_iter().take(2).collect(),
        None => grid(),
    };
    // `--mode` and `--variants` narrow the run, e.g. to one kernel list under a profiler.
    let modes = match arg("--mode") {
        Some(m) => vec![m.parse::<RnnMode>().map_err(anyhow::Error::msg)?],
        None => vec![RnnMode::Lstm, RnnMode::Gru],
    };
    let variants = match arg("--variants") {
        Some(w) => w.split(',').map(str::to_string).collect(),
        None => DEFAULT_VARIANTS.map(str::to_string).to_vec(),
    };
    let variants = variants
        .into_iter()
        .map(|n| Ok((variant(&n)?, n)))
        .collect::<Result<Vec<_>>>()?;
    for mode in modes {
        for s in &shapes {
            let x = Tensor::randn(0f32, 1., (s.seq, s.batch, s.hidden), &dev)?;
            let target = Tensor::randn(0f32, 1., (s.seq, s.batch, dirs * s.hidden), &dev)?;
            let mut results = Vec::new();
            for &((dtype, math, algo), ref name) in &variants {
                // A kernel that refuses the shape (one of cuDNN's persistent algorithms, say)
                // leaves a row of NaN with its reason, and the run goes on.
                let measured = (|| -> Result<Measured> {
                    // A module timed in graphs' replays says so: the default's rules past
                    // batch 32 read it.
                    let launch = match graph {
                        true => candle_cudnn_rnn::Launch::Graphed,
                        false => candle_cudnn_rnn::Launch::Eager,
                    };
                    let cfg = RnnConfig {
                        num_layers: s.layers,
                        bidirectional,
                        dropout,
                        math,
                        algo,
                        launch,
                        ..Default::default()
                    };
                    let (x, target) = (x.to_dtype(dtype)?, target.to_dtype(dtype)?);
                    let x = match input_grad {
                        true => Var::from_tensor(&x)?.as_tensor().clone(),
                        false => x,
                    };
                    let dims = candle_cudnn_rnn::RnnDims::new(mode, s.hidden, s.hidden, &cfg);
                    let k = 1.0 / (s.hidden as f32).sqrt();
                    let w = Tensor::rand(-k, k, dims.weight_count(), &dev)?.to_dtype(dtype)?;
                    let w = Var::from_tensor(&w)?;
                    let rnn =
                        Rnn::from_weight(mode, s.hidden, s.hidden, cfg, w.as_tensor().clone())?;
                    let grad = match sink {
                        Some(mode) => Some((w.as_tensor().zeros_like()?, mode)),
                        None => None,
                    };
                    let rnn = match &grad {
                        Some((g, mode)) => rnn.with_weight_grad_sink_mode(g.clone(), *mode)?,
                        None => rnn,
                    };
                    let frozen =
                        Rnn::from_weight(mode, s.hidden, s.hidden, cfg, w.as_tensor().detach())?;
                    let skipped = Timing {
                        median: f64::NAN,
                        min: f64::NAN,
                        max: f64::NAN,
                    };
                    let mut optimizer = match sgd {
                        true => Some(candle_nn::SGD::new(vec![w.clone()], 0.01)?),
                        false => None,
                    };
                    let step = || -> Result<()> {
                        if let Some((g, SinkMode::Add)) = &grad {
                            g.zero_set()?;
                        }
                        let (y, _) = rnn.forward_t(&x, None, true)?;
                        let loss = match sum_loss {
                            true => y,
                            false => mse(&y, &target)?,
                        };
                        let mut grads = match api {
                            Api::Direct => candle_cudnn_rnn::backward(&loss)?,
                            Api::Plain | Api::Sink(_) => loss.backward()?,
                        };
                        if let Some(optimizer) = &mut optimizer {
                            if let Some((g, _)) = &grad {
                                grads.insert(w.as_tensor(), g.clone());
                            }
                            optimizer.step(&grads)?;
                        }
                        Ok(())
                    };
                    let (train, host) = match (time_train, graph) {
                        (false, _) => (skipped, f64::NAN),
                        (true, false) => time(&dev, warmup, reps, step)?,
                        #[cfg(feature = "cuda")]
                        (true, true) => time_graph(&dev, warmup, reps, step)?,
                        #[cfg(not(feature = "cuda"))]
                        (true, true) => anyhow::bail!("--graph needs the cuda feature"),
                    };
                    // The kernels that served the last training call and forward (the heuristic's,
                    // Auto's or Persistent's choice), read before the other phase runs.
                    let train_kernel = rnn.last_algo();
                    // An inference forward: on a detached input (with `--input-grad` the
                    // training step's input is a variable, which would make it a training call,
                    // where PyTorch's forward runs under `no_grad`).
                    let x_in = x.detach();
                    let forward = || -> Result<()> {
                        frozen.forward(&x_in, None)?;
                        Ok(())
                    };
                    let (fwd, _) = match (time_forward, graph) {
                        (false, _) => (skipped, f64::NAN),
                        (true, false) => time(&dev, warmup, reps, forward)?,
                        #[cfg(feature = "cuda")]
                        (true, true) => time_graph(&dev, warmup, reps, forward)?,
                        #[cfg(not(feature = "cuda"))]
                        (true, true) => anyhow::bail!("--graph needs the cuda feature"),
                    };
                    let forward_kernel = frozen.last_algo();
                    Ok(Measured {
                        variant: name.clone(),
                        train_kernel,
                        forward_kernel,
                        api,
                        sgd,
                        train,
                        fwd,
                        host,
                        refused: None,
                    })
                })();
                results.push(measured.unwrap_or_else(|e| {
                    let why = e.to_string();
                    let why = why.lines().next().unwrap_or_default().to_string();
                    eprintln!("{mode:?} {s:?} {name}: refused: {why}");
                    Measured::refused(name.clone(), api, sgd, why)
                }));
            }
            if no_loop {
                emit(&mut rows, (mode, bidirectional), s, results);
                continue;
            }
            // The candle-nn loop is slow on the large shapes: fewer repetitions suffice.
            let vm = candle_nn::VarMap::new();
            let cells = Loop::new(
                mode,
                s,
                candle_nn::VarBuilder::from_varmap(&vm, DType::F32, &dev),
            )?;
            let loop_reps = (reps / 4).max(3);
            let (train, host) = time(&dev, 1, loop_reps, || {
                mse(&cells.forward(&x)?, &target)?.backward()?;
                Ok(())
            })?;
            let xd = x.detach();
            let (fwd, _) = time(&dev, 1, loop_reps, || {
                cells.forward(&xd)?;
                Ok(())
            })?;
            results.push(Measured {
                variant: "candle-nn-loop-fp32".into(),
                train_kernel: None,
                forward_kernel: None,
                api: Api::Plain,
                sgd: false,
                train,
                fwd,
                host,
                refused: None,
            });
            emit(&mut rows, (mode, bidirectional), s, results);
        }
    }
    if let Some(p) = arg("--json") {
        #[cfg(feature = "cuda")]
        let cudnn = candle_cudnn_rnn::cudnn_version();
        #[cfg(not(feature = "cuda"))]
        let cudnn = 0;
        let doc =
            json!({ "device": format!("{dev:?}"), "cudnn": cudnn, "reps": reps, "grid": rows });
        std::fs::write(p, serde_json::to_string_pretty(&doc)?)?;
    }
    Ok(())
}
