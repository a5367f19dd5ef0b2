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
//! [`PtxCode::parse`] checks what can be checked before a GPU sees the module: its size,
//! that it is ASCII text, and that it defines at least one of the two symbols, each with
//! the right signature. Errors name the symbol, the line and what is expected; they never
//! repeat the module's text.

use crate::config::Precision;
use crate::error::{Error, Result};

/// The largest PTX module accepted, in bytes.
pub const MAX_PTX_BYTES: usize = 16 << 20;

/// A checked PTX module defining the objective in one or both precisions.
#[derive(Clone, Debug)]
pub struct PtxCode {
    text: String,
    f32: bool,
    f64: bool,
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
        };
        for p in [Precision::F32, Precision::F64] {
            if code.check_symbol(p)? {
                match p {
                    Precision::F32 => code.f32 = true,
                    Precision::F64 => code.f64 = true,
                }
            }
        }
        if !code.f32 && !code.f64 {
            return Err(bad(format!(
                "the module defines neither {} nor {}: export at least one, as \
                 `.visible .func (.param .b32 r) gpude_objective_f32(.param .b64 x, .param .b32 d)` \
                 (f32) or with `.param .b64 r` (f64)",
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
        let mut from = 0;
        while let Some(k) = self.text[from..].find(sym) {
            let at = from + k;
            from = at + sym.len();
            // The whole identifier, not a longer name that contains it.
            let before = self.text[..at].chars().next_back();
            let after = self.text[from..].chars().next();
            let ident = |c: Option<char>| {
                c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            };
            if ident(before) || ident(after) {
                continue;
            }
            // A definition: the line starts the declaration with `.visible .func` or
            // `.weak .func`, and a body follows.
            let line_start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
            let head = self.text[line_start..at].trim_start();
            let linked = head.starts_with(".visible .func") || head.starts_with(".weak .func");
            let Some(end) = self.text[from..].find(['{', ';']).map(|e| from + e) else {
                continue;
            };
            if !linked || !self.text[end..].starts_with('{') {
                continue;
            }
            let line = self.text[..at].matches('\n').count() + 1;
            let ret = head
                .find('(')
                .map_or(Vec::new(), |o| param_types(&head[o..]));
            let params = param_types(&self.text[from..end]);
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
            return Ok(true);
        }
        Ok(false)
    }

    /// The module's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the module defines the objective in precision `p`.
    pub fn defines(&self, p: Precision) -> bool {
        match p {
            Precision::F32 => self.f32,
            Precision::F64 => self.f64,
        }
    }

    /// The precisions it defines, for messages: `f32`, `f64` or `f32 and f64`.
    pub fn precisions(&self) -> &'static str {
        match (self.f32, self.f64) {
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
