//! Finishing, at start, a move a kill cut short: its journal says what was planned, and each
//! file still holding what the move read gets its planned text.

use std::collections::BTreeSet;

use crate::ops::access::Maintenance;
use crate::ops::move_journal::Entry;
use crate::ops::shared::Ops;
use crate::vault::{Revision, VaultPath, WriteMode};

impl Ops {
    /// Finishes the moves a killed Quire left journaled (see `move_journal`); returns how many.
    /// Runs at start, before anything is served.
    pub fn recover_moves(&self) -> usize {
        let mut finished = 0;
        for (journal, entry) in self.move_journal.left_behind() {
            match entry {
                Err(error) => {
                    tracing::error!(journal = %journal.display(), %error, "a move journal cannot be read; it is left in place: check the two paths it names and remove it");
                }
                Ok(entry) if entry.vault != self.walls.root() => {
                    tracing::error!(journal = %journal.display(), vault = %entry.vault.display(), "a move journal belongs to another vault; it is left in place");
                }
                Ok(entry) => {
                    self.finish_cut_move(&entry);
                    if let Err(error) = std::fs::remove_file(&journal) {
                        tracing::warn!(%error, journal = %journal.display(), "a finished move's journal could not be removed");
                    }
                    finished += 1;
                }
            }
        }
        finished
    }

    /// Carries a journaled move forward from wherever it was cut: the linking files still
    /// holding what the move read get their planned text, and the source goes if it still holds
    /// what was moved. Without the destination (created first) nothing was written.
    pub(super) fn finish_cut_move(&self, entry: &Entry) {
        let upkeep = Maintenance::new();
        let (Ok(old), Ok(new)) = (VaultPath::parse(&entry.old), VaultPath::parse(&entry.new))
        else {
            tracing::error!(old = %entry.old, new = %entry.new, "a move journal names a path outside the vault; ignored");
            return;
        };
        let sources: BTreeSet<String> = entry.files.iter().map(|f| f.path.clone()).collect();
        let _locks = self.lock_move(&upkeep, &sources, &old, &new);
        let exists = |path: &VaultPath| {
            self.walls
                .vault(&upkeep)
                .resolve(path)
                .ok()
                .filter(|resolved| resolved.exists)
        };
        if exists(&new).is_none() {
            tracing::info!(%old, %new, "a move cut short had written nothing; nothing to finish");
            return;
        }
        let mut refreshed = vec![old.to_string(), new.to_string()];
        for file in &entry.files {
            let Ok(path) = VaultPath::parse(&file.path) else {
                continue;
            };
            let current = exists(&path).and_then(|resolved| {
                let contents = self.walls.vault(&upkeep).read_resolved(&resolved).ok()?;
                Some((resolved, contents.revision))
            });
            match current {
                Some((resolved, revision)) if revision.as_str() == file.before => {
                    match self.walls.vault(&upkeep).write(
                        &resolved,
                        file.text.as_bytes(),
                        WriteMode::Replace {
                            expected: &revision,
                        },
                    ) {
                        Ok(_) => refreshed.push(path.to_string()),
                        Err(error) => {
                            tracing::warn!(%error, %path, "a cut move's linking file could not be rewritten; its links still name the old path");
                        }
                    }
                }
                Some((_, revision)) if revision == Revision::of(file.text.as_bytes()) => {}
                _ => {
                    tracing::warn!(%path, "a linking file changed after the move was cut; its links are left as they are");
                }
            }
        }
        if let Some(resolved) = exists(&old) {
            match self.walls.vault(&upkeep).read_resolved(&resolved) {
                Ok(contents) if contents.revision.as_str() == entry.moved_before => {
                    if let Err(error) = std::fs::remove_file(&resolved.fs_path) {
                        tracing::warn!(%error, %old, "a cut move's source could not be removed; both copies are kept");
                    }
                }
                _ => {
                    tracing::warn!(%old, %new, "the source changed after the move was cut; both copies are kept");
                }
            }
        }
        if let Err(error) = self.walls.index(&upkeep).refresh(refreshed) {
            tracing::warn!(%error, "the index could not take in a finished move");
        }
        tracing::info!(%old, %new, "finished a move cut short");
    }
}
