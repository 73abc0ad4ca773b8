//! Versions another program made (Obsidian, a sync client, an editor), as the watcher reports
//! them: kept in the history as `external` changes, so a note's history shows every version it
//! had and an agent's overwrite of a fresh outside edit can be taken back to that edit.

use crate::history::{Draft, Kind, Meta};
use crate::ops::access::Maintenance;
use crate::ops::shared::Context;
use crate::ops::shared::Ops;
use crate::vault::VaultPath;

/// Files larger than this are left out of the history when another program changes them: an
/// attachment or export of that size is not what an agent overwrites.
const OUTSIDE_MAX_BYTES: u64 = 2 * 1024 * 1024;

/// Who made an outside edit, as the history lists it.
const OUTSIDE_IDENTITY: &str = "outside Quire";

/// One file's outside version, owned until it is staged.
struct Seen {
    path: String,
    before: Option<Vec<u8>>,
    after: Option<Vec<u8>>,
}

impl Ops {
    /// Records, as one `external` change, the files among `paths` (from the watcher) whose
    /// content differs from what the history last knew; Quire's own writes match and are
    /// skipped. A failure is logged: the edit has happened either way.
    pub fn record_outside_edits(&self, paths: &[String]) {
        let Some(history) = &self.history else {
            return;
        };
        let upkeep = Maintenance::new();
        // What the owner's policy denies (`always_deny`, hidden segments), by its name or where
        // it really is, never enters the history: history.db is read by tools and `quire
        // changes`, and keeps content at rest (issue 63, F7).
        let owner_view = self.visibility(&Context::owner());
        let mut seen: Vec<Seen> = Vec::new();
        for raw in paths {
            let Ok(path) = VaultPath::parse(raw) else {
                continue;
            };
            if !owner_view.shows(path.as_str()) {
                continue;
            }
            if seen.iter().any(|s| s.path == path.as_str()) {
                continue;
            }
            // Under the note's lock, which every Quire write holds from staging its change to
            // settling it: the file and the history then agree on what Quire wrote.
            let _lock = self.walls.vault(&upkeep).lock(&path);
            let known = match history.latest(path.as_str()) {
                Ok(known) => known,
                Err(error) => {
                    tracing::warn!(%error, "the history could not be read to record an outside edit");
                    return;
                }
            };
            let now = self.walls.vault(&upkeep).read(&path).ok();
            if now
                .as_ref()
                .is_some_and(|file| file.bytes.len() as u64 > OUTSIDE_MAX_BYTES)
            {
                continue;
            }
            let revision = now.as_ref().map(|file| file.revision.to_string());
            let changed = match &known {
                None => revision.is_some(),
                Some(known) => *known != revision,
            };
            if !changed {
                continue;
            }
            let before = known
                .flatten()
                .and_then(|revision| history.content(&revision).ok().flatten());
            seen.push(Seen {
                path: path.to_string(),
                before,
                after: now.map(|file| file.bytes),
            });
        }
        if seen.is_empty() {
            return;
        }
        let drafts: Vec<Draft<'_>> = seen
            .iter()
            .map(|s| Draft {
                path: &s.path,
                previous_path: None,
                kind: Kind::External,
                before: s.before.as_deref(),
                after: s.after.as_deref(),
            })
            .collect();
        let meta = Meta {
            identity: OUTSIDE_IDENTITY,
            tool: "file watcher",
            kind: Kind::External,
            undoes: None,
        };
        let recorded = history
            .stage(&meta, &drafts)
            .and_then(|change| history.finish(&change));
        if let Err(error) = recorded {
            tracing::warn!(%error, files = seen.len(), "an outside edit could not be recorded in the history");
        }
    }
}
