//! Tests of `gpude reproduce thesis` in quick mode on the CPU backend.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    scratch_dir("reproduce-tests", name)
}

/// Runs `reproduce thesis --quick --backend cpu --out DIR` with more flags; must succeed.
fn quick(dir: &Path, more: &[&str]) -> String {
    let out = dir.to_str().expect("a UTF-8 path");
    let mut args = vec![
        "reproduce",
        "thesis",
        "--quick",
        "--backend",
        "cpu",
        "--out",
        out,
    ];
    args.extend_from_slice(more);
    let o = gpude(&args);
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    std::fs::read_to_string(dir.join("REPORT.md")).expect("REPORT.md is written")
}

/// A Markdown table of the report: its header and rows of cells.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// The table that follows the first line starting with `heading`.
fn table_after(report: &str, heading: &str) -> Table {
    let start = report
        .find(heading)
        .unwrap_or_else(|| panic!("{heading:?} not in the report:\n{report}"));
    let mut lines = report[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'));
    let header = cells(lines.next().expect("a table header"));
    let rule = lines.next().expect("a header rule");
    assert!(rule.contains("---"), "{rule}");
    let rows: Vec<Vec<String>> = lines.map(cells).collect();
    for r in &rows {
        assert_eq!(r.len(), header.len(), "row {r:?} under {header:?}");
    }
    Table { header, rows }
}

/// A cell of ours: one number, or `reported / verified`.
fn numbers(cell: &str) -> Vec<f64> {
    cell.split(" / ")
        .map(|v| {
            // Counts may carry details: `3 (median 1.2e-9)`.
            let head = v.split(" (").next().unwrap_or(v);
            head.parse::<f64>()
                .unwrap_or_else(|_| panic!("{cell:?} is not a number or a pair of numbers"))
        })
        .collect()
}

/// Every cell of a column whose header says "(ours)" is a number (or a reported /
/// verified pair); success rates are percentages; times are not negative.
fn check_ours(t: &Table) {
    let ours: Vec<usize> = (0..t.header.len())
        .filter(|&c| t.header[c].contains("(ours)"))
        .collect();
    assert!(ours.len() >= 4, "too few of our columns: {:?}", t.header);
    for r in &t.rows {
        for &c in &ours {
            for v in numbers(&r[c]) {
                assert!(!v.is_nan(), "{:?} is NaN in row {r:?}", t.header[c]);
                if t.header[c].contains("success %") {
                    assert!((0.0..=100.0).contains(&v), "success {v} in row {r:?}");
                } else if t.header[c].contains(" s ") || !t.header[c].contains("error") {
                    assert!(v >= 0.0, "{:?} = {v} in row {r:?}", t.header[c]);
                }
            }
        }
    }
}

/// The column of a header.
fn col(t: &Table, name: &str) -> usize {
    t.header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name:?} in {:?}", t.header))
}

fn check_png(path: &Path) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        b.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    assert!(
        b.len() > 10_000,
        "{} is only {} bytes",
        path.display(),
        b.len()
    );
}

fn check_svg(path: &Path) {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(s.contains("<svg"), "{} is not an SVG", path.display());
    assert!(s.contains("<text"), "{} has no text", path.display());
    assert!(
        s.len() > 5_000,
        "{} is only {} bytes",
        path.display(),
        s.len()
    );
}

/// The text of a report's section, from its heading to the next `## ` heading.
fn section<'a>(report: &'a str, heading: &str) -> &'a str {
    let start = report
        .find(heading)
        .unwrap_or_else(|| panic!("{heading:?} not in the report:\n{report}"));
    let rest = &report[start + heading.len()..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e + 1);
    &report[start..start + heading.len() + end]
}

/// The default arithmetics, as the report labels them and runs.json names them.
const ARITHMETICS: [(&str, &str); 3] = [
    ("textbook f32", "textbook-f32"),
    ("exact f32", "exact-f32"),
    ("f64", "f64"),
];

fn runs_json(dir: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(dir.join("runs.json")).expect("runs.json is written"),
    )
    .expect("runs.json is JSON")
}

/// The runs of one case in runs.json.
fn runs_of<'a>(runs: &'a Value, case: &str) -> Vec<&'a Value> {
    let v: Vec<&Value> = runs["runs"]
        .as_array()
        .expect("a list of runs")
        .iter()
        .filter(|r| r["case"] == case)
        .collect();
    assert!(!v.is_empty(), "no runs of {case}");
    v
}

fn count(runs: &[&Value], key: &str, value: Value) -> usize {
    runs.iter().filter(|r| r[key] == value).count()
}

fn pct(n: usize, of: usize) -> String {
    format!("{:.2}", 100.0 * n as f64 / of as f64)
}

/// Each run's fields agree with each other: success and reported success against the
/// two errors, artefacts, the outcome and its local minimum, the arithmetic.
fn check_run(r: &Value) {
    for key in [
        "case",
        "function",
        "np",
        "g_max",
        "arithmetic",
        "precision",
        "formula",
        "strategy",
        "run",
        "best_f",
        "error",
        "verified_error",
        "errors_disagree",
        "success",
        "reported_success",
        "artefact",
        "outcome",
        "minimum",
        "minimum_error",
        "minimum_distance",
        "generations",
        "evaluations",
        "elapsed_s",
        "batch_wall_s",
        "backend",
    ] {
        assert!(r.get(key).is_some(), "{key} missing in {r}");
    }
    assert_eq!(r["backend"], "cpu");
    assert_eq!(r["generations"], r["g_max"]);
    let error = r["error"].as_f64().expect("error");
    let verified = r["verified_error"].as_f64().expect("verified_error");
    let success = verified <= 1e-10;
    let reported = error <= 1e-10;
    assert_eq!(r["success"], success, "{r}");
    assert_eq!(r["reported_success"], reported, "{r}");
    assert_eq!(r["artefact"], reported && !success, "{r}");
    let outcome = r["outcome"].as_str().expect("outcome");
    assert_eq!(outcome == "success", success, "{r}");
    if outcome == "trapped" {
        let m = r["minimum_error"].as_f64().expect("minimum_error");
        assert!(m > 0.0 && (verified - m).abs() <= 0.01 * m, "{r}");
        assert!(r["minimum"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
        assert!(
            r["minimum_distance"].as_f64().is_some_and(|d| d >= 0.0),
            "{r}"
        );
    } else {
        assert!(
            ["success", "descending", "stalled"].contains(&outcome),
            "{r}"
        );
        assert!(
            r["minimum"].is_null() && r["minimum_error"].is_null(),
            "{r}"
        );
    }
    let (precision, formula) = match r["arithmetic"].as_str().expect("arithmetic") {
        "textbook-f32" => ("f32", "textbook"),
        "exact-f32" => ("f32", "exact"),
        "f64" => ("f64", "exact"),
        "textbook-f64" => ("f64", "textbook"),
        other => panic!("arithmetic {other}"),
    };
    assert_eq!(
        (r["precision"].as_str(), r["formula"].as_str()),
        (Some(precision), Some(formula))
    );
    if r["arithmetic"] == "f64" {
        // The search's arithmetic is the verification's: nothing to disagree about.
        assert_eq!(r["errors_disagree"], false, "{r}");
    }
}

/// The tables of a function's section agree with runs.json.
fn check_function(
    report: &str,
    runs: &Value,
    title: &str,
    name: &str,
    arithmetics: &[(&str, &str)],
) {
    let sec = section(report, &format!("## {title} (`{name}`)"));
    let t = table_after(sec, "### Success and errors");
    assert_eq!(t.rows.len(), 2, "two sizes of {title}");
    assert_eq!(t.header.len(), 4 + 3 * arithmetics.len(), "{:?}", t.header);
    check_ours(&t);
    for (row, np) in t.rows.iter().zip(["64", "128"]) {
        assert_eq!(row[0], np);
        for (label, id) in arithmetics {
            let runs = runs_of(runs, &format!("{name}-np{np}-{id}-thesis"));
            let cell = &row[col(&t, &format!("{label}: success % (ours)"))];
            let want = format!(
                "{} / {}",
                pct(count(&runs, "reported_success", true.into()), runs.len()),
                pct(count(&runs, "success", true.into()), runs.len())
            );
            assert_eq!(cell, &want, "{title} Np = {np} {label}");
            let mean = numbers(&row[col(&t, &format!("{label}: mean error (ours)"))]);
            let median = numbers(&row[col(&t, &format!("{label}: median error (ours)"))]);
            assert_eq!((mean.len(), median.len()), (2, 2));
        }
    }

    let f = table_after(sec, "### Failing runs and times");
    assert_eq!(f.rows.len(), 2 * arithmetics.len());
    check_ours(&f);
    let labels: Vec<&str> = f.rows.iter().map(|r| r[1].as_str()).collect();
    let want: Vec<&str> = ["64", "128"]
        .iter()
        .flat_map(|_| arithmetics.iter().map(|a| a.0))
        .collect();
    assert_eq!(labels, want);
    for row in &f.rows {
        let id = arithmetics.iter().find(|a| a.0 == row[1]).expect("known").1;
        let runs = runs_of(runs, &format!("{name}-np{}-{id}-thesis", row[0]));
        let n = |c: &str| numbers(&row[col(&f, c)])[0] as usize;
        let failures = runs.len() - count(&runs, "success", true.into());
        assert_eq!(n("failures (ours)"), failures, "{row:?}");
        assert_eq!(n("artefacts (ours)"), count(&runs, "artefact", true.into()));
        assert_eq!(
            n("trapped (ours)"),
            count(&runs, "outcome", "trapped".into())
        );
        assert_eq!(
            n("descending (ours)"),
            count(&runs, "outcome", "descending".into())
        );
        assert_eq!(
            n("stalled (ours)"),
            count(&runs, "outcome", "stalled".into())
        );
        assert_eq!(
            n("trapped (ours)") + n("descending (ours)") + n("stalled (ours)"),
            failures,
            "{row:?}"
        );
        // Artefacts are reported successes; the verified successes are at least the
        // reported ones that are not artefacts.
        let reported = count(&runs, "reported_success", true.into());
        assert!(n("artefacts (ours)") <= reported);
        assert!(runs.len() - failures >= reported - n("artefacts (ours)"));
    }
}

#[test]
fn quick_reproduction_writes_the_report_the_runs_and_the_plots() {
    let dir = scratch("quick");
    let report = quick(&dir, &[]);

    assert!(report.contains("**backend**: cpu"), "{report}");
    assert!(
        report.contains("--quick"),
        "the command line is in the header"
    );
    assert!(report.contains("**arithmetic**: textbook f32, exact f32, f64"));
    let runs = runs_json(&dir);
    let list = runs["runs"].as_array().expect("a list of runs");
    // (4 functions × 2 sizes + 4 comparisons) × 3 arithmetics, 3 runs each.
    assert_eq!(list.len(), 108);
    assert_eq!(runs["cases"].as_array().map(Vec::len), Some(36));
    for r in list {
        check_run(r);
    }
    for c in runs["cases"].as_array().expect("cases") {
        for key in ["stats", "reported", "failures", "arithmetic", "formula"] {
            assert!(c.get(key).is_some(), "{key} missing in {c}");
        }
        let ours = runs_of(&runs, c["case"].as_str().expect("case id"));
        assert_eq!(
            c["failures"]["artefacts"].as_u64(),
            Some(count(&ours, "artefact", true.into()) as u64)
        );
        assert_eq!(
            c["reported"]["successes"].as_u64(),
            Some(count(&ours, "reported_success", true.into()) as u64)
        );
    }

    let functions = [
        ("Griewank", "griewank"),
        ("Rosenbrock", "rosenbrock"),
        ("Ackley", "ackley"),
        ("f4", "f4"),
    ];
    for (title, name) in functions {
        check_function(&report, &runs, title, name, &ARITHMETICS);
        for stem in [
            format!("plot_{name}"),
            format!("plot_{name}_exact-f32"),
            format!("plot_{name}_f64"),
        ] {
            assert!(
                report.contains(&format!("]({stem}.png)")),
                "plot link {stem}"
            );
            check_png(&dir.join(format!("{stem}.png")));
            check_svg(&dir.join(format!("{stem}.svg")));
        }
    }
    let artefacts = section(&report, "## f32 artefacts");
    for (title, _) in functions {
        for np in [64, 128] {
            let line = format!("- {title}, Np = {np}: ");
            assert!(artefacts.contains(&line), "{line:?} in\n{artefacts}");
        }
    }
    let t56 = table_after(&report, "## Table 5.6");
    assert_eq!(
        t56.rows.len(),
        24,
        "original and variant for four functions in three arithmetics"
    );
    check_ours(&t56);
    assert!(report.contains("## Notes"));
    assert!(report.contains("Philox"));
    for word in ["*trapped*", "*descending*", "*stalled*"] {
        assert!(report.contains(word), "{word} is explained");
    }

    let histories: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("histories.json")).expect("histories.json is written"),
    )
    .expect("histories.json is JSON");
    assert_eq!(histories["cases"].as_array().map(Vec::len), Some(36));
}

#[test]
fn chosen_arithmetics_choose_rows_and_plots() {
    let dir = scratch("arithmetics");
    let report = quick(
        &dir,
        &[
            "--functions",
            "ackley",
            "--arithmetic",
            "exact-f32,textbook-f64",
            "--runs",
            "2",
            "--no-table56",
        ],
    );
    let runs = runs_json(&dir);
    assert_eq!(runs["runs"].as_array().map(Vec::len), Some(8));
    for r in runs["runs"].as_array().expect("runs") {
        check_run(r);
    }
    check_function(
        &report,
        &runs,
        "Ackley",
        "ackley",
        &[("exact f32", "exact-f32"), ("textbook f64", "textbook-f64")],
    );
    assert!(!report.contains("## Griewank"));
    assert!(!report.contains("## Table 5.6"));
    assert!(report.contains("textbook f32 was not run"));
    check_png(&dir.join("plot_ackley.png"));
    check_png(&dir.join("plot_ackley_textbook-f64.png"));
    check_svg(&dir.join("plot_ackley_textbook-f64.svg"));
    assert!(!dir.join("plot_ackley_f64.png").exists());
}

#[test]
fn a_thesis_variant_reruns_the_edcp_cases_and_marks_the_report() {
    let flags = |variant: Option<&'static str>| {
        let mut f = vec![
            "--functions",
            "rosenbrock",
            "--arithmetic",
            "exact-f32",
            "--runs",
            "3",
            "--sizes",
            "64",
        ];
        if let Some(v) = variant {
            f.extend(["--thesis-variant", v]);
        }
        f
    };
    let base_dir = scratch("variant-default");
    let base_report = quick(&base_dir, &flags(None));
    assert!(base_report.contains("- **thesis variant**: default (gpude's own thesis strategy)"));
    let dir = scratch("variant");
    let name = "indices=rejection,generations=plus-one";
    let report = quick(&dir, &flags(Some(name)));
    assert!(
        report.contains(&format!(
            "- **thesis variant**: **`{name}`**: the EDCP cases run"
        )),
        "{report}"
    );
    let (runs, base) = (runs_json(&dir), runs_json(&base_dir));
    assert_eq!(runs["thesis_variant"], name);
    assert_eq!(base["thesis_variant"], "default");
    let mut edcp = 0;
    for (c, b) in runs["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .zip(base["cases"].as_array().expect("cases"))
    {
        assert_eq!(c["case"], b["case"]);
        let thesis =
            c["strategy"] == b["strategy"] && c["case"].as_str().unwrap().ends_with("-thesis");
        let g_max = c["g_max"].as_u64().expect("g_max");
        let np = c["np"].as_u64().expect("np");
        if thesis {
            edcp += 1;
            assert_eq!(c["thesis_variant"], name, "{c}");
            assert_eq!(c["evaluations"].as_u64(), Some(np * (g_max + 2)), "{c}");
        } else {
            // Table 5.6's original DE is not affected.
            assert_eq!(c["thesis_variant"], "default", "{c}");
            assert_eq!(c["evaluations"].as_u64(), Some(np * (g_max + 1)), "{c}");
        }
    }
    assert_eq!(edcp, 1, "--sizes 64 leaves one EDCP case");
    let mut changed = 0;
    for (r, b) in runs["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .zip(base["runs"].as_array().expect("runs"))
    {
        // (`check_run` expects g_max generations: plus-one runs one more.)
        assert_eq!(r["case"], b["case"]);
        let g_max = r["g_max"].as_u64().expect("g_max");
        if r["case"].as_str().unwrap().ends_with("-thesis") {
            assert_eq!(r["generations"].as_u64(), Some(g_max + 1), "{r}");
            changed += (r["best_f"] != b["best_f"]) as usize;
        } else {
            assert_eq!(r["generations"].as_u64(), Some(g_max), "{r}");
            assert_eq!(r["best_f"], b["best_f"], "{r}");
        }
    }
    assert!(changed >= 3, "{changed} EDCP runs changed");
}

#[test]
fn bad_options_fail_cleanly() {
    let dir = scratch("bad");
    let out = dir.to_str().expect("a UTF-8 path");
    for (flags, needle) in [
        (&["--functions", "griewank,sphere"][..], "sphere"),
        (&["--runs", "0"][..], "runs = 0"),
        (&["--arithmetic", "f16"][..], "arithmetic"),
        (&["--arithmetic", " , "][..], "arithmetic"),
        (&["--precision", "f32"][..], "--precision"),
        (&["--backend", "tpu"][..], "backend"),
        (
            &["--thesis-variant", "indices=random"][..],
            "unknown value of indices \"random\"",
        ),
        (
            &["--sizes", "2048"][..],
            "sizes = 2048 is not allowed: population sizes of the chosen functions in quick mode: 64, 128",
        ),
        (&["--sizes", "64,x"][..], "sizes = \"x\" is not allowed"),
    ] {
        let mut args = vec!["reproduce", "thesis", "--quick", "--out", out];
        args.extend_from_slice(flags);
        let o = gpude(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.starts_with("error: "), "{flags:?}: {err}");
        assert!(err.contains(needle), "{needle:?} not in {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!dir.join("REPORT.md").exists());
    }
}
