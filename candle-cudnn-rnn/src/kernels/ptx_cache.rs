//! The PTX of compiled NVRTC programs kept on disk between processes, so that a program run
//! again (a training script, a test binary, one benchmark after another) loads its kernels
//! instead of compiling each again (a persistent kernel's module takes NVRTC 0.3-0.5 s).
//!
//! A program's file is named by the SHA-256 of everything its PTX depends on: its name, its
//! source's code (comments and blank lines left out: they change no PTX, and a comment edited keeps
//! the files), its options, NVRTC's version and this crate's, so a changed kernel or compiler never
//! meets an old file. A file ends in a line with the SHA-256 of the PTX before it, and is written
//! whole under a temporary name, then renamed into place: a file that does not check out (cut
//! short, damaged) is compiled again and replaced, so the driver is never handed it. Past 1 GiB the
//! files used longest ago go. The cache never fails a compile: a folder it cannot read or write is
//! passed over.
//!
//! The folder: `CANDLE_RNN_KERNEL_CACHE` where set (`0` or empty: no cache), else
//! `$XDG_CACHE_HOME/candle-cudnn-rnn/ptx`, else `$HOME/.cache/candle-cudnn-rnn/ptx`.

use candle_core::cuda_backend::cudarc::nvrtc::{sys as nvrtc_sys, CompileOptions};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The variable that names the cache's folder (`0` or empty: none).
const CACHE_VAR: &str = "CANDLE_RNN_KERNEL_CACHE";

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
/// something a file system takes, then the SHA-256 of everything the PTX depends on (of the
/// source, its [`code`]).
pub(super) fn file_name(name: &str, source: &str, options: &CompileOptions) -> String {
    file_name_with(name, source, options, nvrtc_version())
}

fn file_name_with(name: &str, source: &str, options: &CompileOptions, nvrtc: &str) -> String {
    let mut key = Sha256::new();
    let crate_version = env!("CARGO_PKG_VERSION");
    for part in [
        name,
        &code(source),
        &format!("{options:?}"),
        nvrtc,
        crate_version,
    ] {
        // Each part's length first, so that no two lists of parts hash alike.
        key.update((part.len() as u64).to_le_bytes());
        key.update(part.as_bytes());
    }
    let hex = hex(&key.finalize());
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

/// CUDA C `source` without its comments, its lines' trailing blanks and its blank lines: what
/// NVRTC's PTX depends on where no line number reaches it (the sources use no `__LINE__`, and
/// NVRTC writes no line information unless asked). String and character literals are kept
/// whole.
fn code(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    // The quote of the literal being copied, if any.
    let mut quote = None;
    while let Some(c) = chars.next() {
        match (quote, c, chars.peek()) {
            (Some(q), _, _) => {
                out.push(c);
                if c == '\\' {
                    out.extend(chars.next());
                } else if c == q || c == '\n' {
                    quote = None;
                }
            }
            (None, '/', Some('/')) => while chars.next_if(|&n| n != '\n').is_some() {},
            (None, '/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
                out.push(' ');
            }
            (None, '"' | '\'', _) => {
                quote = Some(c);
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    let lines = out.lines().map(str::trim_end).filter(|l| !l.is_empty());
    lines.collect::<Vec<_>>().join("\n")
}

/// `bytes` in lowercase hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The last line of a cache file: this, then the SHA-256 of the PTX before it (a PTX comment).
const CHECK: &str = "// candle-cudnn-rnn ptx sha256 ";

/// The PTX in `dir`'s file `file` where there is one, else `compile`'s, then written there; it
/// ends in a newline either way, so that the driver is handed the same text (its own cache of
/// machine code is keyed by it; `scripts/warm-kernels.py` loads the files' text).
pub(super) fn cached_or_compiled(
    dir: Option<&Path>,
    file: &str,
    compile: impl FnOnce() -> Result<String, String>,
) -> Result<String, String> {
    if let Some(text) = dir.and_then(|d| read(&d.join(file))) {
        return Ok(text);
    }
    let mut text = compile()?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if let Some(dir) = dir {
        write(dir, file, &text);
    }
    Ok(text)
}

/// The PTX in `path`, if the file checks out (its last line, [`CHECK`], holds the SHA-256 of the
/// text before it). Its modification time is then set to now, so that a file's age says when a
/// process last used it ([`trim`]; `scripts/on-gpu.sh` hands back the files a command used).
fn read(path: &Path) -> Option<String> {
    let mut text = std::fs::read_to_string(path).ok()?;
    // The PTX: up to the last line's start.
    let ptx_len = text.strip_suffix('\n')?.rfind('\n')? + 1;
    let sum = text[ptx_len..].strip_suffix('\n')?.strip_prefix(CHECK)?;
    if sum != hex(&Sha256::digest(&text[..ptx_len])) || text.contains('\0') {
        return None;
    }
    text.truncate(ptx_len);
    let touched = std::fs::File::options().append(true).open(path);
    let _ = touched.and_then(|f| f.set_modified(std::time::SystemTime::now()));
    Some(text)
}

/// Writes `text` (ending in a newline) and its [`CHECK`] line into `dir`'s `file`, under a
/// temporary name first (synced before the rename), so that a reader sees the whole file or none,
/// then keeps the folder within [`MOST_BYTES`]; passes over whatever fails.
fn write(dir: &Path, file: &str, text: &str) {
    static WRITES: AtomicUsize = AtomicUsize::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temp = dir.join(format!(".{file}.{}.{n}.{nanos}.tmp", std::process::id()));
    let check = format!("{CHECK}{}\n", hex(&Sha256::digest(text)));
    let written = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::File::create_new(&temp))
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.write_all(check.as_bytes())?;
            f.sync_all()
        })
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

/// A temporary file this old was left by a writer stopped before its rename.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// Where `dir`'s PTX files outgrow `most` bytes, removes those used longest ago (by their
/// modification time, which a read renews) until three quarters of it are left; and temporary
/// files older than [`STALE_TEMP`].
fn trim(dir: &Path, most: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut files = vec![];
    for e in entries.flatten() {
        let (Some(name), Ok(meta)) = (e.file_name().to_str().map(String::from), e.metadata())
        else {
            continue;
        };
        let Ok(modified) = meta.modified() else {
            continue;
        };
        let stale = now
            .duration_since(modified)
            .is_ok_and(|age| age > STALE_TEMP);
        match meta.is_file() {
            true if name.ends_with(".ptx") => files.push((modified, meta.len(), e.path())),
            true if name.ends_with(".tmp") && stale => {
                let _ = std::fs::remove_file(e.path());
            }
            _ => {}
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::time::{Duration, SystemTime};

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

    /// Sets `file`'s modification time.
    fn set_modified(file: &Path, when: SystemTime) {
        let f = std::fs::File::options().append(true).open(file).unwrap();
        f.set_modified(when).unwrap();
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

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

    /// A compile of [`PTX`] that counts its calls in `compiles`.
    fn counted(compiles: &Cell<usize>) -> impl Fn() -> Result<String, String> + '_ {
        || {
            compiles.set(compiles.get() + 1);
            Ok(PTX.to_string())
        }
    }

    #[test]
    fn the_key_leaves_out_comments_and_blank_lines_only() {
        let source = "// a kernel\n__global__ void k(int* x) { /* one */ x[0] = 1; }\n";
        let code = "__global__ void k(int* x) {   x[0] = 1; }";
        assert_eq!(super::code(source), code);
        let key = |s| file_name_with("m", s, &CompileOptions::default(), "13.0");
        let rewrapped =
            "// a\n// kernel\n\n__global__ void k(int* x) { /* one\n */ x[0] = 1; }  \n";
        assert_eq!(key(source), key(rewrapped));
        assert_ne!(key(source), key(&source.replace("= 1", "= 2")));
        // Literals keep what looks like comments, and their escaped quotes.
        let literals = r#"const char* s = "a // b \" /* c */"; char q = '\''; // d"#;
        let kept = r#"const char* s = "a // b \" /* c */"; char q = '\'';"#;
        assert_eq!(super::code(literals), kept);
        assert_eq!(super::code("a /* never closed"), "a");
    }

    #[test]
    fn a_program_compiled_once_is_read_back_after() {
        let scratch = Scratch::new("again");
        let compiles = Cell::new(0);
        let first = cached_or_compiled(Some(&scratch.0), "m.ptx", counted(&compiles));
        assert_eq!((first.unwrap().as_str(), compiles.get()), (PTX, 1));
        let again = cached_or_compiled(Some(&scratch.0), "m.ptx", counted(&compiles));
        assert_eq!((again.unwrap().as_str(), compiles.get()), (PTX, 1));
        // No temporary file is left beside it.
        assert_eq!(names(&scratch.0), ["m.ptx"]);
    }

    #[test]
    fn ptx_without_a_last_newline_is_handed_back_with_one_compiled_or_read() {
        let scratch = Scratch::new("newline");
        let text = PTX.trim_end();
        let compiled = cached_or_compiled(Some(&scratch.0), "m.ptx", || Ok(text.into()));
        assert_eq!(compiled.unwrap(), PTX);
        let read = cached_or_compiled(Some(&scratch.0), "m.ptx", || Err("not asked".into()));
        assert_eq!(read.unwrap(), PTX);
        let uncached = cached_or_compiled(None, "m.ptx", || Ok(text.into()));
        assert_eq!(uncached.unwrap(), PTX);
    }

    #[test]
    fn a_file_read_is_marked_used_now() {
        let scratch = Scratch::new("used");
        write(&scratch.0, "m.ptx", PTX);
        let file = scratch.0.join("m.ptx");
        let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1 << 30);
        set_modified(&file, long_ago);
        let ptx = cached_or_compiled(Some(&scratch.0), "m.ptx", || Err("not asked".into()));
        assert_eq!(ptx.unwrap(), PTX);
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        assert!(modified > long_ago + Duration::from_secs(1 << 20));
    }

    #[test]
    fn a_file_that_does_not_check_out_is_compiled_again_and_replaced() {
        let scratch = Scratch::new("damaged");
        let file = scratch.0.join("m.ptx");
        write(&scratch.0, "m.ptx", PTX);
        let whole = std::fs::read_to_string(&file).unwrap();
        let last = whole.lines().last().unwrap();
        assert!(whole.starts_with(PTX) && last.starts_with(CHECK), "{whole}");
        let damaged = [
            PTX.to_string(),
            whole.replace("ret;", "ret; "),
            whole.replace("ret;", "ret\0"),
            whole[..whole.len() - 2].to_string(),
            whole.replace(CHECK, "// "),
            String::new(),
        ];
        for text in damaged {
            std::fs::write(&file, &text).unwrap();
            let compiles = Cell::new(0);
            let ptx = cached_or_compiled(Some(&scratch.0), "m.ptx", counted(&compiles));
            assert_eq!(ptx.unwrap(), PTX);
            assert_eq!(compiles.get(), 1, "{text:?} was taken");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), whole);
        }
    }

    #[test]
    fn an_unusable_folder_or_a_failed_compile_passes_the_compiler_through() {
        let scratch = Scratch::new("unusable");
        std::fs::write(&scratch.0, "a file where the folder would be").unwrap();
        let compiles = Cell::new(0);
        for _ in 0..2 {
            let ptx = cached_or_compiled(Some(&scratch.0), "m.ptx", counted(&compiles));
            assert_eq!(ptx.unwrap(), PTX);
        }
        assert_eq!(compiles.get(), 2);
        std::fs::remove_file(&scratch.0).unwrap();
        let failed = cached_or_compiled(Some(&scratch.0), "m.ptx", || Err("log".into()));
        assert_eq!(failed.err().as_deref(), Some("log"));
        assert!(
            !scratch.0.exists(),
            "nothing is written for a failed compile"
        );
        for _ in 0..2 {
            let ptx = cached_or_compiled(None, "m.ptx", counted(&compiles));
            assert_eq!(ptx.unwrap(), PTX);
        }
        assert_eq!(compiles.get(), 4);
    }

    #[test]
    fn a_full_folder_loses_the_files_used_longest_ago() {
        let scratch = Scratch::new("trim");
        std::fs::create_dir_all(&scratch.0).unwrap();
        let day = Duration::from_secs(86_400);
        let epoch = SystemTime::UNIX_EPOCH;
        for (i, days) in [(0, 3), (1, 1), (2, 4), (3, 2)] {
            let file = scratch.0.join(format!("m{i}.ptx"));
            std::fs::write(&file, [b'x'; 100]).unwrap();
            set_modified(&file, epoch + day * days);
        }
        std::fs::write(scratch.0.join("other"), [b'x'; 1000]).unwrap();
        // Temporary files: one left long ago, one being written now.
        for (name, when) in [(".old.tmp", epoch + day), (".new.tmp", SystemTime::now())] {
            std::fs::write(scratch.0.join(name), [b'x'; 10]).unwrap();
            set_modified(&scratch.0.join(name), when);
        }
        trim(&scratch.0, 400);
        let within = names(&scratch.0);
        assert_eq!(
            within,
            [".new.tmp", "m0.ptx", "m1.ptx", "m2.ptx", "m3.ptx", "other"]
        );
        // Over 300 bytes: down to three quarters of that, those used longest ago first.
        trim(&scratch.0, 300);
        assert_eq!(names(&scratch.0), [".new.tmp", "m0.ptx", "m2.ptx", "other"]);
    }
}
