//! Watching, stopping and saving runs on the GPU: the CUDA engine's side of
//! [`crate::run::control::Control`].
//!
//! The batch and grid kernels run every generation in one launch, so the host cannot
//! look between generations. They take a *control block* instead
//! ([`gpude_device::control`]): pinned host memory mapped into the device's address
//! space ([`MappedBlock`]). Every `k` generations ([`Reporting::every`]) one thread per
//! population writes the generation and the best value there (two 64-bit stores, no
//! fence) and reads the host's command word; [`control::STOP`] ends the run at that
//! generation boundary, with the population of a whole generation in the buffers. With
//! [`Reporting::exact`] the kernel also waits at each report until the host has shown
//! it to the observer, so that an observer's [`Flow::Stop`] ends the run at exactly the
//! reported generation. The step layout needs none of this: the host looks between
//! launches, every `k` of them.
//!
//! What it costs (per population, per generation): without a control block, one
//! uniform branch on a null pointer (the default path of [`crate::CudaEngine::run`]);
//! with one, a remainder and a branch by one thread, a barrier that also reduces the
//! stop (`bar.red.or` in place of `bar.sync`), and every `k` generations two 8-byte
//! stores and one 8-byte load over the bus by that thread (the grid layout adds one grid
//! barrier per report in exact mode). In exact mode each report also waits for a round
//! trip to the host. The kernels' code grows by these few paths, which changes the
//! registers ptxas gives them (see docs/PERFORMANCE.md for the measured effect).
//!
//! Because every random number is keyed by (seed, stream, individual, generation), the
//! population and its values after generation `g` are the whole state of a run: a
//! stopped run is downloaded into a [`Checkpoint`](crate::run::checkpoint::Checkpoint) in the CPU engine's format, and
//! either engine goes on from it with the same bits.

use crate::error::{Error, Result};
use crate::job::config::Precision;
use crate::run::control::{Flow, Reporting, RunsObserver};
use cudarc::driver::{CudaContext, PinnedHostSlice};
use gpude_device::control::{self, COMMAND, PROGRESS_HI, PROGRESS_LO, SLOT_WORDS, STOP};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Words shared with a running kernel.
pub trait Words: Sync {
    fn load(&self, i: usize) -> u64;
    fn store(&self, i: usize, v: u64);
}

impl Words for [AtomicU64] {
    fn load(&self, i: usize) -> u64 {
        self[i].load(Ordering::Acquire)
    }
    fn store(&self, i: usize, v: u64) {
        self[i].store(v, Ordering::Release)
    }
}

/// A control block in pinned host memory mapped into the device's address space.
pub struct MappedBlock {
    /// Owns the memory (freed on drop, after the work recorded on it).
    _memory: PinnedHostSlice<u64>,
    host: *const AtomicU64,
    len: usize,
    device: u64,
}

// SAFETY: the block is only reached through atomic loads and stores of its words
// (`Words`), from any thread; the pointer stays valid while `_memory` lives.
unsafe impl Send for MappedBlock {}
// SAFETY: as above.
unsafe impl Sync for MappedBlock {}

impl MappedBlock {
    /// A zeroed block of one slot per population.
    pub fn new(ctx: &Arc<CudaContext>, populations: usize) -> Result<MappedBlock> {
        let len = populations.max(1) * SLOT_WORDS;
        let err = |what: &'static str| {
            move |source| Error::Driver {
                context: format!("control block: {what}"),
                source,
            }
        };
        // SAFETY: the memory is written (zeroed) below before anything reads it.
        let mut memory = unsafe {
            ctx.alloc_pinned_with_flags::<u64>(len, cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP)
        }
        .map_err(err("allocating mapped host memory"))?;
        let ptr = memory.as_mut_ptr().map_err(err("reaching it"))?;
        // SAFETY: `ptr` addresses `len` u64 just allocated, aligned for u64, which
        // nothing else uses yet.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        let mut device = 0u64;
        ctx.bind_to_thread().map_err(err("binding the context"))?;
        // SAFETY: `ptr` was allocated with CU_MEMHOSTALLOC_DEVICEMAP in this context, and
        // `device` receives one device pointer.
        unsafe {
            cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut device, ptr.cast(), 0).result()
        }
        .map_err(err("mapping it into the device"))?;
        Ok(MappedBlock {
            _memory: memory,
            host: ptr as *const AtomicU64,
            len,
            device,
        })
    }

    /// The device address of the block (a kernel's `ctl` argument).
    pub fn device_ptr(&self) -> u64 {
        self.device
    }

    /// Populations it has slots for.
    pub fn slots(&self) -> usize {
        self.len / SLOT_WORDS
    }

    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `host` addresses `len` u64 of pinned memory that lives as long as
        // `self.memory`; AtomicU64 has the layout of u64, and every access is atomic.
        unsafe { std::slice::from_raw_parts(self.host, self.len) }
    }

    /// Zeroes every word (before a launch).
    pub fn clear(&self) {
        for w in self.words() {
            w.store(0, Ordering::Release);
        }
    }
}

impl Words for MappedBlock {
    fn load(&self, i: usize) -> u64 {
        self.words().load(i)
    }
    fn store(&self, i: usize, v: u64) {
        self.words().store(i, v)
    }
}

/// A best value from its bits in the run's precision.
pub fn value_of(bits: u64, precision: Precision) -> f64 {
    match precision {
        Precision::F32 => f32::from_bits(bits as u32) as f64,
        Precision::F64 => f64::from_bits(bits),
    }
}

/// The host's side of a control block during one launch: shows new progress to the
/// observer, releases kernels waiting at a report (exact mode) and sends stops.
pub struct Monitor {
    precision: Precision,
    exact: bool,
    /// Index in the caller's list of each slot's run.
    runs: Vec<usize>,
    /// The last generation of each slot given to the observer.
    seen: Vec<Option<u32>>,
    /// The command last written to each slot.
    sent: Vec<u64>,
}

impl Monitor {
    /// A monitor of `runs.len()` slots, slot `k` for run `runs[k]`; `seen` holds the
    /// generation each run was last shown at (so that a launch that starts where the
    /// last one ended does not show it twice).
    pub fn new(
        precision: Precision,
        reporting: Reporting,
        runs: Vec<usize>,
        seen: Vec<Option<u32>>,
    ) -> Monitor {
        let n = runs.len();
        Monitor {
            precision,
            exact: reporting.exact,
            runs,
            seen,
            sent: vec![0; n],
        }
    }

    /// Takes the commands the block holds as sent (a later launch of the same block:
    /// a stopped slot stays stopped).
    pub fn adopt<W: Words + ?Sized>(&mut self, words: &W) {
        for (k, sent) in self.sent.iter_mut().enumerate() {
            *sent = words.load(k * SLOT_WORDS + COMMAND);
        }
    }

    /// Has slot `k` been told to stop?
    pub fn stopped(&self, k: usize) -> bool {
        self.sent[k] == STOP
    }

    /// Was any slot told to stop?
    #[cfg(test)]
    pub fn any_stopped(&self) -> bool {
        self.sent.contains(&STOP)
    }

    /// The generation each slot was last shown at.
    pub fn seen(&self) -> &[Option<u32>] {
        &self.seen
    }

    /// Sends the stop to every slot.
    pub fn stop_all<W: Words + ?Sized>(&mut self, words: &W) {
        for k in 0..self.sent.len() {
            self.send(words, k, STOP);
        }
    }

    fn send<W: Words + ?Sized>(&mut self, words: &W, k: usize, command: u64) {
        if self.sent[k] != STOP && self.sent[k] != command {
            words.store(k * SLOT_WORDS + COMMAND, command);
            self.sent[k] = command;
        }
    }

    /// One look at the block: each slot's progress, then the stop flag. A generation
    /// not shown yet goes to the observer; its [`Flow::Stop`] stops that slot. The flag
    /// is read after the observer (which may set it), so that a kernel waiting at a
    /// report (exact mode) stops there; else a reported generation is then released.
    pub fn poll<W: Words + ?Sized>(
        &mut self,
        words: &W,
        observer: Option<RunsObserver>,
        stop: Option<&AtomicBool>,
    ) {
        let mut reported = vec![None; self.runs.len()];
        for (k, slot) in reported.iter_mut().enumerate() {
            let base = k * SLOT_WORDS;
            let lo = words.load(base + PROGRESS_LO);
            let hi = words.load(base + PROGRESS_HI);
            let Some((g, bits)) = control::read_progress(lo, hi) else {
                continue;
            };
            *slot = Some(g);
            if self.seen[k].is_none_or(|s| s < g) {
                self.seen[k] = Some(g);
                if let Some(o) = observer
                    && !self.stopped(k)
                    && o(self.runs[k], g, value_of(bits, self.precision)) == Flow::Stop
                {
                    self.send(words, k, STOP);
                }
            }
        }
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            self.stop_all(words);
        }
        if self.exact {
            for (k, g) in reported.into_iter().enumerate() {
                if let Some(g) = g
                    && self.seen[k] == Some(g)
                    && !self.stopped(k)
                {
                    self.send(words, k, control::release(g));
                }
            }
        }
    }
}

/// How long the host waits between two looks at a running launch: at once in exact
/// mode (the kernel is waiting), else a short sleep.
pub fn pause(reporting: Reporting) {
    if reporting.exact {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpude_device::control::progress_words;
    use std::sync::Mutex;

    fn block(slots: usize) -> Vec<AtomicU64> {
        (0..slots * SLOT_WORDS).map(|_| AtomicU64::new(0)).collect()
    }

    /// What a kernel does at a report of generation `g` with best `v` (f64).
    fn report(w: &[AtomicU64], slot: usize, g: u32, v: f64) {
        let b = v.to_bits();
        let p = progress_words(g, [b as u32, (b >> 32) as u32]);
        w.store(slot * SLOT_WORDS + PROGRESS_LO, p[0]);
        w.store(slot * SLOT_WORDS + PROGRESS_HI, p[1]);
    }

    #[test]
    fn each_reported_generation_is_shown_once_and_a_stop_goes_to_its_run() {
        let w = block(2);
        let calls = Mutex::new(Vec::new());
        let observer = |run: usize, g: u32, best: f64| {
            calls.lock().unwrap().push((run, g, best));
            if run == 1 && g >= 64 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        };
        let mut m = Monitor::new(
            Precision::F64,
            Reporting::default(),
            vec![3, 1],
            vec![None, None],
        );
        m.poll(&w[..], Some(&observer), None);
        assert!(calls.lock().unwrap().is_empty(), "nothing reported yet");
        report(&w, 0, 32, 2.5);
        report(&w, 1, 32, 7.0);
        m.poll(&w[..], Some(&observer), None);
        m.poll(&w[..], Some(&observer), None);
        report(&w, 1, 64, 6.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(
            *calls.lock().unwrap(),
            [(3, 32, 2.5), (1, 32, 7.0), (1, 64, 6.0)]
        );
        assert_eq!(w.load(COMMAND), 0, "run 3 goes on");
        assert_eq!(w.load(SLOT_WORDS + COMMAND), STOP, "run 1 is stopped");
        assert!(m.stopped(1) && !m.stopped(0));
        // A stopped run's later reports are not shown.
        report(&w, 1, 96, 5.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(calls.lock().unwrap().len(), 3);
    }

    #[test]
    fn half_written_reports_wait_for_their_other_half() {
        let w = block(1);
        let calls = Mutex::new(Vec::new());
        let observer = |_: usize, g: u32, best: f64| {
            calls.lock().unwrap().push((g, best));
            Flow::Continue
        };
        let mut m = Monitor::new(Precision::F64, Reporting::default(), vec![0], vec![None]);
        report(&w, 0, 32, 1.0);
        let b = 0.5f64.to_bits();
        let next = progress_words(64, [b as u32, (b >> 32) as u32]);
        w.store(PROGRESS_LO, next[0]);
        m.poll(&w[..], Some(&observer), None);
        assert!(
            calls.lock().unwrap().is_empty(),
            "generation 64's low half only"
        );
        w.store(PROGRESS_HI, next[1]);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*calls.lock().unwrap(), [(64, 0.5)]);
    }

    #[test]
    fn f32_progress_reads_the_low_half() {
        let w = block(1);
        let got = Mutex::new(None);
        let observer = |_: usize, g: u32, best: f64| {
            *got.lock().unwrap() = Some((g, best));
            Flow::Continue
        };
        let p = progress_words(8, [1.25f32.to_bits(), 0]);
        w.store(PROGRESS_LO, p[0]);
        w.store(PROGRESS_HI, p[1]);
        let mut m = Monitor::new(Precision::F32, Reporting::default(), vec![0], vec![None]);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*got.lock().unwrap(), Some((8, 1.25)));
    }

    #[test]
    fn the_stop_flag_stops_every_slot_and_is_never_overwritten() {
        let w = block(3);
        let flag = AtomicBool::new(false);
        let exact = Reporting {
            every: 1,
            exact: true,
        };
        let mut m = Monitor::new(Precision::F64, exact, vec![0, 1, 2], vec![None; 3]);
        report(&w, 0, 5, 1.0);
        m.poll(&w[..], None, Some(&flag));
        assert_eq!(w.load(COMMAND), control::release(5), "released");
        flag.store(true, Ordering::Relaxed);
        report(&w, 0, 6, 1.0);
        m.poll(&w[..], None, Some(&flag));
        for k in 0..3 {
            assert_eq!(w.load(k * SLOT_WORDS + COMMAND), STOP);
        }
        assert!(m.any_stopped());
    }

    #[test]
    fn exact_mode_releases_a_generation_already_shown() {
        // A launch that starts where the last one ended reports that generation again:
        // the observer does not see it twice, but the kernel is released.
        let w = block(1);
        let calls = Mutex::new(0);
        let observer = |_: usize, _: u32, _: f64| {
            *calls.lock().unwrap() += 1;
            Flow::Continue
        };
        let exact = Reporting {
            every: 4,
            exact: true,
        };
        let mut m = Monitor::new(Precision::F64, exact, vec![0], vec![Some(40)]);
        report(&w, 0, 40, 3.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*calls.lock().unwrap(), 0);
        assert_eq!(w.load(COMMAND), control::release(40));
    }

    #[test]
    fn exact_mode_releases_a_kernel_waiting_at_generation_zero() {
        let w = block(1);
        let exact = Reporting {
            every: 4,
            exact: true,
        };
        let shown = Mutex::new(Vec::new());
        let observer = |_: usize, g: u32, v: f64| {
            shown.lock().unwrap().push((g, v));
            Flow::Continue
        };
        let mut m = Monitor::new(Precision::F64, exact, vec![0], vec![None]);
        report(&w, 0, 0, 0.0);
        m.poll(&w[..], Some(&observer), None);
        assert_eq!(*shown.lock().unwrap(), [(0, 0.0)]);
        assert_eq!(w.load(COMMAND), control::release(0));
    }

    /// A kernel's protocol on a thread: report every `k`, wait in exact mode, stop at
    /// the first report after a STOP command. Returns the generation it stopped at.
    fn simulated_kernel(w: &[AtomicU64], k: u32, limit: u32, exact: bool) -> u32 {
        let mut g = 0;
        loop {
            let r = control::report(k, exact);
            if control::reports(r, 0, g) {
                report(w, 0, g, 1000.0 - g as f64);
                if control::exact(r) {
                    while !control::released(w.load(COMMAND), g) {
                        std::thread::yield_now();
                    }
                }
                if w.load(COMMAND) == STOP {
                    return g;
                }
            }
            if g == limit {
                return g;
            }
            g += 1;
        }
    }

    #[test]
    fn exact_mode_stops_a_running_kernel_at_the_observers_generation() {
        let w = block(1);
        let observer = |_: usize, g: u32, _: f64| {
            if g >= 120 { Flow::Stop } else { Flow::Continue }
        };
        let exact = Reporting {
            every: 8,
            exact: true,
        };
        let stopped_at = std::thread::scope(|s| {
            let kernel = s.spawn(|| simulated_kernel(&w, 8, 1_000_000, true));
            let mut m = Monitor::new(Precision::F64, exact, vec![0], vec![None]);
            while !kernel.is_finished() {
                m.poll(&w[..], Some(&observer), None);
                std::thread::yield_now();
            }
            kernel.join().unwrap()
        });
        assert_eq!(stopped_at, 120);
    }

    #[test]
    fn without_exact_mode_a_stop_lands_on_a_later_report() {
        let w = block(1);
        let flag = AtomicBool::new(false);
        let stopped_at = std::thread::scope(|s| {
            let kernel = s.spawn(|| simulated_kernel(&w, 16, u32::MAX - 1, false));
            let mut m = Monitor::new(Precision::F64, Reporting::default(), vec![0], vec![None]);
            let mut polls = 0;
            while !kernel.is_finished() {
                polls += 1;
                if polls == 50 {
                    flag.store(true, Ordering::Relaxed);
                }
                m.poll(&w[..], None, Some(&flag));
                std::thread::yield_now();
            }
            kernel.join().unwrap()
        });
        assert_eq!(stopped_at % 16, 0, "stopped at a reported generation");
    }
}
