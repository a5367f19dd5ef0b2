//! The generated PTX: its shape (one instruction or fixed sequence per IR instruction,
//! IEEE-rounded only), and — when `ptxas` is found — that it assembles for `sm_90`.
//!
//! `ptxas` is looked for in `$PTXAS`, then on `PATH`, then in the Python package
//! `nvidia-cuda-nvcc-cu12` (as `.ci/run` installs it). Without it the assembling tests
//! print a SKIPPED line to stderr.

use gpude_expr::{Expr, Precision};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Expressions that together use every construct of the language.
const EXPRESSIONS: &[&str] = &[
    "sum(x^2)",
    "sum(x^2 - 10*cos(2*pi*x) + 10)",
    "sum(x^2)/4000 - prod(cos(x/sqrt(j+1))) + 1",
    "sum((1 - x[j-1])^2 + 100*(x - x[j-1]^2)^2)",
    "-20*exp(-0.2*sqrt(sum(x^2)/D)) - exp(sum(cos(2*pi*x))/D) + 20 + e",
    "sum(cumsum(x)^2)",
    "sum(0.5^3*cos(pi*(3^3*(2*x+1))) - 0.5^3*cos(pi*3^3))",
    "0.1*(sum(select(j == 0, sin(3*pi*x)^2, 0)) + sum((x[j-1] - 1)^2*(1 + 10*sin(3*pi*x)^2)) \
     + sum(select(j == D-1, (x - 1)^2*(1 + sin(2*pi*x)^2), 0))) + sum(100*max(abs(x) - 5, 0)^4)",
    "sum(tan(x) + log(abs(x) + 1) + sinpi(x) * cospi(x) + expm1(x) - log1p(x*x) + pow(abs(x), 0.3))",
    "sum((x < 1) + (x <= 1) + (x > 1) + (x >= 1) + (x == 1) + (x != 1)) + min(D, 3, 2) + max(1, D)",
    "sum(cumsum(x)^2) - prod(1 + cumsum(x*x)/(j + 1)) + sum(x)/D",
    "sum(x[j-1]*x) + sum(cos(x)) * prod(x[j-1] - x/2) - sum(select(j == D-1, x, 0))",
    "sum(x[j+2] - x[j-3]) * prod(1 + cumsum(x[j+1]) / (j + 1)) - 2^-D + x_0_free(1)",
    "7",
];

fn expressions() -> Vec<Expr> {
    EXPRESSIONS
        .iter()
        .filter_map(|s| match Expr::parse(s) {
            Ok(e) => Some(e),
            // The one deliberately invalid entry keeps the list honest about parsing.
            Err(err) => {
                assert!(s.contains("x_0_free"), "{s}: {err}");
                None
            }
        })
        .collect()
}

fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(PathBuf::from(p));
    }
    if Command::new("ptxas").arg("--version").output().is_ok() {
        return Some(PathBuf::from("ptxas"));
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, site\n\
             for r in site.getsitepackages() + [site.getusersitepackages()]:\n\
             \tp = os.path.join(r, 'nvidia', 'cuda_nvcc', 'bin', 'ptxas')\n\
             \tif os.path.exists(p): print(p); break",
        ])
        .output()
        .ok()?;
    let p = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!p.is_empty()).then(|| PathBuf::from(p))
}

/// The files of the runs for `arch` (one folder per architecture, so that the tests,
/// which run in parallel, each remove only their own).
fn scratch_dir(arch: &str) -> PathBuf {
    std::env::temp_dir().join(format!("gpude-expr-ptxas-{}-{arch}", std::process::id()))
}

/// `ptxas -arch=sm_90 [-c] file`; Err with its message on failure.
fn ptxas(exe: &Path, ptx: &str, name: &str, relocatable: bool) -> Result<String, String> {
    ptxas_arch(exe, ptx, name, relocatable, "sm_90")
}

/// `ptxas -arch=<arch> [-c] file`.
fn ptxas_arch(
    exe: &Path,
    ptx: &str,
    name: &str,
    relocatable: bool,
    arch: &str,
) -> Result<String, String> {
    let dir = scratch_dir(arch);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{name}.ptx"));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.arg(format!("-arch={arch}")).arg("-v");
    if relocatable {
        cmd.arg("-c");
    }
    cmd.arg(&file).arg("-o").arg(dir.join(format!("{name}.o")));
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

/// The module with each `.extern` declaration of the maths replaced by a definition
/// of the same signature that returns its first argument: enough for `ptxas` to resolve
/// and check every call.
fn with_stubs(ptx: &str, e: &Expr, p: Precision) -> String {
    let b = if p == Precision::F32 { "b32" } else { "b64" };
    let mut out = ptx.to_string();
    for sym in e.external_symbols(p) {
        let extra = if sym.starts_with("gpude_expr_pow_") {
            format!(", .param .{b} b")
        } else {
            String::new()
        };
        let head = format!(".func (.param .{b} r) {sym} (.param .{b} a{extra})");
        let decl = format!(".extern {head};");
        assert!(out.contains(&decl), "no declaration `{decl}`");
        let def = format!(
            ".visible {head}\n{{\n\t.reg .{b} %v;\n\tld.param.{b} %v, [a];\n\t\
             st.param.{b} [r], %v;\n\tret;\n}}"
        );
        out = out.replace(&decl, &def);
    }
    out
}

#[test]
fn ptx_assembles_with_ptxas_for_sm_90() {
    let Some(exe) = find_ptxas() else {
        // Straight to the stream, past the test harness's capture of `eprintln!`.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: ptx_assembles_with_ptxas_for_sm_90 — ptxas not found \
             (set PTXAS or pip install nvidia-cuda-nvcc-cu12)"
        );
        return;
    };
    let mut calls = 0;
    for (i, e) in expressions().iter().enumerate() {
        // Generic, and for one dimension (with the tables of per-j values).
        for (p, dim) in [
            (Precision::F32, None),
            (Precision::F64, None),
            (Precision::F32, Some(7)),
            (Precision::F64, Some(128)),
        ] {
            let name = format!("e{i}_{}_{}", p.name(), dim.unwrap_or(0));
            let ptx = match dim {
                None => e.ptx_eval_kernel(p),
                Some(d) => e.ptx_eval_kernel_for_dim(p, d),
            };
            // The module as generated: relocatable when it calls the external maths.
            let relocatable = !e.external_symbols(p).is_empty();
            if let Err(msg) = ptxas(&exe, &ptx, &name, relocatable) {
                panic!("{}: ptxas failed:\n{msg}\n{ptx}", e.source());
            }
            // With the maths symbols defined, the whole module links and assembles.
            if relocatable {
                calls += 1;
                let full = with_stubs(&ptx, e, p);
                let report = ptxas(&exe, &full, &format!("{name}_full"), false)
                    .unwrap_or_else(|msg| panic!("{}: ptxas failed:\n{msg}\n{full}", e.source()));
                assert!(report.contains(p.kernel_name()), "{report}");
            }
        }
    }
    assert!(calls >= 20, "{calls}");
    // The check can fail: a malformed instruction is refused.
    let bad = Expr::parse("sum(x^2)")
        .unwrap()
        .ptx_eval_kernel(Precision::F32)
        .replace("mul.rn.f32", "mul.rn.f33");
    assert!(ptxas(&exe, &bad, "bad", false).is_err());
    let _ = writeln!(
        std::io::stderr(),
        "ptxas: {} expressions × 2 precisions assemble for sm_90",
        expressions().len()
    );
    let _ = std::fs::remove_dir_all(scratch_dir("sm_90"));
}

/// The modules of the separable form (`SeparableExpr::ptx`) of every separable expression
/// above and of the built-ins, for both precisions: as generated (relocatable: they are
/// functions for the kernels to call) and with the maths defined, for `sm_70`.
#[test]
fn separable_ptx_assembles_with_ptxas_for_sm_70() {
    let Some(exe) = find_ptxas() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: separable_ptx_assembles_with_ptxas_for_sm_70 — ptxas not found \
             (set PTXAS or pip install nvidia-cuda-nvcc-cu12)"
        );
        return;
    };
    let mut all = expressions();
    all.extend(
        gpude_device::Function::ALL
            .iter()
            .map(|&f| Expr::parse(&gpude_expr::builtins::expression(f)).unwrap()),
    );
    let mut modules = 0;
    for (i, e) in all.iter().enumerate() {
        let Some(s) = e.separable() else { continue };
        for p in [Precision::F32, Precision::F64] {
            let name = format!("sep{i}_{}", p.name());
            let ptx = s.ptx(p);
            let report = ptxas_arch(&exe, &ptx, &name, true, "sm_70")
                .unwrap_or_else(|msg| panic!("{}: ptxas failed:\n{msg}\n{ptx}", e.source()));
            let mut want = vec![p.sep_a_name(), p.sep_finish_name()];
            if s.flags().b != gpude_device::separable::BKind::None {
                want.push(p.sep_b_name());
            }
            for f in want {
                assert!(report.contains(f), "{f} not in the report:\n{report}");
            }
            if !s.external_symbols(p).is_empty() {
                let full = with_stubs(&ptx, e, p);
                ptxas_arch(&exe, &full, &format!("{name}_full"), true, "sm_70")
                    .unwrap_or_else(|msg| panic!("{}: ptxas failed:\n{msg}\n{full}", e.source()));
            }
            modules += 1;
        }
    }
    // Sphere … Weierstrass and most of the list above.
    assert!(modules >= 2 * 15, "{modules}");
    // The check can fail: a malformed instruction is refused.
    let bad = Expr::parse("sum(x^2)")
        .unwrap()
        .separable()
        .unwrap()
        .ptx(Precision::F64)
        .replace("add.rn.f64", "add.rn.f65");
    assert!(ptxas_arch(&exe, &bad, "sep_bad", true, "sm_70").is_err());
    let _ = writeln!(
        std::io::stderr(),
        "ptxas: {modules} separable modules assemble for sm_70"
    );
    let _ = std::fs::remove_dir_all(scratch_dir("sm_70"));
}

/// ptxas (and the driver) refuse any byte outside ASCII, comments included: a long
/// expression's cut-short echo must stay ASCII too.
#[test]
fn the_ptx_is_ascii() {
    let long = format!("sum({})", vec!["cos(x)"; 60].join(" + "));
    let mut all: Vec<Expr> = expressions();
    all.push(Expr::parse(&long).unwrap());
    for e in all {
        for p in [Precision::F32, Precision::F64] {
            let ptx = e.ptx_eval_kernel(p);
            assert!(ptx.is_ascii(), "{}", e.source());
        }
    }
}

#[test]
fn one_ieee_instruction_per_ir_instruction() {
    for e in expressions() {
        for (p, dim) in [
            (Precision::F32, None),
            (Precision::F64, None),
            (Precision::F32, Some(9)),
            (Precision::F64, Some(4)),
        ] {
            let ptx = match dim {
                None => e.ptx_eval_kernel(p),
                Some(d) => e.ptx_eval_kernel_for_dim(p, d),
            };
            for banned in [
                ".ftz", ".approx", "fma.", "mad.rn", ".full", "rsqrt", "ex2", "lg2",
            ] {
                assert!(!ptx.contains(banned), "{banned} in {}", e.source());
            }
            let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
            let mut seen = 0;
            for (k, l) in lines.iter().enumerate() {
                // The copies of a loop body in a vectorised loop are tagged `(pre)` or
                // `(xm)`; the scalar loop's copy is not, and counts once below.
                let Some(c) = l.strip_prefix("// ") else {
                    continue;
                };
                let (copy, c) = match c.strip_prefix('(') {
                    Some(rest) => match rest.split_once(") ") {
                        Some((tag, c)) => (Some(tag), c),
                        None => continue,
                    },
                    None => (None, c),
                };
                let Some(ir) = c.strip_prefix('r') else {
                    continue;
                };
                if !ir.starts_with(|ch: char| ch.is_ascii_digit()) {
                    continue;
                }
                let op = ir.split(" = ").nth(1).expect("r<N> = <op>");
                let word = op.split([' ', '[']).next().unwrap_or("");
                let want: &[&str] = match word {
                    "lit" | "reduction" => &["mov."],
                    "D" | "j" => &["cvt.rn."],
                    // In a vector copy, x[j] is a component of the vector load.
                    "x" if copy.is_some_and(|t| {
                        t.rsplit(' ').next().is_some_and(|w| w.starts_with('x'))
                    }) && op == "x[j]" =>
                    {
                        &["mov."]
                    }
                    "x" => &["ld.global."],
                    "add" | "sub" | "mul" | "div" | "sqrt" => {
                        &["add.rn.", "sub.rn.", "mul.rn.", "div.rn.", "sqrt.rn."]
                    }
                    "neg" => &["neg."],
                    "abs" => &["abs."],
                    "min" => &["setp.lt."],
                    "max" => &["setp.gt."],
                    "lt" | "le" | "gt" | "ge" | "eq" => &["setp."],
                    "ne" | "select" => &["setp.neu."],
                    "cumsum" => &["add.rn."],
                    _ => &["{"], // a call
                };
                let next = lines[k + 1];
                // In a copy that reads the table, a value of j and D only is a load from
                // it, or (if only the table's values need it) nothing.
                if copy.is_some_and(|t| t.starts_with('t'))
                    && (next.starts_with("ld.global.nc.")
                        || next == "// (only for the table's values)")
                {
                    continue;
                }
                // A reduction over the range of an earlier one is computed in its loop.
                if word == "reduction" && next.starts_with("// (in the loop of reduction #") {
                    if copy.is_none() {
                        seen += 1;
                    }
                    continue;
                }
                assert!(
                    want.iter().any(|w| next.starts_with(w)),
                    "{}: `{l}` is followed by `{next}`",
                    e.source()
                );
                if matches!(word, "add" | "sub" | "mul" | "div" | "sqrt") {
                    assert!(
                        next.starts_with(&format!("{word}.rn.{}", p.name())),
                        "{next}"
                    );
                }
                if copy.is_none() {
                    seen += 1;
                }
            }
            // Every IR instruction appears once in the PTX.
            let ir_lines = e
                .ir()
                .lines()
                .filter(|l| {
                    let l = l.trim_start();
                    l.starts_with('r') && l[1..].starts_with(|c: char| c.is_ascii_digit())
                })
                .count();
            assert_eq!(seen, ir_lines, "{}", e.source());
        }
    }
}
