//! Semantic-search vectors in the index: chunk rows (written with each note by the writer), one
//! vector per distinct chunk hash in a sqlite-vec `vec0` table, and the nearest-chunk queries.
//!
//! Vectors are keyed by content hash, not by note: an edit re-embeds only the chunks whose text
//! changed, and a note moved to another folder keeps its vectors (a chunk starts with the note's
//! title, so renaming the file re-embeds it). Vectors from another model are dropped
//! when the model changes (`prepare`). The note filters apply inside the vector query (the folder
//! as a path-range prefilter), so a filtered search never loses hits to filtered-out notes.
//!
//! Memory entries share the store: an entry's vector is keyed by the hash of the text it is
//! embedded as (`memory_entry_text`), so an unchanged entry keeps its vector across edits of its
//! file, a new entry costs one vector, and pruning keeps every hash an entry or a chunk uses.

use std::collections::HashSet;

use rusqlite::types::Value as SqlValue;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::read::{
    Conditions, FileFilter, FileHit, MemoryHit, NOTE_COLUMNS, NoteFilter, NoteRow, memory_hit,
    note_row, page_by_offset,
};
use super::schema::VECTOR_TABLE;
use super::vector_cache::{VectorCache, bump_epoch};

/// How many chunks the index holds and how many of them have a vector.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VectorCounts {
    pub chunks: u64,
    pub embedded: u64,
}

impl VectorCounts {
    pub fn pending(&self) -> u64 {
        self.chunks.saturating_sub(self.embedded)
    }
}

/// A note near the query: its closest chunk's cosine distance (0 = same direction, 2 = opposite).
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    pub note: NoteRow,
    pub distance: f64,
    /// The closest chunk's position in the note.
    pub seq: usize,
}

fn has_vector_table(connection: &Connection) -> rusqlite::Result<bool> {
    connection
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [VECTOR_TABLE],
            |_| Ok(()),
        )
        .optional()
        .map(|found| found.is_some())
}

/// Makes the vector table ready for `identity`'s vectors of `dimensions` floats; vectors of any
/// other model are deleted. Returns true when the table was (re)created empty.
pub fn prepare(
    connection: &Connection,
    identity: &str,
    dimensions: usize,
) -> rusqlite::Result<bool> {
    let current: Option<String> = connection
        .query_row(
            "SELECT value FROM meta WHERE key = 'embedding_model'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    if current.as_deref() == Some(identity) && has_vector_table(connection)? {
        return Ok(false);
    }
    let transaction = connection.unchecked_transaction()?;
    transaction.execute_batch(&format!(
        "DROP TABLE IF EXISTS {VECTOR_TABLE}; DELETE FROM embeddings;"
    ))?;
    transaction.execute_batch(&format!(
        "CREATE VIRTUAL TABLE {VECTOR_TABLE} USING vec0(embedding float[{dimensions}] distance_metric=cosine)"
    ))?;
    transaction.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES('embedding_model', ?1)",
        [identity],
    )?;
    bump_epoch(&transaction)?;
    transaction.commit()?;
    Ok(true)
}

fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector
        .iter()
        .flat_map(|value| value.to_le_bytes())
        .collect()
}

/// Stores vectors for chunk hashes (a hash that already has one keeps it).
pub fn store(connection: &Connection, items: &[(String, Vec<f32>)]) -> rusqlite::Result<usize> {
    let transaction = connection.unchecked_transaction()?;
    let mut stored = 0;
    {
        let mut insert_hash =
            transaction.prepare_cached("INSERT OR IGNORE INTO embeddings(hash) VALUES(?1)")?;
        let mut find = transaction.prepare_cached("SELECT id FROM embeddings WHERE hash = ?1")?;
        let mut insert_vector = transaction.prepare_cached(&format!(
            "INSERT INTO {VECTOR_TABLE}(rowid, embedding) VALUES(?1, ?2)"
        ))?;
        for (hash, vector) in items {
            if insert_hash.execute([hash])? == 0 {
                continue;
            }
            let id: i64 = find.query_row([hash], |row| row.get(0))?;
            insert_vector.execute(params![id, to_blob(vector)])?;
            stored += 1;
        }
    }
    transaction.commit()?;
    Ok(stored)
}

/// Deletes vectors no chunk (of a note or a file) and no memory entry uses any more; returns how
/// many.
pub fn prune(connection: &Connection) -> rusqlite::Result<usize> {
    if !has_vector_table(connection)? {
        return Ok(0);
    }
    // Only this (the writer's) connection changes these tables, so what the read finds is still
    // stale inside the transaction; with nothing stale no write happens (the pass runs every 2 s).
    let stale: Vec<i64> = connection
        .prepare_cached(
            "SELECT id FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash)
                 AND NOT EXISTS (SELECT 1 FROM memory_entries m WHERE m.hash = e.hash)
                 AND NOT EXISTS (SELECT 1 FROM file_chunks f WHERE f.hash = e.hash)",
        )?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    if stale.is_empty() {
        return Ok(0);
    }
    let transaction = connection.unchecked_transaction()?;
    {
        let mut delete_vector =
            transaction.prepare(&format!("DELETE FROM {VECTOR_TABLE} WHERE rowid = ?1"))?;
        let mut delete_hash = transaction.prepare("DELETE FROM embeddings WHERE id = ?1")?;
        for id in &stale {
            delete_vector.execute([id])?;
            delete_hash.execute([id])?;
        }
    }
    bump_epoch(&transaction)?;
    transaction.commit()?;
    Ok(stale.len())
}

/// Up to `limit` notes that have chunks without a vector, in path order.
pub fn pending_paths(connection: &Connection, limit: usize) -> rusqlite::Result<Vec<String>> {
    let mut statement = connection.prepare_cached(
        "SELECT DISTINCT n.path FROM chunks c JOIN notes n ON n.id = c.note_id
         WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)
         ORDER BY n.path LIMIT ?1",
    )?;
    let rows = statement.query_map([limit as i64], |row| row.get(0))?;
    rows.collect()
}

/// A memory entry that has no vector yet: its hash and the text it is embedded as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingMemory {
    pub hash: String,
    pub text: String,
}

/// Up to `limit` memory entries without a vector, one per distinct hash, in hash order (entries
/// with the same file, section and text share one vector).
pub fn pending_memory(
    connection: &Connection,
    limit: usize,
) -> rusqlite::Result<Vec<PendingMemory>> {
    let mut statement = connection.prepare_cached(
        "SELECT m.hash, min(n.path), min(m.section), min(m.text) FROM memory_entries m
         JOIN notes n ON n.id = m.note_id
         WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = m.hash)
         GROUP BY m.hash ORDER BY m.hash LIMIT ?1",
    )?;
    let rows = statement.query_map([limit as i64], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, String>(3)?,
        ))
    })?;
    let mut pending = Vec::new();
    for row in rows {
        let (hash, path, section, text) = row?;
        // The writer hashed the text with the file's stem, exactly as rebuilt here.
        let stem = crate::vault::VaultPath::parse(&path)
            .map(|path| path.stem().to_owned())
            .unwrap_or(path);
        pending.push(PendingMemory {
            hash,
            text: super::writer::memory_entry_text(&stem, &section, &text),
        });
    }
    Ok(pending)
}

/// The `limit` memory entries nearest to `query` (optionally in the memory file `file`) among
/// the files `keep` admits, nearest first, scored by cosine similarity (1 = same direction).
/// Exact: a memory layer holds hundreds of entries, not millions. Empty without vectors.
pub fn nearest_memory(
    connection: &Connection,
    query: &[f32],
    file: Option<&str>,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
) -> rusqlite::Result<Vec<MemoryHit>> {
    if limit == 0 || !has_vector_table(connection)? {
        return Ok(Vec::new());
    }
    let blob = to_blob(query);
    let sql = format!(
        "SELECT n.path, m.section, m.date, m.text, m.line, m.hash,
                vec_distance_cosine(v.embedding, ?1) AS distance
         FROM memory_entries m
         JOIN notes n ON n.id = m.note_id
         JOIN embeddings e ON e.hash = m.hash
         JOIN {VECTOR_TABLE} v ON v.rowid = e.id
         WHERE ?2 IS NULL OR n.path = ?2
         ORDER BY distance, n.path, m.line LIMIT ?3 OFFSET ?4"
    );
    let page = page_by_offset(
        0,
        limit,
        |at, batch| {
            let mut statement = connection.prepare_cached(&sql)?;
            let rows = statement.query_map(
                params_from_iter([
                    SqlValue::Blob(blob.clone()),
                    file.map_or(SqlValue::Null, |file| SqlValue::Text(file.to_owned())),
                    SqlValue::Integer(batch as i64),
                    SqlValue::Integer(at as i64),
                ]),
                |row| memory_hit(row, 1.0 - row.get::<_, f64>(6)?),
            )?;
            rows.collect()
        },
        &|hit: &MemoryHit| keep(&hit.path),
    )?;
    Ok(page.rows)
}

/// Up to `limit` chunks of files (canvases, PDFs, text formats) without a vector, one per
/// distinct hash, with the text the writer indexed: the pass never parses a PDF again, and a file
/// edited meanwhile cannot pair a vector with the wrong hash.
pub fn pending_file_chunks(
    connection: &Connection,
    limit: usize,
) -> rusqlite::Result<Vec<PendingMemory>> {
    let mut statement = connection.prepare_cached(
        "SELECT c.hash, min(c.text) FROM file_chunks c
         WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)
         GROUP BY c.hash ORDER BY c.hash LIMIT ?1",
    )?;
    let rows = statement.query_map([limit as i64], |row| {
        Ok(PendingMemory {
            hash: row.get(0)?,
            text: row.get(1)?,
        })
    })?;
    rows.collect()
}

/// A file near the query: its closest chunk's cosine distance and position, and the file as a
/// keyword hit would carry it (`score` is the cosine similarity).
#[derive(Debug, Clone, PartialEq)]
pub struct FileVectorHit {
    pub file: FileHit,
    pub distance: f64,
    pub seq: usize,
}

/// The `limit` files whose closest chunk is nearest to `query`, among the files matching
/// `filter` and passing `keep`, nearest first. Exact, like the filtered note search: a vault has
/// far fewer indexed files than note chunks.
pub fn nearest_files(
    connection: &Connection,
    query: &[f32],
    filter: &FileFilter,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
) -> rusqlite::Result<Vec<FileVectorHit>> {
    if limit == 0 || !has_vector_table(connection)? {
        return Ok(Vec::new());
    }
    let conditions = filter.conditions();
    let sql = format!(
        "SELECT f.path, f.size, f.mtime, f.id, c.seq, vec_distance_cosine(v.embedding, ?1) AS distance
         FROM file_chunks c
         JOIN files f ON f.id = c.file_id
         JOIN embeddings e ON e.hash = c.hash
         JOIN {VECTOR_TABLE} v ON v.rowid = e.id
         WHERE 1{}
         ORDER BY distance, f.path LIMIT ?",
        conditions.and_clause()
    );
    let mut params = vec![SqlValue::Blob(to_blob(query))];
    params.extend(conditions.params.iter().cloned());
    let mut body = connection.prepare_cached("SELECT body FROM files_fts WHERE rowid = ?1")?;
    type Row = (String, i64, i64, i64, i64, f64);
    nearest_in_batches(
        connection,
        &sql,
        params,
        limit,
        |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        },
        |row: &Row| row.0.clone(),
        |(path, size, mtime, id, seq, distance): Row| {
            if !keep(&path) {
                return Ok(None);
            }
            let text: String = body
                .query_row([id], |row| row.get(0))
                .optional()?
                .unwrap_or_default();
            Ok(Some(FileVectorHit {
                file: FileHit {
                    path,
                    size,
                    mtime,
                    score: 1.0 - distance,
                    body: text,
                    at: 0,
                },
                distance,
                seq: seq.max(0) as usize,
            }))
        },
    )
}

/// Chunks nearest first, fetched in growing batches (`sql` takes the batch size as its last
/// parameter, after `params`) until `limit` paths are kept or the chunks run out. Per path only
/// the nearest chunk counts: a path seen once is not considered again, whether `hit` kept it or not.
fn nearest_in_batches<R, H>(
    connection: &Connection,
    sql: &str,
    params: Vec<SqlValue>,
    limit: usize,
    read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<R>,
    path_of: impl Fn(&R) -> String,
    mut hit: impl FnMut(R) -> rusqlite::Result<Option<H>>,
) -> rusqlite::Result<Vec<H>> {
    let mut batch = (limit * 4).max(64);
    loop {
        let mut batch_params = params.clone();
        batch_params.push(SqlValue::Integer(batch as i64));
        let mut statement = connection.prepare_cached(sql)?;
        let rows: Vec<R> = statement
            .query_map(params_from_iter(batch_params), &read)?
            .collect::<Result<_, _>>()?;
        let exhausted = rows.len() < batch;
        let mut seen = HashSet::new();
        let mut hits = Vec::new();
        for row in rows {
            if !seen.insert(path_of(&row)) {
                continue;
            }
            if let Some(found) = hit(row)? {
                hits.push(found);
                if hits.len() == limit {
                    return Ok(hits);
                }
            }
        }
        if exhausted {
            return Ok(hits);
        }
        batch *= 4;
    }
}

/// The text of chunk `seq` of the file at `path` as it was embedded, for a reranker.
pub fn file_chunk_text(
    connection: &Connection,
    path: &str,
    seq: usize,
) -> rusqlite::Result<Option<String>> {
    connection
        .prepare_cached(
            "SELECT c.text FROM file_chunks c JOIN files f ON f.id = c.file_id
             WHERE f.path = ?1 AND c.seq = ?2",
        )?
        .query_row(params![path, seq as i64], |row| row.get(0))
        .optional()
}

/// Which of `hashes` have no vector yet.
pub fn missing(connection: &Connection, hashes: &[String]) -> rusqlite::Result<HashSet<String>> {
    let mut statement = connection.prepare_cached("SELECT 1 FROM embeddings WHERE hash = ?1")?;
    let mut missing = HashSet::new();
    for hash in hashes {
        if !statement.exists([hash])? {
            missing.insert(hash.clone());
        }
    }
    Ok(missing)
}

/// Chunks of notes and of files, and how many of them have a vector.
pub fn counts(connection: &Connection) -> rusqlite::Result<VectorCounts> {
    connection.query_row(
        "SELECT (SELECT count(*) FROM chunks) + (SELECT count(*) FROM file_chunks),
                (SELECT count(*) FROM chunks c JOIN embeddings e ON e.hash = c.hash)
                + (SELECT count(*) FROM file_chunks c JOIN embeddings e ON e.hash = c.hash)",
        [],
        |row| {
            Ok(VectorCounts {
                chunks: row.get::<_, i64>(0)?.max(0) as u64,
                embedded: row.get::<_, i64>(1)?.max(0) as u64,
            })
        },
    )
}

/// The `limit` notes whose closest chunk is nearest to `query`, among the notes matching
/// `filter` and passing `keep`, nearest first. Empty when no vectors exist yet.
pub fn nearest(
    connection: &Connection,
    cache: &Mutex<VectorCache>,
    query: &[f32],
    filter: &NoteFilter,
    limit: usize,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<Vec<VectorHit>> {
    if limit == 0 || !has_vector_table(connection)? {
        return Ok(Vec::new());
    }
    let conditions = Conditions::from_filter(filter);
    if conditions.sql.is_empty()
        && let Some(hits) = nearest_unfiltered(connection, cache, query, limit, keep)?
    {
        return Ok(hits);
    }
    // Every chunk of the matching notes is scored (an exact search, filters first); per note only
    // the best chunk counts. Chunks are fetched in growing batches until enough notes are kept.
    let sql = format!(
        "SELECT {NOTE_COLUMNS}, c.seq, vec_distance_cosine(v.embedding, ?1) AS distance
         FROM chunks c
         JOIN notes n ON n.id = c.note_id
         JOIN embeddings e ON e.hash = c.hash
         JOIN {VECTOR_TABLE} v ON v.rowid = e.id
         WHERE 1{}
         ORDER BY distance LIMIT ?",
        conditions.and_clause()
    );
    let mut params = vec![SqlValue::Blob(to_blob(query))];
    params.extend(conditions.params.iter().cloned());
    nearest_in_batches(
        connection,
        &sql,
        params,
        limit,
        |row| Ok((note_row(row)?, row.get::<_, i64>(6)?, row.get::<_, f64>(7)?)),
        |(note, _, _): &(NoteRow, i64, f64)| note.path.clone(),
        |(note, seq, distance)| {
            Ok(keep(&note).then(|| VectorHit {
                note,
                distance,
                seq: seq.max(0) as usize,
            }))
        },
    )
}

/// Most chunks one sqlite-vec KNN query may return (its `k` limit).
const KNN_MAX: usize = 4096;

/// Without filters, a KNN over the in-memory int8 copy of the vectors (`VectorCache`; no joins
/// per chunk), then the notes of the nearest chunks. `None` when even `KNN_MAX` chunks do not
/// yield `limit` kept notes (many hidden or repeated notes): the caller then scans exactly.
fn nearest_unfiltered(
    connection: &Connection,
    cache: &Mutex<VectorCache>,
    query: &[f32],
    limit: usize,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<Option<Vec<VectorHit>>> {
    // Held only to refresh and to scan, so searches overlap in their note lookups.
    let lock = || {
        cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    };
    let total = {
        let mut cache = lock();
        cache.refresh(connection)?;
        cache.len()
    };
    let chunks_of = format!(
        "SELECT {NOTE_COLUMNS}, c.seq FROM embeddings e
         JOIN chunks c ON c.hash = e.hash JOIN notes n ON n.id = c.note_id
         WHERE e.id = ?1 ORDER BY n.path"
    );
    let mut k = (limit * 4).clamp(64, KNN_MAX);
    loop {
        let nearest = lock().nearest(query, k);
        let mut seen = HashSet::new();
        let mut hits = Vec::new();
        let mut statement = connection.prepare_cached(&chunks_of)?;
        'chunks: for (id, distance) in &nearest {
            // One vector may serve identical chunks in several notes.
            let rows: Vec<(NoteRow, i64)> = statement
                .query_map([id], |row| Ok((note_row(row)?, row.get(6)?)))?
                .collect::<Result<_, _>>()?;
            for (note, seq) in rows {
                if !seen.insert(note.path.clone()) || !keep(&note) {
                    continue;
                }
                hits.push(VectorHit {
                    note,
                    distance: *distance,
                    seq: seq.max(0) as usize,
                });
                if hits.len() == limit {
                    break 'chunks;
                }
            }
        }
        if hits.len() == limit || nearest.len() >= total {
            return Ok(Some(hits));
        }
        if k == KNN_MAX {
            return Ok(None);
        }
        k = (k * 4).min(KNN_MAX);
    }
}
