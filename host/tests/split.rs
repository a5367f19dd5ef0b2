//! The population split by dimension (`split`) against the unsplit CPU engine.
//!
//! What is asserted, and why:
//! - one slice is the unsplit engine bit for bit (same partial sums, no fold);
//! - with 2–4 slices, every trial vector is the same bits as the unsplit engine's (the
//!   index draws, crossover and λ come from the same Philox words on every slice), every
//!   slice ends a generation with the same values and best (they fold the same partial
//!   sums in the same order), and the values agree with the unsplit ones within
//!   `4·D·ε` (relative): the sums are regrouped (per slice, then across slices), and a
//!   regrouped sum of D terms differs by at most about `D·ε` of the sum of the terms'
//!   magnitudes;
//! - selection decisions agree wherever the trial's and the parent's values differ by more
//!   than twice that tolerance (where they are closer, rounding may decide either way,
//!   and the runs part); while every decision agrees the populations stay the same bits;
//! - after a short run, the best values agree within the same kind of tolerance.

use gpude_device::Real;
use gpude_host::cpu::{self, Population};
use gpude_host::split::{self, Layout, Split};
use gpude_host::{
    BoundPolicy, Crossover, Error, Formula, Function, Job, Objective, Precision, Strategy,
    Termination,
};

/// The unit roundoff's double of a precision (machine epsilon).
fn eps(p: Precision) -> f64 {
    match p {
        Precision::F32 => f32::EPSILON as f64,
        Precision::F64 => f64::EPSILON,
    }
}

/// The strategies under test: the thesis's, rand/1/bin, rand/1/exp (Cr = 0.9, runs of
/// about 10 components, so they cross slice bounds), and rand/1/bin with resampling.
fn strategies() -> Vec<(&'static str, Strategy, Crossover, BoundPolicy)> {
    vec![
        (
            "thesis",
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
        ),
        (
            "rand1bin",
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
        ),
        (
            "rand1exp",
            Strategy::Rand1,
            Crossover::Exponential,
            BoundPolicy::InitOnly,
        ),
        (
            "rand1bin-resample",
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Resample,
        ),
    ]
}

fn functions() -> Vec<(Function, Formula)> {
    vec![
        (Function::Sphere, Formula::Exact),
        (Function::Rosenbrock, Formula::Exact),
        (Function::Schwefel12, Formula::Exact),
        (Function::Griewank, Formula::Exact),
        (Function::Griewank, Formula::Textbook),
        (Function::Penalized, Formula::Exact),
    ]
}

#[allow(clippy::too_many_arguments)]
fn job(
    f: Function,
    formula: Formula,
    dim: u32,
    s: Strategy,
    c: Crossover,
    b: BoundPolicy,
    p: Precision,
    gens: u32,
) -> Job {
    let mut jb = Job::builder(f, dim)
        .strategy(s)
        .bounds(b)
        .pop(24)
        .generations(gens)
        .seed(0x5eed_0002)
        .stream(3)
        .precision(p)
        .formula(formula)
        .history(true);
    if s != Strategy::Thesis {
        jb = jb.crossover(c).cr(0.9).f(0.5);
    }
    if b == BoundPolicy::Resample {
        // A narrow domain, so that trials do leave it.
        jb = jb.domain(-2.0, 2.0);
    }
    jb.build().unwrap()
}

#[test]
fn the_layout_covers_every_component_once_in_aligned_slices() {
    for dim in 1..=300u32 {
        let q = dim.div_ceil(4);
        for s in 1..=q.min(9) {
            let l = Layout::new(dim, s).unwrap();
            assert_eq!(l.slices(), s as usize);
            assert_eq!(l.dim(), dim as usize);
            let mut seen = vec![0u32; dim as usize];
            let mut widths = Vec::new();
            for k in 0..l.slices() {
                let r = l.range(k);
                assert!(!r.is_empty(), "dim {dim} slices {s}: slice {k} empty");
                assert_eq!(r.start % 4, 0, "dim {dim} slices {s}: {r:?} unaligned");
                if k + 1 < l.slices() {
                    assert_eq!(r.end % 4, 0, "dim {dim} slices {s}: {r:?} unaligned");
                }
                for j in r.clone() {
                    seen[j] += 1;
                }
                widths.push(r.end.div_ceil(4) - r.start / 4);
            }
            assert!(seen.iter().all(|&c| c == 1), "dim {dim} slices {s}");
            // Balanced: chunk counts differ by at most one.
            let (lo, hi) = (widths.iter().min().unwrap(), widths.iter().max().unwrap());
            assert!(hi - lo <= 1, "dim {dim} slices {s}: {widths:?}");
        }
        for s in [0, q + 1] {
            match Layout::new(dim, s) {
                Err(Error::InvalidParameter { name: "slices", .. }) => {}
                other => panic!("dim {dim} slices {s}: {other:?}"),
            }
        }
    }
    // 10^9 components on 4 devices: 2.5·10^8 each, aligned.
    let l = Layout::new(1_000_000_000, 4).unwrap();
    assert_eq!(
        l.bounds(),
        &[0, 250_000_000, 500_000_000, 750_000_000, 1_000_000_000]
    );
}

#[test]
fn one_slice_is_the_unsplit_engine_bit_for_bit() {
    for (f, formula) in functions() {
        for (name, s, c, b) in strategies() {
            for p in [Precision::F32, Precision::F64] {
                let j = job(f, formula, 70, s, c, b, p, 25);
                let (a, u) = match p {
                    Precision::F32 => (
                        split::run::<f32>(&j, 1).unwrap(),
                        cpu::run::<f32>(&j, None).unwrap(),
                    ),
                    Precision::F64 => (
                        split::run::<f64>(&j, 1).unwrap(),
                        cpu::run::<f64>(&j, None).unwrap(),
                    ),
                };
                let what = format!("{f:?} {formula:?} {name} {p:?}");
                assert_eq!(a.best_f.to_bits(), u.best_f.to_bits(), "{what}");
                assert_eq!(a.best_x, u.best_x, "{what}");
                assert_eq!(a.history, u.history, "{what}");
                assert_eq!(a.generations, 25, "{what}");
                assert_eq!(a.termination, u.termination, "{what}");
            }
        }
    }
}

/// Relative distance of two values (0 when both are 0).
fn rel(a: f64, b: f64) -> f64 {
    let m = a.abs().max(b.abs());
    if m == 0.0 { 0.0 } else { (a - b).abs() / m }
}

/// What one lockstep comparison saw.
#[derive(Default, Debug)]
struct Seen {
    decisions: usize,
    separated: usize,
    worst_rel: f64,
    lockstep_generations: u32,
}

/// Runs the split and the unsplit engine side by side for `gens` generations and checks
/// the claims of this file's header.
fn lockstep<T: Real>(j: &Job, slices: u32, gens: u32, what: &str) -> Seen {
    let d = j.dim() as usize;
    let tol = 4.0 * d as f64 * eps(j.precision());
    let mut seen = Seen::default();
    let mut pop: Population<T> = cpu::initial(j);
    let mut sp = Split::<T>::new(j, slices).unwrap();
    assert_eq!(sp.layout.slices(), slices as usize);
    let bits = |v: &[T]| v.iter().map(|x| x.to_f64().to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&sp.gather()), bits(&pop.x), "{what}: initial points");
    for (i, (&a, &b)) in sp.slices[0].fit.iter().zip(&pop.fit).enumerate() {
        let r = rel(a.to_f64(), b.to_f64());
        assert!(r <= tol, "{what}: initial value {i}: {a:?} vs {b:?}");
        seen.worst_rel = seen.worst_rel.max(r);
    }
    let mut best = pop.best();
    let mut scratch = Vec::new();
    let mut out = vec![T::ZERO; d];
    for g in 1..=gens {
        // The unsplit engine's trials and their values, before its generation.
        let mut trials = Vec::with_capacity(pop.x.len());
        let mut tvals = Vec::new();
        for i in 0..j.pop() as usize {
            tvals.push(cpu::trial(j, &pop, best, g, i, &mut out));
            trials.extend_from_slice(&out);
        }
        let parents = sp.slices[0].fit.clone();
        sp.step();
        // Every slice has the same values and best.
        for sl in &sp.slices[1..] {
            assert_eq!(bits(&sl.fit), bits(&sp.slices[0].fit), "{what} g {g}");
            assert_eq!(bits(&sl.trial_fit), bits(&sp.slices[0].trial_fit));
            assert_eq!(sl.best, sp.slices[0].best, "{what} g {g}");
        }
        // The same trial vectors.
        let mut strials = vec![T::ZERO; trials.len()];
        for sl in &sp.slices {
            for i in 0..j.pop() as usize {
                strials[i * d + sl.own.start..i * d + sl.own.end]
                    .copy_from_slice(sl.owned(&sl.trial, i));
            }
        }
        assert_eq!(bits(&strials), bits(&trials), "{what} g {g}: trials");
        let mut all_agree = true;
        for i in 0..j.pop() as usize {
            let (ts, tu) = (sp.slices[0].trial_fit[i], tvals[i]);
            let r = rel(ts.to_f64(), tu.to_f64());
            assert!(r <= tol, "{what} g {g} i {i}: {ts:?} vs {tu:?} ({r:e})");
            seen.worst_rel = seen.worst_rel.max(r);
            let (ds, du) = (ts < parents[i], tu < pop.fit[i]);
            seen.decisions += 1;
            if rel(tu.to_f64(), pop.fit[i].to_f64()) > 2.0 * tol {
                seen.separated += 1;
                assert_eq!(ds, du, "{what} g {g} i {i}: selection differs");
            }
            all_agree &= ds == du;
        }
        best = cpu::generation(j, &mut pop, best, g, &mut scratch);
        if !all_agree {
            // A near-tie went the other way: the runs part here.
            break;
        }
        assert_eq!(bits(&sp.gather()), bits(&pop.x), "{what} g {g}: population");
        assert_eq!(sp.slices[0].best, best, "{what} g {g}: best");
        seen.lockstep_generations = g;
    }
    seen
}

#[test]
fn several_slices_match_the_unsplit_engine_to_rounding() {
    let mut total = Seen::default();
    for dim in [70, 130] {
        for (f, formula) in functions() {
            for (name, s, c, b) in strategies() {
                for p in [Precision::F32, Precision::F64] {
                    for slices in 2..=4 {
                        let j = job(f, formula, dim, s, c, b, p, 8);
                        let what = format!("D {dim} {f:?} {formula:?} {name} {p:?} S {slices}");
                        let seen = match p {
                            Precision::F32 => lockstep::<f32>(&j, slices, 8, &what),
                            Precision::F64 => lockstep::<f64>(&j, slices, 8, &what),
                        };
                        // Near-ties are rare: the runs stay together for all 8
                        // generations in all but a few cases.
                        assert!(seen.lockstep_generations >= 1, "{what}: {seen:?}");
                        total.decisions += seen.decisions;
                        total.separated += seen.separated;
                        total.lockstep_generations += seen.lockstep_generations;
                        total.worst_rel = total.worst_rel.max(seen.worst_rel);
                    }
                }
            }
        }
    }
    let cases = 2 * 6 * 4 * 2 * 3;
    eprintln!("{total:?} over {cases} cases");
    // Most decisions are well separated, so the check above is not vacuous.
    assert!(total.separated * 10 >= total.decisions * 9, "{total:?}");
    assert!(
        total.lockstep_generations >= 8 * cases * 9 / 10,
        "{total:?}"
    );
}

#[test]
fn thesis_variants_split_like_the_unsplit_engine() {
    // The variants' draws and λ words are the same on every slice: one slice is the
    // unsplit engine bit for bit, several give the same trials.
    for name in [
        "indices=rejection",
        "lambda=closed-open",
        "lambda-draw=per-individual",
        "mutation=fma",
        "mutation=from-best",
        "indices=rejection,lambda-draw=per-individual,mutation=fma-inner,generations=plus-one",
    ] {
        let v = gpude_host::config::parse_variant(name).unwrap();
        for p in [Precision::F32, Precision::F64] {
            let j = Job::builder(Function::Rosenbrock, 70)
                .pop(24)
                .generations(12)
                .seed(9)
                .precision(p)
                .history(true)
                .thesis_variant(v)
                .build()
                .unwrap();
            let (a, u) = match p {
                Precision::F32 => (
                    split::run::<f32>(&j, 1).unwrap(),
                    cpu::run::<f32>(&j, None).unwrap(),
                ),
                Precision::F64 => (
                    split::run::<f64>(&j, 1).unwrap(),
                    cpu::run::<f64>(&j, None).unwrap(),
                ),
            };
            let what = format!("{name} {p:?}");
            assert_eq!(a.best_f.to_bits(), u.best_f.to_bits(), "{what}");
            assert_eq!(a.history, u.history, "{what}");
            assert_eq!(a.generations, 12 + v.extra_generations(), "{what}");
            let seen = match p {
                Precision::F32 => lockstep::<f32>(&j, 3, 6, &what),
                Precision::F64 => lockstep::<f64>(&j, 3, 6, &what),
            };
            assert!(seen.lockstep_generations >= 1, "{what}: {seen:?}");
        }
    }
}

#[test]
fn short_split_runs_end_with_the_unsplit_best() {
    for (f, formula) in functions() {
        for (name, s, c, b) in strategies() {
            for p in [Precision::F32, Precision::F64] {
                let j = job(f, formula, 130, s, c, b, p, 40);
                let u = match p {
                    Precision::F32 => cpu::run::<f32>(&j, None).unwrap(),
                    Precision::F64 => cpu::run::<f64>(&j, None).unwrap(),
                };
                for slices in 2..=4 {
                    let a = split::run_job(&j, slices, None).unwrap();
                    let what = format!("{f:?} {formula:?} {name} {p:?} S {slices}");
                    assert_eq!(a.generations, 40, "{what}");
                    assert_eq!(a.termination, Termination::MaxGenerations, "{what}");
                    let r = rel(a.best_f, u.best_f);
                    assert!(
                        r <= 4.0 * 130.0 * eps(p),
                        "{what}: {} vs {} ({r:e})",
                        a.best_f,
                        u.best_f
                    );
                    // The best never worsens; the thesis's strategy improves it.
                    let h = a.history.as_ref().unwrap();
                    assert!(h.windows(2).all(|w| w[1] <= w[0]), "{what}: {h:?}");
                    assert!(s != Strategy::Thesis || h[40] < h[0], "{what}: {h:?}");
                }
            }
        }
    }
}

#[test]
fn what_cannot_be_split_is_refused() {
    let refused = |j: &Job, slices: u32, name: &str, needle: &str| {
        let e = split::run_job(j, slices, None).unwrap_err();
        let msg = e.to_string();
        match &e {
            Error::InvalidParameter { name: n, .. } => assert_eq!(*n, name, "{msg}"),
            other => panic!("{other:?}"),
        }
        assert!(msg.contains(needle), "{msg}");
    };
    let adaptive = Job::builder(Function::Sphere, 16)
        .strategy(Strategy::Shade)
        .build()
        .unwrap();
    refused(&adaptive, 2, "split", "classic strategy");
    let expr = Job::builder_for(Objective::expr("sum(x^2)", Some(0.0)).unwrap(), 16)
        .domain(-5.0, 5.0)
        .build()
        .unwrap();
    refused(&expr, 2, "split", "built-in function");
    let small = Job::builder(Function::Sphere, 10).build().unwrap();
    refused(&small, 4, "slices", "1 ..= 3");
}
