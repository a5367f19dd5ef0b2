//! gpude's host side: problems, jobs, the CPU and CUDA engines, batches and results.
//!
//! The CUDA engine needs the PTX modules that the root crate's build script makes; the
//! `gpude` crate passes them in (`gpude::Solver` does this for you).

pub mod adaptive;
pub mod cec2017;
pub mod checkpoint;
pub mod config;
pub mod cpu;
pub mod cuda;
pub mod error;
pub mod islands;
pub mod objective;
pub mod problem;
pub mod pso;
pub mod ptx_objective;
pub mod result;
pub mod split;

pub use adaptive::Adaptive;
pub use config::{Job, JobBuilder, Precision};
pub use cuda::{CudaEngine, FinalPopulation, Mode};
pub use error::{Error, Result};
pub use gpude_device::{BoundPolicy, Crossover, Formula, Function, Strategy};
pub use islands::{
    Algorithm, Archipelago, ArchipelagoBuilder, ArchipelagoResult, Emigrants, Replacement, Topology,
};
pub use objective::{BatchObjective, Objective};
pub use problem::{FUNCTIONS, FunctionInfo, Problem};
pub use pso::Pso;
pub use result::{RunResult, Termination};

/// Where jobs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The GPU when a driver and a GPU are there, else the CPU (with a notice).
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl Backend {
    pub fn parse(s: &str) -> Result<Backend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" | "gpu" => Ok(Backend::Cuda),
            _ => Err(Error::UnknownName {
                kind: "backend",
                name: crate::error::clip(s),
                known: "auto, cpu, cuda".into(),
            }),
        }
    }
}

/// Runs jobs on the backend chosen once, at construction.
pub struct Solver {
    cuda: Option<CudaEngine>,
    mode: Mode,
    /// Why `auto` fell back to the CPU, if it did.
    pub fallback_reason: Option<String>,
}

/// Settings of a [`Solver`].
#[derive(Clone, Debug)]
pub struct SolverOptions {
    pub backend: Backend,
    pub device: usize,
    pub streams: usize,
    pub mode: Mode,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            backend: Backend::Auto,
            device: 0,
            streams: 4,
            mode: Mode::Auto,
        }
    }
}

/// The most CUDA streams a solver spreads launches over.
pub const MAX_STREAMS: usize = 128;

impl SolverOptions {
    /// Refuses settings that cannot apply: no streams (or absurdly many), or a GPU layout
    /// with the CPU backend. (With `Auto`, a fallback to the CPU ignores the layout and
    /// says why in `fallback_reason`.)
    pub fn check(&self) -> Result<()> {
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return Err(Error::invalid(
                "streams",
                self.streams,
                format!("1 ..= {MAX_STREAMS}"),
            ));
        }
        if self.backend == Backend::Cpu && self.mode != Mode::Auto {
            return Err(Error::invalid(
                "mode",
                self.mode.name(),
                "auto with the cpu backend (batch, grid and steps are GPU layouts)",
            ));
        }
        Ok(())
    }
}

impl Solver {
    /// Opens the backend with the kernels (name, PTX module). With `Cuda`, a missing
    /// driver or GPU is an error; with `Auto`, it selects the CPU and records why in
    /// `fallback_reason`.
    pub fn new(
        kernels: &'static [(&'static str, &'static str)],
        opts: &SolverOptions,
    ) -> Result<Solver> {
        opts.check()?;
        let mut s = Solver {
            cuda: None,
            mode: opts.mode,
            fallback_reason: None,
        };
        match opts.backend {
            Backend::Cpu => {}
            Backend::Cuda => s.cuda = Some(CudaEngine::new(kernels, opts.device, opts.streams)?),
            Backend::Auto => match CudaEngine::new(kernels, opts.device, opts.streams) {
                Ok(e) => s.cuda = Some(e),
                Err(e) => s.fallback_reason = Some(e.to_string()),
            },
        }
        Ok(s)
    }

    /// `cpu` or `cuda`.
    pub fn backend_name(&self) -> &'static str {
        if self.cuda.is_some() { "cuda" } else { "cpu" }
    }

    pub fn cuda(&self) -> Option<&CudaEngine> {
        self.cuda.as_ref()
    }

    /// Runs one job; the observer sees the CPU engine's generations and may stop the
    /// run (the GPU reports only at the end and ignores it).
    pub fn run(&self, job: &Job, observer: Option<cpu::Observer>) -> Result<RunResult> {
        match &self.cuda {
            Some(e) => e.run(job, self.mode),
            None => match job.precision() {
                Precision::F32 => cpu::run::<f32>(job, observer),
                Precision::F64 => cpu::run::<f64>(job, observer),
            },
        }
    }

    /// Runs an archipelago (islands with migration, DE or PSO). The CPU engine only for
    /// now: the CUDA engine turns it down rather than run something else.
    pub fn run_archipelago(
        &self,
        a: &Archipelago,
        observer: Option<cpu::Observer>,
    ) -> Result<ArchipelagoResult> {
        if self.cuda.is_some() {
            return Err(Error::invalid("backend", "cuda", islands::CPU_ONLY));
        }
        let objective = a.template().objective();
        objective.reset_failure();
        let r = islands::run_cpu(a, observer);
        objective.take_failure()?;
        Ok(r)
    }

    /// Runs one job with its population split by dimension into `slices` slices (see
    /// [`split`]). The CPU engine only for now: the CUDA engine turns it down.
    pub fn run_split(
        &self,
        job: &Job,
        slices: u32,
        observer: Option<cpu::Observer>,
    ) -> Result<RunResult> {
        if self.cuda.is_some() {
            return Err(Error::invalid("backend", "cuda", split::CPU_ONLY));
        }
        split::run_job(job, slices, observer)
    }

    /// Runs many jobs, one result each, in order.
    pub fn run_batch(&self, jobs: &[Job]) -> Result<Vec<RunResult>> {
        match &self.cuda {
            Some(e) if !matches!(self.mode, Mode::Grid | Mode::Steps) => e.run_batch(jobs),
            Some(e) => jobs.iter().map(|j| e.run(j, self.mode)).collect(),
            None => cpu::run_batch(jobs),
        }
    }
}
