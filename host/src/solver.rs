//! The solver: runs jobs on the backend chosen once, the CUDA engine or the CPU engine.

use crate::cpu;
use crate::cpu::islands::{self, Archipelago, ArchipelagoResult};
use crate::cpu::split;
use crate::cuda::{CudaEngine, MAX_STREAMS, Mode};
use crate::error::{Error, Result};
use crate::gpus::{Gpus, spread};
use crate::job::config::{Job, Precision};
use crate::run::archipelago::{ArchipelagoRan, IslandsWatch, run_to_end};
use crate::run::checkpoint::ArchipelagoEntry;
use crate::run::checkpoint::{self, Checkpoint, Entry};
use crate::run::control::{Control, Flow, Observer, Outcome, Ran, Reporting, Watch};
use crate::run::result::{RunResult, Termination};

/// Where jobs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The GPU when a driver and a GPU are there, else the CPU (with a notice).
    #[default]
    Auto,
    Cpu,
    Cuda,
}

impl Backend {
    pub fn parse(s: &str) -> Result<Backend> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" | "gpu" => Ok(Backend::Cuda),
            _ => Err(Error::UnknownName {
                kind: "backend",
                name: crate::error::clip(s),
                known: "auto, cpu, cuda".into(),
            }),
        }
    }
}

/// Runs jobs on the backend chosen once, at construction.
pub struct Solver {
    cuda: Option<CudaEngine>,
    /// The other GPUs' engines, when the solver uses several ([`SolverOptions::gpus`]).
    more: Vec<CudaEngine>,
    mode: Mode,
    /// How the GPU's persistent kernels report to the host under control.
    reporting: Reporting,
    /// Why `auto` fell back to the CPU, if it did.
    pub fallback_reason: Option<String>,
}

/// Settings of a [`Solver`].
#[derive(Clone, Debug)]
pub struct SolverOptions {
    pub backend: Backend,
    /// The GPU used when [`SolverOptions::gpus`] is [`Gpus::Device`].
    pub device: usize,
    pub streams: usize,
    pub mode: Mode,
    /// The GPUs used: lists of runs and of archipelagos are shared out among them
    /// (see [`crate::gpus::spread`]), each run on one GPU with the bits one GPU gives it.
    pub gpus: Gpus,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            backend: Backend::Auto,
            device: 0,
            streams: 4,
            mode: Mode::Auto,
            gpus: Gpus::Device,
        }
    }
}

impl SolverOptions {
    /// Refuses settings that cannot apply: no streams (or absurdly many), or a GPU layout
    /// with the CPU backend. (With `Auto`, a fallback to the CPU ignores the layout and
    /// says why in `fallback_reason`.)
    pub fn check(&self) -> Result<()> {
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return Err(Error::invalid(
                "streams",
                self.streams,
                format!("1 ..= {MAX_STREAMS}"),
            ));
        }
        if self.backend == Backend::Cpu && self.gpus != Gpus::Device {
            return Err(Error::invalid(
                "gpus",
                format!("{:?}", self.gpus),
                "left out with the cpu backend",
            ));
        }
        if self.backend == Backend::Cpu && self.mode != Mode::Auto {
            return Err(Error::invalid(
                "mode",
                self.mode.name(),
                "auto with the cpu backend (batch, grid and steps are GPU layouts)",
            ));
        }
        Ok(())
    }
}

impl Solver {
    /// Opens the backend with the kernels (name, PTX module). With `Cuda`, a missing
    /// driver or GPU is an error; with `Auto`, it selects the CPU and records why in
    /// `fallback_reason`.
    pub fn new(
        kernels: &'static [(&'static str, &'static str)],
        opts: &SolverOptions,
    ) -> Result<Solver> {
        opts.check()?;
        let mut s = Solver {
            cuda: None,
            more: Vec::new(),
            mode: opts.mode,
            reporting: Reporting::default(),
            fallback_reason: None,
        };
        let open = || -> Result<Vec<CudaEngine>> {
            let list = match &opts.gpus {
                // The engine names a device that is not there.
                Gpus::Device => vec![opts.device],
                g => g.resolve(opts.device, crate::cuda::gpu_count()?)?,
            };
            list.into_iter()
                .map(|d| CudaEngine::new(kernels, d, opts.streams))
                .collect()
        };
        let engines = match opts.backend {
            Backend::Cpu => Vec::new(),
            Backend::Cuda => open()?,
            Backend::Auto => open().unwrap_or_else(|e| {
                s.fallback_reason = Some(e.to_string());
                Vec::new()
            }),
        };
        let mut engines = engines.into_iter();
        s.cuda = engines.next();
        s.more = engines.collect();
        Ok(s)
    }

    /// The GPUs this solver uses (0 on the CPU engine).
    pub fn gpus(&self) -> usize {
        self.engines().count()
    }

    /// The GPUs' engines, in the order [`SolverOptions::gpus`] gives.
    pub fn engines(&self) -> impl Iterator<Item = &CudaEngine> {
        self.cuda.iter().chain(&self.more)
    }

    /// Runs `parts[i]` (indices into a list of `n`) on GPU `i`, a host thread each, and
    /// puts the results back in the list's order; the first error, if any, is returned.
    fn on_gpus<R: Send>(
        &self,
        n: usize,
        parts: &[Vec<usize>],
        run: impl Fn(&CudaEngine, &[usize]) -> Result<Vec<R>> + Sync,
    ) -> Result<Vec<R>> {
        let run = &run;
        let outs: Vec<(&[usize], Result<Vec<R>>)> = std::thread::scope(|s| {
            let threads: Vec<_> = self
                .engines()
                .zip(parts)
                .filter(|(_, part)| !part.is_empty())
                .map(|(e, part)| {
                    let t = s.spawn(move || {
                        e.context()
                            .bind_to_thread()
                            .map_err(crate::cuda::cuda_err("binding a GPU to its thread"))?;
                        run(e, part)
                    });
                    (part.as_slice(), t)
                })
                .collect();
            threads
                .into_iter()
                .map(|(part, t)| match t.join() {
                    Ok(r) => (part, r),
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        });
        let mut slots: Vec<Option<R>> = (0..n).map(|_| None).collect();
        for (part, out) in outs {
            let out = out?;
            if out.len() != part.len() {
                return Err(Error::Cuda {
                    context: "a list spread over GPUs".into(),
                    message: format!(
                        "a GPU returned {} results for {} runs",
                        out.len(),
                        part.len()
                    ),
                });
            }
            for (&k, r) in part.iter().zip(out) {
                slots[k] = Some(r);
            }
        }
        slots
            .into_iter()
            .map(|r| {
                r.ok_or_else(|| Error::Cuda {
                    context: "a list spread over GPUs".into(),
                    message: "a run was given to no GPU".into(),
                })
            })
            .collect()
    }

    /// How a list of `n` runs is shared out among this solver's GPUs (see [`spread`]).
    fn spread_jobs<'j>(&self, n: usize, job: impl Fn(usize) -> &'j Job) -> Vec<Vec<usize>> {
        spread(
            n,
            self.gpus(),
            |a, b| crate::cuda::compatible(job(a), job(b)),
            |k| {
                let j = job(k);
                j.pop() as f64 * j.dim() as f64 * j.generations() as f64
            },
        )
    }

    /// `cpu` or `cuda`.
    pub fn backend_name(&self) -> &'static str {
        if self.cuda.is_some() { "cuda" } else { "cpu" }
    }

    pub fn cuda(&self) -> Option<&CudaEngine> {
        self.cuda.as_ref()
    }

    /// How the GPU reports to the host under control (see [`Reporting`]);
    /// the CPU engine shows every generation whatever this says.
    pub fn set_reporting(&mut self, reporting: Reporting) -> Result<()> {
        reporting.check()?;
        self.reporting = reporting;
        Ok(())
    }

    pub fn reporting(&self) -> Reporting {
        self.reporting
    }

    /// Runs one job. The observer sees the generations and may stop the run there
    /// ([`Flow::Stop`]): every generation on the CPU engine; on the GPU the
    /// generations it reports (every [`Reporting::every`], and the last).
    /// Without an observer the GPU runs without a control block.
    pub fn run(&self, job: &Job, observer: Option<Observer>) -> Result<RunResult> {
        match (&self.cuda, observer) {
            (Some(e), None) => e.run(job, self.mode),
            (Some(e), Some(o)) => {
                let one = move |_: usize, g: u32, best: f64| o(g, best);
                let mut watch = Watch {
                    observer: Some(&one),
                    reporting: self.reporting,
                    ..Default::default()
                };
                let ran =
                    e.run_entries(vec![Entry::Pending(job.clone())], self.mode, &mut watch)?;
                ran.into_iter()
                    .next()
                    .and_then(|r| r.result)
                    .ok_or_else(|| Error::Cuda {
                        context: "a run with an observer".into(),
                        message: "the engine returned no result".into(),
                    })
            }
            (None, _) => match job.precision() {
                Precision::F32 => cpu::run::<f32>(job, observer),
                Precision::F64 => cpu::run::<f64>(job, observer),
            },
        }
    }

    /// Runs one job under `control` (observer, stop flag, checkpoints) on either engine;
    /// the outcome holds the result and the final state, from which [`Solver::resume`]
    /// (on either engine) goes on with the same bits.
    pub fn run_controlled(&self, job: &Job, control: &mut Control) -> Result<Outcome> {
        match &self.cuda {
            Some(e) => e.run_controlled(job, self.mode, control, self.reporting),
            None => cpu::try_run_controlled(job, control),
        }
    }

    /// Goes on from a checkpoint of either engine under `control`.
    pub fn resume(&self, from: Checkpoint, control: &mut Control) -> Result<Outcome> {
        match &self.cuda {
            Some(e) => e.resume(from, self.mode, control, self.reporting),
            None => cpu::resume(from, control),
        }
    }

    /// Runs (or goes on with) a list of runs under `watch`. On the GPU compatible runs
    /// share a launch (see [`CudaEngine::run_entries`]); the CPU engine runs them one
    /// after the other. A stop ends the run it reaches; the runs after it come back
    /// as they were, without a result.
    ///
    /// With several GPUs the runs are shared out among them unless `watch` saves the
    /// list during the run (`every` and `save`), which needs every run's state at once:
    /// such a list runs on the first GPU.
    pub fn run_entries(&self, entries: Vec<Entry>, watch: &mut Watch) -> Result<Vec<Ran>> {
        match &self.cuda {
            Some(_)
                if self.spreads_jobs(entries.iter().map(Entry::job))
                    && !(watch.every > 0 && watch.save.is_some()) =>
            {
                crate::run::control::check_watch(&entries, watch)?;
                let parts = self.spread_jobs(entries.len(), |k| entries[k].job());
                let (observer, stop, every, reporting, keep) = (
                    watch.observer,
                    watch.stop,
                    watch.every,
                    watch.reporting,
                    watch.keep,
                );
                self.on_gpus(entries.len(), &parts, |e, part| {
                    let mine = |k: usize, g: u32, best: f64| match observer {
                        Some(o) => o(part[k], g, best),
                        None => Flow::Continue,
                    };
                    let mut w = Watch {
                        observer: Some(&mine),
                        stop,
                        every,
                        save: None,
                        reporting,
                        keep,
                    };
                    let list = part.iter().map(|&k| entries[k].clone()).collect();
                    e.run_entries(list, self.mode, &mut w)
                })
            }
            Some(e) => e.run_entries(entries, self.mode, watch),
            None => cpu_entries(entries, watch),
        }
    }

    /// Does a list of `n` runs go to several GPUs?
    fn spreads(&self, n: usize) -> bool {
        !self.more.is_empty() && n > 1
    }

    /// Does a list of these jobs go to several GPUs? Not with a host callback, which
    /// the engines call one run after the other (the GPUs would call it at once).
    fn spreads_jobs<'j>(&self, mut jobs: impl Iterator<Item = &'j Job> + Clone) -> bool {
        self.spreads(jobs.clone().count()) && !jobs.any(|j| j.objective().is_host_callback())
    }

    /// Runs an archipelago (islands with migration, DE or PSO), on either engine.
    pub fn run_archipelago(
        &self,
        a: &Archipelago,
        observer: Option<Observer>,
    ) -> Result<ArchipelagoResult> {
        let mut r = self.run_archipelagos(std::slice::from_ref(a), observer)?;
        r.pop()
            .ok_or_else(|| Error::invalid("archipelagos", 0, "one"))
    }

    /// Why the GPU engine cannot run `a`, if it cannot (see [`Solver::run_archipelagos`]).
    pub fn gpu_archipelago(a: &Archipelago) -> Result<()> {
        match crate::cuda::islands_unsupported(a) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Runs archipelagos, one result each in order: on the GPU engine, compatible ones
    /// (equal but for seed and stream) share launches; the CPU engine runs them one
    /// after the other. The observer watches when the list holds one archipelago.
    pub fn run_archipelagos(
        &self,
        list: &[Archipelago],
        observer: Option<Observer>,
    ) -> Result<Vec<ArchipelagoResult>> {
        run_to_end(list, observer, |entries, watch| {
            self.run_archipelago_entries(entries, watch)
        })
    }

    /// Runs or goes on with archipelagos (from a checkpoint of either engine: the same
    /// bits as a run that never stopped) under `watch`, on the engine of this solver;
    /// each comes back with its result and its state at the end.
    ///
    /// With several GPUs, the archipelagos of a list are shared out among them (each
    /// whole on one GPU) unless `watch` saves the list during the run or observes it;
    /// a list of one archipelago (fresh, without an observer or saves during the run; a
    /// stop flag ends it at its next migration event with its state) has its islands
    /// shared out among the GPUs when it has no target and is not adaptive (see
    /// `cuda::islands::across`), with the bits one GPU gives it.
    pub fn run_archipelago_entries(
        &self,
        entries: Vec<ArchipelagoEntry>,
        watch: &mut IslandsWatch,
    ) -> Result<Vec<ArchipelagoRan>> {
        match &self.cuda {
            Some(_)
                if entries.len() == 1
                    && matches!(entries[0], ArchipelagoEntry::Pending(_))
                    && watch.observer.is_none()
                    && !(watch.every > 0 && watch.save.is_some())
                    && crate::cuda::archipelago_splits(entries[0].archipelago(), self.gpus()) =>
            {
                // One archipelago, its islands shared out among the GPUs.
                let engines: Vec<&CudaEngine> = self.engines().collect();
                let entry = entries.into_iter().next().expect("one entry");
                crate::cuda::run_across_entries(&engines, entry, watch)
            }
            Some(_)
                if self.spreads(entries.len())
                    && watch.observer.is_none()
                    && !(watch.every > 0 && watch.save.is_some()) =>
            {
                let n = entries.len();
                let arch = |k: usize| entries[k].archipelago();
                let parts = spread(
                    n,
                    self.gpus(),
                    |a, b| {
                        arch(a).shares_launches_with(arch(b))
                            && std::mem::discriminant(&entries[a])
                                == std::mem::discriminant(&entries[b])
                    },
                    |k| {
                        let (a, j) = (arch(k), arch(k).template());
                        a.islands() as f64
                            * j.pop() as f64
                            * j.dim() as f64
                            * j.generations() as f64
                    },
                );
                let (stop, every, keep) = (watch.stop, watch.every, watch.keep);
                self.on_gpus(n, &parts, |e, part| {
                    let mut w = IslandsWatch {
                        observer: None,
                        stop,
                        every,
                        save: None,
                        keep,
                    };
                    let list = part.iter().map(|&k| entries[k].clone()).collect();
                    e.run_archipelago_entries(list, &mut w)
                })
            }
            Some(cuda) => cuda.run_archipelago_entries(entries, watch),
            None => islands::run_entries(entries, watch),
        }
    }

    /// Runs one job with its population split by dimension into `slices` slices (see
    /// [`split`]). The CPU engine only for now: the CUDA engine turns it down.
    pub fn run_split(
        &self,
        job: &Job,
        slices: u32,
        observer: Option<Observer>,
    ) -> Result<RunResult> {
        if self.cuda.is_some() {
            return Err(Error::invalid("backend", "cuda", split::CPU_ONLY));
        }
        split::run_job(job, slices, observer)
    }

    /// Runs many jobs, one result each, in order: with several GPUs, shared out among
    /// them (see [`spread`]), every result the one GPU gives.
    pub fn run_batch(&self, jobs: &[Job]) -> Result<Vec<RunResult>> {
        match &self.cuda {
            Some(_) if self.spreads_jobs(jobs.iter()) => {
                // Every job is checked before any GPU starts.
                Job::check_all(jobs)?;
                let parts = self.spread_jobs(jobs.len(), |k| &jobs[k]);
                self.on_gpus(jobs.len(), &parts, |e, part| {
                    let mine: Vec<Job> = part.iter().map(|&k| jobs[k].clone()).collect();
                    self.batch_on(e, &mine)
                })
            }
            Some(e) => self.batch_on(e, jobs),
            None => cpu::run_batch(jobs),
        }
    }

    /// [`Solver::run_batch`] on one GPU.
    fn batch_on(&self, e: &CudaEngine, jobs: &[Job]) -> Result<Vec<RunResult>> {
        if matches!(self.mode, Mode::Grid | Mode::Steps) {
            jobs.iter().map(|j| e.run(j, self.mode)).collect()
        } else {
            e.run_batch(jobs)
        }
    }
}

/// [`Solver::run_entries`] on the CPU engine: one run after the other under a
/// [`Control`] each.
fn cpu_entries(entries: Vec<Entry>, watch: &mut Watch) -> Result<Vec<Ran>> {
    use checkpoint::Part;
    crate::run::control::check_watch(&entries, watch)?;
    let mut ran: Vec<Ran> = entries
        .into_iter()
        .map(|entry| Ran {
            result: None,
            entry,
        })
        .collect();
    for k in 0..ran.len() {
        if k > 0
            && watch
                .stop
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
        {
            break;
        }
        let observer = watch.observer;
        let one = move |g: u32, best: f64| match observer {
            Some(o) => o(k, g, best),
            None => Flow::Continue,
        };
        let (before, after) = ran.split_at(k);
        let rest = &after[1..];
        let save = &mut watch.save;
        let mut saver = |c: &Checkpoint| {
            let parts: Vec<Part> = before
                .iter()
                .map(|r| r.entry.part())
                .chain([Part::Started(c)])
                .chain(rest.iter().map(|r| r.entry.part()))
                .collect();
            match save.as_mut() {
                Some(s) => s(&parts),
                None => Flow::Continue,
            }
        };
        let mut control = Control {
            observer: Some(&one),
            stop: watch.stop,
            every: watch.every,
            save: Some(&mut saver),
        };
        let outcome = match &after[0].entry {
            Entry::Pending(job) => cpu::try_run_controlled(job, &mut control)?,
            Entry::Started(c) => cpu::resume(c.clone(), &mut control)?,
        };
        let stopped = outcome.result.termination == Termination::Stopped;
        ran[k] = Ran {
            result: Some(outcome.result),
            entry: if watch.keep || stopped {
                Entry::Started(outcome.checkpoint)
            } else {
                Entry::Pending(outcome.checkpoint.job)
            },
        };
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::checkpoint::Part;
    use gpude_device::Function;
    use std::sync::Mutex;

    fn jobs() -> Vec<Job> {
        (0..2)
            .map(|k| {
                Job::builder(Function::Sphere, 4)
                    .pop(8)
                    .generations(30)
                    .seed(3)
                    .stream(k)
                    .build()
                    .unwrap()
            })
            .collect()
    }

    fn cpu_solver() -> Solver {
        Solver::new(
            &[],
            &SolverOptions {
                backend: Backend::Cpu,
                ..SolverOptions::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn run_entries_on_the_cpu_saves_every_run_and_matches_single_runs() {
        let seen = Mutex::new(Vec::new());
        let observe = |run: usize, g: u32, _: f64| {
            seen.lock().unwrap().push((run, g));
            Flow::Continue
        };
        let saves = Mutex::new(Vec::new());
        let mut save = |parts: &[Part]| {
            let gens: Vec<Option<u32>> = parts
                .iter()
                .map(|p| match p {
                    Part::Started(c) => Some(c.generation),
                    Part::Pending(_) => None,
                })
                .collect();
            saves.lock().unwrap().push(gens);
            Flow::Continue
        };
        let mut watch = Watch {
            observer: Some(&observe),
            every: 10,
            save: Some(&mut save),
            keep: true,
            ..Default::default()
        };
        let entries = jobs().into_iter().map(Entry::Pending).collect();
        let ran = cpu_solver().run_entries(entries, &mut watch).unwrap();
        for (r, job) in ran.iter().zip(jobs()) {
            let alone = cpu::run_controlled(&job, &mut Control::default());
            let got = r.result.as_ref().unwrap();
            assert_eq!(got.best_f.to_bits(), alone.result.best_f.to_bits());
            assert_eq!(got.best_x, alone.result.best_x);
            match &r.entry {
                Entry::Started(c) => {
                    let a = &alone.checkpoint;
                    assert_eq!(
                        (c.generation, &c.state, &c.history),
                        (a.generation, &a.state, &a.history)
                    );
                }
                Entry::Pending(_) => panic!("keep asked for the state"),
            }
        }
        let saves = saves.into_inner().unwrap();
        assert_eq!(
            saves,
            [
                vec![Some(10), None],
                vec![Some(20), None],
                vec![Some(30), Some(10)],
                vec![Some(30), Some(20)],
            ]
        );
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 62, "31 generations of each run");
        assert!(seen[..31].iter().all(|s| s.0 == 0) && seen[31..].iter().all(|s| s.0 == 1));
    }

    #[test]
    fn an_observer_stop_ends_its_run_only() {
        let observe = |run: usize, g: u32, _: f64| {
            if run == 0 && g >= 5 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        };
        let mut watch = Watch {
            observer: Some(&observe),
            ..Default::default()
        };
        let entries = jobs().into_iter().map(Entry::Pending).collect();
        let ran = cpu_solver().run_entries(entries, &mut watch).unwrap();
        let r0 = ran[0].result.as_ref().unwrap();
        let r1 = ran[1].result.as_ref().unwrap();
        assert_eq!((r0.generations, r0.termination), (5, Termination::Stopped));
        assert_eq!(
            (r1.generations, r1.termination),
            (30, Termination::MaxGenerations)
        );
        // A stopped run keeps its state even without `keep`; one that ended, its job.
        assert!(matches!(&ran[0].entry, Entry::Started(c) if c.generation == 5));
        assert!(matches!(&ran[1].entry, Entry::Pending(_)));
    }
}
