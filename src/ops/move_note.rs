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

use std::collections::BTreeSet;

use super::access::{Granted, Maintenance, Visibility};
use super::audit::Event;
use super::error::OpsError;
use super::inputs::parse_path;
use super::move_journal::{Entry, FileEntry};
use super::shared::{Context, Ops};
use crate::index::LinkGraph;
use crate::markdown::links::{
    self, Link, LinkForm, PathStyle, Resolver, lookup_name, path_style, path_text, spells_md,
    with_new_path,
};
use crate::vault::{
    FileLock, LinkSettings, NewLinkFormat, Resolved, Revision, VaultError, VaultPath, WriteMode,
};

/// A rewritten file: its path, the revision written, and the bytes it held before.
type Written = (VaultPath, Revision, Vec<u8>);

/// Threads that read, plan and write a move's linking files at once.
const WRITE_THREADS: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveNote {
    pub old_path: String,
    pub new_path: String,
    /// Plan only: report what would change and change nothing.
    pub dry_run: bool,
    /// Remove the folders the move leaves empty.
    pub prune_empty_folders: bool,
}

/// One rewritten link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkChange {
    /// 1-based line of the link (in the file before the rewrite).
    pub line: u64,
    pub before: String,
    pub after: String,
}

/// A file whose links the move rewrote (or would rewrite).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewrittenFile {
    pub path: String,
    /// The file's revision after the move (with `dry_run`, its current revision).
    pub revision: String,
    pub changes: Vec<LinkChange>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedNote {
    pub from: String,
    pub to: String,
    /// The moved file's revision at its new path.
    pub revision: String,
    pub rewritten: Vec<RewrittenFile>,
    pub dry_run: bool,
    pub pruned_folders: Vec<String>,
}

/// A file the move will write: its path after the move, what it held, and what it will hold.
struct PlannedFile {
    path: VaultPath,
    revision: Revision,
    old_bytes: Vec<u8>,
    new_bytes: Vec<u8>,
    changes: Vec<LinkChange>,
}

/// The link world of one move as the caller sees it: the resolvers before and after the move, and
/// the files whose links may name the moved file.
struct MoveWorld {
    graph: LinkGraph,
    /// For a caller some rule restricts: resolution among the files it may read.
    before_visible: Option<Resolver>,
    after: Resolver,
    restricted: bool,
    /// Readable files holding a link whose name matches the old or the new path.
    sources: BTreeSet<String>,
}

/// A move planned under its locks, before anything is written.
struct MovePlan {
    old: VaultPath,
    new: VaultPath,
    resolved_old: Resolved,
    resolved_new: Resolved,
    /// The moved file, planned at its new path.
    moved: PlannedFile,
    /// Every other file whose links change.
    planned: Vec<PlannedFile>,
}

impl MovePlan {
    /// What the move would do, for `dry_run`: every file keeps its current revision.
    fn dry_run_report(&self) -> MovedNote {
        let mut rewritten: Vec<RewrittenFile> = Vec::new();
        if !self.moved.changes.is_empty() {
            rewritten.push(report(&self.moved, &self.moved.revision));
        }
        rewritten.extend(self.planned.iter().map(|file| report(file, &file.revision)));
        MovedNote {
            from: self.old.to_string(),
            to: self.new.to_string(),
            revision: self.moved.revision.to_string(),
            rewritten,
            dry_run: true,
            pruned_folders: Vec::new(),
        }
    }
}

impl MoveWorld {
    fn before(&self) -> &Resolver {
        self.before_visible.as_ref().unwrap_or(&self.graph.resolver)
    }
}

impl Ops {
    pub fn move_note(&self, ctx: &Context, request: MoveNote) -> Result<MovedNote, OpsError> {
        let started = std::time::Instant::now();
        let (old, new, resolved_old) = self.check_move(ctx, &request)?;
        let world = self.move_world(ctx, &old, &new)?;
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            candidates = world.sources.len(),
            "move: candidate linking files found"
        );
        // One policy snapshot decides what the move may rewrite and which folders it may prune.
        let visibility = self.visibility(ctx);
        let _locks = self.lock_move(&visibility, &world.sources, &old, &new);
        let plan = self.plan_move(ctx, &visibility, &world, old, new, resolved_old)?;
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            files = plan.planned.len(),
            "move: planned"
        );
        if request.dry_run {
            return Ok(plan.dry_run_report());
        }
        self.execute_move(
            ctx,
            &visibility,
            &plan,
            request.prune_empty_folders,
            started,
        )
    }

    /// Plans the whole move under its locks, writing nothing: the destination must be free, the
    /// moved file and every linking file are read and their rewrites planned, and a linking file
    /// the caller may not change refuses the move.
    fn plan_move(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        world: &MoveWorld,
        old: VaultPath,
        new: VaultPath,
        resolved_old: Resolved,
    ) -> Result<MovePlan, OpsError> {
        let resolved_new = self
            .walls
            .vault(visibility)
            .resolve(&new)
            .map_err(|e| OpsError::from_vault(e, None))?;
        if resolved_new.exists {
            return Err(OpsError::AlreadyExists {
                what: format!("'{new}' already exists"),
                hint: "A move never replaces a file: choose another new_path, or delete or move the existing file first.",
            });
        }
        let planner = Planner {
            granted: visibility,
            old: old.as_str(),
            new: new.as_str(),
            before: world.before(),
            after: &world.after,
            settings: self.walls.vault(visibility).link_settings(),
            restricted: world.restricted,
        };
        // The moved file first, then every other linking file.
        let current = self
            .walls
            .vault(visibility)
            .read_resolved(&resolved_old)
            .map_err(|e| OpsError::from_vault(e, None))?;
        let moved = planner.plan_file(&old, new.clone(), current.bytes, current.revision)?;
        let planned = self.plan_sources(&planner, &world.sources, &old);
        let planned = self.refuse_unwritable(ctx, visibility, &old, planned)?;
        Ok(MovePlan {
            old,
            new,
            resolved_old,
            resolved_new,
            moved,
            planned,
        })
    }

    /// Carries out a plan: creates the destination exclusively, rewrites the linking files,
    /// removes the source, and undoes what it wrote when a step fails.
    fn execute_move(
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
            resolved_new,
            moved,
            planned,
        } = plan;
        // Durable before the first write; removed when this function returns, done or undone.
        let _journal = self.move_journal.begin(&journal_entry(
            self.walls.vault(visibility).root(),
            old,
            new,
            moved,
            planned,
        )?);
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
            self.undo(visibility, &done, new, &created);
            return Err(error);
        }
        for (file, (_, revision, _)) in planned.iter().zip(&done) {
            rewritten.push(report(file, revision));
        }
        #[cfg(feature = "test-faults")]
        abort_if_asked("links");
        if let Err(error) = self.remove_source(visibility, resolved_old, moved) {
            self.undo(visibility, &done, new, &created);
            return Err(error);
        }
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

    /// The request's two paths, checked: distinct, both writable by the caller, the same
    /// extension, and the source an existing regular file (not a folder, not a symbolic link).
    fn check_move(
        &self,
        ctx: &Context,
        request: &MoveNote,
    ) -> Result<(VaultPath, VaultPath, Resolved), OpsError> {
        let old = parse_path(&request.old_path)?;
        let new = parse_path(&request.new_path)?;
        if old == new {
            return Err(OpsError::invalid_argument(format!(
                "old_path and new_path are both {:?}; give the new path the file should have",
                old.as_str()
            )));
        }
        let writable = self.require_write(ctx, &old)?;
        let _target = self.require_write(ctx, &new)?;
        self.refuse_protected(&old)?;
        self.refuse_protected(&new)?;
        let old_extension = old.extension().map(|e| e.to_lowercase());
        if old_extension != new.extension().map(|e| e.to_lowercase()) {
            return Err(OpsError::invalid_argument(format!(
                "'{new}' has another extension than '{old}'; a move keeps the file's extension (a note stays .md), so choose a new path ending in .{}",
                old_extension.as_deref().unwrap_or("")
            )));
        }
        let resolved_old = self
            .walls
            .vault(&writable)
            .resolve(&old)
            .map_err(|e| OpsError::from_vault(e, None))?;
        if !resolved_old.exists {
            return Err(OpsError::from_vault(
                VaultError::NotFound {
                    path: old.to_string(),
                },
                None,
            ));
        }
        if resolved_old.is_symlink || resolved_old.fs_path.is_dir() {
            return Err(OpsError::invalid_argument(format!(
                "'{old}' is a folder or a symbolic link; vault_move_note moves one file, so move the files inside it one by one"
            )));
        }
        Ok((old, new, resolved_old))
    }

    /// The resolvers before and after the move and the candidate linking files, as the caller
    /// may see them.
    fn move_world(
        &self,
        ctx: &Context,
        old: &VaultPath,
        new: &VaultPath,
    ) -> Result<MoveWorld, OpsError> {
        // The index must know the file as it is now, or links to a file created a moment ago
        // would look unresolved.
        let visibility = self.visibility(ctx);
        self.walls
            .index(&visibility)
            .refresh(vec![old.to_string(), new.to_string()])?;
        let graph = self.walls.index(&visibility).link_graph()?;
        // A caller some rule restricts plans in its own world: links resolve among the files it
        // may read, so neither which links change nor how they are rewritten depends on a file
        // it cannot see (a link to a hidden file is broken for it, as in the graph tools).
        let restricted = self.policy().has_rules_for(&ctx.principal);
        let visible_paths: Vec<String> = if restricted {
            graph
                .paths
                .iter()
                .filter(|path| path.as_str() == old.as_str() || visibility.shows(path))
                .cloned()
                .collect()
        } else {
            graph.paths.clone()
        };
        let before_visible = restricted.then(|| Resolver::new(visible_paths.iter().cloned()));
        let after_paths = visible_paths
            .iter()
            .filter(|path| path.as_str() != old.as_str())
            .cloned()
            .chain(std::iter::once(new.to_string()));
        let after = Resolver::new(after_paths);
        let mut sources: BTreeSet<String> = self
            .walls
            .index(&visibility)
            .links_named(&[lookup_name(old.as_str()), lookup_name(new.as_str())])?
            .into_iter()
            .map(|link| link.source)
            .filter(|source| source != old.as_str())
            .collect();
        sources.remove(new.as_str());
        // Links held in files the caller may not read are left as they are, for the owner: they
        // are never read, locked, planned or reported, so no plan, refusal or error depends on
        // what a hidden file holds, and none names one.
        sources.retain(|source| visibility.shows(source));
        Ok(MoveWorld {
            graph,
            before_visible,
            after,
            restricted,
            sources,
        })
    }

    /// Locks every file the move may touch, in one global (path) order, so two moves cannot
    /// deadlock.
    fn lock_move(
        &self,
        granted: &impl Granted,
        sources: &BTreeSet<String>,
        old: &VaultPath,
        new: &VaultPath,
    ) -> Vec<FileLock<'_>> {
        let mut keys: Vec<VaultPath> = sources
            .iter()
            .filter_map(|source| VaultPath::parse(source).ok())
            .collect();
        keys.push(old.clone());
        keys.push(new.clone());
        keys.sort();
        keys.dedup();
        keys.iter()
            .map(|key| self.walls.vault(granted).lock(key))
            .collect()
    }

    /// Reads and plans every linking file; reading and parsing is independent per file, so it is
    /// spread over threads.
    fn plan_sources(
        &self,
        planner: &Planner<'_>,
        sources: &BTreeSet<String>,
        old: &VaultPath,
    ) -> Vec<Result<Option<PlannedFile>, OpsError>> {
        let sources: Vec<&String> = sources.iter().collect();
        let workers = WRITE_THREADS.min(sources.len()).max(1);
        let chunk = sources.len().div_ceil(workers).max(1);
        std::thread::scope(|scope| {
            let handles: Vec<_> = sources
                .chunks(chunk)
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk
                            .iter()
                            .map(|source| self.plan_source(planner, source, old))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| {
                    handle.join().unwrap_or_else(|_| {
                        vec![Err(OpsError::Internal(
                            "a thread planning a move panicked".into(),
                        ))]
                    })
                })
                .collect()
        })
    }

    /// The files to rewrite, or the first planning error, or a refusal naming the files the
    /// caller can read but not change: it may learn which they are (it can read their links
    /// itself), and a move must not break what it can see.
    fn refuse_unwritable(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        old: &VaultPath,
        plans: Vec<Result<Option<PlannedFile>, OpsError>>,
    ) -> Result<Vec<PlannedFile>, OpsError> {
        let mut planned: Vec<PlannedFile> = Vec::new();
        let mut unwritable: Vec<String> = Vec::new();
        for plan in plans {
            let Some(file) = plan? else { continue };
            if !visibility.may_write(file.path.as_str()) {
                unwritable.push(file.path.to_string());
                continue;
            }
            planned.push(file);
        }
        if unwritable.is_empty() {
            return Ok(planned);
        }
        self.audit.record(ctx, Event::denied(old.as_str()));
        unwritable.sort();
        const NAMED: usize = 5;
        let more = unwritable.len().saturating_sub(NAMED);
        let mut named = unwritable
            .iter()
            .take(NAMED)
            .map(|path| format!("'{path}'"))
            .collect::<Vec<_>>()
            .join(", ");
        if more > 0 {
            named.push_str(&format!(" and {more} more"));
        }
        Err(OpsError::PathForbidden {
            input: old.to_string(),
            reason: format!(
                "files outside your write rules link to it ({named}), and a move must update their links; ask the vault's owner to move it"
            ),
        })
    }

    /// Creates the moved file at its new path, exclusively, with the source's permissions (a
    /// private note stays private); returns its revision.
    fn create_destination(
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
    fn remove_source(
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
    fn audit_move(
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

    /// Reads one linking file and plans its rewrites; `None` when it needs none (or is gone).
    /// Everything a write would refuse is refused here, before anything is written.
    fn plan_source(
        &self,
        planner: &Planner<'_>,
        source: &str,
        old: &VaultPath,
    ) -> Result<Option<PlannedFile>, OpsError> {
        let Ok(path) = VaultPath::parse(source) else {
            return Ok(None);
        };
        let resolved = self
            .walls
            .vault(planner.granted)
            .resolve(&path)
            .map_err(|e| OpsError::from_vault(e, None))?;
        let contents = match self.walls.vault(planner.granted).read_resolved(&resolved) {
            Ok(contents) => contents,
            // Gone since it was indexed: nothing there to rewrite.
            Err(VaultError::NotFound { .. }) => return Ok(None),
            Err(error) => return Err(OpsError::from_vault(error, None)),
        };
        let file = planner.plan_file(&path, path.clone(), contents.bytes, contents.revision)?;
        if file.changes.is_empty() {
            return Ok(None);
        }
        if resolved.is_symlink {
            return Err(OpsError::PathForbidden {
                input: old.to_string(),
                reason: format!(
                    "'{source}' links to it through a symbolic link, and Quire never writes through links; change that link by hand, then move"
                ),
            });
        }
        if file.new_bytes.len() as u64 > self.walls.vault(planner.granted).max_file_bytes() {
            return Err(OpsError::from_vault(
                VaultError::TooLarge {
                    path: source.to_owned(),
                    bytes: file.new_bytes.len() as u64,
                    limit: self.walls.vault(planner.granted).max_file_bytes(),
                },
                None,
            ));
        }
        Ok(Some(file))
    }

    /// Writes every planned file (each checked against the revision it was planned from) on a
    /// few threads: each write waits for its own fsyncs, and the file system commits concurrent
    /// fsyncs together, so a move rewriting a thousand files does not pay for a thousand commits
    /// one after the other. Returns what was written, in plan order, and the first failure.
    fn write_planned(
        &self,
        granted: &(impl Granted + Sync),
        planned: &[PlannedFile],
    ) -> (Vec<Written>, Option<OpsError>) {
        let workers = WRITE_THREADS.min(planned.len()).max(1);
        let chunk = planned.len().div_ceil(workers).max(1);
        let outcomes: Vec<Result<Revision, OpsError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = planned
                .chunks(chunk)
                .map(|files| {
                    scope.spawn(move || {
                        files
                            .iter()
                            .map(|file| {
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
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| {
                    handle.join().unwrap_or_else(|_| {
                        vec![Err(OpsError::Internal(
                            "a thread writing a move's files panicked".into(),
                        ))]
                    })
                })
                .collect()
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
    fn undo(
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
fn abort_if_asked(step: &str) {
    if std::env::var("QUIRE_TEST_FAULT").ok().as_deref() == Some(&format!("abort-in-move:{step}")) {
        tracing::warn!(step, "test fault: aborting in the middle of a move");
        std::process::abort();
    }
}

/// What the journal keeps of a plan: enough to finish it forward from any point.
fn journal_entry(
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

impl Ops {
    /// Finishes the moves a killed Quire left journaled (see `move_journal`); returns how many.
    /// Runs at start, before anything is served.
    pub fn recover_moves(&self) -> usize {
        let mut finished = 0;
        for (journal, entry) in self.move_journal.left_behind() {
            match entry {
                Err(error) => {
                    tracing::error!(journal = %journal.display(), %error, "a move journal cannot be read; it is left in place: check the two paths it names and remove it");
                }
                Ok(entry) if entry.vault != self.walls.root() => {
                    tracing::error!(journal = %journal.display(), vault = %entry.vault.display(), "a move journal belongs to another vault; it is left in place");
                }
                Ok(entry) => {
                    self.finish_cut_move(&entry);
                    if let Err(error) = std::fs::remove_file(&journal) {
                        tracing::warn!(%error, journal = %journal.display(), "a finished move's journal could not be removed");
                    }
                    finished += 1;
                }
            }
        }
        finished
    }

    /// Carries a journaled move forward from wherever it was cut: the linking files still
    /// holding what the move read get their planned text, and the source goes if it still holds
    /// what was moved. Without the destination (created first) nothing was written.
    fn finish_cut_move(&self, entry: &Entry) {
        let upkeep = Maintenance::new();
        let (Ok(old), Ok(new)) = (VaultPath::parse(&entry.old), VaultPath::parse(&entry.new))
        else {
            tracing::error!(old = %entry.old, new = %entry.new, "a move journal names a path outside the vault; ignored");
            return;
        };
        let sources: BTreeSet<String> = entry.files.iter().map(|f| f.path.clone()).collect();
        let _locks = self.lock_move(&upkeep, &sources, &old, &new);
        let exists = |path: &VaultPath| {
            self.walls
                .vault(&upkeep)
                .resolve(path)
                .ok()
                .filter(|resolved| resolved.exists)
        };
        if exists(&new).is_none() {
            tracing::info!(%old, %new, "a move cut short had written nothing; nothing to finish");
            return;
        }
        let mut refreshed = vec![old.to_string(), new.to_string()];
        for file in &entry.files {
            let Ok(path) = VaultPath::parse(&file.path) else {
                continue;
            };
            let current = exists(&path).and_then(|resolved| {
                let contents = self.walls.vault(&upkeep).read_resolved(&resolved).ok()?;
                Some((resolved, contents.revision))
            });
            match current {
                Some((resolved, revision)) if revision.as_str() == file.before => {
                    match self.walls.vault(&upkeep).write(
                        &resolved,
                        file.text.as_bytes(),
                        WriteMode::Replace {
                            expected: &revision,
                        },
                    ) {
                        Ok(_) => refreshed.push(path.to_string()),
                        Err(error) => {
                            tracing::warn!(%error, %path, "a cut move's linking file could not be rewritten; its links still name the old path");
                        }
                    }
                }
                Some((_, revision)) if revision == Revision::of(file.text.as_bytes()) => {}
                _ => {
                    tracing::warn!(%path, "a linking file changed after the move was cut; its links are left as they are");
                }
            }
        }
        if let Some(resolved) = exists(&old) {
            match self.walls.vault(&upkeep).read_resolved(&resolved) {
                Ok(contents) if contents.revision.as_str() == entry.moved_before => {
                    if let Err(error) = std::fs::remove_file(&resolved.fs_path) {
                        tracing::warn!(%error, %old, "a cut move's source could not be removed; both copies are kept");
                    }
                }
                _ => {
                    tracing::warn!(%old, %new, "the source changed after the move was cut; both copies are kept");
                }
            }
        }
        if let Err(error) = self.walls.index(&upkeep).refresh(refreshed) {
            tracing::warn!(%error, "the index could not take in a finished move");
        }
        tracing::info!(%old, %new, "finished a move cut short");
    }
}

fn report(file: &PlannedFile, revision: &Revision) -> RewrittenFile {
    RewrittenFile {
        path: file.path.to_string(),
        revision: revision.to_string(),
        changes: file.changes.clone(),
    }
}

/// Decides the new text of every link a move affects.
struct Planner<'a> {
    /// The caller's visibility, which lets the planner read the linking files.
    granted: &'a Visibility,
    old: &'a str,
    new: &'a str,
    /// Resolution over the vault before and after the move.
    before: &'a Resolver,
    after: &'a Resolver,
    settings: LinkSettings,
    /// The resolvers see only what the caller may read, so a bare name unique among those files
    /// may still be shared with a hidden one: rewritten links then always carry a path.
    restricted: bool,
}

impl Planner<'_> {
    /// Plans the rewrites of one file, read from `path` and living at `path_after` after the move.
    fn plan_file(
        &self,
        path: &VaultPath,
        path_after: VaultPath,
        bytes: Vec<u8>,
        revision: Revision,
    ) -> Result<PlannedFile, OpsError> {
        let source = path.as_str();
        let is_canvas = path.extension().as_deref() == Some("canvas");
        let is_note = path.extension().as_deref() == Some("md");
        let mut edits: Vec<(usize, usize, String, LinkChange)> = Vec::new();
        if is_note || is_canvas {
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Err(OpsError::invalid_argument(format!(
                    "'{source}' is not valid UTF-8, so its links cannot be rewritten safely; fix its encoding first"
                )));
            };
            let found = if is_canvas {
                links::canvas_links(text)
            } else {
                links::note_links(text)
            };
            for link in &found {
                if let Some((start, end, replacement, change)) =
                    self.rewrite(text, source, path_after.as_str(), link, is_canvas)?
                {
                    edits.push((start, end, replacement, change));
                }
            }
        }
        let new_bytes = if edits.is_empty() {
            bytes.clone()
        } else {
            let mut out = bytes.clone();
            edits.sort_by_key(|(start, ..)| *start);
            for (start, end, replacement, _) in edits.iter().rev() {
                out.splice(*start..*end, replacement.bytes());
            }
            out
        };
        Ok(PlannedFile {
            path: path_after,
            revision,
            old_bytes: bytes,
            new_bytes,
            changes: edits.into_iter().map(|(.., change)| change).collect(),
        })
    }

    /// The replacement for one link, when the move changes what it resolves to.
    fn rewrite(
        &self,
        text: &str,
        source: &str,
        source_after: &str,
        link: &Link,
        in_canvas: bool,
    ) -> Result<Option<(usize, usize, String, LinkChange)>, OpsError> {
        let Some(before) = self.before.resolve(link.path(), source) else {
            return Ok(None);
        };
        let want = if before == self.old { self.new } else { before };
        if self.after.resolve(link.path(), source_after) == Some(want)
            && !self.keeps_relative_canonical(link, source, before)
        {
            return Ok(None);
        }
        let plain = self.new_link(link, source, source_after, before, want)?;
        let written = text.get(link.start..link.end).unwrap_or_default();
        let (expected_span, replacement) = if in_canvas {
            (json_string_body(&link.original), json_string_body(&plain))
        } else if link.form == LinkForm::Property {
            let quote = text
                .get(..link.start)
                .and_then(|before| before.chars().next_back());
            (link.original.clone(), yaml_escape(&plain, quote))
        } else {
            (link.original.clone(), plain.clone())
        };
        if written != expected_span {
            return Err(OpsError::invalid_argument(format!(
                "the link {} in '{source}' (line {}) is written with escaped characters Quire cannot rewrite safely; edit it by hand and retry the move",
                link.original, link.line
            )));
        }
        Ok(Some((
            link.start,
            link.end,
            replacement,
            LinkChange {
                line: link.line as u64,
                before: link.original.clone(),
                after: plain,
            },
        )))
    }

    /// Whether `link`, held by the moved file and written relative to its folder, must be
    /// rewritten although it still resolves: a relative path stays the canonical one from the
    /// file's new folder, so that moving the file back restores it byte for byte.
    fn keeps_relative_canonical(&self, link: &Link, source: &str, before: &str) -> bool {
        let folder = |path: &str| path.rsplit_once('/').map(|(folder, _)| folder.to_owned());
        if source != self.old
            || folder(self.old) == folder(self.new)
            || link.form == LinkForm::CanvasFile
            || path_style(link.path(), source, before) != PathStyle::Relative
        {
            return false;
        }
        let want = if before == self.old { self.new } else { before };
        path_text(want, self.new, PathStyle::Relative, spells_md(link.path())) != link.path()
    }

    /// New text for `link` so that it resolves to `want` from `source_after`, in the link's own
    /// form and path style; a bare name that would be ambiguous becomes a path in the vault's
    /// `newLinkFormat`.
    fn new_link(
        &self,
        link: &Link,
        source: &str,
        source_after: &str,
        before: &str,
        want: &str,
    ) -> Result<String, OpsError> {
        if link.form == LinkForm::CanvasFile {
            return Ok(want.to_owned());
        }
        let written = link.path();
        let keep_md = spells_md(written);
        let style = path_style(written, source, before);
        let fallback = match self.settings.new_link_format {
            NewLinkFormat::Shortest => PathStyle::Absolute,
            NewLinkFormat::Relative => PathStyle::Relative,
            NewLinkFormat::Absolute => PathStyle::Absolute,
        };
        let mut tried: Vec<String> = Vec::new();
        for style in [style, fallback, PathStyle::Absolute] {
            let candidate = path_text(want, source_after, style, keep_md);
            tried.push(candidate);
        }
        if link.form != LinkForm::Markdown {
            // A leading `/` makes a wikilink path absolute even next to a same-named file.
            tried.push(format!(
                "/{}",
                path_text(want, source_after, PathStyle::Absolute, keep_md)
            ));
        }
        // A bare name stays bare only while it is unique: which of several same-named files a
        // bare name reaches is not something to leave to a tie-break.
        let unique = self.after.named(&lookup_name(want)).len() == 1;
        for (number, candidate) in tried.into_iter().enumerate() {
            if number == 0 && style == PathStyle::Bare && (!unique || self.restricted) {
                continue;
            }
            if link.form != LinkForm::Markdown
                && (candidate.contains('#') || candidate.contains('|') || candidate.contains("]]"))
            {
                continue;
            }
            if self.after.resolve(&candidate, source_after) != Some(want) {
                continue;
            }
            if let Some(text) = with_new_path(link.form, &link.original, &candidate) {
                return Ok(text);
            }
        }
        Err(OpsError::invalid_argument(format!(
            "no link from '{source_after}' can name '{want}' unambiguously (its name holds characters links cannot carry, such as '#' or '|'); rename it differently"
        )))
    }
}

/// The body of a JSON string literal for `text`, as Obsidian writes canvas files.
fn json_string_body(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or("")
        .to_owned()
}

/// A wikilink written inside a YAML scalar that opens with `quote`.
fn yaml_escape(text: &str, quote: Option<char>) -> String {
    match quote {
        Some('"') => text.replace('\\', "\\\\").replace('"', "\\\""),
        Some('\'') => text.replace('\'', "''"),
        _ => text.to_owned(),
    }
}
