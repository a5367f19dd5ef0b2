//! Migration between the islands (populations) of an archipelago: who sends to whom,
//! which individuals leave and which are replaced, and the random words behind each
//! choice. The rules are plain functions on fitness slices so that a GPU kernel can run
//! them and reproduce the CPU engine's bits.
//!
//! # One migration event
//! Islands `0 … N−1` evolve synchronously; after generation `g` (when `g` is a multiple
//! of the interval and below the generation limit) one event runs, in this order:
//! 1. **Snapshot.** Every island `s` picks its `K` emigrants from its own population
//!    as it stands after generation `g` ([`select_best`] — best first — or
//!    [`draw_distinct`] at [`EMIGRANT_SLOT`], in draw order) and their rows and values
//!    are copied out. No island is changed before every island's emigrants are copied.
//! 2. **Sources.** Island `k` receives from the islands [`source`] names, in that order:
//!    ring: `k + 1 (mod N)` (Castro Liera et al.: block `b` receives from block `b + 1`); full:
//!    `k + 1, k + 2, …, k + N − 1 (mod N)`; random: a random ring — a permutation `σ`
//!    drawn once per event ([`random_ring`]) with `σ(m)` receiving from `σ(m + 1 mod N)`.
//!    The incoming list of island `k` is its sources' emigrant lists concatenated in
//!    source order: `M = K · sources` migrants.
//! 3. **Targets.** Island `k` picks `M` distinct targets from its own pre-event values
//!    ([`select_worst`] — worst first — or [`draw_distinct`] at [`REPLACE_SLOT`]).
//! 4. **Replacement.** Incoming migrant `m` overwrites target `m` (row and value),
//!    unconditionally; with best → worst the best newcomer takes the worst place.
//! 5. Every island's best is then recomputed.
//!
//! # Random words
//! Island `k` (population stream `p_k`) reads Philox subsequence
//! `subsequence(p_k, MIGRATION_INDIVIDUAL)` — an index no individual has — at generation
//! `g`'s blocks: draw `m` of the emigrants takes word `m mod 4` of slot
//! `EMIGRANT_SLOT + m / 4`, draw `m` of the targets word `m mod 4` of slot
//! `REPLACE_SLOT + m / 4`. The random ring of an event reads island 0's subsequence,
//! word `t mod 4` of slot `PERMUTATION_SLOT + t / 4` for its `t`-th swap.

use crate::de::{better, block, subsequence};
use crate::philox::{below, block_words};
use crate::real::Real;

/// How islands are connected.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Topology {
    /// Island `k` receives from island `k + 1 (mod N)`.
    Ring = 0,
    /// Island `k` receives from every other island.
    Full = 1,
    /// A ring in a fresh random order at every event.
    Random = 2,
}

impl Topology {
    pub fn from_u32(v: u32) -> Option<Topology> {
        [Topology::Ring, Topology::Full, Topology::Random]
            .get(v as usize)
            .copied()
    }
}

/// Which individuals leave an island.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Emigrants {
    /// The `K` best (lowest value, then lowest index), best first.
    Best = 0,
    /// `K` distinct individuals drawn uniformly.
    Random = 1,
}

impl Emigrants {
    pub fn from_u32(v: u32) -> Option<Emigrants> {
        [Emigrants::Best, Emigrants::Random]
            .get(v as usize)
            .copied()
    }
}

/// Which individuals the newcomers replace.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Replacement {
    /// The `M` worst (the reverse of the best order), worst first.
    Worst = 0,
    /// `M` distinct individuals drawn uniformly (the island's best may go).
    Random = 1,
}

impl Replacement {
    pub fn from_u32(v: u32) -> Option<Replacement> {
        [Replacement::Worst, Replacement::Random]
            .get(v as usize)
            .copied()
    }
}

/// The individual index of the migration words' subsequence (populations hold at most
/// 2²⁴ individuals, so no individual reads it).
pub const MIGRATION_INDIVIDUAL: u32 = u32::MAX;
/// First slot of the emigrant draws.
pub const EMIGRANT_SLOT: u32 = 0;
/// First slot of the target draws.
pub const REPLACE_SLOT: u32 = 0x4000_0000;
/// First slot of the random ring's words.
pub const PERMUTATION_SLOT: u32 = 0x8000_0000;

/// How many islands one island receives from.
#[inline(always)]
pub fn sources(topology: Topology, islands: u32) -> u32 {
    if islands < 2 {
        return 0;
    }
    match topology {
        Topology::Ring | Topology::Random => 1,
        Topology::Full => islands - 1,
    }
}

/// The `s`-th source of island `k` (`s < sources(..)`). `ring` is the event's random
/// ring (see [`random_ring`]); only [`Topology::Random`] reads it.
#[inline(always)]
pub fn source(topology: Topology, k: u32, s: u32, islands: u32, ring: &[u32]) -> u32 {
    match topology {
        Topology::Ring => (k + 1) % islands,
        Topology::Full => (k + 1 + s) % islands,
        Topology::Random => {
            let mut m = 0usize;
            while m < ring.len() && ring[m] != k {
                m += 1;
            }
            ring[(m + 1) % ring.len()]
        }
    }
}

/// The `m`-th word of a migration draw list starting at `slot0` of island stream `p`
/// in generation `g`.
#[inline(always)]
pub fn word(key: [u32; 2], p: u32, g: u32, slot0: u32, m: u32) -> u32 {
    let w = block_words(
        key,
        subsequence(p, MIGRATION_INDIVIDUAL),
        block(g, slot0 + m / 4),
    );
    w[(m % 4) as usize]
}

/// The random ring of the event after generation `g`: `ring` (length N) becomes a
/// permutation of `0 … N−1` by Fisher–Yates from the identity — for `m = N−1` down to
/// 1, swap `ring[m]` with `ring[below(w_t, m + 1)]`, `t = N − 1 − m`, the words read from
/// island 0's stream `p0` at [`PERMUTATION_SLOT`].
#[inline(always)]
pub fn random_ring(key: [u32; 2], p0: u32, g: u32, ring: &mut [u32]) {
    let n = ring.len() as u32;
    let mut i = 0u32;
    while i < n {
        ring[i as usize] = i;
        i += 1;
    }
    let mut m = n;
    while m > 1 {
        m -= 1;
        let t = n - 1 - m;
        let j = below(word(key, p0, g, PERMUTATION_SLOT, t), m + 1);
        ring.swap(m as usize, j as usize);
    }
}

/// `out.len()` distinct indices in `0..n`, drawn uniformly: draw `m` takes
/// `t = below(w_m, n − m)` and maps it to the `t`-th index not taken yet (in ascending
/// order). Words from island stream `p`, generation `g`, from `slot0` (see [`word`]).
/// Needs `out.len() ≤ n`.
#[inline(always)]
pub fn draw_distinct(key: [u32; 2], p: u32, g: u32, slot0: u32, n: u32, out: &mut [u32]) {
    let count = out.len();
    let mut m = 0usize;
    while m < count {
        let t = below(word(key, p, g, slot0, m as u32), n - m as u32);
        // The t-th free index v satisfies v = t + #{taken ≤ v}: iterate to the fixed
        // point (the count only grows, and at most m times).
        let mut v = t;
        loop {
            let mut c = 0u32;
            let mut k = 0usize;
            while k < m {
                if out[k] <= v {
                    c += 1;
                }
                k += 1;
            }
            if t + c == v {
                break;
            }
            v = t + c;
        }
        out[m] = v;
        m += 1;
    }
}

/// The `out.len()` best of `fit` in the order of [`better`] (best first).
#[inline(always)]
pub fn select_best<T: Real>(fit: &[T], out: &mut [u32]) {
    select(fit, out, false);
}

/// The `out.len()` worst of `fit`, worst first: the exact reverse of the best order
/// (NaN values are the worst, among them the highest index first).
#[inline(always)]
pub fn select_worst<T: Real>(fit: &[T], out: &mut [u32]) {
    select(fit, out, true);
}

/// Insertion into a sorted list of the `out.len()` extremes.
#[inline(always)]
fn select<T: Real>(fit: &[T], out: &mut [u32], worst: bool) {
    let k = out.len();
    // "a comes before b" in the list's order.
    let before = |a: u32, b: u32| {
        let (fa, fb) = (fit[a as usize], fit[b as usize]);
        if worst {
            better(fb, b, fa, a)
        } else {
            better(fa, a, fb, b)
        }
    };
    let mut len = 0usize;
    let mut i = 0u32;
    while (i as usize) < fit.len() {
        if len < k || before(i, out[k - 1]) {
            let mut at = if len < k { len } else { k - 1 };
            if len < k {
                len += 1;
            }
            while at > 0 && before(i, out[at - 1]) {
                out[at] = out[at - 1];
                at -= 1;
            }
            out[at] = i;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::philox::key_of;

    #[test]
    fn best_and_worst_follow_the_total_order() {
        // values:  0:3  1:1  2:NaN  3:1  4:7  5:0.5
        // best order: 5 (0.5), 1 (1, lower index), 3 (1), 0 (3), 4 (7), 2 (NaN last)
        let fit = [3.0f64, 1.0, f64::NAN, 1.0, 7.0, 0.5];
        let mut b = [0u32; 3];
        select_best(&fit, &mut b);
        assert_eq!(b, [5, 1, 3]);
        let mut w = [0u32; 3];
        select_worst(&fit, &mut w);
        assert_eq!(w, [2, 4, 0]);
        let mut all = [0u32; 6];
        select_best(&fit, &mut all);
        assert_eq!(all, [5, 1, 3, 0, 4, 2]);
        select_worst(&fit, &mut all);
        assert_eq!(all, [2, 4, 0, 3, 1, 5]);
    }

    #[test]
    fn distinct_draws_are_distinct_and_uniform() {
        let key = key_of(9);
        let n = 10u32;
        let mut hits = [0u32; 10];
        for g in 1..=2000u32 {
            let mut out = [0u32; 4];
            draw_distinct(key, 5, g, REPLACE_SLOT, n, &mut out);
            for a in 0..4 {
                assert!(out[a] < n);
                for b in a + 1..4 {
                    assert_ne!(out[a], out[b], "{out:?}");
                }
                hits[out[a] as usize] += 1;
            }
        }
        // 8000 draws over 10 indices: 800 each, σ ≈ 27.
        for h in hits {
            assert!((h as i64 - 800).abs() < 150, "{hits:?}");
        }
        // Taking all n gives a permutation.
        let mut all = [0u32; 10];
        draw_distinct(key, 5, 3, EMIGRANT_SLOT, n, &mut all);
        let mut sorted = all;
        sorted.sort();
        assert_eq!(sorted, core::array::from_fn(|i| i as u32));
    }

    #[test]
    fn mapping_skips_taken_indices() {
        // With out[0] known, the second draw's t maps past it: reproduce by hand.
        let key = key_of(4);
        let mut out = [0u32; 2];
        draw_distinct(key, 1, 7, EMIGRANT_SLOT, 5, &mut out);
        let t0 = below(word(key, 1, 7, EMIGRANT_SLOT, 0), 5);
        let t1 = below(word(key, 1, 7, EMIGRANT_SLOT, 1), 4);
        assert_eq!(out[0], t0);
        assert_eq!(out[1], if t1 >= t0 { t1 + 1 } else { t1 });
    }

    #[test]
    fn random_rings_are_permutations_that_vary() {
        let key = key_of(2);
        let mut seen_identity_order = 0;
        for g in 1..50u32 {
            let mut ring = [0u32; 7];
            random_ring(key, 0, g, &mut ring);
            let mut s = ring;
            s.sort();
            assert_eq!(s, [0, 1, 2, 3, 4, 5, 6]);
            if ring == [0, 1, 2, 3, 4, 5, 6] {
                seen_identity_order += 1;
            }
            // Every island has one source, never itself, and sends exactly once.
            let mut sends = [0u32; 7];
            for k in 0..7 {
                let s = source(Topology::Random, k, 0, 7, &ring);
                assert_ne!(s, k);
                sends[s as usize] += 1;
            }
            assert_eq!(sends, [1; 7]);
        }
        assert!(seen_identity_order < 3);
    }

    #[test]
    fn ring_and_full_sources() {
        assert_eq!(source(Topology::Ring, 2, 0, 3, &[]), 0);
        assert_eq!(source(Topology::Ring, 0, 0, 3, &[]), 1);
        let full: [u32; 3] = core::array::from_fn(|s| source(Topology::Full, 2, s as u32, 4, &[]));
        assert_eq!(full, [3, 0, 1]);
        assert_eq!(sources(Topology::Full, 4), 3);
        assert_eq!(sources(Topology::Ring, 1), 0);
    }
}
