//! The tool surface: the groups a deployment may serve, each an area with its own router and wire
//! types (`notes`, `search`, `links`, `tasks`, `daily`, `files`, `memory`,
//! `history`, `batch`, `bases`), and what the areas share:
//! the paging parameters, the note listing result, and the rule that a tool list never mentions a tool it
//! leaves out.
//!
//! A tool is an `async fn` named after the tool (`vault_<verb>_<object>`), in its area's
//! `#[tool_router]` block; its parameters convert into one `ops` request with `From`, and it hands
//! both to `QuireServer::run`.

mod bases;
mod batch;
pub(super) mod confirm;
mod daily;
mod files;
mod history;
mod links;
mod memory;
mod notes;
mod schema;
mod search;
mod tasks;

use std::collections::HashSet;
use std::sync::LazyLock;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::QuireServer;
use crate::ops;
pub use crate::tool_groups::ToolGroup;

/// The router of each group; a trait, since `ToolGroup` lives below `mcp` (in `tool_groups`) so
/// that `config` can name groups without depending on the MCP adapter.
trait GroupTools {
    fn tools(self) -> ToolRouter<QuireServer>;
}

impl GroupTools for ToolGroup {
    fn tools(self) -> ToolRouter<QuireServer> {
        match self {
            ToolGroup::Notes => QuireServer::notes_tools(),
            ToolGroup::Search => QuireServer::search_tools(),
            ToolGroup::Links => QuireServer::links_tools(),
            ToolGroup::Tasks => QuireServer::tasks_tools(),
            ToolGroup::Daily => QuireServer::daily_tools(),
            ToolGroup::Files => QuireServer::files_tools(),
            ToolGroup::Memory => QuireServer::memory_tools(),
            ToolGroup::History => QuireServer::history_tools(),
            ToolGroup::Batch => QuireServer::batch_tools(),
            ToolGroup::Bases => QuireServer::bases_tools(),
        }
    }
}

/// The tools of `groups`.
pub fn router(groups: &[ToolGroup]) -> ToolRouter<QuireServer> {
    let mut served: Vec<ToolGroup> = Vec::new();
    for group in groups {
        if !served.contains(group) {
            served.push(*group);
        }
    }
    let mut router = served
        .into_iter()
        .map(ToolGroup::tools)
        .fold(ToolRouter::new(), |sum, group| sum + group);
    schema::leave_out_null(&mut router);
    schema::declare_change_id(&mut router);
    router
}

/// Whether a tool may change the vault (anything not marked read-only does).
pub fn writes(tool: &Tool) -> bool {
    tool.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true)
}

/// What `tools/list` answers, computed once per deployment: every offered tool for a caller who
/// may write, the read-only ones for a caller who may not, each with descriptions that mention
/// only tools in the same list.
pub struct Listings {
    writer: Vec<Tool>,
    reader: Vec<Tool>,
}

impl Listings {
    pub fn new(offered: &ToolRouter<QuireServer>) -> Listings {
        let every = offered.list_all();
        let readable: Vec<Tool> = every.iter().filter(|t| !writes(t)).cloned().collect();
        Listings {
            writer: mentioning_only_each_other(every),
            reader: mentioning_only_each_other(readable),
        }
    }

    pub fn for_caller(&self, may_write: bool) -> Vec<Tool> {
        if may_write {
            self.writer.clone()
        } else {
            self.reader.clone()
        }
    }

    /// The names of every offered tool.
    pub fn offered_names(&self) -> Vec<String> {
        self.writer.iter().map(|t| t.name.to_string()).collect()
    }
}

fn mentioning_only_each_other(mut listed: Vec<Tool>) -> Vec<Tool> {
    let names: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    for tool in &mut listed {
        if let Some(description) = &tool.description {
            tool.description = Some(mentioning_only(description, &names).into());
        }
    }
    listed
}

/// `text` without the sentences that name a Quire tool missing from `offered`, so a trimmed tool
/// list (groups, read-only, an identity without write rules) never points a model at a tool it
/// cannot call. A sentence ends with ". ".
pub fn mentioning_only(text: &str, offered: &[String]) -> String {
    static EVERY: LazyLock<HashSet<String>> =
        LazyLock::new(|| super::tool_names().into_iter().collect());
    let kept: String = text
        .split_inclusive(". ")
        .filter(|sentence| {
            tool_mentions(sentence)
                .all(|name| !EVERY.contains(name) || offered.iter().any(|o| o == name))
        })
        .collect();
    kept.trim_end().to_string()
}

/// The `vault_…` words of `text`.
pub fn tool_mentions(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("vault_").map(move |(at, _)| {
        let end = text[at..]
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .map_or(text.len(), |length| at + length);
        &text[at..end]
    })
}

/// The paging parameters every listing takes, flattened into its parameters (the schema stays
/// one flat object).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Page {
    /// Page size (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// The previous page's `next_cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteSummary {
    pub path: String,
    /// The note's name as Obsidian shows it (file name without .md).
    pub title: String,
    pub bytes: u64,
    pub modified: String,
    /// Tags from properties and inline #tags, without '#'.
    pub tags: Vec<String>,
}

/// A page of notes: what every tool that lists notes returns.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListNotesResult {
    pub notes: Vec<NoteSummary>,
    /// Present when more notes follow: pass it back as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::NoteList> for ListNotesResult {
    fn from(list: ops::NoteList) -> Self {
        ListNotesResult {
            notes: list
                .notes
                .into_iter()
                .map(|note| NoteSummary {
                    path: note.path,
                    title: note.title,
                    bytes: note.bytes,
                    modified: note.modified,
                    tags: note.tags,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_naming_a_missing_tool_are_dropped() {
        let offered = vec!["vault_read_note".to_string()];
        let text =
            "Use it often. Read with vault_read_note first. Then call vault_list_tasks. Done.";
        assert_eq!(
            mentioning_only(text, &offered),
            "Use it often. Read with vault_read_note first. Done."
        );
        // Words that merely look like tool names are no tools.
        assert_eq!(
            mentioning_only("See vault_thing.", &offered),
            "See vault_thing."
        );
    }
}
