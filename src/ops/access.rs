//! Access control inside `ops`: every operation asks here before it touches the disk or the
//! index, and every listing filters its rows here, so a denied file's existence is never revealed.
//!
//! The compiler holds the rule: the vault and the index sit behind `Walls`, whose handles are
//! given only for an access value (`Readable`, `Writable`, `Visibility`, `SearchVisibility`, or
//! `Maintenance` for work no caller asked for), and those values are made only here, by the
//! checks. An operation that forgets its check has no access value, so it cannot reach the disk.
//!
//! Reads of a path the caller may not read answer exactly like a missing note (`not_found`, same
//! text). Writes the caller may not make answer `path_forbidden` with one message whether or not
//! the file exists, so a refused write reveals the rule, never the file. A symbolic link is judged
//! twice: by the path the client named and by the file it leads to, so a link in a readable folder
//! cannot expose a note in a denied one. That holds for the owner too, whom `always_deny` binds;
//! only where no rule can restrict the caller (the owner without `always_deny`) is the link not
//! followed, since every target is then allowed anyway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::audit::Event;
use super::error::OpsError;
use super::shared::{Context, Ops};
use crate::acl::{Action, Policy, Principal};
use crate::index::Index;
use crate::vault::{ExcludedFiles, RealFolder, Vault, VaultError, VaultPath};

/// The vault and its index, reachable only with an access value.
#[derive(Debug)]
pub(super) struct Walls {
    vault: Arc<Vault>,
    index: Index,
}

impl Walls {
    pub(super) fn new(vault: Arc<Vault>, index: Index) -> Walls {
        Walls { vault, index }
    }

    /// The vault, for a caller whose access was checked (or for maintenance).
    pub(super) fn vault(&self, _granted: &impl Granted) -> &Vault {
        &self.vault
    }

    /// The index, for a caller whose access was checked (or for maintenance).
    pub(super) fn index(&self, _granted: &impl Granted) -> &Index {
        &self.index
    }

    /// The memory folder the vault was opened with: configuration, which reveals no note.
    pub(super) fn memory_folder(&self) -> Option<&VaultPath> {
        self.vault.memory_folder()
    }

    /// The vault's root folder on disk: configuration, which reveals no note.
    pub(super) fn root(&self) -> &std::path::Path {
        self.vault.root()
    }

    /// For the person at the console (`app`, `cli`), whom no rule binds.
    pub(super) fn console(&self) -> (&Vault, &Index) {
        (&self.vault, &self.index)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An access value: proof that a check ran. Only this module makes them.
pub(super) trait Granted: sealed::Sealed {}

/// The caller may read this path (or learn it exists).
#[derive(Debug)]
pub(super) struct Readable {
    path: VaultPath,
}

/// The caller may change this path, and the place it really leads.
#[derive(Debug)]
pub(super) struct Writable {
    path: VaultPath,
}

impl Readable {
    pub(super) fn path(&self) -> &VaultPath {
        &self.path
    }
}

impl Writable {
    pub(super) fn path(&self) -> &VaultPath {
        &self.path
    }
}

/// Work no caller asked for and whose answers reach no caller: finishing a journaled move at
/// start, embedding passes, reading the vault's own settings. Named at each use, so a reviewer
/// sees every place the ACL does not apply.
#[derive(Debug, Clone, Copy)]
pub(super) struct Maintenance(());

impl Maintenance {
    pub(super) fn new() -> Maintenance {
        Maintenance(())
    }
}

impl sealed::Sealed for Readable {}
impl sealed::Sealed for Writable {}
impl sealed::Sealed for Visibility {}
impl sealed::Sealed for SearchVisibility {}
impl sealed::Sealed for Maintenance {}
impl Granted for Readable {}
impl Granted for Writable {}
impl Granted for Visibility {}
impl Granted for SearchVisibility {}
impl Granted for Maintenance {}

/// The access values that stand for a checked write: a note's `Writable`, or the `Visibility` a
/// call touching several notes checks each of them against (a move, an undo), or `Maintenance`.
pub(super) trait WriteChecked: Granted {}
impl WriteChecked for Writable {}
impl WriteChecked for Visibility {}
impl WriteChecked for Maintenance {}

/// A snapshot of the policy for one caller, used to filter many rows cheaply.
pub(crate) struct Visibility {
    policy: Arc<Policy>,
    principal: Principal,
    vault: Arc<Vault>,
    /// The real place of each folder judged so far: the rows of a listing share a few folders.
    folders: Mutex<HashMap<String, Option<RealFolder>>>,
}

impl Visibility {
    /// Whether the caller may learn that the note at vault-relative `path` exists.
    pub(crate) fn shows(&self, path: &str) -> bool {
        self.policy.allows(&self.principal, Action::Read, path)
            && self.real_path_allowed(path, Action::Read)
    }

    /// Whether the caller may see every note directly inside `folder` (`""` is the root) that is
    /// not a symbolic link and whose name is usual (`vault::unusual_name`), or none of them:
    /// `None` when the rules or a missing folder leave each to `shows`. The folder is judged where
    /// the client names it and where it really is, as `shows` judges each note.
    pub(crate) fn folder_shows(&self, folder: &str) -> Option<bool> {
        if !self.policy.has_rules_for(&self.principal) {
            return Some(true);
        }
        let named = self.policy.folder_reads(&self.principal, folder)?;
        let parent = match folder {
            "" => None,
            folder => Some(VaultPath::parse(folder).ok()?),
        };
        let real = self.real_folder(parent.as_ref())?;
        let there = self.policy.folder_reads(&self.principal, &real)?;
        Some(named && there)
    }

    /// Whether no rule can hide anything from the caller (the owner without `always_deny`): then a
    /// listing of what a vault walk found (never a hidden path) needs no check per row.
    pub(crate) fn unrestricted(&self) -> bool {
        !self.policy.has_rules_for(&self.principal)
    }

    /// Whether the caller may read the whole vault (see `Policy::reads_everything`).
    pub(crate) fn reads_everything(&self) -> bool {
        self.policy.reads_everything(&self.principal)
    }

    /// Whether the caller may change what `path` names and where it really leads.
    pub(crate) fn may_write(&self, path: &str) -> bool {
        self.policy.allows(&self.principal, Action::Write, path)
            && self.real_path_allowed(path, Action::Write)
    }

    /// Whether the caller may learn that the folder at `path` exists: a symlinked folder is judged
    /// by where it leads as well.
    pub(crate) fn shows_folder(&self, path: &str) -> bool {
        self.real_path_allowed(path, Action::List)
    }

    /// Judges where `path` really is: the place resolution opens, every link followed and every
    /// name matched as resolution matches it (NFC against NFD names on disk). A path that does not
    /// exist (yet) is judged by the real place of the folder it would be created in. Skipped (true)
    /// when no rule can restrict the caller, so the unrestricted owner pays nothing per listed row.
    fn real_path_allowed(&self, path: &str, action: Action) -> bool {
        if !self.policy.has_rules_for(&self.principal) {
            return true;
        }
        if path.is_empty() {
            return self.policy.allows(&self.principal, action, "");
        }
        let Ok(vault_path) = VaultPath::parse(path) else {
            return false;
        };
        self.real_location(&vault_path)
            .is_some_and(|real| self.policy.allows(&self.principal, action, &real))
    }

    /// `Vault::real_location`, with the real place of each parent folder found once.
    fn real_location(&self, path: &VaultPath) -> Option<String> {
        let parent = path.parent();
        let mut folders = self.folders.lock().unwrap_or_else(|p| p.into_inner());
        match self.real_folder_in(&mut folders, parent.as_ref()) {
            Some(folder) => self.vault.real_child(folder, path.file_name()),
            // A folder that does not exist (yet): the walk judges where it would be made.
            None => self.vault.real_location(path),
        }
    }

    /// The vault-relative real place of the existing folder `folder` (`None`: the root).
    fn real_folder(&self, folder: Option<&VaultPath>) -> Option<String> {
        let mut folders = self.folders.lock().unwrap_or_else(|p| p.into_inner());
        self.real_folder_in(&mut folders, folder)
            .map(|real| real.rel().to_owned())
    }

    /// `Vault::real_folder`, found once per folder and kept in `folders`.
    fn real_folder_in<'a>(
        &self,
        folders: &'a mut HashMap<String, Option<RealFolder>>,
        folder: Option<&VaultPath>,
    ) -> Option<&'a RealFolder> {
        let key = folder.map_or("", VaultPath::as_str).to_owned();
        folders
            .entry(key)
            .or_insert_with(|| self.vault.real_folder(folder))
            .as_ref()
    }
}

/// What search-like results may show a caller: the notes it may read that Obsidian's excluded
/// files (`userIgnoreFilters`, read when this is made) leave in. Browsing listings use
/// `Visibility` alone, so excluded notes stay listable by folder.
pub(crate) struct SearchVisibility {
    excluded: ExcludedFiles,
    visibility: Visibility,
}

impl SearchVisibility {
    pub(crate) fn shows(&self, path: &str) -> bool {
        !self.excluded.excludes(path) && self.visibility.shows(path)
    }
}

impl Ops {
    pub(crate) fn visibility(&self, ctx: &Context) -> Visibility {
        Visibility {
            policy: self.policy(),
            principal: ctx.principal.clone(),
            vault: Arc::clone(&self.walls.vault),
            folders: Mutex::new(HashMap::new()),
        }
    }

    /// The caller's visibility with Obsidian's excluded files left out, as of now.
    pub(crate) fn search_visibility(&self, ctx: &Context) -> SearchVisibility {
        SearchVisibility {
            excluded: self.walls.vault.excluded_files(),
            visibility: self.visibility(ctx),
        }
    }

    /// Read access to `path` when the caller has it; a probe, so nothing is audited.
    pub(super) fn readable(&self, ctx: &Context, path: &VaultPath) -> Option<Readable> {
        self.visibility(ctx)
            .shows(path.as_str())
            .then(|| Readable { path: path.clone() })
    }

    /// Refuses to read `path` unless the caller may, answering as a missing note would.
    pub(super) fn require_read(
        &self,
        ctx: &Context,
        path: &VaultPath,
    ) -> Result<Readable, OpsError> {
        if self.visibility(ctx).shows(path.as_str()) {
            Ok(Readable { path: path.clone() })
        } else {
            self.audit.record(ctx, Event::denied(path.as_str()));
            Err(OpsError::from_vault(
                VaultError::NotFound {
                    path: path.to_string(),
                },
                None,
            ))
        }
    }

    /// Refuses to change `path` unless the caller may; the answer does not depend on whether the
    /// file exists.
    pub(super) fn require_write(
        &self,
        ctx: &Context,
        path: &VaultPath,
    ) -> Result<Writable, OpsError> {
        if self.visibility(ctx).may_write(path.as_str()) {
            Ok(Writable { path: path.clone() })
        } else {
            self.audit.record(ctx, Event::denied(path.as_str()));
            Err(OpsError::PathForbidden {
                input: path.to_string(),
                reason: format!(
                    "the identity '{}' may not change it; ask the vault's owner for a write rule covering it",
                    ctx.principal.name()
                ),
            })
        }
    }

    /// Refuses anyone but the vault's owner; `reason` says why only the owner may.
    pub(super) fn require_owner(
        &self,
        ctx: &Context,
        reason: &str,
    ) -> Result<Maintenance, OpsError> {
        if ctx.principal == Principal::Owner {
            Ok(Maintenance(()))
        } else {
            Err(OpsError::PathForbidden {
                input: "/".into(),
                reason: reason.into(),
            })
        }
    }

    /// The caller's visibility when it may see `folder` (`None` is the vault root) as existing.
    pub(super) fn may_list(&self, ctx: &Context, folder: Option<&VaultPath>) -> Option<Visibility> {
        let path = folder.map_or("", VaultPath::as_str);
        let visibility = self.visibility(ctx);
        // A linked folder is judged by where it leads too.
        let allowed = visibility.policy.allows(&ctx.principal, Action::List, path)
            && (path.is_empty() || visibility.real_path_allowed(path, Action::List));
        if !allowed {
            self.audit.record(ctx, Event::denied(path));
        }
        allowed.then_some(visibility)
    }
}
