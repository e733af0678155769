//! What an RNN module is: cell kind, sizes and the options PyTorch's `nn.LSTM`/`nn.GRU` take.

/// The recurrent cell. Gate order follows cuDNN and PyTorch: LSTM `i, f, g, o`; GRU `r, z, n`
/// with the reset gate applied after the recurrent matmul ("linear before reset", as `nn.GRU`);
/// the plain RNNs compute `h' = act(W_ih x + b_ih + W_hh h + b_hh)` (`nn.RNN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RnnMode {
    /// Long short-term memory (PyTorch `nn.LSTM`, cuDNN `LSTM`): state `h` and `c`.
    Lstm,
    /// Gated recurrent unit (PyTorch `nn.GRU`, cuDNN `GRU`).
    Gru,
    /// Elman RNN with `tanh` (PyTorch `nn.RNN(nonlinearity="tanh")`, cuDNN `RNN_TANH`).
    RnnTanh,
    /// Elman RNN with `relu` (PyTorch `nn.RNN(nonlinearity="relu")`, cuDNN `RNN_RELU`).
    RnnRelu,
}

impl RnnMode {
    /// Gate blocks per weight matrix.
    pub fn gates(self) -> usize {
        match self {
            RnnMode::Lstm => 4,
            RnnMode::Gru => 3,
            RnnMode::RnnTanh | RnnMode::RnnRelu => 1,
        }
    }

    /// State tensors carried between steps: `h` and `c` for an LSTM, `h` otherwise.
    pub fn state_slots(self) -> usize {
        match self {
            RnnMode::Lstm => 2,
            _ => 1,
        }
    }

    /// `lstm`, `gru`, `rnn_tanh` or `rnn_relu`.
    pub fn name(self) -> &'static str {
        match self {
            RnnMode::Lstm => "lstm",
            RnnMode::Gru => "gru",
            RnnMode::RnnTanh => "rnn_tanh",
            RnnMode::RnnRelu => "rnn_relu",
        }
    }
}

impl std::str::FromStr for RnnMode {
    type Err = String;

    /// The names of [`RnnMode::name`]: `lstm`, `gru`, `rnn_tanh`, `rnn_relu`.
    fn from_str(s: &str) -> Result<Self, String> {
        [Self::Lstm, Self::Gru, Self::RnnTanh, Self::RnnRelu]
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown RNN mode {s:?} (lstm, gru, rnn_tanh, rnn_relu)"))
    }
}

/// Bias vectors of each layer and direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Bias {
    /// No bias vectors (PyTorch `bias=False`, cuDNN `NO_BIAS`).
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

/// How float32 matrix products may round on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MathMode {
    /// Plain fp32 FMA arithmetic (cuDNN `CUDNN_FMA_MATH`): matches a CPU reference to ~1e-6.
    #[default]
    Fp32,
    /// Tensor cores with TF32 inputs allowed (cuDNN `CUDNN_DEFAULT_MATH`): faster, ~1e-3 relative.
    /// The products keep TF32's 11 significant bits. The crate's kernels run forwards (inference
    /// and training's) with f16 operands instead, each row of W_hh and of h scaled by a power of
    /// two: the same 11 bits, over f32's range, in half the bytes (at hidden 1024 the weights
    /// then fit on chip). The backward keeps TF32 products.
    Tf32,
}

/// The GPU algorithm: chosen per call by static rules (the default), one of cuDNN's, this
/// crate's persistent kernels, or the fastest measured. The CPU path computes the same function
/// whichever is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RnnAlgo {
    /// Each call runs the kernel that the benchmarks measured fastest for its mode, shape,
    /// dtype, math and GPU among those that serve it: this crate's persistent kernels where they
    /// take the call and win, else one of cuDNN's algorithms (its persistent ones where they
    /// win, `Standard` otherwise). Decided by named rules without any timing at run time (so the
    /// same call always gets the same kernel); [`Rnn::last_algo`](crate::Rnn::last_algo) says
    /// which kernel served a module's last call.
    #[default]
    Heuristic,
    /// cuBLAS-based, one kernel chain per step: works for every configuration.
    Standard,
    /// Persistent kernels keeping the recurrent weights on chip; fast for small batches.
    PersistStatic,
    /// Register-resident persistent kernels for small hidden sizes.
    PersistStaticSmallH,
    /// Persistent kernels compiled at run time for the batch size (`cudnnBuildRNNDynamic`,
    /// once per batch size).
    PersistDynamic,
    /// The fastest kernel measured on this GPU, once per call shape (device, dtype, `seq`,
    /// `batch`, `train`) and remembered: cuDNN's algorithms and, for the calls they take, this
    /// crate's persistent LSTM and GRU kernels, each timed as a training (or inference) call
    /// captured as a CUDA graph and replayed 9 times (eagerly where a call does not capture). A kernel counts
    /// only when its outputs (and in training its gradients) agree with cuDNN's `Standard`'s;
    /// `Auto` keeps `Heuristic`'s kernel unless another is clearly faster (3% by the median,
    /// quartiles apart), and never one slower than `Standard`'s median, so that two runs pick
    /// alike. Variable-length calls use `Standard`, and so does half-precision training at
    /// batches below 8 among cuDNN's algorithms (its persistent backward there gave infinite
    /// gradients at random).
    Auto,
    /// This crate's own persistent kernels (not cuDNN's): each layer's recurrent weights stay in
    /// shared memory for the whole sequence, forward and backward. They serve calls of a
    /// unidirectional LSTM or GRU without projection or per-sample lengths (inter-layer dropout
    /// included), in bf16 or f16, with a batch of at most 256 (multiplied 32 samples at a time)
    /// and a hidden size whose share per
    /// multiprocessor fits in shared memory (up to about 1700 on an H100; PTB large's 1500
    /// trains with batches up to 20); every other call runs cuDNN's `Standard` over the same
    /// weights. On Hopper GPUs the backward's blocks work in thread-block clusters sized by the
    /// step's gate gradients (none at hidden 128-256 and batch 32, 2 at 512-1024, 4 past 1024;
    /// smaller where those do not fit), and a single layer whose step is small (batch x hidden
    /// up to 2048) runs as one cluster of up to 8 blocks, synchronized by the cluster's hardware
    /// barrier instead of a grid-wide one. An LSTM stack of 2 to 4 layers whose blocks all fit
    /// on the GPU at once (PTB small and medium, not large) runs each pass as a wavefront, every
    /// layer in one launch (forward, at wave step s layer l does its step s - l; backward from
    /// the top); a GRU runs layer by layer.
    ///
    /// Variables, read once per process when the first module that may use these kernels is
    /// built, override the planner for every shape: `CANDLE_RNN_PERSISTENT_CLUSTER` = `N` or
    /// `F,B`, the cluster size (1, 2 or 4) of both passes or of the forward and the backward;
    /// `CANDLE_RNN_PERSISTENT_ONE_CLUSTER` = `0` never one cluster, `1` wherever it fits;
    /// `CANDLE_RNN_PERSISTENT_CHUNK` = `32` or `64` the backward's chunks of gate columns (by
    /// default 64, a GRU's wide backward at hidden 512 32);
    /// `CANDLE_RNN_PERSISTENT_WAVE=0` stacks layer by layer.
    Persistent,
}

impl RnnAlgo {
    /// cuDNN's concrete algorithms, in the order `Auto` tries them.
    pub const CONCRETE: [RnnAlgo; 4] = [
        RnnAlgo::Standard,
        RnnAlgo::PersistStatic,
        RnnAlgo::PersistStaticSmallH,
        RnnAlgo::PersistDynamic,
    ];
}

/// How a module's GPU calls will be launched, which the default algorithm
/// ([`RnnAlgo::Heuristic`]) reads to pick each call's kernel: past batch 32 the kernels rank
/// differently eagerly and in a CUDA graph. cuDNN's `Standard` launches kernels step by step,
/// and eagerly the host's launches (not the GPU) set its pace: at batch 128 it took 1.3-3x its
/// time in a graph, where the crate's kernels (a few launches a call) took 1.0-1.1x (H100,
/// `results/2026-11-26-h100-eager-graphed/` in the repository).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Launch {
    /// One call at a time as candle launches ops, a module's warm-up and calls alike: the
    /// kernel whose eager call took least time.
    #[default]
    Eager,
    /// Captured into CUDA graphs and replayed (after eager warm-up calls, which run the same
    /// kernels): the kernel whose replays took least device time.
    Graphed,
}

/// Options of an RNN module, named as in PyTorch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RnnConfig {
    /// Stacked layers; each layer above the first reads the one below.
    pub num_layers: usize,
    /// Whether the cell has bias vectors (PyTorch's `bias`).
    pub bias: bool,
    /// With `bias`: one bias vector per gate (TensorFlow/Keras cells) instead of PyTorch's
    /// `bias_ih` + `bias_hh`. Same function class for an LSTM, with half the bias parameters.
    pub single_bias: bool,
    /// Input and output are `[batch, seq, feature]` instead of `[seq, batch, feature]`.
    pub batch_first: bool,
    /// Dropout on the outputs of every layer but the last, in training mode only.
    pub dropout: f32,
    /// A second, reverse-time direction per layer; outputs are the two directions side by side.
    pub bidirectional: bool,
    /// LSTM only: project `h` to this many features (PyTorch's `proj_size`, cuDNN's
    /// `projSize`; 0 for none). Outputs and `h` then have `proj_size` features, `c` keeps
    /// `hidden_size`.
    pub proj_size: usize,
    /// How f32 matrix products may round on the GPU (f16/bf16 always use tensor cores).
    pub math: MathMode,
    /// The GPU algorithm: by default the one the benchmarks found fastest for each call
    /// ([`RnnAlgo::Heuristic`]); or one of cuDNN's, this crate's persistent kernels, or the
    /// fastest measured at run time ([`RnnAlgo::Auto`]).
    pub algo: RnnAlgo,
    /// How the GPU calls will be launched: eagerly, or replayed from CUDA graphs. The default
    /// algorithm's rules read it (the same kernels serve either way where they agree).
    pub launch: Launch,
    /// Seed of the dropout random state (cuDNN's state and the CPU masks).
    pub seed: u64,
}

impl Default for RnnConfig {
    fn default() -> Self {
        Self {
            num_layers: 1,
            bias: true,
            single_bias: false,
            batch_first: false,
            dropout: 0.0,
            bidirectional: false,
            proj_size: 0,
            math: MathMode::Fp32,
            algo: RnnAlgo::Heuristic,
            launch: Launch::Eager,
            seed: 0,
        }
    }
}

impl RnnConfig {
    /// The bias vectors `bias` and `single_bias` ask for.
    pub fn bias_mode(&self) -> Bias {
        match (self.bias, self.single_bias) {
            (false, _) => Bias::None,
            (true, true) => Bias::Single,
            (true, false) => Bias::Double,
        }
    }

    /// 2 when bidirectional, else 1.
    pub fn num_directions(&self) -> usize {
        if self.bidirectional {
            2
        } else {
            1
        }
    }
}
