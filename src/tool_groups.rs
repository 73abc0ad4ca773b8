//! The groups of tools a deployment serves or leaves out as a whole (`[tools] groups`): their
//! names and how a configuration spells them. A kernel of its own, below both `config`, which
//! parses the names, and `mcp`, which builds each group's router, so that neither depends on the
//! other.

/// A set of tools a deployment serves or leaves out as a whole (`[tools] groups`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolGroup {
    /// Reading, writing, editing, listing, deleting and moving notes.
    Notes,
    /// Search, grep, tags, properties, recent notes and the index.
    Search,
    /// The link graph: backlinks, outgoing links, orphans, broken links.
    Links,
    /// Tasks as the Obsidian Tasks plugin reads and writes them.
    Tasks,
    /// Daily and other periodic notes.
    Daily,
    /// The vault's other files: reading images, canvases, text formats and PDFs, listing, stat.
    Files,
    /// The memory layer: dated facts about the user (left out when `[memory] enabled = false`).
    Memory,
    /// Versions, changes, restore and undo (left out when `[history] enabled = false`).
    History,
    /// Edits of many notes as one change: properties, tags, text across notes.
    Batch,
    /// Obsidian Bases: querying views, listing and writing bases.
    Bases,
}

impl ToolGroup {
    pub const ALL: [ToolGroup; 10] = [
        ToolGroup::Notes,
        ToolGroup::Search,
        ToolGroup::Links,
        ToolGroup::Tasks,
        ToolGroup::Daily,
        ToolGroup::Files,
        ToolGroup::Memory,
        ToolGroup::History,
        ToolGroup::Batch,
        ToolGroup::Bases,
    ];

    /// The name a configuration uses.
    pub fn name(self) -> &'static str {
        match self {
            ToolGroup::Notes => "notes",
            ToolGroup::Search => "search",
            ToolGroup::Links => "links",
            ToolGroup::Tasks => "tasks",
            ToolGroup::Daily => "daily",
            ToolGroup::Files => "files",
            ToolGroup::Memory => "memory",
            ToolGroup::History => "history",
            ToolGroup::Batch => "batch",
            ToolGroup::Bases => "bases",
        }
    }

    pub fn parse(name: &str) -> Option<ToolGroup> {
        ToolGroup::ALL
            .into_iter()
            .find(|group| group.name() == name)
    }
}
