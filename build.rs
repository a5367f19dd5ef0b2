//! Compiles the `device` crate to PTX with rustc's NVPTX backend and leaves it in
//! `OUT_DIR/gpude.ptx`, which `src/lib.rs` embeds.
//!
//! `GPUDE_PTX_ARCH` picks the architecture (default `sm_70`: PTX for Volta runs on every
//! later GPU, the driver compiling it at load time).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

type Result<T> = std::result::Result<T, String>;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let arch = env::var("GPUDE_PTX_ARCH").unwrap_or_else(|_| "sm_70".to_string());
    if !arch.starts_with("sm_") || arch[3..].parse::<u32>().is_err() {
        return Err(format!(
            "GPUDE_PTX_ARCH={arch:?} is not a GPU architecture; use sm_NN (sm_70 or later)"
        ));
    }
    println!("cargo:rerun-if-env-changed=GPUDE_PTX_ARCH");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=rust-toolchain.toml");
    println!("cargo:rerun-if-changed=device/Cargo.toml");
    rerun_dir(&root.join("device/src"))?;

    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let target_dir = out.join("ptx-target");
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args([
            "rustc",
            "--release",
            "--manifest-path",
            "device/Cargo.toml",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
            "--crate-type",
            "cdylib",
            "--target-dir",
        ])
        .arg(&target_dir);
    // The nested build must not inherit the outer one's flags or wrappers (clippy's
    // driver, coverage flags, a host target).
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_MAKEFLAGS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUSTFLAGS", format!("-C target-cpu={arch}"));
    let output = cmd
        .output()
        .map_err(|e| format!("cannot start cargo for the PTX build: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "building the device crate for nvptx64-nvidia-cuda failed.\n\
             It needs the toolchain pinned in rust-toolchain.toml with the components \
             rust-src, llvm-bitcode-linker and llvm-tools: run `rustup toolchain install` \
             in the repository.\n--- cargo said ---\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let ptx = target_dir.join("nvptx64-nvidia-cuda/release/gpude_device.ptx");
    let text = std::fs::read_to_string(&ptx)
        .map_err(|e| format!("the PTX build gave no {}: {e}", ptx.display()))?;
    for kernel in [
        "de_batch_f32_griewank",
        "de_step_f32_griewank",
        "de_batch_f64_weierstrass",
        "de_step_f64_weierstrass",
        "evaluate_f32",
    ] {
        if !text.contains(&format!(".entry {kernel}")) {
            return Err(format!("the PTX lacks the kernel {kernel}"));
        }
    }
    std::fs::write(out.join("gpude.ptx"), &text).map_err(|e| e.to_string())?;
    println!("cargo:rustc-env=GPUDE_PTX_ARCH={arch}");
    Ok(())
}

fn rerun_dir(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            rerun_dir(&path)?;
        } else {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Ok(())
}
