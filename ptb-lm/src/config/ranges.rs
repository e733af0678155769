//! The accepted range of every numeric flag, in one place: clap value parsers, so a bad value
//! is a usage error that names the flag and exits with 2 before anything runs, and
//! [`UsageError`] for the checks that need the data or several flags together.

use std::fmt;

/// A bad command-line value found after parsing (it needs the data, or several flags): `main`
/// prints it like any error and exits with 2, as clap does for its own.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Ends with a [`UsageError`] unless `ok`.
pub fn usage(ok: bool, message: impl FnOnce() -> String) -> anyhow::Result<()> {
    if ok {
        Ok(())
    } else {
        Err(UsageError(message()).into())
    }
}

fn int_in(s: &str, lo: usize, hi: usize) -> Result<usize, String> {
    let range = || format!("a whole number from {lo} to {hi}");
    let v: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("expected {}", range()))?;
    if v < lo || v > hi {
        return Err(format!("must be {}", range()));
    }
    Ok(v)
}

/// The accepted range of each whole-number setting, for the flags and for `LmConfig::validate`.
pub const COUNT: (usize, usize) = (1, 1 << 30);
pub const EPOCHS: (usize, usize) = (1, 100_000);
pub const HIDDEN_SIZE: (usize, usize) = (1, 16_384);
pub const NUM_LAYERS: (usize, usize) = (1, 64);
pub const NUM_STEPS: (usize, usize) = (1, 10_000);
pub const BATCH_SIZE: (usize, usize) = (1, 100_000);
/// At least `<unk>` and one word.
pub const VOCAB_SIZE: (usize, usize) = (2, 10_000_000);

/// clap parsers of whole numbers in a range, one per kind of flag.
macro_rules! whole_number_parsers {
    ($($(#[$doc:meta])* $name:ident: $range:expr;)*) => {
        $( $(#[$doc])* pub fn $name(s: &str) -> Result<usize, String> {
            int_in(s, $range.0, $range.1)
        } )*
    };
}

whole_number_parsers! {
    /// Counts of epochs, batches and words: at least 1.
    count: COUNT;
    /// Warm-up steps: 0 or more.
    count_or_zero: (0, COUNT.1);
    /// Epochs at the initial learning rate: 0 (decay from the second epoch on) or more.
    epochs_or_zero: (0, EPOCHS.1);
    /// Epochs of a whole run.
    epochs: EPOCHS;
    hidden_size: HIDDEN_SIZE;
    num_layers: NUM_LAYERS;
    num_steps: NUM_STEPS;
    batch_size: BATCH_SIZE;
    vocab_size: VOCAB_SIZE;
}

fn float(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| "expected a number".to_owned())?;
    if !v.is_finite() {
        return Err("must be a finite number".into());
    }
    Ok(v)
}

/// Learning rate, initial weight scale, gradient norm bound, sampling temperature: > 0.
pub fn positive(s: &str) -> Result<f64, String> {
    let v = float(s)?;
    if v <= 0.0 {
        return Err("must be greater than 0".into());
    }
    Ok(v)
}

/// A span of minutes: 0 or more.
pub fn minutes(s: &str) -> Result<f64, String> {
    let v = float(s)?;
    if v < 0.0 {
        return Err("must be 0 or more".into());
    }
    Ok(v)
}

/// A keep probability or a decay factor: in (0, 1].
pub fn fraction(s: &str) -> Result<f64, String> {
    let v = float(s)?;
    if v <= 0.0 || v > 1.0 {
        return Err("must be greater than 0 and at most 1".into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_accept_their_bounds_and_refuse_beyond() {
        assert_eq!(count("1"), Ok(1));
        assert!(count("0").unwrap_err().contains("from 1"));
        assert!(count("-3").unwrap_err().contains("expected a whole number"));
        assert_eq!(count_or_zero("0"), Ok(0));
        assert_eq!(vocab_size("2"), Ok(2));
        assert!(vocab_size("1").is_err());
        assert_eq!(positive("1e-300"), Ok(1e-300));
        for bad in ["0", "-1", "nan", "inf", "x"] {
            assert!(positive(bad).is_err(), "{bad}");
        }
        assert_eq!(fraction("1"), Ok(1.0));
        for bad in ["0", "-1", "1.0001", "NaN"] {
            assert!(fraction(bad).is_err(), "{bad}");
        }
    }
}
