//! Errors of [`crate::Expr::parse`]: each names a position and what went wrong.

use core::fmt;

/// The longest piece of the input any message repeats; longer ones are cut with `…`.
pub const MAX_ECHO: usize = 60;

/// Why an expression was refused, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// 1-based column (counted in characters) where the problem starts.
    pub column: usize,
    pub kind: ErrorKind,
}

/// The classes of errors.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    /// A character that starts no token.
    UnexpectedChar(char),
    /// The grammar wanted `expected` here but the input has `found`.
    Expected { expected: String, found: String },
    /// A number that does not parse or is not finite in `f64`.
    BadNumber(String),
    /// An identifier that is neither a variable, a constant nor a function.
    UnknownIdentifier(String),
    /// A function called with the wrong number of arguments.
    Arity {
        function: &'static str,
        expected: &'static str,
        found: usize,
    },
    /// A function name not followed by `(`, or a variable followed by `(`.
    NotAFunction(String),
    /// `x`, `x[j±k]` or `j` outside `sum(…)`/`prod(…)`.
    OutsideReduction(&'static str),
    /// `sum`/`prod` inside another reduction.
    NestedReduction {
        inner: &'static str,
        outer: &'static str,
    },
    /// `cumsum(…)` outside `sum(…)`/`prod(…)`.
    CumsumOutsideReduction,
    /// `cumsum(…)` inside another `cumsum(…)`.
    NestedCumsum,
    /// A neighbour offset beyond [`crate::MAX_OFFSET`].
    OffsetTooLarge(i64),
    /// The input is longer than [`crate::MAX_LEN`] bytes.
    TooLong { len: usize },
    /// Brackets, calls, signs or powers nested deeper than [`crate::MAX_NESTING`], or an
    /// expression tree taller than [`crate::MAX_TREE_DEPTH`].
    TooDeep,
}

impl ParseError {
    pub(crate) fn new(column: usize, kind: ErrorKind) -> Self {
        ParseError { column, kind }
    }
}

/// `s`, cut to [`MAX_ECHO`] characters.
pub(crate) fn echo(s: &str) -> String {
    if s.chars().count() <= MAX_ECHO {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX_ECHO).collect();
        t.push('…');
        t
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.column;
        match &self.kind {
            ErrorKind::UnexpectedChar(ch) => {
                write!(f, "unexpected character {:?} at column {c}", ch)
            }
            ErrorKind::Expected { expected, found } => {
                write!(f, "expected {expected} at column {c}, found {found}")
            }
            ErrorKind::BadNumber(t) => write!(
                f,
                "bad number '{}' at column {c} (digits, an optional '.', an optional exponent; \
                 finite in f64)",
                echo(t)
            ),
            ErrorKind::UnknownIdentifier(name) => write!(
                f,
                "unknown identifier '{}' at column {c}; known: {}",
                echo(name),
                crate::parser::KNOWN.join(", ")
            ),
            ErrorKind::Arity {
                function,
                expected,
                found,
            } => write!(
                f,
                "{function}(…) at column {c} takes {expected}, found {found}"
            ),
            ErrorKind::NotAFunction(name) => {
                if crate::parser::is_function_name(name) {
                    write!(f, "expected '(' after the function '{name}' at column {c}")
                } else {
                    write!(f, "'{}' at column {c} is not a function", echo(name))
                }
            }
            ErrorKind::OutsideReduction(what) => write!(
                f,
                "'{what}' at column {c} is only defined inside sum(…) or prod(…)"
            ),
            ErrorKind::NestedReduction { inner, outer } => write!(
                f,
                "{inner}(…) at column {c} is inside {outer}(…): reductions cannot be nested \
                 (cumsum(…) is the one reduction allowed inside sum/prod)"
            ),
            ErrorKind::CumsumOutsideReduction => write!(
                f,
                "cumsum(…) at column {c} is only allowed inside sum(…) or prod(…)"
            ),
            ErrorKind::NestedCumsum => {
                write!(f, "cumsum(…) at column {c} is inside another cumsum(…)")
            }
            ErrorKind::OffsetTooLarge(k) => write!(
                f,
                "neighbour offset {k} at column {c} is too large (at most ±{})",
                crate::MAX_OFFSET
            ),
            ErrorKind::TooLong { len } => write!(
                f,
                "expression of {len} bytes is too long (at most {} bytes; column {c})",
                crate::MAX_LEN
            ),
            ErrorKind::TooDeep => write!(
                f,
                "expression nested too deeply at column {c} (at most {} levels of brackets, \
                 calls, signs and powers, and a tree of height {})",
                crate::MAX_NESTING,
                crate::MAX_TREE_DEPTH
            ),
        }
    }
}

impl std::error::Error for ParseError {}
