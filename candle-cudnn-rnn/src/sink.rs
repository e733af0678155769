//! How a backward leaves the weight's gradient in a caller's tensor instead of returning it to
//! autograd (`Rnn::with_weight_grad_sink`).

/// What a backward does with what a weight-gradient sink already holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SinkMode {
    /// Adds the gradient to it, as PyTorch's `.grad` sums over backward calls: zero the sink
    /// once its sum is used.
    #[default]
    Add,
    /// Replaces it: for one backward per use of the sink (a training step's), which then needs
    /// no zeroing; the persistent kernel's GEMMs write their products straight into it (cuDNN
    /// only adds, so on its path the sink is zeroed first).
    Overwrite,
}
