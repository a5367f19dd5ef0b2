//! The separable form of a user's objective: terms per component, summed (or
//! multiplied) by the lanes of a group that share one point, as the built-in functions
//! are (see [`crate::lanes`]).
//!
//! A separable objective has two accumulators, `a` (always a sum) and an optional `b`
//! (a sum or a product), and a final step:
//!
//! ```text
//! f(x) = finish(A, B, D),   A = Σ_j a-terms,   B = Σ_j b-terms (or Π_j b-terms)
//! ```
//!
//! Each lane of a group adds the terms of its own chunks (up to four consecutive
//! components, [`crate::lanes::chunk`]) to its running accumulators, round after round;
//! the group then combines the lanes' accumulators by the xor butterfly
//! ([`crate::lanes::butterfly`]) and one step of `finish` gives the value. So the order of
//! the additions is fixed by D alone, the same on the CPU and the GPU, in every layout.
//!
//! A term may read the component before its own (`prev`, x[j−1]) and the running sum of
//! the components before it (`base`, for prefix sums such as Schwefel's problem 1.2,
//! `Σ_j (x_0 + … + x_j)²`); the flags say which of them the objective needs, so the
//! kernels shuffle and scan only then.
//!
//! # The GPU's symbols
//!
//! A module defining the separable form defines, for each precision `T` it supports
//! (`f32`, `f64`; `.bT` below is `.b32` or `.b64`):
//!
//! ```text
//! .visible .func (.param .bT r) gpude_sep_a_T(.param .bT acc, .param .bT x0, .param .bT x1,
//!     .param .bT x2, .param .bT x3, .param .bT prev, .param .bT base,
//!     .param .b32 j0, .param .b32 n, .param .b32 d)
//! .visible .func (.param .bT r) gpude_sep_b_T(… the same …)          (when B is used)
//! .visible .func (.param .bT r) gpude_sep_finish_T(.param .bT a, .param .bT b, .param .b32 d)
//! .visible .global .align 4 .u32 gpude_sep_flags_T = FLAGS;           (see SepFlags::bits)
//! ```
//!
//! `gpude_sep_a_T(acc, x0..x3, prev, base, j0, n, d)` returns `acc` after adding the
//! a-terms of components `j0 .. j0 + n` (1 ≤ n ≤ 4) in ascending order, one rounded
//! addition each: `acc = acc + t(j0)`, then `acc = acc + t(j0 + 1)`, …; `x0..x3` hold
//! those components (entries past `n` are unspecified and must not be used), `prev` is
//! component `j0 − 1` (unspecified when `j0 = 0`), `base` the sum of components
//! `0 .. j0` (0 unless the prefix flag is set; the term of component `j0 + k` sees the
//! running sum `base + x0 + … + xk`, added left to right). `gpude_sep_b_T` is the same for
//! `B` (multiplying when the flags say product). The kernels never call them with
//! `n = 0`.

use crate::functions::{Acc, LaneIn};
use crate::lanes::LaneObjective;
use crate::real::Real;

/// How the second accumulator combines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BKind {
    /// No second accumulator (`finish` receives 0).
    #[default]
    None,
    /// A sum, from 0.
    Sum,
    /// A product, from 1.
    Product,
}

/// What a separable objective uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SepFlags {
    /// The second accumulator.
    pub b: BKind,
    /// Terms read `prev` (x[j−1]).
    pub prev: bool,
    /// Terms read `base` (the running sum of the components before the chunk).
    pub prefix: bool,
}

impl SepFlags {
    /// bit 0–1: B (0 none, 1 sum, 2 product); bit 2: prev; bit 3: prefix.
    #[inline(always)]
    pub const fn bits(self) -> u32 {
        let b = match self.b {
            BKind::None => 0,
            BKind::Sum => 1,
            BKind::Product => 2,
        };
        b | (self.prev as u32) << 2 | (self.prefix as u32) << 3
    }

    /// The flags of [`SepFlags::bits`], or `None` for a value no flags give.
    #[inline(always)]
    pub const fn from_bits(v: u32) -> Option<SepFlags> {
        if v >> 4 != 0 {
            return None;
        }
        let b = match v & 3 {
            0 => BKind::None,
            1 => BKind::Sum,
            2 => BKind::Product,
            _ => return None,
        };
        Some(SepFlags {
            b,
            prev: v & 4 != 0,
            prefix: v & 8 != 0,
        })
    }

    /// The second accumulator's starting value.
    #[inline(always)]
    pub fn b_identity<T: Real>(self) -> T {
        match self.b {
            BKind::Product => T::ONE,
            _ => T::ZERO,
        }
    }

    /// Two lanes' second accumulators combined (commutative bit for bit).
    #[inline(always)]
    pub fn b_combine<T: Real>(self, x: T, y: T) -> T {
        match self.b {
            BKind::Product => x * y,
            _ => x + y,
        }
    }
}

/// A separable objective, as the CPU engine evaluates it: the same arithmetic as the
/// module's GPU symbols (see the module documentation for what each returns).
pub trait Separable<T: Real> {
    /// What the objective uses.
    fn flags(&self) -> SepFlags;
    /// `acc` after the a-terms of the chunk.
    #[allow(clippy::too_many_arguments)]
    fn a(&self, acc: T, v: [T; 4], prev: T, base: T, j0: u32, n: u32, d: u32) -> T;
    /// `acc` after the b-terms of the chunk (never called when the flags say none).
    #[allow(clippy::too_many_arguments)]
    fn b(&self, acc: T, v: [T; 4], prev: T, base: T, j0: u32, n: u32, d: u32) -> T;
    /// The value from the combined accumulators (`b` is 0 when the flags say none).
    fn finish(&self, a: T, b: T, d: u32) -> T;
}

/// A [`Separable`] objective as a [`LaneObjective`]: what the lanes of a group do with
/// it, on the CPU ([`crate::lanes::evaluate_of`]) and in the separable kernels (there
/// `s` calls the linked module's symbols). `flags` are the objective's, read once.
pub struct SepLanes<'a, S: ?Sized> {
    pub s: &'a S,
    pub flags: SepFlags,
}

impl<S: ?Sized> Clone for SepLanes<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: ?Sized> Copy for SepLanes<'_, S> {}

impl<'a, S: ?Sized> SepLanes<'a, S> {
    /// The lanes of `s`, with its flags.
    #[inline(always)]
    pub fn new<T: Real>(s: &'a S) -> Self
    where
        S: Separable<T>,
    {
        SepLanes {
            flags: s.flags(),
            s,
        }
    }
}

impl<T: Real, S: Separable<T> + ?Sized> LaneObjective<T> for SepLanes<'_, S> {
    #[inline(always)]
    fn identity(&self) -> Acc<T> {
        Acc {
            a: T::ZERO,
            b: self.flags.b_identity(),
        }
    }
    #[inline(always)]
    fn consts(&self, _j0: u32) -> [T; 4] {
        [T::ZERO; 4]
    }
    /// The chunk's terms: nothing for a lane without components (the symbols are never
    /// called with `n = 0`). `prev` and `base` are 0 unless the flags ask for them, on
    /// the CPU as in the kernels.
    #[inline(always)]
    fn accumulate(&self, acc: &mut Acc<T>, li: &LaneIn<T>, dim: u32, _kc: &[T; 4]) {
        if li.n > 0 {
            let prev = if self.flags.prev { li.prev } else { T::ZERO };
            let base = if self.flags.prefix { li.base } else { T::ZERO };
            acc.a = self.s.a(acc.a, li.v, prev, base, li.j0, li.n, dim);
            if self.flags.b != BKind::None {
                acc.b = self.s.b(acc.b, li.v, prev, base, li.j0, li.n, dim);
            }
        }
    }
    #[inline(always)]
    fn combine(&self, x: Acc<T>, y: Acc<T>) -> Acc<T> {
        Acc {
            a: x.a + y.a,
            b: self.flags.b_combine(x.b, y.b),
        }
    }
    #[inline(always)]
    fn uses_b(&self) -> bool {
        self.flags.b != BKind::None
    }
    #[inline(always)]
    fn finish(&self, acc: Acc<T>, dim: u32) -> T {
        let b = if self.flags.b == BKind::None {
            T::ZERO
        } else {
            acc.b
        };
        self.s.finish(acc.a, b, dim)
    }
    #[inline(always)]
    fn needs_prev(&self) -> bool {
        self.flags.prev
    }
    #[inline(always)]
    fn needs_prefix(&self) -> bool {
        self.flags.prefix
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::{Formula, Function};
    use crate::lanes::{evaluate, evaluate_of};

    /// Built-in functions written against the trait, term for term as `functions.rs`
    /// computes them (textbook Griewank's product, Schwefel 1.2's prefix, exact
    /// Rosenbrock's FMA, textbook Rosenbrock as printed).
    struct Written(Function, Formula);

    #[allow(clippy::needless_range_loop)] // component-indexed, as the kernels run it
    impl<T: Real> Separable<T> for Written {
        fn flags(&self) -> SepFlags {
            SepFlags {
                b: if self.0 == Function::Griewank {
                    BKind::Product
                } else {
                    BKind::None
                },
                prev: self.0 == Function::Rosenbrock,
                prefix: self.0 == Function::Schwefel12,
            }
        }
        fn a(&self, mut acc: T, v: [T; 4], prev: T, base: T, j0: u32, n: u32, _d: u32) -> T {
            let mut p = prev;
            let mut s = base;
            for k in 0..n as usize {
                let x = v[k];
                let j = j0 + k as u32;
                acc = match self.0 {
                    Function::Rosenbrock if j == 0 => acc,
                    Function::Rosenbrock if self.1 == Formula::Exact => {
                        let d = (-p).mul_add(p, x);
                        acc + ((T::ONE - p) * (T::ONE - p) + T::of(100.0) * (d * d))
                    }
                    Function::Rosenbrock => {
                        let w = x - p * p;
                        acc + ((T::ONE - p) * (T::ONE - p) + T::of(100.0) * (w * w))
                    }
                    Function::Schwefel12 => {
                        s = s + x;
                        acc + s * s
                    }
                    _ => acc + x * x,
                };
                p = x;
            }
            acc
        }
        fn b(&self, mut acc: T, v: [T; 4], _p: T, _b: T, j0: u32, n: u32, _d: u32) -> T {
            for k in 0..n as usize {
                let kc = T::ONE / T::of_u32(j0 + k as u32 + 1).sqrt();
                acc = acc * (v[k] * kc).cos();
            }
            acc
        }
        fn finish(&self, a: T, b: T, _d: u32) -> T {
            match self.0 {
                Function::Griewank => a / T::of(4000.0) - b + T::ONE,
                _ => a,
            }
        }
    }

    fn point<T: Real>(dim: u32, seed: u32) -> Vec<T> {
        (0..dim)
            .map(|j| {
                let h = (j.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)) % 20_011;
                T::of(h as f64 / 97.0 - 100.0)
            })
            .collect()
    }

    fn same_bits<T: Real + core::fmt::Debug>() {
        let cases = [
            (Function::Sphere, Formula::Exact),
            (Function::Rosenbrock, Formula::Exact),
            (Function::Rosenbrock, Formula::Textbook),
            (Function::Schwefel12, Formula::Exact),
            (Function::Griewank, Formula::Textbook),
        ];
        for (f, formula) in cases {
            let w = Written(f, formula);
            for dim in (1..150u32).chain([255, 256, 257, 1000]) {
                for seed in 0..3 {
                    let x = point::<T>(dim, seed);
                    let want = evaluate(f, formula, &x);
                    let got = evaluate_of(SepLanes::new::<T>(&w), &x);
                    assert_eq!(
                        got.to_f64().to_bits(),
                        want.to_f64().to_bits(),
                        "{f:?} {formula:?} D = {dim}: {got:?} against {want:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn lane_order_evaluation_of_a_written_objective_is_the_builtins_f32() {
        same_bits::<f32>();
    }

    #[test]
    fn lane_order_evaluation_of_a_written_objective_is_the_builtins_f64() {
        same_bits::<f64>();
    }

    #[test]
    fn flags_round_trip_and_reject_unknown_bits() {
        for b in [BKind::None, BKind::Sum, BKind::Product] {
            for prev in [false, true] {
                for prefix in [false, true] {
                    let f = SepFlags { b, prev, prefix };
                    assert_eq!(SepFlags::from_bits(f.bits()), Some(f));
                }
            }
        }
        assert_eq!(SepFlags::from_bits(3), None);
        assert_eq!(SepFlags::from_bits(16), None);
    }
}
