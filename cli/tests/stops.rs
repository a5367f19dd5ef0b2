//! `--tol`, `--atol`, `--stagnation` and `--check-every` through the binary (CPU engine).

mod common;
use common::*;
use serde_json::Value;
use std::process::Output;

fn json(args: &[&str]) -> Value {
    let o = gpude(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Checks a clean refusal (exit code 2) whose message names `what`.
fn refused(o: Output, what: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(what), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

const SPHERE: [&str; 9] = [
    "run",
    "--function",
    "sphere",
    "--dim",
    "4",
    "--gens",
    "100000",
    "--backend",
    "cpu",
];

fn with(more: &[&'static str]) -> Vec<&'static str> {
    SPHERE.iter().chain(more).copied().collect()
}

#[test]
fn an_atol_run_ends_converged_at_a_multiple_of_32() {
    let v = json(&with(&["--atol", "1e-3", "--json"]));
    let r = &v["results"][0];
    assert_eq!(r["termination"], "converged", "{r}");
    let g = r["generations"].as_u64().expect("generations");
    assert!(g > 0 && g < 100_000, "{g}");
    assert_eq!(g % 32, 0, "{g}");
    // The settings as used, which a batch file reads back.
    assert_eq!(v["job"]["atol"], 1e-3);
    assert_eq!(v["job"]["check_every"], 32);
    assert!(v["job"].get("tol").is_none(), "{}", v["job"]);
    // Without stops, no stop keys.
    let v = json(&[
        "run",
        "--function",
        "sphere",
        "--dim",
        "4",
        "--gens",
        "3",
        "--backend",
        "cpu",
        "--json",
    ]);
    assert!(v["job"].get("check_every").is_none(), "{}", v["job"]);
}

#[test]
fn a_stagnation_run_looked_at_every_8_generations_says_so() {
    let args = [
        "run",
        "--expr",
        "0*sum(x) + 1",
        "--lower",
        "-1",
        "--upper",
        "1",
        "--dim",
        "3",
        "--gens",
        "1000",
        "--stagnation",
        "20",
        "--check-every",
        "8",
        "--backend",
        "cpu",
    ];
    let v = json(&[&args[..], &["--json"]].concat());
    let r = &v["results"][0];
    assert_eq!(r["termination"], "stagnated", "{r}");
    assert_eq!(r["generations"], 24);
    let o = gpude(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("stagnation 20, looked at every 8 generations"),
        "{out}"
    );
    assert!(out.contains("best stagnated"), "{out}");
}

#[test]
fn the_human_output_names_the_tolerances() {
    let o = gpude(&with(&["--tol", "0.01", "--atol", "1e-3"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("tol 0.01, atol 0.001, looked at every 32 generations"),
        "{out}"
    );
    assert!(out.contains("population converged"), "{out}");
}

#[test]
fn bad_stops_are_refused_by_name() {
    refused(gpude(&with(&["--tol", "-1"])), "tol");
    refused(gpude(&with(&["--atol", "nan"])), "atol");
    refused(gpude(&with(&["--stagnation", "0"])), "stagnation");
    refused(
        gpude(&with(&["--atol", "1", "--check-every", "0"])),
        "check-every",
    );
    // The engines that do not look at them yet.
    refused(
        gpude(&with(&["--atol", "1", "--split", "dimension"])),
        "atol",
    );
    refused(
        gpude(&with(&["--stagnation", "9", "--islands", "2"])),
        "stagnation",
    );
}

#[test]
fn batch_files_take_the_stop_keys() {
    let dir = scratch_dir("stops", "batch");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("jobs.toml");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"sphere\"\ndim = 4\ngenerations = 100000\natol = 1e-3\ntol = 0\ncheck_every = 16\n\n\
         [[jobs]]\nexpr = \"0*sum(x) + 1\"\nlower = -1\nupper = 1\ndim = 3\nstagnation = 5\ncheck_every = 4\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let v = json(&["batch", path, "--backend", "cpu", "--json"]);
    let jobs = v["jobs"].as_array().expect("jobs");
    let r = &jobs[0]["results"][0];
    assert_eq!(r["termination"], "converged", "{r}");
    assert_eq!(r["generations"].as_u64().unwrap() % 16, 0, "{r}");
    assert_eq!(jobs[0]["job"]["check_every"], 16);
    let r = &jobs[1]["results"][0];
    assert_eq!(r["termination"], "stagnated", "{r}");
    assert_eq!(r["generations"], 8);
    let o = gpude(&["batch", "--help"]);
    let help = text(&o.stdout);
    for key in ["tol", "atol", "stagnation", "check_every"] {
        assert!(help.contains(&format!("\n  {key} ")), "{key} missing");
    }
}
