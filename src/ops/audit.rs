//! The audit log: one JSON object per line, appended to `audit.jsonl` in the state directory, for
//! every change to the vault and every attempt the ACL refused.
//!
//! Each line holds the time, the identity, the OAuth client id, the tool, the path (and the
//! destination of a delete or move), the revisions before and after, the change id and the outcome. Lines are
//! written with one `write` on a file opened for appending, so concurrent writers never
//! interleave within a line. Note bodies and tokens never appear. A failure to write is logged and
//! never fails the operation that was audited: the change has already happened.
//!
//! The log rotates by size (`[audit] max_bytes`, `keep`): past the size the file is renamed to
//! `audit.jsonl.1` (older ones shift up to `.keep`, the oldest is dropped) and a new one is begun.
//! A rename loses nothing, and when the new file cannot be made, lines go on into the renamed one.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::shared::Context;

/// One line of the audit log.
#[derive(Debug, Serialize)]
pub struct AuditEntry<'a> {
    pub time: String,
    pub identity: &'a str,
    pub client_id: Option<&'a str>,
    pub tool: &'a str,
    pub path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destination: Option<&'a str>,
    pub revision_before: Option<&'a str>,
    pub revision_after: Option<&'a str>,
    /// The change this line belongs to (issue 49): one id for every file one call changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_id: Option<&'a str>,
    /// `ok` for a change, `denied` for a refused attempt.
    pub outcome: &'a str,
}

/// When the audit log rotates: past `max_bytes`, keeping `keep` older files. A refused identity
/// looping on denied reads once wrote 3.1 MB in 10 s into a log that never rotated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditRotation {
    pub max_bytes: u64,
    pub keep: u32,
}

impl Default for AuditRotation {
    fn default() -> AuditRotation {
        AuditRotation {
            max_bytes: 16 * 1024 * 1024,
            keep: 5,
        }
    }
}

/// The append-only log file; `None` writes nothing (tests, `quire search`).
#[derive(Debug, Default)]
pub struct AuditLog {
    file: Option<Mutex<Current>>,
}

/// The file being appended to, and how much it holds.
#[derive(Debug)]
struct Current {
    file: File,
    path: PathBuf,
    bytes: u64,
    rotation: AuditRotation,
}

fn open_for_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

impl AuditLog {
    /// Opens (creating with mode 0600) `path` for appending, rotating as `rotation` says.
    pub fn open(path: &Path, rotation: AuditRotation) -> std::io::Result<AuditLog> {
        let file = open_for_append(path)?;
        let bytes = file.metadata()?.len();
        Ok(AuditLog {
            file: Some(Mutex::new(Current {
                file,
                path: path.to_path_buf(),
                bytes,
                rotation,
            })),
        })
    }

    /// Records one event for the caller in `ctx`.
    pub(super) fn record(&self, ctx: &Context, event: Event<'_>) {
        let Some(file) = &self.file else { return };
        let entry = AuditEntry {
            time: OffsetDateTime::now_utc()
                .format(&Rfc3339)
                .unwrap_or_default(),
            identity: ctx.principal.name(),
            client_id: ctx.principal.client_id(),
            tool: &ctx.tool,
            path: event.path,
            destination: event.destination,
            revision_before: event.before,
            revision_after: event.after,
            change_id: ctx.change_id(),
            outcome: event.outcome,
        };
        let mut line = match serde_json::to_string(&entry) {
            Ok(line) => line,
            Err(error) => {
                tracing::error!(%error, "an audit entry could not be serialised");
                return;
            }
        };
        line.push('\n');
        let mut current = file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(error) = current.file.write_all(line.as_bytes()) {
            tracing::error!(%error, "the audit log could not be written");
            return;
        }
        current.bytes += line.len() as u64;
        if current.bytes >= current.rotation.max_bytes {
            current.rotate();
        }
    }
}

impl Current {
    /// `audit.jsonl.N` for the Nth older file.
    fn older(&self, n: u32) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    /// Shifts the older files up (the one past `keep` is replaced), renames the current one to
    /// `.1` and begins a new one. Called with the lock held, so no line is written meanwhile.
    fn rotate(&mut self) {
        for n in (1..self.rotation.keep).rev() {
            if let Err(error) = std::fs::rename(self.older(n), self.older(n + 1))
                && error.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(%error, "an older audit log file could not be shifted");
            }
        }
        if let Err(error) = std::fs::rename(&self.path, self.older(1)) {
            tracing::error!(%error, "the audit log could not be rotated; it goes on growing");
            return;
        }
        match open_for_append(&self.path) {
            Ok(file) => {
                self.file = file;
                self.bytes = 0;
            }
            // The old handle now writes into `.1`: nothing is lost, and the next line tries again.
            Err(error) => tracing::error!(%error, "a new audit log file could not be begun"),
        }
    }
}

/// What happened, for `AuditLog::record`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Event<'a> {
    pub path: &'a str,
    pub destination: Option<&'a str>,
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
    pub outcome: &'a str,
}

impl<'a> Event<'a> {
    pub fn denied(path: &'a str) -> Event<'a> {
        Event {
            path,
            outcome: "denied",
            ..Event::default()
        }
    }

    pub fn changed(path: &'a str, before: Option<&'a str>, after: Option<&'a str>) -> Event<'a> {
        Event {
            path,
            before,
            after,
            outcome: "ok",
            ..Event::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_in(path: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("every line is whole JSON"))
            .collect()
    }

    #[test]
    fn r47_the_log_rotates_by_size_and_keeps_only_its_count() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        let rotation = AuditRotation {
            max_bytes: 2_000,
            keep: 3,
        };
        let log = AuditLog::open(&path, rotation).expect("open");
        let ctx = Context::owner();
        let paths: Vec<String> = (0..400).map(|n| format!("Private/{n:04}.md")).collect();
        for path in &paths {
            log.record(&ctx, Event::denied(path));
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "audit.jsonl",
                "audit.jsonl.1",
                "audit.jsonl.2",
                "audit.jsonl.3"
            ]
        );
        for name in &names {
            let size = std::fs::metadata(dir.path().join(name))
                .expect("size")
                .len();
            assert!(size < rotation.max_bytes + 200, "{name} is {size} bytes");
        }
        // The newest lines survive, in order, with nothing lost between the kept files.
        let kept: Vec<String> = [
            "audit.jsonl.3",
            "audit.jsonl.2",
            "audit.jsonl.1",
            "audit.jsonl",
        ]
        .iter()
        .flat_map(|name| lines_in(&dir.path().join(name)))
        .map(|line| line["path"].as_str().unwrap_or_default().to_owned())
        .collect();
        assert_eq!(kept, paths[paths.len() - kept.len()..]);
        assert!(kept.len() > 30, "{} lines kept", kept.len());
    }

    #[test]
    fn an_existing_log_counts_toward_its_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.jsonl");
        std::fs::write(&path, "{}\n".repeat(1_000)).expect("write");
        let log = AuditLog::open(
            &path,
            AuditRotation {
                max_bytes: 2_000,
                keep: 1,
            },
        )
        .expect("open");
        log.record(&Context::owner(), Event::denied("x.md"));
        assert_eq!(lines_in(&dir.path().join("audit.jsonl.1")).len(), 1_001);
        assert!(lines_in(&path).is_empty());
    }
}
