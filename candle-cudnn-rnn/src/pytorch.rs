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

/// The start of a submodule's tensor names in a `state_dict`: `lstm` and `lstm.` both give
/// `lstm.` (PyTorch joins the names with a dot), `""` gives none.
fn submodule(prefix: &str) -> String {
    match prefix {
        "" => String::new(),
        p if p.ends_with('.') => p.to_owned(),
        p => format!("{p}."),
    }
}

/// Writes `named` (a module's weights under PyTorch's names) as a safetensors file, each name
/// under the submodule `prefix`; a single-bias module's file also gets zero `bias_hh` tensors,
/// so that `nn.LSTM`/`nn.GRU` load it as it is and compute the same.
pub(crate) fn save_named(
    dims: &RnnDims,
    named: Vec<(String, Tensor)>,
    prefix: &str,
    path: &Path,
) -> Result<()> {
    let prefix = submodule(prefix);
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

/// Reads PyTorch-named weights from a safetensors file into a flat weight for `dims`: the
/// tensors of the submodule `prefix` (`"lstm"` or `"lstm."` for `lstm.weight_ih_l0`, ...; `""`
/// for a file of the module alone).
///
/// A file that PyTorch wrote (`safetensors.torch.save_file(model.state_dict(), path)` for a
/// model whose `nn.LSTM` is `model.lstm`) loads either way:
///
/// ```
/// use candle_core::{DType, Device, Tensor};
/// use candle_cudnn_rnn::{load_pytorch, lstm, save_pytorch, RnnConfig};
/// use candle_nn::{VarBuilder, VarMap};
///
/// # fn main() -> candle_core::Result<()> {
/// let dev = Device::Cpu;
/// let cfg = RnnConfig { num_layers: 2, ..Default::default() };
/// # let path = std::env::temp_dir().join("candle-cudnn-rnn-doc-lstm.safetensors");
/// # let made = lstm(8, 16, cfg, VarBuilder::from_varmap(&VarMap::new(), DType::F32, &dev))?;
/// # save_pytorch(&made, "lstm", &path)?; // stands in for PyTorch's file
/// // A module over the file's tensors: `VarBuilder` assembles the flat weight.
/// let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&path], DType::F32, &dev)? };
/// let rnn = lstm(8, 16, cfg, vb.pp("lstm"))?;
/// // Or the flat weight itself, into a module you train (a `Var` of a `VarMap`, say).
/// let flat = load_pytorch(rnn.dims(), "lstm", &path, &dev)?;
/// let trained = rnn.with_weight(flat)?;
/// let x = Tensor::randn(0f32, 1., (5, 3, 8), &dev)?;
/// let (y, _) = trained.forward(&x, None)?;
/// assert_eq!(y.dims(), &[5, 3, 16]);
/// # Ok(())
/// # }
/// ```
pub fn load_pytorch(
    dims: &RnnDims,
    prefix: &str,
    path: impl AsRef<Path>,
    device: &Device,
) -> Result<Tensor> {
    let path = path.as_ref();
    let prefix = &submodule(prefix);
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
