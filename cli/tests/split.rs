//! `gpude run --split dimension` through the binary (CPU engine).

mod common;
use common::*;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let o = gpude(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn split_runs_match_the_unsplit_run_and_refuse_what_they_cannot_do() {
    let base = [
        "run",
        "--function",
        "rosenbrock",
        "-D",
        "40",
        "--pop",
        "32",
        "--generations",
        "60",
        "--seed",
        "7",
        "--json",
    ];
    // Everything on the CPU engine, but where a test names the backend.
    let with = |more: &[&'static str]| -> Vec<&'static str> {
        let cpu = if more.contains(&"--backend") {
            &[][..]
        } else {
            &["--backend", "cpu"][..]
        };
        [&base[..], cpu, more].concat()
    };
    let whole = json(&with(&[]));
    let split = json(&with(&["--split", "dimension", "--slices", "3"]));
    let best = |v: &Value| v["results"][0]["best_f"].as_f64().unwrap();
    let (a, b) = (best(&split), best(&whole));
    // f32 (the default): the regrouped sums of 40 terms agree within 4·D·ε.
    let tol = 4.0 * 40.0 * f32::EPSILON as f64;
    assert!((a - b).abs() <= tol * a.abs().max(b.abs()), "{a} vs {b}");
    assert_eq!(split["results"][0]["generations"], 60);
    // One slice: the same bits.
    let one = json(&with(&["--split", "dimension", "--slices", "1"]));
    assert_eq!(best(&one).to_bits(), b.to_bits());
    // The text output names the layout.
    let mut t = with(&["--split", "dimension", "--slices", "3"]);
    t.retain(|a| *a != "--json");
    let o = gpude(&t);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("split: dimension, 3 slices (component bounds 0, 12, 24, 40)"),
        "{}",
        text(&o.stdout)
    );
    // Clear usage errors (exit 2).
    let refused = |more: &[&'static str], needle: &str| {
        let o = gpude(&with(more));
        assert_eq!(o.status.code(), Some(2), "{more:?}: {}", text(&o.stdout));
        let e = text(&o.stderr);
        assert!(e.contains(needle), "{more:?}: {e}");
    };
    let split = ["--split", "dimension"];
    let and = |more: &[&'static str]| [&split[..], more].concat();
    refused(
        &["--split", "rows"],
        "unknown split \"rows\"; known: dimension",
    );
    refused(&and(&["--backend", "cuda"]), "CPU engine only for now");
    refused(
        &and(&["--islands", "2"]),
        "does not apply to islands or PSO",
    );
    refused(&and(&["--strategy", "shade"]), "classic strategy");
    refused(
        &and(&["--slices", "11"]),
        "slices = 11 is not allowed: 1 ..= 10",
    );
    refused(&and(&["--mode", "grid"]), "applies to the GPU only");
    let o = gpude(&[
        "run",
        "--expr",
        "sum(x^2)",
        "--lower",
        "-1",
        "--upper",
        "1",
        "-D",
        "8",
        "--split",
        "dimension",
        "--backend",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("built-in function"),
        "{}",
        text(&o.stderr)
    );
}
