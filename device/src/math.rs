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
    core::f32::math::mul_add(a, b, c)
}

/// Reduced argument and quadrant for |x| < FAST_LIMIT.
#[inline(always)]
fn reduce(x: f32) -> (f32, u32) {
    // Round x·2/π to an integer by adding and subtracting 1.5·2²³.
    const SHIFT: f32 = 12_582_912.0;
    let n = fma(x, FRAC_2_PI_F, SHIFT) - SHIFT;
    let r = fma(-n, P1, x);
    let r = fma(-n, P2, r);
    let r = fma(-n, P3, r);
    (r, (n as i32 & 3) as u32)
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
    if !x.is_finite() {
        return f32::NAN;
    }
    let (y, q) = if x.abs() < FAST_LIMIT {
        reduce(x)
    } else {
        reduce_far(x)
    };
    // Quadrant q: c, −s, −c, s. Selected with bit operations, not a branch (the quadrant
    // is random, so a branch would mispredict half the time on the CPU).
    quadrant(cos_core(y), sin_core(y), q, (q.wrapping_add(1) & 2) << 30)
}

/// sin(x) for `f32`.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let (y, q) = if x.abs() < FAST_LIMIT {
        reduce(x)
    } else {
        reduce_far(x)
    };
    // Quadrant q: s, c, −s, −c.
    quadrant(sin_core(y), cos_core(y), q, (q & 2) << 30)
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
