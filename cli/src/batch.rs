//! `gpude batch FILE`: run a list of jobs from a JSON or TOML file.
//!
//! JSON: an array of jobs, or `{"jobs": [...]}`. TOML: `[[jobs]]` tables. Each job has
//! the keys of [`JobSpec`]; `repetitions` (or `runs`) expands to streams 0 … n−1.
//!
//! A job file is at most [`MAX_JOB_FILE_BYTES`]. Messages about it give the line and
//! column and the kind of problem (or the job, the key and the type it needs), never
//! the values it holds.

use super::common::{self, BackendArgs, JobSpec, Summary, num};
use super::input::{self, MIB};
use super::islands;
use super::{CliError, Result, plot_runs};
use gpude::{Archipelago, Job, RunResult};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The largest job file.
pub const MAX_JOB_FILE_BYTES: u64 = MIB;

use crate::stats::DEFAULT_SUCCESS;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The job file's format, every key and an example: gpude batch --help",
    after_long_help = long_help()
)]
pub struct Args {
    /// Job file (.json or .toml, a regular file of at most 1 MiB; `-` reads stdin).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Print the settings and results as JSON.
    #[arg(long)]
    pub json: bool,

    /// Draw every run's best error against the generations into FILE (.png or .svg),
    /// the runs of all jobs overlaid (more than 8: their median in the band from the
    /// best to the worst).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report<'a> {
    backend: &'static str,
    fallback_reason: Option<&'a str>,
    /// Wall time of every run of the file (s), the reports after it left out.
    wall_s: f64,
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
    let (text, name) = input::read_text(Some(&args.file), MAX_JOB_FILE_BYTES, "a job file")?;
    let specs = parse(&text, &args.file).map_err(|e| e.context(&name))?;
    if specs.is_empty() {
        return Err(CliError::usage(format!("{name}: the file lists no jobs")));
    }
    // Every job is checked before anything runs.
    let mut groups: Vec<Vec<Job>> = Vec::with_capacity(specs.len());
    let mut plans = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let context = |e: CliError| e.context(format!("{name}: job {i}"));
        islands::check_flags(spec).map_err(context)?;
        let mut jobs = spec.jobs(args.plot.is_some()).map_err(context)?;
        plans.push(islands::plan(spec, &mut jobs).map_err(context)?);
        groups.push(jobs);
    }
    if let Some(p) = &args.plot {
        plot_runs::check(p)?;
        if specs.len() > plot_runs::MAX_GROUPS {
            return Err(CliError::usage(format!(
                "--plot draws at most {} jobs (a colour each); {name} lists {}",
                plot_runs::MAX_GROUPS,
                specs.len()
            )));
        }
    }
    // With islands or PSO, the whole file runs on the engine that runs them.
    let solver = if plans.iter().any(Option::is_some) {
        let archs: Vec<Archipelago> = plans.iter().flatten().flatten().cloned().collect();
        islands::open(&args.backend, &archs)?
    } else {
        let all: Vec<Job> = groups.iter().flatten().cloned().collect();
        args.backend.open_for(&all)?
    };
    let all: Vec<Job> = groups
        .iter()
        .zip(&plans)
        .filter(|(_, p)| p.is_none())
        .flat_map(|(g, _)| g.iter().cloned())
        .collect();
    let start = std::time::Instant::now();
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
    let wall = start.elapsed();
    if let Some(path) = &args.plot {
        let mut curves = Vec::with_capacity(groups.len());
        let mut at = 0;
        for (i, g) in groups.iter().enumerate() {
            curves.push(plot_runs::Group {
                label: format!("job {i}"),
                runs: g
                    .iter()
                    .enumerate()
                    .map(|(k, job)| plot_runs::Curve {
                        label: format!("job {i}, run {k}"),
                        history: results[at + k].history.as_deref().unwrap_or(&[]),
                        reference: job.objective().reference(),
                    })
                    .collect(),
            });
            at += g.len();
        }
        let title = format!(
            "{}: best error per generation ({} runs of {} jobs)",
            name,
            results.len(),
            groups.len()
        );
        plot_runs::write(path, title, &curves)?;
        // The history was recorded for the plot only.
        for r in &mut results {
            r.history = None;
        }
    }
    // A run whose best is not finite fails the batch (exit code 1), naming the job.
    let mut at = 0;
    for (i, g) in groups.iter().enumerate() {
        if let Some((k, e)) = common::failed_run(&results[at..at + g.len()]) {
            return Err(match g.len() {
                1 => e.context(format!("{name}: job {i}")),
                _ => e.context(format!("{name}: job {i}, run {k}")),
            });
        }
        at += g.len();
    }
    let mut reports = Vec::with_capacity(groups.len());
    let mut at = 0;
    for (i, ((g, spec), plan)) in groups.iter().zip(&specs).zip(&plans).enumerate() {
        let rs = &results[at..at + g.len()];
        at += g.len();
        // Successes are judged on the verified errors.
        let errors: Vec<f64> = rs.iter().map(|r| r.verified_error).collect();
        let mut job = JobSpec::resolved(&g[0], g.len() as u32, spec.max_evals);
        if let Some(archs) = plan {
            islands::resolve(&mut job, &archs[0]);
        }
        reports.push(JobReport {
            index: i,
            job,
            results: rs,
            summary: Summary::of(&errors, g[0].target().unwrap_or(DEFAULT_SUCCESS)),
        });
    }
    if args.json {
        return common::to_json(&Report {
            backend: solver.backend_name(),
            fallback_reason: solver.fallback_reason(),
            wall_s: wall.as_secs_f64(),
            jobs: reports,
        });
    }
    let mut s = match solver.fallback_reason() {
        Some(why) => format!("backend: {} (no GPU: {why})\n\n", solver.backend_name()),
        None => format!("backend: {}\n\n", solver.backend_name()),
    };
    let mut rows = vec![
        [
            "job", "function", "D", "Np", "run", "best f", "error", "verified", "gens", "time",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (rep, g) in reports.iter().zip(&groups) {
        let job = &g[0];
        for r in rep.results {
            rows.push(vec![
                rep.index.to_string(),
                job.objective().name(),
                job.dim().to_string(),
                job.pop().to_string(),
                r.stream.to_string(),
                num(r.best_f),
                num(r.error),
                common::verified(r, rep.summary.threshold),
                r.generations.to_string(),
                common::duration(r.elapsed),
            ]);
        }
    }
    s.push_str(&common::table(&rows, &[1]));
    s.push_str(&common::verified_legend(reports.iter().flat_map(|rep| {
        rep.results.iter().map(|r| (r, rep.summary.threshold))
    })));
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

/// The jobs of a file, its format chosen by the extension, else by trying JSON first.
pub(crate) fn parse(text: &str, path: &Path) -> Result<Vec<JobSpec>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let top = match ext.as_deref() {
        Some("json") => parse_json(text)?,
        Some("toml") => parse_toml(text)?,
        _ => parse_json(text).or_else(|je| {
            parse_toml(text).map_err(|te| {
                CliError::usage(format!(
                    "neither JSON nor TOML.\nAs JSON: {}\nAs TOML: {}",
                    je.message, te.message
                ))
            })
        })?,
    };
    let items = match top {
        Value::Array(a) => a,
        Value::Object(mut obj) => {
            let others = obj.keys().filter(|k| *k != "jobs").count();
            match obj.remove("jobs") {
                Some(Value::Array(a)) if others == 0 => a,
                Some(Value::Array(_)) => {
                    return Err(CliError::usage(format!(
                        "only `jobs` is allowed at the top level ({others} other keys found)"
                    )));
                }
                Some(_) => return Err(CliError::usage("`jobs` must be an array of jobs")),
                None => {
                    return Err(CliError::usage(
                        "no `jobs`: give an array of jobs, {\"jobs\": [...]} or [[jobs]] tables",
                    ));
                }
            }
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
        .map(|(i, v)| job_spec(v).map_err(|e| e.context(format!("job {i}"))))
        .collect()
}

/// What each key of a job means, in the order of [`KEYS`].
const MEANINGS: [(&str, &str); 40] = [
    (
        "function",
        "a built-in or cec2017-f1 … cec2017-f30 (see `gpude functions`)",
    ),
    (
        "expr",
        "objective written as an expression (needs lower and upper)",
    ),
    (
        "objective_ptx",
        "objective compiled to PTX (GPU only; needs lower and upper)",
    ),
    ("min", "the expression's or PTX objective's known minimum"),
    (
        "dim",
        "dimension D (may be left out when lower/upper list every component)",
    ),
    (
        "lower",
        "lower bound(s) [default: the function's usual domain]",
    ),
    (
        "upper",
        "upper bound(s) [default: the function's usual domain]",
    ),
    ("pop", "population size Np [default: 10·D, at least 32]"),
    ("generations", "most generations [default: 1000]"),
    ("gens", "the same as generations"),
    ("max_evals", "evaluation budget (Np + Np·G ≤ budget)"),
    ("max_evaluations", "the same as max_evals"),
    (
        "target",
        "stop once the error (best f − minimum) is at most this",
    ),
    (
        "tol",
        "stop once the standard deviation of the population's values\n\
         is at most atol + tol·|mean| (SciPy's tol)",
    ),
    ("atol", "the absolute part of the tol test (SciPy's atol)"),
    (
        "stagnation",
        "stop once the best has not improved in this many generations",
    ),
    (
        "check_every",
        "generations between looks at tol, atol and stagnation,\n\
         the same on the CPU and the GPU [default: 32]",
    ),
    (
        "strategy",
        "classic: thesis, rand1, best1, current-to-best1, rand2, best2\n\
         (a crossover may follow: rand1exp);\n\
         adaptive: jde, jade, shade, lshade, jso [default: thesis]",
    ),
    ("crossover", "bin or exp [default: bin]"),
    ("bounds", "init-only, clip, reflect, resample or midpoint"),
    ("f", "scale factor F, in (0, 2] [default: 0.5]"),
    ("cr", "crossover rate Cr, in [0, 1] [default: 0.9]"),
    ("seed", "random seed [default: 0]"),
    ("precision", "f32 or f64 [default: f32]"),
    ("formula", "exact or textbook [default: exact]"),
    (
        "thesis_variant",
        "alternatives to the thesis strategy (see `gpude run --help`)",
    ),
    (
        "repetitions",
        "independent runs, streams 0 … n−1 of the seed [default: 1]",
    ),
    ("runs", "the same as repetitions"),
    ("algorithm", "de, pso or ga [default: de]"),
    ("islands", "islands per run"),
    ("migration_interval", "generations between migrations"),
    (
        "migrants",
        "individuals each island sends per migration [default: 1]",
    ),
    ("topology", "ring, full or random [default: ring]"),
    ("emigrants", "best or random [default: best]"),
    ("replace", "worst or random [default: worst]"),
    (
        "inertia",
        "PSO's inertia weight w, in [0, 2] [default: 0.8]",
    ),
    (
        "c1",
        "PSO's confidence in the particle's own best [default: 1.62]",
    ),
    ("c2", "PSO's confidence in the swarm's best [default: 1.62]"),
    (
        "crossover_probability",
        "the GA's crossover probability, in [0, 1] [default: 0.16]",
    ),
    (
        "mutation_probability",
        "the GA's mutation probability, in [0, 1] [default: 0.7]",
    ),
];

/// The example in `gpude batch --help` (the first jobs of examples/batch.toml).
const EXAMPLE: &str = r#"  # jobs.toml
  [[jobs]]
  function = "rastrigin"
  dim = 10
  generations = 200
  repetitions = 3

  [[jobs]]
  function = "sphere"
  dim = 5
  lower = -2
  upper = [2, 2, 2, 2, 3]
  strategy = "best1bin"
  max_evals = 20000
  precision = "f64"

  [[jobs]]
  expr = "sum(x^2) + 1"
  min = 1
  dim = 4
  lower = -5
  upper = 5
  generations = 100

  # or as JSON (jobs.json):
  # {"jobs": [{"function": "rastrigin", "dim": 10, "generations": 200}]}"#;

/// The long help of `gpude batch`: the format, every key with its type and meaning, and
/// an example.
fn long_help() -> String {
    let mut s = String::from(
        "The job file is TOML with one [[jobs]] table per job, or JSON: an array of jobs
or {\"jobs\": [...]}. The extension .toml or .json chooses the format; without one,
JSON is tried first. Every job names its objective (function, expr or objective_ptx)
and its dimension (dim, or bounds that list every component); every other key takes
the default of `gpude run`. Give each key once in a job; unknown keys are errors.

Keys (with the type each takes):
",
    );
    for ((key, needs), (_, meaning)) in KEYS.iter().zip(MEANINGS.iter()) {
        let meaning = meaning.replace('\n', &format!("\n  {:<19} ", ""));
        s.push_str(&format!("  {key:<19} {meaning}\n  {:<19} ({needs})\n", ""));
    }
    s.push_str(
        "
lower and upper take one number for every component, or an array of one per
component. Every job is checked before any runs. Jobs that can share a GPU launch do;
with islands or PSO the whole file runs on the engine that runs them.

Example:
",
    );
    s.push_str(EXAMPLE);
    s.push('\n');
    s
}

/// The keys of a job and the type each needs.
const KEYS: [(&str, &str); 40] = [
    ("function", "a function name"),
    ("expr", "an expression (a string)"),
    ("objective_ptx", "the path of a PTX file (a string)"),
    ("min", "a number"),
    ("dim", WHOLE32),
    ("lower", "a number or an array of numbers"),
    ("upper", "a number or an array of numbers"),
    ("pop", WHOLE32),
    ("generations", WHOLE32),
    ("gens", WHOLE32),
    ("max_evals", WHOLE64),
    ("max_evaluations", WHOLE64),
    ("target", "a number"),
    ("tol", "a number"),
    ("atol", "a number"),
    ("stagnation", WHOLE32),
    ("check_every", WHOLE32),
    ("strategy", "a strategy name"),
    ("crossover", "a crossover name"),
    ("bounds", "a bound policy name"),
    ("f", "a number"),
    ("cr", "a number"),
    ("seed", WHOLE64),
    ("precision", "f32 or f64"),
    ("formula", "exact or textbook"),
    (
        "thesis_variant",
        "a thesis variant such as indices=rejection,mutation=fma",
    ),
    ("repetitions", WHOLE32),
    ("runs", WHOLE32),
    ("algorithm", "de, pso or ga"),
    ("islands", WHOLE32),
    ("migration_interval", WHOLE32),
    ("migrants", WHOLE32),
    ("topology", "ring, full or random"),
    ("emigrants", "best or random"),
    ("replace", "worst or random"),
    ("inertia", "a number"),
    ("c1", "a number"),
    ("c2", "a number"),
    ("crossover_probability", "a number"),
    ("mutation_probability", "a number"),
];
const WHOLE32: &str = "a whole number in 0 ..= 4294967295";
const WHOLE64: &str = "a whole number ≥ 0";

/// One job from its JSON value: every key known and of the right type, checked one by
/// one so that a message names the key, not the value.
fn job_spec(v: Value) -> Result<JobSpec> {
    let Value::Object(obj) = v else {
        return Err(CliError::usage("a job must be an object (a table in TOML)"));
    };
    for (key, value) in &obj {
        let Some((_, needs)) = KEYS.iter().find(|(k, _)| k == key) else {
            let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err(CliError::usage(format!(
                "unknown key `{}`; known: {}",
                input::clip(key),
                known.join(", ")
            )));
        };
        let mut one = Map::new();
        one.insert(key.clone(), value.clone());
        if key != "function" {
            one.insert("function".into(), Value::String(String::new()));
        }
        if serde_json::from_value::<JobSpec>(Value::Object(one)).is_err() {
            return Err(CliError::usage(format!("`{key}` must be {needs}")));
        }
    }
    if !["function", "expr", "objective_ptx"]
        .iter()
        .any(|k| obj.contains_key(*k))
    {
        return Err(CliError::usage(
            "`function` is missing (or give an expression: `expr`, or a PTX file: `objective_ptx`)",
        ));
    }
    let aliases = [
        ("generations", "gens"),
        ("max_evals", "max_evaluations"),
        ("repetitions", "runs"),
    ];
    for (a, b) in aliases {
        if obj.contains_key(a) && obj.contains_key(b) {
            return Err(CliError::usage(format!("give `{a}` or `{b}`, not both")));
        }
    }
    serde_json::from_value(Value::Object(obj))
        .map_err(|_| CliError::usage("the settings cannot be read"))
}

/// A JSON document (syntax errors give their line and column and kind only; a key given
/// twice in one object is an error, where serde_json would keep the last).
fn parse_json(text: &str) -> Result<Value> {
    serde_json::from_str(text).map(|Strict(v)| v).map_err(|e| {
        CliError::usage(format!(
            "invalid JSON at line {} column {}: {}",
            e.line(),
            e.column(),
            json_category(&e)
        ))
    })
}

/// A JSON value read with every object's keys distinct.
struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if obj.contains_key(&key) {
                // Only the names gpude knows are shown: the file's own text never is.
                let known = key == "jobs" || KEYS.iter().any(|(k, _)| *k == key);
                let m = if known {
                    format!("the key {key} is given twice (each key once in an object)")
                } else {
                    "a key is given twice (each key once in an object)".to_string()
                };
                return Err(serde::de::Error::custom(m));
            }
            let Strict(v) = map.next_value()?;
            obj.insert(key, v);
        }
        Ok(Value::Object(obj))
    }
}

/// The kind of a JSON error, without the position serde_json appends.
fn json_category(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let bare = match full.rfind(" at line ") {
        Some(at) => &full[..at],
        None => &full,
    };
    input::redact_quoted(bare)
}

/// A TOML document as JSON values (syntax errors give their line and column and kind
/// only).
fn parse_toml(text: &str) -> Result<Value> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| input::line_column(text, s.start))
            .map(|(l, c)| format!(" at line {l} column {c}"))
            .unwrap_or_default();
        CliError::usage(format!(
            "invalid TOML{at}: {}",
            input::redact_quoted(e.message())
        ))
    })?;
    Ok(Value::Object(
        table
            .into_iter()
            .map(|(k, v)| Ok((k, json_of_toml(v)?)))
            .collect::<Result<Map<String, Value>>>()?,
    ))
}

/// A TOML value as JSON; infinities, NaN and dates have no JSON form and are refused.
fn json_of_toml(v: toml::Value) -> Result<Value> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| CliError::usage(format!("{f} is not allowed: a finite number")))?,
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(_) => {
            return Err(CliError::usage("dates are not allowed in a job file"));
        }
        toml::Value::Array(a) => {
            Value::Array(a.into_iter().map(json_of_toml).collect::<Result<_>>()?)
        }
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, v)| Ok((k, json_of_toml(v)?)))
                .collect::<Result<_>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A word that must never appear in a message.
    const MARK: &str = "QZXJ";

    fn bounded(m: &str) {
        assert!(m.chars().count() <= 600, "{m}");
        assert!(!m.contains(MARK), "{m}");
    }

    fn paths() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["jobs.json", "jobs.toml", "jobs", "JOBS.TOML"])
    }

    /// A value holding the marked word somewhere.
    fn marked_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            "[a-z0-9]{0,20}".prop_map(|s| Value::String(format!("{MARK}{s}"))),
            any::<i64>().prop_map(Value::from),
            any::<bool>().prop_map(Value::Bool),
            Just(Value::Null),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z_]{1,12}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "\\PC{0,300}", path in paths()) {
            if let Err(e) = parse(&text, Path::new(path)) {
                prop_assert!(e.message.chars().count() <= 600, "{}", e.message);
            }
        }

        #[test]
        fn any_bytes_parse_or_fail_cleanly(
            bytes in prop::collection::vec(any::<u8>(), 0..400),
            path in paths(),
        ) {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(e) = parse(&text, Path::new(path)) {
                prop_assert!(e.message.chars().count() <= 600, "{}", e.message);
            }
        }

        #[test]
        fn values_are_never_shown(
            key in prop::sample::select(KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>()),
            value in marked_value(),
            path in paths(),
        ) {
            // A known key with any value: JSON, and TOML where the value has a TOML form.
            let job = serde_json::json!({"jobs": [{"function": "sphere", key: value}]});
            if let Err(e) = parse(&job.to_string(), Path::new(path)) {
                bounded(&e.message);
            }
            let mut table = toml::Table::new();
            if let Ok(v) = toml::Value::try_from(&value) {
                let mut one = toml::Table::new();
                one.insert("function".into(), toml::Value::String("sphere".into()));
                one.insert(key.into(), v);
                table.insert("jobs".into(), toml::Value::Array(vec![toml::Value::Table(one)]));
                if let Ok(text) = toml::to_string(&table)
                    && let Err(e) = parse(&text, Path::new("jobs.toml"))
                {
                    bounded(&e.message);
                }
            }
        }

        #[test]
        fn broken_files_never_show_their_text(
            prefix in "[\\[\\]{}=\",: a-z0-9\n]{0,40}",
            tail in "[A-Za-z0-9:$]{0,30}",
            path in paths(),
        ) {
            let text = format!("{prefix}{MARK}{tail}");
            if let Err(e) = parse(&text, Path::new(path)) {
                bounded(&e.message);
            }
        }
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let deep = format!("{}1{}", "[".repeat(50_000), "]".repeat(50_000));
        assert!(parse(&deep, Path::new("jobs.json")).is_err());
        let deep = format!("a = {}1{}", "[".repeat(50_000), "]".repeat(50_000));
        assert!(parse(&deep, Path::new("jobs.toml")).is_err());
        let deep = format!("a = {}1{}", "{b = ".repeat(50_000), "}".repeat(50_000));
        assert!(parse(&deep, Path::new("jobs.toml")).is_err());
    }

    #[test]
    fn the_help_explains_every_key() {
        let help = long_help();
        for ((key, _), (meant, _)) in KEYS.iter().zip(MEANINGS.iter()) {
            assert_eq!(key, meant, "MEANINGS follows KEYS");
            assert!(help.contains(&format!("\n  {key} ")), "{key} missing");
        }
    }

    #[test]
    fn the_help_example_reads() {
        let text: String = EXAMPLE
            .lines()
            .map(|l| l.strip_prefix("  ").unwrap_or(l))
            .map(|l| format!("{l}\n"))
            .collect();
        let jobs = parse(&text, Path::new("jobs.toml")).expect("the example reads");
        assert_eq!(jobs.len(), 3);
        for j in &jobs {
            j.jobs(false).expect("a valid job");
        }
        let json = text
            .lines()
            .find_map(|l| l.strip_prefix("# {"))
            .map(|l| format!("{{{l}"))
            .expect("a JSON line");
        assert_eq!(
            parse(&json, Path::new("jobs.json")).expect("reads").len(),
            1
        );
    }

    #[test]
    fn duplicate_keys_are_refused_with_their_place() {
        let e = parse(
            "{\"jobs\": [{\"function\": \"sphere\",\n \"dim\": 3, \"dim\": 4}]}",
            Path::new("jobs.json"),
        )
        .expect_err("refused");
        assert!(e.message.contains("line 2 column"), "{}", e.message);
        assert!(
            e.message.contains("the key dim is given twice"),
            "{}",
            e.message
        );
        let e = parse(
            &format!("[{{\"function\": \"sphere\", \"{MARK}\": 1, \"{MARK}\": 2}}]"),
            Path::new("jobs"),
        )
        .expect_err("refused");
        assert!(e.message.contains("a key is given twice"), "{}", e.message);
        bounded(&e.message);
        let e = parse(
            "[[jobs]]\nfunction = \"sphere\"\ndim = 3\ndim = 4\n",
            Path::new("jobs.toml"),
        )
        .expect_err("refused");
        assert!(e.message.contains("line 4"), "{}", e.message);
    }

    #[test]
    fn good_files_read() {
        let jobs = parse(
            r#"{"jobs": [{"function": "sphere", "dim": 3, "lower": [-1, -2, -3], "f": 0.5}]}"#,
            Path::new("x"),
        )
        .expect("valid");
        assert_eq!(jobs[0].dim, Some(3));
        let jobs = parse(
            "[[jobs]]\nfunction = \"ackley\"\ngens = 4\n",
            Path::new("x.toml"),
        )
        .expect("valid");
        assert_eq!(jobs[0].generations, Some(4));
        let e = parse(
            "[[jobs]]\nfunction = \"ackley\"\nf = nan\n",
            Path::new("x.toml"),
        )
        .expect_err("NaN refused");
        assert!(e.message.contains("finite"), "{}", e.message);
        let e = parse(
            r#"[{"function": "ackley", "gens": 3, "generations": 4}]"#,
            Path::new("x"),
        )
        .expect_err("both refused");
        assert!(e.message.contains("not both"), "{}", e.message);
    }
}
