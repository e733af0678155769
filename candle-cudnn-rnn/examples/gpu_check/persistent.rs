//! `RnnAlgo::Persistent` (the crate's own persistent kernels, LSTM and GRU) against the CPU op
//! in f64 on the same rounded inputs, with cuDNN's standard algorithm's errors beside them (and
//! the larger of the ratios ours / cuDNN's), on fresh
//! random inputs and shapes that exercise the kernels' edges (batch 1, batches that do not
//! fill a tensor-core tile, hidden sizes that do not fill a block or a K step, several layers,
//! PTB large and medium): in inference mode the outputs and final states; in training mode
//! those and the
//! gradients of the input, the weights (the biases' also alone) and the initial state, and
//! with the input untracked (the kernels then skip its gradient) the others. A row passes only
//! if the persistent kernels themselves served the call, in bf16 and f16 within 2e-2 and, where
//! cuDNN's error on the same inputs stands beside it, within twice that. f32 with TF32 products
//! (`MathMode::Tf32`) too, up to hidden 1024, within twice cuDNN's TF32 errors.
//! `RnnAlgo::Auto`, which measures the kernels against cuDNN's algorithms, is checked on the same
//! inputs whichever it picks (the row says which). Inter-layer dropout (`check_dropout`, both
//! cells, f16 and TF32): masks that repeat after the seed is set again and change from call to
//! call, and gradients through them against central finite differences.

use crate::{rel_err, uniform};
use anyhow::Result;
use candle_core::{DType, Device, Tensor, Var};
use candle_cudnn_rnn::{MathMode, Rnn, RnnAlgo, RnnConfig, RnnMode, RnnState};
use rand::rngs::StdRng;

/// Relative L2 error allowed in bf16/f16 (the bound for half precision).
const TOL: f64 = 2e-2;

/// In bf16/f16 the persistent kernels' errors are also at most this many times cuDNN's standard
/// algorithm's on the same inputs and dtype (issue 33's bound for the cells' kernels; the
/// largest ratio in `results/2026-11-29-h200-one-block/logs/gpu_check.log` was 1.10).
const HALF_MOST_OVER_CUDNN: f64 = 2.0;

/// f32 with TF32 products (`MathMode::Tf32`): errors at most twice cuDNN's with TF32 math on the
/// same inputs, or this (TF32 rounds to 10 mantissa bits, about 5e-4 relative).
const TF32_FLOOR: f64 = 1e-3;

/// The largest hidden size of the shapes below whose TF32 layers train on the kernels (f32
/// tiles take twice the bytes: at 1024 the forward's blocks fit only in clusters of 2 that split
/// K, and past batch 32 only since the training forward multiplies scaled f16 operands,
/// `results/2026-12-01-h200-tf32-scaled-training/`): larger ones (PTB large's 1500) run their
/// TF32 inference rows only, on scaled f16 operands.
const TF32_MAX_HIDDEN: usize = 1024;

/// Whether an error `e` passes against cuDNN's on the same inputs (`theirs`): in bf16 and f16
/// within [`TOL`] and [`HALF_MOST_OVER_CUDNN`] times `theirs`, in TF32 (`tf32`) within twice
/// `theirs` or [`TF32_FLOOR`].
fn passes(e: f64, theirs: f64, tf32: bool) -> bool {
    match tf32 {
        true => e <= (2.0 * theirs).max(TF32_FLOOR),
        false => e <= TOL && e <= HALF_MOST_OVER_CUDNN * theirs,
    }
}

/// The largest batch the kernels train (in chunks of 32, as the inference).
const TRAINING_MAX_BATCH: usize = 256;

/// `(y, packed state)` of an inference forward of the cell of `mode` that `cfg` describes.
fn forward(
    (mode, cfg): (RnnMode, RnnConfig),
    (input, hidden): (usize, usize),
    w: &Tensor,
    x: &Tensor,
    s: Option<&Tensor>,
) -> Result<(Rnn, [Tensor; 2])> {
    let rnn = Rnn::from_weight(mode, input, hidden, cfg, w.clone())?;
    let state = s.map(|s| RnnState::from_packed(s.clone()));
    let (y, st) = rnn.forward_t(x, state.as_ref(), false)?;
    Ok((rnn, [y, st.packed().clone()]))
}

fn as5(v: &[Tensor]) -> [&Tensor; 5] {
    [&v[0], &v[1], &v[2], &v[3], &v[4]]
}

/// `[y, state, dx, dw, dstate]` of loss = Σ y·gy + Σ state·gs, training mode, dropout (if
/// any) from a fresh seed (the masks `loss` draws); with `track_x` false x is no variable and
/// `dx` is zeros (none may come back).
fn train(
    (mode, cfg): (RnnMode, RnnConfig),
    (input, hidden): (usize, usize),
    [w, x, s, gy, gs]: [&Tensor; 5],
    track_x: bool,
) -> Result<(Rnn, Vec<Tensor>)> {
    let (wv, sv) = (Var::from_tensor(w)?, Var::from_tensor(s)?);
    let x = match track_x {
        true => Var::from_tensor(x)?.as_tensor().clone(),
        false => x.clone(),
    };
    let rnn = Rnn::from_weight(mode, input, hidden, cfg, wv.as_tensor().clone())?;
    rnn.set_seed(7);
    let state = RnnState::from_packed(sv.as_tensor().clone());
    let (y, st) = rnn.forward_t(&x, Some(&state), true)?;
    let loss = ((&y * gy)?.sum_all()? + (st.packed() * gs)?.sum_all()?)?;
    let grads = loss.backward()?;
    let dx = match (track_x, grads.get(&x)) {
        (true, Some(dx)) => dx.clone(),
        (false, None) => x.zeros_like()?,
        (_, got) => anyhow::bail!("x tracked: {track_x}, its gradient came: {}", got.is_some()),
    };
    let mut out = vec![y, st.packed().clone(), dx];
    for v in [&wv, &sv] {
        out.push(grads.get(v.as_tensor()).cloned().expect("a gradient"));
    }
    Ok((rnn, out))
}

/// The largest of ours' errors over cuDNN's on the same quantities.
fn worst_ratio(ours: &[f64], cudnn: &[f64]) -> f64 {
    ours.iter()
        .zip(cudnn)
        .map(|(a, b)| a / b.max(1e-30))
        .fold(0.0, f64::max)
}

/// The checks' rows (name, result, ok), each printed as a table row as soon as it is added, so
/// that a run cut short (by a time limit, or an error) keeps the rows done so far.
#[derive(Default)]
pub struct Rows(Vec<(String, String, bool)>);

impl Rows {
    fn push(&mut self, (case, result, ok): (String, String, bool)) {
        println!("| {case} | {result} | {} |", if ok { "ok" } else { "FAIL" });
        self.0.push((case, result, ok));
    }

    /// The rows added, in order.
    pub fn into_rows(self) -> Vec<(String, String, bool)> {
        self.0
    }
}

/// One row per (cell of `cells`, shape, dtype of `dtypes`, mode) into `rows` (f32: in TF32).
pub fn check_persistent(
    gpu: &Device,
    rng: &mut StdRng,
    (cells, dtypes): (&[RnnMode], &[DType]),
    rows: &mut Rows,
) -> Result<()> {
    for &mode in cells {
        check_cell(gpu, rng, (mode, dtypes), rows)?;
    }
    Ok(())
}

/// The rows of one cell in `dtypes`.
fn check_cell(
    gpu: &Device,
    rng: &mut StdRng,
    (mode, dtypes): (RnnMode, &[DType]),
    rows: &mut Rows,
) -> Result<()> {
    // (layers, batch, seq, input, hidden)
    let shapes = [
        (1, 5, 7, 32, 64),
        (1, 1, 3, 100, 200),
        (2, 17, 12, 96, 130),
        // An odd input size: rows copied one element at a time; 66 hidden: two at a time.
        (2, 3, 5, 33, 66),
        (1, 32, 50, 256, 512),
        (3, 32, 30, 512, 1024),
        (2, 20, 35, 1500, 1500),
        // PTB medium's and a three-layer stack: small enough for the forward's wavefront
        // (layer by layer with `CANDLE_RNN_PERSISTENT_WAVE=0`).
        (2, 20, 35, 650, 650),
        (3, 20, 35, 200, 200),
        // One step through a stack: each wavefront's first and last steps at once.
        (3, 2, 1, 24, 48),
        // Four layers (the deepest wavefront, `wave.rs`) at an odd batch of 7.
        (4, 7, 5, 48, 64),
        // A wavefront whose blocks do their gate math in two rounds (batch x units past the
        // threads).
        (3, 32, 12, 256, 512),
        // Batches of several chunks of 32: the grid's 128, the largest (256), an odd batch
        // whose last chunk ends early.
        (1, 128, 30, 512, 1024),
        (1, 256, 10, 64, 512),
        // Batch 128 at hidden 128 and 64: 16 batch groups of 8 in half precision (4 in TF32),
        // each in one cluster (`rules.rs`'s `shape_groups`), of wider blocks where 16 clusters
        // would share multiprocessors (`reg_gates_units`: 6 blocks of 24 and of 12 units on an
        // H200).
        (1, 128, 8, 64, 128),
        (1, 128, 6, 48, 64),
        // Batch 256 at hidden 128: 16 groups of 16, where the default infers on ours past batch
        // 128 (`choose.rs`'s `ours_lead_in_groups`).
        (1, 256, 6, 64, 128),
        (2, 77, 12, 96, 200),
        // A training stack of three layers past batch 64: in batch groups, layer by layer
        // (`rules.rs`'s `shape_groups`; its inference in one group, as a wavefront).
        (3, 96, 6, 64, 128),
        // Inference on the wgmma forward's 16-unit blocks (`rules.rs`'s `shape_wgmma_units`):
        // two groups of 32 at hidden 1024 (one at batch 32: the row of 3 x 1024 above), three
        // and four at 512; their training at 1024 and at [*, 128, 512] on its 32-unit blocks
        // (the backward layer by layer).
        (1, 64, 10, 96, 1024),
        (1, 96, 6, 64, 512),
        (1, 128, 8, 64, 512),
        // Three layers of 512 at batch 128: one wgmma wavefront (two subgroups a block, clusters
        // of 2; `rules.rs`'s `shape_wgmma_wave`), training and inference; TF32 layer by layer.
        (3, 128, 8, 64, 512),
        // Three layers of 1024 at batch 128: both wgmma kernels layer by layer
        // (`rules.rs`'s `shape_wgmma_training`; eagerly the default's too, `choose.rs`'s
        // `wgmma_leads`).
        (3, 128, 6, 256, 1024),
        // Where the default's rules past 512 lead with ours: a TF32 stack of 768 at batch 128
        // (eagerly, `choose.rs`'s `ours_lead_tf32`), a GRU stack of 512 at batch 192 (graphed
        // inference, `ours_lead_wide_batch_stack`).
        (3, 128, 5, 64, 768),
        (2, 192, 5, 64, 512),
    ];
    // Bidirectional layers (`persistent/units.rs`): the grid's hidden 128 at batches 32 and 128
    // (batch groups), a stack whose sizes need padded rows (the upper layers' input is 2 x 130),
    // two layers of 128 at batch 32 (each planned as one layer: `persistent/mod.rs`'s
    // `planned_layers`), and three layers of 512 at batch 32.
    let bidirectional = [
        (1, 32, 30, 128, 128),
        (1, 128, 30, 128, 128),
        (2, 17, 12, 96, 130),
        (2, 32, 30, 128, 128),
        (3, 32, 12, 256, 512),
    ];
    let every = (shapes.iter().map(|s| (*s, false))).chain(bidirectional.map(|s| (s, true)));
    for (k, ((layers, batch, seq, input, hidden), bidirectional)) in every.enumerate() {
        let directions = if bidirectional { 2 } else { 1 };
        for &dtype in dtypes {
            // f32 in TF32.
            let tf32 = dtype == DType::F32;
            // Those the kernels infer only (as scaled f16 operands, whose tiles fit where f32
            // ones do not).
            let inference_only = tf32 && hidden > TF32_MAX_HIDDEN;
            let cfg = |algo| {
                let cfg = RnnConfig {
                    num_layers: layers,
                    bidirectional,
                    algo,
                    math: if tf32 { MathMode::Tf32 } else { MathMode::Fp32 },
                    ..Default::default()
                };
                (mode, cfg)
            };
            let dims =
                candle_cudnn_rnn::RnnDims::new(mode, input, hidden, &cfg(RnnAlgo::Standard).1);
            let scale = 1.0 / (hidden as f64).sqrt();
            let round = |t: Tensor| t.to_dtype(dtype);
            let w = round(uniform(rng, &[dims.weight_count()], scale)?)?;
            let x = round(uniform(rng, &[seq, batch, input], 1.0)?)?;
            let s = round(uniform(rng, &dims.state_shape(batch), 0.5)?)?;
            // Every other shape starts from zeros (no state given).
            let s = (k % 2 == 1).then_some(s);
            let f64s = |t: &Tensor| t.to_dtype(DType::F64);
            let s64 = s.as_ref().map(f64s).transpose()?;
            let sizes = (input, hidden);
            let (_, reference) = forward(
                cfg(RnnAlgo::Standard),
                sizes,
                &f64s(&w)?,
                &f64s(&x)?,
                s64.as_ref(),
            )?;
            let sg = s.as_ref().map(|s| s.to_device(gpu)).transpose()?;
            let (wg, xg) = (w.to_device(gpu)?, x.to_device(gpu)?);
            let (rnn, ours) = forward(cfg(RnnAlgo::Persistent), sizes, &wg, &xg, sg.as_ref())?;
            let served = rnn.auto_algo(seq, batch, false);
            let (_, cudnn) = forward(cfg(RnnAlgo::Standard), sizes, &wg, &xg, sg.as_ref())?;
            let err = |got: &[Tensor; 2]| -> Result<f64> {
                Ok(rel_err(&got[0], &reference[0])?.max(rel_err(&got[1], &reference[1])?))
            };
            let (e, e_cudnn) = (err(&ours)?, err(&cudnn)?);
            let ok = served == Some(RnnAlgo::Persistent) && passes(e, e_cudnn, tf32);
            let cell = format!("{mode:?}").to_uppercase();
            let name = format!(
                "{cell} L{layers}{} B{batch} T{seq} I{input} H{hidden} {}",
                if bidirectional { " bi" } else { "" },
                if tf32 { "tf32" } else { dtype.as_str() }
            );
            rows.push((
                format!("{name} inference, h0 {}", s.is_some()),
                format!(
                    "persistent {e:.1e}, cuDNN standard {e_cudnn:.1e} (ratio {:.2}), served by \
                     {served:?}",
                    worst_ratio(&[e], &[e_cudnn])
                ),
                ok,
            ));
            let (rnn, auto) = forward(cfg(RnnAlgo::Auto), sizes, &wg, &xg, sg.as_ref())?;
            let (e, chose) = (err(&auto)?, rnn.auto_algo(seq, batch, false));
            rows.push((
                format!("{name} inference, Auto"),
                format!("{e:.1e}, chose {chose:?}"),
                e <= TOL && chose.is_some(),
            ));

            if batch > TRAINING_MAX_BATCH || inference_only {
                continue;
            }
            // Training: outputs and every gradient.
            let s = round(uniform(rng, &dims.state_shape(batch), 0.5)?)?;
            let gy = round(uniform(rng, &[seq, batch, directions * hidden], 1.0)?)?;
            let gs = round(uniform(rng, &dims.state_shape(batch), 1.0)?)?;
            let inputs = [&w, &x, &s, &gy, &gs];
            let on64: Vec<Tensor> = inputs
                .iter()
                .map(|t| f64s(t))
                .collect::<candle_core::Result<_>>()?;
            let ongpu: Vec<Tensor> = inputs
                .iter()
                .map(|t| t.to_device(gpu))
                .collect::<candle_core::Result<_>>()?;
            let (_, reference) = train(cfg(RnnAlgo::Standard), sizes, as5(&on64), true)?;
            let (rnn, ours) = train(cfg(RnnAlgo::Persistent), sizes, as5(&ongpu), true)?;
            let served = rnn.auto_algo(seq, batch, true);
            let (_, cudnn) = train(cfg(RnnAlgo::Standard), sizes, as5(&ongpu), true)?;
            // The biases' gradients (the flat weight's tail) also alone: in the whole of dw
            // their share of the norm is a few percent at most.
            let biases = dims.block(0, 0).b_ih.expect("a cell with biases");
            let tail = |t: &Tensor| t.narrow(0, biases, dims.weight_count() - biases);
            let errs = |got: &[Tensor]| -> Result<Vec<f64>> {
                let mut e = got
                    .iter()
                    .zip(&reference)
                    .map(|(a, b)| rel_err(a, b))
                    .collect::<Result<Vec<_>>>()?;
                e.push(rel_err(&tail(&got[3])?, &tail(&reference[3])?)?);
                Ok(e)
            };
            let (e, e_cudnn) = (errs(&ours)?, errs(&cudnn)?);
            let within = |(&e, &theirs): (&f64, &f64)| passes(e, theirs, tf32);
            let ok = served == Some(RnnAlgo::Persistent) && e.iter().zip(&e_cudnn).all(within);
            let fmt = |v: &[f64]| {
                v.iter()
                    .map(|e| format!("{e:.1e}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            rows.push((
                format!("{name} training (y, state, dx, dw, dstate, db)"),
                format!(
                    "persistent {}, cuDNN standard {} (worst ratio {:.2}), served by {served:?}",
                    fmt(&e),
                    fmt(&e_cudnn),
                    worst_ratio(&e, &e_cudnn)
                ),
                ok,
            ));
            // x untracked: no dx comes back, the other gradients are unchanged.
            let (rnn, frozen) = train(cfg(RnnAlgo::Persistent), sizes, as5(&ongpu), false)?;
            let served = rnn.auto_algo(seq, batch, true);
            let e = errs(&frozen)?;
            let (e, e_y) = (vec![e[3], e[4], e[5]], e[0]);
            rows.push((
                format!("{name} training, x untracked (dw, dstate, db)"),
                format!("{}, y {e_y:.1e}, served by {served:?}", fmt(&e)),
                served == Some(RnnAlgo::Persistent) && e.iter().chain([&e_y]).all(|&e| e <= TOL),
            ));
            // Three fresh modules, each choosing anew: a choice that is right only on a
            // clean workspace (cuDNN's persistent backward in f16 at batch 1 gave infinite
            // gradients in some real calls) fails one of them.
            for round in 1..=3 {
                let (rnn, auto) = train(cfg(RnnAlgo::Auto), sizes, as5(&ongpu), true)?;
                let (e, chose) = (errs(&auto)?, rnn.auto_algo(seq, batch, true));
                rows.push((
                    format!("{name} training, Auto ({round}/3)"),
                    format!("{}, chose {chose:?}", fmt(&e)),
                    e.iter().all(|&e| e <= TOL) && chose.is_some(),
                ));
            }
        }
    }
    Ok(())
}

/// The largest absolute difference between `p` and `q`, in f64.
fn max_diff(p: &Tensor, q: &Tensor) -> Result<f64> {
    let d = (p.to_dtype(DType::F64)? - q.to_dtype(DType::F64)?)?;
    Ok(d.abs()?.flatten_all()?.max(0)?.to_scalar::<f64>()?)
}

/// Σ y·gy + Σ state·gs in f64 of a training-mode forward (dropout on) from a fresh seed.
fn loss(rnn: &Rnn, x: &Tensor, s: &Tensor, gy: &Tensor, gs: &Tensor) -> Result<f64> {
    rnn.set_seed(7);
    let (y, st) = rnn.forward_t(x, Some(&RnnState::from_packed(s.clone())), true)?;
    let f = |a: &Tensor, b: &Tensor| -> Result<f64> {
        let a = a.to_device(&Device::Cpu)?.to_dtype(DType::F64)?;
        let b = b.to_device(&Device::Cpu)?.to_dtype(DType::F64)?;
        Ok((a * b)?.sum_all()?.to_scalar::<f64>()?)
    };
    Ok(f(&y, gy)? + f(st.packed(), gs)?)
}

/// The dropout checks' rows into `rows`.
pub fn check_dropout(
    gpu: &Device,
    rng: &mut StdRng,
    (cells, dtypes): (&[RnnMode], &[DType]),
    rows: &mut Rows,
) -> Result<()> {
    for &mode in cells {
        // f16, and f32 with TF32 products (stacks that the default gives the kernels), where
        // `dtypes` has them.
        for (dtype, math) in [(DType::F16, MathMode::Fp32), (DType::F32, MathMode::Tf32)] {
            if dtypes.contains(&dtype) {
                check_cell_dropout(gpu, rng, (mode, dtype, math), rows)?;
            }
        }
    }
    if cells.contains(&RnnMode::Lstm) && dtypes.contains(&DType::BF16) {
        rows.push(check_ptb_large_repeats(gpu, rng)?);
    }
    Ok(())
}

/// Masks and gradients through them on the cell of `mode`, in `dtype` with `math`.
fn check_cell_dropout(
    gpu: &Device,
    rng: &mut StdRng,
    (mode, dtype, math): (RnnMode, DType, MathMode),
    rows: &mut Rows,
) -> Result<()> {
    let (layers, batch, seq, input, hidden) = (3, 4, 5, 32, 64);
    let cfg = RnnConfig {
        num_layers: layers,
        dropout: 0.5,
        algo: RnnAlgo::Persistent,
        math,
        ..Default::default()
    };
    let dims = candle_cudnn_rnn::RnnDims::new(mode, input, hidden, &cfg);
    let scale = 1.0 / (hidden as f64).sqrt();
    let on = |t: Tensor| -> Result<Tensor> { Ok(t.to_dtype(dtype)?.to_device(gpu)?) };
    let w = on(uniform(rng, &[dims.weight_count()], scale)?)?;
    let x = on(uniform(rng, &[seq, batch, input], 1.0)?)?;
    let s = on(uniform(rng, &dims.state_shape(batch), 0.5)?)?;
    let gy = on(uniform(rng, &[seq, batch, hidden], 1.0)?)?;
    let gs = on(uniform(rng, &dims.state_shape(batch), 1.0)?)?;
    let sizes = (input, hidden);
    let cell = format!("{mode:?}").to_uppercase();
    let precision = match math {
        MathMode::Tf32 => "tf32",
        _ => dtype.as_str(),
    };
    let name = format!("{cell} L{layers} B{batch} T{seq} H{hidden} {precision} p=0.5");

    // The same seed draws the same masks; the next call draws others.
    let rnn = Rnn::from_weight(mode, input, hidden, cfg, w.clone())?;
    let run = |rnn: &Rnn| -> Result<Tensor> {
        let (y, _) = rnn.forward_t(&x, Some(&RnnState::from_packed(s.clone())), true)?;
        Ok(y.to_dtype(DType::F64)?)
    };
    // Four calls from the seed, twice: each call's masks repeat, consecutive calls differ.
    let calls = |rnn: &Rnn| -> Result<Vec<Tensor>> {
        rnn.set_seed(7);
        (0..4).map(|_| run(rnn)).collect()
    };
    let (first, again) = (calls(&rnn)?, calls(&rnn)?);
    let mut same = 0f64;
    let mut other = f64::INFINITY;
    for k in 0..4 {
        same = same.max(max_diff(&first[k], &again[k])?);
        if k > 0 {
            other = other.min(max_diff(&first[k], &first[k - 1])?);
        }
    }
    let served = rnn.auto_algo(seq, batch, true);
    rows.push((
        format!("{name}: masks"),
        format!(
            "4 calls from the seed, twice: max diff {same:.1e}; consecutive calls differ by at \
             least {other:.1e}; served by {served:?}"
        ),
        same == 0.0 && other > 0.0 && served == Some(RnnAlgo::Persistent),
    ));

    // Gradients through the masks: the weight's along a direction, against central
    // differences of the loss (the perturbed weights rounded to the dtype, their real
    // difference used). The direction is half random, half along dw: a random one alone can be nearly
    // orthogonal to dw, and the relative error of a tiny derivative says nothing (seen: 3.7e-2
    // at a derivative of 7e-3).
    let (_, got) = train((mode, cfg), sizes, [&w, &x, &s, &gy, &gs], true)?;
    let dw = got[3].to_device(&Device::Cpu)?.to_dtype(DType::F64)?;
    let w64 = w.to_device(&Device::Cpu)?.to_dtype(DType::F64)?;
    let norm = |t: &Tensor| -> Result<f64> { Ok(t.sqr()?.sum_all()?.sqrt()?.to_scalar::<f64>()?) };
    let r = uniform(rng, &[dims.weight_count()], 0.02 * scale)?;
    let along = (&dw * (norm(&r)? / norm(&dw)?.max(1e-30)))?;
    let v = ((r + along)? * std::f64::consts::FRAC_1_SQRT_2)?;
    let plus = (&w64 + &v)?.to_dtype(dtype)?;
    let minus = (&w64 - &v)?.to_dtype(dtype)?;
    let step = (plus.to_dtype(DType::F64)? - minus.to_dtype(DType::F64)?)?;
    let at = |w: &Tensor| -> Result<f64> {
        let r = Rnn::from_weight(mode, input, hidden, cfg, w.to_device(gpu)?)?;
        loss(&r, &x, &s, &gy, &gs)
    };
    let fd = at(&plus)? - at(&minus)?;
    let analytic = (&dw * &step)?.sum_all()?.to_scalar::<f64>()?;
    let e = (fd - analytic).abs() / analytic.abs().max(1e-12);
    rows.push((
        format!("{name}: dw vs finite differences"),
        format!("directional derivative {analytic:.4e}, differences {fd:.4e}, rel err {e:.1e}"),
        e <= 1e-2,
    ));
    Ok(())
}

/// PTB large's LSTM as ptb-lm trains it (single bias, p = 0.65, bf16): two identical training
/// calls give identical bits.
fn check_ptb_large_repeats(gpu: &Device, rng: &mut StdRng) -> Result<(String, String, bool)> {
    let cfg = RnnConfig {
        num_layers: 2,
        dropout: 0.65,
        single_bias: true,
        algo: RnnAlgo::Persistent,
        ..Default::default()
    };
    let (batch, seq, h) = (20, 35, 1500);
    let dims = candle_cudnn_rnn::RnnDims::new(RnnMode::Lstm, h, h, &cfg);
    let on = |t: Tensor| -> Result<Tensor> { Ok(t.to_dtype(DType::BF16)?.to_device(gpu)?) };
    let inputs = [
        on(uniform(rng, &[dims.weight_count()], 0.04)?)?,
        on(uniform(rng, &[seq, batch, h], 1.0)?)?,
        on(uniform(rng, &dims.state_shape(batch), 0.5)?)?,
        on(uniform(rng, &[seq, batch, h], 1.0)?)?,
        on(uniform(rng, &dims.state_shape(batch), 1.0)?)?,
    ];
    let lstm = (RnnMode::Lstm, cfg);
    let (rnn, first) = train(lstm, (h, h), as5(&inputs), true)?;
    let (_, second) = train(lstm, (h, h), as5(&inputs), true)?;
    let mut worst = 0f64;
    for (a, b) in first.iter().zip(&second) {
        worst = worst.max(max_diff(a, b)?);
    }
    let served = rnn.auto_algo(seq, batch, true);
    Ok((
        "LSTM L2 B20 T35 H1500 bf16 single bias p=0.65: the same training call twice".into(),
        format!("max diff over y, state, dx, dw, dstate {worst:.1e}; served by {served:?}"),
        worst == 0.0 && served == Some(RnnAlgo::Persistent),
    ))
}
