//! SIGINT and SIGTERM on a real `gpude run` (CPU backend): signals that come together
//! count as one interrupt (the run stops, reports and exits 130); a signal after the
//! grace window ends the process at once.

mod common;

use common::{BIN, scratch_dir, text};
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Starts a long sphere run of dimension `dim` and population `pop` in `dir`, with a
/// JSON report, that saves every 20 generations to `run.ckpt` (in its own process group
/// when `own_group`), and waits for the first save: by then the handlers are installed.
fn start(dir: &Path, dim: &str, pop: &str, own_group: bool) -> Child {
    std::fs::create_dir_all(dir).expect("folder");
    let ckpt = dir.join("run.ckpt");
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir)
        .args([
            "run",
            "--function",
            "sphere",
            "--dim",
            dim,
            "--pop",
            pop,
            "--gens",
            "100000000",
            "--backend",
            "cpu",
            "--seed",
            "3",
            "--checkpoint",
            "run.ckpt",
            "--checkpoint-every",
            "20",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if own_group {
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().expect("the gpude binary runs");
    let t = Instant::now();
    while !ckpt.exists() {
        if let Some(status) = child.try_wait().expect("waiting") {
            panic!("gpude ended before its first save: {status}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no checkpoint was written"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

/// Sends `sig` to process (or, negative, process group) `pid`.
fn kill(pid: i32, sig: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    let r = unsafe { libc::kill(pid, sig) };
    assert_eq!(
        r,
        0,
        "kill({pid}, {sig}): {}",
        std::io::Error::last_os_error()
    );
}

/// Checks the end of an interrupted `--json` run: exit code 130, the partial result on
/// stdout, the interrupt reported and saved.
fn stopped_with_result(o: &Output, try_no: usize) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "try {try_no}: stderr:\n{err}");
    assert!(
        err.contains("interrupted at generation"),
        "try {try_no}: {err}"
    );
    assert!(err.contains("gpude resume run.ckpt"), "try {try_no}: {err}");
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("try {try_no}: no JSON result on stdout ({e})"));
    let r = &v["results"][0];
    assert_eq!(r["termination"], "stopped", "try {try_no}: {r}");
    assert!(r["generations"].as_u64().expect("generations") >= 20, "{r}");
    assert!(r["best_f"].as_f64().expect("best_f").is_finite(), "{r}");
}

/// Gaps between the signals of one interrupt, all well within the grace window: none,
/// where the kernel may merge them into one pending signal, and longer ones, where
/// each is handled on its own.
const GAPS: [Duration; 5] = [
    Duration::ZERO,
    Duration::from_millis(1),
    Duration::from_millis(5),
    Duration::from_millis(20),
    Duration::from_millis(200),
];

#[test]
fn two_signals_back_to_back_count_as_one() {
    for (k, gap) in GAPS.into_iter().enumerate() {
        let dir = scratch_dir("signals", &format!("pair-{k}"));
        let child = start(&dir, "30", "64", false);
        let pid = child.id() as i32;
        let sig = if k % 2 == 0 {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        kill(pid, sig);
        std::thread::sleep(gap);
        kill(pid, sig);
        let o = child.wait_with_output().expect("gpude finishes");
        stopped_with_result(&o, k);
    }
}

#[test]
fn signals_to_the_process_group_count_as_one() {
    // As `timeout -s INT`, Slurm and systemd do: the process, then its whole group.
    for (k, gap) in GAPS.into_iter().enumerate() {
        let dir = scratch_dir("signals", &format!("group-{k}"));
        let child = start(&dir, "30", "64", true);
        let pid = child.id() as i32;
        kill(pid, libc::SIGINT);
        std::thread::sleep(gap);
        kill(-pid, libc::SIGINT);
        kill(-pid, libc::SIGINT);
        let o = child.wait_with_output().expect("gpude finishes");
        stopped_with_result(&o, k);
    }
}

#[test]
fn a_signal_after_the_grace_window_ends_the_process_at_once() {
    // A best point of 20000 components printed as JSON is far more than a pipe holds:
    // after the first signal gpude stops the run, saves and then blocks writing its
    // result, because nothing reads its stdout. Only a later signal can end it.
    let dir = scratch_dir("signals", "late");
    let mut child = start(&dir, "20000", "8", false);
    let pid = child.id() as i32;
    kill(pid, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        child.try_wait().expect("waiting").is_none(),
        "gpude should still be writing its result"
    );
    kill(pid, libc::SIGINT);
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting") {
            break s;
        }
        if t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("a signal after the grace window did not end gpude");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130), "{status}");
    // It ended inside the write: the message that follows the result never came.
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .expect("stderr is piped")
        .read_to_string(&mut err)
        .expect("stderr");
    assert!(!err.contains("interrupted at generation"), "{err}");
}

/// Runs `gpude run ARGS` (CPU backend, no --checkpoint) in `dir`, interrupts it with
/// SIGINT after a wait and returns what it printed. A signal that came before the
/// handlers were installed ends gpude by the signal: then it tries again, waiting longer.
fn interrupted_in(dir: &Path, args: &[&str]) -> Output {
    std::fs::create_dir_all(dir).expect("folder");
    let mut waited = 300;
    loop {
        let child = Command::new(BIN)
            .current_dir(dir)
            .args([
                "run",
                "--backend",
                "cpu",
                "--gens",
                "100000000",
                "--seed",
                "3",
            ])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the gpude binary runs");
        std::thread::sleep(Duration::from_millis(waited));
        kill(child.id() as i32, libc::SIGINT);
        let o = child.wait_with_output().expect("gpude finishes");
        if o.status.code().is_none() && waited < 5000 {
            waited *= 2;
            continue;
        }
        return o;
    }
}

/// The number of bytes in a message's `… (N bytes)`.
fn bytes_in(message: &str) -> u64 {
    let (before, _) = message
        .split_once(" bytes)")
        .unwrap_or_else(|| panic!("no size in {message}"));
    let digits = &before[before.rfind('(').expect("(") + 1..];
    digits.parse().expect("a byte count")
}

#[test]
fn an_interrupted_run_too_large_for_the_default_file_saves_nothing() {
    // Np·D = 8400·4096 values in f64: the population alone takes 262.5 MiB, more than
    // the 256 MiB that ./gpude.ckpt may take.
    let dir = scratch_dir("signals", "too-large");
    let o = interrupted_in(
        &dir,
        &[
            "--function",
            "sphere",
            "--dim",
            "4096",
            "--pop",
            "8400",
            "--precision",
            "f64",
            "--json",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "stderr:\n{err}");
    assert!(err.contains("interrupted at generation"), "{err}");
    assert!(err.contains("nothing saved"), "{err}");
    assert!(err.contains("the checkpoint would take"), "{err}");
    assert!(err.contains("more than the 256 MiB"), "{err}");
    assert!(err.contains("--checkpoint FILE"), "{err}");
    let size = bytes_in(&err);
    assert!(size > 8400 * 4096 * 8, "{size}");
    // The partial result is printed; nothing is written, not even a temporary file.
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["results"][0]["termination"], "stopped", "{v}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("folder")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(left.is_empty(), "files written: {left:?}");
}

#[test]
fn many_runs_of_a_large_dimension_save_their_bounds_once() {
    // 20 runs with 2^20 bounds each: stored once per run, the file would take 320 MiB,
    // more than ./gpude.ckpt may take; the runs share them, so it holds one copy and the
    // one started population.
    let dir = scratch_dir("signals", "many-runs");
    let o = interrupted_in(
        &dir,
        &[
            "--function",
            "sphere",
            "--dim",
            "1048576",
            "--pop",
            "4",
            "--runs",
            "20",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "stderr:\n{err}");
    assert!(err.contains("saved to gpude.ckpt"), "{err}");
    let ckpt = dir.join("gpude.ckpt");
    let size = std::fs::metadata(&ckpt).expect("gpude.ckpt written").len();
    // Bounds 16 MiB, one population of 4·2^20 f32 (16 MiB), 20 small job records.
    assert!(size < 40 << 20, "{size} bytes");
    let entries = gpude::checkpoint::decode(&std::fs::read(&ckpt).expect("read"))
        .expect("a valid checkpoint");
    assert_eq!(entries.len(), 20);
    let streams: Vec<u32> = entries.iter().map(|e| e.job().stream()).collect();
    assert_eq!(streams, (0..20).collect::<Vec<u32>>());
    assert!(entries.iter().all(|e| e.job().dim() == 1 << 20));
}
