//! The Bases tools (issue 50): `vault_query_base`, `vault_list_bases` and `vault_write_base`,
//! with their wire types. Each runs one `ops` call (see `ops::bases`).

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Page;
use super::notes::WriteNoteResult;
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryBaseParams {
    /// A .base file, or a note with ```base blocks.
    #[serde(default)]
    pub path: Option<String>,
    /// View name or 0-based index (default: first).
    #[serde(default)]
    pub view: Option<ViewChoice>,
    /// Which ```base block of the note, 0-based (default: first).
    #[serde(default)]
    pub block: Option<usize>,
    /// Base YAML to run instead of a file.
    #[serde(default)]
    pub base: Option<String>,
    /// The file `this` stands for (default: the base file or the note holding the block).
    #[serde(default)]
    pub this: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

/// A view's 0-based index, or its name.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum ViewChoice {
    Index(u64),
    Name(String),
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BaseRowResult {
    pub path: String,
    /// Column id to value; {"error"} where a formula failed.
    pub values: Map<String, Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BaseSummaryResult {
    pub column: String,
    pub name: String,
    #[schemars(schema_with = "super::schema::any_value")]
    pub value: Value,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BaseGroupResult {
    #[schemars(schema_with = "super::schema::any_value")]
    pub key: Value,
    /// Paths of the group's rows on this page.
    pub rows: Vec<String>,
    pub summaries: Vec<BaseSummaryResult>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct QueryBaseResult {
    pub view: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub columns: Vec<String>,
    pub rows: Vec<BaseRowResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<BaseGroupResult>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summaries: Option<Vec<BaseSummaryResult>>,
    /// Rows in the view across all pages.
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListBasesParams {
    /// Only bases in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ViewResult {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListedBaseResult {
    pub path: String,
    /// The block's index in a note; absent for a .base file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<usize>,
    pub views: Vec<ViewResult>,
    /// Why the base does not parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListBasesResult {
    pub bases: Vec<ListedBaseResult>,
    /// Time ran out before every note was read; narrow with folder.
    pub timed_out: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteBaseParams {
    /// Path ending in .base.
    pub path: String,
    /// The base's YAML.
    pub base: String,
    /// Needed to replace an existing file: its revision from your last read.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

impl From<QueryBaseParams> for ops::QueryBase {
    fn from(params: QueryBaseParams) -> Self {
        ops::QueryBase {
            path: params.path,
            view: params.view.map(|view| match view {
                ViewChoice::Index(at) => at.to_string(),
                ViewChoice::Name(name) => name,
            }),
            block: params.block,
            base: params.base,
            this: params.this,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<ListBasesParams> for ops::ListBases {
    fn from(params: ListBasesParams) -> Self {
        ops::ListBases {
            folder: params.folder,
        }
    }
}

impl From<WriteBaseParams> for ops::WriteBase {
    fn from(params: WriteBaseParams) -> Self {
        ops::WriteBase {
            path: params.path,
            base: params.base,
            expected_revision: params.expected_revision,
        }
    }
}

fn summary(summary: ops::BaseSummary) -> BaseSummaryResult {
    BaseSummaryResult {
        column: summary.column,
        name: summary.name,
        value: summary.value,
    }
}

impl From<ops::BaseAnswer> for QueryBaseResult {
    fn from(answer: ops::BaseAnswer) -> Self {
        QueryBaseResult {
            view: answer.view,
            kind: answer.kind,
            columns: answer.columns,
            rows: answer
                .rows
                .into_iter()
                .map(|row| BaseRowResult {
                    path: row.path,
                    values: row.values,
                })
                .collect(),
            groups: answer.groups.map(|groups| {
                groups
                    .into_iter()
                    .map(|group| BaseGroupResult {
                        key: group.key,
                        rows: group.rows,
                        summaries: group.summaries.into_iter().map(summary).collect(),
                    })
                    .collect()
            }),
            summaries: answer
                .summaries
                .map(|all| all.into_iter().map(summary).collect()),
            total: answer.total,
            next_cursor: answer.next_cursor,
        }
    }
}

impl From<ops::BaseList> for ListBasesResult {
    fn from(list: ops::BaseList) -> Self {
        ListBasesResult {
            bases: list
                .bases
                .into_iter()
                .map(|base| ListedBaseResult {
                    path: base.path,
                    block: base.block,
                    views: base
                        .views
                        .into_iter()
                        .map(|view| ViewResult {
                            name: view.name,
                            kind: view.kind,
                        })
                        .collect(),
                    error: base.error,
                })
                .collect(),
            timed_out: list.timed_out,
        }
    }
}

#[tool_router(router = bases_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "Run a view of an Obsidian Base (a .base file, a note's ```base block, or inline YAML) over the vault as Obsidian computes it: filters, formulas, sort, groups, summaries. Dates are ISO 8601, links {display, path}.",
        annotations(title = "Query base", read_only_hint = true, open_world_hint = false)
    )]
    async fn vault_query_base(
        &self,
        caller: Caller,
        Parameters(params): Parameters<QueryBaseParams>,
    ) -> Result<Json<QueryBaseResult>, ToolError> {
        self.run(caller, params.into(), Ops::query_base).await
    }

    #[tool(
        description = "List the .base files and notes with ```base blocks, each with its views.",
        annotations(title = "List bases", read_only_hint = true, open_world_hint = false)
    )]
    async fn vault_list_bases(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ListBasesParams>,
    ) -> Result<Json<ListBasesResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_bases).await
    }

    #[tool(
        description = "Write a .base file after checking it parses (filters, formulas, views); errors give the YAML line or expression place. Replacing a file needs `expected_revision`.",
        annotations(
            title = "Write base",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_write_base(
        &self,
        caller: Caller,
        Parameters(params): Parameters<WriteBaseParams>,
    ) -> Result<Json<WriteNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::write_base).await
    }
}
