//! Several GPUs of one host: a batch, a list of runs under a watch and a list of
//! archipelagos shared out among every GPU give each run the bits that one GPU gives
//! it. These tests skip (visibly) on a host with fewer than two GPUs.

use crate::Test;
use crate::common::{assert_same_result, job, skip};
use gpude::checkpoint::Entry;
use gpude::run::control::Watch;
use gpude::{
    Archipelago, Backend, BoundPolicy, Crossover, CudaEngine, Function, Gpus, Job, Precision,
    Solver, SolverOptions, Strategy, Topology,
};
use std::sync::Mutex;

pub fn tests() -> Vec<Test> {
    tests![
        several_gpus_run_a_batch_with_one_gpus_bits,
        several_gpus_run_a_watched_list_with_one_gpus_bits,
        several_gpus_run_archipelagos_with_one_gpus_bits
    ]
}

/// A solver on GPU 0 alone and one on every GPU; skips below two GPUs.
fn one_and_all() -> (Solver, Solver) {
    let n = gpude::host::cuda::gpu_count().expect("the driver counts the GPUs");
    if n < 2 {
        skip(&format!("needs two or more GPUs; this host has {n}"));
    }
    let open = |gpus| {
        Solver::new(&SolverOptions {
            backend: Backend::Cuda,
            gpus,
            ..SolverOptions::default()
        })
        .expect("a solver")
    };
    let all = open(Gpus::All);
    assert_eq!(all.gpus(), n, "every GPU opened");
    (open(Gpus::List(vec![0])), all)
}

/// A batch of three sets of launch partners (of unequal size, both precisions, a
/// convergence stop in one) and a job on its own.
fn batch() -> Vec<Job> {
    let mut jobs = Vec::new();
    let sets = [
        (
            Function::Rastrigin,
            30,
            64,
            Strategy::Thesis,
            Precision::F32,
            37,
        ),
        (
            Function::Griewank,
            16,
            48,
            Strategy::Rand1,
            Precision::F64,
            9,
        ),
        (Function::Ackley, 10, 32, Strategy::Best1, Precision::F32, 4),
    ];
    for (f, d, np, s, p, runs) in sets {
        for r in 0..runs {
            let b = BoundPolicy::Clip;
            jobs.push(job(f, d, np, 150, s, Crossover::Binomial, b, p, 3).with_stream(r));
        }
    }
    jobs.push(
        Job::builder(Function::Sphere, 8)
            .pop(40)
            .generations(3000)
            .atol(1e-9)
            .seed(11)
            .build()
            .expect("valid job"),
    );
    jobs
}

fn several_gpus_run_a_batch_with_one_gpus_bits(_: &CudaEngine) {
    let (one, all) = one_and_all();
    let jobs = batch();
    let a = one.run_batch(&jobs).expect("one GPU");
    let b = all.run_batch(&jobs).expect("every GPU");
    assert_eq!(a.len(), jobs.len());
    assert_eq!(b.len(), jobs.len());
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_same_result(x, y, &format!("job {k}"));
    }
    // The runs were shared out: no launch on several GPUs held every run of its set.
    assert!(
        b.iter().any(|r| r.launch_runs < 37 && r.launch_runs > 1),
        "launch sizes {:?}",
        b.iter().map(|r| r.launch_runs).collect::<Vec<_>>()
    );
}

fn several_gpus_run_a_watched_list_with_one_gpus_bits(_: &CudaEngine) {
    let (one, all) = one_and_all();
    let jobs = batch();
    let seen = Mutex::new(vec![0u32; jobs.len()]);
    let observe = |k: usize, g: u32, _: f64| {
        let mut s = seen.lock().expect("the observer's record");
        s[k] = s[k].max(g);
        gpude::cpu::Flow::Continue
    };
    let run = |s: &Solver, observer: Option<gpude::run::control::RunsObserver>| {
        let mut watch = Watch {
            observer,
            keep: true,
            ..Default::default()
        };
        let entries = jobs.iter().cloned().map(Entry::Pending).collect();
        s.run_entries(entries, &mut watch).expect("a watched list")
    };
    let a = run(&one, None);
    let b = run(&all, Some(&observe));
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        let (x, y) = (x.result.as_ref(), y.result.as_ref());
        assert_same_result(
            x.expect("a result"),
            y.expect("a result"),
            &format!("run {k}"),
        );
        // The observer saw each run's last generation under its index in the list.
        assert_eq!(
            seen.lock().expect("the record")[k],
            y.expect("a result").generations,
            "run {k}"
        );
    }
}

fn several_gpus_run_archipelagos_with_one_gpus_bits(_: &CudaEngine) {
    let (one, all) = one_and_all();
    let mut archs = Vec::new();
    for (f, p) in [
        (Function::Rastrigin, Precision::F32),
        (Function::Griewank, Precision::F64),
    ] {
        let t = job(
            f,
            20,
            32,
            60,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            p,
            5,
        );
        for r in 0..5 {
            archs.push(
                Archipelago::builder(t.clone().with_stream(r), 6)
                    .topology(Topology::Ring)
                    .interval(7)
                    .migrants(2)
                    .build()
                    .expect("valid archipelago"),
            );
        }
    }
    let a = one.run_archipelagos(&archs, None).expect("one GPU");
    let b = all.run_archipelagos(&archs, None).expect("every GPU");
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x.migrations, y.migrations, "archipelago {k}");
        assert_eq!(x.best_island, y.best_island, "archipelago {k}");
        for (i, (u, v)) in x.islands.iter().zip(&y.islands).enumerate() {
            assert_same_result(u, v, &format!("archipelago {k} island {i}"));
        }
        assert_same_result(&x.overall, &y.overall, &format!("archipelago {k}"));
    }
}
