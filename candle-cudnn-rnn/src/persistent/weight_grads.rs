//! A small layer's two weight gradients, dW_ih and dW_hh, in one launch of `weight_grads.cu`
//! on a side stream, where cuBLAS would take a split-K GEMM and a reduction kernel for each
//! (`results/2026-12-02-h200-gap-profile/`). Half operands only (TF32 keeps cuBLAS), rows
//! whole and 16-byte aligned, and only where [`takes`] says the layer's products are small.

use super::kernel::{allow_smem, Operands};
use super::launch::PORTABLE_CLUSTER_BLOCKS;
use crate::kernels::{Module, HALF};
use candle_core::cuda_backend::cudarc::driver::sys;
use candle_core::cuda_backend::cudarc::driver::CudaFunction;
use candle_core::cuda_backend::cudarc::nvrtc::CompileOptions;
use candle_core::cuda_backend::CudaDevice;
use candle_core::Result;
use std::sync::OnceLock;

const WEIGHT_GRADS: &str = include_str!("weight_grads.cu");

/// A cluster's tile of a gradient (`weight_grads.cu`'s WG_TILE), its blocks (WG_SPLIT, the
/// rows split between them) and a block's threads.
const TILE: usize = 128;
const SPLIT: usize = PORTABLE_CLUSTER_BLOCKS;
const THREADS: u32 = 256;

/// A block's shared memory (`weight_grads.cu`'s WG_SMEM): 6 stages of 32 rows of both operands'
/// tile columns (136 elements a row), which the partial tile in f32 (132 a row) takes after.
const SMEM: usize = 6 * 2 * 32 * (TILE + 8) * 2;

/// What one launch takes: the device addresses of the gate gradients `dg` (rows of `gh`) and
/// `dgh` (the recurrent side's: `dg` itself for a cell without a split gate), the input `x`
/// (rows of `in_size`), the output `y` and the initial state `h0` (rows of `hidden`; 0 for
/// none: zeros), the gradients `dw_ih` (`gh` x `in_size`) and `dw_hh` (`gh` x `hidden`); `rows`
/// (seq x batch) rows of each, `batch` of them a step; `add`: added to the gradients instead of
/// written over them.
pub(super) struct WeightGrads {
    pub dg: u64,
    pub dgh: u64,
    pub x: u64,
    pub y: u64,
    pub h0: u64,
    pub dw_ih: u64,
    pub dw_hh: u64,
    pub rows: usize,
    pub batch: usize,
    pub gh: usize,
    pub in_size: usize,
    pub hidden: usize,
    pub add: bool,
}

/// Whether a layer's weight gradients with operands `elem` and these addresses and sizes go to
/// `weight_grads.cu`: `aside` (the products small enough for the side streams,
/// `side::shape_side_streams`), half operands, every row whole in 16-byte pieces, and `asked`
/// (the tuning's `fused_weight_grads`, `None`: yes).
pub(super) fn takes(elem: Operands, aside: bool, asked: Option<bool>, w: &WeightGrads) -> bool {
    let aligned = [w.dg, w.dgh, w.x, w.y, w.h0, w.dw_ih, w.dw_hh]
        .iter()
        .all(|p| p % 16 == 0);
    aside
        && asked.unwrap_or(true)
        && elem != Operands::Tf32
        && [w.gh, w.in_size, w.hidden].iter().all(|n| n % 8 == 0)
        && aligned
        && w.rows > 0
}

/// The module, compiled once for the process (one kernel for each half type, no defines).
fn module() -> &'static Module {
    static MODULE: OnceLock<Module> = OnceLock::new();
    MODULE.get_or_init(|| {
        let options = CompileOptions {
            arch: Some("compute_90"),
            ..Default::default()
        };
        Module::with_options("rnn_weight_grads", &[HALF, WEIGHT_GRADS], options)
    })
}

/// The kernel for `elem` on `dev`, with its shared memory and cluster size allowed.
fn kernel(dev: &CudaDevice, elem: Operands) -> Result<CudaFunction> {
    let name = match elem {
        Operands::Bf16 => "rnn_weight_grads_bf16",
        _ => "rnn_weight_grads_f16",
    };
    let f = module()
        .function(dev, name)
        .map_err(|e| candle_core::Error::Msg(format!("rnn: {name}: {e}")))?;
    allow_smem(&f, SMEM)?;
    Ok(f)
}

/// The clusters of one launch: each gradient's tiles.
fn tiles(w: &WeightGrads) -> usize {
    let m = w.gh.div_ceil(TILE);
    m * w.in_size.div_ceil(TILE) + m * w.hidden.div_ceil(TILE)
}

/// Launches `w`'s products on `stream` (a side stream of the device's context).
///
/// # Safety
/// Every address of `w` is that of a live buffer of the sizes it names, in `elem`, alive until
/// the device's stream has joined `stream`'s work; none of the gradients overlaps an operand.
pub(super) unsafe fn launch(
    dev: &CudaDevice,
    stream: sys::CUstream,
    elem: Operands,
    w: &WeightGrads,
) -> Result<()> {
    let f = kernel(dev, elem)?;
    let err = |e: sys::CUresult| candle_core::Error::Msg(format!("rnn: rnn_weight_grads: {e:?}"));
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
        x: SPLIT as u32,
        y: 1,
        z: 1,
    };
    let config = sys::CUlaunchConfig {
        gridDimX: (tiles(w) * SPLIT) as u32,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: THREADS,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: SMEM as u32,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    let mut ptrs = [w.dg, w.dgh, w.x, w.y, w.h0, w.dw_ih, w.dw_hh];
    let mut ints = [
        w.rows,
        w.batch,
        w.gh,
        w.in_size,
        w.hidden,
        usize::from(w.add),
    ]
    .map(|n| n as i32);
    let mut params: Vec<*mut std::ffi::c_void> = ptrs
        .iter_mut()
        .map(|p| p as *mut u64 as *mut std::ffi::c_void)
        .chain(
            ints.iter_mut()
                .map(|n| n as *mut i32 as *mut std::ffi::c_void),
        )
        .collect();
    // SAFETY: the parameters are the kernel's, in its order and types, alive through the call;
    // the buffers are the caller's.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            f.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .map_err(|e| err(e.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grads(gh: usize, in_size: usize, hidden: usize) -> WeightGrads {
        WeightGrads {
            dg: 1 << 20,
            dgh: 1 << 20,
            x: 2 << 20,
            y: 3 << 20,
            h0: 0,
            dw_ih: 4 << 20,
            dw_hh: 5 << 20,
            rows: 30 * 128,
            batch: 128,
            gh,
            in_size,
            hidden,
            add: false,
        }
    }

    #[test]
    fn small_half_layers_with_whole_aligned_rows() {
        let lstm = grads(512, 128, 128);
        assert!(takes(Operands::Bf16, true, None, &lstm));
        assert!(takes(Operands::F16, true, Some(true), &lstm));
        // Not past the side streams' sizes, not TF32, not where the tuning says no.
        assert!(!takes(Operands::Bf16, false, None, &lstm));
        assert!(!takes(Operands::Tf32, true, None, &lstm));
        assert!(!takes(Operands::Bf16, true, Some(false), &lstm));
        // Rows of whole 16-byte pieces only, from aligned addresses.
        assert!(!takes(
            Operands::Bf16,
            true,
            None,
            &grads(4 * 100, 100, 100)
        ));
        assert!(!takes(Operands::Bf16, true, None, &grads(4 * 120, 36, 120)));
        let shifted = WeightGrads {
            x: (2 << 20) + 8,
            ..grads(512, 128, 128)
        };
        assert!(!takes(Operands::Bf16, true, None, &shifted));
        // A GRU's 3 x 128 gate rows take three tiles of each gradient.
        assert_eq!(tiles(&grads(384, 128, 128)), 6);
        assert_eq!(tiles(&grads(512, 64, 128)), 8);
        assert!(SMEM >= TILE * (TILE + 4) * 4);
    }
}
