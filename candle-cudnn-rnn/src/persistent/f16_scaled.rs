//! An f32 layer's operands for the forward as f16 ones, each row of W_hh and of h_0 scaled by a
//! power of two ([`Plan::scaled`], `f16_scaled.cu`): made once a layer, before its launch, into
//! buffers that the layers of an inference call take in turn.

use super::kernel::{Pass, F16_SCALED_KERNEL};
use super::plan::Plan;
use candle_core::cuda_backend::cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use candle_core::cuda_backend::CudaDevice;
use candle_core::Result;
use std::sync::Arc;

/// The scaled rows of one layer at a time, and their scales.
pub(super) struct ScaledOperands {
    /// W_hh in f16, `[GH, H]`, and each row's scale, `[GH]`.
    w: CudaSlice<u16>,
    w_scale: CudaSlice<f32>,
    /// h_0 in f16, `[B, H]`, and each sample's scale, `[B]`.
    h: CudaSlice<u16>,
    h_scale: CudaSlice<f32>,
    f: CudaFunction,
    /// W_hh's rows, h_0's rows, a row's columns.
    rows: (usize, usize),
    cols: usize,
}

/// What the wgmma forward takes in place of an f32 layer's W_hh and h_0, and their scales
/// (`recurrence_wgmma_fwd.cu`'s `w_hh`, `h0`, `w_scale`, `h_scale`; h's two null where the call
/// has no h_0).
pub(super) struct Scaled {
    pub w_hh: u64,
    pub h0: u64,
    pub w_scale: u64,
    pub h_scale: u64,
}

impl ScaledOperands {
    /// The buffers for `plan`'s layers (its forward [`Plan::scaled`]) at `batch`, and the
    /// kernel that fills them, on `dev`.
    pub fn new(dev: &CudaDevice, stream: &Arc<CudaStream>, plan: &Plan) -> Result<Self> {
        let (gh, hidden, batch) = (plan.cell.gates() * plan.hidden, plan.hidden, plan.batch);
        // SAFETY: each launch of `scale` writes every element that its recurrence reads.
        let (w, w_scale, h, h_scale) = unsafe {
            (
                stream.alloc::<u16>(gh * hidden)?,
                stream.alloc::<f32>(gh)?,
                stream.alloc::<u16>(batch * hidden)?,
                stream.alloc::<f32>(batch)?,
            )
        };
        Ok(Self {
            w,
            w_scale,
            h,
            h_scale,
            f: plan.function(dev, Pass::Forward, F16_SCALED_KERNEL)?,
            rows: (gh, batch),
            cols: hidden,
        })
    }

    /// Scales a layer's W_hh (f32 `[GH, H]` at `w_hh`) and h_0 (f32 `[B, H]` at `h0`, 0 where
    /// the call has none) into the buffers, on `stream` before the layer's launch, which must
    /// come before the next call of this.
    pub fn scale(&mut self, stream: &CudaStream, w_hh: u64, h0: u64) -> Result<Scaled> {
        let (w_rows, h_rows) = (self.rows.0, if h0 == 0 { 0 } else { self.rows.1 });
        let (w, _wg) = self.w.device_ptr_mut(stream);
        let (w_scale, _sg) = self.w_scale.device_ptr_mut(stream);
        let (h, _hg) = self.h.device_ptr_mut(stream);
        let (h_scale, _hs) = self.h_scale.device_ptr_mut(stream);
        let [a_rows, b_rows, cols] = [w_rows, h_rows, self.cols].map(|v| v as i32);
        let rows = (w_rows + h_rows) as u32;
        let config = LaunchConfig {
            grid_dim: (rows.div_ceil(ROWS_A_BLOCK), 1, 1),
            block_dim: (32 * ROWS_A_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.f);
        launch
            .arg(&w_hh)
            .arg(&a_rows)
            .arg(&h0)
            .arg(&b_rows)
            .arg(&cols)
            .arg(&w)
            .arg(&w_scale)
            .arg(&h)
            .arg(&h_scale);
        // SAFETY: `w_hh` and `h0` hold the rows counted, the buffers were sized for them.
        unsafe { launch.launch(config) }.map_err(|e| {
            candle_core::Error::Msg(format!("rnn: persistent kernel {F16_SCALED_KERNEL}: {e}"))
        })?;
        let given = |p: u64| if h0 == 0 { 0 } else { p };
        Ok(Scaled {
            w_hh: w,
            h0: given(h),
            w_scale,
            h_scale: given(h_scale),
        })
    }
}

/// Rows a block of `rows_to_f16_scaled` scales: a warp each.
const ROWS_A_BLOCK: u32 = 8;
