//! Copies of tensors on the host, for checkpoints: a GPU's f32 tensors go into a page-locked
//! buffer kept from one call to the next, and become host tensors only where they are read
//! (the checkpoint's writing thread). candle's `to_device(&Device::Cpu)` copies into pageable
//! memory, which is slow, and a fresh host tensor's pages fault in on first touch: both took a
//! noticeable part of every PTB large epoch (66M weights), with the GPU idle
//! (`results/2026-11-23-h100-copies/`).

use candle_core::{Device, Result, Tensor};
#[cfg(feature = "cuda")]
use std::sync::Arc;

/// The staging buffer of [`HostCopies::copy`], grown to the largest call's f32 elements.
#[derive(Default)]
pub struct HostCopies {
    #[cfg(feature = "cuda")]
    staging: Option<Arc<cuda::Staging>>,
    /// The GPU's driver refused page-locked memory once: candle's copies from then on.
    #[cfg(feature = "cuda")]
    no_staging: bool,
}

/// The values of one [`HostCopies::copy`] call.
pub enum HostValues {
    /// Host tensors of their own.
    Tensors(Vec<Tensor>),
    /// Each tensor's shape and elements in the staging buffer, which no copy writes while
    /// these are held.
    #[cfg(feature = "cuda")]
    Staged(
        Arc<cuda::Staging>,
        Vec<(candle_core::Shape, std::ops::Range<usize>)>,
    ),
}

impl HostValues {
    /// The values as host tensors, in the order they were copied.
    pub fn tensors(&self) -> Result<Vec<Tensor>> {
        match self {
            HostValues::Tensors(t) => Ok(t.clone()),
            #[cfg(feature = "cuda")]
            HostValues::Staged(s, parts) => parts
                .iter()
                .map(|(shape, r)| Tensor::from_slice(&s.values()[r.clone()], shape, &Device::Cpu))
                .collect(),
        }
    }
}

impl HostCopies {
    /// The values of `tensors`, independent of them (a CPU tensor is copied too: the next
    /// update writes the original in place). Waits for the device. A GPU's f32 tensors are
    /// staged, which fails while the values of the previous call are still held.
    pub fn copy(&mut self, tensors: &[&Tensor]) -> Result<HostValues> {
        #[cfg(feature = "cuda")]
        if let Some(Device::Cuda(dev)) = tensors.first().map(|t| t.device()) {
            let staged = tensors.iter().all(|t| {
                t.device().same_device(tensors[0].device()) && t.dtype() == candle_core::DType::F32
            });
            if staged && !self.no_staging {
                match cuda::copy(&mut self.staging, dev, tensors)? {
                    Some(values) => return Ok(values),
                    None => self.no_staging = true,
                }
            }
        }
        let host = tensors
            .iter()
            .map(|t| match t.device() {
                Device::Cpu => t.copy(),
                _ => t.to_device(&Device::Cpu),
            })
            .collect::<Result<_>>()?;
        Ok(HostValues::Tensors(host))
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::HostValues;
    use candle_core::cuda_backend::cudarc::driver::{result, DevicePtr, PinnedHostSlice};
    use candle_core::cuda_backend::WrapErr;
    use candle_core::{CudaDevice, Result, Storage, Tensor};
    use std::sync::Arc;

    /// Page-locked f32 host memory and its address, taken once, so that reading it needs no
    /// CUDA call (a thread other than training's may not make one while training captures a
    /// graph).
    pub struct Staging {
        _memory: PinnedHostSlice<f32>,
        at: *mut f32,
        len: usize,
    }

    // SAFETY: `at` points into `_memory`, which lives as long as `self`; it is written only
    // through `Arc::get_mut` (no other holder), read through shared references.
    unsafe impl Send for Staging {}
    unsafe impl Sync for Staging {}

    impl Staging {
        pub fn values(&self) -> &[f32] {
            // SAFETY: see the `Send` impl; `len` elements from `at`, written before shared.
            unsafe { std::slice::from_raw_parts(self.at, self.len) }
        }
    }

    /// Every tensor's elements into the staging buffer (grown when too small), one
    /// asynchronous copy each on the device's stream, then one wait; `None` when the driver
    /// gives no page-locked memory (some sandboxed machines may not).
    pub fn copy(
        staging: &mut Option<Arc<Staging>>,
        dev: &CudaDevice,
        tensors: &[&Tensor],
    ) -> Result<Option<HostValues>> {
        let total: usize = tensors.iter().map(|t| t.elem_count()).sum();
        let stream = dev.cuda_stream();
        if staging.as_ref().is_none_or(|s| s.len < total) {
            *staging = None;
            // Plain page-locked memory: cudarc's default is write-combined, which the CPU
            // reads uncached.
            // SAFETY: every element read is written by the copies below first.
            let Ok(mut memory) =
                (unsafe { stream.context().alloc_pinned_with_flags::<f32>(total, 0) })
            else {
                return Ok(None);
            };
            let at = memory.as_mut_ptr().w()?;
            *staging = Some(Arc::new(Staging {
                _memory: memory,
                at,
                len: total,
            }));
        }
        let Some(s) = staging.as_mut().and_then(Arc::get_mut) else {
            candle_core::bail!("host copies: the previous copies are still being read")
        };
        // SAFETY: held alone (`get_mut`), `len` elements from `at`.
        let host = unsafe { std::slice::from_raw_parts_mut(s.at, s.len) };
        let mut parts = Vec::with_capacity(tensors.len());
        let mut at = 0;
        for t in tensors {
            let (storage, layout) = t.storage_and_layout();
            let Storage::Cuda(c) = &*storage else {
                candle_core::bail!("host copies: a tensor left the GPU")
            };
            let view = candle_cudnn_rnn::kernels::view(c.as_cuda_slice::<f32>()?, layout)?;
            let range = at..at + view.len();
            let (src, _sync) = view.device_ptr(&stream);
            // SAFETY: page-locked memory of this context with room for the view; nothing
            // reads it before the stream is synchronized below.
            unsafe { result::memcpy_dtoh_async(&mut host[range.clone()], src, stream.cu_stream()) }
                .w()?;
            at = range.end;
            parts.push((t.shape().clone(), range));
        }
        stream.synchronize().w()?;
        let Some(s) = staging.as_ref() else {
            candle_core::bail!("host copies: no staging buffer")
        };
        Ok(Some(HostValues::Staged(s.clone(), parts)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::test_gpu::device;
    use candle_core::DType;

    /// On the test device (staged copies when it is a GPU): the same values as `to_device`,
    /// shapes kept, in a buffer used twice (the second call's tensors larger than the first's),
    /// and independent of the originals afterwards.
    #[test]
    fn copies_equal_the_tensors_and_stay_put() {
        let dev = device();
        let mut copies = HostCopies::default();
        for sizes in [[(3, 5), (7, 1)], [(40, 30), (1, 9)]] {
            let ts: Vec<Tensor> = sizes
                .iter()
                .map(|&s| Tensor::randn(0f32, 1., s, &dev).unwrap())
                .collect();
            let refs: Vec<&Tensor> = ts.iter().collect();
            let values = copies.copy(&refs).unwrap();
            let host = values.tensors().unwrap();
            for (t, h) in ts.iter().zip(&host) {
                assert!(h.device().is_cpu());
                assert_eq!(h.dims(), t.dims());
                let want = t.to_device(&Device::Cpu).unwrap().flatten_all().unwrap();
                let got = h.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                assert_eq!(got, want.to_vec1::<f32>().unwrap());
            }
            let before = host[0].flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let zeros = Tensor::zeros(sizes[0], DType::F32, &dev).unwrap();
            ts[0].slice_set(&zeros, 0, 0).unwrap();
            let again = values.tensors().unwrap()[0].flatten_all().unwrap();
            assert_eq!(again.to_vec1::<f32>().unwrap(), before);
        }
    }

    /// A GPU's copies refuse to overwrite values still held; CPU copies are each their own.
    #[test]
    fn held_values_are_not_overwritten() {
        let dev = device();
        let t = Tensor::randn(0f32, 1., 6, &dev).unwrap();
        let mut copies = HostCopies::default();
        let held = copies.copy(&[&t]).unwrap();
        let second = copies.copy(&[&t]);
        assert_eq!(second.is_err(), dev.is_cuda());
        drop(held);
        assert!(copies.copy(&[&t]).is_ok());
    }

    /// Tensors of another dtype take candle's copy.
    #[test]
    fn other_dtypes_are_copied_too() {
        let dev = device();
        let t = Tensor::new(&[1u32, 2, 3], &dev).unwrap();
        let h = HostCopies::default()
            .copy(&[&t])
            .unwrap()
            .tensors()
            .unwrap();
        assert_eq!(h[0].to_vec1::<u32>().unwrap(), [1, 2, 3]);
    }
}
