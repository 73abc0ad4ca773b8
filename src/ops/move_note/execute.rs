//! Carrying out a planned move: the journal first, then the destination, the linking files on
//! several threads and the source last; a failure undoes what was written.

use super::check::{MovePlan, MovedNote, PlannedFile, RewrittenFile, Written, on_threads, report};

use crate::history::{Draft, Kind};
use crate::ops::access::{Granted, Visibility};
use crate::ops::audit::Event;
use crate::ops::error::OpsError;
use crate::ops::move_journal::{Entry, FileEntry};
use crate::ops::shared::{Context, Ops};
use crate::vault::{Resolved, Revision, VaultError, VaultPath, WriteMode};

impl Ops {
    /// Carries out a plan: creates the destination exclusively, rewrites the linking files,
    /// removes the source, and undoes what it wrote when a step fails.
    pub(super) fn execute_move(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        plan: &MovePlan,
        prune_empty_folders: bool,
        started: std::time::Instant,
    ) -> Result<MovedNote, OpsError> {
        let MovePlan {
            old,
            new,
            resolved_old,
            moved,
            planned,
            ..
        } = plan;
        // Durable before the first write; removed when this function returns, done or undone.
        let _journal = self.move_journal.begin(&journal_entry(
            self.walls.vault(visibility).root(),
            old,
            new,
            moved,
            planned,
        )?);
        // History before the first write, as for every change: settled once the files are.
        let staged =
            self.stage_change(ctx, visibility, Kind::Move, &drafts(old, moved, planned))?;
        let written = self.write_move(visibility, plan, started);
        self.settle_change(ctx, staged, written.is_ok());
        let (created, rewritten) = written?;
        let pruned_folders = if prune_empty_folders {
            // Only folders the caller may change, as vault_delete_note does.
            self.walls
                .vault(visibility)
                .prune_empty_folders(resolved_old, &|folder: &str| visibility.may_write(folder))
        } else {
            Vec::new()
        };
        let mut refreshed = vec![old.to_string(), new.to_string()];
        refreshed.extend(planned.iter().map(|file| file.path.to_string()));
        if let Err(error) = self.walls.index(visibility).refresh(refreshed) {
            tracing::error!(%error, "the index could not take in a move");
        }
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "move: source removed and index refreshed"
        );
        self.audit_move(ctx, old, moved, &created, planned, &rewritten);
        Ok(MovedNote {
            from: old.to_string(),
            to: new.to_string(),
            revision: created.to_string(),
            rewritten,
            dry_run: false,
            pruned_folders,
        })
    }

    /// The writes of a move: the destination, the linking files, the source last; a failure
    /// puts back what was written. Returns the destination's revision and the rewritten files.
    fn write_move(
        &self,
        visibility: &Visibility,
        plan: &MovePlan,
        started: std::time::Instant,
    ) -> Result<(Revision, Vec<RewrittenFile>), OpsError> {
        let MovePlan {
            new,
            resolved_old,
            resolved_new,
            moved,
            planned,
            ..
        } = plan;
        let created = self.create_destination(visibility, resolved_old, resolved_new, moved)?;
        #[cfg(feature = "test-faults")]
        abort_if_asked("destination");
        let mut rewritten: Vec<RewrittenFile> = Vec::new();
        if !moved.changes.is_empty() {
            rewritten.push(report(moved, &created));
        }
        let (done, failure) = self.write_planned(visibility, planned);
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "move: linking files written"
        );
        if let Some(error) = failure {
            self.put_back_move(visibility, &done, new, &created);
            return Err(error);
        }
        for (file, (_, revision, _)) in planned.iter().zip(&done) {
            rewritten.push(report(file, revision));
        }
        #[cfg(feature = "test-faults")]
        abort_if_asked("links");
        if let Err(error) = self.remove_source(visibility, resolved_old, moved) {
            self.put_back_move(visibility, &done, new, &created);
            return Err(error);
        }
        Ok((created, rewritten))
    }

    /// Creates the moved file at its new path, exclusively, with the source's permissions (a
    /// private note stays private); returns its revision.
    pub(super) fn create_destination(
        &self,
        granted: &impl Granted,
        resolved_old: &Resolved,
        resolved_new: &Resolved,
        moved: &PlannedFile,
    ) -> Result<Revision, OpsError> {
        let created = self
            .walls
            .vault(granted)
            .write(resolved_new, &moved.new_bytes, WriteMode::CreateNew)
            .map_err(|e| OpsError::from_vault(e, None))?;
        if let Err(error) = std::fs::metadata(&resolved_old.fs_path).and_then(|metadata| {
            std::fs::set_permissions(&resolved_new.fs_path, metadata.permissions())
        }) {
            tracing::warn!(%error, path = %resolved_new.rel, "a moved file could not keep its permissions");
        }
        Ok(created.revision)
    }

    /// Removes the source, last, and only if nobody changed it while the move ran.
    pub(super) fn remove_source(
        &self,
        granted: &impl Granted,
        resolved_old: &Resolved,
        moved: &PlannedFile,
    ) -> Result<(), OpsError> {
        let old = &resolved_old.rel;
        let still = self
            .walls
            .vault(granted)
            .read_resolved(resolved_old)
            .map_err(|e| OpsError::from_vault(e, None))?;
        if still.revision != moved.revision {
            return Err(OpsError::Conflict {
                path: old.to_string(),
                expected: moved.revision.to_string(),
                current: still.revision.to_string(),
            });
        }
        std::fs::remove_file(&resolved_old.fs_path).map_err(|source| {
            OpsError::from_vault(
                VaultError::Io {
                    path: old.to_string(),
                    source,
                },
                None,
            )
        })
    }

    /// One audit line for the moved file (`moved.path` is its new path) and one per rewritten
    /// linking file.
    pub(super) fn audit_move(
        &self,
        ctx: &Context,
        old: &VaultPath,
        moved: &PlannedFile,
        created: &Revision,
        planned: &[PlannedFile],
        rewritten: &[RewrittenFile],
    ) {
        let new = &moved.path;
        let moved_revision = created.to_string();
        let before = moved.revision.to_string();
        self.audit.record(
            ctx,
            Event {
                destination: Some(new.as_str()),
                ..Event::changed(old.as_str(), Some(&before), Some(&moved_revision))
            },
        );
        for file in rewritten {
            if file.path != new.as_str() {
                let before = planned
                    .iter()
                    .find(|planned| planned.path.as_str() == file.path)
                    .map(|planned| planned.revision.to_string());
                self.audit.record(
                    ctx,
                    Event::changed(&file.path, before.as_deref(), Some(&file.revision)),
                );
            }
        }
    }

    /// Writes every planned file (each checked against the revision it was planned from) on a
    /// few threads: each write waits for its own fsyncs, and the file system commits concurrent
    /// fsyncs together, so a move rewriting a thousand files does not pay for a thousand commits
    /// one after the other. Returns what was written, in plan order, and the first failure.
    pub(super) fn write_planned(
        &self,
        granted: &(impl Granted + Sync),
        planned: &[PlannedFile],
    ) -> (Vec<Written>, Option<OpsError>) {
        let outcomes = on_threads(planned, "writing a move's files", |file| {
            self.walls
                .vault(granted)
                .resolve(&file.path)
                .and_then(|resolved| {
                    self.walls.vault(granted).write(
                        &resolved,
                        &file.new_bytes,
                        WriteMode::Replace {
                            expected: &file.revision,
                        },
                    )
                })
                .map(|written| written.revision)
                .map_err(|e| OpsError::from_vault(e, Some(&file.revision)))
        });
        let mut done = Vec::new();
        let mut failure = None;
        for (file, outcome) in planned.iter().zip(outcomes) {
            match outcome {
                Ok(revision) => done.push((file.path.clone(), revision, file.old_bytes.clone())),
                Err(error) => {
                    failure.get_or_insert(error);
                }
            }
        }
        (done, failure)
    }

    /// Puts back what a failed move wrote, where the files still hold exactly that: the old bytes
    /// of each rewritten file, and removes the created destination. Best effort: whatever cannot
    /// be undone keeps a working link (to the destination, which then stays).
    pub(super) fn put_back_move(
        &self,
        granted: &impl Granted,
        done: &[(VaultPath, Revision, Vec<u8>)],
        created: &VaultPath,
        revision: &Revision,
    ) {
        let mut restored_all = true;
        for (path, written, old_bytes) in done.iter().rev() {
            let restored = self
                .walls
                .vault(granted)
                .resolve(path)
                .and_then(|resolved| {
                    self.walls.vault(granted).write(
                        &resolved,
                        old_bytes,
                        WriteMode::Replace { expected: written },
                    )
                });
            if let Err(error) = restored {
                restored_all = false;
                tracing::warn!(%error, path = %path, "a failed move could not restore a rewritten file");
            }
        }
        if restored_all
            && let Ok(resolved) = self.walls.vault(granted).resolve(created)
            && let Ok(contents) = self.walls.vault(granted).read_resolved(&resolved)
            && &contents.revision == revision
        {
            let _ = std::fs::remove_file(&resolved.fs_path);
        }
        let mut refreshed = vec![created.to_string()];
        refreshed.extend(done.iter().map(|(path, _, _)| path.to_string()));
        let _ = self.walls.index(granted).refresh(refreshed);
    }
}

/// With the `test-faults` feature, `QUIRE_TEST_FAULT=abort-in-move:STEP` kills the process right
/// after STEP of a move (`destination`: created; `links`: linking files rewritten), as a power cut
/// would, so a test can check the next start finishes the move.
#[cfg(feature = "test-faults")]
pub(super) fn abort_if_asked(step: &str) {
    if std::env::var("QUIRE_TEST_FAULT").ok().as_deref() == Some(&format!("abort-in-move:{step}")) {
        tracing::warn!(step, "test fault: aborting in the middle of a move");
        std::process::abort();
    }
}

/// What the history keeps of a move: the moved file (under its new path, with its old one) and
/// every linking file it rewrote, each with its content before and after.
fn drafts<'a>(
    old: &'a VaultPath,
    moved: &'a PlannedFile,
    planned: &'a [PlannedFile],
) -> Vec<Draft<'a>> {
    let mut drafts = vec![Draft {
        path: moved.path.as_str(),
        previous_path: Some(old.as_str()),
        kind: Kind::Move,
        before: Some(&moved.old_bytes),
        after: Some(&moved.new_bytes),
    }];
    drafts.extend(planned.iter().map(|file| Draft {
        path: file.path.as_str(),
        previous_path: None,
        kind: Kind::Write,
        before: Some(&file.old_bytes),
        after: Some(&file.new_bytes),
    }));
    drafts
}

/// What the journal keeps of a plan: enough to finish it forward from any point.
pub(super) fn journal_entry(
    vault: &std::path::Path,
    old: &VaultPath,
    new: &VaultPath,
    moved: &PlannedFile,
    planned: &[PlannedFile],
) -> Result<Entry, OpsError> {
    let files = planned
        .iter()
        .map(|file| {
            // Linking files are notes and canvases, read as UTF-8 to find their links.
            let text = String::from_utf8(file.new_bytes.clone()).map_err(|_| {
                OpsError::Internal(
                    format!("the planned text of '{}' is not UTF-8", file.path).into(),
                )
            })?;
            Ok(FileEntry {
                path: file.path.to_string(),
                before: file.revision.to_string(),
                text,
            })
        })
        .collect::<Result<Vec<_>, OpsError>>()?;
    Ok(Entry {
        vault: vault.to_path_buf(),
        pid: std::process::id(),
        old: old.to_string(),
        new: new.to_string(),
        moved_before: moved.revision.to_string(),
        files,
    })
}
