//! The warp-level steps of the adaptive kernels' selection: the record of 32 trials by
//! a butterfly and the records' tree, sums and scans of counts, and the values' order
//! key for the atomic search of the best.

use crate::adaptive::Successes;
use crate::kernels::{LaneReal, shfl_bfly, shfl_up};
use crate::real::Real;

// A chunk's record fits the 24 words `adaptive_ranking_words` gives it.
const _: () = assert!(core::mem::size_of::<Successes<f64>>() <= 96);

/// A value's place in the order of [`better`](crate::de::better) as an unsigned key:
/// NaN last, −0 as +0, the others by their bits (sign flipped, negatives reversed).
#[inline(always)]
pub(super) fn order_key<T: LaneReal>(v: T) -> u64 {
    if v.is_nan() {
        return u64::MAX;
    }
    let v = if v == T::ZERO { T::ZERO } else { v };
    let w = v.to_words();
    let (bits, sign) = if T::WORDS == 2 {
        (w[0] as u64 | ((w[1] as u64) << 32), 1u64 << 63)
    } else {
        (w[0] as u64, 1u64 << 31)
    };
    if bits & sign != 0 {
        !bits & (sign | (sign - 1))
    } else {
        bits | sign
    }
}

/// `v` of lane `lane ^ m`.
#[inline(always)]
pub(super) fn xor_lane<T: LaneReal>(v: T, m: u32) -> T {
    let w = v.to_words();
    let a = shfl_bfly(w[0], m, 0x1f);
    let b = if T::WORDS == 2 {
        shfl_bfly(w[1], m, 0x1f)
    } else {
        0
    };
    T::from_words([a, b])
}

/// The record of the warp's 32 leaves, in every lane: the pairwise tree (distances 1,
/// 2, 4, 8, 16; a merge is commutative bit for bit, so both lanes of a pair hold the
/// node).
#[inline(always)]
pub(super) fn warp_record<T: LaneReal>(mut r: Successes<T>) -> Successes<T> {
    let mut m = 1;
    while m < 32 {
        let o = Successes {
            count: shfl_bfly(r.count, m, 0x1f),
            f: xor_lane(r.f, m),
            f2: xor_lane(r.f2, m),
            cr: xor_lane(r.cr, m),
            cr2: xor_lane(r.cr2, m),
            wf: xor_lane(r.wf, m),
            wf2: xor_lane(r.wf2, m),
            wcr: xor_lane(r.wcr, m),
            wcr2: xor_lane(r.wcr2, m),
            w: xor_lane(r.w, m),
            cr_max: xor_lane(r.cr_max, m),
        };
        r = r.merge(o);
        m *= 2;
    }
    r
}

/// The records of `chunks` chunks (`parts`) merged into one, by one warp: the pairwise
/// tree 32 nodes at a time, each level's nodes written after the level below (from
/// `parts + chunks` on), the chunks' records left as they are. Every lane gets it.
///
/// # Safety
/// The whole warp calls it; `parts` holds `chunks` records and room for the levels
/// above them (fewer than `chunks / 31 + 4` records); no other thread writes there
/// meanwhile.
#[inline(always)]
pub(super) unsafe fn warp_merge_records<T: LaneReal>(
    parts: *mut Successes<T>,
    chunks: usize,
    lane: u32,
) -> Successes<T> {
    // SAFETY: the caller's contract; a level's nodes are written by lane 0 and read by
    // the warp after the shuffles that follow the write, which order them.
    unsafe {
        let (mut level, mut count) = (parts, chunks);
        loop {
            let mut r = Successes::default();
            let groups = count.div_ceil(32);
            let mut g = 0;
            while g < groups {
                let k = g * 32 + lane as usize;
                let leaf = if k < count {
                    *level.add(k)
                } else {
                    Successes::default()
                };
                r = warp_record(leaf);
                if groups > 1 && lane == 0 {
                    *level.add(count + g) = r;
                }
                g += 1;
            }
            if groups <= 1 {
                return r;
            }
            (level, count) = (level.add(count), groups);
        }
    }
}

/// How many successes the chunks before chunk `c` hold (their records' counts), in
/// every lane of the warp.
///
/// # Safety
/// The whole warp calls it; `parts` holds at least `c` records.
#[inline(always)]
pub(super) unsafe fn warp_count_before<T: Real>(
    parts: *const Successes<T>,
    c: usize,
    lane: u32,
) -> u32 {
    let mut sum = 0u32;
    let mut c0 = 0;
    while c0 < c {
        let k = c0 + lane as usize;
        // SAFETY: the caller's contract (k < c).
        let v = if k < c {
            unsafe { (*parts.add(k)).count }
        } else {
            0
        };
        sum += warp_sum(v);
        c0 += 32;
    }
    sum
}

/// The sum of `counts[0 .. c]`, in every lane of the warp.
///
/// # Safety
/// The whole warp calls it; `counts` holds at least `c` words.
#[inline(always)]
pub(super) unsafe fn warp_sum_before(counts: *const u32, c: usize, lane: u32) -> u32 {
    let mut sum = 0u32;
    let mut c0 = 0;
    while c0 < c {
        let k = c0 + lane as usize;
        // SAFETY: the caller's contract (k < c).
        let v = if k < c { unsafe { *counts.add(k) } } else { 0 };
        sum += warp_sum(v);
        c0 += 32;
    }
    sum
}

/// The warp's sum of `v`, in every lane.
#[inline(always)]
pub(super) fn warp_sum(mut v: u32) -> u32 {
    let mut m = 1;
    while m < 32 {
        v += shfl_bfly(v, m, 0x1f);
        m *= 2;
    }
    v
}

/// How many lanes below this one have `flag` set.
#[inline(always)]
pub(super) fn warp_exclusive_count(flag: bool, lane: u32) -> u32 {
    let own = flag as u32;
    let mut v = own;
    let mut d = 1;
    while d < 32 {
        let o = shfl_up(v, d, 0);
        if lane >= d {
            v += o;
        }
        d *= 2;
    }
    v - own
}
