//! The CUDA kernels (nvptx64 only).
//!
//! A *group* of `G` lanes of one warp serves one individual at a time (G from
//! [`crate::lanes::group_width`]); rows are stored individual-major with a padded stride
//! so that each lane moves its four components with one 16-byte load, and a group
//! reads a whole random row x_r in one coalesced request.
//!
//! Populations are double-buffered per individual: `flags[i]` says which of the two
//! buffers holds x_i. A trial is written to the other buffer (which nobody reads during
//! the generation) and the flag flips when the trial is accepted, so a generation needs
//! no copy of rejected trials and only one barrier between reading and updating.
//!
//! - `de_batch_*`: one block per population, all generations in one launch;
//! - `de_init_*` and `de_step_*`: one population over the whole grid, one launch per
//!   generation; the last block to finish a generation finds the new best.

use core::arch::asm;
use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};
use core::ptr::{read_volatile, write_volatile};

use crate::abi::{BatchParams, EvalParams, GRID_SLOT_STRIDE, GridParams, Run, StepParams};
use crate::control::{self, COMMAND, PROGRESS_HI, PROGRESS_LO, SLOT_WORDS, STOP};
use crate::de::{
    BoundPolicy, COMPONENT_SLOT, Crossover, Draws, RESAMPLE_SLOT, Strategy, TrialParams, accepts,
    best_key, better, block, first_exceeding, init_chunk, key_best, run_length, subsequence,
    trial_chunk,
};
use crate::functions::{Acc, BuiltinObjective, Formula, Function, LaneIn, lane_total};
use crate::lanes::{LaneObjective, MAX_GROUP, chunk, group_width, rounds, stride};
use crate::philox::{block_words, key_of};
use crate::real::Real;
use crate::variant::ThesisVariant;

const FULL: u32 = 0xffff_ffff;

#[inline(always)]
fn shfl_bfly(v: u32, m: u32, c: u32) -> u32 {
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
fn shfl_up(v: u32, d: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: as in `shfl_bfly`.
    unsafe {
        asm!("shfl.sync.up.b32 {r}, {v}, {d}, {c}, {k};",
             r = out(reg32) r, v = in(reg32) v, d = in(reg32) d, c = in(reg32) c, k = in(reg32) FULL);
    }
    r
}

#[inline(always)]
fn shfl_idx(v: u32, s: u32, c: u32) -> u32 {
    let r: u32;
    // SAFETY: as in `shfl_bfly`.
    unsafe {
        asm!("shfl.sync.idx.b32 {r}, {v}, {s}, {c}, {k};",
             r = out(reg32) r, v = in(reg32) v, s = in(reg32) s, c = in(reg32) c, k = in(reg32) FULL);
    }
    r
}

#[inline(always)]
fn fence_gpu() {
    // SAFETY: a memory fence has no operands and no other effect.
    unsafe { asm!("membar.gl;") }
}

#[inline(always)]
fn atomic_inc(p: *mut u32) -> u32 {
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
fn release_add_u64(p: *mut u64, v: u64) {
    // SAFETY: `p` is a valid global address (the barrier word the host allocated).
    unsafe {
        asm!("red.release.gpu.global.add.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v);
    }
}

/// Reads the global word `p` with acquire semantics at GPU scope (see
/// [`release_add_u64`]).
#[inline(always)]
fn load_acquire_u64(p: *const u64) -> u64 {
    let v: u64;
    // SAFETY: `p` is a valid global address (the barrier word the host allocated).
    unsafe {
        asm!("ld.acquire.gpu.global.u64 {v}, [{p}];", v = out(reg64) v, p = in(reg64) p);
    }
    v
}

#[inline(always)]
fn atomic_max_u64(p: *mut u64, v: u64) {
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
/// grid kernels rely on. With a fence on each side instead (`membar.gl`, version 13) a
/// barrier over 264 blocks took 1.71 µs on an H100; with the release and the acquire it
/// takes 1.37 µs (`gpude bench --ceilings`; docs/PERFORMANCE.md, version 14).
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
const GRID_SHARED_BYTES: usize = 32 * 8 + 32 * 4 + 16;

core::arch::global_asm!(
    ".shared .align 8 .b8 gpude_grid_shared[{n}];",
    n = const GRID_SHARED_BYTES
);

/// The generic addresses of [`GRID_SHARED_BYTES`]: the warps' best values, their
/// indices and the two words [`grid_sync_word`] passes on.
#[inline(always)]
fn grid_shared<T>() -> (*mut T, *mut u32, *mut u64) {
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
unsafe fn grid_sync_word(
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
            // Fewer polls queue with the arrivals at the counter's L2 slice (version 16:
            // −0.7 % at Np = 8192, docs/PERFORMANCE.md).
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
unsafe fn arrive_and_wait<const SLEEP: bool>(
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
unsafe fn grid_sync_or(counter: *mut u64, nblocks: u32, epoch: &mut u64, stop: bool) -> bool {
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

/// The lane-level operations a precision needs: 16-byte-chunk loads and shuffles.
pub trait LaneReal: Real {
    fn to_words(self) -> [u32; 2];
    fn from_words(w: [u32; 2]) -> Self;
    /// Loads four values from a 16-byte-aligned (f32) or 32-byte-aligned (f64) address.
    ///
    /// # Safety
    /// `p .. p + 4` must be readable and aligned as said.
    unsafe fn load4(p: *const Self) -> [Self; 4];
    /// # Safety
    /// `p .. p + 4` must be writable and aligned as in `load4`.
    unsafe fn store4(p: *mut Self, v: [Self; 4]);
    const WORDS: u32;
}

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct V4f([f32; 4]);
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct V2d([f64; 2]);

impl LaneReal for f32 {
    const WORDS: u32 = 1;
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        [self.to_bits(), 0]
    }
    #[inline(always)]
    fn from_words(w: [u32; 2]) -> Self {
        f32::from_bits(w[0])
    }
    #[inline(always)]
    unsafe fn load4(p: *const Self) -> [Self; 4] {
        // SAFETY: the caller guarantees four readable, 16-byte-aligned values.
        unsafe { (*(p as *const V4f)).0 }
    }
    #[inline(always)]
    unsafe fn store4(p: *mut Self, v: [Self; 4]) {
        // SAFETY: the caller guarantees four writable, 16-byte-aligned values.
        unsafe { *(p as *mut V4f) = V4f(v) }
    }
}

impl LaneReal for f64 {
    const WORDS: u32 = 2;
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        let b = self.to_bits();
        [b as u32, (b >> 32) as u32]
    }
    #[inline(always)]
    fn from_words(w: [u32; 2]) -> Self {
        f64::from_bits(w[0] as u64 | ((w[1] as u64) << 32))
    }
    #[inline(always)]
    unsafe fn load4(p: *const Self) -> [Self; 4] {
        // SAFETY: the caller guarantees four readable values, 32-byte aligned.
        unsafe {
            let a = (*(p as *const V2d)).0;
            let b = (*(p.add(2) as *const V2d)).0;
            [a[0], a[1], b[0], b[1]]
        }
    }
    #[inline(always)]
    unsafe fn store4(p: *mut Self, v: [Self; 4]) {
        // SAFETY: the caller guarantees four writable values, 32-byte aligned.
        unsafe {
            *(p as *mut V2d) = V2d([v[0], v[1]]);
            *(p.add(2) as *mut V2d) = V2d([v[2], v[3]]);
        }
    }
}

/// A group of `g` lanes inside a warp.
#[derive(Clone, Copy)]
pub(crate) struct Group {
    pub(crate) g: u32,
    /// Lane inside the group.
    pub(crate) lane: u32,
    /// `c` operand of shfl for a segment of width g.
    c_seg: u32,
    c_up: u32,
}

impl Group {
    #[inline(always)]
    pub(crate) fn new(g: u32, lane_in_warp: u32) -> Self {
        Group {
            g,
            lane: lane_in_warp & (g - 1),
            c_seg: ((32 - g) << 8) | 0x1f,
            c_up: (32 - g) << 8,
        }
    }
    /// The `c` operand of a butterfly inside the group: the whole warp as one segment.
    /// Groups are aligned and `m < g`, so `lane ^ m` never leaves the lane's group and
    /// the group's own segment (`c_seg`) would pick the same lane; a constant lets
    /// ptxas encode it in the instruction instead of copying it into a register for
    /// every shuffle.
    const C_WARP: u32 = 0x1f;
    #[inline(always)]
    fn xor<T: LaneReal>(&self, v: T, m: u32) -> T {
        let w = v.to_words();
        let a = shfl_bfly(w[0], m, Self::C_WARP);
        let b = if T::WORDS == 2 {
            shfl_bfly(w[1], m, Self::C_WARP)
        } else {
            0
        };
        T::from_words([a, b])
    }
    #[inline(always)]
    fn up<T: LaneReal>(&self, v: T, d: u32) -> T {
        let w = v.to_words();
        let a = shfl_up(w[0], d, self.c_up);
        let b = if T::WORDS == 2 {
            shfl_up(w[1], d, self.c_up)
        } else {
            0
        };
        T::from_words([a, b])
    }
    #[inline(always)]
    fn idx<T: LaneReal>(&self, v: T, s: u32) -> T {
        let w = v.to_words();
        let a = shfl_idx(w[0], s, self.c_seg);
        let b = if T::WORDS == 2 {
            shfl_idx(w[1], s, self.c_seg)
        } else {
            0
        };
        T::from_words([a, b])
    }
    #[inline(always)]
    pub(crate) fn idx_u32(&self, v: u32, s: u32) -> u32 {
        shfl_idx(v, s, self.c_seg)
    }
    #[inline(always)]
    pub(crate) fn min_u32(&self, mut v: u32) -> u32 {
        self.levels(false, |m| {
            let o = shfl_bfly(v, m, Self::C_WARP);
            if o < v {
                v = o;
            }
        });
        v
    }
    /// Calls `f` with the butterfly distances g/2, …, 2, 1 in that order, written out
    /// with constant distances: the kernels' loops over them stayed loops, each level
    /// paying the counter and the branch. The levels beyond the group are skipped,
    /// uniformly over the warp; with `straight` (see [`Real::STRAIGHT`]), a full warp's
    /// five levels run without branches.
    #[inline(always)]
    fn levels(&self, straight: bool, mut f: impl FnMut(u32)) {
        const _: () = assert!(MAX_GROUP == 32);
        if straight && self.g == MAX_GROUP {
            // The whole warp, straight through: after the warp's barrier ptxas knows the
            // lanes converged and drops its divergence test before every shuffle.
            // SAFETY: every lane of the warp reaches the levels together (the callers'
            // loops have warp-uniform trip counts, and g is the same for the warp), as
            // the shuffles' full mask promises too.
            unsafe { asm!("bar.warp.sync 0xffffffff;") }
            f(16);
            f(8);
            f(4);
            f(2);
            f(1);
            return;
        }
        if self.g > 16 {
            f(16);
        }
        if self.g > 8 {
            f(8);
        }
        if self.g > 4 {
            f(4);
        }
        if self.g > 2 {
            f(2);
        }
        if self.g > 1 {
            f(1);
        }
    }
    /// The group's combined sums (every lane gets the same bits).
    #[inline(always)]
    fn combine<T: LaneReal, O: LaneObjective<T>>(&self, mut acc: Acc<T>, obj: &O) -> Acc<T> {
        self.levels(T::STRAIGHT, |m| {
            let o = Acc {
                a: self.xor(acc.a, m),
                b: if obj.uses_b() {
                    self.xor(acc.b, m)
                } else {
                    acc.b
                },
            };
            acc = obj.combine(acc, o);
        });
        acc
    }

    /// Exclusive prefix sum of `x` over the group, in the CPU twin's order.
    #[inline(always)]
    fn scan_exclusive<T: LaneReal>(&self, x: T) -> (T, T) {
        let mut incl = x;
        let mut d = 1;
        while d < self.g {
            let y = self.up(incl, d);
            if self.lane >= d {
                incl = y + incl;
            }
            d *= 2;
        }
        let e = self.up(incl, 1);
        let excl = if self.lane == 0 { T::ZERO } else { e };
        let total = self.idx(incl, self.g - 1);
        (excl, total)
    }
}

/// The running state of one group's canonical evaluation across rounds.
struct Eval<T> {
    acc: Acc<T>,
    carry_last: T,
    carry_sum: T,
}

impl<T: LaneReal> Eval<T> {
    #[inline(always)]
    fn new<O: LaneObjective<T>>(o: &O) -> Self {
        Eval {
            acc: o.identity(),
            carry_last: T::ZERO,
            carry_sum: T::ZERO,
        }
    }
    /// Adds one round's chunk `v` (lane-owned components from `j0`, `n` of them). The
    /// prefix `base` is the group's scan of the lanes' totals of plain components.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn round<O: LaneObjective<T>>(
        &mut self,
        gr: &Group,
        o: &O,
        v: [T; 4],
        j0: u32,
        n: u32,
        dim: u32,
        kc: &[T; 4],
    ) {
        let prev = if o.needs_prev() {
            let up = gr.up(v[3], 1);
            if gr.lane == 0 { self.carry_last } else { up }
        } else {
            T::ZERO
        };
        let mut li = LaneIn {
            v,
            j0,
            n,
            prev,
            base: T::ZERO,
        };
        if o.needs_prefix() {
            let (excl, total) = gr.scan_exclusive(lane_total(&li));
            li.base = self.carry_sum + excl;
            self.carry_sum = self.carry_sum + total;
        }
        o.accumulate(&mut self.acc, &li, dim, kc);
        if o.needs_prev() {
            self.carry_last = gr.idx(v[3], gr.g - 1);
        }
    }
    #[inline(always)]
    fn value<O: LaneObjective<T>>(&self, gr: &Group, o: &O, dim: u32) -> T {
        o.finish(gr.combine(self.acc, o), dim)
    }
}

/// Launch-wide settings, as the host passes them.
/// `O` is the objective the kernel evaluates: a built-in function (its code and formula
/// from the launch) or, in the separable family, the linked module's separable form.
#[derive(Clone, Copy)]
pub(crate) struct Setup<T, O = BuiltinObjective> {
    pub(crate) obj: O,
    pub(crate) tp: TrialParams<T>,
    pub(crate) np: u32,
    pub(crate) stride: u32,
}

impl<T: LaneReal, O> Setup<T, O> {
    /// The same settings with the objective `obj`.
    #[inline(always)]
    pub(crate) fn with_objective<P>(self, obj: P) -> Setup<T, P> {
        Setup {
            obj,
            tp: self.tp,
            np: self.np,
            stride: self.stride,
        }
    }
}

impl<T: LaneReal> Setup<T> {
    // The kernels' scalar arguments, one each: the entry points forward them as received.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn new(
        function: u32,
        formula: u32,
        strategy: u32,
        crossover: u32,
        bounds: u32,
        dim: u32,
        np: u32,
        f: T,
        cr: T,
        variant: u32,
    ) -> Self {
        // Unknown codes cannot come from the host's validated jobs; fall back rather
        // than trap.
        Setup {
            obj: BuiltinObjective {
                f: Function::from_u32(function).unwrap_or(Function::Sphere),
                formula: Formula::from_u32(formula).unwrap_or(Formula::Exact),
            },
            tp: TrialParams {
                strategy: Strategy::from_u32(strategy).unwrap_or(Strategy::Thesis),
                crossover: Crossover::from_u32(crossover).unwrap_or(Crossover::Binomial),
                bounds: BoundPolicy::from_u32(bounds).unwrap_or(BoundPolicy::InitOnly),
                f,
                cr,
                dim,
                variant: ThesisVariant::from_bits(variant).unwrap_or(ThesisVariant::DEFAULT),
            },
            np,
            stride: stride(dim),
        }
    }
}

#[inline(always)]
pub(crate) fn row<T>(a: *mut T, b: *mut T, flag: u32, i: u32, stride: u32) -> *mut T {
    let base = if flag == 0 { a } else { b };
    // SAFETY (of the callers' use): i < np and rows are np × stride long.
    unsafe { base.add((i * stride) as usize) }
}

/// Initialises individual `i` into buffer `a` and returns its value (every lane).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn init_one<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    key: [u32; 2],
    pstream: u32,
    i: u32,
    active: bool,
    lo: *const T,
    hi: *const T,
    a: *mut T,
    kc0: &[T; 4],
) -> T {
    let dim = s.tp.dim;
    let sub = subsequence(pstream, i);
    let mut ev = Eval::<T>::new(&s.obj);
    let nr = rounds(dim);
    let mut c = 0;
    while c < nr {
        let (j0, n) = chunk(dim, gr.g, c, gr.lane);
        let mut v = [T::ZERO; 4];
        if n > 0 {
            let u = block_words(key, sub, block(0, j0 / 4));
            // SAFETY: j0 + 4 ≤ stride; bounds arrays are stride long.
            let (l4, h4) =
                unsafe { (T::load4(lo.add(j0 as usize)), T::load4(hi.add(j0 as usize))) };
            v = init_chunk(&u, n, &l4, &h4);
            if active {
                // SAFETY: row i of buffer a, chunk j0.
                unsafe { T::store4(a.add((i * s.stride + j0) as usize), v) };
            }
        }
        let kc = if c == 0 { *kc0 } else { s.obj.consts(j0) };
        ev.round(gr, &s.obj, v, j0, n, dim, &kc);
        c += 1;
    }
    ev.value(gr, &s.obj, dim)
}

/// Builds, writes (into the spare buffer) and evaluates individual `i`'s trial of
/// generation `g`. Returns the trial's value (every lane) and whether it was accepted.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn trial_one<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    key: [u32; 2],
    pstream: u32,
    g: u32,
    i: u32,
    active: bool,
    best_i: u32,
    lo: *const T,
    hi: *const T,
    a: *mut T,
    b: *mut T,
    flags: *const u32,
    fit_i: T,
    d: &Draws,
    fl: &[u32; 6],
    kc0: &[T; 4],
) -> (T, bool) {
    let ndraw = s.tp.strategy.draws();
    let fi = fl[5];
    let xi_row = row(a, b, fi, i, s.stride);
    let spare = row(a, b, fi ^ 1, i, s.stride);
    let mut rrows = [xi_row; 5];
    let mut k = 0;
    while k < 5 {
        if k < ndraw as usize {
            rrows[k] = row(a, b, fl[k], d.r[k], s.stride);
        }
        k += 1;
    }
    // SAFETY: best_i < np.
    let best_row = row(
        a,
        b,
        unsafe { *flags.add(best_i as usize) },
        best_i,
        s.stride,
    );
    // SAFETY: the rows are rows of the population (the spare one read by nobody this
    // generation), as `trial_rows` asks.
    unsafe {
        trial_rows(
            s,
            gr,
            key,
            pstream,
            g,
            i,
            active,
            lo,
            hi,
            &RowPointers {
                xi: xi_row,
                drawn: rrows,
            },
            best_row,
            spare,
            fit_i,
            d.jrand,
            kc0,
        )
    }
}

/// Where [`trial_rows`] finds a lane's chunks of x_i and of the drawn rows.
pub(crate) trait RowSource<T: LaneReal> {
    /// The lane's chunk of x_i that starts at component `off`.
    ///
    /// # Safety
    /// `off` is the first component of one of the lane's chunks of the individual the
    /// source was made for, as the source's maker promises it.
    unsafe fn xi(&self, off: usize) -> [T; 4];
    /// The lane's chunk of drawn row `k` (`k <` the strategy's draws) at `off`.
    ///
    /// # Safety
    /// As [`RowSource::xi`].
    unsafe fn drawn(&self, k: usize, off: usize) -> [T; 4];
}

/// The rows themselves: x_i and the drawn rows, each `stride` values.
pub(crate) struct RowPointers<T> {
    pub(crate) xi: *const T,
    pub(crate) drawn: [*mut T; 5],
}

impl<T: LaneReal> RowSource<T> for RowPointers<T> {
    #[inline(always)]
    unsafe fn xi(&self, off: usize) -> [T; 4] {
        // SAFETY: the row holds `stride ≥ off + 4` values (the caller's contract).
        unsafe { T::load4(self.xi.add(off)) }
    }
    #[inline(always)]
    unsafe fn drawn(&self, k: usize, off: usize) -> [T; 4] {
        // SAFETY: as above.
        unsafe { T::load4(self.drawn[k].add(off)) }
    }
}

/// [`trial_one`] from its rows: builds individual `i`'s trial of generation `g` from
/// x_i and the drawn rows (the lane's chunks of them from `rows`) and the best row,
/// writes it to `spare` (every round of a row longer than one round, else only when
/// accepted) and evaluates it. Returns the trial's value (every lane) and whether it
/// was accepted.
///
/// # Safety
/// `rows` serves the lane's chunks of individual `i`'s rows (see [`RowSource`]);
/// `best_row` addresses `stride` readable values, `spare` `stride` writable values read
/// by no other thread until the generation's barrier; `lo` and `hi` are `stride` long.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn trial_rows<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    key: [u32; 2],
    pstream: u32,
    g: u32,
    i: u32,
    active: bool,
    lo: *const T,
    hi: *const T,
    rows: &impl RowSource<T>,
    best_row: *const T,
    spare: *mut T,
    fit_i: T,
    jrand: u32,
    kc0: &[T; 4],
) -> (T, bool) {
    let dim = s.tp.dim;
    let strat = s.tp.strategy;
    let ndraw = strat.draws();
    let sub = subsequence(pstream, i);
    let nr = rounds(dim);
    // Exponential crossover's run length needs every lane's uniforms first.
    let mut run = dim;
    if strat.crosses() && matches!(s.tp.crossover, Crossover::Exponential) {
        let mut first = u32::MAX;
        let mut c = 0;
        while c < nr {
            let (j0, n) = chunk(dim, gr.g, c, gr.lane);
            if n > 0 {
                let u = block_words(key, sub, block(g, COMPONENT_SLOT + j0 / 4));
                let f = first_exceeding(s.tp.cr, &u, j0, n, dim);
                if f < first {
                    first = f;
                }
            }
            c += 1;
        }
        run = run_length(gr.min_u32(first), dim);
    }
    let mut ev = Eval::<T>::new(&s.obj);
    let mut last = [T::ZERO; 4];
    let mut c = 0;
    while c < nr {
        let (j0, n) = chunk(dim, gr.g, c, gr.lane);
        let mut v = [T::ZERO; 4];
        if n > 0 {
            let off = j0 as usize;
            let u = s.tp.variant.lambda_words(key, sub, g, j0);
            // SAFETY: every row pointer addresses a row of `stride ≥ j0 + 4` values.
            let (xi, best, l4, h4) = unsafe {
                (
                    if strat.uses_current() || strat.crosses() {
                        rows.xi(off)
                    } else {
                        [T::ZERO; 4]
                    },
                    if strat.uses_best() {
                        T::load4(best_row.add(off))
                    } else {
                        [T::ZERO; 4]
                    },
                    if matches!(s.tp.bounds, BoundPolicy::InitOnly) {
                        [T::ZERO; 4]
                    } else {
                        T::load4(lo.add(off))
                    },
                    if matches!(s.tp.bounds, BoundPolicy::InitOnly) {
                        [T::ZERO; 4]
                    } else {
                        T::load4(hi.add(off))
                    },
                )
            };
            let mut r = [[T::ZERO; 4]; 5];
            let mut k = 0;
            while k < 5 {
                if k < ndraw as usize {
                    // SAFETY: as above.
                    r[k] = unsafe { rows.drawn(k, off) };
                }
                k += 1;
            }
            v = trial_chunk(
                &s.tp,
                j0,
                n,
                &xi,
                &r,
                &best,
                &l4,
                &h4,
                &u,
                jrand,
                run,
                || block_words(key, sub, block(g, RESAMPLE_SLOT + j0 / 4)),
            );
            if nr > 1 && active {
                // SAFETY: the spare row of i is read by nobody this generation.
                unsafe { T::store4(spare.add(off), v) };
            }
        }
        let kc = if c == 0 { *kc0 } else { s.obj.consts(j0) };
        ev.round(gr, &s.obj, v, j0, n, dim, &kc);
        last = v;
        c += 1;
    }
    let ft = ev.value(gr, &s.obj, dim);
    let acc = accepts(ft, fit_i);
    if nr == 1 && acc && active {
        let (j0, n) = chunk(dim, gr.g, 0, gr.lane);
        if n > 0 {
            // SAFETY: as above.
            unsafe { T::store4(spare.add(j0 as usize), last) };
        }
    }
    (ft, acc)
}

/// Index draws, amortised over a group: every `g` passes, lane `l` draws for the
/// individual of pass `base + l`; pass `p` then takes lane `p − base`'s draws.
/// The flags of the drawn rows (and of x_i) come with them, so that the row loads
/// need not wait on a flag load.
#[derive(Clone, Copy)]
pub(crate) struct DrawCache {
    pub(crate) pre: Draws,
    pub(crate) flags: [u32; 6],
}

impl DrawCache {
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn get<T: LaneReal, O>(
        &mut self,
        s: &Setup<T, O>,
        gr: &Group,
        key: [u32; 2],
        pstream: u32,
        g: u32,
        pass: u32,
        individual_of_pass: impl Fn(u32) -> u32,
        flags: *const u32,
    ) -> (Draws, [u32; 6]) {
        let slot = pass & (gr.g - 1);
        let ndraw = s.tp.strategy.draws();
        let jdim = if s.tp.strategy.crosses() { s.tp.dim } else { 0 };
        if slot == 0 {
            let i = individual_of_pass(pass + gr.lane).min(s.np - 1);
            self.pre = s.tp.variant.draws(key, pstream, i, g, s.np, ndraw, jdim);
            // SAFETY: i and the drawn indices are < np, the flags' length.
            unsafe {
                let mut k = 0;
                while k < 5 {
                    if k < ndraw as usize {
                        self.flags[k] = *flags.add(self.pre.r[k] as usize);
                    }
                    k += 1;
                }
                self.flags[5] = *flags.add(i as usize);
            }
        }
        let mut d = Draws {
            r: [0; 5],
            jrand: 0,
        };
        let mut fl = [0u32; 6];
        let mut k = 0;
        while k < 5 {
            if k < ndraw as usize {
                d.r[k] = gr.idx_u32(self.pre.r[k], slot);
                fl[k] = gr.idx_u32(self.flags[k], slot);
            }
            k += 1;
        }
        fl[5] = gr.idx_u32(self.flags[5], slot);
        if jdim > 0 {
            d.jrand = gr.idx_u32(self.pre.jrand, slot);
        }
        (d, fl)
    }
}

/// Reduces (value, index) over the warp (all 32 lanes take part); every lane gets the
/// result. [`better`] is a strict total order on (value, index) pairs, so the best of a
/// set is the same in any order of comparisons: the CPU engine's scan from index 0.
#[inline(always)]
pub(crate) fn warp_best<T: LaneReal>(mut f: T, mut i: u32) -> (T, u32) {
    // SAFETY: reading the thread index has no preconditions.
    let full = Group::new(32, unsafe { _thread_idx_x() } & 31);
    full.levels(T::STRAIGHT, |m| {
        let of = full.xor(f, m);
        let oi = shfl_bfly(i, m, Group::C_WARP);
        if better(of, oi, f, i) {
            f = of;
            i = oi;
        }
    });
    (f, i)
}

/// Reduces (value, index) over the block; every thread gets the result. Uses
/// `scratch_f`/`scratch_i` (32 entries of this block) and two barriers. After a
/// butterfly over each warp, every thread scans the warps' bests in order.
#[inline(always)]
pub(crate) unsafe fn block_best<T: LaneReal>(
    f: T,
    i: u32,
    scratch_f: *mut T,
    scratch_i: *mut u32,
) -> (T, u32) {
    // SAFETY: the caller's contract.
    unsafe { block_best_with::<T, false>(f, i, scratch_f, scratch_i) }
}

/// [`block_best`], choosing how the warps' bests are combined: with `TREE`, a second
/// butterfly over them (each lane reads one) in place of every thread's scan of them.
/// The result is the same ([`warp_best`]). The butterfly measured faster in the resident
/// kernels (populations of a few hundred, a block best every eight trials per warp) and
/// slower in the others, whose register allocation it upsets (more spills;
/// docs/PERFORMANCE.md, version 12).
///
/// # Safety
/// As [`block_best`]: every thread of the block calls it; the scratch holds 32 entries.
#[inline(always)]
pub(crate) unsafe fn block_best_with<T: LaneReal, const TREE: bool>(
    f: T,
    i: u32,
    scratch_f: *mut T,
    scratch_i: *mut u32,
) -> (T, u32) {
    // SAFETY: the caller's contract; the barriers order the scratch's accesses.
    unsafe {
        stage_warp_bests(f, i, scratch_f, scratch_i);
        let r = if TREE {
            best_of_warp_bests(scratch_f, scratch_i)
        } else {
            let nwarps = _block_dim_x().div_ceil(32);
            let mut bf = *scratch_f;
            let mut bi = *scratch_i;
            let mut w = 1;
            while w < nwarps {
                let of = *scratch_f.add(w as usize);
                let oi = *scratch_i.add(w as usize);
                if better(of, oi, bf, bi) {
                    bf = of;
                    bi = oi;
                }
                w += 1;
            }
            (bf, bi)
        };
        _syncthreads();
        r
    }
}

/// Each warp's best ([`warp_best`], which it returns), stored by the warp's lane 0 in
/// the warp's scratch entry, then a block barrier.
///
/// # Safety
/// As [`block_best`].
#[inline(always)]
unsafe fn stage_warp_bests<T: LaneReal>(
    f: T,
    i: u32,
    scratch_f: *mut T,
    scratch_i: *mut u32,
) -> (T, u32) {
    let lane = unsafe { _thread_idx_x() } & 31;
    let warp = unsafe { _thread_idx_x() } / 32;
    let (f, i) = warp_best(f, i);
    // SAFETY: scratch holds 32 entries per block; warp < 32.
    unsafe {
        if lane == 0 {
            *scratch_f.add(warp as usize) = f;
            *scratch_i.add(warp as usize) = i;
        }
        _syncthreads();
    }
    (f, i)
}

/// The best of the warps' bests that [`stage_warp_bests`] staged: a butterfly over them
/// in the calling warp (each lane reads one).
///
/// # Safety
/// After [`stage_warp_bests`], before the scratch is written again.
#[inline(always)]
unsafe fn best_of_warp_bests<T: LaneReal>(scratch_f: *mut T, scratch_i: *mut u32) -> (T, u32) {
    let lane = unsafe { _thread_idx_x() } & 31;
    let nwarps = unsafe { _block_dim_x() }.div_ceil(32);
    // SAFETY: the caller's contract; lane < nwarps ≤ 32.
    let (of, oi) = unsafe {
        if lane < nwarps {
            (*scratch_f.add(lane as usize), *scratch_i.add(lane as usize))
        } else {
            (T::NAN, u32::MAX)
        }
    };
    warp_best(of, oi)
}

/// The block's best (value, index) in warp 0, with one barrier: for a result that only
/// thread 0 uses (the other warps get their own warp's best). The scratch is read by
/// warp 0 after the barrier, so the caller's next block barrier must come before it is
/// written again.
///
/// # Safety
/// As [`block_best`].
#[inline(always)]
unsafe fn block_best_warp0<T: LaneReal>(
    f: T,
    i: u32,
    scratch_f: *mut T,
    scratch_i: *mut u32,
) -> (T, u32) {
    // SAFETY: the caller's contract.
    unsafe {
        let own = stage_warp_bests(f, i, scratch_f, scratch_i);
        if _thread_idx_x() / 32 == 0 {
            best_of_warp_bests(scratch_f, scratch_i)
        } else {
            own
        }
    }
}

/// A single-precision pair's [`best_key`] (see [`crate::abi::GRID_SYNC_WORDS`]).
#[inline(always)]
fn lane_key<T: LaneReal>(f: T, i: u32) -> u64 {
    best_key(f32::from_bits(f.to_words()[0]), i)
}

/// [`batch`] without a control block: the plain entry points' code.
///
/// # Safety
/// As [`batch`].
#[inline(always)]
unsafe fn batch_plain<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
    // SAFETY: forwarded.
    unsafe { batch::<T, _, false>(s, p) }
}

/// [`batch`] under the control block `p.ctl`: the `…_ctl` entry points' code. They are
/// entry points of their own because a controlled loop beside the plain one (inlined
/// or called) changed how ptxas compiled the plain one, and a called one was slow.
///
/// # Safety
/// As [`batch`].
#[inline(always)]
unsafe fn batch_controlled<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
    // SAFETY: forwarded.
    unsafe { batch::<T, _, true>(s, p) }
}

/// One block evolves one population through all generations; with `CTL`, under the
/// control block `p.ctl` (see [`crate::control`]) and from the generations done that
/// `gens_done` holds.
#[inline(always)]
pub(crate) unsafe fn batch<T: LaneReal, O: LaneObjective<T>, const CTL: bool>(
    s: Setup<T, O>,
    p: BatchParams<T>,
) {
    let BatchParams {
        run: Run { gens, target, .. },
        seeds,
        streams,
        lo,
        hi,
        pop_a,
        pop_b,
        flags,
        fit,
        trial_fit,
        scratch_f,
        scratch_i,
        best_x,
        best_f,
        best_idx,
        gens_done,
        hist,
        ctl,
        report,
    } = p;
    // SAFETY: the host sizes every buffer for gridDim populations (see the host's
    // launch code, which checks the lengths before launching); `ctl` is null or a
    // mapped control block of gridDim slots.
    unsafe {
        let p = _block_idx_x();
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let np = s.np;
        let dim = s.tp.dim;
        let st = s.stride;
        let key = key_of(*seeds.add(p as usize));
        let pstream = *streams.add(p as usize);
        let pop_off = (p * np) as usize;
        let a = pop_a.add(pop_off * st as usize);
        let b = pop_b.add(pop_off * st as usize);
        let flags = flags.add(pop_off);
        let fit = fit.add(pop_off);
        let trial_fit = trial_fit.add(pop_off);
        let scratch_f = scratch_f.add(32 * p as usize);
        let scratch_i = scratch_i.add(32 * p as usize);
        let hist = if hist.is_null() {
            hist
        } else {
            hist.add((p * (gens + 1)) as usize)
        };

        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups = nthreads / g;
        let my_group = tid / g;
        let passes = np.div_ceil(groups);
        let kc0 = s.obj.consts(chunk(dim, g, 0, gr.lane).0);
        let mut cache = DrawCache {
            pre: Draws {
                r: [0; 5],
                jrand: 0,
            },
            flags: [0; 6],
        };

        // The generations done: 0 for a fresh run, which starts with the
        // initialisation; a run that goes on from generation gen0 finds its population
        // in the buffers (rows as its flags say, values in fit).
        let gen0 = if CTL { *gens_done.add(p as usize) } else { 0 };
        if gen0 == 0 {
            let mut pass = 0;
            while pass < passes {
                let i0 = pass * groups + my_group;
                let active = i0 < np;
                let i = if active { i0 } else { np - 1 };
                let fx = init_one(&s, &gr, key, pstream, i, active, lo, hi, a, &kc0);
                if active && gr.lane == 0 {
                    *fit.add(i as usize) = fx;
                    *flags.add(i as usize) = 0;
                }
                pass += 1;
            }
        }
        _syncthreads();
        let mut lf = T::NAN;
        let mut li = u32::MAX;
        let mut i = tid;
        while i < np {
            let fx = *fit.add(i as usize);
            if better(fx, i, lf, li) {
                lf = fx;
                li = i;
            }
            i += nthreads;
        }
        let (mut bf, mut bi) = block_best(lf, li, scratch_f, scratch_i);
        // A population past this launch's limit (runs of a list resumed at different
        // generations) has no slot in its history.
        if tid == 0 && !hist.is_null() && gen0 <= gens {
            *hist.add(gen0 as usize) = bf;
        }

        let mut gn = gen0;
        // Not `bf > target`: a NaN best never counts as having reached the target.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        while gn < gens && !(bf <= target) {
            // Under control, thread 0 reports a reported generation gn and reads the
            // host's command, which the barrier after the trials hands to every thread.
            let mut stop = false;
            if CTL && tid == 0 && control::reports(report, gen0, gn) {
                let slot = ctl.add(p as usize * SLOT_WORDS);
                write_progress(slot, gn, bf);
                stop = command(slot, gn, report) == STOP;
            }
            gn += 1;
            let mut pass = 0;
            while pass < passes {
                let i0 = pass * groups + my_group;
                let active = i0 < np;
                let i = if active { i0 } else { np - 1 };
                let fi = *fit.add(i as usize);
                let (d, fl) = cache.get(
                    &s,
                    &gr,
                    key,
                    pstream,
                    gn,
                    pass,
                    |q| q * groups + my_group,
                    flags,
                );
                let (ft, _) = trial_one(
                    &s, &gr, key, pstream, gn, i, active, bi, lo, hi, a, b, flags, fi, &d, &fl,
                    &kc0,
                );
                if active && gr.lane == 0 {
                    *trial_fit.add(i as usize) = ft;
                }
                pass += 1;
            }
            if !CTL {
                _syncthreads();
            } else if barrier_or(stop) {
                // Stopped after generation gn − 1: its trials are dropped unselected.
                gn -= 1;
                break;
            }
            let mut lf = T::NAN;
            let mut li = u32::MAX;
            let mut i = tid;
            while i < np {
                let ft = *trial_fit.add(i as usize);
                let mut fx = *fit.add(i as usize);
                if accepts(ft, fx) {
                    fx = ft;
                    *fit.add(i as usize) = ft;
                    *flags.add(i as usize) ^= 1;
                }
                if better(fx, i, lf, li) {
                    lf = fx;
                    li = i;
                }
                i += nthreads;
            }
            let r = block_best(lf, li, scratch_f, scratch_i);
            bf = r.0;
            bi = r.1;
            if tid == 0 && !hist.is_null() {
                *hist.add(gn as usize) = bf;
            }
        }

        // The best row out.
        let src = row(a, b, *flags.add(bi as usize), bi, st);
        let dst = best_x.add((p * st) as usize);
        let mut j = tid;
        while j < dim {
            *dst.add(j as usize) = *src.add(j as usize);
            j += nthreads;
        }
        if tid == 0 {
            *best_f.add(p as usize) = bf;
            *best_idx.add(p as usize) = bi;
            *gens_done.add(p as usize) = gn;
        }
    }
}

/// State words of a whole-grid run.
pub const STATE_GEN: usize = 0;
pub const STATE_TICKET: usize = 1;
pub const STATE_DONE: usize = 2;
pub const STATE_BEST: usize = 3;
/// How many u32 the state holds.
pub const STATE_WORDS: usize = 4;

/// How a thread group walks a grid-wide population: pass `p` serves individual
/// `p·groups + my_group`.
#[derive(Clone, Copy)]
pub(crate) struct Sweep {
    pub(crate) passes: u32,
    pub(crate) groups: u32,
    pub(crate) my_group: u32,
}

impl Sweep {
    /// The individual of pass `pass` (clamped to np − 1) and whether it exists.
    #[inline(always)]
    pub(crate) fn individual(&self, pass: u32, np: u32) -> (u32, bool) {
        let i0 = pass * self.groups + self.my_group;
        if i0 < np { (i0, true) } else { (np - 1, false) }
    }
}

/// How the grid layouts ([`step_with`], [`persistent_with`]) initialise and advance a thread group's
/// individuals: [`Builtin`] evaluates the built-in functions with the group; the
/// external family (`external.rs`) calls an objective linked in at run time.
pub(crate) trait Passes<T: LaneReal, O: LaneObjective<T> = BuiltinObjective> {
    /// As [`init_passes`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn init(
        s: &Setup<T, O>,
        gr: &Group,
        sw: Sweep,
        key: [u32; 2],
        pstream: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        flags: *mut u32,
        fit: *mut T,
        kc0: &[T; 4],
    ) -> (T, u32);
    /// As [`trial_passes`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn trial(
        s: &Setup<T, O>,
        gr: &Group,
        sw: Sweep,
        cache: &mut DrawCache,
        key: [u32; 2],
        pstream: u32,
        gn: u32,
        best_i: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        b: *mut T,
        flags_in: *const u32,
        flags_out: *mut u32,
        fit: *mut T,
        kc0: &[T; 4],
    ) -> (T, u32);
}

/// The passes that evaluate with the group: the built-in functions' and the separable
/// family's.
pub(crate) struct Builtin;

impl<T: LaneReal, O: LaneObjective<T>> Passes<T, O> for Builtin {
    #[inline(always)]
    unsafe fn init(
        s: &Setup<T, O>,
        gr: &Group,
        sw: Sweep,
        key: [u32; 2],
        pstream: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        flags: *mut u32,
        fit: *mut T,
        kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: forwarded.
        unsafe { init_passes(s, gr, sw, key, pstream, lo, hi, a, flags, fit, kc0) }
    }
    #[inline(always)]
    unsafe fn trial(
        s: &Setup<T, O>,
        gr: &Group,
        sw: Sweep,
        cache: &mut DrawCache,
        key: [u32; 2],
        pstream: u32,
        gn: u32,
        best_i: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        b: *mut T,
        flags_in: *const u32,
        flags_out: *mut u32,
        fit: *mut T,
        kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: forwarded.
        unsafe {
            trial_passes(
                s, gr, sw, cache, key, pstream, gn, best_i, lo, hi, a, b, flags_in, flags_out, fit,
                kc0,
            )
        }
    }
}

/// Initialises the group's individuals of a grid-wide population into buffer `a` (flags
/// to 0) and returns the thread's best (value, index).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn init_passes<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    sw: Sweep,
    key: [u32; 2],
    pstream: u32,
    lo: *const T,
    hi: *const T,
    a: *mut T,
    flags: *mut u32,
    fit: *mut T,
    kc0: &[T; 4],
) -> (T, u32) {
    // SAFETY: indices are < np; the host sizes flags and values for np individuals.
    unsafe {
        let (mut lf, mut li) = (T::NAN, u32::MAX);
        let mut pass = 0;
        while pass < sw.passes {
            let (i, active) = sw.individual(pass, s.np);
            let fx = init_one(s, gr, key, pstream, i, active, lo, hi, a, kc0);
            if active {
                if gr.lane == 0 {
                    *fit.add(i as usize) = fx;
                    *flags.add(i as usize) = 0;
                }
                if better(fx, i, lf, li) {
                    lf = fx;
                    li = i;
                }
            }
            pass += 1;
        }
        (lf, li)
    }
}

/// Generation `gn` of the group's individuals of a grid-wide population: trials read
/// `flags_in`, the new flags go to `flags_out`, values are updated in place. Returns the
/// thread's best (value, index).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn trial_passes<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    sw: Sweep,
    cache: &mut DrawCache,
    key: [u32; 2],
    pstream: u32,
    gn: u32,
    best_i: u32,
    lo: *const T,
    hi: *const T,
    a: *mut T,
    b: *mut T,
    flags_in: *const u32,
    flags_out: *mut u32,
    fit: *mut T,
    kc0: &[T; 4],
) -> (T, u32) {
    // SAFETY: indices are < np; the host sizes flags planes and values for np.
    unsafe {
        let (mut lf, mut li) = (T::NAN, u32::MAX);
        let mut pass = 0;
        while pass < sw.passes {
            let (i, active) = sw.individual(pass, s.np);
            let fi = *fit.add(i as usize);
            let (d, fl) = cache.get(
                s,
                gr,
                key,
                pstream,
                gn,
                pass,
                |q| q * sw.groups + sw.my_group,
                flags_in,
            );
            let (ft, acc) = trial_one(
                s, gr, key, pstream, gn, i, active, best_i, lo, hi, a, b, flags_in, fi, &d, &fl,
                kc0,
            );
            if active {
                let fx = if acc { ft } else { fi };
                if gr.lane == 0 {
                    *flags_out.add(i as usize) = fl[5] ^ (acc as u32);
                    *fit.add(i as usize) = fx;
                }
                if better(fx, i, lf, li) {
                    lf = fx;
                    li = i;
                }
            }
            pass += 1;
        }
        (lf, li)
    }
}

/// [`step_with`] with the built-in functions' passes.
#[inline(always)]
unsafe fn step<T: LaneReal>(s: Setup<T>, p: StepParams<T>) {
    // SAFETY: forwarded.
    unsafe { step_with::<T, _, Builtin>(s, p) }
}

/// One generation of one population spread over the grid (or its initialisation when
/// `init` is set), its individuals served by the passes of `E`. The last block to finish
/// reduces the blocks' bests.
#[inline(always)]
pub(crate) unsafe fn step_with<T: LaneReal, O: LaneObjective<T>, E: Passes<T, O>>(
    s: Setup<T, O>,
    p: StepParams<T>,
) {
    let StepParams {
        run: Run { gens, target, .. },
        init,
        pstream,
        seed,
        lo,
        hi,
        pop_a: a,
        pop_b: b,
        flags,
        fit,
        part_f,
        part_i,
        scratch_f,
        scratch_i,
        state,
        best_f,
        hist,
    } = p;
    let init = init != 0;
    // SAFETY: the host sizes the buffers: flags 2·np, partials gridDim, scratch
    // 32·gridDim, state STATE_WORDS, hist gens + 1 (or null).
    unsafe {
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let blk = _block_idx_x();
        let nblocks = _grid_dim_x();
        let np = s.np;
        let dim = s.tp.dim;
        let key = key_of(seed);
        let gn = if init {
            0
        } else {
            *(state.add(STATE_GEN) as *const u32) + 1
        };
        if !init && *(state.add(STATE_DONE) as *const u32) != 0 {
            return;
        }
        let best_i = *(state.add(STATE_BEST) as *const u32);
        let flags_in = flags.add(((gn + 1) % 2 * np) as usize);
        let flags_out = flags.add((gn % 2 * np) as usize);
        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups_per_block = nthreads / g;
        let groups = groups_per_block * nblocks;
        let my_group = blk * groups_per_block + tid / g;
        let passes = np.div_ceil(groups);
        let kc0 = s.obj.consts(chunk(dim, g, 0, gr.lane).0);
        let mut cache = DrawCache {
            pre: Draws {
                r: [0; 5],
                jrand: 0,
            },
            flags: [0; 6],
        };
        let sw = Sweep {
            passes,
            groups,
            my_group,
        };
        let (lf, li) = if init {
            E::init(&s, &gr, sw, key, pstream, lo, hi, a, flags_out, fit, &kc0)
        } else {
            E::trial(
                &s, &gr, sw, &mut cache, key, pstream, gn, best_i, lo, hi, a, b, flags_in,
                flags_out, fit, &kc0,
            )
        };
        let (bf, bi) = block_best(
            lf,
            li,
            scratch_f.add(32 * blk as usize),
            scratch_i.add(32 * blk as usize),
        );
        if tid == 0 {
            *part_f.add(blk as usize) = bf;
            *part_i.add(blk as usize) = bi;
            fence_gpu();
        }
        _syncthreads();
        // The last block to arrive reduces the partials.
        let last = if tid == 0 {
            atomic_inc(state.add(STATE_TICKET)) == nblocks - 1
        } else {
            false
        };
        let scratch_last = scratch_i.add(32 * blk as usize + 31);
        if tid == 0 {
            core::ptr::write_volatile(scratch_last, last as u32);
        }
        _syncthreads();
        if core::ptr::read_volatile(scratch_last) == 0 {
            return;
        }
        fence_gpu();
        let mut lf = T::NAN;
        let mut li = u32::MAX;
        let mut k = tid;
        while k < nblocks {
            let f = core::ptr::read_volatile(part_f.add(k as usize));
            let i = core::ptr::read_volatile(part_i.add(k as usize));
            if better(f, i, lf, li) {
                lf = f;
                li = i;
            }
            k += nthreads;
        }
        let (bf, bi) = block_best(
            lf,
            li,
            scratch_f.add(32 * blk as usize),
            scratch_i.add(32 * blk as usize),
        );
        if tid == 0 {
            *best_f = bf;
            *state.add(STATE_BEST) = bi;
            *state.add(STATE_GEN) = gn;
            if !hist.is_null() {
                *hist.add(gn as usize) = bf;
            }
            if gn >= gens || bf <= target {
                *state.add(STATE_DONE) = 1;
            }
            *state.add(STATE_TICKET) = 0;
            fence_gpu();
        }
    }
}

/// [`persistent_with`] with the built-in functions' passes, without a control block (the
/// code of a plain launch) or with one.
///
/// # Safety
/// As [`persistent_with`].
#[inline(always)]
unsafe fn persistent_entry<T: LaneReal>(s: Setup<T>, p: GridParams<T>) {
    // SAFETY: forwarded.
    unsafe {
        if p.ctl.is_null() {
            persistent_with::<T, _, Builtin, false>(s, p)
        } else {
            persistent_with::<T, _, Builtin, true>(s, p)
        }
    }
}

/// One population over the whole grid, all generations in one cooperative launch; a
/// grid barrier ends each generation. The blocks' bests of generation g sit in plane
/// g % 2 of the partials, so every block can reduce them after the barrier while the
/// next generation writes the other plane. The passes of `E` serve the individuals. With
/// `CTL`, under the control block `p.ctl` and from the generations done that the state
/// holds.
#[inline(always)]
pub(crate) unsafe fn persistent_with<
    T: LaneReal,
    O: LaneObjective<T>,
    E: Passes<T, O>,
    const CTL: bool,
>(
    s: Setup<T, O>,
    p: GridParams<T>,
) {
    let GridParams {
        run: Run { gens, target, .. },
        seed,
        pstream,
        lo,
        hi,
        pop_a: a,
        pop_b: b,
        flags,
        fit,
        part_f,
        part_i,
        sync,
        state,
        best_f,
        hist,
        ctl,
        report,
    } = p;
    // SAFETY: the host sizes the buffers: flags 2·np, partials 2·gridDim, state
    // STATE_WORDS, sync GRID_SYNC_WORDS, hist gens + 1 (or null); all blocks are
    // co-resident; `ctl` is null or a mapped control block of one slot.
    unsafe {
        let tid = _thread_idx_x();
        let blk = _block_idx_x();
        let nblocks = _grid_dim_x();
        let nthreads = _block_dim_x();
        let np = s.np;
        let dim = s.tp.dim;
        let key = key_of(seed);
        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups_per_block = nthreads / g;
        let groups = groups_per_block * nblocks;
        let my_group = blk * groups_per_block + tid / g;
        let passes = np.div_ceil(groups);
        let kc0 = s.obj.consts(chunk(dim, g, 0, gr.lane).0);
        // The block's reductions and what thread 0 passes on after a barrier go
        // through shared memory.
        let (sf, si, bc) = grid_shared::<T>();
        let mut epoch = 0u64;
        let mut cache = DrawCache {
            pre: Draws {
                r: [0; 5],
                jrand: 0,
            },
            flags: [0; 6],
        };
        let sw = Sweep {
            passes,
            groups,
            my_group,
        };
        // The generations done, as the host left them in the state: 0 for a fresh run,
        // which starts with the initialisation into buffer a (flags plane 0); a run that
        // goes on from generation gen0 finds its population in the buffers (rows as
        // flags plane gen0 % 2 says, values in fit) and its blocks' bests are found
        // again, over the same individuals in the same order.
        let gen0 = if CTL {
            read_volatile(state.add(STATE_GEN))
        } else {
            0
        };
        let (lf, li) = if gen0 == 0 {
            E::init(&s, &gr, sw, key, pstream, lo, hi, a, flags, fit, &kc0)
        } else {
            let (mut lf, mut li) = (T::NAN, u32::MAX);
            let mut pass = 0;
            while pass < sw.passes {
                let (i, active) = sw.individual(pass, np);
                let fx = *fit.add(i as usize);
                if active && better(fx, i, lf, li) {
                    lf = fx;
                    li = i;
                }
                pass += 1;
            }
            (lf, li)
        };
        // Single precision: each block publishes its best to the generation's slot
        // (see [`crate::abi::GRID_SYNC_WORDS`]), which every thread reads after the
        // barrier. Double precision, whose pairs do not fit one word: each block writes
        // its best to the generation's plane of partials, which every block reduces
        // after the barrier.
        let keyed = T::WORDS == 1;
        let slot = |g: u32| sync.add(GRID_SLOT_STRIDE * (1 + (g % 3) as usize));
        let plane0 = ((gen0 % 2) * nblocks) as usize;
        if keyed {
            let (bf0, bi0) = block_best_warp0(lf, li, sf, si);
            if tid == 0 {
                *part_f.add(plane0 + blk as usize) = bf0;
                atomic_max_u64(slot(gen0), !lane_key(bf0, bi0));
            }
        } else {
            let (bf0, bi0) = block_best(lf, li, sf, si);
            if tid == 0 {
                *part_f.add(plane0 + blk as usize) = bf0;
                *part_i.add(plane0 + blk as usize) = bi0;
            }
        }
        // The exact value of the best `bi` after generation `g` (the key holds −0 as +0
        // and NaN as the default NaN): the partial of the block that evaluated it.
        let exact = |g: u32, bi: u32, bf: T| {
            if keyed && bi < np {
                let b = (bi % groups) / groups_per_block;
                *part_f.add(((g % 2) * nblocks + b) as usize)
            } else {
                bf
            }
        };
        // Under control, block 0's thread 0 reads the host's command during each
        // reported generation (the start included) and the barrier that ends it
        // carries a stop to every block; in exact mode the report waits for the host
        // and one more barrier carries its answer.
        let on = CTL;
        let mut halt = false;
        // In single precision, the slot of the generation the last barrier ended, as
        // thread 0 read it for the block.
        let mut word = 0u64;
        let stop = on
            && blk == 0
            && tid == 0
            && !control::exact(report)
            && control::reports(report, gen0, gen0)
            && command(ctl, gen0, report) == STOP;
        if keyed {
            let (h, w) = grid_sync_word(sync, nblocks, &mut epoch, stop, slot(gen0), bc);
            (halt, word) = (on && h, w);
        } else if on {
            halt = grid_sync_or(sync, nblocks, &mut epoch, stop);
        } else {
            grid_sync(sync, nblocks, &mut epoch);
        }
        let mut gn = gen0;
        let (mut bf, mut bi);
        loop {
            // The best after generation gn: its slot, or plane gn % 2 of the partials.
            if keyed {
                let (kf, ki) = key_best(!word);
                bf = T::from_words([kf.to_bits(), 0]);
                bi = ki;
                // Thread 0 of every block read slot gn − 1 before this barrier, and
                // generation gn + 2 writes it after the next one: it is cleared for that
                // one.
                if blk == 0 && tid == 0 {
                    write_volatile(slot(gn + 2), 0);
                }
            } else {
                let plane = ((gn % 2) * nblocks) as usize;
                let mut lf = T::NAN;
                let mut li = u32::MAX;
                let mut k = tid;
                while k < nblocks {
                    let f = core::ptr::read_volatile(part_f.add(plane + k as usize));
                    let i = core::ptr::read_volatile(part_i.add(plane + k as usize));
                    if better(f, i, lf, li) {
                        lf = f;
                        li = i;
                    }
                    k += nthreads;
                }
                let r = block_best(lf, li, sf, si);
                bf = r.0;
                bi = r.1;
            }
            if blk == 0 && tid == 0 && !hist.is_null() {
                *hist.add(gn as usize) = exact(gn, bi, bf);
            }
            if gn >= gens || bf <= target || halt {
                break;
            }
            if on && control::reports(report, gen0, gn) {
                let mut stop = false;
                if blk == 0 && tid == 0 {
                    write_progress(ctl, gn, exact(gn, bi, bf));
                    stop = control::exact(report) && command(ctl, gn, report) == STOP;
                }
                if control::exact(report) && grid_sync_or(sync, nblocks, &mut epoch, stop) {
                    break;
                }
            }
            gn += 1;
            let stop = on
                && blk == 0
                && tid == 0
                && !control::exact(report)
                && control::reports(report, gen0, gn)
                && command(ctl, gn, report) == STOP;
            let flags_in = flags.add((((gn + 1) % 2) * np) as usize);
            let flags_out = flags.add(((gn % 2) * np) as usize);
            let (lf, li) = E::trial(
                &s, &gr, sw, &mut cache, key, pstream, gn, bi, lo, hi, a, b, flags_in, flags_out,
                fit, &kc0,
            );
            let plane = ((gn % 2) * nblocks) as usize;
            if keyed {
                let (pf, pi) = block_best_warp0(lf, li, sf, si);
                if tid == 0 {
                    *part_f.add(plane + blk as usize) = pf;
                    atomic_max_u64(slot(gn), !lane_key(pf, pi));
                }
            } else {
                let (pf, pi) = block_best(lf, li, sf, si);
                if tid == 0 {
                    *part_f.add(plane + blk as usize) = pf;
                    *part_i.add(plane + blk as usize) = pi;
                }
            }
            if keyed {
                let (h, w) = grid_sync_word(sync, nblocks, &mut epoch, stop, slot(gn), bc);
                (halt, word) = (on && h, w);
            } else if on {
                halt = grid_sync_or(sync, nblocks, &mut epoch, stop);
            } else {
                grid_sync(sync, nblocks, &mut epoch);
            }
        }
        if blk == 0 && tid == 0 {
            *best_f = exact(gn, bi, bf);
            *state.add(STATE_BEST) = bi;
            *state.add(STATE_GEN) = gn;
            *state.add(STATE_DONE) = 1;
        }
    }
}

/// Defines the entry point `$name` of the DE kernel `$body` for function `$func`: its
/// parameters are the fields of its parameter struct, as the field list gives them
/// (see [`crate::abi`]); it rebuilds the struct and passes it on.
macro_rules! de_entry {
    ($(#[$doc:meta])* $name:ident, $body:ident, $func:expr, $thesis:expr, $variants:expr;
     $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let p = $params::<$t> { $($f),* };
            let Run {
                strategy,
                crossover,
                bounds,
                formula,
                dim,
                np,
                f,
                cr,
                variant,
                ..
            } = p.run;
            // The thesis variants fix the strategy (and init-only bounds) at compile time.
            let (strategy, bounds) = if $thesis {
                (Strategy::Thesis as u32, BoundPolicy::InitOnly as u32)
            } else {
                (strategy, bounds)
            };
            let s = Setup::<$t>::new(
                $func as u32,
                formula,
                strategy,
                crossover,
                bounds,
                dim,
                np,
                f,
                cr,
                // Only the thesis-variant family reads the variant: the other kernels
                // keep the default's code (and its registers).
                if $variants { variant } else { 0 },
            );
            // SAFETY: forwarded from this kernel's contract.
            unsafe { $body(s, p) }
        }
    };
}

macro_rules! kernels {
    ($t:ty, $func:expr, $thesis:expr, $variants:expr, $batch:ident, $batch_ctl:ident,
        $step:ident, $grid:ident) => {
        crate::batch_params!(
            de_entry!(
                /// One block per population; see [`batch`].
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`BatchParams`] says.
                $batch,
                batch_plain,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
        crate::batch_params!(
            de_entry!(
                /// One block per population under a control block; see [`batch`].
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`BatchParams`] says and
                /// `ctl` a mapped control block of one slot per block.
                $batch_ctl,
                batch_controlled,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
        crate::step_params!(
            de_entry!(
                /// One generation (or the initialisation) of a grid-wide population; see
                /// [`step`].
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`StepParams`] says.
                $step,
                step,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
        crate::grid_params!(
            de_entry!(
                /// A whole run of one grid-wide population in one cooperative launch; see
                /// [`persistent`].
                ///
                /// # Safety
                /// Launched cooperatively by the host with buffers sized as [`GridParams`]
                /// says.
                $grid,
                persistent_entry,
                $func,
                $thesis,
                $variants
            ),
            $t
        );
    };
}

/// Every kernel of the registry's functions ([`crate::registry`]): per function and
/// precision, the classic, the thesis and the thesis-variant family's batch, step and
/// grid kernels, named as [`crate::registry::KernelKey`] names them (the build script
/// checks the names).
macro_rules! all_kernels {
    ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
        $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
        $(
            kernels!(f32, Function::$variant, false, false, ${concat(de_batch_f32_, $key)},
                ${concat(de_batch_f32_, $key, _ctl)},
                ${concat(de_step_f32_, $key)}, ${concat(de_grid_f32_, $key)});
            kernels!(f32, Function::$variant, true, false, ${concat(de_batch_f32_, $key, _thesis)},
                ${concat(de_batch_f32_, $key, _thesis_ctl)},
                ${concat(de_step_f32_, $key, _thesis)}, ${concat(de_grid_f32_, $key, _thesis)});
            kernels!(f32, Function::$variant, true, true,
                ${concat(de_batch_f32_, $key, _thesis_variant)},
                ${concat(de_batch_f32_, $key, _thesis_variant_ctl)},
                ${concat(de_step_f32_, $key, _thesis_variant)},
                ${concat(de_grid_f32_, $key, _thesis_variant)});
            kernels!(f64, Function::$variant, false, false, ${concat(de_batch_f64_, $key)},
                ${concat(de_batch_f64_, $key, _ctl)},
                ${concat(de_step_f64_, $key)}, ${concat(de_grid_f64_, $key)});
            kernels!(f64, Function::$variant, true, false, ${concat(de_batch_f64_, $key, _thesis)},
                ${concat(de_batch_f64_, $key, _thesis_ctl)},
                ${concat(de_step_f64_, $key, _thesis)}, ${concat(de_grid_f64_, $key, _thesis)});
            kernels!(f64, Function::$variant, true, true,
                ${concat(de_batch_f64_, $key, _thesis_variant)},
                ${concat(de_batch_f64_, $key, _thesis_variant_ctl)},
                ${concat(de_step_f64_, $key, _thesis_variant)},
                ${concat(de_grid_f64_, $key, _thesis_variant)});
        )*
    };
}

crate::builtin_functions!(all_kernels);

// The external family (`external.rs`) defines its entry points with the same macros, so
// that its kernels take exactly the built-in kernels' parameters.
pub(crate) use {de_entry, kernels as de_kernels};

/// Defines an evaluation entry point from [`EvalParams`]' field list.
macro_rules! eval_entry {
    ($(#[$doc:meta])* $name:ident; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            // SAFETY: forwarded.
            unsafe { evaluate_rows($params::<$t> { $($f),* }) }
        }
    };
}

crate::eval_params!(
    eval_entry!(
        /// Evaluates `n` row-major vectors (stride [`stride`]) into `out`; one group per
        /// vector.
        ///
        /// # Safety
        /// `x` holds `n · stride(dim)` values, `out` `n` (see [`EvalParams`]).
        evaluate_f32
    ),
    f32
);
crate::eval_params!(
    eval_entry!(
        /// As `evaluate_f32`, in double precision.
        ///
        /// # Safety
        /// As `evaluate_f32`.
        evaluate_f64
    ),
    f64
);

#[inline(always)]
unsafe fn evaluate_rows<T: LaneReal>(p: EvalParams<T>) {
    let EvalParams {
        x,
        out,
        function,
        formula,
        dim,
        n,
    } = p;
    // SAFETY: the host passes buffers as the kernels above require.
    unsafe {
        let o = BuiltinObjective {
            f: Function::from_u32(function).unwrap_or(Function::Sphere),
            formula: Formula::from_u32(formula).unwrap_or(Formula::Exact),
        };
        let g = group_width(dim);
        let tid = _block_idx_x() * _block_dim_x() + _thread_idx_x();
        let gr = Group::new(g, _thread_idx_x() & 31);
        let groups = _grid_dim_x() * _block_dim_x() / g;
        let mut i0 = tid / g;
        let st = stride(dim);
        let passes = n.div_ceil(groups);
        let mut pass = 0;
        while pass < passes {
            let active = i0 < n;
            let i = if active { i0 } else { n - 1 };
            let mut ev = Eval::<T>::new(&o);
            let mut c = 0;
            while c < rounds(dim) {
                let (j0, cnt) = chunk(dim, g, c, gr.lane);
                let v = if cnt > 0 {
                    T::load4(x.add((i * st + j0) as usize))
                } else {
                    [T::ZERO; 4]
                };
                ev.round(&gr, &o, v, j0, cnt, dim, &o.consts(j0));
                c += 1;
            }
            let val = ev.value(&gr, &o, dim);
            if active && gr.lane == 0 {
                *out.add(i as usize) = val;
            }
            i0 += groups;
            pass += 1;
        }
    }
}
