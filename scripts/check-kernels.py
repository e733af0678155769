#!/usr/bin/env python3
"""Compiles the CUDA kernels that both crates compile with NVRTC at run time, without a GPU.

The persistent kernels as the library compiles them: NVRTC over the same source (the shared
preludes kernels/half.cuh and kernels/philox.cuh, then persistent/common.cuh, the cell's header
cell_lstm.cuh or cell_gru.cuh, dropout.cu, pad.cu and the recurrence, as kernel.rs's
Pass::sources joins them) with each variant's -D options and architecture, then ptxas for
sm_90a; prints each variant's registers and spills and fails on any compile error. The variants
cover every preprocessor branch: both passes of both cells, bf16 and f16 (and f32 with TF32
products), clusters of 1, 2 and 4, PTB large's shape and small odd ones. A last variant compiles
the preludes alone in front of a kernel that uses them as another crate's module would (NVRTC's
default options, no ELEM_BF16). Every `#if` of the op crate's CUDA sources must name macros only
(a `#define` there or a variant's -D name): the preprocessor reads anything else, a C++
`constexpr` say, as 0.

Then every ptb-lm kernel file (ptb-lm/src/**/*.cu) as its launcher compiles it: the launcher is
the .rs file beside it that takes the file with include_str! into a const and names that const in
a `Module::new("name", &[...])`; the parts listed there (the op crate's preludes HALF and PHILOX,
then the file) are joined in order and compiled with NVRTC's default options, as
candle_cudnn_rnn::kernels::Module::new does, then ptxas for sm_90a checks every kernel of the
module. A file that no launcher compiles that way fails the check.

NVRTC comes from the nvidia-cuda-nvrtc wheel (13.0, as on the GPU machine): NVRTC_DIR names its
unpacked lib/ folder, or the wheel is downloaded with pip into $CUDA_BUILD_PREFIX (default
~/.cache/cuda-build-13.0)/nvrtc. ptxas is taken from PATH (../shared/tools/cuda-build-env.sh).

With --ptx-dir DIR it also writes each persistent variant's PTX into DIR (one file per variant),
and with --same-as DIR it checks each variant against such a folder written before a change that
must not change what the kernels compute (a refactor): the same PTX, or PTX that ptxas turns into
the same sm_90a machine code (an operand order of a commutative instruction, say), or at least
the same floating-point instructions in the same order (branches and predicates rearranged), or
a failure. A variant the folder does not have (a new one) is reported and not counted.

  python3 scripts/check-kernels.py [--ptx-dir DIR] [--same-as DIR]
"""
import ctypes, glob, os, re, subprocess, sys, tempfile, zipfile
from concurrent.futures import ThreadPoolExecutor

NVRTC_WHEEL = "nvidia-cuda-nvrtc==13.0.88"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "candle-cudnn-rnn", "src")
PTB_LM_SRC = os.path.join(ROOT, "ptb-lm", "src")
# The op crate's preludes by the name candle_cudnn_rnn::kernels exports them under.
PRELUDES = {"HALF": "kernels/half.cuh", "PHILOX": "kernels/philox.cuh"}
# The parts in front of every recurrence, in kernel.rs's order ({cell}: the cell's header).
HEAD = ("kernels/half.cuh", "kernels/philox.cuh", "persistent/common.cuh",
        "persistent/cell_{cell}.cuh", "persistent/dropout.cu", "persistent/pad.cu")
# A kernel over the preludes' typed half API and Philox, as another crate's module uses them.
PRELUDE_USER = r"""
template <typename T> __device__ void scale(const T* x, T* y, const unsigned int* key, float p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int c[4] = {(unsigned int)i, 0u, 0u, 0u};
    philox(c, key[0], key[1]);
    store(y + i, c[i & 3] < (unsigned int)(p * 4294967296.0f) ? 0.0f : load(x[i]) / (1.0f - p));
}
extern "C" __global__ void scale_f32(const float* x, float* y, const unsigned int* k, float p, int n) { scale(x, y, k, p, n); }
extern "C" __global__ void scale_bf16(const bf16* x, bf16* y, const unsigned int* k, float p, int n) { scale(x, y, k, p, n); }
extern "C" __global__ void scale_f16(const f16* x, f16* y, const unsigned int* k, float p, int n) { scale(x, y, k, p, n); }
extern "C" __global__ void bits(const u16* x, u16* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = f32_to_bf16(bf16_to_f32(x[i]) + f16_to_f32(f32_to_f16(1.0f)));
}
"""


def nvrtc_dir():
    if os.environ.get("NVRTC_DIR"):
        return os.environ["NVRTC_DIR"]
    prefix = os.environ.get("CUDA_BUILD_PREFIX", os.path.expanduser("~/.cache/cuda-build-13.0"))
    root = os.path.join(prefix, "nvrtc")
    lib = os.path.join(root, "nvidia", "cu13", "lib")
    if not os.path.exists(os.path.join(lib, "libnvrtc.so.13")):
        os.makedirs(root, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--only-binary=:all:", "--python-version", "3.12", "--platform", "manylinux_2_17_x86_64",
                        "--platform", "manylinux2014_x86_64", NVRTC_WHEEL, "-d", root], check=True)
        wheel = glob.glob(os.path.join(root, "nvidia_cuda_nvrtc-*.whl"))[0]
        with zipfile.ZipFile(wheel) as z:
            z.extractall(root, [n for n in z.namelist() if "/lib/" in n])
        os.remove(wheel)
    return lib


def load_nvrtc(lib):
    # libnvrtc opens its builtins by soname: loaded first, globally, they are found without
    # LD_LIBRARY_PATH.
    for b in glob.glob(os.path.join(lib, "libnvrtc-builtins.so.*")):
        if ".alt." not in b:
            ctypes.CDLL(b, mode=ctypes.RTLD_GLOBAL)
    return ctypes.CDLL(os.path.join(lib, "libnvrtc.so.13"))


def ptx_of(nvrtc, source, options, name="persistent.cu"):
    """(PTX, None) or (None, NVRTC's log); `name` is the program's in the log."""
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None):
        return None, "nvrtcCreateProgram failed"
    opts = [o.encode() for o in options]
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    if rc:
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        return None, log.value.decode()
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(n))
    ptx = ctypes.create_string_buffer(n.value)
    nvrtc.nvrtcGetPTX(prog, ptx)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value.decode(), None


def ptxas(ptx):
    """ptxas -v on sm_90a: (None, {kernel: [registers, bytes spilled]}) or (the error, None)."""
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    try:
        r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f.name, "-o", os.devnull], capture_output=True, text=True)
    finally:
        os.remove(f.name)
    if r.returncode:
        return r.stderr.strip(), None
    kernels, on = {}, None
    for line in r.stderr.splitlines():
        if "Compiling entry function" in line:
            on = line.split("'")[1]
            kernels[on] = ["?", "?"]
        elif on and "spill stores" in line:
            kernels[on][1] = line.split("bytes stack frame,")[1].split("bytes spill stores")[0].strip()
        elif on and "Used" in line and "registers" in line:
            kernels[on][0] = line.split("Used")[1].split("registers")[0].strip()
    return None, kernels


def resources(ptx, kernel):
    """ptxas's report for `kernel` on sm_90a: (ok, 'N registers, S bytes spilled' or the error)."""
    err, kernels = ptxas(ptx)
    if err:
        return False, err
    regs, spills = kernels.get(kernel, ("?", "?"))
    return True, f"{regs} registers, {spills} bytes spilled"


def ptb_lm_modules():
    """(module name, .cu path relative to ptb-lm/src, parts as source text or None and a reason)
    for every ptb-lm kernel file, its parts as its launcher lists them."""
    for cu in sorted(glob.glob(os.path.join(PTB_LM_SRC, "**", "*.cu"), recursive=True)):
        rel = os.path.relpath(cu, PTB_LM_SRC)
        base = os.path.basename(cu)
        found = None
        for rs in sorted(glob.glob(os.path.join(os.path.dirname(cu), "*.rs"))):
            text = open(rs).read()
            consts = dict((c, f) for c, f in re.findall(r'const (\w+): &str = include_str!\("([^"]+)"\);', text))
            mine = [c for c, f in consts.items() if f == base]
            if not mine:
                continue
            for name, parts in re.findall(r'Module::new\(\s*"([^"]+)",\s*&\[([^\]]*)\]', text):
                parts = [p.strip() for p in parts.split(",") if p.strip()]
                if mine[0] not in parts:
                    continue
                known = {**{c: os.path.join(SRC, f) for c, f in PRELUDES.items()},
                         **{c: os.path.join(os.path.dirname(rs), f) for c, f in consts.items()}}
                unknown = [p for p in parts if p not in known]
                if unknown:
                    found = (name, None, f"{os.path.basename(rs)} lists parts this script does not know: {unknown}")
                else:
                    found = (name, [open(known[p]).read() for p in parts], None)
                break
            if found:
                break
        if found:
            yield (found[0], rel, found[1], found[2])
        else:
            yield ("?", rel, None, "no launcher beside it compiles it with Module::new(name, &[..., its const])")


def variants():
    """(name, kernel, -D options, architecture, cell) covering the kernels' preprocessor
    branches: both passes of the LSTM and of the GRU, layer by layer and as a wavefront."""
    shapes = [  # (hidden, batch, forward units, backward units)
        (1500, 20, 12, 13),  # PTB large, as the library plans it on an H100
        (66, 3, 4, 4),       # odd batch and hidden: tiles and K steps not filled
        (512, 32, 4, 4),     # the largest batch
    ]
    for h, b, fu, bu in shapes:
        for bf16 in (1, 0):
            if h != 1500 and bf16 == 0:
                continue
            base = [f"-DHID={h}", f"-DBATCH={b}", "-DNWARPS=8", f"-DELEM_BF16={bf16}"]
            dt = "bf16" if bf16 else "f16"
            for cl in (1, 2, 4):
                arch = "compute_80" if cl == 1 else "compute_90"
                tag = f"h{h} b{b} {dt} cl{cl}"
                yield (f"forward {tag}", "persistent_fwd",
                       base + [f"-DUNITS={fu}", "-DNBUF=2", f"-DCL={cl}", "-DCH=64"], arch, "lstm")
                # A GRU's forward as the library plans it: the LSTM's units, 3 gate rows each
                # (the last tile part empty).
                yield (f"gru forward {tag}", "persistent_fwd",
                       base + [f"-DUNITS={fu}", "-DNBUF=2", f"-DCL={cl}", "-DCH=64"], arch, "gru")
                for ch, nbuf in ((64, 2), (32, 4), (64, 3)):
                    if (ch, nbuf) != (64, 2) and (cl < 4 or h != 1500):
                        continue
                    yield (f"backward {tag} ch{ch} nbuf{nbuf}", "persistent_bwd",
                           base + [f"-DUNITS={bu}", f"-DNBUF={nbuf}", f"-DCL={cl}", f"-DCH={ch}"], arch,
                           "lstm")
                yield (f"gru backward {tag}", "persistent_bwd",
                       base + [f"-DUNITS={bu}", "-DNBUF=2", f"-DCL={cl}", "-DCH=64"], arch, "gru")
    # Inference batches of several chunks (recurrence_fwd.cu's NCH): the grid's batch 128 at
    # hidden 1024, 512 and 128 as the library plans them, and an odd batch whose last chunk ends
    # early (77: chunks of 32, 32 and 13) at a hidden size that fills no tile.
    for hid, batch, units in ((1024, 128, 8), (512, 128, 4), (128, 128, 4), (200, 77, 4), (1024, 256, 8), (512, 256, 4)):
        for cell in ("lstm", "gru"):
            for bf16 in (1, 0):
                if bf16 == 0 and hid != 1024:
                    continue
                dt = "bf16" if bf16 else "f16"
                chunks = [f"-DHID={hid}", f"-DBATCH={batch}", "-DNWARPS=8", f"-DELEM_BF16={bf16}",
                          f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64"]
                yield (f"{cell} forward h{hid} b{batch} {dt} chunks", "persistent_fwd", chunks,
                       "compute_80", cell)
                # In clusters of 2 and 4 (CANDLE_RNN_PERSISTENT_CLUSTER=F,B), which split each
                # block's read of h_{t-1}: the cluster's units on every block.
                for cl in (2, 4):
                    clustered = [d for d in chunks if not d.startswith("-DCL=")] + [f"-DCL={cl}"]
                    yield (f"{cell} forward h{hid} b{batch} {dt} chunks cl{cl}", "persistent_fwd",
                           clustered, "compute_90", cell)
    # The backward of batches of several chunks, in the clusters rules.rs's shape_clusters
    # gives them (hidden 1024 and 512 at batch 128: 2; 128 and 200: none).
    for hid, batch, units, cl in ((1024, 128, 8, 2), (512, 128, 4, 2), (128, 128, 4, 1),
                                  (200, 77, 4, 1), (1024, 256, 8, 2)):
        for cell in ("lstm", "gru"):
            chunks = [f"-DHID={hid}", f"-DBATCH={batch}", "-DNWARPS=8", "-DELEM_BF16=1",
                      f"-DUNITS={units}", f"-DCL={cl}", "-DNBUF=2", "-DCH=64"]
            arch = "compute_80" if cl == 1 else "compute_90"
            yield (f"{cell} backward h{hid} b{batch} bf16 cl{cl} chunks", "persistent_bwd", chunks,
                   arch, cell)
    # A layer in one thread-block cluster whose hardware barrier serves each step (ONE_CLUSTER,
    # rules.rs's shape_one_cluster): 8 blocks, hidden 256 at batch 8 and 128 at 16.
    for cell in ("lstm", "gru"):
        for hid, batch, units in ((256, 8, 32), (128, 16, 16)):
            one = [f"-DHID={hid}", f"-DBATCH={batch}", "-DNWARPS=8", "-DELEM_BF16=1",
                   f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1"]
            tag = f"h{hid} b{batch} bf16 one cluster"
            yield (f"{cell} forward {tag}", "persistent_fwd", one, "compute_90", cell)
            yield (f"{cell} backward {tag}", "persistent_bwd", one, "compute_90", cell)
    # Its forward pushing h through distributed shared memory (PUSH, plan.rs's Plan::push):
    # hidden 128 at batch 32, bf16 and f16.
    for cell in ("lstm", "gru"):
        for elem in ("-DELEM_BF16=1", "-DELEM_BF16=0"):
            push = ["-DHID=128", "-DBATCH=32", "-DNWARPS=8", elem, "-DUNITS=16", "-DCL=1",
                    "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1", "-DPUSH=1"]
            tag = "bf16" if elem.endswith("1") else "f16"
            yield (f"{cell} forward h128 b32 {tag} one cluster pushed", "persistent_fwd", push,
                   "compute_90", cell)
            yield (f"{cell} backward h128 b32 {tag} one cluster pushed", "persistent_bwd", push,
                   "compute_90", cell)
    # The pushed backward at odd sizes: hidden 46 in 6 blocks of 8 units (48 rows, 3 tiles), an
    # odd batch (a padded pair of samples), and hidden 256 at batch 8 (2 tiles a warp); and on
    # f32 operands with TF32 products (hidden 128 in 4 groups of 8, hidden 46), forward too.
    for cell in ("lstm", "gru"):
        for hid, batch, units, elem, groups in ((46, 5, 8, "-DELEM_BF16=1", 1),
                                                (256, 8, 32, "-DELEM_BF16=1", 1),
                                                (128, 8, 16, "-DELEM_F32=1", 4),
                                                (46, 5, 8, "-DELEM_F32=1", 1)):
            push = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                    f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1", "-DPUSH=1"]
            tag = "tf32" if "F32" in elem else "bf16"
            yield (f"{cell} backward h{hid} b{batch} g{groups} {tag} one cluster pushed", "persistent_bwd",
                   push, "compute_90", cell)
            if tag == "tf32":
                yield (f"{cell} forward h{hid} b{batch} g{groups} {tag} one cluster pushed",
                       "persistent_fwd", push, "compute_90", cell)
    # One cluster per batch group (8 groups of 4 samples at hidden 128), pushed forward.
    for cell in ("lstm", "gru"):
        grouped = ["-DHID=128", "-DBATCH=4", "-DGROUPS=8", "-DNWARPS=8", "-DELEM_BF16=1",
                   "-DUNITS=16", "-DCL=1", "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1"]
        tag = "h128 b4 8 groups bf16 one cluster each"
        yield (f"{cell} forward {tag} pushed", "persistent_fwd", grouped + ["-DPUSH=1"],
               "compute_90", cell)
        yield (f"{cell} backward {tag}", "persistent_bwd", grouped, "compute_90", cell)
        yield (f"{cell} backward {tag} pushed", "persistent_bwd", grouped + ["-DPUSH=1"],
               "compute_90", cell)
    # In 16 blocks, the non-portable cluster (rules.rs's shape_one_cluster), 8 samples a group:
    # hidden 256 (16 units a block) and 384 in 4 groups (24 units), both passes pushed, the
    # backward's tile in registers (recurrence_bwd.cu's PUSH_IN_REGS); 512 in 4 groups (32 units),
    # bf16 and f16, the forward pushed and the backward's exchange through L2 behind the
    # cluster's barrier (rules.rs's shape_one_cluster_pushes), and pushed as the tuning may ask
    # (its tile in registers too).
    for cell in ("lstm", "gru"):
        for hid, groups, units, elem in ((256, 1, 16, "-DELEM_BF16=1"), (384, 4, 24, "-DELEM_BF16=1"),
                                         (512, 4, 32, "-DELEM_BF16=1"), (512, 4, 32, "-DELEM_BF16=0")):
            one = [f"-DHID={hid}", "-DBATCH=8", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                   f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1"]
            tag = f"h{hid} b8 g{groups} {'bf16' if elem.endswith('1') else 'f16'} 16 blocks"
            yield (f"{cell} forward {tag} pushed", "persistent_fwd", one + ["-DPUSH=1"],
                   "compute_90", cell)
            yield (f"{cell} backward {tag} pushed", "persistent_bwd", one + ["-DPUSH=1"],
                   "compute_90", cell)
            if hid == 512:
                yield (f"{cell} backward {tag}", "persistent_bwd", one, "compute_90", cell)
    # The backward's tile from W_hh transposed (WT_ROWS, plan.rs's Plan::backward_transposed),
    # in every shape of exchange through L2: PTB large in clusters of 4 (a GRU's 4500 gate rows
    # a row, padded to whole 16-byte pieces), an odd hidden and batch in clusters of 2, one
    # cluster of 16 blocks in 4 groups (f16), batches of several chunks in clusters of 2, and f32
    # operands (TF32 products, rounded on the way) without clusters and in one cluster.
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, cl, elem, one in ((1500, 20, 1, 13, 4, "-DELEM_BF16=1", 0),
                                                         (66, 3, 1, 4, 2, "-DELEM_BF16=1", 0),
                                                         (512, 8, 4, 32, 1, "-DELEM_BF16=0", 1),
                                                         (1024, 128, 1, 8, 2, "-DELEM_BF16=1", 0),
                                                         (200, 77, 1, 4, 1, "-DELEM_F32=1", 0),
                                                         (128, 16, 1, 16, 1, "-DELEM_F32=1", 1)):
            wt = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                  f"-DUNITS={units}", f"-DCL={cl}", "-DNBUF=2", "-DCH=64", f"-DONE_CLUSTER={one}",
                  "-DWT_ROWS=1"]
            tag = {"-DELEM_BF16=1": "bf16", "-DELEM_BF16=0": "f16", "-DELEM_F32=1": "tf32"}[elem]
            arch = "compute_90" if cl > 1 or one else "compute_80"
            yield (f"{cell} backward h{hid} b{batch} g{groups} {tag} cl{cl}{' one cluster' if one else ''} "
                   "from W_hh transposed", "persistent_bwd", wt, arch, cell)
    # The wide backward (plan.rs's Plan::wide_backward: 16 warps, each warp's fragments of the tile
    # in registers, recurrence_bwd.cu's BWD_WREG) at the shapes rules.rs's shape_wide_backward
    # takes: hidden 512 in one cluster of 16 blocks for each of 4 groups of 8 (f16), in 8 groups of
    # 16 (bf16, the tile from W_hh transposed), hidden 1024 in 2 groups of 16 on blocks of 16 units
    # (bf16, transposed); a GRU's 1536 gate columns alike, and at hidden 512 in chunks of 32
    # (rules.rs's shape_wide_backward_chunk); each with the buffers its plan takes (at most
    # rules.rs's WIDE_BACKWARD_MOST_BUFFERS, fewer where shared memory holds fewer).
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, nbuf, elem, one, ch in (
                (512, 8, 4, 32, 3, "-DELEM_BF16=0", 1, 64), (512, 16, 8, 32, 2, "-DELEM_BF16=1", 0, 64),
                (1024, 16, 2, 16, 3, "-DELEM_BF16=1", 0, 64)) + (
                ((512, 8, 4, 32, 3, "-DELEM_BF16=0", 1, 32), (512, 16, 8, 32, 3, "-DELEM_BF16=1", 0, 32))
                if cell == "gru" else ()):
            wide = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=16", elem,
                    f"-DUNITS={units}", "-DCL=1", f"-DNBUF={nbuf}", f"-DCH={ch}", f"-DONE_CLUSTER={one}",
                    "-DBWD_WREG=1"] + ([] if one else ["-DWT_ROWS=1"])
            tag = "bf16" if elem.endswith("1") else "f16"
            arch = "compute_90" if one else "compute_80"
            yield (f"{cell} wide backward h{hid} b{batch} g{groups} {tag}{' one cluster' if one else ''}"
                   f"{' chunks of 32' if ch == 32 else ''}", "persistent_bwd", wide, arch, cell)
    # The pushed forward with its gates in registers (REG_GATES, plan.rs's Plan::reg_gates), its
    # shared memory as kernel.rs's reg_gates_smem sizes it (which the kernel checks), a gate warp
    # and a helper for each 4 units: hidden 128 in 16 groups of 8 (16 units a block) with an
    # input of 128 folded in, bf16, and so in 24-unit blocks writing W_hh transposed (rules.rs's
    # reg_gates_units on an H200: 6 blocks, the last with 2 of its 6 tiles in the hidden size);
    # an odd hidden and batch (66 at 3, 8 units a block, the last
    # block's 4-unit tile past the hidden size) with an input of 24, f16; hidden 256 (16 K steps)
    # writing W_hh transposed, its projection before the launch; hidden 64 in 4-unit blocks (the
    # odd hidden's and the 4-unit blocks push 8 bytes a store, the others 16:
    # recurrence_reg_fwd.cu's RG_PUSH16).
    def reg_gates_smem(units, hid, xin):
        items = units // 4 * 32
        x_stages = units // 4 * 2 * 8 * (-(-xin // 16) * 16 + 8) * 2 if xin else 0
        push_slots = 2 * 8 * units * 2 if units % 8 == 0 and hid % 8 == 0 else 0
        return (2 * 8 * (-(-hid // 16) * 16 + 8) * 2 + 48 + 2 * items * 16 + 2 * items * 32 + x_stages
                + push_slots)
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, xin, elem, wt in ((128, 8, 16, 16, 128, "-DELEM_BF16=1", 0),
                                                         (128, 8, 16, 24, 128, "-DELEM_BF16=1", 1),
                                                         (66, 3, 1, 8, 24, "-DELEM_BF16=0", 0),
                                                         (256, 8, 4, 16, 0, "-DELEM_BF16=1", 1),
                                                         (64, 8, 2, 4, 64, "-DELEM_BF16=1", 0)):
            reg = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", f"-DNWARPS={units // 2}", elem,
                   f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1", "-DPUSH=1",
                   f"-DXIN={xin}", f"-DWT_WRITE={wt}", "-DREG_GATES=1",
                   f"-DSMEM_BYTES={reg_gates_smem(units, hid, xin)}"]
            tag = "bf16" if elem.endswith("1") else "f16"
            yield (f"{cell} forward h{hid} b{batch} g{groups} u{units} x{xin} {tag} gates in registers"
                   f"{' writing W_hh transposed' if wt else ''}", "persistent_fwd", reg, "compute_90", cell)
    # The pushed forward writing W_hh transposed for its backward (WT_WRITE, plan.rs's
    # Plan::forward_transposes): hidden 512 in 4 groups of 16 blocks, bf16 and f16, and hidden
    # 200 at batch 7 (25 tiles of 8 units, an odd batch) with its input projection folded.
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, xin, elem in ((512, 8, 4, 32, 0, "-DELEM_BF16=1"),
                                                     (512, 8, 4, 32, 0, "-DELEM_BF16=0"),
                                                     (200, 7, 1, 16, 64, "-DELEM_BF16=1")):
            writes = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                      f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1",
                      "-DPUSH=1", f"-DXIN={xin}", "-DWT_WRITE=1"]
            tag = "bf16" if elem.endswith("1") else "f16"
            yield (f"{cell} forward h{hid} b{batch} g{groups} x{xin} {tag} one cluster pushed "
                   "writing W_hh transposed", "persistent_fwd", writes, "compute_90", cell)
    # The pushed forward making its input projection itself (XIN, plan.rs's Plan::input):
    # hidden 128 at batch 4 in 8 groups (an input of 128, f16 and bf16), hidden 256 at batch 8,
    # and odd sizes: hidden 46 in blocks of 8 units (a GRU's gates across tiles) at batch 5 with
    # an input of 40 (its K steps fewer than the warps, the last one half empty).
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, xin, elem in ((128, 4, 8, 16, 128, "-DELEM_BF16=1"),
                                                     (128, 4, 8, 16, 128, "-DELEM_BF16=0"),
                                                     (256, 8, 1, 32, 256, "-DELEM_BF16=1"),
                                                     (46, 5, 1, 8, 40, "-DELEM_BF16=1")):
            folded = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                      f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", "-DONE_CLUSTER=1",
                      "-DPUSH=1", f"-DXIN={xin}"]
            tag = "bf16" if elem.endswith("1") else "f16"
            yield (f"{cell} forward h{hid} b{batch} g{groups} x{xin} {tag} one cluster pushed folded",
                   "persistent_fwd", folded, "compute_90", cell)
    # The forward's multicast exchange (MCAST, rules.rs's shape_multicast): hidden 512 at batch
    # 32 in clusters of 8, 1024 in clusters of 2, an odd batch and hidden (66 at 3, which fills
    # no tile and no whole K group) in clusters of 4, and batches of several chunks (128; 77,
    # whose last chunk ends early) in clusters of 2.
    for cell in ("lstm", "gru"):
        for hid, batch, units, mcast in ((512, 32, 8, 8), (1024, 32, 8, 2), (66, 3, 4, 4),
                                         (512, 128, 4, 2), (200, 77, 4, 2)):
            mc = [f"-DHID={hid}", f"-DBATCH={batch}", "-DNWARPS=8", "-DELEM_BF16=1",
                  f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", f"-DMCAST={mcast}"]
            yield (f"{cell} forward h{hid} b{batch} bf16 multicast {mcast}", "persistent_fwd", mc,
                   "compute_90", cell)
    # The multicast's ring of two chunk slots (MRING, plan.rs's Plan::ring): hidden 1024 at
    # batch 128 (four chunks) and 100 (the last ending early), bf16 and f16.
    for cell in ("lstm", "gru"):
        for batch, elem in ((128, "-DELEM_BF16=1"), (100, "-DELEM_BF16=0")):
            ring = ["-DHID=1024", f"-DBATCH={batch}", "-DNWARPS=8", elem, "-DUNITS=8", "-DCL=1",
                    "-DNBUF=2", "-DCH=64", "-DMCAST=2", "-DMRING=1"]
            yield (f"{cell} forward h1024 b{batch} {elem[2:]} multicast 2 ring", "persistent_fwd",
                   ring, "compute_90", cell)
    # An inference forward's input projection in half elements (XG_HALF, plan.rs's
    # Plan::half_projection): hidden 1024 at batch 32 in 2 groups of 16 (16 units a block, the
    # multicast in clusters of 4), bf16 and f16, and a batch of several chunks (77) at 200.
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, mcast, elem in ((1024, 32, 2, 16, 4, "-DELEM_BF16=1"),
                                                       (1024, 32, 2, 16, 4, "-DELEM_BF16=0"),
                                                       (200, 77, 1, 4, 2, "-DELEM_BF16=1")):
            half = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                    f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64", f"-DMCAST={mcast}",
                    "-DXG_HALF=1"]
            yield (f"{cell} forward h{hid} b{batch} groups {groups} {elem[2:]} half projection",
                   "persistent_fwd", half, "compute_90", cell)
    # Batch groups (GROUPS, rules.rs's shape_groups): batch 128 at hidden 512 in 4 groups of 32
    # (16 units a block, the forward multicast in clusters of 8), and TF32 in 2 groups of 64 (two
    # chunks each) at hidden 200.
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, mcast, elem in ((512, 32, 4, 16, 8, "-DELEM_BF16=1"),
                                                       (200, 64, 2, 4, 1, "-DELEM_F32=1")):
            grouped = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                       f"-DUNITS={units}", "-DCL=1", "-DNBUF=2", "-DCH=64"]
            tag = f"h{hid} b{batch} groups {groups} {elem[2:]}"
            arch = "compute_90" if mcast > 1 else "compute_80"
            yield (f"{cell} forward {tag} multicast {mcast}", "persistent_fwd",
                   grouped + [f"-DMCAST={mcast}"], arch, cell)
            yield (f"{cell} backward {tag}", "persistent_bwd", grouped, "compute_80", cell)
    # Both passes on f32 operands with TF32 products (ELEM_F32, no ELEM_BF16): one layer at an
    # odd batch and hidden (66 at 3), at hidden 512 and batch 32 (clusters of 2 that split K, and
    # the multicast), and a batch of several chunks (77) at 200.
    for cell in ("lstm", "gru"):
        for hid, batch, units, cl, mcast in ((66, 3, 4, 1, 1), (512, 32, 8, 1, 1), (512, 32, 8, 2, 1),
                                             (512, 32, 8, 1, 8), (200, 77, 4, 1, 1)):
            f32 = [f"-DHID={hid}", f"-DBATCH={batch}", "-DNWARPS=8", "-DELEM_F32=1",
                   f"-DUNITS={units}", f"-DCL={cl}", "-DNBUF=2", "-DCH=64", f"-DMCAST={mcast}"]
            arch = "compute_80" if cl == 1 and mcast == 1 else "compute_90"
            yield (f"{cell} forward h{hid} b{batch} tf32 cl{cl} multicast {mcast}", "persistent_fwd",
                   f32, arch, cell)
            if mcast == 1:
                bwd = [d for d in f32 if not d.startswith("-DMCAST=")]
                yield (f"{cell} backward h{hid} b{batch} tf32 cl{cl}", "persistent_bwd", bwd, arch, cell)
    # The forward of f32 operands in TF32 inference as scaled f16 ones (F16_SCALED, f16_scaled.cu,
    # plan.rs's Plan::scaled): the shapes above, PTB large's (1500 at batch 20), and hidden 128
    # at batch 16 in 4 groups, each one cluster, h pushed.
    for cell in ("lstm", "gru"):
        for hid, batch, groups, units, cl, mcast, one in ((66, 3, 1, 4, 1, 1, 0), (512, 32, 1, 8, 2, 1, 0),
                                                          (512, 32, 1, 8, 1, 8, 0), (200, 77, 1, 4, 1, 1, 0),
                                                          (1500, 20, 1, 12, 1, 1, 0), (128, 16, 4, 16, 1, 1, 1)):
            scaled = [f"-DHID={hid}", f"-DBATCH={batch}", f"-DGROUPS={groups}", "-DNWARPS=8", "-DELEM_BF16=0",
                      f"-DUNITS={units}", f"-DCL={cl}", "-DNBUF=2", "-DCH=64", f"-DMCAST={mcast}",
                      "-DF16_SCALED=1"] + (["-DONE_CLUSTER=1", "-DPUSH=1"] if one else [])
            arch = "compute_80" if cl == 1 and mcast == 1 and not one else "compute_90"
            yield (f"{cell} forward h{hid} b{batch} groups {groups} f32 as scaled f16 cl{cl} multicast {mcast}"
                   f"{' one cluster pushed' if one else ''}", "persistent_fwd", scaled, arch, cell)
    # The forward on wgmma (recurrence_wgmma_fwd.cu, sm_90a): inference (its projection in half
    # elements) at hidden 1024 in 4 groups of 32 (the grid's batch 128), bf16 and f16, and hidden
    # 256 in 2 groups (its fewest chunks); training (an f32 projection, the saves) at 1024 and 512;
    # at 512 two subgroups of 32 a block (SUB 2: 2 groups of 64), inference and training; blocks
    # of 16 units (WG_UNITS) at 1024 in one group (batch 32) and at 512 in four, both kinds; an f32
    # layer's inference as scaled f16 operands (F16_SCALED, f16_scaled.cu) on both kinds of
    # blocks.
    for cell in ("lstm", "gru"):
        for hid, groups, elem, half, sub, units, scaled in ((1024, 4, "-DELEM_BF16=1", 1, 1, 32, 0),
                                                            (1024, 4, "-DELEM_BF16=0", 1, 1, 32, 0),
                                                            (256, 2, "-DELEM_BF16=1", 1, 1, 32, 0),
                                                            (1024, 4, "-DELEM_BF16=1", 0, 1, 32, 0),
                                                            (512, 4, "-DELEM_BF16=0", 0, 1, 32, 0),
                                                            (512, 2, "-DELEM_BF16=1", 1, 2, 32, 0),
                                                            (512, 2, "-DELEM_BF16=0", 0, 2, 32, 0),
                                                            (1024, 1, "-DELEM_BF16=1", 1, 1, 16, 0),
                                                            (1024, 1, "-DELEM_BF16=0", 0, 1, 16, 0),
                                                            (512, 4, "-DELEM_BF16=1", 1, 1, 16, 0),
                                                            (1024, 4, "-DELEM_BF16=0", 0, 1, 32, 1),
                                                            (1024, 1, "-DELEM_BF16=0", 0, 1, 16, 1)):
            wg = [f"-DHID={hid}", "-DBATCH=32", f"-DSUB={sub}", f"-DGROUPS={groups}", "-DNWARPS=8", elem,
                  f"-DXG_HALF={half}", f"-DF16_SCALED={scaled}"] + ([f"-DWG_UNITS={units}"] if units != 32 else [])
            kind = "forward" if half else "training forward"
            kind = "f32 forward as scaled f16" if scaled else kind
            tag = f" units {units}" if units != 32 else ""
            yield (f"{cell} wgmma {kind} h{hid} groups {groups} sub {sub}{tag} {elem[2:]}", "wgmma_fwd", wg,
                   "compute_90a", cell)
    # The forward's wavefront on wgmma (recurrence_wgmma_wave.cu): 3 x 512 at batch 128 in two
    # groups of two subgroups, inference and training; 2 layers in f16.
    for cell in ("lstm", "gru"):
        for layers, elem, half in ((3, "-DELEM_BF16=1", 1), (3, "-DELEM_BF16=1", 0), (2, "-DELEM_BF16=0", 0)):
            # (plan.rs's Plan::wgmma_wave_smem, the projection blocks': 128 rows of 512, 2 chunks of
            # 64 x 128 for each warpgroup and their mbarriers; which the kernel checks.)
            wg = ["-DHID=512", "-DBATCH=32", "-DSUB=2", "-DGROUPS=2", "-DNWARPS=8", elem, f"-DXG_HALF={half}",
                  f"-DWAVE_LAYERS={layers}", f"-DSMEM_BYTES={128 * 512 * 2 + 2 * 128 * 128 * 2 + 32}"]
            kind = "forward" if half else "training forward"
            yield (f"{cell} wgmma wavefront {kind} {layers} x 512 {elem[2:]}", "wgmma_wave_fwd", wg,
                   "compute_90a", cell)
    # The backward on wgmma (recurrence_wgmma_bwd.cu, sm_90a): one group of 128 at hidden 1024 (its
    # one size), W_hh itself or its transpose (WT_ROWS), bf16 and f16, the partial sums in f32 or
    # bf16.
    for cell in ("lstm", "gru"):
        for hid, elem, wt, p16 in ((1024, "-DELEM_BF16=1", 0, 0), (1024, "-DELEM_BF16=0", 1, 0),
                                   (1024, "-DELEM_BF16=1", 0, 1)):
            # (kernel.rs's wgmma_bwd_smem, which the kernel checks.)
            smem = {"lstm": 219200, "gru": 186432}[cell]
            wg = [f"-DHID={hid}", "-DBATCH=128", "-DGROUPS=1", "-DNWARPS=8", elem, f"-DWT_ROWS={wt}",
                  f"-DPARTIAL_BF16={p16}", f"-DSMEM_BYTES={smem}"]
            yield (f"{cell} wgmma backward h{hid} {elem[2:]} wt{wt} bf16 partials {p16}", "wgmma_bwd", wg,
                   "compute_90a", cell)
    # The forward's wavefront over stacked layers: (hidden, batch, layers, units of the lowest
    # layer's blocks, of the others'), PTB medium and small as the library plans them.
    # Then wavefronts of several chunks of the batch (77: the last ends early; 128 at 3 x 512).
    for h, b, layers, u0, u1 in ((650, 20, 2, 12, 12), (200, 20, 2, 8, 4), (66, 3, 3, 4, 4),
                                 (200, 77, 2, 4, 4), (512, 128, 3, 12, 12)):
        for bf16 in (1, 0):
            dt = "bf16" if bf16 else "f16"
            wave = [f"-DHID={h}", f"-DBATCH={b}", "-DNWARPS=8", f"-DELEM_BF16={bf16}", "-DCL=1",
                    f"-DWAVE_LAYERS={layers}", f"-DUNITS0={u0}", f"-DUNITS1={u1}"]
            yield (f"forward wavefront h{h} b{b} {dt} {layers} layers", "wave_fwd", wave,
                   "compute_80", "lstm")
            yield (f"backward wavefront h{h} b{b} {dt} {layers} layers", "wave_bwd",
                   wave + ["-DNBUF=2", "-DCH=64"], "compute_80", "lstm")
            # A GRU's wavefront: the split gate's second side in a row group (forward) and a
            # column group (backward) of its own.
            yield (f"gru forward wavefront h{h} b{b} {dt} {layers} layers", "wave_fwd", wave,
                   "compute_80", "gru")
            yield (f"gru backward wavefront h{h} b{b} {dt} {layers} layers", "wave_bwd",
                   wave + ["-DNBUF=2", "-DCH=64"], "compute_80", "gru")


def cubin(ptx):
    """ptxas's sm_90a machine code of `ptx`, as bytes (None on an error)."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run(["ptxas", "-arch=sm_90a", src, "-o", out], capture_output=True)
        return open(out, "rb").read() if r.returncode == 0 else None


# Floating-point instructions (arithmetic, conversions, tensor-core products, the approximate
# tanh): what decides the numbers a kernel computes.
ARITHMETIC = re.compile(r"^(add|sub|mul|fma|mad|div|rcp|sqrt|neg|abs|min|max|tanh|ex2|cvt|mma)"
                        r"[.\w]*\.(f32|f16|bf16|f64|f16x2|bf16x2)\b")


def arithmetic(ptx):
    """`ptx`'s floating-point instructions in order, registers and labels left out."""
    ops = []
    for line in ptx.splitlines():
        line = line.strip()
        if ARITHMETIC.match(line) or line.startswith("mma."):
            ops.append(re.sub(r"%\w+", "%", line))
    return ops


def same_as(before_dir, file, ptx):
    """(ok, how) of `ptx` against the PTX of the same variant in `before_dir`."""
    path = os.path.join(before_dir, file)
    if not os.path.exists(path):
        return False, f"no {file} in {before_dir}"
    before = open(path).read()
    if before == ptx:
        return True, "same PTX"
    if cubin(before) == cubin(ptx) is not None:
        return True, "same machine code (the PTX differs)"
    if arithmetic(before) == arithmetic(ptx):
        return True, "same floating-point instructions in the same order (the control flow differs)"
    return False, "the floating-point instructions differ"


def preprocessor_problems(defines):
    """Each `#if` / `#elif` of the op crate's CUDA sources that names what is no macro (a
    `#define` of the sources, a -D name of `defines`, or the compiler's `__...__` names), as
    'file:line: NAME': the preprocessor reads such a name (a C++ constexpr, say) as 0."""
    files = sorted(glob.glob(os.path.join(SRC, "**", "*.cu*"), recursive=True))
    texts = {f: open(f).read() for f in files}
    macros = set(defines)
    for text in texts.values():
        macros |= set(re.findall(r"^\s*#\s*define\s+(\w+)", text, re.M))
    problems = []
    for f, text in texts.items():
        for n, line in enumerate(text.splitlines(), 1):
            m = re.match(r"\s*#\s*(?:el)?if\s+(.*)", line)
            if not m:
                continue
            expr = re.sub(r"//.*|/\*.*?\*/", "", m.group(1))
            expr = re.sub(r"defined\s*\(?\s*\w+\s*\)?", "", expr)
            for name in re.findall(r"\b[A-Za-z_]\w*\b", expr):
                if name not in macros and not (name.startswith("__") and name.endswith("__")):
                    problems.append(f"{os.path.relpath(f, SRC)}:{n}: {name}")
    return problems


def main():
    arg = lambda k: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else None
    ptx_dir, before_dir = arg("--ptx-dir"), arg("--same-as")
    if ptx_dir:
        os.makedirs(ptx_dir, exist_ok=True)
    nvrtc = load_nvrtc(nvrtc_dir())
    read = lambda f: open(os.path.join(SRC, f)).read()
    head = lambda cell: "\n".join(read(f.format(cell=cell)) for f in HEAD)
    # (The forward's module: the layer-by-layer recurrence and the one with its gates in
    # registers, which REG_GATES takes instead, as kernel.rs's Pass::sources joins them.)
    fwd = read("persistent/recurrence_fwd.cu") + "\n" + read("persistent/recurrence_reg_fwd.cu")
    bwd = read("persistent/recurrence_bwd.cu")
    scaled_rows = read("persistent/f16_scaled.cu")
    bodies = {"persistent_fwd": fwd + "\n" + scaled_rows, "persistent_bwd": bwd, "wave_fwd": fwd + "\n" + scaled_rows,
              "wave_bwd": bwd,
              "wgmma_fwd": read("persistent/wgmma.cuh") + "\n" + read("persistent/recurrence_wgmma_fwd.cu")
              + "\n" + read("persistent/f16_scaled.cu"),
              "wgmma_bwd": read("persistent/wgmma.cuh") + "\n" + read("persistent/recurrence_wgmma_bwd.cu"),
              "wgmma_wave_fwd": read("persistent/wgmma.cuh") + "\n" + read("persistent/recurrence_wgmma_fwd.cu")
              + "\n" + read("persistent/recurrence_wgmma_wave.cu")}
    def check(variant):
        """(ok, name, report) of one variant."""
        name, kernel, defines, arch, cell = variant
        ptx, log = ptx_of(nvrtc, f"{head(cell)}\n{bodies[kernel]}", [f"--gpu-architecture={arch}"] + defines)
        file = re.sub(r"[^A-Za-z0-9]+", "-", name) + ".ptx"
        if ptx_dir and ptx is not None:
            with open(os.path.join(ptx_dir, file), "w") as f:
                f.write(ptx)
        ok, report = (False, log) if ptx is None else resources(ptx, kernel)
        if before_dir and ptx is not None:
            if os.path.exists(os.path.join(before_dir, file)):
                same, how = same_as(before_dir, file, ptx)
                ok, report = ok and same, f"{report}; {how}"
            else:
                report = f"{report}; new (not in {before_dir})"
        return ok, name, report

    # One variant per core at once (NVRTC's calls and ptxas leave the interpreter's lock), the
    # reports in the variants' order.
    failed = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for ok, name, report in pool.map(check, variants()):
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {report}", flush=True)
    preludes = "\n".join(read(f) for f in HEAD[:2])
    ptx, log = ptx_of(nvrtc, f"{preludes}\n{PRELUDE_USER}", [])
    ok, report = (False, log) if ptx is None else resources(ptx, "scale_bf16")
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} the preludes alone, NVRTC's defaults: {report}", flush=True)
    # Every name an #if reads is a macro (the variants' -D names or the sources' #defines).
    names = {d[2:].split("=")[0] for v in variants() for d in v[2] if d.startswith("-D")}
    problems = preprocessor_problems(names)
    failed += bool(problems)
    print(f"{'FAIL' if problems else 'ok  '} the #if conditions name macros only"
          f"{': ' + ', '.join(problems) if problems else ''}", flush=True)
    for name, rel, parts, problem in ptb_lm_modules():
        if parts is not None:
            # Joined as candle_cudnn_rnn::kernels::Module joins them; NVRTC's default options.
            ptx, problem = ptx_of(nvrtc, "\n".join(parts), [], rel)
        if parts is not None and ptx is not None:
            problem, kernels = ptxas(ptx)
            if not problem and not kernels:
                problem = "no kernel in the module"
        if problem:
            failed += 1
            print(f"FAIL ptb-lm {rel} ({name}): {problem}", flush=True)
            continue
        regs = max((int(r) for r, _ in kernels.values() if r != "?"), default="?")
        spills = sum(int(s) for _, s in kernels.values() if s != "?")
        print(f"ok   ptb-lm {rel} ({name}): {len(kernels)} kernels, at most {regs} registers, "
              f"{spills} bytes spilled in all", flush=True)
    print(f"{failed} of the variants failed" if failed else "every variant compiled")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
