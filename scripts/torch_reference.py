#!/usr/bin/env python3
"""PyTorch reference timings, the PyTorch half of the candle-cudnn-rnn comparison.

Part 1 (--grid): the cudnn-rnn-benchmarks grid. nn.LSTM / nn.GRU (input size = hidden,
time-major [seq, batch, hidden], unidirectional unless --bidirectional, bias, dropout 0) on 10 shapes:
depth 1, batch 32/128, seq 30, hidden 128/512/1024, and depth 3, batch 128, seq 30/200,
hidden 512/1024, plus PTB large's LSTM (depth 2, batch 20, seq 35, hidden 1500). Loss = MSE(all top-layer outputs, random target). Reported in
microseconds per example (per-batch median / batch):
  train   = zero grads + forward + loss + backward (grads of all parameters)
  forward = inference: module.eval() under torch.no_grad()
Precisions: torch-fp32 (TF32 off), torch-tf32, torch-amp-bf16 and torch-amp-fp16 (autocast,
TF32 on, plain backward without GradScaler); with --impls also torch-bf16 and torch-fp16 (module
and input in that dtype, no autocast). --loss sum backpropagates the outputs' sum (every
output's gradient 1: the RNN's forward and backward alone) instead of the MSE; --input-grad
also computes the input's gradient (as under an embedding); --graph times the training step
and the forward each captured as a CUDA graph, 10 replays between synchronizations;
--bidirectional makes every layer bidirectional (outputs of 2 x hidden); all four as
bench_grid's flags. The "rnn_dtype" column is the dtype the RNN
output actually had (PyTorch's cuDNN RNN autocast wrapper is known to cast to float16
whatever the autocast dtype, so the bf16 row may really run the RNN in fp16).

Part 2 (--ptb small|medium|large): training throughput of the TensorFlow PTB tutorial model
(Embedding -> dropout -> LSTM(layers, dropout) -> dropout -> Linear, uniform init,
loss = mean cross-entropy * num_steps, clip_grad_norm_, SGD lr 1.0, state carried detached).
Tokens come from DIR/ptb.train.txt when --data DIR has it, otherwise random ids.
Precisions: torch-fp32, torch-tf32, torch-amp-fp16 (autocast + GradScaler) and
torch-amp-fp16-graph (whole step in one CUDA graph, autocast fp16 *without* GradScaler,
because the scaler's inf check syncs with the host and cannot be captured).

Run (defaults: --grid and --ptb large):
  python3 scripts/torch_reference.py --json torch.json
  python3 scripts/torch_reference.py --grid --reps 20 --warmup 5
  python3 scripts/torch_reference.py --ptb small --ptb large --data data/ --batches 100
Pairs with the Rust side:
  cargo run --release -p candle-cudnn-rnn --features cuda --example bench_grid
  ptb-lm bench
Timing: time.perf_counter around each repetition with torch.cuda.synchronize() on both
sides; medians reported. Only torch + stdlib are needed.
"""
import argparse, collections, contextlib, gc, json, os, platform, statistics, sys, time, warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", message=".*TF32.*")  # torch>=2.9 deprecation note on allow_tf32

GRID_SHAPES = ([(1, b, 30, h) for b in (32, 128) for h in (128, 512, 1024)]
               + [(3, 128, s, h) for s in (30, 200) for h in (512, 1024)]
               + [(2, 20, 35, 1500)])  # (layers, batch, seq, hidden); the last is PTB large's LSTM
GRID_IMPLS = ["torch-fp32", "torch-tf32", "torch-amp-bf16", "torch-amp-fp16"]
# Whole-module half precision, for --impls: the module and its input in the dtype itself.
PURE_DTYPES = {"torch-bf16": torch.bfloat16, "torch-fp16": torch.float16}
# name: (hidden, layers, num_steps, keep_prob, init_scale, max_grad_norm); batch 20, vocab 10000
PTB_CONFIGS = {"small": (200, 2, 20, 1.0, 0.1, 5.0), "medium": (650, 2, 35, 0.5, 0.05, 5.0),
               "large": (1500, 2, 35, 0.35, 0.04, 10.0)}
PTB_IMPLS = ["torch-fp32", "torch-tf32", "torch-amp-fp16", "torch-amp-fp16-graph"]
PTB_BATCH, PTB_VOCAB = 20, 10000


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def set_precision(impl, dev, cache_enabled=True):
    """Set TF32 flags for `impl`; return a zero-argument factory of its autocast context."""
    tf32 = impl != "torch-fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.enabled = True
    dtype = torch.bfloat16 if "bf16" in impl else torch.float16 if "fp16" in impl else None
    if dtype is None or "amp" not in impl:
        return contextlib.nullcontext
    return lambda: torch.autocast(dev.type, dtype=dtype, cache_enabled=cache_enabled)


def seconds(fn, dev, warmup, reps):
    """(median, min, max) seconds of fn over reps runs after warmup runs, synchronized."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        sync(dev)
        t0 = time.perf_counter()
        fn()
        sync(dev)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def graph_seconds(fn, dev, warmup, reps, replays=10):
    """Like `seconds`, for fn captured once as a CUDA graph (after warm-up runs on a side
    stream, as PyTorch asks) and replayed `replays` times between synchronizations: (median,
    min, max) seconds per replay, the device's time without the host's launches. fn must leave
    .grad None before its backward, so that the graph allocates the gradients and each replay
    writes them anew."""
    side = torch.cuda.Stream(dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        for _ in range(max(warmup, 3)):
            fn()
    torch.cuda.current_stream(dev).wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(warmup):
        g.replay()
    times = []
    for _ in range(reps):
        sync(dev)
        t0 = time.perf_counter()
        for _ in range(replays):
            g.replay()
        sync(dev)
        times.append((time.perf_counter() - t0) / replays)
    return statistics.median(times), min(times), max(times)


# ----------------------------------------------------------------------------- part 1: grid
def bench_grid_case(mode, layers, batch, seq, hidden, impl, dev, args):
    torch.manual_seed(0)
    cls = nn.LSTM if mode == "lstm" else nn.GRU
    bidirectional = getattr(args, "bidirectional", False)
    m = cls(hidden, hidden, layers, bias=True, batch_first=False,
            dropout=getattr(args, "dropout", 0.0), bidirectional=bidirectional).to(dev)
    m.flatten_parameters()
    x = torch.randn(seq, batch, hidden, device=dev)
    target = torch.randn(seq, batch, (2 if bidirectional else 1) * hidden, device=dev)
    pure = PURE_DTYPES.get(impl)
    if pure is not None:
        m, x, target = m.to(pure), x.to(pure), target.to(pure)
        m.flatten_parameters()
    if dev.type == "cuda" and not torch.backends.cudnn.is_acceptable(x):
        raise RuntimeError("cuDNN would not be used for this input")
    amp = set_precision(impl, dev)
    with amp():
        rnn_dtype = str(m(x)[0].dtype).replace("torch.", "")
    x.requires_grad_(getattr(args, "input_grad", False))
    sum_loss = getattr(args, "loss", "mse") == "sum"

    def train():
        m.zero_grad(set_to_none=True)
        x.grad = None
        with amp():
            y = m(x)[0]
            loss = y.sum() if sum_loss else F.mse_loss(y, target)
        loss.backward()

    def forward():
        with torch.no_grad(), amp():
            m(x)

    m.train()
    if getattr(args, "graph", False):
        if dev.type != "cuda":
            raise RuntimeError("--graph needs --device cuda")
        train_t = graph_seconds(train, dev, args.warmup, args.reps)
    else:
        train_t = seconds(train, dev, args.warmup, args.reps)
    m.eval()
    if getattr(args, "graph", False):
        fwd_t = graph_seconds(forward, dev, args.warmup, args.reps)
    else:
        fwd_t = seconds(forward, dev, args.warmup, args.reps)
    us = lambda t: t * 1e6 / batch
    return {"train_us_per_example": us(train_t[0]), "forward_us_per_example": us(fwd_t[0]),
            "train_min_us_per_example": us(train_t[1]), "train_max_us_per_example": us(train_t[2]),
            "forward_min_us_per_example": us(fwd_t[1]), "forward_max_us_per_example": us(fwd_t[2]),
            "rnn_dtype": rnn_dtype}


def profile_grid_case(spec, impl, dev, steps=10):
    """One grid shape's training step under torch.profiler: each kernel's device time per step
    and the host's time to queue a forward and a backward (before synchronizing)."""
    mode, layers, batch, seq, hidden = spec.split(",")
    layers, batch, seq, hidden = int(layers), int(batch), int(seq), int(hidden)
    torch.manual_seed(0)
    cls = nn.LSTM if mode == "lstm" else nn.GRU
    m = cls(hidden, hidden, layers).to(dev)
    x = torch.randn(seq, batch, hidden, device=dev)
    target = torch.randn(seq, batch, hidden, device=dev)
    amp = set_precision(impl, dev)
    host = {"forward": [], "backward": []}

    def train():
        m.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        with amp():
            loss = F.mse_loss(m(x)[0], target)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        sync(dev)
        host["forward"].append(t1 - t0)
        host["backward"].append(t2 - t1)

    for _ in range(20):
        train()
    host = {"forward": [], "backward": []}
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            train()
    print(f"## {spec} {impl}: host us to queue forward {statistics.median(host['forward'])*1e6:.1f}, "
          f"backward {statistics.median(host['backward'])*1e6:.1f}")
    print("| kernel | calls per step | device us per step |")
    print("|---|---|---|")
    total = 0.0
    for e in sorted(prof.key_averages(), key=lambda e: -getattr(e, "self_device_time_total", 0)):
        t = getattr(e, "self_device_time_total", 0)
        if t <= 0:
            continue
        total += t
        print(f"| {e.key[:90]} | {e.count / steps:.1f} | {t / steps:.1f} |")
    print(f"| total | | {total / steps:.1f} |\n")


def steps_only(spec, impl, dev, steps):
    """Just `steps` training steps of one grid shape, for an outside profiler (ncu) to time each
    kernel the same way on both sides."""
    mode, layers, batch, seq, hidden = spec.split(",")
    layers, batch, seq, hidden = int(layers), int(batch), int(seq), int(hidden)
    torch.manual_seed(0)
    m = (nn.LSTM if mode == "lstm" else nn.GRU)(hidden, hidden, layers).to(dev)
    x = torch.randn(seq, batch, hidden, device=dev)
    target = torch.randn(seq, batch, hidden, device=dev)
    amp = set_precision(impl, dev)
    for _ in range(steps):
        m.zero_grad(set_to_none=True)
        with amp():
            loss = F.mse_loss(m(x)[0], target)
        loss.backward()
    sync(dev)


def run_grid(dev, args):
    rows = []
    only = {tuple(s.split(",")) for s in args.only or []}
    impls = args.impls.split(",") if args.impls else GRID_IMPLS
    # A shape --only names off the grid is timed too, after the grid's.
    extra = sorted({tuple(int(v) for v in s[1:]) for s in only} - set(GRID_SHAPES))
    for mode in ("lstm", "gru"):
        for layers, batch, seq, hidden in GRID_SHAPES + extra:
            if only and (mode, str(layers), str(batch), str(seq), str(hidden)) not in only:
                continue
            for impl in impls:
                row = {"mode": mode, "layers": layers, "batch": batch, "seq": seq,
                       "hidden": hidden, "impl": impl, "bidirectional": args.bidirectional,
                       "dropout": args.dropout}
                try:
                    row.update(bench_grid_case(mode, layers, batch, seq, hidden, impl, dev, args))
                except Exception as e:  # keep going with the other cases
                    row["error"] = f"{type(e).__name__}: {e}"
                rows.append(row)
                print("grid", json.dumps(row), file=sys.stderr, flush=True)
                cleanup()
    return rows


# ----------------------------------------------------------------------------- part 2: PTB
class PTBModel(nn.Module):
    def __init__(self, vocab, hidden, layers, keep_prob, init_scale):
        super().__init__()
        p = 1.0 - keep_prob
        self.embedding = nn.Embedding(vocab, hidden)
        self.drop = nn.Dropout(p)
        self.lstm = nn.LSTM(hidden, hidden, layers, dropout=p if layers > 1 else 0.0)
        self.proj = nn.Linear(hidden, vocab)
        for w in self.parameters():
            nn.init.uniform_(w, -init_scale, init_scale)
        self.lstm.flatten_parameters()

    def forward(self, x, state):  # x: [num_steps, batch] ids
        out, state = self.lstm(self.drop(self.embedding(x)), state)
        return self.proj(self.drop(out)), state


def ptb_token_ids(data_dir, n_random, dev):
    """ids of ptb.train.txt (TF reader vocabulary: by descending count, then word), or random."""
    path = os.path.join(data_dir, "ptb.train.txt") if data_dir else ""
    if path and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            words = f.read().replace("\n", " <eos> ").split()
        counts = collections.Counter(words)
        vocab = {w: i for i, (w, _) in enumerate(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))}
        if len(vocab) > PTB_VOCAB:
            raise ValueError(f"{path}: {len(vocab)} words > vocab {PTB_VOCAB}")
        return torch.tensor([vocab[w] for w in words], dtype=torch.long, device=dev), path
    return torch.randint(0, PTB_VOCAB, (n_random,), device=dev), "random"


def ptb_batches(ids, batch, num_steps):
    """Like the TF reader: rows of the id stream, windows of num_steps, targets shifted by one.
    Returns get(i) -> (x, y), both time-major [num_steps, batch]; cycles over epochs."""
    batch_len = ids.numel() // batch
    data = ids[: batch * batch_len].view(batch, batch_len)
    epoch_size = (batch_len - 1) // num_steps
    assert epoch_size > 0, "not enough tokens"

    def get(i):
        j = (i % epoch_size) * num_steps
        return (data[:, j:j + num_steps].t().contiguous(),
                data[:, j + 1:j + num_steps + 1].t().contiguous())
    return get


def bench_ptb_case(config, impl, get_batch, dev, args):
    hidden, layers, T, keep_prob, init_scale, max_norm = PTB_CONFIGS[config]
    B, V = PTB_BATCH, PTB_VOCAB
    graph = impl.endswith("-graph")
    if graph and dev.type != "cuda":
        raise RuntimeError("CUDA graphs need --device cuda")
    torch.manual_seed(0)
    model = PTBModel(V, hidden, layers, keep_prob, init_scale).to(dev).train()
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=1.0)
    # autocast's weight-cast cache must be off under graph capture
    amp = set_precision(impl, dev, cache_enabled=not graph)
    scaler = torch.amp.GradScaler(dev.type) if impl == "torch-amp-fp16" else None
    state_dtype = torch.float16 if "fp16" in impl and dev.type == "cuda" else torch.float32
    zeros = lambda: torch.zeros(layers, B, hidden, device=dev, dtype=state_dtype)

    def loss_fn(x, y, state):
        with amp():
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.view(-1, V), y.view(-1)) * T
        return loss, state

    if not graph:
        state = (zeros(), zeros())

        def step(i):
            nonlocal state
            x, y = get_batch(i)
            opt.zero_grad(set_to_none=True)
            loss, new_state = loss_fn(x, y, state)
            if scaler is None:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, max_norm)
                opt.step()
            else:
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(params, max_norm)
                scaler.step(opt)
                scaler.update()
            state = tuple(s.detach() for s in new_state)
    else:
        sx, sy = (t.clone() for t in get_batch(0))
        sh, sc = zeros(), zeros()

        def body():  # one full training step on static tensors; state carried in sh/sc
            loss, (h, c) = loss_fn(sx, sy, (sh, sc))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, max_norm)
            opt.step()
            sh.copy_(h.detach())
            sc.copy_(c.detach())

        side = torch.cuda.Stream(dev)  # warm up on a side stream before capture (torch docs recipe)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                body()
        torch.cuda.current_stream(dev).wait_stream(side)
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)  # grads get allocated from the graph's private pool
        with torch.cuda.graph(g):
            body()

        def step(i):
            x, y = get_batch(i)
            sx.copy_(x)
            sy.copy_(y)
            g.replay()

    for i in range(args.warmup):
        step(i)
    sync(dev)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    times = []
    for i in range(args.warmup, args.warmup + args.batches):
        sync(dev)
        t0 = time.perf_counter()
        step(i)
        sync(dev)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return {"ms_per_batch": med * 1e3, "words_per_second": B * T / med,
            "peak_memory_bytes": torch.cuda.max_memory_allocated(dev) if dev.type == "cuda" else None}


def run_ptb(configs, dev, args):
    rows = []
    for config in configs:
        T = PTB_CONFIGS[config][2]
        ids, source = ptb_token_ids(args.data, PTB_BATCH * (T * (args.warmup + args.batches + 1) + 1), dev)
        get_batch = ptb_batches(ids, PTB_BATCH, T)
        for impl in PTB_IMPLS:
            row = {"config": config, "impl": impl, "batch": PTB_BATCH, "num_steps": T, "data": source}
            try:
                row.update(bench_ptb_case(config, impl, get_batch, dev, args))
            except Exception as e:  # e.g. graph capture unsupported: record and continue
                row["error"] = f"{type(e).__name__}: {e}"
            rows.append(row)
            print("ptb", json.dumps(row), file=sys.stderr, flush=True)
            cleanup()
    return rows


# ----------------------------------------------------------------------------- output
def cleanup():
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def markdown(rows, cols):
    fmt = lambda v: f"{v:.2f}" if isinstance(v, float) else ("" if v is None else str(v))
    lines = ["| " + " | ".join(cols + ["error"]) + " |", "|" + "---|" * (len(cols) + 1)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(c)) for c in cols + ["error"]) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", action="store_true", help="run the cudnn-rnn-benchmarks grid")
    ap.add_argument("--ptb", action="append", choices=sorted(PTB_CONFIGS), help="PTB config (repeatable)")
    ap.add_argument("--json", help="write all results to this file")
    ap.add_argument("--reps", type=int, default=20, help="grid: timed repetitions (median)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up reps/steps (grid 5, ptb 10)")
    ap.add_argument("--batches", type=int, default=100, help="ptb: timed steps (median)")
    ap.add_argument("--data", default="data", help="directory that may hold ptb.train.txt")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                    choices=["cuda", "cpu"])
    ap.add_argument("--profile", action="append", metavar="MODE,L,B,T,H",
                    help="profile one grid shape's training step (kernels, host time); repeatable")
    ap.add_argument("--only", action="append", metavar="MODE,L,B,T,H",
                    help="grid: this shape only (repeatable; one off the grid is added to it)")
    ap.add_argument("--impls", help="grid: comma-separated precisions (default all)")
    ap.add_argument("--loss", default="mse", choices=["mse", "sum"],
                    help="grid: the training step's loss (sum: the RNN's forward and backward alone)")
    ap.add_argument("--input-grad", action="store_true", help="grid: the input's gradient too")
    ap.add_argument("--bidirectional", action="store_true",
                    help="grid: every layer bidirectional (outputs of 2 x hidden)")
    ap.add_argument("--dropout", type=float, default=0.0, metavar="P",
                    help="grid: the module's dropout between layers (training mode drops units)")
    ap.add_argument("--graph", action="store_true",
                    help="grid: time the training step and the forward captured as CUDA graphs (10 replays between syncs)")
    ap.add_argument("--impl", default="torch-fp32", choices=GRID_IMPLS, help="--profile's precision")
    ap.add_argument("--steps-only", metavar="MODE,L,B,T,H",
                    help="run --reps training steps of one shape and nothing else (under ncu)")
    args = ap.parse_args(argv)
    if args.steps_only:
        steps_only(args.steps_only, args.impl, torch.device(args.device), args.reps)
        return None
    if args.profile:
        for spec in args.profile:
            profile_grid_case(spec, args.impl, torch.device(args.device))
        return None
    if not args.grid and not args.ptb:
        args.grid, args.ptb = True, ["large"]
    dev = torch.device(args.device)
    gpu = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"cpu ({platform.processor()})"
    result = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "gpu": gpu,
              "grid": [], "ptb": []}
    print(f"torch {result['torch']}, cuDNN {result['cudnn']}, {gpu}\n")
    if args.grid:
        grid_args = argparse.Namespace(**{**vars(args), "warmup": 5 if args.warmup is None else args.warmup})
        result["grid"] = run_grid(dev, grid_args)
        print("## RNN grid (us per example, median of %d)\n" % args.reps)
        print(markdown(result["grid"], ["mode", "layers", "batch", "seq", "hidden", "impl",
                                        "train_us_per_example", "forward_us_per_example", "rnn_dtype"]))
        print()
    if args.ptb:
        ptb_args = argparse.Namespace(**{**vars(args), "warmup": 10 if args.warmup is None else args.warmup})
        result["ptb"] = run_ptb(args.ptb, dev, ptb_args)
        print("## PTB LM training (median of %d steps)\n" % args.batches)
        print(markdown(result["ptb"], ["config", "impl", "batch", "num_steps", "ms_per_batch",
                                       "words_per_second", "peak_memory_bytes", "data"]))
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {args.json}")
    return result


if __name__ == "__main__":
    main()
