//! The GPU backends this build has, and which one serves a module: our persistent LSTM for
//! [`RnnAlgo::Persistent`] (it hands the calls it does not take to cuDNN), and for
//! [`RnnAlgo::Auto`] when the module has calls it may take (it then measures itself against
//! cuDNN's algorithms); cuDNN otherwise.

use crate::backend::GpuBackend;
use crate::layout::RnnDims;
use crate::{RnnAlgo, RnnConfig};
use std::sync::Arc;

/// The backend that runs a module of `dims` built with `cfg` on a GPU.
pub(crate) fn gpu_backend(dims: RnnDims, cfg: &RnnConfig) -> Arc<dyn GpuBackend> {
    let ours = match cfg.algo {
        RnnAlgo::Persistent => true,
        RnnAlgo::Auto => crate::persistent::may_serve(&dims),
        _ => false,
    };
    if ours {
        return Arc::new(crate::persistent::PersistentLstm::new(dims, cfg));
    }
    Arc::new(crate::cudnn::CudnnRnn::new(
        dims,
        cfg.math,
        cfg.algo,
        cfg.dropout,
    ))
}
