#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod call;
mod config;
mod cpu;
mod direct;
pub mod layout;
mod lengths;
mod op;
mod pytorch;
mod rnn;
mod sink;
mod state;

#[cfg(feature = "cuda")]
mod backend;
#[cfg(feature = "cuda")]
mod choose;
#[cfg(feature = "cuda")]
mod cudnn;
#[cfg(feature = "cuda")]
pub mod kernels;
#[cfg(feature = "cuda")]
mod memory;
#[cfg(feature = "cuda")]
mod persistent;
#[cfg(feature = "cuda")]
mod registry;
#[cfg(feature = "cuda")]
mod timing;

pub use config::{Bias, Launch, MathMode, RnnAlgo, RnnConfig, RnnMode};
#[cfg(feature = "cuda")]
pub use cudnn::cudnn_version;
pub use direct::{backward, backward_step};
pub use layout::{Param, ParamKind, RnnDims};
pub use lengths::SeqLengths;
#[cfg(feature = "cuda")]
pub use memory::keep_freed_memory;
pub use pytorch::{flat_from_named, load_pytorch};
pub use rnn::{gru, lstm, rnn, rnn_relu, rnn_tanh, save_pytorch, DropoutState, Rnn};
pub use sink::SinkMode;
pub use state::RnnState;
