//! The training loop and what every command shares: the setup of a device and a model
//! (`setup`), a run's specification and progress (`run`), one step (`step`) on fixed buffers
//! that a GPU replays as a CUDA graph (`fixed_step`), and a pass of steps over a split (`pass`)
//! with its progress display.

pub mod fixed_step;
pub mod interrupt;
pub mod pass;
pub mod progress;
pub mod run;
pub mod setup;
pub mod step;
