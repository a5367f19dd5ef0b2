//! The CPU engine: the kernels' per-individual arithmetic and random streams, on all
//! cores with rayon. A run here and on the GPU with the same seed follow the same
//! trajectory up to rounding.
//!
//! [`run_controlled`] and [`resume`] run under a [`Control`]: an observer that may stop
//! the run, a stop flag polled at every generation boundary, and checkpoints on the way;
//! a run resumed from a [`Checkpoint`] gives the same bits as one that never stopped.

pub mod adaptive;
pub mod ga;
pub mod islands;
pub mod pso;
pub mod split;

use crate::error::Result;
use crate::job::config::{Job, Precision};
// The run-control types and the host's memory, where callers of this engine found them.
use crate::job::objective::evaluate_fast;
pub use crate::run::checkpoint::{Checkpoint, State, Stored};
pub use crate::run::control::{Control, Flow, Observer, Outcome, Saver};
use crate::run::generations::{self, Generations};
pub use crate::run::memory::{available_memory, check_memory};
use crate::run::result::RunResult;
use gpude_device::de::{TrialParams, accepts, block, init_chunk, subsequence};
use gpude_device::functions::lane_consts;
use gpude_device::lanes::evaluate_with;
use gpude_device::philox::{block_words, key_of};
use gpude_device::{Formula, Function, Real};
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// A population in one precision, row-major (`x[i·D + j]`).
#[derive(Clone, Debug)]
pub struct Population<T> {
    pub dim: usize,
    pub x: Vec<T>,
    pub fit: Vec<T>,
    /// The initial domain in this precision (the bound policies use it).
    pub lo: Vec<T>,
    pub hi: Vec<T>,
    /// The function's per-chunk constants (see `lane_consts`), computed once.
    pub kc: Vec<[T; 4]>,
}

impl<T: Real> Population<T> {
    pub fn row(&self, i: usize) -> &[T] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }
    /// Index of the best individual (lowest value, then lowest index).
    pub fn best(&self) -> usize {
        crate::run::checkpoint::best_index(&self.fit)
    }
    /// The population of `job` with these rows and values (from a checkpoint).
    pub fn from_parts(job: &Job, x: Vec<T>, fit: Vec<T>) -> Population<T> {
        let d = job.dim() as usize;
        Population {
            dim: d,
            x,
            fit,
            lo: job.lower().iter().map(|&v| T::of(v)).collect(),
            hi: job.upper().iter().map(|&v| T::of(v)).collect(),
            kc: job.builtin().map_or_else(Vec::new, |f| chunk_consts(f, d)),
        }
    }
}

#[inline(always)]
pub(crate) fn chunk4<T: Real>(s: &[T], j0: usize) -> [T; 4] {
    let mut v = [T::ZERO; 4];
    for (k, x) in s[j0..(j0 + 4).min(s.len())].iter().enumerate() {
        v[k] = *x;
    }
    v
}

/// The per-chunk constants of `f` for dimension `d`.
fn chunk_consts<T: Real>(f: Function, d: usize) -> Vec<[T; 4]> {
    (0..d.div_ceil(4))
        .map(|q| lane_consts(f, 4 * q as u32))
        .collect()
}

/// The initial population of `job` (generation 0 of its streams).
pub fn initial<T: Real>(job: &Job) -> Population<T> {
    let d = job.dim() as usize;
    let np = job.pop() as usize;
    let key = key_of(job.seed());
    let mut pop = Population::from_parts(job, vec![T::ZERO; np * d], vec![T::ZERO; np]);
    let (lo, hi) = (&pop.lo, &pop.hi);
    let builtin = job.builtin();
    let (x, fit) = (&mut pop.x, &mut pop.fit);
    x.par_chunks_mut(d)
        .zip(fit.par_iter_mut())
        .enumerate()
        .for_each(|(i, (row, fx))| {
            let sub = subsequence(job.stream(), i as u32);
            for j0 in (0..d).step_by(4) {
                let n = (d - j0).min(4);
                let u = block_words(key, sub, block(0, (j0 / 4) as u32));
                let v = init_chunk(&u, n as u32, &chunk4(lo, j0), &chunk4(hi, j0));
                gpude_device::adaptive_gen::put4(row, j0, n, &v);
            }
            if let Some(f) = builtin {
                *fx = evaluate_fast(f, job.formula(), row);
            }
        });
    if builtin.is_none() {
        // Other objectives: the whole population in one batch.
        job.objective()
            .evaluate_rows(job.formula(), &pop.x, d, &mut pop.fit);
    }
    pop
}

/// Individual `i`'s trial in generation `g` and its value.
#[inline(always)]
pub fn trial<T: Real>(
    job: &Job,
    pop: &Population<T>,
    best: usize,
    g: u32,
    i: usize,
    out: &mut [T],
) -> T {
    if job.builtin().is_none() {
        let spec = Spec::of(job);
        build_trial(job, spec, pop, best, g, i, out);
        let mut v = [T::ZERO];
        job.objective()
            .evaluate_rows(job.formula(), out, pop.dim, &mut v);
        return v[0];
    }
    trial_as(job, Spec::of(job), pop, best, g, i, out)
}

/// What selects the code path of a trial; the engine passes constants for the common
/// cases so that the compiler drops the other paths (as the GPU kernels do). For
/// objectives other than built-ins, `function` is unused (Sphere).
#[derive(Clone, Copy)]
pub struct Spec {
    pub function: Function,
    pub strategy: gpude_device::Strategy,
    pub bounds: gpude_device::BoundPolicy,
}

impl Spec {
    pub fn of(job: &Job) -> Spec {
        Spec {
            function: job.builtin().unwrap_or(Function::Sphere),
            strategy: job.strategy(),
            bounds: job.bounds(),
        }
    }
}

#[inline(always)]
fn trial_as<T: Real>(
    job: &Job,
    spec: Spec,
    pop: &Population<T>,
    best: usize,
    g: u32,
    i: usize,
    out: &mut [T],
) -> T {
    build_trial(job, spec, pop, best, g, i, out);
    // Idle lanes past the last chunk ask too; they own no component.
    evaluate_with(spec.function, job.formula(), out, |j0| {
        pop.kc.get(j0 as usize / 4).copied().unwrap_or([T::ZERO; 4])
    })
}

/// Individual `i`'s trial in generation `g` into `out`, not evaluated.
#[inline(always)]
fn build_trial<T: Real>(
    job: &Job,
    spec: Spec,
    pop: &Population<T>,
    best: usize,
    g: u32,
    i: usize,
    out: &mut [T],
) {
    let d = pop.dim;
    let np = job.pop();
    let key = key_of(job.seed());
    let tp = TrialParams {
        strategy: spec.strategy,
        crossover: job.crossover(),
        bounds: spec.bounds,
        f: T::of(job.f()),
        cr: T::of(job.cr()),
        dim: d as u32,
        variant: job.thesis_variant(),
    };
    gpude_device::adaptive_gen::classic_trial(
        &tp,
        key,
        job.stream(),
        g,
        np,
        i,
        &pop.x,
        best,
        &pop.lo,
        &pop.hi,
        out,
    );
}

/// [`trial`] specialised: the function fixed at compile time, and with `THESIS` the
/// thesis strategy with init-only bounds; compiled with hardware FMA when the processor
/// has it. The device maths use fused multiply-adds (the f32 trigonometry); without the
/// instruction they are calls to `fmaf`. Both round correctly, so the results are the
/// same bits.
#[inline(always)]
fn trial_spec<T: Real, const F: u32, const THESIS: bool>(
    job: &Job,
    pop: &Population<T>,
    best: usize,
    g: u32,
    i: usize,
    out: &mut [T],
) -> T {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has FMA (checked just above).
        return unsafe { trial_fma::<T, F, THESIS>(job, pop, best, g, i, out) };
    }
    trial_as(job, spec_of::<F, THESIS>(job), pop, best, g, i, out)
}

/// The spec with the compile-time parts filled in.
#[inline(always)]
fn spec_of<const F: u32, const THESIS: bool>(job: &Job) -> Spec {
    Spec {
        function: Function::from_u32(F).unwrap_or(Function::Sphere),
        strategy: if THESIS {
            gpude_device::Strategy::Thesis
        } else {
            job.strategy()
        },
        bounds: if THESIS {
            gpude_device::BoundPolicy::InitOnly
        } else {
            job.bounds()
        },
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn trial_fma<T: Real, const F: u32, const THESIS: bool>(
    job: &Job,
    pop: &Population<T>,
    best: usize,
    g: u32,
    i: usize,
    out: &mut [T],
) -> T {
    trial_as(job, spec_of::<F, THESIS>(job), pop, best, g, i, out)
}

/// [`trial`] through the specialised path for this job's function and strategy.
fn trial_fast<T: Real>(
    job: &Job,
    pop: &Population<T>,
    best: usize,
    g: u32,
    i: usize,
    out: &mut [T],
) -> T {
    let thesis = job.strategy() == gpude_device::Strategy::Thesis
        && job.bounds() == gpude_device::BoundPolicy::InitOnly;
    // One specialised path per function of the registry, in both families.
    macro_rules! go {
        ($($(#[$doc:meta])* $variant:ident = $f:literal, $key:ident, $name:literal,
            $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr,
            $min_dim:literal;)*) => {
            match (job.function() as u32, thesis) {
                $(($f, true) => trial_spec::<T, $f, true>(job, pop, best, g, i, out),
                  ($f, false) => trial_spec::<T, $f, false>(job, pop, best, g, i, out),)*
                _ => trial(job, pop, best, g, i, out),
            }
        };
    }
    gpude_device::builtin_functions!(go)
}

/// One synchronous generation: every trial from the current population, then greedy
/// selection. Returns the new best index.
pub fn generation<T: Real>(
    job: &Job,
    pop: &mut Population<T>,
    best: usize,
    g: u32,
    scratch: &mut Vec<T>,
) -> usize {
    let d = pop.dim;
    scratch.resize(pop.x.len(), T::ZERO);
    let mut tfit = vec![T::ZERO; pop.fit.len()];
    if job.builtin().is_some() {
        let pop_ref = &*pop;
        scratch
            .par_chunks_mut(d)
            .zip(tfit.par_iter_mut())
            .enumerate()
            .for_each(|(i, (out, tf))| *tf = trial_fast(job, pop_ref, best, g, i, out));
    } else {
        // Every trial from the same population, then all of them in one batch.
        let pop_ref = &*pop;
        let spec = Spec::of(job);
        scratch
            .par_chunks_mut(d)
            .enumerate()
            .for_each(|(i, out)| build_trial(job, spec, pop_ref, best, g, i, out));
        job.objective()
            .evaluate_rows(job.formula(), scratch, d, &mut tfit);
    }
    pop.x
        .par_chunks_mut(d)
        .zip(pop.fit.par_iter_mut())
        .zip(scratch.par_chunks(d).zip(tfit.par_iter()))
        .for_each(|((row, fx), (trow, &tf))| {
            if accepts(tf, *fx) {
                row.copy_from_slice(trow);
                *fx = tf;
            }
        });
    pop.best()
}

/// Runs `job` to the end on the CPU, after re-checking it and checking that its
/// buffers fit in the host's available memory (see [`memory_needed`]).
///
/// A run that ends with a best value or point that is not finite returns a result with
/// [`Termination::NonFinite`](crate::Termination::NonFinite).
///
/// A callback objective that fails (panics, returns the wrong number of values) stops
/// the run with [`Error::Objective`](crate::error::Error::Objective).
pub fn run<T: Stored>(job: &Job, observer: Option<Observer>) -> Result<RunResult> {
    job.check()?;
    check_memory(memory_needed(job))?;
    job.objective().reset_failure();
    let r = run_checked::<T>(job, observer);
    job.objective().take_failure()?;
    Ok(r)
}

fn run_checked<T: Stored>(job: &Job, observer: Option<Observer>) -> RunResult {
    if job.adaptive().is_some() {
        return adaptive::run::<T>(job, observer);
    }
    let mut control = Control {
        observer,
        ..Control::default()
    };
    fresh::<T>(job, &mut control).result
}

/// Runs jobs one after the other, after checking that the largest run plus every
/// result fits in the host's available memory.
pub fn run_batch(jobs: &[Job]) -> Result<Vec<RunResult>> {
    Job::check_all(jobs)?;
    let work = jobs.iter().map(memory_needed).max().unwrap_or(0);
    let kept = jobs
        .iter()
        .map(result_bytes)
        .fold(0u64, u64::saturating_add);
    check_memory(work.saturating_add(kept))?;
    jobs.iter()
        .map(|j| {
            j.objective().reset_failure();
            let r = match j.precision() {
                Precision::F32 => run_checked::<f32>(j, None),
                Precision::F64 => run_checked::<f64>(j, None),
            };
            j.objective().take_failure().map(|()| r)
        })
        .collect()
}

/// Bytes of host memory one run of `job` on the CPU engine needs at most: two
/// populations (current and trials), their values, the domain and the per-chunk
/// constants in the job's precision, and the result (best point and history).
pub fn memory_needed(job: &Job) -> u64 {
    let t = match job.precision() {
        Precision::F32 => 4u64,
        Precision::F64 => 8,
    };
    let (np, d) = (job.pop() as u64, job.dim() as u64);
    // Dimension and population are bounded (2^20, 2^24), so none of this overflows.
    t * (2 * np * d + 2 * np + 3 * d + 4 * d.div_ceil(4)) + result_bytes(job)
}

/// Bytes of a run's result: the best point and the history, in f64.
fn result_bytes(job: &Job) -> u64 {
    let hist = if job.history() {
        job.generations() as u64 + 1
    } else {
        0
    };
    8 * (job.dim() as u64 + hist)
}

/// [`run_controlled`], with a callback objective's failure as an error.
pub fn try_run_controlled(job: &Job, control: &mut Control) -> Result<Outcome> {
    job.objective().reset_failure();
    let o = run_controlled(job, control);
    job.objective().take_failure()?;
    Ok(o)
}

/// Runs `job` on the CPU under `control`: to its end, or to the generation where the
/// stop flag, the observer or the saver stopped it. A callback objective that fails
/// stops the run there (see [`try_run_controlled`] for its error).
pub fn run_controlled(job: &Job, control: &mut Control) -> Outcome {
    if job.adaptive().is_some() {
        return match job.precision() {
            Precision::F32 => adaptive::run_controlled::<f32>(job, control),
            Precision::F64 => adaptive::run_controlled::<f64>(job, control),
        };
    }
    match job.precision() {
        Precision::F32 => fresh::<f32>(job, control),
        Precision::F64 => fresh::<f64>(job, control),
    }
}

/// Goes on from `from` to its job's generation limit (see
/// [`Checkpoint::set_generations`]) under `control`, with the same bits as a run that
/// never stopped. A checkpoint whose parts disagree is an error.
pub fn resume(from: Checkpoint, control: &mut Control) -> Result<Outcome> {
    from.check()?;
    crate::run::checkpoint::savable(&from.job)?;
    let objective = from.job.objective().clone();
    objective.reset_failure();
    let o = match from.job.precision() {
        Precision::F32 => go_on::<f32>(from, control),
        Precision::F64 => go_on::<f64>(from, control),
    };
    objective.take_failure()?;
    Ok(o)
}

fn fresh<T: Stored>(job: &Job, control: &mut Control) -> Outcome {
    let start = Instant::now();
    let pop = initial::<T>(job);
    let history = job.history().then(|| vec![pop.fit[pop.best()].to_f64()]);
    drive(job.clone(), pop, 0, history, start, Duration::ZERO, control)
}

fn go_on<T: Stored>(from: Checkpoint, control: &mut Control) -> Outcome {
    let start = Instant::now();
    let Checkpoint {
        job,
        generation,
        state,
        history,
        elapsed,
    } = from;
    // `check` has matched the precision to the job's.
    let (x, fit) = T::parts(state).unwrap_or_default();
    let pop = Population::from_parts(&job, x, fit);
    drive(job, pop, generation, history, start, elapsed, control)
}

/// A classic run between generations: its population and best individual.
struct Classic<'a, T> {
    job: &'a Job,
    pop: Population<T>,
    best: usize,
    scratch: Vec<T>,
}

impl<T: Stored> Generations for Classic<'_, T> {
    fn best(&self) -> f64 {
        self.pop.fit[self.best].to_f64()
    }
    fn step(&mut self, g: u32) -> bool {
        self.best = generation(self.job, &mut self.pop, self.best, g, &mut self.scratch);
        true
    }
    fn state(&self) -> Option<State> {
        Some(T::state(self.pop.x.clone(), self.pop.fit.clone()))
    }
    fn values(&self) -> Vec<f64> {
        self.pop.fit.iter().map(|v| v.to_f64()).collect()
    }
}

/// The run from `pop` after `g0` generations, in the host's generation loop.
fn drive<T: Stored>(
    job: Job,
    pop: Population<T>,
    g0: u32,
    history: Option<Vec<f64>>,
    start: Instant,
    before: Duration,
    control: &mut Control,
) -> Outcome {
    let best = pop.best();
    let mut run = Classic {
        job: &job,
        pop,
        best,
        scratch: Vec::new(),
    };
    let end = generations::drive(&job, &mut run, g0, history, start, before, control);
    let pop = run.pop;
    let checkpoint = Checkpoint {
        job,
        generation: end.generation,
        state: T::state(pop.x, pop.fit),
        history: end.history,
        elapsed: before + start.elapsed(),
    };
    Outcome {
        result: checkpoint.result(),
        checkpoint,
    }
}

/// Evaluates one point in precision `T` with `formula` exactly as the engines do.
pub fn evaluate_point<T: Real>(f: Function, formula: Formula, x: &[f64]) -> f64 {
    let v: Vec<T> = x.iter().map(|&c| T::of(c)).collect();
    evaluate_fast(f, formula, &v).to_f64()
}
