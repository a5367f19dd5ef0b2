//! The inputs the CUDA engine links for an expression objective, checked without a GPU:
//! the external kernels declare the objective with the signature the expressions'
//! PTX defines, the maths module defines every function an expression calls with the
//! signature it is called with, and — when `PTXAS` names `ptxas` — the eight built-ins
//! written as expressions assemble, alone and as one program with a kernel and the maths.

use gpude::device::expr_maths::SYMBOLS;
use gpude::device::registry::for_each_separable_key;
use gpude::device::registry::{
    EXPR_MATHS_MODULE, EXTERNAL, KernelPrecision, SEPARABLE, for_each_adaptive_key,
    for_each_external_key, objective_symbol,
};
use gpude::device::separable::SepFlags;
use gpude::device::{Function, registry::KERNEL_NAME_MAX};
use gpude::expr::{Expr, Precision, builtins::expression};
use gpude::host::ptx_objective::{PtxCode, with_separable_b};
use gpude::{Formula, Job, Objective, SeparableCpu, cpu};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn module(name: &str) -> &'static str {
    gpude::KERNELS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no module {name}"))
        .1
}

fn external_kernels() -> Vec<(String, KernelPrecision)> {
    let mut v = Vec::new();
    for_each_external_key(|k| {
        let mut buf = [0u8; KERNEL_NAME_MAX];
        v.push((k.name_into(&mut buf).to_string(), k.precision));
    });
    v
}

fn expr_precision(p: KernelPrecision) -> Precision {
    match p {
        KernelPrecision::F32 => Precision::F32,
        KernelPrecision::F64 => Precision::F64,
    }
}

/// One top-level item of a PTX module.
#[derive(Clone, Debug)]
struct Item {
    text: String,
    /// `.func` declarations and definitions, `.entry`, globals: the name; else empty.
    name: String,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Header,
    /// `.extern .func …;`
    Extern,
    /// A `.func` without a body (a forward declaration).
    Decl,
    /// A `.func` with its body.
    Def,
    Entry,
    Global,
}

fn name_after(text: &str, keyword: &str) -> String {
    let rest = text[text.find(keyword).expect("keyword") + keyword.len()..].trim_start();
    let rest = if rest.starts_with('(') {
        &rest[rest.find(')').expect("closing bracket") + 1..]
    } else {
        rest
    };
    rest.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
        .collect()
}

/// Splits a module into its top-level items (brackets balanced, comments between items
/// dropped).
fn items(ptx: &str) -> Vec<Item> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for line in ptx.lines() {
        let t = line.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with("//")) {
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
        if !t.starts_with("//") {
            depth += t.matches('{').count() as i32 - t.matches('}').count() as i32;
        }
        let header = [".version", ".target", ".address_size"]
            .iter()
            .any(|h| t.starts_with(h));
        if depth != 0 || !(header || t.ends_with(';') || t.ends_with('}')) {
            continue;
        }
        let text = std::mem::take(&mut cur);
        let head = text.trim_start();
        let (kind, name) = if header {
            (Kind::Header, String::new())
        } else if head.contains(".entry") {
            (Kind::Entry, name_after(head, ".entry"))
        } else if head.starts_with(".extern .func") {
            (Kind::Extern, name_after(head, ".func"))
        } else if head.contains(".func") {
            let k = if head.contains('{') {
                Kind::Def
            } else {
                Kind::Decl
            };
            (k, name_after(head, ".func"))
        } else {
            let name = head
                .split_whitespace()
                .find(|t| !t.starts_with('.') && !t.starts_with(|c: char| c.is_ascii_digit()))
                .map(|t| t[..t.find(['[', ';', '=']).unwrap_or(t.len())].to_string())
                .unwrap_or_default();
            (Kind::Global, name)
        };
        out.push(Item { text, name, kind });
    }
    assert_eq!(depth, 0, "unbalanced PTX");
    out
}

/// A function's signature: the types of its results and of its parameters, in order.
fn signature(item: &Item) -> (Vec<String>, Vec<String>) {
    let head = &item.text[..item.text.find(['{', ';']).unwrap_or(item.text.len())];
    let at = head.find(&item.name).expect("name in the head");
    let types = |list: &str| -> Vec<String> {
        let inner = list
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        if inner.is_empty() {
            return Vec::new();
        }
        inner
            .split(',')
            .map(|p| {
                p.split_whitespace()
                    .filter(|t| t.starts_with('.') && *t != ".param")
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let before = &head[..at];
    let ret = before.find('(').map_or(Vec::new(), |o| types(&before[o..]));
    (ret, types(&head[at + item.name.len()..]))
}

fn find<'a>(items: &'a [Item], kind: Kind, name: &str) -> Option<&'a Item> {
    items.iter().find(|i| i.kind == kind && i.name == name)
}

#[test]
fn the_kernels_declare_the_objective_the_expressions_define() {
    let kernels = external_kernels();
    assert_eq!(kernels.len(), 24, "{kernels:?}");
    for (name, p) in &kernels {
        assert!(name.contains(EXTERNAL), "{name}");
        let its = items(module(name));
        let sym = objective_symbol(*p);
        let decl = find(&its, Kind::Extern, sym)
            .unwrap_or_else(|| panic!("{name} does not declare `.extern .func {sym}`"));
        // The only external symbol the kernel needs.
        let externs: Vec<&str> = its
            .iter()
            .filter(|i| i.kind == Kind::Extern)
            .map(|i| i.name.as_str())
            .collect();
        assert_eq!(externs, [sym], "{name}");
        assert!(find(&its, Kind::Entry, name).is_some(), "{name}");
        let want = signature(decl);
        let b = if *p == KernelPrecision::F32 {
            ".b32"
        } else {
            ".b64"
        };
        assert_eq!(
            want,
            (vec![b.to_string()], vec![".b64".into(), ".b32".into()])
        );
        for f in Function::ALL {
            let e = Expr::parse(&expression(f)).unwrap();
            let ptx = e.ptx(expr_precision(*p));
            let def = items(&ptx)
                .into_iter()
                .find(|i| i.kind == Kind::Def && i.name == sym)
                .unwrap_or_else(|| panic!("{f:?}: the expression does not define {sym}"));
            assert!(def.text.starts_with(".visible .func"), "{f:?}");
            assert_eq!(signature(&def), want, "{f:?} in {name}");
        }
    }
    // The check can fail: the other precision's definition differs.
    let e = Expr::parse("sum(x^2)").unwrap();
    let d64 = items(&e.ptx(Precision::F64))
        .into_iter()
        .find(|i| i.kind == Kind::Def)
        .unwrap();
    let d32 = items(&e.ptx(Precision::F32))
        .into_iter()
        .find(|i| i.kind == Kind::Def)
        .unwrap();
    assert_ne!(signature(&d64), signature(&d32));
}

#[test]
fn the_maths_module_defines_what_expressions_call() {
    let its = items(module(EXPR_MATHS_MODULE));
    let defs: BTreeMap<&str, (Vec<String>, Vec<String>)> = its
        .iter()
        .filter(|i| i.kind == Kind::Def && i.text.starts_with(".visible"))
        .map(|i| (i.name.as_str(), signature(i)))
        .collect();
    // Exactly the exported maths, each with the arity the list says.
    let names: Vec<&str> = defs.keys().copied().collect();
    let mut listed: Vec<&str> = SYMBOLS.iter().map(|s| s.0).collect();
    listed.sort();
    assert_eq!(names, listed);
    for (sym, n) in SYMBOLS {
        let b = if sym.ends_with("_f32") {
            ".b32"
        } else {
            ".b64"
        };
        assert_eq!(
            defs[sym],
            (vec![b.to_string()], vec![b.to_string(); *n as usize]),
            "{sym}"
        );
    }
    // No kernels, nothing left undefined.
    assert!(
        its.iter()
            .all(|i| i.kind != Kind::Entry && i.kind != Kind::Extern)
    );
    for d in its.iter().filter(|i| i.kind == Kind::Decl) {
        assert!(
            find(&its, Kind::Def, &d.name).is_some(),
            "{} undefined",
            d.name
        );
    }
    // Every call an expression makes matches a definition.
    let all = "sum(sin(x) + cos(x) + tan(x) + exp(x) + log(x) + sinpi(x) + cospi(x) \
               + expm1(x) + log1p(x) + x^0.5)";
    let e = Expr::parse(all).unwrap();
    for p in [Precision::F32, Precision::F64] {
        let called = e.external_symbols(p);
        assert_eq!(called.len(), 10);
        let ptx = e.ptx(p);
        let its = items(&ptx);
        for sym in &called {
            let decl = find(&its, Kind::Extern, sym).unwrap_or_else(|| panic!("{sym}"));
            assert_eq!(signature(decl), defs[sym.as_str()], "{sym}");
        }
    }
}

/// The program the JIT linker builds, as one module: the kernel's module, the
/// objective's and the maths', with one header, each symbol defined once and the
/// `.extern` declarations of what another part defines turned into forward declarations. Items that two parts
/// share (both from the device crate) must be the same text.
fn whole_program(parts: &[&str]) -> String {
    let mut kept: Vec<Item> = Vec::new();
    let mut header = String::new();
    let all: Vec<Item> = parts.iter().flat_map(|p| items(p)).collect();
    for it in &all {
        match it.kind {
            Kind::Header => {
                if !header.contains(it.text.split_whitespace().next().unwrap_or("")) {
                    header.push_str(&it.text);
                }
                continue;
            }
            Kind::Extern => {
                // Defined by another part: a forward declaration of the definition, which
                // ptxas then checks against it.
                let defined = all.iter().any(|d| d.kind == Kind::Def && d.name == it.name);
                if defined {
                    if !kept
                        .iter()
                        .any(|k| k.kind == Kind::Decl && k.name == it.name)
                    {
                        kept.push(Item {
                            text: it.text.replacen(".extern", ".visible", 1),
                            name: it.name.clone(),
                            kind: Kind::Decl,
                        });
                    }
                    continue;
                }
            }
            _ => {}
        }
        if let Some(k) = kept
            .iter()
            .find(|k| k.kind == it.kind && k.name == it.name && !it.name.is_empty())
        {
            assert_eq!(k.text, it.text, "two parts define {} differently", it.name);
            continue;
        }
        kept.push(it.clone());
    }
    let mut out = header;
    for k in &kept {
        out.push_str(&k.text);
        out.push('\n');
    }
    out
}

fn ptxas() -> Option<PathBuf> {
    let p = std::env::var_os("PTXAS")?;
    Some(PathBuf::from(p))
}

fn assemble(exe: &Path, ptx: &str, name: &str, relocatable: bool) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("gpude-external-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{name}.ptx"));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(["-arch=sm_90", "-v"]);
    if relocatable {
        cmd.arg("-c");
    }
    let out = cmd
        .arg(&file)
        .arg("-o")
        .arg(dir.join(format!("{name}.cubin")))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_file(&file);
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

#[test]
fn the_builtins_as_expressions_assemble_and_link_with_ptxas() {
    let Some(exe) = ptxas() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the_builtins_as_expressions_assemble_and_link_with_ptxas — set PTXAS \
             to ptxas (pip install nvidia-cuda-nvcc-cu12; .ci/run does)"
        );
        return;
    };
    let maths = module(EXPR_MATHS_MODULE);
    assemble(&exe, maths, "maths", true).unwrap_or_else(|m| panic!("maths module: {m}"));
    let mut linked = 0;
    for (name, p) in external_kernels() {
        let kernel = module(&name);
        // Alone, with the objective left to the linker.
        assemble(&exe, kernel, &name, true).unwrap_or_else(|m| panic!("{name}: {m}"));
        // One built-in per kernel keeps the time down; every one of them is linked with
        // the batch kernels of the thesis strategy, which are the smaller ones.
        let fs: Vec<Function> = if name.starts_with("de_batch_") && name.ends_with("_thesis") {
            Function::ALL.to_vec()
        } else {
            vec![Function::Griewank]
        };
        for f in fs {
            let e = Expr::parse(&expression(f)).unwrap();
            let ep = expr_precision(p);
            // As the engine generates it: for the job's dimension (tables of per-j values).
            let obj = e.ptx_for_dim(ep, 30);
            let tag = format!("{}_{}", f.key(), ep.name());
            assemble(&exe, &obj, &tag, true).unwrap_or_else(|m| panic!("{tag}: {m}\n{obj}"));
            let program = whole_program(&[kernel, &obj, maths]);
            let report = assemble(&exe, &program, &format!("{name}_{tag}"), false)
                .unwrap_or_else(|m| panic!("{name} with {tag}: {m}"));
            assert!(report.contains(&name), "{report}");
            linked += 1;
        }
    }
    assert_eq!(linked, 2 * Function::ALL.len() + 22);
    // The check can fail: a kernel without the objective's definition does not link.
    let kernel = module("de_batch_f32_external_thesis");
    let alone = whole_program(&[kernel, maths]);
    assert!(assemble(&exe, &alone, "unlinked", false).is_err());
    let _ = writeln!(
        std::io::stderr(),
        "ptxas: {linked} linked programs (external kernel + expression + maths) assemble for sm_90"
    );
}

/// The example objective crate's PTX (`examples/objective-rust`, which `.ci/run` builds)
/// when `GPUDE_OBJECTIVE_PTX` names it: a PTX objective in both precisions that links with
/// the external kernels (assembled with `ptxas` when `PTXAS` is set).
/// The adaptive kernels of objectives linked in (`adaptive_{batch,grid}_T_external` and
/// `…_separable`) declare what they call and link, with ptxas, with an expression's
/// module of the matching form and the maths; alone they do not.
#[test]
fn the_adaptive_kernels_link_with_an_expression() {
    let Some(exe) = ptxas() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the_adaptive_kernels_link_with_an_expression — set PTXAS to ptxas"
        );
        return;
    };
    let maths = module(EXPR_MATHS_MODULE);
    let e = Expr::parse(&expression(Function::Griewank)).unwrap();
    let sep = e.separable().expect("Griewank's expression is separable");
    let mut linked = 0;
    for_each_adaptive_key(|k| {
        if k.function != EXTERNAL && k.function != SEPARABLE {
            return;
        }
        let mut buf = [0u8; KERNEL_NAME_MAX];
        let name = k.name_into(&mut buf).to_string();
        let ep = expr_precision(k.precision);
        let p = match k.precision {
            KernelPrecision::F32 => gpude::Precision::F32,
            KernelPrecision::F64 => gpude::Precision::F64,
        };
        let obj = if k.function == EXTERNAL {
            e.ptx_for_dim(ep, 30)
        } else {
            with_separable_b(&sep.ptx(ep), p)
        };
        let kernel = module(&name);
        let its = items(kernel);
        let called: Vec<&str> = if k.function == EXTERNAL {
            vec![objective_symbol(k.precision)]
        } else {
            vec![ep.sep_a_name(), ep.sep_b_name(), ep.sep_finish_name()]
        };
        for sym in called {
            assert!(
                find(&its, Kind::Extern, sym).is_some(),
                "{name} declares {sym}"
            );
        }
        let program = whole_program(&[kernel, &obj, maths]);
        let report = assemble(&exe, &program, &format!("{name}_griewank"), false)
            .unwrap_or_else(|m| panic!("{name} with Griewank: {m}"));
        assert!(report.contains(&name), "{report}");
        assert!(assemble(&exe, &whole_program(&[kernel, maths]), &name, false).is_err());
        linked += 1;
    });
    assert_eq!(linked, 8);
}

#[test]
fn the_example_objective_is_a_ptx_objective_that_links() {
    let Some(path) = std::env::var_os("GPUDE_OBJECTIVE_PTX") else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the_example_objective_is_a_ptx_objective_that_links — set \
             GPUDE_OBJECTIVE_PTX to the example's PTX (see examples/objective-rust/README.md)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path).expect("the example's PTX");
    let code = gpude::host::ptx_objective::PtxCode::parse(text.clone()).expect("a PTX objective");
    assert_eq!(code.precisions(), "f32 and f64");
    let Some(exe) = ptxas() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: linking the example — PTXAS is not set"
        );
        return;
    };
    let maths = module(EXPR_MATHS_MODULE);
    let mut linked = 0;
    for (name, _) in external_kernels() {
        if !name.starts_with("de_batch_") {
            continue;
        }
        let program = whole_program(&[module(&name), &text, maths]);
        assemble(&exe, &program, &format!("example_{name}"), false)
            .unwrap_or_else(|m| panic!("{name} with the example: {m}"));
        linked += 1;
    }
    // Batch and controlled batch (`…_ctl`), classic, thesis and thesis-variant, f32 and
    // f64.
    assert_eq!(linked, 12);
}

/// Rosenbrock's separable form on the CPU, as the example crate writes it (its a-terms
/// in the textbook formula's order).
struct SeparableRosenbrock;

macro_rules! separable_rosenbrock {
    ($t:ty) => {
        impl gpude::device::separable::Separable<$t> for SeparableRosenbrock {
            fn flags(&self) -> SepFlags {
                SepFlags {
                    prev: true,
                    ..Default::default()
                }
            }
            fn a(&self, mut acc: $t, v: [$t; 4], prev: $t, _b: $t, j0: u32, n: u32, _d: u32) -> $t {
                let mut q = prev;
                for (k, &x) in v.iter().enumerate().take(n as usize) {
                    if j0 + k as u32 > 0 {
                        let u = 1.0 - q;
                        let r = x - q * q;
                        acc += u * u + 100.0 * (r * r);
                    }
                    q = x;
                }
                acc
            }
            fn b(&self, acc: $t, _v: [$t; 4], _p: $t, _b: $t, _j0: u32, _n: u32, _d: u32) -> $t {
                acc
            }
            fn finish(&self, a: $t, _b: $t, _d: u32) -> $t {
                a
            }
        }
    };
}
separable_rosenbrock!(f32);
separable_rosenbrock!(f64);

/// A module that defines the separable form's symbols with the given flags (bodies that
/// the CPU engine never runs).
fn separable_module(flags: u32) -> String {
    let mut m = String::from(".version 7.0\n.target sm_70\n.address_size 64\n");
    for (t, w) in [("f32", 32), ("f64", 64)] {
        m += &format!(".visible .global .align 4 .b8 gpude_sep_flags_{t}[4] = {{{flags}}};\n");
        m += &format!(
            ".visible .func (.param .b{w} r) gpude_sep_a_{t}(.param .b{w} acc, .param .b{w} x0, \
             .param .b{w} x1, .param .b{w} x2, .param .b{w} x3, .param .b{w} prev, \
             .param .b{w} base, .param .b32 j0, .param .b32 n, .param .b32 d)\n{{\n\tret;\n}}\n"
        );
        m += &format!(
            ".visible .func (.param .b{w} r) gpude_sep_finish_{t}(.param .b{w} a, \
             .param .b{w} b, .param .b32 d)\n{{\n\tret;\n}}\n"
        );
    }
    m
}

fn separable_rosenbrock(flags: u32) -> gpude::Result<Objective> {
    Objective::ptx_separable(
        "rosenbrock",
        Some(0.0),
        PtxCode::parse(separable_module(flags))?,
        SeparableCpu {
            f32: Box::new(SeparableRosenbrock),
            f64: Box::new(SeparableRosenbrock),
        },
    )
}

/// The CPU engine evaluates a separable objective in the order of the GPU's lanes: a run
/// with Rosenbrock's separable form is the built-in Rosenbrock's in the textbook formula
/// (the same terms in the same order) bit for bit, in both precisions; CPU code whose
/// flags are not the module's is refused.
#[test]
fn the_cpu_engine_runs_a_separable_objective_as_the_builtin() {
    for p in [gpude::Precision::F32, gpude::Precision::F64] {
        for dim in [24u32, 300] {
            let job = |o: Objective| {
                Job::builder_for(o, dim)
                    .domain(-5.0, 5.0)
                    .pop(64)
                    .generations(25)
                    .precision(p)
                    .formula(Formula::Textbook)
                    .seed(5)
                    .build()
                    .expect("valid job")
            };
            let run = |j: &Job| {
                match p {
                    gpude::Precision::F32 => cpu::run::<f32>(j, None),
                    gpude::Precision::F64 => cpu::run::<f64>(j, None),
                }
                .expect("CPU run")
            };
            let a = run(&job(separable_rosenbrock(4).unwrap()));
            let b = run(&job(Objective::Builtin(Function::Rosenbrock)));
            assert_eq!(a.best_f.to_bits(), b.best_f.to_bits(), "{p:?} D = {dim}");
            assert_eq!(a.best_x, b.best_x, "{p:?} D = {dim}");
            assert!(a.best_f < run(&job(separable_rosenbrock(4).unwrap())).best_f + 1.0);
        }
    }
    let e = separable_rosenbrock(0).unwrap_err().to_string();
    assert!(e.contains("flags 4") && e.contains("(0)"), "{e}");
}

/// The example crate's separable form (when `GPUDE_OBJECTIVE_PTX` names its PTX): its
/// flags say prev, and it links with every separable kernel (with `ptxas` when `PTXAS`
/// is set), as the separable kernels alone assemble as relocatable code.
#[test]
fn the_example_s_separable_form_links_with_the_separable_kernels() {
    let Some(path) = std::env::var_os("GPUDE_OBJECTIVE_PTX") else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the_example_s_separable_form_links_with_the_separable_kernels — set \
             GPUDE_OBJECTIVE_PTX to the example's PTX (see examples/objective-rust/README.md)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path).expect("the example's PTX");
    let code = PtxCode::parse(text.clone()).expect("a PTX objective");
    for p in [gpude::Precision::F32, gpude::Precision::F64] {
        let f = code.separable(p).expect("the separable form");
        assert!(f.prev && !f.prefix && f.b == gpude::device::separable::BKind::None);
    }
    let Some(exe) = ptxas() else {
        let _ = writeln!(std::io::stderr(), "SKIPPED: linking — PTXAS is not set");
        return;
    };
    let maths = module(EXPR_MATHS_MODULE);
    let mut linked = 0;
    for_each_separable_key(|k| {
        let mut buf = [0u8; KERNEL_NAME_MAX];
        let name = k.name_into(&mut buf).to_string();
        assemble(&exe, module(&name), &name, true).unwrap_or_else(|m| panic!("{name}: {m}"));
        // As the engine links it: with the b-terms the example leaves out.
        let p = match k.precision {
            KernelPrecision::F32 => gpude::Precision::F32,
            KernelPrecision::F64 => gpude::Precision::F64,
        };
        let linked_text = with_separable_b(&text, p);
        let program = whole_program(&[module(&name), &linked_text, maths]);
        let report = assemble(&exe, &program, &format!("example_{name}"), false)
            .unwrap_or_else(|m| panic!("{name} with the example: {m}"));
        assert!(report.contains(&name), "{report}");
        linked += 1;
    });
    assert_eq!(linked, 24);
    // The check can fail: a separable kernel without the form, or without the b-terms,
    // does not link.
    let alone = whole_program(&[module("de_batch_f32_separable_thesis"), maths]);
    assert!(assemble(&exe, &alone, "separable_unlinked", false).is_err());
    let no_b = whole_program(&[module("de_batch_f32_separable_thesis"), &text, maths]);
    assert!(assemble(&exe, &no_b, "separable_without_b", false).is_err());
}

/// The objective's functions copied into the kernels (`gpude::host::ptx_inline`, as the
/// CUDA engine links them): for every separable kernel and the built-ins' separable
/// expressions, and for the external kernels and the whole-vector expressions, no call to
/// the objective is left where its body is self-contained, and the result assembles —
/// alone as relocatable code, and as one program with the objective's module and the
/// maths (with `ptxas` when `PTXAS` is set).
#[test]
fn inlined_objectives_assemble() {
    use gpude::device::registry::separable_symbols;
    use gpude::host::ptx_inline::inline_calls;
    let exe = ptxas();
    if exe.is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: assembling the inlined kernels — PTXAS is not set (the inlining itself is checked)"
        );
    }
    let maths = module(EXPR_MATHS_MODULE);
    let mut checked = 0;
    // What ptxas assembles (name, the parts of the program, relocatable, what it is),
    // on every core once the inlining is checked.
    let mut work: Vec<(String, Vec<String>, bool, String)> = Vec::new();
    for f in [
        Function::Sphere,
        Function::Griewank,
        Function::Rosenbrock,
        Function::Ackley,
    ] {
        let ex = Expr::parse(&expression(f)).unwrap();
        let sep = ex.separable().expect("separable");
        let mut names: Vec<(String, KernelPrecision)> = Vec::new();
        for_each_separable_key(|k| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            names.push((k.name_into(&mut buf).to_string(), k.precision));
        });
        for (name, kp) in names
            .iter()
            .filter(|(n, _)| n.contains("batch") || n.contains("grid"))
        {
            let (p, hp) = match kp {
                KernelPrecision::F32 => (Precision::F32, gpude::Precision::F32),
                KernelPrecision::F64 => (Precision::F64, gpude::Precision::F64),
            };
            let objective = with_separable_b(&sep.ptx(p), hp);
            let (inlined, sites) = inline_calls(module(name), &objective, &separable_symbols(*kp));
            // Then the maths the terms call, as the engine does.
            let maths_names: Vec<&str> = SYMBOLS.iter().map(|(n, _)| *n).collect();
            let (inlined, _) = inline_calls(&inlined, maths, &maths_names);
            assert!(sites >= 3, "{f:?} {name}: {sites} calls inlined");
            for s in separable_symbols(*kp) {
                assert!(
                    !inlined.contains(&format!("), {s},")),
                    "{f:?} {name}: {s} still called"
                );
            }
            let tag = format!("inl_{}_{name}", f.key());
            let what = format!("{f:?} {name} inlined");
            work.push((tag.clone(), vec![inlined.clone()], true, what.clone()));
            work.push((
                format!("{tag}_prog"),
                vec![inlined, objective],
                false,
                format!("{what}, linked"),
            ));
            checked += 1;
        }
    }
    // The whole-vector form in the external kernels (Rosenbrock's expression reads no
    // table when it is not generated for one dimension).
    let ex = Expr::parse(&expression(Function::Rosenbrock)).unwrap();
    for (name, kp) in external_kernels()
        .iter()
        .filter(|(n, _)| n.contains("batch"))
    {
        let p = expr_precision(*kp);
        let objective = ex.ptx(p);
        let (inlined, sites) = inline_calls(module(name), &objective, &[objective_symbol(*kp)]);
        assert!(sites >= 1, "{name}: {sites} calls inlined");
        work.push((
            format!("inl_whole_{name}"),
            vec![inlined, objective],
            false,
            format!("{name} inlined, linked"),
        ));
        checked += 1;
    }
    assert!(checked > 40, "{checked}");
    let Some(exe) = &exe else { return };
    // One ptxas at a time on each core (every program has a file of its own).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..cores)
            .map(|_| {
                s.spawn(|| {
                    let mut bad = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((tag, parts, relocatable, what)) = work.get(i) else {
                            break;
                        };
                        let text = if *relocatable {
                            parts[0].clone()
                        } else {
                            let mut all: Vec<&str> = parts.iter().map(String::as_str).collect();
                            all.push(maths);
                            whole_program(&all)
                        };
                        if let Err(m) = assemble(exe, &text, tag, *relocatable) {
                            bad.push(format!("{what}: {m}"));
                        }
                    }
                    bad
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a ptxas worker"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
