//! The canonical flat weight layout, shared by the CPU path and cuDNN.
//!
//! For every layer `l` and direction `d` (forward first), in this order:
//! `weight_ih` `[G*H, in_l]`, `weight_hh` `[G*H, H]`, then, with bias, `bias_ih` `[G*H]` and
//! (double bias only) `bias_hh` `[G*H]`; `G` is 4 (LSTM, gates i,f,g,o) or 3 (GRU, gates r,z,n), `in_l` is the input
//! size for layer 0 and `D*H` above it. This is PyTorch's parameter order and shapes, and it is
//! also cuDNN's weight space order (checked against `cudnnGetRNNWeightParams` before use).

use crate::RnnMode;

/// Bias vectors of each layer and direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Bias {
    None,
    /// One vector per gate, `bias_ih` (TensorFlow and Keras cells; cuDNN `SINGLE_INP_BIAS`).
    /// For a GRU it adds outside `r ⊙ (W_hn h)`.
    Single,
    /// `bias_ih` and `bias_hh`, as PyTorch (cuDNN `DOUBLE_BIAS`).
    #[default]
    Double,
}

impl Bias {
    /// Bias vectors per layer and direction.
    pub fn count(self) -> usize {
        match self {
            Bias::None => 0,
            Bias::Single => 1,
            Bias::Double => 2,
        }
    }
}

/// The sizes that fix a module's weights and state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RnnDims {
    pub mode: RnnMode,
    pub input_size: usize,
    pub hidden_size: usize,
    pub num_layers: usize,
    pub num_directions: usize,
    pub bias: Bias,
}

/// Which of the four per-layer tensors a parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    WeightIh,
    WeightHh,
    BiasIh,
    BiasHh,
}

/// One named parameter: a slice of the flat buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// PyTorch's name, e.g. `weight_ih_l0_reverse`.
    pub name: String,
    pub layer: usize,
    pub direction: usize,
    pub kind: ParamKind,
    pub offset: usize,
    pub shape: Vec<usize>,
}

impl Param {
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Offsets of the tensors of one layer and direction.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    pub in_size: usize,
    pub w_ih: usize,
    pub w_hh: usize,
    pub b_ih: Option<usize>,
    pub b_hh: Option<usize>,
}

impl RnnDims {
    /// The sizes of a module built with `cfg` (unchecked; [`crate::rnn`] validates them).
    pub fn new(
        mode: RnnMode,
        input_size: usize,
        hidden_size: usize,
        cfg: &crate::RnnConfig,
    ) -> Self {
        Self {
            mode,
            input_size,
            hidden_size,
            num_layers: cfg.num_layers,
            num_directions: cfg.num_directions(),
            bias: cfg.bias_mode(),
        }
    }

    /// Rows of every weight matrix: all gates of one direction stacked.
    pub fn gate_size(&self) -> usize {
        self.mode.gates() * self.hidden_size
    }

    pub fn layer_input_size(&self, layer: usize) -> usize {
        if layer == 0 {
            self.input_size
        } else {
            self.num_directions * self.hidden_size
        }
    }

    /// Features of the output sequence: `D*H`.
    pub fn output_size(&self) -> usize {
        self.num_directions * self.hidden_size
    }

    /// Elements of one layer-direction block.
    fn block_len(&self, layer: usize) -> usize {
        let g = self.gate_size();
        g * (self.layer_input_size(layer) + self.hidden_size + self.bias.count())
    }

    pub fn block(&self, layer: usize, direction: usize) -> Block {
        let before: usize = (0..layer)
            .map(|l| self.num_directions * self.block_len(l))
            .sum::<usize>()
            + direction * self.block_len(layer);
        let g = self.gate_size();
        let in_size = self.layer_input_size(layer);
        let w_hh = before + g * in_size;
        let b_ih = w_hh + g * self.hidden_size;
        Block {
            in_size,
            w_ih: before,
            w_hh,
            b_ih: (self.bias.count() >= 1).then_some(b_ih),
            b_hh: (self.bias.count() == 2).then_some(b_ih + g),
        }
    }

    /// Length of the flat weight buffer.
    pub fn weight_count(&self) -> usize {
        (0..self.num_layers)
            .map(|l| self.num_directions * self.block_len(l))
            .sum()
    }

    /// `(slots, layers*directions, batch, hidden)`: `h` (and `c` for an LSTM) stacked.
    pub fn state_shape(&self, batch: usize) -> (usize, usize, usize, usize) {
        (
            self.mode.state_slots(),
            self.num_layers * self.num_directions,
            batch,
            self.hidden_size,
        )
    }

    /// Every parameter in buffer order, with PyTorch's names and shapes.
    pub fn params(&self) -> Vec<Param> {
        let g = self.gate_size();
        let mut out = Vec::new();
        for layer in 0..self.num_layers {
            for direction in 0..self.num_directions {
                let b = self.block(layer, direction);
                let suffix = if direction == 1 { "_reverse" } else { "" };
                let mut push = |kind, stem: &str, offset, shape: Vec<usize>| {
                    out.push(Param {
                        name: format!("{stem}_l{layer}{suffix}"),
                        layer,
                        direction,
                        kind,
                        offset,
                        shape,
                    })
                };
                push(ParamKind::WeightIh, "weight_ih", b.w_ih, vec![g, b.in_size]);
                push(
                    ParamKind::WeightHh,
                    "weight_hh",
                    b.w_hh,
                    vec![g, self.hidden_size],
                );
                if let Some(b_ih) = b.b_ih {
                    push(ParamKind::BiasIh, "bias_ih", b_ih, vec![g]);
                }
                if let Some(b_hh) = b.b_hh {
                    push(ParamKind::BiasHh, "bias_hh", b_hh, vec![g]);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_tile_the_buffer_in_order() {
        for mode in [RnnMode::Lstm, RnnMode::Gru] {
            for (layers, dirs, bias) in [
                (1, 1, Bias::Double),
                (2, 2, Bias::Single),
                (3, 2, Bias::None),
            ] {
                let dims = RnnDims {
                    mode,
                    input_size: 5,
                    hidden_size: 7,
                    num_layers: layers,
                    num_directions: dirs,
                    bias,
                };
                let mut next = 0;
                for p in dims.params() {
                    assert_eq!(p.offset, next, "{}", p.name);
                    next += p.len();
                }
                assert_eq!(next, dims.weight_count());
            }
        }
    }

    #[test]
    fn sizes_match_pytorch_counts() {
        // nn.LSTM(10, 20, num_layers=2, bidirectional=True): 4*20*(10+20+2) + 4*20*(40+20+2) per direction.
        let dims = RnnDims {
            mode: RnnMode::Lstm,
            input_size: 10,
            hidden_size: 20,
            num_layers: 2,
            num_directions: 2,
            bias: Bias::Double,
        };
        assert_eq!(dims.weight_count(), 2 * (80 * 32 + 80 * 62));
        let names: Vec<_> = dims.params().into_iter().map(|p| p.name).collect();
        assert_eq!(
            names[0..4],
            ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
        );
        assert_eq!(names[4], "weight_ih_l0_reverse");
        assert_eq!(names[15], "bias_hh_l1_reverse");
    }
}
