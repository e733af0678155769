//! Checkpoints written on a thread of their own, one at a time: once the weights are copied to
//! the host, the next epoch trains while the last checkpoint is serialized and reaches the disk
//! (a large model's is hundreds of MB, synced).

use crate::checkpoint::Encoded;
use anyhow::{anyhow, Result};
use std::thread::JoinHandle;

/// At most one checkpoint in flight. Each file is still written atomically, so a crash leaves
/// the previous checkpoint or the new one; a failed write is reported by the next `write` or
/// by `finish`.
#[derive(Default)]
pub struct CheckpointWriter {
    pending: Option<JoinHandle<Result<()>>>,
}

impl CheckpointWriter {
    /// Waits for the checkpoint in flight, then starts writing `files`.
    pub fn write(&mut self, files: Encoded) -> Result<()> {
        self.finish()?;
        self.pending = Some(std::thread::spawn(move || files.write()));
        Ok(())
    }

    /// Waits for the checkpoint in flight, if any, and says whether it was written.
    pub fn finish(&mut self) -> Result<()> {
        match self.pending.take() {
            Some(h) => h
                .join()
                .map_err(|_| anyhow!("the checkpoint writer panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for CheckpointWriter {
    /// A run that stops on an error still lands the checkpoint it had started.
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            eprintln!("ptb-lm: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint;
    use crate::config::{LmConfig, Preset};
    use crate::train::run::{RunProgress, RunSpec};
    use crate::train::setup::{build_model, named_weights};
    use candle_core::Device;

    /// A checkpoint written in the background is the one written in place, whatever happens to
    /// the weights meanwhile, and a write that cannot happen is reported, not lost.
    #[test]
    fn background_writes_land_and_failures_surface() {
        let mut config = LmConfig::preset(Preset::Small);
        config.hidden_size = 8;
        let spec = RunSpec::new(Preset::Small, config, 11);
        let (_, varmap) =
            build_model(&spec, (&Device::Cpu, candle_cudnn_rnn::Launch::Eager), None).unwrap();
        let weights = named_weights(&varmap);
        let tok = crate::data::corpus::tokenizer(&["a".to_owned(), "b".to_owned()]).unwrap();
        let progress = RunProgress::default();
        let tmp = std::env::temp_dir().join(format!("ptb-lm-writer-{}", std::process::id()));
        let (direct, background) = (tmp.join("direct"), tmp.join("background"));
        let files = checkpoint::encode(
            &direct,
            &weights,
            (&spec, &progress),
            &tok,
            &mut Default::default(),
        )
        .unwrap();
        files.write().unwrap();
        let mut writer = CheckpointWriter::default();
        let files = checkpoint::encode(
            &background,
            &weights,
            (&spec, &progress),
            &tok,
            &mut Default::default(),
        )
        .unwrap();
        // Training goes on changing its weights in place before the write: the checkpoint keeps
        // the ones it was taken with.
        for v in varmap.all_vars() {
            v.set(&v.zeros_like().unwrap()).unwrap();
        }
        writer.write(files).unwrap();
        writer.finish().unwrap();
        for f in ["model.safetensors", "state.json", "tokenizer.json"] {
            let read = |d: &std::path::Path| std::fs::read(d.join(f)).unwrap();
            assert_eq!(read(&direct), read(&background), "{f}");
        }
        // A directory that cannot be made: a file stands where it should be.
        let blocked = tmp.join("a-file");
        std::fs::write(&blocked, b"").unwrap();
        let files = checkpoint::encode(
            &blocked,
            &weights,
            (&spec, &progress),
            &tok,
            &mut Default::default(),
        )
        .unwrap();
        writer.write(files).unwrap();
        assert!(writer.finish().is_err());
        std::fs::remove_dir_all(&tmp).ok();
    }
}
