//! The three configurations of the TensorFlow PTB tutorial (Zaremba et al. 2014).

pub mod precision;
pub mod ranges;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    Small,
    Medium,
    Large,
}

/// The LSTM's bias vectors and their initial value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LstmBias {
    /// One bias per gate, starting at zero: the tutorial's TensorFlow cells
    /// (`BasicLSTMCell`/`LSTMBlockCell` with `forget_bias=0`).
    Single,
    /// `b_ih` and `b_hh`, both uniform in ±init_scale like every other weight: Zaremba's
    /// Torch code and PyTorch's `nn.LSTM`. Their sum is the effective bias, so it starts wider
    /// and learns at twice the learning rate.
    Double,
}

/// Checkpoints written before the choice existed trained with two biases.
fn double() -> LstmBias {
    LstmBias::Double
}

/// How the embedding's gradient counts in the global norm that clipping holds to
/// `max_grad_norm`. Only the norm differs: the update is the summed gradient either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbeddingNorm {
    /// One row per looked-up word, before the rows of repeated words are summed: the tutorial's
    /// `clip_by_global_norm` takes the norm of the `IndexedSlices` values a lookup's gradient is.
    Lookups,
    /// The summed gradient of the whole table, as any dense gradient: PyTorch's
    /// `clip_grad_norm_` and Zaremba's Torch code.
    Table,
}

/// Checkpoints written before the choice existed clipped with the table's norm.
fn table() -> EmbeddingNorm {
    EmbeddingNorm::Table
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LmConfig {
    pub init_scale: f64,
    pub learning_rate: f64,
    pub max_grad_norm: f64,
    pub num_layers: usize,
    pub num_steps: usize,
    pub hidden_size: usize,
    /// Epochs at the initial learning rate.
    pub max_epoch: usize,
    /// Epochs in all.
    pub max_max_epoch: usize,
    pub keep_prob: f64,
    pub lr_decay: f64,
    pub batch_size: usize,
    /// The most word types kept; rarer words become `<unk>`.
    pub vocab_size: usize,
    #[serde(default = "double")]
    pub lstm_bias: LstmBias,
    #[serde(default = "table")]
    pub embedding_norm: EmbeddingNorm,
}

impl LmConfig {
    pub fn preset(p: Preset) -> Self {
        let small = Self {
            init_scale: 0.1,
            learning_rate: 1.0,
            max_grad_norm: 5.0,
            num_layers: 2,
            num_steps: 20,
            hidden_size: 200,
            max_epoch: 4,
            max_max_epoch: 13,
            keep_prob: 1.0,
            lr_decay: 0.5,
            batch_size: 20,
            vocab_size: 10_000,
            lstm_bias: LstmBias::Single,
            embedding_norm: EmbeddingNorm::Lookups,
        };
        match p {
            Preset::Small => small,
            Preset::Medium => Self {
                init_scale: 0.05,
                num_steps: 35,
                hidden_size: 650,
                max_epoch: 6,
                max_max_epoch: 39,
                keep_prob: 0.5,
                lr_decay: 0.8,
                ..small
            },
            Preset::Large => Self {
                init_scale: 0.04,
                max_grad_norm: 10.0,
                num_steps: 35,
                hidden_size: 1500,
                max_epoch: 14,
                max_max_epoch: 55,
                keep_prob: 0.35,
                lr_decay: 1.0 / 1.15,
                ..small
            },
        }
    }

    /// The schedule that produced the published numbers: `lr0 * lr_decay^max(epoch - max_epoch,
    /// 0)`, `epoch` 0-based, i.e. `max_epoch + 1` epochs at `lr0`. That is the TensorFlow
    /// tutorial's code when it reported its table (`max(i - config.max_epoch, 0.0)`) and
    /// Zaremba's Torch code (decay after each epoch `> max_epoch`); later TensorFlow versions
    /// decay one epoch earlier (`i + 1 - max_epoch`) without updating the table.
    pub fn learning_rate_at(&self, epoch: usize) -> f64 {
        let decays = epoch.saturating_sub(self.max_epoch);
        self.learning_rate * self.lr_decay.powi(decays as i32)
    }

    pub fn dropout(&self) -> f32 {
        (1.0 - self.keep_prob) as f32
    }

    /// Checks what the flags cannot check one by one: the sizes together must make a model
    /// and a batch that fit in memory (each at most [`MAX_VALUES`] values), and every field
    /// lies in the range its flag accepts (a configuration from a checkpoint never met the
    /// flags). The message names the flags involved.
    pub fn validate(&self) -> Result<(), String> {
        use crate::config::ranges::{
            BATCH_SIZE, EPOCHS, HIDDEN_SIZE, NUM_LAYERS, NUM_STEPS, VOCAB_SIZE,
        };
        let sizes = [
            ("--num-layers", self.num_layers, NUM_LAYERS),
            ("--num-steps", self.num_steps, NUM_STEPS),
            ("--hidden-size", self.hidden_size, HIDDEN_SIZE),
            ("--batch-size", self.batch_size, BATCH_SIZE),
            ("--max-max-epoch", self.max_max_epoch, EPOCHS),
            ("--vocab-size", self.vocab_size, VOCAB_SIZE),
        ];
        for (flag, v, (lo, hi)) in sizes {
            if v < lo || v > hi {
                return Err(format!(
                    "{flag} {v}: must be a whole number from {lo} to {hi}"
                ));
            }
        }
        let fractions = [
            ("--keep-prob", self.keep_prob),
            ("--lr-decay", self.lr_decay),
        ];
        for (flag, v) in fractions {
            if !(v > 0.0 && v <= 1.0) {
                return Err(format!("{flag} {v}: must be greater than 0 and at most 1"));
            }
        }
        let positives = [
            ("--init-scale", self.init_scale),
            ("--learning-rate", self.learning_rate),
            ("--max-grad-norm", self.max_grad_norm),
        ];
        for (flag, v) in positives {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "{flag} {v}: must be a finite number greater than 0"
                ));
            }
        }
        let [v, h, l, b, s] = [
            self.vocab_size,
            self.hidden_size,
            self.num_layers,
            self.batch_size,
            self.num_steps,
        ]
        .map(|n| n as u128);
        // Embedding and softmax (with its bias), and per layer 4 gates over [x | h] and a bias.
        let params = 2 * v * h + v + l * 4 * h * (2 * h + 2);
        if params > MAX_VALUES {
            return Err(format!(
                "--hidden-size {h}, --num-layers {l} and --vocab-size {v} make a model of \
                 {params} parameters; ptb-lm takes at most {MAX_VALUES}"
            ));
        }
        let per_batch = b * s * v.max(4 * h * l);
        if per_batch > MAX_VALUES {
            return Err(format!(
                "--batch-size {b} x --num-steps {s} with --vocab-size {v} and --hidden-size {h} \
                 need {per_batch} values per batch; ptb-lm takes at most {MAX_VALUES}"
            ));
        }
        Ok(())
    }
}

/// The most values one model or one batch's activations may hold: 2^31, 8 GiB in f32.
pub const MAX_VALUES: u128 = 1 << 31;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learning_rate_schedule_follows_the_tutorial() {
        let c = LmConfig::preset(Preset::Small);
        let lrs: Vec<f64> = (0..7).map(|e| c.learning_rate_at(e)).collect();
        assert_eq!(lrs, [1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.25]);
        let l = LmConfig::preset(Preset::Large);
        assert_eq!(l.learning_rate_at(14), 1.0);
        assert!((l.learning_rate_at(15) - 1.0 / 1.15).abs() < 1e-15);
        assert!((l.learning_rate_at(54) - 1.15f64.powi(-40)).abs() < 1e-15);
    }

    #[test]
    fn validation_names_the_flag() {
        for p in [Preset::Small, Preset::Medium, Preset::Large] {
            assert_eq!(LmConfig::preset(p).validate(), Ok(()));
        }
        let mut c = LmConfig::preset(Preset::Small);
        c.lr_decay = -1.0;
        assert!(c.validate().unwrap_err().starts_with("--lr-decay -1"));
        let mut c = LmConfig::preset(Preset::Large);
        (c.hidden_size, c.num_layers) = (16_384, 64);
        assert!(c.validate().unwrap_err().contains("parameters"));
        let mut c = LmConfig::preset(Preset::Small);
        (c.batch_size, c.num_steps) = (100_000, 10_000);
        assert!(c.validate().unwrap_err().contains("values per batch"));
    }

    #[test]
    fn presets_match_the_tutorial_table() {
        let m = LmConfig::preset(Preset::Medium);
        assert_eq!(
            (m.hidden_size, m.num_steps, m.max_max_epoch, m.keep_prob),
            (650, 35, 39, 0.5)
        );
        let l = LmConfig::preset(Preset::Large);
        assert_eq!(
            (l.hidden_size, l.max_grad_norm, l.max_epoch),
            (1500, 10.0, 14)
        );
    }
}
