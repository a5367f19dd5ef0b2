//! `run --polish` (CPU engine): each run's best point refined on the host and reported
//! apart from the search's result; bad methods and islands refused before any work.

mod common;

use common::{gpude, text};

const RUN: [&str; 14] = [
    "run",
    "--backend",
    "cpu",
    "--function",
    "rosenbrock",
    "--dim",
    "4",
    "--pop",
    "30",
    "--gens",
    "80",
    "--precision",
    "f64",
    "--json",
];

#[test]
fn polish_reports_a_better_point_apart_from_the_search() {
    let mut args = RUN.to_vec();
    args.extend(["--bounds", "clip", "--runs", "2", "--polish"]);
    let o = gpude(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let ps = v["polished"].as_array().expect("polished");
    assert_eq!(ps.len(), 2);
    for (p, r) in ps.iter().zip(v["results"].as_array().expect("results")) {
        assert_eq!(p["method"], "lbfgs");
        let (pf, rf) = (
            p["f"].as_f64().expect("f"),
            r["best_f"].as_f64().expect("f"),
        );
        assert!(p["improved"] == true && pf < rf, "{p} vs {r}");
        assert!(p["evaluations"].as_u64().expect("count") > 0);
        // Inside the box: clip keeps the individuals there, and so does the polish.
        let lo = v["job"]["lower"].as_f64().expect("one bound");
        let hi = v["job"]["upper"].as_f64().expect("one bound");
        let x = p["x"].as_array().expect("x");
        assert!(
            x.iter()
                .all(|c| (lo..=hi).contains(&c.as_f64().expect("a number")))
        );
    }
    // Nelder–Mead, in the text output.
    let mut args = RUN[..13].to_vec();
    args.extend(["--polish", "nelder-mead"]);
    let o = gpude(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("polished (nelder-mead): "),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn polish_refusals_name_what_is_allowed() {
    let mut args = RUN.to_vec();
    args.extend(["--polish", "newton"]);
    let o = gpude(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("lbfgs or nelder-mead"),
        "{}",
        text(&o.stderr)
    );
    let mut args = RUN.to_vec();
    args.extend(["--islands", "4", "--polish"]);
    let o = gpude(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--polish does not apply to islands"),
        "{}",
        text(&o.stderr)
    );
}
