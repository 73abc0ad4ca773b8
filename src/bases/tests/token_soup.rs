//! Arbitrary sequences of the language's own tokens (the inputs most likely to reach deep into
//! the parser and evaluator) parse or fail cleanly, and what parses evaluates without panicking.

use proptest::prelude::*;

use super::super::syntax::parse;
use super::eval_in;
use super::vault;

const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    ":",
    "!",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">=",
    "&&",
    "||",
    "1",
    "2.5",
    "0",
    "'a'",
    "\"b c\"",
    "/x+/g",
    "/(a)/",
    "price",
    "file",
    "note",
    "formula",
    "this",
    "value",
    "acc",
    "index",
    "values",
    "tasks",
    "author",
    "started",
    "map",
    "filter",
    "reduce",
    "if",
    "date",
    "now",
    "link",
    "list",
    "contains",
    "length",
    "name",
    "hasTag",
    "format",
    "asFile",
    "replace",
    "split",
    "\"1d\"",
    "\"2025-01-01\"",
    "null",
    "true",
    " ",
    "duration",
    "number",
    "toFixed",
    "slice",
    "sort",
    "unique",
    "flat",
    "properties",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn token_sequences_never_panic(picks in prop::collection::vec(0..TOKENS.len(), 0..40)) {
        let text: String = picks.iter().map(|at| TOKENS[*at]).collect();
        match parse(&text) {
            Ok(_) => {
                let _ = eval_in(&vault(), "Books/Dune.md", &text);
            }
            Err(error) => prop_assert!(error.at() <= text.len(), "{error:?} in {text}"),
        }
    }
}
