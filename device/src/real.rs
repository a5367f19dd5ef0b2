//! The floating-point types the engines run in: `f32` and `f64`.
//!
//! The transcendental functions are the same code on every target ([`crate::math`] and
//! the `libm` crate), so the CPU and the GPU round alike; the GPU build never switches
//! to PTX's approximate instructions. `sqrt` is IEEE's correctly rounded
//! square root on both.

use core::ops::{Add, Div, Mul, Neg, Sub};

/// A floating-point type an optimization can run in.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Default
    + core::fmt::Debug
    + Send
    + Sync
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    const INFINITY: Self;
    /// The largest finite value.
    const MAX: Self;
    const PI: Self;
    const E: Self;
    /// Name for messages and files: `f32` or `f64`.
    const NAME: &'static str;

    /// Rounds an `f64` constant to this type.
    fn of(x: f64) -> Self;
    fn of_u32(x: u32) -> Self;
    fn to_f64(self) -> f64;
    /// A uniform number in (0, 1] from one Philox word.
    fn uniform(w: u32) -> Self;
    fn sqrt(self) -> Self;
    fn cos(self) -> Self;
    fn sin(self) -> Self;
    fn exp(self) -> Self;
    fn abs(self) -> Self;
    fn is_nan(self) -> bool;
    /// The bits, for exact comparisons in tests and reductions.
    fn to_bits64(self) -> u64;
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        if o < self { o } else { self }
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        if o > self { o } else { self }
    }
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const INFINITY: Self = f32::INFINITY;
    const MAX: Self = f32::MAX;
    const PI: Self = core::f32::consts::PI;
    const E: Self = core::f32::consts::E;
    const NAME: &'static str = "f32";
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn of_u32(x: u32) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn uniform(w: u32) -> Self {
        crate::philox::uniform_f32(w)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        core::f32::math::sqrt(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        crate::math::cos_f32(self)
    }
    #[inline(always)]
    fn sin(self) -> Self {
        crate::math::sin_f32(self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        libm::expf(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::from_bits(self.to_bits() & 0x7fff_ffff)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        Self::is_nan(self)
    }
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const INFINITY: Self = f64::INFINITY;
    const MAX: Self = f64::MAX;
    const PI: Self = core::f64::consts::PI;
    const E: Self = core::f64::consts::E;
    const NAME: &'static str = "f64";
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn of_u32(x: u32) -> Self {
        x as f64
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn uniform(w: u32) -> Self {
        crate::philox::uniform_f64(w)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        core::f64::math::sqrt(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        crate::math::cos_f64(self)
    }
    #[inline(always)]
    fn sin(self) -> Self {
        crate::math::sin_f64(self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        libm::exp(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::from_bits(self.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        Self::is_nan(self)
    }
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
}
