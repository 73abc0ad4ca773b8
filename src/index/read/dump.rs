//! The whole index as sorted lines, for comparing two indexes of the same vault (the
//! consistency tests): any two builds of one vault must dump the same lines.

use rusqlite::Connection;

use crate::index::parts::{NOTE_BITS, NOTE_MASK};

/// Every fact the index holds, one sorted line each, with row ids replaced by paths: two indexes
/// of the same vault dump the same lines however they were built.
pub fn dump(connection: &Connection) -> rusqlite::Result<Vec<String>> {
    connection.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.notes_terms USING fts5vocab(main, notes_fts, instance)",
    )?;
    let mut lines = Vec::new();
    let queries = [
        "SELECT 'note ' || path || ' size=' || size || ' mtime=' || mtime || ' hash=' || hash
            || ' type=' || ifnull(type, '-') || ' created=' || created || ' tags=' || tags
            || ' properties=' || properties FROM notes",
        "SELECT 'tag ' || n.path || ' ' || t.lower || ' ' || t.tag FROM tags t JOIN notes n ON n.id = t.note_id",
        "SELECT 'property ' || n.path || ' ' || p.key || ' ' || p.key_lower || ' = ' || ifnull(p.value, 'NULL')
            || ' / ' || ifnull(p.value_lower, 'NULL') || ' / ' || ifnull(p.number, 'NULL')
            FROM properties p JOIN notes n ON n.id = p.note_id",
        "SELECT 'part ' || n.path || ' ' || p.part FROM note_parts p JOIN notes n ON n.id = p.note_id",
        "SELECT 'task ' || n.path || ':' || t.line || ' depth=' || t.depth || ' parent=' || ifnull(t.parent_line, '-')
            || ' heading=' || ifnull(t.heading_line, '-') || ':' || ifnull(t.heading, '-')
            || ' lane=' || ifnull(t.lane, '-') || '/' || t.lane_complete || ' ' || t.text
            FROM tasks t JOIN notes n ON n.id = t.note_id",
        "SELECT 'task-reading ' || n.path || ':' || t.line || ' symbol=' || quote(t.symbol)
            || ' dates=' || quote(t.due) || ',' || quote(t.scheduled) || ',' || quote(t.start) || ','
            || quote(t.created) || ',' || quote(t.done) || ',' || quote(t.cancelled)
            || ' priority=' || quote(t.priority) || ' recurring=' || quote(t.recurring)
            || ' heading=' || quote(t.heading_lower) || ' tags=' || quote(replace(t.tags, char(10), ' '))
            || ' body=' || quote(t.body)
            FROM tasks t JOIN notes n ON n.id = t.note_id",
        "SELECT 'orphan-task ' || t.note_id || ':' || t.line FROM tasks t
            WHERE t.note_id NOT IN (SELECT id FROM notes)",
        "SELECT 'file ' || path || ' size=' || size || ' mtime=' || mtime FROM files",
        "SELECT 'file-text ' || f.path || ' ' || length(t.body) || ' ' || substr(t.body, 1, 40)
            FROM files_fts t JOIN files f ON f.id = t.rowid",
        "SELECT 'memory ' || n.path || ':' || m.line || ' ' || m.section || ' ' || m.date || ' ' || m.text
            || ' ' || m.hash FROM memory_entries m JOIN notes n ON n.id = m.note_id",
        "SELECT 'orphan-memory ' || m.note_id || ':' || m.line FROM memory_entries m
            WHERE m.note_id NOT IN (SELECT id FROM notes)",
        "SELECT 'orphan-file-text ' || t.rowid FROM files_fts t
            WHERE t.rowid NOT IN (SELECT id FROM files)",
        "SELECT 'link ' || source || ' #' || seq || ' ' || form || ' embed=' || embed || ' ' || link
            || ' -> ' || target_name || ' | ' || display || ' | ' || original || ' @' || line || ':' || col
            || ' [' || start || ',' || end || ')' FROM links",
        "SELECT 'chunk ' || n.path || ' ' || c.seq || ' ' || c.hash FROM chunks c JOIN notes n ON n.id = c.note_id",
        "SELECT 'orphan-chunk ' || c.note_id || ' ' || c.seq FROM chunks c
            WHERE c.note_id NOT IN (SELECT id FROM notes)",
        "SELECT 'file-chunk ' || f.path || ' ' || c.seq || ' ' || c.hash FROM file_chunks c
            JOIN files f ON f.id = c.file_id",
        "SELECT 'orphan-file-chunk ' || c.file_id || ' ' || c.seq FROM file_chunks c
            WHERE c.file_id NOT IN (SELECT id FROM files)",
    ];
    for sql in queries
        .iter()
        .copied()
        .chain(term_queries().iter().map(String::as_str))
        .chain(count_queries().iter().map(String::as_str))
    {
        let mut statement = connection.prepare(sql)?;
        let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
        for row in rows {
            lines.push(row?);
        }
    }
    lines.sort();
    Ok(lines)
}

/// Every full-text term with its note, and terms of no note. A note stored as parts has a row
/// per part, its rowid's high bits (`index::parts`).
fn term_queries() -> [String; 2] {
    [
        format!(
            "SELECT 'term ' || n.path || ' ' || (v.doc >> {NOTE_BITS}) || ' ' || v.col || ' ' || v.offset || ' ' || v.term
             FROM temp.notes_terms v JOIN notes n ON n.id = (v.doc & {NOTE_MASK})"
        ),
        format!(
            "SELECT 'orphan-term ' || v.doc || ' ' || v.term FROM temp.notes_terms v
             WHERE (v.doc & {NOTE_MASK}) NOT IN (SELECT id FROM notes)"
        ),
    ]
}

/// The kept counts, and any difference between them and counting the rows now (`drift` lines,
/// which a correct index never has).
fn count_queries() -> Vec<String> {
    let kept = [
        (
            "folder_notes",
            "folder || '|' || notes",
            "SELECT f || '|' || count(*) FROM (SELECT rtrim(path, replace(path, '/', '')) AS f FROM notes) GROUP BY f",
        ),
        (
            "tag_counts",
            "folder || '|' || lower || '|' || tag || '|' || notes",
            "SELECT f || '|' || lower || '|' || tag || '|' || count(*) FROM (SELECT rtrim(n.path, replace(n.path, '/', '')) AS f,
             t.lower AS lower, t.tag AS tag FROM tags t JOIN notes n ON n.id = t.note_id) GROUP BY f, lower, tag",
        ),
        (
            "key_notes",
            "folder || '|' || key_lower || '|' || notes",
            "SELECT f || '|' || k || '|' || count(DISTINCT id) FROM (SELECT rtrim(n.path, replace(n.path, '/', '')) AS f,
             p.key_lower AS k, n.id AS id FROM properties p JOIN notes n ON n.id = p.note_id) GROUP BY f, k",
        ),
        (
            "key_spellings",
            "folder || '|' || key_lower || '|' || key || '|' || rows",
            "SELECT f || '|' || k || '|' || key || '|' || count(*) FROM (SELECT rtrim(n.path, replace(n.path, '/', '')) AS f,
             p.key_lower AS k, p.key AS key FROM properties p JOIN notes n ON n.id = p.note_id) GROUP BY f, k, key",
        ),
        (
            "value_notes",
            "folder || '|' || key_lower || '|' || value_lower || '|' || notes",
            "SELECT f || '|' || k || '|' || v || '|' || count(DISTINCT id) FROM (SELECT rtrim(n.path, replace(n.path, '/', '')) AS f,
             p.key_lower AS k, p.value_lower AS v, n.id AS id FROM properties p JOIN notes n ON n.id = p.note_id
             WHERE p.value IS NOT NULL) GROUP BY f, k, v",
        ),
        (
            "value_spellings",
            "folder || '|' || key_lower || '|' || value_lower || '|' || value || '|' || rows",
            "SELECT f || '|' || k || '|' || v || '|' || value || '|' || count(*) FROM (SELECT rtrim(n.path, replace(n.path, '/', '')) AS f,
             p.key_lower AS k, p.value_lower AS v, p.value AS value FROM properties p JOIN notes n ON n.id = p.note_id
             WHERE p.value IS NOT NULL) GROUP BY f, k, v, value",
        ),
    ];
    let mut queries = Vec::new();
    for (table, row, recount) in kept {
        queries.push(format!("SELECT '{table} ' || {row} FROM {table}"));
        queries.push(format!(
            "SELECT '{table} drift ' || x FROM (SELECT {row} AS x FROM {table} EXCEPT {recount}
             UNION ALL SELECT * FROM ({recount} EXCEPT SELECT {row} FROM {table}))"
        ));
    }
    queries
}
