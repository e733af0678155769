//! A stack's forward as one wavefront launch on the wgmma forward (`recurrence_wgmma_wave.cu`):
//! every layer's recurrence at once on the wgmma forward's blocks, and the upper layers' input
//! projections made step by step by blocks of their own (128 gate rows of W_ih each) instead of
//! a GEMM before each layer's launch. A call then takes about seq + 2 (L - 1) steps of the
//! recurrence instead of seq * L. It runs where the plan's forward is on wgmma and all of it fits
//! on the GPU at once ([`Plan::wgmma_wave_fits`]): at batch 128 and hidden 512 three layers in
//! two groups of 64 samples ([`Plan::wgmma_subgroups`] 2: 32 blocks a layer) and 2 x 16
//! projection blocks take 128 of an H100's 132. The planner asks for that where the wavefront
//! leads ([`super::rules::shape_wgmma_wave`]). The backward stays layer by layer (the forward
//! writes what the layer-by-layer forward writes).

use super::kernel::{Limits, Operands, Pass};
use super::launch::Launch;
use super::plan::Plan;
use super::tuning::{Tuning, WaveTuning};
use super::wave::{WaveArgs, WAVE_MAX};
use candle_core::cuda_backend::cudarc::driver::{
    sys, CudaFunction, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::CudaDevice;
use candle_core::Result;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Bytes between two of the wavefront's counters: a line each (`recurrence_wgmma_wave.cu`'s
/// SLOT_WORDS).
const COUNTER_BYTES: usize = 128;

/// `recurrence_wgmma_wave.cu`'s `WgWaveArgs`: the tensor maps of the inputs of the layers above
/// the lowest ([`input_map`]), then [`WaveArgs`]'s words.
#[repr(C, align(128))]
#[derive(Clone, Copy)]
struct WgmmaWaveArgs {
    inputs: [[u64; 16]; WAVE_MAX - 1],
    layers: [[u64; 16]; WAVE_MAX],
    exchange: u64,
}

// SAFETY: plain 64-bit words laid out as the kernel's struct (its tensor maps 128-byte aligned).
unsafe impl DeviceRepr for WgmmaWaveArgs {}

/// Blocks per cluster of the wavefront's launch where the tuning leaves it to the rule and they
/// fit ([`WgmmaWave::cluster`]): the blocks do not use their clusters, but launched in pairs the
/// forwards at [*, 128, 3 x 512] took 0.96-1.0x of the time without
/// (`results/2026-12-01-h200-wgmma-wave/`, "Multicast over clusters, and clusters alone").
const WAVE_CLUSTER: usize = 2;

/// The tensor map of a layer's input at `input` ([T, B, H] of `elem`, rows of whole 16-byte
/// pieces), as the projection blocks copy it: dimensions from the fastest 8 columns, the batch,
/// H / 8 column groups and the steps, so that a box of {8, 64, 128 / 8, 1} (a chunk of 128
/// columns of 64 samples) lands in wgmma's no-swizzle layout (`recurrence_wgmma_wave.cu`'s
/// P_LBO, P_SBO).
fn input_map(
    input: u64,
    (seq, batch, hidden): (usize, usize, usize),
    elem: Operands,
) -> Result<[u64; 16]> {
    let err = |e: String| candle_core::Error::Msg(format!("rnn: wgmma wavefront input map: {e}"));
    let data_type = match elem {
        Operands::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        Operands::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        Operands::Tf32 => return Err(err("takes half elements".into())),
    };
    let dims: [u64; 4] = [8, batch as u64, (hidden / 8) as u64, seq as u64];
    // Bytes between neighbours of dimensions 1-3 (the first's elements are adjacent).
    let strides: [u64; 3] = [(hidden * 2) as u64, 16, (batch * hidden * 2) as u64];
    let boxes: [u32; 4] = [8, 64, 16, 1];
    let element_strides = [1u32; 4];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    // SAFETY: `map` is writable and aligned as the driver asks; the arrays hold `rank` entries
    // (strides one fewer); `input` is a live device address, which the driver only records.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            data_type,
            4,
            input as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        .result()
    }
    .map_err(|e| err(e.to_string()))?;
    // SAFETY: initialised by the call above.
    Ok(unsafe { map.assume_init() }.opaque)
}

/// The clusters chosen for a kernel (its driver handle) and the tuning's ask.
type ClustersChosen = HashMap<(usize, Option<usize>), usize>;

fn lock_err<T>(_: std::sync::PoisonError<T>) -> candle_core::Error {
    candle_core::Error::Msg("rnn: wgmma wavefront: a thread panicked choosing clusters".into())
}

/// A stack of `layers` layers as one wgmma wavefront.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct WgmmaWave {
    pub layers: usize,
}

impl WgmmaWave {
    /// The wavefront of `layers` layers of `plan` on `dev`, where the plan's forward runs on
    /// wgmma, `asked` does not turn wavefronts off (or ask for the other one's units) and all of
    /// it fits at once; `None` otherwise.
    pub fn new(dev: &CudaDevice, plan: &Plan, layers: usize, asked: WaveTuning) -> Option<Self> {
        if asked != WaveTuning::Fitted
            || !plan.pass_wgmma(Pass::Forward)
            || !(2..=WAVE_MAX).contains(&layers)
        {
            return None;
        }
        let limits = Limits::of(dev).ok()?;
        plan.wgmma_wave_fits(layers, limits)
            .then_some(WgmmaWave { layers })
    }

    /// The counters: each layer's groups' barriers, then the projections' of the layers above
    /// the lowest.
    fn counters(&self, plan: &Plan) -> usize {
        (2 * self.layers - 1) * plan.pass_groups(Pass::Forward)
    }

    /// Columns of the exchange buffer's rows (of 2 x batch half elements): each layer's h (one
    /// layer's region after the other's), then the counters' lines.
    pub fn exchange_cols(&self, plan: &Plan) -> usize {
        let counter_cols = (self.counters(plan) * COUNTER_BYTES).div_ceil(4 * plan.batch);
        self.layers * plan.kpad() + counter_cols.next_multiple_of(16)
    }

    /// The bytes from the exchange buffer's start to the counters.
    pub fn counters_at(&self, plan: &Plan) -> u64 {
        (self.layers * plan.kpad() * 4 * plan.batch) as u64
    }

    /// The wavefront's kernel on `dev`, compiled on first use.
    pub fn kernel(&self, dev: &CudaDevice, plan: &Plan) -> Result<CudaFunction> {
        plan.wgmma_wave_function(dev, self.layers)
    }

    /// Blocks per cluster of the launch of `f` (from [`WgmmaWave::kernel`]) with `cfg`: the
    /// tuning's (`asked`) or [`WAVE_CLUSTER`] where each cluster holds one layer's recurrence or
    /// projection blocks only and all clusters fit on the GPU at once; else 1 (no clusters).
    /// Kept per kernel.
    pub fn cluster(
        &self,
        (stream, f, plan): (&CudaStream, &CudaFunction, &Plan),
        cfg: LaunchConfig,
        asked: Option<usize>,
    ) -> Result<usize> {
        static CHOSEN: OnceLock<Mutex<ClustersChosen>> = OnceLock::new();
        let key = (f.cu_function() as usize, asked);
        let chosen = CHOSEN.get_or_init(Default::default);
        if let Some(&cluster) = chosen.lock().map_err(lock_err)?.get(&key) {
            return Ok(cluster);
        }
        let (recurrence, projection) = plan.wgmma_wave_layer_blocks();
        let c = asked.unwrap_or(WAVE_CLUSTER);
        let whole = (self.layers * recurrence) % c == 0 && projection % c == 0;
        let launch = Launch {
            stream,
            f,
            cfg,
            cluster: c,
            side: None,
        };
        let cluster = match c > 1 && whole {
            true if launch.resident_clusters()? >= cfg.grid_dim.0 as usize / c => c,
            _ => 1,
        };
        if Tuning::from_env().show_plans {
            eprintln!(
                "rnn: wgmma wavefront of {} layers in clusters of {cluster}",
                self.layers
            );
        }
        chosen.lock().map_err(lock_err)?.insert(key, cluster);
        Ok(cluster)
    }

    /// Launches `f` (from [`WgmmaWave::kernel`]) on every block at once, cooperatively, with
    /// `args` (its exchange buffer, zeroed, [`WgmmaWave::exchange_cols`] wide), the inputs of
    /// the layers above the lowest (`[T, B, H]` each, `seq` steps) and `seq`.
    pub fn launch(
        &self,
        (stream, f, plan): (&CudaStream, &CudaFunction, &Plan),
        (args, inputs): (&WaveArgs, &[u64]),
        seq: usize,
    ) -> Result<()> {
        let counter = args.exchange + self.counters_at(plan);
        let cfg = LaunchConfig {
            grid_dim: (plan.wgmma_wave_blocks(self.layers) as u32, 1, 1),
            block_dim: (plan.threads() as u32, 1, 1),
            shared_mem_bytes: plan.wgmma_wave_smem() as u32,
        };
        let asked = Tuning::from_env().wave_cluster;
        let cluster = self.cluster((stream, f, plan), cfg, asked)?;
        let mut maps = [[0u64; 16]; WAVE_MAX - 1];
        for (map, &input) in maps.iter_mut().zip(inputs) {
            *map = input_map(input, (seq, plan.batch, plan.hidden), plan.elem)?;
        }
        let mut args = WgmmaWaveArgs {
            inputs: maps,
            layers: args.layers,
            exchange: args.exchange,
        };
        let mut seq = seq as i32;
        let err = |e: String| {
            candle_core::Error::Msg(format!("rnn: persistent wgmma wavefront launch: {e}"))
        };
        if cluster > 1 {
            let mut counter = counter;
            let mut params = [
                &mut args as *mut WgmmaWaveArgs as *mut std::ffi::c_void,
                &mut counter as *mut u64 as *mut std::ffi::c_void,
                &mut seq as *mut i32 as *mut std::ffi::c_void,
            ];
            let launch = Launch {
                stream,
                f,
                cfg,
                cluster,
                side: None,
            };
            // SAFETY: `params` points at the kernel's arguments in its order (`args` its
            // struct), alive until the launch returns.
            return unsafe { launch.cooperative_params(&mut params) }
                .map_err(|e| err(e.to_string()));
        }
        let mut launch = stream.launch_builder(f);
        launch.arg(&args).arg(&counter).arg(&seq);
        // SAFETY: the arguments are the kernel's, in its order (`args` is its struct); the grid
        // has at most one block per multiprocessor, each of which fits (`WgmmaWave::new`).
        unsafe { launch.launch_cooperative(cfg) }.map_err(|e| err(e.to_string()))?;
        Ok(())
    }
}
