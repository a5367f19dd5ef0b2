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
    for st in statements(module) {
        let Some(k) = st.find(".func") else { continue };
        // `.visible .func`, `.extern .func`, `.weak .func` or a private `.func`.
        let lead = st[..k].trim();
        let Some(end) = st.find([';', '{']) else {
            continue;
        };
        let header = &st[k + 5..end];
        // `(.param .bW ret) name ( params )`
        let Some(h) = header.trim_start().strip_prefix('(') else {
            continue;
        };
        let Some(close) = h.find(')') else { continue };
        let ret: Vec<&str> = h[..close].split_whitespace().collect();
        let rest = h[close + 1..].trim_start();
        let name_end = rest
            .find(|c: char| !ident_char(c as u8))
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        let Some(plist) = rest[name_end..].trim_start().strip_prefix('(') else {
            continue;
        };
        let Some(pclose) = plist.find(')') else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let params: Vec<&str> = plist[..pclose]
            .split(',')
            .filter_map(|p| p.split_whitespace().last())
            .collect();
        let flat: Vec<&str> = header
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        protos.insert(name, format!(".extern .func {};", flat.join(" ")));
        if st.as_bytes()[end] != b'{'
            || !(lead == ".visible" || lead.is_empty() || lead == ".weak")
            || ret.len() != 3
        {
            continue;
        }
        let (Some((body, _)), Some(w)) = (braced(st, end), width(ret[1])) else {
            continue;
        };
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

/// The prefix of the module's private items copied into a kernel.
const COPY: &str = "gpude_inl";

/// The name of private item `w` copied by the pass tagged `tag`: [`COPY`], the tag, `_`
/// and the name.
fn copy_of(tag: &str, w: &str) -> String {
    format!("{COPY}{tag}_{w}")
}

/// A file-scope item of the source module that an inlined body may need: a constant table
/// (`.global`/`.const` with an initializer) or a function that is not `.visible`; each is
/// copied into the kernel under [`copy_of`] its name.
struct Private<'a> {
    /// Its prototype (functions) and its definition, as written.
    texts: Vec<&'a str>,
    /// A variable without an initializer (state, which a copy would not share).
    state: bool,
}

/// The file-scope statements of `module`: each with its text.
fn statements(module: &str) -> Vec<&str> {
    let b = module.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut depth, mut start) = (0usize, 0i32, None::<usize>);
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let c = b[i];
        if depth == 0 && start.is_none() && !c.is_ascii_whitespace() {
            start = Some(i);
        }
        if let Some(st) = start {
            let text = &module[st..i];
            let func = text.contains(".func") || text.contains(".entry");
            let header_line = [".version", ".target", ".address_size"]
                .iter()
                .any(|h| text.starts_with(h));
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 && func {
                        out.push(&module[st..=i]);
                        start = None;
                    }
                }
                b';' if depth == 0 => {
                    out.push(&module[st..=i]);
                    start = None;
                }
                b'\n' if depth == 0 && header_line => {
                    out.push(&module[st..i]);
                    start = None;
                }
                _ => {}
            }
        }
        i += 1;
    }
    out
}

/// The name a file-scope statement declares, and whether it is a function.
fn declared(stmt: &str) -> Option<(&str, bool)> {
    let head = stmt.split(['{', '=']).next()?;
    if let Some(k) = head.find(".func") {
        let h = head[k + 5..].trim_start();
        // `(.param … ret) name (…)` or `name (…)`.
        let h = match h.strip_prefix('(') {
            Some(r) => r[r.find(')')? + 1..].trim_start(),
            None => h,
        };
        let end = h.find(|c: char| !ident_char(c as u8)).unwrap_or(h.len());
        return (end > 0).then(|| (&h[..end], true));
    }
    let t = head.trim_start();
    let t = t.strip_prefix(".visible").unwrap_or(t).trim_start();
    if t.starts_with(".global") || t.starts_with(".const") {
        let name = idents(t.split(['[', ';']).next()?)
            .filter(|(reg, _)| !reg)
            .last()?
            .1;
        return Some((name, false));
    }
    None
}

/// The module's private items by name (see [`Private`]).
fn privates(module: &str) -> HashMap<&str, Private<'_>> {
    let mut out: HashMap<&str, Private<'_>> = HashMap::new();
    for st in statements(module) {
        let t = st.trim_start();
        if t.starts_with(".visible .func") || t.starts_with(".extern") || t.starts_with(".weak") {
            continue;
        }
        let Some((name, func)) = declared(t) else {
            continue;
        };
        if !func && t.starts_with(".visible") && !t.contains('=') {
            continue;
        }
        let p = out.entry(name).or_insert(Private {
            texts: Vec::new(),
            state: false,
        });
        p.texts.push(st);
        p.state |= !func && !st.contains('=');
    }
    out
}

/// The private items `text` refers to, with every item they refer to in turn; `None`
/// when one of them is state.
fn closure<'a>(text: &str, privates: &HashMap<&'a str, Private<'a>>) -> Option<Vec<&'a str>> {
    let mut seen: Vec<&'a str> = Vec::new();
    let mut todo: Vec<&str> = idents(text).filter(|(r, _)| !r).map(|(_, w)| w).collect();
    while let Some(w) = todo.pop() {
        let Some((&name, p)) = privates.get_key_value(w) else {
            continue;
        };
        if seen.contains(&name) {
            continue;
        }
        if p.state {
            return None;
        }
        seen.push(name);
        for t in &p.texts {
            todo.extend(idents(t).filter(|(r, _)| !r).map(|(_, w)| w));
        }
    }
    Some(seen)
}

/// The instructions replacing one call of `c` at site `site`: `args` are the caller's
/// stored operands with their widths (in parameter order), `dest` its result register.
/// `None` when the body is not self-contained.
fn inline_body(
    c: &Callee<'_>,
    tag: &str,
    site: usize,
    args: &[(u32, String)],
    dest: &str,
    private: &HashSet<&str>,
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
    // The pass's tag in every name: a second pass's sites and copies stay distinct.
    let site = format!("{tag}{site}");
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
        } else if private.contains(w) {
            Some(copy_of(tag, w))
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
        // Every other mention of a parameter or the result: not self-contained.
        let words: Vec<(bool, &str)> = idents(code).collect();
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
    inline_calls_tagged(kernel, module, names, "")
}

/// [`inline_calls`] for a further pass over a kernel already inlined into: `tag`
/// (letters) goes into the names of this pass's registers, labels and copies, so that
/// they differ from an earlier pass's.
pub fn inline_calls_tagged(
    kernel: &str,
    module: &str,
    names: &[&str],
    tag: &str,
) -> (String, usize) {
    let (defs, protos) = functions(module);
    let private = privates(module);
    let mut copies: Vec<&str> = Vec::new();
    let mut inlined_bodies: Vec<&str> = Vec::new();
    let wanted: HashSet<&str> = names.iter().copied().collect();
    let mut out = String::with_capacity(kernel.len() * 2);
    let mut called: HashSet<String> = HashSet::new();
    let mut at = 0;
    let mut sites = 0;
    // Call sequences are blocks of `.param` declarations, stores, one call and the load
    // of its result (`{ // callseq N` from LLVM, a bare `{` from gpude-expr); any other
    // block is kept and searched inside.
    let mut from = 0;
    while let Some(p) = kernel[from..].find('{') {
        let open = from + p;
        from = open + 1;
        let first = kernel[open + 1..]
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .find(|l| !l.is_empty());
        if !first.is_some_and(|l| l.starts_with(".param")) {
            continue;
        }
        let Some((block, after)) = braced(kernel, open) else {
            break;
        };
        // The closing comment (`} // callseq N`) stays on its line: skip it.
        let line_end = kernel[after..]
            .find('\n')
            .map_or(kernel.len(), |k| after + k);
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
            // The private items the body needs are copied (once per kernel), and what
            // they and the body call of the module's visible functions is declared.
            let needs = closure(c.body, &private)?;
            let needs_set: HashSet<&str> = needs.iter().copied().collect();
            let text = inline_body(c, tag, sites, &args, dest?, &needs_set)?;
            for n in needs {
                if !copies.contains(&n) {
                    copies.push(n);
                }
            }
            inlined_bodies.push(c.body);
            Some(text)
        })();
        if let Some(text) = replaced {
            sites += 1;
            out.push_str(&kernel[at..open]);
            out.push_str(&text);
            at = line_end;
            from = line_end;
        }
    }
    out.push_str(&kernel[at..]);
    // Visible functions the inlined bodies and the copies call need prototypes.
    let mut texts: Vec<&str> = inlined_bodies;
    for n in &copies {
        texts.extend(private[n].texts.iter().copied());
    }
    for t in &texts {
        for (reg, w) in idents(t) {
            if !reg
                && protos.contains_key(w)
                && !private.contains_key(w)
                && t.contains(&format!("{w},"))
            {
                called.insert(w.to_string());
            }
        }
    }
    let mut decls: Vec<String> = called
        .iter()
        .filter(|n| !declares(kernel, n))
        .filter_map(|n| protos.get(n.as_str()).cloned())
        .collect();
    decls.sort();
    // The copies, renamed: the functions' prototypes, the tables, then the definitions.
    let copy_name = |reg: bool, w: &str| -> Option<String> {
        (!reg && copies.contains(&w)).then(|| copy_of(tag, w))
    };
    let mut protos_c = Vec::new();
    let mut tables = Vec::new();
    let mut funcs = Vec::new();
    for n in &copies {
        for t in &private[n].texts {
            let r = rename(t, copy_name);
            match (declared(t).is_some_and(|(_, f)| f), t.contains('{')) {
                (true, true) => funcs.push(r),
                (true, false) => protos_c.push(r),
                (false, _) => tables.push(r),
            }
        }
    }
    // A function copied without a prototype of its own gets one from its header.
    for f in &funcs {
        let head = f.split('{').next().unwrap_or("").trim();
        let name = declared(head).map(|(n, _)| n);
        if !protos_c
            .iter()
            .any(|p: &String| declared(p).map(|(n, _)| n) == name)
        {
            protos_c.push(format!("{head};"));
        }
    }
    let added: Vec<String> = decls
        .into_iter()
        .chain(protos_c)
        .chain(tables)
        .chain(funcs)
        .collect();
    if !added.is_empty() {
        let first = out
            .find(".extern .func")
            .or_else(|| out.find(".visible .entry"))
            .or_else(|| out.find(".entry"))
            .unwrap_or(out.len());
        let text: String = added.iter().map(|p| format!("{p}\n\n")).collect();
        out.insert_str(first, &text);
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

.global .align 4 .u32 counter;

.visible .func  (.param .b32 func_retval0) reads_table(
\t.param .b32 reads_table_param_0,
\t.param .b32 reads_table_param_1
)
{
\t.reg .b32 \t%r<3>;
\tld.global.b32 \t%r1, [table];
\tst.param.b32 \t[func_retval0], %r1;
\tret;
}

.visible .func  (.param .b32 func_retval0) reads_state(
\t.param .b32 reads_state_param_0,
\t.param .b32 reads_state_param_1
)
{
\t.reg .b32 \t%r<3>;
\tld.global.b32 \t%r1, [counter];
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

    /// Module `a` with the entry of module `b` appended as a second kernel, `k2`.
    fn two_kernels(a: &str, b: &str) -> String {
        format!(
            "{a}{}",
            b[b.find(".visible .entry").unwrap()..].replace("entry k(", "entry k2(")
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

    /// A constant table the body reads is copied into the kernel, renamed, once.
    #[test]
    fn tables_are_copied_with_the_body() {
        let twice = two_kernels(&kernel("reads_table"), &kernel("reads_table"));
        let (out, n) = inline_calls(&twice, MODULE, &["reads_table"]);
        assert_eq!(n, 2, "{out}");
        assert_eq!(out.matches(".u32 gpude_inl_table = 3;").count(), 1, "{out}");
        assert!(
            out.contains("ld.global.b32 %inl0_r1, [gpude_inl_table];"),
            "{out}"
        );
        assert!(out.find("gpude_inl_table = 3").unwrap() < out.find(".visible .entry").unwrap());
    }

    /// A second pass (the maths after the objective) names its sites and copies apart
    /// from the first's, also for a private item of the same name.
    #[test]
    fn a_second_pass_names_its_sites_and_copies_apart() {
        let both = two_kernels(&kernel("reads_table"), &kernel("reads_table2"));
        let other = MODULE
            .replace("u32 table = 3", "u32 table = 5")
            .replace("reads_table(", "reads_table2(");
        let (once, n1) = inline_calls(&both, MODULE, &["reads_table"]);
        let (out, n2) = inline_calls_tagged(&once, &other, &["reads_table2"], "m");
        assert_eq!((n1, n2), (1, 1), "{out}");
        assert_eq!(out.matches(".u32 gpude_inl_table = 3;").count(), 1, "{out}");
        assert_eq!(
            out.matches(".u32 gpude_inlm_table = 5;").count(),
            1,
            "{out}"
        );
        assert!(out.contains("[gpude_inlm_table]"), "{out}");
        assert_eq!(out.matches("$Linl0_end:").count(), 1, "{out}");
        assert_eq!(out.matches("$Linlm0_end:").count(), 1, "{out}");
    }

    #[test]
    fn calls_that_are_not_self_contained_stay_calls() {
        // A module variable without an initializer (state) in the body.
        let (out, n) = inline_calls(&kernel("reads_state"), MODULE, &["reads_state"]);
        assert_eq!(n, 0);
        assert!(out.contains("call.uni (retval0), reads_state"), "{out}");
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
