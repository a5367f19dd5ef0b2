//! The adaptive strategies on the CPU engine: settings, budget, population reduction,
//! determinism and search quality.

use gpude_host::config::parse_strategy;
use gpude_host::cpu::adaptive::State;
use gpude_host::cuda::gpu_check;
use gpude_host::ptx_objective::PtxCode;
use gpude_host::{BoundPolicy, Crossover, Error, Function, Job, Precision, Strategy, Termination};
use gpude_host::{RunResult, cpu};

const ADAPTIVE: [Strategy; 5] = Strategy::ADAPTIVE;

fn job(s: Strategy, f: Function, seed: u64, evals: u64) -> Job {
    Job::builder(f, 10)
        .strategy(s)
        .seed(seed)
        .max_evaluations(evals)
        .precision(Precision::F64)
        .build()
        .unwrap()
}

fn bits(r: &RunResult) -> (Vec<u64>, u64, u64, u32) {
    (
        r.best_x.iter().map(|v| v.to_bits()).collect(),
        r.best_f.to_bits(),
        r.evaluations,
        r.generations,
    )
}

fn invalid(e: Error) -> (String, String) {
    match e {
        Error::InvalidParameter { name, value, .. } => (name.to_string(), value),
        e => panic!("not an invalid parameter: {e}"),
    }
}

#[test]
fn papers_defaults() {
    // L-SHADE at D = 10: N_init = 18·10 = 180, H = 6, r_arc = 2.6, p = 0.11, N_min = 4,
    // budget 10 000·10; bounds midpoint.
    let j = Job::builder(Function::Sphere, 10)
        .strategy(Strategy::LShade)
        .build()
        .unwrap();
    let a = j.adaptive().unwrap();
    assert_eq!(j.pop(), 180);
    assert_eq!(j.bounds(), BoundPolicy::Midpoint);
    assert_eq!(
        (
            a.memory_size,
            a.archive_rate,
            a.p_best,
            a.min_pop,
            a.max_evaluations
        ),
        (6, 2.6, 0.11, 4, 100_000)
    );
    // Generations: at most ⌈(100 000 − 180) / 4⌉ = 24 955.
    assert_eq!(j.generations(), 24_955);
    // jSO: N_init = round(25 ln 10 √10) = 182, H = 5, p 0.25.
    let j = Job::builder(Function::Sphere, 10)
        .strategy(Strategy::Jso)
        .build()
        .unwrap();
    let a = j.adaptive().unwrap();
    assert_eq!(
        (j.pop(), a.memory_size, a.p_best, a.archive_rate),
        (182, 5, 0.25, 1.0)
    );
    // SHADE: N = H = 100; JADE: p = 0.05, c = 0.1; jDE: τ = 0.1, no archive.
    let j = Job::builder(Function::Sphere, 10)
        .strategy(Strategy::Shade)
        .build()
        .unwrap();
    assert_eq!((j.pop(), j.adaptive().unwrap().memory_size), (100, 100));
    let jade = Job::builder(Function::Sphere, 10)
        .strategy(Strategy::Jade)
        .build()
        .unwrap();
    let a = jade.adaptive().unwrap();
    assert_eq!(
        (a.p_best, a.learning_rate, a.archive_rate),
        (0.05, 0.1, 1.0)
    );
    let j = Job::builder(Function::Sphere, 10)
        .strategy(Strategy::Jde)
        .max_evaluations(1050)
        .build()
        .unwrap();
    let a = j.adaptive().unwrap();
    assert_eq!((a.tau, a.archive_rate, a.min_pop), ([0.1, 0.1], 0.0, 100));
    // ⌈(1050 − 100) / 100⌉ = 10 generations, the last one partial.
    assert_eq!(j.generations(), 10);
    // Classic strategies keep theirs.
    let j = Job::builder(Function::Sphere, 10).build().unwrap();
    assert_eq!(
        (j.pop(), j.bounds(), j.adaptive()),
        (100, BoundPolicy::InitOnly, None)
    );
    // Names.
    assert_eq!(parse_strategy("lshade").unwrap().0, Strategy::LShade);
    assert_eq!(parse_strategy("JSO").unwrap().0, Strategy::Jso);
    assert!(parse_strategy("shade2").is_err());
}

#[test]
fn overrides_and_their_checks() {
    let j = Job::builder(Function::Sphere, 10)
        .strategy(Strategy::LShade)
        .memory_size(10)
        .archive_rate(1.4)
        .p_best(0.2)
        .min_pop(8)
        .pop(50)
        .build()
        .unwrap();
    let a = j.adaptive().unwrap();
    assert_eq!(
        (a.memory_size, a.archive_rate, a.p_best, a.min_pop),
        (10, 1.4, 0.2, 8)
    );
    let b = |s| Job::builder(Function::Sphere, 10).strategy(s);
    let cases = [
        (b(Strategy::Jso).memory_size(1).build(), "memory size", "1"),
        (b(Strategy::Jde).memory_size(5).build(), "memory size", "5"),
        (b(Strategy::Rand1).p_best(0.1).build(), "p-best", "0.1"),
        (b(Strategy::Jade).p_best(0.0).build(), "p-best", "0"),
        (
            b(Strategy::Shade).archive_rate(-1.0).build(),
            "archive rate",
            "-1",
        ),
        (
            b(Strategy::Jade).learning_rate(1.5).build(),
            "learning rate",
            "1.5",
        ),
        (
            b(Strategy::Shade).learning_rate(0.1).build(),
            "learning rate",
            "0.1",
        ),
        (b(Strategy::Jde).tau(0.1, 2.0).build(), "tau", "2"),
        (
            b(Strategy::Jade).min_pop(4).build(),
            "minimum population",
            "4",
        ),
        (
            b(Strategy::Jso).pop(20).min_pop(21).build(),
            "minimum population",
            "21",
        ),
        (b(Strategy::Jso).pop(3).build(), "population size", "3"),
        (
            b(Strategy::Shade).crossover(Crossover::Exponential).build(),
            "crossover",
            "exp",
        ),
        (
            b(Strategy::Jso).max_evaluations(100).build(),
            "evaluation budget",
            "100",
        ),
    ];
    for (k, (r, name, value)) in cases.into_iter().enumerate() {
        let e = r.expect_err(&format!("case {k}"));
        let msg = e.to_string();
        assert_eq!(
            invalid(e),
            (name.to_string(), value.to_string()),
            "case {k}: {msg}"
        );
    }
    // The CUDA engine runs them with every objective: built-in and CEC 2017 functions,
    // expressions and PTX objectives linked in, host callbacks between phases; a PTX
    // module must define the job's precision.
    assert!(gpu_check(&b(Strategy::Jso).build().unwrap()).is_ok());
    assert!(gpu_check(&b(Strategy::Rand1).build().unwrap()).is_ok());
    let expr = gpude_host::Objective::expr("sum(x^2)", Some(0.0)).unwrap();
    assert!(
        gpu_check(
            &Job::builder_for(expr.clone(), 10)
                .domain(-5.0, 5.0)
                .strategy(Strategy::Jso)
                .build()
                .unwrap()
        )
        .is_ok()
    );
    let e = gpude_expr::Expr::parse("sum(x^2)").unwrap();
    let code = PtxCode::parse(e.ptx(gpude_expr::Precision::F32)).unwrap();
    let ptx = gpude_host::Objective::ptx("sq32", None, code).unwrap();
    let of = |p: Precision| {
        Job::builder_for(ptx.clone(), 10)
            .domain(-5.0, 5.0)
            .strategy(Strategy::LShade)
            .precision(p)
            .build()
            .unwrap()
    };
    assert!(gpu_check(&of(Precision::F32)).is_ok());
    let err = gpu_check(&of(Precision::F64)).unwrap_err().to_string();
    assert!(
        err.contains("precision = f64") && err.contains("f32"),
        "{err}"
    );
}

#[test]
fn budget_is_spent_exactly() {
    // 1 234 evaluations: jDE spends 100 on the initial population, then 11 generations
    // of 100 and a last one of 34.
    let r = cpu::run::<f64>(&job(Strategy::Jde, Function::Rastrigin, 3, 1234), None).expect("runs");
    assert_eq!((r.evaluations, r.generations), (1234, 12));
    assert_eq!(r.termination, Termination::MaxEvaluations);
    for s in ADAPTIVE {
        let j = job(s, Function::Rastrigin, 1, 2017);
        let r = cpu::run::<f64>(&j, None).expect("runs");
        assert_eq!(r.evaluations, 2017, "{s:?}");
        assert_eq!(r.termination, Termination::MaxEvaluations);
        assert!(r.generations <= j.generations());
    }
    // A generation limit stops first.
    let j = Job::builder(Function::Rastrigin, 10)
        .strategy(Strategy::Jso)
        .generations(3)
        .history(true)
        .build()
        .unwrap();
    let r = cpu::run::<f32>(&j, None).expect("runs");
    // jSO shrinks from the start (default budget 100 000): after generation 1,
    // NFE = 364 → N = round(182 − 178·0.00364) = round(181.35) = 181; after generation 2,
    // NFE = 545 → 181.03 → 181. Evaluations: 182 + 182 + 181 + 181 = 726.
    assert_eq!((r.generations, r.evaluations), (3, 726));
    assert_eq!(r.termination, Termination::MaxGenerations);
    let h = r.history.unwrap();
    assert_eq!(h.len(), 4);
    assert!(h.windows(2).all(|w| w[1] <= w[0]), "{h:?}");
}

#[test]
fn population_shrinks_linearly_and_the_archive_follows() {
    // L-SHADE, N_init = 40, N_min = 4, budget 2 000: after each generation
    // N = round(40 − 36·NFE/2000) (NFE = 40 + the trials so far).
    let j = Job::builder(Function::Rastrigin, 5)
        .strategy(Strategy::LShade)
        .pop(40)
        .max_evaluations(2000)
        .build()
        .unwrap();
    let mut st = State::<f32>::new(&j);
    let mut nfe = 40u64;
    let mut sizes = vec![];
    let mut g = 0;
    while st.generation(&j, g + 1) {
        g += 1;
        nfe += (sizes.last().copied().unwrap_or(40u32) as u64).min(2000 - nfe);
        let want = (40.0 - 36.0 * nfe as f64 / 2000.0).round().max(4.0) as u32;
        assert_eq!(st.size(), want, "generation {g}, nfe {nfe}");
        assert_eq!(st.evaluations, nfe);
        // round(2.6 · N)
        assert!(st.archive_len <= (2.6 * st.size() as f64).round() as u32);
        assert_eq!(st.archive.len(), st.archive_len as usize * 5);
        sizes.push(st.size());
    }
    assert_eq!(nfe, 2000);
    assert_eq!(*sizes.last().unwrap(), 4);
    // By hand: generation 1 brings NFE to 80: 40 − 1.44 = 38.56 → 39; generation 2 to
    // 119: 40 − 2.142 = 37.858 → 38.
    assert_eq!(sizes[..2], [39, 38]);
    // The best individual survives every reduction: the best value never rises.
    let fit_best = st.pop.fit.iter().copied().fold(f32::INFINITY, f32::min);
    assert!(fit_best.is_finite());
}

#[test]
fn same_seed_same_bits_whatever_the_threads() {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for s in ADAPTIVE {
        for p in [Precision::F32, Precision::F64] {
            let j = Job::builder(Function::Ackley, 7)
                .strategy(s)
                .pop(30)
                .max_evaluations(1500)
                .precision(p)
                .seed(11)
                .stream(2)
                .build()
                .unwrap();
            let run = |j: &Job| match p {
                Precision::F32 => cpu::run::<f32>(j, None).expect("runs"),
                Precision::F64 => cpu::run::<f64>(j, None).expect("runs"),
            };
            let a = one.install(|| run(&j));
            let b = two.install(|| run(&j));
            let c = run(&j);
            assert_eq!(bits(&a), bits(&b), "{s:?} {p:?}");
            assert_eq!(bits(&a), bits(&c), "{s:?} {p:?}");
            let k = j.clone().with_seed(12);
            assert_ne!(
                bits(&a),
                bits(&run(&k)),
                "{s:?} {p:?}: the seed must matter"
            );
        }
    }
}

#[test]
fn every_strategy_solves_the_sphere() {
    for s in ADAPTIVE {
        let j = Job::builder(Function::Sphere, 10)
            .strategy(s)
            .max_evaluations(40_000)
            .target(1e-8)
            .precision(Precision::F64)
            .build()
            .unwrap();
        let r = cpu::run::<f64>(&j, None).expect("runs");
        assert!(r.error <= 1e-8, "{s:?}: {r:?}");
        assert_eq!(r.termination, Termination::TargetReached, "{s:?}");
        assert!(r.evaluations <= 40_000);
    }
}

#[test]
fn each_beats_rand1_on_rastrigin() {
    // Three seeds, 20 000 evaluations in D = 10; rand/1/bin (F = 0.5, Cr = 0.9) with a
    // population of 100 and the same bound rule. Its median is above 25 (it stalls in a
    // local basin); the adaptive strategies' medians are below 10 (SHADE, whose 100
    // memory entries adapt slowly at this budget) or far below (L-SHADE, jSO: < 0.01).
    let median = |s: Strategy| {
        let mut e: Vec<f64> = (0..3)
            .map(|seed| {
                let mut b = Job::builder(Function::Rastrigin, 10)
                    .strategy(s)
                    .seed(seed)
                    .max_evaluations(20_000)
                    .bounds(BoundPolicy::Midpoint);
                if !s.is_adaptive() {
                    b = b.pop(100);
                }
                cpu::run::<f64>(&b.build().unwrap(), None)
                    .expect("runs")
                    .error
            })
            .collect();
        e.sort_by(f64::total_cmp);
        e[1]
    };
    let base = median(Strategy::Rand1);
    assert!(base > 10.0, "rand1 {base}");
    for s in ADAPTIVE {
        let m = median(s);
        assert!(m < base / 2.0, "{s:?}: median {m} against rand1's {base}");
    }
}

#[test]
fn jde_parameters_travel_with_the_winning_trial() {
    use gpude_device::adaptive::{PARAM_SLOT, jde_update};
    use gpude_device::de::{block, subsequence};
    use gpude_device::philox::{block_words, key_of};
    let j = Job::builder(Function::Sphere, 6)
        .strategy(Strategy::Jde)
        .pop(40)
        .seed(5)
        .precision(Precision::F64)
        .build()
        .unwrap();
    let mut st = State::<f64>::new(&j);
    let before = st.pop.fit.clone();
    assert!(st.generation(&j, 1));
    let (mut won, mut fired) = (0, 0);
    for i in 0..40 {
        // Individual i's own words of generation 1: F' and Cr' of its trial.
        let w = block_words(key_of(5), subsequence(0, i as u32), block(1, PARAM_SLOT));
        let (f, cr) = jde_update(0.5, 0.9, &w, 0.1, 0.1);
        if (f, cr) != (0.5, 0.9) {
            fired += 1;
        }
        if st.pop.fit[i] != before[i] {
            won += 1;
            assert_eq!((st.jf[i], st.jcr[i]), (f, cr), "{i}");
        } else if st.jf[i] != 0.5 || st.jcr[i] != 0.9 {
            // Kept the parent's value but took the trial's parameters: only on a tie.
            assert_eq!((st.jf[i], st.jcr[i]), (f, cr), "{i}");
        }
    }
    // About τ·2·40 = 8 individuals draw new parameters; about half the trials win early on.
    assert!((2..=20).contains(&fired), "{fired}");
    assert!((5..=35).contains(&won), "{won}");
}

#[test]
fn archives_fill_to_capacity_then_replace() {
    // JADE, N = 10, archive rate 1: the archive grows by the successes to 10 entries
    // and stays there, every entry a former population member (finite values, inside
    // the domain).
    let j = Job::builder(Function::Sphere, 4)
        .strategy(Strategy::Jade)
        .pop(10)
        .seed(2)
        .build()
        .unwrap();
    let mut st = State::<f32>::new(&j);
    let mut g = 0;
    while g < 30 && st.generation(&j, g + 1) {
        g += 1;
        assert!(st.archive_len <= 10);
    }
    assert_eq!(st.archive_len, 10);
    assert!(st.archive.iter().all(|v| (-100.0..=100.0).contains(v)));
    // Without an archive: none.
    let j = Job::builder(Function::Sphere, 4)
        .strategy(Strategy::Jade)
        .pop(10)
        .archive_rate(0.0)
        .build()
        .unwrap();
    let mut st = State::<f32>::new(&j);
    for g in 1..=10 {
        st.generation(&j, g);
    }
    assert_eq!((st.archive_len, st.archive.len()), (0, 0));
}
