//! Tasks exactly as the Obsidian Tasks plugin (8.x) reads and writes them: statuses (`status.rs`),
//! recurrence rules (`recurrence/`), one task line (`line/`) and the tasks of a whole note with
//! their place in it (`note.rs`). Pure: settings and today are passed in, nothing is read from disk,
//! and no input can make it panic.

pub mod edit;
pub mod line;
pub mod note;
pub mod recurrence;
pub mod status;

pub use line::{
    InvalidDates, OnCompletion, ParsedLine, Priority, Task, TaskDate, TaskFormat, TaskSettings,
    format_date, parse_line_fields, parse_task_line,
};
pub use note::{
    ListItem, NoteTask, TaskSite, note_list_items, note_task_sites, note_tasks, task_sites_of,
};
pub use recurrence::Recurrence;
pub use status::{Status, StatusRegistry, StatusType};
