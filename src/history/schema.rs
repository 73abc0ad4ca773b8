//! The history database's tables. History is not derived from the vault: unlike `index.db`, this
//! file is never rebuilt or dropped when it looks stale, only migrated forward.

use rusqlite::Connection;

/// Bumped with every change to the tables below; a newer file than this build knows is refused.
pub(super) const VERSION: i64 = 3;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS contents(
    revision TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL,
    stored INTEGER NOT NULL,
    data BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS changes(
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    time_ms INTEGER NOT NULL,
    identity TEXT NOT NULL,
    tool TEXT NOT NULL,
    kind TEXT NOT NULL,
    undoes TEXT,
    state TEXT NOT NULL CHECK (state IN ('pending', 'done'))
);
CREATE TABLE IF NOT EXISTS versions(
    id INTEGER PRIMARY KEY,
    change_seq INTEGER NOT NULL REFERENCES changes(seq),
    path TEXT NOT NULL,
    previous_path TEXT,
    kind TEXT NOT NULL,
    revision_before TEXT,
    revision_after TEXT,
    bytes_before INTEGER,
    bytes_after INTEGER,
    real_path TEXT,
    real_previous_path TEXT
);
CREATE INDEX IF NOT EXISTS versions_path ON versions(path, id);
CREATE INDEX IF NOT EXISTS versions_change ON versions(change_seq);
CREATE INDEX IF NOT EXISTS versions_before ON versions(revision_before);
CREATE INDEX IF NOT EXISTS versions_after ON versions(revision_after);
";

/// Opens or creates the tables; `Err(found)` names a version newer than this build.
pub(super) fn prepare(connection: &Connection) -> Result<(), rusqlite::Error> {
    // Every staged version must survive a power cut once `stage` returns: FULL syncs each commit.
    connection.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
    )?;
    let found = found_version(connection)?;
    // Pruned pages go back to the file system (issue 63, F12); a file made before this needs
    // one VACUUM to switch, and a new one is empty, so that costs nothing there.
    let vacuum: i64 = connection.pragma_query_value(None, "auto_vacuum", |row| row.get(0))?;
    if vacuum != 2 {
        connection.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
    }
    connection.execute_batch(TABLES)?;
    if found == 1 {
        // Version 2 records which change an undo took back.
        connection.execute_batch("ALTER TABLE changes ADD COLUMN undoes TEXT")?;
    }
    if (1..3).contains(&found) {
        // Version 3 records where a version's content really was when a symbolic link on the
        // way led elsewhere (issue 63, F6); older versions were all judged by their path alone.
        // A file whose versions table was only just made above has the columns already.
        for column in ["real_path", "real_previous_path"] {
            if !has_column(connection, "versions", column)? {
                connection
                    .execute_batch(&format!("ALTER TABLE versions ADD COLUMN {column} TEXT"))?;
            }
        }
    }
    connection.execute_batch(
        "CREATE INDEX IF NOT EXISTS changes_undoes ON changes(undoes);
         CREATE INDEX IF NOT EXISTS versions_previous ON versions(previous_path, id);",
    )?;
    connection.pragma_update(None, "user_version", VERSION)?;
    Ok(())
}

fn has_column(connection: &Connection, table: &str, column: &str) -> Result<bool, rusqlite::Error> {
    let mut statement = connection.prepare(&format!("PRAGMA table_info({table})"))?;
    let names = statement.query_map([], |row| row.get::<_, String>(1))?;
    for name in names {
        if name? == column {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The version the file says it has (0 for a new file).
pub(super) fn found_version(connection: &Connection) -> Result<i64, rusqlite::Error> {
    connection.pragma_query_value(None, "user_version", |row| row.get(0))
}
