//! SIGINT and SIGTERM during a run: the first sets a flag that the engine polls (the CPU
//! engine at every generation boundary; the CUDA engine's host loop, which passes it to
//! the kernels through their control block), the run stops there, reports and saves; a
//! second one ends the process at once with [`crate::EXIT_INTERRUPTED`].
//!
//! The handlers come from `signal-hook`, whose `flag` module does only an atomic store
//! in the handler (async-signal-safe) and supports exiting on a repeated signal. They
//! are installed only around runs: elsewhere a signal ends gpude as usual.

use super::{CliError, EXIT_INTERRUPTED, Result};
use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The flag that SIGINT and SIGTERM set (the handlers installed on the first call).
pub fn flag() -> Result<Arc<AtomicBool>> {
    if let Some(f) = FLAG.get() {
        return Ok(f.clone());
    }
    let f = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // The order matters: the conditional exit sees the flag as the earlier signal
        // left it, so only a second signal exits.
        signal_hook::flag::register_conditional_shutdown(sig, EXIT_INTERRUPTED as i32, f.clone())
            .and_then(|_| signal_hook::flag::register(sig, f.clone()))
            .map_err(|e| CliError::runtime(format!("cannot handle interrupts: {e}")))?;
    }
    Ok(FLAG.get_or_init(|| f).clone())
}
