//! The CPU engine: the kernels' per-individual arithmetic and random streams, on all
//! cores with rayon. A run here and on the GPU with the same seed follow the same
//! trajectory up to rounding.

use crate::config::Job;
use crate::result::{RunResult, termination};
use gpude_device::de::{
    COMPONENT_SLOT, Crossover, RESAMPLE_SLOT, TrialParams, accepts, better, block, draw_indices,
    first_exceeding, init_chunk, run_length, subsequence, trial_chunk,
};
use gpude_device::functions::lane_consts;
use gpude_device::lanes::{evaluate, evaluate_with};
use gpude_device::philox::{block_words, key_of};
use gpude_device::{Function, Real};
use nalgebra::DVector;
use rayon::prelude::*;
use std::time::Instant;

/// Something that watches a run: called after the initialisation (generation 0) and
/// after every generation with the best value so far.
pub type Observer<'a> = &'a (dyn Fn(u32, f64) + Sync);

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
        let mut b = 0;
        for i in 1..self.fit.len() {
            if better(self.fit[i], i as u32, self.fit[b], b as u32) {
                b = i;
            }
        }
        b
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
    let np = job.pop as usize;
    let key = key_of(job.seed);
    let lo: Vec<T> = job.problem.lower.iter().map(|&v| T::of(v)).collect();
    let hi: Vec<T> = job.problem.upper.iter().map(|&v| T::of(v)).collect();
    let f = job.problem.function;
    let mut x = vec![T::ZERO; np * d];
    let mut fit = vec![T::ZERO; np];
    x.par_chunks_mut(d)
        .zip(fit.par_iter_mut())
        .enumerate()
        .for_each(|(i, (row, fx))| {
            let sub = subsequence(job.stream, i as u32);
            for j0 in (0..d).step_by(4) {
                let n = (d - j0).min(4);
                let u = block_words(key, sub, block(0, (j0 / 4) as u32));
                let v = init_chunk(&u, n as u32, &chunk4(&lo, j0), &chunk4(&hi, j0));
                row[j0..j0 + n].copy_from_slice(&v[..n]);
            }
            *fx = evaluate_fast(f, row);
        });
    Population {
        dim: d,
        x,
        fit,
        lo,
        hi,
        kc: chunk_consts(f, d),
    }
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
    trial_as(job, Spec::of(job), pop, best, g, i, out)
}

/// What selects the code path of a trial; the engine passes constants for the common
/// cases so that the compiler drops the other paths (as the GPU kernels do).
#[derive(Clone, Copy)]
pub struct Spec {
    pub function: Function,
    pub strategy: gpude_device::Strategy,
    pub bounds: gpude_device::BoundPolicy,
}

impl Spec {
    pub fn of(job: &Job) -> Spec {
        Spec {
            function: job.problem.function,
            strategy: job.strategy,
            bounds: job.bounds,
        }
    }
}

#[allow(clippy::too_many_arguments)]
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
    let d = pop.dim;
    let np = job.pop;
    let key = key_of(job.seed);
    let tp = TrialParams {
        strategy: spec.strategy,
        crossover: job.crossover,
        bounds: spec.bounds,
        f: T::of(job.f),
        cr: T::of(job.cr),
        dim: d as u32,
    };
    let jdim = if spec.strategy.crosses() { d as u32 } else { 0 };
    let draws = draw_indices(
        key,
        job.stream,
        i as u32,
        g,
        np,
        spec.strategy.draws(),
        jdim,
    );
    let sub = subsequence(job.stream, i as u32);
    let words = |j0: usize| block_words(key, sub, block(g, COMPONENT_SLOT + (j0 / 4) as u32));
    let mut run = d as u32;
    if spec.strategy.crosses() && job.crossover == Crossover::Exponential {
        let mut first = u32::MAX;
        for j0 in (0..d).step_by(4) {
            let n = (d - j0).min(4) as u32;
            first = first.min(first_exceeding(tp.cr, &words(j0), j0 as u32, n, d as u32));
        }
        run = run_length(first, d as u32);
    }
    let (lo, hi) = (&pop.lo, &pop.hi);
    let xi = pop.row(i);
    let xb = pop.row(best);
    let nd = spec.strategy.draws() as usize;
    for j0 in (0..d).step_by(4) {
        let n = (d - j0).min(4);
        let mut r = [[T::ZERO; 4]; 5];
        for (k, rk) in r.iter_mut().enumerate().take(nd) {
            *rk = chunk4(pop.row(draws.r[k] as usize), j0);
        }
        let v = trial_chunk(
            &tp,
            j0 as u32,
            n as u32,
            &chunk4(xi, j0),
            &r,
            &chunk4(xb, j0),
            &chunk4(lo, j0),
            &chunk4(hi, j0),
            &words(j0),
            draws.jrand,
            run,
            || block_words(key, sub, block(g, RESAMPLE_SLOT + (j0 / 4) as u32)),
        );
        out[j0..j0 + n].copy_from_slice(&v[..n]);
    }
    // Idle lanes past the last chunk ask too; they own no component.
    evaluate_with(spec.function, out, |j0| {
        pop.kc.get(j0 as usize / 4).copied().unwrap_or([T::ZERO; 4])
    })
}

/// [`trial`] specialised: the function fixed at compile time, and with `THESIS` the
/// thesis strategy with init-only bounds; compiled with hardware FMA when the processor
/// has it. The device maths use fused multiply-adds (the f32 trigonometry); without the
/// instruction they are calls to `fmaf`. Both round correctly, so the results are the
/// same bits.
#[allow(clippy::too_many_arguments)]
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
            job.strategy
        },
        bounds: if THESIS {
            gpude_device::BoundPolicy::InitOnly
        } else {
            job.bounds
        },
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
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
    let thesis = job.strategy == gpude_device::Strategy::Thesis
        && job.bounds == gpude_device::BoundPolicy::InitOnly;
    macro_rules! go {
        ($($f:literal)*) => {
            match (job.problem.function as u32, thesis) {
                $(($f, true) => trial_spec::<T, $f, true>(job, pop, best, g, i, out),
                  ($f, false) => trial_spec::<T, $f, false>(job, pop, best, g, i, out),)*
                _ => trial(job, pop, best, g, i, out),
            }
        };
    }
    go!(0 1 2 3 4 5 6 7)
}

/// [`evaluate`] with hardware FMA when there is one (see [`trial_fast`]).
pub(crate) fn evaluate_fast<T: Real>(f: Function, x: &[T]) -> T {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has FMA (checked just above).
        return unsafe { evaluate_fma(f, x) };
    }
    evaluate(f, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn evaluate_fma<T: Real>(f: Function, x: &[T]) -> T {
    evaluate(f, x)
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
    {
        let pop_ref = &*pop;
        scratch
            .par_chunks_mut(d)
            .zip(tfit.par_iter_mut())
            .enumerate()
            .for_each(|(i, (out, tf))| *tf = trial_fast(job, pop_ref, best, g, i, out));
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

/// Runs `job` to the end on the CPU.
pub fn run<T: Real>(job: &Job, observer: Option<Observer>) -> RunResult {
    let start = Instant::now();
    let mut pop = initial::<T>(job);
    let mut best = pop.best();
    let target = job.target_value();
    let reached = |f: T| target.is_some_and(|t| f.to_f64() <= t);
    let mut history = job.history.then(|| vec![pop.fit[best].to_f64()]);
    if let Some(o) = observer {
        o(0, pop.fit[best].to_f64());
    }
    let mut scratch = Vec::new();
    let mut g = 0;
    while g < job.generations && !reached(pop.fit[best]) {
        g += 1;
        best = generation(job, &mut pop, best, g, &mut scratch);
        let bf = pop.fit[best].to_f64();
        if let Some(h) = history.as_mut() {
            h.push(bf);
        }
        if let Some(o) = observer {
            o(g, bf);
        }
    }
    let best_f = pop.fit[best].to_f64();
    RunResult {
        best_x: DVector::from_iterator(pop.dim, pop.row(best).iter().map(|v| v.to_f64())),
        best_f,
        error: best_f - job.info().min,
        generations: g,
        evaluations: job.evaluations(g),
        termination: termination(job, g, best_f),
        elapsed: start.elapsed(),
        history,
        backend: "cpu",
        seed: job.seed,
        stream: job.stream,
    }
}

/// Evaluates one point in precision `T` exactly as the engines do.
pub fn evaluate_point<T: Real>(f: Function, x: &[f64]) -> f64 {
    let v: Vec<T> = x.iter().map(|&c| T::of(c)).collect();
    evaluate_fast(f, &v).to_f64()
}
