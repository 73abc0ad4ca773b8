//! The search query parser: whatever a client types, every expression it emits is valid FTS5 (a
//! real in-memory FTS5 table, tokenised as the index is, accepts it in MATCH), and for ASCII text
//! each positive word or phrase finds a note holding the query text itself.

use std::cell::RefCell;

use quire::index::parse_query;
use rusqlite::Connection;

thread_local! {
    static DB: RefCell<Connection> = RefCell::new(open());
}

fn open() -> Connection {
    let connection = Connection::open_in_memory().expect("in-memory SQLite");
    connection
        .execute_batch(
            "CREATE VIRTUAL TABLE notes_fts USING fts5(
                title, headings, properties, body,
                tokenize = 'unicode61 remove_diacritics 2'
            );
            INSERT INTO notes_fts(rowid, title, headings, properties, body)
                VALUES (1, 'Welcome', 'Start', 'tags: x', 'The quick brown fox');",
        )
        .expect("FTS5 table");
    connection
}

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let query = parse_query(text);
    if query.phrases.is_empty() {
        assert!(
            query.all.is_none() && query.any.is_none(),
            "{text:?}: {query:?}"
        );
    }
    DB.with(|db| {
        let db = db.borrow();
        let expressions = query.all.iter().chain(&query.any).chain(&query.phrases);
        for expression in expressions {
            let count = db.query_row(
                "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?1",
                [expression],
                |row| row.get::<_, i64>(0),
            );
            if let Err(error) = count {
                panic!("{text:?} gave {expression:?}, which FTS5 refuses: {error}");
            }
        }
        // Rust's and unicode61's ideas of a word character agree on ASCII.
        if text.is_ascii() && !query.phrases.is_empty() {
            db.execute(
                "INSERT INTO notes_fts(rowid, title, headings, properties, body) VALUES (2, '', '', '', ?1)",
                [text],
            )
            .expect("insert");
            for phrase in &query.phrases {
                let found: i64 = db
                    .query_row(
                        "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?1 AND rowid = 2",
                        [phrase],
                        |row| row.get(0),
                    )
                    .expect("a valid phrase");
                assert_eq!(found, 1, "{phrase:?} does not find the text {text:?} it came from");
            }
            db.execute("DELETE FROM notes_fts WHERE rowid = 2", []).expect("delete");
        }
    });
}
