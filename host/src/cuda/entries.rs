//! Lists of runs under control on the GPU (the CUDA engine's side of
//! [`crate::run::control::Watch`] and [`crate::run::control::Control`]): compatible runs
//! share a batch launch, in segments that end at the checkpoints; a whole-GPU run goes
//! on launch after launch. The host watches each launch through its control block
//! ([`super::control`]) and downloads the state where a run stops or is saved.

use super::batch::{Launched, batch_state, compatible};
use super::control::{MappedBlock, Monitor, Words, pause};
use super::engine::{CudaEngine, Mode, cuda_err};
use super::external::check_objective;
use super::grid::{
    GridBuffers, ReadBack, STATE_DONE, STATE_GEN, Took, grid_best, grid_history, grid_state,
    upload_grid,
};
use super::kernels::GpuReal;
use super::state::{Controlled, Start, checkpoint_of, join_history, padded_state, result_of};
use crate::error::{Error, Result};
use crate::job::config::{Job, Precision};
use crate::run::checkpoint::{Checkpoint, Entry, Part};
use crate::run::control::{Control, Flow, Outcome, Ran, Reporting, Watch, check_watch};
use crate::run::result::{RunLayout, RunResult, Termination, ending};
use crate::run::stops::stop_of;
use cudarc::driver::CudaStream;
use gpude_device::control::{COMMAND, SLOT_WORDS, STOP};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Where the next launch of a run that has done `g` generations ends: the job's limit,
/// or the next multiple of `every` (checkpoints) before it.
pub fn segment_end(g: u32, limit: u32, every: u32) -> u32 {
    if every == 0 || g >= limit {
        return limit;
    }
    let next = (g / every).saturating_add(1).saturating_mul(every);
    next.min(limit)
}

/// Where the next launch of a run of `job` that has done `g` generations ends: at
/// [`segment_end`], or earlier where the job's convergence stops are looked at.
fn launch_end(job: &Job, g: u32, every: u32) -> u32 {
    let end = segment_end(g, job.generations(), every);
    job.stops().next_after(g).map_or(end, |s| end.min(s))
}

/// A result read back from a launch that a convergence stop (`fired`) ended: the stop,
/// where the launch's own reading says only that the run stopped before its limit.
fn stopped_by(mut r: RunResult, fired: Option<Termination>) -> RunResult {
    if let Some(t) = fired
        && r.termination == Termination::Stopped
    {
        r.termination = t;
    }
    r
}

/// The values of a whole-GPU run's population (np of them), as f64.
fn grid_values<T: GpuReal>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &GridBuffers<T>,
    np: usize,
) -> Result<Vec<f64>> {
    let f = stream
        .clone_dtoh(&bu.fit)
        .map_err(cuda_err(format!("{name}: reading the values")))?;
    Ok(f[..np].iter().map(|v| v.to_f64()).collect())
}

/// The runs of a list while the engine goes through them: each one's entry (its state
/// as last known) and result.
struct Runs {
    entries: Vec<Entry>,
    results: Vec<Option<RunResult>>,
    /// The stop flag or the saver stopped everything.
    halted: bool,
}

impl Runs {
    /// Gives the state of every run to the saver.
    fn save(&self, watch: &mut Watch) -> Flow {
        let parts: Vec<Part> = self.entries.iter().map(Entry::part).collect();
        match watch.save.as_mut() {
            Some(save) => save(&parts),
            None => Flow::Continue,
        }
    }
}

/// Has the stop flag been set?
fn flagged(watch: &Watch) -> bool {
    watch.stop.is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Runs a launch to its end while watching its control block.
fn watch_launch(
    stream: &Arc<CudaStream>,
    name: &str,
    block: &MappedBlock,
    monitor: &mut Monitor,
    watch: &Watch,
) -> Result<()> {
    let err = |what: &str| cuda_err(format!("{name}: {what}"));
    let event = stream
        .record_event(None)
        .map_err(err("recording an event"))?;
    loop {
        monitor.poll(block, watch.observer, watch.stop);
        if event.try_is_complete().map_err(err("running"))? {
            return Ok(());
        }
        pause(watch.reporting);
    }
}

/// How a run stands after a launch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Standing {
    Running,
    Ended,
    Stopped,
}

/// A run's standing after a launch to `end` that left it at generation `g` with best
/// `bf`; `told` says whether the host had sent it the stop.
fn standing(job: &Job, g: u32, bf: f64, end: u32, told: bool) -> Standing {
    if ending(job, g, bf) != Termination::Stopped {
        Standing::Ended
    } else if g < end || told {
        Standing::Stopped
    } else {
        Standing::Running
    }
}

/// A control block lent to a run: given back to the engine (for the next run) when
/// dropped.
struct Lease<'e> {
    engine: &'e CudaEngine,
    block: Option<MappedBlock>,
}

impl std::ops::Deref for Lease<'_> {
    type Target = MappedBlock;
    fn deref(&self) -> &MappedBlock {
        self.block.as_ref().expect("a leased block until dropped")
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let (Some(b), Ok(mut kept)) = (self.block.take(), self.engine.blocks.lock()) {
            // The larger of the two stays.
            if kept.as_ref().is_none_or(|k| k.slots() < b.slots()) {
                *kept = Some(b);
            }
        }
    }
}

impl CudaEngine {
    /// A zeroed control block of at least `slots` slots: the engine's kept one when it
    /// is free and large enough, else a new one.
    fn lease_block(&self, slots: usize) -> Result<Lease<'_>> {
        let kept = self.blocks.lock().ok().and_then(|mut k| k.take());
        let block = match kept {
            Some(b) if b.slots() >= slots => {
                b.clear();
                b
            }
            _ => MappedBlock::new(self.context(), slots)?,
        };
        Ok(Lease {
            engine: self,
            block: Some(block),
        })
    }

    /// Runs (or goes on with) a list of runs under `watch`: fresh jobs
    /// ([`Entry::Pending`]) and saved runs ([`Entry::Started`], from either engine).
    /// In the batch layout compatible runs share a launch; the grid and step layouts
    /// take them one at a time. A stop (the flag, the observer, the saver) ends the
    /// runs it reaches at a generation boundary, with their state downloaded; runs
    /// not started by then come back as they were, without a result.
    pub fn run_entries(
        &self,
        entries: Vec<Entry>,
        mode: Mode,
        watch: &mut Watch,
    ) -> Result<Vec<Ran>> {
        if entries
            .iter()
            .any(|e| crate::cuda::adaptive::in_adaptive_kernels(e.job()))
        {
            return self.adaptive_entries(entries, mode, watch);
        }
        if entries
            .iter()
            .any(|e| e.job().objective().is_host_callback())
        {
            return self.entries_one_by_one(entries, mode, watch);
        }
        for e in &entries {
            let job = e.job();
            check_objective(job)?;
            job.check()?;
        }
        check_watch(&entries, watch)?;
        let modes: Vec<Mode> = match mode {
            Mode::Auto => self.auto_modes(&entries.iter().map(Entry::job).collect::<Vec<_>>()),
            m => vec![m; entries.len()],
        };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for k in 0..entries.len() {
            let joins = groups.iter_mut().find(|g| {
                modes[k] == Mode::Batch
                    && modes[g[0]] == Mode::Batch
                    && compatible(entries[g[0]].job(), entries[k].job())
            });
            match joins {
                Some(g) => g.push(k),
                None => groups.push(vec![k]),
            }
        }
        let n = entries.len();
        let mut runs = Runs {
            entries,
            results: vec![None; n],
            halted: false,
        };
        for (i, group) in groups.iter().enumerate() {
            // The first group always starts (a stop then ends it where it started).
            if i > 0 && (runs.halted || flagged(watch)) {
                break;
            }
            let k = group[0];
            match (modes[k], runs.entries[k].job().precision()) {
                (Mode::Grid, Precision::F32) => self.grid_one::<f32>(k, &mut runs, watch)?,
                (Mode::Grid, Precision::F64) => self.grid_one::<f64>(k, &mut runs, watch)?,
                (Mode::Steps, Precision::F32) => self.steps_one::<f32>(k, &mut runs, watch)?,
                (Mode::Steps, Precision::F64) => self.steps_one::<f64>(k, &mut runs, watch)?,
                (_, Precision::F32) => self.batch_group::<f32>(group, &mut runs, watch)?,
                (_, Precision::F64) => self.batch_group::<f64>(group, &mut runs, watch)?,
            }
        }
        Ok(runs
            .entries
            .into_iter()
            .zip(runs.results)
            .map(|(entry, result)| Ran { result, entry })
            .collect())
    }

    /// A list with host callbacks: one run after the other, the callbacks' under a
    /// [`Control`] of the watch's observer and stop flag (the host sees each of their
    /// generations), the others as [`CudaEngine::run_entries`] runs them. Callbacks are
    /// not savable: a watch that saves or keeps states refuses them.
    fn entries_one_by_one(
        &self,
        entries: Vec<Entry>,
        mode: Mode,
        watch: &mut Watch,
    ) -> Result<Vec<Ran>> {
        check_watch(&entries, watch)?;
        let mut out = Vec::with_capacity(entries.len());
        let mut halted = false;
        for (k, entry) in entries.into_iter().enumerate() {
            if k > 0 && (halted || flagged(watch)) {
                out.push(Ran {
                    result: None,
                    entry,
                });
                continue;
            }
            if !entry.job().objective().is_host_callback() {
                let ran = self.run_entries(vec![entry], mode, watch)?;
                halted |= flagged(watch);
                out.extend(ran);
                continue;
            }
            let observer = watch.observer;
            let one = move |g: u32, best: f64| match observer {
                Some(o) => o(k, g, best),
                None => Flow::Continue,
            };
            let mut control = Control {
                observer: Some(&one),
                stop: watch.stop,
                ..Control::default()
            };
            let o = self.callback_run(entry.job(), &mut control)?;
            let stopped = o.result.termination == crate::run::result::Termination::Stopped;
            halted |= stopped && flagged(watch);
            out.push(Ran {
                result: Some(o.result),
                entry: if stopped {
                    Entry::Started(o.checkpoint)
                } else {
                    entry
                },
            });
        }
        Ok(out)
    }

    /// [`CudaEngine::run_entries`] for adaptive runs: they run to their end in one batch
    /// launch, or in the grid and step modes one after the other as [`CudaEngine::run`]
    /// runs them (the adaptive ones in the grid layout; see
    /// `gpu_layout` in `cuda/adaptive.rs`). No checkpoints: an adaptive run's memory and
    /// archive are not saved yet; a stop flag set during a launch does not stop it. The
    /// observer sees each run's last generation.
    fn adaptive_entries(
        &self,
        entries: Vec<Entry>,
        mode: Mode,
        watch: &mut Watch,
    ) -> Result<Vec<Ran>> {
        let mut jobs = Vec::with_capacity(entries.len());
        for e in &entries {
            let job = e.job();
            if watch.keep || watch.every > 0 || matches!(e, Entry::Started(_)) {
                crate::run::checkpoint::savable(job)?;
                // A classic strategy on a CEC 2017 function is savable, but its kernel
                // (the adaptive family's) keeps no state between launches.
                return Err(Error::invalid(
                    "checkpoint on the GPU",
                    crate::job::config::strategy_name(job.strategy()),
                    "a run outside the adaptive kernels: runs on CEC 2017 functions are not saved on the GPU yet; use --backend cpu to save them",
                ));
            }
            jobs.push(job.clone());
        }
        let results = match mode {
            Mode::Grid | Mode::Steps => jobs
                .iter()
                .map(|j| self.run(j, mode))
                .collect::<Result<Vec<_>>>()?,
            Mode::Auto | Mode::Batch => self.run_batch(&jobs)?,
        };
        if let Some(o) = watch.observer {
            for (k, r) in results.iter().enumerate() {
                // The runs have ended: a stop asked for now changes nothing.
                let _ = o(k, r.generations, r.best_f);
            }
        }
        Ok(entries
            .into_iter()
            .zip(results)
            .map(|(entry, r)| Ran {
                result: Some(r),
                entry,
            })
            .collect())
    }

    /// Runs `job` under `control` (as [`crate::cpu::run_controlled`] does on the CPU),
    /// reporting as `reporting` says; the outcome holds its final state. A host callback
    /// runs in its own layout (`cuda/callback.rs`): the host sees every generation.
    pub fn run_controlled(
        &self,
        job: &Job,
        mode: Mode,
        control: &mut Control,
        reporting: Reporting,
    ) -> Result<Outcome> {
        if job.objective().is_host_callback() {
            return self.callback_run(job, control);
        }
        self.control_one(Entry::Pending(job.clone()), mode, control, reporting)
    }

    /// Goes on from a checkpoint (of either engine) to its job's limit under `control`,
    /// with the same bits as a run that never stopped.
    pub fn resume(
        &self,
        from: Checkpoint,
        mode: Mode,
        control: &mut Control,
        reporting: Reporting,
    ) -> Result<Outcome> {
        from.check()?;
        crate::run::checkpoint::savable(&from.job)?;
        self.control_one(Entry::Started(from), mode, control, reporting)
    }

    fn control_one(
        &self,
        entry: Entry,
        mode: Mode,
        control: &mut Control,
        reporting: Reporting,
    ) -> Result<Outcome> {
        let observer = control.observer;
        let one = move |_: usize, g: u32, best: f64| match observer {
            Some(o) => o(g, best),
            None => Flow::Continue,
        };
        let saves = control.save.is_some();
        let mut saver = |parts: &[Part]| match (parts.first(), control.save.as_mut()) {
            (Some(Part::Started(c)), Some(save)) => save(c),
            _ => Flow::Continue,
        };
        let mut watch = Watch {
            observer: Some(&one),
            stop: control.stop,
            every: control.every,
            save: if saves { Some(&mut saver) } else { None },
            reporting,
            keep: true,
        };
        let ran = self.run_entries(vec![entry], mode, &mut watch)?;
        match ran.into_iter().next() {
            Some(Ran {
                result: Some(result),
                entry: Entry::Started(checkpoint),
            }) => Ok(Outcome { result, checkpoint }),
            _ => Err(Error::Cuda {
                context: "a controlled run".into(),
                message: "the run left no state".into(),
            }),
        }
    }

    /// A batch launch of compatible runs (entries `group` of `runs`), in segments that
    /// end at the checkpoints.
    fn batch_group<T: Controlled>(
        &self,
        group: &[usize],
        runs: &mut Runs,
        watch: &mut Watch,
    ) -> Result<()> {
        let jobs: Vec<Job> = group
            .iter()
            .map(|&k| runs.entries[k].job().clone())
            .collect();
        let refs: Vec<&Job> = jobs.iter().collect();
        let p = jobs.len();
        let stream = self.first_stream();
        let mut l = self.alloc_batch::<T>(&refs, stream.clone(), true)?;
        let (name, st, np, dim) = (
            l.name.clone(),
            l.st,
            jobs[0].pop() as usize,
            jobs[0].dim() as usize,
        );
        let up = |e| cuda_err(format!("{name}: uploading"))(e);
        let mut gens = vec![0u32; p];
        let mut history: Vec<Option<Vec<f64>>> = vec![None; p];
        let mut before = vec![Duration::ZERO; p];
        for (k, &e) in group.iter().enumerate() {
            let s = Start::of(&runs.entries[e]);
            before[k] = s.elapsed;
            history[k] = s.history.map(<[f64]>::to_vec);
            if let (true, Some(state)) = (s.loaded(), s.state) {
                let (rows, fit) = padded_state::<T>(state, dim, st)?;
                let n = np * st;
                stream
                    .memcpy_htod(&rows, &mut l.pop_a.slice_mut(k * n..(k + 1) * n))
                    .map_err(up)?;
                stream
                    .memcpy_htod(&fit, &mut l.fit.slice_mut(k * np..(k + 1) * np))
                    .map_err(up)?;
                gens[k] = s.generation;
            }
        }
        stream.memcpy_htod(&gens, &mut l.gens_done).map_err(up)?;
        let block = self.lease_block(p)?;
        let mut seen: Vec<Option<u32>> = vec![None; p];
        let mut stand = vec![Standing::Running; p];
        // The convergence stop that ended each run, if one did.
        let mut fired: Vec<Option<Termination>> = vec![None; p];
        let mut last = Vec::new();
        let start = std::time::Instant::now();
        // The runs still running go on to the next checkpoint (or their limit).
        while let Some(g) = (0..p)
            .filter(|&k| stand[k] == Standing::Running)
            .map(|k| gens[k])
            .min()
        {
            let end = launch_end(&jobs[0], g, watch.every);
            let mut monitor = Monitor::new(
                jobs[0].precision(),
                watch.reporting,
                group.to_vec(),
                seen.clone(),
            );
            monitor.adopt(&*block);
            l.launch(end, block.device_ptr(), watch.reporting.arg())?;
            watch_launch(&stream, &name, &block, &mut monitor, watch)?;
            seen = monitor.seen().to_vec();
            let from = gens.clone();
            last = l.outcomes(&refs, &from)?;
            let mut values: Option<Vec<f64>> = None;
            for k in 0..p {
                if stand[k] != Standing::Running {
                    continue;
                }
                let o = &mut last[k];
                gens[k] = o.generations;
                if let Some(h) = o.history.take() {
                    history[k] = Some(join_history(history[k].take(), &h));
                }
                stand[k] = standing(&jobs[k], o.generations, o.best_f, end, monitor.stopped(k));
                if stand[k] == Standing::Running && jobs[k].stops().at(gens[k]) {
                    // Read once for the launch, when the first run looks at its stops.
                    if values.is_none() {
                        values = Some(l.values()?);
                    }
                    let all = values.as_deref().unwrap_or_default();
                    let mine = &all[k * np..(k + 1) * np];
                    fired[k] = stop_of(&jobs[k], gens[k], mine, history[k].as_deref());
                    if fired[k].is_some() {
                        // Ended: its block stops at once in the launches that follow.
                        stand[k] = Standing::Ended;
                        block.store(k * SLOT_WORDS + COMMAND, STOP);
                    }
                }
            }
            let halt = flagged(watch);
            let more = stand.contains(&Standing::Running);
            let mut saved = Flow::Continue;
            if more && !halt && watch.every > 0 && watch.save.is_some() {
                for k in 0..p {
                    let c = checkpoint_of(
                        &jobs[k],
                        gens[k],
                        batch_state(&l, k, &jobs[k])?,
                        history[k].clone(),
                        before[k] + start.elapsed(),
                    );
                    runs.entries[group[k]] = Entry::Started(c);
                }
                saved = runs.save(watch);
            }
            if halt || saved == Flow::Stop {
                runs.halted = true;
                for s in stand.iter_mut().filter(|s| **s == Standing::Running) {
                    *s = Standing::Stopped;
                }
            }
        }
        let elapsed = start.elapsed();
        for (k, o) in last.into_iter().enumerate() {
            let (e, job) = (group[k], &jobs[k]);
            if seen[k] != Some(gens[k])
                && let Some(obs) = watch.observer
            {
                // The last generation, as the CPU engine shows it; the run has ended.
                let _ = obs(e, gens[k], o.best_f);
            }
            let total = before[k] + elapsed;
            if watch.keep || stand[k] == Standing::Stopped {
                let c = checkpoint_of(
                    job,
                    gens[k],
                    batch_state(&l, k, job)?,
                    history[k].take(),
                    total,
                );
                runs.results[e] = Some(result_of(&c, l.layout, p as u32));
                runs.entries[e] = Entry::Started(c);
            } else {
                let o = Launched {
                    history: history[k].take(),
                    ..o
                };
                let r = o.result(job, total, l.layout, p as u32);
                runs.results[e] = Some(stopped_by(r, fired[k]));
                runs.entries[e] = Entry::Pending(job.clone());
            }
        }
        Ok(())
    }

    /// One run over the whole GPU in cooperative launches (one per segment).
    fn grid_one<T: Controlled>(&self, e: usize, runs: &mut Runs, watch: &mut Watch) -> Result<()> {
        let job = runs.entries[e].job().clone();
        let mut run = self.grid_run::<T>(&job)?;
        let (stream, name) = (run.stream.clone(), run.name.clone());
        let s = Start::of(&runs.entries[e]);
        let before = s.elapsed;
        let mut history = s.history.map(<[f64]>::to_vec);
        let mut g = 0;
        if s.loaded() {
            upload_grid(&stream, &name, &mut run.bu, &s, false)?;
            g = s.generation;
        }
        let block = self.lease_block(1)?;
        let mut seen = vec![None];
        let start = std::time::Instant::now();
        let mut fired = None;
        let (stand, state) = loop {
            let from = g;
            let end = launch_end(&job, g, watch.every);
            let mut monitor = Monitor::new(job.precision(), watch.reporting, vec![e], seen);
            monitor.adopt(&*block);
            run.launch(end, block.device_ptr(), watch.reporting.arg())?;
            watch_launch(&stream, &name, &block, &mut monitor, watch)?;
            seen = monitor.seen().to_vec();
            let state = run.state()?;
            g = state[STATE_GEN];
            let bf = grid_best(&stream, &name, &run.bu)?;
            if let Some(h) = grid_history(&stream, &name, &run.bu, from, g)? {
                history = Some(join_history(history.take(), &h));
            }
            let mut stand = standing(&job, g, bf, end, monitor.stopped(0));
            if stand == Standing::Running && job.stops().at(g) {
                let values = grid_values(&stream, &name, &run.bu, job.pop() as usize)?;
                fired = stop_of(&job, g, &values, history.as_deref());
                if fired.is_some() {
                    stand = Standing::Ended;
                }
            }
            if stand != Standing::Running {
                break (stand, state);
            }
            if flagged(watch) {
                runs.halted = true;
                stand = Standing::Stopped;
            } else if watch.every > 0 && watch.save.is_some() {
                let c = checkpoint_of(
                    &job,
                    g,
                    grid_state(&stream, &name, &run.bu, g, &job)?,
                    history.clone(),
                    before + start.elapsed(),
                );
                runs.entries[e] = Entry::Started(c);
                if runs.save(watch) == Flow::Stop {
                    runs.halted = true;
                    stand = Standing::Stopped;
                }
            }
            if stand != Standing::Running {
                break (stand, state);
            }
        };
        self.finish_whole(
            e,
            runs,
            watch,
            Whole {
                job: &job,
                stream: &stream,
                name: &name,
                bu: &run.bu,
                state: &state,
                seen: seen[0],
                stopped: stand == Standing::Stopped,
                history,
                elapsed: before + start.elapsed(),
                layout: RunLayout::Grid,
                fired,
            },
        )
    }

    /// One run over the whole GPU, one launch per generation; the host looks at the
    /// state every `reporting.every` generations (and at the checkpoints).
    fn steps_one<T: Controlled>(&self, e: usize, runs: &mut Runs, watch: &mut Watch) -> Result<()> {
        let job = runs.entries[e].job().clone();
        let limit = job.generations();
        let mut run = self.step_run::<T>(&job)?;
        let (stream, name) = (run.stream.clone(), run.name.clone());
        let s = Start::of(&runs.entries[e]);
        let before = s.elapsed;
        let mut history = s.history.map(<[f64]>::to_vec);
        let start = std::time::Instant::now();
        let from = if s.loaded() {
            upload_grid(&stream, &name, &mut run.bu, &s, true)?;
            s.generation
        } else {
            run.launch(true)?;
            0
        };
        let every = watch.reporting.every.max(1);
        let mut g = from;
        let mut seen = None;
        let mut stopped = false;
        let mut fired = None;
        let mut state;
        loop {
            state = run.state()?;
            g = state[STATE_GEN].max(g);
            if state[STATE_DONE] != 0 || g >= limit {
                break;
            }
            if g > from && job.stops().at(g) {
                let values = grid_values(&stream, &name, &run.bu, job.pop() as usize)?;
                // The history only for a stagnation stop (the one that reads it).
                let h = match job.stops().stagnation {
                    Some(_) => grid_history(&stream, &name, &run.bu, from, g)?
                        .map(|h| join_history(history.clone(), &h)),
                    None => None,
                };
                fired = stop_of(&job, g, &values, h.as_deref());
                if fired.is_some() {
                    break;
                }
            }
            if seen != Some(g) {
                seen = Some(g);
                let bf = grid_best(&stream, &name, &run.bu)?;
                if let Some(o) = watch.observer
                    && o(e, g, bf) == Flow::Stop
                {
                    stopped = true;
                    break;
                }
            }
            if flagged(watch) {
                runs.halted = true;
                stopped = true;
                break;
            }
            if g > from && watch.every > 0 && g.is_multiple_of(watch.every) && watch.save.is_some()
            {
                let h = grid_history(&stream, &name, &run.bu, from, g)?;
                let c = checkpoint_of(
                    &job,
                    g,
                    grid_state(&stream, &name, &run.bu, g, &job)?,
                    h.map(|h| join_history(history.clone(), &h)),
                    before + start.elapsed(),
                );
                runs.entries[e] = Entry::Started(c);
                if runs.save(watch) == Flow::Stop {
                    runs.halted = true;
                    stopped = true;
                    break;
                }
            }
            // Up to the next report or checkpoint: launches queue without a wait.
            let next = ((g / every).saturating_add(1).saturating_mul(every)).min(launch_end(
                &job,
                g,
                watch.every,
            ));
            for _ in g..next {
                run.launch(false)?;
            }
        }
        let g = state[STATE_GEN];
        if let Some(h) = grid_history(&stream, &name, &run.bu, from, g)? {
            history = Some(join_history(history.take(), &h));
        }
        self.finish_whole(
            e,
            runs,
            watch,
            Whole {
                job: &job,
                stream: &stream,
                name: &name,
                bu: &run.bu,
                state: &state,
                seen,
                stopped,
                history,
                elapsed: before + start.elapsed(),
                layout: RunLayout::Steps,
                fired,
            },
        )
    }

    /// The result and entry of a whole-GPU run that ended or was stopped.
    fn finish_whole<T: Controlled>(
        &self,
        e: usize,
        runs: &mut Runs,
        watch: &Watch,
        w: Whole<T>,
    ) -> Result<()> {
        let g = w.state[STATE_GEN];
        let bf = grid_best(w.stream, w.name, w.bu)?;
        if w.seen != Some(g)
            && let Some(obs) = watch.observer
        {
            // The last generation, as the CPU engine shows it; the run has ended.
            let _ = obs(e, g, bf);
        }
        if watch.keep || w.stopped {
            let c = checkpoint_of(
                w.job,
                g,
                grid_state(w.stream, w.name, w.bu, g, w.job)?,
                w.history,
                w.elapsed,
            );
            runs.results[e] = Some(result_of(&c, w.layout, 1));
            runs.entries[e] = Entry::Started(c);
        } else {
            let nothing = ReadBack {
                history: false,
                population: false,
            };
            let took = Took {
                elapsed: w.elapsed,
                layout: w.layout,
            };
            let (mut r, _) =
                w.bu.outcome(w.stream, w.job, w.name, w.state, took, nothing)?;
            r.history = w.history;
            runs.results[e] = Some(stopped_by(r, w.fired));
            runs.entries[e] = Entry::Pending(w.job.clone());
        }
        Ok(())
    }
}

/// What [`CudaEngine::finish_whole`] needs of a whole-GPU run.
struct Whole<'a, T: GpuReal> {
    job: &'a Job,
    stream: &'a Arc<CudaStream>,
    name: &'a str,
    bu: &'a GridBuffers<T>,
    state: &'a [u32],
    /// The generation last shown to the observer.
    seen: Option<u32>,
    stopped: bool,
    history: Option<Vec<f64>>,
    elapsed: Duration,
    layout: RunLayout,
    /// The convergence stop that ended it, if one did.
    fired: Option<Termination>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_end_at_multiples_of_the_checkpoint_interval() {
        assert_eq!(segment_end(0, 100, 0), 100);
        assert_eq!(segment_end(0, 100, 30), 30);
        assert_eq!(segment_end(30, 100, 30), 60);
        assert_eq!(segment_end(45, 100, 30), 60);
        assert_eq!(segment_end(90, 100, 30), 100);
        assert_eq!(segment_end(100, 100, 30), 100);
        assert_eq!(segment_end(u32::MAX - 5, u32::MAX - 1, 7), u32::MAX - 3);
        // The next multiple would overflow: the limit.
        assert_eq!(
            segment_end(u32::MAX - 2, u32::MAX - 1, 1 << 31),
            u32::MAX - 1
        );
    }
}
