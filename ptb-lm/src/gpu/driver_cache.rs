//! candle's CUDA kernels compiled into the driver's cache by child processes while ptb-lm starts.
//!
//! candle ships its kernels as PTX, which the driver compiles for the GPU when a module is first
//! loaded and keeps in its cache on disk (`~/.nv/ComputeCache`, or `$CUDA_CACHE_PATH`). On a
//! machine whose cache is empty the first training step waited many seconds for that. Within
//! one process the driver compiles one module at a time, on one thread or on eight, while eight
//! processes of one module each take about half as long; with the cache warm they load at once
//! (`results/2026-11-23-h100-chunk-jit/`).
//!
//! So when loading candle's smallest module shows the cache cold, [`start`] runs `ptb-lm
//! fill-driver-cache MODULE --device N` once per other module, and the command waits for them
//! ([`Prefill::wait`]) before the model's weights go to the GPU, where candle's kernels are first
//! needed. On a warm cache no child starts (eight would only cost their contexts).
//!
//! It only saves time: a child that cannot start or fails leaves its module to candle, which
//! compiles it at first use as before. `PTB_LM_PREFILL_DRIVER_CACHE=0` turns it off.

use crate::gpu::device_arg::DeviceArg;
use anyhow::Result;
use std::process::{Child, Command, Stdio};

/// Set to `0`, ptb-lm leaves the driver's cache to candle (to compare with and without).
const OPT_OUT: &str = "PTB_LM_PREFILL_DRIVER_CACHE";

/// candle's CUDA modules that ptb-lm's steps use.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CandleModule {
    Affine,
    Binary,
    Cast,
    Fill,
    Indexing,
    Reduce,
    Ternary,
    Unary,
}

impl CandleModule {
    /// The name `fill-driver-cache` takes.
    pub fn name(self) -> String {
        use clap::ValueEnum;
        let value = self.to_possible_value().expect("every module has a name");
        value.get_name().to_owned()
    }

    #[cfg(feature = "cuda")]
    fn ptx(self) -> &'static str {
        use candle_core::cuda_backend::kernels as k;
        match self {
            Self::Affine => k::AFFINE.ptx(),
            Self::Binary => k::BINARY.ptx(),
            Self::Cast => k::CAST.ptx(),
            Self::Fill => k::FILL.ptx(),
            Self::Indexing => k::INDEXING.ptx(),
            Self::Reduce => k::REDUCE.ptx(),
            Self::Ternary => k::TERNARY.ptx(),
            Self::Unary => k::UNARY.ptx(),
        }
    }
}

/// A child's work: one module loaded on one GPU.
#[derive(clap::Args, Debug)]
pub struct FillArgs {
    /// The candle module to load
    #[arg(value_enum)]
    pub module: CandleModule,
    /// The GPU's ordinal
    #[arg(long)]
    pub device: usize,
}

/// The arguments that make ptb-lm a child filling the cache with `module` for GPU `n`.
pub fn child_args(module: CandleModule, n: usize) -> [String; 4] {
    [
        "fill-driver-cache".into(),
        module.name(),
        "--device".into(),
        n.to_string(),
    ]
}

/// The child's side: loading the module is what makes the driver compile it into its cache.
pub fn fill(args: FillArgs) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        load(args.module, args.device)?;
        Ok(())
    }
    #[cfg(not(feature = "cuda"))]
    anyhow::bail!(
        "fill-driver-cache {}: this binary was built without `--features cuda`",
        args.module.name()
    )
}

/// The GPU whose cache to fill for `device`, or none: not on the CPU, not when the driver keeps
/// no cache (`CUDA_CACHE_DISABLE=1`), not when [`OPT_OUT`] is `0`. `var` reads the environment.
fn gpu_to_fill(device: DeviceArg, var: impl Fn(&str) -> Option<String>) -> Option<usize> {
    let set_to = |name: &str, value: &str| var(name).is_some_and(|v| v == value);
    if set_to("CUDA_CACHE_DISABLE", "1") || set_to(OPT_OUT, "0") {
        return None;
    }
    match device {
        DeviceArg::Cpu => None,
        DeviceArg::Auto => Some(0),
        DeviceArg::Cuda(n) => Some(n),
    }
}

/// Whether GPU `n` exists and takes contexts from several processes (the default compute mode):
/// on an exclusive GPU a child's context would keep ptb-lm's own off it. Never in a CPU build.
fn shared_gpu(n: usize) -> bool {
    #[cfg(feature = "cuda")]
    {
        use candle_core::cuda_backend::cudarc::driver::{result, sys};
        let Ok(ordinal) = i32::try_from(n) else {
            return false;
        };
        let mode = || -> std::result::Result<i32, result::DriverError> {
            result::init()?;
            let dev = result::device::get(ordinal)?;
            // SAFETY: `dev` comes from cuDeviceGet.
            unsafe {
                result::device::get_attribute(
                    dev,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE,
                )
            }
        };
        matches!(mode(), Ok(m) if m == sys::CUcomputemode::CU_COMPUTEMODE_DEFAULT as i32)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = n;
        false
    }
}

/// The children filling the cache, each with its module's name, or why it did not start.
/// Waiting for them, or dropping this, reaps them all.
#[derive(Default)]
pub struct Prefill(Vec<(String, std::io::Result<Child>)>);

/// A module load slower than this compiled PTX: the cache is cold. candle's affine module loads
/// an order of magnitude faster from a warm cache and compiles an order slower
/// (`results/2026-11-23-h100-chunk-jit/`).
#[cfg(feature = "cuda")]
const COLD_LOAD: std::time::Duration = std::time::Duration::from_millis(50);

/// Loads `module` on GPU `n` (in its primary context), which makes the driver compile it into
/// its cache unless it is there, and how long the load took.
#[cfg(feature = "cuda")]
fn load(module: CandleModule, n: usize) -> Result<std::time::Duration> {
    use candle_core::cuda_backend::cudarc::driver::CudaContext;
    let ctx = CudaContext::new(n)?;
    let start = std::time::Instant::now();
    ctx.load_module(module.ptx().into())?;
    Ok(start.elapsed())
}

/// Whether GPU `n`'s cache lacks candle's kernels, judged by loading its small affine module in
/// this process (in the primary context, which candle then takes over). On a warm cache the
/// children would only cost their contexts, eight of them at once
/// (`results/2026-11-23-h100-chunk-jit/`).
fn cache_is_cold(n: usize) -> bool {
    #[cfg(feature = "cuda")]
    {
        load(CandleModule::Affine, n).is_ok_and(|took| took > COLD_LOAD)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = n;
        false
    }
}

/// Starts filling the driver's cache for `device`, unless there is nothing to fill.
pub fn start(device: DeviceArg) -> Prefill {
    let n = match gpu_to_fill(device, |name| std::env::var(name).ok()) {
        Some(n) if shared_gpu(n) && cache_is_cold(n) => n,
        _ => return Prefill::default(),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("ptb-lm: not filling the driver's compile cache ahead: {e}");
            return Prefill::default();
        }
    };
    Prefill::spawn(
        <CandleModule as clap::ValueEnum>::value_variants()
            .iter()
            .filter(|&&m| m != CandleModule::Affine)
            .map(|&m| {
                let mut child = Command::new(&exe);
                child.args(child_args(m, n));
                (m.name(), child)
            }),
    )
}

impl Prefill {
    fn spawn(commands: impl Iterator<Item = (String, Command)>) -> Self {
        Self(
            commands
                .map(|(name, mut c)| {
                    let child = c
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn();
                    (name, child)
                })
                .collect(),
        )
    }

    /// Waits for every child; `name: why` for each that did not succeed.
    fn reap(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        for (name, child) in self.0.drain(..) {
            match child.and_then(|mut c| c.wait()) {
                Ok(status) if status.success() => {}
                Ok(status) => failed.push(format!("{name}: {status}")),
                Err(e) => failed.push(format!("{name}: {e}")),
            }
        }
        failed
    }

    /// Waits for the children, saying on one line which modules candle will compile itself.
    pub fn wait(mut self) {
        let failed = self.reap();
        if !failed.is_empty() {
            eprintln!(
                "ptb-lm: the driver's compile cache was not filled ahead ({}); candle compiles \
                 those modules at first use",
                failed.join(", ")
            );
        }
    }
}

impl Drop for Prefill {
    /// On an error path: no zombies, and the cache still filled for the next run.
    fn drop(&mut self) {
        self.reap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<String> + 'a {
        let vars: HashMap<_, _> = vars.iter().copied().collect();
        move |name| vars.get(name).map(|v| v.to_string())
    }

    #[test]
    fn fills_the_chosen_gpu_unless_cpu_cache_off_or_opted_out() {
        assert_eq!(gpu_to_fill(DeviceArg::Cuda(3), env(&[])), Some(3));
        assert_eq!(gpu_to_fill(DeviceArg::Auto, env(&[])), Some(0));
        assert_eq!(gpu_to_fill(DeviceArg::Cpu, env(&[])), None);
        let on = [
            ("CUDA_CACHE_DISABLE", "0"),
            (OPT_OUT, "1"),
            ("CUDA_CACHE_PATH", "/tmp/x"),
        ];
        assert_eq!(gpu_to_fill(DeviceArg::Cuda(1), env(&on)), Some(1));
        let off = [("CUDA_CACHE_DISABLE", "1")];
        assert_eq!(gpu_to_fill(DeviceArg::Cuda(1), env(&off)), None);
        assert_eq!(gpu_to_fill(DeviceArg::Auto, env(&[(OPT_OUT, "0")])), None);
    }

    /// The CPU build has no GPU to fill for, whatever the device asked.
    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cpu_build_starts_no_child() {
        assert!(start(DeviceArg::Cuda(0)).0.is_empty());
        assert!(start(DeviceArg::Auto).0.is_empty());
    }

    /// Every child is waited for; those that failed or never started are named with why.
    #[test]
    fn reaping_names_the_failed_children() {
        let sh = |code: &str| {
            let mut c = Command::new("sh");
            c.args(["-c", &format!("exit {code}")]);
            c
        };
        let mut p = Prefill::spawn(
            [
                ("affine", sh("0")),
                ("binary", sh("3")),
                ("cast", Command::new("/nonexistent/ptb-lm")),
            ]
            .map(|(name, c)| (name.to_owned(), c))
            .into_iter(),
        );
        let failed = p.reap();
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert!(
            failed[0].starts_with("binary: exit status: 3"),
            "{failed:?}"
        );
        assert!(failed[1].starts_with("cast: "), "{failed:?}");
        assert!(p.0.is_empty());
        assert!(p.reap().is_empty());
    }
}
