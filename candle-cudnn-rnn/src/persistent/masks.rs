//! Inter-layer dropout of the persistent path (`dropout.cu`): each module's mask counter per
//! device, in device memory, and the arguments with which the recurrences apply the masks.

use super::kernel::Pass;
use super::plan::Plan;
use crate::call::Dropout;
use candle_core::cuda_backend::cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg, SyncOnDrop,
};
use candle_core::cuda_backend::{CudaDevice, DeviceId};
use candle_core::Result;
use std::collections::HashMap;
use std::sync::Mutex;

/// A module's mask counter on one device, and the seed generation it counts from.
struct Counter {
    calls: CudaSlice<u64>,
    generation: u64,
}

/// The mask counters of one module, per device, and the values a resumed run continues from
/// (per device: the seed generation they belong to, and the count).
#[derive(Default)]
pub(super) struct Counters {
    counters: Mutex<HashMap<DeviceId, Counter>>,
    restored: Mutex<HashMap<DeviceId, (u64, u64)>>,
}

/// The masks of one training call: probability, seed, and its offset (device memory).
pub(super) struct Masks {
    pub p: f32,
    pub seed: u64,
    pub offset: CudaSlice<u64>,
}

fn launch_error(e: impl std::fmt::Display) -> candle_core::Error {
    candle_core::Error::Msg(format!("rnn: persistent kernel dropout: {e}"))
}

impl Counters {
    /// The counter's value on `dev`, 8 little-endian bytes (none before a call with dropout
    /// ran there). Reads the device.
    pub fn state(&self, dev: &CudaDevice) -> Result<Vec<u8>> {
        let map = self.counters.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(&dev.id()) {
            Some(c) => {
                let calls = dev.cuda_stream().clone_dtoh(&c.calls)?;
                Ok(calls[0].to_le_bytes().to_vec())
            }
            None => Ok(Vec::new()),
        }
    }

    /// The counter on `dev` continues from `state` (of [`Self::state`]; empty: from 0) when
    /// the seed reaches `generation`.
    pub fn restore(&self, dev: &CudaDevice, generation: u64, state: &[u8]) -> Result<()> {
        let count = match state {
            [] => 0,
            s => match <[u8; 8]>::try_from(s) {
                Ok(b) => u64::from_le_bytes(b),
                Err(_) => candle_core::bail!(
                    "rnn: a persistent-kernel dropout state of {} bytes, not 8",
                    s.len()
                ),
            },
        };
        let mut restored = self.restored.lock().unwrap_or_else(|e| e.into_inner());
        restored.insert(dev.id(), (generation, count));
        Ok(())
    }

    /// This call's masks: the counter's value (restarted when the seed was set again since
    /// the last call: at 0, or where a resumed run left it), which it then passes, all on the
    /// device.
    pub fn take(&self, dev: &CudaDevice, plan: &Plan, dropout: &Dropout) -> Result<Masks> {
        let stream = dev.cuda_stream();
        let mut map = self.counters.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = !map.contains_key(&dev.id());
        let c = match map.entry(dev.id()) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert(Counter {
                calls: stream.alloc_zeros::<u64>(1)?,
                generation: dropout.generation,
            }),
        };
        if fresh || c.generation != dropout.generation {
            let mut restored = self.restored.lock().unwrap_or_else(|e| e.into_inner());
            match restored.remove(&dev.id()) {
                Some((generation, count)) if generation == dropout.generation => {
                    stream.memcpy_htod(&[count], &mut c.calls)?
                }
                _ => stream.memset_zeros(&mut c.calls)?,
            }
            c.generation = dropout.generation;
        }
        let mut offset = stream.alloc_zeros::<u64>(1)?;
        let f = plan.function(dev, Pass::Forward, "rnn_dropout_take")?;
        {
            let (calls, _a) = c.calls.device_ptr_mut(&stream);
            let (taken, _b) = offset.device_ptr_mut(&stream);
            let mut launch = stream.launch_builder(&f);
            launch.arg(&calls).arg(&taken);
            // SAFETY: two live u64s, as `rnn_dropout_take` takes them.
            let one = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            };
            unsafe { launch.launch(one) }.map_err(launch_error)?;
        }
        Ok(Masks {
            p: dropout.p,
            seed: dropout.seed,
            offset,
        })
    }
}

/// The dropout arguments (`dropout.cu`'s `Dropout`) of the recurrence of `unit` (a layer, or a
/// direction of a bidirectional layer: `units::Units::index`), in `layer` of `layers`: with
/// `masks`, below the top, the offset's address (held on `stream` while the guard lives), the
/// seed, and the probability's f32 bits with the unit above them (each unit's mask its own);
/// zeros (no dropout) otherwise.
pub(super) fn kernel_args<'a>(
    masks: Option<&'a Masks>,
    stream: &'a CudaStream,
    (unit, layer, layers): (usize, usize, usize),
) -> ([u64; 3], Option<SyncOnDrop<'a>>) {
    match masks {
        Some(m) if layer + 1 < layers => {
            let (offset, guard) = m.offset.device_ptr(stream);
            let p_layer = u64::from(m.p.to_bits()) | (unit as u64) << 32;
            ([offset, m.seed, p_layer], Some(guard))
        }
        _ => ([0; 3], None),
    }
}
