//! Watching, stopping and saving runs on the GPU: the CUDA engine's side of
//! [`crate::cpu::Control`].
//!
//! The batch and grid kernels run every generation in one launch, so the host cannot
//! look between generations. They take a *control block* instead
//! ([`gpude_device::control`]): pinned host memory mapped into the device's address
//! space ([`MappedBlock`]). Every `k` generations ([`Reporting::every`]) one thread per
//! population writes the generation and the best value there (two 64-bit stores, no
//! fence) and reads the host's command word; [`control::STOP`] ends the run at that
//! generation boundary, with the population of a whole generation in the buffers. With
//! [`Reporting::exact`] the kernel also waits at each report until the host has shown
//! it to the observer, so that an observer's [`Flow::Stop`] ends the run at exactly the
//! reported generation. The step layout needs none of this: the host looks between
//! launches, every `k` of them.
//!
//! What it costs (per population, per generation): without a control block, one
//! uniform branch on a null pointer (the default path of [`crate::CudaEngine::run`]);
//! with one, a remainder and a branch by one thread, a barrier that also reduces the
//! stop (`bar.red.or` in place of `bar.sync`), and every `k` generations two 8-byte
//! stores and one 8-byte load over the bus by that thread (the grid layout adds one grid
//! barrier per report in exact mode). In exact mode each report also waits for a round
//! trip to the host. The kernels' code grows by these few paths, which changes the
//! registers ptxas gives them (see docs/PERFORMANCE.md for the measured effect).
//!
//! Because every random number is keyed by (seed, stream, individual, generation), the
//! population and its values after generation `g` are the whole state of a run: a
//! stopped run is downloaded into a [`Checkpoint`] in the CPU engine's format, and
//! either engine goes on from it with the same bits.

use crate::checkpoint::{Checkpoint, Entry, Part, State, Stored};
use crate::config::{Job, Precision};
use crate::cpu::{Control, Flow, Outcome};
use crate::cuda::{
    BatchLaunch, CudaEngine, GpuReal, GridBuffers, Mode, STATE_BEST, STATE_DONE, STATE_GEN,
    STATE_WORDS, compatible, cuda_err, read_grid,
};
use crate::error::{Error, Result};
use crate::result::{RunResult, Termination};
use cudarc::driver::{CudaContext, CudaStream, PinnedHostSlice};
use gpude_device::control::{self, COMMAND, PROGRESS_HI, PROGRESS_LO, SLOT_WORDS, STOP};
use gpude_device::lanes::stride;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// How often a kernel under control reports, and whether it waits for the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reporting {
    /// Report (and look for a stop) every this many generations, 1 ..= 2^31 − 1. A stop
    /// takes effect at the next multiple of it (or at the generation the launch
    /// started from); the observer sees those generations and the last one.
    pub every: u32,
    /// Wait at every report until the host has answered: the observer sees each
    /// reported generation, and its [`Flow::Stop`] ends the run exactly there, at the
    /// cost of a round trip to the host per report.
    pub exact: bool,
}

impl Default for Reporting {
    /// Every 32 generations, without waiting: a few stores and one load over the bus per
    /// 32 generations of each population.
    fn default() -> Self {
        Reporting {
            every: 32,
            exact: false,
        }
    }
}

impl Reporting {
    /// Refuses an interval of 0 or above [`control::MAX_EVERY`].
    pub fn check(&self) -> Result<()> {
        if self.every == 0 || self.every > control::MAX_EVERY {
            return Err(Error::invalid(
                "report interval",
                self.every,
                format!("1 ..= {} generations", control::MAX_EVERY),
            ));
        }
        Ok(())
    }

    /// The kernels' `report` argument.
    pub fn arg(&self) -> u32 {
        control::report(self.every, self.exact)
    }
}

/// An observer of several runs: `(run, generation, best) -> Flow`, where `run` is the
/// run's index in the list given. [`Flow::Stop`] stops that run.
pub type RunsObserver<'a> = &'a (dyn Fn(usize, u32, f64) -> Flow + Sync);

/// Receives the state of every run of the list, in order, every [`Watch::every`]
/// generations; [`Flow::Stop`] stops them all there.
pub type RunsSaver<'a> = &'a mut dyn FnMut(&[Part]) -> Flow;

/// How a list of runs on the GPU is watched, stopped and saved on the way: the
/// several-run form of [`crate::cpu::Control`].
#[derive(Default)]
pub struct Watch<'a> {
    pub observer: Option<RunsObserver<'a>>,
    /// Once set, every run stops at its next reported generation.
    pub stop: Option<&'a AtomicBool>,
    /// Give `save` the state of the runs every this many generations (0: never).
    pub every: u32,
    pub save: Option<RunsSaver<'a>>,
    pub reporting: Reporting,
    /// Download the final state of the runs that ended too (not only of those that
    /// were stopped), so that each comes back as [`Entry::Started`].
    pub keep: bool,
}

/// What became of one run of a list: its result (none when a stop came before it
/// started) and its entry (its state when it was stopped or `keep` asked for it, else
/// its job, from which a rerun gives the same bits).
#[derive(Clone, Debug)]
pub struct Ran {
    pub result: Option<RunResult>,
    pub entry: Entry,
}

/// Words shared with a running kernel.
pub trait Words: Sync {
    fn load(&self, i: usize) -> u64;
    fn store(&self, i: usize, v: u64);
}

impl Words for [AtomicU64] {
    fn load(&self, i: usize) -> u64 {
        self[i].load(Ordering::Acquire)
    }
    fn store(&self, i: usize, v: u64) {
        self[i].store(v, Ordering::Release)
    }
}

/// A control block in pinned host memory mapped into the device's address space.
pub struct MappedBlock {
    /// Owns the memory (freed on drop, after the work recorded on it).
    memory: PinnedHostSlice<u64>,
    host: *const AtomicU64,
    len: usize,
    device: u64,
}

// SAFETY: the block is only reached through atomic loads and stores of its words
// (`Words`), from any thread; the pointer stays valid while `memory` lives.
unsafe impl Send for MappedBlock {}
// SAFETY: as above.
unsafe impl Sync for MappedBlock {}

impl MappedBlock {
    /// A zeroed block of one slot per population.
    pub fn new(ctx: &Arc<CudaContext>, populations: usize) -> Result<MappedBlock> {
        let len = populations.max(1) * SLOT_WORDS;
        let err = |what: &'static str| {
            move |source| Error::Driver {
                context: format!("control block: {what}"),
                source,
            }
        };
        // SAFETY: the memory is written (zeroed) below before anything reads it.
        let mut memory = unsafe {
            ctx.alloc_pinned_with_flags::<u64>(len, cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP)
        }
        .map_err(err("allocating mapped host memory"))?;
        let ptr = memory.as_mut_ptr().map_err(err("reaching it"))?;
        // SAFETY: `ptr` addresses `len` u64 just allocated, aligned for u64, which
        // nothing else uses yet.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        let mut device = 0u64;
        ctx.bind_to_thread().map_err(err("binding the context"))?;
        // SAFETY: `ptr` was allocated with CU_MEMHOSTALLOC_DEVICEMAP in this context, and
        // `device` receives one device pointer.
        unsafe {
            cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut device, ptr.cast(), 0).result()
        }
        .map_err(err("mapping it into the device"))?;
        Ok(MappedBlock {
            memory,
            host: ptr as *const AtomicU64,
            len,
            device,
        })
    }

    /// The device address of the block (a kernel's `ctl` argument).
    pub fn device_ptr(&self) -> u64 {
        self.device
    }

    /// Populations it has slots for.
    pub fn slots(&self) -> usize {
        self.len / SLOT_WORDS
    }

    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `host` addresses `len` u64 of pinned memory that lives as long as
        // `self.memory`; AtomicU64 has the layout of u64, and every access is atomic.
        unsafe { std::slice::from_raw_parts(self.host, self.len) }
    }

    /// Zeroes every word (before a launch).
    pub fn clear(&self) {
        for w in self.words() {
            w.store(0, Ordering::Release);
        }
    }

    /// Bytes of the block (for memory checks and messages).
    pub fn bytes(&self) -> usize {
        self.memory.num_bytes()
    }
}

impl Words for MappedBlock {
    fn load(&self, i: usize) -> u64 {
        self.words().load(i)
    }
    fn store(&self, i: usize, v: u64) {
        self.words().store(i, v)
    }
}

/// A best value from its bits in the run's precision.
pub fn value_of(bits: u64, precision: Precision) -> f64 {
    match precision {
        Precision::F32 => f32::from_bits(bits as u32) as f64,
        Precision::F64 => f64::from_bits(bits),
    }
}

/// The host's side of a control block during one launch: shows new progress to the
/// observer, releases kernels waiting at a report (exact mode) and sends stops.
pub struct Monitor {
    precision: Precision,
    exact: bool,
    /// Index in the caller's list of each slot's run.
    runs: Vec<usize>,
    /// The last generation of each slot given to the observer.
    seen: Vec<Option<u32>>,
    /// The command last written to each slot.
    sent: Vec<u64>,
}

impl Monitor {
    /// A monitor of `runs.len()` slots, slot `k` for run `runs[k]`; `seen` holds the
    /// generation each run was last shown at (so that a launch that starts where the
    /// last one ended does not show it twice).
    pub fn new(
        precision: Precision,
        reporting: Reporting,
        runs: Vec<usize>,
        seen: Vec<Option<u32>>,
    ) -> Monitor {
        let n = runs.len();
        Monitor {
            precision,
            exact: reporting.exact,
            runs,
            seen,
            sent: vec![0; n],
        }
    }

    /// Takes the commands the block holds as sent (a later launch of the same block:
    /// a stopped slot stays stopped).
    pub fn adopt<W: Words + ?Sized>(&mut self, words: &W) {
        for (k, sent) in self.sent.iter_mut().enumerate() {
            *sent = words.load(k * SLOT_WORDS + COMMAND);
        }
    }

    /// Has slot `k` been told to stop?
    pub fn stopped(&self, k: usize) -> bool {
        self.sent[k] == STOP
    }

    /// Was any slot told to stop?
    pub fn any_stopped(&self) -> bool {
        self.sent.contains(&STOP)
    }

    /// The generation each slot was last shown at.
    pub fn seen(&self) -> &[Option<u32>] {
        &self.seen
    }

    /// Sends the stop to every slot.
    pub fn stop_all<W: Words + ?Sized>(&mut self, words: &W) {
        for k in 0..self.sent.len() {
            self.send(words, k, STOP);
        }
    }

    fn send<W: Words + ?Sized>(&mut self, words: &W, k: usize, command: u64) {
        if self.sent[k] != STOP && self.sent[k] != command {
            words.store(k * SLOT_WORDS + COMMAND, command);
            self.sent[k] = command;
        }
    }

    /// One look at the block: each slot's progress, then the stop flag. A generation
    /// not shown yet goes to the observer; its [`Flow::Stop`] stops that slot. The flag
    /// is read after the observer (which may set it), so that a kernel waiting at a
    /// report (exact mode) stops there; else a reported generation is then released.
    pub fn poll<W: Words + ?Sized>(
        &mut self,
        words: &W,
        observer: Option<RunsObserver>,
        stop: Option<&AtomicBool>,
    ) {
        let mut reported = vec![None; self.runs.len()];
        for (k, slot) in reported.iter_mut().enumerate() {
            let base = k * SLOT_WORDS;
            let lo = words.load(base + PROGRESS_LO);
            let hi = words.load(base + PROGRESS_HI);
            let Some((g, bits)) = control::read_progress(lo, hi) else {
                continue;
            };
            *slot = Some(g);
            if self.seen[k].is_none_or(|s| s < g) {
                self.seen[k] = Some(g);
                if let Some(o) = observer
                    && !self.stopped(k)
                    && o(self.runs[k], g, value_of(bits, self.precision)) == Flow::Stop
                {
                    self.send(words, k, STOP);
                }
            }
        }
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            self.stop_all(words);
        }
        if self.exact {
            for (k, g) in reported.into_iter().enumerate() {
                if let Some(g) = g
                    && self.seen[k] == Some(g)
                    && !self.stopped(k)
                {
                    self.send(words, k, control::release(g));
                }
            }
        }
    }
}

/// Why a run on the GPU ended: the job's own reason when it reached its limit or
/// target, else [`Termination::Stopped`].
pub fn ending(job: &Job, generations: u32, best_f: f64) -> Termination {
    let reached = job.target_value().is_some_and(|t| best_f <= t);
    if generations >= job.generations() || reached {
        crate::result::termination(job, generations, best_f)
    } else {
        Termination::Stopped
    }
}

/// Where the next launch of a run that has done `g` generations ends: the job's limit,
/// or the next multiple of `every` (checkpoints) before it.
pub fn segment_end(g: u32, limit: u32, every: u32) -> u32 {
    if every == 0 || g >= limit {
        return limit;
    }
    let next = (g / every).saturating_add(1).saturating_mul(every);
    next.min(limit)
}

/// Rows of a double-buffered population (`np` rows of stride `st`, `dim` used), each
/// from the buffer its flag names, as one row-major state in the job's precision.
pub fn gather_state<T: Stored>(
    a: &[T],
    b: &[T],
    flags: &[u32],
    fit: Vec<T>,
    dim: usize,
    st: usize,
) -> State {
    let mut x = Vec::with_capacity(flags.len() * dim);
    for (i, &f) in flags.iter().enumerate() {
        let src = if f == 0 { a } else { b };
        x.extend_from_slice(&src[i * st..i * st + dim]);
    }
    T::state(x, fit)
}

/// The rows of a state padded to the kernels' stride (for upload into buffer a, with
/// every flag 0), and its values.
pub fn padded_state<T: Stored>(state: &State, dim: usize, st: usize) -> Result<(Vec<T>, Vec<T>)> {
    let (x, fit) = T::parts(state.clone()).ok_or_else(|| Error::Input {
        what: "checkpoint".into(),
        message: format!("the population is not in {}", T::NAME),
    })?;
    let np = fit.len();
    let mut rows = vec![T::ZERO; np * st];
    for i in 0..np {
        rows[i * st..i * st + dim].copy_from_slice(&x[i * dim..(i + 1) * dim]);
    }
    Ok((rows, fit))
}

/// A run's history: what it had before this launch (`before`: generations 0 ..= g0)
/// and what the launch recorded (`launch`: generations g0 ..= g, its first value the
/// same best as `before`'s last).
pub fn join_history(before: Option<Vec<f64>>, launch: &[f64]) -> Vec<f64> {
    match before {
        Some(mut h) if !h.is_empty() => {
            h.extend_from_slice(launch.get(1..).unwrap_or(&[]));
            h
        }
        _ => launch.to_vec(),
    }
}

/// How long the host waits between two looks at a running launch: at once in exact
/// mode (the kernel is waiting), else a short sleep.
pub fn pause(reporting: Reporting) {
    if reporting.exact {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The starting point of a run of a list: its job, the generations done, its state
/// (none for a fresh run) and its history and time so far.
pub struct Start<'e> {
    pub job: &'e Job,
    pub generation: u32,
    pub state: Option<&'e State>,
    pub history: Option<&'e [f64]>,
    pub elapsed: Duration,
}

impl<'e> Start<'e> {
    pub fn of(e: &'e Entry) -> Start<'e> {
        match e {
            Entry::Pending(job) => Start {
                job,
                generation: 0,
                state: None,
                history: None,
                elapsed: Duration::ZERO,
            },
            Entry::Started(c) => Start {
                job: &c.job,
                generation: c.generation,
                state: Some(&c.state),
                history: c.history.as_deref(),
                elapsed: c.elapsed,
            },
        }
    }

    /// Does the run start from a saved population (rather than the initialisation)?
    pub fn loaded(&self) -> bool {
        self.state.is_some() && self.generation > 0
    }
}

/// The checkpoint of a run downloaded from the GPU.
pub fn checkpoint_of(
    job: &Job,
    generation: u32,
    state: State,
    history: Option<Vec<f64>>,
    elapsed: Duration,
) -> Checkpoint {
    Checkpoint {
        job: job.clone(),
        generation,
        state,
        history,
        elapsed,
    }
}

/// The result of a checkpoint as the CUDA engine reports it.
pub fn result_of(c: &Checkpoint) -> RunResult {
    let mut r = c.result();
    r.backend = "cuda";
    r
}

/// Checks what the engine runs under control: every job savable when anything is
/// saved, and the reporting.
pub fn check_watch(entries: &[Entry], watch: &Watch) -> Result<()> {
    watch.reporting.check()?;
    if watch.save.is_some() || watch.keep {
        for e in entries {
            crate::checkpoint::savable(e.job())?;
        }
    }
    for e in entries {
        if let Entry::Started(c) = e {
            c.check()?;
        }
    }
    Ok(())
}

/// A precision the CUDA engine runs and a checkpoint stores.
pub trait Controlled: GpuReal + Stored {}
impl Controlled for f32 {}
impl Controlled for f64 {}

/// The runs of a list while the engine goes through them: each one's entry (its state
/// as last known) and result.
struct Runs {
    entries: Vec<Entry>,
    results: Vec<Option<RunResult>>,
    /// The stop flag or the saver stopped everything.
    halted: bool,
}

impl Runs {
    /// Gives the state of every run to the saver.
    fn save(&self, watch: &mut Watch) -> Flow {
        let parts: Vec<Part> = self.entries.iter().map(Entry::part).collect();
        match watch.save.as_mut() {
            Some(save) => save(&parts),
            None => Flow::Continue,
        }
    }
}

/// Has the stop flag been set?
fn flagged(watch: &Watch) -> bool {
    watch.stop.is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Runs a launch to its end while watching its control block.
fn watch_launch(
    stream: &Arc<CudaStream>,
    name: &str,
    block: &MappedBlock,
    monitor: &mut Monitor,
    watch: &Watch,
) -> Result<()> {
    let err = |what: &str| cuda_err(format!("{name}: {what}"));
    let event = stream
        .record_event(None)
        .map_err(err("recording an event"))?;
    loop {
        monitor.poll(block, watch.observer, watch.stop);
        if event.try_is_complete().map_err(err("running"))? {
            return Ok(());
        }
        pause(watch.reporting);
    }
}

/// Refuses to download `bytes` of state when the host has less available.
fn check_download(bytes: usize) -> Result<()> {
    crate::cpu::check_memory(bytes as u64)
}

/// Population `k`'s state in a batch launch.
fn batch_state<T: Controlled>(l: &BatchLaunch<T>, k: usize, job: &Job) -> Result<State> {
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

/// The state of a whole-GPU run after generation `g` (its flags in plane g % 2).
fn grid_state<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &GridBuffers<T>,
    g: u32,
    job: &Job,
) -> Result<State> {
    let np = job.pop() as usize;
    let st = stride(job.dim()) as usize;
    check_download(2 * np * st * std::mem::size_of::<T>())?;
    let err = |e| cuda_err(format!("{name}: reading back"))(e);
    let plane = (g as usize % 2) * np;
    let a = stream.clone_dtoh(&bu.pop_a).map_err(err)?;
    let b = stream.clone_dtoh(&bu.pop_b).map_err(err)?;
    let flags = stream
        .clone_dtoh(&bu.flags.slice(plane..plane + np))
        .map_err(err)?;
    let fit = stream.clone_dtoh(&bu.fit).map_err(err)?;
    Ok(gather_state(&a, &b, &flags, fit, job.dim() as usize, st))
}

/// Uploads a saved population into a whole-GPU run's buffer a (its flags all 0) and
/// its values, and sets the state's generation.
fn upload_grid<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &mut GridBuffers<T>,
    s: &Start,
    best: bool,
) -> Result<()> {
    let job = s.job;
    let st = stride(job.dim()) as usize;
    let err = |e| cuda_err(format!("{name}: uploading"))(e);
    let state = s.state.ok_or_else(|| Error::Input {
        what: "checkpoint".into(),
        message: "a started run without its population".into(),
    })?;
    let (rows, fit) = padded_state::<T>(state, job.dim() as usize, st)?;
    stream.memcpy_htod(&rows, &mut bu.pop_a).map_err(err)?;
    stream.memcpy_htod(&fit, &mut bu.fit).map_err(err)?;
    let mut words = vec![0u32; STATE_WORDS];
    words[STATE_GEN] = s.generation;
    if best {
        // The step kernels read the best individual of the last generation here.
        let b = crate::checkpoint::best_index(&fit);
        words[STATE_BEST] = b as u32;
        stream
            .memcpy_htod(&fit[b..b + 1], &mut bu.best_f)
            .map_err(err)?;
    }
    stream.memcpy_htod(&words, &mut bu.state).map_err(err)?;
    Ok(())
}

/// The best value a whole-GPU run's state names.
fn grid_best<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &GridBuffers<T>,
) -> Result<f64> {
    Ok(stream
        .clone_dtoh(&bu.best_f)
        .map_err(cuda_err(format!("{name}: reading back")))?[0]
        .to_f64())
}

/// The history a whole-GPU run recorded from generation `from` to `g`.
fn grid_history<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &GridBuffers<T>,
    from: u32,
    g: u32,
) -> Result<Option<Vec<f64>>> {
    match &bu.hist {
        Some(h) => {
            let v = stream
                .clone_dtoh(&h.slice(from as usize..g as usize + 1))
                .map_err(cuda_err(format!("{name}: reading back")))?;
            Ok(Some(v.iter().map(|x| x.to_f64()).collect()))
        }
        None => Ok(None),
    }
}

/// How a run stands after a launch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Standing {
    Running,
    Ended,
    Stopped,
}

/// A run's standing after a launch to `end` that left it at generation `g` with best
/// `bf`; `told` says whether the host had sent it the stop.
fn standing(job: &Job, g: u32, bf: f64, end: u32, told: bool) -> Standing {
    if ending(job, g, bf) != Termination::Stopped {
        Standing::Ended
    } else if g < end || told {
        Standing::Stopped
    } else {
        Standing::Running
    }
}

/// A control block lent to a run: given back to the engine (for the next run) when
/// dropped.
struct Lease<'e> {
    engine: &'e CudaEngine,
    block: Option<MappedBlock>,
}

impl std::ops::Deref for Lease<'_> {
    type Target = MappedBlock;
    fn deref(&self) -> &MappedBlock {
        self.block.as_ref().expect("a leased block until dropped")
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let (Some(b), Ok(mut kept)) = (self.block.take(), self.engine.blocks.lock()) {
            // The larger of the two stays.
            if kept.as_ref().is_none_or(|k| k.slots() < b.slots()) {
                *kept = Some(b);
            }
        }
    }
}

impl CudaEngine {
    /// A zeroed control block of at least `slots` slots: the engine's kept one when it
    /// is free and large enough, else a new one.
    fn lease_block(&self, slots: usize) -> Result<Lease<'_>> {
        let kept = self.blocks.lock().ok().and_then(|mut k| k.take());
        let block = match kept {
            Some(b) if b.slots() >= slots => {
                b.clear();
                b
            }
            _ => MappedBlock::new(self.context(), slots)?,
        };
        Ok(Lease {
            engine: self,
            block: Some(block),
        })
    }

    /// Runs (or goes on with) a list of runs under `watch`: fresh jobs
    /// ([`Entry::Pending`]) and saved runs ([`Entry::Started`], from either engine).
    /// In the batch layout compatible runs share a launch; the grid and step layouts
    /// take them one at a time. A stop (the flag, the observer, the saver) ends the
    /// runs it reaches at a generation boundary, with their state downloaded; runs
    /// not started by then come back as they were, without a result.
    pub fn run_entries(
        &self,
        entries: Vec<Entry>,
        mode: Mode,
        watch: &mut Watch,
    ) -> Result<Vec<Ran>> {
        if entries
            .iter()
            .any(|e| crate::adaptive::in_adaptive_kernels(e.job()))
        {
            return self.adaptive_entries(entries, mode, watch);
        }
        if entries
            .iter()
            .any(|e| e.job().objective().is_host_callback())
        {
            return self.entries_one_by_one(entries, mode, watch);
        }
        for e in &entries {
            let job = e.job();
            crate::cuda::check_objective(job)?;
            job.check()?;
        }
        check_watch(&entries, watch)?;
        let modes: Vec<Mode> = entries
            .iter()
            .map(|e| match mode {
                Mode::Auto => self.auto_mode(e.job()),
                m => m,
            })
            .collect();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for k in 0..entries.len() {
            let joins = groups.iter_mut().find(|g| {
                modes[k] == Mode::Batch
                    && modes[g[0]] == Mode::Batch
                    && compatible(entries[g[0]].job(), entries[k].job())
            });
            match joins {
                Some(g) => g.push(k),
                None => groups.push(vec![k]),
            }
        }
        let n = entries.len();
        let mut runs = Runs {
            entries,
            results: vec![None; n],
            halted: false,
        };
        for (i, group) in groups.iter().enumerate() {
            // The first group always starts (a stop then ends it where it started).
            if i > 0 && (runs.halted || flagged(watch)) {
                break;
            }
            let k = group[0];
            match (modes[k], runs.entries[k].job().precision()) {
                (Mode::Grid, Precision::F32) => self.grid_one::<f32>(k, &mut runs, watch)?,
                (Mode::Grid, Precision::F64) => self.grid_one::<f64>(k, &mut runs, watch)?,
                (Mode::Steps, Precision::F32) => self.steps_one::<f32>(k, &mut runs, watch)?,
                (Mode::Steps, Precision::F64) => self.steps_one::<f64>(k, &mut runs, watch)?,
                (_, Precision::F32) => self.batch_group::<f32>(group, &mut runs, watch)?,
                (_, Precision::F64) => self.batch_group::<f64>(group, &mut runs, watch)?,
            }
        }
        Ok(runs
            .entries
            .into_iter()
            .zip(runs.results)
            .map(|(entry, result)| Ran { result, entry })
            .collect())
    }

    /// A list with host callbacks: one run after the other, the callbacks' under a
    /// [`Control`] of the watch's observer and stop flag (the host sees each of their
    /// generations), the others as [`CudaEngine::run_entries`] runs them. Callbacks are
    /// not savable: a watch that saves or keeps states refuses them.
    fn entries_one_by_one(
        &self,
        entries: Vec<Entry>,
        mode: Mode,
        watch: &mut Watch,
    ) -> Result<Vec<Ran>> {
        check_watch(&entries, watch)?;
        let mut out = Vec::with_capacity(entries.len());
        let mut halted = false;
        for (k, entry) in entries.into_iter().enumerate() {
            if k > 0 && (halted || flagged(watch)) {
                out.push(Ran {
                    result: None,
                    entry,
                });
                continue;
            }
            if !entry.job().objective().is_host_callback() {
                let ran = self.run_entries(vec![entry], mode, watch)?;
                halted |= flagged(watch);
                out.extend(ran);
                continue;
            }
            let observer = watch.observer;
            let one = move |g: u32, best: f64| match observer {
                Some(o) => o(k, g, best),
                None => Flow::Continue,
            };
            let mut control = Control {
                observer: Some(&one),
                stop: watch.stop,
                ..Control::default()
            };
            let o = self.callback_run(entry.job(), &mut control)?;
            let stopped = o.result.termination == crate::Termination::Stopped;
            halted |= stopped && flagged(watch);
            out.push(Ran {
                result: Some(o.result),
                entry: if stopped {
                    Entry::Started(o.checkpoint)
                } else {
                    entry
                },
            });
        }
        Ok(out)
    }

    /// [`CudaEngine::run_entries`] for adaptive runs: they run to their end in one batch
    /// launch, or in the grid and step modes one after the other as [`CudaEngine::run`]
    /// runs them (the adaptive ones in the grid layout; see
    /// [`crate::adaptive::gpu_layout`]). No checkpoints: an adaptive run's memory and
    /// archive are not saved yet; a stop flag set during a launch does not stop it. The
    /// observer sees each run's last generation.
    fn adaptive_entries(
        &self,
        entries: Vec<Entry>,
        mode: Mode,
        watch: &mut Watch,
    ) -> Result<Vec<Ran>> {
        let mut jobs = Vec::with_capacity(entries.len());
        for e in &entries {
            let job = e.job();
            if watch.keep || watch.every > 0 || matches!(e, Entry::Started(_)) {
                crate::checkpoint::savable(job)?;
                // A classic strategy on a CEC 2017 function is savable, but its kernel
                // (the adaptive family's) keeps no state between launches.
                return Err(Error::invalid(
                    "checkpoint on the GPU",
                    crate::config::strategy_name(job.strategy()),
                    "a run outside the adaptive kernels: runs on CEC 2017 functions are not saved on the GPU yet; use --backend cpu to save them",
                ));
            }
            jobs.push(job.clone());
        }
        let results = match mode {
            Mode::Grid | Mode::Steps => jobs
                .iter()
                .map(|j| self.run(j, mode))
                .collect::<Result<Vec<_>>>()?,
            Mode::Auto | Mode::Batch => self.run_batch(&jobs)?,
        };
        if let Some(o) = watch.observer {
            for (k, r) in results.iter().enumerate() {
                // The runs have ended: a stop asked for now changes nothing.
                let _ = o(k, r.generations, r.best_f);
            }
        }
        Ok(entries
            .into_iter()
            .zip(results)
            .map(|(entry, r)| Ran {
                result: Some(r),
                entry,
            })
            .collect())
    }

    /// Runs `job` under `control` (as [`crate::cpu::run_controlled`] does on the CPU),
    /// reporting as `reporting` says; the outcome holds its final state. A host callback
    /// runs in its own layout (`cuda/callback.rs`): the host sees every generation.
    pub fn run_controlled(
        &self,
        job: &Job,
        mode: Mode,
        control: &mut Control,
        reporting: Reporting,
    ) -> Result<Outcome> {
        if job.objective().is_host_callback() {
            return self.callback_run(job, control);
        }
        self.control_one(Entry::Pending(job.clone()), mode, control, reporting)
    }

    /// Goes on from a checkpoint (of either engine) to its job's limit under `control`,
    /// with the same bits as a run that never stopped.
    pub fn resume(
        &self,
        from: Checkpoint,
        mode: Mode,
        control: &mut Control,
        reporting: Reporting,
    ) -> Result<Outcome> {
        from.check()?;
        crate::checkpoint::savable(&from.job)?;
        self.control_one(Entry::Started(from), mode, control, reporting)
    }

    fn control_one(
        &self,
        entry: Entry,
        mode: Mode,
        control: &mut Control,
        reporting: Reporting,
    ) -> Result<Outcome> {
        let observer = control.observer;
        let one = move |_: usize, g: u32, best: f64| match observer {
            Some(o) => o(g, best),
            None => Flow::Continue,
        };
        let saves = control.save.is_some();
        let mut saver = |parts: &[Part]| match (parts.first(), control.save.as_mut()) {
            (Some(Part::Started(c)), Some(save)) => save(c),
            _ => Flow::Continue,
        };
        let mut watch = Watch {
            observer: Some(&one),
            stop: control.stop,
            every: control.every,
            save: if saves { Some(&mut saver) } else { None },
            reporting,
            keep: true,
        };
        let ran = self.run_entries(vec![entry], mode, &mut watch)?;
        match ran.into_iter().next() {
            Some(Ran {
                result: Some(result),
                entry: Entry::Started(checkpoint),
            }) => Ok(Outcome { result, checkpoint }),
            _ => Err(Error::Cuda {
                context: "a controlled run".into(),
                message: "the run left no state".into(),
            }),
        }
    }

    /// A batch launch of compatible runs (entries `group` of `runs`), in segments that
    /// end at the checkpoints.
    fn batch_group<T: Controlled>(
        &self,
        group: &[usize],
        runs: &mut Runs,
        watch: &mut Watch,
    ) -> Result<()> {
        let jobs: Vec<Job> = group
            .iter()
            .map(|&k| runs.entries[k].job().clone())
            .collect();
        let refs: Vec<&Job> = jobs.iter().collect();
        let p = jobs.len();
        let limit = jobs[0].generations();
        let stream = self.first_stream();
        let mut l = self.alloc_batch::<T>(&refs, stream.clone(), true)?;
        let (name, st, np, dim) = (
            l.name.clone(),
            l.st,
            jobs[0].pop() as usize,
            jobs[0].dim() as usize,
        );
        let up = |e| cuda_err(format!("{name}: uploading"))(e);
        let mut gens = vec![0u32; p];
        let mut history: Vec<Option<Vec<f64>>> = vec![None; p];
        let mut before = vec![Duration::ZERO; p];
        for (k, &e) in group.iter().enumerate() {
            let s = Start::of(&runs.entries[e]);
            before[k] = s.elapsed;
            history[k] = s.history.map(<[f64]>::to_vec);
            if let (true, Some(state)) = (s.loaded(), s.state) {
                let (rows, fit) = padded_state::<T>(state, dim, st)?;
                let n = np * st;
                stream
                    .memcpy_htod(&rows, &mut l.pop_a.slice_mut(k * n..(k + 1) * n))
                    .map_err(up)?;
                stream
                    .memcpy_htod(&fit, &mut l.fit.slice_mut(k * np..(k + 1) * np))
                    .map_err(up)?;
                gens[k] = s.generation;
            }
        }
        stream.memcpy_htod(&gens, &mut l.gens_done).map_err(up)?;
        let block = self.lease_block(p)?;
        let mut seen: Vec<Option<u32>> = vec![None; p];
        let mut stand = vec![Standing::Running; p];
        let mut last = Vec::new();
        let start = std::time::Instant::now();
        // The runs still running go on to the next checkpoint (or their limit).
        while let Some(g) = (0..p)
            .filter(|&k| stand[k] == Standing::Running)
            .map(|k| gens[k])
            .min()
        {
            let end = segment_end(g, limit, watch.every);
            let mut monitor = Monitor::new(
                jobs[0].precision(),
                watch.reporting,
                group.to_vec(),
                seen.clone(),
            );
            monitor.adopt(&*block);
            l.launch(end, block.device_ptr(), watch.reporting.arg())?;
            watch_launch(&stream, &name, &block, &mut monitor, watch)?;
            seen = monitor.seen().to_vec();
            let from = gens.clone();
            last = l.outcomes(&refs, &from)?;
            for k in 0..p {
                if stand[k] != Standing::Running {
                    continue;
                }
                let o = &mut last[k];
                gens[k] = o.generations;
                if let Some(h) = o.history.take() {
                    history[k] = Some(join_history(history[k].take(), &h));
                }
                stand[k] = standing(&jobs[k], o.generations, o.best_f, end, monitor.stopped(k));
            }
            let halt = flagged(watch);
            let more = stand.contains(&Standing::Running);
            let mut saved = Flow::Continue;
            if more && !halt && watch.every > 0 && watch.save.is_some() {
                for k in 0..p {
                    let c = checkpoint_of(
                        &jobs[k],
                        gens[k],
                        batch_state(&l, k, &jobs[k])?,
                        history[k].clone(),
                        before[k] + start.elapsed(),
                    );
                    runs.entries[group[k]] = Entry::Started(c);
                }
                saved = runs.save(watch);
            }
            if halt || saved == Flow::Stop {
                runs.halted = true;
                for s in stand.iter_mut().filter(|s| **s == Standing::Running) {
                    *s = Standing::Stopped;
                }
            }
        }
        let elapsed = start.elapsed();
        for (k, o) in last.into_iter().enumerate() {
            let (e, job) = (group[k], &jobs[k]);
            if seen[k] != Some(gens[k])
                && let Some(obs) = watch.observer
            {
                // The last generation, as the CPU engine shows it; the run has ended.
                let _ = obs(e, gens[k], o.best_f);
            }
            let total = before[k] + elapsed;
            if watch.keep || stand[k] == Standing::Stopped {
                let c = checkpoint_of(
                    job,
                    gens[k],
                    batch_state(&l, k, job)?,
                    history[k].take(),
                    total,
                );
                runs.results[e] = Some(result_of(&c));
                runs.entries[e] = Entry::Started(c);
            } else {
                let o = crate::cuda::Launched {
                    history: history[k].take(),
                    ..o
                };
                runs.results[e] = Some(o.result(job, total));
                runs.entries[e] = Entry::Pending(job.clone());
            }
        }
        Ok(())
    }

    /// One run over the whole GPU in cooperative launches (one per segment).
    fn grid_one<T: Controlled>(&self, e: usize, runs: &mut Runs, watch: &mut Watch) -> Result<()> {
        let job = runs.entries[e].job().clone();
        let limit = job.generations();
        let mut run = self.grid_run::<T>(&job)?;
        let (stream, name) = (run.stream.clone(), run.name.clone());
        let s = Start::of(&runs.entries[e]);
        let before = s.elapsed;
        let mut history = s.history.map(<[f64]>::to_vec);
        let mut g = 0;
        if s.loaded() {
            upload_grid(&stream, &name, &mut run.bu, &s, false)?;
            g = s.generation;
        }
        let block = self.lease_block(1)?;
        let mut seen = vec![None];
        let start = std::time::Instant::now();
        let (stand, state) = loop {
            let from = g;
            let end = segment_end(g, limit, watch.every);
            let mut monitor = Monitor::new(job.precision(), watch.reporting, vec![e], seen);
            monitor.adopt(&*block);
            run.launch(end, block.device_ptr(), watch.reporting.arg())?;
            watch_launch(&stream, &name, &block, &mut monitor, watch)?;
            seen = monitor.seen().to_vec();
            let state = run.state()?;
            g = state[STATE_GEN];
            let bf = grid_best(&stream, &name, &run.bu)?;
            if let Some(h) = grid_history(&stream, &name, &run.bu, from, g)? {
                history = Some(join_history(history.take(), &h));
            }
            let mut stand = standing(&job, g, bf, end, monitor.stopped(0));
            if stand != Standing::Running {
                break (stand, state);
            }
            if flagged(watch) {
                runs.halted = true;
                stand = Standing::Stopped;
            } else if watch.every > 0 && watch.save.is_some() {
                let c = checkpoint_of(
                    &job,
                    g,
                    grid_state(&stream, &name, &run.bu, g, &job)?,
                    history.clone(),
                    before + start.elapsed(),
                );
                runs.entries[e] = Entry::Started(c);
                if runs.save(watch) == Flow::Stop {
                    runs.halted = true;
                    stand = Standing::Stopped;
                }
            }
            if stand != Standing::Running {
                break (stand, state);
            }
        };
        self.finish_whole(
            e,
            runs,
            watch,
            Whole {
                job: &job,
                stream: &stream,
                name: &name,
                bu: &run.bu,
                state: &state,
                seen: seen[0],
                stopped: stand == Standing::Stopped,
                history,
                elapsed: before + start.elapsed(),
            },
        )
    }

    /// One run over the whole GPU, one launch per generation; the host looks at the
    /// state every `reporting.every` generations (and at the checkpoints).
    fn steps_one<T: Controlled>(&self, e: usize, runs: &mut Runs, watch: &mut Watch) -> Result<()> {
        let job = runs.entries[e].job().clone();
        let limit = job.generations();
        let mut run = self.step_run::<T>(&job)?;
        let (stream, name) = (run.stream.clone(), run.name.clone());
        let s = Start::of(&runs.entries[e]);
        let before = s.elapsed;
        let mut history = s.history.map(<[f64]>::to_vec);
        let start = std::time::Instant::now();
        let from = if s.loaded() {
            upload_grid(&stream, &name, &mut run.bu, &s, true)?;
            s.generation
        } else {
            run.launch(true)?;
            0
        };
        let every = watch.reporting.every.max(1);
        let mut g = from;
        let mut seen = None;
        let mut stopped = false;
        let mut state;
        loop {
            state = run.state()?;
            g = state[STATE_GEN].max(g);
            if state[STATE_DONE] != 0 || g >= limit {
                break;
            }
            if seen != Some(g) {
                seen = Some(g);
                let bf = grid_best(&stream, &name, &run.bu)?;
                if let Some(o) = watch.observer
                    && o(e, g, bf) == Flow::Stop
                {
                    stopped = true;
                    break;
                }
            }
            if flagged(watch) {
                runs.halted = true;
                stopped = true;
                break;
            }
            if g > from && watch.every > 0 && g.is_multiple_of(watch.every) && watch.save.is_some()
            {
                let h = grid_history(&stream, &name, &run.bu, from, g)?;
                let c = checkpoint_of(
                    &job,
                    g,
                    grid_state(&stream, &name, &run.bu, g, &job)?,
                    h.map(|h| join_history(history.clone(), &h)),
                    before + start.elapsed(),
                );
                runs.entries[e] = Entry::Started(c);
                if runs.save(watch) == Flow::Stop {
                    runs.halted = true;
                    stopped = true;
                    break;
                }
            }
            // Up to the next report or checkpoint: launches queue without a wait.
            let next = ((g / every).saturating_add(1).saturating_mul(every)).min(segment_end(
                g,
                limit,
                watch.every,
            ));
            for _ in g..next {
                run.launch(false)?;
            }
        }
        let g = state[STATE_GEN];
        if let Some(h) = grid_history(&stream, &name, &run.bu, from, g)? {
            history = Some(join_history(history.take(), &h));
        }
        self.finish_whole(
            e,
            runs,
            watch,
            Whole {
                job: &job,
                stream: &stream,
                name: &name,
                bu: &run.bu,
                state: &state,
                seen,
                stopped,
                history,
                elapsed: before + start.elapsed(),
            },
        )
    }

    /// The result and entry of a whole-GPU run that ended or was stopped.
    fn finish_whole<T: Controlled>(
        &self,
        e: usize,
        runs: &mut Runs,
        watch: &Watch,
        w: Whole<T>,
    ) -> Result<()> {
        let g = w.state[STATE_GEN];
        let bf = grid_best(w.stream, w.name, w.bu)?;
        if w.seen != Some(g)
            && let Some(obs) = watch.observer
        {
            // The last generation, as the CPU engine shows it; the run has ended.
            let _ = obs(e, g, bf);
        }
        if watch.keep || w.stopped {
            let c = checkpoint_of(
                w.job,
                g,
                grid_state(w.stream, w.name, w.bu, g, w.job)?,
                w.history,
                w.elapsed,
            );
            runs.results[e] = Some(result_of(&c));
            runs.entries[e] = Entry::Started(c);
        } else {
            let bu = w.bu;
            let (mut r, _) = read_grid(
                w.stream,
                w.job,
                w.name,
                w.state,
                w.elapsed,
                [&bu.pop_a, &bu.pop_b],
                &bu.flags,
                &bu.fit,
                &bu.best_f,
                None,
                0,
                false,
            )?;
            r.history = w.history;
            runs.results[e] = Some(r);
            runs.entries[e] = Entry::Pending(w.job.clone());
        }
        Ok(())
    }
}

/// What [`CudaEngine::finish_whole`] needs of a whole-GPU run.
struct Whole<'a, T: GpuReal> {
    job: &'a Job,
    stream: &'a Arc<CudaStream>,
    name: &'a str,
    bu: &'a GridBuffers<T>,
    state: &'a [u32],
    /// The generation last shown to the observer.
    seen: Option<u32>,
    stopped: bool,
    history: Option<Vec<f64>>,
    elapsed: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpude_device::control::progress_words;
    use std::sync::Mutex;

    fn block(slots: usize) -> Vec<AtomicU64> {
        (0..slots * SLOT_WORDS).map(|_| AtomicU64::new(0)).collect()
    }

    /// What a kernel does at a report of generation `g` with best `v` (f64).
    fn report(w: &[AtomicU64], slot: usize, g: u32, v: f64) {
        let b = v.to_bits();
        let p = progress_words(g, [b as u32, (b >> 32) as u32]);
        w.store(slot * SLOT_WORDS + PROGRESS_LO, p[0]);
        w.store(slot * SLOT_WORDS + PROGRESS_HI, p[1]);
    }

    #[test]
    fn each_reported_generation_is_shown_once_and_a_stop_goes_to_its_run() {
        let w = block(2);
        let calls = Mutex::new(Vec::new());
        let observer = |run: usize, g: u32, best: f64| {
            calls.lock().unwrap().push((run, g, best));
            if run == 1 && g >= 64 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        };
        let mut m = Monitor::new(
            Precision::F64,
            Reporting::default(),
            vec![3, 1],
            vec![None, None],
        );
        m.poll(&w[..], Some(&observer), None);
        assert!(calls.lock().unwrap().is_empty(), "nothing reported yet");
        report(&w, 0, 32, 2.5);
        report(&w, 1, 32, 7.0);
        m.poll(&w[..], Some(&observer), None);
        m.poll(&w[..], Some(&observer), None);
        report(&w, 1, 64, 6.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(
            *calls.lock().unwrap(),
            [(3, 32, 2.5), (1, 32, 7.0), (1, 64, 6.0)]
        );
        assert_eq!(w.load(COMMAND), 0, "run 3 goes on");
        assert_eq!(w.load(SLOT_WORDS + COMMAND), STOP, "run 1 is stopped");
        assert!(m.stopped(1) && !m.stopped(0));
        // A stopped run's later reports are not shown.
        report(&w, 1, 96, 5.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(calls.lock().unwrap().len(), 3);
    }

    #[test]
    fn half_written_reports_wait_for_their_other_half() {
        let w = block(1);
        let calls = Mutex::new(Vec::new());
        let observer = |_: usize, g: u32, best: f64| {
            calls.lock().unwrap().push((g, best));
            Flow::Continue
        };
        let mut m = Monitor::new(Precision::F64, Reporting::default(), vec![0], vec![None]);
        report(&w, 0, 32, 1.0);
        let b = 0.5f64.to_bits();
        let next = progress_words(64, [b as u32, (b >> 32) as u32]);
        w.store(PROGRESS_LO, next[0]);
        m.poll(&w[..], Some(&observer), None);
        assert!(
            calls.lock().unwrap().is_empty(),
            "generation 64's low half only"
        );
        w.store(PROGRESS_HI, next[1]);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*calls.lock().unwrap(), [(64, 0.5)]);
    }

    #[test]
    fn f32_progress_reads_the_low_half() {
        let w = block(1);
        let got = Mutex::new(None);
        let observer = |_: usize, g: u32, best: f64| {
            *got.lock().unwrap() = Some((g, best));
            Flow::Continue
        };
        let p = progress_words(8, [1.25f32.to_bits(), 0]);
        w.store(PROGRESS_LO, p[0]);
        w.store(PROGRESS_HI, p[1]);
        let mut m = Monitor::new(Precision::F32, Reporting::default(), vec![0], vec![None]);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*got.lock().unwrap(), Some((8, 1.25)));
    }

    #[test]
    fn the_stop_flag_stops_every_slot_and_is_never_overwritten() {
        let w = block(3);
        let flag = AtomicBool::new(false);
        let exact = Reporting {
            every: 1,
            exact: true,
        };
        let mut m = Monitor::new(Precision::F64, exact, vec![0, 1, 2], vec![None; 3]);
        report(&w, 0, 5, 1.0);
        m.poll(&w[..], None, Some(&flag));
        assert_eq!(w.load(COMMAND), control::release(5), "released");
        flag.store(true, Ordering::Relaxed);
        report(&w, 0, 6, 1.0);
        m.poll(&w[..], None, Some(&flag));
        for k in 0..3 {
            assert_eq!(w.load(k * SLOT_WORDS + COMMAND), STOP);
        }
        assert!(m.any_stopped());
    }

    #[test]
    fn exact_mode_releases_a_generation_already_shown() {
        // A launch that starts where the last one ended reports that generation again:
        // the observer does not see it twice, but the kernel is released.
        let w = block(1);
        let calls = Mutex::new(0);
        let observer = |_: usize, _: u32, _: f64| {
            *calls.lock().unwrap() += 1;
            Flow::Continue
        };
        let exact = Reporting {
            every: 4,
            exact: true,
        };
        let mut m = Monitor::new(Precision::F64, exact, vec![0], vec![Some(40)]);
        report(&w, 0, 40, 3.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*calls.lock().unwrap(), 0);
        assert_eq!(w.load(COMMAND), control::release(40));
    }

    #[test]
    fn exact_mode_releases_a_kernel_waiting_at_generation_zero() {
        let w = block(1);
        let exact = Reporting {
            every: 4,
            exact: true,
        };
        let shown = Mutex::new(Vec::new());
        let observer = |_: usize, g: u32, v: f64| {
            shown.lock().unwrap().push((g, v));
            Flow::Continue
        };
        let mut m = Monitor::new(Precision::F64, exact, vec![0], vec![None]);
        report(&w, 0, 0, 0.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*shown.lock().unwrap(), [(0, 0.0)]);
        assert_eq!(w.load(COMMAND), control::release(0));
    }

    /// A kernel's protocol on a thread: report every `k`, wait in exact mode, stop at
    /// the first report after a STOP command. Returns the generation it stopped at.
    fn simulated_kernel(w: &[AtomicU64], k: u32, limit: u32, exact: bool) -> u32 {
        let mut g = 0;
        loop {
            let r = control::report(k, exact);
            if control::reports(r, 0, g) {
                report(w, 0, g, 1000.0 - g as f64);
                if control::exact(r) {
                    while !control::released(w.load(COMMAND), g) {
                        std::thread::yield_now();
                    }
                }
                if w.load(COMMAND) == STOP {
                    return g;
                }
            }
            if g == limit {
                return g;
            }
            g += 1;
        }
    }

    #[test]
    fn exact_mode_stops_a_running_kernel_at_the_observers_generation() {
        let w = block(1);
        let observer = |_: usize, g: u32, _: f64| {
            if g >= 120 { Flow::Stop } else { Flow::Continue }
        };
        let exact = Reporting {
            every: 8,
            exact: true,
        };
        let stopped_at = std::thread::scope(|s| {
            let kernel = s.spawn(|| simulated_kernel(&w, 8, 1_000_000, true));
            let mut m = Monitor::new(Precision::F64, exact, vec![0], vec![None]);
            while !kernel.is_finished() {
                m.poll(&w[..], Some(&observer), None);
                std::thread::yield_now();
            }
            kernel.join().unwrap()
        });
        assert_eq!(stopped_at, 120);
    }

    #[test]
    fn without_exact_mode_a_stop_lands_on_a_later_report() {
        let w = block(1);
        let flag = AtomicBool::new(false);
        let stopped_at = std::thread::scope(|s| {
            let kernel = s.spawn(|| simulated_kernel(&w, 16, u32::MAX - 1, false));
            let mut m = Monitor::new(Precision::F64, Reporting::default(), vec![0], vec![None]);
            let mut polls = 0;
            while !kernel.is_finished() {
                polls += 1;
                if polls == 50 {
                    flag.store(true, Ordering::Relaxed);
                }
                m.poll(&w[..], None, Some(&flag));
                std::thread::yield_now();
            }
            kernel.join().unwrap()
        });
        assert_eq!(stopped_at % 16, 0, "stopped at a reported generation");
    }

    #[test]
    fn segments_end_at_multiples_of_the_checkpoint_interval() {
        assert_eq!(segment_end(0, 100, 0), 100);
        assert_eq!(segment_end(0, 100, 30), 30);
        assert_eq!(segment_end(30, 100, 30), 60);
        assert_eq!(segment_end(45, 100, 30), 60);
        assert_eq!(segment_end(90, 100, 30), 100);
        assert_eq!(segment_end(100, 100, 30), 100);
        assert_eq!(segment_end(u32::MAX - 5, u32::MAX - 1, 7), u32::MAX - 3);
        // The next multiple would overflow: the limit.
        assert_eq!(
            segment_end(u32::MAX - 2, u32::MAX - 1, 1 << 31),
            u32::MAX - 1
        );
    }

    #[test]
    fn gathered_and_padded_states_are_inverse() {
        let (dim, st) = (3usize, 4usize);
        let a = [1.0f32, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0];
        let b = [9.0f32, 9.5, 9.75, 0.0, 7.0, 8.0, 9.0, 0.0];
        let s = gather_state(&a, &b, &[1, 0], vec![0.5, 0.25], dim, st);
        assert_eq!(
            s,
            State::F32 {
                x: vec![9.0, 9.5, 9.75, 4.0, 5.0, 6.0],
                fit: vec![0.5, 0.25]
            }
        );
        let (rows, fit) = padded_state::<f32>(&s, dim, st).unwrap();
        assert_eq!(rows, [9.0, 9.5, 9.75, 0.0, 4.0, 5.0, 6.0, 0.0]);
        assert_eq!(fit, [0.5, 0.25]);
        assert!(padded_state::<f64>(&s, dim, st).is_err(), "wrong precision");
    }

    #[test]
    fn histories_join_without_repeating_the_start() {
        assert_eq!(
            join_history(Some(vec![5.0, 4.0, 3.0]), &[3.0, 2.0, 1.0]),
            [5.0, 4.0, 3.0, 2.0, 1.0]
        );
        assert_eq!(join_history(None, &[3.0, 2.0]), [3.0, 2.0]);
    }

    #[test]
    fn a_run_short_of_its_limit_and_target_was_stopped() {
        let job = Job::builder(gpude_device::Function::Sphere, 4)
            .pop(8)
            .generations(50)
            .target(1e-3)
            .build()
            .unwrap();
        assert_eq!(ending(&job, 20, 1.0), Termination::Stopped);
        assert_eq!(ending(&job, 50, 1.0), Termination::MaxGenerations);
        assert_eq!(ending(&job, 20, 1e-4), Termination::TargetReached);
    }

    #[test]
    fn report_intervals_out_of_range_are_refused() {
        for every in [0, control::MAX_EVERY + 1] {
            let e = Reporting {
                every,
                exact: false,
            }
            .check()
            .unwrap_err();
            assert!(e.to_string().contains("report interval"), "{e}");
        }
    }
}
