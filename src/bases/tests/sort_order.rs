//! Sorting's order is total over values of every kind, tricky text included ("10", "2", "1a",
//! "NaN", mixed case), since Rust's sort may panic on an order that is not (property test).

use std::cmp::Ordering;

use proptest::prelude::*;

use super::super::eval::sort_order;
use super::super::value::{DateValue, Duration, Link, Value};
use super::vault;

fn pool() -> Vec<Value> {
    let text = |s: &str| Value::String(s.to_owned());
    vec![
        Value::Null,
        Value::Bool(true),
        Value::Bool(false),
        Value::Number(2.0),
        Value::Number(f64::NAN),
        Value::Number(-1.0),
        text("10"),
        text("2"),
        text("1a"),
        text("NaN"),
        text("b"),
        text("B"),
        text(""),
        text(" 3 "),
        Value::Date(DateValue::day(jiff::civil::date(2025, 1, 1))),
        Value::Duration(Duration {
            months: 0.0,
            millis: f64::NAN,
        }),
        Value::Duration(Duration {
            months: 1.0,
            millis: 0.0,
        }),
        Value::List(vec![Value::Number(1.0)]),
        Value::List(vec![]),
        Value::Object(vec![("a".into(), Value::Null)]),
        Value::Link(Link {
            target: "Textbook".into(),
            display: None,
            from: String::new(),
        }),
        Value::File("Textbook.md".into()),
        Value::Icon("plus".into()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn sort_order_is_total(a in 0..23usize, b in 0..23usize, c in 0..23usize) {
        let vault = vault();
        let values = pool();
        let (x, y, z) = (&values[a], &values[b], &values[c]);
        let xy = sort_order(&vault, x, y);
        prop_assert_eq!(xy, sort_order(&vault, y, x).reverse(), "{:?} {:?}", x, y);
        let yz = sort_order(&vault, y, z);
        let xz = sort_order(&vault, x, z);
        if xy != Ordering::Greater && yz != Ordering::Greater {
            prop_assert!(xz != Ordering::Greater, "{:?} <= {:?} <= {:?}", x, y, z);
        }
    }
}

#[test]
fn sorting_the_pool_does_not_panic() {
    let vault = vault();
    let mut values = pool();
    values.extend(pool());
    values.sort_by(|a, b| sort_order(&vault, a, b));
    assert!(values.last().is_some_and(Value::is_empty));
}
