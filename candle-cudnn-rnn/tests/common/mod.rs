//! Shared test helpers: random inputs, an independent step-loop reference built from candle
//! tensor ops (so candle's autograd checks the op's hand-written backward), error measures.
#![allow(dead_code)]

use candle_core::{DType, Device, Result, Tensor, Var};
use candle_cudnn_rnn::{Rnn, RnnConfig, RnnDims, RnnMode, RnnState};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// A fresh seed per run, printed so a failure can be replayed with `RNN_TEST_SEED`.
pub fn rng(test: &str) -> StdRng {
    let seed = std::env::var("RNN_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    eprintln!("{test}: RNN_TEST_SEED={seed}");
    StdRng::seed_from_u64(seed)
}

/// Uniform in ±scale, f64, never all zeros.
pub fn uniform(rng: &mut StdRng, shape: &[usize], scale: f64) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f64> = (0..n).map(|_| rng.random_range(-scale..scale)).collect();
    Tensor::from_vec(data, shape, &Device::Cpu).unwrap()
}

/// `t` on the CPU in f64, flat: where the error measures compute, whatever the tensor's
/// device and dtype.
fn flat64(t: &Tensor) -> Tensor {
    t.to_device(&Device::Cpu)
        .unwrap()
        .to_dtype(DType::F64)
        .unwrap()
        .flatten_all()
        .unwrap()
}

/// ‖t‖ of a tensor of [`flat64`].
fn norm(t: &Tensor) -> f64 {
    t.sqr()
        .unwrap()
        .sum_all()
        .unwrap()
        .to_scalar::<f64>()
        .unwrap()
        .sqrt()
}

/// ‖a − b‖ / ‖b‖ (or ‖a − b‖ when b is zero), in f64 on the CPU.
pub fn rel_err(a: &Tensor, b: &Tensor) -> f64 {
    let (a, b) = (flat64(a), flat64(b));
    let (diff, norm) = (norm(&(&a - &b).unwrap()), norm(&b));
    let err = if norm > 0.0 { diff / norm } else { diff };
    if err.is_nan() {
        f64::INFINITY
    } else {
        err
    }
}

/// The largest |a − b|, in f64 on the CPU.
pub fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    (flat64(a) - flat64(b))
        .unwrap()
        .abs()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar::<f64>()
        .unwrap()
}

pub fn dims(mode: RnnMode, input: usize, hidden: usize, cfg: &RnnConfig) -> RnnDims {
    RnnDims::new(mode, input, hidden, cfg)
}

/// The batch size a packed state holds for `dims`.
fn state_batch(dims: &RnnDims, state: &Tensor) -> usize {
    state.elem_count() / dims.state_len(1)
}

fn sigmoid(x: &Tensor) -> Result<Tensor> {
    (x.neg()?.exp()? + 1.0)?.recip()
}

/// The same function as the op, one time step at a time with plain candle ops. Time-major `x`;
/// `state` packed `[S, L*D, B, H]`. Returns `(y, packed final state)`.
pub fn reference(
    dims: &RnnDims,
    weight: &Tensor,
    x: &Tensor,
    state: &Tensor,
) -> Result<(Tensor, Tensor)> {
    let (seq, _, _) = x.dims3()?;
    let h = dims.hidden_size;
    let params = dims.params();
    let get = |layer: usize, dir: usize, stem: &str| -> Result<Option<Tensor>> {
        let name = format!("{stem}_l{layer}{}", if dir == 1 { "_reverse" } else { "" });
        params
            .iter()
            .find(|p| p.name == name)
            .map(|p| {
                weight
                    .narrow(0, p.offset, p.len())?
                    .reshape(p.shape.clone())
            })
            .transpose()
    };
    let mut input = x.clone();
    let (mut h_n, mut c_n) = (Vec::new(), Vec::new());
    // The packed state is [h | c] in row-major order, whatever its shape.
    let flat = state.flatten_all()?;
    let h_shape = dims.h_shape(state_batch(dims, state));
    let h_len: usize = h_shape.iter().product();
    let h0 = flat.narrow(0, 0, h_len)?.reshape(h_shape.to_vec())?;
    let c0 = dims
        .c_shape(h_shape[1])
        .map(|c| {
            flat.narrow(0, h_len, c.iter().product())?
                .reshape(c.to_vec())
        })
        .transpose()?;
    for layer in 0..dims.num_layers {
        let mut dir_outputs = Vec::new();
        for dir in 0..dims.num_directions {
            let w_ih = get(layer, dir, "weight_ih")?.unwrap();
            let w_hh = get(layer, dir, "weight_hh")?.unwrap();
            let b_ih = get(layer, dir, "bias_ih")?;
            let b_hh = get(layer, dir, "bias_hh")?;
            let w_hr = get(layer, dir, "weight_hr")?;
            let k = layer * dims.num_directions + dir;
            let mut hs = h0.get(k)?;
            let mut cs = c0.as_ref().map(|c| c.get(k)).transpose()?;
            let mut outs = vec![None; seq];
            for s in 0..seq {
                let t = if dir == 1 { seq - 1 - s } else { s };
                let mut gi = input.get(t)?.matmul(&w_ih.t()?)?;
                let mut gh = hs.matmul(&w_hh.t()?)?;
                if let Some(bi) = &b_ih {
                    gi = gi.broadcast_add(bi)?;
                }
                if let Some(bh) = &b_hh {
                    gh = gh.broadcast_add(bh)?;
                }
                match dims.mode {
                    RnnMode::Lstm => {
                        let g = (gi + gh)?;
                        let i = sigmoid(&g.narrow(1, 0, h)?)?;
                        let f = sigmoid(&g.narrow(1, h, h)?)?;
                        let gg = g.narrow(1, 2 * h, h)?.tanh()?;
                        let o = sigmoid(&g.narrow(1, 3 * h, h)?)?;
                        let c = ((f * cs.as_ref().unwrap())? + (i * gg)?)?;
                        hs = (o * c.tanh()?)?;
                        if let Some(w_hr) = &w_hr {
                            hs = hs.matmul(&w_hr.t()?)?;
                        }
                        cs = Some(c);
                    }
                    RnnMode::RnnTanh => hs = (gi + gh)?.tanh()?,
                    RnnMode::RnnRelu => hs = (gi + gh)?.relu()?,
                    RnnMode::Gru => {
                        let r = sigmoid(&(gi.narrow(1, 0, h)? + gh.narrow(1, 0, h)?)?)?;
                        let z = sigmoid(&(gi.narrow(1, h, h)? + gh.narrow(1, h, h)?)?)?;
                        let n =
                            (gi.narrow(1, 2 * h, h)? + (&r * gh.narrow(1, 2 * h, h)?)?)?.tanh()?;
                        hs = ((z.affine(-1.0, 1.0)? * n)? + (z * &hs)?)?;
                    }
                }
                outs[t] = Some(hs.clone());
            }
            let outs: Vec<Tensor> = outs.into_iter().map(Option::unwrap).collect();
            dir_outputs.push(Tensor::stack(&outs, 0)?);
            h_n.push(hs);
            if let Some(c) = cs {
                c_n.push(c);
            }
        }
        input = Tensor::cat(&dir_outputs, 2)?;
    }
    let (h_n, c_n) = (Tensor::stack(&h_n, 0)?, Tensor::stack(&c_n, 0).ok());
    let packed = match c_n {
        Some(c) if c.dims() != h_n.dims() => {
            Tensor::cat(&[h_n.flatten_all()?, c.flatten_all()?], 0)?
        }
        Some(c) => Tensor::stack(&[h_n, c], 0)?,
        None => h_n.unsqueeze(0)?,
    };
    Ok((input, packed))
}

/// A random case: module config, weight, time-major input, packed state.
pub struct Case {
    pub mode: RnnMode,
    pub input: usize,
    pub hidden: usize,
    pub cfg: RnnConfig,
    pub seq: usize,
    pub batch: usize,
}

impl Case {
    pub fn dims(&self) -> RnnDims {
        dims(self.mode, self.input, self.hidden, &self.cfg)
    }

    pub fn random_inputs(&self, rng: &mut StdRng) -> (Tensor, Tensor, Tensor) {
        let d = self.dims();
        (
            uniform(rng, &[d.weight_count()], 0.6),
            uniform(rng, &[self.seq, self.batch, self.input], 1.0),
            uniform(rng, &d.state_shape(self.batch), 0.8),
        )
    }

    pub fn rnn(&self, weight: &Tensor) -> Rnn {
        Rnn::from_weight(self.mode, self.input, self.hidden, self.cfg, weight.clone()).unwrap()
    }
}

type Outputs = (Tensor, Tensor, [Tensor; 3]);

/// The weight, time-major input and packed state of a call.
pub type CallArgs<'a> = (&'a Tensor, &'a Tensor, &'a Tensor);

/// The loss's weights `(gy, gs)`: `Σ y·gy + Σ state·gs`.
pub type LossWeights<'a> = (&'a Tensor, &'a Tensor);

/// `Σ y·gy + Σ state·gs`.
fn weighted_sum(y: &Tensor, state: &Tensor, (gy, gs): LossWeights) -> Result<Tensor> {
    (y * gy)?.sum_all()? + (state * gs)?.sum_all()?
}

/// `(y, state)` of `run`, and the gradients of x, weight and state of [`weighted_sum`].
fn with_grads(
    (w, x, s): CallArgs,
    weights: LossWeights,
    run: impl Fn(&Tensor, &Tensor, &Tensor) -> Result<(Tensor, Tensor)>,
) -> Result<Outputs> {
    let (wv, xv, sv) = (
        Var::from_tensor(w)?,
        Var::from_tensor(x)?,
        Var::from_tensor(s)?,
    );
    let (y, state) = run(wv.as_tensor(), xv.as_tensor(), sv.as_tensor())?;
    let grads = weighted_sum(&y, &state, weights)?.backward()?;
    let g = |v: &Var| grads.get(v.as_tensor()).cloned().unwrap();
    Ok((y, state, [g(&xv), g(&wv), g(&sv)]))
}

/// `(y, packed final state)` of the op, with per-sample lengths if given, in training mode when
/// `train`.
fn op_call(
    case: &Case,
    lengths: Option<&[usize]>,
    (w, x, s): CallArgs,
    train: bool,
) -> Result<(Tensor, Tensor)> {
    let rnn = case.rnn(w);
    let state = RnnState::from_packed(s.clone());
    let (y, st) = match lengths {
        Some(l) => rnn.forward_with_lengths(x, l, Some(&state), train)?,
        None => rnn.forward_t(x, Some(&state), train)?,
    };
    Ok((y, st.packed().clone()))
}

/// Through the op, with per-sample lengths if given.
pub fn op_grads(
    case: &Case,
    lengths: Option<&[usize]>,
    args: CallArgs,
    weights: LossWeights,
) -> Result<Outputs> {
    with_grads(args, weights, |w, x, s| {
        op_call(case, lengths, (w, x, s), true)
    })
}

/// Loss [`weighted_sum`] through the op, without gradient tracking (inference mode).
pub fn loss(case: &Case, lengths: Option<&[usize]>, args: CallArgs, weights: LossWeights) -> f64 {
    let (y, state) = op_call(case, lengths, args, false).unwrap();
    let l = weighted_sum(&y, &state, weights).unwrap();
    l.to_scalar::<f64>().unwrap()
}

/// Every coordinate of `t`, nudged by ±eps, against the analytic gradient.
pub fn check_coordinates(name: &str, analytic: &Tensor, t: &Tensor, f: impl Fn(&Tensor) -> f64) {
    let eps = 1e-6;
    let base = t.flatten_all().unwrap().to_vec1::<f64>().unwrap();
    let g = analytic.flatten_all().unwrap().to_vec1::<f64>().unwrap();
    for i in 0..base.len() {
        let at = |d: f64| {
            let mut v = base.clone();
            v[i] += d;
            f(&Tensor::from_vec(v, t.dims(), t.device()).unwrap())
        };
        let fd = (at(eps) - at(-eps)) / (2.0 * eps);
        let tol = 1e-6 * (1.0 + g[i].abs());
        assert!(
            (fd - g[i]).abs() < tol,
            "{name}[{i}]: analytic {} finite difference {fd}",
            g[i]
        );
    }
}

/// The op's gradients `[dx, dw, ds]` of [`weighted_sum`] at `args`, every coordinate against
/// central differences of [`loss`]; `name` begins each failure's message.
pub fn check_every_coordinate(
    name: &str,
    (case, lengths): (&Case, Option<&[usize]>),
    (w, x, s): CallArgs,
    weights: LossWeights,
    [dx, dw, ds]: &[Tensor; 3],
) {
    let loss = |w: &Tensor, x: &Tensor, s: &Tensor| loss(case, lengths, (w, x, s), weights);
    check_coordinates(&format!("{name}weight"), dw, w, |w| loss(w, x, s));
    check_coordinates(&format!("{name}x"), dx, x, |x| loss(w, x, s));
    check_coordinates(&format!("{name}state"), ds, s, |s| loss(w, x, s));
}

/// Through the step-loop reference.
pub fn reference_grads(case: &Case, args: CallArgs, weights: LossWeights) -> Result<Outputs> {
    with_grads(args, weights, |w, x, s| reference(&case.dims(), w, x, s))
}
