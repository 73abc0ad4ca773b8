//! Running a batch: every candidate locked in path order, read and edited in memory, every note
//! it changes checked writable, then the whole change staged in the history and written; a
//! failing write puts back the notes already written, and a kill mid-way is completed at the
//! next start from the history (`history::apply`). All or nothing.
//!
//! A plan never holds more than `PLAN_NOTES_AT_LIMIT` notes at the size limit: no edited note may
//! pass `max_note_bytes` (checked as the edit runs, not only at write time), and the before and
//! after text of the notes it changes may not pass 16 times that together. A dry run (and so the
//! confirmation, which is one) counts the same bytes but keeps none of them.

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

/// How many notes at `max_note_bytes` a plan may hold (before and after counted): 160 MiB with the
/// default 10 MiB limit, which fits a batch over 10,000 notes of 8 KB each.
pub(super) const PLAN_NOTES_AT_LIMIT: u64 = 16;

/// An edit of one note's text, given the most bytes the new text may have: `Ok(None)` when it
/// does not apply (nothing to change), else the new text and how many places changed.
pub(super) type NoteEdit<'a> =
    dyn Fn(&VaultPath, &str, usize) -> Result<Option<(String, usize)>, Refusal> + 'a;

/// Why an edit leaves a note alone.
pub(super) enum Refusal {
    /// The edit cannot apply to this note; the batch lists it and changes nothing.
    Cannot(String),
    /// The new text would pass the size limit; the batch stops at once.
    TooLarge,
}

/// The notes an edit cannot apply to, each with why.
type Refused = Vec<(String, String)>;

/// One note the batch changes.
struct Planned {
    path: VaultPath,
    revision: Revision,
    changes: usize,
    /// Its text before and after (`None` in a dry run, which only counts).
    texts: Option<(Vec<u8>, String)>,
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
        let (mut planned, refused) = self.plan_batch(&visibility, candidates, dry_run, edit)?;
        refuse_unwritable(&visibility, &planned)?;
        if !dry_run && !refused.is_empty() {
            return Err(refused_error(&refused));
        }
        if dry_run || planned.is_empty() {
            return Ok(answer(&planned, None, dry_run, refused));
        }
        let after: Vec<String> = planned
            .iter()
            .map(|note| note.texts.as_ref().map(|(_, after)| after.as_bytes()))
            .map(|after| Revision::of(after.unwrap_or_default()).to_string())
            .collect();
        let staged = {
            let drafts: Vec<Draft<'_>> = planned
                .iter()
                .filter_map(|note| Some((note, note.texts.as_ref()?)))
                .map(|(note, (before, after))| Draft {
                    path: note.path.as_str(),
                    previous_path: None,
                    kind: Kind::Write,
                    before: Some(before),
                    after: Some(after.as_bytes()),
                })
                .collect();
            self.stage_change(ctx, &visibility, Kind::Batch, &drafts)?
        };
        // The history holds the texts now: each new text moves into its step, and the old ones
        // go, so writing holds one copy of the batch, not three.
        let steps: Vec<Step> = planned
            .iter_mut()
            .map(|note| Step {
                path: note.path.clone(),
                expected: Some(note.revision.clone()),
                bytes: note.texts.take().map(|(_, after)| after.into_bytes()),
                trash: false,
            })
            .collect();
        let written = self.apply_steps(&visibility, &steps);
        drop(steps);
        self.settle_change(ctx, staged, written.is_ok());
        written?;
        let paths: Vec<String> = planned.iter().map(|note| note.path.to_string()).collect();
        if let Err(error) = self.walls.index(&visibility).refresh(paths) {
            tracing::error!(%error, "the index could not take in a batch");
        }
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
    /// Stops with `too_large` as soon as one note would pass the note limit or the plan its own.
    fn plan_batch(
        &self,
        visibility: &Visibility,
        candidates: &[VaultPath],
        dry_run: bool,
        edit: &NoteEdit<'_>,
    ) -> Result<(Vec<Planned>, Refused), OpsError> {
        let note_limit = self.walls.vault(visibility).max_file_bytes();
        let plan_limit = note_limit.saturating_mul(PLAN_NOTES_AT_LIMIT);
        let max_bytes = usize::try_from(note_limit).unwrap_or(usize::MAX);
        let mut held: u64 = 0;
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
            let too_large = || OpsError::EditTooLarge {
                path: path.to_string(),
                limit: note_limit,
                hint: "Make the edit smaller (a shorter value or new_text, a narrower old_text), or ask the operator to raise limits.max_note_bytes.",
            };
            match edit(path, text, max_bytes) {
                Ok(Some((after, _))) if after.len() > max_bytes => return Err(too_large()),
                Ok(Some((after, changes))) if after != text => {
                    held = held.saturating_add((file.bytes.len() + after.len()) as u64);
                    if held > plan_limit {
                        return Err(OpsError::BatchTooLarge {
                            notes: planned.len() + 1,
                            limit: plan_limit,
                        });
                    }
                    planned.push(Planned {
                        path: path.clone(),
                        revision: file.revision.clone(),
                        changes,
                        texts: (!dry_run).then_some((file.bytes, after)),
                    });
                }
                Ok(_) => {}
                Err(Refusal::TooLarge) => return Err(too_large()),
                Err(Refusal::Cannot(reason)) => refused.push((path.to_string(), reason)),
            }
        }
        Ok((planned, refused))
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
