//! REPORT.md and runs.json of a CEC 2017 reproduction: per dimension, gpude's strategies
//! beside the published algorithms, the comparison of the two jSOs and links to the
//! convergence plots.

use super::published;
use super::runner::{Comparison, PUBLISHED_DIGITS, Reproduction, Summary};
use super::{ALPHA, CLASSIC_POP, SHOWN, WITHIN, display_name, stem};
use crate::common;
use crate::lab::markdown;
use crate::{CliError, Result};
use gpude::Strategy;
use std::fmt::Write as _;
use std::path::Path;

/// A number to 3 significant digits, as the published tables print them: `0`, `1.76`,
/// `12`, `0.0585`, `395`, `1.53e3`.
pub fn sig3(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e3).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.2e}")
    }
}

/// `mean ± sd` to 3 significant digits.
pub fn mean_sd(mean: f64, sd: f64) -> String {
    format!("{} ± {}", sig3(mean), sig3(sd))
}

/// The column headers of a dimension's table for these strategies.
pub fn columns(strategies: &[Strategy]) -> Vec<String> {
    let mut h = vec!["F".to_string(), "function".to_string()];
    h.extend(
        strategies
            .iter()
            .map(|&s| format!("gpude {}", display_name(s))),
    );
    h.extend(SHOWN.iter().map(|a| format!("published {a}")));
    h.push("gpude jSO / published jSO".into());
    h.push("rank-sum vs published jSO".into());
    h
}

/// The line of dimension `d` with each strategy's time: the wall time of its batch,
/// which held its runs of every function at this D.
pub fn times_line(r: &Reproduction, strategies: &[Strategy], d: u32) -> String {
    let first = r.results.iter().find(|f| f.dim == d);
    let cells: Vec<String> = strategies
        .iter()
        .filter_map(|&st| {
            first
                .and_then(|f| f.runs_of(st))
                .map(|x| format!("{} {:.2} s", display_name(st), x.wall_s))
        })
        .collect();
    format!(
        "CPU time at D = {d} (the wall time of one batch with every function's runs of the strategy): {}.",
        cells.join(", ")
    )
}

/// The ratio cell: `1.05`, `both < 1e-8`, or `∞ (published < 1e-8)`.
fn ratio_cell(c: &Comparison) -> String {
    match c.ratio {
        _ if c.both_below => "both < 1e-8".into(),
        Some(r) => format!("{r:.3}"),
        None => "∞ (published < 1e-8)".into(),
    }
}

/// The summary sentence of one dimension.
pub fn summary_line(s: &Summary) -> String {
    if s.compared == 0 {
        return format!(
            "D = {}: no comparison with the published jSO (gpude's jSO not run, or no published runs).",
            s.dim
        );
    }
    format!(
        "D = {}: gpude's jSO is within {WITHIN}× of the published jSO mean (or both below 1e-8) on {} of {} functions ({:.0} %); rank-sum test against the published jSO runs (α = {ALPHA}): {} better, {} same, {} worse.",
        s.dim,
        s.within,
        s.compared,
        100.0 * s.within as f64 / s.compared as f64,
        s.better,
        s.same,
        s.worse
    )
}

/// REPORT.md.
pub fn report(r: &Reproduction, strategies: &[Strategy]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# CEC 2017: gpude's adaptive DE beside the published results\n"
    );
    let _ = writeln!(s, "Command: `{}`\n", r.command);
    let _ = writeln!(
        s,
        "Engine: {} ({} threads); f64; seed {}, random streams 0 … {} per function and strategy; at each D, every function's runs of a strategy in one batch (on the GPU a launch per function, the launches side by side). \
Budget {}·D evaluations; error = f(x_best) − F* of the best point re-evaluated in f64, errors below 1e-8 counted as 0.{}\n",
        r.backend,
        r.cpu_threads,
        r.seed,
        r.runs.saturating_sub(1),
        r.evaluations_per_dim,
        if r.quick {
            " **Quick check (`--quick`): not the competition's budget or run count; the comparison with the published numbers means nothing here.**"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "Published results: `{}` (mean ± sample sd, 3 significant digits) and `{}` (the 51 final errors of jSO), from {}. CEC 2017 data: {}.\n",
        published::MARKDOWN,
        published::CSV,
        r.reference,
        r.data
    );
    let _ = writeln!(
        s,
        "Cells are mean ± sample sd of the final errors. \"gpude jSO / published jSO\" divides gpude's mean by the mean of the published runs. \
The rank-sum column is a two-sided Wilcoxon rank-sum (Mann–Whitney U) test of gpude's jSO runs against the published jSO's 51 runs, \
normal approximation with tie correction, α = {ALPHA}, gpude's errors rounded to the published runs' {PUBLISHED_DIGITS} significant digits: \
better / worse when gpude's errors are significantly smaller / larger.\n"
    );
    if strategies.iter().any(|s| !s.is_adaptive()) {
        let _ = writeln!(
            s,
            "The classic strategies (gpude's thesis variant, rand/1/bin) run at the same budget with Np = {CLASSIC_POP}: \
the initial population and then as many whole generations as the budget pays for (Np·(1 + g) ≤ budget, {CLASSIC_POP}·D − 1 generations at 10 000·D), \
F = {}, Cr = {} (rand/1/bin), bounds {} (as the adaptive strategies: a component of a trial that leaves [−100, 100] \
is put midway between its parent's value and the bound, so that every point stays where the functions have their minimum F*).\n",
            gpude::host::config::DEFAULT_F,
            gpude::host::config::DEFAULT_CR,
            gpude::host::config::bounds_name(gpude::BoundPolicy::Midpoint)
        );
    }
    for sum in &r.summaries {
        let d = sum.dim;
        let _ = writeln!(
            s,
            "## D = {d} ({} evaluations per run)\n",
            r.evaluations_per_dim * d as u64
        );
        let mut rows = vec![columns(strategies)];
        for f in r.results.iter().filter(|f| f.dim == d) {
            let mut row = vec![format!("F{}", f.function), f.title.clone()];
            for &st in strategies {
                row.push(f.runs_of(st).map_or("—".into(), |x| mean_sd(x.mean, x.std)));
            }
            for a in SHOWN {
                row.push(
                    f.published
                        .get(a)
                        .copied()
                        .flatten()
                        .map_or("—".into(), |p| mean_sd(p.mean, p.sd)),
                );
            }
            match &f.jso_vs_published {
                Some(c) => {
                    row.push(ratio_cell(c));
                    row.push(format!("{} (p = {})", c.verdict.name(), sig3(c.rank_sum.p)));
                }
                None => {
                    row.push("—".into());
                    row.push("—".into());
                }
            }
            rows.push(row);
        }
        s.push_str(&markdown::table(&rows));
        let _ = writeln!(s, "\n{}\n", summary_line(sum));
        let _ = writeln!(s, "{}\n", times_line(r, strategies, d));
        convergence(&mut s, r, d);
    }
    // On the GPU the times are the batches' (a launch per function, side by side).
    if r.backend == "cuda" {
        s = s.replace("CPU time", "GPU time");
    }
    s
}

/// The section of dimension `d` that links its convergence plots.
fn convergence(s: &mut String, r: &Reproduction, d: u32) {
    let _ = writeln!(s, "### Convergence, D = {d}\n");
    let _ = writeln!(
        s,
        "Median over the {} runs of the best error f(best) − F* (the search's own best value) against the evaluations spent, \
one line per strategy, log scale, errors below 1e-8 drawn at 1e-8. The evaluations are exact: the initial population, then each generation's trials \
(L-SHADE's and jSO's populations shrink on their linear schedule; the classic strategies keep Np = {CLASSIC_POP}).\n",
        r.runs
    );
    for f in r.results.iter().filter(|f| f.dim == d) {
        let stem = stem(d, f.function);
        let _ = writeln!(
            s,
            "- F{} {}: [PNG]({stem}.png), [SVG]({stem}.svg)",
            f.function, f.title
        );
    }
    s.push('\n');
}

/// Writes REPORT.md and runs.json into `dir`, each whole or not at all.
pub fn write(dir: &Path, report: &str, r: &Reproduction) -> Result<()> {
    let json = common::to_json(r)?;
    for (name, bytes) in [
        ("REPORT.md", report.as_bytes()),
        ("runs.json", json.as_bytes()),
    ] {
        let p = dir.join(name);
        crate::output::write(&p, bytes)
            .map_err(|e| CliError::runtime(format!("writing {}: {e}", p.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::compare;
    use super::*;

    #[test]
    fn significant_digits_as_the_tables_print_them() {
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(1.7647), "1.76");
        assert_eq!(sig3(12.0), "12");
        assert_eq!(sig3(0.058_49), "0.0585");
        assert_eq!(sig3(395.2), "395");
        assert_eq!(sig3(1530.4), "1.53e3");
        assert_eq!(sig3(17_600.0), "1.76e4");
        assert_eq!(sig3(6.04e-9), "6.04e-9");
        assert_eq!(mean_sd(1.76, 0.76), "1.76 ± 0.76");
    }

    #[test]
    fn columns_and_ratio_cells() {
        let h = columns(&[Strategy::Jso, Strategy::Thesis, Strategy::Rand1]);
        assert_eq!(&h[2..5], ["gpude jSO", "gpude thesis", "gpude rand/1/bin"]);
        assert_eq!(
            h.last().map(String::as_str),
            Some("rank-sum vs published jSO")
        );
        let zeros = [0.0; 5];
        assert_eq!(ratio_cell(&compare(&zeros, &zeros)), "both < 1e-8");
        assert_eq!(
            ratio_cell(&compare(&[1.0; 5], &zeros)),
            "∞ (published < 1e-8)"
        );
        assert_eq!(ratio_cell(&compare(&[2.2; 3], &[2.0; 3])), "1.100");
    }
}
