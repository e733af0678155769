//! The op's GPU backend: a module's kernel paths (cuDNN, and where the module may use them this
//! crate's persistent LSTM and GRU kernels), with each call routed to the kernel that
//! `crate::choose` picks for it, and its backward to the path that ran its forward.

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
    Arc::new(Dispatch {
        chooser: Chooser::new((cfg.algo, cfg.launch, cfg.math), dims),
        paths: Backends::new(dims, cfg),
        served: Default::default(),
    })
}

/// Which algorithm served each `(seq, batch, train)`, and the last call.
#[derive(Default)]
struct Served {
    by_shape: HashMap<(usize, usize, bool), RnnAlgo>,
    last: Option<RnnAlgo>,
}

/// A module's kernel paths and the choice between them.
struct Dispatch {
    chooser: Chooser,
    paths: Backends,
    /// Which algorithm served each call shape, and the last call.
    served: Mutex<Served>,
}

impl Dispatch {
    fn served(&self) -> std::sync::MutexGuard<'_, Served> {
        self.served.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The forward of `inputs` on `kernel`, its reserve tagged with the path that made it.
    fn run(&self, kernel: Kernel, inputs: ForwardInputs) -> Result<Forwarded> {
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
}

/// A forward's reserve, tagged with the path that made it.
enum Made {
    Persistent(GpuReserve),
    Cudnn(GpuReserve),
}

impl GpuBackend for Dispatch {
    fn forward(&self, inputs: ForwardInputs) -> Result<Forwarded> {
        let kernel = self.chooser.choose(&self.paths, inputs)?;
        let (kernel, made) = match (kernel, self.run(kernel, inputs)) {
            // A persistent algorithm of cuDNN that a rule picked but cuDNN refuses for this
            // configuration (before running anything): `Standard` serves, now and from now on.
            (Kernel::Cudnn(algo), Err(_)) if self.chooser.may_fall_back(algo) => {
                self.chooser.refused(algo, inputs)?;
                let standard = Kernel::Cudnn(RnnAlgo::Standard);
                (standard, self.run(standard, inputs))
            }
            (kernel, made) => (kernel, made),
        };
        let made = made?;
        let mut served = self.served();
        let call = inputs.call;
        let algo = kernel.algo();
        served
            .by_shape
            .insert((call.seq, call.batch, inputs.train), algo);
        served.last = Some(algo);
        Ok(made)
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
        self.served().by_shape.get(&(seq, batch, train)).copied()
    }

    fn last_algo(&self) -> Option<RnnAlgo> {
        self.served().last
    }

    /// Ours always; cuDNN where it reads the weights in place (not through a copy in its order).
    fn takes_weight_grad_buffer(&self, reserve: &GpuReserve) -> bool {
        match reserve.downcast_ref::<Made>() {
            Some(Made::Persistent(_)) => true,
            Some(Made::Cudnn(_)) => self.paths.cudnn.weights_in_place() == Some(true),
            None => false,
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
