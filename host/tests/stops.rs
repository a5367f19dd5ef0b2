//! Convergence stops on the CPU engine: a run ends converged or stagnated at a
//! generation the stops look at, a resumed run stops where the run that never stopped
//! does, and the engines that do not look at the stops refuse them.

use gpude_host::checkpoint::{self, Entry, State};
use gpude_host::cpu::{self, Checkpoint, Control, Flow, Outcome};
use gpude_host::run::stops::converged;
use gpude_host::{Archipelago, Function, Job, Objective, Precision, Strategy, Termination};

/// A limit that no test reaches.
const FAR: u32 = 100_000;

fn sphere(atol: f64) -> Job {
    Job::builder(Function::Sphere, 4)
        .pop(32)
        .generations(FAR)
        .seed(11)
        .atol(atol)
        .build()
        .expect("a valid job")
}

/// A constant objective: the best never improves.
fn flat(stagnation: u32, every: u32) -> Job {
    let one = Objective::expr("0*sum(x) + 1", None).expect("an expression");
    Job::builder_for(one, 3)
        .domain(-1.0, 1.0)
        .pop(16)
        .generations(FAR)
        .stagnation(stagnation)
        .check_every(every)
        .build()
        .expect("a valid job")
}

fn values(s: &State) -> Vec<f64> {
    match s {
        State::F32 { fit, .. } => fit.iter().map(|&v| v as f64).collect(),
        State::F64 { fit, .. } => fit.clone(),
    }
}

fn bits(o: &Outcome) -> (u64, Vec<u64>, Vec<u64>, u32, Termination) {
    let state = match &o.checkpoint.state {
        State::F32 { x, .. } => x.iter().map(|v| v.to_bits() as u64).collect(),
        State::F64 { x, .. } => x.iter().map(|v| v.to_bits()).collect(),
    };
    let history = o
        .result
        .history
        .iter()
        .flatten()
        .map(|v| v.to_bits())
        .collect();
    (
        o.result.best_f.to_bits(),
        state,
        history,
        o.result.generations,
        o.result.termination,
    )
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

/// The run of `job` stopped by its saver at its first save (every `every` generations),
/// and that state through the file format.
fn saved_once(job: &Job, every: u32) -> Checkpoint {
    let mut first = None;
    let mut save = |c: &Checkpoint| {
        first = Some(c.clone());
        Flow::Stop
    };
    let mut control = Control {
        every,
        save: Some(&mut save),
        ..Control::default()
    };
    let o = cpu::run_controlled(job, &mut control);
    assert_eq!(o.result.termination, Termination::Stopped);
    round_trip(first.expect("saved once"))
}

#[test]
fn a_spread_stop_ends_the_run_converged_where_the_values_first_converge() {
    let job = sphere(1e-3);
    let stopped = cpu::run_controlled(&job, &mut Control::default());
    let r = &stopped.result;
    assert_eq!(r.termination, Termination::Converged);
    assert!(r.termination.is_success());
    assert!(
        r.generations > 0 && r.generations < FAR,
        "{}",
        r.generations
    );
    assert_eq!(r.generations % 32, 0, "{}", r.generations);
    assert_eq!(r.evaluations, job.evaluations(r.generations));
    assert!(converged(&values(&stopped.checkpoint.state), 0.0, 1e-3));
    // The same job without the stop, looked at every 32 generations: its values first
    // converge at that generation, with the same bits.
    let free = Job::builder(Function::Sphere, 4)
        .pop(32)
        .generations(FAR)
        .seed(11)
        .build()
        .unwrap();
    let mut first = None;
    let mut save = |c: &Checkpoint| {
        if converged(&values(&c.state), 0.0, 1e-3) {
            first = Some(c.clone());
            return Flow::Stop;
        }
        Flow::Continue
    };
    let mut control = Control {
        every: 32,
        save: Some(&mut save),
        ..Control::default()
    };
    let _ = cpu::run_controlled(&free, &mut control);
    let first = first.expect("the values converge");
    assert_eq!(first.generation, r.generations);
    assert_eq!(first.state, stopped.checkpoint.state);
}

#[test]
fn a_relative_tolerance_stops_too_and_the_interval_is_kept() {
    // A minimum of 1: the spread shrinks to 0, the mean to 1.
    let shifted = Objective::expr("sum(x^2) + 1", Some(1.0)).unwrap();
    let job = Job::builder_for(shifted, 4)
        .domain(-5.0, 5.0)
        .pop(32)
        .generations(FAR)
        .seed(2)
        .precision(Precision::F64)
        .tol(0.01)
        .check_every(10)
        .build()
        .unwrap();
    let r = cpu::run::<f64>(&job, None).unwrap();
    assert_eq!(r.termination, Termination::Converged);
    assert_eq!(r.generations % 10, 0, "{}", r.generations);
    assert!(r.generations < FAR);
}

#[test]
fn an_adaptive_run_stops_converged() {
    let job = Job::builder(Function::Sphere, 4)
        .strategy(Strategy::Jade)
        .pop(20)
        .max_evaluations(20 * FAR as u64)
        .seed(4)
        .atol(1e-3)
        .build()
        .unwrap();
    let r = cpu::run::<f32>(&job, None).unwrap();
    assert_eq!(r.termination, Termination::Converged);
    assert_eq!(r.generations % 32, 0, "{}", r.generations);
    assert!(r.generations < job.generations(), "{}", r.generations);
}

#[test]
fn a_flat_objective_stagnates_at_the_first_look_past_the_window() {
    for (stagnation, every, at) in [(20, 32, 32), (12, 5, 15), (1, 1, 1)] {
        let job = flat(stagnation, every);
        assert!(job.history(), "the stagnation keeps the history");
        let r = cpu::run::<f32>(&job, None).unwrap();
        assert_eq!(
            r.termination,
            Termination::Stagnated,
            "{stagnation} {every}"
        );
        assert_eq!(r.generations, at, "{stagnation} {every}");
        assert_eq!(r.history.as_ref().map(Vec::len), Some(at as usize + 1));
    }
    // The limit comes first.
    let job = Job::builder_for(Objective::expr("0*sum(x) + 1", None).unwrap(), 3)
        .domain(-1.0, 1.0)
        .pop(16)
        .generations(32)
        .stagnation(4)
        .build()
        .unwrap();
    let r = cpu::run::<f32>(&job, None).unwrap();
    assert_eq!(
        (r.termination, r.generations),
        (Termination::MaxGenerations, 32)
    );
}

#[test]
fn a_resumed_run_stops_where_the_run_that_never_stopped_does() {
    // Converged: saved at 32, resumed from the file.
    let job = sphere(1e-4);
    let full = cpu::run_controlled(&job, &mut Control::default());
    assert_eq!(full.result.termination, Termination::Converged);
    assert!(full.result.generations > 32, "{}", full.result.generations);
    let half = saved_once(&job, 32);
    assert_eq!(half.generation, 32);
    let resumed = cpu::resume(half, &mut Control::default()).unwrap();
    assert_eq!(bits(&resumed), bits(&full));
    // Stagnated: the window reaches back before the save, through the saved history.
    let job = flat(100, 32);
    let full = cpu::run_controlled(&job, &mut Control::default());
    assert_eq!(
        (full.result.termination, full.result.generations),
        (Termination::Stagnated, 128)
    );
    let half = saved_once(&job, 64);
    let resumed = cpu::resume(half, &mut Control::default()).unwrap();
    assert_eq!(bits(&resumed), bits(&full));
}

#[test]
fn a_stopped_run_reads_back_stopped_and_does_not_go_on() {
    let job = sphere(1e-3);
    let o = cpu::run_controlled(&job, &mut Control::default());
    let end = round_trip(o.checkpoint.clone());
    assert_eq!(end.job.stops(), job.stops());
    assert!(end.finished());
    assert_eq!(end.result().termination, Termination::Converged);
    let again = cpu::resume(end, &mut Control::default()).unwrap();
    assert_eq!(bits(&again), bits(&o));
}

#[test]
fn the_split_and_islands_refuse_the_stops_by_name() {
    let job = sphere(1e-3);
    let e = cpu::split::run_job(&job, 2, None).unwrap_err().to_string();
    assert!(e.contains("atol") && e.contains("not supported"), "{e}");
    let e = Archipelago::builder(flat(5, 32), 2)
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("stagnation") && e.contains("not supported"),
        "{e}"
    );
    let tol = Job::builder(Function::Sphere, 8)
        .pop(16)
        .tol(0.1)
        .build()
        .unwrap();
    let e = Archipelago::builder(tol, 2)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("tol"), "{e}");
}

#[test]
fn bad_stops_are_refused_when_built() {
    let b = || Job::builder(Function::Sphere, 4).pop(16);
    for (job, what) in [
        (b().tol(-1.0).build(), "tol"),
        (b().atol(f64::INFINITY).build(), "atol"),
        (b().stagnation(0).build(), "stagnation"),
        (b().atol(1.0).check_every(0).build(), "check-every"),
    ] {
        let e = job.unwrap_err().to_string();
        assert!(e.starts_with(what), "{e}");
    }
    // The history stays with a stagnation stop.
    let job = b().stagnation(3).build().unwrap().with_history(false);
    assert!(job.history());
}
