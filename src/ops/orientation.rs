//! What orients an agent in a vault: its name, note count, top folders and recent notes, and its
//! most used tags and property keys, each as the caller may see them.

use std::collections::BTreeMap;

use super::error::OpsError;
use super::search::visible_scope;
use super::shared::{Context, Ops, rfc3339_nanos};
use crate::index;

/// A short description of the vault for server instructions and orientation.
#[derive(Debug, Clone)]
pub struct VaultOverview {
    pub name: String,
    pub note_count: usize,
    /// Top-level folders with the number of notes below each.
    pub folders: Vec<(String, usize)>,
    /// The most recently modified notes, newest first, with their RFC 3339 times.
    pub recent: Vec<(String, String)>,
}

const RECENT_NOTES: usize = 10;
/// Tags and property keys the orientation prompt names.
const VOCABULARY_ENTRIES: usize = 15;

/// What the index knows about the vault's vocabulary, for orientation.
#[derive(Debug, Clone)]
pub struct VaultVocabulary {
    pub note_count: u64,
    /// The most used tags with the number of notes carrying each.
    pub tags: Vec<(String, u64)>,
    /// The most used property keys with the number of notes having each.
    pub property_keys: Vec<(String, u64)>,
}

impl Ops {
    /// The vault's name, note count, top folders and recent notes as the caller may see them,
    /// from the index's counts (waits for the startup reconcile).
    pub fn overview(&self, ctx: &Context) -> Result<VaultOverview, OpsError> {
        let visibility = self.visibility(ctx);
        let index = self.walls.index(&visibility);
        let per_folder = visible_scope(&visibility, None, |scope| index.folder_counts(scope))?;
        let note_count = per_folder.iter().map(|(_, notes)| *notes as usize).sum();
        let mut folders: BTreeMap<String, usize> = BTreeMap::new();
        for (folder, notes) in per_folder {
            // `Top/` and everything below it; the root's own notes name no folder.
            if let Some((top, _)) = folder.split_once('/') {
                *folders.entry(top.to_owned()).or_default() += notes as usize;
            }
        }
        let recent = index
            .list_recent(
                &index::NoteFilter::default(),
                index::RecentOrder::Modified,
                0,
                RECENT_NOTES,
                &|row| visibility.shows(&row.path),
            )?
            .rows
            .into_iter()
            .map(|row| (row.path, rfc3339_nanos(row.mtime_ns)))
            .collect();
        Ok(VaultOverview {
            name: self
                .walls
                .root()
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "vault".into()),
            note_count,
            folders: folders.into_iter().collect(),
            recent,
        })
    }

    /// The most used tags and property keys. Waits for the startup reconcile, so call it only
    /// when a client asks (never while a session is being set up).
    pub fn vocabulary(&self, ctx: &Context) -> Result<VaultVocabulary, OpsError> {
        // The same visibility as vault_list_tags: an identity never learns a tag or a property
        // key that only its denied notes carry.
        let visibility = self.visibility(ctx);
        let index = self.walls.index(&visibility);
        let pairs = |counts: Vec<index::Count>| -> Vec<(String, u64)> {
            counts
                .into_iter()
                .map(|count| (count.value, count.notes))
                .collect()
        };
        let (note_count, tags, property_keys) = visible_scope(&visibility, None, |scope| {
            let notes: u64 = index
                .folder_counts(scope)?
                .iter()
                .map(|(_, notes)| notes)
                .sum();
            let tags = index.tag_counts(scope, 0, VOCABULARY_ENTRIES)?;
            let keys = index.property_key_counts(scope, 0, VOCABULARY_ENTRIES)?;
            Ok::<_, index::IndexError>((notes, tags, keys))
        })?;
        Ok(VaultVocabulary {
            note_count,
            tags: pairs(tags.rows),
            property_keys: pairs(property_keys.rows),
        })
    }
}
