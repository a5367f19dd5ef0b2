//! The host's memory: what a run may take of it.

use crate::error::{Error, Result};

/// Refuses `needed` bytes when they exceed what the host has available (less a
/// sixteenth kept for everything else). When the available memory cannot be read, the
/// check passes.
pub fn check_memory(needed: u64) -> Result<()> {
    match available_memory() {
        Some(free) if needed > free - free / 16 => Err(Error::OutOfMemory {
            memory: "host",
            needed,
            free,
        }),
        _ => Ok(()),
    }
}

/// The host memory available to this process: the system's available memory, bounded
/// by the control group's limit when there is one (Linux); `None` elsewhere.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let system = meminfo.as_deref().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|kb| kb.saturating_mul(1024))
    });
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    // cgroup v2: `memory.max` is `max` when unlimited (then it does not parse).
    let group = read("/sys/fs/cgroup/memory.max")
        .map(|max| max.saturating_sub(read("/sys/fs/cgroup/memory.current").unwrap_or(0)));
    match (system, group) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
