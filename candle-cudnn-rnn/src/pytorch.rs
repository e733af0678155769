//! PyTorch interchange: `nn.LSTM`/`nn.GRU` `state_dict` names and shapes, through safetensors.

use crate::layout::{Bias, RnnDims};
use crate::RnnMode;
use candle_core::{bail, DType, Device, Result, Tensor};
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

/// The flat weight from a `VarBuilder` holding PyTorch-named tensors (a `state_dict` in
/// safetensors), folding `bias_hh` into a single-bias module's `bias_ih` as [`load_pytorch`].
pub(crate) fn flat_from_var_builder(dims: &RnnDims, vb: &candle_nn::VarBuilder) -> Result<Tensor> {
    let mut tensors = HashMap::new();
    for p in dims.params() {
        if let (Some(rest), Bias::Single) = (p.name.strip_prefix("bias_ih"), dims.bias) {
            let hh = format!("bias_hh{rest}");
            if vb.contains_tensor(&hh) {
                tensors.insert(hh.clone(), vb.get(p.shape.clone(), &hh)?);
            }
        }
        tensors.insert(p.name.clone(), vb.get(p.shape, &p.name)?);
    }
    if dims.bias == Bias::Single {
        fold_recurrent_biases(dims, "", &mut tensors)?;
    }
    flat_from_named(dims, |name, _| Ok(tensors[name].clone()))
}

/// Writes `named` (a module's weights under PyTorch's names) as a safetensors file, each name
/// prefixed by `prefix`; a single-bias module's file also gets zero `bias_hh` tensors, so that
/// `nn.LSTM`/`nn.GRU` load it as it is and compute the same.
pub(crate) fn save_named(
    dims: &RnnDims,
    named: Vec<(String, Tensor)>,
    prefix: &str,
    path: &Path,
) -> Result<()> {
    let mut tensors: HashMap<String, Tensor> = HashMap::new();
    for (name, t) in named {
        if dims.bias == Bias::Single {
            if let Some(rest) = name.strip_prefix("bias_ih") {
                tensors.insert(format!("{prefix}bias_hh{rest}"), t.zeros_like()?);
            }
        }
        tensors.insert(format!("{prefix}{name}"), t.contiguous()?);
    }
    candle_core::safetensors::save(&tensors, path)
        .map_err(|e| candle_core::Error::Msg(format!("rnn: writing {}: {e}", path.display())))
}

/// Folds PyTorch's `bias_hh` into `bias_ih` for a single-bias module: exact for an LSTM, and
/// for a GRU's r and z gates; a GRU's n-gate part sits inside `r ⊙ (...)`, so it must be zero.
fn fold_recurrent_biases(
    dims: &RnnDims,
    prefix: &str,
    tensors: &mut HashMap<String, Tensor>,
) -> Result<()> {
    for p in dims.params() {
        let Some(rest) = p.name.strip_prefix("bias_ih") else {
            continue;
        };
        let Some(b_hh) = tensors.remove(&format!("{prefix}bias_hh{rest}")) else {
            continue;
        };
        let h = dims.hidden_size;
        if dims.mode == RnnMode::Gru {
            let n = b_hh.narrow(0, 2 * h, h)?.abs()?.max_all()?;
            if n.to_dtype(DType::F64)?.to_scalar::<f64>()? != 0.0 {
                bail!(
                    "rnn: {prefix}bias_hh{rest} has a non-zero n-gate part, which a single-bias \
                     GRU cannot represent"
                )
            }
        }
        let key = format!("{prefix}{}", p.name);
        if let Some(b_ih) = tensors.get(&key) {
            let sum = (b_ih + b_hh.to_dtype(b_ih.dtype())?)?;
            tensors.insert(key, sum);
        }
    }
    Ok(())
}

/// Reads PyTorch-named weights from a safetensors file into a flat weight for `dims`.
pub fn load_pytorch(
    dims: &RnnDims,
    prefix: &str,
    path: impl AsRef<Path>,
    device: &Device,
) -> Result<Tensor> {
    let path = path.as_ref();
    let mut tensors = candle_core::safetensors::load(path, device)
        .map_err(|e| candle_core::Error::Msg(format!("rnn: reading {}: {e}", path.display())))?;
    if dims.bias == Bias::Single {
        fold_recurrent_biases(dims, prefix, &mut tensors)?;
    }
    flat_from_named(dims, |name, _| {
        tensors.remove(&format!("{prefix}{name}")).ok_or_else(|| {
            candle_core::Error::Msg(format!(
                "rnn: {} has no tensor {prefix}{name}",
                path.display()
            ))
        })
    })
}
