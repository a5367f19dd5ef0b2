//! Tests of `gpude reproduce thesis` in quick mode on the CPU backend.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_gpude");

fn gpude(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the gpude binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh, empty folder in the test scratch space.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("reproduce-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
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

/// Every cell of a column whose header says "(ours)" is a number; success rates are
/// percentages.
fn check_ours(t: &Table) {
    let ours: Vec<usize> = (0..t.header.len())
        .filter(|&c| t.header[c].contains("(ours)"))
        .collect();
    assert!(ours.len() >= 4, "too few of our columns: {:?}", t.header);
    for r in &t.rows {
        for &c in &ours {
            let v: f64 = r[c].parse().unwrap_or_else(|_| {
                panic!("{:?} = {:?} is not a number (row {r:?})", t.header[c], r[c])
            });
            assert!(!v.is_nan(), "{:?} is NaN in row {r:?}", t.header[c]);
            if t.header[c].starts_with("success %") {
                assert!((0.0..=100.0).contains(&v), "success {v} in row {r:?}");
            } else if t.header[c].contains(" s ") {
                assert!(v >= 0.0, "time {v} in row {r:?}");
            }
        }
    }
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

#[test]
fn quick_reproduction_writes_the_report_the_runs_and_the_plots() {
    let dir = scratch("quick");
    let report = quick(&dir, &[]);

    assert!(report.contains("**backend**: cpu"), "{report}");
    assert!(
        report.contains("--quick"),
        "the command line is in the header"
    );
    let functions = [
        ("Griewank", "griewank"),
        ("Rosenbrock", "rosenbrock"),
        ("Ackley", "ackley"),
        ("f4", "f4"),
    ];
    for (title, name) in functions {
        let t = table_after(&report, &format!("## {title} (`{name}`)"));
        assert_eq!(t.rows.len(), 2, "two sizes of {title}");
        assert_eq!(t.rows[0][0], "64");
        assert_eq!(t.rows[1][0], "128");
        check_ours(&t);
        assert!(report.contains(&format!("](plot_{name}.png)")), "plot link");
        check_png(&dir.join(format!("plot_{name}.png")));
        check_svg(&dir.join(format!("plot_{name}.svg")));
    }
    let t56 = table_after(&report, "## Table 5.6");
    assert_eq!(t56.rows.len(), 8, "original and variant for four functions");
    check_ours(&t56);
    assert!(report.contains("## Notes"));
    assert!(report.contains("Philox"));

    let runs: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("runs.json")).expect("runs.json is written"),
    )
    .expect("runs.json is JSON");
    let list = runs["runs"].as_array().expect("a list of runs");
    // 4 functions × 2 sizes + 4 comparisons, 3 runs each.
    assert_eq!(list.len(), 36);
    assert_eq!(runs["cases"].as_array().map(Vec::len), Some(12));
    for r in list {
        for key in [
            "case",
            "function",
            "np",
            "g_max",
            "precision",
            "strategy",
            "run",
            "best_f",
            "error",
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
    }
    let histories: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("histories.json")).expect("histories.json is written"),
    )
    .expect("histories.json is JSON");
    assert_eq!(histories["cases"].as_array().map(Vec::len), Some(12));
}

#[test]
fn both_precisions_add_f64_rows_and_plots() {
    let dir = scratch("both");
    let report = quick(
        &dir,
        &[
            "--functions",
            "ackley",
            "--precision",
            "both",
            "--runs",
            "2",
            "--no-table56",
        ],
    );
    let t = table_after(&report, "## Ackley");
    let precisions: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(precisions, ["f32", "f64", "f32", "f64"]);
    check_ours(&t);
    assert!(!report.contains("## Griewank"));
    assert!(!report.contains("## Table 5.6"));
    check_png(&dir.join("plot_ackley_f64.png"));
    check_svg(&dir.join("plot_ackley_f64.svg"));
}

#[test]
fn bad_options_fail_cleanly() {
    let dir = scratch("bad");
    let out = dir.to_str().expect("a UTF-8 path");
    for (flags, needle) in [
        (&["--functions", "griewank,sphere"][..], "sphere"),
        (&["--runs", "0"][..], "runs = 0"),
        (&["--precision", "f16"][..], "precision"),
        (&["--backend", "tpu"][..], "backend"),
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
