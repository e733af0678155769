//! CUDA C compiled at run time with NVRTC, for this crate's kernels and for other crates' that
//! run beside them (written without CUDA's headers, so that it builds wherever candle's CUDA
//! backend does):
//!
//! - [`Module`]: a source and its compile options, compiled once per process and loaded once
//!   per device. Every module of every crate shares one cache (name, source and options to
//!   PTX), so that a module named twice is compiled once, and a name cannot stand for two
//!   different programs (a device loads a module by its name). Between processes the PTX is
//!   kept on disk (`ptx_cache`: `CANDLE_RNN_KERNEL_CACHE` names the folder, `0` turns it off;
//!   by default `~/.cache/candle-cudnn-rnn/ptx`).
//! - [`HALF`]: bf16 and f16 as raw 16-bit patterns and their conversions to and from f32.
//! - [`PHILOX`]: the Philox4x32-10 counter-based random generator.
//!
//! A module's source is a list of parts joined in order, so that it puts the preludes it needs
//! in front of its own code:
//!
//! ```ignore
//! use candle_cudnn_rnn::kernels::{Module, HALF, PHILOX};
//!
//! const SOURCE: &str = r#"
//! extern "C" __global__ void scale_bf16(const bf16* x, bf16* y, float a, int n) {
//!     int i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) store(y + i, a * load(x[i]));
//! }
//! "#;
//! static KERNELS: Module = Module::new("my_crate_scale", &[HALF, PHILOX, SOURCE]);
//!
//! let f = KERNELS.function(&device, "scale_bf16")?;
//! ```

use candle_core::cuda_backend::cudarc::driver::{CudaFunction, CudaSlice, CudaView};
use candle_core::cuda_backend::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use candle_core::cuda_backend::CudaDevice;
use candle_core::{bail, Layout, Result};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

mod ptx_cache;

/// The elements of a contiguous operand, for a launch's argument list (its layout's offsets
/// into the storage's slice).
pub fn view<'a, T>(s: &'a CudaSlice<T>, l: &Layout) -> Result<CudaView<'a, T>> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(s.slice(a..b)),
        None => bail!("kernel operands must be contiguous"),
    }
}

/// The half-precision prelude (`half.cuh`): the types `u16`, `u32` and `u64`; conversions on
/// raw bits (`bf16_to_f32`, `f32_to_bf16`, `f16_to_f32`, `f32_to_f16`); the structs `bf16` and
/// `f16` with `load(x)` to f32 and `store(p, v)` from f32, overloaded for `float` too; and,
/// where the module defines `ELEM_BF16` (1: bf16, 0: f16), `to_f` and `from_f` on that one
/// type's bits (with `ELEM_F32` 1 instead, on f32). Conversions to f32 are exact; from f32 they
/// round to nearest even.
pub const HALF: &str = include_str!("half.cuh");

/// The Philox4x32-10 generator (`philox.cuh`): `philox(c, k0, k1)` turns the 128-bit counter
/// `c` (four `unsigned int`) into four 32-bit draws keyed by `(k0, k1)`, as Random123 and
/// cuRAND do. Needs no other prelude.
pub const PHILOX: &str = include_str!("philox.cuh");

/// A CUDA C program for NVRTC: its source (parts joined in order) and compile options, known
/// process-wide by its name.
#[derive(Debug)]
pub struct Module {
    name: Cow<'static, str>,
    parts: &'static [&'static str],
    /// `None`: NVRTC's defaults.
    options: Option<CompileOptions>,
}

/// One program of the process-wide cache, compiled (or read from the disk's cache) at its
/// first use.
struct Compiled {
    parts: &'static [&'static str],
    options: Option<CompileOptions>,
    ptx: OnceLock<std::result::Result<Arc<str>, String>>,
}

/// Every compiled program of the process, by module name.
fn compiled() -> &'static Mutex<HashMap<String, Arc<Compiled>>> {
    static COMPILED: OnceLock<Mutex<HashMap<String, Arc<Compiled>>>> = OnceLock::new();
    COMPILED.get_or_init(Default::default)
}

/// Whether two sources are the same text, part by part (the same statics, usually).
fn same_parts(a: &[&str], b: &[&str]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| std::ptr::eq(*x, *y) || x == y)
}

impl Module {
    /// `parts` joined in order, compiled with NVRTC's default options. `name` must be unique
    /// in the process to this source: each device loads the module under it.
    pub const fn new(name: &'static str, parts: &'static [&'static str]) -> Self {
        Self {
            name: Cow::Borrowed(name),
            parts,
            options: None,
        }
    }

    /// `parts` joined in order, compiled with `options` (an architecture, `-D` definitions, ...);
    /// `name` must be unique in the process to this source and these options.
    pub fn with_options(
        name: impl Into<Cow<'static, str>>,
        parts: &'static [&'static str],
        options: CompileOptions,
    ) -> Self {
        let options = (options != CompileOptions::default()).then_some(options);
        Self {
            name: name.into(),
            parts,
            options,
        }
    }

    /// The name the process knows the module by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The module's PTX: compiled at the first request in the process for this name, then
    /// shared. Errors with NVRTC's log when the source does not compile, and when the name
    /// already stands for another source or other options.
    pub fn ptx(&self) -> Result<Arc<str>> {
        let entry = self.entry()?;
        // Compiled outside the cache's lock: other modules need not wait for this one.
        let ptx = entry.ptx.get_or_init(|| {
            let source = entry.parts.join("\n");
            let options = entry.options.clone().unwrap_or_default();
            let file = ptx_cache::file_name(&self.name, &source, &options);
            let ptx = ptx_cache::cached_or_compiled(ptx_cache::cache_dir(), &file, || {
                compile_ptx_with_opts(source, options)
                    .map(|p| p.to_src())
                    .map_err(|e| e.to_string())
            })?;
            Ok(Arc::from(ptx))
        });
        match ptx {
            Ok(ptx) => Ok(ptx.clone()),
            Err(e) => bail!("NVRTC module {}: {e}", self.name),
        }
    }

    /// The module's entry in the process-wide cache, made at the name's first use; an error
    /// when the name stands for another source or other options.
    fn entry(&self) -> Result<Arc<Compiled>> {
        let mut all = compiled().lock().unwrap_or_else(|e| e.into_inner());
        match all.get(self.name.as_ref()) {
            Some(c) if same_parts(c.parts, self.parts) && c.options == self.options => {
                Ok(c.clone())
            }
            Some(_) => bail!(
                "NVRTC module {}: the name is taken by another source or other options",
                self.name
            ),
            None => {
                let c = Arc::new(Compiled {
                    parts: self.parts,
                    options: self.options.clone(),
                    ptx: OnceLock::new(),
                });
                all.insert(self.name.to_string(), c.clone());
                Ok(c)
            }
        }
    }

    /// Kernel `kernel` of the module on `dev`: compiled at the first request in the process,
    /// loaded at the first on each device.
    pub fn function(&self, dev: &CudaDevice, kernel: &str) -> Result<CudaFunction> {
        let ptx = self.ptx()?;
        Ok(dev
            .get_or_load_custom_func(kernel, &self.name, &ptx)?
            .into_cuda_function())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_compare_by_text() {
        let a = String::from("__device__ int one() { return 1; }");
        let b: &'static str = "__device__ int one() { return 1; }";
        assert!(same_parts(&[HALF, b], &[HALF, b]));
        assert!(same_parts(&[HALF, b], &[HALF, a.as_str()]));
        assert!(!same_parts(&[HALF, b], &[PHILOX, b]));
        assert!(!same_parts(&[HALF], &[HALF, b]));
    }

    #[test]
    fn default_options_are_none() {
        let m = Module::with_options("default_options", &[HALF], CompileOptions::default());
        assert!(m.options.is_none());
        assert_eq!(m.name(), "default_options");
    }

    #[test]
    fn a_name_stands_for_one_program() {
        let first = Module::with_options(
            "kernels_test_one_name",
            &[HALF],
            CompileOptions {
                arch: Some("compute_80"),
                ..Default::default()
            },
        );
        let again = Module::with_options(
            "kernels_test_one_name",
            &[HALF],
            CompileOptions {
                arch: Some("compute_80"),
                ..Default::default()
            },
        );
        let other_source = Module::new("kernels_test_one_name", &[PHILOX]);
        let other_options = Module::new("kernels_test_one_name", &[HALF]);
        assert!(first.entry().is_ok());
        assert!(Arc::ptr_eq(
            &first.entry().unwrap(),
            &again.entry().unwrap()
        ));
        for other in [other_source, other_options] {
            let Err(err) = other.entry() else {
                panic!(
                    "{} took a name that stands for another program",
                    other.name()
                )
            };
            assert!(err.to_string().contains("taken by another source"), "{err}");
        }
    }
}
