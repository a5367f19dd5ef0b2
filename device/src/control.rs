//! The control block of a persistent launch: words in pinned host memory that are
//! mapped into the device's address space, through which the host stops a running
//! kernel and the kernel reports its progress without a round trip per generation.
//!
//! The block holds one slot of [`SLOT_WORDS`] 64-bit words per population (a batch
//! launch: one per block; a grid launch: slot 0 only):
//!
//! | word | written by | content |
//! | --- | --- | --- |
//! | [`COMMAND`] | host | 0 at launch; [`STOP`], or `g + 1` to release a kernel waiting at generation `g` |
//! | [`PROGRESS_LO`] | kernel | `(g + 1) << 32 \| low 32 bits of the best value` |
//! | [`PROGRESS_HI`] | kernel | `(g + 1) << 32 \| high 32 bits of the best value` (0 in f32) |
//!
//! Each progress word is one aligned 64-bit store, which the host sees whole; the
//! generation in both halves tells the host whether the two words belong together, so
//! the kernel needs no fence and no sequence counter ([`read_progress`]), and a tag of
//! 0 (the zeroed block) means that nothing was reported yet.
//!
//! The launch's `report` argument ([`report`]) says how often the kernel writes its
//! progress (every `k` generations, and at the generation it starts from) and whether
//! it then waits for the host's answer ([`EXACT`]): with it, an observer that stops
//! the run at a reported generation stops it there exactly, at the cost of a round
//! trip over the bus per report.
//!
//! The kernels poll [`COMMAND`] once per generation (one thread per block); a stop
//! takes effect at the next generation boundary, and the state the kernel leaves is a
//! whole generation's, from which a run can go on with the same bits.
//!
//! This module is plain arithmetic on words, shared by the kernels and the host.

/// Words per population slot (32 bytes: one slot never shares a word with another).
pub const SLOT_WORDS: usize = 4;
/// The host's word: 0 at launch, [`STOP`] to stop, `g + 1` to release generation `g`.
pub const COMMAND: usize = 0;
/// The kernel's progress, low half of the best value's bits.
pub const PROGRESS_LO: usize = 1;
/// The kernel's progress, high half of the best value's bits.
pub const PROGRESS_HI: usize = 2;

/// The command that stops a kernel at its next generation boundary.
pub const STOP: u64 = u64::MAX;

/// The bit of `report` that makes the kernel wait for the host at every report.
pub const EXACT: u32 = 1 << 31;
/// The largest report interval.
pub const MAX_EVERY: u32 = EXACT - 1;

/// The `report` argument of a launch: progress every `every` generations (0: never,
/// only the stop is polled), waiting for the host at each report when `exact`.
/// `every` above [`MAX_EVERY`] is clamped to it.
pub const fn report(every: u32, exact: bool) -> u32 {
    let e = if every > MAX_EVERY { MAX_EVERY } else { every };
    if exact && e > 0 { e | EXACT } else { e }
}

/// The report interval of a `report` argument (0: no reports).
#[inline(always)]
pub const fn every(report: u32) -> u32 {
    report & MAX_EVERY
}

/// Does the kernel wait for the host at each report?
#[inline(always)]
pub const fn exact(report: u32) -> bool {
    report & EXACT != 0 && every(report) > 0
}

/// Is generation `g` of a launch that started at `g0` reported? The starting
/// generation and every multiple of the interval are.
#[inline(always)]
pub const fn reports(report: u32, g0: u32, g: u32) -> bool {
    let e = every(report);
    e > 0 && (g == g0 || g.is_multiple_of(e))
}

/// The two progress words of generation `g` with a best value of these bits (the low
/// and the high 32 bits; the high half is 0 for f32). Generations go up to
/// `u32::MAX − 1` (a job's limit), so the tag `g + 1` is never 0.
#[inline(always)]
pub const fn progress_words(g: u32, bits: [u32; 2]) -> [u64; 2] {
    let tag = (g.wrapping_add(1) as u64) << 32;
    [tag | bits[0] as u64, tag | bits[1] as u64]
}

/// The generation and the best value's bits of two progress words, when they belong
/// together (both from the same report); `None` before the first report and while the
/// kernel is between the two stores of a report.
pub const fn read_progress(lo: u64, hi: u64) -> Option<(u32, u64)> {
    let tag = lo >> 32;
    if tag == 0 || tag != hi >> 32 {
        return None;
    }
    let bits = (lo & 0xffff_ffff) | ((hi & 0xffff_ffff) << 32);
    Some(((tag - 1) as u32, bits))
}

/// Has the host released a kernel waiting at generation `g` (or stopped it)?
#[inline(always)]
pub const fn released(command: u64, g: u32) -> bool {
    command > g as u64
}

/// The command that releases a kernel waiting at generation `g`.
pub const fn release(g: u32) -> u64 {
    g as u64 + 1
}

/// The bit a grid launch's block 0 adds to the barrier counter to stop every block at
/// that barrier (see the grid kernels): far above any count of arrivals, which stay
/// below `2^32` generations × `2^16` blocks.
pub const HALT: u64 = 1 << 56;

/// The arrivals counted in a barrier counter word (without [`HALT`]).
#[inline(always)]
pub const fn arrivals(counter: u64) -> u64 {
    counter & (HALT - 1)
}

/// Does a barrier counter word carry the stop?
#[inline(always)]
pub const fn halted(counter: u64) -> bool {
    counter >= HALT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_words_round_trip_and_mismatched_halves_are_refused() {
        for (g, v) in [(0u32, 1.5f64), (7, -0.0), (u32::MAX - 1, f64::INFINITY)] {
            let b = v.to_bits();
            let w = progress_words(g, [b as u32, (b >> 32) as u32]);
            assert_eq!(read_progress(w[0], w[1]), Some((g, b)));
        }
        let f = 3.25f32.to_bits();
        let w = progress_words(12, [f, 0]);
        assert_eq!(read_progress(w[0], w[1]), Some((12, f as u64)));
        // The kernel has written the low word of generation 13 but not yet the high one.
        let next = progress_words(13, [1, 2]);
        assert_eq!(read_progress(next[0], w[1]), None);
        // Nothing reported yet, even where generation 0 has a best of +0.
        assert_eq!(read_progress(0, 0), None);
        let zero = progress_words(0, [0, 0]);
        assert_eq!(read_progress(zero[0], zero[1]), Some((0, 0)));
    }

    #[test]
    fn report_argument_keeps_interval_and_exactness() {
        let r = report(16, true);
        assert_eq!((every(r), exact(r)), (16, true));
        let r = report(16, false);
        assert_eq!((every(r), exact(r)), (16, false));
        // No interval: nothing to wait for, even when asked.
        assert_eq!(report(0, true), 0);
        assert!(!exact(report(0, true)));
        assert_eq!(every(report(u32::MAX, false)), MAX_EVERY);
    }

    #[test]
    fn reported_generations_are_the_start_and_the_multiples() {
        let r = report(5, false);
        let seen: Vec<u32> = (3..=21).filter(|&g| reports(r, 3, g)).collect();
        assert_eq!(seen, [3, 5, 10, 15, 20]);
        assert!(!(0..100).any(|g| reports(report(0, false), 0, g)));
    }

    #[test]
    fn release_and_stop_commands() {
        // A fresh block (command 0) releases nothing, not even generation 0.
        assert!(!released(0, 0));
        assert!(released(release(0), 0));
        assert!(!released(release(4), 5));
        assert!(released(release(5), 5));
        assert!(released(STOP, u32::MAX));
    }

    #[test]
    fn halt_bit_is_apart_from_the_arrivals() {
        let most = (u32::MAX as u64) * (1 << 16);
        assert!(most < HALT);
        assert_eq!(arrivals(most + HALT), most);
        assert!(halted(most + HALT) && !halted(most));
    }
}
