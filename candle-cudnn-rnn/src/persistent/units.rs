//! The recurrences of a call, one kernel launch each: a layer's, or each direction of a
//! bidirectional layer. The kernels run one direction forward in time; a bidirectional layer runs
//! its directions side by side where both grids fit on the GPU at once (the reverse one on a side
//! stream, each in exchange buffers of its own), else one after the other, the reverse one on the
//! layer's input flipped in time (`Order::Flipped`), and the two outputs go into their columns of
//! the layer's `[T, B, 2H]` output, the reverse one flipped back. Its backward splits the layer's
//! output gradient the same way and adds the reverse direction's input gradient back in time
//! order (`backward.rs`).

use super::kernel::Pass;
use super::padded::Order;
use super::plan::Plan;
use crate::layout::{Block, RnnDims};

/// The side stream (`side::Fork`) that a reverse direction's recurrence runs on beside the
/// forward one's: not the first, which takes the training forward's transposes (`transposed`).
pub(super) const REVERSE_SIDE: usize = 1;

/// A call's units: `directions` per layer, unit `layer * directions + direction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Units {
    pub directions: usize,
    /// Units in all: layers times directions.
    pub count: usize,
    /// With two directions, buffers of the units' own outputs `[T, B, H]`: every unit's in
    /// training (the backward's h_{t-1}), one a direction in inference (each layer's in turn,
    /// once they are in the layer's output).
    pub outputs: usize,
}

impl Units {
    /// The units of a call of a module of `dims`, in training (`train`) or inference.
    pub fn of(dims: &RnnDims, train: bool) -> Self {
        let directions = dims.num_directions;
        let count = dims.num_layers * directions;
        let outputs = match (directions, train) {
            (1, _) => 0,
            (_, true) => count,
            (_, false) => directions,
        };
        Units {
            directions,
            count,
            outputs,
        }
    }

    pub fn bidirectional(&self) -> bool {
        self.directions > 1
    }

    /// Every unit as `(layer, direction)`, layer by layer from the lowest (the forward's order)
    /// or, `top_first`, from the top (the backward's), each layer's directions in turn.
    pub fn each(&self, top_first: bool) -> impl Iterator<Item = (usize, usize)> {
        let (layers, directions) = (self.count / self.directions, self.directions);
        let layer = move |i: usize| if top_first { layers - 1 - i } else { i };
        (0..layers).flat_map(move |i| (0..directions).map(move |d| (layer(i), d)))
    }

    /// The unit of `layer`'s `direction`, which indexes the buffers kept per unit.
    pub fn index(&self, layer: usize, direction: usize) -> usize {
        layer * self.directions + direction
    }

    /// The buffer of `layer`'s `direction`'s own output (two directions only).
    pub fn output(&self, layer: usize, direction: usize) -> usize {
        match self.outputs == self.count {
            true => self.index(layer, direction),
            false => direction,
        }
    }

    /// Whether a bidirectional layer's two recurrences of `pass` on `plan` may run side by side,
    /// the reverse one on a side stream ([`REVERSE_SIDE`]), unless the tuning says not
    /// (`allowed`): not on scaled f16 operands (one scratch buffer a call, `f16_scaled`). They do
    /// where both grids fit on the GPU at once besides (`launch::Launch::fits_twice`), so that
    /// neither's blocks wait for the other's to leave (each grid's barrier needs every block of
    /// its own resident). One direction's recurrence leaves most of the GPU idle at small sizes:
    /// side by side, graphed training at hidden 128 and batch 32 took 0.74x the time of one
    /// direction after the other (`results/2026-12-02-h200-side-by-side/`).
    pub fn side_by_side(&self, plan: &Plan, pass: Pass, allowed: bool) -> bool {
        allowed && self.bidirectional() && !plan.pass_scaled(pass)
    }

    /// Where unit `unit`'s weights sit in the flat buffer of `dims`.
    pub fn block(&self, dims: &RnnDims, unit: usize) -> Block {
        dims.block(unit / self.directions, unit % self.directions)
    }

    /// The order in which `direction` of a call of `batch` samples meets the steps: the reverse
    /// direction's (1) flipped.
    pub fn order(direction: usize, batch: usize) -> Order {
        match direction {
            0 => Order::Same,
            _ => Order::Flipped { batch },
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::{RnnConfig, RnnMode};

    /// An LSTM's sizes (input 24, hidden 16) of `layers`, `bidirectional` or not.
    pub(in crate::persistent) fn dims(layers: usize, bidirectional: bool) -> RnnDims {
        let cfg = RnnConfig {
            num_layers: layers,
            bidirectional,
            ..Default::default()
        };
        RnnDims::new(RnnMode::Lstm, 24, 16, &cfg)
    }

    #[test]
    fn one_direction_has_a_unit_a_layer_and_no_outputs_of_its_own() {
        let units = Units::of(&dims(3, false), true);
        assert_eq!((units.count, units.outputs), (3, 0));
        assert!(!units.bidirectional());
        assert_eq!(units.index(2, 0), 2);
    }

    #[test]
    fn two_directions_keep_every_output_in_training_and_one_a_direction_in_inference() {
        let d = dims(3, true);
        let train = Units::of(&d, true);
        assert_eq!((train.count, train.outputs), (6, 6));
        assert_eq!(train.index(1, 1), 3);
        assert_eq!(train.output(2, 1), 5);
        let infer = Units::of(&d, false);
        assert_eq!(infer.outputs, 2);
        assert_eq!([infer.output(2, 0), infer.output(2, 1)], [0, 1]);
        // Unit 3 is layer 1's reverse direction.
        assert_eq!(train.block(&d, 3).w_ih, d.block(1, 1).w_ih);
        assert_eq!(train.block(&d, 3).in_size, 32);
        assert_eq!(Units::order(1, 7), Order::Flipped { batch: 7 });
        assert_eq!(Units::order(0, 7), Order::Same);
        // Lowest layer first for the forward, the top first for the backward.
        let forward: Vec<_> = Units::of(&dims(2, true), true).each(false).collect();
        assert_eq!(forward, [(0, 0), (0, 1), (1, 0), (1, 1)]);
        let backward: Vec<_> = Units::of(&dims(2, true), true).each(true).collect();
        assert_eq!(backward, [(1, 0), (1, 1), (0, 0), (0, 1)]);
        let one: Vec<_> = Units::of(&dims(3, false), false).each(true).collect();
        assert_eq!(one, [(2, 0), (1, 0), (0, 0)]);
    }

    #[test]
    fn directions_may_run_side_by_side_unless_turned_off_or_scaled() {
        use crate::persistent::cell::Cell;
        let two = Units::of(&dims(1, true), true);
        let plan = Plan::example(Cell::Lstm, 128, 32);
        for pass in [Pass::Forward, Pass::Backward] {
            assert!(two.side_by_side(&plan, pass, true));
            // Not where the tuning says not, nor for one direction.
            assert!(!two.side_by_side(&plan, pass, false));
            let one = Units::of(&dims(2, false), true);
            assert!(!one.side_by_side(&plan, pass, true));
        }
        // Scaled f16 operands (a TF32 forward) share one scratch buffer a call.
        let scaled = Plan {
            scaled: true,
            ..plan
        };
        assert!(!two.side_by_side(&scaled, Pass::Forward, true));
        assert!(two.side_by_side(&scaled, Pass::Backward, true));
    }
}
