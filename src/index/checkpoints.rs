//! Copying the WAL into the database on another thread while a bulk build writes.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses its threshold, on the
//! writer: during a cold build that was a third of the writer's commit time, while the other
//! core waited for the writer. For the length of a bulk build the writer turns it off and a
//! second connection runs passive checkpoints (which never block the writer or readers) every
//! few milliseconds, so the copying happens beside the writes and the final checkpoint finds
//! little left to do.

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// How long the checkpointer waits between two passive checkpoints.
const EVERY: Duration = Duration::from_millis(20);
/// SQLite's default `wal_autocheckpoint`, given back when the build ends.
const AUTOCHECKPOINT_PAGES: i64 = 1000;

/// While alive, checkpoints `writer`'s database from another thread; dropping it stops that
/// thread and gives the writer its automatic checkpoints back.
pub(super) struct Checkpointer<'a> {
    writer: &'a Connection,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl<'a> Checkpointer<'a> {
    /// Starts checkpointing `db_path` beside `writer`. When no second connection can be opened
    /// (the writer keeps its automatic checkpoints) this is logged, not an error: the build is
    /// only slower.
    pub fn start(writer: &'a Connection, db_path: &Path) -> Checkpointer<'a> {
        // Built only where it is returned: dropping one gives the writer its checkpoints back.
        let idle = || Checkpointer {
            writer,
            stop: None,
            thread: None,
        };
        let connection = match Connection::open(db_path) {
            Ok(connection) => connection,
            Err(error) => {
                tracing::debug!(%error, "no checkpoint connection; the writer checkpoints");
                return idle();
            }
        };
        if let Err(error) = set_autocheckpoint(writer, 0) {
            tracing::debug!(%error, "automatic checkpoints stay on the writer");
            return idle();
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("quire-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(EVERY) {
                    // Busy (another checkpoint, a restart of the WAL) only means the next turn.
                    let _ = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            });
        match spawned {
            Ok(thread) => Checkpointer {
                writer,
                stop: Some(stop),
                thread: Some(thread),
            },
            Err(error) => {
                tracing::debug!(%error, "no checkpoint thread; the writer checkpoints");
                idle()
            }
        }
    }
}

/// `PRAGMA wal_autocheckpoint` answers with the new value, so it is a query, not an update.
fn set_autocheckpoint(connection: &Connection, pages: i64) -> Result<i64, rusqlite::Error> {
    connection.query_row(&format!("PRAGMA wal_autocheckpoint = {pages}"), [], |row| {
        row.get(0)
    })
}

impl Drop for Checkpointer<'_> {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Err(error) = set_autocheckpoint(self.writer, AUTOCHECKPOINT_PAGES) {
            tracing::warn!(%error, "could not turn automatic checkpoints back on");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wal_is_copied_beside_the_writer_and_automatic_checkpoints_come_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("index.db");
        let writer = Connection::open(&path).expect("open");
        writer
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .expect("wal");
        writer
            .execute_batch("CREATE TABLE t(x BLOB)")
            .expect("table");
        {
            let _checkpointer = Checkpointer::start(&writer, &path);
            let pages: i64 = writer
                .query_row("PRAGMA wal_autocheckpoint", [], |row| row.get(0))
                .expect("pragma");
            assert_eq!(pages, 0, "the writer no longer checkpoints by itself");
            for _ in 0..50 {
                writer
                    .execute("INSERT INTO t VALUES(zeroblob(65536))", [])
                    .expect("insert");
            }
            // 3.2 MB, below the 4 MB at which the writer would have checkpointed itself: the
            // frames reach the database file without its help.
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                let size = std::fs::metadata(&path).expect("database").len();
                if size >= 50 * 65536 {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the database file stayed at {size} bytes"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let pages: i64 = writer
            .query_row("PRAGMA wal_autocheckpoint", [], |row| row.get(0))
            .expect("pragma");
        assert_eq!(pages, AUTOCHECKPOINT_PAGES);
    }
}
