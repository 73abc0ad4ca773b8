//! The wire types of the property tools (`vault_list_property_keys`,
//! `vault_list_property_values`, `vault_search_by_property`), and their conversions into `ops`
//! requests. The tools themselves are in `search.rs`, with the other search tools.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::tools::Page;
use crate::ops;

#[derive(Debug, Serialize, JsonSchema)]
pub struct PropertyKeyCount {
    /// The key in its most common spelling (case variants are merged).
    pub key: String,
    /// Number of notes with the key.
    pub count: u64,
    /// The type the vault declares for it in Obsidian (text, multitext, number, checkbox, date, datetime, aliases, tags).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub declared_type: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListPropertyKeysResult {
    pub keys: Vec<PropertyKeyCount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::CountedList> for ListPropertyKeysResult {
    fn from(list: ops::CountedList) -> Self {
        ListPropertyKeysResult {
            keys: list
                .items
                .into_iter()
                .map(|item| PropertyKeyCount {
                    key: item.value,
                    count: item.count,
                    declared_type: item.declared_type,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPropertyValuesParams {
    /// The property key (any case).
    pub key: String,
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PropertyValueCount {
    /// The value as text (list values are counted one by one; case variants are merged).
    pub value: String,
    /// Number of notes with the value.
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListPropertyValuesResult {
    pub values: Vec<PropertyValueCount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::CountedList> for ListPropertyValuesResult {
    fn from(list: ops::CountedList) -> Self {
        ListPropertyValuesResult {
            values: list
                .items
                .into_iter()
                .map(|item| PropertyValueCount {
                    value: item.value,
                    count: item.count,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchByPropertyParams {
    /// The property key (any case).
    pub key: String,
    /// Text, number, true/false, a list (every item must be present), or null for any value.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schemars(with = "PropertyValueSchema")]
    pub value: Value,
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

// The schema of a property value a client may search for (the field itself stays a JSON value);
// a plain comment, because a doc comment would be sent to every client as the schema's description.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // Only its schema is used.
#[schemars(inline)]
enum PropertyValueSchema {
    Text(String),
    Number(f64),
    Flag(bool),
    List(Vec<PropertyScalarSchema>),
}

#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // Only its schema is used.
enum PropertyScalarSchema {
    Text(String),
    Number(f64),
    Flag(bool),
}

// Parameters into `ops` requests.

impl From<ListPropertyValuesParams> for ops::ListPropertyValues {
    fn from(params: ListPropertyValuesParams) -> Self {
        ops::ListPropertyValues {
            key: params.key,
            folder: params.folder,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<SearchByPropertyParams> for ops::SearchByProperty {
    fn from(params: SearchByPropertyParams) -> Self {
        ops::SearchByProperty {
            key: params.key,
            value: params.value,
            folder: params.folder,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}
