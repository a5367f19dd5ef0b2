//! The batch layout's launches of several jobs against the CPU engine's runs, and a job
//! too large for the GPU.

use crate::Test;
use crate::common::job;
use gpude::host::cpu;
use gpude::{BoundPolicy, Crossover, CudaEngine, Error, Function, Job, Mode, Precision, Strategy};

pub fn tests() -> Vec<Test> {
    tests![
        batch_of_mixed_jobs_matches_cpu_runs,
        thirty_seeds_agree_statistically,
        too_large_job_is_refused_before_allocating
    ]
}

fn batch_of_mixed_jobs_matches_cpu_runs(e: &CudaEngine) {
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

fn thirty_seeds_agree_statistically(e: &CudaEngine) {
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

fn too_large_job_is_refused_before_allocating(e: &CudaEngine) {
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
