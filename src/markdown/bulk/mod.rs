//! Pure text transforms for edits applied to many notes at once: renaming a property key, renaming a
//! tag, and replacing text across a note. Each takes one note's text and returns the new text, or
//! `None` when nothing matched, so a batch tool can skip untouched notes and write the rest atomically.
//! They never do I/O, never panic on any input, and refuse (rather than guess) when the result would
//! not read back as exactly the intended change.

mod keys;
mod property_key;
mod replace;
mod tag_rename;
mod tag_values;

#[cfg(test)]
mod tests;

pub use property_key::rename_property_key;
pub use replace::{Pattern, Replaced, Scope, replace_across};
pub use tag_rename::{TagRename, rename_tag};

/// Why a batch edit leaves a note alone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BulkEditError {
    /// The properties block is not valid YAML / not a mapping, so it is left alone.
    #[error("the properties block is not a valid YAML mapping: {0}")]
    InvalidProperties(String),
    /// The new property name is already a key of this note.
    #[error("the note already has a property named {0:?}")]
    KeyExists(String),
    /// The property block is written in a way that cannot be changed safely (say why).
    #[error("the note cannot be changed safely: {0}")]
    NotEditable(String),
    /// The edited note would pass the size limit it was given; the edit stopped there.
    #[error("the note would be over {max_bytes} bytes after the edit")]
    TooLarge { max_bytes: usize },
}
