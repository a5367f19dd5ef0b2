//! Inlining a linked module's functions into a kernel's PTX.
//!
//! The driver's JIT linker compiles each PTX module on its own, and ptxas keeps every
//! call to another module's function as an ABI call: the caller saves its live registers
//! around it (under the kernels' register cap, to local memory), and nothing is scheduled
//! across it. A separable objective's terms are called once per lane and round, so the
//! calls cost more than the terms. This module copies the bodies of a module's functions
//! into the kernel at each call site, before the link, as a compiler's inliner would:
//!
//! - the callee's registers and labels get names of their own per site;
//! - the arguments the caller stores to its `.param` variables are copied to fresh
//!   registers, which the callee's `ld.param` reads then read;
//! - the callee's `st.param` of its result becomes a `mov` to the caller's destination,
//!   and each `ret` a branch to the end of the inlined block.
//!
//! The instructions and their order are the callee's, so the results are the same bits.
//! A function is inlined only when its body is self-contained: it may call other
//! functions (their prototypes are added to the kernel, and the link resolves them) but
//! not read the module's variables, keep local arrays, take a parameter's address or call
//! indirectly. The others stay calls, and a kernel whose inlined text the JIT refuses is
//! linked with its calls. Checked by the GPU tests: every separable run equals the CPU
//! engine's bit for bit.

use std::collections::{HashMap, HashSet};

/// A function definition of the source module.
struct Callee<'a> {
    /// Width in bits of the result parameter, and its name.
    ret: (u32, &'a str),
    /// The parameters' names, in order.
    params: Vec<&'a str>,
    /// The body between its braces.
    body: &'a str,
}

/// Special registers, which keep their names.
fn special(ident: &str) -> bool {
    const SPECIAL: [&str; 23] = [
        "tid",
        "ntid",
        "laneid",
        "warpid",
        "nwarpid",
        "ctaid",
        "nctaid",
        "smid",
        "nsmid",
        "gridid",
        "clock",
        "clock64",
        "clock_hi",
        "globaltimer",
        "globaltimer_lo",
        "globaltimer_hi",
        "dynamic_smem_size",
        "total_smem_size",
        "aggr_smem_size",
        "clusterid",
        "nclusterid",
        "is_explicit_cluster",
        "current_graph_exec",
    ];
    SPECIAL.contains(&ident)
        || ident.starts_with("lanemask_")
        || ident.starts_with("envreg")
        || ident.starts_with("cluster_")
        || ident.starts_with("reserved_smem")
        || (ident.starts_with("pm") && ident[2..].bytes().all(|b| b.is_ascii_digit()))
}

fn ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The identifiers of `text` (register names without their `%`), each with whether a
/// `%` precedes it.
fn idents(text: &str) -> impl Iterator<Item = (bool, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            if ident_char(b) && !(b.is_ascii_digit()) {
                let reg = i > 0 && bytes[i - 1] == b'%';
                let start = i;
                while i < bytes.len() && ident_char(bytes[i]) {
                    i += 1;
                }
                return Some((reg, &text[start..i]));
            }
            if b.is_ascii_digit() {
                // A number (or a literal such as 0f3F800000): not an identifier.
                while i < bytes.len() && ident_char(bytes[i]) {
                    i += 1;
                }
                continue;
            }
            i += 1;
        }
        None
    })
}

/// `text` with every identifier `f` maps renamed (comments dropped).
fn rename(text: &str, f: impl Fn(bool, &str) -> Option<String>) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if ident_char(b) {
            let start = i;
            while i < bytes.len() && ident_char(bytes[i]) {
                i += 1;
            }
            let word = &text[start..i];
            let reg = start > 0 && bytes[start - 1] == b'%';
            match (b.is_ascii_digit(), f(reg, word)) {
                (false, Some(new)) => out.push_str(&new),
                _ => out.push_str(word),
            }
            continue;
        }
        out.push(b as char);
        i += 1;
    }
    out
}

/// The text between the brace at `open` and its match, and the index after the match.
fn braced(text: &str, open: usize) -> Option<(&str, usize)> {
    let mut depth = 0usize;
    for (k, b) in text.as_bytes()[open..].iter().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[open + 1..open + k], open + k + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// The width in bits of a `.param .bN`/`.fN`/`.uN`/`.sN` type word.
fn width(ty: &str) -> Option<u32> {
    let t = ty.trim_start_matches('.');
    let (k, n) = t.split_at(1);
    matches!(k, "b" | "f" | "u" | "s")
        .then(|| n.parse().ok())
        .flatten()
}

/// The function definitions of `module` (`.func` with one result), by name, and the
/// prototype text of every function it declares or defines (for `.extern` copies).
fn functions(module: &str) -> (HashMap<&str, Callee<'_>>, HashMap<&str, String>) {
    let mut defs = HashMap::new();
    let mut protos = HashMap::new();
    let mut at = 0;
    while let Some(p) = module[at..].find(".func") {
        let start = at + p;
        at = start + 5;
        // The directive's line start: `.visible .func`, `.extern .func`, `.weak .func`.
        let line_start = module[..start].rfind('\n').map_or(0, |k| k + 1);
        let lead = module[line_start..start].trim();
        let end_decl = match module[start..].find([';', '{']) {
            Some(k) => start + k,
            None => break,
        };
        let header = &module[start + 5..end_decl];
        // `(.param .bW ret) name ( params )`
        let h = header.trim_start();
        let Some(h) = h.strip_prefix('(') else {
            continue;
        };
        let Some(close) = h.find(')') else { continue };
        let ret: Vec<&str> = h[..close].split_whitespace().collect();
        let rest = h[close + 1..].trim_start();
        let name_end = rest
            .find(|c: char| !ident_char(c as u8))
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        let plist = rest[name_end..].trim_start();
        let Some(plist) = plist.strip_prefix('(') else {
            continue;
        };
        let Some(pclose) = plist.find(')') else {
            continue;
        };
        let params: Vec<&str> = plist[..pclose]
            .split(',')
            .filter_map(|p| p.split_whitespace().last())
            .collect();
        if name.is_empty() {
            continue;
        }
        let flat: Vec<&str> = header
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        protos.insert(name, format!(".extern .func {};", flat.join(" ")));
        let defined = module.as_bytes()[end_decl] == b'{';
        if !defined {
            continue;
        }
        let Some((body, after)) = braced(module, end_decl) else {
            break;
        };
        at = after;
        if !(lead == ".visible" || lead.is_empty() || lead == ".weak") || ret.len() != 3 {
            continue;
        }
        let Some(w) = width(ret[1]) else { continue };
        defs.insert(
            name,
            Callee {
                ret: (w, ret[2]),
                params,
                body,
            },
        );
    }
    (defs, protos)
}

/// The names `module` declares at file scope as variables (`.global`, `.const`, …).
fn variables(module: &str) -> HashSet<&str> {
    let mut depth = 0i32;
    let mut out = HashSet::new();
    for line in module.lines() {
        let t = line.trim();
        if depth == 0
            && [
                ".global",
                ".const",
                ".visible .global",
                ".visible .const",
                ".extern .global",
            ]
            .iter()
            .any(|p| t.starts_with(p))
            && let Some((_, name)) = idents(t.split(['=', ';', '[']).next().unwrap_or(""))
                .filter(|(reg, _)| !reg)
                .last()
        {
            out.insert(name);
        }
        depth += t.matches('{').count() as i32 - t.matches('}').count() as i32;
    }
    out
}

/// The instructions replacing one call of `c` at site `site`: `args` are the caller's
/// stored operands with their widths (in parameter order), `dest` its result register.
/// `None` when the body is not self-contained.
fn inline_body(
    c: &Callee<'_>,
    site: usize,
    args: &[(u32, String)],
    dest: &str,
    globals: &HashSet<&str>,
) -> Option<String> {
    if args.len() != c.params.len() {
        return None;
    }
    let body = c.body;
    // Local arrays (addressed through their names) and shared memory stay with calls.
    if body.contains("prototype") || body.contains(".shared") || body.contains(".local") {
        return None;
    }
    // Labels defined in the body get a per-site name.
    let mut locals: HashSet<&str> = HashSet::new();
    for line in body.lines() {
        let t = line.trim();
        if let Some(l) = t.split("//").next().map(str::trim)
            && let Some(l) = l.strip_suffix(':')
            && l.bytes().all(ident_char)
        {
            locals.insert(l);
        }
    }
    let params: HashMap<&str, usize> = c.params.iter().enumerate().map(|(k, p)| (*p, k)).collect();
    let end = format!("$Linl{site}_end");
    let mut out = String::new();
    out.push_str(&format!("\t{{ // inlined call {site}\n"));
    for (k, (w, src)) in args.iter().enumerate() {
        out.push_str(&format!("\t.reg .b{w} %inl{site}_a{k};\n"));
        out.push_str(&format!("\tmov.b{w} %inl{site}_a{k}, {};\n", src.trim()));
    }
    let renamed = |reg: bool, w: &str| -> Option<String> {
        if reg {
            (!special(w)).then(|| format!("inl{site}_{w}"))
        } else if locals.contains(w) {
            Some(format!("{w}_inl{site}"))
        } else {
            None
        }
    };
    for line in body.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        if code.is_empty() {
            continue;
        }
        let code = &code.split_whitespace().collect::<Vec<_>>().join(" ");
        // Every other mention of a parameter, the result or a module variable: not
        // self-contained.
        let words: Vec<(bool, &str)> = idents(code).collect();
        if words.iter().any(|(reg, w)| !reg && globals.contains(w)) {
            return None;
        }
        if code.starts_with("ld.param") {
            // ld.param.T dst, [name];
            let (op, rest) = code.split_once(char::is_whitespace)?;
            let (dst, src) = rest.split_once(',')?;
            let name = src.trim().trim_end_matches(';').trim();
            let name = name.strip_prefix('[')?.strip_suffix(']')?.trim();
            let Some(&k) = params.get(name) else {
                // A nested call's result: kept.
                out.push('\t');
                out.push_str(&rename(code, renamed));
                out.push('\n');
                continue;
            };
            let w = args[k].0;
            let ty = op.rsplit('.').next()?;
            if width(ty)? != w {
                return None;
            }
            out.push_str(&format!(
                "\tmov.b{w} {}, %inl{site}_a{k};\n",
                rename(dst.trim(), renamed)
            ));
            continue;
        }
        if code.starts_with("st.param") {
            // st.param.T [ret], src;
            let (_, rest) = code.split_once(char::is_whitespace)?;
            let (to, src) = rest.split_once(',')?;
            let to = to.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
            if to != c.ret.1 {
                // A nested call's argument: kept (its block declares the parameter).
                out.push('\t');
                out.push_str(&rename(code, renamed));
                out.push('\n');
                continue;
            }
            let src = src.trim().trim_end_matches(';').trim();
            out.push_str(&format!(
                "\tmov.b{} {dest}, {};\n",
                c.ret.0,
                rename(src, renamed)
            ));
            continue;
        }
        if words
            .iter()
            .any(|(reg, w)| !reg && (params.contains_key(w) || *w == c.ret.1))
        {
            return None;
        }
        if code == "ret;" {
            out.push_str(&format!("\tbra.uni {end};\n"));
            continue;
        }
        if code.starts_with("call") && !code.contains(',') {
            return None;
        }
        out.push('\t');
        out.push_str(&rename(code, renamed));
        out.push('\n');
    }
    out.push_str(&format!("{end}:\n\t}} // inlined call {site}\n"));
    Some(out)
}

/// `kernel` with the calls to `names` (functions `module` defines) replaced by their
/// bodies wherever they are self-contained, and `.extern` prototypes of what the inlined
/// bodies call; and how many calls were inlined. The kernel's text is otherwise kept.
pub fn inline_calls(kernel: &str, module: &str, names: &[&str]) -> (String, usize) {
    let (defs, protos) = functions(module);
    let globals = variables(module);
    let wanted: HashSet<&str> = names.iter().copied().collect();
    let mut out = String::with_capacity(kernel.len() * 2);
    let mut called: HashSet<String> = HashSet::new();
    let mut at = 0;
    let mut sites = 0;
    while let Some(p) = kernel[at..].find("{ // callseq") {
        let open = at + p;
        let Some((block, after)) = braced(kernel, open) else {
            break;
        };
        out.push_str(&kernel[at..open]);
        // The closing comment (`} // callseq N`) stays on its line: skip it.
        let line_end = kernel[after..]
            .find('\n')
            .map_or(kernel.len(), |k| after + k);
        let tail = &kernel[after..line_end];
        let replaced = (|| {
            let mut widths: HashMap<&str, u32> = HashMap::new();
            let mut stores: HashMap<&str, String> = HashMap::new();
            let mut target = None;
            let mut arg_names: Vec<&str> = Vec::new();
            let mut ret_name = "";
            let mut dest = None;
            for line in block.lines() {
                let code = line.split("//").next().unwrap_or("").trim();
                if let Some(decl) = code.strip_prefix(".param") {
                    let d: Vec<&str> = decl.trim_end_matches(';').split_whitespace().collect();
                    if d.len() != 2 {
                        return None;
                    }
                    widths.insert(d[1], width(d[0])?);
                } else if code.starts_with("st.param") {
                    let (_, rest) = code.split_once(char::is_whitespace)?;
                    let (to, src) = rest.split_once(',')?;
                    let to = to.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
                    stores.insert(to, src.trim().trim_end_matches(';').trim().to_string());
                } else if let Some(call) =
                    code.strip_prefix("call.uni").or(code.strip_prefix("call"))
                {
                    // (retval0), name, (param0, …);
                    let call = call.trim().trim_end_matches(';');
                    let (ret, rest) = call.split_once(',')?;
                    ret_name = ret.trim().strip_prefix('(')?.strip_suffix(')')?.trim();
                    let (name, args) = rest.split_once(',')?;
                    target = Some(name.trim());
                    let args = args.trim().strip_prefix('(')?.strip_suffix(')')?;
                    arg_names = args.split(',').map(str::trim).collect();
                } else if code.starts_with("ld.param") {
                    let (_, rest) = code.split_once(char::is_whitespace)?;
                    let (d, src) = rest.split_once(',')?;
                    let src = src.trim().trim_end_matches(';').trim();
                    if src.strip_prefix('[')?.strip_suffix(']')?.trim() != ret_name {
                        return None;
                    }
                    dest = Some(d.trim());
                } else if !code.is_empty() {
                    return None;
                }
            }
            let target = target?;
            if !wanted.contains(target) {
                return None;
            }
            let c = defs.get(target)?;
            if c.ret.0 != *widths.get(ret_name)? {
                return None;
            }
            let args: Vec<(u32, String)> = arg_names
                .iter()
                .map(|a| Some((*widths.get(a)?, stores.get(a)?.clone())))
                .collect::<Option<_>>()?;
            let text = inline_body(c, sites, &args, dest?, &globals)?;
            for (reg, w) in idents(c.body) {
                if !reg && protos.contains_key(w) && c.body.contains(&format!("{w},")) {
                    called.insert(w.to_string());
                }
            }
            Some(text)
        })();
        match replaced {
            Some(text) => {
                sites += 1;
                out.push_str(&text);
                at = line_end;
            }
            None => {
                out.push_str(&kernel[open..after]);
                out.push_str(tail);
                at = line_end;
            }
        }
    }
    out.push_str(&kernel[at..]);
    // Prototypes of the functions the inlined bodies call, before the first use.
    let mut missing: Vec<&String> = called
        .iter()
        .filter(|n| !declares(kernel, n))
        .filter_map(|n| protos.get(n.as_str()))
        .collect();
    missing.sort();
    if !missing.is_empty() {
        let first = out
            .find(".extern .func")
            .or_else(|| out.find(".visible .entry"))
            .or_else(|| out.find(".entry"))
            .unwrap_or(out.len());
        let decls: String = missing.iter().map(|p| format!("{p}\n\n")).collect();
        out.insert_str(first, &decls);
    }
    (out, sites)
}

/// Does `ptx` declare or define function `name` (on the directive's line, as the
/// compilers and [`inline_calls`] write them)?
fn declares(ptx: &str, name: &str) -> bool {
    ptx.lines().any(|l| {
        let t = l.trim_start();
        (t.starts_with(".extern .func")
            || t.starts_with(".visible .func")
            || t.starts_with(".func"))
            && idents(t).any(|(reg, w)| !reg && w == name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "
.version 7.0
.target sm_70
.address_size 64

.visible .global .align 4 .u32 table = 3;

.extern .func  (.param .b32 func_retval0) helper
(
\t.param .b32 helper_param_0
)
;

.visible .func  (.param .b32 func_retval0) twice(
\t.param .b32 twice_param_0,
\t.param .b32 twice_param_1
)
{
\t.reg .pred \t%p<2>;
\t.reg .b32 \t%r<4>;
\tld.param.b32 \t%r1, [twice_param_0];
\tld.param.b32 \t%r2, [twice_param_1];
\tsetp.eq.b32 \t%p1, %r2, 0;
\t@%p1 bra \t$L__BB0_2;
\tadd.rn.f32 \t%r1, %r1, %r1;
$L__BB0_2:
\tst.param.b32 \t[func_retval0], %r1;
\tret;
}

.visible .func  (.param .b32 func_retval0) reads_table(
\t.param .b32 reads_table_param_0
)
{
\t.reg .b32 \t%r<3>;
\tld.global.b32 \t%r1, [table];
\tst.param.b32 \t[func_retval0], %r1;
\tret;
}
";

    fn kernel(callee: &str) -> String {
        format!(
            "
.version 7.0
.target sm_70
.address_size 64

.extern .func  (.param .b32 func_retval0) {callee}
(
\t.param .b32 {callee}_param_0,
\t.param .b32 {callee}_param_1
)
;

.visible .entry k(
\t.param .u64 k_param_0
)
{{
\t.reg .b32 \t%r<9>;
\tmov.b32 \t%r1, %tid.x;
\t{{ // callseq 7, 0
\t.param .b32 \tparam0;
\t.param .b32 \tparam1;
\t.param .b32 \tretval0;
\tst.param.b32 \t[param1], 0f3F800000;
\tst.param.b32 \t[param0], %r1;
\tcall.uni (retval0), {callee}, (param0, param1);
\tld.param.b32 \t%r2, [retval0];
\t}} // callseq 7
\tret;
}}
"
        )
    }

    #[test]
    fn a_call_becomes_the_body_with_its_own_names() {
        let (out, n) = inline_calls(&kernel("twice"), MODULE, &["twice"]);
        assert_eq!(n, 1, "{out}");
        assert!(!out.contains("call.uni"), "{out}");
        assert!(out.contains("mov.b32 %inl0_a0, %r1;"), "{out}");
        assert!(out.contains("mov.b32 %inl0_a1, 0f3F800000;"), "{out}");
        assert!(out.contains("mov.b32 %inl0_r1, %inl0_a0;"), "{out}");
        assert!(out.contains("@%inl0_p1 bra $L__BB0_2_inl0;"), "{out}");
        assert!(out.contains("$L__BB0_2_inl0:"), "{out}");
        assert!(out.contains("mov.b32 %r2, %inl0_r1;"), "{out}");
        assert!(out.contains("bra.uni $Linl0_end;"), "{out}");
        // The special register keeps its name; the kernel's own text is kept.
        assert!(out.contains("mov.b32 \t%r1, %tid.x;"), "{out}");
    }

    #[test]
    fn calls_that_are_not_self_contained_stay_calls() {
        // A module variable in the body.
        let k = kernel("reads_table").replace("param1", "param0");
        let (out, n) = inline_calls(&k, MODULE, &["reads_table"]);
        assert_eq!(n, 0);
        assert!(out.contains("call.uni (retval0), reads_table"), "{out}");
        // A local array.
        let with_local = MODULE.replace(
            "\t.reg .pred \t%p<2>;",
            "\t.local .align 4 .b8 \t__local_depot0[16];\n\t.reg .pred \t%p<2>;",
        );
        let (_, n) = inline_calls(&kernel("twice"), &with_local, &["twice"]);
        assert_eq!(n, 0);
        // A name not asked for, or not defined.
        let (_, n) = inline_calls(&kernel("twice"), MODULE, &["other"]);
        assert_eq!(n, 0);
        let (_, n) = inline_calls(&kernel("helper"), MODULE, &["helper"]);
        assert_eq!(n, 0);
    }
}
