//! The one error type of gpude.

use std::fmt;
use thiserror::Error;

/// Everything that can go wrong, each naming the bad value and what is allowed.
#[derive(Debug, Error)]
pub enum Error {
    /// A setting is out of its range.
    #[error("{name} = {value} is not allowed: {allowed}")]
    InvalidParameter {
        name: &'static str,
        value: String,
        allowed: String,
    },
    /// A name (function, strategy, …) that gpude does not know.
    #[error("unknown {kind} {name:?}; known: {known}")]
    UnknownName {
        kind: &'static str,
        name: String,
        known: String,
    },
    /// Points or job files that cannot be read.
    #[error("{what}: {message}")]
    Input { what: String, message: String },
    /// A run ended without a finite best value or point (see
    /// [`Termination::NonFinite`](crate::Termination::NonFinite)).
    #[error("the result is not finite: {what}")]
    NonFinite { what: String },
    /// No usable CUDA driver or GPU.
    #[error("CUDA is not available: {0}")]
    CudaUnavailable(String),
    /// A job does not fit in the memory (`GPU` or `host`) that is free.
    #[error(
        "the job needs {} of {memory} memory but only {} is available; use a smaller population, dimension or number of runs",
        bytes(*needed),
        bytes(*free)
    )]
    OutOfMemory {
        memory: &'static str,
        needed: u64,
        free: u64,
    },
    /// A CUDA driver call or a kernel failed; the driver's error is kept as the source.
    #[error("CUDA error in {context}: {source}")]
    Driver {
        context: String,
        #[source]
        source: cudarc::driver::DriverError,
    },
    /// The GPU cannot run a job as asked (no block fits, a result out of range).
    #[error("CUDA error in {context}: {message}")]
    Cuda { context: String, message: String },
    /// The embedded PTX lacks a kernel.
    #[error("the PTX has no kernel {name}")]
    MissingKernel { name: String },
    /// A user's objective failed during a run: a callback panicked or returned the
    /// wrong number of values.
    #[error("{message}")]
    Objective { message: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn invalid(
        name: &'static str,
        value: impl ToString,
        allowed: impl ToString,
    ) -> Self {
        Error::InvalidParameter {
            name,
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }
}

/// A number for a message: plain for ordinary magnitudes, scientific for tiny or huge
/// ones (so that 1e300 is not 301 digits long), in the shortest form that reads back.
pub fn num<T: Copy + fmt::Display + fmt::LowerExp + Into<f64>>(v: T) -> String {
    let a = v.into().abs();
    if a == 0.0 || !a.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// The most characters of a user's text that a message repeats.
pub const MAX_ECHO: usize = 60;

/// User text for a message: at most [`MAX_ECHO`] characters, the rest elided.
pub fn clip(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_ECHO {
        return s.to_string();
    }
    let head: String = s.chars().take(MAX_ECHO - 1).collect();
    format!("{head}… ({n} characters)")
}

/// A byte count for a message: `16.0 GiB (17179869184 bytes)`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {} ({n} bytes)", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_errors_keep_their_source() {
        let e = Error::Driver {
            context: "launching".into(),
            source: cudarc::driver::DriverError(
                cudarc::driver::sys::CUresult::CUDA_ERROR_LAUNCH_FAILED,
            ),
        };
        let source = std::error::Error::source(&e).expect("a source");
        let driver = source
            .downcast_ref::<cudarc::driver::DriverError>()
            .expect("the driver's own error");
        assert_eq!(
            driver.0,
            cudarc::driver::sys::CUresult::CUDA_ERROR_LAUNCH_FAILED
        );
    }

    #[test]
    fn numbers_stay_short() {
        assert_eq!(num(1e300), "1e300");
        assert_eq!(num(-1.5), "-1.5");
        assert_eq!(num(f64::NEG_INFINITY), "-inf");
        assert_eq!(num(1.0000001f32), "1.0000001");
        assert_eq!(num(f32::MAX), "3.4028235e38");
        assert!(num(f64::MIN_POSITIVE).len() < 30);
    }

    #[test]
    fn user_text_is_clipped() {
        assert_eq!(clip("rosenbrock"), "rosenbrock");
        let long = "x".repeat(10_000);
        let c = clip(&long);
        assert!(c.starts_with(&"x".repeat(MAX_ECHO - 1)));
        assert!(c.ends_with("… (10000 characters)"), "{c}");
        assert!(c.chars().count() < MAX_ECHO + 25);
    }

    #[test]
    fn byte_counts_name_the_unit() {
        assert_eq!(bytes(512), "512 bytes");
        assert_eq!(bytes(16 << 30), "16.0 GiB (17179869184 bytes)");
    }
}
