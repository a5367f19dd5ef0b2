//! Cosine and sine for `f32` that stay accurate, run at full f32 rate on the GPU and
//! inline without calls.
//!
//! For |x| < 6 434 (4 096·π/2) the argument is reduced with a three-part π/2 and fused
//! multiply-adds (the classic Cody–Waite scheme with FMA); the Taylor polynomials of cos
//! and sin to degree 10/11 are then evaluated in f32 with FMA on |y| ≤ π/4 (truncation
//! below 1.2e-10). Error: at most 2 ulp against the correctly rounded value (checked by
//! the tests on a dense grid), never an approximate hardware instruction.
//! FMA is correctly rounded on both targets (`fma.rn.f32` on the GPU, `fmaf` on the
//! CPU), so both engines compute the same bits.
//!
//! Larger arguments are reduced exactly à la Payne–Hanek: the f32 input is an integer
//! m·2^e, multiplied by a 96-bit window of the bits of 2/π in 128-bit integer arithmetic,
//! which leaves the quadrant and a 64-bit fraction (error below 2⁻⁶⁶).

const FRAC_2_PI_F: f32 = 0.636_619_75;
/// π/2 split into three f32 parts (P1 is π/2 rounded, P2 and P3 the next bits).
const P1: f32 = f32::from_bits(0x3fc90fdb);
const P2: f32 = f32::from_bits(0xb33bbd2e);
const P3: f32 = f32::from_bits(0xa6f72ced);
const PIO2_HI: f64 = 1.570_796_326_734_125_6;
const PIO2_LO: f64 = 6.077_100_506_506_192e-11;
const FAST_LIMIT: f32 = 6_434.0;

#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    crate::exact::fma_f32(a, b, c)
}

/// Reduced argument and quadrant for |x| < FAST_LIMIT.
#[inline(always)]
fn reduce(x: f32) -> (f32, u32) {
    // Round x·2/π to an integer by adding and subtracting 1.5·2²³.
    const SHIFT: f32 = 12_582_912.0;
    let s = fma(x, FRAC_2_PI_F, SHIFT);
    let n = s - SHIFT;
    let r = fma(-n, P1, x);
    let r = fma(-n, P2, r);
    let r = fma(-n, P3, r);
    // s = 1.5·2²³ + n exactly (|n| ≤ 4 096): its mantissa is 2²² + n, whose low two bits
    // are n mod 4. Read from the bits, the quadrant needs no float-to-integer conversion
    // (which Rust saturates, with compares and selects around the GPU's cvt).
    (r, s.to_bits() & 3)
}

/// cos on |y| ≤ π/4: `1 − y²/2! + … + y¹⁰/10!`.
#[inline(always)]
fn cos_core(y: f32) -> f32 {
    let z = y * y;
    let p = fma(z, -1.0 / 3_628_800.0, 1.0 / 40_320.0);
    let p = fma(z, p, -1.0 / 720.0);
    let p = fma(z, p, 1.0 / 24.0);
    let p = fma(z, p, -0.5);
    fma(z, p, 1.0)
}

/// sin on |y| ≤ π/4: `y − y³/3! + … + y¹¹/11!`.
#[inline(always)]
fn sin_core(y: f32) -> f32 {
    let z = y * y;
    let p = fma(z, -1.0 / 39_916_800.0, 1.0 / 362_880.0);
    let p = fma(z, p, -1.0 / 5_040.0);
    let p = fma(z, p, 1.0 / 120.0);
    let p = fma(z, p, -1.0 / 6.0);
    fma(y * z, p, y)
}

/// The bits of 2/π after the binary point, 32 to a word, behind one zero word.
const TWO_OVER_PI: [u32; 12] = [
    0x00000000, 0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab,
    0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea,
];

/// Reduction of a finite `x` with |x| ≥ FAST_LIMIT: (y, quadrant), |y| ≤ π/4.
#[inline(always)]
fn reduce_far(x: f32) -> (f32, u32) {
    let bits = x.to_bits();
    let e = ((bits >> 23) & 0xff) as i32 - 150; // x = m·2^e
    let m = ((bits & 0x7f_ffff) | 0x80_0000) as u128;
    // The window holds the bits of 2/π after position k0 = e − 2 (earlier bits only add
    // multiples of 4); word 0 of the table stands for positions −31..0.
    let s = (e - 2 + 32) as u32;
    let w = (s / 32) as usize;
    let sh = s % 32;
    let mut win: u128 = 0;
    let mut k = 0;
    while k < 4 {
        win = (win << 32) | TWO_OVER_PI[w + k] as u128;
        k += 1;
    }
    let win = (win << sh) >> 32; // 96 bits
    let p = m * win; // x·2/π mod 4, with the binary point at bit 94
    let f = (p >> 30) as u64; // the fraction, 64 bits
    let q = ((p >> 94) as u32).wrapping_add((f >> 63) as u32) & 3;
    let r = (f as i64) as f64 * (1.0 / 18_446_744_073_709_551_616.0);
    let y = (r * (PIO2_HI + PIO2_LO)) as f32;
    // The window reduced |x|; x < 0 reduces to the negated pair.
    if x < 0.0 {
        (-y, q.wrapping_neg() & 3)
    } else {
        (y, q)
    }
}

/// cos(x) for `f32`.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    // One compare on the common path: NaN and ±∞ fail the first test.
    let (y, q) = if x.abs() < FAST_LIMIT {
        reduce(x)
    } else if x.is_finite() {
        reduce_far(x)
    } else {
        return f32::NAN;
    };
    // Quadrant q: c, −s, −c, s. Selected with bit operations, not a branch (the quadrant
    // is random, so a branch would mispredict half the time on the CPU).
    quadrant(cos_core(y), sin_core(y), q, (q.wrapping_add(1) & 2) << 30)
}

/// sin(x) for `f32`.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    // One compare on the common path: NaN and ±∞ fail the first test.
    let (y, q) = if x.abs() < FAST_LIMIT {
        reduce(x)
    } else if x.is_finite() {
        reduce_far(x)
    } else {
        return f32::NAN;
    };
    // Quadrant q: s, c, −s, −c.
    quadrant(sin_core(y), cos_core(y), q, (q & 2) << 30)
}

/// sin of four arguments, the same bits as [`sin_f32`] on each: one test of the four
/// against the fast reduction's range, then four straight reductions. Per argument the
/// GPU otherwise pays a divergent branch, with its convergence barriers, around a far
/// reduction that arguments of DE populations almost never reach.
#[inline(always)]
pub fn sin4_f32(x: [f32; 4]) -> [f32; 4] {
    // `&`, not `&&`: four compares and one branch. NaN and ±∞ fail the test.
    let near = (x[0].abs() < FAST_LIMIT)
        & (x[1].abs() < FAST_LIMIT)
        & (x[2].abs() < FAST_LIMIT)
        & (x[3].abs() < FAST_LIMIT);
    if near {
        let f = |v: f32| {
            let (y, q) = reduce(v);
            quadrant(sin_core(y), cos_core(y), q, (q & 2) << 30)
        };
        [f(x[0]), f(x[1]), f(x[2]), f(x[3])]
    } else {
        [sin_f32(x[0]), sin_f32(x[1]), sin_f32(x[2]), sin_f32(x[3])]
    }
}

/// `even` for even quadrants, `odd` for odd ones, with the sign bit `sign` flipped in.
#[inline(always)]
fn quadrant(even: f32, odd: f32, q: u32, sign: u32) -> f32 {
    let m = (q & 1).wrapping_neg();
    f32::from_bits(((odd.to_bits() & m) | (even.to_bits() & !m)) ^ sign)
}

/// cos(x) for `f64`, out of line (libm).
#[inline(never)]
pub fn cos_f64(x: f64) -> f64 {
    libm::cos(x)
}

/// sin(x) for `f64`, out of line (libm).
#[inline(never)]
pub fn sin_f64(x: f64) -> f64 {
    libm::sin(x)
}

/// sin(πx) and cos(πx) with exact argument reduction: `x = n/2 + r` with n an integer
/// and |r| ≤ ¼ (both exact), then polynomials in r. The value is therefore exact at
/// every half-integer (sin(πk) = 0, cos(πk) = ±1) and accurate to about 1 ulp (relative)
/// everywhere else, also for tiny |x|. Only explicit FMAs, no approximate instruction:
/// the same bits on the CPU and the GPU.
///
/// The polynomials are the Taylor series of sin(πr) and cos(πr) on |r| ≤ ¼, to degree
/// 11/10 in f32 (truncation below 1.2e-10 relative) and 17/18 in f64 (below 2e-18).
/// The leading term πr is added last, with π split in two parts.
// The f32 coefficients are the f64 ones rounded.
const SINPI_F32: [f32; 5] = [
    SINPI_F64[0] as f32,
    SINPI_F64[1] as f32,
    SINPI_F64[2] as f32,
    SINPI_F64[3] as f32,
    SINPI_F64[4] as f32,
];
const COSPI_F32: [f32; 5] = [
    COSPI_F64[0] as f32,
    COSPI_F64[1] as f32,
    COSPI_F64[2] as f32,
    COSPI_F64[3] as f32,
    COSPI_F64[4] as f32,
];
const PI_F32_HI: f32 = core::f32::consts::PI;
const PI_F32_LO: f32 = (core::f64::consts::PI - core::f32::consts::PI as f64) as f32;

const SINPI_F64: [f64; 8] = [
    -5.167_712_780_049_97,
    2.550_164_039_877_345_5,
    -0.599_264_529_320_792_1,
    0.082_145_886_611_128_23,
    -0.007_370_430_945_714_350_4,
    0.000_466_302_805_767_612_55,
    -2.191_535_344_783_021_7e-5,
    7.952_054_001_475_513e-7,
];
const COSPI_F64: [f64; 9] = [
    -4.934_802_200_544_679,
    4.058_712_126_416_768_5,
    -1.335_262_768_854_589_5,
    0.235_330_630_358_893_2,
    -0.025_806_891_390_014_06,
    0.001_929_574_309_403_923_1,
    -0.000_104_638_104_924_845_7,
    4.303_069_587_032_947e-6,
    -1.387_895_246_221_377_1e-7,
];
const PI_F64_HI: f64 = core::f64::consts::PI;
const PI_F64_LO: f64 = 1.224_646_799_147_353_2e-16;

#[inline(always)]
fn fma64(a: f64, b: f64, c: f64) -> f64 {
    crate::exact::fma_f64(a, b, c)
}

/// sin(πr), |r| ≤ ¼.
#[inline(always)]
fn sinpi_core_f32(r: f32) -> f32 {
    let z = r * r;
    let mut p = SINPI_F32[4];
    let mut k = 4;
    while k > 0 {
        k -= 1;
        p = fma(z, p, SINPI_F32[k]);
    }
    fma(r, PI_F32_HI, fma(r, PI_F32_LO, r * z * p))
}

/// cos(πr), |r| ≤ ¼.
#[inline(always)]
fn cospi_core_f32(r: f32) -> f32 {
    let z = r * r;
    let mut p = COSPI_F32[4];
    let mut k = 4;
    while k > 0 {
        k -= 1;
        p = fma(z, p, COSPI_F32[k]);
    }
    fma(z, p, 1.0)
}

#[inline(always)]
fn sinpi_core_f64(r: f64) -> f64 {
    let z = r * r;
    let mut p = SINPI_F64[7];
    let mut k = 7;
    while k > 0 {
        k -= 1;
        p = fma64(z, p, SINPI_F64[k]);
    }
    fma64(r, PI_F64_HI, fma64(r, PI_F64_LO, r * z * p))
}

#[inline(always)]
fn cospi_core_f64(r: f64) -> f64 {
    let z = r * r;
    let mut p = COSPI_F64[8];
    let mut k = 8;
    while k > 0 {
        k -= 1;
        p = fma64(z, p, COSPI_F64[k]);
    }
    fma64(z, p, 1.0)
}

/// `x = n/2 + r`: (r, n mod 4), exact. |x| ≥ 2²⁴ is an even integer: (0, 0), as is NaN
/// (the callers return NaN for it first).
#[inline(always)]
fn reduce_half_f32(x: f32) -> (f32, u32) {
    // NaN takes this branch too, so that the conversion below only sees integers.
    if x.abs() >= 16_777_216.0 || x.is_nan() {
        return (0.0, 0);
    }
    let t = x + x;
    let n = crate::exact::round_even_f32(t);
    // SAFETY: n is an integer with |n| ≤ 2²⁵, which i32 holds. (`as` would saturate,
    // with compares and selects around the GPU's conversion.)
    let ni: i32 = unsafe { n.to_int_unchecked() };
    ((t - n) * 0.5, (ni & 3) as u32)
}

#[inline(always)]
fn reduce_half_f64(x: f64) -> (f64, u32) {
    // NaN takes this branch too, so that the conversion below only sees integers.
    if x.abs() >= 9_007_199_254_740_992.0 || x.is_nan() {
        return (0.0, 0);
    }
    let t = x + x;
    let n = crate::exact::round_even_f64(t);
    // SAFETY: n is an integer with |n| ≤ 2⁵⁴, which i64 holds.
    let ni: i64 = unsafe { n.to_int_unchecked() };
    ((t - n) * 0.5, (ni & 3) as u32)
}

/// sin(πx) for `f32` (NaN for infinite or NaN x).
#[inline(always)]
pub fn sinpi_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let (r, q) = reduce_half_f32(x);
    // Quadrant q: s, c, −s, −c.
    quadrant(sinpi_core_f32(r), cospi_core_f32(r), q, (q & 2) << 30)
}

/// cos(πx) for `f32`.
#[inline(always)]
pub fn cospi_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let (r, q) = reduce_half_f32(x);
    // Quadrant q: c, −s, −c, s.
    quadrant(
        cospi_core_f32(r),
        sinpi_core_f32(r),
        q,
        (q.wrapping_add(1) & 2) << 30,
    )
}

/// sin(πx) for `f64`.
#[inline(always)]
pub fn sinpi_f64(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (r, q) = reduce_half_f64(x);
    let v = if q & 1 == 0 {
        sinpi_core_f64(r)
    } else {
        cospi_core_f64(r)
    };
    if q & 2 == 0 { v } else { -v }
}

/// cos(πx) for `f64`.
#[inline(always)]
pub fn cospi_f64(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (r, q) = reduce_half_f64(x);
    let v = if q & 1 == 0 {
        cospi_core_f64(r)
    } else {
        sinpi_core_f64(r)
    };
    if q.wrapping_add(1) & 2 == 0 { v } else { -v }
}

/// `Σ_{k=0}^{20} 2·0.5^k sin²(π 3^k x)` for `f32`: Weierstrass's per-component sum
/// `Σ_k 0.5^k [cos(2π 3^k (x + ½)) − cos(π 3^k)]`, rewritten so that nothing cancels
/// (3^k is odd, so `cos(2π 3^k (x + ½)) = −cos(2π 3^k x)` and `cos(π 3^k) = −1`, and
/// `1 − cos 2θ = 2 sin² θ`).
///
/// `3^k x mod 1` is computed exactly in integer arithmetic (x = m·2^e with m < 2²⁴,
/// so 3^k·m < 2⁵⁶), then centred on [0, ½] (sin² has period 1 and is even); each term
/// is one sinpi of an argument with one rounding. All terms are positive.
#[inline(always)]
pub fn weierstrass_terms_f32(x: f32) -> f32 {
    let bits = x.to_bits() & 0x7fff_ffff;
    let biased = (bits >> 23) as i32;
    if biased == 0xff {
        return f32::NAN;
    }
    let frac = (bits & 0x7f_ffff) as u64;
    let (m, e) = if biased == 0 {
        (frac, -149)
    } else {
        (frac | 0x80_0000, biased - 150)
    };
    if e >= 0 || m == 0 {
        return 0.0; // an integer: every 3^k x is one
    }
    let s = (-e) as u32; // 1 ..= 149
    // 2^-s in two normal factors.
    let s1 = s / 2;
    let f1 = f32::from_bits((127 - s1) << 23);
    let f2 = f32::from_bits((127 - (s - s1)) << 23);
    let mut p = m;
    let mut sum = 0.0f32;
    let mut w = 2.0f32;
    let mut k = 0;
    while k <= 20 {
        let mut r = p;
        if s < 64 {
            let one = 1u64 << s;
            r &= one - 1;
            if r > one >> 1 {
                r = one - r;
            }
        }
        let phi = (r as f32) * f1 * f2;
        let v = sinpi_f32(phi);
        sum = fma(w * v, v, sum);
        w *= 0.5;
        p *= 3;
        k += 1;
    }
    sum
}

/// As [`weierstrass_terms_f32`], for `f64` (x = m·2^e with m < 2⁵³: 3^k·m < 2⁸⁵ in
/// 128-bit integers).
#[inline(always)]
pub fn weierstrass_terms_f64(x: f64) -> f64 {
    let bits = x.to_bits() & 0x7fff_ffff_ffff_ffff;
    let biased = (bits >> 52) as i32;
    if biased == 0x7ff {
        return f64::NAN;
    }
    let frac = (bits & 0xf_ffff_ffff_ffff) as u128;
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u128 << 52), biased - 1075)
    };
    if e >= 0 || m == 0 {
        return 0.0;
    }
    let s = (-e) as u32; // 1 ..= 1074
    let s1 = s / 2;
    let f1 = f64::from_bits(((1023 - s1) as u64) << 52);
    let f2 = f64::from_bits(((1023 - (s - s1)) as u64) << 52);
    let mut p = m;
    let mut sum = 0.0f64;
    let mut w = 2.0f64;
    let mut k = 0;
    while k <= 20 {
        let mut r = p;
        if s < 128 {
            let one = 1u128 << s;
            r &= one - 1;
            if r > one >> 1 {
                r = one - r;
            }
        }
        // r < 2⁸⁵: the high part is exact in f64, the sum rounds once more.
        let hi = (r >> 64) as u64 as f64 * 18_446_744_073_709_551_616.0;
        let phi = (hi + (r as u64) as f64) * f1 * f2;
        let v = sinpi_f64(phi);
        sum = fma64(w * v, v, sum);
        w *= 0.5;
        p *= 3;
        k += 1;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f32, b: f32) -> u32 {
        let ia = a.to_bits() as i32;
        let ib = b.to_bits() as i32;
        if (ia < 0) != (ib < 0) {
            return if a == b { 0 } else { u32::MAX };
        }
        (ia - ib).unsigned_abs()
    }

    #[test]
    fn within_two_ulp_of_the_correctly_rounded_value() {
        // The reference: std's f64 cos/sin (≤ 1 ulp of f64) rounded to f32 is the
        // correctly rounded f32 value except at near-ties.
        let mut x = -1000.0f32;
        let mut worst = 0;
        while x < 1000.0 {
            for v in [x, x * 713.25, x * 1e-3, x * 1e-30] {
                let rc = (v as f64).cos() as f32;
                let rs = (v as f64).sin() as f32;
                let (c, s) = (cos_f32(v), sin_f32(v));
                worst = worst.max(ulps(c, rc)).max(ulps(s, rs));
                assert!(ulps(c, rc) <= 1, "cos({v}) = {c}, want {rc}");
                assert!(
                    ulps(s, rs) <= 1 || (s - rs).abs() < 1e-37,
                    "sin({v}) = {s}, want {rs}"
                );
            }
            x += 0.0137;
        }
        assert!(worst <= 1);
    }

    #[test]
    fn dense_grid_and_near_multiples_of_half_pi() {
        let mut worst = 0;
        let mut bits = 0x3000_0000u32; // from 4.7e-10 up to the far path and beyond
        while f32::from_bits(bits) < 20_000.0 {
            let v = f32::from_bits(bits);
            for x in [v, -v] {
                let rc = (x as f64).cos() as f32;
                let rs = (x as f64).sin() as f32;
                worst = worst.max(ulps(cos_f32(x), rc)).max(ulps(sin_f32(x), rs));
            }
            bits += 97;
        }
        assert!(worst <= 2, "worst {worst} ulp");
        // The f32 values nearest to k·π/2, where the reduction cancels most.
        for k in 1..4000i32 {
            let t = k as f64 * core::f64::consts::FRAC_PI_2;
            let v = t as f32;
            for x in [
                v,
                f32::from_bits(v.to_bits() + 1),
                f32::from_bits(v.to_bits() - 1),
            ] {
                let rc = (x as f64).cos() as f32;
                let rs = (x as f64).sin() as f32;
                assert!(
                    ulps(cos_f32(x), rc) <= 2,
                    "cos({x}) = {} want {rc}",
                    cos_f32(x)
                );
                assert!(
                    ulps(sin_f32(x), rs) <= 2,
                    "sin({x}) = {} want {rs}",
                    sin_f32(x)
                );
            }
        }
    }

    #[test]
    fn sinpi_cospi_exact_at_half_integers_and_within_an_ulp_elsewhere() {
        for k in -4000..4000i32 {
            let x = k as f32 * 0.5;
            let (s, c) = (sinpi_f32(x), cospi_f32(x));
            let (sd, cd) = (sinpi_f64(x as f64), cospi_f64(x as f64));
            if k % 2 == 0 {
                assert_eq!((s, sd), (0.0, 0.0), "sinpi({x})");
                let want = if (k / 2) % 2 == 0 { 1.0 } else { -1.0 };
                assert_eq!((c, cd), (want, want as f64), "cospi({x})");
            } else {
                assert_eq!((c, cd), (0.0, 0.0), "cospi({x})");
                assert_eq!(s.abs(), 1.0, "sinpi({x})");
            }
        }
        // Against f64 std sin(π x) (the argument π·x rounded once in f64: ≪ an f32 ulp).
        let mut bits = 0x2000_0000u32;
        while f32::from_bits(bits) < 3000.0 {
            let x = f32::from_bits(bits);
            let r = x as f64 - (x as f64).round();
            let rs = (core::f64::consts::PI * r).sin()
                * if (x as f64).round() % 2.0 == 0.0 {
                    1.0
                } else {
                    -1.0
                };
            let s = sinpi_f32(x) as f64;
            assert!(
                (s - rs).abs() <= 1.0 * (rs.abs() * f32::EPSILON as f64),
                "sinpi({x}) = {s} want {rs}"
            );
            bits += 4099;
        }
        assert!(sinpi_f32(f32::NAN).is_nan() && cospi_f64(f64::INFINITY).is_nan());
        assert_eq!(sinpi_f32(3.0e7), 0.0);
        assert_eq!(cospi_f64(1.0e17), 1.0);
    }

    #[test]
    fn weierstrass_terms_vanish_at_integers_and_match_the_sum() {
        assert_eq!(weierstrass_terms_f32(0.0), 0.0);
        assert_eq!(weierstrass_terms_f64(-3.0), 0.0);
        // At ½: every sin²(π 3^k/2) is 1: 2 Σ 2^-k = 4 − 2^-19.
        assert_eq!(weierstrass_terms_f64(0.5), 4.0 - 2f64.powi(-19));
        assert_eq!(weierstrass_terms_f32(0.5), (4.0 - 2f64.powi(-19)) as f32);
        // At x = 1/4 (exact): 3^k/4 mod 1 alternates ¾, ¼: every sin² is ½ (up to the
        // rounding of sin(π/4)).
        let w = weierstrass_terms_f64(0.25);
        assert!(
            (w - (2.0 - 2f64.powi(-20))).abs() <= 4.0 * f64::EPSILON,
            "{w}"
        );
    }

    #[test]
    fn far_and_special_arguments() {
        assert_eq!(cos_f32(0.0), 1.0);
        assert_eq!(sin_f32(0.0), 0.0);
        assert!(cos_f32(f32::NAN).is_nan());
        assert!(sin_f32(f32::INFINITY).is_nan());
        // Far arguments against libm's (correctly reduced) results, within one ulp.
        let mut v = 823_000.0f32;
        while v < 3e38 {
            for x in [v, -v, v * 1.000_123, v * 0.999_97] {
                assert!(
                    ulps(cos_f32(x), libm::cosf(x)) <= 1,
                    "cos({x}) = {} libm {}",
                    cos_f32(x),
                    libm::cosf(x)
                );
                assert!(
                    ulps(sin_f32(x), libm::sinf(x)) <= 1,
                    "sin({x}) = {} libm {}",
                    sin_f32(x),
                    libm::sinf(x)
                );
            }
            v *= 1.37;
        }
        // Near a multiple of π/2 (the hardest case for reduction).
        for x in [1.0e22f32, 8.0e7, 2.0e6, 5.678_9e9] {
            assert!(ulps(cos_f32(x), libm::cosf(x)) <= 2, "cos({x})");
        }
    }
}
