//! Tests of the archipelago: migration on hand-built islands, determinism, and the
//! non-migrating limit.

use super::*;
use crate::run::checkpoint::{decode_archipelagos, encode_archipelagos, is_archipelago_file};
use gpude_device::migration::word;
use gpude_device::philox::below;
use gpude_device::{BoundPolicy, Function, Strategy};

/// Island `k`'s individual `i` is the row `[10k + i, −(10k + i)]`: a label to follow.
fn label(k: usize, i: usize) -> [f64; 2] {
    let v = (10 * k + i) as f64;
    [v, -v]
}

/// Three DE islands of four individuals (D = 2) with the given values.
fn hand_built(a: &Archipelago, fits: [[f64; 4]; 3]) -> Vec<Island<f64>> {
    (0..3)
        .map(|k| {
            let job = a.island_job(k as u32);
            let mut x = Vec::new();
            for i in 0..4 {
                x.extend_from_slice(&label(k, i));
            }
            let pop = Population {
                dim: 2,
                x,
                fit: fits[k].to_vec(),
                lo: vec![-100.0; 2],
                hi: vec![100.0; 2],
                kc: vec![[0.0; 4]],
            };
            let best = pop.best();
            Island {
                job,
                state: State::De {
                    pop,
                    best,
                    scratch: Vec::new(),
                },
                rec_f: f64::NAN,
                rec_x: Vec::new(),
                history: None,
            }
        })
        .collect()
}

fn rows_of(isl: &Island<f64>) -> (Vec<[f64; 2]>, Vec<f64>) {
    let (x, fit) = isl.members();
    (x.chunks(2).map(|r| [r[0], r[1]]).collect(), fit.to_vec())
}

fn template(pop: u32) -> Job {
    Job::builder(Function::Sphere, 2)
        .pop(pop)
        .seed(5)
        .generations(100)
        .build()
        .unwrap()
}

#[test]
fn ring_of_three_two_migrants_best_to_worst() {
    let a = Archipelago::builder(template(4), 3)
        .topology(Topology::Ring)
        .migrants(2)
        .interval(10)
        .build()
        .unwrap();
    // Island 0: values 5, 1, 3, 2 → best first 1, 3; worst first 0, 2.
    // Island 1: values 0.5, 4, 4, 9 → best 0, 1 (equal values: lower index first);
    //           worst 3, 2 (equal values: higher index is worse).
    // Island 2: values 7, 6, 8, 0.25 → best 3, 1; worst 2, 0.
    let mut isl = hand_built(
        &a,
        [
            [5.0, 1.0, 3.0, 2.0],
            [0.5, 4.0, 4.0, 9.0],
            [7.0, 6.0, 8.0, 0.25],
        ],
    );
    migrate(&a, &mut isl, 10);
    // Island k receives from k + 1: its m-th worst takes the source's m-th best.
    // 0 ← 1: slot 0 ← (1,0) 0.5, slot 2 ← (1,1) 4.
    // 1 ← 2: slot 3 ← (2,3) 0.25, slot 2 ← (2,1) 6.
    // 2 ← 0: slot 2 ← (0,1) 1, slot 0 ← (0,3) 2.
    let want = [
        (
            vec![label(1, 0), label(0, 1), label(1, 1), label(0, 3)],
            vec![0.5, 1.0, 4.0, 2.0],
        ),
        (
            vec![label(1, 0), label(1, 1), label(2, 1), label(2, 3)],
            vec![0.5, 4.0, 6.0, 0.25],
        ),
        (
            vec![label(0, 3), label(2, 1), label(0, 1), label(2, 3)],
            vec![2.0, 6.0, 1.0, 0.25],
        ),
    ];
    for (k, w) in want.iter().enumerate() {
        assert_eq!(&rows_of(&isl[k]), w, "island {k}");
    }
    // The bests are recomputed: island 0 now holds 0.5 at slot 0, island 1 0.25 at 3.
    assert_eq!([isl[0].best(), isl[1].best(), isl[2].best()], [0, 3, 3]);
    // With worst replacement no record is taken at the event (an island keeps its
    // best); the best values held are the new bests.
    assert!(isl.iter().all(|i| i.rec_f.is_nan()));
    assert_eq!(
        [isl[0].held(), isl[1].held(), isl[2].held()],
        [0.5, 0.25, 0.25]
    );
}

#[test]
fn full_topology_takes_every_other_island_in_order() {
    let a = Archipelago::builder(template(4), 3)
        .topology(Topology::Full)
        .migrants(1)
        .build()
        .unwrap();
    // Bests: island 0 → slot 1 (1), island 1 → slot 0 (0.5), island 2 → slot 3 (0.25).
    // Island 0 receives from 1 then 2 into its worst two (0, then 2): 0 ← (1,0), 2 ← (2,3).
    // Island 1 receives from 2 then 0 into 3, then 2: 3 ← (2,3), 2 ← (0,1).
    // Island 2 receives from 0 then 1 into 2, then 0: 2 ← (0,1), 0 ← (1,0).
    let mut isl = hand_built(
        &a,
        [
            [5.0, 1.0, 3.0, 2.0],
            [0.5, 4.0, 4.0, 9.0],
            [7.0, 6.0, 8.0, 0.25],
        ],
    );
    migrate(&a, &mut isl, 1);
    assert_eq!(
        rows_of(&isl[0]).0,
        vec![label(1, 0), label(0, 1), label(2, 3), label(0, 3)]
    );
    assert_eq!(
        rows_of(&isl[1]).0,
        vec![label(1, 0), label(1, 1), label(0, 1), label(2, 3)]
    );
    assert_eq!(
        rows_of(&isl[2]).0,
        vec![label(1, 0), label(2, 1), label(0, 1), label(2, 3)]
    );
}

#[test]
fn random_rules_read_the_snapshot() {
    // Random emigrants and random targets overlap, so an island may send an individual
    // that another island's newcomer has replaced by then in some order of work: the
    // event must use the snapshot. Recompute the event from the words by hand.
    let a = Archipelago::builder(template(4), 3)
        .topology(Topology::Ring)
        .migrants(3)
        .emigrants(Emigrants::Random)
        .replacement(Replacement::Random)
        .build()
        .unwrap();
    let fits = [
        [5.0, 1.0, 3.0, 2.0],
        [0.5, 4.0, 4.0, 9.0],
        [7.0, 6.0, 8.0, 0.25],
    ];
    let mut isl = hand_built(&a, fits);
    let g = 7;
    migrate(&a, &mut isl, g);
    let key = key_of(5);
    // Three distinct draws out of four, as `draw_distinct` defines them.
    let draws = |stream: u32, slot: u32| {
        let mut taken: Vec<u32> = Vec::new();
        for m in 0..3u32 {
            let t = below(word(key, stream, g, slot, m), 4 - m);
            let free: Vec<u32> = (0..4).filter(|v| !taken.contains(v)).collect();
            taken.push(free[t as usize]);
        }
        taken
    };
    for k in 0..3usize {
        let src = (k + 1) % 3;
        let emig = draws(src as u32, EMIGRANT_SLOT);
        let targ = draws(k as u32, REPLACE_SLOT);
        let mut want_rows: Vec<[f64; 2]> = (0..4).map(|i| label(k, i)).collect();
        let mut want_fit = fits[k].to_vec();
        for m in 0..3 {
            want_rows[targ[m] as usize] = label(src, emig[m] as usize);
            want_fit[targ[m] as usize] = fits[src][emig[m] as usize];
        }
        assert_eq!(rows_of(&isl[k]), (want_rows, want_fit), "island {k}");
    }
}

#[test]
fn the_builder_checks_its_values() {
    let err = |b: ArchipelagoBuilder| b.build().unwrap_err().to_string();
    let e = err(Archipelago::builder(template(4), 3).migrants(4));
    assert!(e.contains("migrants") && e.contains("Np = 4"), "{e}");
    // Full topology over 3 islands: 2 migrants × 2 sources = 4, not below 4.
    let e = err(Archipelago::builder(template(4), 3)
        .topology(Topology::Full)
        .migrants(2));
    assert!(e.contains("2 × 2 = 4"), "{e}");
    assert!(err(Archipelago::builder(template(4), 0)).contains("number of islands"));
    assert!(err(Archipelago::builder(template(4), 2).interval(0)).contains("interval"));
    assert!(err(Archipelago::builder(template(4), 2).migrants(0)).contains("migrants"));
    let far = template(4).with_stream(u32::MAX / 2);
    assert!(err(Archipelago::builder(far, 3)).contains("stream"));
    let bad = Pso {
        c1: 9.0,
        ..Pso::default()
    };
    assert!(
        err(Archipelago::builder(template(4), 2).algorithm(Algorithm::Pso(bad))).contains("c1")
    );
    // One island never migrates, so any number of migrants below Np is fine; the
    // interval defaults to 1 % of the generations.
    let a = Archipelago::builder(template(4), 1).build().unwrap();
    assert_eq!((a.incoming(), a.interval()), (0, 1));
    let long = template(4).with_generation_limit(12_345);
    assert_eq!(
        Archipelago::builder(long, 2).build().unwrap().interval(),
        123
    );
}

fn de_job(strategy: Strategy, gens: u32) -> Job {
    Job::builder(Function::Rastrigin, 6)
        .pop(12)
        .strategy(strategy)
        .bounds(BoundPolicy::Reflect)
        .generations(gens)
        .seed(77)
        .stream(2)
        .build()
        .unwrap()
}

fn same_bits(a: &RunResult, b: &RunResult) -> bool {
    a.best_f.to_bits() == b.best_f.to_bits()
        && a.best_x.len() == b.best_x.len()
        && a.best_x
            .iter()
            .zip(b.best_x.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
        && a.generations == b.generations
        && a.evaluations == b.evaluations
}

#[test]
fn an_interval_past_the_end_gives_the_separate_runs() {
    for (strategy, gens) in [(Strategy::Thesis, 15), (Strategy::Rand1, 12)] {
        let job = de_job(strategy, gens);
        for interval in [gens, gens + 1, 1000] {
            let a = Archipelago::builder(job.clone(), 3)
                .interval(interval)
                .migrants(2)
                .build()
                .unwrap();
            let r = run::<f32>(&a, None).unwrap();
            assert_eq!(r.migrations, 0);
            for k in 0..3 {
                let alone = cpu::run::<f32>(&a.island_job(k), None).expect("runs");
                assert_eq!(alone.stream, 2 * 3 + k);
                assert!(
                    same_bits(&r.islands[k as usize], &alone),
                    "{strategy:?} island {k}"
                );
            }
        }
        // Migrating changes the islands (and counts its events: after 4, 8, 12 < 15).
        let a = Archipelago::builder(job.clone(), 3)
            .interval(4)
            .migrants(2)
            .build()
            .unwrap();
        let r = run::<f32>(&a, None).unwrap();
        assert_eq!(r.migrations, if gens == 15 { 3 } else { 2 });
        let differs = (0..3).any(|k| {
            !same_bits(
                &r.islands[k],
                &cpu::run::<f32>(&a.island_job(k as u32), None).expect("runs"),
            )
        });
        assert!(differs, "{strategy:?}");
    }
}

fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn the_same_bits_on_any_number_of_threads() {
    let cases = [
        (
            Algorithm::De,
            Topology::Random,
            Emigrants::Random,
            Replacement::Random,
        ),
        (
            Algorithm::De,
            Topology::Full,
            Emigrants::Best,
            Replacement::Worst,
        ),
        (
            Algorithm::Pso(Pso::default()),
            Topology::Ring,
            Emigrants::Best,
            Replacement::Random,
        ),
    ];
    for (alg, topo, em, rep) in cases {
        let a = Archipelago::builder(de_job(Strategy::CurrentToBest1, 25), 4)
            .algorithm(alg)
            .topology(topo)
            .emigrants(em)
            .replacement(rep)
            .migrants(2)
            .interval(3)
            .build()
            .unwrap();
        let one = in_pool(1, || run::<f32>(&a, None).unwrap());
        let three = in_pool(3, || run::<f32>(&a, None).unwrap());
        assert_eq!(one.migrations, 8);
        assert_eq!(one.best_island, three.best_island);
        for k in 0..4 {
            assert!(
                same_bits(&one.islands[k], &three.islands[k]),
                "{alg:?} {topo:?} island {k}"
            );
        }
        assert!(same_bits(&one.overall, &three.overall));
    }
}

#[test]
fn the_overall_best_is_the_best_island() {
    let job = Job::builder(Function::Sphere, 4)
        .pop(10)
        .generations(30)
        .history(true)
        .build()
        .unwrap();
    let a = Archipelago::builder(job, 3).interval(5).build().unwrap();
    let r = run::<f64>(&a, None).unwrap();
    let b = r.best_island;
    assert!(r.islands.iter().all(|i| i.best_f >= r.overall.best_f));
    assert_eq!(r.overall.best_f, r.islands[b].best_f);
    assert_eq!(r.overall.evaluations, 3 * 10 * 31);
    let h = r.overall.history.as_ref().unwrap();
    assert_eq!(h.len(), 31);
    assert!(h.windows(2).all(|w| w[1] <= w[0]));
    assert_eq!(*h.last().unwrap(), r.overall.best_f);
}

#[test]
fn pso_solves_the_sphere() {
    let job = Job::builder(Function::Sphere, 10)
        .pop(32)
        .generations(2000)
        .target(1e-8)
        .bounds(BoundPolicy::Clip)
        .precision(crate::job::precision::Precision::F64)
        .seed(3)
        .build()
        .unwrap();
    let a = Archipelago::builder(job, 4)
        .algorithm(Algorithm::Pso(Pso::default()))
        .interval(20)
        .build()
        .unwrap();
    let r = run_cpu(&a, None).unwrap();
    assert!(r.overall.error <= 1e-8, "error {}", r.overall.error);
    assert_eq!(
        r.overall.termination,
        crate::run::result::Termination::TargetReached
    );
    assert_eq!(r.first_hit, Some(r.overall.generations));
    assert!(r.overall.generations < 2000);
}

#[test]
fn pso_migration_moves_particles_and_personal_bests() {
    let job = Job::builder(Function::Sphere, 3)
        .pop(5)
        .seed(1)
        .build()
        .unwrap();
    let a = Archipelago::builder(job, 2)
        .algorithm(Algorithm::Pso(Pso::default()))
        .build()
        .unwrap();
    let mut isl: Vec<Island<f64>> = (0..2)
        .map(|k| Island::new(a.island_job(k), a.algorithm))
        .collect();
    let before: Vec<Swarm<f64>> = isl
        .iter()
        .map(|i| match &i.state {
            State::Pso(s) => s.clone(),
            _ => unreachable!(),
        })
        .collect();
    migrate(&a, &mut isl, 1);
    for k in 0..2 {
        let src = &before[1 - k];
        let mut worst = [0u32];
        select_worst(&before[k].pfit, &mut worst);
        let w = worst[0] as usize;
        let State::Pso(s) = &isl[k].state else {
            unreachable!()
        };
        let g = src.gbest;
        assert_eq!(s.pbest_row(w), src.pbest_row(g));
        assert_eq!(&s.x[w * 3..w * 3 + 3], src.pbest_row(g));
        assert_eq!(s.pfit[w], src.pfit[g]);
        assert_eq!(&s.v[w * 3..w * 3 + 3], &before[k].v[w * 3..w * 3 + 3]);
        assert_eq!(s.gbest, s.best());
    }
}

/// Every result of two archipelago runs, bit for bit (histories included).
fn same_archipelago(a: &ArchipelagoResult, b: &ArchipelagoResult) -> bool {
    let hist = |r: &RunResult| {
        r.history
            .as_ref()
            .map(|h| h.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
    };
    a.islands.len() == b.islands.len()
        && a.islands
            .iter()
            .zip(&b.islands)
            .all(|(x, y)| same_bits(x, y) && hist(x) == hist(y))
        && same_bits(&a.overall, &b.overall)
        && hist(&a.overall) == hist(&b.overall)
        && a.best_island == b.best_island
        && a.migrations == b.migrations
        && a.first_hit == b.first_hit
}

/// An entry with no time spent (two runs to the same state differ in that alone).
fn timeless(e: &ArchipelagoEntry) -> ArchipelagoEntry {
    let mut e = e.clone();
    if let ArchipelagoEntry::Started(c) = &mut e {
        c.elapsed = Duration::ZERO;
    }
    e
}

/// Archipelagos of each algorithm and rule that a checkpoint must carry over.
fn saved_cases() -> Vec<Archipelago> {
    let job = |f: Function, precision| {
        Job::builder(f, 5)
            .pop(12)
            .generations(23)
            .seed(9)
            .stream(1)
            .bounds(BoundPolicy::Clip)
            .precision(precision)
            .history(true)
            .build()
            .unwrap()
    };
    let de = Job::builder(Function::Rastrigin, 5)
        .pop(12)
        .generations(23)
        .seed(9)
        .strategy(Strategy::Best1)
        .history(true)
        .build()
        .unwrap();
    vec![
        Archipelago::builder(de, 3)
            .interval(4)
            .migrants(2)
            .build()
            .unwrap(),
        Archipelago::builder(job(Function::Ackley, Precision::F64), 4)
            .algorithm(Algorithm::Pso(Pso::default()))
            .topology(Topology::Random)
            .emigrants(Emigrants::Random)
            .replacement(Replacement::Random)
            .interval(3)
            .build()
            .unwrap(),
        Archipelago::builder(job(Function::Sphere, Precision::F32), 3)
            .algorithm(Algorithm::Ga(Ga::default()))
            .topology(Topology::Full)
            .replacement(Replacement::Random)
            .interval(5)
            .build()
            .unwrap(),
    ]
}

/// Runs entries on the CPU, saving every `every` generations into the list returned.
fn run_saving(
    entries: Vec<ArchipelagoEntry>,
    every: u32,
) -> (Vec<ArchipelagoRan>, Vec<Vec<ArchipelagoEntry>>) {
    let mut saved = Vec::new();
    let mut save = |l: &[ArchipelagoEntry]| {
        saved.push(l.to_vec());
        Flow::Continue
    };
    let mut watch = IslandsWatch {
        every,
        save: Some(&mut save),
        keep: true,
        ..IslandsWatch::default()
    };
    let ran = run_entries(entries, &mut watch).unwrap();
    (ran, saved)
}

#[test]
fn an_archipelago_goes_on_from_any_checkpoint_with_the_same_bits() {
    for a in saved_cases() {
        let straight = run_cpu(&a, None).unwrap();
        let (ran, saved) = run_saving(vec![ArchipelagoEntry::Pending(a.clone())], 5);
        assert!(same_archipelago(ran[0].result.as_ref().unwrap(), &straight));
        // Saves after generations 5, 10, 15, 20 (not at the limit, 23).
        let gens: Vec<u32> = saved
            .iter()
            .map(|l| match &l[0] {
                ArchipelagoEntry::Started(c) => c.generation,
                ArchipelagoEntry::Pending(_) => panic!("a save of a started archipelago"),
            })
            .collect();
        assert_eq!(gens, [5, 10, 15, 20], "{:?}", a.algorithm());
        for list in saved {
            // Through the file, as a resumed run reads it.
            let bytes = encode_archipelagos(&list).unwrap();
            let back = decode_archipelagos(&bytes).unwrap();
            assert_eq!(back, list);
            let (resumed, _) = run_saving(back, 0);
            let r = resumed[0].result.as_ref().unwrap();
            assert!(same_archipelago(r, &straight), "{:?}", a.algorithm());
            assert_eq!(timeless(&resumed[0].entry), timeless(&ran[0].entry));
        }
    }
}

#[test]
fn a_stopped_archipelago_reports_stopped_and_goes_on_from_where_it_stopped() {
    for a in saved_cases() {
        let straight = run_cpu(&a, None).unwrap();
        let stop_at = |g: u32, _: f64| if g >= 7 { Flow::Stop } else { Flow::Continue };
        let mut watch = IslandsWatch {
            observer: Some(&stop_at),
            ..IslandsWatch::default()
        };
        let ran = run_entries(vec![ArchipelagoEntry::Pending(a.clone())], &mut watch).unwrap();
        let r = ran[0].result.as_ref().unwrap();
        assert_eq!(r.overall.termination, Termination::Stopped);
        assert_eq!(r.overall.generations, 7);
        let ArchipelagoEntry::Started(c) = &ran[0].entry else {
            panic!("a stopped archipelago keeps its state")
        };
        assert_eq!(c.generation, 7);
        let (resumed, _) = run_saving(vec![ran[0].entry.clone()], 0);
        assert!(same_archipelago(
            resumed[0].result.as_ref().unwrap(),
            &straight
        ));
        // Without `keep`, one that ended comes back as it was given (no copy of its
        // populations): a rerun gives the same bits.
        let ran = run_entries(
            vec![ArchipelagoEntry::Pending(a.clone())],
            &mut IslandsWatch::default(),
        )
        .unwrap();
        assert_eq!(ran[0].entry, ArchipelagoEntry::Pending(a.clone()));
        assert!(same_archipelago(ran[0].result.as_ref().unwrap(), &straight));
        // A stop flag set before the start leaves every archipelago as it was.
        let flag = std::sync::atomic::AtomicBool::new(true);
        let mut watch = IslandsWatch {
            stop: Some(&flag),
            ..IslandsWatch::default()
        };
        let ran = run_entries(vec![ArchipelagoEntry::Pending(a.clone())], &mut watch).unwrap();
        assert!(ran[0].result.is_none());
        assert_eq!(ran[0].entry, ArchipelagoEntry::Pending(a));
    }
}

#[test]
fn a_list_is_saved_whole_while_one_archipelago_runs() {
    let a = saved_cases().remove(0);
    let b = Archipelago::builder(a.template().clone().with_stream(2), 3)
        .interval(4)
        .migrants(2)
        .build()
        .unwrap();
    let entries = vec![
        ArchipelagoEntry::Pending(a.clone()),
        ArchipelagoEntry::Pending(b.clone()),
    ];
    let (ran, saved) = run_saving(entries, 10);
    // Two saves in each run: the second run's saves hold the first's final state.
    assert_eq!(saved.len(), 4);
    assert!(matches!(&saved[0][1], ArchipelagoEntry::Pending(x) if *x == b));
    assert_eq!(saved[2][0], ran[0].entry);
    let (resumed, _) = run_saving(saved[2].clone(), 0);
    for k in 0..2 {
        assert!(same_archipelago(
            resumed[k].result.as_ref().unwrap(),
            ran[k].result.as_ref().unwrap()
        ));
    }
}

#[test]
fn archipelago_checkpoints_refuse_what_does_not_fit() {
    let a = saved_cases().remove(1);
    let (_, saved) = run_saving(vec![ArchipelagoEntry::Pending(a)], 10);
    let ArchipelagoEntry::Started(c) = &saved[0][0] else {
        panic!("started")
    };
    let mut bad = c.clone();
    bad.islands.pop();
    assert!(bad.check().unwrap_err().to_string().contains("3 islands"));
    let mut bad = c.clone();
    bad.islands[1].motion = None;
    assert!(
        bad.check()
            .unwrap_err()
            .to_string()
            .contains("motion is missing")
    );
    let mut bad = c.clone();
    bad.islands[0].record_f = Rows::F32(vec![1.0]);
    assert!(bad.check().unwrap_err().to_string().contains("f32"));
    let mut bad = c.clone();
    bad.migrations = 100;
    assert!(
        bad.check()
            .unwrap_err()
            .to_string()
            .contains("migration events")
    );
    let mut lower = c.clone();
    assert!(lower.set_generations(c.generation - 1).is_err());
    // The file: a flipped byte, a cut, and the runs' reader.
    let bytes = encode_archipelagos(&saved[0]).unwrap();
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let e = decode_archipelagos(&flipped).unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
    let e = decode_archipelagos(&bytes[..bytes.len() - 3])
        .unwrap_err()
        .to_string();
    assert!(e.contains("truncated"), "{e}");
    let e = crate::run::checkpoint::decode(&bytes)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a gpude checkpoint"), "{e}");
    assert!(is_archipelago_file(&bytes));
}

#[test]
fn a_run_to_a_lower_limit_goes_on_to_a_higher_one_with_the_same_bits() {
    for a in saved_cases() {
        let straight = run_cpu(&a, None).unwrap();
        // 12 and 15: limits at an event of some cases (intervals 4, 3, 5), whose event
        // the short run skipped and the long one has.
        for cut in [12, 15] {
            let short = a.with_generations(cut).unwrap();
            let (ran, _) = run_saving(vec![ArchipelagoEntry::Pending(short)], 0);
            let mut entry = ran[0].entry.clone();
            entry.set_generations(a.template().generations()).unwrap();
            let ArchipelagoEntry::Started(c) = &entry else {
                panic!("a state at the end")
            };
            assert_eq!(
                c.pending_event(),
                cut % a.interval() == 0,
                "{:?} {cut}",
                a.algorithm()
            );
            let (resumed, _) = run_saving(vec![entry], 0);
            assert!(
                same_archipelago(resumed[0].result.as_ref().unwrap(), &straight),
                "{:?} cut at {cut}",
                a.algorithm()
            );
        }
    }
}

/// An adaptive template: Rastrigin, D = 6, Np = 16, a budget of 1 600 evaluations.
fn adaptive_job(strategy: Strategy) -> Job {
    Job::builder(Function::Rastrigin, 6)
        .pop(16)
        .strategy(strategy)
        .max_evaluations(1_600)
        .seed(31)
        .stream(1)
        .build()
        .unwrap()
}

#[test]
fn adaptive_islands_without_events_are_the_separate_runs_and_with_them_differ() {
    for s in [
        Strategy::Jde,
        Strategy::Jade,
        Strategy::Shade,
        Strategy::LShade,
        Strategy::Jso,
    ] {
        let job = adaptive_job(s);
        let gmax = job.generations();
        let a = Archipelago::builder(job.clone(), 3)
            .interval(gmax + 1)
            .build()
            .unwrap();
        let r = run::<f32>(&a, None).unwrap();
        assert_eq!(r.migrations, 0);
        for k in 0..3 {
            let alone = cpu::run::<f32>(&a.island_job(k), None).expect("runs");
            assert!(
                same_bits(&r.islands[k as usize], &alone),
                "{s:?} island {k}"
            );
            assert_eq!(
                r.islands[k as usize].termination, alone.termination,
                "{s:?}"
            );
        }
        assert_eq!(r.overall.evaluations, 3 * 1_600, "{s:?}");
        // Migrating every 5 generations: events run, every island still spends exactly
        // its budget (L-SHADE's and jSO's shrinking populations included), and the
        // islands differ from the separate runs.
        let m = Archipelago::builder(job, 3)
            .interval(5)
            .topology(Topology::Random)
            .emigrants(Emigrants::Random)
            .replacement(Replacement::Random)
            .build()
            .unwrap();
        let r = run::<f64>(&m, None).unwrap();
        assert!(r.migrations > 0, "{s:?}");
        for (k, i) in r.islands.iter().enumerate() {
            assert_eq!(i.evaluations, 1_600, "{s:?} island {k}");
            assert_eq!(i.termination, Termination::MaxEvaluations, "{s:?}");
        }
        let differs = (0..3).any(|k| {
            !same_bits(
                &r.islands[k],
                &cpu::run::<f64>(&m.island_job(k as u32), None).expect("runs"),
            )
        });
        assert!(differs, "{s:?}");
        // The same bits on one thread and on three.
        let one = in_pool(1, || run::<f64>(&m, None).unwrap());
        assert!(same_archipelago(&one, &r), "{s:?}");
    }
}

#[test]
fn adaptive_islands_check_migrants_against_the_smallest_population() {
    // L-SHADE shrinks to 4: 1 migrant from each of the 4 other islands is too many.
    let e = Archipelago::builder(adaptive_job(Strategy::LShade), 5)
        .topology(Topology::Full)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("Np = 4") && e.contains("smallest size"), "{e}");
    // Not an adaptive strategy with PSO.
    let e = Archipelago::builder(adaptive_job(Strategy::Jade), 2)
        .algorithm(Algorithm::Pso(Pso::default()))
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("algorithm de"), "{e}");
    // No checkpoint of them yet: a save is refused before the run.
    let a = Archipelago::builder(adaptive_job(Strategy::Jade), 2)
        .build()
        .unwrap();
    let mut save = |_: &[ArchipelagoEntry]| Flow::Continue;
    let mut watch = IslandsWatch {
        every: 5,
        save: Some(&mut save),
        keep: true,
        ..IslandsWatch::default()
    };
    let e = run_entries(vec![ArchipelagoEntry::Pending(a)], &mut watch)
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory and archive"), "{e}");
}
