//! Streams beside the device's, for a layer's GEMMs after its backward recurrence: its two
//! weight gradients' products and its input gradient's depend only on the recurrence's gate
//! gradients, and at small sizes each fills only part of the GPU (split-K products and their
//! reductions), so the weight gradients go to two side streams, each with a cuBLAS handle of
//! its own, while the input gradient's product runs on the device's stream ([`Fork`]). The
//! training forward's transposes of W_hh for the backward run on one too (`transposed`).
//!
//! The streams are raw driver streams, not cudarc's: a cudarc stream would put the whole
//! context in its multi-stream mode, where every candle buffer records events as it is used.
//! They are made once per context, outside any graph capture (making a cuBLAS handle allocates),
//! and kept for the process. Inside a capture the fork becomes branches of the graph.
//!
//! A bidirectional layer's two recurrences run side by side the same way, the reverse direction's
//! on a side stream (`units.rs`).

use super::kernel::Pass;
use super::plan::Plan;
use candle_core::cuda_backend::cudarc::cublas::{result as blas, sys as blas_sys};
use candle_core::cuda_backend::cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaStream, LaunchConfig,
};
use candle_core::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// How many side streams a fork has.
pub(super) const SIDES: usize = 2;

/// Whether a layer's weight gradients, `[gh, in_size]` and `[gh, hidden]`, go to the side
/// streams where the tuning leaves it to the shape: where neither has more than
/// [`SIDE_MOST_OUTPUTS`] elements. Graphed bf16 training at hidden 64 and 128 took 0.90-0.95x
/// the time on one stream (LSTM and GRU at batches 32 and 128, TF32 0.95-0.99x); at hidden 256
/// 1.00-1.01x, and at 512 and 1024, whose products each fill the GPU, 1.00-1.02x
/// (`results/2026-11-30-h200-side-streams/`).
pub(super) fn shape_side_streams((gh, in_size, hidden): (usize, usize, usize)) -> bool {
    gh * in_size.max(hidden) <= SIDE_MOST_OUTPUTS
}

/// See [`shape_side_streams`]: an LSTM's weights at hidden 128 (512 x 128 each).
const SIDE_MOST_OUTPUTS: usize = 1 << 16;

/// Whether a layer's weight gradients, `[gh, in_size]` and `[gh, hidden]`, go to the side
/// streams: from unpadded rows only (`padded_rows`: its input or its h_{t-1} kept in padded
/// rows share one scratch buffer and the row kernels of the device's stream), where `plan`'s
/// tuning says so or, left to the shape, [`shape_side_streams`].
pub(super) fn weight_gradients_aside(
    plan: &Plan,
    padded_rows: bool,
    shape: (usize, usize, usize),
) -> bool {
    !padded_rows
        && plan
            .side_streams
            .unwrap_or_else(|| shape_side_streams(shape))
}

/// Whether a layer's backward, layer by layer, adds its batch groups' bias gradients after the
/// kernel, beside the weight gradients on the side streams (`aside`; `rnn_sum_bias_parts`),
/// where it has a bias (`biased`). Otherwise its kernel's first group adds them once every
/// group's blocks have joined at the words behind the groups' barriers, which must start zeroed.
pub(super) fn bias_parts_summed_after(plan: &Plan, aside: bool, biased: bool) -> bool {
    plan.pass_groups(Pass::Backward) > 1 && aside && biased
}

/// The side streams of one context, their cuBLAS handles and the events that fork and join.
struct Streams {
    /// Kept so that the context outlives the streams.
    _ctx: Arc<CudaContext>,
    streams: [sys::CUstream; SIDES],
    blas: [blas_sys::cublasHandle_t; SIDES],
    /// One recorded on the device's stream, then one per side stream.
    events: [sys::CUevent; SIDES + 1],
}

// SAFETY: the handles are used only under the mutex that holds them, for a whole fork
// (`Fork`), so that two threads' forks on one context never share the events.
unsafe impl Send for Streams {}

impl Streams {
    fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        ctx.bind_to_thread().map_err(driver)?;
        let stream = || result::stream::create(result::stream::StreamKind::NonBlocking);
        let streams = [stream().map_err(driver)?, stream().map_err(driver)?];
        let mut handles = [std::ptr::null_mut(); SIDES];
        for (h, s) in handles.iter_mut().zip(streams) {
            *h = blas::create_handle().map_err(driver)?;
            // SAFETY: both were just made.
            unsafe { blas::set_stream(*h, s as _) }.map_err(driver)?;
        }
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        let events = [
            event().map_err(driver)?,
            event().map_err(driver)?,
            event().map_err(driver)?,
        ];
        Ok(Self {
            _ctx: ctx.clone(),
            streams,
            blas: handles,
            events,
        })
    }
}

/// Every context's side streams (a context's key: its address), made once and kept.
static BY_CONTEXT: Mutex<Option<HashMap<usize, &'static Mutex<Streams>>>> = Mutex::new(None);

/// The work of one layer spread over the device's stream and the side streams: made by
/// [`Fork::new`] after the work the branches depend on, joined back into the device's stream
/// by [`Fork::join`] (or on drop).
pub(super) struct Fork<'a> {
    main: &'a CudaStream,
    streams: MutexGuard<'static, Streams>,
    joined: bool,
}

impl<'a> Fork<'a> {
    /// The side streams of `main`'s context, forked from `main` (they wait for its work so
    /// far); `None` where the device has none yet and `main` is being captured (the caller
    /// then stays on `main`).
    pub fn new(main: &'a CudaStream) -> Result<Option<Self>> {
        let ctx = main.context();
        let key = ctx.cu_ctx() as usize;
        let streams = {
            let mut all = BY_CONTEXT.lock().unwrap_or_else(|e| e.into_inner());
            let all = all.get_or_insert_with(HashMap::new);
            match all.get(&key) {
                Some(s) => *s,
                None => {
                    let capturing = main.capture_status().map_err(driver)?;
                    if capturing != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
                        return Ok(None);
                    }
                    let s: &'static _ = Box::leak(Box::new(Mutex::new(Streams::new(ctx)?)));
                    all.insert(key, s);
                    s
                }
            }
        };
        let fork = Self {
            main,
            streams: streams.lock().unwrap_or_else(|e| e.into_inner()),
            joined: false,
        };
        fork.follow()?;
        Ok(Some(fork))
    }

    /// The cuBLAS handle of side stream `i` (< [`SIDES`]).
    pub fn blas(&self, i: usize) -> blas_sys::cublasHandle_t {
        self.streams.blas[i]
    }

    /// Side stream `i` (< [`SIDES`]), for launches of the caller's own (`launch::Launch`'s
    /// `side`) under the same promise as [`Fork::launch`].
    pub fn stream(&self, i: usize) -> sys::CUstream {
        self.streams.streams[i]
    }

    /// The side streams wait for the device's stream's work so far, as at [`Fork::new`]: a fork
    /// kept across several layers' work forks again.
    pub fn follow(&self) -> Result<()> {
        let s = &self.streams;
        // SAFETY: the streams and events live as long as the context (`Streams::_ctx`).
        unsafe {
            result::event::record(s.events[0], self.main.cu_stream()).map_err(driver)?;
            for side in s.streams {
                result::stream::wait_event(
                    side,
                    s.events[0],
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
                .map_err(driver)?;
            }
        }
        Ok(())
    }

    /// Launches `f` on side stream `i` (< [`SIDES`]) with `cfg`, its arguments the device
    /// addresses `args`.
    ///
    /// # Safety
    /// `f` takes `args.len()` pointer arguments, and every buffer they address lives until the
    /// device's stream has joined this work.
    pub unsafe fn launch(
        &self,
        i: usize,
        f: &CudaFunction,
        cfg: LaunchConfig,
        args: &mut [u64],
    ) -> Result<()> {
        let mut params: Vec<*mut std::ffi::c_void> =
            args.iter_mut().map(|a| a as *mut u64 as _).collect();
        // SAFETY: the caller's; the parameters point at `args`, alive through the call.
        unsafe {
            result::launch_kernel(
                f.cu_function(),
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                self.streams.streams[i],
                &mut params,
            )
        }
        .map_err(driver)
    }

    /// The device's stream waits for the side streams' work so far.
    pub fn join(mut self) -> Result<()> {
        self.joined = true;
        self.meet()
    }

    /// [`Fork::join`] without ending the fork: its side streams take more work after
    /// [`Fork::follow`].
    pub fn meet(&self) -> Result<()> {
        let s = &self.streams;
        // SAFETY: as in `follow`.
        unsafe {
            for (side, event) in s.streams.iter().zip(&s.events[1..]) {
                result::event::record(*event, *side).map_err(driver)?;
                result::stream::wait_event(
                    self.main.cu_stream(),
                    *event,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
                .map_err(driver)?;
            }
        }
        Ok(())
    }
}

impl Drop for Fork<'_> {
    /// A fork left by an error still joins: nothing on the device's stream may run ahead of the
    /// side streams' work on its buffers.
    fn drop(&mut self) {
        if !self.joined {
            let _ = self.meet();
        }
    }
}

fn driver(e: impl std::fmt::Display) -> candle_core::Error {
    candle_core::Error::Msg(format!("rnn: side streams: {e}"))
}

#[cfg(test)]
mod tests {
    use super::{bias_parts_summed_after, shape_side_streams, weight_gradients_aside};
    use crate::persistent::cell::Cell;
    use crate::persistent::plan::Plan;

    #[test]
    fn the_groups_bias_parts_are_summed_after_the_kernel_only_beside_the_weight_gradients() {
        let plan = |groups, side_streams| Plan {
            groups,
            side_streams,
            ..Plan::example(Cell::Lstm, 128, 32)
        };
        // Aside where the tuning or the shape says so, from unpadded rows only.
        assert!(weight_gradients_aside(
            &plan(4, None),
            false,
            (512, 128, 128)
        ));
        assert!(!weight_gradients_aside(
            &plan(4, None),
            true,
            (512, 128, 128)
        ));
        assert!(!weight_gradients_aside(
            &plan(4, None),
            false,
            (1024, 256, 256)
        ));
        assert!(weight_gradients_aside(
            &plan(4, Some(true)),
            false,
            (1024, 256, 256)
        ));
        assert!(!weight_gradients_aside(
            &plan(4, Some(false)),
            false,
            (512, 128, 128)
        ));
        // Summed after the kernel: batch groups, the weight gradients aside, a bias. Else the
        // kernel's groups join at words.
        assert!(bias_parts_summed_after(&plan(4, None), true, true));
        assert!(!bias_parts_summed_after(&plan(4, None), false, true));
        assert!(!bias_parts_summed_after(&plan(4, None), true, false));
        assert!(!bias_parts_summed_after(&plan(1, None), true, true));
    }

    #[test]
    fn side_streams_up_to_hidden_128() {
        // (gate rows, input size, hidden size): an LSTM's 4H and a GRU's 3H.
        assert!(shape_side_streams((4 * 64, 64, 64)));
        assert!(shape_side_streams((4 * 128, 128, 128)));
        assert!(shape_side_streams((3 * 128, 128, 128)));
        // Hidden 256 and past, or a wide input, fill the GPU with each product.
        assert!(!shape_side_streams((4 * 256, 256, 256)));
        assert!(!shape_side_streams((3 * 256, 256, 256)));
        assert!(!shape_side_streams((4 * 128, 1024, 128)));
        assert!(!shape_side_streams((4 * 512, 512, 512)));
    }
}
