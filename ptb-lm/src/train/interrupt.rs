//! Ctrl-C (SIGINT) and SIGTERM while a run trains: the first asks the run to stop at the end of
//! its current step and save a checkpoint there (`--resume` then continues exactly); the
//! handler is then gone, so a second one ends the process at once, as without ptb-lm's
//! handling.

use std::sync::atomic::{AtomicBool, Ordering};

static ASKED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: nothing else is safe in a signal handler.
    ASKED.store(true, Ordering::SeqCst);
}

/// Catches the next SIGINT and SIGTERM (once each; the default action comes back after).
pub fn catch() {
    #[cfg(unix)]
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid (empty mask, no flags); the handler only stores
        // to an atomic, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Asks for a stop as a signal would.
pub fn ask() {
    ASKED.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked since `catch`.
pub fn asked() -> bool {
    ASKED.load(Ordering::SeqCst)
}

/// The error a stopped run ends with: its checkpoint is written, and `--resume` continues it.
/// The process exits with 130, as a shell reports a command ended by Ctrl-C.
#[derive(Debug)]
pub struct Stopped(pub String);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stopped {}
