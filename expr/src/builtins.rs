//! gpude's eight built-in functions written as expressions: what `gpude functions`
//! shows as examples, what the tests compare with the built-ins, and what the
//! benchmarks run beside them.
//!
//! Each is the built-in's textbook formula with the components numbered from 0 (so
//! Griewank's `√j` is `sqrt(j+1)`), with the built-in's roundings where it has a choice
//! (Griewank's argument is `x·(1/√j)`, as the built-in computes it). The values agree with the built-ins to a few ulps
//! of the sum of the terms' magnitudes, not bit for bit: the built-ins add in lane
//! groups, expressions from left to right (see the crate documentation).

use gpude_device::Function;

/// `Σ_k 0.5^k cos(π·(3^k·(2v + 1)))`, k = 0..=20, added left to right (the built-in's
/// inner sum, term for term).
fn weierstrass_inner(v: &str) -> String {
    (0..=20)
        .map(|k| format!("0.5^{k}*cos(pi*(3^{k}*(2*{v}+1)))"))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The expression of built-in function `f`.
pub fn expression(f: Function) -> String {
    match f {
        Function::Sphere => "sum(x^2)".into(),
        Function::Rastrigin => "sum(x^2 - 10*cos(2*pi*x) + 10)".into(),
        Function::Griewank => "sum(x^2)/4000 - prod(cos(x*(1/sqrt(j+1)))) + 1".into(),
        Function::Rosenbrock => "sum((1 - x[j-1])^2 + 100*(x - x[j-1]^2)^2)".into(),
        Function::Ackley => {
            "-20*exp(-0.2*sqrt(sum(x^2)/D)) - exp(sum(cos(2*pi*x))/D) + 20 + e".into()
        }
        Function::Schwefel12 => "sum(cumsum(x)^2)".into(),
        Function::Weierstrass => format!(
            "sum(({}) - ({}))",
            weierstrass_inner("x"),
            weierstrass_inner("0")
        ),
        Function::Penalized => "0.1*(sum(select(j == 0, sin(3*pi*x)^2, 0)) \
             + sum((x[j-1] - 1)^2*(1 + sin(3*pi*x)^2)) \
             + sum(select(j == D-1, (x - 1)^2*(1 + sin(2*pi*x)^2), 0))) \
             + sum(100*max(abs(x) - 5, 0)^4)"
            .into(),
    }
}

/// The sum of the magnitudes of `f`'s terms, as an expression: the scale that the
/// rounding errors of any order of evaluation grow with. For the functions whose terms
/// are all positive it is the function itself; Griewank, Ackley, Rastrigin and
/// Weierstrass subtract, and near their cancellations the value is far smaller than
/// the errors of its parts.
pub fn magnitude(f: Function) -> String {
    match f {
        Function::Griewank => "sum(x^2)/4000 + abs(prod(cos(x*(1/sqrt(j+1))))) + 1".into(),
        Function::Ackley => {
            "20*exp(-0.2*sqrt(sum(x^2)/D)) + exp(sum(cos(2*pi*x))/D) + 20 + e".into()
        }
        Function::Rastrigin => "sum(x^2 + 10*abs(cos(2*pi*x)) + 10)".into(),
        Function::Weierstrass => format!(
            "sum(abs(({}) - ({})))",
            weierstrass_inner("x"),
            weierstrass_inner("0")
        ),
        _ => expression(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Expr;

    #[test]
    fn every_builtin_parses() {
        for f in Function::ALL {
            let e = Expr::parse(&expression(f)).unwrap_or_else(|err| panic!("{f:?}: {err}"));
            assert_eq!(e.min_dim(), if f.needs_prev() { 2 } else { 1 }, "{f:?}");
            // The magnitude is at least the value's size, and equal for positive terms.
            let m = Expr::parse(&magnitude(f)).unwrap_or_else(|err| panic!("{f:?}: {err}"));
            let x = [0.3f64, -1.7, 2.2, 0.9, -0.05];
            assert!(m.eval(&x) >= e.eval(&x).abs(), "{f:?}");
        }
    }
}
