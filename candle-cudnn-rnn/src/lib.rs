//! Fused, stacked, bidirectional LSTM and GRU layers for candle.
//!
//! One candle `CustomOp3` runs the whole stack: cuDNN's RNN kernels on CUDA (feature `cuda`),
//! a reference implementation on the CPU. Weights live in one flat tensor whose layout is
//! PyTorch's parameter order (see [`layout`]), so `nn.LSTM`/`nn.GRU` weights load as they are.
//!
//! ```
//! use candle_core::{DType, Device, Tensor};
//! use candle_cudnn_rnn::{lstm, RnnConfig};
//! # fn main() -> candle_core::Result<()> {
//! let dev = Device::Cpu;
//! let varmap = candle_nn::VarMap::new();
//! let vb = candle_nn::VarBuilder::from_varmap(&varmap, DType::F32, &dev);
//! let cfg = RnnConfig { num_layers: 2, bidirectional: true, ..Default::default() };
//! let rnn = lstm(8, 16, cfg, vb.pp("lstm"))?;
//! let x = Tensor::randn(0f32, 1., (5, 3, 8), &dev)?; // [seq, batch, input]
//! let (y, state) = rnn.forward_t(&x, None, true)?;
//! assert_eq!(y.dims(), &[5, 3, 32]);
//! assert_eq!(state.h()?.dims(), &[4, 3, 16]);
//! # Ok(()) }
//! ```

mod config;
mod cpu;
#[cfg(feature = "cuda")]
mod cuda;
#[cfg(feature = "cuda")]
mod cudnn;
mod gemm;
pub mod layout;
mod op;
mod par;
mod pytorch;
mod rnn;

pub use config::{MathMode, RnnAlgo, RnnConfig, RnnMode};
#[cfg(feature = "cuda")]
pub use cudnn::cudnn_version;
pub use layout::{Bias, Param, ParamKind, RnnDims};
pub use pytorch::{flat_from_named, load_pytorch, save_pytorch};
pub use rnn::{gru, lstm, rnn, rnn_relu, rnn_tanh, Rnn, RnnState, SeqLengths};
