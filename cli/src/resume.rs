//! `gpude resume FILE`: go on with the runs of a checkpoint file, to the same bits as
//! runs that never stopped, on either engine (a checkpoint holds no engine: the CPU and
//! the GPU compute the same bits, so a run saved by one goes on in the other).

use super::common::BackendArgs;
use super::input::{self, MIB};
use super::run::{self, Files, SaveArgs, Where};
use super::{CliError, Result};
use gpude::checkpoint::{self, ArchipelagoEntry, Entry};
use std::path::PathBuf;

/// The largest checkpoint file read.
pub const MAX_CHECKPOINT_BYTES: u64 = 16 * 1024 * MIB;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Checkpoint file (from `run --checkpoint`, or ./gpude.ckpt after an interrupt).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// New generation limit of every run (counted from the start of the run, not from
    /// the checkpoint) [default: the runs' own limit].
    #[arg(long, visible_alias = "generations", value_name = "G")]
    pub gens: Option<u32>,

    /// Print the settings and results as JSON.
    #[arg(long)]
    pub json: bool,

    /// Write the best value after every generation (from generation 0) to FILE.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// Draw each run's best error against the generations (from generation 0) into FILE
    /// (.png or .svg), the runs overlaid.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Save to FILE (at the end, on SIGINT/SIGTERM and every --checkpoint-every
    /// generations) [default: the checkpoint file read].
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,

    /// Also save every N generations.
    #[arg(long, value_name = "N")]
    pub checkpoint_every: Option<u32>,

    #[command(flatten)]
    pub backend: BackendArgs,
}

pub fn run(args: Args) -> Result<String> {
    let shown = input::name(&args.file);
    let bytes = input::read_bytes(&args.file, MAX_CHECKPOINT_BYTES, "a checkpoint")?;
    if checkpoint::is_archipelago_file(&bytes) {
        return islands(args, bytes);
    }
    let mut entries = checkpoint::decode(&bytes)
        .map_err(|e| CliError::from(e).context(format!("cannot resume from {shown}")))?;
    drop(bytes);
    let done: Vec<Option<u32>> = entries
        .iter()
        .map(|e| match e {
            Entry::Started(c) => Some(c.generation),
            Entry::Pending(_) => None,
        })
        .collect();
    new_limit(&args, &shown, &done, |k, g| entries[k].set_generations(g))?;
    let with_history = entries.iter().all(|e| e.job().history());
    let (save, files) = outputs(&args, &shown, with_history)?;
    let budget = match entries.first().map(Entry::job) {
        Some(j) if j.budget_from_evaluations() => Some(j.evaluations(j.generations())),
        _ => None,
    };
    let jobs: Vec<gpude::Job> = entries.iter().map(|e| e.job().clone()).collect();
    let solver = args.backend.open_for(&jobs)?;
    drop(jobs);
    let at = Where {
        backend: solver.backend_name(),
        fallback_reason: solver.fallback_reason(),
    };
    let progress = run::show_progress(args.json, entries.iter().map(Entry::job));
    let done = if solver.backend_name() == "cpu" {
        run::on_cpu(entries, &save, progress)?
    } else {
        run::on_cuda(&solver, entries, &save, progress)?
    };
    run::finish(done, &files, args.json, &at, budget, &save)
}

/// `gpude resume` of an archipelago checkpoint (from `run --islands … --checkpoint`, or
/// after an interrupt): on the GPU when there is one and it runs them (else the CPU).
fn islands(args: Args, bytes: Vec<u8>) -> Result<String> {
    let shown = input::name(&args.file);
    let mut entries = checkpoint::decode_archipelagos(&bytes)
        .map_err(|e| CliError::from(e).context(format!("cannot resume from {shown}")))?;
    drop(bytes);
    let done: Vec<Option<u32>> = entries
        .iter()
        .map(|e| match e {
            ArchipelagoEntry::Started(c) => Some(c.generation),
            ArchipelagoEntry::Pending(_) => None,
        })
        .collect();
    new_limit(&args, &shown, &done, |k, g| entries[k].set_generations(g))?;
    let archs: Vec<gpude::Archipelago> = entries.iter().map(|e| e.archipelago().clone()).collect();
    let with_history = archs.iter().all(|a| a.template().history());
    let (save, files) = outputs(&args, &shown, with_history)?;
    let solver = super::islands::open(&args.backend, &archs)?;
    let first = &archs[0];
    let budget = first
        .template()
        .budget_from_evaluations()
        .then(|| first.template().evaluations(first.template().generations()));
    let mut resolved =
        super::common::JobSpec::resolved(first.template(), archs.len() as u32, budget);
    super::islands::resolve(&mut resolved, first);
    let done = super::islands::execute_saved(&solver, entries, &save)?;
    run::finish_islands(done, &files, args.json, &solver, resolved, &save)
}

/// Applies `--gens` to every run (`set(k, g)`), refused below the generations a run has
/// done already (`done[k]`; none for a run not started).
fn new_limit(
    args: &Args,
    shown: &str,
    done: &[Option<u32>],
    mut set: impl FnMut(usize, u32) -> gpude::Result<()>,
) -> Result<()> {
    let Some(g) = args.gens else {
        return Ok(());
    };
    for (k, d) in done.iter().enumerate() {
        if let Some(d) = *d
            && d > g
        {
            return Err(CliError::usage(format!(
                "--gens = {g} is not allowed: run {k} of {shown} has done {d} generations already"
            )));
        }
        set(k, g)?;
    }
    Ok(())
}

/// Where a resumed run is saved (the file read, unless --checkpoint names another) and
/// the files it writes, checked; `with_history`: whether every run records a history.
fn outputs(args: &Args, shown: &str, with_history: bool) -> Result<(SaveArgs, Files)> {
    if args.checkpoint_every == Some(0) {
        return Err(CliError::usage(
            "--checkpoint-every = 0 is not allowed: 1 or more generations",
        ));
    }
    let save = SaveArgs {
        checkpoint: Some(args.checkpoint.clone().unwrap_or_else(|| args.file.clone())),
        checkpoint_every: args.checkpoint_every,
    };
    let files = Files {
        history: args.history.clone(),
        plot: args.plot.clone(),
        polish: None,
    };
    files.check(save.checkpoint.as_deref())?;
    if files.need_history() && !with_history {
        return Err(CliError::usage(format!(
            "{shown} has no history of its runs: leave out --history and --plot"
        )));
    }
    Ok((save, files))
}
