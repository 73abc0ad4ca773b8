//! Note edits: patch by heading, replace text, insert at an anchor, replace or delete a line span, and
//! update properties.
//!
//! Each is one read-modify-write under the note's lock: read, check `expected_revision`, compute the new
//! text with the pure `markdown` edit model, and write it only if the file still has the revision that
//! was read. Body edits are refused if they would change the properties block in any way.

use crate::history::{Draft, Kind};
use crate::ops::access::Writable;
use serde_json::{Map, Value};

use super::error::OpsError;
use super::inputs::{find_heading, parse_path, parse_revision};
use super::notes::is_note;
use super::shared::{Context, Ops, rfc3339};
use crate::markdown::edit::{self, EditError, Edited, Position};
use crate::markdown::frontmatter;
use crate::markdown::properties_edit::{self, PropertiesEditError};
use crate::markdown::sections::{self, PatchOperation};
use crate::vault::{Resolved, Revision, VaultError, VaultPath, WriteMode};

#[derive(Debug, Clone)]
pub struct PatchNote {
    pub path: String,
    pub operation: PatchOperation,
    pub content: String,
    pub heading: Option<String>,
    pub heading_level: Option<u8>,
    pub include_children: bool,
    pub expected_revision: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ReplaceInNote {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
    pub replace_all_occurrences: bool,
    pub expected_revision: Option<String>,
}

#[derive(Debug, Clone)]
pub struct InsertAtAnchor {
    pub path: String,
    pub anchor: String,
    pub position: Position,
    pub content: String,
    pub first_match: bool,
    pub expected_revision: Option<String>,
}

/// A line span from `start_anchor` through `end_anchor`; `content: None` deletes it.
#[derive(Debug, Clone)]
pub struct EditSpan {
    pub path: String,
    pub start_anchor: String,
    pub end_anchor: Option<String>,
    pub content: Option<String>,
    pub first_match: bool,
    pub expected_revision: Option<String>,
}

#[derive(Debug, Clone)]
pub struct UpdateProperties {
    pub path: String,
    pub properties: Map<String, Value>,
    pub replace: bool,
    pub expected_revision: Option<String>,
    /// Refuse values that do not fit the vault's declared property types (else warn).
    pub strict: bool,
}

/// The note after an edit.
#[derive(Debug, Clone)]
pub struct EditedNote {
    pub path: String,
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    /// False when the edit left the bytes as they were (nothing was written).
    pub changed: bool,
    /// True when the note did not exist and this edit created it.
    pub created: bool,
    /// 1-based lines of the new content in the edited note.
    pub lines: Option<(usize, usize)>,
    /// For text replacement: how many occurrences were replaced.
    pub replacements: Option<usize>,
    /// For properties updates: the keys that changed and the properties afterwards.
    pub changed_keys: Vec<String>,
    pub properties: Option<Map<String, Value>>,
    /// Where another writer's version that reached the note during the write is kept.
    pub conflict_copy: Option<String>,
    /// Values written that do not fit the vault's declared property types.
    pub warnings: Vec<String>,
}

/// What an edit computed from the current text.
pub(super) struct Outcome {
    pub(super) text: String,
    pub(super) lines: Option<(usize, usize)>,
    pub(super) replacements: Option<usize>,
    pub(super) changed_keys: Vec<String>,
    pub(super) properties: Option<Map<String, Value>>,
}

impl From<Edited> for Outcome {
    fn from(edited: Edited) -> Self {
        Outcome {
            text: edited.text,
            lines: edited.lines,
            replacements: None,
            changed_keys: Vec::new(),
            properties: None,
        }
    }
}

impl Ops {
    pub fn patch_note(&self, ctx: &Context, request: PatchNote) -> Result<EditedNote, OpsError> {
        if request.heading.is_none() && request.heading_level.is_some() {
            return Err(OpsError::invalid_argument(
                "heading_level only applies together with heading",
            ));
        }
        if let Some(level) = request.heading_level
            && !(1..=6).contains(&level)
        {
            return Err(OpsError::invalid_argument(format!(
                "heading_level {level} is out of range; use 1 to 6"
            )));
        }
        self.edit_body(
            ctx,
            &request.path,
            request.expected_revision.as_deref(),
            |path, text| {
                let splice = match &request.heading {
                    Some(heading) => {
                        let found = find_heading(path, text, heading, request.heading_level)?;
                        sections::patch_section(
                            text,
                            &found,
                            request.include_children,
                            request.operation,
                            &request.content,
                        )
                    }
                    None => sections::patch_body(text, request.operation, &request.content),
                }
                .map_err(|error| edit_error(path, error))?;
                apply(splice, text)
            },
        )
    }

    pub fn replace_in_note(
        &self,
        ctx: &Context,
        request: ReplaceInNote,
    ) -> Result<EditedNote, OpsError> {
        self.edit_body(
            ctx,
            &request.path,
            request.expected_revision.as_deref(),
            |path, text| {
                edit::replace_text(
                    text,
                    &request.old_text,
                    &request.new_text,
                    request.replace_all_occurrences,
                )
                .map(|edited| Outcome {
                    replacements: Some(edited.replacements),
                    ..Outcome::from(edited)
                })
                .map_err(|error| edit_error(path, error))
            },
        )
    }

    pub fn insert_at_anchor(
        &self,
        ctx: &Context,
        request: InsertAtAnchor,
    ) -> Result<EditedNote, OpsError> {
        self.edit_body(
            ctx,
            &request.path,
            request.expected_revision.as_deref(),
            |path, text| {
                let splice = edit::insert_at_anchor(
                    text,
                    &request.anchor,
                    request.position,
                    &request.content,
                    request.first_match,
                )
                .map_err(|error| edit_error(path, error))?;
                apply(splice, text)
            },
        )
    }

    pub fn edit_span(&self, ctx: &Context, request: EditSpan) -> Result<EditedNote, OpsError> {
        self.edit_body(
            ctx,
            &request.path,
            request.expected_revision.as_deref(),
            |path, text| {
                let splice = edit::replace_span(
                    text,
                    &request.start_anchor,
                    request.end_anchor.as_deref(),
                    request.content.as_deref().unwrap_or(""),
                    request.first_match,
                )
                .map_err(|error| edit_error(path, error))?;
                apply(splice, text)
            },
        )
    }

    pub fn update_properties(
        &self,
        ctx: &Context,
        request: UpdateProperties,
    ) -> Result<EditedNote, OpsError> {
        let misfits = self.property_misfits(ctx, &request.properties);
        if request.strict && !misfits.is_empty() {
            return Err(OpsError::invalid_argument(format!(
                "nothing was written: {}. Give values of the declared types, or leave out strict to write them anyway (Obsidian then shows them as invalid).",
                misfits.join("; ")
            )));
        }
        let mut edited = self.edit_note(
            ctx,
            &request.path,
            request.expected_revision.as_deref(),
            |path, text| {
                let update =
                    properties_edit::update_properties(text, &request.properties, request.replace)
                        .map_err(|error| match error {
                            PropertiesEditError::Invalid(error) => OpsError::InvalidProperties {
                                path: path.to_string(),
                                line: error.line,
                                column: error.column,
                                message: error.message,
                            },
                            PropertiesEditError::NotEditable(reason) => {
                                OpsError::PropertiesNotEditable {
                                    path: path.to_string(),
                                    reason,
                                }
                            }
                        })?;
                Ok(Outcome {
                    text: update.text,
                    lines: None,
                    replacements: None,
                    changed_keys: update.changed_keys,
                    properties: Some(update.properties),
                })
            },
        )?;
        edited.warnings = misfits;
        Ok(edited)
    }

    /// The updates whose value does not fit the type the vault declares for its key, each said
    /// for the caller ("'rating' is declared a number ..."); removals always fit.
    fn property_misfits(&self, ctx: &Context, updates: &Map<String, Value>) -> Vec<String> {
        let visibility = self.visibility(ctx);
        let types = self.walls.vault(&visibility).property_types();
        updates
            .iter()
            .filter(|(_, value)| !value.is_null())
            .filter_map(|(key, value)| {
                let declared = types.get(&key.to_lowercase())?;
                crate::markdown::property_types::check_fits(declared, value)
                    .err()
                    .map(|why| format!("'{key}' {why}"))
            })
            .collect()
    }

    /// An edit of the body: like `edit_note`, but the properties block must come out byte-identical.
    pub(super) fn edit_body(
        &self,
        ctx: &Context,
        raw_path: &str,
        expected_revision: Option<&str>,
        compute: impl FnOnce(&VaultPath, &str) -> Result<Outcome, OpsError>,
    ) -> Result<EditedNote, OpsError> {
        self.edit_note(ctx, raw_path, expected_revision, |path, text| {
            keep_properties(path, text, compute(path, text)?)
        })
    }

    /// One read-modify-write of a note under its lock.
    fn edit_note(
        &self,
        ctx: &Context,
        raw_path: &str,
        expected_revision: Option<&str>,
        compute: impl FnOnce(&VaultPath, &str) -> Result<Outcome, OpsError>,
    ) -> Result<EditedNote, OpsError> {
        let path = parse_path(raw_path)?;
        if !is_note(&path) {
            return Err(OpsError::UnsupportedExtension {
                path: path.to_string(),
                allowed: "editing tools change markdown notes (.md) only; use vault_write_note for other files",
            });
        }
        // Checked before the disk is touched, so the answer is the same whether the note exists.
        let writable = self.require_write(ctx, &path)?;
        let expected = parse_revision(expected_revision)?;
        self.read_modify_write(ctx, &writable, expected.as_ref(), None, compute)
    }

    /// The read-modify-write every edit shares, for a `path` the caller was already allowed to
    /// write: take the note's lock, read it (or, when it is missing and `create` is given, start
    /// from the text `create` returns), check `expected`, compute, and write only if the file
    /// still has the revision that was read (or, when creating, still does not exist).
    pub(super) fn read_modify_write(
        &self,
        ctx: &Context,
        writable: &Writable,
        expected: Option<&Revision>,
        create: Option<&dyn Fn() -> Result<String, OpsError>>,
        compute: impl FnOnce(&VaultPath, &str) -> Result<Outcome, OpsError>,
    ) -> Result<EditedNote, OpsError> {
        let path = writable.path();
        let _lock = self.walls.vault(writable).lock(path);
        let resolved = self
            .walls
            .vault(writable)
            .resolve(path)
            .map_err(|e| OpsError::from_vault(e, expected))?;
        match create {
            Some(create) if !resolved.exists => {
                self.create_edited(ctx, writable, &resolved, expected, create, compute)
            }
            _ => self.rewrite_edited(ctx, writable, &resolved, expected, compute),
        }
    }

    /// The missing note made from `create` and then edited, created exclusively: a note someone
    /// else created meanwhile stays, and this edit is a conflict.
    fn create_edited(
        &self,
        ctx: &Context,
        writable: &Writable,
        resolved: &Resolved,
        expected: Option<&Revision>,
        create: &dyn Fn() -> Result<String, OpsError>,
        compute: impl FnOnce(&VaultPath, &str) -> Result<Outcome, OpsError>,
    ) -> Result<EditedNote, OpsError> {
        let path = &resolved.rel;
        if let Some(expected) = expected {
            return Err(OpsError::NotFound {
                what: format!(
                    "'{path}' does not exist, but expected_revision {expected} was given: it may have been moved or deleted"
                ),
                hint: "Omit expected_revision to create it.",
            });
        }
        let initial = create()?;
        let outcome = compute(path, &initial)?;
        let staged = self.stage_change(
            ctx,
            writable,
            Kind::Create,
            &[Draft {
                path: path.as_str(),
                previous_path: None,
                kind: Kind::Create,
                before: None,
                after: Some(outcome.text.as_bytes()),
            }],
        )?;
        #[cfg(feature = "test-faults")]
        pause_if_asked();
        let result = self.walls.vault(writable).write(
            resolved,
            outcome.text.as_bytes(),
            WriteMode::CreateNew,
        );
        self.settle_change(ctx, staged, result.is_ok());
        let written = match result {
            Ok(written) => written,
            // Someone else created it after the lookup: their note stays, ours is refused.
            Err(VaultError::AlreadyExists { .. }) => {
                let current = self
                    .walls
                    .vault(writable)
                    .read(path)
                    .map(|file| file.revision.to_string())
                    .unwrap_or_else(|_| "unknown".into());
                return Err(OpsError::Conflict {
                    path: path.to_string(),
                    expected: "(none: the note did not exist yet)".into(),
                    current,
                });
            }
            Err(error) => return Err(OpsError::from_vault(error, None)),
        };
        self.reindex(writable, path);
        let after = written.revision.to_string();
        self.audit.record(
            ctx,
            super::audit::Event::changed(path.as_str(), None, Some(&after)),
        );
        Ok(edited_note(
            path,
            outcome,
            after,
            written.bytes,
            written.modified,
            Change::Created,
            written.conflict_copy,
        ))
    }

    /// The existing note edited against `expected` (when given) and against the revision read;
    /// an edit that changes nothing writes nothing.
    fn rewrite_edited(
        &self,
        ctx: &Context,
        writable: &Writable,
        resolved: &Resolved,
        expected: Option<&Revision>,
        compute: impl FnOnce(&VaultPath, &str) -> Result<Outcome, OpsError>,
    ) -> Result<EditedNote, OpsError> {
        let path = &resolved.rel;
        let current = self
            .walls
            .vault(writable)
            .read_resolved(resolved)
            .map_err(|e| match e {
                // Deleted between the lookup and the read (a sync client replacing it by
                // delete-and-create): the note changed under the edit, which wrote nothing.
                VaultError::Io { path, source }
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    VaultError::ChangedDuringWrite {
                        path,
                        current: None,
                    }
                }
                other => other,
            })
            .map_err(|e| OpsError::from_vault(e, expected))?;
        if let Some(expected) = expected
            && *expected != current.revision
        {
            return Err(OpsError::Conflict {
                path: path.to_string(),
                expected: expected.to_string(),
                current: current.revision.to_string(),
            });
        }
        let text = std::str::from_utf8(&current.bytes).map_err(|error| {
            OpsError::invalid_argument(format!(
                "'{path}' is not valid UTF-8 text (the first invalid byte is at offset {}); Quire edits notes as UTF-8. Convert the file to UTF-8 and retry.",
                error.valid_up_to()
            ))
        })?;
        let outcome = compute(path, text)?;
        if outcome.text == text {
            let (revision, bytes) = (current.revision.to_string(), current.bytes.len() as u64);
            return Ok(edited_note(
                path,
                outcome,
                revision,
                bytes,
                current.modified,
                Change::None,
                None,
            ));
        }
        let staged = self.stage_change(
            ctx,
            writable,
            Kind::Write,
            &[Draft {
                path: path.as_str(),
                previous_path: None,
                kind: Kind::Write,
                before: Some(&current.bytes),
                after: Some(outcome.text.as_bytes()),
            }],
        )?;
        #[cfg(feature = "test-faults")]
        pause_if_asked();
        let result = self.walls.vault(writable).write(
            resolved,
            outcome.text.as_bytes(),
            WriteMode::Replace {
                expected: &current.revision,
            },
        );
        self.settle_change(ctx, staged, result.is_ok());
        let written = result.map_err(|e| OpsError::from_vault(e, Some(&current.revision)))?;
        // Read your writes: searches and task lists see the edit as soon as the call returns.
        self.reindex(writable, path);
        let before = current.revision.to_string();
        let after = written.revision.to_string();
        self.audit.record(
            ctx,
            super::audit::Event::changed(path.as_str(), Some(&before), Some(&after)),
        );
        Ok(edited_note(
            path,
            outcome,
            after,
            written.bytes,
            written.modified,
            Change::Rewritten,
            written.conflict_copy,
        ))
    }
}

/// What an edit did to the file.
enum Change {
    None,
    Created,
    Rewritten,
}

fn edited_note(
    path: &VaultPath,
    outcome: Outcome,
    revision: String,
    bytes: u64,
    modified: std::time::SystemTime,
    change: Change,
    conflict_copy: Option<String>,
) -> EditedNote {
    EditedNote {
        path: path.to_string(),
        revision,
        bytes,
        modified: rfc3339(modified),
        changed: !matches!(change, Change::None),
        created: matches!(change, Change::Created),
        lines: outcome.lines,
        replacements: outcome.replacements,
        changed_keys: outcome.changed_keys,
        properties: outcome.properties,
        conflict_copy,
        warnings: Vec::new(),
    }
}

/// With the `test-faults` feature, `QUIRE_TEST_FAULT=pause-before-write:MS` holds every edit for MS
/// milliseconds between reading the note and writing it, so a test can write the note from outside
/// in exactly that gap and see the conflict.
#[cfg(feature = "test-faults")]
fn pause_if_asked() {
    let pause = std::env::var("QUIRE_TEST_FAULT").ok().and_then(|fault| {
        fault
            .strip_prefix("pause-before-write:")
            .and_then(|ms| ms.parse::<u64>().ok())
    });
    if let Some(ms) = pause {
        tracing::warn!(ms, "test fault: pausing before the write");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Refuses an outcome that changed the properties block: body edits never touch it.
pub(super) fn keep_properties(
    path: &VaultPath,
    before: &str,
    outcome: Outcome,
) -> Result<Outcome, OpsError> {
    if properties_block(before) != properties_block(&outcome.text) {
        return Err(OpsError::invalid_argument(format!(
            "this edit of '{path}' would create or change its properties block (a '---' line at the top of the note, or the closing '---' of the block); body edits never touch properties. Use vault_update_properties for properties, or change the content so it does not form a '---' block"
        )));
    }
    Ok(outcome)
}

/// The properties block exactly as written (fences included), or `None`.
fn properties_block(text: &str) -> Option<&str> {
    let split = frontmatter::split(text);
    split.yaml.and(text.get(..split.block_len))
}

pub(super) fn apply(splice: edit::Splice, text: &str) -> Result<Outcome, OpsError> {
    splice
        .apply(text)
        .map(Outcome::from)
        .ok_or_else(|| OpsError::Internal("an edit fell outside the note".into()))
}

pub(super) fn edit_error(path: &VaultPath, error: EditError) -> OpsError {
    match error {
        EditError::NoMatch { what, hint } => OpsError::NoMatch {
            path: path.to_string(),
            what,
            hint,
        },
        EditError::AmbiguousMatch {
            what,
            count,
            lines,
            hint,
        } => OpsError::AmbiguousMatch {
            path: path.to_string(),
            what,
            count,
            lines: lines
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            hint,
        },
        EditError::Invalid(message) => OpsError::InvalidArgument(message),
    }
}
