//! Build script of the CLI: the rpath and CUDA link arguments of
//! `build/rpath.rs` (shared by the crates that link libtorch; repeated here
//! because a build script is one file; `MARTIAN_ZERO_RPATH` replaces the
//! rpath there and here), plus what `--version` reports:
//!
//! * `MARTIAN_ZERO_GIT_COMMIT`: `git rev-parse --short=12 HEAD` of the source
//!   tree (`unknown` outside a git checkout; the environment variable of the
//!   same name, when set, wins);
//! * `MARTIAN_ZERO_LIBTORCH`: the version of the libtorch linked, read from
//!   the PyTorch install (`version.py`) or the libtorch distribution
//!   (`build-version`) beside the library directory that torch-sys reports.
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-env-changed=MARTIAN_ZERO_GIT_COMMIT");
    println!("cargo:rerun-if-env-changed=MARTIAN_ZERO_RPATH");
    let lib = std::env::var("DEP_TCH_LIBTORCH_LIB").ok();
    if let Some(dir) = &lib {
        // `MARTIAN_ZERO_RPATH` replaces the rpath (`$ORIGIN`, or empty for none), as in build/rpath.rs.
        let rpath = std::env::var("MARTIAN_ZERO_RPATH").unwrap_or_else(|_| dir.clone());
        if !rpath.is_empty() {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
        }
        let cuda = Path::new(dir).join("libtorch_cuda.so");
        if cuda.exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed,{},--as-needed", cuda.display());
        }
    }
    println!("cargo:rustc-env=MARTIAN_ZERO_GIT_COMMIT={}", git_commit());
    let torch = lib.as_deref().and_then(|d| libtorch_version(Path::new(d))).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MARTIAN_ZERO_LIBTORCH={torch}");
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

/// The commit of the source tree; the build reruns when HEAD or its branch moves.
fn git_commit() -> String {
    if let Ok(c) = std::env::var("MARTIAN_ZERO_GIT_COMMIT") {
        return c;
    }
    // Files whose change means another commit (in a worktree, HEAD is per
    // worktree). Only files that exist: cargo takes a missing one as changed
    // on every build, which would rebuild this crate each time (a packed
    // branch has no file of its own; `packed-refs` then holds it).
    let watch = |rel: &str| {
        if let Some(p) = git(&["rev-parse", "--git-path", rel]).filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={p}");
        }
    };
    watch("HEAD");
    watch("packed-refs");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(&branch);
    }
    git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into())
}

/// `2.13.0+cu130` from `<torch>/version.py` (a PyTorch install) or
/// `<libtorch>/build-version` (a libtorch distribution), `<torch>/lib` being `lib`.
fn libtorch_version(lib: &Path) -> Option<String> {
    let root = lib.parent()?;
    let py = root.join("version.py");
    println!("cargo:rerun-if-changed={}", py.display());
    if let Ok(text) = std::fs::read_to_string(&py) {
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("__version__") {
                let v = v.trim_start_matches([' ', '=']).trim().trim_matches(['\'', '"']);
                if !v.is_empty() {
                    return Some(v.to_string());
                }
            }
        }
    }
    let bv = root.join("build-version");
    std::fs::read_to_string(bv).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}
