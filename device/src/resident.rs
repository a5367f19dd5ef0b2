//! The shared-memory-resident batch kernels (`de_batch_*_shared`): one block per
//! population as in the batch kernels of `kernels.rs`, with the population's current
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
//! control block is not served: the host launches these kernels for plain runs only
//! (`ctl` null), and a run always starts from generation 0.

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
pub use gpu::*;

#[cfg(target_arch = "nvptx64")]
mod gpu {
    use super::spare_rows;
    use core::arch::asm;
    use core::arch::nvptx::{_block_dim_x, _block_idx_x, _syncthreads, _thread_idx_x};
    use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;

    use crate::abi::{BatchParams, Run};
    use crate::de::{BoundPolicy, Draws, Strategy, accepts, better};
    use crate::functions::Function;
    use crate::kernels::{
        Group, LaneReal, RowPointers, Setup, block_best_with, de_entry, init_one, trial_rows,
    };
    use crate::lanes::LaneObjective;
    use crate::lanes::{chunk, group_width, rounds};
    use crate::philox::key_of;

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

    /// One block evolves one population through all generations with its rows in
    /// shared memory (see the module's documentation). Plain runs only: `ctl` and
    /// `gens_done` on entry are not read.
    ///
    /// # Safety
    /// The host sizes the buffers as for the batch kernel and launches with
    /// `resident_bytes(np, dim, spare, size_of::<T>())` bytes of dynamic shared memory,
    /// `spare ≤ np`, and at most [`super::MAX_PASSES`] passes per thread group.
    #[inline(always)]
    pub(crate) unsafe fn batch_resident<T: LaneReal>(s: Setup<T>, p: BatchParams<T>) {
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
            best_x,
            best_f,
            best_idx,
            gens_done,
            hist,
            ..
        } = p;
        // SAFETY: the host sizes every global buffer for gridDim populations and the
        // shared memory as the layout says (the caller's contract); the barriers order
        // the shared accesses as the module's documentation explains.
        unsafe {
            let p = _block_idx_x();
            let tid = _thread_idx_x();
            let nthreads = _block_dim_x();
            let np = s.np;
            let dim = s.tp.dim;
            let st = s.stride;
            let rb = core::mem::size_of::<T>() as u32;
            let key = key_of(*seeds.add(p as usize));
            let pstream = *streams.add(p as usize);
            let pop_off = (p * np) as usize;
            let ga = pop_a.add(pop_off * st as usize);
            let gb = pop_b.add(pop_off * st as usize);
            let flags = flags.add(pop_off);
            let fit_g = fit.add(pop_off);
            let hist = if hist.is_null() {
                hist
            } else {
                hist.add((p * (gens + 1)) as usize)
            };

            // The shared memory, as the module's layout says.
            let spare = spare_rows(dynamic_smem_size() as u64, np, dim, rb).unwrap_or(0);
            let cur = gpu_launch_sized_workgroup_mem::<Chunk16>() as *mut T;
            let spare_s = cur.add((np * st) as usize);
            let fit_s = spare_s.add((spare * st) as usize);
            let tfit_s = fit_s.add(np as usize);
            let scratch_f = tfit_s.add(np as usize);
            let scratch_i = scratch_f.add(32) as *mut u32;

            let g = group_width(dim);
            let gr = Group::new(g, tid & 31);
            let groups = nthreads / g;
            let my_group = tid / g;
            let passes = np.div_ceil(groups);
            let nr = rounds(dim);
            let kc0 = s.obj.consts(chunk(dim, g, 0, gr.lane).0);
            let mut cache = DrawCache {
                pre: Draws {
                    r: [0; 5],
                    jrand: 0,
                },
            };

            let mut pass = 0;
            while pass < passes {
                let i0 = pass * groups + my_group;
                let active = i0 < np;
                let i = if active { i0 } else { np - 1 };
                let fx = init_one(&s, &gr, key, pstream, i, active, lo, hi, cur, &kc0);
                if active && gr.lane == 0 {
                    *fit_s.add(i as usize) = fx;
                }
                pass += 1;
            }
            _syncthreads();
            let mut lf = T::NAN;
            let mut li = u32::MAX;
            let mut i = tid;
            while i < np {
                let fx = *fit_s.add(i as usize);
                if better(fx, i, lf, li) {
                    lf = fx;
                    li = i;
                }
                i += nthreads;
            }
            let (mut bf, mut bi) = block_best_with::<T, true>(lf, li, scratch_f, scratch_i);
            if tid == 0 && !hist.is_null() {
                *hist = bf;
            }

            let mut gn = 0;
            // Not `bf > target`: a NaN best never counts as having reached the target.
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
            while gn < gens && !(bf <= target) {
                gn += 1;
                let best_row = cur.add((bi * st) as usize);
                // Bit `pass`: the group's individual of that pass accepted its trial.
                let mut accepted = 0u64;
                let mut pass = 0;
                while pass < passes {
                    let i0 = pass * groups + my_group;
                    let active = i0 < np;
                    let i = if active { i0 } else { np - 1 };
                    let fi = *fit_s.add(i as usize);
                    let d = cache.get(&s, &gr, key, pstream, gn, pass, |q| q * groups + my_group);
                    let xi_row = cur.add((i * st) as usize);
                    let mut rrows = [xi_row; 5];
                    let mut k = 0;
                    while k < 5 {
                        if k < s.tp.strategy.draws() as usize {
                            rrows[k] = cur.add((d.r[k] * st) as usize);
                        }
                        k += 1;
                    }
                    let wait = if i < spare {
                        spare_s.add((i * st) as usize)
                    } else {
                        gb.add((i * st) as usize)
                    };
                    let rows = RowPointers {
                        xi: xi_row,
                        drawn: rrows,
                    };
                    let (ft, acc) = trial_rows(
                        &s, &gr, key, pstream, gn, i, active, lo, hi, &rows, best_row, wait, fi,
                        d.jrand, &kc0,
                    );
                    if active {
                        if gr.lane == 0 {
                            *tfit_s.add(i as usize) = ft;
                        }
                        if acc {
                            accepted |= 1u64 << (pass & 63);
                        }
                    }
                    pass += 1;
                }
                // Every trial of the generation is made: the accepted ones replace
                // their rows.
                _syncthreads();
                let mut pass = 0;
                while pass < passes {
                    if accepted & (1u64 << (pass & 63)) != 0 {
                        let i = pass * groups + my_group;
                        let wait = if i < spare {
                            spare_s.add((i * st) as usize)
                        } else {
                            gb.add((i * st) as usize)
                        };
                        copy_row(&gr, dim, nr, wait, cur.add((i * st) as usize));
                    }
                    pass += 1;
                }
                let mut lf = T::NAN;
                let mut li = u32::MAX;
                let mut i = tid;
                while i < np {
                    let ft = *tfit_s.add(i as usize);
                    let mut fx = *fit_s.add(i as usize);
                    if accepts(ft, fx) {
                        fx = ft;
                        *fit_s.add(i as usize) = ft;
                    }
                    if better(fx, i, lf, li) {
                        lf = fx;
                        li = i;
                    }
                    i += nthreads;
                }
                // Its barriers also order the copies before the next generation's reads.
                let r = block_best_with::<T, true>(lf, li, scratch_f, scratch_i);
                bf = r.0;
                bi = r.1;
                if tid == 0 && !hist.is_null() {
                    *hist.add(gn as usize) = bf;
                }
            }

            // The population out: rows to pop_a (flags 0), values to fit, the best row.
            let mut pass = 0;
            while pass < passes {
                let i = pass * groups + my_group;
                if i < np {
                    copy_row(
                        &gr,
                        dim,
                        nr,
                        cur.add((i * st) as usize),
                        ga.add((i * st) as usize),
                    );
                }
                pass += 1;
            }
            let mut i = tid;
            while i < np {
                *fit_g.add(i as usize) = *fit_s.add(i as usize);
                *flags.add(i as usize) = 0;
                i += nthreads;
            }
            let src = cur.add((bi * st) as usize);
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

    /// The resident batch kernels of one function and precision: the classic and the
    /// thesis family, named as [`crate::registry::KernelKey`] names them
    /// ([`crate::registry::Layout::BatchShared`]).
    macro_rules! resident_kernels {
        ($t:ty, $func:expr, $classic:ident, $thesis:ident) => {
            crate::batch_params!(
                de_entry!(
                    /// One block per population, its rows in shared memory; see
                    /// [`batch_resident`].
                    ///
                    /// # Safety
                    /// As [`batch_resident`].
                    $classic,
                    batch_resident,
                    $func,
                    false,
                    false
                ),
                $t
            );
            crate::batch_params!(
                de_entry!(
                    /// As the classic one, for the thesis strategy with init-only bounds.
                    ///
                    /// # Safety
                    /// As [`batch_resident`].
                    $thesis,
                    batch_resident,
                    $func,
                    true,
                    false
                ),
                $t
            );
        };
    }

    macro_rules! all_resident_kernels {
        ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
            $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
            $(
                resident_kernels!(f32, Function::$variant, ${concat(de_batch_f32_, $key, _shared)},
                    ${concat(de_batch_f32_, $key, _thesis_shared)});
                resident_kernels!(f64, Function::$variant, ${concat(de_batch_f64_, $key, _shared)},
                    ${concat(de_batch_f64_, $key, _thesis_shared)});
            )*
        };
    }

    crate::builtin_functions!(all_resident_kernels);
}
