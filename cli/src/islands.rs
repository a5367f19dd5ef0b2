//! Islands and PSO on the command line: the flags of `gpude run`, the keys of batch
//! files, their checks, and running archipelagos (on either engine).

use super::common::{BackendArgs, JobSpec, describe_strategy, num};
use super::run::{self, SaveArgs};
use super::{CliError, Result, interrupt};
use gpude::checkpoint::ArchipelagoEntry;
use gpude::cpu::Flow;
use gpude::host::config::bounds_name;
use gpude::host::islands::{
    emigrants_name, parse_emigrants, parse_replacement, parse_topology, replacement_name,
    topology_name,
};
use gpude::{
    Algorithm, Archipelago, ArchipelagoResult, Backend, BoundPolicy, Ga, Job, Pso, RunResult,
    Solver, SolverOptions,
};
use gpude::{IslandsWatch, Termination};
use serde::Serialize;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The island and PSO flags of `gpude run` (batch files take the same keys, with `_`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct IslandArgs {
    /// Algorithm: de, pso or ga [default: de]. PSO and the GA keep positions in the
    /// domain with --bounds clip unless another policy is given.
    #[arg(long, value_name = "A")]
    pub algorithm: Option<String>,

    /// Islands: every run is an archipelago of N populations of Np that exchange
    /// individuals (on the GPU one block per island, migration between launches).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub islands: Option<u32>,

    /// Generations between migrations [default: 1 % of the generations, at least 1].
    #[arg(long, value_name = "G", allow_negative_numbers = true)]
    pub migration_interval: Option<u32>,

    /// Individuals each island sends per migration [default: 1].
    #[arg(long, value_name = "K", allow_negative_numbers = true)]
    pub migrants: Option<u32>,

    /// Who sends to whom: ring (island k receives from k + 1), full (from every other
    /// island) or random (a ring in a new random order every time) [default: ring].
    #[arg(long, value_name = "T")]
    pub topology: Option<String>,

    /// Which individuals leave: best or random [default: best].
    #[arg(long, value_name = "RULE")]
    pub emigrants: Option<String>,

    /// Which individuals the newcomers replace: worst or random [default: worst].
    #[arg(long, value_name = "RULE")]
    pub replace: Option<String>,

    /// PSO's inertia weight w, in [0, 2] [default: 0.8].
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub inertia: Option<f64>,

    /// PSO's confidence in the particle's own best, in [0, 4] [default: 1.62].
    #[arg(long, value_name = "C1", allow_negative_numbers = true)]
    pub c1: Option<f64>,

    /// PSO's confidence in the swarm's best, in [0, 4] [default: 1.62].
    #[arg(long, value_name = "C2", allow_negative_numbers = true)]
    pub c2: Option<f64>,

    /// The GA's crossover probability (BLX-0.5), in [0, 1] [default: 0.16].
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub crossover_probability: Option<f64>,

    /// The GA's mutation probability per offspring (the breeder GA's mutation of one
    /// component), in [0, 1] [default: 0.7].
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub mutation_probability: Option<f64>,
}

impl JobSpec {
    /// The same job description with the island and PSO flags.
    pub fn with_islands(mut self, a: &IslandArgs) -> JobSpec {
        self.algorithm = a.algorithm.clone();
        self.islands = a.islands;
        self.migration_interval = a.migration_interval;
        self.migrants = a.migrants;
        self.topology = a.topology.clone();
        self.emigrants = a.emigrants.clone();
        self.replace = a.replace.clone();
        self.inertia = a.inertia;
        self.c1 = a.c1;
        self.c2 = a.c2;
        self.crossover_probability = a.crossover_probability;
        self.mutation_probability = a.mutation_probability;
        self
    }
}

/// The algorithms of the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    De,
    Pso,
    Ga,
}

/// Whether the description asks for islands or an algorithm other than DE.
pub fn wanted(spec: &JobSpec) -> Result<bool> {
    Ok(kind(spec)? != Kind::De || spec.islands.is_some())
}

/// The description's algorithm (`None` is DE).
fn kind(spec: &JobSpec) -> Result<Kind> {
    match spec
        .algorithm
        .as_deref()
        .map(|s| s.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("de") => Ok(Kind::De),
        Some("pso") => Ok(Kind::Pso),
        Some("ga") => Ok(Kind::Ga),
        Some(_) => Err(CliError::usage(format!(
            "unknown algorithm {:?}; known: de, pso, ga",
            spec.algorithm.as_deref().unwrap_or_default()
        ))),
    }
}

/// Refuses settings that do not apply to the algorithm or to runs without islands
/// (before the jobs are made, so that the message names the flag, not a DE setting).
pub fn check_flags(spec: &JobSpec) -> Result<()> {
    let kind = kind(spec)?;
    let pso = kind == Kind::Pso;
    let island_keys = [
        (
            "migration interval (--migration-interval)",
            spec.migration_interval.is_some(),
        ),
        ("migrants (--migrants)", spec.migrants.is_some()),
        ("topology (--topology)", spec.topology.is_some()),
        ("emigrants (--emigrants)", spec.emigrants.is_some()),
        ("replace (--replace)", spec.replace.is_some()),
    ];
    if spec.islands.is_none()
        && let Some((name, _)) = island_keys.iter().find(|(_, given)| *given)
    {
        return Err(CliError::usage(format!(
            "{name} applies only to islands: give the number of islands (--islands N) as well"
        )));
    }
    let pso_keys = [
        ("inertia (--inertia)", spec.inertia.is_some()),
        ("c1 (--c1)", spec.c1.is_some()),
        ("c2 (--c2)", spec.c2.is_some()),
    ];
    if !pso && let Some((name, _)) = pso_keys.iter().find(|(_, given)| *given) {
        return Err(CliError::usage(format!(
            "{name} applies only to PSO: give algorithm pso (--algorithm pso) as well"
        )));
    }
    let ga_keys = [
        (
            "crossover probability (--crossover-probability)",
            spec.crossover_probability.is_some(),
        ),
        (
            "mutation probability (--mutation-probability)",
            spec.mutation_probability.is_some(),
        ),
    ];
    if kind != Kind::Ga
        && let Some((name, _)) = ga_keys.iter().find(|(_, given)| *given)
    {
        return Err(CliError::usage(format!(
            "{name} applies only to the GA: give algorithm ga (--algorithm ga) as well"
        )));
    }
    let de_keys = [
        ("strategy (--strategy)", spec.strategy.is_some()),
        ("crossover (--crossover)", spec.crossover.is_some()),
        ("F (-F)", spec.f.is_some()),
        ("Cr (--cr)", spec.cr.is_some()),
        (
            "thesis variant (--thesis-variant)",
            spec.thesis_variant.is_some(),
        ),
    ];
    if kind != Kind::De
        && let Some((name, _)) = de_keys.iter().find(|(_, given)| *given)
    {
        return Err(CliError::usage(format!(
            "{name} applies only to DE, not to algorithm {}",
            if pso { "pso" } else { "ga" }
        )));
    }
    Ok(())
}

/// The archipelagos of a job description, one per run (run `r` on streams
/// `r·N … r·N + N − 1`), or `None` when it asks for neither islands nor PSO. Settings
/// that do not apply are errors. `jobs` are the description's jobs (PSO without
/// --bounds gets clip).
pub fn plan(spec: &JobSpec, jobs: &mut [Job]) -> Result<Option<Vec<Archipelago>>> {
    check_flags(spec)?;
    let kind = kind(spec)?;
    if kind == Kind::De && spec.islands.is_none() {
        return Ok(None);
    }
    let algorithm = match kind {
        Kind::Pso => {
            let d = Pso::default();
            Algorithm::Pso(Pso {
                inertia: spec.inertia.unwrap_or(d.inertia),
                c1: spec.c1.unwrap_or(d.c1),
                c2: spec.c2.unwrap_or(d.c2),
            })
        }
        Kind::Ga => {
            let d = Ga::default();
            Algorithm::Ga(Ga {
                crossover: spec.crossover_probability.unwrap_or(d.crossover),
                mutation: spec.mutation_probability.unwrap_or(d.mutation),
                ..d
            })
        }
        Kind::De => Algorithm::De,
    };
    let mut out = Vec::with_capacity(jobs.len());
    for job in jobs.iter_mut() {
        if kind != Kind::De && spec.bounds.is_none() {
            *job = job.clone().with_bounds(BoundPolicy::Clip);
        }
        let mut b =
            Archipelago::builder(job.clone(), spec.islands.unwrap_or(1)).algorithm(algorithm);
        if let Some(g) = spec.migration_interval {
            b = b.interval(g);
        }
        if let Some(k) = spec.migrants {
            b = b.migrants(k);
        }
        if let Some(t) = &spec.topology {
            b = b.topology(parse_topology(t)?);
        }
        if let Some(e) = &spec.emigrants {
            b = b.emigrants(parse_emigrants(e)?);
        }
        if let Some(r) = &spec.replace {
            b = b.replacement(parse_replacement(r)?);
        }
        out.push(b.build()?);
    }
    Ok(Some(out))
}

/// Opens the engine for archipelagos: `cuda` the GPU (an archipelago it cannot run is
/// an error when it runs), `cpu` the CPU, and `auto` the GPU when there is one and it
/// runs every archipelago of `archs` (else the CPU, with a notice).
pub fn open(backend: &BackendArgs, archs: &[Archipelago]) -> Result<Solver> {
    match Backend::parse(&backend.backend)? {
        Backend::Cuda => backend.open(),
        Backend::Cpu => {
            let gpu_flags = backend.gpu_flags();
            if !gpu_flags.is_empty() {
                return Err(CliError::usage(format!(
                    "{} applies to the GPU only: leave it out with --backend cpu",
                    gpu_flags.join(", ")
                )));
            }
            Ok(Solver::new(&SolverOptions {
                backend: Backend::Cpu,
                ..SolverOptions::default()
            })?)
        }
        Backend::Auto => match archs.iter().find_map(|a| Solver::gpu_archipelago(a).err()) {
            None => backend.open(),
            Some(why) => {
                eprintln!("notice: running the islands on the CPU: {why}");
                Ok(Solver::new(&SolverOptions {
                    backend: Backend::Cpu,
                    ..SolverOptions::default()
                })?)
            }
        },
    }
}

/// Runs the archipelagos, one result each in order (on the GPU, compatible ones share
/// launches).
pub fn execute(solver: &Solver, archs: &[Archipelago]) -> Result<Vec<ArchipelagoResult>> {
    Ok(solver.run_archipelagos(archs, None)?)
}

/// Archipelagos that ended or were interrupted.
pub struct IslandsDone {
    /// The results of the archipelagos that started (all of them unless interrupted).
    pub results: Vec<ArchipelagoResult>,
    /// Every archipelago's state at the end (or as given, if it did not start).
    pub entries: Vec<ArchipelagoEntry>,
    pub interrupted: bool,
    /// Wall time of the runs.
    pub wall: Duration,
}

/// Runs (or goes on with) archipelagos: a SIGINT/SIGTERM stops them at the next
/// generation (CPU engine) or stretch between two events or saves (GPU engine), and
/// `save` is written every --checkpoint-every generations.
pub fn execute_saved(
    solver: &Solver,
    entries: Vec<ArchipelagoEntry>,
    save: &SaveArgs,
) -> Result<IslandsDone> {
    let stop = interrupt::flag()?;
    let mut save_error: Option<CliError> = None;
    let mut saver = |list: &[ArchipelagoEntry]| {
        let Some(path) = &save.checkpoint else {
            return Flow::Continue;
        };
        match run::write_archipelagos(path, list, false) {
            Ok(()) => Flow::Continue,
            Err(e) => {
                save_error = Some(e);
                Flow::Stop
            }
        }
    };
    let mut watch = IslandsWatch {
        observer: None,
        stop: Some(&stop),
        every: save.checkpoint_every.unwrap_or(0),
        save: if save.checkpoint.is_some() {
            Some(&mut saver)
        } else {
            None
        },
        // The file of --checkpoint holds every archipelago's state at the end.
        keep: save.checkpoint.is_some(),
    };
    let start = Instant::now();
    let ran = solver.run_archipelago_entries(entries, &mut watch)?;
    let wall = start.elapsed();
    if let Some(e) = save_error.take() {
        return Err(e);
    }
    let results: Vec<ArchipelagoResult> = ran.iter().filter_map(|r| r.result.clone()).collect();
    let interrupted = stop.load(Ordering::Relaxed)
        && (results.len() < ran.len()
            || results
                .iter()
                .any(|r| r.overall.termination == Termination::Stopped));
    Ok(IslandsDone {
        results,
        entries: ran.into_iter().map(|r| r.entry).collect(),
        interrupted,
        wall,
    })
}

/// The settings of `a` written back into a job description.
pub fn resolve(spec: &mut JobSpec, a: &Archipelago) {
    match a.algorithm() {
        Algorithm::Pso(p) => {
            spec.inertia = Some(p.inertia);
            spec.c1 = Some(p.c1);
            spec.c2 = Some(p.c2);
        }
        Algorithm::Ga(g) => {
            spec.crossover_probability = Some(g.crossover);
            spec.mutation_probability = Some(g.mutation);
        }
        Algorithm::De => {}
    }
    spec.algorithm = Some(a.algorithm().name().into());
    if a.algorithm() != Algorithm::De {
        spec.strategy = None;
        spec.crossover = None;
        spec.f = None;
        spec.cr = None;
    }
    spec.islands = Some(a.islands());
    if a.islands() > 1 {
        spec.migration_interval = Some(a.interval());
        spec.migrants = Some(a.migrants());
        spec.topology = Some(topology_name(a.topology()).into());
        spec.emigrants = Some(emigrants_name(a.emigrants()).into());
        spec.replace = Some(replacement_name(a.replacement()).into());
    }
}

/// Lines for people: the algorithm and, with several islands, the archipelago.
pub fn describe(a: &Archipelago) -> Vec<(&'static str, String)> {
    let job = a.template();
    let mut lines = vec![match a.algorithm() {
        Algorithm::De => ("strategy", describe_strategy(job)),
        Algorithm::Pso(p) => (
            "algorithm",
            format!(
                "pso, w = {}, c1 = {}, c2 = {}, bounds {}",
                p.inertia,
                p.c1,
                p.c2,
                bounds_name(job.bounds())
            ),
        ),
        Algorithm::Ga(g) => (
            "algorithm",
            format!(
                "ga, tournaments of 2, BLX-{} crossover p = {}, mutation (range {}) p = {}, elitism 1, bounds {}",
                g.alpha,
                g.crossover,
                g.range,
                g.mutation,
                bounds_name(job.bounds())
            ),
        ),
    }];
    if a.islands() > 1 {
        lines.push((
            "islands",
            format!(
                "{} × Np = {}, {} topology, every {} {} {} → {}",
                a.islands(),
                job.pop(),
                topology_name(a.topology()),
                if a.interval() == 1 {
                    "generation".to_string()
                } else {
                    format!("{} generations", a.interval())
                },
                if a.migrants() == 1 {
                    "1 migrant".to_string()
                } else {
                    format!("{} migrants", a.migrants())
                },
                emigrants_name(a.emigrants()),
                replacement_name(a.replacement())
            ),
        ));
    }
    lines
}

/// What JSON reports of one archipelago besides its overall result.
#[derive(Serialize)]
pub struct IslandsReport<'a> {
    pub best_island: usize,
    pub migrations: u32,
    pub first_hit: Option<u32>,
    pub islands: &'a [RunResult],
}

impl<'a> IslandsReport<'a> {
    pub fn of(r: &'a ArchipelagoResult) -> Self {
        IslandsReport {
            best_island: r.best_island,
            migrations: r.migrations,
            first_hit: r.first_hit,
            islands: &r.islands,
        }
    }
}

/// One line per archipelago: which island won and how many migrations ran.
pub fn summary(results: &[ArchipelagoResult]) -> String {
    let mut s = String::new();
    for (r, a) in results.iter().enumerate() {
        if a.islands.len() > 1 {
            s.push_str(&format!(
                "run {r}: best on island {} (f = {}), {} migrations\n",
                a.best_island,
                num(a.overall.best_f),
                a.migrations
            ));
        }
    }
    s
}
