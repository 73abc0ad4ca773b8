//! The audit log: one JSON object per line, appended to `audit.jsonl` in the state directory, for
//! every change to the vault and every attempt the ACL refused.
//!
//! Each line holds the time, the identity, the OAuth client id, the tool, the path (and the
//! destination of a delete or move), the revisions before and after, and the outcome. Lines are
//! written with one `write` on a file opened for appending, so concurrent writers never
//! interleave within a line. Note bodies and tokens never appear. A failure to write is logged and
//! never fails the operation that was audited: the change has already happened.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::Context;

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
    /// `ok` for a change, `denied` for a refused attempt.
    pub outcome: &'a str,
}

/// The append-only log file; `None` writes nothing (tests, `quire search`).
#[derive(Debug, Default)]
pub struct AuditLog {
    file: Option<Mutex<File>>,
}

impl AuditLog {
    /// Opens (creating with mode 0600) `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<AuditLog> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(AuditLog {
            file: Some(Mutex::new(file)),
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
        let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(error) = file.write_all(line.as_bytes()) {
            tracing::error!(%error, "the audit log could not be written");
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
