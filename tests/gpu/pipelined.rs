//! The pipelined batch kernel (rows staged in shared memory with `cp.async`) against the
//! CPU engine and the global-memory kernel, its refusals and auto's choice.

use crate::Test;
use crate::common::{assert_same_population, cpu_population, result_bits, variant_job};
use gpude::host::cpu;
use gpude::{
    BatchKernel, BoundPolicy, Crossover, CudaEngine, Function, Job, Mode, Objective, Precision,
    Strategy,
};

pub fn tests() -> Vec<Test> {
    tests![
        pipelined_batch_matches_cpu_bit_for_bit,
        pipelined_batch_refusals_are_clear
    ]
}

/// The pipelined batch kernel (rows staged in shared memory with `cp.async`) against
/// the CPU engine and the global-memory kernel, bit for bit: final population and
/// values, best value and point, generations and history, for strategies with two to
/// five drawn rows, both crossovers, several bound policies and both precisions. The
/// cases cover groups of 32 lanes and of fewer (several individuals per warp),
/// populations that are not a multiple of the block's groups (idle groups in the last
/// pass), one pass per generation, and several populations in one launch.
fn pipelined_batch_matches_cpu_bit_for_bit(e: &CudaEngine) {
    let (major, minor) = e.compute_capability();
    if major < 8 {
        println!(
            "  SKIPPED: the pipelined kernels need sm_80 or later; this GPU is {major}.{minor}"
        );
        return;
    }
    let saved = e.batch_kernel();
    #[allow(clippy::type_complexity)]
    let cases: Vec<(
        Function,
        u32,
        u32,
        u32,
        Strategy,
        Crossover,
        BoundPolicy,
        Precision,
    )> = vec![
        (
            Function::Griewank,
            128,
            2048,
            12,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Griewank,
            128,
            300,
            40,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Sphere,
            128,
            20,
            40,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Rastrigin,
            30,
            777,
            30,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            Precision::F32,
        ),
        (
            Function::Ackley,
            100,
            200,
            30,
            Strategy::Rand2,
            Crossover::Binomial,
            BoundPolicy::Reflect,
            Precision::F32,
        ),
        (
            Function::Penalized,
            37,
            196,
            30,
            Strategy::Best2,
            Crossover::Exponential,
            BoundPolicy::Reflect,
            Precision::F32,
        ),
        (
            Function::Rosenbrock,
            16,
            128,
            40,
            Strategy::CurrentToBest1,
            Crossover::Binomial,
            BoundPolicy::Resample,
            Precision::F32,
        ),
        (
            Function::Weierstrass,
            5,
            64,
            20,
            Strategy::Best1,
            Crossover::Exponential,
            BoundPolicy::Midpoint,
            Precision::F32,
        ),
        (
            Function::Griewank,
            128,
            1024,
            10,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
        (
            Function::Schwefel12,
            30,
            200,
            30,
            Strategy::Rand2,
            Crossover::Binomial,
            BoundPolicy::Midpoint,
            Precision::F64,
        ),
        (
            Function::Weierstrass,
            10,
            64,
            20,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
    ];
    for (k, &(f, dim, pop, gens, s, c, b, p)) in cases.iter().enumerate() {
        let mut builder = Job::builder(f, dim).strategy(s);
        if s.crosses() {
            builder = builder.crossover(c).f(0.5).cr(0.7);
        }
        let j = builder
            .pop(pop)
            .generations(gens)
            .bounds(b)
            .precision(p)
            .history(true)
            .seed(5000 + k as u64)
            .build()
            .expect("valid job");
        let what = format!("{f:?} D={dim} Np={pop} {s:?}/{c:?}/{b:?} {p:?}");
        e.set_batch_kernel(BatchKernel::Pipelined);
        let (name, bytes) = e.batch_kernel_for(&j).expect("the pipelined kernel");
        assert!(
            name.ends_with("_pipelined") && bytes > 0,
            "{what}: {name}, {bytes} bytes"
        );
        let (r, pop_gpu) = e
            .run_with_population(&j, Mode::Batch)
            .expect("pipelined run");
        let cpu = cpu_population(&j);
        assert_same_population(&pop_gpu, &cpu, &what);
        let c = match p {
            Precision::F32 => cpu::run::<f32>(&j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(&j, None).unwrap(),
        };
        assert_eq!(
            result_bits(&r),
            result_bits(&c),
            "{what}: pipelined kernel vs CPU"
        );
        e.set_batch_kernel(BatchKernel::Global);
        let g = e.run(&j, Mode::Batch).expect("global run");
        assert_eq!(
            result_bits(&r),
            result_bits(&g),
            "{what}: pipelined vs global kernel"
        );
        println!("  {what}: {name}, {bytes} bytes of shared memory: same bits");
    }
    // Several populations in one launch (each block its own), against single CPU runs.
    e.set_batch_kernel(BatchKernel::Pipelined);
    let jobs: Vec<Job> = (0..5u64)
        .map(|seed| {
            Job::builder(Function::Griewank, 128)
                .pop(512)
                .generations(15)
                .history(true)
                .seed(seed)
                .stream(seed as u32)
                .build()
                .unwrap()
        })
        .collect();
    let gpu = e.run_batch(&jobs).expect("pipelined batch");
    for (j, g) in jobs.iter().zip(&gpu) {
        let c = cpu::run::<f32>(j, None).unwrap();
        assert_eq!(result_bits(g), result_bits(&c), "seed {}", j.seed());
    }
    e.set_batch_kernel(saved);
}

/// Forcing the pipelined kernel on a job it cannot serve is refused with the value and
/// the reason: rows of more than one round, a thesis variant that changes the trials,
/// an expression objective (and, on a GPU older than sm_80, every job). Auto's choice
/// between the batch kernels, and its runs against the CPU engine's.
fn pipelined_batch_refusals_are_clear(e: &CudaEngine) {
    let saved = e.batch_kernel();
    e.set_batch_kernel(BatchKernel::Pipelined);
    let (major, _) = e.compute_capability();
    let wide = Job::builder(Function::Griewank, 200)
        .pop(64)
        .generations(5)
        .seed(3)
        .build()
        .unwrap();
    let variant = gpude::host::config::parse_variant("indices=rejection").expect("a variant");
    let vj = variant_job(Function::Griewank, 64, 5, Precision::F32, variant, 3);
    let expr = Job::builder_for(Objective::expr("sum(x^2)", None).expect("parses"), 16)
        .domain(-3.0, 3.0)
        .pop(64)
        .generations(5)
        .seed(3)
        .build()
        .expect("valid job");
    for (j, says) in [
        (
            &wide,
            if major >= 8 {
                "D = 200"
            } else {
                "compute capability"
            },
        ),
        (&vj, "thesis_variant_pipelined"),
        (&expr, "pipelined kernel"),
    ] {
        let err = e.batch_kernel_for(j).expect_err("refused").to_string();
        assert!(err.contains("pipelined") && err.contains(says), "{err}");
        let err = e.run(j, Mode::Batch).expect_err("refused").to_string();
        assert!(err.contains(says), "{err}");
    }
    // Auto takes it for single-precision populations that do not fit in shared memory
    // (from sm_80 on), and leaves it for the others: those that fit (the resident
    // kernel), double precision, rows of several rounds (the global-memory kernel).
    e.set_batch_kernel(BatchKernel::Auto);
    let big = |dim: u32, p: Precision| {
        Job::builder(Function::Griewank, dim)
            .pop(2048)
            .generations(5)
            .precision(p)
            .seed(3)
            .build()
            .unwrap()
    };
    let f32_global = if major >= 8 {
        "de_batch_f32_griewank_thesis_pipelined"
    } else {
        "de_batch_f32_griewank_thesis"
    };
    for (j, kernel) in [
        (&wide, "de_batch_f32_griewank_thesis_shared"),
        (&big(128, Precision::F32), f32_global),
        (&big(128, Precision::F64), "de_batch_f64_griewank_thesis"),
        (&big(200, Precision::F32), "de_batch_f32_griewank_thesis"),
    ] {
        assert_eq!(e.batch_kernel_for(j).unwrap().0, kernel);
        let r = e.run(j, Mode::Batch).expect("auto run");
        let c = match j.precision() {
            Precision::F32 => cpu::run::<f32>(j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(j, None).unwrap(),
        };
        assert_eq!(result_bits(&r), result_bits(&c), "auto: {kernel}");
    }
    e.set_batch_kernel(saved);
}
