//! Counts for a caller the ACL judges folder by folder (`acl::Policy::folder_reads`): the count
//! tables summed over the folders whose every note it may see, plus the notes it may see
//! elsewhere, minus the notes it may not see in those folders. The same numbers and spellings as
//! counting its notes one by one (`counts.rs`), at the cost of the count tables.

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use super::conditions::paths_json;
use super::counts::counts;
use super::{Count, Page};
use crate::index::schema::subtree_range;

/// The notes a restricted caller may see, by folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// Folders whose every note the caller may see, each with its trailing `/` (`""`: the root).
    pub folders: Vec<String>,
    /// Notes the caller may see outside `folders`.
    pub plus: Vec<String>,
    /// Notes in `folders` the caller may not see.
    pub minus: Vec<String>,
}

/// How the ACL judges a restricted caller: a folder (without its trailing `/`, `""` the root)
/// whose every note it may or may not see, or `None` to judge its notes one by one; and one note.
pub struct Judge<'a> {
    pub folder: &'a dyn Fn(&str) -> Option<bool>,
    pub note: &'a dyn Fn(&str) -> bool,
}

/// What a caller judged by `judge` may see below `folder` (`None`: the whole vault).
pub fn judge(
    connection: &Connection,
    folder: Option<&str>,
    judge: &Judge<'_>,
) -> rusqlite::Result<Judged> {
    let mut judged = Judged::default();
    let mut decided = std::collections::HashMap::new();
    for counted in counted_folders(connection, folder)? {
        let name = counted.strip_suffix('/').unwrap_or(&counted);
        match (judge.folder)(name) {
            Some(shown) => {
                if shown {
                    judged.folders.push(counted.clone());
                }
                decided.insert(counted, shown);
            }
            None => judged.plus.extend(
                notes_directly_in(connection, name)?
                    .into_iter()
                    .filter(|path| (judge.note)(path)),
            ),
        }
    }
    for path in alone_notes(connection, folder)? {
        let folder = path.rfind('/').map_or("", |slash| &path[..=slash]);
        let Some(&shown) = decided.get(folder) else {
            // Judged with its folder's notes above, or a marked path left without a note.
            continue;
        };
        match (shown, (judge.note)(&path)) {
            (true, false) => judged.minus.push(path),
            (false, true) => judged.plus.push(path),
            _ => {}
        }
    }
    Ok(judged)
}

/// The notes directly inside `folder` (`""`: the root).
fn notes_directly_in(connection: &Connection, folder: &str) -> rusqlite::Result<Vec<String>> {
    let (low, high) = bounds(Some(folder));
    let skip = if folder.is_empty() {
        1
    } else {
        folder.chars().count() as i64 + 2
    };
    let mut statement = connection.prepare_cached(
        "SELECT path FROM notes WHERE path >= ?1 AND path < ?2 AND instr(substr(path, ?3), '/') = 0",
    )?;
    let rows = statement.query_map(rusqlite::params![low, high, skip], |row| row.get(0))?;
    rows.collect()
}

/// The range of paths (and of the count tables' folders) below `folder` (`None`: all). SQLite
/// orders every text before every blob, so a blob bounds the whole vault.
fn bounds(folder: Option<&str>) -> (SqlValue, SqlValue) {
    match folder.filter(|folder| !folder.is_empty()) {
        Some(folder) => {
            let (low, high) = subtree_range(folder);
            (SqlValue::Text(low), SqlValue::Text(high))
        }
        None => (SqlValue::Text(String::new()), SqlValue::Blob(vec![0xFF])),
    }
}

/// The scope as the first three parameters (`?1` folders, `?2` and `?3` the notes' ids).
const SCOPE: &str = "WITH shown(folder) AS (SELECT value FROM json_each(?1)),
     plus(id) AS (SELECT id FROM notes WHERE path IN (SELECT value FROM json_each(?2))),
     minus(id) AS (SELECT id FROM notes WHERE path IN (SELECT value FROM json_each(?3))) ";

fn scope_params(judged: &Judged) -> Vec<SqlValue> {
    [&judged.folders, &judged.plus, &judged.minus]
        .into_iter()
        .map(|list| SqlValue::Text(paths_json(list)))
        .collect()
}

/// The folders holding notes below `folder` (`None`: all), with their trailing `/`: every
/// folder a caller's counts could sum.
fn counted_folders(connection: &Connection, folder: Option<&str>) -> rusqlite::Result<Vec<String>> {
    let (low, high) = bounds(folder);
    let mut statement = connection
        .prepare_cached("SELECT folder FROM folder_notes WHERE folder >= ?1 AND folder < ?2")?;
    let rows = statement.query_map(rusqlite::params![low, high], |row| row.get(0))?;
    rows.collect()
}

/// The notes below `folder` (`None`: all) the ACL must judge one by one.
fn alone_notes(connection: &Connection, folder: Option<&str>) -> rusqlite::Result<Vec<String>> {
    let (low, high) = bounds(folder);
    let mut statement = connection.prepare_cached(
        // A path left without a note adds nothing: the counts look its id up in `notes`.
        "SELECT path FROM alone_notes WHERE path >= ?1 AND path < ?2",
    )?;
    let rows = statement.query_map(rusqlite::params![low, high], |row| row.get(0))?;
    rows.collect()
}

/// The rows counted for the notes `judged` shows: `whole`, a count table's rows for the folders
/// in `shown`, then `per_note` once for the notes in `plus` and once, negated, for those in
/// `minus`. `per_note` names the set of notes `{set}` and writes `{sign}` before its count.
fn signed(whole: &str, per_note: &str) -> String {
    let note = |set: &str, sign: &str| per_note.replace("{set}", set).replace("{sign}", sign);
    format!(
        "{whole}\n UNION ALL {}\n UNION ALL {}",
        note("plus", ""),
        note("minus", "-")
    )
}

/// The counted page: each lower-case name of `counted(name, n)` with its total, highest first,
/// and the spelling `spellings(spelling, n)` counts most for it (`c.name`, the name in hand).
fn page_sql(counted: &str, spellings: &str) -> String {
    format!(
        "{SCOPE}, counted(name, n) AS ({counted})
         SELECT (SELECT spelling FROM ({spellings})
                 GROUP BY spelling ORDER BY sum(n) DESC, spelling LIMIT 1), c.total
         FROM (SELECT name, sum(n) AS total FROM counted GROUP BY name HAVING total > 0
               ORDER BY total DESC, name LIMIT ? OFFSET ?) c"
    )
}

/// `counts::tag_counts` over the notes `judged` shows.
pub fn tag_counts(
    connection: &Connection,
    judged: &Judged,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    let sql = page_sql(
        &signed(
            "SELECT lower, notes FROM tag_counts WHERE folder IN (SELECT folder FROM shown)",
            "SELECT lower, {sign}1 FROM tags INDEXED BY tags_note WHERE note_id IN (SELECT id FROM {set})",
        ),
        &signed(
            "SELECT tag AS spelling, notes AS n FROM tag_counts WHERE lower = c.name AND folder IN (SELECT folder FROM shown)",
            "SELECT tag, {sign}1 FROM tags WHERE lower = c.name AND note_id IN (SELECT id FROM {set})",
        ),
    );
    counts(connection, &sql, scope_params(judged), offset, limit)
}

/// `counts::property_key_counts` over the notes `judged` shows.
pub fn property_key_counts(
    connection: &Connection,
    judged: &Judged,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    let sql = page_sql(
        &signed(
            "SELECT key_lower, notes FROM key_notes WHERE folder IN (SELECT folder FROM shown)",
            "SELECT key_lower, {sign}count(DISTINCT note_id) FROM properties INDEXED BY properties_note
               WHERE note_id IN (SELECT id FROM {set}) GROUP BY key_lower",
        ),
        &signed(
            "SELECT key AS spelling, rows AS n FROM key_spellings WHERE key_lower = c.name AND folder IN (SELECT folder FROM shown)",
            "SELECT key, {sign}1 FROM properties INDEXED BY properties_note
               WHERE note_id IN (SELECT id FROM {set}) AND key_lower = c.name",
        ),
    );
    counts(connection, &sql, scope_params(judged), offset, limit)
}

/// `counts::property_value_counts` over the notes `judged` shows.
pub fn property_value_counts(
    connection: &Connection,
    key: &str,
    judged: &Judged,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    let sql = page_sql(
        &signed(
            "SELECT value_lower, notes FROM value_notes WHERE key_lower = ?4 AND folder IN (SELECT folder FROM shown)",
            "SELECT value_lower, {sign}count(DISTINCT note_id) FROM properties INDEXED BY properties_note
               WHERE note_id IN (SELECT id FROM {set}) AND key_lower = ?4 AND value IS NOT NULL GROUP BY value_lower",
        ),
        &signed(
            "SELECT value AS spelling, rows AS n FROM value_spellings
               WHERE key_lower = ?4 AND value_lower = c.name AND folder IN (SELECT folder FROM shown)",
            "SELECT value, {sign}1 FROM properties INDEXED BY properties_note
               WHERE note_id IN (SELECT id FROM {set}) AND key_lower = ?4 AND value_lower = c.name",
        ),
    );
    let mut params = scope_params(judged);
    params.push(SqlValue::Text(key.to_lowercase()));
    counts(connection, &sql, params, offset, limit)
}

/// Notes per folder (with its trailing `/`, `""` the root) among those `judged` shows.
pub fn folder_counts(
    connection: &Connection,
    judged: &Judged,
) -> rusqlite::Result<Vec<(String, u64)>> {
    let counted = signed(
        "SELECT folder, notes AS n FROM folder_notes WHERE folder IN (SELECT folder FROM shown)",
        "SELECT rtrim(path, replace(path, '/', '')), {sign}1 FROM notes WHERE id IN (SELECT id FROM {set})",
    );
    let sql = format!(
        "{SCOPE}SELECT folder, sum(n) AS total FROM ({counted})
         GROUP BY folder HAVING total > 0 ORDER BY folder"
    );
    let mut statement = connection.prepare_cached(&sql)?;
    let rows = statement.query_map(rusqlite::params_from_iter(scope_params(judged)), |row| {
        Ok((row.get(0)?, row.get::<_, i64>(1)?.max(0) as u64))
    })?;
    rows.collect()
}
