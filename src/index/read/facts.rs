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

/// Every note and other file, notes first, each group in path order.
pub fn file_records(connection: &Connection) -> rusqlite::Result<Vec<FileRecord>> {
    let mut records = Vec::new();
    let mut notes = connection.prepare_cached(
        "SELECT path, size, mtime, created, tags, properties FROM notes ORDER BY path",
    )?;
    let rows = notes.query_map([], |row| {
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
    let mut files =
        connection.prepare_cached("SELECT path, size, mtime FROM files ORDER BY path")?;
    let rows = files.query_map([], |row| {
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
