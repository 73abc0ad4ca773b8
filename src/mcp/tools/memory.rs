//! The memory tools: listing, reading, adding to, deleting from and recalling the memory layer's
//! files (`ops::memory`), with their wire types. The whole group is left out when `[memory]
//! enabled = false`.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetMemoryParams {
    /// A memory file name, such as "Opinions"; default all.
    #[serde(default)]
    pub file: Option<String>,
    /// Only this `##` section.
    #[serde(default)]
    pub section: Option<String>,
    /// YYYY-MM-DD: only entries dated on or after it.
    #[serde(default)]
    pub on_or_after: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMemoryParams {
    /// Memory file name, such as "Opinions"; created when missing.
    pub file: String,
    /// `##` section; created when missing.
    pub section: String,
    /// One line: the fact, in the user's terms.
    pub entry: String,
    /// YYYY-MM-DD; default today.
    #[serde(default)]
    pub date: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteMemoryParams {
    pub file: String,
    pub section: String,
    /// The entry's YYYY-MM-DD.
    pub date: String,
    /// The entry's text, as read.
    pub entry: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryRecallParams {
    /// What to recall, such as "coffee preferences".
    pub query: String,
    /// Only this memory file.
    #[serde(default)]
    pub file: Option<String>,
    /// Most entries (default 10).
    #[schemars(range(min = 1, max = 50))]
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemorySectionWire {
    pub name: String,
    pub entries: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryFileWire {
    /// What the memory tools take as `file`.
    pub file: String,
    pub path: String,
    /// What belongs in the file, from its scope callout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// "timeline" (entries stay) or "living" (entries that no longer hold may be removed).
    pub entry_policy: String,
    pub sections: Vec<MemorySectionWire>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryFilesResult {
    pub files: Vec<MemoryFileWire>,
}

impl From<Vec<ops::MemoryFileSummary>> for MemoryFilesResult {
    fn from(files: Vec<ops::MemoryFileSummary>) -> Self {
        MemoryFilesResult {
            files: files
                .into_iter()
                .map(|file| MemoryFileWire {
                    file: file.file,
                    path: file.path,
                    scope: file.scope,
                    entry_policy: file.entry_policy.as_str().to_owned(),
                    sections: file
                        .sections
                        .into_iter()
                        .map(|section| MemorySectionWire {
                            name: section.name,
                            entries: section.entries,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryEntryWire {
    pub file: String,
    pub section: String,
    /// YYYY-MM-DD.
    pub date: String,
    pub text: String,
    /// 1-based line in the file.
    pub line: usize,
}

impl From<ops::MemoryEntry> for MemoryEntryWire {
    fn from(entry: ops::MemoryEntry) -> Self {
        MemoryEntryWire {
            file: entry.file,
            section: entry.section,
            date: entry.date,
            text: entry.text,
            line: entry.line,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryEntriesResult {
    /// In file order: files by name, sections as written, newest entry first.
    pub entries: Vec<MemoryEntryWire>,
}

impl From<Vec<ops::MemoryEntry>> for MemoryEntriesResult {
    fn from(entries: Vec<ops::MemoryEntry>) -> Self {
        MemoryEntriesResult {
            entries: entries.into_iter().map(MemoryEntryWire::from).collect(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryRecallResult {
    /// Oldest first.
    pub entries: Vec<MemoryEntryWire>,
    /// True when no entry had every word of the query, so these match any of them.
    pub any_word: bool,
}

impl From<ops::Recalled> for MemoryRecallResult {
    fn from(recalled: ops::Recalled) -> Self {
        MemoryRecallResult {
            entries: recalled
                .entries
                .into_iter()
                .map(MemoryEntryWire::from)
                .collect(),
            any_word: recalled.any_word,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MemoryWriteResult {
    pub path: String,
    /// The file's revision now.
    pub revision: String,
    /// False when nothing was written (the entry was already there).
    pub changed: bool,
    /// True when this call created the file.
    pub created: bool,
    /// The entry's date.
    pub date: String,
    /// Another writer changed the file while this write replaced it: your change is in place, and their version is kept under this name. Read it and merge what it adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_copy: Option<String>,
}

impl From<ops::MemoryWrite> for MemoryWriteResult {
    fn from(write: ops::MemoryWrite) -> Self {
        MemoryWriteResult {
            path: write.path,
            revision: write.revision,
            changed: write.changed,
            created: write.created,
            date: write.date,
            conflict_copy: write.conflict_copy,
        }
    }
}

// Parameters into `ops` requests.

impl From<GetMemoryParams> for ops::GetMemory {
    fn from(params: GetMemoryParams) -> Self {
        ops::GetMemory {
            file: params.file,
            section: params.section,
            on_or_after: params.on_or_after,
        }
    }
}

impl From<UpdateMemoryParams> for ops::UpdateMemory {
    fn from(params: UpdateMemoryParams) -> Self {
        ops::UpdateMemory {
            file: params.file,
            section: params.section,
            entry: params.entry,
            date: params.date,
        }
    }
}

impl From<DeleteMemoryParams> for ops::DeleteMemory {
    fn from(params: DeleteMemoryParams) -> Self {
        ops::DeleteMemory {
            file: params.file,
            section: params.section,
            date: params.date,
            entry: params.entry,
        }
    }
}

impl From<MemoryRecallParams> for ops::MemoryRecall {
    fn from(params: MemoryRecallParams) -> Self {
        ops::MemoryRecall {
            query: params.query,
            file: params.file,
            limit: params.limit,
        }
    }
}

#[tool_router(router = memory_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "List the memory files (dated facts about the user): each file's scope, entry policy and sections with entry counts. Call it before filing a new entry.",
        annotations(
            title = "Memory files",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_list_memory_files(
        &self,
        caller: Caller,
    ) -> Result<Json<MemoryFilesResult>, ToolError> {
        self.run(caller, (), |ops: &Ops, ctx, ()| ops.list_memory_files(ctx))
            .await
    }

    #[tool(
        description = "Read memory entries: all, one file, one section, or those dated on or after a day.",
        annotations(
            title = "Get memory",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_get_memory(
        &self,
        caller: Caller,
        Parameters(params): Parameters<GetMemoryParams>,
    ) -> Result<Json<MemoryEntriesResult>, ToolError> {
        self.run(caller, params.into(), Ops::get_memory).await
    }

    #[tool(
        description = "Remember a fact about the user (a preference, opinion, principle, routine, or how agents should work) as a dated entry on top of a memory file's section. Repeating an entry already there changes nothing.",
        annotations(
            title = "Update memory",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_update_memory(
        &self,
        caller: Caller,
        Parameters(params): Parameters<UpdateMemoryParams>,
    ) -> Result<Json<MemoryWriteResult>, ToolError> {
        self.run(caller, params.into(), Ops::update_memory).await
    }

    #[tool(
        description = "Delete one memory entry, named by section, date and text; refused when several lines match. Remove entries only when the user asks, or from a living file.",
        annotations(
            title = "Delete memory entry",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_delete_memory(
        &self,
        caller: Caller,
        Parameters(params): Parameters<DeleteMemoryParams>,
    ) -> Result<Json<MemoryWriteResult>, ToolError> {
        self.run(caller, params.into(), Ops::delete_memory).await
    }

    #[tool(
        description = "Recall the memory entries about a topic (matched on entry, section and file name), oldest first: before answering anything the user's preferences or history may shape.",
        annotations(
            title = "Recall memory",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_memory_recall(
        &self,
        caller: Caller,
        Parameters(params): Parameters<MemoryRecallParams>,
    ) -> Result<Json<MemoryRecallResult>, ToolError> {
        self.run(caller, params.into(), Ops::memory_recall).await
    }
}
