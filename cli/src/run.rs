//! `gpude run`: optimise one function, once or several times.

use super::common::{self, BackendArgs, JobArgs, JobSpec, Summary, num};
use super::islands::{self, IslandsReport};
use super::{CliError, Result, input, interrupt, output, plot_runs};
use gpude::Archipelago;
use gpude::checkpoint::{self, ArchipelagoEntry, Entry, Part};
use gpude::cpu::{self, Checkpoint, Control, Flow};
use gpude::run::polish::Polished;
use gpude::{Job, RunResult, Termination};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::stats::DEFAULT_SUCCESS;

/// Work (Np·D·generations·runs) above which a progress bar is worth showing.
const PROGRESS_WORK: f64 = 2e7;

/// Components of the best point shown to people.
const SHOWN_COMPONENTS: usize = 5;

#[derive(Debug, clap::Args)]
#[command(after_help = notes())]
pub struct Args {
    #[command(flatten)]
    pub job: JobArgs,

    #[command(flatten)]
    pub backend: BackendArgs,

    /// Independent runs: the same seed, random streams 0 … N−1.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub runs: u32,

    /// Print the settings and results as JSON.
    #[arg(long)]
    pub json: bool,

    /// Write the best value after every generation to FILE (CSV; one column per run),
    /// once the run has ended or was interrupted.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// Draw each run's best error against the generations into FILE (.png or .svg), the
    /// runs overlaid (more than 8: their median in the band from the best to the worst),
    /// once the run has ended or was interrupted.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// After the search, refine each run's best point locally on the host, in f64, and
    /// report the result apart: `lbfgs` (the default: L-BFGS with numerical gradients,
    /// inside the box unless the bounds are init-only) or `nelder-mead` (no gradients).
    #[arg(long, value_name = "METHOD", num_args = 0..=1, default_missing_value = "lbfgs")]
    pub polish: Option<String>,

    #[command(flatten)]
    pub save: SaveArgs,

    /// Split every individual's components into slices: `dimension`, each slice a
    /// contiguous range of components with its own partial sums, combined once per
    /// generation (the layout for problems larger than one GPU; the CPU engine runs the
    /// slices as simulated devices). Built-in functions and classic strategies only.
    #[arg(long, value_name = "HOW")]
    pub split: Option<String>,

    /// How many slices --split dimension makes, 1 ..= ⌈D/4⌉ [default: 2].
    #[arg(
        long,
        value_name = "S",
        requires = "split",
        allow_negative_numbers = true
    )]
    pub slices: Option<u32>,
}

/// What `gpude run --help` says after the flags: the progress bar, the CPU engine's
/// threads and interrupts.
fn notes() -> String {
    format!(
        "Progress: while the runs go, a bar on stderr shows the generations done, the best \
value and the time left. It is drawn when stdout and stderr are both terminals, --json \
is not given and the work (Np·D·generations, summed over the runs) exceeds {work:e}; \
it is cleared when the runs end.

CPU threads: the CPU engine spreads each run's work (the individuals of a population, \
the islands of an archipelago) over every logical core, in rayon's thread pool; \
RAYON_NUM_THREADS=N sets the number of threads. The results do not depend on it: every \
random number is keyed by the seed, the run's stream and the individual.

Interrupts: SIGINT or SIGTERM (Ctrl-C) stops the runs at the next generation, prints \
the partial result and exits with code 130. The runs are saved to --checkpoint FILE, \
else to ./{DEFAULT_CHECKPOINT} when that file takes at most {limit} MiB; `gpude resume` \
goes on with them. A second signal more than a second later ends gpude at once.",
        work = PROGRESS_WORK,
        limit = DEFAULT_CHECKPOINT_LIMIT / input::MIB,
    )
}

/// Where and how often the runs are saved (either engine).
#[derive(Debug, clap::Args)]
pub struct SaveArgs {
    /// Save the state of the runs to FILE at the end, on SIGINT/SIGTERM and every
    /// --checkpoint-every generations; `gpude resume FILE` goes on with the same bits
    /// (on either engine). Without it an interrupted run is saved to ./gpude.ckpt when
    /// that file takes at most 256 MiB (else nothing is saved, and the message gives its
    /// size). FILE has no size limit; a save is refused when the file does not fit in
    /// the free memory.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,

    /// Also save every N generations (needs --checkpoint).
    #[arg(long, value_name = "N", requires = "checkpoint")]
    pub checkpoint_every: Option<u32>,
}

/// Where an interrupted run is saved when no --checkpoint is given.
pub const DEFAULT_CHECKPOINT: &str = "gpude.ckpt";

/// The largest file saved to [`DEFAULT_CHECKPOINT`] (256 MiB): an interrupt that nobody
/// asked to save should not fill the disk or the memory. A larger state is saved only
/// to a file named with --checkpoint.
pub const DEFAULT_CHECKPOINT_LIMIT: u64 = 256 * input::MIB;

#[derive(Serialize)]
struct Report<'a> {
    backend: &'static str,
    fallback_reason: Option<&'a str>,
    job: JobSpec,
    /// Wall time of the runs (s): from the first run's start to the last one's end,
    /// without the reports and files written after.
    wall_s: f64,
    results: &'a [RunResult],
    summary: Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    islands: Option<Vec<IslandsReport<'a>>>,
    /// Each run's best point refined locally (`--polish`), apart from the search's.
    #[serde(skip_serializing_if = "Option::is_none")]
    polished: Option<Vec<Polished>>,
}

/// What the output shows of where the runs ran.
pub(crate) struct Where<'a> {
    pub backend: &'static str,
    pub fallback_reason: Option<&'a str>,
}

pub fn run(args: Args) -> Result<String> {
    let spec = args.job.spec(args.runs)?;
    let saving = args.save.checkpoint.is_some();
    // A checkpoint records the history so that a resumed run can write all of it.
    islands::check_flags(&spec)?;
    let files = Files {
        history: args.history.clone(),
        plot: args.plot.clone(),
        polish: args
            .polish
            .as_deref()
            .map(gpude::run::polish::Method::parse)
            .transpose()?,
    };
    // Archipelagos are saved without it (the GPU engine records no history of them).
    let mut jobs = spec.jobs(files.need_history() || (saving && !islands::wanted(&spec)?))?;
    if let Some(how) = &args.split {
        return run_split(&args, &files, how, &spec, jobs);
    }
    if let Some(archs) = islands::plan(&spec, &mut jobs)? {
        return run_islands(&args, &files, &spec, &jobs, &archs);
    }
    if args.save.checkpoint_every == Some(0) {
        return Err(CliError::usage(
            "--checkpoint-every = 0 is not allowed: 1 or more generations",
        ));
    }
    if saving && let Some(j) = jobs.first() {
        gpude::checkpoint::savable(j)?;
    }
    // A bad path should not cost a run; an existing file is replaced only at the end.
    files.check(args.save.checkpoint.as_deref())?;
    let solver = args.backend.open_for(&jobs)?;
    let at = Where {
        backend: solver.backend_name(),
        fallback_reason: solver.fallback_reason(),
    };
    if solver.backend_name() == "cpu" {
        let progress = show_progress(args.json, jobs.iter());
        let entries = jobs.into_iter().map(Entry::Pending).collect();
        let done = on_cpu(entries, &args.save, progress)?;
        return finish(done, &files, args.json, &at, spec.max_evals, &args.save);
    }
    let progress = show_progress(args.json, jobs.iter());
    let entries = jobs.into_iter().map(Entry::Pending).collect();
    let done = on_cuda(&solver, entries, &args.save, progress)?;
    finish(done, &files, args.json, &at, spec.max_evals, &args.save)
}

/// Runs the jobs split by dimension (`--split dimension --slices S`) on the CPU engine.
/// They are not saved.
fn run_split(
    args: &Args,
    files: &Files,
    how: &str,
    spec: &JobSpec,
    mut jobs: Vec<Job>,
) -> Result<String> {
    if !how.trim().eq_ignore_ascii_case("dimension") {
        return Err(CliError::usage(format!(
            "unknown split {:?}; known: dimension",
            input::clip(how)
        )));
    }
    if islands::plan(spec, &mut jobs)?.is_some() {
        return Err(CliError::usage(
            "--split dimension does not apply to islands or PSO: it splits one DE population",
        ));
    }
    if args.save.checkpoint.is_some() {
        return Err(CliError::usage(
            "--checkpoint does not apply to --split dimension: a split run is not saved",
        ));
    }
    let backend = gpude::Backend::parse(&args.backend.backend)?;
    if backend == gpude::Backend::Cuda {
        return Err(CliError::usage(
            "--split dimension runs on the CPU engine only for now (its slices simulate the GPUs); use --backend cpu",
        ));
    }
    let gpu_flags = args.backend.gpu_flags();
    if !gpu_flags.is_empty() {
        return Err(CliError::usage(format!(
            "{} applies to the GPU only: --split dimension runs on the CPU engine",
            gpu_flags.join(", ")
        )));
    }
    files.check(None)?;
    let slices = args.slices.unwrap_or(2);
    let solver = gpude::Solver::new(&gpude::SolverOptions {
        backend: gpude::Backend::Cpu,
        ..gpude::SolverOptions::default()
    })?;
    let start = Instant::now();
    let results = jobs
        .iter()
        .map(|j| solver.run_split(j, slices, None))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let wall = start.elapsed();
    let layout = gpude::split::Layout::new(jobs[0].dim(), slices)?;
    let done = Done {
        first: jobs[0].clone(),
        runs: jobs.len(),
        results,
        entries: Vec::new(),
        interrupted: false,
        wall,
    };
    let at = Where {
        backend: "cpu",
        fallback_reason: None,
    };
    let out = finish(done, files, args.json, &at, spec.max_evals, &args.save)?;
    if args.json {
        return Ok(out);
    }
    let bounds: Vec<String> = layout.bounds().iter().map(|b| b.to_string()).collect();
    Ok(format!(
        "split: dimension, {slices} slices (component bounds {})\n{out}",
        bounds.join(", ")
    ))
}

/// Runs archipelagos (`--islands`, `--algorithm pso|ga`) on either engine, saved as
/// `--checkpoint` asks and on an interrupt.
fn run_islands(
    args: &Args,
    files: &Files,
    spec: &JobSpec,
    jobs: &[Job],
    archs: &[Archipelago],
) -> Result<String> {
    if args.save.checkpoint_every == Some(0) {
        return Err(CliError::usage(
            "--checkpoint-every = 0 is not allowed: 1 or more generations",
        ));
    }
    if args.save.checkpoint.is_some() {
        gpude::checkpoint::savable(&jobs[0])?;
    }
    files.check(args.save.checkpoint.as_deref())?;
    if files.polish.is_some() {
        return Err(CliError::usage(
            "--polish does not apply to islands or PSO yet: it polishes the runs of one population",
        ));
    }
    let solver = islands::open(&args.backend, archs)?;
    let entries = archs
        .iter()
        .cloned()
        .map(ArchipelagoEntry::Pending)
        .collect();
    let done = islands::execute_saved(&solver, entries, &args.save)?;
    let mut resolved = JobSpec::resolved(&jobs[0], args.runs, spec.max_evals);
    islands::resolve(&mut resolved, &archs[0]);
    finish_islands(done, files, args.json, &solver, resolved, &args.save)
}

/// Writes the history, the plot and the checkpoint of archipelagos, and reports; an
/// interrupted run reports as an error with exit code 130 and its partial result on
/// stdout.
pub(crate) fn finish_islands(
    done: islands::IslandsDone,
    files: &Files,
    json: bool,
    solver: &gpude::Solver,
    resolved: JobSpec,
    save: &SaveArgs,
) -> Result<String> {
    let first = done.entries[0].archipelago().clone();
    let job = first.template();
    let mut results: Vec<RunResult> = done.results.iter().map(|a| a.overall.clone()).collect();
    files.write(job, &results)?;
    if files.history.is_none() {
        for r in &mut results {
            r.history = None;
        }
    }
    let saved_to = save_path(save, done.interrupted);
    let mut saved = None;
    let mut not_saved = None;
    if let Some(path) = &saved_to {
        match write_archipelagos(path, &done.entries, save.checkpoint.is_none()) {
            Ok(()) => saved = Some(path),
            Err(e) if done.interrupted => not_saved = Some(e.message),
            Err(e) => return Err(e),
        }
    }
    if !done.interrupted
        && let Some((k, e)) = common::failed_run(&results)
    {
        return Err(match results.len() {
            1 => e,
            n => e.context(format!("run {k} of {n}")),
        });
    }
    let threshold = job.target().unwrap_or(DEFAULT_SUCCESS);
    // Successes are judged on the verified errors.
    let errors: Vec<f64> = results.iter().map(|r| r.verified_error).collect();
    let summary = Summary::of(&errors, threshold);
    let at = Where {
        backend: solver.backend_name(),
        fallback_reason: solver.fallback_reason(),
    };
    let out = if json {
        common::to_json(&Report {
            backend: at.backend,
            fallback_reason: at.fallback_reason,
            job: resolved,
            wall_s: done.wall.as_secs_f64(),
            results: &results,
            summary,
            islands: Some(done.results.iter().map(IslandsReport::of).collect()),
            polished: None,
        })?
    } else {
        let mut out = human(&at, job, &results, done.wall, &summary, Some(&first));
        out.push_str(&islands::summary(&done.results));
        out
    };
    if !done.interrupted {
        return Ok(out);
    }
    let g = done.results.last().map_or(0, |r| r.overall.generations);
    Err(interrupted(
        out,
        g,
        done.entries.len(),
        done.results.len(),
        saved,
        not_saved,
    ))
}

/// Writes an archipelago checkpoint file whole; `limited`: refused above
/// [`DEFAULT_CHECKPOINT_LIMIT`] (a save nobody asked for). A file larger than the free
/// memory is refused before it is made.
pub(crate) fn write_archipelagos(
    path: &std::path::Path,
    entries: &[ArchipelagoEntry],
    limited: bool,
) -> Result<()> {
    let bytes_of = checkpoint::encode_archipelagos(entries).map_err(|e| match e {
        gpude::Error::OutOfMemory { needed, free, .. } => CliError::runtime(format!(
            "cannot save the checkpoint file {}: it takes {} and only {} of host memory is available",
            input::name(path),
            bytes(needed),
            bytes(free)
        )),
        e => CliError::from(e),
    })?;
    if limited && bytes_of.len() as u64 > DEFAULT_CHECKPOINT_LIMIT {
        return Err(CliError::runtime(format!(
            "the checkpoint would take {}, more than the {} MiB that {} may take without \
             --checkpoint; to save such a run, give --checkpoint FILE (no size limit)",
            bytes(bytes_of.len() as u64),
            DEFAULT_CHECKPOINT_LIMIT / input::MIB,
            input::name(path)
        )));
    }
    output::write(path, &bytes_of).map_err(|e| {
        CliError::runtime(format!(
            "writing the checkpoint file {}: {e}",
            input::name(path)
        ))
    })
}

/// What a run gives besides its report: the history (CSV) and the plot files, and the
/// local polish of its best points.
#[derive(Clone, Debug, Default)]
pub(crate) struct Files {
    pub history: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub polish: Option<gpude::run::polish::Method>,
}

impl Files {
    /// Whether the runs must record their history.
    pub fn need_history(&self) -> bool {
        self.history.is_some() || self.plot.is_some()
    }

    /// Checks every output path (the checkpoint's too) before any work: a bad path
    /// should not cost a run; an existing file is replaced only at the end.
    pub fn check(&self, checkpoint: Option<&std::path::Path>) -> Result<()> {
        if let Some(p) = &self.history {
            output::check_file(p, "the history file")?;
        }
        if let Some(p) = &self.plot {
            plot_runs::check(p)?;
        }
        if let Some(p) = checkpoint {
            output::check_file(p, "the checkpoint file")?;
        }
        Ok(())
    }

    /// Writes the history and the plot of `results`, the runs of `job` (streams 0 …).
    pub fn write(&self, job: &Job, results: &[RunResult]) -> Result<()> {
        if let Some(path) = &self.history {
            output::write(path, history_csv(results).as_bytes()).map_err(|e| {
                CliError::runtime(format!(
                    "writing the history file {}: {e}",
                    input::name(path)
                ))
            })?;
        }
        if let Some(path) = &self.plot {
            let reference = job.objective().reference();
            let curves: Vec<plot_runs::Curve> = results
                .iter()
                .enumerate()
                .map(|(k, r)| plot_runs::Curve {
                    label: format!("run {k}"),
                    history: r.history.as_deref().unwrap_or(&[]),
                    reference,
                })
                .collect();
            let group = plot_runs::Group {
                label: "runs".into(),
                runs: curves,
            };
            plot_runs::write(path, plot_title(job, results.len()), &[group])?;
        }
        Ok(())
    }
}

/// The lines that report the polish of each run's best point.
fn polish_lines(ps: &[Polished], m: gpude::run::polish::Method) -> String {
    let mut s = String::new();
    for (k, p) in ps.iter().enumerate() {
        let run = if ps.len() == 1 {
            String::new()
        } else {
            format!(" run {k}")
        };
        if p.improved {
            s.push_str(&format!(
                "polished{run} ({}): f = {}, error {} (from f = {}; {} evaluations)\n",
                m.name(),
                num(p.f),
                num(p.error),
                num(p.start_f),
                p.evaluations
            ));
        } else {
            s.push_str(&format!(
                "polished{run} ({}): no better point near the best ({} evaluations)\n",
                m.name(),
                p.evaluations
            ));
        }
    }
    s
}

/// A plot's title: the objective, D, Np and the strategy, and the number of runs.
fn plot_title(job: &Job, runs: usize) -> String {
    format!(
        "{}, D = {}, Np = {}, {}: best error per generation ({runs} run{})",
        input::clip(&job.objective().name()),
        job.dim(),
        job.pop(),
        gpude::host::config::strategy_name(job.strategy()),
        if runs == 1 { "" } else { "s" }
    )
}

/// Runs that ended or were interrupted.
pub(crate) struct Done {
    /// The first run's job (the others differ in their random stream only, or come from
    /// a checkpoint of such runs).
    pub first: Job,
    /// How many runs there are.
    pub runs: usize,
    /// The results of the runs that started (all of them unless interrupted).
    pub results: Vec<RunResult>,
    /// Every run's state; runs that ended are kept as their job alone
    /// (a rerun gives the same bits) unless `--checkpoint` asks for their state, so that
    /// many runs do not hold all their populations.
    pub entries: Vec<Entry>,
    pub interrupted: bool,
    /// Wall time of the runs.
    pub wall: Duration,
}

/// Runs (or goes on with) `entries` on the CPU engine, one after the other, stopping
/// at a generation boundary on SIGINT/SIGTERM and saving as `save` asks.
pub(crate) fn on_cpu(entries: Vec<Entry>, save: &SaveArgs, progress: bool) -> Result<Done> {
    let stop = interrupt::flag()?;
    let Some(first) = entries.first().map(|e| e.job().clone()) else {
        return Err(CliError::usage("there is no run to do"));
    };
    // The runs go one after the other: the largest must fit in the host's memory.
    let need = entries
        .iter()
        .map(|e| cpu::memory_needed(e.job()))
        .max()
        .unwrap_or(0);
    cpu::check_memory(need)?;
    let gens: Vec<u32> = entries.iter().map(|e| e.job().generations()).collect();
    let total: u64 = gens.iter().map(|&g| g as u64).sum();
    let keep_states = save.checkpoint.is_some();
    let bar = progress.then(|| {
        let bar = ProgressBar::new(total);
        if let Ok(style) =
            ProgressStyle::with_template("{wide_bar} {pos}/{len} gens  {msg}  eta {eta}")
        {
            bar.set_style(style);
        }
        bar
    });
    let every = save.checkpoint_every.unwrap_or(0);
    let n = entries.len();
    let mut done: Vec<Entry> = Vec::with_capacity(n);
    let mut rest: std::collections::VecDeque<Entry> = entries.into();
    let mut results = Vec::with_capacity(n);
    let mut before = 0u64;
    let mut save_error: Option<CliError> = None;
    let start = Instant::now();
    while let Some(entry) = rest.pop_front() {
        if stop.load(Ordering::Relaxed) {
            rest.push_front(entry);
            break;
        }
        let k = done.len();
        let observe = |g: u32, best: f64| {
            if let Some(bar) = &bar {
                bar.set_position(before + g as u64);
                if n > 1 {
                    bar.set_message(format!("run {}/{n}  best f {}", k + 1, num(best)));
                } else {
                    bar.set_message(format!("best f {}", num(best)));
                }
            }
            Flow::Continue
        };
        let mut saver = |c: &Checkpoint| {
            let Some(path) = &save.checkpoint else {
                return Flow::Continue;
            };
            let parts = done
                .iter()
                .map(Entry::part)
                .chain([Part::Started(c)])
                .chain(rest.iter().map(Entry::part));
            match write_checkpoint(path, parts) {
                Ok(()) => Flow::Continue,
                Err(e) => {
                    save_error = Some(e);
                    Flow::Stop
                }
            }
        };
        let mut control = Control {
            observer: Some(&observe),
            stop: Some(&stop),
            every,
            save: Some(&mut saver),
        };
        let outcome = match entry {
            Entry::Pending(job) => cpu::try_run_controlled(&job, &mut control)?,
            Entry::Started(c) => cpu::resume(c, &mut control)?,
        };
        if let Some(e) = save_error.take() {
            return Err(e);
        }
        before += gens[k] as u64;
        let stopped = outcome.result.termination == Termination::Stopped;
        results.push(outcome.result);
        done.push(if keep_states || stopped {
            Entry::Started(outcome.checkpoint)
        } else {
            Entry::Pending(outcome.checkpoint.job)
        });
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let interrupted = stop.load(Ordering::Relaxed)
        && (!rest.is_empty()
            || results
                .iter()
                .any(|r| r.termination == Termination::Stopped));
    done.extend(rest);
    Ok(Done {
        runs: gens.len(),
        first,
        results,
        entries: done,
        interrupted,
        wall: start.elapsed(),
    })
}

/// Runs (or goes on with) `entries` on the GPU: compatible runs share a launch, a
/// SIGINT/SIGTERM stops them at their next reported generation (the state of each is
/// downloaded), and `save` is honoured as on the CPU.
pub(crate) fn on_cuda(
    solver: &gpude::Solver,
    entries: Vec<Entry>,
    save: &SaveArgs,
    progress: bool,
) -> Result<Done> {
    let stop = interrupt::flag()?;
    if solver.gpus() > 1 && save.checkpoint.is_some() && save.checkpoint_every.is_some() {
        eprintln!(
            "notice: --checkpoint-every saves every run's state at once: the runs stay on the first of the {} GPUs",
            solver.gpus()
        );
    }
    let Some(first) = entries.first().map(|e| e.job().clone()) else {
        return Err(CliError::usage("there is no run to do"));
    };
    let n = entries.len();
    let gens: Vec<u32> = entries.iter().map(|e| e.job().generations()).collect();
    let total: u64 = gens.iter().map(|&g| g as u64).sum();
    let bar = progress.then(|| {
        let bar = ProgressBar::new(total);
        if let Ok(style) =
            ProgressStyle::with_template("{wide_bar} {pos}/{len} gens  {msg}  eta {eta}")
        {
            bar.set_style(style);
        }
        bar
    });
    // Each run's generations as last reported, and the best over the runs.
    let done_gens: Vec<AtomicU32> = entries
        .iter()
        .map(|e| match e {
            Entry::Started(c) => AtomicU32::new(c.generation),
            Entry::Pending(_) => AtomicU32::new(0),
        })
        .collect();
    let best = std::sync::Mutex::new(f64::INFINITY);
    let observe = |run: usize, g: u32, b: f64| {
        if let Some(bar) = &bar {
            done_gens[run].store(g, Ordering::Relaxed);
            bar.set_position(
                done_gens
                    .iter()
                    .map(|d| d.load(Ordering::Relaxed) as u64)
                    .sum(),
            );
            if let Ok(mut best) = best.lock() {
                if b < *best {
                    *best = b;
                }
                bar.set_message(format!("best f {}", num(*best)));
            }
        }
        Flow::Continue
    };
    let mut save_error: Option<CliError> = None;
    let mut saver = |parts: &[Part]| {
        let Some(path) = &save.checkpoint else {
            return Flow::Continue;
        };
        match write_checkpoint(path, parts.iter().copied()) {
            Ok(()) => Flow::Continue,
            Err(e) => {
                save_error = Some(e);
                Flow::Stop
            }
        }
    };
    let mut watch = gpude::run::control::Watch {
        observer: Some(&observe),
        stop: Some(&stop),
        every: save.checkpoint_every.unwrap_or(0),
        // Without --checkpoint nothing is saved during the run, and the engine need not
        // ask whether the jobs could be (a PTX objective cannot: it was refused here).
        save: if save.checkpoint.is_some() {
            Some(&mut saver)
        } else {
            None
        },
        keep: save.checkpoint.is_some(),
        ..Default::default()
    };
    let start = Instant::now();
    let ran = solver.run_entries(entries, &mut watch)?;
    let wall = start.elapsed();
    if let Some(e) = save_error.take() {
        return Err(e);
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let results: Vec<RunResult> = ran.iter().filter_map(|r| r.result.clone()).collect();
    let interrupted = stop.load(Ordering::Relaxed)
        && (results.len() < n
            || results
                .iter()
                .any(|r| r.termination == Termination::Stopped));
    Ok(Done {
        runs: n,
        first,
        results,
        entries: ran.into_iter().map(|r| r.entry).collect(),
        interrupted,
        wall,
    })
}

/// Writes a checkpoint file whole. A file larger than the free memory is refused
/// before it is made.
fn write_checkpoint<'a>(
    path: &std::path::Path,
    parts: impl IntoIterator<Item = Part<'a>>,
) -> Result<()> {
    let bytes = checkpoint::encode_parts(parts).map_err(|e| match e {
        gpude::Error::OutOfMemory { needed, free, .. } => CliError::runtime(format!(
            "cannot save the checkpoint file {}: it takes {} and only {} of host memory is available",
            input::name(path),
            bytes(needed),
            bytes(free)
        )),
        e => CliError::from(e),
    })?;
    output::write(path, &bytes).map_err(|e| {
        CliError::runtime(format!(
            "writing the checkpoint file {}: {e}",
            input::name(path)
        ))
    })
}

/// Saves an interrupted run that has no --checkpoint to [`DEFAULT_CHECKPOINT`], when
/// the file takes at most [`DEFAULT_CHECKPOINT_LIMIT`]; else says how large it would be
/// and how to save such a run.
fn save_by_default(path: &std::path::Path, entries: &[Entry]) -> Result<()> {
    let size = checkpoint::encoded_size(entries.iter().map(Entry::part))?;
    if size > DEFAULT_CHECKPOINT_LIMIT {
        return Err(CliError::runtime(format!(
            "the checkpoint would take {}, more than the {} MiB that {} may take without \
             --checkpoint; to save such a run, give --checkpoint FILE (no size limit)",
            bytes(size),
            DEFAULT_CHECKPOINT_LIMIT / input::MIB,
            input::name(path)
        )));
    }
    write_checkpoint(path, entries.iter().map(Entry::part))
}

/// `n` bytes for people: `1.5 GiB (1610612736 bytes)`.
fn bytes(n: u64) -> String {
    gpude::host::error::bytes(n)
}

/// Writes the history and the checkpoint, and reports; an interrupted run reports as
/// an error with exit code 130 and its partial result on stdout.
pub(crate) fn finish(
    mut done: Done,
    files: &Files,
    json: bool,
    at: &Where,
    budget: Option<u64>,
    save: &SaveArgs,
) -> Result<String> {
    files.write(&done.first, &done.results)?;
    if files.history.is_none() {
        for r in &mut done.results {
            r.history = None;
        }
    }
    let saved_to = save_path(save, done.interrupted);
    let mut saved = None;
    let mut not_saved = None;
    if let Some(path) = &saved_to
        && !done.entries.is_empty()
    {
        let written = match &save.checkpoint {
            Some(_) => write_checkpoint(path, done.entries.iter().map(Entry::part)),
            None => save_by_default(path, &done.entries),
        };
        match written {
            Ok(()) => saved = Some(path),
            Err(e) if done.interrupted => not_saved = Some(e.message),
            Err(e) => return Err(e),
        }
    }
    // A run whose best is not finite is a failure, never a result with exit code 0.
    if !done.interrupted
        && let Some((k, e)) = common::failed_run(&done.results)
    {
        return Err(match done.results.len() {
            1 => e,
            n => e.context(format!("run {k} of {n}")),
        });
    }
    let job = &done.first;
    let threshold = job.target().unwrap_or(DEFAULT_SUCCESS);
    // Successes are judged on the verified errors.
    let errors: Vec<f64> = done.results.iter().map(|r| r.verified_error).collect();
    let summary = Summary::of(&errors, threshold);
    // The polish of an interrupted run is left out: it was asked to stop.
    let polished = match files.polish {
        Some(m) if !done.interrupted => Some(
            done.results
                .iter()
                .map(|r| {
                    let x: Vec<f64> = r.best_x.iter().copied().collect();
                    gpude::run::polish::polish(job, &x, m, gpude::run::polish::DEFAULT_ITERATIONS)
                })
                .collect::<gpude::Result<Vec<_>>>()?,
        ),
        _ => None,
    };
    let out = if json {
        common::to_json(&Report {
            backend: at.backend,
            fallback_reason: at.fallback_reason,
            job: JobSpec::resolved(job, done.runs as u32, budget),
            wall_s: done.wall.as_secs_f64(),
            results: &done.results,
            summary,
            islands: None,
            polished,
        })?
    } else {
        let mut out = human(at, job, &done.results, done.wall, &summary, None);
        if let (Some(ps), Some(m)) = (&polished, files.polish) {
            out.push_str(&polish_lines(ps, m));
        }
        out
    };
    if !done.interrupted {
        return Ok(out);
    }
    let g = done.results.last().map_or(0, |r| r.generations);
    Err(interrupted(
        out,
        g,
        done.runs,
        done.results.len(),
        saved,
        not_saved,
    ))
}

/// The error of an interrupted run (exit code 130, its partial report `out` on stdout):
/// where it stopped (generation `g` of the last of `started` of `runs` runs) and where
/// it was saved, or why not.
fn interrupted(
    out: String,
    g: u32,
    runs: usize,
    started: usize,
    saved: Option<&PathBuf>,
    not_saved: Option<String>,
) -> CliError {
    let at_run = match runs {
        1 => format!("interrupted at generation {g}"),
        n => format!(
            "interrupted at generation {g} of run {} of {n}",
            started.max(1)
        ),
    };
    let message = match (saved, not_saved) {
        (Some(p), _) => {
            let p = input::name(p);
            format!("{at_run}; saved to {p}: go on with `gpude resume {p}`")
        }
        (None, Some(why)) => format!("{at_run}; nothing saved: {why}"),
        (None, None) => format!("{at_run}; nothing saved"),
    };
    CliError::interrupted(message, out)
}

/// Where the runs are saved: --checkpoint, or ./gpude.ckpt after an interrupt.
fn save_path(save: &SaveArgs, interrupted: bool) -> Option<PathBuf> {
    match (&save.checkpoint, interrupted) {
        (Some(p), _) => Some(p.clone()),
        (None, true) => Some(PathBuf::from(DEFAULT_CHECKPOINT)),
        (None, false) => None,
    }
}

/// Should a progress bar be drawn? Only for people watching a long run (the CPU engine
/// reports every generation, the GPU every reported one).
pub(crate) fn show_progress<'a>(json: bool, jobs: impl Iterator<Item = &'a Job>) -> bool {
    let work: f64 = jobs
        .map(|j| j.pop() as f64 * j.dim() as f64 * j.generations() as f64)
        .sum();
    !json && work > PROGRESS_WORK && std::io::stdout().is_terminal()
}

/// CSV `generation,best` (one run) or `generation,run_0,run_1,…`; runs that stopped
/// early leave their later cells empty.
fn history_csv(results: &[RunResult]) -> String {
    let hist: Vec<&[f64]> = results
        .iter()
        .map(|r| r.history.as_deref().unwrap_or(&[]))
        .collect();
    let rows = hist.iter().map(|h| h.len()).max().unwrap_or(0);
    let mut w = String::new();
    if hist.len() == 1 {
        w.push_str("generation,best\n");
    } else {
        let names: Vec<String> = (0..hist.len()).map(|k| format!("run_{k}")).collect();
        w.push_str(&format!("generation,{}\n", names.join(",")));
    }
    for g in 0..rows {
        let cells: Vec<String> = hist
            .iter()
            .map(|h| h.get(g).map(|&v| common::exact(v)).unwrap_or_default())
            .collect();
        w.push_str(&format!("{g},{}\n", cells.join(",")));
    }
    w
}

fn human(
    at: &Where,
    job: &Job,
    results: &[RunResult],
    wall: Duration,
    summary: &Summary,
    arch: Option<&Archipelago>,
) -> String {
    let mut s = String::new();
    let backend = match at.fallback_reason {
        Some(why) => format!("{} (no GPU: {why})", at.backend),
        None => at.backend.to_string(),
    };
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<13}{v}\n"));
    line("backend", backend);
    line(
        "function",
        format!(
            "{}  D = {}  domain {}",
            job.objective().describe(),
            job.dim(),
            common::describe_domain(job)
        ),
    );
    line("population", format!("Np = {}", job.pop()));
    match arch {
        Some(a) => {
            for (k, v) in islands::describe(a) {
                line(k, v);
            }
        }
        None => line("strategy", common::describe_strategy(job)),
    }
    line(
        "precision",
        format!(
            "{}, {} formulas",
            job.precision().name(),
            gpude::host::config::formula_name(job.formula())
        ),
    );
    line("seed", job.seed().to_string());
    if let Some(t) = job.target() {
        line("target", format!("error ≤ {}", num(t)));
    }
    if let Some(stops) = common::describe_stops(job) {
        line("stops", stops);
    }
    if let [r] = results {
        line("best f", num(r.best_f));
        line("error", num(r.error));
        line("verified", common::verified(r, summary.threshold));
        line("generations", r.generations.to_string());
        line("evaluations", r.evaluations.to_string());
        line("termination", r.termination.describe().to_string());
        line("layout", common::describe_layouts(results));
        line("elapsed", common::duration(r.elapsed));
        line("best x", components(r));
        s.push_str(&common::verified_legend([(r, summary.threshold)]));
        return s;
    }
    line("runs", results.len().to_string());
    line("layout", common::describe_layouts(results));
    line("wall time", common::duration(wall));
    s.push('\n');
    let mut rows = vec![
        [
            "run",
            "best f",
            "error",
            "verified",
            "gens",
            "evals",
            "termination",
            "time",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for r in results {
        rows.push(vec![
            r.stream.to_string(),
            num(r.best_f),
            num(r.error),
            common::verified(r, summary.threshold),
            r.generations.to_string(),
            r.evaluations.to_string(),
            r.termination.describe().to_string(),
            common::duration(r.elapsed),
        ]);
    }
    s.push_str(&common::table(&rows, &[6]));
    s.push_str(&common::verified_legend(
        results.iter().map(|r| (r, summary.threshold)),
    ));
    s.push('\n');
    s.push_str(&summary.describe());
    if let Some(best) = results.iter().min_by(|a, b| a.best_f.total_cmp(&b.best_f)) {
        s.push_str(&format!(
            "best x (run {}): {}\n",
            best.stream,
            components(best)
        ));
    }
    s
}

/// The first components of the best point: `[0.001, -0.002, …] (30 components)`.
fn components(r: &RunResult) -> String {
    let n = r.best_x.len();
    let shown: Vec<String> = r
        .best_x
        .iter()
        .take(SHOWN_COMPONENTS)
        .map(|&v| num(v))
        .collect();
    if n > SHOWN_COMPONENTS {
        format!("[{}, …] ({n} components)", shown.join(", "))
    } else {
        format!("[{}]", shown.join(", "))
    }
}
