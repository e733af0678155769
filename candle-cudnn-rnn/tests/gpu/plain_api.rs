//! The op as a candle user trains it, on the GPU: the default algorithm (`Heuristic`) names the
//! kernel that served; `candle_cudnn_rnn::backward` gives `loss.backward()`'s gradients with the
//! weight's written straight into the store (on cuDNN and on the crate's kernels); a loss of the
//! final state alone gets the f64 CPU path's gradients; a call given no initial state (null to
//! the kernels) gives a call given zeros; a weight or state view that starts at an odd element
//! goes to cuDNN, at an even one to the crate's kernels, and either gives the f64 CPU path's
//! results.

use super::*;
use candle_core::DType::{BF16, F32};

/// A training call of `shape` over `inputs` with x, w and the state as variables; the loss's
/// gradients by `loss.backward()` or by `candle_cudnn_rnn::backward` (`direct`), as
/// `[dx, dw, ds]`, and the kernel that served. `state_alone`: the loss reads only the final
/// state (Σ state·gs).
fn gradients(
    shape: &Shape,
    inputs: &Inputs,
    direct: bool,
    state_alone: bool,
) -> candle_core::Result<([Tensor; 3], Option<RnnAlgo>)> {
    let (w, x) = (Var::from_tensor(&inputs.w)?, Var::from_tensor(&inputs.x)?);
    let s = Var::from_tensor(inputs.s.as_ref().expect("an initial state"))?;
    let rnn = shape.rnn(w.as_tensor());
    let state = RnnState::from_packed(s.as_tensor().clone());
    let (y, st) = rnn.forward_t(x.as_tensor(), Some(&state), true)?;
    let of_state = (st.packed() * &inputs.gs)?.sum_all()?;
    let loss = match state_alone {
        true => of_state,
        false => ((&y * &inputs.gy)?.sum_all()? + of_state)?,
    };
    let grads = match direct {
        true => candle_cudnn_rnn::backward(&loss)?,
        false => loss.backward()?,
    };
    let g = |v: &Var| {
        grads
            .get(v.as_tensor())
            .cloned()
            .ok_or_else(|| candle_core::Error::Msg("a gradient is missing".into()))
    };
    Ok(([g(&x)?, g(&w)?, g(&s)?], rnn.last_algo()))
}

fn shape(algo: RnnAlgo, (batch, seq, hidden): (usize, usize, usize)) -> Shape {
    Shape {
        mode: RnnMode::Lstm,
        cfg: RnnConfig {
            num_layers: 2,
            algo,
            ..Default::default()
        },
        batch,
        seq,
        input: hidden,
        hidden,
    }
}

/// The cases: cuDNN in f32 (the default's kernel there), the crate's kernels in bf16, and
/// the default in bf16 (whichever it picks), each with its gradient bound against f64.
fn cases() -> Vec<(Shape, DType, f64)> {
    vec![
        (shape(RnnAlgo::Heuristic, (5, 7, 32)), F32, 1e-4),
        (shape(RnnAlgo::Persistent, (8, 9, 64)), BF16, 2e-2),
        (shape(RnnAlgo::Heuristic, (8, 9, 64)), BF16, 2e-2),
    ]
}

/// Random inputs of `shape` in `dtype`: on the GPU, on the CPU in f64, and the case's name.
fn inputs(gpu: &Gpu, shape: &Shape, dtype: DType, rng: &mut StdRng) -> (Inputs, Inputs, String) {
    let inputs = Inputs::random(shape, true, dtype, rng);
    let name = format!("{} {:?} {}", shape.name(), shape.cfg.algo, dtype.as_str());
    (
        inputs.to(&gpu.device, dtype),
        inputs.to(&Device::Cpu, DType::F64),
        name,
    )
}

#[test]
fn backward_writes_loss_backwards_gradients_into_the_store() {
    check_each(
        "backward_writes_loss_backwards_gradients_into_the_store",
        cases(),
        |gpu, (shape, dtype, bound), rng, verdicts| {
            let (on_gpu, host, name) = inputs(gpu, &shape, dtype, rng);
            let (plain, served) = gradients(&shape, &on_gpu, false, false).unwrap();
            let (direct, _) = gradients(&shape, &on_gpu, true, false).unwrap();
            let (want, _) = gradients(&shape.with_algo(RnnAlgo::Standard), &host, false, false)
                .expect("the CPU path");
            verdicts.require(
                !matches!(served, None | Some(RnnAlgo::Heuristic | RnnAlgo::Auto)),
                || format!("{name}: last_algo says {served:?}, not the kernel that served"),
            );
            if shape.cfg.algo == RnnAlgo::Persistent {
                verdicts.require_persistent(&name, served);
            }
            let mut rows = Vec::new();
            for ((what, d), (p, w)) in ["dx", "dw", "dh0"]
                .iter()
                .zip(&direct)
                .zip(plain.iter().zip(&want))
            {
                // The same kernels either way: the same values, up to summation order.
                rows.push((*what, rel_err(d, p), 1e-6));
                rows.push((*what, rel_err(d, w), bound));
            }
            verdicts.case(
                &format!("{name} (served by {served:?}), direct vs plain, vs f64"),
                &rows,
            );
        },
    );
}

#[test]
fn a_loss_of_the_final_state_alone_matches_the_f64_cpu_path() {
    check_each(
        "a_loss_of_the_final_state_alone_matches_the_f64_cpu_path",
        cases(),
        |gpu, (shape, dtype, bound), rng, verdicts| {
            let (on_gpu, host, name) = inputs(gpu, &shape, dtype, rng);
            let (got, served) = gradients(&shape, &on_gpu, true, true).unwrap();
            let (want, _) = gradients(&shape.with_algo(RnnAlgo::Standard), &host, false, true)
                .expect("the CPU path");
            let rows: Vec<_> = ["dx", "dw", "dh0"]
                .iter()
                .zip(got.iter().zip(&want))
                .map(|(what, (g, w))| (*what, rel_err(g, w), bound))
                .collect();
            verdicts.case(
                &format!("{name} (served by {served:?}), state alone"),
                &rows,
            );
        },
    );
}

/// A training call given no initial state (which the kernels read as null: zeros; cuDNN's
/// `Standard` stacks as zeros of the backend's own) gives what a call given a zero state
/// gives, on cuDNN (one layer and a stack) and on the crate's kernels (one step, where the
/// recurrent weight's gradient at t = 0 is the only product, and several; one layer and a
/// stack), with a loss that reads the final state and one that does not (whose gradient the
/// kernels then read as null too).
#[test]
fn a_call_given_no_state_gives_a_call_given_zeros() {
    let case = |mode, algo, dtype, (layers, seq)| {
        let mut shape = shape(algo, (8, seq, 64));
        shape.mode = mode;
        shape.cfg.num_layers = layers;
        (shape, dtype)
    };
    let cases = vec![
        case(RnnMode::Lstm, RnnAlgo::Standard, F32, (2, 7)),
        case(RnnMode::Gru, RnnAlgo::Standard, F32, (2, 7)),
        case(RnnMode::Gru, RnnAlgo::Standard, F32, (1, 7)),
        case(RnnMode::Lstm, RnnAlgo::Persistent, BF16, (1, 9)),
        case(RnnMode::Gru, RnnAlgo::Persistent, BF16, (2, 9)),
        case(RnnMode::Lstm, RnnAlgo::Persistent, BF16, (1, 1)),
        case(RnnMode::Gru, RnnAlgo::Persistent, BF16, (1, 1)),
    ];
    check_each(
        "a_call_given_no_state_gives_a_call_given_zeros",
        cases,
        |gpu, (shape, dtype), rng, verdicts| {
            let inputs = Inputs::random(&shape, false, dtype, rng).to(&gpu.device, dtype);
            let (w, x) = (
                Var::from_tensor(&inputs.w).unwrap(),
                Var::from_tensor(&inputs.x).unwrap(),
            );
            let rnn = shape.rnn(w.as_tensor());
            let zeros = rnn.zero_state(shape.batch).unwrap();
            let run = |state: Option<&RnnState>, reads_state: bool| {
                let (y, st) = rnn.forward_t(x.as_tensor(), state, true).unwrap();
                let mut loss = (&y * &inputs.gy).unwrap().sum_all().unwrap();
                if reads_state {
                    loss = (loss + (st.packed() * &inputs.gs).unwrap().sum_all().unwrap()).unwrap();
                }
                let grads = candle_cudnn_rnn::backward(&loss).unwrap();
                let g = |v: &Var| grads.get(v.as_tensor()).unwrap().clone();
                ([y, st.packed().clone(), g(&x), g(&w)], rnn.last_algo())
            };
            for reads_state in [false, true] {
                let name = format!(
                    "{} {:?} {} (loss reads the state: {reads_state})",
                    shape.name(),
                    shape.cfg.algo,
                    dtype.as_str()
                );
                let ((none, served), (given, _)) =
                    (run(None, reads_state), run(Some(&zeros), reads_state));
                if shape.cfg.algo == RnnAlgo::Persistent {
                    verdicts.require_persistent(&name, served);
                }
                let rows: Vec<_> = ["y", "state", "dx", "dw"]
                    .iter()
                    .zip(none.iter().zip(&given))
                    .map(|(what, (a, b))| (*what, rel_err(a, b), 1e-6))
                    .collect();
                verdicts.case(&format!("{name}: no state vs zeros"), &rows);
            }
        },
    );
}

/// Views into larger buffers as the operands of the default (bf16, where the crate's kernels
/// serve whole tensors): a weight or a given state that starts at an odd element goes to cuDNN
/// (the kernels read them in pairs of elements), one at an even element stays on the kernels,
/// and a call given no state takes the kernels whatever its placeholder; an input anywhere stays
/// on the kernels (whose recurrence, where it makes the input projection itself, reads x in
/// 16-byte pieces: from element 3 off that alignment, from 8 on it); each call's output, final
/// state and gradients match the f64 CPU path's.
#[test]
fn operands_at_odd_elements_go_to_cudnn_and_match_the_f64_cpu_path() {
    // (mode, the weight's first element, the state's (None: no state), the input's, the kernel
    // named).
    let persistent = RnnAlgo::Persistent;
    let cases = [
        (RnnMode::Lstm, 2, Some(4), 0, persistent),
        (RnnMode::Gru, 2, Some(0), 3, persistent),
        (RnnMode::Lstm, 0, Some(0), 3, persistent),
        (RnnMode::Lstm, 1, Some(0), 0, RnnAlgo::Standard),
        (RnnMode::Gru, 1, Some(0), 0, RnnAlgo::Standard),
        (RnnMode::Lstm, 0, Some(3), 0, RnnAlgo::Standard),
        (RnnMode::Gru, 0, Some(1), 0, RnnAlgo::Standard),
        (RnnMode::Gru, 2, None, 8, persistent),
        (RnnMode::Lstm, 1, None, 0, RnnAlgo::Standard),
    ];
    check_each(
        "operands_at_odd_elements_go_to_cudnn_and_match_the_f64_cpu_path",
        cases,
        |gpu, (mode, w_at, s_at, x_at, want), rng, verdicts| {
            let mut shape = shape(RnnAlgo::Heuristic, (8, 9, 64));
            shape.mode = mode;
            shape.cfg.num_layers = 1;
            let inputs = Inputs::random(&shape, true, BF16, rng);
            let (on_gpu, host) = (
                inputs.to(&gpu.device, BF16),
                inputs.to(&Device::Cpu, DType::F64),
            );
            // The operand `t` (of any shape) from element `at` of a flat variable with `at`
            // elements before it and one after.
            let placed = |t: &Tensor, at: usize| {
                let zeros = |n: usize| Tensor::zeros(n, t.dtype(), t.device()).unwrap();
                let mut pieces = vec![t.flatten_all().unwrap(), zeros(1)];
                if at > 0 {
                    pieces.insert(0, zeros(at));
                }
                let var = Var::from_tensor(&Tensor::cat(&pieces, 0).unwrap()).unwrap();
                let view = var.as_tensor().narrow(0, at, t.elem_count()).unwrap();
                (var, view.reshape(t.shape()).unwrap())
            };
            // y, the final state and [dx, dw, ds] (ds only with a state) of Σ y·gy + Σ state·gs,
            // the operands placed at `x_at`, `w_at` and `s_at`, and the kernel that served.
            let run = |inputs: &Inputs, (x_at, w_at, s_at): (usize, usize, Option<usize>), algo| {
                let (x, x_view) = placed(&inputs.x, x_at);
                let (w, w_view) = placed(&inputs.w, w_at);
                let state = s_at.map(|at| placed(inputs.s.as_ref().unwrap(), at));
                let rnn = shape.with_algo(algo).rnn(&w_view);
                let given = state
                    .as_ref()
                    .map(|(_, v)| RnnState::from_packed(v.clone()));
                let (y, st) = rnn.forward_t(&x_view, given.as_ref(), true).unwrap();
                let loss = ((&y * &inputs.gy).unwrap().sum_all().unwrap()
                    + (st.packed() * &inputs.gs).unwrap().sum_all().unwrap())
                .unwrap();
                let grads = candle_cudnn_rnn::backward(&loss).unwrap();
                let g = |v: &Var, at: usize, n: usize| {
                    grads.get(v.as_tensor()).unwrap().narrow(0, at, n).unwrap()
                };
                let mut out = vec![y, st.packed().clone(), g(&x, x_at, inputs.x.elem_count())];
                out.push(g(&w, w_at, inputs.w.elem_count()));
                if let (Some((s, _)), Some(at)) = (&state, s_at) {
                    out.push(g(s, at, inputs.s.as_ref().unwrap().elem_count()));
                }
                (out, rnn.last_algo())
            };
            let name = format!(
                "{} bf16, input at element {x_at}, weight at {w_at}, state at {}",
                shape.name(),
                s_at.map_or("none".into(), |a| a.to_string())
            );
            let (got, served) = run(&on_gpu, (x_at, w_at, s_at), RnnAlgo::Heuristic);
            let (want_out, _) = run(&host, (0, 0, s_at.map(|_| 0)), RnnAlgo::Standard);
            verdicts.require(served == Some(want), || {
                format!("{name}: served by {served:?}, not {want:?}")
            });
            let rows: Vec<_> = ["y", "state", "dx", "dw", "ds"]
                .iter()
                .zip(got.iter().zip(&want_out))
                .map(|(what, (g, w))| (*what, rel_err(g, w), 2e-2))
                .collect();
            verdicts.case(&format!("{name} (served by {served:?})"), &rows);
        },
    );
}
