//! The GPU backends this build has, and which one serves a module. Today every algorithm of
//! [`RnnAlgo`](crate::RnnAlgo) is cuDNN's; a kernel path of our own joins here.

use crate::backend::GpuBackend;
use crate::layout::RnnDims;
use crate::RnnConfig;
use std::sync::Arc;

/// The backend that runs a module of `dims` built with `cfg` on a GPU.
pub(crate) fn gpu_backend(dims: RnnDims, cfg: &RnnConfig) -> Arc<dyn GpuBackend> {
    Arc::new(crate::cudnn::CudnnRnn::new(
        dims,
        cfg.math,
        cfg.algo,
        cfg.dropout,
    ))
}
