//! gpude: Differential Evolution on NVIDIA GPUs, with the kernels written in Rust.
//!
//! ```no_run
//! use gpude::{Function, Job, Solver, SolverOptions};
//! let job = Job::builder(Function::Griewank, 30).pop(256).generations(500).seed(1).build()?;
//! let solver = Solver::new(&SolverOptions::default())?; // GPU if present, else CPU
//! let r = solver.run(&job, None)?;
//! println!("best f = {} after {} generations", r.best_f, r.generations);
//! # Ok::<(), gpude::Error>(())
//! ```
//!
//! The kernels are compiled from the `gpude-device` crate to PTX when this crate is
//! built ([`PTX`]) and loaded at run time through the CUDA driver; without a driver the
//! CPU engine runs the same arithmetic.

pub use gpude_device as device;
pub use gpude_expr as expr;
pub use gpude_host as host;
pub use gpude_host::cpu;
pub use gpude_host::run;
pub use gpude_host::{
    Adaptive, Backend, BatchKernel, BatchObjective, BoundPolicy, Ceilings, Crossover, CudaEngine,
    Error, FUNCTIONS, Formula, Function, FunctionInfo, Gpus, Job, JobBuilder, Mode, Objective,
    Precision, Problem, Result, RunLayout, RunResult, SeparableCpu, SolverOptions, Stops, Strategy,
    Termination, ThesisVariant,
};
pub use gpude_host::{
    Algorithm, Archipelago, ArchipelagoBuilder, ArchipelagoRan, ArchipelagoResult, Emigrants, Ga,
    IslandsWatch, Pso, Replacement, Topology,
};
// Where callers found these before the host's folders held them (run::checkpoint,
// run::control, job::objective, job::cec2017, cpu::split).
pub use gpude_host::{cec2017, checkpoint, objective, split};

/// The linear-algebra crate of the results' vectors, re-exported.
pub use gpude_host::nalgebra;

/// The README's Rust examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
use run::control::{Control, Observer, Outcome, Ran, Reporting, Watch};

/// The device crate compiled to PTX by the build script, one module per kernel: (kernel
/// name, module), and the maths module of expressions. The engine loads a module when
/// its kernel is first used, so the driver compiles only what runs. (The whole module
/// is not embedded as well: it would double the binaries' size for no use.)
pub const KERNELS: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The GPU architecture the PTX was built for (`GPUDE_PTX_ARCH` at build time).
pub const PTX_ARCH: &str = env!("GPUDE_PTX_ARCH");

/// Runs jobs on the CPU or the GPU, with the embedded PTX.
pub struct Solver(gpude_host::Solver);

impl Solver {
    /// Opens the backend `opts` names (`Auto`: the GPU when present, else the CPU).
    pub fn new(opts: &SolverOptions) -> Result<Solver> {
        gpude_host::Solver::new(KERNELS, opts).map(Solver)
    }

    /// `cpu` or `cuda`.
    pub fn backend_name(&self) -> &'static str {
        self.0.backend_name()
    }

    /// Why `Auto` fell back to the CPU, if it did.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.0.fallback_reason.as_deref()
    }

    /// The GPUs in use (0 on the CPU engine): lists of runs and archipelagos are shared
    /// out among them ([`SolverOptions::gpus`]).
    pub fn gpus(&self) -> usize {
        self.0.gpus()
    }

    /// The CUDA engine, when the GPU backend is in use (the first GPU's, with several).
    pub fn cuda(&self) -> Option<&CudaEngine> {
        self.0.cuda()
    }

    /// Runs one job. The observer sees the generations and may stop the run there
    /// ([`run::control::Flow::Stop`]): every generation on the CPU engine, the reported ones on
    /// the GPU ([`Solver::set_reporting`]); for stop flags and checkpoints, see
    /// [`Solver::run_controlled`] and [`Solver::resume`].
    pub fn run(&self, job: &Job, observer: Option<Observer>) -> Result<RunResult> {
        self.0.run(job, observer)
    }

    /// How often the GPU's persistent kernels report under control, and whether they
    /// wait for the observer ([`Reporting`]).
    pub fn set_reporting(&mut self, reporting: Reporting) -> Result<()> {
        self.0.set_reporting(reporting)
    }

    /// Runs one job under a [`Control`] (observer, stop flag, checkpoints) on
    /// either engine; the outcome holds the result and the final state.
    pub fn run_controlled(&self, job: &Job, control: &mut Control) -> Result<Outcome> {
        self.0.run_controlled(job, control)
    }

    /// Goes on from a checkpoint (of either engine: they compute the same bits) under
    /// `control`.
    pub fn resume(&self, from: checkpoint::Checkpoint, control: &mut Control) -> Result<Outcome> {
        self.0.resume(from, control)
    }

    /// Runs (or goes on with) a list of runs under a [`Watch`].
    pub fn run_entries(
        &self,
        entries: Vec<checkpoint::Entry>,
        watch: &mut Watch,
    ) -> Result<Vec<Ran>> {
        self.0.run_entries(entries, watch)
    }

    /// Runs an archipelago: islands with migration, DE or PSO, on either engine (the
    /// same bits on both).
    pub fn run_archipelago(
        &self,
        a: &Archipelago,
        observer: Option<Observer>,
    ) -> Result<ArchipelagoResult> {
        self.0.run_archipelago(a, observer)
    }

    /// Runs archipelagos, one result each in order; on the GPU, compatible ones (equal
    /// but for seed and stream) share launches.
    pub fn run_archipelagos(
        &self,
        list: &[Archipelago],
        observer: Option<Observer>,
    ) -> Result<Vec<ArchipelagoResult>> {
        self.0.run_archipelagos(list, observer)
    }

    /// Runs or goes on with archipelagos (from a checkpoint of either engine: the same
    /// bits as a run that never stopped) under an [`IslandsWatch`]: stopped, observed
    /// and saved on the way; each comes back with its result and its state at the end.
    pub fn run_archipelago_entries(
        &self,
        entries: Vec<checkpoint::ArchipelagoEntry>,
        watch: &mut IslandsWatch,
    ) -> Result<Vec<ArchipelagoRan>> {
        self.0.run_archipelago_entries(entries, watch)
    }

    /// Why the GPU engine cannot run `a`, if it cannot: a host callback objective, a
    /// history, PSO on an objective other than a built-in function.
    pub fn gpu_archipelago(a: &Archipelago) -> Result<()> {
        gpude_host::Solver::gpu_archipelago(a)
    }

    /// Runs one job with its population split by dimension into `slices` slices (see
    /// [`split`]): the CPU engine only for now; on the GPU backend this is an error.
    pub fn run_split(
        &self,
        job: &Job,
        slices: u32,
        observer: Option<Observer>,
    ) -> Result<RunResult> {
        self.0.run_split(job, slices, observer)
    }

    /// Runs many jobs (on the GPU: compatible jobs share launches, one block each).
    pub fn run_batch(&self, jobs: &[Job]) -> Result<Vec<RunResult>> {
        self.0.run_batch(jobs)
    }
}

/// Opens the CUDA engine directly (for parity checks and benchmarks).
pub fn cuda_engine(device: usize, streams: usize) -> Result<CudaEngine> {
    CudaEngine::new(KERNELS, device, streams)
}

/// Evaluates one point with the engines' arithmetic in the given precision, with the
/// exact formulas (the default).
pub fn evaluate(f: Function, precision: Precision, x: &[f64]) -> Result<f64> {
    evaluate_as(f, precision, Formula::Exact, x)
}

/// [`evaluate`] with the given formula.
pub fn evaluate_as(f: Function, precision: Precision, formula: Formula, x: &[f64]) -> Result<f64> {
    if x.is_empty() {
        return Err(Error::InvalidParameter {
            name: "point",
            value: "an empty vector".into(),
            allowed: "at least one component".into(),
        });
    }
    if let Some(bad) = x.iter().find(|v| !v.is_finite()) {
        return Err(Error::InvalidParameter {
            name: "point component",
            value: bad.to_string(),
            allowed: "a finite number".into(),
        });
    }
    Ok(match precision {
        Precision::F32 => cpu::evaluate_point::<f32>(f, formula, x),
        Precision::F64 => cpu::evaluate_point::<f64>(f, formula, x),
    })
}
