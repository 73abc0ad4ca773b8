//! Note operations: read (whole, paged, properties, outline, one section), write, list, delete.
//!
//! Reads report `revision`, `bytes` and `modified`; writes replace an existing note only against the
//! revision the caller read, under the note's lock, and never through a symlink. Deletes move the
//! note to the vault's trash.

use crate::history::{Draft, Kind};
use crate::ops::access::{Granted, Maintenance};
use globset::{GlobBuilder, GlobMatcher};
use serde_json::{Map, Value};

use super::error::OpsError;
use super::inputs::{find_heading, parse_path, parse_revision};
use super::paging::{Cursor, check_limit};
use super::shared::{Context, Ops, rfc3339, rfc3339_nanos};
use crate::index::{NoteFilter, NoteRow};
use crate::markdown::{frontmatter, headings};
use crate::vault::{VaultError, VaultPath, WriteMode};

/// File types a client may write or delete; everything else in a vault is left alone.
const WRITABLE_EXTENSIONS: &[&str] = &["md", "canvas", "base", "txt", "json"];
const WRITABLE_DESCRIPTION: &str = "Quire writes only .md, .canvas, .base, .txt and .json files";

pub fn is_note(path: &VaultPath) -> bool {
    path.extension().as_deref() == Some("md")
}

#[derive(Debug, Clone)]
pub struct ReadNote {
    pub path: String,
    pub mode: ReadMode,
}

#[derive(Debug, Clone)]
pub enum ReadMode {
    Full {
        start_line: Option<u64>,
        limit: Option<u64>,
    },
    PropertiesOnly,
    /// The headings from `start_line` on, `OUTLINE_PAGE` at a time.
    Outline {
        start_line: Option<u64>,
    },
    Heading {
        heading: String,
        level: Option<u8>,
    },
}

/// The most headings one outline answer holds: a note of a million headings once gave a 123 MB
/// answer and 1 GB of memory per call.
pub const OUTLINE_PAGE: usize = 1000;

#[derive(Debug, Clone, PartialEq)]
pub struct OutlineEntry {
    pub heading: String,
    pub level: u8,
    pub line: usize,
    pub bytes: usize,
}

#[derive(Debug, Clone)]
pub struct NoteRead {
    pub path: String,
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    pub total_lines: usize,
    pub content: Option<String>,
    pub properties: Option<Map<String, Value>>,
    pub outline: Option<Vec<OutlineEntry>>,
    pub start_line: Option<usize>,
    pub end_line: Option<usize>,
    pub next_start_line: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct WriteNote {
    pub path: String,
    pub body: String,
    pub properties: Option<Map<String, Value>>,
    pub overwrite: bool,
    pub expected_revision: Option<String>,
}

#[derive(Debug, Clone)]
pub struct WrittenNote {
    pub path: String,
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    pub created: bool,
    /// Where another writer's version that reached the note during the write is kept.
    pub conflict_copy: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ListNotes {
    pub folder: Option<String>,
    pub glob: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone)]
pub struct NoteSummary {
    pub path: String,
    pub title: String,
    pub bytes: u64,
    pub modified: String,
    pub tags: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct NoteList {
    pub notes: Vec<NoteSummary>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone)]
pub struct DeleteNote {
    pub path: String,
    pub expected_revision: Option<String>,
    pub prune_empty_folders: bool,
}

#[derive(Debug, Clone)]
pub struct DeletedNote {
    pub path: String,
    pub trashed_to: String,
    pub revision: String,
    pub pruned_folders: Vec<String>,
}

impl Ops {
    pub fn read_note(&self, ctx: &Context, request: ReadNote) -> Result<NoteRead, OpsError> {
        let path = parse_path(&request.path)?;
        if !is_note(&path) {
            return Err(OpsError::UnsupportedExtension {
                path: path.to_string(),
                allowed: "vault_read_note reads markdown notes (.md) only",
            });
        }
        let readable = self.require_read(ctx, &path)?;
        let file = self
            .walls
            .vault(&readable)
            .read(&path)
            .map_err(|e| OpsError::from_vault(e, None))?;
        let text = String::from_utf8(file.bytes).map_err(|error| {
            OpsError::invalid_argument(format!(
                "'{path}' is not valid UTF-8 text (the first invalid byte is at offset {}); Quire reads notes as UTF-8. Convert the file to UTF-8 and retry.",
                error.utf8_error().valid_up_to()
            ))
        })?;
        let total_lines = text.split_inclusive('\n').count();
        let mut read = NoteRead {
            path: path.to_string(),
            revision: file.revision.to_string(),
            bytes: text.len() as u64,
            modified: rfc3339(file.modified),
            total_lines,
            content: None,
            properties: None,
            outline: None,
            start_line: None,
            end_line: None,
            next_start_line: None,
        };
        match request.mode {
            ReadMode::Full { start_line, limit } => {
                let start = usize::try_from(start_line.unwrap_or(1)).unwrap_or(usize::MAX);
                if start == 0 || (start > total_lines && !(start == 1 && total_lines == 0)) {
                    return Err(OpsError::invalid_argument(format!(
                        "start_line {start} is past the end of '{path}', which has {total_lines} lines; lines are numbered from 1"
                    )));
                }
                let limit = usize::try_from(limit.unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
                if limit == 0 {
                    return Err(OpsError::invalid_argument(
                        "limit must be at least 1 line; omit it to read to the end",
                    ));
                }
                let end = start
                    .saturating_sub(1)
                    .saturating_add(limit)
                    .min(total_lines);
                let paged = start_line.is_some() || end < total_lines;
                if paged {
                    read.content = Some(lines_of(&text, start.saturating_sub(1), end).to_string());
                    read.start_line = Some(start);
                    read.end_line = Some(end);
                    read.next_start_line = (end < total_lines).then_some(end + 1);
                } else {
                    read.content = Some(text);
                }
            }
            ReadMode::PropertiesOnly => {
                read.properties = Some(parse_properties(&path, &text)?);
            }
            ReadMode::Outline { start_line } => {
                let from = usize::try_from(start_line.unwrap_or(1)).unwrap_or(usize::MAX);
                let mut rest = headings::headings(&text)
                    .into_iter()
                    .skip_while(|heading| heading.line < from);
                let page: Vec<OutlineEntry> = rest
                    .by_ref()
                    .take(OUTLINE_PAGE)
                    .map(|heading| OutlineEntry {
                        bytes: heading.section_end.saturating_sub(heading.start),
                        heading: heading.text,
                        level: heading.level,
                        line: heading.line,
                    })
                    .collect();
                read.next_start_line = rest.next().map(|heading| heading.line);
                read.outline = Some(page);
            }
            ReadMode::Heading { heading, level } => {
                let found = find_heading(&path, &text, &heading, level)?;
                let section = text.get(found.start..found.section_end).ok_or_else(|| {
                    OpsError::Internal("heading offsets fell outside the note".into())
                })?;
                let section_lines = section.split_inclusive('\n').count();
                read.start_line = Some(found.line);
                read.end_line = Some(found.line + section_lines.saturating_sub(1));
                read.content = Some(section.to_string());
            }
        }
        Ok(read)
    }

    pub fn write_note(&self, ctx: &Context, request: WriteNote) -> Result<WrittenNote, OpsError> {
        let path = parse_path(&request.path)?;
        check_writable(&path)?;
        let writable = self.require_write(ctx, &path)?;
        let expected = parse_revision(request.expected_revision.as_deref())?;
        let content = written_content(&path, request.properties.as_ref(), request.body)?;
        let _lock = self.walls.vault(&writable).lock(&path);
        let resolved = self
            .walls
            .vault(&writable)
            .resolve(&path)
            .map_err(|e| OpsError::from_vault(e, expected.as_ref()))?;
        let created = !resolved.exists;
        let mut before = None;
        let outcome = if resolved.exists {
            let current = self
                .walls
                .vault(&writable)
                .read_resolved(&resolved)
                .map_err(|e| OpsError::from_vault(e, expected.as_ref()))?;
            if !request.overwrite {
                return Err(OpsError::AlreadyExists {
                    what: format!("'{path}' already exists (revision {})", current.revision),
                    hint: "Pass overwrite: true with that expected_revision to replace it, use an editing tool, or choose another path.",
                });
            }
            let Some(expected) = expected else {
                return Err(OpsError::RevisionRequired {
                    path: path.to_string(),
                    current: current.revision.to_string(),
                });
            };
            before = Some(expected.to_string());
            let staged = self.stage_change(
                ctx,
                &writable,
                Kind::Write,
                &[Draft {
                    path: path.as_str(),
                    previous_path: None,
                    kind: Kind::Write,
                    before: Some(&current.bytes),
                    after: Some(content.as_bytes()),
                }],
            )?;
            let result = self.walls.vault(&writable).write(
                &resolved,
                content.as_bytes(),
                WriteMode::Replace {
                    expected: &expected,
                },
            );
            self.settle_change(ctx, staged, result.is_ok());
            result.map_err(|e| OpsError::from_vault(e, Some(&expected)))?
        } else {
            if let Some(expected) = expected {
                return Err(OpsError::NotFound {
                    what: format!(
                        "'{path}' does not exist, but expected_revision {expected} was given: it may have been moved or deleted"
                    ),
                    hint: "Call vault_list_notes to find it, or omit expected_revision to create a new note.",
                });
            }
            let staged = self.stage_change(
                ctx,
                &writable,
                Kind::Create,
                &[Draft {
                    path: path.as_str(),
                    previous_path: None,
                    kind: Kind::Create,
                    before: None,
                    after: Some(content.as_bytes()),
                }],
            )?;
            let result = self.walls.vault(&writable).write(
                &resolved,
                content.as_bytes(),
                WriteMode::CreateNew,
            );
            self.settle_change(ctx, staged, result.is_ok());
            result.map_err(|e| OpsError::from_vault(e, None))?
        };
        self.reindex(&writable, &path);
        let after = outcome.revision.to_string();
        self.audit.record(
            ctx,
            super::audit::Event::changed(path.as_str(), before.as_deref(), Some(&after)),
        );
        Ok(WrittenNote {
            path: path.to_string(),
            revision: outcome.revision.to_string(),
            bytes: outcome.bytes,
            modified: rfc3339(outcome.modified),
            created,
            conflict_copy: outcome.conflict_copy,
        })
    }

    /// Notes in path order, from the index (so the listing agrees with search), filtered by
    /// folder and glob, resuming after the cursor's path.
    ///
    /// A listing shows the disk as it is now, also for files written by someone else a moment
    /// ago that the watcher has not reported yet: the folder is first re-checked by size and
    /// modification time (only changed notes are read), as the scan-based listing did.
    pub fn list_notes(&self, ctx: &Context, request: ListNotes) -> Result<NoteList, OpsError> {
        let folder = self.check_folder(ctx, request.folder.as_deref())?;
        let visibility = self.visibility(ctx);
        let matcher = request.glob.as_deref().map(compile_glob).transpose()?;
        let limit = check_limit(request.limit)?;
        let after = Cursor::after(request.cursor.as_deref())?;
        let folder_path = folder.as_deref().map(parse_path).transpose()?;
        self.walls
            .index(&visibility)
            .sync_folder(folder_path.as_ref())?;
        let filter = NoteFilter {
            folder,
            ..NoteFilter::default()
        };
        let page = self.walls.index(&visibility).list_by_path(
            &filter,
            after.as_deref(),
            limit,
            &|row: &NoteRow| {
                matcher.as_ref().is_none_or(|m| m.matches(&row.path)) && visibility.shows(&row.path)
            },
        )?;
        Ok(NoteList {
            notes: page.rows.into_iter().map(summary).collect(),
            next_cursor: page.next.map(|path| Cursor::After(path).encode()),
        })
    }

    pub fn delete_note(&self, ctx: &Context, request: DeleteNote) -> Result<DeletedNote, OpsError> {
        let path = parse_path(&request.path)?;
        check_writable(&path)?;
        let writable = self.require_write(ctx, &path)?;
        self.refuse_protected(&path)?;
        let expected = parse_revision(request.expected_revision.as_deref())?;
        let _lock = self.walls.vault(&writable).lock(&path);
        let resolved = self
            .walls
            .vault(&writable)
            .resolve(&path)
            .map_err(|e| OpsError::from_vault(e, expected.as_ref()))?;
        let current = self
            .walls
            .vault(&writable)
            .read_resolved(&resolved)
            .map_err(|e| OpsError::from_vault(e, expected.as_ref()))?;
        let expected = expected.unwrap_or_else(|| current.revision.clone());
        // What is kept is what is deleted: a note changed since `expected` is not deleted.
        let staged = self.stage_change(
            ctx,
            &writable,
            Kind::Delete,
            &[Draft {
                path: path.as_str(),
                previous_path: None,
                kind: Kind::Delete,
                before: Some(&current.bytes),
                after: None,
            }],
        )?;
        let result = self.walls.vault(&writable).trash(&resolved, &expected);
        self.settle_change(ctx, staged, result.is_ok());
        let trashed_to = result.map_err(|e| OpsError::from_vault(e, Some(&expected)))?;
        let pruned_folders = if request.prune_empty_folders {
            // Only folders the caller may change: a rule for `Inbox/Sub/` never removes `Inbox`.
            let visibility = self.visibility(ctx);
            self.walls
                .vault(&writable)
                .prune_empty_folders(&resolved, &|folder: &str| visibility.may_write(folder))
        } else {
            Vec::new()
        };
        self.reindex(&writable, &path);
        let before = expected.to_string();
        self.audit.record(
            ctx,
            super::audit::Event {
                destination: Some(&trashed_to),
                ..super::audit::Event::changed(path.as_str(), Some(&before), None)
            },
        );
        Ok(DeletedNote {
            path: path.to_string(),
            trashed_to,
            revision: expected.to_string(),
            pruned_folders,
        })
    }
}

/// Why a folder is protected, named in refusals so the user knows which setting to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protection {
    /// Listed in `[vault] protected_folders`.
    Configured,
    /// The memory folder, protected by default.
    Memory,
    /// The daily-notes folder, protected by default.
    Daily,
}

impl Protection {
    fn describe(self) -> &'static str {
        match self {
            Protection::Configured => "listed in [vault] protected_folders of Quire's config",
            Protection::Memory => {
                "the memory folder, protected by default; [vault] protected_folders in Quire's config replaces the list"
            }
            Protection::Daily => {
                "the daily-notes folder, protected by default; [vault] protected_folders in Quire's config replaces the list"
            }
        }
    }
}

impl Ops {
    /// The folders no note may be deleted from or moved out of or into, each with why: `[vault]
    /// protected_folders` when set, else the memory folder and the daily-notes folder, the latter
    /// resolved now from Obsidian's settings (none when daily notes live at the vault root). A
    /// `daily-notes.json` that cannot be read is an error: the folder to protect is unknown.
    pub(super) fn protected_folders(&self) -> Result<Vec<(String, Protection)>, String> {
        if let Some(folders) = &self.protected_folders {
            return Ok(folders
                .iter()
                .map(|folder| (folder.to_string(), Protection::Configured))
                .collect());
        }
        let mut folders = Vec::new();
        if let Some(memory) = self.walls.memory_folder() {
            folders.push((memory.to_string(), Protection::Memory));
        }
        let daily = match &self.daily_notes.folder {
            Some(folder) => folder.trim().trim_matches('/').to_owned(),
            None => self.walls.vault(&Maintenance::new()).daily_notes_folder()?,
        };
        if !daily.is_empty() {
            folders.push((daily, Protection::Daily));
        }
        Ok(folders)
    }

    /// Refuses `path` when it lies inside a protected folder. Paths arrive canonical (`VaultPath`
    /// has no `..`, `.` or `\`); the comparison ignores case, so a case-aliased spelling on a
    /// case-insensitive file system is refused too.
    pub(in crate::ops) fn refuse_protected(&self, path: &VaultPath) -> Result<(), OpsError> {
        let lowered = path.as_str().to_lowercase();
        let folders = self.protected_folders().map_err(|why| OpsError::PathForbidden {
            input: path.to_string(),
            reason: format!(
                "notes cannot be deleted or moved while the daily-notes folder, which is protected, is unknown ({why}); fix Obsidian's Daily notes settings, or set [daily_notes] folder or [vault] protected_folders in Quire's config"
            ),
        })?;
        for (folder, why) in folders {
            let inside = lowered
                .strip_prefix(&folder.to_lowercase())
                .is_some_and(|rest| rest.starts_with('/'));
            if inside {
                return Err(OpsError::PathForbidden {
                    input: path.to_string(),
                    reason: format!(
                        "it is in '{folder}', a protected folder ({}): notes there cannot be deleted, moved out or moved in{}",
                        why.describe(),
                        if why == Protection::Memory {
                            "; to remove one memory entry, use vault_delete_memory"
                        } else {
                            ""
                        }
                    ),
                });
            }
        }
        Ok(())
    }

    /// A vault file's text (invalid UTF-8 replaced), through the vault's reader, which refuses
    /// folders, non-regular files and files over the size cap.
    pub(super) fn read_note_text(
        &self,
        granted: &impl Granted,
        path: &VaultPath,
    ) -> Result<String, OpsError> {
        let resolved = self
            .walls
            .vault(granted)
            .resolve(path)
            .map_err(|error| OpsError::from_vault(error, None))?;
        let read = self
            .walls
            .vault(granted)
            .read_resolved(&resolved)
            .map_err(|error| OpsError::from_vault(error, None))?;
        Ok(String::from_utf8_lossy(&read.bytes).into_owned())
    }

    /// Parses an optional folder and checks it exists, so a misspelt folder is `not_found` rather
    /// than an empty result. Returns its vault-relative form (`None` for the whole vault).
    pub(super) fn check_folder(
        &self,
        ctx: &Context,
        raw: Option<&str>,
    ) -> Result<Option<String>, OpsError> {
        let Some(raw) = raw else { return Ok(None) };
        let Some(folder) = VaultPath::parse_folder(raw).map_err(|e| OpsError::path(raw, e))? else {
            return Ok(None);
        };
        let not_found = || OpsError::NotFound {
            what: format!("the folder '{folder}' does not exist"),
            hint: "Omit folder to cover the whole vault, or check the spelling with vault_list_notes.",
        };
        // Before the disk is asked, so a folder the caller may not see answers as a missing one.
        let Some(visibility) = self.may_list(ctx, Some(&folder)) else {
            return Err(not_found());
        };
        let resolved = self
            .walls
            .vault(&visibility)
            .resolve(&folder)
            .map_err(|e| OpsError::from_vault(e, None))?;
        if !resolved.exists {
            return Err(not_found());
        }
        match std::fs::metadata(&resolved.fs_path) {
            Ok(metadata) if metadata.is_dir() => Ok(Some(folder.to_string())),
            Ok(_) => Err(OpsError::from_vault(
                VaultError::NotAFolder {
                    path: folder.to_string(),
                },
                None,
            )),
            Err(_) => Err(not_found()),
        }
    }
}

pub(super) fn summary(row: NoteRow) -> NoteSummary {
    NoteSummary {
        modified: rfc3339_nanos(row.mtime_ns),
        path: row.path,
        title: row.name,
        bytes: row.size,
        tags: row.tags,
    }
}

/// What `vault_write_note` writes: `body`, after a properties block when `properties` are given
/// (to a markdown note whose body has none of its own).
fn written_content(
    path: &VaultPath,
    properties: Option<&Map<String, Value>>,
    body: String,
) -> Result<String, OpsError> {
    match properties {
        Some(properties) if !properties.is_empty() => {
            if !is_note(path) {
                return Err(OpsError::invalid_argument(format!(
                    "properties apply to markdown notes only, and '{path}' is not a .md file; put the data in body instead"
                )));
            }
            if frontmatter::split(&body).yaml.is_some() {
                return Err(OpsError::invalid_argument(
                    "body already starts with a '---' properties block and properties were given too; pass the properties in one place only",
                ));
            }
            Ok(format!(
                "{}{body}",
                frontmatter::render_properties(properties)
            ))
        }
        _ => Ok(body),
    }
}

fn check_writable(path: &VaultPath) -> Result<(), OpsError> {
    match path.extension() {
        Some(extension) if WRITABLE_EXTENSIONS.contains(&extension.as_str()) => Ok(()),
        _ => Err(OpsError::UnsupportedExtension {
            path: path.to_string(),
            allowed: WRITABLE_DESCRIPTION,
        }),
    }
}

fn parse_properties(path: &VaultPath, text: &str) -> Result<Map<String, Value>, OpsError> {
    match frontmatter::split(text).yaml {
        None => Ok(Map::new()),
        Some(yaml) => {
            frontmatter::parse_properties(yaml).map_err(|error| OpsError::InvalidProperties {
                path: path.to_string(),
                line: error.line,
                column: error.column,
                message: error.message,
            })
        }
    }
}

/// Globs match the whole vault-relative path (`*` stays within a folder, `**` crosses folders);
/// a glob without `/` matches the file name at any depth, as in `.gitignore`.
fn compile_glob(raw: &str) -> Result<NoteGlob, OpsError> {
    let matcher = GlobBuilder::new(raw)
        .literal_separator(true)
        .build()
        .map_err(|error| {
            OpsError::invalid_argument(format!(
                "glob {raw:?} is not a valid pattern: {error}; use forms like 'Daily/*.md' or '**/Meeting*.md'"
            ))
        })?
        .compile_matcher();
    Ok(NoteGlob {
        matcher,
        name_only: !raw.contains('/'),
    })
}

struct NoteGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl NoteGlob {
    fn matches(&self, path: &str) -> bool {
        if self.name_only {
            self.matcher
                .is_match(path.rsplit('/').next().unwrap_or(path))
        } else {
            self.matcher.is_match(path)
        }
    }
}

/// Lines `from + 1` to `to` of `text` (numbered from 1), each with its line end: a slice of the
/// note, so a page costs one copy.
fn lines_of(text: &str, from: usize, to: usize) -> &str {
    let mut offset = 0;
    let mut start = text.len();
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if index == from {
            start = offset;
        }
        if index == to {
            return text.get(start..offset).unwrap_or_default();
        }
        offset += line.len();
    }
    text.get(start..).unwrap_or_default()
}
