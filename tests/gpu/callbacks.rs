//! Host callbacks (the DE stages on the GPU, the objective on the host): runs, errors and
//! control, the CPU engine's.

use crate::Test;
use crate::common::{
    assert_same_population, assert_same_run, callback_values, cpu_population, cpu_run, state_bits,
};
use gpude::checkpoint::Checkpoint;
use gpude::host::cpu::{self, Control, Flow};
use gpude::run::control::Reporting;
use gpude::{
    BoundPolicy, Crossover, CudaEngine, Error, Function, Job, Mode, Objective, Precision, Strategy,
    Termination, ThesisVariant,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

pub fn tests() -> Vec<Test> {
    tests![
        host_callbacks_run_as_on_the_cpu,
        host_callback_errors_are_the_cpu_engines,
        host_callback_control_is_the_cpu_engines
    ]
}

#[allow(clippy::too_many_arguments)]
fn callback_job(
    o: &Objective,
    dim: u32,
    pop: u32,
    gens: u32,
    s: Strategy,
    c: Crossover,
    b: BoundPolicy,
    p: Precision,
    seed: u64,
) -> Job {
    let mut builder = Job::builder_for(o.clone(), dim)
        .domain(-5.0, 5.0)
        .strategy(s);
    if s.crosses() {
        builder = builder.crossover(c).f(0.5).cr(0.7);
    }
    builder
        .pop(pop)
        .generations(gens)
        .bounds(b)
        .precision(p)
        .seed(seed)
        .history(true)
        .build()
        .expect("valid job")
}

/// Host callbacks on the GPU (the DE stages there, the callback on the host): every
/// classic strategy, crossover and bound policy, the thesis strategy and its variants,
/// both precisions, rows of one and several rounds and partial chunks; the final
/// population, its values and whole runs are the CPU engine's, bit for bit; a batch of
/// callback and built-in jobs too.
fn host_callbacks_run_as_on_the_cpu(e: &CudaEngine) {
    let o = Objective::callback("weighted", None, callback_values).expect("callback");
    let strategies = [
        (Strategy::Thesis, Crossover::Binomial, BoundPolicy::InitOnly),
        (Strategy::Rand1, Crossover::Binomial, BoundPolicy::Clip),
        (
            Strategy::Best2,
            Crossover::Exponential,
            BoundPolicy::Reflect,
        ),
        (
            Strategy::CurrentToBest1,
            Crossover::Binomial,
            BoundPolicy::Midpoint,
        ),
        (
            Strategy::Rand2,
            Crossover::Exponential,
            BoundPolicy::Resample,
        ),
        (Strategy::Best1, Crossover::Binomial, BoundPolicy::InitOnly),
        (
            Strategy::Rand1,
            Crossover::Exponential,
            BoundPolicy::InitOnly,
        ),
    ];
    let mut runs = 0;
    for (k, &(s, c, b)) in strategies.iter().enumerate() {
        for p in [Precision::F32, Precision::F64] {
            for (dim, pop) in [(3u32, 40u32), (33, 100), (130, 2100)] {
                let j = callback_job(&o, dim, pop, 5, s, c, b, p, 900 + k as u64);
                let what = format!("{s:?}/{c:?}/{b:?} D={dim} Np={pop} {p:?}");
                let cpu_pop = cpu_population(&j);
                // The layout asked for does not matter: a callback has its own.
                for mode in [Mode::Auto, Mode::Batch] {
                    let (r, gpu) = e.run_with_population(&j, mode).expect("gpu run");
                    assert_same_population(&gpu, &cpu_pop, &what);
                    let c = cpu_run(&j).expect("cpu run");
                    assert_same_run(&r, &c, &what);
                    runs += 1;
                }
            }
        }
    }
    // The thesis variants, as the CPU engine runs them with a callback.
    for b in [1u32, 2, 4, 8, 16, 32, 3 << 3, 63] {
        let v = ThesisVariant::from_bits(b).expect("a variant");
        for p in [Precision::F32, Precision::F64] {
            let j = Job::builder_for(o.clone(), 30)
                .domain(-5.0, 5.0)
                .pop(64)
                .generations(6)
                .precision(p)
                .seed(40 + b as u64)
                .history(true)
                .thesis_variant(v)
                .build()
                .expect("valid job");
            let what = format!("{} {p:?}", gpude::host::config::variant_name(v));
            let (r, gpu) = e.run_with_population(&j, Mode::Auto).expect("gpu run");
            assert_same_population(&gpu, &cpu_population(&j), &what);
            assert_same_run(&r, &cpu_run(&j).expect("cpu run"), &what);
            runs += 1;
        }
    }
    // A batch: callbacks between built-in jobs, each result the CPU engine's.
    let mut jobs = Vec::new();
    for k in 0..6u64 {
        let p = if k % 2 == 0 {
            Precision::F32
        } else {
            Precision::F64
        };
        jobs.push(callback_job(
            &o,
            12,
            48,
            20,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            p,
            k,
        ));
        jobs.push(
            Job::builder(Function::Griewank, 12)
                .pop(48)
                .generations(20)
                .precision(p)
                .seed(k)
                .history(true)
                .build()
                .expect("valid job"),
        );
    }
    let rs = e.run_batch(&jobs).expect("gpu batch");
    for (k, (j, r)) in jobs.iter().zip(&rs).enumerate() {
        assert_same_run(r, &cpu_run(j).expect("cpu run"), &format!("batch job {k}"));
    }
    println!(
        "  {runs} callback runs and a batch of {} equal to the CPU engine's",
        jobs.len()
    );
}

/// A callback's errors on the GPU are the CPU engine's: a panic and a wrong number of
/// values stop the run with `Error::Objective` (at the initialisation and later), NaN
/// values are never the best unless all are, and the engine runs on afterwards.
fn host_callback_errors_are_the_cpu_engines(e: &CudaEngine) {
    use std::sync::atomic::AtomicUsize;
    let plain = |o: &Objective, p: Precision| {
        callback_job(
            o,
            8,
            40,
            10,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            p,
            3,
        )
    };
    for p in [Precision::F32, Precision::F64] {
        // Panics at the initialisation, then on the third batch (a generation).
        for fail_at in [0usize, 2] {
            let calls = std::sync::Arc::new(AtomicUsize::new(0));
            let c2 = calls.clone();
            let o = Objective::callback("flaky", None, move |xs: &[f64], dim: usize| {
                if c2.fetch_add(1, Ordering::SeqCst) == fail_at {
                    panic!("broken at call {fail_at}");
                }
                callback_values(xs, dim)
            })
            .expect("callback");
            let j = plain(&o, p);
            let err = e.run(&j, Mode::Auto).unwrap_err();
            assert!(
                matches!(err, Error::Objective { .. }) && err.to_string().contains("panicked"),
                "{p:?} {fail_at}: {err}"
            );
            assert_eq!(
                calls.load(Ordering::SeqCst),
                fail_at + 1,
                "no call after the failure"
            );
            calls.store(0, Ordering::SeqCst);
            let cpu_err = cpu_run(&j).unwrap_err();
            assert_eq!(err.to_string(), cpu_err.to_string());
        }
        // A wrong number of values.
        let short = Objective::callback("short", None, |xs: &[f64], dim: usize| {
            let mut v = callback_values(xs, dim);
            v.pop();
            v
        })
        .expect("callback");
        let err = e.run(&plain(&short, p), Mode::Auto).unwrap_err();
        assert!(
            err.to_string().contains("values for 40 points"),
            "{p:?}: {err}"
        );
        assert_eq!(
            err.to_string(),
            cpu_run(&plain(&short, p)).unwrap_err().to_string()
        );
        // NaN for part of the domain: never the best, the same run as on the CPU.
        let holes = Objective::callback("holes", None, |xs: &[f64], dim: usize| {
            callback_values(xs, dim)
                .into_iter()
                .zip(xs.chunks(dim))
                .map(|(v, x)| if x[0] > 1.0 { f64::NAN } else { v })
                .collect()
        })
        .expect("callback");
        let j = plain(&holes, p);
        let (r, gpu) = e.run_with_population(&j, Mode::Auto).expect("gpu run");
        assert!(!r.best_f.is_nan(), "{p:?}");
        assert_same_population(&gpu, &cpu_population(&j), "holes");
        assert_same_run(&r, &cpu_run(&j).expect("cpu run"), "holes");
        // NaN everywhere: the run ends as non-finite, as on the CPU.
        let nan = Objective::callback("nan", None, |xs: &[f64], dim: usize| {
            vec![f64::NAN; xs.len() / dim]
        })
        .expect("callback");
        let j = plain(&nan, p);
        let r = e.run(&j, Mode::Auto).expect("gpu run");
        assert_eq!(r.termination, Termination::NonFinite, "{p:?}");
        assert_same_run(&r, &cpu_run(&j).expect("cpu run"), "all NaN");
    }
    // The engine is usable after the failures.
    let o = Objective::callback("weighted", None, callback_values).expect("callback");
    let j = plain(&o, Precision::F64);
    assert_same_run(
        &e.run(&j, Mode::Auto).expect("gpu run"),
        &cpu_run(&j).expect("cpu run"),
        "after the failures",
    );
}

/// Control of a callback run on the GPU: the observer sees every generation (as on the
/// CPU engine) and its stop ends the run there with the CPU engine's state; a set stop
/// flag ends it before the first generation; the saver gets the CPU engine's states.
fn host_callback_control_is_the_cpu_engines(e: &CudaEngine) {
    let o = Objective::callback("weighted", None, callback_values).expect("callback");
    for p in [Precision::F32, Precision::F64] {
        let j = callback_job(
            &o,
            10,
            64,
            30,
            Strategy::Best1,
            Crossover::Binomial,
            BoundPolicy::Reflect,
            p,
            11,
        );
        let outcome = |gpu: bool, stop_at: u32, flag: Option<&AtomicBool>, every: u32| {
            let seen = Mutex::new(Vec::new());
            let saved = Mutex::new(Vec::new());
            let obs = |g: u32, best: f64| {
                seen.lock().unwrap().push((g, best.to_bits()));
                if g == stop_at {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            };
            let mut save = |c: &Checkpoint| {
                saved.lock().unwrap().push((c.generation, state_bits(c)));
                Flow::Continue
            };
            let mut control = Control {
                observer: Some(&obs),
                stop: flag,
                every,
                save: Some(&mut save),
            };
            let o = if gpu {
                e.run_controlled(&j, Mode::Auto, &mut control, Reporting::default())
            } else {
                cpu::try_run_controlled(&j, &mut control)
            }
            .expect("controlled run");
            (
                o.result.generations,
                o.result.termination,
                state_bits(&o.checkpoint),
                seen.into_inner().unwrap(),
                saved.into_inner().unwrap(),
            )
        };
        for (stop_at, every) in [(7u32, 0u32), (u32::MAX, 4), (0, 0)] {
            let g = outcome(true, stop_at, None, every);
            let c = outcome(false, stop_at, None, every);
            assert_eq!(g, c, "{p:?} stop at {stop_at}, every {every}");
            if stop_at == 7 {
                assert_eq!(g.0, 7);
                assert_eq!(g.1, Termination::Stopped);
                assert_eq!(g.3.len(), 8, "every generation seen");
            }
            if every == 4 {
                assert_eq!(g.4.len(), 7, "{p:?}: states at 4, 8, …, 28");
            }
        }
        let flag = AtomicBool::new(true);
        let g = outcome(true, u32::MAX, Some(&flag), 0);
        let c = outcome(false, u32::MAX, Some(&flag), 0);
        assert_eq!(g.0, 0);
        assert_eq!(g, c, "{p:?} stop flag");
    }
}
