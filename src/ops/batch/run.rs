//! Running a batch: every candidate locked in path order, read and edited in memory, every note
//! it changes checked writable, then the whole change staged in the history and written; a
//! failing write puts back the notes already written, and a kill mid-way is completed at the
//! next start from the history (`history::apply`). All or nothing.

use super::types::{BatchNote, BatchResult};
use crate::history::{Draft, Kind};
use crate::ops::access::Visibility;
use crate::ops::audit::Event;
use crate::ops::error::OpsError;
use crate::ops::history::Step;
use crate::ops::shared::{Context, Ops};
use crate::vault::{Revision, VaultPath};

/// The most notes a batch's answer lists one by one; the totals count them all.
const MAX_LISTED: usize = 100;

/// An edit of one note's text: `Ok(None)` when it does not apply (nothing to change), else the
/// new text and how many places changed; `Err` says why the note cannot be edited.
pub(super) type NoteEdit<'a> =
    dyn Fn(&VaultPath, &str) -> Result<Option<(String, usize)>, String> + 'a;

/// One note the batch changes.
struct Planned {
    path: VaultPath,
    revision: Revision,
    before: Vec<u8>,
    after: String,
    changes: usize,
}

impl Ops {
    /// Runs `edit` over `candidates` as one change (or, with `dry_run`, says what it would do).
    pub(super) fn run_batch(
        &self,
        ctx: &Context,
        candidates: &[VaultPath],
        dry_run: bool,
        edit: &NoteEdit<'_>,
    ) -> Result<BatchResult, OpsError> {
        let visibility = self.visibility(ctx);
        let _locks = self.lock_in_order(&visibility, candidates);
        let (planned, refused) = self.plan_batch(&visibility, candidates, edit);
        refuse_unwritable(&visibility, &planned)?;
        if !dry_run && !refused.is_empty() {
            return Err(refused_error(&refused));
        }
        if dry_run || planned.is_empty() {
            return Ok(answer(&planned, None, dry_run, refused));
        }
        let drafts: Vec<Draft<'_>> = planned
            .iter()
            .map(|note| Draft {
                path: note.path.as_str(),
                previous_path: None,
                kind: Kind::Write,
                before: Some(&note.before),
                after: Some(note.after.as_bytes()),
            })
            .collect();
        let steps: Vec<Step> = planned
            .iter()
            .map(|note| Step {
                path: note.path.clone(),
                expected: Some(note.revision.clone()),
                bytes: Some(note.after.clone().into_bytes()),
                trash: false,
            })
            .collect();
        let staged = self.stage_change(ctx, &visibility, Kind::Batch, &drafts)?;
        let written = self.apply_steps(&visibility, &steps);
        self.settle_change(ctx, staged, written.is_ok());
        written?;
        let paths: Vec<String> = planned.iter().map(|note| note.path.to_string()).collect();
        if let Err(error) = self.walls.index(&visibility).refresh(paths) {
            tracing::error!(%error, "the index could not take in a batch");
        }
        let after: Vec<String> = planned
            .iter()
            .map(|note| Revision::of(note.after.as_bytes()).to_string())
            .collect();
        for (note, after) in planned.iter().zip(&after) {
            let before = note.revision.to_string();
            self.audit.record(
                ctx,
                Event::changed(note.path.as_str(), Some(&before), Some(after)),
            );
        }
        Ok(answer(&planned, Some(&after), false, refused))
    }

    /// Reads and edits every candidate in memory: the notes that change, and those refused.
    fn plan_batch(
        &self,
        visibility: &Visibility,
        candidates: &[VaultPath],
        edit: &NoteEdit<'_>,
    ) -> (Vec<Planned>, Vec<(String, String)>) {
        let mut planned = Vec::new();
        let mut refused = Vec::new();
        for path in candidates {
            // Gone since it was found (a sync client, another call): nothing to edit there.
            let Ok(file) = self.walls.vault(visibility).read(path) else {
                continue;
            };
            let Ok(text) = std::str::from_utf8(&file.bytes) else {
                refused.push((path.to_string(), "the note is not UTF-8 text".to_owned()));
                continue;
            };
            match edit(path, text) {
                Ok(Some((after, changes))) if after != text => planned.push(Planned {
                    path: path.clone(),
                    revision: file.revision.clone(),
                    before: file.bytes.clone(),
                    after,
                    changes,
                }),
                Ok(_) => {}
                Err(reason) => refused.push((path.to_string(), reason)),
            }
        }
        (planned, refused)
    }
}

/// A batch touching a note the caller may read but not write is refused as a whole.
fn refuse_unwritable(visibility: &Visibility, planned: &[Planned]) -> Result<(), OpsError> {
    let unwritable: Vec<&str> = planned
        .iter()
        .map(|note| note.path.as_str())
        .filter(|path| !visibility.may_write(path))
        .collect();
    if unwritable.is_empty() {
        return Ok(());
    }
    Err(OpsError::PathForbidden {
        input: unwritable
            .iter()
            .take(20)
            .copied()
            .collect::<Vec<_>>()
            .join(", "),
        reason: format!(
            "this batch would change {} note(s) you may read but not change, so nothing was changed; narrow it with `paths` or `filter` to notes you may change",
            unwritable.len()
        ),
    })
}

fn refused_error(refused: &[(String, String)]) -> OpsError {
    let listed: Vec<String> = refused
        .iter()
        .take(20)
        .map(|(path, why)| format!("'{path}': {why}"))
        .collect();
    OpsError::invalid_argument(format!(
        "nothing was changed: the edit cannot apply to {} note(s): {}{}. Fix those notes, or leave them out with `paths` or `filter`, and retry (`dry_run: true` lists them all).",
        refused.len(),
        listed.join("; "),
        if refused.len() > 20 { "; ..." } else { "" }
    ))
}

fn answer(
    planned: &[Planned],
    after: Option<&[String]>,
    dry_run: bool,
    refused: Vec<(String, String)>,
) -> BatchResult {
    let notes = planned
        .iter()
        .enumerate()
        .take(MAX_LISTED)
        .map(|(at, note)| BatchNote {
            path: note.path.to_string(),
            revision_before: note.revision.to_string(),
            revision_after: after.and_then(|after| after.get(at).cloned()),
            changes: note.changes,
        })
        .collect();
    BatchResult {
        dry_run,
        notes,
        total_notes: planned.len(),
        total_changes: planned.iter().map(|note| note.changes).sum(),
        refused,
    }
}
