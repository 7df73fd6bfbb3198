//! Build script shared by the crates that link libtorch (model, train, cli).
//!
//! `torch-sys` reports the libtorch library directory as `DEP_TCH_LIBTORCH_LIB`
//! (its `links = "tch"` metadata). We embed it as an rpath so binaries and
//! test executables run without `LD_LIBRARY_PATH`, and link `libtorch_cuda`
//! with `--no-as-needed` so CUDA is not silently dropped (tch-rs issues #329,
//! #566, #907).
//!
//! `MARTIAN_ZERO_RPATH` replaces the embedded rpath (e.g. `$ORIGIN`, or empty
//! for none): `scripts/gpu-check-prepare` builds a binary that finds another
//! machine's libtorch through `LD_LIBRARY_PATH`, not this machine's path.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-env-changed=MARTIAN_ZERO_RPATH");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        let rpath = std::env::var("MARTIAN_ZERO_RPATH").unwrap_or_else(|_| dir.clone());
        if !rpath.is_empty() {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
        }
        let cuda = std::path::Path::new(&dir).join("libtorch_cuda.so");
        if cuda.exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed,{},--as-needed", cuda.display());
        }
    }
}
