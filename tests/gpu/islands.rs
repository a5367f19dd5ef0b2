//! Islands on the GPU against the CPU engine: DE archipelagos (every row source of the
//! batch layout), particle swarms and the GA, every topology and migration rule, both
//! precisions, with and without a target, several archipelagos in one launch.

use crate::Test;
use crate::common::job;
use gpude::host::cpu::islands::run_cpu;
use gpude::{
    Algorithm, Archipelago, ArchipelagoResult, BatchKernel, BoundPolicy, Crossover, CudaEngine,
    Emigrants, Function, Ga, Job, Precision, Pso, Replacement, Strategy, Topology,
};

pub fn tests() -> Vec<Test> {
    tests![
        de_islands_match_cpu_bit_for_bit,
        pso_islands_match_cpu_bit_for_bit,
        ga_islands_match_cpu_bit_for_bit,
        islands_stop_at_the_target_as_on_the_cpu
    ]
}

/// Everything an archipelago's result says, as bits.
fn bits(r: &ArchipelagoResult) -> Vec<(u64, Vec<u64>, u32, u64)> {
    let one = |x: &gpude::RunResult| {
        (
            x.best_f.to_bits(),
            x.best_x.iter().map(|v| v.to_bits()).collect(),
            x.generations,
            x.evaluations,
        )
    };
    let mut v: Vec<_> = r.islands.iter().map(one).collect();
    v.push(one(&r.overall));
    v
}

/// Runs `archs` on the GPU (in one call: compatible ones share launches) and each on
/// the CPU, and compares them bit for bit.
fn same_as_cpu(e: &CudaEngine, archs: &[Archipelago], what: &str) {
    let gpu = e.run_archipelagos(archs, None).expect("GPU islands");
    assert_eq!(gpu.len(), archs.len(), "{what}");
    for (k, (a, g)) in archs.iter().zip(&gpu).enumerate() {
        let c = run_cpu(a, None);
        assert_eq!(g.migrations, c.migrations, "{what} #{k}: migrations");
        assert_eq!(g.first_hit, c.first_hit, "{what} #{k}: first hit");
        assert_eq!(g.best_island, c.best_island, "{what} #{k}: best island");
        assert_eq!(bits(g), bits(&c), "{what} #{k}: results");
        assert_eq!(g.overall.layout.name(), "islands", "{what}");
    }
}

#[allow(clippy::too_many_arguments)]
fn archipelagos(
    template: &Job,
    runs: u32,
    islands: u32,
    t: Topology,
    interval: u32,
    k: u32,
    em: Emigrants,
    rep: Replacement,
    alg: Algorithm,
) -> Vec<Archipelago> {
    (0..runs)
        .map(|r| {
            Archipelago::builder(template.clone().with_stream(r), islands)
                .topology(t)
                .interval(interval)
                .migrants(k)
                .emigrants(em)
                .replacement(rep)
                .algorithm(alg)
                .build()
                .expect("valid archipelago")
        })
        .collect()
}

/// DE islands: the thesis strategy and classic ones, every topology and rule, both
/// precisions, on the global-memory, resident and pipelined row sources.
fn de_islands_match_cpu_bit_for_bit(e: &CudaEngine) {
    let saved = e.batch_kernel();
    use Emigrants as E;
    use Replacement as R;
    use Topology as T;
    let cases = [
        (
            Function::Rastrigin,
            30,
            64,
            Strategy::Thesis,
            BoundPolicy::InitOnly,
            Precision::F32,
            T::Ring,
            E::Best,
            R::Worst,
            1,
        ),
        (
            Function::Ackley,
            20,
            48,
            Strategy::Rand1,
            BoundPolicy::Clip,
            Precision::F32,
            T::Full,
            E::Random,
            R::Random,
            2,
        ),
        (
            Function::Griewank,
            40,
            40,
            Strategy::Best1,
            BoundPolicy::Reflect,
            Precision::F64,
            T::Random,
            E::Best,
            R::Random,
            3,
        ),
        (
            Function::Sphere,
            7,
            32,
            Strategy::CurrentToBest1,
            BoundPolicy::Resample,
            Precision::F64,
            T::Ring,
            E::Random,
            R::Worst,
            2,
        ),
    ];
    for (f, d, np, s, b, p, t, em, rep, k) in cases {
        let tmpl = job(f, d, np, 60, s, Crossover::Binomial, b, p, 5).with_seed(5);
        let archs = archipelagos(&tmpl, 3, 5, t, 7, k, em, rep, Algorithm::De);
        let mut kernels = vec![BatchKernel::Global, BatchKernel::Shared];
        if p == Precision::F32 {
            kernels.push(BatchKernel::Pipelined);
        }
        for kern in kernels {
            e.set_batch_kernel(kern);
            same_as_cpu(
                e,
                &archs,
                &format!("{f:?} D={d} {s:?} {t:?} {em:?}→{rep:?} K={k} {p:?} {kern:?}"),
            );
        }
    }
    e.set_batch_kernel(saved);
}

/// Particle swarms: the paper's settings and others, every topology and rule, both
/// precisions, clip and resample.
fn pso_islands_match_cpu_bit_for_bit(e: &CudaEngine) {
    use Emigrants as E;
    use Replacement as R;
    use Topology as T;
    let cases = [
        (
            Function::Rastrigin,
            30,
            128,
            BoundPolicy::Clip,
            Precision::F32,
            T::Ring,
            E::Best,
            R::Worst,
            1,
        ),
        (
            Function::Weierstrass,
            10,
            64,
            BoundPolicy::Clip,
            Precision::F64,
            T::Full,
            E::Random,
            R::Random,
            1,
        ),
        (
            Function::Schwefel12,
            12,
            50,
            BoundPolicy::Resample,
            Precision::F32,
            T::Random,
            E::Best,
            R::Random,
            2,
        ),
        (
            Function::Ackley,
            33,
            96,
            BoundPolicy::Reflect,
            Precision::F64,
            T::Ring,
            E::Random,
            R::Worst,
            3,
        ),
    ];
    for (f, d, np, b, p, t, em, rep, k) in cases {
        let tmpl = job(f, d, np, 50, Strategy::Rand1, Crossover::Binomial, b, p, 9);
        let archs = archipelagos(
            &tmpl,
            3,
            4,
            t,
            5,
            k,
            em,
            rep,
            Algorithm::Pso(Pso::default()),
        );
        same_as_cpu(
            e,
            &archs,
            &format!("PSO {f:?} D={d} {t:?} {em:?}→{rep:?} K={k} {p:?}"),
        );
    }
}

/// The GA: the paper's settings and others, every topology and rule, both precisions,
/// the bound policies.
fn ga_islands_match_cpu_bit_for_bit(e: &CudaEngine) {
    use Emigrants as E;
    use Replacement as R;
    use Topology as T;
    let strong = Ga {
        crossover: 0.9,
        mutation: 0.5,
        ..Ga::default()
    };
    #[rustfmt::skip]
    let cases = [
        (Function::Rastrigin, 30, 64, BoundPolicy::Clip, Precision::F32, T::Ring, E::Best, R::Worst, 2, Ga::default()),
        (Function::Ackley, 10, 40, BoundPolicy::Reflect, Precision::F64, T::Full, E::Random, R::Random, 1, strong),
        (Function::Griewank, 45, 33, BoundPolicy::Resample, Precision::F32, T::Random, E::Best, R::Random, 2, strong),
        (Function::Schwefel12, 8, 64, BoundPolicy::Clip, Precision::F64, T::Ring, E::Random, R::Worst, 3, Ga::default()),
    ];
    for (f, d, np, b, p, t, em, rep, k, ga) in cases {
        let tmpl = job(f, d, np, 50, Strategy::Rand1, Crossover::Binomial, b, p, 13);
        let archs = archipelagos(&tmpl, 3, 4, t, 5, k, em, rep, Algorithm::Ga(ga));
        same_as_cpu(
            e,
            &archs,
            &format!("GA {f:?} D={d} {t:?} {em:?}→{rep:?} K={k} {p:?}"),
        );
    }
}

/// With a target, each archipelago stops after the first generation at which one of
/// its islands reaches it, also inside a stretch between two events, while the others
/// of the launch go on.
fn islands_stop_at_the_target_as_on_the_cpu(e: &CudaEngine) {
    for alg in [
        Algorithm::De,
        Algorithm::Pso(Pso::default()),
        Algorithm::Ga(Ga::default()),
    ] {
        for p in [Precision::F32, Precision::F64] {
            let tmpl = Job::builder(Function::Sphere, 10)
                .pop(40)
                .generations(400)
                .strategy(Strategy::Thesis)
                .bounds(BoundPolicy::Clip)
                .target(1e-3)
                .precision(p)
                .seed(3)
                .build()
                .expect("valid job");
            let archs = archipelagos(
                &tmpl,
                6,
                3,
                Topology::Ring,
                10,
                1,
                Emigrants::Best,
                Replacement::Worst,
                alg,
            );
            let gpu = e.run_archipelagos(&archs, None).expect("GPU islands");
            let hits: Vec<Option<u32>> = gpu.iter().map(|r| r.first_hit).collect();
            assert!(hits.iter().all(Option::is_some), "{hits:?}");
            // Some run must end inside a stretch for the test to test that.
            assert!(
                hits.iter().any(|h| h.is_some_and(|g| g % 10 != 0)),
                "{hits:?}"
            );
            same_as_cpu(e, &archs, &format!("target {} {p:?}", alg.name()));
        }
    }
}
