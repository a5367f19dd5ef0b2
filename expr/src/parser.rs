//! Tokens and a hand-written recursive-descent parser into a syntax tree.
//!
//! Recursion is bounded: every cycle of the grammar passes through [`Parser::unary`],
//! which counts its depth against [`crate::MAX_NESTING`]; the height of the tree is
//! bounded by [`crate::MAX_TREE_DEPTH`] as nodes are built (long left-associative chains
//! such as `1+1+…` grow the tree without recursing in the parser).

use crate::error::{ErrorKind, ParseError, echo};
use crate::{MAX_LEN, MAX_NESTING, MAX_OFFSET, MAX_TREE_DEPTH};

/// Every name the language knows, for messages.
pub(crate) const KNOWN: &[&str] = &[
    "x", "x[j±k]", "j", "D", "pi", "e", "sum", "prod", "cumsum", "select", "min", "max", "abs",
    "sqrt", "pow", "sin", "cos", "tan", "exp", "log", "sinpi", "cospi", "expm1", "log1p",
];

/// Functions of one argument that call into the transcendental maths ([`crate::ops`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transcendental {
    Sin,
    Cos,
    Tan,
    Exp,
    Log,
    Sinpi,
    Cospi,
    Expm1,
    Log1p,
}

impl Transcendental {
    pub const ALL: [Transcendental; 9] = [
        Transcendental::Sin,
        Transcendental::Cos,
        Transcendental::Tan,
        Transcendental::Exp,
        Transcendental::Log,
        Transcendental::Sinpi,
        Transcendental::Cospi,
        Transcendental::Expm1,
        Transcendental::Log1p,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Transcendental::Sin => "sin",
            Transcendental::Cos => "cos",
            Transcendental::Tan => "tan",
            Transcendental::Exp => "exp",
            Transcendental::Log => "log",
            Transcendental::Sinpi => "sinpi",
            Transcendental::Cospi => "cospi",
            Transcendental::Expm1 => "expm1",
            Transcendental::Log1p => "log1p",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Sum,
    Prod,
    Cumsum,
    Select,
    Min,
    Max,
    Abs,
    Sqrt,
    Pow,
    T(Transcendental),
}

impl Func {
    fn from_name(s: &str) -> Option<Func> {
        Some(match s {
            "sum" => Func::Sum,
            "prod" => Func::Prod,
            "cumsum" => Func::Cumsum,
            "select" => Func::Select,
            "min" => Func::Min,
            "max" => Func::Max,
            "abs" => Func::Abs,
            "sqrt" => Func::Sqrt,
            "pow" => Func::Pow,
            _ => Func::T(*Transcendental::ALL.iter().find(|t| t.name() == s)?),
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Func::Sum => "sum",
            Func::Prod => "prod",
            Func::Cumsum => "cumsum",
            Func::Select => "select",
            Func::Min => "min",
            Func::Max => "max",
            Func::Abs => "abs",
            Func::Sqrt => "sqrt",
            Func::Pow => "pow",
            Func::T(t) => t.name(),
        }
    }

    /// (fewest, most) arguments, and the words for messages.
    fn arity(self) -> (usize, usize, &'static str) {
        match self {
            Func::Select => (3, 3, "3 arguments"),
            Func::Pow => (2, 2, "2 arguments"),
            Func::Min | Func::Max => (2, usize::MAX, "2 or more arguments"),
            _ => (1, 1, "1 argument"),
        }
    }
}

pub(crate) fn is_function_name(s: &str) -> bool {
    Func::from_name(s).is_some()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// A node of the syntax tree, with the column where it starts (its operator's column
/// for binary operators).
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub col: usize,
    pub height: usize,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// A literal, rounded once to each precision from its text; `int` when the text is
    /// a plain integer (used by `^`).
    Num {
        v64: f64,
        v32: f32,
        int: Option<u64>,
    },
    Pi,
    E,
    D,
    J,
    /// `x[j + off]`; a bare `x` is `off = 0`.
    X {
        off: i32,
    },
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tk {
    Num,
    Ident,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    LBrack,
    RBrack,
    Comma,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    End,
}

#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    kind: Tk,
    col: usize,
    text: &'a str,
}

impl Tok<'_> {
    fn describe(&self) -> String {
        if self.kind == Tk::End {
            "the end of the expression".to_string()
        } else {
            format!("'{}'", echo(self.text))
        }
    }
}

fn lex(src: &str) -> Result<Vec<Tok<'_>>, ParseError> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut col = 1;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                col += 1;
                continue;
            }
            b'0'..=b'9' | b'.' => {
                let digits = |i: &mut usize| {
                    let s = *i;
                    while *i < b.len() && b[*i].is_ascii_digit() {
                        *i += 1;
                    }
                    *i - s
                };
                let mut n = digits(&mut i);
                if i < b.len() && b[i] == b'.' {
                    i += 1;
                    n += digits(&mut i);
                }
                if n == 0 {
                    return Err(ParseError::new(col, ErrorKind::UnexpectedChar('.')));
                }
                // An exponent only when digits follow; otherwise `e` starts the next token.
                if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                    let mut k = i + 1;
                    if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                        k += 1;
                    }
                    if k < b.len() && b[k].is_ascii_digit() {
                        i = k;
                        digits(&mut i);
                    }
                }
                Tk::Num
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                Tk::Ident
            }
            _ => {
                let two = |second: u8| b.get(i + 1) == Some(&second);
                let (k, len) = match c {
                    b'+' => (Tk::Plus, 1),
                    b'-' => (Tk::Minus, 1),
                    b'*' => (Tk::Star, 1),
                    b'/' => (Tk::Slash, 1),
                    b'^' => (Tk::Caret, 1),
                    b'(' => (Tk::LParen, 1),
                    b')' => (Tk::RParen, 1),
                    b'[' => (Tk::LBrack, 1),
                    b']' => (Tk::RBrack, 1),
                    b',' => (Tk::Comma, 1),
                    b'<' if two(b'=') => (Tk::Le, 2),
                    b'<' => (Tk::Lt, 1),
                    b'>' if two(b'=') => (Tk::Ge, 2),
                    b'>' => (Tk::Gt, 1),
                    b'=' if two(b'=') => (Tk::EqEq, 2),
                    b'!' if two(b'=') => (Tk::Ne, 2),
                    b'=' | b'!' => {
                        return Err(ParseError::new(
                            col,
                            ErrorKind::Expected {
                                expected: "a comparison ('==', '!=', '<', '<=', '>', '>=')".into(),
                                found: format!("'{}'", c as char),
                            },
                        ));
                    }
                    _ => {
                        let ch = src[i..].chars().next().unwrap_or('?');
                        return Err(ParseError::new(col, ErrorKind::UnexpectedChar(ch)));
                    }
                };
                i += len;
                k
            }
        };
        // Every accepted byte is ASCII, so columns advance by bytes.
        toks.push(Tok {
            kind,
            col,
            text: &src[start..i],
        });
        col += i - start;
    }
    toks.push(Tok {
        kind: Tk::End,
        col,
        text: "",
    });
    Ok(toks)
}

struct Parser<'a> {
    toks: Vec<Tok<'a>>,
    pos: usize,
    depth: usize,
}

pub(crate) fn parse(src: &str) -> Result<Node, ParseError> {
    if src.len() > MAX_LEN {
        let col = src.char_indices().take_while(|&(i, _)| i < MAX_LEN).count() + 1;
        return Err(ParseError::new(col, ErrorKind::TooLong { len: src.len() }));
    }
    let mut p = Parser {
        toks: lex(src)?,
        pos: 0,
        depth: 0,
    };
    let n = p.expr()?;
    let t = p.peek();
    if t.kind != Tk::End {
        let expected = if t.kind == Tk::RParen {
            "an operator or the end of the expression (unbalanced ')')"
        } else {
            "an operator or the end of the expression"
        };
        return Err(p.expected(expected));
    }
    Ok(n)
}

fn node(col: usize, kind: Kind) -> Node {
    Node {
        col,
        height: 1,
        kind,
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Tok<'a> {
        self.toks[self.pos]
    }

    fn bump(&mut self) -> Tok<'a> {
        let t = self.toks[self.pos];
        if t.kind != Tk::End {
            self.pos += 1;
        }
        t
    }

    fn expected(&self, what: &str) -> ParseError {
        let t = self.peek();
        ParseError::new(
            t.col,
            ErrorKind::Expected {
                expected: what.to_string(),
                found: t.describe(),
            },
        )
    }

    fn expect(&mut self, k: Tk, what: &str) -> Result<Tok<'a>, ParseError> {
        if self.peek().kind == k {
            Ok(self.bump())
        } else {
            Err(self.expected(what))
        }
    }

    fn bin(&self, op: BinOp, col: usize, l: Node, r: Node) -> Result<Node, ParseError> {
        let height = l.height.max(r.height) + 1;
        if height > MAX_TREE_DEPTH {
            return Err(ParseError::new(col, ErrorKind::TooDeep));
        }
        Ok(Node {
            col,
            height,
            kind: Kind::Bin(op, Box::new(l), Box::new(r)),
        })
    }

    fn expr(&mut self) -> Result<Node, ParseError> {
        let mut l = self.additive()?;
        loop {
            let op = match self.peek().kind {
                Tk::Lt => BinOp::Lt,
                Tk::Le => BinOp::Le,
                Tk::Gt => BinOp::Gt,
                Tk::Ge => BinOp::Ge,
                Tk::EqEq => BinOp::Eq,
                Tk::Ne => BinOp::Ne,
                _ => return Ok(l),
            };
            let col = self.bump().col;
            let r = self.additive()?;
            l = self.bin(op, col, l, r)?;
        }
    }

    fn additive(&mut self) -> Result<Node, ParseError> {
        let mut l = self.multiplicative()?;
        loop {
            let op = match self.peek().kind {
                Tk::Plus => BinOp::Add,
                Tk::Minus => BinOp::Sub,
                _ => return Ok(l),
            };
            let col = self.bump().col;
            let r = self.multiplicative()?;
            l = self.bin(op, col, l, r)?;
        }
    }

    fn multiplicative(&mut self) -> Result<Node, ParseError> {
        let mut l = self.unary()?;
        loop {
            let op = match self.peek().kind {
                Tk::Star => BinOp::Mul,
                Tk::Slash => BinOp::Div,
                _ => return Ok(l),
            };
            let col = self.bump().col;
            let r = self.unary()?;
            l = self.bin(op, col, l, r)?;
        }
    }

    /// `-u`, `+u` or a power; the one place recursion depth is counted.
    fn unary(&mut self) -> Result<Node, ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(ParseError::new(self.peek().col, ErrorKind::TooDeep));
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<Node, ParseError> {
        match self.peek().kind {
            Tk::Minus => {
                let col = self.bump().col;
                let a = self.unary()?;
                Ok(Node {
                    col,
                    height: a.height + 1,
                    kind: Kind::Neg(Box::new(a)),
                })
            }
            Tk::Plus => {
                self.bump();
                self.unary()
            }
            _ => {
                let base = self.primary()?;
                if self.peek().kind == Tk::Caret {
                    let col = self.bump().col;
                    // Right-associative, and the exponent may carry a sign: 2^-x^2 = 2^(-(x^2)).
                    let e = self.unary()?;
                    return self.bin(BinOp::Pow, col, base, e);
                }
                Ok(base)
            }
        }
    }

    fn primary(&mut self) -> Result<Node, ParseError> {
        let t = self.peek();
        match t.kind {
            Tk::Num => {
                self.bump();
                number(t)
            }
            Tk::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Tk::RParen, "')'")?;
                Ok(e)
            }
            Tk::Ident => {
                self.bump();
                self.identifier(t)
            }
            _ => Err(self.expected("a number, a name or '('")),
        }
    }

    fn identifier(&mut self, t: Tok<'a>) -> Result<Node, ParseError> {
        let col = t.col;
        let var = match t.text {
            "x" => {
                if self.peek().kind == Tk::LBrack {
                    self.bump();
                    let off = self.index()?;
                    return Ok(node(col, Kind::X { off }));
                }
                Some(Kind::X { off: 0 })
            }
            "j" => Some(Kind::J),
            "D" => Some(Kind::D),
            "pi" => Some(Kind::Pi),
            "e" => Some(Kind::E),
            _ => None,
        };
        if let Some(k) = var {
            if self.peek().kind == Tk::LParen {
                return Err(ParseError::new(
                    col,
                    ErrorKind::NotAFunction(t.text.to_string()),
                ));
            }
            return Ok(node(col, k));
        }
        let Some(f) = Func::from_name(t.text) else {
            return Err(ParseError::new(
                col,
                ErrorKind::UnknownIdentifier(echo(t.text)),
            ));
        };
        if self.peek().kind != Tk::LParen {
            return Err(ParseError::new(
                self.peek().col,
                ErrorKind::NotAFunction(t.text.to_string()),
            ));
        }
        self.bump();
        let mut args = Vec::new();
        if self.peek().kind != Tk::RParen {
            loop {
                args.push(self.expr()?);
                match self.peek().kind {
                    Tk::Comma => {
                        self.bump();
                    }
                    Tk::RParen => break,
                    _ => return Err(self.expected("',' or ')'")),
                }
            }
        }
        self.bump(); // ')'
        let (lo, hi, words) = f.arity();
        if args.len() < lo || args.len() > hi {
            return Err(ParseError::new(
                col,
                ErrorKind::Arity {
                    function: f.name(),
                    expected: words,
                    found: args.len(),
                },
            ));
        }
        let height = args.iter().map(|a| a.height).max().unwrap_or(0) + 1;
        if height > MAX_TREE_DEPTH {
            return Err(ParseError::new(col, ErrorKind::TooDeep));
        }
        Ok(Node {
            col,
            height,
            kind: Kind::Call(f, args),
        })
    }

    /// After `x[`: `j`, `j+k` or `j-k` with an integer k, then `]`.
    fn index(&mut self) -> Result<i32, ParseError> {
        let t = self.peek();
        if !(t.kind == Tk::Ident && t.text == "j") {
            return Err(self.expected("'j' (indices are j, j+k or j-k)"));
        }
        self.bump();
        let sign = match self.peek().kind {
            Tk::Plus => 1,
            Tk::Minus => -1,
            Tk::RBrack => {
                self.bump();
                return Ok(0);
            }
            _ => return Err(self.expected("'+', '-' or ']'")),
        };
        self.bump();
        let k = self.peek();
        if k.kind != Tk::Num || !k.text.bytes().all(|c| c.is_ascii_digit()) {
            return Err(self.expected("an integer offset"));
        }
        self.bump();
        let v: i64 = k.text.parse().unwrap_or(i64::MAX);
        if v > MAX_OFFSET as i64 {
            return Err(ParseError::new(
                k.col,
                ErrorKind::OffsetTooLarge(sign * v.min(i64::MAX / 2)),
            ));
        }
        self.expect(Tk::RBrack, "']'")?;
        Ok(sign as i32 * v as i32)
    }
}

fn number(t: Tok<'_>) -> Result<Node, ParseError> {
    let bad = || ParseError::new(t.col, ErrorKind::BadNumber(t.text.to_string()));
    let v64: f64 = t.text.parse().map_err(|_| bad())?;
    let v32: f32 = t.text.parse().map_err(|_| bad())?;
    if !v64.is_finite() {
        return Err(bad());
    }
    let int = if t.text.bytes().all(|c| c.is_ascii_digit()) {
        t.text.parse::<u64>().ok()
    } else {
        None
    };
    Ok(node(t.col, Kind::Num { v64, v32, int }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tk> {
        lex(s).unwrap().iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_numbers_names_and_two_character_operators() {
        assert_eq!(
            kinds("1.5e-3<=x!=2e"),
            [
                Tk::Num,
                Tk::Le,
                Tk::Ident,
                Tk::Ne,
                Tk::Num,
                Tk::Ident,
                Tk::End
            ]
        );
        let t = lex("  .25E+2 ").unwrap();
        assert_eq!((t[0].text, t[0].col), (".25E+2", 3));
        assert_eq!(t[1].col, 10);
    }

    #[test]
    fn precedence_and_associativity() {
        // -x^2 is -(x^2); 2^3^2 is 2^(3^2); a-b-c is (a-b)-c.
        let n = parse("-2^2").unwrap();
        assert!(matches!(n.kind, Kind::Neg(_)));
        let n = parse("2^3^2").unwrap();
        let Kind::Bin(BinOp::Pow, l, r) = n.kind else {
            panic!("not a power")
        };
        assert!(matches!(l.kind, Kind::Num { int: Some(2), .. }));
        assert!(matches!(r.kind, Kind::Bin(BinOp::Pow, _, _)));
        let n = parse("1-2-3").unwrap();
        let Kind::Bin(BinOp::Sub, l, _) = n.kind else {
            panic!("not a difference")
        };
        assert!(matches!(l.kind, Kind::Bin(BinOp::Sub, _, _)));
        let n = parse("1+2*3<4").unwrap();
        assert!(matches!(n.kind, Kind::Bin(BinOp::Lt, _, _)));
    }
}
