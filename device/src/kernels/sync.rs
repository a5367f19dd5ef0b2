//! Warp shuffles, atomics, the block and grid barriers, and the device side of the
//! control block (progress reports and the host's command).

use super::*;

pub(crate) const FULL: u32 = 0xffff_ffff;

#[inline(always)]
pub(crate) fn shfl_bfly(v: u32, m: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: every lane of the warp executes the shuffles of a group together (the
    // loops below have warp-uniform trip counts), as the full member mask promises.
    unsafe {
        asm!("shfl.sync.bfly.b32 {r}, {v}, {m}, {c}, {k};",
             r = out(reg32) r, v = in(reg32) v, m = in(reg32) m, c = in(reg32) c, k = in(reg32) FULL);
    }
    r
}

#[inline(always)]
pub(crate) fn shfl_up(v: u32, d: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: as in `shfl_bfly`.
    unsafe {
        asm!("shfl.sync.up.b32 {r}, {v}, {d}, {c}, {k};",
             r = out(reg32) r, v = in(reg32) v, d = in(reg32) d, c = in(reg32) c, k = in(reg32) FULL);
    }
    r
}

#[inline(always)]
pub(crate) fn shfl_idx(v: u32, s: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: as in `shfl_bfly`.
    unsafe {
        asm!("shfl.sync.idx.b32 {r}, {v}, {s}, {c}, {k};",
             r = out(reg32) r, v = in(reg32) v, s = in(reg32) s, c = in(reg32) c, k = in(reg32) FULL);
    }
    r
}

#[inline(always)]
pub(crate) fn fence_gpu() {
    // SAFETY: a memory fence has no operands and no other effect.
    unsafe { asm!("membar.gl;") }
}

#[inline(always)]
pub(crate) fn atomic_inc(p: *mut u32) -> u32 {
    let r: u32;
    // SAFETY: `p` is a valid global address (the state word the host allocated).
    unsafe {
        asm!("atom.global.add.u32 {r}, [{p}], 1;", r = out(reg32) r, p = in(reg64) p);
    }
    r
}

/// Adds `v` to the global word `p` with release semantics at GPU scope: whatever the
/// thread's program order, or a block barrier, put before it is visible to a thread
/// that reads the sum with [`load_acquire_u64`].
#[inline(always)]
pub(crate) fn release_add_u64(p: *mut u64, v: u64) {
    // SAFETY: `p` is a valid global address (the barrier word the host allocated).
    unsafe {
        asm!("red.release.gpu.global.add.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v);
    }
}

/// Reads the global word `p` with acquire semantics at GPU scope (see
/// [`release_add_u64`]).
#[inline(always)]
pub(crate) fn load_acquire_u64(p: *const u64) -> u64 {
    let v: u64;
    // SAFETY: `p` is a valid global address (the barrier word the host allocated).
    unsafe {
        asm!("ld.acquire.gpu.global.u64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p);
    }
    v
}

#[inline(always)]
pub(crate) fn atomic_max_u32(p: *mut u32, v: u32) {
    // SAFETY: `p` is a valid global address (a word of a buffer the host allocated).
    unsafe {
        asm!("red.global.max.u32 [{p}], {v};", p = in(reg64) p, v = in(reg32) v);
    }
}

#[inline(always)]
pub(crate) fn atomic_max_u64(p: *mut u64, v: u64) {
    // SAFETY: `p` is a valid global address (a best slot the host allocated).
    unsafe {
        asm!("red.global.max.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v);
    }
}

/// A barrier across all blocks of a cooperative launch (all co-resident). `epoch`
/// counts the barriers this block has passed; the counter only grows.
///
/// The block meets at `bar.sync` on both sides; between them thread 0 arrives with a
/// release addition to the counter and waits with acquire loads of it: what any thread
/// of the grid wrote before the barrier is seen by plain loads of every thread after it
/// (the release carries the block's writes, which `bar.sync` ordered before it; the
/// acquire, which also drops the SM's L1 lines, orders the loads after it, and `bar.sync`
/// carries that to the block's other threads), as the grid kernels here and the adaptive
/// grid kernels rely on. With a fence on each side instead (`membar.gl`) a barrier over
/// 264 blocks took 1.71 µs on an H100; with the release and the acquire it takes 1.37 µs
/// (`gpude bench --ceilings`; docs/PERFORMANCE-HISTORY.md).
///
/// # Safety
/// Every thread of every block reaches each call the same number of times; `counter` is
/// a global word zeroed before the launch; the launch is cooperative (every block
/// resident) with `nblocks` blocks.
#[inline(always)]
pub(crate) unsafe fn grid_sync(counter: *mut u64, nblocks: u32, epoch: &mut u64) {
    // SAFETY: barriers are reached by every thread of every block the same number of
    // times (the generation loop is grid-uniform); `counter` is a zeroed global word.
    unsafe {
        _syncthreads();
        *epoch += 1;
        if _thread_idx_x() == 0 {
            release_add_u64(counter, 1);
            let goal = *epoch * nblocks as u64;
            while load_acquire_u64(counter) < goal {}
        }
        _syncthreads();
    }
}

/// The whole-GPU kernels' block-local words in shared memory: 32 warps' best values
/// (8 bytes each, room for f64), their 32 indices, then the word and the stop that
/// [`grid_sync_word`] passes from thread 0 to its block.
pub(crate) const GRID_SHARED_BYTES: usize = 32 * 8 + 32 * 4 + 16;

core::arch::global_asm!(
    ".shared .align 8 .b8 gpude_grid_shared[{n}];",
    n = const GRID_SHARED_BYTES
);

/// The generic addresses of [`GRID_SHARED_BYTES`]: the warps' best values, their
/// indices and the two words [`grid_sync_word`] passes on.
#[inline(always)]
pub(crate) fn grid_shared<T>() -> (*mut T, *mut u32, *mut u64) {
    let p: u64;
    // SAFETY: taking the address of a shared variable of this module reads nothing.
    unsafe {
        asm!("mov.u64 {p}, gpude_grid_shared;", "cvta.shared.u64 {p}, {p};", p = out(reg64) p);
    }
    let b = p as *mut u8;
    // The offsets stay inside the variable (GRID_SHARED_BYTES).
    (
        b as *mut T,
        b.wrapping_add(256) as *mut u32,
        b.wrapping_add(384) as *mut u64,
    )
}

/// A grid barrier for a block that has just passed a block barrier after its last
/// global write (as [`block_best_warp0`] ends): thread 0 arrives (with [`control::HALT`]
/// when `stop`), waits (sleeping 64 ns between polls), reads the global word `word` once
/// for the block (what any block wrote there before the barrier) and passes it on
/// through the shared words `bcast`, with whether a stop arrived. The rest as
/// [`grid_sync`].
///
/// # Safety
/// As [`grid_sync`]; the block passed a block barrier since its threads' last global
/// writes and since they last read `bcast`, which [`grid_shared`] gives.
#[inline(always)]
pub(crate) unsafe fn grid_sync_word(
    counter: *mut u64,
    nblocks: u32,
    epoch: &mut u64,
    stop: bool,
    word: *const u64,
    bcast: *mut u64,
) -> (bool, u64) {
    // SAFETY: as in `grid_sync`; the caller's block barrier orders the block's writes
    // before thread 0's release, and the one here orders `bcast`'s words.
    unsafe {
        *epoch += 1;
        if _thread_idx_x() == 0 {
            // Fewer polls queue with the arrivals at the counter's L2 slice (−0.7 % at
            // Np = 8192 on an H100; docs/PERFORMANCE-HISTORY.md).
            let c = arrive_and_wait::<true>(counter, nblocks, *epoch, stop);
            write_volatile(bcast, read_volatile(word));
            write_volatile(bcast.add(1), control::halted(c) as u64);
        }
        _syncthreads();
        (read_volatile(bcast.add(1)) != 0, read_volatile(bcast))
    }
}

/// A block barrier that also tells every thread whether any thread passed `p`
/// (`bar.red.or`, CUDA's `__syncthreads_or`).
///
/// # Safety
/// As a block barrier: every thread of the block reaches it the same number of times.
#[inline(always)]
pub(crate) unsafe fn barrier_or(p: bool) -> bool {
    let r: u32;
    // SAFETY: the caller's contract; the predicate registers are scoped to this block.
    unsafe {
        asm!(
            "{{",
            ".reg .pred %gpude_in, %gpude_out;",
            "setp.ne.u32 %gpude_in, {v}, 0;",
            "bar.red.or.pred %gpude_out, 0, %gpude_in;",
            "selp.u32 {r}, 1, 0, %gpude_out;",
            "}}",
            v = in(reg32) p as u32,
            r = out(reg32) r,
        );
    }
    r != 0
}

/// A block's arrival at barrier number `epoch` of the grid (with [`control::HALT`] when
/// `stop`) and its wait for every block's: thread 0's part of [`grid_sync_or`] and
/// [`grid_sync_word`]; with `SLEEP`, 64 ns between polls that find a block missing.
/// Returns the counter as the last poll read it.
///
/// # Safety
/// As [`grid_sync`], for the calling thread alone.
#[inline(always)]
pub(crate) unsafe fn arrive_and_wait<const SLEEP: bool>(
    counter: *mut u64,
    nblocks: u32,
    epoch: u64,
    stop: bool,
) -> u64 {
    release_add_u64(counter, if stop { 1 + control::HALT } else { 1 });
    let goal = epoch * nblocks as u64;
    loop {
        let c = load_acquire_u64(counter);
        if control::arrivals(c) >= goal {
            return c;
        }
        if SLEEP {
            // SAFETY: sleeping has no precondition.
            unsafe { asm!("nanosleep.u32 64;") };
        }
    }
}

/// [`grid_sync`] that also carries a stop from block 0 to every thread of the grid:
/// block 0's thread 0 passes `stop`, which adds [`control::HALT`] to its arrival, and
/// every thread learns whether the counter holds it once all blocks have arrived.
///
/// # Safety
/// As [`grid_sync`].
#[inline(always)]
pub(crate) unsafe fn grid_sync_or(
    counter: *mut u64,
    nblocks: u32,
    epoch: &mut u64,
    stop: bool,
) -> bool {
    // SAFETY: as in `grid_sync`; the counter's arrivals stay below HALT (see `control`).
    unsafe {
        _syncthreads();
        *epoch += 1;
        let mut halted = false;
        if _thread_idx_x() == 0 {
            halted = control::halted(arrive_and_wait::<false>(counter, nblocks, *epoch, stop));
        }
        barrier_or(halted)
    }
}

/// Writes the progress of generation `g` (best `bf`) to a control slot.
///
/// # Safety
/// `slot` addresses the `SLOT_WORDS` words of a mapped control block.
#[inline(always)]
pub(crate) unsafe fn write_progress<T: LaneReal>(slot: *mut u64, g: u32, bf: T) {
    let w = control::progress_words(g, bf.to_words());
    // SAFETY: the caller's contract.
    unsafe {
        write_volatile(slot.add(PROGRESS_LO), w[0]);
        write_volatile(slot.add(PROGRESS_HI), w[1]);
    }
}

/// The host's command in a control slot, after waiting for the release of generation
/// `g` in exact mode (the progress just written is flushed to the host first).
///
/// # Safety
/// As [`write_progress`].
#[inline(always)]
pub(crate) unsafe fn command(slot: *mut u64, g: u32, report: u32) -> u64 {
    // SAFETY: the caller's contract.
    unsafe {
        if control::exact(report) {
            asm!("membar.sys;");
            let mut c = read_volatile(slot.add(COMMAND));
            while !control::released(c, g) {
                c = read_volatile(slot.add(COMMAND));
            }
            c
        } else {
            read_volatile(slot.add(COMMAND))
        }
    }
}
