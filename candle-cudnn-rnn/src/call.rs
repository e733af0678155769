//! One call of the op, as every kernel path sees it: its sizes and sequence lengths
//! ([`Call`]) and its inter-layer dropout ([`Dropout`]); and the module's dropout seed
//! ([`DropoutSeed`]), the one source of both the CPU path's masks and a GPU's random state.

use crate::layout::RnnDims;
use std::sync::{Arc, Mutex};

/// The sizes of one call. Buffers are time-major: `x` is `[T, B, I]`, the output
/// `[T, B, D*P]`, the packed state `[h | c]` with `h` `[L*D, B, P]` and `c` `[L*D, B, H]`.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub dims: RnnDims,
    pub seq: usize,
    pub batch: usize,
    /// Valid steps of each sequence (each in `1..=seq`); `None`: all `seq`.
    pub lengths: Option<Arc<[usize]>>,
    /// The caller gave no initial state: it is zero, and the op's state operand is a
    /// placeholder that no path reads (the kernels take a null state as zeros), so that a call
    /// neither allocates nor fills one.
    pub zero_state: bool,
}

impl Call {
    /// Whether sample `b` has a step `t`: padded steps are skipped, their outputs stay zero.
    pub fn active(&self, t: usize, b: usize) -> bool {
        self.lengths.as_ref().is_none_or(|l| t < l[b])
    }

    /// Whether step `t` is the first that sample `b` runs in direction `dir` (so it reads
    /// the initial state): step 0 forward, the sample's own last step in reverse.
    pub fn first(&self, t: usize, b: usize, dir: usize) -> bool {
        match (dir, &self.lengths) {
            (0, _) => t == 0,
            (_, Some(l)) => t + 1 == l[b],
            (_, None) => t + 1 == self.seq,
        }
    }

    /// Where `h` (slot 0) or `c` (slot 1) of one layer-direction sits in the packed state.
    pub fn state_slot(&self, slot: usize, layer: usize, dir: usize) -> std::ops::Range<usize> {
        let k = layer * self.dims.num_directions + dir;
        let (before, n) = match slot {
            0 => (0, self.batch * self.dims.h_size()),
            _ => (self.h_len(), self.batch * self.dims.hidden_size),
        };
        before + k * n..before + (k + 1) * n
    }

    pub fn input_len(&self) -> usize {
        self.seq * self.batch * self.dims.input_size
    }

    pub fn output_len(&self) -> usize {
        self.seq * self.batch * self.dims.output_size()
    }

    /// Elements of `h` in the packed state (`[L*D, B, P]`), where `c` begins.
    pub fn h_len(&self) -> usize {
        self.dims.h_shape(self.batch).iter().product()
    }

    pub fn state_len(&self) -> usize {
        self.dims.state_len(self.batch)
    }

    /// The device address of the initial state for a kernel: `base`, or 0 (null: zeros) for a
    /// call given none.
    #[cfg(feature = "cuda")]
    pub fn initial_state(&self, base: u64) -> u64 {
        if self.zero_state {
            0
        } else {
            base
        }
    }

    /// The device address of the state (or its gradient) behind `y` in a packed buffer
    /// `[y | h | c]` of `T` at `base`.
    #[cfg(feature = "cuda")]
    pub fn state_behind_y<T>(&self, base: u64) -> u64 {
        base + (self.output_len() * std::mem::size_of::<T>()) as u64
    }
}

/// Inter-layer dropout of one call, and where the module's seed stood when it was made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Dropout {
    /// Probability of dropping a unit; 0 in inference mode.
    pub p: f32,
    /// The module's seed.
    pub seed: u64,
    /// Calls since the seed was set, this one excluded.
    pub call_index: u64,
    /// How many times the seed was set: a GPU backend restarts its random state from `seed`
    /// when this moves.
    pub generation: u64,
}

impl Dropout {
    /// Whether any unit is dropped.
    pub fn active(&self) -> bool {
        self.p > 0.0
    }

    /// The seed of this call's own masks on the CPU: a fresh stream for every call, the same
    /// streams again after the seed is set again.
    pub fn mask_seed(&self) -> u64 {
        self.seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(self.call_index)
    }
}

/// The dropout seed that a module and its clones share.
#[derive(Debug)]
pub(crate) struct DropoutSeed {
    /// (seed, calls since it was set, times it was set)
    state: Mutex<(u64, u64, u64)>,
}

impl DropoutSeed {
    pub fn new(seed: u64) -> Self {
        Self {
            state: Mutex::new((seed, 0, 0)),
        }
    }

    /// Restarts every mask stream from `seed`.
    pub fn set(&self, seed: u64) {
        self.set_position(seed, 0);
    }

    /// The seed last set and the calls since.
    pub fn position(&self) -> (u64, u64) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (s.0, s.1)
    }

    /// Continues as if `seed` had been set `calls` calls ago; returns the new generation (the
    /// GPU backends' random state is restarted for it).
    pub fn set_position(&self, seed: u64, calls: u64) -> u64 {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *s = (seed, calls, s.2 + 1);
        s.2
    }

    /// The dropout of the next call, with probability `p` (0 for none).
    pub fn next_call(&self, p: f32) -> Dropout {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (seed, call_index, generation) = *s;
        s.1 += 1;
        Dropout {
            p,
            seed,
            call_index,
            generation,
        }
    }
}
