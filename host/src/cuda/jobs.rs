//! The engine's runs of whole jobs: each in the layout its mode and objective ask for.

use super::batch::{Pending, compatible};
use super::engine::{CudaEngine, FinalPopulation, Mode};
use super::external::check_objective;
use crate::error::Result;
use crate::job::config::Job;
use crate::run::checkpoint::Entry;
use crate::run::result::RunResult;
use gpude_device::lanes::group_width;

/// An outcome's result and its final population (from its checkpoint's state).
fn with_population(o: crate::run::control::Outcome) -> (RunResult, FinalPopulation) {
    let (x, fit) = match o.checkpoint.state {
        crate::run::checkpoint::State::F32 { x, fit } => (
            x.iter().map(|&v| v as f64).collect(),
            fit.iter().map(|&v| v as f64).collect(),
        ),
        crate::run::checkpoint::State::F64 { x, fit } => (x, fit),
    };
    (o.result, FinalPopulation { x, fit })
}

/// The layout `auto` picks for one run alone (see [`CudaEngine::auto_mode`]).
fn auto_alone(job: &Job) -> Mode {
    let groups_per_block = 1024 / group_width(job.dim());
    if job.pop() > 8 * groups_per_block {
        Mode::Grid
    } else {
        Mode::Batch
    }
}

/// What a generation costs in the batch and grid layouts, for `auto`'s choice between
/// them. Measured on an H200 (132 multiprocessors; `gpude bench`, Griewank, D = 128,
/// docs/PERFORMANCE.md): a full block (1 024 threads, one per multiprocessor) takes
/// `batch_us` µs per element (individual × component) of its population and
/// generation; the grid layout takes `grid_us` µs per element divided among the
/// multiprocessors, plus `grid_fixed_us` per generation (its grid barriers and their
/// idle tails). The batch layout runs a wave of one block per multiprocessor at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    pub multiprocessors: u32,
    /// Batch layout: µs per element of one block's population, f32 and f64.
    pub batch_us: [f64; 2],
    /// Grid layout: µs per element on one multiprocessor, f32 and f64.
    pub grid_us: [f64; 2],
    /// Grid layout: fixed µs per generation.
    pub grid_fixed_us: f64,
}

impl Costs {
    /// The H200's: batch 132 × 2048 took 147.7 µs (f32) and 692 µs (f64) a generation,
    /// one population of 8 192 in the grid layout 7.89 µs and 17.64 µs.
    pub const H200: Costs = Costs {
        multiprocessors: 132,
        batch_us: [147.7 / 262_144.0, 692.0 / 262_144.0],
        grid_us: [
            (7.89 - 3.4) * 132.0 / 1_048_576.0,
            (17.64 - 3.4) * 132.0 / 1_048_576.0,
        ],
        grid_fixed_us: 3.4,
    };

    /// The same costs on a GPU of `multiprocessors` multiprocessors (the per-block and
    /// per-multiprocessor costs alike).
    pub fn scaled(self, multiprocessors: u32) -> Costs {
        Costs {
            multiprocessors: multiprocessors.max(1),
            ..self
        }
    }

    /// µs per generation of `runs` runs like `job` in the batch layout.
    pub fn batch(&self, job: &Job, runs: usize) -> f64 {
        let waves = runs.div_ceil(self.multiprocessors as usize).max(1);
        waves as f64 * self.batch_us[precision_index(job)] * elements(job)
    }

    /// µs per generation of `runs` runs like `job` in the grid layout, one after the
    /// other.
    pub fn grid(&self, job: &Job, runs: usize) -> f64 {
        let one = self.grid_fixed_us
            + self.grid_us[precision_index(job)] * elements(job) / self.multiprocessors as f64;
        runs as f64 * one
    }

    /// `auto`'s layout for each of `jobs` (see [`CudaEngine::auto_modes`]).
    pub fn modes(&self, jobs: &[&Job]) -> Vec<Mode> {
        let mut modes: Vec<Mode> = jobs.iter().map(|j| auto_alone(j)).collect();
        let mut seen = vec![false; jobs.len()];
        for k in 0..jobs.len() {
            if seen[k] || modes[k] != Mode::Grid {
                continue;
            }
            let group: Vec<usize> = (k..jobs.len())
                .filter(|&i| !seen[i] && modes[i] == Mode::Grid && compatible(jobs[k], jobs[i]))
                .collect();
            let batch = self.prefers_batch(jobs[k], group.len());
            for &i in &group {
                seen[i] = true;
                if batch {
                    modes[i] = Mode::Batch;
                }
            }
        }
        modes
    }

    /// Whether `runs` runs like `job` take less time in the batch layout.
    pub fn prefers_batch(&self, job: &Job, runs: usize) -> bool {
        self.batch(job, runs) <= self.grid(job, runs)
    }
}

fn elements(job: &Job) -> f64 {
    job.pop() as f64 * job.dim() as f64
}

fn precision_index(job: &Job) -> usize {
    match job.precision() {
        crate::job::precision::Precision::F32 => 0,
        crate::job::precision::Precision::F64 => 1,
    }
}

impl CudaEngine {
    /// Runs one job; `mode` picks the layout.
    pub fn run(&self, job: &Job, mode: Mode) -> Result<RunResult> {
        if job.objective().is_host_callback() {
            // Its own layout, whatever `mode` says (see `callback.rs`).
            return self
                .callback_run(job, &mut crate::run::control::Control::default())
                .map(|o| o.result);
        }
        job.check()?;
        if crate::cuda::adaptive::in_adaptive_kernels(job) {
            return Ok(self.run_adaptive(&[job], mode)?.remove(0).0);
        }
        if job.stops().any() {
            // Launches that end where the stops are looked at.
            let mut control = crate::run::control::Control::default();
            return self
                .run_controlled(job, mode, &mut control, Default::default())
                .map(|o| o.result);
        }
        let mode = match mode {
            Mode::Auto => self.auto_mode(job),
            m => m,
        };
        check_objective(job)?;
        match mode {
            Mode::Grid => match job.precision() {
                crate::job::precision::Precision::F32 => self.grid::<f32>(job, false).map(|r| r.0),
                crate::job::precision::Precision::F64 => self.grid::<f64>(job, false).map(|r| r.0),
            },
            Mode::Steps => match job.precision() {
                crate::job::precision::Precision::F32 => self.steps::<f32>(job, false).map(|r| r.0),
                crate::job::precision::Precision::F64 => self.steps::<f64>(job, false).map(|r| r.0),
            },
            _ => Ok(self.run_batch(std::slice::from_ref(job))?.remove(0)),
        }
    }

    /// Runs one job and reads its final population back (for parity checks).
    pub fn run_with_population(
        &self,
        job: &Job,
        mode: Mode,
    ) -> Result<(RunResult, FinalPopulation)> {
        if job.objective().is_host_callback() {
            let o = self.callback_run(job, &mut crate::run::control::Control::default())?;
            return Ok(with_population(o));
        }
        job.check()?;
        if crate::cuda::adaptive::in_adaptive_kernels(job) {
            return Ok(self.run_adaptive(&[job], mode)?.remove(0));
        }
        if job.stops().any() {
            let mut control = crate::run::control::Control::default();
            let o = self.run_controlled(job, mode, &mut control, Default::default())?;
            return Ok(with_population(o));
        }
        let mode = match mode {
            Mode::Auto => self.auto_mode(job),
            m => m,
        };
        check_objective(job)?;
        match (mode, job.precision()) {
            (Mode::Grid, crate::job::precision::Precision::F32) => self
                .grid::<f32>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Grid, crate::job::precision::Precision::F64) => self
                .grid::<f64>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Steps, crate::job::precision::Precision::F32) => self
                .steps::<f32>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Steps, crate::job::precision::Precision::F64) => self
                .steps::<f64>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (_, crate::job::precision::Precision::F32) => {
                let l = self.launch_batch::<f32>(&[job], self.streams[0].clone())?;
                let pop = l.population(0, job)?;
                Ok((l.finish(&[job])?.remove(0), pop))
            }
            (_, crate::job::precision::Precision::F64) => {
                let l = self.launch_batch::<f64>(&[job], self.streams[0].clone())?;
                let pop = l.population(0, job)?;
                Ok((l.finish(&[job])?.remove(0), pop))
            }
        }
    }

    /// The layout `auto` picks for one run alone: a population that one block cannot
    /// serve well (more individuals than a few warps' worth per thread group) spreads
    /// over the GPU.
    pub fn auto_mode(&self, job: &Job) -> Mode {
        auto_alone(job)
    }

    /// The layouts `auto` picks for a list of runs, one per job: the batch layout for
    /// runs that one block serves well; for the others, compatible runs (equal but for
    /// seed and stream) are taken together and go to the batch layout when their blocks
    /// fill the GPU better than the grid layout taking them one after the other does
    /// ([`Costs::prefers_batch`]).
    pub fn auto_modes(&self, jobs: &[&Job]) -> Vec<Mode> {
        Costs::H200.scaled(self.multiprocessors()).modes(jobs)
    }

    /// Runs many jobs: compatible ones (equal but for seed and stream) share a launch,
    /// one block per job; launches are spread over the streams. One result per job, in
    /// order.
    pub fn run_batch(&self, jobs: &[Job]) -> Result<Vec<RunResult>> {
        if jobs.iter().any(|j| {
            crate::cuda::adaptive::in_adaptive_kernels(j) || j.objective().is_host_callback()
        }) {
            // Host callbacks run one after the other (as on the CPU engine), adaptive
            // jobs go to their own kernels, the other jobs in their launches.
            Job::check_all(jobs)?;
            let (cb, rest): (Vec<usize>, Vec<usize>) =
                (0..jobs.len()).partition(|&k| jobs[k].objective().is_host_callback());
            let (adaptive, plain): (Vec<usize>, Vec<usize>) = rest
                .into_iter()
                .partition(|&k| crate::cuda::adaptive::in_adaptive_kernels(&jobs[k]));
            let mut results: Vec<Option<RunResult>> = vec![None; jobs.len()];
            if !adaptive.is_empty() {
                let refs: Vec<&Job> = adaptive.iter().map(|&k| &jobs[k]).collect();
                for (&k, (r, _)) in adaptive.iter().zip(self.run_adaptive(&refs, Mode::Batch)?) {
                    results[k] = Some(r);
                }
            }
            if !plain.is_empty() {
                let others: Vec<Job> = plain.iter().map(|&k| jobs[k].clone()).collect();
                for (&k, r) in plain.iter().zip(self.run_batch(&others)?) {
                    results[k] = Some(r);
                }
            }
            for k in cb {
                results[k] = Some(self.run(&jobs[k], Mode::Auto)?);
            }
            return Ok(results
                .into_iter()
                .map(|r| r.expect("every job ran"))
                .collect());
        }
        for job in jobs {
            check_objective(job)?;
        }
        Job::check_all(jobs)?;
        if jobs.iter().any(|j| j.stops().any()) {
            // Launches that end where the stops are looked at.
            let entries = jobs.iter().cloned().map(Entry::Pending).collect();
            let ran = self.run_entries(entries, Mode::Batch, &mut Default::default())?;
            return ran
                .into_iter()
                .map(|r| {
                    r.result.ok_or_else(|| crate::error::Error::Cuda {
                        context: "a batch with convergence stops".into(),
                        message: "a run left no result".into(),
                    })
                })
                .collect();
        }
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (k, job) in jobs.iter().enumerate() {
            match groups.iter_mut().find(|g| compatible(&jobs[g[0]], job)) {
                Some(g) => g.push(k),
                None => groups.push(vec![k]),
            }
        }
        let mut results: Vec<Option<RunResult>> = vec![None; jobs.len()];
        let mut pending = Vec::new();
        for (n, group) in groups.iter().enumerate() {
            let stream = self.streams[n % self.streams.len()].clone();
            let first = &jobs[group[0]];
            let members: Vec<&Job> = group.iter().map(|&k| &jobs[k]).collect();
            let launch = match first.precision() {
                crate::job::precision::Precision::F32 => {
                    Pending::F32(self.launch_batch::<f32>(&members, stream)?)
                }
                crate::job::precision::Precision::F64 => {
                    Pending::F64(self.launch_batch::<f64>(&members, stream)?)
                }
            };
            pending.push((group.clone(), launch));
        }
        for (group, launch) in pending {
            let members: Vec<&Job> = group.iter().map(|&k| &jobs[k]).collect();
            let rs = match launch {
                Pending::F32(l) => l.finish(&members)?,
                Pending::F64(l) => l.finish(&members)?,
            };
            for (k, r) in group.into_iter().zip(rs) {
                results[k] = Some(r);
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every job ran"))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::precision::Precision;
    use gpude_device::Function;

    fn job(np: u32, precision: Precision, stream: u32) -> Job {
        Job::builder(Function::Griewank, 128)
            .pop(np)
            .precision(precision)
            .stream(stream)
            .build()
            .unwrap()
    }

    fn modes(np: u32, precision: Precision, runs: u32) -> Vec<Mode> {
        let jobs: Vec<Job> = (0..runs).map(|k| job(np, precision, k)).collect();
        Costs::H200.modes(&jobs.iter().collect::<Vec<_>>())
    }

    #[test]
    fn auto_takes_the_bench_cases_to_their_fastest_layouts() {
        // Measured on an H200 (docs/PERFORMANCE.md): one population of 2 048 or 8 192
        // runs faster over the whole GPU, batches of 132 and 528 in blocks.
        for p in [Precision::F32, Precision::F64] {
            assert_eq!(modes(2048, p, 1), [Mode::Grid], "{p:?}");
            assert_eq!(modes(8192, p, 1), [Mode::Grid], "{p:?}");
            assert!(
                modes(2048, p, 132).iter().all(|&m| m == Mode::Batch),
                "{p:?}"
            );
            assert!(
                modes(2048, p, 528).iter().all(|&m| m == Mode::Batch),
                "{p:?}"
            );
            assert!(
                modes(256, p, 528).iter().all(|&m| m == Mode::Batch),
                "{p:?}"
            );
        }
    }

    #[test]
    fn the_batch_layout_takes_over_where_its_blocks_cost_less_than_the_grid_runs() {
        // f32, Np = 2 048, D = 128: a block's generation costs 147.7 µs, a grid run's
        // 3.4 + 5.65 · 10⁻⁴ · 262 144 / 132 ≈ 4.52 µs: 33 runs and more go to blocks.
        let c = Costs::H200;
        let j = job(2048, Precision::F32, 0);
        assert!((c.grid(&j, 1) - 4.52).abs() < 0.01, "{}", c.grid(&j, 1));
        assert!(!c.prefers_batch(&j, 32));
        assert!(c.prefers_batch(&j, 33));
        assert_eq!(modes(2048, Precision::F32, 32)[0], Mode::Grid);
        assert_eq!(modes(2048, Precision::F32, 33)[0], Mode::Batch);
        // A GPU with half the multiprocessors: each grid run costs more, the crossover
        // comes earlier.
        let half = c.scaled(66);
        assert!(half.prefers_batch(&j, 27) && !c.prefers_batch(&j, 27));
    }

    #[test]
    fn only_compatible_runs_are_counted_together() {
        // 40 runs of two kinds (20 each): neither kind alone fills the GPU enough.
        let mut jobs: Vec<Job> = (0..20).map(|k| job(2048, Precision::F32, k)).collect();
        jobs.extend((0..20).map(|k| job(2048, Precision::F64, k)));
        let m = Costs::H200.modes(&jobs.iter().collect::<Vec<_>>());
        assert!(m.iter().all(|&m| m == Mode::Grid));
        // Small populations go to blocks whatever their number.
        assert_eq!(modes(64, Precision::F32, 1), [Mode::Batch]);
    }
}
