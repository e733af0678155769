//! Per-sample sequence lengths of a padded batch, as a host slice or a tensor.

use candle_core::{bail, DType, Result, Tensor};
use std::sync::Arc;

/// Per-sample sequence lengths: a host slice, or a u32/i64 tensor (copied to the host, which
/// cuDNN needs them on).
pub trait SeqLengths {
    /// The lengths on the host, one per sample (checked against the batch by the module).
    fn to_lengths(&self) -> Result<Vec<usize>>;
}

impl SeqLengths for [usize] {
    fn to_lengths(&self) -> Result<Vec<usize>> {
        Ok(self.to_vec())
    }
}

impl SeqLengths for Vec<usize> {
    fn to_lengths(&self) -> Result<Vec<usize>> {
        Ok(self.clone())
    }
}

impl SeqLengths for Tensor {
    fn to_lengths(&self) -> Result<Vec<usize>> {
        if self.rank() != 1 {
            bail!(
                "rnn: lengths must be a 1-D tensor, got shape {:?}",
                self.dims()
            )
        }
        match self.dtype() {
            DType::U32 => Ok(self
                .to_vec1::<u32>()?
                .into_iter()
                .map(|l| l as usize)
                .collect()),
            DType::I64 => self
                .to_vec1::<i64>()?
                .into_iter()
                .map(|l| usize::try_from(l).map_err(|_| negative(l)))
                .collect(),
            dt => bail!("rnn: lengths must be u32 or i64, got {dt:?}"),
        }
    }
}

fn negative(l: i64) -> candle_core::Error {
    candle_core::Error::Msg(format!("rnn: a sequence length is negative ({l})"))
}

/// One length per sample, each in `1..=seq`.
pub(crate) fn checked_lengths(
    lengths: Vec<usize>,
    seq: usize,
    batch: usize,
) -> Result<Arc<[usize]>> {
    if lengths.len() != batch {
        bail!(
            "rnn: {} sequence lengths for a batch of {batch}",
            lengths.len()
        )
    }
    if let Some((b, l)) = lengths.iter().enumerate().find(|(_, &l)| l == 0 || l > seq) {
        bail!("rnn: sequence length {l} of sample {b} is outside 1..={seq}")
    }
    Ok(lengths.into())
}
