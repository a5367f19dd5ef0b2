//! Expression objectives (generated PTX linked with the device crate's maths): their
//! values and runs against the CPU evaluator's and engine's, against the built-ins, and
//! objectives with NaN or infinite values.

use crate::Test;
use crate::common::{
    assert_same_population, assert_same_run, cpu_population, job, same_value, uniform,
};
use gpude::expr::{Expr, builtins::expression};
use gpude::host::cpu;
use gpude::{
    BatchKernel, BoundPolicy, Crossover, CudaEngine, Formula, Function, Job, Mode, Objective,
    Precision, Strategy, Termination,
};

pub fn tests() -> Vec<Test> {
    tests![
        expression_values_match_cpu_bit_for_bit,
        builtins_as_expressions_run_as_on_the_cpu,
        expression_batch_matches_cpu_runs,
        expressions_agree_with_the_builtins_on_the_gpu,
        nan_objectives_run_as_on_the_cpu
    ]
}

/// Points for the expression tests: uniform over ±h, with zeros, tiny values and large
/// ones (the far argument reduction of sin and cos).
fn points(n: usize, h: f64, seed: u64) -> Vec<f64> {
    let mut next = uniform(seed | 1);
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
fn expression_values_match_cpu_bit_for_bit(e: &CudaEngine) {
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

/// The eight built-ins written as expressions, several strategies, crossovers, bound
/// policies and sizes, both precisions: the GPU's final population and whole runs
/// (best, history, generations) are the CPU engine's, bit for bit.
fn builtins_as_expressions_run_as_on_the_cpu(e: &CudaEngine) {
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
fn expression_batch_matches_cpu_runs(e: &CudaEngine) {
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
fn expressions_agree_with_the_builtins_on_the_gpu(e: &CudaEngine) {
    let mut next = uniform(0x2545_f491_4f6c_dd1d);
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
