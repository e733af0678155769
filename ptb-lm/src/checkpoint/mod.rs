//! Checkpoints: `model.safetensors` (weights, with the training state in its metadata, so the
//! two can never disagree), `tokenizer.json`, and `state.json` (the same state, for people).
//! Every file is written to a temporary name, synced, then renamed over the old one.

pub mod host_copy;
pub mod run_dir;
pub mod writer;

use crate::checkpoint::host_copy::{HostCopies, HostValues};
use crate::model::RnnKind;
use crate::train::run::{RunProgress, RunSpec};
use anyhow::{bail, Context, Result};
use candle_core::{Device, Tensor};
use candle_cudnn_rnn::{flat_from_named, RnnDims};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use tokenizers::Tokenizer;

const STATE_KEY: &str = "ptb-lm.state";

/// Everything besides the weights needed to continue or evaluate a run, as checkpoints keep it
/// (one flat JSON object, as written before the two halves were separate types).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    #[serde(flatten)]
    pub spec: RunSpec,
    #[serde(flatten)]
    pub progress: RunProgress,
    /// Layout of the fused LSTM's flat `rnn.weight`: 1 is cuDNN's order (matrices, then
    /// biases); 0, the default of checkpoints that predate the field, is PyTorch's per-layer
    /// order, converted on load.
    #[serde(default)]
    pub rnn_layout: u32,
}

/// The flat-weight layout this version writes.
pub const RNN_LAYOUT: u32 = 1;

/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f =
        std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", tmp.display()))?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    if let Some(dir) = path.parent() {
        // Make the rename itself durable.
        std::fs::File::open(dir).and_then(|d| d.sync_all()).ok();
    }
    Ok(())
}

/// A checkpoint taken out of the model, ready to be written: the weights copied to the host
/// (on the caller's thread, so that training may go on changing its own), the rest encoded.
/// Serializing and writing may then happen on another thread.
pub struct Encoded {
    dir: PathBuf,
    tokenizer: String,
    names: Vec<String>,
    values: HostValues,
    /// What a run stopped inside an epoch needs besides the weights, on the host.
    resume: Vec<(String, Tensor)>,
    state: String,
}

/// The names of the tensors a checkpoint taken inside an epoch adds to the weights start so.
pub const RESUME_PREFIX: &str = "resume.";

/// Copies the weights to the host and encodes the state of a checkpoint of `dir`.
pub fn encode(
    dir: &Path,
    weights: &[(String, Tensor)],
    (spec, progress): (&RunSpec, &RunProgress),
    tok: &Tokenizer,
    copies: &mut HostCopies,
) -> Result<Encoded> {
    let saved = Saved {
        spec: spec.clone(),
        progress: progress.clone(),
        rnn_layout: RNN_LAYOUT,
    };
    let tensors: Vec<&Tensor> = weights.iter().map(|(_, t)| t).collect();
    Ok(Encoded {
        dir: dir.to_owned(),
        tokenizer: tok.to_string(true).map_err(anyhow::Error::msg)?,
        names: weights.iter().map(|(n, _)| n.clone()).collect(),
        values: copies.copy(&tensors)?,
        resume: Vec::new(),
        state: serde_json::to_string_pretty(&saved)?,
    })
}

impl Encoded {
    /// With `tensors` (named without [`RESUME_PREFIX`]) copied to the host beside the weights:
    /// what a run stopped inside an epoch continues from.
    pub fn with_resume(mut self, tensors: Vec<(String, Tensor)>) -> Result<Self> {
        for (name, t) in tensors {
            self.resume
                .push((format!("{RESUME_PREFIX}{name}"), t.to_device(&Device::Cpu)?));
        }
        Ok(self)
    }

    /// Serializes and writes the files, each atomically; the model file (which carries the
    /// state in its metadata) decides what a resume sees.
    pub fn write(&self) -> Result<()> {
        let meta = HashMap::from([(STATE_KEY.to_owned(), self.state.clone())]);
        let tensors = self.values.tensors()?;
        let resume = self.resume.iter().map(|(n, t)| (n.as_str(), t));
        let named = self
            .names
            .iter()
            .map(String::as_str)
            .zip(&tensors)
            .chain(resume);
        let model = safetensors::serialize(named, Some(meta)).context("serializing the weights")?;
        let dir = &self.dir;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        write_atomic(&dir.join("tokenizer.json"), self.tokenizer.as_bytes())?;
        write_atomic(&dir.join("model.safetensors"), &model)?;
        write_atomic(&dir.join("state.json"), self.state.as_bytes())?;
        Ok(())
    }
}

/// A flat weight in PyTorch's per-layer order (each layer-direction's tensors together, as
/// `state_dict` lists them) rearranged into the canonical layout.
fn from_per_layer_order(dims: &RnnDims, flat: &Tensor) -> Result<Tensor> {
    let mut params = dims.params();
    params.sort_by_key(|p| (p.layer, p.direction, p.kind));
    let mut named = HashMap::new();
    let mut at = 0;
    for p in params {
        let len = p.len();
        named.insert(p.name, flat.narrow(0, at, len)?.reshape(p.shape)?);
        at += len;
    }
    Ok(flat_from_named(dims, |name, _| Ok(named[name].clone()))?)
}

pub struct Checkpoint {
    pub weights: HashMap<String, Tensor>,
    /// What a run stopped inside an epoch continues from (`Encoded::with_resume`), by name.
    pub resume: HashMap<String, Tensor>,
    pub spec: RunSpec,
    pub progress: RunProgress,
    pub tokenizer: Tokenizer,
}

pub fn load(dir: &Path, device: &Device) -> Result<Checkpoint> {
    let model = dir.join("model.safetensors");
    let bytes =
        std::fs::read(&model).with_context(|| format!("reading checkpoint {}", model.display()))?;
    let corrupt = || format!("{} is not a valid ptb-lm checkpoint", model.display());
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).with_context(corrupt)?;
    let Some(state_json) = meta.metadata().as_ref().and_then(|m| m.get(STATE_KEY)) else {
        bail!("{}: no training state in its metadata", corrupt());
    };
    let saved: Saved = serde_json::from_str(state_json).with_context(corrupt)?;
    let mut weights =
        candle_core::safetensors::load_buffer(&bytes, device).with_context(corrupt)?;
    if saved.rnn_layout == 0 && saved.spec.rnn != RnnKind::CandleNn {
        let old = weights.get("rnn.weight").with_context(corrupt)?;
        let new = from_per_layer_order(&crate::model::rnn_dims(&saved.spec.config), old)?;
        weights.insert("rnn.weight".into(), new);
    }
    let tok_path = dir.join("tokenizer.json");
    let tokenizer = Tokenizer::from_file(&tok_path)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("reading {}", tok_path.display()))?;
    let resume = weights
        .extract_if(|name, _| name.starts_with(RESUME_PREFIX))
        .map(|(name, t)| (name[RESUME_PREFIX.len()..].to_owned(), t))
        .collect();
    Ok(Checkpoint {
        weights,
        resume,
        spec: saved.spec,
        progress: saved.progress,
        tokenizer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each tensor of an old per-layer-order weight lands under its name in the new layout.
    use crate::config::{LmConfig, Preset};

    #[test]
    fn per_layer_order_converts_by_name() {
        let mut cfg = LmConfig::preset(Preset::Small);
        (cfg.hidden_size, cfg.lstm_bias) = (3, crate::config::LstmBias::Double);
        let dims = crate::model::rnn_dims(&cfg);
        let n = dims.weight_count();
        let old = Tensor::arange(0f32, n as f32, &Device::Cpu).unwrap();
        let new = from_per_layer_order(&dims, &old)
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let mut params = dims.params();
        params.sort_by_key(|p| (p.layer, p.direction, p.kind));
        let mut at = 0;
        for p in params {
            let want: Vec<f32> = (at..at + p.len()).map(|v| v as f32).collect();
            assert_eq!(new[p.offset..p.offset + p.len()], want[..], "{}", p.name);
            at += p.len();
        }
        assert_ne!(
            new,
            old.to_vec1::<f32>().unwrap(),
            "two layers: the layouts differ"
        );
    }
}

#[cfg(test)]
mod format_tests {
    use super::*;
    use crate::config::{LmConfig, Preset};

    /// The state is one flat object, as checkpoints written before the split have it.
    #[test]
    fn saved_state_is_one_flat_object() {
        let mut spec = RunSpec::new(Preset::Small, LmConfig::preset(Preset::Small), 10_000);
        spec.seed = 4;
        let progress = RunProgress {
            epochs_done: 2,
            ..Default::default()
        };
        let saved = Saved {
            spec,
            progress,
            rnn_layout: RNN_LAYOUT,
        };
        let v = serde_json::to_value(&saved).unwrap();
        for key in [
            "preset",
            "config",
            "seed",
            "epochs_done",
            "history",
            "rnn_layout",
        ] {
            assert!(v.get(key).is_some(), "{key} in {v}");
        }
        let back: Saved = serde_json::from_value(v).unwrap();
        assert_eq!(back, saved);
        // A checkpoint from before rnn_layout and loss_scale existed still reads.
        let mut old = serde_json::to_value(&saved).unwrap();
        let o = old.as_object_mut().unwrap();
        o.remove("rnn_layout");
        o.remove("loss_scale");
        let back: Saved = serde_json::from_value(old).unwrap();
        assert_eq!((back.rnn_layout, back.progress.epochs_done), (0, 2));
    }
}
