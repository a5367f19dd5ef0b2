//! `gpude reproduce thesis`: reruns the experiments of the thesis's chapter 5 and writes a
//! report with the thesis's numbers beside ours.

use super::common::{BackendArgs, num};
use super::{CliError, Result};
use crate::thesis::{self as reproduce, Case, CaseResult, Options};
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
}

pub fn run(args: Args) -> Result<String> {
    match args.what {
        What::Thesis(a) => thesis(*a),
        What::Castro2012(a) => castro2012(*a),
    }
}

fn castro2012(args: Castro2012Args) -> Result<String> {
    use crate::castro2012 as c;
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
            eprintln!(
                "reproduce: [{done}/{cases}] {} (D = {}, g_max = {}, {} runs) …",
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
