//! A move from request to plan: the request and answer types, the check of both paths, the world
//! of linking files a move plans in, the locks it takes, and the entry point that runs it.

use std::collections::BTreeSet;

use crate::index::LinkGraph;
use crate::markdown::links::{Resolver, lookup_name};
use crate::ops::access::Granted;
use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::shared::{Context, Ops};
use crate::vault::{FileLock, Resolved, Revision, VaultError, VaultPath};

/// A rewritten file: its path, the revision written, and the bytes it held before.
pub(super) type Written = (VaultPath, Revision, Vec<u8>);

/// Threads that read, plan and write a move's linking files at once.
pub(super) const WRITE_THREADS: usize = 16;

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
pub(super) struct PlannedFile {
    pub(super) path: VaultPath,
    pub(super) revision: Revision,
    pub(super) old_bytes: Vec<u8>,
    pub(super) new_bytes: Vec<u8>,
    pub(super) changes: Vec<LinkChange>,
}

/// The link world of one move as the caller sees it: the resolvers before and after the move, and
/// the files whose links may name the moved file.
pub(super) struct MoveWorld {
    pub(super) graph: LinkGraph,
    /// For a caller some rule restricts: resolution among the files it may read.
    pub(super) before_visible: Option<Resolver>,
    pub(super) after: Resolver,
    pub(super) restricted: bool,
    /// Readable files holding a link whose name matches the old or the new path.
    pub(super) sources: BTreeSet<String>,
}

/// A move planned under its locks, before anything is written.
pub(super) struct MovePlan {
    pub(super) old: VaultPath,
    pub(super) new: VaultPath,
    pub(super) resolved_old: Resolved,
    pub(super) resolved_new: Resolved,
    /// The moved file, planned at its new path.
    pub(super) moved: PlannedFile,
    /// Every other file whose links change.
    pub(super) planned: Vec<PlannedFile>,
}

impl MovePlan {
    /// What the move would do, for `dry_run`: every file keeps its current revision.
    pub(super) fn dry_run_report(&self) -> MovedNote {
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
    pub(super) fn before(&self) -> &Resolver {
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

    /// The request's two paths, checked: distinct, both writable by the caller, the same
    /// extension, and the source an existing regular file (not a folder, not a symbolic link).
    pub(super) fn check_move(
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
    pub(super) fn move_world(
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
    pub(super) fn lock_move(
        &self,
        granted: &impl Granted,
        sources: &BTreeSet<String>,
        old: &VaultPath,
        new: &VaultPath,
    ) -> Vec<FileLock<'_>> {
        let sources: Vec<VaultPath> = sources
            .iter()
            .filter_map(|source| VaultPath::parse(source).ok())
            .collect();
        self.lock_in_order(granted, sources.iter().chain([old, new]))
    }
}

/// Runs `work` on each of `items` on up to `WRITE_THREADS` threads and returns the outcomes in
/// the items' order. A thread that panics answers `internal` for each of its items, so outcomes
/// always pair with their items.
pub(super) fn on_threads<T: Sync, R: Send>(
    items: &[T],
    doing: &str,
    work: impl Fn(&T) -> Result<R, OpsError> + Sync,
) -> Vec<Result<R, OpsError>> {
    let workers = WRITE_THREADS.min(items.len()).max(1);
    let chunk = items.len().div_ceil(workers).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|chunk| {
                (
                    chunk.len(),
                    scope.spawn(move || chunk.iter().map(work).collect()),
                )
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(len, handle)| {
                handle.join().unwrap_or_else(|_| {
                    (0..len)
                        .map(|_| {
                            Err(OpsError::Internal(
                                format!("a thread {doing} panicked").into(),
                            ))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect()
    })
}

pub(super) fn report(file: &PlannedFile, revision: &Revision) -> RewrittenFile {
    RewrittenFile {
        path: file.path.to_string(),
        revision: revision.to_string(),
        changes: file.changes.clone(),
    }
}
