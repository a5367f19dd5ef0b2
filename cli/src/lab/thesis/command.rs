//! `gpude reproduce thesis`: its flags, and the run from them to the files.

use super::{
    Arithmetic, Case, CaseResult, Context, Options, QUICK_RUNS, published, reproduce, write,
};
use crate::common::{BackendArgs, num};
use crate::lab::command_line;
use crate::{CliError, Result};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
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
    let mut options = Options::thesis();
    options.quick = args.quick;
    options.seed = args.seed;
    options.table56 = !args.no_table56;
    options.runs = args.runs.unwrap_or(if args.quick {
        QUICK_RUNS
    } else {
        published::RUNS
    });
    if let Some(list) = &args.functions {
        options.functions = Options::parse_functions(list)?;
    }
    options.arithmetics = Arithmetic::parse_list(&args.arithmetic)?;
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
    let context = Context::new(&solver, command_line(), &args.backend.mode);
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
    let r = reproduce(&solver, &options, context, &mut progress)?;
    let written = write(&args.out, &r)
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
