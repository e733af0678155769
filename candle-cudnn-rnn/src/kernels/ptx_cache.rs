//! The PTX of compiled NVRTC programs kept on disk between processes, so that a program run
//! again (a training script, a test binary, one benchmark after another) loads its kernels
//! instead of compiling each again (a persistent kernel's module takes NVRTC 0.3-0.5 s).
//!
//! A program's file is named by the SHA-256 of everything its PTX depends on: its name, its
//! source, its options and NVRTC's version, so a changed kernel or compiler never meets an old
//! file. Files are written whole under a temporary name, then renamed into place; past 1 GiB the
//! files used longest ago go. The cache never fails a compile: a folder it cannot read or write
//! is passed over.
//!
//! The folder: `CANDLE_RNN_KERNEL_CACHE` where set (`0` or empty: no cache), else
//! `$XDG_CACHE_HOME/candle-cudnn-rnn/ptx`, else `$HOME/.cache/candle-cudnn-rnn/ptx`.

use candle_core::cuda_backend::cudarc::nvrtc::{sys as nvrtc_sys, CompileOptions};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The variable that names the cache's folder (`0` or empty: none).
pub(super) const CACHE_VAR: &str = "CANDLE_RNN_KERNEL_CACHE";

/// The cache's folder for this process, read from the environment once.
pub(super) fn cache_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let var = |name| std::env::var_os(name);
        dir_of(var(CACHE_VAR), var("XDG_CACHE_HOME"), var("HOME"))
    })
    .as_deref()
}

/// The folder that [`cache_dir`] takes from these variables' values.
fn dir_of(
    named: Option<OsString>,
    xdg_cache: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty());
    match named {
        Some(v) if v.is_empty() || v == "0" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => set(xdg_cache)
            .map(PathBuf::from)
            .or_else(|| set(home).map(|h| Path::new(&h).join(".cache")))
            .map(|cache| cache.join("candle-cudnn-rnn").join("ptx")),
    }
}

/// NVRTC's version as `major.minor` (`?` when it cannot say): PTX from another compiler may
/// target a newer ISA than this driver takes.
fn nvrtc_version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-parameters; the library is loaded on first call, as for a compile.
        let status = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
        match status {
            nvrtc_sys::nvrtcResult::NVRTC_SUCCESS => format!("{major}.{minor}"),
            _ => "?".into(),
        }
    })
}

/// The file name of program `name` of `source` compiled with `options`: the name cut to
/// something a file system takes, then the SHA-256 of everything the PTX depends on.
pub(super) fn file_name(name: &str, source: &str, options: &CompileOptions) -> String {
    file_name_with(name, source, options, nvrtc_version())
}

fn file_name_with(name: &str, source: &str, options: &CompileOptions, nvrtc: &str) -> String {
    let mut key = Sha256::new();
    for part in [name, source, &format!("{options:?}"), nvrtc] {
        // Each part's length first, so that no two lists of parts hash alike.
        key.update((part.len() as u64).to_le_bytes());
        key.update(part.as_bytes());
    }
    let hex: String = key.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let stem: String = name
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                true => c,
                false => '_',
            },
        )
        .take(96)
        .collect();
    format!("{stem}-{hex}.ptx")
}

/// What [`cached_or_compiled`] handed back: the PTX, and whether it came from the cache's file.
pub(super) struct Ptx {
    pub text: String,
    pub from_file: bool,
}

/// The PTX in `dir`'s file `file` where there is one, else `compile`'s, then written there.
pub(super) fn cached_or_compiled(
    dir: Option<&Path>,
    file: &str,
    compile: impl FnOnce() -> Result<String, String>,
) -> Result<Ptx, String> {
    if let Some(text) = dir.and_then(|d| read(&d.join(file))) {
        return Ok(Ptx {
            text,
            from_file: true,
        });
    }
    let text = compile()?;
    if let Some(dir) = dir {
        write(dir, file, &text);
    }
    Ok(Ptx {
        text,
        from_file: false,
    })
}

/// The PTX in `path`, if it reads as a whole module (NVRTC's output opens with comments and
/// `.version`, and names a `.target`). Its modification time is set to now, so that a file's
/// age says when a process last used it (`scripts/on-gpu.sh` hands back the files a command
/// used).
fn read(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let whole = text.contains(".version") && text.contains(".target");
    if whole {
        let touched = std::fs::File::options().append(true).open(path);
        let _ = touched.and_then(|f| f.set_modified(std::time::SystemTime::now()));
    }
    whole.then_some(text)
}

/// Writes `text` into `dir`'s `file` under a temporary name first, so that a reader sees the
/// whole file or none, then keeps the folder within [`MOST_BYTES`]; passes over whatever fails.
pub(super) fn write(dir: &Path, file: &str, text: &str) {
    static WRITES: AtomicUsize = AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{file}.{}.{n}.tmp", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&temp, text))
        .and_then(|_| std::fs::rename(&temp, dir.join(file)));
    match written {
        Ok(()) => trim(dir, MOST_BYTES),
        Err(_) => {
            let _ = std::fs::remove_file(&temp);
        }
    }
}

/// The most bytes of PTX the folder keeps: a persistent kernel's module is 0.1-0.25 MB, so some
/// thousands of kernel variants (a sweep over many shapes makes hundreds).
const MOST_BYTES: u64 = 1 << 30;

/// Where `dir`'s PTX files outgrow `most` bytes, removes those used longest ago (by their
/// modification time, which a read renews) until three quarters of it are left.
fn trim(dir: &Path, most: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let ptx = e.file_name().to_str()?.ends_with(".ptx");
            let meta = e.metadata().ok().filter(|m| ptx && m.is_file())?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let mut bytes: u64 = files.iter().map(|f| f.1).sum();
    if bytes <= most {
        return;
    }
    files.sort();
    for (_, len, path) in files {
        if bytes <= most / 4 * 3 {
            break;
        }
        if std::fs::remove_file(path).is_ok() {
            bytes -= len;
        }
    }
}

/// Removes `dir`'s `file` (PTX that the driver would not load).
pub(super) fn forget(dir: &Path, file: &str) {
    let _ = std::fs::remove_file(dir.join(file));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A fresh folder under the system's temporary one, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(tag: &str) -> Self {
            static N: AtomicUsize = AtomicUsize::new(0);
            let n = N.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!(
                "candle-cudnn-rnn-ptx-cache-test-{tag}-{}-{n}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const PTX: &str = "//\n.version 9.0\n.target sm_90\n.visible .entry k() { ret; }\n";

    #[test]
    fn the_folder_comes_from_the_variable_then_xdg_then_home() {
        let os = |s: &str| Some(OsString::from(s));
        let ptx = |p: &str| Some(Path::new(p).join("candle-cudnn-rnn").join("ptx"));
        assert_eq!(
            dir_of(os("/k"), os("/x"), os("/h")),
            Some(PathBuf::from("/k"))
        );
        assert_eq!(dir_of(os("0"), os("/x"), os("/h")), None);
        assert_eq!(dir_of(os(""), os("/x"), os("/h")), None);
        assert_eq!(dir_of(None, os("/x"), os("/h")), ptx("/x"));
        assert_eq!(dir_of(None, os(""), os("/h")), ptx("/h/.cache"));
        assert_eq!(dir_of(None, None, os("/h")), ptx("/h/.cache"));
        assert_eq!(dir_of(None, None, None), None);
    }

    #[test]
    fn a_file_name_changes_with_everything_the_ptx_depends_on() {
        let arch = |a| CompileOptions {
            arch: Some(a),
            ..Default::default()
        };
        let name = |n, s, o: &CompileOptions, v| file_name_with(n, s, o, v);
        let first = name("m", "src", &arch("compute_90"), "13.0");
        assert_eq!(first, name("m", "src", &arch("compute_90"), "13.0"));
        for other in [
            name("n", "src", &arch("compute_90"), "13.0"),
            name("m", "src2", &arch("compute_90"), "13.0"),
            name("m", "src", &arch("compute_90a"), "13.0"),
            name("m", "src", &arch("compute_90"), "13.1"),
            // The same bytes split otherwise between name and source.
            name("ms", "rc", &arch("compute_90"), "13.0"),
        ] {
            assert_ne!(first, other);
        }
        assert!(
            first.starts_with("m-") && first.ends_with(".ptx"),
            "{first}"
        );
        let odd = name("a/b c", "src", &CompileOptions::default(), "13.0");
        assert!(odd.starts_with("a_b_c-"), "{odd}");
    }

    #[test]
    fn a_program_compiled_once_is_read_back_after() {
        let scratch = Scratch::new("again");
        let compiles = Cell::new(0);
        let compile = || {
            compiles.set(compiles.get() + 1);
            Ok(PTX.to_string())
        };
        let first = cached_or_compiled(Some(&scratch.0), "m.ptx", compile).unwrap();
        assert!(!first.from_file);
        let again = cached_or_compiled(Some(&scratch.0), "m.ptx", compile).unwrap();
        assert!(again.from_file);
        assert_eq!((again.text.as_str(), compiles.get()), (PTX, 1));
        // No temporary file is left beside it.
        let files = std::fs::read_dir(&scratch.0).unwrap().count();
        assert_eq!(files, 1);
    }

    #[test]
    fn a_file_read_is_marked_used_now() {
        let scratch = Scratch::new("used");
        std::fs::create_dir_all(&scratch.0).unwrap();
        let file = scratch.0.join("m.ptx");
        std::fs::write(&file, PTX).unwrap();
        let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        let f = std::fs::File::options().append(true).open(&file).unwrap();
        f.set_modified(long_ago).unwrap();
        let ptx = cached_or_compiled(Some(&scratch.0), "m.ptx", || Err("not asked".into()));
        assert!(ptx.unwrap().from_file);
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        assert!(modified > long_ago + std::time::Duration::from_secs(1 << 20));
    }

    #[test]
    fn a_file_that_is_not_whole_ptx_is_compiled_again_and_replaced() {
        let scratch = Scratch::new("partial");
        std::fs::create_dir_all(&scratch.0).unwrap();
        std::fs::write(scratch.0.join("m.ptx"), "//\n.version 9.0\n").unwrap();
        let ptx = cached_or_compiled(Some(&scratch.0), "m.ptx", || Ok(PTX.into())).unwrap();
        assert!(!ptx.from_file);
        assert_eq!(
            std::fs::read_to_string(scratch.0.join("m.ptx")).unwrap(),
            PTX
        );
    }

    #[test]
    fn an_unusable_folder_or_a_failed_compile_passes_the_compiler_through() {
        let scratch = Scratch::new("unusable");
        std::fs::write(&scratch.0, "a file where the folder would be").unwrap();
        let ptx = cached_or_compiled(Some(&scratch.0), "m.ptx", || Ok(PTX.into())).unwrap();
        assert_eq!((ptx.text.as_str(), ptx.from_file), (PTX, false));
        std::fs::remove_file(&scratch.0).unwrap();
        let failed = cached_or_compiled(Some(&scratch.0), "m.ptx", || Err("log".into()));
        assert_eq!(failed.err().as_deref(), Some("log"));
        assert!(
            !scratch.0.exists(),
            "nothing is written for a failed compile"
        );
        let none = cached_or_compiled(None, "m.ptx", || Ok(PTX.into())).unwrap();
        assert!(!none.from_file);
    }

    #[test]
    fn a_full_folder_loses_the_files_used_longest_ago() {
        let scratch = Scratch::new("trim");
        std::fs::create_dir_all(&scratch.0).unwrap();
        let day = std::time::Duration::from_secs(86_400);
        let epoch = std::time::SystemTime::UNIX_EPOCH;
        for (i, days) in [(0, 3), (1, 1), (2, 4), (3, 2)] {
            let file = scratch.0.join(format!("m{i}.ptx"));
            std::fs::write(&file, [b'x'; 100]).unwrap();
            let f = std::fs::File::options().append(true).open(&file).unwrap();
            f.set_modified(epoch + day * days).unwrap();
        }
        std::fs::write(scratch.0.join("other"), [b'x'; 1000]).unwrap();
        trim(&scratch.0, 400);
        assert_eq!(
            std::fs::read_dir(&scratch.0).unwrap().count(),
            5,
            "within the bound"
        );
        // Over 300 bytes: down to three quarters of that, those used longest ago first.
        trim(&scratch.0, 300);
        let mut left: Vec<_> = std::fs::read_dir(&scratch.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["m0.ptx", "m2.ptx", "other"]);
    }

    #[test]
    fn a_forgotten_file_is_compiled_again() {
        let scratch = Scratch::new("forget");
        cached_or_compiled(Some(&scratch.0), "m.ptx", || Ok(PTX.into())).unwrap();
        forget(&scratch.0, "m.ptx");
        let ptx = cached_or_compiled(Some(&scratch.0), "m.ptx", || Ok(PTX.into())).unwrap();
        assert!(!ptx.from_file);
    }
}
