//! Tests of the `gpude` binary, on the CPU backend.

mod common;

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{BIN, gpude};

fn gpude_stdin(args: &[&str], input: &str) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    common::with_stdin(cmd, input)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Stdout of a command that must succeed.
fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

fn ok_json(o: Output) -> Value {
    let s = ok(o);
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}):\n{s}"))
}

/// Checks that a command fails cleanly with `code` and a message containing `needle`.
fn fails(o: Output, code: i32, needle: &str) {
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(code),
        "stderr:\n{err}\nstdout:\n{}",
        stdout(&o)
    );
    assert!(err.starts_with("error: "), "stderr:\n{err}");
    assert!(err.contains(needle), "{needle:?} not in stderr:\n{err}");
    assert!(!err.contains("panicked"), "stderr:\n{err}");
}

/// A fresh path in the test scratch folder.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-tests");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir.join(name)
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn values(s: &str) -> Vec<f64> {
    s.lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("not a number: {l:?}"))
        })
        .collect()
}

/// A small sphere run (30 generations unless `extra` sets --gens).
fn run_small(extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--dim",
        "6",
        "--pop",
        "32",
    ];
    if !extra.contains(&"--gens") {
        args.extend(["--gens", "30"]);
    }
    args.extend(extra);
    gpude(&args)
}

// ---- run ----

#[test]
fn run_griewank_converges() {
    let v = ok_json(gpude(&[
        "run",
        "--function",
        "griewank",
        "--dim",
        "30",
        "--pop",
        "256",
        "--gens",
        "500",
        "--backend",
        "cpu",
        "--seed",
        "1",
        "--json",
    ]));
    let r = &v["results"][0];
    let err = r["error"].as_f64().expect("error is a number");
    assert!(err < 1e-3, "error {err}");
    assert_eq!(r["generations"], 500);
    assert_eq!(r["best_x"].as_array().expect("best_x").len(), 30);
}

#[test]
fn run_human_output() {
    let s = ok(run_small(&["--seed", "4"]));
    for key in [
        "backend",
        "cpu",
        "sphere",
        "D = 6",
        "Np = 32",
        "thesis",
        "best f",
        "error",
        "generations  30",
        "evaluations  992",
        "termination",
        "elapsed",
        "best x",
    ] {
        assert!(s.contains(key), "{key:?} not in:\n{s}");
    }
}

#[test]
fn run_json_fields() {
    let v = ok_json(run_small(&[
        "--json",
        "--strategy",
        "rand1bin",
        "--bounds",
        "clip",
        "-F",
        "0.7",
    ]));
    assert_eq!(v["backend"], "cpu");
    let job = &v["job"];
    assert_eq!(job["function"], "sphere");
    assert_eq!(job["dim"], 6);
    assert_eq!(job["pop"], 32);
    assert_eq!(job["generations"], 30);
    assert_eq!(job["strategy"], "rand1");
    assert_eq!(job["crossover"], "bin");
    assert_eq!(job["bounds"], "clip");
    assert_eq!(job["f"], 0.7);
    assert_eq!(job["lower"], -100.0);
    assert_eq!(job["upper"], 100.0);
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 1);
    let r = &results[0];
    for key in [
        "best_x",
        "best_f",
        "error",
        "generations",
        "evaluations",
        "termination",
        "elapsed",
        "backend",
        "seed",
        "stream",
    ] {
        assert!(r.get(key).is_some(), "{key} missing in {r}");
    }
    assert_eq!(r["evaluations"], 32 * 31);
    assert_eq!(r["termination"], "max_generations");
    assert_eq!(v["summary"]["runs"], 1);
}

#[test]
fn run_adaptive_strategies() {
    // jSO at D = 6: N_init = round(25 · ln 6 · √6) = round(109.7) = 110; the budget of
    // 3 000 evaluations is spent exactly; bounds default to the midpoint rule.
    let v = ok_json(gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "rastrigin",
        "--dim",
        "6",
        "--strategy",
        "jso",
        "--max-evals",
        "3000",
        "--json",
    ]));
    let job = &v["job"];
    assert_eq!(job["strategy"], "jso");
    assert_eq!(job["pop"], 110);
    assert_eq!(job["bounds"], "midpoint");
    assert_eq!(job["max_evals"], 3000);
    let r = &v["results"][0];
    assert_eq!(r["evaluations"], 3000);
    assert_eq!(r["termination"], "max_evaluations");
    let human = ok(gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--dim",
        "4",
        "--strategy",
        "lshade",
        "--max-evals",
        "2000",
    ]));
    assert!(human.contains("lshade (H = 6"), "{human}");
    fails(
        gpude(&[
            "run",
            "--backend",
            "cpu",
            "--function",
            "sphere",
            "--dim",
            "4",
            "--strategy",
            "shade",
            "--crossover",
            "exp",
        ]),
        2,
        "crossover = exp",
    );
}

#[test]
fn run_same_seed_same_result_other_seed_differs() {
    let best = |seed: &str| {
        ok_json(run_small(&["--json", "--seed", seed]))["results"][0]["best_f"]
            .as_f64()
            .expect("best_f")
    };
    let a = best("11");
    let b = best("11");
    let c = best("12");
    assert_eq!(a.to_bits(), b.to_bits());
    assert_ne!(a, c);
}

#[test]
fn run_several_runs() {
    let v = ok_json(run_small(&["--json", "--runs", "3"]));
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    let streams: Vec<u64> = results
        .iter()
        .map(|r| r["stream"].as_u64().expect("stream"))
        .collect();
    assert_eq!(streams, [0, 1, 2]);
    assert_ne!(results[0]["best_f"], results[1]["best_f"]);
    assert_eq!(v["summary"]["runs"], 3);
    assert_eq!(v["job"]["repetitions"], 3);

    let s = ok(run_small(&["--runs", "3"]));
    assert!(s.contains("error over 3 runs"), "{s}");
    assert!(s.contains("successes: 0/3"), "{s}");
}

#[test]
fn run_target_stops_early() {
    let v = ok_json(run_small(&["--json", "--target", "1e6", "--gens", "100"]));
    let r = &v["results"][0];
    assert_eq!(r["termination"], "target_reached");
    assert!(r["generations"].as_u64().expect("generations") < 100);
}

#[test]
fn run_history_file() {
    let path = scratch("history-one.csv");
    ok(run_small(&["--history", path_str(&path), "--gens", "20"]));
    let text = std::fs::read_to_string(&path).expect("history written");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "generation,best");
    assert_eq!(lines.len() - 1, 21, "{text}");
    let vals: Vec<f64> = lines[1..]
        .iter()
        .enumerate()
        .map(|(g, l)| {
            let (g_col, v) = l.split_once(',').expect("two columns");
            assert_eq!(g_col, g.to_string());
            v.parse().expect("a number")
        })
        .collect();
    assert!(
        vals.windows(2).all(|w| w[1] <= w[0]),
        "best never rises: {vals:?}"
    );

    let path = scratch("history-two.csv");
    ok(run_small(&[
        "--history",
        path_str(&path),
        "--gens",
        "5",
        "--runs",
        "2",
    ]));
    let text = std::fs::read_to_string(&path).expect("history written");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "generation,run_0,run_1");
    assert_eq!(lines.len() - 1, 6, "{text}");
    assert!(lines[1..].iter().all(|l| l.split(',').count() == 3));
}

#[test]
fn run_bounds_per_component() {
    let v = ok_json(gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--lower=-1,-2,-3",
        "--upper",
        "4",
        "--gens",
        "2",
        "--json",
    ]));
    assert_eq!(v["job"]["dim"], 3);
    assert_eq!(v["job"]["lower"], serde_json::json!([-1.0, -2.0, -3.0]));
    assert_eq!(v["job"]["upper"], serde_json::json!([4.0, 4.0, 4.0]));
}

// ---- bad input ----

#[test]
fn run_rejects_bad_input() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--backend", "cpu"];
        args.extend(extra);
        gpude(&args)
    };
    fails(
        run(&["--function", "sphere", "--dim", "0"]),
        2,
        "dimension = 0",
    );
    fails(
        run(&[
            "--function",
            "sphere",
            "--dim",
            "5",
            "--pop",
            "2",
            "--strategy",
            "rand1",
        ]),
        2,
        "population size = 2",
    );
    fails(
        run(&[
            "--function",
            "sphere",
            "--dim",
            "5",
            "--lower",
            "5",
            "--upper",
            "1",
        ]),
        2,
        "[5, 1]",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--lower", "nan"]),
        2,
        "NaN",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--f", "3"]),
        2,
        "F = 3",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--cr", "1.5"]),
        2,
        "Cr = 1.5",
    );
    fails(
        run(&["--function", "nosuch", "--dim", "5"]),
        2,
        "\"nosuch\"",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--strategy", "rand9"]),
        2,
        "\"rand9\"",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--bounds", "wrap"]),
        2,
        "\"wrap\"",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--precision", "f16"]),
        2,
        "\"f16\"",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--runs", "0"]),
        2,
        "runs = 0",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--lower", "abc"]),
        2,
        "\"abc\"",
    );
    fails(
        run(&["--function", "sphere", "--dim", "5", "--lower=-1,-2"]),
        2,
        "2 values",
    );
    fails(run(&["--function", "sphere", "--dim", "-3"]), 2, "-3");
    fails(
        run(&["--function", "sphere", "--dim", "5", "--max-evals", "10"]),
        2,
        "evaluation budget = 10",
    );
    fails(
        run(&[
            "--function",
            "sphere",
            "--dim",
            "5",
            "--history",
            "/nonexistent-dir/h.csv",
        ]),
        2,
        "/nonexistent-dir/h.csv",
    );
}

#[test]
fn run_refuses_domains_and_settings_that_cannot_work() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--backend", "cpu", "--gens", "5"];
        args.extend(extra);
        gpude(&args)
    };
    let sphere = |extra: &[&str]| {
        let mut args = vec!["--function", "sphere", "--dim", "3"];
        args.extend(extra);
        run(&args)
    };
    // A flag value that looks like a flag is still the value, with a clear message.
    fails(
        sphere(&["--strategy", "rand1", "-F", "-inf"]),
        2,
        "F = -inf is not allowed: a number in (0, 2]",
    );
    fails(
        sphere(&["--strategy", "rand1", "--cr", "-1"]),
        2,
        "Cr = -1 is not allowed",
    );
    // Settings the thesis strategy does not use.
    fails(sphere(&["-F", "1.5"]), 2, "the thesis strategy has no F");
    fails(sphere(&["--crossover", "exp"]), 2, "crossover = exp");
    // Domains the precision cannot hold.
    fails(
        sphere(&["--lower=-1e300", "--upper", "1e300"]),
        2,
        "lower bound = -1e300",
    );
    fails(
        sphere(&["--lower=-1e308", "--upper", "1e308", "--precision", "f64"]),
        2,
        "width upper − lower is finite in f64",
    );
    fails(
        sphere(&["--lower", "1", "--upper", "1.00000001"]),
        2,
        "rounds to [1, 1]",
    );
    fails(
        run(&["--function", "rosenbrock", "--dim", "1"]),
        2,
        "rosenbrock needs at least 2 components",
    );
    // Flags that do not apply to the backend.
    fails(
        sphere(&["--mode", "grid"]),
        2,
        "--mode grid applies to the GPU only",
    );
    fails(sphere(&["--streams", "0"]), 2, "streams = 0");
    // Too large for memory: refused before allocating, with the estimate.
    fails(
        run(&[
            "--function",
            "sphere",
            "--dim",
            "1048576",
            "--pop",
            "16777216",
        ]),
        1,
        "of host memory",
    );
    // A valid job whose values overflow f32 fails (exit 1), never "best f inf" with 0.
    fails(
        run(&[
            "--function",
            "rosenbrock",
            "--dim",
            "4",
            "--lower=-1e30",
            "--upper",
            "1e30",
        ]),
        1,
        "the best value is inf",
    );
    fails(
        run(&[
            "--function",
            "rosenbrock",
            "--dim",
            "4",
            "--lower=-1e30",
            "--upper",
            "1e30",
            "--runs",
            "2",
        ]),
        1,
        "run 0 of 2",
    );
    // A long unknown name is not echoed in full.
    let long = "z".repeat(5000);
    let o = run(&["--function", &long, "--dim", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).len() < 400, "{}", stderr(&o));
}

// ---- eval ----

fn griewank(x: &[f64]) -> f64 {
    let s: f64 = x.iter().map(|v| v * v).sum::<f64>() / 4000.0;
    let p: f64 = x
        .iter()
        .enumerate()
        .map(|(j, v)| (v / ((j + 1) as f64).sqrt()).cos())
        .product();
    s - p + 1.0
}

fn rosenbrock(x: &[f64]) -> f64 {
    x.windows(2)
        .map(|w| (1.0 - w[0]).powi(2) + 100.0 * (w[1] - w[0] * w[0]).powi(2))
        .sum()
}

fn rastrigin(x: &[f64]) -> f64 {
    10.0 * x.len() as f64
        + x.iter()
            .map(|v| v * v - 10.0 * (2.0 * std::f64::consts::PI * v).cos())
            .sum::<f64>()
}

#[test]
fn eval_exact_values() {
    assert_eq!(
        ok(gpude_stdin(&["eval", "--function", "sphere"], "1,2,3\n")),
        "14\n"
    );
    assert_eq!(
        ok(gpude_stdin(
            &["eval", "--function", "rosenbrock", "-"],
            "1 1 1\n"
        )),
        "0\n"
    );
    assert_eq!(
        ok(gpude_stdin(
            &["eval", "--function", "griewank"],
            "0 0 0 0\n"
        )),
        "0\n"
    );
}

type Formula = fn(&[f64]) -> f64;

#[test]
fn eval_matches_formulas() {
    let pts = [
        vec![0.5, -1.25, 3.0],
        vec![10.0, 20.0, -30.0, 7.5],
        vec![1.1, 0.9],
    ];
    let formulas: [(&str, Formula); 3] = [
        ("griewank", griewank),
        ("rosenbrock", rosenbrock),
        ("rastrigin", rastrigin),
    ];
    // One input per point: the points of one input share their dimension.
    for (name, f) in formulas {
        for p in &pts {
            let csv = p
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
                + "\n";
            let got = values(&ok(gpude_stdin(&["eval", "--function", name], &csv)));
            assert_eq!(got.len(), 1);
            let g = &got[0];
            let want = f(p);
            assert!(
                (g - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{name}{p:?}: {g} vs {want}"
            );
        }
    }
}

/// Griewank in f64 without cancellation: `Σx²/4000 + 1 − Π cos t_j` with
/// `1 − Π cos t_j = −expm1(Σ ln(1 − 2 sin²(t_j/2)))`, accurate to a few ulps also where
/// the value is tiny.
fn griewank_stable(x: &[f64]) -> f64 {
    let s: f64 = x.iter().map(|v| v * v).sum::<f64>() / 4000.0;
    let log_product: f64 = x
        .iter()
        .enumerate()
        .map(|(j, v)| {
            let h = (v / ((j + 1) as f64).sqrt() / 2.0).sin();
            (-2.0 * h * h).ln_1p()
        })
        .sum();
    s - log_product.exp_m1()
}

/// `gpude eval --function griewank --precision P --formula F` at one point.
fn eval_griewank(precision: &str, formula: &str, x: &[f64]) -> f64 {
    let point = x.iter().map(|v| format!("{v:e}")).collect::<Vec<_>>();
    let got = values(&ok(gpude_stdin(
        &[
            "eval",
            "--function",
            "griewank",
            "--precision",
            precision,
            "--formula",
            formula,
        ],
        &(point.join(" ") + "\n"),
    )));
    assert_eq!(got.len(), 1);
    got[0]
}

#[test]
fn eval_textbook_formula_cancels_near_the_optimum_in_f32() {
    // f32 ulp of values in [2^-k, 2^-k+1): the exact formulas stay within a few.
    let ulp32 = |v: f64| 2f64.powi(v.log2().floor() as i32 - 23);
    for (x, textbook_is_zero) in [
        (vec![1e-3, -1e-3, 1e-3, -1e-3], false),
        (vec![1e-4, -1e-4, 1e-4, -1e-4], true),
    ] {
        let want = griewank_stable(&x);
        let exact = eval_griewank("f32", "exact", &x);
        let textbook = eval_griewank("f32", "textbook", &x);
        assert!(
            (exact - want).abs() <= 4.0 * ulp32(want),
            "exact f32 {exact} vs {want} at {x:?}"
        );
        // The textbook form loses every digit to `1 − Π cos` rounding near 1.
        assert!(
            (textbook - want).abs() > 1e-3 * want,
            "textbook f32 {textbook} vs {want} at {x:?}"
        );
        assert_eq!(textbook == 0.0, textbook_is_zero, "{textbook} at {x:?}");
        // In f64 both formulas are close to the value here (the textbook one loses only
        // about half its digits at 1e-3).
        let exact64 = eval_griewank("f64", "exact", &x);
        assert!(
            (exact64 - want).abs() <= 1e-14 * want,
            "exact f64 {exact64} vs {want}"
        );
        let textbook64 = eval_griewank("f64", "textbook", &x);
        assert!(
            (textbook64 - want).abs() <= 1e-6 * want,
            "textbook f64 {textbook64} vs {want}"
        );
    }
}

#[test]
fn eval_rejects_unknown_formulas() {
    fails(
        gpude_stdin(
            &["eval", "--function", "griewank", "--formula", "printed"],
            "0 0\n",
        ),
        2,
        "formula",
    );
}

/// Textbook f32 Griewank near its optimum: the search reads 0 (every cosine rounds to
/// one) while the best point's true error is about 1e-8, so every run's two errors
/// disagree. Small enough to take well under a second.
fn griewank_textbook_runs(formula: &str, json: bool) -> Output {
    let mut args = vec![
        "run",
        "--backend",
        "cpu",
        "--function",
        "griewank",
        "--dim",
        "4",
        "--pop",
        "32",
        "--gens",
        "150",
        "--lower",
        "-2",
        "--upper",
        "2",
        "--precision",
        "f32",
        "--formula",
        formula,
        "--runs",
        "3",
        "--seed",
        "1",
    ];
    if json {
        args.push("--json");
    }
    gpude(&args)
}

/// A run of `function` (D = 4, f32, 3 runs) with `extra` flags.
fn f32_runs(function: &str, extra: &[&str], json: bool) -> Output {
    let mut args = vec![
        "run",
        "--backend",
        "cpu",
        "--function",
        function,
        "--dim",
        "4",
        "--pop",
        "32",
        "--precision",
        "f32",
        "--runs",
        "3",
        "--seed",
        "1",
    ];
    args.extend_from_slice(extra);
    if json {
        args.push("--json");
    }
    gpude(&args)
}

#[test]
fn disagreements_that_change_no_success_are_not_noted() {
    // Ackley in f32 reaches 0 where f64 finds about 1e-28: the two disagree by more than
    // rounding, but both are successes (error ≤ 1e-10).
    let v = ok_json(f32_runs("ackley", &["--gens", "2000"], true));
    let results = v["results"].as_array().expect("results");
    assert!(results.iter().any(|r| r["errors_disagree"] == true), "{v}");
    for r in results {
        let (e, ve) = (
            r["error"].as_f64().unwrap(),
            r["verified_error"].as_f64().unwrap(),
        );
        assert!(e <= 1e-10 && ve <= 1e-10, "{r}");
    }
    assert_eq!(v["summary"]["successes"], 3, "{}", v["summary"]);
    let s = ok(f32_runs("ackley", &["--gens", "2000"], false));
    assert!(
        !s.contains(" *") && !s.contains("disagree"),
        "nothing noted:\n{s}"
    );

    // The textbook Griewank with a target of 1e-3: the errors differ in their fourth
    // digit, both below the target.
    let extra = [
        "--formula",
        "textbook",
        "--gens",
        "150",
        "--lower",
        "-2",
        "--upper",
        "2",
        "--target",
        "1e-3",
    ];
    let v = ok_json(f32_runs("griewank", &extra, true));
    let results = v["results"].as_array().expect("results");
    assert!(results.iter().any(|r| r["errors_disagree"] == true), "{v}");
    assert_eq!(v["summary"]["successes"], 3, "{}", v["summary"]);
    let s = ok(f32_runs("griewank", &extra, false));
    assert!(
        !s.contains(" *") && !s.contains("disagree"),
        "nothing noted:\n{s}"
    );

    // Without the target the same search's errors (0) are successes and the verified ones
    // (about 4e-8) are not: noted, with the threshold.
    let s = ok(f32_runs("griewank", &extra[..8], false));
    assert!(
        s.contains(" *") && s.contains("about success (error ≤ 1e-10)"),
        "{s}"
    );
}

#[test]
fn run_marks_errors_that_disagree_with_the_verified_one() {
    let v = ok_json(griewank_textbook_runs("textbook", true));
    assert_eq!(v["job"]["formula"], "textbook");
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    for r in results {
        let error = r["error"].as_f64().expect("error");
        let verified = r["verified_error"].as_f64().expect("verified_error");
        let x: Vec<f64> = r["best_x"]
            .as_array()
            .expect("best_x")
            .iter()
            .map(|v| v.as_f64().expect("a component"))
            .collect();
        assert_eq!(error, 0.0, "{r}");
        // The verified error is the f64 value of the best point.
        let want = griewank_stable(&x);
        assert!(verified > 1e-10, "{r}");
        assert!(
            (verified - want).abs() <= 1e-12 * want,
            "{verified} vs {want}"
        );
        assert_eq!(r["errors_disagree"], true, "{r}");
    }
    // Successes are judged on the verified errors.
    assert_eq!(v["summary"]["successes"], 0, "{}", v["summary"]);

    let s = ok(griewank_textbook_runs("textbook", false));
    let marked = s
        .lines()
        .filter(|l| l.trim_end().ends_with(" *") || l.contains(" * "))
        .count();
    assert!(marked >= 3, "three runs marked with *:\n{s}");
    assert!(
        s.contains(
            "* the search's error and the verified one (f64, exact formulas) disagree about success (error ≤ 1e-10)"
        ),
        "the legend:\n{s}"
    );

    // The exact formulas: the search's errors are the verified ones, nothing marked.
    let v = ok_json(griewank_textbook_runs("exact", true));
    for r in v["results"].as_array().expect("results") {
        assert_eq!(r["errors_disagree"], false, "{r}");
        let error = r["error"].as_f64().expect("error");
        let verified = r["verified_error"].as_f64().expect("verified_error");
        assert!(
            (error - verified).abs() <= 1e-5 * verified.max(error),
            "{error} vs {verified}"
        );
    }
    let s = ok(griewank_textbook_runs("exact", false));
    assert!(!s.contains(" *"), "nothing marked:\n{s}");
    assert!(!s.contains("disagrees"), "no legend:\n{s}");
}

#[test]
fn eval_file_json_and_csv() {
    let csv = scratch("points.csv");
    std::fs::write(&csv, "# x y z\n1,2,3\n\n0.5\t0.5  0.5\n").expect("write");
    let got = values(&ok(gpude(&[
        "eval",
        "--function",
        "sphere",
        path_str(&csv),
    ])));
    assert_eq!(got, [14.0, 0.75]);

    let json = scratch("points.json");
    std::fs::write(&json, "[[1, 2, 3], [0.5, 0.5, 0.5]]").expect("write");
    let got = values(&ok(gpude(&[
        "eval",
        "--function",
        "sphere",
        path_str(&json),
    ])));
    assert_eq!(got, [14.0, 0.75]);

    // One point as a flat array, JSON out.
    let v = ok_json(gpude_stdin(
        &["eval", "--function", "sphere", "--json"],
        " [1, 2, 3]",
    ));
    assert_eq!(v, serde_json::json!([14.0]));

    // f32 arithmetic prints in f32.
    assert_eq!(
        ok(gpude_stdin(
            &["eval", "--function", "sphere", "--precision", "f32"],
            "0.1\n"
        )),
        "0.010000001\n"
    );
}

#[test]
fn eval_rejects_malformed_input() {
    let bad = scratch("bad-points.csv");
    std::fs::write(&bad, "1,2,3\n4,x5,6\n").expect("write");
    fails(
        gpude(&["eval", "--function", "sphere", path_str(&bad)]),
        2,
        "line 2",
    );
    fails(
        gpude(&["eval", "--function", "sphere", path_str(&bad)]),
        2,
        "value 2 (2 characters) is not a number",
    );
    fails(
        gpude_stdin(&["eval", "--function", "sphere"], "1,,2\n"),
        2,
        "line 1",
    );
    fails(
        gpude_stdin(&["eval", "--function", "sphere"], "1 nan 2\n"),
        2,
        "NaN",
    );
    fails(
        gpude_stdin(&["eval", "--function", "sphere"], "[[1, 2], [3, \"a\"]]"),
        2,
        "point 2",
    );
    fails(
        gpude_stdin(&["eval", "--function", "sphere"], "[[1, 2"),
        2,
        "invalid JSON",
    );
    fails(
        gpude_stdin(&["eval", "--function", "nosuch"], "1\n"),
        2,
        "\"nosuch\"",
    );
    fails(
        gpude(&["eval", "--function", "sphere", "/nonexistent/points.csv"]),
        2,
        "/nonexistent/points.csv",
    );
}

#[test]
fn bench_reports_the_verified_error_beside_the_search_error() {
    let v = ok_json(gpude(&[
        "bench",
        "--backend",
        "cpu",
        "--quick",
        "--only",
        "cpu Np=2048",
        "--repeats",
        "1",
        "--json",
    ]));
    let records = v["records"].as_array().expect("records");
    assert_eq!(records.len(), 1, "{v}");
    let r = &records[0];
    let error = r["final_error"].as_f64().expect("final_error");
    let verified = r["final_verified_error"]
        .as_f64()
        .expect("final_verified_error");
    // A few generations from a random start: large errors, which the exact f32
    // formulas compute to within rounding of the f64 value.
    assert!(error > 1.0 && verified > 1.0, "{r}");
    assert!(
        (error - verified).abs() <= 1e-5 * verified,
        "{error} vs {verified}"
    );
}

// ---- functions, info ----

#[test]
fn functions_lists_all() {
    let names = [
        "sphere",
        "griewank",
        "rosenbrock",
        "ackley",
        "f4",
        "rastrigin",
        "schwefel12",
        "weierstrass",
    ];
    let s = ok(gpude(&["functions"]));
    for n in names {
        assert!(s.contains(n), "{n} not in:\n{s}");
    }
    let v = ok_json(gpude(&["functions", "--json"]));
    let list = v.as_array().expect("an array");
    assert_eq!(list.len(), 8);
    let got: Vec<&str> = list
        .iter()
        .map(|e| e["name"].as_str().expect("name"))
        .collect();
    assert_eq!(got, names);
    assert_eq!(list[1]["domain"], serde_json::json!([-600.0, 600.0]));
    assert_eq!(list[2]["argmin"], 1.0);
}

#[test]
fn info_works() {
    let v = ok_json(gpude(&["info", "--json"]));
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert!(v["ptx_arch"].as_str().expect("arch").starts_with("sm_"));
    assert!(v["kernels"].as_u64().expect("kernels") > 0);
    let s = ok(gpude(&["info"]));
    assert!(s.contains("PTX"), "{s}");
    if v["gpu"].is_null() {
        assert!(s.contains("CPU only"), "{s}");
    }
}

// ---- batch ----

#[test]
fn batch_json() {
    let file = scratch("jobs.json");
    std::fs::write(
        &file,
        r#"[
  {"function": "sphere", "dim": 4, "pop": 32, "generations": 20, "seed": 3, "repetitions": 2},
  {"function": "rastrigin", "dim": 3, "pop": 40, "max_evals": 400, "strategy": "rand1bin",
   "f": 0.6, "cr": 0.8, "bounds": "clip", "precision": "f64", "lower": -5, "upper": [5, 5, 5]}
]"#,
    )
    .expect("write");
    let v = ok_json(gpude(&[
        "batch",
        path_str(&file),
        "--backend",
        "cpu",
        "--json",
    ]));
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["results"].as_array().expect("results").len(), 2);
    assert_eq!(jobs[0]["results"][1]["stream"], 1);
    assert_eq!(jobs[1]["results"][0]["generations"], 9);
    assert_eq!(jobs[1]["job"]["precision"], "f64");

    // The same job alone gives the same result.
    let alone = ok_json(gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--dim",
        "4",
        "--pop",
        "32",
        "--gens",
        "20",
        "--seed",
        "3",
        "--json",
    ]));
    assert_eq!(
        alone["results"][0]["best_f"],
        jobs[0]["results"][0]["best_f"]
    );

    let s = ok(gpude(&["batch", path_str(&file), "--backend", "cpu"]));
    assert!(s.contains("rastrigin"), "{s}");
    assert_eq!(
        s.lines()
            .filter(|l| l.trim_start().starts_with(['0', '1']))
            .count(),
        3,
        "{s}"
    );
}

#[test]
fn batch_toml() {
    let file = scratch("jobs.toml");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"griewank\"\ndim = 4\npop = 32\ngenerations = 10\nruns = 3\n\n\
         [[jobs]]\nfunction = \"ackley\"\ndim = 3\npop = 32\ngens = 5\n",
    )
    .expect("write");
    let v = ok_json(gpude(&[
        "batch",
        path_str(&file),
        "--backend",
        "cpu",
        "--json",
    ]));
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["results"].as_array().expect("results").len(), 3);
    assert_eq!(jobs[1]["results"][0]["generations"], 5);
    assert_eq!(jobs[1]["job"]["function"], "ackley");
}

#[test]
fn batch_rejects_bad_files() {
    let file = scratch("unknown-key.json");
    std::fs::write(
        &file,
        r#"[{"function": "sphere", "dim": 4, "popsize": 32}]"#,
    )
    .expect("write");
    fails(
        gpude(&["batch", path_str(&file), "--backend", "cpu"]),
        2,
        "popsize",
    );

    let file = scratch("unknown-key.toml");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"sphere\"\ndim = 4\nmutation = 0.5\n",
    )
    .expect("write");
    fails(
        gpude(&["batch", path_str(&file), "--backend", "cpu"]),
        2,
        "mutation",
    );

    let file = scratch("bad-value.json");
    std::fs::write(
        &file,
        r#"{"jobs": [{"function": "sphere", "dim": 4}, {"function": "sphere", "dim": 0}]}"#,
    )
    .expect("write");
    fails(
        gpude(&["batch", path_str(&file), "--backend", "cpu"]),
        2,
        "job 1: dimension = 0",
    );

    let file = scratch("broken.json");
    std::fs::write(&file, "[{\"function\": ").expect("write");
    fails(
        gpude(&["batch", path_str(&file), "--backend", "cpu"]),
        2,
        "invalid JSON",
    );

    fails(
        gpude(&["batch", "/nonexistent/jobs.toml"]),
        2,
        "/nonexistent/jobs.toml",
    );
}

// ---- bounded inputs, nothing echoed ----

/// Content that must never appear in a message.
const SECRET: &str = "S3CRET-d0-not-print";

/// Asserts that no word of stderr is longer than 61 characters and that SECRET is absent.
fn nothing_leaked(o: &Output) {
    let err = stderr(o);
    assert!(!err.contains(SECRET), "leaked:\n{err}");
    assert!(!err.contains("S3CRET"), "leaked:\n{err}");
    for w in err.split_whitespace() {
        assert!(w.chars().count() <= 61, "a long word in:\n{err}");
    }
}

#[test]
fn inputs_must_be_regular_files() {
    for sub in [&["eval", "--function", "sphere"][..], &["batch"][..]] {
        let mut args = sub.to_vec();
        args.push("/dev/zero");
        fails(gpude(&args), 2, "/dev/zero is a device, not a regular file");
        let mut args = sub.to_vec();
        let dir = scratch("a-folder");
        std::fs::create_dir_all(&dir).expect("folder");
        args.push(path_str(&dir));
        fails(gpude(&args), 2, "is a folder, not a regular file");
    }
    let fifo = scratch("points.fifo");
    let _ = std::fs::remove_file(&fifo);
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // Nothing writes to the FIFO: opening it must not wait for a writer.
    fails(
        gpude(&["eval", "--function", "sphere", path_str(&fifo)]),
        2,
        "is a FIFO, not a regular file",
    );
    fails(
        gpude(&["batch", path_str(&fifo)]),
        2,
        "is a FIFO, not a regular file",
    );
}

#[test]
fn inputs_are_capped() {
    // A sparse file larger than the cap is refused from its size alone.
    let big = scratch("big-points.csv");
    let f = std::fs::File::create(&big).expect("create");
    f.set_len(64 * 1024 * 1024 + 1).expect("set_len");
    fails(
        gpude(&["eval", "--function", "sphere", path_str(&big)]),
        2,
        "is 67108865 bytes: the limit for points is 64 MiB",
    );
    let big_jobs = scratch("big-jobs.json");
    let f = std::fs::File::create(&big_jobs).expect("create");
    f.set_len(1024 * 1024 + 1).expect("set_len");
    fails(
        gpude(&["batch", path_str(&big_jobs)]),
        2,
        "the limit for a job file is 1 MiB",
    );

    // Stdin is read up to the cap and one byte more.
    let mut child = Command::new(BIN)
        .args(["batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gpude binary runs");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..40 {
        // gpude stops reading past the cap: a closed pipe ends the writing.
        if stdin.write_all(&chunk).is_err() {
            break;
        }
    }
    drop(stdin);
    let o = child.wait_with_output().expect("gpude finishes");
    fails(o, 2, "stdin: more than the limit for a job file (1 MiB)");

    let help = ok(gpude(&["eval", "--help"]));
    assert!(help.contains("64 MiB"), "{help}");
    let help = ok(gpude(&["batch", "--help"]));
    assert!(help.contains("1 MiB"), "{help}");
}

#[cfg(unix)]
#[test]
fn parse_errors_never_show_file_content() {
    let cases: [(&str, String); 9] = [
        (
            "shadow.toml",
            format!("root:$6${SECRET}:19000:0:99999:7:::\n"),
        ),
        (
            "shadow.json",
            format!("root:$6${SECRET}:19000:0:99999:7:::\n"),
        ),
        ("shadow", format!("root:$6${SECRET}:19000:0:99999:7:::\n")),
        ("env.toml", format!("password = \"{SECRET}\"\n")),
        ("dup.toml", format!("{SECRET} = 1\n{SECRET} = 2\n")),
        (
            "value.json",
            format!(r#"{{"jobs": [{{"function": "sphere", "dim": "{SECRET}"}}]}}"#),
        ),
        (
            "value.toml",
            format!("[[jobs]]\nfunction = \"sphere\"\ndim = 4\nlower = \"{SECRET}\"\n"),
        ),
        ("string.json", format!("\"{SECRET}\"")),
        ("unclosed.json", format!("[{{\"function\": \"{SECRET}")),
    ];
    for (name, content) in cases {
        let target = scratch(&format!("secret-{name}"));
        std::fs::write(&target, &content).expect("write");
        let link = scratch(&format!("link-{name}"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let o = gpude(&["batch", path_str(&link), "--backend", "cpu"]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        // The file is named (a long path by its end: messages clip long words).
        assert!(
            stderr(&o).contains(&format!("link-{name}")),
            "{}",
            stderr(&o)
        );
        nothing_leaked(&o);
        let o = gpude(&["eval", "--function", "sphere", path_str(&link)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        nothing_leaked(&o);
    }
    // Syntax errors name the line and column.
    let file = scratch("secret-lines.toml");
    std::fs::write(
        &file,
        format!("[[jobs]]\nfunction = \"sphere\"\n{SECRET}\n"),
    )
    .expect("write");
    let o = gpude(&["batch", path_str(&file)]);
    nothing_leaked(&o);
    fails(o, 2, "invalid TOML at line 3 column");
    let file = scratch("secret-lines.json");
    std::fs::write(&file, format!("[\n  {{\"function\": {SECRET}}}\n]")).expect("write");
    let o = gpude(&["batch", path_str(&file)]);
    nothing_leaked(&o);
    fails(o, 2, "invalid JSON at line 2 column");
    // Values from points files are described, not shown.
    let o = gpude_stdin(&["eval", "--function", "sphere"], &format!("1,{SECRET}\n"));
    nothing_leaked(&o);
    fails(
        o,
        2,
        "line 1, column 3: value 2 (19 characters) is not a number",
    );
    let o = gpude_stdin(
        &["eval", "--function", "sphere"],
        &format!("[[1, 2], [3, \"{SECRET}\"]]"),
    );
    nothing_leaked(&o);
    fails(
        o,
        2,
        "point 2, line 1, column 14: value 2 is a string, not a number",
    );
}

#[test]
fn long_words_are_cut_in_messages() {
    let long = "A".repeat(20_000);
    let o = gpude_stdin(&["eval", "--function", "sphere"], &format!("1 {long}\n"));
    nothing_leaked(&o);
    fails(o, 2, "line 1");
    let o = gpude(&["eval", "--function", &long]);
    nothing_leaked(&o);
    fails(o, 2, "unknown function");
    let o = gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--dim",
        "2",
        "--lower",
        &long,
    ]);
    nothing_leaked(&o);
    assert!(stderr(&o).contains('…'), "{}", stderr(&o));
    fails(o, 2, "is not a number");
}

// ---- outputs: checked first, written whole at the end ----

/// A folder that refuses new files, or None where permissions do not bind (root).
#[cfg(unix)]
fn read_only_folder(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch(name);
    std::fs::create_dir_all(&dir).expect("folder");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let probe = dir.join("probe");
    if std::fs::write(&probe, b"x").is_ok() {
        let _ = std::fs::remove_file(&probe);
        return None;
    }
    Some(dir)
}

#[test]
fn failed_run_leaves_the_history_file_alone() {
    let path = scratch("kept-history.csv");
    std::fs::write(&path, "generation,best\n0,1\n").expect("write");
    let history = path_str(&path);
    fails(
        gpude(&[
            "run",
            "--backend",
            "nosuch",
            "--function",
            "sphere",
            "--dim",
            "2",
            "--history",
            history,
        ]),
        2,
        "\"nosuch\"",
    );
    fails(
        gpude(&[
            "run",
            "--backend",
            "cpu",
            "--function",
            "sphere",
            "--dim",
            "0",
            "--history",
            history,
        ]),
        2,
        "dimension = 0",
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("still there"),
        "generation,best\n0,1\n"
    );
    // A successful run replaces it, and leaves no temporary file beside it.
    ok(run_small(&["--history", history, "--gens", "3"]));
    let text = std::fs::read_to_string(&path).expect("history");
    assert_eq!(text.lines().count(), 5, "{text}");
    let dir = path.parent().expect("folder");
    let tmp: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".kept-history"))
        .collect();
    assert!(tmp.is_empty(), "{tmp:?}");
    // A folder given as the file is refused before the run.
    fails(run_small(&["--history", path_str(dir)]), 2, "is a folder");
}

#[test]
fn unwritable_outputs_fail_before_the_work() {
    let file = scratch("not-a-folder");
    std::fs::write(&file, b"x").expect("write");
    let under_file = file.join("out");
    let missing = scratch("no-such-folder").join("bench.json");
    let _ = std::fs::remove_dir_all(scratch("no-such-folder"));
    let mut folders = vec![under_file.clone()];
    #[cfg(unix)]
    if let Some(ro) = read_only_folder("read-only") {
        folders.push(ro.join("out"));
        let o = gpude(&[
            "bench",
            "--quick",
            "--backend",
            "cpu",
            "--out",
            path_str(&ro.join("b.json")),
        ]);
        assert!(!stderr(&o).contains("bench:"), "{}", stderr(&o));
        fails(o, 2, "does not take new files");
        let o = run_small(&["--history", path_str(&ro.join("h.csv"))]);
        fails(o, 2, "does not take new files");
    }
    for out in [&missing, &under_file.join("bench.json")] {
        let o = gpude(&[
            "bench",
            "--quick",
            "--backend",
            "cpu",
            "--out",
            path_str(out),
        ]);
        // No case was measured.
        assert!(!stderr(&o).contains("bench:"), "{}", stderr(&o));
        fails(o, 2, "does not exist");
    }
    for out in &folders {
        let start = std::time::Instant::now();
        let o = gpude(&[
            "reproduce",
            "thesis",
            "--quick",
            "--backend",
            "cpu",
            "--out",
            path_str(out),
        ]);
        assert!(!stderr(&o).contains("reproduce: ["), "{}", stderr(&o));
        // The refusal comes before any case runs (the quick cases take far longer).
        assert!(start.elapsed().as_secs() < 30);
        fails(o, 2, "the output folder");
    }
}

// ---- checkpoints, resume and interrupts ----

/// The results of a `--json` report without their timings.
fn results_without_time(v: &Value) -> Vec<Value> {
    v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().expect("an object").remove("elapsed");
            r
        })
        .collect()
}

/// The state of every run of a checkpoint file, as exact bits.
fn checkpoint_bits(path: &Path) -> Vec<(u32, Vec<u64>, Vec<u64>)> {
    use gpude::checkpoint::{Entry, State};
    let bytes = std::fs::read(path).expect("checkpoint written");
    gpude::checkpoint::decode(&bytes)
        .expect("a valid checkpoint")
        .into_iter()
        .map(|e| match e {
            Entry::Started(c) => {
                let (x, f) = match &c.state {
                    State::F32 { x, fit } => (
                        x.iter().map(|v| v.to_bits() as u64).collect(),
                        fit.iter().map(|v| v.to_bits() as u64).collect(),
                    ),
                    State::F64 { x, fit } => (
                        x.iter().map(|v| v.to_bits()).collect(),
                        fit.iter().map(|v| v.to_bits()).collect(),
                    ),
                };
                (c.generation, x, f)
            }
            Entry::Pending(_) => (0, Vec::new(), Vec::new()),
        })
        .collect()
}

#[test]
fn half_run_and_resume_equal_a_whole_run() {
    let cases: [&[&str]; 4] = [
        &["--strategy", "thesis"],
        &[
            "--strategy",
            "rand1exp",
            "--precision",
            "f64",
            "--bounds",
            "reflect",
        ],
        &["--strategy", "best2", "--runs", "3", "--bounds", "resample"],
        &[
            "--strategy",
            "current-to-best1",
            "--runs",
            "2",
            "--precision",
            "f64",
        ],
    ];
    for (k, extra) in cases.iter().enumerate() {
        let full_ckpt = scratch(&format!("full-{k}.ckpt"));
        let half_ckpt = scratch(&format!("half-{k}.ckpt"));
        let full_hist = scratch(&format!("full-{k}.csv"));
        let half_hist = scratch(&format!("half-{k}.csv"));
        let mut a = vec![
            "--json",
            "--gens",
            "30",
            "--checkpoint",
            path_str(&full_ckpt),
        ];
        a.extend(["--history", path_str(&full_hist)]);
        a.extend(*extra);
        let full = ok_json(run_small(&a));
        let mut b = vec![
            "--json",
            "--gens",
            "15",
            "--checkpoint",
            path_str(&half_ckpt),
        ];
        b.extend(*extra);
        let half = ok_json(run_small(&b));
        assert_eq!(half["results"][0]["generations"], 15);
        let resumed = ok_json(gpude(&[
            "resume",
            path_str(&half_ckpt),
            "--gens",
            "30",
            "--json",
            "--history",
            path_str(&half_hist),
        ]));
        assert_eq!(
            results_without_time(&full),
            results_without_time(&resumed),
            "{extra:?}"
        );
        assert_eq!(full["job"]["strategy"], resumed["job"]["strategy"]);
        assert_eq!(
            std::fs::read_to_string(&full_hist).expect("history"),
            std::fs::read_to_string(&half_hist).expect("history"),
            "{extra:?}"
        );
        // The final populations, bit for bit (resume saves back to the file it read).
        let whole = checkpoint_bits(&full_ckpt);
        assert_eq!(whole.len(), results_without_time(&full).len());
        assert!(whole.iter().all(|(g, x, _)| *g == 30 && !x.is_empty()));
        assert_eq!(whole, checkpoint_bits(&half_ckpt), "{extra:?}");
    }
}

#[test]
fn resume_refuses_bad_checkpoints() {
    let good = scratch("good.ckpt");
    ok(run_small(&["--gens", "3", "--checkpoint", path_str(&good)]));
    let bytes = std::fs::read(&good).expect("written");

    let cut = scratch("cut.ckpt");
    std::fs::write(&cut, &bytes[..bytes.len() - 7]).expect("write");
    fails(
        gpude(&["resume", path_str(&cut)]),
        2,
        "cut.ckpt: checkpoint: truncated",
    );

    let altered = scratch("altered.ckpt");
    let mut b = bytes.clone();
    let at = b.len() - 3;
    b[at] ^= 1;
    std::fs::write(&altered, &b).expect("write");
    fails(gpude(&["resume", path_str(&altered)]), 2, "checksum");

    let foreign = scratch("foreign.ckpt");
    std::fs::write(&foreign, format!("[[jobs]]\nfunction = \"{SECRET}\"\n")).expect("write");
    let o = gpude(&["resume", path_str(&foreign)]);
    nothing_leaked(&o);
    fails(o, 2, "not a gpude checkpoint");

    fails(gpude(&["resume", "/dev/zero"]), 2, "not a regular file");
    fails(
        gpude(&["resume", path_str(&good), "--gens", "2"]),
        2,
        "--gens = 2 is not allowed: run 0 of",
    );
    fails(
        gpude(&["resume", "/nonexistent/x.ckpt"]),
        2,
        "/nonexistent/x.ckpt",
    );
    // --checkpoint-every needs --checkpoint.
    let o = run_small(&["--checkpoint-every", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    fails(
        run_small(&["--checkpoint", path_str(&good), "--checkpoint-every", "0"]),
        2,
        "--checkpoint-every = 0",
    );
    // A file that stays as it was: the failed resume did not touch it.
    assert_eq!(
        std::fs::read(&cut).expect("kept"),
        &bytes[..bytes.len() - 7]
    );
}

/// Sends `signal` to a child process.
fn send(child: &std::process::Child, signal: &str) {
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// Starts a long run that saves every 20 generations, waits for its first save and
/// interrupts it with `signal`.
fn interrupted_run(name: &str, extra: &[&str], signal: &str) -> (Output, PathBuf) {
    let ckpt = scratch(name);
    let _ = std::fs::remove_file(&ckpt);
    let mut args = vec![
        "run",
        "--backend",
        "cpu",
        "--function",
        "rastrigin",
        "--dim",
        "16",
        "--pop",
        "64",
        "--gens",
        "100000000",
        "--seed",
        "7",
        "--checkpoint",
        path_str(&ckpt),
        "--checkpoint-every",
        "20",
    ];
    args.extend(extra);
    let child = Command::new(BIN)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gpude binary runs");
    let start = std::time::Instant::now();
    while !ckpt.exists() {
        assert!(start.elapsed().as_secs() < 60, "no checkpoint was written");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    send(&child, signal);
    (child.wait_with_output().expect("gpude finishes"), ckpt)
}

#[test]
fn sigint_stops_reports_saves_and_resumes_identically() {
    let (o, ckpt) = interrupted_run("interrupted.ckpt", &["--json"], "-INT");
    assert_eq!(o.status.code(), Some(130), "stderr:\n{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("interrupted at generation"), "{err}");
    assert!(err.contains("gpude resume"), "{err}");
    // The partial result is printed.
    let partial: Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    let r = &partial["results"][0];
    assert_eq!(r["termination"], "stopped");
    let g = r["generations"].as_u64().expect("generations");
    assert!(g >= 20);
    let saved = checkpoint_bits(&ckpt);
    assert_eq!(saved[0].0 as u64, g);

    // Resumed to g + 25 generations: the same bits as a run of that length.
    let total = (g + 25).to_string();
    let resumed = ok_json(gpude(&[
        "resume",
        path_str(&ckpt),
        "--gens",
        &total,
        "--json",
    ]));
    let whole_ckpt = scratch("uninterrupted.ckpt");
    let whole = ok_json(gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "rastrigin",
        "--dim",
        "16",
        "--pop",
        "64",
        "--gens",
        &total,
        "--seed",
        "7",
        "--json",
        "--checkpoint",
        path_str(&whole_ckpt),
    ]));
    assert_eq!(results_without_time(&whole), results_without_time(&resumed));
    assert_eq!(checkpoint_bits(&whole_ckpt), checkpoint_bits(&ckpt));
}

#[test]
fn interrupted_multi_run_resumes_identically() {
    let (o, ckpt) = interrupted_run("interrupted-runs.ckpt", &["--runs", "3"], "-TERM");
    assert_eq!(o.status.code(), Some(130), "stderr:\n{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("stopped before the end"), "{out}");
    let saved = checkpoint_bits(&ckpt);
    assert_eq!(saved.len(), 3);
    let g = saved[0].0;
    // The first run was stopped; the others had not started.
    assert!(saved[1].1.is_empty() && saved[2].1.is_empty());
    let total = (g + 10).to_string();
    let resumed = ok_json(gpude(&[
        "resume",
        path_str(&ckpt),
        "--gens",
        &total,
        "--json",
    ]));
    let whole = ok_json(gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "rastrigin",
        "--dim",
        "16",
        "--pop",
        "64",
        "--gens",
        &total,
        "--seed",
        "7",
        "--runs",
        "3",
        "--json",
    ]));
    assert_eq!(results_without_time(&whole), results_without_time(&resumed));
}

#[test]
fn interrupt_without_checkpoint_saves_to_the_default_file() {
    let dir = scratch("default-ckpt");
    std::fs::create_dir_all(&dir).expect("folder");
    let default = dir.join("gpude.ckpt");
    let history = dir.join("h.csv");
    let mut waited = 300;
    loop {
        let _ = std::fs::remove_file(&default);
        let child = Command::new(BIN)
            .current_dir(&dir)
            .args([
                "run",
                "--backend",
                "cpu",
                "--function",
                "sphere",
                "--dim",
                "16",
                "--pop",
                "64",
                "--gens",
                "100000000",
                "--history",
                path_str(&history),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the gpude binary runs");
        std::thread::sleep(std::time::Duration::from_millis(waited));
        send(&child, "-INT");
        let o = child.wait_with_output().expect("gpude finishes");
        if o.status.code().is_none() && waited < 5000 {
            // The signal came before gpude was ready for it: try again, waiting longer.
            waited *= 2;
            continue;
        }
        assert_eq!(o.status.code(), Some(130), "stderr:\n{}", stderr(&o));
        assert!(stderr(&o).contains("saved to gpude.ckpt"), "{}", stderr(&o));
        assert!(
            stdout(&o).contains("termination  stopped before the end"),
            "{}",
            stdout(&o)
        );
        break;
    }
    let saved = checkpoint_bits(&default);
    let text = std::fs::read_to_string(&history).expect("history written");
    assert_eq!(
        text.lines().count() as u32,
        saved[0].0 + 2,
        "a header and g + 1 rows"
    );
    // The default file resumes, to the same bits as a run that never stopped.
    let total = (saved[0].0 + 3).to_string();
    let resumed = Command::new(BIN)
        .current_dir(&dir)
        .args(["resume", "gpude.ckpt", "--gens", &total, "--json"])
        .output()
        .expect("the gpude binary runs");
    let resumed = ok_json(resumed);
    let whole = ok_json(gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--dim",
        "16",
        "--pop",
        "64",
        "--gens",
        &total,
        "--json",
    ]));
    assert_eq!(results_without_time(&whole), results_without_time(&resumed));
}

#[test]
fn run_help_documents_the_progress_bar_threads_and_interrupts() {
    let o = gpude(&["run", "--help"]);
    assert!(o.status.success());
    let s = stdout(&o);
    for needle in [
        "Progress:",
        "stdout and stderr are both terminals",
        "--json is not given",
        "exceeds 2e7",
        "RAYON_NUM_THREADS=N",
        "do not depend on it",
        "exits with code 130",
        "./gpude.ckpt when that file takes at most 256 MiB",
    ] {
        assert!(s.contains(needle), "{needle:?} not in:\n{s}");
    }
    // The --checkpoint flag states the limit of the default file.
    let flag = s
        .split("--checkpoint <FILE>")
        .nth(1)
        .expect("--checkpoint documented");
    assert!(
        flag.contains("256 MiB") && flag.contains("no size limit"),
        "{flag}"
    );
}

#[test]
fn cpu_results_do_not_depend_on_the_number_of_threads() {
    let run = |threads: &str| {
        let o = Command::new(BIN)
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "run",
                "--backend",
                "cpu",
                "--function",
                "rastrigin",
                "--dim",
                "8",
                "--pop",
                "64",
                "--gens",
                "60",
                "--runs",
                "2",
                "--seed",
                "5",
                "--json",
            ])
            .output()
            .expect("the gpude binary runs");
        results_without_time(&ok_json(o))
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert_eq!(one, run("3"));
}

// ---- flags that do not apply ----

#[test]
fn gpu_flags_are_refused_on_the_cpu_and_warned_about_on_fallback() {
    fails(
        run_small(&["--mode", "grid"]),
        2,
        "--mode grid applies to the GPU only",
    );
    fails(
        run_small(&["--streams", "8", "--device", "1"]),
        2,
        "--device 1, --streams 8 applies to the GPU only",
    );
    fails(
        run_small(&["--streams", "0"]),
        2,
        "--streams = 0 is not allowed: 1 ..= 128",
    );
    fails(
        gpude(&[
            "run",
            "--function",
            "sphere",
            "--dim",
            "2",
            "--streams",
            "0",
        ]),
        2,
        "--streams = 0",
    );
    fails(run_small(&["--mode", "diagonal"]), 2, "\"diagonal\"");
    let file = scratch("one-job.json");
    std::fs::write(&file, r#"[{"function": "sphere", "dim": 2, "gens": 2}]"#).expect("write");
    fails(
        gpude(&[
            "batch",
            path_str(&file),
            "--backend",
            "cpu",
            "--mode",
            "steps",
        ]),
        2,
        "--mode steps applies to the GPU only",
    );
    let gpu = !ok_json(gpude(&["info", "--json"]))["gpu"].is_null();
    if !gpu {
        let o = gpude(&[
            "run",
            "--function",
            "sphere",
            "--dim",
            "2",
            "--gens",
            "2",
            "--mode",
            "grid",
        ]);
        assert!(
            stderr(&o).contains("warning: no GPU, running on the CPU: --mode grid ignored"),
            "{}",
            stderr(&o)
        );
        ok(o);
    }
}

#[test]
fn gpu_lists_are_checked_and_apply_to_the_gpu_only() {
    fails(
        run_small(&["--gpus", "all"]),
        2,
        "--gpus all applies to the GPU only",
    );
    let auto = |gpus: &str| {
        gpude(&[
            "run",
            "--function",
            "sphere",
            "--dim",
            "2",
            "--gens",
            "2",
            "--gpus",
            gpus,
        ])
    };
    fails(auto("0,0"), 2, "each GPU once");
    fails(auto("first"), 2, "GPU indices separated by commas");
    fails(
        gpude(&[
            "run",
            "--function",
            "sphere",
            "--dim",
            "2",
            "--gpus",
            "0",
            "--device",
            "0",
        ]),
        2,
        "cannot be used with",
    );
}

#[test]
fn adaptive_runs_are_not_checkpointed_but_stop_cleanly() {
    let ck = scratch("adaptive.ckpt");
    let _ = std::fs::remove_file(&ck);
    let o = gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--dim",
        "5",
        "--strategy",
        "jso",
        "--checkpoint",
        path_str(&ck),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("jso"), "{}", stderr(&o));
    assert!(!ck.exists(), "no checkpoint for a refused run");
    // Without --checkpoint the same run goes through the controlled CPU path.
    let v: Value = serde_json::from_str(&stdout(&gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "sphere",
        "--dim",
        "5",
        "--strategy",
        "lshade",
        "--max-evals",
        "3000",
        "--json",
    ])))
    .expect("JSON");
    let r = &v["results"][0];
    assert!(r["evaluations"].as_u64().unwrap() <= 3000, "{r}");
    assert!(r["verified_error"].as_f64().unwrap() < 1.0, "{r}");
}

#[test]
fn batch_files_take_the_formula_key() {
    let file = scratch("formula.toml");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"griewank\"\ndim = 4\npop = 16\ngenerations = 5\nformula = \"textbook\"\n",
    )
    .expect("write");
    let o = gpude(&["batch", path_str(&file), "--backend", "cpu", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["jobs"][0]["job"]["formula"], "textbook", "{v}");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"griewank\"\ndim = 4\nformula = \"approximate\"\n",
    )
    .expect("write");
    fails(
        gpude(&["batch", path_str(&file), "--backend", "cpu"]),
        2,
        "formula",
    );
}

#[test]
fn adaptive_strategies_refuse_what_they_cannot_honour() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--backend",
            "cpu",
            "--function",
            "sphere",
            "--dim",
            "5",
        ];
        a.extend_from_slice(extra);
        gpude(&a)
    };
    // F and Cr are adapted, never silently ignored.
    fails(
        run(&["--strategy", "jade", "-F", "1.9"]),
        2,
        "adapts F and Cr",
    );
    // Adaptive strategies run on islands, but a checkpoint does not hold their memory
    // and archive yet.
    let ckpt = scratch("jade-islands.ckpt");
    fails(
        run(&[
            "--strategy",
            "jade",
            "--islands",
            "2",
            "--checkpoint",
            ckpt.to_str().expect("a path"),
        ]),
        2,
        "checkpoint of strategy",
    );
    // GPU flags are refused for archipelagos as for single runs.
    fails(
        run(&["--islands", "2", "--mode", "grid"]),
        2,
        "applies to the GPU only",
    );
    // A run whose best overflows fails (exit 1), whatever the strategy.
    let o = gpude(&[
        "run",
        "--backend",
        "cpu",
        "--function",
        "rosenbrock",
        "--dim",
        "4",
        "--lower",
        "-1e30",
        "--upper",
        "1e30",
        "--strategy",
        "jde",
        "--max-evals",
        "1000",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn run_expression_objective() {
    let v = ok_json(gpude(&[
        "run",
        "--expr",
        "sum(x^2 - 10*cos(2*pi*x)) + 10*D",
        "--dim",
        "5",
        "--lower",
        "-5.12",
        "--upper",
        "5.12",
        "--min",
        "0",
        "--precision",
        "f64",
        "--strategy",
        "jso",
        "--max-evals",
        "30000",
        "--backend",
        "cpu",
        "--json",
    ]));
    assert_eq!(v["job"]["expr"], "sum(x^2 - 10*cos(2*pi*x)) + 10*D");
    let err = v["results"][0]["verified_error"].as_f64().expect("error");
    assert!(err < 1e-6, "{err}");
    // A parse error says where.
    fails(
        gpude(&[
            "run", "--expr", "sum(x^2", "--dim", "3", "--lower", "-1", "--upper", "1",
        ]),
        2,
        "column 8",
    );
    // Bounds are required; a function and an expression exclude each other.
    fails(
        gpude(&["run", "--expr", "sum(x^2)", "--dim", "3"]),
        2,
        "needs both bounds",
    );
    fails(
        gpude(&["run", "--function", "sphere", "--expr", "x", "--dim", "3"]),
        2,
        "cannot be used with",
    );
    // eval evaluates an expression at points.
    let s = ok(gpude_stdin(
        &["eval", "--expr", "sum(x^2) + 1"],
        "0,0\n1,2\n",
    ));
    assert_eq!(s, "1\n6\n");
}

#[test]
fn run_cec2017_function() {
    // The organisers' data: GPUDE_CEC2017_DATA or shared/ beside the repository (a fresh
    // clone has neither); CI sets GPUDE_REQUIRE_CEC2017=1 so that this never skips there.
    if let Err(e) = gpude::cec2017::DataSource::locate(None) {
        if std::env::var("GPUDE_REQUIRE_CEC2017").is_ok_and(|v| v == "1") {
            panic!("GPUDE_REQUIRE_CEC2017=1 but the data are missing: {e}");
        }
        eprintln!("SKIPPED: run_cec2017_function: the CEC 2017 data are absent ({e})");
        return;
    }
    let v = ok_json(gpude(&[
        "run",
        "--function",
        "cec2017-f1",
        "--dim",
        "10",
        "--strategy",
        "lshade",
        "--max-evals",
        "5000",
        "--precision",
        "f64",
        "--backend",
        "cpu",
        "--json",
    ]));
    assert_eq!(v["job"]["function"], "cec2017-f1");
    let r = &v["results"][0];
    // The error is measured from F* = 100.
    let (f, e) = (r["best_f"].as_f64().unwrap(), r["error"].as_f64().unwrap());
    assert_eq!(f - 100.0, e);
    // Only the dimensions of the official data, each function's own.
    fails(
        gpude(&[
            "run",
            "--function",
            "cec2017-f1",
            "--dim",
            "7",
            "--backend",
            "cpu",
        ]),
        2,
        "2, 10, 20, 30, 50 or 100 for cec2017-f1",
    );
    fails(
        gpude(&[
            "run",
            "--function",
            "cec2017-f15",
            "--dim",
            "20",
            "--backend",
            "cpu",
        ]),
        2,
        "10, 30, 50 or 100 for cec2017-f15",
    );
    // D = 2 and 20 where the official code computes them.
    for (f, d) in [("cec2017-f5", "2"), ("cec2017-f24", "20")] {
        let v = ok_json(gpude(&[
            "run",
            "--function",
            f,
            "--dim",
            d,
            "--pop",
            "16",
            "--gens",
            "20",
            "--backend",
            "cpu",
            "--json",
        ]));
        assert_eq!(v["job"]["dim"], d.parse::<u32>().unwrap(), "{v}");
        assert!(v["results"][0]["error"].as_f64().unwrap() >= 0.0, "{v}");
    }
}

/// PTX objectives: checked when read (without repeating the file), refused on the CPU
/// before any work, and kept by the batch files' `objective_ptx` key.
#[test]
fn ptx_objective_refusals() {
    let good = scratch("objective-f64.ptx");
    let e = gpude::expr::Expr::parse("sum(x^2)").expect("parses");
    std::fs::write(&good, e.ptx(gpude::expr::Precision::F64)).expect("write");
    let with = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--objective-ptx",
            path_str(&good),
            "--dim",
            "4",
            "--lower",
            "-1",
            "--upper",
            "1",
        ];
        a.extend_from_slice(extra);
        gpude(&a)
    };
    fails(with(&["--backend", "cpu"]), 2, "runs on the GPU only");
    fails(
        gpude(&["run", "--objective-ptx", path_str(&good), "--dim", "4"]),
        2,
        "needs both bounds",
    );
    fails(with(&["--expr", "sum(x)"]), 2, "cannot be used with");
    let bad = scratch("not-ptx.ptx");
    std::fs::write(&bad, "private words, not PTX").expect("write");
    let o = gpude(&[
        "run",
        "--objective-ptx",
        path_str(&bad),
        "--dim",
        "4",
        "--lower",
        "-1",
        "--upper",
        "1",
    ]);
    assert!(!stderr(&o).contains("private"), "{}", stderr(&o));
    fails(o, 2, "not a PTX module");
    // The f32 symbol with the f64 signature: named, with what the kernels call.
    let wrong = scratch("wrong-signature.ptx");
    let text = e
        .ptx(gpude::expr::Precision::F64)
        .replace("gpude_objective_f64", "gpude_objective_f32");
    std::fs::write(&wrong, text).expect("write");
    fails(
        gpude(&[
            "run",
            "--objective-ptx",
            path_str(&wrong),
            "--dim",
            "4",
            "--lower",
            "-1",
            "--upper",
            "1",
        ]),
        2,
        "gpude_objective_f32 (line",
    );
    let missing = scratch("no-such.ptx");
    let _ = std::fs::remove_file(&missing);
    fails(
        gpude(&[
            "run",
            "--objective-ptx",
            path_str(&missing),
            "--dim",
            "4",
            "--lower",
            "-1",
            "--upper",
            "1",
        ]),
        2,
        "cannot read",
    );
    // A batch file names the file the same way.
    let jobs = scratch("ptx-jobs.json");
    std::fs::write(
        &jobs,
        format!(
            r#"[{{"objective_ptx": {:?}, "dim": 4, "lower": -1, "upper": 1}}]"#,
            path_str(&good)
        ),
    )
    .expect("write");
    fails(
        gpude(&["batch", path_str(&jobs), "--backend", "cpu"]),
        2,
        "runs on the GPU only",
    );
}

#[test]
fn batch_expression_key() {
    let file = scratch("expr-jobs.json");
    std::fs::write(
        &file,
        r#"[{"expr": "sum(x^2)", "min": 0, "dim": 4, "lower": -3, "upper": 3,
             "generations": 300, "precision": "f64", "strategy": "rand1"},
            {"function": "sphere", "dim": 4, "generations": 10}]"#,
    )
    .expect("write");
    let v = ok_json(gpude(&[
        "batch",
        path_str(&file),
        "--backend",
        "cpu",
        "--json",
    ]));
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 2);
    let e = jobs[0]["results"][0]["verified_error"].as_f64().unwrap();
    assert!(e < 1e-6, "{e}");
    std::fs::write(&file, r#"[{"expr": 3, "dim": 2, "lower": 0, "upper": 1}]"#).expect("write");
    fails(
        gpude(&["batch", path_str(&file), "--backend", "cpu"]),
        2,
        "`expr` must be an expression",
    );
}

#[test]
fn run_takes_a_thesis_variant() {
    // A small Rosenbrock run, 30 generations.
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--backend",
            "cpu",
            "--function",
            "rosenbrock",
            "--dim",
            "6",
            "--pop",
            "32",
            "--gens",
            "30",
        ];
        a.extend_from_slice(extra);
        gpude(&a)
    };
    let base = ok_json(run(&["--json"]));
    let v = ok_json(run(&[
        "--json",
        "--thesis-variant",
        "indices=rejection,generations=plus-one",
    ]));
    // Written back as given (the default is left out), g_max as asked for.
    assert_eq!(
        v["job"]["thesis_variant"], "indices=rejection,generations=plus-one",
        "{v}"
    );
    assert_eq!(v["job"]["generations"], 30, "{v}");
    assert!(base["job"].get("thesis_variant").is_none(), "{base}");
    let (r, b) = (&v["results"][0], &base["results"][0]);
    assert_eq!(r["generations"], 31, "{r}");
    assert_eq!(r["evaluations"], 32 * 32, "{r}");
    assert_ne!(r["best_f"], b["best_f"], "{r} {b}");
    let human = ok(run(&["--thesis-variant", "mutation=fma"]));
    assert!(
        human.contains("thesis, bounds init-only, variant mutation=fma"),
        "{human}"
    );
    fails(
        run(&["--thesis-variant", "mutation=fused"]),
        2,
        "unknown value of mutation \"fused\"; known: plain, fma, fma-inner, from-best",
    );
    fails(
        run(&["--thesis-variant", "rounding=fma"]),
        2,
        "unknown thesis variant key \"rounding\"",
    );
    fails(
        run(&[
            "--strategy",
            "rand1",
            "--thesis-variant",
            "lambda=closed-open",
        ]),
        2,
        "thesis variant = lambda=closed-open is not allowed",
    );
    fails(
        run(&["--algorithm", "pso", "--thesis-variant", "mutation=fma"]),
        2,
        "thesis variant (--thesis-variant) applies only to DE",
    );
}

#[test]
fn batch_files_take_the_thesis_variant_key() {
    let file = scratch("variant.toml");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"rosenbrock\"\ndim = 4\npop = 16\ngenerations = 5\nthesis_variant = \"lambda=closed-open,generations=plus-one\"\n",
    )
    .expect("write");
    let o = gpude(&["batch", path_str(&file), "--backend", "cpu", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let job = &v["jobs"][0];
    assert_eq!(
        job["job"]["thesis_variant"], "lambda=closed-open,generations=plus-one",
        "{v}"
    );
    assert_eq!(job["results"][0]["generations"], 6, "{v}");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"rosenbrock\"\ndim = 4\nthesis_variant = \"lambda=closed\"\n",
    )
    .expect("write");
    fails(
        gpude(&["batch", path_str(&file), "--backend", "cpu"]),
        2,
        "unknown value of lambda",
    );
}
