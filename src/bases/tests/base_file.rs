//! Reading `.base` YAML: the syntax page's full example, the filter shapes, the code-block example,
//! and the errors (bad YAML, bad expressions with their place, unknown formulas, circles).

use super::super::model::{Base, BaseError, Filter, GroupBy, PropertyId, SortKey};

pub(super) const SYNTAX_EXAMPLE: &str = r#"
filters:
  or:
    - file.hasTag("tag")
    - and:
        - file.hasTag("book")
        - file.hasLink("Textbook")
    - not:
        - file.hasTag("book")
        - file.inFolder("Required Reading")
formulas:
  formatted_price: 'if(price, price.toFixed(2) + " dollars")'
  ppu: "(price / age).toFixed(2)"
properties:
  status:
    displayName: Status
  formula.formatted_price:
    displayName: "Price"
  file.ext:
    displayName: Extension
summaries:
  customAverage: 'values.mean().round(3)'
views:
  - type: table
    name: "My table"
    limit: 10
    groupBy:
      property: note.age
      direction: DESC
    filters:
      and:
        - 'status != "done"'
        - or:
            - "formula.ppu > 5"
            - "price > 2.1"
    order:
      - file.name
      - file.ext
      - note.age
      - formula.ppu
      - formula.formatted_price
    summaries:
      formula.ppu: Average
"#;

#[test]
fn the_syntax_page_example_reads_whole() {
    let base = Base::parse(SYNTAX_EXAMPLE).expect("reads");
    let Some(Filter::Or(groups)) = &base.filters else {
        panic!("global filter is an or: {:?}", base.filters);
    };
    assert_eq!(groups.len(), 3);
    assert!(matches!(&groups[0], Filter::Statement(e) if e.source == r#"file.hasTag("tag")"#));
    assert!(matches!(&groups[1], Filter::And(items) if items.len() == 2));
    assert!(matches!(&groups[2], Filter::Not(items) if items.len() == 2));
    let names: Vec<&str> = base.formulas.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.len(), 2);
    assert!(names.contains(&"ppu") && names.contains(&"formatted_price"));
    assert_eq!(base.display_name("status"), Some("Status"));
    assert_eq!(base.display_name("note.status"), Some("Status"));
    assert_eq!(base.display_name("formula.formatted_price"), Some("Price"));
    assert_eq!(base.display_name("file.ext"), Some("Extension"));
    assert_eq!(base.summaries.len(), 1);
    assert_eq!(base.summaries[0].0, "customAverage");
    let view = &base.views[0];
    assert_eq!(view.kind, "table");
    assert_eq!(view.name, "My table");
    assert_eq!(view.limit, Some(10));
    assert_eq!(
        view.group_by,
        Some(GroupBy {
            property: PropertyId::Note("age".into()),
            descending: true
        })
    );
    assert!(matches!(&view.filters, Some(Filter::And(items)) if items.len() == 2));
    assert_eq!(view.order.len(), 5);
    assert_eq!(
        view.summaries,
        vec![("formula.ppu".to_owned(), "Average".to_owned())]
    );
    assert_eq!(base.view(None).map(|v| v.name.as_str()), Some("My table"));
    assert_eq!(base.view(Some("My table")).map(|v| v.limit), Some(Some(10)));
    assert!(base.view(Some("Other")).is_none());
}

#[test]
fn the_code_block_example_reads() {
    let base = Base::parse(
        "filters:\n  and:\n    - file.hasTag(\"example\")\nviews:\n  - type: table\n    name: Table\n",
    )
    .expect("reads");
    assert!(matches!(&base.filters, Some(Filter::And(items)) if items.len() == 1));
    assert_eq!(base.views[0].name, "Table");
    assert!(base.views[0].order.is_empty());
}

#[test]
fn a_filter_may_be_a_single_statement() {
    let base = Base::parse("filters: 'file.ext == \"md\"'\n").expect("reads");
    assert!(matches!(&base.filters, Some(Filter::Statement(_))));
    let empty = Base::parse("").expect("an empty base reads");
    assert_eq!(empty, Base::default());
}

#[test]
fn sort_and_plugin_keys_are_read() {
    let base = Base::parse(
        "views:\n  - type: map\n    name: Places\n    sort:\n      - property: file.name\n        direction: DESC\n      - property: price\n        direction: ASC\n    coordinates: note.coordinates\n    zoom: 4\n",
    )
    .expect("reads");
    let view = &base.views[0];
    assert_eq!(
        view.sort,
        vec![
            SortKey {
                property: PropertyId::File("name".into()),
                descending: true
            },
            SortKey {
                property: PropertyId::Note("price".into()),
                descending: false
            },
        ]
    );
    assert_eq!(view.extra.get("zoom"), Some(&serde_json::json!(4)));
    assert_eq!(
        view.extra.get("coordinates"),
        Some(&serde_json::json!("note.coordinates"))
    );
}

#[test]
fn formulas_come_after_the_formulas_they_use() {
    let base = Base::parse(
        "formulas:\n  total: 'formula.net + formula.tax'\n  tax: 'formula.net * 0.2'\n  net: 'price * quantity'\n",
    )
    .expect("reads");
    let names: Vec<&str> = base.formulas.iter().map(|f| f.name.as_str()).collect();
    let at = |name: &str| names.iter().position(|n| *n == name).expect("present");
    assert!(
        at("net") < at("tax") && at("tax") < at("total"),
        "{names:?}"
    );
}

#[test]
fn a_circle_of_formulas_is_named() {
    let error =
        Base::parse("formulas:\n  a: 'formula.b + 1'\n  b: 'formula[\"a\"] + 1'\n  c: '1'\n")
            .expect_err("a circle");
    assert_eq!(
        error,
        BaseError::FormulaCycle {
            names: vec!["a".into(), "b".into()]
        }
    );
    assert!(error.to_string().contains("a, b"));
    let downstream =
        Base::parse("formulas:\n  a: 'formula.b'\n  b: 'formula.a'\n  user: 'formula.a + 1'\n")
            .expect_err("a circle with a user");
    assert_eq!(
        downstream,
        BaseError::FormulaCycle {
            names: vec!["a".into(), "b".into()]
        }
    );
    let itself = Base::parse("formulas:\n  me: 'formula.me'\n").expect_err("self");
    assert_eq!(
        itself,
        BaseError::FormulaCycle {
            names: vec!["me".into()]
        }
    );
}

#[test]
fn errors_name_their_place() {
    let unknown = Base::parse("views:\n  - type: table\n    filters: 'formula.nope > 1'\n")
        .expect_err("unknown formula");
    assert!(
        matches!(unknown, BaseError::UnknownFormula { ref place, ref name } if place == "views[0].filters" && name == "nope")
    );
    let bad = Base::parse("formulas:\n  broken: 'price +'\n").expect_err("bad expression");
    match bad {
        BaseError::Expression {
            place,
            text,
            source,
        } => {
            assert_eq!(place, "formulas.broken");
            assert_eq!(text, "price +");
            assert_eq!(source.at(), 7);
        }
        other => panic!("{other:?}"),
    }
    let nested = Base::parse("filters:\n  and:\n    - 'a == 1'\n    - or:\n        - 'b =='\n")
        .expect_err("bad nested statement");
    assert!(
        nested.to_string().starts_with("filters.and[1].or[0]"),
        "{nested}"
    );
    let yaml = Base::parse("views: [\n").expect_err("bad yaml");
    assert!(matches!(yaml, BaseError::Yaml { .. }));
    let group = Base::parse("filters:\n  xor:\n    - 'a'\n").expect_err("unknown group");
    assert!(group.to_string().contains("xor"));
}

#[test]
fn deeply_nested_filter_groups_are_refused() {
    let nested = |depth: usize| {
        format!(
            "filters: {}'true'{}\n",
            "{and: [".repeat(depth),
            "]}".repeat(depth)
        )
    };
    assert!(Base::parse(&nested(20)).is_ok());
    assert!(Base::parse(&nested(200)).is_err());
}
