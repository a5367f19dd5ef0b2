//! One population split by dimension: every device holds a contiguous slice of every
//! individual's components, and one reduction per generation gives all of them the full
//! values (seed 002's layout, for problems too large for one GPU).
//!
//! Here the devices are simulated: the slices run on the CPU (rayon), and the exchanges
//! between them are explicit steps in a fixed order. A multi-GPU engine (one slice per
//! GPU, the exchanges through NCCL) runs exactly this arithmetic.
//!
//! # Layout
//! The vector's `Q = ⌈D/4⌉` chunks of four components are dealt out contiguously: slice
//! `s` of `S` owns chunks `⌊sQ/S⌋ .. ⌊(s+1)Q/S⌋`, i.e. components `d_s .. d_{s+1}` with
//! `d_s = 4⌊sQ/S⌋` (the last bound is `D`). Every bound but the last is a multiple of
//! four, so chunk `q` of a slice reads the same Philox block (slot `2 + q`) as the
//! unsplit engine. For functions with a neighbour term (Rosenbrock, f4) a slice with
//! `d_s > 0` also keeps the chunk before its own (components `d_s − 4 .. d_s`, a *halo*):
//! it builds that chunk's trial components with the same words and inputs as their owner,
//! and applies the same selection to them, so it knows `x_{d_s − 1}` of every trial and
//! individual without asking for it.
//!
//! # One generation
//! 1. Every slice draws the same indices r1, r2, … and `jrand` (they depend only on the
//!    seed, stream, individual and generation) and, for exponential crossover, the same
//!    run length (the first uniform above Cr, read from chunk 0 on until it is found, so
//!    a slice reads about `1/(4(1 − Cr))` blocks, none when Cr ≥ 1). It builds its
//!    components of every trial.
//! 2. Schwefel 1.2 only: each slice sums its components of each trial (in component
//!    order); the totals are exchanged (an all-gather of `Np` values per slice) and slice
//!    `s` takes `base_s = ((T_0 + T_1) + …) + T_{s−1}`, an exclusive scan in slice order.
//! 3. Each slice reduces its components of each trial to partial sums
//!    ([`gpude_device::lanes::partial`]: the slice spread over its own lane group, with
//!    `x_{d_s − 1}` as the neighbour and `base_s` as the prefix).
//! 4. The all-reduce: the partial sums are exchanged (an all-gather of `Np` [`Acc`] per
//!    slice) and every slice folds them in slice order,
//!    `((A_0 ⊕ A_1) ⊕ A_2) ⊕ …` with [`Acc::combine`], then applies `finish`. Every slice
//!    folds the same values in the same order, so every slice has the same bits, and
//!    selection and the best are then local and identical on every slice. (A summing
//!    all-reduce would do for the functions whose sums only add, but its order is the
//!    library's; the all-gather fixes it, and costs `S` times as many bytes, which for
//!    `Np` values per generation is nothing.)
//!
//! With one slice this is the unsplit engine's arithmetic bit for bit. With more, the
//! sums are grouped differently (per slice, then across slices), so values agree to
//! rounding, not bits; the trial vectors themselves are the same bits as long as the
//! populations are.
//!
//! # Memory per slice
//! `2 · Np · w_s` values (population and trials, `w_s` the slice's width plus four for a
//! halo), the slice's domain and per-chunk constants, and `Np` values, totals and
//! partial sums: see [`slice_bytes`] and docs/SCALING.md.

use crate::error::{Error, Result};
use crate::job::config::{Job, Precision};
use crate::run::checkpoint::best_index;
use crate::run::control::{Control, Observer};
use crate::run::generations::{self, Generations};
use crate::run::memory::check_memory;
use crate::run::result::{Ending, RunResult, termination};
use gpude_device::de::{
    COMPONENT_SLOT, Crossover, RESAMPLE_SLOT, TrialParams, accepts, block, first_exceeding,
    init_chunk, run_length, subsequence, trial_chunk,
};
use gpude_device::functions::{Acc, finish, lane_consts};
use gpude_device::lanes::partial;
use gpude_device::philox::{block_words, key_of};
use gpude_device::{Function, Real};
use nalgebra::DVector;
use rayon::prelude::*;
use std::ops::Range;
use std::time::{Duration, Instant};

/// What the split run refuses, and why.
pub const WHAT_RUNS: &str = "the CPU engine with a built-in function and a classic strategy (thesis, rand1, best1, current-to-best1, rand2, best2)";

/// Where each slice's components lie: `bounds[s] .. bounds[s + 1]` for slice `s`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    bounds: Vec<usize>,
}

impl Layout {
    /// `slices` contiguous slices of a `dim`-dimensional vector, each a whole number of
    /// chunks of four (but the last, which ends at `dim`). Each slice needs at least one
    /// chunk: `1 ≤ slices ≤ ⌈dim/4⌉`.
    pub fn new(dim: u32, slices: u32) -> Result<Layout> {
        let q = dim.div_ceil(4) as u64;
        if slices == 0 || slices as u64 > q {
            return Err(Error::invalid(
                "slices",
                slices,
                format!(
                    "1 ..= {q} (each slice holds at least one chunk of four components of the {dim})"
                ),
            ));
        }
        let s = slices as u64;
        let bounds = (0..=s)
            .map(|k| ((4 * (k * q / s)) as usize).min(dim as usize))
            .collect();
        Ok(Layout { bounds })
    }

    pub fn slices(&self) -> usize {
        self.bounds.len() - 1
    }

    pub fn dim(&self) -> usize {
        self.bounds[self.bounds.len() - 1]
    }

    /// The components slice `s` owns.
    pub fn range(&self, s: usize) -> Range<usize> {
        self.bounds[s]..self.bounds[s + 1]
    }

    /// The slice bounds `d_0 = 0 < d_1 < … < d_S = D`.
    pub fn bounds(&self) -> &[usize] {
        &self.bounds
    }
}

/// One device's share: its components of every individual and trial.
#[derive(Clone, Debug)]
pub struct Slice<T> {
    /// Components owned (evaluated) by this slice.
    pub own: Range<usize>,
    /// First component stored: `own.start − 4` with a halo, else `own.start`.
    pub first: usize,
    /// Components stored per row.
    pub width: usize,
    /// The population's stored components, row-major (`x[i·width + j − first]`).
    pub x: Vec<T>,
    /// This generation's trials, same layout.
    pub trial: Vec<T>,
    /// The values of the population, as this slice computed them from the exchange.
    pub fit: Vec<T>,
    /// The trials' values of the last generation.
    pub trial_fit: Vec<T>,
    /// The best individual (lowest value, then lowest index), as this slice sees it.
    pub best: usize,
    lo: Vec<T>,
    hi: Vec<T>,
    /// Per-chunk constants of the stored chunks.
    kc: Vec<[T; 4]>,
}

impl<T: Real> Slice<T> {
    fn row<'a>(&self, v: &'a [T], i: usize) -> &'a [T] {
        &v[i * self.width..(i + 1) * self.width]
    }

    /// The slice's owned components of row `i` of `v` (population or trials).
    pub fn owned<'a>(&self, v: &'a [T], i: usize) -> &'a [T] {
        let r = self.row(v, i);
        &r[self.own.start - self.first..]
    }
}

/// Bytes one slice of `width` components needs for `np` individuals in precision `t`
/// (bytes per value): population and trials (`2·np·(width + 4)`, the 4 for a halo),
/// values of the population and trials, the exchanged totals and partial sums
/// (`np·(2 + 3)`) and the slice's domain and constants (`3·(width + 4)`), plus the
/// `np·2·slices` values received in an exchange.
pub fn slice_bytes(t: u64, np: u64, width: u64, slices: u64) -> u64 {
    let w = width + 4;
    t * (2 * np * w + 5 * np + 3 * w + 2 * np * slices)
}

/// Why the CUDA engine turns a split run down.
pub const CPU_ONLY: &str = "cpu: the split by dimension runs on the CPU engine (its slices simulate the GPUs); the multi-GPU engine is not written yet";

/// [`run_observed`] in the job's precision.
pub fn run_job(job: &Job, slices: u32, observer: Option<Observer>) -> Result<RunResult> {
    match job.precision() {
        Precision::F32 => run_observed::<f32>(job, slices, observer),
        Precision::F64 => run_observed::<f64>(job, slices, observer),
    }
}

/// The split run's settings that the layout does not decide.
struct Setup {
    f: Function,
    key: [u32; 2],
    stream: u32,
    np: u32,
    dim: u32,
}

impl Setup {
    fn of(job: &Job) -> Result<Setup> {
        let f = match job.builtin() {
            Some(f) if !job.strategy().is_adaptive() && job.adaptive().is_none() => f,
            _ => {
                return Err(Error::invalid(
                    "split",
                    "dimension",
                    format!("a split run needs {WHAT_RUNS}"),
                ));
            }
        };
        job.stops().unsupported("the split by dimension")?;
        Ok(Setup {
            f,
            key: key_of(job.seed()),
            stream: job.stream(),
            np: job.pop(),
            dim: job.dim(),
        })
    }
}

/// A split population: all slices and the generation they are at.
pub struct Split<T> {
    job: Job,
    setup: Setup,
    pub layout: Layout,
    pub slices: Vec<Slice<T>>,
    pub generation: u32,
}

impl<T: Real> Split<T> {
    /// The initial population of `job` split into `slices` (generation 0: the same
    /// points as the unsplit engine's).
    pub fn new(job: &Job, slices: u32) -> Result<Split<T>> {
        job.check()?;
        let setup = Setup::of(job)?;
        let layout = Layout::new(setup.dim, slices)?;
        let np = setup.np as usize;
        let halo = setup.f.needs_prev();
        let mut parts = Vec::with_capacity(layout.slices());
        for s in 0..layout.slices() {
            let own = layout.range(s);
            let first = if halo && own.start > 0 {
                own.start - 4
            } else {
                own.start
            };
            let width = own.end - first;
            let cols = first..own.end;
            let lo: Vec<T> = job.lower()[cols.clone()]
                .iter()
                .map(|&v| T::of(v))
                .collect();
            let hi: Vec<T> = job.upper()[cols].iter().map(|&v| T::of(v)).collect();
            let kc = (first..own.end)
                .step_by(4)
                .map(|j0| lane_consts(setup.f, j0 as u32))
                .collect();
            let mut sl = Slice {
                own,
                first,
                width,
                x: vec![T::ZERO; np * width],
                trial: vec![T::ZERO; np * width],
                fit: vec![T::ZERO; np],
                trial_fit: vec![T::ZERO; np],
                best: 0,
                lo,
                hi,
                kc,
            };
            init_slice(&setup, &mut sl);
            parts.push(sl);
        }
        let mut split = Split {
            job: job.clone(),
            setup,
            layout,
            slices: parts,
            generation: 0,
        };
        split.evaluate(false);
        Ok(split)
    }

    /// The best value (every slice has the same).
    pub fn best_value(&self) -> T {
        let s = &self.slices[0];
        s.fit[s.best]
    }

    /// The whole population, row-major, gathered from the slices (for checks and
    /// results; a run never needs it).
    pub fn gather(&self) -> Vec<T> {
        let d = self.layout.dim();
        let np = self.setup.np as usize;
        let mut x = vec![T::ZERO; np * d];
        for sl in &self.slices {
            for i in 0..np {
                x[i * d + sl.own.start..i * d + sl.own.end].copy_from_slice(sl.owned(&sl.x, i));
            }
        }
        x
    }

    /// Row `i` gathered from the slices.
    pub fn gather_row(&self, i: usize) -> Vec<T> {
        self.slices
            .iter()
            .flat_map(|sl| sl.owned(&sl.x, i).iter().copied())
            .collect()
    }

    /// One generation: trials on every slice, the exchanges, then selection on every
    /// slice.
    pub fn step(&mut self) {
        self.generation += 1;
        let g = self.generation;
        let (job, setup) = (&self.job, &self.setup);
        self.slices
            .par_iter_mut()
            .for_each(|sl| build_trials(job, setup, sl, g));
        self.evaluate(true);
        self.slices.par_iter_mut().for_each(|sl| {
            let w = sl.width;
            let Slice {
                x,
                trial,
                fit,
                trial_fit,
                ..
            } = sl;
            x.par_chunks_mut(w)
                .zip(fit.par_iter_mut())
                .zip(trial.par_chunks(w).zip(trial_fit.par_iter()))
                .for_each(|((row, fx), (trow, &tf))| {
                    if accepts(tf, *fx) {
                        row.copy_from_slice(trow);
                        *fx = tf;
                    }
                });
            sl.best = best_index(&sl.fit);
        });
    }

    /// Steps 2–4 of a generation for the trials (or, at generation 0, the population):
    /// every slice ends with the full values in `trial_fit` (or `fit`).
    fn evaluate(&mut self, trials: bool) {
        let (f, formula, dim) = (self.setup.f, self.job.formula(), self.setup.dim);
        let np = self.setup.np as usize;
        fn rows<T>(sl: &Slice<T>, trials: bool) -> &[T] {
            if trials { &sl.trial } else { &sl.x }
        }
        // Exchange 1 (Schwefel 1.2): every slice's totals, to every slice.
        let totals: Vec<Vec<T>> = if f.needs_prefix() {
            self.slices
                .par_iter()
                .map(|sl| {
                    let v = rows(sl, trials);
                    (0..np)
                        .map(|i| sl.owned(v, i).iter().fold(T::ZERO, |a, &c| a + c))
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        // Each slice's partial sums (what it sends in the all-reduce).
        let sent: Vec<Vec<Acc<T>>> = self
            .slices
            .par_iter()
            .enumerate()
            .map(|(s, sl)| {
                let v = rows(sl, trials);
                (0..np)
                    .into_par_iter()
                    .map(|i| {
                        let base = exclusive_scan(&totals, s, i);
                        partial_of(f, formula, dim, sl, v, i, base)
                    })
                    .collect()
            })
            .collect();
        // The all-reduce: every slice folds what every slice sent, in slice order.
        self.slices.par_iter_mut().for_each(|sl| {
            let out = if trials {
                &mut sl.trial_fit
            } else {
                &mut sl.fit
            };
            for (i, o) in out.iter_mut().enumerate() {
                *o = finish(f, formula, fold(&sent, i, f, formula), dim);
            }
            if !trials {
                sl.best = best_index(&sl.fit);
            }
        });
    }
}

/// The exclusive scan of the slices' totals for individual `i`, as slice `s` forms it:
/// `((T_0 + T_1) + …) + T_{s−1}` (zero for slice 0 and when no totals are exchanged).
pub fn exclusive_scan<T: Real>(totals: &[Vec<T>], s: usize, i: usize) -> T {
    totals[..s.min(totals.len())]
        .iter()
        .fold(T::ZERO, |a, t| a + t[i])
}

/// The all-reduce for individual `i`: the slices' partial sums combined in slice order,
/// `((A_0 ⊕ A_1) ⊕ A_2) ⊕ …`.
pub fn fold<T: Real>(
    sent: &[Vec<Acc<T>>],
    i: usize,
    f: Function,
    formula: gpude_device::Formula,
) -> Acc<T> {
    let mut acc = sent[0][i];
    for part in &sent[1..] {
        acc = acc.combine(part[i], f, formula);
    }
    acc
}

/// Slice `sl`'s partial sums of row `i` of `v`.
fn partial_of<T: Real>(
    f: Function,
    formula: gpude_device::Formula,
    dim: u32,
    sl: &Slice<T>,
    v: &[T],
    i: usize,
    base: T,
) -> Acc<T> {
    let row = sl.row(v, i);
    let off = sl.own.start - sl.first;
    // With a halo, the component before the slice is the halo's last.
    let prev = if off > 0 { row[off - 1] } else { T::ZERO };
    let kc = &sl.kc;
    let first = sl.first;
    partial(
        f,
        formula,
        &row[off..],
        sl.own.start as u32,
        dim,
        prev,
        base,
        |j0| {
            kc.get((j0 as usize).wrapping_sub(first) / 4)
                .copied()
                .unwrap_or([T::ZERO; 4])
        },
    )
}

/// A stored row's chunk at component `j0` (zeros past the row's end).
fn chunk_at<T: Real>(sl: &Slice<T>, row: &[T], j0: usize) -> [T; 4] {
    crate::cpu::chunk4(row, j0 - sl.first)
}

impl<T: Real> Generations for Split<T> {
    fn best(&self) -> f64 {
        self.best_value().to_f64()
    }
    /// Generation `g`, the next one (the split keeps its own count).
    fn step(&mut self, g: u32) -> bool {
        debug_assert_eq!(g, self.generation + 1);
        Split::step(self);
        true
    }
}

/// The slice's part of the initial population: generation 0's words of its chunks.
fn init_slice<T: Real>(setup: &Setup, sl: &mut Slice<T>) {
    let (first, end, w) = (sl.first, sl.own.end, sl.width);
    let (lo, hi) = (&sl.lo, &sl.hi);
    sl.x.par_chunks_mut(w).enumerate().for_each(|(i, row)| {
        let sub = subsequence(setup.stream, i as u32);
        for j0 in (first..end).step_by(4) {
            let n = (end - j0).min(4);
            let u = block_words(setup.key, sub, block(0, (j0 / 4) as u32));
            let k = j0 - first;
            let v = init_chunk(
                &u,
                n as u32,
                &crate::cpu::chunk4(lo, k),
                &crate::cpu::chunk4(hi, k),
            );
            row[k..k + n].copy_from_slice(&v[..n]);
        }
    });
}

/// Exponential crossover's run length for individual `i` in generation `g`: the first
/// component (below `D − 1`) whose uniform exceeds Cr, searched chunk by chunk from 0,
/// so that it ends at the first such chunk. The unsplit engine takes the minimum over
/// all chunks: the same index.
fn exponential_run<T: Real>(setup: &Setup, cr: T, sub: u64, g: u32) -> u32 {
    let d = setup.dim;
    if cr >= T::ONE {
        // Every uniform is ≤ 1: no component exceeds Cr.
        return d;
    }
    let mut j0 = 0;
    while j0 < d {
        let n = (d - j0).min(4);
        let w = block_words(setup.key, sub, block(g, COMPONENT_SLOT + j0 / 4));
        let first = first_exceeding(cr, &w, j0, n, d);
        if first != u32::MAX {
            return run_length(first, d);
        }
        j0 += 4;
    }
    d
}

/// The slice's components of every trial of generation `g` (step 1).
fn build_trials<T: Real>(job: &Job, setup: &Setup, sl: &mut Slice<T>, g: u32) {
    let strategy = job.strategy();
    let tp = TrialParams {
        strategy,
        crossover: job.crossover(),
        bounds: job.bounds(),
        f: T::of(job.f()),
        cr: T::of(job.cr()),
        dim: setup.dim,
        variant: job.thesis_variant(),
    };
    let jdim = if strategy.crosses() { setup.dim } else { 0 };
    let nd = strategy.draws() as usize;
    let exponential = strategy.crosses() && job.crossover() == Crossover::Exponential;
    let w = sl.width;
    let mut trial = std::mem::take(&mut sl.trial);
    let this = &*sl;
    let best = this.best;
    trial.par_chunks_mut(w).enumerate().for_each(|(i, out)| {
        let draws = tp.variant.draws(
            setup.key,
            setup.stream,
            i as u32,
            g,
            setup.np,
            nd as u32,
            jdim,
        );
        let sub = subsequence(setup.stream, i as u32);
        let run = if exponential {
            exponential_run(setup, tp.cr, sub, g)
        } else {
            setup.dim
        };
        let xi = this.row(&this.x, i);
        let xb = this.row(&this.x, best);
        for j0 in (this.first..this.own.end).step_by(4) {
            let n = (this.own.end - j0).min(4);
            let q = (j0 / 4) as u32;
            let mut r = [[T::ZERO; 4]; 5];
            for (k, rk) in r.iter_mut().enumerate().take(nd) {
                *rk = chunk_at(this, this.row(&this.x, draws.r[k] as usize), j0);
            }
            let v = trial_chunk(
                &tp,
                j0 as u32,
                n as u32,
                &chunk_at(this, xi, j0),
                &r,
                &chunk_at(this, xb, j0),
                &chunk_at(this, &this.lo, j0),
                &chunk_at(this, &this.hi, j0),
                &tp.variant.lambda_words(setup.key, sub, g, j0 as u32),
                draws.jrand,
                run,
                || block_words(setup.key, sub, block(g, RESAMPLE_SLOT + q)),
            );
            let k = j0 - this.first;
            out[k..k + n].copy_from_slice(&v[..n]);
        }
    });
    sl.trial = trial;
}

/// Runs `job` with its population split by dimension into `slices` slices (see the
/// module's documentation), on the CPU. Only built-in functions and the classic
/// strategies; the result is the unsplit [`crate::cpu::run`]'s to rounding (with one
/// slice, bit for bit).
pub fn run<T: Real>(job: &Job, slices: u32) -> Result<RunResult> {
    run_observed::<T>(job, slices, None)
}

/// [`run`] with an observer (called after the initialisation and every generation;
/// [`crate::run::control::Flow::Stop`] ends the run there), in the host's generation
/// loop.
pub fn run_observed<T: Real>(
    job: &Job,
    slices: u32,
    observer: Option<Observer>,
) -> Result<RunResult> {
    job.check()?;
    Setup::of(job)?;
    let layout = Layout::new(job.dim(), slices)?;
    let t = match job.precision() {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    let np = job.pop() as u64;
    let needed = (0..layout.slices())
        .map(|s| slice_bytes(t, np, layout.range(s).len() as u64, slices as u64))
        .sum::<u64>();
    check_memory(needed)?;
    let start = Instant::now();
    let mut split = Split::<T>::new(job, slices)?;
    let history = job.history().then(|| vec![split.best_value().to_f64()]);
    let mut control = Control {
        observer,
        ..Control::default()
    };
    let end = generations::drive(
        job,
        &mut split,
        0,
        history,
        start,
        Duration::ZERO,
        &mut control,
    );
    let history = end.history;
    let target = job.target_value();
    let reached = |f: T| target.is_some_and(|t| f.to_f64() <= t);
    let best = split.slices[0].best;
    let best_f = split.best_value().to_f64();
    let best_x = DVector::from_iterator(
        job.dim() as usize,
        split.gather_row(best).into_iter().map(|v| v.to_f64()),
    );
    let g = split.generation;
    let ended = g >= job.generations() || reached(split.best_value());
    Ok(RunResult::ended(
        job,
        Ending {
            best_x,
            best_f,
            generations: g,
            evaluations: job.evaluations(g),
            termination: if ended {
                termination(job, g, best_f)
            } else {
                crate::run::result::Termination::Stopped
            },
            elapsed: start.elapsed(),
            history,
            layout: crate::run::result::RunLayout::CpuSplit,
            stream: job.stream(),
        },
    ))
}
