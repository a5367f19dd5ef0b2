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

#[cfg(test)]
mod tests {
    use super::*;

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
