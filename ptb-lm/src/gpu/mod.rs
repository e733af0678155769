//! What ptb-lm does on a GPU beside its model: its kernel launchers' helpers (`nvrtc`), candle's
//! kernels compiled into the driver's cache at start-up (`driver_cache`), and the GPU as the
//! unit tests share it (`test_gpu`).

pub mod device_arg;
pub mod driver_cache;
#[cfg(feature = "cuda")]
pub mod nvrtc;
#[cfg(test)]
pub mod test_gpu;
