//! Changes to the persistent path that are written but not yet checked on a GPU, each off
//! until `CANDLE_RNN_PERSISTENT_TRY` names it (a comma-separated list), so that one build can
//! be checked and timed with and without each. A trial that passes becomes the code and
//! leaves this list; one that does not leaves the code.

use std::sync::OnceLock;

/// The trials turned on for this process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Trials {
    /// `bias`: the backward kernel sums each unit's bias gradient over the steps and the batch
    /// (in f32, in a fixed order) and writes it, instead of one matrix-vector product per bias
    /// after the kernel.
    pub bias_in_kernel: bool,
    /// `dw-direct`: the weight gradients' products write their 1500-wide (say) rows straight
    /// into the weight's gradient, from padded operands, instead of into padded rows that a
    /// row kernel then copies or adds into place.
    pub dw_direct: bool,
    /// `dx-direct`: the same for the input gradients' products (from the padded input weight).
    pub dx_direct: bool,
    /// `padded-y`: the training forward also writes h_0 and every output in padded rows, which
    /// the backward's recurrent-weight product reads instead of copying them there itself.
    pub padded_y: bool,
    /// `poll`: the forward recurrence without a grid barrier, each block waiting for the
    /// pieces of h it reads to be written (`lstm_fwd.cu`'s POLL); forward clusters of 1 only.
    pub poll: bool,
    /// `fast-gates`: both recurrences' tanh and sigmoid through the hardware's approximate tanh
    /// (`common.cuh`'s FAST_GATES).
    pub fast_gates: bool,
}

/// The trials `CANDLE_RNN_PERSISTENT_TRY` names, read once; unknown names are ignored.
pub(crate) fn trials() -> Trials {
    static TRIALS: OnceLock<Trials> = OnceLock::new();
    *TRIALS.get_or_init(|| parse(&std::env::var("CANDLE_RNN_PERSISTENT_TRY").unwrap_or_default()))
}

fn parse(list: &str) -> Trials {
    let on = |name: &str| list.split(',').any(|t| t.trim() == name);
    Trials {
        bias_in_kernel: on("bias"),
        dw_direct: on("dw-direct"),
        dx_direct: on("dx-direct"),
        padded_y: on("padded-y"),
        poll: on("poll"),
        fast_gates: on("fast-gates"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_turn_trials_on() {
        assert_eq!(parse(""), Trials::default());
        let all = parse("dw-direct, bias,poll,fast-gates,dx-direct,padded-y");
        let on = [
            all.bias_in_kernel,
            all.dw_direct,
            all.dx_direct,
            all.padded_y,
            all.poll,
        ];
        assert!(on.iter().all(|&t| t) && all.fast_gates);
        let one = parse("bias,unknown");
        assert_eq!(
            one,
            Trials {
                bias_in_kernel: true,
                ..Trials::default()
            }
        );
    }
}
