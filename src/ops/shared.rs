//! The core every area of `ops` shares: who is asking (`Context`), the `Ops` handle with its
//! state (the walls around the vault and index, the policy, the audit log, settings), the
//! builders that set it up, and the time format answers use.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, SystemTime};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::access;
use super::audit::{self, AuditLog};
use super::{clock, move_journal, search, turns};
use crate::acl::{Policy, Principal};
use crate::history::History;
use crate::index::Index;
use crate::vault::{FileLock, Vault, VaultPath};

/// Who is asking.
#[derive(Debug, Clone)]
pub struct Context {
    pub principal: Principal,
    /// The tool or request being served, for the audit log.
    pub tool: String,
    /// The id of the change this call made, once it made one: shared with whoever answers the
    /// call, so every answer and audit line of a call carries the same id.
    change: Arc<OnceLock<String>>,
    /// Set when the client cancels the request (`notifications/cancelled`), for the calls long
    /// enough to stop early.
    cancelled: Arc<AtomicBool>,
}

impl Context {
    pub fn owner() -> Context {
        Context::new(Principal::Owner, "owner")
    }

    pub fn new(principal: Principal, tool: impl Into<String>) -> Context {
        Context {
            principal,
            tool: tool.into(),
            change: Arc::default(),
            cancelled: Arc::default(),
        }
    }

    /// This context, cancelled once `flag` is set (by the transport, when the client cancels).
    pub fn sharing_cancellation(mut self, flag: Arc<AtomicBool>) -> Context {
        self.cancelled = flag;
        self
    }

    /// Whether the client cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// The flag `is_cancelled` reads, for work that checks it away from the context.
    pub(super) fn cancellation(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancelled)
    }

    /// This context, recording its change id where `slot` can read it too.
    pub fn sharing_change(mut self, slot: Arc<OnceLock<String>>) -> Context {
        self.change = slot;
        self
    }

    /// The change this call made, if it made one.
    pub fn change_id(&self) -> Option<&str> {
        self.change.get().map(String::as_str)
    }

    /// Records the call's change; a call makes one change, so a second id is ignored (and
    /// logged, as a bug).
    pub(super) fn made_change(&self, id: String) {
        if let Err(second) = self.change.set(id) {
            tracing::error!(change = %second, first = ?self.change.get(), "one call made two changes");
        }
    }
}

/// The operations on one vault and its index.
#[derive(Debug)]
pub struct Ops {
    /// The vault and the index: reached only through an access check (see `access`).
    pub(super) walls: access::Walls,
    /// Replaced whole on reload; each call takes one snapshot, so a call never sees half a policy.
    pub(super) policy: RwLock<Arc<Policy>>,
    pub(super) audit: AuditLog,
    pub(super) clock: clock::Clock,
    pub(super) daily_notes: crate::vault::DailyNotesOverrides,
    /// Semantic search, once its model has loaded (or why it is unavailable).
    pub(super) semantic: RwLock<search::SemanticSlot>,
    pub(super) files: FileSettings,
    /// `[vault] protected_folders`, or `None` for the default set (see `notes::protected_folders`).
    pub(super) protected_folders: Option<Vec<VaultPath>>,
    /// Where moves journal their plan, so a move cut short is finished at the next start.
    pub(super) move_journal: move_journal::MoveJournal,
    /// Whole-vault scans (greps) take turns, twice as many at once as there are cores.
    pub(super) scans: turns::Turns,
    /// Every version the vault's notes had, when history is on (`[history]`).
    pub(super) history: Option<History>,
}

/// Limits on reading the vault's files that are not notes (`[files]`).
#[derive(Debug, Clone)]
pub struct FileSettings {
    /// The largest file `vault_read_file` reads (and `vault_stat` hashes).
    pub max_read_bytes: u64,
    /// The most bytes of encoded image one read returns (split across the pages of a rendered PDF).
    pub image_budget_bytes: usize,
    /// The most bytes of text one read returns.
    pub max_text_bytes: usize,
    /// The most PDF pages one `raw` read renders.
    pub pdf_render_pages: usize,
    /// Where the pdfium library that renders PDF pages is looked for, on every render (so
    /// installing it fixes a running server).
    pub pdfium: crate::files::pdf::pdfium::Sources,
}

impl Default for FileSettings {
    fn default() -> FileSettings {
        FileSettings {
            max_read_bytes: 50 * 1024 * 1024,
            image_budget_bytes: crate::files::image::DEFAULT_IMAGE_BUDGET,
            max_text_bytes: crate::files::text::DEFAULT_TEXT_CAP,
            pdf_render_pages: 5,
            pdfium: crate::files::pdf::pdfium::Sources::default(),
        }
    }
}

impl Ops {
    /// Operations on `vault`, answering searches from `index` (which must index the same vault).
    pub fn new(vault: Arc<Vault>, index: Index) -> Ops {
        Ops {
            walls: access::Walls::new(vault, index),
            policy: RwLock::new(Arc::new(Policy::default())),
            audit: AuditLog::default(),
            clock: clock::Clock::default(),
            daily_notes: crate::vault::DailyNotesOverrides::default(),
            semantic: RwLock::new(search::SemanticSlot::default()),
            files: FileSettings::default(),
            protected_folders: None,
            move_journal: move_journal::MoveJournal::default(),
            scans: turns::Turns::two_per_core(),
            history: None,
        }
    }

    /// Lets `turns` whole-vault scans (greps) run at once instead of two per core, each waiting
    /// at most `patience` for its turn instead of 30 s.
    pub fn with_scan_turns(mut self, turns: usize, patience: std::time::Duration) -> Ops {
        self.scans = turns::Turns::new(turns, patience);
        self
    }

    /// Protects exactly `folders` from deletes and moves; `None` protects the default set (the
    /// memory folder and the daily-notes folder).
    pub fn with_protected_folders(mut self, folders: Option<Vec<VaultPath>>) -> Ops {
        self.protected_folders = folders;
        self
    }

    /// Journals moves in `dir` (in the state directory, never in the vault), so a move cut short
    /// by a kill is finished by `recover_moves` at the next start.
    pub fn with_move_journal(mut self, dir: std::path::PathBuf) -> Ops {
        self.move_journal = move_journal::MoveJournal::new(dir);
        self
    }

    /// Reads files other than notes within `settings`.
    pub fn with_file_settings(mut self, settings: FileSettings) -> Ops {
        self.files = settings;
        self
    }

    /// Stages every change in `history` before its files are written, so it can be undone.
    pub fn with_history(mut self, history: History) -> Ops {
        self.history = Some(history);
        self
    }

    /// Records every change and every refused attempt in `audit`.
    pub fn with_audit(mut self, audit: AuditLog) -> Ops {
        self.audit = audit;
        self
    }

    /// Records an attempt refused outside `ops` (a tool withheld from the caller) in the audit log.
    pub fn audit_denied(&self, ctx: &Context, path: &str) {
        self.audit.record(ctx, audit::Event::denied(path));
    }

    /// The access policy calls are checked against now.
    pub fn policy(&self) -> Arc<Policy> {
        // A poisoned lock still holds a whole policy (it is only ever replaced), so use it.
        Arc::clone(&self.policy.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Replaces the access policy; calls already running finish under the old one.
    pub fn set_policy(&self, policy: Policy) {
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(policy);
    }

    /// The vault, for the person at the console (`app`, `cli`), whom no rule binds.
    pub fn vault(&self) -> &Vault {
        self.walls.console().0
    }

    /// The index, for the person at the console.
    pub fn index(&self) -> &Index {
        self.walls.console().1
    }

    /// Brings the index in line with a file this request just wrote or removed, so the caller's
    /// next search sees it (read your writes). The write itself has succeeded either way.
    /// Locks `paths` in path order, each once: every call taking several notes' locks takes
    /// them in this one order, so two such calls never wait on each other in a circle.
    pub(super) fn lock_in_order<'a>(
        &self,
        granted: &impl access::Granted,
        paths: impl IntoIterator<Item = &'a VaultPath>,
    ) -> Vec<FileLock<'_>> {
        let mut keys: Vec<&VaultPath> = paths.into_iter().collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|key| self.walls.vault(granted).lock(key))
            .collect()
    }

    pub(super) fn reindex(&self, written: &access::Writable, path: &VaultPath) {
        if let Err(error) = self.walls.index(written).refresh(vec![path.to_string()]) {
            tracing::error!(%error, path = %path, "the index could not take in a write");
        }
    }
}

/// RFC 3339 in UTC, which every client can parse.
pub fn rfc3339(time: SystemTime) -> String {
    OffsetDateTime::from(time)
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// `rfc3339` of a time in ms since the epoch (the history's clock).
pub(crate) fn rfc3339_millis(millis: i64) -> String {
    rfc3339(SystemTime::UNIX_EPOCH + Duration::from_millis(millis.max(0) as u64))
}

pub(crate) fn rfc3339_nanos(nanos: i64) -> String {
    rfc3339(SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos.max(0) as u64))
}
