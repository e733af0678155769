#!/usr/bin/env python3
"""Generate PyTorch reference fixtures for the candle-cudnn-rnn tests.

Writes: candle-cudnn-rnn/tests/fixtures/torch_rnn.json (relative to the repo root).

For each case, builds nn.LSTM / nn.GRU / nn.RNN (batch_first=False, dropout=0) in float64
on the CPU, re-initializes all parameters uniformly in [-0.5, 0.5], draws
x ~ randn(seq, batch, input) and optionally h0 (c0) ~ 0.5 * randn, runs forward,
draws random upstream gradients gy, gh (gc) and backpropagates
loss = sum(y*gy) + sum(h_n*gh) [+ sum(c_n*gc)].
Records inputs, parameters (state_dict order), outputs, upstream grads and
all gradients. Cases with "lengths" run a padded batch through pack_padded_sequence
(enforce_sorted=False) and pad_packed_sequence(total_length=seq): PyTorch's variable-length
semantics. Every tensor is {"shape": [...], "data": [row-major floats]}.

Regenerate (needs only torch) from the repo root:
    python3 scripts/torch_fixtures.py
"""
import json
import os

import torch
import torch.nn as nn

SEED = 20240611
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "candle-cudnn-rnn", "tests", "fixtures", "torch_rnn.json")

# (name, mode, input_size, hidden_size, num_layers, bidirectional, bias, has_state, seq, batch
#  [, lengths [, proj_size]])
CASES = [
    ("lstm_l1_uni_bias_state", "lstm", 3, 4, 1, False, True, True, 4, 2),
    ("lstm_l2_bi_bias_state", "lstm", 3, 4, 2, True, True, True, 5, 3),
    ("lstm_l2_bi_nobias_nostate", "lstm", 5, 3, 2, True, False, False, 3, 2),
    ("gru_l1_uni_bias_state", "gru", 3, 4, 1, False, True, True, 4, 2),
    ("gru_l2_bi_bias_state", "gru", 3, 4, 2, True, True, True, 5, 3),
    ("gru_l3_uni_nobias_nostate", "gru", 4, 3, 3, False, False, False, 3, 2),
    ("rnn_tanh_l2_bi_bias_state", "rnn_tanh", 3, 4, 2, True, True, True, 4, 3),
    ("rnn_relu_l2_uni_bias_state", "rnn_relu", 3, 5, 2, False, True, True, 5, 2),
    ("lstm_l2_bi_lengths", "lstm", 3, 4, 2, True, True, True, 5, 4, [5, 2, 4, 1]),
    ("gru_l2_bi_lengths", "gru", 3, 4, 2, True, True, False, 4, 3, [1, 4, 3]),
    ("rnn_tanh_l1_bi_lengths", "rnn_tanh", 2, 3, 1, True, True, True, 4, 3, [2, 4, 3]),
    ("lstm_l2_bi_proj2", "lstm", 3, 5, 2, True, True, True, 4, 3, None, 2),
    ("lstm_l2_uni_proj3_lengths", "lstm", 4, 6, 2, False, True, True, 5, 3, [3, 5, 1], 3),
]

CELLS = {
    "lstm": lambda *a, **k: nn.LSTM(*a, **k),
    "gru": lambda *a, **k: nn.GRU(*a, **k),
    "rnn_tanh": lambda *a, **k: nn.RNN(*a, nonlinearity="tanh", **k),
    "rnn_relu": lambda *a, **k: nn.RNN(*a, nonlinearity="relu", **k),
}


def t(x):
    """Tensor -> {"shape", "data"} (row-major), or None."""
    if x is None:
        return None
    x = x.detach().contiguous()
    return {"shape": list(x.shape), "data": x.view(-1).tolist()}


def run_case(name, mode, I, H, L, bidir, bias, has_state, T, B, lengths=None, proj=0):
    extra = {"proj_size": proj} if proj else {}
    m = CELLS[mode](I, H, num_layers=L, bias=bias, batch_first=False,
                    dropout=0.0, bidirectional=bidir, **extra)
    with torch.no_grad():
        for p in m.parameters():
            p.uniform_(-0.5, 0.5)
    D = 2 if bidir else 1

    x = torch.randn(T, B, I, requires_grad=True)
    h0 = c0 = None
    if has_state:
        h0 = (torch.randn(L * D, B, proj or H) * 0.5).requires_grad_()
        if mode == "lstm":
            c0 = (torch.randn(L * D, B, H) * 0.5).requires_grad_()

    inp = x
    if lengths is not None:
        inp = nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), enforce_sorted=False)
    if mode == "lstm":
        y, (hn, cn) = m(inp, (h0, c0)) if has_state else m(inp)
    else:
        y, hn = m(inp, h0) if has_state else m(inp)
        cn = None
    if lengths is not None:
        y, _ = nn.utils.rnn.pad_packed_sequence(y, total_length=T)

    gy, gh = torch.randn_like(y), torch.randn_like(hn)
    gc = torch.randn_like(cn) if cn is not None else None
    loss = (y * gy).sum() + (hn * gh).sum()
    if cn is not None:
        loss = loss + (cn * gc).sum()
    loss.backward()

    named = dict(m.named_parameters())
    sd = m.state_dict()
    return {
        "name": name, "mode": mode, "input_size": I, "hidden_size": H,
        "num_layers": L, "bidirectional": bidir, "bias": bias,
        "seq": T, "batch": B, "has_state": has_state, "lengths": lengths, "proj_size": proj,
        "params": {k: t(v) for k, v in sd.items()},
        "x": t(x), "h0": t(h0), "c0": t(c0),
        "y": t(y), "h_n": t(hn), "c_n": t(cn),
        "gy": t(gy), "gh": t(gh), "gc": t(gc),
        "grad_x": t(x.grad),
        "grad_h0": t(h0.grad) if h0 is not None else None,
        "grad_c0": t(c0.grad) if c0 is not None else None,
        "grad_params": {k: t(named[k].grad) for k in sd.keys()},
    }


def main():
    torch.manual_seed(SEED)
    torch.set_default_dtype(torch.float64)
    cases = [run_case(*c) for c in CASES]
    doc = {"generator": "scripts/torch_fixtures.py",
           "torch_version": torch.__version__, "cases": cases}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(doc, f)
    path = os.path.normpath(OUT)
    with open(path) as f:
        loaded = json.load(f)
    print(f"wrote {path}: {os.path.getsize(path)} bytes, "
          f"{len(loaded['cases'])} cases, torch {torch.__version__}")
    for c in loaded["cases"]:
        print(f"  {c['name']}: {list(c['params'].keys())}")


if __name__ == "__main__":
    main()
