//! The objective functions, written as per-lane pieces of one canonical evaluation.
//!
//! A D-dimensional vector is split over a *group* of `G` lanes (see [`crate::lanes`]):
//! in round `c`, lane `l` owns components `4(cG + l) .. 4(cG + l) + 4`. Each lane adds its
//! components' terms into its own accumulator (in component order), and the group's
//! accumulators are combined by a butterfly (xor) tree. The CUDA kernels run exactly this
//! with warp shuffles; the CPU engine and [`crate::lanes::evaluate`] run it lane by lane.
//! Both therefore round identically. The summation is pairwise across lanes, which keeps
//! sums of positive terms within a few ulps.

use crate::each_component;
use crate::lanes::LaneObjective;
use crate::real::Real;

/// Expands to the [`Function`] enum from the registry's list.
macro_rules! function_enum {
    ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
        $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
        /// The built-in objective functions, declared in [`crate::registry`]. All have
        /// minimum value 0.
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Function {
            $($(#[$doc])* $variant = $num,)*
        }

        impl Function {
            /// Every built-in function, in the order of their numbers.
            pub const ALL: [Function; [$($num),*].len()] = [$(Function::$variant),*];

            /// The function's part of its kernels' names ([`crate::registry::KernelKey`]).
            pub fn key(self) -> &'static str {
                match self {
                    $(Function::$variant => stringify!($key),)*
                }
            }
        }
    };
}
crate::builtin_functions!(function_enum);

impl Function {
    pub fn from_u32(v: u32) -> Option<Function> {
        Self::ALL.get(v as usize).copied()
    }

    /// Does the second accumulator combine by product (textbook Griewank: `Π cos`)
    /// rather than sum?
    #[inline(always)]
    pub fn b_is_product(self, formula: Formula) -> bool {
        matches!(self, Function::Griewank) && formula == Formula::Textbook
    }

    /// Does the second accumulator hold `1 − Π c_j` and combine two such values as
    /// `m₁ + m₂ − m₁m₂` (exact Griewank)?
    #[inline(always)]
    pub fn b_is_one_minus_product(self, formula: Formula) -> bool {
        matches!(self, Function::Griewank) && formula == Formula::Exact
    }

    /// Does a lane need the component before its first one (pair terms)?
    #[inline(always)]
    pub fn needs_prev(self) -> bool {
        matches!(self, Function::Rosenbrock | Function::Penalized)
    }

    /// Does a lane need the prefix sum of all earlier components (Schwefel 1.2)?
    #[inline(always)]
    pub fn needs_prefix(self) -> bool {
        matches!(self, Function::Schwefel12)
    }
}

/// How the objective values are computed.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Formula {
    /// Arranged so that nothing cancels: within a few ulps (relative) of the exact value
    /// everywhere, also next to the optimum, where the value is tiny (see
    /// docs/FUNCTIONS.md).
    #[default]
    Exact = 0,
    /// The formulas as printed (`Σx²/4000 − Π cos + 1`, `20 − 20e^… + e − e^…`,
    /// `x² − 10 cos 2πx + 10`, …), evaluated as written: what the thesis computed. Next
    /// to the optimum they cancel, and in f32 they return 0 (or stall near 1e-6) well
    /// before the true value is that small.
    Textbook = 1,
}

impl Formula {
    pub const ALL: [Formula; 2] = [Formula::Exact, Formula::Textbook];

    pub fn from_u32(v: u32) -> Option<Formula> {
        Self::ALL.get(v as usize).copied()
    }
}

/// One lane's running sums.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Acc<T> {
    pub a: T,
    pub b: T,
}

/// `1 − (1 − m₁)(1 − m₂) = m₁ + m₂ − m₁m₂`, commutative bit for bit (the sum and the
/// product inside the FMA both are). For m₁, m₂ ∈ [0, 1] every step is a sum of
/// non-negative parts: within 3 ulps (relative).
#[inline(always)]
fn one_minus_product<T: Real>(m1: T, m2: T) -> T {
    (-m1).mul_add(m2, m1 + m2)
}

impl<T: Real> Acc<T> {
    #[inline(always)]
    pub fn identity(f: Function, formula: Formula) -> Self {
        Acc {
            a: T::ZERO,
            b: if f.b_is_product(formula) {
                T::ONE
            } else {
                T::ZERO
            },
        }
    }

    /// Combines two lanes' sums (commutative bit for bit, so every lane of a
    /// butterfly ends with the same value).
    #[inline(always)]
    pub fn combine(self, o: Self, f: Function, formula: Formula) -> Self {
        Acc {
            a: self.a + o.a,
            b: if f.b_is_product(formula) {
                self.b * o.b
            } else if f.b_is_one_minus_product(formula) {
                one_minus_product(self.b, o.b)
            } else {
                self.b + o.b
            },
        }
    }
}

/// What one lane sees in one round.
#[derive(Clone, Copy, Debug)]
pub struct LaneIn<T> {
    /// The lane's (up to) four components; entries past `n` are ignored.
    pub v: [T; 4],
    /// Index of `v[0]` in the vector.
    pub j0: u32,
    /// How many of `v` are components (0..=4).
    pub n: u32,
    /// Component `j0 − 1` (meaningless when `j0 == 0`).
    pub prev: T,
    /// Sum of components `0 .. j0` (only for functions that need it).
    pub base: T,
}

#[inline(always)]
fn sq<T: Real>(x: T) -> T {
    x * x
}

/// `Σ_k a^k cos(π b^k (2x + 1))` with a = 0.5, b = 3, k = 0..=20.
#[inline(always)]
fn weierstrass_inner<T: Real>(x: T) -> T {
    let t = x + x + T::ONE;
    let mut s = T::ZERO;
    let mut ak = T::ONE;
    let mut bk = T::ONE;
    let half = T::of(0.5);
    let three = T::of(3.0);
    let mut k = 0;
    while k <= 20 {
        s = s + ak * (T::PI * (bk * t)).cos();
        ak = ak * half;
        bk = bk * three;
        k += 1;
    }
    s
}

/// Per-component constants of a chunk that do not depend on x, computed once per lane
/// and round (the kernels hoist them out of their loops): Griewank's `1/√j`.
#[inline(always)]
pub fn lane_consts<T: Real>(f: Function, j0: u32) -> [T; 4] {
    let mut k = [T::ZERO; 4];
    if matches!(f, Function::Griewank) {
        let mut m = 0;
        while m < 4 {
            k[m] = T::ONE / T::of_u32(j0 + m as u32 + 1).sqrt();
            m += 1;
        }
    }
    k
}

/// Adds one lane's terms for one round to `acc`; `kc` from [`lane_consts`].
#[inline(always)]
pub fn accumulate<T: Real>(
    f: Function,
    formula: Formula,
    acc: &mut Acc<T>,
    li: &LaneIn<T>,
    dim: u32,
    kc: &[T; 4],
) {
    match formula {
        Formula::Exact => accumulate_exact(f, acc, li, dim, kc),
        Formula::Textbook => accumulate_textbook(f, acc, li, dim, kc),
    }
}

/// Exact Ackley accumulates `(2²⁰ x_j)²` (powers of two scale exactly).
const ACKLEY_SCALE: f64 = 1_048_576.0;

/// `x − round(x)`, exact: sin²(kπx) for an integer k depends only on it.
#[inline(always)]
fn centred<T: Real>(x: T) -> T {
    x - x.round_even()
}

/// [`accumulate`] with [`Formula::Exact`]: every term is a sum of non-negative parts
/// each computed to a few ulps (relative), so nothing cancels next to the optimum.
/// - Griewank: `b` holds `m = 1 − Π cos t_j`, with `1 − cos t = 2 sin²(t/2)`;
/// - Rosenbrock: `x_{j+1} − x_j²` with one rounding (an FMA);
/// - Ackley: `b = Σ sin² πx_j` (`cos 2πx − 1 = −2 sin² πx`), and `a = Σ (2²⁰x_j)²`;
/// - f4: `sin² 3πx = sin² 3πr`, `sin² 2πx = sin² 2πr` with `r = x − round(x)`;
/// - Rastrigin: `x² − 10 cos 2πx + 10 = x² + 20 sin² πx`;
/// - Weierstrass: [`Real::weierstrass_terms`].
// The fourth copy of the component body (each_component!) leaves `prev` unread.
#[allow(unused_assignments)]
#[inline(always)]
fn accumulate_exact<T: Real>(f: Function, acc: &mut Acc<T>, li: &LaneIn<T>, dim: u32, kc: &[T; 4]) {
    let one = T::ONE;
    let mut prev = li.prev;
    let mut s = li.base;
    // Griewank's four sines first, in one call (entries past `n` are computed and not
    // used).
    let h4 = if T::STRAIGHT && matches!(f, Function::Griewank) {
        let half = |kk: usize| li.v[kk] * kc[kk] * T::of(0.5);
        T::sin4([half(0), half(1), half(2), half(3)])
    } else {
        [T::ZERO; 4]
    };
    each_component!(kk => {
        let k = kk as u32;
        if k < li.n {
            let x = li.v[kk];
            let j = li.j0 + k;
            match f {
                Function::Sphere => acc.a = acc.a + x * x,
                Function::Griewank => {
                    acc.a = acc.a + x * x;
                    let h = if T::STRAIGHT {
                        h4[kk]
                    } else {
                        (x * kc[kk] * T::of(0.5)).sin()
                    };
                    acc.b = one_minus_product(acc.b, (h + h) * h);
                }
                Function::Rosenbrock => {
                    if j > 0 {
                        let d = (-prev).mul_add(prev, x);
                        acc.a = acc.a + (sq(one - prev) + T::of(100.0) * sq(d));
                    }
                }
                Function::Ackley => {
                    // Scaled by 2²⁰ so that the squares of tiny components do not
                    // underflow (the root of their mean is what `finish` needs).
                    let xs = x * T::of(ACKLEY_SCALE);
                    acc.a = acc.a + xs * xs;
                    acc.b = acc.b + sq(x.sin_pi());
                }
                Function::Penalized => {
                    let r = centred(x);
                    let s3 = sq((T::of(3.0) * r).sin_pi());
                    if j == 0 {
                        acc.a = acc.a + s3;
                    } else {
                        acc.a = acc.a + sq(prev - one) * (one + s3);
                    }
                    if j + 1 == dim {
                        let s2 = sq((r + r).sin_pi());
                        acc.a = acc.a + sq(x - one) * (one + s2);
                    }
                    let d = (x.abs() - T::of(5.0)).max(T::ZERO);
                    acc.b = acc.b + T::of(100.0) * (sq(d) * sq(d));
                }
                Function::Rastrigin => {
                    // 20·s first: (20 s)·s does not underflow before the last rounding.
                    let sp = x.sin_pi();
                    acc.a = acc.a + x.mul_add(x, (T::of(20.0) * sp) * sp);
                }
                Function::Schwefel12 => {
                    s = s + x;
                    acc.a = acc.a + s * s;
                }
                Function::Weierstrass => {
                    acc.a = acc.a + x.weierstrass_terms();
                }
            }
            prev = x;
        }
    });
}

/// [`accumulate`] with [`Formula::Textbook`]: the formulas as printed.
// The fourth copy of the component body (each_component!) leaves `prev` unread.
#[allow(unused_assignments)]
#[inline(always)]
fn accumulate_textbook<T: Real>(
    f: Function,
    acc: &mut Acc<T>,
    li: &LaneIn<T>,
    dim: u32,
    kc: &[T; 4],
) {
    let two_pi = T::PI + T::PI;
    let one = T::ONE;
    // Weierstrass's per-component constant, computed once per round.
    let w0 = if matches!(f, Function::Weierstrass) && li.n > 0 {
        weierstrass_inner(T::ZERO)
    } else {
        T::ZERO
    };
    let mut prev = li.prev;
    let mut s = li.base;
    each_component!(kk => {
        let k = kk as u32;
        if k < li.n {
            let x = li.v[kk];
            let j = li.j0 + k;
            match f {
                Function::Sphere => acc.a = acc.a + x * x,
                Function::Griewank => {
                    acc.a = acc.a + x * x;
                    acc.b = acc.b * (x * kc[kk]).cos();
                }
                Function::Rosenbrock => {
                    if j > 0 {
                        acc.a = acc.a + (sq(one - prev) + T::of(100.0) * sq(x - prev * prev));
                    }
                }
                Function::Ackley => {
                    acc.a = acc.a + x * x;
                    acc.b = acc.b + (two_pi * x).cos();
                }
                Function::Penalized => {
                    let s3 = (T::of(3.0) * T::PI * x).sin();
                    if j == 0 {
                        acc.a = acc.a + s3 * s3;
                    } else {
                        acc.a = acc.a + sq(prev - one) * (one + s3 * s3);
                    }
                    if j + 1 == dim {
                        let s2 = (two_pi * x).sin();
                        acc.a = acc.a + sq(x - one) * (one + s2 * s2);
                    }
                    let d = (x.abs() - T::of(5.0)).max(T::ZERO);
                    acc.b = acc.b + T::of(100.0) * (sq(d) * sq(d));
                }
                Function::Rastrigin => {
                    acc.a = acc.a + ((x * x - T::of(10.0) * (two_pi * x).cos()) + T::of(10.0));
                }
                Function::Schwefel12 => {
                    s = s + x;
                    acc.a = acc.a + s * s;
                }
                Function::Weierstrass => {
                    acc.a = acc.a + (weierstrass_inner(x) - w0);
                }
            }
            prev = x;
        }
    });
}

/// A lane's own sum of its components, in order (the input of the prefix scan).
#[inline(always)]
pub fn lane_total<T: Real>(li: &LaneIn<T>) -> T {
    let mut t = T::ZERO;
    each_component!(k => {
        if (k as u32) < li.n {
            t = t + li.v[k];
        }
    });
    t
}

/// The function value from the group's combined sums.
#[inline(always)]
pub fn finish<T: Real>(f: Function, formula: Formula, acc: Acc<T>, dim: u32) -> T {
    if formula == Formula::Exact {
        match f {
            Function::Griewank => return acc.a / T::of(4000.0) + acc.b,
            Function::Ackley => {
                // 20 (1 − e^{−0.2 √(a/D)}) + e (1 − e^{−2b/D}): two non-negative parts.
                let d = T::of_u32(dim);
                let r = (acc.a / d).sqrt() * T::of(1.0 / ACKLEY_SCALE);
                let t1 = T::of(-20.0) * (T::of(-0.2) * r).expm1();
                let t2 = -(T::E * ((T::of(-2.0) * acc.b) / d).expm1());
                return t1 + t2;
            }
            _ => {}
        }
    }
    match f {
        Function::Griewank => acc.a / T::of(4000.0) - acc.b + T::ONE,
        Function::Ackley => {
            let d = T::of_u32(dim);
            let t1 = (-T::of(0.2) * (acc.a / d).sqrt()).exp();
            let t2 = (acc.b / d).exp();
            // Grouped, with e from the same exp, so that both differences vanish
            // exactly at the optimum.
            (T::of(20.0) - T::of(20.0) * t1) + (T::ONE.exp() - t2)
        }
        Function::Penalized => T::of(0.1) * acc.a + acc.b,
        _ => acc.a,
    }
}

/// A built-in function in one formula, as a [`LaneObjective`]: the code path of the
/// built-in kernels and of [`crate::lanes::evaluate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BuiltinObjective {
    pub f: Function,
    pub formula: Formula,
}

impl<T: Real> LaneObjective<T> for BuiltinObjective {
    #[inline(always)]
    fn identity(&self) -> Acc<T> {
        Acc::identity(self.f, self.formula)
    }
    #[inline(always)]
    fn consts(&self, j0: u32) -> [T; 4] {
        lane_consts(self.f, j0)
    }
    #[inline(always)]
    fn accumulate(&self, acc: &mut Acc<T>, li: &LaneIn<T>, dim: u32, kc: &[T; 4]) {
        accumulate(self.f, self.formula, acc, li, dim, kc)
    }
    #[inline(always)]
    fn combine(&self, x: Acc<T>, y: Acc<T>) -> Acc<T> {
        x.combine(y, self.f, self.formula)
    }
    #[inline(always)]
    fn uses_b(&self) -> bool {
        // Every built-in's group combines both accumulators (unused ones hold 0).
        true
    }
    #[inline(always)]
    fn finish(&self, acc: Acc<T>, dim: u32) -> T {
        finish(self.f, self.formula, acc, dim)
    }
    #[inline(always)]
    fn needs_prev(&self) -> bool {
        self.f.needs_prev()
    }
    #[inline(always)]
    fn needs_prefix(&self) -> bool {
        self.f.needs_prefix()
    }
}
