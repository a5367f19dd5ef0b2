//! The CUDA engine: loads the embedded PTX with cudarc and drives the kernels of
//! `gpude_device::kernels`.
//!
//! All launch `unsafe` lives in this folder; each launch is preceded by checks of the
//! buffer lengths it relies on.
//!
//! - `engine`: the GPU, its streams and the kernels' modules; `jobs`: whole jobs in
//!   the layout their mode asks for; `devices`: the host's GPUs and their links;
//!   `kernels`: which kernel runs a job, and its
//!   register cap; `launch`: a launch's parameters.
//! - The layouts: `batch` (with the choice of its kernel, `batch_kernel`, and the
//!   resident and pipelined plans, `resident`), `grid` (the whole-GPU layouts),
//!   `adaptive` (the adaptive kernels), `callback` (host callbacks).
//! - Runs under control: the control block (`control`), the state that moves between
//!   host and device (`state`), and lists of runs (`entries`).
//! - Islands (`islands`): archipelagos of DE populations or particle swarms, with the
//!   migration kernel between launches.
//! - Linked objectives (`external`, [`ptx_inline`]) and the ceilings' measurements
//!   (`ceilings`).

pub(crate) mod adaptive;
mod batch;
mod batch_kernel;
mod callback;
mod ceilings;
pub(crate) mod control;
mod devices;
mod engine;
pub(crate) mod entries;
mod external;
mod grid;
mod islands;
mod jobs;
mod kernels;
mod launch;
pub mod ptx_inline;
mod resident;
pub(crate) mod state;

pub use adaptive::gpu_check;
pub(crate) use batch::compatible;
pub use batch_kernel::BatchKernel;
pub use ceilings::Ceilings;
pub use devices::{GpuInfo, PeerLink, gpu_count, gpus, peer_links};
pub(crate) use engine::cuda_err;
pub use engine::{CudaEngine, FinalPopulation, MAX_STREAMS, Mode, driver_present};
pub use external::{check_objective, objective_symbol};
pub(crate) use islands::splits as archipelago_splits;
pub(crate) use islands::unsupported as islands_unsupported;
pub use islands::{run_across_entries, run_archipelago_across};
pub use jobs::Costs;
pub use kernels::{GpuReal, Kernel};
