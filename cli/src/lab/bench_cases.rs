//! Benchmarks of the engines on the thesis variant (Griewank, D = 128 unless stated).
//! The cases marked `expr` run the same function written as an expression
//! (`gpude::expr::builtins::expression`), which the GPU links into the external kernels:
//! each beside its built-in case, so that the two can be compared. The case marked `ptx`
//! runs the example objective crate's Rosenbrock (`examples/objective-rust`, compiled to
//! PTX and linked in the same way) beside the built-in and the expression; it is listed
//! when its PTX file is found ([`example_ptx`]). The module defines the objective twice,
//! whole and separable (see `gpude::host::ptx_objective`): the `ptx` cases run the whole
//! form (the separable one left out of the module), the `ptx sep` cases the separable
//! form, which the GPU evaluates in registers as it does the built-ins.
//!
//! The cases named `cli` time the command line's own path instead of the kernels
//! alone: the job list goes to `CudaEngine::run_entries` in the `auto` mode, under a
//! watch as `gpude run` sets it (an observer, the stop flag), so that the layout
//! `auto` picks and the control block's cost are in the time.
//!
//! Each case is timed at two generation counts, G/5 and G, median of `repeats` runs
//! each; the marginal cost per generation `(t(G) − t(G/5)) / (0.8 G)` leaves out the
//! fixed costs (allocation, upload, initial population, read-back), which are reported
//! apart as `fixed_ms`. One warm-up run per case comes first.

use crate::stats::median;
use gpude::{BatchKernel, Job, Mode, Objective, Precision, Result, RunResult, cpu};
use serde::Serialize;
use std::time::Instant;

/// One benchmark case.
#[derive(Clone, Debug, Serialize)]
pub struct Case {
    pub name: String,
    pub backend: &'static str,
    pub mode: &'static str,
    pub function: &'static str,
    /// The function written as an expression instead of the built-in.
    pub expression: bool,
    /// The example objective crate's PTX instead of the built-in (Rosenbrock).
    pub ptx: bool,
    /// With `ptx`: its separable form (else its whole-vector form only).
    pub separable: bool,
    pub dim: u32,
    pub pop: u32,
    /// The batch kernel a `batch` case forces (`gpude::BatchKernel`): `shared` and
    /// `pipelined` for the cases named so, `global` for the other batch cases (the kernel of the earlier
    /// measurements), `auto` for the other modes.
    pub batch_kernel: &'static str,
    /// The cap on the resident kernel's spare rows (`CudaEngine::set_spare_rows_cap`):
    /// 0 for the cases named `spare=0`, none (as many as fit) for the others.
    pub spare_rows: Option<u32>,
    /// Populations evolved at once.
    pub populations: u32,
    /// The strategy: `thesis` (the thesis variant), or `jso` for the cases named so
    /// (the adaptive kernels, a budget of 10 000·D evaluations per population).
    pub strategy: &'static str,
    pub generations: u32,
    /// The evaluation budget: `None` for the job's default (Np·(G + 1) for the
    /// classic strategies, 10 000·D for the adaptive ones), else this many.
    pub max_evaluations: Option<u64>,
    pub precision: &'static str,
    /// Mode `islands`: the islands of one archipelago (each of Np), the generations
    /// between migration events (more than the generations: none), and the algorithm
    /// (`de`: the strategy's DE, `pso`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub islands: Option<IslandCase>,
}

/// An archipelago case's settings (see [`Case::islands`]).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct IslandCase {
    pub islands: u32,
    pub interval: u32,
    pub algorithm: &'static str,
}

/// Its measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    #[serde(flatten)]
    pub case: Case,
    /// Marginal wall time per generation, median (µs).
    pub us_per_gen: f64,
    /// populations · Np · D · generations per second.
    pub element_gens_per_s: f64,
    /// Fixed cost of a run (ms), from the same fit.
    pub fixed_ms: f64,
    /// Median wall times at G/5 and G (ms).
    pub t_short_ms: f64,
    pub t_long_ms: f64,
    pub repeats: usize,
    /// Median best error at G as the search computed it (its precision and formulas;
    /// one population; sanity, not speed).
    pub final_error: f64,
    /// Median of the same runs' verified errors (the best point re-evaluated in f64
    /// with the exact formulas).
    pub final_verified_error: f64,
    /// The layout that ran the first population, and how many runs shared its launch.
    pub layout: &'static str,
    pub launch_runs: u32,
}

/// The standard cases of `gpude bench` (GPU cases only when `gpu` is given).
pub fn standard_cases(gpu: bool, quick: bool) -> Vec<Case> {
    // The generations of a GPU case: `n`, or a tenth of it (at least 10) when quick.
    let g = |n: u32| if quick { (n / 10).max(10) } else { n };
    // The generations of a CPU case: `full`, or `short` when quick.
    let cpu = |full: u32, short: u32| if quick { short } else { full };
    let case = |name: &str, backend, mode, pop, pops, gens, prec: Precision| Case {
        name: name.into(),
        backend,
        mode,
        function: if name.contains("sphere") {
            "sphere"
        } else if name.contains("rosenbrock") {
            "rosenbrock"
        } else {
            "griewank"
        },
        expression: name.contains("expr"),
        ptx: name.contains("ptx"),
        separable: name.contains("ptx sep"),
        dim: if name.contains("D=30") { 30 } else { 128 },
        pop,
        batch_kernel: match mode {
            "batch" if name.contains("shared") => "shared",
            "batch" if name.contains("pipelined") => "pipelined",
            "batch" => "global",
            _ => "auto",
        },
        spare_rows: name.contains("spare=0").then_some(0),
        populations: pops,
        strategy: if name.starts_with("jso") {
            "jso"
        } else {
            "thesis"
        },
        generations: gens,
        max_evaluations: None,
        precision: prec.name(),
        islands: None,
    };
    use Precision::{F32, F64};
    // (name, backend, mode, Np, populations, generations, precision)
    #[rustfmt::skip]
    let table: &[(&str, &'static str, &'static str, u32, u32, u32, Precision)] = &[
        ("one pop Np=2048 (grid)",                    "cuda", "grid",  2048,  1,   g(2000),     F32),
        ("one pop Np=2048 (block)",                   "cuda", "batch", 2048,  1,   g(500),      F32),
        ("one pop Np=2048 (block) pipelined",         "cuda", "batch", 2048,  1,   g(500),      F32),
        ("one pop Np=2048 (block) expr",              "cuda", "batch", 2048,  1,   g(500),      F32),
        ("one pop Np=8192 (grid)",                    "cuda", "grid",  8192,  1,   g(2000),     F32),
        ("one pop Np=8192 (grid) expr",               "cuda", "grid",  8192,  1,   g(2000),     F32),
        ("one pop Np=8192 (steps)",                   "cuda", "steps", 8192,  1,   g(2000),     F32),
        ("one pop Np=65536 (grid)",                   "cuda", "grid",  65536, 1,   g(500),      F32),
        ("batch 132 x 2048",                          "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 expr",                     "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 sphere",                   "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 sphere expr",              "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 rosenbrock",               "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 rosenbrock expr",          "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 rosenbrock ptx",           "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 rosenbrock ptx sep",       "cuda", "batch", 2048,  132, g(200),      F32),
        ("one pop Np=8192 (grid) rosenbrock",         "cuda", "grid",  8192,  1,   g(2000),     F32),
        ("one pop Np=8192 (grid) rosenbrock ptx sep", "cuda", "grid",  8192,  1,   g(2000),     F32),
        ("batch 528 x 256",                           "cuda", "batch", 256,   528, g(500),      F32),
        ("batch 132 x 2048 pipelined",                "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 sphere pipelined",         "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 132 x 2048 rosenbrock pipelined",     "cuda", "batch", 2048,  132, g(200),      F32),
        ("batch 528 x 256 pipelined",                 "cuda", "batch", 256,   528, g(500),      F32),
        ("batch 528 x 256 shared",                    "cuda", "batch", 256,   528, g(500),      F32),
        ("batch 528 x 256 shared spare=0",            "cuda", "batch", 256,   528, g(500),      F32),
        ("batch 528 x 300 D=30",                      "cuda", "batch", 300,   528, g(1000),     F32),
        ("batch 528 x 300 D=30 shared",               "cuda", "batch", 300,   528, g(1000),     F32),
        ("batch 528 x 300 D=30 pipelined",            "cuda", "batch", 300,   528, g(1000),     F32),
        ("one pop Np=8192 (grid) f64",                "cuda", "grid",  8192,  1,   g(1000),     F64),
        ("batch 132 x 2048 f64",                      "cuda", "batch", 2048,  132, g(100),      F64),
        ("batch 132 x 2048 f64 pipelined",            "cuda", "batch", 2048,  132, g(100),      F64),
        ("batch 132 x 2048 f64 expr",                 "cuda", "batch", 2048,  132, g(100),      F64),
        ("one pop Np=2048 (grid) f64",                "cuda", "grid",  2048,  1,   g(1000),     F64),
        ("batch 528 x 2048",                          "cuda", "batch", 2048,  528, g(100),      F32),
        ("batch 528 x 2048 pipelined",                "cuda", "batch", 2048,  528, g(100),      F32),
        ("batch 528 x 2048 f64",                      "cuda", "batch", 2048,  528, g(50),       F64),
        ("cli 1 x 2048",                              "cuda", "cli",   2048,  1,   g(2000),     F32),
        ("cli 132 x 2048",                            "cuda", "cli",   2048,  132, g(200),      F32),
        ("cli 528 x 2048",                            "cuda", "cli",   2048,  528, g(100),      F32),
        ("cli 1 x 8192",                              "cuda", "cli",   8192,  1,   g(2000),     F32),
        ("cli 528 x 256",                             "cuda", "cli",   256,   528, g(500),      F32),
        ("cli 1 x 2048 f64",                          "cuda", "cli",   2048,  1,   g(1000),     F64),
        ("cli 132 x 2048 f64",                        "cuda", "cli",   2048,  132, g(100),      F64),
        ("cli 528 x 2048 f64",                        "cuda", "cli",   2048,  528, g(50),       F64),
        ("cli 1 x 8192 f64",                          "cuda", "cli",   8192,  1,   g(1000),     F64),
        ("jso batch 132 x 256 D=30",                  "cuda", "batch", 256,   132, g(200),      F32),
        ("jso batch 132 x 256 D=30 expr",             "cuda", "batch", 256,   132, g(200),      F32),
        ("cpu Np=2048",                               "cpu",  "cpu",   2048,  1,   cpu(50, 10), F32),
        ("cpu Np=8192",                               "cpu",  "cpu",   8192,  1,   cpu(20, 5),  F32),
        ("cpu Np=8192 f64",                           "cpu",  "cpu",   8192,  1,   cpu(10, 5),  F64),
        ("cpu expr Np=2048",                          "cpu",  "cpu",   2048,  1,   cpu(50, 10), F32),
    ];
    let mut v = Vec::new();
    for &(name, backend, mode, pop, pops, gens, prec) in table {
        if backend == "cuda" && !gpu || name.contains("ptx") && example_ptx().is_none() {
            continue;
        }
        v.push(case(name, backend, mode, pop, pops, gens, prec));
    }
    if gpu {
        v.extend(adaptive_cases(quick));
        v.extend(island_cases(quick));
    }
    v
}

/// Archipelagos on the GPU beside the same populations without migration (Rastrigin,
/// D = 30, f32): DE (the thesis strategy) on 132 islands of 2 048 with ring migration
/// of the best every 10 generations (1 % of 1 000), the same islands with no event, and
/// the same populations as a plain batch; PSO on Castro Liera et al.'s 21 × 128 and on
/// 132 × 1 024, with and without migration.
pub fn island_cases(quick: bool) -> Vec<Case> {
    let gens = if quick { 100 } else { 1000 };
    // (name, Np, islands, interval or 0 for none, algorithm; 0 islands: a plain batch)
    #[rustfmt::skip]
    let table: &[(&str, u32, u32, u32, &'static str)] = &[
        ("islands de 132 x 2048 D=30 ring/10",    2048, 132, 10, "de"),
        ("islands de 132 x 2048 D=30 no events",  2048, 132, 0,  "de"),
        ("batch 132 x 2048 D=30 rastrigin",       2048, 0,   0,  "de"),
        ("islands pso 21 x 128 D=30 ring/10",     128,  21,  10, "pso"),
        ("islands pso 132 x 1024 D=30 ring/10",   1024, 132, 10, "pso"),
        ("islands pso 132 x 1024 D=30 no events", 1024, 132, 0,  "pso"),
    ];
    table
        .iter()
        .map(|&(name, pop, islands, interval, algorithm)| Case {
            name: name.into(),
            backend: "cuda",
            mode: if islands > 0 { "islands" } else { "batch" },
            function: "rastrigin",
            expression: false,
            ptx: false,
            separable: false,
            dim: 30,
            pop,
            batch_kernel: "auto",
            spare_rows: None,
            populations: if islands > 0 { 1 } else { 132 },
            strategy: "thesis",
            generations: gens,
            max_evaluations: None,
            precision: Precision::F32.name(),
            islands: (islands > 0).then_some(IslandCase {
                islands,
                interval: if interval == 0 { u32::MAX } else { interval },
                algorithm,
            }),
        })
        .collect()
}

/// The adaptive strategies beside the classic rand/1/bin: one population of Rastrigin,
/// D = 30, f32, at Np = 100, 1 000 and 10 000, in the grid layout (`grid`) and the
/// batch layout's one block (`block`). Every case's budget is its long timed run's
/// generations (`Np · (G + 1)` evaluations). L-SHADE and jSO shrink their population
/// over that budget: their marginal cost is the mean generation of the last four fifths
/// of that run, whose populations are smaller than Np.
pub fn adaptive_cases(quick: bool) -> Vec<Case> {
    let mut v = Vec::new();
    for np in [100u32, 1000, 10000] {
        let full = match np {
            100 => 1000,
            1000 => 500,
            _ => 200,
        };
        let gens = if quick { (full / 10).max(10) } else { full };
        for (layout, mode) in [("grid", "grid"), ("block", "batch")] {
            for strategy in ["rand1", "jde", "jade", "shade", "lshade", "jso"] {
                v.push(Case {
                    name: format!("{strategy} Np={np} D=30 rastrigin ({layout})"),
                    backend: "cuda",
                    mode,
                    function: "rastrigin",
                    expression: false,
                    ptx: false,
                    separable: false,
                    dim: 30,
                    pop: np,
                    batch_kernel: if mode == "batch" { "global" } else { "auto" },
                    spare_rows: None,
                    populations: 1,
                    strategy,
                    generations: gens,
                    // Every generation of the long timed run runs (the adaptive
                    // strategies' default budget, CEC's 10 000·D evaluations, would end
                    // large populations' runs early); the short run is its start.
                    max_evaluations: Some(u64::from(np) * (u64::from(gens) + 1)),
                    precision: Precision::F32.name(),
                    islands: None,
                });
            }
        }
    }
    v
}

/// The example objective crate's PTX: `$GPUDE_OBJECTIVE_PTX`, else the GPU bundle's copy
/// (`gpu-bundle/objective-example.ptx`, made by `scripts/gpu-bundle.sh`), else the
/// crate's own build output; `None` when none is there.
pub fn example_ptx() -> Option<String> {
    let candidates = [
        std::env::var("GPUDE_OBJECTIVE_PTX").ok(),
        Some("gpu-bundle/objective-example.ptx".into()),
        Some(
            "examples/objective-rust/target/nvptx64-nvidia-cuda/release/gpude_objective_example.ptx"
                .into(),
        ),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(|p| std::fs::read_to_string(p).ok())
}

fn jobs_for(c: &Case, gens: u32) -> Result<Vec<Job>> {
    let info = gpude::FunctionInfo::parse(c.function)?;
    let precision = Precision::parse(c.precision)?;
    let objective = if c.ptx {
        let text = example_ptx().ok_or_else(|| gpude::Error::Input {
            what: format!("bench case {}", c.name),
            message: "the example objective's PTX file is not there (GPUDE_OBJECTIVE_PTX)".into(),
        })?;
        // The whole form alone unless the case runs the separable one.
        let text = if c.separable {
            text
        } else {
            text.replace("gpude_sep_", "unused_sep_")
        };
        Objective::ptx(
            "example objective",
            Some(info.min),
            gpude::host::ptx_objective::PtxCode::parse(text)?,
        )?
    } else if c.expression {
        Objective::expr(
            &gpude::expr::builtins::expression(info.function),
            Some(info.min),
        )?
    } else {
        Objective::Builtin(info.function)
    };
    (0..c.populations)
        .map(|k| {
            let b = Job::builder_for(objective.clone(), c.dim);
            let b = match c.max_evaluations {
                Some(e) => b.max_evaluations(e),
                None => b,
            };
            b.domain(info.domain.0, info.domain.1)
                .pop(c.pop)
                .generations(gens)
                .strategy(gpude::host::config::parse_strategy(c.strategy)?.0)
                .precision(precision)
                .seed(1)
                .stream(k)
                .build()
        })
        .collect()
}

/// One timed run: wall time (ms) and the first population's result.
fn time_once(c: &Case, gens: u32, engine: Option<&gpude::CudaEngine>) -> Result<(f64, RunResult)> {
    let jobs = jobs_for(c, gens)?;
    let start = Instant::now();
    let first = match (c.backend, engine) {
        ("cuda", Some(e)) if c.mode == "islands" => {
            e.set_batch_kernel(BatchKernel::Auto);
            e.set_spare_rows_cap(None);
            let i = c.islands.ok_or_else(|| gpude::Error::Input {
                what: format!("bench case {}", c.name),
                message: "an islands case without its islands".into(),
            })?;
            let algorithm = match i.algorithm {
                "pso" => gpude::Algorithm::Pso(gpude::Pso::default()),
                _ => gpude::Algorithm::De,
            };
            let a = gpude::Archipelago::builder(jobs[0].clone(), i.islands)
                .interval(i.interval)
                .algorithm(algorithm)
                .build()?;
            e.run_archipelagos(&[a], None)?.swap_remove(0).overall
        }
        ("cuda", Some(e)) if c.mode == "cli" => {
            e.set_batch_kernel(BatchKernel::Auto);
            e.set_spare_rows_cap(None);
            cli_path(e, jobs)?
        }
        ("cuda", Some(e)) => {
            let mode = Mode::parse(c.mode)?;
            if mode == Mode::Batch {
                e.set_batch_kernel(BatchKernel::parse(c.batch_kernel)?);
                e.set_spare_rows_cap(c.spare_rows);
                e.run_batch(&jobs)?.swap_remove(0)
            } else {
                e.run(&jobs[0], mode)?
            }
        }
        _ => match jobs[0].precision() {
            Precision::F32 => cpu::run::<f32>(&jobs[0], None)?,
            Precision::F64 => cpu::run::<f64>(&jobs[0], None)?,
        },
    };
    Ok((start.elapsed().as_secs_f64() * 1e3, first))
}

/// The command line's path on the GPU (as `gpude run` takes it without `--checkpoint`):
/// the jobs in the `auto` mode under a watch with an observer and the stop flag.
fn cli_path(e: &gpude::CudaEngine, jobs: Vec<Job>) -> Result<RunResult> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let seen = std::sync::atomic::AtomicU32::new(0);
    let observe = |_: usize, g: u32, _: f64| {
        seen.fetch_max(g, std::sync::atomic::Ordering::Relaxed);
        gpude::run::control::Flow::Continue
    };
    let mut watch = gpude::run::control::Watch {
        observer: Some(&observe),
        stop: Some(&stop),
        ..Default::default()
    };
    let entries = jobs
        .into_iter()
        .map(gpude::checkpoint::Entry::Pending)
        .collect();
    let mut ran = e.run_entries(entries, Mode::Auto, &mut watch)?;
    ran.swap_remove(0).result.ok_or_else(|| gpude::Error::Cuda {
        context: "bench".into(),
        message: "the first run has no result".into(),
    })
}

/// Measures one case.
pub fn measure(c: &Case, engine: Option<&gpude::CudaEngine>, repeats: usize) -> Result<Record> {
    let long = c.generations.max(5);
    let short = (long / 5).max(1);
    time_once(c, short, engine)?;
    let mut ts = Vec::new();
    let mut tl = Vec::new();
    let mut errs = Vec::new();
    let mut verified = Vec::new();
    let mut placed = (gpude::RunLayout::Cpu, 1);
    for _ in 0..repeats.max(1) {
        ts.push(time_once(c, short, engine)?.0);
        let (t, r) = time_once(c, long, engine)?;
        tl.push(t);
        errs.push(r.error);
        verified.push(r.verified_error);
        placed = (r.layout, r.launch_runs);
    }
    let (t_short, t_long) = (median(&ts), median(&tl));
    let per_gen_ms = ((t_long - t_short) / (long - short) as f64).max(1e-9);
    let populations = c.islands.map_or(c.populations, |i| i.islands);
    let elements = populations as f64 * c.pop as f64 * c.dim as f64;
    Ok(Record {
        case: c.clone(),
        us_per_gen: per_gen_ms * 1e3,
        element_gens_per_s: elements / (per_gen_ms * 1e-3),
        fixed_ms: t_long - per_gen_ms * long as f64,
        t_short_ms: t_short,
        t_long_ms: t_long,
        repeats: repeats.max(1),
        final_error: median(&errs),
        final_verified_error: median(&verified),
        layout: placed.0.name(),
        launch_runs: placed.1,
    })
}

/// A short human table of records.
pub fn table(records: &[Record]) -> String {
    let mut s = format!(
        "{:<30} {:>8} {:>10} {:>12} {:>14} {:>10} {:>12} {:>12}  {}\n",
        "case", "prec", "gens", "us/gen", "elem-gens/s", "fixed ms", "error", "verified", "layout"
    );
    for r in records {
        s += &format!(
            "{:<30} {:>8} {:>10} {:>12.2} {:>14.3e} {:>10.1} {:>12.3e} {:>12.3e}  {} ×{}\n",
            r.case.name,
            r.case.precision,
            r.case.generations,
            r.us_per_gen,
            r.element_gens_per_s,
            r.fixed_ms,
            r.final_error,
            r.final_verified_error,
            r.layout,
            r.launch_runs
        );
    }
    s
}
