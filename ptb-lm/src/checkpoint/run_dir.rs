//! A run folder (`--out`) is written by one process at a time: `train` holds an exclusive lock
//! on its `.lock` file while it runs (the operating system drops it when the process ends, even
//! by a crash, so no stale lock survives) and clears the temporary files an interrupted
//! checkpoint write left behind.

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::Path;

/// The name of the lock file inside a run folder.
pub const LOCK: &str = ".lock";

/// Held for as long as the run writes its folder.
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Creates `dir` if needed and locks it, or says which process holds it.
    pub fn acquire(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(LOCK);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                let holder = match holder.trim() {
                    "" => String::new(),
                    pid => format!(" (process {pid})"),
                };
                bail!(
                    "{} is in use by another ptb-lm run{holder}: wait for it to finish, or pass \
                     another --out",
                    dir.display()
                )
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()))
            }
        }
        // For people looking at the folder: who holds it.
        file.set_len(0)
            .and_then(|_| write!(file, "{}", std::process::id()))
            .with_context(|| format!("writing {}", path.display()))?;
        remove_stale_temporaries(dir)?;
        Ok(Self { _file: file })
    }
}

/// `*.tmp` files are checkpoint writes that never reached their rename (see
/// `checkpoint::write_atomic`); the file they were to replace is intact.
fn remove_stale_temporaries(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "tmp") && path.is_file() {
            std::fs::remove_file(&path)
                .with_context(|| format!("removing the stale {}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("model.tmp"), b"half a checkpoint").unwrap();
        std::fs::write(dir.join("model.safetensors"), b"kept").unwrap();
        let first = RunLock::acquire(&dir).unwrap();
        assert!(!dir.join("model.tmp").exists());
        assert!(dir.join("model.safetensors").exists());
        let e = RunLock::acquire(&dir).err().unwrap().to_string();
        assert!(e.contains("in use by another ptb-lm run"), "{e}");
        assert!(e.contains(&std::process::id().to_string()), "{e}");
        drop(first);
        RunLock::acquire(&dir).unwrap();
    }
}
