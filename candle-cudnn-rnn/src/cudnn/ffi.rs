//! Thin safe wrappers over the cuDNN C API: status codes as errors naming the call, descriptors
//! that free themselves, one handle per thread and device (as candle keeps its own), and the
//! numbers cuDNN's RNN API speaks in that its bindings do not name.

use candle_core::cuda_backend::cudarc::cudnn::sys;
use candle_core::cuda_backend::{CudaDevice, DeviceId};
use candle_core::{DType, Result};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// `CUDNN_RNN_PADDED_IO_ENABLED`, a `#define` the bindings do not carry.
pub(crate) const RNN_PADDED_IO_ENABLED: u32 = 1;

/// `cudnnGetRNNWeightParams`'s `linLayerID` of an LSTM's projection matrix (`W_hr`). IDs
/// `0..G` are the input-side matrices of the `G` gates and `G..2G` the recurrent ones.
pub(crate) const LSTM_PROJECTION_ID: usize = 8;

/// Turns a cuDNN status into a candle error that names the failed call and the status.
pub(crate) fn check(status: sys::cudnnStatus_t, call: &str) -> Result<()> {
    if status == sys::cudnnStatus_t::CUDNN_STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: cudnnGetErrorString returns a static NUL-terminated string for any status.
    let name = unsafe { std::ffi::CStr::from_ptr(sys::cudnnGetErrorString(status)) };
    candle_core::bail!("{call} failed: {} ({status:?})", name.to_string_lossy())
}

/// Runs a cuDNN call and checks its status, naming the call in the error.
macro_rules! cudnn {
    ($f:ident ( $($arg:expr),* $(,)? )) => {
        $crate::cudnn::ffi::check(
            // SAFETY: callers pass live descriptors and device pointers sized for the call.
            unsafe { candle_core::cuda_backend::cudarc::cudnn::sys::$f($($arg),*) },
            stringify!($f),
        )
    };
}
pub(crate) use cudnn;

macro_rules! descriptor {
    ($name:ident, $raw:ty, $create:ident, $destroy:ident) => {
        pub(crate) struct $name(pub(crate) $raw);

        impl $name {
            pub(crate) fn new() -> Result<Self> {
                let mut raw = std::ptr::null_mut();
                cudnn!($create(&mut raw))?;
                Ok(Self(raw))
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: created by the matching create call and destroyed once.
                unsafe { sys::$destroy(self.0) };
            }
        }

        // SAFETY: a descriptor is plain host memory; users serialize access behind a Mutex.
        unsafe impl Send for $name {}
    };
}

descriptor!(
    TensorDesc,
    sys::cudnnTensorDescriptor_t,
    cudnnCreateTensorDescriptor,
    cudnnDestroyTensorDescriptor
);
descriptor!(
    RnnDataDesc,
    sys::cudnnRNNDataDescriptor_t,
    cudnnCreateRNNDataDescriptor,
    cudnnDestroyRNNDataDescriptor
);
descriptor!(
    RnnDesc,
    sys::cudnnRNNDescriptor_t,
    cudnnCreateRNNDescriptor,
    cudnnDestroyRNNDescriptor
);
descriptor!(
    DropoutDesc,
    sys::cudnnDropoutDescriptor_t,
    cudnnCreateDropoutDescriptor,
    cudnnDestroyDropoutDescriptor
);

pub(crate) struct Handle(pub(crate) sys::cudnnHandle_t);

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by cudnnCreate and destroyed once.
        unsafe { sys::cudnnDestroy(self.0) };
    }
}

thread_local! {
    // Handles are neither Send nor Sync, so each thread keeps its own per device.
    static HANDLES: RefCell<HashMap<DeviceId, Rc<Handle>>> = RefCell::new(HashMap::new());
}

/// This thread's cuDNN handle for `dev`, bound to the device's stream, with the device's
/// context made current (cuDNN works in the current context, and a thread may drive several
/// GPUs).
pub(crate) fn handle(dev: &CudaDevice) -> Result<Rc<Handle>> {
    let stream = dev.cuda_stream();
    stream.context().bind_to_thread().map_err(|e| {
        candle_core::Error::Msg(format!(
            "rnn: binding cuda:{}: {e}",
            stream.context().ordinal()
        ))
    })?;
    HANDLES.with(|handles| {
        if let Some(h) = handles.borrow().get(&dev.id()) {
            return Ok(h.clone());
        }
        let mut raw = std::ptr::null_mut();
        cudnn!(cudnnCreate(&mut raw))?;
        let h = Rc::new(Handle(raw));
        cudnn!(cudnnSetStream(h.0, stream.cu_stream() as sys::cudaStream_t))?;
        handles.borrow_mut().insert(dev.id(), h.clone());
        Ok(h)
    })
}

/// The first cuDNN whose RNN kernels take bf16 data.
const BF16_RNN_SINCE: usize = 91300;

pub(crate) fn data_type(dtype: DType) -> Result<sys::cudnnDataType_t> {
    use sys::cudnnDataType_t as D;
    Ok(match dtype {
        DType::F32 => D::CUDNN_DATA_FLOAT,
        DType::F64 => D::CUDNN_DATA_DOUBLE,
        DType::F16 => D::CUDNN_DATA_HALF,
        DType::BF16 if cudnn_version() < BF16_RNN_SINCE => candle_core::bail!(
            "rnn on cuda: bf16 RNNs need cuDNN {}.{} or newer, this process loaded {}",
            BF16_RNN_SINCE / 10000,
            BF16_RNN_SINCE / 100 % 100,
            cudnn_version()
        ),
        DType::BF16 => D::CUDNN_DATA_BFLOAT16,
        dt => candle_core::bail!(
            "rnn on cuda: dtype {dt:?} is not supported (f16, bf16, f32 and f64 are)"
        ),
    })
}

/// The cuDNN library version the process loaded, e.g. 91900.
pub fn cudnn_version() -> usize {
    // SAFETY: no arguments, no preconditions.
    unsafe { sys::cudnnGetVersion() }
}
