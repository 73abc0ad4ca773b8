//! Views evaluated over the fixture vault: the syntax page's example, sorting, limits, groups,
//! every built-in summary, a custom summary, and formula errors that stay in their cells.

use super::super::env::{FileFacts, Row};
use super::super::eval::{Budget, EvalError};
use super::super::model::Base;
use super::super::run::{ViewResult, run_view};
use super::super::value::Value;
use super::base_file::SYNTAX_EXAMPLE;
use super::{num, text, vault};

fn run(yaml: &str, view: usize) -> ViewResult {
    let vault = vault();
    let base = Base::parse(yaml).expect("reads");
    let rows: Vec<&dyn Row> = vault.files.iter().map(|f| f.as_ref() as &dyn Row).collect();
    run_view(
        &base,
        &base.views[view],
        &rows,
        &vault,
        0..usize::MAX,
        &Budget::unbounded(),
    )
    .expect("within its budget")
}

fn paths(result: &ViewResult) -> Vec<&str> {
    result.rows.iter().map(|row| row.path.as_str()).collect()
}

fn summary(result: &ViewResult, column: &str, name: &str) -> Result<Value, EvalError> {
    result
        .summaries
        .iter()
        .find(|s| s.column == column && s.name == name)
        .map(|s| s.value.clone())
        .unwrap_or(Ok(Value::Null))
}

#[test]
fn the_syntax_page_example_keeps_only_dune() {
    let result = run(SYNTAX_EXAMPLE, 0);
    assert_eq!(paths(&result), vec!["Books/Dune.md"]);
    assert_eq!(result.matched, 1);
    let cells: Vec<(&str, Value)> = result.rows[0]
        .cells
        .iter()
        .map(|(id, cell)| (id.as_str(), cell.clone().expect("computes")))
        .collect();
    assert_eq!(
        cells,
        vec![
            ("file.name", text("Dune.md")),
            ("file.ext", text("md")),
            ("note.age", num(5.0)),
            ("formula.ppu", text("2.50")),
            ("formula.formatted_price", text("12.50 dollars")),
        ]
    );
    let headers: Vec<&str> = result
        .columns
        .iter()
        .map(|c| c.display_name.as_str())
        .collect();
    assert_eq!(
        headers,
        vec!["file.name", "Extension", "note.age", "formula.ppu", "Price"]
    );
    assert_eq!(result.groups.len(), 1);
    assert_eq!(result.groups[0].key, num(5.0));
    // The ppu formula gives text ("2.50"), which Average reads as the number it holds.
    assert_eq!(summary(&result, "formula.ppu", "Average"), Ok(num(2.5)));
}

const BOOKS: &str = r#"
filters: 'file.hasTag("book")'
formulas:
  value_score: 'rating * 10'
  bad: 'price.nope()'
  uses_bad: 'formula.bad + 1'
summaries:
  customAverage: 'values.mean().round(3)'
views:
  - type: table
    name: By price
    sort:
      - property: price
        direction: DESC
    order: [file.basename, price, formula.value_score, formula.bad, formula.uses_bad]
    summaries:
      price: Sum
      note.rating: customAverage
      status: Unique
      completed: Empty
  - type: table
    name: Top two
    limit: 2
    sort:
      - property: price
        direction: DESC
    order: [file.basename]
  - type: cards
    name: By status
    groupBy:
      property: status
      direction: ASC
    sort:
      - property: file.name
        direction: ASC
    order: [file.basename]
    summaries:
      price: Max
"#;

#[test]
fn sorting_summaries_and_failing_formulas() {
    let result = run(BOOKS, 0);
    assert_eq!(
        paths(&result),
        vec!["Textbook.md", "Books/Dune.md", "Required Reading/Essay.md"]
    );
    let first = &result.rows[0].cells;
    assert_eq!(first[0].1, Ok(text("Textbook")));
    assert_eq!(first[1].1, Ok(num(40.0)));
    assert_eq!(first[2].1, Ok(num(50.0)));
    assert!(
        matches!(first[3].1, Err(EvalError::UnknownMethod { .. })),
        "{first:?}"
    );
    assert!(matches!(first[4].1, Err(EvalError::FormulaFailed { ref name, .. }) if name == "bad"));
    assert_eq!(summary(&result, "price", "Sum"), Ok(num(54.5)));
    assert_eq!(
        summary(&result, "note.rating", "customAverage"),
        Ok(num(3.667))
    );
    assert_eq!(summary(&result, "status", "Unique"), Ok(num(3.0)));
    assert_eq!(summary(&result, "completed", "Empty"), Ok(num(2.0)));
}

#[test]
fn limit_keeps_the_first_rows_after_sorting() {
    let result = run(BOOKS, 1);
    assert_eq!(paths(&result), vec!["Textbook.md", "Books/Dune.md"]);
    assert_eq!(result.matched, 3);
}

#[test]
fn groups_follow_their_direction_and_carry_summaries() {
    let result = run(BOOKS, 2);
    let keys: Vec<Value> = result.groups.iter().map(|g| g.key.clone()).collect();
    assert_eq!(keys, vec![text("done"), text("reading"), text("todo")]);
    assert_eq!(result.groups[0].rows, vec![0]);
    assert_eq!(paths(&result)[0], "Textbook.md");
    assert_eq!(result.groups[1].summaries[0].value, Ok(num(12.5)));
    let descending = BOOKS.replace("direction: ASC\n    sort", "direction: DESC\n    sort");
    let reversed = run(&descending, 2);
    let keys: Vec<Value> = reversed.groups.iter().map(|g| g.key.clone()).collect();
    assert_eq!(keys, vec![text("todo"), text("reading"), text("done")]);
}

#[test]
fn every_built_in_summary() {
    use super::super::summaries::built_in;
    use super::super::value::{DateValue, Duration};
    use jiff::civil::date;
    let numbers = [num(40.0), num(12.5), num(2.0), Value::Null, text("x")];
    let count = |values: &[Value]| values.len();
    let get = |name: &str, values: &[Value]| built_in(name, values, count).expect("built in");
    assert_eq!(get("Sum", &numbers), num(54.5));
    assert_eq!(get("Average", &numbers), num(54.5 / 3.0));
    assert_eq!(get("Min", &numbers), num(2.0));
    assert_eq!(get("Max", &numbers), num(40.0));
    assert_eq!(get("Range", &numbers), num(38.0));
    assert_eq!(get("Median", &numbers), num(12.5));
    assert_eq!(
        get("Median", &[num(1.0), num(2.0), num(3.0), num(10.0)]),
        num(2.5)
    );
    assert_eq!(
        get(
            "Stddev",
            &[
                num(2.0),
                num(4.0),
                num(4.0),
                num(4.0),
                num(5.0),
                num(5.0),
                num(7.0),
                num(9.0)
            ]
        ),
        num(2.0)
    );
    let days = [
        Value::Date(DateValue::day(date(2025, 1, 3))),
        Value::Date(DateValue::day(date(2025, 1, 1))),
        Value::Null,
    ];
    assert_eq!(get("Earliest", &days), days[1]);
    assert_eq!(get("Latest", &days), days[0]);
    assert_eq!(
        get("Range", &days),
        Value::Duration(Duration {
            months: 0.0,
            millis: 2.0 * 86_400_000.0
        })
    );
    let checks = [
        Value::Bool(true),
        Value::Bool(false),
        Value::Bool(true),
        Value::Null,
    ];
    assert_eq!(get("Checked", &checks), num(2.0));
    assert_eq!(get("Unchecked", &checks), num(1.0));
    assert_eq!(get("Empty", &checks), num(1.0));
    assert_eq!(get("Filled", &checks), num(3.0));
    assert_eq!(get("Unique", &checks), num(3.0));
    assert_eq!(get("Average", &[]), Value::Null);
    assert!(built_in("customAverage", &numbers, count).is_none());
}

#[test]
fn an_unknown_summary_is_an_error_in_its_cell() {
    let yaml =
        "views:\n  - type: table\n    order: [price]\n    summaries:\n      price: Mystery\n";
    let result = run(yaml, 0);
    assert_eq!(
        result.summaries[0].value,
        Err(EvalError::UnknownSummary {
            name: "Mystery".into()
        })
    );
}

#[test]
fn rows_without_a_sort_keep_their_order_and_empty_values_sort_last() {
    let yaml = "views:\n  - type: table\n    sort:\n      - property: price\n        direction: ASC\n    order: [price]\n";
    let result = run(yaml, 0);
    let prices: Vec<Value> = result
        .rows
        .iter()
        .map(|r| r.cells[0].1.clone().unwrap_or(Value::Null))
        .collect();
    assert_eq!(&prices[..4], &[num(2.0), num(3.0), num(12.5), num(40.0)]);
    assert!(prices[4..].iter().all(|p| *p == Value::Null));
    let plain = run("views:\n  - type: table\n", 0);
    let facts: Vec<FileFacts> = vault().files.iter().map(|f| (**f).clone()).collect();
    let expected: Vec<&str> = facts.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths(&plain), expected);
}
