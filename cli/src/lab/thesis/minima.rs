//! The known local minima of the thesis's functions, and what a failing run did: trapped
//! at one of them, or not (still descending, or stalled).
//!
//! Each function's search space is cut into *cells*, each holding at most one local
//! minimum that this module can compute (in f64, exact formulas):
//!
//! - **Rosenbrock** (D ≥ 4): the cell x₁ < 0 holds the local minimum near (−1, 1, …, 1),
//!   found by Newton's method from that point (error ≈ 3.98662 at D = 128).
//! - **f4** (generalized penalized function 2, minimum at (1, …, 1)): with
//!   m_j = round(3(x_j − 1)), the leading components with m_j ≠ 0 (x₁ … x_k) select the
//!   local minimum with x_j ≈ 1 + m_j/3 for j ≤ k and x_j = 1 beyond: sin²(3πx₁) holds
//!   x₁ at a third, and (x_{j−1} − 1)² sin²(3πx_j) holds each following one. With
//!   m_j = ±1 the errors are 0.010987 (x₁ alone), 0.021024 (x₁, x₂), 0.030827, … (about
//!   0.0103 per component); x₁ ≈ 1/3 or 5/3 alone gives 0.043949.
//! - **Griewank**: with n_j = round(x_j / (π√j)), the components with n_j ≠ 0 select
//!   the local minimum with x_j ≈ πn_j√j and 0 elsewhere, when Σ n_j is even (the
//!   product of the cosines is then +1: e.g. x₁ ≈ ±2π, error 0.009865, or x₁ ≈ ±π with
//!   x₄ ≈ ±2π, error 0.012317); an odd sum puts the product at −1, near a maximum.
//!
//! The f4 and Griewank minima are refined by cyclic golden-section searches, each
//! displaced component within a quarter of its lattice spacing;
//! where a component ends at the edge of that interval, the cell holds no local minimum.
//! The cell of the global minimum (x₁ ≥ 0; no m_j or n_j ≠ 0) holds none either, and Ackley
//! has no entry: at D = 128 a component one period out is not held there (the slope of
//! the exponential of the norm beats the cosine's), and its failing runs in f32 are
//! stalled at the arithmetic's floor.
//!
//! **The rule.** A run succeeds when its verified error is at most the success
//! threshold. A failing run is *trapped* at the local minimum of its best point's cell
//! when its verified error is within [`TRAPPED_RELATIVE`] (relative) of that minimum's
//! error; otherwise it is *descending* when the search's best value still improved over
//! the last [`TAIL`] of the generations, and *stalled* when it did not (on the thesis's
//! functions in f32 this is the arithmetic's floor: the search can no longer see
//! better points).

use gpude::{Formula, Function};
use serde::Serialize;
use std::f64::consts::PI;

/// A failing run is trapped when its verified error is within this fraction of the
/// local minimum's error.
pub const TRAPPED_RELATIVE: f64 = 1e-2;
/// A run that improved over this last fraction of its generations is still descending.
pub const TAIL: f64 = 0.1;

/// What a run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Verified error at most the success threshold.
    Success,
    /// At a known local minimum.
    Trapped,
    /// Not at a known local minimum, and the search still improved at the end.
    Descending,
    /// Not at a known local minimum, and the search's best value did not improve over
    /// the last [`TAIL`] of the generations.
    Stalled,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Trapped => "trapped",
            Outcome::Descending => "descending",
            Outcome::Stalled => "stalled",
        }
    }
}

/// A local minimum that is not the global one.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalMinimum {
    /// What it is, the same for every point of its family (for counting), e.g.
    /// "Rosenbrock's local minimum near (−1, 1, …, 1)".
    pub name: String,
    /// Which member of the family: the displaced components, e.g. "x1 ≈ 2/3".
    pub detail: String,
    pub x: Vec<f64>,
    /// Its error (f64, exact formulas).
    pub error: f64,
}

/// A run's outcome, with the local minimum it is trapped at.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Classification {
    pub outcome: Outcome,
    /// The local minimum (trapped runs only).
    pub minimum: Option<String>,
    pub minimum_detail: Option<String>,
    pub minimum_error: Option<f64>,
    /// The largest component difference between the best point and the minimum.
    pub minimum_distance: Option<f64>,
}

/// Classifies a run from its best point, its verified error and whether its search
/// still improved over the last [`TAIL`] of its generations (see the module's rule).
pub fn classify(
    f: Function,
    x: &[f64],
    verified_error: f64,
    success_error: f64,
    improved_recently: bool,
) -> Classification {
    let mut c = Classification {
        outcome: Outcome::Success,
        minimum: None,
        minimum_detail: None,
        minimum_error: None,
        minimum_distance: None,
    };
    if verified_error <= success_error {
        return c;
    }
    if let Some(m) = local_minimum_of_cell(f, x)
        && (verified_error - m.error).abs() <= TRAPPED_RELATIVE * m.error
    {
        c.outcome = Outcome::Trapped;
        c.minimum_distance = Some(
            x.iter()
                .zip(&m.x)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max),
        );
        c.minimum_error = Some(m.error);
        c.minimum = Some(m.name);
        c.minimum_detail = Some(m.detail);
        return c;
    }
    c.outcome = if improved_recently {
        Outcome::Descending
    } else {
        Outcome::Stalled
    };
    c
}

/// Did the best value (one entry per generation, the initial population first) improve
/// over the last [`TAIL`] of the generations?
pub fn improved_recently(history: &[f64]) -> bool {
    let Some(&last) = history.last() else {
        return false;
    };
    let g_max = history.len() - 1;
    let back = ((g_max as f64 * TAIL).ceil() as usize).clamp(1, g_max.max(1));
    history
        .get(g_max.saturating_sub(back))
        .is_some_and(|&then| last < then)
}

/// The local minimum of the cell holding `x`, if that cell is not the global minimum's
/// and the function has known local minima.
pub fn local_minimum_of_cell(f: Function, x: &[f64]) -> Option<LocalMinimum> {
    match f {
        Function::Rosenbrock if x.first().is_some_and(|&x1| x1 < 0.0) => rosenbrock_local(x.len()),
        Function::Penalized => penalized_local(x),
        Function::Griewank => griewank_local(x),
        _ => None,
    }
}

fn value(f: Function, x: &[f64]) -> f64 {
    gpude::cpu::evaluate_point::<f64>(f, Formula::Exact, x)
}

/// Rosenbrock's local minimum near (−1, 1, …, 1) in dimension `dim` (none below 4):
/// Newton's method with the exact gradient and tridiagonal Hessian.
pub fn rosenbrock_local(dim: usize) -> Option<LocalMinimum> {
    if dim < 4 {
        return None;
    }
    let mut x = vec![1.0; dim];
    x[0] = -1.0;
    let n = dim;
    for _ in 0..100 {
        let mut g = vec![0.0; n];
        let mut diag = vec![0.0; n];
        let mut off = vec![0.0; n - 1];
        for j in 0..n - 1 {
            let d = x[j + 1] - x[j] * x[j];
            g[j] += -2.0 * (1.0 - x[j]) - 400.0 * x[j] * d;
            g[j + 1] += 200.0 * d;
            diag[j] += 2.0 + 1200.0 * x[j] * x[j] - 400.0 * x[j + 1];
            diag[j + 1] += 200.0;
            off[j] = -400.0 * x[j];
        }
        // Thomas algorithm for H s = g; all pivots positive (H positive definite).
        let mut c = vec![0.0; n];
        let mut d = vec![0.0; n];
        let mut pivot = diag[0];
        if pivot <= 0.0 {
            return None;
        }
        c[0] = if n > 1 { off[0] / pivot } else { 0.0 };
        d[0] = g[0] / pivot;
        for j in 1..n {
            pivot = diag[j] - off[j - 1] * c[j - 1];
            if pivot <= 0.0 {
                return None;
            }
            c[j] = if j < n - 1 { off[j] / pivot } else { 0.0 };
            d[j] = (g[j] - off[j - 1] * d[j - 1]) / pivot;
        }
        let mut step = vec![0.0f64; n];
        step[n - 1] = d[n - 1];
        for j in (0..n - 1).rev() {
            step[j] = d[j] - c[j] * step[j + 1];
        }
        let size = step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        for (xj, s) in x.iter_mut().zip(&step) {
            *xj -= s;
        }
        if size < 1e-14 {
            break;
        }
    }
    let error = value(Function::Rosenbrock, &x);
    // Newton converges to the stationary point near the start: check it is the local
    // minimum (not the global one, not a divergence).
    if !(x[0] < 0.0 && error.is_finite() && error > 1.0) {
        return None;
    }
    Some(LocalMinimum {
        name: "Rosenbrock's local minimum near (−1, 1, …, 1)".into(),
        detail: format!("x1 = {:.6}", x[0]),
        x,
        error,
    })
}

/// Minimises `g` on `[a, b]` by golden-section search.
fn golden(mut a: f64, mut b: f64, g: &mut dyn FnMut(f64) -> f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let mut c = b - r * (b - a);
    let mut d = a + r * (b - a);
    let (mut gc, mut gd) = (g(c), g(d));
    for _ in 0..200 {
        if b - a <= 1e-15 * (a.abs() + b.abs()).max(1e-300) {
            break;
        }
        if gc <= gd {
            b = d;
            d = c;
            gd = gc;
            c = b - r * (b - a);
            gc = g(c);
        } else {
            a = c;
            c = d;
            gc = gd;
            d = a + r * (b - a);
            gd = g(d);
        }
    }
    if gc <= gd { c } else { d }
}

/// Minimises `f` over the listed components, each within `[lo_j, hi_j]`, by cyclic
/// golden-section searches from `x`. False when a component ends at an end of its
/// interval: then there is no minimum inside.
fn refine(f: Function, x: &mut [f64], cells: &[(usize, f64, f64)]) -> bool {
    for _ in 0..20 {
        let mut moved = 0.0f64;
        for &(j, lo, hi) in cells {
            let before = x[j];
            let now = value(f, x);
            let mut y = x.to_vec();
            let t = golden(lo, hi, &mut |t| {
                y[j] = t;
                value(f, &y)
            });
            y[j] = t;
            // Keep the old value unless the search found a lower one.
            if value(f, &y) < now {
                x[j] = t;
            }
            moved = moved.max((x[j] - before).abs());
        }
        if moved <= 1e-13 {
            break;
        }
    }
    cells.iter().all(|&(j, lo, hi)| {
        let margin = 1e-6 * (hi - lo);
        x[j] > lo + margin && x[j] < hi - margin
    })
}

/// f4's local minimum selected by the leading components a third (or more) off 1.
fn penalized_local(x: &[f64]) -> Option<LocalMinimum> {
    let m: Vec<i64> = x
        .iter()
        .take_while(|&&v| (3.0 * (v - 1.0)).round() != 0.0)
        .map(|&v| (3.0 * (v - 1.0)).round() as i64)
        .collect();
    if m.is_empty() || m.len() == x.len() {
        // No component off, or all of them (then x_D is off with nothing beyond it to
        // hold the chain, which this family does not cover).
        return None;
    }
    let mut y = vec![1.0; x.len()];
    let mut cells = Vec::new();
    for (j, &mj) in m.iter().enumerate() {
        let c = 1.0 + mj as f64 / 3.0;
        y[j] = c;
        cells.push((j, c - 1.0 / 12.0, c + 1.0 / 12.0));
    }
    if !refine(Function::Penalized, &mut y, &cells) {
        return None;
    }
    let error = value(Function::Penalized, &y);
    let thirds: Vec<String> = m
        .iter()
        .map(|&mj| match 3 + mj {
            n if n % 3 == 0 => format!("{}", n / 3),
            n => format!("{n}/3"),
        })
        .collect();
    Some(LocalMinimum {
        name: format!(
            "f4's local minimum with x1{} a third (or more) off 1",
            if m.len() > 1 {
                format!(" … x{}", m.len())
            } else {
                String::new()
            }
        ),
        detail: format!("x1 … x{} ≈ {}", m.len(), short_list(&thirds)),
        x: y,
        error,
    })
}

/// Griewank's local minimum with components at multiples πn√j of half their cosines'
/// periods, an even number of cosines at −1.
fn griewank_local(x: &[f64]) -> Option<LocalMinimum> {
    let f = Function::Griewank;
    let period = |j: usize| PI * ((j + 1) as f64).sqrt();
    let mut y = vec![0.0; x.len()];
    let mut cells = Vec::new();
    let mut shown = Vec::new();
    for (j, &v) in x.iter().enumerate() {
        let p = period(j);
        let m = (v / p).round();
        if m != 0.0 && m.is_finite() {
            y[j] = m * p;
            cells.push((j, (m - 0.25) * p, (m + 0.25) * p));
            shown.push(format!("x{} (n = {m})", j + 1));
        }
    }
    let odd = x
        .iter()
        .enumerate()
        .map(|(j, &v)| (v / period(j)).round())
        .filter(|n| n.is_finite())
        .sum::<f64>()
        .rem_euclid(2.0)
        != 0.0;
    if cells.is_empty() || odd {
        return None;
    }
    if !refine(f, &mut y, &cells) {
        return None;
    }
    let error = value(f, &y);
    Some(LocalMinimum {
        name: format!(
            "Griewank's local minimum with {} component{} off 0 (x_j ≈ πn√j, Σn even)",
            cells.len(),
            if cells.len() == 1 { "" } else { "s" }
        ),
        detail: short_list(&shown),
        x: y,
        error,
    })
}

/// At most four items, then a count.
fn short_list(items: &[String]) -> String {
    if items.len() <= 4 {
        items.join(", ")
    } else {
        format!("{}, … ({} in all)", items[..3].join(", "), items.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rosenbrock_local_minimum_at_the_thesis_dimension() {
        let m = rosenbrock_local(128).expect("a local minimum at D = 128");
        // The thesis's trapped runs end with error 3.98662 (chapter 5).
        assert!((m.error - 3.98662).abs() < 5e-6, "{}", m.error);
        assert!((m.x[0] + 0.99).abs() < 0.02, "x1 = {}", m.x[0]);
        assert!(m.x[2..].iter().all(|&v| (v - 1.0).abs() < 0.1));
        // A stationary point: no component moves the value down.
        for j in [0, 1, 2, 127] {
            for h in [1e-6, -1e-6] {
                let mut y = m.x.clone();
                y[j] += h;
                assert!(value(Function::Rosenbrock, &y) >= m.error, "x{j} {h}");
            }
        }
        assert!(rosenbrock_local(3).is_none());
        // Positive x1: the global minimum's cell.
        assert!(local_minimum_of_cell(Function::Rosenbrock, &[0.9; 128]).is_none());
    }

    #[test]
    fn penalized_local_minima_a_third_off() {
        let mut x = vec![1.0; 128];
        x[0] = 0.67;
        let m = local_minimum_of_cell(Function::Penalized, &x).expect("x1 ≈ 2/3");
        // 0.1 min_t [sin²(3πt) + (t − 1)²] near t = 2/3.
        let mut g = |t: f64| 0.1 * ((3.0 * PI * t).sin().powi(2) + (t - 1.0).powi(2));
        let t = golden(0.5, 0.8, &mut g);
        assert!((m.error - g(t)).abs() < 1e-12, "{} vs {}", m.error, g(t));
        assert!((m.error - 0.010988).abs() < 1e-6, "{}", m.error);
        // Two leading components off: about twice the error.
        x[1] = 1.32;
        let m2 = local_minimum_of_cell(Function::Penalized, &x).expect("x1, x2 off");
        assert!(
            m2.error > 1.9 * m.error && m2.error < 2.1 * m.error,
            "{}",
            m2.error
        );
        assert_eq!(m2.detail, "x1 … x2 ≈ 2/3, 4/3");
        // A component off after one that is not: not held there, no local minimum.
        let mut y = vec![1.0; 128];
        y[5] = 0.67;
        assert!(local_minimum_of_cell(Function::Penalized, &y).is_none());
    }

    #[test]
    fn griewank_minima_are_stationary_and_above_zero() {
        let f = Function::Griewank;
        // One cosine a full period out, or two half a period out.
        let pi = PI;
        for (j, v) in [(0, 6.2), (2, -10.5), (9, 2.0 * 20.0), (0, pi)] {
            let mut x = vec![0.0; 16];
            x[j] = v;
            if v == pi {
                x[3] = -2.0 * pi;
            }
            let m = local_minimum_of_cell(f, &x).expect("one component off");
            assert!(m.error > 1e-4, "x{j} {}", m.error);
            for h in [1e-5, -1e-5] {
                let mut y = m.x.clone();
                y[j] += h;
                assert!(value(f, &y) >= m.error, "x{j}");
            }
        }
        assert!(local_minimum_of_cell(f, &[1e-3; 16]).is_none());
        // One cosine at −1: near a maximum of the product, no minimum.
        let mut x = vec![0.0; 16];
        x[0] = 3.1;
        assert!(local_minimum_of_cell(f, &x).is_none());
        // x₁ ≈ π, x₄ ≈ −2π at D = 128, where stream 5 of `gpude run --backend cpu
        // --function griewank --dim 128 --pop 256 --gens 1000 --strategy thesis --bounds
        // init-only --lower -600 --upper 600 --precision f32 --formula textbook --seed 1
        // --runs 6` ends (verified error 0.012317).
        let mut x = vec![0.0; 128];
        x[0] = 3.1399;
        x[3] = -6.2708;
        let m = local_minimum_of_cell(f, &x).expect("two half periods");
        assert!((m.error - 0.012317).abs() < 1e-6, "{}", m.error);
        // Ackley has no known local minima here.
        let mut x = vec![0.0; 128];
        x[0] = 0.97;
        assert!(local_minimum_of_cell(Function::Ackley, &x).is_none());
        // Griewank with x1 one period out: about (2π)²/4000.
        let mut x = vec![0.0; 128];
        x[0] = 6.3;
        let m = local_minimum_of_cell(Function::Griewank, &x).unwrap();
        assert!(
            (m.error - 4.0 * PI * PI / 4000.0).abs() < 1e-4,
            "{}",
            m.error
        );
    }

    #[test]
    fn classification_rule() {
        let loc = rosenbrock_local(16).unwrap();
        let at = |dx: f64| {
            let mut x = loc.x.clone();
            x[3] += dx;
            let e = value(Function::Rosenbrock, &x);
            (x, e)
        };
        let (x, e) = at(1e-4);
        let c = classify(Function::Rosenbrock, &x, e, 1e-10, false);
        assert_eq!(c.outcome, Outcome::Trapped);
        assert_eq!(c.minimum.as_deref(), Some(loc.name.as_str()));
        assert!(c.minimum_distance.unwrap() <= 1.1e-4);
        // Far above the minimum's value in its cell: not trapped.
        let (x, e) = at(0.5);
        assert!(e > 1.01 * loc.error);
        assert_eq!(
            classify(Function::Rosenbrock, &x, e, 1e-10, true).outcome,
            Outcome::Descending
        );
        assert_eq!(
            classify(Function::Rosenbrock, &x, e, 1e-10, false).outcome,
            Outcome::Stalled
        );
        let one = vec![1.0; 16];
        assert_eq!(
            classify(Function::Rosenbrock, &one, 0.0, 1e-10, false).outcome,
            Outcome::Success
        );
        assert!(improved_recently(&[5.0, 4.0, 3.0, 2.0, 1.0]));
        assert!(!improved_recently(&[5.0, 1.0, 1.0, 1.0, 1.0]));
        assert!(!improved_recently(&[]));
    }
}
