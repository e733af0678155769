//! A run: what it is ([`RunSpec`], fixed when it starts: `--resume` must ask for the same) and
//! how far it has come ([`RunProgress`], advanced every epoch). Checkpoints keep both.

use crate::config::precision::Precision;
use crate::config::{LmConfig, Preset};
use crate::model::RnnKind;
use crate::optim::loss_scale::LossScale;
use anyhow::{ensure, Result};
use serde::{Deserialize, Serialize};

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
            rnn: RnnKind::Cudnn,
            precision: Precision::Fp32,
            seed: 0,
            vocab_size,
            max_batches: None,
        }
    }

    /// Whether a run checkpointed with `saved` continues as this one, or the first difference,
    /// named by its flag.
    pub fn check_resumes(&self, saved: &RunSpec) -> Result<()> {
        let same = |what: &str, a: String, b: String| -> Result<()> {
            ensure!(
                a == b,
                "it was trained with {what} {a}, this run asks for {b}"
            );
            Ok(())
        };
        same(
            "config",
            format!("{:?} {:?}", saved.preset, saved.config),
            format!("{:?} {:?}", self.preset, self.config),
        )?;
        same(
            "--rnn",
            format!("{:?}", saved.rnn),
            format!("{:?}", self.rnn),
        )?;
        same(
            "--precision",
            format!("{:?}", saved.precision),
            format!("{:?}", self.precision),
        )?;
        same("--seed", saved.seed.to_string(), self.seed.to_string())?;
        let cap = |m: Option<usize>| m.map_or("none".into(), |m| m.to_string());
        same(
            "--max-batches",
            cap(saved.max_batches),
            cap(self.max_batches),
        )
    }
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
}
