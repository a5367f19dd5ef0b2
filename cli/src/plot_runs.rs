//! `--plot FILE` of `run`, `resume` and `batch`: each run's best error against the
//! generations on a log scale, the runs overlaid, as PNG or SVG (the file's extension
//! says which). Up to [`MAX_LINES`] runs are drawn a line each, with their median when
//! they are runs of one job; more are drawn as each job's median inside the band from its
//! best to its worst run.

use crate::plot::{Chart, Corner, Line, LogAxis};
use crate::{CliError, Result, input, output};
use std::path::Path;

/// The most runs drawn a line each.
pub const MAX_LINES: usize = 8;

/// The formats `--plot` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Png,
    Svg,
}

/// The format that `path`'s extension names (`.png` or `.svg`, in any case).
pub fn format_of(path: &Path) -> Result<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        _ => Err(CliError::usage(format!(
            "--plot {} is not allowed: the file's name must end in .png or .svg (its format)",
            input::name(path)
        ))),
    }
}

/// Checks a plot's path before any work: its format, and that it can be written.
pub fn check(path: &Path) -> Result<()> {
    format_of(path)?;
    output::check_file(path, "the plot file")
}

/// One run as the plot draws it: its name in the legend, its best value after each
/// generation (from generation 0), and the value its errors are measured from (the
/// objective's known minimum, or 0).
pub struct Curve<'a> {
    pub label: String,
    pub history: &'a [f64],
    pub reference: f64,
}

/// The errors of one generation over the runs that reached it, NaN left out.
fn errors_at(curves: &[Curve], g: usize) -> Vec<f64> {
    curves
        .iter()
        .filter_map(|c| c.history.get(g).map(|&v| v - c.reference))
        .filter(|e| !e.is_nan())
        .collect()
}

/// The runs of one job: its name in the legend when the plot shows several jobs.
pub struct Group<'a> {
    pub label: String,
    pub runs: Vec<Curve<'a>>,
}

/// The most jobs one plot shows (a colour each).
pub const MAX_GROUPS: usize = crate::plot::COLORS.len();

/// The line of each generation's median error over `runs`, and the band from the best
/// to the worst run, each value drawn at least at `floor`.
#[allow(clippy::type_complexity)]
fn median_band(
    runs: &[Curve],
    longest: usize,
    floor: impl Fn(f64) -> f64,
) -> (Vec<(f64, f64)>, Vec<(f64, f64, f64)>) {
    let mut line = Vec::new();
    let mut band = Vec::new();
    for g in 0..longest {
        let v = errors_at(runs, g);
        if v.is_empty() {
            continue;
        }
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        line.push((g as f64, floor(crate::stats::median(&v))));
        band.push((g as f64, floor(lo), floor(hi)));
    }
    (line, band)
}

/// The chart of `groups` (one per job) under `title`. One job: a line per run and
/// their median, or (more than [`MAX_LINES`] runs) the median in its band. Several jobs:
/// a line per run when there are at most [`MAX_LINES`], else a line per job (its median
/// in its band when it has several runs); no median across jobs.
pub fn chart<'a>(title: String, groups: &[Group]) -> Result<Chart<'a>> {
    let all = || groups.iter().flat_map(|g| g.runs.iter());
    let longest = all().map(|c| c.history.len()).max().unwrap_or(0);
    if longest == 0 {
        return Err(CliError::runtime("the runs recorded no history to plot"));
    }
    let axis = LogAxis::of(all().flat_map(|c| c.history.iter().map(move |&v| v - c.reference)));
    // Errors ≤ 0 (and any below the axis) are drawn on its bottom line.
    let bottom = axis.bottom();
    let at = |e: f64| if e > bottom { e } else { bottom };
    let run_line = |c: &Curve, label: String| Line {
        label,
        points: c
            .history
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.is_nan())
            .map(|(g, &v)| (g as f64, at(v - c.reference)))
            .collect(),
        band: Vec::new(),
    };
    let runs = all().count();
    let mut lines = Vec::new();
    if runs <= MAX_LINES {
        lines.extend(all().map(|c| run_line(c, c.label.clone())));
        if let [one] = groups
            && one.runs.len() > 1
        {
            let (points, _) = median_band(&one.runs, longest, at);
            lines.push(Line {
                label: "median".into(),
                points,
                band: Vec::new(),
            });
        }
    } else {
        for g in groups {
            match g.runs.as_slice() {
                [one] => lines.push(run_line(one, g.label.clone())),
                many => {
                    let (points, band) = median_band(many, longest, at);
                    let what = format!("median of {} runs (band: best to worst)", many.len());
                    lines.push(Line {
                        label: if groups.len() == 1 {
                            what
                        } else {
                            format!("{}: {what}", g.label)
                        },
                        points,
                        band,
                    });
                }
            }
        }
    }
    Ok(Chart {
        title,
        x_desc: "generation (evaluations: Np · (1 + generation))",
        x_max: (longest - 1) as f64,
        y_desc: if axis.bottom_label.is_some() {
            "best f − f* (log scale; bottom line: 0 or below)"
        } else {
            "best f − f* (log scale)"
        },
        y: axis,
        legend: Corner::UpperRight,
        lines,
    })
}

/// Draws `groups` under `title` into `path` (PNG or SVG by its extension), whole or not
/// at all.
pub fn write(path: &Path, title: String, groups: &[Group]) -> Result<()> {
    let format = format_of(path)?;
    let c = chart(title, groups)?;
    match format {
        Format::Png => c.png(path),
        Format::Svg => c.svg(path),
    }
    .map_err(|e| CliError::runtime(format!("writing the plot {}: {e}", input::name(path))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_names_the_format() {
        assert_eq!(format_of(Path::new("a.png")).ok(), Some(Format::Png));
        assert_eq!(format_of(Path::new("dir/b.SVG")).ok(), Some(Format::Svg));
        for bad in ["c.jpg", "d", "png"] {
            let e = format_of(Path::new(bad)).expect_err("refused").to_string();
            assert!(e.contains(".png or .svg") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn few_runs_a_line_each_and_their_median_many_runs_a_band() {
        let h: Vec<Vec<f64>> = (0..3)
            .map(|k| (0..5).map(|g| 10.0 + k as f64 - 2.0 * g as f64).collect())
            .collect();
        let curves: Vec<Curve> = h
            .iter()
            .enumerate()
            .map(|(k, v)| Curve {
                label: format!("run {k}"),
                history: v,
                reference: 1.0,
            })
            .collect();
        let one = |runs| {
            [Group {
                label: "job".into(),
                runs,
            }]
        };
        let c = chart("t".into(), &one(curves)).expect("a chart");
        assert_eq!(c.lines.len(), 4);
        assert_eq!(c.lines[3].label, "median");
        // Generation 2: errors 5, 6, 7; the median is 6.
        assert_eq!(c.lines[3].points[2], (2.0, 6.0));
        // Generation 4 of run 0: 10 − 8 − 1 = 1; of run 0 at 5: below the axis' bottom.
        assert_eq!(c.lines[0].points[4], (4.0, 1.0));
        assert_eq!(c.x_max, 4.0);
        let many: Vec<Curve> = (0..MAX_LINES + 1)
            .map(|k| Curve {
                label: format!("run {k}"),
                history: &h[k % 3],
                reference: 1.0,
            })
            .collect();
        let c = chart("t".into(), &one(many)).expect("a chart");
        assert_eq!(c.lines.len(), 1);
        assert_eq!(c.lines[0].band[2], (2.0, 5.0, 7.0));
        // Several jobs: no median across them; more runs than lines, a line per job.
        let jobs = |n: usize| {
            (0..2)
                .map(|j| Group {
                    label: format!("job {j}"),
                    runs: (0..n)
                        .map(|k| Curve {
                            label: format!("job {j}, run {k}"),
                            history: &h[k % 3],
                            reference: 1.0,
                        })
                        .collect(),
                })
                .collect::<Vec<_>>()
        };
        let c = chart("t".into(), &jobs(2)).expect("a chart");
        assert_eq!(c.lines.len(), 4);
        assert!(c.lines.iter().all(|l| l.label != "median"));
        let c = chart("t".into(), &jobs(5)).expect("a chart");
        assert_eq!(c.lines.len(), 2);
        assert!(
            c.lines[1].label.starts_with("job 1: median of 5 runs"),
            "{}",
            c.lines[1].label
        );
        // Errors of 0 or below sit on the bottom line, labelled for them.
        let zero = [1.0, 0.5, 0.0];
        let c = chart(
            "t".into(),
            &one(vec![Curve {
                label: "run 0".into(),
                history: &zero,
                reference: 0.0,
            }]),
        )
        .expect("a chart");
        assert!(c.y.bottom_label.is_some());
        assert_eq!(c.lines[0].points[2], (2.0, c.y.bottom()));
    }

    #[test]
    fn no_history_is_an_error_not_an_empty_plot() {
        let e = chart(
            "t".into(),
            &[Group {
                label: "job".into(),
                runs: vec![Curve {
                    label: "run 0".into(),
                    history: &[],
                    reference: 0.0,
                }],
            }],
        )
        .expect_err("refused");
        assert!(e.to_string().contains("no history"), "{e}");
    }
}
