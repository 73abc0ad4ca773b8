//! The one entry point for everything a client may do to a vault.
//!
//! Every function takes a `Context` carrying the caller's `Principal`, turns raw inputs into domain
//! types (`VaultPath`, `Revision`), does the work through `vault` and `markdown`, and returns plain
//! data. Transports (stdio, HTTP) only adapt; none reaches the vault except through here, so access
//! control added here covers every transport. Functions block on file I/O: call them off the async
//! executor.

pub(crate) mod access;
mod audit;
mod bases;
mod batch;
mod changes;
mod clock;
mod complete;
mod daily;
mod edit;
mod error;
mod files;
mod history;
mod inputs;
mod links;
mod memory;
mod move_journal;
mod move_note;
mod notes;
mod orientation;
mod paging;
mod review;
mod safety;
mod search;
mod shared;
mod tasks;
mod turns;

pub use crate::markdown::edit::Position as AnchorPosition;
pub use crate::markdown::sections::PatchOperation;
pub use crate::markdown::tasks::edit::LanePosition as TaskPosition;
pub use crate::vault::Period;
pub use audit::{AuditLog, AuditRotation};
pub use bases::{
    BaseAnswer, BaseGroup, BaseList, BaseListed, BaseRow, BaseSummary, ListBases, QueryBase,
    ViewListed, WriteBase,
};
pub use batch::{
    BatchNote, BatchResult, RenameProperty, RenameTag, ReplaceAcross, SetProperty, Target,
};
pub use complete::{Completions, MAX_COMPLETIONS};
pub use daily::{
    AppendDailyNote, AppendedDailyNote, DailyNote, GetDailyNote, PeriodicSettingsUsed,
};
pub use edit::{EditSpan, EditedNote, InsertAtAnchor, PatchNote, ReplaceInNote, UpdateProperties};
pub use error::OpsError;
pub use files::{
    FileEntry, FileList, FilePart, FileRead, ListFiles, PathKind, PathStat, ReadFile, StatPath,
};
pub use history::{
    ChangeList, ChangeListed, HistoryVersion, ListChanges, NoteHistory, NoteVersions, ReadVersion,
    RestoreVersion, UndoChange, UndoStep, Undone, VersionRead,
};
pub use links::{
    Backlink, Backlinks, BrokenLink, BrokenLinks, FindBrokenLinks, FindOrphans, GetLinks,
    OutgoingLink, OutgoingLinks, TargetKind,
};
pub use memory::{
    Bootstrap, DeleteMemory, GetMemory, MemoryEntry, MemoryFileSummary, MemoryRecall,
    MemorySectionSummary, MemoryWrite, Recalled, UpdateMemory,
};
pub use move_note::{LinkChange, MoveNote, MovedNote, RewrittenFile};
pub use notes::{
    DeleteNote, DeletedNote, ListNotes, NoteList, NoteRead, NoteSummary, OutlineEntry, ReadMode,
    ReadNote, WriteNote, WrittenNote,
};
pub use review::{
    Assembled, DEFAULT_MAX_CHARS as DEFAULT_REVIEW_CHARS, DailyReview, Material, MemoryReview,
    envelope, escape_content,
};
pub use safety::{ConfirmMode, Safety};
pub use search::{
    CountList, Counted, CountedList, DEFAULT_GREP_BUDGET, DateFilter, Grep, GrepHit, GrepResult,
    ListPropertyValues, RebuiltIndex, RecentNotes, RecentSort, SearchByFolder, SearchByProperty,
    SearchByTag, SearchFilters, SearchMode, SearchNotes, SearchResult, SearchResults,
};
pub use search::{EmbedPass, SemanticSearch};
pub use tasks::{
    CreateTask, ListTasks, SortBy as TaskSort, SubtaskProgress, TaskDateFilter, TaskFields,
    TaskItem, TaskList, TaskWrite, TaskWriteFormat, UpdateTask,
};

pub use orientation::{VaultOverview, VaultVocabulary};
pub use shared::{Context, FileSettings, Ops, rfc3339};
