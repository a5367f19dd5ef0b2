//! One generation of an adaptive strategy (jDE, JADE, SHADE, L-SHADE, jSO), in pieces
//! that the CPU engine (`host/src/adaptive.rs`) and the adaptive kernels
//! (`kernels_adaptive.rs`) both call, so that the two run one implementation:
//!
//! 1. the p-best ranking of the population (the CPU sorts with
//!    [`select_best`](crate::adaptive::select_best), a kernel ranks every individual with
//!    [`rank`](crate::adaptive::rank): both give the same order);
//! 2. [`trial`] for every individual that the budget pays for, independently (a thread
//!    each on the GPU), then its value;
//! 3. [`select`], in index order: the replacements, the successes and the archive;
//! 4. [`adapt`]: the memory (or JADE's means);
//! 5. for L-SHADE and jSO, the population size reduction (keep the best, in index order)
//!    and [`shrink_archive`].
//!
//! Rows are `dim` values each, one after the other (no padding); the archive is a buffer
//! with room for its largest capacity, of which the first `archive_len` rows count.

use crate::abi::AdaptiveRun;
use crate::adaptive::{
    self as rules, CAUCHY_TRIES, MemoryRule, PARAM_SLOT, POPULATION_INDEX, Successes,
};
use crate::de::{
    BoundPolicy, COMPONENT_SLOT, Crossover, RESAMPLE_SLOT, Strategy, TrialParams, block,
    draw_indices, first_exceeding, run_length, subsequence, trial_chunk,
};
use crate::philox::{below, block_words};
use crate::real::Real;

/// Four values of `s` from `j0` (zeros past its end).
#[inline(always)]
pub fn chunk4<T: Real>(s: &[T], j0: usize) -> [T; 4] {
    if j0 + 4 <= s.len() {
        let mut v = [T::ZERO; 4];
        v.copy_from_slice(&s[j0..j0 + 4]);
        return v;
    }
    let mut v = [T::ZERO; 4];
    let end = if j0 + 4 < s.len() { j0 + 4 } else { s.len() };
    let mut k = j0;
    while k < end {
        v[k - j0] = s[k];
        k += 1;
    }
    v
}

/// Writes the first `n` of `v` to `out` from `j0`: one fixed-size move for a whole chunk
/// (a slice copy of run-time length is a call to `memcpy` on the CPU).
#[inline(always)]
pub fn put4<T: Real>(out: &mut [T], j0: usize, n: usize, v: &[T; 4]) {
    if n == 4 {
        out[j0..j0 + 4].copy_from_slice(v);
    } else {
        let mut k = 0;
        while k < n {
            out[j0 + k] = v[k];
            k += 1;
        }
    }
}

/// The strategy of a run's settings (jDE for a code that is no adaptive strategy:
/// the engines check the code before they run).
#[inline(always)]
pub fn strategy_of(a: &AdaptiveRun) -> Strategy {
    match Strategy::from_u32(a.strategy) {
        Some(s) if s.is_adaptive() => s,
        _ => Strategy::Jde,
    }
}

/// The bound policy of a run's settings.
#[inline(always)]
pub fn bounds_of(a: &AdaptiveRun) -> BoundPolicy {
    BoundPolicy::from_u32(a.bounds).unwrap_or(BoundPolicy::Midpoint)
}

/// What one generation's trials read: the population, the generation's scalars and the
/// state the previous generations left.
pub struct View<'a, T> {
    /// Generation number (from 1).
    pub g: u32,
    /// The population size (the trials may be fewer: the budget's last generation).
    pub n: u32,
    /// The p-best count (all but jDE and SHADE, which draws its own).
    pub k: u32,
    /// Budget spent before this generation, as a fraction (jSO's schedules).
    pub t: f64,
    /// The population's `n` rows.
    pub x: &'a [T],
    pub lo: &'a [T],
    pub hi: &'a [T],
    /// The ranking's first `k` entries, best first (a top-k selection: the trials read
    /// no further; SHADE's own counts are at most `k`, see [`pbest_k`]).
    pub ranking: &'a [u32],
    pub archive: &'a [T],
    pub archive_len: u32,
    /// μ_F and μ_Cr: JADE's one pair, or the memory.
    pub mf: &'a [T],
    pub mcr: &'a [T],
    /// jDE's per-individual F and Cr.
    pub jf: &'a [T],
    pub jcr: &'a [T],
}

/// A trial's outcome besides its row and value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Outcome<T> {
    pub f: T,
    pub cr: T,
    /// The word that places x_i in a full archive.
    pub archive_word: u32,
}

/// How many individuals the p-best ranking must hold in a generation at population `n`
/// and budget fraction `t` (0 for jDE). SHADE draws each individual's count from its
/// p_i ∈ [2/n, p] ([`shade_p`](rules::shade_p), non-decreasing in its word), so the
/// largest word gives the most it can ask for: with rounding that may pass p's own count,
/// and the ranking holds the larger of the two. (The count changes no result: the
/// ranking's first entries are the same whatever its length.)
#[inline(always)]
pub fn pbest_k(a: &AdaptiveRun, n: u32, t: f64) -> u32 {
    match strategy_of(a) {
        Strategy::Jde => 0,
        Strategy::Jso => rules::pbest_count(rules::jso_p(a.p_best, t), n),
        Strategy::Shade => {
            let most = rules::pbest_count(rules::shade_p(u32::MAX, n, a.p_best), n);
            rules::pbest_count(a.p_best, n).max(most)
        }
        _ => rules::pbest_count(a.p_best, n),
    }
}

/// Individual i's trial of generation `g` of a classic strategy (thesis, rand/1/bin,
/// …) into `out`: `tp.dim` values from the population `x` of `np` rows, its best row
/// `best` and the domain. The CPU engine's classic runs and the adaptive kernels' classic
/// runs on CEC 2017 functions both build their trials here.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn classic_trial<T: Real>(
    tp: &TrialParams<T>,
    key: [u32; 2],
    stream: u32,
    g: u32,
    np: u32,
    i: usize,
    x: &[T],
    best: usize,
    lo: &[T],
    hi: &[T],
    out: &mut [T],
) {
    let d = tp.dim as usize;
    let jdim = if tp.strategy.crosses() { tp.dim } else { 0 };
    let draws = tp
        .variant
        .draws(key, stream, i as u32, g, np, tp.strategy.draws(), jdim);
    let sub = subsequence(stream, i as u32);
    let words = |j0: usize| tp.variant.lambda_words(key, sub, g, j0 as u32);
    let mut run = tp.dim;
    if tp.strategy.crosses() && tp.crossover == Crossover::Exponential {
        let mut first = u32::MAX;
        let mut j0 = 0;
        while j0 < d {
            let n = if d - j0 < 4 { d - j0 } else { 4 } as u32;
            let f = first_exceeding(tp.cr, &words(j0), j0 as u32, n, tp.dim);
            if f < first {
                first = f;
            }
            j0 += 4;
        }
        run = run_length(first, tp.dim);
    }
    let row = |r: usize| &x[r * d..(r + 1) * d];
    let xi = row(i);
    let xb = row(best);
    let nd = tp.strategy.draws() as usize;
    let mut j0 = 0;
    while j0 < d {
        let n = if d - j0 < 4 { d - j0 } else { 4 };
        let mut r = [[T::ZERO; 4]; 5];
        let mut k = 0;
        while k < nd && k < 5 {
            r[k] = chunk4(row(draws.r[k] as usize), j0);
            k += 1;
        }
        let v = trial_chunk(
            tp,
            j0 as u32,
            n as u32,
            &chunk4(xi, j0),
            &r,
            &chunk4(xb, j0),
            &chunk4(lo, j0),
            &chunk4(hi, j0),
            &words(j0),
            draws.jrand,
            run,
            || block_words(key, sub, block(g, RESAMPLE_SLOT + (j0 / 4) as u32)),
        );
        put4(out, j0, n, &v);
        j0 += 4;
    }
}

/// Individual i's trial of generation `v.g` into `out` (`dim` values), with the run's
/// Philox `key` and population `stream`.
#[inline(always)]
pub fn trial<T: Real>(
    a: &AdaptiveRun,
    key: [u32; 2],
    stream: u32,
    v: &View<T>,
    i: usize,
    out: &mut [T],
) -> Outcome<T> {
    let s = strategy_of(a);
    let bounds = bounds_of(a);
    let d = a.dim as usize;
    let sub = subsequence(stream, i as u32);
    let words = |slot: u32| block_words(key, sub, block(v.g, slot));
    let resample = |j0: usize| move || words(RESAMPLE_SLOT + (j0 / 4) as u32);
    let param = words(PARAM_SLOT);
    let row = |r: usize| &v.x[r * d..(r + 1) * d];
    let xi = row(i);
    if s == Strategy::Jde {
        let (f, cr) = rules::jde_update(v.jf[i], v.jcr[i], &param, T::of(a.tau1), T::of(a.tau2));
        let dr = draw_indices(key, stream, i as u32, v.g, v.n, 3, d as u32);
        let tp = TrialParams {
            strategy: Strategy::Jde,
            crossover: Crossover::Binomial,
            bounds,
            f,
            cr,
            dim: d as u32,
            variant: crate::ThesisVariant::DEFAULT,
        };
        let mut j0 = 0;
        while j0 < d {
            let n = if d - j0 < 4 { d - j0 } else { 4 };
            let mut r = [[T::ZERO; 4]; 5];
            let mut q = 0;
            while q < 3 {
                r[q] = chunk4(row(dr.r[q] as usize), j0);
                q += 1;
            }
            let x = chunk4(xi, j0);
            let c = trial_chunk(
                &tp,
                j0 as u32,
                n as u32,
                &x,
                &r,
                &x,
                &chunk4(v.lo, j0),
                &chunk4(v.hi, j0),
                &words(COMPONENT_SLOT + (j0 / 4) as u32),
                dr.jrand,
                d as u32,
                resample(j0),
            );
            put4(out, j0, n, &c);
            j0 += 4;
        }
        return Outcome {
            f,
            cr,
            archive_word: 0,
        };
    }
    let s0 = words(0);
    let s1 = words(1);
    let (c1, c2) = (words(PARAM_SLOT + 1), words(PARAM_SLOT + 2));
    let mut cauchy = [0u32; CAUCHY_TRIES];
    cauchy[..4].copy_from_slice(&c1);
    cauchy[4..].copy_from_slice(&c2);
    let r = if s == Strategy::Jade {
        0
    } else {
        below(param[0], a.memory_size) as usize
    };
    let cr = rules::draw_cr(v.mcr[r], param[1], param[2]);
    let f = rules::draw_f(v.mf[r], &cauchy);
    let (f, cr, fw) = if s == Strategy::Jso {
        let (f, cr) = rules::jso_clamp(f, cr, v.t);
        (f, cr, f * T::of(rules::jso_fw_factor(v.t)))
    } else {
        (f, cr, f)
    };
    let k = if s == Strategy::Shade {
        rules::pbest_count(rules::shade_p(param[3], v.n, a.p_best), v.n)
    } else {
        v.k
    };
    let dr = rules::pbest_indices(&s0, i as u32, v.n, v.archive_len, k);
    let xp = row(v.ranking[dr.rank as usize] as usize);
    let x1 = row(dr.r1 as usize);
    let x2 = if dr.r2 < v.n {
        row(dr.r2 as usize)
    } else {
        let q = (dr.r2 - v.n) as usize;
        &v.archive[q * d..(q + 1) * d]
    };
    let jrand = below(s1[1], d as u32);
    let mut j0 = 0;
    while j0 < d {
        let n = if d - j0 < 4 { d - j0 } else { 4 };
        let c = rules::pbest_trial_chunk(
            f,
            fw,
            cr,
            bounds,
            j0 as u32,
            n as u32,
            [
                &chunk4(xi, j0),
                &chunk4(xp, j0),
                &chunk4(x1, j0),
                &chunk4(x2, j0),
            ],
            &chunk4(v.lo, j0),
            &chunk4(v.hi, j0),
            &words(COMPONENT_SLOT + (j0 / 4) as u32),
            jrand,
            resample(j0),
        );
        put4(out, j0, n, &c);
        j0 += 4;
    }
    Outcome {
        f,
        cr,
        archive_word: s0[3],
    }
}

/// The population and the state that [`select`] changes.
pub struct Selected<'a, T> {
    /// The population's rows and values (at least `m` of them).
    pub x: &'a mut [T],
    pub fit: &'a mut [T],
    /// The archive's buffer (room for `capacity` rows) and its length.
    pub archive: &'a mut [T],
    pub archive_len: &'a mut u32,
    /// jDE's F and Cr per individual (empty for the others).
    pub jf: &'a mut [T],
    pub jcr: &'a mut [T],
}

/// What selection does with one trial: the archive slot its parent goes to (if any)
/// and whether the trial replaces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub slot: Option<u32>,
    pub replace: bool,
}

/// Selection's decision for one trial, the next in index order: trial value `value`
/// against its parent's `parent`, with outcome `o`. A success (for all but jDE) takes
/// the archive slot [`archive_slot`](rules::archive_slot) gives at the archive's length
/// so far (`archive_len` grows when it is appended to); JADE's trial replaces on success
/// only, the others when not worse. The engines apply the verdicts in index order (a
/// later parent in the same slot wins): the CPU engine as it goes ([`select`]); the
/// kernels find each success's slot from the successes before it and apply them in
/// parallel, with the same outcome.
#[inline(always)]
pub fn judge<T: Real>(
    s: Strategy,
    value: T,
    parent: T,
    o: &Outcome<T>,
    archive_len: &mut u32,
    capacity: u32,
) -> Verdict {
    let mut slot = None;
    if counts_success(s, value, parent) {
        slot = rules::archive_slot(o.archive_word, *archive_len, capacity);
        if slot == Some(*archive_len) {
            *archive_len += 1;
        }
    }
    Verdict {
        slot,
        replace: replaces(s, value, parent),
    }
}

/// Is the trial a success that the generation's record and archive keep (every
/// strategy but jDE)?
#[inline(always)]
pub fn counts_success<T: Real>(s: Strategy, value: T, parent: T) -> bool {
    s != Strategy::Jde && rules::succeeds(value, parent)
}

/// Does the trial replace its parent? JADE's on success only, the others' when not
/// worse.
#[inline(always)]
pub fn replaces<T: Real>(s: Strategy, value: T, parent: T) -> bool {
    if s == Strategy::Jade {
        rules::succeeds(value, parent)
    } else {
        rules::replaces(value, parent)
    }
}

/// The archive's length after a generation whose record counts `successes`, from
/// `len` before it: appended to while there is room, never beyond `capacity` (a full
/// archive's successes replace entries). What [`judge`]'s pass in index order leaves.
#[inline(always)]
pub fn archive_len_after(len: u32, successes: u32, capacity: u32) -> u32 {
    if capacity == 0 || len >= capacity {
        len
    } else {
        capacity.min(len + successes)
    }
}

/// Trial's part of the generation's record: its F, Cr and improvement when it
/// [`counts_success`], else an empty record.
#[inline(always)]
pub fn success_leaf<T: Real>(s: Strategy, value: T, parent: T, o: &Outcome<T>) -> Successes<T> {
    if counts_success(s, value, parent) {
        Successes::one(o.f, o.cr, (value - parent).abs())
    } else {
        Successes::default()
    }
}

/// The record of trials `0 .. m` ([`success_leaf`] of each) in the fixed order both
/// engines follow: a pairwise tree over the indices, padded with empty records to a
/// power of two (node = left child merged with right child). The kernels build the
/// same tree thirty-two leaves at a time with warp butterflies at distances 1, 2, 4,
/// 8, 16, then thirty-two nodes at a time.
pub fn success_tree<T: Real>(m: usize, leaf: &impl Fn(usize) -> Successes<T>) -> Successes<T> {
    fn node<T: Real>(
        lo: usize,
        size: usize,
        m: usize,
        leaf: &impl Fn(usize) -> Successes<T>,
    ) -> Successes<T> {
        if lo >= m {
            Successes::default()
        } else if size == 1 {
            leaf(lo)
        } else {
            let h = size / 2;
            node(lo, h, m, leaf).merge(node(lo + h, h, m, leaf))
        }
    }
    node(0, m.next_power_of_two(), m, leaf)
}

/// Selection, successes and the archive for the first `m` individuals: `rows` holds
/// their trials (`dim` values each), `value(i)` and `outcome(i)` trial i's value and
/// outcome. `capacity` is the archive's at this generation's population size. The
/// verdicts apply in index order; the record is [`success_tree`]'s. Returns the record.
#[inline(always)]
pub fn select<T: Real>(
    a: &AdaptiveRun,
    st: Selected<'_, T>,
    m: usize,
    capacity: u32,
    rows: &[T],
    value: impl Fn(usize) -> T,
    outcome: impl Fn(usize) -> Outcome<T>,
) -> Successes<T> {
    let s = strategy_of(a);
    let d = a.dim as usize;
    // The record first, from the parents before any is replaced.
    let wins = success_tree(m, &|i| success_leaf(s, value(i), st.fit[i], &outcome(i)));
    let mut i = 0;
    while i < m {
        let fit = value(i);
        let o = outcome(i);
        let v = judge(s, fit, st.fit[i], &o, st.archive_len, capacity);
        if let Some(slot) = v.slot {
            let slot = slot as usize;
            st.archive[slot * d..(slot + 1) * d].copy_from_slice(&st.x[i * d..(i + 1) * d]);
        }
        if v.replace {
            st.x[i * d..(i + 1) * d].copy_from_slice(&rows[i * d..(i + 1) * d]);
            st.fit[i] = fit;
            if s == Strategy::Jde {
                st.jf[i] = o.f;
                st.jcr[i] = o.cr;
            }
        }
        i += 1;
    }
    wins
}

/// The parameter adaptation after a generation's selection: JADE's means (entry 0 of
/// `mf`, `mcr`) or the success-history memory and its next index `k`.
#[inline(always)]
pub fn adapt<T: Real>(
    a: &AdaptiveRun,
    mf: &mut [T],
    mcr: &mut [T],
    k: &mut u32,
    wins: &Successes<T>,
) {
    match strategy_of(a) {
        Strategy::Jade => {
            let (mut mu_f, mut mu_cr) = (mf[0], mcr[0]);
            rules::jade_update(&mut mu_f, &mut mu_cr, wins, T::of(a.learning_rate));
            mf[0] = mu_f;
            mcr[0] = mu_cr;
        }
        s @ (Strategy::Shade | Strategy::LShade | Strategy::Jso) => {
            let rule = match s {
                Strategy::Shade => MemoryRule::Shade,
                Strategy::LShade => MemoryRule::LShade,
                _ => MemoryRule::Jso,
            };
            rules::update_memory(rule, mf, mcr, k, wins);
        }
        _ => {}
    }
}

/// The population size after a generation of a run at population `n` that has spent
/// `evaluations`: L-SHADE's and jSO's linear reduction, `n` for the others.
#[inline(always)]
pub fn next_size(a: &AdaptiveRun, n: u32, evaluations: u64) -> u32 {
    match strategy_of(a) {
        Strategy::LShade | Strategy::Jso => {
            let next = rules::lpsr_size(a.np, a.min_pop, evaluations, a.max_evaluations);
            if next < n { next } else { n }
        }
        _ => n,
    }
}

/// Deletes random archive entries down to `capacity`: the t-th deletion takes entry
/// `below(w_t, len)` (its place filled by the last entry), w_t being word t of the
/// population-wide stream of generation `g`.
#[inline(always)]
pub fn shrink_archive<T: Real>(
    key: [u32; 2],
    stream: u32,
    g: u32,
    dim: usize,
    archive: &mut [T],
    archive_len: &mut u32,
    capacity: u32,
) {
    let sub = subsequence(stream, POPULATION_INDEX);
    let mut t = 0u32;
    while *archive_len > capacity {
        let w = block_words(key, sub, block(g, t / 4))[(t % 4) as usize];
        let gone = below(w, *archive_len) as usize;
        let last = *archive_len as usize - 1;
        archive.copy_within(last * dim..(last + 1) * dim, gone * dim);
        *archive_len -= 1;
        t += 1;
    }
}

/// The initial memory entry `h` of `H` (μ_F, μ_Cr): jSO's 0.3, 0.8 and its fixed last
/// entry 0.9, 0.9; 0.5, 0.5 for the others.
#[inline(always)]
pub fn initial_memory<T: Real>(s: Strategy, h: usize, memory_size: usize) -> (T, T) {
    if s == Strategy::Jso {
        if h + 1 == memory_size {
            (T::of(rules::JSO_FIXED_ENTRY), T::of(rules::JSO_FIXED_ENTRY))
        } else {
            (T::of(0.3), T::of(0.8))
        }
    } else {
        (T::of(0.5), T::of(0.5))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels' order of the record (butterflies at distances 1, 2, 4, 8, 16 over
    /// 32 leaves, then 32 nodes at a time), written out on the CPU, gives
    /// [`success_tree`]'s bits for every count of trials.
    #[test]
    fn the_record_tree_is_the_kernels_butterflies() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let butterflies = |v: &[Successes<f64>]| -> Vec<Successes<f64>> {
            v.chunks(32)
                .map(|c| {
                    let mut lanes = [Successes::default(); 32];
                    lanes[..c.len()].copy_from_slice(c);
                    let mut m = 1;
                    while m < 32 {
                        let prev = lanes;
                        for (l, x) in lanes.iter_mut().enumerate() {
                            *x = prev[l].merge(prev[l ^ m]);
                        }
                        m *= 2;
                    }
                    // Both lanes of every pair held the same node.
                    assert!(lanes.iter().all(|x| x.f.to_bits() == lanes[0].f.to_bits()));
                    lanes[0]
                })
                .collect()
        };
        for m in [
            1usize, 2, 5, 31, 32, 33, 100, 1000, 1024, 1025, 5000, 40_000,
        ] {
            let leaves: Vec<Successes<f64>> = (0..m)
                .map(|_| {
                    if next() < 0.3 {
                        Successes::one(0.1 + next(), next(), next() * 1e3)
                    } else {
                        Successes::default()
                    }
                })
                .collect();
            let want = success_tree(m, &|i| leaves[i]);
            let mut level = butterflies(&leaves);
            while level.len() > 1 {
                level = butterflies(&level);
            }
            let got = level[0];
            assert_eq!(got.count, want.count, "m = {m}");
            for (g, w) in [
                (got.f, want.f),
                (got.f2, want.f2),
                (got.cr, want.cr),
                (got.cr2, want.cr2),
                (got.wf, want.wf),
                (got.wf2, want.wf2),
                (got.wcr, want.wcr),
                (got.wcr2, want.wcr2),
                (got.w, want.w),
                (got.cr_max, want.cr_max),
            ] {
                assert_eq!(g.to_bits(), w.to_bits(), "m = {m}");
            }
            // And the sums are the sums, to rounding.
            let plain: f64 = leaves.iter().map(|l| l.wf).sum();
            assert!(
                (want.wf - plain).abs() <= 1e-9 * plain.abs().max(1.0),
                "m = {m}"
            );
        }
    }

    /// The p-best ranking's length covers every count SHADE's trials can draw (every
    /// word at the ends and a stride through the rest), at every population size and
    /// for several p.
    #[test]
    fn shade_counts_stay_within_the_ranking() {
        let mut a = AdaptiveRun {
            max_evaluations: 1000,
            archive_rate: 1.0,
            p_best: 0.2,
            learning_rate: 0.0,
            tau1: 0.0,
            tau2: 0.0,
            f: 0.0,
            cr: 0.0,
            strategy: Strategy::Shade as u32,
            bounds: 0,
            formula: 0,
            function: 0,
            dim: 10,
            np: 100,
            min_pop: 100,
            memory_size: 100,
            gens: 10,
            crossover: 0,
            variant: 0,
            phase: 0,
            target: f64::NAN,
        };
        assert_eq!(strategy_of(&a), Strategy::Shade);
        let words: Vec<u32> = (0..=4096u64)
            .map(|k| (k * (u32::MAX as u64) / 4096) as u32)
            .chain([1, u32::MAX - 1])
            .collect();
        for p in [0.0, 0.01, 0.05, 0.11, 0.2, 0.25, 1.0 / 3.0, 0.5, 1.0] {
            a.p_best = p;
            for n in 4..=400u32 {
                let k = pbest_k(&a, n, 0.0);
                assert!((2..=n).contains(&k), "p {p}, n {n}: k {k}");
                for &w in &words {
                    let c = rules::pbest_count(rules::shade_p(w, n, p), n);
                    assert!(c <= k, "p {p}, n {n}, word {w}: count {c} > k {k}");
                }
            }
        }
    }
}
