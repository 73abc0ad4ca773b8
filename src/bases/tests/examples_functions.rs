//! Every example of the Functions page, for each type, with results worked out from the
//! definitions over the fixture vault (the row is `Books/Dune.md`).

use super::super::value::{DateValue, Link, Value};
use super::{eval, list, no, num, text, yes};
use jiff::civil::date;

#[test]
fn global_functions() {
    assert_eq!(
        eval(r#"escapeHTML("<b>&'\"")"#),
        text("&lt;b&gt;&amp;&#39;&quot;")
    );
    assert_eq!(
        eval(r#"date("2025-01-01 12:00:00")"#),
        Value::Date(DateValue::timed(date(2025, 1, 1).at(12, 0, 0, 0)))
    );
    assert_eq!(
        eval(r#"date("2025-05-27")"#),
        Value::Date(DateValue::day(date(2025, 5, 27)))
    );
    assert_eq!(
        eval("now() + (duration('1d') * 2)"),
        Value::Date(DateValue::timed(date(2025, 6, 3).at(12, 0, 0, 0)))
    );
    assert_eq!(eval("duration('5h') * 2"), eval("duration('10h')"));
    assert_eq!(
        eval(r#"file(link("[[Textbook]]"))"#),
        Value::File("Textbook.md".into())
    );
    assert_eq!(
        eval(r#"file("Textbook.md")"#),
        Value::File("Textbook.md".into())
    );
    assert_eq!(eval(r#"file("Nowhere.md")"#), Value::Null);
    assert_eq!(eval(r#"html("<i>x</i>")"#), Value::Html("<i>x</i>".into()));
    assert_eq!(
        eval(r#"if(isModified, "Modified", "Unmodified")"#),
        text("Modified")
    );
    assert_eq!(eval(r#"if(completed, "Done")"#), Value::Null);
    // `image-property` subtracts two missing properties: null, and `image(null)` is null.
    assert_eq!(eval("image(image-property)"), Value::Null);
    assert_eq!(
        eval(r#"image("https://obsidian.md/images/obsidian-logo-gradient.svg")"#),
        Value::Image("https://obsidian.md/images/obsidian-logo-gradient.svg".into())
    );
    assert_eq!(
        eval(r#"icon("arrow-right")"#),
        Value::Icon("arrow-right".into())
    );
    assert_eq!(eval(r#"list("value")"#), list(vec![text("value")]));
    assert_eq!(eval("list(tasks)").to_text(), "a, b, c");
    assert_eq!(eval("list(missing).length"), num(0.0));
    assert_eq!(eval("max(3, 9, 4)"), num(9.0));
    assert_eq!(eval("min(3, 9, 4)"), num(3.0));
    assert_eq!(
        eval("now()"),
        Value::Date(DateValue::timed(date(2025, 6, 1).at(12, 0, 0, 0)))
    );
    assert_eq!(
        eval("today()"),
        Value::Date(DateValue::day(date(2025, 6, 1)))
    );
    assert_eq!(eval(r#"number("3.4")"#), num(3.4));
    assert_eq!(eval("number(true)"), num(1.0));
    assert_eq!(eval(r#"number(date("1970-01-02"))"#), num(86_400_000.0));
    assert!(super::eval_in(&super::vault(), "Books/Dune.md", r#"number("x")"#).is_err());
    assert_eq!(eval("random()"), num(0.5));
}

#[test]
fn link_function() {
    let made = eval(r#"link("Textbook", "display")"#);
    assert_eq!(
        made,
        Value::Link(Link {
            target: "Textbook".into(),
            display: Some("display".into()),
            from: "Books/Dune.md".into(),
        })
    );
    assert_eq!(eval(r#"link("filename", icon("plus"))"#).to_text(), "plus");
    assert_eq!(
        eval(r#"link("https://obsidian.md")"#).to_text(),
        "https://obsidian.md"
    );
    assert_eq!(
        eval("link(file.ctime.date().toString())").to_text(),
        "2025-05-01"
    );
    yes(r#"link("Textbook") == link("[[Textbook.md]]")"#);
    no(r#"link("Nowhere") == link("Textbook")"#);
    yes(r#"link("Nowhere") == link("Nowhere")"#);
}

#[test]
fn any_type_functions() {
    yes("1.isTruthy()");
    no("0.isTruthy()");
    yes(r#""example".isType("string")"#);
    yes("true.isType(\"boolean\")");
    yes("tasks.isType(\"list\")");
    yes("author.isType(\"link\")");
    yes("started.isType(\"date\")");
    assert_eq!(eval("123.toString()"), text("123"));
    assert_eq!(eval("(0.5).toString()"), text("0.5"));
}

#[test]
fn date_functions() {
    assert_eq!(eval("datetime.year"), num(2025.0));
    assert_eq!(eval("datetime.month"), num(5.0));
    assert_eq!(eval("datetime.day"), num(27.0));
    assert_eq!(eval("datetime.hour"), num(8.0));
    assert_eq!(eval("datetime.minute"), num(30.0));
    assert_eq!(eval("datetime.second"), num(0.0));
    assert_eq!(eval("datetime.millisecond"), num(0.0));
    assert_eq!(
        eval(r#"now().date().format("YYYY-MM-DD HH:mm:ss")"#),
        text("2025-06-01 00:00:00")
    );
    assert_eq!(eval(r#"started.format("YYYY-MM-DD")"#), text("2025-05-27"));
    assert_eq!(
        eval(r#"started.format("dddd, MMMM Do YYYY")"#),
        text("Tuesday, May 27th 2025")
    );
    assert_eq!(eval("now().time()"), text("12:00:00"));
    assert_eq!(eval("file.mtime.relative()"), text("3 days ago"));
    assert_eq!(eval(r#"(now() + "2h").relative()"#), text("in 2 hours"));
    no("now().isEmpty()");
}

#[test]
fn string_functions() {
    assert_eq!(eval(r#""hello".length"#), num(5.0));
    yes(r#""hello".contains("ell")"#);
    yes(r#""hello".containsAll("h", "e")"#);
    no(r#""hello".containsAll("h", "z")"#);
    yes(r#""hello".containsAny("x", "y", "e")"#);
    yes(r#""hello".endsWith("lo")"#);
    no(r#""Hello world".isEmpty()"#);
    yes(r#""".isEmpty()"#);
    yes("missing.isEmpty()");
    assert_eq!(eval(r#""HeLLo".lower()"#), text("hello"));
    assert_eq!(eval(r#""a:b:c:d".replace(/:/, "-")"#), text("a-b:c:d"));
    assert_eq!(eval(r#""a:b:c:d".replace(/:/g, "-")"#), text("a-b-c-d"));
    assert_eq!(eval(r#""a:b:c:d".replace(":", "-")"#), text("a-b-c-d"));
    assert_eq!(
        eval(r#""John Smith".replace(/(\w+) (\w+)/, "$2, $1")"#),
        text("Smith, John")
    );
    assert_eq!(eval(r#""123".repeat(2)"#), text("123123"));
    assert_eq!(eval(r#""hello".reverse()"#), text("olleh"));
    assert_eq!(eval(r#""hello".slice(1, 4)"#), text("ell"));
    assert_eq!(eval(r#""hello".slice(1)"#), text("ello"));
    assert_eq!(eval(r#""hello".slice(-3)"#), text("llo"));
    let abc = list(vec![text("a"), text("b"), text("c")]);
    assert_eq!(eval(r#""a,b,c,d".split(",", 3)"#), abc);
    assert_eq!(eval(r#""a,b,c,d".split(/,/, 3)"#), abc);
    yes(r#""hello".startsWith("he")"#);
    assert_eq!(eval(r#""hello world".title()"#), text("Hello World"));
    assert_eq!(eval(r#""  hi  ".trim()"#), text("hi"));
}

#[test]
fn number_functions() {
    assert_eq!(eval("(-5).abs()"), num(5.0));
    assert_eq!(eval("(2.1).ceil()"), num(3.0));
    assert_eq!(eval("(2.9).floor()"), num(2.0));
    no("5.isEmpty()");
    assert_eq!(eval("(2.5).round()"), num(3.0));
    assert_eq!(eval("(2.3333).round(2)"), num(2.33));
    assert_eq!(eval("(3.14159).toFixed(2)"), text("3.14"));
    assert_eq!(eval("(2.5).toFixed(0)"), text("3"));
    assert_eq!(eval("(1.005).toFixed(2)"), text("1.00"));
    assert_eq!(eval("(-1.5).toFixed(0)"), text("-2"));
}

#[test]
fn list_functions() {
    let n = |items: &[f64]| list(items.iter().map(|x| num(*x)).collect());
    assert_eq!(eval("[1,2,3].length"), num(3.0));
    yes("[1,2,3].contains(2)");
    yes("[1,2,3].containsAll(2,3)");
    yes("[1,2,3].containsAny(3,4)");
    no("[1,2,3].containsAny(5,4)");
    assert_eq!(eval("[1,2,3,4].filter(value > 2)"), n(&[3.0, 4.0]));
    assert_eq!(eval("[5,6,7].filter(index > 0)"), n(&[6.0, 7.0]));
    assert_eq!(eval("[1,[2,3]].flat()"), n(&[1.0, 2.0, 3.0]));
    no("[1,2,3].isEmpty()");
    yes("[].isEmpty()");
    assert_eq!(eval(r#"[1,2,3].join(",")"#), text("1,2,3"));
    assert_eq!(eval("[1,2,3,4].map(value + 1)"), n(&[2.0, 3.0, 4.0, 5.0]));
    assert_eq!(eval("[1,2,3].reduce(acc + value, 0)"), num(6.0));
    assert_eq!(eval("[1,2,3].reverse()"), n(&[3.0, 2.0, 1.0]));
    assert_eq!(eval("[1,2,3,4].slice(1,3)"), n(&[2.0, 3.0]));
    assert_eq!(eval("[3, 1, 2].sort()"), n(&[1.0, 2.0, 3.0]));
    assert_eq!(
        eval(r#"["c", "a", "b"].sort()"#),
        list(vec![text("a"), text("b"), text("c")])
    );
    assert_eq!(eval("[1,2,2,3].unique()"), n(&[1.0, 2.0, 3.0]));
    assert_eq!(
        eval(r#"["10.00", "2.50", "b", "A"].sort()"#),
        list(vec![text("2.50"), text("10.00"), text("A"), text("b")])
    );
}

#[test]
fn reduce_for_the_largest_number() {
    let vault = super::vault();
    let base = super::super::model::Base::default();
    let largest = r#"values.filter(value.isType("number")).reduce(if(acc == null || value > acc, value, acc), null)"#;
    let expr = super::super::syntax::parse(largest).expect("parses");
    let values = [num(3.0), text("x"), num(7.0), Value::Null, num(5.0)];
    let context = super::super::eval::Context {
        env: &vault,
        row: None,
        formulas: None,
        values: Some(&values),
    };
    assert_eq!(super::super::eval::evaluate(&expr, &context), Ok(num(7.0)));
    let none = super::super::eval::Context {
        values: Some(&[]),
        ..context
    };
    assert_eq!(super::super::eval::evaluate(&expr, &none), Ok(Value::Null));
    let _ = base;
}

#[test]
fn link_functions() {
    assert_eq!(
        eval(r#"link("[[Textbook]]").asFile()"#),
        Value::File("Textbook.md".into())
    );
    assert_eq!(eval(r#"link("[[Nowhere]]").asFile()"#), Value::Null);
    yes(r#"link("Frank Herbert").linksTo(file)"#);
    no(r#"link("Textbook").linksTo(file)"#);
}

#[test]
fn file_functions() {
    assert_eq!(eval("file.name"), text("Dune.md"));
    assert_eq!(eval("file.basename"), text("Dune"));
    assert_eq!(eval("file.path"), text("Books/Dune.md"));
    assert_eq!(eval("file.folder"), text("Books"));
    assert_eq!(eval("file.ext"), text("md"));
    assert_eq!(eval("file.size"), num(1000.0));
    assert_eq!(eval("file.properties.status"), text("reading"));
    assert_eq!(
        eval("file.tags"),
        list(vec![text("#book"), text("#scifi/classic")])
    );
    assert_eq!(eval("file.links.length"), num(2.0));
    assert_eq!(
        eval("file.ctime.format(\"YYYY-MM-DD\")"),
        text("2025-05-01")
    );
    assert_eq!(eval("file.mtime.day"), num(29.0));
    assert_eq!(eval("file.file"), Value::File("Books/Dune.md".into()));
    assert_eq!(
        eval("file.asLink().asFile()"),
        Value::File("Books/Dune.md".into())
    );
    assert_eq!(eval(r#"file.asLink("Dune!").toString()"#), text("Dune!"));
    yes(r#"file.hasLink("Textbook")"#);
    yes(r#"file.hasLink(file("Textbook.md"))"#);
    yes("file.hasLink(this)");
    no(r#"file.hasLink("Restaurants")"#);
    yes(r#"file.hasProperty("price")"#);
    no(r#"file.hasProperty("nothing")"#);
    yes(r#"file.hasTag("tag1", "book")"#);
    yes(r#"file.hasTag("scifi")"#);
    yes(r##"file.hasTag("#SciFi/classic")"##);
    no(r#"file.hasTag("sci")"#);
    yes(r#"file.inFolder("Books")"#);
    yes(r#"file.inFolder("")"#);
    no(r#"file.inFolder("Book")"#);
    assert_eq!(eval("this.file.backlinks.length"), num(1.0));
    yes(r#"this.file.backlinks.contains(file)"#);
}

#[test]
fn object_and_regex_functions() {
    yes("{}.isEmpty()");
    no(r#"{"a": 1}.isEmpty()"#);
    assert_eq!(
        eval(r#"{"a": 1, "b": 2}.keys()"#),
        list(vec![text("a"), text("b")])
    );
    assert_eq!(
        eval(r#"{"a": 1, "b": 2}.values()"#),
        list(vec![num(1.0), num(2.0)])
    );
    yes(r#"/abc/.matches("abcde")"#);
    no(r#"/^abc$/.matches("abcde")"#);
    yes(r#"/ABC/i.matches("abcde")"#);
}

/// Text counts UTF-16 code units and `split` by a regular expression keeps its captures, as
/// JavaScript (and so Obsidian) does.
#[test]
fn text_indexes_and_regex_splits_follow_javascript() {
    assert_eq!(eval(r#""a😀b".length"#), num(4.0));
    assert_eq!(eval(r#""é".length"#), num(1.0));
    assert_eq!(eval(r#""a😀b".slice(1, 3)"#), text("😀"));
    assert_eq!(eval(r#""a😀b".slice(-1)"#), text("b"));
    // Half a surrogate pair cannot be text here; it reads as U+FFFD.
    assert_eq!(eval(r#""a😀b".slice(0, 2)"#), text("a\u{FFFD}"));
    assert_eq!(eval(r#""a😀".split("").length"#), num(3.0));
    let strings = |items: &[&str]| list(items.iter().map(|t| text(t)).collect());
    assert_eq!(
        eval(r#""a1b22c".split(/(\d+)/)"#),
        strings(&["a", "1", "b", "22", "c"])
    );
    assert_eq!(
        eval(r#""a-b".split(/(x)?-/)"#),
        list(vec![text("a"), Value::Null, text("b")])
    );
    assert_eq!(eval(r#""abc".split(/(?:)/)"#), strings(&["a", "b", "c"]));
    assert_eq!(eval(r#""axb".split(/x*/)"#), strings(&["a", "b"]));
    assert_eq!(eval(r#""a1b2c".split(/(\d)/, 2)"#), strings(&["a", "1"]));
    assert_eq!(eval(r#""".split(/x/)"#), strings(&[""]));
    assert_eq!(eval(r#""".split(/x*/)"#), strings(&[]));
    assert_eq!(eval(r#"",a,".split(/,/)"#), strings(&["", "a", ""]));
}

#[test]
fn regex_flags_and_embeds() {
    yes(r#"/^b$/m.matches("a\nb")"#);
    no(r#"/^b$/.matches("a\nb")"#);
    yes(r#"/a.b/s.matches("a\nb")"#);
    assert_eq!(
        eval(r#""a1b22c".split(/\d+/)"#),
        list(vec![text("a"), text("b"), text("c")])
    );
    assert_eq!(
        eval(r#""price: $5".replace(/\$(\d)/, "$$$1!")"#),
        text("price: $5!")
    );
    let cover = super::eval_in(
        &super::vault(),
        "attachments/cover.png",
        "file.embeds[0].asFile()",
    );
    assert_eq!(cover, Ok(Value::File("Textbook.md".into())));
}
