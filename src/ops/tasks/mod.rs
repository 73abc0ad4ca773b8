//! Tasks as the Obsidian Tasks plugin sees them: listing with filters, sorting and paging, creating a
//! task line in the plugin's field order, and updating one (status changes that stamp or strip done
//! and cancelled dates and spawn the next occurrence exactly as the plugin's toggle does, field edits,
//! moves and new sub-tasks).
//!
//! The plugin's settings (`data.json`: global filter, statuses, formats) are read on every call, so a
//! change in Obsidian applies at once; the index holds settings-independent checkbox lines and their
//! reading, which a listing filters, sorts and pages in SQL under the settings of the call. Every
//! write is one read-modify-write under the note's lock (`Ops::edit_body`), checked against
//! `expected_revision` and against the revision read, so a concurrent writer yields `conflict`.

mod dates;
mod listing;
mod parse;
mod reading;
mod types;
mod writes;

pub use types::{
    CreateTask, ListTasks, SortBy, SubtaskProgress, TaskDateFilter, TaskFields, TaskItem, TaskList,
    TaskWrite, TaskWriteFormat, UpdateTask,
};
