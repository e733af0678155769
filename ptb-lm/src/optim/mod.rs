//! The tutorial's update, in pieces behind small interfaces: the gradient each variable gets
//! (dense, or a lookup's summed rows: `lookup_grad`), clipping to the global norm and its
//! statistics (`clip`), dynamic loss scaling (`crate::optim::loss_scale`) and the update rule (`sgd`).
//! [`Optimizer`] runs them in that order; a step never waits for the host (an f16 step's
//! overflow check and skip happen on the device too). The vector operations are `blas`'s.

mod blas;
mod clip;
mod lookup_grad;
pub mod loss_scale;
mod sgd;

pub use clip::ClipStats;
pub use sgd::{Sgd, UpdateRule};

use crate::config::precision::PrecisionPlan;
use crate::config::{EmbeddingNorm, LmConfig};
use crate::optim::loss_scale::{DeviceLossScale, LossScale};
use candle_core::backprop::GradStore;
use candle_core::{bail, DType, Result, Tensor, Var};
use clip::GlobalNormClip;

/// A table read through a lookup: `rows` holds `table[ids]` as a leaf of its own, so that its
/// gradient, one row per looked-up id, survives backward for the norm to see.
pub struct Lookup {
    pub table: Tensor,
    pub ids: Tensor,
    pub rows: Var,
}

/// A variable whose layer kept its gradient `grad` (of the variable's size, in the layer's
/// dtype) instead of returning it to autograd (`Rnn::with_weight_grad_sink`, or
/// `crate::model::owned_linear`); the optimizer reads it as the variable's dense gradient and, with
/// `reset`, zeroes it after the step (a buffer the layer adds into). A layer computing in half
/// precision reads `copy`, the variable in its dtype, which the update keeps equal to the
/// variable rounded.
pub struct OwnedGrad {
    pub var: Tensor,
    pub grad: Tensor,
    pub reset: bool,
    pub copy: Option<Tensor>,
}

/// A variable's gradient as an update rule takes it: dense, or the summed rows of a lookup.
pub enum Update {
    Dense(Tensor),
    Rows { ids: Tensor, sums: Tensor },
}

/// One variable's gradient in a step.
pub struct Gradient {
    pub var: Var,
    pub update: Update,
    /// What this variable adds to the global norm (a lookup's rows, or its update).
    pub counted: Tensor,
    /// The variable's half-precision copy, to refresh with it (`OwnedGrad::copy`).
    pub copy: Option<Tensor>,
}

/// The gradients of `vars` (those that have one), in their order; a table read through one of
/// `lookups` gets its rows summed per id, and counts in the norm by `norm`.
fn gradients(
    vars: &[Var],
    grads: &GradStore,
    (lookups, owned): (&[Lookup], &[OwnedGrad]),
    norm: EmbeddingNorm,
) -> Result<Vec<Gradient>> {
    let mut out = Vec::with_capacity(vars.len());
    for v in vars {
        if let Some(o) = owned.iter().find(|o| o.var.id() == v.id()) {
            let g = o.grad.flatten_all()?;
            out.push(Gradient {
                var: v.clone(),
                update: Update::Dense(g.clone()),
                counted: g,
                copy: o.copy.clone(),
            });
            continue;
        }
        match lookups.iter().find(|l| l.table.id() == v.id()) {
            Some(l) => {
                let Some(rows) = grads.get(l.rows.as_tensor()) else {
                    continue;
                };
                let rows = rows.contiguous()?;
                // One row per distinct id; its norm is the dense table gradient's.
                let sums = lookup_grad::sum_repeats(&rows, &l.ids)?;
                let counted = match norm {
                    EmbeddingNorm::Lookups => rows,
                    EmbeddingNorm::Table => sums.clone(),
                };
                let ids = l.ids.clone();
                let update = Update::Rows { ids, sums };
                out.push(Gradient {
                    var: v.clone(),
                    update,
                    counted,
                    copy: None,
                });
            }
            None => {
                if let Some(g) = grads.get(v.as_tensor()) {
                    let g = g.contiguous()?;
                    out.push(Gradient {
                        var: v.clone(),
                        update: Update::Dense(g.clone()),
                        counted: g,
                        copy: None,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The optimizer's running state in the middle of an epoch, as checkpoints keep it: f32
/// values exactly as the device holds them.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Running {
    /// The clipping statistics' sums (norms, clipped steps, steps), once a step ran.
    pub clip_sums: Option<Vec<f32>>,
    /// The loss scale, its good steps and the epoch's skipped steps, with loss scaling.
    pub loss_scale: Option<Vec<f32>>,
}

/// Clipped updates: `g ← g · max_norm / max(‖g‖, max_norm)` over all variables together, then
/// the rule `R`.
pub struct Optimizer<R: UpdateRule = Sgd> {
    vars: Vec<Var>,
    embedding_norm: EmbeddingNorm,
    clip: GlobalNormClip,
    /// With f16 steps: the gradients arrive multiplied by its scale.
    loss_scale: Option<DeviceLossScale>,
    rule: R,
}

impl Optimizer<Sgd> {
    /// SGD with global-norm clipping; `vars` in a fixed order: the norm sums in it, so runs
    /// repeat bit for bit.
    pub fn clipped_sgd(
        vars: Vec<Var>,
        lr: f64,
        max_norm: f64,
        embedding_norm: EmbeddingNorm,
    ) -> Result<Self> {
        Self::new(vars, max_norm, embedding_norm, Sgd::new(lr))
    }

    /// The tutorial's optimizer for `cfg`: its initial learning rate, max norm and norm; with
    /// loss scaling when the plan asks for it.
    pub fn for_config(vars: Vec<Var>, cfg: &LmConfig, plan: &PrecisionPlan) -> Result<Self> {
        let mut opt = Self::clipped_sgd(
            vars,
            cfg.learning_rate,
            cfg.max_grad_norm,
            cfg.embedding_norm,
        )?;
        if plan.loss_scaling {
            opt.set_loss_scale(LossScale::default())?;
        }
        Ok(opt)
    }
}

impl<R: UpdateRule> Optimizer<R> {
    pub fn new(
        vars: Vec<Var>,
        max_norm: f64,
        embedding_norm: EmbeddingNorm,
        rule: R,
    ) -> Result<Self> {
        for v in &vars {
            if v.dtype() != DType::F32 || !v.is_contiguous() {
                bail!("optimizer: variables must be contiguous f32 tensors")
            }
        }
        Ok(Self {
            vars,
            embedding_norm,
            clip: GlobalNormClip::new(max_norm),
            loss_scale: None,
            rule,
        })
    }

    /// The loss scale as a checkpoint keeps it (waits for the device).
    pub fn loss_scale(&self) -> Result<Option<LossScale>> {
        self.loss_scale.as_ref().map(|s| s.read()).transpose()
    }

    /// The device scalar a step multiplies its loss by, with loss scaling.
    pub fn loss_scale_tensor(&self) -> Result<Option<Tensor>> {
        self.loss_scale.as_ref().map(|s| s.scale()).transpose()
    }

    /// Scales the loss from `s` on (a new run's default, or a checkpointed run's); uploads it,
    /// so not while a step is being captured.
    pub fn set_loss_scale(&mut self, s: LossScale) -> Result<()> {
        let Some(first) = self.vars.first() else {
            bail!("optimizer: no variables")
        };
        self.loss_scale = Some(DeviceLossScale::new(s, first.device())?);
        Ok(())
    }

    /// Takes effect on the device too (a captured step follows it).
    pub fn set_learning_rate(&mut self, lr: f64) -> Result<()> {
        self.rule.set_learning_rate(lr)
    }

    /// One update; returns the gradients' global norm before clipping (a device scalar).
    /// `lookups` name the tables whose gradient arrives through the rows they gathered, `owned`
    /// the variables whose gradient a layer added into a buffer (zeroed here once used).
    pub fn step(
        &mut self,
        grads: &GradStore,
        lookups: &[Lookup],
        owned: &[OwnedGrad],
    ) -> Result<Tensor> {
        let norm = self.update(grads, lookups, owned);
        for o in owned.iter().filter(|o| o.reset) {
            o.grad.zero_set()?;
        }
        norm
    }

    fn update(
        &mut self,
        grads: &GradStore,
        lookups: &[Lookup],
        owned: &[OwnedGrad],
    ) -> Result<Tensor> {
        let grads = gradients(&self.vars, grads, (lookups, owned), self.embedding_norm)?;
        let norm = self.clip.global_norm(&grads)?;
        let loss_scale = self.loss_scale_tensor()?;
        let scale = self.clip.scale(&norm, loss_scale.as_ref())?;
        // An overflowed step's factor is 0, and axpy leaves a weight alone under a 0 factor.
        self.rule.apply(&grads, &scale)?;
        match (&self.loss_scale, &scale.finite, loss_scale) {
            (Some(ls), Some(finite), Some(s)) => {
                ls.update(finite)?;
                &norm / s.reshape(norm.shape())?
            }
            _ => Ok(norm),
        }
    }

    /// What the steps of an unfinished epoch left in the optimizer: the clipping statistics'
    /// running sums and the loss scale with its counters (reads the device).
    pub fn running(&self) -> Result<Running> {
        Ok(Running {
            clip_sums: self.clip.sums()?,
            loss_scale: self.loss_scale.as_ref().map(|s| s.values()).transpose()?,
        })
    }

    /// Continues from `r` (of [`Self::running`]), as a run resumed between steps does.
    pub fn set_running(&mut self, r: &Running) -> Result<()> {
        let Some(first) = self.vars.first() else {
            bail!("optimizer: no variables")
        };
        if let Some(sums) = &r.clip_sums {
            self.clip.set_sums(sums, first.device())?;
        }
        match (&self.loss_scale, &r.loss_scale) {
            (Some(s), Some(v)) => s.set_values(v),
            (None, None) => Ok(()),
            _ => bail!("optimizer: the checkpoint's loss scaling differs from this run's"),
        }
    }

    /// The norm statistics of the steps since the last call (waits for the device); the norms
    /// are the unscaled ones of the steps taken.
    pub fn take_stats(&mut self) -> Result<Option<ClipStats>> {
        let skipped = match &self.loss_scale {
            Some(ls) => ls.take_skipped()?,
            None => 0,
        };
        self.clip.take_stats(skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::gpu::test_gpu::device;

    /// Returns the vars and the gradients of `loss = Σ_i Σ (v_i · c_i)`, i.e. `c_i`.
    fn setup(scales: &[f32]) -> (Vec<Var>, GradStore, Vec<Vec<f32>>) {
        let dev = device();
        let shapes: [&[usize]; 3] = [&[3, 4], &[5], &[1000, 7]];
        let mut vars = Vec::new();
        let mut coefs = Vec::new();
        let mut loss = Tensor::new(0f32, &dev).unwrap();
        for (shape, s) in shapes.iter().zip(scales) {
            let v = Var::from_tensor(&Tensor::randn(0f32, 1., *shape, &dev).unwrap()).unwrap();
            let c = (Tensor::randn(0f32, 1., *shape, &dev).unwrap() * *s as f64).unwrap();
            loss = (loss + (v.as_tensor() * &c).unwrap().sum_all().unwrap()).unwrap();
            coefs.push(c.flatten_all().unwrap().to_vec1::<f32>().unwrap());
            vars.push(v);
        }
        (vars, loss.backward().unwrap(), coefs)
    }

    fn values(v: &Var) -> Vec<f32> {
        v.flatten_all().unwrap().to_vec1().unwrap()
    }

    fn check(scales: &[f32], max_norm: f64) {
        let _gpu = crate::gpu::test_gpu::shared();
        let (vars, grads, coefs) = setup(scales);
        let before: Vec<Vec<f32>> = vars.iter().map(values).collect();
        let norm: f64 = coefs
            .iter()
            .flatten()
            .map(|&c| (c as f64).powi(2))
            .sum::<f64>();
        let norm = norm.sqrt();
        let lr = 0.7;
        let mut opt =
            Optimizer::clipped_sgd(vars.clone(), lr, max_norm, EmbeddingNorm::Table).unwrap();
        let got = opt
            .step(&grads, &[], &[])
            .unwrap()
            .to_scalar::<f32>()
            .unwrap() as f64;
        assert!((got - norm).abs() < 1e-4 * norm, "norm {got} vs {norm}");
        let clip = max_norm / norm.max(max_norm);
        for ((v, w0), c) in vars.iter().zip(&before).zip(&coefs) {
            for ((w, w0), c) in values(v).iter().zip(w0).zip(c) {
                let want = *w0 as f64 - lr * clip * *c as f64;
                assert!((*w as f64 - want).abs() < 1e-5, "{w} vs {want}");
            }
        }
    }

    #[test]
    fn clips_large_gradients_to_the_global_norm() {
        check(&[3.0, 2.0, 1.0], 1.0);
    }

    #[test]
    fn leaves_small_gradients_alone() {
        check(&[0.01, 0.02, 0.001], 100.0);
    }

    /// A table read through a lookup with repeated ids: the update is the summed gradient in
    /// both modes; the norm counts the rows (TensorFlow's `IndexedSlices`) or the summed table.
    #[test]
    fn lookup_gradients_count_per_row_or_per_table() {
        let dev = device();
        let ids: Vec<u32> = vec![1, 3, 1, 1, 5, 3, 0, 1];
        let (vocab, h, n) = (6, 4, ids.len());
        for (mode, clips) in [
            (EmbeddingNorm::Lookups, true),
            (EmbeddingNorm::Table, true),
            (EmbeddingNorm::Lookups, false),
        ] {
            let table =
                Var::from_tensor(&Tensor::randn(0f32, 1., (vocab, h), &dev).unwrap()).unwrap();
            let other = Var::from_tensor(&Tensor::randn(0f32, 1., 5, &dev).unwrap()).unwrap();
            let ids_t = Tensor::new(ids.as_slice(), &dev).unwrap();
            let rows = table.as_tensor().detach().index_select(&ids_t, 0).unwrap();
            let rows = Var::from_tensor(&rows).unwrap();
            let c = Tensor::randn(0f32, 1., (n, h), &dev).unwrap();
            let d = Tensor::randn(0f32, 1., 5, &dev).unwrap();
            let loss = ((rows.as_tensor() * &c).unwrap().sum_all().unwrap()
                + (other.as_tensor() * &d).unwrap().sum_all().unwrap())
            .unwrap();
            let grads = loss.backward().unwrap();

            let c = c.to_vec2::<f32>().unwrap();
            let d = d.to_vec1::<f32>().unwrap();
            let mut summed = vec![vec![0f64; h]; vocab];
            for (row, &id) in c.iter().zip(&ids) {
                for (s, &g) in summed[id as usize].iter_mut().zip(row) {
                    *s += g as f64;
                }
            }
            let sq = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
            let d64: Vec<f64> = d.iter().map(|&x| x as f64).collect();
            let rows_sq: f64 = c
                .iter()
                .map(|r| sq(&r.iter().map(|&x| x as f64).collect::<Vec<_>>()))
                .sum();
            let table_sq: f64 = summed.iter().map(|r| sq(r)).sum();
            let norm = match mode {
                EmbeddingNorm::Lookups => (rows_sq + sq(&d64)).sqrt(),
                EmbeddingNorm::Table => (table_sq + sq(&d64)).sqrt(),
            };
            // Repeated ids make the two norms differ, so the mode is really in use.
            assert!((rows_sq - table_sq).abs() > 1e-3 * rows_sq);
            let max_norm = if clips { norm / 2.0 } else { norm * 2.0 };
            let lr = 0.3;
            let before = table.to_vec2::<f32>().unwrap();
            let other_before = values(&other);
            let vars = vec![table.clone(), other.clone()];
            let mut opt = Optimizer::clipped_sgd(vars, lr, max_norm, mode).unwrap();
            let lookup = Lookup {
                table: table.as_tensor().clone(),
                ids: ids_t,
                rows,
            };
            let got = opt
                .step(&grads, &[lookup], &[])
                .unwrap()
                .to_scalar::<f32>()
                .unwrap() as f64;
            assert!(
                (got - norm).abs() < 1e-4 * norm,
                "{mode:?}: norm {got} vs {norm}"
            );
            let clip = max_norm / norm.max(max_norm);
            for (after, (w0, g)) in table
                .to_vec2::<f32>()
                .unwrap()
                .iter()
                .zip(before.iter().zip(&summed))
            {
                for (w, (w0, g)) in after.iter().zip(w0.iter().zip(g)) {
                    let want = *w0 as f64 - lr * clip * g;
                    assert!((*w as f64 - want).abs() < 1e-5, "{w} vs {want}");
                }
            }
            for (w, (w0, g)) in values(&other).iter().zip(other_before.iter().zip(&d)) {
                let want = *w0 as f64 - lr * clip * *g as f64;
                assert!((*w as f64 - want).abs() < 1e-5, "{w} vs {want}");
            }
            let stats = opt.take_stats().unwrap().unwrap();
            assert!((stats.mean_norm - norm).abs() < 1e-4 * norm);
            assert_eq!(stats.clipped_fraction, if clips { 1.0 } else { 0.0 });
            assert_eq!(opt.take_stats().unwrap(), None);
        }
    }

    /// A gradient a layer kept itself, in bf16: applied as the variable's dense gradient (its
    /// norm and update computed from the half values in f32), then zeroed.
    #[test]
    fn owned_half_gradients_are_applied_and_zeroed() {
        let dev = device();
        let w = Var::from_tensor(&Tensor::new(&[1f32, 2., 3., 4.], &dev).unwrap()).unwrap();
        let g = Tensor::new(&[0.5f32, -1.25, 0., 2.], &dev)
            .unwrap()
            .to_dtype(DType::BF16)
            .unwrap();
        let lr = 0.5;
        let mut opt =
            Optimizer::clipped_sgd(vec![w.clone()], lr, 100.0, EmbeddingNorm::Table).unwrap();
        let owned = [OwnedGrad {
            var: w.as_tensor().clone(),
            grad: g.clone(),
            reset: true,
            copy: None,
        }];
        let grads = Tensor::new(0f32, &dev).unwrap().backward().unwrap();
        let norm = opt
            .step(&grads, &[], &owned)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        let want_norm = (0.25f32 + 1.5625 + 4.0).sqrt();
        assert!((norm - want_norm).abs() < 1e-6, "{norm} vs {want_norm}");
        assert_eq!(values(&w), [0.75, 2.625, 3., 3.]);
        let zero = g.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(zero, [0.; 4]);
    }

    /// A variable's half copy follows its updates: after a step it equals the new weights
    /// rounded (as `to_dtype` rounds), and an overflowed f16 step leaves both alone.
    #[test]
    fn half_copies_follow_the_update() {
        let dev = device();
        let cfg = crate::config::LmConfig::preset(crate::config::Preset::Small);
        for (precision, dt) in [
            (crate::config::precision::Precision::Bf16, DType::BF16),
            (crate::config::precision::Precision::F16, DType::F16),
        ] {
            let n = 10_007;
            let w = Var::from_tensor(&Tensor::randn(0f32, 1., n, &dev).unwrap()).unwrap();
            let copy = w.as_tensor().to_dtype(dt).unwrap();
            let plan = precision.plan();
            let mut opt = Optimizer::for_config(vec![w.clone()], &cfg, &plan).unwrap();
            let scale = opt.loss_scale().unwrap().map_or(1.0, |s| s.scale);
            let step = |opt: &mut Optimizer, g: &Tensor| {
                let owned = [OwnedGrad {
                    var: w.as_tensor().clone(),
                    grad: g.to_dtype(dt).unwrap(),
                    reset: false,
                    copy: Some(copy.clone()),
                }];
                let grads = Tensor::new(0f32, &dev).unwrap().backward().unwrap();
                opt.step(&grads, &[], &owned).unwrap();
            };
            let as_f32 = |t: &Tensor| t.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap();
            let before = values(&w);
            let g = (Tensor::randn(0f32, 1e-3, n, &dev).unwrap() * scale).unwrap();
            step(&mut opt, &g);
            let after = values(&w);
            assert!(after != before, "{dt:?}: the step changed nothing");
            let want = as_f32(&w.as_tensor().to_dtype(dt).unwrap());
            assert_eq!(
                as_f32(&copy),
                want,
                "{dt:?}: the copy is not the rounded weights"
            );
            if dt == DType::F16 {
                let inf = Tensor::full(f32::INFINITY, n, &dev).unwrap();
                step(&mut opt, &inf);
                assert_eq!(values(&w), after, "an overflowed step changed the weights");
                assert_eq!(as_f32(&copy), want, "an overflowed step changed the copy");
            }
        }
    }

    /// The norm of a large half-precision gradient (many blocks, uneven chunks) in f32.
    #[test]
    fn half_gradient_norms_match_f64() {
        let dev = device();
        for dt in [DType::BF16, DType::F16] {
            let g = Tensor::randn(0f32, 1., 100_003, &dev)
                .unwrap()
                .to_dtype(dt)
                .unwrap();
            let want: f64 = g
                .to_dtype(DType::F64)
                .unwrap()
                .to_vec1::<f64>()
                .unwrap()
                .iter()
                .map(|x| x * x)
                .sum::<f64>()
                .sqrt();
            let out = Tensor::zeros(1, DType::F32, &dev).unwrap();
            out.inplace_op2(&g, &blas::Nrm2).unwrap();
            let got = out.to_vec1::<f32>().unwrap()[0] as f64;
            assert!((got / want - 1.0).abs() < 1e-5, "{dt:?}: {got} vs {want}");
        }
    }

    /// With a loss scale the gradients are unscaled before clipping, and a step whose scaled
    /// gradients overflowed leaves the weights alone and halves the scale.
    #[test]
    fn scaled_steps_unscale_and_overflowed_ones_are_skipped() {
        let dev = device();
        let w = Var::from_tensor(&Tensor::new(&[1f32, 2., 3.], &dev).unwrap()).unwrap();
        let cfg = crate::config::LmConfig::preset(crate::config::Preset::Small);
        let plan = crate::config::precision::Precision::F16.plan();
        let mut opt = Optimizer::for_config(vec![w.clone()], &cfg, &plan).unwrap();
        let s = opt.loss_scale().unwrap().unwrap().scale;
        // loss·s with d loss/dw = (1, 0, 2): norm √5 < max_norm 5, so w ← w − g.
        let c = Tensor::new(&[s as f32, 0., 2. * s as f32], &dev).unwrap();
        let grads = (w.as_tensor() * &c)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let norm = opt
            .step(&grads, &[], &[])
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert!((norm - 5f32.sqrt()).abs() < 1e-5, "{norm}");
        assert_eq!(values(&w), [0., 2., 1.]);

        let inf = Tensor::new(&[f32::INFINITY, 0., 1.], &dev).unwrap();
        let grads = (w.as_tensor() * &inf)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        opt.step(&grads, &[], &[]).unwrap();
        assert_eq!(values(&w), [0., 2., 1.]);
        assert_eq!(opt.loss_scale().unwrap().unwrap().scale, s / 2.0);
        let stats = opt.take_stats().unwrap().unwrap();
        assert_eq!((stats.skipped, stats.clipped_fraction), (1, 0.0));
        assert!((stats.mean_norm - 5f64.sqrt()).abs() < 1e-5);
    }
}
