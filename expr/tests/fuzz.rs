//! Random inputs: byte strings and token soups never panic; random valid expressions
//! parse, evaluate as an independent tree-walking reference says, and compile to PTX;
//! deep nesting is refused without exhausting the stack.

use gpude_device::math::{cos_f64, sin_f64};
use gpude_expr::{ErrorKind, Expr, MAX_LEN, MAX_NESTING, Precision};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Whatever parses must also evaluate (any D, even below `min_dim`) and compile.
fn exercise(src: &str, rng: &mut Rng) {
    if let Ok(e) = Expr::parse(src) {
        let d = rng.below(6);
        let x: Vec<f64> = (0..d).map(|_| rng.unit() * 4.0 - 2.0).collect();
        let _ = e.eval(&x);
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let _ = e.eval(&x32);
        assert!(e.ptx(Precision::F32).contains(".visible .func"));
        let _ = e.min_dim();
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(1);
    let alphabet = b"xjDpie0123456789.+-*/^()[],<>=! sumprodcosinabqrtlgexpw_";
    for i in 0..20_000 {
        let n = rng.below(40);
        let bytes: Vec<u8> = (0..n)
            .map(|_| {
                if i % 2 == 0 {
                    rng.next() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        let src = String::from_utf8_lossy(&bytes);
        exercise(&src, &mut rng);
    }
}

#[test]
fn random_token_soups_never_panic() {
    const TOKENS: &[&str] = &[
        "x", "j", "D", "pi", "e", "1", "2.5", "1e-3", "0", "+", "-", "*", "/", "^", "(", ")", "[",
        "]", ",", "<", "<=", ">", ">=", "==", "!=", "sum(", "prod(", "cumsum(", "select(", "min(",
        "max(", "abs(", "sin(", "cos(", "tan(", "exp(", "log(", "sqrt(", "pow(", "sinpi(",
        "cospi(", "expm1(", "log1p(", "x[j-1]", "x[j+1]", "x[", "j+", "y",
    ];
    let mut rng = Rng(2);
    let mut accepted = 0;
    for _ in 0..50_000 {
        let n = 1 + rng.below(14);
        let src: String = (0..n)
            .map(|_| TOKENS[rng.below(TOKENS.len())])
            .collect::<Vec<_>>()
            .join(if rng.below(2) == 0 { "" } else { " " });
        if Expr::parse(&src).is_ok() {
            accepted += 1;
        }
        exercise(&src, &mut rng);
    }
    // The soup is not all rejected: some of it is valid and went through eval and PTX.
    assert!(accepted > 100, "only {accepted} accepted");
}

/// A random expression with its own meaning, evaluated independently of the crate.
#[derive(Clone, Debug)]
enum G {
    Num(f64),
    D,
    J,
    X(i32),
    Pi,
    Neg(Box<G>),
    Bin(char, Box<G>, Box<G>),
    Cmp(&'static str, Box<G>, Box<G>),
    Sq(Box<G>),
    F(&'static str, Vec<G>),
    Red(bool, Box<G>),
    Cum(usize, Box<G>),
}

struct Gen {
    rng: Rng,
    cums: usize,
}

impl Gen {
    fn leaf(&mut self, inside: bool) -> G {
        match self.rng.below(if inside { 7 } else { 3 }) {
            0 => G::Num([0.5, 2.0, 3.0, 0.1, 1e-3, 7.25][self.rng.below(6)]),
            1 => G::D,
            2 => G::Pi,
            3 => G::J,
            4 => G::X(self.rng.below(5) as i32 - 2),
            _ => G::X(0),
        }
    }

    fn tree(&mut self, depth: u32, inside: bool, in_cum: bool) -> G {
        if depth == 0 || self.rng.below(5) == 0 {
            return self.leaf(inside);
        }
        let sub = |g: &mut Gen| Box::new(g.tree(depth - 1, inside, in_cum));
        match self.rng.below(11) {
            0 => G::Neg(sub(self)),
            1..=3 => G::Bin(b"+-*/"[self.rng.below(4)] as char, sub(self), sub(self)),
            4 => G::Cmp(
                ["<", "<=", ">", ">=", "==", "!="][self.rng.below(6)],
                sub(self),
                sub(self),
            ),
            5 => G::Sq(sub(self)),
            6 => {
                let (name, n) = [
                    ("sin", 1),
                    ("cos", 1),
                    ("abs", 1),
                    ("sqrt", 1),
                    ("min", 2),
                    ("max", 3),
                    ("select", 3),
                ][self.rng.below(7)];
                G::F(name, (0..n).map(|_| *sub(self)).collect())
            }
            7 | 8 if !inside => G::Red(
                self.rng.below(3) != 0,
                Box::new(self.tree(depth - 1, true, false)),
            ),
            9 if inside && !in_cum => {
                let id = self.cums;
                self.cums += 1;
                G::Cum(id, Box::new(self.tree(depth - 1, true, true)))
            }
            _ => G::Bin('+', sub(self), sub(self)),
        }
    }
}

fn text(g: &G) -> String {
    match g {
        G::Num(v) => format!("{v}"),
        G::D => "D".into(),
        G::J => "j".into(),
        G::X(0) => "x".into(),
        G::X(k) => format!("x[j{k:+}]"),
        G::Pi => "pi".into(),
        G::Neg(a) => format!("-({})", text(a)),
        G::Bin(op, a, b) => format!("({} {op} {})", text(a), text(b)),
        G::Cmp(op, a, b) => format!("({} {op} {})", text(a), text(b)),
        G::Sq(a) => format!("({})^2", text(a)),
        G::F(name, args) => format!(
            "{name}({})",
            args.iter().map(text).collect::<Vec<_>>().join(", ")
        ),
        G::Red(true, a) => format!("sum({})", text(a)),
        G::Red(false, a) => format!("prod({})", text(a)),
        G::Cum(_, a) => format!("cumsum({})", text(a)),
    }
}

fn offsets(g: &G, lo: &mut i32, hi: &mut i32) {
    match g {
        G::X(k) => {
            *lo = (*lo).min(*k);
            *hi = (*hi).max(*k);
        }
        G::Neg(a) | G::Sq(a) | G::Red(_, a) | G::Cum(_, a) => offsets(a, lo, hi),
        G::Bin(_, a, b) | G::Cmp(_, a, b) => {
            offsets(a, lo, hi);
            offsets(b, lo, hi);
        }
        G::F(_, args) => args.iter().for_each(|a| offsets(a, lo, hi)),
        _ => {}
    }
}

/// The documented semantics, written directly over the tree.
fn value(g: &G, x: &[f64], j: usize, cums: &mut [f64]) -> f64 {
    let mut v = |a: &G| value(a, x, j, cums);
    match g {
        G::Num(n) => *n,
        G::D => x.len() as f64,
        G::J => j as f64,
        G::X(k) => x[(j as i32 + k) as usize],
        G::Pi => core::f64::consts::PI,
        G::Neg(a) => -v(a),
        G::Bin(op, a, b) => {
            let (a, b) = (v(a), v(b));
            match op {
                '+' => a + b,
                '-' => a - b,
                '*' => a * b,
                _ => a / b,
            }
        }
        G::Cmp(op, a, b) => {
            let (a, b) = (v(a), v(b));
            let t = match *op {
                "<" => a < b,
                "<=" => a <= b,
                ">" => a > b,
                ">=" => a >= b,
                "==" => a == b,
                _ => a != b,
            };
            if t { 1.0 } else { 0.0 }
        }
        G::Sq(a) => {
            let a = v(a);
            a * a
        }
        G::F(name, args) => {
            let a: Vec<f64> = args.iter().map(v).collect();
            let min = |a: f64, b: f64| if b < a { b } else { a };
            let max = |a: f64, b: f64| if b > a { b } else { a };
            match *name {
                "sin" => sin_f64(a[0]),
                "cos" => cos_f64(a[0]),
                "abs" => a[0].abs(),
                "sqrt" => a[0].sqrt(),
                "min" => min(a[0], a[1]),
                "max" => max(max(a[0], a[1]), a[2]),
                _ => {
                    if a[0] != 0.0 {
                        a[1]
                    } else {
                        a[2]
                    }
                }
            }
        }
        G::Red(is_sum, t) => {
            let (mut lo, mut hi) = (0, 0);
            offsets(t, &mut lo, &mut hi);
            cums.iter_mut().for_each(|c| *c = 0.0);
            let mut acc = if *is_sum { 0.0 } else { 1.0 };
            let end = x.len() as i64 - hi as i64;
            let mut j = -lo as i64;
            while j < end {
                let t = value(t, x, j as usize, cums);
                acc = if *is_sum { acc + t } else { acc * t };
                j += 1;
            }
            acc
        }
        G::Cum(id, a) => {
            let t = v(a);
            cums[*id] += t;
            cums[*id]
        }
    }
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn random_valid_expressions_evaluate_as_the_reference_says() {
    let mut g = Gen {
        rng: Rng(3),
        cums: 0,
    };
    let mut with_reduction = 0;
    for i in 0..3_000 {
        g.cums = 0;
        let tree = g.tree(1 + (i % 6) as u32, false, false);
        let src = text(&tree);
        let e = Expr::parse(&src).unwrap_or_else(|err| panic!("{src}: {err}"));
        with_reduction += src.contains("sum(") as u32 + src.contains("prod(") as u32;
        let mut cums = vec![0.0; g.cums];
        for d in [0usize, 1, 2, 3, 6] {
            let x: Vec<f64> = (0..d).map(|_| g.rng.unit() * 6.0 - 3.0).collect();
            let want = value(&tree, &x, 0, &mut cums);
            let got = e.eval(&x);
            assert!(same(got, want), "{src} at {x:?}: {got} != {want}");
            let _ = e.eval(&x.iter().map(|&v| v as f32).collect::<Vec<_>>());
        }
        assert!(e.ptx(Precision::F64).contains("retval"));
    }
    assert!(with_reduction > 500, "{with_reduction}");
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    // Run on a thread with a small stack: the limits keep recursion far from it.
    let h = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let n = MAX_NESTING;
            for (open, close) in [
                ("(", ")"),
                ("sin(", ")"),
                ("-", ""),
                ("2^", ""),
                ("sum(", ")"),
                ("min(1,", ")"),
                ("select(1,2,", ")"),
            ] {
                for depth in [n / 2, n - 1, n, n + 1, 1000, 100_000] {
                    let src = open.repeat(depth) + "1" + &close.repeat(depth);
                    match Expr::parse(&src) {
                        Ok(e) => {
                            assert!(depth < n, "{open} × {depth} accepted");
                            let _ = e.eval::<f64>(&[1.0, 2.0]);
                            let _ = e.ptx(Precision::F32);
                        }
                        Err(err) => {
                            let expected = if src.len() > MAX_LEN {
                                ErrorKind::TooLong { len: src.len() }
                            } else {
                                ErrorKind::TooDeep
                            };
                            // sum(sum(…)) at small depths fails as nested reductions.
                            if open != "sum(" || depth >= n {
                                assert_eq!(err.kind, expected, "{open} × {depth}");
                            }
                        }
                    }
                }
            }
            // A megabyte of input is refused by its length, at once.
            let big = "(".repeat(1 << 20);
            assert!(matches!(
                Expr::parse(&big).unwrap_err().kind,
                ErrorKind::TooLong { .. }
            ));
        })
        .expect("thread");
    h.join().expect("no panic, no overflow");
}
