//! A filter tree of `and`/`or`/`not` selects exactly what the same statement written with
//! `&&`, `||` and `!` selects, for every row of the fixture vault (property test).

use proptest::prelude::*;

use super::super::env::Row;
use super::super::eval::{Context, evaluate};
use super::super::model::{Base, Filter};
use super::super::run::passes;
use super::super::syntax::parse;
use super::vault;

/// Statements with different answers across the vault's files.
const LEAVES: &[&str] = &[
    "file.hasTag(\"book\")",
    "price > 5",
    "status == \"done\"",
    "file.inFolder(\"Books\")",
    "completed",
    "missing.nope()",
];

#[derive(Debug, Clone)]
enum Tree {
    Leaf(usize),
    And(Vec<Tree>),
    Or(Vec<Tree>),
    Not(Vec<Tree>),
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = (0..LEAVES.len()).prop_map(Tree::Leaf);
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Tree::And),
            prop::collection::vec(inner.clone(), 0..3).prop_map(Tree::Or),
            prop::collection::vec(inner, 0..3).prop_map(Tree::Not),
        ]
    })
}

fn yaml(tree: &Tree, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let (key, items) = match tree {
        Tree::Leaf(at) => {
            out.push_str(&format!("{pad}- '{}'\n", LEAVES[*at]));
            return;
        }
        Tree::And(items) => ("and", items),
        Tree::Or(items) => ("or", items),
        Tree::Not(items) => ("not", items),
    };
    if items.is_empty() {
        out.push_str(&format!("{pad}- {key}: []\n"));
        return;
    }
    out.push_str(&format!("{pad}- {key}:\n"));
    for item in items {
        yaml(item, indent + 4, out);
    }
}

/// The same tree as one statement. A leaf that fails to evaluate does not hold in a filter, so
/// it is wrapped to be false when it fails; an empty `and` holds and an empty `or` does not.
fn statement(tree: &Tree) -> String {
    let join = |items: &[Tree], op: &str, empty: &str| {
        if items.is_empty() {
            return empty.to_owned();
        }
        let parts: Vec<String> = items.iter().map(statement).collect();
        format!("({})", parts.join(op))
    };
    match tree {
        Tree::Leaf(at) if LEAVES[*at].contains("nope") => "false".to_owned(),
        Tree::Leaf(at) => format!("({})", LEAVES[*at]),
        Tree::And(items) => join(items, " && ", "true"),
        Tree::Or(items) => join(items, " || ", "false"),
        Tree::Not(items) => format!("!{}", join(items, " || ", "false")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn filter_trees_equal_their_statements(tree in tree()) {
        let mut text = String::from("filters:\n  and:\n");
        yaml(&tree, 4, &mut text);
        let base = Base::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let filter: Filter = base.filters.clone().ok_or_else(|| TestCaseError::fail("no filter"))?;
        let written = statement(&tree);
        let expr = parse(&written).map_err(|e| TestCaseError::fail(format!("{e}: {written}")))?;
        let vault = vault();
        for file in &vault.files {
            let context = Context { env: &vault, row: Some(file.as_ref() as &dyn Row), formulas: None, values: None };
            let by_tree = passes(&filter, &context);
            let by_statement = evaluate(&expr, &context).is_ok_and(|v| v.is_truthy());
            prop_assert_eq!(by_tree, by_statement, "{} on {}", written, file.path);
        }
    }
}
