//! A user's objective compiled to PTX: a module that defines `gpude_objective_f32` or
//! `gpude_objective_f64` (or both) with the signature the external kernels call,
//!
//! ```text
//! .visible .func (.param .b32 r) gpude_objective_f32(.param .b64 x, .param .b32 d)
//! .visible .func (.param .b64 r) gpude_objective_f64(.param .b64 x, .param .b32 d)
//! ```
//!
//! (`x` a generic pointer to the `d` components of one point; in Rust,
//! `#[unsafe(no_mangle)] pub extern "C" fn gpude_objective_f32(x: *const f32, d: u32) -> f32`
//! in a crate built for `nvptx64-nvidia-cuda`, see `examples/objective-rust`). The CUDA
//! engine links it with its kernels as it links an expression's PTX, with the expression
//! maths beside it (a module may call `gpude_expr_cos_f32` and the others of
//! `gpude_device::expr_maths`).
//!
//! A module may also (or instead) define the **separable form** of the objective in a
//! precision (see [`gpude_device::separable`]): the functions `gpude_sep_a_T`,
//! `gpude_sep_finish_T` (and `gpude_sep_b_T` when the flags say B) and the global
//! `gpude_sep_flags_T` with the flags' bits, written as rustc writes a `u32` static
//! (`.visible .global .align 4 .u32 gpude_sep_flags_f32 = 4;` or
//! `.visible .global .align 4 .b8 gpude_sep_flags_f32[4] = {4, 0, 0, 0};`). Where a
//! precision has it, the CUDA engine runs the separable kernels, which evaluate a trial
//! in registers spread over a group of lanes as the built-in functions are, and prefers
//! them to the whole-vector objective.
//!
//! [`PtxCode::parse`] checks what can be checked before a GPU sees the module: its size,
//! that it is ASCII text, and that it defines at least one of the forms, each symbol with
//! the right signature, and valid flags. Errors name the symbol, the line and what is
//! expected; they never repeat the module's text.

use crate::error::{Error, Result};
use crate::job::precision::Precision;
use gpude_device::registry::{KernelPrecision, separable_flags_symbol, separable_symbols};
use gpude_device::separable::{BKind, SepFlags};

/// The largest PTX module accepted, in bytes.
pub const MAX_PTX_BYTES: usize = 16 << 20;

/// A checked PTX module defining the objective in one or both precisions.
#[derive(Clone, Debug)]
pub struct PtxCode {
    text: String,
    f32: bool,
    f64: bool,
    /// The separable form's flags in f32 and f64, where the module defines it.
    sep: [Option<SepFlags>; 2],
}

/// The symbol of the objective in precision `p`.
pub fn symbol(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "gpude_objective_f32",
        Precision::F64 => "gpude_objective_f64",
    }
}

fn bad(message: String) -> Error {
    Error::Input {
        what: "PTX objective".into(),
        message,
    }
}

/// The type words of a parameter list `( .param .b64 a, .param .b32 b )`.
fn param_types(list: &str) -> Vec<String> {
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
}

/// The width in bits a PTX scalar type word names (`.b32`, `.f64`, `.u32`, …).
fn bits(ty: &str) -> Option<u32> {
    let t = ty.strip_prefix('.')?;
    match t.chars().next()? {
        'b' | 'f' | 'u' | 's' => t[1..].parse().ok(),
        _ => None,
    }
}

/// Where `text` defines the function `sym` (`.visible .func` or `.weak .func` with a
/// body): its line and the type words of its return value and parameters.
fn definition_in(text: &str, sym: &str) -> Option<(usize, Vec<String>, Vec<String>)> {
    let mut from = 0;
    while let Some(k) = text[from..].find(sym) {
        let at = from + k;
        from = at + sym.len();
        // The whole identifier, not a longer name that contains it.
        let before = text[..at].chars().next_back();
        let after = text[from..].chars().next();
        let ident =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        if ident(before) || ident(after) {
            continue;
        }
        // A definition: the line starts the declaration with `.visible .func` or
        // `.weak .func`, and a body follows.
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let head = text[line_start..at].trim_start();
        let linked = head.starts_with(".visible .func") || head.starts_with(".weak .func");
        let Some(end) = text[from..].find(['{', ';']).map(|e| from + e) else {
            continue;
        };
        if !linked || !text[end..].starts_with('{') {
            continue;
        }
        let line = text[..at].matches('\n').count() + 1;
        let ret = head
            .find('(')
            .map_or(Vec::new(), |o| param_types(&head[o..]));
        let params = param_types(&text[from..end]);
        return Some((line, ret, params));
    }
    None
}

/// `text` (a module defining a separable form in precision `p`) with a definition of
/// `gpude_sep_b_T` added where it has none: the kernels' code refers to it whatever the
/// flags (they call it only when the flags say B), and a link needs every symbol it
/// refers to. The added function returns its accumulator and is never called.
pub fn with_separable_b(text: &str, p: Precision) -> String {
    let (t, w) = match p {
        Precision::F32 => ("f32", 32),
        Precision::F64 => ("f64", 64),
    };
    let sym = format!("gpude_sep_b_{t}");
    if definition_in(text, &sym).is_some() {
        return text.to_string();
    }
    let params: Vec<String> = (0..10)
        .map(|k| {
            let bits = if k < 7 { w } else { 32 };
            format!(".param .b{bits} {sym}_p{k}")
        })
        .collect();
    format!(
        "{text}\n.visible .func (.param .b{w} {sym}_r) {sym}({})\n{{\n\t.reg .b{w} %{sym}_v;\n\
         \tld.param.b{w} %{sym}_v, [{sym}_p0];\n\tst.param.b{w} [{sym}_r], %{sym}_v;\n\tret;\n}}\n",
        params.join(", ")
    )
}

impl PtxCode {
    /// Checks `text` as a PTX module defining the objective (see the module
    /// documentation).
    pub fn parse(text: String) -> Result<PtxCode> {
        if text.len() > MAX_PTX_BYTES {
            return Err(bad(format!(
                "the module has {} bytes; at most {MAX_PTX_BYTES} are accepted",
                text.len()
            )));
        }
        if let Some(at) = text.bytes().position(|b| !b.is_ascii() || b == 0) {
            let line = text.as_bytes()[..at]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            return Err(bad(format!(
                "line {line} holds a byte that is not ASCII text (PTX is ASCII)"
            )));
        }
        if !text.contains(".version") || !text.contains(".target") {
            return Err(bad(
                "this is not a PTX module: no .version and .target directives".into(),
            ));
        }
        let mut code = PtxCode {
            text,
            f32: false,
            f64: false,
            sep: [None; 2],
        };
        for p in [Precision::F32, Precision::F64] {
            if code.check_symbol(p)? {
                match p {
                    Precision::F32 => code.f32 = true,
                    Precision::F64 => code.f64 = true,
                }
            }
            code.sep[p as usize] = code.check_separable(p)?;
        }
        if !code.f32 && !code.f64 && code.sep == [None; 2] {
            return Err(bad(format!(
                "the module defines neither {} nor {}, nor a separable form: export at least \
                 one, as `.visible .func (.param .b32 r) gpude_objective_f32(.param .b64 x, \
                 .param .b32 d)` (f32) or with `.param .b64 r` (f64), or the separable \
                 form's gpude_sep_a_T, gpude_sep_finish_T and gpude_sep_flags_T",
                symbol(Precision::F32),
                symbol(Precision::F64)
            )));
        }
        Ok(code)
    }

    /// Whether the module defines the symbol of `p`, with the right signature (an error
    /// when it defines it with another).
    fn check_symbol(&self, p: Precision) -> Result<bool> {
        let sym = symbol(p);
        let want = if p == Precision::F32 { 32 } else { 64 };
        let Some((line, ret, params)) = self.definition(sym) else {
            return Ok(false);
        };
        let ok = ret.len() == 1
            && bits(&ret[0]) == Some(want)
            && params.len() == 2
            && bits(&params[0]) == Some(64)
            && bits(&params[1]) == Some(32);
        if !ok {
            return Err(bad(format!(
                "{sym} (line {line}) has the signature ({}) -> ({}); the kernels call \
                 (.b64 x, .b32 d) -> (.b{want})",
                params.join(", "),
                ret.join(", ")
            )));
        }
        Ok(true)
    }

    /// The separable form's flags in precision `p` when the module defines it (its
    /// a-terms), checked: the symbols' signatures, the flags' global and its value.
    fn check_separable(&self, p: Precision) -> Result<Option<SepFlags>> {
        let kp = match p {
            Precision::F32 => KernelPrecision::F32,
            Precision::F64 => KernelPrecision::F64,
        };
        let [a, b, finish] = separable_symbols(kp);
        let flags_sym = separable_flags_symbol(kp);
        let Some(def_a) = self.definition(a) else {
            for other in [b, finish] {
                if let Some((line, _, _)) = self.definition(other) {
                    return Err(bad(format!(
                        "{other} (line {line}) is defined without {a}: a separable form \
                         defines {a}, {finish} and {flags_sym}"
                    )));
                }
            }
            return Ok(None);
        };
        let w = if p == Precision::F32 { 32 } else { 64 };
        let term = |sym: &str, (line, ret, params): (usize, Vec<String>, Vec<String>)| {
            let ok = ret.len() == 1
                && bits(&ret[0]) == Some(w)
                && params.len() == 10
                && params[..7].iter().all(|t| bits(t) == Some(w))
                && params[7..].iter().all(|t| bits(t) == Some(32));
            if ok {
                Ok(())
            } else {
                Err(bad(format!(
                    "{sym} (line {line}) has the signature ({}) -> ({}); the kernels call \
                     (.b{w} acc, .b{w} x0, .b{w} x1, .b{w} x2, .b{w} x3, .b{w} prev, \
                     .b{w} base, .b32 j0, .b32 n, .b32 d) -> (.b{w})",
                    params.join(", "),
                    ret.join(", ")
                )))
            }
        };
        term(a, def_a)?;
        let Some((line, ret, params)) = self.definition(finish) else {
            return Err(bad(format!(
                "the module defines {a} but not {finish}: a separable form defines both \
                 (and {flags_sym})"
            )));
        };
        let ok = ret.len() == 1
            && bits(&ret[0]) == Some(w)
            && params.len() == 3
            && bits(&params[0]) == Some(w)
            && bits(&params[1]) == Some(w)
            && bits(&params[2]) == Some(32);
        if !ok {
            return Err(bad(format!(
                "{finish} (line {line}) has the signature ({}) -> ({}); the kernels call \
                 (.b{w} a, .b{w} b, .b32 d) -> (.b{w})",
                params.join(", "),
                ret.join(", ")
            )));
        }
        let flags = self.flags(flags_sym)?;
        match (flags.b, self.definition(b)) {
            (BKind::None, _) => {}
            (_, Some(def_b)) => term(b, def_b)?,
            (_, None) => {
                return Err(bad(format!(
                    "{flags_sym} says the objective has a second accumulator (B), but the \
                     module does not define {b}"
                )));
            }
        }
        Ok(Some(flags))
    }

    /// The flags that the global `sym` holds: `.u32 sym = N;` or `.b8 sym[4] = {…};`
    /// (little-endian bytes), as rustc writes a `u32` static.
    fn flags(&self, sym: &str) -> Result<SepFlags> {
        let missing = || {
            bad(format!(
                "the module defines a separable form but not its flags: export \
                 `.visible .global .align 4 .u32 {sym} = FLAGS;` (in Rust, \
                 `#[unsafe(no_mangle)] pub static {sym}: u32 = FLAGS;`)"
            ))
        };
        let (line_no, line) = self
            .text
            .lines()
            .enumerate()
            .find(|(_, l)| {
                let t = l.trim_start();
                (t.starts_with(".visible .global") || t.starts_with(".global"))
                    && t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
                        .any(|w| w == sym)
            })
            .ok_or_else(missing)?;
        let line_no = line_no + 1;
        let unreadable = || {
            bad(format!(
                "{sym} (line {line_no}) is not a u32 with a value: write it as \
                 `.visible .global .align 4 .u32 {sym} = FLAGS;`"
            ))
        };
        // Without an initialiser a global is zero.
        let (decl, init) = line
            .split_once('=')
            .unwrap_or((line.trim_end().trim_end_matches(';'), "0"));
        let init = init.trim().trim_end_matches(';').trim();
        let value: u64 = if decl.contains(".b8") {
            // `.b8 sym[4] = {b0, b1, b2, b3}`, the trailing zero bytes left out as rustc
            // leaves them out (`{4}`).
            if !decl.contains("[4]") {
                return Err(unreadable());
            }
            let inner = if init == "0" {
                "0"
            } else {
                init.strip_prefix('{')
                    .and_then(|r| r.strip_suffix('}'))
                    .ok_or_else(unreadable)?
            };
            let bytes: Vec<u64> = inner
                .split(',')
                .map(|b| b.trim().parse::<u64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| unreadable())?;
            if bytes.is_empty() || bytes.len() > 4 || bytes.iter().any(|&b| b > 255) {
                return Err(unreadable());
            }
            bytes.iter().rev().fold(0, |v, &b| v << 8 | b)
        } else if decl.contains(".u32") || decl.contains(".b32") || decl.contains(".s32") {
            let v = if let Some(h) = init.strip_prefix("0x").or(init.strip_prefix("0X")) {
                u64::from_str_radix(h, 16)
            } else {
                init.parse::<u64>()
            };
            v.map_err(|_| unreadable())?
        } else {
            return Err(unreadable());
        };
        u32::try_from(value)
            .ok()
            .and_then(SepFlags::from_bits)
            .ok_or_else(|| {
                bad(format!(
                    "{sym} (line {line_no}) is {value}: the flags are bits 0-1 B (0 none, 1 \
                     sum, 2 product), bit 2 prev, bit 3 prefix (0 to 15, without B = 3)"
                ))
            })
    }

    /// Where the module defines the function `sym` (see [`definition_in`]).
    fn definition(&self, sym: &str) -> Option<(usize, Vec<String>, Vec<String>)> {
        definition_in(&self.text, sym)
    }

    /// The module's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the module defines the objective in precision `p`, whole or separable.
    pub fn defines(&self, p: Precision) -> bool {
        self.separable(p).is_some()
            || match p {
                Precision::F32 => self.f32,
                Precision::F64 => self.f64,
            }
    }

    /// Whether the module defines the whole-vector objective in precision `p`
    /// ([`symbol`]), whatever its separable form.
    pub fn defines_whole(&self, p: Precision) -> bool {
        match p {
            Precision::F32 => self.f32,
            Precision::F64 => self.f64,
        }
    }

    /// The flags of the separable form in precision `p`, where the module defines it.
    pub fn separable(&self, p: Precision) -> Option<SepFlags> {
        self.sep[p as usize]
    }

    /// The precisions it defines, for messages: `f32`, `f64` or `f32 and f64`.
    pub fn precisions(&self) -> &'static str {
        match (self.defines(Precision::F32), self.defines(Precision::F64)) {
            (true, true) => "f32 and f64",
            (true, false) => "f32",
            _ => "f64",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

    fn def(sym: &str, ret: &str, params: &str) -> String {
        format!("{HEAD}.visible .func (.param .{ret} r) {sym}({params})\n{{\n\tret;\n}}\n")
    }

    #[test]
    fn a_module_defining_one_or_both_symbols_is_accepted() {
        let c = PtxCode::parse(def(
            "gpude_objective_f32",
            "b32",
            ".param .b64 x, .param .b32 d",
        ))
        .unwrap();
        assert!(c.defines(Precision::F32) && !c.defines(Precision::F64));
        assert_eq!(c.precisions(), "f32");
        // rustc's way of writing it, across lines, with both.
        let both = format!(
            "{HEAD}.visible .func  (.param .b32 func_retval0) gpude_objective_f32(\n\
             \t.param .b64 gpude_objective_f32_param_0,\n\t.param .b32 gpude_objective_f32_param_1\n)\n{{\n\tret;\n}}\n\
             .visible .func  (.param .b64 func_retval0) gpude_objective_f64(\n\
             \t.param .b64 p0,\n\t.param .b32 p1\n)\n{{\n\tret;\n}}\n"
        );
        let c = PtxCode::parse(both).unwrap();
        assert!(c.defines(Precision::F32) && c.defines(Precision::F64));
    }

    #[test]
    fn wrong_or_missing_symbols_are_named() {
        let e = PtxCode::parse(def(
            "gpude_objective_f64",
            "b32",
            ".param .b64 x, .param .b32 d",
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("gpude_objective_f64") && e.contains("line 4") && e.contains("(.b64)"),
            "{e}"
        );
        let e = PtxCode::parse(def("gpude_objective_f32", "b32", ".param .b64 x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("(.b64 x, .b32 d)"), "{e}");
        // Only declared, or under another name: not a definition.
        let e = PtxCode::parse(format!(
            "{HEAD}.extern .func (.param .b32 r) gpude_objective_f32(.param .b64 x, .param .b32 d);\n\
             .visible .func (.param .b32 r) my_gpude_objective_f32(.param .b64 x, .param .b32 d)\n{{\n\tret;\n}}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("defines neither"), "{e}");
    }

    /// A separable form in f32: its a-terms, finish, optional b-terms and flags line.
    fn separable(flags: &str, with_b: bool) -> String {
        let t = |name: &str| {
            format!(
                ".visible .func (.param .b32 r) {name}(.param .b32 acc, .param .b32 x0, \
                 .param .b32 x1, .param .b32 x2, .param .b32 x3, .param .b32 prev, \
                 .param .b32 base, .param .b32 j0, .param .b32 n, .param .b32 d)\n{{\n\tret;\n}}\n"
            )
        };
        let mut m = format!("{HEAD}{flags}\n");
        m += &t("gpude_sep_a_f32");
        if with_b {
            m += &t("gpude_sep_b_f32");
        }
        m += ".visible .func (.param .b32 r) gpude_sep_finish_f32(.param .b32 a, \
              .param .b32 b, .param .b32 d)\n{\n\tret;\n}\n";
        m
    }

    #[test]
    fn separable_flags_are_read_as_rustc_and_by_hand_write_them() {
        let prev = SepFlags {
            b: BKind::None,
            prev: true,
            prefix: false,
        };
        for line in [
            ".visible .global .align 4 .b8 gpude_sep_flags_f32[4] = {4};",
            ".visible .global .align 4 .b8 gpude_sep_flags_f32[4] = {4, 0, 0, 0};",
            ".visible .global .align 4 .u32 gpude_sep_flags_f32 = 4;",
            ".visible .global .align 4 .u32 gpude_sep_flags_f32 = 0x4;",
        ] {
            let c = PtxCode::parse(separable(line, false)).unwrap();
            assert_eq!(c.separable(Precision::F32), Some(prev), "{line}");
            assert_eq!(c.separable(Precision::F64), None);
            assert!(c.defines(Precision::F32) && !c.defines(Precision::F64));
        }
        // No initialiser: zero, no flags.
        let c = PtxCode::parse(separable(
            ".visible .global .align 4 .u32 gpude_sep_flags_f32;",
            false,
        ))
        .unwrap();
        assert_eq!(c.separable(Precision::F32), Some(SepFlags::default()));
        // A product B with prefix, and its b-terms.
        let c = PtxCode::parse(separable(
            ".visible .global .align 4 .b8 gpude_sep_flags_f32[4] = {10};",
            true,
        ))
        .unwrap();
        let f = c.separable(Precision::F32).unwrap();
        assert_eq!((f.b, f.prev, f.prefix), (BKind::Product, false, true));
    }

    #[test]
    fn bad_separable_forms_are_named() {
        let err = |m: String| PtxCode::parse(m).unwrap_err().to_string();
        // Bits no flags give.
        for (line, v) in [
            (
                ".visible .global .align 4 .u32 gpude_sep_flags_f32 = 3;",
                "3",
            ),
            (
                ".visible .global .align 4 .u32 gpude_sep_flags_f32 = 16;",
                "16",
            ),
            (
                ".visible .global .align 4 .b8 gpude_sep_flags_f32[4] = {0, 1};",
                "256",
            ),
        ] {
            let e = err(separable(line, true));
            assert!(
                e.contains("gpude_sep_flags_f32") && e.contains(&format!("is {v}:")),
                "{e}"
            );
        }
        // Unreadable flags.
        let e = err(separable(
            ".visible .global .align 4 .b8 gpude_sep_flags_f32[4] = {1, 2, 3, 4, 5};",
            false,
        ));
        assert!(e.contains("not a u32"), "{e}");
        let e = err(separable(
            ".visible .global .align 8 .f64 gpude_sep_flags_f32 = 1.0;",
            false,
        ));
        assert!(e.contains("not a u32"), "{e}");
        // No flags at all.
        let e = err(separable("", false));
        assert!(e.contains("not its flags"), "{e}");
        // B without its terms.
        let e = err(separable(
            ".visible .global .align 4 .u32 gpude_sep_flags_f32 = 1;",
            false,
        ));
        assert!(e.contains("gpude_sep_b_f32"), "{e}");
        // A wrong signature.
        let m = separable(
            ".visible .global .align 4 .u32 gpude_sep_flags_f32 = 0;",
            false,
        )
        .replace(".param .b32 n, .param .b32 d)", ".param .b32 n)");
        let e = err(m);
        assert!(
            e.contains("gpude_sep_a_f32") && e.contains(".b32 j0"),
            "{e}"
        );
        // A finish without a-terms.
        let m = separable(
            ".visible .global .align 4 .u32 gpude_sep_flags_f32 = 0;",
            false,
        )
        .replace("gpude_sep_a_f32", "my_terms");
        let e = err(m);
        assert!(e.contains("without gpude_sep_a_f32"), "{e}");
    }

    #[test]
    fn what_is_not_ptx_is_refused_without_echoing_it() {
        let e = PtxCode::parse("secret text, not PTX".into())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not a PTX module") && !e.contains("secret"),
            "{e}"
        );
        let e = PtxCode::parse(format!("{HEAD}// é\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 4") && e.contains("ASCII"), "{e}");
        let e = PtxCode::parse(" ".repeat(MAX_PTX_BYTES + 1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most"), "{e}");
    }

    #[test]
    fn an_expression_s_ptx_is_a_ptx_objective() {
        let e = gpude_expr::Expr::parse("sum(cos(x))").unwrap();
        for (p, ep) in [
            (Precision::F32, gpude_expr::Precision::F32),
            (Precision::F64, gpude_expr::Precision::F64),
        ] {
            assert_eq!(symbol(p), ep.function_name());
            let c = PtxCode::parse(e.ptx(ep)).unwrap();
            assert!(c.defines(p), "{p:?}");
        }
    }
}
