//! Walking the vault for listings.
//!
//! A scan sees what Obsidian sees: no hidden (dot-prefixed) file or folder, and no name that
//! `VaultPath` would refuse; and no sync backend's conflict copy (`sync.rs`). Symlinked files are listed only when their target is a visible file
//! inside the vault; symlinked folders are not descended, so a scan can neither leave the vault nor
//! loop.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use unicode_normalization::UnicodeNormalization;
use walkdir::WalkDir;

use super::{VaultError, VaultPath, is_conflict_copy, resolve};

/// One visible file found by a scan.
#[derive(Debug, Clone)]
pub struct ScannedFile {
    pub path: VaultPath,
    pub fs_path: PathBuf,
    pub bytes: u64,
    pub modified: SystemTime,
}

pub(super) fn scan(
    root: &Path,
    folder: Option<&VaultPath>,
) -> Result<Vec<ScannedFile>, VaultError> {
    let (start, prefix) = match folder {
        None => (root.to_path_buf(), Vec::new()),
        Some(folder) => {
            let resolved = resolve::resolve(root, folder)?;
            if !resolved.exists {
                return Err(VaultError::NotFound {
                    path: folder.to_string(),
                });
            }
            if !resolved.fs_path.is_dir() {
                return Err(VaultError::NotAFolder {
                    path: folder.to_string(),
                });
            }
            let target = resolved
                .fs_path
                .canonicalize()
                .map_err(|source| VaultError::Io {
                    path: folder.to_string(),
                    source,
                })?;
            (target, folder.segments().map(str::to_string).collect())
        }
    };
    let walker = WalkDir::new(&start)
        .follow_links(false)
        .into_iter()
        .filter_entry(|entry| entry.depth() == 0 || !is_hidden(entry.file_name()))
        // A sync backend's copy of a conflicting note is not a note: the owner settles it.
        .filter(|entry| {
            entry.as_ref().map_or(true, |entry| {
                entry.file_type().is_dir()
                    || !entry.file_name().to_str().is_some_and(is_conflict_copy)
            })
        });
    let mut files = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                tracing::warn!(%error, "skipping an unreadable entry while scanning the vault");
                continue;
            }
        };
        let file_type = entry.file_type();
        let metadata = if file_type.is_symlink() {
            match visible_target(root, entry.path()) {
                Some(metadata) => metadata,
                None => continue,
            }
        } else if file_type.is_file() {
            match entry.metadata() {
                Ok(metadata) => metadata,
                Err(_) => continue,
            }
        } else {
            continue;
        };
        let Ok(relative) = entry.path().strip_prefix(&start) else {
            continue;
        };
        let mut segments: Vec<String> = prefix.clone();
        let mut representable = true;
        for component in relative.components() {
            match component.as_os_str().to_str() {
                Some(name) => segments.push(name.nfc().collect()),
                None => representable = false,
            }
        }
        let path = representable
            .then(|| VaultPath::from_segments(segments.iter().map(String::as_str)))
            .flatten();
        let Some(path) = path else {
            tracing::warn!(path = %entry.path().display(), "skipping a file whose name Quire cannot address");
            continue;
        };
        files.push(ScannedFile {
            path,
            fs_path: entry.path().to_path_buf(),
            bytes: metadata.len(),
            modified: metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

/// The metadata of a symlink's target when it is a visible file inside the vault.
fn visible_target(root: &Path, link: &Path) -> Option<std::fs::Metadata> {
    let target = link.canonicalize().ok()?;
    let inside = target.strip_prefix(root).ok()?;
    if resolve::has_hidden_segment(inside) {
        return None;
    }
    let metadata = std::fs::metadata(&target).ok()?;
    metadata.is_file().then_some(metadata)
}
