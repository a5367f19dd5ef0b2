//! PTX objectives (a user's module linked with the device crate): whole-vector and
//! separable modules against their expressions and the CPU engine, and their errors.

use crate::Test;
use crate::common::{cpu_run, example_ptx};
use gpude::checkpoint::Entry;
use gpude::expr::{Expr, builtins::expression};
use gpude::host::cpu::Flow;
use gpude::run::control::Watch;
use gpude::{BoundPolicy, CudaEngine, Function, Job, Mode, Objective, Precision, Strategy};

pub fn tests() -> Vec<Test> {
    tests![
        ptx_objectives_run_as_their_expressions,
        ptx_objectives_evaluate_as_their_expressions,
        separable_objectives_match_cpu_bit_for_bit
    ]
}

/// The example crate's separable Rosenbrock on the CPU (`examples/objective-rust`, which
/// this workspace does not build): the same terms in the same order as its PTX.
struct SeparableRosenbrock;

macro_rules! separable_rosenbrock {
    ($t:ty) => {
        impl gpude::device::separable::Separable<$t> for SeparableRosenbrock {
            fn flags(&self) -> gpude::device::separable::SepFlags {
                gpude::device::separable::SepFlags {
                    prev: true,
                    ..Default::default()
                }
            }
            fn a(&self, mut acc: $t, v: [$t; 4], prev: $t, _b: $t, j0: u32, n: u32, _d: u32) -> $t {
                let mut q = prev;
                for (k, &x) in v.iter().enumerate().take(n as usize) {
                    if j0 + k as u32 > 0 {
                        let u = 1.0 - q;
                        let r = x - q * q;
                        acc += u * u + 100.0 * (r * r);
                    }
                    q = x;
                }
                acc
            }
            fn b(&self, acc: $t, _v: [$t; 4], _p: $t, _b: $t, _j0: u32, _n: u32, _d: u32) -> $t {
                acc
            }
            fn finish(&self, a: $t, _b: $t, _d: u32) -> $t {
                a
            }
        }
    };
}
separable_rosenbrock!(f32);
separable_rosenbrock!(f64);

/// The separable form of a PTX objective (the example crate's Rosenbrock) runs in the
/// separable kernels: in every layout (batch, batch under control, grid, steps), f32 and
/// f64, classic and thesis strategies, its runs equal the CPU engine's with the same
/// form's CPU code bit for bit, and the built-in Rosenbrock's in the textbook formula
/// (the same terms in the same order).
fn separable_objectives_match_cpu_bit_for_bit(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    use gpude::{Formula, SeparableCpu};
    let Some(text) = example_ptx() else {
        println!(
            "  SKIPPED: no gpu-bundle/objective-example.ptx and no $GPUDE_OBJECTIVE_PTX \
             (scripts/gpu-bundle.sh builds it)"
        );
        return;
    };
    let code = PtxCode::parse(text).expect("a PTX objective");
    for p in [Precision::F32, Precision::F64] {
        assert!(
            code.separable(p).is_some_and(|f| f.prev),
            "the example's PTX defines no separable form in {p:?}: rebuild it"
        );
    }
    let job = |o: Objective, p: Precision, s: Strategy, dim: u32| {
        let mut b = Job::builder_for(o, dim)
            .domain(-5.0, 5.0)
            .strategy(s)
            .pop(96)
            .generations(30)
            .precision(p)
            .formula(Formula::Textbook)
            .seed(23);
        if s.crosses() {
            b = b.bounds(BoundPolicy::Clip);
        }
        b.build().expect("valid job")
    };
    let observe = |_: usize, _: u32, _: f64| Flow::Continue;
    let mut runs = 0;
    // D = 24 fits one round of a group of 8 lanes; D = 300 takes three rounds of 32.
    for dim in [24u32, 300] {
        for p in [Precision::F32, Precision::F64] {
            for s in [Strategy::Thesis, Strategy::Rand1] {
                let sep = Objective::ptx_separable(
                    "rosenbrock",
                    Some(0.0),
                    code.clone(),
                    SeparableCpu {
                        f32: Box::new(SeparableRosenbrock),
                        f64: Box::new(SeparableRosenbrock),
                    },
                )
                .expect("a separable objective");
                let a = job(sep, p, s, dim);
                let b = job(Objective::Builtin(Function::Rosenbrock), p, s, dim);
                let want = cpu_run(&a).expect("CPU run");
                let w = format!("D = {dim} {p:?} {s:?}");
                let builtin = cpu_run(&b).expect("CPU run");
                assert_eq!(want.best_f.to_bits(), builtin.best_f.to_bits(), "CPU {w}");
                assert_eq!(want.best_x, builtin.best_x, "CPU {w}");
                for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                    let got = e.run(&a, mode).expect("separable run");
                    assert_eq!(got.best_f.to_bits(), want.best_f.to_bits(), "{w} {mode:?}");
                    assert_eq!(got.best_x, want.best_x, "{w} {mode:?}");
                    assert_eq!(got.generations, want.generations, "{w} {mode:?}");
                    runs += 1;
                }
                let mut watch = Watch {
                    observer: Some(&observe),
                    ..Watch::default()
                };
                let ctl = e
                    .run_entries(vec![Entry::Pending(a.clone())], Mode::Batch, &mut watch)
                    .expect("controlled run");
                let got = ctl[0].result.as_ref().expect("a result");
                assert_eq!(
                    got.best_f.to_bits(),
                    want.best_f.to_bits(),
                    "{w} controlled"
                );
                assert_eq!(got.best_x, want.best_x, "{w} controlled");
                let gpu_builtin = e.run(&b, Mode::Batch).expect("built-in run");
                assert_eq!(
                    gpu_builtin.best_f.to_bits(),
                    want.best_f.to_bits(),
                    "{w} built-in"
                );
                runs += 2;
            }
        }
    }
    println!("  {runs} separable runs equal to the CPU engine's bit for bit");
}

/// PTX objectives: an expression's PTX given as a user's module, and the example crate's
/// Rosenbrock (`examples/objective-rust`), run as the expression of the same function
/// does, bit for bit, in every layout; a module that does not link, and a precision the
/// module lacks, are clear errors.
fn ptx_objectives_run_as_their_expressions(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    let src = expression(Function::Rosenbrock);
    let ex = Expr::parse(&src).unwrap();
    let job = |o: Objective, p: Precision, s: Strategy| {
        let mut b = Job::builder_for(o, 24)
            .domain(-5.0, 5.0)
            .strategy(s)
            .pop(96)
            .generations(30)
            .precision(p)
            .seed(21);
        if s.crosses() {
            b = b.bounds(BoundPolicy::Clip);
        }
        b.build().expect("valid job")
    };
    // Each module runs as its reference does: a separable module as the expression
    // (which the engines evaluate in its separable form, lane by lane), a whole-vector
    // module as the expression's whole-vector module (its terms in ascending j).
    let sep = ex
        .separable()
        .expect("Rosenbrock's expression is separable");
    let mut modules: Vec<(&str, Option<String>, bool)> = vec![
        ("expression's separable module", None, true),
        ("expression's whole-vector module", None, false),
    ];
    match example_ptx() {
        Some(text) => {
            modules.push(("example", Some(text.clone()), true));
            modules.push((
                "example's whole-vector form",
                Some(text.replace("gpude_sep_", "unused_sep_")),
                false,
            ));
        }
        None => println!(
            "  SKIPPED the example crate: no gpu-bundle/objective-example.ptx and no \
             $GPUDE_OBJECTIVE_PTX (scripts/gpu-bundle.sh builds it)"
        ),
    }
    let mut runs = 0;
    for (what, text, separable) in &modules {
        for p in [Precision::F32, Precision::F64] {
            let ep = match p {
                Precision::F32 => gpude::expr::Precision::F32,
                Precision::F64 => gpude::expr::Precision::F64,
            };
            let text = text
                .clone()
                .unwrap_or_else(|| if *separable { sep.ptx(ep) } else { ex.ptx(ep) });
            let code = PtxCode::parse(text).expect("a PTX objective");
            assert_eq!(
                code.separable(p).is_some(),
                *separable,
                "{what}: the engine sees the form it should"
            );
            for s in [Strategy::Thesis, Strategy::Rand1] {
                let a = job(
                    Objective::ptx(*what, Some(0.0), code.clone()).unwrap(),
                    p,
                    s,
                );
                let b = if *separable {
                    job(Objective::expr(&src, Some(0.0)).unwrap(), p, s)
                } else {
                    let whole = PtxCode::parse(ex.ptx(ep)).expect("the expression's module");
                    job(Objective::ptx("whole", Some(0.0), whole).unwrap(), p, s)
                };
                let want = e.run(&b, Mode::Batch).expect("reference run");
                for mode in [Mode::Batch, Mode::Grid, Mode::Steps] {
                    let got = e.run(&a, mode).expect("PTX run");
                    let w = format!("{what} {p:?} {s:?} {mode:?}");
                    assert_eq!(got.best_f.to_bits(), want.best_f.to_bits(), "{w}");
                    assert_eq!(got.best_x, want.best_x, "{w}");
                    // Nothing on the CPU evaluates PTX alone: the search's error stands.
                    assert_eq!(got.verified_error.to_bits(), got.error.to_bits(), "{w}");
                    runs += 1;
                }
            }
        }
    }
    // An expression's whole-vector module generated for one dimension (a table of its
    // per-j values) runs jobs of that dimension from the table and jobs of any other
    // computing them: both as the module without a table.
    let src = expression(Function::Griewank);
    let ex = Expr::parse(&src).unwrap();
    for p in [Precision::F32, Precision::F64] {
        let ep = match p {
            Precision::F32 => gpude::expr::Precision::F32,
            Precision::F64 => gpude::expr::Precision::F64,
        };
        let plain = PtxCode::parse(ex.ptx(ep)).expect("a PTX objective");
        let b = job(
            Objective::ptx("griewank", Some(0.0), plain).unwrap(),
            p,
            Strategy::Thesis,
        );
        let want = e.run(&b, Mode::Batch).expect("whole-vector run");
        for table_dim in [24, 7] {
            let code = PtxCode::parse(ex.ptx_for_dim(ep, table_dim)).expect("a PTX objective");
            let a = job(
                Objective::ptx("griewank", Some(0.0), code).unwrap(),
                p,
                Strategy::Thesis,
            );
            for mode in [Mode::Batch, Mode::Grid] {
                let got = e.run(&a, mode).expect("PTX run");
                let w = format!("griewank, table for D = {table_dim}, {p:?} {mode:?}");
                assert_eq!(got.best_f.to_bits(), want.best_f.to_bits(), "{w}");
                assert_eq!(got.best_x, want.best_x, "{w}");
                runs += 1;
            }
        }
    }
    println!("  {runs} PTX objective runs equal to the expression's bit for bit");
    // A module calling a function nobody defines: the link fails and says what is missing.
    let broken = Expr::parse("sum(cos(x))")
        .unwrap()
        .ptx(gpude::expr::Precision::F32)
        .replace("gpude_expr_cos_f32", "gpude_expr_missing_f32");
    let o = Objective::ptx("broken", None, PtxCode::parse(broken).unwrap()).unwrap();
    let err = e
        .run(&job(o, Precision::F32, Strategy::Thesis), Mode::Batch)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("linking") && err.contains("gpude_expr_missing_f32"),
        "{err}"
    );
    // f32 code, an f64 job.
    let code = PtxCode::parse(ex.ptx(gpude::expr::Precision::F32)).unwrap();
    let o = Objective::ptx("f32 only", None, code).unwrap();
    let err = e
        .run(&job(o, Precision::F64, Strategy::Thesis), Mode::Batch)
        .unwrap_err()
        .to_string();
    assert!(err.contains("precision = f64"), "{err}");
}

/// `CudaEngine::evaluate_ptx` (what `gpude eval --objective-ptx` calls): the example
/// crate's module and the expression's whole-vector module give the expression's CPU
/// values bit for bit at every dimension; a module with only the separable form in a
/// precision is refused, naming the function it lacks.
fn ptx_objectives_evaluate_as_their_expressions(e: &CudaEngine) {
    use gpude::host::ptx_objective::PtxCode;
    let ex = Expr::parse(&expression(Function::Rosenbrock)).unwrap();
    let mut modules: Vec<(&str, Option<String>)> = vec![("expression's module", None)];
    match example_ptx() {
        Some(text) => modules.push(("example", Some(text))),
        None => println!(
            "  SKIPPED the example crate: no gpu-bundle/objective-example.ptx and no \
             $GPUDE_OBJECTIVE_PTX (scripts/gpu-bundle.sh builds it)"
        ),
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 10.0 - 5.0
    };
    let mut checked = 0;
    for (what, text) in &modules {
        for p in [Precision::F32, Precision::F64] {
            let ep = match p {
                Precision::F32 => gpude::expr::Precision::F32,
                Precision::F64 => gpude::expr::Precision::F64,
            };
            let code = PtxCode::parse(text.clone().unwrap_or_else(|| ex.ptx(ep)))
                .expect("a PTX objective");
            for dim in [1u32, 2, 24, 101] {
                let pts: Vec<f64> = (0..300 * dim).map(|_| next()).collect();
                let got = match p {
                    Precision::F32 => e.evaluate_ptx::<f32>(&code, dim, &pts),
                    Precision::F64 => e.evaluate_ptx::<f64>(&code, dim, &pts),
                }
                .unwrap_or_else(|err| panic!("{what} {p:?} D={dim}: {err}"));
                assert_eq!(got.len(), 300, "{what} {p:?} D={dim}");
                for (i, r) in pts.chunks(dim as usize).enumerate() {
                    let want = match p {
                        Precision::F32 => {
                            let r: Vec<f32> = r.iter().map(|&v| v as f32).collect();
                            ex.eval(&r) as f64
                        }
                        Precision::F64 => ex.eval(r),
                    };
                    assert_eq!(
                        got[i].to_bits(),
                        want.to_bits(),
                        "{what} {p:?} D={dim} point {i}: GPU {} CPU {want}",
                        got[i]
                    );
                    checked += 1;
                }
            }
        }
    }
    // The separable form alone cannot be called per point.
    let sep = ex
        .separable()
        .expect("Rosenbrock's expression is separable");
    let only = PtxCode::parse(sep.ptx(gpude::expr::Precision::F64)).expect("a PTX objective");
    if !only.defines_whole(Precision::F64) {
        let err = e
            .evaluate_ptx::<f64>(&only, 4, &[0.5; 8])
            .expect_err("a separable-only module cannot be evaluated per point");
        let msg = err.to_string();
        assert!(
            msg.contains("gpude_objective_f64") && msg.contains("separable"),
            "{msg}"
        );
    }
    println!("  {checked} values of PTX objectives equal their expressions' bits");
}
