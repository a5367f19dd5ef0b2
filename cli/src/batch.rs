//! `gpude batch FILE`: run a list of jobs from a JSON or TOML file.
//!
//! JSON: an array of jobs, or `{"jobs": [...]}`. TOML: `[[jobs]]` tables. Each job has
//! the keys of [`JobSpec`]; `repetitions` (or `runs`) expands to streams 0 … n−1.

use super::common::{self, BackendArgs, JobSpec, Summary, num};
use super::islands;
use super::{CliError, Result};
use gpude::{Job, RunResult};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Error below which a run counts as a success when its job has no target.
const DEFAULT_SUCCESS: f64 = 1e-10;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Job file (.json or .toml; `-` reads stdin).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Print the settings and results as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The top level of a file that is an object / table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchFile<V> {
    jobs: Vec<V>,
}

#[derive(Serialize)]
struct Report<'a> {
    backend: &'static str,
    fallback_reason: Option<&'a str>,
    jobs: Vec<JobReport<'a>>,
}

#[derive(Serialize)]
struct JobReport<'a> {
    index: usize,
    job: JobSpec,
    results: &'a [RunResult],
    summary: Summary,
}

pub fn run(args: Args) -> Result<String> {
    let (text, name) = read(&args.file)?;
    let specs = parse(&text, &args.file).map_err(|e| e.context(&name))?;
    if specs.is_empty() {
        return Err(CliError::usage(format!("{name}: the file lists no jobs")));
    }
    // Every job is checked before anything runs.
    let mut groups: Vec<Vec<Job>> = Vec::with_capacity(specs.len());
    let mut plans = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let context = |e: CliError| e.context(format!("{name}: job {i}"));
        let mut jobs = spec.jobs(false).map_err(context)?;
        plans.push(islands::plan(spec, &mut jobs).map_err(context)?);
        groups.push(jobs);
    }
    // Islands and PSO run on the CPU engine: with any of them, the whole file does.
    let solver = if plans.iter().any(Option::is_some) {
        islands::open(&args.backend)?
    } else {
        args.backend.open()?
    };
    let all: Vec<Job> = groups
        .iter()
        .zip(&plans)
        .filter(|(_, p)| p.is_none())
        .flat_map(|(g, _)| g.iter().cloned())
        .collect();
    let plain = solver.run_batch(&all)?;
    if plain.len() != all.len() {
        return Err(CliError::runtime(format!(
            "the engine returned {} results for {} jobs",
            plain.len(),
            all.len()
        )));
    }
    let mut plain = plain.into_iter();
    let mut results = Vec::new();
    for (g, plan) in groups.iter().zip(&plans) {
        match plan {
            Some(archs) => {
                results.extend(
                    islands::execute(&solver, archs)?
                        .into_iter()
                        .map(|r| r.overall),
                );
            }
            None => results.extend(plain.by_ref().take(g.len())),
        }
    }
    let mut reports = Vec::with_capacity(groups.len());
    let mut at = 0;
    for (i, ((g, spec), plan)) in groups.iter().zip(&specs).zip(&plans).enumerate() {
        let rs = &results[at..at + g.len()];
        at += g.len();
        let errors: Vec<f64> = rs.iter().map(|r| r.error).collect();
        let mut job = JobSpec::resolved(&g[0], g.len() as u32, spec.max_evals);
        if let Some(archs) = plan {
            islands::resolve(&mut job, &archs[0]);
        }
        reports.push(JobReport {
            index: i,
            job,
            results: rs,
            summary: Summary::of(&errors, g[0].target.unwrap_or(DEFAULT_SUCCESS)),
        });
    }
    if args.json {
        return common::to_json(&Report {
            backend: solver.backend_name(),
            fallback_reason: solver.fallback_reason(),
            jobs: reports,
        });
    }
    let mut s = match solver.fallback_reason() {
        Some(why) => format!("backend: {} (no GPU: {why})\n\n", solver.backend_name()),
        None => format!("backend: {}\n\n", solver.backend_name()),
    };
    let mut rows = vec![
        [
            "job", "function", "D", "Np", "run", "best f", "error", "gens", "time",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (rep, g) in reports.iter().zip(&groups) {
        let job = &g[0];
        for r in rep.results {
            rows.push(vec![
                rep.index.to_string(),
                job.info().name.to_string(),
                job.dim().to_string(),
                job.pop.to_string(),
                r.stream.to_string(),
                num(r.best_f),
                num(r.error),
                r.generations.to_string(),
                common::duration(r.elapsed),
            ]);
        }
    }
    s.push_str(&common::table(&rows, &[1]));
    let repeated: Vec<&JobReport> = reports.iter().filter(|r| r.results.len() > 1).collect();
    if !repeated.is_empty() {
        s.push('\n');
        for r in repeated {
            let m = &r.summary;
            s.push_str(&format!(
                "job {}: error mean {}, median {}, best {}, worst {}; {}/{} with error ≤ {}\n",
                r.index,
                num(m.mean_error),
                num(m.median_error),
                num(m.best_error),
                num(m.worst_error),
                m.successes,
                m.runs,
                num(m.threshold)
            ));
        }
    }
    Ok(s)
}

fn read(path: &Path) -> Result<(String, String)> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::usage(format!("cannot read stdin: {e}")))?;
        return Ok((text, "stdin".into()));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
    Ok((text, path.display().to_string()))
}

/// The jobs of a file, its format chosen by the extension, else by trying JSON first.
fn parse(text: &str, path: &Path) -> Result<Vec<JobSpec>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => parse_json(text),
        Some("toml") => parse_toml(text),
        _ => parse_json(text).or_else(|je| {
            parse_toml(text).map_err(|te| {
                CliError::usage(format!(
                    "neither JSON nor TOML.\nAs JSON: {}\nAs TOML: {}",
                    je.message, te.message
                ))
            })
        }),
    }
}

fn parse_json(text: &str) -> Result<Vec<JobSpec>> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| CliError::usage(format!("invalid JSON: {e}")))?;
    let items = match v {
        serde_json::Value::Array(a) => a,
        obj @ serde_json::Value::Object(_) => {
            serde_json::from_value::<BatchFile<serde_json::Value>>(obj)
                .map_err(|e| CliError::usage(e.to_string()))?
                .jobs
        }
        _ => {
            return Err(CliError::usage(
                "expected an array of jobs or an object {\"jobs\": [...]}",
            ));
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            serde_json::from_value(v).map_err(|e| CliError::usage(format!("job {i}: {e}")))
        })
        .collect()
}

fn parse_toml(text: &str) -> Result<Vec<JobSpec>> {
    let file: BatchFile<toml::Value> = toml::from_str(text)
        .map_err(|e| CliError::usage(format!("invalid TOML: {}", e.to_string().trim_end())))?;
    file.jobs
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.try_into::<JobSpec>()
                .map_err(|e| CliError::usage(format!("job {i}: {}", e.to_string().trim_end())))
        })
        .collect()
}
