//! Every class of error, with the column it names and the message it prints.

use gpude_expr::{ErrorKind, Expr, MAX_LEN, MAX_NESTING, MAX_TREE_DEPTH, ParseError};

fn err(src: &str) -> ParseError {
    match Expr::parse(src) {
        Ok(_) => panic!("{src:?} was accepted"),
        Err(e) => e,
    }
}

/// The error's column and message, with the message checked to contain `words`.
fn check(src: &str, column: usize, words: &str) -> ErrorKind {
    let e = err(src);
    let msg = e.to_string();
    assert_eq!(e.column, column, "{src:?}: {msg}");
    assert!(msg.contains(words), "{src:?}: {msg:?} lacks {words:?}");
    assert!(
        msg.contains(&format!("column {column}")),
        "{src:?}: {msg:?} names no column"
    );
    e.kind
}

#[test]
fn expected_tokens_name_the_position_and_what_was_found() {
    check(
        "1 + (2 * 3 + 4, 5)",
        15,
        "expected ')' at column 15, found ','",
    );
    check(
        "(1 + 2",
        7,
        "expected ')' at column 7, found the end of the expression",
    );
    check("1 +", 4, "expected a number, a name or '(' at column 4");
    check(
        "1 2",
        3,
        "expected an operator or the end of the expression at column 3, found '2'",
    );
    check("1)", 2, "unbalanced ')'");
    check("sin(1 2)", 7, "expected ',' or ')' at column 7, found '2'");
    check("* 3", 1, "found '*'");
    check("x = 1", 3, "expected a comparison");
    check("1 ! 2", 3, "found '!'");
    check("2e", 2, "found 'e'"); // an exponent needs digits; `e` is then a name
}

#[test]
fn characters_and_numbers() {
    let k = check("x $ 2", 3, "unexpected character '$'");
    assert_eq!(k, ErrorKind::UnexpectedChar('$'));
    // Columns count characters, not bytes.
    check("1 + é", 5, "unexpected character 'é'");
    check("1 .", 3, "unexpected character '.'");
    let k = check("2 * 1e999", 5, "bad number '1e999'");
    assert_eq!(k, ErrorKind::BadNumber("1e999".into()));
}

#[test]
fn unknown_identifiers_list_the_known_ones() {
    let k = check("sum(y)", 5, "unknown identifier 'y'");
    assert_eq!(k, ErrorKind::UnknownIdentifier("y".into()));
    let msg = err("Sum(x)").to_string();
    for name in ["x[j±k]", "cumsum", "sinpi", "log1p", "select", "D", "pi"] {
        assert!(msg.contains(name), "{msg}");
    }
    check("PI", 1, "unknown identifier 'PI'");
}

#[test]
fn wrong_arity() {
    let k = check(
        "2 + sin(1, 2)",
        5,
        "sin(…) at column 5 takes 1 argument, found 2",
    );
    assert_eq!(
        k,
        ErrorKind::Arity {
            function: "sin",
            expected: "1 argument",
            found: 2
        }
    );
    check("select(1, 2)", 1, "takes 3 arguments, found 2");
    check("min(1)", 1, "takes 2 or more arguments, found 1");
    check("sum()", 1, "takes 1 argument, found 0");
    check("pow(2)", 1, "takes 2 arguments, found 1");
}

#[test]
fn names_used_as_the_wrong_thing() {
    check("sin + 1", 5, "expected '(' after the function 'sin'");
    check("sum", 4, "expected '(' after the function 'sum'");
    check("sum(x(2))", 5, "'x' at column 5 is not a function");
    check("pi(2)", 1, "'pi' at column 1 is not a function");
}

#[test]
fn context_rules() {
    let k = check(
        "x + 1",
        1,
        "'x' at column 1 is only defined inside sum(…) or prod(…)",
    );
    assert_eq!(k, ErrorKind::OutsideReduction("x"));
    check("2 * j", 5, "'j' at column 5 is only defined");
    check("1 + x[j-1]", 5, "'x[j±k]' at column 5 is only defined");
    check("sum(x) + x", 10, "'x' at column 10");
    let k = check(
        "sum(1 + prod(x))",
        9,
        "prod(…) at column 9 is inside sum(…)",
    );
    assert_eq!(
        k,
        ErrorKind::NestedReduction {
            inner: "prod",
            outer: "sum"
        }
    );
    check(
        "cumsum(x)",
        1,
        "cumsum(…) at column 1 is only allowed inside sum(…) or prod(…)",
    );
    check("1 + cumsum(1)", 5, "only allowed inside");
    check(
        "sum(cumsum(1 + cumsum(x)))",
        16,
        "cumsum(…) at column 16 is inside another cumsum(…)",
    );
}

#[test]
fn indices() {
    check(
        "sum(x[1])",
        7,
        "expected 'j' (indices are j, j+k or j-k) at column 7, found '1'",
    );
    check(
        "sum(x[j*2])",
        8,
        "expected '+', '-' or ']' at column 8, found '*'",
    );
    check(
        "sum(x[j+y])",
        9,
        "expected an integer offset at column 9, found 'y'",
    );
    check("sum(x[j+1.5])", 9, "expected an integer offset");
    check("sum(x[j+1)", 10, "expected ']' at column 10, found ')'");
    let k = check(
        "sum(x[j-9])",
        9,
        "neighbour offset -9 at column 9 is too large (at most ±8)",
    );
    assert_eq!(k, ErrorKind::OffsetTooLarge(-9));
    check("sum(x[j+99999999999999999999999])", 9, "too large");
    // The largest offset is accepted.
    assert_eq!(Expr::parse("sum(x[j+8] + x[j-8])").unwrap().min_dim(), 17);
}

#[test]
fn limits() {
    let long = "1+".repeat(MAX_LEN / 2) + "1";
    let k = check(&long, MAX_LEN + 1, "too long");
    assert_eq!(k, ErrorKind::TooLong { len: MAX_LEN + 1 });
    // Exactly at the limit is accepted (if otherwise valid and not too tall).
    let ok = format!("sum(x){}", " ".repeat(MAX_LEN - 6));
    assert!(Expr::parse(&ok).is_ok());

    // Brackets: the content of bracket number MAX_NESTING starts one level too deep.
    let n = MAX_NESTING;
    let deep = "(".repeat(n) + "1" + &")".repeat(n);
    check(&deep, n + 1, "nested too deeply");
    let fine = "(".repeat(n - 1) + "1" + &")".repeat(n - 1);
    assert_eq!(Expr::parse(&fine).unwrap().eval::<f64>(&[]), 1.0);

    // A long left-associative chain: the tree is one level taller per term.
    let chain = "1".to_string() + &"+1".repeat(MAX_TREE_DEPTH);
    check(&chain, 2 * MAX_TREE_DEPTH, "nested too deeply");
    let chain = "1".to_string() + &"+1".repeat(MAX_TREE_DEPTH - 1);
    assert_eq!(
        Expr::parse(&chain).unwrap().eval::<f64>(&[]),
        MAX_TREE_DEPTH as f64
    );
}

#[test]
fn messages_never_repeat_long_input() {
    let name = "a".repeat(500);
    for src in [
        format!("sum({name})"),
        format!("1 + {}e999", "9".repeat(400)),
        format!("1 {name}"),
        format!("sum(x({name}))"),
    ] {
        let msg = err(&src).to_string();
        let longest = msg
            .split(|c: char| !c.is_ascii_alphanumeric())
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(longest <= 60, "{longest} characters repeated: {msg}");
        assert!(msg.len() < 600, "{msg}");
    }
}
