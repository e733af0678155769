//! Progress of one pass over a split. On a terminal: a bar as wide as the terminal, with the
//! running perplexity, words per second and the time left, redrawn about once a second.
//! Without one (piped, or under a scheduler): a plain line at every tenth of the pass, or every
//! 30 seconds when a tenth takes longer. The pass reads its running loss (which waits for the
//! device) only when [`Progress::due`] says a refresh is due.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

const TERMINAL_EVERY: Duration = Duration::from_secs(1);
const LOG_EVERY: Duration = Duration::from_secs(30);

enum Sink {
    Bar(ProgressBar),
    Lines,
    Hidden,
}

pub struct Progress {
    sink: Sink,
    label: String,
    total: usize,
    start: Instant,
    last: Instant,
    /// Tenths of the pass already reported in plain lines.
    tenths: usize,
}

impl Progress {
    /// Progress of `total` batches of a pass named `label` ("epoch 3", "valid 3", "test"), on
    /// standard error.
    pub fn new(label: &str, total: usize) -> Self {
        let sink = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total as u64).with_prefix(label.to_owned());
            bar.set_style(
                ProgressStyle::with_template("{prefix} [{wide_bar}] {pos}/{len} {msg} eta {eta}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            Sink::Bar(bar)
        } else {
            Sink::Lines
        };
        Self::with_sink(sink, label, total)
    }

    /// Shows nothing (tests, and passes whose caller reports on its own).
    pub fn hidden() -> Self {
        Self::with_sink(Sink::Hidden, "", 0)
    }

    fn with_sink(sink: Sink, label: &str, total: usize) -> Self {
        let now = Instant::now();
        Self {
            sink,
            label: label.to_owned(),
            total,
            start: now,
            last: now,
            tenths: 0,
        }
    }

    /// Whether the numbers after `done` batches should be shown now.
    pub fn due(&self, done: usize) -> bool {
        match self.sink {
            Sink::Bar(_) => self.last.elapsed() >= TERMINAL_EVERY,
            Sink::Lines => {
                done * 10 / self.total.max(1) > self.tenths || self.last.elapsed() >= LOG_EVERY
            }
            Sink::Hidden => false,
        }
    }

    /// Shows the pass after `done` batches, its running perplexity and speed.
    pub fn show(&mut self, done: usize, perplexity: f64, words_per_second: f64) {
        self.last = Instant::now();
        match &self.sink {
            Sink::Bar(bar) => {
                bar.set_position(done as u64);
                bar.set_message(format!("ppl {perplexity:.2} {words_per_second:.0} w/s"));
            }
            Sink::Lines => {
                self.tenths = done * 10 / self.total.max(1);
                let elapsed = self.start.elapsed().as_secs_f64();
                let left =
                    elapsed / done.max(1) as f64 * (self.total - done.min(self.total)) as f64;
                eprintln!(
                    "{}: {}% ({done}/{} batches), perplexity {perplexity:.2}, {words_per_second:.0} \
                     words/s, {} left",
                    self.label,
                    100 * done / self.total.max(1),
                    self.total,
                    duration(left)
                );
            }
            Sink::Hidden => {}
        }
    }

    /// Removes the bar (the caller prints the pass's result line).
    pub fn finish(self) {
        if let Sink::Bar(bar) = self.sink {
            bar.finish_and_clear();
        }
    }
}

/// `1h 02m`, `3m 05s`, `12s`.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s:02}s"),
        (h, m, _) => format!("{h}h {m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_come_at_every_tenth() {
        let mut p = Progress::with_sink(Sink::Lines, "epoch 1", 100);
        let shown: Vec<usize> = (1..=100)
            .filter(|&done| {
                let due = p.due(done);
                if due {
                    p.show(done, 1.0, 1.0);
                }
                due
            })
            .collect();
        assert_eq!(shown, [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
        assert!(!Progress::hidden().due(5));
        assert_eq!(duration(3725.0), "1h 02m");
        assert_eq!(duration(185.0), "3m 05s");
        assert_eq!(duration(12.4), "12s");
    }
}
