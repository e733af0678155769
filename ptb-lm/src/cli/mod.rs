//! The commands: each one's flags, checked ranges included, and what it does.

pub mod args;
pub mod bench;
pub mod device_arg;
pub mod eval;
pub mod plot;
pub mod train;
