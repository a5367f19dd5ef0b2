//! Bad jobs through the library: each is refused with an `InvalidParameter` that names
//! the value and what is allowed, never a panic; jobs that are valid but overflow end
//! with a clear status; jobs that do not fit in memory are refused before allocating.

use gpude_host::config::{DEFAULT_CR, DEFAULT_F};
use gpude_host::cpu;
use gpude_host::error::MAX_ECHO;
use gpude_host::{
    Backend, BoundPolicy, Crossover, Error, Function, Job, JobBuilder, Mode, Precision, Problem,
    Solver, SolverOptions, Strategy, Termination,
};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Builds `b` expecting `InvalidParameter { name, .. }` whose message contains every
/// needle; returns the message.
fn refused(b: JobBuilder, name: &str, needles: &[&str]) -> String {
    let e = match catch_unwind(AssertUnwindSafe(move || b.build())) {
        Ok(Ok(job)) => panic!("accepted: {job:?}"),
        Ok(Err(e)) => e,
        Err(_) => panic!("panicked instead of refusing ({name}, {needles:?})"),
    };
    let msg = e.to_string();
    match &e {
        Error::InvalidParameter { name: n, .. } => assert_eq!(*n, name, "{msg}"),
        other => panic!("expected InvalidParameter for {name}, got {other:?}"),
    }
    for n in needles {
        assert!(msg.contains(n), "{msg:?} lacks {n:?}");
    }
    assert!(msg.len() < 400, "too long: {msg}");
    msg
}

fn sphere(d: u32) -> JobBuilder {
    Job::builder(Function::Sphere, d)
}

fn classic(d: u32) -> JobBuilder {
    sphere(d).strategy(Strategy::Rand1)
}

#[test]
fn f_and_cr_out_of_range_are_refused() {
    refused(classic(4).f(f64::NAN), "F", &["F = NaN", "(0, 2]"]);
    refused(
        classic(4).f(f64::NEG_INFINITY),
        "F",
        &["F = -inf", "(0, 2]"],
    );
    refused(classic(4).f(0.0), "F", &["F = 0 ", "(0, 2]"]);
    refused(classic(4).cr(5.0), "Cr", &["Cr = 5 ", "[0, 1]"]);
    refused(classic(4).cr(f64::NAN), "Cr", &["Cr = NaN", "[0, 1]"]);
}

#[test]
fn bad_bounds_are_refused() {
    let b = |lo: f64, hi: f64| sphere(2).domain(lo, hi);
    refused(
        b(1.0, -1.0),
        "bounds",
        &["[1, -1]", "component 0", "lower < upper"],
    );
    refused(b(2.0, 2.0), "bounds", &["[2, 2]", "lower < upper"]);
    refused(b(f64::NAN, 1.0), "lower bound", &["NaN", "finite"]);
    refused(b(-1.0, f64::NAN), "upper bound", &["NaN", "finite"]);
    refused(b(-1.0, f64::INFINITY), "upper bound", &["inf", "finite"]);
    // Empty bounds: no components at all, or fewer than the dimension.
    refused(
        sphere(2).domain_box(vec![], vec![]),
        "lower bounds",
        &["0 values", "one per component (2)"],
    );
    refused(
        sphere(2).domain_box(vec![-1.0, -1.0], vec![1.0]),
        "upper bounds",
        &["1 values", "one per component (2)"],
    );
    // The bad component is named, not the whole list.
    let mut lower = vec![-1.0; 5000];
    lower[4321] = 7.0;
    let msg = refused(
        sphere(5000).domain_box(lower, vec![1.0; 5000]),
        "bounds",
        &["[7, 1]", "component 4321"],
    );
    assert!(msg.len() < 120, "{msg}");
    // Direct problems check the same.
    for (lo, hi) in [
        (vec![], vec![]),
        (vec![f64::NAN], vec![1.0]),
        (vec![3.0], vec![1.0]),
    ] {
        match Problem::with_box(Function::Sphere, lo, hi) {
            Err(Error::InvalidParameter { .. }) => {}
            other => panic!("expected InvalidParameter, got {other:?}"),
        }
    }
}

#[test]
fn populations_too_small_for_the_strategy_are_refused() {
    refused(sphere(4).pop(0), "population size", &["= 0 ", "3 ..="]);
    // rand/2 draws five distinct others besides x_i: six individuals at least.
    for np in [0, 2, 5] {
        refused(
            classic(4).strategy(Strategy::Rand2).pop(np),
            "population size",
            &[&format!("= {np} "), "6 ..=", "rand2 draws 5 distinct"],
        );
    }
    // A budget with a zero population is refused for the population, not divided by.
    refused(
        sphere(4).pop(0).max_evaluations(100),
        "population size",
        &["= 0 "],
    );
    classic(4).strategy(Strategy::Rand2).pop(6).build().unwrap();
}

#[test]
fn bounds_must_survive_the_precision() {
    // Beyond f32's range.
    refused(
        sphere(3).domain(-1e300, 1e300),
        "lower bound",
        &["-1e300", "representable in f32", "3.4028235e38"],
    );
    refused(
        sphere(3).domain(-1.0, 1e39),
        "upper bound",
        &["1e39", "representable in f32"],
    );
    // Fine in f64 (the search is another matter: see `overflowing_runs_fail_clearly`).
    sphere(3)
        .domain(-1e300, 1e300)
        .precision(Precision::F64)
        .build()
        .unwrap();
    // A width that overflows: hi − lo beyond the largest finite value.
    refused(
        sphere(3).domain(-1e308, 1e308).precision(Precision::F64),
        "bounds",
        &["[-1e308, 1e308]", "width", "finite in f64"],
    );
    refused(
        sphere(3).domain(-3e38, 3e38),
        "bounds",
        &["[-3e38, 3e38]", "width", "finite in f32"],
    );
    // An interval that collapses when rounded: both values shown as rounded.
    refused(
        sphere(3).domain(1.0, 1.00000001),
        "bounds",
        &["[1, 1.00000001]", "non-empty in f32", "rounds to [1, 1]"],
    );
    sphere(3)
        .domain(1.0, 1.00000001)
        .precision(Precision::F64)
        .build()
        .unwrap();
    // One ulp apart in f32 is a real (tiny) interval.
    sphere(3).domain(1.0, 1.0000001).build().unwrap();
}

#[test]
fn functions_need_their_smallest_dimension() {
    refused(
        Job::builder(Function::Rosenbrock, 1),
        "dimension",
        &["= 1 ", "2 ..= 1048576", "rosenbrock needs at least 2"],
    );
    Job::builder(Function::Rosenbrock, 2).build().unwrap();
    // Every other function is defined (and not constant) with one component; f4 with one
    // component is 0.1 {sin²(3πx) + (x − 1)² [1 + sin²(2πx)]} + u(x), minimal at x = 1.
    for info in gpude_host::FUNCTIONS.iter() {
        if info.function == Function::Rosenbrock {
            continue;
        }
        let job = Job::builder(info.function, 1).pop(8).generations(2).build();
        assert!(job.is_ok(), "{}: {job:?}", info.name);
    }
    let at =
        |x: f64| cpu::evaluate_point::<f64>(Function::Penalized, gpude_host::Formula::Exact, &[x]);
    assert!(at(1.0) < 1e-30, "{}", at(1.0));
    assert!(at(0.0) > 0.05 && at(2.0) > 0.05);
}

#[test]
fn the_thesis_strategy_refuses_settings_it_does_not_use() {
    refused(
        sphere(4).f(1.5),
        "F",
        &["F = 1.5", "thesis strategy has no F"],
    );
    refused(
        sphere(4).cr(0.3),
        "Cr",
        &["Cr = 0.3", "thesis strategy has no crossover"],
    );
    refused(
        sphere(4).crossover(Crossover::Exponential),
        "crossover",
        &["crossover = exp", "thesis strategy has no crossover"],
    );
    // The defaults, given explicitly, and every bound policy are fine.
    for bounds in [
        BoundPolicy::InitOnly,
        BoundPolicy::Clip,
        BoundPolicy::Reflect,
        BoundPolicy::Resample,
    ] {
        sphere(4)
            .f(DEFAULT_F)
            .cr(DEFAULT_CR)
            .crossover(Crossover::Binomial)
            .bounds(bounds)
            .build()
            .unwrap();
    }
    // Classic strategies take them all.
    classic(4)
        .f(1.5)
        .cr(0.3)
        .crossover(Crossover::Exponential)
        .build()
        .unwrap();
}

#[test]
fn built_jobs_pass_their_own_check_and_keep_it_through_changes() {
    let job = classic(6)
        .f(0.8)
        .cr(0.1)
        .pop(10)
        .target(1e-3)
        .build()
        .unwrap();
    job.check().unwrap();
    let other = job.clone().with_seed(99).with_stream(7).with_history(true);
    other.check().unwrap();
    assert_eq!(
        (other.seed(), other.stream(), other.history()),
        (99, 7, true)
    );
    assert_eq!((other.f(), other.cr(), other.pop()), (0.8, 0.1, 10));
    assert_eq!(other.function(), Function::Sphere);
    assert_eq!(other.target(), Some(1e-3));
}

#[test]
fn clones_share_the_bounds() {
    let d = 1 << 16;
    let job = sphere(d).domain(-2.0, 3.0).pop(4).build().unwrap();
    let runs: Vec<Job> = (0..100).map(|s| job.clone().with_stream(s)).collect();
    for r in &runs {
        assert!(std::ptr::eq(r.lower(), job.lower()));
        assert!(std::ptr::eq(r.upper(), job.upper()));
    }
    assert_eq!(runs[5].lower().len(), d as usize);
    assert_eq!(runs[5].problem().uniform_bounds(), Some((-2.0, 3.0)));
}

#[test]
fn overflowing_runs_fail_clearly() {
    // Rosenbrock's terms overflow f32 for components near 1e30: every initial value is
    // inf, and no trial can do better.
    let job = Job::builder(Function::Rosenbrock, 4)
        .domain(-1e30, 1e30)
        .pop(16)
        .generations(20)
        .build()
        .unwrap();
    let r = cpu::run::<f32>(&job, None).unwrap();
    assert_eq!(r.termination, Termination::NonFinite);
    assert!(!r.termination.is_success());
    assert!(!r.best_f.is_finite());
    let msg = match r.clone().ok() {
        Err(e @ Error::NonFinite { .. }) => e.to_string(),
        other => panic!("expected NonFinite, got {other:?}"),
    };
    assert!(msg.contains("best value is inf"), "{msg}");
    // A target does not turn an overflow into success.
    let with_target = Job::builder(Function::Rosenbrock, 4)
        .domain(-1e30, 1e30)
        .pop(16)
        .target(1e-6)
        .generations(5)
        .build()
        .unwrap();
    let solver = Solver::new(&[], &cpu_options()).unwrap();
    let r = solver.run(&with_target, None).unwrap();
    assert_eq!(r.termination, Termination::NonFinite);
    // The same domain in f64 runs normally.
    let job = Job::builder(Function::Rosenbrock, 4)
        .domain(-1e30, 1e30)
        .precision(Precision::F64)
        .pop(16)
        .generations(20)
        .build()
        .unwrap();
    let r = solver.run(&job, None).unwrap();
    assert!(r.best_f.is_finite(), "{}", r.best_f);
    assert_eq!(r.termination, Termination::MaxGenerations);
    r.ok().unwrap();
    // In a batch, the failed run is marked and the others are not.
    let rs = solver.run_batch(&[job, with_target]).unwrap();
    assert_eq!(rs[0].termination, Termination::MaxGenerations);
    assert_eq!(rs[1].termination, Termination::NonFinite);
}

#[test]
fn initial_populations_stay_finite_on_the_widest_domains() {
    // f64 bounds near the largest value: the old initialisation formed hi − lo = inf.
    let job = Job::builder(Function::Sphere, 5)
        .domain(-1e300, 1e300)
        .precision(Precision::F64)
        .pop(12)
        .build()
        .unwrap();
    let pop = cpu::initial::<f64>(&job);
    for (k, &x) in pop.x.iter().enumerate() {
        assert!(x.is_finite() && x.abs() <= 1e300, "component {k}: {x}");
    }
    // f32 bounds near f32::MAX / 2.
    let job = Job::builder(Function::Sphere, 5)
        .domain(-1.5e38, 1.5e38)
        .pop(12)
        .build()
        .unwrap();
    let pop = cpu::initial::<f32>(&job);
    assert!(pop.x.iter().all(|x| x.is_finite() && x.abs() <= 1.5e38));
}

fn cpu_options() -> SolverOptions {
    SolverOptions {
        backend: Backend::Cpu,
        ..SolverOptions::default()
    }
}

#[test]
fn jobs_too_large_for_memory_are_refused_before_allocating() {
    // 2^20 components × 2^24 individuals × 2 populations × 4 bytes = 128 TiB.
    let job = sphere(1 << 20).pop(1 << 24).generations(1).build().unwrap();
    let needed = cpu::memory_needed(&job);
    assert!(needed >= 1 << 47, "{needed}");
    let solver = Solver::new(&[], &cpu_options()).unwrap();
    for r in [
        solver.run(&job, None),
        cpu::run::<f32>(&job, None),
        solver
            .run_batch(std::slice::from_ref(&job))
            .map(|mut v| v.remove(0)),
    ] {
        match r {
            Err(e @ Error::OutOfMemory { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("host memory"), "{msg}");
                // The estimate, in a readable unit and exactly (a batch adds its results).
                assert!(msg.contains("needs 128.0 TiB (1407376"), "{msg}");
                assert!(msg.contains("is available"), "{msg}");
            }
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
    }
    // The estimate counts two populations in the run's precision, plus the result.
    let small = sphere(10)
        .pop(20)
        .generations(7)
        .history(true)
        .build()
        .unwrap();
    let t = 4;
    let expect = t * (2 * 20 * 10 + 2 * 20 + 3 * 10 + 4 * 3) + 8 * (10 + 8);
    assert_eq!(cpu::memory_needed(&small), expect);
    let small64 = sphere(10)
        .pop(20)
        .generations(7)
        .precision(Precision::F64)
        .build()
        .unwrap();
    assert_eq!(
        cpu::memory_needed(&small64),
        8 * (2 * 20 * 10 + 2 * 20 + 3 * 10 + 4 * 3) + 8 * 10
    );
}

#[test]
fn a_batch_counts_every_result_it_keeps() {
    if cpu::available_memory().is_none() {
        eprintln!("SKIPPED: the available memory cannot be read here");
        return;
    }
    // Each run is small, but 2^16 runs of 2^20 components keep 2^16 best points of
    // 8 MiB: 512 GiB of results.
    let job = sphere(1 << 20).pop(3).generations(1).build().unwrap();
    assert!(cpu::memory_needed(&job) < 64 << 20);
    let jobs: Vec<Job> = (0..1 << 16).map(|s| job.clone().with_stream(s)).collect();
    match cpu::run_batch(&jobs) {
        Err(Error::OutOfMemory { memory, needed, .. }) => {
            assert_eq!(memory, "host");
            assert!(needed >= 512 << 30, "{needed}");
        }
        other => panic!("expected OutOfMemory, got {:?}", other.map(|v| v.len())),
    }
}

#[test]
fn solver_options_that_cannot_apply_are_refused() {
    let with = |backend, mode, streams| SolverOptions {
        backend,
        mode,
        streams,
        ..SolverOptions::default()
    };
    for (opts, needles) in [
        (
            with(Backend::Cpu, Mode::Auto, 0),
            ["streams = 0 ", "1 ..= 128"],
        ),
        (
            with(Backend::Auto, Mode::Auto, 100_000),
            ["streams = 100000", "1 ..= 128"],
        ),
        (
            with(Backend::Cpu, Mode::Grid, 4),
            ["mode = grid", "cpu backend"],
        ),
        (
            with(Backend::Cpu, Mode::Batch, 4),
            ["mode = batch", "cpu backend"],
        ),
    ] {
        match Solver::new(&[], &opts) {
            Err(e @ Error::InvalidParameter { .. }) => {
                let msg = e.to_string();
                for n in needles {
                    assert!(msg.contains(n), "{msg:?} lacks {n:?}");
                }
            }
            Err(other) => panic!("expected InvalidParameter, got {other:?}"),
            Ok(_) => panic!("accepted {opts:?}"),
        }
    }
    Solver::new(&[], &with(Backend::Cpu, Mode::Auto, 1)).unwrap();
}

#[test]
fn unknown_names_are_echoed_briefly() {
    let long = "q".repeat(1 << 20);
    for msg in [
        gpude_host::FunctionInfo::parse(&long)
            .unwrap_err()
            .to_string(),
        gpude_host::config::parse_strategy(&long)
            .unwrap_err()
            .to_string(),
        gpude_host::config::parse_bounds(&long)
            .unwrap_err()
            .to_string(),
        Precision::parse(&long).unwrap_err().to_string(),
        Backend::parse(&long).unwrap_err().to_string(),
        Mode::parse(&long).unwrap_err().to_string(),
    ] {
        let echoed = msg.matches('q').count();
        assert!(echoed < MAX_ECHO, "{echoed} characters echoed");
        assert!(msg.contains("1048576 characters"), "{msg}");
    }
}
