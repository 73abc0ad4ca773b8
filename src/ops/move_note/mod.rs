//! `vault_move_note`: moving or renaming a note or attachment and rewriting every link that would
//! otherwise break or change its target.
//!
//! The move plans everything before writing anything: it locks every file it may touch (in path
//! order, so two moves cannot deadlock), reads each and finds, with Obsidian's resolver before and
//! after the move, every link whose target would change. Then it creates the destination
//! exclusively, rewrites the linking files (each with the revision it read, so an edit made
//! meanwhile is a conflict), and removes the source last. A failure at any step undoes the steps
//! before it as far as the files still hold what the move wrote, so nothing is ever lost: at worst
//! both copies exist and every link points at one of them.

mod check;
mod execute;
mod plan;
mod recover;

pub use check::{LinkChange, MoveNote, MovedNote, RewrittenFile};
