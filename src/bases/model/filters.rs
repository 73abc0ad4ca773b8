//! Reads a filter from its YAML shape: a statement string, or a mapping with one of `and`, `or`
//! and `not` holding a list of filters. Nesting is bounded by `MAX_FILTER_DEPTH`.

use serde_json::Value as Json;

use super::read::{expression, shape};
use super::{BaseError, Filter};

/// The deepest `and`/`or`/`not` nesting read.
const MAX_FILTER_DEPTH: usize = 32;

/// The filter at `place`, or `None` for an empty one (`filters:` with nothing under it).
pub(super) fn filter(json: &Json, place: &str) -> Result<Option<Filter>, BaseError> {
    match json {
        Json::Null => Ok(None),
        other => read(other, place, 0).map(Some),
    }
}

fn read(json: &Json, place: &str, depth: usize) -> Result<Filter, BaseError> {
    if depth > MAX_FILTER_DEPTH {
        return Err(shape(
            place,
            "filters nest too deeply; flatten the and/or/not groups",
        ));
    }
    match json {
        Json::String(text) => Ok(Filter::Statement(expression(text, place)?)),
        Json::Bool(_) | Json::Number(_) => {
            Ok(Filter::Statement(expression(&json.to_string(), place)?))
        }
        Json::Array(items) => Ok(Filter::And(list(items, place, depth)?)),
        Json::Object(map) => {
            let mut groups = map.iter();
            let (Some((key, items)), None) = (groups.next(), groups.next()) else {
                return Err(shape(
                    place,
                    "a filter group holds exactly one of `and`, `or` or `not`",
                ));
            };
            let inner_place = format!("{place}.{key}");
            let items = match items {
                Json::Array(items) => list(items, &inner_place, depth)?,
                Json::Null => Vec::new(),
                single => vec![read(single, &inner_place, depth + 1)?],
            };
            match key.as_str() {
                "and" => Ok(Filter::And(items)),
                "or" => Ok(Filter::Or(items)),
                "not" => Ok(Filter::Not(items)),
                other => Err(shape(
                    place,
                    &format!("`{other}` is not a filter group; use `and`, `or` or `not`"),
                )),
            }
        }
        Json::Null => Err(shape(
            place,
            "an empty filter; write a statement or remove the entry",
        )),
    }
}

fn list(items: &[Json], place: &str, depth: usize) -> Result<Vec<Filter>, BaseError> {
    items
        .iter()
        .enumerate()
        .map(|(position, item)| read(item, &format!("{place}[{position}]"), depth + 1))
        .collect()
}

/// Every statement of `filter`, for checks over all of them.
pub(super) fn statements(filter: &Filter) -> Vec<&super::Expression> {
    let mut found = Vec::new();
    let mut pending = vec![filter];
    while let Some(next) = pending.pop() {
        match next {
            Filter::Statement(expression) => found.push(expression),
            Filter::And(items) | Filter::Or(items) | Filter::Not(items) => pending.extend(items),
        }
    }
    found
}
