//! The shared-memory-resident batch kernels (`de_batch_*_shared`): one block per
//! population as in the batch layout (`batch.rs`), with the population's current
//! rows in the block's shared memory for the whole run.
//!
//! # Layout of the block's dynamic shared memory
//!
//! In order, for `np` rows of `stride(dim)` values of `T` ([`resident_bytes`]):
//! - `cur`: the current population, `np` rows;
//! - `spare`: `spare` rows, where accepted trials wait (see below), `0 ≤ spare ≤ np`;
//! - `fit`, `trial_fit`: `np` values each;
//! - the best reduction's scratch: 32 values and 32 indices.
//!
//! The host gives the kernel as many bytes as it chose, and the kernel reads the
//! number of spare rows back from the launch's size (`%dynamic_smem_size`, through
//! [`spare_rows`]): no parameter beyond the batch kernels' own.
//!
//! # Synchronous generations
//!
//! Every trial of generation `g` is built from generation `g − 1`'s rows: an accepted
//! trial must not replace its row in `cur` before every trial of the generation is made.
//! So a trial is written where it waits: individual `i < spare` into spare row `i` in
//! shared memory, the others into their row of `pop_b` in global memory (the fallback
//! when the spare rows do not all fit). After the block barrier that ends the trials,
//! each thread group copies its accepted trials into `cur` (the lanes that wrote a chunk
//! read it back: no other thread touches a waiting row) and the selection runs as in
//! the batch kernel. The next generation reads `cur` after the barriers of the best
//! reduction.
//!
//! A trial is stored exactly when the batch kernel stores it (every round of a row
//! longer than one round; a row of one round only when accepted), with the same
//! arithmetic in the same order (`kernels::trial_rows`), the same draws and the same
//! selection and best reduction: the results are the batch kernel's bits.
//!
//! At the end the block writes its population back to `pop_a` (flags 0) and its values
//! to `fit`, so that the final population reads back as from the batch kernel. The
//! controlled entry points (`…_shared_ctl`) serve the control block and go on from the
//! generations done in `gens_done`, reading the population from the global buffers into
//! shared memory first (the rows as their flags say); the plain ones start from
//! generation 0 and carry no control code.

/// Dynamic shared memory (bytes) of a resident block: `np` rows of `stride(dim)` values
/// of `real_bytes` bytes, `spare` spare rows, two values per individual and the
/// reduction's scratch (see the module's layout).
pub const fn resident_bytes(np: u32, dim: u32, spare: u32, real_bytes: u32) -> u64 {
    let st = crate::lanes::stride(dim) as u64;
    let rb = real_bytes as u64;
    rb * (st * (np as u64 + spare as u64) + 2 * np as u64 + 32) + 4 * 32
}

/// The spare rows a block of `bytes` bytes of dynamic shared memory holds (at most
/// `np`), or `None` when the population itself does not fit.
pub const fn spare_rows(bytes: u64, np: u32, dim: u32, real_bytes: u32) -> Option<u32> {
    let fixed = resident_bytes(np, dim, 0, real_bytes);
    if bytes < fixed {
        return None;
    }
    let row = crate::lanes::stride(dim) as u64 * real_bytes as u64;
    let n = (bytes - fixed) / row;
    Some(if n > np as u64 { np } else { n as u32 })
}

/// The most passes (individuals per thread group) a resident block serves: a thread
/// keeps its group's acceptances of one generation in the bits of one word.
pub const MAX_PASSES: u32 = 64;

#[cfg(target_arch = "nvptx64")]
pub(crate) use gpu::*;

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use super::spare_rows;
    use core::arch::asm;
    use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;

    use crate::abi::BatchParams;
    use crate::batch::{Block, Controlled, Plain, Rows, Values, batch};
    use crate::de::Draws;
    use crate::functions::BuiltinObjective;
    use crate::kernels::{Group, LaneReal, RowPointers, Setup, init_one, row, trial_rows};
    use crate::lanes::LaneObjective;
    use crate::lanes::{chunk, rounds};

    /// The alignment the dynamic shared memory is declared with (16-byte row chunks).
    #[repr(C, align(16))]
    struct Chunk16([u8; 16]);

    /// The launch's dynamic shared memory in bytes.
    #[inline(always)]
    fn dynamic_smem_size() -> u32 {
        let r: u32;
        // SAFETY: reads a special register; no other effect.
        unsafe { asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) r) };
        r
    }

    /// Index draws amortised over a group as `kernels::DrawCache` does, without the
    /// flags (every current row is in `cur`).
    struct DrawCache {
        pre: Draws,
    }

    impl DrawCache {
        #[allow(clippy::too_many_arguments)]
        #[inline(always)]
        fn get<T: LaneReal>(
            &mut self,
            s: &Setup<T>,
            gr: &Group,
            key: [u32; 2],
            pstream: u32,
            g: u32,
            pass: u32,
            individual_of_pass: impl Fn(u32) -> u32,
        ) -> Draws {
            let slot = pass & (gr.g - 1);
            let ndraw = s.tp.strategy.draws();
            let jdim = if s.tp.strategy.crosses() { s.tp.dim } else { 0 };
            if slot == 0 {
                let i = individual_of_pass(pass + gr.lane).min(s.np - 1);
                self.pre = s.tp.variant.draws(key, pstream, i, g, s.np, ndraw, jdim);
            }
            let mut d = Draws {
                r: [0; 5],
                jrand: 0,
            };
            let mut k = 0;
            while k < 5 {
                if k < ndraw as usize {
                    d.r[k] = gr.idx_u32(self.pre.r[k], slot);
                }
                k += 1;
            }
            if jdim > 0 {
                d.jrand = gr.idx_u32(self.pre.jrand, slot);
            }
            d
        }
    }

    /// Copies row `src` to row `dst`, the group's lanes each its chunks (16-byte moves,
    /// padding included, as the rows are written); `nr` is `rounds(dim)`.
    ///
    /// # Safety
    /// Both rows hold `stride(dim)` values; no other thread accesses them meanwhile.
    #[inline(always)]
    unsafe fn copy_row<T: LaneReal>(gr: &Group, dim: u32, nr: u32, src: *const T, dst: *mut T) {
        let mut c = 0;
        while c < nr {
            let (j0, n) = chunk(dim, gr.g, c, gr.lane);
            if n > 0 {
                // SAFETY: the caller's contract; j0 + 4 ≤ stride.
                unsafe { T::store4(dst.add(j0 as usize), T::load4(src.add(j0 as usize))) };
            }
            c += 1;
        }
    }

    /// The plain resident entry points' code: the one batch body ([`crate::batch`])
    /// with [`Resident`] rows. `ctl` and `gens_done` on entry are not read.
    ///
    /// # Safety
    /// The host sizes the buffers as for the batch kernel and launches with
    /// `resident_bytes(np, dim, spare, size_of::<T>())` bytes of dynamic shared memory,
    /// `spare ≤ np`, and at most [`super::MAX_PASSES`] passes per thread group.
    #[inline(always)]
    pub(crate) unsafe fn batch_resident<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
        // SAFETY: forwarded.
        unsafe { batch::<T, _, Resident<T>, Plain>(s, p) }
    }

    /// The controlled resident entry points' code: as [`batch_resident`], serving the
    /// control block and going on from the generations done in `gens_done`.
    ///
    /// # Safety
    /// As [`batch_resident`]'s, and `ctl` is a mapped control block of gridDim slots.
    #[inline(always)]
    pub(crate) unsafe fn batch_resident_ctl<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
        // SAFETY: forwarded.
        unsafe { batch::<T, _, Resident<T>, Controlled>(s, p) }
    }

    /// The batch layout's rows resident in the block's shared memory (see the module's
    /// layout): the current rows `cur`, the spare rows where accepted trials wait, the
    /// values and the reduction's scratch.
    pub(crate) struct Resident<T> {
        spare: u32,
        cur: *mut T,
        spare_s: *mut T,
        fit_s: *mut T,
        tfit_s: *mut T,
        scratch_f: *mut T,
        scratch_i: *mut u32,
        passes: u32,
        nr: u32,
        kc0: [T; 4],
        cache: DrawCache,
    }

    impl<T: LaneReal> Resident<T> {
        /// Where individual `i`'s trial waits: its spare row in shared memory, or its
        /// row of `pop_b` past the spare rows.
        #[inline(always)]
        fn waiting(&self, b: &Block<T, BuiltinObjective>, i: u32) -> *mut T {
            // SAFETY: i < np: inside the spare rows or the block's rows of pop_b.
            unsafe {
                if i < self.spare {
                    self.spare_s.add((i * b.st) as usize)
                } else {
                    b.b.add((i * b.st) as usize)
                }
            }
        }
    }

    impl<T: LaneReal> Rows<T, BuiltinObjective> for Resident<T> {
        const FLAGS: bool = false;
        const TREE: bool = true;

        #[inline(always)]
        unsafe fn new(b: &Block<T, BuiltinObjective>) -> Self {
            let rb = core::mem::size_of::<T>() as u32;
            let (np, st) = (b.np, b.st);
            let spare = spare_rows(dynamic_smem_size() as u64, np, b.dim, rb).unwrap_or(0);
            // SAFETY: the shared memory holds the module's layout (the caller's contract).
            unsafe {
                let cur = gpu_launch_sized_workgroup_mem::<Chunk16>() as *mut T;
                let spare_s = cur.add((np * st) as usize);
                let fit_s = spare_s.add((spare * st) as usize);
                let tfit_s = fit_s.add(np as usize);
                let scratch_f = tfit_s.add(np as usize);
                let scratch_i = scratch_f.add(32) as *mut u32;
                Resident {
                    spare,
                    cur,
                    spare_s,
                    fit_s,
                    tfit_s,
                    scratch_f,
                    scratch_i,
                    passes: b.passes(),
                    nr: rounds(b.dim),
                    kc0: b.s.obj.consts(chunk(b.dim, b.gr.g, 0, b.gr.lane).0),
                    cache: DrawCache {
                        pre: Draws {
                            r: [0; 5],
                            jrand: 0,
                        },
                    },
                }
            }
        }

        #[inline(always)]
        fn values(&self, _b: &Block<T, BuiltinObjective>) -> Values<T> {
            Values {
                fit: self.fit_s,
                trial_fit: self.tfit_s,
                scratch_f: self.scratch_f,
                scratch_i: self.scratch_i,
            }
        }

        #[inline(always)]
        unsafe fn init(&mut self, b: &Block<T, BuiltinObjective>) {
            let mut pass = 0;
            while pass < self.passes {
                let (i, active) = b.individual(pass);
                // SAFETY: the caller's contract; i < np.
                unsafe {
                    let fx = init_one(
                        &b.s, &b.gr, b.key, b.pstream, i, active, b.lo, b.hi, self.cur, &self.kc0,
                    );
                    if active && b.gr.lane == 0 {
                        *self.fit_s.add(i as usize) = fx;
                    }
                }
                pass += 1;
            }
        }

        #[inline(always)]
        unsafe fn resume(&mut self, b: &Block<T, BuiltinObjective>) {
            // The population in: each row from the buffer its flag names, the values
            // from `fit` (what `finish` writes, or the batch kernel's buffers).
            let st = b.st;
            // SAFETY: the caller's contract; every index is < np.
            unsafe {
                let mut pass = 0;
                while pass < self.passes {
                    let i = pass * b.groups + b.my_group;
                    if i < b.np {
                        copy_row(
                            &b.gr,
                            b.dim,
                            self.nr,
                            row(b.a, b.b, *b.flags.add(i as usize), i, st),
                            self.cur.add((i * st) as usize),
                        );
                    }
                    pass += 1;
                }
                let mut i = b.tid;
                while i < b.np {
                    *self.fit_s.add(i as usize) = *b.fit.add(i as usize);
                    i += b.nthreads;
                }
            }
        }

        #[inline(always)]
        unsafe fn trials(&mut self, b: &Block<T, BuiltinObjective>, gn: u32, bi: u32) -> u64 {
            let st = b.st;
            // SAFETY: the caller's contract; every index is < np.
            unsafe {
                let best_row = self.cur.add((bi * st) as usize);
                // Bit `pass`: the group's individual of that pass accepted its trial.
                let mut accepted = 0u64;
                let mut pass = 0;
                while pass < self.passes {
                    let (i, active) = b.individual(pass);
                    let fi = *self.fit_s.add(i as usize);
                    let d = self
                        .cache
                        .get(&b.s, &b.gr, b.key, b.pstream, gn, pass, |q| {
                            q * b.groups + b.my_group
                        });
                    let xi_row = self.cur.add((i * st) as usize);
                    let mut rrows = [xi_row; 5];
                    let mut k = 0;
                    while k < 5 {
                        if k < b.s.tp.strategy.draws() as usize {
                            rrows[k] = self.cur.add((d.r[k] * st) as usize);
                        }
                        k += 1;
                    }
                    let wait = self.waiting(b, i);
                    let rows = RowPointers {
                        xi: xi_row,
                        drawn: rrows,
                    };
                    let (ft, acc) = trial_rows(
                        &b.s, &b.gr, b.key, b.pstream, gn, i, active, b.lo, b.hi, &rows, best_row,
                        wait, fi, d.jrand, &self.kc0,
                    );
                    if active {
                        if b.gr.lane == 0 {
                            *self.tfit_s.add(i as usize) = ft;
                        }
                        if acc {
                            accepted |= 1u64 << (pass & 63);
                        }
                    }
                    pass += 1;
                }
                accepted
            }
        }

        #[inline(always)]
        unsafe fn accept(&self, b: &Block<T, BuiltinObjective>, accepted: u64) {
            // Every trial of the generation is made: the accepted ones replace their
            // rows. The best reduction's barriers order the copies before the next
            // generation's reads.
            let mut pass = 0;
            while pass < self.passes {
                if accepted & (1u64 << (pass & 63)) != 0 {
                    let i = pass * b.groups + b.my_group;
                    let wait = self.waiting(b, i);
                    // SAFETY: the lanes that wrote the waiting row's chunks read them
                    // back; row i of cur is this group's alone meanwhile.
                    unsafe {
                        copy_row(
                            &b.gr,
                            b.dim,
                            self.nr,
                            wait,
                            self.cur.add((i * b.st) as usize),
                        )
                    };
                }
                pass += 1;
            }
        }

        #[inline(always)]
        unsafe fn finish(&self, b: &Block<T, BuiltinObjective>) {
            // The population out: rows to pop_a (flags 0), values to fit.
            let st = b.st;
            // SAFETY: the caller's contract; every index is < np.
            unsafe {
                let mut pass = 0;
                while pass < self.passes {
                    let i = pass * b.groups + b.my_group;
                    if i < b.np {
                        copy_row(
                            &b.gr,
                            b.dim,
                            self.nr,
                            self.cur.add((i * st) as usize),
                            b.a.add((i * st) as usize),
                        );
                    }
                    pass += 1;
                }
                let mut i = b.tid;
                while i < b.np {
                    *b.fit.add(i as usize) = *self.fit_s.add(i as usize);
                    *b.flags.add(i as usize) = 0;
                    i += b.nthreads;
                }
            }
        }

        #[inline(always)]
        unsafe fn best_row(&self, b: &Block<T, BuiltinObjective>, bi: u32) -> *const T {
            // SAFETY: bi < np: a row of cur.
            unsafe { self.cur.add((bi * b.st) as usize) }
        }
    }
}
