//! The recurrent state a module returns and takes back: `h` (and an LSTM's `c`) in the one
//! packed tensor the op reads and writes.

use candle_core::{bail, Result, Tensor};

/// The recurrent state: `h` (and `c` for an LSTM) in one tensor, the layout the op reads and
/// writes, so a final state feeds the next call without a copy: stacked `[S, L*D, B, H]`, or
/// flat `[h | c]` with an LSTM projection, where `h` has `P` features and `c` has `H`.
#[derive(Clone, Debug)]
pub struct RnnState {
    packed: Tensor,
    /// The shapes of `h` and `c`, when known (not for a flat tensor given to `from_packed`).
    shapes: Option<([usize; 3], Option<[usize; 3]>)>,
}

impl RnnState {
    /// From PyTorch-shaped `h` `[L*D, B, P]` and, for an LSTM, `c` `[L*D, B, H]`.
    pub fn new(h: &Tensor, c: Option<&Tensor>) -> Result<Self> {
        let shape3 = |t: &Tensor, what: &str| -> Result<[usize; 3]> {
            match t.dims() {
                &[a, b, c] => Ok([a, b, c]),
                d => bail!("rnn: {what} must be [layers*directions, batch, features], got {d:?}"),
            }
        };
        let h_shape = shape3(h, "h")?;
        let c_shape = c.map(|c| shape3(c, "c")).transpose()?;
        let packed = match c {
            None => h.unsqueeze(0)?,
            Some(c) if c.dims() == h.dims() => Tensor::stack(&[h, c], 0)?,
            Some(c) => Tensor::cat(&[h.flatten_all()?, c.flatten_all()?], 0)?,
        };
        Ok(Self::with_shapes(packed, h_shape, c_shape))
    }

    pub(crate) fn with_shapes(packed: Tensor, h: [usize; 3], c: Option<[usize; 3]>) -> Self {
        Self {
            packed,
            shapes: Some((h, c)),
        }
    }

    /// From a packed tensor as [`RnnState::packed`] returns it. A stacked `[S, L*D, B, H]` one
    /// knows its `h` and `c`; a flat one (projection) only feeds a module, which checks its size.
    pub fn from_packed(packed: Tensor) -> Self {
        let shapes = match packed.dims() {
            &[s, ld, b, h] => Some(([ld, b, h], (s == 2).then_some([ld, b, h]))),
            _ => None,
        };
        Self { packed, shapes }
    }

    /// The one tensor the op reads and writes (see [`RnnState`]).
    pub fn packed(&self) -> &Tensor {
        &self.packed
    }

    fn known_shapes(&self) -> Result<([usize; 3], Option<[usize; 3]>)> {
        self.shapes.ok_or_else(|| {
            candle_core::Error::Msg(
                "rnn: this state came from a flat packed tensor, whose h and c sizes are \
                 unknown; build it with RnnState::new"
                    .into(),
            )
        })
    }

    /// The hidden state `[layers*directions, batch, P]` (PyTorch's `h_n`).
    pub fn h(&self) -> Result<Tensor> {
        let (h, _) = self.known_shapes()?;
        match self.packed.rank() {
            4 => self.packed.get(0),
            _ => self
                .packed
                .narrow(0, 0, h.iter().product())?
                .reshape(h.to_vec()),
        }
    }

    /// The cell state of an LSTM; `None` otherwise.
    pub fn c(&self) -> Result<Option<Tensor>> {
        let (h, c) = self.known_shapes()?;
        let Some(c) = c else { return Ok(None) };
        Ok(Some(match self.packed.rank() {
            4 => self.packed.get(1)?,
            _ => {
                let start: usize = h.iter().product();
                self.packed
                    .narrow(0, start, c.iter().product())?
                    .reshape(c.to_vec())?
            }
        }))
    }

    /// The same values, cut from the graph (truncated back-propagation through time).
    pub fn detach(&self) -> Self {
        Self {
            packed: self.packed.detach(),
            shapes: self.shapes,
        }
    }
}
