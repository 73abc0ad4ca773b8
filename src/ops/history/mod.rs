//! The history tools' operations (issue 49): a note's versions across its moves, one version (or
//! a diff), the list of changes, restoring a version and undoing a change. What the history
//! shows a caller is what the caller may read; what restore and undo write, the caller may write.

mod apply;
mod outside;
mod reading;
mod types;
mod undo;

pub(in crate::ops) use apply::Step;
pub use types::{
    ChangeList, ChangeListed, HistoryVersion, ListChanges, NoteHistory, NoteVersions, ReadVersion,
    RestoreVersion, UndoChange, UndoStep, Undone, VersionRead,
};
