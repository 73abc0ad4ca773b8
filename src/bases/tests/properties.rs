//! Note properties as the Properties page writes them, read into values: text, links, lists,
//! numbers, checkboxes, dates, dates with times, tags, and the JSON form; and values written back
//! as JSON.

use jiff::civil::date;
use jiff::tz::TimeZone;
use serde_json::{Value as Json, json};

use super::super::property::{from_property, to_json};
use super::super::value::{DateValue, Link, Value};

fn read(yaml: &str) -> Vec<(String, Value)> {
    let map = crate::markdown::frontmatter::parse_properties(yaml).expect("valid properties");
    map.iter()
        .map(|(key, value)| (key.clone(), from_property(value, "Film.md", &TimeZone::UTC)))
        .collect()
}

fn get<'a>(properties: &'a [(String, Value)], key: &str) -> &'a Value {
    properties
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value)
        .unwrap_or(&Value::Null)
}

fn link(target: &str) -> Value {
    Value::Link(Link {
        target: target.into(),
        display: None,
        from: "Film.md".into(),
    })
}

#[test]
fn text_and_list_properties() {
    let text = read("title: A New Hope\nlink: \"[[Episode IV]]\"\nurl: https://www.example.com\n");
    assert_eq!(get(&text, "title"), &Value::String("A New Hope".into()));
    assert_eq!(get(&text, "link"), &link("Episode IV"));
    assert_eq!(
        get(&text, "url"),
        &Value::String("https://www.example.com".into())
    );
    let lists = read(
        "cast:\n  - Mark Hamill\n  - Harrison Ford\n  - Carrie Fisher\nlinks:\n  - \"[[Link]]\"\n  - \"[[Link2]]\"\n",
    );
    assert_eq!(
        get(&lists, "cast"),
        &Value::List(vec![
            Value::String("Mark Hamill".into()),
            Value::String("Harrison Ford".into()),
            Value::String("Carrie Fisher".into()),
        ])
    );
    assert_eq!(
        get(&lists, "links"),
        &Value::List(vec![link("Link"), link("Link2")])
    );
}

#[test]
fn numbers_checkboxes_dates_and_tags() {
    let values = read(
        "year: 1977\npie: 3.14\nfavorite: true\nreply: false\nlast:\ndate: 2020-08-21\ntime: 2020-08-21T10:30:00\ntags:\n  - journal\n  - personal\n",
    );
    assert_eq!(get(&values, "year"), &Value::Number(1977.0));
    assert_eq!(
        get(&values, "pie"),
        &Value::Number("3.14".parse().expect("number"))
    );
    assert_eq!(get(&values, "favorite"), &Value::Bool(true));
    assert_eq!(get(&values, "reply"), &Value::Bool(false));
    assert_eq!(get(&values, "last"), &Value::Null);
    assert_eq!(
        get(&values, "date"),
        &Value::Date(DateValue::day(date(2020, 8, 21)))
    );
    assert_eq!(
        get(&values, "time"),
        &Value::Date(DateValue::timed(date(2020, 8, 21).at(10, 30, 0, 0)))
    );
    assert_eq!(
        get(&values, "tags"),
        &Value::List(vec![
            Value::String("journal".into()),
            Value::String("personal".into())
        ])
    );
}

#[test]
fn json_properties_read_the_same() {
    let values = read("{\n  \"tags\": [\"journal\"],\n  \"publish\": false\n}\n");
    assert_eq!(get(&values, "publish"), &Value::Bool(false));
    assert_eq!(
        get(&values, "tags"),
        &Value::List(vec![Value::String("journal".into())])
    );
}

#[test]
fn values_write_back_as_json() {
    let written: Json = to_json(&Value::List(vec![
        Value::Date(DateValue::day(date(2020, 8, 21))),
        Value::Link(Link {
            target: "A".into(),
            display: Some("b".into()),
            from: String::new(),
        }),
        Value::Number(f64::INFINITY),
        Value::Object(vec![("k".into(), Value::Bool(true))]),
    ]));
    assert_eq!(
        written,
        json!(["2020-08-21", "[[A|b]]", "Infinity", {"k": true}])
    );
}
