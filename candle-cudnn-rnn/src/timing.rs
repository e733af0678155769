//! How `RnnAlgo::Auto` times a candidate kernel: a call captured once as a CUDA graph and
//! replayed, each replay ended by a synchronization, so that the time is the device's and not
//! that of the host's launches. Timed eagerly instead, cuDNN's persistent kernels (a few
//! launches a call) beat its `Standard` algorithm (several launches a step) where on the device
//! they take twice as long (f16 LSTM [200, 128, 3 x 512]: `PersistStatic` picked at 139 µs an
//! example against `Standard`'s 56, `results/2026-11-25-h100-plain-api/`); the benchmarks and
//! `RnnAlgo::Heuristic`'s rules time graphed calls too.

use candle_core::cuda_backend::cudarc::driver::{sys, CudaStream};
use candle_core::Result;
use std::sync::Arc;
use std::time::Instant;

/// The times of `reps` runs of `run` on `stream`, after an untimed one: replays of a graph
/// captured from one run; `None` where the run could not be captured (the caller then times
/// every candidate eagerly, with [`eager_times`]). Everything `run` allocates must be freed
/// within it (a graph that leaves memory allocated cannot be replayed).
pub(crate) fn graphed_times(
    stream: &Arc<CudaStream>,
    reps: usize,
    mut run: impl FnMut() -> Result<()>,
) -> Result<Option<Vec<f64>>> {
    run()?;
    stream.synchronize()?;
    stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)?;
    let body = run();
    if body.is_err() {
        // An error left in the context would stop the capture from ending.
        let _ = stream.context().check_err();
    }
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    let graph = match (body, graph) {
        (Ok(()), Ok(Some(graph))) => graph,
        _ => {
            let _ = stream.context().check_err();
            return Ok(None);
        }
    };
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        graph.launch()?;
        stream.synchronize()?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok(Some(times))
}

/// The times of `reps` synchronized runs of `run` on `stream`, after an untimed one.
pub(crate) fn eager_times(
    stream: &Arc<CudaStream>,
    reps: usize,
    mut run: impl FnMut() -> Result<()>,
) -> Result<Vec<f64>> {
    run()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        stream.synchronize()?;
        let start = Instant::now();
        run()?;
        stream.synchronize()?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok(times)
}
