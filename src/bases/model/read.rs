//! Reads a base's YAML into a `Base`: the top-level sections, then each view. Errors name the
//! place by its keys so the author can find it.

use serde_json::{Map, Value as Json};

use super::super::syntax::parse;
use super::filters::{filter, statements};
use super::formulas::{formulas_used, in_dependency_order};
use super::{
    Base, BaseError, Expression, Formula, GroupBy, PropertyConfig, PropertyId, SortKey, View,
};

/// The largest base read; real ones are a few kilobytes.
pub const MAX_BASE_BYTES: usize = 1 << 20;

pub(super) fn shape(place: &str, message: &str) -> BaseError {
    BaseError::Shape {
        place: place.to_owned(),
        message: message.to_owned(),
    }
}

pub(super) fn expression(text: &str, place: &str) -> Result<Expression, BaseError> {
    match parse(text) {
        Ok(expr) => Ok(Expression {
            source: text.to_owned(),
            expr,
        }),
        Err(source) => Err(BaseError::Expression {
            place: place.to_owned(),
            text: text.to_owned(),
            source,
        }),
    }
}

fn yaml(text: &str) -> Result<Json, BaseError> {
    let mut options = serde_saphyr::options::Options::default();
    options.strict_booleans = true;
    options.null_as_string = true;
    serde_saphyr::from_str_with_options::<Json>(text, options).map_err(|error| {
        let (line, column) = error
            .location()
            .map(|location| (location.line(), location.column()))
            .unwrap_or((1, 1));
        BaseError::Yaml {
            line: usize::try_from(line).unwrap_or(usize::MAX).max(1),
            column: usize::try_from(column).unwrap_or(usize::MAX).max(1),
            message: error
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned(),
        }
    })
}

pub(super) fn base(text: &str) -> Result<Base, BaseError> {
    if text.len() > MAX_BASE_BYTES {
        return Err(BaseError::TooLarge { length: text.len() });
    }
    let root = match yaml(text)? {
        Json::Object(map) => map,
        Json::Null => Map::new(),
        _ => {
            return Err(shape(
                "the base",
                "must be a mapping with filters, formulas, properties, summaries and views",
            ));
        }
    };
    let mut base = Base {
        filters: filter(root.get("filters").unwrap_or(&Json::Null), "filters")?,
        formulas: in_dependency_order(formulas(root.get("formulas"))?)?,
        properties: properties(root.get("properties"))?,
        summaries: named_expressions(root.get("summaries"), "summaries")?,
        views: Vec::new(),
    };
    if let Some(views) = root.get("views") {
        let Json::Array(items) = views else {
            return Err(shape("views", "must be a list of views"));
        };
        for (position, item) in items.iter().enumerate() {
            base.views.push(view(item, &format!("views[{position}]"))?);
        }
    }
    check_formula_references(&base)?;
    Ok(base)
}

/// A mapping of names to expression text (`formulas`, `summaries`).
fn named_expressions(
    json: Option<&Json>,
    section: &str,
) -> Result<Vec<(String, Expression)>, BaseError> {
    let map = match json {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Object(map)) => map,
        Some(_) => return Err(shape(section, "must be a mapping of names to expressions")),
    };
    let mut out = Vec::with_capacity(map.len());
    for (name, value) in map {
        let place = format!("{section}.{name}");
        let text = match value {
            Json::String(text) => text.clone(),
            Json::Number(_) | Json::Bool(_) => value.to_string(),
            _ => return Err(shape(&place, "must be an expression written as text")),
        };
        out.push((name.clone(), expression(&text, &place)?));
    }
    Ok(out)
}

fn formulas(json: Option<&Json>) -> Result<Vec<Formula>, BaseError> {
    Ok(named_expressions(json, "formulas")?
        .into_iter()
        .map(|(name, expression)| Formula {
            uses: formulas_used(&expression.expr),
            name,
            expression,
        })
        .collect())
}

fn properties(json: Option<&Json>) -> Result<Vec<(String, PropertyConfig)>, BaseError> {
    let map = match json {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Object(map)) => map,
        Some(_) => {
            return Err(shape(
                "properties",
                "must be a mapping of property ids to settings",
            ));
        }
    };
    Ok(map
        .iter()
        .map(|(id, settings)| {
            let display_name = settings.get("displayName").and_then(|name| match name {
                Json::String(text) => Some(text.clone()),
                Json::Null => None,
                other => Some(other.to_string()),
            });
            (id.clone(), PropertyConfig { display_name })
        })
        .collect())
}

/// `ASC`/`DESC` (any case); anything else is ascending.
fn descending(json: Option<&Json>) -> bool {
    json.and_then(Json::as_str)
        .is_some_and(|direction| direction.eq_ignore_ascii_case("desc"))
}

fn property_of(json: &Json, place: &str) -> Result<PropertyId, BaseError> {
    match json.get("property").and_then(Json::as_str) {
        Some(id) => Ok(PropertyId::parse(id)),
        None => Err(shape(place, "needs a `property`")),
    }
}

fn view(json: &Json, place: &str) -> Result<View, BaseError> {
    let Json::Object(map) = json else {
        return Err(shape(
            place,
            "a view must be a mapping with at least `type`",
        ));
    };
    let text = |key: &str| map.get(key).and_then(Json::as_str).map(str::to_owned);
    let mut view = View {
        kind: text("type").unwrap_or_else(|| "table".to_owned()),
        name: text("name").unwrap_or_default(),
        filters: filter(
            map.get("filters").unwrap_or(&Json::Null),
            &format!("{place}.filters"),
        )?,
        ..View::default()
    };
    view.limit = match map.get("limit") {
        None | Some(Json::Null) => None,
        Some(limit) => match limit.as_f64() {
            Some(n) if n >= 0.0 => Some(n.min(usize::MAX as f64) as usize),
            _ => {
                return Err(shape(
                    &format!("{place}.limit"),
                    "must be a positive number",
                ));
            }
        },
    };
    if let Some(order) = map.get("order") {
        let Json::Array(items) = order else {
            return Err(shape(
                &format!("{place}.order"),
                "must be a list of property ids",
            ));
        };
        view.order = items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect();
    }
    view.sort = sort(map.get("sort"), place)?;
    if let Some(group) = map.get("groupBy").filter(|g| !g.is_null()) {
        let group_place = format!("{place}.groupBy");
        view.group_by = Some(match group {
            Json::String(id) => GroupBy {
                property: PropertyId::parse(id),
                descending: false,
            },
            other => GroupBy {
                property: property_of(other, &group_place)?,
                descending: descending(other.get("direction")),
            },
        });
    }
    if let Some(Json::Object(summaries)) = map.get("summaries") {
        view.summaries = summaries
            .iter()
            .filter_map(|(column, name)| Some((column.clone(), name.as_str()?.to_owned())))
            .collect();
    }
    const KNOWN: &[&str] = &[
        "type",
        "name",
        "limit",
        "filters",
        "order",
        "sort",
        "groupBy",
        "summaries",
    ];
    view.extra = map
        .iter()
        .filter(|(key, _)| !KNOWN.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Ok(view)
}

fn sort(json: Option<&Json>, place: &str) -> Result<Vec<SortKey>, BaseError> {
    let items = match json {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Array(items)) => items.as_slice(),
        Some(single) => std::slice::from_ref(single),
    };
    items
        .iter()
        .enumerate()
        .map(|(position, item)| {
            let item_place = format!("{place}.sort[{position}]");
            Ok(SortKey {
                property: property_of(item, &item_place)?,
                descending: descending(item.get("direction")),
            })
        })
        .collect()
}

/// Filters and summaries may read formulas too; each must exist.
fn check_formula_references(base: &Base) -> Result<(), BaseError> {
    let mut places: Vec<(String, &Expression)> = Vec::new();
    if let Some(global) = &base.filters {
        places.extend(
            statements(global)
                .into_iter()
                .map(|e| ("filters".to_owned(), e)),
        );
    }
    for (position, view) in base.views.iter().enumerate() {
        if let Some(own) = &view.filters {
            let place = format!("views[{position}].filters");
            places.extend(statements(own).into_iter().map(|e| (place.clone(), e)));
        }
    }
    for (place, expression) in places {
        if let Some(name) = formulas_used(&expression.expr)
            .into_iter()
            .find(|name| base.formula(name).is_none())
        {
            return Err(BaseError::UnknownFormula { place, name });
        }
    }
    Ok(())
}
