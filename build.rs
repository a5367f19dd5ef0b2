//! Compiles the `device` crate to PTX with rustc's NVPTX backend and leaves it in
//! `OUT_DIR/gpude.ptx`, which `src/lib.rs` embeds.
//!
//! `GPUDE_PTX_ARCH` picks the architecture (default `sm_70`: PTX for Volta runs on every
//! later GPU, the driver compiling it at load time). The kernels need a nightly Rust: the
//! outer build's when it is one, else the nightly of `rust-toolchain.toml` through
//! rustup (a project on stable Rust that depends on gpude). Without either, or with
//! `GPUDE_PTX=none`, gpude builds without kernels: the CPU engine runs, the CUDA engine
//! says why it cannot.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

type Result<T> = std::result::Result<T, String>;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let arch = env::var("GPUDE_PTX_ARCH").unwrap_or_else(|_| "sm_70".to_string());
    if !arch.starts_with("sm_") || arch[3..].parse::<u32>().is_err() {
        return Err(format!(
            "GPUDE_PTX_ARCH={arch:?} is not a GPU architecture; use sm_NN (sm_70 or later)"
        ));
    }
    println!("cargo:rerun-if-env-changed=GPUDE_PTX_ARCH");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=rust-toolchain.toml");
    println!("cargo:rerun-if-changed=device/Cargo.toml");
    rerun_dir(&root.join("device/src"))?;

    println!("cargo:rerun-if-env-changed=GPUDE_PTX");
    let mut cmd = match env::var("GPUDE_PTX").as_deref() {
        Ok("none") => return without_kernels(&out, "GPUDE_PTX=none asked for none"),
        Ok("") | Ok("build") | Err(_) => match nightly_cargo(&root) {
            Ok(cmd) => cmd,
            Err(why) => return without_kernels(&out, &why),
        },
        Ok(other) => {
            return Err(format!(
                "GPUDE_PTX={other:?} is not a choice: `build` (the default: build the kernels) or `none` (no GPU kernels, the CPU engine only)"
            ));
        }
    };
    let target_dir = ptx_target_dir(&out);
    cmd.current_dir(&root)
        .args([
            "rustc",
            "--release",
            "--manifest-path",
            "device/Cargo.toml",
            "--target",
            "nvptx64-nvidia-cuda",
            "-Zbuild-std=core",
            "--crate-type",
            "cdylib",
            "--target-dir",
        ])
        .arg(&target_dir);
    // The nested build must not inherit the outer one's flags or wrappers (clippy's
    // driver, coverage flags, a host target).
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_MAKEFLAGS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUSTFLAGS", format!("-C target-cpu={arch}"));
    let output = cmd
        .output()
        .map_err(|e| format!("cannot start cargo for the PTX build: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "building the device crate for nvptx64-nvidia-cuda failed.\n\
             It needs the toolchain pinned in rust-toolchain.toml with the components \
             rust-src, llvm-bitcode-linker and llvm-tools: run `rustup toolchain install` \
             in the repository.\n--- cargo said ---\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let ptx = target_dir.join("nvptx64-nvidia-cuda/release/gpude_device.ptx");
    let text = std::fs::read_to_string(&ptx)
        .map_err(|e| format!("the PTX build gave no {}: {e}", ptx.display()))?;
    check_kernels(&text)?;
    check_params(&text)?;
    std::fs::write(out.join("gpude.ptx"), &text).map_err(|e| e.to_string())?;
    // One module per kernel, so that the driver compiles only the kernels a run uses,
    // and the maths module of expressions (not a kernel: the CUDA engine links it with
    // the external family's kernels and an expression's code).
    let mut modules = split_ptx(&text)?;
    raise_pipelined(&mut modules, &arch)?;
    check_external(&modules)?;
    check_separable(&modules)?;
    let mut table = String::from("&[\n");
    for (name, module) in &modules {
        let file = if name == registry::EXPR_MATHS_MODULE {
            format!("{name}.ptx")
        } else {
            format!("kernel_{name}.ptx")
        };
        std::fs::write(out.join(&file), module).map_err(|e| e.to_string())?;
        table +=
            &format!("    ({name:?}, include_str!(concat!(env!(\"OUT_DIR\"), \"/{file}\"))),\n");
    }
    table += "]\n";
    std::fs::write(out.join("kernels.rs"), table).map_err(|e| e.to_string())?;
    println!("cargo:rustc-env=GPUDE_PTX_ARCH={arch}");
    Ok(())
}

/// The cargo that builds the kernels: the outer build's own when its rustc is a nightly
/// (the kernels need `-Zbuild-std` and nightly features), else the nightly pinned in
/// `rust-toolchain.toml` through rustup, so that a project on stable Rust that depends
/// on gpude gets the kernels too. `Err` says why neither is there.
fn nightly_cargo(root: &Path) -> std::result::Result<Command, String> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let release = version
        .lines()
        .find_map(|l| l.strip_prefix("release: "))
        .unwrap_or("unknown")
        .to_string();
    if release.contains("nightly") || release.contains("-dev") {
        return Ok(Command::new(
            env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()),
        ));
    }
    let toolchain = std::fs::read_to_string(root.join("rust-toolchain.toml")).unwrap_or_default();
    let channel = toolchain
        .lines()
        .filter_map(|l| l.trim().strip_prefix("channel"))
        .filter_map(|rest| rest.trim().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"').to_string())
        .next()
        .ok_or("gpude's rust-toolchain.toml names no channel")?;
    let probe = Command::new("rustup")
        .args(["run", &channel, "rustc", "-vV"])
        .env_remove("RUSTUP_TOOLCHAIN")
        .output();
    let missing = match probe {
        Ok(o) if o.status.success() => {
            let mut cmd = Command::new("rustup");
            cmd.args(["run", &channel, "cargo"]);
            // Not the outer build's (stable) compiler.
            for var in ["RUSTC", "RUSTDOC", "RUSTUP_TOOLCHAIN"] {
                cmd.env_remove(var);
            }
            return Ok(cmd);
        }
        Ok(_) => format!("rustup has no {channel}"),
        Err(_) => "rustup is not on the PATH".to_string(),
    };
    // Installing the toolchain later builds the kernels on the next build.
    let rustup_home = env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
    if let Some(home) = rustup_home {
        println!(
            "cargo:rerun-if-changed={}",
            home.join("toolchains").display()
        );
    }
    Err(format!(
        "Rust {release} is not a nightly and {missing}; the kernels need {channel}, the nightly of gpude's rust-toolchain.toml: \
         `rustup toolchain install {channel} --component rust-src,llvm-bitcode-linker,llvm-tools` and build again \
         (GPUDE_PTX=none builds without them and without this warning)"
    ))
}

/// A build without the GPU kernels (the CPU engine only): an empty kernel table, and
/// a warning that says why. Opening the CUDA engine then says that this build has no
/// kernels.
fn without_kernels(out: &Path, why: &str) -> Result<()> {
    if env::var("GPUDE_PTX").as_deref() != Ok("none") {
        println!(
            "cargo:warning=gpude is built without its GPU kernels (the CPU engine runs): {why}"
        );
    }
    std::fs::write(out.join("kernels.rs"), "&[]\n").map_err(|e| e.to_string())?;
    println!("cargo:rustc-env=GPUDE_PTX_ARCH=none");
    Ok(())
}

/// Where the nested PTX build keeps its files: `ptx/` in the outer build's target folder,
/// so that every profile and command of the outer build (`check`, `clippy`, `test`,
/// `build --release`) shares one PTX build, which cargo then rebuilds only when the
/// device crate changes. The target folder is the first folder above `OUT_DIR` that
/// holds cargo's `CACHEDIR.TAG`; without one (an unusual layout), a folder in `OUT_DIR`.
/// The nested cargo locks its own folders there, never the outer build's.
fn ptx_target_dir(out: &Path) -> PathBuf {
    out.ancestors()
        .skip(1)
        .find(|d| d.join("CACHEDIR.TAG").is_file())
        .map(|d| d.join("ptx"))
        .unwrap_or_else(|| out.join("ptx-target"))
}

/// The registry of built-in functions and the kernels' names, shared with the device
/// crate (it uses nothing outside `core`).
#[allow(dead_code)]
mod registry {
    include!("device/src/registry.rs");
}

/// The kernels' parameter structs, shared with the device crate (it uses nothing
/// outside `core`).
#[allow(dead_code, unused_macros)]
mod abi {
    include!("device/src/abi.rs");
}

/// One `.param` of an entry point: its size and alignment in bytes.
fn param_layout(decl: &str) -> Option<(usize, usize)> {
    let words: Vec<&str> = decl.split_whitespace().collect();
    if words.first() != Some(&".param") {
        return None;
    }
    // `.param .align A .b8 name[N]`: an aggregate of N bytes.
    if words.get(1) == Some(&".align") {
        let align = words.get(2)?.parse().ok()?;
        let last = words.last()?;
        let size = last[last.find('[')? + 1..last.find(']')?].parse().ok()?;
        return Some((size, align));
    }
    // `.param .u64 [.ptr .align 1] name`: a scalar aligned to its size.
    let ty = words.get(1)?;
    let bits: usize = ty.get(2..)?.parse().ok()?;
    Some((bits / 8, bits / 8))
}

/// Every entry point's parameters must be the fields of its family's parameter struct
/// (`device/src/abi.rs`), as the host lays the struct out: the same number, and each
/// with the field's size and, aligned as PTX aligns parameters, its offset. The host
/// passes a launch's struct field by field, so a divergence would hand the kernel
/// wrong bytes; here it is a build error.
fn check_params(ptx: &str) -> Result<()> {
    let mut families = Vec::new();
    abi::for_each_params(|prefix, fields| families.push((prefix.concat(), fields)));
    let mut checked = 0;
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        let head = &rest[at..];
        let name = declared_name(head, ".entry").ok_or("unnamed .entry in the PTX")?;
        let open = head.find('(').ok_or("an .entry without parameters")?;
        let close = head.find(')').ok_or("an .entry without parameters")?;
        let decls: Vec<&str> = head[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .collect();
        rest = &head[close..];
        let Some(&(_, fields)) = families.iter().find(|(p, _)| name.starts_with(p.as_str())) else {
            return Err(format!(
                "kernel {name} has no parameter struct in device/src/abi.rs"
            ));
        };
        if decls.len() != fields.len() {
            return Err(format!(
                "kernel {name} takes {} parameters, its parameter struct has {} fields",
                decls.len(),
                fields.len()
            ));
        }
        let mut offset = 0usize;
        for (decl, field) in decls.iter().zip(fields.iter()) {
            let (size, align) = param_layout(decl)
                .ok_or_else(|| format!("kernel {name}: cannot read the parameter `{decl}`"))?;
            offset = offset.next_multiple_of(align);
            if size != field.size || offset != field.offset {
                return Err(format!(
                    "kernel {name}: parameter `{decl}` ({size} bytes at offset {offset}) \
                     is not the field `{}` ({} bytes at offset {})",
                    field.name, field.size, field.offset
                ));
            }
            offset += size;
        }
        checked += 1;
    }
    if checked == 0 {
        return Err("the PTX has no kernels".into());
    }
    Ok(())
}

/// Every kernel key of the registry must have its entry point in the PTX, and the PTX
/// must have no DE entry point the registry does not name: a missing kernel is a build
/// error, not a run-time one.
fn check_kernels(ptx: &str) -> Result<()> {
    let entries: std::collections::BTreeSet<String> = ptx
        .lines()
        .filter_map(|l| declared_name(l, ".entry"))
        .collect();
    let mut expected = std::collections::BTreeSet::new();
    let mut name_of = |key: registry::KernelKey| {
        let mut buf = [0u8; registry::KERNEL_NAME_MAX];
        expected.insert(key.name_into(&mut buf).to_string());
    };
    registry::for_each_kernel_key(&mut name_of);
    registry::for_each_external_key(&mut name_of);
    registry::for_each_separable_key(&mut name_of);
    registry::for_each_host_key(&mut name_of);
    registry::for_each_adaptive_key(|key| {
        let mut buf = [0u8; registry::KERNEL_NAME_MAX];
        expected.insert(key.name_into(&mut buf).to_string());
    });
    let missing: Vec<&String> = expected.difference(&entries).collect();
    if !missing.is_empty() {
        return Err(format!(
            "the registry names {} kernels that the device crate does not define: {}",
            missing.len(),
            missing
                .iter()
                .take(8)
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let unnamed: Vec<&String> = entries
        .iter()
        .filter(|e| (e.starts_with("de_") || e.starts_with("adaptive_")) && !expected.contains(*e))
        .collect();
    if !unnamed.is_empty() {
        return Err(format!(
            "the device crate defines kernels that the registry does not name: {}",
            unnamed
                .iter()
                .take(8)
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for kernel in ["evaluate_f32", "evaluate_f64"] {
        if !entries.contains(kernel) {
            return Err(format!("the PTX lacks the kernel {kernel}"));
        }
    }
    Ok(())
}

fn rerun_dir(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            rerun_dir(&path)?;
        } else {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Ok(())
}

/// A top-level item of a PTX file.
struct Item {
    text: String,
    kind: Kind,
    name: String,
}

#[derive(PartialEq)]
enum Kind {
    Header,
    FuncDecl,
    FuncDef,
    Entry,
    Global,
}

/// The name declared by a `.func` or `.entry` line: the identifier before its
/// parameter list (after the optional return-value list).
fn declared_name(text: &str, keyword: &str) -> Option<String> {
    let rest = &text[text.find(keyword)? + keyword.len()..];
    let rest = rest.trim_start();
    let rest = if rest.starts_with('(') {
        &rest[rest.find(')')? + 1..]
    } else {
        rest
    };
    let name: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The name a global's declaration defines (`.global .align 4 .b8 name[32] = …`).
fn global_name(text: &str) -> Option<&str> {
    let t = text
        .split_whitespace()
        .find(|t| !t.starts_with('.') && !t.starts_with(|c: char| c.is_ascii_digit()))?;
    let end = t.find(['[', ';', '=']).unwrap_or(t.len());
    (end > 0).then(|| &t[..end])
}

/// Every external kernel's module declares the objective it calls (`tests/external.rs`
/// checks the signatures and the maths module).
fn check_external(modules: &[(String, String)]) -> Result<()> {
    let mut found = 0;
    for (name, m) in modules {
        if !name.contains(registry::EXTERNAL) {
            continue;
        }
        found += 1;
        let precision = if name.contains("_f32_") {
            registry::KernelPrecision::F32
        } else {
            registry::KernelPrecision::F64
        };
        let sym = registry::objective_symbol(precision);
        if !m.lines().any(|l| {
            l.starts_with(".extern .func") && declared_name(l, ".func").as_deref() == Some(sym)
        }) {
            return Err(format!(
                "the module of {name} does not declare the objective `.extern .func {sym}`"
            ));
        }
    }
    if found == 0 {
        return Err("the PTX has no kernels of the external family".into());
    }
    Ok(())
}

/// Every separable kernel's module declares the symbols of the separable form it calls
/// (`.extern .func`), and nothing else is left to link.
fn check_separable(modules: &[(String, String)]) -> Result<()> {
    let mut found = 0;
    for (name, m) in modules {
        if !name.contains(registry::SEPARABLE) {
            continue;
        }
        found += 1;
        let precision = if name.contains("_f32_") {
            registry::KernelPrecision::F32
        } else {
            registry::KernelPrecision::F64
        };
        let syms = registry::separable_symbols(precision);
        for sym in syms {
            if !m.lines().any(|l| {
                l.starts_with(".extern .func") && declared_name(l, ".func").as_deref() == Some(sym)
            }) {
                return Err(format!(
                    "the module of {name} does not declare `.extern .func {sym}`"
                ));
            }
        }
        if let Some(other) = m
            .lines()
            .filter(|l| l.starts_with(".extern .func"))
            .filter_map(|l| declared_name(l, ".func"))
            .find(|n| !syms.contains(&n.as_str()))
        {
            return Err(format!(
                "the module of {name} declares `.extern .func {other}`, which no module \
                 linked with it defines"
            ));
        }
    }
    if found == 0 {
        return Err("the PTX has no kernels of the separable family".into());
    }
    Ok(())
}

/// Writes `.target sm_80` (`registry::PIPELINED_CC`) in the modules of the pipelined
/// kernels (`cp.async`) when the build's architecture `arch` is older; the other
/// modules keep `arch`, so that they still load on older GPUs.
fn raise_pipelined(modules: &mut [(String, String)], arch: &str) -> Result<()> {
    let cc: u32 = arch[3..]
        .parse()
        .map_err(|_| format!("bad architecture {arch}"))?;
    if cc >= registry::PIPELINED_CC {
        return Ok(());
    }
    let (from, to) = (
        format!(".target {arch}"),
        format!(".target sm_{}", registry::PIPELINED_CC),
    );
    let mut raised = 0;
    for (name, module) in modules.iter_mut() {
        if registry::is_pipelined(name) {
            if !module.contains(&from) {
                return Err(format!("{name}: no `{from}` line to raise"));
            }
            *module = module.replacen(&from, &to, 1);
            raised += 1;
        }
    }
    if raised == 0 {
        return Err("no pipelined kernel: nothing raised to sm_80".to_string());
    }
    Ok(())
}

/// Splits PTX into one self-contained module per `.entry`: the header, every global,
/// and the `.func`s the entry calls (transitively).
fn split_ptx(text: &str) -> Result<Vec<(String, String)>> {
    let mut items: Vec<Item> = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for line in text.lines() {
        let t = line.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with("//")) {
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        let done = depth == 0
            && (t.ends_with(';')
                || t.ends_with('}')
                || t.starts_with(".version")
                || t.starts_with(".target")
                || t.starts_with(".address_size"));
        if !done {
            continue;
        }
        let head = cur.trim_start();
        let (kind, name) = if head.starts_with(".version")
            || head.starts_with(".target")
            || head.starts_with(".address_size")
        {
            (Kind::Header, String::new())
        } else if head.contains(".entry") && head.contains('{') {
            (
                Kind::Entry,
                declared_name(head, ".entry").ok_or("unnamed .entry in the PTX")?,
            )
        } else if head.starts_with(".func")
            || head.starts_with(".visible .func")
            || head.starts_with(".weak .func")
            || head.starts_with(".extern .func")
        {
            let name = declared_name(head, ".func").ok_or("unnamed .func in the PTX")?;
            (
                if head.contains('{') {
                    Kind::FuncDef
                } else {
                    Kind::FuncDecl
                },
                name,
            )
        } else {
            (Kind::Global, String::new())
        };
        items.push(Item {
            text: std::mem::take(&mut cur),
            kind,
            name,
        });
    }
    if depth != 0 || !cur.trim().is_empty() {
        return Err("the PTX ended inside an item; cannot split it".into());
    }
    let funcs: Vec<&Item> = items
        .iter()
        .filter(|i| matches!(i.kind, Kind::FuncDecl | Kind::FuncDef))
        .collect();
    // The functions (defined or only declared) reachable from `roots`.
    let reachable = |roots: Vec<&str>| -> Vec<String> {
        let mut need: Vec<String> = Vec::new();
        let mut stack = roots;
        while let Some(body) = stack.pop() {
            for d in &funcs {
                if !need.contains(&d.name) && body.contains(d.name.as_str()) {
                    need.push(d.name.clone());
                    if let Some(def) = funcs
                        .iter()
                        .find(|f| f.kind == Kind::FuncDef && f.name == d.name)
                    {
                        stack.push(def.text.as_str());
                    }
                }
            }
        }
        need
    };
    // A module of the header, the globals (only those its code names when `prune`), the
    // reachable functions and the entry, in the order of the PTX.
    let module = |need: &[String], entry: Option<&Item>, prune: bool| -> String {
        let code: Vec<&str> = items
            .iter()
            .filter(|i| {
                matches!(i.kind, Kind::FuncDef) && need.contains(&i.name)
                    || entry.is_some_and(|e| std::ptr::eq(*i, e))
            })
            .map(|i| i.text.as_str())
            .collect();
        let mut m = String::new();
        for i in &items {
            let keep = match i.kind {
                Kind::Header => true,
                // The dynamic shared memory a kernel declares (`.extern .shared`) goes only
                // into the modules whose code names it: the others stay as they were.
                Kind::Global => {
                    let shared = i.text.trim_start().starts_with(".extern .shared");
                    !(prune || shared)
                        || global_name(&i.text).is_none_or(|n| code.iter().any(|c| c.contains(n)))
                }
                Kind::FuncDecl | Kind::FuncDef => need.contains(&i.name),
                Kind::Entry => entry.is_some_and(|e| std::ptr::eq(i, e)),
            };
            if keep {
                m.push_str(&i.text);
                m.push('\n');
            }
        }
        m
    };
    let mut modules = Vec::new();
    for entry in items.iter().filter(|i| i.kind == Kind::Entry) {
        let need = reachable(vec![entry.text.as_str()]);
        // The external and separable families are linked with other modules: it keeps only the globals
        // it uses, so that nothing it carries can clash with theirs.
        let prune =
            entry.name.contains(registry::EXTERNAL) || entry.name.contains(registry::SEPARABLE);
        modules.push((entry.name.clone(), module(&need, Some(entry), prune)));
    }
    let maths: Vec<&Item> = funcs
        .iter()
        .copied()
        .filter(|f| f.kind == Kind::FuncDef && f.name.starts_with("gpude_expr_"))
        .collect();
    if maths.is_empty() {
        return Err("the PTX defines none of the expression maths (gpude_expr_*)".into());
    }
    let need = reachable(maths.iter().map(|f| f.text.as_str()).collect());
    modules.push((
        registry::EXPR_MATHS_MODULE.to_string(),
        module(&need, None, true),
    ));
    if modules.is_empty() {
        return Err("the PTX has no kernels".into());
    }
    Ok(modules)
}
