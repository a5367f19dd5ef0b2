//! `gpude run`: optimise one function, once or several times.

use super::common::{self, BackendArgs, JobArgs, JobSpec, Summary, num};
use super::islands::{self, IslandsReport};
use super::{CliError, Result};
use gpude::{Archipelago, Job, RunResult, Solver};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;

/// Error below which a run counts as a success when no --target is given.
const DEFAULT_SUCCESS: f64 = 1e-10;

/// Work (Np·D·generations·runs) above which a progress bar is worth showing.
const PROGRESS_WORK: f64 = 2e7;

/// Components of the best point shown to people.
const SHOWN_COMPONENTS: usize = 5;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub job: JobArgs,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Independent runs: the same seed, random streams 0 … N−1.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub runs: u32,

    /// Print the settings and results as JSON.
    #[arg(long)]
    pub json: bool,

    /// Write the best value after every generation to FILE (CSV; one column per run).
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report<'a> {
    backend: &'static str,
    fallback_reason: Option<&'a str>,
    job: JobSpec,
    results: &'a [RunResult],
    summary: Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    islands: Option<Vec<IslandsReport<'a>>>,
}

pub fn run(args: Args) -> Result<String> {
    let spec = args.job.spec(args.runs)?;
    let mut jobs = spec.jobs(args.history.is_some())?;
    let archs = islands::plan(&spec, &mut jobs)?;
    let job = &jobs[0];
    // Open the history file first: a bad path should not cost a run.
    let history_file = match &args.history {
        Some(p) => Some(File::create(p).map_err(|e| {
            CliError::usage(format!(
                "cannot create the history file {}: {e}",
                p.display()
            ))
        })?),
        None => None,
    };
    let solver = match &archs {
        Some(_) => islands::open(&args.backend)?,
        None => args.backend.open()?,
    };
    let arch_results = archs
        .as_deref()
        .map(|a| islands::execute(&solver, a))
        .transpose()?;
    let results = match &arch_results {
        Some(r) => r.iter().map(|a| a.overall.clone()).collect(),
        None => execute(&solver, &jobs, show_progress(&args, &solver, job))?,
    };
    if results.len() != jobs.len() {
        return Err(CliError::runtime(format!(
            "the engine returned {} results for {} runs",
            results.len(),
            jobs.len()
        )));
    }

    if let (Some(file), Some(path)) = (history_file, &args.history) {
        write_history(file, &results).map_err(|e| {
            CliError::runtime(format!("writing the history file {}: {e}", path.display()))
        })?;
    }

    let threshold = job.target.unwrap_or(DEFAULT_SUCCESS);
    let errors: Vec<f64> = results.iter().map(|r| r.error).collect();
    let summary = Summary::of(&errors, threshold);
    let arch = archs.as_ref().map(|a| &a[0]);
    if args.json {
        let mut resolved = JobSpec::resolved(job, args.runs, spec.max_evals);
        if let Some(a) = arch {
            islands::resolve(&mut resolved, a);
        }
        return common::to_json(&Report {
            backend: solver.backend_name(),
            fallback_reason: solver.fallback_reason(),
            job: resolved,
            results: &results,
            summary,
            islands: arch_results
                .as_ref()
                .map(|r| r.iter().map(IslandsReport::of).collect()),
        });
    }
    let mut out = human(&solver, job, &results, &summary, arch);
    if let Some(r) = &arch_results {
        out.push_str(&islands::summary(r));
    }
    Ok(out)
}

/// Should a progress bar be drawn? Only for people watching a long run that reports
/// its generations (the CPU engine).
fn show_progress(args: &Args, solver: &Solver, job: &Job) -> bool {
    let work = job.pop as f64 * job.dim() as f64 * job.generations as f64 * args.runs as f64;
    !args.json
        && solver.backend_name() == "cpu"
        && work > PROGRESS_WORK
        && std::io::stdout().is_terminal()
}

fn execute(solver: &Solver, jobs: &[Job], progress: bool) -> Result<Vec<RunResult>> {
    if !progress {
        return Ok(match jobs {
            [one] => vec![solver.run(one, None)?],
            _ => solver.run_batch(jobs)?,
        });
    }
    let total: u64 = jobs.iter().map(|j| j.generations as u64).sum();
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{wide_bar} {pos}/{len} gens  {msg}  eta {eta}")
    {
        bar.set_style(style);
    }
    let mut out = Vec::with_capacity(jobs.len());
    let mut done = 0u64;
    for (k, job) in jobs.iter().enumerate() {
        let runs = jobs.len();
        let observe = |g: u32, best: f64| {
            bar.set_position(done + g as u64);
            if runs > 1 {
                bar.set_message(format!("run {}/{runs}  best f {}", k + 1, num(best)));
            } else {
                bar.set_message(format!("best f {}", num(best)));
            }
        };
        out.push(solver.run(job, Some(&observe))?);
        done += job.generations as u64;
    }
    bar.finish_and_clear();
    Ok(out)
}

/// CSV `generation,best` (one run) or `generation,run_0,run_1,…`; runs that stopped
/// early leave their later cells empty.
fn write_history(file: File, results: &[RunResult]) -> std::io::Result<()> {
    let hist: Vec<&[f64]> = results
        .iter()
        .map(|r| r.history.as_deref().unwrap_or(&[]))
        .collect();
    let rows = hist.iter().map(|h| h.len()).max().unwrap_or(0);
    let mut w = BufWriter::new(file);
    if hist.len() == 1 {
        writeln!(w, "generation,best")?;
    } else {
        let names: Vec<String> = (0..hist.len()).map(|k| format!("run_{k}")).collect();
        writeln!(w, "generation,{}", names.join(","))?;
    }
    for g in 0..rows {
        let cells: Vec<String> = hist
            .iter()
            .map(|h| h.get(g).map(|&v| common::exact(v)).unwrap_or_default())
            .collect();
        writeln!(w, "{g},{}", cells.join(","))?;
    }
    w.flush()
}

fn human(
    solver: &Solver,
    job: &Job,
    results: &[RunResult],
    summary: &Summary,
    arch: Option<&Archipelago>,
) -> String {
    let mut s = String::new();
    let backend = match solver.fallback_reason() {
        Some(why) => format!("{} (no GPU: {why})", solver.backend_name()),
        None => solver.backend_name().to_string(),
    };
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<13}{v}\n"));
    line("backend", backend);
    line(
        "function",
        format!(
            "{}  D = {}  domain {}",
            job.info().name,
            job.dim(),
            common::describe_domain(job)
        ),
    );
    line("population", format!("Np = {}", job.pop));
    match arch {
        Some(a) => {
            for (k, v) in islands::describe(a) {
                line(k, v);
            }
        }
        None => line("strategy", common::describe_strategy(job)),
    }
    line("precision", job.precision.name().to_string());
    line("seed", job.seed.to_string());
    if let Some(t) = job.target {
        line("target", format!("error ≤ {}", num(t)));
    }
    if let [r] = results {
        line("best f", num(r.best_f));
        line("error", num(r.error));
        line("generations", r.generations.to_string());
        line("evaluations", r.evaluations.to_string());
        line("termination", r.termination.describe().to_string());
        line("elapsed", common::duration(r.elapsed));
        line("best x", components(r));
        return s;
    }
    line("runs", results.len().to_string());
    s.push('\n');
    let mut rows = vec![
        [
            "run",
            "best f",
            "error",
            "gens",
            "evals",
            "termination",
            "time",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for r in results {
        rows.push(vec![
            r.stream.to_string(),
            num(r.best_f),
            num(r.error),
            r.generations.to_string(),
            r.evaluations.to_string(),
            r.termination.describe().to_string(),
            common::duration(r.elapsed),
        ]);
    }
    s.push_str(&common::table(&rows, &[5]));
    s.push('\n');
    s.push_str(&summary.describe());
    if let Some(best) = results.iter().min_by(|a, b| a.best_f.total_cmp(&b.best_f)) {
        s.push_str(&format!(
            "best x (run {}): {}\n",
            best.stream,
            components(best)
        ));
    }
    s
}

/// The first components of the best point: `[0.001, -0.002, …] (30 components)`.
fn components(r: &RunResult) -> String {
    let n = r.best_x.len();
    let shown: Vec<String> = r
        .best_x
        .iter()
        .take(SHOWN_COMPONENTS)
        .map(|&v| num(v))
        .collect();
    if n > SHOWN_COMPONENTS {
        format!("[{}, …] ({n} components)", shown.join(", "))
    } else {
        format!("[{}]", shown.join(", "))
    }
}
