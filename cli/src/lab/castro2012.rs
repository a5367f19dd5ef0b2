//! `gpude reproduce castro2012`: seed 001's experiment (Castro Liera et al. 2012) —
//! PSO on 21 islands (swarms) of 128 particles with ring migration of the best every
//! 1 % of the generations — rerun beside gpude's DE on the same islands, on Rastrigin,
//! Ackley, Schwefel 1.2 and Weierstrass at D = 30.
//!
//! Every case is an [`Archipelago`] run through [`Solver::run_archipelago`], so the
//! engine that runs it is the solver's: the CPU engine now, the GPU's once it runs
//! islands.

use crate::common::{self, num};
use crate::stats::Errors;
use crate::{CliError, Result};
use gpude::host::config::strategy_name;
use gpude::{
    Algorithm, Archipelago, BoundPolicy, Function, FunctionInfo, Job, Precision, Pso, Solver,
    Strategy,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

/// The seed's published numbers.
pub mod published {
    use gpude::Function;

    /// Islands (CUDA blocks) and particles per island of the seed's PSO.
    pub const ISLANDS: u32 = 21;
    pub const PARTICLES: u32 = 128;
    pub const DIM: u32 = 30;
    /// Runs ("muestras") per case in the seed.
    pub const RUNS: u32 = 1500;

    /// One row of the seed's tables: generations, success in %, time in s.
    #[derive(Clone, Copy, Debug)]
    pub struct Row {
        pub generations: u32,
        pub success_pct: Option<f64>,
        pub time_s: f64,
    }

    /// One function of the experiment.
    #[derive(Clone, Copy, Debug)]
    pub struct Case {
        pub function: Function,
        /// The seed's search interval (CEC'05).
        pub domain: (f64, f64),
        /// The largest error counted as a success ("ErrMax").
        pub target: f64,
        /// PSO (table 1): the row with 100 % success, then the shorter one.
        pub pso: [Row; 2],
        /// The GA (table 2), for reference (its operators are unstated; not rerun).
        pub ga: Row,
    }

    const fn row(generations: u32, success_pct: Option<f64>, time_s: f64) -> Row {
        Row {
            generations,
            success_pct,
            time_s,
        }
    }

    /// Tables 1 and 2 of the seed, in its order.
    pub const CASES: [Case; 4] = [
        Case {
            function: Function::Ackley,
            domain: (-32.0, 32.0),
            target: 2e-6,
            pso: [row(13000, Some(100.0), 1.02), row(12000, Some(99.93), 0.95)],
            ga: row(55000, Some(100.0), 22.99),
        },
        Case {
            function: Function::Rastrigin,
            domain: (-5.0, 5.0),
            target: 1e-6,
            pso: [row(76000, Some(100.0), 5.90), row(74000, Some(99.60), 5.75)],
            ga: row(8000, Some(100.0), 4.33),
        },
        Case {
            function: Function::Schwefel12,
            domain: (-100.0, 100.0),
            target: 1e-6,
            pso: [row(42000, Some(100.0), 5.8), row(41000, Some(99.80), 5.24)],
            ga: row(20000, None, 46.59),
        },
        Case {
            function: Function::Weierstrass,
            domain: (-0.5, 0.5),
            target: 5.7e-6,
            pso: [row(3100, Some(100.0), 5.53), row(3000, Some(99.20), 5.37)],
            ga: row(6000, None, 320.68),
        },
    ];
}

/// Runs per case in the quick mode unless given.
pub const QUICK_RUNS: u32 = 2;
/// Runs per case of the full mode unless given (the seed ran 1500).
pub const FULL_RUNS: u32 = 10;

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub runs: u32,
    pub quick: bool,
    pub seed: u64,
    pub precision: Precision,
    pub functions: Vec<Function>,
    /// Run gpude's DE islands beside PSO.
    pub de: bool,
}

impl Options {
    /// Islands, particles per island, dimension.
    pub fn sizes(&self) -> (u32, u32, u32) {
        if self.quick {
            (3, 16, 10)
        } else {
            (published::ISLANDS, published::PARTICLES, published::DIM)
        }
    }

    /// The generation limit of a case: the seed's (the 100 % row), ÷ 100 when quick.
    pub fn g_max(&self, c: &published::Case) -> u32 {
        let g = c.pso[0].generations;
        if self.quick { (g / 100).max(20) } else { g }
    }

    /// Parses a comma list of function names (of the four).
    pub fn parse_functions(list: &str) -> Result<Vec<Function>> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let f = FunctionInfo::parse(name)?.function;
            if !published::CASES.iter().any(|c| c.function == f) {
                return Err(CliError::usage(format!(
                    "{name} is not in the experiment; choose from ackley, rastrigin, schwefel12, weierstrass"
                )));
            }
            if !out.contains(&f) {
                out.push(f);
            }
        }
        if out.is_empty() {
            return Err(CliError::usage("--functions lists no function"));
        }
        Ok(out)
    }
}

/// The algorithm of one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Seed 001's PSO.
    Pso,
    /// gpude's DE (the thesis strategy) on the same islands.
    De,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Pso => "PSO",
            Family::De => "DE (thesis)",
        }
    }
}

/// The archipelago of one run of a case: run `r` uses streams `r·N … r·N + N − 1`.
pub fn archipelago(
    o: &Options,
    c: &published::Case,
    family: Family,
    run: u32,
) -> gpude::Result<Archipelago> {
    let (islands, np, dim) = o.sizes();
    let g_max = o.g_max(c);
    let job = Job::builder(c.function, dim)
        .domain(c.domain.0, c.domain.1)
        .pop(np)
        .generations(g_max)
        .target(c.target)
        .bounds(BoundPolicy::Clip)
        .strategy(Strategy::Thesis)
        .precision(o.precision)
        .seed(o.seed)
        .stream(run)
        .build()?;
    let algorithm = match family {
        Family::Pso => Algorithm::Pso(Pso::default()),
        Family::De => Algorithm::De,
    };
    Archipelago::builder(job, islands)
        .algorithm(algorithm)
        .interval((g_max / 100).max(1))
        .migrants(1)
        .build()
}

/// One run's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub error: f64,
    pub generations: u32,
    pub success: bool,
    pub seconds: f64,
}

/// The outcome of one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub function: &'static str,
    pub family: Family,
    pub islands: u32,
    pub particles: u32,
    pub dim: u32,
    pub g_max: u32,
    pub interval: u32,
    pub target: f64,
    pub runs: Vec<Run>,
    pub success_pct: f64,
    pub mean_error: f64,
    /// Mean generations of the successful runs (each stops at the target).
    pub mean_generations_to_target: Option<f64>,
    pub mean_seconds: f64,
}

/// Runs one case.
pub fn run_case(
    solver: &Solver,
    o: &Options,
    c: &published::Case,
    family: Family,
) -> Result<CaseResult> {
    let mut runs = Vec::with_capacity(o.runs as usize);
    let first = archipelago(o, c, family, 0)?;
    for r in 0..o.runs {
        let a = archipelago(o, c, family, r)?;
        let t = Instant::now();
        let res = solver.run_archipelago(&a, None)?;
        let seconds = t.elapsed().as_secs_f64();
        runs.push(Run {
            error: res.overall.error,
            generations: res.overall.generations,
            success: res.overall.error <= c.target,
            seconds,
        });
    }
    let errors: Vec<f64> = runs.iter().map(|r| r.error).collect();
    let stats = Errors::of(&errors, c.target);
    let hits: Vec<f64> = runs
        .iter()
        .filter(|r| r.success)
        .map(|r| r.generations as f64)
        .collect();
    let n = runs.len().max(1) as f64;
    Ok(CaseResult {
        function: FunctionInfo::of(c.function).name,
        family,
        islands: first.islands(),
        particles: first.template().pop(),
        dim: first.template().dim(),
        g_max: first.template().generations(),
        interval: first.interval(),
        target: c.target,
        success_pct: 100.0 * stats.successes as f64 / n,
        mean_error: stats.mean,
        mean_generations_to_target: (!hits.is_empty())
            .then(|| hits.iter().sum::<f64>() / hits.len() as f64),
        mean_seconds: runs.iter().map(|r| r.seconds).sum::<f64>() / n,
        runs,
    })
}

/// Every case of the options, in the seed's order, PSO then DE for each function.
pub fn cases(o: &Options) -> Vec<(&'static published::Case, Family)> {
    let mut out = Vec::new();
    for c in published::CASES.iter() {
        if !o.functions.contains(&c.function) {
            continue;
        }
        out.push((c, Family::Pso));
        if o.de {
            out.push((c, Family::De));
        }
    }
    out
}

fn case_of(f: &str) -> &'static published::Case {
    published::CASES
        .iter()
        .find(|c| FunctionInfo::of(c.function).name == f)
        .expect("every result is one of the cases")
}

/// The report in Markdown: the table beside the seed's and what differs.
pub fn report(o: &Options, results: &[CaseResult], backend: &str, command: &str) -> String {
    let mut s = String::new();
    let (islands, np, dim) = o.sizes();
    let _ = writeln!(s, "# Seed 001 rerun (Castro Liera et al. 2012)\n");
    let _ = writeln!(s, "Command: `{command}`  ");
    let _ = writeln!(
        s,
        "Engine: {backend}; {} runs per case (the seed: {}); seed {}; {}; {islands} islands × {np} particles, D = {dim}.{}\n",
        o.runs,
        published::RUNS,
        o.seed,
        o.precision.name(),
        if o.quick {
            " Quick mode: small sizes and generation limits ÷ 100; the seed's numbers are for its full sizes."
        } else {
            ""
        }
    );
    let mut rows = vec![
        [
            "function",
            "algorithm",
            "g_max",
            "target",
            "success",
            "gens to target",
            "time/run",
            "mean error",
            "seed: gens / success / time",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for r in results {
        let c = case_of(r.function);
        let seed = match r.family {
            Family::Pso => c
                .pso
                .iter()
                .map(|row| {
                    format!(
                        "{} / {} / {} s",
                        row.generations,
                        pct(row.success_pct),
                        row.time_s
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            Family::De => format!(
                "GA: {} / {} / {} s",
                c.ga.generations,
                pct(c.ga.success_pct),
                c.ga.time_s
            ),
        };
        rows.push(vec![
            r.function.to_string(),
            r.family.name().to_string(),
            r.g_max.to_string(),
            num(r.target),
            format!("{:.1} %", r.success_pct),
            r.mean_generations_to_target
                .map_or("—".into(), |g| format!("{g:.0}")),
            common::duration(std::time::Duration::from_secs_f64(r.mean_seconds)),
            num(r.mean_error),
            seed,
        ]);
    }
    s.push_str(&markdown(&rows));
    let _ = writeln!(
        s,
        "\n\"gens to target\" is the mean generation at which the successful runs reached the target; \
a run stops there, so \"time/run\" is the time to the target (or to g_max). The seed ran every \
run for g_max generations and reports the success rate and time at two generation limits. \
The DE rows are gpude's DE ({} strategy, clip bounds) on the same islands and migration; the seed's \
other algorithm, a GA whose operators it leaves unstated, is shown for reference only.\n",
        strategy_name(Strategy::Thesis)
    );
    s.push_str(DIFFERENCES);
    s
}

/// What differs from the seed's experiment.
const DIFFERENCES: &str = "## What differs from the seed\n\n\
- Hardware: the seed ran CUDA on a GeForce GTX 460 (one block per swarm); this run is gpude's \
engine named above (the CPU engine: rayon over the cores of the machine). Times are not comparable \
across the two; the generation counts and success rates are.\n\
- Runs: the seed ran 1500 runs per case; this report states its own number. With few runs a \
success rate of 100 % only bounds the failure rate loosely.\n\
- Stopping: runs stop at the target; the seed ran the full generation budget.\n\
- Functions: the seed names the CEC'05 versions (shifted) but prints the unshifted formulas; gpude \
uses the unshifted forms, optimum at the origin (Weierstrass a = 0.5, b = 3, k_max = 20). Domains \
are the seed's: Rastrigin [−5, 5], Ackley [−32, 32], Schwefel 1.2 [−100, 100], Weierstrass [−0.5, 0.5].\n\
- Arithmetic: the precision named above everywhere (the seed stored f32 and evaluated Weierstrass \
and Schwefel 1.2 in f64).\n\
- Choices the seed leaves open: initial velocities uniform in ±½ the domain width; velocities \
clamped to ± the domain width; positions clipped into the domain; r1, r2 drawn per component; \
the migrant replaces the receiving swarm's worst personal best (the particle takes the migrant as \
its position and personal best, keeping its velocity); migration after every 1 % of g_max \
(at least every generation), ring k ← k + 1; the swarm's best is updated once per generation \
(synchronous), where the seed's kernel may update it as particles finish.\n\
- Success thresholds as read from the seed's tables: 2e-6 (Ackley), 1e-6 (Rastrigin, \
Schwefel 1.2), 5.7e-6 (Weierstrass).\n";

fn pct(p: Option<f64>) -> String {
    p.map_or("no success".into(), |v| format!("{v} %"))
}

fn markdown(rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(s, "| {} |", r.join(" | "));
        if i == 0 {
            let _ = writeln!(s, "|{}", " --- |".repeat(r.len()));
        }
    }
    s
}

/// Writes REPORT.md and runs.json into `dir`.
pub fn write(dir: &Path, report: &str, results: &[CaseResult]) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create the folder {}: {e}", dir.display())))?;
    let io = |e: std::io::Error| CliError::runtime(format!("writing {}: {e}", dir.display()));
    std::fs::write(dir.join("REPORT.md"), report).map_err(io)?;
    std::fs::write(dir.join("runs.json"), common::to_json(&results)?).map_err(io)?;
    Ok(())
}
