//! The tutorial's batching: the id stream cut into `batch` rows, read in windows of
//! `num_steps`.

use anyhow::{ensure, Result};
use candle_core::{Device, Tensor};

/// The tutorial's reader over one id stream.
pub struct Batches<'a> {
    data: &'a [u32],
    batch_size: usize,
    num_steps: usize,
    batch_len: usize,
}

#[allow(clippy::len_without_is_empty)]
impl<'a> Batches<'a> {
    pub fn new(data: &'a [u32], batch_size: usize, num_steps: usize) -> Result<Self> {
        let batch_len = data.len() / batch_size;
        let b = Self {
            data,
            batch_size,
            num_steps,
            batch_len,
        };
        ensure!(
            b.len() > 0,
            "{} words are too few for batches of {batch_size} x {num_steps} steps",
            data.len()
        );
        Ok(b)
    }

    /// Parallel streams.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Batches per epoch: `(batch_len - 1) / num_steps`.
    pub fn len(&self) -> usize {
        self.batch_len.saturating_sub(1) / self.num_steps
    }

    /// The whole stream on `device`, time-major `[batch_len, batch]`, so that every batch is a
    /// view of it (`window`) and no step copies from (pageable) host memory, a copy that may
    /// wait for the device's queue before it returns.
    pub fn upload(&self, device: &Device) -> Result<Tensor> {
        let (b_n, len) = (self.batch_size, self.batch_len);
        let t: Vec<u32> = (0..len)
            .flat_map(|t| (0..b_n).map(move |b| self.data[b * len + t]))
            .collect();
        Ok(Tensor::from_vec(t, (len, b_n), device)?)
    }

    /// Batch `i` of an uploaded stream: time-major `[num_steps, batch]` inputs, and the targets
    /// (the same windows shifted by one word).
    pub fn window(&self, stream: &Tensor, i: usize) -> Result<(Tensor, Tensor)> {
        let at = i * self.num_steps;
        Ok((
            stream.narrow(0, at, self.num_steps)?,
            stream.narrow(0, at + 1, self.num_steps)?,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ids 0..26, batch 2 => rows [0..13) and [13..26); steps 3 => (13-1)/3 = 4 batches.
    #[test]
    fn windows_match_the_tutorial_reader() {
        let data: Vec<u32> = (0..26).collect();
        let b = Batches::new(&data, 2, 3).unwrap();
        assert_eq!(b.len(), 4);
        let stream = b.upload(&Device::Cpu).unwrap();
        let get = |i| {
            let (x, y) = b.window(&stream, i).unwrap();
            let flat = |t: Tensor| t.flatten_all().unwrap().to_vec1::<u32>().unwrap();
            (flat(x), flat(y))
        };
        // Time-major [t][b]: row 0 reads 3,4,5 and row 1 reads 16,17,18.
        let (x, y) = get(1);
        assert_eq!(x, [3, 16, 4, 17, 5, 18]);
        assert_eq!(y, [4, 17, 5, 18, 6, 19]);
        let (x, y) = get(3);
        assert_eq!((x[4], x[5], y[4], y[5]), (11, 24, 12, 25));
        assert!(Batches::new(&data[..5], 2, 3).is_err());
    }
}
