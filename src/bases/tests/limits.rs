//! Parse errors with their positions, and the bounds: length, nesting, tree height, regex size,
//! text size and the step budget. None of these may panic or hang.

use super::super::syntax::{MAX_EXPRESSION_BYTES, SyntaxError, parse};
use super::{eval_in, vault};

fn error(source: &str) -> SyntaxError {
    parse(source).expect_err(source)
}

#[test]
fn parse_errors_point_at_the_place() {
    assert_eq!(error(""), SyntaxError::Empty);
    assert_eq!(error("  "), SyntaxError::Empty);
    assert!(matches!(
        error("price +"),
        SyntaxError::Expected { at: 7, .. }
    ));
    assert!(matches!(
        error("(1 + 2"),
        SyntaxError::Expected { at: 6, .. }
    ));
    assert!(matches!(
        error("'open"),
        SyntaxError::UnterminatedString { at: 0 }
    ));
    assert!(matches!(
        error("x == /ab"),
        SyntaxError::UnterminatedRegex { at: 5 }
    ));
    assert!(matches!(error("/(/"), SyntaxError::BadRegex { at: 0, .. }));
    assert!(matches!(error("/a/q"), SyntaxError::BadRegex { .. }));
    assert!(matches!(
        error("a # b"),
        SyntaxError::UnexpectedCharacter { at: 2, found: '#' }
    ));
    assert!(matches!(error("1 2"), SyntaxError::Expected { at: 2, .. }));
    assert!(matches!(error("x."), SyntaxError::Expected { at: 2, .. }));
    let unicode = "\"é\" + #";
    assert_eq!(error(unicode).column(unicode), 7);
    let message = error("price +").to_string();
    assert!(
        message.contains("byte 7") && message.contains("expected"),
        "{message}"
    );
}

#[test]
fn division_and_regex_are_told_apart() {
    assert!(parse("price / 2 / 3").is_ok());
    assert!(parse("(a) / b").is_ok());
    assert!(parse("x.replace(/a\\/b/g, \"\")").is_ok());
    assert!(parse("[/a/, /[/]/]").is_ok());
}

#[test]
fn long_and_deep_expressions_are_refused() {
    let long = "1".repeat(MAX_EXPRESSION_BYTES + 1);
    assert!(matches!(error(&long), SyntaxError::TooLong { .. }));
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(matches!(error(&deep), SyntaxError::TooDeep { .. }));
    let chain = vec!["1"; 3000].join("+");
    assert!(matches!(error(&chain), SyntaxError::TooDeep { .. }));
    let calls = format!("{}x{}", "f(".repeat(3000), ")".repeat(3000));
    assert!(matches!(error(&calls), SyntaxError::TooDeep { .. }));
    let members = format!("x{}", ".a".repeat(3000));
    assert!(matches!(error(&members), SyntaxError::TooDeep { .. }));
    let unary = format!("{}x", "!".repeat(5000));
    assert!(matches!(error(&unary), SyntaxError::TooDeep { .. }));
    assert!(parse(&vec!["1"; 90].join("+")).is_ok());
}

#[test]
fn a_regex_bomb_is_refused() {
    let bomb = format!("/{}/", "(a{1000}){1000}");
    assert!(matches!(error(&bomb), SyntaxError::BadRegex { .. }));
}

#[test]
fn evaluation_stays_bounded() {
    let vault = vault();
    let run = |source: &str| eval_in(&vault, "Books/Dune.md", source);
    assert!(run(r#""ab".repeat(10000000)"#).is_err());
    assert!(run(r#"[1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map("x".repeat(100000))).flat().join("")"#).is_err());
    let doubling = r#""x".repeat(1000).split("").reduce(acc + acc + "y", "z")"#;
    assert!(run(doubling).is_err());
    let wide = r#""x".repeat(1000000).replace("x", "y".repeat(1000000))"#;
    assert!(run(wide).is_err());
    let wide_regex = r#""x".repeat(1000000).replace(/x/g, "$&$&")"#;
    assert!(run(wide_regex).is_err());
    let many_copies = r#""x".repeat(1000000).split("").map("y".repeat(1000000)).length"#;
    assert!(run(many_copies).is_err());
    let steps = r#""x".repeat(1000000).split("").map(value + value + value).length"#;
    assert!(run(steps).is_err());
    let nested = r#""x".repeat(50).split("").reduce([acc], null).toString().length > 0"#;
    assert!(run(nested).is_ok());
    let too_deep = r#""x".repeat(1000000).split("").reduce([acc], null)"#;
    assert!(run(too_deep).is_err());
    let too_deep_object = r#""x".repeat(100).split("").reduce({"a": acc}, null)"#;
    assert!(run(too_deep_object).is_err());
    let quadratic = r#""x".repeat(1000000).split("").reduce(acc + [value], [])"#;
    assert!(run(quadratic).is_err());
    assert!(run("1 / 0").is_ok());
    assert!(run(r#"date("9999-12-31") + "1000y""#).is_err());
}
