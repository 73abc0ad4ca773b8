//! The file tools: `vault_read_file` (images, canvases, text formats and PDFs, each in the form an
//! agent can use), `vault_list_files` and `vault_stat`, with their wire types.
//!
//! `vault_read_file` answers content blocks rather than structured output: an image has to be an
//! MCP image block, and text is returned as it is (an unpaged read is the file, byte for byte),
//! so it declares no output schema.

use base64::Engine;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::{Page, default_true};
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileParams {
    /// Vault-relative path of the file.
    pub path: String,
    /// Canvas: its JSON. PDF: pages as images (start_line = first page, limit = pages).
    #[serde(default)]
    pub raw: bool,
    /// First line of a window, from 1.
    #[serde(default)]
    pub start_line: Option<u64>,
    /// Lines in the window.
    #[serde(default)]
    pub limit: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesParams {
    /// Only files in this folder.
    #[serde(default)]
    pub folder: Option<String>,
    /// Only these extensions ("pdf", "png"; any case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Include subfolders' files (default true); false also lists the subfolders.
    #[serde(default = "default_true")]
    pub recursive: bool,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatParams {
    /// Vault-relative path of a note, file or folder.
    pub path: String,
}

/// Whether a path holds a note, another file, or a folder.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PathKindResult {
    Note,
    File,
    Folder,
}

impl From<ops::PathKind> for PathKindResult {
    fn from(kind: ops::PathKind) -> Self {
        match kind {
            ops::PathKind::Note => PathKindResult::Note,
            ops::PathKind::File => PathKindResult::File,
            ops::PathKind::Folder => PathKindResult::Folder,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileEntryResult {
    pub path: String,
    pub kind: PathKindResult,
    pub bytes: u64,
    pub modified: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListFilesResult {
    pub files: Vec<FileEntryResult>,
    /// Immediate subfolders (non-recursive listings, first page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folders: Option<Vec<String>>,
    /// Files per lower-case extension over all pages.
    pub extensions: BTreeMap<String, usize>,
    /// Files over all pages.
    pub total: usize,
    /// Present when more files follow: pass it back as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::FileList> for ListFilesResult {
    fn from(list: ops::FileList) -> Self {
        ListFilesResult {
            files: list
                .files
                .into_iter()
                .map(|file| FileEntryResult {
                    path: file.path,
                    kind: file.kind.into(),
                    bytes: file.bytes,
                    modified: file.modified,
                })
                .collect(),
            folders: list.folders,
            extensions: list.extensions,
            total: list.total,
            next_cursor: list.next_cursor,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct StatResult {
    pub path: String,
    pub exists: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<PathKindResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// sha256 of a file's bytes (files within the read cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

impl From<ops::PathStat> for StatResult {
    fn from(stat: ops::PathStat) -> Self {
        StatResult {
            path: stat.path,
            exists: stat.exists,
            kind: stat.kind.map(Into::into),
            bytes: stat.bytes,
            modified: stat.modified,
            revision: stat.revision,
        }
    }
}

// Parameters into `ops` requests.

impl From<ReadFileParams> for ops::ReadFile {
    fn from(params: ReadFileParams) -> Self {
        ops::ReadFile {
            path: params.path,
            raw: params.raw,
            start_line: params.start_line,
            limit: params.limit,
        }
    }
}

impl From<ListFilesParams> for ops::ListFiles {
    fn from(params: ListFilesParams) -> Self {
        ops::ListFiles {
            folder: params.folder,
            extensions: params.extensions,
            recursive: params.recursive,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<StatParams> for ops::StatPath {
    fn from(params: StatParams) -> Self {
        ops::StatPath { path: params.path }
    }
}

/// A read file as MCP content: text blocks as they are, images base64-encoded.
fn contents(read: ops::FileRead) -> CallToolResult {
    let engine = base64::engine::general_purpose::STANDARD;
    CallToolResult::success(
        read.parts
            .into_iter()
            .map(|part| match part {
                ops::FilePart::Text(text) => ContentBlock::text(text),
                ops::FilePart::Image { bytes, mime_type } => {
                    ContentBlock::image(engine.encode(bytes), mime_type)
                }
            })
            .collect(),
    )
}

#[tool_router(router = files_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "Read a vault file that is not a note: an image (sent as an image, fitted to a size budget), a canvas (as markdown), text formats (csv, json, txt, ...; verbatim), a PDF (as markdown from its text). Page long text with start_line and limit.",
        annotations(
            title = "Read file",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_read_file(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ReadFileParams>,
    ) -> Result<CallToolResult, ToolError> {
        let Json(read) = self
            .run::<_, ops::FileRead, ops::FileRead>(caller, params.into(), Ops::read_file)
            .await?;
        Ok(contents(read))
    }

    #[tool(
        description = "List the vault's files (attachments too, not only notes) with size and modification time, filtered by folder and extension, with counts per extension.",
        annotations(
            title = "List files",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_list_files(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ListFilesParams>,
    ) -> Result<Json<ListFilesResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_files).await
    }

    #[tool(
        description = "Whether a path exists, and whether it is a note, file or folder, with size, modification time and revision, without reading it.",
        annotations(
            title = "Stat path",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_stat(
        &self,
        caller: Caller,
        Parameters(params): Parameters<StatParams>,
    ) -> Result<Json<StatResult>, ToolError> {
        self.run(caller, params.into(), Ops::stat_path).await
    }
}
