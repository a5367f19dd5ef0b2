//! The report of `gpude reproduce castro2012`: the cases beside the paper's tables, and
//! what differs from the paper's experiment.

use super::{CaseResult, Family, Options, published};
use crate::common::{self, num};
use crate::lab::markdown;
use crate::{CliError, Result};
use gpude::host::config::strategy_name;
use gpude::{FunctionInfo, Strategy};
use std::fmt::Write as _;
use std::path::Path;

/// The published case of a result's function.
fn case_of(f: &str) -> &'static published::Case {
    published::CASES
        .iter()
        .find(|c| FunctionInfo::of(c.function).name == f)
        .expect("every result is one of the cases")
}

/// The report in Markdown: the table beside the paper's and what differs.
pub fn report(o: &Options, results: &[CaseResult], backend: &str, command: &str) -> String {
    let mut s = String::new();
    let (islands, np, dim) = o.sizes();
    let _ = writeln!(s, "# Castro Liera et al. 2012, rerun with gpude\n");
    let _ = writeln!(s, "Command: `{command}`  ");
    let _ = writeln!(
        s,
        "Engine: {backend}; {} runs per case (the paper: {}); seed {}; {}; PSO and DE on {islands} islands × {np}, the GA on {} × {}, D = {dim}.{}\n",
        o.runs,
        published::RUNS,
        o.seed,
        o.precision.name(),
        o.sizes_of(Family::Ga).0,
        o.sizes_of(Family::Ga).1,
        if o.quick {
            " Quick mode: small sizes and generation limits ÷ 100; the paper's numbers are for its full sizes."
        } else {
            ""
        }
    );
    let mut rows = vec![
        [
            "function",
            "algorithm",
            "g_max",
            "target",
            "success",
            "gens to target",
            "time/run",
            "mean error",
            "paper: gens / success / time",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for r in results {
        let c = case_of(r.function);
        let paper = match r.family {
            Family::Pso => c
                .pso
                .iter()
                .map(|row| {
                    format!(
                        "{} / {} / {} s",
                        row.generations,
                        pct(row.success_pct),
                        row.time_s
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            Family::Ga => format!(
                "{} / {} / {} s",
                c.ga.generations,
                pct(c.ga.success_pct),
                c.ga.time_s
            ),
            Family::De => "(not in the paper)".into(),
        };
        rows.push(vec![
            r.function.to_string(),
            r.family.name().to_string(),
            r.g_max.to_string(),
            num(r.target),
            format!("{:.1} %", r.success_pct),
            r.mean_generations_to_target
                .map_or("—".into(), |g| format!("{g:.0}")),
            common::duration(std::time::Duration::from_secs_f64(r.mean_seconds)),
            num(r.mean_error),
            paper,
        ]);
    }
    s.push_str(&markdown::table(&rows));
    let _ = writeln!(
        s,
        "\n\"gens to target\" is the mean generation at which the successful runs reached the target; \
a run stops there, so \"time/run\" is the time to the target (or to g_max); on the GPU the runs of a \
case share every launch (one block per island of every run), and \"time/run\" is the case's wall time \
over its runs. The paper ran every \
run for g_max generations and reports the success rate and time at two generation limits. \
The DE rows are gpude's DE ({} strategy, clip bounds) on PSO's islands and migration. The GA rows \
are the paper's GA (14 islands of 64, tournaments of 2, crossover probability 0.16, mutation \
probability 0.7, the best 2 of the next island replacing the worst 2 every 10 % of the generations) \
with the operators the paper leaves unstated chosen by gpude: BLX-0.5 crossover, the breeder GA's \
mutation of one component (range 0.1 of the domain), elitism of one.\n",
        strategy_name(Strategy::Thesis)
    );
    s.push_str(&differences(backend));
    s
}

/// What differs from the paper's experiment, on `backend`.
fn differences(backend: &str) -> String {
    let hardware = if backend == "cuda" {
        "gpude's CUDA engine (one block per island, the migration in a kernel between \
launches, every run of a case in the same launches), on the GPU the command ran on"
    } else {
        "gpude's CPU engine (rayon over the cores of the machine)"
    };
    format!(
        "## What differs from the paper\n\n\
- Hardware: the paper ran CUDA on a GeForce GTX 460 (one block per swarm, one run at a time); this \
run is {hardware}. Times are not comparable across the two; the generation counts and success \
rates are.\n{DIFFERENCES}"
    )
}

/// What differs from the paper's experiment, whatever the hardware.
const DIFFERENCES: &str = "\
- Runs: the paper ran 1500 runs per case; this report states its own number. With few runs a \
success rate of 100 % only bounds the failure rate loosely.\n\
- Stopping: runs stop at the target; the paper ran the full generation budget.\n\
- Functions: the paper names the CEC'05 versions (shifted) but prints the unshifted formulas; gpude \
uses the unshifted forms, optimum at the origin (Weierstrass a = 0.5, b = 3, k_max = 20). Domains \
are the paper's: Rastrigin [−5, 5], Ackley [−32, 32], Schwefel 1.2 [−100, 100], Weierstrass [−0.5, 0.5].\n\
- Arithmetic: the precision named above everywhere (the paper stored f32 and evaluated Weierstrass \
and Schwefel 1.2 in f64).\n\
- Choices the paper leaves open: initial velocities uniform in ±½ the domain width; velocities \
clamped to ± the domain width; positions clipped into the domain; r1, r2 drawn per component; \
the migrant replaces the receiving swarm's worst personal best (the particle takes the migrant as \
its position and personal best, keeping its velocity); migration after every 1 % of g_max \
(at least every generation), ring k ← k + 1; the swarm's best is updated once per generation \
(synchronous), where the paper's kernel may update it as particles finish.\n\
- Success thresholds as read from the paper's tables: 2e-6 (Ackley), 1e-6 (Rastrigin, \
Schwefel 1.2), 5.7e-6 (Weierstrass).\n";

fn pct(p: Option<f64>) -> String {
    p.map_or("no success".into(), |v| format!("{v} %"))
}

/// Writes REPORT.md and runs.json into `dir`.
pub fn write(dir: &Path, report: &str, results: &[CaseResult]) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create the folder {}: {e}", dir.display())))?;
    let io = |e: std::io::Error| CliError::runtime(format!("writing {}: {e}", dir.display()));
    std::fs::write(dir.join("REPORT.md"), report).map_err(io)?;
    std::fs::write(dir.join("runs.json"), common::to_json(&results)?).map_err(io)?;
    Ok(())
}
