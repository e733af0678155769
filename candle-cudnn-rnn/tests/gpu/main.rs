//! GPU tests: the op on cuda:0 against the CPU path run in f64 on the same (rounded) inputs,
//! on fresh random inputs every run (the seed is printed; `RNN_TEST_SEED` replays it).
//! `cudnn`: cuDNN's `Standard`, `PersistStatic` and `PersistStaticSmallH` algorithms, and the
//! default algorithm's choice among them and the crate's kernels (LSTM and GRU, stacked,
//! bidirectional, initial states, per-sample lengths; f32 strict, bf16 and f16 looser).
//! `persistent`: the crate's own persistent kernels (`RnnAlgo::Persistent`, LSTM and GRU, bf16
//! and f16, one layer and stacks). `dropout`: inter-layer dropout on both backends, masks replayed
//! from a seed and gradients through them against finite differences. `plain_api`: the default
//! algorithm, `candle_cudnn_rnn::backward` and a loss of the final state alone. The bounds are
//! those of `examples/gpu_check`, the long report.
//!
//! Without a GPU every test says so and passes (`RNN_TEST_REQUIRE_GPU=1` makes that a
//! failure, for a GPU machine whose driver went missing); without the `cuda` feature this
//! file compiles to nothing. On a GPU machine:
//! `cargo test --release -p candle-cudnn-rnn --features cuda --test gpu -- --nocapture`
//! prints every error beside its bound.
#![cfg(feature = "cuda")]

mod captured;
#[path = "../common/mod.rs"]
mod common;
mod cudnn;
mod dropout;
mod persistent;
mod plain_api;

use candle_core::{DType, Device, IndexOp, Tensor, Var};
use candle_cudnn_rnn::{Launch, Rnn, RnnAlgo, RnnConfig, RnnDims, RnnMode, RnnState};
use rand::rngs::StdRng;
use std::sync::{Mutex, MutexGuard};

// The error measures take tensors of any device and dtype.
pub use common::{max_diff, rel_err};

/// One test on the GPU at a time: each test's printed errors stay together, and a test's
/// calls do not share the GPU with another's (the persistent kernels fill it).
static GPU_TURN: Mutex<()> = Mutex::new(());

/// cuda:0 and the turn on it, held for the test's duration.
pub struct Gpu {
    pub device: Device,
    _turn: MutexGuard<'static, ()>,
}

/// cuda:0, or `None` after printing why the test is skipped when no GPU answers.
pub fn gpu(test: &str) -> Option<Gpu> {
    // A test that panicked while holding the turn leaves the GPU usable for the others.
    let turn = GPU_TURN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match Device::new_cuda(0) {
        Ok(device) => Some(Gpu {
            device,
            _turn: turn,
        }),
        Err(e) => {
            // The message's first line: candle appends a backtrace where RUST_BACKTRACE is set.
            let e = e.to_string();
            let e = e.lines().next().unwrap_or_default();
            let required = std::env::var("RNN_TEST_REQUIRE_GPU").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "{test}: no CUDA GPU ({e}), and RNN_TEST_REQUIRE_GPU=1"
            );
            eprintln!("{test}: SKIPPED: no CUDA GPU ({e})");
            None
        }
    }
}

/// Runs `check` on each of `cases` with the GPU, the test's random generator (its seed
/// printed) and its verdicts, then fails the test if any check failed; without a GPU the test
/// says so and passes.
pub fn check_each<C>(
    test: &str,
    cases: impl IntoIterator<Item = C>,
    mut check: impl FnMut(&Gpu, C, &mut StdRng, &mut Verdicts),
) {
    let Some(gpu) = gpu(test) else { return };
    let mut rng = common::rng(test);
    let mut verdicts = Verdicts::default();
    for case in cases {
        check(&gpu, case, &mut rng, &mut verdicts);
    }
    verdicts.finish(test);
}

/// `t` on the CPU in f64.
pub fn host64(t: &Tensor) -> Tensor {
    t.to_device(&Device::Cpu)
        .unwrap()
        .to_dtype(DType::F64)
        .unwrap()
}

/// Whether an error is within its bound; a NaN error is not.
fn within(error: f64, bound: f64) -> bool {
    error <= bound
}

/// Each quantity's error against its bound, printed as one line per case; the failures are
/// gathered so that one run shows every one of them, and the test fails at the end.
#[derive(Default)]
pub struct Verdicts {
    failures: Vec<String>,
}

impl Verdicts {
    /// Records `(quantity, error, bound)` rows of one case and prints them on one line.
    pub fn case(&mut self, case: &str, rows: &[(&str, f64, f64)]) {
        let line = rows
            .iter()
            .map(|&(what, e, bound)| {
                let verdict = if within(e, bound) { "" } else { " FAIL" };
                format!("{what} {e:.1e} (<= {bound:.0e}){verdict}")
            })
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!("{case}: {line}");
        for &(what, e, bound) in rows {
            if !within(e, bound) {
                self.failures
                    .push(format!("{case}: {what} rel err {e:.2e} > {bound:.0e}"));
            }
        }
    }

    /// Records a condition that must hold, printed only when it does not.
    pub fn require(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            let what = what();
            eprintln!("FAIL: {what}");
            self.failures.push(what);
        }
    }

    /// Records that the persistent kernels themselves served `case`'s call (`served`), not
    /// cuDNN in their place.
    pub fn require_persistent(&mut self, case: &str, served: Option<RnnAlgo>) {
        self.require(served == Some(RnnAlgo::Persistent), || {
            format!("{case}: served by {served:?}, not the persistent kernels")
        });
    }

    /// Fails the test if anything failed.
    pub fn finish(self, test: &str) {
        assert!(
            self.failures.is_empty(),
            "{test}: {} checks failed:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

/// The shape of one call: cell, sizes and options.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub mode: RnnMode,
    pub cfg: RnnConfig,
    pub batch: usize,
    pub seq: usize,
    pub input: usize,
    pub hidden: usize,
}

impl Shape {
    pub fn dims(&self) -> RnnDims {
        RnnDims::new(self.mode, self.input, self.hidden, &self.cfg)
    }

    pub fn rnn(&self, w: &Tensor) -> Rnn {
        Rnn::from_weight(self.mode, self.input, self.hidden, self.cfg, w.clone()).unwrap()
    }

    /// The same shape with another algorithm (the CPU reference's is irrelevant).
    pub fn with_algo(&self, algo: RnnAlgo) -> Self {
        Self {
            cfg: RnnConfig { algo, ..self.cfg },
            ..*self
        }
    }

    /// E.g. `LSTM L2 bi B5 T7 I20 H32`.
    pub fn name(&self) -> String {
        format!(
            "{} L{} {} B{} T{} I{} H{}{}",
            self.mode.name().to_uppercase(),
            self.cfg.num_layers,
            if self.cfg.bidirectional { "bi" } else { "uni" },
            self.batch,
            self.seq,
            self.input,
            self.hidden,
            match (self.cfg.bias, self.cfg.single_bias) {
                (false, _) => " no bias",
                (true, true) => " single bias",
                (true, false) => "",
            }
        )
    }

    /// Where the biases begin in the flat weight (they come after every matrix).
    pub fn bias_offset(&self) -> Option<usize> {
        self.dims().block(0, 0).b_ih
    }

    /// The packed state's `h` and `c` parts (`c` for an LSTM only), flattened.
    pub fn split_state(&self, packed: &Tensor) -> (Tensor, Option<Tensor>) {
        let dims = self.dims();
        let h_len: usize = dims.h_shape(self.batch).iter().product();
        let flat = packed.flatten_all().unwrap();
        let h = flat.narrow(0, 0, h_len).unwrap();
        let c = dims
            .c_shape(self.batch)
            .map(|c| flat.narrow(0, h_len, c.iter().product()).unwrap());
        (h, c)
    }
}

/// One call's inputs: flat weight, time-major x, packed initial state (`None`: zeros), and the
/// weights of the loss Σ y·gy + Σ state·gs.
#[derive(Clone)]
pub struct Inputs {
    pub w: Tensor,
    pub x: Tensor,
    pub s: Option<Tensor>,
    pub gy: Tensor,
    pub gs: Tensor,
}

impl Inputs {
    /// Uniform random inputs in `dtype`, on the CPU, scaled as gpu_check's (weights in
    /// ±1/√hidden, as PyTorch initializes them).
    pub fn random(shape: &Shape, with_state: bool, dtype: DType, rng: &mut StdRng) -> Self {
        let dims = shape.dims();
        let k = 1.0 / (shape.hidden as f64).sqrt();
        let state = dims.state_shape(shape.batch);
        let mut draw =
            |size: &[usize], scale: f64| common::uniform(rng, size, scale).to_dtype(dtype).unwrap();
        let w = draw(&[dims.weight_count()], k);
        let x = draw(&[shape.seq, shape.batch, shape.input], 1.0);
        let s = draw(&state, 0.5);
        let gy = draw(&[shape.seq, shape.batch, dims.output_size()], 1.0);
        let gs = draw(&state, 1.0);
        Self {
            w,
            x,
            s: with_state.then_some(s),
            gy,
            gs,
        }
    }

    /// Every input moved to `device` and cast to `dtype` (the reference's: the CPU, f64).
    pub fn to(&self, device: &Device, dtype: DType) -> Self {
        let on = |t: &Tensor| t.to_dtype(dtype).unwrap().to_device(device).unwrap();
        Self {
            w: on(&self.w),
            x: on(&self.x),
            s: self.s.as_ref().map(on),
            gy: on(&self.gy),
            gs: on(&self.gs),
        }
    }
}

/// What one call gave: outputs, and in training the gradients of the loss.
pub struct Outcome {
    pub y: Tensor,
    pub state: Tensor,
    /// `None` when x was not tracked (or in inference).
    pub dx: Option<Tensor>,
    pub dw: Option<Tensor>,
    /// `None` without an initial state (or in inference).
    pub ds: Option<Tensor>,
    /// The algorithm that served the call, as the module reports it.
    pub served: Option<RnnAlgo>,
}

/// Runs `shape` over `inputs` (already on their device and dtype): inference with `train`
/// false (nothing tracked), else a training call with x (if `track_x`), w and the initial
/// state tracked, then backward of Σ y·gy + Σ state·gs. `seed`: `set_seed` before the call.
pub fn call(
    shape: &Shape,
    inputs: &Inputs,
    lengths: Option<&[usize]>,
    train: bool,
    track_x: bool,
    seed: Option<u64>,
) -> candle_core::Result<Outcome> {
    let var = |t: &Tensor| Var::from_tensor(t).map(|v| v.as_tensor().clone());
    let (w, x, s) = if train {
        let x = if track_x {
            var(&inputs.x)?
        } else {
            inputs.x.clone()
        };
        (var(&inputs.w)?, x, inputs.s.as_ref().map(var).transpose()?)
    } else {
        (inputs.w.clone(), inputs.x.clone(), inputs.s.clone())
    };
    let rnn = Rnn::from_weight(shape.mode, shape.input, shape.hidden, shape.cfg, w.clone())?;
    if let Some(seed) = seed {
        rnn.set_seed(seed);
    }
    let state = s.clone().map(RnnState::from_packed);
    let (y, st) = match lengths {
        Some(l) => rnn.forward_with_lengths(&x, l, state.as_ref(), train)?,
        None => rnn.forward_t(&x, state.as_ref(), train)?,
    };
    let served = rnn.auto_algo(shape.seq, shape.batch, train);
    let state = st.packed().clone();
    if !train {
        return Ok(Outcome {
            y,
            state,
            dx: None,
            dw: None,
            ds: None,
            served,
        });
    }
    let loss = ((&y * &inputs.gy)?.sum_all()? + (&state * &inputs.gs)?.sum_all()?)?;
    let grads = loss.backward()?;
    let dx = grads.get(&x).cloned();
    if !track_x && dx.is_some() {
        candle_core::bail!("x was not tracked, yet a gradient of x came back");
    }
    Ok(Outcome {
        dx,
        dw: grads.get(&w).cloned(),
        ds: s.and_then(|s| grads.get(&s).cloned()),
        y,
        state,
        served,
    })
}

/// Errors of `got` against `want`, by quantity: y, h_n, c_n; in training also dx, dw, the
/// biases' share of dw alone (a few percent of its norm at most, so a wrong bias gradient
/// hides in dw's error), dh0, dc0. A gradient missing on either side is an infinite error.
pub fn errors(shape: &Shape, got: &Outcome, want: &Outcome) -> Vec<(&'static str, f64)> {
    let mut rows = vec![("y", rel_err(&got.y, &want.y))];
    let (h, c) = shape.split_state(&got.state);
    let (h_want, c_want) = shape.split_state(&want.state);
    rows.push(("h_n", rel_err(&h, &h_want)));
    if let (Some(c), Some(c_want)) = (&c, &c_want) {
        rows.push(("c_n", rel_err(c, c_want)));
    }
    let gradient = |a: &Option<Tensor>, b: &Option<Tensor>| match (a, b) {
        (Some(a), Some(b)) => rel_err(a, b),
        _ => f64::INFINITY,
    };
    if want.dx.is_some() {
        rows.push(("dx", gradient(&got.dx, &want.dx)));
    }
    if let Some(dw_want) = &want.dw {
        rows.push(("dw", gradient(&got.dw, &want.dw)));
        if let (Some(at), Some(dw)) = (shape.bias_offset(), &got.dw) {
            let n = dw_want.dim(0).unwrap() - at;
            let tail = |t: &Tensor| t.narrow(0, at, n).unwrap();
            rows.push(("db", rel_err(&tail(dw), &tail(dw_want))));
        }
    }
    if let Some(ds_want) = &want.ds {
        let (dh_want, dc_want) = shape.split_state(ds_want);
        let (dh, dc) = match &got.ds {
            Some(ds) => {
                let (h, c) = shape.split_state(ds);
                (Some(h), c)
            }
            None => (None, None),
        };
        rows.push(("dh0", gradient(&dh, &Some(dh_want))));
        if dc_want.is_some() {
            rows.push(("dc0", gradient(&dc, &dc_want)));
        }
    }
    rows
}

/// `errors` with each quantity's bound: `outputs` for y and the final state, `gradients` for
/// the rest.
pub fn bounded(
    rows: &[(&'static str, f64)],
    outputs: f64,
    gradients: f64,
) -> Vec<(&'static str, f64, f64)> {
    rows.iter()
        .map(|&(what, e)| {
            let output = matches!(what, "y" | "h_n" | "c_n");
            (what, e, if output { outputs } else { gradients })
        })
        .collect()
}

/// The largest |value| of y and dx past each sample's length on the GPU: the op promises
/// exact zeros there.
pub fn padding(got: &Outcome, lengths: &[usize]) -> f64 {
    let mut worst = 0f64;
    for (b, &len) in lengths.iter().enumerate() {
        for t in [Some(&got.y), got.dx.as_ref()].into_iter().flatten() {
            let t = host64(t);
            if len < t.dim(0).unwrap() {
                let pad = t
                    .i((len.., b))
                    .unwrap()
                    .abs()
                    .unwrap()
                    .flatten_all()
                    .unwrap();
                worst = worst.max(pad.max(0).unwrap().to_scalar::<f64>().unwrap());
            }
        }
    }
    worst
}
