//! The canonical flat weight layout, shared by the CPU path and cuDNN: cuDNN's own weight
//! space order, so that the weight tensor is handed to cuDNN in place.
//!
//! First the matrices of every layer `l` and direction `d` (forward first): `weight_ih`
//! `[G*H, in_l]`, `weight_hh` `[G*H, P]` and, with an LSTM projection, `weight_hr` `[P, H]`;
//! then their biases in the same order: `bias_ih` `[G*H]` and (double bias) `bias_hh` `[G*H]`.
//! `G` is 4 (LSTM, gates i,f,g,o), 3 (GRU, gates r,z,n) or 1 (plain RNN); `P` is the
//! projection size, or `H` without one; `in_l` is the input size for layer 0 and `D*P` above
//! it. Shapes and names are PyTorch's. cuDNN's layout is checked against this one
//! (`cudnnGetRNNWeightParams`) at first use; a cuDNN that differs gets a per-call copy.

pub use crate::config::Bias;
use crate::config::{RnnConfig, RnnMode};

/// The sizes that fix a module's weights and state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RnnDims {
    /// The cell.
    pub mode: RnnMode,
    /// Features of the input sequence.
    pub input_size: usize,
    /// Features of each gate, and of `h` and `c` without a projection.
    pub hidden_size: usize,
    /// Stacked layers.
    pub num_layers: usize,
    /// 1, or 2 when bidirectional.
    pub num_directions: usize,
    /// The bias vectors of each layer and direction.
    pub bias: Bias,
    /// LSTM projection size; 0 for none.
    pub proj_size: usize,
}

/// Which of the per-layer tensors a parameter is, in PyTorch's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ParamKind {
    /// `weight_ih`: the input's weights `[G*H, in]`.
    WeightIh,
    /// `weight_hh`: the recurrent weights `[G*H, P]`.
    WeightHh,
    /// `bias_ih` `[G*H]` (the only bias with [`Bias::Single`]).
    BiasIh,
    /// `bias_hh` `[G*H]`.
    BiasHh,
    /// The LSTM projection `[P, H]`.
    WeightHr,
}

/// One named parameter: a slice of the flat buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// PyTorch's name, e.g. `weight_ih_l0_reverse`.
    pub name: String,
    /// The layer it belongs to, from 0.
    pub layer: usize,
    /// 0 forward, 1 reverse.
    pub direction: usize,
    /// Which tensor of the layer-direction it is.
    pub kind: ParamKind,
    /// Its first element in the flat buffer.
    pub offset: usize,
    /// PyTorch's shape.
    pub shape: Vec<usize>,
}

impl Param {
    /// Elements in the parameter.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it has no elements (never, for a valid module).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Offsets of the tensors of one layer and direction.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    /// Input features of this layer.
    pub in_size: usize,
    /// Offset of `weight_ih`.
    pub w_ih: usize,
    /// Offset of `weight_hh`.
    pub w_hh: usize,
    /// Offset of `bias_ih`, if any.
    pub b_ih: Option<usize>,
    /// Offset of `bias_hh`, if any.
    pub b_hh: Option<usize>,
    /// Offset of the projection `weight_hr`, if any.
    pub w_hr: Option<usize>,
}

impl RnnDims {
    /// The sizes of a module built with `cfg` (unchecked; the layer validates them).
    pub fn new(mode: RnnMode, input_size: usize, hidden_size: usize, cfg: &RnnConfig) -> Self {
        Self {
            mode,
            input_size,
            hidden_size,
            num_layers: cfg.num_layers,
            num_directions: cfg.num_directions(),
            bias: cfg.bias_mode(),
            proj_size: cfg.proj_size,
        }
    }

    /// Rows of every weight matrix: all gates of one direction stacked.
    pub fn gate_size(&self) -> usize {
        self.mode.gates() * self.hidden_size
    }

    /// Features of `h` and of each direction's output: the projection size, or `H`.
    pub fn h_size(&self) -> usize {
        if self.proj_size > 0 {
            self.proj_size
        } else {
            self.hidden_size
        }
    }

    /// Input features of `layer`: the input's for layer 0, the outputs below for the others.
    pub fn layer_input_size(&self, layer: usize) -> usize {
        if layer == 0 {
            self.input_size
        } else {
            self.num_directions * self.h_size()
        }
    }

    /// Features of the output sequence: `D*P` (`D*H` without projection).
    pub fn output_size(&self) -> usize {
        self.num_directions * self.h_size()
    }

    /// Matrix elements of one layer-direction.
    fn matrices_len(&self, layer: usize) -> usize {
        self.gate_size() * (self.layer_input_size(layer) + self.h_size())
            + self.proj_size * self.hidden_size
    }

    /// Matrix elements of the layers below `layer`.
    fn matrices_before(&self, layer: usize) -> usize {
        (0..layer)
            .map(|l| self.num_directions * self.matrices_len(l))
            .sum()
    }

    /// Where the tensors of one layer and direction sit in the flat buffer.
    pub fn block(&self, layer: usize, direction: usize) -> Block {
        let g = self.gate_size();
        let in_size = self.layer_input_size(layer);
        let w_ih = self.matrices_before(layer) + direction * self.matrices_len(layer);
        let w_hh = w_ih + g * in_size;
        let k = layer * self.num_directions + direction;
        let b_ih = self.matrices_before(self.num_layers) + k * g * self.bias.count();
        Block {
            in_size,
            w_ih,
            w_hh,
            b_ih: (self.bias.count() >= 1).then_some(b_ih),
            b_hh: (self.bias.count() == 2).then_some(b_ih + g),
            w_hr: (self.proj_size > 0).then_some(w_hh + g * self.h_size()),
        }
    }

    /// Length of the flat weight buffer.
    pub fn weight_count(&self) -> usize {
        let directions = self.num_layers * self.num_directions;
        self.matrices_before(self.num_layers) + directions * self.gate_size() * self.bias.count()
    }

    /// `[layers*directions, batch, features]` of `h`.
    pub fn h_shape(&self, batch: usize) -> [usize; 3] {
        [self.num_layers * self.num_directions, batch, self.h_size()]
    }

    /// `[layers*directions, batch, hidden]` of an LSTM's `c`.
    pub fn c_shape(&self, batch: usize) -> Option<[usize; 3]> {
        (self.mode == RnnMode::Lstm).then_some([
            self.num_layers * self.num_directions,
            batch,
            self.hidden_size,
        ])
    }

    /// Elements of the packed state `[h | c]`.
    pub fn state_len(&self, batch: usize) -> usize {
        let n = |s: [usize; 3]| s.iter().product::<usize>();
        n(self.h_shape(batch)) + self.c_shape(batch).map_or(0, n)
    }

    /// The shape of the packed state: `[S, L*D, B, H]` (`h`, and `c` for an LSTM, stacked), or
    /// flat `[state_len]` with a projection, where `h` and `c` differ in size.
    pub fn state_shape(&self, batch: usize) -> Vec<usize> {
        if self.proj_size > 0 {
            vec![self.state_len(batch)]
        } else {
            let [ld, b, h] = self.h_shape(batch);
            vec![self.mode.state_slots(), ld, b, h]
        }
    }

    /// Every parameter in buffer order (matrices, then biases), with PyTorch's names and
    /// shapes. Sort by `(layer, direction, kind)` for PyTorch's `state_dict` order.
    pub fn params(&self) -> Vec<Param> {
        let g = self.gate_size();
        let mut out = Vec::new();
        for biases in [false, true] {
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
                    if biases {
                        if let Some(b_ih) = b.b_ih {
                            push(ParamKind::BiasIh, "bias_ih", b_ih, vec![g]);
                        }
                        if let Some(b_hh) = b.b_hh {
                            push(ParamKind::BiasHh, "bias_hh", b_hh, vec![g]);
                        }
                        continue;
                    }
                    push(ParamKind::WeightIh, "weight_ih", b.w_ih, vec![g, b.in_size]);
                    push(
                        ParamKind::WeightHh,
                        "weight_hh",
                        b.w_hh,
                        vec![g, self.h_size()],
                    );
                    if let Some(w_hr) = b.w_hr {
                        let shape = vec![self.proj_size, self.hidden_size];
                        push(ParamKind::WeightHr, "weight_hr", w_hr, shape);
                    }
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
                    proj_size: 0,
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
            proj_size: 0,
        };
        assert_eq!(dims.weight_count(), 2 * (80 * 32 + 80 * 62));
        let names: Vec<_> = dims.params().into_iter().map(|p| p.name).collect();
        assert_eq!(
            names[0..4],
            [
                "weight_ih_l0",
                "weight_hh_l0",
                "weight_ih_l0_reverse",
                "weight_hh_l0_reverse"
            ]
        );
        assert_eq!(names[8], "bias_ih_l0");
        assert_eq!(names[15], "bias_hh_l1_reverse");

        // nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5).
        let dims = RnnDims {
            proj_size: 5,
            ..dims
        };
        let per_dir = |input: usize| 80 * (input + 5 + 2) + 5 * 20;
        assert_eq!(dims.weight_count(), 2 * (per_dir(10) + per_dir(10)));
        let p = dims.params();
        assert_eq!(
            (p[2].name.as_str(), p[2].shape.clone()),
            ("weight_hr_l0", vec![5, 20])
        );
        assert_eq!(p[4].shape, vec![80, 5], "weight_hh_l0_reverse");
        assert_eq!(p[6].shape, vec![80, 10], "weight_ih_l1 takes D*P inputs");
        assert_eq!(dims.state_shape(3), vec![4 * 3 * (5 + 20)]);
    }
}
