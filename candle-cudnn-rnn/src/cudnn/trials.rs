//! Trials of cuDNN's algorithms on one call's shape, for `RnnAlgo::Auto` (which picks among
//! them in `crate::choose`): each candidate runs the call, forward and in training backward, on
//! scratch buffers, once untimed and then timed (as a captured graph's replays where it
//! captures), and its times and results are handed back.

use super::prepared::{temp_sizes, Prepared};
use super::run::{reads_zeros, with_call, CallState, Elem, Sizes};
use super::CudnnRnn;
use crate::backend::{operand_dtype, ForwardInputs};
use crate::memory::fill;
use crate::timing::{eager_times, graphed_times};
use crate::RnnAlgo;
use candle_core::cuda_backend::cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use candle_core::{DType, Result};

/// One algorithm's trial on a call's shape.
pub(crate) struct Trial {
    pub algo: RnnAlgo,
    /// Its timed runs, in seconds.
    pub times: Vec<f64>,
    /// Whether they were replays of a captured graph (`crate::timing`), or eager runs.
    pub graphed: bool,
    /// Its outputs (the packed `[y | h_n | c_n]`) and, in training, its input, state and weight
    /// gradients (of a fixed output gradient), as f64.
    pub results: [Vec<f64>; 4],
}

impl CudnnRnn {
    /// Tries each of `candidates` in turn on `inputs`' call over its operands (read only:
    /// every result goes to scratch buffers), in training mode when it trains, without
    /// dropout, once untimed (which also builds a dynamic plan) and then `reps` times (replays
    /// of a captured graph where the call captures: `crate::timing`); hands `judge` the trial of
    /// each that cuDNN accepts (one it refuses for this configuration is skipped).
    pub(crate) fn trials(
        &self,
        inputs: ForwardInputs,
        (candidates, reps, judge): (&[RnnAlgo], usize, &mut dyn FnMut(Trial)),
    ) -> Result<()> {
        let run = match operand_dtype(inputs.ops)? {
            DType::F32 => Self::trials_of::<f32>,
            DType::F64 => Self::trials_of::<f64>,
            DType::F16 => Self::trials_of::<half::f16>,
            _ => Self::trials_of::<half::bf16>,
        };
        run(self, inputs, (candidates, reps, judge))
    }

    fn trials_of<T: Elem>(
        &self,
        inputs: ForwardInputs,
        tried: (&[RnnAlgo], usize, &mut dyn FnMut(Trial)),
    ) -> Result<()> {
        with_call::<T, _>(self, &inputs, |c| {
            self.try_each::<T>(c, inputs.train, tried)
        })
    }

    /// [`CudnnRnn::trials`] in the state `c` of the call.
    fn try_each<T: Elem>(
        &self,
        c: CallState,
        train: bool,
        (candidates, reps, judge): (&[RnnAlgo], usize, &mut dyn FnMut(Trial)),
    ) -> Result<()> {
        let CallState { stream, p, mut raw } = c;
        let call = raw.call;
        // The zero initial state that `Standard` stacks read for a call given none, so that
        // each candidate is timed as it will run.
        let math = (self.spec.math, T::DTYPE);
        let zeros = match reads_zeros(call, RnnAlgo::Standard, math) {
            true => Some(stream.alloc_zeros::<T>(call.state_len())?),
            false => None,
        };
        let zeros = zeros.as_ref().map(|z| z.device_ptr(stream));
        let given = raw.o.state;
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
        for &algo in candidates {
            raw.o.state = match &zeros {
                Some((z, _)) if reads_zeros(call, algo, math) => *z,
                _ => given,
            };
            let run = |p: &mut Prepared, [out, dx, ds, dw]: [u64; 4]| -> Result<(Vec<f64>, bool)> {
                let desc = p.desc(&self.spec, raw.h, algo, false, call.batch)?;
                let (work_len, reserve_len) = temp_sizes(raw.h, desc, train, raw.shapes)?;
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
                let once = || -> Result<()> {
                    // The final state and its gradient behind y's, as the packed output.
                    let state = call.state_behind_y::<T>(out);
                    self.forward_raw::<T>(&raw, desc, sizes, ([out, state], [work, res]))?;
                    if train {
                        let d_state = call.state_behind_y::<T>(dy);
                        let bufs = [out, dy, d_state, dx, ds, dw, work, reserve];
                        // cuDNN adds the weight gradient in: from zero, it is this run's.
                        self.backward_raw::<T>(&raw, desc, sizes, bufs, Some(stream))?;
                    }
                    Ok(())
                };
                match graphed_times(stream, reps, once)? {
                    Some(times) => Ok((times, true)),
                    None => Ok((eager_times(stream, reps, once)?, false)),
                }
            };
            // An algorithm cuDNN refuses for this configuration is simply not tried.
            let timed = {
                let (out, _a) = out_buf.device_ptr_mut(stream);
                let (dx, _c) = dx.device_ptr_mut(stream);
                let (ds, _d) = ds.device_ptr_mut(stream);
                let (dw, _e) = dw_buf.device_ptr_mut(stream);
                run(p, [out, dx, ds, dw])
            };
            let Ok((times, graphed)) = timed else {
                continue;
            };
            let host = |b| -> Result<Vec<f64>> {
                Ok(stream
                    .clone_dtoh(b)?
                    .iter()
                    .map(|v: &T| v.to_f64())
                    .collect())
            };
            let results = [host(&out_buf)?, host(&dx)?, host(&ds)?, host(&dw_buf)?];
            judge(Trial {
                algo,
                times,
                graphed,
                results,
            });
        }
        Ok(())
    }
}

/// Fills `len` bytes at `ptr` with all-ones bits, in stream order.
fn poison(stream: &CudaStream, ptr: u64, len: usize) -> Result<()> {
    fill(stream, ptr, len, 0xff)
}
