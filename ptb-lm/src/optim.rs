//! Global-norm gradient clipping (TensorFlow's `clip_by_global_norm`), computed on the device
//! so that a training step never waits for the host.

use candle_core::backprop::GradStore;
use candle_core::{Result, Tensor, Var};

/// Scales every gradient by `max_norm / max(norm, max_norm)`, `norm` being the L2 norm of all
/// gradients together; returns that norm (a scalar tensor).
pub fn clip_global_norm(grads: &mut GradStore, vars: &[Var], max_norm: f64) -> Result<Tensor> {
    let squares = vars
        .iter()
        .filter_map(|v| grads.get(v.as_tensor()))
        .map(|g| sum_of_squares(g)?.to_dtype(candle_core::DType::F32))
        .collect::<Result<Vec<_>>>()?;
    let norm = Tensor::stack(&squares, 0)?.sum_all()?.sqrt()?;
    let scale = (norm.maximum(max_norm)?.recip()? * max_norm)?;
    for v in vars {
        if let Some(g) = grads.remove(v.as_tensor()) {
            let scaled = g.broadcast_mul(&scale.to_dtype(g.dtype())?)?;
            grads.insert(v.as_tensor(), scaled);
        }
    }
    Ok(norm)
}

/// `Σ g²` in two reductions: candle reduces each output with one thread block, so a single
/// `sum_all` over tens of millions of elements would run on one multiprocessor.
fn sum_of_squares(g: &Tensor) -> Result<Tensor> {
    let n = g.elem_count();
    let row = (1..=n.min(8192)).rev().find(|r| n % r == 0).unwrap_or(1);
    g.reshape((n / row, row))?.sqr()?.sum(1)?.sum_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    fn grads_of(vars: &[Var], weights: &[f32]) -> GradStore {
        // loss = Σ_i weights_i · Σ v_i  ⇒  grad v_i = weights_i everywhere.
        let mut loss = Tensor::new(0f32, &Device::Cpu).unwrap();
        for (v, w) in vars.iter().zip(weights) {
            loss = (loss + (v.as_tensor().sum_all().unwrap() * *w as f64).unwrap()).unwrap();
        }
        loss.backward().unwrap()
    }

    #[test]
    fn clips_to_the_global_norm_and_leaves_small_gradients_alone() {
        let vars = [
            Var::ones((2, 2), candle_core::DType::F32, &Device::Cpu).unwrap(),
            Var::ones(5, candle_core::DType::F32, &Device::Cpu).unwrap(),
        ];
        // Norm = sqrt(4·3² + 5·2²) = sqrt(56).
        let mut g = grads_of(&vars, &[3.0, 2.0]);
        let norm = clip_global_norm(&mut g, &vars, 1.0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!((norm - 56f32.sqrt()).abs() < 1e-5);
        let g0 = g
            .get(vars[0].as_tensor())
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        assert!((g0[0] - 3.0 / 56f32.sqrt()).abs() < 1e-6);
        let mut g = grads_of(&vars, &[0.1, 0.1]);
        clip_global_norm(&mut g, &vars, 1.0).unwrap();
        let g1 = g
            .get(vars[1].as_tensor())
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        assert!(g1.iter().all(|&x| (x - 0.1).abs() < 1e-7));
    }
}
