//! The one rule the tool schemas follow, said once where the tool list is built rather than on
//! every field: an optional field shows the type of its value, never `null`.
//!
//! A missing optional argument and an absent result field are the same thing to a model, and an
//! optional field may be left out but is never sent as `null` (results skip `None` when they
//! serialise), so `null` in a schema would only cost context and invite calls that spell out
//! nulls. The rule rewrites what schemars derives from `Option<T>` into the schema of `T`; it
//! touches nothing else.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::JsonObject;
use schemars::Schema;
use schemars::transform::{Transform, transform_subschemas};
use serde_json::Value;

use crate::mcp::QuireServer;

/// Any JSON value, each kind named: a schema without a type would constrain nothing, and strict
/// clients (the Inspector's `--strict`) flag it.
pub(super) fn any_value(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            {"type": "string"},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "array"},
            {"type": "object"},
            {"type": "null"}
        ]
    })
}

/// Applies the rule to the input and output schema of every tool of `router`.
pub(super) fn leave_out_null(router: &mut ToolRouter<QuireServer>) {
    for route in router.map.values_mut() {
        let tool = &mut route.attr;
        tool.input_schema = without_null(&tool.input_schema);
        if let Some(output) = &tool.output_schema {
            tool.output_schema = Some(without_null(output));
        }
    }
}

/// Declares `change_id` in the answer of every tool that may write: the call layer adds it to
/// the answer of a call that changed the vault (see `call::with_change_id`).
pub(super) fn declare_change_id(router: &mut ToolRouter<QuireServer>) {
    for route in router.map.values_mut() {
        let tool = &mut route.attr;
        if !super::writes(tool) {
            continue;
        }
        let Some(output) = &tool.output_schema else {
            continue;
        };
        let mut output = output.as_ref().clone();
        if let Some(Value::Object(properties)) = output.get_mut("properties") {
            properties.insert(
                "change_id".into(),
                serde_json::json!({
                    "type": "string",
                    "description": "The change this call made, when it changed the vault: one id for every note it touched (see the history tools)."
                }),
            );
            tool.output_schema = Some(Arc::new(output));
        }
    }
}

fn without_null(schema: &Arc<JsonObject>) -> Arc<JsonObject> {
    let mut schema = Schema::from(schema.as_ref().clone());
    NoNull.transform(&mut schema);
    match schema.to_value() {
        Value::Object(object) => Arc::new(object),
        // A schema that was an object stays one: the rule only removes and merges keys.
        _ => Arc::new(JsonObject::new()),
    }
}

/// Undoes schemars' `allow_null` for `Option<T>`: `"type": [T, "null"]`, `null` among an `enum`'s
/// values, `"anyOf": [T, {"type": "null"}]` around a referenced or composite `T`, and the
/// `"default": null` of an optional argument.
struct NoNull;

impl Transform for NoNull {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(value) = non_null_alternative(schema)
            && let Value::Object(value) = value
        {
            schema.remove("anyOf");
            // The field's own keys (its description) win over the value type's, as they do when
            // schemars describes a field of type `T`.
            for (key, inner) in value {
                if !schema.as_object().is_some_and(|o| o.contains_key(&key)) {
                    schema.insert(key, inner);
                }
            }
        }
        if let Some(Value::Array(types)) = schema.get_mut("type") {
            types.retain(|kind| kind != "null");
            if types.len() == 1 {
                let kind = types.remove(0);
                schema.insert("type".into(), kind);
            }
        }
        if let Some(Value::Array(values)) = schema.get_mut("enum") {
            values.retain(|value| !value.is_null());
        }
        if schema.get("default") == Some(&Value::Null) {
            schema.remove("default");
        }
        transform_subschemas(self, schema);
    }
}

/// `T` when `schema` is `"anyOf": [T, {"type": "null"}]` (in either order).
fn non_null_alternative(schema: &Schema) -> Option<Value> {
    let Some(Value::Array(alternatives)) = schema.get("anyOf") else {
        return None;
    };
    let is_null = |value: &Value| value.get("type").and_then(Value::as_str) == Some("null");
    match alternatives.as_slice() {
        [value, null] | [null, value] if is_null(null) && !is_null(value) => Some(value.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::handler::server::tool::schema_for_input;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)] // Only the schema is read.
    struct Inner {
        word: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)] // Only the schema is read.
    enum Kind {
        One,
        Two,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)] // Only the schema is read.
    struct Optional {
        /// Text.
        #[serde(default)]
        text: Option<String>,
        /// A count.
        #[schemars(range(min = 1))]
        #[serde(default)]
        count: Option<u32>,
        /// A struct.
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        kind: Option<Kind>,
        #[serde(default)]
        words: Option<Vec<String>>,
    }

    #[test]
    fn an_optional_field_shows_its_value_type_only() {
        let derived = schema_for_input::<Optional>().expect("an object schema");
        let schema = Value::Object(without_null(&derived).as_ref().clone());
        assert_eq!(
            schema["properties"],
            json!({
                "text": {"description": "Text.", "type": "string"},
                "count": {"description": "A count.", "format": "uint32", "minimum": 1, "type": "integer"},
                "inner": {"$ref": "#/$defs/Inner", "description": "A struct."},
                "kind": {"$ref": "#/$defs/Kind"},
                "words": {"items": {"type": "string"}, "type": "array"},
            })
        );
        assert!(!schema.to_string().contains("null"), "{schema}");
    }
}
