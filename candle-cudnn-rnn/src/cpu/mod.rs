//! The reference implementation: the same function as cuDNN's RNN, in plain Rust, generic over
//! f32 and f64 so it can serve as the f64 oracle for the GPU path.
//!
//! Buffers are time-major (see [`Call`]). The input projections of all time steps are one
//! matrix product per layer and direction; only `h_{t-1} W_hh^T` is computed step by step, and
//! the cell math of each step is `cell`'s.

mod cell;
mod gemm;
mod par;

use crate::call::{Call, Dropout};
use crate::layout::{Block, RnnDims};
use crate::RnnMode;
use gemm::{matmul, Mat};
use par::{for_each_sample, Rows};
use rand::{rngs::StdRng, Rng, SeedableRng};

pub(crate) trait Real: num_traits::Float + Send + Sync + 'static {}
impl Real for f32 {}
impl Real for f64 {}

/// What the backward pass needs from the forward pass (cuDNN's reserve space).
pub(crate) struct Trace<T> {
    layers: Vec<LayerTrace<T>>,
}

struct LayerTrace<T> {
    /// What the layer read: `x` for layer 0, the dropped-out output below it otherwise.
    input: Vec<T>,
    /// Dropout factors (0 or 1/(1-p)) that made `input` from the layer below's output.
    mask: Option<Vec<T>>,
    output: Vec<T>,
    dirs: Vec<DirTrace<T>>,
}

struct DirTrace<T> {
    /// Gate activations per step, `[T, B, G*H]` (LSTM i,f,g,o; GRU r,z,n).
    gates: Vec<T>,
    /// LSTM: the cell state `c_t`; GRU: `W_hn h_{t-1} + b_hn`, both `[T, B, H]`.
    cells: Vec<T>,
    /// With a projection: `o ⊙ tanh(c_t)` before it, `[T, B, H]`.
    unprojected: Vec<T>,
}

/// One layer-direction's weights, sliced out of the flat buffer.
struct Weights<'a, T> {
    w_ih: &'a [T],
    w_hh: &'a [T],
    b_ih: Option<&'a [T]>,
    b_hh: Option<&'a [T]>,
    w_hr: Option<&'a [T]>,
}

impl<'a, T> Weights<'a, T> {
    fn new(w: &'a [T], blk: &Block, dims: &RnnDims) -> Self {
        let (g, hp) = (dims.gate_size(), dims.h_size());
        Self {
            w_ih: &w[blk.w_ih..blk.w_ih + g * blk.in_size],
            w_hh: &w[blk.w_hh..blk.w_hh + g * hp],
            b_ih: blk.b_ih.map(|b| &w[b..b + g]),
            b_hh: blk.b_hh.map(|b| &w[b..b + g]),
            w_hr: blk.w_hr.map(|o| &w[o..o + hp * dims.hidden_size]),
        }
    }
}

/// Runs the stack; returns the packed `[y | h_n | c_n]` and, if asked, the trace for backward.
pub(crate) fn forward<T: Real>(
    call: &Call,
    x: &[T],
    w: &[T],
    state: &[T],
    dropout: Dropout,
    keep_trace: bool,
) -> (Vec<T>, Option<Trace<T>>) {
    let dims = &call.dims;
    let mut packed = vec![T::zero(); call.output_len() + call.state_len()];
    let (y, final_state) = packed.split_at_mut(call.output_len());
    let mut rng = StdRng::seed_from_u64(dropout.mask_seed());
    let mut layers = Vec::new();
    let mut input = x.to_vec();
    let mut mask = None;
    for layer in 0..dims.num_layers {
        let mut output = vec![T::zero(); call.output_len()];
        let mut dirs = Vec::new();
        for dir in 0..dims.num_directions {
            let blk = dims.block(layer, dir);
            let h0 = &state[call.state_slot(0, layer, dir)];
            let c0 = (dims.mode == RnnMode::Lstm).then(|| &state[call.state_slot(1, layer, dir)]);
            let (trace, h_n, c_n) = run_direction(call, &input, &blk, w, h0, c0, dir, &mut output);
            final_state[call.state_slot(0, layer, dir)].copy_from_slice(&h_n);
            if let Some(c_n) = c_n {
                final_state[call.state_slot(1, layer, dir)].copy_from_slice(&c_n);
            }
            dirs.push(trace);
        }
        let next = match dropout.active() && layer + 1 < dims.num_layers {
            true => {
                let keep = T::from(1.0 / (1.0 - dropout.p as f64)).unwrap();
                let m: Vec<T> = (0..output.len())
                    .map(|_| {
                        if rng.random::<f32>() < dropout.p {
                            T::zero()
                        } else {
                            keep
                        }
                    })
                    .collect();
                let dropped = output.iter().zip(&m).map(|(&o, &k)| o * k).collect();
                Some((dropped, Some(m)))
            }
            false => None,
        };
        if layer + 1 == dims.num_layers {
            y.copy_from_slice(&output);
        }
        let (next_input, next_mask) = next.unwrap_or_else(|| (output.clone(), None));
        if keep_trace {
            layers.push(LayerTrace {
                input: std::mem::replace(&mut input, next_input),
                mask: std::mem::replace(&mut mask, next_mask),
                output,
                dirs,
            });
        } else {
            input = next_input;
        }
    }
    (packed, keep_trace.then_some(Trace { layers }))
}

/// One layer in one direction; writes `h_t` into its half of `output`.
#[allow(clippy::too_many_arguments)]
fn run_direction<T: Real>(
    call: &Call,
    input: &[T],
    blk: &Block,
    w: &[T],
    h0: &[T],
    c0: Option<&[T]>,
    dir: usize,
    output: &mut [T],
) -> (DirTrace<T>, Vec<T>, Option<Vec<T>>) {
    let dims = &call.dims;
    let (seq, batch) = (call.seq, call.batch);
    let (g, h, dh_out) = (dims.gate_size(), dims.hidden_size, dims.output_size());
    let hp = dims.h_size();
    let wt = Weights::new(w, blk, dims);
    let rows = seq * batch;

    // Input projections of every step at once: pre = x W_ih^T + b_ih (+ b_hh, except in a GRU
    // whose b_hn must stay inside r * (...)).
    let mut pre = vec![T::zero(); rows * g];
    let x_mat = Mat::rows(input, blk.in_size);
    matmul(
        (rows, g, blk.in_size),
        &mut pre,
        x_mat,
        Mat::rows(wt.w_ih, blk.in_size).t(),
        false,
    );
    for row in pre.chunks_exact_mut(g) {
        for (j, v) in row.iter_mut().enumerate() {
            let mut add = wt.b_ih.map_or(T::zero(), |b| b[j]);
            if dims.mode != RnnMode::Gru {
                add = add + wt.b_hh.map_or(T::zero(), |b| b[j]);
            }
            *v = *v + add;
        }
    }

    let mut gates = vec![T::zero(); rows * g];
    let mut cells = vec![T::zero(); rows * h];
    let mut unprojected = vec![T::zero(); if wt.w_hr.is_some() { rows * h } else { 0 }];
    let mut projected = vec![T::zero(); batch * hp];
    let mut h_prev = h0.to_vec();
    let mut c_prev = c0.map(<[T]>::to_vec).unwrap_or_default();
    let mut rec = vec![T::zero(); batch * g];
    for s in 0..seq {
        let t = if dir == 1 { seq - 1 - s } else { s };
        matmul(
            (batch, g, hp),
            &mut rec,
            Mat::rows(&h_prev, hp),
            Mat::rows(wt.w_hh, hp).t(),
            false,
        );
        let (gates_r, cells_r, unprojected_r) = (
            Rows::new(&mut gates),
            Rows::new(&mut cells),
            Rows::new(&mut unprojected),
        );
        let (output_r, h_prev_r, c_prev_r) = (
            Rows::new(output),
            Rows::new(&mut h_prev),
            Rows::new(&mut c_prev),
        );
        let (pre, rec) = (&pre, &rec);
        let gru_b_hh = wt.b_hh.filter(|_| dims.mode == RnnMode::Gru);
        for_each_sample(batch, g, |b| {
            if !call.active(t, b) {
                return;
            }
            let row = t * batch + b;
            // SAFETY: sample b writes only its own row of step t and its own state chunk.
            let (gates, kept, h_prev) = unsafe {
                (
                    gates_r.get(row * g, g),
                    cells_r.get(row * h, h),
                    h_prev_r.get(b * hp, hp),
                )
            };
            let c = match dims.mode {
                // SAFETY: as above.
                RnnMode::Lstm => unsafe { c_prev_r.get(b * h, h) },
                _ => &mut [],
            };
            // With a projection, o ⊙ tanh(c) goes to `unprojected`, and h comes below.
            let out = match wt.w_hr {
                // SAFETY: as above.
                Some(_) => unsafe { unprojected_r.get(row * h, h) },
                None => unsafe { output_r.get(row * dh_out + dir * hp, hp) },
            };
            cell::forward(
                dims.mode,
                cell::Forward {
                    pre: &pre[row * g..][..g],
                    rec: &rec[b * g..][..g],
                    b_hh: gru_b_hh,
                    h_prev,
                    c,
                    gates,
                    cell: kept,
                    out: &mut *out,
                },
            );
            if wt.w_hr.is_none() {
                h_prev.copy_from_slice(out);
            }
        });
        // h_t = W_hr (o ⊙ tanh c_t), for the whole step at once.
        if let Some(w_hr) = wt.w_hr {
            let m = Mat::rows(&unprojected[t * batch * h..(t + 1) * batch * h], h);
            matmul(
                (batch, hp, h),
                &mut projected,
                m,
                Mat::rows(w_hr, h).t(),
                false,
            );
            for b in (0..batch).filter(|&b| call.active(t, b)) {
                let v = &projected[b * hp..][..hp];
                output[(t * batch + b) * dh_out + dir * hp..][..hp].copy_from_slice(v);
                h_prev[b * hp..][..hp].copy_from_slice(v);
            }
        }
    }
    let c_n = c0.is_some().then_some(c_prev);
    let trace = DirTrace {
        gates,
        cells,
        unprojected,
    };
    (trace, h_prev, c_n)
}

/// Gradients of one call: `(dx, dw, dstate)` from the gradient of the packed output.
pub(crate) fn backward<T: Real>(
    call: &Call,
    w: &[T],
    state: &[T],
    trace: &Trace<T>,
    grad: &[T],
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let dims = &call.dims;
    let (dy_top, d_final) = grad.split_at(call.output_len());
    let mut dw = vec![T::zero(); w.len()];
    let mut dstate = vec![T::zero(); call.state_len()];
    let mut dy = dy_top.to_vec();
    for layer in (0..dims.num_layers).rev() {
        let lt = &trace.layers[layer];
        let in_size = dims.layer_input_size(layer);
        let mut dx = vec![T::zero(); call.seq * call.batch * in_size];
        for dir in 0..dims.num_directions {
            let blk = dims.block(layer, dir);
            let slot_h = call.state_slot(0, layer, dir);
            let slot_c = call.state_slot(1, layer, dir);
            let lstm = dims.mode == RnnMode::Lstm;
            let ends = Ends {
                h0: &state[slot_h.clone()],
                c0: lstm.then(|| &state[slot_c.clone()]),
                dh_n: &d_final[slot_h.clone()],
                dc_n: lstm.then(|| &d_final[slot_c.clone()]),
            };
            let (dh0, dc0) = backward_direction(
                call,
                lt,
                &lt.dirs[dir],
                &blk,
                w,
                ends,
                dir,
                &dy,
                &mut dx,
                &mut dw,
            );
            dstate[slot_h].copy_from_slice(&dh0);
            if let Some(dc0) = dc0 {
                dstate[slot_c].copy_from_slice(&dc0);
            }
        }
        // The layer's input came through dropout from the layer below.
        if let Some(mask) = &lt.mask {
            dx.iter_mut().zip(mask).for_each(|(d, &m)| *d = *d * m);
        }
        dy = dx;
    }
    (dy, dw, dstate)
}

/// Initial state and the gradient arriving at the final state of one layer-direction.
struct Ends<'a, T> {
    h0: &'a [T],
    c0: Option<&'a [T]>,
    dh_n: &'a [T],
    dc_n: Option<&'a [T]>,
}

/// Back-propagation through time for one layer-direction. Accumulates into `dx` and `dw`;
/// returns the gradients of the initial `h` and `c`.
#[allow(clippy::too_many_arguments)]
fn backward_direction<T: Real>(
    call: &Call,
    lt: &LayerTrace<T>,
    dt: &DirTrace<T>,
    blk: &Block,
    w: &[T],
    ends: Ends<T>,
    dir: usize,
    dy: &[T],
    dx: &mut [T],
    dw: &mut [T],
) -> (Vec<T>, Option<Vec<T>>) {
    let dims = &call.dims;
    let (seq, batch) = (call.seq, call.batch);
    let (g, h, dh_out) = (dims.gate_size(), dims.hidden_size, dims.output_size());
    let hs = dims.h_size();
    let wt = Weights::new(w, blk, dims);
    let rows = seq * batch;
    let gru = dims.mode == RnnMode::Gru;

    // Gradients of the gate pre-activations on the input side and the recurrent side; they
    // differ only in a GRU's n gate, where the recurrent term is scaled by r.
    let mut dgi = vec![T::zero(); rows * g];
    let mut dgh = if gru {
        vec![T::zero(); rows * g]
    } else {
        Vec::new()
    };
    // h_{t-1} of every step, for the recurrent weight gradient.
    let mut h_prev_all = vec![T::zero(); rows * hs];
    let mut dh = ends.dh_n.to_vec();
    let mut dc = ends.dc_n.map(<[T]>::to_vec).unwrap_or_default();
    let mut d_rec_h = vec![T::zero(); batch * hs];
    // With a projection: the gradient reaching each h_t, for the projection's own gradient.
    let projected = wt.w_hr.is_some();
    let mut dh_all = vec![T::zero(); if projected { rows * hs } else { 0 }];
    // The gradient reaching each sample's cell output at the current step.
    let mut d_out = vec![T::zero(); batch * h];
    for s in (0..seq).rev() {
        let t = if dir == 1 { seq - 1 - s } else { s };
        if let Some(w_hr) = wt.w_hr {
            for b in (0..batch).filter(|&b| call.active(t, b)) {
                let row = t * batch + b;
                let dyt = &dy[row * dh_out + dir * hs..][..hs];
                let total = &mut dh_all[row * hs..][..hs];
                for ((d, &y), &n) in total.iter_mut().zip(dyt).zip(&dh[b * hs..][..hs]) {
                    *d = y + n;
                }
            }
            // Through the projection: the gradient of o ⊙ tanh(c_t).
            let step = Mat::rows(&dh_all[t * batch * hs..(t + 1) * batch * hs], hs);
            matmul((batch, h, hs), &mut d_out, step, Mat::rows(w_hr, h), false);
        } else {
            for b in (0..batch).filter(|&b| call.active(t, b)) {
                let dyt = &dy[(t * batch + b) * dh_out + dir * hs..][..hs];
                let rows = d_out[b * h..][..h].iter_mut().zip(dyt);
                for ((d, &y), &n) in rows.zip(&dh[b * hs..][..hs]) {
                    *d = y + n;
                }
            }
        }
        let (h_prev_all_r, dgi_r, dgh_r) = (
            Rows::new(&mut h_prev_all),
            Rows::new(&mut dgi),
            Rows::new(&mut dgh),
        );
        let (dh_r, dc_r) = (Rows::new(&mut dh), Rows::new(&mut dc));
        let (ends, d_out) = (&ends, &d_out);
        for_each_sample(batch, g, |b| {
            if !call.active(t, b) {
                return;
            }
            let prev = (!call.first(t, b, dir)).then(|| if dir == 1 { t + 1 } else { t - 1 });
            let row = t * batch + b;
            let hp: &[T] = match prev {
                Some(pt) => &lt.output[(pt * batch + b) * dh_out + dir * hs..][..hs],
                None => &ends.h0[b * hs..][..hs],
            };
            let c_prev: &[T] = match (dims.mode, prev) {
                (RnnMode::Lstm, Some(pt)) => &dt.cells[(pt * batch + b) * h..][..h],
                (RnnMode::Lstm, None) => &ends.c0.unwrap_or(&[])[b * h..][..h],
                _ => &[],
            };
            // SAFETY: sample b writes only its own row of step t and its own state chunk.
            let (h_prev_row, dh_b, d_pre) = unsafe {
                (
                    h_prev_all_r.get(row * hs, hs),
                    dh_r.get(b * hs, hs),
                    dgi_r.get(row * g, g),
                )
            };
            h_prev_row.copy_from_slice(hp);
            let (dc, d_rec) = match dims.mode {
                // SAFETY: as above.
                RnnMode::Lstm => (unsafe { dc_r.get(b * h, h) }, &mut [][..]),
                RnnMode::Gru => (&mut [][..], unsafe { dgh_r.get(row * g, g) }),
                RnnMode::RnnTanh | RnnMode::RnnRelu => (&mut [][..], &mut [][..]),
            };
            cell::backward(
                dims.mode,
                cell::Backward {
                    gates: &dt.gates[row * g..][..g],
                    cell: &dt.cells[row * h..][..h],
                    c_prev,
                    h_prev: hp,
                    d_out: &d_out[b * h..][..h],
                    dc,
                    dh_prev_direct: dh_b,
                    d_pre,
                    d_rec,
                },
            );
        });
        let d_rec = if gru { &dgh } else { &dgi };
        let d_rec_t = Mat::rows(&d_rec[t * batch * g..(t + 1) * batch * g], g);
        matmul(
            (batch, hs, g),
            &mut d_rec_h,
            d_rec_t,
            Mat::rows(wt.w_hh, hs),
            false,
        );
        // dh_{t-1} = W_hh^T dgates (+ z * dh for a GRU, already in dh); samples without this
        // step pass their dh through unchanged.
        for b in (0..batch).filter(|&b| call.active(t, b)) {
            let (dhb, rec) = (&mut dh[b * hs..][..hs], &d_rec_h[b * hs..][..hs]);
            for (d, &r) in dhb.iter_mut().zip(rec) {
                *d = if gru { *d + r } else { r };
            }
        }
    }
    let dgh = if gru { &dgh } else { &dgi };

    // Weight gradients of all steps in one product each.
    let (g_in, in_size) = (Mat::rows(&dgi, g), blk.in_size);
    let dw_ih = &mut dw[blk.w_ih..blk.w_ih + g * in_size];
    matmul(
        (g, in_size, rows),
        dw_ih,
        g_in.t(),
        Mat::rows(&lt.input, in_size),
        true,
    );
    let dw_hh = &mut dw[blk.w_hh..blk.w_hh + g * hs];
    matmul(
        (g, hs, rows),
        dw_hh,
        Mat::rows(dgh, g).t(),
        Mat::rows(&h_prev_all, hs),
        true,
    );
    if let Some(off) = blk.w_hr {
        let dw_hr = &mut dw[off..off + hs * h];
        let d = Mat::rows(&dh_all, hs).t();
        matmul((hs, h, rows), dw_hr, d, Mat::rows(&dt.unprojected, h), true);
    }
    for (off, d) in [(blk.b_ih, &dgi), (blk.b_hh, dgh)] {
        if let Some(off) = off {
            for row in d.chunks_exact(g) {
                for (acc, &v) in dw[off..off + g].iter_mut().zip(row) {
                    *acc = *acc + v;
                }
            }
        }
    }
    matmul(
        (rows, in_size, g),
        dx,
        g_in,
        Mat::rows(wt.w_ih, in_size),
        true,
    );
    (dh, ends.dc_n.is_some().then_some(dc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn dropout(p: f32, seed: u64) -> Dropout {
        Dropout {
            p,
            seed,
            call_index: 0,
            generation: 0,
        }
    }

    fn random(rng: &mut StdRng, n: usize) -> Vec<f64> {
        (0..n).map(|_| rng.random_range(-0.8..0.8)).collect()
    }

    /// With dropout the masks are a function of the seed, so finite differences still apply.
    #[test]
    fn dropout_gradients_match_finite_differences() {
        let mut rng = StdRng::seed_from_u64(rand::rng().random());
        for mode in [RnnMode::Lstm, RnnMode::Gru] {
            let dims = RnnDims {
                mode,
                input_size: 2,
                hidden_size: 3,
                num_layers: 3,
                num_directions: 2,
                bias: crate::Bias::Double,
                proj_size: 0,
            };
            let call = Call {
                dims,
                seq: 3,
                batch: 2,
                lengths: None,
                zero_state: false,
            };
            let drop = dropout(0.4, rng.random());
            let (w, x, s) = (
                random(&mut rng, dims.weight_count()),
                random(&mut rng, 3 * 2 * 2),
                random(&mut rng, call.state_len()),
            );
            let r = random(&mut rng, call.output_len() + call.state_len());
            let loss = |w: &[f64]| -> f64 {
                let (out, _) = forward(&call, &x, w, &s, drop, false);
                out.iter().zip(&r).map(|(a, b)| a * b).sum()
            };
            let (out, trace) = forward(&call, &x, &w, &s, drop, true);
            let no_drop = forward(&call, &x, &w, &s, dropout(0.0, 0), false).0;
            assert!(out != no_drop, "dropout changed nothing");
            let (_, dw, _) = backward(&call, &w, &s, &trace.unwrap(), &r);
            for i in 0..w.len() {
                let (mut a, mut b) = (w.clone(), w.clone());
                a[i] += 1e-6;
                b[i] -= 1e-6;
                let fd = (loss(&a) - loss(&b)) / 2e-6;
                assert!(
                    (fd - dw[i]).abs() < 1e-6 * (1.0 + fd.abs()),
                    "{mode:?} w[{i}]: {} vs {fd}",
                    dw[i]
                );
            }
        }
    }

    #[test]
    fn one_layer_has_nothing_to_drop() {
        let dims = RnnDims {
            mode: RnnMode::Lstm,
            input_size: 2,
            hidden_size: 2,
            num_layers: 1,
            num_directions: 1,
            bias: crate::Bias::Double,
            proj_size: 0,
        };
        let call = Call {
            dims,
            seq: 2,
            batch: 1,
            lengths: None,
            zero_state: false,
        };
        let mut rng = StdRng::seed_from_u64(7);
        let (w, x, s) = (
            random(&mut rng, dims.weight_count()),
            random(&mut rng, 4),
            random(&mut rng, 4),
        );
        assert_eq!(
            forward(&call, &x, &w, &s, dropout(0.5, 1), false).0,
            forward(&call, &x, &w, &s, dropout(0.0, 1), false).0
        );
    }
}
