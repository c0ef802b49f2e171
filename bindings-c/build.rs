//! Writes the C header `include/rlmeta.h` from the crate's `extern "C"` items (cbindgen, pinned).
//! The header is committed; CI rebuilds and runs `git diff --exit-code` on it to catch drift.
//! Set `RLMETA_SKIP_CBINDGEN=1` to leave the header alone (e.g. a read-only source tree).

use std::env;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=RLMETA_SKIP_CBINDGEN");
    if env::var_os("RLMETA_SKIP_CBINDGEN").is_some() {
        return ExitCode::SUCCESS;
    }
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let config = match cbindgen::Config::from_file(dir.join("cbindgen.toml")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("bindings-c/cbindgen.toml: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
    {
        Ok(bindings) => {
            bindings.write_to_file(dir.join("include").join("rlmeta.h"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cbindgen failed: {e}");
            ExitCode::FAILURE
        }
    }
}
