//! Control on the GPU: observers, stops, progress and checkpoints, resumed on either
//! engine.

use crate::Test;
use crate::common::{assert_same_result, cpu_population, result_bits, state_bits};
use gpude::checkpoint::{Checkpoint, Entry};
use gpude::host::cpu::{self, Control, Flow};
use gpude::run::control::{Reporting, Watch};
use gpude::{
    BatchKernel, BoundPolicy, CudaEngine, Function, Job, Mode, Precision, RunLayout, Strategy,
    Termination,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

pub fn tests() -> Vec<Test> {
    tests![
        control_observer_stops_exactly,
        control_progress_is_seen,
        control_stop_flag_ends_at_a_report,
        checkpoint_resume_bit_identity,
        checkpoints_every_n_match_the_cpu,
        cpu_checkpoint_resumes_on_gpu,
        controlled_runs_equal_plain_runs,
        controlled_shared_row_kernels_match_the_cpu,
        auto_takes_a_list_of_large_populations_to_blocks,
        convergence_stops_match_the_cpu
    ]
}

/// The CPU engine's population after `job`'s generations, as exact bits.
fn cpu_bits(job: &Job) -> (Vec<u64>, Vec<u64>) {
    let p = cpu_population(job);
    let bits = |v: &[f64]| match job.precision() {
        Precision::F32 => v.iter().map(|x| (*x as f32).to_bits() as u64).collect(),
        Precision::F64 => v.iter().map(|x| x.to_bits()).collect(),
    };
    (bits(&p.x), bits(&p.fit))
}

fn control_job(p: Precision, s: Strategy, gens: u32, seed: u64) -> Job {
    let mut b = Job::builder(Function::Rastrigin, 24)
        .pop(96)
        .generations(gens)
        .seed(seed)
        .precision(p)
        .history(true);
    if s.crosses() {
        b = b.strategy(s).f(0.5).cr(0.9).bounds(BoundPolicy::Clip);
    }
    b.build().expect("valid job")
}

const LAYOUTS: [Mode; 3] = [Mode::Batch, Mode::Grid, Mode::Steps];

/// `job` with another generation limit.
fn limited(job: &Job, generations: u32) -> Job {
    let mut e = Entry::Pending(job.clone());
    e.set_generations(generations).expect("a valid limit");
    e.job().clone()
}

/// An observer that stops at generation 12 ends the run exactly there in exact mode
/// (reports every 4), on every layout: 12 generations, `Stopped`, and the population
/// the CPU engine has after 12 generations, bit for bit.
fn control_observer_stops_exactly(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 200, 21);
        let at12 = limited(&job, 12);
        let want = cpu_bits(&at12);
        for mode in LAYOUTS {
            let seen = Mutex::new(Vec::new());
            let observe = |g: u32, best: f64| {
                seen.lock().unwrap().push((g, best));
                if g >= 12 { Flow::Stop } else { Flow::Continue }
            };
            let mut control = Control {
                observer: Some(&observe),
                ..Control::default()
            };
            let exact = Reporting {
                every: 4,
                exact: true,
            };
            let o = e
                .run_controlled(&job, mode, &mut control, exact)
                .expect("runs");
            let what = format!("{p:?} {mode:?}");
            assert_eq!(o.result.generations, 12, "{what}");
            assert_eq!(o.result.termination, Termination::Stopped, "{what}");
            assert_eq!(o.checkpoint.generation, 12, "{what}");
            assert_eq!(state_bits(&o.checkpoint), want, "{what}");
            let gens: Vec<u32> = seen.lock().unwrap().iter().map(|s| s.0).collect();
            assert_eq!(gens, [0, 4, 8, 12], "{what}: the observer saw {gens:?}");
            assert_eq!(o.result.history.as_ref().map(Vec::len), Some(13), "{what}");
        }
    }
}

/// Progress without waiting (reports every 8): what the observer sees is reported
/// generations (multiples of 8, and the last), increasing, some before the end, each
/// with the best the run had there (the CPU engine's history, bit for bit); the run
/// ends at its limit.
fn control_progress_is_seen(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 3000, 5);
        let cpu_hist = match p {
            Precision::F32 => cpu::run::<f32>(&job, None),
            Precision::F64 => cpu::run::<f64>(&job, None),
        }
        .expect("cpu run")
        .history
        .expect("history");
        for mode in LAYOUTS {
            let seen = Mutex::new(Vec::new());
            let observe = |g: u32, best: f64| {
                seen.lock().unwrap().push((g, best));
                Flow::Continue
            };
            let mut control = Control {
                observer: Some(&observe),
                ..Control::default()
            };
            let every8 = Reporting {
                every: 8,
                exact: false,
            };
            let o = e
                .run_controlled(&job, mode, &mut control, every8)
                .expect("runs");
            let what = format!("{p:?} {mode:?}");
            assert_eq!(o.result.generations, 3000, "{what}");
            assert_eq!(o.result.termination, Termination::MaxGenerations, "{what}");
            let seen = seen.into_inner().unwrap();
            assert!(
                seen.len() >= 2,
                "{what}: no progress before the end: {seen:?}"
            );
            assert_eq!(seen.last().map(|s| s.0), Some(3000), "{what}: the last");
            assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{what}: {seen:?}");
            for &(g, best) in &seen {
                assert!(g % 8 == 0 || g == 3000, "{what}: generation {g} reported");
                assert_eq!(
                    best.to_bits(),
                    cpu_hist[g as usize].to_bits(),
                    "{what}: best at {g}"
                );
            }
            println!("  {what}: {} reports seen of 376", seen.len());
        }
    }
}

/// The stop flag, set by the observer at generation 40 while the run goes on: in exact
/// mode (and in the step layout, where the host looks between launches) the run ends
/// there, as on the CPU; without waiting, at some later report. Either way the state
/// is the CPU engine's after that many generations.
fn control_stop_flag_ends_at_a_report(e: &CudaEngine) {
    for exact in [true, false] {
        for mode in LAYOUTS {
            let job = control_job(Precision::F32, Strategy::Thesis, 1_000_000, 9);
            let flag = AtomicBool::new(false);
            let observe = |g: u32, _: f64| {
                if g >= 40 {
                    flag.store(true, Ordering::Relaxed);
                }
                Flow::Continue
            };
            let mut control = Control {
                observer: Some(&observe),
                stop: Some(&flag),
                ..Control::default()
            };
            let r = Reporting { every: 4, exact };
            let o = e.run_controlled(&job, mode, &mut control, r).expect("runs");
            let g = o.result.generations;
            let what = format!("exact {exact} {mode:?}: stopped at {g}");
            if exact || mode == Mode::Steps {
                assert_eq!(g, 40, "{what}");
            } else {
                assert!(g >= 40 && g % 4 == 0, "{what}");
            }
            assert_eq!(o.result.termination, Termination::Stopped, "{what}");
            let at = limited(&job, g);
            assert_eq!(state_bits(&o.checkpoint), cpu_bits(&at), "{what}");
            println!("  {what}");
        }
    }
}

/// G generations, and G/2 then a resume to G, give the same bits on the GPU: result
/// (best, point, history) and final population, single runs in every layout and a
/// batch of runs sharing a launch, f32 and f64, thesis and a classic strategy. The
/// controlled run also matches the plain `run` (no control block).
fn checkpoint_resume_bit_identity(e: &CudaEngine) {
    let every = Reporting::default();
    for p in [Precision::F32, Precision::F64] {
        for s in [Strategy::Thesis, Strategy::Rand1] {
            let job = control_job(p, s, 120, 33);
            let half = limited(&job, 60);
            for mode in LAYOUTS {
                let what = format!("{p:?} {s:?} {mode:?}");
                let plain = e.run(&job, mode).expect("plain run");
                let whole = e
                    .run_controlled(&job, mode, &mut Control::default(), every)
                    .expect("whole run");
                assert_eq!(result_bits(&plain), result_bits(&whole.result), "{what}");
                let first = e
                    .run_controlled(&half, mode, &mut Control::default(), every)
                    .expect("first half");
                assert_eq!(first.checkpoint.generation, 60, "{what}");
                let mut from = first.checkpoint;
                from.set_generations(120).expect("limit");
                let second = e
                    .resume(from, mode, &mut Control::default(), every)
                    .expect("resumed");
                assert_eq!(
                    result_bits(&whole.result),
                    result_bits(&second.result),
                    "{what}"
                );
                assert_eq!(
                    state_bits(&whole.checkpoint),
                    state_bits(&second.checkpoint),
                    "{what}"
                );
            }
            // A batch: four runs (streams 0..3) in one launch, stopped at 60 by their
            // job's limit and resumed together.
            let jobs: Vec<Job> = (0..4).map(|k| job.clone().with_stream(k)).collect();
            let entries = |js: &[Job]| js.iter().cloned().map(Entry::Pending).collect();
            let mut keep = Watch {
                keep: true,
                ..Watch::default()
            };
            let whole = e
                .run_entries(entries(&jobs), Mode::Batch, &mut keep)
                .expect("whole batch");
            let halves: Vec<Job> = jobs.iter().map(|j| limited(j, 60)).collect();
            let first = e
                .run_entries(entries(&halves), Mode::Batch, &mut keep)
                .expect("first halves");
            let resumed: Vec<Entry> = first
                .into_iter()
                .map(|r| {
                    let mut en = r.entry;
                    en.set_generations(120).expect("limit");
                    en
                })
                .collect();
            let second = e
                .run_entries(resumed, Mode::Batch, &mut keep)
                .expect("resumed batch");
            for (k, (a, b)) in whole.iter().zip(&second).enumerate() {
                let what = format!("{p:?} {s:?} batch run {k}");
                let (ra, rb) = (a.result.as_ref().unwrap(), b.result.as_ref().unwrap());
                assert_eq!(result_bits(ra), result_bits(rb), "{what}");
                match (&a.entry, &b.entry) {
                    (Entry::Started(x), Entry::Started(y)) => {
                        assert_eq!(state_bits(x), state_bits(y), "{what}")
                    }
                    _ => panic!("{what}: no state kept"),
                }
            }
        }
    }
}

/// Checkpoints every 25 generations (the launch split into segments): each saved state
/// is the CPU engine's at its generation, bit for bit, and a saver that stops ends the
/// run at the checkpoint it was given.
fn checkpoints_every_n_match_the_cpu(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 110, 77);
        for mode in LAYOUTS {
            let what = format!("{p:?} {mode:?}");
            let mut saved: Vec<Checkpoint> = Vec::new();
            let mut save = |c: &Checkpoint| {
                saved.push(c.clone());
                if c.generation >= 75 {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            };
            let mut control = Control {
                every: 25,
                save: Some(&mut save),
                ..Control::default()
            };
            let o = e
                .run_controlled(&job, mode, &mut control, Reporting::default())
                .expect("runs");
            let gens: Vec<u32> = saved.iter().map(|c| c.generation).collect();
            assert_eq!(gens, [25, 50, 75], "{what}");
            for c in &saved {
                let at = limited(&job, c.generation);
                assert_eq!(state_bits(c), cpu_bits(&at), "{what} at {}", c.generation);
                assert_eq!(
                    c.history.as_ref().map(Vec::len),
                    Some(c.generation as usize + 1)
                );
            }
            assert_eq!(o.result.generations, 75, "{what}");
            assert_eq!(o.result.termination, Termination::Stopped, "{what}");
        }
    }
}

/// A checkpoint of the CPU engine goes on on the GPU (and one of the GPU on the CPU) to
/// the same bits as a run that never stopped, on either engine.
fn cpu_checkpoint_resumes_on_gpu(e: &CudaEngine) {
    for p in [Precision::F32, Precision::F64] {
        let job = control_job(p, Strategy::Thesis, 100, 4);
        let half = limited(&job, 50);
        let cpu_half = cpu::run_controlled(&half, &mut Control::default());
        let cpu_whole = cpu::run_controlled(&job, &mut Control::default());
        for mode in LAYOUTS {
            let what = format!("{p:?} {mode:?}");
            let mut from = cpu_half.checkpoint.clone();
            from.set_generations(100).expect("limit");
            let on_gpu = e
                .resume(from, mode, &mut Control::default(), Reporting::default())
                .expect("gpu resume");
            assert_eq!(
                result_bits(&on_gpu.result),
                result_bits(&cpu_whole.result),
                "{what}: CPU then GPU"
            );
            assert_eq!(
                state_bits(&on_gpu.checkpoint),
                state_bits(&cpu_whole.checkpoint),
                "{what}"
            );
            let gpu_half = e
                .run_controlled(&half, mode, &mut Control::default(), Reporting::default())
                .expect("gpu half");
            let mut from = gpu_half.checkpoint;
            from.set_generations(100).expect("limit");
            let on_cpu = cpu::resume(from, &mut Control::default()).expect("cpu resume");
            assert_eq!(
                result_bits(&on_cpu.result),
                result_bits(&cpu_whole.result),
                "{what}: GPU then CPU"
            );
        }
    }
}

/// Runs under the control block (reports every 32 generations, no observer work) give the
/// same bits as plain ones (`run`, `run_batch`): a batch of 64 populations and one
/// population over the grid, for 300 and 3000 generations. The times of both are printed
/// (the difference is the control block's cost, the pinned block and the host's 0.2 ms
/// polling included); they are not asserted.
fn controlled_runs_equal_plain_runs(e: &CudaEngine) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (mode, runs, pop, gens) in [
        (Mode::Batch, 64u32, 256u32, 300u32),
        (Mode::Batch, 64, 256, 3000),
        (Mode::Grid, 1, 8192, 300),
        (Mode::Grid, 1, 8192, 3000),
    ] {
        let jobs: Vec<Job> = (0..runs)
            .map(|k| {
                Job::builder(Function::Griewank, 128)
                    .pop(pop)
                    .generations(gens)
                    .seed(1)
                    .stream(k)
                    .build()
                    .expect("valid job")
            })
            .collect();
        let observe = |_: usize, _: u32, _: f64| Flow::Continue;
        let (mut plain_t, mut ctl_t) = (Vec::new(), Vec::new());
        for _ in 0..4 {
            let t = std::time::Instant::now();
            let plain = match mode {
                Mode::Batch => e.run_batch(&jobs).expect("plain batch"),
                _ => vec![e.run(&jobs[0], mode).expect("plain run")],
            };
            plain_t.push(t.elapsed().as_secs_f64());
            let t = std::time::Instant::now();
            let mut watch = Watch {
                observer: Some(&observe),
                ..Watch::default()
            };
            let ctl = e
                .run_entries(
                    jobs.iter().cloned().map(Entry::Pending).collect(),
                    mode,
                    &mut watch,
                )
                .expect("controlled");
            ctl_t.push(t.elapsed().as_secs_f64());
            for (a, b) in plain.iter().zip(&ctl) {
                assert_eq!(
                    result_bits(a),
                    result_bits(b.result.as_ref().expect("a result")),
                    "{mode:?}"
                );
            }
        }
        // The first of each warms the modules up.
        let (p, c) = (median(plain_t[1..].to_vec()), median(ctl_t[1..].to_vec()));
        println!(
            "  {mode:?} {runs} x Np={pop}, D=128, {gens} gens: plain {:.2} ms, controlled {:.2} ms ({:+.1} %)",
            p * 1e3,
            c * 1e3,
            (c / p - 1.0) * 100.0
        );
        // Times are printed, not asserted: what the control block costs is measured by
        // the benchmarks (docs/PERFORMANCE.md), not by a test.
    }
}

/// The resident and pipelined batch kernels under control: runs saved every 25
/// generations (a launch per segment, each going on from the generations done) and
/// stopped by a saver at 75 hold the CPU engine's population at every checkpoint, bit
/// for bit; a run of the whole limit gives the plain launch's result; and each result
/// names the kernel's layout.
fn controlled_shared_row_kernels_match_the_cpu(e: &CudaEngine) {
    let (major, minor) = e.compute_capability();
    let saved_kernel = e.batch_kernel();
    let mut kernels = vec![(BatchKernel::Shared, RunLayout::BatchResident)];
    if major >= 8 {
        kernels.push((BatchKernel::Pipelined, RunLayout::BatchPipelined));
    } else {
        println!(
            "  SKIPPED (pipelined part): it needs sm_80 or later; this GPU is {major}.{minor}"
        );
    }
    for (kernel, layout) in kernels {
        e.set_batch_kernel(kernel);
        for p in [Precision::F32, Precision::F64] {
            // Griewank, D = 64: one round per row (the pipelined kernels' condition);
            // 3 populations in one launch.
            let jobs: Vec<Job> = (0..3)
                .map(|k| {
                    Job::builder(Function::Griewank, 64)
                        .pop(160)
                        .generations(110)
                        .seed(5)
                        .stream(k)
                        .precision(p)
                        .history(true)
                        .build()
                        .expect("valid job")
                })
                .collect();
            let what = format!("{kernel:?} {p:?}");
            let mut saved: Vec<Vec<Checkpoint>> = Vec::new();
            let mut save = |parts: &[gpude::checkpoint::Part]| {
                let cs: Vec<Checkpoint> = parts
                    .iter()
                    .map(|part| match part {
                        gpude::checkpoint::Part::Started(c) => (*c).clone(),
                        gpude::checkpoint::Part::Pending(_) => panic!("a run not started"),
                    })
                    .collect();
                let at = cs[0].generation;
                saved.push(cs);
                if at >= 75 { Flow::Stop } else { Flow::Continue }
            };
            let mut watch = Watch {
                every: 25,
                save: Some(&mut save),
                keep: true,
                ..Watch::default()
            };
            let ran = e
                .run_entries(
                    jobs.iter().cloned().map(Entry::Pending).collect(),
                    Mode::Batch,
                    &mut watch,
                )
                .expect("controlled runs");
            let gens: Vec<u32> = saved.iter().map(|cs| cs[0].generation).collect();
            assert_eq!(gens, [25, 50, 75], "{what}");
            for cs in &saved {
                for (k, c) in cs.iter().enumerate() {
                    let at = limited(&jobs[k], c.generation);
                    assert_eq!(
                        state_bits(c),
                        cpu_bits(&at),
                        "{what} run {k} at {}",
                        c.generation
                    );
                }
            }
            for r in &ran {
                let r = r.result.as_ref().expect("a result");
                assert_eq!(r.generations, 75, "{what}");
                assert_eq!(r.termination, Termination::Stopped, "{what}");
                assert_eq!((r.layout, r.launch_runs), (layout, 3), "{what}");
            }
            // The whole limit under control, reports every 8 generations, equals the
            // plain launch.
            let observe = |_: usize, _: u32, _: f64| Flow::Continue;
            let mut watch = Watch {
                observer: Some(&observe),
                reporting: Reporting {
                    every: 8,
                    exact: false,
                },
                ..Watch::default()
            };
            let ctl = e
                .run_entries(
                    jobs.iter().cloned().map(Entry::Pending).collect(),
                    Mode::Batch,
                    &mut watch,
                )
                .expect("controlled");
            let plain = e.run_batch(&jobs).expect("plain");
            for (k, (a, b)) in plain.iter().zip(&ctl).enumerate() {
                let b = b.result.as_ref().expect("a result");
                assert_eq!(result_bits(a), result_bits(b), "{what} run {k}");
                assert_eq!(a.layout, layout, "{what}");
            }
        }
    }
    e.set_batch_kernel(saved_kernel);
}

/// `auto` on a list: one population of 2 048 (D = 128) goes over the whole GPU, 132 of
/// them go to blocks (the cost model's choice, `Costs`), and the results say so.
fn auto_takes_a_list_of_large_populations_to_blocks(e: &CudaEngine) {
    let jobs: Vec<Job> = (0..132)
        .map(|k| {
            Job::builder(Function::Griewank, 128)
                .pop(2048)
                .generations(3)
                .seed(1)
                .stream(k)
                .build()
                .expect("valid job")
        })
        .collect();
    let refs: Vec<&Job> = jobs.iter().collect();
    let modes = e.auto_modes(&refs);
    let sms = e.multiprocessors();
    let expect = gpude::host::cuda::Costs::H200
        .scaled(sms)
        .prefers_batch(&jobs[0], 132);
    assert_eq!(modes[0], if expect { Mode::Batch } else { Mode::Grid });
    assert_eq!(e.auto_modes(&refs[..1]), [Mode::Grid]);
    let mut watch = Watch::default();
    let ran = e
        .run_entries(
            jobs.iter().cloned().map(Entry::Pending).collect(),
            Mode::Auto,
            &mut watch,
        )
        .expect("auto runs");
    let r = ran[0].result.as_ref().expect("a result");
    if expect {
        assert!(
            matches!(
                r.layout,
                RunLayout::Batch | RunLayout::BatchPipelined | RunLayout::BatchResident
            ),
            "{:?}",
            r.layout
        );
        assert_eq!(r.launch_runs, 132);
    } else {
        assert_eq!((r.layout, r.launch_runs), (RunLayout::Grid, 1));
    }
    let one = e
        .run_entries(
            vec![Entry::Pending(jobs[0].clone())],
            Mode::Auto,
            &mut watch,
        )
        .expect("one run");
    let r = one[0].result.as_ref().expect("a result");
    assert_eq!((r.layout, r.launch_runs), (RunLayout::Grid, 1));
}

/// Convergence stops on the GPU end each run where the CPU engine's does, with the same
/// bits and reason: a spread stop (`atol`) and a stagnation stop, in the batch (three
/// runs in one launch, through `run_batch`, the resident kernel and the global-memory
/// one), grid and step layouts, in both precisions.
fn convergence_stops_match_the_cpu(e: &CudaEngine) {
    let saved_kernel = e.batch_kernel();
    for p in [Precision::F32, Precision::F64] {
        for (function, atol, stagnation, expect) in [
            (Function::Sphere, Some(1e-9), None, Termination::Converged),
            (Function::Rastrigin, None, Some(40), Termination::Stagnated),
        ] {
            let jobs: Vec<Job> = (0..3)
                .map(|k| {
                    let mut b = Job::builder(function, 8)
                        .pop(64)
                        .generations(3000)
                        .seed(9)
                        .stream(k)
                        .precision(p);
                    if let Some(a) = atol {
                        b = b.atol(a);
                    }
                    if let Some(s) = stagnation {
                        b = b.stagnation(s);
                    }
                    b.build().expect("valid job")
                })
                .collect();
            let cpu: Vec<_> = jobs
                .iter()
                .map(|j| cpu::run_controlled(j, &mut Control::default()).result)
                .collect();
            for r in &cpu {
                assert_eq!(r.termination, expect, "{p:?} {function:?} on the CPU");
                assert!(r.generations < 3000 && r.generations % 32 == 0);
            }
            let what = format!("{p:?} {function:?}");
            for kernel in [BatchKernel::Auto, BatchKernel::Global] {
                e.set_batch_kernel(kernel);
                let gpu = e.run_batch(&jobs).expect("batch");
                for (k, (a, b)) in cpu.iter().zip(&gpu).enumerate() {
                    assert_same_result(a, b, &format!("{what} {kernel:?} run {k}"));
                }
            }
            e.set_batch_kernel(saved_kernel);
            for mode in [Mode::Grid, Mode::Steps] {
                let r = e.run(&jobs[1], mode).expect("whole-GPU run");
                assert_eq!(result_bits(&cpu[1]), result_bits(&r), "{what} {mode:?}");
            }
        }
    }
}
