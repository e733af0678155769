//! Inter-layer dropout of the persistent path (`dropout.cu`): each module's mask counter per
//! device, in device memory, and the arguments with which the recurrences apply the masks.

use super::kernel::{Pass, Plan};
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

/// The mask counters of one module, per device.
#[derive(Default)]
pub(super) struct Counters(Mutex<HashMap<DeviceId, Counter>>);

/// The masks of one training call: probability, seed, and its offset (device memory).
pub(super) struct Masks {
    pub p: f32,
    pub seed: u64,
    pub offset: CudaSlice<u64>,
}

fn launch_error(e: impl std::fmt::Display) -> candle_core::Error {
    candle_core::Error::Msg(format!("rnn: persistent LSTM dropout: {e}"))
}

impl Counters {
    /// This call's masks: the counter's value (restarted at 0 when the seed was set again
    /// since the last call), which it then passes, all on the device.
    pub fn take(&self, dev: &CudaDevice, plan: &Plan, dropout: &Dropout) -> Result<Masks> {
        let stream = dev.cuda_stream();
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let c = match map.entry(dev.id()) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert(Counter {
                calls: stream.alloc_zeros::<u64>(1)?,
                generation: dropout.generation,
            }),
        };
        if c.generation != dropout.generation {
            stream.memset_zeros(&mut c.calls)?;
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

/// The dropout arguments (`dropout.cu`'s `Dropout`) of the recurrence of `layer` of `layers`:
/// with `masks`, below the top, the offset's address (held on `stream` while the guard lives),
/// the seed, and the probability's f32 bits with the layer above them; zeros (no dropout)
/// otherwise.
pub(super) fn kernel_args<'a>(
    masks: Option<&'a Masks>,
    stream: &'a CudaStream,
    (layer, layers): (usize, usize),
) -> ([u64; 3], Option<SyncOnDrop<'a>>) {
    match masks {
        Some(m) if layer + 1 < layers => {
            let (offset, guard) = m.offset.device_ptr(stream);
            let p_layer = u64::from(m.p.to_bits()) | (layer as u64) << 32;
            ([offset, m.seed, p_layer], Some(guard))
        }
        _ => ([0; 3], None),
    }
}
