//! The CPU engine through the public API: convergence of every strategy, the bound
//! policies, reproducibility, the stopping rules and the refusal of bad settings.
//!
//! Budgets are small so that the suite stays fast in a debug build; each convergence
//! threshold was chosen with a margin of several orders of magnitude over what the
//! budget reaches (DE/best/1 and current-to-best/1 with Cr = 0.9 and DE/rand/2 with
//! F = 0.5 stagnate or converge slowly on the 10-D sphere at Np = 60, as DE does in
//! general, so those strategies get the settings noted at each case).

use gpude::cpu::{self, Population};
use gpude::{
    Backend, BoundPolicy, Crossover, Function, Job, JobBuilder, Precision, RunResult, Solver,
    SolverOptions, Strategy, Termination,
};

fn solver() -> Solver {
    let s = Solver::new(&SolverOptions {
        backend: Backend::Cpu,
        ..Default::default()
    })
    .expect("the CPU backend always opens");
    assert_eq!(s.backend_name(), "cpu");
    assert!(s.fallback_reason().is_none());
    s
}

fn run(job: &Job) -> RunResult {
    solver().run(job, None).expect("a CPU run succeeds")
}

/// What every result must satisfy, whatever the job.
fn check_consistent(job: &Job, r: &RunResult) {
    let d = job.dim() as usize;
    assert_eq!(r.best_x.len(), d);
    assert_eq!(r.backend, "cpu");
    assert_eq!((r.seed, r.stream), (job.seed(), job.stream()));
    assert!(r.generations <= job.generations());
    assert_eq!(r.evaluations, job.pop() as u64 * (1 + r.generations as u64));
    assert_eq!(r.error, r.best_f - job.info().min);
    assert!(
        r.best_f.is_finite() && r.best_f >= 0.0,
        "best f = {}",
        r.best_f
    );
    let x: Vec<f64> = r.best_x.iter().copied().collect();
    if job.precision() == Precision::F32 {
        assert!(
            x.iter().all(|&v| v as f32 as f64 == v),
            "an f32 run's point is f32: {x:?}"
        );
    }
    // The reported value is the value of the reported point, in the run's arithmetic.
    let again = gpude::evaluate(job.function(), job.precision(), &x).unwrap();
    assert_eq!(
        again.to_bits(),
        r.best_f.to_bits(),
        "best f {} vs f(best x) {again}",
        r.best_f
    );
    if let Some(h) = &r.history {
        assert_eq!(h.len(), r.generations as usize + 1);
        assert!(
            h.windows(2).all(|w| w[1] <= w[0]),
            "the best never gets worse: {h:?}"
        );
        assert_eq!(*h.last().unwrap(), r.best_f);
    }
}

// ---------------------------------------------------------------------------------------
// Convergence of every strategy.

/// Sphere, D = 10, Np = 60, 300 generations (18 060 evaluations): error below 1e-6 in
/// both precisions.
fn sphere_converges(strategy: Strategy, crossover: Crossover, f: f64, cr: f64) {
    for (precision, seed) in [(Precision::F64, 1), (Precision::F32, 2)] {
        let job = Job::builder(Function::Sphere, 10)
            .strategy(strategy)
            .crossover(crossover)
            .f(f)
            .cr(cr)
            .pop(60)
            .generations(300)
            .seed(seed)
            .precision(precision)
            .history(true)
            .build()
            .unwrap();
        let r = run(&job);
        check_consistent(&job, &r);
        assert_eq!(r.generations, 300);
        assert_eq!(r.termination, Termination::MaxGenerations);
        assert!(
            r.error < 1e-6,
            "{strategy:?}/{crossover:?} {precision:?}: error {:e} (started at {:e})",
            r.error,
            r.history.as_ref().unwrap()[0]
        );
    }
}

#[test]
fn thesis_converges_on_sphere() {
    // F and Cr are not used by the thesis's strategy.
    sphere_converges(Strategy::Thesis, Crossover::Binomial, 0.5, 0.9);
}

#[test]
fn rand1_bin_converges_on_sphere() {
    sphere_converges(Strategy::Rand1, Crossover::Binomial, 0.5, 0.9);
}

#[test]
fn rand1_exp_converges_on_sphere() {
    sphere_converges(Strategy::Rand1, Crossover::Exponential, 0.5, 0.9);
}

#[test]
fn best1_converges_on_sphere() {
    // With Cr = 0.9 DE/best/1 stagnates at Np = 60 for some seeds; F = 0.7, Cr = 0.5 does not.
    sphere_converges(Strategy::Best1, Crossover::Binomial, 0.7, 0.5);
}

#[test]
fn current_to_best1_converges_on_sphere() {
    sphere_converges(Strategy::CurrentToBest1, Crossover::Binomial, 0.5, 0.5);
}

#[test]
fn rand2_converges_on_sphere() {
    // Two difference vectors: a smaller F (with F = 0.5 the error is ~1e-2 after 300).
    sphere_converges(Strategy::Rand2, Crossover::Binomial, 0.3, 0.9);
}

#[test]
fn best2_converges_on_sphere() {
    sphere_converges(Strategy::Best2, Crossover::Binomial, 0.5, 0.9);
}

#[test]
fn best2_exp_converges_on_sphere() {
    sphere_converges(Strategy::Best2, Crossover::Exponential, 0.5, 0.9);
}

/// Griewank, D = 10, Np = 60, 300 generations from [−600, 600]¹⁰ (best initial value
/// ~1e2): every strategy gains at least two orders of magnitude and ends below 1 (the
/// basin of the origin; Griewank's other minima near it lie between 0.007 and 0.5).
#[test]
fn every_strategy_makes_progress_on_griewank() {
    let cases = [
        (Strategy::Thesis, Crossover::Binomial, 0.5, 0.9),
        (Strategy::Rand1, Crossover::Binomial, 0.5, 0.9),
        (Strategy::Rand1, Crossover::Exponential, 0.5, 0.9),
        (Strategy::Best1, Crossover::Binomial, 0.7, 0.5),
        (Strategy::CurrentToBest1, Crossover::Binomial, 0.5, 0.5),
        (Strategy::Rand2, Crossover::Binomial, 0.3, 0.9),
        (Strategy::Best2, Crossover::Binomial, 0.5, 0.9),
    ];
    for (strategy, crossover, f, cr) in cases {
        let job = Job::builder(Function::Griewank, 10)
            .strategy(strategy)
            .crossover(crossover)
            .f(f)
            .cr(cr)
            .pop(60)
            .generations(300)
            .seed(3)
            .precision(Precision::F64)
            .history(true)
            .build()
            .unwrap();
        let r = run(&job);
        check_consistent(&job, &r);
        let start = r.history.as_ref().unwrap()[0];
        assert!(start > 10.0, "{start}");
        assert!(
            r.error < 1.0 && r.error < 1e-2 * start,
            "{strategy:?}/{crossover:?}: {start:e} -> {:e}",
            r.error
        );
    }
}

/// DE/rand/1/exp finds Griewank's global minimum at D = 10 with a longer budget.
#[test]
fn rand1_exp_solves_griewank_10() {
    let job = Job::builder(Function::Griewank, 10)
        .strategy(Strategy::Rand1)
        .crossover(Crossover::Exponential)
        .pop(60)
        .generations(1000)
        .seed(0)
        .precision(Precision::F64)
        .build()
        .unwrap();
    let r = run(&job);
    check_consistent(&job, &r);
    assert!(r.error < 1e-8, "{:e}", r.error);
    assert!(r.best_x.iter().all(|v| v.abs() < 1e-2), "{:?}", r.best_x);
}

/// Rosenbrock, D = 5, from [−5, 5]⁵: DE/best/1 (F = 0.7, Cr = 0.5) reaches (1, …, 1).
/// The valley is slow: 2500 generations of Np = 40.
#[test]
fn best1_solves_rosenbrock_5() {
    for seed in [0, 1] {
        let job = Job::builder(Function::Rosenbrock, 5)
            .domain(-5.0, 5.0)
            .strategy(Strategy::Best1)
            .f(0.7)
            .cr(0.5)
            .pop(40)
            .generations(2500)
            .target(1e-10)
            .seed(seed)
            .precision(Precision::F64)
            .build()
            .unwrap();
        let r = run(&job);
        check_consistent(&job, &r);
        assert!(r.error <= 1e-10, "seed {seed}: {:e}", r.error);
        assert_eq!(r.termination, Termination::TargetReached);
        assert!(
            r.best_x.iter().all(|v| (v - 1.0).abs() < 1e-3),
            "{:?}",
            r.best_x
        );
    }
}

/// The thesis's configuration, scaled down: Griewank D = 32, Np = 256, 200 generations of
/// the thesis strategy in f32. The best value falls by orders of magnitude.
#[test]
fn thesis_configuration_on_griewank_32() {
    let job = Job::builder(Function::Griewank, 32)
        .pop(256)
        .generations(200)
        .seed(2011)
        .history(true)
        .build()
        .unwrap();
    assert_eq!(job.strategy(), Strategy::Thesis);
    assert_eq!(job.bounds(), BoundPolicy::InitOnly);
    assert_eq!(job.precision(), Precision::F32);
    let r = run(&job);
    check_consistent(&job, &r);
    let h = r.history.as_ref().unwrap();
    assert!(h[0] > 100.0, "{}", h[0]);
    assert!(r.error < 1e-3 * h[0], "{:e} -> {:e}", h[0], r.error);
    // Steady progress, not one lucky step: down tenfold within the first half.
    assert!(h[100] < 0.1 * h[0], "{:e} -> {:e}", h[0], h[100]);
}

// ---------------------------------------------------------------------------------------
// Bound policies.

fn sphere_in_box(bounds: BoundPolicy, precision: Precision) -> (Job, RunResult) {
    // The unconstrained minimiser 0 lies outside [1, 3]⁸; the best point in the box is
    // (1, …, 1) with value 8.
    let job = Job::builder(Function::Sphere, 8)
        .domain(1.0, 3.0)
        .strategy(Strategy::Rand1)
        .bounds(bounds)
        .pop(40)
        .generations(200)
        .seed(5)
        .precision(precision)
        .history(true)
        .build()
        .unwrap();
    let r = run(&job);
    check_consistent(&job, &r);
    (job, r)
}

#[test]
fn clip_reflect_resample_keep_the_best_inside_the_box() {
    for precision in [Precision::F64, Precision::F32] {
        for bounds in [
            BoundPolicy::Clip,
            BoundPolicy::Reflect,
            BoundPolicy::Resample,
        ] {
            let (_, r) = sphere_in_box(bounds, precision);
            assert!(
                r.best_x.iter().all(|&v| (1.0..=3.0).contains(&v)),
                "{bounds:?} {precision:?}: {:?}",
                r.best_x
            );
            assert!(r.best_f >= 8.0, "{bounds:?} {precision:?}: {}", r.best_f);
            // … and approach the constrained optimum at the corner. Resampling replaces
            // an outside component with a uniform one, so it creeps up on the bound
            // only from within and is the slowest.
            let slack = if bounds == BoundPolicy::Resample {
                0.1
            } else {
                1e-3
            };
            assert!(
                r.best_f < 8.0 + slack,
                "{bounds:?} {precision:?}: {}",
                r.best_f
            );
        }
        // Clipping puts components exactly on the bound.
        let (_, r) = sphere_in_box(BoundPolicy::Clip, precision);
        assert_eq!(r.best_f, 8.0, "{precision:?}");
    }
}

#[test]
fn init_only_leaves_the_box() {
    // The thesis's policy: the domain seeds the population only.
    let (_, r) = sphere_in_box(BoundPolicy::InitOnly, Precision::F64);
    assert!(r.best_x.iter().any(|&v| v < 1.0), "{:?}", r.best_x);
    assert!(r.best_f < 1e-3, "{}", r.best_f);
}

/// Every individual of every generation stays in a per-component box under clip,
/// reflect and resample (checked on the engine's own population, generation by
/// generation, with a step size large enough to throw most trials out).
#[test]
fn whole_population_stays_in_the_box() {
    let lower = vec![-1.0, 0.0, 2.0, -10.0, 0.5, -0.25, 3.0];
    let upper = vec![1.0, 0.5, 7.0, -9.0, 0.75, 0.25, 30.0];
    for bounds in [
        BoundPolicy::Clip,
        BoundPolicy::Reflect,
        BoundPolicy::Resample,
    ] {
        for strategy in [Strategy::Thesis, Strategy::Rand1, Strategy::Best2] {
            let mut b = Job::builder(Function::Rastrigin, 7)
                .domain_box(lower.clone(), upper.clone())
                .strategy(strategy)
                .bounds(bounds);
            // The thesis strategy has no F or Cr (its λ ∈ (0, 1] is drawn).
            if strategy.crosses() {
                b = b.f(2.0).cr(1.0);
            }
            let job = b
                .pop(24)
                .generations(30)
                .seed(8)
                .precision(Precision::F64)
                .build()
                .unwrap();
            let inside = |p: &Population<f64>, g: u32| {
                for i in 0..job.pop() as usize {
                    for (j, &v) in p.row(i).iter().enumerate() {
                        assert!(
                            v >= lower[j] && v <= upper[j],
                            "{bounds:?} {strategy:?} generation {g}: x[{i}][{j}] = {v}"
                        );
                    }
                }
            };
            let mut pop = cpu::initial::<f64>(&job);
            inside(&pop, 0);
            let mut best = pop.best();
            let mut scratch = Vec::new();
            for g in 1..=job.generations() {
                best = cpu::generation(&job, &mut pop, best, g, &mut scratch);
                inside(&pop, g);
            }
            let r = run(&job);
            check_consistent(&job, &r);
            assert_eq!(r.best_f, pop.fit[best], "{bounds:?} {strategy:?}");
        }
    }
}

#[test]
fn every_policy_is_sane_on_rastrigin() {
    for bounds in [
        BoundPolicy::InitOnly,
        BoundPolicy::Clip,
        BoundPolicy::Reflect,
        BoundPolicy::Resample,
    ] {
        let job = Job::builder(Function::Rastrigin, 5)
            .strategy(Strategy::Rand1)
            .crossover(Crossover::Exponential)
            .bounds(bounds)
            .pop(50)
            .generations(300)
            .seed(4)
            .history(true)
            .build()
            .unwrap();
        let r = run(&job);
        check_consistent(&job, &r);
        let start = r.history.as_ref().unwrap()[0];
        assert!(
            r.error < 1e-2 * start && r.error < 1.5,
            "{bounds:?}: {start} -> {}",
            r.error
        );
        if bounds != BoundPolicy::InitOnly {
            assert!(
                r.best_x.iter().all(|v| v.abs() <= 5.12 + 1e-6),
                "{bounds:?}: {:?}",
                r.best_x
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reproducibility.

fn small_job(function: Function, precision: Precision) -> JobBuilder {
    Job::builder(function, 9)
        .strategy(Strategy::Rand1)
        .pop(30)
        .generations(40)
        .precision(precision)
        .history(true)
}

fn same(a: &RunResult, b: &RunResult) -> bool {
    let bits = |r: &RunResult| -> Vec<u64> { r.best_x.iter().map(|v| v.to_bits()).collect() };
    let hist =
        |r: &RunResult| -> Vec<u64> { r.history.iter().flatten().map(|v| v.to_bits()).collect() };
    a.best_f.to_bits() == b.best_f.to_bits()
        && bits(a) == bits(b)
        && hist(a) == hist(b)
        && a.generations == b.generations
}

#[test]
fn same_seed_same_run() {
    for precision in [Precision::F32, Precision::F64] {
        for strategy in [
            Strategy::Thesis,
            Strategy::Rand1,
            Strategy::CurrentToBest1,
            Strategy::Rand2,
        ] {
            for bounds in [BoundPolicy::InitOnly, BoundPolicy::Resample] {
                let job = small_job(Function::Ackley, precision)
                    .strategy(strategy)
                    .bounds(bounds)
                    .seed(12345)
                    .stream(3)
                    .build()
                    .unwrap();
                let a = run(&job);
                let b = run(&job);
                check_consistent(&job, &a);
                assert!(same(&a, &b), "{precision:?} {strategy:?} {bounds:?}");
                // The engine called directly, and through a batch, agree with the solver.
                let c = match precision {
                    Precision::F32 => cpu::run::<f32>(&job, None).unwrap(),
                    Precision::F64 => cpu::run::<f64>(&job, None).unwrap(),
                };
                assert!(same(&a, &c), "{precision:?} {strategy:?} {bounds:?}");
            }
        }
    }
}

#[test]
fn batches_match_single_runs() {
    let jobs: Vec<Job> = (0..4)
        .map(|k| {
            small_job(
                Function::ALL[k as usize * 2],
                if k % 2 == 0 {
                    Precision::F32
                } else {
                    Precision::F64
                },
            )
            .seed(k)
            .build()
            .unwrap()
        })
        .collect();
    let batch = solver().run_batch(&jobs).unwrap();
    assert_eq!(batch.len(), jobs.len());
    for (job, r) in jobs.iter().zip(&batch) {
        assert!(same(r, &run(job)), "{:?}", job.function());
    }
}

#[test]
fn seeds_and_streams_give_different_runs() {
    for precision in [Precision::F32, Precision::F64] {
        let base = run(&small_job(Function::Griewank, precision)
            .seed(1)
            .build()
            .unwrap());
        let other_seed = run(&small_job(Function::Griewank, precision)
            .seed(2)
            .build()
            .unwrap());
        let high_seed = run(&small_job(Function::Griewank, precision)
            .seed(1 | 1 << 40)
            .build()
            .unwrap());
        let other_stream = run(&small_job(Function::Griewank, precision)
            .seed(1)
            .stream(1)
            .build()
            .unwrap());
        for (name, r) in [
            ("seed", &other_seed),
            ("seed's high word", &high_seed),
            ("stream", &other_stream),
        ] {
            assert!(
                !same(&base, r),
                "{precision:?}: another {name} gave the same run"
            );
            assert_ne!(
                base.history.as_ref().unwrap()[0],
                r.history.as_ref().unwrap()[0],
                "{name}"
            );
        }
    }
}

#[test]
fn f32_and_f64_runs_differ_but_both_work() {
    let a = run(&small_job(Function::Sphere, Precision::F32)
        .seed(9)
        .build()
        .unwrap());
    let b = run(&small_job(Function::Sphere, Precision::F64)
        .seed(9)
        .build()
        .unwrap());
    assert!(!same(&a, &b));
    // The same random streams: the initial populations agree to f32 rounding.
    let h0 = (
        a.history.as_ref().unwrap()[0],
        b.history.as_ref().unwrap()[0],
    );
    assert!((h0.0 - h0.1).abs() <= 1e-5 * h0.1, "{h0:?}");
}

#[test]
fn observer_sees_every_generation() {
    use std::sync::Mutex;
    let job = small_job(Function::Rastrigin, Precision::F64)
        .seed(21)
        .build()
        .unwrap();
    let seen = Mutex::new(Vec::new());
    let observer = |g: u32, f: f64| {
        seen.lock().unwrap().push((g, f));
        gpude::cpu::Flow::Continue
    };
    let r = solver().run(&job, Some(&observer)).unwrap();
    let seen = seen.into_inner().unwrap();
    let h = r.history.as_ref().unwrap();
    assert_eq!(seen.len(), h.len());
    for (k, (g, f)) in seen.iter().enumerate() {
        assert_eq!(*g as usize, k);
        assert_eq!(f.to_bits(), h[k].to_bits());
    }
}

// ---------------------------------------------------------------------------------------
// Stopping rules.

#[test]
fn target_stops_early() {
    for precision in [Precision::F32, Precision::F64] {
        let job = Job::builder(Function::Sphere, 5)
            .strategy(Strategy::Rand1)
            .pop(30)
            .generations(10_000)
            .target(1e-3)
            .seed(6)
            .precision(precision)
            .history(true)
            .build()
            .unwrap();
        let r = run(&job);
        check_consistent(&job, &r);
        assert_eq!(r.termination, Termination::TargetReached);
        assert!(r.error <= 1e-3);
        assert!(
            r.generations > 0 && r.generations < 1000,
            "{}",
            r.generations
        );
        // It stopped at the first generation that reached the target.
        let h = r.history.as_ref().unwrap();
        assert!(h[..h.len() - 1].iter().all(|&v| v > 1e-3), "{h:?}");
    }
}

#[test]
fn target_met_by_the_initial_population() {
    let job = Job::builder(Function::Sphere, 3)
        .pop(20)
        .generations(50)
        .target(1e9)
        .history(true)
        .build()
        .unwrap();
    let r = run(&job);
    check_consistent(&job, &r);
    assert_eq!(r.generations, 0);
    assert_eq!(r.evaluations, 20);
    assert_eq!(r.termination, Termination::TargetReached);
}

#[test]
fn zero_target_runs_to_the_end_unless_exact() {
    // Ackley in f32 cannot reach exactly 0 from random points in 40 generations.
    let job = small_job(Function::Ackley, Precision::F32)
        .target(0.0)
        .seed(3)
        .build()
        .unwrap();
    let r = run(&job);
    check_consistent(&job, &r);
    assert_eq!(r.termination, Termination::MaxGenerations);
    assert_eq!(r.generations, job.generations());
}

#[test]
fn evaluation_budget_is_respected() {
    for (pop, budget) in [
        (40u32, 1000u64),
        (40, 1039),
        (40, 40),
        (33, 1000),
        (7, 7 * 11 + 6),
    ] {
        let job = Job::builder(Function::Griewank, 6)
            .strategy(Strategy::Best1)
            .pop(pop)
            .max_evaluations(budget)
            .history(true)
            .build()
            .unwrap();
        assert!(job.budget_from_evaluations());
        let r = run(&job);
        check_consistent(&job, &r);
        assert!(
            r.evaluations <= budget,
            "Np {pop}: {} > {budget}",
            r.evaluations
        );
        // No further generation would have fitted.
        assert!(
            r.evaluations + pop as u64 > budget,
            "Np {pop}: {} of {budget}",
            r.evaluations
        );
        assert_eq!(
            r.termination,
            Termination::MaxEvaluations,
            "Np {pop} budget {budget}"
        );
        assert_eq!(
            r.history.as_ref().unwrap().len(),
            r.generations as usize + 1
        );
    }
}

#[test]
fn the_smaller_of_generations_and_budget_wins() {
    let by_gens = Job::builder(Function::Sphere, 4)
        .pop(20)
        .generations(5)
        .max_evaluations(10_000)
        .build()
        .unwrap();
    assert_eq!(by_gens.generations(), 5);
    let r = run(&by_gens);
    assert_eq!(
        (r.generations, r.termination),
        (5, Termination::MaxGenerations)
    );

    let by_budget = Job::builder(Function::Sphere, 4)
        .pop(20)
        .generations(500)
        .max_evaluations(200)
        .build()
        .unwrap();
    assert_eq!(by_budget.generations(), 9);
    let r = run(&by_budget);
    assert_eq!((r.generations, r.evaluations), (9, 200));
    assert_eq!(r.termination, Termination::MaxEvaluations);
}

#[test]
fn history_is_non_increasing_and_optional() {
    let job = small_job(Function::Weierstrass, Precision::F32)
        .seed(17)
        .build()
        .unwrap();
    let r = run(&job);
    check_consistent(&job, &r);
    assert!(r.history.is_some());
    let r = run(&small_job(Function::Weierstrass, Precision::F32)
        .seed(17)
        .history(false)
        .build()
        .unwrap());
    assert!(r.history.is_none());
}

// ---------------------------------------------------------------------------------------
// Bad settings: an error (never a panic) that names the offending value.

fn refused(b: JobBuilder, needles: &[&str]) {
    let err = match std::panic::catch_unwind(move || b.build()) {
        Ok(Ok(job)) => panic!("accepted: {job:?}"),
        Ok(Err(e)) => e.to_string(),
        Err(_) => panic!("panicked instead of returning an error (wanted {needles:?})"),
    };
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
}

#[test]
fn bad_dimensions_and_bounds_are_refused() {
    refused(Job::builder(Function::Sphere, 0), &["dimension", "0"]);
    refused(Job::builder(Function::Sphere, 0).domain(-1.0, 1.0), &["0"]);
    refused(Job::builder(Function::Sphere, (1 << 20) + 1), &["1048577"]);
    refused(
        Job::builder(Function::Sphere, (1 << 20) + 1).domain(-1.0, 1.0),
        &["1048577"],
    );
    refused(Job::builder(Function::Sphere, 3).domain(3.0, 3.0), &["3"]);
    refused(
        Job::builder(Function::Sphere, 3).domain(5.0, -5.0),
        &["5", "-5"],
    );
    refused(
        Job::builder(Function::Sphere, 3).domain(f64::NAN, 1.0),
        &["NaN"],
    );
    refused(
        Job::builder(Function::Sphere, 3).domain(-1.0, f64::NAN),
        &["NaN"],
    );
    refused(
        Job::builder(Function::Sphere, 3).domain(-1.0, f64::INFINITY),
        &["inf"],
    );
    refused(
        Job::builder(Function::Sphere, 3).domain(f64::NEG_INFINITY, 1.0),
        &["-inf"],
    );
    // One bad component of a box is found and named.
    refused(
        Job::builder(Function::Sphere, 3).domain_box(vec![0.0, 0.0, 2.5], vec![1.0, 1.0, 2.25]),
        &["2.5", "2.25"],
    );
    refused(
        Job::builder(Function::Sphere, 3)
            .domain_box(vec![0.0, -0.125, 0.0], vec![1.0, 1.0, f64::NAN]),
        &["NaN"],
    );
    // Boxes of the wrong length.
    refused(
        Job::builder(Function::Sphere, 3).domain_box(vec![0.0; 2], vec![1.0; 2]),
        &["2"],
    );
    refused(
        Job::builder(Function::Sphere, 3).domain_box(vec![0.0; 3], vec![1.0; 4]),
        &["4"],
    );
}

#[test]
fn too_small_populations_are_refused_for_each_strategy() {
    let draws = [
        (Strategy::Thesis, 2),
        (Strategy::Rand1, 3),
        (Strategy::Best1, 2),
        (Strategy::CurrentToBest1, 2),
        (Strategy::Rand2, 5),
        (Strategy::Best2, 4),
    ];
    for (strategy, k) in draws {
        assert_eq!(strategy.draws(), k);
        for pop in 0..=k {
            refused(
                Job::builder(Function::Sphere, 4)
                    .strategy(strategy)
                    .pop(pop),
                &["population", &format!("= {pop} ")],
            );
        }
        // draws + 1 is the smallest that works, and it runs.
        let job = Job::builder(Function::Sphere, 4)
            .strategy(strategy)
            .pop(k + 1)
            .generations(20)
            .build()
            .unwrap();
        let r = run(&job);
        check_consistent(&job, &r);
    }
    refused(
        Job::builder(Function::Sphere, 4).pop((1 << 24) + 1),
        &["16777217"],
    );
}

#[test]
fn bad_f_cr_and_target_are_refused() {
    let b = || Job::builder(Function::Sphere, 4).strategy(Strategy::Rand1);
    for f in [0.0, -0.25, 2.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        refused(b().f(f), &["F = ", &f.to_string(), "(0, 2]"]);
    }
    for cr in [-0.125, 1.5, f64::NAN, f64::NEG_INFINITY] {
        refused(b().cr(cr), &["Cr = ", &cr.to_string(), "[0, 1]"]);
    }
    for t in [-0.001, f64::NAN, f64::INFINITY] {
        refused(b().target(t), &["target", &t.to_string()]);
    }
    // Tiny and huge values are written briefly.
    refused(
        b().target(-f64::MIN_POSITIVE),
        &["-2.2250738585072014e-308"],
    );
    refused(b().f(1e300), &["F = 1e300 "]);
    // The limits themselves are allowed.
    for (f, cr) in [(2.0, 0.0), (1e-9, 1.0)] {
        b().f(f).cr(cr).target(0.0).build().unwrap();
    }
}

#[test]
fn too_small_budgets_are_refused() {
    refused(
        Job::builder(Function::Sphere, 4)
            .pop(50)
            .max_evaluations(49),
        &["evaluation", "49", "50"],
    );
    refused(
        Job::builder(Function::Sphere, 4).pop(50).max_evaluations(0),
        &["evaluation", "= 0 "],
    );
    refused(
        Job::builder(Function::Sphere, 4).generations(u32::MAX),
        &[&u32::MAX.to_string()],
    );
}
