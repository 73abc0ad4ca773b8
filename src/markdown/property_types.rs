//! Whether a property value fits the type the vault declares for its key (`.obsidian/types.json`),
//! as Obsidian's Properties view reads values: text is a string, a list type a list of strings
//! (or one string, which Obsidian shows as a one-item list), a number a number, a checkbox a
//! boolean, a date `YYYY-MM-DD` and a date & time `YYYY-MM-DDTHH:MM` (seconds optional). Pure.

use serde_json::Value;

/// `Err` says, for a person, why `value` does not fit `declared`; an unknown type name fits all.
pub fn check_fits(declared: &str, value: &Value) -> Result<(), String> {
    let fits = match declared {
        "text" => value.is_string(),
        "multitext" | "aliases" | "tags" => match value {
            Value::String(_) => true,
            Value::Array(items) => items.iter().all(Value::is_string),
            _ => false,
        },
        "number" => value.is_number(),
        "checkbox" => value.is_boolean(),
        "date" => value.as_str().is_some_and(is_date),
        "datetime" => value.as_str().is_some_and(is_datetime),
        _ => true,
    };
    if fits {
        return Ok(());
    }
    Err(format!(
        "is declared {} in the vault's property types, but {} was given",
        describe_type(declared),
        describe_value(value)
    ))
}

fn is_date(text: &str) -> bool {
    text.parse::<jiff::civil::Date>().is_ok() && text.len() == 10
}

fn is_datetime(text: &str) -> bool {
    let Some((day, time)) = text.split_once('T') else {
        return false;
    };
    let time_ok = match time.len() {
        5 => {
            time.parse::<jiff::civil::Time>().is_ok()
                || format!("{time}:00").parse::<jiff::civil::Time>().is_ok()
        }
        8 => time.parse::<jiff::civil::Time>().is_ok(),
        _ => false,
    };
    is_date(day) && time_ok
}

fn describe_type(declared: &str) -> &'static str {
    match declared {
        "text" => "text",
        "multitext" => "a list",
        "aliases" => "aliases (a list)",
        "tags" => "tags (a list)",
        "number" => "a number",
        "checkbox" => "a checkbox (true or false)",
        "date" => "a date (YYYY-MM-DD)",
        "datetime" => "a date and time (YYYY-MM-DDTHH:MM)",
        _ => "another type",
    }
}

fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the text {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::check_fits;

    #[test]
    fn values_fit_the_types_obsidian_declares() {
        for (declared, value) in [
            ("text", json!("hello")),
            ("multitext", json!(["a", "b"])),
            ("multitext", json!("one")),
            ("tags", json!(["project/a"])),
            ("number", json!(4.5)),
            ("checkbox", json!(false)),
            ("date", json!("2026-12-06")),
            ("datetime", json!("2026-12-06T10:30")),
            ("datetime", json!("2026-12-06T10:30:15")),
            ("unknown-plugin-type", json!({"any": 1})),
        ] {
            assert_eq!(check_fits(declared, &value), Ok(()), "{declared} {value}");
        }
    }

    #[test]
    fn a_misfit_says_what_was_declared_and_what_came() {
        for (declared, value) in [
            ("number", json!("4")),
            ("checkbox", json!("yes")),
            ("date", json!("06/12/2026")),
            ("date", json!("2026-12-06T10:30")),
            ("datetime", json!("2026-12-06")),
            ("multitext", json!([1, 2])),
            ("text", json!(["a"])),
        ] {
            let error = check_fits(declared, &value).expect_err("a misfit");
            assert!(error.starts_with("is declared "), "{error}");
        }
        assert_eq!(
            check_fits("number", &json!("4")),
            Err(
                "is declared a number in the vault's property types, but the text \"4\" was given"
                    .into()
            )
        );
    }
}
