//! `REPORT.md` of a thesis reproduction: the thesis's figures beside ours per function,
//! which of the thesis's successes are f32 artefacts, Table 5.6 and the notes on how the
//! rerun differs.

use super::cases::{
    Arithmetic, HISTORY_POINTS, ORIGINAL_CR, ORIGINAL_F, QUICK_DIM, QUICK_GEN_DIVISOR, QUICK_NP,
    Scheme,
};
use super::files::Plot;
use super::minima;
use super::published;
use super::runner::{CaseResult, Failures, Reproduction};
use crate::lab::markdown::{header, row};
use gpude::host::config::variant_name;
use gpude::{Function, FunctionInfo, ThesisVariant};
use std::fmt::Write as _;

/// Errors: `0`, or three decimals in scientific notation.
fn fmt_err(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if !v.is_finite() {
        format!("{v}")
    } else {
        format!("{v:.3e}")
    }
}

/// Seconds: four decimals, scientific below a millisecond.
fn fmt_secs(v: f64) -> String {
    if v >= 1e-3 || v == 0.0 {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

/// A thesis figure as printed (the shortest form that reads back).
fn fmt_thesis(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-6 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// 1234567 → `1,234,567`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, ch) in s.chars().enumerate() {
        if k > 0 && (s.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

const NONE: &str = "—";

/// A pair of values as `reported / verified`.
fn pair(reported: String, verified: String) -> String {
    format!("{reported} / {verified}")
}

/// A count with the median verified error of its runs: `18 (median 1.700e-9)`.
fn count_with_median(n: usize, median: f64) -> String {
    if n == 0 {
        "0".into()
    } else {
        format!("{n} (median {})", fmt_err(median))
    }
}

/// The trapped runs of a case: `3 (3 at …, error 3.987e0)`.
fn trapped_cell(f: &Failures) -> String {
    let n = f.trapped_runs();
    if n == 0 {
        return "0".into();
    }
    let parts: Vec<String> = f
        .trapped
        .iter()
        .map(|t| {
            let e = if t.minimum_error_least == t.minimum_error_largest {
                format!("error {}", fmt_minimum(t.minimum_error_least))
            } else {
                format!(
                    "errors {} … {}",
                    fmt_minimum(t.minimum_error_least),
                    fmt_minimum(t.minimum_error_largest)
                )
            };
            format!("{} at {}, {e}", t.runs, t.minimum)
        })
        .collect();
    format!("{n} ({})", parts.join("; "))
}

/// A local minimum's error: six significant digits, in plain decimals.
fn fmt_minimum(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return format!("{v}");
    }
    let decimals = (5 - v.log10().floor() as i32).max(0) as usize;
    format!("{v:.decimals$}")
}

/// The report header's line on the EDCP cases' variant.
fn variant_line(v: ThesisVariant) -> String {
    if v.is_default() {
        return "default (gpude's own thesis strategy)".into();
    }
    let deviation = if v.lambda_draw == gpude::device::variant::LambdaDraw::PerIndividual {
        "; λ per individual is a deviation from the thesis, run as a contrast"
    } else {
        ""
    };
    format!(
        "**`{}`**: the EDCP cases run this alternative to gpude's thesis strategy (`--thesis-variant`; the original DE of Table 5.6 is not affected){deviation}",
        variant_name(v)
    )
}

/// The whole of `REPORT.md`.
pub(super) fn report_markdown(r: &Reproduction, plots: &[Plot]) -> String {
    let o = &r.options;
    let c = &r.context;
    let mut s = String::new();
    let _ = writeln!(s, "# Thesis chapter 5, rerun with gpude\n");
    if o.quick {
        let _ = writeln!(
            s,
            "**Quick mode**: D = {QUICK_DIM}, Np ∈ {{{}}}, g_max = the thesis's / {QUICK_GEN_DIVISOR}. \
             These sizes are not the thesis's, so the thesis columns are left empty ({NONE}).\n",
            QUICK_NP.map(|n| n.to_string()).join(", ")
        );
    }
    let arithmetics: Vec<String> = o.arithmetics.iter().map(|a| a.label()).collect();
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(s, "- **{k}**: {v}");
    };
    kv("date", c.date.clone());
    kv("gpude", format!("{} (PTX for {})", c.gpude, c.ptx_arch));
    kv(
        "backend",
        match &c.fallback_reason {
            Some(why) => format!("{} (no GPU: {why})", c.backend),
            None => c.backend.to_string(),
        },
    );
    kv(
        "device",
        match (&c.device, c.multiprocessors) {
            (Some(d), Some(sm)) => format!("{d} ({sm} multiprocessors)"),
            (Some(d), None) => d.clone(),
            _ => format!("CPU, {} threads", c.cpu_threads),
        },
    );
    kv("command", format!("`{}`", c.command));
    kv("arithmetic", arithmetics.join(", "));
    kv("thesis variant", variant_line(o.variant));
    kv(
        "runs per case",
        format!(
            "{} (seed {}, random streams 0 … {})",
            o.runs,
            o.seed,
            o.runs - 1
        ),
    );
    kv("dimension", format!("D = {}", o.dim()));
    kv(
        "success",
        format!(
            "verified error ≤ {:e} (the best point re-evaluated in f64 with the exact formulas)",
            published::SUCCESS_ERROR
        ),
    );
    s.push('\n');
    let _ = writeln!(
        s,
        "Thesis figures: S. J. Domínguez González, MSc thesis, UMSNH 2011, chapter 5 \
         (GPU version \"EDCP\", NVIDIA Tesla C2050, single precision, the formulas as printed): \
         times from section 5.1, success rates and mean errors from sections 5.2.2–5.2.5, \
         Table 5.5 and Table 5.6. {NONE} marks a figure the thesis does not state (or, in quick \
         mode, a case it did not run).\n"
    );
    let _ = writeln!(
        s,
        "Arithmetics: *textbook f32* evaluates the formulas as printed in single precision, as \
         the thesis did; *exact f32* and *f64* evaluate them arranged so that nothing cancels \
         (docs/FUNCTIONS.md). Every run's best point is then re-evaluated in f64 with the exact \
         formulas: its *verified* error. Cells that read `a / b` give the *reported* figure (on \
         the error the search computed, which is what the thesis reports) and the *verified* one. \
         A reported success that verification refutes is an *artefact* of the arithmetic.\n"
    );
    let _ = writeln!(s, "## How time is measured\n");
    let _ = writeln!(
        s,
        "All runs of a case go to the engine as one batch (`Solver::run_batch`). \
         *batch wall* is the wall time of that call over all {} runs (uploads, the runs and \
         the downloads of results and histories); *time/run* is batch wall ÷ runs. {} \
         The thesis's time is the mean total time of one run on its own. \
         *speed-up* = thesis time/run ÷ our time/run.\n",
        o.runs,
        if c.backend == "cuda" {
            "Before each timed batch a one-generation launch of the same kernel runs, so that the \
             driver's compilation of the PTX is not timed. On the GPU the runs of a batch run at \
             the same time (one block per run in one launch with the batch layout), so time/run \
             is a share of a common launch, not the time one run takes alone."
        } else {
            "The CPU engine runs the batch's runs one after another, each generation spread \
             over all CPU threads."
        }
    );
    for e in o.experiments() {
        function_section(&mut s, r, e, plots);
    }
    artefacts_section(&mut s, r);
    if o.table56 {
        table56_section(&mut s, r);
    }
    notes_section(&mut s, r, plots);
    s
}

fn function_section(s: &mut String, r: &Reproduction, e: &published::Experiment, plots: &[Plot]) {
    let o = &r.options;
    let name = FunctionInfo::of(e.function).name;
    let _ = writeln!(
        s,
        "## {} (`{name}`)\n\nD = {}, g_max = {}, initial domain [{}, {}]^{}, thesis variant.\n",
        e.title,
        o.dim(),
        o.g_max(e),
        e.domain.0,
        e.domain.1,
        o.dim()
    );
    let _ = writeln!(
        s,
        "### Success and errors\n\nPer arithmetic: reported / verified.\n"
    );
    let mut head: Vec<String> = [
        "Np",
        "evaluations",
        "success % (thesis)",
        "mean error (thesis)",
    ]
    .map(String::from)
    .to_vec();
    for a in &o.arithmetics {
        let l = a.label();
        head.push(format!("{l}: success % (ours)"));
        head.push(format!("{l}: mean error (ours)"));
        head.push(format!("{l}: median error (ours)"));
    }
    s.push_str(&header(&head));
    for np in o.sizes(e) {
        let cases: Vec<Option<&CaseResult>> = o
            .arithmetics
            .iter()
            .map(|&a| r.find(e.function, np, a, Scheme::Edcp))
            .collect();
        let Some(first) = cases.iter().flatten().next() else {
            continue;
        };
        let t = first.case.thesis();
        let mut cells = vec![
            np.to_string(),
            grouped(first.case.evaluations()),
            t.map_or(NONE.into(), |t| format!("{:.2}", t.success_pct)),
            t.and_then(|t| t.mean_error).map_or(NONE.into(), fmt_thesis),
        ];
        for c in &cases {
            match c {
                Some(c) => {
                    cells.push(pair(
                        format!("{:.2}", c.reported.success_pct),
                        format!("{:.2}", c.stats.success_pct),
                    ));
                    cells.push(pair(
                        fmt_err(c.reported.mean_error),
                        fmt_err(c.stats.mean_error),
                    ));
                    cells.push(pair(
                        fmt_err(c.reported.median_error),
                        fmt_err(c.stats.median_error),
                    ));
                }
                None => cells.extend([NONE.to_string(), NONE.into(), NONE.into()]),
            }
        }
        s.push_str(&row(&cells));
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "### Failing runs and times\n\nRuns whose verified error exceeds {:e}, classified as in \
         the notes: trapped at a known local minimum, still descending, or stalled.\n",
        published::SUCCESS_ERROR
    );
    s.push_str(&header(&[
        "Np",
        "arithmetic",
        "failures (ours)",
        "artefacts (ours)",
        "trapped (ours)",
        "descending (ours)",
        "stalled (ours)",
        "best verified (ours)",
        "worst verified (ours)",
        "time/run s (thesis)",
        "time/run s (ours)",
        "batch wall s (ours)",
        "speed-up",
    ]));
    for np in o.sizes(e) {
        for &a in &o.arithmetics {
            let Some(c) = r.find(e.function, np, a, Scheme::Edcp) else {
                continue;
            };
            let t = c.case.thesis();
            let ours = c.time_per_run_s();
            let f = &c.failures;
            s.push_str(&row(&[
                np.to_string(),
                a.label(),
                (c.stats.runs - c.stats.successes).to_string(),
                f.artefacts.to_string(),
                trapped_cell(f),
                count_with_median(f.descending, f.descending_median_error),
                count_with_median(f.stalled, f.stalled_median_error),
                fmt_err(c.stats.best_error),
                fmt_err(c.stats.worst_error),
                t.map_or(NONE.into(), |t| fmt_thesis(t.time_s)),
                fmt_secs(ours),
                fmt_secs(c.batch_wall_s),
                match t {
                    Some(t) if ours > 0.0 => format!("{:.1}", t.time_s / ours),
                    _ => NONE.into(),
                },
            ]));
        }
    }
    s.push('\n');
    if e.function == Function::Ackley && !o.quick {
        let (np, best, median, worst) = published::ACKLEY_TABLE_5_5;
        let _ = writeln!(
            s,
            "Thesis Table 5.5 (Ackley, Np = {np}, the 35 GPU errors): best {best:e}, median {median:e}, worst {worst:e}.\n"
        );
    }
    for p in plots.iter().filter(|p| p.function == e.function) {
        let _ = writeln!(
            s,
            "![{} convergence, {}]({}) ([SVG]({}))\n",
            e.title,
            p.arithmetic.label(),
            p.png,
            p.svg
        );
    }
}

/// Which of the thesis's successes hold up: per case, the reported successes of the
/// thesis's arithmetic (textbook f32) and how many of them verification refutes.
fn artefacts_section(s: &mut String, r: &Reproduction) {
    let o = &r.options;
    let _ = writeln!(s, "## f32 artefacts: which thesis successes hold up\n");
    let _ = writeln!(
        s,
        "The thesis judged success on the value its search computed, in textbook f32. Our \
         textbook f32 runs count the same way (*reported*); the verified error says whether the \
         best point really is within {:e} of the minimum. Per case, from textbook f32:\n",
        published::SUCCESS_ERROR
    );
    if !o.arithmetics.contains(&Arithmetic::TEXTBOOK_F32) {
        let _ = writeln!(
            s,
            "- textbook f32 was not run (`--arithmetic`), so there is nothing to judge here.\n"
        );
        return;
    }
    for e in o.experiments() {
        for np in o.sizes(e) {
            let Some(c) = r.find(e.function, np, Arithmetic::TEXTBOOK_F32, Scheme::Edcp) else {
                continue;
            };
            let reported = c.reported.successes;
            let artefacts = c.failures.artefacts;
            let thesis = c
                .case
                .thesis()
                .map(|t| format!("the thesis reports {:.2} %; ", t.success_pct));
            let subject = if thesis.is_some() {
                "the thesis's successes here"
            } else {
                "the reported successes here"
            };
            let artefact_errors: Vec<f64> = c
                .runs
                .iter()
                .filter(|r| r.artefact)
                .map(|r| r.verified_error)
                .collect();
            let verdict = if reported == 0 {
                "no run reports a success in this arithmetic, so there is nothing to refute"
                    .to_string()
            } else if artefacts == reported {
                format!(
                    "all of them fail verification (median verified error {}): **{subject} are f32 artefacts**",
                    fmt_err(crate::stats::median(&artefact_errors))
                )
            } else if artefacts > 0 {
                format!(
                    "{artefacts} of them fail verification (median verified error {}): **{subject} are partly f32 artefacts** (about {:.0} %)",
                    fmt_err(crate::stats::median(&artefact_errors)),
                    100.0 * artefacts as f64 / reported as f64
                )
            } else {
                format!(
                    "all of them hold up under verification: **{subject} are not f32 artefacts**"
                )
            };
            let others: Vec<String> = o
                .arithmetics
                .iter()
                .filter(|&&a| a != Arithmetic::TEXTBOOK_F32)
                .filter_map(|&a| r.find(e.function, np, a, Scheme::Edcp))
                .map(|c| {
                    format!(
                        "{} {}/{} verified",
                        c.case.arithmetic.label(),
                        c.stats.successes,
                        c.stats.runs
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "- {}, Np = {np}: {}{reported} of our {} textbook f32 runs report success; {verdict}.{}",
                e.title,
                thesis.unwrap_or_default(),
                c.stats.runs,
                if others.is_empty() {
                    String::new()
                } else {
                    format!(" For comparison: {}.", others.join(", "))
                }
            );
        }
    }
    s.push('\n');
}

fn table56_section(s: &mut String, r: &Reproduction) {
    let o = &r.options;
    let _ = writeln!(
        s,
        "## Table 5.6: original DE against the thesis variant\n\n\
         The original DE is rand/1/bin with F = {ORIGINAL_F} and Cr = {ORIGINAL_CR}, the same \
         initial domain (initialisation only) and the same evaluations as the variant at each \
         function's largest population. The variant's rows are the runs of the sections above. \
         Cells with two figures: reported / verified.\n"
    );
    s.push_str(&header(&[
        "function",
        "Np",
        "g_max",
        "evaluations",
        "arithmetic",
        "scheme",
        "mean error (thesis)",
        "mean error (ours)",
        "success % (ours)",
        "time s (thesis)",
        "time/run s (ours)",
        "batch wall s (ours)",
    ]));
    for e in o.experiments() {
        let np = o.table56_np(e);
        for &a in &o.arithmetics {
            for scheme in [Scheme::Original, Scheme::Edcp] {
                let Some(c) = r.find(e.function, np, a, scheme) else {
                    continue;
                };
                let (t_err, t_time) = match (o.quick, scheme) {
                    (true, _) => (None, None),
                    (false, Scheme::Original) => (
                        Some(e.table56.original_error),
                        Some(e.table56.original_time_s),
                    ),
                    (false, Scheme::Edcp) => {
                        (Some(e.table56.edcp_error), Some(e.table56.edcp_time_s))
                    }
                };
                s.push_str(&row(&[
                    e.title.to_string(),
                    np.to_string(),
                    c.case.g_max.to_string(),
                    grouped(c.case.evaluations()),
                    a.label(),
                    scheme.describe(),
                    t_err.map_or(NONE.into(), fmt_thesis),
                    pair(fmt_err(c.reported.mean_error), fmt_err(c.stats.mean_error)),
                    pair(
                        format!("{:.2}", c.reported.success_pct),
                        format!("{:.2}", c.stats.success_pct),
                    ),
                    t_time.map_or(NONE.into(), fmt_thesis),
                    fmt_secs(c.time_per_run_s()),
                    fmt_secs(c.batch_wall_s),
                ]));
            }
        }
    }
    s.push('\n');
    if !o.quick {
        let printed: Vec<String> = o
            .experiments()
            .iter()
            .filter(|e| e.table56.evaluations_printed != e.table56.np as u64 * (1 + e.g_max as u64))
            .map(|e| {
                format!(
                    "{} {} (Np + Np·g_max = {})",
                    e.title,
                    grouped(e.table56.evaluations_printed),
                    grouped(e.table56.np as u64 * (1 + e.g_max as u64))
                )
            })
            .collect();
        if !printed.is_empty() {
            let _ = writeln!(
                s,
                "Evaluations as Table 5.6 prints them, where they differ from Np + Np·g_max: {}.\n",
                printed.join("; ")
            );
        }
    }
}

fn notes_section(s: &mut String, r: &Reproduction, plots: &[Plot]) {
    let o = &r.options;
    let _ = writeln!(s, "## Notes\n");
    let arithmetics: Vec<String> = o.arithmetics.iter().map(|a| a.label()).collect();
    let mut note = |t: String| {
        let _ = writeln!(s, "- {t}");
    };
    note(format!(
        "Arithmetic: {} on every engine; the thesis ran in single precision with the formulas \
         as printed (textbook f32). f4 is the standard generalized penalized function 2 (the \
         thesis's equation prints a factor 10 that its code and results do not have; see \
         docs/FUNCTIONS.md).",
        arithmetics.join(", ")
    ));
    note(format!(
        "Verification: after each run its best point is evaluated on the host in f64 with the \
         exact formulas; error statistics marked verified, success counts and the \
         classification use that value (`verified_error` in runs.json), reported ones the \
         search's own (`error`). Success = error ≤ {:e}.",
        published::SUCCESS_ERROR
    ));
    note(format!(
        "Failing runs (`outcome` in runs.json): *trapped* when the verified error is within \
         {:.0} % of the error of the known local minimum of the best point's cell (Rosenbrock: \
         x₁ < 0, the local minimum near (−1, 1, …, 1), found by Newton's method, error 3.98662 \
         at D = 128; f4: the leading components with round(3(x_j − 1)) ≠ 0, each held a third \
         (or more) off 1, error 0.010987 for x₁ alone; Griewank: the components with \
         n_j = round(x_j/(π√j)) ≠ 0 when Σn_j is even, so that the cosines' product is +1 \
         (x₁ ≈ ±2π alone: error 0.009865); minima refined in f64 by \
         golden-section searches; `minimum`, `minimum_error` and `minimum_distance`, the largest \
         component difference, in runs.json). Otherwise *descending* when the search's best \
         value still improved over the last {:.0} % of the generations, else *stalled* (its \
         arithmetic no longer sees better points). Ackley has no known local minima here.",
        100.0 * minima::TRAPPED_RELATIVE,
        100.0 * minima::TAIL
    ));
    note(
        "Bounds: the domain is used only to draw the initial population; later generations \
         are not kept inside it (as in the thesis)."
            .into(),
    );
    note(
        "Random numbers: Philox4x32-10, keyed by the seed, one random stream per run \
         (stream k for run k); the thesis used CURAND's XORWOW generator."
            .into(),
    );
    note(
        "Random indices r1, r2 (and r3 for rand/1) are drawn without rejection: each draw is \
         uniform over the indices still free (one 32-bit word each, multiply-shift mapping with \
         bias below Np/2³²); the thesis's appendix B draws them by rejection."
            .into(),
    );
    note(
        "λ of the thesis variant is drawn afresh for every component of every individual, \
         uniform in (0, 1] (w·2⁻³² + 2⁻³³ for a 32-bit word w)."
            .into(),
    );
    note(
        "x_best is the best individual of the current population; with greedy selection this \
         is the best solution found so far."
            .into(),
    );
    note(
        "Every run performs all g_max generations (no early stop); error = best value − the \
         function's minimum (0 for all four); evaluations = Np + Np·g_max."
            .into(),
    );
    if r.context.backend == "cuda" {
        note(format!(
            "GPU layout flag: `{}` (with `auto` or `batch`, the runs of a case share one launch, \
             one thread block per run).",
            r.context.mode
        ));
    }
    let clamped: usize = plots.iter().map(|p| p.clamped).sum();
    let values: usize = plots.iter().map(|p| p.values).sum();
    note(format!(
        "Plots: one per function and arithmetic, of the error the search computed (reported): \
         the median and the 25–75 % band of the best error across runs, at most \
         {HISTORY_POINTS} evenly spaced generations per curve, log-scale y axis. A log scale \
         cannot show errors ≤ 0 (an exact zero error, or a best value rounded below the \
         minimum): where there are such values, the plot's bottom line, labelled 0 and two \
         decades below the smallest positive value plotted, stands for them; {clamped} of \
         {values} plotted values (quartiles and medians) are drawn there. Text is set in \
         DejaVu Sans."
    ));
    note(
        "Files: `runs.json` (every run, with its verified error and outcome, and the case \
         statistics, reported and verified), `histories.json` (per run, the best error at the \
         sampled generations, and the plotted quantiles)."
            .into(),
    );
}

#[cfg(test)]
mod tests {
    use super::super::cases::Options;
    use super::super::minima::Outcome;
    use super::super::runner::{Context, collect, utc_now};
    use super::*;
    use gpude::RunResult;

    /// A run's result as an engine would return it.
    fn result(x: Vec<f64>, error: f64, verified_error: f64, history: Vec<f64>) -> RunResult {
        RunResult {
            best_x: nalgebra::DVector::from_vec(x),
            best_f: error,
            error,
            verified_error,
            errors_disagree: error != verified_error,
            generations: history.len() as u32 - 1,
            evaluations: 0,
            termination: gpude::Termination::MaxGenerations,
            elapsed: std::time::Duration::ZERO,
            history: Some(history),
            backend: "cpu",
            layout: gpude::RunLayout::Cpu,
            launch_runs: 1,
            seed: 1,
            stream: 0,
        }
    }

    #[test]
    fn report_names_artefacts_and_trapped_runs() {
        let options = Options {
            functions: vec![Function::Griewank],
            arithmetics: vec![Arithmetic::TEXTBOOK_F32, Arithmetic::EXACT_F32],
            runs: 4,
            table56: false,
            ..Options::thesis()
        };
        let near = vec![1e-4; 128];
        let trap = minima::local_minimum_of_cell(Function::Griewank, &{
            let mut x = vec![0.0; 128];
            x[0] = 6.3;
            x
        })
        .unwrap();
        let flat = vec![1.0; 1001];
        let results = options
            .cases()
            .iter()
            .map(|case| {
                let rs: Vec<RunResult> = if case.arithmetic == Arithmetic::TEXTBOOK_F32 {
                    // Three reported successes the verification refutes, one descending.
                    let mut v = vec![result(near.clone(), 0.0, 3e-8, flat.clone()); 3];
                    v.push(result(
                        vec![0.5; 128],
                        0.02,
                        0.02,
                        (0..=1000).map(|g| 1.0 / (1.0 + g as f64)).collect(),
                    ));
                    v
                } else {
                    // Three true successes and one run trapped at a local minimum.
                    let mut v = vec![result(vec![1e-9; 128], 1e-13, 1e-13, flat.clone()); 3];
                    v.push(result(trap.x.clone(), trap.error, trap.error, flat.clone()));
                    v
                };
                collect(case, &rs, 1.0)
            })
            .collect();
        let r = Reproduction {
            options,
            context: Context {
                date: utc_now(),
                command: "gpude reproduce thesis".into(),
                gpude: "0",
                ptx_arch: "sm_70",
                backend: "cpu",
                device: None,
                multiprocessors: None,
                fallback_reason: None,
                mode: "auto".into(),
                cpu_threads: 1,
            },
            results,
        };
        let c = r
            .find(
                Function::Griewank,
                2048,
                Arithmetic::TEXTBOOK_F32,
                Scheme::Edcp,
            )
            .unwrap();
        assert_eq!((c.reported.successes, c.stats.successes), (3, 0));
        assert_eq!(c.failures.artefacts, 3);
        assert_eq!((c.failures.stalled, c.failures.descending), (3, 1));
        let c = r
            .find(
                Function::Griewank,
                2048,
                Arithmetic::EXACT_F32,
                Scheme::Edcp,
            )
            .unwrap();
        assert_eq!((c.reported.successes, c.stats.successes), (3, 3));
        assert_eq!(c.failures.trapped_runs(), 1);
        assert_eq!(c.runs[3].classification.outcome, Outcome::Trapped);

        let report = report_markdown(&r, &[]);
        assert!(
            report.contains(
                "- Griewank, Np = 2048: the thesis reports 85.71 %; 3 of our 4 textbook f32 runs \
                 report success; all of them fail verification (median verified error 3.000e-8): \
                 **the thesis's successes here are f32 artefacts**. For comparison: exact f32 3/4 \
                 verified."
            ),
            "{report}"
        );
        assert!(
            report.contains("| 2048 | 2,050,048 | 85.71 | 0.000986 | 75.00 / 0.00 | "),
            "{report}"
        );
        assert!(
            report.contains(&format!(
                "| 2048 | exact f32 | 1 | 0 | 1 (1 at {}, error 0.00986467) | 0 | 0 |",
                trap.name
            )),
            "{report}"
        );
        assert!(
            report.contains(
                "| 2048 | textbook f32 | 4 | 3 | 0 | 1 (median 2.000e-2) | 3 (median 3.000e-8) |"
            ),
            "{report}"
        );
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(8_200_192), "8,200,192");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
    }
}
