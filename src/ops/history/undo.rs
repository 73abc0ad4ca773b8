//! Taking changes back: `vault_undo` puts every note of a change as it was before it, and
//! `vault_restore_version` writes one old version back. Both are changes themselves (undoing an
//! undo redoes), both need write access to every note they touch, and neither overwrites a
//! later change: a note that changed since is a conflict, and nothing is written. An undo
//! removes or moves a note only where `vault_delete_note` and `vault_move_note` would: never in
//! a protected folder (memory, daily notes, `[vault] protected_folders`).

use super::apply::Step;
use super::reading::shows_place;
use super::types::{RestoreVersion, UndoChange, UndoStep, Undone};
use crate::history::{Draft, Kind, Version};
use crate::ops::access::{Granted, Visibility};
use crate::ops::audit::Event;
use crate::ops::error::OpsError;
use crate::ops::inputs::{parse_path, parse_revision};
use crate::ops::notes::WrittenNote;
use crate::ops::shared::{Context, Ops, rfc3339};
use crate::vault::{FileLock, Revision, VaultPath, WriteMode};

/// How many notes changed since an undo's conflict names; the rest are counted.
const CONFLICTS_NAMED: usize = 10;

/// One file of the change being undone: where it is now and where it goes back to.
struct Reversal {
    /// Where the change left the file (its path in the version).
    now: VaultPath,
    /// Where it was before (the old path of a move, else `now`).
    back: VaultPath,
    version: Version,
}

/// A file's content before and after the change being undone (`None`: no file).
type Contents = (Option<Vec<u8>>, Option<Vec<u8>>);

impl Ops {
    pub fn undo(&self, ctx: &Context, request: UndoChange) -> Result<Undone, OpsError> {
        let history = self.history()?;
        let change = request.change_id.trim();
        let unknown = || OpsError::NotFound {
            what: format!("there is no change {change:?} in the history"),
            hint: "Call vault_list_changes for the change ids you may see (old ones may have been pruned; a change that also touched notes you may not read can be undone only by someone who may read them all).",
        };
        let versions = history.change(change).map_err(|error| match error {
            crate::history::HistoryError::UnknownChange(_) => unknown(),
            other => OpsError::HistoryUnavailable(other),
        })?;
        let visibility = self.visibility(ctx);
        let reversals = reversals(&versions)?;
        // A change touching a note the caller may not read answers as an unknown id does, before
        // anything else is said of it (that it came from outside, that it is undone), so no answer
        // tells a restricted caller that a hidden note changed (issue 63, F11).
        if !reversals.iter().all(|r| seen(&visibility, r)) {
            return Err(unknown());
        }
        if versions.iter().any(|v| v.change.kind == Kind::External) {
            return Err(OpsError::invalid_argument(format!(
                "change {change} is an edit made outside Quire (Obsidian, a sync client); Quire does not undo those. Restore the version you want with vault_restore_version."
            )));
        }
        refuse_unwritable(&visibility, change, &reversals)?;
        self.refuse_protected_steps(change, &reversals)?;
        if let Some(by) = self.standing_undo(change)? {
            return Err(OpsError::AlreadyUndone {
                change: change.to_owned(),
                by,
            });
        }
        let _locks = self.lock_all(&visibility, &reversals);
        self.refuse_changed_since(&visibility, change, &reversals)?;
        let steps: Vec<UndoStep> = reversals.iter().map(describe).collect();
        if request.dry_run {
            return Ok(Undone {
                undone: change.to_owned(),
                dry_run: true,
                notes: steps,
            });
        }
        self.take_back(ctx, &visibility, change, &reversals)?;
        Ok(Undone {
            undone: change.to_owned(),
            dry_run: false,
            notes: steps,
        })
    }

    pub fn restore_version(
        &self,
        ctx: &Context,
        request: RestoreVersion,
    ) -> Result<WrittenNote, OpsError> {
        let path = parse_path(&request.path)?;
        self.require_read(ctx, &path)?;
        let writable = self.require_write(ctx, &path)?;
        let expected = parse_revision(request.expected_revision.as_deref())?;
        let version = self.version_of(ctx, &path, request.version_id)?;
        let content = self.content_after(&path, &version)?;
        let _lock = self.walls.vault(&writable).lock(&path);
        let resolved = self
            .walls
            .vault(&writable)
            .resolve(&path)
            .map_err(|e| OpsError::from_vault(e, expected.as_ref()))?;
        let current = if resolved.exists {
            Some(
                self.walls
                    .vault(&writable)
                    .read_resolved(&resolved)
                    .map_err(|e| OpsError::from_vault(e, expected.as_ref()))?,
            )
        } else {
            None
        };
        let current_revision = current.as_ref().map(|file| file.revision.clone());
        if let Some(expected) = &expected
            && current_revision.as_ref() != Some(expected)
        {
            return Err(OpsError::Conflict {
                path: path.to_string(),
                expected: expected.to_string(),
                current: current_revision
                    .map_or("(none: the note does not exist)".into(), |r| r.to_string()),
            });
        }
        let staged = self.stage_change(
            ctx,
            &writable,
            Kind::Restore,
            &[Draft {
                path: path.as_str(),
                previous_path: None,
                kind: if current.is_some() {
                    Kind::Write
                } else {
                    Kind::Create
                },
                before: current.as_ref().map(|file| file.bytes.as_slice()),
                after: Some(&content),
            }],
        )?;
        let mode = match &current_revision {
            Some(expected) => WriteMode::Replace { expected },
            None => WriteMode::CreateNew,
        };
        let result = self.walls.vault(&writable).write(&resolved, &content, mode);
        self.settle_change(ctx, staged, result.is_ok());
        let written = result.map_err(|e| OpsError::from_vault(e, current_revision.as_ref()))?;
        self.reindex(&writable, &path);
        let before = current_revision.map(|r| r.to_string());
        let after = written.revision.to_string();
        self.audit.record(
            ctx,
            Event::changed(path.as_str(), before.as_deref(), Some(&after)),
        );
        Ok(WrittenNote {
            path: path.to_string(),
            revision: after,
            bytes: written.bytes,
            modified: rfc3339(written.modified),
            created: current.is_none(),
            conflict_copy: written.conflict_copy,
        })
    }

    /// Refuses the undo when it would remove a note from a protected folder, or move one out of
    /// or into one: the guards a delete or a move keeps hold for an undo of a create or a move.
    fn refuse_protected_steps(&self, change: &str, reversals: &[Reversal]) -> Result<(), OpsError> {
        let explain = |error: OpsError| match error {
            OpsError::PathForbidden { input, reason } => OpsError::PathForbidden {
                input,
                reason: format!(
                    "{reason}; undoing change {change} would remove or move it, so nothing was changed (vault_restore_version puts back single versions)"
                ),
            },
            other => other,
        };
        for reversal in reversals {
            let removes = reversal.version.revision_before.is_none();
            if reversal.back != reversal.now {
                self.refuse_protected(&reversal.now).map_err(explain)?;
                self.refuse_protected(&reversal.back).map_err(explain)?;
            } else if removes {
                self.refuse_protected(&reversal.now).map_err(explain)?;
            }
        }
        Ok(())
    }

    /// Every note the undo touches, locked in path order as every multi-note write locks.
    fn lock_all(&self, granted: &impl Granted, reversals: &[Reversal]) -> Vec<FileLock<'_>> {
        self.lock_in_order(granted, reversals.iter().flat_map(|r| [&r.now, &r.back]))
    }

    /// Refuses, naming each note, when a note holds anything but what the change left (or the
    /// place a moved note goes back to is taken).
    fn refuse_changed_since(
        &self,
        visibility: &Visibility,
        change: &str,
        reversals: &[Reversal],
    ) -> Result<(), OpsError> {
        let now = |path: &VaultPath| {
            self.walls
                .vault(visibility)
                .read(path)
                .ok()
                .map(|file| file.revision.to_string())
        };
        let mut changed = Vec::new();
        for reversal in reversals {
            let left = reversal.version.revision_after.clone();
            let found = now(&reversal.now);
            if found != left {
                changed.push(format!(
                    "'{}' (the change left {}, it now holds {})",
                    reversal.now,
                    left.as_deref().unwrap_or("no file"),
                    found.as_deref().unwrap_or("no file")
                ));
            }
            if reversal.back != reversal.now && now(&reversal.back).is_some() {
                changed.push(format!(
                    "'{}' (a note now stands where the moved note goes back)",
                    reversal.back
                ));
            }
        }
        if changed.is_empty() {
            return Ok(());
        }
        // A batch of thousands of notes changed since would make a message of hundreds of KB;
        // the first few say what happened and the count says how much.
        let more = changed.len().saturating_sub(CONFLICTS_NAMED);
        changed.truncate(CONFLICTS_NAMED);
        let mut notes = changed.join("; ");
        if more > 0 {
            notes.push_str(&format!(
                "; and {more} more (vault_note_history of each shows who changed it)"
            ));
        }
        Err(OpsError::UndoConflict {
            change: change.to_owned(),
            notes,
        })
    }

    /// Stages the undo as a change of its own, then writes it.
    fn take_back(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        change: &str,
        reversals: &[Reversal],
    ) -> Result<(), OpsError> {
        let mut contents: Vec<Contents> = Vec::new();
        for reversal in reversals {
            let before = self.stored(reversal.version.revision_before.as_deref())?;
            let after = self.stored(reversal.version.revision_after.as_deref())?;
            contents.push((before, after));
        }
        let drafts: Vec<Draft<'_>> = reversals
            .iter()
            .zip(&contents)
            .map(|(reversal, (before, after))| inverse(reversal, before, after))
            .collect();
        let steps = steps(reversals, &contents);
        let staged = self.stage_undo(ctx, visibility, Kind::Undo, Some(change), &drafts)?;
        let result = self.apply_steps(visibility, &steps);
        self.settle_change(ctx, staged, result.is_ok());
        result?;
        let mut refreshed: Vec<String> = Vec::new();
        for reversal in reversals {
            refreshed.push(reversal.now.to_string());
            if reversal.back != reversal.now {
                refreshed.push(reversal.back.to_string());
            }
            self.audit.record(
                ctx,
                Event {
                    destination: (reversal.back != reversal.now).then_some(reversal.back.as_str()),
                    ..Event::changed(
                        reversal.now.as_str(),
                        reversal.version.revision_after.as_deref(),
                        reversal.version.revision_before.as_deref(),
                    )
                },
            );
        }
        if let Err(error) = self.walls.index(visibility).refresh(refreshed) {
            tracing::error!(%error, "the index could not take in an undo");
        }
        Ok(())
    }

    fn stored(&self, revision: Option<&str>) -> Result<Option<Vec<u8>>, OpsError> {
        let Some(revision) = revision else {
            return Ok(None);
        };
        let content = self
            .history()?
            .content(revision)
            .map_err(OpsError::HistoryUnavailable)?;
        content
            .ok_or_else(|| {
                OpsError::Internal(format!("the history lost the content {revision}").into())
            })
            .map(Some)
    }
}

fn reversals(versions: &[Version]) -> Result<Vec<Reversal>, OpsError> {
    versions
        .iter()
        .map(|version| {
            let now =
                VaultPath::parse(&version.path).map_err(|e| OpsError::path(&version.path, e))?;
            let back = match &version.previous_path {
                Some(previous) => {
                    VaultPath::parse(previous).map_err(|e| OpsError::path(previous, e))?
                }
                None => now.clone(),
            };
            Ok(Reversal {
                now,
                back,
                version: version.clone(),
            })
        })
        .collect()
}

/// Where a reversal's file really was before the change, when a link led elsewhere.
fn real_back(reversal: &Reversal) -> Option<&str> {
    match reversal.version.previous_path {
        Some(_) => reversal.version.real_previous_path.as_deref(),
        None => reversal.version.real_path.as_deref(),
    }
}

/// Whether the caller may read both places a reversal touches, each where it really was too.
fn seen(visibility: &Visibility, reversal: &Reversal) -> bool {
    shows_place(
        visibility,
        reversal.now.as_str(),
        reversal.version.real_path.as_deref(),
    ) && shows_place(visibility, reversal.back.as_str(), real_back(reversal))
}

/// Refuses the whole undo when the caller may not change one of its notes, naming none of them
/// (the caller may read them all, so this reveals only the rules).
fn refuse_unwritable(
    visibility: &Visibility,
    change: &str,
    reversals: &[Reversal],
) -> Result<(), OpsError> {
    let writable = reversals.iter().all(|r| {
        let real = [r.version.real_path.as_deref(), real_back(r)];
        visibility.may_write(r.now.as_str())
            && visibility.may_write(r.back.as_str())
            && real
                .into_iter()
                .flatten()
                .all(|real| visibility.may_write(real))
    });
    if writable {
        return Ok(());
    }
    Err(OpsError::PathForbidden {
        input: change.to_owned(),
        reason: "this change touches notes you may not change, so it can only be undone as a whole by someone who may; restore single versions of your notes with vault_restore_version instead".into(),
    })
}

fn describe(reversal: &Reversal) -> UndoStep {
    let version = &reversal.version;
    let (action, to) = if reversal.back != reversal.now {
        ("move_back", Some(reversal.back.to_string()))
    } else if version.revision_before.is_none() {
        ("remove", None)
    } else if version.revision_after.is_none() {
        ("recreate", None)
    } else {
        ("restore", None)
    };
    UndoStep {
        path: reversal.now.to_string(),
        action,
        to,
    }
}

/// The undo's own version of a file: the change's, turned around, so undoing it redoes.
fn inverse<'a>(
    reversal: &'a Reversal,
    before: &'a Option<Vec<u8>>,
    after: &'a Option<Vec<u8>>,
) -> Draft<'a> {
    let moved = reversal.back != reversal.now;
    let kind = if moved {
        Kind::Move
    } else if after.is_none() {
        Kind::Create
    } else if before.is_none() {
        Kind::Delete
    } else {
        Kind::Write
    };
    Draft {
        path: reversal.back.as_str(),
        previous_path: moved.then_some(reversal.now.as_str()),
        kind,
        before: after.as_deref(),
        after: before.as_deref(),
    }
}

/// The file steps of an undo: a moved note goes back (written at its old path, removed from the
/// new), a created one to the trash, the others get their old content.
fn steps(reversals: &[Reversal], contents: &[Contents]) -> Vec<Step> {
    let mut steps = Vec::new();
    for (reversal, (before, _)) in reversals.iter().zip(contents) {
        let left = reversal
            .version
            .revision_after
            .as_deref()
            .and_then(Revision::parse);
        if reversal.back != reversal.now {
            steps.push(Step {
                path: reversal.back.clone(),
                expected: None,
                bytes: before.clone(),
                trash: false,
            });
            steps.push(Step {
                path: reversal.now.clone(),
                expected: left,
                bytes: None,
                trash: false,
            });
        } else {
            steps.push(Step {
                path: reversal.now.clone(),
                expected: left,
                bytes: before.clone(),
                trash: before.is_none(),
            });
        }
    }
    steps
}
