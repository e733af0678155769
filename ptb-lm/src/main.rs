//! `ptb-lm`: the PTB word-level LSTM language models of the TensorFlow tutorial and Zaremba et
//! al. (2014), trained on candle with the fused cuDNN LSTM op.

mod checkpoint;
mod cli;
mod config;
mod data;
mod gpu;
mod model;
mod optim;
mod train;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A CPU training step allocates and frees tensors of many megabytes; by default glibc maps
/// such blocks fresh and hands them back to the kernel, so every step faults its memory in
/// anew, a large share of a small-config step on two cores. Keep them in the heap instead.
fn keep_large_allocations() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only adjusts allocator thresholds; called before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

#[derive(Parser)]
#[command(name = "ptb-lm", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Train a small, medium or large model, printing perplexity and words per second
    Train(Box<cli::train::TrainArgs>),
    /// Perplexity of a checkpoint on the valid or test split.
    Eval(cli::eval::EvalArgs),
    /// Sample text from a checkpoint.
    Generate(cli::eval::GenerateArgs),
    /// Time training steps: ms per batch and words per second.
    Bench(cli::bench::BenchArgs),
    /// Draw train and valid perplexity per epoch from metrics files.
    Plot(cli::plot::PlotArgs),
    /// Load one of candle's CUDA modules so that the driver compiles it into its cache (ptb-lm
    /// starts these itself: `gpu::driver_cache`).
    #[command(hide = true)]
    FillDriverCache(gpu::driver_cache::FillArgs),
}

/// Errors print as one line, `Error: what failed: why`, without a backtrace unless
/// `RUST_LIB_BACKTRACE=1` asks for one (`RUST_BACKTRACE=1` alone still gives panics theirs, so a
/// shell that always sets it does not make every ordinary error look like a crash).
fn quiet_error_backtraces() {
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
}

fn report(e: &anyhow::Error) -> ExitCode {
    // A run stopped by Ctrl-C or SIGTERM saved its checkpoint: not an error.
    if let Some(stopped) = e.downcast_ref::<train::interrupt::Stopped>() {
        eprintln!("ptb-lm: {stopped}");
        return ExitCode::from(130);
    }
    eprintln!("Error: {e:#}");
    if e.backtrace().status() == std::backtrace::BacktraceStatus::Captured {
        eprintln!("\nBacktrace:\n{}", e.backtrace());
    }
    // Bad command-line values exit like clap's own usage errors.
    match e.downcast_ref::<config::ranges::UsageError>() {
        Some(_) => ExitCode::from(2),
        None => ExitCode::FAILURE,
    }
}

fn main() -> ExitCode {
    keep_large_allocations();
    quiet_error_backtraces();
    // cuBLAS (also inside cuDNN's RNN) may otherwise reduce in a varying order; with this
    // workspace setting a seed fixes a GPU run bit for bit, so --resume equals an
    // uninterrupted run there too. Set before any CUDA library starts.
    if std::env::var_os("CUBLAS_WORKSPACE_CONFIG").is_none() {
        std::env::set_var("CUBLAS_WORKSPACE_CONFIG", ":4096:8");
    }
    let done = match Cli::parse().command {
        Command::Train(a) => cli::train::train(*a),
        Command::Eval(a) => cli::eval::eval(a),
        Command::Generate(a) => cli::eval::generate(a),
        Command::Bench(a) => cli::bench::bench(a),
        Command::Plot(a) => cli::plot::plot(a),
        Command::FillDriverCache(a) => gpu::driver_cache::fill(a),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::driver_cache::CandleModule;
    use clap::{CommandFactory, ValueEnum};

    /// What the parent starts its children with parses back to the same module and GPU, and
    /// the subcommand stays out of the help.
    #[test]
    fn fill_driver_cache_parses_and_is_hidden() {
        for &m in CandleModule::value_variants() {
            let cli = Cli::try_parse_from(
                std::iter::once("ptb-lm".to_owned()).chain(gpu::driver_cache::child_args(m, 2)),
            )
            .unwrap();
            match cli.command {
                Command::FillDriverCache(a) => assert_eq!((a.module, a.device), (m, 2)),
                _ => panic!("{} parsed as another command", m.name()),
            }
        }
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|_| ());
        assert!(parse(&["ptb-lm", "fill-driver-cache", "conv", "--device", "0"]).is_err());
        assert!(parse(&["ptb-lm", "fill-driver-cache", "binary"]).is_err());
        let help = Cli::command().render_help().to_string();
        assert!(
            help.contains("bench") && !help.contains("fill-driver-cache"),
            "{help}"
        );
    }
}
