//! GPU check: the cuDNN op against the CPU op in f64 on the same (upcast) inputs, on fresh
//! random inputs every run (`--seed N` replays a run's); PyTorch's recorded outputs; dropout; one module shared by one
//! thread per GPU (two threads on one GPU when the machine has one); freed memory
//! kept in the pool (and released when asked); memory over 1,000 steps;
//! the persistent LSTM and GRU kernels (`persistent`).
//!
//! `cargo run --release -p candle-cudnn-rnn --features cuda --example gpu_check -- [--json FILE] [--quick] [--fixtures FILE] [--devices] [--persistent [--mode lstm|gru] [--dtype bf16|f16|tf32]] [--seed N]`
//! Prints a table and exits non-zero if any check fails. `--devices` and `--persistent` run
//! that check alone (`--persistent` with the weight-gradient sinks, which it also serves;
//! `--mode` takes its rows of one cell only, half of its time; `--dtype` those of one precision,
//! f32 in TF32 as `tf32`).

mod persistent;

use anyhow::{bail, Result};
use candle_core::{DType, Device, IndexOp, Tensor, Var};
use candle_cudnn_rnn::{
    cudnn_version, Bias, MathMode, Rnn, RnnAlgo, RnnConfig, RnnMode, RnnState, SinkMode,
};
use rand::{rngs::StdRng, Rng, SeedableRng};
use serde_json::json;

#[derive(Clone, Copy, Debug)]
struct Case {
    mode: RnnMode,
    layers: usize,
    bidir: bool,
    bias: Bias,
    state: bool,
    math: MathMode,
    dtype: DType,
    /// Draw per-sample lengths (padded input) instead of full-length sequences.
    varlen: bool,
    algo: candle_cudnn_rnn::RnnAlgo,
    /// LSTM projection size (0: none).
    proj: usize,
    batch: usize,
    seq: usize,
    input: usize,
    hidden: usize,
}

/// Every cell, in the order the random cases cycle through them.
const MODES: [RnnMode; 4] = [
    RnnMode::Lstm,
    RnnMode::Gru,
    RnnMode::RnnTanh,
    RnnMode::RnnRelu,
];

impl Case {
    /// A case of `mode` in f32 with strict f32 math, both biases, an initial state,
    /// full-length sequences, no projection and the default algorithm: what the checks vary.
    fn new(
        mode: RnnMode,
        (layers, bidir): (usize, bool),
        (batch, seq, input, hidden): (usize, usize, usize, usize),
    ) -> Self {
        Self {
            mode,
            layers,
            bidir,
            bias: Bias::Double,
            state: true,
            math: MathMode::Fp32,
            dtype: DType::F32,
            varlen: false,
            algo: Default::default(),
            proj: 0,
            batch,
            seq,
            input,
            hidden,
        }
    }

    fn cfg(&self) -> RnnConfig {
        RnnConfig {
            num_layers: self.layers,
            bidirectional: self.bidir,
            bias: self.bias != Bias::None,
            single_bias: self.bias == Bias::Single,
            math: self.math,
            algo: self.algo,
            proj_size: self.proj,
            ..Default::default()
        }
    }

    /// Output and gradient tolerances (relative L2 error).
    fn tolerances(&self) -> (f64, f64) {
        match (self.dtype, self.math, self.mode) {
            // Rounding (TF32, f16, bf16) moves pre-activations near 0 across ReLU's kink, where
            // the gradient jumps between 0 and 1: a few gradient entries differ outright and
            // stacked layers compound it. Outputs stay within the usual bound, and strict fp32
            // ReLU gradients agree to 1e-7, so only these gradient bounds are wider. In bf16
            // a random 2-3 layer case reached 1.1e-1 (dx of a 2-layer, 18-step case); a wrong
            // layout or cell gives errors of order 1.
            (DType::F16 | DType::BF16, _, RnnMode::RnnRelu) => (2e-2, 1.5e-1),
            (DType::F16 | DType::BF16, _, _) => (2e-2, 2e-2),
            (_, MathMode::Fp32, _) => (1e-5, 1e-4),
            (_, MathMode::Tf32, RnnMode::RnnRelu) => (2e-3, 5e-2),
            (_, MathMode::Tf32, _) => (2e-3, 2e-3),
        }
    }

    /// The number format column: the dtype, and for f32 the math mode.
    fn precision(&self) -> String {
        match self.dtype {
            DType::F32 => format!("{:?}", self.math).to_lowercase(),
            dt => dt.as_str().to_string(),
        }
    }
}

fn rel_err(a: &Tensor, b: &Tensor) -> Result<f64> {
    let a = a
        .to_device(&Device::Cpu)?
        .to_dtype(DType::F64)?
        .flatten_all()?;
    let b = b
        .to_device(&Device::Cpu)?
        .to_dtype(DType::F64)?
        .flatten_all()?;
    let d = (&a - &b)?.sqr()?.sum_all()?.to_scalar::<f64>()?.sqrt();
    let n = b.sqr()?.sum_all()?.to_scalar::<f64>()?.sqrt();
    let e = if n > 0.0 { d / n } else { d };
    Ok(if e.is_nan() { f64::INFINITY } else { e })
}

fn uniform(rng: &mut StdRng, shape: &[usize], scale: f64) -> Result<Tensor> {
    let n = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|_| rng.random_range(-scale..scale)).collect();
    Ok(Tensor::from_vec(v, shape, &Device::Cpu)?)
}

/// `(y, state, [dx, dw, dstate])` of loss = Σ y·gy + Σ state·gs, on `w`'s device and dtype.
fn run(
    case: &Case,
    (w, x, s): (&Tensor, &Tensor, Option<&Tensor>),
    lengths: Option<&[usize]>,
    gy: &Tensor,
    gs: &Tensor,
) -> Result<Vec<Tensor>> {
    let (wv, xv) = (Var::from_tensor(w)?, Var::from_tensor(x)?);
    let sv = s.map(Var::from_tensor).transpose()?;
    let rnn = Rnn::from_weight(
        case.mode,
        case.input,
        case.hidden,
        case.cfg(),
        wv.as_tensor().clone(),
    )?;
    let state = sv
        .as_ref()
        .map(|v| RnnState::from_packed(v.as_tensor().clone()));
    let (y, st) = match lengths {
        Some(l) => rnn.forward_with_lengths(xv.as_tensor(), l, state.as_ref(), true)?,
        None => rnn.forward_t(xv.as_tensor(), state.as_ref(), true)?,
    };
    let loss = ((&y * gy)?.sum_all()? + (st.packed() * gs)?.sum_all()?)?;
    let grads = loss.backward()?;
    let mut out = vec![y, st.packed().clone()];
    out.push(grads.get(xv.as_tensor()).cloned().unwrap());
    out.push(grads.get(wv.as_tensor()).cloned().unwrap());
    if let Some(sv) = &sv {
        out.push(grads.get(sv.as_tensor()).cloned().unwrap());
    }
    Ok(out)
}

/// Relative errors of y, state, dx, dw (and dstate) of the cuDNN op against the f64 CPU op.
fn check(case: &Case, gpu: &Device, rng: &mut StdRng) -> Result<Vec<f64>> {
    let dims = candle_cudnn_rnn::RnnDims::new(case.mode, case.input, case.hidden, &case.cfg());
    let k = 1.0 / (case.hidden as f64).sqrt();
    let w = uniform(rng, &[dims.weight_count()], k)?;
    let x = uniform(rng, &[case.seq, case.batch, case.input], 1.0)?;
    let state_shape = dims.state_shape(case.batch);
    let s = uniform(rng, &state_shape, 0.5)?;
    let gy = uniform(rng, &[case.seq, case.batch, dims.output_size()], 1.0)?;
    let gs = uniform(rng, &state_shape, 1.0)?;
    let s = case.state.then_some(s);
    // Round the inputs to the GPU's dtype first, so both sides see the same numbers.
    let f32s = |t: &Tensor| t.to_dtype(case.dtype);
    let up = |t: &Tensor| -> Result<Tensor> { Ok(f32s(t)?.to_dtype(DType::F64)?) };
    let (w64, x64, gy64, gs64) = (up(&w)?, up(&x)?, up(&gy)?, up(&gs)?);
    let s64 = s.as_ref().map(up).transpose()?;
    let lengths: Option<Vec<usize>> = case.varlen.then(|| {
        (0..case.batch)
            .map(|_| rng.random_range(1..=case.seq))
            .collect()
    });
    let l = lengths.as_deref();
    let reference = run(case, (&w64, &x64, s64.as_ref()), l, &gy64, &gs64)?;
    let on_gpu = |t: &Tensor| -> Result<Tensor> { Ok(f32s(t)?.to_device(gpu)?) };
    let sg = s.as_ref().map(on_gpu).transpose()?;
    let got = run(
        case,
        (&on_gpu(&w)?, &on_gpu(&x)?, sg.as_ref()),
        l,
        &on_gpu(&gy)?,
        &on_gpu(&gs)?,
    )?;
    let mut errs = got
        .iter()
        .zip(&reference)
        .map(|(a, b)| rel_err(a, b))
        .collect::<Result<Vec<_>>>()?;
    // The padding of y and dx must be exactly zero on the GPU.
    let mut pad = 0f64;
    for (b, &len) in lengths
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, &l)| l < case.seq)
    {
        for t in [&got[0], &got[2]] {
            let p = t
                .to_device(&Device::Cpu)?
                .to_dtype(DType::F64)?
                .i((len.., b))?;
            pad = pad.max(p.abs()?.flatten_all()?.max(0)?.to_scalar::<f64>()?);
        }
    }
    errs.push(pad);
    Ok(errs)
}

fn cases(rng: &mut StdRng, quick: bool) -> Vec<Case> {
    let mut v = Vec::new();
    // Random small shapes over every option.
    for i in 0..24 {
        // Drawn in this order (layers, batch, seq, input, hidden) so that a seed keeps giving
        // the same cases.
        let stack = (rng.random_range(1..4), (i / 4) % 2 == 0);
        let sizes = (
            rng.random_range(1..20),
            rng.random_range(1..25),
            rng.random_range(1..70),
            rng.random_range(1..70),
        );
        v.push(Case {
            bias: [Bias::None, Bias::Single, Bias::Double][i % 3],
            state: i % 5 != 0,
            math: if i % 6 < 3 {
                MathMode::Fp32
            } else {
                MathMode::Tf32
            },
            varlen: i % 3 == 2,
            ..Case::new(MODES[i % 4], stack, sizes)
        });
    }
    // Half precision: every mode in f16 and bf16, random shapes.
    for i in 0..16 {
        let mut c = v[i % 8];
        c.dtype = if i < 8 { DType::F16 } else { DType::BF16 };
        c.mode = MODES[i % 4];
        v.push(c);
    }
    // LSTM projections: both directions, lengths, every precision.
    for i in 0..8 {
        let mut c = v[(i * 4) % 24];
        c.mode = RnnMode::Lstm;
        c.hidden = c.hidden.max(2);
        c.proj = 1 + i % (c.hidden - 1);
        c.dtype = [DType::F32, DType::F32, DType::F16, DType::BF16][i % 4];
        c.varlen = i % 3 == 1;
        v.push(c);
    }
    if quick {
        return v;
    }
    // The cudnn-rnn-benchmarks grid, each shape once, options rotating.
    let mut i = 0;
    for layers in [1, 3] {
        for batch in [32, 128] {
            for seq in [30, 200] {
                for hidden in [128, 512, 1024] {
                    // LSTM and GRU in turn.
                    let mode = MODES[i % 2];
                    let stack = (layers, hidden == 128 && i % 3 == 0);
                    v.push(Case {
                        state: i % 4 != 3,
                        math: if (i / 2) % 2 == 0 {
                            MathMode::Fp32
                        } else {
                            MathMode::Tf32
                        },
                        varlen: i % 5 == 4,
                        ..Case::new(mode, stack, (batch, seq, hidden, hidden))
                    });
                    i += 1;
                }
            }
        }
    }
    v
}

/// Dropout: on in training, off in inference, reproducible from a seed, and backward runs.
/// `with_weight_grad_sink` on cuDNN (f32, bf16) and on the persistent kernel (bf16): the sink
/// receives the weight gradient autograd would return, bit for bit (the same kernels, adding
/// into zeros or writing), and sums over calls; an overwritten sink (`SinkMode::Overwrite`)
/// filled with noise holds autograd's gradient after each of two calls. Returns the rows'
/// names, errors and verdicts.
fn check_weight_grad_sink(gpu: &Device) -> Result<Vec<(String, f64, bool)>> {
    let mut out = Vec::new();
    for (algo, dt) in [
        (RnnAlgo::Standard, DType::F32),
        (RnnAlgo::Standard, DType::BF16),
        (RnnAlgo::Persistent, DType::BF16),
    ] {
        let cfg = RnnConfig {
            num_layers: 2,
            algo,
            ..Default::default()
        };
        let n = 2 * 4 * 96 * (96 + 96 + 2);
        let w = Var::from_tensor(&Tensor::rand(-0.1f32, 0.1, n, gpu)?.to_dtype(dt)?)?;
        let rnn = Rnn::from_weight(RnnMode::Lstm, 96, 96, cfg, w.as_tensor().clone())?;
        let x = Tensor::randn(0f32, 1., (12, 9, 96), gpu)?.to_dtype(dt)?;
        let c = Tensor::randn(0f32, 1., (12, 9, 96), gpu)?.to_dtype(dt)?;
        let loss = |r: &Rnn| -> Result<candle_core::backprop::GradStore> {
            let (y, _) = r.forward_t(&x, None, true)?;
            Ok((y * &c)?.sum_all()?.backward()?)
        };
        let want = loss(&rnn)?
            .get(w.as_tensor())
            .unwrap()
            .to_dtype(DType::F32)?;
        let values =
            |t: &Tensor| -> Result<Vec<f32>> { Ok(t.to_dtype(DType::F32)?.to_vec1::<f32>()?) };
        let sink = Tensor::zeros(n, dt, gpu)?;
        let sunk = rnn.with_weight_grad_sink(sink.clone())?;
        let grads = loss(&sunk)?;
        let exact = grads.get(w.as_tensor()).is_none() && values(&sink)? == values(&want)?;
        out.push((
            format!("{algo:?} {dt:?}: sink = autograd's dw, none returned"),
            0.0,
            exact,
        ));
        loss(&sunk)?;
        let twice = (&want * 2.0)?;
        let e = ((sink.to_dtype(DType::F32)? - &twice)?
            .abs()?
            .max(0)?
            .to_scalar::<f32>()?
            / twice.abs()?.max(0)?.to_scalar::<f32>()?) as f64;
        let tol = if dt == DType::F32 { 1e-6 } else { 1e-2 };
        out.push((format!("{algo:?} {dt:?}: a second call adds"), e, e <= tol));
        let noise = Tensor::randn(0f32, 1., n, gpu)?.to_dtype(dt)?;
        let written = rnn.with_weight_grad_sink_mode(noise.clone(), SinkMode::Overwrite)?;
        let mut exact = true;
        for _ in 0..2 {
            let grads = loss(&written)?;
            exact &= grads.get(w.as_tensor()).is_none() && values(&noise)? == values(&want)?;
        }
        out.push((
            format!("{algo:?} {dt:?}: an overwritten sink = autograd's dw, twice"),
            0.0,
            exact,
        ));
    }
    Ok(out)
}

fn check_dropout(gpu: &Device) -> Result<Vec<(String, bool)>> {
    let cfg = RnnConfig {
        num_layers: 3,
        dropout: 0.5,
        seed: 7,
        ..Default::default()
    };
    let w = Tensor::rand(-0.1f32, 0.1, 3 * 4 * 64 * (64 + 64 + 2), gpu)?;
    let x = Tensor::randn(0f32, 1., (10, 8, 64), gpu)?;
    let plain = Rnn::from_weight(
        RnnMode::Lstm,
        64,
        64,
        RnnConfig {
            dropout: 0.0,
            ..cfg
        },
        w.clone(),
    )?;
    let dropped = Rnn::from_weight(RnnMode::Lstm, 64, 64, cfg, w.clone())?;
    let (y0, _) = plain.forward(&x, None)?;
    let (y_inf, _) = dropped.forward(&x, None)?;
    dropped.set_seed(11);
    let (y_a, _) = dropped.forward_t(&x, None, true)?;
    let (y_b, _) = dropped.forward_t(&x, None, true)?;
    dropped.set_seed(11);
    let (y_a2, _) = dropped.forward_t(&x, None, true)?;
    dropped.set_seed(12);
    let (y_c, _) = dropped.forward_t(&x, None, true)?;
    let wv = Var::from_tensor(&w)?;
    let tracked = Rnn::from_weight(RnnMode::Lstm, 64, 64, cfg, wv.as_tensor().clone())?;
    let (y, _) = tracked.forward_t(&x, None, true)?;
    let g = y.sqr()?.sum_all()?.backward()?;
    let gw = g
        .get(wv.as_tensor())
        .unwrap()
        .sqr()?
        .sum_all()?
        .to_scalar::<f32>()?;
    Ok(vec![
        (
            "inference ignores dropout".into(),
            rel_err(&y_inf, &y0)? == 0.0,
        ),
        ("training drops".into(), rel_err(&y_a, &y0)? > 1e-3),
        ("fresh masks every call".into(), rel_err(&y_a, &y_b)? > 1e-3),
        (
            "set_seed replays the masks".into(),
            rel_err(&y_a, &y_a2)? == 0.0,
        ),
        (
            "another seed draws other masks".into(),
            rel_err(&y_c, &y_a)? > 1e-3,
        ),
        (
            "backward through dropout is finite".into(),
            gw.is_finite() && gw > 0.0,
        ),
    ])
}

/// Every algorithm against the standard one on the same inputs (outputs and all gradients);
/// algorithms cuDNN refuses for a shape are reported, not failed. Returns table rows
/// `(case, algo, max rel err or refusal, ok)`.
fn check_algos(gpu: &Device, rng: &mut StdRng) -> Result<Vec<(String, String, String, bool)>> {
    use candle_cudnn_rnn::RnnAlgo;
    let shapes = [
        (RnnMode::Lstm, 1, false, 32, 30, 128),
        (RnnMode::Lstm, 2, false, 20, 35, 512),
        (RnnMode::Gru, 1, false, 64, 50, 256),
        (RnnMode::RnnTanh, 1, false, 16, 20, 128),
        (RnnMode::Lstm, 2, true, 8, 10, 64),
        (RnnMode::Lstm, 1, false, 128, 30, 1024),
        // A shape where PERSIST_STATIC was seen returning zeros with a success status.
        (RnnMode::Lstm, 1, false, 8, 20, 256),
        (RnnMode::Lstm, 2, false, 20, 35, 1500),
    ];
    let mut rows = Vec::new();
    for (k, &(mode, layers, bidir, batch, seq, hidden)) in shapes.iter().enumerate() {
        for dtype in [DType::F32, DType::F16] {
            let base = Case {
                state: k % 2 == 0,
                dtype,
                ..Case::new(mode, (layers, bidir), (batch, seq, hidden, hidden))
            };
            let dims = candle_cudnn_rnn::RnnDims::new(mode, hidden, hidden, &base.cfg());
            let k = 1.0 / (hidden as f64).sqrt();
            let on = |t: Tensor| -> Result<Tensor> { Ok(t.to_dtype(dtype)?.to_device(gpu)?) };
            let w = on(uniform(rng, &[dims.weight_count()], k)?)?;
            let x = on(uniform(rng, &[seq, batch, hidden], 1.0)?)?;
            let state_shape = dims.state_shape(batch);
            let st = on(uniform(rng, &state_shape, 0.5)?)?;
            let gy = on(uniform(rng, &[seq, batch, dims.output_size()], 1.0)?)?;
            let gs = on(uniform(rng, &state_shape, 1.0)?)?;
            let st = base.state.then_some(st);
            let with = |algo: RnnAlgo| -> Result<(Vec<Tensor>, Option<RnnAlgo>)> {
                let case = Case { algo, ..base };
                let out = run(&case, (&w, &x, st.as_ref()), None, &gy, &gs)?;
                let rnn = Rnn::from_weight(mode, hidden, hidden, case.cfg(), w.clone())?;
                // Without gradient tracking this is an inference call.
                let _ = rnn.forward_t(&x, None, false)?;
                Ok((out, rnn.auto_algo(seq, batch, false)))
            };
            let (reference, _) = with(RnnAlgo::Standard)?;
            let tol = if dtype == DType::F32 { 1e-4 } else { 2e-2 };
            let name = format!(
                "{mode:?} L{layers} {} B{batch} T{seq} H{hidden} {}",
                if bidir { "bi" } else { "uni" },
                dtype.as_str()
            );
            for algo in RnnAlgo::CONCRETE[1..].iter().chain(&[RnnAlgo::Auto]) {
                let (result, ok) = match with(*algo) {
                    Ok((out, picked)) => {
                        let mut e = 0f64;
                        for (a, b) in out.iter().zip(&reference) {
                            e = e.max(rel_err(a, b)?);
                        }
                        let picked = picked.map_or(String::new(), |a| format!(" (picked {a:?})"));
                        (format!("{e:.1e}{picked}"), e <= tol)
                    }
                    Err(e) => {
                        let msg = e.to_string();
                        let msg = msg.lines().next().unwrap_or("").to_string();
                        // Refusal is acceptable for the persistent kernels, never for Auto.
                        (format!("refused: {msg}"), *algo != RnnAlgo::Auto)
                    }
                };
                rows.push((name.clone(), format!("{algo:?}"), result, ok));
            }
        }
    }
    Ok(rows)
}

/// Device memory in use, from the driver.
/// One module used at once from one thread per GPU (cuda:0, cuda:1, ...), or from two threads
/// on cuda:0 when there is one GPU, each thread over its own copy of the weights
/// (`with_weight`) and its own inputs, with dropout between the layers: every thread's
/// dropout-free outputs and weight gradients agree with the CPU's f64 result. Returns
/// `(what ran, worst relative error)`.
fn check_devices(rng: &mut StdRng) -> Result<(String, f64)> {
    use candle_core::cuda_backend::cudarc::driver::CudaContext;
    let count = CudaContext::device_count()? as usize;
    let ordinals: Vec<usize> = if count >= 2 {
        (0..count).collect()
    } else {
        vec![0, 0]
    };
    let (input, hidden, seq, batch) = (24, 40, 9, 5);
    let cfg = RnnConfig {
        num_layers: 2,
        bidirectional: true,
        dropout: 0.3,
        ..Default::default()
    };
    let dims = candle_cudnn_rnn::RnnDims::new(RnnMode::Lstm, input, hidden, &cfg);
    let w = uniform(rng, &[dims.weight_count()], 0.2)?;
    let shared = Rnn::from_weight(RnnMode::Lstm, input, hidden, cfg, w.to_dtype(DType::F32)?)?;
    let xs: Vec<Tensor> = ordinals
        .iter()
        .map(|_| uniform(rng, &[seq, batch, input], 1.0))
        .collect::<Result<_>>()?;
    // y and dw of loss = Σ y² without dropout, and a training step with it, on `dev`.
    let step = |rnn: &Rnn, w: &Tensor, x: &Tensor| -> Result<(Tensor, Tensor)> {
        let wv = Var::from_tensor(w)?;
        let r = rnn.with_weight(wv.as_tensor().clone())?;
        let (_, _) = r.forward_t(x, None, true)?;
        let (y, _) = r.forward_t(x, None, false)?;
        let g = y.sqr()?.sum_all()?.backward()?;
        Ok((y, g.get(wv.as_tensor()).cloned().expect("dw")))
    };
    let errors = std::thread::scope(|scope| {
        let threads: Vec<_> = ordinals
            .iter()
            .zip(&xs)
            .map(|(&ordinal, x)| {
                let (shared, w, step) = (&shared, &w, &step);
                scope.spawn(move || -> Result<f64> {
                    let dev = Device::new_cuda(ordinal)?;
                    let (w32, x32) = (w.to_dtype(DType::F32)?, x.to_dtype(DType::F32)?);
                    let (w_dev, x_dev) = (w32.to_device(&dev)?, x32.to_device(&dev)?);
                    let mut got = step(shared, &w_dev, &x_dev)?;
                    for _ in 0..20 {
                        got = step(shared, &w_dev, &x_dev)?;
                    }
                    let cpu = Rnn::from_weight(RnnMode::Lstm, input, hidden, cfg, w.clone())?;
                    let want = step(&cpu, w, x)?;
                    Ok(rel_err(&got.0, &want.0)?.max(rel_err(&got.1, &want.1)?))
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a device thread panicked"))
            .collect::<Result<Vec<f64>>>()
    })?;
    let what = match count {
        1 => "one module, two threads on cuda:0".to_string(),
        n => format!("one module, one thread on each of cuda:0..{}", n - 1),
    };
    Ok((what, errors.into_iter().fold(0.0, f64::max)))
}

/// Runs `check_devices` and prints its line; returns whether it passed and its JSON row.
fn report_devices(rng: &mut StdRng) -> Result<(bool, serde_json::Value)> {
    let (what, e) = check_devices(rng)?;
    let ok = e <= 1e-5;
    let verdict = if ok { "ok" } else { "FAIL" };
    println!("devices: {what}: max rel err {e:.1e} {verdict}");
    Ok((ok, json!({"devices": what, "error": e, "ok": ok})))
}

fn used_memory() -> Result<usize> {
    let (free, total) = candle_core::cuda_backend::cudarc::driver::result::mem_get_info()?;
    Ok(total - free)
}

/// Device memory in use after a 256 MiB tensor was freed and the device synchronized, with
/// freed memory returned to the driver, then kept in the pool: `(base, released, kept)`.
fn check_freed_memory(gpu: &Device) -> Result<(usize, usize, usize)> {
    let after_free = |keep: bool| -> Result<usize> {
        candle_cudnn_rnn::keep_freed_memory(gpu, keep)?;
        gpu.synchronize()?;
        drop(Tensor::zeros(64 << 20, DType::F32, gpu)?);
        gpu.synchronize()?;
        used_memory()
    };
    candle_cudnn_rnn::keep_freed_memory(gpu, false)?;
    gpu.synchronize()?;
    let base = used_memory()?;
    let released = after_free(false)?;
    // Left on: the op's own default.
    let kept = after_free(true)?;
    Ok((base, released, kept))
}

/// Runs training steps and reports device memory after 10 and after `steps` steps.
fn check_memory(gpu: &Device, steps: usize) -> Result<(usize, usize)> {
    let cfg = RnnConfig {
        num_layers: 2,
        dropout: 0.3,
        ..Default::default()
    };
    let w = Var::from_tensor(&Tensor::rand(
        -0.05f32,
        0.05,
        2 * 4 * 512 * (512 + 512 + 2),
        gpu,
    )?)?;
    let rnn = Rnn::from_weight(RnnMode::Lstm, 512, 512, cfg, w.as_tensor().clone())?;
    let x = Tensor::randn(0f32, 1., (50, 64, 512), gpu)?;
    let mut state = rnn.zero_state(64)?;
    let mut after_warmup = 0;
    for i in 0..steps {
        let (y, st) = rnn.forward_t(&x, Some(&state), true)?;
        let grads = y.mean_all()?.backward()?;
        let g = grads.get(w.as_tensor()).unwrap();
        w.set(&(w.as_tensor() - (g * 1e-3)?)?)?;
        state = st.detach();
        if i == 9 {
            gpu.synchronize()?;
            after_warmup = used_memory()?;
        }
    }
    gpu.synchronize()?;
    Ok((after_warmup, used_memory()?))
}

/// The cuDNN op on PyTorch's recorded weights and inputs (f64 fixtures, run here in f32).
fn check_pytorch(gpu: &Device) -> Result<Vec<(String, f64)>> {
    // `--fixtures FILE` where the build's source tree is not at hand.
    let path = std::env::args()
        .skip_while(|a| a != "--fixtures")
        .nth(1)
        .unwrap_or_else(|| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/torch_rnn.json").into()
        });
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("reading the PyTorch fixtures {path}: {e}"))?;
    let v: serde_json::Value = serde_json::from_str(&text)?;
    let t = |j: &serde_json::Value| -> Option<Tensor> {
        let shape: Vec<usize> = j
            .get("shape")?
            .as_array()?
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let data: Vec<f32> = j["data"]
            .as_array()?
            .iter()
            .map(|d| d.as_f64().unwrap() as f32)
            .collect();
        Tensor::from_vec(data, shape, gpu).ok()
    };
    let mut out = Vec::new();
    for c in v["cases"].as_array().unwrap() {
        let n = |k: &str| c[k].as_u64().unwrap() as usize;
        let mode: RnnMode = c["mode"]
            .as_str()
            .unwrap_or("")
            .parse()
            .map_err(anyhow::Error::msg)?;
        let cfg = RnnConfig {
            num_layers: n("num_layers"),
            bias: c["bias"].as_bool().unwrap(),
            bidirectional: c["bidirectional"].as_bool().unwrap(),
            proj_size: c["proj_size"].as_u64().unwrap_or(0) as usize,
            ..Default::default()
        };
        let dims = candle_cudnn_rnn::RnnDims::new(mode, n("input_size"), n("hidden_size"), &cfg);
        let w =
            candle_cudnn_rnn::flat_from_named(&dims, |name, _| Ok(t(&c["params"][name]).unwrap()))?;
        let rnn = Rnn::from_weight(mode, n("input_size"), n("hidden_size"), cfg, w)?;
        let state = match t(&c["h0"]) {
            Some(h0) => Some(RnnState::new(&h0, t(&c["c0"]).as_ref())?),
            None => None,
        };
        let x = t(&c["x"]).unwrap();
        let (y, st) = match c["lengths"].as_array() {
            Some(l) => {
                let l: Vec<usize> = l.iter().map(|v| v.as_u64().unwrap() as usize).collect();
                rnn.forward_with_lengths(&x, &l, state.as_ref(), false)?
            }
            None => rnn.forward(&x, state.as_ref())?,
        };
        let e = rel_err(&y, &t(&c["y"]).unwrap())?.max(rel_err(&st.h()?, &t(&c["h_n"]).unwrap())?);
        out.push((c["name"].as_str().unwrap().to_owned(), e));
    }
    Ok(out)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let json_path = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let quick = args.iter().any(|a| a == "--quick");
    let gpu = Device::new_cuda(0)?;
    // `--seed N` replays a run's cases (its first line prints the seed it drew).
    let seed: u64 = match args.iter().position(|a| a == "--seed") {
        Some(i) => match args.get(i + 1).and_then(|v| v.parse().ok()) {
            Some(seed) => seed,
            None => bail!("--seed takes a whole number"),
        },
        None => rand::rng().random(),
    };
    let mut rng = StdRng::seed_from_u64(seed);
    println!("cuDNN {} | seed {seed}", cudnn_version());
    // `--devices` runs the several-GPU check alone (on a machine lent for it).
    if args.iter().any(|a| a == "--devices") {
        let (what, e) = check_devices(&mut rng)?;
        let ok = e <= 1e-5;
        println!(
            "devices: {what}: max rel err {e:.1e} {}",
            if ok { "ok" } else { "FAIL" }
        );
        if !ok {
            bail!("the several-GPU check failed");
        }
        return Ok(());
    }
    let mut failures = 0;
    let mut rows = Vec::new();
    let persistent_alone = args.iter().any(|a| a == "--persistent");
    let cells = match args.iter().position(|a| a == "--mode") {
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("lstm") => vec![RnnMode::Lstm],
            Some("gru") => vec![RnnMode::Gru],
            _ => bail!("--mode takes lstm or gru"),
        },
        None => vec![RnnMode::Lstm, RnnMode::Gru],
    };
    let dtypes = match args.iter().position(|a| a == "--dtype") {
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("bf16") => vec![DType::BF16],
            Some("f16") => vec![DType::F16],
            Some("tf32") => vec![DType::F32],
            _ => bail!("--dtype takes bf16, f16 or tf32"),
        },
        None => vec![DType::BF16, DType::F16, DType::F32],
    };
    println!("| persistent case | rel err vs f64 CPU | ok |");
    println!("|---|---|---|");
    // (Each row printed as it is checked.)
    let mut persistent_rows = persistent::Rows::default();
    let rows_of = (cells.as_slice(), dtypes.as_slice());
    persistent::check_persistent(&gpu, &mut rng, rows_of, &mut persistent_rows)?;
    persistent::check_dropout(&gpu, &mut rng, rows_of, &mut persistent_rows)?;
    for (case, result, ok) in persistent_rows.into_rows() {
        failures += usize::from(!ok);
        rows.push(json!({"persistent_case": case, "result": result, "ok": ok}));
    }
    println!();
    // The sinks (added into and written over) on cuDNN and on the persistent kernels.
    for (name, e, ok) in check_weight_grad_sink(&gpu)? {
        failures += usize::from(!ok);
        println!(
            "weight-gradient sink: {name}: {e:.1e} {}",
            if ok { "ok" } else { "FAIL" }
        );
        rows.push(json!({"weight_grad_sink": name, "error": e, "ok": ok}));
    }
    // The rows so far into `--json`'s file (written again, with every row, at the end).
    let write_json = |rows: &[serde_json::Value]| -> Result<()> {
        if let Some(p) = &json_path {
            let all = json!({"cudnn": cudnn_version(), "seed": seed, "rows": rows});
            std::fs::write(p, serde_json::to_string_pretty(&all)?)?;
        }
        Ok(())
    };
    if persistent_alone {
        write_json(&rows)?;
        if failures > 0 {
            bail!("{failures} persistent-kernel checks failed");
        }
        println!("persistent checks passed");
        return Ok(());
    }
    println!(
        "| mode | L | dir | bias | h0 | lengths | precision | B | T | I | H | P | y | state | dx | dw | dstate | ok |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for case in cases(&mut rng, quick) {
        let errs = check(&case, &gpu, &mut rng)?;
        let (tol_out, tol_grad) = case.tolerances();
        let (pad, errs) = errs.split_last().expect("padding entry");
        let ok = errs[..2].iter().all(|&e| e <= tol_out)
            && errs[2..].iter().all(|&e| e <= tol_grad)
            && *pad == 0.0;
        failures += usize::from(!ok);
        let fmt = |i: usize| errs.get(i).map_or("-".to_string(), |e| format!("{e:.1e}"));
        println!(
            "| {:?} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            case.mode,
            case.layers,
            if case.bidir { 2 } else { 1 },
            format!("{:?}", case.bias).to_lowercase(),
            case.state,
            if case.varlen { "var" } else { "full" },
            case.precision(),
            case.batch,
            case.seq,
            case.input,
            case.hidden,
            case.proj,
            fmt(0),
            fmt(1),
            fmt(2),
            fmt(3),
            fmt(4),
            if ok { "ok" } else { "FAIL" }
        );
        rows.push(json!({"case": format!("{case:?}"), "errors": errs, "padding": pad, "ok": ok}));
    }
    println!();
    for (name, e) in check_pytorch(&gpu)? {
        let ok = e <= 1e-5;
        failures += usize::from(!ok);
        println!(
            "pytorch fixture {name}: max rel err {e:.1e} {}",
            if ok { "ok" } else { "FAIL" }
        );
        rows.push(json!({"pytorch": name, "error": e, "ok": ok}));
    }
    println!("| algorithm case | algorithm | max rel err vs standard | ok |");
    println!("|---|---|---|---|");
    for (case, algo, result, ok) in check_algos(&gpu, &mut rng)? {
        failures += usize::from(!ok);
        println!(
            "| {case} | {algo} | {result} | {} |",
            if ok { "ok" } else { "FAIL" }
        );
        rows.push(json!({"algo_case": case, "algo": algo, "result": result, "ok": ok}));
    }
    let in_place = {
        let cfg = RnnConfig {
            num_layers: 2,
            ..Default::default()
        };
        let w = Tensor::zeros(2 * 4 * 1500 * (1500 + 1500 + 2), DType::F32, &gpu)?;
        let rnn = Rnn::from_weight(RnnMode::Lstm, 1500, 1500, cfg, w)?;
        rnn.forward(&Tensor::zeros((2, 2, 1500), DType::F32, &gpu)?, None)?;
        rnn.cudnn_weights_in_place()
    };
    println!("PTB-large LSTM (2 layers, 1500): cuDNN reads the weights in place: {in_place:?}");
    rows.push(json!({"ptb_large_weights_in_place": in_place}));
    for (name, ok) in check_dropout(&gpu)? {
        failures += usize::from(!ok);
        println!("dropout: {name}: {}", if ok { "ok" } else { "FAIL" });
        rows.push(json!({"dropout": name, "ok": ok}));
    }
    let (ok, row) = report_devices(&mut rng)?;
    failures += usize::from(!ok);
    rows.push(row);
    let (base, released, kept) = check_freed_memory(&gpu)?;
    // 256 MiB freed: back to the driver at the synchronization, or kept in the pool.
    let ok = released < base + (64 << 20) && kept >= base + (192 << 20);
    failures += usize::from(!ok);
    println!(
        "freed memory: {} MiB in use before, {} after freeing 256 MiB (released), {} (kept): {}",
        base >> 20,
        released >> 20,
        kept >> 20,
        if ok { "ok" } else { "FAIL" }
    );
    rows.push(json!({"freed_memory": [base, released, kept], "ok": ok}));
    let steps = if quick { 50 } else { 1000 };
    let (warm, end) = check_memory(&gpu, steps)?;
    let grew = end.saturating_sub(warm);
    let ok = grew <= 16 << 20;
    failures += usize::from(!ok);
    println!(
        "memory: {} MiB after 10 steps, {} MiB after {steps}: {}",
        warm >> 20,
        end >> 20,
        if ok { "ok" } else { "FAIL" }
    );
    rows.push(json!({"memory_after_10": warm, "memory_after": end, "steps": steps, "ok": ok}));
    write_json(&rows)?;
    if failures > 0 {
        bail!("{failures} checks failed");
    }
    println!("all checks passed");
    Ok(())
}
