#!/usr/bin/env python3
"""Loads every PTX file of a folder (the op's kernel cache: candle-cudnn-rnn's
`kernels/ptx_cache.rs`, the folder CANDLE_RNN_KERNEL_CACHE names) on GPU 0, in WORKERS processes
at once (16 unless given), so that the driver compiles each to the GPU's machine code now and
keeps it in its own cache (~/.nv/ComputeCache; CUDA_CACHE_MAXSIZE should leave room). The op's
tests and benchmarks then find every kernel they ask for compiled: on a fresh machine they
otherwise compile each at its first use, one after another (over 420 s of the GPU suite's 528 s,
results/2026-11-30-h200-wgmma-train-forward/ §5). A file the driver does not load is named and
passed over. Prints the files not loaded, then a line: files loaded, failed, seconds.
  scripts/warm-kernels.py DIR [WORKERS]"""
import ctypes
import glob
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor


# The last line of a cache file, with the SHA-256 of the PTX before it (ptx_cache.rs's CHECK).
CHECK = b"// candle-cudnn-rnn ptx sha256 "


def ptx_of(file):
    """A cache file's PTX as the op hands it to the driver: without its check line (the driver
    keys its cache by the text)."""
    body, _, last = file.rstrip(b"\n").rpartition(b"\n")
    return body + b"\n" if last.startswith(CHECK) else file


def load_all(files):
    """Loads and unloads each of `files` in this process's context on GPU 0: (loaded, [(file,
    error)])."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return 0, [(f, f"no driver: {e}") for f in files]
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    for call in (lambda: cuda.cuInit(0), lambda: cuda.cuDeviceGet(ctypes.byref(dev), 0),
                 lambda: cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                 lambda: cuda.cuCtxSetCurrent(ctx)):
        rc = call()
        if rc:
            return 0, [(f, f"CUDA context: error {rc}") for f in files]
    loaded, failed = 0, []
    for f in files:
        with open(f, "rb") as fh:
            image = ptx_of(fh.read()) + b"\0"
        module = ctypes.c_void_p()
        rc = cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image))
        if rc:
            failed.append((f, f"cuModuleLoadData: error {rc}"))
            continue
        loaded += 1
        cuda.cuModuleUnload(module)
    cuda.cuDevicePrimaryCtxRelease(dev)
    return loaded, failed


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    # Each worker holds a CUDA context (some hundreds of MB of the GPU's memory).
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else min(os.cpu_count() or 1, 16)
    files = sorted(glob.glob(os.path.join(folder, "*.ptx")), key=os.path.getsize, reverse=True)
    start = time.time()
    loaded, failed, shares = 0, [], []
    if files:
        # The largest first, dealt round the workers, so that they finish together.
        shares = [files[i::workers] for i in range(min(workers, len(files)))]
        with ProcessPoolExecutor(len(shares)) as pool:
            for n, bad in pool.map(load_all, shares):
                loaded += n
                failed += bad
    for f, why in failed[:8]:
        print(f"not loaded: {os.path.basename(f)}: {why}")
    print(f"warm-kernels: {loaded} of {len(files)} loaded, {len(failed)} failed, "
          f"{time.time() - start:.1f} s in {len(shares)} processes")


if __name__ == "__main__":
    main()
