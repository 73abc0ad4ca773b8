//! The sync service's status file (`[sync] status_file`, written by `nixos/git-sync.sh` and the
//! other backends' wrappers; format in docs/SYNC.md), read for `quire doctor` and `/healthz`.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What the last sync run reported. Unknown fields are ignored, so the writer may add some.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SyncStatus {
    #[serde(default)]
    pub ok: bool,
    #[serde(default)]
    pub message: String,
    pub last_attempt: Option<String>,
    pub last_success: Option<String>,
    #[serde(default)]
    pub conflicts: Vec<Conflict>,
}

/// A note both sides changed: the remote version stayed at `path`, the local one was saved as
/// `saved_as`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Conflict {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub saved_as: String,
    pub at: Option<String>,
}

/// The part of the status anyone who can reach `/healthz` may see: no paths.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Summary {
    pub ok: bool,
    pub last_success: Option<String>,
    pub conflicts: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("no status yet ({0}); the sync has not run")]
    Missing(String),
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
}

pub fn read(path: &Path) -> Result<SyncStatus, StatusError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            StatusError::Missing(path.display().to_string())
        } else {
            StatusError::Unreadable {
                path: path.display().to_string(),
                reason: error.to_string(),
            }
        }
    })?;
    serde_json::from_str(&text).map_err(|error| StatusError::Unreadable {
        path: path.display().to_string(),
        reason: format!("not the sync status format: {error}"),
    })
}

impl SyncStatus {
    pub fn summary(&self) -> Summary {
        Summary {
            ok: self.ok,
            last_success: self.last_success.clone(),
            conflicts: self.conflicts.len(),
        }
    }

    /// Lines for `quire doctor`: the state, then each conflict the owner should settle.
    pub fn describe(&self) -> Vec<String> {
        let when = self.last_success.as_deref().unwrap_or("never");
        let mut lines = vec![if self.ok {
            format!("sync:            ok (last success {when})")
        } else {
            format!(
                "sync:            WARNING the last run failed: {} (last success {when})",
                self.message
            )
        }];
        for conflict in &self.conflicts {
            lines.push(format!(
                "  conflict:      {} (your version was kept as {}{})",
                conflict.path,
                conflict.saved_as,
                conflict
                    .at
                    .as_deref()
                    .map(|at| format!(", {at}"))
                    .unwrap_or_default()
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_with_conflicts_reads_and_summarises_without_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("status.json");
        std::fs::write(
            &path,
            r#"{"ok": true, "message": "", "last_attempt": "2026-11-30T10:00:00Z",
                "last_success": "2026-11-30T10:00:00Z", "backend": "git",
                "conflicts": [{"path": "Plan.md", "saved_as": "Plan (conflict host 2026-11-30 1000).md",
                               "at": "2026-11-30T10:00:00Z"}]}"#,
        )
        .expect("write");
        let status = read(&path).expect("reads");
        assert_eq!(
            status.summary(),
            Summary {
                ok: true,
                last_success: Some("2026-11-30T10:00:00Z".into()),
                conflicts: 1
            }
        );
        let lines = status.describe().join("\n");
        assert!(
            lines.contains("Plan.md") && lines.contains("(conflict host"),
            "{lines}"
        );
        assert!(matches!(
            read(&dir.path().join("none.json")),
            Err(StatusError::Missing(_))
        ));
        std::fs::write(&path, "not json").expect("write");
        assert!(matches!(read(&path), Err(StatusError::Unreadable { .. })));
    }
}
