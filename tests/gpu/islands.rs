//! Islands on the GPU against the CPU engine: DE archipelagos (every row source of the
//! batch layout), particle swarms and the GA, every topology and migration rule, both
//! precisions, with and without a target, several archipelagos in one launch.

use crate::Test;
use crate::common::job;
use gpude::checkpoint::ArchipelagoEntry;
use gpude::cpu::Flow;
use gpude::host::cpu::islands::{run_cpu, run_entries};
use gpude::{
    Algorithm, Archipelago, ArchipelagoResult, BatchKernel, BoundPolicy, Crossover, CudaEngine,
    Emigrants, Function, Ga, IslandsWatch, Job, Precision, Pso, Replacement, Strategy, Topology,
};

pub fn tests() -> Vec<Test> {
    tests![
        de_islands_match_cpu_bit_for_bit,
        pso_islands_match_cpu_bit_for_bit,
        ga_islands_match_cpu_bit_for_bit,
        islands_stop_at_the_target_as_on_the_cpu,
        island_checkpoints_equal_the_cpu_engines_and_go_on_with_the_same_bits,
        adaptive_islands_match_cpu_bit_for_bit
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
        let c = run_cpu(a, None).expect("the CPU engine runs it");
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
    // DE with the thesis strategy, the swarms, the GA, and adaptive DE (JADE, L-SHADE:
    // the adaptive kernels' state put back for a rerun).
    for (alg, strategy) in [
        (Algorithm::De, Strategy::Thesis),
        (Algorithm::Pso(Pso::default()), Strategy::Thesis),
        (Algorithm::Ga(Ga::default()), Strategy::Thesis),
        (Algorithm::De, Strategy::Jade),
        (Algorithm::De, Strategy::LShade),
    ] {
        for p in [Precision::F32, Precision::F64] {
            let b = Job::builder(Function::Sphere, 10).pop(40);
            let b = if strategy.is_adaptive() {
                b.max_evaluations(40 * 401)
            } else {
                b.generations(400)
            };
            let tmpl = b
                .strategy(strategy)
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
            same_as_cpu(
                e,
                &archs,
                &format!("target {} {strategy:?} {p:?}", alg.name()),
            );
        }
    }
}

/// Runs entries on the GPU (`gpu`) or the CPU, saving every `every` generations; the
/// final entries (results and states) and the saved lists.
fn run_saving(
    e: Option<&CudaEngine>,
    entries: Vec<ArchipelagoEntry>,
    every: u32,
    stop_at: Option<u32>,
) -> (Vec<gpude::ArchipelagoRan>, Vec<Vec<ArchipelagoEntry>>) {
    let mut saved = Vec::new();
    let mut save = |l: &[ArchipelagoEntry]| {
        saved.push(l.to_vec());
        Flow::Continue
    };
    let observe = move |g: u32, _: f64| match stop_at {
        Some(s) if g >= s => Flow::Stop,
        _ => Flow::Continue,
    };
    let mut watch = IslandsWatch {
        observer: stop_at.map(|_| &observe as &(dyn Fn(u32, f64) -> Flow + Sync)),
        every,
        save: Some(&mut save),
        keep: true,
        ..IslandsWatch::default()
    };
    let ran = match e {
        Some(e) => e.run_archipelago_entries(entries, &mut watch),
        None => run_entries(entries, &mut watch),
    }
    .expect("the archipelagos run");
    (ran, saved)
}

/// Checkpoints of archipelagos: the GPU's saves (every 6 generations, between and at
/// migration events) equal the CPU engine's bit for bit, for DE on each row source, PSO
/// and the GA; the GPU goes on from the CPU's checkpoints (and its own) to the results
/// of a run that never stopped; an observer's stop ends a GPU run with a state that
/// goes on as well.
fn island_checkpoints_equal_the_cpu_engines_and_go_on_with_the_same_bits(e: &CudaEngine) {
    let saved_kernel = e.batch_kernel();
    #[rustfmt::skip]
    let cases = [
        (Algorithm::De, Function::Rastrigin, Precision::F32, Topology::Ring, Replacement::Worst, BatchKernel::Global),
        (Algorithm::De, Function::Ackley, Precision::F64, Topology::Random, Replacement::Random, BatchKernel::Shared),
        (Algorithm::De, Function::Griewank, Precision::F32, Topology::Full, Replacement::Random, BatchKernel::Pipelined),
        (Algorithm::Pso(Pso::default()), Function::Weierstrass, Precision::F32, Topology::Ring, Replacement::Random, BatchKernel::Global),
        (Algorithm::Ga(Ga::default()), Function::Schwefel12, Precision::F64, Topology::Random, Replacement::Random, BatchKernel::Global),
    ];
    for (alg, f, p, t, rep, kern) in cases {
        e.set_batch_kernel(kern);
        let what = format!("{} {f:?} {p:?} {t:?} {rep:?} {kern:?}", alg.name());
        let tmpl = job(
            f,
            12,
            40,
            40,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::Clip,
            p,
            21,
        );
        let archs = archipelagos(&tmpl, 2, 4, t, 4, 2, Emigrants::Random, rep, alg);
        let pending: Vec<ArchipelagoEntry> = archs
            .iter()
            .cloned()
            .map(ArchipelagoEntry::Pending)
            .collect();
        let (cpu, cpu_saves) = run_saving(None, pending.clone(), 6, None);
        let (gpu, gpu_saves) = run_saving(Some(e), pending.clone(), 6, None);
        // The CPU runs one archipelago after the other, the GPU both at once: compare
        // each archipelago's saves at each generation.
        let at = |saves: &[Vec<ArchipelagoEntry>], k: usize| -> Vec<ArchipelagoEntry> {
            saves
                .iter()
                .map(|l| l[k].clone())
                .filter(|x| matches!(x, ArchipelagoEntry::Started(c) if c.generation % 6 == 0 && c.generation < 40))
                .fold(Vec::new(), |mut v: Vec<ArchipelagoEntry>, x| {
                    if !v.contains(&x) {
                        v.push(x);
                    }
                    v
                })
        };
        for k in 0..2 {
            let (c, g) = (at(&cpu_saves, k), at(&gpu_saves, k));
            assert_eq!(c.len(), 6, "{what}: CPU saves of archipelago {k}");
            assert_eq!(c.len(), g.len(), "{what}: saves of archipelago {k}");
            for (x, y) in c.iter().zip(&g) {
                let (ArchipelagoEntry::Started(x), ArchipelagoEntry::Started(y)) = (x, y) else {
                    unreachable!()
                };
                assert_eq!(x.generation, y.generation, "{what}");
                assert_eq!(x.migrations, y.migrations, "{what} at {}", x.generation);
                assert!(
                    x.islands == y.islands,
                    "{what}: the islands' states at {}",
                    x.generation
                );
            }
            let (ArchipelagoEntry::Started(x), ArchipelagoEntry::Started(y)) =
                (&cpu[k].entry, &gpu[k].entry)
            else {
                panic!("{what}: final states")
            };
            assert!(x.islands == y.islands, "{what}: final states of {k}");
            assert_eq!(
                bits(cpu[k].result.as_ref().unwrap()),
                bits(gpu[k].result.as_ref().unwrap()),
                "{what}: results of {k}"
            );
        }
        // The GPU goes on from the CPU's save of the second archipelago after generation
        // 18 (the first has ended: they run apart), and from its own after 12.
        let at_gen = |x: &ArchipelagoEntry, g: u32| matches!(x, ArchipelagoEntry::Started(c) if c.generation == g);
        for from in [
            cpu_saves.iter().find(|l| at_gen(&l[1], 18)),
            gpu_saves.iter().find(|l| l.iter().all(|x| at_gen(x, 12))),
        ] {
            let from = from.unwrap_or_else(|| panic!("{what}: a save of both archipelagos"));
            let (resumed, _) = run_saving(Some(e), from.clone(), 0, None);
            for k in 0..2 {
                assert_eq!(
                    bits(resumed[k].result.as_ref().unwrap()),
                    bits(cpu[k].result.as_ref().unwrap()),
                    "{what}: resumed {k}"
                );
                assert_eq!(
                    resumed[k].result.as_ref().unwrap().migrations,
                    cpu[k].result.as_ref().unwrap().migrations
                );
            }
        }
        // A CPU run to generation 12 (an event the short run skipped) goes on on the GPU
        // to the limit of 40 with the long run's bits.
        let short = archs[0].with_generations(12).expect("a lower limit");
        let (ran, _) = run_saving(None, vec![ArchipelagoEntry::Pending(short)], 0, None);
        let mut entry = ran[0].entry.clone();
        entry.set_generations(40).expect("a higher limit");
        let (resumed, _) = run_saving(Some(e), vec![entry], 0, None);
        assert_eq!(
            bits(resumed[0].result.as_ref().unwrap()),
            bits(cpu[0].result.as_ref().unwrap()),
            "{what}: limit raised from 12 to 40"
        );
        // An observer's stop (one archipelago: it watches) lands at the end of a stretch;
        // the state there goes on, on the CPU, to the same bits.
        let one = vec![pending[0].clone()];
        let (stopped, _) = run_saving(Some(e), one, 6, Some(10));
        let r = stopped[0].result.as_ref().unwrap();
        assert_eq!(r.overall.termination, gpude::Termination::Stopped, "{what}");
        assert_eq!(
            r.overall.generations, 12,
            "{what}: the stretch 8–12 ends at the save"
        );
        let (resumed, _) = run_saving(None, vec![stopped[0].entry.clone()], 0, None);
        assert_eq!(
            bits(resumed[0].result.as_ref().unwrap()),
            bits(cpu[0].result.as_ref().unwrap()),
            "{what}: stopped on the GPU, resumed on the CPU"
        );
    }
    e.set_batch_kernel(saved_kernel);
}

/// Adaptive DE islands (jDE, JADE, SHADE, L-SHADE, jSO): each island's population,
/// memory and archive in the adaptive kernels, which go on from their buffers after
/// each event; the events over the islands' current sizes (L-SHADE's and jSO's shrink);
/// every topology and rule, both precisions: the CPU engine's bits.
fn adaptive_islands_match_cpu_bit_for_bit(e: &CudaEngine) {
    use Emigrants as E;
    use Replacement as R;
    use Topology as T;
    #[rustfmt::skip]
    let cases = [
        (Strategy::Jde, Function::Rastrigin, Precision::F32, T::Ring, E::Best, R::Worst, 1, 5),
        (Strategy::Jade, Function::Ackley, Precision::F64, T::Random, E::Random, R::Random, 2, 4),
        (Strategy::Shade, Function::Griewank, Precision::F32, T::Full, E::Best, R::Random, 1, 7),
        (Strategy::LShade, Function::Rastrigin, Precision::F64, T::Ring, E::Random, R::Worst, 1, 6),
        (Strategy::Jso, Function::Schwefel12, Precision::F32, T::Random, E::Best, R::Random, 1, 5),
    ];
    for (s, f, p, t, em, rep, k, interval) in cases {
        let tmpl = Job::builder(f, 10)
            .pop(24)
            .strategy(s)
            .max_evaluations(3_000)
            .precision(p)
            .seed(17)
            .build()
            .expect("valid adaptive job");
        let archs = archipelagos(&tmpl, 3, 4, t, interval, k, em, rep, Algorithm::De);
        same_as_cpu(
            e,
            &archs,
            &format!("{s:?} {f:?} {p:?} {t:?} {em:?}→{rep:?} K={k} every {interval}"),
        );
        let r = e.run_archipelagos(&archs[..1], None).expect("GPU islands");
        assert!(r[0].migrations > 0, "{s:?}: events ran");
        assert!(
            r[0].islands.iter().all(|i| i.evaluations == 3_000),
            "{s:?}: every island spends its budget"
        );
    }
}
