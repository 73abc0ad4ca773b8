//! Atomic batch edits (issue 49): one call changes many notes as one change, all or nothing.
//! `select.rs` finds the notes, `run.rs` locks, checks, stages and writes them, and `edits.rs`
//! holds the four edits (rename a property, set a property, rename a tag, replace across notes).

mod edits;
mod run;
mod select;
mod types;

pub use types::{
    BatchNote, BatchResult, RenameProperty, RenameTag, ReplaceAcross, SetProperty, Target,
};
