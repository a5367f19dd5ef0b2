//! The adaptive strategies on the GPU: one block per run of the adaptive kernels
//! (`gpude_device::kernels_adaptive`), a batch of compatible runs per launch, or one
//! run over the whole GPU in one cooperative launch (the grid layout), with the
//! built-in functions and the CEC 2017 functions (their data uploaded once per launch),
//! and with a user's objective: an expression or a PTX module linked in at run time
//! (the `external` and `separable` kernels, linked as the classic families' are), or a
//! host callback (the `host` kernels, below); and the classic strategies on the CEC
//! 2017 functions, in the same kernels.
//!
//! A host callback's run is one block, driven a phase per launch
//! (`gpude_device::abi::ADAPTIVE_PHASE_*`): the initial rows, copied to the host and
//! evaluated there, their values copied back; the best; then per generation the trials
//! (the generation's `state[ADAPTIVE_COUNT]` rows, unpadded: `count × D`), evaluated
//! on the host the same way, and the selection, the adaptation and the reduction. The
//! host reads the state (8 words and the best value) after each generation: whether the
//! run is over, and how many trials the next one makes. The callback sees the rows the
//! CPU engine hands it, in the same batches, so a run gives the CPU engine's bits.

use super::batch::compatible;
use super::engine::{CudaEngine, FinalPopulation, Mode, cuda_err};
use super::external::check_objective;
use super::kernels::{GpuReal, Kernel};
use super::launch::{dev, dev_opt, push_params};
use crate::job::config::strategy_name;

use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::run::checkpoint::{Checkpoint, Stored};
use crate::run::control::{Control, Flow, Outcome};
use crate::run::result::{Ending, RunLayout, RunResult, Termination};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::{
    ADAPTIVE_BEST, ADAPTIVE_COUNT, ADAPTIVE_DONE, ADAPTIVE_GENS, ADAPTIVE_PHASE_INIT_BEST,
    ADAPTIVE_PHASE_INIT_ROWS, ADAPTIVE_PHASE_RUN, ADAPTIVE_PHASE_SELECT, ADAPTIVE_PHASE_TRIALS,
    ADAPTIVE_SIZE, ADAPTIVE_STATE_WORDS, AdaptiveParams, adaptive_ranking_words,
};
use gpude_device::adaptive::archive_capacity;
use gpude_device::cec2017::scratch_len;
use gpude_device::registry::{AdaptiveKey, CEC2017, EXTERNAL, HOST, Layout, SEPARABLE};
use nalgebra::DVector;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The CUDA engine's check of an adaptive job: its kernels evaluate the built-in and
/// the CEC 2017 functions, expressions and PTX objectives (linked in, in a precision
/// the module defines), and leave a host callback's values to the host between their
/// phases. Classic jobs pass.
pub fn gpu_check(job: &Job) -> Result<()> {
    if !job.strategy().is_adaptive() || job.objective().ptx_code().is_none() {
        return Ok(());
    }
    // A PTX objective's module must define the job's precision.
    check_objective(job)
}

/// True when the CUDA engine runs `job` in the adaptive kernels: an adaptive strategy,
/// or a classic one on a CEC 2017 function.
pub fn in_adaptive_kernels(job: &Job) -> bool {
    job.adaptive().is_some() || job.objective().as_cec2017().is_some()
}

/// The layout of the adaptive kernels that a GPU mode asks for: `auto` and `batch` run
/// a block per run (a batch of compatible runs per launch), `grid` one run over the
/// whole GPU per cooperative launch (the runs of a batch one after the other). The
/// adaptive kernels have no step layout: `steps` is refused, naming the strategy of
/// `job`. (A host callback's run has a layout of its own, whatever the mode: the
/// engine does not ask here.)
pub fn gpu_layout(mode: Mode, job: &Job) -> Result<Layout> {
    match mode {
        Mode::Auto | Mode::Batch => Ok(Layout::Batch),
        Mode::Grid => Ok(Layout::Grid),
        Mode::Steps => {
            let name = strategy_name(job.strategy());
            let what = if job.adaptive().is_some() {
                name.to_string()
            } else {
                format!("{name} on a CEC 2017 function")
            };
            Err(Error::invalid(
                "mode",
                "steps",
                format!(
                    "auto, batch or grid for {what}: the adaptive kernels run a block per run or one run over the whole GPU, not a launch per generation"
                ),
            ))
        }
    }
}

/// The most threads a block of the adaptive kernels runs with.
const MAX_THREADS: u32 = 256;

/// The adaptive kernel of `job` in precision `T` and `layout` (batch or grid): its
/// built-in function's, the CEC 2017 functions', a host callback's (batch only), or
/// for an objective linked in, the separable one's when it has that form in `T`, the
/// whole-vector one's otherwise (as the classic families choose).
pub(crate) fn adaptive_kernel<T: GpuReal>(job: &Job, layout: Layout) -> Kernel {
    let o = job.objective();
    let key = AdaptiveKey {
        layout,
        function: match job.builtin() {
            Some(f) => f.key(),
            None if o.as_cec2017().is_some() => CEC2017,
            None if o.is_host_callback() => HOST,
            None if o.separable_flags(T::PRECISION).is_some() => SEPARABLE,
            None => EXTERNAL,
        },
        precision: T::KERNEL,
    };
    Kernel::Adaptive(key)
}

/// A launch of the adaptive kernel: its buffers (those read back named, the others
/// kept alive until the launch is read) and what the results need.
pub(crate) struct AdaptiveLaunch<T: GpuReal> {
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) name: String,
    start: Instant,
    pub(crate) p: usize,
    pub(crate) np: usize,
    pub(crate) dim: usize,
    gens: u32,
    pub(crate) x: CudaSlice<T>,
    pub(crate) fit: CudaSlice<T>,
    pub(crate) state: CudaSlice<u32>,
    pub(crate) evaluations: CudaSlice<u64>,
    pub(crate) best_f: CudaSlice<T>,
    hist: Option<CudaSlice<T>>,
    trials: CudaSlice<T>,
    trial_fit: CudaSlice<T>,
    /// The host's copies of a host callback's rows and values (empty otherwise).
    host_rows: Vec<T>,
    host_values: Vec<T>,
    func: CudaFunction,
    pub(crate) params: AdaptiveParams<T>,
    cfg: LaunchConfig,
    grid: bool,
    _inputs: (CudaSlice<u64>, CudaSlice<u32>, CudaSlice<T>, CudaSlice<T>),
    _data: (CudaSlice<T>, CudaSlice<T>, CudaSlice<u32>),
    _work: Vec<CudaSlice<T>>,
    _work_u: Vec<CudaSlice<u32>>,
    /// The grid barrier's counter (the grid layout only).
    _sync: Option<CudaSlice<u64>>,
}

impl CudaEngine {
    /// Runs adaptive jobs (every one of `jobs` must be adaptive, or a classic strategy on
    /// a CEC 2017 function) in the layout `mode` asks for (see
    /// `gpu_layout` in `cuda/adaptive.rs`): in the batch layout (`auto`, `batch`) compatible
    /// ones share a launch of the adaptive kernels, one block each, launches spread over
    /// the streams; in the grid layout (`grid`) each runs over the whole GPU in a
    /// cooperative launch of its own, one after the other. One result and final
    /// population per job, in order.
    pub fn run_adaptive(
        &self,
        jobs: &[&Job],
        mode: Mode,
    ) -> Result<Vec<(RunResult, FinalPopulation)>> {
        for job in jobs {
            job.stops().unsupported(
                "the GPU's adaptive kernels (and the classic strategies on CEC 2017 functions there); the CPU engine runs them with stops",
            )?;
        }
        if jobs.iter().any(|j| j.objective().is_host_callback()) {
            // Host callbacks one at a time (`callback_run`), the others together.
            let (cb, rest): (Vec<usize>, Vec<usize>) =
                (0..jobs.len()).partition(|&k| jobs[k].objective().is_host_callback());
            let mut results: Vec<Option<(RunResult, FinalPopulation)>> = vec![None; jobs.len()];
            let others: Vec<&Job> = rest.iter().map(|&k| jobs[k]).collect();
            if !others.is_empty() {
                for (&k, r) in rest.iter().zip(self.run_adaptive(&others, mode)?) {
                    results[k] = Some(r);
                }
            }
            for k in cb {
                // Its own layout, whatever `mode` says (see `callback.rs`).
                results[k] = Some(self.run_with_population(jobs[k], mode)?);
            }
            return Ok(results
                .into_iter()
                .map(|r| r.expect("every job ran"))
                .collect());
        }
        let mut layout = Layout::Batch;
        for job in jobs {
            layout = crate::cuda::adaptive::gpu_layout(mode, job)?;
            if !crate::cuda::adaptive::in_adaptive_kernels(job) {
                let name = crate::job::config::strategy_name(job.strategy());
                return Err(Error::invalid(
                    "strategy",
                    name,
                    format!(
                        "an adaptive strategy (jde, jade, shade, lshade, jso), or any strategy on a CEC 2017 function, in a batch of adaptive runs; run {name} in a batch of its own"
                    ),
                ));
            }
            crate::cuda::adaptive::gpu_check(job)?;
        }
        let owned: Vec<Job> = jobs.iter().map(|&j| j.clone()).collect();
        Job::check_all(&owned)?;
        enum Launch {
            F32(AdaptiveLaunch<f32>),
            F64(AdaptiveLaunch<f64>),
        }
        let launch = |members: &[&Job], stream: Arc<CudaStream>| -> Result<Launch> {
            Ok(match members[0].precision() {
                crate::job::precision::Precision::F32 => {
                    Launch::F32(self.launch_adaptive(members, stream, layout)?)
                }
                crate::job::precision::Precision::F64 => {
                    Launch::F64(self.launch_adaptive(members, stream, layout)?)
                }
            })
        };
        let finish = |l: Launch, members: &[&Job]| match l {
            Launch::F32(l) => l.finish(members),
            Launch::F64(l) => l.finish(members),
        };
        let mut results: Vec<Option<(RunResult, FinalPopulation)>> = vec![None; jobs.len()];
        if layout == Layout::Grid {
            // Each run has the whole GPU: one cooperative launch after the other, each
            // read back before the next starts.
            for (k, job) in jobs.iter().enumerate() {
                let l = launch(&[job], self.streams[0].clone())?;
                results[k] = finish(l, &[job])?.pop();
            }
        } else {
            let mut groups: Vec<Vec<usize>> = Vec::new();
            for (k, job) in jobs.iter().enumerate() {
                match groups.iter_mut().find(|g| compatible(jobs[g[0]], job)) {
                    Some(g) => g.push(k),
                    None => groups.push(vec![k]),
                }
            }
            let mut pending = Vec::new();
            for (n, group) in groups.iter().enumerate() {
                let stream = self.streams[n % self.streams.len()].clone();
                let members: Vec<&Job> = group.iter().map(|&k| jobs[k]).collect();
                pending.push((group, launch(&members, stream)?));
            }
            for (group, l) in pending {
                let members: Vec<&Job> = group.iter().map(|&k| jobs[k]).collect();
                for (&k, r) in group.iter().zip(finish(l, &members)?) {
                    results[k] = Some(r);
                }
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every job ran"))
            .collect())
    }
}

impl CudaEngine {
    /// Launches the runs of `jobs` (adaptive, compatible: equal but for seed and
    /// stream) on `stream`: in [`Layout::Batch`] one block each; in [`Layout::Grid`]
    /// the one run of `jobs` over the whole GPU, in a cooperative launch.
    pub(crate) fn launch_adaptive<T: GpuReal>(
        &self,
        jobs: &[&Job],
        stream: Arc<CudaStream>,
        layout: Layout,
    ) -> Result<AdaptiveLaunch<T>> {
        if jobs[0].objective().is_host_callback() {
            return Err(Error::invalid(
                "objective",
                crate::error::clip(&jobs[0].objective().name()),
                "an objective the GPU evaluates in a batch of adaptive runs; a host callback's run goes through CudaEngine::run, one at a time",
            ));
        }
        let mut l = self.prepare_adaptive(jobs, stream, layout)?;
        l.launch(ADAPTIVE_PHASE_RUN)?;
        Ok(l)
    }

    /// The buffers, parameters and kernel of the runs of `jobs`, as
    /// [`CudaEngine::launch_adaptive`] launches them, not launched yet.
    pub(super) fn prepare_adaptive<T: GpuReal>(
        &self,
        jobs: &[&Job],
        stream: Arc<CudaStream>,
        layout: Layout,
    ) -> Result<AdaptiveLaunch<T>> {
        let job = jobs[0];
        crate::cuda::adaptive::gpu_check(job)?;
        let grid = match layout {
            Layout::Batch => false,
            Layout::Grid if jobs.len() == 1 => true,
            _ => {
                return Err(Error::invalid(
                    "adaptive launch",
                    format!("{layout:?} with {} runs", jobs.len()),
                    "the batch layout, or the grid layout with one run",
                ));
            }
        };
        let run = crate::job::config::run_settings(job);
        let p = jobs.len();
        let d = job.dim() as usize;
        let np = job.pop() as usize;
        let h = run.memory_size as usize;
        let cap = (archive_capacity(run.archive_rate, run.np) as usize).max(1);
        let gens = job.generations();
        let hist_len = if job.history() {
            (gens as usize + 1) * p
        } else {
            0
        };
        let kernel = adaptive_kernel::<T>(job, layout);
        let name = kernel.name();
        let o = job.objective();
        let func: CudaFunction =
            if job.builtin().is_some() || o.as_cec2017().is_some() || o.is_host_callback() {
                self.function(kernel)?
            } else {
                // Linked with the job's objective (the classic families' link).
                self.job_function::<T>(kernel, job)?
            };
        let threads = self
            .max_threads(&func, &name)?
            .min(MAX_THREADS)
            .min((np as u32).div_ceil(32) * 32)
            .max(32);
        // The grid layout: a thread per individual, as many blocks as that takes and
        // fit on the GPU at once (the grid barrier needs every block resident).
        let blocks = if grid {
            let resident = self.resident_blocks(&func, &name, threads)?;
            (np as u32).div_ceil(threads).clamp(1, resident)
        } else {
            p as u32
        };
        // The scratch: a value set per thread of the grid in both layouts.
        let team_threads = blocks as usize * threads as usize;
        let sl = scratch_len(d);
        let cec = job.objective().as_cec2017();
        let (shift, rotation, shuffle): (Vec<T>, Vec<T>, Vec<u32>) = match cec {
            // f32 runs read the data rounded to f32 once, as the CPU engine does.
            Some(c) => (
                c.shift().iter().map(|&v| T::of(v)).collect(),
                c.rotation().iter().map(|&v| T::of(v)).collect(),
                c.shuffle().to_vec(),
            ),
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        let reals = 2 * p * np * d
            + 2 * p * np
            + 2 * p * np
            + p * cap * d
            + 2 * p * h
            + 2 * p * np
            + team_threads * sl
            + p
            + hist_len
            + shift.len()
            + rotation.len()
            + 2 * d;
        let words = p * np
            + p * adaptive_ranking_words(np as u32)
            + p * np.max(cap)
            + p * ADAPTIVE_STATE_WORDS
            + shuffle.len()
            + 3 * p
            + 2;
        let needed = (std::mem::size_of::<T>() * reals + 4 * words) as u64;
        self.check_memory(needed)?;
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
        let up = |e| cuda_err(ctx("uploading"))(e);
        // An empty upload would be a zero-length allocation: upload one zero instead.
        let upload = |v: &[T]| -> Result<CudaSlice<T>> {
            if v.is_empty() {
                alloc(1)
            } else {
                stream.clone_htod(v).map_err(up)
            }
        };
        let seeds: Vec<u64> = jobs.iter().map(|j| j.seed()).collect();
        let streams: Vec<u32> = jobs.iter().map(|j| j.stream()).collect();
        let lo: Vec<T> = job.lower().iter().map(|&v| T::of(v)).collect();
        let hi: Vec<T> = job.upper().iter().map(|&v| T::of(v)).collect();
        let seeds_d = stream.clone_htod(&seeds).map_err(up)?;
        let streams_d = stream.clone_htod(&streams).map_err(up)?;
        let lo_d = upload(&lo)?;
        let hi_d = upload(&hi)?;
        let shift_d = upload(&shift)?;
        let rotation_d = upload(&rotation)?;
        let shuffle_d = if shuffle.is_empty() {
            allocu(1)?
        } else {
            stream.clone_htod(&shuffle).map_err(up)?
        };
        let x = alloc(p * np * d)?;
        let fit = alloc(p * np)?;
        let trials = alloc(p * np * d)?;
        let trial_fit = alloc(p * np)?;
        let trial_param = alloc(2 * p * np)?;
        let trial_word = allocu(p * np)?;
        let archive = alloc(p * cap * d)?;
        let memory = alloc(2 * p * h)?;
        let jde = alloc(2 * p * np)?;
        // The ranks double as the archive slots' owners in the selection.
        let ranks = allocu(p * np.max(cap))?;
        let ranking = allocu(p * adaptive_ranking_words(np as u32))?;
        let scratch = alloc(team_threads * sl)?;
        let state = allocu(p * ADAPTIVE_STATE_WORDS)?;
        let evaluations = stream
            .alloc_zeros::<u64>(p)
            .map_err(cuda_err(ctx("allocating")))?;
        let best_f = alloc(p)?;
        let hist = if hist_len > 0 {
            Some(alloc(hist_len)?)
        } else {
            None
        };
        let sync = if grid {
            Some(
                stream
                    .alloc_zeros::<u64>(1)
                    .map_err(cuda_err(ctx("allocating")))?,
            )
        } else {
            None
        };
        let s = &*stream;
        let params = AdaptiveParams::<T> {
            run,
            seeds: dev(&seeds_d, s),
            streams: dev(&streams_d, s),
            lo: dev(&lo_d, s),
            hi: dev(&hi_d, s),
            shift: dev(&shift_d, s),
            rotation: dev(&rotation_d, s),
            shuffle: dev(&shuffle_d, s),
            x: dev(&x, s),
            fit: dev(&fit, s),
            trials: dev(&trials, s),
            trial_fit: dev(&trial_fit, s),
            trial_param: dev(&trial_param, s),
            trial_word: dev(&trial_word, s),
            archive: dev(&archive, s),
            memory: dev(&memory, s),
            jde: dev(&jde, s),
            ranks: dev(&ranks, s),
            ranking: dev(&ranking, s),
            scratch: dev(&scratch, s),
            state: dev(&state, s),
            evaluations: dev(&evaluations, s),
            best_f: dev(&best_f, s),
            hist: dev_opt(hist.as_ref(), s),
            sync: dev_opt(sync.as_ref(), s),
        };
        // The CEC data must be the function's at this dimension (the kernel reads
        // `components(n)` shifts and rotations and `shuffles(n)` permutations).
        if let Some(c) = cec {
            let n = c.id().number();
            let want = gpude_device::cec2017::components(n) * d;
            if shift.len() < want || rotation.len() < want * d {
                return Err(Error::invalid(
                    "CEC 2017 data",
                    c.id().name(),
                    format!("the data of {} at D = {d}", c.id().name()),
                ));
            }
            if shuffle.len() < gpude_device::cec2017::shuffles(n) * d {
                return Err(Error::invalid(
                    "CEC 2017 data",
                    c.id().name(),
                    format!("the permutations of {} at D = {d}", c.id().name()),
                ));
            }
        }
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let start = Instant::now();
        Ok(AdaptiveLaunch {
            stream: stream.clone(),
            name,
            start,
            p,
            np,
            dim: d,
            gens,
            x,
            fit,
            state,
            evaluations,
            best_f,
            hist,
            trials,
            trial_fit,
            host_rows: Vec::new(),
            host_values: Vec::new(),
            func,
            params,
            cfg,
            grid,
            _inputs: (seeds_d, streams_d, lo_d, hi_d),
            _data: (shift_d, rotation_d, shuffle_d),
            _work: vec![trial_param, archive, memory, jde, scratch],
            _work_u: vec![trial_word, ranks, ranking],
            _sync: sync,
        })
    }
}

impl<T: GpuReal> AdaptiveLaunch<T> {
    /// Every buffer a run goes on from, one part per run in each: the rows, the archive,
    /// the memory and jDE's parameters; the values; the state words; the evaluations.
    #[allow(clippy::type_complexity)]
    pub(crate) fn run_buffers(
        &mut self,
    ) -> (
        Vec<&mut CudaSlice<T>>,
        &mut CudaSlice<T>,
        &mut CudaSlice<u32>,
        &mut CudaSlice<u64>,
    ) {
        // `_work` is [trial_param, archive, memory, jde, scratch] (`prepare_adaptive`).
        let mut rows = vec![&mut self.x];
        rows.extend(self._work[1..4].iter_mut());
        (rows, &mut self.fit, &mut self.state, &mut self.evaluations)
    }

    /// Launches the kernel for `phase` (`ADAPTIVE_PHASE_RUN`: the whole runs).
    pub(crate) fn launch(&mut self, phase: u32) -> Result<()> {
        let ctx = |what: &str| format!("{}: {what}", self.name);
        self.params.run.phase = phase;
        let mut b = self.stream.launch_builder(&self.func);
        push_params(&mut b, &self.params);
        if self.grid {
            // SAFETY: as the batch launch below, for the one run (p = 1) over the
            // configured blocks (the scratch holds a set per thread of the grid), with
            // `sync` a zeroed word that lives in `self`; the cooperative launch refuses
            // a grid whose blocks cannot all be resident, which the grid barrier needs
            // (blocks ≤ occupancy × multiprocessors). The grid kernels run whole runs.
            unsafe { b.launch_cooperative(self.cfg) }
                .map_err(cuda_err(ctx("launching (cooperative)")))?;
        } else {
            // SAFETY: the parameters are the kernel's (the build script checks them
            // against the PTX); every buffer is sized as `AdaptiveParams` says for `p`
            // runs of `np` rows of `d` values, the block's threads (the scratch) and
            // `gens + 1` history entries, and lives in `self` until it is read back; the
            // CEC data cover the function (checked when prepared); the batch kernels do
            // not read `sync` (null); a host kernel's phases come in their order, each
            // after the values its rows need (`adaptive_callback`).
            unsafe { b.launch(self.cfg) }.map_err(cuda_err(ctx("launching")))?;
        }
        Ok(())
    }

    /// The first `n` rows of `trials` (or of `x` when `trials` is false) of the one run,
    /// evaluated on the host by `job`'s objective, their values written to `trial_fit`
    /// (or `fit`). False when the objective failed (nothing is written).
    fn evaluate_on_host(&mut self, job: &Job, trials: bool, n: usize) -> Result<bool> {
        let err = |what: &str| cuda_err(format!("{}: {what}", self.name));
        let d = self.dim;
        if n == 0 {
            return Ok(true);
        }
        let src = if trials { &self.trials } else { &self.x };
        // The host's copies keep their allocations between generations.
        self.host_rows.resize(n * d, T::ZERO);
        self.host_values.resize(n, T::ZERO);
        self.stream
            .memcpy_dtoh(&src.slice(0..n * d), &mut self.host_rows[..])
            .map_err(err("reading the rows"))?;
        let objective = job.objective();
        objective.evaluate_rows(job.formula(), &self.host_rows, d, &mut self.host_values);
        if objective.failed() {
            return Ok(false);
        }
        let dst = if trials {
            &mut self.trial_fit
        } else {
            &mut self.fit
        };
        self.stream
            .memcpy_htod(&self.host_values[..], &mut dst.slice_mut(0..n))
            .map_err(err("writing the values"))?;
        Ok(true)
    }

    /// The one run's generations done, whether it is over, the next generation's trial
    /// count and the best value.
    fn progress(&self) -> Result<(u32, bool, usize, f64)> {
        let err = |what: &str| cuda_err(format!("{}: {what}", self.name));
        let s = self
            .stream
            .clone_dtoh(&self.state)
            .map_err(err("reading the state"))?;
        let bf = self
            .stream
            .clone_dtoh(&self.best_f)
            .map_err(err("reading the best"))?[0]
            .to_f64();
        let count = (s[ADAPTIVE_COUNT] as usize).min(self.np);
        Ok((s[ADAPTIVE_GENS], s[ADAPTIVE_DONE] != 0, count, bf))
    }

    /// Waits for the launch (or the last phase) and reads each run's result and final
    /// population.
    pub(crate) fn finish(self, jobs: &[&Job]) -> Result<Vec<(RunResult, FinalPopulation)>> {
        let err = |what: &str| cuda_err(format!("{}: {what}", self.name));
        let state = self
            .stream
            .clone_dtoh(&self.state)
            .map_err(err("running"))?;
        let elapsed: Duration = self.start.elapsed();
        let evaluations = self
            .stream
            .clone_dtoh(&self.evaluations)
            .map_err(err("reading back"))?;
        let best_f = self
            .stream
            .clone_dtoh(&self.best_f)
            .map_err(err("reading back"))?;
        let x = self
            .stream
            .clone_dtoh(&self.x)
            .map_err(err("reading back"))?;
        let fit = self
            .stream
            .clone_dtoh(&self.fit)
            .map_err(err("reading back"))?;
        let hist = match &self.hist {
            Some(h) => Some(self.stream.clone_dtoh(h).map_err(err("reading back"))?),
            None => None,
        };
        let (np, d) = (self.np, self.dim);
        let hl = self.gens as usize + 1;
        let mut out = Vec::with_capacity(self.p);
        for (k, job) in jobs.iter().enumerate().take(self.p) {
            let st = &state[k * ADAPTIVE_STATE_WORDS..(k + 1) * ADAPTIVE_STATE_WORDS];
            let (n, g, best) = (
                st[ADAPTIVE_SIZE] as usize,
                st[ADAPTIVE_GENS],
                st[ADAPTIVE_BEST] as usize,
            );
            if n > np || best >= n.max(1) || g > self.gens {
                return Err(Error::Cuda {
                    context: self.name.clone(),
                    message: format!(
                        "run {k} ended in an impossible state (size {n} of {np}, best {best}, generation {g})"
                    ),
                });
            }
            let rows = &x[k * np * d..(k * np + n) * d];
            let values = &fit[k * np..k * np + n];
            let bf = best_f[k].to_f64();
            let reached = job.target_value().is_some_and(|t| bf <= t);
            let termination = match job.adaptive() {
                // A classic run on a CEC function ends as the CPU engine's does.
                None if reached || g >= job.generations() => {
                    crate::run::result::termination(job, g, bf)
                }
                None => Termination::Stopped,
                Some(_) if reached => Termination::TargetReached,
                Some(a) if evaluations[k] >= a.max_evaluations => Termination::MaxEvaluations,
                Some(_) if g >= job.generations() => Termination::MaxGenerations,
                Some(_) => Termination::Stopped,
            };
            let result = RunResult::ended(
                job,
                Ending {
                    best_x: DVector::from_iterator(
                        d,
                        rows[best * d..(best + 1) * d].iter().map(|v| v.to_f64()),
                    ),
                    best_f: bf,
                    generations: g,
                    evaluations: evaluations[k],
                    termination,
                    elapsed,
                    history: hist.as_ref().map(|h| {
                        h[k * hl..k * hl + g as usize + 1]
                            .iter()
                            .map(|v| v.to_f64())
                            .collect()
                    }),
                    layout: if self.grid {
                        RunLayout::Grid
                    } else {
                        RunLayout::Batch
                    },
                    stream: job.stream(),
                },
            );
            let result = RunResult {
                launch_runs: self.p as u32,
                ..result
            };
            let population = FinalPopulation {
                x: rows.iter().map(|v| v.to_f64()).collect(),
                fit: values.iter().map(|v| v.to_f64()).collect(),
            };
            out.push((result, population));
        }
        Ok(out)
    }
}

impl CudaEngine {
    /// Runs the adaptive `job`, whose objective is a host callback, under `control` (its
    /// observer after every generation and its stop flag before each, as the CPU
    /// engine's adaptive runs: they are not saved on the way); see the module's
    /// documentation. The outcome's checkpoint holds the final population, for reports
    /// only. A failure of the callback stops the run (the caller reports it).
    pub(crate) fn adaptive_callback<T: GpuReal + Stored>(
        &self,
        job: &Job,
        control: &mut Control,
    ) -> Result<Outcome> {
        let mut l = self.prepare_adaptive::<T>(&[job], self.streams[0].clone(), Layout::Batch)?;
        l.launch(ADAPTIVE_PHASE_INIT_ROWS)?;
        if l.evaluate_on_host(job, false, l.np)? {
            l.launch(ADAPTIVE_PHASE_INIT_BEST)?;
            let (mut g, mut done, mut count, bf) = l.progress()?;
            let mut stopped = control.observer.is_some_and(|o| o(g, bf) == Flow::Stop);
            while !stopped && !done {
                if control.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    break;
                }
                l.launch(ADAPTIVE_PHASE_TRIALS)?;
                if !l.evaluate_on_host(job, true, count)? {
                    break;
                }
                l.launch(ADAPTIVE_PHASE_SELECT)?;
                let bf;
                (g, done, count, bf) = l.progress()?;
                stopped = control.observer.is_some_and(|o| o(g, bf) == Flow::Stop);
            }
        }
        let (mut result, population) = l.finish(&[job])?.remove(0);
        result.layout = RunLayout::HostCallback;
        let checkpoint = Checkpoint {
            job: job.clone(),
            generation: result.generations,
            state: T::state(
                population.x.iter().map(|&v| T::of(v)).collect(),
                population.fit.iter().map(|&v| T::of(v)).collect(),
            ),
            history: result.history.clone(),
            elapsed: result.elapsed,
        };
        Ok(Outcome { result, checkpoint })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::config::strategy_name;
    use gpude_device::{Function, Strategy};

    /// The GPU modes an adaptive job may ask for and the layout each gives; `steps`,
    /// which the adaptive kernels do not have, is refused naming the strategy and what
    /// is allowed.
    #[test]
    fn gpu_modes_of_adaptive_jobs() {
        for s in Strategy::ADAPTIVE {
            let job = Job::builder(Function::Rastrigin, 10)
                .strategy(s)
                .build()
                .expect("valid job");
            assert!(in_adaptive_kernels(&job));
            assert_eq!(gpu_layout(Mode::Auto, &job).unwrap(), Layout::Batch);
            assert_eq!(gpu_layout(Mode::Batch, &job).unwrap(), Layout::Batch);
            assert_eq!(gpu_layout(Mode::Grid, &job).unwrap(), Layout::Grid);
            let err = gpu_layout(Mode::Steps, &job)
                .expect_err("no step layout")
                .to_string();
            let name = strategy_name(s);
            assert!(err.contains("steps"), "{err}");
            assert!(
                err.contains(&format!("auto, batch or grid for {name}")),
                "{err}"
            );
        }
        // The names the CLI's --mode takes reach the layouts.
        let job = Job::builder(Function::Sphere, 10)
            .strategy(Strategy::Jso)
            .build()
            .expect("valid job");
        for (word, layout) in [
            ("grid", Layout::Grid),
            ("whole-gpu", Layout::Grid),
            ("block", Layout::Batch),
        ] {
            let mode = Mode::parse(word).expect("a mode");
            assert_eq!(gpu_layout(mode, &job).unwrap(), layout, "{word}");
        }
    }
}
