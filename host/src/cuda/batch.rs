//! The batch layout: one block per population, every generation in one launch;
//! compatible jobs (equal but for seed and stream) share a launch.

use super::engine::{CudaEngine, FinalPopulation, cuda_err};
use super::kernels::{GpuReal, de_kernel};
use super::launch::{dev, dev_opt, padded, push_params, run_params};
use super::state::{Controlled, check_download, gather, gather_state};
use crate::error::Result;
use crate::job::config::Job;
use crate::run::checkpoint::State;
use crate::run::result::ending;
use crate::run::result::{Ending, RunLayout, RunResult};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::BatchParams;
use gpude_device::lanes::{group_width, stride};
use gpude_device::registry::Layout;
use nalgebra::DVector;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl CudaEngine {
    pub(super) fn launch_batch<T: GpuReal>(
        &self,
        jobs: &[&Job],
        stream: Arc<CudaStream>,
    ) -> Result<BatchLaunch<T>> {
        let mut l = self.alloc_batch::<T>(jobs, stream, false)?;
        l.launch(jobs[0].generations(), 0, 0)?;
        Ok(l)
    }

    /// The buffers and parameters of a batch launch of `jobs` (compatible: equal but
    /// for seed and stream), after checking that they fit, with the seeds, streams and
    /// bounds uploaded and every population's generations done at 0 (a fresh run); with
    /// `controlled`, for launches that map a control block. The kernel is the engine's
    /// [`BatchKernel`]'s choice: the resident, pipelined or global-memory kernel (their
    /// `…_ctl` entry points when controlled).
    pub(crate) fn alloc_batch<T: GpuReal>(
        &self,
        jobs: &[&Job],
        stream: Arc<CudaStream>,
        controlled: bool,
    ) -> Result<BatchLaunch<T>> {
        let job = jobs[0];
        let p = jobs.len();
        let dim = job.dim();
        let st = stride(dim) as usize;
        let np = job.pop() as usize;
        let gens = job.generations();
        let hist_len = if job.history() {
            (gens as usize + 1) * p
        } else {
            0
        };
        let t = std::mem::size_of::<T>() as u64;
        let needed = t
            * (2 * (p * np * st) + 2 * p * np + 32 * p + p * st + p + 2 * st + hist_len) as u64
            + 4 * (p * np + 32 * p + 2 * p) as u64
            + 12 * p as u64;
        self.check_memory(needed)?;
        let (name, func, cfg, layout) = self.batch_kernel_of::<T>(job, controlled, p)?;
        // The global-memory kernel's controlled entry points go on from the buffers at
        // every launch, generation 0 included: the plain kernel initialises the
        // populations first (see `gpude_device::batch::ControlledFromBuffers`).
        let init = if controlled && layout == RunLayout::Batch {
            let (name, func, cfg, _) = self.batch_kernel_of::<T>(job, false, p)?;
            Some((name, func, cfg))
        } else {
            None
        };
        let ctx = |what: &str| format!("{name}: {what}");
        let alloc = |n: usize| -> Result<CudaSlice<T>> {
            stream
                .alloc_zeros::<T>(n.max(1))
                .map_err(cuda_err(ctx("allocating")))
        };
        let allocu = |n: usize| -> Result<CudaSlice<u32>> {
            stream
                .alloc_zeros::<u32>(n.max(1))
                .map_err(cuda_err(ctx("allocating")))
        };
        let seeds: Vec<u64> = jobs.iter().map(|j| j.seed()).collect();
        let streams: Vec<u32> = jobs.iter().map(|j| j.stream()).collect();
        let up = |e| cuda_err(ctx("uploading"))(e);
        let seeds_d = stream.clone_htod(&seeds).map_err(up)?;
        let streams_d = stream.clone_htod(&streams).map_err(up)?;
        let lo_d = stream
            .clone_htod(&padded::<T>(job.lower(), st))
            .map_err(up)?;
        let hi_d = stream
            .clone_htod(&padded::<T>(job.upper(), st))
            .map_err(up)?;
        let pop_a = alloc(p * np * st)?;
        let pop_b = alloc(p * np * st)?;
        let flags = allocu(p * np)?;
        let fit = alloc(p * np)?;
        let trial_fit = alloc(p * np)?;
        let scratch_f = alloc(32 * p)?;
        let scratch_i = allocu(32 * p)?;
        let best_x = alloc(p * st)?;
        let best_f = alloc(p)?;
        let best_idx = allocu(p)?;
        let gens_done = allocu(p)?;
        let hist = if hist_len > 0 {
            Some(alloc(hist_len)?)
        } else {
            None
        };
        // Every buffer above is sized for `p` populations of `np` rows of `st` values,
        // as the kernel indexes them.
        debug_assert_eq!(pop_a.len(), p * np * st);
        let s = &*stream;
        let params = BatchParams::<T> {
            run: run_params(job),
            seeds: dev(&seeds_d, s),
            streams: dev(&streams_d, s),
            lo: dev(&lo_d, s),
            hi: dev(&hi_d, s),
            pop_a: dev(&pop_a, s),
            pop_b: dev(&pop_b, s),
            flags: dev(&flags, s),
            fit: dev(&fit, s),
            trial_fit: dev(&trial_fit, s),
            scratch_f: dev(&scratch_f, s),
            scratch_i: dev(&scratch_i, s),
            best_x: dev(&best_x, s),
            best_f: dev(&best_f, s),
            best_idx: dev(&best_idx, s),
            gens_done: dev(&gens_done, s),
            hist: dev_opt(hist.as_ref(), s),
            ctl: std::ptr::null_mut(),
            report: 0,
        };
        let mut l = BatchLaunch {
            name: name.clone(),
            func,
            cfg,
            start: Instant::now(),
            layout,
            p,
            st,
            params,
            pop_a,
            pop_b,
            flags,
            fit,
            best_x,
            best_f,
            gens_done,
            hist,
            _keep: (
                seeds_d, streams_d, lo_d, hi_d, trial_fit, scratch_f, scratch_i, best_idx,
            ),
            stream,
        };
        if let Some((name, func, cfg)) = init {
            let hist = l.params.hist;
            l.params.hist = std::ptr::null_mut();
            l.launch_function(&func, cfg, &name, 0, 0, 0)?;
            l.params.hist = hist;
        }
        Ok(l)
    }

    /// The kernel of a batch launch of `p` populations of `job`, plain or `controlled`:
    /// its name, function and launch shape, and the layout it runs. The engine's
    /// [`BatchKernel`] chooses the resident, pipelined or global-memory kernel.
    fn batch_kernel_of<T: GpuReal>(
        &self,
        job: &Job,
        controlled: bool,
        p: usize,
    ) -> Result<(String, CudaFunction, LaunchConfig, RunLayout)> {
        let shape = |threads: u32, shared_mem_bytes: u32| LaunchConfig {
            grid_dim: (p as u32, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes,
        };
        Ok(match self.batch_plan::<T>(job, controlled)? {
            Some(r) => (r.name, r.func, shape(r.threads, r.bytes), r.layout),
            None => {
                let layout = if controlled {
                    Layout::BatchControlled
                } else {
                    Layout::Batch
                };
                let kernel = de_kernel::<T>(layout, job);
                let name = kernel.name();
                let func = self.job_function::<T>(kernel, job)?;
                let g = group_width(job.dim());
                let threads = self
                    .max_threads(&func, &name)?
                    .min(((job.pop() * g).div_ceil(32) * 32).max(32));
                (name, func, shape(threads, 0), RunLayout::Batch)
            }
        })
    }
}

/// Jobs that can share a launch: equal in everything but seed and stream.
pub(crate) fn compatible(a: &Job, b: &Job) -> bool {
    // Clones share the bounds, so this copies no vectors.
    let strip = |j: &Job| j.clone().with_seed(0).with_stream(0);
    strip(a) == strip(b)
}

pub(super) enum Pending {
    F32(BatchLaunch<f32>),
    F64(BatchLaunch<f64>),
}

/// A batch launch (one block per population), with the buffers its results come from
/// and its parameters. `gens_done` holds each population's generations done: 0 starts
/// it with the initialisation, more goes on from the population in the buffers.
pub(crate) struct BatchLaunch<T: GpuReal> {
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) name: String,
    func: CudaFunction,
    cfg: LaunchConfig,
    pub(crate) start: Instant,
    /// The layout its kernel runs.
    pub(crate) layout: RunLayout,
    pub(crate) p: usize,
    pub(crate) st: usize,
    params: BatchParams<T>,
    pub(crate) pop_a: CudaSlice<T>,
    pub(crate) pop_b: CudaSlice<T>,
    pub(crate) flags: CudaSlice<u32>,
    pub(crate) fit: CudaSlice<T>,
    pub(crate) best_x: CudaSlice<T>,
    pub(crate) best_f: CudaSlice<T>,
    pub(crate) gens_done: CudaSlice<u32>,
    pub(crate) hist: Option<CudaSlice<T>>,
    #[allow(clippy::type_complexity)]
    _keep: (
        CudaSlice<u64>,
        CudaSlice<u32>,
        CudaSlice<T>,
        CudaSlice<T>,
        CudaSlice<T>,
        CudaSlice<T>,
        CudaSlice<u32>,
        CudaSlice<u32>,
    ),
}

impl<T: GpuReal> BatchLaunch<T> {
    /// Launches the kernel: every population goes from its generations done to `end`
    /// (at most the jobs' limit), under the control block at device address `ctl` (0:
    /// none) with the `report` argument of [`gpude_device::control::report`].
    pub(crate) fn launch(&mut self, end: u32, ctl: u64, report: u32) -> Result<()> {
        let (func, cfg, name) = (self.func.clone(), self.cfg, self.name.clone());
        self.launch_function(&func, cfg, &name, end, ctl, report)
    }

    /// Launches `func` (a batch kernel of these parameters, in the launch shape `cfg`)
    /// as [`BatchLaunch::launch`] does.
    fn launch_function(
        &mut self,
        func: &CudaFunction,
        cfg: LaunchConfig,
        name: &str,
        end: u32,
        ctl: u64,
        report: u32,
    ) -> Result<()> {
        self.params.run.gens = end;
        self.params.ctl = ctl as *mut u64;
        self.params.report = report;
        let mut b = self.stream.launch_builder(func);
        push_params(&mut b, &self.params);
        // SAFETY: the parameters are the kernel's (the build script checks them against
        // the PTX), every buffer has the length the kernel indexes (see `alloc_batch`;
        // the history holds (end + 1)·p values as end ≤ the jobs' limit, or is null) and
        // lives as long as `self`, `ctl` is 0 or a mapped control block of p slots that
        // outlives the launch, and the launch shape is within the function's limits
        // (`batch_kernel_of`).
        unsafe { b.launch(cfg) }.map_err(cuda_err(format!("{name}: launching")))?;
        Ok(())
    }

    /// Population `k`'s final rows and values.
    pub(super) fn population(&self, k: usize, job: &Job) -> Result<FinalPopulation> {
        let err = |what: &str| cuda_err(format!("{}: {what}", self.name));
        let np = job.pop() as usize;
        let n = np * self.st;
        let a = self
            .stream
            .clone_dtoh(&self.pop_a.slice(k * n..(k + 1) * n))
            .map_err(err("reading back"))?;
        let b = self
            .stream
            .clone_dtoh(&self.pop_b.slice(k * n..(k + 1) * n))
            .map_err(err("reading back"))?;
        let fl = self
            .stream
            .clone_dtoh(&self.flags.slice(k * np..(k + 1) * np))
            .map_err(err("reading back"))?;
        let f = self
            .stream
            .clone_dtoh(&self.fit.slice(k * np..(k + 1) * np))
            .map_err(err("reading back"))?;
        Ok(gather(&a, &b, &fl, &f, job.dim() as usize, self.st))
    }

    /// Each population's outcome of the last launch: the generations done, the best
    /// value and point, and the history recorded from generation `from[k]` on.
    pub(crate) fn outcomes(&self, jobs: &[&Job], from: &[u32]) -> Result<Vec<Launched>> {
        let err = |what: &str| cuda_err(format!("{}: {what}", self.name));
        let gens_done = self
            .stream
            .clone_dtoh(&self.gens_done)
            .map_err(err("running"))?;
        let best_x = self
            .stream
            .clone_dtoh(&self.best_x)
            .map_err(err("reading back"))?;
        let best_f = self
            .stream
            .clone_dtoh(&self.best_f)
            .map_err(err("reading back"))?;
        let hist = match &self.hist {
            Some(h) => Some(self.stream.clone_dtoh(h).map_err(err("reading back"))?),
            None => None,
        };
        let dim = jobs[0].dim() as usize;
        // The history's stride is the last launch's limit + 1.
        let hl = self.params.run.gens as usize + 1;
        Ok((0..self.p)
            .map(|k| {
                let gn = gens_done[k];
                Launched {
                    generations: gn,
                    best_f: best_f[k].to_f64(),
                    best_x: best_x[k * self.st..k * self.st + dim]
                        .iter()
                        .map(|v| v.to_f64())
                        .collect(),
                    // Nothing for a population that started past the launch's limit.
                    history: hist.as_ref().map(|h| {
                        let (a, b) = (from[k] as usize, gn as usize);
                        if b < hl {
                            h[k * hl + a..k * hl + b + 1]
                                .iter()
                                .map(|v| v.to_f64())
                                .collect()
                        } else {
                            Vec::new()
                        }
                    }),
                }
            })
            .collect())
    }

    pub(super) fn finish(self, jobs: &[&Job]) -> Result<Vec<RunResult>> {
        let out = self.outcomes(jobs, &vec![0; self.p])?;
        let elapsed: Duration = self.start.elapsed();
        Ok(jobs
            .iter()
            .zip(out)
            .map(|(job, o)| o.result(job, elapsed, self.layout, self.p as u32))
            .collect())
    }
}

/// What one population's launch ended with.
pub(crate) struct Launched {
    pub(crate) generations: u32,
    pub(crate) best_f: f64,
    pub(crate) best_x: Vec<f64>,
    /// The best after each generation of the launch (from the one it started at).
    pub(crate) history: Option<Vec<f64>>,
}

impl Launched {
    /// The result of a run that started with this launch (generation 0).
    pub(crate) fn result(
        self,
        job: &Job,
        elapsed: Duration,
        layout: RunLayout,
        launch_runs: u32,
    ) -> RunResult {
        let mut r = self.ended(job, elapsed, layout);
        r.launch_runs = launch_runs;
        r
    }

    fn ended(self, job: &Job, elapsed: Duration, layout: RunLayout) -> RunResult {
        RunResult::ended(
            job,
            Ending {
                best_x: DVector::from_vec(self.best_x),
                best_f: self.best_f,
                generations: self.generations,
                evaluations: job.evaluations(self.generations),
                termination: ending(job, self.generations, self.best_f),
                elapsed,
                history: self.history,
                layout,
                stream: job.stream(),
            },
        )
    }
}

impl<T: GpuReal> BatchLaunch<T> {
    /// Every population's values (np of each, population after population), as f64:
    /// one copy for the launch.
    pub(crate) fn values(&self) -> Result<Vec<f64>> {
        let f = self
            .stream
            .clone_dtoh(&self.fit)
            .map_err(cuda_err(format!("{}: reading the values", self.name)))?;
        Ok(f.iter().map(|v| v.to_f64()).collect())
    }
}

/// Population `k`'s state in a batch launch.
pub(crate) fn batch_state<T: Controlled>(l: &BatchLaunch<T>, k: usize, job: &Job) -> Result<State> {
    let np = job.pop() as usize;
    let n = np * l.st;
    check_download(2 * n * std::mem::size_of::<T>())?;
    let err = |e| cuda_err(format!("{}: reading back", l.name))(e);
    let s = &l.stream;
    let a = s
        .clone_dtoh(&l.pop_a.slice(k * n..(k + 1) * n))
        .map_err(err)?;
    let b = s
        .clone_dtoh(&l.pop_b.slice(k * n..(k + 1) * n))
        .map_err(err)?;
    let flags = s
        .clone_dtoh(&l.flags.slice(k * np..(k + 1) * np))
        .map_err(err)?;
    let fit = s
        .clone_dtoh(&l.fit.slice(k * np..(k + 1) * np))
        .map_err(err)?;
    Ok(gather_state(&a, &b, &flags, fit, job.dim() as usize, l.st))
}
