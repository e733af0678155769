//! The cell the persistent kernels run, as the Rust side sizes it: the LSTM's, whose pointwise
//! steps are `cell_lstm.cuh`.

/// Gates per unit (`cell_lstm.cuh`'s GATES): the rows of W_ih and W_hh a unit owns, the columns
/// of its gate pre-activations and their gradients.
pub(super) const GATES: usize = 4;

/// What a forward block's units come in multiples of: their GATES rows each fill whole 16-row
/// tensor-core tiles (`lstm_fwd.cu`'s `FwdTile`).
pub(super) const UNIT_STEP: usize = 16 / gcd(16, GATES);

const fn gcd(a: usize, b: usize) -> usize {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}

// A forward block's rows fill whole tiles.
const _: () = assert!((GATES * UNIT_STEP) % 16 == 0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_come_in_whole_tiles_of_gate_rows() {
        assert_eq!(
            UNIT_STEP, 4,
            "the LSTM's 4 gate rows a unit: 4 units a tile"
        );
        // A cell of 3 gates (a GRU's) needs 16 units for whole tiles, of 2 gates 8.
        assert_eq!(16 / gcd(16, 3), 16);
        assert_eq!(16 / gcd(16, 2), 8);
    }
}
