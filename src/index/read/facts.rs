//! Every file the index holds with the facts Obsidian Bases reads of it (size, times, tags,
//! properties), notes and other files alike, for `ops::bases` to turn into rows. Links come from
//! the link table (`graph.rs`); nothing here filters by caller, which `ops` does per path.

use rusqlite::Connection;
use serde_json::{Map, Value};

/// One file as Bases sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRecord {
    pub path: String,
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// A note's creation time in Unix seconds (the `created` property, else the file's birth
    /// time); `None` for other files, whose birth time the index does not keep.
    pub created: Option<i64>,
    /// Whether the file is a markdown note (other files have no tags or properties).
    pub note: bool,
    /// Tags without `#`.
    pub tags: Vec<String>,
    /// The properties as the index keeps them, JSON text: parsed only for the files a query
    /// needs (`properties`), since parsing every note's is most of reading them all.
    pub properties_json: String,
}

impl FileRecord {
    /// The properties; an unreadable text (the index writes only valid JSON) reads as none.
    pub fn properties(&self) -> Map<String, Value> {
        if self.properties_json.is_empty() {
            return Map::new();
        }
        serde_json::from_str(&self.properties_json).unwrap_or_default()
    }
}

/// What a query needs of a file, said in terms the index can check: every file it may want
/// passes, others may too (the caller judges each file exactly afterwards).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordFilter {
    /// Folders, without slashes at either end, each file must lie in or below.
    pub folders: Vec<String>,
    /// For each set, a note must carry one of its tags (lowercased, without `#`) or a tag nested
    /// below one.
    pub tag_sets: Vec<Vec<String>>,
    /// Property keys, lowercased, a note must have.
    pub property_keys: Vec<String>,
}

impl RecordFilter {
    /// Only notes have tags and properties, so asking for either leaves attachments out.
    fn notes_only(&self) -> bool {
        !self.tag_sets.is_empty() || !self.property_keys.is_empty()
    }

    /// The WHERE clause over `notes` (with tags and properties) or `files`, and its parameters.
    fn clause(&self, notes: bool) -> (String, Vec<String>) {
        let mut clause = String::from("1");
        let mut params = Vec::new();
        for folder in &self.folders {
            clause.push_str(" AND path LIKE ? ESCAPE '\\'");
            params.push(format!("{}/%", like_escaped(folder)));
        }
        if notes {
            for set in &self.tag_sets {
                let alternatives = vec!["t.lower = ? OR t.lower LIKE ? ESCAPE '\\'"; set.len()];
                clause.push_str(&format!(
                    " AND EXISTS (SELECT 1 FROM tags t WHERE t.note_id = notes.id AND ({}))",
                    alternatives.join(" OR ")
                ));
                for tag in set {
                    params.push(tag.clone());
                    params.push(format!("{}/%", like_escaped(tag)));
                }
            }
            for key in &self.property_keys {
                clause.push_str(
                    " AND EXISTS (SELECT 1 FROM properties p WHERE p.note_id = notes.id AND p.key_lower = ?)",
                );
                params.push(key.clone());
            }
        }
        (clause, params)
    }
}

/// `text` with LIKE's wildcards and the escape character taken literally.
fn like_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Every note and other file, notes first, each group in path order.
pub fn file_records(connection: &Connection) -> rusqlite::Result<Vec<FileRecord>> {
    file_records_where(connection, &RecordFilter::default())
}

/// The notes and other files `filter` lets through, notes first, each group in path order.
pub fn file_records_where(
    connection: &Connection,
    filter: &RecordFilter,
) -> rusqlite::Result<Vec<FileRecord>> {
    let mut records = Vec::new();
    let (clause, params) = filter.clause(true);
    let mut notes = connection.prepare_cached(&format!(
        "SELECT path, size, mtime, created, tags, properties FROM notes WHERE {clause} ORDER BY path"
    ))?;
    let rows = notes.query_map(rusqlite::params_from_iter(&params), |row| {
        let tags: String = row.get(4)?;
        Ok(FileRecord {
            path: row.get(0)?,
            size: row.get::<_, i64>(1)?.max(0) as u64,
            mtime_ns: row.get(2)?,
            created: Some(row.get(3)?),
            note: true,
            // Written by the index itself from valid JSON; a damaged row reads as empty.
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            properties_json: row.get(5)?,
        })
    })?;
    for row in rows {
        records.push(row?);
    }
    if filter.notes_only() {
        return Ok(records);
    }
    let (clause, params) = filter.clause(false);
    let mut files = connection.prepare_cached(&format!(
        "SELECT path, size, mtime FROM files WHERE {clause} ORDER BY path"
    ))?;
    let rows = files.query_map(rusqlite::params_from_iter(&params), |row| {
        Ok(FileRecord {
            path: row.get(0)?,
            size: row.get::<_, i64>(1)?.max(0) as u64,
            mtime_ns: row.get(2)?,
            created: None,
            note: false,
            tags: Vec::new(),
            properties_json: String::new(),
        })
    })?;
    for row in rows {
        records.push(row?);
    }
    Ok(records)
}
