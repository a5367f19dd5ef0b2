//! The best (value, index) of a warp and of a block.

use super::*;

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
/// slower in the others, whose register allocation it upsets (more spills; measured in
/// docs/PERFORMANCE-HISTORY.md).
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
pub(crate) unsafe fn stage_warp_bests<T: LaneReal>(
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
pub(crate) unsafe fn best_of_warp_bests<T: LaneReal>(
    scratch_f: *mut T,
    scratch_i: *mut u32,
) -> (T, u32) {
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
pub(crate) unsafe fn block_best_warp0<T: LaneReal>(
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
pub(crate) fn lane_key<T: LaneReal>(f: T, i: u32) -> u64 {
    best_key(f32::from_bits(f.to_words()[0]), i)
}
