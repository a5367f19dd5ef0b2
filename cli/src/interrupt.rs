//! SIGINT and SIGTERM during a run: the first sets a flag that the engine polls (the CPU
//! engine at every generation boundary; the CUDA engine's host loop, which passes it to
//! the kernels through their control block), the run stops there, reports and saves.
//!
//! Signals that come within [`GRACE`] of the first count as that one: `timeout -s INT`,
//! Slurm and systemd signal the process and then its whole process group, so gpude often
//! gets two signals microseconds apart, and the second must not cost the run. A signal
//! after the grace window ends the process at once with [`crate::EXIT_INTERRUPTED`]
//! (a user who presses Ctrl-C again because the save takes too long).
//!
//! The handler is registered through `signal-hook`'s low-level `register` and does only
//! async-signal-safe work: it reads the monotonic clock (`clock_gettime` is on POSIX's
//! list of async-signal-safe functions), compares and swaps an atomic holding the time
//! of the first signal, stores the flag, and calls `_exit`. It runs when the signal
//! arrives, so the window is measured between arrivals exactly; a thread that waited for
//! signals would see them only when it was next scheduled, which on a machine busy with
//! the run could be late by more than the window. The handlers are installed only around
//! runs: elsewhere a signal ends gpude as usual.

use super::{CliError, EXIT_INTERRUPTED, Result};
use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long after the first signal further ones count as the same interrupt.
pub const GRACE: Duration = Duration::from_secs(1);

/// The flag, once the handlers are installed.
static FLAG: Mutex<Option<Arc<AtomicBool>>> = Mutex::new(None);

/// When the first signal came, in nanoseconds of the monotonic clock (at least 1);
/// 0 until then.
static FIRST: AtomicU64 = AtomicU64::new(0);

/// The flag that SIGINT and SIGTERM set (the handlers installed on the first call).
pub fn flag() -> Result<Arc<AtomicBool>> {
    let mut installed = FLAG.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = &*installed {
        return Ok(f.clone());
    }
    let f = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        let mine = f.clone();
        // SAFETY: the action is async-signal-safe: it touches atomics, reads the clock
        // with clock_gettime and may call _exit; it neither allocates nor locks.
        unsafe { signal_hook::low_level::register(sig, move || on_signal(&mine)) }
            .map_err(|e| CliError::runtime(format!("cannot handle interrupts: {e}")))?;
    }
    *installed = Some(f.clone());
    Ok(f)
}

/// What a signal does: the first sets `flag`, later ones within [`GRACE`] of it do
/// nothing more, and one after that ends the process.
fn on_signal(flag: &AtomicBool) {
    let now = now_ns();
    match FIRST.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => flag.store(true, Ordering::SeqCst),
        Err(first) => {
            if late(first, now) {
                // SAFETY: _exit is async-signal-safe; the run's partial state is lost,
                // which is what a repeated interrupt asks for.
                unsafe { libc::_exit(EXIT_INTERRUPTED as i32) }
            }
        }
    }
}

/// Is a signal at `now` past the grace window of the first, at `first`? A signal
/// handled on another thread may read the clock before the first did: it is not late.
fn late(first: u64, now: u64) -> bool {
    now.saturating_sub(first) > GRACE.as_nanos() as u64
}

/// The monotonic clock in nanoseconds, at least 1 (0 means "no signal yet").
fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime is async-signal-safe and writes only `t`; CLOCK_MONOTONIC
    // exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_within_the_window_are_not_late() {
        let first = 5_000_000_000;
        assert!(!late(first, first));
        assert!(!late(first, first + 999_999_999));
        assert!(!late(first, first + 1_000_000_000));
        assert!(late(first, first + 1_000_000_001));
        // Read on another thread before the first signal's clock reading.
        assert!(!late(first, first - 10));
    }

    #[test]
    fn the_clock_moves_forward() {
        let a = now_ns();
        std::thread::sleep(Duration::from_millis(2));
        let b = now_ns();
        assert!(a >= 1 && b > a, "{a} {b}");
    }
}
