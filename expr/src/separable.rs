//! The separable form of an expression: `F(A, B, D)` with `A` a sum and `B` a sum or a
//! product of per-component terms, evaluated in the lanes' order (see the crate
//! documentation, *The separable form*, and `gpude_device::separable` for the contract).
//!
//! The shape analysis works on the checked [`Program`]: the top-level block may use at
//! most two different reductions (identical ones, written twice, count once), and each
//! reduction's body may read only `x[j]`, `x[j-1]`, `j`, `D`, literals and `cumsum(x)`.
//! The bodies and the top-level block are renumbered into blocks of their own (the
//! reductions' values become the registers 0 = A and 1 = B of the final step), which
//! the CPU ([`Separable`]) and the PTX ([`SeparableExpr::ptx`]) both execute one
//! instruction at a time with the operations of [`crate::eval`] and [`crate::ptx`].

use crate::Precision;
use crate::eval::pure;
use crate::ir::{Inst, Op, Program, RedKind, Reduction, Reg};
use crate::ops::ExprReal;
use crate::ptx::{Copy, PTX_HEADER, Part, block, externs, source_comment, ty};
use core::fmt;
use core::fmt::Write;
use gpude_device::separable::{BKind, SepFlags, Separable};

/// Why an expression has no separable form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotSeparable {
    reason: String,
}

impl NotSeparable {
    fn new(reason: impl Into<String>) -> Self {
        NotSeparable {
            reason: reason.into(),
        }
    }

    /// The reason, in words.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for NotSeparable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the expression is not separable: {}", self.reason)
    }
}

impl std::error::Error for NotSeparable {}

/// One accumulator's terms: the body of a reduction, its registers renumbered
/// `0 .. body.len()` (instruction `i` writes register `i`) and its running sums
/// `0 .. n_cums`.
#[derive(Clone, Debug, PartialEq)]
struct Term {
    kind: RedKind,
    /// The first j of the range: 1 when the term reads `x[j-1]`, else 0.
    lo: u32,
    body: Vec<Inst>,
    term: Reg,
    n_cums: u32,
}

/// An expression in the separable form, `f(x) = finish(A, B, D)`: see the crate
/// documentation. It implements the device crate's [`Separable`] trait for `f32` and
/// `f64` (the CPU engine's side) and gives the PTX module of the GPU's side
/// ([`SeparableExpr::ptx`]); both execute the same instructions in the same order.
#[derive(Clone, Debug)]
pub struct SeparableExpr {
    source: String,
    /// The whole program: its literals, and the maths it calls.
    program: Program,
    flags: SepFlags,
    a: Option<Term>,
    b: Option<Term>,
    /// The final step: registers 0 = A and 1 = B, then one per instruction.
    finish: Vec<Inst>,
    result: Reg,
    n_finish: u32,
}

/// The operation `op` with its registers renamed by `reg` and its running sum by `cum`;
/// `None` where `reg` knows a register not.
fn rename(op: Op, reg: impl Fn(Reg) -> Option<Reg>, cum: impl FnOnce(u32) -> u32) -> Option<Op> {
    Some(match op {
        Op::Lit(_) | Op::Dim | Op::Index | Op::Load(_) | Op::Reduce(_) => op,
        Op::Neg(a) => Op::Neg(reg(a)?),
        Op::Add(a, b) => Op::Add(reg(a)?, reg(b)?),
        Op::Sub(a, b) => Op::Sub(reg(a)?, reg(b)?),
        Op::Mul(a, b) => Op::Mul(reg(a)?, reg(b)?),
        Op::Div(a, b) => Op::Div(reg(a)?, reg(b)?),
        Op::Sqrt(a) => Op::Sqrt(reg(a)?),
        Op::Abs(a) => Op::Abs(reg(a)?),
        Op::Min(a, b) => Op::Min(reg(a)?, reg(b)?),
        Op::Max(a, b) => Op::Max(reg(a)?, reg(b)?),
        Op::Cmp(c, a, b) => Op::Cmp(c, reg(a)?, reg(b)?),
        Op::Select(c, a, b) => Op::Select(reg(c)?, reg(a)?, reg(b)?),
        Op::Call(f, a) => Op::Call(f, reg(a)?),
        Op::Pow(a, b) => Op::Pow(reg(a)?, reg(b)?),
        Op::CumSum(s, a) => Op::CumSum(cum(s), reg(a)?),
    })
}

fn lookup(map: &[(Reg, Reg)], r: Reg) -> Option<Reg> {
    map.iter().find(|(from, _)| *from == r).map(|&(_, to)| to)
}

/// Whether two reductions compute the same value: the same kind and range, and the same
/// instructions up to the names of their registers and running sums.
fn same(x: &Reduction, y: &Reduction) -> bool {
    if x.kind != y.kind
        || x.lo != y.lo
        || x.hi != y.hi
        || x.body.len() != y.body.len()
        || x.cums.len() != y.cums.len()
    {
        return false;
    }
    let mut regs: Vec<(Reg, Reg)> = Vec::with_capacity(y.body.len());
    let mut cums: Vec<(u32, u32)> = Vec::new();
    for (a, b) in x.body.iter().zip(&y.body) {
        let mut cum_pair = None;
        let renamed = rename(
            b.op,
            |r| lookup(&regs, r),
            |s| match (a.op, lookup(&cums, s)) {
                (_, Some(to)) => to,
                (Op::CumSum(t, _), None) => {
                    cum_pair = Some((s, t));
                    t
                }
                _ => u32::MAX,
            },
        );
        if renamed != Some(a.op) {
            return false;
        }
        cums.extend(cum_pair);
        regs.push((b.dst, a.dst));
    }
    lookup(&regs, y.term) == Some(x.term)
}

/// The body of `r` as a [`Term`], or why it cannot be one.
fn term(r: &Reduction) -> Result<Term, NotSeparable> {
    let what = if r.kind == RedKind::Sum {
        "sum"
    } else {
        "prod"
    };
    if r.hi > 0 {
        return Err(NotSeparable::new(format!(
            "a {what} reads x[j+{}]; a separable term reads only x[j] and x[j-1]",
            r.hi
        )));
    }
    if r.lo > 1 {
        return Err(NotSeparable::new(format!(
            "a {what} reads x[j-{}]; a separable term reads only x[j] and x[j-1]",
            r.lo
        )));
    }
    let mut regs: Vec<(Reg, Reg)> = Vec::with_capacity(r.body.len());
    let mut body = Vec::with_capacity(r.body.len());
    let mut n_cums = 0u32;
    for ins in &r.body {
        if let Op::CumSum(_, a) = ins.op {
            let of_x = r
                .body
                .iter()
                .any(|i| i.dst == a && matches!(i.op, Op::Load(0)));
            if !of_x {
                return Err(NotSeparable::new(format!(
                    "a {what} takes the cumsum of something other than x (only cumsum(x), \
                     the running sum of the components, is separable)"
                )));
            }
            if r.lo > 0 {
                return Err(NotSeparable::new(format!(
                    "a {what} reads x[j-1] and cumsum(x): its running sum starts at x[1], \
                     not at x[0]"
                )));
            }
        }
        let dst = body.len() as Reg;
        let op = rename(
            ins.op,
            |q| lookup(&regs, q),
            |_| {
                n_cums += 1;
                n_cums - 1
            },
        )
        .ok_or_else(|| NotSeparable::new("a register is read before it is written"))?;
        regs.push((ins.dst, dst));
        body.push(Inst { dst, op });
    }
    let term =
        lookup(&regs, r.term).ok_or_else(|| NotSeparable::new("the term is not computed"))?;
    Ok(Term {
        kind: r.kind,
        lo: r.lo,
        body,
        term,
        n_cums,
    })
}

/// The separable form of `p`, or why it has none.
pub(crate) fn analyse(p: &Program, source: &str) -> Result<SeparableExpr, NotSeparable> {
    // The different reductions, in the order they first appear, and the class of each
    // reduction's register.
    let mut classes: Vec<u32> = Vec::new();
    let mut of_reg: Vec<(Reg, usize)> = Vec::new();
    for ins in &p.top {
        let Op::Reduce(i) = ins.op else { continue };
        let r = &p.reductions[i as usize];
        let c = match classes
            .iter()
            .position(|&k| same(&p.reductions[k as usize], r))
        {
            Some(c) => c,
            None => {
                classes.push(i);
                classes.len() - 1
            }
        };
        of_reg.push((ins.dst, c));
    }
    if classes.len() > 2 {
        return Err(NotSeparable::new(format!(
            "it uses {} different reductions; the separable form has two accumulators",
            classes.len()
        )));
    }
    let terms = classes
        .iter()
        .map(|&k| term(&p.reductions[k as usize]))
        .collect::<Result<Vec<Term>, NotSeparable>>()?;
    let kinds: Vec<RedKind> = terms.iter().map(|t| t.kind).collect();
    // Which class is A and which is B (`None`: unused).
    let (ia, ib, bkind) = match kinds[..] {
        [] => (None, None, BKind::None),
        [RedKind::Sum] => (Some(0), None, BKind::None),
        [RedKind::Prod] => (None, Some(0), BKind::Product),
        [RedKind::Sum, RedKind::Sum] => (Some(0), Some(1), BKind::Sum),
        [RedKind::Sum, RedKind::Prod] => (Some(0), Some(1), BKind::Product),
        [RedKind::Prod, RedKind::Sum] => (Some(1), Some(0), BKind::Product),
        _ => {
            return Err(NotSeparable::new(
                "it uses two different products; the separable form has one",
            ));
        }
    };
    let reads = |f: &dyn Fn(&Op) -> bool| terms.iter().any(|t| t.body.iter().any(|i| f(&i.op)));
    let flags = SepFlags {
        b: bkind,
        prev: reads(&|op| *op == Op::Load(-1)),
        prefix: reads(&|op| matches!(op, Op::CumSum(..))),
    };
    // The final step: each reduction's register becomes A (0) or B (1).
    let mut regs: Vec<(Reg, Reg)> = of_reg
        .iter()
        .map(|&(r, c)| (r, if Some(c) == ia { 0 } else { 1 }))
        .collect();
    let mut finish = Vec::with_capacity(p.top.len());
    for ins in &p.top {
        if let Op::Reduce(_) = ins.op {
            continue;
        }
        let dst = 2 + finish.len() as Reg;
        let op = rename(ins.op, |q| lookup(&regs, q), |s| s)
            .ok_or_else(|| NotSeparable::new("a register is read before it is written"))?;
        regs.push((ins.dst, dst));
        finish.push(Inst { dst, op });
    }
    let result =
        lookup(&regs, p.result).ok_or_else(|| NotSeparable::new("the result is not computed"))?;
    let mut terms: Vec<Option<Term>> = terms.into_iter().map(Some).collect();
    let mut take = |i: Option<usize>| i.and_then(|i| terms[i].take());
    let (a, b) = (take(ia), take(ib));
    Ok(SeparableExpr {
        source: source.to_string(),
        program: p.clone(),
        flags,
        a,
        b,
        n_finish: 2 + finish.len() as u32,
        finish,
        result,
    })
}

/// Registers on the stack up to this many, else on the heap.
const STACK_REGS: usize = 256;
/// Running sums on the stack up to this many.
const STACK_CUMS: usize = 8;

impl SeparableExpr {
    /// The text the expression was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// What the objective uses (which accumulators, `prev`, the prefix sums).
    pub fn flags(&self) -> SepFlags {
        self.flags
    }

    /// The smallest dimension for which every reduction has a term (as
    /// [`crate::Expr::min_dim`]).
    pub fn min_dim(&self) -> u32 {
        self.program.min_dim()
    }

    /// The PTX symbols of the maths the module calls (to be linked with it).
    pub fn external_symbols(&self, p: Precision) -> Vec<String> {
        crate::external_symbols(&self.program, p)
    }

    /// `acc` after the terms of `t` for the components `j0 .. j0 + n` (at most four).
    #[allow(clippy::too_many_arguments)]
    fn chunk<T: ExprReal>(
        &self,
        t: &Term,
        mut acc: T,
        v: [T; 4],
        prev: T,
        base: T,
        j0: u32,
        n: u32,
        d: u32,
    ) -> T {
        let lits = &self.program.lits;
        let (mut stack, mut heap) = ([T::ZERO; STACK_REGS], Vec::new());
        let regs: &mut [T] = if t.body.len() <= STACK_REGS {
            &mut stack[..t.body.len()]
        } else {
            heap.resize(t.body.len(), T::ZERO);
            &mut heap
        };
        // Each running sum starts from the components before the chunk.
        let (mut cstack, mut cheap) = ([base; STACK_CUMS], Vec::new());
        let cums: &mut [T] = if t.n_cums as usize <= STACK_CUMS {
            &mut cstack[..t.n_cums as usize]
        } else {
            cheap.resize(t.n_cums as usize, base);
            &mut cheap
        };
        for k in 0..n.min(4) {
            let j = j0.wrapping_add(k);
            if j < t.lo {
                continue;
            }
            for ins in &t.body {
                let val = match ins.op {
                    Op::Load(0) => v[k as usize],
                    Op::Load(-1) if k == 0 => prev,
                    Op::Load(-1) => v[k as usize - 1],
                    Op::Index => T::of_u32(j),
                    Op::Dim => T::of_u32(d),
                    Op::CumSum(c, a) => {
                        let s = cums[c as usize] + regs[a as usize];
                        cums[c as usize] = s;
                        s
                    }
                    op => pure(lits, op, |r| regs[r as usize]),
                };
                regs[ins.dst as usize] = val;
            }
            let x = regs[t.term as usize];
            acc = match t.kind {
                RedKind::Sum => acc + x,
                RedKind::Prod => acc * x,
            };
        }
        acc
    }

    /// The module of the GPU's side: `gpude_sep_a_T`, `gpude_sep_b_T` (when B is used),
    /// `gpude_sep_finish_T` and `gpude_sep_flags_T` for `T` = `p`, with the parameter
    /// lists of `gpude_device::separable`. The maths it calls are `.extern`, as in
    /// [`crate::Expr::ptx`].
    pub fn ptx(&self, p: Precision) -> String {
        let mut s = String::new();
        s.push_str("//\n// Generated by gpude-expr (separable form).\n");
        s.push_str(&source_comment(&self.source));
        s.push_str("//\n");
        s.push_str(PTX_HEADER);
        s.push('\n');
        externs(&mut s, &self.program, p);
        let _ = writeln!(
            s,
            "\n// B: {:?}, prev: {}, prefix: {}\n\
             .visible .global .align 4 .u32 {} = {};\n",
            self.flags.b,
            self.flags.prev,
            self.flags.prefix,
            p.sep_flags_name(),
            self.flags.bits()
        );
        self.chunk_function(&mut s, p, p.sep_a_name(), self.a.as_ref());
        if let Some(b) = &self.b {
            s.push('\n');
            self.chunk_function(&mut s, p, p.sep_b_name(), Some(b));
        }
        s.push('\n');
        self.finish_function(&mut s, p);
        s
    }

    /// `acc` after the terms of one chunk, components in ascending order, each
    /// component's body a copy tagged `(k<m>)`. Without terms (A unused) it returns
    /// `acc`.
    fn chunk_function(&self, s: &mut String, prec: Precision, name: &str, t: Option<&Term>) {
        let ty = ty(prec);
        let (b, tt) = (ty.b, ty.t);
        let _ = writeln!(
            s,
            ".visible .func (.param .{b} r) {name}(.param .{b} acc, .param .{b} x0, \
             .param .{b} x1, .param .{b} x2, .param .{b} x3, .param .{b} prev, \
             .param .{b} base, .param .b32 j0, .param .b32 n, .param .b32 d)\n{{"
        );
        let _ = writeln!(s, "\t.reg .{tt} %acc;");
        let Some(t) = t else {
            let _ = writeln!(
                s,
                "\t// no terms\n\tld.param.{b} %acc, [acc];\n\tst.param.{b} [r], %acc;\n\tret;\n}}"
            );
            return;
        };
        // %r0 = d, %r1 = j, %r2 = n, %r3 = j0; %v0..%v3 = the components, %v4 = prev.
        s.push_str("\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n");
        let _ = writeln!(s, "\t.reg .{tt} {}<{}>;", ty.f, t.body.len().max(1));
        let _ = writeln!(s, "\t.reg .{tt} %v<5>;");
        if t.n_cums > 0 {
            let _ = writeln!(s, "\t.reg .{tt} {}<{}>;", ty.c, t.n_cums);
        }
        let _ = writeln!(s, "\tld.param.{b} %acc, [acc];");
        for k in 0..4 {
            let _ = writeln!(s, "\tld.param.{b} %v{k}, [x{k}];");
        }
        let _ = writeln!(
            s,
            "\tld.param.{b} %v4, [prev];\n\tld.param.b32 %r3, [j0];\n\t\
             ld.param.b32 %r2, [n];\n\tld.param.b32 %r0, [d];"
        );
        for c in 0..t.n_cums {
            let _ = writeln!(
                s,
                "\t// cumsum #{c} starts from the components before the chunk\n\t\
                 ld.param.{b} {}{c}, [base];",
                ty.c
            );
        }
        let op = match t.kind {
            RedKind::Sum => "add",
            RedKind::Prod => "mul",
        };
        for k in 0..4u32 {
            let _ = writeln!(
                s,
                "\t// component j0 + {k}\n\tsetp.le.u32 %p0, %r2, {k};\n\t@%p0 bra $Ldone;\n\t\
                 add.s32 %r1, %r3, {k};"
            );
            if t.lo > 0 {
                let _ = writeln!(
                    s,
                    "\t// the range starts at j = {lo}\n\tsetp.lt.u32 %p0, %r1, {lo};\n\t\
                     @%p0 bra $Lk{k}_end;",
                    lo = t.lo
                );
            }
            let copy = Copy {
                part: Part::Chunk(k),
                table: None,
            };
            block(s, &self.program, prec, &t.body, copy, &[]);
            let _ = writeln!(
                s,
                "\t// accumulate r{term}\n\t{op}.rn.{tt} %acc, %acc, {f}{term};",
                f = ty.f,
                term = t.term
            );
            if t.lo > 0 {
                let _ = writeln!(s, "$Lk{k}_end:");
            }
        }
        let _ = writeln!(s, "$Ldone:\n\tst.param.{b} [r], %acc;\n\tret;\n}}");
    }

    /// `finish(a, b, d)`: the top-level block with the reductions' values read from `a`
    /// (register 0) and `b` (register 1).
    fn finish_function(&self, s: &mut String, prec: Precision) {
        let ty = ty(prec);
        let (b, tt, f) = (ty.b, ty.t, ty.f);
        let _ = writeln!(
            s,
            ".visible .func (.param .{b} r) {}(.param .{b} a, .param .{b} b, .param .b32 d)\n{{",
            prec.sep_finish_name()
        );
        s.push_str("\t.reg .pred %p<2>;\n\t.reg .b32 %r<1>;\n");
        let _ = writeln!(s, "\t.reg .{tt} {f}<{}>;", self.n_finish);
        let _ = writeln!(
            s,
            "\t// r0 = A, r1 = B\n\tld.param.{b} {f}0, [a];\n\tld.param.{b} {f}1, [b];\n\t\
             ld.param.b32 %r0, [d];"
        );
        block(s, &self.program, prec, &self.finish, Copy::ONLY, &[]);
        let _ = writeln!(s, "\tst.param.{b} [r], {f}{};\n\tret;\n}}", self.result);
    }

    /// The compiled form, one line per instruction, for reading and audit: the flags,
    /// each accumulator's term and the final step.
    pub fn ir(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "flags: B {:?}, prev {}, prefix {}",
            self.flags.b, self.flags.prev, self.flags.prefix
        );
        for (name, t) in [("A", &self.a), ("B", &self.b)] {
            let Some(t) = t else { continue };
            let k = if t.kind == RedKind::Sum {
                "sum"
            } else {
                "prod"
            };
            let _ = writeln!(s, "{name}: {k} for j >= {}", t.lo);
            for c in 0..t.n_cums {
                let _ = writeln!(s, "    cumsum #{c} = base");
            }
            for ins in &t.body {
                let _ = writeln!(s, "    r{} = {}", ins.dst, ins.op);
            }
            let _ = writeln!(s, "    term r{}", t.term);
        }
        let _ = writeln!(s, "finish: r0 = A, r1 = B");
        for ins in &self.finish {
            let _ = writeln!(s, "r{} = {}", ins.dst, ins.op);
        }
        let _ = writeln!(s, "result r{}", self.result);
        s
    }
}

impl<T: ExprReal> Separable<T> for SeparableExpr {
    fn flags(&self) -> SepFlags {
        self.flags
    }

    fn a(&self, acc: T, v: [T; 4], prev: T, base: T, j0: u32, n: u32, d: u32) -> T {
        match &self.a {
            Some(t) => self.chunk(t, acc, v, prev, base, j0, n, d),
            None => acc,
        }
    }

    fn b(&self, acc: T, v: [T; 4], prev: T, base: T, j0: u32, n: u32, d: u32) -> T {
        match &self.b {
            Some(t) => self.chunk(t, acc, v, prev, base, j0, n, d),
            None => acc,
        }
    }

    fn finish(&self, a: T, b: T, d: u32) -> T {
        let lits = &self.program.lits;
        let (mut stack, mut heap) = ([T::ZERO; STACK_REGS], Vec::new());
        let n = self.n_finish as usize;
        let regs: &mut [T] = if n <= STACK_REGS {
            &mut stack[..n]
        } else {
            heap.resize(n, T::ZERO);
            &mut heap
        };
        regs[0] = a;
        regs[1] = b;
        for ins in &self.finish {
            let val = match ins.op {
                Op::Dim => T::of_u32(d),
                op => pure(lits, op, |r| regs[r as usize]),
            };
            regs[ins.dst as usize] = val;
        }
        regs[self.result as usize]
    }
}
