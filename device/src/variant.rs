//! Alternatives to details of the thesis strategy that the thesis does not pin down or
//! that gpude does differently, to measure what each does to a run (the Rosenbrock
//! Np = 2048 gap of docs/REPRODUCTION.md). [`ThesisVariant::DEFAULT`] is gpude's own
//! thesis strategy, bit for bit; every alternative is one field.
//!
//! - **Index draws** ([`IndexDraw`]). gpude draws r1, r2 without rejection (the m-th
//!   uniform over the indices still free, [`crate::de::draw_indices`]). The thesis's
//!   code (appendix B) draws by rejection: `r1 = w mod Np` until r1 ≠ i, then
//!   `r2 = w mod Np` until r2 ∉ {i, r1}. Both give every ordered pair of distinct
//!   others the same chance (up to the 2⁻³² bias of mapping a word); they differ in
//!   which pair a given seed gives.
//! - **λ's range** ([`LambdaRange`]): `curand_uniform`'s (0, 1] (the thesis and gpude),
//!   or [0, 1).
//! - **λ per individual** ([`LambdaDraw`]). A deviation from the thesis, tested as a
//!   contrast only: one λ for all components of a trial instead of one per component.
//! - **The mutation's arithmetic** ([`MutationForm`]): the same formula with other
//!   roundings.
//! - **The generation count** ([`GenerationCount`]): g_max or g_max + 1 generations.
//!
//! # Random streams of the alternatives
//! Rejection reads the words of slot 0 in order, then those of slot
//! [`REJECTION_SLOT`] + k (k = 0, 1, …), at most [`MAX_REJECTION_WORDS`] words; after
//! that many rejections (probability below 10⁻¹¹ even at Np = 3) r1 and r2 are the
//! first indices after i (cyclically) that are allowed. λ per individual is word 0 of
//! the first component slot ([`crate::de::COMPONENT_SLOT`]), the word of component 0.

use crate::de::{COMPONENT_SLOT, Draws, block, draw_indices, subsequence};
use crate::philox::block_words;
use crate::real::Real;

/// How r1 and r2 are drawn.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IndexDraw {
    /// gpude's: uniform over the indices still free, without rejection.
    #[default]
    Free = 0,
    /// The thesis's appendix B: `w mod Np`, drawn again while it is taken.
    Rejection = 1,
}

/// λ's range.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LambdaRange {
    /// (0, 1], `curand_uniform`'s (`w·2⁻³² + 2⁻³³`; in f32 the largest words round to 1).
    #[default]
    OpenClosed = 0,
    /// [0, 1): `w·2⁻³²` in f64, `⌊w/2⁸⌋·2⁻²⁴` in f32 (never 1, 0 for the smallest words).
    ClosedOpen = 1,
}

/// How many λ a trial draws.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LambdaDraw {
    /// One per component (the thesis's eq. 3.17).
    #[default]
    PerComponent = 0,
    /// One per individual, shared by its components: a deviation from the thesis.
    PerIndividual = 1,
}

/// How `v = x + λ(a − b) + (1 − λ)(best − x)` is rounded (a = x_r1, b = x_r2).
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MutationForm {
    /// Left to right, every product and sum rounded on its own (gpude's).
    #[default]
    Plain = 0,
    /// `fma(1 − λ, best − x, fma(λ, a − b, x))`: what nvcc's default contraction
    /// (`--fmad=true`) makes of the expression as the thesis's code writes it.
    Fma = 1,
    /// `fma(λ, a − b, fma(1 − λ, best − x, x))`: the other order of the two FMAs.
    FmaInner = 2,
    /// `best + λ((a − b) − (best − x))`: the same value rearranged around the best
    /// (no `1 − λ`; exact for λ → 0 when x = best).
    FromBest = 3,
}

/// How many generations a run of g_max generations runs.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GenerationCount {
    /// g_max (gpude's).
    #[default]
    GMax = 0,
    /// g_max + 1.
    PlusOne = 1,
}

/// The first slot of the extra words of rejection draws.
pub const REJECTION_SLOT: u32 = 0x4000_0000;
/// The most words rejection draws read for one individual in one generation.
pub const MAX_REJECTION_WORDS: u32 = 64;

/// One choice per detail of the thesis strategy; `Default` is gpude's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ThesisVariant {
    pub indices: IndexDraw,
    pub lambda: LambdaRange,
    pub lambda_draw: LambdaDraw,
    pub mutation: MutationForm,
    pub generations: GenerationCount,
}

// Bit fields of `ThesisVariant::bits`.
const INDICES_SHIFT: u32 = 0;
const LAMBDA_SHIFT: u32 = 1;
const LAMBDA_DRAW_SHIFT: u32 = 2;
const MUTATION_SHIFT: u32 = 3;
const GENERATIONS_SHIFT: u32 = 5;
const USED_BITS: u32 = 6;

impl ThesisVariant {
    /// gpude's thesis strategy.
    pub const DEFAULT: ThesisVariant = ThesisVariant {
        indices: IndexDraw::Free,
        lambda: LambdaRange::OpenClosed,
        lambda_draw: LambdaDraw::PerComponent,
        mutation: MutationForm::Plain,
        generations: GenerationCount::GMax,
    };

    /// The variant as one word (what the kernels and checkpoints take); 0 is the default.
    #[inline(always)]
    pub const fn bits(self) -> u32 {
        (self.indices as u32) << INDICES_SHIFT
            | (self.lambda as u32) << LAMBDA_SHIFT
            | (self.lambda_draw as u32) << LAMBDA_DRAW_SHIFT
            | (self.mutation as u32) << MUTATION_SHIFT
            | (self.generations as u32) << GENERATIONS_SHIFT
    }

    /// The variant of [`ThesisVariant::bits`]; `None` when a bit beyond them is set.
    #[inline(always)]
    pub const fn from_bits(b: u32) -> Option<ThesisVariant> {
        if b >> USED_BITS != 0 {
            return None;
        }
        Some(ThesisVariant {
            indices: if (b >> INDICES_SHIFT) & 1 != 0 {
                IndexDraw::Rejection
            } else {
                IndexDraw::Free
            },
            lambda: if (b >> LAMBDA_SHIFT) & 1 != 0 {
                LambdaRange::ClosedOpen
            } else {
                LambdaRange::OpenClosed
            },
            lambda_draw: if (b >> LAMBDA_DRAW_SHIFT) & 1 != 0 {
                LambdaDraw::PerIndividual
            } else {
                LambdaDraw::PerComponent
            },
            mutation: match (b >> MUTATION_SHIFT) & 3 {
                0 => MutationForm::Plain,
                1 => MutationForm::Fma,
                2 => MutationForm::FmaInner,
                _ => MutationForm::FromBest,
            },
            generations: if (b >> GENERATIONS_SHIFT) & 1 != 0 {
                GenerationCount::PlusOne
            } else {
                GenerationCount::GMax
            },
        })
    }

    /// Is it gpude's own thesis strategy?
    #[inline(always)]
    pub const fn is_default(self) -> bool {
        self.bits() == 0
    }

    /// Does it change how trials are made (anything but the generation count)?
    #[inline(always)]
    pub const fn changes_trials(self) -> bool {
        self.bits() & !((1 << GENERATIONS_SHIFT) as u32) != 0
    }

    /// Generations run beyond the job's g_max.
    #[inline(always)]
    pub const fn extra_generations(self) -> u32 {
        match self.generations {
            GenerationCount::GMax => 0,
            GenerationCount::PlusOne => 1,
        }
    }

    /// λ from one word.
    #[inline(always)]
    pub fn lambda<T: Real>(self, w: u32) -> T {
        match self.lambda {
            LambdaRange::OpenClosed => T::uniform(w),
            LambdaRange::ClosedOpen => T::uniform_closed_open(w),
        }
    }

    /// The words of the λ of components `j0 .. j0 + 4` of individual stream `sub` in
    /// generation `g` (for the classic strategies, the crossover's uniforms: the
    /// default's words).
    #[inline(always)]
    pub fn lambda_words(self, key: [u32; 2], sub: u64, g: u32, j0: u32) -> [u32; 4] {
        match self.lambda_draw {
            LambdaDraw::PerComponent => block_words(key, sub, block(g, COMPONENT_SLOT + j0 / 4)),
            LambdaDraw::PerIndividual => {
                let w = block_words(key, sub, block(g, COMPONENT_SLOT))[0];
                [w; 4]
            }
        }
    }

    /// The mutant's component: `xi + λ(a − b) + (1 − λ)(best − xi)` in this variant's
    /// rounding.
    #[inline(always)]
    pub fn mutate<T: Real>(self, xi: T, a: T, b: T, best: T, lambda: T) -> T {
        match self.mutation {
            MutationForm::Plain => xi + lambda * (a - b) + (T::ONE - lambda) * (best - xi),
            MutationForm::Fma => (T::ONE - lambda).mul_add(best - xi, lambda.mul_add(a - b, xi)),
            MutationForm::FmaInner => {
                lambda.mul_add(a - b, (T::ONE - lambda).mul_add(best - xi, xi))
            }
            MutationForm::FromBest => best + lambda * ((a - b) - (best - xi)),
        }
    }

    /// The draws of individual `i` in generation `g` for a strategy of `count` random
    /// individuals (`dim` as [`draw_indices`] takes it). Rejection applies to the
    /// thesis strategy only (two draws, no crossover), which jobs with another variant
    /// than the default must use.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn draws(
        self,
        key: [u32; 2],
        p: u32,
        i: u32,
        g: u32,
        n: u32,
        count: u32,
        dim: u32,
    ) -> Draws {
        match self.indices {
            IndexDraw::Free => draw_indices(key, p, i, g, n, count, dim),
            IndexDraw::Rejection => draw_rejection(key, p, i, g, n),
        }
    }
}

/// r1 and r2 for individual `i` of `n` (n ≥ 3) by rejection, as the thesis's appendix B
/// draws them (see the module's documentation for the words it reads).
#[inline(always)]
pub fn draw_rejection(key: [u32; 2], p: u32, i: u32, g: u32, n: u32) -> Draws {
    let sub = subsequence(p, i);
    // The unread words of the current block, next first (rotated rather than indexed:
    // no local memory on the GPU).
    let mut q = block_words(key, sub, block(g, 0));
    let (r1, r2) = reject_pair(i, n, |k| {
        if k > 0 && k.is_multiple_of(4) {
            q = block_words(key, sub, block(g, REJECTION_SLOT + k / 4 - 1));
        }
        let w = q[0];
        q = [q[1], q[2], q[3], q[0]];
        w
    });
    Draws {
        r: [r1, r2, 0, 0, 0],
        jrand: 0,
    }
}

/// The rejection loop of [`draw_rejection`] over the words `word(0)`, `word(1)`, … (at
/// most [`MAX_REJECTION_WORDS`], asked for in order): r1 = `w mod n` until r1 ≠ i, then
/// r2 = `w mod n` until r2 ∉ {i, r1}; out of words, the first allowed indices after i.
#[inline(always)]
pub fn reject_pair(i: u32, n: u32, mut word: impl FnMut(u32) -> u32) -> (u32, u32) {
    let (mut r1, mut r2) = (i, i);
    let mut k = 0u32;
    while k < MAX_REJECTION_WORDS && (r1 == i || r2 == i || r2 == r1) {
        let t = word(k) % n;
        if r1 == i {
            r1 = t;
        } else {
            r2 = t;
        }
        k += 1;
    }
    let next = |s: u32| if i + s >= n { i + s - n } else { i + s };
    if r1 == i {
        r1 = next(1);
    }
    if r2 == i || r2 == r1 {
        r2 = if next(1) != r1 { next(1) } else { next(2) };
    }
    (r1, r2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::de::draw_indices;
    use crate::philox::key_of;

    fn every() -> impl Iterator<Item = ThesisVariant> {
        (0..1u32 << USED_BITS).map(|b| ThesisVariant::from_bits(b).unwrap())
    }

    #[test]
    fn bits_round_trip_and_zero_is_the_default() {
        assert_eq!(ThesisVariant::from_bits(0), Some(ThesisVariant::DEFAULT));
        assert_eq!(ThesisVariant::default(), ThesisVariant::DEFAULT);
        assert!(ThesisVariant::DEFAULT.is_default());
        assert!(!ThesisVariant::DEFAULT.changes_trials());
        let mut seen = std::collections::HashSet::new();
        for v in every() {
            assert_eq!(ThesisVariant::from_bits(v.bits()), Some(v));
            assert!(seen.insert(v));
            // Only the generation count leaves the trials alone.
            let only_generations = ThesisVariant {
                generations: GenerationCount::GMax,
                ..v
            }
            .is_default();
            assert_eq!(v.changes_trials(), !only_generations, "{v:?}");
            assert_eq!(
                v.extra_generations(),
                (v.generations == GenerationCount::PlusOne) as u32
            );
        }
        assert_eq!(seen.len(), 64);
        assert_eq!(ThesisVariant::from_bits(1 << USED_BITS), None);
        assert_eq!(ThesisVariant::from_bits(u32::MAX), None);
    }

    /// The rejection draws of the module's documentation, written out: the words of
    /// slot 0, then of the rejection slots, and the thesis's two loops.
    fn reference(key: [u32; 2], p: u32, i: u32, g: u32, n: u32) -> Option<(u32, u32)> {
        let sub = subsequence(p, i);
        let mut words: Vec<u32> = block_words(key, sub, block(g, 0)).to_vec();
        for k in 0..MAX_REJECTION_WORDS / 4 {
            words.extend(block_words(key, sub, block(g, REJECTION_SLOT + k)));
        }
        let mut it = words.into_iter().take(MAX_REJECTION_WORDS as usize);
        let mut r1 = i;
        while r1 == i {
            r1 = it.next()? % n;
        }
        let mut r2 = i;
        while r2 == i || r2 == r1 {
            r2 = it.next()? % n;
        }
        Some((r1, r2))
    }

    #[test]
    fn rejection_follows_the_thesis_loops_on_the_documented_words() {
        let key = key_of(7);
        let mut rejected = 0;
        for &n in &[3u32, 4, 5, 9, 2048] {
            for g in 1..300u32 {
                for i in [0, 1, n / 2, n - 1] {
                    let d = draw_rejection(key, 2, i, g, n);
                    let want = reference(key, 2, i, g, n).expect("64 words suffice here");
                    assert_eq!((d.r[0], d.r[1]), want, "n {n} i {i} g {g}");
                    // More than two words read: some draw was rejected.
                    let sub = subsequence(2, i);
                    let w = block_words(key, sub, block(g, 0));
                    if (w[0] % n, w[1] % n) != want {
                        rejected += 1;
                    }
                }
            }
        }
        // Small populations reject often, and then the extra words are used.
        assert!(rejected > 500, "{rejected}");
    }

    #[test]
    fn exhausted_rejection_takes_the_next_allowed_indices() {
        // Every word names i: both fall back.
        assert_eq!(reject_pair(4, 5, |_| 4), (0, 1));
        assert_eq!(reject_pair(1, 5, |_| 6), (2, 3));
        // r1 accepted, then every word names i or r1.
        let mut calls = 0;
        let pair = reject_pair(2, 3, |k| {
            calls += 1;
            if k == 0 { 0 } else { 2 + 3 * (k % 2) }
        });
        assert_eq!(pair, (0, 1));
        assert_eq!(calls, MAX_REJECTION_WORDS);
        // r1 = i + 1 taken: r2 skips it.
        assert_eq!(reject_pair(0, 3, |k| if k == 0 { 1 } else { 0 }), (1, 2));
    }

    /// Pearson's χ² of the ordered pairs (r1, r2) drawn for individual `i` of `n` over
    /// `g` generations, against the uniform distribution on the (n − 1)(n − 2) pairs.
    fn chi_square(draw: impl Fn(u32) -> Draws, i: u32, n: u32, gens: u32) -> f64 {
        let mut counts = vec![0u32; (n * n) as usize];
        for g in 1..=gens {
            let d = draw(g);
            let (a, b) = (d.r[0], d.r[1]);
            assert!(
                a < n && b < n && a != i && b != i && a != b,
                "i {i} {a} {b}"
            );
            counts[(a * n + b) as usize] += 1;
        }
        let cells = ((n - 1) * (n - 2)) as f64;
        let expected = gens as f64 / cells;
        let mut chi = 0.0;
        for a in 0..n {
            for b in 0..n {
                if a != i && b != i && a != b {
                    let c = counts[(a * n + b) as usize] as f64;
                    chi += (c - expected) * (c - expected) / expected;
                }
            }
        }
        chi
    }

    #[test]
    fn rejection_draws_are_uniform_over_the_allowed_pairs() {
        // n = 7: 30 pairs, 29 degrees of freedom; 58.3 is the 0.1 % critical value.
        let key = key_of(99);
        let n = 7;
        for i in 0..n {
            let rej = chi_square(|g| draw_rejection(key, 5, i, g, n), i, n, 6000);
            let free = chi_square(|g| draw_indices(key, 5, i, g, n, 2, 0), i, n, 6000);
            assert!(rej < 58.3, "rejection, i {i}: χ² = {rej}");
            assert!(free < 58.3, "free, i {i}: χ² = {free}");
        }
        // The two ways give different pairs for the same words.
        let differ = (1..2000u32)
            .filter(|&g| {
                let a = draw_rejection(key, 5, 3, g, 2048);
                let b = draw_indices(key, 5, 3, g, 2048, 2, 0);
                a.r[..2] != b.r[..2]
            })
            .count();
        assert!(differ > 1900, "{differ}");
    }

    #[test]
    fn closed_open_lambda_reaches_zero_and_never_one() {
        let co = ThesisVariant {
            lambda: LambdaRange::ClosedOpen,
            ..ThesisVariant::DEFAULT
        };
        let oc = ThesisVariant::DEFAULT;
        assert_eq!(co.lambda::<f32>(0), 0.0);
        assert_eq!(co.lambda::<f64>(0), 0.0);
        assert_eq!(co.lambda::<f32>(255), 0.0);
        assert!(co.lambda::<f64>(255) > 0.0);
        // The default's (0, 1]: never 0; in f32 its largest words round to 1.
        assert!(oc.lambda::<f32>(0) > 0.0 && oc.lambda::<f64>(0) > 0.0);
        assert_eq!(oc.lambda::<f32>(u32::MAX), 1.0);
        assert!(oc.lambda::<f64>(u32::MAX) <= 1.0);
        let words = (0..u32::MAX - 65_537)
            .step_by(65_537)
            .chain(u32::MAX - 100_000..=u32::MAX);
        for w in words {
            let (a, b) = (co.lambda::<f32>(w), co.lambda::<f64>(w));
            assert!((0.0..1.0).contains(&a), "f32 w {w}: {a}");
            assert!((0.0..1.0).contains(&b), "f64 w {w}: {b}");
            // The same draw: closed-open is the default less half a step (f64) or
            // the word's top 24 bits (f32).
            assert_eq!(b, oc.lambda::<f64>(w) - 1.0 / 8_589_934_592.0);
            assert_eq!(a, (w >> 8) as f32 / 16_777_216.0);
        }
    }

    #[test]
    fn lambda_per_individual_repeats_the_first_components_word() {
        let key = key_of(3);
        let sub = subsequence(1, 17);
        let one = ThesisVariant {
            lambda_draw: LambdaDraw::PerIndividual,
            ..ThesisVariant::DEFAULT
        };
        let first = block_words(key, sub, block(9, COMPONENT_SLOT))[0];
        for j0 in (0..64).step_by(4) {
            assert_eq!(one.lambda_words(key, sub, 9, j0), [first; 4]);
            assert_eq!(
                ThesisVariant::DEFAULT.lambda_words(key, sub, 9, j0),
                block_words(key, sub, block(9, COMPONENT_SLOT + j0 / 4))
            );
        }
    }

    fn forms() -> [ThesisVariant; 4] {
        [
            MutationForm::Plain,
            MutationForm::Fma,
            MutationForm::FmaInner,
            MutationForm::FromBest,
        ]
        .map(|mutation| ThesisVariant {
            mutation,
            ..ThesisVariant::DEFAULT
        })
    }

    /// A uniform number in [-1, 1) from a xorshift state.
    fn next(s: &mut u64) -> f64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        (*s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    #[test]
    fn mutation_forms_round_differently_within_a_few_ulps() {
        let mut st = 0x2545_f491_4f6c_dd1du64;
        let mut differ = [0i32; 4];
        let samples = 20_000i32;
        for k in 0..samples {
            // Points of one scale as a population near convergence has them, and λ
            // from the engines' own uniform.
            let scale = 10f64.powi(k % 7 - 3);
            let four = |st: &mut u64| [(); 4].map(|_| (1.0 + 0.5 * next(st)) * scale);
            let [x, a, b, best] = four(&mut st).map(|c| c as f32);
            let lambda = f32::uniform((next(&mut st).to_bits() >> 20) as u32);
            // f32 products are exact in f64 and the sums round at 2⁻⁵³: the reference.
            let (xd, ld) = (x as f64, lambda as f64);
            let exact = xd + ld * (a as f64 - b as f64) + (1.0 - ld) * (best as f64 - xd);
            // Every form rounds at most five times, each at most half an ulp of the
            // largest term (|x|, |best| and the differences are all below 2·scale).
            let big = [x, a, b, best]
                .map(f32::abs)
                .into_iter()
                .fold(0.0, f32::max);
            let ulp = (f32::from_bits(big.to_bits() + 1) - big) as f64;
            let plain = forms()[0].mutate(x, a, b, best, lambda);
            for (m, f) in forms().iter().enumerate() {
                let got = f.mutate(x, a, b, best, lambda);
                assert!(
                    (got as f64 - exact).abs() <= 4.0 * ulp,
                    "{:?}: {got} vs {exact} (x {x} a {a} b {b} best {best} λ {lambda})",
                    f.mutation
                );
                if got.to_bits() != plain.to_bits() {
                    differ[m] += 1;
                }
            }
            // In f64 the same forms, checked against each other.
            let [x, a, b, best] = four(&mut st);
            let l = f64::uniform((next(&mut st).to_bits() >> 20) as u32);
            let p = forms()[0].mutate(x, a, b, best, l);
            for f in forms() {
                let got = f.mutate(x, a, b, best, l);
                assert!((got - p).abs() <= 8.0 * 4.0 * scale * f64::EPSILON, "{f:?}");
            }
        }
        assert_eq!(differ[0], 0);
        // Each other form differs from the plain one in some bits, often.
        for (m, &d) in differ.iter().enumerate().skip(1) {
            assert!(d > samples / 20, "form {m}: {d} of {samples} differ");
        }
    }

    #[test]
    fn mutation_forms_are_the_formulas_they_name() {
        let (x, a, b, best, l) = (0.3f64, 1.7, -0.2, 0.9, 0.625);
        let [plain, fma, inner, from_best] = forms();
        assert_eq!(
            plain.mutate(x, a, b, best, l),
            x + l * (a - b) + (1.0 - l) * (best - x)
        );
        assert_eq!(
            fma.mutate(x, a, b, best, l),
            (1.0 - l).mul_add(best - x, l.mul_add(a - b, x))
        );
        assert_eq!(
            inner.mutate(x, a, b, best, l),
            l.mul_add(a - b, (1.0 - l).mul_add(best - x, x))
        );
        assert_eq!(
            from_best.mutate(x, a, b, best, l),
            best + l * ((a - b) - (best - x))
        );
        // λ = 0 (closed-open only): from-best is the best exactly.
        assert_eq!(from_best.mutate(0.1f32, 0.7, 0.3, 0.2, 0.0), 0.2);
    }
}
