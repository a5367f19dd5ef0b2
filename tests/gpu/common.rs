//! Helpers shared by the GPU tests' modules: jobs, the CPU engine's runs and final
//! populations, and comparisons bit for bit.

use gpude::checkpoint::{Checkpoint, State};
use gpude::host::cpu::{self, Population};
use gpude::host::cuda::FinalPopulation;
use gpude::{
    BoundPolicy, Crossover, Function, Job, Precision, RunResult, Strategy, Termination,
    ThesisVariant,
};

/// A job on built-in `f`, with F = 0.5 and Cr = 0.7 for the strategies that cross.
#[allow(clippy::too_many_arguments)]
pub fn job(
    f: Function,
    dim: u32,
    pop: u32,
    gens: u32,
    s: Strategy,
    c: Crossover,
    b: BoundPolicy,
    p: Precision,
    seed: u64,
) -> Job {
    let mut builder = Job::builder(f, dim).strategy(s);
    // The thesis strategy has no F, Cr or crossover (its λ is drawn per component).
    if s.crosses() {
        builder = builder.crossover(c).f(0.5).cr(0.7);
    }
    builder
        .pop(pop)
        .generations(gens)
        .bounds(b)
        .precision(p)
        .seed(seed)
        .build()
        .expect("valid job")
}

/// The CPU engine's final population after `job`'s generations (values as f64).
pub fn cpu_population(job: &Job) -> FinalPopulation {
    fn go<T: gpude::device::Real>(job: &Job) -> FinalPopulation {
        let mut pop: Population<T> = cpu::initial(job);
        let mut best = pop.best();
        let mut scratch = Vec::new();
        for g in 1..=job.generations() {
            best = cpu::generation(job, &mut pop, best, g, &mut scratch);
        }
        FinalPopulation {
            x: pop.x.iter().map(|v| v.to_f64()).collect(),
            fit: pop.fit.iter().map(|v| v.to_f64()).collect(),
        }
    }
    match job.precision() {
        Precision::F32 => go::<f32>(job),
        Precision::F64 => go::<f64>(job),
    }
}

/// Largest relative difference, and how many values are equal bit for bit.
pub fn compare(a: &[f64], b: &[f64]) -> (f64, usize) {
    assert_eq!(a.len(), b.len());
    let mut worst = 0.0f64;
    let mut same = 0;
    for (x, y) in a.iter().zip(b) {
        if x.to_bits() == y.to_bits() {
            same += 1;
            continue;
        }
        let d = (x - y).abs() / x.abs().max(y.abs()).max(1e-30);
        worst = worst.max(if d.is_nan() { f64::INFINITY } else { d });
    }
    (worst, same)
}

/// A checkpoint's population and values as exact bits (f32 widened exactly).
pub fn state_bits(c: &Checkpoint) -> (Vec<u64>, Vec<u64>) {
    match &c.state {
        State::F32 { x, fit } => (
            x.iter().map(|v| v.to_bits() as u64).collect(),
            fit.iter().map(|v| v.to_bits() as u64).collect(),
        ),
        State::F64 { x, fit } => (
            x.iter().map(|v| v.to_bits()).collect(),
            fit.iter().map(|v| v.to_bits()).collect(),
        ),
    }
}

/// The result's reported numbers as bits (best value and point, generations,
/// termination, history), for equality checks that ignore the time.
pub fn result_bits(r: &RunResult) -> (u64, Vec<u64>, u32, Termination, Option<Vec<u64>>) {
    (
        r.best_f.to_bits(),
        r.best_x.iter().map(|v| v.to_bits()).collect(),
        r.generations,
        r.termination,
        r.history
            .as_ref()
            .map(|h| h.iter().map(|v| v.to_bits()).collect()),
    )
}

/// The same result bit for bit (best value and point, generations, reason, history);
/// a mismatch names where the two first part: the generations, reasons and best values,
/// and the first generation whose best differs.
pub fn assert_same_result(a: &RunResult, b: &RunResult, what: &str) {
    if result_bits(a) == result_bits(b) {
        return;
    }
    let first = match (&a.history, &b.history) {
        (Some(x), Some(y)) => match x
            .iter()
            .zip(y)
            .position(|(u, v)| u.to_bits() != v.to_bits())
        {
            Some(i) => format!(
                "histories part at generation {i}: {:e} against {:e}",
                x[i], y[i]
            ),
            None => format!(
                "histories agree over {} and {} generations",
                x.len(),
                y.len()
            ),
        },
        _ => "no history".to_string(),
    };
    panic!(
        "{what}: generations {} ({:?}, best {:e}) against {} ({:?}, best {:e}); {first}",
        a.generations, a.termination, a.best_f, b.generations, b.termination, b.best_f
    );
}

/// Why a test did not run: the payload of [`skip`]'s panic, which the harness reports
/// as skipped (not passed).
pub struct Skip(pub String);

/// Ends the test as skipped, saying why (a host without what it needs).
pub fn skip(why: &str) -> ! {
    std::panic::panic_any(Skip(why.to_string()))
}

/// Equal bits, or both NaN (the GPU and the CPU write NaNs with different payloads).
pub fn same_value(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The same final population: equal bits, NaN payloads aside ([`same_value`]).
pub fn assert_same_population(g: &FinalPopulation, c: &FinalPopulation, what: &str) {
    assert_eq!(g.x.len(), c.x.len(), "{what}");
    let sx =
        g.x.iter()
            .zip(&c.x)
            .filter(|(a, b)| same_value(**a, **b))
            .count();
    let sf = g
        .fit
        .iter()
        .zip(&c.fit)
        .filter(|(a, b)| same_value(**a, **b))
        .count();
    assert!(
        sx == c.x.len() && sf == c.fit.len(),
        "{what}: {sx}/{} components and {sf}/{} values equal",
        c.x.len(),
        c.fit.len()
    );
}

/// Where the example objective's PTX is: `$GPUDE_OBJECTIVE_PTX`, else the bundle's copy.
pub fn example_ptx() -> Option<String> {
    let path = std::env::var("GPUDE_OBJECTIVE_PTX")
        .unwrap_or_else(|_| "gpu-bundle/objective-example.ptx".into());
    std::fs::read_to_string(path).ok()
}

/// A thesis job with variant `v` (Np = 64).
pub fn variant_job(
    f: Function,
    dim: u32,
    gens: u32,
    p: Precision,
    v: ThesisVariant,
    seed: u64,
) -> Job {
    Job::builder(f, dim)
        .pop(64)
        .generations(gens)
        .precision(p)
        .seed(seed)
        .history(true)
        .thesis_variant(v)
        .build()
        .expect("valid job")
}

/// A batch callback (f64, row-major): weighted squares, a sine and a coupling term, so
/// that every component and its neighbour matter.
pub fn callback_values(xs: &[f64], dim: usize) -> Vec<f64> {
    xs.chunks(dim)
        .map(|x| {
            let mut v = 0.0;
            for (j, &c) in x.iter().enumerate() {
                v += (j as f64 + 1.0) * c * c + 0.1 * (3.0 * c).sin();
                if j + 1 < x.len() {
                    v += 0.01 * (x[j + 1] - c * c).abs();
                }
            }
            v
        })
        .collect()
}

/// The CPU engine's run of `j`, in its precision.
pub fn cpu_run(j: &Job) -> gpude::Result<RunResult> {
    match j.precision() {
        Precision::F32 => cpu::run::<f32>(j, None),
        Precision::F64 => cpu::run::<f64>(j, None),
    }
}

/// The same run: equal bits everywhere, NaN payloads aside ([`same_value`]).
pub fn assert_same_run(g: &RunResult, c: &RunResult, what: &str) {
    assert!(
        same_value(g.best_f, c.best_f),
        "{what}: best {} against {}",
        g.best_f,
        c.best_f
    );
    assert_eq!(g.best_x, c.best_x, "{what}");
    assert_eq!(g.generations, c.generations, "{what}");
    assert_eq!(g.termination, c.termination, "{what}");
    let (gh, ch) = (g.history.as_ref(), c.history.as_ref());
    assert_eq!(gh.map(Vec::len), ch.map(Vec::len), "{what}");
    if let (Some(gh), Some(ch)) = (gh, ch) {
        assert!(
            gh.iter().zip(ch).all(|(&a, &b)| same_value(a, b)),
            "{what}: histories differ"
        );
    }
    assert_eq!(g.backend, "cuda", "{what}");
}

/// A xorshift generator of values uniform in [0, 1), from a seed that is not 0.
pub fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}
