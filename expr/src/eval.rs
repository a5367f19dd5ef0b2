//! The CPU interpreter of a [`Program`]: one IEEE operation per instruction, in the
//! order of the list, reductions as ascending loops.

use crate::ir::{Cmp, Inst, Op, Program, RedKind};
use crate::ops::ExprReal;

/// Registers and running sums of one evaluation; reusable across calls.
pub struct Scratch<T> {
    regs: Vec<T>,
    cums: Vec<T>,
}

impl<T: ExprReal> Scratch<T> {
    pub(crate) fn new(p: &Program) -> Self {
        Scratch {
            regs: vec![T::ZERO; p.n_regs as usize],
            cums: vec![T::ZERO; p.n_cums as usize],
        }
    }

    pub(crate) fn fits(&self, p: &Program) -> bool {
        self.regs.len() == p.n_regs as usize && self.cums.len() == p.n_cums as usize
    }
}

pub(crate) fn eval<T: ExprReal>(p: &Program, s: &mut Scratch<T>, x: &[T]) -> T {
    assert!(
        x.len() <= i32::MAX as usize,
        "the dimension must be below 2^31"
    );
    run(p, &p.top, x, 0, s);
    s.regs[p.result as usize]
}

/// Runs the instructions `block` (of a loop body, none of them a load or a running sum
/// unless `x` holds the point) at component `j` of a point `x`, and returns the values
/// of `regs` it wrote.
pub(crate) fn run_block<T: ExprReal>(
    p: &Program,
    block: &[Inst],
    x: &[T],
    j: usize,
    s: &mut Scratch<T>,
    regs: &[u32],
) -> Vec<(u32, T)> {
    run(p, block, x, j, s);
    regs.iter()
        .filter(|r| block.iter().any(|ins| ins.dst == **r))
        .map(|&r| (r, s.regs[r as usize]))
        .collect()
}

#[inline(always)]
fn flag<T: ExprReal>(b: bool) -> T {
    if b { T::ONE } else { T::ZERO }
}

fn run<T: ExprReal>(p: &Program, block: &[Inst], x: &[T], j: usize, s: &mut Scratch<T>) {
    for ins in block {
        let v = match ins.op {
            Op::Dim => T::of_u32(x.len() as u32),
            Op::Index => T::of_u32(j as u32),
            // In range: the loop bounds exclude every j whose neighbours do not exist.
            Op::Load(k) => x[(j as isize + k as isize) as usize],
            Op::CumSum(i, a) => {
                let v = s.cums[i as usize] + s.regs[a as usize];
                s.cums[i as usize] = v;
                v
            }
            Op::Reduce(i) => {
                let red = &p.reductions[i as usize];
                for &c in &red.cums {
                    s.cums[c as usize] = T::ZERO;
                }
                let mut acc = match red.kind {
                    RedKind::Sum => T::ZERO,
                    RedKind::Prod => T::ONE,
                };
                let (lo, hi) = (red.lo as usize, red.hi as usize);
                let end = x.len().saturating_sub(hi);
                for j in lo..end {
                    run(p, &red.body, x, j, s);
                    let t = s.regs[red.term as usize];
                    acc = match red.kind {
                        RedKind::Sum => acc + t,
                        RedKind::Prod => acc * t,
                    };
                }
                acc
            }
            op => pure(&p.lits, op, |i| s.regs[i as usize]),
        };
        s.regs[ins.dst as usize] = v;
    }
}

/// The value of an instruction that reads only registers and literals (every operation
/// but `D`, `j`, loads, running sums and reductions, for which it gives NaN): the one
/// definition of the arithmetic that every CPU evaluation uses.
#[inline(always)]
pub(crate) fn pure<T: ExprReal>(lits: &[(f64, f32)], op: Op, r: impl Fn(u32) -> T) -> T {
    match op {
        Op::Lit(i) => {
            let (a, b) = lits[i as usize];
            T::lit(a, b)
        }
        Op::Neg(a) => -r(a),
        Op::Add(a, b) => r(a) + r(b),
        Op::Sub(a, b) => r(a) - r(b),
        Op::Mul(a, b) => r(a) * r(b),
        Op::Div(a, b) => r(a) / r(b),
        Op::Sqrt(a) => r(a).sqrt(),
        Op::Abs(a) => r(a).abs(),
        Op::Min(a, b) => {
            let (a, b) = (r(a), r(b));
            if b < a { b } else { a }
        }
        Op::Max(a, b) => {
            let (a, b) = (r(a), r(b));
            if b > a { b } else { a }
        }
        Op::Cmp(c, a, b) => {
            let (a, b) = (r(a), r(b));
            flag(match c {
                Cmp::Lt => a < b,
                Cmp::Le => a <= b,
                Cmp::Gt => a > b,
                Cmp::Ge => a >= b,
                Cmp::Eq => a == b,
                Cmp::Ne => a != b,
            })
        }
        Op::Select(c, a, b) => {
            if r(c) != T::ZERO {
                r(a)
            } else {
                r(b)
            }
        }
        Op::Call(f, a) => T::call(f, r(a)),
        Op::Pow(a, b) => T::pow(r(a), r(b)),
        Op::Dim | Op::Index | Op::Load(_) | Op::CumSum(..) | Op::Reduce(_) => T::NAN,
    }
}
