//! The cells the persistent kernels run, as the Rust side sizes them: each is a header of
//! pointwise steps (`cell_lstm.cuh`, `cell_gru.cuh`) that the recurrences include
//! (`kernel.rs`'s sources), and the numbers here mirror its defines.

use crate::RnnMode;

/// The headers, as the kernels' sources include them (`kernel.rs`).
pub(super) const CELL_LSTM: &str = include_str!("cell_lstm.cuh");
pub(super) const CELL_GRU: &str = include_str!("cell_gru.cuh");

/// What a forward block's units come in multiples of, for every cell (`recurrence_fwd.cu`'s
/// `FwdTile`): 4, where an LSTM's gate rows fill whole 16-row tensor-core tiles and a GRU's leave
/// at most a quarter of its tiles' rows empty. (Whole tiles for a GRU would take 16 units a
/// block: a quarter of the blocks at hidden 512, each with three times the tiles.)
pub(super) const UNIT_STEP: usize = 4;

/// A cell of the persistent kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Cell {
    Lstm,
    Gru,
}

impl Cell {
    /// The cell of a module's mode, if the kernels have it.
    pub fn of(mode: RnnMode) -> Option<Cell> {
        match mode {
            RnnMode::Lstm => Some(Cell::Lstm),
            RnnMode::Gru => Some(Cell::Gru),
            RnnMode::RnnTanh | RnnMode::RnnRelu => None,
        }
    }

    /// Gates per unit (the header's GATES): the rows of W_ih and W_hh a unit owns, the columns
    /// of its gate pre-activations and their gradients.
    pub const fn gates(self) -> usize {
        match self {
            Cell::Lstm => 4,
            Cell::Gru => 3,
        }
    }

    /// Floats per unit and step that a training forward saves for the backward besides the
    /// gate activations (the header's CELL_SAVED: an LSTM's c; a GRU's h and n's recurrent
    /// product).
    pub const fn saved(self) -> usize {
        match self {
            Cell::Lstm => 1,
            Cell::Gru => 2,
        }
    }

    /// Whether the cell has a state c besides h (c_0 and c_n).
    pub const fn has_c(self) -> bool {
        matches!(self, Cell::Lstm)
    }

    /// Whether a gate's recurrent product stays apart from its input's (the header's
    /// SPLIT_GATE: a GRU's n, whose recurrent product the reset gate multiplies): its gradient
    /// then differs on the two sides, and the backward writes the recurrent side's apart.
    pub const fn splits(self) -> bool {
        matches!(self, Cell::Gru)
    }

    /// The wavefront's groups of gate rows: one per gate, and a split gate's second side in one
    /// more, since an upper layer multiplies [input, h] by [W_ih, W_hh] in one product, which
    /// would not keep that gate's two sides apart. Forward, an upper layer's tile has these row
    /// groups (`recurrence_fwd.cu`'s UPPER_GROUPS: the split gate's recurrent rows in the last);
    /// backward, every layer's exchange rows these column groups (`recurrence_bwd.cu`'s XGH:
    /// the split gate's input-side gradient in the last).
    pub const fn wave_groups(self) -> usize {
        self.gates() + self.splits() as usize
    }

    /// Its name in module and kernel names.
    pub fn name(self) -> &'static str {
        match self {
            Cell::Lstm => "lstm",
            Cell::Gru => "gru",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers here are the headers' defines.
    #[test]
    fn the_numbers_mirror_the_headers() {
        for cell in [Cell::Lstm, Cell::Gru] {
            let define = |name: &str| {
                let source = match cell {
                    Cell::Lstm => CELL_LSTM,
                    Cell::Gru => CELL_GRU,
                };
                let line = source
                    .lines()
                    .find(|l| l.starts_with(&format!("#define {name} ")))
                    .unwrap_or_else(|| panic!("{cell:?}: no #define {name}"));
                line.split_whitespace()
                    .nth(2)
                    .unwrap()
                    .parse::<i64>()
                    .unwrap()
            };
            assert_eq!(define("GATES"), cell.gates() as i64, "{cell:?}");
            assert_eq!(define("CELL_SAVED"), cell.saved() as i64, "{cell:?}");
            assert_eq!(define("CELL_HAS_C"), i64::from(cell.has_c()), "{cell:?}");
            assert_eq!(define("SPLIT_GATE") >= 0, cell.splits(), "{cell:?}");
        }
    }

    #[test]
    fn units_leave_at_most_a_quarter_of_the_tiles_empty() {
        // An LSTM's 4 gate rows a unit fill whole tiles; a GRU's 3 leave at most a quarter of
        // a block's tile rows empty.
        assert_eq!(Cell::Lstm.gates() * UNIT_STEP % 16, 0);
        for units in (1..=64).map(|k| k * UNIT_STEP) {
            let rows = Cell::Gru.gates() * units;
            let tiled = rows.div_ceil(16) * 16;
            assert!(4 * (tiled - rows) <= tiled, "{units} units");
        }
    }
}
