//! The cell math of every mode, one sample and one step at a time, forward and backward: the
//! CPU path's drivers (`super`) do the matrix products around it and call these through an
//! exhaustive match on the mode, so a new mode cannot silently take another's branch.
//!
//! Gate order is cuDNN's and PyTorch's: LSTM `i, f, g, o`; GRU `r, z, n`. `H` below is the
//! hidden size and `G*H` the gates of one direction.

use super::Real;
use crate::RnnMode;

fn sigmoid<T: Real>(x: T) -> T {
    T::one() / (T::one() + (-x).exp())
}

/// One sample's step forward.
pub(super) struct Forward<'a, T> {
    /// `x_t W_ih^T + b_ih`, plus `b_hh` except in a GRU, `[G*H]`.
    pub pre: &'a [T],
    /// `h_{t-1} W_hh^T`, `[G*H]`.
    pub rec: &'a [T],
    /// A GRU's `b_hh`, which stays inside `r ⊙ (W_hn h + b_hn)` for the n gate.
    pub b_hh: Option<&'a [T]>,
    /// `h_{t-1}` (a GRU mixes it into `h_t`), `[H]`.
    pub h_prev: &'a [T],
    /// An LSTM's `c_{t-1}` in, `c_t` out, `[H]`; empty for the other modes.
    pub c: &'a mut [T],
    /// The gate activations, kept for backward, `[G*H]`.
    pub gates: &'a mut [T],
    /// Kept for backward, `[H]`: an LSTM's `c_t`, a GRU's `W_hn h_{t-1} + b_hn`.
    pub cell: &'a mut [T],
    /// The step's output, `[H]`: `h_t`, or an LSTM's `o ⊙ tanh(c_t)` before its projection.
    pub out: &'a mut [T],
}

/// One sample's step backward.
pub(super) struct Backward<'a, T> {
    /// The forward step's gate activations, `[G*H]`.
    pub gates: &'a [T],
    /// The forward step's `cell`, `[H]`.
    pub cell: &'a [T],
    /// An LSTM's `c_{t-1}`, `[H]`; empty otherwise.
    pub c_prev: &'a [T],
    /// `h_{t-1}` (a GRU's `h_t` depends on it directly), `[H]`.
    pub h_prev: &'a [T],
    /// The whole gradient reaching the step's output `out`, `[H]`.
    pub d_out: &'a [T],
    /// An LSTM's `dc_t` in, `dc_{t-1}` out, `[H]`; empty otherwise.
    pub dc: &'a mut [T],
    /// A GRU's gradient reaching `h_{t-1}` directly, `z ⊙ dh_t` (written), `[H]`; the driver
    /// adds the part through `W_hh`. Untouched by the other modes.
    pub dh_prev_direct: &'a mut [T],
    /// The gradient of the input-side pre-activations `pre`, `[G*H]`.
    pub d_pre: &'a mut [T],
    /// A GRU's gradient of the recurrent-side pre-activations (the n gate's scaled by `r`),
    /// `[G*H]`; empty otherwise (the two sides agree).
    pub d_rec: &'a mut [T],
}

/// `h = act(pre + rec)` for the plain RNNs.
#[derive(Clone, Copy)]
enum Activation {
    Tanh,
    Relu,
}

pub(super) fn forward<T: Real>(mode: RnnMode, s: Forward<T>) {
    match mode {
        RnnMode::Lstm => lstm_forward(s),
        RnnMode::Gru => gru_forward(s),
        RnnMode::RnnTanh => elman_forward(s, Activation::Tanh),
        RnnMode::RnnRelu => elman_forward(s, Activation::Relu),
    }
}

pub(super) fn backward<T: Real>(mode: RnnMode, s: Backward<T>) {
    match mode {
        RnnMode::Lstm => lstm_backward(s),
        RnnMode::Gru => gru_backward(s),
        RnnMode::RnnTanh => elman_backward(s, Activation::Tanh),
        RnnMode::RnnRelu => elman_backward(s, Activation::Relu),
    }
}

fn lstm_forward<T: Real>(s: Forward<T>) {
    let h = s.out.len();
    let (p, r) = (s.pre, s.rec);
    for j in 0..h {
        let i = sigmoid(p[j] + r[j]);
        let f = sigmoid(p[h + j] + r[h + j]);
        let g = (p[2 * h + j] + r[2 * h + j]).tanh();
        let o = sigmoid(p[3 * h + j] + r[3 * h + j]);
        let c = f * s.c[j] + i * g;
        (s.gates[j], s.gates[h + j], s.gates[2 * h + j]) = (i, f, g);
        s.gates[3 * h + j] = o;
        s.cell[j] = c;
        s.c[j] = c;
        s.out[j] = o * c.tanh();
    }
}

fn lstm_backward<T: Real>(s: Backward<T>) {
    let h = s.d_out.len();
    let one = T::one();
    for j in 0..h {
        let gt = s.gates;
        let (i, f, g, o) = (gt[j], gt[h + j], gt[2 * h + j], gt[3 * h + j]);
        let tc = s.cell[j].tanh();
        let dh = s.d_out[j];
        let dc = s.dc[j] + dh * o * (one - tc * tc);
        s.d_pre[j] = dc * g * i * (one - i);
        s.d_pre[h + j] = dc * s.c_prev[j] * f * (one - f);
        s.d_pre[2 * h + j] = dc * i * (one - g * g);
        s.d_pre[3 * h + j] = dh * tc * o * (one - o);
        s.dc[j] = dc * f;
    }
}

fn gru_forward<T: Real>(s: Forward<T>) {
    let h = s.out.len();
    let (p, r) = (s.pre, s.rec);
    let bh = |j: usize| s.b_hh.map_or(T::zero(), |b| b[j]);
    for j in 0..h {
        let rr = sigmoid(p[j] + r[j] + bh(j));
        let z = sigmoid(p[h + j] + r[h + j] + bh(h + j));
        let ghn = r[2 * h + j] + bh(2 * h + j);
        let n = (p[2 * h + j] + rr * ghn).tanh();
        (s.gates[j], s.gates[h + j], s.gates[2 * h + j]) = (rr, z, n);
        s.cell[j] = ghn;
        s.out[j] = (T::one() - z) * n + z * s.h_prev[j];
    }
}

fn gru_backward<T: Real>(s: Backward<T>) {
    let h = s.d_out.len();
    let one = T::one();
    for j in 0..h {
        let (r, z, n) = (s.gates[j], s.gates[h + j], s.gates[2 * h + j]);
        let dh = s.d_out[j];
        let dn = dh * (one - z) * (one - n * n);
        let dr = dn * s.cell[j] * r * (one - r);
        let dz = dh * (s.h_prev[j] - n) * z * (one - z);
        (s.d_pre[j], s.d_pre[h + j], s.d_pre[2 * h + j]) = (dr, dz, dn);
        (s.d_rec[j], s.d_rec[h + j], s.d_rec[2 * h + j]) = (dr, dz, dn * r);
        s.dh_prev_direct[j] = dh * z;
    }
}

fn elman_forward<T: Real>(s: Forward<T>, act: Activation) {
    for j in 0..s.out.len() {
        let a = s.pre[j] + s.rec[j];
        let v = match act {
            Activation::Tanh => a.tanh(),
            Activation::Relu => a.max(T::zero()),
        };
        s.gates[j] = v;
        s.out[j] = v;
    }
}

fn elman_backward<T: Real>(s: Backward<T>, act: Activation) {
    for j in 0..s.d_out.len() {
        let (v, dh) = (s.gates[j], s.d_out[j]);
        s.d_pre[j] = match act {
            Activation::Tanh => dh * (T::one() - v * v),
            Activation::Relu if v > T::zero() => dh,
            Activation::Relu => T::zero(),
        };
    }
}
