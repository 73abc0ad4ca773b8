//! The requests and answers of the history operations.

/// `vault_note_history`: a note's versions, newest first.
#[derive(Debug, Clone, Default)]
pub struct NoteHistory {
    pub path: String,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// One version of a note as a caller may see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryVersion {
    pub version_id: i64,
    pub change_id: String,
    /// RFC 3339.
    pub time: String,
    /// The identity that made it, or `another identity` for a restricted caller.
    pub identity: String,
    pub tool: String,
    /// `create`, `write`, `move`, `delete`, `restore`, `undo` or `external`.
    pub kind: String,
    /// The note's path in this version (older versions of a moved note have its old path).
    pub path: String,
    /// The content's revision after this version (`None`: the note was deleted).
    pub revision: Option<String>,
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct NoteVersions {
    pub path: String,
    pub versions: Vec<HistoryVersion>,
    pub next_cursor: Option<String>,
}

/// `vault_read_version`: a version's content, or a diff against another version or the note now.
#[derive(Debug, Clone, Default)]
pub struct ReadVersion {
    pub path: String,
    pub version_id: i64,
    /// `current`, or another version id (as text).
    pub diff_against: Option<String>,
}

#[derive(Debug, Clone)]
pub struct VersionRead {
    pub path: String,
    pub version_id: i64,
    pub revision: String,
    pub bytes: u64,
    /// The content (absent when a diff was asked for, or when it is not UTF-8 text).
    pub content: Option<String>,
    /// A unified diff from the other version (or the note now) to this version.
    pub diff: Option<String>,
}

/// `vault_restore_version`: write a version's content back as a new change.
#[derive(Debug, Clone, Default)]
pub struct RestoreVersion {
    pub path: String,
    pub version_id: i64,
    pub expected_revision: Option<String>,
}

/// `vault_list_changes`: change sets, newest first.
#[derive(Debug, Clone, Default)]
pub struct ListChanges {
    pub identity: Option<String>,
    /// RFC 3339 or YYYY-MM-DD.
    pub since: Option<String>,
    pub path_prefix: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeListed {
    pub change_id: String,
    pub time: String,
    pub identity: String,
    pub tool: String,
    pub kind: String,
    /// The notes it touched that the caller may read (old paths of moves included).
    pub paths: Vec<String>,
    /// The change an undo took back.
    pub undoes: Option<String>,
    /// The later change that took this one back, while it stands.
    pub undone_by: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ChangeList {
    pub changes: Vec<ChangeListed>,
    pub next_cursor: Option<String>,
}

/// `vault_undo`: put every note of a change back as it was before it.
#[derive(Debug, Clone, Default)]
pub struct UndoChange {
    pub change_id: String,
    pub dry_run: bool,
}

/// What an undo does (or would do) to one note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoStep {
    pub path: String,
    /// `restore` (content put back), `remove` (a created note, to `.trash/`), `recreate` (a
    /// deleted note), `move_back` (to `to`).
    pub action: &'static str,
    /// Where a moved note goes back to.
    pub to: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Undone {
    pub undone: String,
    pub dry_run: bool,
    pub notes: Vec<UndoStep>,
}
