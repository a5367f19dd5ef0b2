//! `gpude reproduce castro2012`: its flags, and the run from them to the report.

use super::{FULL_RUNS, Options, QUICK_RUNS, cases, published, report, run_case, write};
use crate::common::{BackendArgs, num};
use crate::lab::command_line;
use crate::{CliError, Result};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
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

    /// Where to run: cpu, cuda, or auto (the GPU when there is one).
    #[arg(long, default_value = "cpu", value_name = "B")]
    pub backend: String,

    /// Leave out gpude's DE islands.
    #[arg(long)]
    pub no_de: bool,

    /// Leave out the GA.
    #[arg(long)]
    pub no_ga: bool,

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

pub fn run(args: Args) -> Result<String> {
    let runs = args
        .runs
        .unwrap_or(if args.quick { QUICK_RUNS } else { FULL_RUNS });
    if runs == 0 || runs > crate::common::MAX_REPETITIONS {
        return Err(CliError::usage(format!(
            "--runs {runs} is not allowed: 1 ..= {}",
            crate::common::MAX_REPETITIONS
        )));
    }
    let options = Options {
        runs,
        quick: args.quick,
        seed: args.seed,
        precision: gpude::Precision::parse(&args.precision)?,
        functions: match &args.functions {
            Some(list) => Options::parse_functions(list)?,
            None => published::CASES.iter().map(|k| k.function).collect(),
        },
        de: !args.no_de,
        ga: !args.no_ga,
    };
    let backend = BackendArgs {
        backend: args.backend.clone(),
        mode: "auto".into(),
        device: None,
        gpus: None,
        streams: None,
    };
    let solver = crate::islands::open(&backend, &[])?;
    let cases = cases(&options);
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
        let r = run_case(&solver, &options, case, *family)?;
        eprintln!(
            "reproduce:   success {:.1} %, mean error {}, {:.3} s per run",
            r.success_pct,
            num(r.mean_error),
            r.mean_seconds
        );
        results.push(r);
    }
    let report = report(&options, &results, solver.backend_name(), &command_line());
    if let Some(dir) = &args.out {
        write(dir, &report, &results)?;
    }
    Ok(report)
}
