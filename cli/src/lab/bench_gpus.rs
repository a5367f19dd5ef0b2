//! `gpude bench --gpus LIST`: the same work on the list's first GPU and on every GPU of
//! the list, through the solver that `--gpus` opens (the runs of a list shared out among
//! the GPUs): batches of independent runs, the command line's watched path, and lists
//! of archipelagos.

use crate::Result;
use gpude::{
    Algorithm, Archipelago, Backend, Gpus, Job, Precision, Solver, SolverOptions, Strategy,
};
use serde::Serialize;
use std::time::Instant;

/// One scaling case: `per_gpu` runs (or archipelagos) for each GPU of the list, so that
/// every GPU is as full on its share as one GPU is on a one-GPU list of that size.
#[derive(Clone, Debug, Serialize)]
pub struct ScalingCase {
    pub name: String,
    /// `batch` (Solver::run_batch), `watched` (Solver::run_entries with an observer and
    /// a stop flag, as `gpude run` takes it), `archipelagos` (a list of them, each on
    /// one GPU) or `archipelago` (one, its islands shared out among the GPUs).
    pub path: &'static str,
    /// `de` (the thesis strategy) or `pso` (islands only).
    pub algorithm: &'static str,
    pub function: &'static str,
    pub dim: u32,
    pub pop: u32,
    pub generations: u32,
    pub precision: &'static str,
    /// Islands per archipelago (`archipelagos` only).
    pub islands: u32,
    /// Runs or archipelagos per GPU (`archipelago`: islands per GPU).
    pub per_gpu: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScalingRecord {
    #[serde(flatten)]
    pub case: ScalingCase,
    pub gpus: Vec<usize>,
    /// Runs (or archipelagos, or one archipelago's islands) in the list: per_gpu × GPUs.
    pub runs: u32,
    /// Median wall time of the whole list on the first GPU and on all (ms).
    pub one_gpu_ms: f64,
    pub all_gpus_ms: f64,
    pub repeats: usize,
    /// one_gpu_ms / all_gpus_ms.
    pub speedup: f64,
    /// speedup / GPUs.
    pub efficiency: f64,
    /// Every run's best value and generations equal on one GPU and on all.
    pub same_results: bool,
}

/// A row of the cases' table: name, path, function, D, Np, generations, islands per
/// archipelago, per GPU.
type Row = (
    &'static str,
    &'static str,
    &'static str,
    u32,
    u32,
    u32,
    u32,
    u32,
);

/// The scaling cases (with `quick`, a tenth of the generations).
pub fn cases(quick: bool) -> Vec<ScalingCase> {
    let g = |n: u32| if quick { (n / 10).max(10) } else { n };
    let case = |name: &str, path, function, dim, pop, gens, islands, per_gpu| ScalingCase {
        name: name.into(),
        path,
        algorithm: if name.contains("pso") { "pso" } else { "de" },
        function,
        dim,
        pop,
        generations: gens,
        precision: Precision::F32.name(),
        islands,
        per_gpu,
    };
    // (name, path, function, D, Np, generations, islands per archipelago, per GPU)
    #[rustfmt::skip]
    let table: &[Row] = &[
        ("gpus batch 528 x 2048",                             "batch",        "griewank",  128, 2048, g(200),  0,   528),
        ("gpus batch 528 x 256",                              "batch",        "griewank",  128, 256,  g(1000), 0,   528),
        ("gpus watched 528 x 2048",                           "watched",      "griewank",  128, 2048, g(200),  0,   528),
        ("gpus archipelagos 4 x 132 x 256 D=30 ring/10",      "archipelagos", "rastrigin", 30,  256,  g(1000), 132, 4),
        ("gpus one archipelago 132 x 2048 D=30 ring/10",      "archipelago",  "rastrigin", 30,  2048, g(1000), 0,   132),
        ("gpus one archipelago pso 132 x 1024 D=30 ring/10",  "archipelago",  "rastrigin", 30,  1024, g(1000), 0,   132),
    ];
    table
        .iter()
        .map(
            |&(name, path, function, dim, pop, gens, islands, per_gpu)| {
                case(name, path, function, dim, pop, gens, islands, per_gpu)
            },
        )
        .collect()
}

/// The list of a case for `gpus` GPUs.
fn list(c: &ScalingCase, gpus: usize) -> Result<(Vec<Job>, Vec<Archipelago>)> {
    let info = gpude::FunctionInfo::parse(c.function)?;
    let n = c.per_gpu * gpus as u32;
    let job = |k: u32| {
        Job::builder(info.function, c.dim)
            .domain(info.domain.0, info.domain.1)
            .pop(c.pop)
            .generations(c.generations)
            .strategy(Strategy::Thesis)
            .precision(Precision::parse(c.precision)?)
            .seed(1)
            .stream(k)
            .build()
    };
    let algorithm = match c.algorithm {
        "pso" => Algorithm::Pso(gpude::Pso::default()),
        _ => Algorithm::De,
    };
    if c.path == "archipelago" {
        let a = Archipelago::builder(job(0)?, n)
            .interval(10)
            .algorithm(algorithm)
            .build()?;
        Ok((Vec::new(), vec![a]))
    } else if c.path == "archipelagos" {
        let archs = (0..n)
            .map(|k| {
                Archipelago::builder(job(k)?, c.islands)
                    .interval(10)
                    .algorithm(algorithm)
                    .build()
            })
            .collect::<gpude::Result<Vec<_>>>()?;
        Ok((Vec::new(), archs))
    } else {
        Ok((
            (0..n).map(job).collect::<gpude::Result<Vec<_>>>()?,
            Vec::new(),
        ))
    }
}

/// One timed pass over the list: wall time (ms) and each run's (best value, generations).
fn time_once(c: &ScalingCase, s: &Solver, gpus: usize) -> Result<(f64, Vec<(u64, u32)>)> {
    let (jobs, archs) = list(c, gpus)?;
    let key = |r: &gpude::RunResult| (r.best_f.to_bits(), r.generations);
    let start = Instant::now();
    let out: Vec<(u64, u32)> = match c.path {
        "archipelagos" | "archipelago" => s
            .run_archipelagos(&archs, None)?
            .iter()
            .map(|a| key(&a.overall))
            .collect(),
        "watched" => {
            let stop = std::sync::atomic::AtomicBool::new(false);
            let observe = |_: usize, _: u32, _: f64| gpude::run::control::Flow::Continue;
            let mut watch = gpude::run::control::Watch {
                observer: Some(&observe),
                stop: Some(&stop),
                ..Default::default()
            };
            let entries = jobs
                .into_iter()
                .map(gpude::checkpoint::Entry::Pending)
                .collect();
            s.run_entries(entries, &mut watch)?
                .iter()
                .map(|r| r.result.as_ref().map_or((0, 0), key))
                .collect()
        }
        _ => s.run_batch(&jobs)?.iter().map(key).collect(),
    };
    Ok((start.elapsed().as_secs_f64() * 1e3, out))
}

/// Measures every case on the list's first GPU and on all of them.
pub fn measure(gpus: &Gpus, cases: &[ScalingCase], repeats: usize) -> Result<Vec<ScalingRecord>> {
    let open = |g: Gpus| {
        Solver::new(&SolverOptions {
            backend: Backend::Cuda,
            gpus: g,
            ..SolverOptions::default()
        })
    };
    let all = open(gpus.clone())?;
    let list_ids = gpus.resolve(0, gpude::host::cuda::gpu_count()?)?;
    let one = open(Gpus::List(vec![list_ids[0]]))?;
    let n = all.gpus();
    let mut out = Vec::new();
    for c in cases {
        eprintln!("bench: {} on 1 and {n} GPUs …", c.name);
        // Every GPU compiles its kernels' modules on first use: once, untimed.
        let warm = ScalingCase {
            generations: 2,
            ..c.clone()
        };
        time_once(&warm, &one, n)?;
        time_once(&warm, &all, n)?;
        let (mut t1, mut tn, mut same) = (Vec::new(), Vec::new(), true);
        for _ in 0..repeats.max(1) {
            let (a, ra) = time_once(c, &one, n)?;
            let (b, rb) = time_once(c, &all, n)?;
            t1.push(a);
            tn.push(b);
            same &= ra == rb;
        }
        let (m1, mn) = (median(&t1), median(&tn));
        out.push(ScalingRecord {
            case: c.clone(),
            gpus: list_ids.clone(),
            runs: c.per_gpu * n as u32,
            one_gpu_ms: m1,
            all_gpus_ms: mn,
            repeats: repeats.max(1),
            speedup: m1 / mn,
            efficiency: m1 / mn / n as f64,
            same_results: same,
        });
    }
    Ok(out)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The records as a table.
pub fn table(records: &[ScalingRecord]) -> String {
    let mut s = format!(
        "{:<48} {:>6} {:>11} {:>11} {:>8} {:>6}\n",
        "case", "runs", "1 GPU ms", "all ms", "speedup", "same"
    );
    for r in records {
        s.push_str(&format!(
            "{:<48} {:>6} {:>11.1} {:>11.1} {:>7.2}x {:>6}\n",
            r.case.name, r.runs, r.one_gpu_ms, r.all_gpus_ms, r.speedup, r.same_results
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_grow_with_the_gpus_and_archipelagos_are_valid() {
        for c in cases(true) {
            let (j1, a1) = list(&c, 1).expect("one GPU's list");
            let (j2, a2) = list(&c, 2).expect("two GPUs' list");
            if c.path == "archipelago" {
                assert_eq!(a1[0].islands(), c.per_gpu, "{}", c.name);
                assert_eq!(a2[0].islands(), 2 * c.per_gpu, "{}", c.name);
                continue;
            }
            assert_eq!(j1.len() + a1.len(), c.per_gpu as usize, "{}", c.name);
            assert_eq!(j2.len() + a2.len(), 2 * c.per_gpu as usize, "{}", c.name);
        }
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
    }
}
