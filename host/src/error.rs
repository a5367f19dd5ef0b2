//! The one error type of gpude.

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
    /// No usable CUDA driver or GPU.
    #[error("CUDA is not available: {0}")]
    CudaUnavailable(String),
    /// A job does not fit in the GPU's free memory.
    #[error("the job needs {needed} bytes of GPU memory but {free} bytes are free")]
    OutOfMemory { needed: u64, free: u64 },
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
}
