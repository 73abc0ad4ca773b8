//! `OpsError`: every way a client request can fail, each with a stable code.
//!
//! Messages name the input and say what to do next, because their reader is usually a model that
//! will retry. `Internal` carries its cause for the log only; its message never reveals file-system
//! paths, stack traces or secrets.

use crate::index::IndexError;
use crate::vault::{PathError, Revision, VaultError};

#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error("{input:?} is not a valid vault path: {reason}.")]
    InvalidPath { input: String, reason: PathError },
    #[error("{input:?} is not accessible: {reason}.")]
    PathForbidden { input: String, reason: String },
    #[error("{what}. {hint}")]
    NotFound { what: String, hint: &'static str },
    #[error("{what}. {hint}")]
    AlreadyExists { what: String, hint: &'static str },
    #[error(
        "'{path}' changed since revision {expected}; current revision is {current}. Re-read the note and retry with the new revision."
    )]
    Conflict {
        path: String,
        expected: String,
        current: String,
    },
    #[error(
        "'{path}' already exists; replacing it needs expected_revision (its current revision is {current}). Read the note first, then pass its revision as expected_revision."
    )]
    RevisionRequired { path: String, current: String },
    #[error("'{path}' is {bytes} bytes, over the limit of {limit} bytes. {hint}")]
    TooLarge {
        path: String,
        bytes: u64,
        limit: u64,
        hint: &'static str,
    },
    #[error(
        "nothing was changed: '{path}' would be over the limit of {limit} bytes (limits.max_note_bytes) after this edit, so it stopped there. {hint}"
    )]
    EditTooLarge {
        path: String,
        limit: u64,
        hint: &'static str,
    },
    #[error(
        "nothing was changed: this batch would hold over {limit} bytes of note text (before and after, counted over its first {notes} changed notes), more than one call may keep in memory. Narrow it with `paths` or `filter` (a folder, tags, properties) and run it in parts; the bound is 16 times limits.max_note_bytes."
    )]
    BatchTooLarge { notes: usize, limit: u64 },
    #[error("'{path}' has an unsupported extension: {allowed}")]
    UnsupportedExtension { path: String, allowed: &'static str },
    #[error("{0}")]
    InvalidArgument(String),
    /// A vault file whose content cannot be returned as asked. `code` is the file reader's own
    /// stable code (`not_utf8`, `too_large`, `pdf_encrypted`, `unsupported`, ...), so an agent
    /// can tell a password-protected PDF from a missing renderer.
    #[error("'{path}': {message}")]
    File {
        path: String,
        code: &'static str,
        message: String,
    },
    #[error(
        "the properties block of '{path}' is not valid YAML at line {line}, column {column}: {message}. Fix the YAML between the '---' lines (for example quote values containing ': ' or '#') and retry."
    )]
    InvalidProperties {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("'{path}' has no heading {heading:?}{level}. Its headings are: {available}.")]
    HeadingNotFound {
        path: String,
        heading: String,
        level: String,
        available: String,
    },
    #[error(
        "'{path}' has several headings {heading:?}: {candidates}. Pass heading_level to choose one."
    )]
    AmbiguousHeading {
        path: String,
        heading: String,
        candidates: String,
    },
    #[error("{what} was not found in '{path}'. {hint}")]
    NoMatch {
        path: String,
        what: String,
        hint: String,
    },
    #[error("{what} matches {count} places in '{path}' (lines {lines}). {hint}")]
    AmbiguousMatch {
        path: String,
        what: String,
        count: usize,
        lines: String,
        hint: String,
    },
    #[error(
        "the properties of '{path}' cannot be changed safely: {reason}. Pass replace: true to rewrite the whole block, or edit the properties in Obsidian."
    )]
    PropertiesNotEditable { path: String, reason: String },
    #[error(
        "{what} waited {waited_ms} ms for its turn and did not start: {running} are running and {waiting} more are waiting (they run a few at a time, in order). Retry in a few seconds, or narrow it (folder)."
    )]
    Busy {
        what: &'static str,
        waited_ms: u64,
        running: usize,
        waiting: usize,
    },
    /// A query that needed more than one query may spend (steps, bytes held, time): `what`
    /// says which bound and where it was passed.
    #[error("this query {what}. {hint}")]
    OverBudget { what: String, hint: &'static str },
    #[error(
        "the client cancelled this request before it finished; nothing was answered. Send it again if it is still wanted."
    )]
    Cancelled,
    #[error(
        "the vault's index is not ready: building it failed, and Quire tries again on its own (within five minutes). Retry in a minute; the server log says why it failed."
    )]
    IndexUnavailable(#[source] IndexError),
    #[error("nothing was written: the history could not record this change first: {0}")]
    HistoryUnavailable(#[source] crate::history::HistoryError),
    #[error(
        "this server keeps no history ([history] enabled = false), so there are no versions or changes to list, restore or undo. Ask the vault's owner to turn it on."
    )]
    HistoryDisabled,
    #[error(
        "change {change} was already undone by change {by}. To put it back, undo {by}; to change a note further, edit it or restore one of its versions."
    )]
    AlreadyUndone { change: String, by: String },
    #[error(
        "change {change} cannot be undone: notes changed after it, and an undo never overwrites a later change. Changed: {notes}. Undo the later changes first (vault_list_changes), or restore single versions with vault_restore_version."
    )]
    UndoConflict { change: String, notes: String },
    #[error(
        "Quire hit an internal error; the server log has the details. Retry, and report it if it persists."
    )]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl OpsError {
    /// The stable code a client can branch on.
    pub fn code(&self) -> &'static str {
        match self {
            OpsError::InvalidPath { .. } => "invalid_path",
            OpsError::PathForbidden { .. } => "path_forbidden",
            OpsError::NotFound { .. } => "not_found",
            OpsError::AlreadyExists { .. } => "already_exists",
            OpsError::Conflict { .. } => "conflict",
            OpsError::RevisionRequired { .. } => "revision_required",
            OpsError::TooLarge { .. }
            | OpsError::EditTooLarge { .. }
            | OpsError::BatchTooLarge { .. } => "too_large",
            OpsError::UnsupportedExtension { .. } => "unsupported_extension",
            OpsError::InvalidArgument(_) => "invalid_argument",
            OpsError::File { code, .. } => code,
            OpsError::InvalidProperties { .. } => "invalid_properties",
            OpsError::HeadingNotFound { .. } => "heading_not_found",
            OpsError::AmbiguousHeading { .. } => "ambiguous_heading",
            OpsError::NoMatch { .. } => "no_match",
            OpsError::AmbiguousMatch { .. } => "ambiguous_match",
            OpsError::PropertiesNotEditable { .. } => "invalid_properties",
            OpsError::Busy { .. } => "busy",
            OpsError::OverBudget { .. } => "over_budget",
            OpsError::Cancelled => "cancelled",
            OpsError::IndexUnavailable(_) => "index_unavailable",
            OpsError::HistoryUnavailable(_) => "history_unavailable",
            OpsError::HistoryDisabled => "history_disabled",
            OpsError::AlreadyUndone { .. } => "already_undone",
            OpsError::UndoConflict { .. } => "conflict",
            OpsError::Internal(_) => "internal",
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> OpsError {
        OpsError::InvalidArgument(message.into())
    }

    pub(super) fn path(input: &str, reason: PathError) -> OpsError {
        if reason.is_forbidden() {
            OpsError::PathForbidden {
                input: input.to_string(),
                reason: reason.to_string(),
            }
        } else {
            OpsError::InvalidPath {
                input: input.to_string(),
                reason,
            }
        }
    }

    /// Maps a vault failure; `expected` is the revision the client based its request on.
    pub(super) fn from_vault(error: VaultError, expected: Option<&Revision>) -> OpsError {
        match error {
            VaultError::Escapes { path } => OpsError::PathForbidden {
                input: path,
                reason: "it leads outside the vault through a symbolic link".into(),
            },
            VaultError::HiddenTarget { path } => OpsError::PathForbidden {
                input: path,
                reason: "it is a symbolic link to a hidden path inside the vault".into(),
            },
            VaultError::SymlinkTarget { path } => OpsError::PathForbidden {
                input: path,
                reason: "it is a symbolic link, and Quire does not write through links; write to the file it points to instead".into(),
            },
            VaultError::NotFound { path } => OpsError::NotFound {
                what: format!("'{path}' does not exist"),
                hint: "Check the spelling, or call vault_list_notes to see what exists.",
            },
            VaultError::IsFolder { path } => OpsError::InvalidArgument(format!(
                "'{path}' is a folder, not a note; give the path of a file inside it"
            )),
            VaultError::NotRegularFile { path } => OpsError::InvalidArgument(format!(
                "'{path}' is not a regular file (a FIFO, socket or device); Quire reads only regular files"
            )),
            VaultError::NotAFolder { path } => OpsError::InvalidArgument(format!(
                "'{path}' is a file, not a folder; give a folder path"
            )),
            VaultError::RefusedName { path, reason } => OpsError::InvalidPath {
                input: path,
                reason,
            },
            VaultError::ParentIsFile { path, file } => OpsError::InvalidArgument(format!(
                "'{path}' cannot be created: '{file}' is a file, and a file cannot hold other files. Choose a path whose folders are folders (or are new)"
            )),
            VaultError::AlreadyExists { path } => OpsError::AlreadyExists {
                what: format!("'{path}' already exists"),
                hint: "Pass overwrite: true with expected_revision to replace it, or choose another path.",
            },
            VaultError::ChangedDuringWrite { path, current } => OpsError::Conflict {
                path,
                expected: expected.map_or_else(|| "(none)".into(), ToString::to_string),
                current: current.map_or_else(
                    || "none (the note was deleted)".into(),
                    |revision| revision.to_string(),
                ),
            },
            VaultError::TooLarge { path, bytes, limit } => OpsError::TooLarge {
                path,
                bytes,
                limit,
                hint: "Split the content into smaller notes, or ask the operator to raise limits.max_note_bytes.",
            },
            // Removed between the lookup and the open (a sync client replacing it): gone now.
            VaultError::Io { path, source } if source.kind() == std::io::ErrorKind::NotFound => {
                OpsError::NotFound {
                    what: format!("'{path}' was removed while Quire was opening it"),
                    hint: "Another program (a sync client, Obsidian) deleted or replaced it just now; call again, or vault_list_notes to see what exists.",
                }
            }
            VaultError::Io { path, source } => match refused_by_file_system(source.kind()) {
                Some((code, message)) => {
                    // The operator has to act (free space, remount, fix modes), so the log says it too.
                    tracing::warn!(code, %path, error = %source, "the file system refused a vault operation");
                    OpsError::File {
                        path,
                        code,
                        message: message.into(),
                    }
                }
                None => OpsError::Internal(Box::new(VaultError::Io { path, source })),
            },
        }
    }
}

/// The file-system failures the client can name and the operator can fix; others stay internal.
/// A full disk, a read-only mount or a denied file is not Quire's fault, and "retry, report it"
/// would send the agent round in circles.
fn refused_by_file_system(kind: std::io::ErrorKind) -> Option<(&'static str, &'static str)> {
    use std::io::ErrorKind;
    match kind {
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => Some((
            "disk_full",
            "no space is left on the disk holding the vault. Tell the user; retry once space has been freed.",
        )),
        ErrorKind::ReadOnlyFilesystem => Some((
            "read_only",
            "the vault is on a read-only file system; reading still works. Tell the user; retry once it is mounted read-write.",
        )),
        ErrorKind::PermissionDenied => Some((
            "permission_denied",
            "the file system denies Quire access to it (its owner or mode, or the vault folder was replaced while Quire ran). Tell the user to fix its permissions or restart Quire; other notes are unaffected.",
        )),
        _ => None,
    }
}

/// The index is derived state the client cannot repair, so an index failure is internal (logged
/// with its cause, shown as a reference only), except an index not built yet, which Quire retries
/// and a client can wait out.
impl From<IndexError> for OpsError {
    fn from(error: IndexError) -> OpsError {
        match error {
            IndexError::ReconcileFailed(_) => OpsError::IndexUnavailable(error),
            error => OpsError::Internal(Box::new(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn io_error(kind: io::ErrorKind) -> OpsError {
        OpsError::from_vault(
            VaultError::Io {
                path: "Projects/Alpha.md".into(),
                source: io::Error::from(kind),
            },
            None,
        )
    }

    #[test]
    fn file_system_refusals_are_named_not_internal() {
        for (kind, code, says) in [
            (io::ErrorKind::StorageFull, "disk_full", "no space"),
            (io::ErrorKind::QuotaExceeded, "disk_full", "no space"),
            (io::ErrorKind::ReadOnlyFilesystem, "read_only", "read-only"),
            (
                io::ErrorKind::PermissionDenied,
                "permission_denied",
                "permissions",
            ),
            // Found by races.py: a note deleted between lookup and open answered `internal`.
            (io::ErrorKind::NotFound, "not_found", "removed while"),
        ] {
            let error = io_error(kind);
            assert_eq!(error.code(), code, "{kind:?}");
            let text = error.to_string();
            assert!(
                text.contains("'Projects/Alpha.md'") && text.contains(says),
                "{text}"
            );
        }
        assert_eq!(io_error(io::ErrorKind::Other).code(), "internal");
    }
}
