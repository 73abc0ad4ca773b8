//! The examples of the Bases syntax, Formulas and Map view pages: operators, property
//! references, `this`, links, literals and the formula examples, over `Books/Dune.md`.

use super::super::value::{DateValue, Value};
use super::{eval, eval_in, list, no, num, text, vault, yes};
use jiff::civil::date;

#[test]
fn property_references() {
    assert_eq!(eval("note.price"), num(12.5));
    assert_eq!(eval(r#"note["price"]"#), num(12.5));
    assert_eq!(eval("price"), num(12.5));
    assert_eq!(eval("property[0]"), num(10.0));
    assert_eq!(eval("obj.subprop"), text("inner"));
    assert_eq!(eval(r#"obj["subprop"]"#), text("inner"));
    assert_eq!(eval("missing"), Value::Null);
    yes(r#"file.ext == "md""#);
    let png = eval_in(&vault(), "attachments/cover.png", r#"file.ext == "md""#);
    assert_eq!(png, Ok(Value::Bool(false)));
}

#[test]
fn this_is_the_author_page() {
    assert_eq!(eval("this.file.folder"), text("Authors"));
    assert_eq!(eval("this.file.name"), text("Frank Herbert.md"));
    assert_eq!(eval("this.icon"), text("feather"));
    yes("author == this");
    yes("authors.contains(this)");
    yes("file.hasLink(this.file)");
    no("file == this");
}

#[test]
fn arithmetic_operators() {
    assert_eq!(eval("radius * (2 * 3.14)"), num(12.56));
    assert_eq!(eval("7 % 3"), num(1.0));
    assert_eq!(eval("1 / 0"), num(f64::INFINITY));
    assert_eq!(eval("2 + 3 * 4"), num(14.0));
    assert_eq!(eval("(2 + 3) * 4"), num(20.0));
    assert_eq!(eval("-price + 1"), num(-11.5));
    assert_eq!(eval("price * missing"), Value::Null);
}

#[test]
fn date_arithmetic() {
    let at = |d: jiff::civil::DateTime| Value::Date(DateValue::timed(d));
    assert_eq!(
        eval(r#"now() + "1 day""#),
        at(date(2025, 6, 2).at(12, 0, 0, 0))
    );
    yes(r#"file.mtime > now() - "1 week""#);
    assert_eq!(
        eval(r#"date("2024-12-01") + "1M" + "4h" + "3m""#),
        at(date(2025, 1, 1).at(4, 3, 0, 0))
    );
    assert_eq!(
        eval("now() - file.ctime"),
        num(31.0 * 86_400_000.0 + 3.0 * 3_600_000.0)
    );
    assert_eq!(eval("(now() + \"1d\") - now()"), num(86_400_000.0));
    assert_eq!(
        eval("datetime.date()"),
        Value::Date(DateValue::day(date(2025, 5, 27)))
    );
    assert_eq!(eval(r#"datetime.format("YYYY-MM-DD")"#), text("2025-05-27"));
    assert_eq!(
        eval(r#"today() + "7d""#),
        Value::Date(DateValue::day(date(2025, 6, 8)))
    );
    assert_eq!(eval("now().hour"), num(12.0));
    assert_eq!(
        eval(r#"date("2025-01-31") + "1M""#),
        Value::Date(DateValue::day(date(2025, 2, 28)))
    );
    assert_eq!(
        eval(r#"date("2025-03-10") - "2 weeks""#),
        Value::Date(DateValue::day(date(2025, 2, 24)))
    );
    assert_eq!(
        eval(r#"date("2025-01-01") + "1y""#),
        Value::Date(DateValue::day(date(2026, 1, 1)))
    );
    assert_eq!(
        eval(r#"date("2025-01-01 00:00") + "90s""#),
        at(date(2025, 1, 1).at(0, 1, 30, 0))
    );
}

#[test]
fn comparison_and_boolean_operators() {
    yes("price > 2.1");
    yes(r#"status != "done""#);
    no(r#"status == "done""#);
    yes("age < 18");
    no("price > 100");
    yes(r#"started < "2025-06-01""#);
    yes(r#"started == "2025-05-27""#);
    yes("!completed");
    yes("price > 0 && quantity > 0");
    yes("urgent || important");
    assert_eq!(eval(r#"missing || "fallback""#), text("fallback"));
    no("missing > 3");
    yes(r#""b" > "a""#);
    yes(r#"rating == "4""#);
    yes(r#"rating >= "4""#);
    no(r#"rating == "four""#);
}

#[test]
fn formulas_page_examples() {
    assert_eq!(eval("price * quantity"), num(25.0));
    assert_eq!(
        eval(r#"file.name + " - " + description"#),
        text("Dune.md - desert planet")
    );
    assert_eq!(eval("price + tax"), num(14.0));
    assert_eq!(eval("price - discount"), num(10.0));
    assert_eq!(eval("price / quantity"), num(6.25));
    assert_eq!(eval("(part / whole) * 100"), num(25.0));
    assert_eq!(eval(r#"status == "Done""#), Value::Bool(false));
    yes(r#"status != "Done""#);
    yes("file.mtime > now() - '7d'");
    assert_eq!(
        eval(r#"if(price, "$" + price.toFixed(2), "")"#),
        text("$12.50")
    );
    assert_eq!(eval("file.name.lower()"), text("dune.md"));
    yes(r#"tags.contains("urgent")"#);
    assert_eq!(eval(r#"due_date.format("YYYY-MM-DD")"#), text("2025-05-30"));
    assert_eq!(
        eval(r#"start_date + "2w""#),
        Value::Date(DateValue::day(date(2025, 5, 15)))
    );
    assert_eq!(
        eval(r#"if(due_date < now() && status != "Done", "Overdue", "")"#),
        text("Overdue")
    );
    assert_eq!(eval("tasks.length"), num(3.0));
    assert_eq!(eval("(impact * urgency) / effort"), num(6.0));
    assert_eq!(
        eval(r#"first_name + " " + last_name"#),
        text("Frank Herbert")
    );
}

#[test]
fn literals_of_each_data_type() {
    assert_eq!(eval(r#""hello""#), text("hello"));
    assert_eq!(eval("'world'"), text("world"));
    assert_eq!(eval("42"), num(42.0));
    assert_eq!(eval("3.14"), num("3.14".parse().expect("a number")));
    assert_eq!(eval("(2 + 2)"), num(4.0));
    assert_eq!(eval("(2.5)"), num(2.5));
    assert_eq!(eval("true"), Value::Bool(true));
    assert_eq!(eval("false"), Value::Bool(false));
    assert_eq!(eval("null"), Value::Null);
    assert_eq!(eval("[1, 2, 3]"), list(vec![num(1.0), num(2.0), num(3.0)]));
    assert_eq!(
        eval(r#"{"name": "value"}"#),
        Value::Object(vec![("name".into(), text("value"))])
    );
}

#[test]
fn syntax_page_formulas() {
    assert_eq!(
        eval(r#"if(price, price.toFixed(2) + " dollars")"#),
        text("12.50 dollars")
    );
    assert_eq!(eval("(price / age).toFixed(2)"), text("2.50"));
}

#[test]
fn map_view_examples() {
    assert_eq!(
        eval("[latitude, longitude]"),
        list(vec![num(48.85837), num(2.294481)])
    );
    assert_eq!(
        eval("list(type)[0].asFile().properties.icon"),
        text("utensils")
    );
    let maps = eval(
        r#"link("https://www.google.com/maps/search/" + file.name.replace(" ","+"),"Google Maps")"#,
    );
    match maps {
        Value::Link(link) => {
            assert_eq!(link.target, "https://www.google.com/maps/search/Dune.md");
            assert_eq!(link.display.as_deref(), Some("Google Maps"));
        }
        other => panic!("not a link: {other:?}"),
    }
}

#[test]
fn links_compare_by_the_file_they_resolve_to() {
    yes(r#"author == link("Authors/Frank Herbert")"#);
    yes(r#"author == file("Authors/Frank Herbert.md")"#);
    yes(r#"author == "Frank Herbert""#);
    no("author == link(\"Textbook\")");
    yes(r#"[link("Textbook"), author].unique().length == 2"#);
    yes(r#"[link("Textbook"), link("Textbook.md")].unique().length == 1"#);
}

#[test]
fn formulas_read_other_formulas() {
    use super::super::env::Row;
    use super::super::eval::{Context, FormulaCells, evaluate};
    use super::super::syntax::parse;
    let vault = vault();
    let row = vault.files[0].clone();
    let mut formulas = FormulaCells::new();
    formulas.insert("price_per_unit".into(), Ok(num(6.25)));
    formulas.insert("Owned".into(), Ok(num(2.6)));
    let context = Context {
        env: &vault,
        row: Some(row.as_ref() as &dyn Row),
        formulas: Some(&formulas),
        values: None,
    };
    let run = |source: &str| evaluate(&parse(source).expect("parses"), &context);
    assert_eq!(run("formula.price_per_unit * 1.1"), Ok(num(6.25 * 1.1)));
    assert_eq!(run("monthlyUses * formula.Owned.round()"), Ok(num(30.0)));
    assert_eq!(run("formula.undefined"), Ok(Value::Null));
}

#[test]
fn bare_now_reads_as_the_function() {
    assert_eq!(eval("now.time()"), text("12:00:00"));
    assert_eq!(eval("today.format(\"YYYY-MM-DD\")"), text("2025-06-01"));
}
