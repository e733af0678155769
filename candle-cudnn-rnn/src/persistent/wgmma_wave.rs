//! A stack's forward as one wavefront launch on the wgmma forward (`recurrence_wgmma_wave.cu`):
//! every layer's recurrence at once on the wgmma forward's blocks, and the upper layers' input
//! projections made step by step by blocks of their own (128 gate rows of W_ih each) instead of
//! a GEMM before each layer's launch. A call then takes about seq + 2 (L - 1) steps of the
//! recurrence instead of seq * L. It fits where all of it fits on the GPU at once, one block a
//! multiprocessor: at batch 128 and hidden 512 three layers in two groups of 64 samples
//! ([`super::kernel::Plan::wgmma_subgroups`] 2: 32 blocks a layer) and 2 x 16 projection blocks
//! take 128 of an H100's 132. The backward stays layer by layer (the forward writes what the
//! layer-by-layer forward writes).

use super::kernel::{Limits, Pass, Plan, WGMMA_UNITS};
use super::tuning::WaveTuning;
use super::wave::{WaveArgs, WAVE_MAX};
use candle_core::cuda_backend::cudarc::driver::{
    CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::CudaDevice;
use candle_core::Result;

/// The gate rows of W_ih a projection block multiplies (`recurrence_wgmma_wave.cu`'s PROJ_ROWS):
/// two of wgmma's M of 64.
const PROJECTION_ROWS: usize = 128;

/// The batch a wavefront takes: each of a projection block's two warpgroups multiplies half of
/// it, wgmma's N of 64 (`recurrence_wgmma_wave.cu`'s PN).
const WAVE_BATCH: usize = 128;

/// The chunks of 128 columns of the input each projection warpgroup's ring holds
/// (`recurrence_wgmma_wave.cu`'s PSLOTS).
const PROJECTION_SLOTS: usize = 3;

/// Bytes between two of the wavefront's counters: a line each (`recurrence_wgmma_wave.cu`'s
/// SLOT_WORDS).
const COUNTER_BYTES: usize = 128;

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
        let wave = WgmmaWave { layers };
        wave.fits(plan, (limits.sms, limits.smem)).then_some(wave)
    }

    /// Whether the wavefront fits a GPU of `sms` multiprocessors and `smem` bytes of shared
    /// memory a block: its blocks one a multiprocessor, its counters in the barrier's line,
    /// whole projection blocks.
    fn fits(&self, plan: &Plan, (sms, smem): (usize, usize)) -> bool {
        let gh = plan.cell.gates() * plan.hidden;
        let group = plan.batch / plan.pass_groups(Pass::Forward);
        plan.batch == WAVE_BATCH
            && (WAVE_BATCH / 2) % group == 0
            && self.blocks(plan) <= sms
            && self.smem_bytes(plan) <= smem
            && gh % PROJECTION_ROWS == 0
    }

    /// Projection blocks of each layer above the lowest.
    fn projection_blocks(plan: &Plan) -> usize {
        plan.cell.gates() * plan.hidden / PROJECTION_ROWS
    }

    /// Every block of the launch: each layer's recurrence, then the projections.
    pub fn blocks(&self, plan: &Plan) -> usize {
        let recurrence = plan.pass_groups(Pass::Forward) * plan.hidden / WGMMA_UNITS;
        self.layers * recurrence + (self.layers - 1) * Self::projection_blocks(plan)
    }

    /// Shared memory a block: the larger of the recurrence's and a projection block's (its
    /// rows of W_ih, each warpgroup's ring of chunks of 128 columns of its half of the batch).
    pub fn smem_bytes(&self, plan: &Plan) -> usize {
        let projection =
            PROJECTION_ROWS * plan.hidden * 2 + PROJECTION_SLOTS * plan.batch * 128 * 2;
        plan.smem_bytes(Pass::Forward).max(projection)
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
        plan.wgmma_wave_function(dev, self.layers, self.smem_bytes(plan))
    }

    /// Launches `f` (from [`WgmmaWave::kernel`]) on every block at once, cooperatively, with
    /// `args` (its exchange buffer, zeroed, [`WgmmaWave::exchange_cols`] wide) and `seq`.
    pub fn launch(
        &self,
        (stream, f, plan): (&CudaStream, &CudaFunction, &Plan),
        args: &WaveArgs,
        seq: usize,
    ) -> Result<()> {
        let counter = args.exchange + self.counters_at(plan);
        let cfg = LaunchConfig {
            grid_dim: (self.blocks(plan) as u32, 1, 1),
            block_dim: (plan.threads() as u32, 1, 1),
            shared_mem_bytes: self.smem_bytes(plan) as u32,
        };
        let seq = seq as i32;
        let mut launch = stream.launch_builder(f);
        launch.arg(args).arg(&counter).arg(&seq);
        // SAFETY: the arguments are the kernel's, in its order (`args` is its struct); the grid
        // has at most one block per multiprocessor, each of which fits (`WgmmaWave::new`).
        unsafe { launch.launch_cooperative(cfg) }.map_err(|e| {
            candle_core::Error::Msg(format!("rnn: persistent wgmma wavefront launch: {e}"))
        })?;
        Ok(())
    }
}
