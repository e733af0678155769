//! A module's calls captured into a CUDA graph after eager warm-up calls, as bench_grid and
//! ptb-lm capture them: the default (`Heuristic`) gives both the kernel its rules name for the
//! module's `Launch` (past batch 32 they differ), and the graph's replay gives the eager call's
//! outputs and gradients.

use super::*;
use candle_core::cuda_backend::cudarc::driver::sys;
use candle_core::DType::BF16;

/// A cudarc error as candle's.
fn driver(e: impl std::fmt::Debug) -> candle_core::Error {
    candle_core::Error::Msg(format!("CUDA graph: {e:?}"))
}

/// `f` run eagerly, then captured on `device`'s stream (relaxed, as bench_grid and ptb-lm
/// capture) and the graph launched once and waited for: what each returned (the second,
/// tensors the replay filled). Candle's cache of kernel parameters is on from the eager run,
/// which fills it, so that the graph keeps parameters that outlive the capture.
fn eager_then_replayed<T>(
    device: &Device,
    mut f: impl FnMut() -> candle_core::Result<T>,
) -> candle_core::Result<(T, T)> {
    let Device::Cuda(cuda) = device else {
        candle_core::bail!("a capture needs a CUDA device")
    };
    let _cache = cuda.enable_cuda_graph_htod_cache();
    let eager = f()?;
    device.synchronize()?;
    let stream = cuda.cuda_stream();
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .map_err(driver)?;
    let body = f();
    if body.is_err() {
        // An error left in the context would stop cudarc from ending the capture.
        let _ = stream.context().check_err();
    }
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    let out = body?;
    let graph = graph
        .map_err(driver)?
        .ok_or_else(|| driver("nothing captured"))?;
    graph.launch().map_err(driver)?;
    device.synchronize()?;
    Ok((eager, out))
}

/// One call of `rnn` (over the weight `w`, a variable in training) on `inputs`: the output
/// and, in training, `[dx, dw]` of Σ y·gy.
fn call(rnn: &Rnn, w: &Var, inputs: &Inputs, train: bool) -> candle_core::Result<Vec<Tensor>> {
    if !train {
        return Ok(vec![rnn.forward_t(&inputs.x, None, false)?.0]);
    }
    let x = Var::from_tensor(&inputs.x)?;
    let (y, _) = rnn.forward_t(x.as_tensor(), None, true)?;
    let grads = candle_cudnn_rnn::backward(&(&y * &inputs.gy)?.sum_all()?)?;
    let g = |v: &Var| {
        grads
            .get(v.as_tensor())
            .cloned()
            .ok_or_else(|| driver("a gradient is missing"))
    };
    Ok(vec![y, g(&x)?, g(w)?])
}

#[test]
fn graphed_modules_replay_their_eager_calls_on_their_rules_kernels() {
    let case = |mode, (layers, hidden, dropout), (train, launch), want| {
        let shape = Shape {
            mode,
            cfg: RnnConfig {
                num_layers: layers,
                dropout,
                launch,
                ..Default::default()
            },
            batch: 128,
            seq: 4,
            input: hidden,
            hidden,
        };
        (shape, train, want)
    };
    let (eager, graphed) = (Launch::Eager, Launch::Graphed);
    let (ours, standard) = (RnnAlgo::Persistent, RnnAlgo::Standard);
    // The rules' kernels at batch 128 (`choose.rs`'s tests say why).
    let cases = [
        case(RnnMode::Gru, (1, 512, 0.0), (false, graphed), ours),
        case(RnnMode::Gru, (1, 512, 0.0), (false, eager), ours),
        case(RnnMode::Gru, (1, 256, 0.0), (true, graphed), ours),
        case(RnnMode::Gru, (1, 256, 0.0), (true, eager), ours),
        case(RnnMode::Gru, (1, 1024, 0.0), (true, graphed), ours),
        case(RnnMode::Lstm, (2, 1024, 0.0), (true, graphed), standard),
        case(RnnMode::Lstm, (3, 1024, 0.0), (true, eager), ours),
        case(RnnMode::Gru, (4, 1024, 0.0), (true, eager), ours),
        case(RnnMode::Gru, (4, 1024, 0.0), (true, graphed), standard),
        case(RnnMode::Lstm, (3, 512, 0.0), (true, graphed), ours),
        case(RnnMode::Lstm, (3, 512, 0.0), (true, eager), ours),
        case(RnnMode::Gru, (3, 512, 0.0), (false, graphed), ours),
    ];
    check_each(
        "graphed_modules_replay_their_eager_calls_on_their_rules_kernels",
        cases,
        |gpu, (shape, train, want), rng, verdicts| {
            let name = format!("{} train {train} {:?}", shape.name(), shape.cfg.launch);
            let inputs = Inputs::random(&shape, false, BF16, rng).to(&gpu.device, BF16);
            let w = Var::from_tensor(&inputs.w).expect("a variable");
            let rnn = match train {
                true => shape.rnn(w.as_tensor()),
                false => shape.rnn(&inputs.w),
            };
            let mut algos = Vec::new();
            let both = eager_then_replayed(&gpu.device, || {
                let out = call(&rnn, &w, &inputs, train);
                algos.push(rnn.last_algo());
                out
            });
            let (warm, replayed) = match both {
                Ok(r) => r,
                Err(e) => {
                    verdicts.require(false, || format!("{name}: a call failed: {e}"));
                    return;
                }
            };
            let warm_algo = algos[0];
            let algo = rnn.last_algo();
            verdicts.require(warm_algo == Some(want) && algo == Some(want), || {
                format!("{name}: eager {warm_algo:?}, captured {algo:?}, the rules name {want:?}")
            });
            // The same kernels on the same inputs: equal but for the order of sums.
            let what = ["y", "dx", "dw"];
            let rows: Vec<_> = (0..warm.len())
                .map(|i| (what[i], rel_err(&replayed[i], &warm[i]), 1e-3))
                .collect();
            verdicts.case(&name, &rows);
        },
    );
}
