//! `gpude eval`: evaluate a function (a built-in, a CEC 2017 function, an expression or
//! a PTX objective, on the GPU) at points from a file or stdin.
//!
//! Input is either rows of numbers (one point per line, separated by commas or
//! whitespace; blank lines and lines starting with `#` are skipped) or JSON (an array of
//! points, or one point as an array of numbers), recognised by a leading `[`. Every
//! point has the same number of values (`--dim`, else the first point's), each finite
//! and, in f32, within f32's range. Values that overflow print as `inf` (as `null` in
//! JSON output).
//!
//! The input is at most [`MAX_POINTS_BYTES`]; messages about it say where (line, column,
//! value number) and what is wrong, never the input's text (a number out of f32's range
//! is shown as the number it parsed to).

use super::common;
use super::input::{self, MIB};
use super::{CliError, Result};
use gpude::{FunctionInfo, Precision};
use serde_json::Value;
use serde_json::value::RawValue;
use std::path::PathBuf;

/// The largest input of points.
pub const MAX_POINTS_BYTES: u64 = 64 * MIB;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Function to evaluate: a built-in or cec2017-f1 … cec2017-f30 (see `gpude
    /// functions`).
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present_any = ["expr", "objective_ptx"],
        conflicts_with_all = ["expr", "objective_ptx"]
    )]
    pub function: Option<String>,

    /// An objective expression to evaluate instead (see `gpude functions`).
    #[arg(
        long,
        value_name = "EXPR",
        allow_hyphen_values = true,
        conflicts_with = "objective_ptx"
    )]
    pub expr: Option<String>,

    /// A PTX objective to evaluate instead, on the GPU (a module defining
    /// gpude_objective_f32 or _f64, as `gpude run --objective-ptx` takes; see `gpude
    /// functions`). Each point is one call of that function.
    #[arg(long, value_name = "FILE")]
    pub objective_ptx: Option<PathBuf>,

    /// The GPU that evaluates a PTX objective.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,

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

    /// The dimension every point must have (by default: the first point's). A CEC
    /// 2017 function takes 10, 30, 50 or 100, most also 2 and 20 (see `gpude functions`).
    #[arg(long, value_name = "D")]
    pub dim: Option<u32>,

    /// Print the values as a JSON array.
    #[arg(long)]
    pub json: bool,
}

/// A point and where its values are in the input text.
#[derive(Debug)]
pub(crate) struct Point {
    /// `line 3`, `point 2`.
    place: String,
    x: Vec<f64>,
    /// The byte offset in the text of each value.
    at: Vec<usize>,
    /// The byte offset just past the point's last value (rows) or of the point
    /// (JSON): where a missing value would be.
    end: usize,
}

/// Where byte `off` of `text` is, for a message about point `p`: `line 3, column 7`
/// (rows) or `point 2, line 1, column 9` (JSON).
fn place_at(text: &str, p: &Point, off: usize) -> String {
    let (l, c) = input::line_column(text, off);
    if p.place.starts_with("line ") {
        format!("line {l}, column {c}")
    } else {
        format!("{}, line {l}, column {c}", p.place)
    }
}

/// Where value `j` (from 0) of `p` is, with the value's number.
fn value_place(text: &str, p: &Point, j: usize) -> String {
    let off = p.at.get(j).copied().unwrap_or(p.end);
    format!("{}: value {}", place_at(text, p, off), j + 1)
}

/// What to evaluate.
enum Target {
    Builtin(gpude::Function),
    Expr(gpude::Objective),
    Cec(gpude::cec2017::FunctionId),
    Ptx(gpude::host::ptx_objective::PtxCode),
}

pub fn run(args: Args) -> Result<String> {
    let target = match (&args.function, &args.expr) {
        _ if args.objective_ptx.is_some() => Target::Ptx(common::read_ptx_objective(
            args.objective_ptx
                .as_deref()
                .unwrap_or(std::path::Path::new("")),
        )?),
        (_, Some(e)) => Target::Expr(gpude::Objective::expr(e, None)?),
        (Some(f), None) if gpude::cec2017::is_cec2017_name(f.trim()) => {
            Target::Cec(gpude::cec2017::FunctionId::parse(f.trim())?)
        }
        (Some(f), None) => Target::Builtin(FunctionInfo::parse(f)?.function),
        (None, None) => {
            return Err(CliError::usage(
                "give --function, --expr or --objective-ptx",
            ));
        }
    };
    let precision = Precision::parse(&args.precision)?;
    let formula = gpude::host::config::parse_formula(&args.formula)?;
    if args.dim == Some(0) {
        return Err(CliError::usage(
            "--dim = 0 is not allowed: a whole number ≥ 1",
        ));
    }
    let (text, source) = input::read_text(args.path.as_deref(), MAX_POINTS_BYTES, "points")?;
    let points = parse_points(&text).map_err(|e| e.context(&source))?;
    let dim = check_points(&text, &points, args.dim, precision).map_err(|e| e.context(&source))?;
    let Some(dim) = dim else {
        return finish(&args, precision, Vec::new());
    };
    let cec = match &target {
        Target::Cec(id) => {
            // The dimension first: a wrong one is refused without looking for the data.
            if let Err(e) = id.check_dim(dim) {
                let shown = match args.dim {
                    Some(_) => "--dim".to_string(),
                    None => format!("{source}: {}", points[0].place),
                };
                return Err(CliError::from(e).context(shown));
            }
            let data_source = gpude::cec2017::DataSource::locate(None)?;
            Some(gpude::cec2017::FunctionData::load(&data_source, *id, dim)?)
        }
        _ => None,
    };
    if let Target::Expr(o) = &target
        && let Some(e) = o.as_expr()
    {
        let need = e.min_dim() as usize;
        if dim < need {
            let shown = match args.dim {
                Some(_) => format!("--dim = {dim}"),
                None => format!("{source}: {}: {dim} values", points[0].place),
            };
            return Err(CliError::usage(format!(
                "{shown} is not allowed: the expression needs at least {need}"
            )));
        }
    }
    if let Target::Ptx(code) = &target {
        let values = evaluate_ptx(code, args.device, precision, dim, &points)?;
        return finish(&args, precision, values);
    }
    let mut values = Vec::with_capacity(points.len());
    for p in &points {
        let v = match &target {
            Target::Expr(o) => match (o.as_expr(), precision) {
                (None, _) => {
                    return Err(CliError::usage("this objective cannot be evaluated here"));
                }
                (Some(e), Precision::F32) => {
                    let x: Vec<f32> = p.x.iter().map(|&v| v as f32).collect();
                    e.eval(&x) as f64
                }
                (Some(e), Precision::F64) => e.eval(&p.x),
            },
            Target::Builtin(f) => gpude::evaluate_as(*f, precision, formula, &p.x)
                .map_err(|e| CliError::from(e).context(format!("{source}: {}", p.place)))?,
            Target::Cec(_) => match (&cec, precision) {
                (None, _) => return Err(CliError::runtime("the CEC 2017 data were not loaded")),
                (Some(d), Precision::F32) => {
                    let x: Vec<f32> = p.x.iter().map(|&v| v as f32).collect();
                    d.evaluate_f32(&x) as f64
                }
                (Some(d), Precision::F64) => d.evaluate(&p.x),
            },
            Target::Ptx(_) => {
                return Err(CliError::runtime(
                    "a PTX objective is evaluated on the GPU, all points at once",
                ));
            }
        };
        values.push(v);
    }
    finish(&args, precision, values)
}

/// The values of the PTX objective `code` at `points` (each of `dim` values), all in one
/// launch on GPU `device`.
fn evaluate_ptx(
    code: &gpude::host::ptx_objective::PtxCode,
    device: usize,
    precision: Precision,
    dim: usize,
    points: &[Point],
) -> Result<Vec<f64>> {
    let d = u32::try_from(dim)
        .map_err(|_| CliError::usage(format!("{dim} values a point: at most {}", u32::MAX)))?;
    let engine = gpude::cuda_engine(device, 1).map_err(|e| {
        CliError::from(e).context("--objective-ptx is evaluated on the GPU, and none could be used")
    })?;
    let flat: Vec<f64> = points.iter().flat_map(|p| p.x.iter().copied()).collect();
    Ok(match precision {
        Precision::F32 => engine.evaluate_ptx::<f32>(code, d, &flat)?,
        Precision::F64 => engine.evaluate_ptx::<f64>(code, d, &flat)?,
    })
}

/// Checks that every point has the same number of values (`dim` when given), each
/// finite and, for f32 arithmetic, within f32's range. Returns the dimension (`None`
/// without points).
fn check_points(
    text: &str,
    points: &[Point],
    dim: Option<u32>,
    precision: Precision,
) -> Result<Option<usize>> {
    let Some(first) = points.first() else {
        return Ok(dim.map(|d| d as usize));
    };
    let want = dim.map_or(first.x.len(), |d| d as usize);
    for p in points {
        let n = p.x.len();
        if n != want {
            let why = match dim {
                Some(_) => format!("--dim is {want}"),
                None => format!(
                    "{} has {want} (every point needs the same number; --dim sets it)",
                    first.place
                ),
            };
            // Where the first value too many is, or where a missing one would be.
            let at = match p.at.get(want) {
                Some(&off) => place_at(text, p, off),
                None => place_at(text, p, p.end),
            };
            return Err(CliError::usage(format!("{at}: {n} values, but {why}")));
        }
        for (j, &v) in p.x.iter().enumerate() {
            if !v.is_finite() {
                let what = if v.is_nan() { "NaN" } else { "infinite" };
                return Err(CliError::usage(format!(
                    "{} is {what}: a finite number is needed",
                    value_place(text, p, j)
                )));
            }
            if precision == Precision::F32 && !(v as f32).is_finite() {
                return Err(CliError::usage(format!(
                    "{} = {v:e} is not allowed with --precision f32: a number representable in f32 (magnitude at most {:e}); use --precision f64",
                    value_place(text, p, j),
                    f32::MAX
                )));
            }
        }
    }
    Ok(Some(want))
}

/// The values as text (one a line) or a JSON array.
fn finish(args: &Args, precision: Precision, values: Vec<f64>) -> Result<String> {
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

/// Byte offset of `part`, a slice of `text`, in it.
fn offset(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

fn parse_rows(text: &str) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let place = format!("line {}", i + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = if line.contains(',') {
            line.split(',').map(str::trim).collect()
        } else {
            line.split_whitespace().collect()
        };
        let mut x = Vec::with_capacity(fields.len());
        let mut at = Vec::with_capacity(fields.len());
        for (j, t) in fields.iter().enumerate() {
            let (l, c) = input::line_column(raw, offset(raw, t));
            debug_assert_eq!(l, 1);
            if t.is_empty() {
                return Err(CliError::usage(format!(
                    "{place}, column {c}: value {} is empty",
                    j + 1
                )));
            }
            let v = t.parse::<f64>().map_err(|_| {
                CliError::usage(format!(
                    "{place}, column {c}: value {} ({} characters) is not a number",
                    j + 1,
                    t.chars().count()
                ))
            })?;
            x.push(v);
            at.push(offset(text, t));
        }
        let end = offset(text, line) + line.len();
        points.push(Point { place, x, at, end });
    }
    Ok(points)
}

fn parse_json(text: &str) -> Result<Vec<Point>> {
    let invalid = |e: serde_json::Error| {
        CliError::usage(format!(
            "invalid JSON: {}",
            input::redact_quoted(&e.to_string())
        ))
    };
    let items: Vec<&RawValue> = match serde_json::from_str(text) {
        Ok(items) => items,
        Err(e) => {
            return Err(match serde_json::from_str::<Value>(text) {
                Ok(Value::Array(_)) | Err(_) => invalid(e),
                Ok(_) => CliError::usage("JSON input must be an array"),
            });
        }
    };
    let Some(first) = items.first() else {
        return Ok(Vec::new());
    };
    if first
        .get()
        .starts_with(|c: char| c == '-' || c.is_ascii_digit())
    {
        let place = "point 1".to_string();
        let (x, at) = numbers(text, &items, &place)?;
        return Ok(vec![Point {
            place,
            x,
            at,
            end: offset(text, first.get()),
        }]);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let place = format!("point {}", i + 1);
            let start = offset(text, item.get());
            match serde_json::from_str::<Vec<&RawValue>>(item.get()) {
                Ok(a) => {
                    let (x, at) = numbers(text, &a, &place)?;
                    Ok(Point { place, x, at, end: start })
                }
                Err(_) => {
                    let (l, c) = input::line_column(text, start);
                    Err(CliError::usage(format!(
                        "{place}, line {l}, column {c}: {} is not an array of numbers (give an array of points, or one point as an array of numbers)",
                        kind_of_raw(item)
                    )))
                }
            }
        })
        .collect()
}

/// The numbers of a JSON array and their offsets in `text`.
fn numbers(text: &str, items: &[&RawValue], place: &str) -> Result<(Vec<f64>, Vec<usize>)> {
    let mut x = Vec::with_capacity(items.len());
    let mut at = Vec::with_capacity(items.len());
    for (j, raw) in items.iter().enumerate() {
        let off = offset(text, raw.get());
        let v = serde_json::from_str::<Value>(raw.get())
            .ok()
            .and_then(|v| v.as_f64())
            .ok_or_else(|| {
                let (l, c) = input::line_column(text, off);
                CliError::usage(format!(
                    "{place}, line {l}, column {c}: value {} is {}, not a number",
                    j + 1,
                    kind_of_raw(raw)
                ))
            })?;
        x.push(v);
        at.push(off);
    }
    Ok((x, at))
}

/// What kind of JSON value a raw value is (never what it holds).
fn kind_of_raw(raw: &RawValue) -> &'static str {
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(v) => kind(&v),
        Err(_) => "a number out of range",
    }
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
