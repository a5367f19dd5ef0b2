//! `gpude eval` beyond the built-ins: CEC 2017 functions, `--dim`, points that do not
//! share a dimension, values out of f32's range, and where each refusal points.
//!
//! The CEC 2017 tests need the data (`$GPUDE_CEC2017_DATA`, or
//! `shared/reference/cec2017/` beside the repository). Without them they print a SKIPPED
//! line to stderr and pass, unless `GPUDE_REQUIRE_CEC2017=1`, where they fail.

mod common;

use common::{BIN, gpude, text};
use std::process::{Command, Output};

/// `gpude ARGS` with `input` on stdin.
fn eval(args: &[&str], input: &str) -> Output {
    eval_in(Command::new(BIN), args, input)
}

/// `gpude ARGS` with `input` on stdin, through `cmd` (its environment set).
fn eval_in(mut cmd: Command, args: &[&str], input: &str) -> Output {
    cmd.arg("eval").args(args);
    common::with_stdin(cmd, input)
}

/// The values a successful eval printed.
fn values(o: Output) -> Vec<f64> {
    assert!(
        o.status.success(),
        "exit {:?}\n{}",
        o.status.code(),
        text(&o.stderr)
    );
    text(&o.stdout)
        .lines()
        .map(|l| {
            l.trim()
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {l}"))
        })
        .collect()
}

/// Checks a clean refusal (exit code 2) whose message holds every one of `needles`.
fn refused(o: Output, needles: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        o.stdout.is_empty(),
        "nothing on stdout: {}",
        text(&o.stdout)
    );
    for n in needles {
        assert!(err.contains(n), "{n:?} not in:\n{err}");
    }
}

/// The CEC 2017 data, or None with a SKIPPED line when they are absent and not required.
fn cec_data() -> Option<gpude::cec2017::DataSource> {
    match gpude::cec2017::DataSource::locate(None) {
        Ok(s) => Some(s),
        Err(e) => {
            if std::env::var("GPUDE_REQUIRE_CEC2017").is_ok_and(|v| v == "1") {
                panic!("GPUDE_REQUIRE_CEC2017=1 but the data are missing: {e}");
            }
            eprintln!("SKIPPED: the CEC 2017 data are absent ({e})");
            None
        }
    }
}

/// Rows of numbers, one point a line.
fn rows(points: &[Vec<f64>]) -> String {
    points
        .iter()
        .map(|p| {
            p.iter()
                .map(|v| format!("{v:e}"))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect()
}

#[test]
fn eval_evaluates_cec2017_functions() {
    let Some(source) = cec_data() else { return };
    for (n, dim) in [(1u32, 10usize), (5, 10), (13, 30), (22, 10), (30, 10)] {
        let id = gpude::cec2017::FunctionId::new(n).expect("a function");
        let data = gpude::cec2017::FunctionData::load(&source, id, dim).expect("the data");
        // The optimum, where F_n = 100·n, and two points away from it.
        let o = data.optimum().to_vec();
        let a: Vec<f64> = o.iter().map(|v| v + 1.0).collect();
        let b: Vec<f64> = (0..dim).map(|j| (j as f64) * 7.5 - 40.0).collect();
        let name = format!("cec2017-f{n}");
        let got = values(eval(
            &["--function", &name],
            &rows(&[o.clone(), a.clone(), b.clone()]),
        ));
        assert_eq!(got.len(), 3, "{name}");
        let star = 100.0 * n as f64;
        assert!(
            (got[0] - star).abs() <= 1e-9 * star,
            "{name} at its optimum: {} vs {star}",
            got[0]
        );
        for (x, g) in [(&a, got[1]), (&b, got[2])] {
            let want = data.evaluate(x);
            assert!(
                (g - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{name}: {g} vs {want}"
            );
            assert!(g > star, "{name}: {g} is not above the optimum {star}");
        }
        // In f32: the f32 evaluation of the library, as printed.
        // (f32 values print in their shortest form: compared as f32.)
        let got = values(eval(
            &["--function", &name, "--precision", "f32"],
            &rows(std::slice::from_ref(&b)),
        ));
        let x32: Vec<f32> = b.iter().map(|&v| v as f32).collect();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0] as f32, data.evaluate_f32(&x32), "{name} in f32");
    }
}

#[test]
fn eval_refuses_cec2017_dimensions_without_data() {
    // Each function has its dimensions: refused before any data are read.
    refused(
        eval(&["--function", "cec2017-f3"], "1 2 3 4 5 6 7\n"),
        &[
            "CEC 2017 dimension",
            "7",
            "2, 10, 20, 30, 50 or 100 for cec2017-f3",
        ],
    );
    // The hybrid functions have no data at D = 20, and the reference refuses F21 at D = 2.
    refused(
        eval(&["--function", "cec2017-f11"], &"1 ".repeat(20)),
        &[
            "CEC 2017 dimension",
            "20",
            "10, 30, 50 or 100 for cec2017-f11",
        ],
    );
    refused(
        eval(&["--function", "cec2017-f21", "--dim", "2"], "1 2\n"),
        &["--dim", "10, 20, 30, 50 or 100 for cec2017-f21"],
    );
    refused(
        eval(&["--function", "cec2017-f31"], "1 2\n"),
        &["cec2017-f31"],
    );
    let Some(_) = cec_data() else { return };
    // A point of another length than the first.
    let ten = "0 ".repeat(10);
    refused(
        eval(
            &["--function", "cec2017-f1"],
            &format!("{ten}\n{}\n", "0 ".repeat(11)),
        ),
        &["line 2, column 21", "11 values, but line 1 has 10"],
    );
}

#[test]
fn eval_dim_sets_the_length_of_every_point() {
    assert_eq!(
        values(eval(
            &["--function", "sphere", "--dim", "3"],
            "1 2 3\n0 0 1\n"
        )),
        [14.0, 1.0]
    );
    // A row of another length is named, with where its first value too many is or
    // where its missing value would be.
    refused(
        eval(
            &["--function", "sphere", "--dim", "3"],
            "1 2 3\n1, 2, 3, 4\n",
        ),
        &["stdin: line 2, column 10: 4 values, but --dim is 3"],
    );
    refused(
        eval(&["--function", "sphere", "--dim", "3"], "# x\n  1 2\n"),
        &["stdin: line 2, column 6: 2 values, but --dim is 3"],
    );
    refused(
        eval(
            &["--function", "sphere", "--dim", "2"],
            "[[1, 2], [3, 4, 5]]",
        ),
        &["point 2, line 1, column 17: 3 values, but --dim is 2"],
    );
    refused(
        eval(&["--function", "sphere", "--dim", "0"], "1\n"),
        &["--dim = 0"],
    );
    // An expression that needs more components than --dim gives.
    refused(
        eval(&["--expr", "sum(x[j-1])", "--dim", "1"], "1\n"),
        &["--dim = 1 is not allowed", "at least 2"],
    );
    // Nothing to evaluate: nothing printed.
    assert_eq!(
        values(eval(&["--function", "sphere", "--dim", "4"], "")),
        []
    );
}

#[test]
fn eval_refuses_ragged_points() {
    refused(
        eval(&["--function", "sphere"], "1,2,3\n4,5\n"),
        &[
            "stdin: line 2, column 4: 2 values, but line 1 has 3",
            "--dim",
        ],
    );
    refused(
        eval(&["--function", "rastrigin"], "1 2\n\n3 4 5\n"),
        &["line 3, column 5: 3 values, but line 1 has 2"],
    );
    refused(
        eval(&["--expr", "sum(x^2)"], "[[1, 2],\n [3]]"),
        &["point 2, line 2, column 2: 1 values, but point 1 has 2"],
    );
}

#[test]
fn eval_refuses_values_out_of_f32_range() {
    // In f64 the value is fine; in f32 it would become infinite.
    let got = values(eval(&["--function", "sphere"], "1e39 0\n"));
    assert!((got[0] / 1e78 - 1.0).abs() < 1e-12, "{got:?}");
    for (args, input, place) in [
        (
            &["--function", "sphere", "--precision", "f32"][..],
            "1 2\n0 -4e38\n",
            "line 2, column 3: value 2 = -4e38",
        ),
        (
            &["--expr", "sum(x)", "--precision", "f32"][..],
            "[[1, 3.5e38]]",
            "point 1, line 1, column 6: value 2 = 3.5e38",
        ),
        (
            &["--function", "cec2017-f1", "--precision", "f32"][..],
            "1e300 0 0 0 0 0 0 0 0 0\n",
            "line 1, column 1: value 1 = 1e300",
        ),
    ] {
        refused(
            eval(args, input),
            &[place, "--precision f32", "magnitude at most 3.4028235e38"],
        );
    }
    // The largest f32 itself is allowed.
    let got = values(eval(
        &["--function", "sphere", "--precision", "f32"],
        "3.4028235e38\n",
    ));
    assert_eq!(got, [f64::INFINITY]);
}

#[test]
fn eval_refuses_values_that_are_not_finite() {
    refused(
        eval(&["--expr", "sum(x)"], "1 nan\n"),
        &["line 1, column 3: value 2 is NaN", "finite"],
    );
    refused(
        eval(&["--function", "sphere"], "1, -inf\n"),
        &["line 1, column 4: value 2 is infinite"],
    );
}

#[test]
fn eval_json_errors_say_where() {
    refused(
        eval(&["--function", "sphere"], "[[1, 2],\n  [3, true]]"),
        &["point 2, line 2, column 7: value 2 is a boolean, not a number"],
    );
    refused(
        eval(&["--function", "sphere"], "[[1, 2], {\"a\": 1}]"),
        &["point 2, line 1, column 10: an object is not an array of numbers"],
    );
    refused(
        eval(&["--function", "sphere"], "{\"a\": 1}"),
        &["JSON input must be an array"],
    );
}

#[test]
fn eval_help_names_cec2017_and_dim() {
    let o = gpude(&["eval", "--help"]);
    let help = text(&o.stdout);
    assert!(help.contains("cec2017-f1"), "{help}");
    assert!(help.contains("--dim <D>"), "{help}");
}

#[test]
fn eval_evaluates_cec2017_functions_at_d2_and_d20() {
    let Some(source) = cec_data() else { return };
    for (n, dim) in [
        (1u32, 2usize),
        (6, 2),
        (10, 2),
        (28, 2),
        (3, 20),
        (20, 20),
        (22, 20),
    ] {
        let id = gpude::cec2017::FunctionId::new(n).expect("a function");
        let data = gpude::cec2017::FunctionData::load(&source, id, dim).expect("the data");
        let o = data.optimum().to_vec();
        let b: Vec<f64> = (0..dim).map(|j| (j as f64) * 7.5 - 40.0).collect();
        let name = format!("cec2017-f{n}");
        let got = values(eval(&["--function", &name], &rows(&[o, b.clone()])));
        let star = 100.0 * n as f64;
        assert!(
            (got[0] - star).abs() <= 1e-9 * star,
            "{name} at D = {dim} at its optimum: {} vs {star}",
            got[0]
        );
        let want = data.evaluate(&b);
        assert!(
            (got[1] - want).abs() <= 1e-12 * want.abs().max(1.0) && got[1] > star,
            "{name} at D = {dim}: {} vs {want}",
            got[1]
        );
    }
}

/// Unpacks the organisers' data under `root` as `unzip` does (`CEC17_fast_pow/input_data/…`):
/// the whole archive, or from a folder the files of F5 at D = 10.
fn unpack(source: &gpude::cec2017::DataSource, root: &std::path::Path) {
    use gpude::cec2017::DataSource;
    match source {
        DataSource::Zip(zip) => {
            let file = std::fs::File::open(zip).expect("the archive opens");
            zip::ZipArchive::new(file)
                .expect("a zip archive")
                .extract(root)
                .expect("the archive unpacks");
        }
        DataSource::Dir(_) => {
            let dir = root.join("CEC17_fast_pow/input_data");
            std::fs::create_dir_all(&dir).expect("folder");
            for name in ["shift_data_5.txt", "M_5_D10.txt"] {
                let bytes = source.read_file(name).expect("the data");
                std::fs::write(dir.join(name), bytes).expect("written");
            }
        }
    }
}

#[test]
fn the_data_variable_takes_the_archive_or_a_folder_of_its_files() {
    let Some(source) = cec_data() else { return };
    let root = common::scratch_dir("eval", "cec2017-unpacked");
    unpack(&source, &root);
    let id = gpude::cec2017::FunctionId::new(5).expect("F5");
    let data = gpude::cec2017::FunctionData::load(&source, id, 10).expect("the data");
    let x: Vec<f64> = (0..10).map(|j| j as f64 * 3.5 - 17.0).collect();
    let want = data.evaluate(&x);
    let top = root.join("CEC17_fast_pow");
    // The folder unpacked into, the archive's folder, its input_data, and the source
    // itself (the zip).
    for place in [
        root.clone(),
        top.clone(),
        top.join("input_data"),
        source.path().to_path_buf(),
    ] {
        let mut cmd = Command::new(BIN);
        cmd.env("GPUDE_CEC2017_DATA", &place);
        let got = values(eval_in(
            cmd,
            &["--function", "cec2017-f5"],
            &rows(std::slice::from_ref(&x)),
        ));
        assert_eq!(got.len(), 1, "GPUDE_CEC2017_DATA={}", place.display());
        assert!(
            (got[0] - want).abs() <= 1e-12 * want.abs(),
            "GPUDE_CEC2017_DATA={}: {} vs {want}",
            place.display(),
            got[0]
        );
    }
    // A folder without the files names every place it looked.
    let empty = common::scratch_dir("eval", "cec2017-empty");
    std::fs::create_dir_all(empty.join("CEC17_fast_pow/input_data")).expect("folder");
    let mut cmd = Command::new(BIN);
    cmd.env("GPUDE_CEC2017_DATA", &empty);
    let o = eval_in(cmd, &["--function", "cec2017-f5"], &rows(&[x]));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("shift_data_5.txt: not found") && err.contains("CEC17_fast_pow/"),
        "{err}"
    );
}

/// `--objective-ptx`: a file that is not PTX is refused naming it; a module is
/// evaluated on the GPU (here the sphere as an expression's module, checked against its
/// values), and without one the refusal says the GPU is needed.
#[test]
fn eval_objective_ptx_runs_on_the_gpu_or_says_why_not() {
    let dir = common::scratch_dir("eval", "objective_ptx");
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("not-ptx.ptx");
    std::fs::write(&junk, "hello, world\n").unwrap();
    refused(
        eval(&["--objective-ptx", junk.to_str().unwrap()], "1 2\n"),
        &["not-ptx.ptx"],
    );
    let sphere = gpude::expr::Expr::parse("sum(x^2)").unwrap();
    let module = dir.join("sphere.ptx");
    std::fs::write(&module, sphere.ptx(gpude::expr::Precision::F64)).unwrap();
    let o = eval(&["--objective-ptx", module.to_str().unwrap()], "1 2\n3 4\n");
    if o.status.success() {
        assert_eq!(values(o), vec![5.0, 25.0]);
    } else {
        let err = text(&o.stderr);
        assert!(err.starts_with("error: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains("--objective-ptx") && err.contains("GPU"),
            "the refusal names the option and the GPU: {err}"
        );
        eprintln!("SKIPPED the GPU half (no GPU here): {}", err.trim());
    }
    // Both an expression and a module: one objective only.
    refused(
        eval(
            &[
                "--objective-ptx",
                module.to_str().unwrap(),
                "--expr",
                "x[0]",
            ],
            "1\n",
        ),
        &["--objective-ptx"],
    );
}
