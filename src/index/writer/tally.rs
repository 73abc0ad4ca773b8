//! A first build's counts, kept in the writer's memory as it inserts each note's tag and
//! property rows, and written into the count tables once at the end.
//!
//! Why: a first build drops the count triggers (`schema::defer_secondary_indexes`), and
//! counting the rows again in SQL afterwards (`schema::RECOUNT`) cost about 0.1 s per 10k notes
//! on the writer thread, with the other core idle. Counted here, the work is a few map updates per
//! row, spread over the build.
//!
//! Invariant: the tally counts exactly the rows the writer inserted (a tag row only when its
//! `INSERT OR IGNORE` inserted one), with the recount's grouping, so the tables equal what the
//! recount and the triggers make (`tests/it/index_consistency.rs` compares them). A build whose
//! fill failed has rows rolled back that the tally saw; it is recounted in SQL instead.

use std::fmt::Write as _;

use rusqlite::{Connection, ToSql};

use super::PropertyRecord;

#[derive(Default)]
pub(super) struct Tally {
    /// folder → notes
    folders: Count,
    /// (folder, lower, tag) → notes
    tags: Count,
    /// (folder, key_lower) → notes
    keys: Count,
    /// (folder, key_lower, key) → rows
    key_spellings: Count,
    /// (folder, key_lower, value_lower) → notes
    values: Count,
    /// (folder, key_lower, value_lower, value) → rows
    value_spellings: Count,
}

/// The most strings a count is keyed by.
const MOST_PARTS: usize = 4;

/// Counts keyed by a few strings. The map's key joins them, each after its length (so no two
/// keys join alike), written into a buffer kept for it: a count that exists is found without
/// an allocation, and a new one costs one string. The parts are read back out of the key when
/// the counts are written (at a million notes, half a million keys).
#[derive(Default)]
struct Count {
    map: foldhash::HashMap<String, i64>,
    key: String,
}

impl Count {
    fn add(&mut self, parts: &[&str]) {
        self.key.clear();
        for part in parts {
            let _ = write!(self.key, "{}:", part.len());
            self.key.push_str(part);
        }
        match self.map.get_mut(self.key.as_str()) {
            Some(count) => *count += 1,
            None => {
                self.map.insert(self.key.clone(), 1);
            }
        }
    }

    /// Inserts a row per count with `insert` (its parts, then the count), in the order of the
    /// table's primary key, whose columns are the parts at `key` (Rust orders strings by their
    /// bytes, as SQLite's `BINARY` does): each insert appends to its B-tree.
    fn insert(
        &self,
        connection: &Connection,
        insert: &str,
        key: &[usize],
    ) -> Result<(), rusqlite::Error> {
        let mut rows: Vec<([&str; MOST_PARTS], usize, i64)> = self
            .map
            .iter()
            .map(|(joined, count)| {
                let (parts, used) = split(joined);
                (parts, used, *count)
            })
            .collect();
        rows.sort_unstable_by(|a, b| {
            key.iter()
                .map(|&index| a.0.get(index))
                .cmp(key.iter().map(|&index| b.0.get(index)))
        });
        let mut statement = connection.prepare(insert)?;
        for (parts, used, count) in &rows {
            let mut values: Vec<&dyn ToSql> = parts
                .iter()
                .take(*used)
                .map(|part| part as &dyn ToSql)
                .collect();
            values.push(count);
            statement.execute(values.as_slice())?;
        }
        Ok(())
    }
}

/// The parts `Count::add` joined into `key`, and how many there are.
fn split(mut key: &str) -> ([&str; MOST_PARTS], usize) {
    let mut parts = [""; MOST_PARTS];
    let mut used = 0;
    while used < MOST_PARTS
        && let Some((length, rest)) = key.split_once(':')
        && let Ok(length) = length.parse::<usize>()
        && let Some(part) = rest.get(..length)
    {
        parts[used] = part;
        used += 1;
        key = &rest[length..];
    }
    (parts, used)
}

/// The folder that keys a note's counts: its path through the last `/` (`""` at the vault root),
/// as `schema::notes_folder!` cuts it.
pub(super) fn folder_of(path: &str) -> &str {
    &path[..path.rfind('/').map_or(0, |slash| slash + 1)]
}

impl Tally {
    pub(super) fn note(&mut self, folder: &str) {
        self.folders.add(&[folder]);
    }

    /// A tag row the writer inserted.
    pub(super) fn tag(&mut self, folder: &str, lower: &str, tag: &str) {
        self.tags.add(&[folder, lower, tag]);
    }

    /// A note's property rows, every one of which the writer inserted.
    pub(super) fn properties(&mut self, folder: &str, rows: &[PropertyRecord]) {
        // A note counts once per key and once per key and value, however many rows repeat them.
        let mut keys: Vec<&str> = Vec::new();
        let mut values: Vec<(&str, &str)> = Vec::new();
        for row in rows {
            let key_lower = row.key_lower.as_str();
            self.key_spellings.add(&[folder, key_lower, &row.key]);
            if !keys.contains(&key_lower) {
                keys.push(key_lower);
                self.keys.add(&[folder, key_lower]);
            }
            let (Some(value), Some(value_lower)) = (&row.value, &row.value_lower) else {
                continue;
            };
            self.value_spellings
                .add(&[folder, key_lower, value_lower, value]);
            if !values.contains(&(key_lower, value_lower.as_str())) {
                values.push((key_lower, value_lower));
                self.values.add(&[folder, key_lower, value_lower]);
            }
        }
    }

    /// Replaces the count tables with the tally.
    pub(super) fn write(&self, connection: &Connection) -> Result<(), rusqlite::Error> {
        connection.execute_batch(
            "DELETE FROM folder_notes; DELETE FROM tag_counts; DELETE FROM key_notes;
             DELETE FROM key_spellings; DELETE FROM value_notes; DELETE FROM value_spellings;",
        )?;
        self.folders.insert(
            connection,
            "INSERT INTO folder_notes(folder, notes) VALUES(?1, ?2)",
            &[0],
        )?;
        self.tags.insert(
            connection,
            "INSERT INTO tag_counts(folder, lower, tag, notes) VALUES(?1, ?2, ?3, ?4)",
            &[0, 1, 2],
        )?;
        self.keys.insert(
            connection,
            "INSERT INTO key_notes(folder, key_lower, notes) VALUES(?1, ?2, ?3)",
            &[0, 1],
        )?;
        self.key_spellings.insert(
            connection,
            "INSERT INTO key_spellings(folder, key_lower, key, rows) VALUES(?1, ?2, ?3, ?4)",
            &[0, 1, 2],
        )?;
        self.values.insert(
            connection,
            "INSERT INTO value_notes(folder, key_lower, value_lower, notes) VALUES(?1, ?2, ?3, ?4)",
            &[1, 0, 2],
        )?;
        self.value_spellings.insert(
            connection,
            "INSERT INTO value_spellings(folder, key_lower, value_lower, value, rows)
             VALUES(?1, ?2, ?3, ?4, ?5)",
            &[1, 2, 0, 3],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{Count, folder_of, split};

    /// Parts with the separator and digits in them come back out as they went in.
    #[test]
    fn a_joined_key_splits_into_its_parts() {
        let mut count = Count::default();
        let parts = ["A/1:2/", "12:x", "", "é:"];
        count.add(&parts);
        count.add(&parts);
        let (key, total) = count.map.iter().next().expect("one count");
        assert_eq!(*total, 2);
        assert_eq!(split(key), (parts, 4));
        count.add(&["3:ab", "c"]);
        count.add(&["3:a", "bc"]);
        assert_eq!(count.map.len(), 3, "keys that join alike would merge");
    }

    #[test]
    fn a_notes_folder_is_its_path_through_the_last_slash() {
        assert_eq!(folder_of("note.md"), "");
        assert_eq!(folder_of("A/note.md"), "A/");
        assert_eq!(folder_of("A/B é/n.o.t.e.md"), "A/B é/");
    }
}
