//! Checkpoints of the CPU engine: a run stopped and resumed gives the same bits as one
//! that never stopped; the file format refuses what it did not write.

use gpude_host::checkpoint::{self, Entry, State};
use gpude_host::cpu::{self, Checkpoint, Control, Flow, Outcome};
use gpude_host::{BoundPolicy, Crossover, Error, Function, Job, Precision, Strategy, Termination};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

const G: u32 = 40;

fn job(strategy: Strategy, crossover: Crossover, bounds: BoundPolicy, p: Precision, g: u32) -> Job {
    let b = Job::builder(Function::Rastrigin, 7)
        .pop(24)
        .strategy(strategy)
        .bounds(bounds);
    // The thesis strategy takes no F, Cr or crossover.
    let b = if strategy.crosses() {
        b.crossover(crossover).f(0.6).cr(0.8)
    } else {
        b
    };
    b.generations(g)
        .seed(5)
        .stream(3)
        .precision(p)
        .history(true)
        .build()
        .expect("a valid job")
}

fn cases() -> Vec<(Strategy, Crossover, BoundPolicy)> {
    vec![
        (Strategy::Thesis, Crossover::Binomial, BoundPolicy::InitOnly),
        (Strategy::Rand1, Crossover::Binomial, BoundPolicy::Clip),
        (
            Strategy::Best1,
            Crossover::Exponential,
            BoundPolicy::Reflect,
        ),
        (
            Strategy::CurrentToBest1,
            Crossover::Binomial,
            BoundPolicy::Resample,
        ),
        (
            Strategy::Rand2,
            Crossover::Exponential,
            BoundPolicy::Resample,
        ),
        (Strategy::Best2, Crossover::Binomial, BoundPolicy::InitOnly),
    ]
}

/// The exact bits of a state.
fn bits(s: &State) -> (Vec<u64>, Vec<u64>) {
    match s {
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

fn assert_same(a: &Outcome, b: &Outcome, what: &str) {
    assert_eq!(
        a.result.best_f.to_bits(),
        b.result.best_f.to_bits(),
        "{what}"
    );
    let xa: Vec<u64> = a.result.best_x.iter().map(|v| v.to_bits()).collect();
    let xb: Vec<u64> = b.result.best_x.iter().map(|v| v.to_bits()).collect();
    assert_eq!(xa, xb, "{what}");
    assert_eq!(
        bits(&a.checkpoint.state),
        bits(&b.checkpoint.state),
        "{what}"
    );
    assert_eq!(a.result.generations, b.result.generations, "{what}");
    assert_eq!(a.result.evaluations, b.result.evaluations, "{what}");
    assert_eq!(a.result.termination, b.result.termination, "{what}");
    let ha: Vec<u64> = a
        .result
        .history
        .iter()
        .flatten()
        .map(|v| v.to_bits())
        .collect();
    let hb: Vec<u64> = b
        .result
        .history
        .iter()
        .flatten()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(ha, hb, "{what}");
}

/// Through the file format and back.
fn round_trip(c: Checkpoint) -> Checkpoint {
    let bytes = checkpoint::encode(&[Entry::Started(c.clone())]).expect("encodes");
    match checkpoint::decode(&bytes).expect("decodes").pop() {
        Some(Entry::Started(back)) => {
            assert_eq!(back, c);
            back
        }
        other => panic!("not a started run: {other:?}"),
    }
}

#[test]
fn half_and_resume_gives_the_same_bits() {
    for p in [Precision::F32, Precision::F64] {
        for (s, c, b) in cases() {
            let what = format!("{s:?} {c:?} {b:?} {p:?}");
            let full = cpu::run_controlled(&job(s, c, b, p, G), &mut Control::default());
            assert_eq!(full.result.generations, G, "{what}");
            let half = cpu::run_controlled(&job(s, c, b, p, G / 2), &mut Control::default());
            assert_eq!(half.checkpoint.generation, G / 2);
            let mut from = round_trip(half.checkpoint);
            from.set_generations(G).expect("a valid limit");
            let resumed = cpu::resume(from, &mut Control::default()).expect("resumes");
            assert_same(&full, &resumed, &what);
            // The plain entry point agrees too.
            let plain = match p {
                Precision::F32 => cpu::run::<f32>(&job(s, c, b, p, G), None).expect("runs"),
                Precision::F64 => cpu::run::<f64>(&job(s, c, b, p, G), None).expect("runs"),
            };
            assert_eq!(
                plain.best_f.to_bits(),
                full.result.best_f.to_bits(),
                "{what}"
            );
        }
    }
}

#[test]
fn stop_flag_stops_at_a_boundary_and_the_run_goes_on_identically() {
    for p in [Precision::F32, Precision::F64] {
        let j = job(
            Strategy::Rand1,
            Crossover::Exponential,
            BoundPolicy::Clip,
            p,
            G,
        );
        let full = cpu::run_controlled(&j, &mut Control::default());
        let stop = AtomicBool::new(false);
        // The flag is raised during generation 13 (as a signal handler would).
        let raise = |g: u32, _: f64| {
            if g == 13 {
                stop.store(true, Ordering::Relaxed);
            }
            Flow::Continue
        };
        let mut control = Control {
            observer: Some(&raise),
            stop: Some(&stop),
            ..Control::default()
        };
        let part = cpu::run_controlled(&j, &mut control);
        assert_eq!(part.result.generations, 13);
        assert_eq!(part.result.termination, Termination::Stopped);
        assert_eq!(part.result.history.as_ref().map(Vec::len), Some(14));
        assert!(!part.checkpoint.finished());
        let resumed =
            cpu::resume(round_trip(part.checkpoint), &mut Control::default()).expect("resumes");
        assert_same(&full, &resumed, "stop flag");
    }
}

#[test]
fn observer_can_stop_the_run() {
    let j = job(
        Strategy::Thesis,
        Crossover::Binomial,
        BoundPolicy::InitOnly,
        Precision::F32,
        G,
    );
    let seen = AtomicU32::new(0);
    let observer = |g: u32, _: f64| {
        seen.store(g, Ordering::Relaxed);
        if g == 5 { Flow::Stop } else { Flow::Continue }
    };
    let mut control = Control {
        observer: Some(&observer),
        ..Control::default()
    };
    let o = cpu::run_controlled(&j, &mut control);
    assert_eq!(o.result.generations, 5);
    assert_eq!(seen.load(Ordering::Relaxed), 5);
    assert_eq!(o.result.termination, Termination::Stopped);
    assert_eq!(o.result.evaluations, 24 * 6);
    // Through the solver's observer too.
    let r = cpu::run::<f32>(&j, Some(&observer)).expect("runs");
    assert_eq!(r.generations, 5);
    // Stopping at the last generation is no early stop.
    let last = |g: u32, _: f64| if g == G { Flow::Stop } else { Flow::Continue };
    let r = cpu::run::<f32>(&j, Some(&last)).expect("runs");
    assert_eq!(r.termination, Termination::MaxGenerations);
}

#[test]
fn periodic_checkpoints_resume_identically() {
    let j = job(
        Strategy::Best2,
        Crossover::Binomial,
        BoundPolicy::Reflect,
        Precision::F64,
        G,
    );
    let full = cpu::run_controlled(&j, &mut Control::default());
    let mut saved: Vec<Checkpoint> = Vec::new();
    let mut save = |c: &Checkpoint| {
        saved.push(c.clone());
        Flow::Continue
    };
    let mut control = Control {
        every: 7,
        save: Some(&mut save),
        ..Control::default()
    };
    let o = cpu::run_controlled(&j, &mut control);
    assert_same(&full, &o, "with saves");
    let gens: Vec<u32> = saved.iter().map(|c| c.generation).collect();
    assert_eq!(gens, [7, 14, 21, 28, 35]);
    for c in saved {
        let resumed = cpu::resume(round_trip(c), &mut Control::default()).expect("resumes");
        assert_same(&full, &resumed, "from a periodic checkpoint");
    }
}

#[test]
fn several_runs_and_pending_ones_round_trip() {
    let a = job(
        Strategy::Thesis,
        Crossover::Binomial,
        BoundPolicy::InitOnly,
        Precision::F32,
        3,
    );
    let b = Job::builder(Function::Sphere, 3)
        .pop(8)
        .max_evaluations(100)
        .target(1e-3)
        .build()
        .expect("valid")
        .with_stream(1);
    let done = cpu::run_controlled(&a, &mut Control::default()).checkpoint;
    let entries = vec![Entry::Started(done), Entry::Pending(b)];
    let bytes = checkpoint::encode(&entries).expect("encodes");
    assert_eq!(checkpoint::decode(&bytes).expect("decodes"), entries);
}

fn input_error(bytes: &[u8]) -> String {
    match checkpoint::decode(bytes) {
        Err(Error::Input { what, message }) => {
            assert_eq!(what, "checkpoint");
            message
        }
        other => panic!("not refused as input: {other:?}"),
    }
}

#[test]
fn foreign_truncated_and_corrupt_files_are_refused() {
    let j = job(
        Strategy::Rand1,
        Crossover::Binomial,
        BoundPolicy::Clip,
        Precision::F32,
        4,
    );
    let c = cpu::run_controlled(&j, &mut Control::default()).checkpoint;
    let good = checkpoint::encode(&[Entry::Started(c.clone())]).expect("encodes");

    assert!(input_error(b"").contains("not a gpude checkpoint"));
    assert!(input_error(b"[[jobs]]\nfunction = 1\n").contains("not a gpude checkpoint"));
    assert!(input_error(&good[..10]).contains("truncated"));
    assert!(input_error(&good[..good.len() - 1]).contains("truncated"));
    let mut longer = good.clone();
    longer.push(0);
    assert!(input_error(&longer).contains("follow"));
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    assert!(input_error(&flipped).contains("checksum"));
    let mut v6 = good.clone();
    v6[8] = 6;
    assert!(input_error(&v6).contains("format version 6; this gpude reads versions 1 to 5"));
    let mut v0 = good.clone();
    v0[8] = 0;
    assert!(input_error(&v0).contains("format version 0; this gpude reads versions 1 to 5"));

    // Consistent checksum, inconsistent content: a population of the wrong size.
    let mut short = c.clone();
    if let State::F32 { x, .. } = &mut short.state {
        x.pop();
    }
    let bytes = checkpoint::encode(&[Entry::Started(short.clone())]).expect("encodes");
    assert!(input_error(&bytes).contains("run 0: the population has"));
    assert!(cpu::resume(short, &mut Control::default()).is_err());
    // The wrong precision.
    let mut other = c;
    other.job = other.job.with_precision(Precision::F64).expect("valid");
    assert!(cpu::resume(other, &mut Control::default()).is_err());
}

#[test]
fn the_formula_survives_the_file_and_the_resume() {
    let textbook = |g: u32| {
        Job::builder(Function::Griewank, 6)
            .pop(20)
            .generations(g)
            .seed(2)
            .formula(gpude_host::Formula::Textbook)
            .history(true)
            .build()
            .expect("a valid job")
    };
    let full = cpu::run_controlled(&textbook(G), &mut Control::default());
    let half = cpu::run_controlled(&textbook(G / 2), &mut Control::default());
    let mut from = round_trip(half.checkpoint);
    assert_eq!(from.job.formula(), gpude_host::Formula::Textbook);
    from.set_generations(G).expect("a valid limit");
    let resumed = cpu::resume(from, &mut Control::default()).expect("resumes");
    assert_same(&full, &resumed, "textbook Griewank");
}
