//! `gpude eval`: evaluate a function at points from a file or stdin.
//!
//! Input is either rows of numbers (one point per line, separated by commas or
//! whitespace; blank lines and lines starting with `#` are skipped) or JSON (an array of
//! points, or one point as an array of numbers), recognised by a leading `[`. Values
//! that overflow print as `inf` (as `null` in JSON output).
//!
//! The input is at most [`MAX_POINTS_BYTES`]; messages about it say where (line, value
//! number) and what is wrong, never what the input holds.

use super::common;
use super::input::{self, MIB};
use super::{CliError, Result};
use gpude::{FunctionInfo, Precision};
use serde_json::Value;
use std::path::PathBuf;

/// The largest input of points.
pub const MAX_POINTS_BYTES: u64 = 64 * MIB;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Function to evaluate (see `gpude functions`).
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "expr",
        conflicts_with = "expr"
    )]
    pub function: Option<String>,

    /// An objective expression to evaluate instead (see `gpude functions`).
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    pub expr: Option<String>,

    /// File of points (a regular file of at most 64 MiB); `-` or nothing reads stdin
    /// (at most 64 MiB).
    #[arg(value_name = "FILE")]
    pub path: Option<PathBuf>,

    /// Arithmetic: f32 or f64.
    #[arg(long, default_value = "f64", value_name = "P")]
    pub precision: String,

    /// Objective formulas: exact or textbook (as printed).
    #[arg(long, default_value = "exact", value_name = "FORMULA")]
    pub formula: String,

    /// Print the values as a JSON array.
    #[arg(long)]
    pub json: bool,
}

/// A point and where it came from (`line 3`, `point 2`).
#[derive(Debug)]
pub(crate) struct Point {
    place: String,
    x: Vec<f64>,
}

pub fn run(args: Args) -> Result<String> {
    let objective = match (&args.function, &args.expr) {
        (_, Some(e)) => gpude::Objective::expr(e, None)?,
        (Some(f), None) => gpude::Objective::Builtin(FunctionInfo::parse(f)?.function),
        (None, None) => return Err(CliError::usage("give --function or --expr")),
    };
    let precision = Precision::parse(&args.precision)?;
    let formula = gpude::host::config::parse_formula(&args.formula)?;
    let (text, source) = input::read_text(args.path.as_deref(), MAX_POINTS_BYTES, "points")?;
    let points = parse_points(&text).map_err(|e| e.context(&source))?;
    let mut values = Vec::with_capacity(points.len());
    for p in &points {
        let v = match (&objective, objective.as_expr()) {
            (_, Some(e)) => {
                let need = e.min_dim() as usize;
                if p.x.len() < need {
                    return Err(CliError::usage(format!(
                        "{source}: {}: {} components is not allowed: the expression needs at least {need}",
                        p.place,
                        p.x.len()
                    )));
                }
                match precision {
                    Precision::F32 => {
                        let x: Vec<f32> = p.x.iter().map(|&v| v as f32).collect();
                        e.eval(&x) as f64
                    }
                    Precision::F64 => e.eval(&p.x),
                }
            }
            (gpude::Objective::Builtin(f), None) => {
                gpude::evaluate_as(*f, precision, formula, &p.x)
                    .map_err(|e| CliError::from(e).context(format!("{source}: {}", p.place)))?
            }
            _ => return Err(CliError::usage("this objective cannot be evaluated here")),
        };
        values.push(v);
    }
    if args.json {
        return match precision {
            Precision::F32 => {
                common::to_json(&values.iter().map(|&v| v as f32).collect::<Vec<f32>>())
            }
            Precision::F64 => common::to_json(&values),
        };
    }
    let mut out = String::new();
    for v in values {
        out.push_str(&match precision {
            Precision::F32 => common::exact(v as f32),
            Precision::F64 => common::exact(v),
        });
        out.push('\n');
    }
    Ok(out)
}

/// The points of an input text (rows or JSON).
pub(crate) fn parse_points(text: &str) -> Result<Vec<Point>> {
    if text.trim_start().starts_with(['[', '{']) {
        parse_json(text)
    } else {
        parse_rows(text)
    }
}

fn parse_rows(text: &str) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let place = format!("line {}", i + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = if line.contains(',') {
            line.split(',').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        let mut x = Vec::with_capacity(fields.len());
        for (j, t) in fields.iter().enumerate() {
            if t.is_empty() {
                return Err(CliError::usage(format!(
                    "{place}: value {} is empty",
                    j + 1
                )));
            }
            let v = t.parse::<f64>().map_err(|_| {
                CliError::usage(format!(
                    "{place}: value {} ({} characters) is not a number",
                    j + 1,
                    t.chars().count()
                ))
            })?;
            x.push(v);
        }
        points.push(Point { place, x });
    }
    Ok(points)
}

fn parse_json(text: &str) -> Result<Vec<Point>> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        CliError::usage(format!(
            "invalid JSON: {}",
            input::redact_quoted(&e.to_string())
        ))
    })?;
    let Value::Array(items) = v else {
        return Err(CliError::usage("JSON input must be an array"));
    };
    if items.is_empty() {
        return Ok(Vec::new());
    }
    if items[0].is_number() {
        let x = numbers(&items, "point 1")?;
        return Ok(vec![Point {
            place: "point 1".into(),
            x,
        }]);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let place = format!("point {}", i + 1);
            match item {
                Value::Array(a) => Ok(Point {
                    x: numbers(a, &place)?,
                    place,
                }),
                other => Err(CliError::usage(format!(
                    "{place}: {} is not an array of numbers (give an array of points, or one point as an array of numbers)",
                    kind(other)
                ))),
            }
        })
        .collect()
}

fn numbers(items: &[Value], place: &str) -> Result<Vec<f64>> {
    items
        .iter()
        .enumerate()
        .map(|(j, v)| {
            v.as_f64().ok_or_else(|| {
                CliError::usage(format!(
                    "{place}: value {} is {}, not a number",
                    j + 1,
                    kind(v)
                ))
            })
        })
        .collect()
}

/// What kind of JSON value `v` is (never what it holds).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A word that must never appear in a message.
    const MARK: &str = "QZXJ";

    /// Checks an error message: bounded, nothing of the input's marked word in it.
    fn bounded(m: &str) {
        assert!(m.chars().count() <= 300, "{m}");
        assert!(!m.contains(MARK), "{m}");
    }

    fn rows_with_mark() -> impl Strategy<Value = String> {
        (
            prop::collection::vec("[-+0-9.eE, \t#\\[\\]{}\"a-z]{0,12}", 0..6),
            "[A-Za-z0-9_:$]{0,40}",
            0usize..6,
        )
            .prop_map(|(mut parts, tail, at)| {
                let at = at.min(parts.len());
                parts.insert(at, format!("{MARK}{tail}"));
                parts.join("\n")
            })
    }

    proptest! {
        #[test]
        fn any_text_parses_or_fails_cleanly(text in "\\PC{0,200}") {
            if let Err(e) = parse_points(&text) {
                prop_assert!(e.message.chars().count() <= 300, "{}", e.message);
            }
        }

        #[test]
        fn any_bytes_parse_or_fail_cleanly(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(e) = parse_points(&text) {
                prop_assert!(e.message.chars().count() <= 300, "{}", e.message);
            }
        }

        #[test]
        fn errors_never_show_the_input(text in rows_with_mark()) {
            if let Err(e) = parse_points(&text) {
                bounded(&e.message);
            }
            // As JSON too: the same words inside an array of points.
            let json = format!("[[1, 2], [\"{}\", {text:?}]]", text.replace(['"', '\\'], ""));
            let e = parse_points(&json).expect_err("strings are not numbers");
            bounded(&e.message);
        }

        #[test]
        fn numbers_read_back(points in prop::collection::vec(
            prop::collection::vec(-1e300f64..1e300, 1..6), 1..5)) {
            let text: String = points
                .iter()
                .map(|p| p.iter().map(|v| format!("{v:e}")).collect::<Vec<_>>().join(", ") + "\n")
                .collect();
            let read = parse_points(&text).expect("valid rows");
            let back: Vec<Vec<f64>> = read.into_iter().map(|p| p.x).collect();
            prop_assert_eq!(back, points);
        }
    }

    #[test]
    fn deep_json_nesting_is_refused() {
        let deep = "[".repeat(100_000);
        let e = parse_points(&deep).expect_err("refused");
        assert!(e.message.contains("invalid JSON"), "{}", e.message);
    }
}
