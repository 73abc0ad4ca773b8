//! Reading the history as a caller may: a note's versions, one version or a diff, and the list
//! of changes. Versions under paths the caller may not read are left out as if they never were,
//! and a restricted caller sees other identities as `another identity`.

use super::types::{
    ChangeList, ChangeListed, HistoryVersion, ListChanges, NoteHistory, NoteVersions, ReadVersion,
    VersionRead,
};
use crate::history::{ChangeQuery, History, Kind, Version};
use crate::ops::access::{Readable, Visibility};
use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::paging::{Cursor, check_limit};
use crate::ops::shared::{Context, Ops, rfc3339_millis};
use crate::vault::VaultPath;

use std::time::{Duration, Instant};

/// What a restricted caller sees in place of another identity's name.
pub(super) const ANOTHER_IDENTITY: &str = "another identity";

/// The most bytes a diff answers with; past it the diff is cut and says so.
const MAX_DIFF_BYTES: usize = 256 * 1024;

/// How long a diff may look for the shortest edit. Myers' algorithm is quadratic in what differs
/// (two 60,000-line versions with nothing in common took 16 s); past this the rest is answered
/// as lines removed and added, and the diff says it is approximate.
const DIFF_DEADLINE: Duration = Duration::from_secs(1);

/// The most lines (both sides together) a diff compares: the diff keeps about 50 bytes per line
/// (its tables are sized by the whole length before it trims what is equal), so this bounds a
/// diff to a few tens of MB; two versions of 10 MB of empty lines would need 1.3 GB.
const MAX_DIFF_LINES: usize = 500_000;

impl Ops {
    /// The history, or the error that says it is off.
    pub(super) fn history(&self) -> Result<&History, OpsError> {
        self.history.as_ref().ok_or(OpsError::HistoryDisabled)
    }

    pub fn note_history(
        &self,
        ctx: &Context,
        request: NoteHistory,
    ) -> Result<NoteVersions, OpsError> {
        let history = self.history()?;
        let path = parse_path(&request.path)?;
        self.require_read(ctx, &path)?;
        let limit = check_limit(request.limit)?;
        let before = match Cursor::offset(request.cursor.as_deref())? {
            0 => None,
            id => Some(i64::try_from(id).unwrap_or(i64::MAX)),
        };
        let found = history
            .versions(path.as_str(), before, limit)
            .map_err(OpsError::HistoryUnavailable)?;
        let next_cursor = (found.len() == limit)
            .then(|| found.last())
            .flatten()
            .map(|last| Cursor::Offset(usize::try_from(last.version_id).unwrap_or(0)).encode());
        let visibility = self.visibility(ctx);
        let versions = found
            .iter()
            .filter(|version| shows_version(&visibility, version))
            .map(|version| shown(ctx, &visibility, version))
            .collect();
        Ok(NoteVersions {
            path: path.to_string(),
            versions,
            next_cursor,
        })
    }

    pub fn read_version(
        &self,
        ctx: &Context,
        request: ReadVersion,
    ) -> Result<VersionRead, OpsError> {
        let path = parse_path(&request.path)?;
        let readable = self.require_read(ctx, &path)?;
        let version = self.version_of(ctx, &path, request.version_id)?;
        let content = self.content_after(&path, &version)?;
        let revision = version.revision_after.clone().unwrap_or_default();
        let bytes = content.len() as u64;
        let Some(against) = request.diff_against.as_deref() else {
            return Ok(VersionRead {
                path: path.to_string(),
                version_id: version.version_id,
                revision,
                bytes,
                content: Some(text_of(&path, &content)?.to_owned()),
                diff: None,
            });
        };
        let (label, other) = self.diff_base(ctx, &readable, &path, against)?;
        let (old, new) = (text_of(&path, &other)?, text_of(&path, &content)?);
        let lines = line_count(old) + line_count(new);
        if lines > MAX_DIFF_LINES {
            return Err(OpsError::invalid_argument(format!(
                "the diff of version {} of '{path}' against {label} would compare {lines} lines, over the {MAX_DIFF_LINES} a diff compares; read the two versions whole instead (vault_read_version without diff_against)",
                version.version_id
            )));
        }
        let diff = unified_diff(old, new, &label, &format!("version {}", version.version_id));
        Ok(VersionRead {
            path: path.to_string(),
            version_id: version.version_id,
            revision,
            bytes,
            content: None,
            diff: Some(diff),
        })
    }

    pub fn list_changes(
        &self,
        ctx: &Context,
        request: ListChanges,
    ) -> Result<ChangeList, OpsError> {
        let history = self.history()?;
        let visibility = self.visibility(ctx);
        let limit = check_limit(request.limit)?;
        let since_ms = request.since.as_deref().map(parse_since).transpose()?;
        let before_change = Cursor::after(request.cursor.as_deref())?;
        // A restricted caller learns no other identity's name, so it can filter by its own only.
        if let Some(identity) = &request.identity
            && !visibility.reads_everything()
            && identity != ctx.principal.name()
        {
            return Ok(ChangeList {
                changes: Vec::new(),
                next_cursor: None,
            });
        }
        let query = ChangeQuery {
            identity: request.identity,
            since_ms,
            path_prefix: request.path_prefix,
            before_change,
            limit,
        };
        let (found, next) = history
            .changes(&query, &|path: &str, real: Option<&str>| {
                shows_place(&visibility, path, real)
            })
            .map_err(OpsError::HistoryUnavailable)?;
        let mut changes = Vec::with_capacity(found.len());
        for summary in found {
            let undone_by = self.standing_undo(&summary.change.id)?;
            let change = &summary.change;
            changes.push(ChangeListed {
                change_id: change.id.clone(),
                time: rfc3339_millis(change.time_ms),
                identity: identity_shown(ctx, &visibility, &change.identity),
                tool: change.tool.clone(),
                kind: change.kind.as_str().to_owned(),
                paths: summary.paths,
                undoes: change.undoes.clone(),
                undone_by,
            });
        }
        Ok(ChangeList {
            changes,
            next_cursor: next.map(|change| Cursor::After(change).encode()),
        })
    }

    /// The undo that took `change` back and still stands (it was not itself undone).
    pub(super) fn standing_undo(&self, change: &str) -> Result<Option<String>, OpsError> {
        let history = self.history()?;
        let Some(undo) = history
            .undone_by(change)
            .map_err(OpsError::HistoryUnavailable)?
        else {
            return Ok(None);
        };
        let redone = history
            .undone_by(&undo)
            .map_err(OpsError::HistoryUnavailable)?;
        Ok(redone.is_none().then_some(undo))
    }

    /// Version `id` of the note at `path` (followed across its moves), when the caller may read
    /// the path it had then; any other id is not found, whatever it is.
    pub(super) fn version_of(
        &self,
        ctx: &Context,
        path: &VaultPath,
        id: i64,
    ) -> Result<Version, OpsError> {
        let history = self.history()?;
        let not_found = || OpsError::NotFound {
            what: format!("'{path}' has no version {id}"),
            hint: "Call vault_note_history for its version ids (old versions may have been pruned).",
        };
        let found = history
            .versions(path.as_str(), id.checked_add(1), 1)
            .map_err(OpsError::HistoryUnavailable)?;
        match found.into_iter().next() {
            Some(version)
                if version.version_id == id && shows_version(&self.visibility(ctx), &version) =>
            {
                Ok(version)
            }
            _ => Err(not_found()),
        }
    }

    /// The content a version left (a deletion left none).
    pub(super) fn content_after(
        &self,
        path: &VaultPath,
        version: &Version,
    ) -> Result<Vec<u8>, OpsError> {
        let Some(revision) = &version.revision_after else {
            return Err(OpsError::invalid_argument(format!(
                "version {} of '{path}' is its deletion and holds no content; use the version before it (vault_note_history)",
                version.version_id
            )));
        };
        self.history()?
            .content(revision)
            .map_err(OpsError::HistoryUnavailable)?
            .ok_or_else(|| OpsError::NotFound {
                what: format!(
                    "the content of version {} of '{path}' is no longer kept",
                    version.version_id
                ),
                hint: "It was pruned; choose a newer version.",
            })
    }

    /// What a diff compares against: the note now (`current`), or another version of it.
    fn diff_base(
        &self,
        ctx: &Context,
        readable: &Readable,
        path: &VaultPath,
        against: &str,
    ) -> Result<(String, Vec<u8>), OpsError> {
        if against == "current" {
            let now = self
                .walls
                .vault(readable)
                .read(path)
                .map(|file| file.bytes)
                .unwrap_or_default();
            return Ok(("current".to_owned(), now));
        }
        let id: i64 = against.parse().map_err(|_| {
            OpsError::invalid_argument(format!(
                "diff_against {against:?} is neither \"current\" nor a version id (a number from vault_note_history)"
            ))
        })?;
        let other = self.version_of(ctx, path, id)?;
        Ok((format!("version {id}"), self.content_after(path, &other)?))
    }
}

/// Whether the caller may see a version: by its path, and by the place its content really was
/// when a symbolic link led elsewhere, so removing the link does not move the content's walls.
pub(super) fn shows_version(visibility: &Visibility, version: &Version) -> bool {
    shows_place(visibility, &version.path, version.real_path.as_deref())
}

/// Whether the caller may see a path the history recorded, and where it really was.
pub(super) fn shows_place(visibility: &Visibility, path: &str, real: Option<&str>) -> bool {
    visibility.shows(path) && real.is_none_or(|real| visibility.shows(real))
}

/// A version as `ctx`'s caller sees it.
fn shown(ctx: &Context, visibility: &Visibility, version: &Version) -> HistoryVersion {
    // An undo, a restore or an outside edit is named as such; else the version's own kind.
    let kind = match version.change.kind {
        Kind::Undo | Kind::Restore | Kind::External => version.change.kind,
        _ => version.kind,
    };
    HistoryVersion {
        version_id: version.version_id,
        change_id: version.change.id.clone(),
        time: rfc3339_millis(version.change.time_ms),
        identity: identity_shown(ctx, visibility, &version.change.identity),
        tool: version.change.tool.clone(),
        kind: kind.as_str().to_owned(),
        path: version.path.clone(),
        revision: version.revision_after.clone(),
        bytes: version.bytes_after,
    }
}

pub(super) fn identity_shown(ctx: &Context, visibility: &Visibility, identity: &str) -> String {
    if visibility.reads_everything() || identity == ctx.principal.name() {
        identity.to_owned()
    } else {
        ANOTHER_IDENTITY.to_owned()
    }
}

fn text_of<'a>(path: &VaultPath, bytes: &'a [u8]) -> Result<&'a str, OpsError> {
    std::str::from_utf8(bytes).map_err(|_| {
        OpsError::invalid_argument(format!(
            "a version of '{path}' is not UTF-8 text, so it has no text content or diff; restore it with vault_restore_version instead"
        ))
    })
}

/// How many lines a text has for a diff (a last line without a line break counts).
fn line_count(text: &str) -> usize {
    let breaks = text.bytes().filter(|byte| *byte == b'\n').count();
    breaks + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// A unified diff, found within `DIFF_DEADLINE` and written only up to `MAX_DIFF_BYTES`: it is
/// rendered change by change as `similar`'s own `Display` does, so a diff of two large, wholly
/// different versions (one hunk of everything) never builds more than the cut.
fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    use std::fmt::Write as _;
    let deadline = Instant::now() + DIFF_DEADLINE;
    let diff = similar::TextDiff::configure()
        .deadline(deadline)
        .diff_lines(old, new);
    let mut text = String::new();
    if Instant::now() >= deadline {
        let _ = writeln!(
            text,
            "[diff approximate: finding the shortest diff took over {} s, so past some point changed lines are shown as removed and added whole]",
            DIFF_DEADLINE.as_secs()
        );
    }
    let terminated = diff.newline_terminated();
    'hunks: for (at, hunk) in diff
        .unified_diff()
        .context_radius(3)
        .iter_hunks()
        .enumerate()
    {
        if at == 0 {
            let _ = writeln!(text, "--- {old_label}\n+++ {new_label}");
        }
        let _ = writeln!(text, "{}", hunk.header());
        for change in hunk.iter_changes() {
            let _ = write!(text, "{}{}", change.tag(), change.value());
            if !terminated {
                text.push('\n');
            }
            if terminated && change.missing_newline() {
                text.push_str("\n\\ No newline at end of file\n");
            }
            if text.len() > MAX_DIFF_BYTES {
                break 'hunks;
            }
        }
    }
    if text.len() > MAX_DIFF_BYTES {
        let mut cut = MAX_DIFF_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[diff cut at 256 KB: read the version whole instead]\n");
    }
    text
}

/// `since` as ms since the epoch: RFC 3339, or a day (its start, UTC).
fn parse_since(raw: &str) -> Result<i64, OpsError> {
    if let Ok(at) = raw.parse::<jiff::Timestamp>() {
        return Ok(at.as_millisecond());
    }
    raw.parse::<jiff::civil::Date>()
        .ok()
        .and_then(|day| {
            jiff::tz::TimeZone::UTC
                .to_timestamp(day.to_datetime(jiff::civil::Time::midnight()))
                .ok()
        })
        .map(|at| at.as_millisecond())
        .ok_or_else(|| {
            OpsError::invalid_argument(format!(
                "since {raw:?} is not a time: give RFC 3339 (2026-12-06T10:00:00Z) or a day (2026-12-06, UTC)"
            ))
        })
}
