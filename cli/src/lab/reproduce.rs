//! `gpude reproduce thesis`: reruns the experiments of the thesis's chapter 5 and writes a
//! report with the thesis's numbers beside ours.

use super::thesis::{self as reproduce, Case, CaseResult, Options};
use crate::common::{BackendArgs, num};
use crate::{CliError, Result};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to reproduce.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// The thesis's chapter 5: the variant on Griewank, Rosenbrock, f4 and Ackley at
    /// D = 128, 35 runs per case, and Table 5.6 (original DE against the variant).
    Thesis(Box<ThesisArgs>),
    /// Seed 001 (Castro Liera et al. 2012): PSO on 21 islands × 128 particles with ring
    /// migration every 1 % of the generations, and gpude's DE on the same islands, on
    /// Rastrigin, Ackley, Schwefel 1.2 and Weierstrass at D = 30.
    Castro2012(Box<Castro2012Args>),
    /// The CEC 2017 suite under the competition's protocol (51 runs, 10 000·D evaluations,
    /// errors below 1e-8 counted as 0): gpude's jSO and L-SHADE beside the published jSO,
    /// LSHADE-cnEpSin and EBOwithCMAR, with a rank-sum test against the published jSO runs.
    Cec2017(Box<Cec2017Args>),
}

#[derive(Debug, clap::Args)]
pub struct Cec2017Args {
    /// The dimensions, a comma list of 10, 30, 50, 100 [default: 10,30; 10 with --quick].
    #[arg(long, value_name = "LIST")]
    pub dims: Option<String>,

    /// gpude's strategies, a comma list of jde, jade, shade, lshade, jso and the classic
    /// thesis and rand1bin (Np = 100, the same budget) [default: jso,lshade].
    #[arg(long, value_name = "LIST")]
    pub strategies: Option<String>,

    /// The functions: numbers and ranges such as 1,3-30 [default: the competition's 1,3-30
    /// (F2 was excluded); 1,5 with --quick].
    #[arg(long, value_name = "LIST")]
    pub functions: Option<String>,

    /// Runs per function and strategy: one seed, random streams 0 … N−1 [default: 51;
    /// 3 with --quick].
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,

    /// Where to run: cpu, cuda or auto (the GPU when there is one). On the GPU each
    /// function's runs of a strategy are one batch launch, one block per run.
    #[arg(long, default_value = "auto", value_name = "B")]
    pub backend: String,

    /// Small sizes for a check in seconds: F1 and F5 at D = 10, 3 runs, 300·D evaluations.
    #[arg(long)]
    pub quick: bool,

    /// Random seed of every run.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub seed: u64,

    /// Folder for REPORT.md, runs.json and the convergence plots plots/D<d>_F<n>.png and
    /// .svg (made if missing; files in it are replaced).
    #[arg(long, default_value = "cec2017-reproduction", value_name = "DIR")]
    pub out: PathBuf,

    /// The reference folder with cec2017-published.md, cec2017-runs.csv and
    /// cec2017/CEC17_fast_pow-C++.zip [default: shared/reference beside the repository].
    #[arg(long, value_name = "DIR")]
    pub reference: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct Castro2012Args {
    /// Independent runs per case [default: 10; 2 with --quick].
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,

    /// The functions: a comma list of ackley, rastrigin, schwefel12, weierstrass
    /// [default: all].
    #[arg(long, value_name = "LIST")]
    pub functions: Option<String>,

    /// Arithmetic: f32 or f64.
    #[arg(long, default_value = "f64", value_name = "P")]
    pub precision: String,

    /// Where to run: cpu (islands run on the CPU engine only for now).
    #[arg(long, default_value = "cpu", value_name = "B")]
    pub backend: String,

    /// Leave out gpude's DE islands (PSO only).
    #[arg(long)]
    pub no_de: bool,

    /// Small sizes for a check in seconds: 3 islands × 16 particles, D = 10, g_max ÷ 100,
    /// 2 runs.
    #[arg(long)]
    pub quick: bool,

    /// Random seed of every case.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub seed: u64,

    /// Also write REPORT.md and runs.json into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ThesisArgs {
    /// Independent runs per case: one seed, random streams 0 … N−1 [default: 35; 3 with
    /// --quick].
    #[arg(long, value_name = "N")]
    pub runs: Option<u32>,

    /// The functions: a comma list of griewank, rosenbrock, f4, ackley [default: all].
    #[arg(long, value_name = "LIST")]
    pub functions: Option<String>,

    /// Only these population sizes of the functions' cases, a comma list such as 2048
    /// [default: all; Table 5.6 keeps its own size].
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,

    /// The arithmetics every case runs in, a comma list of textbook-f32 (the formulas as
    /// printed in single precision, as the thesis), exact-f32, f64 (exact formulas) and
    /// textbook-f64, or all.
    #[arg(
        long,
        default_value = "textbook-f32,exact-f32,f64",
        value_name = "LIST"
    )]
    pub arithmetic: String,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Folder for REPORT.md, runs.json, histories.json and the plots (made if missing;
    /// files in it are replaced).
    #[arg(long, default_value = "reproduction", value_name = "DIR")]
    pub out: PathBuf,

    /// Small sizes for a check in seconds: D = 16, Np ∈ {64, 128}, g_max ÷ 20, 3 runs.
    #[arg(long)]
    pub quick: bool,

    /// Random seed of every case.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub seed: u64,

    /// Leave out Table 5.6 (the original DE runs).
    #[arg(long)]
    pub no_table56: bool,

    /// Run the EDCP cases with an alternative to details of the thesis strategy, a comma
    /// list of key=value as `run --thesis-variant` takes it (e.g.
    /// indices=rejection,mutation=fma) [default: default].
    #[arg(long, value_name = "LIST")]
    pub thesis_variant: Option<String>,
}

pub fn run(args: Args) -> Result<String> {
    match args.what {
        What::Thesis(a) => thesis(*a),
        What::Castro2012(a) => castro2012(*a),
        What::Cec2017(a) => cec2017(*a),
    }
}

fn cec2017(args: Cec2017Args) -> Result<String> {
    use super::cec2017_reproduction as c;
    let mut options = if args.quick {
        c::Options::quick()
    } else {
        c::Options::competition(vec![10, 30])
    };
    options.seed = args.seed;
    if let Some(list) = &args.dims {
        options.dims = c::Options::parse_dims(list)?;
    }
    if let Some(list) = &args.strategies {
        options.strategies = c::Options::parse_strategies(list)?;
    }
    if let Some(list) = &args.functions {
        options.functions = c::Options::parse_functions(list)?;
    }
    if let Some(n) = args.runs {
        options.runs = n;
    }
    options.validate()?;

    // Everything the runs need is checked before they start: the engine first (a
    // missing GPU writes nothing).
    let backend = gpude::Backend::parse(&args.backend)?;
    let solver = gpude::Solver::new(&gpude::SolverOptions {
        backend,
        ..gpude::SolverOptions::default()
    })?;
    crate::output::check_dir(&args.out, "the output folder")?;
    let reference = c::locate_reference(args.reference.as_deref())?;
    let published = c::published::load(&reference).map_err(CliError::usage)?;
    let source = match &args.reference {
        Some(dir) => gpude::cec2017::DataSource::open(&dir.join(c::DATA_IN_REFERENCE))?,
        None => gpude::cec2017::DataSource::locate(None)?,
    };

    let total = options.dims.len() * options.functions.len();
    let mut results = Vec::with_capacity(total);
    for &dim in &options.dims {
        for &id in &options.functions {
            eprintln!(
                "reproduce: [{}/{total}] F{} at D = {dim} ({} runs × {} evaluations) …",
                results.len() + 1,
                id.number(),
                options.runs,
                options.budget(dim)
            );
            let r = c::run_function(&solver, &source, &published, &options, id, dim)?;
            for s in &r.gpude {
                eprintln!(
                    "reproduce:   {}: {} ({:.2} s)",
                    s.strategy,
                    c::mean_sd(s.mean, s.std),
                    s.wall_s
                );
            }
            results.push(r);
        }
    }
    let r = c::Reproduction {
        command: command_line(),
        backend: solver.backend_name().into(),
        cpu_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        seed: options.seed,
        runs: options.runs,
        quick: options.quick,
        evaluations_per_dim: options.evaluations_per_dim,
        precision: "f64",
        reference: reference.display().to_string(),
        data: source.path().display().to_string(),
        alpha: c::ALPHA,
        within_factor: c::WITHIN,
        zero_below: c::ZERO_BELOW,
        summaries: options
            .dims
            .iter()
            .map(|&d| c::summarise(d, &results))
            .collect(),
        results,
    };
    // The plots first: the report links them.
    crate::lab::cec2017_reproduction::write_all(
        &args.out,
        &r.results,
        &options.strategies,
        r.runs,
    )?;
    let report = c::report(&r, &options.strategies);
    c::write(&args.out, &report, &r)?;
    let mut out = String::new();
    for s in &r.summaries {
        let _ = writeln!(out, "{}", c::summary_line(s));
    }
    let _ = writeln!(
        out,
        "wrote {}, {} and the plots in {}",
        args.out.join("REPORT.md").display(),
        args.out.join("runs.json").display(),
        args.out
            .join(crate::lab::cec2017_reproduction::PLOTS_DIR)
            .display()
    );
    Ok(out)
}

fn castro2012(args: Castro2012Args) -> Result<String> {
    use super::castro2012 as c;
    let runs = args.runs.unwrap_or(if args.quick {
        c::QUICK_RUNS
    } else {
        c::FULL_RUNS
    });
    if runs == 0 || runs > crate::common::MAX_REPETITIONS {
        return Err(CliError::usage(format!(
            "--runs {runs} is not allowed: 1 ..= {}",
            crate::common::MAX_REPETITIONS
        )));
    }
    let options = c::Options {
        runs,
        quick: args.quick,
        seed: args.seed,
        precision: gpude::Precision::parse(&args.precision)?,
        functions: match &args.functions {
            Some(list) => c::Options::parse_functions(list)?,
            None => c::published::CASES.iter().map(|k| k.function).collect(),
        },
        de: !args.no_de,
    };
    let backend = BackendArgs {
        backend: args.backend.clone(),
        mode: "auto".into(),
        device: None,
        streams: None,
    };
    let solver = crate::islands::open(&backend)?;
    let cases = c::cases(&options);
    let mut results = Vec::with_capacity(cases.len());
    for (k, (case, family)) in cases.iter().enumerate() {
        eprintln!(
            "reproduce: [{}/{}] {} {} ({} runs) …",
            k + 1,
            cases.len(),
            family.name(),
            gpude::FunctionInfo::of(case.function).name,
            options.runs
        );
        let r = c::run_case(&solver, &options, case, *family)?;
        eprintln!(
            "reproduce:   success {:.1} %, mean error {}, {:.3} s per run",
            r.success_pct,
            num(r.mean_error),
            r.mean_seconds
        );
        results.push(r);
    }
    let report = c::report(&options, &results, solver.backend_name(), &command_line());
    if let Some(dir) = &args.out {
        c::write(dir, &report, &results)?;
    }
    Ok(report)
}

fn thesis(args: ThesisArgs) -> Result<String> {
    let mut options = Options::thesis();
    options.quick = args.quick;
    options.seed = args.seed;
    options.table56 = !args.no_table56;
    options.runs = args.runs.unwrap_or(if args.quick {
        reproduce::QUICK_RUNS
    } else {
        reproduce::published::RUNS
    });
    if let Some(list) = &args.functions {
        options.functions = Options::parse_functions(list)?;
    }
    options.arithmetics = reproduce::Arithmetic::parse_list(&args.arithmetic)?;
    if let Some(list) = &args.sizes {
        options.only_sizes = Some(Options::parse_sizes(list)?);
    }
    if let Some(v) = &args.thesis_variant {
        options.variant = gpude::host::config::parse_variant(v)?;
    }
    options.validate()?;

    // A folder that cannot be made or written should not cost the runs.
    crate::output::check_dir(&args.out, "the output folder")?;

    let solver = args.backend.open()?;
    if let Some(why) = solver.fallback_reason() {
        eprintln!("reproduce: no GPU ({why}); running on the CPU");
    }
    let context = reproduce::Context::new(&solver, command_line(), &args.backend.mode);
    let cases = options.cases().len();
    let mut done = 0usize;
    let mut progress = |case: &Case, result: Option<&CaseResult>| match result {
        None => {
            done += 1;
            let variant = if case.variant.is_default() {
                String::new()
            } else {
                format!(
                    ", variant {}",
                    gpude::host::config::variant_name(case.variant)
                )
            };
            eprintln!(
                "reproduce: [{done}/{cases}] {} (D = {}, g_max = {}, {} runs{variant}) …",
                case.id(),
                case.dim,
                case.g_max,
                options.runs
            );
        }
        Some(r) => eprintln!(
            "reproduce:   {:.3} s; success {:.2} % (reported {:.2} %), mean error {} (reported {})",
            r.batch_wall_s,
            r.stats.success_pct,
            r.reported.success_pct,
            num(r.stats.mean_error),
            num(r.reported.mean_error)
        ),
    };
    let r = reproduce::reproduce(&solver, &options, context, &mut progress)?;
    let written = reproduce::write(&args.out, &r)
        .map_err(|e| CliError::from(e).context(format!("writing {}", args.out.display())))?;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} cases, {} runs on {}; wrote:",
        r.results.len(),
        r.results.iter().map(|c| c.runs.len()).sum::<usize>(),
        r.context.backend
    );
    for p in [&written.report, &written.runs, &written.histories]
        .into_iter()
        .chain(&written.plots)
    {
        let _ = writeln!(out, "  {}", p.display());
    }
    Ok(out)
}

/// The command line as typed, quoted for a POSIX shell where needed.
fn command_line() -> String {
    std::env::args()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
