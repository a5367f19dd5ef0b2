//! Tests of `gpude reproduce cec2017` through the binary: the quick run's report and
//! runs.json, and the refusals that come before any run.
//!
//! The quick run needs the reference folder `shared/reference` beside the repository (the
//! published results and the CEC 2017 data). Without it the test prints a SKIPPED line to
//! stderr and passes, unless `GPUDE_REQUIRE_CEC2017=1`, where it fails.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    scratch_dir("cec2017-tests", name)
}

/// The reference folder, or None with a SKIPPED line when it is absent and not required.
fn reference() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference");
    let complete = dir.join("cec2017-published.md").is_file()
        && dir.join("cec2017-runs.csv").is_file()
        && dir.join("cec2017/CEC17_fast_pow-C++.zip").is_file();
    if complete {
        return Some(dir);
    }
    if std::env::var("GPUDE_REQUIRE_CEC2017").is_ok_and(|v| v == "1") {
        panic!(
            "GPUDE_REQUIRE_CEC2017=1 but {} is incomplete",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED: {} is absent (set GPUDE_REQUIRE_CEC2017=1 to require it)",
        dir.display()
    );
    None
}

/// A quick CPU run of `reproduce cec2017` with `extra` flags into `scratch(name)`, which
/// must succeed: its folder, REPORT.md, runs.json and what it printed on stdout.
fn quick_cpu_run(name: &str, reference: &Path, extra: &[&str]) -> (PathBuf, String, Value, String) {
    let dir = scratch(name);
    let mut args = vec!["reproduce", "cec2017", "--quick", "--backend", "cpu"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--out",
        dir.to_str().expect("UTF-8"),
        "--reference",
        reference.to_str().expect("UTF-8"),
    ]);
    let o = gpude(&args);
    assert!(
        o.status.success(),
        "exit {:?}\n{}\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    let report = std::fs::read_to_string(dir.join("REPORT.md")).expect("REPORT.md");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("runs.json")).expect("runs.json"))
            .expect("runs.json is JSON");
    (dir, report, json, text(&o.stdout))
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// The first Markdown table after the heading `heading`: header and rows.
fn table_after(report: &str, heading: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let rest = &report[report.find(heading).expect("the heading")..];
    let lines: Vec<&str> = rest
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(lines.len() >= 2, "a table under {heading}");
    let header = cells(lines[0]);
    let rows = lines[2..].iter().map(|l| cells(l)).collect();
    (header, rows)
}

/// `1.81 ± 0.861` → (1.81, 0.861).
fn mean_sd(cell: &str) -> (f64, f64) {
    let (m, s) = cell.split_once('±').expect("mean ± sd");
    (
        m.trim().parse().expect("a mean"),
        s.trim().parse().expect("an sd"),
    )
}

/// Equal to the 3 significant digits printed.
fn agrees(exact: f64, printed: f64) -> bool {
    if printed == 0.0 {
        return exact == 0.0;
    }
    let unit = 10f64.powi(printed.abs().log10().floor() as i32 - 2);
    (exact - printed).abs() <= 0.5001 * unit
}

#[test]
fn quick_run_writes_a_report_that_agrees_with_runs_json() {
    let Some(reference) = reference() else {
        return;
    };
    let (_, report, json, stdout) = quick_cpu_run("quick", &reference, &[]);
    assert!(
        report.contains("--quick"),
        "the command line is in the report"
    );

    let (header, rows) = table_after(&report, "## D = 10 (3000 evaluations per run)");
    assert_eq!(
        header,
        [
            "F",
            "function",
            "gpude jSO",
            "gpude L-SHADE",
            "published jSO",
            "published LSHADE-cnEpSin",
            "published EBOwithCMAR",
            "gpude jSO / published jSO",
            "rank-sum vs published jSO",
        ]
    );
    // Each strategy's time: one batch held its runs of every function at this D.
    let times = report
        .lines()
        .find(|l| l.starts_with("CPU time at D = 10 "))
        .expect("the times line");
    let firsts: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(firsts, ["F1", "F5"]);
    // The published cells are the published tables' (D = 10).
    assert_eq!(rows[0][4], "0 ± 0");
    assert_eq!(rows[1][4], "1.76 ± 0.76");
    assert_eq!(rows[1][5], "1.69 ± 0.753");
    assert_eq!(rows[1][6], "0 ± 0");

    let results = json["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    let (mut within, mut verdicts) = (0, [0usize; 3]);
    for (row, r) in rows.iter().zip(results) {
        assert_eq!(row[0], format!("F{}", r["function"]));
        assert_eq!(r["dim"], 10);
        assert_eq!(r["budget"], 3000);
        let gpude = r["gpude"].as_array().expect("gpude runs");
        assert_eq!(gpude.len(), 2);
        for (k, (s, runs)) in ["jso", "lshade"].iter().zip(gpude).enumerate() {
            assert_eq!(runs["strategy"], *s);
            let errors: Vec<f64> = runs["errors"]
                .as_array()
                .expect("errors")
                .iter()
                .map(|e| e.as_f64().expect("a number"))
                .collect();
            assert_eq!(errors.len(), 3);
            assert!(
                errors.iter().all(|&e| e == 0.0 || e >= 1e-8),
                "errors below 1e-8 count as 0: {errors:?}"
            );
            let evals = runs["evaluations"].as_array().expect("evaluations");
            assert!(evals.iter().all(|e| e == 3000), "{evals:?}");
            let mean = errors.iter().sum::<f64>() / 3.0;
            let sd = (errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
            let (m, d) = mean_sd(&row[2 + k]);
            assert!(agrees(mean, m), "{}: {} vs {mean}", row[0], row[2 + k]);
            assert!(agrees(sd, d), "{}: {} vs {sd}", row[0], row[2 + k]);
            let wall = runs["wall_s"].as_f64().expect("wall_s");
            let name = ["jSO", "L-SHADE"][k];
            assert!(
                wall > 0.0 && times.contains(&format!("{name} {wall:.2} s")),
                "{times} vs {wall}"
            );
            // Every function's runs of the strategy shared the batch.
            assert_eq!(
                wall,
                results[0]["gpude"][k]["wall_s"].as_f64().expect("wall_s")
            );
        }
        // F5 is far from solved in 3000 evaluations; its ratio is a number.
        let c = &r["jso_vs_published"];
        let verdict = c["verdict"].as_str().expect("a verdict");
        assert!(row[8].starts_with(verdict), "{} vs {verdict}", row[8]);
        match c["ratio"].as_f64() {
            Some(ratio) => assert_eq!(row[7], format!("{ratio:.3}")),
            None if c["both_below"] == true => assert_eq!(row[7], "both < 1e-8"),
            None => assert_eq!(row[7], "∞ (published < 1e-8)"),
        }
        if r["function"] == 5 {
            let ratio = c["ratio"]
                .as_f64()
                .expect("F5 has a published mean above 0");
            assert!(ratio > 1.0, "F5 after 3000 evaluations: {ratio}");
            assert_eq!(
                verdict, "worse",
                "3 runs of a short budget against 51 full ones"
            );
        }
        within += (c["within"] == true) as usize;
        verdicts[["better", "same", "worse"]
            .iter()
            .position(|v| *v == verdict)
            .expect("a known verdict")] += 1;
    }
    let s = &json["summaries"][0];
    assert_eq!(s["within"], within);
    assert_eq!(s["better"], verdicts[0]);
    assert_eq!(s["same"], verdicts[1]);
    assert_eq!(s["worse"], verdicts[2]);
    let line = format!(
        "on {within} of 2 functions ({:.0} %); rank-sum test against the published jSO runs (α = 0.05): {} better, {} same, {} worse.",
        100.0 * within as f64 / 2.0,
        verdicts[0],
        verdicts[1],
        verdicts[2]
    );
    assert!(
        report.contains(&line),
        "the summary line {line:?} in\n{report}"
    );
    assert!(stdout.contains(&line), "and on stdout");
}

/// `--strategies jso,thesis,rand1bin`: the classic strategies' columns in the table and
/// their runs in runs.json, at the same budget (Np = 100: 3000 evaluations at D = 10).
#[test]
fn classic_strategies_run_beside_the_adaptive_ones() {
    let Some(reference) = reference() else {
        return;
    };
    let (_, report, json, _) = quick_cpu_run(
        "classic",
        &reference,
        &["--strategies", "jso,thesis,rand/1/bin", "--functions", "5"],
    );
    assert!(report.contains("Np = 100"), "{report}");
    let (header, rows) = table_after(&report, "## D = 10 (3000 evaluations per run)");
    assert_eq!(
        &header[2..5],
        ["gpude jSO", "gpude thesis", "gpude rand/1/bin"]
    );
    assert!(
        report.contains("CPU time at D = 10 (") && report.contains("rand/1/bin "),
        "{report}"
    );
    assert_eq!(rows.len(), 1);
    let gpude = json["results"][0]["gpude"].as_array().expect("gpude runs");
    let names: Vec<&str> = gpude
        .iter()
        .map(|r| r["strategy"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["jso", "thesis", "rand1bin"]);
    for (k, runs) in gpude.iter().enumerate() {
        let evals = runs["evaluations"].as_array().expect("evaluations");
        assert_eq!(evals.len(), 3);
        assert!(evals.iter().all(|e| e == 3000), "{evals:?}");
        let errors: Vec<f64> = runs["errors"]
            .as_array()
            .expect("errors")
            .iter()
            .map(|e| e.as_f64().expect("a number"))
            .collect();
        let mean = errors.iter().sum::<f64>() / 3.0;
        let (m, _) = mean_sd(&rows[0][2 + k]);
        assert!(
            agrees(mean, m),
            "{}: {} vs {mean}",
            names[k],
            rows[0][2 + k]
        );
        assert!(mean > 0.0, "F5 is not solved in 3000 evaluations");
    }
}

#[test]
fn the_cuda_backend_runs_on_a_gpu_and_writes_nothing_without_one() {
    let dir = scratch("cuda");
    let o = gpude(&[
        "reproduce",
        "cec2017",
        "--quick",
        "--backend",
        "cuda",
        "--out",
        dir.to_str().expect("UTF-8"),
    ]);
    let err = text(&o.stderr);
    if o.status.success() {
        // A GPU ran the batches: the report gives their times as GPU times.
        let report = std::fs::read_to_string(dir.join("REPORT.md")).expect("a report");
        assert!(report.contains("GPU time at D = 10 ("), "{report}");
        assert!(!report.contains("CPU time"), "{report}");
        // The GPU runs record their histories too: the plots are drawn from them.
        for f in [1, 5] {
            let png = dir.join(format!("plots/D10_F{f}.png"));
            assert!(
                std::fs::metadata(&png).is_ok_and(|m| m.len() > 1000),
                "{}",
                png.display()
            );
            assert!(
                report.contains(&format!("(plots/D10_F{f}.svg)")),
                "{report}"
            );
        }
    } else {
        assert!(err.contains("CUDA is not available"), "{err}");
        assert!(!dir.exists(), "nothing is written");
    }
}

#[test]
fn bad_flags_and_outputs_are_refused_before_any_run() {
    let file = scratch("a-file");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("folder");
    std::fs::write(&file, b"x").expect("a file");
    let out = file.join("sub");
    let out = out.to_str().expect("UTF-8");
    let o = gpude(&[
        "reproduce",
        "cec2017",
        "--quick",
        "--backend",
        "cpu",
        "--out",
        out,
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("output folder"),
        "{}",
        text(&o.stderr)
    );
    for (flag, value, says) in [
        ("--dims", "20", "not a CEC 2017 dimension"),
        ("--functions", "0,3", "not a function number"),
        ("--strategies", "best1", "not one of jde"),
        ("--strategies", "rand1exp", "not one of jde"),
        ("--runs", "0", "--runs 0 is not allowed"),
    ] {
        let o = gpude(&["reproduce", "cec2017", "--quick", flag, value]);
        assert!(!o.status.success(), "{flag} {value}");
        assert!(
            text(&o.stderr).contains(says),
            "{flag}: {}",
            text(&o.stderr)
        );
    }
    let o = gpude(&[
        "reproduce",
        "cec2017",
        "--quick",
        "--backend",
        "cpu",
        "--out",
        scratch("missing-reference").to_str().expect("UTF-8"),
        "--reference",
        "/nonexistent/reference",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("/nonexistent/reference"),
        "{}",
        text(&o.stderr)
    );
}

/// The convergence plots: one PNG and one SVG per dimension and function under `plots/`,
/// linked from the report's "Convergence" section, and their median curves in runs.json.
#[test]
fn quick_run_writes_convergence_plots_that_the_report_links() {
    let Some(reference) = reference() else {
        return;
    };
    let (dir, report, json, _) =
        quick_cpu_run("plots", &reference, &["--strategies", "jso,lshade,thesis"]);
    let section = &report[report
        .find("### Convergence, D = 10")
        .expect("a Convergence section")..];
    for f in [1, 5] {
        let stem = format!("plots/D10_F{f}");
        let png = std::fs::read(dir.join(format!("{stem}.png"))).expect("the PNG");
        assert!(png.len() > 1000, "{stem}.png: {} bytes", png.len());
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{stem}.png is a PNG");
        let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).expect("the SVG");
        assert!(svg.contains("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("jSO") && svg.contains("L-SHADE") && svg.contains("thesis"));
        assert!(svg.contains("evaluations"), "the x axis is the evaluations");
        assert!(
            section.contains(&format!("]({stem}.png)"))
                && section.contains(&format!("]({stem}.svg)")),
            "{stem} is linked:\n{section}"
        );
    }
    // The curves in runs.json: from the initial population to the whole budget, the
    // median error never below 1e-8 and never rising (each run's best only improves).
    for r in json["results"].as_array().expect("results") {
        for runs in r["gpude"].as_array().expect("gpude runs") {
            let name = runs["strategy"].as_str().expect("a name");
            let evals: Vec<u64> = runs["curve"]["evaluations"]
                .as_array()
                .expect("evaluations")
                .iter()
                .map(|e| e.as_u64().expect("a count"))
                .collect();
            let errors: Vec<f64> = runs["curve"]["median_error"]
                .as_array()
                .expect("median errors")
                .iter()
                .map(|e| e.as_f64().expect("a number"))
                .collect();
            assert_eq!(evals.len(), errors.len());
            assert!(evals.len() > 2, "{name}");
            // The initial populations: round(25 ln D √D) = 182 (jSO), 18 D (L-SHADE),
            // Np = 100 (thesis).
            let initial = match name {
                "jso" => 182,
                "lshade" => 180,
                _ => 100,
            };
            assert_eq!(evals[0], initial, "{name}");
            assert_eq!(evals.last(), Some(&3000), "{name}: the whole budget");
            assert!(evals.windows(2).all(|w| w[0] < w[1]), "{name}: {evals:?}");
            assert!(errors.iter().all(|&e| e >= 1e-8), "{name}: {errors:?}");
            assert!(
                errors.windows(2).all(|w| w[1] <= w[0]),
                "{name}: {errors:?}"
            );
            // The last point is the median of the final best values; the verified
            // median agrees up to the competition's zero.
            let median = runs["median"].as_f64().expect("median");
            let last = *errors.last().expect("points");
            assert!(
                (last - median.max(1e-8)).abs() <= 1e-6 * median.max(1.0),
                "{name}: {last} vs {median}"
            );
        }
    }
}
