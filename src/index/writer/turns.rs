//! The waiting parts of very large notes (`index::parts`): written one per transaction between
//! other commands, so a write elsewhere waits for one part at most, never for a whole note; and
//! all at once before a reconcile's batch commits. They wait in the database, so parts left by a
//! stop are written after the next start.

use std::sync::mpsc;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::Writer;
use super::rows::insert_part;
use crate::index::IndexError;
use crate::index::parts::Columns;

/// A refresh's reply held until every part waiting when it was written is written too: a write
/// answered is searchable whole.
pub(super) struct Held {
    /// The newest waiting part's sequence number when the refresh committed.
    until: i64,
    reply: mpsc::Sender<Result<(), IndexError>>,
}

impl Held {
    pub(super) fn fail(self, error: IndexError) {
        let _ = self.reply.send(Err(error));
    }
}

impl Writer {
    /// Writes the oldest waiting part in a transaction of its own.
    pub(super) fn write_next_part(&mut self) -> Result<(), IndexError> {
        let transaction = self.connection.transaction()?;
        write_oldest(&transaction)?;
        transaction.commit()?;
        Ok(())
    }
}

/// The newest waiting part's sequence number (they only grow: `AUTOINCREMENT`).
pub(super) fn newest(connection: &Connection) -> Option<i64> {
    connection
        .query_row("SELECT max(seq) FROM parts_waiting", [], |row| row.get(0))
        .unwrap_or(None)
}

/// Answers `reply` now, unless the refresh left parts waiting (any newer than `before`): then
/// once they are written. A refresh of other notes is never held behind a large note's parts.
/// Whether any part waits.
pub(super) fn answer_when_written(
    connection: &Connection,
    reply: mpsc::Sender<Result<(), IndexError>>,
    outcome: Result<(), IndexError>,
    before: Option<i64>,
    held: &mut Vec<Held>,
) -> bool {
    let newest = newest(connection);
    match (outcome, newest) {
        (Ok(()), Some(until)) if newest > before => held.push(Held { until, reply }),
        (outcome, _) => {
            let _ = reply.send(outcome);
        }
    }
    release(connection, held)
}

/// Answers every held reply whose parts are all written; whether any part still waits. A
/// database that cannot say answers them all: the parts wait for the next start.
pub(super) fn release(connection: &Connection, held: &mut Vec<Held>) -> bool {
    let oldest: Option<i64> = connection
        .query_row("SELECT min(seq) FROM parts_waiting", [], |row| row.get(0))
        .unwrap_or(None);
    held.retain(|waiting| {
        let done = oldest.is_none_or(|oldest| waiting.until < oldest);
        if done {
            let _ = waiting.reply.send(Ok(()));
        }
        !done
    });
    oldest.is_some()
}

/// Writes every waiting part on `transaction`, oldest first.
pub(super) fn write_all(transaction: &Transaction<'_>) -> Result<(), IndexError> {
    while write_oldest(transaction)? {}
    Ok(())
}

/// Writes the oldest waiting part; `false` when none waits.
fn write_oldest(transaction: &Transaction<'_>) -> Result<bool, IndexError> {
    let oldest = transaction
        .prepare_cached(
            "SELECT seq, note_id, part, headings, properties, body FROM parts_waiting
             ORDER BY seq LIMIT 1",
        )?
        .query_row([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, String>(4)?,
                row.get::<_, String>(5)?,
            ))
        })
        .optional()?;
    let Some((seq, note, part, headings, properties, body)) = oldest else {
        return Ok(false);
    };
    let columns = Columns {
        title: "",
        headings: &headings,
        properties: &properties,
        body: &body,
    };
    insert_part(transaction, note, part as usize, columns)?;
    transaction
        .prepare_cached("DELETE FROM parts_waiting WHERE seq = ?1")?
        .execute(params![seq])?;
    Ok(true)
}
