//! The built-in functions' kernels in every layout (batch, grid, steps): one generation
//! and whole runs against the CPU engine, the layouts against each other, targets and
//! histories.

use crate::Test;
use crate::common::{compare, cpu_population, job};
use gpude::host::cpu;
use gpude::{
    BoundPolicy, Crossover, CudaEngine, Formula, Function, Job, Mode, Precision, Strategy,
};

pub fn tests() -> Vec<Test> {
    tests![
        one_generation_parity_every_strategy,
        grid_mode_matches_batch_mode,
        textbook_and_exact_runs_match_cpu_bit_for_bit,
        target_error_stops_early,
        history_is_recorded
    ]
}

fn one_generation_parity_every_strategy(e: &CudaEngine) {
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

fn grid_mode_matches_batch_mode(e: &CudaEngine) {
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

fn target_error_stops_early(e: &CudaEngine) {
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

/// Whole runs in both formulas, every layout: the same bits as the CPU engine (best
/// value, best point and verified error).
fn textbook_and_exact_runs_match_cpu_bit_for_bit(e: &CudaEngine) {
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
