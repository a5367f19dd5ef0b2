//! What several subcommands share: the job flags, the backend flags, the job
//! description of batch files, and number formatting.

use super::{CliError, Result, input};
use gpude::host::config::{
    bounds_name, crossover_name, formula_name, parse_bounds, parse_crossover, parse_formula,
    parse_strategy, parse_variant, strategy_name, variant_name,
};
use gpude::run::stops::DEFAULT_EVERY;
use gpude::{Backend, Job, Mode, Objective, Precision, RunResult, Solver, SolverOptions};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The most independent runs of one job.
pub const MAX_REPETITIONS: u32 = 1 << 16;

/// The flags that describe one job.
#[derive(Debug, Clone, clap::Args)]
pub struct JobArgs {
    /// Objective function: a built-in or cec2017-f1 … cec2017-f30 (see `gpude functions`).
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present_any = ["expr", "objective_ptx"],
        conflicts_with_all = ["expr", "objective_ptx"]
    )]
    pub function: Option<String>,

    /// Objective written as an expression, e.g. 'sum(x^2 - 10*cos(2*pi*x)) + 10*D'
    /// (CPU and GPU; needs --lower and --upper; see `gpude functions`).
    #[arg(
        long,
        value_name = "EXPR",
        allow_hyphen_values = true,
        conflicts_with = "objective_ptx"
    )]
    pub expr: Option<String>,

    /// Objective compiled to PTX: a module defining gpude_objective_f32 and/or
    /// gpude_objective_f64 (GPU only; needs --lower and --upper; see
    /// examples/objective-rust).
    #[arg(long, value_name = "FILE")]
    pub objective_ptx: Option<String>,

    /// The objective's known minimum (expressions and PTX objectives), from which errors
    /// are measured [default: none: errors are the values themselves].
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub min: Option<f64>,

    /// Dimension D (may be left out when --lower/--upper list every component).
    #[arg(long, short = 'D', value_name = "D", allow_negative_numbers = true)]
    pub dim: Option<u32>,

    /// Population size Np [default: 10·D, at least 32].
    #[arg(long, value_name = "NP", allow_negative_numbers = true)]
    pub pop: Option<u32>,

    /// Most generations [default: 1000].
    #[arg(
        long,
        visible_alias = "generations",
        value_name = "G",
        allow_negative_numbers = true
    )]
    pub gens: Option<u32>,

    /// Evaluation budget (Np + Np·G ≤ budget); with --gens the smaller limit wins.
    #[arg(
        long,
        visible_alias = "max-evaluations",
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub max_evals: Option<u64>,

    /// Stop once the error (best f − minimum) is at most this.
    #[arg(long, value_name = "ERR", allow_hyphen_values = true)]
    pub target: Option<f64>,

    /// Stop once the population has converged, in SciPy's sense: the standard deviation
    /// of its values is at most atol + tol·|mean| (tol a finite number ≥ 0).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub tol: Option<f64>,

    /// The absolute part of the --tol test: stop once the standard deviation of the
    /// population's values is at most atol + tol·|mean| (a finite number ≥ 0).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    pub atol: Option<f64>,

    /// Stop once the best value has not improved in G generations (1 or more; the run
    /// then records its history).
    #[arg(long, value_name = "G", allow_negative_numbers = true)]
    pub stagnation: Option<u32>,

    /// Look at --tol, --atol and --stagnation every K generations, the same generations
    /// on the CPU and the GPU [default: 32].
    #[arg(long, value_name = "K", allow_negative_numbers = true)]
    pub check_every: Option<u32>,

    /// Mutation strategy: thesis, rand1, best1, current-to-best1, rand2, best2 (a
    /// crossover suffix is allowed: rand1bin, rand/1/exp), or the adaptive jde, jade,
    /// shade, lshade, jso (both backends; their papers' settings).
    #[arg(long, value_name = "NAME")]
    pub strategy: Option<String>,

    /// Crossover of the classic strategies: bin or exp [default: bin].
    #[arg(long, value_name = "KIND")]
    pub crossover: Option<String>,

    /// Bound handling: init-only, clip, reflect, resample or midpoint [default:
    /// init-only; midpoint for the adaptive strategies].
    #[arg(long, value_name = "POLICY")]
    pub bounds: Option<String>,

    /// Lower bound(s) of the domain: one number for every component, or one per
    /// component separated by commas [default: the function's usual domain].
    #[arg(long, value_name = "LO[,LO…]", allow_hyphen_values = true)]
    pub lower: Option<String>,

    /// Upper bound(s) of the domain, as --lower.
    #[arg(long, value_name = "HI[,HI…]", allow_hyphen_values = true)]
    pub upper: Option<String>,

    /// Scale factor F of the classic strategies, in (0, 2] [default: 0.5].
    #[arg(short = 'F', long = "f", value_name = "F", allow_hyphen_values = true)]
    pub f: Option<f64>,

    /// Crossover rate Cr, in [0, 1] [default: 0.9].
    #[arg(long, value_name = "CR", allow_hyphen_values = true)]
    pub cr: Option<f64>,

    /// Random seed [default: 0].
    #[arg(long, value_name = "SEED", allow_negative_numbers = true)]
    pub seed: Option<u64>,

    /// Arithmetic: f32 or f64 [default: f32].
    #[arg(long, value_name = "P")]
    pub precision: Option<String>,

    /// Objective formulas: exact or textbook (as printed) [default: exact].
    #[arg(long, value_name = "FORMULA")]
    pub formula: Option<String>,

    /// Alternatives to details of the thesis strategy, a comma list of key=value:
    /// indices=free|rejection, lambda=open-closed|closed-open,
    /// lambda-draw=per-component|per-individual (a deviation from the thesis),
    /// mutation=plain|fma|fma-inner|from-best, generations=gmax|plus-one
    /// [default: default, gpude's own]. Thesis strategy with init-only bounds only.
    #[arg(long, value_name = "LIST")]
    pub thesis_variant: Option<String>,
    #[command(flatten)]
    pub islands: crate::islands::IslandArgs,
}

impl JobArgs {
    /// The job description these flags give, with `repetitions` runs.
    pub fn spec(&self, repetitions: u32) -> Result<JobSpec> {
        Ok(JobSpec {
            function: self.function.clone().unwrap_or_default(),
            expr: self.expr.clone(),
            objective_ptx: self.objective_ptx.clone(),
            min: self.min,
            dim: self.dim,
            lower: self
                .lower
                .as_deref()
                .map(|s| Bound::parse("--lower", s))
                .transpose()?,
            upper: self
                .upper
                .as_deref()
                .map(|s| Bound::parse("--upper", s))
                .transpose()?,
            pop: self.pop,
            generations: self.gens,
            max_evals: self.max_evals,
            target: self.target,
            tol: self.tol,
            atol: self.atol,
            stagnation: self.stagnation,
            check_every: self.check_every,
            strategy: self.strategy.clone(),
            crossover: self.crossover.clone(),
            bounds: self.bounds.clone(),
            f: self.f,
            cr: self.cr,
            seed: self.seed,
            precision: self.precision.clone(),
            formula: self.formula.clone(),
            thesis_variant: self.thesis_variant.clone(),
            repetitions: Some(repetitions),
            ..Default::default()
        }
        .with_islands(&self.islands))
    }
}

/// The flags that choose where jobs run.
#[derive(Debug, Clone, clap::Args)]
pub struct BackendArgs {
    /// Where to run: auto (the GPU if there is one, else the CPU), cpu or cuda.
    #[arg(long, default_value = "auto", value_name = "B")]
    pub backend: String,

    /// GPU layout: auto (by the job list's cost: see the README), batch (one block per
    /// population), grid (the whole GPU, one launch per run) or steps (the whole GPU,
    /// one launch per generation). GPU only.
    #[arg(long, default_value = "auto", value_name = "M")]
    pub mode: String,

    /// GPU index [default: 0]. GPU only.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,

    /// Several GPUs: `all`, or indices such as `0,2`. The runs of a list, its
    /// archipelagos, or one archipelago's islands are shared out among them, each run
    /// with the bits one GPU gives it. GPU only.
    #[arg(long, value_name = "LIST", conflicts_with = "device")]
    pub gpus: Option<String>,

    /// CUDA streams to spread launches over, 1 ..= 128 [default: 4]. GPU only.
    #[arg(long, value_name = "N")]
    pub streams: Option<usize>,
}

/// The most CUDA streams (the library's limit).
pub use gpude::host::MAX_STREAMS;

impl BackendArgs {
    /// Opens the backend these flags name. GPU flags with `--backend cpu` are an error;
    /// when `auto` finds no GPU they are ignored with a warning on stderr.
    pub fn open(&self) -> Result<Solver> {
        let backend = Backend::parse(&self.backend)?;
        let mode = Mode::parse(&self.mode)?;
        if let Some(n) = self.streams
            && !(1..=MAX_STREAMS).contains(&n)
        {
            return Err(CliError::usage(format!(
                "--streams = {n} is not allowed: 1 ..= {MAX_STREAMS}"
            )));
        }
        let gpu_flags = self.gpu_flags();
        if backend == Backend::Cpu && !gpu_flags.is_empty() {
            return Err(CliError::usage(format!(
                "{} applies to the GPU only: leave it out with --backend cpu",
                gpu_flags.join(", ")
            )));
        }
        let gpus = match &self.gpus {
            Some(g) => gpude::Gpus::parse(g)?,
            None => gpude::Gpus::Device,
        };
        let opts = SolverOptions {
            backend,
            device: self.device.unwrap_or(0),
            streams: self.streams.unwrap_or(4),
            mode,
            gpus,
        };
        let solver = Solver::new(&opts)?;
        if solver.backend_name() == "cpu" && !gpu_flags.is_empty() {
            eprintln!(
                "warning: no GPU, running on the CPU: {} ignored",
                gpu_flags.join(", ")
            );
        }
        Ok(solver)
    }

    /// [`BackendArgs::open`] for these jobs: with `auto`, jobs whose objective the GPU
    /// kernels do not evaluate (CEC 2017 functions, callbacks) run on the CPU, with a
    /// notice. Built-in functions and expressions run on the GPU when there is one.
    pub fn open_for(&self, jobs: &[Job]) -> Result<Solver> {
        let backend = Backend::parse(&self.backend)?;
        // What only the CPU engine runs for now: objectives other than the built-ins,
        // expressions, PTX and the CEC 2017 functions (every strategy runs the others
        // on the GPU).
        let cpu_only = jobs.iter().find_map(|j| {
            let o = j.objective();
            (j.builtin().is_none()
                && o.as_expr().is_none()
                && o.ptx_code().is_none()
                && o.as_cec2017().is_none())
            .then(|| format!("the objective {}", input::clip(&o.name())))
        });
        if let (Backend::Auto, Some(what)) = (backend, cpu_only) {
            eprintln!("notice: running on the CPU: {what} runs on the CPU engine only for now");
            let cpu = BackendArgs {
                backend: "cpu".into(),
                mode: "auto".into(),
                device: None,
                gpus: None,
                streams: None,
            };
            let ignored = self.gpu_flags();
            if !ignored.is_empty() {
                eprintln!("warning: {} ignored", ignored.join(", "));
            }
            return cpu.open();
        }
        let solver = self.open()?;
        // PTX alone has nothing to run on the CPU: refuse before any work.
        if solver.backend_name() == "cpu"
            && let Some(j) = jobs.iter().find(|j| !j.objective().has_cpu_code())
        {
            return Err(CliError::usage(format!(
                "the objective {} is PTX code: it runs on the GPU only, and {}",
                input::clip(&j.objective().name()),
                match solver.fallback_reason() {
                    Some(why) => format!("there is none here ({why})"),
                    None => "--backend cpu was asked for".to_string(),
                }
            )));
        }
        Ok(solver)
    }

    /// The GPU-only flags given, as typed (`--mode grid`).
    pub(crate) fn gpu_flags(&self) -> Vec<String> {
        let mut given = Vec::new();
        if !self.mode.trim().eq_ignore_ascii_case("auto") {
            given.push(format!("--mode {}", input::clip(self.mode.trim())));
        }
        if let Some(d) = self.device {
            given.push(format!("--device {d}"));
        }
        if let Some(g) = &self.gpus {
            given.push(format!("--gpus {}", input::clip(g.trim())));
        }
        if let Some(n) = self.streams {
            given.push(format!("--streams {n}"));
        }
        given
    }
}

/// Domain bounds: one value for every component, or one per component.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bound {
    One(f64),
    Each(Vec<f64>),
}

impl Bound {
    /// Parses `v` or `v1,v2,…`.
    pub fn parse(flag: &str, s: &str) -> Result<Bound> {
        let vals = s
            .split(',')
            .map(|t| {
                let t = t.trim();
                t.parse::<f64>()
                    .map_err(|_| CliError::usage(format!("{flag}: {t:?} is not a number")))
            })
            .collect::<Result<Vec<f64>>>()?;
        Ok(match vals.as_slice() {
            [v] => Bound::One(*v),
            _ => Bound::Each(vals),
        })
    }

    fn len(&self) -> Option<usize> {
        match self {
            Bound::One(_) => None,
            Bound::Each(v) => Some(v.len()),
        }
    }

    fn expand(&self, dim: usize) -> Vec<f64> {
        match self {
            Bound::One(v) => vec![*v; dim],
            Bound::Each(v) => v.clone(),
        }
    }
}

/// One job as a batch file writes it (and as `run --json` reports the settings used).
/// Left-out settings take gpude's defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub function: String,
    /// An objective expression (instead of `function`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<String>,
    /// A PTX file defining the objective (instead of `function`; GPU only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective_ptx: Option<String>,
    /// The expression's (or PTX objective's) known minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dim: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<Bound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<Bound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pop: Option<u32>,
    #[serde(default, alias = "gens", skip_serializing_if = "Option::is_none")]
    pub generations: Option<u32>,
    #[serde(
        default,
        alias = "max_evaluations",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_evals: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// SciPy's relative tolerance of the values' spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tol: Option<f64>,
    /// SciPy's absolute tolerance of the values' spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atol: Option<f64>,
    /// Generations without an improvement of the best that end a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stagnation: Option<u32>,
    /// Generations between two looks at the stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_every: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossover: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cr: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
    /// A thesis variant (`indices=rejection,mutation=fma`, …; see `run --help`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thesis_variant: Option<String>,
    #[serde(default, alias = "runs", skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<u32>,
    // Islands and PSO (see `islands.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub islands: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_interval: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrants: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emigrants: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inertia: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c2: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossover_probability: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation_probability: Option<f64>,
}

impl JobSpec {
    /// Independent runs asked for (1 when left out).
    pub fn repetitions(&self) -> Result<u32> {
        let n = self.repetitions.unwrap_or(1);
        if n == 0 || n > MAX_REPETITIONS {
            return Err(CliError::usage(format!(
                "number of runs = {n} is not allowed: 1 ..= {MAX_REPETITIONS}"
            )));
        }
        Ok(n)
    }

    /// The validated jobs: one per repetition, streams 0, 1, … of the same seed.
    pub fn jobs(&self, history: bool) -> Result<Vec<Job>> {
        let n = self.repetitions()?;
        let first = self.builder()?.history(history).build()?;
        // Clones share the bounds: a thousand runs of a large dimension copy nothing.
        Ok((0..n).map(|s| first.clone().with_stream(s)).collect())
    }

    /// A builder with every setting given here.
    fn builder(&self) -> Result<gpude::JobBuilder> {
        let listed = self
            .lower
            .as_ref()
            .and_then(Bound::len)
            .or(self.upper.as_ref().and_then(Bound::len));
        let dim = match (self.dim, listed) {
            (Some(d), _) => d,
            (None, Some(n)) => u32::try_from(n).unwrap_or(u32::MAX),
            (None, None) => {
                return Err(CliError::usage(
                    "the dimension is missing: give dim (--dim), or the bounds of every component",
                ));
            }
        };
        let (objective, domain) = self.objective(dim)?;
        let mut b = Job::builder_for(objective, dim);
        if self.lower.is_some() || self.upper.is_some() {
            let d = dim as usize;
            let usual = |k: usize| {
                domain.map(|(lo, hi)| vec![[lo, hi][k]; d]).ok_or_else(|| {
                    CliError::usage(
                        "an expression needs both bounds: give lower and upper (--lower, --upper)",
                    )
                })
            };
            let lower = match &self.lower {
                Some(v) => v.expand(d),
                None => usual(0)?,
            };
            let upper = match &self.upper {
                Some(v) => v.expand(d),
                None => usual(1)?,
            };
            if upper.len() != d {
                return Err(CliError::usage(format!(
                    "upper bounds = {} values is not allowed: one per component ({d})",
                    upper.len()
                )));
            }
            b = b.domain_box(lower, upper);
        }
        if let Some(s) = &self.strategy {
            let (strategy, implied) = parse_strategy(s)?;
            b = b.strategy(strategy);
            if let Some(c) = implied {
                if let Some(given) = &self.crossover
                    && parse_crossover(given)? != c
                {
                    return Err(CliError::usage(format!(
                        "strategy {s:?} implies crossover {}, which conflicts with crossover {given:?}",
                        crossover_name(c)
                    )));
                }
                b = b.crossover(c);
            }
        }
        if let Some(c) = &self.crossover {
            b = b.crossover(parse_crossover(c)?);
        }
        if let Some(p) = &self.bounds {
            b = b.bounds(parse_bounds(p)?);
        }
        if let Some(p) = &self.precision {
            b = b.precision(Precision::parse(p)?);
        }
        if let Some(f) = &self.formula {
            b = b.formula(parse_formula(f)?);
        }
        if let Some(v) = &self.thesis_variant {
            b = b.thesis_variant(parse_variant(v)?);
        }
        if let Some(v) = self.pop {
            b = b.pop(v);
        }
        if let Some(v) = self.generations {
            b = b.generations(v);
        }
        if let Some(v) = self.max_evals {
            b = b.max_evaluations(v);
        }
        if let Some(v) = self.target {
            b = b.target(v);
        }
        if let Some(v) = self.tol {
            b = b.tol(v);
        }
        if let Some(v) = self.atol {
            b = b.atol(v);
        }
        if let Some(v) = self.stagnation {
            b = b.stagnation(v);
        }
        if let Some(v) = self.check_every {
            b = b.check_every(v);
        }
        if let Some(v) = self.f {
            b = b.f(v);
        }
        if let Some(v) = self.cr {
            b = b.cr(v);
        }
        if let Some(v) = self.seed {
            b = b.seed(v);
        }
        Ok(b)
    }

    /// The objective (a built-in, a CEC 2017 function or an expression) and its usual
    /// domain, if it has one.
    fn objective(&self, dim: u32) -> Result<(Objective, Option<(f64, f64)>)> {
        let name = self.function.trim();
        if let Some(path) = &self.objective_ptx {
            if !name.is_empty() || self.expr.is_some() {
                return Err(CliError::usage(
                    "give one objective: a function, an expression or a PTX file \
                     (function, expr, objective_ptx)",
                ));
            }
            if self.lower.is_none() || self.upper.is_none() {
                return Err(CliError::usage(
                    "a PTX objective needs both bounds: give lower and upper (--lower, --upper)",
                ));
            }
            let code = read_ptx_objective(std::path::Path::new(path))?;
            // The path as given names it, so that the job written back reads the file again.
            return Ok((Objective::ptx(path.clone(), self.min, code)?, None));
        }
        match &self.expr {
            Some(_) if !name.is_empty() => Err(CliError::usage(
                "give a function or an expression (function, expr), not both",
            )),
            Some(e) => {
                if self.lower.is_none() || self.upper.is_none() {
                    return Err(CliError::usage(
                        "an expression needs both bounds: give lower and upper (--lower, --upper)",
                    ));
                }
                Ok((Objective::expr(e, self.min)?, None))
            }
            None if name.is_empty() => Err(CliError::usage(
                "the objective is missing: give a function (--function) or an expression (--expr)",
            )),
            None if self.min.is_some() => Err(CliError::usage(
                "min applies to expressions and PTX objectives only: a named function's minimum is known",
            )),
            None => {
                let (o, domain) = Objective::named(name, dim)?;
                Ok((o, Some(domain)))
            }
        }
    }

    /// Every setting of `job` spelled out (reading it back gives the same job);
    /// `budget` is the evaluation budget as given, when the job's generations came
    /// from one.
    pub fn resolved(job: &Job, repetitions: u32, budget: Option<u64>) -> JobSpec {
        let (lower, upper) = match job.problem().uniform_bounds() {
            Some((lo, hi)) => (Bound::One(lo), Bound::One(hi)),
            None => (
                Bound::Each(job.lower().to_vec()),
                Bound::Each(job.upper().to_vec()),
            ),
        };
        let o = job.objective();
        let ptx = o.ptx_code().is_some();
        let (function, expr, objective_ptx) = match o.as_expr() {
            Some(e) => (String::new(), Some(e.source().to_string()), None),
            None if ptx => (String::new(), None, Some(o.name())),
            None => (o.name(), None, None),
        };
        JobSpec {
            function,
            expr,
            objective_ptx,
            min: (o.as_expr().is_some() || ptx).then(|| o.min()).flatten(),
            dim: Some(job.dim()),
            lower: Some(lower),
            upper: Some(upper),
            pop: Some(job.pop()),
            generations: (!job.budget_from_evaluations()).then_some(job.g_max()),
            max_evals: match job.adaptive() {
                Some(a) => Some(a.max_evaluations),
                None => job
                    .budget_from_evaluations()
                    .then(|| budget.unwrap_or_else(|| job.evaluations(job.generations()))),
            },
            target: job.target(),
            tol: job.stops().tol,
            atol: job.stops().atol,
            stagnation: job.stops().stagnation,
            check_every: (job.stops().any() || job.stops().every != DEFAULT_EVERY)
                .then_some(job.stops().every),
            strategy: Some(strategy_name(job.strategy()).to_string()),
            crossover: Some(crossover_name(job.crossover()).to_string()),
            bounds: Some(bounds_name(job.bounds()).to_string()),
            f: Some(job.f()),
            cr: Some(job.cr()),
            seed: Some(job.seed()),
            precision: Some(job.precision().name().to_string()),
            formula: Some(formula_name(job.formula()).to_string()),
            thesis_variant: (!job.thesis_variant().is_default())
                .then(|| variant_name(job.thesis_variant())),
            repetitions: Some(repetitions),
            ..Default::default()
        }
    }
}

/// The first run that failed (its best value or point is not finite): its index and
/// the error to report (exit code 1).
pub fn failed_run(results: &[RunResult]) -> Option<(usize, CliError)> {
    let k = results.iter().position(|r| !r.termination.is_success())?;
    let e = match results[k].clone().ok() {
        Err(e) => CliError::from(e),
        Ok(_) => CliError::runtime("the run failed"),
    };
    Some((k, e))
}

/// A short description of a job's algorithm: `rand1/bin, F = 0.5, Cr = 0.9, clip`.
pub fn describe_strategy(job: &Job) -> String {
    let s = strategy_name(job.strategy());
    let b = bounds_name(job.bounds());
    if let Some(a) = job.adaptive() {
        format!("{}, bounds {b}", a.describe(job.strategy()))
    } else if job.strategy().crosses() {
        format!(
            "{s}/{}, F = {}, Cr = {}, bounds {b}",
            crossover_name(job.crossover()),
            job.f(),
            job.cr()
        )
    } else if job.thesis_variant().is_default() {
        format!("{s}, bounds {b}")
    } else {
        format!(
            "{s}, bounds {b}, variant {}",
            variant_name(job.thesis_variant())
        )
    }
}

/// The convergence stops of a job, when it has any: `tol 0.01, atol 0, stagnation 200,
/// looked at every 32 generations`.
pub fn describe_stops(job: &Job) -> Option<String> {
    let s = job.stops();
    if !s.any() {
        return None;
    }
    let mut parts = Vec::new();
    if s.spread() {
        parts.push(format!("tol {}", num(s.tol.unwrap_or(0.0))));
        parts.push(format!("atol {}", num(s.atol.unwrap_or(0.0))));
    }
    if let Some(g) = s.stagnation {
        parts.push(format!("stagnation {g}"));
    }
    parts.push(format!("looked at every {} generations", s.every));
    Some(parts.join(", "))
}

/// The domain of a job: `[-600, 600]^30` or the first components.
pub fn describe_domain(job: &Job) -> String {
    match job.problem().uniform_bounds() {
        Some((lo, hi)) => format!("[{lo}, {hi}]^{}", job.dim()),
        None => {
            let parts: Vec<String> = job
                .lower()
                .iter()
                .zip(job.upper())
                .take(3)
                .map(|(l, u)| format!("[{l}, {u}]"))
                .collect();
            let more = if job.dim() > 3 { " × …" } else { "" };
            format!("{}{more}", parts.join(" × "))
        }
    }
}

/// Statistics of the errors of several runs.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub runs: usize,
    pub mean_error: f64,
    pub median_error: f64,
    pub best_error: f64,
    pub worst_error: f64,
    /// Runs whose error is at most `threshold`.
    pub successes: usize,
    pub threshold: f64,
}

impl Summary {
    pub fn of(errors: &[f64], threshold: f64) -> Summary {
        let s = crate::stats::Errors::of(errors, threshold);
        Summary {
            runs: s.runs,
            mean_error: s.mean,
            median_error: s.median,
            best_error: s.best,
            worst_error: s.worst,
            successes: s.successes,
            threshold,
        }
    }

    /// Two lines for people.
    pub fn describe(&self) -> String {
        format!(
            "error over {} runs: mean {}, median {}, best {}, worst {}\nsuccesses: {}/{} with error ≤ {}\n",
            self.runs,
            num(self.mean_error),
            num(self.median_error),
            num(self.best_error),
            num(self.worst_error),
            self.successes,
            self.runs,
            num(self.threshold)
        )
    }
}

/// Does the search's own error lead to another conclusion than the verified one: one
/// meets the success threshold (error ≤ `threshold`) and the other does not? Errors
/// that differ by more than rounding ([`gpude::RunResult::errors_disagree`]) but fall
/// on the same side of it change nothing that is reported.
pub fn misleading(r: &gpude::RunResult, threshold: f64) -> bool {
    r.errors_disagree && ((r.error <= threshold) != (r.verified_error <= threshold))
}

/// A run's verified error, with `*` when the search's own error is [`misleading`] at
/// `threshold`.
pub fn verified(r: &gpude::RunResult, threshold: f64) -> String {
    format!(
        "{}{}",
        num(r.verified_error),
        if misleading(r, threshold) { " *" } else { "" }
    )
}

/// The legend of the `*` of [`verified`], when any result carries one: each result with
/// its success threshold.
pub fn verified_legend<'a>(
    results: impl IntoIterator<Item = (&'a gpude::RunResult, f64)>,
) -> String {
    let marked: Vec<f64> = results
        .into_iter()
        .filter(|(r, t)| misleading(r, *t))
        .map(|(_, t)| t)
        .collect();
    let Some(&first) = marked.first() else {
        return String::new();
    };
    let threshold = if marked.iter().all(|&t| t == first) {
        num(first)
    } else {
        "its job's threshold".to_string()
    };
    format!(
        "* the search's error and the verified one (f64, exact formulas) disagree about \
         success (error ≤ {threshold}): the verified one counts\n"
    )
}

/// A number in at most 7 significant digits, in scientific notation when very small
/// or large.
pub fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e7).contains(&a) {
        let digits = 6 - a.log10().floor() as i32;
        let s = format!("{v:.*}", digits.max(0) as usize);
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{v:.6e}");
        match s.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => s,
        }
    }
}

/// A number in the fewest digits that read back exactly: plain notation for ordinary
/// magnitudes, scientific for tiny or huge ones.
pub fn exact<T: Copy + fmt::Display + fmt::LowerExp + Into<f64>>(v: T) -> String {
    let a = v.into().abs();
    if a == 0.0 || !a.is_finite() || (1e-5..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A duration in ms below a second, else in s.
/// The layouts that ran `results`: `batch_pipelined, 132 runs per launch`, or each
/// layout with its runs where they differ.
pub fn describe_layouts(results: &[gpude::RunResult]) -> String {
    let mut kinds: Vec<(gpude::RunLayout, u32, usize)> = Vec::new();
    for r in results {
        match kinds
            .iter_mut()
            .find(|(l, n, _)| *l == r.layout && *n == r.launch_runs)
        {
            Some(k) => k.2 += 1,
            None => kinds.push((r.layout, r.launch_runs, 1)),
        }
    }
    let one = |l: gpude::RunLayout, n: u32| match n {
        1 => format!("{}, one run per launch", l.name()),
        n => format!("{}, {n} runs per launch", l.name()),
    };
    match kinds.as_slice() {
        [] => "none".into(),
        [(l, n, _)] => one(*l, *n),
        _ => kinds
            .iter()
            .map(|&(l, n, runs)| format!("{runs} runs in {}", one(l, n)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

pub fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

/// Formats rows as columns separated by two spaces; the first row is the header.
/// Columns listed in `left` are left-aligned, the others right-aligned.
pub fn table(rows: &[Vec<String>], left: &[usize]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = width[c] - cell.chars().count();
            if left.contains(&c) {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Serializes a value as pretty JSON with a final newline.
pub fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| CliError::runtime(format!("writing JSON: {e}")))
}

/// The PTX objective module in `file` (at most [`MAX_PTX_BYTES`] of ASCII text), checked.
///
/// [`MAX_PTX_BYTES`]: gpude::host::ptx_objective::MAX_PTX_BYTES
pub(crate) fn read_ptx_objective(
    file: &std::path::Path,
) -> Result<gpude::host::ptx_objective::PtxCode> {
    let bytes = input::read_bytes(
        file,
        gpude::host::ptx_objective::MAX_PTX_BYTES as u64,
        "a PTX objective",
    )?;
    let shown = input::name(file);
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::usage(format!(
            "{shown} is not PTX text (a byte that is not ASCII at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    gpude::host::ptx_objective::PtxCode::parse(text)
        .map_err(|e| CliError::usage(format!("{shown}: {e}")))
}
