//! The adaptive kernels (jDE, JADE, SHADE, L-SHADE, jSO; classic strategies on CEC 2017
//! functions) in the batch and grid layouts against the CPU engine: built-in, CEC 2017
//! and users' objectives, host callbacks, and what the GPU refuses.

use crate::Test;
use crate::common::{callback_values, example_ptx, state_bits};
use gpude::checkpoint::State;
use gpude::expr::{Expr, builtins::expression};
use gpude::host::cpu::{self, Control, Flow};
use gpude::run::control::Reporting;
use gpude::{
    Crossover, CudaEngine, Error, Function, Job, Mode, Objective, Precision, RunResult, Strategy,
    Termination,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

pub fn tests() -> Vec<Test> {
    tests![
        adaptive_runs_match_cpu_bit_for_bit,
        classic_cec_runs_match_cpu_bit_for_bit,
        adaptive_gpu_refusals_are_clear,
        adaptive_grid_runs_match_cpu_bit_for_bit,
        adaptive_user_objectives_match_cpu_bit_for_bit,
        adaptive_host_callbacks_run_as_on_the_cpu
    ]
}

/// An adaptive job of a user's objective: D = 10 in [-5, 5], a budget whose last
/// generation is partial, history on.
fn user_adaptive_job(o: &Objective, s: Strategy, p: Precision, stream: u32) -> Job {
    Job::builder_for(o.clone(), 10)
        .domain(-5.0, 5.0)
        .strategy(s)
        .max_evaluations(2_345)
        .precision(p)
        .seed(2017)
        .stream(stream)
        .history(true)
        .build()
        .expect("valid job")
}

/// Adaptive strategies with a user's objective on the GPU: an expression with a
/// separable form (the adaptive `separable` kernels), one without (the `external`
/// kernels); every strategy, both precisions, the batch layout (two streams in one
/// launch) and the grid layout: the CPU engine's bits (best value and point,
/// generations, evaluations, history, the final population). PTX modules (an
/// expression's modules of both forms, and the example crate's) run as their
/// expressions do.
fn adaptive_user_objectives_match_cpu_bit_for_bit(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    let sep_src = "sum(x^2 - 10*cos(2*pi*x)) + 10*D";
    let whole_src = "sum(x^2) + sum(abs(x)) * prod(cos(x))";
    let sep = Objective::expr(sep_src, Some(0.0)).expect("an expression");
    let whole = Objective::expr(whole_src, None).expect("an expression");
    let mut compared = 0;
    for p in [Precision::F64, Precision::F32] {
        assert!(sep.separable_flags(p).is_some(), "{sep_src} is separable");
        assert!(whole.separable_flags(p).is_none(), "{whole_src} is not");
        for o in [&sep, &whole] {
            for s in Strategy::ADAPTIVE {
                let jobs: Vec<Job> = (0..2).map(|k| user_adaptive_job(o, s, p, k)).collect();
                let refs: Vec<&Job> = jobs.iter().collect();
                let batch = e.run_adaptive(&refs, Mode::Batch).expect("gpu runs");
                for (job, (r, pop)) in jobs.iter().zip(&batch) {
                    let (cr, cx, cf) = cpu_adaptive(job);
                    let what = format!("{s:?} {} {p:?} stream {}", o.name(), job.stream());
                    assert_eq!(r.termination, cr.termination, "{what}");
                    assert_eq!(
                        adaptive_bits(r, &pop.x, &pop.fit),
                        adaptive_bits(&cr, &cx, &cf),
                        "{what}: the GPU run differs from the CPU run"
                    );
                    compared += 1;
                }
                if matches!(s, Strategy::Jde | Strategy::Jso) {
                    let (r, pop) = e
                        .run_with_population(&jobs[1], Mode::Grid)
                        .expect("grid run");
                    let (cr, cx, cf) = cpu_adaptive(&jobs[1]);
                    assert_eq!(
                        adaptive_bits(&r, &pop.x, &pop.fit),
                        adaptive_bits(&cr, &cx, &cf),
                        "{s:?} {} {p:?} grid: the GPU run differs from the CPU run",
                        o.name()
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 2 * 2 * (2 * 5 + 2));
    // PTX modules run as their expressions: the separable one's module, the other's
    // whole-vector module, and the example crate's Rosenbrock (both forms; the engine
    // takes the separable one) as Rosenbrock's expression.
    let ros = expression(Function::Rosenbrock);
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    for p in [gpude::expr::Precision::F32, gpude::expr::Precision::F64] {
        let sx = Expr::parse(sep_src).unwrap();
        let sm = sx.separable().expect("separable").ptx(p);
        pairs.push(("separable module".into(), sm, sep_src.into()));
        let wm = Expr::parse(whole_src).unwrap().ptx(p);
        pairs.push(("whole-vector module".into(), wm, whole_src.into()));
    }
    match example_ptx() {
        Some(text) => pairs.push(("example".into(), text, ros.clone())),
        None => println!(
            "  SKIPPED the example crate: no gpu-bundle/objective-example.ptx and no \
             $GPUDE_OBJECTIVE_PTX (scripts/gpu-bundle.sh builds it)"
        ),
    }
    let mut runs = 0;
    for (what, text, src) in &pairs {
        let code = PtxCode::parse(text.clone()).expect("a PTX objective");
        let ptx = Objective::ptx(what.as_str(), None, code).unwrap();
        let reference = Objective::expr(src, None).unwrap();
        for p in [Precision::F32, Precision::F64] {
            if ptx.ptx_code().is_some_and(|c| !c.defines(p)) {
                continue;
            }
            for (s, mode) in [(Strategy::LShade, Mode::Batch), (Strategy::Jso, Mode::Grid)] {
                let a = user_adaptive_job(&ptx, s, p, 0);
                let b = user_adaptive_job(&reference, s, p, 0);
                let (ra, pa) = e.run_with_population(&a, mode).expect("PTX run");
                let (rb, pb) = e.run_with_population(&b, mode).expect("expression run");
                let w = format!("{what} {p:?} {s:?} {mode:?}");
                assert_eq!(
                    adaptive_bits(&ra, &pa.x, &pa.fit),
                    adaptive_bits(&rb, &pb.x, &pb.fit),
                    "{w}: the PTX objective's run differs from its expression's"
                );
                runs += 1;
            }
        }
    }
    assert!(runs >= 8, "{runs} PTX runs");
}

/// Adaptive strategies with a host callback on the GPU (the adaptive kernels' host
/// phases: the DE stages on the GPU, the callback on the host): every strategy, both
/// precisions, the CPU engine's bits, the same calls with the same row counts; a
/// batch mixing a callback with a built-in function; a callback that panics is the
/// CPU engine's error; the observer and the stop flag end the run where the CPU
/// engine's end.
fn adaptive_host_callbacks_run_as_on_the_cpu(e: &CudaEngine) {
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    let rows_seen = |log: Arc<Mutex<Vec<usize>>>| {
        move |xs: &[f64], dim: usize| {
            log.lock().unwrap().push(xs.len() / dim);
            callback_values(xs, dim)
        }
    };
    let mut compared = 0;
    for p in [Precision::F64, Precision::F32] {
        for s in Strategy::ADAPTIVE {
            let (gl, cl) = (
                Arc::new(Mutex::new(Vec::new())),
                Arc::new(Mutex::new(Vec::new())),
            );
            let og = Objective::callback("weighted", None, rows_seen(gl.clone())).unwrap();
            let oc = Objective::callback("weighted", None, rows_seen(cl.clone())).unwrap();
            let gj = user_adaptive_job(&og, s, p, 1);
            let cj = user_adaptive_job(&oc, s, p, 1);
            let (r, pop) = e.run_with_population(&gj, Mode::Auto).expect("gpu run");
            let (cr, cx, cf) = cpu_adaptive(&cj);
            let what = format!("{s:?} {p:?}");
            assert_eq!(r.backend, "cuda", "{what}");
            assert_eq!(r.termination, Termination::MaxEvaluations, "{what}");
            assert_eq!(
                adaptive_bits(&r, &pop.x, &pop.fit),
                adaptive_bits(&cr, &cx, &cf),
                "{what}: the GPU run differs from the CPU run"
            );
            let (g, c) = (gl.lock().unwrap().clone(), cl.lock().unwrap().clone());
            assert_eq!(g, c, "{what}: the batches the callback saw");
            // The search's batches, then the best point's verified value (one row).
            assert_eq!(g.last(), Some(&1), "{what}");
            assert_eq!(
                g[..g.len() - 1].iter().sum::<usize>() as u64,
                r.evaluations,
                "{what}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 10);
    // A batch mixing a callback job with a built-in function's adaptive job.
    let o = Objective::callback("weighted", None, callback_values).unwrap();
    let jobs = vec![
        user_adaptive_job(&o, Strategy::Shade, Precision::F64, 0),
        Job::builder(Function::Rastrigin, 10)
            .strategy(Strategy::Shade)
            .max_evaluations(2_345)
            .seed(2017)
            .history(true)
            .build()
            .unwrap(),
    ];
    let got = e.run_batch(&jobs).expect("batch");
    for (j, g) in jobs.iter().zip(&got) {
        let (cr, _, _) = cpu_adaptive(j);
        assert_eq!(
            adaptive_bits(g, &[], &[]),
            adaptive_bits(&cr, &[], &[]),
            "{}",
            j.objective().name()
        );
    }
    // A panic in the third batch (generation 2): the CPU engine's error, no call after.
    for p in [Precision::F32, Precision::F64] {
        let calls = Arc::new(AtomicUsize::new(0));
        let c2 = calls.clone();
        let o = Objective::callback("flaky", None, move |xs: &[f64], dim: usize| {
            if c2.fetch_add(1, Ordering::SeqCst) == 2 {
                panic!("broken at call 2");
            }
            callback_values(xs, dim)
        })
        .unwrap();
        let err = e
            .run(&user_adaptive_job(&o, Strategy::Jso, p, 0), Mode::Auto)
            .unwrap_err();
        assert!(
            matches!(err, Error::Objective { .. }) && err.to_string().contains("panicked"),
            "{p:?}: {err}"
        );
        assert_eq!(
            calls.load(Ordering::SeqCst),
            3,
            "{p:?}: no call after the failure"
        );
    }
    // The observer stops after generation 7, on both engines alike.
    let o = Objective::callback("weighted", None, callback_values).unwrap();
    let j = user_adaptive_job(&o, Strategy::LShade, Precision::F64, 0);
    let stop_at_7 = |g: u32, _: f64| if g >= 7 { Flow::Stop } else { Flow::Continue };
    let mut c = Control {
        observer: Some(&stop_at_7),
        ..Control::default()
    };
    let g = e
        .run_controlled(&j, Mode::Auto, &mut c, Reporting::default())
        .expect("gpu run");
    let mut c = Control {
        observer: Some(&stop_at_7),
        ..Control::default()
    };
    let cpu = cpu::run_controlled(&j, &mut c);
    assert_eq!(g.result.generations, 7);
    assert_eq!(g.result.termination, Termination::Stopped);
    assert_eq!(
        adaptive_bits(&g.result, &[], &[]),
        adaptive_bits(&cpu.result, &[], &[])
    );
    assert_eq!(state_bits(&g.checkpoint), state_bits(&cpu.checkpoint));
    // A stop flag set before the run: the initial population only.
    let flag = AtomicBool::new(true);
    let mut c = Control {
        stop: Some(&flag),
        ..Control::default()
    };
    let g = e
        .run_controlled(&j, Mode::Auto, &mut c, Reporting::default())
        .expect("gpu run");
    assert_eq!(
        (g.result.generations, g.result.evaluations),
        (0, j.pop() as u64)
    );
}

/// The jobs of the adaptive parity test: `s` on `objective` at D = 10 with an odd budget
/// (the last generation is partial; L-SHADE and jSO shrink from the first generations
/// on), two streams of one seed in one batch, with the history.
fn adaptive_jobs(s: Strategy, objective: &Objective, precision: Precision) -> Vec<Job> {
    (0..2)
        .map(|stream| {
            Job::builder_for(objective.clone(), 10)
                .strategy(s)
                .max_evaluations(2_345)
                .precision(precision)
                .seed(2017)
                .stream(stream)
                .history(true)
                .build()
                .expect("valid job")
        })
        .collect()
}

/// The bits of a result and final population, for comparisons.
fn adaptive_bits(r: &RunResult, x: &[f64], fit: &[f64]) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
    let mut head: Vec<u64> = vec![r.best_f.to_bits(), r.generations as u64, r.evaluations];
    head.extend(r.best_x.iter().map(|v| v.to_bits()));
    head.extend(r.history.iter().flatten().map(|v| v.to_bits()));
    (
        head,
        x.iter().map(|v| v.to_bits()).collect(),
        fit.iter().map(|v| v.to_bits()).collect(),
    )
}

/// The CPU engine's run of an adaptive job: its result and final population (rows,
/// values) as f64.
fn cpu_adaptive(job: &Job) -> (RunResult, Vec<f64>, Vec<f64>) {
    use gpude::host::cpu::adaptive::run_until;
    match job.precision() {
        Precision::F64 => run_until::<f64>(job, None, None),
        Precision::F32 => {
            let (r, x, f) = run_until::<f32>(job, None, None);
            (
                r,
                x.iter().map(|&v| v as f64).collect(),
                f.iter().map(|&v| v as f64).collect(),
            )
        }
    }
}

/// The CPU engine's run of a classic job (on a CEC 2017 function): its result and final
/// population (rows, values) as f64.
fn cpu_classic(job: &Job) -> (RunResult, Vec<f64>, Vec<f64>) {
    let o = cpu::run_controlled(job, &mut Control::default());
    let (x, fit): (Vec<f64>, Vec<f64>) = match &o.checkpoint.state {
        State::F32 { x, fit } => (
            x.iter().map(|&v| v as f64).collect(),
            fit.iter().map(|&v| v as f64).collect(),
        ),
        State::F64 { x, fit } => (x.clone(), fit.clone()),
    };
    (o.result, x, fit)
}

/// Every adaptive strategy, f64 and f32, on a built-in function and CEC 2017 functions
/// (plain, hybrid, composition): the GPU's runs (one block each, two per launch) give
/// the CPU engine's bits — best value and point, generations, evaluations, history, and
/// the whole final population (reduced for L-SHADE and jSO).
fn adaptive_runs_match_cpu_bit_for_bit(e: &CudaEngine) {
    let mut objectives = vec![Objective::Builtin(Function::Rastrigin)];
    match gpude::cec2017::DataSource::locate(None) {
        Ok(source) => {
            for n in [1, 5, 13, 22] {
                let id = gpude::cec2017::FunctionId::new(n).expect("a CEC 2017 function");
                objectives.push(Objective::cec2017(&source, id, 10).expect("its data"));
            }
        }
        Err(err) => println!("    NOTE: no CEC 2017 data ({err}); the built-in function only"),
    }
    let mut compared = 0;
    for precision in [Precision::F64, Precision::F32] {
        for s in Strategy::ADAPTIVE {
            for objective in &objectives {
                let jobs = adaptive_jobs(s, objective, precision);
                let refs: Vec<&Job> = jobs.iter().collect();
                let gpu = e.run_adaptive(&refs, Mode::Batch).expect("gpu runs");
                for (job, (r, pop)) in jobs.iter().zip(&gpu) {
                    let (cr, cx, cf) = cpu_adaptive(job);
                    let what = format!(
                        "{s:?} {} {precision:?} stream {}",
                        objective.name(),
                        job.stream()
                    );
                    assert_eq!(r.termination, cr.termination, "{what}");
                    assert_eq!(r.termination, Termination::MaxEvaluations, "{what}");
                    assert_eq!(
                        adaptive_bits(r, &pop.x, &pop.fit),
                        adaptive_bits(&cr, &cx, &cf),
                        "{what}: the GPU run differs from the CPU run"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 2 * 2 * 5 * objectives.len());
}

/// What the GPU does not run is refused before any work, saying what runs.
fn adaptive_gpu_refusals_are_clear(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    // A PTX objective in a precision its module does not define.
    let ex = Expr::parse("sum(x^2)").expect("an expression");
    let code = PtxCode::parse(ex.ptx(gpude::expr::Precision::F32)).expect("its module");
    let job = Job::builder_for(Objective::ptx("sq32", Some(0.0), code).unwrap(), 10)
        .domain(-5.0, 5.0)
        .strategy(Strategy::Jso)
        .precision(Precision::F64)
        .build()
        .expect("valid job");
    let err = e.run(&job, Mode::Auto).expect_err("refused").to_string();
    assert!(err.contains("precision = f64"), "{err}");
    // A classic strategy on a built-in function is no job for the adaptive kernels.
    let job = Job::builder(Function::Rastrigin, 10)
        .strategy(Strategy::Rand1)
        .generations(5)
        .build()
        .expect("valid job");
    let err = e
        .run_adaptive(&[&job], Mode::Batch)
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("or any strategy on a CEC 2017 function, in a batch of adaptive runs"),
        "{err}"
    );
    // The adaptive kernels have no step layout.
    let job = Job::builder(Function::Rastrigin, 10)
        .strategy(Strategy::Jso)
        .max_evaluations(500)
        .build()
        .expect("valid job");
    let err = e.run(&job, Mode::Steps).expect_err("refused").to_string();
    assert!(err.contains("auto, batch or grid for jso"), "{err}");
}

/// The whole-GPU layout of the adaptive kernels (`--mode grid`: one run over the whole
/// grid in a cooperative launch) against the CPU engine, bit for bit: every adaptive
/// strategy, f64 and f32, on a built-in function and a CEC 2017 function, and a classic
/// strategy on CEC 2017 functions, with a population below one block's threads (one
/// block) and one above (several blocks, so that the grid barrier, the serial parts on
/// thread 0 of block 0 and the reads of other blocks' rows are exercised) — best value
/// and point, generations, evaluations, history and the whole final population. Two
/// streams go through `run_adaptive` (one launch each, one after the other), single
/// jobs through `run_with_population`; the batch layout gives the same bits.
fn adaptive_grid_runs_match_cpu_bit_for_bit(e: &CudaEngine) {
    let mut objectives = vec![Objective::Builtin(Function::Rastrigin)];
    let mut cec = Vec::new();
    match gpude::cec2017::DataSource::locate(None) {
        Ok(source) => {
            for n in [5, 13] {
                let id = gpude::cec2017::FunctionId::new(n).expect("a CEC 2017 function");
                cec.push(Objective::cec2017(&source, id, 10).expect("its data"));
            }
            objectives.push(cec[0].clone());
        }
        Err(err) => println!("    NOTE: no CEC 2017 data ({err}); the built-in function only"),
    }
    // (population, budget): 24 individuals are one block of 32 threads; 600 are three
    // blocks of 256 threads (or more of fewer), and L-SHADE and jSO shrink them to a
    // block's worth within the run. Both budgets end with a partial generation.
    let sizes = [(24u32, 2_345u64), (600, 4_321)];
    let mut compared = 0;
    for precision in [Precision::F64, Precision::F32] {
        for s in Strategy::ADAPTIVE {
            for objective in &objectives {
                for (np, budget) in sizes {
                    let jobs: Vec<Job> = (0..2)
                        .map(|stream| {
                            Job::builder_for(objective.clone(), 10)
                                .strategy(s)
                                .pop(np)
                                .max_evaluations(budget)
                                .precision(precision)
                                .seed(2017)
                                .stream(stream)
                                .history(true)
                                .build()
                                .expect("valid job")
                        })
                        .collect();
                    let refs: Vec<&Job> = jobs.iter().collect();
                    let grid = e.run_adaptive(&refs, Mode::Grid).expect("grid runs");
                    let batch = e.run_adaptive(&refs, Mode::Batch).expect("batch runs");
                    for ((job, (r, pop)), (rb, popb)) in jobs.iter().zip(&grid).zip(&batch) {
                        let (cr, cx, cf) = cpu_adaptive(job);
                        let what = format!(
                            "{s:?} {} {precision:?} Np {np} stream {}",
                            objective.name(),
                            job.stream()
                        );
                        assert_eq!(r.termination, Termination::MaxEvaluations, "{what}");
                        assert_eq!(r.termination, cr.termination, "{what}");
                        assert_eq!(r.evaluations, budget, "{what}");
                        let want = adaptive_bits(&cr, &cx, &cf);
                        assert_eq!(
                            adaptive_bits(r, &pop.x, &pop.fit),
                            want,
                            "{what}: the grid run differs from the CPU run"
                        );
                        assert_eq!(
                            adaptive_bits(rb, &popb.x, &popb.fit),
                            want,
                            "{what}: the batch run differs from the CPU run"
                        );
                        compared += 1;
                    }
                    // A single job routed by its mode.
                    let (r, pop) = e
                        .run_with_population(&jobs[1], Mode::Grid)
                        .expect("a single grid run");
                    assert_eq!(
                        adaptive_bits(&r, &pop.x, &pop.fit),
                        adaptive_bits(&grid[1].0, &grid[1].1.x, &grid[1].1.fit),
                        "{s:?} {} {precision:?} Np {np}: run and run_adaptive differ",
                        objective.name()
                    );
                }
            }
        }
        // A classic strategy on CEC 2017 functions (plain, hybrid) in the same kernels.
        for objective in &cec {
            for (np, gens) in [(24u32, 40u32), (600, 12)] {
                let job = Job::builder_for(objective.clone(), 10)
                    .strategy(Strategy::Rand1)
                    .crossover(Crossover::Binomial)
                    .pop(np)
                    .max_evaluations(np as u64 * (gens as u64 + 1))
                    .precision(precision)
                    .seed(7)
                    .stream(1)
                    .history(true)
                    .build()
                    .expect("valid job");
                let (r, pop) = e.run_with_population(&job, Mode::Grid).expect("a grid run");
                let (cr, cx, cf) = cpu_classic(&job);
                let what = format!("Rand1 {} {precision:?} Np {np}", objective.name());
                assert_eq!(r.termination, cr.termination, "{what}");
                assert_eq!(r.generations, gens, "{what}");
                assert_eq!(
                    adaptive_bits(&r, &pop.x, &pop.fit),
                    adaptive_bits(&cr, &cx, &cf),
                    "{what}: the grid run differs from the CPU run"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(
        compared,
        2 * (5 * objectives.len() * sizes.len() * 2 + cec.len() * 2)
    );
}

/// The classic strategies (thesis, rand/1/bin) on CEC 2017 functions (plain, hybrid,
/// composition) at D = 10, f64 and f32, in the adaptive kernels: the GPU's runs (three
/// per launch) give the CPU engine's bits — best value and point, generations,
/// evaluations, history and the whole final population; `run` routes a single job there.
fn classic_cec_runs_match_cpu_bit_for_bit(e: &CudaEngine) {
    let source = match gpude::cec2017::DataSource::locate(None) {
        Ok(s) => s,
        Err(err) => {
            println!("    SKIPPED: no CEC 2017 data ({err})");
            return;
        }
    };
    let mut compared = 0;
    for precision in [Precision::F64, Precision::F32] {
        for (s, c) in [
            (Strategy::Thesis, None),
            (Strategy::Rand1, Some(Crossover::Binomial)),
        ] {
            for n in [1, 5, 13, 22] {
                let id = gpude::cec2017::FunctionId::new(n).expect("a CEC 2017 function");
                let objective = Objective::cec2017(&source, id, 10).expect("its data");
                let jobs: Vec<Job> = (0..3)
                    .map(|stream| {
                        let mut b = Job::builder_for(objective.clone(), 10)
                            .strategy(s)
                            .pop(24)
                            .max_evaluations(24 * 61)
                            .precision(precision)
                            .seed(7)
                            .stream(stream)
                            .history(stream == 0);
                        if let Some(c) = c {
                            b = b.crossover(c);
                        }
                        b.build().expect("valid job")
                    })
                    .collect();
                let refs: Vec<&Job> = jobs.iter().collect();
                let gpu = e.run_adaptive(&refs, Mode::Batch).expect("gpu runs");
                for (job, (r, pop)) in jobs.iter().zip(&gpu) {
                    let (cr, cx, cf) = cpu_classic(job);
                    let cr = &cr;
                    let what = format!("{s:?} F{n} {precision:?} stream {}", job.stream());
                    assert_eq!(r.termination, cr.termination, "{what}");
                    assert_eq!(r.generations, 60, "{what}");
                    assert_eq!(r.evaluations, 24 * 61, "{what}");
                    assert_eq!(
                        adaptive_bits(r, &pop.x, &pop.fit),
                        adaptive_bits(cr, &cx, &cf),
                        "{what}: the GPU run differs from the CPU run"
                    );
                    compared += 1;
                }
                let single = e.run(&jobs[1], Mode::Auto).expect("a single gpu run");
                assert_eq!(
                    single.best_f.to_bits(),
                    gpu[1].0.best_f.to_bits(),
                    "{s:?} F{n} {precision:?}: run and run_adaptive differ"
                );
            }
        }
    }
    assert_eq!(compared, 2 * 2 * 4 * 3);
}
