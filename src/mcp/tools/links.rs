//! The link-graph tools: backlinks, outgoing links, orphans and broken links, with their wire
//! types. Each converts its parameters into one `ops` request (see `ops::links`).

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ListNotesResult, Page};
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetLinksParams {
    /// Vault-relative path of the note or attachment.
    pub path: String,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BacklinkWire {
    /// The note or canvas holding the link.
    pub source: String,
    /// 1-based line of the link in the source.
    pub line: u64,
    /// 0-based character offset of the link in its line.
    pub column: u64,
    /// The linking line (at most 300 characters); for a canvas, the link itself.
    pub context: String,
    /// The link as written.
    pub link: String,
    /// Whether it is an embed (`![[...]]`, `![](...)`, a canvas card).
    pub embed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BacklinksResult {
    pub path: String,
    pub backlinks: Vec<BacklinkWire>,
    /// Present when more backlinks follow: pass it back as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::Backlinks> for BacklinksResult {
    fn from(found: ops::Backlinks) -> Self {
        BacklinksResult {
            path: found.path,
            backlinks: found
                .backlinks
                .into_iter()
                .map(|link| BacklinkWire {
                    source: link.source,
                    line: link.line,
                    column: link.column,
                    context: link.context,
                    link: link.link,
                    embed: link.embed,
                })
                .collect(),
            next_cursor: found.next_cursor,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TargetKindWire {
    Note,
    File,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OutgoingLinkWire {
    /// The target as written, with its `#heading` or `#^block` part (`#Heading` alone links within the note).
    pub target: String,
    /// "note" for markdown notes, "file" for attachments and other files.
    pub kind: TargetKindWire,
    /// The vault path the link resolves to; absent when broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<String>,
    /// True when the link resolves to no file you can read.
    pub broken: bool,
    /// 1-based line and 0-based character column of the link.
    pub line: u64,
    pub column: u64,
    pub embed: bool,
    /// The text Obsidian shows for the link.
    pub display: String,
    /// "wikilink", "markdown", "property" or "canvas".
    pub form: String,
    /// Size of the resolved file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OutgoingLinksResult {
    pub path: String,
    pub links: Vec<OutgoingLinkWire>,
    /// Present when more links follow: pass it back as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::OutgoingLinks> for OutgoingLinksResult {
    fn from(found: ops::OutgoingLinks) -> Self {
        OutgoingLinksResult {
            path: found.path,
            links: found
                .links
                .into_iter()
                .map(|link| OutgoingLinkWire {
                    target: link.target,
                    kind: match link.kind {
                        ops::TargetKind::Note => TargetKindWire::Note,
                        ops::TargetKind::File => TargetKindWire::File,
                    },
                    resolved_path: link.resolved_path,
                    broken: link.broken,
                    line: link.line,
                    column: link.column,
                    embed: link.embed,
                    display: link.display,
                    form: link.form.to_owned(),
                    bytes: link.bytes,
                })
                .collect(),
            next_cursor: found.next_cursor,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindOrphansParams {
    /// Folders whose notes are never listed.
    #[serde(default)]
    pub exclude_folders: Option<Vec<String>>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindBrokenLinksParams {
    /// Only links in notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BrokenLinkWire {
    pub source: String,
    pub line: u64,
    pub column: u64,
    /// The link as written.
    pub link: String,
    /// The path it names (before any `#`).
    pub target: String,
    pub embed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BrokenLinksResult {
    pub broken: Vec<BrokenLinkWire>,
    /// Present when more follow: pass it back as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::BrokenLinks> for BrokenLinksResult {
    fn from(found: ops::BrokenLinks) -> Self {
        BrokenLinksResult {
            broken: found
                .broken
                .into_iter()
                .map(|link| BrokenLinkWire {
                    source: link.source,
                    line: link.line,
                    column: link.column,
                    link: link.link,
                    target: link.target,
                    embed: link.embed,
                })
                .collect(),
            next_cursor: found.next_cursor,
        }
    }
}

// Parameters into `ops` requests.

impl From<GetLinksParams> for ops::GetLinks {
    fn from(params: GetLinksParams) -> Self {
        ops::GetLinks {
            path: params.path,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<FindOrphansParams> for ops::FindOrphans {
    fn from(params: FindOrphansParams) -> Self {
        ops::FindOrphans {
            exclude_folders: params.exclude_folders.unwrap_or_default(),
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<FindBrokenLinksParams> for ops::FindBrokenLinks {
    fn from(params: FindBrokenLinksParams) -> Self {
        ops::FindBrokenLinks {
            folder: params.folder,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

#[tool_router(router = links_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "List the links pointing at a note or attachment, as Obsidian's backlinks pane shows them (wikilinks, embeds, markdown, property and canvas links): to see what references a note before changing or moving it.",
        annotations(
            title = "Backlinks",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_get_backlinks(
        &self,
        caller: Caller,
        Parameters(params): Parameters<GetLinksParams>,
    ) -> Result<Json<BacklinksResult>, ToolError> {
        self.run(caller, params.into(), Ops::get_backlinks).await
    }

    #[tool(
        description = "List the links a note or canvas holds, in document order, each resolved as Obsidian resolves it: to follow a note's references or check them.",
        annotations(
            title = "Outgoing links",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_get_outgoing_links(
        &self,
        caller: Caller,
        Parameters(params): Parameters<GetLinksParams>,
    ) -> Result<Json<OutgoingLinksResult>, ToolError> {
        self.run(caller, params.into(), Ops::get_outgoing_links)
            .await
    }

    #[tool(
        description = "List the notes no other note, canvas or embed links to, in path order: to find forgotten notes worth linking or archiving. Notes in the daily-notes and templates folders are never listed. Nor are the files of vault_list_memory_files.",
        annotations(
            title = "Orphan notes",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_find_orphans(
        &self,
        caller: Caller,
        Parameters(params): Parameters<FindOrphansParams>,
    ) -> Result<Json<ListNotesResult>, ToolError> {
        self.run(caller, params.into(), Ops::find_orphans).await
    }

    #[tool(
        description = "List the links that resolve to no file (Obsidian's unresolved links), in path and line order: to find typos and notes still to be written.",
        annotations(
            title = "Broken links",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_find_broken_links(
        &self,
        caller: Caller,
        Parameters(params): Parameters<FindBrokenLinksParams>,
    ) -> Result<Json<BrokenLinksResult>, ToolError> {
        self.run(caller, params.into(), Ops::find_broken_links)
            .await
    }
}
