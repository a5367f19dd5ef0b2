//! Compiles a user's objective crate to PTX for gpude, with the toolchain route gpude
//! itself uses for its kernels: rustc's NVPTX backend (`nvptx64-nvidia-cuda`,
//! `-Zbuild-std=core`, a `cdylib`), no CUDA installation needed.
//!
//! The objective crate is a `no_std` library (see `examples/objective-rust`) exporting
//! `gpude_objective_f32`/`_f64` (a function of one point) and/or the separable form
//! (`gpude_sep_a_T`, `gpude_sep_finish_T`, `gpude_sep_flags_T`, …;
//! `gpude_device::separable`). From the build script of the crate that runs gpude:
//!
//! ```no_run
//! // in build.rs's main: the objective crate in the folder `objective`
//! let ptx = gpude_build::Objective::new("objective")
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! println!("cargo:rustc-env=OBJECTIVE_PTX={}", ptx.display());
//! ```
//!
//! and in the program, `PtxCode::parse(include_str!(env!("OBJECTIVE_PTX")).to_string())`.
//! Inside a build script the PTX build gets its own target folder under `OUT_DIR` (a
//! nested cargo must not wait on the outer one's lock), and the crate's sources are
//! declared with `cargo:rerun-if-changed`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a compilation failed, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The symbols of which a module must define at least one (see the module docs).
pub const SYMBOLS: [&str; 4] = [
    "gpude_objective_f32",
    "gpude_objective_f64",
    "gpude_sep_a_f32",
    "gpude_sep_a_f64",
];

/// An objective crate to compile.
#[derive(Debug, Clone)]
pub struct Objective {
    dir: PathBuf,
    arch: String,
    target_dir: Option<PathBuf>,
}

impl Objective {
    /// The crate in folder `dir` (with its `Cargo.toml`), for `sm_70` (runs on Volta and
    /// later, as gpude's own kernels).
    pub fn new(dir: impl Into<PathBuf>) -> Objective {
        Objective {
            dir: dir.into(),
            arch: "sm_70".to_string(),
            target_dir: None,
        }
    }

    /// The GPU architecture, `sm_NN`.
    pub fn arch(mut self, arch: &str) -> Objective {
        self.arch = arch.to_string();
        self
    }

    /// Where cargo builds (default: `OUT_DIR/gpude-objective` in a build script, else the
    /// crate's own `target`).
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Objective {
        self.target_dir = Some(dir.into());
        self
    }

    /// Compiles the crate and returns the path of its PTX module, after checking that it
    /// defines at least one of [`SYMBOLS`].
    pub fn compile(&self) -> Result<PathBuf, Error> {
        if !self.arch.starts_with("sm_") || self.arch[3..].parse::<u32>().is_err() {
            return Err(Error(format!(
                "arch {:?} is not a GPU architecture: use sm_NN (sm_70 or later)",
                self.arch
            )));
        }
        let manifest = self.dir.join("Cargo.toml");
        let lib = library_name(&manifest)?;
        let in_build_script = std::env::var_os("OUT_DIR").is_some();
        let target = match (&self.target_dir, std::env::var_os("OUT_DIR")) {
            (Some(t), _) => t.clone(),
            (None, Some(out)) => PathBuf::from(out).join("gpude-objective"),
            (None, None) => self.dir.join("target"),
        };
        if in_build_script {
            println!("cargo:rerun-if-changed={}", manifest.display());
            println!("cargo:rerun-if-changed={}", self.dir.join("src").display());
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(&self.dir)
            .args([
                "rustc",
                "--release",
                "--target",
                "nvptx64-nvidia-cuda",
                "-Zbuild-std=core",
                "--crate-type",
                "cdylib",
                "--target-dir",
            ])
            .arg(&target)
            .arg("--manifest-path")
            .arg(&manifest);
        // The outer build's flags and wrappers are for the host, not for this build.
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
        cmd.env("RUSTFLAGS", format!("-C target-cpu={}", self.arch));
        let out = cmd
            .output()
            .map_err(|e| Error(format!("cannot start cargo: {e}")))?;
        if !out.status.success() {
            return Err(Error(format!(
                "compiling {} for nvptx64-nvidia-cuda failed. It needs a nightly toolchain \
                 with the components rust-src, llvm-bitcode-linker and llvm-tools (gpude's \
                 rust-toolchain.toml pins one).\n--- cargo said ---\n{}",
                self.dir.display(),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let ptx = target.join(format!("nvptx64-nvidia-cuda/release/{lib}.ptx"));
        let text = std::fs::read_to_string(&ptx)
            .map_err(|e| Error(format!("the build gave no {}: {e}", ptx.display())))?;
        if !SYMBOLS.iter().any(|s| defines(&text, s)) {
            return Err(Error(format!(
                "{} defines none of {}: export the objective with #[unsafe(no_mangle)] \
                 (see examples/objective-rust)",
                ptx.display(),
                SYMBOLS.join(", ")
            )));
        }
        Ok(ptx)
    }
}

/// Does PTX `text` define function `name` (`.visible .func … name(`)?
fn defines(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with(".visible .func")
            && l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == name)
    })
}

/// The library's file name (`[lib] name`, else the package name with `-` as `_`).
fn library_name(manifest: &Path) -> Result<String, Error> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| Error(format!("cannot read {}: {e}", manifest.display())))?;
    let doc: toml::Table = text
        .parse()
        .map_err(|e| Error(format!("{} is not valid TOML: {e}", manifest.display())))?;
    let lib = doc
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(|n| n.as_str());
    let package = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str());
    match lib.or(package) {
        Some(n) => Ok(n.replace('-', "_")),
        None => Err(Error(format!(
            "{} names no package: an objective crate needs [package] name",
            manifest.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_named() {
        let e = Objective::new(".").arch("70").compile().unwrap_err();
        assert!(e.to_string().contains("\"70\""), "{e}");
        let e = Objective::new("/nonexistent/objective")
            .compile()
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("cannot read /nonexistent/objective/Cargo.toml"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("gpude-build-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[dependencies]\n").unwrap();
        let e = Objective::new(&dir).compile().unwrap_err();
        assert!(e.to_string().contains("names no package"), "{e}");
        std::fs::write(dir.join("Cargo.toml"), "[package\n").unwrap();
        let e = Objective::new(&dir).compile().unwrap_err();
        assert!(e.to_string().contains("not valid TOML"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn library_names() {
        let dir = std::env::temp_dir().join(format!("gpude-build-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let m = dir.join("Cargo.toml");
        std::fs::write(&m, "[package]\nname = \"my-objective\"\n").unwrap();
        assert_eq!(library_name(&m).unwrap(), "my_objective");
        std::fs::write(&m, "[package]\nname = \"a\"\n[lib]\nname = \"b_c\"\n").unwrap();
        assert_eq!(library_name(&m).unwrap(), "b_c");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(defines(
            ".visible .func  (.param .b32 r) gpude_sep_a_f32(",
            "gpude_sep_a_f32"
        ));
        assert!(!defines(
            ".extern .func (.param .b32 r) gpude_sep_a_f32",
            "gpude_sep_a_f32"
        ));
    }
}
