//! GPU tests: parity of the CUDA kernels with the CPU engine, and the CUDA engine's
//! behaviour. They need an NVIDIA driver and GPU; without one every test is reported as
//! skipped (this file has its own harness so that the message is always shown).

use gpude::checkpoint::{Checkpoint, Entry, State};
use gpude::cuda_control::{Reporting, Watch};
use gpude::expr::{Expr, builtins::expression};
use gpude::host::cpu::{self, Control, Flow, Population};
use gpude::host::cuda::FinalPopulation;
use gpude::{
    BatchKernel, BoundPolicy, Crossover, CudaEngine, Error, Formula, Function, Job, Mode,
    Objective, Precision, RunResult, Strategy, Termination, ThesisVariant,
};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

type Test = (&'static str, fn(&CudaEngine));

fn main() {
    let tests: Vec<Test> = vec![
        (
            "evaluate_kernel_matches_cpu_bit_for_bit",
            evaluate_kernel_matches_cpu,
        ),
        (
            "one_generation_parity_every_strategy",
            one_generation_parity,
        ),
        ("grid_mode_matches_batch_mode", grid_matches_batch),
        (
            "batch_of_mixed_jobs_matches_cpu_runs",
            mixed_batch_matches_cpu,
        ),
        ("thirty_seeds_agree_statistically", thirty_seeds_agree),
        (
            "textbook_and_exact_runs_match_cpu_bit_for_bit",
            formulas_match_cpu,
        ),
        ("target_error_stops_early", target_stops_early),
        ("history_is_recorded", history_is_recorded),
        (
            "too_large_job_is_refused_before_allocating",
            too_large_job_is_refused,
        ),
        (
            "control_observer_stops_exactly",
            control_observer_stops_exactly,
        ),
        ("control_progress_is_seen", control_progress_is_seen),
        (
            "control_stop_flag_ends_at_a_report",
            control_stop_flag_ends_at_a_report,
        ),
        (
            "checkpoint_resume_bit_identity",
            checkpoint_resume_bit_identity,
        ),
        (
            "checkpoints_every_n_match_the_cpu",
            checkpoints_every_n_match_the_cpu,
        ),
        (
            "cpu_checkpoint_resumes_on_gpu",
            cpu_checkpoint_resumes_on_gpu,
        ),
        (
            "controlled_runs_equal_plain_runs",
            controlled_runs_equal_plain_runs,
        ),
        (
            "expression_values_match_cpu_bit_for_bit",
            expression_values_match_cpu,
        ),
        (
            "builtins_as_expressions_run_as_on_the_cpu",
            expression_runs_match_cpu,
        ),
        (
            "expression_batch_matches_cpu_runs",
            expression_batch_matches_cpu,
        ),
        (
            "expressions_agree_with_the_builtins_on_the_gpu",
            expressions_agree_with_builtins,
        ),
        (
            "ptx_objectives_run_as_their_expressions",
            ptx_objectives_match_expressions,
        ),
        (
            "separable_objectives_match_cpu_bit_for_bit",
            separable_objectives_match_cpu,
        ),
        (
            "thesis_variants_match_cpu_bit_for_bit",
            thesis_variants_match_cpu,
        ),
        (
            "thesis_variants_of_user_objectives_match_cpu",
            thesis_variants_of_user_objectives_match_cpu,
        ),
        (
            "batch_of_thesis_variants_matches_cpu_runs",
            thesis_variant_batch_matches_cpu,
        ),
        (
            "shared_memory_batch_matches_cpu_bit_for_bit",
            shared_batch_matches_cpu,
        ),
        (
            "shared_memory_batch_falls_back_when_it_does_not_fit",
            shared_batch_falls_back,
        ),
        (
            "pipelined_batch_matches_cpu_bit_for_bit",
            pipelined_batch_matches_cpu,
        ),
        (
            "pipelined_batch_refusals_are_clear",
            pipelined_batch_refusals,
        ),
        (
            "adaptive_runs_match_cpu_bit_for_bit",
            adaptive_runs_match_cpu,
        ),
        (
            "classic_cec_runs_match_cpu_bit_for_bit",
            classic_cec_runs_match_cpu,
        ),
        (
            "adaptive_gpu_refusals_are_clear",
            adaptive_gpu_refusals_are_clear,
        ),
        (
            "adaptive_grid_runs_match_cpu_bit_for_bit",
            adaptive_grid_runs_match_cpu,
        ),
        (
            "nan_objectives_run_as_on_the_cpu",
            nan_objectives_run_as_on_the_cpu,
        ),
        (
            "adaptive_user_objectives_match_cpu_bit_for_bit",
            adaptive_user_objectives_match_cpu,
        ),
        (
            "adaptive_host_callbacks_run_as_on_the_cpu",
            adaptive_host_callbacks_match_cpu,
        ),
        ("host_callbacks_run_as_on_the_cpu", host_callbacks_match_cpu),
        (
            "host_callback_errors_are_the_cpu_engines",
            host_callback_errors,
        ),
        (
            "host_callback_control_is_the_cpu_engines",
            host_callback_control,
        ),
    ];
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let t0 = std::time::Instant::now();
    let engine = match gpude::cuda_engine(0, 4) {
        Ok(e) => e,
        Err(e) => {
            println!(
                "gpu tests: SKIPPED all {} — no usable GPU: {e}",
                tests.len()
            );
            println!(
                "test result: ok. 0 passed; 0 failed; {} ignored",
                tests.len()
            );
            return;
        }
    };
    println!(
        "gpu tests on {} (sm_{}{}, {} SMs); module loaded in {:.2} s",
        engine.device_name(),
        engine.compute_capability().0,
        engine.compute_capability().1,
        engine.multiprocessors(),
        t0.elapsed().as_secs_f64()
    );
    let (mut passed, mut failed) = (0, 0);
    for (name, t) in tests {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let start = std::time::Instant::now();
        match catch_unwind(AssertUnwindSafe(|| t(&engine))) {
            Ok(()) => {
                passed += 1;
                println!(
                    "test {name} ... ok ({:.2} s)",
                    start.elapsed().as_secs_f64()
                );
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED");
            }
        }
    }
    println!(
        "test result: {}. {passed} passed; {failed} failed; 0 ignored",
        if failed == 0 { "ok" } else { "FAILED" }
    );
    if failed > 0 {
        std::process::exit(1);
    }
}

#[allow(clippy::too_many_arguments)]
fn job(
    f: Function,
    dim: u32,
    pop: u32,
    gens: u32,
    s: Strategy,
    c: Crossover,
    b: BoundPolicy,
    p: Precision,
    seed: u64,
) -> Job {
    let mut builder = Job::builder(f, dim).strategy(s);
    // The thesis strategy has no F, Cr or crossover (its λ is drawn per component).
    if s.crosses() {
        builder = builder.crossover(c).f(0.5).cr(0.7);
    }
    builder
        .pop(pop)
        .generations(gens)
        .bounds(b)
        .precision(p)
        .seed(seed)
        .build()
        .expect("valid job")
}

fn cpu_population(job: &Job) -> FinalPopulation {
    fn go<T: gpude::device::Real>(job: &Job) -> FinalPopulation {
        let mut pop: Population<T> = cpu::initial(job);
        let mut best = pop.best();
        let mut scratch = Vec::new();
        for g in 1..=job.generations() {
            best = cpu::generation(job, &mut pop, best, g, &mut scratch);
        }
        FinalPopulation {
            x: pop.x.iter().map(|v| v.to_f64()).collect(),
            fit: pop.fit.iter().map(|v| v.to_f64()).collect(),
        }
    }
    match job.precision() {
        Precision::F32 => go::<f32>(job),
        Precision::F64 => go::<f64>(job),
    }
}

/// Largest relative difference, and how many values are equal bit for bit.
fn compare(a: &[f64], b: &[f64]) -> (f64, usize) {
    assert_eq!(a.len(), b.len());
    let mut worst = 0.0f64;
    let mut same = 0;
    for (x, y) in a.iter().zip(b) {
        if x.to_bits() == y.to_bits() {
            same += 1;
            continue;
        }
        let d = (x - y).abs() / x.abs().max(y.abs()).max(1e-30);
        worst = worst.max(if d.is_nan() { f64::INFINITY } else { d });
    }
    (worst, same)
}

fn evaluate_kernel_matches_cpu(e: &CudaEngine) {
    let mut s = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    for info in gpude::FUNCTIONS {
        for dim in [1u32, 2, 3, 5, 30, 128, 130, 300] {
            let (lo, hi) = info.domain;
            // Points over the domain, and points 1e-1 … 1e-20 from the optimum, where
            // the exact formulas differ most from the textbook ones.
            let mut pts: Vec<f64> = (0..dim as usize * 37)
                .map(|_| lo + next() * (hi - lo))
                .collect();
            for k in 1..=20 {
                let r = 10f64.powi(-k);
                pts.extend((0..dim).map(|_| info.argmin + r * (2.0 * next() - 1.0)));
            }
            for p in [Precision::F32, Precision::F64] {
                for formula in Formula::ALL {
                    let gpu = match p {
                        Precision::F32 => e.evaluate::<f32>(info.function, formula, dim, &pts),
                        Precision::F64 => e.evaluate::<f64>(info.function, formula, dim, &pts),
                    }
                    .expect("evaluate");
                    let cpu: Vec<f64> = pts
                        .chunks(dim as usize)
                        .map(|x| gpude::evaluate_as(info.function, p, formula, x).unwrap())
                        .collect();
                    let (worst, same) = compare(&gpu, &cpu);
                    assert_eq!(
                        same,
                        cpu.len(),
                        "{} D={dim} {p:?} {formula:?}: {same}/{} equal, worst rel {worst:e}",
                        info.name,
                        cpu.len()
                    );
                }
            }
        }
    }
}

fn one_generation_parity(e: &CudaEngine) {
    let mut cases = Vec::new();
    for s in Strategy::ALL {
        for (f, dim) in [
            (Function::Griewank, 128),
            (Function::Rosenbrock, 30),
            (Function::Schwefel12, 5),
        ] {
            cases.push((
                s,
                Crossover::Binomial,
                BoundPolicy::InitOnly,
                f,
                dim,
                Precision::F32,
            ));
        }
    }
    for b in [
        BoundPolicy::Clip,
        BoundPolicy::Reflect,
        BoundPolicy::Resample,
        BoundPolicy::Midpoint,
    ] {
        cases.push((
            Strategy::Rand1,
            Crossover::Exponential,
            b,
            Function::Penalized,
            37,
            Precision::F32,
        ));
        cases.push((
            Strategy::Best2,
            Crossover::Binomial,
            b,
            Function::Ackley,
            200,
            Precision::F64,
        ));
    }
    cases.push((
        Strategy::Thesis,
        Crossover::Binomial,
        BoundPolicy::InitOnly,
        Function::Weierstrass,
        10,
        Precision::F64,
    ));
    cases.push((
        Strategy::Thesis,
        Crossover::Binomial,
        BoundPolicy::InitOnly,
        Function::Rastrigin,
        64,
        Precision::F64,
    ));
    let mut exact = 0;
    for (k, &(s, c, b, f, dim, p)) in cases.iter().enumerate() {
        for gens in [1u32, 3] {
            let j = job(f, dim, 64, gens, s, c, b, p, 1000 + k as u64);
            let cpu = cpu_population(&j);
            for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                let (_, gpu) = e.run_with_population(&j, mode).expect("gpu run");
                let (wx, sx) = compare(&gpu.x, &cpu.x);
                let (wf, sf) = compare(&gpu.fit, &cpu.fit);
                let tol = if p == Precision::F32 { 1e-6 } else { 1e-13 };
                assert!(
                    wx <= tol && wf <= tol,
                    "{s:?}/{c:?}/{b:?} {f:?} D={dim} {p:?} gens={gens} {mode:?}: worst rel x {wx:e}, f {wf:e}"
                );
                if sx == gpu.x.len() && sf == gpu.fit.len() {
                    exact += 1;
                }
            }
        }
    }
    println!(
        "  parity: {exact}/{} runs equal bit for bit (tolerance 1e-6 f32, 1e-13 f64)",
        cases.len() * 6
    );
}

fn grid_matches_batch(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let j = job(
            Function::Griewank,
            128,
            2048,
            50,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            p,
            7,
        );
        let a = e.run(&j, Mode::Batch).unwrap();
        assert_eq!(a.generations, 50);
        for mode in [Mode::Grid, Mode::Steps] {
            let b = e.run(&j, mode).unwrap();
            assert_eq!(
                a.best_f.to_bits(),
                b.best_f.to_bits(),
                "{p:?}: batch {} {mode:?} {}",
                a.best_f,
                b.best_f
            );
            assert_eq!(a.best_x, b.best_x);
            assert_eq!(b.generations, 50);
        }
    }
}

fn mixed_batch_matches_cpu(e: &CudaEngine) {
    let mut jobs = Vec::new();
    for seed in 0..6u64 {
        jobs.push(job(
            Function::Sphere,
            20,
            96,
            40,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            Precision::F32,
            seed,
        ));
        jobs.push(job(
            Function::Ackley,
            16,
            64,
            30,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
            seed,
        ));
    }
    let gpu = e.run_batch(&jobs).unwrap();
    assert_eq!(gpu.len(), jobs.len());
    for (j, g) in jobs.iter().zip(&gpu) {
        let c = match j.precision() {
            Precision::F32 => cpu::run::<f32>(j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(j, None).unwrap(),
        };
        let rel = (g.best_f - c.best_f).abs() / c.best_f.abs().max(1e-30);
        assert!(
            rel <= 1e-6,
            "{:?} seed {}: gpu {} cpu {}",
            j.function(),
            j.seed(),
            g.best_f,
            c.best_f
        );
        assert_eq!(g.generations, c.generations);
    }
}

fn thirty_seeds_agree(e: &CudaEngine) {
    let jobs: Vec<Job> = (0..30)
        .map(|k| {
            Job::builder(Function::Griewank, 30)
                .pop(128)
                .generations(300)
                .seed(42)
                .stream(k)
                .build()
                .unwrap()
        })
        .collect();
    let gpu = e.run_batch(&jobs).unwrap();
    let mut g: Vec<f64> = gpu.iter().map(|r| r.error).collect();
    let mut c: Vec<f64> = jobs
        .iter()
        .map(|j| cpu::run::<f32>(j, None).unwrap().error)
        .collect();
    let same = g
        .iter()
        .zip(&c)
        .filter(|(a, b)| a.to_bits() == b.to_bits())
        .count();
    g.sort_by(f64::total_cmp);
    c.sort_by(f64::total_cmp);
    // Two-sample Kolmogorov–Smirnov statistic against its 5 % critical value.
    let mut d = 0.0f64;
    for x in g.iter().chain(&c) {
        let fg = g.iter().filter(|v| *v <= x).count() as f64 / 30.0;
        let fc = c.iter().filter(|v| *v <= x).count() as f64 / 30.0;
        d = d.max((fg - fc).abs());
    }
    println!(
        "  30 seeds: median error gpu {:e} cpu {:e}; KS D = {d:.3}; {same}/30 identical",
        g[15], c[15]
    );
    assert!(d < 1.36 * (2.0f64 / 30.0).sqrt(), "KS D = {d}");
}

fn target_stops_early(e: &CudaEngine) {
    for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
        let j = Job::builder(Function::Sphere, 16)
            .pop(512)
            .generations(5000)
            .target(1e-3)
            .seed(3)
            .build()
            .unwrap();
        let r = e.run(&j, mode).unwrap();
        assert_eq!(r.termination, gpude::Termination::TargetReached, "{mode:?}");
        assert!(
            r.error <= 1e-3 && r.generations < 5000,
            "{mode:?}: {} after {}",
            r.error,
            r.generations
        );
    }
}

fn history_is_recorded(e: &CudaEngine) {
    for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
        let j = Job::builder(Function::Rastrigin, 8)
            .pop(256)
            .generations(60)
            .history(true)
            .seed(5)
            .build()
            .unwrap();
        let r = e.run(&j, mode).unwrap();
        let c = cpu::run::<f32>(&j, None).unwrap();
        let h = r.history.expect("history");
        assert_eq!(h.len(), 61);
        assert!(h.windows(2).all(|w| w[1] <= w[0]), "{mode:?}: not monotone");
        assert_eq!(h, c.history.unwrap(), "{mode:?}");
    }
}

fn too_large_job_is_refused(e: &CudaEngine) {
    let j = Job::builder(Function::Sphere, 1 << 16)
        .pop(1 << 20)
        .generations(1)
        .build()
        .unwrap();
    match e.run(&j, Mode::Batch) {
        Err(Error::OutOfMemory {
            memory,
            needed,
            free,
        }) => {
            assert_eq!(memory, "GPU");
            assert!(needed > free)
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
}

/// Whole runs in both formulas, every layout: the same bits as the CPU engine (best
/// value, best point and verified error).
fn formulas_match_cpu(e: &CudaEngine) {
    for formula in Formula::ALL {
        for f in [Function::Griewank, Function::Ackley, Function::Rastrigin] {
            for p in [Precision::F32, Precision::F64] {
                let j = Job::builder(f, 40)
                    .pop(128)
                    .generations(60)
                    .seed(11)
                    .precision(p)
                    .formula(formula)
                    .build()
                    .expect("valid job");
                let c = match p {
                    Precision::F32 => cpu::run::<f32>(&j, None).expect("runs"),
                    Precision::F64 => cpu::run::<f64>(&j, None).expect("runs"),
                };
                for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                    let g = e.run(&j, mode).expect("runs");
                    let what = format!("{f:?} {p:?} {formula:?} {mode:?}");
                    assert_eq!(g.best_f.to_bits(), c.best_f.to_bits(), "{what}");
                    assert_eq!(g.best_x, c.best_x, "{what}");
                    assert_eq!(
                        g.verified_error.to_bits(),
                        c.verified_error.to_bits(),
                        "{what}"
                    );
                }
            }
        }
    }
}

// ---- control: observers, stops, progress and checkpoints on the GPU ----

/// A checkpoint's population and values as exact bits (f32 widened exactly).
fn state_bits(c: &Checkpoint) -> (Vec<u64>, Vec<u64>) {
    match &c.state {
        State::F32 { x, fit } => (
            x.iter().map(|v| v.to_bits() as u64).collect(),
            fit.iter().map(|v| v.to_bits() as u64).collect(),
        ),
        State::F64 { x, fit } => (
            x.iter().map(|v| v.to_bits()).collect(),
            fit.iter().map(|v| v.to_bits()).collect(),
        ),
    }
}

/// The CPU engine's population after `job`'s generations, as exact bits.
fn cpu_bits(job: &Job) -> (Vec<u64>, Vec<u64>) {
    let p = cpu_population(job);
    let bits = |v: &[f64]| match job.precision() {
        Precision::F32 => v.iter().map(|x| (*x as f32).to_bits() as u64).collect(),
        Precision::F64 => v.iter().map(|x| x.to_bits()).collect(),
    };
    (bits(&p.x), bits(&p.fit))
}

/// The result's reported numbers as bits (best value and point, generations,
/// termination, history), for equality checks that ignore the time.
fn result_bits(r: &RunResult) -> (u64, Vec<u64>, u32, Termination, Option<Vec<u64>>) {
    (
        r.best_f.to_bits(),
        r.best_x.iter().map(|v| v.to_bits()).collect(),
        r.generations,
        r.termination,
        r.history
            .as_ref()
            .map(|h| h.iter().map(|v| v.to_bits()).collect()),
    )
}

fn control_job(p: Precision, s: Strategy, gens: u32, seed: u64) -> Job {
    let mut b = Job::builder(Function::Rastrigin, 24)
        .pop(96)
        .generations(gens)
        .seed(seed)
        .precision(p)
        .history(true);
    if s.crosses() {
        b = b.strategy(s).f(0.5).cr(0.9).bounds(BoundPolicy::Clip);
    }
    b.build().expect("valid job")
}

const LAYOUTS: [Mode; 3] = [Mode::Batch, Mode::Grid, Mode::Steps];

/// `job` with another generation limit.
fn limited(job: &Job, generations: u32) -> Job {
    let mut e = Entry::Pending(job.clone());
    e.set_generations(generations).expect("a valid limit");
    e.job().clone()
}

/// An observer that stops at generation 12 ends the run exactly there in exact mode
/// (reports every 4), on every layout: 12 generations, `Stopped`, and the population
/// the CPU engine has after 12 generations, bit for bit.
fn control_observer_stops_exactly(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 200, 21);
        let at12 = limited(&job, 12);
        let want = cpu_bits(&at12);
        for mode in LAYOUTS {
            let seen = Mutex::new(Vec::new());
            let observe = |g: u32, best: f64| {
                seen.lock().unwrap().push((g, best));
                if g >= 12 { Flow::Stop } else { Flow::Continue }
            };
            let mut control = Control {
                observer: Some(&observe),
                ..Control::default()
            };
            let exact = Reporting {
                every: 4,
                exact: true,
            };
            let o = e
                .run_controlled(&job, mode, &mut control, exact)
                .expect("runs");
            let what = format!("{p:?} {mode:?}");
            assert_eq!(o.result.generations, 12, "{what}");
            assert_eq!(o.result.termination, Termination::Stopped, "{what}");
            assert_eq!(o.checkpoint.generation, 12, "{what}");
            assert_eq!(state_bits(&o.checkpoint), want, "{what}");
            let gens: Vec<u32> = seen.lock().unwrap().iter().map(|s| s.0).collect();
            assert_eq!(gens, [0, 4, 8, 12], "{what}: the observer saw {gens:?}");
            assert_eq!(o.result.history.as_ref().map(Vec::len), Some(13), "{what}");
        }
    }
}

/// Progress without waiting (reports every 8): what the observer sees is reported
/// generations (multiples of 8, and the last), increasing, some before the end, each
/// with the best the run had there (the CPU engine's history, bit for bit); the run
/// ends at its limit.
fn control_progress_is_seen(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 3000, 5);
        let cpu_hist = match p {
            Precision::F32 => cpu::run::<f32>(&job, None),
            Precision::F64 => cpu::run::<f64>(&job, None),
        }
        .expect("cpu run")
        .history
        .expect("history");
        for mode in LAYOUTS {
            let seen = Mutex::new(Vec::new());
            let observe = |g: u32, best: f64| {
                seen.lock().unwrap().push((g, best));
                Flow::Continue
            };
            let mut control = Control {
                observer: Some(&observe),
                ..Control::default()
            };
            let every8 = Reporting {
                every: 8,
                exact: false,
            };
            let o = e
                .run_controlled(&job, mode, &mut control, every8)
                .expect("runs");
            let what = format!("{p:?} {mode:?}");
            assert_eq!(o.result.generations, 3000, "{what}");
            assert_eq!(o.result.termination, Termination::MaxGenerations, "{what}");
            let seen = seen.into_inner().unwrap();
            assert!(
                seen.len() >= 2,
                "{what}: no progress before the end: {seen:?}"
            );
            assert_eq!(seen.last().map(|s| s.0), Some(3000), "{what}: the last");
            assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{what}: {seen:?}");
            for &(g, best) in &seen {
                assert!(g % 8 == 0 || g == 3000, "{what}: generation {g} reported");
                assert_eq!(
                    best.to_bits(),
                    cpu_hist[g as usize].to_bits(),
                    "{what}: best at {g}"
                );
            }
            println!("  {what}: {} reports seen of 376", seen.len());
        }
    }
}

/// The stop flag, set by the observer at generation 40 while the run goes on: in exact
/// mode (and in the step layout, where the host looks between launches) the run ends
/// there, as on the CPU; without waiting, at some later report. Either way the state
/// is the CPU engine's after that many generations.
fn control_stop_flag_ends_at_a_report(e: &CudaEngine) {
    for exact in [true, false] {
        for mode in LAYOUTS {
            let job = control_job(Precision::F32, Strategy::Thesis, 1_000_000, 9);
            let flag = AtomicBool::new(false);
            let observe = |g: u32, _: f64| {
                if g >= 40 {
                    flag.store(true, Ordering::Relaxed);
                }
                Flow::Continue
            };
            let mut control = Control {
                observer: Some(&observe),
                stop: Some(&flag),
                ..Control::default()
            };
            let r = Reporting { every: 4, exact };
            let o = e.run_controlled(&job, mode, &mut control, r).expect("runs");
            let g = o.result.generations;
            let what = format!("exact {exact} {mode:?}: stopped at {g}");
            if exact || mode == Mode::Steps {
                assert_eq!(g, 40, "{what}");
            } else {
                assert!(g >= 40 && g % 4 == 0, "{what}");
            }
            assert_eq!(o.result.termination, Termination::Stopped, "{what}");
            let at = limited(&job, g);
            assert_eq!(state_bits(&o.checkpoint), cpu_bits(&at), "{what}");
            println!("  {what}");
        }
    }
}

/// G generations, and G/2 then a resume to G, give the same bits on the GPU: result
/// (best, point, history) and final population, single runs in every layout and a
/// batch of runs sharing a launch, f32 and f64, thesis and a classic strategy. The
/// controlled run also matches the plain `run` (no control block).
fn checkpoint_resume_bit_identity(e: &CudaEngine) {
    let every = Reporting::default();
    for p in [Precision::F32, Precision::F64] {
        for s in [Strategy::Thesis, Strategy::Rand1] {
            let job = control_job(p, s, 120, 33);
            let half = limited(&job, 60);
            for mode in LAYOUTS {
                let what = format!("{p:?} {s:?} {mode:?}");
                let plain = e.run(&job, mode).expect("plain run");
                let whole = e
                    .run_controlled(&job, mode, &mut Control::default(), every)
                    .expect("whole run");
                assert_eq!(result_bits(&plain), result_bits(&whole.result), "{what}");
                let first = e
                    .run_controlled(&half, mode, &mut Control::default(), every)
                    .expect("first half");
                assert_eq!(first.checkpoint.generation, 60, "{what}");
                let mut from = first.checkpoint;
                from.set_generations(120).expect("limit");
                let second = e
                    .resume(from, mode, &mut Control::default(), every)
                    .expect("resumed");
                assert_eq!(
                    result_bits(&whole.result),
                    result_bits(&second.result),
                    "{what}"
                );
                assert_eq!(
                    state_bits(&whole.checkpoint),
                    state_bits(&second.checkpoint),
                    "{what}"
                );
            }
            // A batch: four runs (streams 0..3) in one launch, stopped at 60 by their
            // job's limit and resumed together.
            let jobs: Vec<Job> = (0..4).map(|k| job.clone().with_stream(k)).collect();
            let entries = |js: &[Job]| js.iter().cloned().map(Entry::Pending).collect();
            let mut keep = Watch {
                keep: true,
                ..Watch::default()
            };
            let whole = e
                .run_entries(entries(&jobs), Mode::Batch, &mut keep)
                .expect("whole batch");
            let halves: Vec<Job> = jobs.iter().map(|j| limited(j, 60)).collect();
            let first = e
                .run_entries(entries(&halves), Mode::Batch, &mut keep)
                .expect("first halves");
            let resumed: Vec<Entry> = first
                .into_iter()
                .map(|r| {
                    let mut en = r.entry;
                    en.set_generations(120).expect("limit");
                    en
                })
                .collect();
            let second = e
                .run_entries(resumed, Mode::Batch, &mut keep)
                .expect("resumed batch");
            for (k, (a, b)) in whole.iter().zip(&second).enumerate() {
                let what = format!("{p:?} {s:?} batch run {k}");
                let (ra, rb) = (a.result.as_ref().unwrap(), b.result.as_ref().unwrap());
                assert_eq!(result_bits(ra), result_bits(rb), "{what}");
                match (&a.entry, &b.entry) {
                    (Entry::Started(x), Entry::Started(y)) => {
                        assert_eq!(state_bits(x), state_bits(y), "{what}")
                    }
                    _ => panic!("{what}: no state kept"),
                }
            }
        }
    }
}

/// Checkpoints every 25 generations (the launch split into segments): each saved state
/// is the CPU engine's at its generation, bit for bit, and a saver that stops ends the
/// run at the checkpoint it was given.
fn checkpoints_every_n_match_the_cpu(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 110, 77);
        for mode in LAYOUTS {
            let what = format!("{p:?} {mode:?}");
            let mut saved: Vec<Checkpoint> = Vec::new();
            let mut save = |c: &Checkpoint| {
                saved.push(c.clone());
                if c.generation >= 75 {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            };
            let mut control = Control {
                every: 25,
                save: Some(&mut save),
                ..Control::default()
            };
            let o = e
                .run_controlled(&job, mode, &mut control, Reporting::default())
                .expect("runs");
            let gens: Vec<u32> = saved.iter().map(|c| c.generation).collect();
            assert_eq!(gens, [25, 50, 75], "{what}");
            for c in &saved {
                let at = limited(&job, c.generation);
                assert_eq!(state_bits(c), cpu_bits(&at), "{what} at {}", c.generation);
                assert_eq!(
                    c.history.as_ref().map(Vec::len),
                    Some(c.generation as usize + 1)
                );
            }
            assert_eq!(o.result.generations, 75, "{what}");
            assert_eq!(o.result.termination, Termination::Stopped, "{what}");
        }
    }
}

/// A checkpoint of the CPU engine goes on on the GPU (and one of the GPU on the CPU) to
/// the same bits as a run that never stopped, on either engine.
fn cpu_checkpoint_resumes_on_gpu(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 100, 4);
        let half = limited(&job, 50);
        let cpu_half = cpu::run_controlled(&half, &mut Control::default());
        let cpu_whole = cpu::run_controlled(&job, &mut Control::default());
        for mode in LAYOUTS {
            let what = format!("{p:?} {mode:?}");
            let mut from = cpu_half.checkpoint.clone();
            from.set_generations(100).expect("limit");
            let on_gpu = e
                .resume(from, mode, &mut Control::default(), Reporting::default())
                .expect("gpu resume");
            assert_eq!(
                result_bits(&on_gpu.result),
                result_bits(&cpu_whole.result),
                "{what}: CPU then GPU"
            );
            assert_eq!(
                state_bits(&on_gpu.checkpoint),
                state_bits(&cpu_whole.checkpoint),
                "{what}"
            );
            let gpu_half = e
                .run_controlled(&half, mode, &mut Control::default(), Reporting::default())
                .expect("gpu half");
            let mut from = gpu_half.checkpoint;
            from.set_generations(100).expect("limit");
            let on_cpu = cpu::resume(from, &mut Control::default()).expect("cpu resume");
            assert_eq!(
                result_bits(&on_cpu.result),
                result_bits(&cpu_whole.result),
                "{what}: GPU then CPU"
            );
        }
    }
}

/// Runs under the control block (reports every 32 generations, no observer work) give the
/// same bits as plain ones (`run`, `run_batch`): a batch of 64 populations and one
/// population over the grid, for 300 and 3000 generations. The times of both are printed
/// (the difference is the control block's cost, the pinned block and the host's 0.2 ms
/// polling included); they are not asserted.
fn controlled_runs_equal_plain_runs(e: &CudaEngine) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (mode, runs, pop, gens) in [
        (Mode::Batch, 64u32, 256u32, 300u32),
        (Mode::Batch, 64, 256, 3000),
        (Mode::Grid, 1, 8192, 300),
        (Mode::Grid, 1, 8192, 3000),
    ] {
        let jobs: Vec<Job> = (0..runs)
            .map(|k| {
                Job::builder(Function::Griewank, 128)
                    .pop(pop)
                    .generations(gens)
                    .seed(1)
                    .stream(k)
                    .build()
                    .expect("valid job")
            })
            .collect();
        let observe = |_: usize, _: u32, _: f64| Flow::Continue;
        let (mut plain_t, mut ctl_t) = (Vec::new(), Vec::new());
        for _ in 0..4 {
            let t = std::time::Instant::now();
            let plain = match mode {
                Mode::Batch => e.run_batch(&jobs).expect("plain batch"),
                _ => vec![e.run(&jobs[0], mode).expect("plain run")],
            };
            plain_t.push(t.elapsed().as_secs_f64());
            let t = std::time::Instant::now();
            let mut watch = Watch {
                observer: Some(&observe),
                ..Watch::default()
            };
            let ctl = e
                .run_entries(
                    jobs.iter().cloned().map(Entry::Pending).collect(),
                    mode,
                    &mut watch,
                )
                .expect("controlled");
            ctl_t.push(t.elapsed().as_secs_f64());
            for (a, b) in plain.iter().zip(&ctl) {
                assert_eq!(
                    result_bits(a),
                    result_bits(b.result.as_ref().expect("a result")),
                    "{mode:?}"
                );
            }
        }
        // The first of each warms the modules up.
        let (p, c) = (median(plain_t[1..].to_vec()), median(ctl_t[1..].to_vec()));
        println!(
            "  {mode:?} {runs} x Np={pop}, D=128, {gens} gens: plain {:.2} ms, controlled {:.2} ms ({:+.1} %)",
            p * 1e3,
            c * 1e3,
            (c / p - 1.0) * 100.0
        );
        // Times are printed, not asserted: what the control block costs is measured by
        // the benchmarks (docs/PERFORMANCE.md), not by a test.
    }
}

/// Equal bits, or both NaN (the GPU and the CPU write NaNs with different payloads).
fn same_value(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Points for the expression tests: uniform over ±h, with zeros, tiny values and large
/// ones (the far argument reduction of sin and cos).
fn points(n: usize, h: f64, seed: u64) -> Vec<f64> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|k| match k % 16 {
            0 => 0.0,
            1 => (2.0 * next() - 1.0) * 1e-30,
            2 => (2.0 * next() - 1.0) * 1e5,
            3 => (2.0 * next() - 1.0) * 1e12,
            _ => (2.0 * next() - 1.0) * h,
        })
        .collect()
}

fn eval_gpu(e: &CudaEngine, x: &Expr, p: Precision, dim: u32, pts: &[f64]) -> Vec<f64> {
    match p {
        Precision::F32 => e.evaluate_expr::<f32>(x, dim, pts),
        Precision::F64 => e.evaluate_expr::<f64>(x, dim, pts),
    }
    .unwrap_or_else(|err| panic!("{}: {err}", x.source()))
}

fn eval_cpu(x: &Expr, p: Precision, dim: u32, pts: &[f64]) -> Vec<f64> {
    pts.chunks(dim as usize)
        .map(|r| match p {
            Precision::F32 => {
                let r: Vec<f32> = r.iter().map(|&v| v as f32).collect();
                x.eval(&r) as f64
            }
            Precision::F64 => x.eval(r),
        })
        .collect()
}

/// Every function of the language and the eight built-ins as expressions: the GPU's
/// values (the generated PTX linked with the device crate's maths) are the CPU
/// evaluator's, bit for bit.
fn expression_values_match_cpu(e: &CudaEngine) {
    let one = [
        "sum(sin(x))",
        "sum(cos(x))",
        "sum(tan(x))",
        "sum(exp(x/1000))",
        "sum(log(abs(x)))",
        "sum(sinpi(x))",
        "sum(cospi(x))",
        "sum(expm1(x/1000))",
        "sum(log1p(abs(x)))",
        "sum(pow(abs(x), 0.37) + x^-2 + abs(x)^1.5)",
        "sum(sqrt(abs(x)) / (x + 1) - min(x, 2) * max(x, -3) + select(x > 1, 1, x))",
    ];
    let mut checked = 0;
    for src in one {
        let x = Expr::parse(src).unwrap();
        let pts = points(20_000, 20.0, 17);
        for p in [Precision::F32, Precision::F64] {
            let g = eval_gpu(e, &x, p, 1, &pts);
            let c = eval_cpu(&x, p, 1, &pts);
            for (k, (a, b)) in g.iter().zip(&c).enumerate() {
                assert!(
                    same_value(*a, *b),
                    "{src} {p:?} at {:e}: gpu {a:e} cpu {b:e}",
                    pts[k]
                );
            }
            checked += g.len();
        }
    }
    for f in Function::ALL {
        let x = Expr::parse(&expression(f)).unwrap();
        let h = gpude::FunctionInfo::of(f).domain.1;
        for dim in [2u32, 5, 30, 128] {
            let pts = points(dim as usize * 300, h, 29 + dim as u64);
            for p in [Precision::F32, Precision::F64] {
                let g = eval_gpu(e, &x, p, dim, &pts);
                let c = eval_cpu(&x, p, dim, &pts);
                let same = g
                    .iter()
                    .zip(&c)
                    .filter(|(a, b)| same_value(**a, **b))
                    .count();
                assert_eq!(
                    same,
                    c.len(),
                    "{f:?} D={dim} {p:?}: {same}/{} equal",
                    c.len()
                );
                checked += c.len();
            }
        }
    }
    // Reductions over one range share a loop in the PTX (each with its own accumulator
    // and running sums); ranges that differ, interleaved with them, keep loops of their own.
    let fused = [
        "sum(cumsum(x)^2) - prod(1 + cumsum(x*x)/(j + 1)) + sum(x)/D",
        "sum(x[j-1]*x) + sum(cos(x)) * prod(x[j-1] - x/2) - sum(select(j == D-1, x, 0))",
    ];
    for src in fused {
        let x = Expr::parse(src).unwrap();
        for dim in [2u32, 7, 128] {
            let pts = points(dim as usize * 300, 3.0, 41 + dim as u64);
            for p in [Precision::F32, Precision::F64] {
                let g = eval_gpu(e, &x, p, dim, &pts);
                let c = eval_cpu(&x, p, dim, &pts);
                for (k, (a, b)) in g.iter().zip(&c).enumerate() {
                    assert!(
                        same_value(*a, *b),
                        "{src} D={dim} {p:?} at point {k}: gpu {a:e} cpu {b:e}"
                    );
                }
                checked += c.len();
            }
        }
    }
    println!("  {checked} expression values equal to the CPU evaluator's bit for bit");
}

/// A job minimising built-in `f` written as an expression.
#[allow(clippy::too_many_arguments)]
fn expr_job(
    f: Function,
    dim: u32,
    pop: u32,
    gens: u32,
    s: Strategy,
    c: Crossover,
    b: BoundPolicy,
    p: Precision,
    seed: u64,
) -> Job {
    let info = gpude::FunctionInfo::of(f);
    let o = Objective::expr(&expression(f), Some(0.0)).expect("parses");
    let mut builder = Job::builder_for(o, dim)
        .domain(info.domain.0, info.domain.1)
        .strategy(s);
    if s.crosses() {
        builder = builder.crossover(c).f(0.5).cr(0.7);
    }
    builder
        .pop(pop)
        .generations(gens)
        .bounds(b)
        .precision(p)
        .seed(seed)
        .build()
        .expect("valid job")
}

fn assert_same_population(g: &FinalPopulation, c: &FinalPopulation, what: &str) {
    assert_eq!(g.x.len(), c.x.len(), "{what}");
    let sx =
        g.x.iter()
            .zip(&c.x)
            .filter(|(a, b)| same_value(**a, **b))
            .count();
    let sf = g
        .fit
        .iter()
        .zip(&c.fit)
        .filter(|(a, b)| same_value(**a, **b))
        .count();
    assert!(
        sx == c.x.len() && sf == c.fit.len(),
        "{what}: {sx}/{} components and {sf}/{} values equal",
        c.x.len(),
        c.fit.len()
    );
}

/// The eight built-ins written as expressions, several strategies, crossovers, bound
/// policies and sizes, both precisions: the GPU's final population and whole runs
/// (best, history, generations) are the CPU engine's, bit for bit.
fn expression_runs_match_cpu(e: &CudaEngine) {
    let strategies = [
        (Strategy::Thesis, Crossover::Binomial, BoundPolicy::InitOnly),
        (Strategy::Rand1, Crossover::Binomial, BoundPolicy::Clip),
        (
            Strategy::Best2,
            Crossover::Exponential,
            BoundPolicy::Reflect,
        ),
        (
            Strategy::CurrentToBest1,
            Crossover::Binomial,
            BoundPolicy::Midpoint,
        ),
        (
            Strategy::Rand2,
            Crossover::Exponential,
            BoundPolicy::Resample,
        ),
        (Strategy::Best1, Crossover::Binomial, BoundPolicy::InitOnly),
    ];
    let dims = [3u32, 7, 16, 33, 64, 128, 130];
    let mut runs = 0;
    for (k, f) in Function::ALL.into_iter().enumerate() {
        for p in [Precision::F32, Precision::F64] {
            for m in 0..2 {
                let (s, c, b) = strategies[(k + 3 * m) % strategies.len()];
                let dim = dims[(k + m) % dims.len()].max(2);
                // Populations that fill a block partly, and rounds with idle passes.
                let pop = [40u32, 100][m];
                for gens in [1u32, 4] {
                    let j = expr_job(f, dim, pop, gens, s, c, b, p, 500 + k as u64);
                    let cpu = cpu_population(&j);
                    for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                        let (_, gpu) = e.run_with_population(&j, mode).expect("gpu run");
                        let what = format!(
                            "{f:?} {s:?}/{c:?}/{b:?} D={dim} Np={pop} {p:?} gens={gens} {mode:?}"
                        );
                        assert_same_population(&gpu, &cpu, &what);
                        runs += 1;
                    }
                }
            }
            // A whole run with history, as the CPU engine gives it.
            let (s, c, b) = strategies[k % strategies.len()];
            let j = expr_job(f, 20, 64, 40, s, c, b, p, 77 + k as u64).with_history(true);
            let cr = match p {
                Precision::F32 => cpu::run::<f32>(&j, None),
                Precision::F64 => cpu::run::<f64>(&j, None),
            }
            .expect("cpu run");
            for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                let g = e.run(&j, mode).expect("gpu run");
                let what = format!("{f:?} {s:?} {p:?} run {mode:?}");
                assert_eq!(g.best_f.to_bits(), cr.best_f.to_bits(), "{what}");
                assert_eq!(g.best_x, cr.best_x, "{what}");
                assert_eq!(g.generations, cr.generations, "{what}");
                let gh = g.history.expect("history");
                let ch = cr.history.as_ref().expect("history");
                assert!(
                    gh.iter().zip(ch).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{what}"
                );
                runs += 1;
            }
        }
    }
    println!("  {runs} expression runs equal to the CPU engine's bit for bit");
}

/// Many expression jobs in one batch (a block each, one link), beside built-in jobs:
/// each result is the CPU engine's; a large population over the whole GPU too.
fn expression_batch_matches_cpu(e: &CudaEngine) {
    let mut jobs = Vec::new();
    for seed in 0..8u64 {
        jobs.push(expr_job(
            Function::Griewank,
            128,
            256,
            30,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
            seed,
        ));
        jobs.push(
            expr_job(
                Function::Rastrigin,
                30,
                64,
                25,
                Strategy::Rand1,
                Crossover::Binomial,
                BoundPolicy::Clip,
                Precision::F64,
                seed,
            )
            .with_stream(seed as u32),
        );
        jobs.push(job(
            Function::Sphere,
            10,
            64,
            20,
            Strategy::Best1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            Precision::F32,
            seed,
        ));
    }
    let gpu = e.run_batch(&jobs).expect("batch");
    for (j, g) in jobs.iter().zip(&gpu) {
        let c = match j.precision() {
            Precision::F32 => cpu::run::<f32>(j, None),
            Precision::F64 => cpu::run::<f64>(j, None),
        }
        .expect("cpu run");
        let what = format!("{} seed {}", j.objective().name(), j.seed());
        assert_eq!(g.best_f.to_bits(), c.best_f.to_bits(), "{what}");
        assert_eq!(g.best_x, c.best_x, "{what}");
        assert_eq!(g.generations, c.generations, "{what}");
    }
    // A second batch reuses the linked kernels: no link in the time.
    let t = std::time::Instant::now();
    e.run_batch(&jobs[..3]).expect("batch");
    println!(
        "  {} jobs equal to the CPU engine's; a second batch of 3 in {:.1} ms",
        jobs.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    // One population of 8192 over the whole GPU (`auto` picks grid), several blocks.
    let big = expr_job(
        Function::Ackley,
        64,
        8192,
        20,
        Strategy::Rand1,
        Crossover::Exponential,
        BoundPolicy::Reflect,
        Precision::F32,
        5,
    );
    assert_eq!(e.auto_mode(&big), Mode::Grid);
    let c = cpu::run::<f32>(&big, None).expect("cpu run");
    for mode in [Mode::Grid, Mode::Steps] {
        let g = e.run(&big, mode).expect("gpu run");
        assert_eq!(g.best_f.to_bits(), c.best_f.to_bits(), "{mode:?}");
        assert_eq!(g.best_x, c.best_x, "{mode:?}");
    }
}

/// The expressions' values against the built-ins' on the GPU (textbook formulas, points
/// over the usual domain): within 8 + D/16 ulps of the scale (the sum of the terms'
/// magnitudes, `gpude::expr::builtins::magnitude`), as `expr/tests/builtins.rs` checks
/// on the CPU.
fn expressions_agree_with_builtins(e: &CudaEngine) {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    for f in Function::ALL {
        let x = Expr::parse(&expression(f)).unwrap();
        let magnitude = Expr::parse(&gpude::expr::builtins::magnitude(f)).unwrap();
        let (lo, hi) = gpude::FunctionInfo::of(f).domain;
        for dim in [2u32, 13, 64, 128] {
            let pts: Vec<f64> = (0..dim as usize * 200)
                .map(|_| lo + next() * (hi - lo))
                .collect();
            let ulps = 8.0 + dim as f64 / 16.0;
            for p in [Precision::F32, Precision::F64] {
                let g = eval_gpu(e, &x, p, dim, &pts);
                let b = match p {
                    Precision::F32 => e.evaluate::<f32>(f, Formula::Textbook, dim, &pts),
                    Precision::F64 => e.evaluate::<f64>(f, Formula::Textbook, dim, &pts),
                }
                .expect("evaluate");
                let eps = match p {
                    Precision::F32 => f32::EPSILON as f64,
                    Precision::F64 => f64::EPSILON,
                };
                let mut worst = 0.0f64;
                for (k, (a, w)) in g.iter().zip(&b).enumerate() {
                    if a == w {
                        continue;
                    }
                    let row = &pts[k * dim as usize..(k + 1) * dim as usize];
                    let r: Vec<f64> = row.iter().map(|&v| p_round(v, p)).collect();
                    let err = (a - w).abs() / (magnitude.eval(&r) * eps);
                    worst = worst.max(err);
                    assert!(
                        err <= ulps,
                        "{f:?} D={dim} {p:?}: expression {a:e}, built-in {w:e} ({err:.1} ulps)"
                    );
                }
                println!("  {f:?} D={dim} {p:?}: worst {worst:.2} ulps of the scale");
            }
        }
    }
}

/// `v` rounded to the precision (the point the GPU evaluated).
fn p_round(v: f64, p: Precision) -> f64 {
    match p {
        Precision::F32 => v as f32 as f64,
        Precision::F64 => v,
    }
}

/// The example crate's separable Rosenbrock on the CPU (`examples/objective-rust`, which
/// this workspace does not build): the same terms in the same order as its PTX.
struct SeparableRosenbrock;

macro_rules! separable_rosenbrock {
    ($t:ty) => {
        impl gpude::device::separable::Separable<$t> for SeparableRosenbrock {
            fn flags(&self) -> gpude::device::separable::SepFlags {
                gpude::device::separable::SepFlags {
                    prev: true,
                    ..Default::default()
                }
            }
            fn a(&self, mut acc: $t, v: [$t; 4], prev: $t, _b: $t, j0: u32, n: u32, _d: u32) -> $t {
                let mut q = prev;
                for (k, &x) in v.iter().enumerate().take(n as usize) {
                    if j0 + k as u32 > 0 {
                        let u = 1.0 - q;
                        let r = x - q * q;
                        acc += u * u + 100.0 * (r * r);
                    }
                    q = x;
                }
                acc
            }
            fn b(&self, acc: $t, _v: [$t; 4], _p: $t, _b: $t, _j0: u32, _n: u32, _d: u32) -> $t {
                acc
            }
            fn finish(&self, a: $t, _b: $t, _d: u32) -> $t {
                a
            }
        }
    };
}
separable_rosenbrock!(f32);
separable_rosenbrock!(f64);

/// The separable form of a PTX objective (the example crate's Rosenbrock) runs in the
/// separable kernels: in every layout (batch, batch under control, grid, steps), f32 and
/// f64, classic and thesis strategies, its runs equal the CPU engine's with the same
/// form's CPU code bit for bit, and the built-in Rosenbrock's in the textbook formula
/// (the same terms in the same order).
fn separable_objectives_match_cpu(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    use gpude::{Formula, SeparableCpu};
    let Some(text) = example_ptx() else {
        println!(
            "  SKIPPED: no gpu-bundle/objective-example.ptx and no $GPUDE_OBJECTIVE_PTX \
             (scripts/gpu-bundle.sh builds it)"
        );
        return;
    };
    let code = PtxCode::parse(text).expect("a PTX objective");
    for p in [Precision::F32, Precision::F64] {
        assert!(
            code.separable(p).is_some_and(|f| f.prev),
            "the example's PTX defines no separable form in {p:?}: rebuild it"
        );
    }
    let job = |o: Objective, p: Precision, s: Strategy, dim: u32| {
        let mut b = Job::builder_for(o, dim)
            .domain(-5.0, 5.0)
            .strategy(s)
            .pop(96)
            .generations(30)
            .precision(p)
            .formula(Formula::Textbook)
            .seed(23);
        if s.crosses() {
            b = b.bounds(BoundPolicy::Clip);
        }
        b.build().expect("valid job")
    };
    let observe = |_: usize, _: u32, _: f64| Flow::Continue;
    let mut runs = 0;
    // D = 24 fits one round of a group of 8 lanes; D = 300 takes three rounds of 32.
    for dim in [24u32, 300] {
        for p in [Precision::F32, Precision::F64] {
            for s in [Strategy::Thesis, Strategy::Rand1] {
                let sep = Objective::ptx_separable(
                    "rosenbrock",
                    Some(0.0),
                    code.clone(),
                    SeparableCpu {
                        f32: Box::new(SeparableRosenbrock),
                        f64: Box::new(SeparableRosenbrock),
                    },
                )
                .expect("a separable objective");
                let a = job(sep, p, s, dim);
                let b = job(Objective::Builtin(Function::Rosenbrock), p, s, dim);
                let want = cpu_run(&a).expect("CPU run");
                let w = format!("D = {dim} {p:?} {s:?}");
                let builtin = cpu_run(&b).expect("CPU run");
                assert_eq!(want.best_f.to_bits(), builtin.best_f.to_bits(), "CPU {w}");
                assert_eq!(want.best_x, builtin.best_x, "CPU {w}");
                for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                    let got = e.run(&a, mode).expect("separable run");
                    assert_eq!(got.best_f.to_bits(), want.best_f.to_bits(), "{w} {mode:?}");
                    assert_eq!(got.best_x, want.best_x, "{w} {mode:?}");
                    assert_eq!(got.generations, want.generations, "{w} {mode:?}");
                    runs += 1;
                }
                let mut watch = Watch {
                    observer: Some(&observe),
                    ..Watch::default()
                };
                let ctl = e
                    .run_entries(vec![Entry::Pending(a.clone())], Mode::Batch, &mut watch)
                    .expect("controlled run");
                let got = ctl[0].result.as_ref().expect("a result");
                assert_eq!(
                    got.best_f.to_bits(),
                    want.best_f.to_bits(),
                    "{w} controlled"
                );
                assert_eq!(got.best_x, want.best_x, "{w} controlled");
                let gpu_builtin = e.run(&b, Mode::Batch).expect("built-in run");
                assert_eq!(
                    gpu_builtin.best_f.to_bits(),
                    want.best_f.to_bits(),
                    "{w} built-in"
                );
                runs += 2;
            }
        }
    }
    println!("  {runs} separable runs equal to the CPU engine's bit for bit");
}

/// Where the example objective's PTX is: `$GPUDE_OBJECTIVE_PTX`, else the bundle's copy.
fn example_ptx() -> Option<String> {
    let path = std::env::var("GPUDE_OBJECTIVE_PTX")
        .unwrap_or_else(|_| "gpu-bundle/objective-example.ptx".into());
    std::fs::read_to_string(path).ok()
}

/// PTX objectives: an expression's PTX given as a user's module, and the example crate's
/// Rosenbrock (`examples/objective-rust`), run as the expression of the same function
/// does, bit for bit, in every layout; a module that does not link, and a precision the
/// module lacks, are clear errors.
fn ptx_objectives_match_expressions(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    let src = expression(Function::Rosenbrock);
    let ex = Expr::parse(&src).unwrap();
    let job = |o: Objective, p: Precision, s: Strategy| {
        let mut b = Job::builder_for(o, 24)
            .domain(-5.0, 5.0)
            .strategy(s)
            .pop(96)
            .generations(30)
            .precision(p)
            .seed(21);
        if s.crosses() {
            b = b.bounds(BoundPolicy::Clip);
        }
        b.build().expect("valid job")
    };
    // Each module runs as its reference does: a separable module as the expression
    // (which the engines evaluate in its separable form, lane by lane), a whole-vector
    // module as the expression's whole-vector module (its terms in ascending j).
    let sep = ex
        .separable()
        .expect("Rosenbrock's expression is separable");
    let mut modules: Vec<(&str, Option<String>, bool)> = vec![
        ("expression's separable module", None, true),
        ("expression's whole-vector module", None, false),
    ];
    match example_ptx() {
        Some(text) => {
            modules.push(("example", Some(text.clone()), true));
            modules.push((
                "example's whole-vector form",
                Some(text.replace("gpude_sep_", "unused_sep_")),
                false,
            ));
        }
        None => println!(
            "  SKIPPED the example crate: no gpu-bundle/objective-example.ptx and no \
             $GPUDE_OBJECTIVE_PTX (scripts/gpu-bundle.sh builds it)"
        ),
    }
    let mut runs = 0;
    for (what, text, separable) in &modules {
        for p in [Precision::F32, Precision::F64] {
            let ep = match p {
                Precision::F32 => gpude::expr::Precision::F32,
                Precision::F64 => gpude::expr::Precision::F64,
            };
            let text = text
                .clone()
                .unwrap_or_else(|| if *separable { sep.ptx(ep) } else { ex.ptx(ep) });
            let code = PtxCode::parse(text).expect("a PTX objective");
            assert_eq!(
                code.separable(p).is_some(),
                *separable,
                "{what}: the engine sees the form it should"
            );
            for s in [Strategy::Thesis, Strategy::Rand1] {
                let a = job(
                    Objective::ptx(*what, Some(0.0), code.clone()).unwrap(),
                    p,
                    s,
                );
                let b = if *separable {
                    job(Objective::expr(&src, Some(0.0)).unwrap(), p, s)
                } else {
                    let whole = PtxCode::parse(ex.ptx(ep)).expect("the expression's module");
                    job(Objective::ptx("whole", Some(0.0), whole).unwrap(), p, s)
                };
                let want = e.run(&b, Mode::Batch).expect("reference run");
                for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                    let got = e.run(&a, mode).expect("PTX run");
                    let w = format!("{what} {p:?} {s:?} {mode:?}");
                    assert_eq!(got.best_f.to_bits(), want.best_f.to_bits(), "{w}");
                    assert_eq!(got.best_x, want.best_x, "{w}");
                    // Nothing on the CPU evaluates PTX alone: the search's error stands.
                    assert_eq!(got.verified_error.to_bits(), got.error.to_bits(), "{w}");
                    runs += 1;
                }
            }
        }
    }
    // An expression's whole-vector module generated for one dimension (a table of its
    // per-j values) runs jobs of that dimension from the table and jobs of any other
    // computing them: both as the module without a table.
    let src = expression(Function::Griewank);
    let ex = Expr::parse(&src).unwrap();
    for p in [Precision::F32, Precision::F64] {
        let ep = match p {
            Precision::F32 => gpude::expr::Precision::F32,
            Precision::F64 => gpude::expr::Precision::F64,
        };
        let plain = PtxCode::parse(ex.ptx(ep)).expect("a PTX objective");
        let b = job(
            Objective::ptx("griewank", Some(0.0), plain).unwrap(),
            p,
            Strategy::Thesis,
        );
        let want = e.run(&b, Mode::Batch).expect("whole-vector run");
        for table_dim in [24, 7] {
            let code = PtxCode::parse(ex.ptx_for_dim(ep, table_dim)).expect("a PTX objective");
            let a = job(
                Objective::ptx("griewank", Some(0.0), code).unwrap(),
                p,
                Strategy::Thesis,
            );
            for mode in [Mode::Batch, Mode::Grid] {
                let got = e.run(&a, mode).expect("PTX run");
                let w = format!("griewank, table for D = {table_dim}, {p:?} {mode:?}");
                assert_eq!(got.best_f.to_bits(), want.best_f.to_bits(), "{w}");
                assert_eq!(got.best_x, want.best_x, "{w}");
                runs += 1;
            }
        }
    }
    println!("  {runs} PTX objective runs equal to the expression's bit for bit");
    // A module calling a function nobody defines: the link fails and says what is missing.
    let broken = Expr::parse("sum(cos(x))")
        .unwrap()
        .ptx(gpude::expr::Precision::F32)
        .replace("gpude_expr_cos_f32", "gpude_expr_missing_f32");
    let o = Objective::ptx("broken", None, PtxCode::parse(broken).unwrap()).unwrap();
    let err = e
        .run(&job(o, Precision::F32, Strategy::Thesis), Mode::Batch)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("linking") && err.contains("gpude_expr_missing_f32"),
        "{err}"
    );
    // f32 code, an f64 job.
    let code = PtxCode::parse(ex.ptx(gpude::expr::Precision::F32)).unwrap();
    let o = Objective::ptx("f32 only", None, code).unwrap();
    let err = e
        .run(&job(o, Precision::F64, Strategy::Thesis), Mode::Batch)
        .unwrap_err()
        .to_string();
    assert!(err.contains("precision = f64"), "{err}");
}

/// A thesis job with variant `v` (Np = 64).
fn variant_job(f: Function, dim: u32, gens: u32, p: Precision, v: ThesisVariant, seed: u64) -> Job {
    Job::builder(f, dim)
        .pop(64)
        .generations(gens)
        .precision(p)
        .seed(seed)
        .history(true)
        .thesis_variant(v)
        .build()
        .expect("valid job")
}

/// Every thesis variant (all 64 combinations of its fields) in every layout: the final
/// population, its values and the run's generation count are the CPU engine's, bit for
/// bit. Two problems: Rosenbrock D = 30 in f32 (one round of chunks) and Griewank
/// D = 130 in f64 (several rounds, a partial chunk); the single alternatives also on
/// Rosenbrock D = 128 in f64 and Ackley D = 64 in f32.
fn thesis_variants_match_cpu(e: &CudaEngine) {
    let mut cases = Vec::new();
    for b in 0..64u32 {
        let v = ThesisVariant::from_bits(b).expect("a variant");
        cases.push((v, Function::Rosenbrock, 30, Precision::F32));
        cases.push((v, Function::Griewank, 130, Precision::F64));
        if b.count_ones() == 1 || b == 3 << 3 {
            cases.push((v, Function::Rosenbrock, 128, Precision::F64));
            cases.push((v, Function::Ackley, 64, Precision::F32));
        }
    }
    for (k, &(v, f, dim, p)) in cases.iter().enumerate() {
        let j = variant_job(f, dim, 6, p, v, 500 + k as u64);
        let what = format!(
            "{} {f:?} D={dim} {p:?}",
            gpude::host::config::variant_name(v)
        );
        let cpu_pop = cpu_population(&j);
        let c = match p {
            Precision::F32 => cpu::run::<f32>(&j, None).expect("cpu run"),
            Precision::F64 => cpu::run::<f64>(&j, None).expect("cpu run"),
        };
        assert_eq!(c.generations, 6 + v.extra_generations(), "{what}");
        for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
            let (r, gpu) = e.run_with_population(&j, mode).expect("gpu run");
            let (wx, sx) = compare(&gpu.x, &cpu_pop.x);
            let (wf, sf) = compare(&gpu.fit, &cpu_pop.fit);
            assert!(
                sx == gpu.x.len() && sf == gpu.fit.len(),
                "{what} {mode:?}: {sx}/{} components and {sf}/{} values equal (worst rel {wx:e}, {wf:e})",
                gpu.x.len(),
                gpu.fit.len()
            );
            assert_eq!(r.generations, c.generations, "{what} {mode:?}");
            assert_eq!(r.best_f.to_bits(), c.best_f.to_bits(), "{what} {mode:?}");
            assert_eq!(r.best_x, c.best_x, "{what} {mode:?}");
            assert_eq!(r.history, c.history, "{what} {mode:?}");
        }
    }
    println!(
        "  {} variant cases × 3 layouts equal bit for bit",
        cases.len()
    );
}

/// The thesis variants with a user's objective (the `thesis_variant` kernels of the
/// separable and external families): each single alternative and one combination, an
/// expression with a separable form and one without, f32 D = 30 and f64 D = 70, every
/// layout: the CPU engine's bits. A PTX module (the whole-vector one of an expression)
/// runs as its expression.
fn thesis_variants_of_user_objectives_match_cpu(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    let sources = [
        "sum(x^2 - 10*cos(2*pi*x)) + 10*D",
        "sum(x^2) + sum(abs(x)) * prod(cos(x))",
    ];
    let mut variants: Vec<u32> = (0..6).map(|k| 1 << k).collect();
    variants.push(3 << 3);
    let job = |o: &Objective, dim: u32, p: Precision, v: ThesisVariant, seed: u64| {
        Job::builder_for(o.clone(), dim)
            .domain(-5.0, 5.0)
            .pop(64)
            .generations(6)
            .precision(p)
            .seed(seed)
            .history(true)
            .thesis_variant(v)
            .build()
            .expect("valid job")
    };
    let mut runs = 0;
    for src in sources {
        let o = Objective::expr(src, None).expect("an expression");
        for &b in &variants {
            let v = ThesisVariant::from_bits(b).expect("a variant");
            for (dim, p) in [(30, Precision::F32), (70, Precision::F64)] {
                let j = job(&o, dim, p, v, 900 + b as u64);
                let what = format!(
                    "{src} {} D={dim} {p:?}",
                    gpude::host::config::variant_name(v)
                );
                let cpu_pop = cpu_population(&j);
                let c = cpu_run(&j).expect("cpu run");
                for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                    let (r, gpu) = e.run_with_population(&j, mode).expect("gpu run");
                    assert_same_population(&gpu, &cpu_pop, &format!("{what} {mode:?}"));
                    assert_same_run(&r, &c, &format!("{what} {mode:?}"));
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 2 * 7 * 2 * 3);
    // A PTX module with a variant runs as its expression does.
    let src = sources[1];
    let v = ThesisVariant::from_bits(1 << 2).expect("a variant");
    for (ep, p) in [
        (gpude::expr::Precision::F32, Precision::F32),
        (gpude::expr::Precision::F64, Precision::F64),
    ] {
        let code = PtxCode::parse(Expr::parse(src).unwrap().ptx(ep)).expect("a module");
        let a = job(&Objective::ptx("whole", None, code).unwrap(), 30, p, v, 5);
        let b = job(&Objective::expr(src, None).unwrap(), 30, p, v, 5);
        for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
            let (ra, pa) = e.run_with_population(&a, mode).expect("PTX run");
            let (rb, pb) = e.run_with_population(&b, mode).expect("expression run");
            assert_same_population(&pa, &pb, &format!("PTX {p:?} {mode:?}"));
            assert_eq!(
                ra.best_f.to_bits(),
                rb.best_f.to_bits(),
                "PTX {p:?} {mode:?}"
            );
        }
    }
    println!("  {runs} variant runs of expressions equal the CPU's bit for bit");
}

/// Jobs of several variants (and the default) in one batch: each launch group keeps its
/// own variant, and every run is the CPU engine's.
fn thesis_variant_batch_matches_cpu(e: &CudaEngine) {
    let names = [
        "default",
        "indices=rejection",
        "lambda=closed-open",
        "lambda-draw=per-individual",
        "mutation=fma",
        "mutation=fma-inner",
        "mutation=from-best",
        "generations=plus-one",
    ];
    let mut jobs = Vec::new();
    for name in names {
        let v = gpude::host::config::parse_variant(name).expect("a variant");
        for stream in 0..3 {
            jobs.push(
                variant_job(Function::Rosenbrock, 40, 25, Precision::F32, v, 77)
                    .with_stream(stream),
            );
        }
    }
    let gpu = e.run_batch(&jobs).expect("gpu batch");
    assert_eq!(gpu.len(), jobs.len());
    for (j, g) in jobs.iter().zip(&gpu) {
        let c = cpu::run::<f32>(j, None).expect("cpu run");
        let what = format!(
            "{} stream {}",
            gpude::host::config::variant_name(j.thesis_variant()),
            j.stream()
        );
        assert_eq!(g.best_f.to_bits(), c.best_f.to_bits(), "{what}");
        assert_eq!(g.best_x, c.best_x, "{what}");
        assert_eq!(g.generations, c.generations, "{what}");
        assert_eq!(g.history, c.history, "{what}");
    }
    // Variants that change the trials end at other points than the default on the same
    // stream (jobs 0 … 2).
    let mut differ = 0;
    for (j, g) in jobs.iter().zip(&gpu).skip(3) {
        if j.thesis_variant().changes_trials() {
            let base = &gpu[j.stream() as usize];
            // The best points, not their values: two runs can end on equal f32 values
            // at different points (mutation=fma-inner and from-best do on stream 0).
            assert_ne!(g.best_x, base.best_x, "{:?}", j.thesis_variant());
            differ += 1;
        }
    }
    assert_eq!(differ, 18);
}

/// An adaptive job of a user's objective: D = 10 in [-5, 5], a budget whose last
/// generation is partial, history on.
fn user_adaptive_job(o: &Objective, s: Strategy, p: Precision, stream: u32) -> Job {
    Job::builder_for(o.clone(), 10)
        .domain(-5.0, 5.0)
        .strategy(s)
        .max_evaluations(2_345)
        .precision(p)
        .seed(2017)
        .stream(stream)
        .history(true)
        .build()
        .expect("valid job")
}

/// Adaptive strategies with a user's objective on the GPU: an expression with a
/// separable form (the adaptive `separable` kernels), one without (the `external`
/// kernels); every strategy, both precisions, the batch layout (two streams in one
/// launch) and the grid layout: the CPU engine's bits (best value and point,
/// generations, evaluations, history, the final population). PTX modules (an
/// expression's modules of both forms, and the example crate's) run as their
/// expressions do.
fn adaptive_user_objectives_match_cpu(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    let sep_src = "sum(x^2 - 10*cos(2*pi*x)) + 10*D";
    let whole_src = "sum(x^2) + sum(abs(x)) * prod(cos(x))";
    let sep = Objective::expr(sep_src, Some(0.0)).expect("an expression");
    let whole = Objective::expr(whole_src, None).expect("an expression");
    let mut compared = 0;
    for p in [Precision::F64, Precision::F32] {
        assert!(sep.separable_flags(p).is_some(), "{sep_src} is separable");
        assert!(whole.separable_flags(p).is_none(), "{whole_src} is not");
        for o in [&sep, &whole] {
            for s in Strategy::ADAPTIVE {
                let jobs: Vec<Job> = (0..2).map(|k| user_adaptive_job(o, s, p, k)).collect();
                let refs: Vec<&Job> = jobs.iter().collect();
                let batch = e.run_adaptive(&refs, Mode::Batch).expect("gpu runs");
                for (job, (r, pop)) in jobs.iter().zip(&batch) {
                    let (cr, cx, cf) = cpu_adaptive(job);
                    let what = format!("{s:?} {} {p:?} stream {}", o.name(), job.stream());
                    assert_eq!(r.termination, cr.termination, "{what}");
                    assert_eq!(
                        adaptive_bits(r, &pop.x, &pop.fit),
                        adaptive_bits(&cr, &cx, &cf),
                        "{what}: the GPU run differs from the CPU run"
                    );
                    compared += 1;
                }
                if matches!(s, Strategy::Jde | Strategy::Jso) {
                    let (r, pop) = e
                        .run_with_population(&jobs[1], Mode::Grid)
                        .expect("grid run");
                    let (cr, cx, cf) = cpu_adaptive(&jobs[1]);
                    assert_eq!(
                        adaptive_bits(&r, &pop.x, &pop.fit),
                        adaptive_bits(&cr, &cx, &cf),
                        "{s:?} {} {p:?} grid: the GPU run differs from the CPU run",
                        o.name()
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 2 * 2 * (2 * 5 + 2));
    // PTX modules run as their expressions: the separable one's module, the other's
    // whole-vector module, and the example crate's Rosenbrock (both forms; the engine
    // takes the separable one) as Rosenbrock's expression.
    let ros = expression(Function::Rosenbrock);
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    for p in [gpude::expr::Precision::F32, gpude::expr::Precision::F64] {
        let sx = Expr::parse(sep_src).unwrap();
        let sm = sx.separable().expect("separable").ptx(p);
        pairs.push(("separable module".into(), sm, sep_src.into()));
        let wm = Expr::parse(whole_src).unwrap().ptx(p);
        pairs.push(("whole-vector module".into(), wm, whole_src.into()));
    }
    match example_ptx() {
        Some(text) => pairs.push(("example".into(), text, ros.clone())),
        None => println!(
            "  SKIPPED the example crate: no gpu-bundle/objective-example.ptx and no \
             $GPUDE_OBJECTIVE_PTX (scripts/gpu-bundle.sh builds it)"
        ),
    }
    let mut runs = 0;
    for (what, text, src) in &pairs {
        let code = PtxCode::parse(text.clone()).expect("a PTX objective");
        let ptx = Objective::ptx(what.as_str(), None, code).unwrap();
        let reference = Objective::expr(src, None).unwrap();
        for p in [Precision::F32, Precision::F64] {
            if ptx.ptx_code().is_some_and(|c| !c.defines(p)) {
                continue;
            }
            for (s, mode) in [(Strategy::LShade, Mode::Batch), (Strategy::Jso, Mode::Grid)] {
                let a = user_adaptive_job(&ptx, s, p, 0);
                let b = user_adaptive_job(&reference, s, p, 0);
                let (ra, pa) = e.run_with_population(&a, mode).expect("PTX run");
                let (rb, pb) = e.run_with_population(&b, mode).expect("expression run");
                let w = format!("{what} {p:?} {s:?} {mode:?}");
                assert_eq!(
                    adaptive_bits(&ra, &pa.x, &pa.fit),
                    adaptive_bits(&rb, &pb.x, &pb.fit),
                    "{w}: the PTX objective's run differs from its expression's"
                );
                runs += 1;
            }
        }
    }
    assert!(runs >= 8, "{runs} PTX runs");
}

/// Adaptive strategies with a host callback on the GPU (the adaptive kernels' host
/// phases: the DE stages on the GPU, the callback on the host): every strategy, both
/// precisions, the CPU engine's bits, the same calls with the same row counts; a
/// batch mixing a callback with a built-in function; a callback that panics is the
/// CPU engine's error; the observer and the stop flag end the run where the CPU
/// engine's end.
fn adaptive_host_callbacks_match_cpu(e: &CudaEngine) {
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    let rows_seen = |log: Arc<Mutex<Vec<usize>>>| {
        move |xs: &[f64], dim: usize| {
            log.lock().unwrap().push(xs.len() / dim);
            callback_values(xs, dim)
        }
    };
    let mut compared = 0;
    for p in [Precision::F64, Precision::F32] {
        for s in Strategy::ADAPTIVE {
            let (gl, cl) = (
                Arc::new(Mutex::new(Vec::new())),
                Arc::new(Mutex::new(Vec::new())),
            );
            let og = Objective::callback("weighted", None, rows_seen(gl.clone())).unwrap();
            let oc = Objective::callback("weighted", None, rows_seen(cl.clone())).unwrap();
            let gj = user_adaptive_job(&og, s, p, 1);
            let cj = user_adaptive_job(&oc, s, p, 1);
            let (r, pop) = e.run_with_population(&gj, Mode::Auto).expect("gpu run");
            let (cr, cx, cf) = cpu_adaptive(&cj);
            let what = format!("{s:?} {p:?}");
            assert_eq!(r.backend, "cuda", "{what}");
            assert_eq!(r.termination, Termination::MaxEvaluations, "{what}");
            assert_eq!(
                adaptive_bits(&r, &pop.x, &pop.fit),
                adaptive_bits(&cr, &cx, &cf),
                "{what}: the GPU run differs from the CPU run"
            );
            let (g, c) = (gl.lock().unwrap().clone(), cl.lock().unwrap().clone());
            assert_eq!(g, c, "{what}: the batches the callback saw");
            // The search's batches, then the best point's verified value (one row).
            assert_eq!(g.last(), Some(&1), "{what}");
            assert_eq!(
                g[..g.len() - 1].iter().sum::<usize>() as u64,
                r.evaluations,
                "{what}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 10);
    // A batch mixing a callback job with a built-in function's adaptive job.
    let o = Objective::callback("weighted", None, callback_values).unwrap();
    let jobs = vec![
        user_adaptive_job(&o, Strategy::Shade, Precision::F64, 0),
        Job::builder(Function::Rastrigin, 10)
            .strategy(Strategy::Shade)
            .max_evaluations(2_345)
            .seed(2017)
            .history(true)
            .build()
            .unwrap(),
    ];
    let got = e.run_batch(&jobs).expect("batch");
    for (j, g) in jobs.iter().zip(&got) {
        let (cr, _, _) = cpu_adaptive(j);
        assert_eq!(
            adaptive_bits(g, &[], &[]),
            adaptive_bits(&cr, &[], &[]),
            "{}",
            j.objective().name()
        );
    }
    // A panic in the third batch (generation 2): the CPU engine's error, no call after.
    for p in [Precision::F32, Precision::F64] {
        let calls = Arc::new(AtomicUsize::new(0));
        let c2 = calls.clone();
        let o = Objective::callback("flaky", None, move |xs: &[f64], dim: usize| {
            if c2.fetch_add(1, Ordering::SeqCst) == 2 {
                panic!("broken at call 2");
            }
            callback_values(xs, dim)
        })
        .unwrap();
        let err = e
            .run(&user_adaptive_job(&o, Strategy::Jso, p, 0), Mode::Auto)
            .unwrap_err();
        assert!(
            matches!(err, Error::Objective { .. }) && err.to_string().contains("panicked"),
            "{p:?}: {err}"
        );
        assert_eq!(
            calls.load(Ordering::SeqCst),
            3,
            "{p:?}: no call after the failure"
        );
    }
    // The observer stops after generation 7, on both engines alike.
    let o = Objective::callback("weighted", None, callback_values).unwrap();
    let j = user_adaptive_job(&o, Strategy::LShade, Precision::F64, 0);
    let stop_at_7 = |g: u32, _: f64| if g >= 7 { Flow::Stop } else { Flow::Continue };
    let mut c = Control {
        observer: Some(&stop_at_7),
        ..Control::default()
    };
    let g = e
        .run_controlled(&j, Mode::Auto, &mut c, Reporting::default())
        .expect("gpu run");
    let mut c = Control {
        observer: Some(&stop_at_7),
        ..Control::default()
    };
    let cpu = cpu::run_controlled(&j, &mut c);
    assert_eq!(g.result.generations, 7);
    assert_eq!(g.result.termination, Termination::Stopped);
    assert_eq!(
        adaptive_bits(&g.result, &[], &[]),
        adaptive_bits(&cpu.result, &[], &[])
    );
    assert_eq!(state_bits(&g.checkpoint), state_bits(&cpu.checkpoint));
    // A stop flag set before the run: the initial population only.
    let flag = AtomicBool::new(true);
    let mut c = Control {
        stop: Some(&flag),
        ..Control::default()
    };
    let g = e
        .run_controlled(&j, Mode::Auto, &mut c, Reporting::default())
        .expect("gpu run");
    assert_eq!(
        (g.result.generations, g.result.evaluations),
        (0, j.pop() as u64)
    );
}

/// A batch callback (f64, row-major): weighted squares, a sine and a coupling term, so
/// that every component and its neighbour matter.
fn callback_values(xs: &[f64], dim: usize) -> Vec<f64> {
    xs.chunks(dim)
        .map(|x| {
            let mut v = 0.0;
            for (j, &c) in x.iter().enumerate() {
                v += (j as f64 + 1.0) * c * c + 0.1 * (3.0 * c).sin();
                if j + 1 < x.len() {
                    v += 0.01 * (x[j + 1] - c * c).abs();
                }
            }
            v
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn callback_job(
    o: &Objective,
    dim: u32,
    pop: u32,
    gens: u32,
    s: Strategy,
    c: Crossover,
    b: BoundPolicy,
    p: Precision,
    seed: u64,
) -> Job {
    let mut builder = Job::builder_for(o.clone(), dim)
        .domain(-5.0, 5.0)
        .strategy(s);
    if s.crosses() {
        builder = builder.crossover(c).f(0.5).cr(0.7);
    }
    builder
        .pop(pop)
        .generations(gens)
        .bounds(b)
        .precision(p)
        .seed(seed)
        .history(true)
        .build()
        .expect("valid job")
}

fn cpu_run(j: &Job) -> gpude::Result<RunResult> {
    match j.precision() {
        Precision::F32 => cpu::run::<f32>(j, None),
        Precision::F64 => cpu::run::<f64>(j, None),
    }
}

/// The same run: equal bits everywhere, NaN payloads aside ([`same_value`]).
fn assert_same_run(g: &RunResult, c: &RunResult, what: &str) {
    assert!(
        same_value(g.best_f, c.best_f),
        "{what}: best {} against {}",
        g.best_f,
        c.best_f
    );
    assert_eq!(g.best_x, c.best_x, "{what}");
    assert_eq!(g.generations, c.generations, "{what}");
    assert_eq!(g.termination, c.termination, "{what}");
    let (gh, ch) = (g.history.as_ref(), c.history.as_ref());
    assert_eq!(gh.map(Vec::len), ch.map(Vec::len), "{what}");
    if let (Some(gh), Some(ch)) = (gh, ch) {
        assert!(
            gh.iter().zip(ch).all(|(&a, &b)| same_value(a, b)),
            "{what}: histories differ"
        );
    }
    assert_eq!(g.backend, "cuda", "{what}");
}

/// Host callbacks on the GPU (the DE stages there, the callback on the host): every
/// classic strategy, crossover and bound policy, the thesis strategy and its variants,
/// both precisions, rows of one and several rounds and partial chunks; the final
/// population, its values and whole runs are the CPU engine's, bit for bit; a batch of
/// callback and built-in jobs too.
fn host_callbacks_match_cpu(e: &CudaEngine) {
    let o = Objective::callback("weighted", None, callback_values).expect("callback");
    let strategies = [
        (Strategy::Thesis, Crossover::Binomial, BoundPolicy::InitOnly),
        (Strategy::Rand1, Crossover::Binomial, BoundPolicy::Clip),
        (
            Strategy::Best2,
            Crossover::Exponential,
            BoundPolicy::Reflect,
        ),
        (
            Strategy::CurrentToBest1,
            Crossover::Binomial,
            BoundPolicy::Midpoint,
        ),
        (
            Strategy::Rand2,
            Crossover::Exponential,
            BoundPolicy::Resample,
        ),
        (Strategy::Best1, Crossover::Binomial, BoundPolicy::InitOnly),
        (
            Strategy::Rand1,
            Crossover::Exponential,
            BoundPolicy::InitOnly,
        ),
    ];
    let mut runs = 0;
    for (k, &(s, c, b)) in strategies.iter().enumerate() {
        for p in [Precision::F32, Precision::F64] {
            for (dim, pop) in [(3u32, 40u32), (33, 100), (130, 2100)] {
                let j = callback_job(&o, dim, pop, 5, s, c, b, p, 900 + k as u64);
                let what = format!("{s:?}/{c:?}/{b:?} D={dim} Np={pop} {p:?}");
                let cpu_pop = cpu_population(&j);
                // The layout asked for does not matter: a callback has its own.
                for mode in [Mode::Auto, Mode::Batch] {
                    let (r, gpu) = e.run_with_population(&j, mode).expect("gpu run");
                    assert_same_population(&gpu, &cpu_pop, &what);
                    let c = cpu_run(&j).expect("cpu run");
                    assert_same_run(&r, &c, &what);
                    runs += 1;
                }
            }
        }
    }
    // The thesis variants, as the CPU engine runs them with a callback.
    for b in [1u32, 2, 4, 8, 16, 32, 3 << 3, 63] {
        let v = ThesisVariant::from_bits(b).expect("a variant");
        for p in [Precision::F32, Precision::F64] {
            let j = Job::builder_for(o.clone(), 30)
                .domain(-5.0, 5.0)
                .pop(64)
                .generations(6)
                .precision(p)
                .seed(40 + b as u64)
                .history(true)
                .thesis_variant(v)
                .build()
                .expect("valid job");
            let what = format!("{} {p:?}", gpude::host::config::variant_name(v));
            let (r, gpu) = e.run_with_population(&j, Mode::Auto).expect("gpu run");
            assert_same_population(&gpu, &cpu_population(&j), &what);
            assert_same_run(&r, &cpu_run(&j).expect("cpu run"), &what);
            runs += 1;
        }
    }
    // A batch: callbacks between built-in jobs, each result the CPU engine's.
    let mut jobs = Vec::new();
    for k in 0..6u64 {
        let p = if k % 2 == 0 {
            Precision::F32
        } else {
            Precision::F64
        };
        jobs.push(callback_job(
            &o,
            12,
            48,
            20,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            p,
            k,
        ));
        jobs.push(
            Job::builder(Function::Griewank, 12)
                .pop(48)
                .generations(20)
                .precision(p)
                .seed(k)
                .history(true)
                .build()
                .expect("valid job"),
        );
    }
    let rs = e.run_batch(&jobs).expect("gpu batch");
    for (k, (j, r)) in jobs.iter().zip(&rs).enumerate() {
        assert_same_run(r, &cpu_run(j).expect("cpu run"), &format!("batch job {k}"));
    }
    println!(
        "  {runs} callback runs and a batch of {} equal to the CPU engine's",
        jobs.len()
    );
}

/// A callback's errors on the GPU are the CPU engine's: a panic and a wrong number of
/// values stop the run with `Error::Objective` (at the initialisation and later), NaN
/// values are never the best unless all are, and the engine runs on afterwards.
fn host_callback_errors(e: &CudaEngine) {
    use std::sync::atomic::AtomicUsize;
    let plain = |o: &Objective, p: Precision| {
        callback_job(
            o,
            8,
            40,
            10,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            p,
            3,
        )
    };
    for p in [Precision::F32, Precision::F64] {
        // Panics at the initialisation, then on the third batch (a generation).
        for fail_at in [0usize, 2] {
            let calls = std::sync::Arc::new(AtomicUsize::new(0));
            let c2 = calls.clone();
            let o = Objective::callback("flaky", None, move |xs: &[f64], dim: usize| {
                if c2.fetch_add(1, Ordering::SeqCst) == fail_at {
                    panic!("broken at call {fail_at}");
                }
                callback_values(xs, dim)
            })
            .expect("callback");
            let j = plain(&o, p);
            let err = e.run(&j, Mode::Auto).unwrap_err();
            assert!(
                matches!(err, Error::Objective { .. }) && err.to_string().contains("panicked"),
                "{p:?} {fail_at}: {err}"
            );
            assert_eq!(
                calls.load(Ordering::SeqCst),
                fail_at + 1,
                "no call after the failure"
            );
            calls.store(0, Ordering::SeqCst);
            let cpu_err = cpu_run(&j).unwrap_err();
            assert_eq!(err.to_string(), cpu_err.to_string());
        }
        // A wrong number of values.
        let short = Objective::callback("short", None, |xs: &[f64], dim: usize| {
            let mut v = callback_values(xs, dim);
            v.pop();
            v
        })
        .expect("callback");
        let err = e.run(&plain(&short, p), Mode::Auto).unwrap_err();
        assert!(
            err.to_string().contains("values for 40 points"),
            "{p:?}: {err}"
        );
        assert_eq!(
            err.to_string(),
            cpu_run(&plain(&short, p)).unwrap_err().to_string()
        );
        // NaN for part of the domain: never the best, the same run as on the CPU.
        let holes = Objective::callback("holes", None, |xs: &[f64], dim: usize| {
            callback_values(xs, dim)
                .into_iter()
                .zip(xs.chunks(dim))
                .map(|(v, x)| if x[0] > 1.0 { f64::NAN } else { v })
                .collect()
        })
        .expect("callback");
        let j = plain(&holes, p);
        let (r, gpu) = e.run_with_population(&j, Mode::Auto).expect("gpu run");
        assert!(!r.best_f.is_nan(), "{p:?}");
        assert_same_population(&gpu, &cpu_population(&j), "holes");
        assert_same_run(&r, &cpu_run(&j).expect("cpu run"), "holes");
        // NaN everywhere: the run ends as non-finite, as on the CPU.
        let nan = Objective::callback("nan", None, |xs: &[f64], dim: usize| {
            vec![f64::NAN; xs.len() / dim]
        })
        .expect("callback");
        let j = plain(&nan, p);
        let r = e.run(&j, Mode::Auto).expect("gpu run");
        assert_eq!(r.termination, Termination::NonFinite, "{p:?}");
        assert_same_run(&r, &cpu_run(&j).expect("cpu run"), "all NaN");
    }
    // The engine is usable after the failures.
    let o = Objective::callback("weighted", None, callback_values).expect("callback");
    let j = plain(&o, Precision::F64);
    assert_same_run(
        &e.run(&j, Mode::Auto).expect("gpu run"),
        &cpu_run(&j).expect("cpu run"),
        "after the failures",
    );
}

/// Control of a callback run on the GPU: the observer sees every generation (as on the
/// CPU engine) and its stop ends the run there with the CPU engine's state; a set stop
/// flag ends it before the first generation; the saver gets the CPU engine's states.
fn host_callback_control(e: &CudaEngine) {
    let o = Objective::callback("weighted", None, callback_values).expect("callback");
    for p in [Precision::F32, Precision::F64] {
        let j = callback_job(
            &o,
            10,
            64,
            30,
            Strategy::Best1,
            Crossover::Binomial,
            BoundPolicy::Reflect,
            p,
            11,
        );
        let outcome = |gpu: bool, stop_at: u32, flag: Option<&AtomicBool>, every: u32| {
            let seen = Mutex::new(Vec::new());
            let saved = Mutex::new(Vec::new());
            let obs = |g: u32, best: f64| {
                seen.lock().unwrap().push((g, best.to_bits()));
                if g == stop_at {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            };
            let mut save = |c: &Checkpoint| {
                saved.lock().unwrap().push((c.generation, state_bits(c)));
                Flow::Continue
            };
            let mut control = Control {
                observer: Some(&obs),
                stop: flag,
                every,
                save: Some(&mut save),
            };
            let o = if gpu {
                e.run_controlled(&j, Mode::Auto, &mut control, Reporting::default())
            } else {
                cpu::try_run_controlled(&j, &mut control)
            }
            .expect("controlled run");
            (
                o.result.generations,
                o.result.termination,
                state_bits(&o.checkpoint),
                seen.into_inner().unwrap(),
                saved.into_inner().unwrap(),
            )
        };
        for (stop_at, every) in [(7u32, 0u32), (u32::MAX, 4), (0, 0)] {
            let g = outcome(true, stop_at, None, every);
            let c = outcome(false, stop_at, None, every);
            assert_eq!(g, c, "{p:?} stop at {stop_at}, every {every}");
            if stop_at == 7 {
                assert_eq!(g.0, 7);
                assert_eq!(g.1, Termination::Stopped);
                assert_eq!(g.3.len(), 8, "every generation seen");
            }
            if every == 4 {
                assert_eq!(g.4.len(), 7, "{p:?}: states at 4, 8, …, 28");
            }
        }
        let flag = AtomicBool::new(true);
        let g = outcome(true, u32::MAX, Some(&flag), 0);
        let c = outcome(false, u32::MAX, Some(&flag), 0);
        assert_eq!(g.0, 0);
        assert_eq!(g, c, "{p:?} stop flag");
    }
}

/// The jobs of the adaptive parity test: `s` on `objective` at D = 10 with an odd budget
/// (the last generation is partial; L-SHADE and jSO shrink from the first generations
/// on), two streams of one seed in one batch, with the history.
fn adaptive_jobs(s: Strategy, objective: &Objective, precision: Precision) -> Vec<Job> {
    (0..2)
        .map(|stream| {
            Job::builder_for(objective.clone(), 10)
                .strategy(s)
                .max_evaluations(2_345)
                .precision(precision)
                .seed(2017)
                .stream(stream)
                .history(true)
                .build()
                .expect("valid job")
        })
        .collect()
}

/// The bits of a result and final population, for comparisons.
fn adaptive_bits(r: &RunResult, x: &[f64], fit: &[f64]) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let mut head: Vec<u64> = vec![r.best_f.to_bits(), r.generations as u64, r.evaluations];
    head.extend(r.best_x.iter().map(|v| v.to_bits()));
    head.extend(r.history.iter().flatten().map(|v| v.to_bits()));
    (
        head,
        x.iter().map(|v| v.to_bits()).collect(),
        fit.iter().map(|v| v.to_bits()).collect(),
    )
}

/// The CPU engine's run of an adaptive job: its result and final population (rows,
/// values) as f64.
fn cpu_adaptive(job: &Job) -> (RunResult, Vec<f64>, Vec<f64>) {
    use gpude::host::adaptive::run_until;
    match job.precision() {
        Precision::F64 => run_until::<f64>(job, None, None),
        Precision::F32 => {
            let (r, x, f) = run_until::<f32>(job, None, None);
            (
                r,
                x.iter().map(|&v| v as f64).collect(),
                f.iter().map(|&v| v as f64).collect(),
            )
        }
    }
}

/// The CPU engine's run of a classic job (on a CEC 2017 function): its result and final
/// population (rows, values) as f64.
fn cpu_classic(job: &Job) -> (RunResult, Vec<f64>, Vec<f64>) {
    let o = cpu::run_controlled(job, &mut Control::default());
    let (x, fit): (Vec<f64>, Vec<f64>) = match &o.checkpoint.state {
        State::F32 { x, fit } => (
            x.iter().map(|&v| v as f64).collect(),
            fit.iter().map(|&v| v as f64).collect(),
        ),
        State::F64 { x, fit } => (x.clone(), fit.clone()),
    };
    (o.result, x, fit)
}

/// Every adaptive strategy, f64 and f32, on a built-in function and CEC 2017 functions
/// (plain, hybrid, composition): the GPU's runs (one block each, two per launch) give
/// the CPU engine's bits — best value and point, generations, evaluations, history, and
/// the whole final population (reduced for L-SHADE and jSO).
fn adaptive_runs_match_cpu(e: &CudaEngine) {
    let mut objectives = vec![Objective::Builtin(Function::Rastrigin)];
    match gpude::cec2017::DataSource::locate(None) {
        Ok(source) => {
            for n in [1, 5, 13, 22] {
                let id = gpude::cec2017::FunctionId::new(n).expect("a CEC 2017 function");
                objectives.push(Objective::cec2017(&source, id, 10).expect("its data"));
            }
        }
        Err(err) => println!("    NOTE: no CEC 2017 data ({err}); the built-in function only"),
    }
    let mut compared = 0;
    for precision in [Precision::F64, Precision::F32] {
        for s in Strategy::ADAPTIVE {
            for objective in &objectives {
                let jobs = adaptive_jobs(s, objective, precision);
                let refs: Vec<&Job> = jobs.iter().collect();
                let gpu = e.run_adaptive(&refs, Mode::Batch).expect("gpu runs");
                for (job, (r, pop)) in jobs.iter().zip(&gpu) {
                    let (cr, cx, cf) = cpu_adaptive(job);
                    let what = format!(
                        "{s:?} {} {precision:?} stream {}",
                        objective.name(),
                        job.stream()
                    );
                    assert_eq!(r.termination, cr.termination, "{what}");
                    assert_eq!(r.termination, Termination::MaxEvaluations, "{what}");
                    assert_eq!(
                        adaptive_bits(r, &pop.x, &pop.fit),
                        adaptive_bits(&cr, &cx, &cf),
                        "{what}: the GPU run differs from the CPU run"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 2 * 2 * 5 * objectives.len());
}

/// What the GPU does not run is refused before any work, saying what runs.
fn adaptive_gpu_refusals_are_clear(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    // A PTX objective in a precision its module does not define.
    let ex = Expr::parse("sum(x^2)").expect("an expression");
    let code = PtxCode::parse(ex.ptx(gpude::expr::Precision::F32)).expect("its module");
    let job = Job::builder_for(Objective::ptx("sq32", Some(0.0), code).unwrap(), 10)
        .domain(-5.0, 5.0)
        .strategy(Strategy::Jso)
        .precision(Precision::F64)
        .build()
        .expect("valid job");
    let err = e.run(&job, Mode::Auto).expect_err("refused").to_string();
    assert!(err.contains("precision = f64"), "{err}");
    // A classic strategy on a built-in function is no job for the adaptive kernels.
    let job = Job::builder(Function::Rastrigin, 10)
        .strategy(Strategy::Rand1)
        .generations(5)
        .build()
        .expect("valid job");
    let err = e
        .run_adaptive(&[&job], Mode::Batch)
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("or any strategy on a CEC 2017 function, in a batch of adaptive runs"),
        "{err}"
    );
    // The adaptive kernels have no step layout.
    let job = Job::builder(Function::Rastrigin, 10)
        .strategy(Strategy::Jso)
        .max_evaluations(500)
        .build()
        .expect("valid job");
    let err = e.run(&job, Mode::Steps).expect_err("refused").to_string();
    assert!(err.contains("auto, batch or grid for jso"), "{err}");
}

/// The whole-GPU layout of the adaptive kernels (`--mode grid`: one run over the whole
/// grid in a cooperative launch) against the CPU engine, bit for bit: every adaptive
/// strategy, f64 and f32, on a built-in function and a CEC 2017 function, and a classic
/// strategy on CEC 2017 functions, with a population below one block's threads (one
/// block) and one above (several blocks, so that the grid barrier, the serial parts on
/// thread 0 of block 0 and the reads of other blocks' rows are exercised) — best value
/// and point, generations, evaluations, history and the whole final population. Two
/// streams go through `run_adaptive` (one launch each, one after the other), single
/// jobs through `run_with_population`; the batch layout gives the same bits.
fn adaptive_grid_runs_match_cpu(e: &CudaEngine) {
    let mut objectives = vec![Objective::Builtin(Function::Rastrigin)];
    let mut cec = Vec::new();
    match gpude::cec2017::DataSource::locate(None) {
        Ok(source) => {
            for n in [5, 13] {
                let id = gpude::cec2017::FunctionId::new(n).expect("a CEC 2017 function");
                cec.push(Objective::cec2017(&source, id, 10).expect("its data"));
            }
            objectives.push(cec[0].clone());
        }
        Err(err) => println!("    NOTE: no CEC 2017 data ({err}); the built-in function only"),
    }
    // (population, budget): 24 individuals are one block of 32 threads; 600 are three
    // blocks of 256 threads (or more of fewer), and L-SHADE and jSO shrink them to a
    // block's worth within the run. Both budgets end with a partial generation.
    let sizes = [(24u32, 2_345u64), (600, 4_321)];
    let mut compared = 0;
    for precision in [Precision::F64, Precision::F32] {
        for s in Strategy::ADAPTIVE {
            for objective in &objectives {
                for (np, budget) in sizes {
                    let jobs: Vec<Job> = (0..2)
                        .map(|stream| {
                            Job::builder_for(objective.clone(), 10)
                                .strategy(s)
                                .pop(np)
                                .max_evaluations(budget)
                                .precision(precision)
                                .seed(2017)
                                .stream(stream)
                                .history(true)
                                .build()
                                .expect("valid job")
                        })
                        .collect();
                    let refs: Vec<&Job> = jobs.iter().collect();
                    let grid = e.run_adaptive(&refs, Mode::Grid).expect("grid runs");
                    let batch = e.run_adaptive(&refs, Mode::Batch).expect("batch runs");
                    for ((job, (r, pop)), (rb, popb)) in jobs.iter().zip(&grid).zip(&batch) {
                        let (cr, cx, cf) = cpu_adaptive(job);
                        let what = format!(
                            "{s:?} {} {precision:?} Np {np} stream {}",
                            objective.name(),
                            job.stream()
                        );
                        assert_eq!(r.termination, Termination::MaxEvaluations, "{what}");
                        assert_eq!(r.termination, cr.termination, "{what}");
                        assert_eq!(r.evaluations, budget, "{what}");
                        let want = adaptive_bits(&cr, &cx, &cf);
                        assert_eq!(
                            adaptive_bits(r, &pop.x, &pop.fit),
                            want,
                            "{what}: the grid run differs from the CPU run"
                        );
                        assert_eq!(
                            adaptive_bits(rb, &popb.x, &popb.fit),
                            want,
                            "{what}: the batch run differs from the CPU run"
                        );
                        compared += 1;
                    }
                    // A single job routed by its mode.
                    let (r, pop) = e
                        .run_with_population(&jobs[1], Mode::Grid)
                        .expect("a single grid run");
                    assert_eq!(
                        adaptive_bits(&r, &pop.x, &pop.fit),
                        adaptive_bits(&grid[1].0, &grid[1].1.x, &grid[1].1.fit),
                        "{s:?} {} {precision:?} Np {np}: run and run_adaptive differ",
                        objective.name()
                    );
                }
            }
        }
        // A classic strategy on CEC 2017 functions (plain, hybrid) in the same kernels.
        for objective in &cec {
            for (np, gens) in [(24u32, 40u32), (600, 12)] {
                let job = Job::builder_for(objective.clone(), 10)
                    .strategy(Strategy::Rand1)
                    .crossover(Crossover::Binomial)
                    .pop(np)
                    .max_evaluations(np as u64 * (gens as u64 + 1))
                    .precision(precision)
                    .seed(7)
                    .stream(1)
                    .history(true)
                    .build()
                    .expect("valid job");
                let (r, pop) = e.run_with_population(&job, Mode::Grid).expect("a grid run");
                let (cr, cx, cf) = cpu_classic(&job);
                let what = format!("Rand1 {} {precision:?} Np {np}", objective.name());
                assert_eq!(r.termination, cr.termination, "{what}");
                assert_eq!(r.generations, gens, "{what}");
                assert_eq!(
                    adaptive_bits(&r, &pop.x, &pop.fit),
                    adaptive_bits(&cr, &cx, &cf),
                    "{what}: the grid run differs from the CPU run"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(
        compared,
        2 * (5 * objectives.len() * sizes.len() * 2 + cec.len() * 2)
    );
}

/// The classic strategies (thesis, rand/1/bin) on CEC 2017 functions (plain, hybrid,
/// composition) at D = 10, f64 and f32, in the adaptive kernels: the GPU's runs (three
/// per launch) give the CPU engine's bits — best value and point, generations,
/// evaluations, history and the whole final population; `run` routes a single job there.
fn classic_cec_runs_match_cpu(e: &CudaEngine) {
    let source = match gpude::cec2017::DataSource::locate(None) {
        Ok(s) => s,
        Err(err) => {
            println!("    SKIPPED: no CEC 2017 data ({err})");
            return;
        }
    };
    let mut compared = 0;
    for precision in [Precision::F64, Precision::F32] {
        for (s, c) in [
            (Strategy::Thesis, None),
            (Strategy::Rand1, Some(Crossover::Binomial)),
        ] {
            for n in [1, 5, 13, 22] {
                let id = gpude::cec2017::FunctionId::new(n).expect("a CEC 2017 function");
                let objective = Objective::cec2017(&source, id, 10).expect("its data");
                let jobs: Vec<Job> = (0..3)
                    .map(|stream| {
                        let mut b = Job::builder_for(objective.clone(), 10)
                            .strategy(s)
                            .pop(24)
                            .max_evaluations(24 * 61)
                            .precision(precision)
                            .seed(7)
                            .stream(stream)
                            .history(stream == 0);
                        if let Some(c) = c {
                            b = b.crossover(c);
                        }
                        b.build().expect("valid job")
                    })
                    .collect();
                let refs: Vec<&Job> = jobs.iter().collect();
                let gpu = e.run_adaptive(&refs, Mode::Batch).expect("gpu runs");
                for (job, (r, pop)) in jobs.iter().zip(&gpu) {
                    let (cr, cx, cf) = cpu_classic(job);
                    let cr = &cr;
                    let what = format!("{s:?} F{n} {precision:?} stream {}", job.stream());
                    assert_eq!(r.termination, cr.termination, "{what}");
                    assert_eq!(r.generations, 60, "{what}");
                    assert_eq!(r.evaluations, 24 * 61, "{what}");
                    assert_eq!(
                        adaptive_bits(r, &pop.x, &pop.fit),
                        adaptive_bits(cr, &cx, &cf),
                        "{what}: the GPU run differs from the CPU run"
                    );
                    compared += 1;
                }
                let single = e.run(&jobs[1], Mode::Auto).expect("a single gpu run");
                assert_eq!(
                    single.best_f.to_bits(),
                    gpu[1].0.best_f.to_bits(),
                    "{s:?} F{n} {precision:?}: run and run_adaptive differ"
                );
            }
        }
    }
    assert_eq!(compared, 2 * 2 * 4 * 3);
}

/// The shared-memory-resident batch kernel against the CPU engine and the global-memory
/// kernel, bit for bit: final population and values, best value and point, generations
/// and history, for several strategies, bound policies and both precisions. The cases
/// cover rows of one round and of several, populations whose waiting trials all fit in
/// shared memory and ones where some wait in global memory, and several populations in
/// one launch.
fn shared_batch_matches_cpu(e: &CudaEngine) {
    let saved = e.batch_kernel();
    let saved_cap = e.spare_rows_cap();
    #[allow(clippy::type_complexity)]
    let cases: Vec<(
        Function,
        u32,
        u32,
        u32,
        Strategy,
        Crossover,
        BoundPolicy,
        Precision,
    )> = vec![
        // Np = 256 at D = 128 in f32: 128 KiB of rows, part of the spare rows in global
        // memory on a 227 KiB GPU.
        (
            Function::Griewank,
            128,
            256,
            40,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Griewank,
            128,
            64,
            60,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Rastrigin,
            30,
            300,
            50,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Sphere,
            30,
            300,
            50,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Ackley,
            200,
            48,
            30,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            Precision::F32,
        ),
        (
            Function::Penalized,
            37,
            96,
            30,
            Strategy::Best2,
            Crossover::Exponential,
            BoundPolicy::Reflect,
            Precision::F32,
        ),
        (
            Function::Rosenbrock,
            16,
            128,
            40,
            Strategy::CurrentToBest1,
            Crossover::Binomial,
            BoundPolicy::Resample,
            Precision::F32,
        ),
        (
            Function::Griewank,
            128,
            128,
            20,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
        (
            Function::Griewank,
            128,
            32,
            30,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
        (
            Function::Schwefel12,
            30,
            200,
            30,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Midpoint,
            Precision::F64,
        ),
        (
            Function::Weierstrass,
            10,
            64,
            20,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
    ];
    for (k, &(f, dim, pop, gens, s, c, b, p)) in cases.iter().enumerate() {
        let mut builder = Job::builder(f, dim).strategy(s);
        if s.crosses() {
            builder = builder.crossover(c).f(0.5).cr(0.7);
        }
        let j = builder
            .pop(pop)
            .generations(gens)
            .bounds(b)
            .precision(p)
            .history(true)
            .seed(4000 + k as u64)
            .build()
            .expect("valid job");
        let what = format!("{f:?} D={dim} Np={pop} {s:?}/{c:?}/{b:?} {p:?}");
        e.set_batch_kernel(BatchKernel::Shared);
        let (name, bytes) = e.batch_kernel_for(&j).expect("the shared kernel");
        assert!(
            name.ends_with("_shared") && bytes > 0,
            "{what}: {name}, {bytes} bytes"
        );
        let (r, pop_gpu) = e.run_with_population(&j, Mode::Batch).expect("shared run");
        let cpu = cpu_population(&j);
        assert_same_population(&pop_gpu, &cpu, &what);
        let c = match p {
            Precision::F32 => cpu::run::<f32>(&j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(&j, None).unwrap(),
        };
        assert_eq!(
            result_bits(&r),
            result_bits(&c),
            "{what}: shared kernel vs CPU"
        );
        // Fewer spare rows: the other trials wait in global memory (none in shared
        // memory with a cap of 0).
        for cap in [0, pop / 3] {
            e.set_spare_rows_cap(Some(cap));
            let (rc, pc) = e.run_with_population(&j, Mode::Batch).expect("shared run");
            assert_same_population(&pc, &cpu, &format!("{what}, {cap} spare rows"));
            assert_eq!(
                result_bits(&rc),
                result_bits(&c),
                "{what}, {cap} spare rows"
            );
        }
        e.set_spare_rows_cap(saved_cap);
        e.set_batch_kernel(BatchKernel::Global);
        let (name_g, bytes_g) = e.batch_kernel_for(&j).unwrap();
        assert!(
            !name_g.ends_with("_shared") && bytes_g == 0,
            "{what}: {name_g}"
        );
        let g = e.run(&j, Mode::Batch).expect("global run");
        assert_eq!(
            result_bits(&r),
            result_bits(&g),
            "{what}: shared vs global kernel"
        );
        println!("  {what}: {name}, {bytes} bytes of shared memory: same bits");
    }
    // Several populations in one launch (each block its own), against single CPU runs.
    e.set_batch_kernel(BatchKernel::Shared);
    let jobs: Vec<Job> = (0..5u64)
        .map(|seed| {
            Job::builder(Function::Griewank, 128)
                .pop(256)
                .generations(25)
                .history(true)
                .seed(seed)
                .stream(seed as u32)
                .build()
                .unwrap()
        })
        .collect();
    let gpu = e.run_batch(&jobs).expect("shared batch");
    for (j, g) in jobs.iter().zip(&gpu) {
        let c = cpu::run::<f32>(j, None).unwrap();
        assert_eq!(result_bits(g), result_bits(&c), "seed {}", j.seed());
    }
    e.set_batch_kernel(saved);
}

/// Auto takes the global-memory kernel for populations that do not fit in a block's
/// shared memory and for families without a resident kernel; forcing the shared
/// kernel on those is refused with the reason.
fn shared_batch_falls_back(e: &CudaEngine) {
    let saved = e.batch_kernel();
    e.set_batch_kernel(BatchKernel::Auto);
    // Np = 2048 at D = 128: 1 MiB of f32 rows, more than any GPU's block holds.
    let big = Job::builder(Function::Griewank, 128)
        .pop(2048)
        .generations(5)
        .history(true)
        .seed(3)
        .build()
        .unwrap();
    // Auto's other kernel in single precision: the pipelined one from sm_80 on.
    let (name, bytes) = e.batch_kernel_for(&big).unwrap();
    if e.compute_capability().0 >= 8 {
        assert_eq!(name, "de_batch_f32_griewank_thesis_pipelined");
        assert!(bytes > 0, "{bytes}");
    } else {
        assert_eq!((name.as_str(), bytes), ("de_batch_f32_griewank_thesis", 0));
    }
    let r = e.run(&big, Mode::Batch).unwrap();
    let c = cpu::run::<f32>(&big, None).unwrap();
    assert_eq!(result_bits(&r), result_bits(&c));
    // Fits: auto takes the resident kernel.
    let small = Job::builder(Function::Griewank, 128)
        .pop(64)
        .generations(5)
        .seed(3)
        .build()
        .unwrap();
    let (name, bytes) = e.batch_kernel_for(&small).unwrap();
    assert_eq!(name, "de_batch_f32_griewank_thesis_shared");
    assert!(bytes > 64 * 128 * 4, "{bytes}");
    // A thesis variant that changes the trials has no resident kernel.
    let variant = gpude::host::config::parse_variant("indices=rejection").expect("a variant");
    assert!(variant.changes_trials());
    let vj = variant_job(Function::Griewank, 128, 5, Precision::F32, variant, 3);
    let (name, _) = e.batch_kernel_for(&vj).unwrap();
    assert!(name.ends_with("_thesis_variant"), "{name}");
    // Forced: refused, naming the value and why.
    e.set_batch_kernel(BatchKernel::Shared);
    for j in [&big, &vj] {
        let err = e.run(j, Mode::Batch).expect_err("refused").to_string();
        assert!(err.contains("shared"), "{err}");
    }
    let err = e.batch_kernel_for(&big).expect_err("refused").to_string();
    assert!(err.contains("2048") && err.contains("bytes"), "{err}");
    e.set_batch_kernel(saved);
}

/// The pipelined batch kernel (rows staged in shared memory with `cp.async`) against
/// the CPU engine and the global-memory kernel, bit for bit: final population and
/// values, best value and point, generations and history, for strategies with two to
/// five drawn rows, both crossovers, several bound policies and both precisions. The
/// cases cover groups of 32 lanes and of fewer (several individuals per warp),
/// populations that are not a multiple of the block's groups (idle groups in the last
/// pass), one pass per generation, and several populations in one launch.
fn pipelined_batch_matches_cpu(e: &CudaEngine) {
    let (major, minor) = e.compute_capability();
    if major < 8 {
        println!(
            "  SKIPPED: the pipelined kernels need sm_80 or later; this GPU is {major}.{minor}"
        );
        return;
    }
    let saved = e.batch_kernel();
    #[allow(clippy::type_complexity)]
    let cases: Vec<(
        Function,
        u32,
        u32,
        u32,
        Strategy,
        Crossover,
        BoundPolicy,
        Precision,
    )> = vec![
        (
            Function::Griewank,
            128,
            2048,
            12,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Griewank,
            128,
            300,
            40,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Sphere,
            128,
            20,
            40,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Rastrigin,
            30,
            777,
            30,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            Precision::F32,
        ),
        (
            Function::Ackley,
            100,
            200,
            30,
            Strategy::Rand2,
            Crossover::Binomial,
            BoundPolicy::Reflect,
            Precision::F32,
        ),
        (
            Function::Penalized,
            37,
            196,
            30,
            Strategy::Best2,
            Crossover::Exponential,
            BoundPolicy::Reflect,
            Precision::F32,
        ),
        (
            Function::Rosenbrock,
            16,
            128,
            40,
            Strategy::CurrentToBest1,
            Crossover::Binomial,
            BoundPolicy::Resample,
            Precision::F32,
        ),
        (
            Function::Weierstrass,
            5,
            64,
            20,
            Strategy::Best1,
            Crossover::Exponential,
            BoundPolicy::Midpoint,
            Precision::F32,
        ),
        (
            Function::Griewank,
            128,
            1024,
            10,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
        (
            Function::Schwefel12,
            30,
            200,
            30,
            Strategy::Rand2,
            Crossover::Binomial,
            BoundPolicy::Midpoint,
            Precision::F64,
        ),
        (
            Function::Weierstrass,
            10,
            64,
            20,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
    ];
    for (k, &(f, dim, pop, gens, s, c, b, p)) in cases.iter().enumerate() {
        let mut builder = Job::builder(f, dim).strategy(s);
        if s.crosses() {
            builder = builder.crossover(c).f(0.5).cr(0.7);
        }
        let j = builder
            .pop(pop)
            .generations(gens)
            .bounds(b)
            .precision(p)
            .history(true)
            .seed(5000 + k as u64)
            .build()
            .expect("valid job");
        let what = format!("{f:?} D={dim} Np={pop} {s:?}/{c:?}/{b:?} {p:?}");
        e.set_batch_kernel(BatchKernel::Pipelined);
        let (name, bytes) = e.batch_kernel_for(&j).expect("the pipelined kernel");
        assert!(
            name.ends_with("_pipelined") && bytes > 0,
            "{what}: {name}, {bytes} bytes"
        );
        let (r, pop_gpu) = e
            .run_with_population(&j, Mode::Batch)
            .expect("pipelined run");
        let cpu = cpu_population(&j);
        assert_same_population(&pop_gpu, &cpu, &what);
        let c = match p {
            Precision::F32 => cpu::run::<f32>(&j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(&j, None).unwrap(),
        };
        assert_eq!(
            result_bits(&r),
            result_bits(&c),
            "{what}: pipelined kernel vs CPU"
        );
        e.set_batch_kernel(BatchKernel::Global);
        let g = e.run(&j, Mode::Batch).expect("global run");
        assert_eq!(
            result_bits(&r),
            result_bits(&g),
            "{what}: pipelined vs global kernel"
        );
        println!("  {what}: {name}, {bytes} bytes of shared memory: same bits");
    }
    // Several populations in one launch (each block its own), against single CPU runs.
    e.set_batch_kernel(BatchKernel::Pipelined);
    let jobs: Vec<Job> = (0..5u64)
        .map(|seed| {
            Job::builder(Function::Griewank, 128)
                .pop(512)
                .generations(15)
                .history(true)
                .seed(seed)
                .stream(seed as u32)
                .build()
                .unwrap()
        })
        .collect();
    let gpu = e.run_batch(&jobs).expect("pipelined batch");
    for (j, g) in jobs.iter().zip(&gpu) {
        let c = cpu::run::<f32>(j, None).unwrap();
        assert_eq!(result_bits(g), result_bits(&c), "seed {}", j.seed());
    }
    e.set_batch_kernel(saved);
}

/// Forcing the pipelined kernel on a job it cannot serve is refused with the value and
/// the reason: rows of more than one round, a thesis variant that changes the trials,
/// an expression objective (and, on a GPU older than sm_80, every job). Auto's choice
/// between the batch kernels, and its runs against the CPU engine's.
fn pipelined_batch_refusals(e: &CudaEngine) {
    let saved = e.batch_kernel();
    e.set_batch_kernel(BatchKernel::Pipelined);
    let (major, _) = e.compute_capability();
    let wide = Job::builder(Function::Griewank, 200)
        .pop(64)
        .generations(5)
        .seed(3)
        .build()
        .unwrap();
    let variant = gpude::host::config::parse_variant("indices=rejection").expect("a variant");
    let vj = variant_job(Function::Griewank, 64, 5, Precision::F32, variant, 3);
    let expr = Job::builder_for(Objective::expr("sum(x^2)", None).expect("parses"), 16)
        .domain(-3.0, 3.0)
        .pop(64)
        .generations(5)
        .seed(3)
        .build()
        .expect("valid job");
    for (j, says) in [
        (
            &wide,
            if major >= 8 {
                "D = 200"
            } else {
                "compute capability"
            },
        ),
        (&vj, "thesis_variant_pipelined"),
        (&expr, "pipelined kernel"),
    ] {
        let err = e.batch_kernel_for(j).expect_err("refused").to_string();
        assert!(err.contains("pipelined") && err.contains(says), "{err}");
        let err = e.run(j, Mode::Batch).expect_err("refused").to_string();
        assert!(err.contains(says), "{err}");
    }
    // Auto takes it for single-precision populations that do not fit in shared memory
    // (from sm_80 on), and leaves it for the others: those that fit (the resident
    // kernel), double precision, rows of several rounds (the global-memory kernel).
    e.set_batch_kernel(BatchKernel::Auto);
    let big = |dim: u32, p: Precision| {
        Job::builder(Function::Griewank, dim)
            .pop(2048)
            .generations(5)
            .precision(p)
            .seed(3)
            .build()
            .unwrap()
    };
    let f32_global = if major >= 8 {
        "de_batch_f32_griewank_thesis_pipelined"
    } else {
        "de_batch_f32_griewank_thesis"
    };
    for (j, kernel) in [
        (&wide, "de_batch_f32_griewank_thesis_shared"),
        (&big(128, Precision::F32), f32_global),
        (&big(128, Precision::F64), "de_batch_f64_griewank_thesis"),
        (&big(200, Precision::F32), "de_batch_f32_griewank_thesis"),
    ] {
        assert_eq!(e.batch_kernel_for(j).unwrap().0, kernel);
        let r = e.run(j, Mode::Batch).expect("auto run");
        let c = match j.precision() {
            Precision::F32 => cpu::run::<f32>(j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(j, None).unwrap(),
        };
        assert_eq!(result_bits(&r), result_bits(&c), "auto: {kernel}");
    }
    e.set_batch_kernel(saved);
}

/// Objectives that are NaN on part of the domain or everywhere (an expression here):
/// NaN is never the best unless every value is NaN, and then the best is the lowest
/// index, as on the CPU engine. Every layout and the shared-memory batch kernel give
/// the CPU engine's run (an all-NaN population once made the kernels read the best row
/// at index u32::MAX).
fn nan_objectives_run_as_on_the_cpu(e: &CudaEngine) {
    let saved = e.batch_kernel();
    let mut runs = 0;
    for src in ["sqrt(-1 - sum(x^2))", "sum(x^2) + sqrt(1 - sum(x))"] {
        for p in [Precision::F32, Precision::F64] {
            for s in [Strategy::Thesis, Strategy::Best1] {
                let mut b = Job::builder_for(Objective::expr(src, None).expect("parses"), 12)
                    .domain(-3.0, 3.0)
                    .strategy(s)
                    .pop(64)
                    .generations(25)
                    .precision(p)
                    .history(true)
                    .seed(77);
                if s.crosses() {
                    b = b.bounds(BoundPolicy::Clip);
                }
                let j = b.build().expect("valid job");
                let c = match p {
                    Precision::F32 => cpu::run::<f32>(&j, None).unwrap(),
                    Precision::F64 => cpu::run::<f64>(&j, None).unwrap(),
                };
                for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                    let what = format!("{src} {p:?} {s:?} {mode:?}");
                    let g = e.run(&j, mode).expect(&what);
                    assert_same_run(&g, &c, &what);
                    runs += 1;
                }
            }
        }
    }
    // The built-in kernels (shared-memory batch included) on a built-in function whose
    // values are finite: unchanged by the NaN identity of their reductions.
    for k in [BatchKernel::Global, BatchKernel::Shared] {
        e.set_batch_kernel(k);
        let j = Job::builder(Function::Rastrigin, 16)
            .pop(64)
            .generations(20)
            .history(true)
            .seed(5)
            .build()
            .expect("valid job");
        let g = e.run(&j, Mode::Batch).expect("run");
        assert_same_run(&g, &cpu::run::<f32>(&j, None).unwrap(), &format!("{k:?}"));
        runs += 1;
    }
    e.set_batch_kernel(saved);
    // An objective that overflows to −∞ on the way: without a target the GPU runs every
    // generation as the CPU engine does (no target is NaN, not −∞, which −∞ reaches), and
    // both end as not finite.
    for p in [Precision::F32, Precision::F64] {
        let j = Job::builder_for(Objective::expr("sum(sin(x)*exp(x/10))", None).unwrap(), 37)
            .domain(-5.0, 5.0)
            .pop(96)
            .generations(400)
            .precision(p)
            .seed(3)
            .build()
            .expect("valid job");
        let c = match p {
            Precision::F32 => cpu::run::<f32>(&j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(&j, None).unwrap(),
        };
        assert_eq!(c.termination, Termination::NonFinite, "{p:?}: {}", c.best_f);
        for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
            let what = format!("overflow {p:?} {mode:?}");
            let g = e.run(&j, mode).expect(&what);
            assert_same_run(&g, &c, &what);
            runs += 1;
        }
    }
    println!("  {runs} runs with NaN or infinite values equal to the CPU engine's");
}
