//! The commands: each one's flags, checked ranges included, and what it does.

pub mod bench;
pub mod eval;
pub mod plot;
pub mod train;
