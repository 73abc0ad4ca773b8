//! What orients an agent in a vault: its name, note count, top folders and recent notes, and its
//! most used tags and property keys, each as the caller may see them.

use super::error::OpsError;
use super::shared::{Context, Ops, rfc3339};
use super::{notes, search};
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
    pub fn overview(&self, ctx: &Context) -> Result<VaultOverview, OpsError> {
        let visibility = self.visibility(ctx);
        let vault = self.walls.vault(&visibility);
        let mut notes: Vec<_> = vault
            .scan(None)
            .map_err(|e| OpsError::from_vault(e, None))?
            .into_iter()
            .filter(|file| notes::is_note(&file.path) && visibility.shows(file.path.as_str()))
            .collect();
        let mut folders: Vec<(String, usize)> = Vec::new();
        for note in &notes {
            let mut segments = note.path.segments();
            let (Some(first), Some(_)) = (segments.next(), segments.next()) else {
                continue;
            };
            match folders.last_mut() {
                Some((name, count)) if name == first => *count += 1,
                _ => folders.push((first.to_string(), 1)),
            }
        }
        let note_count = notes.len();
        notes.sort_by_key(|note| std::cmp::Reverse(note.modified));
        let recent = notes
            .iter()
            .take(RECENT_NOTES)
            .map(|note| (note.path.to_string(), rfc3339(note.modified)))
            .collect();
        Ok(VaultOverview {
            name: vault
                .root()
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "vault".into()),
            note_count,
            folders,
            recent,
        })
    }
}

impl Ops {
    /// The most used tags and property keys. Waits for the startup reconcile, so call it only
    /// when a client asks (never while a session is being set up).
    pub fn vocabulary(&self, ctx: &Context) -> Result<VaultVocabulary, OpsError> {
        // The same visibility filter as vault_list_tags: an identity never learns a tag or a
        // property key that only its denied notes carry.
        let (all, _, _, visibility) = self.count_request(
            ctx,
            &search::CountList {
                folder: None,
                limit: None,
                cursor: None,
            },
        )?;
        let pairs = |counts: Vec<index::Count>| -> Vec<(String, u64)> {
            counts
                .into_iter()
                .map(|count| (count.value, count.notes))
                .collect()
        };
        let index = self.walls.index(&visibility);
        let tags = index.tag_counts(&index::CountScope::Notes(&all), 0, VOCABULARY_ENTRIES)?;
        let property_keys =
            index.property_key_counts(&index::CountScope::Notes(&all), 0, VOCABULARY_ENTRIES)?;
        let note_count = match &all.only_paths {
            Some(visible) => visible.len() as u64,
            None => index.note_count()?,
        };
        Ok(VaultVocabulary {
            note_count,
            tags: pairs(tags.rows),
            property_keys: pairs(property_keys.rows),
        })
    }
}
