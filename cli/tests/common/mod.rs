//! What the binary's test files share: running `gpude` and reading what it printed.

#![allow(dead_code)] // each test file uses its own part

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_gpude");

/// Runs `gpude` with `args` and no standard input.
pub fn gpude(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the gpude binary runs")
}

/// Runs `cmd` (the binary with its arguments and environment) with `input` on its
/// standard input.
pub fn with_stdin(mut cmd: Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gpude binary runs");
    let written = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes());
    // gpude may refuse its arguments and exit before it reads stdin: a closed pipe is
    // then the expected outcome, and the exit status tells the rest.
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing stdin: {e}"
        );
    }
    child.wait_with_output().expect("gpude finishes")
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
