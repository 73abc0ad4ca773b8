//! The one entry point for everything a client may do to a vault.
//!
//! Every function takes a `Context` carrying the caller's `Principal`, turns raw inputs into domain
//! types (`VaultPath`, `Revision`), does the work through `vault` and `markdown`, and returns plain
//! data. Transports (stdio, HTTP) only adapt; none reaches the vault except through here, so access
//! control added here covers every transport. Functions block on file I/O: call them off the async
//! executor.

pub(crate) mod access;
mod audit;
mod clock;
mod complete;
mod daily;
mod edit;
mod error;
mod files;
mod links;
mod memory;
mod move_journal;
mod move_note;
mod notes;
mod paging;
mod review;
mod search;
mod tasks;
mod turns;

use std::time::{Duration, SystemTime};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub use crate::markdown::edit::Position as AnchorPosition;
pub use crate::markdown::sections::PatchOperation;
pub use crate::markdown::tasks::edit::LanePosition as TaskPosition;
pub use crate::vault::Period;
pub use audit::{AuditLog, AuditRotation};
pub use complete::{Completions, MAX_COMPLETIONS};
pub use daily::{
    AppendDailyNote, AppendedDailyNote, DailyNote, GetDailyNote, PeriodicSettingsUsed,
};
pub use edit::{EditSpan, EditedNote, InsertAtAnchor, PatchNote, ReplaceInNote, UpdateProperties};
pub use error::OpsError;
pub use files::{
    FileEntry, FileList, FilePart, FileRead, ListFiles, PathKind, PathStat, ReadFile, StatPath,
};
pub use links::{
    Backlink, Backlinks, BrokenLink, BrokenLinks, FindBrokenLinks, FindOrphans, GetLinks,
    OutgoingLink, OutgoingLinks, TargetKind,
};
pub use memory::{
    Bootstrap, DeleteMemory, GetMemory, MemoryEntry, MemoryFileSummary, MemoryRecall,
    MemorySectionSummary, MemoryWrite, Recalled, UpdateMemory,
};
pub use move_note::{LinkChange, MoveNote, MovedNote, RewrittenFile};
pub use notes::{
    DeleteNote, DeletedNote, ListNotes, NoteList, NoteRead, NoteSummary, OutlineEntry, ReadMode,
    ReadNote, WriteNote, WrittenNote,
};
pub use review::{
    Assembled, DEFAULT_MAX_CHARS as DEFAULT_REVIEW_CHARS, DailyReview, Material, MemoryReview,
    envelope, escape_content,
};
pub use search::{
    CountList, Counted, CountedList, DEFAULT_GREP_BUDGET, DateFilter, Grep, GrepHit, GrepResult,
    ListPropertyValues, RebuiltIndex, RecentNotes, RecentSort, SearchByFolder, SearchByProperty,
    SearchByTag, SearchFilters, SearchMode, SearchNotes, SearchResult, SearchResults,
};
pub use search::{EmbedPass, SemanticSearch};
pub use tasks::{
    CreateTask, ListTasks, SortBy as TaskSort, SubtaskProgress, TaskDateFilter, TaskFields,
    TaskItem, TaskList, TaskWrite, TaskWriteFormat, UpdateTask,
};

use std::sync::{Arc, RwLock};

use crate::acl::{Policy, Principal};
use crate::index::{self, Index};
use crate::vault::{Vault, VaultPath};

/// Who is asking.
#[derive(Debug, Clone)]
pub struct Context {
    pub principal: Principal,
    /// The tool or request being served, for the audit log.
    pub tool: String,
}

impl Context {
    pub fn owner() -> Context {
        Context {
            principal: Principal::Owner,
            tool: "owner".into(),
        }
    }

    pub fn new(principal: Principal, tool: impl Into<String>) -> Context {
        Context {
            principal,
            tool: tool.into(),
        }
    }
}

/// The operations on one vault and its index.
#[derive(Debug)]
pub struct Ops {
    /// The vault and the index: reached only through an access check (see `access`).
    walls: access::Walls,
    /// Replaced whole on reload; each call takes one snapshot, so a call never sees half a policy.
    policy: RwLock<Arc<Policy>>,
    audit: AuditLog,
    clock: clock::Clock,
    daily_notes: crate::vault::DailyNotesOverrides,
    /// Semantic search, once its model has loaded (or why it is unavailable).
    semantic: RwLock<search::SemanticSlot>,
    files: FileSettings,
    /// `[vault] protected_folders`, or `None` for the default set (see `notes::protected_folders`).
    protected_folders: Option<Vec<VaultPath>>,
    /// Where moves journal their plan, so a move cut short is finished at the next start.
    move_journal: move_journal::MoveJournal,
    /// Whole-vault scans (greps) take turns, twice as many at once as there are cores.
    scans: turns::Turns,
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

/// A short description of the vault for server instructions and orientation.
#[derive(Debug, Clone)]
pub struct VaultOverview {
    pub name: String,
    pub note_count: usize,
    /// Top-level folders with the number of notes below each.
    pub folders: Vec<(String, usize)>,
    /// The most recently modified notes, newest first, with their RFC 3339 times.
    pub recent: Vec<(String, String)>,
}

const RECENT_NOTES: usize = 10;
/// Tags and property keys the orientation prompt names.
const VOCABULARY_ENTRIES: usize = 15;

/// What the index knows about the vault's vocabulary, for orientation.
#[derive(Debug, Clone)]
pub struct VaultVocabulary {
    pub note_count: u64,
    /// The most used tags with the number of notes carrying each.
    pub tags: Vec<(String, u64)>,
    /// The most used property keys with the number of notes having each.
    pub property_keys: Vec<(String, u64)>,
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
    fn reindex(&self, written: &access::Writable, path: &VaultPath) {
        if let Err(error) = self.walls.index(written).refresh(vec![path.to_string()]) {
            tracing::error!(%error, path = %path, "the index could not take in a write");
        }
    }

    pub fn overview(&self, ctx: &Context) -> Result<VaultOverview, OpsError> {
        let visibility = self.visibility(ctx);
        let vault = self.walls.vault(&visibility);
        let mut notes: Vec<_> = vault
            .scan(None)
            .map_err(|e| OpsError::from_vault(e, None))?
            .into_iter()
            .filter(|file| notes::is_note(&file.path) && visibility.shows(file.path.as_str()))
            .collect();
        let mut folders: Vec<(String, usize)> = Vec::new();
        for note in &notes {
            let mut segments = note.path.segments();
            let (Some(first), Some(_)) = (segments.next(), segments.next()) else {
                continue;
            };
            match folders.last_mut() {
                Some((name, count)) if name == first => *count += 1,
                _ => folders.push((first.to_string(), 1)),
            }
        }
        let note_count = notes.len();
        notes.sort_by_key(|note| std::cmp::Reverse(note.modified));
        let recent = notes
            .iter()
            .take(RECENT_NOTES)
            .map(|note| (note.path.to_string(), rfc3339(note.modified)))
            .collect();
        Ok(VaultOverview {
            name: vault
                .root()
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "vault".into()),
            note_count,
            folders,
            recent,
        })
    }
}

impl Ops {
    /// The most used tags and property keys. Waits for the startup reconcile, so call it only
    /// when a client asks (never while a session is being set up).
    pub fn vocabulary(&self, ctx: &Context) -> Result<VaultVocabulary, OpsError> {
        // The same visibility filter as vault_list_tags: an identity never learns a tag or a
        // property key that only its denied notes carry.
        let (all, _, _, visibility) = self.count_request(
            ctx,
            &search::CountList {
                folder: None,
                limit: None,
                cursor: None,
            },
        )?;
        let pairs = |counts: Vec<index::Count>| -> Vec<(String, u64)> {
            counts
                .into_iter()
                .map(|count| (count.value, count.notes))
                .collect()
        };
        let index = self.walls.index(&visibility);
        let tags = index.tag_counts(&all, 0, VOCABULARY_ENTRIES)?;
        let property_keys = index.property_key_counts(&all, 0, VOCABULARY_ENTRIES)?;
        let note_count = match &all.only_paths {
            Some(visible) => visible.len() as u64,
            None => index.note_count()?,
        };
        Ok(VaultVocabulary {
            note_count,
            tags: pairs(tags.rows),
            property_keys: pairs(property_keys.rows),
        })
    }
}

/// RFC 3339 in UTC, which every client can parse.
pub fn rfc3339(time: SystemTime) -> String {
    OffsetDateTime::from(time)
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

pub(crate) fn rfc3339_nanos(nanos: i64) -> String {
    rfc3339(SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos.max(0) as u64))
}
