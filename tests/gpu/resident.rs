//! The shared-memory-resident batch kernel against the CPU engine and the global-memory
//! kernel, and auto's choice when a population does not fit.

use crate::Test;
use crate::common::{assert_same_population, cpu_population, result_bits, variant_job};
use gpude::host::cpu;
use gpude::{
    BatchKernel, BoundPolicy, Crossover, CudaEngine, Function, Job, Mode, Precision, Strategy,
};

pub fn tests() -> Vec<Test> {
    tests![
        shared_memory_batch_matches_cpu_bit_for_bit,
        shared_memory_batch_falls_back_when_it_does_not_fit
    ]
}

/// The shared-memory-resident batch kernel against the CPU engine and the global-memory
/// kernel, bit for bit: final population and values, best value and point, generations
/// and history, for several strategies, bound policies and both precisions. The cases
/// cover rows of one round and of several, populations whose waiting trials all fit in
/// shared memory and ones where some wait in global memory, and several populations in
/// one launch.
fn shared_memory_batch_matches_cpu_bit_for_bit(e: &CudaEngine) {
    let saved = e.batch_kernel();
    let saved_cap = e.spare_rows_cap();
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
        // Np = 256 at D = 128 in f32: 128 KiB of rows, part of the spare rows in global
        // memory on a 227 KiB GPU.
        (
            Function::Griewank,
            128,
            256,
            40,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Griewank,
            128,
            64,
            60,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Rastrigin,
            30,
            300,
            50,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Sphere,
            30,
            300,
            50,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F32,
        ),
        (
            Function::Ackley,
            200,
            48,
            30,
            Strategy::Rand1,
            Crossover::Binomial,
            BoundPolicy::Clip,
            Precision::F32,
        ),
        (
            Function::Penalized,
            37,
            96,
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
            Function::Griewank,
            128,
            128,
            20,
            Strategy::Thesis,
            Crossover::Binomial,
            BoundPolicy::InitOnly,
            Precision::F64,
        ),
        (
            Function::Griewank,
            128,
            32,
            30,
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
            Strategy::Rand1,
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
            .seed(4000 + k as u64)
            .build()
            .expect("valid job");
        let what = format!("{f:?} D={dim} Np={pop} {s:?}/{c:?}/{b:?} {p:?}");
        e.set_batch_kernel(BatchKernel::Shared);
        let (name, bytes) = e.batch_kernel_for(&j).expect("the shared kernel");
        assert!(
            name.ends_with("_shared") && bytes > 0,
            "{what}: {name}, {bytes} bytes"
        );
        let (r, pop_gpu) = e.run_with_population(&j, Mode::Batch).expect("shared run");
        let cpu = cpu_population(&j);
        assert_same_population(&pop_gpu, &cpu, &what);
        let c = match p {
            Precision::F32 => cpu::run::<f32>(&j, None).unwrap(),
            Precision::F64 => cpu::run::<f64>(&j, None).unwrap(),
        };
        assert_eq!(
            result_bits(&r),
            result_bits(&c),
            "{what}: shared kernel vs CPU"
        );
        // Fewer spare rows: the other trials wait in global memory (none in shared
        // memory with a cap of 0).
        for cap in [0, pop / 3] {
            e.set_spare_rows_cap(Some(cap));
            let (rc, pc) = e.run_with_population(&j, Mode::Batch).expect("shared run");
            assert_same_population(&pc, &cpu, &format!("{what}, {cap} spare rows"));
            assert_eq!(
                result_bits(&rc),
                result_bits(&c),
                "{what}, {cap} spare rows"
            );
        }
        e.set_spare_rows_cap(saved_cap);
        e.set_batch_kernel(BatchKernel::Global);
        let (name_g, bytes_g) = e.batch_kernel_for(&j).unwrap();
        assert!(
            !name_g.ends_with("_shared") && bytes_g == 0,
            "{what}: {name_g}"
        );
        let g = e.run(&j, Mode::Batch).expect("global run");
        assert_eq!(
            result_bits(&r),
            result_bits(&g),
            "{what}: shared vs global kernel"
        );
        println!("  {what}: {name}, {bytes} bytes of shared memory: same bits");
    }
    // Several populations in one launch (each block its own), against single CPU runs.
    e.set_batch_kernel(BatchKernel::Shared);
    let jobs: Vec<Job> = (0..5u64)
        .map(|seed| {
            Job::builder(Function::Griewank, 128)
                .pop(256)
                .generations(25)
                .history(true)
                .seed(seed)
                .stream(seed as u32)
                .build()
                .unwrap()
        })
        .collect();
    let gpu = e.run_batch(&jobs).expect("shared batch");
    for (j, g) in jobs.iter().zip(&gpu) {
        let c = cpu::run::<f32>(j, None).unwrap();
        assert_eq!(result_bits(g), result_bits(&c), "seed {}", j.seed());
    }
    e.set_batch_kernel(saved);
}

/// Auto takes the global-memory kernel for populations that do not fit in a block's
/// shared memory and for families without a resident kernel; forcing the shared
/// kernel on those is refused with the reason.
fn shared_memory_batch_falls_back_when_it_does_not_fit(e: &CudaEngine) {
    let saved = e.batch_kernel();
    e.set_batch_kernel(BatchKernel::Auto);
    // Np = 2048 at D = 128: 1 MiB of f32 rows, more than any GPU's block holds.
    let big = Job::builder(Function::Griewank, 128)
        .pop(2048)
        .generations(5)
        .history(true)
        .seed(3)
        .build()
        .unwrap();
    // Auto's other kernel in single precision: the pipelined one from sm_80 on.
    let (name, bytes) = e.batch_kernel_for(&big).unwrap();
    if e.compute_capability().0 >= 8 {
        assert_eq!(name, "de_batch_f32_griewank_thesis_pipelined");
        assert!(bytes > 0, "{bytes}");
    } else {
        assert_eq!((name.as_str(), bytes), ("de_batch_f32_griewank_thesis", 0));
    }
    let r = e.run(&big, Mode::Batch).unwrap();
    let c = cpu::run::<f32>(&big, None).unwrap();
    assert_eq!(result_bits(&r), result_bits(&c));
    // Fits: auto takes the resident kernel.
    let small = Job::builder(Function::Griewank, 128)
        .pop(64)
        .generations(5)
        .seed(3)
        .build()
        .unwrap();
    let (name, bytes) = e.batch_kernel_for(&small).unwrap();
    assert_eq!(name, "de_batch_f32_griewank_thesis_shared");
    assert!(bytes > 64 * 128 * 4, "{bytes}");
    // A thesis variant that changes the trials has no resident kernel.
    let variant = gpude::host::config::parse_variant("indices=rejection").expect("a variant");
    assert!(variant.changes_trials());
    let vj = variant_job(Function::Griewank, 128, 5, Precision::F32, variant, 3);
    let (name, _) = e.batch_kernel_for(&vj).unwrap();
    assert!(name.ends_with("_thesis_variant"), "{name}");
    // Forced: refused, naming the value and why.
    e.set_batch_kernel(BatchKernel::Shared);
    for j in [&big, &vj] {
        let err = e.run(j, Mode::Batch).expect_err("refused").to_string();
        assert!(err.contains("shared"), "{err}");
    }
    let err = e.batch_kernel_for(&big).expect_err("refused").to_string();
    assert!(err.contains("2048") && err.contains("bytes"), "{err}");
    e.set_batch_kernel(saved);
}
