//! Stacked layers as a wavefront (`recurrence_fwd.cu`'s `wave_fwd`, `recurrence_bwd.cu`'s
//! `wave_bwd`): one launch runs every layer, so a call takes seq + L - 1 grid-wide steps
//! forward (layer l does its step s - l at wave step s) and seq + 2 (L - 1) backward (from the
//! top, each layer two wave steps behind the one above) instead of seq * L each. All layers'
//! weights stay on chip at once: the blocks of an upper layer also hold its W_ih, whose
//! products (with the layer below's output forward, with the layer's gate gradients backward)
//! are made step by step inside the recurrence; the lowest layer's input projection and every
//! weight gradient stay GEMMs. It fits only where every layer's blocks fit on the GPU together
//! (PTB small and medium on an H100; not PTB large, whose one layer already takes most
//! multiprocessors), and runs there unless turned off (`CANDLE_RNN_PERSISTENT_WAVE=0`, see
//! [`WaveTuning`]). Each pass writes what its layer-by-layer version writes, so either pass can
//! run either way. It takes fewer grid-wide steps, and PTB medium and small train faster with
//! it (`results/2026-11-25-h100-wavefront/`). Both cells run so (a GRU's n gate keeps its two
//! sides apart in a row group and an exchange column group of their own, `Cell::wave_groups`),
//! at any batch the kernels take (each wave step takes it in chunks of [`CHUNK_SAMPLES`]), and in
//! as many rounds of gate math per block as it needs to fit
//! (`results/2026-11-26-h200-gru-wavefront/`, `-wave-rounds/`, `-wave-chunks/`).

use super::cell::UNIT_STEP;
use super::kernel::{
    allow_smem, forward_smem, function, module, Pass, CHUNK_SAMPLES, L1_RESERVE, MAX_BUFFERS, WARPS,
};
use super::plan::Plan;
use super::tuning::WaveTuning;
use candle_core::cuda_backend::cudarc::driver::sys::CUdevice_attribute;
use candle_core::cuda_backend::cudarc::driver::{
    CudaFunction, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::{CudaDevice, DeviceId};
use candle_core::Result;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The most layers one wavefront launch takes (`recurrence_fwd.cu`'s WAVE_MAX).
pub(super) const WAVE_MAX: usize = 4;

/// A stack's wavefront in one pass: its layers, the units per block of the lowest layer and of
/// the others, and (backward) the chunk buffers per warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Wave {
    pub pass: Pass,
    pub layers: usize,
    pub units: [usize; 2],
    pub buffers: usize,
}

/// The units per block worth trying for a layer of `hidden` units, in increasing order: for
/// each count of blocks, the fewest units that give it. More units at the same count only add
/// work, rounds and shared memory to each block, so [`Wave::fitted`]'s choice is among these
/// (the same as over every multiple of [`UNIT_STEP`], from about a hundredth of the pairs: PTB
/// large's 375 sizes become 38, its 140625 pairs 1444).
fn unit_sizes(hidden: usize) -> Vec<usize> {
    let blocks = |u: usize| hidden.div_ceil(u);
    (UNIT_STEP..=hidden.next_multiple_of(UNIT_STEP))
        .step_by(UNIT_STEP)
        .filter(|&u| u == UNIT_STEP || blocks(u) < blocks(u - UNIT_STEP))
        .collect()
}

impl Wave {
    /// The wavefront of `pass` for `layers` layers of `plan`'s size on `dev`, when `asked`
    /// allows it and every layer's blocks fit at once, one per multiprocessor; `None` otherwise
    /// (the pass then runs layer by layer).
    pub fn new(
        dev: &CudaDevice,
        plan: &Plan,
        (layers, pass): (usize, Pass),
        asked: WaveTuning,
    ) -> Option<Wave> {
        // The wavefront multiplies half elements only, the batch in one group
        // (`recurrence_fwd.cu`).
        let half = plan.elem.words() == 1;
        if asked == WaveTuning::Off
            || !(2..=WAVE_MAX).contains(&layers)
            || plan.one_cluster
            || plan.groups > 1
            || plan.pass_wgmma(pass)
            || !half
        {
            return None;
        }
        type Key = (DeviceId, Plan, usize, Pass, WaveTuning);
        static WAVES: OnceLock<Mutex<HashMap<Key, Option<Wave>>>> = OnceLock::new();
        let mut waves = WAVES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *waves
            .entry((dev.id(), *plan, layers, pass, asked))
            .or_insert_with(|| Self::fitted(dev, plan, (layers, pass), asked))
    }

    fn fitted(
        dev: &CudaDevice,
        plan: &Plan,
        (layers, pass): (usize, Pass),
        asked: WaveTuning,
    ) -> Option<Wave> {
        let attr = |a| {
            dev.cuda_stream()
                .context()
                .attribute(a)
                .ok()
                .map(|v| v as usize)
        };
        let sms = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let smem = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        Self::fitted_on(plan, (layers, pass), asked, (sms, smem), unit_sizes)
    }

    /// [`Wave::fitted`] on a GPU of `sms` multiprocessors and `smem` bytes of shared memory per
    /// block, trying the units per block that `sizes` gives for the hidden size.
    fn fitted_on(
        plan: &Plan,
        (layers, pass): (usize, Pass),
        asked: WaveTuning,
        (sms, smem): (usize, usize),
        sizes: fn(usize) -> Vec<usize>,
    ) -> Option<Wave> {
        let fits = |w: &Wave| {
            w.blocks(plan) <= sms && w.smem_bytes(plan) <= smem && w.bias_slots_fit(plan)
        };
        // The backward's chunk buffers: as many as leave L1 its share (as `Plan`'s), at least 2.
        let buffered = |units| {
            let wave = |buffers| Wave {
                pass,
                layers,
                units,
                buffers,
            };
            match pass {
                Pass::Forward => wave(2),
                Pass::Backward => (2..=MAX_BUFFERS)
                    .map(wave)
                    .take_while(|w| w.buffers == 2 || w.smem_bytes(plan) + L1_RESERVE <= smem)
                    .last()
                    .unwrap_or(wave(2)),
            }
        };
        if let WaveTuning::Units(units) = asked {
            return Some(buffered(units)).filter(fits);
        }
        // The slowest block of a wave step sets its pace. A block whose units and samples
        // outnumber its threads does its gate math and stores in rounds, which cost more than
        // the products: PTB medium's [35, 20, 2 x 650] ran slower with 16 or 20 units below (2
        // rounds) than with 12 and 12 (1 round), although the lower blocks then hold fewer rows
        // (`results/2026-11-25-h100-wavefront/`). So: the fewest rounds, then the least work
        // per block (an upper block's rows are twice as long forward, twice as many backward),
        // then the fewest blocks (fewer arrivals at the barrier). A stack that fits only in
        // more rounds than layer by layer still runs faster as a wavefront: [30, 32, 3 x 512]
        // and [200, 32, 3 x 512] in 0.41-0.53x of the layer-by-layer time in 2 rounds, against 1
        // (`results/2026-11-26-h200-wave-rounds/`).
        let rounds = |u: usize| (u * plan.batch).div_ceil(plan.threads());
        let sizes = sizes(plan.hidden);
        sizes
            .iter()
            .flat_map(|&u0| sizes.iter().map(move |&u1| [u0, u1]))
            .map(buffered)
            .filter(fits)
            .min_by_key(|w| {
                let [u0, u1] = w.units;
                (rounds(u0).max(rounds(u1)), u0.max(2 * u1), w.blocks(plan))
            })
    }

    /// Whether the backward's bias sums fit in its warps' regions, which they take at its end
    /// (`recurrence_bwd.cu`: a slot per sample, gate and unit, a split gate's second side
    /// included; the regions hold at least the chunk buffers of one chunk of the batch).
    fn bias_slots_fit(&self, plan: &Plan) -> bool {
        let gates = plan.cell.gates() + usize::from(plan.cell.splits());
        let slots = plan.batch * gates * self.units[0].max(self.units[1]) * 4;
        let regions = WARPS * self.buffers * plan.batch.min(CHUNK_SAMPLES) * plan.chunk * 2;
        self.pass == Pass::Forward || slots <= regions
    }

    /// Blocks of the lowest layer and of each other one.
    fn layer_blocks(&self, plan: &Plan) -> [usize; 2] {
        self.units.map(|u| plan.hidden.div_ceil(u))
    }

    pub fn blocks(&self, plan: &Plan) -> usize {
        let [lower, upper] = self.layer_blocks(plan);
        lower + (self.layers - 1) * upper
    }

    /// Columns of the exchange buffer's rows: every layer's h and, below the top, its output
    /// through dropout.
    pub fn exchange_cols(&self, plan: &Plan) -> usize {
        (2 * self.layers - 1) * plan.kpad()
    }

    /// Columns of the backward's exchange rows: its column groups in whole chunks.
    pub fn gpad(plan: &Plan) -> usize {
        plan.gpad_of(plan.cell.wave_groups())
    }

    /// Shared memory per block: the larger of the two kinds (an upper block's input rows are
    /// twice as long forward, and a split gate's cell has a row group more; backward it holds
    /// twice the rows).
    fn smem_bytes(&self, plan: &Plan) -> usize {
        let [lower, upper] = match self.pass {
            Pass::Forward => {
                let steps = plan.kpad() / 16;
                let (batch, cell) = (plan.batch, plan.cell);
                [
                    forward_smem(
                        (self.units[0], steps),
                        (1, 1, false, false),
                        (batch, cell.gates()),
                        None,
                    ),
                    forward_smem(
                        (self.units[1], 2 * steps),
                        (1, 1, false, false),
                        (batch, cell.wave_groups()),
                        None,
                    ),
                ]
            }
            Pass::Backward => {
                let plan = Plan {
                    buffers: self.buffers,
                    ..*plan
                };
                let gpad = Self::gpad(&plan);
                [(self.units[0], 1), (self.units[1], 2)]
                    .map(|tile| plan.backward_smem(tile, 1, gpad))
            }
        };
        lower.max(upper)
    }

    /// The wavefront kernel's name in the source of `pass`.
    pub(super) fn kernel_name(pass: Pass) -> &'static str {
        match pass {
            Pass::Forward => "wave_fwd",
            Pass::Backward => "wave_bwd",
        }
    }

    /// The wavefront kernel on `dev`, compiled on first use.
    pub fn kernel(&self, dev: &CudaDevice, plan: &Plan) -> Result<CudaFunction> {
        let name = Self::kernel_name(self.pass);
        let mut defines = vec![
            format!("-DHID={}", plan.hidden),
            format!("-DBATCH={}", plan.batch),
            format!("-DNWARPS={WARPS}"),
            plan.elem.define().to_string(),
            "-DCL=1".into(),
            format!("-DWAVE_LAYERS={}", self.layers),
            format!("-DUNITS0={}", self.units[0]),
            format!("-DUNITS1={}", self.units[1]),
        ];
        if self.pass == Pass::Backward {
            defines.push(format!("-DNBUF={}", self.buffers));
            defines.push(format!("-DCH={}", plan.chunk));
        }
        // Checked against the kernel's tiles when it compiles.
        defines.push(format!("-DSMEM_BYTES={}", self.smem_bytes(plan)));
        let module_name = format!(
            "candle_cudnn_rnn_{}_{name}_h{}_b{}_l{}_u{}_{}_n{}_ch{}_{}",
            plan.cell.name(),
            plan.hidden,
            plan.batch,
            self.layers,
            self.units[0],
            self.units[1],
            self.buffers,
            plan.chunk,
            plan.elem.name(),
        );
        let module = module(
            module_name,
            self.pass.sources(plan.cell),
            defines,
            "compute_80",
        );
        let f = function(&module, dev, self.pass, name)?;
        allow_smem(&f, self.smem_bytes(plan))?;
        Ok(f)
    }

    /// Launches `f` (from [`Wave::kernel`]) on every block at once, cooperatively, with `args`
    /// (the kernel's struct), then `extra` (the backward's `db_add`), the counter and `seq`.
    pub fn launch<A: DeviceRepr>(
        &self,
        (stream, f, plan): (&CudaStream, &CudaFunction, &Plan),
        (args, extra): (&A, Option<u64>),
        counter: u64,
        seq: usize,
    ) -> Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (self.blocks(plan) as u32, 1, 1),
            block_dim: (plan.threads() as u32, 1, 1),
            shared_mem_bytes: self.smem_bytes(plan) as u32,
        };
        let seq = seq as i32;
        let mut launch = stream.launch_builder(f);
        launch.arg(args);
        if let Some(extra) = &extra {
            launch.arg(extra);
        }
        launch.arg(&counter).arg(&seq);
        // SAFETY: the arguments are the kernel's, in its order (`args` is its struct); the grid
        // has at most one block per multiprocessor, each of which fits (`Wave::new`).
        unsafe { launch.launch_cooperative(cfg) }.map_err(|e| {
            candle_core::Error::Msg(format!("rnn: persistent kernel wavefront launch: {e}"))
        })?;
        Ok(())
    }
}

/// `recurrence_fwd.cu`'s `WaveArgs` (and `recurrence_wgmma_wave.cu`'s `WgWaveArgs`): per layer
/// its `LayerArgs` (device addresses and the dropout's two words, in that struct's order), then
/// the exchange buffer.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct WaveArgs {
    pub layers: [[u64; 16]; WAVE_MAX],
    pub exchange: u64,
}

/// `recurrence_bwd.cu`'s `WaveBwdArgs`: per layer its `BwdArgs`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct WaveBwdArgs {
    pub layers: [[u64; 19]; WAVE_MAX],
}

// SAFETY: plain 64-bit words laid out as the kernels' structs.
unsafe impl DeviceRepr for WaveArgs {}
unsafe impl DeviceRepr for WaveBwdArgs {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persistent::cell::Cell;

    /// Every multiple of [`UNIT_STEP`] up to the hidden size: what `fitted` tried before
    /// [`unit_sizes`].
    fn every_size(hidden: usize) -> Vec<usize> {
        (UNIT_STEP..=hidden.next_multiple_of(UNIT_STEP))
            .step_by(UNIT_STEP)
            .collect()
    }

    #[test]
    fn the_fewest_units_per_block_count_give_the_same_wavefront() {
        assert_eq!(unit_sizes(1500).len(), 38);
        assert_eq!(unit_sizes(8), vec![4, 8]);
        let mut waves = 0;
        // GPUs: an H100 SXM's multiprocessors and opt-in shared memory per block, an H100
        // PCIe's, an A100's.
        for gpu in [(132, 227 << 10), (114, 227 << 10), (108, 163 << 10)] {
            for cell in [Cell::Lstm, Cell::Gru] {
                for hidden in [8, 66, 200, 512, 650, 1024, 1500] {
                    for batch in [1, 20, 32, 77, 256] {
                        let plan = Plan {
                            units: [UNIT_STEP; 2],
                            ..Plan::example(cell, hidden, batch)
                        };
                        for layers in 2..=WAVE_MAX {
                            for pass in [Pass::Forward, Pass::Backward] {
                                let how = (layers, pass);
                                let fitted = WaveTuning::Fitted;
                                let wave = Wave::fitted_on(&plan, how, fitted, gpu, unit_sizes);
                                waves += usize::from(wave.is_some());
                                if (cell, hidden, batch, layers, gpu.0)
                                    == (Cell::Lstm, 650, 20, 2, 132)
                                {
                                    // PTB medium on an H100: 12 units a block in both layers
                                    // (`results/2026-11-25-h100-wavefront/`).
                                    assert_eq!(wave.map(|w| w.units), Some([12, 12]));
                                }
                                assert_eq!(
                                    wave,
                                    Wave::fitted_on(&plan, how, fitted, gpu, every_size),
                                    "{cell:?} hidden {hidden} batch {batch} {layers} layers \
                                     {pass:?} on {gpu:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
        // Most of these stacks fit as a wavefront somewhere: the comparison compares choices.
        assert!(waves > 500, "{waves} wavefronts");
    }
}
