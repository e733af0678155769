//! `RnnAlgo::Auto`: time every algorithm cuDNN accepts for a call's shape, once, on scratch
//! buffers, and keep the fastest for that `(seq, batch, training)`.

use super::ffi::Handle;
use super::prepared::{temp_sizes, Prepared, Raw};
use super::run::{Elem, Operands, Sizes};
use super::CudnnRnn;
use crate::call::Call;
use crate::memory::fill;
use crate::RnnAlgo;
use candle_core::cuda_backend::cudarc::driver::{CudaStream, DevicePtrMut};
use candle_core::{bail, Result};
use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// How close a candidate's outputs must be to the standard algorithm's (relative L2): far
/// above TF32 or half-precision rounding, far below a wrong result.
const AGREE: f64 = 1e-2;

/// ‖a − b‖ ≤ AGREE ‖b‖, false for NaN: whether a candidate of `Auto` computes what the
/// reference does.
pub(crate) fn agrees(a: &[f64], b: &[f64]) -> bool {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    matches!(
        d.sqrt().partial_cmp(&(AGREE * n.sqrt())),
        Some(Ordering::Less | Ordering::Equal)
    )
}

/// Timed repetitions per algorithm (after one untimed run, which also builds a dynamic plan).
const REPS: usize = 3;

/// Below this batch, training in half precision gets only the standard algorithm: on the H100
/// (cuDNN 9.19) the persistent backward of an f16 LSTM at batch 1 gave infinite gradients in
/// some calls and finite ones in others, even after agreeing in its trial, so no trial can
/// clear it. (Seen at batch 1; 8, the smallest tensor-core tile, leaves a margin.)
const HALF_TRAINING_PERSIST_MIN_BATCH: usize = 8;

impl CudnnRnn {
    /// The algorithm for this call: the configured one, or `Auto`'s (measured) choice.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn algo_for<T: Elem>(
        &self,
        h: &Handle,
        stream: &Arc<CudaStream>,
        p: &mut Prepared,
        call: &Call,
        train: bool,
        shapes: Raw,
        o: Operands,
    ) -> Result<RnnAlgo> {
        match self.algo {
            // The persistent kernels take neither variable lengths nor a projection.
            RnnAlgo::Auto if call.lengths.is_some() || self.spec.dims.proj_size > 0 => {
                Ok(RnnAlgo::Standard)
            }
            RnnAlgo::Auto => {
                let key = (call.seq, call.batch, train);
                if let Some(&a) = p.chosen.get(&key) {
                    return Ok(a);
                }
                let a = self.fastest::<T>(h, stream, p, call, train, shapes, o)?;
                p.chosen.insert(key, a);
                Ok(a)
            }
            a if a != RnnAlgo::Standard && call.lengths.is_some() => bail!(
                "rnn: cuDNN's {a:?} algorithm does not take variable-length sequences; use \
                 RnnAlgo::Standard or RnnAlgo::Auto"
            ),
            a if a != RnnAlgo::Standard && self.spec.dims.proj_size > 0 => bail!(
                "rnn: cuDNN's {a:?} algorithm does not take a projection; use \
                 RnnAlgo::Standard or RnnAlgo::Auto"
            ),
            a => Ok(a),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fastest<T: Elem>(
        &self,
        h: &Handle,
        stream: &Arc<CudaStream>,
        p: &mut Prepared,
        call: &Call,
        train: bool,
        shapes: Raw,
        o: Operands,
    ) -> Result<RnnAlgo> {
        let half = std::mem::size_of::<T>() == 2;
        if train && half && call.batch < HALF_TRAINING_PERSIST_MIN_BATCH {
            // The only candidate: nothing to measure.
            return Ok(RnnAlgo::Standard);
        }
        let packed = call.output_len() + call.state_len();
        let mut out_buf = stream.alloc_zeros::<T>(packed)?;
        // A gradient of both signs and several sizes: with zeros every backward agrees, a
        // broken one too.
        let dy_host: Vec<T> = (0..packed)
            .map(|i| T::from_f64(((i * 7919 % 17) as f64 - 8.0) / 8.0))
            .collect();
        let mut dy = stream.clone_htod(&dy_host)?;
        let mut dx = stream.alloc_zeros::<T>(call.input_len())?;
        let mut ds = stream.alloc_zeros::<T>(call.state_len())?;
        let mut dw_buf = stream.alloc_zeros::<T>(p.space_len)?;
        let (dy, _b) = dy.device_ptr_mut(stream);
        let mut best = (RnnAlgo::Standard, f64::INFINITY);
        // The standard algorithm's outputs, and in training its input, state and weight
        // gradients (it runs first): a candidate must reproduce them.
        let mut reference: Option<[Vec<f64>; 4]> = None;
        for algo in RnnAlgo::CONCRETE {
            let run = |p: &mut Prepared, [out, dx, ds, dw]: [u64; 4]| -> Result<f64> {
                let desc = p.desc(&self.spec, h, algo, false, call.batch)?;
                let (work_len, reserve_len) = temp_sizes(h, desc, train, shapes)?;
                let mut work = unsafe { stream.alloc::<u8>(work_len.max(1)) }?;
                let mut reserve = unsafe { stream.alloc::<u8>(reserve_len.max(1)) }?;
                let (work, _w) = work.device_ptr_mut(stream);
                let (reserve, _r) = reserve.device_ptr_mut(stream);
                // Real calls get a workspace that earlier calls left dirty: all-ones bytes
                // (NaN in every float type) make a candidate that reads what it did not write
                // fail here rather than there.
                poison(stream, work, work_len)?;
                poison(stream, reserve, reserve_len)?;
                let sizes = Sizes {
                    space: p.space_len * std::mem::size_of::<T>(),
                    work: work_len,
                    reserve: if train { reserve_len } else { 0 },
                };
                let res = if train { reserve } else { 0 };
                let mut times = Vec::with_capacity(REPS);
                for _ in 0..=REPS {
                    let start = Instant::now();
                    self.forward_raw::<T>(h, desc, shapes, call, sizes, o, out, work, res)?;
                    if train {
                        // cuDNN adds the weight gradient in: from zero, it is this run's.
                        fill(stream, dw, sizes.space, 0)?;
                        let bufs = [out, dy, dx, ds, dw, work, reserve];
                        self.backward_raw::<T>(h, desc, shapes, call, sizes, o, bufs)?;
                    }
                    stream.synchronize()?;
                    times.push(start.elapsed().as_secs_f64());
                }
                Ok(times[1..].iter().copied().fold(f64::INFINITY, f64::min))
            };
            // An algorithm cuDNN refuses for this configuration is simply not a candidate.
            let timed = {
                let (out, _a) = out_buf.device_ptr_mut(stream);
                let (dx, _c) = dx.device_ptr_mut(stream);
                let (ds, _d) = ds.device_ptr_mut(stream);
                let (dw, _e) = dw_buf.device_ptr_mut(stream);
                run(p, [out, dx, ds, dw])
            };
            let Ok(t) = timed else { continue };
            let host = |b| -> Result<Vec<f64>> {
                Ok(stream
                    .clone_dtoh(b)?
                    .iter()
                    .map(|v: &T| v.to_f64())
                    .collect())
            };
            let results = [host(&out_buf)?, host(&dx)?, host(&ds)?, host(&dw_buf)?];
            match &reference {
                None => reference = Some(results),
                // Nor is one whose results differ (a persistent kernel that silently returns
                // zeros for a shape it does not handle, say, or one that reads memory it did
                // not write).
                Some(r) if !results.iter().zip(r).all(|(a, b)| agrees(a, b)) => continue,
                Some(_) => {}
            }
            if t < best.1 {
                best = (algo, t);
            }
        }
        Ok(best.0)
    }
}

/// Fills `len` bytes at `ptr` with all-ones bits, in stream order.
fn poison(stream: &CudaStream, ptr: u64, len: usize) -> Result<()> {
    fill(stream, ptr, len, 0xff)
}
