//! `gpude reproduce cec2017`: its flags, and the run from them to the files.

use super::{
    ALPHA, DATA_IN_REFERENCE, Options, Reproduction, WITHIN, ZERO_BELOW, curves, display_name,
    published, report, runner,
};
use crate::lab::command_line;
use crate::{CliError, Result};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
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

    /// Where to run: cpu, cuda or auto (the GPU when there is one). On the GPU every
    /// function's runs of a strategy at a dimension are one batch, one block per run.
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

pub fn run(args: Args) -> Result<String> {
    let mut options = if args.quick {
        Options::quick()
    } else {
        Options::competition(vec![10, 30])
    };
    options.seed = args.seed;
    if let Some(list) = &args.dims {
        options.dims = Options::parse_dims(list)?;
    }
    if let Some(list) = &args.strategies {
        options.strategies = Options::parse_strategies(list)?;
    }
    if let Some(list) = &args.functions {
        options.functions = Options::parse_functions(list)?;
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
    let reference = published::locate_reference(args.reference.as_deref())?;
    let published = published::load(&reference).map_err(CliError::usage)?;
    let source = match &args.reference {
        Some(dir) => gpude::cec2017::DataSource::open(&dir.join(DATA_IN_REFERENCE))?,
        None => gpude::cec2017::DataSource::locate(None)?,
    };

    let mut results = Vec::with_capacity(options.dims.len() * options.functions.len());
    for &dim in &options.dims {
        eprintln!(
            "reproduce: D = {dim}: {} functions × {} runs × {} evaluations, each strategy's runs in one batch …",
            options.functions.len(),
            options.runs,
            options.budget(dim)
        );
        let rs = runner::run_dimension(&solver, &source, &published, &options, dim, |s, t| {
            eprintln!("reproduce:   {}: {t:.2} s", display_name(s))
        })?;
        for r in &rs {
            let cells: Vec<String> = r
                .gpude
                .iter()
                .map(|s| format!("{} {}", s.strategy, report::mean_sd(s.mean, s.std)))
                .collect();
            eprintln!("reproduce:   F{}: {}", r.function, cells.join(", "));
        }
        results.extend(rs);
    }
    let r = Reproduction {
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
        alpha: ALPHA,
        within_factor: WITHIN,
        zero_below: ZERO_BELOW,
        summaries: options
            .dims
            .iter()
            .map(|&d| runner::summarise(d, &results))
            .collect(),
        results,
    };
    // The plots first: the report links them.
    curves::write_all(&args.out, &r.results, &options.strategies, r.runs)?;
    let report = report::report(&r, &options.strategies);
    report::write(&args.out, &report, &r)?;
    let mut out = String::new();
    for s in &r.summaries {
        let _ = writeln!(out, "{}", report::summary_line(s));
    }
    let _ = writeln!(
        out,
        "wrote {}, {} and the plots in {}",
        args.out.join("REPORT.md").display(),
        args.out.join("runs.json").display(),
        args.out.join(curves::PLOTS_DIR).display()
    );
    Ok(out)
}
