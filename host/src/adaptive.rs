//! The adaptive strategies on the CPU: jDE, JADE, SHADE, L-SHADE and jSO.
//!
//! Their update rules are the device crate's ([`gpude_device::adaptive`]); this module
//! holds their settings (the papers' defaults, overridable through [`JobBuilder`]) and
//! the engine that runs them. Generations are synchronous, as in gpude's other engines:
//! every trial comes from the generation's population, archive and memory; then the
//! selection, the archive and memory updates (in index order) and, for L-SHADE and jSO,
//! the population size reduction. The evaluation budget is spent exactly: the last
//! generation makes trials for the first individuals only, as many as the budget has left.
//!
//! Defaults (papers as cited in [`gpude_device::adaptive`]):
//!
//! | | N_init | H | archive | p | other |
//! |---|---|---|---|---|---|
//! | jDE | 100 | – | – | – | τ1 = τ2 = 0.1, F ∈ [0.1, 1] |
//! | JADE | 100 | – | 1.0·N | 0.05 | c = 0.1, μ_F = μ_Cr = 0.5 |
//! | SHADE | 100 | 100 | 1.0·N | p_i ∈ [2/N, 0.2] | M = 0.5 |
//! | L-SHADE | 18·D | 6 | 2.6·N | 0.11 | N_min = 4, M = 0.5 |
//! | jSO | 25·ln D·√D | 5 | 1.0·N | 0.25 → 0.125 | N_min = 4, M_F = 0.3, M_Cr = 0.8 |
//!
//! JADE's N = 100 is gpude's choice, the value of jDE's and SHADE's papers. The budget
//! defaults to the CEC competitions' 10 000·D evaluations, the bound policy to the
//! papers' midpoint rule; crossover is binomial. jDE and the SHADE family replace x_i when
//! the trial is not worse, JADE only when it is better; successes (the parameters that
//! adapt, the parents that enter the archive) are strict improvements everywhere.

use crate::config::{Job, JobBuilder, strategy_name};
use crate::cpu::{Flow, Observer, Population, evaluate_fast, initial};
use crate::error::{Error, Result};
use crate::result::{Ending, RunResult, Termination};
use gpude_device::abi::AdaptiveRun;
use gpude_device::adaptive as rules;
use gpude_device::adaptive_gen as step;
use gpude_device::philox::key_of;
pub use gpude_device::registry::Layout;
use gpude_device::{Crossover, Real, Strategy};
use nalgebra::DVector;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The settings of an adaptive strategy, resolved and validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Adaptive {
    /// H, the success-history memory's entries (SHADE, L-SHADE, jSO; 1 otherwise).
    pub memory_size: u32,
    /// The archive holds at most `round(rate · N)` parents; 0: no archive.
    pub archive_rate: f64,
    /// p of current-to-pbest: JADE's and L-SHADE's p, SHADE's upper bound of p_i,
    /// jSO's p at the start (it ends at p/2); 0 for jDE.
    pub p_best: f64,
    /// JADE's learning rate c (0 for the others).
    pub learning_rate: f64,
    /// jDE's τ1 and τ2 (0 for the others).
    pub tau: [f64; 2],
    /// The population size at the end of the budget (L-SHADE, jSO); the initial size for
    /// the others.
    pub min_pop: u32,
    /// The evaluation budget: the run stops when it is spent, and the schedules of
    /// L-SHADE and jSO read it.
    pub max_evaluations: u64,
}

/// What [`JobBuilder`]'s adaptive settings hold before `build`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdaptiveOptions {
    memory_size: Option<u32>,
    archive_rate: Option<f64>,
    p_best: Option<f64>,
    learning_rate: Option<f64>,
    tau: Option<[f64; 2]>,
    min_pop: Option<u32>,
}

/// The CEC competitions' budget per dimension, the default of the adaptive strategies.
pub const EVALUATIONS_PER_DIM: u64 = 10_000;
/// The smallest population an adaptive strategy runs with (L-SHADE's N_min).
pub const MIN_POP: u32 = 4;
/// The largest memory.
pub const MAX_MEMORY: u32 = 1 << 16;
/// The largest archive rate.
pub const MAX_ARCHIVE_RATE: f64 = 10.0;

impl JobBuilder {
    /// H, the memory's entries (SHADE: 100, L-SHADE: 6, jSO: 5, its last entry fixed).
    pub fn memory_size(mut self, h: u32) -> Self {
        self.adaptive.memory_size = Some(h);
        self
    }
    /// The archive's capacity over the population size (JADE, SHADE, jSO: 1.0,
    /// L-SHADE: 2.6); 0 turns the archive off.
    pub fn archive_rate(mut self, r: f64) -> Self {
        self.adaptive.archive_rate = Some(r);
        self
    }
    /// p of current-to-pbest (JADE: 0.05, L-SHADE: 0.11; SHADE's upper bound of p_i: 0.2;
    /// jSO's starting p: 0.25).
    pub fn p_best(mut self, p: f64) -> Self {
        self.adaptive.p_best = Some(p);
        self
    }
    /// JADE's learning rate c (0.1).
    pub fn learning_rate(mut self, c: f64) -> Self {
        self.adaptive.learning_rate = Some(c);
        self
    }
    /// jDE's τ1 (for F) and τ2 (for Cr), both 0.1.
    pub fn tau(mut self, tau1: f64, tau2: f64) -> Self {
        self.adaptive.tau = Some([tau1, tau2]);
        self
    }
    /// The final population size of L-SHADE and jSO (4).
    pub fn min_pop(mut self, n: u32) -> Self {
        self.adaptive.min_pop = Some(n);
        self
    }
}

/// The CUDA engine's check of an adaptive job: its kernels evaluate the built-in and
/// the CEC 2017 functions, expressions and PTX objectives (linked in, in a precision
/// the module defines), and leave a host callback's values to the host between their
/// phases. Classic jobs pass.
pub fn gpu_check(job: &Job) -> Result<()> {
    if !job.strategy().is_adaptive() || job.objective().ptx_code().is_none() {
        return Ok(());
    }
    // A PTX objective's module must define the job's precision.
    crate::cuda::check_objective(job)
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
pub fn gpu_layout(mode: crate::cuda::Mode, job: &Job) -> Result<Layout> {
    use crate::cuda::Mode;
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

/// The papers' initial population size, for the adaptive strategies.
pub fn default_pop(s: Strategy, dim: u32) -> Option<u32> {
    let n = match s {
        Strategy::Jde | Strategy::Jade | Strategy::Shade => 100,
        Strategy::LShade => rules::lshade_initial_pop(dim),
        Strategy::Jso => rules::jso_initial_pop(dim),
        _ => return None,
    };
    Some(n.clamp(MIN_POP, crate::config::MAX_POP))
}

impl Adaptive {
    /// (generations, whether the budget sets them) for a job with the user's generation
    /// limit: at most as many generations as the budget can pay for at the smallest
    /// population.
    pub(crate) fn limits(&self, pop: u32, generations: Option<u32>) -> (u32, bool) {
        let (e, n) = (self.max_evaluations, self.min_pop as u64);
        let left = e.saturating_sub(pop as u64);
        let by_budget = u64::min(left.div_ceil(n), u32::MAX as u64 - 1) as u32;
        match generations {
            Some(g) => (g.min(by_budget), false),
            None => (by_budget, true),
        }
    }

    /// A one-line description: `jso (H = 5, archive 1·N, p 0.25 → 0.125, N → 4)`.
    pub fn describe(&self, s: Strategy) -> String {
        let name = strategy_name(s);
        match s {
            Strategy::Jde => format!("{name} (tau1 = {}, tau2 = {})", self.tau[0], self.tau[1]),
            Strategy::Jade => format!(
                "{name} (p = {}, c = {}, archive {}·N)",
                self.p_best, self.learning_rate, self.archive_rate
            ),
            Strategy::Shade => format!(
                "{name} (H = {}, archive {}·N, p_i in [2/N, {}])",
                self.memory_size, self.archive_rate, self.p_best
            ),
            Strategy::LShade => format!(
                "{name} (H = {}, archive {}·N, p = {}, N -> {})",
                self.memory_size, self.archive_rate, self.p_best, self.min_pop
            ),
            _ => format!(
                "{name} (H = {}, archive {}·N, p {} -> {}, N -> {})",
                self.memory_size,
                self.archive_rate,
                self.p_best,
                self.p_best / 2.0,
                self.min_pop
            ),
        }
    }
}

/// Resolves and checks the adaptive settings of a job; `None` for a classic strategy
/// (which must then have none set).
pub(crate) fn settle(
    s: Strategy,
    crossover: Crossover,
    o: &AdaptiveOptions,
    dim: u32,
    pop: u32,
    evaluations: Option<u64>,
) -> Result<Option<Adaptive>> {
    let name = strategy_name(s);
    let for_only = |what: &'static str, value: String, which: &str| {
        Error::invalid(what, value, format!("only {which} use it, not {name}"))
    };
    if !s.is_adaptive() {
        let given = [
            ("memory size", o.memory_size.map(|v| v.to_string())),
            ("archive rate", o.archive_rate.map(|v| v.to_string())),
            ("p-best", o.p_best.map(|v| v.to_string())),
            ("learning rate", o.learning_rate.map(|v| v.to_string())),
            ("tau", o.tau.map(|v| format!("{v:?}"))),
            ("minimum population", o.min_pop.map(|v| v.to_string())),
        ];
        if let Some((what, Some(v))) = given.into_iter().find(|(_, v)| v.is_some()) {
            return Err(for_only(what, v, "the adaptive strategies"));
        }
        return Ok(None);
    }
    if crossover != Crossover::Binomial {
        return Err(Error::invalid(
            "crossover",
            "exp",
            format!("bin: {name} crosses binomially"),
        ));
    }
    if pop < MIN_POP {
        return Err(Error::invalid(
            "population size",
            pop,
            format!("{MIN_POP} ..= {} for {name}", crate::config::MAX_POP),
        ));
    }
    let memory = matches!(s, Strategy::Shade | Strategy::LShade | Strategy::Jso);
    let archive = s.uses_pbest();
    let reduces = matches!(s, Strategy::LShade | Strategy::Jso);
    // The papers' values.
    let (h, rate, p) = match s {
        Strategy::Jde => (1, 0.0, 0.0),
        Strategy::Jade => (1, 1.0, 0.05),
        Strategy::Shade => (100, 1.0, 0.2),
        Strategy::LShade => (6, 2.6, 0.11),
        _ => (5, 1.0, 0.25),
    };
    let memory_size = match o.memory_size {
        Some(v) if !memory => {
            return Err(for_only(
                "memory size",
                v.to_string(),
                "shade, lshade and jso",
            ));
        }
        Some(v) => {
            let least = if s == Strategy::Jso { 2 } else { 1 };
            if !(least..=MAX_MEMORY).contains(&v) {
                return Err(Error::invalid(
                    "memory size",
                    v,
                    format!(
                        "{least} ..= {MAX_MEMORY}{}",
                        if least == 2 {
                            " (jso keeps its last entry fixed)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            v
        }
        None => h,
    };
    let archive_rate = match o.archive_rate {
        Some(v) if !archive => {
            return Err(for_only(
                "archive rate",
                v.to_string(),
                "jade, shade, lshade and jso",
            ));
        }
        Some(v) if !(v.is_finite() && (0.0..=MAX_ARCHIVE_RATE).contains(&v)) => {
            return Err(Error::invalid(
                "archive rate",
                v,
                format!("a number in [0, {MAX_ARCHIVE_RATE}] (0: no archive)"),
            ));
        }
        Some(v) => v,
        None => rate,
    };
    let p_best = match o.p_best {
        Some(v) if !archive => {
            return Err(for_only(
                "p-best",
                v.to_string(),
                "jade, shade, lshade and jso",
            ));
        }
        Some(v) if !(v.is_finite() && v > 0.0 && v <= 1.0) => {
            return Err(Error::invalid("p-best", v, "a number in (0, 1]"));
        }
        Some(v) => v,
        None => p,
    };
    let learning_rate = match o.learning_rate {
        Some(v) if s != Strategy::Jade => {
            return Err(for_only("learning rate", v.to_string(), "jade"));
        }
        Some(v) if !(v.is_finite() && v > 0.0 && v <= 1.0) => {
            return Err(Error::invalid("learning rate", v, "a number in (0, 1]"));
        }
        Some(v) => v,
        None if s == Strategy::Jade => 0.1,
        None => 0.0,
    };
    let tau = match o.tau {
        Some(v) if s != Strategy::Jde => return Err(for_only("tau", format!("{v:?}"), "jde")),
        Some(v) => {
            for t in v {
                if !(t.is_finite() && (0.0..=1.0).contains(&t)) {
                    return Err(Error::invalid("tau", t, "a number in [0, 1]"));
                }
            }
            v
        }
        None if s == Strategy::Jde => [0.1, 0.1],
        None => [0.0, 0.0],
    };
    let min_pop = match o.min_pop {
        Some(v) if !reduces => {
            return Err(for_only(
                "minimum population",
                v.to_string(),
                "lshade and jso",
            ));
        }
        Some(v) if !(MIN_POP..=pop).contains(&v) => {
            return Err(Error::invalid(
                "minimum population",
                v,
                format!("{MIN_POP} ..= the initial population ({pop})"),
            ));
        }
        Some(v) => v,
        None if reduces => MIN_POP,
        None => pop,
    };
    let max_evaluations = evaluations.unwrap_or(EVALUATIONS_PER_DIM * dim as u64);
    if max_evaluations < pop as u64 {
        return Err(Error::invalid(
            "evaluation budget",
            max_evaluations,
            format!("at least the population size ({pop}) for the initial population"),
        ));
    }
    Ok(Some(Adaptive {
        memory_size,
        archive_rate,
        p_best,
        learning_rate,
        tau,
        min_pop,
        max_evaluations,
    }))
}

/// The settings of an adaptive `job` as both engines read them (the device crate's
/// [`AdaptiveRun`]); `function` is the built-in's code, or the CEC 2017 function's number.
pub fn run_settings(job: &Job) -> AdaptiveRun {
    let function = match (job.builtin(), job.objective().as_cec2017()) {
        (Some(f), _) => f as u32,
        (None, Some(c)) => c.id().number(),
        (None, None) => 0,
    };
    let np = job.pop();
    // A classic run (CEC 2017 functions on the GPU): its generations are the limit; the
    // budget is what they spend.
    let classic = Adaptive {
        max_evaluations: job.evaluations(job.generations()),
        archive_rate: 0.0,
        p_best: 0.0,
        learning_rate: 0.0,
        tau: [0.0, 0.0],
        min_pop: np,
        memory_size: 1,
    };
    let a = job.adaptive().unwrap_or(&classic);
    AdaptiveRun {
        max_evaluations: a.max_evaluations,
        archive_rate: a.archive_rate,
        p_best: a.p_best,
        learning_rate: a.learning_rate,
        tau1: a.tau[0],
        tau2: a.tau[1],
        f: job.f(),
        cr: job.cr(),
        strategy: job.strategy() as u32,
        bounds: job.bounds() as u32,
        // The separable kernels read their objective's flags here (as the classic
        // families read `Run::formula`).
        formula: match job.objective().separable_flags(job.precision()) {
            Some(flags) if job.builtin().is_none() => flags.bits(),
            _ => job.formula() as u32,
        },
        function,
        dim: job.dim(),
        np,
        min_pop: a.min_pop,
        memory_size: a.memory_size,
        gens: job.generations(),
        crossover: job.crossover() as u32,
        variant: job.thesis_variant().bits(),
        phase: gpude_device::abi::ADAPTIVE_PHASE_RUN,
        target: job.target_value().unwrap_or(f64::NAN),
    }
}

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
/// [`crate::checkpoint::encode`] refuses it.
pub fn run_controlled<T: crate::checkpoint::Stored>(
    job: &Job,
    control: &mut crate::cpu::Control,
) -> crate::cpu::Outcome {
    let (result, x, fit) = run_until::<T>(job, control.observer, control.stop);
    let checkpoint = crate::checkpoint::Checkpoint {
        job: job.clone(),
        generation: result.generations,
        state: T::state(x, fit),
        history: result.history.clone(),
        elapsed: result.elapsed,
    };
    crate::cpu::Outcome { result, checkpoint }
}

/// Runs an adaptive `job` on the CPU until its end, or until `stop` is set or the
/// observer says [`Flow::Stop`] (the run then ends with [`Termination::Stopped`]).
pub fn run_until<T: Real>(
    job: &Job,
    observer: Option<Observer>,
    stop: Option<&AtomicBool>,
) -> (RunResult, Vec<T>, Vec<T>) {
    let start = Instant::now();
    let a = job.adaptive().expect("an adaptive job");
    let mut st = State::<T>::new(job);
    let mut best = st.pop.best();
    let target = job.target_value();
    let reached = |f: T| target.is_some_and(|t| f.to_f64() <= t);
    let mut history = job.history().then(|| vec![st.pop.fit[best].to_f64()]);
    let mut stopped = observer.is_some_and(|o| o(0, st.pop.fit[best].to_f64()) == Flow::Stop);
    let mut g = 0;
    stopped |= stop.is_some_and(|s| s.load(Ordering::Relaxed));
    while !stopped
        && g < job.generations()
        && !reached(st.pop.fit[best])
        && st.generation(job, g + 1)
    {
        g += 1;
        best = st.pop.best();
        if job.objective().failed() {
            break;
        }
        let bf = st.pop.fit[best].to_f64();
        if let Some(h) = history.as_mut() {
            h.push(bf);
        }
        stopped = observer.is_some_and(|o| o(g, bf) == Flow::Stop)
            || stop.is_some_and(|s| s.load(Ordering::Relaxed));
    }
    let best_f = st.pop.fit[best].to_f64();
    let termination = if reached(st.pop.fit[best]) {
        Termination::TargetReached
    } else if st.evaluations >= a.max_evaluations {
        Termination::MaxEvaluations
    } else if g >= job.generations() {
        Termination::MaxGenerations
    } else {
        Termination::Stopped
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
            history,
            backend: "cpu",
            stream: job.stream(),
        },
    );
    (result, st.pop.x, st.pop.fit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::Mode;
    use gpude_device::Function;

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
