//! The GPU as the unit tests share it. The test harness runs tests on parallel threads, and a
//! CUDA graph capture is invalidated when another thread's work synchronizes the device
//! meanwhile (a free, say): a test that captures holds the GPU alone, every other test that
//! uses it holds a shared claim.
//!
//! Shared claims are always admitted while no test holds the GPU alone, so a test may take a
//! second one (a helper that makes its own device) without waiting on a capture queued
//! behind the first; a capturing test waits until none is held.

use candle_core::Device;
use std::ops::Deref;
use std::sync::{Condvar, Mutex, MutexGuard};

/// How many shared claims are held, and whether one test holds the GPU alone.
struct Claims {
    shared: usize,
    alone: bool,
}

static CLAIMS: Mutex<Claims> = Mutex::new(Claims {
    shared: 0,
    alone: false,
});
static CHANGED: Condvar = Condvar::new();

fn claims() -> MutexGuard<'static, Claims> {
    // A test that panicked while holding this lock left counts that are still right.
    CLAIMS.lock().unwrap_or_else(|e| e.into_inner())
}

fn wait(c: MutexGuard<'static, Claims>) -> MutexGuard<'static, Claims> {
    CHANGED.wait(c).unwrap_or_else(|e| e.into_inner())
}

/// A claim that excludes captures only, released when dropped.
pub struct Shared(());

pub fn shared() -> Shared {
    let mut c = claims();
    while c.alone {
        c = wait(c);
    }
    c.shared += 1;
    Shared(())
}

impl Drop for Shared {
    fn drop(&mut self) {
        claims().shared -= 1;
        CHANGED.notify_all();
    }
}

/// The GPU to one test alone, released when dropped. (Only the CUDA build's tests capture.)
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub struct Alone(());

#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub fn alone() -> Alone {
    let mut c = claims();
    while c.alone || c.shared > 0 {
        c = wait(c);
    }
    c.alone = true;
    Alone(())
}

impl Drop for Alone {
    fn drop(&mut self) {
        claims().alone = false;
        CHANGED.notify_all();
    }
}

/// The first GPU when this build and machine have one, else the CPU, with a shared claim held
/// as long as the device: the same tests then check the CUDA paths.
pub struct TestDevice {
    device: Device,
    _claim: Shared,
}

pub fn device() -> TestDevice {
    let claim = shared();
    TestDevice {
        device: Device::cuda_if_available(0).unwrap(),
        _claim: claim,
    }
}

impl Deref for TestDevice {
    type Target = Device;
    fn deref(&self) -> &Device {
        &self.device
    }
}
