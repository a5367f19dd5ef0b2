//! What the binary's test files share: running `gpude` and reading what it printed.

#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_gpude");

/// Runs `gpude` with `args` and no standard input.
pub fn gpude(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the gpude binary runs")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh, empty folder `name` in the test scratch space of `group`.
pub fn scratch_dir(group: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
