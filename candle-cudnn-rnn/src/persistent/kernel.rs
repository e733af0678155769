//! The persistent LSTM kernel: how a layer's hidden units are spread over the GPU's
//! multiprocessors ([`Plan`]), and its CUDA source specialised for that plan, compiled with
//! NVRTC at first use and loaded once per device.

use candle_core::cuda_backend::cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use candle_core::cuda_backend::cudarc::driver::{CudaFunction, CudaStream};
use candle_core::cuda_backend::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use candle_core::cuda_backend::CudaDevice;
use candle_core::{DType, Result};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

const LSTM_FWD: &str = include_str!("lstm_fwd.cu");

/// Warps per block: each takes an eighth of the recurrent product's K dimension.
const WARPS: usize = 8;

/// Batches above this would need more accumulator registers than a thread has.
pub(crate) const MAX_BATCH: usize = 32;

/// One layer's kernel for one hidden size, batch and dtype, and how it runs on this GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Plan {
    pub hidden: usize,
    pub batch: usize,
    /// Hidden units per block (a multiple of 4, so that a block's 4 gate rows per unit fill
    /// whole 16-row tensor-core tiles).
    pub units: usize,
    pub bf16: bool,
}

impl Plan {
    /// The plan for `(hidden, batch, dtype)` on `stream`'s GPU, or why there is none.
    pub fn new(
        stream: &CudaStream,
        hidden: usize,
        batch: usize,
        dtype: DType,
    ) -> std::result::Result<Plan, String> {
        let bf16 = match dtype {
            DType::BF16 => true,
            DType::F16 => false,
            dt => return Err(format!("takes bf16 or f16, not {dt:?}")),
        };
        if hidden % 2 != 0 {
            return Err(format!("needs an even hidden size, not {hidden}"));
        }
        if batch > MAX_BATCH {
            return Err(format!("takes batches up to {MAX_BATCH}, not {batch}"));
        }
        let attr = |a| {
            stream
                .context()
                .attribute(a)
                .map(|v| v as usize)
                .map_err(|e| e.to_string())
        };
        let sms = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let smem = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let units = hidden.div_ceil(sms).next_multiple_of(4);
        let plan = Plan {
            hidden,
            batch,
            units,
            bf16,
        };
        if plan.smem_bytes() > smem {
            return Err(format!(
                "hidden size {hidden}: a block's {units} units need {} KiB of shared memory, \
                 the GPU has {} KiB per block",
                plan.smem_bytes() >> 10,
                smem >> 10
            ));
        }
        Ok(plan)
    }

    /// Blocks in the grid, one per multiprocessor at most.
    pub fn blocks(&self) -> usize {
        self.hidden.div_ceil(self.units)
    }

    pub fn threads(&self) -> usize {
        WARPS * 32
    }

    /// Columns of the exchange buffer's rows: the hidden size rounded up to whole K steps.
    pub fn kpad(&self) -> usize {
        self.hidden.div_ceil(16) * 16
    }

    /// The weight tile and each warp's stage of h (or its partial sums), as `lstm_fwd.cu`
    /// lays them out.
    pub fn smem_bytes(&self) -> usize {
        let rows = 4 * self.units;
        let npad = self.batch.div_ceil(8) * 8;
        let kw = self.kpad().div_ceil(16).div_ceil(WARPS) * 16;
        let stage = npad * (kw + 8) * 2;
        let sums = npad * (rows + 4) * 4;
        rows * (self.kpad() + 8) * 2 + WARPS * stage.max(sums).next_multiple_of(16)
    }

    fn defines(&self) -> Vec<String> {
        vec![
            format!("-DHID={}", self.hidden),
            format!("-DBATCH={}", self.batch),
            format!("-DUNITS={}", self.units),
            format!("-DNWARPS={WARPS}"),
            format!("-DELEM_BF16={}", u8::from(self.bf16)),
        ]
    }

    fn module_name(&self) -> String {
        format!(
            "candle_cudnn_rnn_lstm_fwd_h{}_b{}_u{}_{}",
            self.hidden,
            self.batch,
            self.units,
            if self.bf16 { "bf16" } else { "f16" }
        )
    }

    /// The forward kernel for this plan on `dev`, compiled on first use.
    pub fn forward_kernel(&self, dev: &CudaDevice) -> Result<CudaFunction> {
        static PTX: OnceLock<Mutex<HashMap<Plan, std::result::Result<String, String>>>> =
            OnceLock::new();
        let ptx = {
            let mut cache = PTX
                .get_or_init(Default::default)
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            cache
                .entry(*self)
                .or_insert_with(|| {
                    let opts = CompileOptions {
                        arch: Some("compute_80"),
                        options: self.defines(),
                        ..Default::default()
                    };
                    compile_ptx_with_opts(LSTM_FWD, opts)
                        .map(|p| p.to_src())
                        .map_err(|e| e.to_string())
                })
                .clone()
        };
        let ptx = ptx.map_err(|e| {
            candle_core::Error::Msg(format!("rnn: persistent LSTM kernel (NVRTC): {e}"))
        })?;
        let f = dev
            .get_or_load_custom_func("lstm_persistent_fwd", &self.module_name(), &ptx)?
            .into_cuda_function();
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            self.smem_bytes() as i32,
        )
        .map_err(|e| candle_core::Error::Msg(format!("rnn: persistent LSTM kernel: {e}")))?;
        Ok(f)
    }
}
