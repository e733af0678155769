//! `--precision`: what one flag decides, planned in one place. A plan says whether candle's own
//! f32 matrix products may use TF32, how cuDNN multiplies f32 data, which dtype a training step
//! computes in (weights, loss and update stay f32), and whether the loss is scaled.

use candle_core::DType;
use candle_cudnn_rnn::MathMode;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f32 everywhere, strict FMA arithmetic
    Fp32,
    /// f32 data on TF32 tensor cores
    Tf32,
    /// f16 steps (tensor cores, f32 accumulation) with dynamic loss scaling
    F16,
    /// bf16 steps (tensor cores, f32 accumulation)
    Bf16,
}

/// Everything a precision changes, for every part of a run to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrecisionPlan {
    /// candle's f32 matrix products (the softmax layer, say) may round to TF32.
    pub tf32_matmul: bool,
    /// cuDNN's math on f32 data.
    pub rnn_math: MathMode,
    /// The dtype a training step computes in, over half copies of the f32 weights.
    pub compute: DType,
    /// The loss is multiplied before backward, and the gradients unscaled (f16's narrow range).
    pub loss_scaling: bool,
}

impl Precision {
    pub fn plan(self) -> PrecisionPlan {
        let (tf32, compute) = match self {
            Precision::Fp32 => (false, DType::F32),
            Precision::Tf32 => (true, DType::F32),
            Precision::F16 => (false, DType::F16),
            Precision::Bf16 => (false, DType::BF16),
        };
        PrecisionPlan {
            tf32_matmul: tf32,
            rnn_math: if tf32 { MathMode::Tf32 } else { MathMode::Fp32 },
            compute,
            loss_scaling: compute == DType::F16,
        }
    }
}

impl PrecisionPlan {
    /// The plan of evaluation: the same math on f32 data (a half state rounded after every
    /// step of a batch-1, 1-step test pass would cost perplexity).
    pub fn for_evaluation(self) -> Self {
        Self {
            compute: DType::F32,
            loss_scaling: false,
            ..self
        }
    }

    /// Sets candle's process-wide TF32 switch for its own f32 matrix products (cuDNN's math is
    /// per module, `rnn_math`).
    pub fn apply_to_matmuls(&self) {
        #[cfg(feature = "cuda")]
        candle_core::cuda::set_gemm_reduced_precision_f32(self.tf32_matmul);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_precision_plans_its_parts() {
        let p = Precision::Tf32.plan();
        assert!(p.tf32_matmul && p.rnn_math == MathMode::Tf32 && p.compute == DType::F32);
        let p = Precision::F16.plan();
        assert!(p.loss_scaling && p.compute == DType::F16 && !p.tf32_matmul);
        let e = p.for_evaluation();
        assert!(!e.loss_scaling && e.compute == DType::F32);
        assert!(!Precision::Bf16.plan().loss_scaling);
        assert_eq!(Precision::Fp32.plan().rnn_math, MathMode::Fp32);
    }
}
