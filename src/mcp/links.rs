//! The link-graph tools (backlinks, outgoing links, orphans, broken links) and `vault_move_note`,
//! with their wire types. Each tool runs one `ops` call; see `ops::links` and `ops::move_note`.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::QuireServer;
use super::wire::ListNotesResult;
use crate::ops;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetLinksParams {
    /// Vault-relative path of the note or attachment (e.g. "Projects/Plan.md", "img/chart.png").
    pub path: String,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
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
    #[schemars(with = "String")]
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
    #[schemars(with = "String")]
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
    #[schemars(with = "u64")]
    pub bytes: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OutgoingLinksResult {
    pub path: String,
    pub links: Vec<OutgoingLinkWire>,
    /// Present when more links follow: pass it back as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
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
    /// Folders whose notes are never reported (the daily-notes and templates folders never are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<String>")]
    pub exclude_folders: Option<Vec<String>>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindBrokenLinksParams {
    /// Only links held by notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
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
    #[schemars(with = "String")]
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

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveNoteParams {
    /// Vault-relative path of the note or attachment to move (e.g. "Inbox/Idea.md").
    pub old_path: String,
    /// Its new vault-relative path, with the same extension (e.g. "Projects/Idea.md"); must not exist.
    pub new_path: String,
    /// true: return the plan (every link that would be rewritten) and change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Remove the folders the move leaves empty (only folders you may write).
    #[serde(default)]
    pub prune_empty_folders: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MovedWire {
    pub from: String,
    pub to: String,
    /// The moved file's revision at its new path.
    pub revision: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LinkChangeWire {
    /// 1-based line of the link before the rewrite.
    pub line: u64,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RewrittenWire {
    pub path: String,
    /// The file's new revision (with dry_run: its current one).
    pub revision: String,
    pub changes: Vec<LinkChangeWire>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MoveNoteResult {
    pub moved: MovedWire,
    pub rewritten: Vec<RewrittenWire>,
    pub dry_run: bool,
    /// Folders removed because the move left them empty.
    pub pruned_folders: Vec<String>,
}

impl From<ops::MovedNote> for MoveNoteResult {
    fn from(moved: ops::MovedNote) -> Self {
        MoveNoteResult {
            moved: MovedWire {
                from: moved.from,
                to: moved.to,
                revision: moved.revision,
            },
            rewritten: moved
                .rewritten
                .into_iter()
                .map(|file| RewrittenWire {
                    path: file.path,
                    revision: file.revision,
                    changes: file
                        .changes
                        .into_iter()
                        .map(|change| LinkChangeWire {
                            line: change.line,
                            before: change.before,
                            after: change.after,
                        })
                        .collect(),
                })
                .collect(),
            dry_run: moved.dry_run,
            pruned_folders: moved.pruned_folders,
        }
    }
}

#[tool_router(router = links_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        name = "vault_get_backlinks",
        description = "List the links pointing at a note or attachment, as Obsidian's backlinks pane shows them (wikilinks, embeds, markdown links, property links, canvas cards). Use to see what references a note before changing or moving it. \
Returns `backlinks` [{source, line, column, context, link, embed}] and `next_cursor` when more follow. Errors: not_found (no such file), invalid_path, invalid_argument (bad limit or cursor).",
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
        Parameters(params): Parameters<GetLinksParams>,
    ) -> Result<Json<BacklinksResult>, String> {
        let request = ops::GetLinks {
            path: params.path,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_get_backlinks", move |ops, ctx| {
            ops.get_backlinks(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_get_outgoing_links",
        description = "List the links a note (or canvas) holds, in document order, each resolved as Obsidian resolves it. Use to follow a note's references or check them before editing. \
Returns `links` [{target, kind (note|file), resolved_path?, broken, line, column, embed, display, form, bytes?}] and `next_cursor` when more follow. Errors: not_found, invalid_path, invalid_argument (bad limit or cursor).",
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
        Parameters(params): Parameters<GetLinksParams>,
    ) -> Result<Json<OutgoingLinksResult>, String> {
        let request = ops::GetLinks {
            path: params.path,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_get_outgoing_links", move |ops, ctx| {
            ops.get_outgoing_links(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_find_orphans",
        description = "List notes no other note, canvas or embed links to, in path order. Use to find forgotten notes worth linking or archiving. \
Notes in the daily-notes and templates folders (from Obsidian's settings) and in `exclude_folders` are never listed. \
Returns `notes` [{path, title, bytes, modified, tags}] and `next_cursor` when more follow. Errors: invalid_path (exclude_folders), invalid_argument (bad limit or cursor).",
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
        Parameters(params): Parameters<FindOrphansParams>,
    ) -> Result<Json<ListNotesResult>, String> {
        let request = ops::FindOrphans {
            exclude_folders: params.exclude_folders.unwrap_or_default(),
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_find_orphans", move |ops, ctx| {
            ops.find_orphans(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_move_note",
        description = "Move or rename a note or attachment and rewrite every link that would otherwise break (wikilinks, embeds, markdown links, property links, canvas cards), keeping each link's alias, heading or block part and style, as Obsidian does. \
Use instead of writing a copy and deleting the original. Run with `dry_run: true` first to see every change. A path that must be written follows the vault's new-link format. Nothing is replaced: the destination must not exist. \
Returns `moved` {from, to, revision}, `rewritten` [{path, revision, changes: [{line, before, after}]}], `dry_run`, `pruned_folders`. \
Errors: not_found, already_exists (destination), path_forbidden (outside your write rules, or linked from files you can read but may not change, which it names), conflict (a file changed during the move; nothing was lost), invalid_path, invalid_argument (other extension, a folder, a link that cannot be rewritten), too_large.",
        annotations(
            title = "Move or rename a note",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_move_note(
        &self,
        Parameters(params): Parameters<MoveNoteParams>,
    ) -> Result<Json<MoveNoteResult>, String> {
        let request = ops::MoveNote {
            old_path: params.old_path,
            new_path: params.new_path,
            dry_run: params.dry_run,
            prune_empty_folders: params.prune_empty_folders,
        };
        self.run("vault_move_note", move |ops, ctx| {
            ops.move_note(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_find_broken_links",
        description = "List links that resolve to no file (Obsidian's unresolved links), in path and document order. Use to find typos and notes still to be written. \
Returns `broken` [{source, line, column, link, target, embed}] and `next_cursor` when more follow. Errors: not_found (folder), invalid_path, invalid_argument (bad limit or cursor).",
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
        Parameters(params): Parameters<FindBrokenLinksParams>,
    ) -> Result<Json<BrokenLinksResult>, String> {
        let request = ops::FindBrokenLinks {
            folder: params.folder,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_find_broken_links", move |ops, ctx| {
            ops.find_broken_links(ctx, request)
        })
        .await
    }
}
