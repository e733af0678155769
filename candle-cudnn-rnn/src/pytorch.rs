//! PyTorch interchange: `nn.LSTM`/`nn.GRU` `state_dict` names and shapes, through safetensors.

use crate::layout::RnnDims;
use crate::Rnn;
use candle_core::{bail, Device, Result, Tensor};
use std::collections::HashMap;
use std::path::Path;

/// Assembles the flat weight from PyTorch-named tensors; `get(name, shape)` fetches each.
pub fn flat_from_named(
    dims: &RnnDims,
    mut get: impl FnMut(&str, &[usize]) -> Result<Tensor>,
) -> Result<Tensor> {
    let parts = dims
        .params()
        .iter()
        .map(|p| {
            let t = get(&p.name, &p.shape)?;
            if t.dims() != p.shape.as_slice() {
                bail!(
                    "rnn: {} must have shape {:?}, got {:?}",
                    p.name,
                    p.shape,
                    t.dims()
                )
            }
            t.flatten_all()
        })
        .collect::<Result<Vec<_>>>()?;
    Tensor::cat(&parts, 0)
}

/// Writes the weights as a safetensors file with PyTorch's names, each prefixed by `prefix`
/// (e.g. `"lstm."` for a submodule named `lstm`).
pub fn save_pytorch(rnn: &Rnn, prefix: &str, path: impl AsRef<Path>) -> Result<()> {
    let tensors: HashMap<String, Tensor> = rnn
        .named_weights()?
        .into_iter()
        .map(|(name, t)| Ok((format!("{prefix}{name}"), t.contiguous()?)))
        .collect::<Result<_>>()?;
    candle_core::safetensors::save(&tensors, path)
}

/// Reads PyTorch-named weights from a safetensors file into a flat weight for `dims`.
pub fn load_pytorch(
    dims: &RnnDims,
    prefix: &str,
    path: impl AsRef<Path>,
    device: &Device,
) -> Result<Tensor> {
    let path = path.as_ref();
    let mut tensors = candle_core::safetensors::load(path, device)?;
    flat_from_named(dims, |name, _| {
        tensors.remove(&format!("{prefix}{name}")).ok_or_else(|| {
            candle_core::Error::Msg(format!(
                "rnn: {} has no tensor {prefix}{name}",
                path.display()
            ))
        })
    })
}
