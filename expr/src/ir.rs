//! The checked program: a short list of single-operation instructions per block, one
//! block for the whole expression and one per reduction (the loop body).
//!
//! Lowering from the syntax tree is where the context rules are checked (`x` and `j`
//! only inside a reduction, no reduction inside another, `cumsum` only inside a
//! reduction and not inside itself). Every instruction writes a fresh register (the
//! registers of a loop body are rewritten on each iteration); each instruction is one
//! IEEE operation, a load, a call, or a reduction loop, so that the CPU interpreter
//! ([`crate::eval`]) and the PTX generator ([`crate::ptx`]) map it one to one.

use crate::error::{ErrorKind, ParseError};
use crate::parser::{BinOp, Func, Kind, Node, Transcendental};
use crate::{MAX_INT_POWER, MAX_OFFSET};
use core::fmt;

pub type Reg = u32;

/// Comparisons, each true or false as IEEE (and Rust) define them: false when either
/// side is NaN, except `Ne`, which is then true.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// Literal number `lits[i]`.
    Lit(u32),
    /// `D` as a float (round to nearest).
    Dim,
    /// `j` as a float (round to nearest).
    Index,
    /// `x[j + k]`.
    Load(i32),
    Neg(Reg),
    Add(Reg, Reg),
    Sub(Reg, Reg),
    Mul(Reg, Reg),
    Div(Reg, Reg),
    Sqrt(Reg),
    Abs(Reg),
    /// `if b < a { b } else { a }` (as `Real::min`).
    Min(Reg, Reg),
    /// `if b > a { b } else { a }` (as `Real::max`).
    Max(Reg, Reg),
    /// 1 if the comparison holds, else 0.
    Cmp(Cmp, Reg, Reg),
    /// `if c != 0 { a } else { b }` (NaN counts as true).
    Select(Reg, Reg, Reg),
    Call(Transcendental, Reg),
    Pow(Reg, Reg),
    /// The value of reduction `i` (its loop runs here).
    Reduce(u32),
    /// `state[i] = state[i] + a`, and the new state is the value.
    CumSum(u32, Reg),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inst {
    pub dst: Reg,
    pub op: Op,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedKind {
    Sum,
    Prod,
}

/// A loop `for j in lo .. D − hi` (ascending) of `acc = acc ⊕ term(j)`, `acc` starting
/// at 0 (sum) or 1 (product); `cums` are the running sums of the `cumsum`s in its
/// body, set to 0 before the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    pub kind: RedKind,
    pub lo: u32,
    pub hi: u32,
    pub body: Vec<Inst>,
    pub term: Reg,
    pub cums: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Literals: each rounded once from its text to f64 and to f32.
    pub lits: Vec<(f64, f32)>,
    pub top: Vec<Inst>,
    pub reductions: Vec<Reduction>,
    pub result: Reg,
    pub n_regs: u32,
    pub n_cums: u32,
}

impl Op {
    /// The registers the operation reads.
    pub fn operands(&self) -> Vec<Reg> {
        match *self {
            Op::Lit(_) | Op::Dim | Op::Index | Op::Load(_) | Op::Reduce(_) => Vec::new(),
            Op::Neg(a) | Op::Sqrt(a) | Op::Abs(a) | Op::Call(_, a) | Op::CumSum(_, a) => vec![a],
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Mul(a, b)
            | Op::Div(a, b)
            | Op::Min(a, b)
            | Op::Max(a, b)
            | Op::Cmp(_, a, b)
            | Op::Pow(a, b) => vec![a, b],
            Op::Select(c, a, b) => vec![c, a, b],
        }
    }
}

/// For each instruction of a loop body, whether its value depends on j or D and on
/// nothing else but literals (not on x nor on a running sum): the same for every point
/// of a given dimension, but not a constant.
pub fn j_only(body: &[Inst]) -> Vec<bool> {
    dependence(body)
        .into_iter()
        .map(|d| d == Some(true))
        .collect()
}

/// For each instruction of a loop body: `None` if it depends on x or a running sum,
/// `Some(false)` for a constant, `Some(true)` if it depends on j or D (and constants).
pub fn dependence(body: &[Inst]) -> Vec<Option<bool>> {
    let mut by_reg: Vec<(Reg, Option<bool>)> = Vec::with_capacity(body.len());
    for ins in body {
        let dep = match ins.op {
            Op::Lit(_) => Some(false),
            Op::Dim | Op::Index => Some(true),
            Op::Load(_) | Op::CumSum(..) | Op::Reduce(_) => None,
            op => op.operands().into_iter().try_fold(false, |acc, r| {
                let d = by_reg.iter().find(|(q, _)| *q == r).and_then(|(_, d)| *d)?;
                Some(acc || d)
            }),
        };
        by_reg.push((ins.dst, dep));
    }
    by_reg.into_iter().map(|(_, d)| d).collect()
}

impl Program {
    /// The smallest D for which every reduction has at least one term.
    pub fn min_dim(&self) -> u32 {
        self.reductions
            .iter()
            .map(|r| r.lo + r.hi + 1)
            .max()
            .unwrap_or(1)
    }

    /// Transcendentals the program calls (each once, in a fixed order), and whether it
    /// calls `pow`.
    pub fn calls(&self) -> (Vec<Transcendental>, bool) {
        let all = || {
            self.top
                .iter()
                .chain(self.reductions.iter().flat_map(|r| r.body.iter()))
        };
        let fs = Transcendental::ALL
            .into_iter()
            .filter(|f| all().any(|i| matches!(i.op, Op::Call(g, _) if g == *f)))
            .collect();
        let pow = all().any(|i| matches!(i.op, Op::Pow(..)));
        (fs, pow)
    }
}

struct Red {
    name: &'static str,
    min_off: i32,
    max_off: i32,
    cums: Vec<u32>,
}

struct Lower {
    lits: Vec<(f64, f32)>,
    cur: Vec<Inst>,
    reductions: Vec<Reduction>,
    n_regs: u32,
    n_cums: u32,
    red: Option<Red>,
    in_cumsum: bool,
}

pub fn lower(root: &Node) -> Result<Program, ParseError> {
    let mut l = Lower {
        lits: Vec::new(),
        cur: Vec::new(),
        reductions: Vec::new(),
        n_regs: 0,
        n_cums: 0,
        red: None,
        in_cumsum: false,
    };
    let result = l.node(root)?;
    Ok(Program {
        lits: l.lits,
        top: l.cur,
        reductions: l.reductions,
        result,
        n_regs: l.n_regs,
        n_cums: l.n_cums,
    })
}

impl Lower {
    fn emit(&mut self, op: Op) -> Reg {
        let dst = self.n_regs;
        self.n_regs += 1;
        self.cur.push(Inst { dst, op });
        dst
    }

    fn lit(&mut self, v64: f64, v32: f32) -> Reg {
        let i = match self
            .lits
            .iter()
            .position(|&(a, b)| a.to_bits() == v64.to_bits() && b.to_bits() == v32.to_bits())
        {
            Some(i) => i,
            None => {
                self.lits.push((v64, v32));
                self.lits.len() - 1
            }
        };
        self.emit(Op::Lit(i as u32))
    }

    fn node(&mut self, n: &Node) -> Result<Reg, ParseError> {
        Ok(match &n.kind {
            Kind::Num { v64, v32, .. } => self.lit(*v64, *v32),
            Kind::Pi => self.lit(core::f64::consts::PI, core::f32::consts::PI),
            Kind::E => self.lit(core::f64::consts::E, core::f32::consts::E),
            Kind::D => self.emit(Op::Dim),
            Kind::J => {
                if self.red.is_none() {
                    return Err(ParseError::new(n.col, ErrorKind::OutsideReduction("j")));
                }
                self.emit(Op::Index)
            }
            Kind::X { off } => {
                let Some(r) = self.red.as_mut() else {
                    let what = if *off == 0 { "x" } else { "x[j±k]" };
                    return Err(ParseError::new(n.col, ErrorKind::OutsideReduction(what)));
                };
                debug_assert!(off.unsigned_abs() <= MAX_OFFSET);
                r.min_off = r.min_off.min(*off);
                r.max_off = r.max_off.max(*off);
                self.emit(Op::Load(*off))
            }
            Kind::Neg(a) => {
                let a = self.node(a)?;
                self.emit(Op::Neg(a))
            }
            Kind::Bin(BinOp::Pow, a, b) => self.power(a, b)?,
            Kind::Bin(op, a, b) => {
                let a = self.node(a)?;
                let b = self.node(b)?;
                let c = |c| Op::Cmp(c, a, b);
                self.emit(match op {
                    BinOp::Add => Op::Add(a, b),
                    BinOp::Sub => Op::Sub(a, b),
                    BinOp::Mul => Op::Mul(a, b),
                    BinOp::Div => Op::Div(a, b),
                    BinOp::Lt => c(Cmp::Lt),
                    BinOp::Le => c(Cmp::Le),
                    BinOp::Gt => c(Cmp::Gt),
                    BinOp::Ge => c(Cmp::Ge),
                    BinOp::Eq => c(Cmp::Eq),
                    BinOp::Ne => c(Cmp::Ne),
                    BinOp::Pow => unreachable!("handled above"),
                })
            }
            Kind::Call(f, args) => self.call(n.col, *f, args)?,
        })
    }

    fn call(&mut self, col: usize, f: Func, args: &[Node]) -> Result<Reg, ParseError> {
        match f {
            Func::Sum | Func::Prod => {
                if let Some(r) = &self.red {
                    return Err(ParseError::new(
                        col,
                        ErrorKind::NestedReduction {
                            inner: f.name(),
                            outer: r.name,
                        },
                    ));
                }
                if self.in_cumsum {
                    return Err(ParseError::new(
                        col,
                        ErrorKind::NestedReduction {
                            inner: f.name(),
                            outer: "cumsum",
                        },
                    ));
                }
                let outer = core::mem::take(&mut self.cur);
                self.red = Some(Red {
                    name: f.name(),
                    min_off: 0,
                    max_off: 0,
                    cums: Vec::new(),
                });
                let term = self.node(&args[0]);
                let red = self.red.take().expect("set above");
                let body = core::mem::replace(&mut self.cur, outer);
                let term = term?;
                self.reductions.push(Reduction {
                    kind: if f == Func::Sum {
                        RedKind::Sum
                    } else {
                        RedKind::Prod
                    },
                    lo: (-red.min_off).max(0) as u32,
                    hi: red.max_off.max(0) as u32,
                    body,
                    term,
                    cums: red.cums,
                });
                let i = self.reductions.len() as u32 - 1;
                Ok(self.emit(Op::Reduce(i)))
            }
            Func::Cumsum => {
                if self.red.is_none() {
                    return Err(ParseError::new(col, ErrorKind::CumsumOutsideReduction));
                }
                if self.in_cumsum {
                    return Err(ParseError::new(col, ErrorKind::NestedCumsum));
                }
                self.in_cumsum = true;
                let a = self.node(&args[0]);
                self.in_cumsum = false;
                let a = a?;
                let s = self.n_cums;
                self.n_cums += 1;
                self.red.as_mut().expect("checked").cums.push(s);
                Ok(self.emit(Op::CumSum(s, a)))
            }
            Func::Select => {
                let c = self.node(&args[0])?;
                let a = self.node(&args[1])?;
                let b = self.node(&args[2])?;
                Ok(self.emit(Op::Select(c, a, b)))
            }
            Func::Min | Func::Max => {
                let mut acc = self.node(&args[0])?;
                for a in &args[1..] {
                    let b = self.node(a)?;
                    acc = self.emit(if f == Func::Min {
                        Op::Min(acc, b)
                    } else {
                        Op::Max(acc, b)
                    });
                }
                Ok(acc)
            }
            Func::Abs => {
                let a = self.node(&args[0])?;
                Ok(self.emit(Op::Abs(a)))
            }
            Func::Sqrt => {
                let a = self.node(&args[0])?;
                Ok(self.emit(Op::Sqrt(a)))
            }
            Func::Pow => self.power(&args[0], &args[1]),
            Func::T(t) => {
                let a = self.node(&args[0])?;
                Ok(self.emit(Op::Call(t, a)))
            }
        }
    }

    /// `a^b`: by multiplications when b is an integer literal n with |n| ≤ MAX_INT_POWER
    /// (see the crate documentation for the exact sequence), else a `pow` call.
    fn power(&mut self, a: &Node, b: &Node) -> Result<Reg, ParseError> {
        let int = match &b.kind {
            Kind::Num { int: Some(n), .. } => Some((*n, false)),
            Kind::Neg(inner) => match inner.kind {
                Kind::Num { int: Some(n), .. } => Some((n, true)),
                _ => None,
            },
            _ => None,
        };
        let base = self.node(a)?;
        match int {
            Some((n, neg)) if n <= MAX_INT_POWER => {
                if n == 0 {
                    return Ok(self.lit(1.0, 1.0));
                }
                let mut r = base;
                let top = 63 - n.leading_zeros();
                for bit in (0..top).rev() {
                    r = self.emit(Op::Mul(r, r));
                    if n >> bit & 1 == 1 {
                        r = self.emit(Op::Mul(r, base));
                    }
                }
                if neg {
                    let one = self.lit(1.0, 1.0);
                    r = self.emit(Op::Div(one, r));
                }
                Ok(r)
            }
            _ => {
                let e = self.node(b)?;
                Ok(self.emit(Op::Pow(base, e)))
            }
        }
    }
}

impl fmt::Display for Cmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
            Cmp::Eq => "eq",
            Cmp::Ne => "ne",
        })
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Op::Lit(i) => write!(f, "lit #{i}"),
            Op::Dim => write!(f, "D"),
            Op::Index => write!(f, "j"),
            Op::Load(0) => write!(f, "x[j]"),
            Op::Load(k) => write!(f, "x[j{k:+}]"),
            Op::Neg(a) => write!(f, "neg r{a}"),
            Op::Add(a, b) => write!(f, "add r{a} r{b}"),
            Op::Sub(a, b) => write!(f, "sub r{a} r{b}"),
            Op::Mul(a, b) => write!(f, "mul r{a} r{b}"),
            Op::Div(a, b) => write!(f, "div r{a} r{b}"),
            Op::Sqrt(a) => write!(f, "sqrt r{a}"),
            Op::Abs(a) => write!(f, "abs r{a}"),
            Op::Min(a, b) => write!(f, "min r{a} r{b}"),
            Op::Max(a, b) => write!(f, "max r{a} r{b}"),
            Op::Cmp(c, a, b) => write!(f, "{c} r{a} r{b}"),
            Op::Select(c, a, b) => write!(f, "select r{c} r{a} r{b}"),
            Op::Call(t, a) => write!(f, "{} r{a}", t.name()),
            Op::Pow(a, b) => write!(f, "pow r{a} r{b}"),
            Op::Reduce(i) => write!(f, "reduction #{i}"),
            Op::CumSum(s, a) => write!(f, "cumsum #{s} r{a}"),
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (a, b)) in self.lits.iter().enumerate() {
            writeln!(f, "lit #{i} = {a:e} (f64), {b:e} (f32)")?;
        }
        for (i, r) in self.reductions.iter().enumerate() {
            let k = if r.kind == RedKind::Sum {
                "sum"
            } else {
                "prod"
            };
            writeln!(f, "reduction #{i}: {k} for j in {}..D-{}", r.lo, r.hi)?;
            for s in &r.cums {
                writeln!(f, "    cumsum #{s} = 0")?;
            }
            for ins in &r.body {
                writeln!(f, "    r{} = {}", ins.dst, ins.op)?;
            }
            writeln!(f, "    term r{}", r.term)?;
        }
        for ins in &self.top {
            writeln!(f, "r{} = {}", ins.dst, ins.op)?;
        }
        writeln!(f, "result r{}", self.result)
    }
}
