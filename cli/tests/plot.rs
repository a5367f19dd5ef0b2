//! `--plot FILE` of `run`, `resume` and `batch` (CPU engine): a PNG or an SVG of every
//! run's best error, written whole at the end; a bad name refused before any work.

mod common;

use common::{gpude, scratch_dir, text};
use std::path::Path;

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8")
}

/// A run's small job on the CPU engine.
const RUN: [&str; 12] = [
    "run",
    "--backend",
    "cpu",
    "--function",
    "sphere",
    "--dim",
    "4",
    "--pop",
    "20",
    "--gens",
    "60",
    "--seed",
];

#[test]
fn run_draws_png_and_svg_with_a_line_per_run() {
    let dir = scratch_dir("plot", "run");
    std::fs::create_dir_all(&dir).expect("folder");
    let png = dir.join("runs.png");
    let mut args = RUN.to_vec();
    args.extend(["3", "--runs", "3", "--plot", s(&png)]);
    let o = gpude(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bytes = std::fs::read(&png).expect("the plot");
    assert!(bytes.starts_with(PNG_MAGIC) && bytes.len() > 10_000);

    let svg = dir.join("runs.SVG");
    let mut args = RUN.to_vec();
    args.extend(["3", "--runs", "3", "--plot", s(&svg), "--json"]);
    let o = gpude(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = std::fs::read_to_string(&svg).expect("the plot");
    assert!(t.contains("<svg"), "an SVG");
    for label in [
        "run 0",
        "run 1",
        "run 2",
        "median",
        "sphere, D = 4, Np = 20",
    ] {
        assert!(t.contains(label), "{label} is in the plot");
    }
    // The history was recorded for the plot only: the JSON does not carry it.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(v["results"][0]["history"].is_null(), "{}", v["results"][0]);

    // More runs than lines: their median in a band.
    let many = dir.join("many.svg");
    let mut args = RUN.to_vec();
    args.extend(["3", "--runs", "9", "--plot", s(&many)]);
    let o = gpude(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = std::fs::read_to_string(&many).expect("the plot");
    assert!(t.contains("median of 9 runs"), "the band's legend");
    assert!(!t.contains("run 8"), "no line per run");
}

#[test]
fn a_bad_plot_name_costs_no_run_and_writes_nothing() {
    let dir = scratch_dir("plot", "bad");
    std::fs::create_dir_all(&dir).expect("folder");
    let history = dir.join("h.csv");
    for (name, why) in [
        ("p.jpg", ".png or .svg"),
        ("missing/p.png", "the plot file"),
    ] {
        let p = dir.join(name);
        let mut args = RUN.to_vec();
        args.extend(["3", "--plot", s(&p), "--history", s(&history)]);
        let o = gpude(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(!p.exists() && !history.exists(), "nothing written");
    }
    // An existing file is replaced only by a whole plot.
    let kept = dir.join("kept.png");
    std::fs::write(&kept, b"old").expect("written");
    let mut args = RUN.to_vec();
    args.extend(["3", "--gens", "-1", "--plot", s(&kept)]);
    let o = gpude(&args);
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&kept).expect("kept"), b"old");
}

#[test]
fn resume_and_batch_draw_their_runs() {
    let dir = scratch_dir("plot", "resume-batch");
    std::fs::create_dir_all(&dir).expect("folder");
    let ckpt = dir.join("a.ckpt");
    let mut args = RUN.to_vec();
    args.extend(["5", "--runs", "2", "--checkpoint", s(&ckpt)]);
    let o = gpude(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let png = dir.join("resumed.png");
    let o = gpude(&["resume", s(&ckpt), "--gens", "90", "--plot", s(&png)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        std::fs::read(&png)
            .expect("the plot")
            .starts_with(PNG_MAGIC)
    );

    let file = dir.join("jobs.toml");
    std::fs::write(
        &file,
        "[[jobs]]\nfunction = \"sphere\"\ndim = 4\npop = 20\ngens = 40\nruns = 2\n\n\
         [[jobs]]\nfunction = \"rastrigin\"\ndim = 3\npop = 16\ngens = 50\n",
    )
    .expect("written");
    let svg = dir.join("batch.svg");
    let o = gpude(&["batch", s(&file), "--backend", "cpu", "--plot", s(&svg)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = std::fs::read_to_string(&svg).expect("the plot");
    for label in [
        "job 0, run 0",
        "job 0, run 1",
        "job 1, run 0",
        "3 runs of 2 jobs",
    ] {
        assert!(t.contains(label), "{label} is in the plot");
    }
    assert!(!t.contains(">median<"), "no median across jobs");
}
