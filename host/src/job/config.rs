//! A job: the problem, the strategy and its settings, the stopping rules and the seed.

use crate::error::{Error, Result, num};
use crate::job::adaptive::Adaptive;
use crate::job::limits::MAX_DIM;
use crate::job::objective::Objective;
use crate::job::problem::{FunctionInfo, Problem, check_dim_of};
use crate::run::stops::Stops;
use gpude_device::abi::AdaptiveRun;
use gpude_device::variant::ThesisVariant;
use gpude_device::{BoundPolicy, Crossover, Formula, Function, Strategy};
use std::sync::Arc;

// The names, the limits and the precision, where callers found them before they had
// files of their own.
pub use crate::job::limits::MAX_POP;
pub use crate::job::names::{
    BOUND_POLICIES, CROSSOVERS, FORMULAS, STRATEGIES, VARIANT_KEYS, bounds_name, crossover_name,
    formula_name, parse_bounds, parse_crossover, parse_formula, parse_strategy, parse_variant,
    strategy_name, variant_name,
};
pub use crate::job::precision::Precision;

/// The scale factor F a job has unless told otherwise.
pub const DEFAULT_F: f64 = 0.5;
/// The crossover rate Cr a job has unless told otherwise.
pub const DEFAULT_CR: f64 = 0.9;

/// One optimization to run, made and validated by [`JobBuilder::build`]. Its fields
/// are private, so every `Job` satisfies [`Job::check`]; the engines re-check it.
///
/// Settings that the strategy does not use are refused rather than ignored: the thesis
/// strategy draws its own λ and has no crossover, so a thesis job keeps F, Cr and the
/// crossover at their defaults (setting them to anything else is an error). It does
/// take every bound policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    problem: Problem,
    strategy: Strategy,
    crossover: Crossover,
    bounds: BoundPolicy,
    f: f64,
    cr: f64,
    pop: u32,
    generations: u32,
    budget_from_evaluations: bool,
    target: Option<f64>,
    seed: u64,
    stream: u32,
    precision: Precision,
    formula: Formula,
    history: bool,
    adaptive: Option<crate::job::adaptive::Adaptive>,
    thesis_variant: ThesisVariant,
    stops: Stops,
}

impl Job {
    /// A builder with gpude's defaults: the thesis strategy, the function's usual domain
    /// used for initialisation only, Np = 10·D (at least 32), 1000 generations, seed 0, f32.
    pub fn builder(function: Function, dim: u32) -> JobBuilder {
        Self::builder_for(Objective::Builtin(function), dim)
    }

    /// A builder for any objective, with the defaults of [`Job::builder`]. Expressions
    /// and callbacks have no usual domain: give one with [`JobBuilder::domain`] or
    /// [`JobBuilder::domain_box`] (CEC 2017 functions default to [-100, 100]).
    pub fn builder_for(objective: impl Into<Objective>, dim: u32) -> JobBuilder {
        JobBuilder {
            objective: objective.into(),
            dim,
            lower: None,
            upper: None,
            strategy: Strategy::Thesis,
            crossover: Crossover::Binomial,
            bounds: None,
            f: DEFAULT_F,
            cr: DEFAULT_CR,
            pop: None,
            generations: None,
            evaluations: None,
            target: None,
            seed: 0,
            stream: 0,
            precision: Precision::F32,
            formula: Formula::Exact,
            history: false,
            adaptive: Default::default(),
            thesis_variant: ThesisVariant::DEFAULT,
            stops: Stops::default(),
        }
    }

    /// The function and the initial domain.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The built-in function.
    ///
    /// # Panics
    /// When the objective is not a built-in: see [`Job::builtin`] and [`Job::objective`].
    pub fn function(&self) -> Function {
        self.problem.function()
    }

    /// The built-in function, when the objective is one.
    pub fn builtin(&self) -> Option<Function> {
        self.problem.builtin()
    }

    /// What the job minimises.
    pub fn objective(&self) -> &Objective {
        self.problem.objective()
    }

    pub fn dim(&self) -> u32 {
        self.problem.dim()
    }

    /// What gpude knows of the built-in function.
    ///
    /// # Panics
    /// When the objective is not a built-in (see [`Job::builtin`]).
    pub fn info(&self) -> &'static FunctionInfo {
        self.problem.info()
    }

    /// The lower bound of every component.
    pub fn lower(&self) -> &[f64] {
        self.problem.lower()
    }

    /// The upper bound of every component.
    pub fn upper(&self) -> &[f64] {
        self.problem.upper()
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The crossover (classic strategies; binomial for the thesis strategy).
    pub fn crossover(&self) -> Crossover {
        self.crossover
    }

    /// The bound policy.
    pub fn bounds(&self) -> BoundPolicy {
        self.bounds
    }

    /// Scale factor F (classic strategies).
    pub fn f(&self) -> f64 {
        self.f
    }

    /// Crossover rate Cr (classic strategies).
    pub fn cr(&self) -> f64 {
        self.cr
    }

    /// The population size Np.
    pub fn pop(&self) -> u32 {
        self.pop
    }

    /// The most generations (after the initial population) the engines run: the limit
    /// asked for, plus one under [`GenerationCount::PlusOne`](gpude_device::variant::GenerationCount::PlusOne) (see
    /// [`Job::thesis_variant`]).
    pub fn generations(&self) -> u32 {
        self.generations
    }

    /// The generation limit as asked for: [`Job::generations`] without the thesis
    /// variant's extra generation.
    pub fn g_max(&self) -> u32 {
        self.generations - self.thesis_variant.extra_generations()
    }

    /// True when `generations` came from an evaluation budget.
    pub fn budget_from_evaluations(&self) -> bool {
        self.budget_from_evaluations
    }

    /// Stop once the best value is at most this far above the objective's known minimum
    /// (above 0 when it has none).
    pub fn target(&self) -> Option<f64> {
        self.target
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Which random stream of the seed (independent repetitions use 0, 1, …).
    pub fn stream(&self) -> u32 {
        self.stream
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Record the best value after every generation (always, with a stagnation stop:
    /// it is read from the history).
    pub fn history(&self) -> bool {
        self.history
    }

    /// When the run ends before its limit: convergence of the values, stagnation of the
    /// best (none unless set).
    pub fn stops(&self) -> &Stops {
        &self.stops
    }

    /// How the objective is computed (exact, the default, or as printed).
    pub fn formula(&self) -> Formula {
        self.formula
    }

    /// How the thesis strategy computes its trials ([`ThesisVariant::DEFAULT`]: gpude's
    /// own; any other only with the thesis strategy and init-only bounds).
    pub fn thesis_variant(&self) -> ThesisVariant {
        self.thesis_variant
    }

    /// The settings of an adaptive strategy (`None` for the classic ones).
    pub fn adaptive(&self) -> Option<&crate::job::adaptive::Adaptive> {
        self.adaptive.as_ref()
    }

    /// The same job with another seed (any seed is valid).
    pub fn with_seed(mut self, seed: u64) -> Job {
        self.seed = seed;
        self
    }

    /// The same job on another random stream of its seed (any stream is valid).
    pub fn with_stream(mut self, stream: u32) -> Job {
        self.stream = stream;
        self
    }

    /// Takes `other`'s bounds where they are this job's, bit for bit, so that the two
    /// jobs hold one copy of them (nothing else changes).
    pub(crate) fn share_bounds(&mut self, other: &Job) {
        self.problem.share_bounds(&other.problem);
    }

    /// The lower and upper bounds, shared (not copied).
    pub(crate) fn shared_bounds(&self) -> crate::job::problem::SharedBounds {
        self.problem.shared_bounds()
    }

    /// The same job, recording the best value after every generation or not; a job
    /// with a stagnation stop records it either way.
    pub fn with_history(mut self, history: bool) -> Job {
        self.history = history || self.stops.stagnation.is_some();
        self
    }

    /// The same job with bound policy `b` (every strategy takes every policy).
    pub fn with_bounds(mut self, b: BoundPolicy) -> Job {
        self.bounds = b;
        self
    }

    /// The same job in precision `p`, checked again (bounds that f64 represents may not
    /// be representable in f32).
    pub fn with_precision(mut self, p: Precision) -> Result<Job> {
        self.precision = p;
        self.check()?;
        Ok(self)
    }

    /// The same job with a generation limit of `generations` (an evaluation budget
    /// becomes this count), plus the thesis variant's extra generation if it has one;
    /// the sum below `u32::MAX`.
    pub(crate) fn with_generation_limit(mut self, generations: u32) -> Job {
        self.generations = generations.saturating_add(self.thesis_variant.extra_generations());
        self.budget_from_evaluations = false;
        self
    }

    /// Evaluations a run of `g` generations spends: Np + Np·g.
    pub fn evaluations(&self, g: u32) -> u64 {
        self.pop as u64 * (1 + g as u64)
    }

    /// The target as an absolute function value (minimum + target), if any.
    pub fn target_value(&self) -> Option<f64> {
        self.target.map(|t| self.objective().reference() + t)
    }

    /// Checks every invariant of a job: what [`JobBuilder::build`] guarantees. Linear in
    /// the dimension; the engines call it before running.
    pub fn check(&self) -> Result<()> {
        self.problem.check()?;
        match self.precision {
            Precision::F32 => self.problem.check_in::<f32>()?,
            Precision::F64 => self.problem.check_in::<f64>()?,
        }
        self.check_settings()
    }

    /// Checks many jobs: the domain (linear in the dimension) once for a run of jobs that
    /// share it (as repetitions of one job do), the settings of every job.
    pub fn check_all(jobs: &[Job]) -> Result<()> {
        let mut prev: Option<&Job> = None;
        for job in jobs {
            match prev {
                Some(p)
                    if p.precision == job.precision() && p.problem.shares_bounds(&job.problem) =>
                {
                    job.check_settings()?
                }
                _ => job.check()?,
            }
            prev = Some(job);
        }
        Ok(())
    }

    /// The checks of everything but the domain.
    fn check_settings(&self) -> Result<()> {
        check_pop(self.strategy, self.pop)?;
        if !(self.f.is_finite() && self.f > 0.0 && self.f <= 2.0) {
            return Err(Error::invalid("F", num(self.f), "a number in (0, 2]"));
        }
        if !(self.cr.is_finite() && (0.0..=1.0).contains(&self.cr)) {
            return Err(Error::invalid("Cr", num(self.cr), "a number in [0, 1]"));
        }
        if self.adaptive.is_some() && (self.f != DEFAULT_F || self.cr != DEFAULT_CR) {
            let (name, v) = if self.f != DEFAULT_F {
                ("F", self.f)
            } else {
                ("Cr", self.cr)
            };
            return Err(Error::invalid(
                name,
                num(v),
                format!(
                    "the {} strategy adapts F and Cr itself: leave them at their defaults ({DEFAULT_F}, {DEFAULT_CR}) or choose a classic strategy",
                    strategy_name(self.strategy)
                ),
            ));
        }
        if !self.strategy.crosses() {
            let s = strategy_name(self.strategy);
            if self.f != DEFAULT_F {
                return Err(Error::invalid(
                    "F",
                    num(self.f),
                    format!(
                        "the {s} strategy has no F (it draws λ per component): leave F at its default {DEFAULT_F} or choose a classic strategy"
                    ),
                ));
            }
            if self.cr != DEFAULT_CR {
                return Err(Error::invalid(
                    "Cr",
                    num(self.cr),
                    format!(
                        "the {s} strategy has no crossover: leave Cr at its default {DEFAULT_CR} or choose a classic strategy"
                    ),
                ));
            }
            if self.crossover != Crossover::Binomial {
                return Err(Error::invalid(
                    "crossover",
                    crossover_name(self.crossover),
                    format!(
                        "the {s} strategy has no crossover: leave it at its default (bin) or choose a classic strategy"
                    ),
                ));
            }
        }
        if let Some(t) = self.target
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(Error::invalid(
                "target error",
                num(t),
                "a finite number ≥ 0",
            ));
        }
        if self.generations == u32::MAX {
            return Err(Error::invalid(
                "generations",
                self.generations,
                format!("at most {}", u32::MAX - 1),
            ));
        }
        self.stops.check()?;
        self.check_variant()
    }

    /// A thesis variant other than the default only where it means something.
    fn check_variant(&self) -> Result<()> {
        let v = self.thesis_variant;
        if v.is_default() {
            return Ok(());
        }
        if self.strategy != Strategy::Thesis || self.bounds != BoundPolicy::InitOnly {
            return Err(Error::invalid(
                "thesis variant",
                variant_name(v),
                format!(
                    "default, unless the strategy is thesis with init-only bounds (this job: {} with {} bounds)",
                    strategy_name(self.strategy),
                    bounds_name(self.bounds)
                ),
            ));
        }
        if v.extra_generations() > 0 && self.budget_from_evaluations {
            return Err(Error::invalid(
                "thesis variant",
                variant_name(v),
                "a generation limit with generations=plus-one, not an evaluation budget (one more generation would spend more than the budget)",
            ));
        }
        if v.extra_generations() > self.generations {
            return Err(Error::invalid(
                "generations",
                self.generations,
                format!(
                    "at least {} with the thesis variant {}",
                    v.extra_generations(),
                    variant_name(v)
                ),
            ));
        }
        Ok(())
    }
}

/// A population large enough for the strategy's distinct draws, within [`MAX_POP`].
fn check_pop(strategy: Strategy, pop: u32) -> Result<()> {
    let need = strategy.draws() + 1;
    if pop < need || pop > MAX_POP {
        return Err(Error::invalid(
            "population size",
            pop,
            format!(
                "{need} ..= {MAX_POP} ({} draws {} distinct others)",
                strategy_name(strategy),
                need - 1
            ),
        ));
    }
    Ok(())
}

/// Builds a [`Job`], checking every value.
#[derive(Clone, Debug)]
pub struct JobBuilder {
    objective: Objective,
    dim: u32,
    lower: Option<Arc<[f64]>>,
    upper: Option<Arc<[f64]>>,
    strategy: Strategy,
    crossover: Crossover,
    /// `None`: init-only for the classic strategies, midpoint for the adaptive ones.
    bounds: Option<BoundPolicy>,
    f: f64,
    cr: f64,
    pop: Option<u32>,
    generations: Option<u32>,
    evaluations: Option<u64>,
    target: Option<f64>,
    seed: u64,
    stream: u32,
    precision: Precision,
    formula: Formula,
    history: bool,
    pub(crate) adaptive: crate::job::adaptive::AdaptiveOptions,
    thesis_variant: ThesisVariant,
    stops: Stops,
}

impl JobBuilder {
    /// The same initial interval in every component.
    pub fn domain(mut self, lo: f64, hi: f64) -> Self {
        // An invalid dimension is reported by `build`; do not allocate for it here.
        let n = if self.dim <= MAX_DIM {
            self.dim as usize
        } else {
            0
        };
        self.lower = Some(vec![lo; n].into());
        self.upper = Some(vec![hi; n].into());
        self
    }
    /// One initial interval per component.
    pub fn domain_box(mut self, lower: Vec<f64>, upper: Vec<f64>) -> Self {
        self.lower = Some(lower.into());
        self.upper = Some(upper.into());
        self
    }
    /// One initial interval per component, held with other jobs (nothing is copied).
    pub(crate) fn domain_shared(mut self, lower: Arc<[f64]>, upper: Arc<[f64]>) -> Self {
        self.lower = Some(lower);
        self.upper = Some(upper);
        self
    }
    pub fn strategy(mut self, s: Strategy) -> Self {
        self.strategy = s;
        self
    }
    pub fn crossover(mut self, c: Crossover) -> Self {
        self.crossover = c;
        self
    }
    pub fn bounds(mut self, b: BoundPolicy) -> Self {
        self.bounds = Some(b);
        self
    }
    pub fn f(mut self, f: f64) -> Self {
        self.f = f;
        self
    }
    pub fn cr(mut self, cr: f64) -> Self {
        self.cr = cr;
        self
    }
    pub fn pop(mut self, np: u32) -> Self {
        self.pop = Some(np);
        self
    }
    pub fn generations(mut self, g: u32) -> Self {
        self.generations = Some(g);
        self
    }
    /// An evaluation budget (Np + Np·g ≤ budget); with `generations`, the smaller wins.
    pub fn max_evaluations(mut self, e: u64) -> Self {
        self.evaluations = Some(e);
        self
    }
    pub fn target(mut self, t: f64) -> Self {
        self.target = Some(t);
        self
    }
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }
    pub fn stream(mut self, s: u32) -> Self {
        self.stream = s;
        self
    }
    pub fn precision(mut self, p: Precision) -> Self {
        self.precision = p;
        self
    }
    pub fn formula(mut self, f: Formula) -> Self {
        self.formula = f;
        self
    }
    /// Record the best value after every generation; a job with a stagnation stop
    /// records it whatever this says (the stop reads it).
    pub fn history(mut self, h: bool) -> Self {
        self.history = h;
        self
    }
    /// SciPy's `tol`: stop once the standard deviation of the population's values is at
    /// most `atol + tol·|mean|` (a finite number ≥ 0).
    pub fn tol(mut self, tol: f64) -> Self {
        self.stops.tol = Some(tol);
        self
    }
    /// SciPy's `atol`: the absolute part of the spread test of [`JobBuilder::tol`] (a
    /// finite number ≥ 0).
    pub fn atol(mut self, atol: f64) -> Self {
        self.stops.atol = Some(atol);
        self
    }
    /// Stop once the best value has not improved in this many generations (1 or more).
    pub fn stagnation(mut self, generations: u32) -> Self {
        self.stops.stagnation = Some(generations);
        self
    }
    /// Look at the stops after every generation that is a multiple of this (1 ..= 2³¹;
    /// [`crate::run::stops::DEFAULT_EVERY`] unless set): the same generations on every
    /// engine.
    pub fn check_every(mut self, every: u32) -> Self {
        self.stops.every = every;
        self
    }
    /// Every stop at once.
    pub fn stops(mut self, stops: Stops) -> Self {
        self.stops = stops;
        self
    }
    /// How the thesis strategy computes its trials (see [`ThesisVariant`]); anything
    /// but the default needs the thesis strategy with init-only bounds, and
    /// [`GenerationCount::PlusOne`](gpude_device::variant::GenerationCount::PlusOne) a generation limit rather than an evaluation budget.
    pub fn thesis_variant(mut self, v: ThesisVariant) -> Self {
        self.thesis_variant = v;
        self
    }

    /// The job, after checking every value (see [`Job::check`]).
    pub fn build(self) -> Result<Job> {
        check_dim_of(&self.objective, self.dim)?;
        let problem = match (self.lower, self.upper) {
            (Some(l), Some(u)) => {
                if l.len() != self.dim as usize {
                    return Err(Error::invalid(
                        "lower bounds",
                        format!("{} values", l.len()),
                        format!("one per component ({})", self.dim),
                    ));
                }
                Problem::of_objective(self.objective, l, u)?
            }
            _ => match &self.objective {
                Objective::Builtin(f) => Problem::new(*f, self.dim)?,
                Objective::Cec2017(_) => {
                    let (lo, hi) = (-crate::job::cec2017::BOUND, crate::job::cec2017::BOUND);
                    let d = self.dim as usize;
                    Problem::of_objective(self.objective, vec![lo; d], vec![hi; d])?
                }
                o => {
                    return Err(Error::invalid(
                        "domain",
                        "none given",
                        format!(
                            "lower and upper bounds for the objective {} (it has no usual domain)",
                            crate::error::clip(&o.name())
                        ),
                    ));
                }
            },
        };
        let dim = problem.dim();
        let pop = self.pop.unwrap_or_else(|| {
            crate::job::adaptive::default_pop(self.strategy, dim)
                .unwrap_or_else(|| (10 * dim).clamp(32, 1 << 16))
        });
        check_pop(self.strategy, pop)?;
        let mut generations = self.generations.unwrap_or(1000);
        let mut from_evals = false;
        if let Some(e) = self.evaluations {
            if e < pop as u64 {
                return Err(Error::invalid(
                    "evaluation budget",
                    e,
                    format!("at least the population size ({pop}) for the initial population"),
                ));
            }
            let g = ((e - pop as u64) / pop as u64).min(u32::MAX as u64 - 1) as u32;
            if self.generations.is_none() || g < generations {
                generations = g;
                from_evals = true;
            }
        }
        let adaptive = crate::job::adaptive::settle(
            self.strategy,
            self.crossover,
            &self.adaptive,
            dim,
            pop,
            self.evaluations,
        )?;
        if let Some(a) = &adaptive {
            // Their own loop spends the budget exactly; generations only add a limit.
            (generations, from_evals) = a.limits(pop, self.generations);
        }
        // The variant's extra generation (refused with a budget by `check`).
        generations = generations.saturating_add(self.thesis_variant.extra_generations());
        let job = Job {
            problem,
            strategy: self.strategy,
            crossover: self.crossover,
            bounds: self.bounds.unwrap_or(if adaptive.is_some() {
                BoundPolicy::Midpoint
            } else {
                BoundPolicy::InitOnly
            }),
            f: self.f,
            cr: self.cr,
            pop,
            generations,
            budget_from_evaluations: from_evals,
            target: self.target,
            seed: self.seed,
            stream: self.stream,
            precision: self.precision,
            formula: self.formula,
            // The stagnation stop reads the history.
            history: self.history || self.stops.stagnation.is_some(),
            adaptive,
            thesis_variant: self.thesis_variant,
            stops: self.stops,
        };
        job.check()?;
        Ok(job)
    }
}

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
