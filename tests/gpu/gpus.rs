//! Several GPUs of one host: a batch, a list of runs under a watch and a list of
//! archipelagos shared out among every GPU give each run the bits that one GPU gives
//! it. These tests skip (visibly) on a host with fewer than two GPUs.

use crate::Test;
use crate::common::{assert_same_result, job, skip};
use gpude::checkpoint::{ArchipelagoEntry, Entry};
use gpude::run::control::Watch;
use gpude::{
    Algorithm, Archipelago, ArchipelagoResult, Backend, BoundPolicy, Crossover, CudaEngine,
    Emigrants, Function, Ga, Gpus, IslandsWatch, Job, Precision, Pso, Replacement, Solver,
    SolverOptions, Strategy, Topology,
};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

pub fn tests() -> Vec<Test> {
    tests![
        several_gpus_run_a_batch_with_one_gpus_bits,
        several_gpus_run_a_watched_list_with_one_gpus_bits,
        several_gpus_run_archipelagos_with_one_gpus_bits,
        several_gpus_share_one_archipelago_with_one_gpus_bits,
        one_archipelago_in_parts_has_its_bits
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

/// The same archipelago, bit for bit.
fn same_archipelago(x: &ArchipelagoResult, y: &ArchipelagoResult, what: &str) {
    assert_eq!(x.migrations, y.migrations, "{what}");
    assert_eq!(x.best_island, y.best_island, "{what}");
    assert_eq!(x.islands.len(), y.islands.len(), "{what}");
    for (i, (u, v)) in x.islands.iter().zip(&y.islands).enumerate() {
        assert_same_result(u, v, &format!("{what} island {i}"));
    }
    assert_same_result(&x.overall, &y.overall, what);
}

/// One archipelago's islands shared out among the GPUs (DE, PSO and the GA, every
/// topology's source of migrants: the ring, all islands, the random ring drawn on the
/// first GPU), with the bits of the whole archipelago on one GPU.
/// The archipelagos the split is tested on (`parts`: the parts it is cut into):
/// DE, PSO and the GA, every topology's source of migrants (the ring, all islands, the
/// random ring drawn by island 0), both precisions.
fn split_cases(parts: usize) -> Vec<(&'static str, Archipelago)> {
    let n = parts;
    let de = |f, p| {
        job(
            f,
            20,
            48,
            90,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            p,
            7,
        )
    };
    let pso = |f, p| {
        Job::builder(f, 16)
            .pop(64)
            .generations(120)
            .bounds(BoundPolicy::Clip)
            .precision(p)
            .seed(8)
            .build()
            .expect("valid job")
    };
    let cases = [
        (
            "DE ring",
            de(Function::Rastrigin, Precision::F32),
            Algorithm::De,
            Topology::Ring,
            Emigrants::Best,
            Replacement::Worst,
            11,
        ),
        (
            "DE random ring",
            de(Function::Griewank, Precision::F64),
            Algorithm::De,
            Topology::Random,
            Emigrants::Random,
            Replacement::Random,
            7,
        ),
        (
            "PSO full",
            pso(Function::Ackley, Precision::F32),
            Algorithm::Pso(Pso::default()),
            Topology::Full,
            Emigrants::Best,
            Replacement::Random,
            5,
        ),
        (
            "GA ring",
            pso(Function::Rastrigin, Precision::F64),
            Algorithm::Ga(Ga::default()),
            Topology::Ring,
            Emigrants::Best,
            Replacement::Worst,
            3 * n as u32 + 1,
        ),
    ];
    cases
        .into_iter()
        .map(|(what, template, alg, t, em, rep, islands)| {
            let a = Archipelago::builder(template, islands)
                .algorithm(alg)
                .topology(t)
                .emigrants(em)
                .replacement(rep)
                .interval(10)
                .migrants(2)
                .build()
                .expect("valid archipelago");
            (what, a)
        })
        .collect()
}

fn several_gpus_share_one_archipelago_with_one_gpus_bits(_: &CudaEngine) {
    let (one, all) = one_and_all();
    let n = all.gpus();
    for (what, a) in split_cases(n) {
        let islands = a.islands();
        let x = one.run_archipelago(&a, None).expect("one GPU");
        let y = all.run_archipelago(&a, None).expect("every GPU");
        assert!(x.migrations > 0, "{what}: events happened");
        same_archipelago(&x, &y, what);
        // On one GPU every island shares the launches; on several, a part of them each.
        assert_eq!(x.overall.launch_runs, islands, "{what}");
        assert!(
            y.islands
                .iter()
                .all(|r| r.launch_runs <= islands.div_ceil(n as u32)),
            "{what}: {:?}",
            y.islands.iter().map(|r| r.launch_runs).collect::<Vec<_>>()
        );
    }
}

/// The split's code on any GPU count: one archipelago cut into two and three parts,
/// each on an engine of its own (on one GPU, engines of the same GPU, one part after
/// the other), against the whole archipelago on one engine.
fn one_archipelago_in_parts_has_its_bits(e: &CudaEngine) {
    let more: Vec<CudaEngine> = (0..2)
        .map(|_| gpude::cuda_engine(0, 4).expect("a second engine on GPU 0"))
        .collect();
    for parts in [2, 3] {
        let engines: Vec<&CudaEngine> = std::iter::once(e).chain(&more).take(parts).collect();
        for (what, a) in split_cases(parts) {
            let x = e
                .run_archipelagos(std::slice::from_ref(&a), None)
                .expect("whole")
                .swap_remove(0);
            let y = gpude::host::cuda::run_archipelago_across(&engines, &a).expect("in parts");
            assert!(x.migrations > 0, "{what}: events happened");
            same_archipelago(&x, &y, &format!("{what} in {parts} parts"));
            let sizes: Vec<u32> = y.islands.iter().map(|r| r.launch_runs).collect();
            assert!(sizes.iter().all(|&s| s < a.islands()), "{what}: {sizes:?}");
        }
    }
    // Kept, the state at the end is the one engine's; stopped before the start, nothing
    // runs and the archipelago comes back as it was.
    let (what, a) = split_cases(2).swap_remove(1);
    let kept = |w: &mut IslandsWatch, whole: bool| {
        let entry = ArchipelagoEntry::Pending(a.clone());
        let r = if whole {
            e.run_archipelago_entries(vec![entry], w)
        } else {
            gpude::host::cuda::run_across_entries(&[e, &more[0]], entry, w)
        };
        r.expect("an archipelago under a watch").swap_remove(0)
    };
    let x = kept(
        &mut IslandsWatch {
            keep: true,
            ..Default::default()
        },
        true,
    );
    let y = kept(
        &mut IslandsWatch {
            keep: true,
            ..Default::default()
        },
        false,
    );
    match (&x.entry, &y.entry) {
        (ArchipelagoEntry::Started(c), ArchipelagoEntry::Started(d)) => {
            assert_eq!(
                (c.generation, c.migrations),
                (d.generation, d.migrations),
                "{what}"
            );
            // Debug prints an empty record (NaN) alike on both sides.
            assert_eq!(
                format!("{:?}", c.islands),
                format!("{:?}", d.islands),
                "{what}"
            );
        }
        _ => panic!("{what}: no state kept"),
    }
    let stop = AtomicBool::new(true);
    let z = kept(
        &mut IslandsWatch {
            stop: Some(&stop),
            ..Default::default()
        },
        false,
    );
    assert!(z.result.is_none(), "{what}: stopped before the start");
    assert!(matches!(z.entry, ArchipelagoEntry::Pending(_)), "{what}");
    // What it refuses: fewer islands than parts.
    let (_, a) = split_cases(2).swap_remove(0);
    let b = Archipelago::builder(a.template().clone(), 1)
        .build()
        .expect("one island");
    let err = gpude::host::cuda::run_archipelago_across(&[e, &more[0]], &b).unwrap_err();
    assert!(err.to_string().contains("1 islands on 2 engines"), "{err}");
}
