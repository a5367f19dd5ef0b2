//! The adaptive strategies on the CPU engine: jDE, JADE, SHADE, L-SHADE and jSO, with the
//! device crate's update rules ([`gpude_device::adaptive`]) and the settings of
//! [`crate::job::adaptive`]. Generations are synchronous, as in gpude's other engines:
//! every trial comes from the generation's population, archive and memory; then the
//! selection, the archive and memory updates (in index order) and, for L-SHADE and jSO,
//! the population size reduction. The evaluation budget is spent exactly: the last
//! generation makes trials for the first individuals only, as many as the budget has left.

use crate::cpu::{Population, initial};
use crate::job::config::Job;
use crate::job::config::run_settings;
use crate::job::objective::evaluate_fast;
use crate::run::checkpoint::{Checkpoint, Stored};
use crate::run::control::{Control, Observer, Outcome};
use crate::run::generations::{self, Generations};
use crate::run::result::{Ending, RunResult, Termination};
use crate::run::stops::stop_of;
use gpude_device::adaptive as rules;
use gpude_device::adaptive_gen as step;
use gpude_device::philox::key_of;
use gpude_device::{Real, Strategy};
use nalgebra::DVector;
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A trial's value for built-in functions; other objectives are evaluated a
/// generation at a time after the trials (0 until then).
#[inline(always)]
fn fit_of<T: Real>(job: &Job, out: &[T]) -> T {
    match job.builtin() {
        Some(f) => evaluate_fast(f, job.formula(), out),
        None => T::ZERO,
    }
}

/// The state of an adaptive run between generations.
pub struct State<T> {
    pub pop: Population<T>,
    /// The archive's rows (`archive_len` of them, row-major).
    pub archive: Vec<T>,
    pub archive_len: u32,
    /// The memory (H entries; JADE's μ_F, μ_Cr as one entry).
    pub mf: Vec<T>,
    pub mcr: Vec<T>,
    /// The memory entry the next update writes.
    pub k: u32,
    /// jDE's F and Cr per individual (empty for the others).
    pub jf: Vec<T>,
    pub jcr: Vec<T>,
    /// Evaluations spent.
    pub evaluations: u64,
}

impl<T: Real> State<T> {
    /// The initial state of an adaptive `job`.
    pub fn new(job: &Job) -> State<T> {
        let a = job.adaptive().expect("an adaptive job");
        let pop = initial::<T>(job);
        let n = pop.fit.len();
        let h = a.memory_size as usize;
        let (mf, mcr) = (0..h)
            .map(|e| step::initial_memory::<T>(job.strategy(), e, h))
            .unzip();
        let jde = job.strategy() == Strategy::Jde;
        State {
            pop,
            archive: Vec::new(),
            archive_len: 0,
            mf,
            mcr,
            k: 0,
            jf: if jde {
                vec![T::of(rules::JDE_F_INIT); n]
            } else {
                vec![]
            },
            jcr: if jde {
                vec![T::of(rules::JDE_CR_INIT); n]
            } else {
                vec![]
            },
            evaluations: n as u64,
        }
    }

    /// The population size now.
    pub fn size(&self) -> u32 {
        self.pop.fit.len() as u32
    }

    /// Runs generation `g` (from 1) of `job`; returns false, doing nothing, when the
    /// budget is spent.
    pub fn generation(&mut self, job: &Job, g: u32) -> bool {
        let a = job.adaptive().expect("an adaptive job");
        let run = run_settings(job);
        let key = key_of(job.seed());
        let d = self.pop.dim;
        let n = self.size();
        let left = a.max_evaluations.saturating_sub(self.evaluations);
        if left == 0 {
            return false;
        }
        let m = (n as u64).min(left) as usize;
        let t = self.evaluations as f64 / a.max_evaluations as f64;
        let k = step::pbest_k(&run, n, t);
        let mut ranking = vec![0u32; n as usize];
        if k > 0 {
            rules::select_best(&self.pop.fit, k as usize, &mut ranking);
        }
        let mut rows = vec![T::ZERO; m * d];
        let mut outcomes = vec![(T::ZERO, step::Outcome::<T>::default()); m];
        {
            let v = step::View {
                g,
                n,
                k,
                t,
                x: &self.pop.x,
                lo: &self.pop.lo,
                hi: &self.pop.hi,
                ranking: &ranking[..k as usize],
                archive: &self.archive,
                archive_len: self.archive_len,
                mf: &self.mf,
                mcr: &self.mcr,
                jf: &self.jf,
                jcr: &self.jcr,
            };
            rows.par_chunks_mut(d)
                .zip(outcomes.par_iter_mut())
                .enumerate()
                .for_each(|(i, (out, o))| {
                    let oc = step::trial(&run, key, job.stream(), &v, i, out);
                    *o = (fit_of(job, out), oc);
                });
        }
        if job.builtin().is_none() {
            // Other objectives: every trial of the generation in one batch.
            let mut fit = vec![T::ZERO; m];
            job.objective()
                .evaluate_rows(job.formula(), &rows, d, &mut fit);
            for (o, f) in outcomes.iter_mut().zip(fit) {
                o.0 = f;
            }
        }
        // Selection, successes and the archive, in index order; the archive's buffer
        // has room for its capacity while they run.
        let capacity = rules::archive_capacity(a.archive_rate, n);
        let room = capacity.max(self.archive_len) as usize * d;
        self.archive.resize(room, T::ZERO);
        let wins = step::select(
            &run,
            step::Selected {
                x: &mut self.pop.x,
                fit: &mut self.pop.fit,
                archive: &mut self.archive,
                archive_len: &mut self.archive_len,
                jf: &mut self.jf,
                jcr: &mut self.jcr,
            },
            m,
            capacity,
            &rows,
            |i| outcomes[i].0,
            |i| outcomes[i].1,
        );
        self.archive.truncate(self.archive_len as usize * d);
        self.evaluations += m as u64;
        step::adapt(&run, &mut self.mf, &mut self.mcr, &mut self.k, &wins);
        let next = step::next_size(&run, n, self.evaluations);
        if next < n {
            self.reduce(next, &mut ranking);
            self.shrink_archive(job, g, rules::archive_capacity(a.archive_rate, next));
        }
        true
    }

    /// Keeps the `next` best individuals, in their order.
    fn reduce(&mut self, next: u32, idx: &mut [u32]) {
        let d = self.pop.dim;
        let next = next as usize;
        rules::select_best(&self.pop.fit, next, idx);
        let keep = &mut idx[..next];
        keep.sort_unstable();
        for (to, &from) in keep.iter().enumerate() {
            let from = from as usize;
            self.pop.x.copy_within(from * d..(from + 1) * d, to * d);
            self.pop.fit[to] = self.pop.fit[from];
            if !self.jf.is_empty() {
                self.jf[to] = self.jf[from];
                self.jcr[to] = self.jcr[from];
            }
        }
        self.pop.x.truncate(next * d);
        self.pop.fit.truncate(next);
        self.jf.truncate(next.min(self.jf.len()));
        self.jcr.truncate(next.min(self.jcr.len()));
    }

    /// Deletes random archive entries down to `capacity`: the t-th deletion takes entry
    /// `below(w_t, len)` (its place filled by the last entry), w_t being word t of the
    /// population-wide stream of generation `g`.
    fn shrink_archive(&mut self, job: &Job, g: u32, capacity: u32) {
        step::shrink_archive(
            key_of(job.seed()),
            job.stream(),
            g,
            self.pop.dim,
            &mut self.archive,
            &mut self.archive_len,
            capacity,
        );
        self.archive
            .truncate(self.archive_len as usize * self.pop.dim);
    }
}

/// Runs an adaptive `job` to the end on the CPU.
pub fn run<T: Real>(job: &Job, observer: Option<Observer>) -> RunResult {
    run_until::<T>(job, observer, None).0
}

/// Runs an adaptive `job` under `control` (its observer and stop flag; an adaptive run
/// is not saved on the way: a checkpoint does not hold its memory and archive yet). The
/// outcome's checkpoint holds the final population, for reports only:
/// [`crate::run::checkpoint::encode`] refuses it.
pub fn run_controlled<T: Stored>(job: &Job, control: &mut Control) -> Outcome {
    let (result, x, fit) = run_until::<T>(job, control.observer, control.stop);
    let checkpoint = Checkpoint {
        job: job.clone(),
        generation: result.generations,
        state: T::state(x, fit),
        history: result.history.clone(),
        elapsed: result.elapsed,
    };
    Outcome { result, checkpoint }
}

/// An adaptive run between generations: its state and best individual.
struct Adaptive<'a, T> {
    job: &'a Job,
    st: State<T>,
    best: usize,
}

impl<T: Real> Generations for Adaptive<'_, T> {
    fn best(&self) -> f64 {
        self.st.pop.fit[self.best].to_f64()
    }
    fn step(&mut self, g: u32) -> bool {
        if !self.st.generation(self.job, g) {
            return false;
        }
        self.best = self.st.pop.best();
        true
    }
    fn values(&self) -> Vec<f64> {
        self.st.pop.fit.iter().map(|v| v.to_f64()).collect()
    }
}

/// Runs an adaptive `job` on the CPU until its end (its limit, budget, target or one of
/// its convergence stops), or until `stop` is set or the observer says
/// [`Flow::Stop`](crate::run::control::Flow::Stop) (the run then ends with
/// [`Termination::Stopped`]), in the host's generation loop.
pub fn run_until<T: Real>(
    job: &Job,
    observer: Option<Observer>,
    stop: Option<&AtomicBool>,
) -> (RunResult, Vec<T>, Vec<T>) {
    let start = Instant::now();
    let a = job.adaptive().expect("an adaptive job");
    let st = State::<T>::new(job);
    let best = st.pop.best();
    let history = job.history().then(|| vec![st.pop.fit[best].to_f64()]);
    let mut run = Adaptive { job, st, best };
    let mut control = Control {
        observer,
        stop,
        ..Control::default()
    };
    let end = generations::drive(
        job,
        &mut run,
        0,
        history,
        start,
        Duration::ZERO,
        &mut control,
    );
    let Adaptive { st, best, .. } = run;
    let g = end.generation;
    let best_f = st.pop.fit[best].to_f64();
    let reached = job.target_value().is_some_and(|t| best_f <= t);
    let termination = if reached {
        Termination::TargetReached
    } else if st.evaluations >= a.max_evaluations {
        Termination::MaxEvaluations
    } else if g >= job.generations() {
        Termination::MaxGenerations
    } else {
        let values: Vec<f64> = st.pop.fit.iter().map(|v| v.to_f64()).collect();
        stop_of(job, g, &values, end.history.as_deref()).unwrap_or(Termination::Stopped)
    };
    let result = RunResult::ended(
        job,
        Ending {
            best_x: DVector::from_iterator(st.pop.dim, st.pop.row(best).iter().map(|v| v.to_f64())),
            best_f,
            generations: g,
            evaluations: st.evaluations,
            termination,
            elapsed: start.elapsed(),
            history: end.history,
            layout: crate::run::result::RunLayout::Cpu,
            stream: job.stream(),
        },
    );
    (result, st.pop.x, st.pop.fit)
}
