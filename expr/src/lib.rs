//! Objective functions written as expressions: parsed and checked at run time, evaluated
//! on the CPU, and compiled to PTX for the GPU with the same rounding.
//!
//! ```
//! use gpude_expr::{Expr, Precision};
//!
//! let f = Expr::parse("sum(x^2 - 10*cos(2*pi*x)) + 10*D")?;
//! assert_eq!(f.eval(&[0.0f64; 30]), 0.0);
//! let ptx = f.ptx(Precision::F32); // defines `gpude_objective_f32`
//! assert!(ptx.contains(".visible .func"));
//! # Ok::<(), gpude_expr::ParseError>(())
//! ```
//!
//! # The language
//!
//! ```text
//! expr    := add (cmp add)*                       cmp: <  <=  >  >=  ==  !=
//! add     := mul (('+' | '-') mul)*
//! mul     := unary (('*' | '/') unary)*
//! unary   := ('-' | '+') unary | primary ('^' unary)?
//! primary := number | name | name '(' expr (',' expr)* ')' | 'x' '[' index ']' | '(' expr ')'
//! index   := 'j' | 'j' '+' integer | 'j' '-' integer
//! number  := digits ['.' digits] [('e'|'E') ['+'|'-'] digits]   (or '.' digits …)
//! ```
//!
//! Precedence, loosest first: comparisons, `+ -`, `* /`, unary minus, `^`. All binary
//! operators are left-associative except `^`, which is right-associative and binds
//! tighter than unary minus: `-x^2` is `-(x^2)`, `2^3^2` is `2^9`, and `2^-x` is
//! allowed. Spaces, tabs and newlines separate tokens.
//!
//! **Names.** `D` is the dimension. `pi` and `e` are the constants rounded to the
//! precision. Inside a reduction, `j` is the **0-based** index of the current component
//! (0 … D−1), `x` alone means `x[j]`, and `x[j+k]`/`x[j-k]` is a neighbour (|k| ≤
//! [`MAX_OFFSET`]). `x` and `j` outside a reduction are errors.
//!
//! **Functions.** `sin cos tan exp log sqrt abs sinpi cospi expm1 log1p` (one argument;
//! `sinpi(x) = sin(πx)`, `cospi(x) = cos(πx)`), `pow(a, b)` (the same as `a^b`),
//! `min(a, b, …)` and `max(a, b, …)` (two or more, folded left to right:
//! `min(a, b) = b if b < a else a`, as the device crate's `Real::min`),
//! `select(c, a, b)` (`a` where `c ≠ 0` — NaN counts as true — else `b`; both sides are
//! always evaluated). Comparisons give 1 or 0 and follow IEEE: false when a side is NaN,
//! except `!=`, which is then true.
//!
//! **Reductions.** `sum(t)` and `prod(t)` evaluate the term `t` for each j of their
//! range in **ascending** order and combine as `acc = acc + t(j)` from `acc = 0`
//! (`acc = acc * t(j)` from 1). The range is every j for which each `x[j+k]` the term
//! mentions exists: with k_min ≤ 0 ≤ k_max the smallest and largest offsets used,
//! `j = −k_min … D−1−k_max`. So `sum((x - x[j-1])^2)` runs over j = 1 … D−1, and
//! `sum(x[j+1] - x[j-1])` over 1 … D−2. A reduction whose range is empty (D below
//! [`Expr::min_dim`]) is 0 (or 1). Reductions cannot be nested.
//!
//! **`cumsum(t)`**, allowed only inside `sum` or `prod` (and not inside another
//! `cumsum`), is a running sum carried along the enclosing reduction's loop: it holds 0
//! before the loop, and at each j of the loop it becomes `c = c + t(j)` and its value is
//! the new `c`. With no neighbours, `cumsum(x)` at j is `x[0] + … + x[j]` (added left to
//! right), so Schwefel's problem 1.2 is `sum(cumsum(x)^2)`. Neighbours inside the `cumsum`
//! narrow the enclosing loop like any other. Each `cumsum` in a term has its own sum.
//!
//! **Powers.** `a^n` with `n` an integer literal, 0 ≤ n ≤ [`MAX_INT_POWER`], is computed
//! by multiplications: `r = a`, then for each bit of `n` after the leading one, from
//! high to low, `r = r·r` and, if the bit is 1, `r = r·a` (so `a^2 = a·a`,
//! `a^3 = (a·a)·a`, `a^4 = (a·a)·(a·a)`); `a^0 = 1`; `a^-n = 1/(a^n)`. Any other
//! exponent calls `pow`.
//!
//! # Evaluation order and rounding
//!
//! The expression is compiled to a short list of instructions (see [`Expr::ir`]), each
//! one IEEE operation rounded to nearest in the chosen precision: no reassociation, no
//! constant folding, no fused multiply-add. `a + b + c` is `(a + b) + c`; `2*pi*x` is
//! `(2·π)·x`. Each literal is rounded once from its decimal text to the precision
//! (f32 literals are not rounded through f64). `D` and `j` convert to the precision with
//! round-to-nearest. Reductions run as described above, one after the other in the order
//! they appear. `sqrt` is the correctly rounded square root; the transcendental
//! functions are the device crate's ([`ops`] lists them); the GPU calls the same code.
//! The CPU evaluator ([`Expr::eval`]) and the PTX ([`Expr::ptx`]) execute this list one
//! instruction at a time, so they round identically.
//!
//! The order is sequential (component 0 first, one accumulator), not the lane-group
//! order of the built-in objectives, so an expression of a built-in function agrees with
//! the built-in to a few ulps rather than bit for bit. Expressions that take the
//! separable form (below) can also be evaluated in the built-ins' order.
//!
//! # The separable form
//!
//! An expression is *separable* when it is `F(R₁, R₂, D)`: a top level that uses at
//! most two different reductions (any number of times each; a reduction written twice
//! with the same term counts once), where
//!
//! - one of them is a `sum`, which becomes the accumulator **A**, and the other a `sum`
//!   or a `prod`, which becomes **B** (with a single `prod` and no `sum`, the `prod` is B
//!   and A is unused; two `prod`s are not separable);
//! - each reduction's term reads only `x` (`x[j]`), `x[j-1]`, `j`, `D`, literals and
//!   `cumsum(x)` — no other neighbour, and `cumsum` of `x` alone, in a term without
//!   `x[j-1]` (there the loop starts at j = 1, so the running sum would start at `x[1]`).
//!
//! Eight built-ins written as expressions ([`builtins`]): all but Penalized (four
//! different sums) are separable. [`Expr::separable`] gives the form
//! ([`SeparableExpr`]), [`Expr::separable_form`] the reason when there is none.
//!
//! The separable form computes the same terms and final step as the expression, one
//! IEEE operation per instruction as above, but **adds the terms in the lanes' order**
//! of the built-in functions (`gpude_device::lanes`, contract in
//! `gpude_device::separable`): D is split over a group of lanes in chunks of four
//! components; each lane adds its chunks' terms to its own A and B, component by
//! component, round after round (a term reading `x[j-1]` is skipped at j = 0, so each
//! reduction keeps the range the whole-vector rule gives it and an empty range still
//! gives 0 or 1); `cumsum(x)` at component j is the prefix sum of the components before
//! the chunk (from the group's scan) plus the chunk's components up to j, added left to
//! right; then the lanes' A and B are combined by the xor butterfly (A by `+`, B by `+`
//! or `×`), and the top level runs once on the result. That order depends only on D, so
//! the CPU engine ([`SeparableExpr`] implements `gpude_device::separable::Separable`
//! for `f32` and `f64`) and the GPU ([`SeparableExpr::ptx`]) round identically, and an
//! expression whose terms and final step repeat a built-in's operations (Sphere as
//! `sum(x^2)`, Schwefel 1.2 as `sum(cumsum(x)^2)`, and the textbook Rosenbrock,
//! Griewank, Rastrigin and Ackley as in [`builtins`], Ackley's last step grouped as
//! `(20 - 20*exp(…)) + (exp(1) - exp(…))`) gives the built-in's value bit for bit. The
//! value differs from [`Expr::eval`]'s (which keeps the ascending order) by rounding
//! only: a few ulps times D of the sum of the terms' magnitudes.
//!
//! ```
//! use gpude_device::separable::{BKind, Separable};
//! use gpude_expr::{Expr, Precision};
//!
//! let griewank = Expr::parse("sum(x^2)/4000 - prod(cos(x*(1/sqrt(j+1)))) + 1")?;
//! let s = griewank.separable().expect("a sum and a product");
//! assert_eq!(s.flags().b, BKind::Product);
//! // One chunk of four components, then the final step (D = 4).
//! let x = [0.5f64, -1.0, 2.0, 0.25];
//! let a = s.a(0.0, x, 0.0, 0.0, 0, 4, 4);
//! let b = s.b(1.0, x, 0.0, 0.0, 0, 4, 4);
//! assert_eq!(s.finish(a, b, 4), griewank.eval(&x)); // one lane: the ascending order
//! assert!(s.ptx(Precision::F32).contains("gpude_sep_finish_f32"));
//! assert!(Expr::parse("sum(x[j+1]*x)")?.separable().is_none());
//! # Ok::<(), gpude_expr::ParseError>(())
//! ```
//!
//! # Limits
//!
//! Inputs are refused, never crash: at most [`MAX_LEN`] bytes, at most [`MAX_NESTING`]
//! nested brackets/calls/signs/powers, and an expression tree at most
//! [`MAX_TREE_DEPTH`] high. Every error names its column (1-based, in characters) and
//! repeats at most [`error::MAX_ECHO`] characters of the input.
//!
//! # PTX
//!
//! [`Expr::ptx`] gives a module defining
//! `.visible .func (.param .bN retval) gpude_objective_fN(.param .b64 px, .param .b32 pd)`,
//! the whole-vector form `f(x, D)` with `x` a generic pointer to D values in global
//! memory (N = 32 or 64; the function reads them with global loads, 16 bytes at a time
//! where `x` is 16-byte aligned).
//! Transcendentals are `.extern .func` symbols named in [`ops`], to be linked (driver JIT
//! linker) with the device crate's maths. [`Expr::ptx_eval_kernel`] adds an `.entry` that
//! evaluates a matrix of points, one per thread. [`Expr::ptx_for_dim`] is the module for
//! one dimension, the one the CUDA engine links: its loops read the values that depend on
//! j and D only from a table computed here by the interpreter's operations (exactly the
//! values the loops would compute), and compute them for any other D.
//!
//! [`SeparableExpr::ptx`] gives the separable form's module: `gpude_sep_a_fN`,
//! `gpude_sep_b_fN` (when B is used), `gpude_sep_finish_fN` and the `.u32` global
//! `gpude_sep_flags_fN`, with the parameter lists of `gpude_device::separable` (named in
//! [`Precision::sep_a_name`] and its siblings). The a- and b-functions run the term's
//! instructions once per component of the chunk (`n` ≤ 4 copies, each tagged `(kM)` in
//! its comments), with `x[j]` and `x[j-1]` from their parameters instead of loads; the
//! maths are the same `.extern` symbols.

pub mod builtins;
pub mod error;
mod eval;
mod ir;
pub mod ops;
mod parser;
mod ptx;
mod separable;

pub use error::{ErrorKind, ParseError};
pub use eval::Scratch;
pub use ops::ExprReal;
pub use parser::Transcendental;
pub use ptx::PTX_HEADER;
pub use separable::{NotSeparable, SeparableExpr};

/// The longest expression accepted, in bytes.
pub const MAX_LEN: usize = 10_000;
/// The deepest nesting of brackets, calls, signs and powers.
pub const MAX_NESTING: usize = 100;
/// The tallest expression tree (long chains such as `a+b+c+…` count one level per term).
pub const MAX_TREE_DEPTH: usize = 1_000;
/// The largest neighbour offset k in `x[j±k]`.
pub const MAX_OFFSET: u32 = 8;
/// The largest integer exponent computed by multiplications.
pub const MAX_INT_POWER: u64 = 64;

/// The precision of an evaluation or of generated PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    /// `f32` or `f64`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// The name of the function [`Expr::ptx`] defines.
    pub fn function_name(self) -> &'static str {
        match self {
            Precision::F32 => "gpude_objective_f32",
            Precision::F64 => "gpude_objective_f64",
        }
    }

    /// The name of the separable form's a-function ([`SeparableExpr::ptx`]).
    pub fn sep_a_name(self) -> &'static str {
        match self {
            Precision::F32 => "gpude_sep_a_f32",
            Precision::F64 => "gpude_sep_a_f64",
        }
    }

    /// The name of the separable form's b-function (defined when B is used).
    pub fn sep_b_name(self) -> &'static str {
        match self {
            Precision::F32 => "gpude_sep_b_f32",
            Precision::F64 => "gpude_sep_b_f64",
        }
    }

    /// The name of the separable form's final step.
    pub fn sep_finish_name(self) -> &'static str {
        match self {
            Precision::F32 => "gpude_sep_finish_f32",
            Precision::F64 => "gpude_sep_finish_f64",
        }
    }

    /// The name of the separable form's flags (a `.u32` global, `SepFlags::bits`).
    pub fn sep_flags_name(self) -> &'static str {
        match self {
            Precision::F32 => "gpude_sep_flags_f32",
            Precision::F64 => "gpude_sep_flags_f64",
        }
    }

    /// The name of the kernel [`Expr::ptx_eval_kernel`] adds.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Precision::F32 => "gpude_objective_eval_f32",
            Precision::F64 => "gpude_objective_eval_f64",
        }
    }

    /// The `.entry` of [`Expr::ptx_eval_kernel`] alone, for a module that defines
    /// [`Precision::function_name`] some other way (a PTX objective): appended to that
    /// module, thread `i < n` writes `out[i] = f(xs + i·stride, d)`.
    pub fn eval_entry(self) -> String {
        ptx::eval_kernel(self, self.function_name(), self.kernel_name())
    }
}

/// A checked expression, ready to evaluate or to compile to PTX.
#[derive(Clone, Debug)]
pub struct Expr {
    source: String,
    program: ir::Program,
}

impl Expr {
    /// Parses and checks `src`.
    pub fn parse(src: &str) -> Result<Expr, ParseError> {
        let tree = parser::parse(src)?;
        let program = ir::lower(&tree)?;
        Ok(Expr {
            source: src.to_string(),
            program,
        })
    }

    /// The text the expression was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The value at `x` (D = `x.len()`, below 2³¹).
    pub fn eval<T: ExprReal>(&self, x: &[T]) -> T {
        let mut s = Scratch::new(&self.program);
        eval::eval(&self.program, &mut s, x)
    }

    /// Reusable working memory for [`Expr::eval_with`].
    pub fn scratch<T: ExprReal>(&self) -> Scratch<T> {
        Scratch::new(&self.program)
    }

    /// [`Expr::eval`] without allocating, with memory from [`Expr::scratch`].
    ///
    /// # Panics
    /// If `s` was made for another expression.
    pub fn eval_with<T: ExprReal>(&self, s: &mut Scratch<T>, x: &[T]) -> T {
        assert!(s.fits(&self.program), "scratch of another expression");
        eval::eval(&self.program, s, x)
    }

    /// The smallest dimension for which every reduction has a term: 1 plus the span of
    /// neighbour offsets (2 for `x[j-1]`). Engines should refuse smaller D.
    pub fn min_dim(&self) -> u32 {
        self.program.min_dim()
    }

    /// The PTX symbols of the maths the generated code calls (to be linked with it).
    pub fn external_symbols(&self, p: Precision) -> Vec<String> {
        external_symbols(&self.program, p)
    }

    /// The separable form (see the crate documentation), if the expression has one.
    pub fn separable(&self) -> Option<SeparableExpr> {
        self.separable_form().ok()
    }

    /// [`Expr::separable`], with the reason when the expression has no separable form.
    pub fn separable_form(&self) -> Result<SeparableExpr, NotSeparable> {
        separable::analyse(&self.program, &self.source)
    }

    /// A PTX module defining [`Precision::function_name`]: see the crate documentation.
    pub fn ptx(&self, p: Precision) -> String {
        ptx::module(&self.program, p, &self.source, p.function_name(), None)
    }

    /// [`Expr::ptx`] for points of dimension `dim`: the values of its loops that depend
    /// on j and D only (Griewank's `1/sqrt(j+1)`) are computed once, here, by the CPU
    /// interpreter's operations, and the loops read them from a table in the module
    /// instead of computing them per point (the same values bit for bit). The function
    /// still evaluates points of any other dimension, computing those values.
    pub fn ptx_for_dim(&self, p: Precision, dim: u32) -> String {
        ptx::module(&self.program, p, &self.source, p.function_name(), Some(dim))
    }

    /// [`Expr::ptx`] plus an `.entry` [`Precision::kernel_name`]`(xs, d, stride, n, out)`:
    /// thread `i < n` writes `out[i] = f(xs + i·stride, d)` (pointers to elements of the
    /// precision; `stride` in elements).
    pub fn ptx_eval_kernel(&self, p: Precision) -> String {
        let mut s = self.ptx(p);
        s.push_str(&ptx::eval_kernel(p, p.function_name(), p.kernel_name()));
        s
    }

    /// [`Expr::ptx_eval_kernel`] with the function of [`Expr::ptx_for_dim`].
    pub fn ptx_eval_kernel_for_dim(&self, p: Precision, dim: u32) -> String {
        let mut s = self.ptx_for_dim(p, dim);
        s.push_str(&ptx::eval_kernel(p, p.function_name(), p.kernel_name()));
        s
    }

    /// The compiled instruction list, one line per instruction, for reading and audit.
    pub fn ir(&self) -> String {
        self.program.to_string()
    }
}

/// The PTX symbols of the maths `program` calls.
fn external_symbols(program: &ir::Program, p: Precision) -> Vec<String> {
    let (fs, pow) = program.calls();
    let mut v: Vec<String> = fs.into_iter().map(|f| ops::symbol(f, p)).collect();
    if pow {
        v.push(ops::pow_symbol(p));
    }
    v
}

impl core::str::FromStr for Expr {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Expr, ParseError> {
        Expr::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str, x: &[f64]) -> f64 {
        Expr::parse(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .eval(x)
    }

    #[test]
    fn hand_derived_values() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(ev("sum(x)", &x), 10.0);
        assert_eq!(ev("prod(x)", &x), 24.0);
        assert_eq!(ev("sum(j)", &x), 6.0);
        assert_eq!(ev("D", &x), 4.0);
        assert_eq!(ev("sum(x[j-1])", &x), 6.0); // j = 1..3: x0 + x1 + x2
        assert_eq!(ev("sum(x[j+1])", &x), 9.0); // j = 0..2: x1 + x2 + x3
        assert_eq!(ev("sum(x[j+1] - x[j-1])", &x), 4.0); // j = 1, 2
        assert_eq!(ev("sum(cumsum(x))", &x), 1.0 + 3.0 + 6.0 + 10.0);
        assert_eq!(ev("sum(cumsum(x)^2)", &x), 1.0 + 9.0 + 36.0 + 100.0);
        // cumsum along a loop narrowed by a neighbour: j = 1..3, running x1, x1+x2, …
        assert_eq!(ev("sum(cumsum(x) * (x[j-1] > 0))", &x), 2.0 + 5.0 + 9.0);
        assert_eq!(ev("prod(1 + cumsum(x))", &x), 2.0 * 4.0 * 7.0 * 11.0);
        assert_eq!(ev("-2^2", &[]), -4.0);
        assert_eq!(ev("2^3^2", &[]), 512.0);
        assert_eq!(ev("2^-2", &[]), 0.25);
        assert_eq!(ev("1 - 2 - 3", &[]), -4.0);
        assert_eq!(
            ev(
                "(1 < 2) + (2 <= 2) + (3 > 4) + (1 >= 2) + (1 == 1) + (1 != 1)",
                &[]
            ),
            3.0
        );
        assert_eq!(ev("select(0, 5, 7) + select(-1, 10, 20)", &[]), 17.0);
        assert_eq!(ev("min(3, 1, 2) + max(3, 1, 2) + abs(-5)", &[]), 9.0);
        assert_eq!(ev("sqrt(16) + pow(2, 10)", &[]), 1028.0);
        assert_eq!(ev("sum(select(j == D - 1, x, 0))", &x), 4.0);
        assert_eq!(ev("sum(x^0)", &x), 4.0);
        // Empty ranges.
        assert_eq!(ev("sum(x[j-1])", &[5.0]), 0.0);
        assert_eq!(ev("prod(x[j-1])", &[5.0]), 1.0);
        assert_eq!(ev("sum(x)", &[]), 0.0);
    }

    #[test]
    fn nan_rules() {
        let nan = f64::NAN;
        let e = Expr::parse("sum(select(x, 1, 2))").unwrap();
        assert_eq!(e.eval(&[nan]), 1.0); // NaN counts as true
        let e = Expr::parse("sum((x != x) + 10*(x == x) + 100*(x < 1))").unwrap();
        assert_eq!(e.eval(&[nan]), 1.0);
        let e = Expr::parse("sum(min(x, 1))").unwrap();
        assert!(e.eval(&[nan]).is_nan()); // min(a, b) = b < a ? b : a
        let e = Expr::parse("sum(min(1, x))").unwrap();
        assert_eq!(e.eval(&[nan]), 1.0);
    }

    #[test]
    fn min_dim_counts_the_span_of_neighbours() {
        assert_eq!(Expr::parse("1").unwrap().min_dim(), 1);
        assert_eq!(Expr::parse("sum(x)").unwrap().min_dim(), 1);
        assert_eq!(Expr::parse("sum(x[j-1]) + sum(x)").unwrap().min_dim(), 2);
        assert_eq!(Expr::parse("sum(x[j+2] - x[j-1])").unwrap().min_dim(), 4);
    }

    #[test]
    fn integer_powers_are_the_documented_products() {
        let e = Expr::parse("sum(x^13)").unwrap();
        // 13 = 0b1101: a; a²·a; (a³)²; (a⁶)²·a: five multiplications.
        assert_eq!(e.ir().matches("= mul").count(), 5);
        for v in [1.1f64, -0.7, 3.3, 1e-20] {
            let a2 = v * v;
            let a3 = a2 * v;
            let a6 = a3 * a3;
            let a13 = (a6 * a6) * v;
            assert_eq!(e.eval(&[v]).to_bits(), a13.to_bits());
        }
        let e = Expr::parse("sum(x^-3)").unwrap();
        assert_eq!(e.eval(&[2.0f32]), 0.125);
        // A large or fractional exponent goes through pow.
        assert!(Expr::parse("x^65 + 1").is_err()); // x outside a reduction
        assert!(Expr::parse("sum(x^65)").unwrap().ir().contains("pow"));
        assert!(Expr::parse("sum(x^0.5)").unwrap().ir().contains("pow"));
    }

    #[test]
    fn scratch_is_reusable_and_checked() {
        let e = Expr::parse("sum(cumsum(x))").unwrap();
        let mut s = e.scratch::<f32>();
        assert_eq!(e.eval_with(&mut s, &[1.0, 1.0]), 3.0);
        assert_eq!(e.eval_with(&mut s, &[1.0, 1.0]), 3.0); // the running sum restarts
        let other = Expr::parse("1 + 2 + 3").unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            other.eval_with(&mut s, &[1.0])
        }));
        assert!(r.is_err());
    }
}
