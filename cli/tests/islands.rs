//! Tests of islands, PSO and `reproduce castro2012` through the `gpude` binary (CPU).

mod common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn ok(args: &[&str]) -> String {
    let o = gpude(args);
    assert!(
        o.status.success(),
        "{args:?}: exit {:?}\n{}\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// Runs a command that must fail as a usage error; returns its message.
fn usage_error(args: &[&str]) -> String {
    let o = gpude(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stdout));
    text(&o.stderr)
}

#[test]
fn island_runs_report_every_island() {
    let out = ok(&[
        "run",
        "--function",
        "rastrigin",
        "-D",
        "5",
        "--pop",
        "12",
        "--gens",
        "20",
        "--islands",
        "3",
        "--migration-interval",
        "4",
        "--migrants",
        "2",
        "--topology",
        "random",
        "--runs",
        "2",
        "--backend",
        "cpu",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let job = &v["job"];
    assert_eq!(job["islands"], 3);
    assert_eq!(job["migration_interval"], 4);
    assert_eq!(job["topology"], "random");
    assert_eq!(job["algorithm"], "de");
    let results = v["results"].as_array().unwrap();
    let islands = v["islands"].as_array().unwrap();
    assert_eq!((results.len(), islands.len()), (2, 2));
    for (r, (res, arch)) in results.iter().zip(islands).enumerate() {
        let isl = arch["islands"].as_array().unwrap();
        assert_eq!(isl.len(), 3);
        // Run r's islands are streams 3r, 3r + 1, 3r + 2.
        let streams: Vec<u64> = isl.iter().map(|i| i["stream"].as_u64().unwrap()).collect();
        assert_eq!(streams, [3 * r as u64, 3 * r as u64 + 1, 3 * r as u64 + 2]);
        // Events after generations 4, 8, 12, 16 (not after the last, 20).
        assert_eq!(arch["migrations"], 4);
        let best = arch["best_island"].as_u64().unwrap() as usize;
        let min = isl
            .iter()
            .map(|i| i["best_f"].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        assert_eq!(res["best_f"].as_f64().unwrap(), min);
        assert_eq!(isl[best]["best_f"], res["best_f"]);
        assert_eq!(res["evaluations"], 3 * 12 * 21);
        assert_eq!(res["stream"], r as u64);
    }
}

#[test]
fn pso_runs_and_reads_back_its_settings() {
    let out = ok(&[
        "run",
        "--function",
        "sphere",
        "-D",
        "4",
        "--pop",
        "20",
        "--gens",
        "200",
        "--algorithm",
        "pso",
        "--inertia",
        "0.7",
        "--c2",
        "1.4",
        "--precision",
        "f64",
        "--backend",
        "cpu",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let job = &v["job"];
    assert_eq!(job["algorithm"], "pso");
    assert_eq!(job["inertia"], 0.7);
    assert_eq!(job["c1"], 1.62);
    assert_eq!(job["c2"], 1.4);
    assert_eq!(job["bounds"], "clip");
    assert!(job.get("strategy").is_none(), "{job}");
    assert_eq!(job["islands"], 1);
    assert!(v["results"][0]["error"].as_f64().unwrap() < 1e-3);
    let human = ok(&[
        "run",
        "--function",
        "sphere",
        "-D",
        "4",
        "--gens",
        "10",
        "--algorithm",
        "pso",
        "--islands",
        "2",
        "--backend",
        "cpu",
    ]);
    assert!(
        human.contains("algorithm    pso, w = 0.8, c1 = 1.62, c2 = 1.62, bounds clip"),
        "{human}"
    );
    assert!(
        human.contains(
            "islands      2 × Np = 40, ring topology, every generation 1 migrant best → worst"
        ),
        "{human}"
    );
}

#[test]
fn flags_that_do_not_apply_are_errors() {
    let base = ["run", "--function", "sphere", "-D", "4", "--backend", "cpu"];
    let with = |more: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(more);
        usage_error(&a)
    };
    assert!(with(&["--migrants", "2"]).contains("migrants (--migrants) applies only to islands"));
    assert!(
        with(&["--topology", "full"]).contains("topology (--topology) applies only to islands")
    );
    assert!(with(&["--inertia", "0.5"]).contains("inertia (--inertia) applies only to PSO"));
    assert!(with(&["--islands", "2", "--c1", "1"]).contains("c1 (--c1) applies only to PSO"));
    assert!(with(&["--algorithm", "pso", "--strategy", "rand1"]).contains("applies only to DE"));
    assert!(with(&["--algorithm", "pso", "--cr", "0.3"]).contains("Cr (--cr) applies only to DE"));
    assert!(with(&["--algorithm", "ge"]).contains("unknown algorithm \"ge\""));
    assert!(with(&["--islands", "2", "--topology", "star"]).contains("unknown topology"));
    assert!(with(&["--islands", "2", "--replace", "best"]).contains("unknown replacement"));
    // Out of range: 40 migrants into islands of Np = 40; 2 × 3 sources of a full
    // topology over 4 islands into Np = 6.
    let e = with(&["--islands", "2", "--migrants", "40"]);
    assert!(e.contains("must be below Np = 40"), "{e}");
    let e = with(&[
        "--islands",
        "4",
        "--pop",
        "6",
        "--topology",
        "full",
        "--migrants",
        "2",
    ]);
    assert!(e.contains("2 × 3 = 6"), "{e}");
    assert!(with(&["--islands", "0"]).contains("number of islands"));
    assert!(with(&["--islands", "2", "--migration-interval", "0"]).contains("interval"));
    assert!(with(&["--algorithm", "pso", "--inertia", "3"]).contains("inertia weight"));
    assert!(with(&["--crossover-probability", "0.5"]).contains("applies only to the GA"));
    assert!(with(&["--algorithm", "ga", "--c1", "1"]).contains("applies only to PSO"));
    assert!(with(&["--algorithm", "ga", "-F", "0.5"]).contains("not to algorithm ga"));
    assert!(
        with(&["--algorithm", "ga", "--mutation-probability", "1.5"])
            .contains("mutation probability")
    );
    assert!(with(&["--algorithm", "gaa"]).contains("known: de, pso, ga"));
    // GPU flags with the CPU backend are a usage error for islands as for any run.
    let mut cpu = vec!["run", "--function", "sphere", "-D", "4", "--islands", "2"];
    cpu.extend_from_slice(&["--backend", "cpu", "--device", "0"]);
    assert!(usage_error(&cpu).contains("--device 0 applies to the GPU only"));
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("islands-tests");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn batch_files_take_the_island_keys() {
    let file = scratch("batch.toml");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"sphere\"\ndim = 3\ngenerations = 10\n\n\
         [[jobs]]\nfunction = \"sphere\"\ndim = 3\npop = 8\ngenerations = 10\nalgorithm = \"pso\"\n\
         islands = 2\nmigration_interval = 3\nmigrants = 2\nemigrants = \"random\"\nreplace = \"random\"\nc1 = 1.5\n",
    )
    .unwrap();
    let v: Value = serde_json::from_str(&ok(&[
        "batch",
        file.to_str().unwrap(),
        "--backend",
        "cpu",
        "--json",
    ]))
    .unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert!(jobs[0]["job"].get("islands").is_none());
    let j = &jobs[1]["job"];
    assert_eq!(
        (j["algorithm"].as_str(), j["islands"].as_u64()),
        (Some("pso"), Some(2))
    );
    assert_eq!(
        (j["emigrants"].as_str(), j["replace"].as_str()),
        (Some("random"), Some("random"))
    );
    assert_eq!(j["c1"], 1.5);
    assert_eq!(jobs[1]["results"][0]["evaluations"], 2 * 8 * 11);
    let bad = scratch("bad.toml");
    std::fs::write(
        &bad,
        "[[jobs]]\nfunction = \"sphere\"\ndim = 3\nmigrants = 2\n",
    )
    .unwrap();
    let e = usage_error(&["batch", bad.to_str().unwrap(), "--backend", "cpu"]);
    assert!(
        e.contains("job 0: migrants (--migrants) applies only to islands"),
        "{e}"
    );
}

#[test]
fn castro2012_quick() {
    let dir = scratch("castro2012");
    let _ = std::fs::remove_dir_all(&dir);
    let report = ok(&[
        "reproduce",
        "castro2012",
        "--quick",
        "--functions",
        "ackley,schwefel12",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read_to_string(dir.join("REPORT.md")).unwrap(),
        report
    );
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
        .collect();
    // Header plus PSO, DE and the GA for each of the two functions.
    assert_eq!(rows.len(), 7, "{report}");
    assert!(
        rows[1].starts_with("| ackley | PSO | 130 | 2e-6 |"),
        "{}",
        rows[1]
    );
    assert!(rows[1].ends_with("13000 / 100 % / 1.02 s; 12000 / 99.93 % / 0.95 s |"));
    assert!(
        rows[5].starts_with("| schwefel12 | DE (thesis) | 420 | 1e-6 |"),
        "{}",
        rows[5]
    );
    assert!(rows[5].ends_with("(not in the paper) |"), "{}", rows[5]);
    // The GA's own generation limit (its table's ÷ 100) and the paper's GA row.
    assert!(
        rows[6].starts_with("| schwefel12 | GA | 200 | 1e-6 |"),
        "{}",
        rows[6]
    );
    assert!(
        rows[6].ends_with("20000 / no success / 46.59 s |"),
        "{}",
        rows[6]
    );
    assert!(report.contains("## What differs from the paper"));
    let runs: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("runs.json")).unwrap()).unwrap();
    let cases = runs.as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for c in cases {
        assert_eq!(
            (c["islands"].as_u64(), c["particles"].as_u64()),
            (Some(3), Some(16))
        );
        assert_eq!(c["runs"].as_array().unwrap().len(), 2);
        for r in c["runs"].as_array().unwrap() {
            let (e, g) = (
                r["error"].as_f64().unwrap(),
                r["generations"].as_u64().unwrap(),
            );
            // A run stops at the target or at g_max.
            assert!(e <= c["target"].as_f64().unwrap() || g == c["g_max"].as_u64().unwrap());
            assert_eq!(
                r["success"].as_bool().unwrap(),
                e <= c["target"].as_f64().unwrap()
            );
        }
    }
    // The same seed gives the same report apart from the times.
    let again = ok(&[
        "reproduce",
        "castro2012",
        "--quick",
        "--functions",
        "ackley",
        "--no-de",
        "--no-ga",
    ]);
    let strip = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("| ackley"))
            .map(|l| {
                let mut c: Vec<&str> = l.split(" | ").collect();
                c.remove(6);
                c.join(" | ")
            })
            .collect()
    };
    assert_eq!(strip(&again), strip(&report)[..1]);
    assert!(
        usage_error(&["reproduce", "castro2012", "--functions", "griewank"])
            .contains("not in the experiment")
    );
}

/// A `--json` report's results and island reports without their timings.
fn without_time(out: &str) -> (Value, Value) {
    let mut v: Value = serde_json::from_str(out).unwrap();
    let strip = |r: &mut Value| {
        r.as_object_mut().unwrap().remove("elapsed");
    };
    for r in v["results"].as_array_mut().unwrap() {
        strip(r);
    }
    for a in v["islands"].as_array_mut().unwrap() {
        for r in a["islands"].as_array_mut().unwrap() {
            strip(r);
        }
    }
    (v["results"].clone(), v["islands"].clone())
}

#[test]
fn an_archipelago_saved_halfway_goes_on_to_the_whole_runs_bits() {
    for (k, extra) in [
        &[
            "--islands",
            "3",
            "--migration-interval",
            "4",
            "--topology",
            "random",
        ][..],
        &[
            "--algorithm",
            "pso",
            "--islands",
            "2",
            "--replace",
            "random",
            "--precision",
            "f64",
        ][..],
        &["--algorithm", "ga", "--islands", "3", "--migrants", "2"][..],
    ]
    .iter()
    .enumerate()
    {
        let args = |gens: &str, ckpt: &PathBuf| -> Vec<String> {
            let mut a: Vec<String> = [
                "run",
                "--function",
                "ackley",
                "-D",
                "6",
                "--pop",
                "16",
                "--gens",
                gens,
                "--runs",
                "2",
                "--seed",
                "4",
                "--backend",
                "cpu",
                "--json",
                "--checkpoint",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            a.push(ckpt.to_str().unwrap().into());
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        };
        let call = |a: Vec<String>| ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let whole = scratch(&format!("whole-{k}.ckpt"));
        let half = scratch(&format!("half-{k}.ckpt"));
        let straight = call(args("24", &whole));
        let _ = call(args("11", &half));
        let head = std::fs::read(&half).unwrap();
        assert!(head.starts_with(b"GPUDEARC"), "an archipelago checkpoint");
        let resumed = ok(&[
            "resume",
            half.to_str().unwrap(),
            "--gens",
            "24",
            "--backend",
            "cpu",
            "--json",
        ]);
        assert_eq!(without_time(&resumed), without_time(&straight), "case {k}");
        // The resumed run saved its end to the file it read: the whole run's state.
        assert_eq!(
            std::fs::read(&half).unwrap().len(),
            std::fs::read(&whole).unwrap().len()
        );
        // Going back in generations is refused.
        let e = usage_error(&[
            "resume",
            half.to_str().unwrap(),
            "--gens",
            "5",
            "--backend",
            "cpu",
        ]);
        assert!(e.contains("has done 24 generations already"), "{e}");
    }
}
