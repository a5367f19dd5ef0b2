//! The separable form: which expressions take it, the CPU side of the contract
//! (`gpude_device::separable::Separable`) run in the lanes' order against the
//! whole-vector evaluator and the built-in functions, and the GPU side's declarations
//! against the contract's text.

use gpude_device::lanes::{evaluate, group_width, rounds, scan_inclusive};
use gpude_device::separable::{BKind, SepFlags, Separable};
use gpude_device::{Formula, Function};
use gpude_expr::builtins::{expression, magnitude};
use gpude_expr::{Expr, ExprReal, Precision, SeparableExpr};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [−h, h).
    fn sym(&mut self, h: f64) -> f64 {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * h
    }
}

fn parse(src: &str) -> Expr {
    Expr::parse(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn sep(src: &str) -> SeparableExpr {
    parse(src)
        .separable_form()
        .unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn flags(b: BKind, prev: bool, prefix: bool) -> SepFlags {
    SepFlags { b, prev, prefix }
}

/// The value of `s` at `x` as a group of lanes computes it (`gpude_device::lanes::partial`
/// with the separable form's accumulators): rounds of chunks of four, each lane adding
/// its chunks' terms to its own accumulators, `prev` the component before the chunk,
/// `base` the prefix sum from the scan of the lanes' totals, then the xor butterfly and
/// the final step.
fn lanes_eval<T: ExprReal>(s: &SeparableExpr, x: &[T]) -> T {
    let dim = x.len() as u32;
    let f = Separable::<T>::flags(s);
    let g = group_width(dim);
    let gu = g as usize;
    let mut acc = vec![(T::ZERO, f.b_identity::<T>()); gu];
    let (mut carry_last, mut carry_sum) = (T::ZERO, T::ZERO);
    for c in 0..rounds(dim) {
        let mut ins = vec![([T::ZERO; 4], 0u32, 0u32, T::ZERO, T::ZERO); gu];
        for (l, lane) in ins.iter_mut().enumerate() {
            let j0 = 4 * (c * g + l as u32);
            let n = if j0 >= dim { 0 } else { (dim - j0).min(4) };
            for k in 0..n as usize {
                lane.0[k] = x[j0 as usize + k];
            }
            lane.1 = j0;
            lane.2 = n;
        }
        for l in 0..gu {
            ins[l].3 = if l == 0 { carry_last } else { ins[l - 1].0[3] };
        }
        if f.prefix {
            let mut incl: Vec<T> = ins
                .iter()
                .map(|lane| {
                    let mut t = T::ZERO;
                    for &v in &lane.0[..lane.2 as usize] {
                        t = t + v;
                    }
                    t
                })
                .collect();
            scan_inclusive(&mut incl);
            for l in 0..gu {
                let excl = if l == 0 { T::ZERO } else { incl[l - 1] };
                ins[l].4 = carry_sum + excl;
            }
            carry_sum = carry_sum + incl[gu - 1];
        }
        for (l, &(v, j0, n, prev, base)) in ins.iter().enumerate() {
            if n == 0 {
                continue; // the kernels never call with n = 0
            }
            acc[l].0 = s.a(acc[l].0, v, prev, base, j0, n, dim);
            if f.b != BKind::None {
                acc[l].1 = s.b(acc[l].1, v, prev, base, j0, n, dim);
            }
        }
        carry_last = ins[gu - 1].0[3];
    }
    let mut m = gu / 2;
    while m >= 1 {
        let old = acc.clone();
        for l in 0..gu {
            acc[l] = (old[l].0 + old[l ^ m].0, f.b_combine(old[l].1, old[l ^ m].1));
        }
        m /= 2;
    }
    s.finish(acc[0].0, acc[0].1, dim)
}

#[test]
fn the_builtins_that_are_separable() {
    let want = [
        (Function::Sphere, Some(flags(BKind::None, false, false))),
        (Function::Rastrigin, Some(flags(BKind::None, false, false))),
        (
            Function::Griewank,
            Some(flags(BKind::Product, false, false)),
        ),
        (Function::Rosenbrock, Some(flags(BKind::None, true, false))),
        (Function::Ackley, Some(flags(BKind::Sum, false, false))),
        (Function::Schwefel12, Some(flags(BKind::None, false, true))),
        (
            Function::Weierstrass,
            Some(flags(BKind::None, false, false)),
        ),
        // Four different sums.
        (Function::Penalized, None),
    ];
    assert_eq!(want.len(), Function::ALL.len());
    for (f, w) in want {
        let e = parse(&expression(f));
        assert_eq!(e.separable().map(|s| s.flags()), w, "{f:?}");
        if let Some(s) = e.separable() {
            assert_eq!(s.min_dim(), e.min_dim(), "{f:?}");
        }
    }
}

#[test]
fn shapes_that_are_separable() {
    for (src, want) in [
        ("sum(x)", flags(BKind::None, false, false)),
        ("prod(x)", flags(BKind::Product, false, false)),
        ("sum(x) * prod(x)", flags(BKind::Product, false, false)),
        ("prod(x) / sum(x)", flags(BKind::Product, false, false)),
        ("sum(x) - sum(x^2)", flags(BKind::Sum, false, false)),
        // Identical reductions written twice count once.
        (
            "sum(x^2)/D + sqrt(sum(x^2)) * prod(cos(x)) - prod(cos(x))",
            flags(BKind::Product, false, false),
        ),
        (
            "sum(cumsum(x)^2) + sum(x^3) + sum(cumsum(x)^2)",
            flags(BKind::Sum, false, true),
        ),
        // prev in one term, the prefix in the other.
        (
            "sum(cumsum(x)*j) / prod(1 + x[j-1]*x/D)",
            flags(BKind::Product, true, true),
        ),
        ("7 + D", flags(BKind::None, false, false)),
    ] {
        assert_eq!(sep(src).flags(), want, "{src}");
    }
    // Different reductions that look alike are not merged.
    let s = sep("sum(x^2) + sum(x^2 + 0)");
    assert_eq!(s.flags().b, BKind::Sum);
}

#[test]
fn shapes_that_are_not_separable() {
    // x outside a reduction is not an expression at all.
    assert!(Expr::parse("x + sum(x)").is_err());
    assert!(Expr::parse("sum(x) * j").is_err());
    for (src, why) in [
        (
            "sum(x) + sum(x^2) + sum(x^3)",
            "uses 3 different reductions",
        ),
        ("sum(x[j+2] - x)", "x[j+2]"),
        ("sum(x[j+1]*x)", "x[j+1]"),
        ("sum(x[j-2]*x)", "x[j-2]"),
        ("sum(cumsum(x^2))", "cumsum of something other than x"),
        ("sum(cumsum(x[j-1]))", "cumsum of something other than x"),
        ("sum(cumsum(x) * x[j-1])", "reads x[j-1] and cumsum(x)"),
        ("prod(x) * prod(x^2)", "two different products"),
        (
            "prod(x) + prod(x) * sum(x) + sum(x*x)",
            "uses 3 different reductions",
        ),
    ] {
        let e = parse(src);
        let err = e.separable_form().err().unwrap_or_else(|| {
            panic!("{src} taken as separable");
        });
        let text = err.to_string();
        assert!(text.contains(why), "{src}: {text}");
        assert!(e.separable().is_none());
    }
}

/// Expressions for the comparisons of the lanes' order with the whole-vector order, with
/// a half-width for their points and the scale their rounding errors grow with.
fn cases() -> Vec<(String, f64, String)> {
    let mut v: Vec<(String, f64, String)> = Function::ALL
        .iter()
        .filter(|&&f| f != Function::Penalized)
        .map(|&f| {
            let h = match f {
                Function::Sphere | Function::Schwefel12 => 100.0,
                Function::Griewank => 600.0,
                Function::Rosenbrock => 30.0,
                Function::Ackley => 32.0,
                Function::Rastrigin => 5.12,
                _ => 0.5,
            };
            (expression(f), h, magnitude(f))
        })
        .collect();
    for (src, h, mag) in [
        (
            "sum(x*j)/D + prod(1 + x/(j + 10))",
            5.0,
            "sum(abs(x)*j)/D + prod(1 + abs(x)/(j + 10))",
        ),
        (
            "sum(cumsum(x)^2 * (j < 7)) - prod(1 + x[j-1]*x/100)",
            3.0,
            "sum(cumsum(abs(x))^2) + prod(1 + abs(x[j-1]*x)/100)",
        ),
        (
            "sum(cumsum(x)) + sum(x[j-1]*x - select(j == D - 1, x, 0))",
            10.0,
            "sum(cumsum(abs(x))) + sum(abs(x[j-1]*x) + abs(x))",
        ),
    ] {
        v.push((src.to_string(), h, mag.to_string()));
    }
    v
}

fn lanes_agree_with_whole_vector<T: ExprReal>(eps: f64) {
    let mut rng = Rng(0x5e9a);
    let mut differ = 0;
    for (src, h, mag) in cases() {
        let e = parse(&src);
        let s = sep(&src);
        let m = parse(&mag);
        for d in 1..=130usize {
            for _ in 0..4 {
                let x: Vec<T> = (0..d).map(|_| T::of(rng.sym(h))).collect();
                let got = lanes_eval(&s, &x).to_f64();
                let want = e.eval(&x).to_f64();
                let scale = m.eval(&x).to_f64().abs();
                let tol = 4.0 * d as f64 * eps * scale;
                assert!(
                    (got - want).abs() <= tol,
                    "{src} D={d} {}: lanes {got:e}, whole vector {want:e}, tolerance {tol:e}",
                    T::NAME
                );
                differ += (got.to_bits() != want.to_bits()) as u32;
            }
        }
    }
    // Not vacuous: the two orders do round differently.
    assert!(differ > 100, "{differ}");
}

#[test]
fn lanes_agree_with_the_whole_vector_in_f64() {
    lanes_agree_with_whole_vector::<f64>(f64::EPSILON);
}

#[test]
fn lanes_agree_with_the_whole_vector_in_f32() {
    lanes_agree_with_whole_vector::<f32>(f32::EPSILON as f64);
}

/// Built-ins whose per-component terms and final step an expression can write with the
/// same operations in the same order: the lanes' evaluation of the expression is the
/// built-in's, bit for bit.
fn identical_to_builtins<T: ExprReal>() {
    let cases: [(Function, Formula, &str, f64); 8] = [
        (Function::Sphere, Formula::Exact, "sum(x^2)", 100.0),
        (Function::Sphere, Formula::Textbook, "sum(x*x)", 100.0),
        (
            Function::Schwefel12,
            Formula::Exact,
            "sum(cumsum(x)^2)",
            100.0,
        ),
        (
            Function::Schwefel12,
            Formula::Textbook,
            "sum(cumsum(x)^2)",
            100.0,
        ),
        (
            Function::Rosenbrock,
            Formula::Textbook,
            "sum((1 - x[j-1])^2 + 100*(x - x[j-1]^2)^2)",
            30.0,
        ),
        (
            Function::Griewank,
            Formula::Textbook,
            "sum(x^2)/4000 - prod(cos(x*(1/sqrt(j+1)))) + 1",
            600.0,
        ),
        (
            Function::Rastrigin,
            Formula::Textbook,
            "sum(x^2 - 10*cos(2*pi*x) + 10)",
            5.12,
        ),
        (
            Function::Ackley,
            Formula::Textbook,
            "(20 - 20*exp(-0.2*sqrt(sum(x^2)/D))) + (exp(1) - exp(sum(cos(2*pi*x))/D))",
            32.0,
        ),
    ];
    let mut rng = Rng(0xb17);
    for (f, formula, src, h) in cases {
        let s = sep(src);
        let e = parse(src);
        let mut differ_from_whole = 0;
        for d in 1..=130usize {
            for _ in 0..3 {
                let x: Vec<T> = (0..d).map(|_| T::of(rng.sym(h))).collect();
                let got = lanes_eval(&s, &x);
                let want = evaluate::<T>(f, formula, &x);
                assert_eq!(
                    got.to_bits64(),
                    want.to_bits64(),
                    "{f:?} {formula:?} as `{src}`, D={d} {}: {got:?} vs {want:?}",
                    T::NAME
                );
                differ_from_whole += (e.eval(&x).to_bits64() != got.to_bits64()) as u32;
            }
        }
        // Where D > 4 the whole-vector order is another one (Sphere's tiny cases aside).
        assert!(differ_from_whole > 0, "{f:?} {src}");
    }
}

#[test]
fn lanes_equal_the_builtins_bit_for_bit_in_f64() {
    identical_to_builtins::<f64>();
}

#[test]
fn lanes_equal_the_builtins_bit_for_bit_in_f32() {
    identical_to_builtins::<f32>();
}

/// The chunk functions skip j = 0 for terms with x[j-1], see `prev` only there, and
/// start the running sum at `base`.
#[test]
fn chunk_functions_follow_the_contract() {
    let s = sep("sum(x[j-1]*10 + x) + prod(cumsum(x) + j)");
    assert_eq!(s.flags(), flags(BKind::Product, true, true));
    let v = [1.0f64, 2.0, 3.0, 4.0];
    // j0 = 0: the first component has no term.
    assert_eq!(s.a(0.5, v, 1e9, 0.0, 0, 4, 9), 0.5 + 12.0 + 23.0 + 34.0);
    // j0 = 4: prev is x[3].
    assert_eq!(s.a(0.0, v, 7.0, 0.0, 4, 2, 9), 71.0 + 12.0);
    // The running sum from base, left to right; j = j0 + k.
    let want = (100.0 + 1.0 + 4.0) * (103.0 + 5.0) * (106.0 + 6.0);
    assert_eq!(s.b(1.0, v, 0.0, 100.0, 4, 3, 9), want);
    assert_eq!(Separable::<f64>::finish(&s, 2.0, 3.0, 9), 5.0);
    // n = 0 changes nothing; entries past n are never read.
    assert_eq!(s.a(0.25, [f64::NAN; 4], f64::NAN, 0.0, 8, 0, 9), 0.25);
    assert_eq!(
        s.a(0.0, [1.0, f64::NAN, f64::NAN, f64::NAN], 2.0, 0.0, 8, 1, 9),
        21.0
    );
    // Without a term for A, a returns its accumulator.
    let p = sep("prod(x) + 1");
    assert_eq!(p.a(3.5f32, [2.0; 4], 0.0, 0.0, 0, 4, 4), 3.5);
    assert_eq!(p.b(1.0f32, [2.0; 4], 0.0, 0.0, 0, 4, 4), 16.0);
    assert_eq!(Separable::<f32>::finish(&p, 0.0, 16.0, 4), 17.0);
}

/// The `.visible` declarations of the generated module, as written in
/// `gpude_device::separable`'s documentation.
#[test]
fn declarations_match_the_contract() {
    let contract = include_str!("../../device/src/separable.rs");
    let doc: String = contract
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let doc = squash(&doc);
    let decl = |name: &str| -> String {
        let start = doc
            .find(&format!(".visible .func (.param .bT r) {name}("))
            .unwrap_or_else(|| panic!("{name} in the contract"));
        let end = start + doc[start..].find(')').unwrap() + 1;
        let end = end + doc[end..].find(')').unwrap() + 1;
        doc[start..end].to_string()
    };
    let a = decl("gpude_sep_a_T");
    let finish = decl("gpude_sep_finish_T");
    assert!(doc.contains(".visible .func (.param .bT r) gpude_sep_b_T(… the same …)"));
    assert!(doc.contains(".visible .global .align 4 .u32 gpude_sep_flags_T = FLAGS;"));
    for src in [
        "sum(x^2)/4000 - prod(cos(x*(1/sqrt(j+1)))) + 1",
        "sum(cumsum(x)^2)",
        "prod(x[j-1] + x)",
    ] {
        let s = sep(src);
        for (p, b) in [(Precision::F32, ".b32"), (Precision::F64, ".b64")] {
            let ptx = s.ptx(p);
            let t = p.name();
            let inst = |d: &str| d.replace(".bT", b).replace("_T(", &format!("_{t}("));
            let have: Vec<String> = ptx
                .lines()
                .filter(|l| l.starts_with(".visible"))
                .map(squash)
                .collect();
            let mut want = vec![
                format!(
                    ".visible .global .align 4 .u32 gpude_sep_flags_{t} = {};",
                    s.flags().bits()
                ),
                inst(&a),
            ];
            if s.flags().b != BKind::None {
                want.push(inst(&a).replace("gpude_sep_a_", "gpude_sep_b_"));
            }
            want.push(inst(&finish));
            assert_eq!(have, want, "{src} {t}");
            assert_eq!(want[1].split(p.sep_a_name()).count(), 2);
            assert!(ptx.is_ascii());
            // Four copies of each term, one per component of the chunk, with x[j] and
            // x[j-1] the chunk's registers (%v4 = prev).
            let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
            let copies: Vec<usize> = (0..4)
                .map(|k| {
                    let tag = format!("// (k{k}) ");
                    lines.iter().filter(|l| l.starts_with(&tag)).count()
                })
                .collect();
            assert!(
                copies[0] > 0 && copies.iter().all(|&c| c == copies[0]),
                "{copies:?}"
            );
            for (i, l) in lines.iter().enumerate() {
                let Some(rest) = l.strip_prefix("// (k") else {
                    continue;
                };
                let k: usize = rest[..1].parse().unwrap();
                let next = lines[i + 1];
                if l.ends_with("= x[j]") {
                    assert!(next.ends_with(&format!(", %v{k};")), "{l} / {next}");
                } else if l.ends_with("= x[j-1]") {
                    let want = if k == 0 { 4 } else { k - 1 };
                    assert!(next.ends_with(&format!(", %v{want};")), "{l} / {next}");
                }
            }
            for banned in [".ftz", ".approx", "fma.", "mad.rn", "ld.global"] {
                assert!(!ptx.contains(banned), "{banned} in {src}");
            }
        }
    }
}
