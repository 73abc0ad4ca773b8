//! The later parts of very large notes (`index::parts`): written one per transaction between
//! other commands, so a write elsewhere waits for one part at most, never for a whole note; a
//! reconcile writes them at once, as it holds the writer anyway.
//!
//! They wait in memory. Until its last part is written a note's `hash` is a marker (`parts N`),
//! which never equals a real hash: a stop before then leaves a note that the next start (or any
//! refresh) reads again, and a part whose note was rewritten, removed or read again meanwhile
//! finds another marker and is dropped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::rows::insert_part;
use crate::index::IndexError;
use crate::index::parts::Columns;

/// A note's parts after the first, as `rows.rs` leaves them.
pub(super) struct Split {
    pub note: i64,
    /// What the note's `hash` says until the last part is written.
    pub marker: String,
    /// The note's real hash, written with its last part.
    pub hash: String,
    /// Parts 2, 3, …: (headings, properties, body); the title is in part 1.
    pub rest: Vec<(String, String, String)>,
}

/// A fresh marker: unique in this process, and never a hash (`Revision` is hex).
pub(super) fn marker() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("parts {}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// One part waiting for its turn.
struct Part {
    /// Its place in the queue; a held reply waits until the part of its number is written.
    seq: u64,
    note: i64,
    part: usize,
    marker: String,
    /// On a note's last part: the hash that replaces the marker.
    hash: Option<String>,
    columns: (String, String, String),
}

/// A refresh's reply held until the parts it queued are written: a write answered is
/// searchable whole.
struct Held {
    until: u64,
    reply: mpsc::Sender<Result<(), IndexError>>,
}

/// The parts waiting and the replies held for them (the writer loop owns it).
#[derive(Default)]
pub(super) struct Turns {
    queue: VecDeque<Part>,
    held: Vec<Held>,
    /// Numbers given so far: the next part queued gets this one.
    queued: u64,
}

impl Turns {
    pub(super) fn waiting(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Queues the parts of `splits` and answers `reply`: at once when there were none (or the
    /// refresh failed), else once they are written. A refresh of other notes is never held
    /// behind a large note's parts.
    pub(super) fn answer_after(
        &mut self,
        splits: Vec<Split>,
        outcome: Result<(), IndexError>,
        reply: Option<mpsc::Sender<Result<(), IndexError>>>,
    ) {
        let before = self.queued;
        for split in splits {
            let last = split.rest.len() + 1;
            for (at, columns) in split.rest.into_iter().enumerate() {
                let part = at + 2;
                self.queue.push_back(Part {
                    seq: self.queued,
                    note: split.note,
                    part,
                    marker: split.marker.clone(),
                    hash: (part == last).then(|| split.hash.clone()),
                    columns,
                });
                self.queued += 1;
            }
        }
        let Some(reply) = reply else { return };
        match outcome {
            Ok(()) if self.queued > before => self.held.push(Held {
                until: self.queued - 1,
                reply,
            }),
            outcome => {
                let _ = reply.send(outcome);
            }
        }
    }

    /// Writes the oldest waiting part in a transaction of its own and answers the replies it
    /// completes. A part that cannot be written is dropped (its note keeps its marker, so the
    /// next reconcile reads it again) and the replies waiting for it hear why.
    pub(super) fn take_turn(&mut self, connection: &mut Connection) {
        let Some(part) = self.queue.pop_front() else {
            return;
        };
        let written = connection
            .transaction()
            .map_err(IndexError::from)
            .and_then(|transaction| {
                write(&transaction, &part)?;
                transaction.commit().map_err(IndexError::from)
            });
        if let Err(error) = written {
            tracing::error!(%error, "cannot store part of a large note in the index");
            // The note keeps its marker: without its other parts it is read again whole.
            self.queue
                .retain(|waiting| waiting.note != part.note || waiting.marker != part.marker);
            let (failed, kept): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
                .into_iter()
                .partition(|held| held.until >= part.seq);
            self.held = kept;
            for held in failed {
                let _ = held
                    .reply
                    .send(Err(IndexError::PartsFailed(error.to_string())));
            }
            return;
        }
        let next = self.queue.front().map_or(u64::MAX, |part| part.seq);
        self.held.retain(|held| {
            let done = held.until < next;
            if done {
                let _ = held.reply.send(Ok(()));
            }
            !done
        });
    }
}

/// Writes every part of `splits` on `transaction` (a reconcile's batch).
pub(super) fn write_all(
    transaction: &Transaction<'_>,
    splits: &mut Vec<Split>,
) -> Result<(), IndexError> {
    let mut turns = Turns::default();
    turns.answer_after(std::mem::take(splits), Ok(()), None);
    for part in &turns.queue {
        write(transaction, part)?;
    }
    Ok(())
}

/// Writes `part` unless its note no longer carries the marker it was cut under.
fn write(transaction: &Transaction<'_>, part: &Part) -> Result<(), IndexError> {
    let current: Option<String> = transaction
        .prepare_cached("SELECT hash FROM notes WHERE id = ?1")?
        .query_row([part.note], |row| row.get(0))
        .optional()?;
    if current.as_deref() != Some(part.marker.as_str()) {
        return Ok(());
    }
    let (headings, properties, body) = &part.columns;
    let columns = Columns {
        title: "",
        headings,
        properties,
        body,
    };
    insert_part(transaction, part.note, part.part, columns)?;
    if let Some(hash) = &part.hash {
        transaction
            .prepare_cached("UPDATE notes SET hash = ?2 WHERE id = ?1")?
            .execute(params![part.note, hash])?;
    }
    Ok(())
}
