//! Reading the history back: a file's versions across its moves, one version, one change, the
//! list of changes, and stored contents.

use rusqlite::{OptionalExtension, params};

use super::{Change, History, HistoryError, Kind, Version};

/// Which changes to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct ChangeQuery {
    pub identity: Option<String>,
    /// Only changes at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only changes touching a path starting with this.
    pub path_prefix: Option<String>,
    /// Only changes older than this one (the cursor: a change id). An id no longer held (pruned,
    /// with everything older) lists nothing.
    pub before_change: Option<String>,
    pub limit: usize,
}

/// A change as listed, with the paths it touched (old paths of moves included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSummary {
    pub change: Change,
    pub paths: Vec<String>,
}

/// How many changes one listing reads before giving up on finding `limit` visible ones.
const MAX_SCANNED: usize = 10_000;

impl History {
    /// Finished changes, newest first, with the paths `visible` keeps (it is given each path and
    /// where its content really was, when that differed); a change with no visible path is left
    /// out, as if it had never been. Returns the page and, when more may follow, the change id
    /// to page on: the last change of a full page, so a cursor is a change the caller saw (a
    /// global counter would count the changes it may not see).
    pub fn changes(
        &self,
        query: &ChangeQuery,
        visible: &dyn Fn(&str, Option<&str>) -> bool,
    ) -> Result<(Vec<ChangeSummary>, Option<String>), HistoryError> {
        let connection = self.lock()?;
        let mut before = match &query.before_change {
            None => i64::MAX,
            Some(id) => {
                let seq: Option<i64> = connection
                    .query_row("SELECT seq FROM changes WHERE id = ?1", [id], |row| {
                        row.get(0)
                    })
                    .optional()?;
                match seq {
                    Some(seq) => seq,
                    None => return Ok((Vec::new(), None)),
                }
            }
        };
        let mut statement = connection.prepare_cached(
            "SELECT seq, id, time_ms, identity, tool, kind, undoes FROM changes
             WHERE state = 'done' AND seq < ?1 AND time_ms >= ?2 AND (?3 IS NULL OR identity = ?3)
             ORDER BY seq DESC LIMIT ?4",
        )?;
        let mut paths_of = connection.prepare_cached(
            "SELECT path, real_path, previous_path, real_previous_path FROM versions
             WHERE change_seq = ?1 ORDER BY id",
        )?;
        let mut found = Vec::new();
        let mut scanned = 0;
        let mut last_id = String::new();
        while found.len() < query.limit && scanned < MAX_SCANNED {
            let batch: Vec<(i64, Change)> = statement
                .query_map(
                    params![
                        before,
                        query.since_ms.unwrap_or(i64::MIN),
                        query.identity,
                        256
                    ],
                    change_row,
                )?
                .collect::<Result<_, _>>()?;
            let Some((last, _)) = batch.last() else {
                return Ok((found, None));
            };
            before = *last;
            scanned += batch.len();
            for (seq, change) in batch {
                last_id.clone_from(&change.id);
                let mut paths: Vec<String> = Vec::new();
                let rows = paths_of.query_map([seq], |row| {
                    Ok((
                        (row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?),
                        row.get::<_, Option<String>>(2)?
                            .map(|previous| Ok::<_, rusqlite::Error>((previous, row.get(3)?)))
                            .transpose()?,
                    ))
                })?;
                for row in rows {
                    let (named, previous) = row?;
                    for (path, real) in std::iter::once(named).chain(previous) {
                        if visible(&path, real.as_deref()) && !paths.contains(&path) {
                            paths.push(path);
                        }
                    }
                }
                let prefixed = query
                    .path_prefix
                    .as_deref()
                    .is_none_or(|prefix| paths.iter().any(|path| path.starts_with(prefix)));
                if !paths.is_empty() && prefixed {
                    found.push(ChangeSummary { change, paths });
                    if found.len() == query.limit {
                        return Ok((found, Some(last_id)));
                    }
                }
            }
        }
        // A page cut by the scan bound goes on from the last change read, which the caller may not
        // see: the one place a cursor names a change the page did not show.
        let next = (scanned >= MAX_SCANNED).then_some(last_id);
        Ok((found, next))
    }

    /// What the history last knew `path` to hold, pending changes included: `None` when it never
    /// saw the path, `Some(None)` when its last version left no file there (a delete, or a move
    /// away), else the revision.
    pub fn latest(&self, path: &str) -> Result<Option<Option<String>>, HistoryError> {
        let connection = self.lock()?;
        let mut statement = connection.prepare_cached(
            "SELECT id, revision_after FROM versions WHERE path = ?1
             UNION ALL SELECT id, NULL FROM versions WHERE previous_path = ?1 AND path != ?1
             ORDER BY id DESC LIMIT 1",
        )?;
        Ok(statement
            .query_row([path], |row| row.get::<_, Option<String>>(1))
            .optional()?)
    }

    /// The changes a killed process left pending, oldest first, each with its versions.
    pub fn pending(&self) -> Result<Vec<Vec<Version>>, HistoryError> {
        let connection = self.lock()?;
        let columns = VERSION_COLUMNS.replace("c.state = 'done'", "c.state = 'pending'");
        let mut statement = connection.prepare(&format!("{columns} ORDER BY c.seq, v.id"))?;
        let versions: Vec<Version> = statement
            .query_map([], version_row)?
            .collect::<Result<_, _>>()?;
        let mut changes: Vec<Vec<Version>> = Vec::new();
        for version in versions {
            match changes.last_mut() {
                Some(last) if last[0].change.id == version.change.id => last.push(version),
                _ => changes.push(vec![version]),
            }
        }
        Ok(changes)
    }

    /// The latest finished undo of `change`, if any.
    pub fn undone_by(&self, change: &str) -> Result<Option<String>, HistoryError> {
        Ok(self
            .lock()?
            .query_row(
                "SELECT id FROM changes WHERE undoes = ?1 AND state = 'done' ORDER BY seq DESC LIMIT 1",
                [change],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// The versions of `path`, newest first, following it back across moves: a moved file's
    /// history includes its versions under the old path. `before` pages (a version id).
    pub fn versions(
        &self,
        path: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<Version>, HistoryError> {
        let connection = self.lock()?;
        // (path, the versions of that path that count are older than this id)
        let mut trail: Vec<(String, i64)> = vec![(path.to_owned(), i64::MAX)];
        let mut at = 0;
        while let Some((name, until)) = trail.get(at).cloned() {
            at += 1;
            let mut statement = connection.prepare_cached(
                "SELECT previous_path, id FROM versions
                 WHERE path = ?1 AND id < ?2 AND kind = 'move' AND previous_path IS NOT NULL",
            )?;
            let moves: Vec<(String, i64)> = statement
                .query_map(params![name, until], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<Result<_, _>>()?;
            for (previous, id) in moves {
                if !trail.iter().any(|(seen, _)| *seen == previous) && trail.len() < MAX_TRAIL {
                    trail.push((previous, id));
                }
            }
        }
        let mut found = Vec::new();
        for (name, until) in &trail {
            let until = before.map_or(*until, |before| before.min(*until));
            let mut statement = connection.prepare_cached(&format!(
                "{VERSION_COLUMNS} WHERE v.path = ?1 AND v.id < ?2 ORDER BY v.id DESC LIMIT ?3"
            ))?;
            let rows = statement.query_map(params![name, until, limit as i64], version_row)?;
            for row in rows {
                found.push(row?);
            }
        }
        found.sort_by_key(|version: &Version| std::cmp::Reverse(version.version_id));
        found.truncate(limit);
        Ok(found)
    }

    /// One version by its id (`None` when pruned or never recorded).
    pub fn version(&self, version_id: i64) -> Result<Option<Version>, HistoryError> {
        let connection = self.lock()?;
        let mut statement =
            connection.prepare_cached(&format!("{VERSION_COLUMNS} WHERE v.id = ?1"))?;
        Ok(statement.query_row([version_id], version_row).optional()?)
    }

    /// The content stored for `revision` (`None` when no version keeps it any more).
    pub fn content(&self, revision: &str) -> Result<Option<Vec<u8>>, HistoryError> {
        let data: Option<Vec<u8>> = self
            .lock()?
            .query_row(
                "SELECT data FROM contents WHERE revision = ?1",
                [revision],
                |row| row.get(0),
            )
            .optional()?;
        data.map(|data| zstd::decode_all(&data[..]).map_err(HistoryError::Content))
            .transpose()
    }

    /// Every version of one change, in the order they were staged.
    pub fn change(&self, change: &str) -> Result<Vec<Version>, HistoryError> {
        let connection = self.lock()?;
        let mut statement = connection
            .prepare_cached(&format!("{VERSION_COLUMNS} WHERE c.id = ?1 ORDER BY v.id"))?;
        let versions: Vec<Version> = statement
            .query_map([change], version_row)?
            .collect::<Result<_, _>>()?;
        if versions.is_empty() {
            return Err(HistoryError::UnknownChange(change.to_owned()));
        }
        Ok(versions)
    }
}

/// How many earlier paths a history follows back across moves.
const MAX_TRAIL: usize = 64;

pub(super) const VERSION_COLUMNS: &str =
    "SELECT v.id, c.id, c.time_ms, c.identity, c.tool, c.kind, v.path,
    v.previous_path, v.kind, v.revision_before, v.revision_after, v.bytes_before, v.bytes_after,
    c.undoes, v.real_path, v.real_previous_path FROM versions v JOIN changes c ON c.seq = v.change_seq AND c.state = 'done'";

pub(super) fn version_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Version> {
    let kind = |at: usize| -> rusqlite::Result<Kind> {
        let text: String = row.get(at)?;
        Kind::parse(&text).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                at,
                rusqlite::types::Type::Text,
                format!("unknown kind {text:?}").into(),
            )
        })
    };
    let size = |at: usize| -> rusqlite::Result<Option<u64>> {
        Ok(row
            .get::<_, Option<i64>>(at)?
            .map(|bytes| u64::try_from(bytes).unwrap_or(0)))
    };
    Ok(Version {
        version_id: row.get(0)?,
        change: Change {
            id: row.get(1)?,
            time_ms: row.get(2)?,
            identity: row.get(3)?,
            tool: row.get(4)?,
            kind: kind(5)?,
            undoes: row.get(13)?,
        },
        path: row.get(6)?,
        previous_path: row.get(7)?,
        kind: kind(8)?,
        revision_before: row.get(9)?,
        revision_after: row.get(10)?,
        bytes_before: size(11)?,
        bytes_after: size(12)?,
        real_path: row.get(14)?,
        real_previous_path: row.get(15)?,
    })
}

fn change_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, Change)> {
    let text: String = row.get(5)?;
    let kind = Kind::parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            5,
            rusqlite::types::Type::Text,
            format!("unknown kind {text:?}").into(),
        )
    })?;
    Ok((
        row.get(0)?,
        Change {
            id: row.get(1)?,
            time_ms: row.get(2)?,
            identity: row.get(3)?,
            tool: row.get(4)?,
            kind,
            undoes: row.get(6)?,
        },
    ))
}
