//! The pipelined batch kernels (`de_batch_*_pipelined`): one block per population as in
//! the batch layout (`batch.rs`), the population in global memory, and each thread's
//! chunks of the next individual's rows (x_i and the drawn rows) copied into shared
//! memory with `cp.async` while the current individual's trial is built and evaluated.
//!
//! # Why
//! The batch kernel loads an individual's rows when its pass begins and waits for them:
//! on populations too large to stay in shared memory (`resident.rs`) the rows come from
//! L2 or HBM, and the warps of one block per SM do not hide that latency. Here the loads
//! of pass `p + 1` are in flight during the arithmetic of pass `p`, and they take no
//! registers while they are: the data lands in shared memory.
//!
//! # Layout of the block's dynamic shared memory
//!
//! [`STAGES`] stages × ([`staged_rows`]`(draws)`) rows × `blockDim` threads × one chunk
//! of four values of `T` ([`pipelined_bytes`]). Chunk `(stage, row, tid)` sits at chunk
//! index `(stage · rows + row) · blockDim + tid`: a warp's chunks of one row are
//! consecutive, so its 16-byte accesses have no bank conflicts. Row 0 of a stage is x_i,
//! row `1 + k` the strategy's drawn row `k`.
//!
//! Every thread copies and reads only its own chunks: no thread waits for another's
//! copies, and `cp.async.wait_group` (per thread) is the only synchronisation the
//! stages need. A thread's copies into a stage are issued after its reads of that stage
//! two passes earlier have been consumed by the evaluation (their values feed the
//! trial's value, which is stored before the next pass begins).
//!
//! # One round
//! A thread holds one chunk of a row only when the row fits in one round of its group
//! (`rounds(dim) == 1`: D ≤ 128); the host launches these kernels for such jobs only.
//! The controlled entry points (`…_pipelined_ctl`) serve the control block and go on
//! from the generations done in `gens_done` (the rows are in the global buffers either
//! way); the plain ones start from generation 0 and carry no control code.
//!
//! # The same bits
//! The trial is built by `kernels::trial_rows` from the same values in the same order,
//! with the same draws (`kernels::DrawCache`, asked for pass `p + 1` before pass `p` is
//! evaluated, in the order of the passes), the same selection and best reduction as the
//! batch kernel's: the results are the batch kernel's bits.
//!
//! # Architecture
//! `cp.async` is an sm_80 instruction: the build script raises these kernels' modules
//! to `.target sm_80` (`registry::PIPELINED_ARCH`; the others stay at the build's
//! architecture), and the host refuses them on older GPUs.

/// Stages of the pipeline: the pass being evaluated and the pass being copied.
pub const STAGES: u32 = 2;

/// Rows a thread stages per individual: x_i and the strategy's `draws` drawn rows.
pub const fn staged_rows(draws: u32) -> u32 {
    draws + 1
}

/// Dynamic shared memory (bytes) of a pipelined block of `threads` threads for a
/// strategy with `draws` drawn rows (see the module's layout).
pub const fn pipelined_bytes(threads: u32, draws: u32, real_bytes: u32) -> u64 {
    STAGES as u64 * staged_rows(draws) as u64 * threads as u64 * 4 * real_bytes as u64
}

#[cfg(target_arch = "nvptx64")]
pub(crate) use gpu::*;

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use core::arch::asm;
    use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;

    use crate::abi::BatchParams;
    use crate::batch::{Block, Controlled, Lanes, Plain, Rows, batch};
    use crate::de::Draws;
    use crate::functions::BuiltinObjective;
    use crate::kernels::{DrawCache, Group, LaneReal, RowSource, Setup, Sweep, row, trial_rows};
    use crate::lanes::chunk;

    use super::{STAGES, staged_rows};

    /// The alignment the dynamic shared memory is declared with (16-byte chunks).
    #[repr(C, align(16))]
    struct Chunk16([u8; 16]);

    /// The shared-memory address (the `.shared` window's offset) of a generic pointer
    /// into the block's shared memory.
    #[inline(always)]
    fn shared_address<T>(p: *const T) -> u32 {
        let r: u64;
        // SAFETY: converts an address; no memory is touched.
        unsafe {
            asm!("cvta.to.shared.u64 {r}, {p};", r = out(reg64) r, p = in(reg64) p as u64,
                 options(pure, nomem, nostack))
        };
        r as u32
    }

    /// Starts copying 16 bytes from global `src` to shared `dst` (L2 only, not L1).
    ///
    /// # Safety
    /// `src` addresses 16 readable bytes of global memory, `dst` 16 bytes of the block's
    /// shared memory that no access of this thread touches before the copy's group is
    /// waited for; both 16-byte aligned.
    #[inline(always)]
    unsafe fn cp_async_16(dst: u32, src: *const u8) {
        // SAFETY: the caller's contract. No `nomem`: the compiler keeps this thread's
        // shared-memory accesses in order around it.
        unsafe {
            asm!("cp.async.cg.shared.global [{d}], [{s}], 16;", d = in(reg32) dst,
                 s = in(reg64) src, options(nostack))
        };
    }

    /// Closes the group of this thread's copies started since the last one.
    #[inline(always)]
    fn cp_async_commit() {
        // SAFETY: no operands; orders nothing beyond this thread's copies.
        unsafe { asm!("cp.async.commit_group;", options(nostack)) };
    }

    /// Waits until at most one group of this thread's copies is in flight: every group
    /// but the last committed one has landed.
    #[inline(always)]
    fn cp_async_wait_all_but_one() {
        // SAFETY: no operands.
        unsafe { asm!("cp.async.wait_group 1;", options(nostack)) };
    }

    /// Loads four values of `T` from the block's shared memory at shared address
    /// `addr` (a 32-bit address: no 64-bit pointer stays live for the reads).
    ///
    /// # Safety
    /// `addr` addresses `4 · size_of::<T>()` bytes of the block's shared memory, aligned
    /// to 16 bytes, whose writes this thread has waited for.
    #[inline(always)]
    unsafe fn load4_shared<T: LaneReal>(addr: u32) -> [T; 4] {
        if T::WORDS == 1 {
            let (a, b, c, d): (u32, u32, u32, u32);
            // SAFETY: the caller's contract.
            unsafe {
                asm!("ld.shared.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];", a = out(reg32) a,
                     b = out(reg32) b, c = out(reg32) c, d = out(reg32) d, p = in(reg32) addr,
                     options(readonly, nostack, preserves_flags))
            };
            [a, b, c, d].map(|w| T::from_words([w, 0]))
        } else {
            let (a, b, c, d): (u64, u64, u64, u64);
            // SAFETY: the caller's contract (32 bytes).
            unsafe {
                asm!("ld.shared.v2.b64 {{{a}, {b}}}, [{p}];",
                     "ld.shared.v2.b64 {{{c}, {d}}}, [{p}+16];", a = out(reg64) a,
                     b = out(reg64) b, c = out(reg64) c, d = out(reg64) d, p = in(reg32) addr,
                     options(readonly, nostack, preserves_flags))
            };
            [a, b, c, d].map(|w| T::from_words([w as u32, (w >> 32) as u32]))
        }
    }

    /// The lane's chunk of one individual's rows in a stage: x_i at shared address
    /// `base`, drawn row `k` at `base + (k + 1) · step` (bytes).
    struct Staged {
        base: u32,
        step: u32,
    }

    impl<T: LaneReal> RowSource<T> for Staged {
        #[inline(always)]
        unsafe fn xi(&self, _off: usize) -> [T; 4] {
            // SAFETY: one round: the lane's only chunk, landed (the caller waited).
            unsafe { load4_shared(self.base) }
        }
        #[inline(always)]
        unsafe fn drawn(&self, k: usize, _off: usize) -> [T; 4] {
            // SAFETY: as above; k < draws, so the row is inside the stage.
            unsafe { load4_shared(self.base + (k as u32 + 1) * self.step) }
        }
    }

    /// Where a thread's copies go: its chunk of row 0 of stage 0 at shared address
    /// `mine_sh`, a row further `row_bytes` on, a stage `stage_bytes`; the thread's
    /// chunk `j0` (`n` components, none when 0) of each of the `1 + ndraw` rows.
    struct Slots {
        mine_sh: u32,
        stage_bytes: u32,
        row_bytes: u32,
        j0: u32,
        n: u32,
        ndraw: u32,
    }

    impl Slots {
        /// Starts the copies of the thread's chunks of individual `i`'s rows (x_i in
        /// buffer `fl[5]`, then the drawn rows `d.r[k]` in buffers `fl[k]`) into `stage`,
        /// and closes their group.
        ///
        /// # Safety
        /// `pop` is the block's population; `i` and the drawn indices are below its
        /// size; the block's dynamic shared memory holds the module's layout, and the
        /// thread has consumed its reads of `stage`.
        #[inline(always)]
        unsafe fn start<T: LaneReal>(
            &self,
            stage: u32,
            pop: &Population<T>,
            i: u32,
            d: &Draws,
            fl: &[u32; 6],
        ) {
            if self.n > 0 {
                let dst = self.mine_sh + stage * self.stage_bytes;
                let chunk_bytes = 4 * core::mem::size_of::<T>() as u32;
                let mut k = 0;
                while k <= self.ndraw {
                    let src = if k == 0 {
                        row(pop.a, pop.b, fl[5], i, pop.st)
                    } else {
                        let r = (k - 1) as usize;
                        row(pop.a, pop.b, fl[r], d.r[r], pop.st)
                    };
                    // SAFETY: chunk j0 of the row (j0 + 4 ≤ stride; rows 16-byte aligned).
                    let src = unsafe { src.add(self.j0 as usize) } as *const u8;
                    let dst = dst + k * self.row_bytes;
                    let mut q = 0;
                    while q < chunk_bytes {
                        // SAFETY: the row's chunk into the thread's own slot of the
                        // stage, whose earlier reads are consumed (the caller's contract).
                        unsafe { cp_async_16(dst + q, src.add(q as usize)) };
                        q += 16;
                    }
                    k += 1;
                }
            }
            cp_async_commit();
        }
    }

    /// The block's population in global memory: rows in buffers `a` and `b` (`st`
    /// values each) as `flags` says, values in `fit`.
    struct Population<T> {
        a: *mut T,
        b: *mut T,
        st: u32,
        flags: *mut u32,
        fit: *mut T,
    }

    /// Draws pass `q`'s indices (in the order of the passes: `cache` serves them) and
    /// starts the copies of its rows into stage `q mod STAGES`; returns what its
    /// evaluation needs.
    ///
    /// # Safety
    /// As [`Slots::start`]; `q` < the sweep's passes.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn start_pass<T: LaneReal>(
        s: &Setup<T>,
        gr: &Group,
        key: [u32; 2],
        pstream: u32,
        gn: u32,
        q: u32,
        sweep: &Sweep,
        pop: &Population<T>,
        cache: &mut DrawCache,
        slots: &Slots,
    ) -> Pass<T> {
        let (d, fl) = cache.get(
            s,
            gr,
            key,
            pstream,
            gn,
            q,
            |q| q * sweep.groups + sweep.my_group,
            pop.flags,
        );
        let (i, _) = sweep.individual(q, s.np);
        // SAFETY: the caller's contract; i < np.
        unsafe {
            slots.start(q % STAGES, pop, i, &d, &fl);
            Pass {
                jrand: d.jrand,
                spare_flag: fl[5] ^ 1,
                fit: *pop.fit.add(i as usize),
            }
        }
    }

    /// What a pass needs of its individual once its rows are staged (beside the
    /// individual, which the pass gives again).
    #[derive(Clone, Copy)]
    struct Pass<T> {
        jrand: u32,
        /// The buffer x_i is not in: where its trial goes.
        spare_flag: u32,
        fit: T,
    }

    /// The plain pipelined entry points' code: the one batch body ([`crate::batch`])
    /// with [`Pipelined`] rows. `ctl` and `gens_done` on entry are not read.
    ///
    /// # Safety
    /// The host sizes the buffers as for the batch kernel, launches on an sm_80 or later
    /// GPU with `pipelined_bytes(blockDim, draws, size_of::<T>())` bytes of dynamic
    /// shared memory, and only for `rounds(dim) == 1`.
    #[inline(always)]
    pub(crate) unsafe fn batch_pipelined<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
        // SAFETY: forwarded.
        unsafe { batch::<T, _, Pipelined<T>, Plain>(s, p) }
    }

    /// The controlled pipelined entry points' code: as [`batch_pipelined`], serving the
    /// control block and going on from the generations done in `gens_done`.
    ///
    /// # Safety
    /// As [`batch_pipelined`]'s, and `ctl` is a mapped control block of gridDim slots.
    #[inline(always)]
    pub(crate) unsafe fn batch_pipelined_ctl<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
        // SAFETY: forwarded.
        unsafe { batch::<T, _, Pipelined<T>, Controlled>(s, p) }
    }

    /// The batch layout's rows in global memory as [`Lanes`] keeps them, each pass's
    /// rows staged in shared memory one pass ahead (see the module's documentation).
    /// The initialisation is [`Lanes`]'.
    pub(crate) struct Pipelined<T> {
        lanes: Lanes<T>,
        slots: Slots,
        sweep: Sweep,
        pop: Population<T>,
    }

    impl<T: LaneReal> Rows<T, BuiltinObjective> for Pipelined<T> {
        #[inline(always)]
        unsafe fn new(b: &Block<T, BuiltinObjective>) -> Self {
            // SAFETY: forwarded.
            let lanes = unsafe { <Lanes<T> as Rows<T, BuiltinObjective>>::new(b) };
            let (j0, n) = chunk(b.dim, b.gr.g, 0, b.gr.lane);
            let ndraw = b.s.tp.strategy.draws();
            // The thread's chunk of row 0 in stage 0; a row further is `row_vals`
            // values on, a stage `stage_vals`.
            let row_vals = (b.nthreads * 4) as usize;
            let stage_vals = staged_rows(ndraw) as usize * row_vals;
            let slots = gpu_launch_sized_workgroup_mem::<Chunk16>() as *mut T;
            // SAFETY: the thread's chunk inside the launch's shared memory (the caller's
            // contract gives the module's layout).
            let mine = unsafe { slots.add((b.tid * 4) as usize) };
            Pipelined {
                slots: Slots {
                    mine_sh: shared_address(mine),
                    stage_bytes: (stage_vals * core::mem::size_of::<T>()) as u32,
                    row_bytes: (row_vals * core::mem::size_of::<T>()) as u32,
                    j0,
                    n,
                    ndraw,
                },
                sweep: Sweep {
                    passes: lanes.passes,
                    groups: b.groups,
                    my_group: b.my_group,
                },
                pop: Population {
                    a: b.a,
                    b: b.b,
                    st: b.st,
                    flags: b.flags,
                    fit: b.fit,
                },
                lanes,
            }
        }

        #[inline(always)]
        unsafe fn init(&mut self, b: &Block<T, BuiltinObjective>) {
            // SAFETY: forwarded.
            unsafe { <Lanes<T> as Rows<T, BuiltinObjective>>::init(&mut self.lanes, b) }
        }

        #[inline(always)]
        unsafe fn trials(&mut self, b: &Block<T, BuiltinObjective>, gn: u32, bi: u32) -> u64 {
            let Block {
                s,
                gr,
                key,
                pstream,
                lo,
                hi,
                a,
                b: bb,
                flags,
                trial_fit,
                st,
                np,
                ..
            } = *b;
            let (passes, sweep, pop, slots) =
                (self.sweep.passes, &self.sweep, &self.pop, &self.slots);
            let cache = &mut self.lanes.cache;
            let kc0 = &self.lanes.kc0;
            // SAFETY: the caller's contract; every index is < np, and each thread's
            // copies are waited for before it reads them.
            unsafe {
                let best_row = row(a, bb, *flags.add(bi as usize), bi, st);
                let mut cur = start_pass(&s, &gr, key, pstream, gn, 0, sweep, pop, cache, slots);
                let mut pass = 0;
                while pass < passes {
                    let next = if pass + 1 < passes {
                        start_pass(
                            &s,
                            &gr,
                            key,
                            pstream,
                            gn,
                            pass + 1,
                            sweep,
                            pop,
                            cache,
                            slots,
                        )
                    } else {
                        // An empty group: the wait below then leaves none in flight.
                        cp_async_commit();
                        cur
                    };
                    cp_async_wait_all_but_one();
                    let rows = Staged {
                        base: slots.mine_sh + (pass % STAGES) * slots.stage_bytes,
                        step: slots.row_bytes,
                    };
                    let (i, active) = sweep.individual(pass, np);
                    let spare = row(a, bb, cur.spare_flag, i, st);
                    let (ft, _) = trial_rows(
                        &s, &gr, key, pstream, gn, i, active, lo, hi, &rows, best_row, spare,
                        cur.fit, cur.jrand, kc0,
                    );
                    if active && gr.lane == 0 {
                        *trial_fit.add(i as usize) = ft;
                    }
                    cur = next;
                    pass += 1;
                }
            }
            0
        }
    }
}
