//! gpude's host side: problems, jobs, the CPU and CUDA engines, batches and results.
//!
//! The CUDA engine needs the PTX modules that the root crate's build script makes; the
//! `gpude` crate passes them in (`gpude::Solver` does this for you).

pub mod cpu;
pub mod cuda;
pub mod error;
pub mod gpus;
pub mod job;
pub mod run;
mod solver;

/// The linear-algebra crate of the results' vectors (`RunResult::best_x`), so that users need no
/// dependency of their own to name its types.
pub use nalgebra;

// Where callers found the job's, the CPU engine's and the runs' modules before the
// folders held them.
pub use cpu::{islands, pso, split};
pub use job::{cec2017, config, objective, problem, ptx_objective};

pub use cpu::ga::Ga;
pub use cpu::islands::{
    Algorithm, Archipelago, ArchipelagoBuilder, ArchipelagoResult, Emigrants, Replacement, Topology,
};
pub use cpu::pso::Pso;
pub use cuda::{BatchKernel, Ceilings, CudaEngine, FinalPopulation, MAX_STREAMS, Mode};
pub use error::{Error, Result};
pub use gpude_device::{BoundPolicy, Crossover, Formula, Function, Strategy, ThesisVariant};
pub use gpus::Gpus;
pub use job::adaptive::Adaptive;
pub use job::config::{Job, JobBuilder};
pub use job::objective::{BatchObjective, Objective, SeparableCpu};
pub use job::precision::Precision;
pub use job::problem::{FUNCTIONS, FunctionInfo, Problem};
pub use run::archipelago::{ArchipelagoRan, IslandsSaver, IslandsWatch};
pub use run::result::{RunLayout, RunResult, Termination};
pub use run::stops::Stops;
pub use solver::{Backend, Solver, SolverOptions};
// The checkpoints and results, where callers found them before `run` held them.
pub use run::{checkpoint, result};

// The PTX inliner, where callers found it before the CUDA engine held it.
pub use cuda::ptx_inline;
