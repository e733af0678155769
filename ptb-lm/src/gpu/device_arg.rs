//! `--device`: where a command runs.

/// Where to run, as `--device` names it: `auto`, `cpu`, `cuda` (the first GPU) or `cuda:N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceArg {
    /// The first GPU when built with `--features cuda` and one is present, else the CPU.
    Auto,
    Cpu,
    Cuda(usize),
}

impl DeviceArg {
    /// clap's parser for `--device`.
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Self::Auto),
            "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Self::Cuda)
                .ok_or_else(|| "expected auto, cpu, cuda or cuda:N (N a GPU's ordinal)".into()),
        }
    }
}
