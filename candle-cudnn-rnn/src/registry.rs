//! The op's GPU backend: a module's kernel paths (cuDNN, and where the module may use them this
//! crate's persistent LSTM kernels), with each call routed to the kernel that `crate::choose`
//! picks for it, and its backward to the path that ran its forward.

use crate::backend::{
    pack, unpack, BackwardInputs, ForwardInputs, Forwarded, GpuBackend, GpuReserve, Gradients,
};
use crate::choose::{Backends, Chooser, Kernel};
use crate::layout::RnnDims;
use crate::{RnnAlgo, RnnConfig};
use candle_core::cuda_backend::CudaDevice;
use candle_core::{bail, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The backend that runs a module of `dims` built with `cfg` on a GPU.
pub(crate) fn gpu_backend(dims: RnnDims, cfg: &RnnConfig) -> Arc<dyn GpuBackend> {
    let paths = Backends::new(dims, cfg);
    // Where a call may go either way (ours or cuDNN), each call's kernel is recorded for
    // `chosen_algo`; elsewhere only `Auto`'s measurements say which algorithm served.
    let either_way = cfg.algo == RnnAlgo::Persistent || paths.ours.is_some();
    Arc::new(Dispatch {
        chooser: Chooser::new(cfg.algo, dims),
        paths,
        served: either_way.then(Default::default),
    })
}

/// Which algorithm served each `(seq, batch, train)`.
type Served = Mutex<HashMap<(usize, usize, bool), RnnAlgo>>;

/// A module's kernel paths and the choice between them.
struct Dispatch {
    chooser: Chooser,
    paths: Backends,
    /// Where a call may go either way: which algorithm served each shape.
    served: Option<Served>,
}

/// A forward's reserve, tagged with the path that made it.
enum Made {
    Persistent(GpuReserve),
    Cudnn(GpuReserve),
}

impl GpuBackend for Dispatch {
    fn forward(&self, inputs: ForwardInputs) -> Result<Forwarded> {
        let kernel = self.chooser.choose(&self.paths, inputs)?;
        if let Some(served) = &self.served {
            let mut served = served.lock().unwrap_or_else(|e| e.into_inner());
            let call = inputs.call;
            served.insert((call.seq, call.batch, inputs.train), kernel.algo());
        }
        let tagged = |made: fn(GpuReserve) -> Made, (out, reserve): Forwarded| {
            (out, reserve.map(|r| Box::new(made(r)) as GpuReserve))
        };
        Ok(match (kernel, &self.paths.ours) {
            (Kernel::Persistent(plan), Some(ours)) => {
                tagged(Made::Persistent, ours.forward(plan, inputs)?)
            }
            (Kernel::Persistent(_), None) => {
                bail!("rnn: the persistent kernels were chosen for a module without them")
            }
            (Kernel::Cudnn(algo), _) => {
                tagged(Made::Cudnn, self.paths.cudnn.forward(algo, inputs)?)
            }
        })
    }

    fn backward(&self, reserve: GpuReserve, inputs: BackwardInputs) -> Result<Gradients> {
        let Ok(made) = reserve.downcast::<Made>() else {
            bail!("rnn backward: the forward's reserve was not this module's")
        };
        match (*made, &self.paths.ours) {
            (Made::Persistent(r), Some(ours)) => ours.backward(r, inputs),
            (Made::Persistent(_), None) => {
                bail!("rnn backward: a persistent-kernel reserve for a module without them")
            }
            (Made::Cudnn(r), _) => self.paths.cudnn.backward(r, inputs),
        }
    }

    fn chosen_algo(&self, seq: usize, batch: usize, train: bool) -> Option<RnnAlgo> {
        match &self.served {
            Some(served) => {
                let served = served.lock().unwrap_or_else(|e| e.into_inner());
                served.get(&(seq, batch, train)).copied()
            }
            None => self.chooser.measured(seq, batch, train),
        }
    }

    fn weights_in_place(&self) -> Option<bool> {
        self.paths.cudnn.weights_in_place()
    }

    /// Ours' state (their mask counter) and cuDNN's (its dropout states), packed.
    fn dropout_state(&self, dev: &CudaDevice) -> Result<Vec<u8>> {
        let ours = match &self.paths.ours {
            Some(ours) => ours.dropout_state(dev)?,
            None => Vec::new(),
        };
        let cudnn = self.paths.cudnn.dropout_state(dev)?;
        Ok(pack(&[&ours, &cudnn]))
    }

    fn restore_dropout_state(
        &self,
        dev: &CudaDevice,
        (seed, generation): (u64, u64),
        state: &[u8],
    ) -> Result<()> {
        let (ours, cudnn) = match unpack(state, "the module's dropout state")?[..] {
            [] => (&[][..], &[][..]),
            [ours, cudnn] => (ours, cudnn),
            _ => bail!("rnn: the module's dropout state is not one this crate wrote"),
        };
        match (&self.paths.ours, ours.is_empty()) {
            (Some(o), _) => o.restore_dropout_state(dev, generation, ours)?,
            (None, true) => {}
            (None, false) => bail!(
                "rnn: the dropout state is of the crate's persistent kernels, which this module \
                 does not run"
            ),
        }
        self.paths
            .cudnn
            .restore_dropout_state(dev, (seed, generation), cudnn)
    }
}
