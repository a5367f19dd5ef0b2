//! Which kernel a batch launch uses (global memory, resident in shared memory, or
//! pipelined), as the engine's settings choose it, and the device's shared-memory
//! limits that the last two live within.

use crate::error::{Error, Result};

/// Which kernel a batch launch uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchKernel {
    /// The resident kernel when the population fits in a block's shared memory (and its
    /// family has one); else, in single precision, the pipelined kernel where it can
    /// serve the job; else the global-memory kernel.
    Auto,
    /// Always the kernel that reads the population from global memory.
    Global,
    /// Always the resident kernel: a job it cannot serve is refused.
    Shared,
    /// Always the pipelined kernel (the population in global memory, each pass's rows
    /// copied into shared memory with `cp.async` while the pass before is evaluated):
    /// rows of one round (D ≤ 128) on sm_80 or later; a job it cannot serve is refused.
    Pipelined,
}

/// The choices, as the error messages list them.
const CHOICES: &str = "auto, global, shared or pipelined";

impl BatchKernel {
    pub const ALL: [BatchKernel; 4] = [
        BatchKernel::Auto,
        BatchKernel::Global,
        BatchKernel::Shared,
        BatchKernel::Pipelined,
    ];

    pub fn parse(s: &str) -> Result<BatchKernel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(BatchKernel::Auto),
            "global" => Ok(BatchKernel::Global),
            "shared" => Ok(BatchKernel::Shared),
            "pipelined" => Ok(BatchKernel::Pipelined),
            other => Err(Error::invalid(
                "batch kernel",
                format!("{other:?}"),
                CHOICES,
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BatchKernel::Auto => "auto",
            BatchKernel::Global => "global",
            BatchKernel::Shared => "shared",
            BatchKernel::Pipelined => "pipelined",
        }
    }

    /// The choice named by the environment variable `GPUDE_BATCH_KERNEL` (auto when it
    /// is not set).
    pub fn from_env() -> Result<BatchKernel> {
        match std::env::var("GPUDE_BATCH_KERNEL") {
            Ok(v) => BatchKernel::parse(&v)
                .map_err(|_| Error::invalid("GPUDE_BATCH_KERNEL", format!("{v:?}"), CHOICES)),
            Err(_) => Ok(BatchKernel::Auto),
        }
    }
}

/// The cap on a resident block's spare rows named by `GPUDE_SHARED_SPARE`: a number of
/// rows, or `all` (as many as fit, the default).
pub(crate) fn spare_cap_from_env() -> Result<Option<u32>> {
    match std::env::var("GPUDE_SHARED_SPARE") {
        Ok(v) => parse_spare_cap(&v),
        Err(_) => Ok(None),
    }
}

pub(crate) fn parse_spare_cap(v: &str) -> Result<Option<u32>> {
    let t = v.trim();
    if t.eq_ignore_ascii_case("all") {
        return Ok(None);
    }
    t.parse::<u32>().map(Some).map_err(|_| {
        Error::invalid(
            "GPUDE_SHARED_SPARE",
            format!("{v:?}"),
            "a number of rows (0 or more) or all",
        )
    })
}

/// The shared-memory limits of a device, read when the engine opens it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SharedLimits {
    /// The most dynamic shared memory a block may have after opting in (bytes).
    pub(crate) per_block_optin: u32,
    /// Shared memory per multiprocessor (bytes).
    pub(crate) per_sm: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_kernel_names_parse_back() {
        for k in BatchKernel::ALL {
            assert_eq!(BatchKernel::parse(k.name()).unwrap(), k);
        }
        assert_eq!(BatchKernel::parse(" Shared ").unwrap(), BatchKernel::Shared);
        let e = BatchKernel::parse("smem").unwrap_err().to_string();
        assert!(
            e.contains("smem") && e.contains("auto, global, shared or pipelined"),
            "{e}"
        );
    }

    #[test]
    fn spare_caps_parse() {
        assert_eq!(parse_spare_cap("all").unwrap(), None);
        assert_eq!(parse_spare_cap(" 0 ").unwrap(), Some(0));
        assert_eq!(parse_spare_cap("96").unwrap(), Some(96));
        let e = parse_spare_cap("-1").unwrap_err().to_string();
        assert!(e.contains("GPUDE_SHARED_SPARE") && e.contains("-1"), "{e}");
    }
}
