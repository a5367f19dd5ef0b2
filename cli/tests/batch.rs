//! The batch file format as `gpude batch --help` documents it, and the example file
//! examples/batch.toml, which must keep running.

mod common;

use common::{gpude, text};
use serde_json::Value;
use std::path::Path;

#[test]
fn the_example_batch_file_runs_on_the_cpu() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/batch.toml");
    let o = gpude(&[
        "batch",
        file.to_str().expect("a UTF-8 path"),
        "--backend",
        "cpu",
        "--json",
    ]);
    assert!(
        o.status.success(),
        "exit {:?}\n{}",
        o.status.code(),
        text(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["backend"], "cpu");
    let wall = v["wall_s"].as_f64().expect("the runs' wall time");
    assert!(wall > 0.0 && wall < 600.0, "{wall}");
    let jobs = v["jobs"].as_array().expect("jobs");
    // The four jobs of the file, in order, with their runs.
    let want = [
        ("rastrigin", 10, 3),
        ("sphere", 5, 1),
        ("", 4, 1),
        ("ackley", 8, 1),
    ];
    assert_eq!(jobs.len(), want.len());
    for (job, (function, dim, runs)) in jobs.iter().zip(want) {
        let spec = &job["job"];
        assert_eq!(spec["function"].as_str().unwrap_or(""), function, "{spec}");
        assert_eq!(spec["dim"], dim, "{spec}");
        let results = job["results"].as_array().expect("results");
        assert_eq!(results.len(), runs, "{spec}");
        for r in results {
            let e = r["verified_error"].as_f64().expect("a verified error");
            assert!(e.is_finite() && e >= 0.0, "{r}");
            // Each run names where it ran and how many runs shared its launch.
            assert!(
                r["layout"].as_str().is_some_and(|l| l.starts_with("cpu")),
                "{r}"
            );
            assert_eq!(r["launch_runs"], 1, "{r}");
        }
    }
    // The settings the file gives are the ones used.
    assert_eq!(jobs[1]["job"]["precision"], "f64");
    assert_eq!(
        jobs[1]["job"]["upper"],
        serde_json::json!([2.0, 2.0, 2.0, 2.0, 3.0])
    );
    assert_eq!(jobs[1]["job"]["max_evals"], 20000);
    assert_eq!(jobs[2]["job"]["expr"], "sum(x^2) + 1");
    assert_eq!(jobs[2]["job"]["min"], 1.0);
    assert_eq!(jobs[3]["job"]["strategy"], "lshade");
    assert_eq!(jobs[3]["job"]["seed"], 7);
    // The expression's errors are measured from its minimum: the sphere-like bowl is
    // easy, so 100 generations come close to it.
    let e = jobs[2]["results"][0]["verified_error"]
        .as_f64()
        .expect("an error");
    assert!(e < 1.0, "{e}");
}

#[test]
fn batch_help_documents_the_format() {
    let o = gpude(&["batch", "--help"]);
    assert!(o.status.success());
    let help = text(&o.stdout);
    for part in [
        "[[jobs]]",
        "{\"jobs\": [...]}",
        "Example:",
        "function = \"rastrigin\"",
        "each key once in a job",
    ] {
        assert!(help.contains(part), "{part:?} not in:\n{help}");
    }
    // The text keeps to the width of a terminal.
    for line in help.lines().skip_while(|l| !l.starts_with("The job file")) {
        assert!(line.chars().count() <= 90, "too long: {line}");
    }
    // Every key a job may have.
    for key in [
        "function",
        "expr",
        "objective_ptx",
        "min",
        "dim",
        "lower",
        "upper",
        "pop",
        "generations",
        "gens",
        "max_evals",
        "max_evaluations",
        "target",
        "strategy",
        "crossover",
        "bounds",
        "f",
        "cr",
        "seed",
        "precision",
        "formula",
        "thesis_variant",
        "repetitions",
        "runs",
        "algorithm",
        "islands",
        "migration_interval",
        "migrants",
        "topology",
        "emigrants",
        "replace",
        "inertia",
        "c1",
        "c2",
    ] {
        assert!(
            help.contains(&format!("\n  {key} ")),
            "{key} not in:\n{help}"
        );
    }
    // The short help points to the long one.
    let short = text(&gpude(&["batch", "-h"]).stdout);
    assert!(short.contains("gpude batch --help"), "{short}");
}

#[test]
fn batch_refuses_a_key_given_twice() {
    let dir = common::scratch_dir("batch-tests", "twice");
    std::fs::create_dir_all(&dir).expect("folder");
    let file = dir.join("jobs.json");
    std::fs::write(
        &file,
        "{\"jobs\": [\n  {\"function\": \"sphere\", \"dim\": 3, \"gens\": 5, \"gens\": 50}\n]}\n",
    )
    .expect("write");
    let o = gpude(&["batch", file.to_str().expect("UTF-8"), "--backend", "cpu"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("jobs.json"), "{err}");
    assert!(err.contains("line 2 column"), "{err}");
    assert!(err.contains("the key gens is given twice"), "{err}");
}
