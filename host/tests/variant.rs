//! Thesis variants on the CPU engine: each alternative changes the run (and only the
//! generation count leaves the trajectory alone), jobs refuse variants where they mean
//! nothing, names read back, and checkpoints keep the variant.

use gpude_device::variant::{
    GenerationCount, IndexDraw, LambdaDraw, LambdaRange, MutationForm, ThesisVariant,
};
use gpude_host::checkpoint::{self, Entry};
use gpude_host::config::{parse_variant, variant_name};
use gpude_host::cpu::{self, Control, Outcome};
use gpude_host::{BoundPolicy, Error, Function, Job, Precision, RunResult, Strategy};

/// Every alternative on its own, and all of them at once.
fn alternatives() -> Vec<ThesisVariant> {
    let d = ThesisVariant::DEFAULT;
    vec![
        ThesisVariant {
            indices: IndexDraw::Rejection,
            ..d
        },
        ThesisVariant {
            lambda: LambdaRange::ClosedOpen,
            ..d
        },
        ThesisVariant {
            lambda_draw: LambdaDraw::PerIndividual,
            ..d
        },
        ThesisVariant {
            mutation: MutationForm::Fma,
            ..d
        },
        ThesisVariant {
            mutation: MutationForm::FmaInner,
            ..d
        },
        ThesisVariant {
            mutation: MutationForm::FromBest,
            ..d
        },
        ThesisVariant {
            generations: GenerationCount::PlusOne,
            ..d
        },
        ThesisVariant {
            indices: IndexDraw::Rejection,
            lambda: LambdaRange::ClosedOpen,
            lambda_draw: LambdaDraw::PerIndividual,
            mutation: MutationForm::FromBest,
            generations: GenerationCount::PlusOne,
        },
    ]
}

fn job(f: Function, dim: u32, g: u32, p: Precision, v: ThesisVariant) -> Job {
    Job::builder(f, dim)
        .pop(40)
        .generations(g)
        .precision(p)
        .seed(21)
        .history(true)
        .thesis_variant(v)
        .build()
        .expect("a valid job")
}

fn run(j: &Job) -> RunResult {
    match j.precision() {
        Precision::F32 => cpu::run::<f32>(j, None).expect("runs"),
        Precision::F64 => cpu::run::<f64>(j, None).expect("runs"),
    }
}

fn bits(h: &Option<Vec<f64>>) -> Vec<u64> {
    h.as_deref()
        .unwrap_or(&[])
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn each_alternative_changes_the_run_and_plus_one_adds_a_generation() {
    const G: u32 = 30;
    for p in [Precision::F32, Precision::F64] {
        for (f, dim) in [(Function::Rosenbrock, 30), (Function::Griewank, 13)] {
            let base = run(&job(f, dim, G, p, ThesisVariant::DEFAULT));
            assert_eq!(base.generations, G);
            for v in alternatives() {
                let j = job(f, dim, G, p, v);
                let what = format!("{f:?} {p:?} {}", variant_name(v));
                let r = run(&j);
                // Deterministic.
                let again = run(&j);
                assert_eq!(r.best_f.to_bits(), again.best_f.to_bits(), "{what}");
                assert_eq!(r.best_x, again.best_x, "{what}");
                let gens = G + v.extra_generations();
                assert_eq!(j.generations(), gens, "{what}");
                assert_eq!(j.g_max(), G, "{what}");
                assert_eq!(r.generations, gens, "{what}");
                assert_eq!(r.evaluations, 40 * (1 + gens as u64), "{what}");
                assert_eq!(bits(&r.history).len(), gens as usize + 1, "{what}");
                if v.changes_trials() {
                    // Another trajectory: the histories part after the initial
                    // population (which every variant shares).
                    let (h, hb) = (bits(&r.history), bits(&base.history));
                    assert_eq!(h[0], hb[0], "{what}");
                    assert_ne!(h[..=G as usize], hb[..], "{what}");
                } else {
                    // One generation more of the same trajectory: a default run of
                    // G + 1 generations, bit for bit.
                    let longer = run(&job(f, dim, G + 1, p, ThesisVariant::DEFAULT));
                    assert_eq!(bits(&r.history), bits(&longer.history), "{what}");
                    assert_eq!(r.best_x, longer.best_x, "{what}");
                    assert_eq!(bits(&r.history)[..=G as usize], bits(&base.history)[..]);
                }
            }
        }
    }
}

#[test]
fn variants_stay_close_to_the_thesis_strategys_behaviour() {
    // Every alternative faithful to the thesis still solves an easy problem: they are
    // details, not other algorithms. (λ per individual is not one of them: without
    // crossover its trials stay in the affine hull of the population, and on this
    // problem the run stalls far from the optimum.)
    for v in alternatives()
        .into_iter()
        .filter(|v| v.lambda_draw == LambdaDraw::PerComponent)
    {
        let j = Job::builder(Function::Sphere, 10)
            .pop(64)
            .generations(400)
            .precision(Precision::F64)
            .seed(4)
            .thesis_variant(v)
            .build()
            .unwrap();
        let r = run(&j);
        assert!(r.error < 1e-6, "{}: {}", variant_name(v), r.error);
    }
}

fn refused(b: gpude_host::JobBuilder, needle: &str) {
    match b.build() {
        Err(e @ Error::InvalidParameter { .. }) => {
            let m = e.to_string();
            assert!(m.contains(needle), "{m}");
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn variants_are_refused_where_they_mean_nothing() {
    let v = parse_variant("mutation=fma").unwrap();
    let b = || Job::builder(Function::Rosenbrock, 10).thesis_variant(v);
    refused(
        b().strategy(Strategy::Rand1),
        "thesis variant = mutation=fma is not allowed: default, unless the strategy is thesis with init-only bounds (this job: rand1 with init-only bounds)",
    );
    refused(
        b().bounds(BoundPolicy::Clip),
        "this job: thesis with clip bounds",
    );
    refused(
        b().strategy(Strategy::Jso),
        "this job: jso with midpoint bounds",
    );
    let plus = parse_variant("generations=plus-one").unwrap();
    refused(
        Job::builder(Function::Rosenbrock, 10)
            .max_evaluations(5000)
            .thesis_variant(plus),
        "not an evaluation budget",
    );
    refused(
        Job::builder(Function::Rosenbrock, 10)
            .generations(u32::MAX - 1)
            .thesis_variant(plus),
        "generations",
    );
    // The default goes with everything.
    Job::builder(Function::Rosenbrock, 10)
        .strategy(Strategy::Rand1)
        .bounds(BoundPolicy::Clip)
        .thesis_variant(ThesisVariant::DEFAULT)
        .build()
        .unwrap();
    // Zero generations plus one is one.
    let j = Job::builder(Function::Rosenbrock, 10)
        .generations(0)
        .thesis_variant(plus)
        .build()
        .unwrap();
    assert_eq!((j.g_max(), j.generations()), (0, 1));
}

#[test]
fn names_read_back_and_bad_names_are_refused() {
    for b in 0..64 {
        let v = ThesisVariant::from_bits(b).unwrap();
        let name = variant_name(v);
        assert_eq!(parse_variant(&name).unwrap(), v, "{name}");
        assert_eq!(parse_variant(&name.to_uppercase()).unwrap(), v, "{name}");
    }
    assert_eq!(variant_name(ThesisVariant::DEFAULT), "default");
    assert_eq!(
        parse_variant(" indices = rejection , generations=plus-one ").unwrap(),
        ThesisVariant {
            indices: IndexDraw::Rejection,
            generations: GenerationCount::PlusOne,
            ..ThesisVariant::DEFAULT
        }
    );
    // Naming a default value is allowed.
    assert_eq!(
        parse_variant("mutation=plain").unwrap(),
        ThesisVariant::DEFAULT
    );
    let message = |s: &str| parse_variant(s).unwrap_err().to_string();
    assert_eq!(
        message("indices=maybe"),
        "unknown value of indices \"maybe\"; known: free, rejection"
    );
    assert_eq!(
        message("lamda=closed-open"),
        "unknown thesis variant key \"lamda\"; known: indices, lambda, lambda-draw, mutation, generations"
    );
    assert!(message("mutation=fma,mutation=plain").contains("\"mutation\" is given twice"));
    assert!(message("rejection").contains("key=value items separated by commas"));
    assert!(message("").contains("default, or key=value items"));
    assert!(message(" , ").contains("default, or key=value items"));
}

fn same(a: &Outcome, b: &Outcome, what: &str) {
    let (ra, rb) = (&a.result, &b.result);
    assert_eq!(ra.best_f.to_bits(), rb.best_f.to_bits(), "{what}");
    assert_eq!(ra.best_x, rb.best_x, "{what}");
    assert_eq!(bits(&ra.history), bits(&rb.history), "{what}");
    assert_eq!(ra.generations, rb.generations, "{what}");
    assert_eq!(a.checkpoint.state, b.checkpoint.state, "{what}");
}

#[test]
fn checkpoints_keep_the_variant_and_resume_with_the_same_bits() {
    const G: u32 = 24;
    for v in alternatives() {
        let what = variant_name(v);
        let full = cpu::run_controlled(
            &job(Function::Rosenbrock, 12, G, Precision::F32, v),
            &mut Control::default(),
        );
        let half = cpu::run_controlled(
            &job(Function::Rosenbrock, 12, G / 2, Precision::F32, v),
            &mut Control::default(),
        );
        let bytes = checkpoint::encode(&[Entry::Started(half.checkpoint.clone())]).unwrap();
        let mut back = match checkpoint::decode(&bytes).unwrap().remove(0) {
            Entry::Started(c) => c,
            Entry::Pending(_) => panic!("{what}: started run read back as pending"),
        };
        assert_eq!(back, half.checkpoint, "{what}");
        assert_eq!(back.job.thesis_variant(), v, "{what}");
        // The new limit is a g_max: plus-one runs one generation past it.
        back.set_generations(G).unwrap();
        assert_eq!(back.job.generations(), G + v.extra_generations(), "{what}");
        let resumed = cpu::resume(back, &mut Control::default()).unwrap();
        same(&full, &resumed, &what);
        // A pending job reads back too.
        let j = job(Function::Griewank, 5, 7, Precision::F64, v);
        let bytes = checkpoint::encode(&[Entry::Pending(j.clone())]).unwrap();
        assert_eq!(
            checkpoint::decode(&bytes).unwrap(),
            vec![Entry::Pending(j)],
            "{what}"
        );
    }
}
