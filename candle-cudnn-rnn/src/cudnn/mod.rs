//! The op's cuDNN backend: `cudnnRNNForward`, `cudnnRNNBackwardData_v8` and
//! `cudnnRNNBackwardWeights_v8` over the module's flat weight.
//!
//! A module owns one [`CudnnRnn`], which keeps what cuDNN needs per device and dtype
//! (`prepared`: descriptors, the dropout random state, the weight layout), so one module serves
//! several GPUs, from one thread each. `run` holds the per-call forward and backward with the
//! algorithm it is given (chosen in `crate::choose`), `trials` the timing of several algorithms
//! on a call's shape that `RnnAlgo::Auto` chooses by, `ffi` the C API's wrappers.

mod ffi;
mod prepared;
mod run;
mod trials;

pub use ffi::cudnn_version;
pub(crate) use trials::Trial;

use crate::backend::{
    operand_dtype, BackwardInputs, ForwardInputs, Forwarded, GpuReserve, Gradients,
};
use crate::call::Dropout;
use crate::layout::RnnDims;
use crate::{MathMode, RnnAlgo};
use candle_core::cuda_backend::cudarc::driver::CudaSlice;
use candle_core::cuda_backend::{CudaDevice, DeviceId};
use candle_core::{bail, DType, Result};
use ffi::Handle;
use prepared::{Prepared, Spec};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The cuDNN side of one module.
pub(crate) struct CudnnRnn {
    spec: Spec,
    /// Prepared state per device and dtype, each behind its own lock so that calls on
    /// different GPUs do not wait for each other.
    devices: Mutex<HashMap<(DeviceId, DType), SharedPrepared>>,
    /// The dropout states a resumed run continues from, per device and dtype, with the seed
    /// and generation they belong to (`restore_dropout_state`).
    restored: Mutex<HashMap<(DeviceId, DType), Restored>>,
}

/// cuDNN's dropout states of a resumed run, for the seed `(seed, generation)`.
struct Restored {
    seed: (u64, u64),
    states: Vec<u8>,
}

/// The dtypes whose dropout states a module's state names, by their byte.
const STATE_DTYPES: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];

/// One device and dtype's prepared state, locked on its own.
type SharedPrepared = Arc<Mutex<Prepared>>;

/// The reserve space of one training-mode forward, freed when its backward takes it, and the
/// descriptor that wrote it (backward must use the same algorithm and dropout state).
struct CudnnReserve {
    space: CudaSlice<u8>,
    algo: RnnAlgo,
    dropout: bool,
}

fn poisoned() -> candle_core::Error {
    candle_core::Error::Msg("rnn: cuDNN state lock poisoned by an earlier panic".into())
}

impl CudnnRnn {
    pub(crate) fn new(dims: RnnDims, math: MathMode, dropout: f32) -> Self {
        Self {
            spec: Spec {
                dims,
                math,
                dropout,
            },
            devices: Mutex::new(HashMap::new()),
            restored: Mutex::new(HashMap::new()),
        }
    }

    /// The prepared state for `dev` and `dtype`, built on first use (`w_base`: the address of
    /// a weight tensor), with its dropout state following the module's seed.
    fn prepared(
        &self,
        h: &Handle,
        dev: &CudaDevice,
        dtype: DType,
        w_base: u64,
        seed: &Dropout,
    ) -> Result<Arc<Mutex<Prepared>>> {
        let key = (dev.id(), dtype);
        let found = self
            .devices
            .lock()
            .map_err(|_| poisoned())?
            .get(&key)
            .cloned();
        let stream = dev.cuda_stream();
        let restored = || -> Result<Option<Vec<u8>>> {
            let mut restored = self.restored.lock().map_err(|_| poisoned())?;
            Ok(match restored.remove(&key) {
                Some(r) if r.seed == (seed.seed, seed.generation) => Some(r.states),
                // Of a seed set since: stale.
                Some(_) => None,
                None => None,
            })
        };
        let entry = match found {
            Some(p) => {
                let mut prepared = p.lock().map_err(|_| poisoned())?;
                if prepared.follow_seed(&self.spec, h, &stream, seed)? {
                    if let Some(states) = restored()? {
                        prepared.set_dropout_states(&stream, &states)?;
                    }
                }
                drop(prepared);
                p
            }
            None => {
                let mut p = Prepared::new(&self.spec, h, &stream, dtype, w_base, seed)?;
                if let Some(states) = restored()? {
                    p.set_dropout_states(&stream, &states)?;
                }
                let p = Arc::new(Mutex::new(p));
                let mut devices = self.devices.lock().map_err(|_| poisoned())?;
                devices.entry(key).or_insert(p).clone()
            }
        };
        Ok(entry)
    }

    /// The dropout states of every dtype that ran with dropout on `dev`, packed: each a
    /// dtype's byte (its place in [`STATE_DTYPES`]) and the states. Reads the device.
    pub(crate) fn dropout_state(&self, dev: &CudaDevice) -> Result<Vec<u8>> {
        let devices = self.devices.lock().map_err(|_| poisoned())?;
        let mut parts = Vec::new();
        for (i, dtype) in STATE_DTYPES.iter().enumerate() {
            let Some(p) = devices.get(&(dev.id(), *dtype)) else {
                continue;
            };
            if let Some(states) = p.lock().map_err(|_| poisoned())?.dropout_states(dev)? {
                parts.push([vec![i as u8], states].concat());
            }
        }
        let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        Ok(crate::backend::pack(&parts))
    }

    /// The next call on `dev` of the seed `(seed, generation)` continues from `state` (of
    /// [`Self::dropout_state`]; empty: from the seed).
    pub(crate) fn restore_dropout_state(
        &self,
        dev: &CudaDevice,
        seed: (u64, u64),
        state: &[u8],
    ) -> Result<()> {
        let mut restored = self.restored.lock().map_err(|_| poisoned())?;
        restored.retain(|(id, _), _| *id != dev.id());
        for part in crate::backend::unpack(state, "cuDNN's dropout state")? {
            let dtype = match part.split_first() {
                Some((&i, _)) if (i as usize) < STATE_DTYPES.len() => STATE_DTYPES[i as usize],
                _ => bail!("rnn: cuDNN's dropout state is not one this crate wrote"),
            };
            let states = part[1..].to_vec();
            restored.insert((dev.id(), dtype), Restored { seed, states });
        }
        Ok(())
    }

    /// The prepared state a forward on `dev` and `dtype` built, for its backward.
    fn prepared_for_backward(
        &self,
        dev: &CudaDevice,
        dtype: DType,
    ) -> Result<Arc<Mutex<Prepared>>> {
        let devices = self.devices.lock().map_err(|_| poisoned())?;
        match devices.get(&(dev.id(), dtype)) {
            Some(p) => Ok(p.clone()),
            None => bail!("rnn backward: no cuDNN forward ran on this device and dtype"),
        }
    }

    /// Something every prepared device knows, for the layer's questions.
    fn ask<T>(&self, f: impl Fn(&Prepared) -> Option<T>) -> Option<T> {
        let devices = self.devices.lock().ok()?;
        devices.values().find_map(|p| f(&*p.lock().ok()?))
    }
}

impl CudnnRnn {
    /// Runs one call forward with cuDNN's `algo` (one of [`RnnAlgo::CONCRETE`]); what it
    /// keeps for training is for [`CudnnRnn::backward`].
    pub(crate) fn forward(&self, algo: RnnAlgo, inputs: ForwardInputs) -> Result<Forwarded> {
        let run = match operand_dtype(inputs.ops)? {
            DType::F32 => run::forward::<f32>,
            DType::F64 => run::forward::<f64>,
            DType::F16 => run::forward::<half::f16>,
            _ => run::forward::<half::bf16>,
        };
        let (out, reserve) = run(self, algo, inputs)?;
        Ok((out, reserve.map(|r| Box::new(r) as GpuReserve)))
    }

    /// The gradients of the forward that left `reserve` (one of [`CudnnRnn::forward`]'s);
    /// `dstate` only when `inputs.state_grad`, `dw` only without `inputs.dw_into`.
    pub(crate) fn backward(
        &self,
        reserve: GpuReserve,
        inputs: BackwardInputs,
    ) -> Result<Gradients> {
        let Ok(r) = reserve.downcast::<CudnnReserve>() else {
            bail!("rnn backward: the forward's reserve was not cuDNN's")
        };
        match inputs.weight.dtype() {
            DType::F32 => run::backward::<f32>(self, *r, inputs),
            DType::F64 => run::backward::<f64>(self, *r, inputs),
            DType::F16 => run::backward::<half::f16>(self, *r, inputs),
            DType::BF16 => run::backward::<half::bf16>(self, *r, inputs),
            dt => bail!("rnn backward on cuda: unsupported dtype {dt:?}"),
        }
    }

    /// Whether the flat weight is read in place rather than copied per call, once known.
    pub(crate) fn weights_in_place(&self) -> Option<bool> {
        self.ask(|p| Some(p.remap.is_none()))
    }
}
