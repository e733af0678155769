//! A run: what it is ([`RunSpec`], fixed when it starts: `--resume` must ask for the same) and
//! how far it has come ([`RunProgress`], advanced every epoch). Checkpoints keep both.

use crate::config::precision::Precision;
use crate::config::{LmConfig, Preset};
use crate::model::{MaskPosition, RnnKind};
use crate::optim::loss_scale::LossScale;
use crate::optim::Running;
use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What fixes a run's model and its every step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    pub preset: Preset,
    pub config: LmConfig,
    pub rnn: RnnKind,
    pub precision: Precision,
    pub seed: u64,
    /// Word types of the vocabulary the model was built for.
    pub vocab_size: usize,
    pub max_batches: Option<usize>,
}

impl RunSpec {
    /// A run of `config` (from `preset`) over `vocab_size` word types: the fused LSTM in fp32,
    /// seed 0, whole passes; callers change what their flags say.
    pub fn new(preset: Preset, config: LmConfig, vocab_size: usize) -> Self {
        Self {
            preset,
            config,
            rnn: RnnKind::Fused,
            precision: Precision::Fp32,
            seed: 0,
            vocab_size,
            max_batches: None,
        }
    }

    /// Whether a run checkpointed with `saved` continues as this one, or every setting that
    /// differs, named by its flag.
    pub fn check_resumes(&self, saved: &RunSpec) -> Result<()> {
        let mut differ = Vec::new();
        let mut same = |flag: &str, was: Value, now: Value| {
            if was != now {
                differ.push(format!(
                    "{flag} {}, this run asks for {}",
                    flag_value(&was),
                    flag_value(&now)
                ));
            }
        };
        same("--config", json(&saved.preset), json(&self.preset));
        // A preset's fields differ with it: past a differing preset, only the fields that
        // were overridden differ.
        if let (Value::Object(was), Value::Object(now)) = (json(&saved.config), json(&self.config))
        {
            for (field, value) in &was {
                let flag = format!("--{}", field.replace('_', "-"));
                let now = now.get(field).cloned().unwrap_or(Value::Null);
                if saved.preset == self.preset {
                    same(&flag, value.clone(), now);
                }
            }
        }
        same("--rnn", json(&saved.rnn), json(&self.rnn));
        same("--precision", json(&saved.precision), json(&self.precision));
        same("--seed", json(&saved.seed), json(&self.seed));
        same(
            "--max-batches",
            json(&saved.max_batches),
            json(&self.max_batches),
        );
        let taste = match saved.max_batches.is_some() && self.max_batches != saved.max_batches {
            true => {
                " (a run capped by --max-batches continues only as one: start the full run in \
                     another --out)"
            }
            false => "",
        };
        ensure!(
            differ.is_empty(),
            "it was trained with {}{taste}",
            differ.join("; with ")
        );
        Ok(())
    }
}

/// A setting as a flag takes it: `small`, `0.5`, `none`.
fn flag_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        v => v.to_string(),
    }
}

/// A setting as a JSON value, for comparing settings field by field.
fn json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The seed of an epoch's dropout masks: a resumed run starts each epoch where an
/// uninterrupted one would.
pub fn epoch_seed(seed: u64, epoch: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (epoch as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// One epoch's numbers, as printed and written to `metrics.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    pub epoch: usize,
    pub learning_rate: f64,
    pub train_perplexity: f64,
    pub valid_perplexity: f64,
    pub words_per_second: f64,
    pub seconds: f64,
    /// The mean global gradient norm of the epoch's steps, before clipping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grad_norm_mean: Option<f64>,
    /// The share of steps whose norm exceeded `max_grad_norm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipped_fraction: Option<f64>,
    /// f16 steps skipped because their scaled gradients overflowed, and the scale at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_steps: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<f64>,
}

/// What a run has done so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunProgress {
    pub epochs_done: usize,
    pub history: Vec<EpochMetrics>,
    /// The loss scale of f16 steps, where the run left it.
    #[serde(default)]
    pub loss_scale: Option<LossScale>,
    /// How far the epoch after `epochs_done` got, when the run stopped inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<PartialEpoch>,
}

/// An epoch stopped between two training steps (on an interrupt, or for a checkpoint every few
/// minutes), as a checkpoint keeps it: how far its pass got and the state its next step reads.
/// The carried LSTM state and the GPU's dropout state are tensors of the checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartialEpoch {
    /// Training steps done (all of the epoch's, when only its validation was left).
    pub batches: usize,
    /// Σ of their losses, and the seconds they took.
    pub cost: f64,
    pub seconds: f64,
    /// Where the dropout generators stand.
    pub masks: MaskPosition,
    /// The optimizer's running sums and loss scale.
    pub optimizer: Running,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resume that asks for other settings names each one by its flag, and nothing else.
    #[test]
    fn a_refused_resume_names_the_flags_that_differ() {
        let saved = RunSpec::new(Preset::Small, LmConfig::preset(Preset::Small), 10);
        assert!(saved.check_resumes(&saved).is_ok());
        let mut now = saved.clone();
        (now.config.hidden_size, now.config.keep_prob) = (24, 0.8);
        now.precision = Precision::Bf16;
        let e = now.check_resumes(&saved).unwrap_err().to_string();
        assert_eq!(
            e,
            "it was trained with --hidden-size 200, this run asks for 24; with --keep-prob 1.0, \
             this run asks for 0.8; with --precision fp32, this run asks for bf16"
        );
        let mut taste = saved.clone();
        taste.max_batches = Some(200);
        let e = saved.check_resumes(&taste).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "it was trained with --max-batches 200, this run asks for none (a run capped"
            ),
            "{e}"
        );
        let mut other = saved.clone();
        other.preset = Preset::Medium;
        other.config = LmConfig::preset(Preset::Medium);
        let e = other.check_resumes(&saved).unwrap_err().to_string();
        assert_eq!(
            e,
            "it was trained with --config small, this run asks for medium"
        );
    }
}
