//! The files of a thesis reproduction: `runs.json`, `histories.json`, one convergence plot
//! per function and arithmetic, and `REPORT.md`.

use super::cases::{Arithmetic, Scheme};
use super::published;
use super::report::report_markdown;
use super::runner::{CaseResult, Context, Curve, Failures, Reproduction, RunRecord, Stats};
use crate::plot::{Chart, Corner, Line, LogAxis};
use gpude::host::config::variant_name;
use gpude::{Error, Function, FunctionInfo, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The files [`write`] made.
#[derive(Clone, Debug)]
pub struct Written {
    pub report: PathBuf,
    pub runs: PathBuf,
    pub histories: PathBuf,
    pub plots: Vec<PathBuf>,
}

/// One convergence plot.
#[derive(Clone, Debug)]
pub(super) struct Plot {
    pub(super) function: Function,
    pub(super) arithmetic: Arithmetic,
    pub(super) png: String,
    pub(super) svg: String,
    /// Plotted values (median and quartiles) that were ≤ 0, drawn on the bottom line.
    pub(super) clamped: usize,
    pub(super) values: usize,
}

/// Writes `runs.json`, `histories.json`, the plots and `REPORT.md` into `dir` (made if
/// missing).
pub fn write(dir: &Path, r: &Reproduction) -> Result<Written> {
    std::fs::create_dir_all(dir)?;
    let runs = dir.join("runs.json");
    write_json(&runs, &runs_json(r), true)?;
    let histories = dir.join("histories.json");
    write_json(&histories, &histories_json(r), false)?;
    let mut plots = Vec::new();
    for e in r.options.experiments() {
        for (k, &a) in r.options.arithmetics.iter().enumerate() {
            let stem = if k == 0 {
                format!("plot_{}", FunctionInfo::of(e.function).name)
            } else {
                format!("plot_{}_{}", FunctionInfo::of(e.function).name, a.name())
            };
            plots.push(plot_function(dir, &stem, r, e, a)?);
        }
    }
    let report = dir.join("REPORT.md");
    crate::output::write(&report, report_markdown(r, &plots).as_bytes())?;
    Ok(Written {
        report,
        runs,
        histories,
        plots: plots
            .iter()
            .flat_map(|p| [dir.join(&p.png), dir.join(&p.svg)])
            .collect(),
    })
}

/// Writes `v` as JSON: indented, or compact (for the large histories).
fn write_json<T: Serialize>(path: &Path, v: &T, pretty: bool) -> Result<()> {
    let s = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    };
    let s = s.map_err(|e| {
        Error::Io(std::io::Error::other(format!(
            "writing {}: {e}",
            path.display()
        )))
    })?;
    crate::output::write(path, (s + "\n").as_bytes())?;
    Ok(())
}

#[derive(Serialize)]
struct CaseJson {
    case: String,
    /// `default` or the variant's `key=value` list.
    thesis_variant: String,
    function: &'static str,
    dim: u32,
    np: u32,
    g_max: u32,
    evaluations: u64,
    domain: [f64; 2],
    arithmetic: Arithmetic,
    precision: &'static str,
    formula: &'static str,
    strategy: Scheme,
    runs: usize,
    batch_wall_s: f64,
    time_per_run_s: f64,
    /// On the verified errors.
    stats: Stats,
    /// On the errors the search computed.
    reported: Stats,
    failures: Failures,
}

#[derive(Serialize)]
struct RunsJson<'a> {
    context: &'a Context,
    /// The EDCP cases' variant: `default` or its `key=value` list.
    thesis_variant: String,
    quick: bool,
    seed: u64,
    success_error: f64,
    cases: Vec<CaseJson>,
    runs: Vec<&'a RunRecord>,
}

fn runs_json(r: &Reproduction) -> RunsJson<'_> {
    RunsJson {
        context: &r.context,
        thesis_variant: variant_name(r.options.variant),
        quick: r.options.quick,
        seed: r.options.seed,
        success_error: published::SUCCESS_ERROR,
        cases: r
            .results
            .iter()
            .map(|c| CaseJson {
                case: c.case.id(),
                thesis_variant: variant_name(c.case.variant),
                function: c.case.name(),
                dim: c.case.dim,
                np: c.case.np,
                g_max: c.case.g_max,
                evaluations: c.case.evaluations(),
                domain: [c.case.domain.0, c.case.domain.1],
                arithmetic: c.case.arithmetic,
                precision: c.case.arithmetic.precision.name(),
                formula: gpude::host::config::formula_name(c.case.arithmetic.formula),
                strategy: c.case.scheme,
                runs: c.runs.len(),
                batch_wall_s: c.batch_wall_s,
                time_per_run_s: c.time_per_run_s(),
                stats: c.stats.clone(),
                reported: c.reported.clone(),
                failures: c.failures.clone(),
            })
            .collect(),
        runs: r.results.iter().flat_map(|c| &c.runs).collect(),
    }
}

#[derive(Serialize)]
struct HistoryJson<'a> {
    case: String,
    generations: &'a [u32],
    /// Per run (index = stream), the best error at each listed generation.
    runs: &'a [Vec<f64>],
    curve: &'a Curve,
}

#[derive(Serialize)]
struct HistoriesJson<'a> {
    note: &'static str,
    cases: Vec<HistoryJson<'a>>,
}

fn histories_json(r: &Reproduction) -> HistoriesJson<'_> {
    HistoriesJson {
        note: "best error (best value so far minus the minimum) after the listed generations \
               (0 = the initial population), at most 500 evenly spaced generations per run; \
               curve: 25 %, 50 % and 75 % quantiles across runs",
        cases: r
            .results
            .iter()
            .map(|c| HistoryJson {
                case: c.case.id(),
                generations: &c.history_generations,
                runs: &c.histories,
                curve: &c.curve,
            })
            .collect(),
    }
}

fn plot_function(
    dir: &Path,
    stem: &str,
    r: &Reproduction,
    e: &published::Experiment,
    arithmetic: Arithmetic,
) -> Result<Plot> {
    let cases: Vec<&CaseResult> = r
        .options
        .sizes(e)
        .into_iter()
        .filter_map(|np| r.find(e.function, np, arithmetic, Scheme::Edcp))
        .collect();
    let axis = LogAxis::of(
        cases
            .iter()
            .flat_map(|c| [&c.curve.q25, &c.curve.median, &c.curve.q75])
            .flat_map(|v| v.iter().copied()),
    );
    // Values ≤ 0 are drawn on the axis' bottom line, which stands for them.
    let bottom = axis.bottom();
    let mut clamped = 0;
    let mut values = 0;
    let mut clamp = |v: f64| {
        values += 1;
        if v > 0.0 {
            v
        } else {
            clamped += 1;
            bottom
        }
    };
    let lines: Vec<Line> = cases
        .iter()
        .map(|c| {
            // (generation, q25, median, q75)
            let kept: Vec<(f64, f64, f64, f64)> = c
                .curve
                .generations
                .iter()
                .enumerate()
                .filter(|(k, _)| !c.curve.median[*k].is_nan())
                .map(|(k, &g)| {
                    (
                        f64::from(g),
                        clamp(c.curve.q25[k]),
                        clamp(c.curve.median[k]),
                        clamp(c.curve.q75[k]),
                    )
                })
                .collect();
            Line {
                label: format!("Np = {}", c.case.np),
                points: kept.iter().map(|p| (p.0, p.2)).collect(),
                band: kept.iter().map(|p| (p.0, p.1, p.3)).collect(),
            }
        })
        .collect();
    let runs = r.options.runs;
    let chart = Chart {
        title: format!(
            "{}, D = {}, {}: best error per generation (median, 25–75 % band, {runs} runs)",
            e.title,
            r.options.dim(),
            arithmetic.label()
        ),
        x_desc: "generation",
        x_max: f64::from(r.options.g_max(e)),
        y_desc: if axis.bottom_label.is_some() {
            "best error (log scale; bottom line = 0)"
        } else {
            "best error (log scale)"
        },
        y: axis,
        legend: Corner::UpperRight,
        lines,
    };
    let png = format!("{stem}.png");
    let svg = format!("{stem}.svg");
    chart.png(&dir.join(&png))?;
    chart.svg(&dir.join(&svg))?;
    Ok(Plot {
        function: e.function,
        arithmetic,
        png,
        svg,
        clamped,
        values,
    })
}
