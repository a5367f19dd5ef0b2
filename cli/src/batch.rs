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
use super::{CliError, Result};
use gpude::{Job, RunResult};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The largest job file.
pub const MAX_JOB_FILE_BYTES: u64 = MIB;

use crate::stats::DEFAULT_SUCCESS;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Job file (.json or .toml, a regular file of at most 1 MiB; `-` reads stdin).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Print the settings and results as JSON.
    #[arg(long)]
    pub json: bool,
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
        let mut jobs = spec.jobs(false).map_err(context)?;
        plans.push(islands::plan(spec, &mut jobs).map_err(context)?);
        groups.push(jobs);
    }
    // Islands and PSO run on the CPU engine: with any of them, the whole file does.
    let solver = if plans.iter().any(Option::is_some) {
        islands::open(&args.backend)?
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
                common::verified(r),
                r.generations.to_string(),
                common::duration(r.elapsed),
            ]);
        }
    }
    s.push_str(&common::table(&rows, &[1]));
    s.push_str(common::verified_legend(&results));
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

/// The keys of a job and the type each needs.
const KEYS: [(&str, &str); 34] = [
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
    ("algorithm", "de or pso"),
    ("islands", WHOLE32),
    ("migration_interval", WHOLE32),
    ("migrants", WHOLE32),
    ("topology", "ring, full or random"),
    ("emigrants", "best or random"),
    ("replace", "worst or random"),
    ("inertia", "a number"),
    ("c1", "a number"),
    ("c2", "a number"),
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

/// A JSON document (syntax errors give their line and column and kind only).
fn parse_json(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        CliError::usage(format!(
            "invalid JSON at line {} column {}: {}",
            e.line(),
            e.column(),
            json_category(&e)
        ))
    })
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
