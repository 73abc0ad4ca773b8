//! A version's content, hashed and compressed before the history's connection is taken, and
//! stored once per revision.
//!
//! For a 10 MB note, hashing and zstd take tens of milliseconds, and every other write's staging
//! waits for the connection: so that work happens first, on the writing thread, and the
//! connection is held only to insert.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{HistoryError, LEVEL};
use crate::vault::Revision;

/// Content ready to store.
pub(super) struct Prepared<'a> {
    bytes: &'a [u8],
    revision: String,
    size: i64,
    /// Compressed, unless the history already held the revision when asked.
    data: Option<Vec<u8>>,
}

impl<'a> Prepared<'a> {
    pub(super) fn hashed(bytes: &'a [u8]) -> Prepared<'a> {
        Prepared {
            bytes,
            revision: Revision::of(bytes).to_string(),
            size: i64::try_from(bytes.len()).unwrap_or(i64::MAX),
            data: None,
        }
    }

    pub(super) fn revision(&self) -> &str {
        &self.revision
    }

    /// The bytes this content adds to the history when stored (none when it was known).
    pub(super) fn stored_len(&self) -> u64 {
        self.data.as_ref().map_or(0, |data| data.len() as u64)
    }

    pub(super) fn compress(&mut self) -> Result<(), HistoryError> {
        self.data = Some(zstd::encode_all(self.bytes, LEVEL).map_err(HistoryError::Content)?);
        Ok(())
    }
}

/// Whether the history holds content under `revision`.
pub(super) fn known(connection: &Connection, revision: &str) -> rusqlite::Result<bool> {
    Ok(connection
        .prepare_cached("SELECT 1 FROM contents WHERE revision = ?1")?
        .query_row([revision], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Stores the content once under its revision; returns the revision and the size. Content
/// that was known when prepared but has gone since (a refused change dropped it) is compressed
/// here after all.
pub(super) fn store(
    transaction: &Transaction<'_>,
    content: &mut Prepared<'_>,
) -> Result<(String, i64), HistoryError> {
    if content.data.is_none() && !known(transaction, &content.revision)? {
        content.compress()?;
    }
    if let Some(data) = &content.data {
        transaction
            .prepare_cached(
                "INSERT OR IGNORE INTO contents(revision, bytes, stored, data) VALUES(?1, ?2, ?3, ?4)",
            )?
            .execute(params![content.revision, content.size, data.len() as i64, data])?;
    }
    Ok((content.revision.clone(), content.size))
}
