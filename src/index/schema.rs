//! The index database's schema and how a connection to it is opened.
//!
//! The schema carries a version in `PRAGMA user_version`. An index with another version, one built
//! for another vault, or one SQLite cannot open is deleted and rebuilt from the vault: the index is
//! derived data and is never migrated.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

/// Bump whenever the schema or what is stored in it changes; older indexes are then rebuilt.
pub const SCHEMA_VERSION: i64 = 12;

const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE notes(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime INTEGER NOT NULL,
    hash TEXT NOT NULL,
    properties TEXT NOT NULL,
    tags TEXT NOT NULL,
    type TEXT,
    created INTEGER NOT NULL
);
CREATE INDEX notes_mtime ON notes(mtime);
CREATE INDEX notes_created ON notes(created);
CREATE TABLE tags(
    lower TEXT NOT NULL,
    note_id INTEGER NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY(lower, note_id)
) WITHOUT ROWID;
CREATE INDEX tags_note ON tags(note_id);
CREATE TABLE properties(
    note_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    key_lower TEXT NOT NULL,
    value TEXT,
    value_lower TEXT,
    number REAL
);
CREATE INDEX properties_key ON properties(key_lower, value_lower);
CREATE INDEX properties_number ON properties(key_lower, number);
CREATE INDEX properties_note ON properties(note_id);
CREATE TABLE files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime INTEGER NOT NULL
);
CREATE VIRTUAL TABLE files_fts USING fts5(
    name, body,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE links(
    source TEXT NOT NULL,
    seq INTEGER NOT NULL,
    form TEXT NOT NULL,
    embed INTEGER NOT NULL,
    link TEXT NOT NULL,
    target_name TEXT NOT NULL,
    display TEXT NOT NULL,
    original TEXT NOT NULL,
    line INTEGER NOT NULL,
    col INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    PRIMARY KEY(source, seq)
) WITHOUT ROWID;
CREATE INDEX links_target ON links(target_name);
CREATE VIRTUAL TABLE notes_fts USING fts5(
    title, headings, properties, body,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE note_parts(
    note_id INTEGER NOT NULL,
    part INTEGER NOT NULL,
    PRIMARY KEY(note_id, part)
) WITHOUT ROWID;
CREATE TABLE tasks(
    note_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    text TEXT NOT NULL,
    heading TEXT,
    heading_line INTEGER,
    depth INTEGER NOT NULL,
    parent_line INTEGER,
    lane TEXT,
    lane_complete INTEGER NOT NULL,
    heading_lower TEXT,
    symbol TEXT,
    body TEXT,
    due TEXT,
    scheduled TEXT,
    start TEXT,
    created TEXT,
    done TEXT,
    cancelled TEXT,
    priority INTEGER,
    recurring INTEGER,
    tags TEXT,
    PRIMARY KEY(note_id, line)
) WITHOUT ROWID;
CREATE INDEX tasks_by_due ON tasks(
    coalesce(due, scheduled, start, 'z') || priority,
    symbol, due, scheduled, start, created, done, cancelled, priority
);
CREATE TABLE chunks(
    note_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY(note_id, seq)
) WITHOUT ROWID;
CREATE INDEX chunks_hash ON chunks(hash);
CREATE TABLE file_chunks(
    file_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY(file_id, seq)
) WITHOUT ROWID;
CREATE INDEX file_chunks_hash ON file_chunks(hash);
CREATE TABLE embeddings(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE);
CREATE TABLE memory_entries(
    id INTEGER PRIMARY KEY,
    note_id INTEGER NOT NULL,
    section TEXT NOT NULL,
    date TEXT NOT NULL,
    text TEXT NOT NULL,
    line INTEGER NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX memory_entries_note ON memory_entries(note_id);
CREATE INDEX memory_entries_hash ON memory_entries(hash);
CREATE VIRTUAL TABLE memory_fts USING fts5(
    text, section,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE alone_notes(path TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE folder_notes(folder TEXT PRIMARY KEY, notes INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE tag_counts(
    folder TEXT NOT NULL,
    lower TEXT NOT NULL,
    tag TEXT NOT NULL,
    notes INTEGER NOT NULL,
    PRIMARY KEY(folder, lower, tag)
) WITHOUT ROWID;
CREATE INDEX tag_counts_lower ON tag_counts(lower, tag);
CREATE TABLE key_notes(
    folder TEXT NOT NULL,
    key_lower TEXT NOT NULL,
    notes INTEGER NOT NULL,
    PRIMARY KEY(folder, key_lower)
) WITHOUT ROWID;
CREATE TABLE key_spellings(
    folder TEXT NOT NULL,
    key_lower TEXT NOT NULL,
    key TEXT NOT NULL,
    rows INTEGER NOT NULL,
    PRIMARY KEY(folder, key_lower, key)
) WITHOUT ROWID;
CREATE INDEX key_spellings_lower ON key_spellings(key_lower, key);
CREATE TABLE value_notes(
    folder TEXT NOT NULL,
    key_lower TEXT NOT NULL,
    value_lower TEXT NOT NULL,
    notes INTEGER NOT NULL,
    PRIMARY KEY(key_lower, folder, value_lower)
) WITHOUT ROWID;
CREATE TABLE value_spellings(
    folder TEXT NOT NULL,
    key_lower TEXT NOT NULL,
    value_lower TEXT NOT NULL,
    value TEXT NOT NULL,
    rows INTEGER NOT NULL,
    PRIMARY KEY(key_lower, value_lower, folder, value)
) WITHOUT ROWID;
";

/// The folder of the note whose `notes.path` is in scope, with its trailing slash (`""` at the
/// vault root): the key of every count table, for the triggers and the recount alike.
macro_rules! notes_folder {
    () => {
        "rtrim(path, replace(path, '/', ''))"
    };
}

/// `notes_folder!` for a trigger on a row of `tags` or `properties` whose note is
/// `{row}.note_id`.
macro_rules! folder_of {
    ($row:literal) => {
        concat!(
            "(SELECT ",
            notes_folder!(),
            " FROM notes WHERE id = ",
            $row,
            ".note_id)"
        )
    };
}

/// Keeps the count tables (`folder_notes`, `tag_counts`, `key_notes`, `key_spellings`,
/// `value_notes`, `value_spellings`) equal to counting `notes`, `tags` and `properties` per
/// folder, as rows come and go.
/// Whether a note has another row of a key is looked up by note (`INDEXED BY`): left to itself
/// SQLite walked `properties_key`, every note with that key and value, so one property written in
/// a million-note vault read hundreds of thousands of rows.
/// A note's rows are always written and removed while its `notes` row exists (`writer::rows`),
/// so its folder is there to read. Dropped during a first bulk build and made again, with the
/// counts recomputed, by `restore_secondary_indexes`.
const COUNT_TRIGGERS: &str = concat!(
    "CREATE TRIGGER notes_counted AFTER INSERT ON notes BEGIN
        INSERT INTO folder_notes(folder, notes) VALUES (rtrim(NEW.path, replace(NEW.path, '/', '')), 1)
        ON CONFLICT DO UPDATE SET notes = notes + 1;
    END;
    CREATE TRIGGER notes_uncounted AFTER DELETE ON notes BEGIN
        UPDATE folder_notes SET notes = notes - 1 WHERE folder = rtrim(OLD.path, replace(OLD.path, '/', ''));
        DELETE FROM folder_notes WHERE folder = rtrim(OLD.path, replace(OLD.path, '/', '')) AND notes <= 0;
    END;
    CREATE TRIGGER tags_counted AFTER INSERT ON tags BEGIN
        INSERT INTO tag_counts(folder, lower, tag, notes)
        SELECT ",
    folder_of!("NEW"),
    ", NEW.lower, NEW.tag, 1 WHERE true
        ON CONFLICT DO UPDATE SET notes = notes + 1;
    END;
    CREATE TRIGGER tags_uncounted AFTER DELETE ON tags BEGIN
        UPDATE tag_counts SET notes = notes - 1
        WHERE folder = ",
    folder_of!("OLD"),
    " AND lower = OLD.lower AND tag = OLD.tag;
        DELETE FROM tag_counts
        WHERE folder = ",
    folder_of!("OLD"),
    " AND lower = OLD.lower AND tag = OLD.tag AND notes <= 0;
    END;
    CREATE TRIGGER properties_counted AFTER INSERT ON properties BEGIN
        INSERT INTO key_spellings(folder, key_lower, key, rows)
        SELECT ",
    folder_of!("NEW"),
    ", NEW.key_lower, NEW.key, 1 WHERE true
        ON CONFLICT DO UPDATE SET rows = rows + 1;
        INSERT INTO key_notes(folder, key_lower, notes)
        SELECT ",
    folder_of!("NEW"),
    ", NEW.key_lower, 1
        WHERE NOT EXISTS (SELECT 1 FROM properties p INDEXED BY properties_note WHERE p.note_id = NEW.note_id
                          AND p.key_lower = NEW.key_lower AND p.rowid <> NEW.rowid)
        ON CONFLICT DO UPDATE SET notes = notes + 1;
        INSERT INTO value_spellings(folder, key_lower, value_lower, value, rows)
        SELECT ",
    folder_of!("NEW"),
    ", NEW.key_lower, NEW.value_lower, NEW.value, 1
        WHERE NEW.value IS NOT NULL
        ON CONFLICT DO UPDATE SET rows = rows + 1;
        INSERT INTO value_notes(folder, key_lower, value_lower, notes)
        SELECT ",
    folder_of!("NEW"),
    ", NEW.key_lower, NEW.value_lower, 1
        WHERE NEW.value IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM properties p INDEXED BY properties_note WHERE p.note_id = NEW.note_id
                          AND p.key_lower = NEW.key_lower AND p.value_lower = NEW.value_lower
                          AND p.rowid <> NEW.rowid)
        ON CONFLICT DO UPDATE SET notes = notes + 1;
    END;
    CREATE TRIGGER properties_uncounted AFTER DELETE ON properties BEGIN
        UPDATE key_spellings SET rows = rows - 1
        WHERE folder = ",
    folder_of!("OLD"),
    " AND key_lower = OLD.key_lower AND key = OLD.key;
        DELETE FROM key_spellings
        WHERE folder = ",
    folder_of!("OLD"),
    " AND key_lower = OLD.key_lower AND key = OLD.key AND rows <= 0;
        UPDATE key_notes SET notes = notes - 1
        WHERE folder = ",
    folder_of!("OLD"),
    " AND key_lower = OLD.key_lower
          AND NOT EXISTS (SELECT 1 FROM properties p INDEXED BY properties_note WHERE p.note_id = OLD.note_id
                          AND p.key_lower = OLD.key_lower);
        DELETE FROM key_notes
        WHERE folder = ",
    folder_of!("OLD"),
    " AND key_lower = OLD.key_lower AND notes <= 0;
        UPDATE value_spellings SET rows = rows - 1
        WHERE OLD.value IS NOT NULL AND key_lower = OLD.key_lower AND value_lower = OLD.value_lower
          AND folder = ",
    folder_of!("OLD"),
    " AND value = OLD.value;
        DELETE FROM value_spellings
        WHERE OLD.value IS NOT NULL AND key_lower = OLD.key_lower AND value_lower = OLD.value_lower
          AND folder = ",
    folder_of!("OLD"),
    " AND value = OLD.value AND rows <= 0;
        UPDATE value_notes SET notes = notes - 1
        WHERE OLD.value IS NOT NULL AND key_lower = OLD.key_lower
          AND folder = ",
    folder_of!("OLD"),
    " AND value_lower = OLD.value_lower
          AND NOT EXISTS (SELECT 1 FROM properties p INDEXED BY properties_note WHERE p.note_id = OLD.note_id
                          AND p.key_lower = OLD.key_lower AND p.value_lower = OLD.value_lower);
        DELETE FROM value_notes
        WHERE OLD.value IS NOT NULL AND key_lower = OLD.key_lower
          AND folder = ",
    folder_of!("OLD"),
    " AND value_lower = OLD.value_lower AND notes <= 0;
    END;"
);

/// Recomputes the count tables from `tags` and `properties` (after a bulk build without triggers).
/// Each note's folder is cut from its path once, into a temporary table, and the tags are grouped
/// with their own key first, the order they are scanned in: at 100k notes this takes 1.3 s where
/// grouping a join on `notes` by folder first took 3.4 s (the sorter was most of it).
const RECOUNT: &str = concat!(
    "
    CREATE TEMP TABLE recount_folders(id INTEGER PRIMARY KEY, folder TEXT NOT NULL);
    INSERT INTO recount_folders SELECT id, ",
    notes_folder!(),
    " FROM notes;
    DELETE FROM folder_notes;
    INSERT INTO folder_notes(folder, notes) SELECT folder, count(*) FROM recount_folders GROUP BY folder;
    DELETE FROM tag_counts;
    INSERT INTO tag_counts(folder, lower, tag, notes)
    SELECT f.folder, t.lower, t.tag, count(*)
    FROM tags t CROSS JOIN recount_folders f ON f.id = t.note_id GROUP BY t.lower, t.tag, f.folder;
    DELETE FROM key_notes;
    INSERT INTO key_notes(folder, key_lower, notes)
    SELECT f.folder, p.key_lower, count(DISTINCT p.note_id)
    FROM properties p CROSS JOIN recount_folders f ON f.id = p.note_id GROUP BY f.folder, p.key_lower;
    DELETE FROM key_spellings;
    INSERT INTO key_spellings(folder, key_lower, key, rows)
    SELECT f.folder, p.key_lower, p.key, count(*)
    FROM properties p CROSS JOIN recount_folders f ON f.id = p.note_id
    GROUP BY f.folder, p.key_lower, p.key;
    DELETE FROM value_notes;
    INSERT INTO value_notes(folder, key_lower, value_lower, notes)
    SELECT f.folder, p.key_lower, p.value_lower, count(DISTINCT p.note_id)
    FROM properties p CROSS JOIN recount_folders f ON f.id = p.note_id WHERE p.value IS NOT NULL
    GROUP BY f.folder, p.key_lower, p.value_lower;
    DELETE FROM value_spellings;
    INSERT INTO value_spellings(folder, key_lower, value_lower, value, rows)
    SELECT f.folder, p.key_lower, p.value_lower, p.value, count(*)
    FROM properties p CROSS JOIN recount_folders f ON f.id = p.note_id WHERE p.value IS NOT NULL
    GROUP BY f.folder, p.key_lower, p.value_lower, p.value;
    DROP TABLE recount_folders;
"
);

/// The sqlite-vec table of chunk vectors (rowid = `embeddings.id`), created once the model and so
/// the dimensions are known; see `vectors::prepare`.
pub const VECTOR_TABLE: &str = "chunk_vectors";

/// Makes sqlite-vec's functions and `vec0` tables available on every connection opened afterwards.
pub fn register_vector_extension() {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    REGISTER.call_once(|| {
        type EntryPoint = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::ffi::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::ffi::c_int;
        // SAFETY: `sqlite3_vec_init` is sqlite-vec's extension entry point, which has exactly the
        // `EntryPoint` signature SQLite calls (sqlite-vec declares it without parameters only
        // because its Rust binding is a bare `extern` declaration); it is statically linked, so
        // the pointer stays valid for the life of the process, and `Once` registers it once.
        #[allow(unsafe_code, reason = "no safe API registers a C SQLite extension")]
        unsafe {
            let entry = std::mem::transmute::<*const (), EntryPoint>(
                sqlite_vec::sqlite3_vec_init as *const (),
            );
            rusqlite::ffi::sqlite3_auto_extension(Some(entry));
        }
    });
}

/// The `meta` key saying whether the index keeps semantic-search chunks: `0` when it was built
/// while semantic search was not set up (absent in indexes from before the key: they keep them).
const CHUNKS: &str = "chunks";

/// Whether the index keeps each note's semantic-search chunks (see `CHUNKS`).
pub(super) fn keeps_chunks(connection: &Connection) -> Result<bool, rusqlite::Error> {
    let value: Option<String> = connection
        .query_row("SELECT value FROM meta WHERE key = ?1", [CHUNKS], |row| {
            row.get(0)
        })
        .optional()?;
    Ok(value.as_deref() != Some("0"))
}

/// Opens the writer's connection, creating or recreating the database as needed. Returns the
/// connection and whether the database was (re)created empty. `chunks`: whether semantic search
/// is set up, so a new index keeps chunks; one built without them is then rebuilt (an index
/// that has them keeps them either way, so a model missing for one start costs nothing).
pub fn open_writer(
    db_path: &Path,
    vault_root: &Path,
    rebuild: bool,
    chunks: bool,
) -> Result<(Connection, bool), rusqlite::Error> {
    register_vector_extension();
    if rebuild {
        remove_database(db_path);
    } else {
        match open_existing(db_path, vault_root, chunks) {
            Ok(Some(connection)) => return Ok((connection, false)),
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(%error, "the index cannot be opened; rebuilding it from the vault");
            }
        }
        remove_database(db_path);
    }
    let connection = Connection::open(db_path)?;
    configure(&connection)?;
    connection.execute_batch(SCHEMA)?;
    connection.execute_batch(COUNT_TRIGGERS)?;
    connection.execute(
        "INSERT INTO meta(key, value) VALUES('vault', ?1)",
        [vault_root.to_string_lossy()],
    )?;
    connection.execute(
        "INSERT INTO meta(key, value) VALUES(?1, ?2)",
        [CHUNKS, if chunks { "1" } else { "0" }],
    )?;
    connection.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    Ok((connection, true))
}

/// The existing database when it has this schema version and belongs to this vault.
fn open_existing(
    db_path: &Path,
    vault_root: &Path,
    chunks: bool,
) -> Result<Option<Connection>, rusqlite::Error> {
    if !db_path.exists() {
        return Ok(None);
    }
    let connection = Connection::open(db_path)?;
    configure(&connection)?;
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version != SCHEMA_VERSION {
        tracing::info!(
            found = version,
            expected = SCHEMA_VERSION,
            "the index has another schema version; rebuilding it"
        );
        return Ok(None);
    }
    let vault: Option<String> = connection
        .query_row("SELECT value FROM meta WHERE key = 'vault'", [], |row| {
            row.get(0)
        })
        .optional()?;
    if vault.as_deref() != Some(&*vault_root.to_string_lossy()) {
        tracing::info!("the index was built for another vault; rebuilding it");
        return Ok(None);
    }
    let unfinished: Option<String> = connection
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [BULK_LOAD],
            |row| row.get(0),
        )
        .optional()?;
    if unfinished.is_some() {
        tracing::info!(
            "the index's first build was interrupted before its lookup indexes were made; rebuilding it"
        );
        return Ok(None);
    }
    if chunks && !keeps_chunks(&connection)? {
        tracing::info!(
            "the index was built while semantic search was not set up, so it has no chunks to embed; rebuilding it"
        );
        return Ok(None);
    }
    Ok(Some(connection))
}

/// The writer's page cache (negative: KiB).
pub(super) const CACHE_KIB: i64 = -8000;

/// The `meta` key present while a first build runs without its secondary indexes.
const BULK_LOAD: &str = "bulk_load";

/// Drops the secondary indexes and the count triggers of an empty database before a first build
/// fills it, and returns the statements that make them again: SQLite sorts each index once at the end instead of
/// inserting every row into every index in key order as it arrives (about a tenth of a cold
/// build). Marked in `meta` in the same transaction, so a build that dies before
/// `restore_secondary_indexes` is rebuilt from scratch on the next open.
pub(super) fn defer_secondary_indexes(
    connection: &mut Connection,
) -> Result<Vec<String>, rusqlite::Error> {
    let transaction = connection.transaction()?;
    let indexes: Vec<(String, String, String)> = transaction
        .prepare(
            "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger')
             AND sql IS NOT NULL AND tbl_name NOT IN ('meta') ORDER BY type, name",
        )?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (kind, name, _) in &indexes {
        let kind = if kind == "trigger" {
            "TRIGGER"
        } else {
            "INDEX"
        };
        transaction.execute_batch(&format!("DROP {kind} \"{}\"", name.replace('"', "\"\"")))?;
    }
    transaction.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, '1')",
        [BULK_LOAD],
    )?;
    transaction.commit()?;
    // Indexes first ("index" sorts before "trigger"): the recount and the triggers use them.
    Ok(indexes.into_iter().map(|(_, _, sql)| sql).collect())
}

/// Makes the indexes `defer_secondary_indexes` dropped and the count tables, by `count` (`recount`,
/// or a first build's tally), in one transaction. Its mark stays until `finish_bulk_load`: a first
/// build's full-text index may still be on its way (`writer::beside`).
pub(super) fn restore_secondary_indexes(
    connection: &Connection,
    statements: &[String],
    count: impl FnOnce(&Connection) -> Result<(), rusqlite::Error>,
) -> Result<(), rusqlite::Error> {
    let transaction = connection.unchecked_transaction()?;
    let (indexes, triggers): (Vec<&String>, Vec<&String>) = statements.iter().partition(|sql| {
        !sql.trim_start()
            .to_uppercase()
            .starts_with("CREATE TRIGGER")
    });
    for sql in indexes {
        transaction.execute_batch(sql)?;
    }
    count(&transaction)?;
    for sql in triggers {
        transaction.execute_batch(sql)?;
    }
    transaction.commit()
}

/// The count tables made again from the rows they count.
pub(super) fn recount(connection: &Connection) -> Result<(), rusqlite::Error> {
    connection.execute_batch(RECOUNT)
}

/// Clears `defer_secondary_indexes`' mark: the first build is whole, and the next open keeps it.
pub(super) fn finish_bulk_load(connection: &Connection) -> Result<(), rusqlite::Error> {
    connection.execute("DELETE FROM meta WHERE key = ?1", [BULK_LOAD])?;
    Ok(())
}

/// A read-only connection for queries.
pub fn open_reader(db_path: &Path) -> Result<Connection, rusqlite::Error> {
    register_vector_extension();
    let connection = Connection::open_with_flags(
        db_path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(Duration::from_secs(5))?;
    // 2 MB each: up to `IDLE_READERS` of them stay open (4 MB each measured no faster).
    connection.pragma_update(None, "cache_size", -2000)?;
    stable_plans(&connection)?;
    Ok(connection)
}

/// Plans that do not depend on bound values. Without this, SQLite prepares a cached statement
/// again on every use whose `LIMIT ?` or `OFFSET ?` (or, with STAT4 samples, an indexed `= ?` or
/// range) gets a value: the statement cache clears its bindings, so every bind is a change. That
/// re-preparation was 15 % of the server's CPU under 32 concurrent searches (perf, 2026-12-02);
/// our queries' plans come from the schema's indexes, not from the values.
fn stable_plans(connection: &Connection) -> Result<(), rusqlite::Error> {
    connection.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// Whether the database file is missing or fails SQLite's quick check: asked only after a query
/// failed, to tell a damaged index (rebuilt) from a passing error (reported).
pub fn is_damaged(db_path: &Path) -> bool {
    if !db_path.exists() {
        return true;
    }
    let Ok(connection) = open_reader(db_path) else {
        return true;
    };
    connection
        .query_row("PRAGMA quick_check(1)", [], |row| row.get::<_, String>(0))
        .map_or(true, |verdict| verdict != "ok")
}

fn configure(connection: &Connection) -> Result<(), rusqlite::Error> {
    connection.busy_timeout(Duration::from_secs(5))?;
    let mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(mode, "the index could not switch to WAL mode");
    }
    // The index is derived: losing the last transactions in a power cut only means a re-scan.
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "cache_size", CACHE_KIB)?;
    stable_plans(connection)
}

fn remove_database(db_path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = db_path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(&name) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => tracing::warn!(%error, "cannot remove an old index file"),
        }
    }
}

/// The exclusive bounds of the paths below `folder`: `folder/` < path < `folder0` (`0` follows
/// `/` in every collation SQLite's BINARY compare uses), which an index range scan can serve.
pub(super) fn subtree_range(folder: &str) -> (String, String) {
    (format!("{folder}/"), format!("{folder}0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_names(connection: &Connection) -> Vec<String> {
        connection
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| row.get(0))?
                    .collect::<Result<Vec<String>, _>>()
            })
            .expect("index names")
    }

    #[test]
    fn a_first_build_that_dies_without_its_indexes_is_rebuilt_on_the_next_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, vault) = (dir.path().join("index.db"), dir.path().join("vault"));
        let (mut connection, created) = open_writer(&db, &vault, false, true).expect("created");
        assert!(created);
        let all = index_names(&connection);
        assert!(all.len() >= 10, "{all:?}");
        let statements = defer_secondary_indexes(&mut connection).expect("dropped");
        // The indexes, and the two count triggers of `notes`, of `tags` and of `properties`.
        assert_eq!(statements.len(), all.len() + 6);
        assert!(index_names(&connection).is_empty());
        drop(connection);
        // The process died here: the next open starts over, with every index.
        let (connection, created) = open_writer(&db, &vault, false, true).expect("reopened");
        assert!(
            created,
            "an index left without its lookup indexes is rebuilt"
        );
        assert_eq!(index_names(&connection), all);
        // A build that finishes restores them and is kept.
        let mut connection = connection;
        let statements = defer_secondary_indexes(&mut connection).expect("dropped");
        restore_secondary_indexes(&connection, &statements, recount).expect("restored");
        drop(connection);
        let (mut connection, created) = open_writer(&db, &vault, false, true).expect("reopened");
        assert!(created, "until the build says it is whole, it is not kept");
        let statements = defer_secondary_indexes(&mut connection).expect("dropped");
        restore_secondary_indexes(&connection, &statements, recount).expect("restored");
        finish_bulk_load(&connection).expect("finished");
        drop(connection);
        let (connection, created) = open_writer(&db, &vault, false, true).expect("reopened");
        assert!(!created);
        assert_eq!(index_names(&connection), all);
    }

    /// A page query is answered from its cached plan: one preparation however many pages follow.
    #[test]
    fn a_cached_page_query_is_not_prepared_again_for_each_page() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, vault) = (dir.path().join("index.db"), dir.path().join("vault"));
        let (writer, _) = open_writer(&db, &vault, false, true).expect("created");
        let sql = "SELECT path FROM notes ORDER BY path LIMIT ? OFFSET ?";
        for connection in [&writer, &open_reader(&db).expect("reader")] {
            for (limit, offset) in [(11, 0), (11, 0), (21, 10), (11, 0)] {
                let mut statement = connection.prepare_cached(sql).expect("prepared");
                let rows: Vec<String> = statement
                    .query_map([limit, offset], |row| row.get(0))
                    .expect("queried")
                    .collect::<Result<_, _>>()
                    .expect("rows");
                assert!(rows.is_empty());
            }
            let statement = connection.prepare_cached(sql).expect("cached");
            assert_eq!(
                statement.get_status(rusqlite::StatementStatus::RePrepare),
                0,
                "new LIMIT and OFFSET values must not make SQLite plan the query again"
            );
        }
    }

    #[test]
    fn an_index_without_chunks_is_rebuilt_once_semantic_search_is_set_up_and_never_loses_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, vault) = (dir.path().join("index.db"), dir.path().join("vault"));
        let (connection, _) = open_writer(&db, &vault, false, false).expect("created");
        assert!(!keeps_chunks(&connection).expect("meta"));
        drop(connection);
        // Still no model: kept as it is.
        let (connection, created) = open_writer(&db, &vault, false, false).expect("reopened");
        assert!(!created);
        drop(connection);
        // A model now: the index has nothing to embed, so it is built again, with chunks.
        let (connection, created) = open_writer(&db, &vault, false, true).expect("reopened");
        assert!(
            created,
            "an index without chunks is rebuilt once they are wanted"
        );
        assert!(keeps_chunks(&connection).expect("meta"));
        drop(connection);
        // The model missing for one start: the chunks (and so the vectors) stay.
        let (connection, created) = open_writer(&db, &vault, false, false).expect("reopened");
        assert!(!created);
        assert!(keeps_chunks(&connection).expect("meta"));
    }
}
